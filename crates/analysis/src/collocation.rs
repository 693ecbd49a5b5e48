//! Do words that occur together end up with similar vectors?
//!
//! Collocations are the word pairs with the highest pointwise mutual information among pairs
//! seen within `window` tokens of each other at least `min_count` times:
//!
//! PMI(a, b) = ln( c(a, b) · N / (c(a) · c(b)) ),   N = number of tokens, c(a, b) counted once
//! per co-occurrence within the window (unordered).
//!
//! Pairs that are one word in pieces or a fixed name are left out: a pair whose co-occurrences
//! are (95% or more) in one order and whose PMI is within ln 2 of its ceiling
//! ln(N / max(c(a), c(b))) — the rarer word comes with the other at least half the time — is
//! what the text8 preprocessing makes of "encyclopædia" (encyclop / dia), "françois" (fran /
//! ois) or "björn" (bj / rn), or a name such as "hong kong" or "osama bin laden" (one order,
//! not always adjacent): it measures tokenisation, not collocation. On the text8 slice (10,000
//! words, window 2, 20+ co-occurrences) this leaves out 554 of 19,232 pairs; "quantum mechanics"
//! or "super bowl", whose words are also used apart, stay. How many were left out is recorded.
//!
//! Each remaining pair (a, b) gets two contrasts:
//! * a frequency-matched control (a', b'): words of nearly the same frequency rank as a and b
//!   (the vocabulary is in frequency order) that never co-occur within the window;
//! * a shared-context pair (a, c): a word c that co-occurs with b but never with a, so a and c
//!   share a context without co-occurring (second-order similarity, what word2vec is known for),
//!   read against frequency-matched controls of its own (c is often a frequent word).
//!
//! The measure of a table is the mean cosine of each kind, and a z-score of collocated minus
//! matched (and shared-context minus matched) against a permutation null: the pooled cosines
//! re-split at random. Unlike a raw cosine gap, a z-score is comparable across tables whose
//! cosines spread differently (SGNS's cosines spread far wider than an untrained model's).
//! The older contrast, the same words re-paired at random (`shuffled`), is kept beside them.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

use crate::geometry::cosine;
use crate::inference::Interval;
use word2vec::WordVectors;

/// Collocated pairs and their controls, as word strings.
#[derive(Clone, Debug, PartialEq)]
pub struct CollocationPairs {
    pub pairs: Vec<(String, String)>,
    /// The same words re-paired at random.
    pub shuffled: Vec<(String, String)>,
    /// Frequency-matched pairs that never co-occur (one per collocated pair that found one).
    pub matched: Vec<(String, String)>,
    /// Pairs sharing a context word without co-occurring.
    pub shared_context: Vec<(String, String)>,
    /// Frequency-matched controls for the shared-context pairs (matched to their own words:
    /// the shared context word is often far more frequent than the collocated partner).
    pub shared_matched: Vec<(String, String)>,
    /// High-PMI pairs left out as pieces of one word or fixed names.
    pub excluded: usize,
}

