//! Statistical inference for the comparisons the report states: intervals that include the
//! sampling of benchmark items (questions, word pairs) and of training seeds, exact tests for
//! paired right/wrong outcomes, and chance bands from permutation nulls.
//!
//! * [`paired_bootstrap`]: the difference of a statistic between two representations scored on
//!   the same items, with a percentile interval from resampling items and seeds together
//!   (each resample draws seeds with replacement and items with replacement, the same items for
//!   both representations and every drawn seed). Seeds and items are the two sources of noise:
//!   a benchmark of 300 pairs moves a Spearman rho by about ±0.1 on its own, which three seeds
//!   alone cannot show.
//! * [`mcnemar_exact`]: two representations answering the same analogy questions; only the
//!   discordant questions (right by one, wrong by the other) carry information, and under the
//!   null each goes either way with probability 1/2.
//! * [`permutation_band`]: where a statistic of unrelated scores falls, by shuffling one side
//!   against the other: the chance band of a Spearman rho for the pairs actually used.
//!
//! Every draw comes from a [`SplitMix64`] seeded by the caller, so an interval is reproducible.

pub use word2vec::rng::SplitMix64;

/// Uniform in `0..n` from `rng` (Lemire's multiply-shift over the full 64 bits: no 2^32 limit
/// on `n`, negligible bias at the sizes resampled here).
pub fn index(rng: &mut SplitMix64, n: usize) -> usize {
    ((rng.next_u64() as u128 * n as u128) >> 64) as usize
}

/// Shuffles `items` in place (Fisher-Yates, from the last position down, each swap partner
/// drawn by [`index`]): every permutation null and seeded sample in this crate draws through it.
pub fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        items.swap(i, index(rng, i + 1));
    }
}

/// A point estimate with a two-sided percentile interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
    /// Coverage, e.g. 0.95.
    pub level: f64,
}

impl Interval {
    /// Whether the interval excludes zero (a difference the data support, at this level).
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }
}

/// The `q` quantile (0..=1) of `sorted` by linear interpolation (numpy's default).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    if i + 1 < sorted.len() {
        sorted[i] + frac * (sorted[i + 1] - sorted[i])
    } else {
        sorted[i]
    }
}

fn percentile_interval(estimate: f64, mut draws: Vec<f64>, level: f64) -> Interval {
    draws.retain(|x| x.is_finite());
    draws.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Interval {
        estimate,
        lo: quantile(&draws, tail),
        hi: quantile(&draws, 1.0 - tail),
        level,
    }
}

/// The seed-mean of `stat(a[s]) - stat(b[s])` (or of `stat(a[s])` alone when `b` is `None`),
/// with a percentile interval over `resamples` joint resamples of seeds and items.
///
/// `a[s]` and `b[s]` hold seed `s`'s per-item data for `n_items` items in one shared order
/// (item i is the same question or pair everywhere); `stat(data, items)` computes the statistic
/// on the items listed (with repeats). Items missing for a representation (OOV) must be dropped
/// from both before calling, so both are scored on the same items.
pub fn paired_bootstrap<T>(
    a: &[T],
    b: Option<&[T]>,
    n_items: usize,
    stat: impl Fn(&T, &[usize]) -> f64,
    resamples: usize,
    level: f64,
    seed: u64,
) -> Interval {
    assert!(!a.is_empty(), "no seeds");
    if let Some(b) = b {
        assert_eq!(a.len(), b.len(), "the same seeds for both representations");
    }
    let diff =
        |s: usize, items: &[usize]| stat(&a[s], items) - b.map_or(0.0, |b| stat(&b[s], items));
    let all: Vec<usize> = (0..n_items).collect();
    let estimate = (0..a.len()).map(|s| diff(s, &all)).sum::<f64>() / a.len() as f64;
    let mut rng = SplitMix64::new(seed);
    let mut items = vec![0; n_items];
    let draws = (0..resamples)
        .map(|_| {
            for i in items.iter_mut() {
                *i = crate::inference::index(&mut rng, n_items);
            }
            let seeds: Vec<usize> = (0..a.len())
                .map(|_| crate::inference::index(&mut rng, a.len()))
                .collect();
            seeds.iter().map(|&s| diff(s, &items)).sum::<f64>() / seeds.len() as f64
        })
        .collect();
    percentile_interval(estimate, draws, level)
}

