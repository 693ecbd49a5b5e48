//! Training: AdamW (Loshchilov & Hutter 2019), linear warm-up then linear decay, gradient-norm
//! clipping, held-out loss and perplexity every `eval_every` steps, checkpoints every
//! `checkpoint_every` steps and at the end, resume from the last checkpoint, and a stop with a
//! message on a NaN or infinite loss (the last good checkpoint is left as it was).
//!
//! The loop itself is burn-train's: [`train`] hands the model, AdamW and the schedule to a
//! `Learner` and runs `SupervisedTraining` on one device or, data-parallel, on several
//! (`MultiDevice`); [`crate::engine`] is the glue that keeps the checkpoints every K steps,
//! the exact resume of the step-indexed data order of [`crate::data`], the snapshots, the
//! plateau and the NaN stop above. Its doc comment says where the engine ends and our code
//! begins. [`train_step`] and [`heldout_loss`] stay as functions for the tests and benchmarks
//! that time or check one step.

use std::path::Path;

use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Pending};
use crate::data::{Batch, Objective, Sequences};
use crate::loss::target_log_probs;
pub use crate::loss::{batch_loss, target_loss};
use crate::model::{ModelSettings, Transformer, TransformerConfig};
use crate::progress::Progress;
pub use crate::progress::PROGRESS_EVERY;
pub use crate::recipe::{
    finished, plateau_step, step_seed, CurvePoint, LmHeadInit, Plateau, TrainError, TrainingConfig,
};

pub use crate::checkpoint::TransformerConfigRecord;

pub struct TrainOutcome {
    pub model: Transformer,
    pub curve: Vec<CurvePoint>,
    /// Step the run started from (0, or the checkpoint's step when resumed).
    pub resumed_from: usize,
}

/// Sums over some held-out targets: how many, the model's loss on them, and the loss of the
/// best model that ignores context ([`crate::data::ContextFree`]) on the same targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetLosses {
    pub targets: usize,
    pub loss: f64,
    pub context_free_loss: f64,
}

impl TargetLosses {
    fn add(&mut self, loss: f64, context_free_loss: f64) {
        self.targets += 1;
        self.loss += loss;
        self.context_free_loss += context_free_loss;
    }
}

/// One held-out sequence's masked-LM targets, split by what the model saw at the target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InputSplit {
    /// Targets replaced by `[MASK]`: the best context-free prediction there is the unigram, so a
    /// loss below the unigram's on these targets can only come from the context.
    pub masked: TargetLosses,
    /// Targets that kept their word or got a random one: a model can lower its loss there by
    /// copying what it sees, without any context.
    pub visible: TargetLosses,
}

/// The masked LM's held-out loss split by input, one [`InputSplit`] per held-out sequence (in
/// order), on exactly the batches, masking and targets of [`heldout_loss`] (so the sums over
/// both parts give it back) beside the best context-free model's loss on each target.
///
/// Why: the held-out loss as a whole is read against the context-free level (REPORT.md gives
/// it for the study's corpus), but a model can use context at `[MASK]` and still be above that level if it copies
/// its visible input badly; at `[MASK]` positions nothing but context beats the unigram. Per
/// sequence, so that an interval can resample held-out sequences.
pub fn heldout_loss_by_input(
    model: &Transformer,
    data: &Sequences,
    cfg: &TrainingConfig,
) -> Vec<InputSplit> {
    let model = model.valid();
    let device = model_device(&model);
    let context_free = data.context_free();
    let n = cfg
        .eval_batches
        .unwrap_or_else(|| data.n_heldout_batches(cfg.batch_size));
    let mut split = Vec::new();
    for i in 0..n {
        let batch = data.heldout_batch(Objective::Mlm, cfg.batch_size, i);
        let (b, t) = (batch.batch, batch.seq_len);
        let ids: Vec<i64> = batch.inputs.iter().map(|&x| x as i64).collect();
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, t]), &device);
        let last = model.forward(tokens, None, false).hidden.pop().unwrap();
        let logp: Vec<f32> = target_log_probs(&model, last, &batch.targets, &device)
            .into_data()
            .try_into_vec::<f32>()
            .expect("log-probabilities are f32");
        let first = split.len();
        split.resize(first + b, InputSplit::default());
        for (&(pos, target), lp) in batch.targets.iter().zip(logp) {
            let seq = &mut split[first + pos / t];
            let free = -context_free.prob(Objective::Mlm, &batch, pos, target).ln();
            let part = if batch.inputs[pos] == data.specials.mask {
                &mut seq.masked
            } else {
                &mut seq.visible
            };
            part.add(-f64::from(lp), free);
        }
    }
    split
}

