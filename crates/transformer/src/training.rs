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

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, Pending};
use crate::data::{Batch, Objective, Sequences};
use crate::model::{Transformer, TransformerConfig};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainingConfig {
    pub objective: Objective,
    pub steps: usize,
    pub batch_size: usize,
    /// Tokens per sequence, `[CLS]` and `[SEP]` included.
    pub seq_len: usize,
    pub lr: f64,
    pub warmup_steps: usize,
    pub weight_decay: f32,
    /// AdamW's epsilon. burn's default (1e-5) is larger than most per-element gradients of the
    /// 22k-row embedding matrix (softmax gradients of rare words are ~1e-6), which damps their
    /// updates and keeps masked-LM training on the unigram plateau; PyTorch's 1e-8 does not.
    pub adam_epsilon: f32,
    /// Clip each parameter tensor's gradient L2 norm to this (burn's `GradientClipping::Norm`
    /// works per tensor, not globally); none when absent.
    pub grad_clip: Option<f32>,
    pub eval_every: usize,
    /// Held-out batches per evaluation; absent (the default): the whole held-out split, every
    /// sequence once. The loss is the mean over all target positions scored.
    pub eval_batches: Option<usize>,
    pub checkpoint_every: usize,
    pub heldout_fraction: f64,
    pub seed: u64,
    /// Start the LM head's output bias at the training split's log unigram probabilities, so
    /// step 0 already predicts at the unigram entropy instead of at ln(vocabulary size) and the
    /// first few hundred steps go into context rather than into word frequencies.
    pub unigram_bias_init: bool,
    /// Causal LM only: the fraction of next-token targets each training batch keeps ("matched
    /// targets": 0.15 makes as many predictions per step as a masked LM); absent, every
    /// position (the full-loss causal LM). Left out of the config's JSON when absent, so the
    /// run hashes of configs written before it existed do not move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clm_target_fraction: Option<f64>,
    /// Stop before `steps` once the held-out loss has plateaued ([`Plateau`]); `steps` stays
    /// the horizon of the learning-rate schedule. Absent: run all `steps`. Left out of the JSON
    /// when absent, like `clm_target_fraction`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plateau: Option<Plateau>,
    /// Steps after which the model's weights are also kept as
    /// `run_dir/snapshots/step-<N>.bpk` ([`crate::checkpoint::load_snapshot`]), so that a study
    /// can measure a run at several points of one learning-rate schedule (a shorter run would
    /// decay its rate sooner and not be the same model). A run stopped on its plateau keeps
    /// those before the stop. Left out of the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshot_steps: Vec<usize>,
}

/// The plateau rule: at an evaluation, stop when the held-out loss is less than `min_gain` nats
/// below the last held-out loss measured at least `window` steps earlier (for example one
/// epoch's steps and 0.01 nats: "less than 0.01 nats gained over the last epoch"), counting
/// only evaluations below `context_free_loss` when it is set. A function of the loss curve
/// alone, so a resumed run stops where the uninterrupted one did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plateau {
    pub min_gain: f64,
    pub window: usize,
    /// The best held-out loss of a model that ignores context
    /// ([`crate::data::context_free_loss`]: the unigram entropy for a causal LM, lower for a
    /// masked LM, which can copy its visible input): evaluations at or above it never count as
    /// a plateau. A masked LM with an untied head or a frozen input can sit on the unigram
    /// plateau, a saddle, for more than an epoch, and then creep towards the copying level,
    /// before it starts to use context (seen in the fair-budget study); "less than 0.01 nats
    /// gained" there is not convergence. Derived from the corpus and the objective, which a
    /// run's key already holds, so it is left out of the key (run hashes written before it
    /// existed do not move).
    #[serde(skip)]
    pub context_free_loss: Option<f64>,
}

