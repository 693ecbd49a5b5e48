//! The run cache. Every trained model lives in `results/runs/<label>-seed<seed>-<hash>/`, where
//! `<hash>` is the first 12 hex digits of SHA-256 over the JSON of everything that decides what
//! is trained: the corpus config (its path as written in the config, not as resolved on this
//! machine), the full model config (vocabulary size included), the training config (seed
//! included) and the backend. A second experiment asking for the same model finds the
//! directory and loads the checkpoint; a changed config hashes elsewhere and trains anew; a run
//! cut short resumes from its last checkpoint. Each directory keeps `config.json` (what was
//! hashed) so a person can see what it holds.
//!
//! Measurements made on a model are cached beside it the same way (`scores-<hash>.csv`, the hash
//! over the measurement settings), so `--exp all` scores each model once.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use sha2::{Digest, Sha256};

use corpus::CorpusConfig;
use transformer::data::Objective;
use transformer::model::{Mixing, NormPlacement, QkvTying};
use transformer::training::TrainingConfig;
use transformer::TransformerConfig;

/// First 12 hex digits of SHA-256 over `value`'s JSON (struct fields in declaration order, so
/// the same config always gives the same text).
pub fn config_hash<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_vec(value).expect("configs serialise to JSON");
    Sha256::digest(&json)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What identifies a trained transformer.
#[derive(Serialize)]
pub struct TransformerKey<'a> {
    pub corpus: &'a CorpusConfig,
    #[serde(serialize_with = "model_key")]
    pub model: &'a TransformerConfig,
    pub training: &'a TrainingConfig,
    pub backend: &'a str,
}

/// The model config as hashed: every field of [`TransformerConfig`] in its order, except that a
/// field added after runs were first cached is left out while it holds its default, so that
/// those runs (and their committed measurements) keep their names. burn's `Config` derive passes
/// no serde attributes through, hence this mirror.
#[derive(Serialize)]
struct ModelKey<'a> {
    vocab_size: usize,
    d_model: usize,
    n_layers: usize,
    n_heads: usize,
    d_ff: usize,
    max_len: usize,
    dropout: f64,
    qkv: QkvTying,
    norm: NormPlacement,
    tie_lm_head: bool,
    freeze_embeddings: bool,
    /// Added with the no-attention control; absent means attention.
    #[serde(skip_serializing_if = "is_attention")]
    mixing: &'a Mixing,
}

fn is_attention(m: &&Mixing) -> bool {
    **m == Mixing::Attention
}

fn model_key<S: serde::Serializer>(m: &&TransformerConfig, s: S) -> Result<S::Ok, S::Error> {
    let TransformerConfig {
        vocab_size,
        d_model,
        n_layers,
        n_heads,
        d_ff,
        max_len,
        dropout,
        qkv,
        norm,
        tie_lm_head,
        freeze_embeddings,
        mixing,
    } = *m;
    ModelKey {
        vocab_size: *vocab_size,
        d_model: *d_model,
        n_layers: *n_layers,
        n_heads: *n_heads,
        d_ff: *d_ff,
        max_len: *max_len,
        dropout: *dropout,
        qkv: *qkv,
        norm: *norm,
        tie_lm_head: *tie_lm_head,
        freeze_embeddings: *freeze_embeddings,
        mixing,
    }
    .serialize(s)
}

/// A readable name for a model: the objective and every switch that is not the default.
pub fn transformer_label(model: &TransformerConfig, training: &TrainingConfig) -> String {
    let mut label = match training.objective {
        Objective::Mlm => "mlm".to_string(),
        Objective::Clm => "clm".to_string(),
    };
    if let Some(p) = training.clm_target_fraction {
        // "clm-targets15": a causal LM trained on 15% of its positions (matched targets).
        label.push_str(&format!("-targets{}", (p * 100.0).round()));
    }
    match model.qkv {
        QkvTying::Untied => {}
        QkvTying::SharedQk => label.push_str("-shared-qk"),
        QkvTying::SharedQkv => label.push_str("-shared-qkv"),
    }
    if model.freeze_embeddings {
        label.push_str("-frozen-embedding");
    }
    if !model.tie_lm_head {
        label.push_str("-untied-head");
    }
    if model.norm == NormPlacement::Post {
        label.push_str("-post-ln");
    }
    if model.mixing == Mixing::Uniform {
        label.push_str("-no-attention");
    }
    label
}

/// A run directory: `<out>/runs/<label>-seed<seed>-<hash of key>`.
pub fn run_dir<T: Serialize>(out: &Path, label: &str, seed: u64, key: &T) -> PathBuf {
    out.join("runs")
        .join(format!("{label}-seed{seed}-{}", config_hash(key)))
}

/// The run directory of a transformer, labelled by [`transformer_label`]; a crossed run
/// (`init_seed`) is `<label>-seed<seed>-init<init_seed>-<hash>`, so its name says both seeds and
/// a plain run's `--resume` does not offer it as the same model.
pub fn transformer_dir(out: &Path, key: &TransformerKey) -> PathBuf {
    let mut label = transformer_label(key.model, key.training);
    let seed = key.training.seed;
    match key.training.init_seed {
        Some(init) => {
            label.push_str(&format!("-seed{seed}-init{init}"));
            out.join("runs")
                .join(format!("{label}-{}", config_hash(key)))
        }
        None => run_dir(out, &label, seed, key),
    }
}

