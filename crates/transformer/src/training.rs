//! Training: AdamW (Loshchilov & Hutter 2019), linear warm-up then linear decay, gradient-norm
//! clipping, held-out loss and perplexity every `eval_every` steps, checkpoints every
//! `checkpoint_every` steps and at the end, resume from the last checkpoint, and a stop with a
//! message on a NaN or infinite loss (the last good checkpoint is left as it was).
//!
//! Why not burn-train's `Learner`: it checkpoints per epoch, keeps its own metric and renderer
//! stack, and draws data from burn-dataset loaders; we need checkpoints every K steps, a resume
//! that reproduces the step-indexed data order of [`crate::data`], and the NaN stop above. The
//! loop is kept to [`train_step`] and [`heldout_loss`] — the shape of burn-train's `TrainStep` /
//! `InferenceStep` — so that moving onto the `Learner` (and its multi-device and distributed
//! `ExecutionStrategy`) later replaces this driver, not the model or the data.

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

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
    pub eval_batches: usize,
    pub checkpoint_every: usize,
    pub heldout_fraction: f64,
    pub seed: u64,
    /// Start the LM head's output bias at the training split's log unigram probabilities, so
    /// step 0 already predicts at the unigram entropy instead of at ln(vocabulary size) and the
    /// first few hundred steps go into context rather than into word frequencies.
    pub unigram_bias_init: bool,
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
            eval_batches: 8,
            checkpoint_every: 500,
            heldout_fraction: 0.02,
            seed: 1,
            unigram_bias_init: true,
        }
    }
}

impl TrainingConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.steps == 0
            || self.batch_size == 0
            || self.eval_every == 0
            || self.eval_batches == 0
            || self.checkpoint_every == 0
        {
            return Err("steps, batch_size, eval_every, eval_batches and checkpoint_every must be at least 1".into());
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return Err(format!("lr must be > 0, got {}", self.lr));
        }
        if self.heldout_fraction <= 0.0 {
            return Err(
                "heldout_fraction must be > 0: the held-out loss is the measure of training".into(),
            );
        }
        Ok(())
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
    #[error("invalid training config: {0}")]
    Config(String),
    #[error("training stopped at step {step}: the loss is {loss}; the last good checkpoint ({checkpoint}) is kept. Lower lr or raise warmup_steps")]
    NonFiniteLoss {
        step: usize,
        loss: f32,
        checkpoint: String,
    },
    #[error("{path}: checkpoint: {message}")]
    Checkpoint { path: PathBuf, message: String },
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

/// `state.json` of a checkpoint. The loss curve goes beside it in `curve.csv`: JSON would not
/// give the losses back bit for bit, and a resumed run's curve must equal the uninterrupted one's.
#[derive(Serialize, Deserialize)]
struct CheckpointState {
    step: usize,
    model: TransformerConfigRecord,
    training: TrainingConfig,
}

/// The model config as recorded in a checkpoint (resume refuses a different one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransformerConfigRecord(pub serde_json::Value);

impl From<&TransformerConfig> for TransformerConfigRecord {
    fn from(c: &TransformerConfig) -> Self {
        TransformerConfigRecord(serde_json::to_value(c).expect("config serialises"))
    }
}

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
    let [b, t, d] = last.dims();
    let m = targets.len();
    let positions: Vec<i64> = targets.iter().map(|&(p, _)| p as i64).collect();
    let targets: Vec<i64> = targets.iter().map(|&(_, y)| y as i64).collect();
    let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [m]), device);
    let targets = Tensor::<2, Int>::from_data(TensorData::new(targets, [m, 1]), device);
    let hidden = last.reshape([b * t, d]).select(0, positions);
    let logp = log_softmax(model.lm_logits(hidden), 1);
    logp.gather(1, targets).mean().neg()
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
pub fn train_step(
    model: &Transformer,
    batch: &Batch,
    objective: Objective,
    device: &Device,
) -> (f32, GradientsParams) {
    let loss = batch_loss(model, batch, objective, device);
    let value: f32 = loss.clone().into_scalar();
    let grads = GradientsParams::from_grads(loss.backward(), model);
    (value, grads)
}

