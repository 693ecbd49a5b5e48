//! Scores and differences of word-vector tables with intervals that carry both the benchmark's
//! items and the seeds, from per-item outcomes (each analogy question right or wrong, each
//! similarity pair's cosine) of several seeds of each representation.
//!
//! * A score (an analogy accuracy, a Spearman rho) is the mean over seeds, with a 95% interval
//!   that carries both sources of variation: the items (resampled) and the seeds (their spread,
//!   at the seed count's degrees of freedom), [`item_and_seed_interval`]. An interval from
//!   resampling seeds with replacement could not fall below the weakest of three seeds.
//! * A difference between two representations is computed on the items both answer, with the
//!   same interval, so it holds the sampling of questions or pairs (which dominates on sets of a
//!   few hundred pairs) as well as seed-to-seed variation. Analogy questions are resampled by
//!   the word pairs they are built from (`a:b` and `c:d`, the same two words wherever they stand), and
//!   similarity pairs by their two words ([`pair_words`]), not as if each question or pair were
//!   an independent draw (with the correction for crossed units that
//!   [`item_and_seed_interval`] derives). Analogies also get McNemar's exact test per seed.
//! * A "best layer" is chosen on the *dev* half of a benchmark's items and reported on the other
//!   (*test*) half: similarity pair `i` of benchmark `b` falls in dev or test by a fair coin
//!   seeded by `b` and `i` ([`half_of`]), the same for every model and seed. Analogy questions
//!   share word pairs, so they are split by pair ([`question_halves`]): a question is dev when both
//!   its pairs are, test when both are, and in neither half when they differ, so that no pair
//!   stands on both sides of the choice.
//! * A similarity score stands beside its chance band: Spearman's rho of the same cosines
//!   permuted against the human scores, for exactly the pairs used.
//! * The collocation effect size (collocated minus frequency-matched pairs' mean cosine) gets
//!   the same interval, its word pairs resampled ([`Evidence::collocation_gap`]).
//! * Quantities measured once per seed with no items behind them (held-out loss, collocation
//!   z-scores, contextuality excesses) get a t interval over seeds: paired, seed s against seed
//!   s, where the two variants' seed s are matched by design ([`paired_seed_difference`]),
//!   Welch's where they share nothing ([`seed_difference`]: models trained on different
//!   corpora).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::inference::t975;
use crate::inference::{
    item_and_seed_interval, mcnemar_exact, permutation_band, spearman_at, word_units, Interval,
    RankedPairs, SplitMix64,
};
use crate::{AnalogySet, SimilaritySet};

/// Item resamples per interval: enough that the item variance they estimate moves by a few
/// percent between resampling seeds; every interval is seeded, so a report is reproducible.
pub const RESAMPLES: usize = 2_000;
const LEVEL: f64 = 0.95;

/// The benchmark names under which a table's collocated pairs' cosines, and their
/// frequency-matched pairs', are kept ([`Evidence::collocation_gap`]).
pub const COLLOCATED: &str = "collocation/collocated";
pub const MATCHED: &str = "collocation/matched";

/// Which items a statistic is computed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    All,
    /// Where best layers are chosen.
    Dev,
    /// Where chosen layers are reported.
    Test,
}