/// The step at which `curve` (held-out rows) first meets the plateau rule, if it does.
pub fn plateau_step(curve: &[CurvePoint], rule: &Plateau) -> Option<usize> {
    let heldout: Vec<&CurvePoint> = curve.iter().filter(|p| p.split == "heldout").collect();
    heldout.iter().find_map(|now| {
        if rule.context_free_loss.is_some_and(|h| !(now.loss < h)) {
            return None;
        }
        let earlier = heldout
            .iter()
            .rev()
            .find(|p| p.step + rule.window <= now.step)?;
        (earlier.loss - now.loss < rule.min_gain).then_some(now.step)
    })
}

/// Whether a run's curve is complete: it reached `steps`, or stopped on its plateau rule.
pub fn finished(curve: &[CurvePoint], cfg: &TrainingConfig) -> bool {
    curve.iter().any(|p| p.step == cfg.steps)
        || cfg
            .plateau
            .as_ref()
            .is_some_and(|rule| plateau_step(curve, rule).is_some())
}

impl Default for TrainingConfig {
    fn default() -> Self {
        TrainingConfig {
            objective: Objective::Mlm,
            steps: 2000,
            batch_size: 32,
            seq_len: 64,
            lr: 1e-3,
            warmup_steps: 100,
            weight_decay: 0.01,
            adam_epsilon: 1e-8,
            grad_clip: Some(1.0),
            eval_every: 200,
            eval_batches: None,
            checkpoint_every: 500,
            heldout_fraction: 0.02,
            seed: 1,
            unigram_bias_init: true,
            clm_target_fraction: None,
            plateau: None,
            snapshot_steps: Vec::new(),
        }
    }
}

impl TrainingConfig {
    /// Checks every value burn and the maths can take; the message names the key (as in the
    /// `[training]` table of a config) and the value.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("steps", self.steps),
            ("batch_size", self.batch_size),
            ("eval_every", self.eval_every),
            ("eval_batches", self.eval_batches.unwrap_or(1)),
            ("checkpoint_every", self.checkpoint_every),
        ];
        for (key, value) in positive {
            if value == 0 {
                return Err(format!("{key} must be at least 1, got 0"));
            }
        }
        if self.seq_len < 3 {
            return Err(format!(
                "seq_len must be at least 3 ([CLS], a word, [SEP]), got {}",
                self.seq_len
            ));
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return Err(format!("lr must be a finite number > 0, got {}", self.lr));
        }
        if let Some(rule) = &self.plateau {
            if !(rule.min_gain >= 0.0 && rule.min_gain.is_finite()) {
                return Err(format!(
                    "plateau.min_gain must be a finite number >= 0 (nats), got {}",
                    rule.min_gain
                ));
            }
            if rule.window < self.eval_every {
                return Err(format!(
                    "plateau.window ({}) must be at least eval_every ({}): the rule compares two evaluations",
                    rule.window, self.eval_every
                ));
            }
        }
        if let Some(&bad) = self
            .snapshot_steps
            .iter()
            .find(|&&s| s == 0 || s > self.steps)
        {
            return Err(format!(
                "snapshot_steps must lie in 1..={} (steps), got {bad}",
                self.steps
            ));
        }
        if let Some(p) = self.clm_target_fraction {
            if self.objective != Objective::Clm {
                return Err(
                    "clm_target_fraction is for objective = \"clm\" only (a masked LM chooses its own 15%)"
                        .into(),
                );
            }
            if !(p > 0.0 && p <= 1.0) {
                return Err(format!("clm_target_fraction must be in (0, 1], got {p}"));
            }
        }
        if self.warmup_steps >= self.steps {
            return Err(format!(
                "warmup_steps ({}) must be less than steps ({}): the run would end before the learning rate reaches lr",
                self.warmup_steps, self.steps
            ));
        }
        if !(self.weight_decay >= 0.0 && self.weight_decay.is_finite()) {
            return Err(format!(
                "weight_decay must be a finite number >= 0, got {}",
                self.weight_decay
            ));
        }
        if !(self.adam_epsilon > 0.0 && self.adam_epsilon.is_finite()) {
            return Err(format!(
                "adam_epsilon must be a finite number > 0 (it divides the update), got {}",
                self.adam_epsilon
            ));
        }
        if let Some(c) = self.grad_clip {
            if !(c > 0.0 && c.is_finite()) {
                return Err(format!(
                    "grad_clip must be a finite number > 0 (leave it out for no clipping), got {c}"
                ));
            }
        }
        if !(self.heldout_fraction > 0.0 && self.heldout_fraction < 1.0) {
            return Err(format!(
                "heldout_fraction must be in (0, 1), got {}: the held-out loss is the measure of training",
                self.heldout_fraction
            ));
        }
        Ok(())
    }

    /// Whether the held-out loss is measured after step `done` (1-based): every `eval_every`
    /// steps and at the last.
    pub fn evaluates_at(&self, done: usize) -> bool {
        done.is_multiple_of(self.eval_every) || done == self.steps
    }

    /// Learning rate at `step`: linear warm-up over `warmup_steps`, then linear decay to 0.
    pub fn lr_at(&self, step: usize) -> f64 {
        let s = step as f64 + 1.0;
        let w = self.warmup_steps as f64;
        if s <= w {
            self.lr * s / w
        } else {
            self.lr
                * ((self.steps as f64 - step as f64) / (self.steps as f64 - w).max(1.0)).max(0.0)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("invalid config: {0}")]
    Config(String),
    #[error("training stopped at step {step}: the loss is {loss}; the last good checkpoint ({checkpoint}) is kept. Lower lr or raise warmup_steps")]
    NonFiniteLoss {
        step: usize,
        loss: f32,
        checkpoint: String,
    },
    #[error("training stopped at step {step}: parameter {param} holds {value} after the update; nothing non-finite is saved, the last good checkpoint ({checkpoint}) is kept. Lower lr or raise warmup_steps")]
    NonFiniteWeights {
        step: usize,
        param: String,
        value: f32,
        checkpoint: String,
    },
    #[error("{path}: checkpoint: {message}")]
    Checkpoint { path: PathBuf, message: String },
    #[error("training stopped: burn-train: {0}")]
    Engine(String),
    #[error("the backend could not compute the step: {0}")]
    Backend(String),
    #[error(
        "{path}: run directory in use by {holder}; wait for it to finish, or use another --out"
    )]
    InUse { path: PathBuf, holder: String },
}