/// Mean of the 0/1 outcomes at `items`: accuracy, as [`paired_bootstrap`]'s statistic.
#[allow(clippy::ptr_arg)] // the per-seed data type of `paired_bootstrap`
pub fn accuracy(correct: &Vec<bool>, items: &[usize]) -> f64 {
    items.iter().filter(|&&i| correct[i]).count() as f64 / items.len().max(1) as f64
}

/// Spearman's rho of (gold, model) at `items`, as [`paired_bootstrap`]'s statistic; the data
/// per seed are `(gold scores, model cosines)` over the same pairs.
pub fn spearman_at(data: &(Vec<f64>, Vec<f64>), items: &[usize]) -> f64 {
    let gold: Vec<f64> = items.iter().map(|&i| data.0[i]).collect();
    let model: Vec<f64> = items.iter().map(|&i| data.1[i]).collect();
    crate::stats::spearman(&gold, &model)
}

/// Exact two-sided McNemar test: `b` items right only under the first representation, `c` right
/// only under the second. The p-value of a binomial(b + c, 1/2) as extreme as observed.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space so large n stays finite.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// Fisher's exact two-sided test of a 2x2 table: `a` successes in `n_a` trials against `b` in
/// `n_b`. With the margins fixed, the first group's count is hypergeometric; the p-value sums the
/// probabilities of every table no more probable than the observed one (R's and SciPy's rule,
/// with the same relative slack of 1e-7 for ties). For a handful of seeds per arm, where a mean
/// and its interval say little: "0 of 3 seeds did it against 2 of 3" is p = 0.4.
pub fn fisher_exact(a: u64, n_a: u64, b: u64, n_b: u64) -> f64 {
    assert!(a <= n_a && b <= n_b, "successes cannot exceed trials");
    let ln_choose = |n: u64, k: u64| -> f64 {
        (0..k)
            .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
            .sum()
    };
    let (k, n) = (a + b, n_a + n_b);
    let ln_total = ln_choose(n, k);
    let prob = |x: u64| (ln_choose(n_a, x) + ln_choose(n_b, k - x) - ln_total).exp();
    let observed = prob(a);
    let p: f64 = (k.saturating_sub(n_b)..=k.min(n_a))
        .map(prob)
        .filter(|&q| q <= observed * (1.0 + 1e-7))
        .sum();
    p.min(1.0)
}

