//! What a training run is, apart from running it: its config ([`TrainingConfig`]: objective,
//! schedule, optimiser settings, evaluations, checkpoints, snapshots), the plateau rule that may
//! stop it early, the points of its loss curve, its errors, and the per-step seed. A leaf
//! module: the checkpoints ([`crate::checkpoint`]), the engine ([`crate::engine`]) and the run
//! itself ([`crate::training`]) all read it, and it reads none of them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::data::Objective;

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
    /// The seed of the initial weights where it should differ from `seed`, which then sets
    /// only what training reads: the batch order, the masks and dropout. A crossed design
    /// (seed a's weights trained on seed b's batches) separates which of the two decides an
    /// outcome that differs between seeds (docs/method.md, "What sets a seed's regime").
    /// Absent (the default): `seed` sets both. Left out of the JSON when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_seed: Option<u64>,
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
    /// Split the held-out block into a dev half and a test half ([`crate::data::dev_batches`]): every
    /// evaluation also writes `dev` and `test` rows, the plateau rule reads `dev`, and a
    /// learning-rate sweep chooses on `dev`, so that the reported (`test`) loss is not the one
    /// anything was chosen on. Left out of the JSON when off (run hashes do not move).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dev_split: bool,
    /// Draw a frozen token embedding (`freeze_embeddings`) at this standard deviation instead
    /// of [`crate::model::INIT_STD`]: a frozen random input at the scale a trained embedding
    /// reaches, so that the learned positions do not swamp it. Drawn after every other weight,
    /// which therefore stay what the seed gives without it. Left out of the JSON when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frozen_embedding_std: Option<f64>,
    /// How an untied LM head starts ([`LmHeadInit`]); a tied head is the token embedding and
    /// has no start of its own, so a tied model refuses anything but the default. Left out of
    /// the JSON when it is the default (run hashes do not move).
    #[serde(skip_serializing_if = "LmHeadInit::is_normal")]
    pub lm_head_init: LmHeadInit,
}

/// The start of an untied LM head `W_out` (`[d_model, vocab]`, logits `LN(h) W_out + b`).
///
/// Why it matters: a tied head starts with the copy path built in (the logit of the input
/// token `w` at its own position is `LN(e_w + p) . e_w`, positive), so a masked LM with a tied
/// head leaves the unigram plateau by copying its visible input, then by context. An untied
/// head drawn at random has no such path and can sit at the unigram entropy for epochs (seen in
/// the fair-budget study). Which start to use is chosen on the dev split (docs/method.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LmHeadInit {
    /// N(0, [`crate::model::INIT_STD`]²), like every other weight.
    #[default]
    Normal,
    /// All zeros: step 0 predicts the output bias alone (the readout of muP, Yang et al. 2021).
    Zero,
    /// A copy of the initial token embedding, transposed (`W_out = E_0^T`): step 0 is exactly the
    /// tied model; afterwards the two matrices train apart.
    Embedding,
}

impl LmHeadInit {
    pub fn is_normal(&self) -> bool {
        *self == LmHeadInit::Normal
    }
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

/// The step at which `curve` (held-out rows, or its dev rows when it has them) first meets the plateau rule, if it does.
pub fn plateau_step(curve: &[CurvePoint], rule: &Plateau) -> Option<usize> {
    // A run with a dev split is judged on its dev rows, never on the test rows it reports.
    let split = if curve.iter().any(|p| p.split == "dev") {
        "dev"
    } else {
        "heldout"
    };
    let heldout: Vec<&CurvePoint> = curve.iter().filter(|p| p.split == split).collect();
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
            init_seed: None,
            unigram_bias_init: true,
            clm_target_fraction: None,
            plateau: None,
            snapshot_steps: Vec::new(),
            dev_split: false,
            frozen_embedding_std: None,
            lm_head_init: LmHeadInit::Normal,
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
        if let Some(std) = self.frozen_embedding_std {
            if !(std > 0.0 && std.is_finite()) {
                return Err(format!(
                    "frozen_embedding_std must be a finite number > 0, got {std}"
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
    /// `train` (mean over the steps since the last point), `heldout` (the whole held-out
    /// block), or with `dev_split` also `dev` and `test` (its two halves).
    pub split: String,
    pub loss: f64,
    pub perplexity: f64,
    pub lr: f64,
    pub tokens_per_second: f64,
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn point(step: usize, split: &str, loss: f64) -> CurvePoint {
        CurvePoint {
            step,
            split: split.into(),
            loss,
            perplexity: loss.exp(),
            lr: 0.0,
            tokens_per_second: 0.0,
        }
    }

    #[test]
    fn the_plateau_rule_reads_the_dev_rows_when_a_curve_has_them() {
        let rule = Plateau {
            min_gain: 0.01,
            window: 10,
            context_free_loss: None,
        };
        // The whole block flattens at step 20 (0.005 gained over 10 steps); the dev half
        // keeps improving by 0.05, and only flattens at 30.
        let mut curve = vec![
            point(10, "heldout", 5.0),
            point(20, "heldout", 4.995),
            point(30, "heldout", 4.99),
        ];
        assert_eq!(plateau_step(&curve, &rule), Some(20));
        curve.extend([
            point(10, "dev", 5.1),
            point(20, "dev", 5.05),
            point(30, "dev", 5.049),
            point(10, "test", 5.0),
            point(20, "test", 5.0),
        ]);
        assert_eq!(plateau_step(&curve, &rule), Some(30));
        assert_eq!(crate::data::dev_batches(21), 10);
        assert_eq!(crate::data::dev_batches(1), 0);
    }
}