/// One point of the loss curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub step: usize,
    /// `train` (mean over the steps since the last point) or `heldout`.
    pub split: String,
    pub loss: f64,
    pub perplexity: f64,
    pub lr: f64,
    pub tokens_per_second: f64,
}

pub use crate::checkpoint::TransformerConfigRecord;

pub struct TrainOutcome {
    pub model: Transformer,
    pub curve: Vec<CurvePoint>,
    /// Step the run started from (0, or the checkpoint's step when resumed).
    pub resumed_from: usize,
}

/// Cross-entropy of the model's predictions at the batch's target positions.
pub fn batch_loss(
    model: &Transformer,
    batch: &Batch,
    objective: Objective,
    device: &Device,
) -> Tensor<1> {
    let (b, t) = (batch.batch, batch.seq_len);
    let ids: Vec<i64> = batch.inputs.iter().map(|&x| x as i64).collect();
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, t]), device);
    let mut out = model.forward(tokens, None, objective == Objective::Clm);
    let last = out.hidden.pop().unwrap();
    target_loss(model, last, &batch.targets, device)
}

/// Mean cross-entropy of the LM head's predictions from the last layer's hidden states
/// `[batch, seq, d_model]` at `targets`: (flat position, target id) pairs, as in [`Batch`]. Only
/// those positions go through the vocabulary projection.
pub fn target_loss(
    model: &Transformer,
    last: Tensor<3>,
    targets: &[(usize, u32)],
    device: &Device,
) -> Tensor<1> {
    target_log_probs(model, last, targets, device).mean().neg()
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
/// Why: the held-out loss as a whole is read against the context-free level (6.313 nats on
/// text8), but a model can use context at `[MASK]` and still be above that level if it copies
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

/// Log-probability of each target under the LM head, `[targets, 1]`: only the target
/// positions go through the vocabulary projection.
fn target_log_probs(
    model: &Transformer,
    last: Tensor<3>,
    targets: &[(usize, u32)],
    device: &Device,
) -> Tensor<2> {
    let [b, t, d] = last.dims();
    let m = targets.len();
    let positions: Vec<i64> = targets.iter().map(|&(p, _)| p as i64).collect();
    let targets: Vec<i64> = targets.iter().map(|&(_, y)| y as i64).collect();
    let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [m]), device);
    let targets = Tensor::<2, Int>::from_data(TensorData::new(targets, [m, 1]), device);
    let hidden = last.reshape([b * t, d]).select(0, positions);
    let logp = log_softmax(model.lm_logits(hidden), 1);
    logp.gather(1, targets)
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
    let model = model.valid();
    let device = model_device(&model);
    let n = cfg
        .eval_batches
        .unwrap_or_else(|| data.n_heldout_batches(cfg.batch_size));
    let (mut total, mut targets) = (0.0f64, 0usize);
    for i in 0..n {
        let batch = data.heldout_batch(cfg.objective, cfg.batch_size, i);
        let v: f32 = batch_loss(&model, &batch, cfg.objective, &device).into_scalar();
        total += v as f64 * batch.targets.len() as f64;
        targets += batch.targets.len();
    }
    total / targets.max(1) as f64
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

