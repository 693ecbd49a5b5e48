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
//! the other ([`analysis::evidence::paired_seed_difference`]: seed s of every transformer
//! variant reads the rows in the same order, and masked-LM variants share their masks too), at
//! every point both reached with every seed they share, with the change of that difference
//! over the second half paired the same way. "The second half" is from the first snapshot at or
//! past half the last one's tokens to the last. Which models are read and compared follows the
//! roles of the round's config ([`Cast`]). Word2vec is never paired with a transformer.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use analysis::evidence::{paired_seed_difference, seed_mean};
use analysis::inference::Interval;

use super::budget::{curve_text, difference_text, half_point, BudgetRow};
use super::settings::{Cast, ModelId};
use super::study::DynamicsRow;

/// One snapshot of one seed: (representation, layer, benchmark, metric) -> value.
type Point = BTreeMap<(String, Option<usize>, String, String), f64>;

/// A quantity read off one snapshot; `last` is the model's deepest contextual layer (the same
/// for every snapshot and seed of it, so a snapshot that lacks it reads nothing rather than a
/// shallower layer).
pub struct Measure {
    /// What the report calls it (also the `benchmark` column of its rows).
    pub name: &'static str,
    /// The models whose curves the report shows, from the roles.
    models: fn(&Cast) -> Vec<ModelId>,
    read: fn(&Point, Option<usize>) -> Option<f64>,
}

/// The metrics the measures read: every other row of `dynamics.csv` is passed over.
const METRICS: [&str; 7] = [
    "collocated_cosine",
    "matched_cosine",
    "heldout_loss",
    "intra_sentence_excess",
    "self_similarity_adjusted",
    "cka_q_k",
    "cka_q_k_null",
];

/// The one contextuality readout the curves read (the snapshots take the others too; the
/// final models' comparison reads all four).
const READOUT: &str = "contextuality";

fn get(p: &Point, rep: &str, layer: Option<usize>, bench: &str, metric: &str) -> Option<f64> {
    p.get(&(rep.into(), layer, bench.into(), metric.into()))
        .copied()
}

fn collocation_gap(p: &Point, _: Option<usize>) -> Option<f64> {
    // A transformer's embedding matrix, or word2vec's vectors.
    ["embedding", "static"].iter().find_map(|rep| {
        Some(
            get(p, rep, None, "collocation", "collocated_cosine")?
                - get(p, rep, None, "collocation", "matched_cosine")?,
        )
    })
}

fn heldout_loss(p: &Point, _: Option<usize>) -> Option<f64> {
    get(p, "training", None, "training", "heldout_loss")
}

fn intra_sentence(p: &Point, last: Option<usize>) -> Option<f64> {
    get(
        p,
        "contextual",
        Some(last?),
        READOUT,
        "intra_sentence_excess",
    )
}

fn self_similarity(p: &Point, last: Option<usize>) -> Option<f64> {
    get(
        p,
        "contextual",
        Some(last?),
        READOUT,
        "self_similarity_adjusted",
    )
}

