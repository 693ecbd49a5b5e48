//! Checkpoints of a training run, and the lock that keeps two processes out of one run directory.
//!
//! A checkpoint is a directory `run_dir/checkpoint/` holding `model.bpk`, `optimizer.bpk`,
//! `curve.csv` and `state.json`. It is written to `checkpoint.tmp/` (with `state.json` written
//! last, so a `.tmp` with a `state.json` is complete) and swapped in by two renames:
//! `checkpoint` -> `checkpoint.old`, `checkpoint.tmp` -> `checkpoint`. A crash can leave any of
//! the three; [`recover`] puts back the newest complete one before a run reads or writes.
//!
//! Nothing non-finite is ever saved: [`save`] refuses weights with a NaN or an infinity, so the
//! checkpoint on disk is always one a run can continue from.

use std::fs::File;
use std::path::{Path, PathBuf};

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Tensor;
use serde::{Deserialize, Serialize};

use crate::model::{Transformer, TransformerConfig};
use crate::recipe::{CurvePoint, TrainError, TrainingConfig};

/// `state.json`. The loss curve goes beside it in `curve.csv`; the running train-loss sum is kept
/// as the bits of its `f64`, so a resumed run's next curve row averages exactly the same steps
/// with exactly the same sum as the uninterrupted run's.
#[derive(Serialize, Deserialize)]
pub struct State {
    pub step: usize,
    pub model: TransformerConfigRecord,
    pub training: TrainingConfig,
    /// The train-loss average in progress at `step` (steps since the last curve row).
    #[serde(default)]
    pub pending: Pending,
}

/// Train losses summed since the last curve row, and the seconds they took (what a resumed run
/// needs to write its next curve row as the uninterrupted run would).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Pending {
    pub loss_sum_bits: u64,
    pub steps: usize,
    pub seconds: f64,
}

/// The model config as recorded in a checkpoint (resume refuses a different one). Keys added
/// to [`TransformerConfig`] after checkpoints were first written are left out while they hold
/// their default, so those checkpoints (which lack them) still match the config that wrote them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransformerConfigRecord(pub serde_json::Value);

/// Model-config keys newer than the first checkpoints, with their defaults as JSON.
const LATER_KEYS: [(&str, &str); 1] = [("mixing", "attention")];

fn drop_later_defaults(mut v: serde_json::Value) -> TransformerConfigRecord {
    if let Some(map) = v.as_object_mut() {
        for (key, default) in LATER_KEYS {
            if map.get(key).and_then(|x| x.as_str()) == Some(default) {
                map.remove(key);
            }
        }
    }
    TransformerConfigRecord(v)
}

impl From<&TransformerConfig> for TransformerConfigRecord {
    fn from(c: &TransformerConfig) -> Self {
        drop_later_defaults(serde_json::to_value(c).expect("config serialises"))
    }
}

impl TransformerConfigRecord {
    /// A stored record, with later keys at their default dropped as [`From`] drops them.
    fn from_stored(stored: &TransformerConfigRecord) -> TransformerConfigRecord {
        drop_later_defaults(stored.0.clone())
    }
}

