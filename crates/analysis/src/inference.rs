//! Statistical inference for the comparisons the report states: intervals that include the
//! sampling of benchmark items (questions, word pairs) and of training seeds, exact tests for
//! paired right/wrong outcomes, and chance bands from permutation nulls.
//!
//! * [`item_and_seed_interval`]: a statistic of one representation, or its difference between
//!   two scored on the same items, averaged over seeds, with an interval that carries both
//!   sources of noise: the items (resampled, or the units they are built from, such as an
//!   analogy question's two word pairs) and the seeds (their spread, at the seed count's
//!   degrees of freedom). A benchmark of 300 pairs moves a Spearman rho by about ±0.1 on its
//!   own, which three seeds alone cannot show; three seeds that disagree widen it as a t
//!   interval over three draws does.
//! * [`paired_bootstrap`]: the same statistic with a percentile interval from resampling seeds
//!   with replacement together with items. Its interval cannot leave the range of the seeds it
//!   has, so it understates the seed term with few seeds; kept for a quantity measured on one
//!   model (a single "seed"), where the two agree.
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

/// `estimate` with the percentile interval of `draws` (its non-finite draws left out).
pub(crate) fn percentile_interval(estimate: f64, mut draws: Vec<f64>, level: f64) -> Interval {
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

/// Two-sided 97.5% quantiles of Student's t, (df, quantile): every df from 1 to 30, then 40, 60,
/// 120 and the normal's at infinity.
const T975: [(f64, f64); 34] = [
    (1.0, 12.706),
    (2.0, 4.303),
    (3.0, 3.182),
    (4.0, 2.776),
    (5.0, 2.571),
    (6.0, 2.447),
    (7.0, 2.365),
    (8.0, 2.306),
    (9.0, 2.262),
    (10.0, 2.228),
    (11.0, 2.201),
    (12.0, 2.179),
    (13.0, 2.160),
    (14.0, 2.145),
    (15.0, 2.131),
    (16.0, 2.120),
    (17.0, 2.110),
    (18.0, 2.101),
    (19.0, 2.093),
    (20.0, 2.086),
    (21.0, 2.080),
    (22.0, 2.074),
    (23.0, 2.069),
    (24.0, 2.064),
    (25.0, 2.060),
    (26.0, 2.056),
    (27.0, 2.052),
    (28.0, 2.048),
    (29.0, 2.045),
    (30.0, 2.042),
    (40.0, 2.021),
    (60.0, 2.000),
    (120.0, 1.980),
    (f64::INFINITY, 1.959_964),
];

/// The 97.5% quantile of Student's t with `df` degrees of freedom, NaN below 1: exact (to the
/// table's 3 decimals) at the tabulated df, and linear in 1/df in between. A Welch-Satterthwaite
/// df is fractional and comes from estimated variances, so the quantile must not jump between
/// neighbouring df; the quantile is convex in 1/df, so the interpolation errs slightly wide (at
/// df 2.8: 3.342 against the exact 3.315).
pub fn t975(df: f64) -> f64 {
    if !(df >= 1.0) {
        return f64::NAN;
    }
    let inv = 1.0 / df;
    for w in T975.windows(2) {
        let ((d0, t0), (d1, t1)) = (w[0], w[1]);
        if df <= d1 {
            let (x0, x1) = (1.0 / d0, 1.0 / d1);
            return t0 + (t1 - t0) * (x0 - inv) / (x0 - x1);
        }
    }
    T975[T975.len() - 1].1
}

/// Welch-Satterthwaite degrees of freedom of `v_items + v_seeds`, where `v_seeds` is a
/// variance estimated from `k` seeds (`k - 1` df) and `v_items` counts as known (infinite
/// df): `(v_items + v_seeds)^2 / (v_seeds^2 / (k - 1))`.
pub fn satterthwaite_df(v_items: f64, v_seeds: f64, k: usize) -> f64 {
    if v_seeds == 0.0 || k < 2 {
        return f64::INFINITY;
    }
    let total = v_items + v_seeds;
    total * total / (v_seeds * v_seeds / (k - 1) as f64)
}

/// The units each item is built from, numbered `0..count`, every item with `per_item` of them.
struct Units {
    of: Vec<Vec<usize>>,
    count: usize,
    per_item: usize,
}

impl Units {
    /// A resample's items: units drawn with replacement, each item listed as often as the
    /// product of its units' counts.
    fn weights(&self) -> impl FnMut(&mut SplitMix64, &mut Vec<usize>) + '_ {
        let mut drawn = vec![0usize; self.count];
        move |rng, items| {
            drawn.iter_mut().for_each(|m| *m = 0);
            for _ in 0..self.count {
                drawn[index(rng, self.count)] += 1;
            }
            for (i, of) in self.of.iter().enumerate() {
                let times: usize = of.iter().map(|&x| drawn[x]).product();
                items.extend(std::iter::repeat_n(i, times));
            }
        }
    }

    /// One unit per item: its set of units (`{u, v}` the same set in either order), as the
    /// clusters of a cluster bootstrap.
    fn sets(&self) -> Units {
        let mut ids = std::collections::HashMap::new();
        let of: Vec<Vec<usize>> = self
            .of
            .iter()
            .map(|u| {
                let mut key = u.clone();
                key.sort_unstable();
                let next = ids.len();
                vec![*ids.entry(key).or_insert(next)]
            })
            .collect();
        Units {
            of,
            count: ids.len(),
            per_item: 1,
        }
    }
}

