//! `--exp sweep`: each variant's learning rate chosen on the dev block, with the same effort for
//! every variant (issue 41). The `[sweep]` table ([`SweepConfig`]) names a grid of rates, a
//! budget in epochs and seeds kept apart from the study's; every variant the study trains is
//! trained at each rate for that budget (warm-up, then linear decay to zero at the budget's
//! end), and the rate with the lowest dev loss at the end, averaged over the sweep's seeds, is
//! chosen. No loss is read on the test half of the held-out block here (the vocabulary, and
//! with it word2vec's subsampling and noise table, is the whole corpus's, as in the study).
//!
//! Each (variant, seed) writes `<out>/sweep/<model>-seed<S>.csv` (one row per rate, the file
//! rewritten as each rate finishes), so that runs can go side by side in separate processes
//! (`--model`, `--seed`); a file that holds some of the grid's rates (an interrupted sweep, or
//! a grid widened since) has its rows checked against the runs they must be and only the
//! missing rates run. Once every file the config asks for holds every rate,
//! `<out>/sweep/chosen.csv` holds each variant's rate and the `[learning_rates]` table to paste
//! into the study's config is printed.
//!
//! Each row also records the scale of the input embedding at the end of its run (the RMS over
//! coordinates of each coordinate's standard deviation across words, plain and weighted by
//! the words' training counts): the frozen-input ablation draws its random table at a trained
//! table's scale (`frozen_embedding_std`).
//!
//! word2vec is swept the same way when `[sweep] word2vec_alpha_factors` is set: its starting
//! rate at those multiples of its default (word2vec.c's), the same budget in epochs (the rate
//! decaying over it, as word2vec's always does) and the same seeds, trained on the training
//! split's text alone ([`Sequences::train_tokens`]) and scored by its own objective on the dev
//! block's text ([`word2vec::Heldout`], its noise words and subsampling drawn once), against
//! that objective's context-free level. Its rows are [`SweepRow`]s too: `lr` is the starting
//! rate, `steps` the centre words trained, `dev_loss_first` the loss at the start (every output
//! row zero), `backend` `cpu`; a run whose training loss became non-finite (too high a rate)
//! has an infinite `dev_loss`, 0 steps and no embedding scale. (A rate can also blow the
//! vectors up while training's loss, read from a saturating table, stays finite: its dev loss
//! is then finite and huge.)
//!
//! [`Sequences::train_tokens`]: transformer::data::Sequences::train_tokens

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use analysis::geometry::{embedding_scale, scale_of};
use burn::module::Module;
use transformer::training::{self, CurvePoint, RunControl, TrainingConfig};

use super::settings::{ModelId, SweepConfig, QUICK_STEPS_PER_EPOCH};
use super::study::Study;
use crate::cli::Args;
use crate::output;
use crate::runs::{self, TransformerKey};

/// One run of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub model: String,
    pub seed: u64,
    pub lr: f64,
    pub epochs: f64,
    pub steps: usize,
    pub warmup_steps: usize,
    /// The dev loss after the last step (the criterion), and at the first evaluation.
    pub dev_loss: f64,
    pub dev_loss_first: f64,
    /// The dev loss of the best model that ignores context ([`Sequences::context_free`]): a
    /// run not below it has not left the unigram (or copying) plateau.
    pub context_free_dev_loss: f64,
    pub left_plateau: bool,
    /// The input embedding's scale at the end ([`embedding_scale`]).
    pub embedding_std: f64,
    pub embedding_std_by_frequency: f64,
    pub backend: String,
    pub seconds: f64,
    /// The run directory's name (its config hash in it): a kept row is reused only for the
    /// run the config asks for now. Empty in rows written before it existed, which are then
    /// checked by steps, warm-up and backend alone.
    #[serde(default)]
    pub run: String,
}

/// A variant's chosen rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chosen {
    pub model: String,
    pub lr: f64,
    /// Its dev loss, averaged over the sweep's seeds, and the runner-up's: the next best rate.
    pub mean_dev_loss: f64,
    pub runner_up_lr: f64,
    pub runner_up_mean_dev_loss: f64,
    /// Whether every seed at the chosen rate left the plateau.
    pub all_left_plateau: bool,
    pub seeds: usize,
    /// The mean trained input-embedding scale at the chosen rate.
    pub embedding_std: f64,
    pub embedding_std_by_frequency: f64,
    /// `chosen`; or why the lowest loss is no choice: `plateau` (a seed at that rate ended
    /// on the context-free plateau: the budget ranked plateau losses) or `edge` (the lowest or
    /// highest rate of the grid: the best may lie outside it).
    pub status: String,
}

