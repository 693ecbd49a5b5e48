//! The study's settings: its config schema ([`Config`], with the `[dynamics]` schedule and the
//! `[roles]`), the registry of its models ([`ModelId`]), and reading a config for an
//! experiment. A leaf: the study, the views, the jobs and the report read it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use corpus::CorpusConfig;
use transformer::model::ModelSettings;
use transformer::training::TrainingConfig;
use word2vec::{Architecture, Word2VecConfig};

use super::eval::EvalConfig;
use crate::cli::Args;
use crate::config;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Pooling {
    /// Occurrences averaged per word for the aggregated vectors: a uniform sample of up to this
    /// many from the whole training split.
    pub max_occurrences: u32,
    /// Sequences per forward pass.
    pub batch: usize,
}

impl Default for Pooling {
    fn default() -> Self {
        Pooling {
            max_occurrences: 100,
            batch: 64,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextualityConfig {
    /// Training sequences the occurrences are drawn from.
    pub sequences: usize,
    /// Words tracked, spread evenly over the `top` most frequent.
    pub words: usize,
    pub top: usize,
    /// Occurrences per tracked word.
    pub per_word: usize,
    /// Random token pairs for anisotropy.
    pub pairs: usize,
    /// Also measure every layer's contextuality on real sentences ([`Sentences`]): the
    /// training windows of a corpus without punctuation (text8) are not sentences. Left out
    /// of the settings' hash when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sentences: Option<Sentences>,
}

/// A file of sentences in WikiText's tokenised form (`data/corpora/wikitext-2-valid.txt.gz`),
/// cut into sentences at their final tokens and encoded with the study's vocabulary
/// ([`corpus::Corpus::encode_sentences`]); the first `ContextualityConfig::sequences` of them
/// with at least 3 words, each `[CLS] words` padded to the training's sequence length.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sentences {
    pub path: PathBuf,
    /// Lower-case the text first (text8's vocabulary is lower-case).
    #[serde(default = "yes")]
    pub lowercase: bool,
    /// Trim punctuation at token ends and drop tokens of punctuation alone (a vocabulary
    /// without punctuation would read them as `[UNK]`).
    #[serde(default = "yes")]
    pub drop_punctuation: bool,
}

fn yes() -> bool {
    true
}

impl Default for ContextualityConfig {
    fn default() -> Self {
        ContextualityConfig {
            sequences: 2_000,
            words: 500,
            top: 5_000,
            per_word: 20,
            pairs: 500_000,
            sentences: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollocationConfig {
    /// Pairs are drawn among the `top` most frequent words ...
    pub top: u32,
    /// ... within `window` tokens of each other ...
    pub window: usize,
    /// ... seen together at least `min_count` times; the `pairs` with the highest PMI are kept.
    pub min_count: u32,
    pub pairs: usize,
}

impl Default for CollocationConfig {
    fn default() -> Self {
        CollocationConfig {
            top: 10_000,
            window: 2,
            min_count: 20,
            pairs: 1_000,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Every model is trained once per seed (fewer where `[seed_counts]` says so); figures
    /// show the mean and the min-max spread.
    pub seeds: Vec<u64>,
    pub corpus: CorpusConfig,
    pub model: ModelSettings,
    pub training: TrainingConfig,
    pub eval: EvalConfig,
    pub pooling: Pooling,
    pub contextuality: ContextualityConfig,
    pub collocation: CollocationConfig,
    pub sgns: Word2VecConfig,
    pub cbow: Word2VecConfig,
    /// The schedule of the study's runs ([`DynamicsConfig`], read by [`super::dynamics`]): it
    /// sets `training.steps`, the held-out evaluations, the plateau rule and the snapshots
    /// from the corpus's epoch length.
    pub dynamics: Option<DynamicsConfig>,
    /// Which variants the paper's comparisons read against each other.
    pub roles: Roles,
    /// Each variant's learning rate (`model` column name -> lr), as `--exp sweep` chose it on
    /// the dev block; a variant not named trains at `[training] lr`. The untrained model is
    /// the masked LM's initialisation and follows `transformer-mlm`.
    pub learning_rates: std::collections::BTreeMap<String, f64>,
    /// The learning-rate sweep of `--exp sweep` ([`SweepConfig`]).
    pub sweep: SweepConfig,
    /// The frozen-input ablation's random input embedding is drawn at this standard deviation
    /// (the trained embedding's per-coordinate scale, as `--exp sweep` records it) instead of
    /// the initialisation's; absent, at the initialisation's.
    pub frozen_embedding_std: Option<f64>,
    /// Models trained at fewer seeds than `seeds` (model name -> how many: the first that
    /// many of `seeds`), for variants whose answers need fewer; a model not named trains at
    /// every seed ([`Config::seeds_of`]).
    pub seed_counts: std::collections::BTreeMap<String, usize>,
    /// A round in progress: the paper's comparisons write into `<out>/round/` (the
    /// measurements stay under `--out`), beside the committed study's, and the report gives
    /// those complete so far a section of their own ([`ROUND`]).
    pub round: bool,
    /// `seeds` as the config gave them, before `--seed` replaced them: what `[seed_counts]`
    /// counts from.
    #[serde(skip)]
    pub planned_seeds: Vec<u64>,
}

/// The folder under `--out` a round in progress writes its comparisons into ([`Config::round`]).
pub const ROUND: &str = "round";

/// What a round's report section needs to know of the config one comparison was drawn with
/// (`<out>/round/<comparison>/round.json`, written with it): the config's name, its roles, the
/// seeds each model was read at, and what the models are.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundInfo {
    pub config: String,
    pub roles: Roles,
    /// (model, seeds) for each model the comparison reads.
    pub seeds: Vec<(String, Vec<u64>)>,
    /// [`super::study::Study::describe`] of the round's config.
    pub models: String,
}

impl RoundInfo {
    /// The description at `path`. Every role must be written out: a file from a version with
    /// fewer roles would otherwise take today's defaults for the missing ones, silently.
    pub fn read(path: &std::path::Path) -> anyhow::Result<RoundInfo> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let not = |e: &dyn std::fmt::Display| {
            anyhow::anyhow!("{}: not a round's description: {e}", path.display())
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| not(&e))?;
        let roles = value.get("roles").ok_or_else(|| not(&"no roles"))?;
        let expected = serde_json::to_value(Roles::default()).map_err(|e| not(&e))?;
        for key in expected.as_object().into_iter().flat_map(|o| o.keys()) {
            if roles.get(key).is_none() {
                return Err(not(&format!(
                    "its roles lack {key} (written by an older version: run the comparison again)"
                )));
            }
        }
        serde_json::from_value(value).map_err(|e| {
            not(&format!(
                "{e} (written by an older version? run the comparison again)"
            ))
        })
    }
}

impl Config {
    /// Where the paper's comparisons (and `--exp dynamics`'s curves and costs) are written
    /// under `out`: `out` itself, or `out/round` for a round in progress.
    pub fn views_dir(&self, out: &std::path::Path) -> std::path::PathBuf {
        if self.round {
            out.join(ROUND)
        } else {
            out.to_path_buf()
        }
    }

    /// A round's comparisons read every seed of its plan: `--seed` (one seed instead) would
    /// write a partial comparison where the report takes complete ones.
    pub fn check_round(&self, args: &Args) -> anyhow::Result<()> {
        if self.round {
            if let Some(seed) = args.seed {
                anyhow::bail!(
                    "--seed {seed}: this config is a round in progress (round = true), whose comparisons read every seed of its plan; leave --seed out"
                );
            }
        }
        Ok(())
    }

    /// The seeds `model` is trained and read at: those of `seeds` among the first
    /// `[seed_counts]` of the config's own seeds where it names the model (so `--seed 8` gives
    /// none for a model planned at seeds 1-5), else all of `seeds`.
    pub fn seeds_of(&self, model: ModelId) -> Vec<u64> {
        let Some(&n) = self.seed_counts.get(model.name()) else {
            return self.seeds.clone();
        };
        // A config built in code rather than loaded has no plan apart from its seeds.
        let plan = if self.planned_seeds.is_empty() {
            &self.seeds
        } else {
            &self.planned_seeds
        };
        let planned = &plan[..n.min(plan.len())];
        (self.seeds.iter())
            .filter(|s| planned.contains(s))
            .copied()
            .collect()
    }
}

/// The `[sweep]` table: every variant trained for `epochs` (its warm-up and linear decay
/// squeezed into that budget) at each learning rate of `lrs`, for each of `seeds` (kept apart
/// from the study's seeds, so that no reported seed took part in the choice), and the rate with
/// the lowest mean dev loss chosen. The same grid, budget and seeds for every variant.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SweepConfig {
    pub lrs: Vec<f64>,
    pub epochs: f64,
    pub seeds: Vec<u64>,
    /// The variants swept (`model` column names); empty: the transformers `[dynamics]`
    /// trains, and its word2vec models when `word2vec_alpha_factors` is set.
    pub models: Vec<String>,
    /// word2vec's grid: these multiples of its starting rate (`[sgns]`, `[cbow]` `alpha`; by
    /// default word2vec.c's). Empty: word2vec is not swept.
    pub word2vec_alpha_factors: Vec<f64>,
}

impl Default for SweepConfig {
    fn default() -> Self {
        SweepConfig {
            lrs: vec![1.5e-3, 3e-3, 6e-3, 1.2e-2],
            epochs: 1.0,
            seeds: vec![1001, 1002],
            models: Vec::new(),
            word2vec_alpha_factors: Vec::new(),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seeds: vec![1, 2, 3],
            corpus: CorpusConfig::default(),
            model: ModelSettings::default(),
            training: TrainingConfig::default(),
            eval: EvalConfig::default(),
            pooling: Pooling::default(),
            contextuality: ContextualityConfig::default(),
            collocation: CollocationConfig::default(),
            sgns: Word2VecConfig::default(),
            cbow: Word2VecConfig {
                architecture: Architecture::Cbow,
                ..Word2VecConfig::default()
            },
            dynamics: None,
            roles: Roles::default(),
            learning_rates: Default::default(),
            sweep: SweepConfig::default(),
            frozen_embedding_std: None,
            seed_counts: Default::default(),
            round: false,
            planned_seeds: Vec::new(),
        }
    }
}

/// The `[roles]` table: which trained variant plays each part of the comparisons (`model`
/// column names). The defaults are paper.toml's: the matched-targets causal LM against the
/// masked LM, the frozen input against the untied masked LM (a tied head would freeze the output
/// matrix too), the untied masked and causal LM beside the tied pair, and the no-attention
/// control beside the objective's collocation and the contextuality measures.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Roles {
    /// The causal LM read against the masked LM (`transformer-mlm`, always the reference).
    pub clm: String,
    /// The frozen-input ablation ...
    pub frozen: String,
    /// ... and the trained model it is read against (the same head setting).
    pub frozen_reference: String,
    /// The model with attention replaced by a uniform average, beside the objective's
    /// collocation and the contextuality measures.
    pub no_attention: String,
    /// The masked and the causal LM with untied heads, read against each other beside the
    /// tied pair: with a tied head a causal LM scores the next word by E[x]·E[y] directly, so
    /// the tied pair's difference mixes the objective with what the head does to the
    /// embedding.
    pub mlm_untied: String,
    pub clm_untied: String,
    /// The no-attention control with an untied head, read beside the untied masked LM (its
    /// input embedding and output matrix apart, its collocation and contextuality beside the
    /// tied control's); absent in configs that do not train it.
    pub no_attention_untied: Option<String>,
}

impl Default for Roles {
    fn default() -> Self {
        Roles {
            clm: ModelId::ClmMatched.name().into(),
            frozen: ModelId::FrozenUntied.name().into(),
            frozen_reference: ModelId::MlmUntied.name().into(),
            no_attention: ModelId::NoAttention.name().into(),
            mlm_untied: ModelId::MlmUntied.name().into(),
            clm_untied: ModelId::ClmMatchedUntied.name().into(),
            no_attention_untied: None,
        }
    }
}

/// [`Roles`] checked: each name a known transformer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cast {
    pub clm: ModelId,
    pub frozen: ModelId,
    pub frozen_reference: ModelId,
    pub no_attention: ModelId,
    /// (masked LM, causal LM), both with untied heads ([`Roles::clm_untied`]).
    pub untied: (ModelId, ModelId),
    /// [`Roles::no_attention_untied`].
    pub no_attention_untied: Option<ModelId>,
}

impl Roles {
    /// The roles as model ids; an error names the key and the names it could be.
    pub fn cast(&self) -> anyhow::Result<Cast> {
        let id = |key: &str, name: &str| {
            ModelId::from_name(name)
                .filter(|m| !m.is_word2vec() && *m != ModelId::Untrained)
                .ok_or_else(|| {
                    let known: Vec<&str> = (ModelId::ALL.iter())
                        .filter(|m| !m.is_word2vec() && **m != ModelId::Untrained)
                        .map(|m| m.name())
                        .collect();
                    anyhow::anyhow!(
                        "[roles] {key}: {name:?} is not a trained transformer; known: {}",
                        known.join(", ")
                    )
                })
        };
        Ok(Cast {
            clm: id("clm", &self.clm)?,
            frozen: id("frozen", &self.frozen)?,
            frozen_reference: id("frozen_reference", &self.frozen_reference)?,
            no_attention: id("no_attention", &self.no_attention)?,
            untied: (
                id("mlm_untied", &self.mlm_untied)?,
                id("clm_untied", &self.clm_untied)?,
            ),
            no_attention_untied: match &self.no_attention_untied {
                Some(name) => Some(id("no_attention_untied", name)?),
                None => None,
            },
        })
    }
}

impl Cast {
    /// The untied masked and causal LM ([`Roles::clm_untied`]), in that order.
    pub fn untied_models(&self) -> Vec<ModelId> {
        vec![self.untied.0, self.untied.1]
    }

    /// The attention controls: the tied one, and the untied one where a config trains it.
    pub fn controls(&self) -> Vec<ModelId> {
        std::iter::once(self.no_attention)
            .chain(self.no_attention_untied)
            .collect()
    }
}

impl Default for Cast {
    fn default() -> Self {
        Roles::default()
            .cast()
            .expect("the default roles are known models")
    }
}

impl Config {
    /// `--quick`: toy sizes everywhere, the same code paths (a couple of minutes for `all`).
    pub fn quick(&mut self) {
        super::train::quick(&mut self.model, &mut self.training);
        self.eval.restrict_vocab = self.eval.restrict_vocab.min(5_000);
        self.pooling = Pooling {
            max_occurrences: 5,
            batch: 32,
        };
        self.contextuality = ContextualityConfig {
            sequences: 100,
            words: 50,
            top: 1_000,
            per_word: 5,
            pairs: 5_000,
            sentences: self.contextuality.sentences.clone(),
        };
        self.collocation.min_count = 5;
        self.collocation.pairs = 200;
        for w in [&mut self.sgns, &mut self.cbow] {
            w.epochs = 1;
            w.dim = w.dim.min(32);
        }
    }
}

/// Every model the paper compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModelId {
    Sgns,
    Cbow,
    /// Masked LM with the base config: the reference transformer.
    Mlm,
    SharedQk,
    SharedQkv,
    /// The masked-LM model as initialised, never trained.
    Untrained,
    /// Masked LM with a separate output matrix (the tied models score a prediction against
    /// the input embedding itself).
    MlmUntied,
    /// Causal LM with its loss on a random 15% of positions per step ("matched targets": as
    /// many predictions per step as the masked LM), tied head: then the direction of context
    /// is the only difference from [`ModelId::Mlm`].
    ClmMatched,
    /// [`ModelId::ClmMatched`] with an untied head.
    ClmMatchedUntied,
    /// Frozen random input embedding with an untied (trained) output matrix: the input alone
    /// frozen (a tied head would freeze the output matrix too).
    FrozenUntied,
    /// The no-attention control: each attention layer replaced by a uniform average over the
    /// sequence (`Mixing::Uniform`), tied head like [`ModelId::Mlm`].
    NoAttention,
    /// [`ModelId::NoAttention`] with an untied head, read beside [`ModelId::MlmUntied`].
    NoAttentionUntied,
}

impl ModelId {
    pub const ALL: [ModelId; 12] = [
        ModelId::Sgns,
        ModelId::Cbow,
        ModelId::Mlm,
        ModelId::SharedQk,
        ModelId::SharedQkv,
        ModelId::Untrained,
        ModelId::MlmUntied,
        ModelId::ClmMatched,
        ModelId::ClmMatchedUntied,
        ModelId::FrozenUntied,
        ModelId::NoAttention,
        ModelId::NoAttentionUntied,
    ];

