//! Training on burn-train's engine: the [`Transformer`] is a burn-train `TrainStep` /
//! `InferenceStep`, and [`crate::training::train`] hands it to `SupervisedTraining` with a
//! `Learner` (the model, AdamW, the warm-up + linear-decay schedule) and an
//! `ExecutionStrategy`: one device, or `MultiDevice` over several (each device computes the
//! gradients of its shard of every step's batch, burn sums them on the first device, which
//! steps the optimiser). What is ours is glue, in the shape burn-train asks for:
//!
//! * data ([`StepLoader`], [`HeldoutLoader`]): burn's "epoch" is a *block* of K steps of our
//!   step-indexed order (K divides every step where something happens: evaluations,
//!   checkpoints, snapshots, the end; [`Blocks`]), so a block boundary is where the held-out
//!   loss, snapshots and checkpoints fall, and a resumed run starts at its checkpoint's step;
//! * loss ([`Shard`]): a shard's loss is its summed cross-entropy over the *step's* number of
//!   targets, so that the shards' gradients add up to the gradient of the step's mean loss
//!   (two shards of B rows are one batch of 2B rows, not the mean of two batches);
//! * [`WarmupLinear`]: the schedule as an `LrScheduler`;
//! * [`Recorder`]: a burn-train metric that sees every step's loss and every held-out batch,
//!   keeps the loss curve, prints progress with tokens/s, and stops the run through burn's
//!   interrupter on a non-finite loss (before any checkpoint of that block is written);
//! * [`Checkpoints`]: burn-train's checkpointing strategy and checkpointers, writing our
//!   atomic checkpoint ([`crate::checkpoint`]) every `checkpoint_every` steps, at snapshots and
//!   at the end (the next block waits for it, as the step loop did), and deciding the plateau
//!   stop.
//!
//! Where the engine ends: burn-train runs the loop over blocks, the workers of the devices,
//! the gradient transfer and sum, the optimiser and scheduler steps, the event processing;
//! the model, the data order, the measures of training and the checkpoint format are ours.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn::data::dataset::DatasetError;
use burn::lr_scheduler::{LrScheduler, LrSchedulerRecord};
use burn::module::Module;
use burn::optim::OptimizerRecord;
use burn::store::ModuleRecord;
use burn::tensor::Device;
use burn::train::checkpoint::{
    Checkpointer, CheckpointerError, CheckpointingAction, CheckpointingStrategy,
};
use burn::train::metric::store::EventStoreClient;
use burn::train::metric::{Adaptor, Metric, MetricMetadata, MetricName, SerializedEntry};
use burn::train::{InferenceStep, ItemLazy, TrainOutput, TrainStep};

use crate::checkpoint::{self, Pending};
use crate::data::{Batch, Objective, Sequences};
use crate::loss::batch_loss;
use crate::model::{Transformer, TransformerConfig};
use crate::recipe::{plateau_step, step_seed, CurvePoint, TrainError, TrainingConfig};

/// One device's part of one optimiser step: rows of the step's batch.
#[derive(Clone, Debug)]
pub struct Shard {
    pub step: usize,
    /// A held-out batch's index (which half of a dev split it scores); 0 for training.
    pub index: usize,
    pub batch: Batch,
    /// Targets in the whole step's batch (all shards).
    pub step_targets: usize,
    pub objective: Objective,
    pub seed: u64,
}

/// What a step or a held-out batch reports: the loss (a shard's share of its step's mean, or
/// a held-out batch's mean) and how many targets it covers.
#[derive(Clone, Copy, Debug)]
pub struct Scored {
    pub step: usize,
    /// [`Shard::index`].
    pub index: usize,
    pub loss: f64,
    pub targets: usize,
}

impl ItemLazy for Scored {
    fn sync(self) -> Result<Self, burn::tensor::ExecutionError> {
        Ok(self)
    }
}

impl Adaptor<Scored> for Scored {
    fn adapt(&self) -> Scored {
        *self
    }
}