/// The held-out sequences, as indices into [`heldout_loss_by_input`]'s output, of the block a
/// run reports on: with `dev_split` the test block (the sequences of the batches after
/// [`crate::data::dev_batches`]; the dev block's are where learning rates and plateaus were
/// judged), else all of them. A run with `dev_split` refuses more evaluation batches than the
/// held-out split has (checked when it starts, [`train`]), so every batch but the
/// last is full and the test block starts at `dev_batches * batch_size`.
pub fn reported_sequences(data: &Sequences, cfg: &TrainingConfig) -> std::ops::RangeFrom<usize> {
    let n = cfg
        .eval_batches
        .unwrap_or_else(|| data.n_heldout_batches(cfg.batch_size));
    let first = if cfg.dev_split {
        crate::data::dev_batches(n) * cfg.batch_size
    } else {
        0
    };
    first..
}

/// AdamW with the config's weight decay, epsilon and per-tensor gradient clipping.
pub fn optimizer(cfg: &TrainingConfig) -> burn::optim::ModuleOptimizer {
    AdamWConfig::new()
        .with_weight_decay(cfg.weight_decay)
        .with_epsilon(cfg.adam_epsilon)
        .with_grad_clipping(
            cfg.grad_clip
                .map(|c| burn::grad_clipping::GradientClippingConfig::Norm(c)),
        )
        .init()
}

/// One optimisation step's forward and backward: the loss and the parameter gradients.
/// Panics where the backend cannot compute the step; [`try_train_step`] returns that instead.
pub fn train_step(
    model: &Transformer,
    batch: &Batch,
    objective: Objective,
    device: &Device,
) -> (f32, GradientsParams) {
    try_train_step(model, batch, objective, device).unwrap_or_else(|e| panic!("{e}"))
}

/// [`train_step`], with a backend's failure to compute the step returned as an error: a GPU
/// that cannot allocate a buffer the step needs (lavapipe refuses the full causal LM's logits
/// at 32 x 63 targets x 22,546 words, 182 MB) fails when the loss is read back, and a benchmark
/// or a user's loop can then say so and go on.
pub fn try_train_step(
    model: &Transformer,
    batch: &Batch,
    objective: Objective,
    device: &Device,
) -> Result<(f32, GradientsParams), TrainError> {
    let loss = batch_loss(model, batch, objective, device);
    let value: f32 = loss
        .clone()
        .try_into_scalar()
        .map_err(|e| TrainError::Backend(e.to_string()))?;
    let grads = GradientsParams::from_grads(loss.backward(), model);
    Ok((value, grads))
}

/// Mean cross-entropy over every target position of the held-out batches (all of them unless
/// `eval_batches` limits it), without dropout or gradients. Batches are weighted by their number
/// of targets, so the value is the per-token loss over the split, whatever the batch sizes.
pub fn heldout_loss(model: &Transformer, data: &Sequences, cfg: &TrainingConfig) -> f64 {
    heldout_losses(model, data, cfg).heldout
}