pub(crate) fn err(path: &Path, message: impl ToString) -> TrainError {
    TrainError::Checkpoint {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

fn sibling(dir: &Path, ext: &str) -> PathBuf {
    dir.with_extension(ext)
}

fn complete(dir: &Path) -> bool {
    dir.join("state.json").is_file()
}

/// After a crash in the middle of [`save`], puts the newest complete checkpoint back at `dir`:
/// `checkpoint.tmp` if it was finished (it is newer), else `checkpoint.old`. Returns what it did,
/// for the log; `None` when there was nothing to recover.
pub fn recover(dir: &Path) -> Result<Option<String>, TrainError> {
    if complete(dir) {
        return Ok(None);
    }
    let (tmp, old) = (sibling(dir, "tmp"), sibling(dir, "old"));
    for candidate in [&tmp, &old] {
        if complete(candidate) {
            if dir.exists() {
                std::fs::remove_dir_all(dir).map_err(|e| err(dir, e))?;
            }
            std::fs::rename(candidate, dir).map_err(|e| err(dir, e))?;
            return Ok(Some(format!(
                "recovered the checkpoint from {} (a previous run stopped while saving)",
                candidate.display()
            )));
        }
    }
    Ok(None)
}

/// The step of the complete checkpoint at `dir`, if any (after [`recover`]).
pub fn step(dir: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(dir.join("state.json")).ok()?;
    serde_json::from_str::<State>(&text).ok().map(|s| s.step)
}

/// Every float parameter of a module, by module path (`blocks.0.attention.query.weight`), in
/// traversal order: what the finite check reads, and what tests compare bit for bit.
pub fn parameters<M: Module>(module: &M) -> Vec<(String, Tensor<1>)> {
    // burn's traversal calls `visit_float` with the parameter alone; the path is the stack of
    // fields entered on the way down.
    struct Collect {
        path: Vec<String>,
        found: Vec<(String, Tensor<1>)>,
    }
    impl ModuleVisitor for Collect {
        fn enter_module(&mut self, name: &str, _container_type: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _name: &str, _container_type: &str) {
            self.path.pop();
        }
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.found
                .push((self.path.join("."), param.val().flatten(0, D - 1)));
        }
    }
    let mut c = Collect {
        path: Vec::new(),
        found: Vec::new(),
    };
    module.visit(&mut c);
    c.found
}

/// The first parameter (by module path) holding a NaN or an infinity, with that value.
pub fn first_non_finite(model: &Transformer) -> Option<(String, f32)> {
    parameters(model).into_iter().find_map(|(path, t)| {
        let data = t.into_data();
        let bad = data.iter::<f32>().find(|x| !x.is_finite());
        bad.map(|x| (path, x))
    })
}

/// Writes the checkpoint to `checkpoint.tmp`, then swaps it in (see the module docs). Refuses
/// non-finite weights: the checkpoint already on disk stays.
#[allow(clippy::too_many_arguments)]
pub fn save(
    dir: &Path,
    model: &Transformer,
    optim: burn::optim::OptimizerRecord,
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
    step: usize,
    pending: Pending,
    curve: &[CurvePoint],
) -> Result<(), TrainError> {
    refuse_non_finite(model, step, dir)?;
    let tmp = sibling(dir, "tmp");
    let old = sibling(dir, "old");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| err(&tmp, e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| err(&tmp, e))?;
    model
        .clone()
        .save_file(tmp.join("model.bpk"))
        .map_err(|e| err(&tmp, e))?;
    optim
        .save(tmp.join("optimizer.bpk"))
        .map_err(|e| err(&tmp, e))?;
    let mut w = csv::Writer::from_path(tmp.join("curve.csv")).map_err(|e| err(&tmp, e))?;
    for point in curve {
        w.serialize(point).map_err(|e| err(&tmp, e))?;
    }
    w.flush().map_err(|e| err(&tmp, e))?;
    let state = State {
        step,
        model: model_cfg.into(),
        training: cfg.clone(),
        pending,
    };
    // Last: its presence marks the directory complete (see `recover`).
    std::fs::write(
        tmp.join("state.json"),
        serde_json::to_string_pretty(&state).unwrap(),
    )
    .map_err(|e| err(&tmp, e))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| err(&old, e))?;
    }
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| err(dir, e))?;
    }
    std::fs::rename(&tmp, dir).map_err(|e| err(dir, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// Where [`save_snapshot`] keeps the weights after `step`.
pub fn snapshot_path(run_dir: &Path, step: usize) -> PathBuf {
    run_dir.join("snapshots").join(format!("step-{step}.bpk"))
}

/// Keeps the model's weights after `step` (the `snapshot_steps` of a training config), written
/// to a temporary file and renamed into place, so a snapshot on disk is always complete; like
/// [`save`], refuses non-finite weights.
pub fn save_snapshot(run_dir: &Path, model: &Transformer, step: usize) -> Result<(), TrainError> {
    let path = snapshot_path(run_dir, step);
    refuse_non_finite(model, step, &run_dir.join("checkpoint"))?;
    let dir = path.parent().expect("snapshots live in a directory");
    std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
    let tmp = dir.join(format!("step-{step}.tmp.bpk"));
    model.clone().save_file(&tmp).map_err(|e| err(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| err(&path, e))
}

/// The model kept by [`save_snapshot`] after `step`, in the architecture `model_cfg` describes
/// (initialised on `device`, then overwritten by the snapshot's weights).
pub fn load_snapshot(
    run_dir: &Path,
    step: usize,
    model_cfg: &TransformerConfig,
    device: &burn::tensor::Device,
) -> Result<Transformer, TrainError> {
    load_weights(&snapshot_path(run_dir, step), model_cfg.init(device))
}

/// Refuses weights with a NaN or an infinity before anything is written: the error names the
/// parameter and the last checkpoint in `ckpt` (what a run can continue from).
fn refuse_non_finite(model: &Transformer, step: usize, ckpt: &Path) -> Result<(), TrainError> {
    match first_non_finite(model) {
        Some((param, value)) => Err(TrainError::NonFiniteWeights {
            step,
            param,
            value,
            checkpoint: self::step(ckpt).map_or("none".into(), |s| format!("step {s}")),
        }),
        None => Ok(()),
    }
}

/// The weights in `path` loaded into `model` (of the architecture that wrote them); a weight
/// that is not finite is an error naming the file, never a model to continue from or measure.
fn load_weights(path: &Path, model: Transformer) -> Result<Transformer, TrainError> {
    let record = burn::store::ModuleRecord::load(path).map_err(|e| err(path, e))?;
    let model = model.try_load_record(record).map_err(|e| err(path, e))?;
    if let Some((param, value)) = first_non_finite(&model) {
        return Err(err(
            path,
            format!("parameter {param} holds {value}: not weights to continue from or measure"),
        ));
    }
    Ok(model)
}

pub(crate) struct Loaded {
    pub model: Transformer,
    pub optim: burn::optim::ModuleOptimizer,
    pub state: State,
    pub curve: Vec<CurvePoint>,
}

pub(crate) fn load(
    dir: &Path,
    model: Transformer,
    optim: burn::optim::ModuleOptimizer,
    model_cfg: &TransformerConfig,
    cfg: &TrainingConfig,
) -> Result<Loaded, TrainError> {
    let state_path = dir.join("state.json");
    let text = std::fs::read_to_string(&state_path).map_err(|e| err(&state_path, e))?;
    let state: State = serde_json::from_str(&text).map_err(|e| err(&state_path, e))?;
    if TransformerConfigRecord::from_stored(&state.model) != model_cfg.into() {
        return Err(err(
            dir,
            "the model config differs from the checkpoint's; use a new run directory",
        ));
    }
    // The plateau rule's context-free loss is derived from the corpus at run time and never
    // stored (`Plateau::context_free_loss`): compare the rest.
    let mut stored = state.training.clone();
    if let (Some(s), Some(c)) = (stored.plateau.as_mut(), cfg.plateau.as_ref()) {
        s.context_free_loss = c.context_free_loss;
    }
    if stored != *cfg {
        // Even `steps` may not change: the learning-rate schedule depends on it.
        return Err(err(
            dir,
            "the training config differs from the checkpoint's; use a new run directory",
        ));
    }
    let model = load_weights(&dir.join("model.bpk"), model)?;
    let optim = optim
        .load(dir.join("optimizer.bpk"))
        .map_err(|e| err(&dir.join("optimizer.bpk"), e))?;
    let curve_path = dir.join("curve.csv");
    let curve = csv::Reader::from_path(&curve_path)
        .and_then(|mut r| r.deserialize().collect::<Result<Vec<CurvePoint>, _>>())
        .map_err(|e| err(&curve_path, e))?;
    Ok(Loaded {
        model,
        optim,
        state,
        curve,
    })
}

/// An exclusive lock on a run directory, held while a process trains in it and released when
/// dropped or when the process dies (an advisory `flock` on `run_dir/lock`, which also records
/// the holder's process id for the message the next process prints).
pub struct RunLock {
    _file: File,
}

/// Takes the lock of `run_dir`, or answers at once with "run directory in use by process N".
pub fn lock(run_dir: &Path) -> Result<RunLock, TrainError> {
    use std::io::{Read, Seek, Write};
    std::fs::create_dir_all(run_dir).map_err(|e| err(run_dir, e))?;
    let path = run_dir.join("lock");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| err(&path, e))?;
    // std's `try_lock` is flock(LOCK_EX | LOCK_NB) on Unix: the lock goes with the descriptor.
    if file.try_lock().is_err() {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = holder.trim();
        let who = if holder.is_empty() {
            "another process".to_string()
        } else {
            format!("process {holder}")
        };
        return Err(TrainError::InUse {
            path: run_dir.to_owned(),
            holder: who,
        });
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    let _ = file.flush();
    Ok(RunLock { _file: file })
}