/// The step's batch split into `n` shards of consecutive rows (the first `batch % n` shards
/// one row longer), target positions moved to each shard's rows.
pub fn shards(batch: &Batch, n: usize) -> Vec<Batch> {
    let (b, t) = (batch.batch, batch.seq_len);
    let mut out = Vec::with_capacity(n);
    let mut row = 0;
    for d in 0..n {
        let rows = b / n + usize::from(d < b % n);
        let (lo, hi) = (row * t, (row + rows) * t);
        out.push(Batch {
            batch: rows,
            seq_len: t,
            inputs: batch.inputs[lo..hi].to_vec(),
            targets: (batch.targets.iter())
                .filter(|&&(p, _)| p >= lo && p < hi)
                .map(|&(p, y)| (p - lo, y))
                .collect(),
        });
        row += rows;
    }
    out
}

/// burn's random number generator belongs to a backend, not to a device: two devices of one
/// backend (two flex "devices" on one CPU) would draw each other's dropout masks in whatever
/// order their threads run. Seeding and the forward pass (where dropout draws) hold this lock,
/// so each shard's masks are a function of (seed, step) alone; the backward runs unlocked.
static RNG: Mutex<()> = Mutex::new(());

impl TrainStep for Transformer {
    type Input = Shard;
    type Output = Scored;

    fn step(&self, item: Shard) -> TrainOutput<Scored> {
        let device = self.lm_bias.val().device();
        let loss = {
            let _rng = RNG.lock().unwrap_or_else(|e| e.into_inner());
            device.seed(step_seed(item.seed, item.step));
            let mean = batch_loss(self, &item.batch, item.objective, &device);
            let own = item.batch.targets.len();
            if own == item.step_targets {
                // The whole step on one device: exactly the mean loss, as the step always was.
                mean
            } else {
                mean.mul_scalar(own as f64 / item.step_targets as f64)
            }
        };
        let value: f32 = loss.clone().into_scalar();
        let scored = Scored {
            step: item.step,
            index: item.index,
            loss: value as f64,
            targets: item.batch.targets.len(),
        };
        TrainOutput::new(self, loss.backward(), scored)
    }
}

impl InferenceStep for Transformer {
    type Input = Shard;
    type Output = Scored;

    fn step(&self, item: Shard) -> Scored {
        let device = self.lm_bias.val().device();
        let loss: f32 = batch_loss(self, &item.batch, item.objective, &device).into_scalar();
        Scored {
            step: item.step,
            index: item.index,
            loss: loss as f64,
            targets: item.batch.targets.len(),
        }
    }
}

/// The blocks of one run: block `b` (burn's epoch `b + 1`) is steps `start + b*k ..` up to
/// `end`.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    pub start: usize,
    pub end: usize,
    pub k: usize,
}

impl Blocks {
    /// The longest block length that keeps every step in `marks` (evaluations, snapshots,
    /// the end, the checkpoint resumed from) on a block boundary.
    pub fn new(start: usize, end: usize, marks: &[usize]) -> Blocks {
        let gcd = |mut a: usize, mut b: usize| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        let k = (marks.iter().copied())
            .chain([end - start])
            .filter(|&m| m > start && m <= end)
            .fold(0, |g, m| gcd(g, m - start));
        Blocks {
            start,
            end,
            k: k.max(1),
        }
    }

    pub fn count(&self) -> usize {
        (self.end - self.start).div_ceil(self.k)
    }

    /// The steps of burn's epoch `epoch` (1-based).
    pub fn steps(&self, epoch: usize) -> std::ops::Range<usize> {
        let lo = self.start + (epoch - 1) * self.k;
        lo.min(self.end)..(lo + self.k).min(self.end)
    }
}

/// The training split as burn-train reads it: items are (shard, step) pairs, shard-major, so
/// that burn's `split_dataloader` (which slices the items evenly over the devices) gives
/// device `d` shard `d` of every step. Each slice counts burn's epochs itself: `iter` is called
/// once per epoch.
pub struct StepLoader {
    data: Arc<Sequences>,
    cfg: Arc<TrainingConfig>,
    blocks: Blocks,
    shards: usize,
    /// Which shards this loader yields (all of them before burn slices it).
    own: std::ops::Range<usize>,
    epoch: AtomicUsize,
}

impl StepLoader {
    pub fn new(
        data: Arc<Sequences>,
        cfg: Arc<TrainingConfig>,
        blocks: Blocks,
        shards: usize,
    ) -> StepLoader {
        StepLoader {
            data,
            cfg,
            blocks,
            shards,
            own: 0..shards,
            epoch: AtomicUsize::new(1),
        }
    }

