//! The vocabulary: words with their corpus counts, ids assigned by descending count.
//!
//! Order: descending count; ties are broken by first occurrence in the corpus. Counts per rank
//! are gensim's, so the first N rows of our tables and gensim's are the same words up to ties at
//! the cut (this matters for `restrict_vocab` in the evaluation). gensim itself orders ties by
//! numpy's unstable `argsort`, which is no rule one can document; first occurrence is.
//!
//! Ids `0..len()` are words. The transformer's special tokens take the ids right after the words
//! ([`SpecialTokens`]), so a word has the same id in word2vec and in the transformer.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

use crate::CorpusError;

#[derive(Clone, Debug, PartialEq)]
pub struct Vocab {
    words: Vec<String>,
    counts: Vec<u64>,
    index: HashMap<String, u32>,
}

/// The ids of the transformer's special tokens: `len()`, `len()+1`, ... after the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialTokens {
    pub pad: u32,
    pub unk: u32,
    pub cls: u32,
    pub sep: u32,
    pub mask: u32,
}

impl SpecialTokens {
    pub const COUNT: usize = 5;
    pub const NAMES: [&'static str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
}

impl Vocab {
    /// Builds the vocabulary from `(word, count)` pairs given in first-occurrence order.
    /// Keeps words with `count >= min_count`, then at most `max_size` of them.
    pub fn from_counts(
        counts_in_first_seen_order: impl IntoIterator<Item = (String, u64)>,
        min_count: u64,
        max_size: Option<usize>,
    ) -> Vocab {
        let mut entries: Vec<(String, u64)> = counts_in_first_seen_order
            .into_iter()
            .filter(|(_, c)| *c >= min_count)
            .collect();
        // Stable: equal counts keep first-occurrence order.
        entries.sort_by(|a, b| b.1.cmp(&a.1));
        if let Some(m) = max_size {
            entries.truncate(m);
        }
        Self::from_sorted(entries)
    }

    fn from_sorted(entries: Vec<(String, u64)>) -> Vocab {
        let index = entries
            .iter()
            .enumerate()
            .map(|(i, (w, _))| (w.clone(), i as u32))
            .collect();
        let (words, counts) = entries.into_iter().unzip();
        Vocab {
            words,
            counts,
            index,
        }
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
    pub fn id(&self, word: &str) -> Option<u32> {
        self.index.get(word).copied()
    }
    pub fn word(&self, id: u32) -> &str {
        &self.words[id as usize]
    }
    pub fn words(&self) -> &[String] {
        &self.words
    }
    pub fn count(&self, id: u32) -> u64 {
        self.counts[id as usize]
    }
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }
    /// Sum of the counts of the words kept (tokens of the corpus that are in the vocabulary).
    pub fn total_count(&self) -> u64 {
        self.counts.iter().sum()
    }
    pub fn specials(&self) -> SpecialTokens {
        let v = self.words.len() as u32;
        SpecialTokens {
            pad: v,
            unk: v + 1,
            cls: v + 2,
            sep: v + 3,
            mask: v + 4,
        }
    }
    /// Number of token ids the transformer needs: the words plus the special tokens.
    pub fn len_with_specials(&self) -> usize {
        self.words.len() + SpecialTokens::COUNT
    }
    /// The text of any token id, special tokens included.
    pub fn token(&self, id: u32) -> &str {
        let v = self.words.len();
        if (id as usize) < v {
            &self.words[id as usize]
        } else {
            SpecialTokens::NAMES[id as usize - v]
        }
    }

    /// Writes `word<TAB>count`, one line per word, in id order.
    pub fn write_tsv(&self, w: &mut dyn Write) -> std::io::Result<()> {
        for (word, count) in self.words.iter().zip(&self.counts) {
            writeln!(w, "{word}\t{count}")?;
        }
        Ok(())
    }

