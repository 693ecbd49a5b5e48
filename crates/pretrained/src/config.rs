//! config.json of a Hugging Face checkpoint: which architecture, and its sizes.
//!
//! Two families are read: BERT-family encoders (`model_type` `bert`: bert-base-uncased, MiniLM,
//! bge-small; post-LayerNorm, bidirectional) and GPT-2 (`gpt2`: pre-LayerNorm, causal). Every
//! key is read as `transformers` reads it, with its defaults (`BertConfig`, `GPT2Config`), and a
//! value this reader would compute differently from `transformers` is refused, naming the key.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::PretrainedError;

/// A BERT-family encoder (`BertModel`).
#[derive(Clone, Debug, PartialEq)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    /// The standard deviation every weight was drawn with (`initializer_range`).
    pub initializer_range: f64,
}

/// GPT-2 (`GPT2Model`).
#[derive(Clone, Debug, PartialEq)]
pub struct Gpt2Config {
    pub vocab_size: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_positions: usize,
    /// The feed-forward width (`n_inner`, 4 `n_embd` when null).
    pub n_inner: usize,
    pub layer_norm_epsilon: f64,
    /// The standard deviation every weight was drawn with (`initializer_range`).
    pub initializer_range: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Architecture {
    Bert(BertConfig),
    Gpt2(Gpt2Config),
}

impl Architecture {
    /// The longest input the model's learned positions cover.
    pub fn max_positions(&self) -> usize {
        match self {
            Architecture::Bert(c) => c.max_position_embeddings,
            Architecture::Gpt2(c) => c.n_positions,
        }
    }

    /// The standard deviation the model's weights were drawn with before training.
    pub fn initializer_range(&self) -> f64 {
        match self {
            Architecture::Bert(c) => c.initializer_range,
            Architecture::Gpt2(c) => c.initializer_range,
        }
    }

    /// Reads `path` (a config.json).
    pub fn read(path: &Path) -> Result<Architecture, PretrainedError> {
        let text = std::fs::read_to_string(path).map_err(|source| PretrainedError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Architecture::parse(&text, path)
    }

    /// Parses config.json's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Architecture, PretrainedError> {
        let err = |message: String| PretrainedError::Config {
            path: path.to_path_buf(),
            message,
        };
        let value: Value = serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
        let obj = value
            .as_object()
            .ok_or_else(|| err("not a JSON object".into()))?;
        let keys = Keys { obj, path };
        let model_type = keys.string("model_type", None)?;
        match model_type.as_str() {
            "bert" => {
                let act = keys.string("hidden_act", Some("gelu"))?;
                if act != "gelu" {
                    return Err(err(format!(
                        "hidden_act {act:?}: only \"gelu\" (the exact, erf form BERT uses) is read"
                    )));
                }
                if keys.boolean("is_decoder", false)? || keys.boolean("add_cross_attention", false)? {
                    return Err(err(
                        "is_decoder / add_cross_attention = true: only BERT's bidirectional encoder is read".into(),
                    ));
                }
                let pos = keys.string("position_embedding_type", Some("absolute"))?;
                if pos != "absolute" {
                    return Err(err(format!(
                        "position_embedding_type {pos:?}: only \"absolute\" (learned positions) is read"
                    )));
                }
                let cfg = BertConfig {
                    vocab_size: keys.count("vocab_size", None)?,
                    hidden_size: keys.count("hidden_size", None)?,
                    num_hidden_layers: keys.count("num_hidden_layers", None)?,
                    num_attention_heads: keys.count("num_attention_heads", None)?,
                    intermediate_size: keys.count("intermediate_size", None)?,
                    max_position_embeddings: keys.count("max_position_embeddings", Some(512))?,
                    type_vocab_size: keys.count("type_vocab_size", Some(2))?,
                    layer_norm_eps: keys.float("layer_norm_eps", 1e-12)?,
                    initializer_range: keys.float("initializer_range", 0.02)?,
                };
                divides(cfg.num_attention_heads, cfg.hidden_size, "num_attention_heads", "hidden_size")
                    .map_err(err)?;
                Ok(Architecture::Bert(cfg))
            }
            "gpt2" => {
                let act = keys.string("activation_function", Some("gelu_new"))?;
                if act != "gelu_new" {
                    return Err(err(format!(
                        "activation_function {act:?}: only \"gelu_new\" (GPT-2's tanh GELU) is read"
                    )));
                }
                for (key, default) in [
                    ("scale_attn_weights", true),
                    ("scale_attn_by_inverse_layer_idx", false),
                    ("reorder_and_upcast_attn", false),
                    ("add_cross_attention", false),
                ] {
                    if keys.boolean(key, default)? != default {
                        return Err(err(format!(
                            "{key} = {}: only GPT-2's own attention ({key} = {default}) is read",
                            !default
                        )));
                    }
                }
                let n_embd = keys.count("n_embd", None)?;
                let n_inner = match obj.get("n_inner") {
                    None | Some(Value::Null) => 4 * n_embd,
                    Some(_) => keys.count("n_inner", None)?,
                };
                let cfg = Gpt2Config {
                    vocab_size: keys.count("vocab_size", None)?,
                    n_embd,
                    n_layer: keys.count("n_layer", None)?,
                    n_head: keys.count("n_head", None)?,
                    n_positions: keys.count("n_positions", Some(1024))?,
                    n_inner,
                    layer_norm_epsilon: keys.float("layer_norm_epsilon", 1e-5)?,
                    initializer_range: keys.float("initializer_range", 0.02)?,
                };
                divides(cfg.n_head, cfg.n_embd, "n_head", "n_embd").map_err(err)?;
                Ok(Architecture::Gpt2(cfg))
            }
            other => Err(err(format!(
                "model_type {other:?} is not read: BERT-family encoders (\"bert\") and GPT-2 (\"gpt2\") are"
            ))),
        }
    }
}

fn divides(heads: usize, width: usize, h: &str, w: &str) -> Result<(), String> {
    if width % heads == 0 {
        Ok(())
    } else {
        Err(format!("{h} ({heads}) does not divide {w} ({width})"))
    }
}

struct Keys<'a> {
    obj: &'a Map<String, Value>,
    path: &'a Path,
}

impl Keys<'_> {
    fn err(&self, message: String) -> PretrainedError {
        PretrainedError::Config {
            path: self.path.to_path_buf(),
            message,
        }
    }

    fn string(&self, key: &str, default: Option<&str>) -> Result<String, PretrainedError> {
        match (self.obj.get(key), default) {
            (Some(Value::String(s)), _) => Ok(s.clone()),
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => Err(self.err(format!("no {key:?} key"))),
            (Some(v), _) => Err(self.err(format!("{key:?} must be a string, got {v}"))),
        }
    }

    /// A positive whole number.
    fn count(&self, key: &str, default: Option<usize>) -> Result<usize, PretrainedError> {
        match (self.obj.get(key), default) {
            (Some(v), _) => v
                .as_u64()
                .filter(|&n| n > 0)
                .map(|n| n as usize)
                .ok_or_else(|| self.err(format!("{key:?} must be a whole number > 0, got {v}"))),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(self.err(format!("no {key:?} key"))),
        }
    }

    fn float(&self, key: &str, default: f64) -> Result<f64, PretrainedError> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_f64()
                .filter(|x| *x > 0.0 && x.is_finite())
                .ok_or_else(|| self.err(format!("{key:?} must be a number > 0, got {v}"))),
        }
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, PretrainedError> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(format!("{key:?} must be true or false, got {v}"))),
        }
    }
}