/// Each pair's two words as unit ids for [`item_and_seed_interval`], numbered from 0 in order
/// of first appearance.
pub fn word_units<S: AsRef<str>>(pairs: impl IntoIterator<Item = (S, S)>) -> Vec<Vec<usize>> {
    let mut ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut id = |x: &str| {
        let next = ids.len();
        *ids.entry(x.to_string()).or_insert(next)
    };
    pairs
        .into_iter()
        .map(|(x, y)| vec![id(x.as_ref()), id(y.as_ref())])
        .collect()
}

/// The units of each item renumbered `0..` in order of first use (a subset of a benchmark's
/// items leaves others out, and a resample draws as many units as the items use), a unit
/// named twice in one item counted once, and, where some item has two units, every item with
/// one given a private second unit (see [`item_and_seed_interval`] on why).
fn pad_units(u: &[Vec<usize>]) -> Units {
    let mut ids = std::collections::HashMap::new();
    let mut of: Vec<Vec<usize>> = u
        .iter()
        .map(|of| {
            let mut mine: Vec<usize> = Vec::with_capacity(2);
            for x in of {
                let next = ids.len();
                let id = *ids.entry(*x).or_insert(next);
                if !mine.contains(&id) {
                    mine.push(id);
                }
            }
            mine
        })
        .collect();
    let per_item = of.iter().map(Vec::len).max().unwrap_or(1);
    assert!(
        (1..=2).contains(&per_item) && of.iter().all(|o| !o.is_empty()),
        "each item is built from one or two units"
    );
    let mut count = ids.len();
    if per_item == 2 {
        for mine in of.iter_mut().filter(|o| o.len() == 1) {
            mine.push(count);
            count += 1;
        }
    }
    Units {
        of,
        count,
        per_item,
    }
}

