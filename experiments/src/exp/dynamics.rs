//! Followed through training (`--exp dynamics`, issue 16): at equal data, which model learns
//! word similarity, and when does it appear in a transformer's embedding layer?
//!
//! One run per (variant, seed) trains with the study's recipe (the `[dynamics]` table of
//! `experiments/configs/paper.toml`) until its held-out loss plateaus or `epochs` passes are
//! done, keeping its weights at log-spaced points (`snapshots`, in epochs). Each snapshot is
//! measured like a final model ([`Study::measure_transformer`]: analogy, similarity and
//! collocation of the embedding and of every decontextualized layer, contextuality, W_Q/W_K/W_V
//! geometry, held-out loss), without the costly pooled vectors unless `pooled_snapshots`.
//! word2vec SGNS and CBOW are trained afresh on each snapshot's token count (the learning rate
//! decaying over that budget: `Word2VecConfig::max_tokens`), so the two families share one
//! axis, corpus tokens read. The untrained model is the control at 0 tokens.
//!
//! Rows ([`DynamicsRow`]) are a model's tidy rows with `step`, `tokens_seen` and `epochs`,
//! kept per model as `measurements/<run>/dynamics-<h>.csv.gz` (committed, so the study is
//! completed over several sittings and only what is missing is trained or measured), and
//! gathered in `dynamics/dynamics.csv`; figures draw each measure against tokens seen.
//!
//! As soon as a run ends its final model is also measured in full, pooled vectors and
//! per-item outcomes included ([`Study::follow`]), while its weights are still in the run
//! cache. Then (`findings`) the final models go through the paper's seven comparisons with
//! `[roles]` read from the config (the matched-targets causal LM, the frozen input against the
//! untied masked LM, the no-attention control) and `REPORT.md` gives every finding with its
//! interval. Everything lives under `--out` (`results/` for the committed study): the curves in
//! `dynamics/`, each comparison in its own directory, `REPORT.md` and `cost.csv`.

use std::collections::BTreeMap;

use super::settings::{ModelId, QUICK_STEPS_PER_EPOCH};
use super::study::{DynamicsRow, Study};
use crate::cli::Args;
use crate::output;
use crate::plot::{self, Series};
use transformer::data::Objective;

/// `--exp measure-model --model <name> --seed <s>` (what `--jobs` starts): one model of the
/// study trained and measured, its measurements left for the parent.
pub fn measure_one(args: &Args, work: super::jobs::Work) -> anyhow::Result<()> {
    let id = super::jobs::model_arg(args)?;
    let cfg = super::settings::load_config(args, "measure-model")?;
    let study = Study::load(args, cfg)?;
    let pooled = study
        .cfg
        .dynamics
        .as_ref()
        .is_some_and(|d| d.pooled_snapshots);
    for &seed in &study.cfg.seeds_of(id) {
        match work {
            super::jobs::Work::Scores => drop(study.scores(id, seed)?),
            super::jobs::Work::Snapshots => drop(study.follow(id, seed, pooled)?),
        }
    }
    Ok(())
}