/// The variants swept: `[sweep] models`, or the transformers `[dynamics]` trains and, with
/// `[sweep] word2vec_alpha_factors`, its word2vec models.
pub fn models(cfg: &super::settings::Config) -> anyhow::Result<Vec<ModelId>> {
    if !cfg.sweep.models.is_empty() {
        return Ok(cfg
            .sweep
            .models
            .iter()
            .filter_map(|n| ModelId::from_name(n))
            .collect());
    }
    let ids = match &cfg.dynamics {
        Some(d) => d.model_ids()?,
        None => ModelId::ALL.to_vec(),
    };
    let word2vec = !cfg.sweep.word2vec_alpha_factors.is_empty();
    Ok(ids
        .into_iter()
        .filter(|m| *m != ModelId::Untrained && (word2vec || !m.is_word2vec()))
        .collect())
}

/// The rates `id` is swept at: `[sweep] lrs` for a transformer; for word2vec,
/// `word2vec_alpha_factors` times its starting rate as configured (`[sgns]`, `[cbow]`; by
/// default word2vec.c's 0.025 and 0.05), each rounded to the nearest f32 (word2vec's type) and
/// kept as the shortest decimal that is that f32, so the CSV reads 0.0125, not 0.012500000186.
pub fn grid(cfg: &super::settings::Config, id: ModelId) -> Vec<f64> {
    if !id.is_word2vec() {
        return cfg.sweep.lrs.clone();
    }
    let base = if id == ModelId::Sgns {
        &cfg.sgns
    } else {
        &cfg.cbow
    };
    cfg.sweep
        .word2vec_alpha_factors
        .iter()
        .map(|&f| {
            let alpha = (f64::from(base.start_alpha()) * f) as f32;
            alpha
                .to_string()
                .parse()
                .expect("an f32 prints as a number")
        })
        .collect()
}

/// `--exp sweep`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let cfg = super::settings::load_config(args, "sweep")?;
    if !cfg.training.dev_split {
        anyhow::bail!(
            "--exp sweep chooses on the dev block: its config needs [training] dev_split = true (experiments/configs/ten-seeds.toml has it)"
        );
    }
    let sweep = cfg.sweep.clone();
    let mut ids = models(&cfg)?;
    if let Some(name) = &args.model {
        let id = super::jobs::model_arg(args)?;
        if !ids.contains(&id) {
            anyhow::bail!("--model {name}: not among the variants the sweep trains");
        }
        ids = vec![id];
    }
    let seeds = match args.seed {
        Some(s) if !sweep.seeds.contains(&s) => {
            anyhow::bail!(
                "--seed {s}: not a sweep seed (the [sweep] seeds are {:?})",
                sweep.seeds
            )
        }
        Some(s) => vec![s],
        None => sweep.seeds.clone(),
    };
    let all_ids = models(&cfg)?;
    let grids: BTreeMap<&str, Vec<f64>> = all_ids
        .iter()
        .map(|&id| (id.name(), grid(&cfg, id)))
        .collect();
    let study = Study::load(args, cfg)?;
    let dir = study.out.join("sweep");
    for &id in &ids {
        let lrs = &grids[id.name()];
        for &seed in &seeds {
            let path = dir.join(format!("{}-seed{seed}.csv", id.name()));
            let mut rows: Vec<SweepRow> = Vec::new();
            if path.exists() {
                rows = output::read_csv(&path)?;
                check_rows(&path, &rows, lrs, sweep.epochs, id, seed)?;
                check_kept(
                    &path,
                    &rows,
                    lrs,
                    &expected(&study, args, id, seed, lrs, &sweep)?,
                )?;
            }
            let todo = missing_rates(&rows, lrs);
            if todo.is_empty() {
                println!("{}: kept", path.display());
                continue;
            }
            if !rows.is_empty() {
                println!(
                    "{}: {} of {} rates kept, {todo:?} to run",
                    path.display(),
                    rows.len(),
                    lrs.len()
                );
            }
            // The file is rewritten as each rate finishes, so a run that took half an hour is
            // never kept only in a run directory.
            for lr in todo {
                rows.push(if id.is_word2vec() {
                    word2vec_run(&study, id, seed, lr, &sweep)?
                } else {
                    sweep_run(&study, args, id, seed, lr, &sweep)?
                });
                rows.sort_by_key(|r| grid_position(lrs, r.lr));
                output::write_csv(&path, &rows)?;
                println!(
                    "wrote {} ({} of {} rates)",
                    path.display(),
                    rows.len(),
                    lrs.len()
                );
            }
        }
    }
    choose_if_complete(&study, args, &dir, &all_ids, &grids, &sweep)
}

