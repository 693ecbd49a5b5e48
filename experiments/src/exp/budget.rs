//! Each similarity and analogy answer along the training budget, with intervals over items
//! and seeds (issue 41: "give each answer's curve with intervals ... an answer that changes
//! with budget says so, with the change's own interval"). The snapshots' per-item outcomes
//! ([`SnapshotItemRow`], kept beside each model's `dynamics-*.csv.gz`) are scored at every
//! point like a final model's ([`analysis::evidence::Evidence::score`]), and the change from
//! about half the budget to the end is a paired difference on the same items and seeds with its
//! own interval ([`analysis::evidence::Evidence::difference`]). `--exp dynamics` writes
//! `<out>/dynamics/budget.csv`; the report's section is drawn from it ([`section`]).
//!
//! Only the points every seed of a model reached are read: a run the plateau rule stopped early
//! has fewer snapshots, and a mean over the seeds that got there would move for that reason
//! alone; "the last point" is then the last snapshot all seeds share, not each seed's final
//! model. The change is taken from the first point at or past half the last point's tokens.
//! word2vec's points are its runs at each snapshot's token count. A table with fewer than two
//! seeds gets no row: with one seed an interval cannot carry seed-to-seed variation.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use analysis::evidence::{Half, Rep};
use analysis::inference::Interval;
use serde::{Deserialize, Serialize};

use super::comparisons::{side_of_zero, TABLE_DIFFERENCES};
use super::eval::Benchmarks;
use super::study::SnapshotItemRow;
use crate::output::ItemRow;

/// The benchmarks the answers are read on: three similarity sets and the Google analogies.
pub const BENCHMARKS: [&str; 4] = ["WS-353-ALL", "SIMLEX-999", "MEN-TR-3k", "questions-words"];

/// One line of `budget.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetRow {
    pub model: String,
    pub representation: String,
    pub benchmark: String,
    /// `score` (Spearman's rho, or 3CosAdd accuracy, at `tokens_seen`), `change` (the score
    /// at `tokens_seen`, the last point every seed reached, minus the score at `from_tokens`,
    /// the first point at or past half of it), `difference` (this table's score minus
    /// `other_model`'s `other_representation`'s at `tokens_seen`, on the items and seeds both
    /// have: [`TABLE_DIFFERENCES`]), or `difference-change` (that difference at `tokens_seen`,
    /// the last point both reached, minus at `from_tokens`, the first at or past half of it:
    /// [`analysis::evidence::Evidence::difference_change`]).
    pub quantity: String,
    pub tokens_seen: u64,
    pub from_tokens: u64,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    pub seeds: usize,
    /// Items the value rests on (pairs or questions answered at every point compared).
    pub items: usize,
    /// The table subtracted, for `difference` and `difference-change`; empty otherwise.
    #[serde(default)]
    pub other_model: String,
    #[serde(default)]
    pub other_representation: String,
}

/// The evidence's name for a table at one point of the budget.
fn at(representation: &str, tokens: u64) -> String {
    format!("{representation}@{tokens}")
}