/// Mean loss over the first `n` held-out batches, without dropout or gradients.
pub fn heldout_loss(model: &Transformer, data: &Sequences, cfg: &TrainingConfig) -> f64 {
    let model = model.valid();
    let mut total = 0.0;
    for i in 0..cfg.eval_batches {
        let batch = data.heldout_batch(cfg.objective, cfg.batch_size, i);
        let v: f32 = batch_loss(&model, &batch, cfg.objective, &model_device(&model)).into_scalar();
        total += v as f64;
    }
    total / cfg.eval_batches as f64
}

fn model_device(model: &Transformer) -> Device {
    model.lm_bias.val().device()
}

/// How one invocation of [`train`] runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunControl {
    /// Continue from `run_dir/checkpoint` when there is one.
    pub resume: bool,
    /// Stop (with a checkpoint) after this step even if `steps` is further: a time-boxed run
    /// that a later `resume` continues as if it had never stopped.
    pub stop_at: Option<usize>,
    pub progress: bool,
}

/// Trains `model_cfg` on `data` on `device` (autodiff is added here), writing checkpoints under
/// `run_dir/checkpoint`.
pub fn train(
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
    data: &Sequences,
    device: &Device,
    run_dir: &Path,
    control: RunControl,
) -> Result<TrainOutcome, TrainError> {
    let RunControl {
        resume,
        stop_at,
        progress,
    } = control;
    cfg.validate().map_err(TrainError::Config)?;
    model_cfg.validate().map_err(TrainError::Config)?;
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
    let mut curve = Vec::new();
    let mut start = 0;
    if resume && ckpt.join("state.json").exists() {
        let (m, o, state, c) = load_checkpoint(&ckpt, model, optim, model_cfg, cfg)?;
        model = m;
        optim = o;
        start = state.step;
        curve = c;
    }
    let resumed_from = start;
    let mut last_checkpoint = if start > 0 {
        format!("step {start}")
    } else {
        "none".to_string()
    };

    let bar = if progress {
        indicatif::ProgressBar::new(cfg.steps as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} steps  {msg}  eta {eta}")
            .unwrap(),
    );
    bar.set_position(start as u64);
    let tokens_per_step = (cfg.batch_size * cfg.seq_len) as f64;
    let (mut since, mut loss_sum, mut n_sum) = (Instant::now(), 0.0f64, 0usize);
    let end = stop_at.map_or(cfg.steps, |s| s.min(cfg.steps));
    for step in start..end {
        let batch = data.train_batch(cfg.objective, cfg.batch_size, step, cfg.seed);
        let (loss, grads) = train_step(&model, &batch, cfg.objective, &device);
        if !loss.is_finite() {
            bar.abandon();
            return Err(TrainError::NonFiniteLoss {
                step,
                loss,
                checkpoint: last_checkpoint,
            });
        }
        let lr = cfg.lr_at(step);
        model = optim.step(lr, model, grads);
        loss_sum += loss as f64;
        n_sum += 1;
        let done = step + 1;
        bar.set_position(done as u64);
        if done % cfg.eval_every == 0 || done == cfg.steps {
            let tps = tokens_per_step * n_sum as f64 / since.elapsed().as_secs_f64();
            let train_loss = loss_sum / n_sum as f64;
            let heldout = heldout_loss(&model, data, cfg);
            for (split, l) in [("train", train_loss), ("heldout", heldout)] {
                curve.push(CurvePoint {
                    step: done,
                    split: split.into(),
                    loss: l,
                    perplexity: l.exp(),
                    lr,
                    tokens_per_second: tps,
                });
            }
            bar.set_message(format!(
                "loss {train_loss:.3}  held-out {heldout:.3}  {tps:.0} tok/s  lr {lr:.2e}"
            ));
            (since, loss_sum, n_sum) = (Instant::now(), 0.0, 0);
        }
        if done % cfg.checkpoint_every == 0 || done == end {
            save_checkpoint(&ckpt, &model, &optim, model_cfg, cfg, done, &curve)?;
            last_checkpoint = format!("step {done}");
        }
    }
    bar.finish_and_clear();
    Ok(TrainOutcome {
        model,
        curve,
        resumed_from,
    })
}