/// The training config of one sweep run: the variant's recipe with `lr`, `epochs` of steps,
/// its evaluations spread as the study spreads them, no plateau stop and no snapshots.
pub fn sweep_training(
    study: &Study,
    args: &Args,
    id: ModelId,
    seed: u64,
    lr: f64,
    sweep: &SweepConfig,
) -> anyhow::Result<TrainingConfig> {
    let (_, mut t) = study.variant(id, seed);
    let per_epoch = if args.quick {
        QUICK_STEPS_PER_EPOCH
    } else {
        study.seqs.steps_per_epoch(t.batch_size)
    };
    let evals = study.cfg.dynamics.as_ref().map_or(4, |d| d.evals_per_epoch);
    t.lr = lr;
    t.steps = ((sweep.epochs * per_epoch as f64).round() as usize).max(t.warmup_steps + 1);
    t.plateau = None;
    t.snapshot_steps.clear();
    t.eval_every = (per_epoch / evals).max(1).min(t.steps);
    t.validate()
        .map_err(|e| anyhow::anyhow!("[sweep] gives an invalid [training]: {e}"))?;
    Ok(t)
}

/// The run directory of one sweep run and its training config.
fn sweep_run_dir(
    study: &Study,
    args: &Args,
    id: ModelId,
    seed: u64,
    lr: f64,
    sweep: &SweepConfig,
) -> anyhow::Result<(PathBuf, TrainingConfig)> {
    let (model_cfg, _) = study.variant(id, seed);
    let t = sweep_training(study, args, id, seed, lr, sweep)?;
    let key = sweep_key(study, &model_cfg, &t);
    let dir = runs::run_dir(&study.out, &format!("sweep-{}", id.name()), seed, &key);
    Ok((dir, t))
}

/// What a sweep run's directory is keyed by: the study's run key with the sweep's training.
fn sweep_key<'a>(
    study: &'a Study,
    model: &'a transformer::TransformerConfig,
    training: &'a TrainingConfig,
) -> TransformerKey<'a> {
    TransformerKey {
        corpus: study.corpus_config(),
        model,
        training,
        backend: study.kind.name(),
    }
}

fn sweep_run(
    study: &Study,
    args: &Args,
    id: ModelId,
    seed: u64,
    lr: f64,
    sweep: &SweepConfig,
) -> anyhow::Result<SweepRow> {
    let (model_cfg, _) = study.variant(id, seed);
    let (run_dir, t) = sweep_run_dir(study, args, id, seed, lr, sweep)?;
    let key = sweep_key(study, &model_cfg, &t);
    std::fs::create_dir_all(&run_dir)?;
    runs::record_key(&run_dir, &key)?;
    println!(
        "sweep: {} seed {seed} lr {lr:e}, {} steps -> {}",
        id.name(),
        t.steps,
        run_dir.display()
    );
    let started = std::time::Instant::now();
    let outcome = training::train(
        &model_cfg,
        &t,
        &study.seqs,
        &study.device,
        &run_dir,
        &RunControl {
            resume: true,
            progress: true,
            ..RunControl::default()
        },
    )?;
    let dev = |curve: &[CurvePoint], last: bool| -> anyhow::Result<f64> {
        let mut rows = curve.iter().filter(|p| p.split == "dev");
        let p = if last { rows.last() } else { rows.next() };
        p.map(|p| p.loss)
            .ok_or_else(|| anyhow::anyhow!("{}: the run has no dev rows", run_dir.display()))
    };
    let dev_loss = dev(&outcome.curve, true)?;
    let context_free =
        study
            .seqs
            .context_free_heldout_losses(t.objective, t.batch_size, t.eval_batches)[1];
    let model = outcome.model.valid();
    let counts = study.word_counts();
    let (embedding_std, embedding_std_by_frequency) = embedding_scale(&model, &counts);
    Ok(SweepRow {
        model: id.name().into(),
        seed,
        lr,
        epochs: sweep.epochs,
        steps: t.steps,
        warmup_steps: t.warmup_steps,
        dev_loss,
        dev_loss_first: dev(&outcome.curve, false)?,
        context_free_dev_loss: context_free,
        left_plateau: dev_loss < context_free,
        embedding_std,
        embedding_std_by_frequency,
        backend: study.kind.name().into(),
        seconds: started.elapsed().as_secs_f64(),
        run: run_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    })
}

/// The seed the word2vec dev block's subsampling and noise words are drawn from: one draw for
/// every rate, seed and architecture, as the transformers' dev masks are fixed by batch.
pub const WORD2VEC_DEV_SEED: u64 = 0xDE7;

