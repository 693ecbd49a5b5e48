//! The answers measured once per seed, along the training budget: the collocation gap (the
//! snapshots keep its pairs' cosines only as a mean), held-out loss (the Q/K/V and frozen-input
//! answers), contextuality at the last layer, and the CKA of queries and keys on real tokens.
//! Read from the snapshots' tidy rows (`dynamics/dynamics.csv`, written by `--exp dynamics`);
//! [`super::budget`] does the same for the answers with items behind them.
//!
//! No items stand behind these, so every interval is over seeds: a curve's point is the seed
//! mean with a t interval, its change over the second half of the budget (the last point every
//! seed reached minus the first at or past half its tokens) is the mean of the seeds' changes
//! with a t interval, and a difference between two models pairs seed s of one with seed s of
//! the other (seed s of every transformer variant reads the same batches and masks:
//! [`analysis::evidence::paired_seed_difference`]), at every point both reached, with the
//! change of that difference over the second half paired the same way. Word2vec's points are
//! runs of their own at each snapshot's token count, its learning rate decaying to 0 over each.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use analysis::evidence::{paired_seed_difference, seed_mean};
use analysis::inference::Interval;

use super::budget::{moved, tokens, BudgetRow};
use super::comparisons::side_of_zero;
use super::study::DynamicsRow;

/// One snapshot of one seed: (representation, layer, benchmark, metric) -> value.
type Point = BTreeMap<(String, Option<usize>, String, String), f64>;

/// A quantity read off one snapshot.
pub struct Measure {
    /// What the report calls it (also `budget.csv`'s `benchmark` column for its rows).
    pub name: &'static str,
    /// The models whose curves the report shows.
    pub models: &'static [&'static str],
    read: fn(&Point) -> Option<f64>,
}

fn get(p: &Point, rep: &str, layer: Option<usize>, bench: &str, metric: &str) -> Option<f64> {
    p.get(&(rep.into(), layer, bench.into(), metric.into()))
        .copied()
}

/// The deepest layer a snapshot read `metric` of `bench` at.
fn last_layer(p: &Point, bench: &str, metric: &str) -> Option<usize> {
    p.keys()
        .filter(|(r, _, b, m)| r == "contextual" && b == bench && m == metric)
        .filter_map(|k| k.1)
        .max()
}

fn collocation_gap(p: &Point) -> Option<f64> {
    // A transformer's embedding matrix, or word2vec's vectors.
    ["embedding", "static"].iter().find_map(|rep| {
        Some(
            get(p, rep, None, "collocation", "collocated_cosine")?
                - get(p, rep, None, "collocation", "matched_cosine")?,
        )
    })
}

fn heldout_loss(p: &Point) -> Option<f64> {
    get(p, "training", None, "training", "heldout_loss")
}

fn contextual_at_last(p: &Point, metric: &str) -> Option<f64> {
    let l = last_layer(p, "contextuality", metric)?;
    get(p, "contextual", Some(l), "contextuality", metric)
}

fn intra_sentence(p: &Point) -> Option<f64> {
    contextual_at_last(p, "intra_sentence_excess")
}

fn self_similarity(p: &Point) -> Option<f64> {
    contextual_at_last(p, "self_similarity_adjusted")
}

/// The mean over layers of CKA(queries, keys) minus its permutation null.
fn qk_activations(p: &Point) -> Option<f64> {
    let layers: BTreeSet<usize> = p
        .keys()
        .filter(|(r, _, b, m)| r == "attention-activations" && b == "all-heads" && m == "cka_q_k")
        .filter_map(|k| k.1)
        .collect();
    if layers.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    for &l in &layers {
        let at = |m| get(p, "attention-activations", Some(l), "all-heads", m);
        sum += at("cka_q_k")? - at("cka_q_k_null")?;
    }
    Some(sum / layers.len() as f64)
}

const MLM: &str = "transformer-mlm";
const MLM_UNTIED: &str = "transformer-mlm-untied-head";
const NO_ATTENTION: &str = "transformer-mlm-no-attention";
const NO_ATTENTION_UNTIED: &str = "transformer-mlm-no-attention-untied-head";
const CLM: &str = "transformer-clm-matched";
const CLM_UNTIED: &str = "transformer-clm-matched-untied-head";
const FROZEN: &str = "transformer-mlm-frozen-embedding-untied-head";
const SHARED_QK: &str = "transformer-mlm-shared-qk";
const SHARED_QKV: &str = "transformer-mlm-shared-qkv";