/// The weights a run starts from, before the output bias ([`TrainingConfig::unigram_bias_init`]
/// needs the data): the initial seed's draw of `model_cfg` ([`TrainingConfig::init_seed`], else
/// [`TrainingConfig::seed`]), then the frozen input redrawn at
/// [`TrainingConfig::frozen_embedding_std`], then the untied head's start
/// ([`TrainingConfig::lm_head_init`]). Seeds `device`. What a measurement reads as a run's
/// initialisation (its W0) comes from here too, so it is exactly what the run started from.
pub fn initial_model(
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
    device: &Device,
) -> Result<Transformer, TrainError> {
    fits_model(&model_cfg.settings(), cfg)?;
    device.seed(cfg.init_seed.unwrap_or(cfg.seed));
    let mut model = model_cfg.init(device);
    if let Some(std) = cfg.frozen_embedding_std {
        model = model.with_token_embedding_std(std, true, device);
    }
    if cfg.lm_head_init != LmHeadInit::Normal {
        model = model
            .with_lm_head_start(cfg.lm_head_init == LmHeadInit::Zero)
            .expect("fits_model: the head is untied");
    }
    Ok(model)
}

/// The training options that need a model of some kind: a frozen input's scale needs a frozen
/// input, an untied head's start needs an untied head.
pub fn fits_model(model_cfg: &ModelSettings, cfg: &TrainingConfig) -> Result<(), TrainError> {
    if cfg.frozen_embedding_std.is_some() && !model_cfg.freeze_embeddings {
        return Err(TrainError::Config(
            "frozen_embedding_std is for a frozen input embedding ([model] freeze_embeddings = true)".into(),
        ));
    }
    if cfg.lm_head_init != LmHeadInit::Normal && model_cfg.tie_lm_head {
        return Err(TrainError::Config(format!(
            "lm_head_init = {:?} is for an untied LM head; this model ties its head to the token embedding ([model] tie_lm_head = true)",
            format!("{:?}", cfg.lm_head_init).to_lowercase()
        )));
    }
    Ok(())
}

/// The held-out loss of a model and, split as a run with `dev_split` splits it
/// ([`crate::data::dev_batches`]), its dev and test halves: what the curve's `heldout`,
/// `dev` and `test` rows of an evaluation hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldoutLosses {
    pub heldout: f64,
    pub dev: f64,
    pub test: f64,
}

pub fn heldout_losses(
    model: &Transformer,
    data: &Sequences,
    cfg: &TrainingConfig,
) -> HeldoutLosses {
    let model = model.valid();
    let device = model_device(&model);
    let n = cfg
        .eval_batches
        .unwrap_or_else(|| data.n_heldout_batches(cfg.batch_size));
    let n_dev = crate::data::dev_batches(n);
    let mut sums = [(0.0f64, 0usize); 3];
    for i in 0..n {
        let batch = data.heldout_batch(cfg.objective, cfg.batch_size, i);
        let v: f32 = batch_loss(&model, &batch, cfg.objective, &device).into_scalar();
        let t = batch.targets.len();
        for k in [0, if i < n_dev { 1 } else { 2 }] {
            sums[k].0 += v as f64 * t as f64;
            sums[k].1 += t;
        }
    }
    let [heldout, dev, test] = sums.map(|(sum, t)| sum / t.max(1) as f64);
    HeldoutLosses { heldout, dev, test }
}

fn model_device(model: &Transformer) -> Device {
    model.lm_bias.val().device()
}

/// How one invocation of [`train`] runs.
#[derive(Clone, Debug, Default)]
pub struct RunControl {
    /// Continue from `run_dir/checkpoint` when there is one.
    pub resume: bool,
    /// Stop (with a checkpoint) after this step even if `steps` is further: a time-boxed run
    /// that a later `resume` continues as if it had never stopped.
    pub stop_at: Option<usize>,
    /// Show progress on stderr: a bar on a terminal, else a plain line every
    /// [`PROGRESS_EVERY`] and at every held-out evaluation (a log file shows the run moving).
    pub progress: bool,
    /// More devices to train on beside [`train`]'s `device`, data-parallel (burn-train's
    /// `MultiDevice`; [`crate::backend::BackendKind::devices`] names N of a backend). Empty:
    /// `device` alone. Not part of the run's config: the same steps on more devices are the
    /// same run, up to the order in which the shards' gradients are summed.
    pub more_devices: Vec<Device>,
    /// Ask for burn-train's distributed data parallel (`ExecutionStrategy::ddp`) instead of
    /// `MultiDevice`. burn 0.22.1 all-reduces only on its CUDA backend (NCCL), which this
    /// workspace does not build, so this is refused with a [`TrainError::Config`] naming what is
    /// needed (on flex, ndarray or wgpu burn would panic mid-run).
    pub ddp: bool,
}