/// What word2vec reads in the sweep: the corpus cut to the training split's text (its chunks
/// ending there), each word's count in that text, and the dev block ([`dev_block`]).
fn word2vec_split(
    corpus: &corpus::Corpus,
    seqs: &transformer::data::Sequences,
    training: &TrainingConfig,
) -> (corpus::Corpus, Vec<u64>, std::ops::Range<usize>) {
    let end = seqs.train_tokens().end;
    let mut train = corpus.clone();
    let enc = &mut train.encoded;
    enc.ids.truncate(end);
    enc.bounds.retain(|&b| b < end);
    enc.bounds.push(end);
    let mut counts = vec![0u64; train.vocab.len()];
    for &id in &train.encoded.ids {
        if let Some(c) = counts.get_mut(id as usize) {
            *c += 1;
        }
    }
    (train, counts, dev_block(seqs, training))
}

/// One word2vec sweep run's config: the study's `[sgns]` or `[cbow]` with the sweep seed, the
/// starting rate `alpha` and the sweep's budget in epochs of the training split (the rate
/// decaying to `min_alpha` over it), and the name its row is kept under: a hash of the config,
/// the corpus config, the training split's length and the dev block's place and draws, so that
/// a row scored on other text, or trained on it, is not taken for this run's.
fn word2vec_sweep_config(
    study: &Study,
    id: ModelId,
    seed: u64,
    alpha: f64,
    sweep: &SweepConfig,
) -> (word2vec::Word2VecConfig, String) {
    let tokens = study.seqs.train_tokens().len() as u64;
    let w = word2vec::Word2VecConfig {
        alpha: Some(alpha as f32),
        epochs: sweep.epochs.ceil() as usize,
        max_tokens: Some((sweep.epochs * tokens as f64).round() as u64),
        ..study.word2vec_config(id, seed)
    };
    let dev = dev_block(&study.seqs, &study.cfg.training);
    let key = (
        study.corpus_config(),
        &w,
        "training split",
        tokens,
        (dev.start, dev.end, WORD2VEC_DEV_SEED),
    );
    let name = format!("sweep-{}-seed{seed}-{}", id.name(), runs::config_hash(&key));
    (w, name)
}

/// The dev block's text as a range of the corpus's ids: the held-out sequences before the
/// first the runs report on ([`training::reported_sequences`]), so never the test block's.
fn dev_block(
    seqs: &transformer::data::Sequences,
    training: &TrainingConfig,
) -> std::ops::Range<usize> {
    seqs.heldout_tokens(0..training::reported_sequences(seqs, training).start)
}

/// word2vec at starting rate `alpha` on the training split's text, scored on the dev block's
/// (module docs). Nothing is kept but the row: a run takes seconds to a minute.
fn word2vec_run(
    study: &Study,
    id: ModelId,
    seed: u64,
    alpha: f64,
    sweep: &SweepConfig,
) -> anyhow::Result<SweepRow> {
    let (w, run) = word2vec_sweep_config(study, id, seed, alpha, sweep);
    let (corpus, train_counts, dev) =
        word2vec_split(&study.corpus, &study.seqs, &study.cfg.training);
    let dev = &study.corpus.encoded.ids[dev];
    println!(
        "sweep: {} seed {seed} alpha {alpha}, {} tokens of the training split -> {run}",
        id.name(),
        w.max_tokens.unwrap_or_default()
    );
    let started = std::time::Instant::now();
    let heldout = word2vec::Heldout::new(
        dev,
        corpus.vocab.counts(),
        &train_counts,
        &w,
        WORD2VEC_DEV_SEED,
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "{} seed {seed}: the dev block ({} held-out tokens): {e}",
            id.name(),
            dev.len()
        )
    })?;
    let zeros = word2vec::WordVectors::new(
        corpus.vocab.words().to_vec(),
        w.dim,
        vec![0.0; corpus.vocab.len() * w.dim],
    );
    // Every output row starts at zero, so the start's loss does not depend on the input rows.
    let dev_loss_first = heldout.loss(&zeros, &zeros);
    let context_free = heldout.context_free_loss();
    let (steps, dev_loss, (embedding_std, embedding_std_by_frequency)) =
        match word2vec::train(&corpus, &w, true) {
            Ok(trained) => (
                trained.report.trained_words as usize,
                heldout.loss(&trained.vectors, &trained.output),
                scale_of(trained.vectors.data(), w.dim, &study.word_counts()),
            ),
            // Too high a rate: the row says so (an infinite dev loss, never chosen) and the
            // sweep goes on, as a transformer run that ends above every other would.
            Err(e @ word2vec::train::TrainError::NonFiniteLoss { .. }) => {
                println!(
                    "sweep: {} seed {seed} alpha {alpha} diverged: {e}",
                    id.name()
                );
                (0, f64::INFINITY, (f64::NAN, f64::NAN))
            }
            Err(e) => return Err(e.into()),
        };
    Ok(SweepRow {
        model: id.name().into(),
        seed,
        lr: alpha,
        epochs: sweep.epochs,
        steps,
        warmup_steps: 0,
        dev_loss,
        dev_loss_first,
        context_free_dev_loss: context_free,
        left_plateau: dev_loss < context_free,
        embedding_std,
        embedding_std_by_frequency,
        backend: WORD2VEC_BACKEND.into(),
        seconds: started.elapsed().as_secs_f64(),
        run,
    })
}

