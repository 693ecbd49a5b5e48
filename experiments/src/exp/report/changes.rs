//! The closing section of a study's report ("What changed from the 800-step models"): each
//! question's answer from the paper's models, whose results sit in the directory above the
//! study's (`results/` for `results/fair-budget/`), beside the same measure in the study, and
//! whether the answer changed.
//!
//! Two kinds of line:
//! - a **level** (a score, a loss, a z-score) gets the change, study - 800 steps, with its 95%
//!   interval: items resampled and the seeds' spread at their degrees of freedom when items
//!   stand behind it (seed i of one budget beside seed i of the other: the models are
//!   independent, so the pairing only makes both sides draw the same items), else a Welch t
//!   interval over seeds;
//! - a **contrast** (a - b inside one budget: word2vec against the transformer, shared against
//!   separate W_Q/W_K, frozen against trained input) gets each budget's interval and verdict,
//!   and the answer *changed* when the verdicts differ (higher / lower / no difference shown).
//!   A difference of differences across budgets is not computed: the question each line answers
//!   is which way each budget comes out.
//!
//! A best layer is chosen on the dev half separately in each budget and scored on the test half.
//! Roles follow each report: the paper's (full-loss CLM, frozen tied embedding against the tied
//! MLM) for the 800-step column, the study's `[roles]` for the other; the label says when the
//! two columns are different models.

use std::fmt::Write as _;
use std::path::Path;

use analysis::inference::Interval;

use super::{fmt_iv, fmt_p, Sources, ANALOGY, MLM};
use crate::exp::evidence::{seed_difference, seed_mean, Evidence, Half, Rep};
use crate::exp::study::{Cast, ModelId};
use crate::Experiment;

/// Prefix of the 800-step models' names inside the merged evidence (never a real model name).
const BASE: &str = "800-step/";

/// The paper's results that a study's report is read against.
pub(super) struct Baseline {
    src: Sources,
    /// Where they are, as the report names them.
    shown: String,
}

impl Baseline {
    /// The paper's results in the directory above `out`, when it holds them (an analogy view
    /// with per-item outcomes); `None` otherwise, and for `results/` itself.
    pub(super) fn find(out: &Path) -> anyhow::Result<Option<Baseline>> {
        let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(None);
        };
        if !parent.join("analogy").join("measurements.csv").is_file() {
            return Ok(None);
        }
        // The repository's own results are named as a reader of the repository sees them.
        let results = std::fs::canonicalize(crate::paths::repo_root().join("results")).ok();
        let shown = if results.is_some() && std::fs::canonicalize(parent).ok() == results {
            "results/".to_string()
        } else {
            format!("{}/", parent.display())
        };
        Ok(Some(Baseline {
            // The paper's own roles (paper.toml's defaults).
            src: Sources::load(parent, Cast::default())?,
            shown,
        }))
    }
}

/// Whether an interval of a - b says a is higher (`Some(true)`), lower (`Some(false)`), or
/// shows no difference (`None`); `Err` when there is no interval.
fn direction(iv: &Interval) -> Result<Option<bool>, ()> {
    if !(iv.lo.is_finite() && iv.hi.is_finite()) {
        Err(())
    } else if iv.lo > 0.0 {
        Ok(Some(true))
    } else if iv.hi < 0.0 {
        Ok(Some(false))
    } else {
        Ok(None)
    }
}

/// A change (study - 800 steps) in words.
fn moved(iv: &Interval) -> &'static str {
    match direction(iv) {
        Ok(Some(true)) => "rose",
        Ok(Some(false)) => "fell",
        Ok(None) => "no change shown",
        Err(()) => "no interval",
    }
}

/// How a contrast a - b reads when a is higher, and when b is.
type Verdicts<'a> = (&'a str, &'a str);

/// "a higher" / "b higher" for a contrast between two named things.
fn higher(a: &str, b: &str) -> (String, String) {
    (format!("{a} higher"), format!("{b} higher"))
}

/// A contrast's verdict in a few words.
fn answer(iv: &Interval, (up, down): Verdicts) -> String {
    match direction(iv) {
        Ok(Some(true)) => up.into(),
        Ok(Some(false)) => down.into(),
        Ok(None) => "no difference shown".into(),
        Err(()) => "no interval".into(),
    }
}

/// Whether the two budgets' verdicts on a contrast agree.
fn changed(old: &Interval, new: &Interval, verdicts: Verdicts) -> String {
    match (direction(old), direction(new)) {
        (Ok(x), Ok(y)) if x == y => "no: same answer".into(),
        (Ok(_), Ok(_)) => format!(
            "**yes**: was \"{}\", now \"{}\"",
            answer(old, verdicts),
            answer(new, verdicts)
        ),
        _ => "-".into(),
    }
}

/// One side of a line: a representation in one budget.
#[derive(Clone)]
struct Side {
    rep: Rep,
    half: Half,
    layer_note: String,
}