/// The seed mean of `stat(a[s]) - stat(b[s])` (or of `stat(a[s])` alone), with a 95% interval
/// that carries both sources of variation at the seed count's degrees of freedom.
///
/// With `k` seeds scored on one shared set of items, the seed mean varies with the items drawn
/// and with the seeds trained. Its variance is estimated as the sum of
/// * the item term `v_items`: the variance, over `resamples` resamples of the items (every
///   seed kept, the same items for all), of the seed mean; and
/// * the seed term `v_seeds = s^2 / k`, where `s` is the standard deviation of the `k` per-seed
///   statistics on all items (items fixed, what differs between them is the seed, and how each
///   seed's errors fall on these items: that seed-by-item part is in the item term too, so
///   the sum is slightly wide, never narrow),
///
/// and the interval is `estimate +- t975(df) sqrt(v_items + v_seeds)`, with the
/// Welch-Satterthwaite df `(v_items + v_seeds)^2 / (v_seeds^2 / (k - 1))` (the item term, from
/// thousands of resamples, counts as known). Where the seeds disagree and the items do not, this
/// is the t interval over seeds with `k - 1` df; where the seeds agree, the item bootstrap's
/// normal interval. A resample that draws no item, or whose statistic is not finite, is left
/// out; with fewer than two left, the interval is undefined (NaN), never of zero width. [`paired_bootstrap`], which draws seeds with replacement as well, cannot
/// leave the range of the seeds it has: with 3 seeds its interval never falls below the
/// weakest seed, whatever their spread says about a fourth.
///
/// `units`, when given, names the units each item is built from (ids from 0; one or two
/// distinct units per item), and the item term resamples units instead of items. Items that
/// share material are not independent draws: an analogy question `a:b :: c:d` is built from two
/// word pairs, each of which makes many questions (most of Google's sections hold every ordered
/// combination of their pairs), so it resamples as `[pair(a,b), pair(c,d)]`; a similarity pair
/// `(x, y)` as `[word(x), word(y)]` (WS-353's 353 pairs use 437 words, MEN's 3,000 use 751).
/// * One unit per item is a cluster bootstrap: clusters drawn with replacement, an item kept
///   as often as its cluster is drawn.
/// * Two units per item (a dyadic design: both units drawn from one pool, such as words):
///   units are drawn with replacement, an item weighted by the product of its units' counts
///   (Owen's pigeonhole bootstrap, 2007, for rows and columns from two populations, applied
///   here to one pool). With counts `c ~ Poisson(1)` the linearised variance of that
///   bootstrap is `sum_ij Cov(c_u c_v, c_u' c_v') r_i r_j / N^2` (`r` the items' residuals):
///   weight 3 for an item with itself (and for two items on the same two units), 1 for two
///   items sharing one unit, 0 otherwise. The variance the design has is the dyadic-robust sum
///   (Fafchamps & Gubert 2007; Aronow, Samii & Assenova 2015) with weight 1 wherever two items
///   share a unit, so the product bootstrap counts each item's own noise three times: where
///   items share little, its interval is up to sqrt(3) too wide. The item term is therefore
///   `v_units - 2 v_sets`, where `v_sets` is the cluster bootstrap's variance over the items'
///   unit sets (`{u, v}`: an item and its mirror `c:d :: a:b`): it removes exactly the excess
///   weight 2 on those terms (under multinomial counts over `n` units every term keeps the
///   common factor `(1 - 2/n) / (1 - 1/n)`). The difference of two estimates can come out
///   below `v_sets`, by resampling noise where items share little, or because items sharing a
///   unit co-vary negatively (possible for a rank statistic); it is then floored at `v_sets`,
///   the variance the items would have as independent draws: our own conservative choice, not
///   a published rule. Where items share little (WS-353) the floor is reached in about half
///   of the intervals and widens them by a few percent. Two bootstraps of `resamples` draws
///   each make the half-width's resampling noise about 2.5 times a single bootstrap's (near 3%
///   of it at 2,000 draws).
///   An item built twice from one unit (`tiger`-`tiger`) counts that unit once, and in a set
///   whose other items have two units it gets a private second unit, so that the correction
///   holds for it too.
///
/// With one seed the seed term cannot be estimated and is left out: the interval then says
/// nothing about another seed.
pub fn item_and_seed_interval<T>(
    a: &[T],
    b: Option<&[T]>,
    n_items: usize,
    units: Option<&[Vec<usize>]>,
    stat: impl Fn(&T, &[usize]) -> f64,
    resamples: usize,
    seed: u64,
) -> Interval {
    assert!(!a.is_empty(), "no seeds");
    if let Some(b) = b {
        assert_eq!(a.len(), b.len(), "the same seeds for both representations");
    }
    if let Some(u) = units {
        assert_eq!(u.len(), n_items, "the units of every item");
    }
    let diff =
        |s: usize, items: &[usize]| stat(&a[s], items) - b.map_or(0.0, |b| stat(&b[s], items));
    let k = a.len();
    let all: Vec<usize> = (0..n_items).collect();
    let per_seed: Vec<f64> = (0..k).map(|s| diff(s, &all)).collect();
    let estimate = per_seed.iter().sum::<f64>() / k as f64;
    let v_seeds = if k > 1 {
        per_seed.iter().map(|d| (d - estimate).powi(2)).sum::<f64>() / (k - 1) as f64 / k as f64
    } else {
        0.0
    };
    let units = units.map(pad_units);
    let mut rng = SplitMix64::new(seed);
    let mut resample = |weights: &mut dyn FnMut(&mut SplitMix64, &mut Vec<usize>)| -> f64 {
        let mut items = Vec::with_capacity(n_items);
        let draws: Vec<f64> = (0..resamples)
            .map(|_| {
                items.clear();
                weights(&mut rng, &mut items);
                if items.is_empty() {
                    return f64::NAN;
                }
                (0..k).map(|s| diff(s, &items)).sum::<f64>() / k as f64
            })
            .filter(|d| d.is_finite())
            .collect();
        if draws.len() > 1 {
            let m = draws.iter().sum::<f64>() / draws.len() as f64;
            draws.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (draws.len() - 1) as f64
        } else {
            f64::NAN
        }
    };
    let v_items = match units {
        None => resample(&mut |rng, items| items.extend((0..n_items).map(|_| index(rng, n_items)))),
        Some(u) if u.per_item == 1 => resample(&mut u.weights()),
        Some(u) => {
            let v_units = resample(&mut u.weights());
            let v_sets = resample(&mut u.sets().weights());
            if v_units.is_nan() || v_sets.is_nan() {
                f64::NAN
            } else {
                (v_units - 2.0 * v_sets).max(v_sets)
            }
        }
    };
    let total = v_items + v_seeds;
    let half = if total == 0.0 {
        0.0
    } else {
        t975(satterthwaite_df(v_items, v_seeds, k)) * total.sqrt()
    };
    Interval {
        estimate,
        lo: estimate - half,
        hi: estimate + half,
        level: 0.95,
    }
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

/// Judgments and scores on the same items (as [`spearman_at`] reads them) with each one's
/// sort order kept, so that Spearman's rho on a resample, whose items repeat, ranks by counting
/// each item's draws along the kept order instead of sorting the drawn values: a bootstrap
/// then sorts each column once instead of once per resample ([`crate::evidence::RESAMPLES`]).
/// The ranks are the ones [`crate::stats::average_ranks`] gives the drawn values (each tie
/// group the average of the positions it spans), and the Pearson correlation of them is taken
/// in the same order, so rho is the same to the last bit ([`spearman_at`], tested). Values with a NaN are ranked by
/// [`spearman_at`] itself: a NaN ties with nothing, not even its own copies.
pub struct RankedPairs<'a> {
    data: &'a (Vec<f64>, Vec<f64>),
    /// Each column's items in ascending order (`total_cmp`, as `average_ranks` sorts);
    /// `None` where the data hold a NaN.
    orders: Option<[Vec<usize>; 2]>,
}