    /// The model whose [`ModelId::name`] is `name`.
    pub fn from_name(name: &str) -> Option<ModelId> {
        ModelId::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// The `model` column of the tidy rows.
    pub fn name(self) -> &'static str {
        match self {
            ModelId::Sgns => "word2vec-sgns",
            ModelId::Cbow => "word2vec-cbow",
            ModelId::Mlm => "transformer-mlm",
            ModelId::SharedQk => "transformer-mlm-shared-qk",
            ModelId::SharedQkv => "transformer-mlm-shared-qkv",
            ModelId::Untrained => "transformer-untrained",
            ModelId::MlmUntied => "transformer-mlm-untied-head",
            ModelId::ClmMatched => "transformer-clm-matched",
            ModelId::ClmMatchedUntied => "transformer-clm-matched-untied-head",
            ModelId::FrozenUntied => "transformer-mlm-frozen-embedding-untied-head",
            ModelId::NoAttention => "transformer-mlm-no-attention",
            ModelId::NoAttentionUntied => "transformer-mlm-no-attention-untied-head",
        }
    }

    /// A short legend label.
    pub fn label(self) -> &'static str {
        match self {
            ModelId::Sgns => "word2vec SGNS",
            ModelId::Cbow => "word2vec CBOW",
            ModelId::Mlm => "MLM",
            ModelId::SharedQk => "MLM shared-QK",
            ModelId::SharedQkv => "MLM shared-QKV",
            ModelId::Untrained => "untrained",
            ModelId::MlmUntied => "MLM untied head",
            ModelId::ClmMatched => "CLM matched targets",
            ModelId::ClmMatchedUntied => "CLM matched, untied head",
            ModelId::FrozenUntied => "MLM frozen input, untied head",
            ModelId::NoAttention => "MLM no attention",
            ModelId::NoAttentionUntied => "MLM no attention, untied head",
        }
    }