    /// Shard `d` of step `step`'s batch.
    fn shard(&self, step: usize, d: usize) -> Shard {
        let cfg = &self.cfg;
        let batch = self.data.train_batch_sampled(
            cfg.objective,
            cfg.batch_size,
            step,
            cfg.seed,
            cfg.clm_target_fraction,
        );
        let step_targets = batch.targets.len();
        let batch = if self.shards == 1 {
            batch
        } else {
            shards(&batch, self.shards).swap_remove(d)
        };
        Shard {
            step,
            index: 0,
            batch,
            step_targets,
            objective: cfg.objective,
            seed: cfg.seed,
        }
    }
}

/// An epoch's items, built one at a time (a block can be hundreds of batches).
struct Items<'a> {
    loader: &'a StepLoader,
    steps: std::ops::Range<usize>,
    next: usize,
    total: usize,
}

impl Iterator for Items<'_> {
    type Item = Result<Shard, DatasetError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.total {
            return None;
        }
        let per_shard = self.steps.len();
        let (d, i) = (self.next / per_shard, self.next % per_shard);
        self.next += 1;
        let shard = self.loader.own.start + d;
        Some(Ok(self.loader.shard(self.steps.start + i, shard)))
    }
}

impl DataLoaderIterator<Shard> for Items<'_> {
    fn progress(&self) -> Progress {
        Progress::new(self.next, self.total, Some("steps".into()))
    }
}

impl DataLoader<Shard> for StepLoader {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<Shard> + 'a> {
        let steps = self.blocks.steps(self.epoch.fetch_add(1, Ordering::SeqCst));
        let total = steps.len() * self.own.len();
        Box::new(Items {
            loader: self,
            steps,
            next: 0,
            total,
        })
    }

    fn num_items(&self) -> usize {
        self.blocks.k * self.own.len()
    }

    fn to_device(&self, _device: &Device) -> Arc<dyn DataLoader<Shard>> {
        // Items hold ids, not tensors: the step builds them on the model's device.
        Arc::new(self.slice_shards(self.own.clone()))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<Shard>> {
        // burn slices `num_items` evenly: [d*k, (d+1)*k) is shard d.
        let k = self.blocks.k;
        let own = self.own.start + start / k..self.own.start + end.div_ceil(k);
        Arc::new(self.slice_shards(own))
    }
}

impl StepLoader {
    fn slice_shards(&self, own: std::ops::Range<usize>) -> StepLoader {
        StepLoader {
            data: self.data.clone(),
            cfg: self.cfg.clone(),
            blocks: self.blocks,
            shards: self.shards,
            own,
            epoch: AtomicUsize::new(self.epoch.load(Ordering::SeqCst)),
        }
    }
}

/// The held-out split as burn-train reads it: every held-out batch (or `eval_batches`) after
/// a block that ends on an evaluation step, nothing after the others.
pub struct HeldoutLoader {
    data: Arc<Sequences>,
    cfg: Arc<TrainingConfig>,
    blocks: Blocks,
    epoch: AtomicUsize,
}

impl HeldoutLoader {
    pub fn new(data: Arc<Sequences>, cfg: Arc<TrainingConfig>, blocks: Blocks) -> HeldoutLoader {
        HeldoutLoader {
            data,
            cfg,
            blocks,
            epoch: AtomicUsize::new(1),
        }
    }

    fn copy(&self) -> HeldoutLoader {
        HeldoutLoader {
            data: self.data.clone(),
            cfg: self.cfg.clone(),
            blocks: self.blocks,
            epoch: AtomicUsize::new(self.epoch.load(Ordering::SeqCst)),
        }
    }

    fn batches(&self) -> usize {
        (self.cfg.eval_batches).unwrap_or_else(|| self.data.n_heldout_batches(self.cfg.batch_size))
    }
}

struct HeldoutItems<'a> {
    loader: &'a HeldoutLoader,
    step: usize,
    next: usize,
    total: usize,
}

impl Iterator for HeldoutItems<'_> {
    type Item = Result<Shard, DatasetError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.total {
            return None;
        }
        let cfg = &self.loader.cfg;
        let batch = (self.loader.data).heldout_batch(cfg.objective, cfg.batch_size, self.next);
        self.next += 1;
        Some(Ok(Shard {
            step: self.step,
            index: self.next - 1,
            step_targets: batch.targets.len(),
            batch,
            objective: cfg.objective,
            seed: cfg.seed,
        }))
    }
}