/// Why [`RunControl::ddp`] is refused in this build.
pub const DDP_UNAVAILABLE: &str = "distributed data parallel (burn-train's ExecutionStrategy::ddp) needs an all-reduce across devices, which burn 0.22.1 has only on its CUDA backend (NCCL); this build has flex, ndarray and wgpu, whose all-reduce panics, and no CUDA backend (its cubecl-llvm dependency downloads a prebuilt LLVM when it builds). Train with devices = N instead: burn-train's MultiDevice sums the devices' gradients on the first one";

/// Trains `model_cfg` on `data` on `device` (autodiff is added here), writing checkpoints under
/// `run_dir/checkpoint`. Holds `run_dir`'s lock while it runs. The loop is burn-train's
/// (`SupervisedTraining` with a `Learner`; [`crate::engine`] is the glue): on one device, or
/// with `control.more_devices` data-parallel over `device` and those
/// (burn's `MultiDevice`: each computes its shard of every step's batch, the gradients are
/// summed on the first).
///
/// Resuming loads the optimiser state onto burn's *default* device (burn 0.22.1); a program
/// training on a CPU backend should call [`crate::backend::pin_default_device`] first, as the
/// `experiments` binary does, or the resume starts the wgpu stack.
pub fn train(
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
    data: &Sequences,
    device: &Device,
    run_dir: &Path,
    control: &RunControl,
) -> Result<TrainOutcome, TrainError> {
    use burn::train::{ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining};

    let RunControl {
        resume,
        stop_at,
        progress,
        more_devices,
        ddp,
    } = control;
    if *ddp {
        return Err(TrainError::Config(DDP_UNAVAILABLE.into()));
    }
    cfg.validate()
        .map_err(|e| TrainError::Config(format!("[training] {e}")))?;
    model_cfg
        .validate()
        .map_err(|e| TrainError::Config(format!("[model] {e}")))?;
    let devices = 1 + more_devices.len();
    if devices > cfg.batch_size {
        return Err(TrainError::Config(format!(
            "devices ({devices}) is more than batch_size ({}): every device needs a row of each batch",
            cfg.batch_size
        )));
    }
    fits_model(&model_cfg.settings(), cfg)?;
    let _lock = checkpoint::lock(run_dir)?;
    let device = device.clone().autodiff();
    let mut model = initial_model(model_cfg, cfg, &device)?;
    let heldout_batches =
        (cfg.eval_batches).unwrap_or_else(|| data.n_heldout_batches(cfg.batch_size));
    if cfg.dev_split && heldout_batches > data.n_heldout_batches(cfg.batch_size) {
        return Err(TrainError::Config(format!(
            "dev_split with eval_batches {heldout_batches}: the held-out split has {} batches, and past them batches wrap round onto dev sequences, so the test half would re-read the dev half",
            data.n_heldout_batches(cfg.batch_size)
        )));
    }
    if cfg.dev_split && heldout_batches < 2 {
        return Err(TrainError::Config(format!(
            "dev_split needs at least 2 held-out batches to halve, got {heldout_batches} (eval_batches, or the held-out split's {} sequences in batches of {})",
            data.n_heldout(),
            cfg.batch_size
        )));
    }
    if cfg.unigram_bias_init {
        let bias = data.unigram_log_probs(model_cfg.vocab_size);
        model.lm_bias = burn::module::Param::from_tensor(Tensor::from_data(
            TensorData::new(bias, [model_cfg.vocab_size]),
            &device,
        ));
    }
    let mut optim = optimizer(cfg);
    let ckpt = run_dir.join("checkpoint");
    if let Some(what) = checkpoint::recover(&ckpt)? {
        eprintln!("{}: {what}", run_dir.display());
    }
    let mut curve = Vec::new();
    let mut start = 0;
    let mut pending = Pending::default();
    if *resume && ckpt.join("state.json").exists() {
        let loaded = checkpoint::load(&ckpt, model, optim, model_cfg, cfg)?;
        model = loaded.model;
        optim = loaded.optim;
        start = loaded.state.step;
        pending = loaded.state.pending;
        curve = loaded.curve;
    }
    let resumed_from = start;
    let mut end = stop_at.map_or(cfg.steps, |s| s.min(cfg.steps));
    if let Some(stopped) = cfg.plateau.as_ref().and_then(|r| plateau_step(&curve, r)) {
        // The checkpoint is of a run that stopped on its plateau: nothing left to train.
        end = end.min(stopped);
    }
    if start >= end {
        return Ok(TrainOutcome {
            model,
            curve,
            resumed_from,
        });
    }

    // Blocks of steps (burn's epochs) end on every step where something happens: held-out
    // evaluations, checkpoints, snapshots, the end.
    let every = |n: usize| (1..=end / n).map(move |i| i * n);
    let mut marks: Vec<usize> = every(cfg.eval_every)
        .chain(every(cfg.checkpoint_every))
        .collect();
    marks.extend(&cfg.snapshot_steps);
    marks.push(cfg.steps);
    let blocks = crate::engine::Blocks::new(start, end, &marks);
    let shared_cfg = std::sync::Arc::new(cfg.clone());
    let data = std::sync::Arc::new(data.clone());
    let interrupter = burn::train::Interrupter::new();
    let state = std::sync::Arc::new(std::sync::Mutex::new(crate::engine::RunState::new(
        shared_cfg.clone(),
        blocks,
        curve,
        pending,
        if start > 0 {
            format!("step {start}")
        } else {
            "none".to_string()
        },
        Progress::new(*progress, cfg.steps, start),
        devices,
        interrupter.clone(),
    )));
    state.lock().unwrap_or_else(|e| e.into_inner()).dev_batches =
        crate::data::dev_batches(heldout_batches);
    let checkpoints = crate::engine::Checkpoints::new(state.clone(), run_dir, model_cfg, &model);
    let train_data =
        crate::engine::StepLoader::new(data.clone(), shared_cfg.clone(), blocks, devices);
    let heldout = crate::engine::HeldoutLoader::new(data, shared_cfg.clone(), blocks);
    let schedule = crate::engine::WarmupLinear {
        cfg: shared_cfg,
        step: start,
    };
    let strategy = if devices == 1 {
        ExecutionStrategy::SingleDevice(device.clone())
    } else {
        let all = std::iter::once(device.clone())
            .chain(more_devices.iter().map(|d| d.clone().autodiff()))
            .collect();
        ExecutionStrategy::MultiDevice(all, MultiDeviceOptim::OptimMainDevice)
    };
    let training = SupervisedTraining::new(
        run_dir,
        std::sync::Arc::new(train_data),
        std::sync::Arc::new(heldout),
    )
    .with_training_strategy(strategy.into())
    .with_application_logger(None)
    .with_metric_logger(crate::engine::NoLog)
    .renderer(Box::new(crate::engine::Silent))
    .metric_train(crate::engine::Recorder::new(state.clone(), true))
    .metric_valid(crate::engine::Recorder::new(state.clone(), false))
    .with_custom_checkpointers(
        crate::engine::Part::<0>(checkpoints.clone()),
        crate::engine::Part::<1>(checkpoints.clone()),
        crate::engine::Part::<2>(checkpoints.clone()),
    )
    .with_checkpointing_strategy(checkpoints.clone())
    .early_stopping(checkpoints)
    .with_interrupter(interrupter)
    .num_epochs(blocks.count());
    let result = training.launch(Learner::new(model, optim, schedule));
    let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = s.error.take() {
        return Err(e);
    }
    if let Some(e) = result.error {
        s.report.abandon();
        return Err(TrainError::Engine(e.to_string()));
    }
    s.report.finish();
    Ok(TrainOutcome {
        model: result.model,
        curve: std::mem::take(&mut s.curve),
        resumed_from,
    })
}
