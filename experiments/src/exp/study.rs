//! The paper's models and what is measured on each of them, once.
//!
//! A [`Study`] is one config (experiments/configs/paper.toml, which the per-experiment configs
//! extend), its corpus, and its seeds. It trains or loads every model an experiment asks for
//! (through the run cache, [`crate::runs`]) and measures each model once: [`Study::scores`]
//! returns tidy rows for every representation of the model, cached beside its checkpoint.
//!
//! The models ([`super::settings::ModelId`]): word2vec SGNS and CBOW, and transformer variants
//! of the base config — the masked LM (the reference) with tied and untied head, the causal LM on
//! matched targets with tied and untied head, shared-QK, shared-QKV, frozen random input
//! embedding (untied head), no attention, and the untrained (initialised) masked LM as the
//! control.
//!
//! What a transformer's rows hold (`representation` column):
//! * `embedding` (and `lm_head` when untied): analogy, similarity and collocation of the matrix;
//! * `decontextualized` / `aggregated` per layer: the same on pooled vectors
//!   (`analysis::representations` says how they are pooled);
//! * `contextual` per layer: self-similarity, intra-sentence similarity, anisotropy;
//! * `attention-activations` per layer, benchmark `all-heads`: CKA between the queries, keys and
//!   values computed from real tokens, each with its permutation null;
//! * `attention-trained` / `attention-initialisation` / `attention-updates` (W - W0) per layer,
//!   benchmark `head-<h>`: cosine and CKA between W_Q, W_K, W_V (each CKA with its permutation
//!   null), and the symmetric share of W_Q W_K^T;
//! * `embedding-{q,k,v}-head-<h>` (layer 1): the embedding matrix through a head's projection,
//!   scored like any table, and its CKA with the embedding (benchmark `geometry`);
//! * `training`: final held-out loss, and the unigram entropy it is read against.

use std::path::PathBuf;

use anyhow::Context;

use analysis::collocation::{
    collocation_pairs, collocation_score, pair_cosine_items, CollocationPairs,
};
use analysis::geometry::{
    activation_geometry, attention_geometry, attention_update_geometry, contextuality,
    embedding_scale, linear_cka_wide, linear_cka_wide_null, project_rows, qkv_per_layer,
    random_projection_cka,
};
use analysis::representations::{
    aggregated, decontextualized, embedding_table, lm_head_table, Aggregated, Readout,
};
use analysis::representations::{BothReadouts, WholeWord};
use burn::module::Module;
use burn::tensor::Device;
use corpus::{Corpus, CorpusConfig};
use transformer::backend::BackendKind;
use transformer::data::{self, Objective, Sequences};
use transformer::model::{Mixing, QkvTying};
use transformer::training::{self, CurvePoint, LmHeadInit, RunControl, TrainingConfig};
use transformer::{Transformer, TransformerConfig};
use word2vec::{Word2VecConfig, WordVectors};

use super::eval::{evaluate_table_items, Benchmarks};
use super::settings::{Cast, Config, ModelId, QUICK_STEPS_PER_EPOCH};
use crate::cli::Args;
use crate::kept;
use crate::output::{self, ItemRow, TidyRow};
use crate::runs::{self, TransformerKey};

/// Bumped whenever what a score row means changes, so cached measurements are not reused:
/// 2 = pooling over the whole training split with OOV for unseen words, causal readout of CLM,
/// contextuality nulls, collocation pairs without split words and with matched controls;
/// 3 = per-item outcomes beside the rows (`items-<h>.csv.gz`), chance rows (`3CosAdd_chance`,
/// `spearman_null_lo`/`_hi`) and the CKA of projected activations (`attention-activations`);
/// 4 = Linzen's analogy baselines (`only-b`, `ignore-a` rows and outcomes), the trained E
/// through the initial heads (`cka_with_embedding_initial_head`), contextuality read after the
/// final LayerNorm too (benchmark `contextuality-norm`) and on sentences (`contextuality-sentences`,
/// when configured), the input embedding's scale (`embedding-scale`), each head's bilinear form
/// W_Q W_K^T (`qk_symmetry`, `qk_directionality`, `qk_identity_alignment`, trained and at
/// initialisation, with their cross-head nulls). Version 4 is taken
/// by configs with a dev split (the ten-seed round, `ten-seeds.toml`) alone: the committed
/// three-seed study, measured at 3, stays readable until that round replaces it. The attention
/// forms' pair scores (`pairs:` rows, `dot`/`form-trained`/`form-initial` items) were added
/// within version 4 without a bump; 5 = every model with them, the collocated and matched
/// pairs' cosines of each embedding, output matrix and word2vec table kept per item (items of
/// benchmark `collocation`, kinds `collocated` and `matched`: the gap's interval carries the
/// pairs), and contextuality on sentences through the final LayerNorm too
/// (`contextuality-sentences-norm`). Version 5, like 4, is taken by configs with a dev split
/// alone; the round's models measured at 4 are measured again (those whose weights are gone
/// are trained again, and must retrace their kept curves within `RETRACE_TOLERANCE` before
/// anything is measured on them). The pairs' cosines are written at every version by this code, so a version-3
/// items file measured now holds them and one committed earlier does not; readers take both.
const SCORES_VERSION: u32 = 5;
const SCORES_VERSION_THREE_SEED_STUDY: u32 = 3;

/// The share of positions a matched-targets causal LM is trained on: a masked LM's 15%.
pub const MATCHED_TARGETS: f64 = 0.15;

/// Words (the most frequent) over which CKA between E and E W^h is computed: enough for a
/// stable value, few enough that its permutation null costs seconds.
const CKA_WORDS: usize = 2_000;

/// Real tokens over which the CKA of projected activations (queries vs keys vs values) is
/// computed.
const ACTIVATION_TOKENS: usize = 2_000;

pub struct Study {
    pub cfg: Config,
    /// The corpus config as written (hashed into run names: not the machine's resolved path).
    corpus_cfg: CorpusConfig,
    pub corpus: Corpus,
    pub seqs: Sequences,
    pub benchmarks: Benchmarks,
    pub kind: BackendKind,
    pub device: Device,
    pub out: PathBuf,
    /// The evaluation vocabulary: the most frequent words, `restrict_vocab` of them at most.
    pub words: Vec<String>,
    pairs: CollocationPairs,
    /// `cfg.roles`, checked.
    pub cast: Cast,
    /// The held-out loss of the best context-free model, masked LM then causal LM, on the
    /// held-out targets the models are scored on ([`Sequences::context_free_heldout_losses`]):
    /// on the whole block, its dev half and its test half.
    context_free: [[f64; 3]; 2],
    /// `[contextuality] sentences`, encoded: `[CLS] words` padded to the sequence
    /// length, row-major ([`Study::sentence_sequences`]).
    sentences: Option<Vec<u32>>,
}

impl Study {
    pub fn load(args: &Args, mut cfg: Config) -> anyhow::Result<Study> {
        let cast = cfg.roles.cast()?;
        let corpus_cfg = cfg.corpus.clone();
        let corpus = super::load_corpus(args, &cfg.corpus)?;
        let seqs = Sequences::new(&corpus, cfg.training.seq_len, cfg.training.heldout_fraction)
            .map_err(anyhow::Error::msg)?;
        if let Some(d) = &cfg.dynamics {
            let per_epoch = if args.quick {
                QUICK_STEPS_PER_EPOCH
            } else {
                seqs.steps_per_epoch(cfg.training.batch_size)
            };
            d.apply(&mut cfg.training, per_epoch)?;
        }
        let kind = crate::device::backend(args);
        let device = crate::device::open(kind)?;
        let n_words = corpus.vocab.len().min(cfg.eval.restrict_vocab);
        let words = corpus.vocab.words()[..n_words].to_vec();
        let pairs = collocations(&corpus, &cfg.collocation);
        println!(
            "corpus {}: {} tokens, {} words; {} collocation pairs ({} split-word or name pairs left out, {} matched controls, {} shared-context pairs); seeds {:?}; backend {}",
            corpus.source.display(),
            corpus.encoded.n_tokens(),
            corpus.vocab.len(),
            pairs.pairs.len(),
            pairs.excluded,
            pairs.matched.len(),
            pairs.shared_context.len(),
            cfg.seeds,
            kind.name()
        );
        let t = &cfg.training;
        let context_free = [Objective::Mlm, Objective::Clm]
            .map(|o| seqs.context_free_heldout_losses(o, t.batch_size, t.eval_batches));
        let shown = usize::from(t.dev_split) * 2;
        println!(
            "{} loss of the best context-free model (the chance level of the reported loss): masked LM {:.3}, causal LM {:.3} nats",
            if t.dev_split { "test" } else { "held-out" },
            context_free[0][shown],
            context_free[1][shown]
        );
        let sentences = match &cfg.contextuality.sentences {
            Some(s) => Some(sentence_sequences(
                &corpus,
                s,
                cfg.training.seq_len,
                cfg.contextuality.sequences,
            )?),
            None => None,
        };
        Ok(Study {
            sentences,
            context_free,
            benchmarks: super::eval::benchmarks(&args.similarity)?,
            cfg,
            corpus_cfg,
            corpus,
            seqs,
            kind,
            device,
            out: args.out.clone(),
            words,
            pairs,
            cast,
        })
    }

    /// Training-split counts of the word ids (`0..n_words`).
    pub fn word_counts(&self) -> Vec<f64> {
        let n = self.seqs.n_words as usize;
        let mut counts = vec![0.0; n];
        for &id in &self.seqs.train {
            if (id as usize) < n {
                counts[id as usize] += 1.0;
            }
        }
        counts
    }

    /// The corpus config as the config file wrote it (what run keys hash).
    pub fn corpus_config(&self) -> &CorpusConfig {
        &self.corpus_cfg
    }