/// Ranks either side searched for a frequency-matched control word.
const MATCH_RANKS: u32 = 10;

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
    // Co-occurrences in order (a before b within the window).
    let mut ordered: HashMap<(u32, u32), u32> = HashMap::new();
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
            *ordered.entry((a, b)).or_insert(0) += 1;
        }
    }
    let n = ids.len() as f64;
    let mut excluded = 0;
    let mut scored: Vec<(f64, u32, u32)> = Vec::new();
    for (&(a, b), &c) in &joint {
        if c < min_count {
            continue;
        }
        let (ca, cb) = (unigram[a as usize] as f64, unigram[b as usize] as f64);
        let pmi = (c as f64 * n / (ca * cb)).ln();
        let ceiling = (n / ca.max(cb)).ln();
        let in_order = ordered
            .get(&(a, b))
            .copied()
            .unwrap_or(0)
            .max(ordered.get(&(b, a)).copied().unwrap_or(0));
        // One fixed order, and the rarer word at least half the time with the other.
        if in_order as f64 >= 0.95 * c as f64 && pmi >= ceiling - std::f64::consts::LN_2 {
            excluded += 1;
            continue;
        }
        scored.push((pmi, a, b));
    }
    // Ties broken by ids so that the selection does not depend on the hash map's order.
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    scored.truncate(n_pairs);
    let pairs: Vec<(u32, u32)> = scored.iter().map(|&(_, a, b)| (a, b)).collect();
    let mut partners: Vec<u32> = pairs.iter().map(|p| p.1).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    partners.shuffle(&mut rng);
    let co_occur = |x: u32, y: u32| x == y || joint.contains_key(&(x.min(y), x.max(y)));
    // A word of nearly the same frequency rank as `w`, other than those in `avoid`.
    let near = |w: u32, rng: &mut rand::rngs::StdRng| -> u32 {
        let lo = w.saturating_sub(MATCH_RANKS);
        let hi = (w + MATCH_RANKS).min(top - 1);
        rng.random_range(lo..=hi)
    };
    // For each pair, one of nearly the same frequency ranks that never co-occurs.
    let mut matched_for = |ps: &[(u32, u32)]| -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for &(a, b) in ps {
            for _ in 0..50 {
                let (x, y) = (near(a, &mut rng), near(b, &mut rng));
                if x != a && y != b && !co_occur(x, y) {
                    out.push((x, y));
                    break;
                }
            }
        }
        out
    };
    let matched = matched_for(&pairs);
    // Words each word co-occurs with (at least `min_count` times), for the shared contexts.
    let mut neighbours: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    for (&(x, y), &c) in &joint {
        if c >= min_count {
            neighbours.entry(x).or_default().push((c, y));
            neighbours.entry(y).or_default().push((c, x));
        }
    }
    for list in neighbours.values_mut() {
        list.sort_by(|p, q| q.cmp(p));
    }
    let mut shared_context = Vec::new();
    for &(a, b) in &pairs {
        // The strongest co-occurrent of b that never meets a.
        if let Some(&(_, c)) = neighbours
            .get(&b)
            .and_then(|list| list.iter().find(|&&(_, c)| c != a && !co_occur(a, c)))
        {
            shared_context.push((a, c));
        }
    }
    let shared_matched = matched_for(&shared_context);
    let name = |i: u32| words[i as usize].clone();
    let names = |ps: &[(u32, u32)]| ps.iter().map(|&(a, b)| (name(a), name(b))).collect();
    CollocationPairs {
        pairs: names(&pairs),
        shuffled: pairs
            .iter()
            .zip(&partners)
            .map(|(&(a, _), &b)| (name(a), name(b)))
            .collect(),
        matched: names(&matched),
        shared_context: names(&shared_context),
        shared_matched: names(&shared_matched),
        excluded,
    }
}

/// A table's collocation measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollocationScore {
    /// Mean cosine of the collocated pairs.
    pub collocated: f64,
    /// Mean cosine of the same words re-paired at random.
    pub shuffled: f64,
    /// collocated - shuffled.
    pub gap: f64,
    /// Mean cosine of the frequency-matched pairs that never co-occur.
    pub matched: f64,
    /// Mean cosine of the pairs sharing a context without co-occurring.
    pub shared_context: f64,
    /// (collocated - matched) as a z-score against its permutation null.
    pub z_collocated: f64,
    /// Mean cosine of the shared-context pairs' own matched controls.
    pub shared_matched: f64,
    /// (shared_context - shared_matched) as a z-score against its permutation null.
    pub z_shared_context: f64,
    /// Collocated pairs both words of which are in the table.
    pub pairs: usize,
}

/// Permutations for the z-scores.
const Z_DRAWS: usize = 1000;

/// The cosine of each pair both of whose words are in the table (`None` where one is not).
fn each_pair_cosine(vectors: &WordVectors, ps: &[(String, String)]) -> Vec<Option<f64>> {
    let index = vectors.index();
    ps.iter()
        .map(|(a, b)| {
            let (i, j) = (index.get(a.as_str())?, index.get(b.as_str())?);
            Some(cosine(vectors.row(*i), vectors.row(*j)))
        })
        .collect()
}

/// The cosines of the pairs both of whose words are in the table.
fn pair_cosines(vectors: &WordVectors, ps: &[(String, String)]) -> Vec<f64> {
    each_pair_cosine(vectors, ps)
        .into_iter()
        .flatten()
        .collect()
}