impl DataLoaderIterator<Shard> for HeldoutItems<'_> {
    fn progress(&self) -> Progress {
        Progress::new(self.next, self.total, Some("batches".into()))
    }
}

impl DataLoader<Shard> for HeldoutLoader {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<Shard> + 'a> {
        let epoch = self.epoch.fetch_add(1, Ordering::SeqCst);
        let step = self.blocks.steps(epoch).end;
        let cfg = &self.cfg;
        let due = cfg.evaluates_at(step);
        Box::new(HeldoutItems {
            loader: self,
            step,
            next: 0,
            total: if due { self.batches() } else { 0 },
        })
    }

    fn num_items(&self) -> usize {
        self.batches()
    }

    fn to_device(&self, _device: &Device) -> Arc<dyn DataLoader<Shard>> {
        Arc::new(self.copy())
    }

    fn slice(&self, _start: usize, _end: usize) -> Arc<dyn DataLoader<Shard>> {
        // burn scores held-out batches on the first device and never slices them; a slice
        // would be the whole split, so that the loss stays the loss over the split.
        Arc::new(self.copy())
    }
}

/// Linear warm-up over `warmup_steps`, then linear decay to 0 at `steps`
/// ([`TrainingConfig::lr_at`]), counted in optimiser steps.
#[derive(Clone, Debug)]
pub struct WarmupLinear {
    pub cfg: Arc<TrainingConfig>,
    pub step: usize,
}

impl LrScheduler for WarmupLinear {
    fn step(&mut self) -> f64 {
        let lr = self.cfg.lr_at(self.step);
        self.step += 1;
        lr
    }

    fn to_record(&self) -> LrSchedulerRecord {
        LrSchedulerRecord::new().with_scalar("step", self.step as u64)
    }

    fn load_record(&mut self, record: LrSchedulerRecord) {
        if let Some(step) = record.scalar::<u64>("step") {
            self.step = step as usize;
        }
    }
}

/// The run's state beside burn's: the loss curve, the train-loss average in progress, the
/// first error, progress on stderr.
pub(crate) struct RunState {
    pub cfg: Arc<TrainingConfig>,
    pub blocks: Blocks,
    pub curve: Vec<CurvePoint>,
    /// Losses of the steps since the last curve row (the shards of a step summed).
    pub loss_sum: f64,
    pub n_sum: usize,
    pub seconds_before: f64,
    pub since: Instant,
    /// The step in progress and the shards' losses so far (steps arrive shard by shard).
    partial: Option<(usize, f64, usize)>,
    /// Held-out batches of the evaluation in progress: sum of loss x targets, targets; with a
    /// dev split, of the dev and the test batches apart.
    heldout: (f64, usize),
    dev: (f64, usize),
    test: (f64, usize),
    /// Held-out batches `0..dev_batches` are the dev block ([`crate::data::dev_batches`]).
    pub dev_batches: usize,
    pub error: Option<TrainError>,
    pub last_checkpoint: String,
    pub report: crate::progress::Progress,
    pub shards: usize,
    pub interrupter: burn::train::Interrupter,
    /// The last step whose loss was recorded, and its loss (for progress lines).
    pub last: (usize, f32),
    /// Tokens/s over the train steps since the last curve row, as of the last step (the
    /// held-out evaluation's time left out).
    tps: f64,
}