    pub fn is_word2vec(self) -> bool {
        matches!(self, ModelId::Sgns | ModelId::Cbow)
    }
}

/// The `[dynamics]` table: the study's schedule, in epochs of the training split.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DynamicsConfig {
    /// The longest run, in passes over the training split (word2vec's 5 by default); also
    /// the horizon of the learning-rate decay.
    pub epochs: f64,
    /// Where the run is measured, in epochs (rounded to whole steps).
    pub snapshots: Vec<f64>,
    /// Held-out evaluations per epoch (on the whole held-out split).
    pub evals_per_epoch: usize,
    /// Stop once the held-out loss gained less than this many nats over the last epoch.
    pub plateau_min_gain: f64,
    /// The models followed (`model` column names); the untrained model and word2vec are
    /// measured at their own points (0 tokens; each snapshot's token count).
    pub models: Vec<String>,
    /// Also pool aggregated vectors at every snapshot (minutes per snapshot on 2 cores); the
    /// final model is always measured in full, right after its run ([`Study::follow`]).
    pub pooled_snapshots: bool,
    /// After the curves, run the paper's comparisons on the final models and write the
    /// report (every model the `[roles]` name is trained if it is not followed).
    pub findings: bool,
}

impl Default for DynamicsConfig {
    fn default() -> Self {
        DynamicsConfig {
            epochs: 5.0,
            snapshots: vec![0.125, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0],
            evals_per_epoch: 4,
            plateau_min_gain: 0.01,
            models: [
                ModelId::Mlm,
                ModelId::MlmUntied,
                ModelId::ClmMatched,
                ModelId::ClmMatchedUntied,
                ModelId::SharedQk,
                ModelId::SharedQkv,
                ModelId::FrozenUntied,
                ModelId::NoAttention,
                ModelId::Untrained,
                ModelId::Sgns,
                ModelId::Cbow,
            ]
            .iter()
            .map(|m| m.name().to_string())
            .collect(),
            pooled_snapshots: false,
            findings: true,
        }
    }
}