/// `--exp dynamics`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let (cfg, path) = super::settings::load_config_from(args, "dynamics")?;
    let Some(dynamics) = cfg.dynamics.clone() else {
        anyhow::bail!(
            "--exp dynamics needs a [dynamics] table in its config (experiments/configs/paper.toml has one)"
        );
    };
    let ids = dynamics.model_ids()?;
    if dynamics.findings {
        cfg.check_round(args)?;
    }
    let study = Study::load(args, cfg)?;
    let t = &study.cfg.training;
    let epoch = if args.quick {
        format!("{QUICK_STEPS_PER_EPOCH} steps (--quick: a toy epoch)")
    } else {
        format!("{} steps", study.seqs.steps_per_epoch(t.batch_size))
    };
    println!(
        "schedule: up to {} steps ({} epochs of {epoch}; lr {}), stop when the held-out loss gains less than {} nats over an epoch; snapshots at steps {:?}",
        t.steps,
        dynamics.epochs,
        if study.cfg.learning_rates.is_empty() {
            format!("{:.0e}", t.lr)
        } else {
            format!(
                "{:.0e} where [learning_rates] names none",
                t.lr
            )
        },
        dynamics.plateau_min_gain,
        t.snapshot_steps
    );
    let pooled = dynamics.pooled_snapshots;
    let pending = study.missing(&ids, &|id, seed| study.is_followed(id, seed, pooled))?;
    study.announce(&pending, args.jobs);
    super::jobs::run_pending(
        args,
        path.as_deref(),
        &pending,
        super::jobs::Work::Snapshots,
    )?;
    let mut rows = Vec::new();
    for &id in &ids {
        for &seed in &study.cfg.seeds_of(id) {
            rows.extend(study.follow(id, seed, pooled)?);
        }
    }
    let dir = study.cfg.views_dir(&study.out).join("dynamics");
    output::write_csv(&dir.join("dynamics.csv"), &rows)?;
    // Each answer's curve with intervals, from the snapshots' per-item outcomes.
    // Models measured before snapshot outcomes were kept have none, and are named.
    let mut snapshot_items = Vec::new();
    let mut without = Vec::new();
    for &id in &ids {
        for &seed in &study.cfg.seeds_of(id) {
            let path = study.dynamics_items_path(id, seed, pooled);
            if crate::kept::exists(&path)? {
                // Only the tables the curves read: the files also hold every other benchmark.
                snapshot_items.extend(
                    crate::kept::read_csv::<super::study::SnapshotItemRow>(&path)?
                        .into_iter()
                        .filter(|r| super::budget::BENCHMARKS.contains(&r.benchmark.as_str())),
                );
            } else {
                without.push(format!("{} seed {seed}", id.name()));
            }
        }
    }
    if !without.is_empty() {
        println!(
            "answers along the budget: no per-item snapshot outcomes kept for {}",
            without.join(", ")
        );
    }
    output::write_csv(
        &dir.join("budget.csv"),
        &super::budget::rows(snapshot_items, &study.benchmarks),
    )?;
    // The held-out loss figure draws each objective's context-free level beside the curves.
    let levels = [
        ("masked LM, context-free level", Objective::Mlm),
        ("causal LM, context-free level", Objective::Clm),
    ]
    .map(|(name, o)| (name, study.context_free_level(o)));
    figures(&rows, &ids, &levels, study.reported_split(), &dir)?;
    println!("wrote {}", dir.display());
    if dynamics.findings {
        super::paper::views(args, path.as_deref(), &study)?;
        if study.cfg.round {
            println!("{}", super::paper::ROUND_REPORT);
            return cost(&study, &ids);
        }
        let config = super::report::config_label(path.as_deref());
        super::report::write(
            &args.out,
            study.cast,
            Some(&super::report::Described::of(&study, &config)),
            study.cfg.training.dev_split,
        )?;
    }
    cost(&study, &ids)
}

/// One model's line of `cost.csv`: the sums of its ledger ([`super::ledger`]).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct CostRow {
    pub model: String,
    pub seed: u64,
    pub wall_s: f64,
    pub cpu_s: f64,
    /// Pieces of work (a run resumed in a later sitting adds one).
    pub pieces: usize,
    /// Pieces stopped before their end (a sitting that ended mid-run).
    pub unfinished: usize,
    pub cpu: String,
    /// The same sums by piece of work: training (`train`), measuring the snapshots
    /// (`snapshots`), measuring the final model in full (`scores`), and `dynamics` rows, which
    /// hold training and snapshot measuring together (word2vec, the untrained model, and every
    /// model measured before the ledger split them).
    #[serde(default)]
    pub train_wall_s: f64,
    #[serde(default)]
    pub train_cpu_s: f64,
    #[serde(default)]
    pub snapshots_wall_s: f64,
    #[serde(default)]
    pub snapshots_cpu_s: f64,
    #[serde(default)]
    pub scores_wall_s: f64,
    #[serde(default)]
    pub scores_cpu_s: f64,
    #[serde(default)]
    pub dynamics_wall_s: f64,
    #[serde(default)]
    pub dynamics_cpu_s: f64,
}

impl CostRow {
    /// The sums of one model's ledger, in all and by piece of work.
    pub fn of(model: &str, seed: u64, ledger: &[super::ledger::TimeRow]) -> CostRow {
        let c = super::ledger::cost(ledger);
        let mut cpus: Vec<&str> = ledger.iter().map(|r| r.cpu.as_str()).collect();
        cpus.dedup();
        let of = |work: &str| {
            let pieces: Vec<super::ledger::TimeRow> =
                ledger.iter().filter(|r| r.work == work).cloned().collect();
            super::ledger::cost(&pieces)
        };
        let (train, snapshots, scores, dynamics) =
            (of("train"), of("snapshots"), of("scores"), of("dynamics"));
        CostRow {
            model: model.into(),
            seed,
            wall_s: c.wall_s,
            cpu_s: c.cpu_s,
            pieces: c.rows,
            unfinished: c.unfinished,
            cpu: cpus.join(" + "),
            train_wall_s: train.wall_s,
            train_cpu_s: train.cpu_s,
            snapshots_wall_s: snapshots.wall_s,
            snapshots_cpu_s: snapshots.cpu_s,
            scores_wall_s: scores.wall_s,
            scores_cpu_s: scores.cpu_s,
            dynamics_wall_s: dynamics.wall_s,
            dynamics_cpu_s: dynamics.cpu_s,
        }
    }
}