/// Every (model, representation, benchmark)'s scores at each point and its change from about
/// half the budget to the end.
pub fn rows(snapshots: Vec<SnapshotItemRow>, benchmarks: &Benchmarks) -> Vec<BudgetRow> {
    type Key = (String, String, String);
    let mut points: BTreeMap<Key, BTreeMap<u64, BTreeSet<u64>>> = BTreeMap::new();
    let mut items = Vec::new();
    for s in snapshots {
        let read = BENCHMARKS.contains(&s.benchmark.as_str())
            && matches!(s.kind.as_str(), "cosine" | "3CosAdd")
            && s.layer.is_none();
        if !read {
            continue;
        }
        let key = (
            s.model.clone(),
            s.representation.clone(),
            s.benchmark.clone(),
        );
        points
            .entry(key)
            .or_default()
            .entry(s.tokens_seen)
            .or_default()
            .insert(s.seed.unwrap_or(0));
        items.push(ItemRow {
            representation: at(&s.representation, s.tokens_seen),
            model: s.model,
            layer: None,
            benchmark: s.benchmark,
            kind: s.kind,
            seed: s.seed,
            values: s.values,
        });
    }
    let evidence = super::evidence::from_rows(items, benchmarks);
    let mut out = Vec::new();
    // The points every seed of a table reached, for the differences between tables.
    let mut reached: BTreeMap<&Key, Vec<u64>> = BTreeMap::new();
    for (key, by_tokens) in &points {
        let (model, representation, benchmark) = key;
        let seeds: BTreeSet<u64> = by_tokens.values().flatten().copied().collect();
        if seeds.len() < 2 {
            continue;
        }
        let full: Vec<u64> = (by_tokens.iter())
            .filter(|(_, s)| **s == seeds)
            .map(|(t, _)| *t)
            .collect();
        let row = |quantity: &str, tokens: u64, from: u64, iv: &Interval, items: usize| BudgetRow {
            model: model.clone(),
            representation: representation.clone(),
            benchmark: benchmark.clone(),
            quantity: quantity.into(),
            tokens_seen: tokens,
            from_tokens: from,
            value: iv.estimate,
            lo: iv.lo,
            hi: iv.hi,
            seeds: seeds.len(),
            items,
            other_model: String::new(),
            other_representation: String::new(),
        };
        reached.insert(key, full.clone());
        let rep = |t: u64| Rep::new(model, &at(representation, t), None);
        for &t in &full {
            if let Some(e) = evidence.score(&rep(t), benchmark, Half::All) {
                out.push(row("score", t, t, &e.interval, e.items));
            }
        }
        if let Some((half, last)) = half_point(&full) {
            if let Some(d) = evidence.difference(&rep(last), &rep(half), benchmark, Half::All) {
                out.push(row("change", last, half, &d.diff, d.a.items));
            }
        }
    }
    // Between tables, at every point both reached with every seed: whether an answer that
    // compares two tables holds along the budget, or only at its end.
    for ((ma, ra), (mb, rb), _) in TABLE_DIFFERENCES {
        for benchmark in BENCHMARKS {
            let key = |m: &str, r: &str| (m.to_string(), r.to_string(), benchmark.to_string());
            let (Some(ta), Some(tb)) = (reached.get(&key(ma, ra)), reached.get(&key(mb, rb)))
            else {
                continue;
            };
            let both: Vec<u64> = ta.iter().copied().filter(|t| tb.contains(t)).collect();
            for &t in &both {
                let (a, b) = (
                    Rep::new(ma, &at(ra, t), None),
                    Rep::new(mb, &at(rb, t), None),
                );
                let Some(d) = evidence.difference(&a, &b, benchmark, Half::All) else {
                    continue;
                };
                if d.seeds.len() < 2 {
                    continue;
                }
                out.push(BudgetRow {
                    model: ma.into(),
                    representation: ra.into(),
                    benchmark: benchmark.into(),
                    quantity: "difference".into(),
                    tokens_seen: t,
                    from_tokens: t,
                    value: d.diff.estimate,
                    lo: d.diff.lo,
                    hi: d.diff.hi,
                    seeds: d.seeds.len(),
                    items: d.a.items,
                    other_model: mb.into(),
                    other_representation: rb.into(),
                });
            }
            // How the difference moved over the second half of the budget (the last point both
            // reached against the first at or past half its tokens), with its own interval.
            if let Some((half, last)) = half_point(&both) {
                let rep = |m: &str, r: &str, t: u64| Rep::new(m, &at(r, t), None);
                let four = [
                    &rep(ma, ra, last),
                    &rep(mb, rb, last),
                    &rep(ma, ra, half),
                    &rep(mb, rb, half),
                ];
                let change =
                    (evidence.difference_change(four, benchmark, Half::All)).map(|c| (half, c));
                if let Some((h, c)) = change.filter(|(_, c)| c.seeds.len() >= 2) {
                    out.push(BudgetRow {
                        model: ma.into(),
                        representation: ra.into(),
                        benchmark: benchmark.into(),
                        quantity: "difference-change".into(),
                        tokens_seen: last,
                        from_tokens: h,
                        value: c.change.interval.estimate,
                        lo: c.change.interval.lo,
                        hi: c.change.interval.hi,
                        seeds: c.seeds.len(),
                        items: c.change.items,
                        other_model: mb.into(),
                        other_representation: rb.into(),
                    });
                }
            }
        }
    }
    out
}