/// Steps per epoch standing in for the real one under `--quick`, so that a toy run still has
/// every snapshot, evaluation and plateau check.
pub const QUICK_STEPS_PER_EPOCH: usize = 8;

impl DynamicsConfig {
    /// The training schedule this table asks for, given the steps of one epoch: `steps`
    /// (`epochs` passes), held-out evaluations, the plateau rule over one epoch, and the
    /// snapshot steps. Errors name the key.
    pub fn apply(
        &self,
        training: &mut transformer::training::TrainingConfig,
        steps_per_epoch: usize,
    ) -> anyhow::Result<()> {
        if !(self.epochs > 0.0 && self.epochs.is_finite()) {
            anyhow::bail!(
                "[dynamics] epochs must be a number > 0, got {}",
                self.epochs
            );
        }
        if self.evals_per_epoch == 0 {
            anyhow::bail!("[dynamics] evals_per_epoch must be at least 1");
        }
        if !(self.plateau_min_gain >= 0.0 && self.plateau_min_gain.is_finite()) {
            anyhow::bail!(
                "[dynamics] plateau_min_gain must be a number >= 0 (nats), got {}",
                self.plateau_min_gain
            );
        }
        let step_of = |epochs: f64| ((epochs * steps_per_epoch as f64).round() as usize).max(1);
        training.steps = step_of(self.epochs);
        let mut snapshots = Vec::new();
        for &e in &self.snapshots {
            if !(e > 0.0 && e <= self.epochs) {
                anyhow::bail!(
                    "[dynamics] snapshots must lie in (0, epochs = {}], got {e}",
                    self.epochs
                );
            }
            snapshots.push(step_of(e));
        }
        snapshots.sort_unstable();
        snapshots.dedup();
        training.snapshot_steps = snapshots;
        training.eval_every = (steps_per_epoch / self.evals_per_epoch).max(1);
        training.plateau = Some(transformer::training::Plateau {
            min_gain: self.plateau_min_gain,
            window: steps_per_epoch.max(training.eval_every),
            // Set per objective by the study ([`Study::variant`]).
            context_free_loss: None,
        });
        training
            .validate()
            .map_err(|e| anyhow::anyhow!("[dynamics] gives an invalid [training]: {e}"))
    }

