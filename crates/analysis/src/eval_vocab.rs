//! The words a benchmark may use and how its words are matched to rows.
//!
//! Only the first `restrict_vocab` rows take part (tables are in frequency order, so these are
//! the most frequent words). Case-insensitive matching follows gensim: every word is upper-cased
//! and, where several rows share an upper-cased form, the earliest (most frequent) row wins.

use std::collections::HashMap;

use word2vec::WordVectors;

pub struct EvalVocab {
    /// Rows taking part: `0..n_rows`.
    pub n_rows: usize,
    case_insensitive: bool,
    key_to_row: HashMap<String, u32>,
    /// For every row of the table (not only the restricted ones), the id of its key: rows that
    /// differ only by case share one.
    row_key: Vec<u32>,
    /// For every row of the table: whether its key is a key of the restricted vocabulary.
    row_known: Vec<bool>,
}

impl EvalVocab {
    pub fn new(vectors: &WordVectors, restrict_vocab: usize, case_insensitive: bool) -> EvalVocab {
        let n_rows = restrict_vocab.min(vectors.len());
        let mut key_to_row: HashMap<String, u32> = HashMap::with_capacity(n_rows);
        let mut key_ids: HashMap<String, u32> = HashMap::with_capacity(vectors.len());
        let mut row_key = Vec::with_capacity(vectors.len());
        let mut row_known = Vec::with_capacity(vectors.len());
        for (i, w) in vectors.words().iter().enumerate() {
            let key = if case_insensitive {
                w.to_uppercase()
            } else {
                w.clone()
            };
            let next = key_ids.len() as u32;
            row_key.push(*key_ids.entry(key.clone()).or_insert(next));
            if i < n_rows {
                key_to_row.entry(key).or_insert(i as u32);
                row_known.push(true);
            } else {
                row_known.push(key_to_row.contains_key(&key));
            }
        }
        EvalVocab {
            n_rows,
            case_insensitive,
            key_to_row,
            row_key,
            row_known,
        }
    }

    pub fn key(&self, word: &str) -> String {
        if self.case_insensitive {
            word.to_uppercase()
        } else {
            word.to_owned()
        }
    }

    /// The row a benchmark word maps to, if it is in the restricted vocabulary.
    pub fn row(&self, word: &str) -> Option<u32> {
        self.key_to_row.get(&self.key(word)).copied()
    }

    /// Key id of a row: two rows have the same key id exactly when they match the same words.
    pub fn row_key(&self, row: u32) -> u32 {
        self.row_key[row as usize]
    }

    /// Whether a row's word (case-folded if so configured) is in the restricted vocabulary; true
    /// for every restricted row, and for a later row that only differs from one by case.
    pub fn row_known(&self, row: u32) -> bool {
        self.row_known[row as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_frequent_casing_wins_and_restriction_applies() {
        let words = ["the", "Paris", "paris", "PARIS", "rare"]
            .map(String::from)
            .to_vec();
        let v = WordVectors::new(words, 1, vec![0.0; 5]);
        let ev = EvalVocab::new(&v, 4, true);
        assert_eq!(ev.row("paris"), Some(1));
        assert_eq!(ev.row("PaRiS"), Some(1));
        assert_eq!(ev.row("rare"), None, "row 4 is outside restrict_vocab 4");
        assert_eq!(ev.row_key(1), ev.row_key(3));
        assert_ne!(ev.row_key(0), ev.row_key(1));
        assert!(ev.row_known(3) && !ev.row_known(4));
        let exact = EvalVocab::new(&v, 10, false);
        assert_eq!(exact.row("paris"), Some(2));
        assert_eq!(exact.row("Paris"), Some(1));
        assert_eq!(exact.row("rare"), Some(4));
    }
}