pub const MEASURES: [Measure; 5] = [
    Measure {
        name: "collocation gap (collocated - matched pairs' mean cosine, embedding matrix or word2vec's vectors)",
        models: &["word2vec-sgns", MLM, NO_ATTENTION, CLM, MLM_UNTIED, NO_ATTENTION_UNTIED, CLM_UNTIED],
        read: collocation_gap,
    },
    Measure {
        name: "held-out loss (nats)",
        models: &[MLM, SHARED_QK, SHARED_QKV, MLM_UNTIED, FROZEN],
        read: heldout_loss,
    },
    Measure {
        name: "intra-sentence similarity - null at the last layer (raw residual stream, text8 windows)",
        models: &[MLM, NO_ATTENTION, MLM_UNTIED, NO_ATTENTION_UNTIED],
        read: intra_sentence,
    },
    Measure {
        name: "self-similarity - anisotropy at the last layer (raw residual stream, text8 windows)",
        models: &[MLM, MLM_UNTIED],
        read: self_similarity,
    },
    Measure {
        name: "CKA(queries, keys) on real tokens - its permutation null, mean over layers",
        models: &[MLM, MLM_UNTIED],
        read: qk_activations,
    },
];

/// The comparisons the answers make: (measure index, a, b, what a - b answers).
pub const DIFFERENCES: [(usize, &str, &str, &str); 9] = [
    (
        0,
        MLM,
        NO_ATTENTION,
        "does self-attention make collocated words similar? (tied)",
    ),
    (
        0,
        MLM_UNTIED,
        NO_ATTENTION_UNTIED,
        "does self-attention make collocated words similar? (untied)",
    ),
    (0, MLM, CLM, "does the objective? (tied)"),
    (
        0,
        MLM_UNTIED,
        CLM_UNTIED,
        "does the objective? (untied input embeddings)",
    ),
    (1, SHARED_QK, MLM, "must W_Q and W_K differ?"),
    (
        1,
        SHARED_QKV,
        SHARED_QK,
        "must W_V differ from a shared W_Q = W_K?",
    ),
    (
        1,
        FROZEN,
        MLM_UNTIED,
        "would frozen random input embeddings do?",
    ),
    (
        2,
        MLM,
        NO_ATTENTION,
        "does attention contextualise beyond averaging? (tied)",
    ),
    (
        2,
        MLM_UNTIED,
        NO_ATTENTION_UNTIED,
        "does attention contextualise beyond averaging? (untied)",
    ),
];

/// measure index -> model -> tokens seen -> seed -> value.
type Curves = BTreeMap<usize, BTreeMap<String, BTreeMap<u64, BTreeMap<u64, f64>>>>;

fn curves(rows: &[DynamicsRow]) -> Curves {
    let mut points: BTreeMap<(String, u64, u64), Point> = BTreeMap::new();
    for r in rows {
        let key = (r.model.clone(), r.tokens_seen, r.seed.unwrap_or(0));
        points.entry(key).or_default().insert(
            (
                r.representation.clone(),
                r.layer,
                r.benchmark.clone(),
                r.metric.clone(),
            ),
            r.value,
        );
    }
    let mut out = Curves::new();
    for ((model, t, seed), p) in &points {
        for (i, m) in MEASURES.iter().enumerate() {
            if let Some(v) = (m.read)(p).filter(|v| v.is_finite()) {
                out.entry(i)
                    .or_default()
                    .entry(model.clone())
                    .or_default()
                    .entry(*t)
                    .or_default()
                    .insert(*seed, v);
            }
        }
    }
    out
}

/// The points every seed of a curve reached (a run the plateau rule stopped early has fewer).
fn full_points(curve: &BTreeMap<u64, BTreeMap<u64, f64>>) -> Vec<u64> {
    let seeds: BTreeSet<u64> = curve.values().flat_map(|s| s.keys().copied()).collect();
    curve
        .iter()
        .filter(|(_, s)| s.keys().copied().collect::<BTreeSet<u64>>() == seeds)
        .map(|(t, _)| *t)
        .collect()
}

/// The first point at or past half of the last one, before it.
fn half_point(points: &[u64]) -> Option<(u64, u64)> {
    let &last = points.last()?;
    let half = points
        .iter()
        .copied()
        .find(|&t| 2 * t >= last && t < last)?;
    Some((half, last))
}