impl<'a> RankedPairs<'a> {
    pub fn new(data: &'a (Vec<f64>, Vec<f64>)) -> Self {
        assert_eq!(data.0.len(), data.1.len());
        let any_nan = data.0.iter().chain(&data.1).any(|x| x.is_nan());
        let order = |x: &[f64]| {
            let mut o: Vec<usize> = (0..x.len()).collect();
            o.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
            o
        };
        let orders = (!any_nan).then(|| [order(&data.0), order(&data.1)]);
        RankedPairs { data, orders }
    }

    /// Spearman's rho of the two columns at `items` (repeats allowed), as [`spearman_at`].
    pub fn spearman_at(&self, items: &[usize]) -> f64 {
        let Some(orders) = &self.orders else {
            return spearman_at(self.data, items);
        };
        let n = self.data.0.len();
        let mut draws = vec![0usize; n];
        for &i in items {
            draws[i] += 1;
        }
        let rank_of = |x: &[f64], order: &[usize]| -> Vec<f64> {
            let mut rank = vec![0.0; n];
            // `before`: drawn values below the current tie group (0-based position of its first).
            let (mut before, mut g) = (0usize, 0usize);
            while g < n {
                let mut end = g;
                let mut count = draws[order[g]];
                while end + 1 < n && x[order[end + 1]] == x[order[g]] {
                    end += 1;
                    count += draws[order[end]];
                }
                if count > 0 {
                    // average_ranks' `(i + j) / 2 + 1` over the positions the group spans.
                    let avg = (before + before + count - 1) as f64 / 2.0 + 1.0;
                    for &k in &order[g..=end] {
                        rank[k] = avg;
                    }
                }
                before += count;
                g = end + 1;
            }
            items.iter().map(|&i| rank[i]).collect()
        };
        crate::stats::pearson(
            &rank_of(&self.data.0, &orders[0]),
            &rank_of(&self.data.1, &orders[1]),
        )
    }
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

