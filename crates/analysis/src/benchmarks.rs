//! Scoring one table of word vectors on a set of benchmarks: every analogy set (3CosAdd and
//! 3CosMul, in total, semantic, syntactic and per section, with 3CosAdd's chance level) and
//! every similarity set (Spearman and Pearson, and Spearman's chance band for exactly the pairs
//! used), each item's outcome kept for the intervals of [`crate::evidence`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use word2vec::WordVectors;

use crate::evidence::Values;
use crate::inference::permutation_band;
use crate::{AnalogyMethod, AnalogySet, EvalError, SimilaritySet};

/// How a table is matched against a benchmark's words.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Only the first N rows (the most frequent words) take part, as in gensim.
    pub restrict_vocab: usize,
    pub case_insensitive: bool,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            restrict_vocab: 30_000,
            case_insensitive: true,
        }
    }
}

/// The benchmarks a table is scored on.
pub struct Benchmarks {
    pub analogy: Vec<AnalogySet>,
    pub similarity: Vec<SimilaritySet>,
}

impl Benchmarks {
    /// Every analogy file (`*.txt`, `*.txt.gz`) in `analogy_dir`, every `EN-*.txt` similarity
    /// set in `similarity_dir`, and the `extra` similarity sets, each in name order.
    pub fn load(
        analogy_dir: &Path,
        similarity_dir: &Path,
        extra: &[PathBuf],
    ) -> Result<Benchmarks, EvalError> {
        let analogy = list(analogy_dir, |n| {
            n.ends_with(".txt") || n.ends_with(".txt.gz")
        })?
        .iter()
        .map(|p| AnalogySet::load(p))
        .collect::<Result<Vec<_>, _>>()?;
        let mut sim_files = list(similarity_dir, |n| {
            n.starts_with("EN-") && n.ends_with(".txt")
        })?;
        sim_files.extend(extra.iter().cloned());
        let similarity = sim_files
            .iter()
            .map(|p| SimilaritySet::load(p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Benchmarks {
            analogy,
            similarity,
        })
    }
}

fn list(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>, EvalError> {
    let entries = std::fs::read_dir(dir).map_err(|source| EvalError::Dir {
        path: dir.to_owned(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    files.sort();
    Ok(files)
}

/// Permutations behind each similarity score's chance band: the 2.5% and 97.5% quantiles of
/// 500 draws move by about 0.005 from one set of draws to another on 300 pairs.
const NULL_DRAWS: usize = 500;

/// One number of a table on one benchmark (`benchmark`: a similarity set's name, or an analogy
/// set's `name:part`, part `total`, `semantic`, `syntactic` or a section).
#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    pub benchmark: String,
    /// `3CosAdd`, `3CosMul`, `only-b`, `ignore-a` (Linzen's baselines), `3CosAdd_chance`,
    /// `spearman`, `pearson`, `spearman_null_lo`, `spearman_null_hi`.
    pub metric: String,
    pub value: f64,
    /// Questions answered or pairs used.
    pub n: usize,
    /// Questions skipped or pairs out of vocabulary.
    pub oov: usize,
}

/// Every item's outcome on one benchmark: right or wrong per analogy question under 3CosAdd
/// and Linzen's baselines (`kind` "3CosAdd", "only-b", "ignore-a"), the cosine per similarity
/// pair ("cosine").
pub struct ItemOutcomes {
    pub benchmark: String,
    pub kind: &'static str,
    pub values: Values,
}

/// Scores one table on every benchmark, with every item's outcome.
pub fn evaluate(
    vectors: &WordVectors,
    benchmarks: &Benchmarks,
    cfg: &EvalConfig,
) -> (Vec<Score>, Vec<ItemOutcomes>) {
    let mut rows = Vec::new();
    let mut items = Vec::new();
    let row = |benchmark: String, metric: &str, value: f64, n: usize, oov: usize| Score {
        benchmark,
        metric: metric.to_owned(),
        value,
        n,
        oov,
    };
    for set in &benchmarks.analogy {
        // Linzen's (2016) baselines beside the two offset methods, on the same questions and
        // candidate rows: the nearest neighbour of c alone (Linzen's b), and of b + c. An analogy score is
        // read against them: what they get right is neighbourhood, not an offset.
        let methods = [
            AnalogyMethod::CosAdd,
            AnalogyMethod::CosMul,
            AnalogyMethod::OnlyB,
            AnalogyMethod::IgnoreA,
        ];
        for method in methods {
            let r = set.evaluate(vectors, method, cfg.restrict_vocab, cfg.case_insensitive);
            if method != AnalogyMethod::CosMul {
                items.push(ItemOutcomes {
                    benchmark: set.name.clone(),
                    kind: method.name(),
                    values: Values::Outcomes(r.outcomes.clone()),
                });
            }
            if method == AnalogyMethod::CosAdd {
                // Chance: a table with no structure answers uniformly among the candidate rows
                // other than a, b and c (by symmetry), so 1 / (rows - 3) of answered questions.
                let rows_searched = vectors.len().min(cfg.restrict_vocab);
                let total = r.total();
                rows.push(row(
                    format!("{}:total", set.name),
                    "3CosAdd_chance",
                    1.0 / rows_searched.saturating_sub(3).max(1) as f64,
                    total.answered(),
                    total.skipped,
                ));
            }
            let parts = [
                ("total", r.total()),
                ("semantic", r.semantic()),
                ("syntactic", r.syntactic()),
            ];
            let sections = r.sections.iter().map(|(name, _, s)| (name.as_str(), *s));
            for (part, s) in parts.into_iter().chain(sections) {
                rows.push(row(
                    format!("{}:{part}", set.name),
                    method.name(),
                    s.accuracy(),
                    s.answered(),
                    s.skipped,
                ));
            }
        }
    }
    for set in &benchmarks.similarity {
        let r = set.evaluate(vectors, cfg.restrict_vocab, cfg.case_insensitive);
        rows.push(row(set.name.clone(), "spearman", r.spearman, r.used, r.oov));
        rows.push(row(set.name.clone(), "pearson", r.pearson, r.used, r.oov));
        // The chance band of Spearman's rho for exactly these pairs (ties and size included):
        // the model's cosines permuted against the human scores.
        let (gold, model): (Vec<f64>, Vec<f64>) = set
            .pairs
            .iter()
            .zip(&r.cosines)
            .filter_map(|((_, _, g), c)| c.map(|c| (*g, c)))
            .unzip();
        if gold.len() >= 3 {
            let band =
                permutation_band(&gold, &model, crate::stats::spearman, NULL_DRAWS, 0.95, 29);
            rows.push(row(
                set.name.clone(),
                "spearman_null_lo",
                band.lo,
                r.used,
                r.oov,
            ));
            rows.push(row(
                set.name.clone(),
                "spearman_null_hi",
                band.hi,
                r.used,
                r.oov,
            ));
        }
        items.push(ItemOutcomes {
            benchmark: set.name.clone(),
            kind: "cosine",
            values: Values::Cosines(r.cosines.clone()),
        });
    }
    (rows, items)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The planted table of `analogy::tests::linzen_baselines_answer_by_neighbourhood` (unit
    /// vectors at a 0, b 10, c 90, d 100, e 17, f 60, g 81 degrees): for `a b c ?`, 3CosAdd
    /// answers d, only-b (c's neighbour) g and ignore-a f, so each method gets exactly its own
    /// question right.
    #[test]
    fn every_table_is_scored_beside_linzens_baselines_with_their_outcomes() {
        let angles = [
            ("a", 0.0f32),
            ("b", 10.0),
            ("c", 90.0),
            ("d", 100.0),
            ("e", 17.0),
            ("f", 60.0),
            ("g", 81.0),
        ];
        let words = angles.iter().map(|(w, _)| w.to_string()).collect();
        let data = angles
            .iter()
            .flat_map(|(_, a)| [a.to_radians().cos(), a.to_radians().sin()])
            .collect();
        let v = WordVectors::new(words, 2, data);
        let set = AnalogySet::parse(
            ": s\na b c d\na b c g\na b c f\na b c h\n",
            Path::new("q"),
            "q".into(),
        )
        .unwrap();
        let b = Benchmarks {
            analogy: vec![set],
            similarity: vec![],
        };
        let cfg = EvalConfig {
            restrict_vocab: 7,
            case_insensitive: true,
        };
        let (rows, items) = evaluate(&v, &b, &cfg);
        let total = |metric: &str| {
            rows.iter()
                .find(|r| r.benchmark == "q:total" && r.metric == metric)
                .map(|r| (r.value, r.n, r.oov))
        };
        // Three questions answered (h is out of vocabulary), one right under each method.
        for m in ["3CosAdd", "only-b", "ignore-a"] {
            assert_eq!(total(m), Some((1.0 / 3.0, 3, 1)), "{m}");
        }
        let outcomes = |kind: &str| {
            items
                .iter()
                .find(|i| i.kind == kind)
                .map(|i| match &i.values {
                    Values::Outcomes(o) => o.clone(),
                    Values::Cosines(_) => panic!("analogy outcomes"),
                })
                .unwrap()
        };
        assert_eq!(
            outcomes("3CosAdd"),
            [Some(true), Some(false), Some(false), None]
        );
        assert_eq!(
            outcomes("only-b"),
            [Some(false), Some(true), Some(false), None]
        );
        assert_eq!(
            outcomes("ignore-a"),
            [Some(false), Some(false), Some(true), None]
        );
        assert!(items.iter().all(|i| i.kind != "3CosMul"));
    }
}