impl RunState {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: Arc<TrainingConfig>,
        blocks: Blocks,
        curve: Vec<CurvePoint>,
        pending: Pending,
        last_checkpoint: String,
        report: crate::progress::Progress,
        shards: usize,
        interrupter: burn::train::Interrupter,
    ) -> RunState {
        RunState {
            cfg,
            blocks,
            curve,
            // A resumed run carries the train-loss sum in progress over from its checkpoint
            // (bit for bit), and its seconds.
            loss_sum: f64::from_bits(pending.loss_sum_bits),
            n_sum: pending.steps,
            seconds_before: pending.seconds,
            since: Instant::now(),
            partial: None,
            heldout: (0.0, 0),
            dev: (0.0, 0),
            test: (0.0, 0),
            dev_batches: 0,
            error: None,
            last_checkpoint,
            report,
            shards,
            interrupter,
            last: (blocks.start, f32::NAN),
            tps: 0.0,
        }
    }

    fn train_item(&mut self, s: Scored) {
        if self.error.is_some() {
            return;
        }
        let (step, sum, seen) = match self.partial.take() {
            Some((step, sum, seen)) if step == s.step => (step, sum + s.loss, seen + 1),
            _ => (s.step, s.loss, 1),
        };
        if seen < self.shards {
            self.partial = Some((step, sum, seen));
            return;
        }
        // The step's loss: for one shard exactly the f32 the step computed, as before.
        let loss = if self.shards == 1 {
            s.loss as f32
        } else {
            sum as f32
        };
        if !loss.is_finite() {
            self.report.abandon();
            self.error = Some(TrainError::NonFiniteLoss {
                step,
                loss,
                checkpoint: self.last_checkpoint.clone(),
            });
            self.interrupter.stop(Some("non-finite loss"));
            return;
        }
        self.loss_sum += loss as f64;
        self.n_sum += 1;
        self.last = (step + 1, loss);
        let tps = self.tokens_per_second();
        self.tps = tps;
        let lr = self.cfg.lr_at(step);
        self.report.step(step + 1, loss, None, tps, lr);
    }

    fn tokens_per_second(&self) -> f64 {
        // As the step loop always measured it: tokens of the steps since the last curve row
        // over their seconds.
        let elapsed = self.seconds_before + self.since.elapsed().as_secs_f64();
        (self.cfg.batch_size * self.cfg.seq_len) as f64 * self.n_sum as f64 / elapsed.max(1e-9)
    }

    fn heldout_item(&mut self, s: Scored) {
        let dev_batches = self.dev_batches;
        let weighted = s.loss * s.targets as f64;
        self.heldout.0 += weighted;
        self.heldout.1 += s.targets;
        let half = if s.index < dev_batches {
            &mut self.dev
        } else {
            &mut self.test
        };
        half.0 += weighted;
        half.1 += s.targets;
    }

    /// At the end of a block: the curve rows of an evaluation step. Idempotent.
    fn close_block(&mut self, done: usize) {
        if self.error.is_some() || self.curve.iter().any(|p| p.step == done) {
            return;
        }
        let cfg = self.cfg.clone();
        if !cfg.evaluates_at(done) {
            return;
        }
        let (sum, targets) = std::mem::take(&mut self.heldout);
        let heldout = sum / targets.max(1) as f64;
        let mean = |(sum, targets): (f64, usize)| sum / targets.max(1) as f64;
        let (dev, test) = (
            mean(std::mem::take(&mut self.dev)),
            mean(std::mem::take(&mut self.test)),
        );
        if !heldout.is_finite() {
            self.report.abandon();
            self.error = Some(TrainError::NonFiniteLoss {
                step: done,
                loss: heldout as f32,
                checkpoint: self.last_checkpoint.clone(),
            });
            self.interrupter.stop(Some("non-finite held-out loss"));
            return;
        }
        let train_loss = self.loss_sum / self.n_sum as f64;
        let tps = self.tps;
        let lr = cfg.lr_at(done - 1);
        let mut rows = vec![("train", train_loss), ("heldout", heldout)];
        if cfg.dev_split {
            rows.extend([("dev", dev), ("test", test)]);
        }
        for (split, l) in rows {
            self.curve.push(CurvePoint {
                step: done,
                split: split.into(),
                loss: l,
                perplexity: l.exp(),
                lr,
                tokens_per_second: tps,
            });
        }
        self.report.step(done, self.last.1, Some(heldout), tps, lr);
        (self.since, self.seconds_before, self.loss_sum, self.n_sum) =
            (Instant::now(), 0.0, 0.0, 0);
    }

    fn pending(&self) -> Pending {
        Pending {
            loss_sum_bits: self.loss_sum.to_bits(),
            steps: self.n_sum,
            seconds: self.seconds_before + self.since.elapsed().as_secs_f64(),
        }
    }

    /// Where the run stops: `end`, or the plateau once the curve meets it.
    pub fn stop_step(&self) -> usize {
        let plateau = (self.cfg.plateau.as_ref()).and_then(|r| plateau_step(&self.curve, r));
        plateau.map_or(self.blocks.end, |p| p.min(self.blocks.end))
    }
}

pub(crate) type Shared = Arc<Mutex<RunState>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, RunState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The metric burn-train feeds every step's and every held-out batch's [`Scored`]:
/// the run's curve and progress.
#[derive(Clone)]
pub(crate) struct Recorder {
    pub state: Shared,
    pub train: bool,
    name: MetricName,
}