    /// Per-seed data whose statistic ignores the items: seeds disagree, items agree.
    fn constant(x: &f64, _items: &[usize]) -> f64 {
        *x
    }

    #[test]
    fn where_seeds_disagree_and_items_agree_the_interval_is_the_t_interval_over_seeds() {
        // The frozen-input case: per-seed differences 0.008, 0.0004, 0.017. Mean
        // 0.00847, sd 0.008311, se 0.004799, t(2) 4.303: [-0.01218, 0.02912].
        let a = [0.008, 0.0004, 0.017];
        let ci = item_and_seed_interval(&a, None, 50, None, constant, 500, 1);
        assert!((ci.estimate - 0.0084667).abs() < 1e-6, "{ci:?}");
        assert!(
            (ci.lo + 0.0121778).abs() < 1e-6 && (ci.hi - 0.0291111).abs() < 1e-6,
            "{ci:?}"
        );
        assert!(!ci.excludes_zero());
        // The joint bootstrap over the same three seeds never leaves their range.
        let boot = paired_bootstrap(&a, None, 50, constant, 2000, 0.95, 1);
        assert!(boot.lo >= 0.0004 && boot.hi <= 0.017, "{boot:?}");
        // As a difference of two representations: the same.
        let b = [0.0, 0.0, 0.0];
        let d = item_and_seed_interval(&a, Some(&b), 50, None, constant, 500, 1);
        assert!((d.lo - ci.lo).abs() < 1e-12 && (d.hi - ci.hi).abs() < 1e-12);
    }

    #[test]
    fn where_seeds_agree_the_interval_is_the_item_bootstraps() {
        // Three identical seeds, 400 items half right: no seed term, and the item term gives
        // the normal-theory 0.5 +- 1.96 sqrt(0.25 / 400) = 0.5 +- 0.049.
        let correct: Vec<bool> = (0..400).map(|i| i % 2 == 0).collect();
        let seeds = vec![correct.clone(), correct.clone(), correct];
        let ci = item_and_seed_interval(&seeds, None, 400, None, accuracy, 4000, 2);
        assert_eq!(ci.estimate, 0.5);
        assert!((ci.hi - ci.estimate - 0.049).abs() < 0.004, "{ci:?}");
    }

    #[test]
    fn clustered_items_are_resampled_together() {
        // 400 items in 40 clusters of 10 that are all right or all wrong: 40 independent draws,
        // not 400, so the item term is sqrt(10) times wider: 0.5 +- 1.96 sqrt(0.25 / 40).
        let correct: Vec<bool> = (0..400).map(|i| (i / 10) % 2 == 0).collect();
        let clusters: Vec<Vec<usize>> = (0..400).map(|i| vec![i / 10]).collect();
        let one = [correct];
        let flat = item_and_seed_interval(&one, None, 400, None, accuracy, 4000, 3);
        let grouped = item_and_seed_interval(&one, None, 400, Some(&clusters), accuracy, 4000, 3);
        assert!((flat.hi - 0.5 - 0.049).abs() < 0.005, "{flat:?}");
        assert!((grouped.hi - 0.5 - 0.155).abs() < 0.015, "{grouped:?}");
    }