/// word2vec's rows name the CPU, whatever backend the transformers use.
const WORD2VEC_BACKEND: &str = "cpu";

/// What a kept row must match: the run the config asks for now at each rate (a transformer's
/// steps and warm-up too; a word2vec run's are in its name).
struct Expected {
    steps: Option<(usize, usize)>,
    backend: String,
    runs: Vec<String>,
}

fn expected(
    study: &Study,
    args: &Args,
    id: ModelId,
    seed: u64,
    lrs: &[f64],
    sweep: &SweepConfig,
) -> anyhow::Result<Expected> {
    if id.is_word2vec() {
        return Ok(Expected {
            steps: None,
            backend: WORD2VEC_BACKEND.into(),
            runs: lrs
                .iter()
                .map(|&a| word2vec_sweep_config(study, id, seed, a, sweep).1)
                .collect(),
        });
    }
    let mut runs = Vec::new();
    let mut last = None;
    for &lr in lrs {
        let (dir, t) = sweep_run_dir(study, args, id, seed, lr, sweep)?;
        runs.push(
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        last = Some(t);
    }
    let t = last.expect("[sweep] lrs is not empty");
    Ok(Expected {
        steps: Some((t.steps, t.warmup_steps)),
        backend: study.kind.name().into(),
        runs,
    })
}

/// A kept file's rows against the runs the config asks for now at their rates (`want.runs`
/// follows the grid `lrs`; [`check_rows`] has put every row's rate in it): a file from
/// `--quick`, another backend or another recipe is refused, naming it.
fn check_kept(path: &Path, rows: &[SweepRow], lrs: &[f64], want: &Expected) -> anyhow::Result<()> {
    for r in rows {
        let Some(run) = grid_position(lrs, r.lr).and_then(|i| want.runs.get(i)) else {
            anyhow::bail!("{}: lr {} is not in the grid {lrs:?}", path.display(), r.lr);
        };
        let stale = want.steps.is_some_and(|s| s != (r.steps, r.warmup_steps))
            || r.backend != want.backend
            || (!r.run.is_empty() && &r.run != run);
        if stale {
            let steps = want
                .steps
                .map_or(String::new(), |(s, w)| format!("{s} steps, warm-up {w}, "));
            anyhow::bail!(
                "{}: the row at lr {} is of another run ({} steps, warm-up {}, {}, run {:?}) than this config asks for ({steps}{}, run {run:?}); move the file away to sweep again",
                path.display(),
                r.lr,
                r.steps,
                r.warmup_steps,
                r.backend,
                r.run,
                want.backend
            );
        }
    }
    Ok(())
}

/// A kept file's rows against the variant, seed, grid `lrs` and budget asked for. The file may
/// hold some of the grid's rates (written as each finished, or before the grid was widened),
/// each once and in the grid's order; [`missing_rates`] are the ones still to run.
fn check_rows(
    path: &Path,
    rows: &[SweepRow],
    lrs: &[f64],
    epochs: f64,
    id: ModelId,
    seed: u64,
) -> anyhow::Result<()> {
    let kept: Vec<f64> = rows.iter().map(|r| r.lr).collect();
    let at: Vec<Option<usize>> = kept.iter().map(|&k| grid_position(lrs, k)).collect();
    let in_grid_order = at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1]);
    if !in_grid_order
        || rows.iter().any(|r| {
            // +inf is a run that diverged (word2vec's rows); NaN or -inf is no loss.
            r.model != id.name()
                || r.seed != seed
                || r.epochs != epochs
                || !(r.dev_loss.is_finite() || r.dev_loss == f64::INFINITY)
        })
    {
        anyhow::bail!(
            "{}: not this sweep's runs of {} seed {seed} (rates {kept:?} against the grid {lrs:?}, epochs {epochs}); move it away to sweep again",
            path.display(),
            id.name(),
        );
    }
    Ok(())
}

/// The grid's rates a kept file (checked by [`check_rows`]) has no row for, in grid order.
fn missing_rates(rows: &[SweepRow], lrs: &[f64]) -> Vec<f64> {
    lrs.iter()
        .copied()
        .filter(|&l| !rows.iter().any(|r| r.lr == l))
        .collect()
}