    /// The transformer config and training config of a variant at a seed.
    pub fn variant(&self, id: ModelId, seed: u64) -> (TransformerConfig, TrainingConfig) {
        let mut model = self.cfg.model.clone();
        let mut training = TrainingConfig {
            seed,
            ..self.cfg.training.clone()
        };
        match id {
            ModelId::SharedQk => model.qkv = QkvTying::SharedQk,
            ModelId::SharedQkv => model.qkv = QkvTying::SharedQkv,
            ModelId::MlmUntied => model.tie_lm_head = false,
            ModelId::ClmMatched | ModelId::ClmMatchedUntied => {
                training.objective = Objective::Clm;
                training.clm_target_fraction = Some(MATCHED_TARGETS);
                model.tie_lm_head = id == ModelId::ClmMatched;
            }
            ModelId::FrozenUntied => {
                model.freeze_embeddings = true;
                model.tie_lm_head = false;
                training.frozen_embedding_std = self.cfg.frozen_embedding_std;
            }
            ModelId::NoAttention => model.mixing = Mixing::Uniform,
            ModelId::NoAttentionUntied => {
                model.mixing = Mixing::Uniform;
                model.tie_lm_head = false;
            }
            ModelId::Sgns | ModelId::Cbow | ModelId::Mlm | ModelId::Untrained => {}
        }
        // A tied head is the token embedding: it has no start of its own, and its runs keep
        // their keys when `[training] lm_head_init` is set for the untied variants.
        if model.tie_lm_head {
            training.lm_head_init = LmHeadInit::Normal;
        }
        // The untrained model is the masked LM's initialisation, and keeps its run's key.
        let rate_of = if id == ModelId::Untrained {
            ModelId::Mlm
        } else {
            id
        };
        if let Some(&lr) = self.cfg.learning_rates.get(rate_of.name()) {
            training.lr = lr;
        }
        // A run on a context-free plateau (the unigram, or for a masked LM also copying the
        // visible input) has not converged: the rule counts only held-out losses below the
        // best loss of a model of this objective that ignores context.
        if let Some(rule) = training.plateau.as_mut() {
            // With a dev split the rule reads dev rows, so its gate is the dev half's level.
            let i = if training.dev_split { 1 } else { 0 };
            rule.context_free_loss =
                Some(self.context_free[objective_index(training.objective)][i]);
        }
        let model = model.to_config(self.corpus.vocab.len_with_specials(), training.seq_len);
        (model, training)
    }

    /// The lowest held-out loss a model of `id`'s objective reaches without using context, on
    /// the held-out targets it is scored on ([`Sequences::context_free_heldout_loss`]; the
    /// corpus-wide closed form, [`data::context_free_loss`], derives it): the chance level its
    /// held-out loss is read against.
    pub fn context_free_loss(&self, id: ModelId) -> f64 {
        let (_, training) = self.variant(id, 0);
        self.context_free_level(training.objective)
    }

    /// [`Study::context_free_loss`] of an objective.
    pub fn context_free_level(&self, objective: Objective) -> f64 {
        self.context_free[objective_index(objective)][self.reported_index()]
    }