fn ckpt_err(path: &Path, message: impl ToString) -> TrainError {
    TrainError::Checkpoint {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

/// Writes the checkpoint to a fresh directory, then swaps it in: a crash leaves either the old or
/// the new checkpoint complete, never a mix.
fn save_checkpoint(
    dir: &Path,
    model: &Transformer,
    optim: &burn::optim::ModuleOptimizer,
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
    step: usize,
    curve: &[CurvePoint],
) -> Result<(), TrainError> {
    let tmp = dir.with_extension("tmp");
    let old = dir.with_extension("old");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| ckpt_err(&tmp, e))?;
    model
        .clone()
        .save_file(tmp.join("model.bpk"))
        .map_err(|e| ckpt_err(&tmp, e))?;
    optim
        .save(tmp.join("optimizer.bpk"))
        .map_err(|e| ckpt_err(&tmp, e))?;
    let state = CheckpointState {
        step,
        model: model_cfg.into(),
        training: cfg.clone(),
    };
    std::fs::write(
        tmp.join("state.json"),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .map_err(|e| ckpt_err(&tmp, e))?;
    let mut w = csv::Writer::from_path(tmp.join("curve.csv")).map_err(|e| ckpt_err(&tmp, e))?;
    for point in curve {
        w.serialize(point).map_err(|e| ckpt_err(&tmp, e))?;
    }
    w.flush().map_err(|e| ckpt_err(&tmp, e))?;
    let _ = std::fs::remove_dir_all(&old);
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| ckpt_err(dir, e))?;
    }
    std::fs::rename(&tmp, dir).map_err(|e| ckpt_err(dir, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

fn load_checkpoint(
    dir: &Path,
    model: Transformer,
    optim: burn::optim::ModuleOptimizer,
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
) -> Result<
    (
        Transformer,
        burn::optim::ModuleOptimizer,
        CheckpointState,
        Vec<CurvePoint>,
    ),
    TrainError,
> {
    let text = std::fs::read_to_string(dir.join("state.json"))
        .map_err(|e| ckpt_err(&dir.join("state.json"), e))?;
    let state: CheckpointState =
        serde_json::from_str(&text).map_err(|e| ckpt_err(&dir.join("state.json"), e))?;
    if state.model != model_cfg.into() {
        return Err(ckpt_err(
            dir,
            "the model config differs from the checkpoint's; use a new run directory",
        ));
    }
    if state.training != *cfg {
        // Even `steps` may not change: the learning-rate schedule depends on it.
        return Err(ckpt_err(
            dir,
            "the training config differs from the checkpoint's; use a new run directory",
        ));
    }
    let record = burn::store::ModuleRecord::load(dir.join("model.bpk"))
        .map_err(|e| ckpt_err(&dir.join("model.bpk"), e))?;
    let model = model
        .try_load_record(record)
        .map_err(|e| ckpt_err(&dir.join("model.bpk"), e))?;
    let optim = optim
        .load(dir.join("optimizer.bpk"))
        .map_err(|e| ckpt_err(&dir.join("optimizer.bpk"), e))?;
    let curve_path = dir.join("curve.csv");
    let curve = csv::Reader::from_path(&curve_path)
        .and_then(|mut r| r.deserialize().collect::<Result<Vec<CurvePoint>, _>>())
        .map_err(|e| ckpt_err(&curve_path, e))?;
    Ok((model, optim, state, curve))
}
