//! The text8 slice that ships in data/: the counts gensim reports for it, and gensim's vocabulary
//! order (the rows of the conformance vectors, which gensim trained on this same file).

use std::path::PathBuf;

use corpus::{Corpus, CorpusConfig};

fn data(rel: &str) -> PathBuf {
    manifest_dir().join("../../data").join(rel)
}

fn text8() -> Corpus {
    Corpus::load(&CorpusConfig {
        path: data("corpora/text8.gz"),
        ..CorpusConfig::default()
    })
    .unwrap()
}

#[test]
fn text8_counts_match_gensim() {
    let c = text8();
    let s = c.stats();
    assert_eq!(s.tokens, 2_139_749);
    assert_eq!(s.vocab_size, 22_541);
    // chunks of 10,000 tokens
    assert_eq!(s.chunks, 214);
    assert!(s.coverage > 0.9 && s.coverage < 1.0);
}

/// gensim sorts by count with numpy's unstable `argsort`, so words of equal count can come in
/// another order there; what must agree is the count at every rank and which words hold them.
#[test]
fn vocabulary_order_is_gensims_up_to_ties() {
    let c = text8();
    let fixture = std::fs::read_to_string(data("conformance/vectors-1k-50d.txt")).unwrap();
    let gensim_words: Vec<&str> = fixture
        .lines()
        .skip(1)
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(gensim_words.len(), 1000);
    let ours = &c.vocab.words()[..1000];
    let count = |w: &str| {
        c.vocab.count(
            c.vocab
                .id(w)
                .unwrap_or_else(|| panic!("{w} not in our vocabulary")),
        )
    };
    let gensim_counts: Vec<u64> = gensim_words.iter().map(|w| count(w)).collect();
    assert_eq!(gensim_counts, c.vocab.counts()[..1000]);
    // The same words, except within the tie group that the cut at 1,000 splits.
    let last = c.vocab.counts()[999];
    let mut a: Vec<&str> = ours
        .iter()
        .map(String::as_str)
        .filter(|w| count(w) != last)
        .collect();
    let mut b: Vec<&str> = gensim_words
        .iter()
        .copied()
        .filter(|w| count(w) != last)
        .collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    assert_eq!(&ours[..4], ["the", "of", "one", "and"]);
}

/// This package's directory, read at run time (cargo test sets it): a target directory shared
/// between clones may run a test binary compiled in another clone.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