    #[test]
    fn analogy_questions_resample_by_the_word_pairs_they_are_built_from() {
        // 20 word pairs, every ordered combination a question (380), answered right exactly
        // when its first pair is an even one: the outcome is a property of 20 pairs, not of 380
        // independent questions. Resampling pairs, the accuracy's sd is about that of a mean of
        // 20 draws, sqrt(0.25 / 20) = 0.112 (a 95% half-width near 0.22); resampling questions
        // as if independent, sqrt(0.25 / 380) = 0.026.
        let mut units = Vec::new();
        let mut correct = Vec::new();
        for p in 0..20 {
            for q in 0..20 {
                if p != q {
                    units.push(vec![p, q]);
                    correct.push(p % 2 == 0);
                }
            }
        }
        let one = [correct];
        let flat = item_and_seed_interval(&one, None, 380, None, accuracy, 4000, 4);
        let pairs = item_and_seed_interval(&one, None, 380, Some(&units), accuracy, 4000, 4);
        assert!((flat.hi - flat.estimate - 0.050).abs() < 0.006, "{flat:?}");
        let half = pairs.hi - pairs.estimate;
        assert!(half > 0.17 && half < 0.27, "{pairs:?}");
        // A resample keeps an item as often as the product of its units' counts.
        let one_unit: Vec<Vec<usize>> = (0..380).map(|i| vec![i]).collect();
        let same = item_and_seed_interval(&one, None, 380, Some(&one_unit), accuracy, 4000, 4);
        assert!(((same.hi - same.estimate) - (flat.hi - flat.estimate)).abs() < 0.006);
    }

    /// Mean of the values at `items`: a statistic whose variance has a closed form.
    #[allow(clippy::ptr_arg)]
    fn mean_at(x: &Vec<f64>, items: &[usize]) -> f64 {
        items.iter().map(|&i| x[i]).sum::<f64>() / items.len() as f64
    }

    /// The residuals of `x` about its mean, and the 95% half-width a dyadic design has: 1.96
    /// sqrt of the dyadic-robust sum, over every two items that share a unit (an item with
    /// itself included), of r_i r_j / N^2, computed directly.
    fn dyadic_half_width(units: &[Vec<usize>], x: &[f64]) -> (Vec<f64>, f64) {
        let n = x.len();
        let m = x.iter().sum::<f64>() / n as f64;
        let r: Vec<f64> = x.iter().map(|v| v - m).collect();
        let mut dyadic = 0.0;
        for i in 0..n {
            for j in 0..n {
                if units[i].iter().any(|u| units[j].contains(u)) {
                    dyadic += r[i] * r[j];
                }
            }
        }
        let half = 1.96 * (dyadic / (n * n) as f64).sqrt();
        (r, half)
    }

    #[test]
    fn items_of_two_units_that_share_none_get_the_item_bootstraps_width() {
        // 400 items half right, each built from two words of its own: no item shares a unit,
        // so they are 400 independent draws and the half-width is 1.96 sqrt(0.25 / 400) =
        // 0.049, as resampling items gives. The product of two counts alone would give
        // sqrt(3) times that (0.085): each item's own noise counted three times.
        let correct: Vec<bool> = (0..400).map(|i| (i * 7919) % 400 < 200).collect();
        let own: Vec<Vec<usize>> = (0..400).map(|i| vec![2 * i, 2 * i + 1]).collect();
        let one = [correct];
        let ci = item_and_seed_interval(&one, None, 400, Some(&own), accuracy, 4000, 12);
        assert!((ci.hi - ci.estimate - 0.049).abs() < 0.004, "{ci:?}");
    }

    #[test]
    fn a_dyadic_design_gets_the_dyadic_robust_variance() {
        // Every pair of 40 words an item (780), valued a_x + a_y + e_xy: the words' effects
        // make items that share a word co-vary. The variance of the mean over such a design
        // is the dyadic-robust sum over every two items that share a word, itself included,
        // of r_i r_j / N^2 (r the residuals about the mean), computed here directly.
        let w = 40;
        let mut rng = SplitMix64::new(21);
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        let a: Vec<f64> = (0..w).map(|_| 0.6 * unit()).collect();
        let (mut units, mut x) = (Vec::new(), Vec::new());
        for p in 0..w {
            for q in p + 1..w {
                units.push(vec![p, q]);
                x.push(a[p] + a[q] + 2.0 * unit());
            }
        }
        let n = x.len();
        let (r, expected) = dyadic_half_width(&units, &x);
        let independent = 1.96 * (r.iter().map(|v| v * v).sum::<f64>() / (n * n) as f64).sqrt();
        let one = [x];
        let ci = item_and_seed_interval(&one, None, n, Some(&units), mean_at, 4000, 22);
        let half = ci.hi - ci.estimate;
        // Shared words widen it well beyond independent items, and the estimate lands on the
        // dyadic sum (within the resampling's noise and the multinomial's 1/40).
        assert!(expected > 1.3 * independent, "{expected} {independent}");
        assert!(
            (half / expected - 1.0).abs() < 0.05,
            "{half} against {expected}"
        );
    }