    /// The split losses are reported on: `test` with a dev split, else the whole held-out
    /// block (`heldout`).
    pub fn reported_split(&self) -> &'static str {
        if self.cfg.training.dev_split {
            "test"
        } else {
            "heldout"
        }
    }

    fn reported_index(&self) -> usize {
        if self.cfg.training.dev_split {
            2
        } else {
            0
        }
    }

    /// The loss a model is reported at: [`Study::reported_split`]'s of `losses`.
    pub fn reported_loss(&self, losses: &training::HeldoutLosses) -> f64 {
        if self.cfg.training.dev_split {
            losses.test
        } else {
            losses.heldout
        }
    }

    pub(crate) fn run_dir(&self, id: ModelId, seed: u64) -> PathBuf {
        if id.is_word2vec() {
            let key = (&self.corpus_cfg, &self.word2vec_config(id, seed));
            return runs::run_dir(&self.out, id.name(), seed, &key);
        }
        let (model, training) = self.variant(id, seed);
        let key = TransformerKey {
            corpus: &self.corpus_cfg,
            model: &model,
            training: &training,
            backend: self.kind.name(),
        };
        if id == ModelId::Untrained {
            // The initialisation of the masked-LM run of this seed, never trained.
            return runs::run_dir(&self.out, "untrained", seed, &key);
        }
        runs::transformer_dir(&self.out, &key)
    }

    /// The study's `[sgns]` or `[cbow]` with `seed`: what its word2vec model `id` trains with.
    pub(crate) fn word2vec_config(&self, id: ModelId, seed: u64) -> Word2VecConfig {
        let base = if id == ModelId::Sgns {
            &self.cfg.sgns
        } else {
            &self.cfg.cbow
        };
        Word2VecConfig {
            seed,
            ..base.clone()
        }
    }

    /// word2vec trained on `tokens` corpus tokens (a matched budget, fractions of an epoch
    /// included; the learning rate decays over the budget), loaded when its run is kept.
    pub fn word2vec_on_budget(
        &self,
        id: ModelId,
        seed: u64,
        tokens: u64,
    ) -> anyhow::Result<WordVectors> {
        let per_epoch = self.corpus.encoded.n_tokens() as u64;
        let w = Word2VecConfig {
            max_tokens: Some(tokens),
            epochs: tokens.div_ceil(per_epoch).max(1) as usize,
            ..self.word2vec_config(id, seed)
        };
        let dir = runs::run_dir(
            &self.out,
            &format!("{}-budget", id.name()),
            seed,
            &(&self.corpus_cfg, &w),
        );
        let what = format!(
            "{} seed {seed} on {:.2}M tokens",
            id.name(),
            tokens as f64 / 1e6
        );
        self.word2vec_vectors(&dir, &w, &what, false)
    }

    /// The vectors of the word2vec run `w` in `dir`: read when the run is kept, trained (and
    /// kept, with its config) otherwise. `what` names the run in the progress line.
    fn word2vec_vectors(
        &self,
        dir: &std::path::Path,
        w: &Word2VecConfig,
        what: &str,
        progress: bool,
    ) -> anyhow::Result<WordVectors> {
        let file = dir.join("vectors.bin");
        if file.exists() {
            return Ok(word2vec::format::read(&file)?);
        }
        println!("training {what} -> {}", dir.display());
        let trained = word2vec::train(&self.corpus, w, progress)?;
        word2vec::format::write(&trained.vectors, &file, word2vec::format::Format::Binary)?;
        runs::record_key(dir, &(&self.corpus_cfg, w))?;
        Ok(trained.vectors)
    }

    /// The trained (or, for `Untrained`, initialised) transformer of a variant and its loss
    /// curve: loaded when the run is complete, resumed when partial, trained otherwise. When
    /// the model's curve is kept, the run must retrace it (or nothing is measured on it: an
    /// error), so that everything kept of a model comes from one run.
    pub fn transformer(
        &self,
        id: ModelId,
        seed: u64,
    ) -> anyhow::Result<(Transformer, Vec<CurvePoint>)> {
        self.trained(id, seed, true)
    }

    /// [`Study::transformer`]; with `strict` false a run that does not retrace the kept curve
    /// is only warned about (`--exp export`, which measures nothing).
    fn trained(
        &self,
        id: ModelId,
        seed: u64,
        strict: bool,
    ) -> anyhow::Result<(Transformer, Vec<CurvePoint>)> {
        let (model_cfg, training) = self.variant(id, seed);
        let dir = self.run_dir(id, seed);
        if id == ModelId::Untrained {
            self.device.seed(seed);
            let model = model_cfg.init(&self.device);
            let losses = training::heldout_losses(&model, &self.seqs, &training);
            let mut splits = vec![("heldout", losses.heldout)];
            if training.dev_split {
                splits.extend([("dev", losses.dev), ("test", losses.test)]);
            }
            let curve = splits
                .into_iter()
                .map(|(split, loss)| CurvePoint {
                    step: 0,
                    split: split.into(),
                    loss,
                    perplexity: loss.exp(),
                    lr: 0.0,
                    tokens_per_second: 0.0,
                })
                .collect();
            return Ok((model, curve));
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
        runs::record_key(
            &dir,
            &TransformerKey {
                corpus: &self.corpus_cfg,
                model: &model_cfg,
                training: &training,
                backend: self.kind.name(),
            },
        )?;
        let complete = read_curve(&dir).is_some_and(|c| training::finished(&c, &training));
        if !complete {
            println!("training {} seed {seed} -> {}", id.name(), dir.display());
        }
        let started = std::time::Instant::now();
        let outcome = training::train(
            &model_cfg,
            &training,
            &self.seqs,
            &self.device,
            &dir,
            &RunControl {
                resume: true,
                stop_at: None,
                progress: true,
                more_devices: Vec::new(),
                ddp: false,
            },
        )?;
        if !complete {
            let last = outcome.curve.iter().map(|p| p.step).max().unwrap_or(0);
            let plateau = if last < training.steps {
                format!(
                    " (stopped on its plateau at step {last} of {})",
                    training.steps
                )
            } else {
                String::new()
            };
            println!(
                "trained {} seed {seed}: {} steps in {:.0} s{plateau}",
                id.name(),
                last.saturating_sub(outcome.resumed_from),
                started.elapsed().as_secs_f64()
            );
        }
        // The curve is kept with the measurements (committed), so figures of loss need no model.
        // A kept curve is the run the kept measurements came from: it is never rewritten, and
        // the run in the cache, trained now or earlier (its cache lost and trained again: `--exp
        // export` on a fresh clone, say), must retrace it before anything is measured on it.
        let kept = self.measured_dir(id, seed).join("curve.csv");
        if kept::exists(&kept)? {
            let old: Vec<CurvePoint> = kept::read_csv(&kept)?;
            let verdict = retraced(&old, &outcome.curve);
            if !retraces(&old, &outcome.curve) {
                let what = format!(
                    "{} seed {seed}: the run in the run cache ({}) is not the one whose measurements are kept in {} ({verdict})",
                    id.name(),
                    dir.display(),
                    kept.parent().unwrap_or(&kept).display()
                );
                if strict {
                    anyhow::bail!(
                        "{what}; they stay as they are: to measure this run, give it another --out"
                    );
                }
                eprintln!("warning: {what}; the tables written come from this run");
            } else if !complete {
                println!("{} seed {seed} trained again: {verdict}", id.name());
            }
        } else {
            kept::write_csv(&kept, &outcome.curve)?;
        }
        Ok((outcome.model.valid(), outcome.curve))
    }

    /// What measuring the `missing` (model, seed) pairs ([`Study::missing`]: those whose
    /// measurements are not kept) will train, and about how long it will take: printed before
    /// any training, so that a first run that would take hours says so (and how to avoid it)
    /// instead of going quiet. A transformer's time is its remaining tokens over the median
    /// training speed of earlier runs of the same variant kept under `measurements/` (any
    /// variant's, failing that).
    /// `jobs` models train side by side (`--jobs`): the wall time is about the models' summed
    /// time over `jobs`, the kept speeds being those of runs trained two side by side.
    pub fn announce(&self, missing: &[(ModelId, u64)], jobs: usize) {
        let mut lines = Vec::new();
        let mut total = 0.0;
        let mut untimed = 0;
        let kept = self.kept_speeds();
        for &(id, seed) in missing {
            if id == ModelId::Untrained {
                continue;
            }
            if id.is_word2vec() {
                lines.push(format!(
                    "  {} seed {seed}: word2vec, about a minute",
                    id.name()
                ));
                total += 60.0;
                continue;
            }
            let (_, training) = self.variant(id, seed);
            let curve = read_curve(&self.run_dir(id, seed)).unwrap_or_default();
            let done = curve.iter().map(|p| p.step).max().unwrap_or(0);
            if training::finished(&curve, &training) {
                lines.push(format!(
                    "  {} seed {seed}: trained, to be measured",
                    id.name()
                ));
                continue;
            }
            let left = training.steps - done;
            let tokens = (left * training.batch_size * training.seq_len) as f64;
            let label = self.run_label(id, seed);
            match median_speed(&kept, &label) {
                Some(speed) => {
                    let secs = tokens / speed;
                    total += secs;
                    lines.push(format!(
                        "  {} seed {seed}: {left} steps, {:.1}M tokens, about {:.0} min at {:.0} tokens/s",
                        id.name(),
                        tokens / 1e6,
                        secs / 60.0,
                        speed
                    ));
                }
                None => {
                    untimed += 1;
                    lines.push(format!(
                        "  {} seed {seed}: {left} steps, {:.1}M tokens (not timed: no earlier run kept)",
                        id.name(),
                        tokens / 1e6
                    ));
                }
            }
        }
        if lines.is_empty() {
            println!(
                "every model's measurements are kept under {}: nothing to train (another --out trains and measures anew)",
                self.out.join("measurements").display()
            );
            return;
        }
        println!(
            "to train and measure ({} models; measurements kept under {} are reused, none matched these):",
            lines.len(),
            self.out.join("measurements").display()
        );
        for l in &lines {
            println!("{l}");
        }
        let untimed = if untimed > 0 {
            format!(" for the models timed ({untimed} not timed)")
        } else {
            String::new()
        };
        let side = jobs.clamp(1, lines.len());
        println!(
            "estimated training time: {:.0} min of model time{untimed} at the speeds of the runs kept so far, about {:.1} h of wall time with {side} side by side, plus measuring; `--quick` runs the same code at toy scale in minutes",
            total / 60.0,
            total / 3600.0 / side as f64
        );
    }

    /// Every (model, seed) of `ids` at the study's seeds that `kept` does not already cover,
    /// models outer and seeds inner: what [`Study::announce`] plans and `--jobs` farms out.
    pub fn missing(
        &self,
        ids: &[ModelId],
        kept: &dyn Fn(ModelId, u64) -> anyhow::Result<bool>,
    ) -> anyhow::Result<Vec<(ModelId, u64)>> {
        let mut missing = Vec::new();
        for &id in ids {
            for &s in &self.cfg.seeds_of(id) {
                if !kept(id, s)? {
                    missing.push((id, s));
                }
            }
        }
        Ok(missing)
    }

    /// The run directory's label (`mlm-shared-qk`, ...) without seed and hash.
    fn run_label(&self, id: ModelId, seed: u64) -> String {
        let dir = self.run_dir(id, seed);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        name.split(&format!("-seed{seed}-"))
            .next()
            .unwrap_or_default()
            .to_string()
    }

    /// Training tokens/s of every kept curve, by measurement directory name: read once per
    /// [`Study::announce`], whatever the number of models it plans.
    fn kept_speeds(&self) -> Vec<(String, Vec<f64>)> {
        let dir = self.out.join("measurements");
        std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                // An estimate: a directory that fails its checks is left out here and refused,
                // naming the file, where its measurements are read.
                let curve = kept::read_csv::<CurvePoint>(&entry.path().join("curve.csv")).ok()?;
                let speeds = curve
                    .iter()
                    .filter(|p| p.split == "train" && p.tokens_per_second > 0.0)
                    .map(|p| p.tokens_per_second)
                    .collect();
                Some((entry.file_name().to_string_lossy().into_owned(), speeds))
            })
            .collect()
    }

    /// "Are W_Q, W_K, W_V the embedding?": the embedding matrix seen through each layer-1 head's
    /// query, key and value projection (`E W^h`, representation `embedding-q` / `-k` / `-v`,
    /// benchmark columns as for any table, `layer` 1, one row set per head), scored like any
    /// table, and how close its geometry stays to E's: linear CKA over the words (the most
    /// frequent [`CKA_WORDS`]) beside its row-permutation null, and beside the same E seen
    /// through the same seed's initial head (`initial`: a random projection of the same shape,
    /// drawn as the head was): how much of CKA(E W^h, E) any projection of that shape keeps.
    /// `e` is the model's embedding table over the evaluation words.
    fn score_projected_embeddings(
        &self,
        model: &Transformer,
        initial: &Transformer,
        e: &WordVectors,
        id: ModelId,
        seed: u64,
    ) -> Vec<TidyRow> {
        let d = e.dim();
        let layer = &qkv_per_layer(model)[0];
        let at_init = &qkv_per_layer(initial)[0];
        let n_cka = e.len().min(CKA_WORDS);
        let mut rows = Vec::new();
        let heads = [
            ("q", &layer.q, &at_init.q),
            ("k", &layer.k, &at_init.k),
            ("v", &layer.v, &at_init.v),
        ];
        for (name, w, w0) in heads {
            for h in 0..layer.n_heads {
                let projected = project_rows(e.data(), d, w, layer.d_out, h, layer.d_k);
                let table = WordVectors::new(e.words().to_vec(), layer.d_k, projected);
                let template = TidyRow {
                    layer: Some(1),
                    ..self.template(id, seed, &format!("embedding-{name}-head-{h}"))
                };
                // Scored, but their per-item outcomes are not kept (12 tables a model): the
                // report states these as seed means beside E's.
                rows.extend(self.score_table(&table, &template).0);
                let (x, y) = (&e.data()[..n_cka * d], &table.data()[..n_cka * layer.d_k]);
                let cka = linear_cka_wide(x, d, y, layer.d_k, n_cka);
                let null = linear_cka_wide_null(x, d, y, layer.d_k, n_cka, 10, seed);
                let random = project_rows(&e.data()[..n_cka * d], d, w0, layer.d_out, h, layer.d_k);
                let through_initial = linear_cka_wide(x, d, &random, layer.d_k, n_cka);
                let projections = random_projection_cka(x, d, layer.d_k, n_cka, 10, seed);
                rows.extend(template.measures(
                    "geometry",
                    n_cka,
                    &[
                        ("cka_with_embedding", cka),
                        ("cka_with_embedding_null", null),
                        ("cka_with_embedding_initial_head", through_initial),
                        ("cka_with_embedding_random_projections", projections),
                    ],
                ));
            }
        }
        rows
    }

    /// The loss curve of a trained variant (after [`Study::transformer`] has run).
    pub fn curve(&self, id: ModelId, seed: u64) -> anyhow::Result<Vec<CurvePoint>> {
        if id == ModelId::Untrained {
            return Ok(self.transformer(id, seed)?.1);
        }
        let kept = self.measured_dir(id, seed).join("curve.csv");
        if kept::exists(&kept)? {
            return kept::read_csv(&kept);
        }
        match read_curve(&self.run_dir(id, seed)) {
            Some(c) => Ok(c),
            None => Ok(self.transformer(id, seed)?.1),
        }
    }

    /// Where one model's measurements are kept: `<out>/measurements/<run name>/` (the run
    /// directory's name, so the model's config hash is in it). Unlike the run cache, these
    /// small files are committed: `scores-<h>.csv` (the tidy rows), `items-<h>.csv.gz` (every
    /// analogy question's and similarity pair's outcome, for the report's intervals) and
    /// `curve.csv` (the loss curve). `<h>` hashes the measurement settings. A study is
    /// completed over several sittings, and a fresh clone reruns the figures, from these.
    pub fn measured_dir(&self, id: ModelId, seed: u64) -> PathBuf {
        let run = self.run_dir(id, seed);
        let name = run.file_name().expect("run directories have a name");
        self.out.join("measurements").join(name)
    }

    pub(crate) fn settings_hash(&self) -> String {
        let version = if self.cfg.training.dev_split {
            SCORES_VERSION
        } else {
            SCORES_VERSION_THREE_SEED_STUDY
        };
        let settings = (
            version,
            &self.cfg.eval,
            &self.cfg.pooling,
            &self.cfg.contextuality,
            &self.cfg.collocation,
            self.benchmark_names(),
        );
        runs::config_hash(&settings)
    }

    /// The per-item outcomes file of a model (written by [`Study::scores`]).
    pub fn items_path(&self, id: ModelId, seed: u64) -> PathBuf {
        self.measured_dir(id, seed)
            .join(format!("items-{}.csv.gz", self.settings_hash()))
    }

    /// Whether a model's measurements are already kept (committed or made earlier): then
    /// [`Study::scores`] neither trains nor measures. An error when its directory is damaged
    /// ([`kept::manifest`]): a kept file that is missing must not be measured again silently.
    pub fn is_measured(&self, id: ModelId, seed: u64) -> anyhow::Result<bool> {
        let dir = self.measured_dir(id, seed);
        let h = self.settings_hash();
        let measured = kept::exists(&dir.join(format!("scores-{h}.csv")))?
            && kept::exists(&self.items_path(id, seed))?;
        if measured {
            // Every file of the model's directory, not only those this run reads: the
            // per-item outcomes behind a table's intervals are read later, by the report.
            kept::verify(&dir)?;
        }
        Ok(measured)
    }

    /// A masked LM's held-out loss split by input, per held-out sequence
    /// ([`super::context_gain`]: the gain over the unigram at `[MASK]` targets says whether
    /// the model predicts from context), kept in `heldout-by-input.csv.gz` beside its
    /// measurements. Computed from the final model when its run is complete in the run cache
    /// (the untrained control is initialised); `None` for other objectives and word2vec, and
    /// for a model whose weights are gone: this never trains. The file keeps every held-out
    /// sequence; what is returned is the block the study reports on
    /// ([`Study::reported_sequences`]).
    pub fn context_gain(
        &self,
        id: ModelId,
        seed: u64,
    ) -> anyhow::Result<Option<Vec<analysis::context_gain::SequenceRow>>> {
        if id.is_word2vec() {
            return Ok(None);
        }
        let (_, training) = self.variant(id, seed);
        if training.objective != Objective::Mlm {
            return Ok(None);
        }
        let path = self.measured_dir(id, seed).join("heldout-by-input.csv.gz");
        if kept::exists(&path)? {
            return Ok(Some(self.reported_sequences(id, kept::read_csv(&path)?)));
        }
        let trained = id == ModelId::Untrained
            || read_curve(&self.run_dir(id, seed))
                .is_some_and(|c| training::finished(&c, &training));
        if !trained {
            return Ok(None);
        }
        let (model, _) = self.transformer(id, seed)?;
        let rows = analysis::context_gain::rows(&training::heldout_loss_by_input(
            &model, &self.seqs, &training,
        ));
        kept::write_csv_gz(&path, &rows)?;
        Ok(Some(self.reported_sequences(id, rows)))
    }

    /// Of a model's held-out sequences (`heldout-by-input.csv.gz`'s rows), those of the block
    /// its losses are reported on: with a dev split the test block, so that the gain at
    /// `[MASK]` is not measured on the text its learning rate and plateau rule were judged on
    /// ([`training::reported_sequences`]); else all of them.
    pub fn reported_sequences(
        &self,
        id: ModelId,
        rows: Vec<analysis::context_gain::SequenceRow>,
    ) -> Vec<analysis::context_gain::SequenceRow> {
        let (_, training) = self.variant(id, 0);
        let block = training::reported_sequences(&self.seqs, &training);
        rows.into_iter()
            .filter(|r| block.contains(&r.sequence))
            .collect()
    }

    /// Every measurement of one model at one seed, computed once and kept in
    /// [`Study::measured_dir`]; a model is trained (or its run resumed) only when they are
    /// missing.
    pub fn scores(&self, id: ModelId, seed: u64) -> anyhow::Result<Vec<TidyRow>> {
        let path = self
            .measured_dir(id, seed)
            .join(format!("scores-{}.csv", self.settings_hash()));
        if self.is_measured(id, seed)? {
            // The kept scores hold the collocation gap of the pairs they were measured for: a
            // corpus edited in place (or another one under `--corpus`) draws other pairs under
            // the same directory name, and its kept gap is then not this corpus's.
            let items = self.items_path(id, seed);
            super::evidence::check_pairs(&items, &kept::read_items(&items)?, &self.pairs)?;
            return kept::read_csv(&path);
        }
        let ledger = super::ledger::path(&self.measured_dir(id, seed));
        super::ledger::timed(&ledger, "scores", || {
            let (rows, items) = if id.is_word2vec() {
                self.score_word2vec(id, seed, &self.run_dir(id, seed))?
            } else {
                self.score_transformer(id, seed)?
            };
            let items_path = self.items_path(id, seed);
            // Which pairs the collocation cosines are of, before the cosines themselves.
            if super::evidence::has_collocation(&items) {
                kept::write_csv(
                    &super::evidence::pairs_path(&items_path),
                    &[super::evidence::PairsFingerprint::of(&self.pairs)],
                )?;
            }
            kept::write_items(&items_path, &items)?;
            kept::write_csv(&path, &rows)?;
            Ok(rows)
        })?
    }

    fn benchmark_names(&self) -> Vec<String> {
        let b = &self.benchmarks;
        b.analogy
            .iter()
            .map(|s| s.name.clone())
            .chain(b.similarity.iter().map(|s| s.name.clone()))
            .collect()
    }

    pub(crate) fn template(&self, id: ModelId, seed: u64, representation: &str) -> TidyRow {
        TidyRow {
            seed: Some(seed),
            backend: (!id.is_word2vec()).then(|| self.kind.name().to_string()),
            ..TidyRow::template("", id.name(), representation)
        }
    }

    /// Analogy, similarity and collocation rows for one table, and its per-item outcomes.
    pub(crate) fn score_table(
        &self,
        table: &WordVectors,
        template: &TidyRow,
    ) -> (Vec<TidyRow>, Vec<ItemRow>) {
        let (mut rows, mut items) =
            evaluate_table_items(table, &self.benchmarks, &self.cfg.eval, template);
        rows.extend(collocation_rows(table, &self.pairs, template));
        // The pairs' cosines of the tables whose collocation gap the report states (every
        // layer's would multiply the kept files for a figure drawn without intervals).
        if matches!(
            template.representation.as_str(),
            "embedding" | "lm_head" | "static"
        ) {
            items.extend(collocation_items(table, &self.pairs, template));
        }
        (rows, items)
    }

    /// A model's decontextualized table at every layer, over the evaluation vocabulary.
    fn decontextualized_tables(&self, model: &Transformer, readout: Readout) -> Vec<WordVectors> {
        let specials = self.corpus.vocab.specials();
        decontextualized(model, &self.words, specials, readout, &self.device, 256)
    }

    /// A model's aggregated tables at every layer (`[pooling]`; the occurrences sampled with
    /// the model's seed), over the evaluation vocabulary.
    fn aggregated_tables(&self, model: &Transformer, readout: Readout, seed: u64) -> Aggregated {
        let p = &self.cfg.pooling;
        let train = &self.seqs.train;
        aggregated(
            model,
            &self.words,
            train,
            self.seqs.seq_len,
            p.max_occurrences,
            p.batch,
            readout,
            seed,
            &self.device,
            |_, _| {},
        )
    }

    /// One representation of one model as a table of word vectors, exactly what the study
    /// scores under that name (`representation` column), over the evaluation vocabulary (the
    /// most frequent `restrict_vocab` words): `static` for word2vec; `embedding`,
    /// `lm_head` (an untied head's output matrix), `decontextualized` and `aggregated` (at
    /// `layer`, 0 the embedding layer's output) for a transformer. Trains the model when its
    /// weights are not in the run cache, as [`Study::scores`] does. Errors name what exists.
    pub fn representation(
        &self,
        id: ModelId,
        seed: u64,
        representation: &str,
        layer: Option<usize>,
    ) -> anyhow::Result<WordVectors> {
        let layered = matches!(representation, "decontextualized" | "aggregated");
        if layered != layer.is_some() {
            anyhow::bail!(
                "--layer goes with decontextualized and aggregated, and only with them (got --representation {representation}{})",
                layer.map_or(String::new(), |l| format!(" --layer {l}"))
            );
        }
        if id.is_word2vec() {
            if representation != "static" {
                anyhow::bail!(
                    "{} has one representation, static (got {representation:?})",
                    id.name()
                );
            }
            let w = self.word2vec_config(id, seed);
            let what = format!("{} seed {seed}", id.name());
            let vectors = self.word2vec_vectors(&self.run_dir(id, seed), &w, &what, true)?;
            // Scored on the most frequent `restrict_vocab` words, like every table here.
            return Ok(vectors.truncated(self.cfg.eval.restrict_vocab));
        }
        let known = "embedding, lm_head, decontextualized, aggregated";
        let (model, _) = self.trained(id, seed, false)?;
        let (_, training) = self.variant(id, seed);
        let readout = Readout::of(training.objective, false);
        let pick = |tables: Vec<WordVectors>, l: usize| {
            let n = tables.len();
            tables.into_iter().nth(l).ok_or_else(|| {
                anyhow::anyhow!("--layer {l}: {} has layers 0 to {}", id.name(), n - 1)
            })
        };
        match (representation, layer) {
            ("embedding", None) => Ok(embedding_table(&model, &self.words)),
            ("lm_head", None) => lm_head_table(&model, &self.words).ok_or_else(|| {
                anyhow::anyhow!(
                    "{} has a tied head: its output matrix is its embedding (--representation embedding)",
                    id.name()
                )
            }),
            ("decontextualized", Some(l)) => pick(self.decontextualized_tables(&model, readout), l),
            ("aggregated", Some(l)) => pick(self.aggregated_tables(&model, readout, seed).tables, l),
            _ => anyhow::bail!(
                "--representation {representation:?}: a transformer's representations are {known}"
            ),
        }
    }

    fn score_word2vec(
        &self,
        id: ModelId,
        seed: u64,
        dir: &std::path::Path,
    ) -> anyhow::Result<(Vec<TidyRow>, Vec<ItemRow>)> {
        let w = self.word2vec_config(id, seed);
        let vectors =
            self.word2vec_vectors(dir, &w, &format!("{} seed {seed}", id.name()), true)?;
        Ok(self.score_table(&vectors, &self.template(id, seed, "static")))
    }

    /// The score each attention form gives two words' input embeddings,
    /// `(e_i M e_j + e_j M e_i)/2` ([`analysis::bilinear::similarity_pair_forms`]), on every
    /// similarity benchmark's pairs, as Spearman's rho with the human judgments
    /// (`spearman_human`) and with the embeddings' cosine (`spearman_cosine`): benchmark
    /// `pairs:<set>:head-<h>` (or `:all-heads`, the layer's whole form) at each layer, for the
    /// trained forms (`attention-trained`) and for the same seed's initial forms W0
    /// (`attention-initialisation`), both on the trained embedding's rows, so that the
    /// reference changes the form and nothing else; and `pairs:<set>:dot` (M = I) on the
    /// `embedding` representation. Read on the raw rows, as the pretrained experiment reads them.
    /// Per-pair scores are kept as items (kind `cosine`, benchmark the set's name) for the dot
    /// product (representation `dot`) and each layer's whole form, trained (`form-trained`)
    /// and W0 (`form-initial`), so that their correlations with people get intervals over
    /// pairs and seeds together, as every similarity score does.
    fn pair_form_rows(
        &self,
        model: &Transformer,
        initial: &Transformer,
        embedding: &WordVectors,
        id: ModelId,
        seed: u64,
        t: &dyn Fn(&str, Option<usize>) -> TidyRow,
    ) -> (Vec<TidyRow>, Vec<ItemRow>) {
        let vocab = analysis::EvalVocab::new(
            embedding,
            self.cfg.eval.restrict_vocab,
            self.cfg.eval.case_insensitive,
        );
        let item =
            |representation: &str, layer: Option<usize>, set: &str, values: &[Option<f64>]| {
                ItemRow {
                    model: id.name().to_string(),
                    representation: representation.into(),
                    layer,
                    benchmark: set.into(),
                    kind: "cosine".into(),
                    seed: Some(seed),
                    values: output::encode_cosines(values),
                }
            };
        let (mut rows, mut items) = (Vec::new(), Vec::new());
        for set in &self.benchmarks.similarity {
            for (state, m) in [
                ("attention-trained", model),
                ("attention-initialisation", initial),
            ] {
                let layers = analysis::geometry::qkv_per_layer(m);
                let Some(p) =
                    analysis::bilinear::similarity_pair_forms(embedding, &vocab, set, &layers)
                else {
                    continue;
                };
                // Pairs the benchmark has and the table does not.
                let oov = set.pairs.len() - p.pairs;
                let with_oov = |r: TidyRow| TidyRow { oov, ..r };
                let rep = if state == "attention-trained" {
                    let bench = format!("pairs:{}:dot", set.name);
                    rows.extend(
                        t("embedding", None)
                            .measures(
                                &bench,
                                p.pairs,
                                &[
                                    ("spearman_human", p.dot_human),
                                    ("spearman_cosine", p.dot_cosine),
                                ],
                            )
                            .map(with_oov),
                    );
                    items.push(item("dot", None, &set.name, &p.dot_scores));
                    "form-trained"
                } else {
                    "form-initial"
                };
                for (l, values) in p.layer_scores.iter().enumerate() {
                    items.push(item(rep, Some(l + 1), &set.name, values));
                }
                for (layer, head, human, cosine) in p.forms {
                    let bench = match head {
                        Some(h) => format!("pairs:{}:head-{h}", set.name),
                        None => format!("pairs:{}:all-heads", set.name),
                    };
                    rows.extend(
                        t(state, Some(layer))
                            .measures(
                                &bench,
                                p.pairs,
                                &[("spearman_human", human), ("spearman_cosine", cosine)],
                            )
                            .map(with_oov),
                    );
                }
            }
        }
        (rows, items)
    }

    fn score_transformer(
        &self,
        id: ModelId,
        seed: u64,
    ) -> anyhow::Result<(Vec<TidyRow>, Vec<ItemRow>)> {
        let (model, curve) = self.transformer(id, seed)?;
        println!("measuring {} seed {seed}", id.name());
        let split = self.reported_split();
        let heldout = curve
            .iter()
            .rev()
            .find(|p| p.split == split)
            .map_or(f64::NAN, |p| p.loss);
        Ok(self.measure_transformer(&model, id, seed, heldout, Measures::ALL))
    }

    /// What [`Study::scores`] measures on a transformer (the module docs list the rows), on
    /// `model` — the variant's final model or a snapshot of its run — whose held-out loss is
    /// `heldout`. `what` leaves out the costly parts.
    pub fn measure_transformer(
        &self,
        model: &Transformer,
        id: ModelId,
        seed: u64,
        heldout: f64,
        what: Measures,
    ) -> (Vec<TidyRow>, Vec<ItemRow>) {
        let mut rows = Vec::new();
        let mut items = Vec::new();
        let mut laps = Laps::start();
        let mut scored = |(r, i): (Vec<TidyRow>, Vec<ItemRow>)| {
            rows.extend(r);
            items.extend(i);
        };
        let t = |representation: &str, layer: Option<usize>| TidyRow {
            layer,
            ..self.template(id, seed, representation)
        };
        let embedding = embedding_table(model, &self.words);
        scored(self.score_table(&embedding, &t("embedding", None)));
        laps.lap("embedding scored");
        // The input embedding's scale (each coordinate's spread over the words, plain and by
        // frequency): the frozen-input ablation draws its random table at a trained one's.
        let (std, by_frequency) = embedding_scale(model, &self.word_counts());
        let scale = t("embedding", None)
            .measures(
                "embedding-scale",
                self.seqs.n_words as usize,
                &[("std", std), ("std_by_frequency", by_frequency)],
            )
            .collect();
        scored((scale, Vec::new()));
        laps.lap("embedding scale");
        if let Some(head) = lm_head_table(model, &self.words) {
            scored(self.score_table(&head, &t("lm_head", None)));
            laps.lap("lm head scored");
        }
        // Read each model as it was trained (causal for a causal LM); the raw residual stream.
        let (model_cfg, training) = self.variant(id, seed);
        let readout = Readout::of(training.objective, false);
        let dec = self.decontextualized_tables(model, readout);
        laps.lap("decontextualized computed");
        for (l, table) in dec.iter().enumerate() {
            scored(self.score_table(table, &t("decontextualized", Some(l))));
        }
        laps.lap("decontextualized scored");
        if what.pooled {
            let agg = self.aggregated_tables(model, readout, seed);
            laps.lap("pooled computed");
            for (l, table) in agg.tables.iter().enumerate() {
                scored(self.score_table(table, &t("aggregated", Some(l))));
            }
            laps.lap("pooled scored");
            let seen = agg.occurrences.iter().filter(|&&c| c > 0).count();
            rows.extend(t("aggregated", None).measures(
                "pooling",
                self.words.len(),
                &[
                    ("max_occurrences", agg.max_occurrences as f64),
                    ("words_at_max", agg.words_at_max() as f64),
                    ("words_below_5", agg.words_below(5) as f64),
                    ("words_seen", seen as f64),
                ],
            ));
        }

        let c = &self.cfg.contextuality;
        let top = self.words.len().min(c.top) as u32;
        let track: Vec<u32> = (0..top)
            .step_by((top as usize / c.words.max(1)).max(1))
            .collect();
        // Both readouts: the raw residual stream, and each layer through the final LayerNorm
        // (how Ethayarajh read GPT-2's top layer, and what the LM head sees at the last), from
        // one forward pass; first on the training windows, then on real sentences (WikiText-2's,
        // say), padded: what Ethayarajh measured on sentences, which the training windows of an
        // unpunctuated corpus are not.
        let pad = self.corpus.vocab.specials().pad;
        let mut inputs = vec![(
            ["contextuality", "contextuality-norm"],
            &self.seqs.train[..],
            c.sequences.min(self.seqs.n_train()),
            None,
        )];
        if let Some(seqs) = &self.sentences {
            let len = self.seqs.seq_len;
            inputs.push((
                ["contextuality-sentences", "contextuality-sentences-norm"],
                &seqs[..],
                seqs.len() / len,
                Some(pad),
            ));
        }
        for (benchmarks, seqs, count, pad) in inputs {
            let reader = BothReadouts {
                inner: WholeWord {
                    pad,
                    ..WholeWord::new(model, self.corpus.vocab.len() as u32, readout, &self.device)
                },
            };
            let ctx = contextuality(
                &reader,
                seqs,
                self.seqs.seq_len,
                count,
                &track,
                c.per_word,
                c.pairs,
                seed,
            );
            for (benchmark, readout) in benchmarks.into_iter().zip(split_readouts(ctx)) {
                rows.extend(contextuality_rows(&readout, benchmark, &t));
            }
            laps.lap(&format!("{} (raw and norm)", benchmarks[0]));
        }

        // W_Q/W_K/W_V geometry, trained and at initialisation (same seed, same draw).
        // Cannot fail here: the run was trained from this config, which training checks.
        let initial = training::initial_model(&model_cfg, &training, &self.device)
            .expect("a trained run's config gives its initial model");
        // What training changed (W - W0) says more than the trained matrices, which at these
        // budgets are mostly their random initialisation; every CKA has its permutation null.
        let geometries = [
            ("attention-trained", attention_geometry(model)),
            ("attention-initialisation", attention_geometry(&initial)),
            (
                "attention-updates",
                attention_update_geometry(model, &initial),
            ),
        ];
        laps.lap("weight geometry");
        for (state, heads) in geometries {
            for g in heads {
                rows.extend(t(state, Some(g.layer)).measures(
                    &format!("head-{}", g.head),
                    1,
                    &[
                        ("cos_q_k", g.cos_q_k),
                        ("cos_q_v", g.cos_q_v),
                        ("cos_k_v", g.cos_k_v),
                        ("cka_q_k", g.cka_q_k),
                        ("cka_q_v", g.cka_q_v),
                        ("cka_k_v", g.cka_k_v),
                        ("cka_q_k_null", g.cka_q_k_null),
                        ("cka_q_v_null", g.cka_q_v_null),
                        ("cka_k_v_null", g.cka_k_v_null),
                        ("qk_symmetric_share", g.qk_symmetric_share),
                    ],
                ));
            }
        }

        // Each head as the bilinear form W_Q W_K^T it applies (analysis::bilinear): trained and
        // at initialisation, with Q of the head against K of the layer's other heads beside.
        for (state, m) in [
            ("attention-trained", model),
            ("attention-initialisation", &initial),
        ] {
            for (l, w) in analysis::geometry::qkv_per_layer(m).iter().enumerate() {
                let forms = analysis::bilinear::layer_forms(w);
                let cross = analysis::bilinear::cross_head_null(w);
                let scores =
                    |s: &analysis::bilinear::FormScores,
                     x: Option<&analysis::bilinear::FormScores>| {
                        let mut v = vec![
                            ("qk_symmetry", s.symmetry),
                            ("qk_directionality", s.directionality),
                            ("qk_identity_alignment", s.identity_alignment),
                        ];
                        if let Some(x) = x {
                            v.extend([
                                ("qk_symmetry_cross_head", x.symmetry),
                                ("qk_directionality_cross_head", x.directionality),
                                ("qk_identity_alignment_cross_head", x.identity_alignment),
                            ]);
                        }
                        v
                    };
                for (h, f) in forms.heads.iter().enumerate() {
                    rows.extend(t(state, Some(l + 1)).measures(
                        &format!("head-{h}"),
                        1,
                        &scores(f, Some(&cross[h])),
                    ));
                }
                rows.extend(t(state, Some(l + 1)).measures(
                    "all-heads",
                    1,
                    &scores(&forms.layer, None),
                ));
            }
        }

        laps.lap("bilinear forms");
        if what.pairs {
            let (r, i) = self.pair_form_rows(model, &initial, &embedding, id, seed, &t);
            rows.extend(r);
            items.extend(i);
            laps.lap("pair scores");
        }
        // The queries, keys and values the attention computes from real tokens: CKA over
        // tokens, each beside its permutation null.
        let acts = activation_geometry(
            model,
            &self.seqs.train,
            self.seqs.seq_len,
            c.sequences.min(self.seqs.n_train()),
            self.corpus.vocab.len() as u32,
            ACTIVATION_TOKENS,
            seed,
            readout,
            &self.device,
        );
        for a in acts {
            rows.extend(t("attention-activations", Some(a.layer)).measures(
                "all-heads",
                a.tokens,
                &[
                    ("cka_q_k", a.cka_q_k),
                    ("cka_q_v", a.cka_q_v),
                    ("cka_k_v", a.cka_k_v),
                    ("cka_q_k_null", a.cka_q_k_null),
                    ("cka_q_v_null", a.cka_q_v_null),
                    ("cka_k_v_null", a.cka_k_v_null),
                ],
            ));
        }

        laps.lap("activation geometry");
        if what.projected {
            rows.extend(self.score_projected_embeddings(model, &initial, &embedding, id, seed));
            laps.lap("projected embeddings scored");
        }
        println!("measured {} seed {seed}: {}", id.name(), laps);
        rows.extend(t("training", None).measures(
            "training",
            training.steps,
            &[
                ("heldout_loss", heldout),
                ("unigram_entropy", data::unigram_entropy(&self.corpus)),
            ],
        ));
        (rows, items)
    }
}

