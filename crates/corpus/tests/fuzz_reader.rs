//! Property tests of the corpus reader: any bytes, plain or gzip, read as text or give an error
//! naming the file (and for bad UTF-8 the line), never a panic; any text tokenises and encodes.

use std::io::Write;
use std::path::Path;

use corpus::{Corpus, CorpusConfig, Preset};
use proptest::prelude::*;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_bytes_read_or_fail_naming_the_file(
        bytes in proptest::collection::vec(any::<u8>(), 0..400), compress in any::<bool>(),
        truncate in any::<prop::sample::Index>()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fuzz-corpus.txt");
        let mut content = if compress { gzip(&bytes) } else { bytes.clone() };
        if compress && !content.is_empty() && truncate.index(4) == 0 {
            // A cut gzip stream.
            let at = truncate.index(content.len());
            content.truncate(at.max(2));
        }
        std::fs::write(&p, &content).unwrap();
        match corpus::read::read_text(&p) {
            Ok(text) => {
                if !compress || content.len() == gzip(&bytes).len() {
                    prop_assert_eq!(text.as_bytes(), &bytes[..]);
                }
            }
            Err(e) => prop_assert!(e.to_string().contains("fuzz-corpus.txt"), "{}", e),
        }
    }

    #[test]
    fn any_text_encodes_or_fails_cleanly(text in any::<String>(), preset in 0usize..3, min_count in 1u64..3) {
        let preset = [Preset::Text8, Preset::Wikitext, Preset::Lines][preset];
        let cfg = CorpusConfig {
            path: "fuzz".into(),
            preset,
            lowercase: true,
            drop_punctuation: false,
            min_count,
            max_size: None,
            chunk_len: 16,
            fraction: None,
        };
        if let Ok(c) = Corpus::from_text(&text, Path::new("fuzz"), &cfg) {
            let n = c.vocab.len_with_specials() as u32;
            prop_assert!(c.encoded.ids.iter().all(|&id| id < n));
        }
    }
}