/// (the first point at or past half of the last one's tokens, the last one) of `points` in
/// increasing order: the stretch over which an answer's change is read; `None` with no such
/// earlier point.
pub(crate) fn half_point(points: &[u64]) -> Option<(u64, u64)> {
    let &last = points.last()?;
    let half = points
        .iter()
        .copied()
        .find(|&t| 2 * t >= last && t < last)?;
    Some((half, last))
}

/// `<out>/dynamics/budget.csv` when `--exp dynamics` has written it.
pub fn read(out: &Path) -> anyhow::Result<Option<Vec<BudgetRow>>> {
    let path = out.join("dynamics").join("budget.csv");
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(crate::output::read_csv(&path)?))
}

/// Tokens as the report writes them: `2.1M`, `262k`.
fn tokens(t: u64) -> String {
    if t >= 1_000_000 {
        format!("{:.1}M", t as f64 / 1e6)
    } else {
        format!("{}k", (t as f64 / 1e3).round())
    }
}

/// A change row as the report writes it: `; 4k - 2k: +0.120 [+0.050, +0.190], higher at 4k
/// than at 2k` (or "lower", or "no change shown" where the interval holds 0).
fn moved(c: &BudgetRow) -> String {
    let (end, from) = (tokens(c.tokens_seen), tokens(c.from_tokens));
    let verdict = if c.lo > 0.0 {
        format!("higher at {end} than at {from}")
    } else if c.hi < 0.0 {
        format!("lower at {end} than at {from}")
    } else {
        "no change shown".to_string()
    };
    format!(
        "; {end} - {from}: {:+.3} [{:+.3}, {:+.3}], {verdict}",
        c.value, c.lo, c.hi
    )
}

/// How the report writes a value with its interval.
fn interval(r: &BudgetRow) -> String {
    format!("{:.3} [{:.3}, {:.3}]", r.value, r.lo, r.hi)
}

/// A curve as the report writes it, from its rows (`score` and `change`; others passed over):
/// the seeds of its first point and `1k 0.100 [..], 2k 0.200 [..]; 2k - 1k: ...`, or `None`
/// without a score.
pub(crate) fn curve_text<'a>(
    rows: impl IntoIterator<Item = &'a BudgetRow>,
) -> Option<(usize, String)> {
    points_text(rows, "score", "change", |_| String::new())
}

/// A difference between two tables as the report writes it: the seeds of its first point, and
/// each point's interval with the side of 0 it lies on, then its change
/// (`difference-change`); `None` without a point.
pub(crate) fn difference_text<'a>(
    rows: impl IntoIterator<Item = &'a BudgetRow>,
) -> Option<(usize, String)> {
    points_text(rows, "difference", "difference-change", |r| {
        side_of_zero(r.lo, r.hi).map_or(String::new(), |s| format!(" ({s})"))
    })
}

/// The rows of quantity `point` as `tokens interval<note>`, joined, then the `change` row.
fn points_text<'a>(
    rows: impl IntoIterator<Item = &'a BudgetRow>,
    point: &str,
    change: &str,
    note: impl Fn(&BudgetRow) -> String,
) -> Option<(usize, String)> {
    let rows: Vec<&BudgetRow> = rows.into_iter().collect();
    let points: Vec<&&BudgetRow> = rows.iter().filter(|r| r.quantity == point).collect();
    let first = points.first()?;
    let shown: Vec<String> = (points.iter())
        .map(|r| format!("{} {}{}", tokens(r.tokens_seen), interval(r), note(r)))
        .collect();
    let after = (rows.iter())
        .find(|r| r.quantity == change)
        .map_or(String::new(), |c| moved(c));
    Some((first.seeds, format!("{}{after}", shown.join(", "))))
}