fn objective_index(objective: Objective) -> usize {
    match objective {
        Objective::Mlm => 0,
        Objective::Clm => 1,
    }
}

/// The corpus's collocated word pairs and their controls under `[collocation]`, drawn with one
/// fixed seed so that every model (ours and pretrained ones) is scored on the same pairs.
pub(crate) fn collocations(
    corpus: &Corpus,
    c: &super::settings::CollocationConfig,
) -> CollocationPairs {
    collocation_pairs(
        &corpus.encoded.ids,
        corpus.vocab.words(),
        c.top,
        c.window,
        c.min_count,
        c.pairs,
        17,
    )
}

/// A table's collocated and frequency-matched pairs' cosines as item rows of `template`
/// (benchmark `collocation`, kinds `collocated` and `matched`), written at every scores
/// version by this code (version 5 is the first whose every model has them); readers fall
/// back to an interval over seeds where they are missing.
pub(crate) fn collocation_items(
    table: &WordVectors,
    pairs: &CollocationPairs,
    template: &TidyRow,
) -> Vec<ItemRow> {
    let (collocated, matched) = pair_cosine_items(table, pairs);
    [("collocated", collocated), ("matched", matched)]
        .into_iter()
        .map(|(kind, cosines)| ItemRow {
            model: template.model.clone(),
            representation: template.representation.clone(),
            layer: template.layer,
            benchmark: "collocation".into(),
            kind: kind.into(),
            seed: template.seed,
            values: output::encode_cosines(&cosines),
        })
        .collect()
}

