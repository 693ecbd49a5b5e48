//! A table of word vectors: words in row order (frequency order for everything embedlab writes)
//! and a row-major `f32` matrix. Every representation — word2vec, the transformer's embedding
//! matrix, vectors pooled from an encoder layer, a file a user brings — becomes one of these,
//! so the evaluation treats them all the same way.

use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub struct WordVectors {
    words: Vec<String>,
    dim: usize,
    data: Vec<f32>,
}

impl WordVectors {
    /// `data.len()` must be `words.len() * dim`.
    pub fn new(words: Vec<String>, dim: usize, data: Vec<f32>) -> WordVectors {
        assert_eq!(
            data.len(),
            words.len() * dim,
            "matrix size does not match words x dim"
        );
        WordVectors { words, dim, data }
    }
    pub fn len(&self) -> usize {
        self.words.len()
    }
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
    pub fn dim(&self) -> usize {
        self.dim
    }
    pub fn words(&self) -> &[String] {
        &self.words
    }
    pub fn data(&self) -> &[f32] {
        &self.data
    }
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
    /// Index of each word; the first occurrence wins if a word appears twice.
    pub fn index(&self) -> HashMap<&str, usize> {
        let mut m = HashMap::with_capacity(self.words.len());
        for (i, w) in self.words.iter().enumerate() {
            m.entry(w.as_str()).or_insert(i);
        }
        m
    }
    /// The first `n` rows (all if `n` is larger).
    pub fn truncated(&self, n: usize) -> WordVectors {
        let n = n.min(self.len());
        WordVectors::new(
            self.words[..n].to_vec(),
            self.dim,
            self.data[..n * self.dim].to_vec(),
        )
    }
    /// Every row scaled to unit L2 norm (zero rows stay zero).
    pub fn normalized_rows(&self) -> Vec<f32> {
        let mut out = self.data.clone();
        if self.dim > 0 {
            for row in out.chunks_mut(self.dim) {
                let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    row.iter_mut().for_each(|x| *x /= norm);
                }
            }
        }
        out
    }
    /// The `topn` words most cosine-similar to `word`, excluding itself, as gensim's
    /// `most_similar(word)` returns them.
    pub fn most_similar(&self, word: &str, topn: usize) -> Option<Vec<(String, f32)>> {
        let &i = self.index().get(word)?;
        let unit = self.normalized_rows();
        let q = &unit[i * self.dim..(i + 1) * self.dim];
        let mut scored: Vec<(usize, f32)> = unit
            .chunks(self.dim)
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(j, r)| (j, r.iter().zip(q).map(|(a, b)| a * b).sum()))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        Some(
            scored
                .into_iter()
                .take(topn)
                .map(|(j, s)| (self.words[j].clone(), s))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_similar_ranks_by_cosine() {
        let v = WordVectors::new(
            vec!["a".into(), "b".into(), "c".into(), "d".into()],
            2,
            vec![1.0, 0.0, 3.0, 1.0, 0.0, 5.0, -1.0, 0.0],
        );
        let r = v.most_similar("a", 3).unwrap();
        let words: Vec<_> = r.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(words, ["b", "c", "d"]);
        // cos(a, b) = 3 / sqrt(10)
        assert!((r[0].1 - 3.0 / 10f32.sqrt()).abs() < 1e-6);
        assert!((r[1].1 - 0.0).abs() < 1e-6);
        assert!((r[2].1 + 1.0).abs() < 1e-6);
        assert!(v.most_similar("zzz", 3).is_none());
    }
}