/// The report's section: per benchmark, each table's score at every point and its change over
/// the second half of the budget; `heading_prefix` goes before its heading (a round's: "Round: ").
pub fn section(rows: &[BudgetRow], heading_prefix: &str) -> String {
    let mut w = String::new();
    let _ = writeln!(
        w,
        "### {heading_prefix}How each answer moves with the budget\n"
    );
    if rows.is_empty() {
        let _ = writeln!(
            w,
            "_No model's snapshots have per-item outcomes kept (models measured before they were kept have none)._\n"
        );
        return w;
    }
    let _ = writeln!(
        w,
        "Each table scored at every snapshot every seed reached, under one recipe (seed mean [95% interval over items and seeds]; word2vec trained to each snapshot's token count), and the last such point minus the first at or past half its tokens, on the same items and seeds, with its own interval: where it excludes 0 the answer was still moving over that stretch. Then the differences between tables the answers rest on, at every point both reached (seed s of one against seed s of the other, on the items both answer; \"above 0\" or \"below 0\" where the interval excludes 0), and how each difference moved over the second half of the budget: the four tables' contrast on the same items and seeds, with its own interval. word2vec's learning rate decays to 0 over each of its budgets (each point a run of its own, with the same seed) while a transformer's snapshot is taken mid-schedule, which favours word2vec at the intermediate points: a difference between word2vec and a transformer that shrinks over the second half is partly this schedule, not the budget alone.\n"
    );
    for bench in BENCHMARKS {
        let here: Vec<&BudgetRow> = rows.iter().filter(|r| r.benchmark == bench).collect();
        if here.is_empty() {
            continue;
        }
        let metric = if bench == "questions-words" {
            "3CosAdd accuracy"
        } else {
            "Spearman's rho"
        };
        let _ = writeln!(w, "**{bench}** ({metric})\n");
        let mut tables: Vec<(&str, &str)> = here
            .iter()
            .filter(|r| !r.quantity.starts_with("difference"))
            .map(|r| (r.model.as_str(), r.representation.as_str()))
            .collect();
        tables.sort();
        tables.dedup();
        for (model, rep) in tables {
            let mine: Vec<&&BudgetRow> = here
                .iter()
                .filter(|r| r.model == model && r.representation == rep)
                .filter(|r| !r.quantity.starts_with("difference"))
                .collect();
            if let Some((seeds, curve)) = curve_text(mine.iter().map(|r| **r)) {
                let _ = writeln!(w, "- {model} {rep} ({seeds} seeds): {curve}");
            }
        }
        for ((ma, ra), (mb, rb), what) in TABLE_DIFFERENCES {
            let pair: Vec<&BudgetRow> = (here.iter().copied())
                .filter(|r| {
                    (r.model.as_str(), r.representation.as_str()) == (ma, ra)
                        && (r.other_model.as_str(), r.other_representation.as_str()) == (mb, rb)
                })
                .collect();
            if let Some((seeds, text)) = difference_text(pair) {
                let _ = writeln!(w, "- {what} ({seeds} seeds): {text}");
            }
        }
        let _ = writeln!(w);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One seed's WS-353 cosines of a table at `t` tokens seen, as a snapshot keeps them.
    fn snapshot(model: &str, rep: &str, t: u64, seed: u64, cos: &[Option<f64>]) -> SnapshotItemRow {
        SnapshotItemRow {
            step: (t / 100) as usize,
            tokens_seen: t,
            model: model.into(),
            representation: rep.into(),
            layer: None,
            benchmark: "WS-353-ALL".into(),
            kind: "cosine".into(),
            seed: Some(seed),
            values: crate::output::encode_cosines(cos),
        }
    }

    /// Planted: at 1000 tokens the cosines are noise, at 2000 and 4000 they follow the human
    /// scores (4000 more closely), for seeds 1-3; seed 3 has no 8000 point (stopped early).
    #[test]
    fn the_curve_keeps_points_every_seed_reached_and_the_change_has_its_interval() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let ws = benchmarks
            .similarity
            .iter()
            .find(|s| s.name == "WS-353-ALL")
            .unwrap();
        let mut snaps = Vec::new();
        for seed in 1..=3u64 {
            for (t, weight) in [(1000u64, 0.0), (2000, 0.3), (4000, 1.0), (8000, 1.0)] {
                if t == 8000 && seed == 3 {
                    continue;
                }
                let cos: Vec<Option<f64>> = (ws.pairs.iter().enumerate())
                    .map(|(i, p)| {
                        let mut g = analysis::inference::SplitMix64::new(
                            i as u64 ^ (seed << 20) ^ (t << 30),
                        );
                        let noise = g.next_f32() as f64;
                        Some(weight * p.2 / 10.0 + noise)
                    })
                    .collect();
                snaps.push(snapshot("transformer-mlm", "embedding", t, seed, &cos));
            }
        }
        // A table the curves do not read (a benchmark outside the answers).
        let mut other = snaps[0].clone();
        other.benchmark = "MC-30".into();
        snaps.push(other);
        let snaps_of_seed_one: Vec<SnapshotItemRow> = (snaps.iter())
            .filter(|s| s.seed == Some(1))
            .cloned()
            .collect();
        let rows = rows(snaps, &benchmarks);
        let scores: Vec<&BudgetRow> = rows.iter().filter(|r| r.quantity == "score").collect();
        assert_eq!(
            scores.iter().map(|r| r.tokens_seen).collect::<Vec<_>>(),
            [1000, 2000, 4000],
            "8000 was not reached by every seed"
        );
        assert!(rows.iter().all(|r| r.benchmark == "WS-353-ALL"));
        assert!(scores.iter().all(|r| r.seeds == 3 && r.items == 353));
        // Noise: rho about 0; following the scores with noise of the same size: well above.
        assert!(scores[0].lo < 0.0 && scores[0].hi > 0.0, "{:?}", scores[0]);
        assert!(scores[2].lo > 0.5, "{:?}", scores[2]);
        // The change from the point nearest half of 4000 (2000) to 4000: up, and its interval
        // says so.
        let change = rows.iter().find(|r| r.quantity == "change").unwrap();
        assert_eq!((change.tokens_seen, change.from_tokens), (4000, 2000));
        assert!(change.lo > 0.0, "{change:?}");
        assert!(
            (change.value - (scores[2].value - scores[1].value)).abs() < 0.02,
            "{change:?} vs {:?} {:?}",
            scores[2],
            scores[1]
        );
        let text = section(&rows, "");
        assert!(
            text.contains("- transformer-mlm embedding (3 seeds): 1k "),
            "{text}"
        );
        assert!(text.contains("4k - 2k: +"), "{text}");
        assert!(text.contains("higher at 4k than at 2k"), "{text}");
        // One seed: no row (its interval could not carry seed-to-seed variation).
        assert!(super::rows(snaps_of_seed_one, &benchmarks).is_empty());
    }

    /// Planted: word2vec follows the human scores at 1000 and 2000 tokens, the masked LM's
    /// embedding is noise at 1000 and follows them at 2000 (other noise), seeds 1-3: the
    /// difference lies above 0 at 1000 and not at 2000, and each point's estimate is the two
    /// scores' difference (the same items and seeds).
    #[test]
    fn the_difference_between_tables_is_read_at_every_point_both_reached() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let ws = benchmarks
            .similarity
            .iter()
            .find(|s| s.name == "WS-353-ALL")
            .unwrap();
        let mut snaps = Vec::new();
        for seed in 1..=3u64 {
            for (salt, model, rep) in [
                (1u64, "word2vec-sgns", "static"),
                (2, "transformer-mlm", "embedding"),
            ] {
                for t in [1000u64, 2000] {
                    let weight = if model == "transformer-mlm" && t == 1000 {
                        0.0
                    } else {
                        1.0
                    };
                    let cos: Vec<Option<f64>> = (ws.pairs.iter().enumerate())
                        .map(|(i, p)| {
                            let mut g = analysis::inference::SplitMix64::new(
                                i as u64 ^ (seed << 20) ^ (t << 30) ^ (salt << 50),
                            );
                            Some(weight * p.2 / 10.0 + 0.3 * g.next_f32() as f64)
                        })
                        .collect();
                    snaps.push(snapshot(model, rep, t, seed, &cos));
                }
            }
        }
        // word2vec has a point the masked LM never reached: no difference there.
        let mut lone = snaps[0].clone();
        lone.tokens_seen = 3000;
        for seed in 1..=3 {
            snaps.push(SnapshotItemRow {
                seed: Some(seed),
                ..lone.clone()
            });
        }
        let rows = rows(snaps, &benchmarks);
        let score = |model: &str, t: u64| {
            rows.iter()
                .find(|r| r.quantity == "score" && r.model == model && r.tokens_seen == t)
                .unwrap()
                .value
        };
        let diffs: Vec<&BudgetRow> = rows.iter().filter(|r| r.quantity == "difference").collect();
        assert_eq!(
            diffs.iter().map(|r| r.tokens_seen).collect::<Vec<_>>(),
            [1000, 2000]
        );
        for d in &diffs {
            assert_eq!(
                (d.model.as_str(), d.other_model.as_str(), d.seeds, d.items),
                ("word2vec-sgns", "transformer-mlm", 3, 353)
            );
            let want =
                score("word2vec-sgns", d.tokens_seen) - score("transformer-mlm", d.tokens_seen);
            assert!((d.value - want).abs() < 1e-9, "{d:?} {want}");
        }
        assert!(diffs[0].lo > 0.5, "{:?}", diffs[0]);
        assert!(diffs[1].lo < 0.0 && diffs[1].hi > 0.0, "{:?}", diffs[1]);
        // The difference fell from 1k to 2k (the masked LM caught up): the four tables'
        // contrast is the two points' differences' difference, and its interval says so.
        let change = rows
            .iter()
            .find(|r| r.quantity == "difference-change")
            .unwrap();
        assert_eq!(
            (
                change.tokens_seen,
                change.from_tokens,
                change.seeds,
                change.items
            ),
            (2000, 1000, 3, 353)
        );
        assert!(
            (change.value - (diffs[1].value - diffs[0].value)).abs() < 1e-9,
            "{change:?}"
        );
        assert!(change.hi < 0.0, "{change:?}");
        let text = section(&rows, "Round: ");
        let line = format!(
            "- word2vec SGNS - masked LM (tied) embedding (3 seeds): 1k {:.3} [{:.3}, {:.3}] (above 0), 2k {:.3} [{:.3}, {:.3}]; 2k - 1k: {:+.3} [{:+.3}, {:+.3}], lower at 2k than at 1k\n",
            diffs[0].value, diffs[0].lo, diffs[0].hi, diffs[1].value, diffs[1].lo, diffs[1].hi,
            change.value, change.lo, change.hi
        );
        assert!(text.contains(&line), "{line}\n{text}");
        assert!(text.starts_with("### Round: How each answer moves with the budget\n"));
    }

    #[test]
    fn nothing_kept_says_so() {
        assert!(section(&[], "").contains("No model's snapshots have per-item outcomes kept"));
    }

    /// What `--exp dynamics` writes, the report reads back (a plain CSV: no manifest beside it).
    #[test]
    fn the_written_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        let row = BudgetRow {
            model: "transformer-mlm".into(),
            representation: "embedding".into(),
            benchmark: "WS-353-ALL".into(),
            quantity: "score".into(),
            tokens_seen: 1000,
            from_tokens: 1000,
            value: 0.25,
            lo: 0.2,
            hi: 0.3,
            seeds: 3,
            items: 353,
            other_model: String::new(),
            other_representation: String::new(),
        };
        let path = dir.path().join("dynamics").join("budget.csv");
        crate::output::write_csv(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(vec![row]));
    }
}