/// A table's collocation measures ([`collocation_score`]) as tidy rows of `template`.
pub(crate) fn collocation_rows(
    table: &WordVectors,
    pairs: &CollocationPairs,
    template: &TidyRow,
) -> Vec<TidyRow> {
    let c = collocation_score(table, pairs);
    let collocation = TidyRow {
        oov: pairs.pairs.len() - c.pairs,
        ..template.clone()
    };
    collocation
        .measures(
            "collocation",
            c.pairs,
            &[
                ("collocated_cosine", c.collocated),
                ("shuffled_cosine", c.shuffled),
                ("gap", c.gap),
                ("matched_cosine", c.matched),
                ("shared_context_cosine", c.shared_context),
                ("shared_matched_cosine", c.shared_matched),
                // Collocated and shared-context pairs against their own matched controls, as
                // z-scores against permutation nulls.
                ("z_collocated", c.z_collocated),
                ("z_shared_context", c.z_shared_context),
                ("excluded_pairs", pairs.excluded as f64),
            ],
        )
        .collect()
}

/// `[contextuality] sentences` as sequences the models read: the first `max` sentences of at
/// least 3 words, each `[CLS] words` (words cut to `seq_len - 1`; no `[SEP]`, which training
/// only ever puts at the last position) padded with `[PAD]` to `seq_len`, row-major. An error
/// names the file.
pub fn sentence_sequences(
    corpus: &Corpus,
    s: &super::settings::Sentences,
    seq_len: usize,
    max: usize,
) -> anyhow::Result<Vec<u32>> {
    let path = crate::paths::resolve(&s.path);
    let text = corpus::read::read_text(&path)
        .with_context(|| format!("[contextuality] sentences: {}", path.display()))?;
    let sentences = corpus.encode_sentences(
        &text,
        corpus::Preset::Wikitext,
        s.lowercase,
        s.drop_punctuation,
        3,
        seq_len.saturating_sub(1),
    );
    if sentences.is_empty() {
        anyhow::bail!(
            "[contextuality] sentences: {} holds no sentence of 3 words or more",
            path.display()
        );
    }
    let sp = corpus.vocab.specials();
    let mut out = Vec::new();
    for words in sentences.iter().take(max) {
        // No [SEP]: in training it always sits at the last position, and a [SEP] right after
        // a short sentence would be a token the models never saw there.
        out.push(sp.cls);
        out.extend_from_slice(words);
        out.resize(out.len().next_multiple_of(seq_len), sp.pad);
    }
    Ok(out)
}