fn pairs(x: &BTreeMap<u64, f64>) -> Vec<(u64, f64)> {
    x.iter().map(|(s, v)| (*s, *v)).collect()
}

fn row(
    measure: &Measure,
    model: &str,
    other: &str,
    quantity: &str,
    (from, to): (u64, u64),
    iv: &Interval,
    seeds: usize,
) -> BudgetRow {
    BudgetRow {
        model: model.into(),
        representation: String::new(),
        benchmark: measure.name.into(),
        quantity: quantity.into(),
        tokens_seen: to,
        from_tokens: from,
        value: iv.estimate,
        lo: iv.lo,
        hi: iv.hi,
        seeds,
        items: 0,
        other_model: other.into(),
        other_representation: String::new(),
    }
}

/// Each measure's curve for the models it names, its change over the second half, and the
/// [`DIFFERENCES`] at every point both models reached with their change, as [`BudgetRow`]s
/// (`items` 0: no items behind them). A curve of fewer than two seeds gets no row.
pub fn rows(dynamics: &[DynamicsRow]) -> Vec<BudgetRow> {
    let all = curves(dynamics);
    let mut out = Vec::new();
    for (i, measure) in MEASURES.iter().enumerate() {
        let Some(by_model) = all.get(&i) else {
            continue;
        };
        for &model in measure.models {
            let Some(curve) = by_model.get(model) else {
                continue;
            };
            let points = full_points(curve);
            let n = curve.values().map(|s| s.len()).max().unwrap_or(0);
            if n < 2 {
                continue;
            }
            for &t in &points {
                let values: Vec<f64> = curve[&t].values().copied().collect();
                out.push(row(
                    measure,
                    model,
                    "",
                    "score",
                    (t, t),
                    &seed_mean(&values),
                    n,
                ));
            }
            if let Some((half, last)) = half_point(&points) {
                if let Some((d, k)) =
                    paired_seed_difference(&pairs(&curve[&last]), &pairs(&curve[&half]))
                {
                    out.push(row(measure, model, "", "change", (half, last), &d, k));
                }
            }
        }
    }
    for (i, a, b, _) in DIFFERENCES {
        let measure = &MEASURES[i];
        let (Some(ca), Some(cb)) = (
            all.get(&i).and_then(|m| m.get(a)),
            all.get(&i).and_then(|m| m.get(b)),
        ) else {
            continue;
        };
        let pb = full_points(cb);
        let both: Vec<u64> = full_points(ca)
            .into_iter()
            .filter(|t| pb.contains(t))
            .collect();
        // seed -> a - b at point t.
        let diff_at = |t: u64| -> Vec<(u64, f64)> {
            ca[&t]
                .iter()
                .filter_map(|(s, x)| Some((*s, x - cb[&t].get(s)?)))
                .collect()
        };
        for &t in &both {
            if let Some((d, k)) = paired_seed_difference(&pairs(&ca[&t]), &pairs(&cb[&t])) {
                out.push(row(measure, a, b, "difference", (t, t), &d, k));
            }
        }
        if let Some((half, last)) = half_point(&both) {
            if let Some((d, k)) = paired_seed_difference(&diff_at(last), &diff_at(half)) {
                out.push(row(measure, a, b, "difference-change", (half, last), &d, k));
            }
        }
    }
    out
}

/// `<dir>/dynamics.csv`'s rows, where `--exp dynamics` has written it.
pub fn read(dir: &Path) -> anyhow::Result<Option<Vec<DynamicsRow>>> {
    let path = dir.join("dynamics.csv");
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(crate::output::read_csv(&path)?))
}