/// `<study>/cost.csv` from every model's ledger, and the totals printed: what the study cost,
/// however many sittings and processes it took. Models measured before ledgers existed have
/// none; they are named, and the totals say they leave them out.
fn cost(study: &Study, ids: &[ModelId]) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut without = Vec::new();
    for &id in ids {
        for &seed in &study.cfg.seeds_of(id) {
            let ledger = super::ledger::read(&super::ledger::path(&study.measured_dir(id, seed)))?;
            if ledger.is_empty() {
                without.push(format!("{} seed {seed}", id.name()));
                continue;
            }
            rows.push(CostRow::of(id.name(), seed, &ledger));
        }
    }
    let path = study.cfg.views_dir(&study.out).join("cost.csv");
    output::write_csv(&path, &rows)?;
    let (wall, cpu): (f64, f64) = rows
        .iter()
        .fold((0.0, 0.0), |(w, c), r| (w + r.wall_s, c + r.cpu_s));
    println!(
        "cost ({}): {} models, {:.1} h of model time (wall, each process's own), {:.1} h CPU",
        path.display(),
        rows.len(),
        wall / 3600.0,
        cpu / 3600.0
    );
    if !without.is_empty() {
        println!(
            "  not in these totals ({} models with no ledger: measured before ledgers existed): {}",
            without.len(),
            without.join(", ")
        );
    }
    Ok(())
}

/// One curve per model: the seed mean at each token count with the seed min-max, `x` in
/// log10 tokens. The untrained model (0 tokens) is drawn flat across the axis.
fn curves(
    rows: &[DynamicsRow],
    ids: &[ModelId],
    pick: &dyn Fn(&DynamicsRow) -> bool,
) -> Vec<Series> {
    let xs: Vec<f64> = rows
        .iter()
        .filter(|r| r.tokens_seen > 0)
        .map(|r| (r.tokens_seen as f64).log10())
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let mut series = Vec::new();
    for &id in ids {
        let mut by_tokens: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.model == id.name() && pick(r)) {
            by_tokens.entry(r.tokens_seen).or_default().push(r.value);
        }
        let mut points = Vec::new();
        for (tokens, v) in by_tokens {
            let s = super::comparisons::Spread::of(&v);
            let (mean, spread) = (s.mean, (v.len() > 1).then_some((s.min, s.max)));
            if tokens == 0 {
                if lo.is_finite() {
                    points.push((lo, mean, spread));
                    points.push((hi, mean, spread));
                }
            } else {
                points.push(((tokens as f64).log10(), mean, spread));
            }
        }
        if !points.is_empty() {
            series.push(Series {
                name: id.label().to_string(),
                points,
            });
        }
    }
    series
}