/// [`BothReadouts`]' contextuality, `2 (N + 1)` layers, as its two readouts of layers `0..=N`
/// each: the raw residual stream, then the same layers through the final LayerNorm.
fn split_readouts(
    mut both: Vec<analysis::geometry::LayerContextuality>,
) -> [Vec<analysis::geometry::LayerContextuality>; 2] {
    assert!(
        both.len().is_multiple_of(2),
        "two readouts of the same layers"
    );
    let normed = both.split_off(both.len() / 2);
    let n = both.len();
    assert!(
        (both.iter().enumerate()).all(|(i, l)| l.layer == i),
        "the first readout's layers run from 0"
    );
    let normed = (normed.into_iter().enumerate())
        .map(|(i, l)| {
            assert_eq!(
                l.layer,
                n + i,
                "the second readout's layers follow the first's"
            );
            analysis::geometry::LayerContextuality { layer: i, ..l }
        })
        .collect();
    [both, normed]
}

/// A model's contextuality per layer as tidy rows of `benchmark`.
pub(crate) fn contextuality_rows(
    ctx: &[analysis::geometry::LayerContextuality],
    benchmark: &str,
    t: &dyn Fn(&str, Option<usize>) -> TidyRow,
) -> Vec<TidyRow> {
    let mut rows = Vec::new();
    for layer in ctx {
        rows.extend(t("contextual", Some(layer.layer)).measures(
            benchmark,
            layer.words,
            &[
                ("self_similarity", layer.self_similarity),
                ("intra_sentence", layer.intra_sentence),
                ("intra_sentence_null", layer.intra_sentence_null),
                // intra - null; not "intra_sentence_adjusted", which in rows before scores
                // version 2 meant intra - anisotropy.
                ("intra_sentence_excess", layer.intra_sentence_excess),
                ("anisotropy", layer.anisotropy),
                // Centred PCA over words with 5+ contexts; version-1 rows named
                // "max_explainable_variance" were uncentred over words with 2+.
                ("mev_centred", layer.max_explainable_variance),
                ("mev_centred_null", layer.max_explainable_variance_null),
                ("mev_centred_excess", layer.max_explainable_variance_excess),
                ("self_similarity_adjusted", layer.self_similarity_adjusted),
            ],
        ));
    }
    rows
}

/// Wall-clock seconds of each part of a measurement, printed with it: where measuring a
/// model spends its time (issue 43 asks that it be a small part of training it).
struct Laps {
    last: std::time::Instant,
    parts: Vec<(String, f64)>,
}

impl Laps {
    fn start() -> Laps {
        Laps {
            last: std::time::Instant::now(),
            parts: Vec::new(),
        }
    }

    /// Ends the part running since the last lap, naming it.
    fn lap(&mut self, name: &str) {
        let now = std::time::Instant::now();
        self.parts
            .push((name.to_string(), (now - self.last).as_secs_f64()));
        self.last = now;
    }
}

impl std::fmt::Display for Laps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: f64 = self.parts.iter().map(|p| p.1).sum();
        write!(f, "{total:.1} s (")?;
        for (i, (name, s)) in self.parts.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name} {s:.1}")?;
        }
        write!(f, ")")
    }
}

/// Which of a transformer's measurements [`Study::measure_transformer`] takes. The rest
/// (embedding, decontextualized layers, contextuality, W_Q/W_K/W_V geometry, held-out loss)
/// is always measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measures {
    /// Aggregated vectors pooled over the whole training split, per layer: most of a
    /// measurement's time (minutes a model on 2 cores).
    pub pooled: bool,
    /// The embedding through each layer-1 head's projections (12 more tables).
    pub projected: bool,
    /// Each head's score of two words' embeddings against people and cosine (`pairs:` rows and
    /// their items): a final model's, not a snapshot's, whose committed files stay small.
    pub pairs: bool,
}

impl Measures {
    pub const ALL: Measures = Measures {
        pooled: true,
        projected: true,
        pairs: true,
    };
}

/// Median training tokens/s over the kept curves of runs labelled `label` (any label when none
/// is).
fn median_speed(kept: &[(String, Vec<f64>)], label: &str) -> Option<f64> {
    let prefix = format!("{label}-seed");
    let (mut by_label, mut any) = (Vec::new(), Vec::new());
    for (name, speeds) in kept {
        if name.starts_with(&prefix) {
            by_label.extend_from_slice(speeds);
        } else {
            any.extend_from_slice(speeds);
        }
    }
    let mut v = if by_label.is_empty() { any } else { by_label };
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Whether a run trained again retraced its kept loss curve: every (step, split) loss both
/// curves have compared exactly (the engine is deterministic on one machine; another CPU or
/// backend may round differently, and then the largest difference is named).
pub fn retraced(kept: &[CurvePoint], new: &[CurvePoint]) -> String {
    let mut compared = 0;
    let mut worst: Option<(f64, &CurvePoint, f64)> = None;
    for p in new {
        let Some(k) = kept.iter().find(|k| k.step == p.step && k.split == p.split) else {
            continue;
        };
        compared += 1;
        let d = (p.loss - k.loss).abs();
        // A NaN on either side counts as the largest difference.
        let d = if d.is_nan() { f64::INFINITY } else { d };
        if d > 0.0 && worst.as_ref().map_or(true, |w| d > w.0) {
            worst = Some((d, p, k.loss));
        }
    }
    match worst {
        _ if compared == 0 => "no point in common with the kept curve".into(),
        None => format!("it retraced the kept curve ({compared} losses equal to the last digit)"),
        Some((d, p, k)) if d <= RETRACE_TOLERANCE * k.abs().max(1.0) => format!(
            "it retraced the kept curve within {RETRACE_TOLERANCE:e} of each loss: largest difference {d:.3e} at step {} ({}) ({compared} losses compared)",
            p.step, p.split
        ),
        Some((d, p, k)) => format!(
            "it did NOT retrace the kept curve: largest difference {d:.3e} at step {} ({}): kept {k}, now {} ({compared} losses compared)",
            p.step, p.split, p.loss
        ),
    }
}

/// How far apart two runs' losses may be and the runs still count as one: the same run on
/// another code path (another CPU's SIMD, another backend) moves a loss by rounding only;
/// another seed or data order moves it by orders of magnitude more.
pub const RETRACE_TOLERANCE: f64 = 1e-5;

/// Whether `new` retraced `kept`: some points in common, every common loss within
/// [`RETRACE_TOLERANCE`] of the kept one (relative; NaN never).
pub fn retraces(kept: &[CurvePoint], new: &[CurvePoint]) -> bool {
    let common: Vec<(f64, f64)> = new
        .iter()
        .filter_map(|p| {
            let k = kept
                .iter()
                .find(|k| k.step == p.step && k.split == p.split)?;
            Some((k.loss, p.loss))
        })
        .collect();
    !common.is_empty()
        && common
            .iter()
            .all(|(k, n)| (k - n).abs() <= RETRACE_TOLERANCE * k.abs().max(1.0))
}

/// The loss curve a complete or partial run left in its checkpoint, if any.
fn read_curve(dir: &std::path::Path) -> Option<Vec<CurvePoint>> {
    let path = dir.join("checkpoint").join("curve.csv");
    path.exists()
        .then(|| output::read_csv(&path).ok())
        .flatten()
}

// The study followed through training (`--exp dynamics`): each snapshot of a run measured.

/// The snapshot outcomes file beside a `dynamics-<h>.csv.gz` file: `dynamics-items-<h>.csv.gz`.
fn items_beside(rows: &std::path::Path) -> std::path::PathBuf {
    let name = rows.file_name().expect("a file").to_string_lossy();
    rows.with_file_name(name.replacen("dynamics-", "dynamics-items-", 1))
}

/// One snapshot's per-item outcomes of one table: an [`ItemRow`] with the snapshot's step and
/// tokens seen (word2vec: its budget's tokens, step 0).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotItemRow {
    pub step: usize,
    pub tokens_seen: u64,
    pub model: String,
    pub representation: String,
    pub layer: Option<usize>,
    pub benchmark: String,
    pub kind: String,
    pub seed: Option<u64>,
    pub values: String,
}