/// Where `lr` stands in the grid `lrs`. Exact equality: a rate read back from a kept CSV is the
/// same f64 the config gave (the CSV prints the shortest decimal that round-trips).
fn grid_position(lrs: &[f64], lr: f64) -> Option<usize> {
    lrs.iter().position(|&l| l == lr)
}

/// Once every (variant, seed) file is there: each variant's rate, written to `chosen.csv` and
/// printed as a `[learning_rates]` table.
fn choose_if_complete(
    study: &Study,
    args: &Args,
    dir: &Path,
    ids: &[ModelId],
    grids: &BTreeMap<&str, Vec<f64>>,
    sweep: &SweepConfig,
) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for &id in ids {
        let lrs = &grids[id.name()];
        for &seed in &sweep.seeds {
            let path = dir.join(format!("{}-seed{seed}.csv", id.name()));
            if !path.exists() {
                missing.push(format!("{} seed {seed}", id.name()));
                continue;
            }
            let r: Vec<SweepRow> = output::read_csv(&path)?;
            check_rows(&path, &r, lrs, sweep.epochs, id, seed)?;
            check_kept(
                &path,
                &r,
                lrs,
                &expected(study, args, id, seed, lrs, sweep)?,
            )?;
            let todo = missing_rates(&r, lrs);
            if !todo.is_empty() {
                missing.push(format!("{} seed {seed} at {todo:?}", id.name()));
                continue;
            }
            rows.extend(r);
        }
    }
    if !missing.is_empty() {
        println!(
            "sweep: {} runs still to do ({}); nothing chosen yet",
            missing.len(),
            missing.join(", ")
        );
        // A choice kept from a smaller grid or fewer seeds is left as it is (it may be
        // committed), but it is not this config's: say so rather than let it read as current.
        let kept = dir.join("chosen.csv");
        if kept.exists() {
            println!(
                "sweep: {} is an earlier choice, not this config's until every run above is in",
                kept.display()
            );
        }
        return Ok(());
    }
    let chosen = choose(&rows, ids)?;
    output::write_csv(&dir.join("chosen.csv"), &chosen)?;
    println!(
        "[learning_rates]   # chosen by --exp sweep ({})",
        dir.join("chosen.csv").display()
    );
    for c in chosen.iter().filter(|c| !is_word2vec(&c.model)) {
        println!("\"{}\" = {:e}", c.model, c.lr);
    }
    for c in chosen.iter().filter(|c| is_word2vec(&c.model)) {
        let table = if c.model == ModelId::Sgns.name() {
            "sgns"
        } else {
            "cbow"
        };
        // word2vec's rate is its own table's `alpha`, not a [learning_rates] entry.
        println!("[{table}]   # {} ({})\nalpha = {}", c.model, c.status, c.lr);
    }
    Ok(())
}

fn is_word2vec(model: &str) -> bool {
    ModelId::from_name(model).is_some_and(ModelId::is_word2vec)
}

