//! Word analogy: "a is to b as c is to ?" on questions-words files (`: section` headers, then
//! `a b c d` lines). The answer is the best-scoring row other than a, b and c, under
//!
//! ```text
//! 3CosAdd (Mikolov et al. 2013):   argmax_x  cos(x, b) - cos(x, a) + cos(x, c)
//! 3CosMul (Levy & Goldberg 2014):  argmax_x  s(x, b) s(x, c) / (s(x, a) + 1e-6),
//!                                  s = (1 + cos) / 2   (cosines shifted to [0, 1])
//! ```
//!
//! and the two baselines of Linzen (2016), which say how much of a score is neighbourhood rather
//! than an offset. Linzen writes the analogy a : a* :: b : b*, so in this file's order (a b c d)
//! his b is c, the word whose counterpart is asked: `only-b` is argmax_x cos(x, c), and
//! `ignore-a` is argmax_x cos(x, b) + cos(x, c) (a* + b in his letters), each with a, b and c
//! excluded as above. A table whose 3CosAdd is no higher than its only-b answers analogies by
//! c's neighbours alone.
//!
//! Both scores are functions of three cosine rows, so instead of one matrix product per
//! question we compute the cosines of every row with every *distinct* question word once
//! (one `sgemm`: the Google set has about 900 distinct words for 19,544 questions) and combine
//! three rows per question. The candidate search copies gensim's `evaluate_word_analogies`:
//! the top 5 rows other than a, b, c, and the first of them whose (upper-cased) word is not one
//! of a, b, c. Questions with a word outside the restricted vocabulary are skipped and counted.

use std::collections::HashMap;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;
use word2vec::WordVectors;

use crate::{EvalError, EvalVocab};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum AnalogyMethod {
    #[serde(rename = "3CosAdd")]
    CosAdd,
    #[serde(rename = "3CosMul")]
    CosMul,
    /// Linzen's (2016) baseline: the nearest neighbour of c (his b: the word whose counterpart is asked).
    #[serde(rename = "only-b")]
    OnlyB,
    /// Linzen's (2016) baseline: the nearest neighbour of b + c (a ignored).
    #[serde(rename = "ignore-a")]
    IgnoreA,
}

impl AnalogyMethod {
    pub fn name(self) -> &'static str {
        match self {
            AnalogyMethod::CosAdd => "3CosAdd",
            AnalogyMethod::CosMul => "3CosMul",
            AnalogyMethod::OnlyB => "only-b",
            AnalogyMethod::IgnoreA => "ignore-a",
        }
    }
}

#[derive(Clone, Debug)]
pub struct AnalogySection {
    pub name: String,
    pub questions: Vec<[String; 4]>,
}

impl AnalogySection {
    /// Google's convention: `gram*` sections are syntactic, the others semantic.
    pub fn is_syntactic(&self) -> bool {
        self.name.starts_with("gram")
    }
}

#[derive(Clone, Debug)]
pub struct AnalogySet {
    pub name: String,
    pub sections: Vec<AnalogySection>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    pub correct: usize,
    pub incorrect: usize,
    /// Questions with a word outside the restricted vocabulary: not answered, not counted
    /// in the accuracy (gensim's convention).
    pub skipped: usize,
}

impl Score {
    pub fn answered(&self) -> usize {
        self.correct + self.incorrect
    }
    /// Correct over answered; NaN when nothing was answered.
    pub fn accuracy(&self) -> f64 {
        self.correct as f64 / self.answered() as f64
    }
    fn add(&mut self, o: &Score) {
        self.correct += o.correct;
        self.incorrect += o.incorrect;
        self.skipped += o.skipped;
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct AnalogyReport {
    pub benchmark: String,
    pub method: AnalogyMethod,
    pub restrict_vocab: usize,
    pub sections: Vec<(String, bool, Score)>,
    /// Every question's outcome in file order (sections in order, questions in order):
    /// `Some(true)` right, `Some(false)` wrong, `None` skipped (a word out of vocabulary).
    /// What intervals and paired tests between representations resample
    /// ([`crate::inference`]).
    pub outcomes: Vec<Option<bool>>,
}

impl AnalogyReport {
    fn sum(&self, keep: impl Fn(bool) -> bool) -> Score {
        let mut s = Score::default();
        self.sections
            .iter()
            .filter(|(_, syn, _)| keep(*syn))
            .for_each(|(_, _, x)| s.add(x));
        s
    }
    pub fn total(&self) -> Score {
        self.sum(|_| true)
    }
    pub fn semantic(&self) -> Score {
        self.sum(|syn| !syn)
    }
    pub fn syntactic(&self) -> Score {
        self.sum(|syn| syn)
    }
    pub fn section(&self, name: &str) -> Option<Score> {
        self.sections
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, s)| *s)
    }
}