/// Each collocated pair's cosine and each frequency-matched pair's, in the order of
/// `pairs.pairs` and `pairs.matched` (`None` where a word is not in the table): what is kept
/// per item, so that the gap's interval can carry the pairs as well as the seeds
/// ([`crate::evidence::Evidence::collocation_gap`]).
pub fn pair_cosine_items(
    vectors: &WordVectors,
    pairs: &CollocationPairs,
) -> (Vec<Option<f64>>, Vec<Option<f64>>) {
    (
        each_pair_cosine(vectors, &pairs.pairs),
        each_pair_cosine(vectors, &pairs.matched),
    )
}

pub fn collocation_score(vectors: &WordVectors, pairs: &CollocationPairs) -> CollocationScore {
    let cosines = |ps: &[(String, String)]| pair_cosines(vectors, ps);
    let mean = |xs: &[f64]| {
        if xs.is_empty() {
            f64::NAN
        } else {
            xs.iter().sum::<f64>() / xs.len() as f64
        }
    };
    let (collocated, shuffled) = (cosines(&pairs.pairs), cosines(&pairs.shuffled));
    let (matched, shared) = (cosines(&pairs.matched), cosines(&pairs.shared_context));
    let shared_matched = cosines(&pairs.shared_matched);
    CollocationScore {
        collocated: mean(&collocated),
        shuffled: mean(&shuffled),
        gap: mean(&collocated) - mean(&shuffled),
        matched: mean(&matched),
        shared_context: mean(&shared),
        shared_matched: mean(&shared_matched),
        z_collocated: permutation_z(&collocated, &matched, Z_DRAWS, 29),
        z_shared_context: permutation_z(&shared, &shared_matched, Z_DRAWS, 31),
        pairs: collocated.len(),
    }
}

/// The effect sizes of a table's collocation measures: mean cosine differences with 95%
/// normal intervals over the pairs, resampled through their words ([`collocation_gaps`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollocationGaps {
    /// Collocated minus frequency-matched pairs' mean cosine.
    pub collocated_minus_matched: Interval,
    /// Shared-context minus their own matched pairs' mean cosine.
    pub shared_minus_matched: Interval,
    /// Collocated and shared-context pairs both of whose words are in the table.
    pub collocated_pairs: usize,
    pub shared_pairs: usize,
}

/// [`CollocationGaps`] of one table, each gap's 95% interval over `resamples` draws of the
/// pairs through their words ([`crate::inference::item_and_seed_interval`] with one table, so
/// no seed term): a frequent word stands in many collocated pairs, which then co-vary, so the
/// pairs are not independent draws. A group and its matched controls are resampled from one
/// pool of words (a word can stand in both; the groups' sizes vary between draws, more so where
/// a few words stand in many pairs), as
/// [`crate::evidence::Evidence::collocation_gap`] resamples the study's kept cosines. How far
/// another sample of pairs from the same text could move the gap, for one model.
pub fn collocation_gaps(
    vectors: &WordVectors,
    pairs: &CollocationPairs,
    resamples: usize,
    seed: u64,
) -> CollocationGaps {
    let gap = |group: &[(String, String)], controls: &[(String, String)], seed: u64| {
        // The pairs both of whose words are in the table, the group's first.
        let (mut cosines, mut words, mut n_group) = (Vec::new(), Vec::new(), 0);
        for (g, ps) in [group, controls].into_iter().enumerate() {
            for (p, c) in ps.iter().zip(each_pair_cosine(vectors, ps)) {
                if let Some(c) = c {
                    cosines.push(c);
                    words.push((p.0.as_str(), p.1.as_str()));
                    n_group += usize::from(g == 0);
                }
            }
        }
        if n_group == 0 || n_group == cosines.len() {
            return Interval {
                estimate: f64::NAN,
                lo: f64::NAN,
                hi: f64::NAN,
                level: 0.95,
            };
        }
        let units = crate::inference::word_units(words);
        let i = crate::inference::item_and_seed_interval(
            &[cosines],
            None,
            units.len(),
            Some(&units),
            |x: &Vec<f64>, items| group_gap(x, items, n_group),
            resamples,
            seed,
        );
        // A gap lies in [-2, 2]; an undefined bound stays so (clamp keeps NaN).
        Interval {
            lo: i.lo.clamp(-2.0, 2.0),
            hi: i.hi.clamp(-2.0, 2.0),
            ..i
        }
    };
    CollocationGaps {
        collocated_minus_matched: gap(&pairs.pairs, &pairs.matched, seed),
        shared_minus_matched: gap(&pairs.shared_context, &pairs.shared_matched, seed ^ 1),
        collocated_pairs: pair_cosines(vectors, &pairs.pairs).len(),
        shared_pairs: pair_cosines(vectors, &pairs.shared_context).len(),
    }
}

