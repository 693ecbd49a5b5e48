//! Word similarity: how well cosine similarity between vectors ranks word pairs the way people
//! do. Files are `word<TAB>word<TAB>score`, `#` lines are comments. Pairs with a word outside the
//! restricted vocabulary are skipped and counted; the OOV share is reported in percent of all
//! pairs, as gensim's `evaluate_word_pairs` does.

use std::path::Path;

use serde::Serialize;
use word2vec::WordVectors;

use crate::{stats, EvalError, EvalVocab};

#[derive(Clone, Debug)]
pub struct SimilaritySet {
    pub name: String,
    pub pairs: Vec<(String, String, f64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimilarityReport {
    pub benchmark: String,
    pub restrict_vocab: usize,
    pub pairs: usize,
    /// Pairs whose both words are in the vocabulary: the correlations use these.
    pub used: usize,
    pub oov: usize,
    pub oov_percent: f64,
    pub pearson: f64,
    pub spearman: f64,
    /// The model's cosine for every pair in file order; `None` where a word is out of
    /// vocabulary. With the set's human scores, what intervals, chance bands and dev/test
    /// splits resample ([`crate::inference`]).
    pub cosines: Vec<Option<f64>>,
}

impl SimilaritySet {
    /// The benchmark's name is the file name without `EN-` and the extension (`WS-353-ALL`).
    pub fn load(path: &Path) -> Result<SimilaritySet, EvalError> {
        let text = corpus::read::read_text(path)?;
        let stem = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = stem
            .trim_end_matches(".gz")
            .trim_end_matches(".txt")
            .trim_end_matches(".tsv");
        let name = stem.strip_prefix("EN-").unwrap_or(stem).to_owned();
        Self::parse(&text, path, name)
    }

    pub fn parse(text: &str, path: &Path, name: String) -> Result<SimilaritySet, EvalError> {
        let mut pairs = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let err = |message: String| EvalError::Parse {
                path: path.to_owned(),
                line: i + 1,
                message,
            };
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let [a, b, score] = fields[..] else {
                return Err(err(format!(
                    "expected `word<TAB>word<TAB>score`, found {} tab-separated fields",
                    fields.len()
                )));
            };
            if a.trim().is_empty() || b.trim().is_empty() {
                return Err(err("empty word".into()));
            }
            let score: f64 = score
                .trim()
                .parse()
                .map_err(|_| err(format!("score {score:?} is not a number")))?;
            if !score.is_finite() {
                return Err(err(format!("score {score} is not finite")));
            }
            pairs.push((a.trim().to_owned(), b.trim().to_owned(), score));
        }
        if pairs.is_empty() {
            return Err(EvalError::Parse {
                path: path.to_owned(),
                line: 0,
                message: "no word pairs".into(),
            });
        }
        Ok(SimilaritySet { name, pairs })
    }

    pub fn evaluate(
        &self,
        vectors: &WordVectors,
        restrict_vocab: usize,
        case_insensitive: bool,
    ) -> SimilarityReport {
        let ev = EvalVocab::new(vectors, restrict_vocab, case_insensitive);
        let (mut gold, mut model) = (Vec::new(), Vec::new());
        let mut cosines = Vec::with_capacity(self.pairs.len());
        let mut oov = 0;
        for (a, b, score) in &self.pairs {
            match (ev.row(a), ev.row(b)) {
                (Some(i), Some(j)) => {
                    let c = cosine(vectors.row(i as usize), vectors.row(j as usize));
                    gold.push(*score);
                    model.push(c);
                    cosines.push(Some(c));
                }
                _ => {
                    oov += 1;
                    cosines.push(None);
                }
            }
        }
        SimilarityReport {
            benchmark: self.name.clone(),
            restrict_vocab,
            pairs: self.pairs.len(),
            used: gold.len(),
            oov,
            oov_percent: 100.0 * oov as f64 / self.pairs.len() as f64,
            pearson: stats::pearson(&gold, &model),
            spearman: stats::spearman(&gold, &model),
            cosines,
        }
    }
}

/// Cosine of two rows, as gensim computes it: both unit-normalised in `f32`, then dotted.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| (x / na) * (y / nb))
        .sum::<f32>() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computable_similarity() {
        // Four words in 2-d; cosines: (cat, dog) = 1, (cat, car) = 0, (dog, car) = 0,
        // (car, truck) = cos(45 deg) = 0.7071.
        let words = ["cat", "dog", "car", "truck", "rare"]
            .map(String::from)
            .to_vec();
        let v = WordVectors::new(
            words,
            2,
            vec![1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 1.0, 1.0, 5.0, 5.0],
        );
        let set = SimilaritySet::parse(
            "# comment\nCat\tdog\t9\ncat\tcar\t1\ndog\tcar\t2\ncar\ttruck\t7\ncar\trare\t5\n",
            Path::new("t.tsv"),
            "t".into(),
        )
        .unwrap();
        let r = set.evaluate(&v, 4, true);
        assert_eq!((r.pairs, r.used, r.oov), (5, 4, 1));
        assert!((r.oov_percent - 20.0).abs() < 1e-12);
        // model = [1, 0, 0, 0.7071], gold = [9, 1, 2, 7]
        let expected_pearson =
            stats::pearson(&[9.0, 1.0, 2.0, 7.0], &[1.0, 0.0, 0.0, 0.5f64.sqrt()]);
        assert!((r.pearson - expected_pearson).abs() < 1e-6);
        // ranks gold [4,1,2,3], model [4,1.5,1.5,3]: rho = 4.5 / sqrt(5 * 4.5) = 0.948683
        assert!((r.spearman - 0.948_683).abs() < 1e-5, "{}", r.spearman);
        // Per pair, in file order, OOV as None.
        let c = &r.cosines;
        assert_eq!(c.len(), 5);
        assert!((c[0].unwrap() - 1.0).abs() < 1e-6 && c[1].unwrap().abs() < 1e-6);
        assert!((c[3].unwrap() - 0.5f64.sqrt()).abs() < 1e-6 && c[4].is_none());
        // Case-sensitive: "Cat" is unknown now.
        assert_eq!(set.evaluate(&v, 4, false).oov, 2);
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        for (text, line, needle) in [
            ("a\tb\t1\na b 2\n", 2, "found 1 tab-separated"),
            ("a\tb\t1\n# c\na\tb\thigh\n", 3, "not a number"),
            ("a\t\t1\n", 1, "empty word"),
        ] {
            let err = SimilaritySet::parse(text, Path::new("sim.txt"), "s".into()).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("sim.txt:{line}:")) && msg.contains(needle),
                "{msg}"
            );
        }
    }
}