/// Other run directories of the same label and seed (another config hash) that hold a
/// checkpoint: what a user who changed, say, `steps` and asked for `--resume` probably meant.
pub fn other_checkpoints(run_dir: &Path) -> Vec<PathBuf> {
    let (Some(parent), Some(name)) = (run_dir.parent(), run_dir.file_name()) else {
        return Vec::new();
    };
    let name = name.to_string_lossy();
    let Some((prefix, _hash)) = name.rsplit_once('-') else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != run_dir)
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.rsplit_once('-').is_some_and(|(pre, _)| pre == prefix)
            })
        })
        .filter(|p| p.join("checkpoint/state.json").is_file())
        .collect();
    found.sort();
    found
}

/// Writes `config.json` (the hashed key) into a run directory, once.
pub fn record_key<T: Serialize>(dir: &Path, key: &T) -> anyhow::Result<()> {
    let path = dir.join("config.json");
    if path.exists() {
        return Ok(());
    }
    let json = serde_json::to_string_pretty(key).expect("configs serialise to JSON");
    corpus::io::write_atomic(&path, |w| w.write_all(json.as_bytes()))
        .with_context(|| format!("{}: cannot write", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_parts() -> (CorpusConfig, TransformerConfig, TrainingConfig) {
        (
            CorpusConfig::default(),
            TransformerConfig::new(100),
            TrainingConfig::default(),
        )
    }

    #[test]
    fn the_same_config_hashes_the_same_and_any_change_moves_the_run() {
        let (c, m, t) = key_parts();
        let key = |m: &TransformerConfig, t: &TrainingConfig| {
            transformer_dir(
                Path::new("out"),
                &TransformerKey {
                    corpus: &c,
                    model: m,
                    training: t,
                    backend: "flex",
                },
            )
        };
        let base = key(&m, &t);
        assert_eq!(base, key(&m, &t));
        let name = base.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("mlm-seed1-") && name.len() == "mlm-seed1-".len() + 12);
        let seed2 = TrainingConfig {
            seed: 2,
            ..t.clone()
        };
        assert_ne!(base, key(&m, &seed2));
        let steps = TrainingConfig {
            steps: t.steps + 1,
            ..t.clone()
        };
        assert_ne!(base, key(&m, &steps));
        // A key added later and left at its default does not move existing runs: the JSON of
        // the default training config has no `clm_target_fraction`.
        assert!(!serde_json::to_string(&t)
            .unwrap()
            .contains("clm_target_fraction"));
        let matched = TrainingConfig {
            clm_target_fraction: Some(0.15),
            ..t.clone()
        };
        assert_ne!(base, key(&m, &matched));
        let shared = m.clone().with_qkv(QkvTying::SharedQk);
        let dir = key(&shared, &t);
        assert!(dir.to_str().unwrap().contains("mlm-shared-qk-seed1-"));
    }

    #[test]
    fn the_hashed_model_key_is_the_config_less_later_keys_at_their_default() {
        let m = TransformerConfig::new(100);
        let full = serde_json::to_string(&m).unwrap();
        let mut key = Vec::new();
        model_key(&&m, &mut serde_json::Serializer::new(&mut key)).unwrap();
        // The config's JSON ends with the newest key; the hashed one stops before it.
        assert_eq!(
            full,
            format!(
                "{},\"mixing\":\"attention\"}}",
                String::from_utf8(key).unwrap().trim_end_matches('}')
            )
        );
        // A hash that was computed before `mixing` existed: the default transformer on the
        // default corpus and training config, flex.
        let (c, _, t) = key_parts();
        let k = TransformerKey {
            corpus: &c,
            model: &m,
            training: &t,
            backend: "flex",
        };
        let uniform = m.clone().with_mixing(Mixing::Uniform);
        let u = TransformerKey {
            model: &uniform,
            ..k
        };
        assert_ne!(config_hash(&k), config_hash(&u));
        assert!(transformer_dir(Path::new("o"), &u)
            .to_string_lossy()
            .contains("mlm-no-attention-seed1-"));
    }

    #[test]
    fn labels_name_every_non_default_switch() {
        let (_, m, t) = key_parts();
        let m = m
            .with_qkv(QkvTying::SharedQkv)
            .with_freeze_embeddings(true)
            .with_tie_lm_head(false)
            .with_norm(NormPlacement::Post);
        let t = TrainingConfig {
            objective: Objective::Clm,
            ..t
        };
        assert_eq!(
            transformer_label(&m, &t),
            "clm-shared-qkv-frozen-embedding-untied-head-post-ln"
        );
        let matched = TrainingConfig {
            clm_target_fraction: Some(0.15),
            ..t
        };
        assert!(transformer_label(&m, &matched).starts_with("clm-targets15-"));
    }
}