/// Builds the merged evidence and writes the section.
pub(super) fn section(study: &mut Sources, base: Baseline) -> String {
    let Baseline {
        src: mut old,
        shown,
    } = base;
    if let (Some(ev), Some(b)) = (study.evidence.as_mut(), old.evidence.take()) {
        ev.absorb(b, BASE);
    }
    Table { study, old: &old }.write(&shown)
}

struct Table<'a> {
    study: &'a Sources,
    old: &'a Sources,
}

/// The same model name in the 800-step column.
fn base_name(model: &str) -> String {
    format!("{BASE}{model}")
}

impl Table<'_> {
    fn ev(&self) -> Option<&Evidence> {
        self.study.evidence.as_ref()
    }

    /// `model`'s `representation`, fixed or at its best dev layer, in one budget (`old`: the
    /// 800-step column).
    fn side(&self, old: bool, model: &str, representation: &str, bench: &str) -> Option<Side> {
        let name = if old { base_name(model) } else { model.into() };
        if matches!(representation, "aggregated" | "decontextualized") {
            let l = self.ev()?.best_layer(&name, representation, bench)?;
            Some(Side {
                rep: Rep::new(&name, representation, Some(l)),
                half: Half::Test,
                layer_note: format!("layer {l}"),
            })
        } else {
            Some(Side {
                rep: Rep::new(&name, representation, None),
                half: Half::All,
                layer_note: String::new(),
            })
        }
    }

    /// A level with items behind it: each budget's score and the change on shared items.
    fn score(&self, w: &mut String, label: &str, models: (&str, &str), rep: &str, bench: &str) {
        let ev = self.ev();
        let (o, n) = (
            self.side(true, models.0, rep, bench),
            self.side(false, models.1, rep, bench),
        );
        let cell = |s: &Option<Side>| match (ev, s) {
            (Some(ev), Some(s)) => ev.score(&s.rep, bench, s.half).map_or("-".into(), |e| {
                let at = if s.layer_note.is_empty() {
                    String::new()
                } else {
                    format!(", {}", s.layer_note)
                };
                format!("{} (n {}{at})", fmt_iv(&e.interval), e.items)
            }),
            _ => "-".into(),
        };
        let (c_old, c_new) = (cell(&o), cell(&n));
        let change = match (ev, &o, &n) {
            (Some(ev), Some(o), Some(n)) => {
                let half = if o.half == Half::Test || n.half == Half::Test {
                    Half::Test
                } else {
                    Half::All
                };
                ev.difference(&n.rep, &o.rep, bench, half)
            }
            _ => None,
        };
        let (c, m) = match change {
            Some(d) => (
                format!("{} (n {})", fmt_iv(&d.diff), d.a.items),
                moved(&d.diff),
            ),
            None => ("-".into(), "-"),
        };
        let _ = writeln!(w, "| {label} | {c_old} | {c_new} | {c} | {m} |");
    }

    /// A level measured once per model (no items): Welch over seeds for the change.
    fn seeds(&self, w: &mut String, label: &str, old: &[f64], new: &[f64]) {
        let cell = |v: &[f64]| {
            if v.is_empty() {
                "-".into()
            } else {
                fmt_iv(&seed_mean(v))
            }
        };
        let (c, m) = if old.len() >= 2 && new.len() >= 2 {
            let d = seed_difference(new, old);
            (fmt_iv(&d), moved(&d))
        } else {
            ("-".into(), "-")
        };
        let _ = writeln!(w, "| {label} | {} | {} | {c} | {m} |", cell(old), cell(new));
    }

    /// A contrast a - b on items, in each budget.
    #[allow(clippy::too_many_arguments)]
    fn contrast_items(
        &self,
        w: &mut String,
        label: &str,
        a: (&str, &str),
        b: (&str, &str),
        names: (&str, &str),
        representation: (&str, &str),
        bench: &str,
    ) {
        let one = |old: bool| -> Option<Interval> {
            let x = self.side(old, if old { a.0 } else { a.1 }, representation.0, bench)?;
            let y = self.side(old, if old { b.0 } else { b.1 }, representation.1, bench)?;
            let half = if x.half == Half::Test || y.half == Half::Test {
                Half::Test
            } else {
                Half::All
            };
            Some(self.ev()?.difference(&x.rep, &y.rep, bench, half)?.diff)
        };
        let (up, down) = higher(names.0, names.1);
        self.contrast_line(w, label, one(true), one(false), (&up, &down));
    }

    fn contrast_line(
        &self,
        w: &mut String,
        label: &str,
        old: Option<Interval>,
        new: Option<Interval>,
        verdicts: Verdicts,
    ) {
        let cell = |iv: &Option<Interval>| match iv {
            Some(iv) => format!("{}: {}", fmt_iv(iv), answer(iv, verdicts)),
            None => "-".into(),
        };
        let verdict = match (&old, &new) {
            (Some(o), Some(n)) => changed(o, n, verdicts),
            _ => "-".into(),
        };
        let _ = writeln!(
            w,
            "| {label} | {} | {} | - | {verdict} |",
            cell(&old),
            cell(&new)
        );
    }

    /// A contrast a - b of a per-seed quantity, in each budget (Welch over seeds).
    fn contrast_seeds(
        &self,
        w: &mut String,
        label: &str,
        old: (Vec<f64>, Vec<f64>),
        new: (Vec<f64>, Vec<f64>),
        names: (&str, &str),
    ) {
        let d = |(a, b): (Vec<f64>, Vec<f64>)| {
            (a.len() >= 2 && b.len() >= 2).then(|| seed_difference(&a, &b))
        };
        let (up, down) = higher(names.0, names.1);
        self.contrast_line(w, label, d(old), d(new), (&up, &down));
    }

    /// A per-seed loss against its context-free level (a constant of the corpus and the
    /// held-out targets, the same in both budgets), in each budget: mean(loss) - level with a
    /// t interval over seeds, read as above / below the level.
    fn against_level(
        &self,
        w: &mut String,
        label: &str,
        old: (Vec<f64>, Vec<f64>),
        new: (Vec<f64>, Vec<f64>),
    ) {
        let d = |(loss, level): (Vec<f64>, Vec<f64>)| {
            let level = *level.first()?;
            (loss.len() >= 2).then(|| {
                let mut iv = seed_mean(&loss);
                iv.estimate -= level;
                iv.lo -= level;
                iv.hi -= level;
                iv
            })
        };
        self.contrast_line(
            w,
            label,
            d(old),
            d(new),
            ("above the level", "below the level"),
        );
    }

    /// How many seeds of each arm (frozen, trained) pass a per-seed test, in each budget, with
    /// Fisher's exact test on the counts: a model can sit on a context-free plateau in one
    /// seed and leave it in another, which a mean over seeds hides (with 3 seeds an arm the
    /// smallest p is 0.10). `None`: not measured in that budget.
    fn arm_counts(
        &self,
        w: &mut String,
        label: &str,
        old: Option<[(u64, u64); 2]>,
        new: Option<[(u64, u64); 2]>,
    ) {
        let one = |arms: Option<[(u64, u64); 2]>| -> Option<(String, f64)> {
            let [(a, n), (b, m)] = arms?;
            let p = analysis::inference::fisher_exact(a, n, b, m);
            Some((
                format!("{a} of {n} vs {b} of {m} (Fisher p {})", fmt_p(p)),
                p,
            ))
        };
        let (o, n) = (one(old), one(new));
        let cell = |x: &Option<(String, f64)>| x.as_ref().map_or("-".into(), |x| x.0.clone());
        let verdict = match (&o, &n) {
            (Some((_, p)), Some((_, q))) if (*p < 0.05) == (*q < 0.05) => {
                if *q < 0.05 {
                    "no: a difference shown in both".to_string()
                } else {
                    "no: no difference shown in either".to_string()
                }
            }
            (Some(_), Some(_)) => "**yes**: the exact test's verdict differs".into(),
            _ => "-".into(),
        };
        let _ = writeln!(
            w,
            "| {label} | {} | {} | - | {verdict} |",
            cell(&o),
            cell(&n)
        );
    }

    /// Of a model's seeds, how many pass: losses below their context-free level.
    fn below_level((loss, level): &(Vec<f64>, Vec<f64>)) -> Option<(u64, u64)> {
        let level = *level.first()?;
        (!loss.is_empty()).then(|| {
            let below = loss.iter().filter(|x| **x < level).count() as u64;
            (below, loss.len() as u64)
        })
    }

    /// Of a model's seeds, how many pass: a gain at `[MASK]` whose interval lies above 0.
    fn gain_above_zero(lo: &[f64]) -> Option<(u64, u64)> {
        (!lo.is_empty()).then(|| {
            let above = lo.iter().filter(|x| **x > 0.0).count() as u64;
            (above, lo.len() as u64)
        })
    }

    fn values(
        src: &Sources,
        exp: Experiment,
        model: &str,
        representation: &str,
        layer: Option<usize>,
        benchmark: &str,
        metric: &str,
    ) -> Vec<f64> {
        src.values(
            exp,
            &Rep::new(model, representation, layer),
            benchmark,
            metric,
        )
    }

    /// Per seed, the mean over the layer-1 tables E W^h (q, k, v of every head) of linear
    /// CKA(E W^h, E) minus its permutation null: how much of the embedding each head keeps.
    fn head_cka_excess(src: &Sources) -> Vec<f64> {
        let mut per_table: Vec<Vec<f64>> = Vec::new();
        for p in ["q", "k", "v"] {
            for h in 0..16 {
                let r = format!("embedding-{p}-head-{h}");
                let get =
                    |m: &str| Self::values(src, Experiment::Qkv, MLM, &r, Some(1), "geometry", m);
                let (c, n) = (get("cka_with_embedding"), get("cka_with_embedding_null"));
                if !c.is_empty() && c.len() == n.len() {
                    per_table.push(c.iter().zip(&n).map(|(c, n)| c - n).collect());
                }
            }
        }
        let Some(seeds) = per_table.first().map(Vec::len) else {
            return Vec::new();
        };
        if per_table.iter().any(|t| t.len() != seeds) {
            return Vec::new();
        }
        (0..seeds)
            .map(|s| per_table.iter().map(|t| t[s]).sum::<f64>() / per_table.len() as f64)
            .collect()
    }

    fn header(w: &mut String, title: &str, note: &str) {
        let _ = writeln!(w, "#### {title}\n");
        if !note.is_empty() {
            let _ = writeln!(w, "{note}\n");
        }
        let _ = writeln!(
            w,
            "| measure | 800 steps | this study | study - 800 steps | changed? |"
        );
        let _ = writeln!(w, "|---|---|---|---|---|");
    }

    fn write(&self, shown: &str) -> String {
        let mut md = String::new();
        let w = &mut md;
        let (oc, nc) = (self.old.cast, self.study.cast);
        let _ = writeln!(w, "### What changed from the 800-step models\n");
        let _ = writeln!(w, "Each question's answer from the 800-step models (the paper's results in `{shown}`) beside this study's. A level (a score, a loss, a z-score) gets the change \"study - 800 steps\" with its 95% interval (items resampled and the seeds' spread at their degrees of freedom where items stand behind it, else a Welch t interval over seeds) and rose / fell / no change shown; a contrast \"a - b\" inside each budget gets each budget's verdict, and the answer **changed** when the verdicts differ. Best layers are chosen on the dev half in each budget separately and scored on the test half. Where the two columns use different models for a role, the label names both.\n");

        let sgns = ModelId::Sgns.name();
        let role = |o: ModelId, n: ModelId| {
            if o == n {
                o.label().to_string()
            } else {
                format!("{} (800 steps: {})", n.label(), o.label())
            }
        };

        Self::header(
            w,
            "Do contextual vectors solve analogies?",
            "Google analogies, 3CosAdd accuracy; chance is about 0.0002. word2vec is trained the same way in both columns: its line is the control (a change there is noise, or a changed word2vec config).",
        );
        self.score(
            w,
            "word2vec SGNS (control)",
            (sgns, sgns),
            "static",
            ANALOGY,
        );
        self.score(w, "MLM embedding matrix", (MLM, MLM), "embedding", ANALOGY);
        for r in ["aggregated", "decontextualized"] {
            self.score(w, &format!("MLM best {r} layer"), (MLM, MLM), r, ANALOGY);
        }
        let clm = role(oc.clm, nc.clm);
        self.score(
            w,
            &format!("{clm} embedding matrix"),
            (oc.clm.name(), nc.clm.name()),
            "embedding",
            ANALOGY,
        );
        self.contrast_items(
            w,
            "word2vec SGNS - MLM best aggregated layer",
            (sgns, sgns),
            (MLM, MLM),
            ("word2vec", "MLM"),
            ("static", "aggregated"),
            ANALOGY,
        );
        self.contrast_items(
            w,
            "MLM best aggregated layer - MLM embedding matrix",
            (MLM, MLM),
            (MLM, MLM),
            ("layer", "embedding"),
            ("aggregated", "embedding"),
            ANALOGY,
        );
        let _ = writeln!(w);

        Self::header(
            w,
            "Does the embedding layer learn word similarity?",
            "Spearman rho with human judgements on the three sets large enough to decide alone.",
        );
        for (bench, short) in [
            ("WS-353-ALL", "WS-353"),
            ("SIMLEX-999", "SimLex-999"),
            ("MEN-TR-3k", "MEN"),
        ] {
            self.score(
                w,
                &format!("{short}: word2vec SGNS (control)"),
                (sgns, sgns),
                "static",
                bench,
            );
            self.score(
                w,
                &format!("{short}: MLM embedding matrix"),
                (MLM, MLM),
                "embedding",
                bench,
            );
            self.score(
                w,
                &format!("{short}: MLM best aggregated layer"),
                (MLM, MLM),
                "aggregated",
                bench,
            );
            self.score(
                w,
                &format!("{short}: {clm} embedding matrix"),
                (oc.clm.name(), nc.clm.name()),
                "embedding",
                bench,
            );
            self.contrast_items(
                w,
                &format!("{short}: word2vec SGNS - MLM embedding matrix"),
                (sgns, sgns),
                (MLM, MLM),
                ("word2vec", "MLM"),
                ("static", "embedding"),
                bench,
            );
        }
        let _ = writeln!(w);

        Self::header(
            w,
            "Are W_Q, W_K, W_V the embedding, and must they differ?",
            "Held-out masked-token loss over the whole held-out split (lower is better); how much of the embedding each layer-1 head keeps, linear CKA(E W^h, E) minus its permutation null, averaged over the q, k and v tables.",
        );
        let loss = |src: &Sources, exp: Experiment, m: &str| {
            Self::values(src, exp, m, "training", None, "training", "heldout_loss")
        };
        // The chance level of that loss: what a masked LM reaches by copying its visible
        // input and ignoring context (`Sequences::context_free_heldout_loss`).
        let level = |src: &Sources, exp: Experiment, m: &str| {
            Self::values(
                src,
                exp,
                m,
                "training",
                None,
                "training",
                "context_free_loss",
            )
        };
        let with_level =
            |src: &Sources, exp: Experiment, m: &str| (loss(src, exp, m), level(src, exp, m));
        self.seeds(
            w,
            "held-out loss, MLM (separate W_Q, W_K, W_V)",
            &loss(self.old, Experiment::Qkv, MLM),
            &loss(self.study, Experiment::Qkv, MLM),
        );
        self.against_level(
            w,
            "held-out loss - context-free level, MLM (above: no sign of predicting from context)",
            with_level(self.old, Experiment::Qkv, MLM),
            with_level(self.study, Experiment::Qkv, MLM),
        );
        // Where only context helps (`exp::context_gain`): measured only where the final
        // weights were at hand.
        let gain = |src: &Sources, exp: Experiment, m: &str, suffix: &str| {
            let metric = format!("context_gain_at_mask{suffix}");
            Self::values(src, exp, m, "training", None, "training", &metric)
        };
        self.seeds(
            w,
            "gain over the unigram at [MASK] targets, MLM (nats per target; above 0: predicts from context)",
            &gain(self.old, Experiment::Qkv, MLM, ""),
            &gain(self.study, Experiment::Qkv, MLM, ""),
        );
        self.seeds(
            w,
            "CKA(E W^h, E) - null, MLM layer 1",
            &Self::head_cka_excess(self.old),
            &Self::head_cka_excess(self.study),
        );
        for v in [ModelId::SharedQk, ModelId::SharedQkv] {
            let pair = |src: &Sources| {
                (
                    loss(src, Experiment::Qkv, v.name()),
                    loss(src, Experiment::Qkv, MLM),
                )
            };
            self.contrast_seeds(
                w,
                &format!("held-out loss, {} - separate (higher is worse)", v.label()),
                pair(self.old),
                pair(self.study),
                (v.label(), "separate"),
            );
            self.contrast_items(
                w,
                &format!("WS-353, {} embedding - separate embedding", v.label()),
                (v.name(), v.name()),
                (MLM, MLM),
                (v.label(), "separate"),
                ("embedding", "embedding"),
                "WS-353-ALL",
            );
        }
        let _ = writeln!(w);

        let frozen = role(oc.frozen, nc.frozen);
        let reference = role(oc.frozen_reference, nc.frozen_reference);
        Self::header(
            w,
            "Would frozen random embeddings do?",
            &format!("{frozen} against {reference}."),
        );
        let pair = |src: &Sources, c: Cast| {
            (
                loss(src, Experiment::Frozen, c.frozen.name()),
                loss(src, Experiment::Frozen, c.frozen_reference.name()),
            )
        };
        self.contrast_seeds(
            w,
            "held-out loss, frozen - trained input (higher is worse)",
            pair(self.old, oc),
            pair(self.study, nc),
            ("frozen", "trained"),
        );
        let arms = |src: &Sources, c: Cast| -> Option<[(u64, u64); 2]> {
            let [f, t] = [c.frozen, c.frozen_reference]
                .map(|m| Self::below_level(&with_level(src, Experiment::Frozen, m.name())));
            Some([f?, t?])
        };
        self.arm_counts(
            w,
            "seeds ending below the context-free level, frozen vs trained input",
            arms(self.old, oc),
            arms(self.study, nc),
        );
        let gains = |src: &Sources, c: Cast| -> Option<[(u64, u64); 2]> {
            let [f, t] = [c.frozen, c.frozen_reference]
                .map(|m| Self::gain_above_zero(&gain(src, Experiment::Frozen, m.name(), "_lo")));
            Some([f?, t?])
        };
        self.arm_counts(
            w,
            "seeds whose gain over the unigram at [MASK] lies above 0, frozen vs trained input",
            gains(self.old, oc),
            gains(self.study, nc),
        );
        for (bench, short) in [("WS-353-ALL", "WS-353"), (ANALOGY, "3CosAdd")] {
            self.contrast_items(
                w,
                &format!("{short}, best aggregated layer: trained - frozen input"),
                (oc.frozen_reference.name(), nc.frozen_reference.name()),
                (oc.frozen.name(), nc.frozen.name()),
                ("trained", "frozen"),
                ("aggregated", "aggregated"),
                bench,
            );
        }
        let _ = writeln!(w);

        Self::header(
            w,
            "Does self-attention or the objective make collocated words similar?",
            "Collocation z-score of the embedding matrix (0: co-occurrence does not make vectors similar; ±2 is the null's 95% band); word2vec and the untrained model are the controls.",
        );
        let z = |src: &Sources, m: &str, r: &str| {
            Self::values(
                src,
                Experiment::Objective,
                m,
                r,
                None,
                "collocation",
                "z_collocated",
            )
        };
        for (label, o, n, r) in [
            ("word2vec SGNS (control)", sgns, sgns, "static"),
            ("MLM", MLM, MLM, "embedding"),
            (clm.as_str(), oc.clm.name(), nc.clm.name(), "embedding"),
            (
                "untrained (control)",
                ModelId::Untrained.name(),
                ModelId::Untrained.name(),
                "embedding",
            ),
        ] {
            self.seeds(w, label, &z(self.old, o, r), &z(self.study, n, r));
        }
        self.against_level(
            w,
            &format!("held-out loss - context-free level, {clm}"),
            with_level(self.old, Experiment::Objective, oc.clm.name()),
            with_level(self.study, Experiment::Objective, nc.clm.name()),
        );
        self.contrast_seeds(
            w,
            &format!("MLM - {clm}"),
            (
                z(self.old, MLM, "embedding"),
                z(self.old, oc.clm.name(), "embedding"),
            ),
            (
                z(self.study, MLM, "embedding"),
                z(self.study, nc.clm.name(), "embedding"),
            ),
            ("MLM", "CLM"),
        );
        if let Some(na) = nc.no_attention {
            let old = oc
                .no_attention
                .map(|o| {
                    (
                        z(self.old, MLM, "embedding"),
                        z(self.old, o.name(), "embedding"),
                    )
                })
                .unwrap_or_default();
            self.contrast_seeds(
                w,
                &format!(
                    "MLM - {} (attention replaced by a uniform average)",
                    na.label()
                ),
                old,
                (
                    z(self.study, MLM, "embedding"),
                    z(self.study, na.name(), "embedding"),
                ),
                ("MLM", "no attention"),
            );
        }
        let _ = writeln!(w);

        Self::header(
            w,
            "How contextual is each layer?",
            "Ethayarajh's measures on the MLM: intra-sentence similarity minus its null (random tokens at the same positions), and self-similarity; the untrained model is the control.",
        );
        let layers = self
            .study
            .get(Experiment::Contextuality)
            .map(|t| t.layers(MLM, "contextual"))
            .unwrap_or_default();
        let c = |src: &Sources, m: &str, l: usize, metric: &str| {
            Self::values(
                src,
                Experiment::Contextuality,
                m,
                "contextual",
                Some(l),
                "contextuality",
                metric,
            )
        };
        if let (Some(&first), Some(&last)) = (layers.get(1), layers.last()) {
            for l in [first, last] {
                self.seeds(
                    w,
                    &format!("intra-sentence - null, MLM layer {l}"),
                    &c(self.old, MLM, l, "intra_sentence_excess"),
                    &c(self.study, MLM, l, "intra_sentence_excess"),
                );
            }
            self.seeds(
                w,
                &format!("self-similarity, MLM layer {last}"),
                &c(self.old, MLM, last, "self_similarity"),
                &c(self.study, MLM, last, "self_similarity"),
            );
            let u = ModelId::Untrained.name();
            self.seeds(
                w,
                &format!("intra-sentence - null, untrained layer {last} (control)"),
                &c(self.old, u, last, "intra_sentence_excess"),
                &c(self.study, u, last, "intra_sentence_excess"),
            );
        }
        let _ = writeln!(w);
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exp::eval::Benchmarks;
    use crate::exp::paper::PAPER;
    use crate::output::{encode_cosines, ItemRow, TidyRow};
    use analysis::similarity::SimilaritySet;

    const PAIRS: usize = 40;

    fn benchmarks() -> Benchmarks {
        Benchmarks {
            analogy: Vec::new(),
            similarity: vec![SimilaritySet {
                name: "WS-353-ALL".into(),
                pairs: (0..PAIRS)
                    .map(|i| (format!("a{i}"), format!("b{i}"), i as f64))
                    .collect(),
            }],
        }
    }

    /// Cosines that rank the pairs like the human scores (`agree`) or in reverse.
    fn cosines(model: &str, agree: bool) -> Vec<ItemRow> {
        (1..=3)
            .map(|seed| {
                let c: Vec<Option<f64>> = (0..PAIRS)
                    .map(|i| {
                        let x = i as f64 / PAIRS as f64 + 0.001 * seed as f64;
                        Some(if agree { x } else { -x })
                    })
                    .collect();
                ItemRow {
                    model: model.into(),
                    representation: if model == ModelId::Sgns.name() {
                        "static".into()
                    } else {
                        "embedding".into()
                    },
                    layer: None,
                    benchmark: "WS-353-ALL".into(),
                    kind: "cosine".into(),
                    seed: Some(seed),
                    values: encode_cosines(&c),
                }
            })
            .collect()
    }

    /// One `training` row per seed of `metric` in `exp`'s view.
    fn training(exp: Experiment, model: &str, metric: &str, values: &[f64]) -> Vec<TidyRow> {
        values
            .iter()
            .zip(1..)
            .map(|(&v, seed)| TidyRow {
                benchmark: "training".into(),
                metric: metric.into(),
                value: v,
                seed: Some(seed),
                ..TidyRow::template(&format!("{exp:?}").to_lowercase(), model, "training")
            })
            .collect()
    }

    fn losses(model: &str, values: [f64; 3]) -> Vec<TidyRow> {
        training(Experiment::Qkv, model, "heldout_loss", &values)
    }

    /// Held-out losses with the masked LM's context-free level beside each seed.
    fn losses_and_level(exp: Experiment, model: &str, values: &[f64]) -> Vec<TidyRow> {
        let level = vec![6.313; values.len()];
        [
            training(exp, model, "heldout_loss", values),
            training(exp, model, "context_free_loss", &level),
        ]
        .concat()
    }

    fn sources(items: Vec<ItemRow>, qkv: Vec<TidyRow>) -> Sources {
        Sources {
            tables: PAPER.iter().map(|&e| (e, None)).collect(),
            stale: Vec::new(),
            rows: vec![(Experiment::Qkv, qkv)],
            evidence: Some(Evidence::from_rows(items, &benchmarks())),
            cast: Cast::default(),
        }
    }

    /// The section for `study` read against `old` as the paper's results.
    fn against(old: Sources, study: &mut Sources) -> String {
        section(
            study,
            Baseline {
                src: old,
                shown: "results/".into(),
            },
        )
    }

    fn line<'a>(md: &'a str, start: &str) -> &'a str {
        md.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start:?} in\n{md}"))
    }

    /// 800 steps: the MLM embedding ranks WS-353 in reverse (rho -1), and shared-QK beats
    /// separate W_Q/W_K by 0.04 nats. The study: the embedding ranks it like people (rho 1) and
    /// the two losses are equal. word2vec agrees with people in both.
    #[test]
    fn a_changed_answer_is_named_and_an_unchanged_control_is_not() {
        let sgns = ModelId::Sgns.name();
        let qk = ModelId::SharedQk.name();
        let old = sources(
            [cosines(sgns, true), cosines(MLM, false)].concat(),
            [
                losses(MLM, [6.44, 6.43, 6.45]),
                losses(qk, [6.40, 6.39, 6.41]),
            ]
            .concat(),
        );
        let mut study = sources(
            [cosines(sgns, true), cosines(MLM, true)].concat(),
            [
                losses(MLM, [5.40, 5.41, 5.39]),
                losses(qk, [5.41, 5.39, 5.40]),
            ]
            .concat(),
        );
        let md = against(old, &mut study);
        // Every resample of a perfectly (anti-)monotone ranking gives rho exactly +-1.
        assert_eq!(
            line(&md, "| WS-353: MLM embedding matrix |"),
            "| WS-353: MLM embedding matrix | -1.000 [-1.000, -1.000] (n 40) | 1.000 [1.000, 1.000] (n 40) | 2.000 [2.000, 2.000] (n 40) | rose |"
        );
        assert_eq!(
            line(&md, "| WS-353: word2vec SGNS (control) |"),
            "| WS-353: word2vec SGNS (control) | 1.000 [1.000, 1.000] (n 40) | 1.000 [1.000, 1.000] (n 40) | 0.000 [0.000, 0.000] (n 40) | no change shown |"
        );
        assert_eq!(
            line(&md, "| WS-353: word2vec SGNS - MLM embedding matrix |"),
            "| WS-353: word2vec SGNS - MLM embedding matrix | 2.000 [2.000, 2.000]: word2vec higher | 0.000 [0.000, 0.000]: no difference shown | - | **yes**: was \"word2vec higher\", now \"no difference shown\" |"
        );
        // Losses: Welch over seeds. 800 steps: -0.04 with sd 0.01 a side, t(4) 2.776 ->
        // half-width 2.776 * sqrt(2 * 0.0001 / 3) = 0.0227.
        let qk_line = line(&md, "| held-out loss, MLM shared-QK - separate");
        assert!(
            qk_line.contains("| -0.040 [-0.063, -0.017]: separate higher | 0.000 [")
                && qk_line
                    .ends_with("| **yes**: was \"separate higher\", now \"no difference shown\" |"),
            "{qk_line}"
        );
        assert!(
            line(&md, "| held-out loss, MLM (separate")
                .ends_with("| -1.040 [-1.063, -1.017] | fell |"),
            "{md}"
        );
        // Nothing measured: a dash, never a made-up verdict.
        assert!(line(&md, "| MEN: MLM embedding matrix |").ends_with("| - | - | - | - |"));
        // No context-free level in either view: no line can say above or below it.
        assert!(
            line(&md, "| held-out loss - context-free level, MLM").ends_with("| - | - | - | - |")
        );
    }

    /// The masked LM against its context-free level (6.313): 800 steps above it, the study
    /// below it; the frozen-input arm counted seed by seed, Fisher's exact test per budget.
    #[test]
    fn the_loss_is_read_against_the_context_free_level_in_each_budget() {
        let (frozen, trained) = (ModelId::FrozenEmbedding.name(), MLM);
        let old = Sources {
            rows: vec![
                (
                    Experiment::Qkv,
                    losses_and_level(Experiment::Qkv, MLM, &[6.44, 6.43, 6.45]),
                ),
                (
                    Experiment::Frozen,
                    [
                        losses_and_level(Experiment::Frozen, frozen, &[7.0, 7.1, 6.9]),
                        losses_and_level(Experiment::Frozen, trained, &[6.44, 6.43, 6.45]),
                    ]
                    .concat(),
                ),
            ],
            ..sources(cosines(MLM, true), Vec::new())
        };
        // Five seeds an arm in the study: every frozen seed above the level, every trained
        // one below it.
        let mut study = Sources {
            rows: vec![
                (
                    Experiment::Qkv,
                    losses_and_level(Experiment::Qkv, MLM, &[5.40, 5.41, 5.39]),
                ),
                (
                    Experiment::Frozen,
                    [
                        losses_and_level(Experiment::Frozen, frozen, &[6.92, 6.95, 6.4, 6.5, 6.9]),
                        losses_and_level(Experiment::Frozen, trained, &[5.6, 5.5, 5.4, 6.2, 6.3]),
                        // The gain at [MASK], measured in the study only: frozen seeds 1 and 3
                        // above 0 (their intervals' lower ends), trained seeds all.
                        training(
                            Experiment::Frozen,
                            frozen,
                            "context_gain_at_mask_lo",
                            &[0.01, -0.02, 0.03, -0.01, 0.0],
                        ),
                        training(
                            Experiment::Frozen,
                            trained,
                            "context_gain_at_mask_lo",
                            &[0.9, 1.0, 1.1, 0.4, 0.3],
                        ),
                    ]
                    .concat(),
                ),
            ],
            ..sources(cosines(MLM, true), Vec::new())
        };
        let md = against(old, &mut study);
        // Mean 6.44, sd 0.01 over 3 seeds: t(2) 4.303 * 0.01 / sqrt(3) = 0.0248 either side
        // of 6.44 - 6.313 = 0.127; the study's 5.40 is 0.913 below.
        assert_eq!(
            line(&md, "| held-out loss - context-free level, MLM"),
            "| held-out loss - context-free level, MLM (above: no sign of predicting from context) | 0.127 [0.102, 0.152]: above the level | -0.913 [-0.938, -0.888]: below the level | - | **yes**: was \"above the level\", now \"below the level\" |"
        );
        // 800 steps: 0 of 3 vs 0 of 3, p 1. Study: 0 of 5 vs 5 of 5; the only tables as
        // extreme with these margins are this one and its mirror, so p = 2 / C(10, 5) = 2/252.
        assert_eq!(
            line(&md, "| seeds ending below the context-free level"),
            "| seeds ending below the context-free level, frozen vs trained input | 0 of 3 vs 0 of 3 (Fisher p 1.00) | 0 of 5 vs 5 of 5 (Fisher p 0.0079) | - | **yes**: the exact test's verdict differs |"
        );
        // 2 of 5 vs 5 of 5, 7 passes among 10 seeds: the frozen arm's count k is
        // hypergeometric, C(7,k) C(3,5-k) / C(10,5) = 21, 105, 105, 21 (/ 252) for k = 2..5, and
        // the tables as unlikely as this one are k = 2 and 5: p = 42/252 = 0.17. The 800-step
        // column has no gain measured: a dash, not a verdict.
        assert_eq!(
            line(&md, "| seeds whose gain over the unigram at [MASK]"),
            "| seeds whose gain over the unigram at [MASK] lies above 0, frozen vs trained input | - | 2 of 5 vs 5 of 5 (Fisher p 0.17) | - | - |"
        );
    }

    #[test]
    fn only_a_directory_under_the_papers_results_has_a_baseline() {
        let dir = tempfile::tempdir().unwrap();
        let study = dir.path().join("fair-budget");
        assert!(Baseline::find(&study).unwrap().is_none());
        std::fs::create_dir_all(dir.path().join("analogy")).unwrap();
        std::fs::write(
            dir.path().join("analogy/measurements.csv"),
            "model,seed,items\n",
        )
        .unwrap();
        let base = Baseline::find(&study)
            .unwrap()
            .expect("the paper's results above");
        assert_eq!(base.shown, format!("{}/", dir.path().display()));
    }
}