/// The `level` band of `stat(x, y')` over `resamples` random permutations `y'` of `y`: where the
/// statistic of unrelated scores falls for exactly these items (ties and sample size included).
pub fn permutation_band(
    x: &[f64],
    y: &[f64],
    stat: impl Fn(&[f64], &[f64]) -> f64,
    resamples: usize,
    level: f64,
    seed: u64,
) -> Interval {
    assert_eq!(x.len(), y.len());
    let mut rng = SplitMix64::new(seed);
    let mut shuffled = y.to_vec();
    let draws: Vec<f64> = (0..resamples)
        .map(|_| {
            shuffle(&mut shuffled, &mut rng);
            stat(x, &shuffled)
        })
        .collect();
    let centre = draws.iter().sum::<f64>() / draws.len().max(1) as f64;
    percentile_interval(centre, draws, level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_matches_the_binomial_by_hand() {
        // n = 5 discordant, all one way: p = 2 * (1/2)^5.
        assert!((mcnemar_exact(0, 5) - 0.0625).abs() < 1e-15);
        // b = 1, c = 9: P(X <= 1) = (1 + 10) / 1024, doubled (statsmodels' exact McNemar: 0.021484375).
        assert!((mcnemar_exact(1, 9) - 22.0 / 1024.0).abs() < 1e-15);
        assert!((mcnemar_exact(9, 1) - 22.0 / 1024.0).abs() < 1e-15);
        assert_eq!(mcnemar_exact(3, 3), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        // Large n stays finite: 5,000 vs 5,200 discordant -> about z = 2.0, p ~ 0.047.
        let p = mcnemar_exact(5000, 5200);
        assert!(p > 0.04 && p < 0.055, "{p}");
    }

    #[test]
    fn fisher_matches_scipy_and_hand_counts() {
        // SciPy's documented example, fisher_exact([[6, 2], [1, 4]]): p = 0.10256410256410256.
        assert!((fisher_exact(6, 8, 1, 5) - 0.10256410256410256).abs() < 1e-12);
        // 0 of 3 against 2 of 3: tables with x = 0, 1, 2 first-arm successes have probabilities
        // 3/15, 9/15, 3/15; the two as extreme as observed sum to 0.4.
        assert!((fisher_exact(0, 3, 2, 3) - 0.4).abs() < 1e-12);
        assert!((fisher_exact(2, 3, 0, 3) - 0.4).abs() < 1e-12);
        // 0 of 3 against 3 of 3: 1/20 each way.
        assert!((fisher_exact(0, 3, 3, 3) - 0.1).abs() < 1e-12);
        assert_eq!(fisher_exact(1, 3, 1, 3), 1.0);
        assert_eq!(fisher_exact(0, 3, 0, 3), 1.0);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&x, 0.0), 1.0);
        assert_eq!(quantile(&x, 1.0), 4.0);
        assert!((quantile(&x, 0.5) - 2.5).abs() < 1e-15);
        assert!((quantile(&x, 0.025) - 1.075).abs() < 1e-12);
    }

    #[test]
    fn identical_representations_differ_by_exactly_zero() {
        let seeds: Vec<Vec<bool>> = (0..3)
            .map(|s| (0..50).map(|i| (i + s) % 3 == 0).collect())
            .collect();
        let ci = paired_bootstrap(&seeds, Some(&seeds), 50, accuracy, 500, 0.95, 7);
        assert_eq!((ci.estimate, ci.lo, ci.hi), (0.0, 0.0, 0.0));
        assert!(!ci.excludes_zero());
    }

    #[test]
    fn a_bernoulli_mean_gets_the_textbook_interval() {
        // One seed, 400 items, half right: the normal-theory 95% interval is
        // 0.5 +- 1.96 sqrt(0.25 / 400) = 0.5 +- 0.049.
        let correct: Vec<bool> = (0..400).map(|i| i % 2 == 0).collect();
        let ci = paired_bootstrap(&[correct], None, 400, accuracy, 4000, 0.95, 1);
        assert_eq!(ci.estimate, 0.5);
        assert!(
            (ci.lo - 0.451).abs() < 0.01 && (ci.hi - 0.549).abs() < 0.01,
            "{ci:?}"
        );
    }

    #[test]
    fn seed_spread_widens_the_interval() {
        // Three seeds whose accuracies are 0.3, 0.5, 0.7 on 1,000 items: resampling seeds adds
        // their spread, so the interval is far wider than the item noise of ~+-0.03 alone.
        let seeds: Vec<Vec<bool>> = [3, 5, 7]
            .iter()
            .map(|&k| (0..1000).map(|i| i % 10 < k).collect())
            .collect();
        let ci = paired_bootstrap(&seeds, None, 1000, accuracy, 2000, 0.95, 3);
        assert!((ci.estimate - 0.5).abs() < 1e-12);
        assert!(ci.lo < 0.4 && ci.hi > 0.6, "{ci:?}");
    }

    #[test]
    fn a_spearman_null_band_matches_its_large_sample_width() {
        // Under independence rho's sd is about 1/sqrt(n - 1): for n = 30, the 95% band is
        // about +-1.96 / sqrt(29) = +-0.364.
        let x: Vec<f64> = (0..30).map(|i| i as f64).collect();
        let y: Vec<f64> = (0..30).map(|i| ((i * 17) % 30) as f64).collect();
        let band = permutation_band(&x, &y, crate::stats::spearman, 4000, 0.95, 11);
        assert!(band.estimate.abs() < 0.02, "{band:?}");
        assert!(
            (band.lo + 0.364).abs() < 0.04 && (band.hi - 0.364).abs() < 0.04,
            "{band:?}"
        );
    }

    #[test]
    fn spearman_at_uses_only_the_listed_items() {
        let data = (vec![1.0, 2.0, 3.0, 4.0], vec![4.0, 3.0, 2.0, 1.0]);
        assert!((spearman_at(&data, &[0, 1, 2, 3]) + 1.0).abs() < 1e-12);
        let data = (vec![1.0, 2.0, 3.0, 0.0], vec![1.0, 2.0, 3.0, 9.0]);
        assert!((spearman_at(&data, &[0, 1, 2]) - 1.0).abs() < 1e-12);
    }
}