impl Recorder {
    pub fn new(state: Shared, train: bool) -> Recorder {
        Recorder {
            state,
            train,
            name: Arc::new("loss curve".into()),
        }
    }
}

impl Metric for Recorder {
    type Input = Scored;

    fn name(&self) -> MetricName {
        self.name.clone()
    }

    fn update(
        &mut self,
        item: &Scored,
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, burn::tensor::TensorReadError> {
        let mut s = lock(&self.state);
        if self.train {
            s.train_item(*item);
        } else {
            s.heldout_item(*item);
        }
        Ok(SerializedEntry::new(
            format!("{:.4}", item.loss),
            item.loss.to_string(),
        ))
    }

    fn compute(&mut self) -> Result<SerializedEntry, burn::tensor::TensorReadError> {
        Ok(SerializedEntry::not_available(None))
    }

    fn clear(&mut self) {}
}

/// burn-train's checkpointing strategy and the three checkpointers (model, optimiser,
/// scheduler) it writes through: the three records of a block are gathered and written as one
/// atomic checkpoint ([`crate::checkpoint::save`]); a snapshot is kept at its steps.
#[derive(Clone)]
pub(crate) struct Checkpoints {
    pub state: Shared,
    pub run_dir: PathBuf,
    pub model_cfg: TransformerConfig,
    /// The run's model as it started: the architecture burn's records are loaded back into
    /// (built once, not initialised afresh, drawing random numbers, at every checkpoint).
    template: Transformer,
    staged: Arc<(Mutex<Staged>, std::sync::Condvar)>,
}

/// The records of the checkpoint being written. burn-train hands them to its checkpointers on
/// their own threads; the checkpoint is written when the third arrives, and the next block
/// waits for it ([`burn::train::EarlyStoppingStrategy::should_stop`] below), so a checkpoint is
/// on disk before any later step runs, as the step loop always had it.
#[derive(Default)]
struct Staged {
    step: usize,
    model: Option<ModuleRecord>,
    optim: Option<OptimizerRecord>,
    scheduler: bool,
    /// The step of the checkpoint asked for and not yet written (or failed).
    pending: Option<usize>,
}

impl Checkpoints {
    pub fn new(
        state: Shared,
        run_dir: &Path,
        model_cfg: &TransformerConfig,
        template: &Transformer,
    ) -> Checkpoints {
        Checkpoints {
            state,
            run_dir: run_dir.to_owned(),
            model_cfg: model_cfg.clone(),
            template: template.clone(),
            staged: Arc::default(),
        }
    }

    /// The step at the end of burn's epoch `epoch`.
    fn done(&self, epoch: usize) -> usize {
        lock(&self.state).blocks.steps(epoch).end
    }

    fn staged(&self) -> std::sync::MutexGuard<'_, Staged> {
        self.staged.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the block's checkpoint once all three records are in.
    fn try_commit(&self) {
        let mut staged = self.staged();
        if !(staged.model.is_some() && staged.optim.is_some() && staged.scheduler) {
            return;
        }
        let done = staged.step;
        let (record, optim) = (staged.model.take().unwrap(), staged.optim.take().unwrap());
        staged.scheduler = false;
        drop(staged);
        let result = self.commit(done, record, optim);
        {
            let mut s = lock(&self.state);
            match result {
                Ok(()) => s.last_checkpoint = format!("step {done}"),
                Err(e) => {
                    if s.error.is_none() {
                        s.report.abandon();
                        s.error = Some(e);
                    }
                    s.interrupter.stop(Some("checkpoint not written"));
                }
            }
        }
        self.staged().pending = None;
        self.staged.1.notify_all();
    }