/// The report's part for these rows, under [`super::budget::section`]'s heading.
pub fn section(rows: &[BudgetRow]) -> String {
    let mut w = String::new();
    if rows.is_empty() {
        return w;
    }
    let _ = writeln!(w, "**The answers measured once per seed**, from the snapshots' rows (`dynamics/dynamics.csv`): seed mean [95% t interval over seeds] at every snapshot every seed reached, and the last such point minus the first at or past half its tokens, the seeds' own changes with a t interval; then the differences between models the answers rest on, seed s against seed s (seed s of every transformer variant reads the same batches and masks), at every point both reached, and how each difference moved over the second half of the budget, paired the same way. No items stand behind these: the intervals carry the seeds, not the sampling of pairs, tokens or held-out text.\n");
    let fmt = |r: &BudgetRow| format!("{:.3} [{:.3}, {:.3}]", r.value, r.lo, r.hi);
    for (i, measure) in MEASURES.iter().enumerate() {
        let here: Vec<&BudgetRow> = rows
            .iter()
            .filter(|r| r.benchmark == measure.name)
            .collect();
        if here.is_empty() {
            continue;
        }
        let _ = writeln!(w, "*{}*\n", measure.name);
        for &model in measure.models {
            let mine: Vec<&&BudgetRow> = here
                .iter()
                .filter(|r| r.model == model && r.other_model.is_empty())
                .collect();
            let curve: Vec<String> = mine
                .iter()
                .filter(|r| r.quantity == "score")
                .map(|r| format!("{} {}", tokens(r.tokens_seen), fmt(r)))
                .collect();
            if curve.is_empty() {
                continue;
            }
            let change = mine
                .iter()
                .find(|r| r.quantity == "change")
                .map_or(String::new(), |c| moved(c));
            let _ = writeln!(
                w,
                "- {model} ({} seeds): {}{change}",
                mine[0].seeds,
                curve.join(", ")
            );
        }
        for (j, a, b, what) in DIFFERENCES {
            if j != i {
                continue;
            }
            let of = |q: &'static str| {
                here.iter()
                    .filter(move |r| r.quantity == q && r.model == a && r.other_model == b)
            };
            let shown: Vec<String> = of("difference")
                .map(|r| {
                    let sign =
                        side_of_zero(r.lo, r.hi).map_or(String::new(), |s| format!(" ({s})"));
                    format!("{} {}{sign}", tokens(r.tokens_seen), fmt(r))
                })
                .collect();
            let Some(first) = of("difference").next() else {
                continue;
            };
            let change = of("difference-change")
                .next()
                .map_or(String::new(), |c| moved(c));
            let _ = writeln!(
                w,
                "- {a} - {b}, {what} ({} seeds): {}{change}",
                first.seeds,
                shown.join(", ")
            );
        }
        let _ = writeln!(w);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dyn_row(
        model: &str,
        seed: u64,
        t: u64,
        rep: &str,
        bench: &str,
        metric: &str,
        value: f64,
    ) -> DynamicsRow {
        DynamicsRow {
            model: model.into(),
            seed: Some(seed),
            step: (t / 100) as usize,
            tokens_seen: t,
            epochs: 0.0,
            representation: rep.into(),
            layer: None,
            benchmark: bench.into(),
            metric: metric.into(),
            value,
            n: 0,
            oov: 0,
        }
    }

    /// Planted held-out losses: the masked LM 5.0 + seed/10 at 1000 tokens and 4.0 + seed/10
    /// at 2000 and 4000 (seeds 1-3); shared-QK 0.2 above it at every point and seed, plus 0.1
    /// at seed 3 and 4000. Hand-computed: the masked LM's points 5.2, 4.2, 4.2 (sd 0.1, t(2) =
    /// 4.303: +-0.248); its change 4000 - 2000 exactly 0 (every seed's change 0: a zero-width
    /// interval); shared-QK - MLM at 1000 exactly 0.2 (zero width, where Welch's would carry the
    /// seeds' spread 0.1 on each side), at 4000 0.2333 (differences 0.2, 0.2, 0.3: sd 0.0577,
    /// +-0.1434); its change 4000 - 2000 0.0333 (0, 0, 0.1: the same sd).
    #[test]
    fn curves_and_differences_carry_the_seeds_paired() {
        let mut rows = Vec::new();
        for seed in 1..=3u64 {
            for t in [1000u64, 2000, 4000] {
                let base = if t == 1000 { 5.0 } else { 4.0 } + seed as f64 / 10.0;
                let bump = if seed == 3 && t == 4000 { 0.1 } else { 0.0 };
                rows.push(dyn_row(
                    MLM,
                    seed,
                    t,
                    "training",
                    "training",
                    "heldout_loss",
                    base,
                ));
                rows.push(dyn_row(
                    SHARED_QK,
                    seed,
                    t,
                    "training",
                    "training",
                    "heldout_loss",
                    base + 0.2 + bump,
                ));
            }
        }
        // A seed that stopped early: its 8000 point is read by no curve.
        rows.push(dyn_row(
            MLM,
            1,
            8000,
            "training",
            "training",
            "heldout_loss",
            3.0,
        ));
        let out = super::rows(&rows);
        let find = |model: &str, other: &str, q: &str, t: u64| {
            out.iter()
                .find(|r| {
                    r.model == model
                        && r.other_model == other
                        && r.quantity == q
                        && r.tokens_seen == t
                })
                .unwrap_or_else(|| panic!("{model} {other} {q} {t}: {out:?}"))
        };
        let p = find(MLM, "", "score", 1000);
        assert!(
            (p.value - 5.2).abs() < 1e-12 && (p.hi - 5.2 - 4.303 * 0.1 / 3f64.sqrt()).abs() < 1e-3,
            "{p:?}"
        );
        assert_eq!(p.seeds, 3);
        assert!(!out.iter().any(|r| r.tokens_seen == 8000), "{out:?}");
        let c = find(MLM, "", "change", 4000);
        assert_eq!((c.from_tokens, c.value, c.lo, c.hi), (2000, 0.0, 0.0, 0.0));
        let d = find(SHARED_QK, MLM, "difference", 1000);
        assert!(
            (d.value - 0.2).abs() < 1e-12 && (d.hi - d.lo).abs() < 1e-12,
            "{d:?}"
        );
        let d = find(SHARED_QK, MLM, "difference", 4000);
        let half = 4.303 * (0.1 / 3f64.sqrt()) / 3f64.sqrt();
        assert!(
            (d.value - 0.7 / 3.0).abs() < 1e-12 && (d.hi - d.value - half).abs() < 1e-3,
            "{d:?}"
        );
        let dc = find(SHARED_QK, MLM, "difference-change", 4000);
        assert_eq!(dc.from_tokens, 2000);
        assert!(
            (dc.value - 0.1 / 3.0).abs() < 1e-12 && (dc.hi - dc.value - half).abs() < 1e-3,
            "{dc:?}"
        );
        let text = section(&out);
        assert!(text.contains("*held-out loss (nats)*"), "{text}");
        assert!(
            text.contains("- transformer-mlm (3 seeds): 1k 5.200 ["),
            "{text}"
        );
        assert!(text.contains("- transformer-mlm-shared-qk - transformer-mlm, must W_Q and W_K differ? (3 seeds): 1k 0.200 [0.200, 0.200] (above 0)"), "{text}");
    }

    /// The collocation gap is collocated minus matched, from a transformer's embedding or
    /// word2vec's vectors; contextuality is read at the deepest layer measured; the CKA of
    /// queries and keys is the mean over layers of CKA minus its null; one seed gives no row.
    #[test]
    fn each_measure_reads_its_rows() {
        let mut p = Point::new();
        let mut put = |rep: &str, layer: Option<usize>, bench: &str, metric: &str, v: f64| {
            p.insert((rep.into(), layer, bench.into(), metric.into()), v);
        };
        put("static", None, "collocation", "collocated_cosine", 0.5);
        put("static", None, "collocation", "matched_cosine", 0.1);
        put(
            "contextual",
            Some(0),
            "contextuality",
            "intra_sentence_excess",
            0.9,
        );
        put(
            "contextual",
            Some(4),
            "contextuality",
            "intra_sentence_excess",
            0.3,
        );
        put(
            "contextual",
            Some(4),
            "contextuality-norm",
            "intra_sentence_excess",
            0.7,
        );
        put(
            "attention-activations",
            Some(1),
            "all-heads",
            "cka_q_k",
            0.8,
        );
        put(
            "attention-activations",
            Some(1),
            "all-heads",
            "cka_q_k_null",
            0.5,
        );
        put(
            "attention-activations",
            Some(2),
            "all-heads",
            "cka_q_k",
            0.6,
        );
        put(
            "attention-activations",
            Some(2),
            "all-heads",
            "cka_q_k_null",
            0.5,
        );
        assert!((collocation_gap(&p).unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(intra_sentence(&p), Some(0.3));
        assert_eq!(self_similarity(&p), None);
        assert!((qk_activations(&p).unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(heldout_loss(&p), None);
        let one_seed = vec![dyn_row(
            MLM,
            1,
            1000,
            "training",
            "training",
            "heldout_loss",
            5.0,
        )];
        assert!(rows(&one_seed).is_empty());
    }

    #[test]
    fn the_written_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        let rows = vec![dyn_row(
            MLM,
            1,
            1000,
            "training",
            "training",
            "heldout_loss",
            5.0,
        )];
        crate::output::write_csv(&dir.path().join("dynamics.csv"), &rows).unwrap();
        let back = read(dir.path()).unwrap().unwrap();
        assert_eq!(
            (back.len(), back[0].value, back[0].tokens_seen),
            (1, 5.0, 1000)
        );
    }
}
