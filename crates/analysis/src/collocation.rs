//! Do words that occur together end up with similar vectors?
//!
//! Collocations are the word pairs with the highest pointwise mutual information among pairs
//! seen within `window` tokens of each other at least `min_count` times:
//!
//! PMI(a, b) = ln( c(a, b) · N / (c(a) · c(b)) ),   N = number of tokens, c(a, b) counted once
//! per co-occurrence within the window (unordered).
//!
//! The measure of a table of vectors is the mean cosine over these pairs minus the mean cosine
//! over the same words re-paired at random (each pair's second word replaced by another pair's),
//! so that the word frequencies are the same on both sides and a table whose vectors all point
//! one way (anisotropy) does not score by that alone. A gap near 0: co-occurrence is not what
//! makes vectors similar; a large gap: collocated words are near each other.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::geometry::cosine;
use word2vec::WordVectors;

/// Collocated pairs and their shuffled controls, as word strings.
#[derive(Clone, Debug, PartialEq)]
pub struct CollocationPairs {
    pub pairs: Vec<(String, String)>,
    pub shuffled: Vec<(String, String)>,
}

/// The `n_pairs` highest-PMI pairs among the ids below `top` (the most frequent words) in
/// `ids`, seen at least `min_count` times within `window` tokens; ids at or above `top` break
/// nothing, they are simply not counted. `words[i]` is id i's word.
pub fn collocation_pairs(
    ids: &[u32],
    words: &[String],
    top: u32,
    window: usize,
    min_count: u32,
    n_pairs: usize,
    seed: u64,
) -> CollocationPairs {
    let top = top.min(words.len() as u32);
    let mut unigram = vec![0u64; top as usize];
    let mut joint: HashMap<(u32, u32), u32> = HashMap::new();
    for (i, &a) in ids.iter().enumerate() {
        if a >= top {
            continue;
        }
        unigram[a as usize] += 1;
        for &b in ids.iter().skip(i + 1).take(window) {
            if b >= top || b == a {
                continue;
            }
            *joint.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    let n = ids.len() as f64;
    let mut scored: Vec<(f64, u32, u32)> = joint
        .into_iter()
        .filter(|&(_, c)| c >= min_count)
        .map(|((a, b), c)| {
            let pmi =
                (c as f64 * n / (unigram[a as usize] as f64 * unigram[b as usize] as f64)).ln();
            (pmi, a, b)
        })
        .collect();
    // Ties broken by ids so that the selection does not depend on the hash map's order.
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    scored.truncate(n_pairs);
    let pairs: Vec<(u32, u32)> = scored.iter().map(|&(_, a, b)| (a, b)).collect();
    let mut partners: Vec<u32> = pairs.iter().map(|p| p.1).collect();
    partners.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
    let name = |i: u32| words[i as usize].clone();
    CollocationPairs {
        pairs: pairs.iter().map(|&(a, b)| (name(a), name(b))).collect(),
        shuffled: pairs
            .iter()
            .zip(&partners)
            .map(|(&(a, _), &b)| (name(a), name(b)))
            .collect(),
    }
}

/// Mean cosine over collocated pairs, over shuffled pairs, their difference, and how many pairs
/// both words of which are in the table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollocationScore {
    pub collocated: f64,
    pub shuffled: f64,
    pub gap: f64,
    pub pairs: usize,
}

pub fn collocation_score(vectors: &WordVectors, pairs: &CollocationPairs) -> CollocationScore {
    let index = vectors.index();
    let mean = |ps: &[(String, String)]| {
        let (mut sum, mut n) = (0f64, 0usize);
        for (a, b) in ps {
            if let (Some(&i), Some(&j)) = (index.get(a.as_str()), index.get(b.as_str())) {
                sum += cosine(vectors.row(i), vectors.row(j));
                n += 1;
            }
        }
        (if n == 0 { f64::NAN } else { sum / n as f64 }, n)
    };
    let (collocated, pairs_used) = mean(&pairs.pairs);
    let (shuffled, _) = mean(&pairs.shuffled);
    CollocationScore {
        collocated,
        shuffled,
        gap: collocated - shuffled,
        pairs: pairs_used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("w{i}")).collect()
    }

    #[test]
    fn planted_collocation_has_the_highest_pmi() {
        // w0 w1 always adjacent; w2..w5 fill the rest in a fixed rotation.
        let mut ids = Vec::new();
        for i in 0..400u32 {
            ids.extend([0, 1, 2 + i % 4, 2 + (i + 1) % 4, 2 + (i + 2) % 4]);
        }
        let p = collocation_pairs(&ids, &words(6), 6, 1, 5, 1, 7);
        assert_eq!(p.pairs, vec![("w0".to_string(), "w1".to_string())]);
        // PMI by hand: c(w0,w1) = 400 of N = 2000 tokens, c(w0) = c(w1) = 400:
        // ln(400 * 2000 / 160000) = ln 5, above any filler pair (each filler has c = 300).
    }

    #[test]
    fn score_is_collocated_minus_shuffled_cosine() {
        let pairs = CollocationPairs {
            pairs: vec![("a".into(), "b".into()), ("c".into(), "d".into())],
            shuffled: vec![("a".into(), "d".into()), ("c".into(), "b".into())],
        };
        // a = b = (1,0); c = d = (0,1): collocated cosines 1, 1; shuffled 0, 0.
        let v = WordVectors::new(
            vec!["a".into(), "b".into(), "c".into(), "d".into()],
            2,
            vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0],
        );
        let s = collocation_score(&v, &pairs);
        assert_eq!(
            (s.collocated, s.shuffled, s.gap, s.pairs),
            (1.0, 0.0, 1.0, 2)
        );
        // A word missing from the table drops its pairs, and they are counted.
        let v = WordVectors::new(vec!["a".into(), "b".into()], 2, vec![1.0, 0.0, 0.6, 0.8]);
        let s = collocation_score(&v, &pairs);
        assert_eq!(s.pairs, 1);
        assert!((s.collocated - 0.6).abs() < 1e-6);
        assert!(s.shuffled.is_nan());
    }
}
