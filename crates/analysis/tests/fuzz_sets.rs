//! Property tests of the similarity and analogy set parsers: any text gives a set or an error
//! naming the file and line, never a panic; a well-formed set reads back what was written.

use std::path::Path;

use analysis::analogy::AnalogySet;
use analysis::similarity::SimilaritySet;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn any_text_is_a_set_or_an_error_naming_the_file(text in "[a-z0-9 :#\\t\\n.eE+-]{0,200}") {
        let path = Path::new("fuzz-set.txt");
        if let Err(e) = SimilaritySet::parse(&text, path, "s".into()) {
            prop_assert!(e.to_string().contains("fuzz-set.txt"), "{}", e);
        }
        if let Err(e) = AnalogySet::parse(&text, path, "a".into()) {
            prop_assert!(e.to_string().contains("fuzz-set.txt"), "{}", e);
        }
    }

    #[test]
    fn any_unicode_never_panics(text in any::<String>()) {
        let path = Path::new("u.txt");
        let _ = SimilaritySet::parse(&text, path, "s".into());
        let _ = AnalogySet::parse(&text, path, "a".into());
    }

    #[test]
    fn well_formed_similarity_sets_read_back(
        pairs in proptest::collection::vec(("[a-z]{1,8}", "[a-z]{1,8}", -1e6f64..1e6), 1..20)
    ) {
        let text: String = pairs.iter().map(|(a, b, s)| format!("{a}\t{b}\t{s}\n")).collect();
        let set = SimilaritySet::parse(&text, Path::new("ok.txt"), "ok".into()).unwrap();
        prop_assert_eq!(set.pairs.len(), pairs.len());
        for ((a, b, s), (ra, rb, rs)) in pairs.iter().zip(&set.pairs) {
            prop_assert_eq!(a, ra);
            prop_assert_eq!(b, rb);
            prop_assert_eq!(s.to_bits(), rs.to_bits());
        }
    }
}