impl SnapshotItemRow {
    fn of(i: ItemRow, step: usize, tokens_seen: u64) -> SnapshotItemRow {
        SnapshotItemRow {
            step,
            tokens_seen,
            model: i.model,
            representation: i.representation,
            layer: i.layer,
            benchmark: i.benchmark,
            kind: i.kind,
            seed: i.seed,
            values: i.values,
        }
    }
}

/// One measurement of one model at one point of its training.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct DynamicsRow {
    pub model: String,
    pub seed: Option<u64>,
    /// Optimiser steps (transformers; 0 for word2vec and the untrained model).
    pub step: usize,
    /// Corpus tokens read: steps x batch x words per sequence, or word2vec's budget.
    pub tokens_seen: u64,
    /// `tokens_seen` over the tokens of one transformer epoch.
    pub epochs: f64,
    pub representation: String,
    pub layer: Option<usize>,
    pub benchmark: String,
    pub metric: String,
    pub value: f64,
    pub n: usize,
    pub oov: usize,
}

impl DynamicsRow {
    fn of(r: TidyRow, step: usize, tokens_seen: u64, epoch_tokens: u64) -> DynamicsRow {
        DynamicsRow {
            model: r.model,
            seed: r.seed,
            step,
            tokens_seen,
            epochs: tokens_seen as f64 / epoch_tokens as f64,
            representation: r.representation,
            layer: r.layer,
            benchmark: r.benchmark,
            metric: r.metric,
            value: r.value,
            n: r.n,
            oov: r.oov,
        }
    }
}

/// The rows a snapshot keeps (the committed files stay small): analogy totals, similarity
/// correlations with their chance bands, collocation, contextuality, what training changed
/// in W_Q/W_K/W_V and the activations' CKA, and the held-out loss.
fn kept(r: &TidyRow) -> bool {
    let b = r.benchmark.as_str();
    let m = r.metric.as_str();
    match r.representation.as_str() {
        "contextual" | "attention-updates" | "attention-activations" => true,
        "training" => m == "heldout_loss",
        _ if b.starts_with("questions-words:") => {
            matches!(
                b,
                "questions-words:total" | "questions-words:semantic" | "questions-words:syntactic"
            )
        }
        _ if b == "collocation" => m.starts_with("z_") || m.ends_with("_cosine"),
        // Attention forms' pair scores are a final model's, read from its scores file.
        _ if b.starts_with("pairs:") => false,
        _ => m.starts_with("spearman"),
    }
}

impl Study {
    /// The corpus's collocated pairs and their controls that every model is scored on.
    pub fn collocation_pairs(&self) -> &CollocationPairs {
        &self.pairs
    }

    /// What the study's models are, for the report beside its answers: the reference masked
    /// LM's size (parameters counted from its initialisation), its training budget and corpus,
    /// against the models the transformer measures come from; `config` names the file it
    /// describes.
    pub fn describe(&self, config: &str) -> String {
        use burn::module::Module;
        let (model, training) = self.variant(ModelId::Mlm, self.cfg.seeds[0]);
        let head = if model.tie_lm_head {
            "tied head"
        } else {
            "untied head"
        };
        let params = model.init(&self.device).num_params();
        // The same model with the other head: an untied head is a second vocabulary-sized
        // matrix, so the untied models are much larger than the tied one.
        let other = TransformerConfig {
            tie_lm_head: !model.tie_lm_head,
            ..model.clone()
        };
        let other_params = other.init(&self.device).num_params();
        let other_head = if model.tie_lm_head {
            format!("with an untied head, which adds an output matrix, it has {other_params}")
        } else {
            format!("with a tied head it has {other_params}")
        };
        let seen = training.steps as u64 * self.tokens_per_step();
        let corpus = self.corpus.encoded.n_tokens() as u64;
        let train = (self.seqs.n_train() * (self.seqs.seq_len - 2)) as u64;
        let passes = seen as f64 / train as f64;
        // A toy run reads a sliver of the corpus: its share would print as 0.0.
        let passes = if passes >= 0.1 {
            format!("{passes:.1}")
        } else {
            format!("{passes:.4}")
        };
        // word2vec's starting rate is a choice a reader must see beside its scores: the round
        // changed it from word2vec.c's default to its own sweep's choice.
        let w2v = |name: &str, c: &word2vec::Word2VecConfig| {
            let alpha = c.start_alpha();
            // word2vec.c's default for this architecture: the rate an unset `alpha` gives.
            let default = word2vec::Word2VecConfig {
                alpha: None,
                ..c.clone()
            }
            .start_alpha();
            let rate = if alpha == default {
                format!("starting rate {alpha} (word2vec.c's default)")
            } else {
                // Rounded, so that 0.05 over 0.025 in f32 reads 2, not 2.0000001.
                let times = (f64::from(alpha) / f64::from(default) * 1000.0).round() / 1000.0;
                format!("starting rate {alpha} ({times} times word2vec.c's default {default})")
            };
            format!(
                "{name}: {} dimensions, window {}, {} negatives, {} epochs, {rate}, {} thread{}",
                c.dim,
                c.window,
                c.negative,
                c.epochs,
                c.threads,
                if c.threads == 1 { "" } else { "s" }
            )
        };
        let word2vec = format!(
            "word2vec on the same corpus and vocabulary: {}; {}.",
            w2v("skip-gram", &self.cfg.sgns),
            w2v("CBOW", &self.cfg.cbow)
        );
        format!(
            "**The models** ({config}). The study's masked LM ({head}) has {params} parameters: d_model {}, {} layers, {} heads, d_ff {}, a {}-token context and a vocabulary of {} whole words (the other transformers differ from it as their names say; {other_head}). Each trains up to {} steps of {} tokens (the plateau rule can stop one earlier; each model's `curve.csv` says where it stopped), {seen} tokens seen, {passes} passes over the {train}-token training split of the {corpus}-token corpus {}. Ethayarajh, Bommasani et al. and Saponati et al. read BERT-base and GPT-2: 110M and 124M parameters, subword vocabularies, 10^9-10^11 tokens of training. {word2vec} Every answer below is about models of this size and budget; one that still moves along the budget (\"How each answer moves with the budget\") could move further with more, and none is measured at BERT's scale here.\n",
            model.d_model,
            model.n_layers,
            model.n_heads,
            model.d_ff,
            training.seq_len,
            self.corpus.vocab.len(),
            training.steps,
            self.tokens_per_step(),
            self.corpus_config().path.display(),
        )
    }

    /// Corpus tokens in one optimiser step (words only: `[CLS]` and `[SEP]` are not read).
    pub fn tokens_per_step(&self) -> u64 {
        (self.cfg.training.batch_size * (self.cfg.training.seq_len - 2)) as u64
    }

    /// The points a run is measured at: its snapshot steps up to the step it stopped at, and
    /// that step.
    fn measured_steps(&self, last: usize) -> Vec<usize> {
        let mut steps: Vec<usize> = (self.cfg.training.snapshot_steps.iter())
            .copied()
            .filter(|&s| s < last)
            .collect();
        steps.push(last);
        steps
    }

    /// The per-item outcomes of a model's snapshots ([`SnapshotItemRow`]), beside its
    /// [`Study::dynamics_path`] file and named after it.
    pub fn dynamics_items_path(&self, id: ModelId, seed: u64, pooled: bool) -> std::path::PathBuf {
        items_beside(&self.dynamics_path(id, seed, pooled))
    }

    pub fn dynamics_path(&self, id: ModelId, seed: u64, pooled: bool) -> std::path::PathBuf {
        let h = runs::config_hash(&(
            self.settings_hash(),
            pooled,
            &self.cfg.training.snapshot_steps,
            self.cfg.training.steps,
            self.tokens_per_step(),
        ));
        self.measured_dir(id, seed)
            .join(format!("dynamics-{h}.csv.gz"))
    }

    /// Every snapshot of one model's run measured (kept, so only what is missing is trained
    /// or measured). word2vec: one run per snapshot's token budget.
    pub fn dynamics(
        &self,
        id: ModelId,
        seed: u64,
        pooled: bool,
    ) -> anyhow::Result<Vec<DynamicsRow>> {
        let path = self.dynamics_path(id, seed, pooled);
        if kept::exists(&path)? {
            return kept::read_csv(&path);
        }
        self.measure_snapshots(id, seed, pooled, &path)
    }