/// Whether item `i` of `benchmark` is a dev item (`true`) or a test item: a fair coin from
/// SplitMix64 seeded by the benchmark's name and the item's index.
pub fn half_of(benchmark: &str, i: usize) -> Half {
    let h = fnv1a(benchmark);
    let mut rng = SplitMix64::new(h ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    if rng.next_u64() >> 63 == 0 {
        Half::Dev
    } else {
        Half::Test
    }
}

/// The half each analogy question of `set` falls in, from the word pairs it is built from: each
/// pair ([`pair_key`]: its two words, wherever and in whichever order they stand) by a fair
/// coin seeded by the set's name and the two words themselves ([`half_of`]), so that a pair
/// keeps its side when other questions are added or reordered; the question dev when both its
/// pairs are dev, test when both are test, in neither half otherwise (`None`; about half of the
/// questions). A question-by-question split would put questions that share a pair (the same two
/// words, the same offset) on both sides, so that a layer chosen on dev would be chosen partly
/// on test.
pub fn question_halves(set: &AnalogySet) -> Vec<Option<Half>> {
    let coin = |x: &str, y: &str| {
        let (x, y) = pair_key(x, y);
        half_of(&format!("{}/pair {x} {y}", set.name), 0)
    };
    let mut out = Vec::new();
    for section in &set.sections {
        for [a, b, c, d] in &section.questions {
            let (first, second) = (coin(a, b), coin(c, d));
            out.push((first == second).then_some(first));
        }
    }
    out
}

/// FNV-1a of `text`: a seed stable across platforms and Rust versions, unlike `DefaultHasher`.
fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A representation: (model, representation, layer), as in the tidy rows.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rep {
    pub model: String,
    pub representation: String,
    pub layer: Option<usize>,
}

impl Rep {
    pub fn new(model: &str, representation: &str, layer: Option<usize>) -> Rep {
        Rep {
            model: model.into(),
            representation: representation.into(),
            layer,
        }
    }
}

/// One seed's per-item values of one representation on one benchmark, in file order: each
/// analogy question right, wrong or not answered (`None`), or each similarity pair's cosine
/// (`None`: a word out of vocabulary).
pub enum Values {
    Outcomes(Vec<Option<bool>>),
    Cosines(Vec<Option<f64>>),
}

impl Values {
    fn present(&self, i: usize) -> bool {
        match self {
            Values::Outcomes(v) => v.get(i).is_some_and(|o| o.is_some()),
            Values::Cosines(v) => v.get(i).is_some_and(|o| o.is_some()),
        }
    }
    fn len(&self) -> usize {
        match self {
            Values::Outcomes(v) => v.len(),
            Values::Cosines(v) => v.len(),
        }
    }
}

/// A score with its interval, and how many items it rests on.
#[derive(Clone, Copy, Debug)]
pub struct Estimate {
    pub interval: Interval,
    pub items: usize,
}

/// A difference a - b with its interval; for analogies, McNemar's p per seed.
#[derive(Clone, Debug)]
pub struct Difference {
    pub a: Estimate,
    pub b: Estimate,
    pub diff: Interval,
    pub mcnemar: Vec<f64>,
    /// The seeds both were trained with, which `a`, `b` and `diff` are computed on.
    pub seeds: Vec<u64>,
    /// Whether either had seeds the other lacks (left out of all three).
    pub seeds_left_out: bool,
}

/// A difference's change between two points ([`Evidence::difference_change`]).
#[derive(Clone, Debug)]
pub struct Change {
    pub change: Estimate,
    /// The seeds all four tables were trained with, which the change is computed on.
    pub seeds: Vec<u64>,
}

/// Per-item outcomes of every measured model, by (rep, benchmark) and seed.
pub struct Evidence {
    items: HashMap<(Rep, String), BTreeMap<u64, Values>>,
    /// Human scores of each similarity set, in file order.
    gold: HashMap<String, Vec<f64>>,
    /// Each analogy question's two word pairs, as unit ids, in file order.
    pairs: HashMap<String, Vec<Vec<usize>>>,
    /// Each similarity pair's two words, as unit ids, in file order.
    words: HashMap<String, Vec<Vec<usize>>>,
    /// Each analogy question's half ([`question_halves`]), in file order.
    halves: HashMap<String, Vec<Option<Half>>>,
}

/// The two words of a pair as one unit: case folded (as gensim scores) and in either order
/// (`read:reading` and `reading:read` are the same two words), wherever it stands.
fn pair_key(x: &str, y: &str) -> (String, String) {
    let (x, y) = (x.to_lowercase(), y.to_lowercase());
    if x <= y {
        (x, y)
    } else {
        (y, x)
    }
}

/// The word pairs each question of an analogy set is built from: `a:b` and `c:d`, numbered
/// within the set. A pair is its two words ([`pair_key`]): the same two words in two sections
/// (capital-world repeats capital-common-countries' pairs) or in either order are one pair.
pub fn question_pairs(set: &AnalogySet) -> Vec<Vec<usize>> {
    let mut ids: HashMap<(String, String), usize> = HashMap::new();
    let mut id = |x: &str, y: &str| {
        let next = ids.len();
        *ids.entry(pair_key(x, y)).or_insert(next)
    };
    let mut out = Vec::new();
    for section in &set.sections {
        for [a, b, c, d] in &section.questions {
            out.push(vec![id(a, b), id(c, d)]);
        }
    }
    out
}

/// The two words each pair of a similarity set is built from, numbered within the set (case
/// folded, as gensim scores): a word in many pairs (MEN's 3,000 pairs use 751 words) makes
/// their cosines co-vary, so pairs resample through their words.
pub fn pair_words(set: &SimilaritySet) -> Vec<Vec<usize>> {
    word_units((set.pairs.iter()).map(|(x, y, _)| (x.to_lowercase(), y.to_lowercase())))
}

impl Evidence {
    /// No outcomes yet, and what the benchmarks say about their items: each similarity set's
    /// human scores and each analogy question's two word pairs.
    pub fn new(analogy: &[AnalogySet], similarity: &[SimilaritySet]) -> Evidence {
        let gold = similarity
            .iter()
            .map(|s| (s.name.clone(), s.pairs.iter().map(|p| p.2).collect()))
            .collect();
        let pairs = analogy
            .iter()
            .map(|set| (set.name.clone(), question_pairs(set)))
            .collect();
        let halves = analogy
            .iter()
            .map(|set| (set.name.clone(), question_halves(set)))
            .collect();
        let words = similarity
            .iter()
            .map(|set| (set.name.clone(), pair_words(set)))
            .collect();
        Evidence {
            items: HashMap::new(),
            gold,
            pairs,
            words,
            halves,
        }
    }

    /// One seed's outcomes of `rep` on `benchmark` (replacing any given before).
    pub fn insert(&mut self, rep: Rep, benchmark: &str, seed: u64, values: Values) {
        self.items
            .entry((rep, benchmark.to_string()))
            .or_default()
            .insert(seed, values);
    }

    /// The words of the corpus's collocated pairs and of their frequency-matched pairs, in the
    /// order their cosines are kept (`collocated[i]` is item i of [`COLLOCATED`], `matched[i]`
    /// of [`MATCHED`]), so that [`Evidence::collocation_gap`] resamples the pairs through their
    /// words (one pool for both groups: a word can stand in collocated and matched pairs)
    /// instead of as independent draws: a frequent word stands in many collocated pairs.
    /// Refused, leaving the evidence as it was, where a table kept another number of pairs
    /// than given: the words would not be those pairs'.
    pub fn set_collocation_words(
        &mut self,
        collocated: &[(String, String)],
        matched: &[(String, String)],
    ) -> Result<(), String> {
        for (group, pairs) in [(COLLOCATED, collocated), (MATCHED, matched)] {
            for ((rep, b), seeds) in &self.items {
                if b != group {
                    continue;
                }
                for (seed, v) in seeds {
                    if v.len() != pairs.len() {
                        return Err(format!(
                            "{group}: {} seed {seed} kept {} pairs' cosines, but {} pairs were given",
                            rep.model,
                            v.len(),
                            pairs.len()
                        ));
                    }
                }
            }
        }
        // One pool for both groups: collocated pairs first, then matched.
        let mut c = word_units((collocated.iter().chain(matched)).map(|(x, y)| (x, y)));
        let m = c.split_off(collocated.len());
        self.words.insert(COLLOCATED.to_string(), c);
        self.words.insert(MATCHED.to_string(), m);
        Ok(())
    }

    /// Whether [`Evidence::set_collocation_words`] has given the collocation pairs' words.
    pub fn has_collocation_words(&self) -> bool {
        self.words.contains_key(COLLOCATED) && self.words.contains_key(MATCHED)
    }

    fn seeds(&self, rep: &Rep, benchmark: &str) -> Option<&BTreeMap<u64, Values>> {
        self.items
            .get(&(rep.clone(), benchmark.to_string()))
            .filter(|m| !m.is_empty())
    }

    /// The layers measured for (model, representation) on `benchmark`.
    pub fn layers(&self, model: &str, representation: &str, benchmark: &str) -> Vec<usize> {
        let mut l: Vec<usize> = self
            .items
            .keys()
            .filter(|(r, b)| {
                r.model == model && r.representation == representation && b == benchmark
            })
            .filter_map(|(r, _)| r.layer)
            .collect();
        l.sort();
        l
    }

    /// Whether item `i` of `benchmark` is in `half`: by its word pairs for an analogy set whose
    /// questions are known ([`question_halves`]; an item beyond them is in neither half), else
    /// by its own coin ([`half_of`]).
    fn in_half(&self, benchmark: &str, i: usize, half: Half) -> bool {
        if half == Half::All {
            return true;
        }
        match self.halves.get(benchmark) {
            Some(h) => h.get(i).copied().flatten() == Some(half),
            None => half_of(benchmark, i) == half,
        }
    }

    /// Items of `half` present for every seed of every rep in `reps`.
    fn common_items(&self, reps: &[&Rep], benchmark: &str, half: Half) -> Option<Vec<usize>> {
        let sets: Vec<&BTreeMap<u64, Values>> = reps
            .iter()
            .map(|r| self.seeds(r, benchmark))
            .collect::<Option<_>>()?;
        let first = sets[0].values().next()?;
        if matches!(first, Values::Cosines(_)) && !self.gold.contains_key(benchmark) {
            return None;
        }
        let n = first.len();
        // Outcomes of another number of questions than the set has are of another file: its
        // halves (and word pairs) do not apply to them.
        if half != Half::All && self.halves.get(benchmark).is_some_and(|h| h.len() != n) {
            return None;
        }
        let items: Vec<usize> = (0..n)
            .filter(|&i| self.in_half(benchmark, i, half))
            .filter(|&i| sets.iter().all(|s| s.values().all(|v| v.present(i))))
            .collect();
        (!items.is_empty()).then_some(items)
    }

    /// Per-seed data of `rep` on `items`, for the bootstrap: outcomes or (gold, cosines); of
    /// the seeds in `only` where given.
    fn data(&self, rep: &Rep, benchmark: &str, items: &[usize], only: Option<&[u64]>) -> Data {
        let all = self.seeds(rep, benchmark).expect("checked by common_items");
        let seeds: BTreeMap<u64, &Values> = all
            .iter()
            .filter(|(s, _)| only.is_none_or(|o| o.contains(s)))
            .map(|(s, v)| (*s, v))
            .collect();
        match seeds.values().next() {
            Some(Values::Outcomes(_)) => Data::Analogy(
                self.pairs
                    .get(benchmark)
                    .filter(|p| seeds.values().all(|v| v.len() == p.len()))
                    .map(|p| items.iter().map(|&i| p[i].clone()).collect()),
                seeds
                    .values()
                    .map(|v| match v {
                        Values::Outcomes(o) => items.iter().map(|&i| o[i] == Some(true)).collect(),
                        Values::Cosines(_) => Vec::new(),
                    })
                    .collect(),
            ),
            _ => {
                let gold = &self.gold[benchmark];
                let g: Vec<f64> = items.iter().map(|&i| gold[i]).collect();
                Data::Similarity(
                    self.words
                        .get(benchmark)
                        .filter(|w| seeds.values().all(|v| v.len() == w.len()))
                        .map(|w| items.iter().map(|&i| w[i].clone()).collect()),
                    seeds
                        .values()
                        .map(|v| match v {
                            Values::Cosines(c) => (
                                g.clone(),
                                items.iter().map(|&i| c[i].unwrap_or(0.0)).collect(),
                            ),
                            Values::Outcomes(_) => (Vec::new(), Vec::new()),
                        })
                        .collect(),
                )
            }
        }
    }

    /// The seed mean of `rep` on `half` of `benchmark`, with its interval.
    pub fn score(&self, rep: &Rep, benchmark: &str, half: Half) -> Option<Estimate> {
        let items = self.common_items(&[rep], benchmark, half)?;
        let seed = stream(rep, None, benchmark, half);
        Some(self.data(rep, benchmark, &items, None).estimate(None, seed))
    }

    /// `a - b` on the items both have in `half` and the seeds both were trained with (seed s of
    /// one against seed s of the other; where one has more seeds, the others are left out of
    /// the difference, and of both scores it reports), with its interval (and McNemar per seed
    /// for analogies). `None` when either is missing or they share no seed.
    pub fn difference(&self, a: &Rep, b: &Rep, benchmark: &str, half: Half) -> Option<Difference> {
        let items = self.common_items(&[a, b], benchmark, half)?;
        let (of_a, of_b) = (self.seeds(a, benchmark)?, self.seeds(b, benchmark)?);
        let common: Vec<u64> = (of_a.keys())
            .filter(|s| of_b.contains_key(s))
            .copied()
            .collect();
        if common.is_empty() {
            return None;
        }
        let seeds_left_out = common.len() < of_a.len().max(of_b.len());
        let (da, db) = (
            self.data(a, benchmark, &items, Some(&common)),
            self.data(b, benchmark, &items, Some(&common)),
        );
        let seed = stream(a, Some(b), benchmark, half);
        let ea = da.estimate(None, seed);
        let eb = db.estimate(None, seed ^ 1);
        let diff = da.estimate(Some(&db), seed ^ 2).interval;
        let mcnemar = match (&da, &db) {
            (Data::Analogy(_, x), Data::Analogy(_, y)) => x
                .iter()
                .zip(y)
                .map(|(x, y)| {
                    let only_a = x.iter().zip(y).filter(|(p, q)| **p && !**q).count();
                    let only_b = x.iter().zip(y).filter(|(p, q)| !**p && **q).count();
                    mcnemar_exact(only_a as u64, only_b as u64)
                })
                .collect(),
            _ => Vec::new(),
        };
        Some(Difference {
            a: ea,
            b: eb,
            diff,
            seeds: common,
            seeds_left_out,
            mcnemar,
        })
    }

    /// How a difference between two tables changed between two points (of the training budget,
    /// or two corpus sizes): `(a1 - b1) - (a0 - b0)` on the items all four have in `half` and
    /// the seeds all four were trained with, as the seed mean of each seed's contrast, with
    /// the item-and-seed interval of that contrast (the four tables' items resampled together,
    /// through their units as a score's are; the seeds' spread at the seed count's degrees of
    /// freedom). The difference at each point has its own interval, but whether it moved
    /// between them is this one's. `None` when any is missing or they share no seed.
    pub fn difference_change(
        &self,
        [a1, b1, a0, b0]: [&Rep; 4],
        benchmark: &str,
        half: Half,
    ) -> Option<Change> {
        let reps = [a1, b1, a0, b0];
        let items = self.common_items(&reps, benchmark, half)?;
        let mut common: Option<BTreeSet<u64>> = None;
        for r in reps {
            let ids: BTreeSet<u64> = self.seeds(r, benchmark)?.keys().copied().collect();
            common = Some(match common {
                None => ids,
                Some(c) => c.intersection(&ids).copied().collect(),
            });
        }
        let common: Vec<u64> = common?.into_iter().collect();
        if common.is_empty() {
            return None;
        }
        let data = reps.map(|r| self.data(r, benchmark, &items, Some(&common)));
        let seed = stream(a1, Some(a0), benchmark, half) ^ stream(b1, Some(b0), benchmark, half);
        let n = items.len();
        // Per seed, the four tables' data in the order a1, b1, a0, b0.
        fn per_seed<T: Clone>(four: [&Vec<T>; 4]) -> Vec<[T; 4]> {
            (0..four[0].len())
                .map(|s| four.map(|d| d[s].clone()))
                .collect()
        }
        let contrast = |x: [f64; 4]| x[0] - x[1] - x[2] + x[3];
        let interval = match &data {
            [Data::Analogy(units, a1), Data::Analogy(_, b1), Data::Analogy(_, a0), Data::Analogy(_, b0)] =>
            {
                let seeds = per_seed([a1, b1, a0, b0]);
                let stat = |t: &[Vec<bool>; 4], items: &[usize]| {
                    contrast([0, 1, 2, 3].map(|j| crate::inference::accuracy(&t[j], items)))
                };
                item_and_seed_interval(&seeds, None, n, units.as_deref(), stat, RESAMPLES, seed)
            }
            [Data::Similarity(units, a1), Data::Similarity(_, b1), Data::Similarity(_, a0), Data::Similarity(_, b0)] =>
            {
                let four = per_seed([a1, b1, a0, b0]);
                let seeds: Vec<[RankedPairs; 4]> = (four.iter())
                    .map(|t| [0, 1, 2, 3].map(|j| RankedPairs::new(&t[j])))
                    .collect();
                let stat = |t: &[RankedPairs; 4], items: &[usize]| {
                    contrast([0, 1, 2, 3].map(|j| t[j].spearman_at(items)))
                };
                item_and_seed_interval(&seeds, None, n, units.as_deref(), stat, RESAMPLES, seed)
            }
            _ => return None,
        };
        // A contrast of four accuracies lies in [-2, 2], of four rhos in [-4, 4]; what lies
        // outside is impossible, and an undefined bound stays undefined.
        let end = if matches!(data[0], Data::Analogy(..)) {
            2.0
        } else {
            4.0
        };
        let cut = |x: f64| if x.is_nan() { x } else { x.clamp(-end, end) };
        let interval = Interval {
            lo: cut(interval.lo),
            hi: cut(interval.hi),
            ..interval
        };
        Some(Change {
            change: Estimate { interval, items: n },
            seeds: common,
        })
    }

    /// Collocated minus frequency-matched pairs' mean cosine (the effect size of co-occurrence
    /// on a table, [`crate::collocation`]) of `a`, or its difference from `b` on the same pairs,
    /// as the seed mean with an item-and-seed interval: the pairs of both groups resampled
    /// together (a two-sample bootstrap whose group sizes vary between draws, more so where a few
    /// words stand in many pairs), through
    /// their words where [`Evidence::set_collocation_words`] gave them and they are as many as
    /// the kept cosines (as independent draws otherwise), and the seeds' spread at the seed count's degrees
    /// of freedom, as for every other score. The cosines are kept under [`COLLOCATED`] and
    /// [`MATCHED`]; the seeds read are those both tables have (as [`Evidence::difference`]
    /// reads them), and only pairs present for every such seed count. `None` when either group
    /// is missing or empty, or the tables share no seed.
    pub fn collocation_gap(&self, a: &Rep, b: Option<&Rep>) -> Option<Estimate> {
        let reps: Vec<&Rep> = std::iter::once(a).chain(b).collect();
        let common = self.collocation_seeds(a, b);
        if common.is_empty() {
            return None;
        }
        // Pairs present for every common seed of every table.
        let present = |group: &str| -> Option<Vec<usize>> {
            let values: Vec<&Values> = reps
                .iter()
                .flat_map(|r| {
                    let of = self.seeds(r, group).expect("checked above");
                    common.iter().map(move |s| &of[s])
                })
                .collect();
            let n = values[0].len();
            let items: Vec<usize> = (0..n)
                .filter(|&i| values.iter().all(|v| v.present(i)))
                .collect();
            (!items.is_empty()).then_some(items)
        };
        let (collocated, matched) = (present(COLLOCATED)?, present(MATCHED)?);
        let n_c = collocated.len();
        // Each common seed's cosines, collocated pairs first: item i < n_c is collocated.
        let data = |rep: &Rep| -> Vec<Vec<f64>> {
            let cos =
                |group: &str, seed: u64, i: usize| match &self.seeds(rep, group).unwrap()[&seed] {
                    Values::Cosines(c) => c[i].unwrap_or(f64::NAN),
                    Values::Outcomes(_) => f64::NAN,
                };
            common
                .iter()
                .map(|&s| {
                    let c = collocated.iter().map(|&i| cos(COLLOCATED, s, i));
                    c.chain(matched.iter().map(|&i| cos(MATCHED, s, i)))
                        .collect()
                })
                .collect()
        };
        let gap = |x: &Vec<f64>, items: &[usize]| crate::collocation::group_gap(x, items, n_c);
        let da = data(a);
        let db = b.map(data);
        let n = n_c + matched.len();
        // Each kept pair's two words, collocated pairs first, where they were given.
        let n_kept = |group: &str| self.seeds(a, group).map(|s| s[&common[0]].len());
        let units: Option<Vec<Vec<usize>>> =
            match (self.words.get(COLLOCATED), self.words.get(MATCHED)) {
                // Words for as many pairs as were kept: anything else is not these pairs'.
                (Some(c), Some(m))
                    if Some(c.len()) == n_kept(COLLOCATED) && Some(m.len()) == n_kept(MATCHED) =>
                {
                    Some(
                        (collocated.iter().map(|&i| c[i].clone()))
                            .chain(matched.iter().map(|&i| m[i].clone()))
                            .collect(),
                    )
                }
                _ => None,
            };
        let seed = stream(a, b, "collocation", Half::All);
        let interval = item_and_seed_interval(
            &da,
            db.as_deref(),
            n,
            units.as_deref(),
            gap,
            RESAMPLES,
            seed,
        );
        if !interval.estimate.is_finite() {
            return None;
        }
        // A gap lies in [-2, 2], a difference of two in [-4, 4]; an undefined bound stays so.
        let end = if b.is_some() { 4.0 } else { 2.0 };
        let cut = |x: f64, f: fn(f64, f64) -> f64, e: f64| if x.is_nan() { x } else { f(x, e) };
        Some(Estimate {
            interval: Interval {
                lo: cut(interval.lo, f64::max, -end),
                hi: cut(interval.hi, f64::min, end),
                ..interval
            },
            items: n,
        })
    }

    /// The seeds [`Evidence::collocation_gap`] reads for `a` (and `b`): those whose collocated
    /// and matched pairs' cosines every table has.
    pub fn collocation_seeds(&self, a: &Rep, b: Option<&Rep>) -> Vec<u64> {
        let mut common: Option<BTreeSet<u64>> = None;
        for r in std::iter::once(a).chain(b) {
            for g in [COLLOCATED, MATCHED] {
                let ids: BTreeSet<u64> = self
                    .seeds(r, g)
                    .map_or_else(BTreeSet::new, |m| m.keys().copied().collect());
                common = Some(match common {
                    Some(c) => c.intersection(&ids).copied().collect(),
                    None => ids,
                });
            }
        }
        common.unwrap_or_default().into_iter().collect()
    }

    /// The layer of (model, representation) with the best seed mean on the dev half.
    pub fn best_layer(&self, model: &str, representation: &str, benchmark: &str) -> Option<usize> {
        self.layers(model, representation, benchmark)
            .into_iter()
            .filter_map(|l| {
                let rep = Rep::new(model, representation, Some(l));
                let items = self.common_items(&[&rep], benchmark, Half::Dev)?;
                let m = self.data(&rep, benchmark, &items, None).seed_mean();
                m.is_finite().then_some((l, m))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(l, _)| l)
    }

    /// The 95% chance band of Spearman's rho for the pairs `rep` uses in `half`: its first
    /// seed's cosines permuted against the human scores. `None` for analogies.
    pub fn chance_band(&self, rep: &Rep, benchmark: &str, half: Half) -> Option<Interval> {
        let items = self.common_items(&[rep], benchmark, half)?;
        match self.data(rep, benchmark, &items, None) {
            Data::Similarity(_, s) => Some(permutation_band(
                &s[0].0,
                &s[0].1,
                crate::stats::spearman,
                RESAMPLES,
                LEVEL,
                31,
            )),
            Data::Analogy(..) => None,
        }
    }
}

enum Data {
    /// The word pairs each question is built from (unit ids; `None` where the set's questions
    /// are not known), and each seed's right/wrong per question.
    Analogy(Option<Vec<Vec<usize>>>, Vec<Vec<bool>>),
    /// The two words each pair is built from (unit ids; `None` where the set's pairs are not
    /// known), and each seed's (human scores, cosines).
    Similarity(Option<Vec<Vec<usize>>>, Vec<(Vec<f64>, Vec<f64>)>),
}

impl Data {
    fn n_items(&self) -> usize {
        match self {
            Data::Analogy(_, v) => v[0].len(),
            Data::Similarity(_, v) => v[0].0.len(),
        }
    }

    fn seed_mean(&self) -> f64 {
        let all: Vec<usize> = (0..self.n_items()).collect();
        match self {
            Data::Analogy(_, v) => {
                v.iter()
                    .map(|s| crate::inference::accuracy(s, &all))
                    .sum::<f64>()
                    / v.len() as f64
            }
            Data::Similarity(_, v) => {
                v.iter().map(|s| spearman_at(s, &all)).sum::<f64>() / v.len() as f64
            }
        }
    }

    /// The seed mean (of self - other, when given) with its item-and-seed interval.
    fn estimate(&self, other: Option<&Data>, seed: u64) -> Estimate {
        let n = self.n_items();
        let accuracy = crate::inference::accuracy;
        let rho = |r: &RankedPairs, items: &[usize]| r.spearman_at(items);
        let interval = match (self, other) {
            (Data::Analogy(units, a), None) => {
                item_and_seed_interval(a, None, n, units.as_deref(), accuracy, RESAMPLES, seed)
            }
            (Data::Analogy(units, a), Some(Data::Analogy(_, b))) => {
                item_and_seed_interval(a, Some(b), n, units.as_deref(), accuracy, RESAMPLES, seed)
            }
            (Data::Similarity(units, a), None) => {
                let a: Vec<RankedPairs> = a.iter().map(RankedPairs::new).collect();
                item_and_seed_interval(&a, None, n, units.as_deref(), rho, RESAMPLES, seed)
            }
            (Data::Similarity(units, a), Some(Data::Similarity(_, b))) => {
                let a: Vec<RankedPairs> = a.iter().map(RankedPairs::new).collect();
                let b: Vec<RankedPairs> = b.iter().map(RankedPairs::new).collect();
                item_and_seed_interval(&a, Some(&b), n, units.as_deref(), rho, RESAMPLES, seed)
            }
            _ => unreachable!("a difference between an analogy and a similarity score"),
        };
        // The t interval is symmetric and can leave the statistic's range (an accuracy near 0,
        // a rho near 1 on a few pairs); what lies outside is impossible, so it is cut off. An
        // undefined bound stays undefined (f64::max would turn NaN into the range's end).
        let (lo, hi) = match (self, other) {
            (Data::Analogy(..), None) => (0.0, 1.0),
            (Data::Similarity(..), None) | (Data::Analogy(..), Some(_)) => (-1.0, 1.0),
            (Data::Similarity(..), Some(_)) => (-2.0, 2.0),
        };
        let cut = |x: f64, f: fn(f64, f64) -> f64, end: f64| if x.is_nan() { x } else { f(x, end) };
        let interval = Interval {
            lo: cut(interval.lo, f64::max, lo),
            hi: cut(interval.hi, f64::min, hi),
            ..interval
        };
        Estimate { interval, items: n }
    }
}

/// A seed for one interval's resamples, from what it compares (so intervals do not share
/// draws by accident, and the same comparison always gets the same draws).
fn stream(a: &Rep, b: Option<&Rep>, benchmark: &str, half: Half) -> u64 {
    fnv1a(&format!("{a:?}|{b:?}|{benchmark}|{half:?}"))
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// mean(a) - mean(b) over independent seeds with a 95% Welch t interval (NaN bounds with fewer
/// than 2 seeds a side). For quantities measured once per model with no items behind them.
pub fn seed_difference(a: &[f64], b: &[f64]) -> Interval {
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let se2 = va / na + vb / nb;
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let half = if se2 == 0.0 {
        0.0
    } else {
        t975(df) * se2.sqrt()
    };
    Interval {
        estimate: ma - mb,
        lo: ma - mb - half,
        hi: ma - mb + half,
        level: LEVEL,
    }
}

/// mean(a - b) over the seeds both have, seed s of `a` against seed s of `b` (pairs of
/// (seed, value), in any order), with a 95% t interval at one degree of freedom fewer than
/// there are common seeds whose difference is finite; `None` under two. For quantities
/// measured once per model where seed s of two variants is matched by design (a transformer's
/// row order is a function of (seed, epoch), a masked LM's masks of (seed, step), and the
/// untrained model of seed s is the masked LM's initialisation): what a pair shares moves both
/// sides of a difference together, and the paired interval is the design's. Seeds are drawn
/// independently of one another, so the seeds' differences are independent draws and the
/// interval is valid whether or not the pair shares anything (a causal LM's targets come from
/// a stream of their own); where it shares little it is a little wider than Welch's, its t
/// having fewer degrees of freedom. Returns the interval and the number of seeds it is over.
pub fn paired_seed_difference(a: &[(u64, f64)], b: &[(u64, f64)]) -> Option<(Interval, usize)> {
    let diffs: Vec<f64> = a
        .iter()
        .filter_map(|&(s, x)| b.iter().find(|p| p.0 == s).map(|&(_, y)| x - y))
        .filter(|d| d.is_finite())
        .collect();
    (diffs.len() >= 2).then(|| (seed_mean(&diffs), diffs.len()))
}

/// mean(a) with a 95% t interval over seeds.
pub fn seed_mean(a: &[f64]) -> Interval {
    let (m, v) = mean_var(a);
    let half = t975(a.len() as f64 - 1.0) * (v / a.len() as f64).sqrt();
    Interval {
        estimate: m,
        lo: m - half,
        hi: m + half,
        level: LEVEL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gap_evidence(seeds: &[(u64, Vec<f64>, Vec<f64>)], model: &str, ev: &mut Evidence) {
        let some = |v: &Vec<f64>| Values::Cosines(v.iter().map(|&c| Some(c)).collect());
        for (s, c, m) in seeds {
            ev.insert(Rep::new(model, "embedding", None), COLLOCATED, *s, some(c));
            ev.insert(Rep::new(model, "embedding", None), MATCHED, *s, some(m));
        }
    }

    #[test]
    fn a_collocation_gap_whose_seeds_disagree_and_pairs_agree_has_the_t_interval_over_seeds() {
        // Every pair of a seed has the same cosine: resampling pairs moves nothing, and the
        // interval is the t interval of the gaps 0.3, 0.4, 0.5 (sd 0.1, t(2) = 4.303).
        let mut ev = Evidence::new(&[], &[]);
        let seeds: Vec<(u64, Vec<f64>, Vec<f64>)> = [(1, 0.4), (2, 0.5), (3, 0.6)]
            .iter()
            .map(|&(s, c)| (s, vec![c; 50], vec![0.1; 40]))
            .collect();
        gap_evidence(&seeds, "m", &mut ev);
        let e = ev
            .collocation_gap(&Rep::new("m", "embedding", None), None)
            .unwrap();
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!((e.interval.estimate - 0.4).abs() < 1e-12, "{e:?}");
        assert!((e.interval.hi - 0.4 - half).abs() < 1e-3, "{e:?}");
        assert_eq!(e.items, 90);
    }

    #[test]
    fn a_collocation_gap_of_one_seed_has_the_two_sample_standard_error_of_its_pairs() {
        // Collocated cosines alternate 1 and 0 (mean 0.5, variance 0.25 over 1,000 pairs),
        // matched ones are 0: the gap's standard error is sqrt(0.25 / 1000) = 0.0158, a 95%
        // half-width of 0.031 (normal: one seed has no seed term).
        let mut ev = Evidence::new(&[], &[]);
        let c: Vec<f64> = (0..1000).map(|i| (i % 2) as f64).collect();
        gap_evidence(&[(7, c, vec![0.0; 1000])], "m", &mut ev);
        let e = ev
            .collocation_gap(&Rep::new("m", "embedding", None), None)
            .unwrap();
        let half = e.interval.hi - e.interval.estimate;
        assert!((e.interval.estimate - 0.5).abs() < 1e-12);
        assert!((half - 1.96 * 0.0158).abs() < 0.004, "{e:?}");
    }

    #[test]
    fn a_paired_seed_difference_is_the_t_interval_of_the_seeds_differences() {
        // The seeds move both variants together (1, 2, 3 and 1.1, 2.3, 3.2, listed in another
        // order): the differences 0.1, 0.3, 0.2 have mean 0.2 and sd 0.1, so the interval is
        // 0.2 +- 4.303 * 0.1 / sqrt(3) = [-0.0484, 0.4484], where Welch's, blind to the shared
        // spread, is 0.2 +- 2.33 (df 3.99). Seed 9 of `a` has no partner and is left out.
        let a = [(1, 1.1), (2, 2.3), (3, 3.2), (9, 100.0)];
        let b = [(3, 3.0), (1, 1.0), (2, 2.0)];
        let (d, n) = paired_seed_difference(&a, &b).unwrap();
        assert_eq!(n, 3);
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!((d.estimate - 0.2).abs() < 1e-12, "{d:?}");
        assert!((d.lo - (0.2 - half)).abs() < 1e-4, "{d:?}");
        assert!((d.hi - (0.2 + half)).abs() < 1e-4, "{d:?}");
        let welch = seed_difference(&[1.1, 2.3, 3.2], &[1.0, 2.0, 3.0]);
        assert!(welch.hi - welch.estimate > 2.0, "{welch:?}");
        // One common seed: no interval.
        assert!(paired_seed_difference(&a[..1], &b).is_none());
        assert!(paired_seed_difference(&[(4, 1.0), (5, 2.0)], &b).is_none());
    }

    #[test]
    fn a_collocation_gap_resamples_its_pairs_through_their_words() {
        // 100 collocated pairs, 10 hub words in 10 pairs each (a partner word of its own in
        // each), every pair's cosine that of its hub: 1 for hubs 0-4, 0 for hubs 5-9; 100
        // matched pairs of cosine 0 on words of their own. Pairs as independent draws: the gap
        // 0.5 has the standard error sqrt(0.25 / 100) = 0.05. Through their words, the hubs
        // are 10 clusters of identical pairs: the dyadic-robust variance is (10 hubs x 10 x 10
        // pairs sharing a hub x 0.25) / 100^2 = 0.025, a standard error of 0.158 and a 95%
        // half-width of 1.96 x 0.158 = 0.310 (one seed: no seed term).
        let collocated: Vec<(String, String)> = (0..100)
            .map(|i| (format!("hub{}", i / 10), format!("leaf{i}")))
            .collect();
        let matched: Vec<(String, String)> = (0..100)
            .map(|i| (format!("m{i}"), format!("n{i}")))
            .collect();
        let c: Vec<f64> = (0..100).map(|i| f64::from(u8::from(i / 10 < 5))).collect();
        let mut ev = Evidence::new(&[], &[]);
        gap_evidence(&[(1, c, vec![0.0; 100])], "m", &mut ev);
        let rep = Rep::new("m", "embedding", None);
        let independent = ev.collocation_gap(&rep, None).unwrap().interval;
        assert!(!ev.has_collocation_words());
        ev.set_collocation_words(&collocated, &matched).unwrap();
        assert!(ev.has_collocation_words());
        let words = ev.collocation_gap(&rep, None).unwrap().interval;
        assert!((words.estimate - 0.5).abs() < 1e-12, "{words:?}");
        let (hi, hi_independent) = (words.hi - 0.5, independent.hi - 0.5);
        assert!(
            (hi_independent - 1.96 * 0.05).abs() < 0.01,
            "{independent:?}"
        );
        assert!((hi - 0.310).abs() < 0.03, "{words:?}");
        // A pair whose cosine is missing leaves with its words (pair 0, of hub 0): 49 of the
        // 99 collocated pairs at 1, 199 items, the hubs still clusters.
        let some = |v: &[f64]| Values::Cosines(v.iter().map(|&x| Some(x)).collect());
        let mut gappy = Evidence::new(&[], &[]);
        let mut c: Vec<Option<f64>> = (0..100)
            .map(|i| Some(f64::from(u8::from(i / 10 < 5))))
            .collect();
        c[0] = None;
        gappy.insert(rep.clone(), COLLOCATED, 1, Values::Cosines(c));
        gappy.insert(rep.clone(), MATCHED, 1, some(&[0.0; 100]));
        gappy.set_collocation_words(&collocated, &matched).unwrap();
        let e = gappy.collocation_gap(&rep, None).unwrap();
        assert_eq!(e.items, 199);
        assert!((e.interval.estimate - 49.0 / 99.0).abs() < 1e-12, "{e:?}");
        assert!(
            (e.interval.hi - e.interval.estimate - 0.31).abs() < 0.04,
            "{e:?}"
        );
        // A table inserted after the words were given, with another number of pairs: its gap
        // is read with its pairs as independent draws (the words are not its pairs'), exactly
        // as without words.
        let late = Rep::new("late", "embedding", None);
        let mut without = Evidence::new(&[], &[]);
        for e in [&mut ev, &mut without] {
            e.insert(late.clone(), COLLOCATED, 1, some(&[0.5; 120]));
            e.insert(
                late.clone(),
                MATCHED,
                1,
                some(&(0..100).map(|i| f64::from(i % 2)).collect::<Vec<_>>()),
            );
        }
        assert_eq!(
            ev.collocation_gap(&late, None).unwrap().interval,
            without.collocation_gap(&late, None).unwrap().interval
        );
        // Pairs that are not the kept ones' (another count) are refused, nothing changed.
        let mut other = Evidence::new(&[], &[]);
        gap_evidence(&[(1, vec![0.5; 99], vec![0.0; 100])], "m", &mut other);
        let e = other
            .set_collocation_words(&collocated, &matched)
            .unwrap_err();
        assert!(
            e.contains("kept 99 pairs") && e.contains("100 pairs were given"),
            "{e}"
        );
        assert!(!other.has_collocation_words());
    }

    #[test]
    fn a_collocation_gap_carries_both_groups_spread() {
        // Collocated cosines alternate 1 and 0 over 1,000 pairs (variance 0.25), matched ones
        // 0.5 and 0.1 over 500 (variance 0.04): the gap 0.5 - 0.3 = 0.2 has the standard error
        // sqrt(0.25 / 1000 + 0.04 / 500) = 0.01817, a 95% half-width of 0.0356 (one seed). An
        // interval that held the matched pairs fixed would be 0.0310 wide each side.
        let mut ev = Evidence::new(&[], &[]);
        let c: Vec<f64> = (0..1000).map(|i| (i % 2) as f64).collect();
        let m: Vec<f64> = (0..500).map(|i| [0.5, 0.1][i % 2]).collect();
        gap_evidence(&[(1, c, m)], "m", &mut ev);
        let e = ev
            .collocation_gap(&Rep::new("m", "embedding", None), None)
            .unwrap();
        assert!((e.interval.estimate - 0.2).abs() < 1e-12);
        let half = e.interval.hi - e.interval.estimate;
        assert!((half - 0.0356).abs() < 0.002, "{e:?}");
    }

    #[test]
    fn a_collocation_gap_difference_is_paired_by_pair_and_reads_the_common_seeds() {
        // b's collocated pairs are a's less 0.1, pair by pair; matched pairs equal: the
        // difference is 0.1 for every seed and every resample.
        let mut ev = Evidence::new(&[], &[]);
        let spread = |s: u64, shift: f64| -> Vec<f64> {
            (0..300)
                .map(|i| ((i * 37 + s as usize) % 100) as f64 / 100.0 - shift)
                .collect()
        };
        let m: Vec<f64> = (0..200).map(|i| (i % 7) as f64 / 10.0).collect();
        let a: Vec<_> = [1, 2]
            .iter()
            .map(|&s| (s, spread(s, 0.0), m.clone()))
            .collect();
        let b: Vec<_> = [1, 2]
            .iter()
            .map(|&s| (s, spread(s, 0.1), m.clone()))
            .collect();
        gap_evidence(&a, "a", &mut ev);
        gap_evidence(&b, "b", &mut ev);
        let (ra, rb) = (
            Rep::new("a", "embedding", None),
            Rep::new("b", "embedding", None),
        );
        let d = ev.collocation_gap(&ra, Some(&rb)).unwrap();
        assert!((d.interval.estimate - 0.1).abs() < 1e-9, "{d:?}");
        assert!(d.interval.hi - d.interval.lo < 1e-9, "{d:?}");
        // Another seed set: read on the seed both have (1), where c's collocated pairs are
        // a's plus 0.2 (its seed 3 far off: read by position against a's seed 2, it would
        // show); none in common: no difference.
        let c = [
            (1, spread(1, -0.2), m.clone()),
            (3, spread(3, 5.0), m.clone()),
        ];
        gap_evidence(&c, "c", &mut ev);
        let rc = Rep::new("c", "embedding", None);
        let d = ev.collocation_gap(&ra, Some(&rc)).unwrap();
        assert!((d.interval.estimate + 0.2).abs() < 1e-9, "{d:?}");
        assert!(d.interval.hi - d.interval.lo < 1e-9, "{d:?}");
        assert_eq!(ev.collocation_seeds(&ra, Some(&rc)), [1]);
        assert_eq!(ev.collocation_seeds(&ra, None), [1, 2]);
        let e = [(7, spread(7, 0.0), m.clone())];
        gap_evidence(&e, "e", &mut ev);
        assert!(ev
            .collocation_gap(&ra, Some(&Rep::new("e", "embedding", None)))
            .is_none());
        // A table without its matched pairs has no gap.
        ev.insert(
            Rep::new("d", "embedding", None),
            COLLOCATED,
            1,
            Values::Cosines(vec![Some(0.5)]),
        );
        assert!(ev
            .collocation_gap(&Rep::new("d", "embedding", None), None)
            .is_none());
    }

    #[test]
    fn a_difference_reads_the_seeds_both_were_trained_with() {
        // a: seed 1 answers all 100 questions, seeds 2 and 3 half; b: seeds 2 and 3, half.
        // On the seeds both have the difference is exactly 0 (seed 1 would make it positive),
        // and the scores it reports are of those seeds.
        let mut ev = Evidence::new(&[], &[]);
        let half: Vec<Option<bool>> = (0..100).map(|i| Some(i % 2 == 0)).collect();
        let (a, b) = (
            Rep::new("a", "embedding", None),
            Rep::new("b", "embedding", None),
        );
        ev.insert(a.clone(), "q", 1, Values::Outcomes(vec![Some(true); 100]));
        for s in [2, 3] {
            ev.insert(a.clone(), "q", s, Values::Outcomes(half.clone()));
            ev.insert(b.clone(), "q", s, Values::Outcomes(half.clone()));
        }
        let d = ev.difference(&a, &b, "q", Half::All).unwrap();
        assert_eq!(d.diff.estimate, 0.0);
        assert_eq!((d.diff.lo, d.diff.hi), (0.0, 0.0));
        assert!((d.a.interval.estimate - 0.5).abs() < 1e-12, "{d:?}");
        assert_eq!(d.mcnemar.len(), 2);
        assert_eq!((d.seeds.as_slice(), d.seeds_left_out), (&[2, 3][..], true));
        let same = ev.difference(&b, &b, "q", Half::All).unwrap();
        assert!(!same.seeds_left_out);
        // No seed in common: no difference.
        let c = Rep::new("c", "embedding", None);
        ev.insert(c.clone(), "q", 9, Values::Outcomes(half));
        assert!(ev.difference(&a, &c, "q", Half::All).is_none());
    }

    #[test]
    fn a_difference_change_is_the_contrast_of_four_tables_paired_by_seed_and_item() {
        // 100 questions. a1 answers the first 60, b1 the first 30, a0 the first 40, b0 the
        // first 30: (0.6 - 0.3) - (0.4 - 0.3) = 0.2. Per question the contrast is 1 on
        // questions 40-59 and 0 elsewhere, so with every seed alike the interval is the item
        // bootstrap's: 0.2 +- 1.96 sqrt(0.2 * 0.8 / 100) = 0.2 +- 0.078. Seed 4 of a0 alone
        // (no other table has it) is left out.
        let mut ev = Evidence::new(&[], &[]);
        let first = |k: usize| Values::Outcomes((0..100).map(|i| Some(i < k)).collect());
        let reps = ["a1", "b1", "a0", "b0"].map(|m| Rep::new(m, "embedding", None));
        for s in 1..=3 {
            for (r, k) in reps.iter().zip([60, 30, 40, 30]) {
                ev.insert(r.clone(), "q", s, first(k));
            }
        }
        ev.insert(reps[2].clone(), "q", 4, first(100));
        let c = ev
            .difference_change([&reps[0], &reps[1], &reps[2], &reps[3]], "q", Half::All)
            .unwrap();
        assert_eq!(c.seeds, vec![1, 2, 3]);
        assert!((c.change.interval.estimate - 0.2).abs() < 1e-12, "{c:?}");
        let half = c.change.interval.hi - c.change.interval.estimate;
        assert!((half - 0.078).abs() < 0.006, "{c:?}");
        // Seeds that disagree (b0 answers 30, 20 and 10 on seeds 1-3: contrasts 0.2, 0.1,
        // 0.0) carry their spread. By hand: the seed-mean contrast per question is 0 (0-9),
        // -1/3 (10-19), -2/3 (20-29), 0 (30-39), 1 (40-59), 0 (60-99): mean 0.1, item term
        // (0.25556 - 0.01) / 100 = 2.456e-3; seed term var(0.2, 0.1, 0) / 3 = 3.333e-3;
        // Satterthwaite df 5.789e-3^2 / (3.333e-3^2 / 2) = 6.03, t975 = 2.446; half-width
        // 2.446 * sqrt(5.789e-3) = 0.186.
        for (s, k) in [(1, 30), (2, 20), (3, 10)] {
            ev.insert(reps[3].clone(), "q", s, first(k));
        }
        let c = ev
            .difference_change([&reps[0], &reps[1], &reps[2], &reps[3]], "q", Half::All)
            .unwrap();
        assert!((c.change.interval.estimate - 0.1).abs() < 1e-12, "{c:?}");
        let half = c.change.interval.hi - c.change.interval.estimate;
        assert!((half - 0.186).abs() < 0.006, "{c:?}");
        // The four tables' items resample through their units as a score's do: on a
        // similarity set, the contrast's interval is item_and_seed_interval's over the words.
        let set = SimilaritySet {
            name: "S".into(),
            pairs: (0..40)
                .map(|i| {
                    (
                        format!("w{}", i % 8),
                        format!("w{}", 8 + i % 5),
                        (i % 7) as f64,
                    )
                })
                .collect(),
        };
        let mut sim = Evidence::new(&[], std::slice::from_ref(&set));
        let cos = |r: usize, s: u64| -> Vec<f64> {
            (0..40)
                .map(|i| ((i * (r + 3) + s as usize * 11) % 13) as f64 + (i % 7) as f64 * r as f64)
                .collect()
        };
        for (r, rep) in reps.iter().enumerate() {
            for s in 1..=3 {
                let v = Values::Cosines(cos(r, s).into_iter().map(Some).collect());
                sim.insert(rep.clone(), "S", s, v);
            }
        }
        let c = sim
            .difference_change([&reps[0], &reps[1], &reps[2], &reps[3]], "S", Half::All)
            .unwrap();
        let gold: Vec<f64> = set.pairs.iter().map(|p| p.2).collect();
        let seeds: Vec<[(Vec<f64>, Vec<f64>); 4]> = (1..=3)
            .map(|s| [0, 1, 2, 3].map(|r| (gold.clone(), cos(r, s))))
            .collect();
        let stat = |t: &[(Vec<f64>, Vec<f64>); 4], items: &[usize]| {
            let rho = |j: usize| spearman_at(&t[j], items);
            rho(0) - rho(1) - rho(2) + rho(3)
        };
        let seed = stream(&reps[0], Some(&reps[2]), "S", Half::All)
            ^ stream(&reps[1], Some(&reps[3]), "S", Half::All);
        let words = pair_words(&set);
        let want = item_and_seed_interval(&seeds, None, 40, Some(&words), stat, RESAMPLES, seed);
        assert_eq!(
            (
                c.change.interval.estimate,
                c.change.interval.lo,
                c.change.interval.hi
            ),
            (want.estimate, want.lo, want.hi)
        );
        // No seed shared by all four: no change.
        let lone = Rep::new("lone", "embedding", None);
        ev.insert(lone.clone(), "q", 9, first(50));
        assert!(ev
            .difference_change([&reps[0], &reps[1], &reps[2], &lone], "q", Half::All)
            .is_none());
    }

    #[test]
    fn similarity_pairs_resample_through_their_words() {
        // 12 words, every pair of them a pair of the set (66), "W0" and "w0" one word: each
        // word stands in 11 pairs. Words 0-5 are well represented and 6-11 not: a pair of two
        // good words gets its human score as cosine, any other pair an unrelated one, so
        // whether a pair agrees with the humans is a property of its words, and pairs sharing
        // a word agree or fail together. Every seed the same, so the items carry the interval. The score's interval is the item-and-seed interval
        // over the words (units [word(x), word(y)]), not over the pairs as if independent.
        let mut pairs = Vec::new();
        for p in 0..12 {
            for q in p + 1..12 {
                let x = if p == 0 && q % 2 == 0 {
                    "W0".to_string()
                } else {
                    format!("w{p}")
                };
                pairs.push((x, format!("w{q}"), ((p * 7 + q * 3) % 11) as f64));
            }
        }
        let set = SimilaritySet {
            name: "S".into(),
            pairs,
        };
        let units = pair_words(&set);
        assert_eq!(
            units.iter().flatten().max(),
            Some(&11),
            "12 words, case folded"
        );
        let cosines = |_: u64| -> Vec<f64> {
            (set.pairs.iter().zip(&units).enumerate())
                .map(|(i, ((_, _, g), u))| match u[0] < 6 && u[1] < 6 {
                    true => *g,
                    false => ((i * 37) % 11) as f64,
                })
                .collect()
        };
        let mut ev = Evidence::new(&[], std::slice::from_ref(&set));
        let rep = Rep::new("m", "embedding", None);
        for s in 1..=3 {
            ev.insert(
                rep.clone(),
                "S",
                s,
                Values::Cosines(cosines(s).into_iter().map(Some).collect()),
            );
        }
        let score = ev.score(&rep, "S", Half::All).unwrap().interval;
        let gold: Vec<f64> = set.pairs.iter().map(|p| p.2).collect();
        let data: Vec<(Vec<f64>, Vec<f64>)> = (1..=3).map(|s| (gold.clone(), cosines(s))).collect();
        let seed = stream(&rep, None, "S", Half::All);
        let by_words =
            item_and_seed_interval(&data, None, 66, Some(&units), spearman_at, RESAMPLES, seed);
        let by_pairs = item_and_seed_interval(&data, None, 66, None, spearman_at, RESAMPLES, seed);
        assert_eq!((score.lo, score.hi), (by_words.lo, by_words.hi));
        assert!(
            by_words.hi - by_words.lo > 1.2 * (by_pairs.hi - by_pairs.lo),
            "{by_words:?} {by_pairs:?}"
        );
    }

    /// Google's layout: every ordered combination of a section's pairs is a question, so each
    /// pair stands in many, and a later section repeats an earlier one's pairs (as capital-world
    /// repeats capital-common-countries). Split by pair, no pair (wherever it stands) has
    /// questions in both halves; about a quarter of the questions are dev, a quarter test, the
    /// rest (mixed) in neither; a score on a half reads only that half's questions.
    #[test]
    fn analogy_questions_are_split_by_word_pair_so_no_pair_is_on_both_sides() {
        let mut text = String::new();
        for s in 0..3 {
            // Section 2 repeats section 0's pairs (upper-cased: case is folded; the odd ones
            // reversed: the same two words) beside its own.
            let pairs: Vec<(String, String)> = (0..20)
                .map(|p| match (s, p) {
                    (2, p) if p < 10 && p % 2 == 0 => (format!("A0_{p}"), format!("B0_{p}")),
                    (2, p) if p < 10 => (format!("B0_{p}"), format!("A0_{p}")),
                    _ => (format!("a{s}_{p}"), format!("b{s}_{p}")),
                })
                .collect();
            text.push_str(&format!(": section{s}\n"));
            for (a, b) in &pairs {
                for (c, d) in &pairs {
                    if a != c {
                        text.push_str(&format!("{a} {b} {c} {d}\n"));
                    }
                }
            }
        }
        let set = AnalogySet::parse(&text, std::path::Path::new("g.txt"), "google".into()).unwrap();
        let halves = question_halves(&set);
        assert_eq!(halves.len(), 3 * 20 * 19);
        let mut side: HashMap<String, Half> = HashMap::new();
        for (section, q) in set
            .sections
            .iter()
            .flat_map(|s| s.questions.iter())
            .zip(&halves)
        {
            let [a, b, c, d] = section;
            if let Some(h) = q {
                for (x, y) in [(a, b), (c, d)] {
                    let (x, y) = pair_key(x, y);
                    let pair = format!("{x}:{y}");
                    assert_eq!(
                        *side.entry(pair.clone()).or_insert(*h),
                        *h,
                        "{pair} on both sides"
                    );
                }
            }
        }
        // The repeated pairs were seen in both sections and kept one side; resampling reads
        // them as one unit too.
        assert!(side.contains_key("a0_3:b0_3") && side.contains_key("a0_4:b0_4"));
        let units = question_pairs(&set);
        let distinct: std::collections::BTreeSet<usize> = units.iter().flatten().copied().collect();
        assert_eq!(distinct.len(), 50, "20 + 20 + 10 new pairs");
        let count = |h: Half| halves.iter().filter(|x| **x == Some(h)).count();
        let n = halves.len() as f64;
        for h in [Half::Dev, Half::Test] {
            let share = count(h) as f64 / n;
            assert!((0.12..0.40).contains(&share), "{h:?}: {share}");
        }
        let neither = halves.iter().filter(|x| x.is_none()).count() as f64 / n;
        assert!((0.35..0.65).contains(&neither), "mixed: {neither}");
        // The evidence reads the same split: a representation right on exactly the dev
        // questions scores 1 on dev, 0 on test, and its share of dev questions on all.
        let mut ev = Evidence::new(std::slice::from_ref(&set), &[]);
        let right: Vec<Option<bool>> = halves.iter().map(|h| Some(*h == Some(Half::Dev))).collect();
        let rep = Rep::new("m", "embedding", None);
        ev.insert(rep.clone(), "google", 1, Values::Outcomes(right));
        let dev = ev.score(&rep, "google", Half::Dev).unwrap();
        let test = ev.score(&rep, "google", Half::Test).unwrap();
        assert_eq!((dev.items, dev.interval.estimate), (count(Half::Dev), 1.0));
        assert_eq!(
            (test.items, test.interval.estimate),
            (count(Half::Test), 0.0)
        );
        let all = ev.score(&rep, "google", Half::All).unwrap();
        assert_eq!(all.items, halves.len());
        // Outcomes of another number of questions have no halves here (all items still count).
        let other = Rep::new("m", "other", None);
        ev.insert(
            other.clone(),
            "google",
            1,
            Values::Outcomes(vec![Some(true); 10]),
        );
        assert!(
            halves[..10].contains(&Some(Half::Test)),
            "the check is what refuses them"
        );
        assert!(ev.score(&other, "google", Half::Test).is_none());
        assert!(ev.score(&other, "google", Half::Dev).is_none());
        assert_eq!(ev.score(&other, "google", Half::All).unwrap().items, 10);
    }

    /// A pair's side comes from its words, not from where it first stands: the same questions
    /// with the sections in the other order get the same halves.
    #[test]
    fn a_pairs_side_does_not_depend_on_the_files_order() {
        let section = |s: usize| -> String {
            let mut t = format!(": section{s}\n");
            for p in 0..8 {
                for q in 0..8 {
                    if p != q {
                        t.push_str(&format!("x{s}_{p} y{s}_{p} x{s}_{q} y{s}_{q}\n"));
                    }
                }
            }
            t
        };
        let parse = |order: &[usize]| {
            let text: String = order.iter().map(|&s| section(s)).collect();
            AnalogySet::parse(&text, std::path::Path::new("g.txt"), "google".into()).unwrap()
        };
        let (forward, backward) = (parse(&[0, 1, 2]), parse(&[2, 1, 0]));
        let by_question = |set: &AnalogySet| -> HashMap<[String; 4], Option<Half>> {
            let questions = set
                .sections
                .iter()
                .flat_map(|s| s.questions.iter().cloned());
            questions.zip(question_halves(set)).collect()
        };
        let (f, b) = (by_question(&forward), by_question(&backward));
        assert_eq!(f.len(), 3 * 8 * 7);
        assert_eq!(f, b);
        // Not every question in one half: the test can tell orders apart.
        assert!(
            f.values().any(|h| *h == Some(Half::Dev)) && f.values().any(|h| *h == Some(Half::Test))
        );
    }

    #[test]
    fn an_undefined_interval_stays_undefined() {
        // One seed, one item: no resample spreads, no seed term: NaN, not the full range.
        let d = Data::Similarity(None, vec![(vec![1.0], vec![0.5])]).estimate(None, 1);
        assert!(d.interval.lo.is_nan() && d.interval.hi.is_nan(), "{d:?}");
    }

    #[test]
    fn an_interval_stays_within_what_the_statistic_can_be() {
        // 3 seeds answering 1, 0 and 2 of 200 questions: the t term alone would reach below 0.
        let seeds: Vec<Vec<bool>> = [1, 0, 2]
            .iter()
            .map(|&k| (0..200).map(|i| i < k).collect())
            .collect();
        let d = Data::Analogy(None, seeds).estimate(None, 5);
        assert!((d.interval.estimate - 0.005).abs() < 1e-12);
        assert_eq!(d.interval.lo, 0.0);
        assert!(d.interval.hi > 0.01 && d.interval.hi < 0.03, "{d:?}");
    }
}
