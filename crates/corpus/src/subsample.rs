//! word2vec's subsampling of frequent words (Mikolov et al. 2013, as implemented in word2vec.c
//! and gensim): each occurrence of word `w` with count `c(w)` is kept with probability
//!
//! ```text
//! t = sample * N                      (N = total count of vocabulary words)
//! p_keep(w) = min(1, (sqrt(c(w) / t) + 1) * t / c(w))
//! ```
//!
//! so words rarer than about `t` are always kept, and very frequent words are kept roughly in
//! proportion to `sqrt(t / c(w))`. `sample = 0` disables subsampling.

use crate::Vocab;

/// Keep-probability for every word id of `vocab`.
pub fn keep_probabilities(vocab: &Vocab, sample: f64) -> Vec<f32> {
    keep_probabilities_from_counts(vocab.counts(), sample)
}

pub fn keep_probabilities_from_counts(counts: &[u64], sample: f64) -> Vec<f32> {
    if sample <= 0.0 {
        return vec![1.0; counts.len()];
    }
    let threshold = sample * counts.iter().sum::<u64>() as f64;
    counts
        .iter()
        .map(|&c| {
            let c = c as f64;
            ((c / threshold).sqrt() + 1.0) * threshold / c
        })
        .map(|p| p.min(1.0) as f32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_hand_computed_values() {
        // N = 10_000 + 1_000 + 100 + 10 = 11_110; sample 1e-3 -> t = 11.11
        let p = keep_probabilities_from_counts(&[10_000, 1_000, 100, 10], 1e-3);
        // c = 10_000: (sqrt(10000/11.11) + 1) * 11.11/10000 = (30.0015 + 1) * 0.001111 = 0.034443
        assert!((p[0] - 0.034_443).abs() < 1e-5, "{}", p[0]);
        // c = 1_000: (sqrt(90.009) + 1) * 0.01111 = (9.48731 + 1) * 0.01111 = 0.116514
        assert!((p[1] - 0.116_514).abs() < 1e-5, "{}", p[1]);
        // c = 100: (sqrt(9.0009) + 1) * 0.1111 = (3.00015 + 1) * 0.1111 = 0.444417
        assert!((p[2] - 0.444_417).abs() < 1e-5, "{}", p[2]);
        // c = 10 < t: the formula exceeds 1 and is capped
        assert_eq!(p[3], 1.0);
    }

    #[test]
    fn zero_sample_keeps_everything() {
        assert_eq!(
            keep_probabilities_from_counts(&[5, 1_000_000], 0.0),
            vec![1.0, 1.0]
        );
    }
}