/// The mean of `cosines` at the drawn `items` below `n_group` (a group of pairs) minus the
/// mean at those from `n_group` on (their controls); NaN where a side drew nothing.
pub fn group_gap(cosines: &[f64], items: &[usize], n_group: usize) -> f64 {
    let (mut sum, mut n) = ([0.0; 2], [0usize; 2]);
    for &i in items {
        let g = usize::from(i >= n_group);
        sum[g] += cosines[i];
        n[g] += 1;
    }
    if n[0] == 0 || n[1] == 0 {
        return f64::NAN;
    }
    sum[0] / n[0] as f64 - sum[1] / n[1] as f64
}

/// The difference of means of `a` and `b` as a z-score against the permutation null: the pooled
/// values re-split at random into groups of the same sizes, `draws` times. NaN when either group
/// is empty or the pooled values do not vary.
pub fn permutation_z(a: &[f64], b: &[f64], draws: usize, seed: u64) -> f64 {
    if a.is_empty() || b.is_empty() {
        return f64::NAN;
    }
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let observed = mean(a) - mean(b);
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut rng = crate::inference::SplitMix64::new(seed);
    let null: Vec<f64> = (0..draws)
        .map(|_| {
            crate::inference::shuffle(&mut pooled, &mut rng);
            mean(&pooled[..a.len()]) - mean(&pooled[a.len()..])
        })
        .collect();
    let m = mean(&null);
    let sd = (null.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (draws.max(2) - 1) as f64).sqrt();
    if sd == 0.0 {
        f64::NAN
    } else {
        (observed - m) / sd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("w{i}")).collect()
    }

    #[test]
    fn pieces_of_one_word_are_left_out_and_a_real_collocation_tops_the_list() {
        // w0 w1 always adjacent in that order (a word the preprocessing split); w2 and w3 always
        // within two tokens of each other, in both orders, never adjacent; 20 filler words,
        // two of them closing each sequence so that no pair forms across sequences.
        let mut s = 0x9E3779B97F4A7C15u64;
        let mut filler = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            4 + (s % 20) as u32
        };
        let mut ids = Vec::new();
        for i in 0..400u32 {
            let f = filler();
            if i % 2 == 0 {
                ids.extend([0, 1, 2, f, 3]);
            } else {
                ids.extend([0, 1, 3, f, 2]);
            }
            ids.extend([filler(), filler()]);
        }
        // Pairs seen at least 100 times: only the planted ones and their neighbours qualify.
        let p = collocation_pairs(&ids, &words(24), 24, 2, 100, 1, 7);
        // By hand, N = 2800: PMI(w0, w1) = ln(400 * 2800 / 400^2) = ln 7, its ceiling, all
        // adjacent in one order: left out. PMI(w2, w3) = ln 7 too, but in both orders and never
        // adjacent: kept, and first (w0-w2, w0-w3 meet 200 times: ln 3.5).
        assert_eq!(p.pairs, vec![("w2".to_string(), "w3".to_string())]);
        assert!(p.excluded >= 1, "{p:?}");
        let all = collocation_pairs(&ids, &words(24), 24, 2, 100, 1000, 7);
        assert!(!all.pairs.contains(&("w0".into(), "w1".into())));
    }

    #[test]
    fn controls_are_frequency_matched_non_cooccurring_and_shared_context_pairs_never_meet() {
        // 300 words; x=w0 and y=w1 each meet b=w2 (in both orders) but never each other; three
        // fillers from 297 words close each sequence, so most filler pairs never meet (as in
        // real text, where most word pairs never co-occur).
        let mut ids: Vec<u32> = Vec::new();
        let mut s = 0x2545F4914F6CDD1Du64;
        let mut next = |n: u64| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s % n
        };
        for i in 0..3000 {
            let (a, b) = match i % 4 {
                0 => (0, 2),
                1 => (2, 0),
                2 => (1, 2),
                _ => (2, 1),
            };
            ids.extend([a, b]);
            ids.extend([
                3 + next(297) as u32,
                3 + next(297) as u32,
                3 + next(297) as u32,
            ]);
        }
        let w = words(300);
        let p = collocation_pairs(&ids, &w, 300, 2, 5, 20, 3);
        let id = |s: &str| s[1..].parse::<u32>().unwrap();
        let meet = |a: u32, b: u32| {
            ids.windows(3).any(|v| {
                (v[0] == a && (v[1] == b || v[2] == b)) || (v[0] == b && (v[1] == a || v[2] == a))
            })
        };
        assert!(p.matched.len() * 2 >= p.pairs.len(), "{p:?}");
        for (x, y) in &p.matched {
            assert!(!meet(id(x), id(y)), "{x} {y} co-occur");
            assert!(p
                .pairs
                .iter()
                .any(|(a, b)| id(a).abs_diff(id(x)) <= MATCH_RANKS
                    && id(b).abs_diff(id(y)) <= MATCH_RANKS));
        }
        // (w0, w2) and (w1, w2) are top collocations; their shared-context partner never meets w0 or w1.
        assert!(
            p.shared_context.contains(&("w0".into(), "w1".into()))
                || p.shared_context.contains(&("w1".into(), "w0".into())),
            "{:?}",
            p.shared_context
        );
        for (a, c) in &p.shared_context {
            assert!(!meet(id(a), id(c)), "{a} {c} co-occur");
        }
        for (x, y) in &p.shared_matched {
            assert!(!meet(id(x), id(y)), "{x} {y} co-occur");
            assert!(p
                .shared_context
                .iter()
                .any(|(a, c)| id(a).abs_diff(id(x)) <= MATCH_RANKS
                    && id(c).abs_diff(id(y)) <= MATCH_RANKS));
        }
    }

    #[test]
    fn the_z_score_separates_shifted_groups_and_not_identical_ones() {
        let noise = |k: usize, shift: f64| -> Vec<f64> {
            (0..k)
                .map(|i| shift + ((i * 37 % 101) as f64 / 101.0 - 0.5) * 0.2)
                .collect()
        };
        let z = permutation_z(&noise(50, 0.3), &noise(50, 0.0), 2000, 1);
        assert!(z > 8.0, "{z}");
        let z = permutation_z(&noise(50, 0.0), &noise(50, 0.0), 2000, 1);
        assert!(z.abs() < 1.0, "{z}");
        assert!(permutation_z(&[], &[1.0], 10, 1).is_nan());
    }

    #[test]
    fn score_is_collocated_minus_shuffled_cosine() {
        let pairs = CollocationPairs {
            pairs: vec![("a".into(), "b".into()), ("c".into(), "d".into())],
            shuffled: vec![("a".into(), "d".into()), ("c".into(), "b".into())],
            matched: vec![("a".into(), "c".into())],
            shared_context: vec![],
            shared_matched: vec![],
            excluded: 0,
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

    #[test]
    fn a_gap_resamples_pairs_through_their_words() {
        // Twenty hub words, each in four collocated pairs at its own cosine 0.05 + 0.045 h
        // (h = 0..19, mean 0.4775); fifty matched pairs of distinct words at cosine 0. What
        // moves the gap is which hubs are drawn: through the words its variance is the hubs'
        // (the dyadic-robust sum over hubs of (4 d_h)^2 / 80^2 = sum_h d_h^2 / 400, with d_h a
        // hub's level minus 0.4775 and sum_h d_h^2 = 0.045^2 * 665 = 1.3466: 0.003367, a 95% half-width of
        // 1.96 * 0.0580 = 0.114). Without the two-unit correction, (16 + 2 * 4) / 16 times
        // that variance (0.139); as eighty independent pairs, 4 * 1.3466 / 80^2 (0.057).
        let (mut words, mut data, mut pairs, mut matched) = (vec![], vec![], vec![], vec![]);
        let mut push = |name: String, theta: f64| {
            words.push(name);
            data.extend([theta.cos() as f32, theta.sin() as f32]);
        };
        for h in 0..20 {
            let hub = format!("h{h}");
            push(hub.clone(), 0.0);
            for k in 0..4 {
                let x = format!("x{h}_{k}");
                push(x.clone(), (0.05 + 0.045 * h as f64).acos());
                pairs.push((hub.clone(), x));
            }
        }
        for k in 0..50 {
            let (a, b) = (format!("m{k}a"), format!("m{k}b"));
            push(a.clone(), 0.0);
            push(b.clone(), std::f64::consts::FRAC_PI_2);
            matched.push((a, b));
        }
        let v = WordVectors::new(words, 2, data);
        let pairs = CollocationPairs {
            pairs,
            shuffled: vec![],
            matched,
            shared_context: vec![],
            shared_matched: vec![],
            excluded: 0,
        };
        let c = collocation_gaps(&v, &pairs, 4000, 3).collocated_minus_matched;
        assert!((c.estimate - 0.4775).abs() < 1e-6, "{c:?}");
        assert!(((c.hi - c.lo) / 2.0 - 0.114).abs() < 0.008, "{c:?}");
        // One resample gives no variance: the interval is undefined, not [-2, 2].
        let one = collocation_gaps(&v, &pairs, 1, 3).collocated_minus_matched;
        assert!(
            one.estimate == c.estimate && one.lo.is_nan() && one.hi.is_nan(),
            "{one:?}"
        );
    }

    #[test]
    fn gaps_have_the_known_spread_of_their_pairs() {
        // Words w0..w199 in 2-D: w_i at angle theta_i, so cos(w_i, w_j) = cos(theta_i - theta_j).
        // Collocated pairs (w_2k, w_2k+1) at cosine 1 or 0 (alternately), matched pairs at 0.7
        // or 0.1; shared-context pairs all at cosine 0.5 against 0.5.
        let mut words = Vec::new();
        let mut data = Vec::new();
        let mut push = |name: String, theta: f64| {
            words.push(name);
            data.extend([theta.cos() as f32, theta.sin() as f32]);
        };
        let (mut pairs, mut matched) = (Vec::new(), Vec::new());
        for k in 0..50 {
            let (a, b) = (format!("c{k}a"), format!("c{k}b"));
            push(a.clone(), 0.0);
            push(
                b.clone(),
                if k % 2 == 0 {
                    0.0
                } else {
                    std::f64::consts::FRAC_PI_2
                },
            );
            pairs.push((a, b));
            let (a, b) = (format!("m{k}a"), format!("m{k}b"));
            push(a.clone(), 0.0);
            push(b.clone(), if k % 2 == 0 { 0.7f64 } else { 0.1 }.acos());
            matched.push((a, b));
        }
        push("s".into(), 0.0);
        push("t".into(), 0.5f64.acos());
        let st = ("s".to_string(), "t".to_string());
        let v = WordVectors::new(words, 2, data);
        let pairs = CollocationPairs {
            pairs,
            shuffled: vec![],
            matched,
            shared_context: vec![st.clone(); 10],
            shared_matched: vec![st; 10],
            excluded: 0,
        };
        let g = collocation_gaps(&v, &pairs, 4000, 9);
        // 0.5 - 0.4, both groups resampled: standard error sqrt(0.5^2 + 0.3^2) / sqrt(50), a
        // 95% half-width of about 0.162 (0.139 if the matched pairs were held fixed).
        let c = g.collocated_minus_matched;
        assert!((c.estimate - 0.1).abs() < 1e-6, "{g:?}");
        assert!(((c.hi - c.lo) / 2.0 - 0.162).abs() < 0.01, "{g:?}");
        let s = g.shared_minus_matched;
        assert!(
            s.estimate.abs() < 1e-6 && s.lo.abs() < 1e-6 && s.hi.abs() < 1e-6,
            "{g:?}"
        );
        assert_eq!((g.collocated_pairs, g.shared_pairs), (50, 10));
        // The cosines kept per pair, in order, an out-of-table word as None.
        let mut with_oov = pairs.clone();
        with_oov.matched.push(("m0a".into(), "nowhere".into()));
        let (c, m) = pair_cosine_items(&v, &with_oov);
        assert_eq!((c.len(), m.len()), (50, 51));
        assert!((c[0].unwrap() - 1.0).abs() < 1e-6 && c[1].unwrap().abs() < 1e-6);
        assert!((m[0].unwrap() - 0.7).abs() < 1e-6 && (m[1].unwrap() - 0.1).abs() < 1e-6);
        assert_eq!(m[50], None);
        // No controls: no gap.
        let none = CollocationPairs {
            matched: vec![],
            ..pairs
        };
        assert!(collocation_gaps(&v, &none, 10, 1)
            .collocated_minus_matched
            .estimate
            .is_nan());
    }
}