impl AnalogySet {
    pub fn load(path: &Path) -> Result<AnalogySet, EvalError> {
        let text = corpus::read::read_text(path)?;
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = name
            .trim_end_matches(".gz")
            .trim_end_matches(".txt")
            .to_owned();
        Self::parse(&text, path, name)
    }

    pub fn parse(text: &str, path: &Path, name: String) -> Result<AnalogySet, EvalError> {
        let mut sections: Vec<AnalogySection> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let err = |message: String| EvalError::Parse {
                path: path.to_owned(),
                line: i + 1,
                message,
            };
            if let Some(header) = line.strip_prefix(':') {
                let header = header.trim();
                if header.is_empty() {
                    return Err(err("empty section name".into()));
                }
                sections.push(AnalogySection {
                    name: header.to_owned(),
                    questions: Vec::new(),
                });
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let [a, b, c, d] = words[..] else {
                return Err(err(format!(
                    "expected four words `a b c d`, found {}",
                    words.len()
                )));
            };
            let Some(section) = sections.last_mut() else {
                return Err(err("question before the first `: section` header".into()));
            };
            section.questions.push([a, b, c, d].map(String::from));
        }
        if sections.iter().all(|s| s.questions.is_empty()) {
            return Err(EvalError::Parse {
                path: path.to_owned(),
                line: 0,
                message: "no analogy questions".into(),
            });
        }
        Ok(AnalogySet { name, sections })
    }

    pub fn n_questions(&self) -> usize {
        self.sections.iter().map(|s| s.questions.len()).sum()
    }

    /// Scores every question with `method` over the first `restrict_vocab` rows of `vectors`.
    pub fn evaluate(
        &self,
        vectors: &WordVectors,
        method: AnalogyMethod,
        restrict_vocab: usize,
        case_insensitive: bool,
    ) -> AnalogyReport {
        let ev = EvalVocab::new(vectors, restrict_vocab, case_insensitive);
        // Rows searched for an answer (see the module docs for why 3CosMul searches all).
        let n = match method {
            AnalogyMethod::CosMul => vectors.len(),
            AnalogyMethod::CosAdd | AnalogyMethod::OnlyB | AnalogyMethod::IgnoreA => ev.n_rows,
        };
        let dim = vectors.dim();

        // Questions as rows (with their index in file order); skipped ones counted per section.
        let mut questions: Vec<(usize, usize, [u32; 4])> = Vec::new();
        let mut scores: Vec<Score> = vec![Score::default(); self.sections.len()];
        let mut outcomes: Vec<Option<bool>> = vec![None; self.n_questions()];
        let mut index = 0;
        for (s, section) in self.sections.iter().enumerate() {
            for q in &section.questions {
                let rows = [ev.row(&q[0]), ev.row(&q[1]), ev.row(&q[2]), ev.row(&q[3])];
                match rows {
                    [Some(a), Some(b), Some(c), Some(d)] => {
                        questions.push((s, index, [a, b, c, d]))
                    }
                    _ => scores[s].skipped += 1,
                }
                index += 1;
            }
        }

        // Cosines of every row with every distinct question word: one matrix product.
        let mut distinct: HashMap<u32, usize> = HashMap::new();
        for (_, _, q) in &questions {
            for &r in &q[..3] {
                let next = distinct.len();
                distinct.entry(r).or_insert(next);
            }
        }
        let unit = vectors.truncated(n).normalized_rows();
        let mut query = vec![0f32; distinct.len() * dim];
        for (&row, &k) in &distinct {
            query[k * dim..(k + 1) * dim]
                .copy_from_slice(&unit[row as usize * dim..(row as usize + 1) * dim]);
        }
        let cos = cosines(&query, distinct.len(), &unit, n, dim);

        let answered: Vec<(usize, usize, bool)> = questions
            .par_iter()
            .map_init(
                || vec![0f32; n],
                |buf, &(s, i, [a, b, c, d])| {
                    let row = |w: u32| &cos[distinct[&w] * n..(distinct[&w] + 1) * n];
                    let (ca, cb, cc) = (row(a), row(b), row(c));
                    match method {
                        AnalogyMethod::CosAdd => {
                            for i in 0..n {
                                buf[i] = cb[i] - ca[i] + cc[i];
                            }
                        }
                        AnalogyMethod::CosMul => {
                            for i in 0..n {
                                let s = |x: f32| (1.0 + x) / 2.0;
                                buf[i] = s(cb[i]) * s(cc[i]) / (s(ca[i]) + 1e-6);
                            }
                        }
                        // Linzen writes a : a* :: b : b*; in this file's order a b c d his
                        // b is c, the word whose counterpart is asked.
                        AnalogyMethod::OnlyB => buf.copy_from_slice(cc),
                        AnalogyMethod::IgnoreA => {
                            for i in 0..n {
                                buf[i] = cb[i] + cc[i];
                            }
                        }
                    }
                    let predicted = gensim_prediction(buf, [a, b, c], &ev);
                    let ok = predicted.is_some_and(|p| ev.row_key(p) == ev.row_key(d));
                    (s, i, ok)
                },
            )
            .collect();
        for (s, i, ok) in answered {
            outcomes[i] = Some(ok);
            if ok {
                scores[s].correct += 1;
            } else {
                scores[s].incorrect += 1;
            }
        }
        AnalogyReport {
            benchmark: self.name.clone(),
            method,
            restrict_vocab,
            sections: self
                .sections
                .iter()
                .zip(scores)
                .map(|(sec, sc)| (sec.name.clone(), sec.is_syntactic(), sc))
                .collect(),
            outcomes,
        }
    }
}