/// How often a run whose stderr is not a terminal prints a progress line.
pub const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// The seed of burn's random number generator for step `step`: dropout draws from that
/// generator, so reseeding it per step makes every step's dropout masks a function of
/// (seed, step) alone, like its batch. Seeded once per run instead, a resumed run would draw
/// from a generator that had not seen the interrupted run's steps, and part from it at the
/// first step after the checkpoint (that was the resume bug with dropout on).
pub fn step_seed(seed: u64, step: usize) -> u64 {
    // splitmix64 of a mix of both: neighbouring steps get unrelated streams.
    let mut z = seed ^ (step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

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
    let _lock = checkpoint::lock(run_dir)?;
    let device = device.clone().autodiff();
    device.seed(cfg.seed);
    let mut model = model_cfg.init(&device);
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

/// Progress on stderr: indicatif's bar on a terminal; on a file or pipe (where the bar hides
/// itself) a plain line every [`PROGRESS_EVERY`] and at each held-out evaluation.
pub(crate) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    steps: usize,
    started: Instant,
    first_step: usize,
    last_line: Instant,
}

impl Progress {
    pub(crate) fn new(enabled: bool, steps: usize, start: usize) -> Progress {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        let bar = (enabled && terminal).then(|| {
            let bar = indicatif::ProgressBar::new(steps as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} steps  {msg}  eta {eta}",
                )
                .unwrap(),
            );
            bar.set_position(start as u64);
            bar
        });
        Progress {
            bar,
            plain: enabled && !terminal,
            steps,
            started: Instant::now(),
            first_step: start,
            last_line: Instant::now(),
        }
    }

    pub(crate) fn step(&mut self, done: usize, loss: f32, heldout: Option<f64>, tps: f64, lr: f64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            if let Some(h) = heldout {
                bar.set_message(format!(
                    "loss {loss:.3}  held-out {h:.3}  {tps:.0} tok/s  lr {lr:.2e}"
                ));
            }
        }
        if self.plain && (heldout.is_some() || self.last_line.elapsed() >= PROGRESS_EVERY) {
            let per_step =
                self.started.elapsed().as_secs_f64() / (done - self.first_step).max(1) as f64;
            let eta = per_step * (self.steps - done) as f64;
            let held = heldout.map_or(String::new(), |h| format!(" held-out {h:.4}"));
            eprintln!(
                "step {done}/{} loss {loss:.4}{held} {tps:.0} tok/s lr {lr:.2e} eta {}",
                self.steps,
                clock(eta)
            );
            self.last_line = Instant::now();
        }
    }

    pub(crate) fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Seconds as `h:mm:ss`.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}
