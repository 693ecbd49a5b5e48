//! The noise distribution for negative sampling: P(w) proportional to count(w)^0.75 (Mikolov et
//! al. 2013), drawn in O(1) with Walker's alias method. word2vec.c uses a 10^8-entry lookup
//! table (400 MB); the alias table needs two entries per word, so it stays in cache.

use crate::rng::SplitMix64;

pub struct AliasTable {
    /// Column `i`: keep `i` with probability `prob`, else take `alias`. The two sit side by side
    /// so that a draw reads one cache line, not one in each of two arrays.
    columns: Vec<Column>,
}

#[derive(Clone, Copy)]
struct Column {
    prob: f32,
    alias: u32,
}

impl AliasTable {
    /// Noise table over word ids `0..counts.len()` with P(w) proportional to `counts[w]^power`.
    pub fn unigram(counts: &[u64], power: f64) -> AliasTable {
        let weights: Vec<f64> = counts.iter().map(|&c| (c as f64).powf(power)).collect();
        Self::new(&weights)
    }

    /// Vose's construction: O(n), numerically stable.
    pub fn new(weights: &[f64]) -> AliasTable {
        let n = weights.len();
        assert!(n > 0 && n <= u32::MAX as usize);
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut prob = vec![1.0f32; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            prob[s] = scaled[s] as f32;
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        AliasTable {
            columns: prob
                .into_iter()
                .zip(alias)
                .map(|(prob, alias)| Column { prob, alias })
                .collect(),
        }
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut SplitMix64) -> u32 {
        let r = rng.next_u64();
        // High 32 bits pick the column, the next 24 the coin.
        let i = (((r >> 32) * self.columns.len() as u64) >> 32) as usize;
        let coin = ((r >> 8) & 0xFF_FFFF) as f32 * (1.0 / (1u32 << 24) as f32);
        let column = self.columns[i];
        // Which side wins depends on a random coin, which a branch predictor cannot learn.
        std::hint::select_unpredictable(coin < column.prob, i as u32, column.alias)
    }

    pub fn len(&self) -> usize {
        self.columns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }
    pub fn heap_bytes(&self) -> usize {
        self.columns.len() * std::mem::size_of::<Column>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_unigram_to_the_three_quarters() {
        let counts = [1000u64, 100, 10, 1];
        let table = AliasTable::unigram(&counts, 0.75);
        let w: Vec<f64> = counts.iter().map(|&c| (c as f64).powf(0.75)).collect();
        let total: f64 = w.iter().sum();
        let mut rng = SplitMix64::new(42);
        let n = 2_000_000;
        let mut hits = [0usize; 4];
        for _ in 0..n {
            hits[table.sample(&mut rng) as usize] += 1;
        }
        for i in 0..4 {
            let expected = w[i] / total;
            let got = hits[i] as f64 / n as f64;
            // 4 standard errors
            let se = (expected * (1.0 - expected) / n as f64).sqrt();
            assert!(
                (got - expected).abs() < 4.0 * se + 1e-4,
                "word {i}: {got} vs {expected}"
            );
        }
    }
}