    /// A followed model's snapshot rows ([`Study::dynamics`]), then its final model measured
    /// in full ([`Study::scores`], pooled vectors and per-item outcomes included) right away,
    /// while the weights are still in the run cache: the findings read those measurements, and
    /// a cache lost between sittings (it is not committed) would otherwise mean training the
    /// run again just to measure it. A masked LM's gain at `[MASK]`
    /// ([`Study::context_gain`]) is taken then too, where the weights are at hand; it came
    /// after the first runs, so a model whose cache is gone goes without it rather than
    /// training again ([`Study::is_followed`] does not ask for it).
    pub fn follow(&self, id: ModelId, seed: u64, pooled: bool) -> anyhow::Result<Vec<DynamicsRow>> {
        let rows = self.dynamics(id, seed, pooled)?;
        self.scores(id, seed)?;
        if let Some(split) = self.context_gain(id, seed)? {
            let g =
                analysis::context_gain::gain_at_mask(&split, analysis::context_gain::RESAMPLE_SEED);
            println!(
                "{} seed {seed}: gain over the unigram at held-out [MASK] targets {:+.3} [{:+.3}, {:+.3}] nats per target",
                id.name(),
                g.estimate,
                g.lo,
                g.hi
            );
        }
        Ok(rows)
    }

    /// Whether [`Study::follow`] has nothing left to do for this model.
    pub fn is_followed(&self, id: ModelId, seed: u64, pooled: bool) -> anyhow::Result<bool> {
        Ok(kept::exists(&self.dynamics_path(id, seed, pooled))? && self.is_measured(id, seed)?)
    }

    /// [`Study::dynamics`]' work: trains (or resumes) the run, measures each snapshot and
    /// writes the rows to `path`. The ledger gets a `train` row for the training (a kept run
    /// only loads) and a `snapshots` row for measuring; word2vec, which trains once per
    /// snapshot's budget, and the untrained model get one `dynamics` row for both.
    fn measure_snapshots(
        &self,
        id: ModelId,
        seed: u64,
        pooled: bool,
        path: &std::path::Path,
    ) -> anyhow::Result<Vec<DynamicsRow>> {
        let epoch_tokens =
            self.seqs.steps_per_epoch(self.cfg.training.batch_size) as u64 * self.tokens_per_step();
        let mut rows = Vec::new();
        let mut items = Vec::new();
        let mut add = |(tidy, outcomes): (Vec<TidyRow>, Vec<ItemRow>), step: usize, tokens: u64| {
            rows.extend(
                tidy.into_iter()
                    .filter(kept)
                    .map(|r| DynamicsRow::of(r, step, tokens, epoch_tokens)),
            );
            // The outcomes behind each snapshot's similarity and analogy scores of the tables
            // the similarity answer reads (the static vectors, the embedding, an untied head),
            // so that an answer's curve carries item-and-seed intervals.
            items.extend(
                outcomes
                    .into_iter()
                    .filter(|i| {
                        matches!(
                            i.representation.as_str(),
                            "static" | "embedding" | "lm_head"
                        ) && i.benchmark != "collocation"
                    })
                    .map(|item| SnapshotItemRow::of(item, step, tokens)),
            );
        };
        let what = Measures {
            pooled,
            projected: false,
            pairs: false,
        };
        let ledger = super::ledger::path(&self.measured_dir(id, seed));
        if id.is_word2vec() {
            super::ledger::timed(&ledger, "dynamics", || -> anyhow::Result<()> {
                let mut budgets: Vec<usize> = self.cfg.training.snapshot_steps.clone();
                budgets.push(self.cfg.training.steps);
                budgets.sort_unstable();
                budgets.dedup();
                for step in budgets {
                    let tokens = step as u64 * self.tokens_per_step();
                    let vectors = self.word2vec_on_budget(id, seed, tokens)?;
                    let template = self.template(id, seed, "static");
                    add(self.score_table(&vectors, &template), 0, tokens);
                }
                Ok(())
            })??;
        } else if id == ModelId::Untrained {
            super::ledger::timed(&ledger, "dynamics", || -> anyhow::Result<()> {
                let (model, curve) = self.transformer(id, seed)?;
                add(
                    self.measure_transformer(&model, id, seed, curve[0].loss, what),
                    0,
                    0,
                );
                Ok(())
            })??;
        } else {
            let (model, curve) =
                super::ledger::timed(&ledger, "train", || self.transformer(id, seed))??;
            let last = curve.iter().map(|p| p.step).max().unwrap_or(0);
            let (model_cfg, training) = self.variant(id, seed);
            let dir = self.run_dir(id, seed);
            super::ledger::timed(&ledger, "snapshots", || -> anyhow::Result<()> {
                for step in self.measured_steps(last) {
                    println!("measuring {} seed {seed} at step {step}", id.name());
                    let snapshot;
                    let at = if step == last {
                        &model
                    } else {
                        snapshot = transformer::checkpoint::load_snapshot(
                            &dir,
                            step,
                            &model_cfg,
                            &self.device,
                        )?;
                        &snapshot
                    };
                    let heldout = self.reported_loss(&transformer::training::heldout_losses(
                        at, &self.seqs, &training,
                    ));
                    let measured = self.measure_transformer(at, id, seed, heldout, what);
                    add(measured, step, step as u64 * self.tokens_per_step());
                }
                Ok(())
            })??;
        }
        // The outcomes first: a kept rows file means its outcomes are kept too.
        kept::write_csv_gz(&items_beside(path), &items)?;
        kept::write_csv_gz(path, &rows)?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_readouts_split_into_two_sets_of_the_same_layers() {
        use analysis::geometry::LayerContextuality;
        let layer = |l: usize| LayerContextuality {
            layer: l,
            self_similarity: 0.0,
            intra_sentence: 0.0,
            intra_sentence_null: 0.0,
            anisotropy: l as f64 / 10.0,
            max_explainable_variance: 0.0,
            max_explainable_variance_null: 0.0,
            self_similarity_adjusted: 0.0,
            intra_sentence_excess: 0.0,
            max_explainable_variance_excess: 0.0,
            words: 0,
            items: Default::default(),
        };
        let [raw, normed] = super::split_readouts((0..6).map(layer).collect());
        let read = |v: &[LayerContextuality]| -> Vec<(usize, f64)> {
            v.iter().map(|l| (l.layer, l.anisotropy)).collect()
        };
        assert_eq!(read(&raw), [(0, 0.0), (1, 0.1), (2, 0.2)]);
        assert_eq!(read(&normed), [(0, 0.3), (1, 0.4), (2, 0.5)]);
    }

    #[test]
    fn sentences_are_padded_rows_of_the_studys_vocabulary_and_a_bad_file_is_named() {
        let cfg = CorpusConfig {
            min_count: 1,
            ..CorpusConfig::default()
        };
        let corpus =
            Corpus::from_text("the cat sat on the mat", std::path::Path::new("mem"), &cfg).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.txt");
        std::fs::write(
            &file,
            " = Head = \n The cat sat . On the mat , the cat sat on the mat .\n Cat .\n",
        )
        .unwrap();
        let s = super::super::settings::Sentences {
            path: file.clone(),
            lowercase: true,
            drop_punctuation: true,
        };
        let rows = sentence_sequences(&corpus, &s, 6, 10).unwrap();
        let sp = corpus.vocab.specials();
        let id = |w: &str| corpus.vocab.id(w).unwrap();
        // "the cat sat" padded; "on the mat the cat sat on the mat" cut to 5 words; "cat" is
        // too short. No [SEP].
        assert_eq!(
            rows,
            [
                vec![sp.cls, id("the"), id("cat"), id("sat"), sp.pad, sp.pad],
                vec![sp.cls, id("on"), id("the"), id("mat"), id("the"), id("cat")],
            ]
            .concat()
        );
        assert_eq!(sentence_sequences(&corpus, &s, 6, 1).unwrap().len(), 6);
        let missing = super::super::settings::Sentences {
            path: dir.path().join("nope.txt"),
            ..s.clone()
        };
        let e = format!(
            "{:#}",
            sentence_sequences(&corpus, &missing, 6, 10).unwrap_err()
        );
        assert!(e.contains("nope.txt"), "{e}");
        std::fs::write(&file, " = Head = \n A .\n").unwrap();
        let e = format!("{:#}", sentence_sequences(&corpus, &s, 6, 10).unwrap_err());
        assert!(e.contains("w.txt") && e.contains("no sentence"), "{e}");
    }

    fn point(step: usize, split: &str, loss: f64) -> CurvePoint {
        CurvePoint {
            step,
            split: split.into(),
            loss,
            perplexity: loss.exp(),
            lr: 1e-3,
            tokens_per_second: 1000.0,
        }
    }

    /// A retrained run is judged on the losses both curves have, to the last digit; speeds
    /// (which differ from run to run) are not compared.
    #[test]
    fn a_retrained_curve_is_compared_loss_by_loss() {
        let kept = vec![
            point(1, "train", 6.9),
            point(2, "train", 6.5),
            point(2, "heldout", 6.7),
        ];
        let mut same = kept.clone();
        same[0].tokens_per_second = 5.0;
        assert_eq!(
            retraced(&kept, &same),
            "it retraced the kept curve (3 losses equal to the last digit)"
        );
        // Within the tolerance (another code path's rounding): the same run.
        let mut close = kept.clone();
        close[1].loss = 6.5 + 1e-12;
        close[2].loss = 6.7 + 2e-6;
        let says = retraced(&kept, &close);
        assert!(
            says.starts_with("it retraced the kept curve within 1e-5 of each loss: largest difference 2.000e-6 at step 2 (heldout)"),
            "{says}"
        );
        let mut off = kept.clone();
        off[1].loss = 6.5 + 1e-12;
        off[2].loss = 6.7 + 2e-3;
        let says = retraced(&kept, &off);
        assert!(
            says.starts_with("it did NOT retrace the kept curve: largest difference 2.000e-3 at step 2 (heldout): kept 6.7, now 6.702"),
            "{says}"
        );
        // A longer new curve is compared where both have points.
        let mut longer = kept.clone();
        longer.push(point(3, "train", 6.0));
        assert!(retraced(&kept, &longer).contains("(3 losses"));
        let mut nan = kept.clone();
        nan[0].loss = f64::NAN;
        assert!(retraced(&kept, &nan).contains("largest difference inf at step 1 (train)"));
        assert_eq!(
            retraced(&kept, &[point(9, "train", 1.0)]),
            "no point in common with the kept curve"
        );
        // What the kept measurements may be taken on: only a run that retraced the curve.
        assert!(retraces(&kept, &same) && retraces(&kept, &longer) && retraces(&kept, &close));
        assert!(!retraces(&kept, &off) && !retraces(&kept, &nan));
        assert!(!retraces(&kept, &[point(9, "train", 1.0)]));
    }
}