    pub fn model_ids(&self) -> anyhow::Result<Vec<ModelId>> {
        self.models
            .iter()
            .map(|name| {
                ModelId::from_name(name).ok_or_else(|| {
                    let known: Vec<&str> = ModelId::ALL.iter().map(|m| m.name()).collect();
                    anyhow::anyhow!(
                        "[dynamics] models: unknown model {name:?}; known: {}",
                        known.join(", ")
                    )
                })
            })
            .collect()
    }
}

pub fn load_config(args: &Args, exp: &str) -> anyhow::Result<Config> {
    Ok(load_config_from(args, exp)?.0)
}

/// [`load_config`], and the file it came from (none: the defaults).
pub fn load_config_from(args: &Args, exp: &str) -> anyhow::Result<(Config, Option<PathBuf>)> {
    let (mut cfg, path) = config::load::<Config>(args, exp)?;
    if let Some(p) = &path {
        println!("config {}", p.display());
    }
    // Before `--seed` replaces the study's seeds: the sweep's seeds are kept apart from the
    // config's, and `--exp sweep --seed` names a sweep seed.
    if let Err(e) = check_recipe(&cfg) {
        let source = path
            .as_ref()
            .map_or("the built-in defaults".into(), |p| p.display().to_string());
        anyhow::bail!("{source}: {e}");
    }
    cfg.planned_seeds = cfg.seeds.clone();
    if let Some(s) = args.seed {
        cfg.seeds = vec![s];
    }
    if cfg.seeds.is_empty() {
        anyhow::bail!("config: `seeds` is empty; give at least one seed");
    }
    let source = || {
        path.as_ref()
            .map_or("the built-in defaults".into(), |p| p.display().to_string())
    };
    let mut distinct = cfg.seeds.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != cfg.seeds.len() {
        anyhow::bail!(
            "{}: `seeds` names a seed twice ({:?}): each model is trained once per seed",
            source(),
            cfg.seeds
        );
    }
    if cfg.round && !cfg.training.dev_split {
        anyhow::bail!(
            "{}: round = true needs [training] dev_split = true: a round's losses are read on the test half of the held-out block",
            source()
        );
    }
    if args.quick {
        cfg.quick();
    }
    config::check_transformer(path.as_deref(), &cfg.model, &cfg.training)?;
    if let Err(e) = cfg.roles.cast() {
        let source = path
            .as_ref()
            .map_or("the built-in defaults".into(), |p| p.display().to_string());
        anyhow::bail!("{source}: {e}");
    }
    Ok((cfg, path))
}