/// `m x n` cosines (rows of `query` against rows of `unit`), row-major, with one sgemm.
fn cosines(query: &[f32], m: usize, unit: &[f32], n: usize, dim: usize) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    if m == 0 || n == 0 {
        return out;
    }
    // SAFETY: the slices have the sizes the strides describe: query m x dim (row-major),
    // unit n x dim read as its transpose dim x n, out m x n.
    unsafe {
        matrixmultiply::sgemm(
            m,
            dim,
            n,
            1.0,
            query.as_ptr(),
            dim as isize,
            1,
            unit.as_ptr(),
            1,
            dim as isize,
            0.0,
            out.as_mut_ptr(),
            n as isize,
            1,
        );
    }
    out
}

/// gensim's choice: the top 5 rows by score, a, b and c excluded by row; the first whose word
/// (case-folded) is in the restricted vocabulary and is not a, b or c; if none is, the fifth
/// (which then counts as wrong).
fn gensim_prediction(scores: &[f32], abc: [u32; 3], ev: &EvalVocab) -> Option<u32> {
    let top = top_rows(scores, abc);
    let ignore = abc.map(|r| ev.row_key(r));
    top.iter()
        .map(|&(_, i)| i)
        .find(|&i| ev.row_known(i) && !ignore.contains(&ev.row_key(i)))
        .or(top.last().map(|&(_, i)| i))
}

/// How many rows gensim's choice looks through.
const TOPN: usize = 5;

/// Scores passed over together: a run of them at or below the fifth best is skipped with one
/// vectorised comparison instead of one branch each (most rows of a vocabulary are).
const SKIP_CHUNK: usize = 16;

/// The [`TOPN`] highest `(score, row)`, best first, rows in `abc` and NaN scores left out;
/// ties keep the lower row first, as a stable descending sort would. A chunk of scores is
/// looked at one by one unless all of them are at or below the fifth best so far, which one by
/// one would pass over each of them too: the same rows in the same order.
fn top_rows(scores: &[f32], abc: [u32; 3]) -> Vec<(f32, u32)> {
    let mut top: Vec<(f32, u32)> = Vec::with_capacity(TOPN + 1);
    for (c, chunk) in scores.chunks(SKIP_CHUNK).enumerate() {
        if top.len() == TOPN {
            let fifth = top[TOPN - 1].0;
            // `&`, not `&&`: no early exit, so the comparison vectorises. NaN compares false
            // and sends its chunk through the loop below, which skips it.
            if chunk.iter().fold(true, |all, &s| all & (s <= fifth)) {
                continue;
            }
        }
        for (k, &s) in chunk.iter().enumerate() {
            offer(&mut top, (c * SKIP_CHUNK + k) as u32, s, abc);
        }
    }
    top
}