/// Per variant, the rate with the lowest dev loss averaged over seeds (ties: the lower rate).
pub fn choose(rows: &[SweepRow], ids: &[ModelId]) -> anyhow::Result<Vec<Chosen>> {
    let mut out = Vec::new();
    for &id in ids {
        let mut by_lr: BTreeMap<u64, Vec<&SweepRow>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.model == id.name()) {
            by_lr.entry(r.lr.to_bits()).or_default().push(r);
        }
        let mut means: Vec<(f64, f64, &Vec<&SweepRow>)> = by_lr
            .values()
            .map(|rs| {
                let m = rs.iter().map(|r| r.dev_loss).sum::<f64>() / rs.len() as f64;
                (rs[0].lr, m, rs)
            })
            .collect();
        means.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
        let Some(&(lr, mean, best)) = means.first() else {
            anyhow::bail!("sweep: no runs of {}", id.name());
        };
        let (runner_up_lr, runner_up_mean_dev_loss) =
            means.get(1).map_or((f64::NAN, f64::NAN), |r| (r.0, r.1));
        let n = best.len() as f64;
        let all_left_plateau = best.iter().all(|r| r.left_plateau);
        let edge =
            means.len() > 1 && (means.iter().all(|m| m.0 >= lr) || means.iter().all(|m| m.0 <= lr));
        let status = if !all_left_plateau {
            "plateau"
        } else if edge {
            "edge"
        } else {
            "chosen"
        };
        out.push(Chosen {
            model: id.name().into(),
            lr,
            mean_dev_loss: mean,
            runner_up_lr,
            runner_up_mean_dev_loss,
            all_left_plateau,
            seeds: best.len(),
            embedding_std: best.iter().map(|r| r.embedding_std).sum::<f64>() / n,
            embedding_std_by_frequency: best
                .iter()
                .map(|r| r.embedding_std_by_frequency)
                .sum::<f64>()
                / n,
            status: status.into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(model: &str, seed: u64, lr: f64, dev: f64) -> SweepRow {
        SweepRow {
            model: model.into(),
            seed,
            lr,
            epochs: 1.0,
            steps: 10,
            warmup_steps: 1,
            dev_loss: dev,
            dev_loss_first: dev + 1.0,
            context_free_dev_loss: 6.0,
            left_plateau: dev < 6.0,
            embedding_std: lr * 10.0,
            embedding_std_by_frequency: lr * 20.0,
            backend: "flex".into(),
            seconds: 1.0,
            run: String::new(),
        }
    }

    #[test]
    fn word2vec_reads_the_training_split_and_the_dev_block_only() {
        use corpus::{Corpus, CorpusConfig, Preset};
        // 1,003 words in chunks of 7, sequences of 10 words: 100 sequences, 10 held out; in
        // batches of 2 the held-out split is 5 batches, the first 2 the dev block.
        let text: String = (0..1003).map(|i| format!("w{} ", i % 97)).collect();
        let cfg = CorpusConfig {
            preset: Preset::Text8,
            min_count: 1,
            chunk_len: 7,
            ..CorpusConfig::default()
        };
        let corpus = Corpus::from_text(&text, Path::new("planted"), &cfg).unwrap();
        let seqs = transformer::data::Sequences::new(&corpus, 12, 0.1).unwrap();
        let training = TrainingConfig {
            batch_size: 2,
            dev_split: true,
            eval_batches: None,
            ..TrainingConfig::default()
        };
        let (train, counts, dev) = word2vec_split(&corpus, &seqs, &training);
        assert_eq!(train.encoded.ids, corpus.encoded.ids[..900]);
        assert_eq!(*train.encoded.bounds.last().unwrap(), 900);
        assert!(train
            .encoded
            .bounds
            .windows(2)
            .all(|w| w[0] < w[1] && w[1] - w[0] <= 7));
        assert_eq!(counts.iter().sum::<u64>(), 900);
        assert_eq!(counts[corpus.vocab.id("w0").unwrap() as usize], 10);
        assert_eq!(dev, 900..940);
        // The test block starts where the dev block ends.
        let test_rows = training::reported_sequences(&seqs, &training).start..seqs.n_heldout();
        assert_eq!(seqs.heldout_tokens(test_rows).start, dev.end);
    }

    #[test]
    fn kept_rows_with_no_loss_are_refused_and_a_diverged_rate_is_never_chosen() {
        let m = ModelId::Sgns.name();
        let path = Path::new("kept.csv");
        let ok = vec![row(m, 1, 0.1, 5.0), row(m, 1, 0.2, f64::INFINITY)];
        check_rows(path, &ok, &[0.1, 0.2], 1.0, ModelId::Sgns, 1).unwrap();
        for bad in [f64::NAN, f64::NEG_INFINITY] {
            let rows = vec![row(m, 1, 0.1, 5.0), row(m, 1, 0.2, bad)];
            let e = check_rows(path, &rows, &[0.1, 0.2], 1.0, ModelId::Sgns, 1).unwrap_err();
            assert!(
                e.to_string().contains("kept.csv: not this sweep's runs"),
                "{e}"
            );
        }
        // One seed diverging at a rate makes its mean infinite: never chosen over a finite one.
        let rows = vec![
            row(m, 1, 0.05, 5.5),
            row(m, 2, 0.05, 5.6),
            row(m, 1, 0.1, 5.0),
            row(m, 2, 0.1, f64::INFINITY),
            row(m, 1, 0.2, 5.8),
            row(m, 2, 0.2, 5.9),
        ];
        let c = &choose(&rows, &[ModelId::Sgns]).unwrap()[0];
        assert_eq!(
            (c.lr, c.runner_up_lr, c.status.as_str()),
            (0.05, 0.2, "edge")
        );
        // Every rate diverged: the row says so (an infinite loss, `plateau`: no run left it).
        let all = vec![row(m, 1, 0.1, f64::INFINITY), row(m, 1, 0.2, f64::INFINITY)];
        let c = &choose(&all, &[ModelId::Sgns]).unwrap()[0];
        assert!(
            c.mean_dev_loss.is_infinite() && c.status == "plateau",
            "{c:?}"
        );
    }

    #[test]
    fn a_kept_file_with_some_of_the_grids_rates_runs_only_the_others() {
        let m = ModelId::Sgns.name();
        let path = Path::new("kept.csv");
        let grid = [0.05, 0.1, 0.2];
        let check = |rows: &[SweepRow]| check_rows(path, rows, &grid, 1.0, ModelId::Sgns, 1);
        // Written as the first two rates finished, or before 0.2 was added to the grid.
        let first = vec![row(m, 1, 0.05, 5.0), row(m, 1, 0.1, 4.0)];
        check(&first).unwrap();
        assert_eq!(missing_rates(&first, &grid), vec![0.2]);
        let middle = vec![row(m, 1, 0.1, 4.0)];
        check(&middle).unwrap();
        assert_eq!(missing_rates(&middle, &grid), vec![0.05, 0.2]);
        assert!(missing_rates(&[], &grid) == grid);
        let all: Vec<SweepRow> = grid.iter().map(|&l| row(m, 1, l, 5.0)).collect();
        check(&all).unwrap();
        assert!(missing_rates(&all, &grid).is_empty());
        // A rate outside the grid, one twice, or the grid's order broken: not this sweep's.
        for bad in [
            vec![row(m, 1, 0.05, 5.0), row(m, 1, 0.4, 4.0)],
            vec![row(m, 1, 0.1, 5.0), row(m, 1, 0.1, 4.0)],
            vec![row(m, 1, 0.2, 5.0), row(m, 1, 0.05, 4.0)],
        ] {
            let e = check(&bad).unwrap_err().to_string();
            assert!(
                e.contains("kept.csv: not this sweep's runs of word2vec-sgns seed 1"),
                "{e}"
            );
        }
        // Each kept row is matched to the run its own rate asks for, not to the grid's first.
        let want = Expected {
            steps: None,
            backend: WORD2VEC_BACKEND.into(),
            runs: vec!["run-a".into(), "run-b".into(), "run-c".into()],
        };
        let at = |lr: f64, run: &str| SweepRow {
            run: run.into(),
            backend: WORD2VEC_BACKEND.into(),
            ..row(m, 1, lr, 5.0)
        };
        check_kept(path, &[at(0.1, "run-b"), at(0.2, "run-c")], &grid, &want).unwrap();
        let e = check_kept(path, &[at(0.1, "run-a")], &grid, &want)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kept.csv: the row at lr 0.1 is of another run") && e.contains("run-b"),
            "{e}"
        );
        let e = check_kept(path, &[at(0.4, "run-a")], &grid, &want)
            .unwrap_err()
            .to_string();
        assert!(e.contains("kept.csv: lr 0.4 is not in the grid"), "{e}");
    }

    #[test]
    fn the_rate_with_the_lowest_mean_dev_loss_over_seeds_is_chosen() {
        let m = ModelId::Mlm.name();
        // Seed 1 alone would choose 3e-3 (5.0 < 5.1); over both seeds 6e-3 wins
        // (mean 5.15 against 5.25).
        let rows = vec![
            row(m, 1, 3e-3, 5.0),
            row(m, 2, 3e-3, 5.5),
            row(m, 1, 6e-3, 5.1),
            row(m, 2, 6e-3, 5.2),
            row(m, 1, 1e-2, 7.0),
            row(m, 2, 1e-2, 5.0),
        ];
        let c = &choose(&rows, &[ModelId::Mlm]).unwrap()[0];
        assert_eq!(c.lr, 6e-3);
        assert!((c.mean_dev_loss - 5.15).abs() < 1e-12);
        assert_eq!(c.runner_up_lr, 3e-3);
        assert!((c.runner_up_mean_dev_loss - 5.25).abs() < 1e-12);
        assert!(c.all_left_plateau);
        assert!((c.embedding_std - 0.06).abs() < 1e-12);
        assert_eq!(c.status, "chosen");
        // 1e-2 has mean 6.0 and one seed on the plateau (7.0 >= 6.0): had it won, it would say
        // so, and it is no choice.
        let only = vec![row(m, 1, 1e-2, 7.0), row(m, 2, 1e-2, 5.0)];
        let c = &choose(&only, &[ModelId::Mlm]).unwrap()[0];
        assert!(!c.all_left_plateau);
        assert_eq!(c.status, "plateau");
        // The lowest rate of the grid winning is no choice either: the best may lie below it.
        let low = vec![
            row(m, 1, 3e-3, 5.0),
            row(m, 1, 6e-3, 5.2),
            row(m, 1, 1e-2, 5.4),
        ];
        assert_eq!(choose(&low, &[ModelId::Mlm]).unwrap()[0].status, "edge");
        assert!(choose(&rows, &[ModelId::Cbow]).is_err());
    }
}