/// The figures: each measure against tokens seen, the transformers' embedding matrix beside
/// word2vec's vectors (the question the study asks of the embedding layer), and the
/// transformer-only measures.
fn figures(
    rows: &[DynamicsRow],
    ids: &[ModelId],
    levels: &[(&str, f64)],
    split: &str,
    dir: &std::path::Path,
) -> anyhow::Result<()> {
    let x_label = "corpus tokens seen (log10)";
    // The loss is the one the study reports: the test half with a dev split, else the whole
    // held-out block.
    let loss_title = if split == "test" {
        "Held-out loss (test half of the held-out split)"
    } else {
        "Held-out loss (whole held-out split)"
    };
    let last_layer = rows
        .iter()
        .filter(|r| r.representation == "contextual")
        .filter_map(|r| r.layer)
        .max();
    let table = |r: &DynamicsRow| matches!(r.representation.as_str(), "embedding" | "static");
    let plots: Vec<(&str, String, &str, Box<dyn Fn(&DynamicsRow) -> bool>)> = vec![
        (
            "dynamics-analogy",
            "Google analogies (3CosAdd), embedding matrix vs word2vec".into(),
            "accuracy",
            Box::new(move |r| {
                table(r) && r.benchmark == "questions-words:total" && r.metric == "3CosAdd"
            }),
        ),
        (
            "dynamics-ws353",
            "WS-353 (Spearman), embedding matrix vs word2vec".into(),
            "Spearman rho",
            Box::new(move |r| table(r) && r.benchmark == "WS-353-ALL" && r.metric == "spearman"),
        ),
        (
            "dynamics-men",
            "MEN (Spearman), embedding matrix vs word2vec".into(),
            "Spearman rho",
            Box::new(move |r| table(r) && r.benchmark == "MEN-TR-3k" && r.metric == "spearman"),
        ),
        (
            "dynamics-simlex",
            "SimLex-999 (Spearman), embedding matrix vs word2vec".into(),
            "Spearman rho",
            Box::new(move |r| table(r) && r.benchmark == "SIMLEX-999" && r.metric == "spearman"),
        ),
        (
            "dynamics-collocation",
            "Collocated pairs vs matched controls, embedding matrix vs word2vec".into(),
            "z (permutation null)",
            Box::new(move |r| table(r) && r.metric == "z_collocated"),
        ),
        (
            "dynamics-heldout-loss",
            loss_title.into(),
            "nats per target",
            Box::new(|r| r.metric == "heldout_loss"),
        ),
        (
            "dynamics-self-similarity",
            "Self-similarity, last layer, above its null".into(),
            "self-similarity (adjusted)",
            Box::new(move |r| {
                r.representation == "contextual"
                    && r.metric == "self_similarity_adjusted"
                    && r.layer == last_layer
            }),
        ),
        (
            "dynamics-qk-activations",
            "CKA of queries and keys from real tokens, layer 1".into(),
            "linear CKA",
            Box::new(|r| {
                r.representation == "attention-activations"
                    && r.metric == "cka_q_k"
                    && r.layer == Some(1)
            }),
        ),
    ];
    for (stem, mut title, y_label, pick) in plots {
        let mut series = curves(rows, ids, pick.as_ref());
        if series.is_empty() {
            continue;
        }
        if stem == "dynamics-heldout-loss" {
            // The untrained model's loss (about 10 nats: its random head is far worse than the
            // unigram) would squeeze every trained curve into the bottom fifth of the axis; it
            // is named in the title instead of drawn.
            let untrained = ModelId::Untrained.label();
            if let Some(at) = series.iter().position(|s| s.name == untrained) {
                let s = series.remove(at);
                title = format!("{title}; {untrained}: {:.2}, off the axis", s.points[0].1);
            }
            // A loss is read against the best loss without context (chance for the measure).
            let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
            let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
            for &(name, level) in levels {
                series.push(Series {
                    name: format!("{name} ({level:.3})"),
                    points: vec![(lo, level, None), (hi, level, None)],
                });
            }
        }
        plot::lines(&dir.join(stem), &title, x_label, y_label, &series)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_models_cost_is_summed_by_piece_of_work() {
        use super::super::ledger::TimeRow;
        let row = |work: &str, started: u64, wall_s: f64, cpu_s: f64, finished: bool| TimeRow {
            work: work.into(),
            started,
            wall_s,
            cpu_s,
            finished,
            cpu: "AMD EPYC".into(),
        };
        // Training cut off by a sitting's end, resumed, then snapshots and the final model.
        let ledger = [
            row("train", 1, 600.0, 590.0, false),
            row("train", 2, 700.0, 650.0, true),
            row("snapshots", 3, 200.0, 150.0, true),
            row("scores", 4, 100.0, 60.0, true),
        ];
        let c = super::CostRow::of("transformer-mlm", 3, &ledger);
        assert_eq!((c.pieces, c.unfinished, c.cpu.as_str()), (4, 1, "AMD EPYC"));
        assert_eq!((c.wall_s, c.cpu_s), (1600.0, 1450.0));
        assert_eq!((c.train_wall_s, c.train_cpu_s), (1300.0, 1240.0));
        assert_eq!((c.snapshots_wall_s, c.snapshots_cpu_s), (200.0, 150.0));
        assert_eq!((c.scores_wall_s, c.scores_cpu_s), (100.0, 60.0));
        assert_eq!((c.dynamics_wall_s, c.dynamics_cpu_s), (0.0, 0.0));
    }

    use super::*;
    use crate::exp::settings::DynamicsConfig;
    use transformer::training::{plateau_step, CurvePoint, Plateau, TrainingConfig};

    /// The frozen-input seed 2 curve of the fair-budget study, held-out every 264 steps (an
    /// epoch is 1,056): it sat at the unigram plateau (6.935 nats) and gained 0.001 nats over
    /// its second epoch. Counted from the context-free loss, that is not a plateau; a run that
    /// uses context and stops gaining is.
    #[test]
    fn the_unigram_plateau_is_not_taken_for_convergence() {
        let curve = |losses: &[f64]| -> Vec<CurvePoint> {
            (losses.iter().enumerate())
                .map(|(i, &loss)| CurvePoint {
                    step: 264 * (i + 1),
                    split: "heldout".into(),
                    loss,
                    perplexity: loss.exp(),
                    lr: 1e-3,
                    tokens_per_second: 0.0,
                })
                .collect()
        };
        let stuck = curve(&[6.950, 6.957, 6.962, 6.967, 6.949, 6.950, 6.940]);
        let mut rule = Plateau {
            min_gain: 0.01,
            window: 1056,
            context_free_loss: None,
        };
        // Without the context-free loss the rule stops it at 1 1/4 epochs.
        assert_eq!(plateau_step(&stuck, &rule), Some(1320));
        rule.context_free_loss = Some(6.935);
        assert_eq!(plateau_step(&stuck, &rule), None);
        // Off the plateau, then flat below it: stops at the first evaluation whose gain over
        // the last epoch is under 0.01 (6.500 - 6.495 at step 2112).
        let learned = curve(&[6.95, 6.90, 6.70, 6.50, 6.498, 6.497, 6.496, 6.495]);
        assert_eq!(plateau_step(&learned, &rule), Some(2112));
        // A NaN held-out loss never counts as a plateau.
        let nan = curve(&[6.5, 6.5, 6.5, 6.5, f64::NAN]);
        assert_eq!(plateau_step(&nan, &rule), None);

        // The same seed resumed: it crept 0.005 nats under the unigram entropy and was stopped
        // at step 3696 (gain 6.934 - 6.930 over the epoch from 2640), neither copying its
        // visible input nor using context. A masked LM's context-free level is the copying one
        // (6.313 on text8's held-out targets), and against it the run goes on.
        let crept = curve(&[
            6.950, 6.957, 6.962, 6.967, 6.949, 6.965, 6.969, 6.948, 6.952, 6.934, 6.933, 6.935,
            6.930, 6.930,
        ]);
        assert_eq!(plateau_step(&crept, &rule), Some(3696));
        rule.context_free_loss = Some(6.313);
        assert_eq!(plateau_step(&crept, &rule), None);
    }

    #[test]
    fn the_schedule_follows_the_epoch_length() {
        let mut t = TrainingConfig::default();
        DynamicsConfig::default().apply(&mut t, 100).unwrap();
        assert_eq!(t.steps, 500);
        // 1/8 of 100 steps is 12.5: rounded half away from zero.
        assert_eq!(t.snapshot_steps, vec![13, 25, 50, 100, 200, 300, 400, 500]);
        assert_eq!(t.eval_every, 25);
        let rule = t.plateau.unwrap();
        assert_eq!((rule.window, rule.min_gain), (100, 0.01));

        let bad = |d: DynamicsConfig, needle: &str| {
            let e = d
                .apply(&mut TrainingConfig::default(), 100)
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{e}");
        };
        bad(
            DynamicsConfig {
                snapshots: vec![0.5, 6.0],
                ..Default::default()
            },
            "snapshots must lie in (0, epochs = 5], got 6",
        );
        bad(
            DynamicsConfig {
                epochs: 0.0,
                ..Default::default()
            },
            "epochs must be a number > 0",
        );
        bad(
            DynamicsConfig {
                plateau_min_gain: f64::NAN,
                ..Default::default()
            },
            "plateau_min_gain",
        );
        // Warm-up longer than the whole schedule: the training config's own check, named.
        let e = DynamicsConfig {
            epochs: 0.5,
            snapshots: vec![0.5],
            ..Default::default()
        }
        .apply(
            &mut TrainingConfig {
                warmup_steps: 80,
                ..Default::default()
            },
            100,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("[dynamics] gives an invalid [training]: warmup_steps"),
            "{e}"
        );
    }

    #[test]
    fn every_default_model_is_known() {
        let ids = DynamicsConfig::default().model_ids().unwrap();
        assert_eq!(ids.len(), 11);
        assert!(ids.contains(&ModelId::NoAttention) && ids.contains(&ModelId::Cbow));
    }
}