    fn commit(
        &self,
        done: usize,
        record: ModuleRecord,
        optim: OptimizerRecord,
    ) -> Result<(), TrainError> {
        // The weights as a model: checked for non-finite values, kept as a snapshot.
        let model = (self.template.clone())
            .try_load_record(record)
            .map_err(|e| checkpoint::err(&self.run_dir, e))?;
        let (cfg, pending, curve) = {
            let s = lock(&self.state);
            (s.cfg.clone(), s.pending(), s.curve.clone())
        };
        if cfg.snapshot_steps.contains(&done) {
            checkpoint::save_snapshot(&self.run_dir, &model, done)?;
        }
        checkpoint::save(
            &self.run_dir.join("checkpoint"),
            &model,
            optim,
            &self.model_cfg,
            &cfg,
            done,
            pending,
            &curve,
        )
    }
}

impl CheckpointingStrategy for Checkpoints {
    fn checkpointing(
        &mut self,
        epoch: usize,
        _store: &EventStoreClient,
    ) -> Vec<CheckpointingAction> {
        let done = self.done(epoch);
        let mut s = lock(&self.state);
        // burn has processed every event of the block (it flushes before checkpointing).
        s.close_block(done);
        if s.error.is_some() {
            return Vec::new();
        }
        let cfg = s.cfg.clone();
        let end = s.stop_step();
        let due = done.is_multiple_of(cfg.checkpoint_every)
            || done == end
            || cfg.snapshot_steps.contains(&done)
            // Where a time-boxed run (`stop_at`) ends.
            || done == s.blocks.end;
        drop(s);
        if due {
            let mut staged = self.staged();
            (staged.step, staged.pending) = (done, Some(done));
            vec![CheckpointingAction::Save]
        } else {
            Vec::new()
        }
    }
}

/// burn-train's early stopping: the plateau rule on the curve.
impl burn::train::EarlyStoppingStrategy for Checkpoints {
    fn should_stop(&mut self, epoch: usize, _store: &EventStoreClient) -> bool {
        let done = self.done(epoch);
        // Called right after burn-train handed this block's records to the checkpointers:
        // wait until the checkpoint is on disk (or refused) before the next block.
        let mut staged = self.staged();
        while staged.pending.is_some() {
            staged = (self.staged.1)
                .wait(staged)
                .unwrap_or_else(|e| e.into_inner());
        }
        drop(staged);
        let s = lock(&self.state);
        s.error.is_some() || done >= s.stop_step()
    }
}

/// Which record a [`Part`] checkpointer receives.
#[derive(Clone)]
pub(crate) struct Part<const K: u8>(pub Checkpoints);

fn restore_elsewhere() -> CheckpointerError {
    CheckpointerError::Unknown(
        "a run resumes through transformer::checkpoint::load, before the learner starts".into(),
    )
}

impl Checkpointer<ModuleRecord> for Part<0> {
    fn save(&self, _epoch: usize, record: ModuleRecord) -> Result<(), CheckpointerError> {
        self.0.staged().model = Some(record);
        self.0.try_commit();
        Ok(())
    }
    fn delete(&self, _epoch: usize) -> Result<(), CheckpointerError> {
        Ok(())
    }
    fn restore(&self, _epoch: usize) -> Result<ModuleRecord, CheckpointerError> {
        Err(restore_elsewhere())
    }
}

impl Checkpointer<OptimizerRecord> for Part<1> {
    fn save(&self, _epoch: usize, record: OptimizerRecord) -> Result<(), CheckpointerError> {
        self.0.staged().optim = Some(record);
        self.0.try_commit();
        Ok(())
    }
    fn delete(&self, _epoch: usize) -> Result<(), CheckpointerError> {
        Ok(())
    }
    fn restore(&self, _epoch: usize) -> Result<OptimizerRecord, CheckpointerError> {
        Err(restore_elsewhere())
    }
}

impl Checkpointer<LrSchedulerRecord> for Part<2> {
    fn save(&self, _epoch: usize, _record: LrSchedulerRecord) -> Result<(), CheckpointerError> {
        // The schedule is a function of the step, which the checkpoint's state records.
        self.0.staged().scheduler = true;
        self.0.try_commit();
        Ok(())
    }
    fn delete(&self, _epoch: usize) -> Result<(), CheckpointerError> {
        Ok(())
    }
    fn restore(&self, _epoch: usize) -> Result<LrSchedulerRecord, CheckpointerError> {
        Err(restore_elsewhere())
    }
}

/// No metric files: the curve is written by the checkpoint, progress goes to stderr.
pub struct NoLog;

impl burn::train::logger::MetricLogger for NoLog {
    fn log(
        &mut self,
        _update: burn::train::metric::store::MetricsUpdate,
        _epoch: usize,
        _split: &burn::train::metric::store::Split,
    ) {
    }
    fn read_numeric(
        &mut self,
        _name: &str,
        _epoch: usize,
        _split: &burn::train::metric::store::Split,
    ) -> Result<Vec<burn::train::metric::NumericEntry>, String> {
        Ok(Vec::new())
    }
    fn log_metric_definition(&mut self, _definition: burn::train::metric::MetricDefinition) {}
    fn log_epoch_summary(&mut self, _summary: burn::train::metric::store::EpochSummary) {}
}

/// burn-train's renderer, silent: [`crate::progress::Progress`] prints the run's progress.
pub struct Silent;

mod silent {
    use burn::train::logger::{EvaluationProgressLogger, TrainingProgressLogger};
    use burn::train::metric::MetricDefinition;
    use burn::train::renderer::{
        EvaluationName, MetricState, MetricsRenderer, MetricsRendererEvaluation,
        MetricsRendererTraining,
    };
    use burn::train::LearnerSummary;