/// `[learning_rates]`, `[sweep]` and `frozen_embedding_std` checked: known trained
/// transformers, finite positive rates and scales, a sweep that can choose.
fn check_recipe(cfg: &Config) -> anyhow::Result<()> {
    let trained = |name: &str| {
        ModelId::from_name(name).filter(|m| !m.is_word2vec() && *m != ModelId::Untrained)
    };
    for (name, &lr) in &cfg.learning_rates {
        if trained(name).is_none() {
            anyhow::bail!("[learning_rates] {name:?} is not a trained transformer");
        }
        if !(lr > 0.0 && lr.is_finite()) {
            anyhow::bail!(
                "[learning_rates] {name:?}: the rate must be a finite number > 0, got {lr}"
            );
        }
    }
    let s = &cfg.sweep;
    if s.lrs.is_empty() || s.lrs.iter().any(|&lr| !(lr > 0.0 && lr.is_finite())) {
        anyhow::bail!(
            "[sweep] lrs must be one or more finite numbers > 0, got {:?}",
            s.lrs
        );
    }
    if !(s.epochs > 0.0 && s.epochs.is_finite()) {
        anyhow::bail!("[sweep] epochs must be a number > 0, got {}", s.epochs);
    }
    if s.seeds.is_empty() {
        anyhow::bail!("[sweep] seeds is empty; give at least one seed");
    }
    if let Some(clash) = s.seeds.iter().find(|x| cfg.seeds.contains(x)) {
        anyhow::bail!("[sweep] seeds: seed {clash} is also a study seed; a rate chosen on a reported seed would favour it");
    }
    let factors = &s.word2vec_alpha_factors;
    if factors.iter().any(|&f| !(f > 0.0 && f.is_finite())) {
        anyhow::bail!("[sweep] word2vec_alpha_factors must be finite numbers > 0, got {factors:?}");
    }
    for name in &s.models {
        let word2vec = ModelId::from_name(name).is_some_and(ModelId::is_word2vec);
        if word2vec && factors.is_empty() {
            anyhow::bail!("[sweep] models: {name:?} is word2vec, swept only with [sweep] word2vec_alpha_factors");
        }
        if trained(name).is_none() && !word2vec {
            anyhow::bail!("[sweep] models: {name:?} is not a trained transformer or word2vec");
        }
    }
    if let Some(s) = cfg.training.init_seed {
        // One W0 for every seed would make the seeds' runs dependent, and every interval over
        // seeds assumes they are not.
        anyhow::bail!(
            "[training] init_seed = {s} would start every seed of the study from one seed's weights; a crossed run is `--exp train --init-seed`"
        );
    }
    if cfg.training.frozen_embedding_std.is_some() {
        anyhow::bail!(
            "[training] frozen_embedding_std would reach every variant; set the top-level frozen_embedding_std, which the frozen-input ablation alone reads"
        );
    }
    if let Some(std) = cfg.frozen_embedding_std {
        if !(std > 0.0 && std.is_finite()) {
            anyhow::bail!("frozen_embedding_std must be a finite number > 0, got {std}");
        }
    }
    for (name, &n) in &cfg.seed_counts {
        if ModelId::from_name(name).is_none() {
            let known: Vec<&str> = ModelId::ALL.iter().map(|m| m.name()).collect();
            anyhow::bail!(
                "[seed_counts] {name:?} is not a model; known: {}",
                known.join(", ")
            );
        }
        if n == 0 || n > cfg.seeds.len() {
            anyhow::bail!(
                "[seed_counts] {name:?}: {n} seeds, but `seeds` has {} (give 1 to {0})",
                cfg.seeds.len()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod recipe_tests {
    use super::*;

    #[test]
    fn learning_rates_sweep_and_frozen_scale_are_checked_naming_the_key() {
        let ok = Config::default();
        assert!(check_recipe(&ok).is_ok());
        let bad = |f: &dyn Fn(&mut Config), needle: &str| {
            let mut c = Config::default();
            f(&mut c);
            let e = check_recipe(&c).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        };
        bad(
            &|c| {
                let _ = c
                    .learning_rates
                    .insert("transformer-untrained".into(), 1e-3);
            },
            "[learning_rates] \"transformer-untrained\"",
        );
        bad(
            &|c| {
                let _ = c.learning_rates.insert("word2vec-sgns".into(), 1e-3);
            },
            "not a trained transformer",
        );
        bad(
            &|c| {
                let _ = c.learning_rates.insert("transformer-mlm".into(), f64::NAN);
            },
            "finite number > 0",
        );
        bad(&|c| c.sweep.lrs.clear(), "[sweep] lrs");
        bad(&|c| c.sweep.epochs = 0.0, "[sweep] epochs");
        bad(&|c| c.sweep.seeds = vec![], "[sweep] seeds is empty");
        bad(&|c| c.sweep.seeds = vec![3], "seed 3 is also a study seed");
        bad(
            &|c| c.sweep.models = vec!["transformer-mlm-typo".into()],
            "[sweep] models",
        );
        bad(
            &|c| c.sweep.models = vec!["word2vec-cbow".into()],
            "swept only with [sweep] word2vec_alpha_factors",
        );
        bad(
            &|c| c.sweep.word2vec_alpha_factors = vec![1.0, 0.0],
            "word2vec_alpha_factors must be finite numbers > 0",
        );
        let mut swept = Config::default();
        swept.sweep.models = vec!["word2vec-cbow".into()];
        swept.sweep.word2vec_alpha_factors = vec![0.5, 1.0];
        check_recipe(&swept).unwrap();
        bad(
            &|c| c.frozen_embedding_std = Some(-1.0),
            "frozen_embedding_std",
        );
        bad(
            &|c| c.training.init_seed = Some(2),
            "[training] init_seed = 2 would start every seed of the study from one seed's weights",
        );
        bad(
            &|c| {
                let _ = c.seed_counts.insert("transformer-mlm-sharedqk".into(), 2);
            },
            "[seed_counts] \"transformer-mlm-sharedqk\" is not a model; known: ",
        );
        bad(
            &|c| {
                let _ = c.seed_counts.insert("transformer-mlm-shared-qk".into(), 4);
            },
            "[seed_counts] \"transformer-mlm-shared-qk\": 4 seeds, but `seeds` has 3 (give 1 to 3)",
        );
        bad(
            &|c| {
                let _ = c.seed_counts.insert("transformer-mlm-shared-qk".into(), 0);
            },
            "0 seeds",
        );
        // The first n seeds of the named model, every seed of the others.
        let mut c = Config {
            seeds: vec![4, 2, 9],
            ..Config::default()
        };
        let _ = c.seed_counts.insert("transformer-mlm-shared-qk".into(), 2);
        assert!(check_recipe(&c).is_ok());
        assert_eq!(c.seeds_of(ModelId::SharedQk), [4, 2]);
        assert_eq!(c.seeds_of(ModelId::Mlm), [4, 2, 9]);
        // `--seed` leaves one seed: a model planned at fewer reads it only if it is among them.
        c.planned_seeds = vec![4, 2, 9];
        c.seeds = vec![9];
        assert_eq!(c.seeds_of(ModelId::SharedQk), Vec::<u64>::new());
        assert_eq!(c.seeds_of(ModelId::Mlm), [9]);
        c.seeds = vec![2];
        assert_eq!(c.seeds_of(ModelId::SharedQk), [2]);
        assert_eq!(
            ModelId::from_name("transformer-mlm-no-attention-untied-head"),
            Some(ModelId::NoAttentionUntied)
        );
        // The untied control plays a role only where a config names it.
        let mut roles = Roles::default();
        assert_eq!(roles.cast().unwrap().controls(), [ModelId::NoAttention]);
        roles.no_attention_untied = Some("transformer-mlm-no-attention-untied-head".into());
        assert_eq!(
            roles.cast().unwrap().controls(),
            [ModelId::NoAttention, ModelId::NoAttentionUntied]
        );
        roles.no_attention_untied = Some("word2vec-sgns".into());
        let e = roles.cast().unwrap_err().to_string();
        assert!(e.contains("[roles] no_attention_untied"), "{e}");
    }
}

#[cfg(test)]
mod word2vec_config_tests {
    use super::*;

    /// The study's word2vec models keep word2vec.c's hogwild (every output and input row
    /// shared), as its committed vectors were trained (the ten-seed round on one thread, where
    /// no row is shared with another); word2vec.toml (`--exp word2vec` and the speed
    /// benchmark) keeps rows private.
    #[test]
    fn the_study_configs_share_every_word2vec_row_and_the_benchmark_keeps_some_private() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        let mut study = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == "word2vec.toml" || path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            // The study's configs (the others are read by other experiments).
            if let Ok(cfg) = config::load_file::<Config>(&path) {
                assert_eq!(
                    (
                        cfg.sgns.private_rows,
                        cfg.cbow.private_rows,
                        cfg.sgns.private_input_rows,
                        cfg.cbow.private_input_rows
                    ),
                    (0, 0, 0, 0),
                    "{name}"
                );
                study.push(name);
            }
        }
        for name in [
            "paper.toml",
            "ten-seeds.toml",
            "ten-seeds-half.toml",
            "dynamics.toml",
        ] {
            assert!(
                study.iter().any(|s| s == name),
                "{name} not read: {study:?}"
            );
        }
        let bench: crate::exp::word2vec::Config =
            config::load_file(&dir.join("word2vec.toml")).unwrap();
        assert!(bench.sgns.private_rows > 0 && bench.cbow.private_rows > 0);
        assert!(bench.sgns.private_input_rows > 0 && bench.cbow.private_input_rows > 0);
    }
}