/// The mean over layers of CKA(queries, keys) minus its permutation null.
fn qk_activations(p: &Point, _: Option<usize>) -> Option<f64> {
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

/// The masked LM and the untied one.
fn masked_lms(c: &Cast) -> Vec<ModelId> {
    vec![ModelId::Mlm, c.untied.0]
}

pub const MEASURES: [Measure; 5] = [
    Measure {
        name: "collocation gap (collocated - matched pairs' mean cosine, embedding matrix or word2vec's vectors)",
        models: |c| {
            let mut m = vec![ModelId::Sgns, ModelId::Mlm, c.no_attention, c.clm, c.untied.0];
            m.extend(c.no_attention_untied);
            m.push(c.untied.1);
            m
        },
        read: collocation_gap,
    },
    Measure {
        name: "held-out loss (nats)",
        models: |c| {
            vec![
                ModelId::Mlm,
                ModelId::SharedQk,
                ModelId::SharedQkv,
                c.frozen_reference,
                c.frozen,
            ]
        },
        read: heldout_loss,
    },
    Measure {
        name: "intra-sentence similarity - null at the last layer (raw residual stream, text8 windows)",
        models: |c| {
            let mut m = vec![ModelId::Mlm, c.no_attention, c.untied.0];
            m.extend(c.no_attention_untied);
            m
        },
        read: intra_sentence,
    },
    Measure {
        name: "self-similarity - anisotropy at the last layer (raw residual stream, text8 windows)",
        models: masked_lms,
        read: self_similarity,
    },
    Measure {
        name: "CKA(queries, keys) on real tokens - its permutation null, mean over layers",
        models: masked_lms,
        read: qk_activations,
    },
];

/// The comparisons the answers make, from the roles: (measure index, a, b, what a - b answers).
pub fn differences(c: &Cast) -> Vec<(usize, ModelId, ModelId, &'static str)> {
    let mut d = vec![(
        0,
        ModelId::Mlm,
        c.no_attention,
        "does self-attention make collocated words similar? (tied)",
    )];
    if let Some(u) = c.no_attention_untied {
        d.push((
            0,
            c.untied.0,
            u,
            "does self-attention make collocated words similar? (untied)",
        ));
    }
    d.extend([
        (0, ModelId::Mlm, c.clm, "does the objective? (tied)"),
        (
            0,
            c.untied.0,
            c.untied.1,
            "does the objective? (untied input embeddings)",
        ),
        (
            1,
            ModelId::SharedQk,
            ModelId::Mlm,
            "must W_Q and W_K differ?",
        ),
        (
            1,
            ModelId::SharedQkv,
            ModelId::SharedQk,
            "must W_V differ from a shared W_Q = W_K?",
        ),
        (
            1,
            c.frozen,
            c.frozen_reference,
            "would frozen random input embeddings do?",
        ),
        (
            2,
            ModelId::Mlm,
            c.no_attention,
            "does attention contextualise beyond averaging? (tied)",
        ),
    ]);
    if let Some(u) = c.no_attention_untied {
        d.push((
            2,
            c.untied.0,
            u,
            "does attention contextualise beyond averaging? (untied)",
        ));
    }
    d
}

/// measure index -> model name -> tokens seen -> seed -> value.
type Curves = BTreeMap<usize, BTreeMap<String, BTreeMap<u64, BTreeMap<u64, f64>>>>;

fn curves(rows: &[DynamicsRow]) -> Curves {
    let mut points: BTreeMap<(String, u64, u64), Point> = BTreeMap::new();
    // Each model's deepest contextual layer of the readout, over all its snapshots and seeds.
    let mut last: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| METRICS.contains(&r.metric.as_str())) {
        if let (true, Some(l)) = (
            r.representation == "contextual" && r.benchmark == READOUT,
            r.layer,
        ) {
            let e = last.entry(r.model.clone()).or_insert(l);
            *e = (*e).max(l);
        }
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
            if let Some(v) = (m.read)(p, last.get(model).copied()).filter(|v| v.is_finite()) {
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

type Curve = BTreeMap<u64, BTreeMap<u64, f64>>;

fn seeds_of(curve: &Curve) -> BTreeSet<u64> {
    curve.values().flat_map(|s| s.keys().copied()).collect()
}

/// The points at which `curve` has every seed of `seeds` (a run the plateau rule stopped
/// early has fewer points, and a mean over the seeds that got further would move for that
/// reason alone).
fn full_points(curve: &Curve, seeds: &BTreeSet<u64>) -> Vec<u64> {
    curve
        .iter()
        .filter(|(_, s)| seeds.iter().all(|x| s.contains_key(x)))
        .map(|(t, _)| *t)
        .collect()
}

/// (seed, value) at point `t` of the seeds in `seeds`.
fn at(curve: &Curve, t: u64, seeds: &BTreeSet<u64>) -> Vec<(u64, f64)> {
    curve[&t]
        .iter()
        .filter(|(s, _)| seeds.contains(s))
        .map(|(s, v)| (*s, *v))
        .collect()
}

fn row(
    measure: &Measure,
    a: ModelId,
    b: Option<ModelId>,
    quantity: &str,
    (from, to): (u64, u64),
    iv: &Interval,
    seeds: usize,
) -> BudgetRow {
    BudgetRow {
        model: a.name().into(),
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
        other_model: b.map_or(String::new(), |b| b.name().into()),
        other_representation: String::new(),
    }
}

/// Each measure's curve for the models the roles name, its change over the second half, and
/// the [`differences`] at every point both models reached with every seed they share, with
/// their change, as [`BudgetRow`]s (`items` 0: no items behind them). A curve or difference of
/// fewer than two seeds gets no row.
pub fn rows(dynamics: &[DynamicsRow], cast: &Cast) -> Vec<BudgetRow> {
    let all = curves(dynamics);
    let curve = |i: usize, m: ModelId| all.get(&i).and_then(|c| c.get(m.name()));
    let mut out = Vec::new();
    for (i, measure) in MEASURES.iter().enumerate() {
        for model in (measure.models)(cast) {
            let Some(c) = curve(i, model) else {
                continue;
            };
            let seeds = seeds_of(c);
            if seeds.len() < 2 {
                continue;
            }
            let points = full_points(c, &seeds);
            for &t in &points {
                let values: Vec<f64> = at(c, t, &seeds).iter().map(|p| p.1).collect();
                out.push(row(
                    measure,
                    model,
                    None,
                    "score",
                    (t, t),
                    &seed_mean(&values),
                    seeds.len(),
                ));
            }
            if let Some((half, last)) = half_point(&points) {
                let change = paired_seed_difference(&at(c, last, &seeds), &at(c, half, &seeds));
                if let Some((d, k)) = change {
                    out.push(row(measure, model, None, "change", (half, last), &d, k));
                }
            }
        }
    }
    for (i, a, b, _) in differences(cast) {
        let measure = &MEASURES[i];
        let (Some(ca), Some(cb)) = (curve(i, a), curve(i, b)) else {
            continue;
        };
        let seeds: BTreeSet<u64> = seeds_of(ca).intersection(&seeds_of(cb)).copied().collect();
        let pb = full_points(cb, &seeds);
        let both: Vec<u64> = (full_points(ca, &seeds).into_iter())
            .filter(|t| pb.contains(t))
            .collect();
        for &t in &both {
            if let Some((d, k)) = paired_seed_difference(&at(ca, t, &seeds), &at(cb, t, &seeds)) {
                out.push(row(measure, a, Some(b), "difference", (t, t), &d, k));
            }
        }
        // seed -> a - b at point t.
        let diff_at = |t: u64| -> Vec<(u64, f64)> {
            (at(ca, t, &seeds).into_iter())
                .filter_map(|(s, x)| Some((s, x - cb[&t].get(&s)?)))
                .collect()
        };
        if let Some((half, last)) = half_point(&both) {
            if let Some((d, k)) = paired_seed_difference(&diff_at(last), &diff_at(half)) {
                out.push(row(
                    measure,
                    a,
                    Some(b),
                    "difference-change",
                    (half, last),
                    &d,
                    k,
                ));
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

/// The report's part for these rows, under [`super::budget::section`]'s heading; `cast` names
/// the models as [`rows`] chose them.
pub fn section(rows: &[BudgetRow], cast: &Cast) -> String {
    let mut w = String::new();
    if rows.is_empty() {
        return w;
    }
    let _ = writeln!(w, "**The answers measured once per seed**, from the snapshots' rows (`dynamics/dynamics.csv`): seed mean [95% t interval over seeds] at every snapshot every seed reached, and the last such point minus the first at or past half its tokens, the seeds' own changes with a t interval; then the differences between models the answers rest on, seed s against seed s (seed s of every transformer variant reads the rows in the same order, and masked-LM variants share their masks too), at every point both reached with every seed they share, and how each difference moved from the first point at or past half the last one's tokens to the last, paired the same way. No items stand behind these: the intervals carry the seeds, not the sampling of pairs, tokens or held-out text; each point's interval is read on its own (the points of a curve are not corrected for being read together).\n");
    for (i, measure) in MEASURES.iter().enumerate() {
        let here: Vec<&BudgetRow> = rows
            .iter()
            .filter(|r| r.benchmark == measure.name)
            .collect();
        if here.is_empty() {
            continue;
        }
        let _ = writeln!(w, "*{}*\n", measure.name);
        for model in (measure.models)(cast) {
            let mine: Vec<&&BudgetRow> = here
                .iter()
                .filter(|r| r.model == model.name() && r.other_model.is_empty())
                .collect();
            if let Some((seeds, curve)) = curve_text(mine.iter().map(|r| **r)) {
                let _ = writeln!(w, "- {} ({seeds} seeds): {curve}", model.label());
            }
        }
        for (j, a, b, what) in differences(cast) {
            if j != i {
                continue;
            }
            let pair: Vec<&BudgetRow> = (here.iter().copied())
                .filter(|r| r.model == a.name() && r.other_model == b.name())
                .collect();
            if let Some((seeds, text)) = difference_text(pair) {
                let (a, b) = (a.label(), b.label());
                let _ = writeln!(w, "- {a} - {b}, {what} ({seeds} seeds): {text}");
            }
        }
        let _ = writeln!(w);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    const MLM: &str = "transformer-mlm";
    const SHARED_QK: &str = "transformer-mlm-shared-qk";

    fn dyn_row(model: &str, seed: u64, t: u64, metric: &str, value: f64) -> DynamicsRow {
        DynamicsRow {
            model: model.into(),
            seed: Some(seed),
            step: (t / 100) as usize,
            tokens_seen: t,
            epochs: 0.0,
            representation: "training".into(),
            layer: None,
            benchmark: "training".into(),
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
                rows.push(dyn_row(MLM, seed, t, "heldout_loss", base));
                rows.push(dyn_row(
                    SHARED_QK,
                    seed,
                    t,
                    "heldout_loss",
                    base + 0.2 + bump,
                ));
            }
        }
        // Seed 1 ran further than the others: its 8000 point is read by no curve.
        rows.push(dyn_row(MLM, 1, 8000, "heldout_loss", 3.0));
        // A fourth masked-LM seed the shared variant lacks: in the masked LM's curve, not in
        // the difference (which reads the seeds both have).
        for t in [1000u64, 2000, 4000] {
            rows.push(dyn_row(MLM, 4, t, "heldout_loss", 9.0));
        }
        let out = super::rows(&rows, &Cast::default());
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
        let p = find(SHARED_QK, "", "score", 1000);
        assert!((p.value - 5.4).abs() < 1e-12, "{p:?}");
        assert!(
            (p.hi - 5.4 - 4.303 * 0.1 / 3f64.sqrt()).abs() < 1e-3,
            "{p:?}"
        );
        assert_eq!(find(MLM, "", "score", 1000).seeds, 4);
        assert!(!out.iter().any(|r| r.tokens_seen == 8000), "{out:?}");
        let c = find(SHARED_QK, "", "change", 4000);
        assert_eq!(c.from_tokens, 2000);
        assert!((c.value - 0.1 / 3.0).abs() < 1e-12, "{c:?}");
        let d = find(SHARED_QK, MLM, "difference", 1000);
        assert!(
            (d.value - 0.2).abs() < 1e-12 && (d.hi - d.lo).abs() < 1e-12,
            "{d:?}"
        );
        assert_eq!(d.seeds, 3);
        let d = find(SHARED_QK, MLM, "difference", 4000);
        let half = 4.303 * (0.1 / 3f64.sqrt()) / 3f64.sqrt();
        assert!((d.value - 0.7 / 3.0).abs() < 1e-12, "{d:?}");
        assert!((d.hi - d.value - half).abs() < 1e-3, "{d:?}");
        let dc = find(SHARED_QK, MLM, "difference-change", 4000);
        assert_eq!(dc.from_tokens, 2000);
        assert!((dc.value - 0.1 / 3.0).abs() < 1e-12, "{dc:?}");
        assert!((dc.hi - dc.value - half).abs() < 1e-3, "{dc:?}");
        let text = section(&out, &Cast::default());
        assert!(text.contains("*held-out loss (nats)*"), "{text}");
        let (m, q) = (ModelId::Mlm.label(), ModelId::SharedQk.label());
        assert!(
            text.contains(&format!("- {q} (3 seeds): 1k 5.400 [")),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "- {q} - {m}, must W_Q and W_K differ? (3 seeds): 1k 0.200 [0.200, 0.200] (above 0)"
            )),
            "{text}"
        );
    }

    /// The collocation gap is collocated minus matched, from a transformer's embedding or
    /// word2vec's vectors; contextuality is read at the model's deepest layer (a snapshot that
    /// lacks it reads nothing); the CKA of queries and keys is the mean over layers of CKA
    /// minus its null; one seed gives no row.
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
        assert!((collocation_gap(&p, None).unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(intra_sentence(&p, Some(4)), Some(0.3));
        assert_eq!(intra_sentence(&p, Some(5)), None);
        assert_eq!(self_similarity(&p, Some(4)), None);
        assert!((qk_activations(&p, None).unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(heldout_loss(&p, None), None);
        let one_seed = vec![dyn_row(MLM, 1, 1000, "heldout_loss", 5.0)];
        assert!(rows(&one_seed, &Cast::default()).is_empty());
    }

    #[test]
    fn the_written_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        let rows = vec![dyn_row(MLM, 1, 1000, "heldout_loss", 5.0)];
        crate::output::write_csv(&dir.path().join("dynamics.csv"), &rows).unwrap();
        let back = read(dir.path()).unwrap().unwrap();
        assert_eq!(
            (back.len(), back[0].value, back[0].tokens_seen),
            (1, 5.0, 1000)
        );
    }
}