    #[test]
    fn an_item_and_its_mirror_count_once_together() {
        // Analogy's layout: every ordered combination of 24 word pairs a question (552), the
        // question (p, q) and its mirror (q, p) sharing both units and an effect of their own
        // (m_pq, e.g. how related the two pairs' offsets are). The dyadic-robust sum counts
        // every two questions sharing a pair once, the mirror included; treating the mirror as
        // a stranger would count those terms three times, which this design makes visible.
        let w = 24;
        let mut rng = SplitMix64::new(31);
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        let a: Vec<f64> = (0..w).map(|_| 0.2 * unit()).collect();
        let mut m = vec![0.0; w * w];
        for p in 0..w {
            for q in p + 1..w {
                m[p * w + q] = 3.0 * unit();
            }
        }
        let (mut units, mut x) = (Vec::new(), Vec::new());
        for p in 0..w {
            for q in 0..w {
                if p != q {
                    units.push(vec![p, q]);
                    x.push(a[p] + a[q] + m[p.min(q) * w + p.max(q)] + 0.5 * unit());
                }
            }
        }
        let n = x.len();
        let (r, expected) = dyadic_half_width(&units, &x);
        let mut mirrors = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j && units[i][0] == units[j][1] && units[i][1] == units[j][0] {
                    mirrors += r[i] * r[j];
                }
            }
        }
        // The mirror terms counted three times instead of once: two more of them.
        let as_strangers =
            (expected.powi(2) + 1.96f64.powi(2) * 2.0 * mirrors / (n * n) as f64).sqrt();
        assert!(as_strangers > 1.15 * expected, "{as_strangers} {expected}");
        let one = [x];
        let ci = item_and_seed_interval(&one, None, n, Some(&units), mean_at, 4000, 32);
        let half = ci.hi - ci.estimate;
        assert!(
            (half / expected - 1.0).abs() < 0.05,
            "{half} against {expected}"
        );
    }

    #[test]
    fn a_unit_named_twice_in_an_item_counts_once_and_others_get_a_private_second_unit() {
        let u = pad_units(&[vec![7, 7], vec![7, 9], vec![3]]);
        // 7, 9 and 3 are units 0, 1 and 2; the private units follow (3, 4).
        assert_eq!(u.of, vec![vec![0, 3], vec![0, 1], vec![2, 4]]);
        assert_eq!((u.count, u.per_item), (5, 2));
        // The unit sets: an item and its mirror are one cluster.
        let s = pad_units(&[vec![1, 2], vec![2, 1], vec![1, 3]]).sets();
        assert_eq!((s.of, s.count), (vec![vec![0], vec![0], vec![1]], 2));
        // One unit each stays a cluster bootstrap.
        let c = pad_units(&[vec![5], vec![5, 5], vec![6]]);
        assert_eq!((c.of, c.per_item), (vec![vec![0], vec![0], vec![1]], 1));
    }

    #[test]
    fn t_quantiles_match_tables_and_move_smoothly_between_them() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(t975(1.0), 12.706) && close(t975(2.0), 4.303) && close(t975(30.0), 2.042));
        assert!(close(t975(60.0), 2.000) && close(t975(f64::INFINITY), 1.959_964));
        // Between 2 and 3 df, linear in 1/df: at 2.8, 4.303 - (0.5 - 1/2.8) / (1/6) * 1.121,
        // a little above the exact 3.315 (wide, never narrow).
        let t = t975(2.8);
        assert!((t - 3.3421).abs() < 1e-3 && t > 3.315, "{t}");
        // No jump across a whole df: the report's 2.96 and 3.01 get nearly the same quantile.
        assert!((t975(2.96) - t975(3.01)).abs() < 0.1);
        let mut last = f64::INFINITY;
        for i in 10..2000 {
            let t = t975(i as f64 / 10.0);
            assert!(t <= last, "not decreasing at df {}", i as f64 / 10.0);
            last = t;
        }
        assert!(t975(0.5).is_nan());
    }

    #[test]
    fn satterthwaite_combines_a_known_and_an_estimated_variance() {
        // Equal parts, 3 seeds: (2e-4)^2 / ((1e-4)^2 / 2) = 8 df.
        assert!((satterthwaite_df(1e-4, 1e-4, 3) - 8.0).abs() < 1e-9);
        // The seed term alone: its own k - 1.
        assert!((satterthwaite_df(0.0, 1e-4, 3) - 2.0).abs() < 1e-12);
        assert!(satterthwaite_df(1e-4, 0.0, 3).is_infinite());
        // Both terms in one planted case: 3 seeds right on nested sets of 160, 180 and 200 of
        // 400 items. Per item the seed mean is 1 (160 items), 2/3 (20), 1/3 (20) or 0 (200), so
        // v_items = (0.42778 - 0.45^2) / 400 = 5.632e-4; v_seeds = var(0.40, 0.45, 0.50) / 3 =
        // 8.333e-4; df = 1.3965e-3^2 / (8.333e-4^2 / 2) = 5.617; t975(5.617) = 2.4893 (between
        // 5 and 6 df, linear in 1/df); half-width 2.4893 * sqrt(1.3965e-3) = 0.0930.
        let seeds: Vec<Vec<bool>> = [160, 180, 200]
            .iter()
            .map(|&k| (0..400).map(|i| (i * 7919) % 400 < k).collect())
            .collect();
        let ci = item_and_seed_interval(&seeds, None, 400, None, accuracy, 4000, 9);
        assert!((ci.estimate - 0.45).abs() < 1e-12);
        assert!((ci.hi - ci.estimate - 0.0930).abs() < 0.003, "{ci:?}");
    }

    #[test]
    fn unit_ids_are_renumbered_so_a_subset_of_a_benchmark_resamples_as_a_whole() {
        // The same units under other ids (a subset of a larger benchmark keeps the larger
        // set's ids): the same draws, the same interval.
        let correct: Vec<bool> = (0..60).map(|i| i % 3 == 0).collect();
        let units: Vec<Vec<usize>> = (0..60).map(|i| vec![i / 6, (i + 1) % 10]).collect();
        let far: Vec<Vec<usize>> = units
            .iter()
            .map(|u| u.iter().map(|x| 1000 + 7 * x).collect())
            .collect();
        let one = [correct];
        let a = item_and_seed_interval(&one, None, 60, Some(&units), accuracy, 500, 6);
        let b = item_and_seed_interval(&one, None, 60, Some(&far), accuracy, 500, 6);
        assert_eq!((a.lo, a.hi), (b.lo, b.hi));
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
    fn ranked_pairs_give_spearman_at_to_the_last_bit() {
        // Ties within and across items, -0.0 beside 0.0, items drawn with repeats and some
        // never drawn, as a bootstrap draws them; and data with a NaN, read the slow way.
        let mut rng = SplitMix64::new(5);
        let n = 60;
        let mut gold: Vec<f64> = (0..n).map(|_| (index(&mut rng, 7)) as f64).collect();
        let mut model: Vec<f64> = (0..n).map(|_| rng.next_f32() as f64 - 0.5).collect();
        gold[3] = -0.0;
        gold[4] = 0.0;
        model[10] = model[11];
        let data = (gold, model);
        let ranked = RankedPairs::new(&data);
        for _ in 0..200 {
            let m = 1 + index(&mut rng, 2 * n);
            let items: Vec<usize> = (0..m).map(|_| index(&mut rng, n)).collect();
            let (fast, slow) = (ranked.spearman_at(&items), spearman_at(&data, &items));
            assert!(
                fast.to_bits() == slow.to_bits(),
                "{fast} != {slow} at {items:?}"
            );
        }
        let all: Vec<usize> = (0..n).collect();
        assert_eq!(
            ranked.spearman_at(&all),
            crate::stats::spearman(&data.0, &data.1)
        );
        let mut with_nan = data.clone();
        with_nan.1[7] = f64::NAN;
        let items = [7, 7, 1, 2, 3, 4, 5];
        let ranked = RankedPairs::new(&with_nan);
        assert_eq!(
            ranked.spearman_at(&items).to_bits(),
            spearman_at(&with_nan, &items).to_bits()
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
