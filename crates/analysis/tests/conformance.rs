//! Agreement with gensim 4.4 on the conformance fixture (data/conformance/README.md): analogy
//! counts per section exactly, for 3CosAdd and 3CosMul at two `restrict_vocab` values, and every
//! similarity figure (Pearson and Spearman to 1e-4, OOV percent to 1e-6).

use std::path::PathBuf;

use analysis::{AnalogyMethod, AnalogySet, SimilaritySet};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    manifest_dir().join("../../data").join(rel)
}

fn expected() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(data("conformance/gensim-expected.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn analogy_counts_match_gensim_per_section() {
    let vectors = word2vec::format::read(&data("conformance/vectors-10k-50d.bin")).unwrap();
    let set = AnalogySet::load(&data("analogy/questions-words.txt.gz")).unwrap();
    assert_eq!(set.n_questions(), 19_544);
    let cases = expected()["analogy"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 4);
    let mut mismatches = Vec::new();
    for case in cases {
        let method = match case["method"].as_str().unwrap() {
            "3CosAdd" => AnalogyMethod::CosAdd,
            "3CosMul" => AnalogyMethod::CosMul,
            m => panic!("unknown method {m}"),
        };
        let restrict = case["restrict_vocab"].as_u64().unwrap() as usize;
        let report = set.evaluate(&vectors, method, restrict, true);
        for sec in case["sections"].as_array().unwrap() {
            let name = sec["section"].as_str().unwrap();
            let want = (
                sec["correct"].as_u64().unwrap() as usize,
                sec["incorrect"].as_u64().unwrap() as usize,
            );
            let got = if name == "Total accuracy" {
                report.total()
            } else {
                report.section(name).unwrap()
            };
            if (got.correct, got.incorrect) != want {
                mismatches.push(format!(
                    "{} rv={restrict} {name}: got {:?}, gensim {:?}",
                    method.name(),
                    (got.correct, got.incorrect),
                    want
                ));
            }
        }
        let acc = case["accuracy"].as_f64().unwrap();
        assert!((report.total().accuracy() - acc).abs() < 1e-12 || !mismatches.is_empty());
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn similarity_matches_gensim() {
    let vectors = word2vec::format::read(&data("conformance/vectors-10k-50d.bin")).unwrap();
    let cases = expected()["similarity"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 16);
    for case in cases {
        let file = case["file"].as_str().unwrap();
        let restrict = case["restrict_vocab"].as_u64().unwrap() as usize;
        let set = SimilaritySet::load(&data(&format!("similarity/{file}"))).unwrap();
        let r = set.evaluate(&vectors, restrict, true);
        let ctx = format!("{file} rv={restrict}: {r:?}");
        assert!(
            (r.pearson - case["pearson"].as_f64().unwrap()).abs() < 1e-4,
            "pearson {ctx}"
        );
        assert!(
            (r.spearman - case["spearman"].as_f64().unwrap()).abs() < 1e-4,
            "spearman {ctx}"
        );
        assert!(
            (r.oov_percent - case["oov_percent"].as_f64().unwrap()).abs() < 1e-6,
            "oov {ctx}"
        );
    }
}

/// This package's directory, read at run time (cargo test sets it): a target directory shared
/// between clones may run a test binary compiled in another clone.
fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