    impl MetricsRendererTraining for super::Silent {
        fn update_train(&mut self, _state: MetricState) {}
        fn update_valid(&mut self, _state: MetricState) {}
        fn on_train_end(
            &mut self,
            _summary: Option<LearnerSummary>,
        ) -> Result<(), Box<dyn core::error::Error>> {
            Ok(())
        }
    }
    impl MetricsRendererEvaluation for super::Silent {
        fn update_test(&mut self, _name: EvaluationName, _state: MetricState) {}
    }
    impl TrainingProgressLogger for super::Silent {
        fn start(&mut self, _e: usize, _s: usize, _t: Option<usize>, _l: Option<&str>) {}
        fn update_epoch(&mut self, _epoch: usize) {}
        fn start_split(&mut self, _split: &str, _total_items: usize) {}
        fn update_split(&mut self, _items_processed: usize) {}
        fn end_split(&mut self) {}
        fn end(&mut self) {}
        fn log_event_training(&mut self, _event: String) {}
    }
    impl EvaluationProgressLogger for super::Silent {
        fn start_global_progress(&mut self, _total_tests: usize) {}
        fn start_test(&mut self, _name: &str, _total_items: usize) {}
        fn update_test_progress(&mut self, _items_processed: usize) {}
        fn end_test(&mut self) {}
        fn end_global_progress(&mut self) {}
        fn log_event_evaluation(&mut self, _event: String) {}
    }
    impl MetricsRenderer for super::Silent {
        fn manual_close(&mut self) {}
        fn register_metric(&mut self, _definition: MetricDefinition) {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_end_on_every_mark_and_cover_the_run_once() {
        // The fair-budget schedule: evaluations every 264 steps, checkpoints every 400,
        // snapshots at 132 .. 5280: blocks of gcd(264, 400, 132, ...) = 4 steps.
        let marks = [132, 264, 400, 528, 800, 1056, 5280];
        let b = Blocks::new(0, 5280, &marks);
        assert_eq!((b.k, b.count()), (4, 1320));
        assert_eq!(b.steps(1), 0..4);
        assert_eq!(b.steps(1320), 5276..5280);
        // Resumed from a checkpoint at 400 and stopped at 1000: blocks count from 400.
        let r = Blocks::new(400, 1000, &[528, 800, 1056]);
        assert_eq!(r.k, 8); // gcd(128, 400, 600)
        let covered: Vec<usize> = (1..=r.count()).flat_map(|e| r.steps(e)).collect();
        assert_eq!(covered, (400..1000).collect::<Vec<_>>());
        // Marks outside the run do not shorten its blocks; a run of 7 steps is one block.
        assert_eq!(Blocks::new(0, 7, &[100]).k, 7);
    }

    #[test]
    fn shards_split_rows_and_move_their_targets() {
        // 3 rows of 4 tokens, targets at flat positions 1, 5, 6, 11 (rows 0, 1, 1, 2).
        let batch = Batch {
            batch: 3,
            seq_len: 4,
            inputs: (0..12).collect(),
            targets: vec![(1, 10), (5, 11), (6, 12), (11, 13)],
        };
        let parts = shards(&batch, 2);
        // The first shard takes the extra row.
        assert_eq!((parts[0].batch, parts[1].batch), (2, 1));
        assert_eq!(parts[0].inputs, (0..8).collect::<Vec<u32>>());
        assert_eq!(parts[1].inputs, (8..12).collect::<Vec<u32>>());
        assert_eq!(parts[0].targets, vec![(1, 10), (5, 11), (6, 12)]);
        assert_eq!(parts[1].targets, vec![(3, 13)]);
        assert_eq!(shards(&batch, 1), vec![batch]);
    }
}