    pub fn save_tsv(&self, path: &Path) -> Result<(), CorpusError> {
        crate::io::write_atomic(path, |w| self.write_tsv(w)).map_err(|source| CorpusError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// Reads a TSV written by [`Vocab::save_tsv`]. The file's order is the id order; it must be
    /// sorted by descending count and hold each word once.
    pub fn load_tsv(path: &Path) -> Result<Vocab, CorpusError> {
        let file = std::fs::File::open(path).map_err(|source| CorpusError::Io {
            path: path.to_owned(),
            source,
        })?;
        let parse_err = |line: usize, message: String| CorpusError::Parse {
            path: path.to_owned(),
            line,
            message,
        };
        let mut entries: Vec<(String, u64)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let lineno = i + 1;
            let line = line.map_err(|e| parse_err(lineno, format!("unreadable line: {e}")))?;
            let mut parts = line.split('\t');
            let (Some(word), Some(count), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(parse_err(
                    lineno,
                    format!("expected `word<TAB>count`, found {line:?}"),
                ));
            };
            if word.is_empty() || word.chars().any(char::is_whitespace) {
                return Err(parse_err(lineno, format!("invalid word {word:?}")));
            }
            let count: u64 = count.trim().parse().map_err(|_| {
                parse_err(
                    lineno,
                    format!("count {count:?} is not a non-negative integer"),
                )
            })?;
            if let Some((_, prev)) = entries.last() {
                if count > *prev {
                    return Err(parse_err(
                        lineno,
                        format!("counts must not increase (previous {prev}, here {count})"),
                    ));
                }
            }
            if !seen.insert(word.to_owned()) {
                return Err(parse_err(lineno, format!("word {word:?} appears twice")));
            }
            entries.push((word.to_owned(), count));
        }
        Ok(Self::from_sorted(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
        pairs.iter().map(|(w, c)| (w.to_string(), *c)).collect()
    }

    #[test]
    fn order_is_count_desc_then_first_occurrence() {
        // first-seen order: d c b a e
        let v = Vocab::from_counts(
            counts(&[("d", 2), ("c", 5), ("b", 2), ("a", 5), ("e", 1)]),
            2,
            None,
        );
        assert_eq!(v.words(), &["c", "a", "d", "b"]);
        assert_eq!(v.counts(), &[5, 5, 2, 2]);
        assert_eq!(v.id("d"), Some(2));
        assert_eq!(v.id("e"), None);
        assert_eq!(v.total_count(), 14);
        let capped = Vocab::from_counts(
            counts(&[("d", 2), ("c", 5), ("b", 2), ("a", 5)]),
            1,
            Some(3),
        );
        assert_eq!(capped.words(), &["c", "a", "d"]);
    }

    #[test]
    fn specials_follow_the_words() {
        let v = Vocab::from_counts(counts(&[("x", 3), ("y", 2)]), 1, None);
        let s = v.specials();
        assert_eq!((s.pad, s.unk, s.cls, s.sep, s.mask), (2, 3, 4, 5, 6));
        assert_eq!(v.len_with_specials(), 7);
        assert_eq!(v.token(1), "y");
        assert_eq!(v.token(s.mask), "[MASK]");
    }

    #[test]
    fn tsv_round_trip_is_exact() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("vocab.tsv");
        let v = Vocab::from_counts(
            counts(&[("the", 10), ("of", 7), ("and", 7), ("zebra", 1)]),
            1,
            None,
        );
        v.save_tsv(&p).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "the\t10\nof\t7\nand\t7\nzebra\t1\n"
        );
        assert_eq!(Vocab::load_tsv(&p).unwrap(), v);
    }

    #[test]
    fn malformed_tsv_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, usize, &str); 4] = [
            ("the\t10\nof 7\n", 2, "expected"),
            ("the\t10\nof\tmany\n", 2, "not a non-negative integer"),
            ("the\t10\nof\t11\n", 2, "must not increase"),
            ("the\t10\nof\t5\nthe\t1\n", 3, "twice"),
        ];
        for (content, line, needle) in cases {
            let p = dir.path().join("bad.tsv");
            std::fs::write(&p, content).unwrap();
            let err = Vocab::load_tsv(&p).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&format!("bad.tsv:{line}:")), "{msg}");
            assert!(msg.contains(needle), "{msg}");
        }
    }
}
