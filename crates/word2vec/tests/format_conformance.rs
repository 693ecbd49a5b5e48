//! The gensim-written fixtures (data/conformance): the binary file and the text file hold the
//! same vectors, and we read the same floats from both; what we write reads back bit-exactly.

use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    manifest_dir().join("../../data/conformance").join(name)
}

#[test]
fn binary_and_text_fixtures_give_the_same_floats() {
    let bin = word2vec::format::read(&fixture("vectors-10k-50d.bin")).unwrap();
    let txt = word2vec::format::read(&fixture("vectors-1k-50d.txt")).unwrap();
    assert_eq!((bin.len(), bin.dim()), (10_000, 50));
    assert_eq!((txt.len(), txt.dim()), (1_000, 50));
    assert_eq!(&bin.words()[..1000], txt.words());
    assert_eq!(&bin.words()[..3], ["the", "of", "one"]);
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&bin.data()[..1000 * 50]), bits(txt.data()));
}

#[test]
fn fixture_round_trips_through_both_formats() {
    let v = word2vec::format::read(&fixture("vectors-10k-50d.bin")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, fmt) in [
        ("a.bin", word2vec::format::Format::Binary),
        ("a.txt", word2vec::format::Format::Text),
    ] {
        let p = dir.path().join(name);
        word2vec::format::write(&v, &p, fmt).unwrap();
        assert_eq!(word2vec::format::read(&p).unwrap(), v, "{name}");
    }
}

/// This package's directory, read at run time (cargo test sets it): a target directory shared
/// between clones may run a test binary compiled in another clone.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