/// Row `i`'s score `s` offered to the [`TOPN`] best so far, best first: kept if it beats the
/// fifth best (or fewer are kept), unless the row is in `abc` or the score NaN; a tie goes
/// after the rows already kept, so the lower row stays first.
fn offer(top: &mut Vec<(f32, u32)>, i: u32, s: f32, abc: [u32; 3]) {
    if top.len() == TOPN && s <= top[TOPN - 1].0 {
        return;
    }
    if abc.contains(&i) || s.is_nan() {
        return;
    }
    let pos = top.partition_point(|&(t, _)| t >= s);
    top.insert(pos, (s, i));
    top.truncate(TOPN);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gensim's top rows one score at a time, as the code read them before it skipped chunks
    /// (the same step for every score): the reference [`top_rows`] is checked against.
    fn top_rows_one_by_one(scores: &[f32], abc: [u32; 3]) -> Vec<(f32, u32)> {
        let mut top: Vec<(f32, u32)> = Vec::new();
        for (i, &s) in scores.iter().enumerate() {
            offer(&mut top, i as u32, s, abc);
        }
        top
    }

    #[test]
    fn skipping_chunks_finds_the_rows_scanning_one_by_one_finds() {
        let mut rng = crate::inference::SplitMix64::new(9);
        for n in [0, 3, 5, 15, 16, 17, 40, 257, 1000] {
            for trial in 0..20 {
                // Coarse values make ties common; some NaN; the best rows sometimes in a, b, c
                // or in the last, partial chunk.
                let scores: Vec<f32> = (0..n)
                    .map(|_| match rng.next_u64() % 50 {
                        0 => f32::NAN,
                        r => (r % 12) as f32 / 4.0 - 1.0,
                    })
                    .collect();
                let pick = |r: u64| (r % n.max(1) as u64) as u32;
                let abc = [
                    pick(rng.next_u64()),
                    pick(rng.next_u64()),
                    pick(rng.next_u64()),
                ];
                let (got, want) = (top_rows(&scores, abc), top_rows_one_by_one(&scores, abc));
                let bits = |t: &[(f32, u32)]| -> Vec<(u32, u32)> {
                    t.iter().map(|&(s, i)| (s.to_bits(), i)).collect()
                };
                assert_eq!(bits(&got), bits(&want), "n {n}, trial {trial}");
            }
        }
        // A planted case: the best row late in a chunk after the top is full.
        let mut scores = vec![0.0f32; 64];
        scores[50] = 2.0;
        scores[1] = 1.0;
        assert_eq!(top_rows(&scores, [1, 2, 3])[0], (2.0, 50));
        assert_eq!(top_rows(&scores, [1, 2, 3]).len(), TOPN);
    }

    /// A planted table where man:king :: woman:queen holds exactly by vector offset.
    fn planted() -> WordVectors {
        let words = ["man", "woman", "king", "queen", "apple", "Queen"]
            .map(String::from)
            .to_vec();
        #[rustfmt::skip]
        let data = vec![
            1.0, 0.0, 0.0, 0.1,   // man
            0.0, 1.0, 0.0, 0.1,   // woman
            1.0, 0.0, 1.0, 0.1,   // king
            0.0, 1.0, 1.0, 0.1,   // queen
            0.3, 0.3, 0.3, -1.0,  // apple
            0.0, 1.0, 1.0, 0.1,   // Queen: same as queen, less frequent
        ];
        WordVectors::new(words, 4, data)
    }

    #[test]
    fn planted_analogy_is_solved_and_oov_skipped() {
        let text = ": family\nman king woman queen\nking man queen woman\nman king woman unicorn\n: gram-x\nman woman king queen\n";
        let set = AnalogySet::parse(text, Path::new("q.txt"), "q".into()).unwrap();
        for method in [AnalogyMethod::CosAdd, AnalogyMethod::CosMul] {
            let r = set.evaluate(&planted(), method, 6, true);
            let fam = r.section("family").unwrap();
            assert_eq!(
                (fam.correct, fam.incorrect, fam.skipped),
                (2, 0, 1),
                "{method:?}"
            );
            assert_eq!(
                r.syntactic(),
                Score {
                    correct: 1,
                    incorrect: 0,
                    skipped: 0
                }
            );
            assert_eq!(r.semantic().answered(), 2);
            assert!((r.total().accuracy() - 1.0).abs() < 1e-12);
            // One outcome per question in file order; the unicorn question was skipped.
            assert_eq!(r.outcomes, vec![Some(true), Some(true), None, Some(true)]);
        }
    }

    /// Linzen's baselines on a planted table of 2-d unit vectors at known angles (degrees):
    /// a 0, b 10, c 90, d 100, e 17, f 60 and g 81. The offset b - a + c points at 90.7
    /// degrees, nearest d (9.3 away; g is 9.7): 3CosAdd answers d. c's nearest neighbour other
    /// than a, b and c is g (9 degrees away; d is 10): only-b answers g. cos(x, b) + cos(x, c)
    /// peaks at the bisector of b and c, 50 degrees: f (10 away) beats g (31) and e (33):
    /// ignore-a answers f. b's own nearest neighbour, e, is nobody's answer.
    #[test]
    fn linzen_baselines_answer_by_neighbourhood() {
        let table = |angles: &[(&str, f32)]| {
            let words = angles.iter().map(|(w, _)| w.to_string()).collect();
            let data = angles
                .iter()
                .flat_map(|(_, a)| [a.to_radians().cos(), a.to_radians().sin()])
                .collect();
            WordVectors::new(words, 2, data)
        };
        let v = table(&[
            ("a", 0.0),
            ("b", 10.0),
            ("c", 90.0),
            ("d", 100.0),
            ("e", 17.0),
            ("f", 60.0),
            ("g", 81.0),
        ]);
        let set = AnalogySet::parse(
            ": s\na b c d\na b c g\na b c f\n",
            Path::new("q"),
            "q".into(),
        )
        .unwrap();
        let right = |method| set.evaluate(&v, method, 7, true).outcomes;
        assert_eq!(
            right(AnalogyMethod::CosAdd),
            vec![Some(true), Some(false), Some(false)]
        );
        assert_eq!(
            right(AnalogyMethod::OnlyB),
            vec![Some(false), Some(true), Some(false)]
        );
        assert_eq!(
            right(AnalogyMethod::IgnoreA),
            vec![Some(false), Some(false), Some(true)]
        );
        assert_eq!(AnalogyMethod::OnlyB.name(), "only-b");
        assert_eq!(AnalogyMethod::IgnoreA.name(), "ignore-a");
    }

    #[test]
    fn restriction_turns_questions_into_skips() {
        let set =
            AnalogySet::parse(": s\nman king woman queen\n", Path::new("q"), "q".into()).unwrap();
        let r = set.evaluate(&planted(), AnalogyMethod::CosAdd, 3, true);
        assert_eq!(
            r.total(),
            Score {
                correct: 0,
                incorrect: 0,
                skipped: 1
            }
        );
        assert!(r.total().accuracy().is_nan());
    }

    #[test]
    fn other_casings_of_the_inputs_are_never_the_answer() {
        // "Queen" is the same vector as "queen"; asking woman:queen :: woman:? must not answer
        // "Queen" (case-folded it is the input), so the answer falls to the next row.
        let set =
            AnalogySet::parse(": s\nman man queen queen\n", Path::new("q"), "q".into()).unwrap();
        let ev = EvalVocab::new(&planted(), 6, true);
        let scores = [0.0, 0.0, 0.0, 0.9, 0.1, 0.95];
        assert_eq!(gensim_prediction(&scores, [0, 0, 3], &ev), Some(4));
        let r = set.evaluate(&planted(), AnalogyMethod::CosAdd, 6, true);
        assert_eq!(r.total().incorrect, 1);
        assert_eq!(r.outcomes, vec![Some(false)]);
    }

    #[test]
    fn malformed_files_name_file_and_line() {
        for (text, line, needle) in [
            ("man king woman queen\n", 1, "before the first"),
            (": s\nman king woman\n", 2, "four words"),
            (": s\n\n: t\na b c d e\n", 4, "four words"),
        ] {
            let err = AnalogySet::parse(text, Path::new("qw.txt"), "q".into()).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("qw.txt:{line}:")) && msg.contains(needle),
                "{msg}"
            );
        }
    }
}
