//! Pretrained transformers from Hugging Face checkpoint directories (config.json +
//! model.safetensors), read through burn-store's `SafetensorsStore` with no Python: BERT-family
//! encoders ([`bert`]) and GPT-2 ([`gpt2`]), each giving every layer's hidden states the way
//! `transformers` gives them (`output_hidden_states=True`), so that the measures run on them as
//! on embedlab's own models.
//!
//! Before any weight is read, every tensor the architecture needs is checked against
//! config.json's sizes, and a missing, misshapen or non-float tensor is an error naming the file
//! and the tensor. f16, bf16 and f64 weights are cast to f32. Sharded checkpoints
//! (model.safetensors.index.json) and other architectures are refused with a message saying so.

pub mod attention;
pub mod bert;
pub mod config;
pub mod error;
pub mod gpt2;
pub mod tokenizer;

use std::path::{Path, PathBuf};

use burn::store::{
    FloatCastAdapter, ModuleAdapter, ModuleSnapshot, ModuleStore, PyTorchToBurnAdapter,
    SafetensorsStore,
};
use burn::tensor::{Bool, DType, Device, Int, Tensor};

pub use bert::Bert;
pub use config::{Architecture, BertConfig, Gpt2Config};
pub use error::PretrainedError;
pub use gpt2::Gpt2;
pub use tokenizer::{Tokenizer, WordPieces};

/// A pretrained model read from a checkpoint directory.
#[derive(Debug)]
pub enum Pretrained {
    Bert(Bert),
    Gpt2(Gpt2),
}

/// A checkpoint directory, read: its config and its model.
#[derive(Debug)]
pub struct Checkpoint {
    pub dir: PathBuf,
    pub architecture: Architecture,
    pub model: Pretrained,
    /// The weights' type in the file (cast to f32 when it is another float type).
    pub stored_dtype: DType,
}

impl Pretrained {
    /// Every layer's hidden states `[batch, seq, hidden]`, 0 = the embedding output
    /// ([`Bert::forward`], [`Gpt2::forward`]).
    pub fn hidden_states(
        &self,
        tokens: Tensor<2, Int>,
        pad: Option<Tensor<2, Bool>>,
    ) -> Vec<Tensor<3>> {
        match self {
            Pretrained::Bert(m) => m.forward(tokens, pad),
            Pretrained::Gpt2(m) => m.forward(tokens, pad),
        }
    }

    /// The input embedding of the vocabulary's pieces, `[vocab, hidden]`.
    pub fn token_embedding_matrix(&self) -> Tensor<2> {
        match self {
            Pretrained::Bert(m) => m.embeddings.word_embeddings.weight.val(),
            Pretrained::Gpt2(m) => m.wte.weight.val(),
        }
    }

    /// Each layer's W_Q, W_K, W_V as `[hidden_in, hidden_out]` input-major matrices (heads
    /// side by side in the columns), and the number of heads.
    pub fn qkv_weights(&self) -> Vec<([Tensor<2>; 3], usize)> {
        match self {
            Pretrained::Bert(m) => m
                .encoder
                .layer
                .iter()
                .map(|l| {
                    let a = &l.attention.self_attention;
                    (
                        [
                            a.query.weight.val(),
                            a.key.weight.val(),
                            a.value.weight.val(),
                        ],
                        a.n_heads,
                    )
                })
                .collect(),
            Pretrained::Gpt2(m) => {
                m.h.iter()
                    .map(|b| {
                        let w = b.attn.c_attn.weight.val();
                        let [d, three_d] = w.dims();
                        let d_out = three_d / 3;
                        let part = |i: usize| w.clone().slice([0..d, i * d_out..(i + 1) * d_out]);
                        ([part(0), part(1), part(2)], b.attn.n_heads)
                    })
                    .collect()
            }
        }
    }

    /// Whether attention is causal (GPT-2) or bidirectional (BERT).
    pub fn causal(&self) -> bool {
        matches!(self, Pretrained::Gpt2(_))
    }
}

/// Reads the checkpoint in `dir` onto `device`.
pub fn load(dir: &Path, device: &Device) -> Result<Checkpoint, PretrainedError> {
    let architecture = Architecture::read(&dir.join("config.json"))?;
    let path = weights_file(dir)?;
    let (expected, prefixes) = match &architecture {
        Architecture::Bert(c) => (Bert::expected_tensors(c), ["", "bert."]),
        Architecture::Gpt2(c) => (Gpt2::expected_tensors(c), ["", "transformer."]),
    };
    let err = |message: String| PretrainedError::Weights {
        path: path.clone(),
        message,
    };
    // BERT checkpoints from TensorFlow conversions name LayerNorm's weights gamma and beta.
    let renamed = |store: SafetensorsStore| {
        store
            .with_key_remapping(r"LayerNorm\.gamma$", "LayerNorm.weight")
            .with_key_remapping(r"LayerNorm\.beta$", "LayerNorm.bias")
    };
    let mut probe = renamed(SafetensorsStore::from_file(&path));
    let tensors = probe
        .get_all_tensors()
        .map_err(|e| err(format!("not a readable safetensors file: {e}")))?;
    let prefix = prefixes
        .into_iter()
        .find(|p| tensors.contains_key(&format!("{p}{}", expected[0].0)))
        .ok_or_else(|| {
            err(format!(
                "no tensor `{}` (nor with a `{}` prefix): not a {} checkpoint",
                expected[0].0,
                prefixes[1],
                match architecture {
                    Architecture::Bert(_) => "BertModel",
                    Architecture::Gpt2(_) => "GPT2Model",
                }
            ))
        })?;
    // Weights the config does not describe would be dropped without a word: a layer past
    // config.json's count, or a tensor under both its bare and its prefixed name.
    let (layer_key, n_layers) = match &architecture {
        Architecture::Bert(c) => (r"^(?:bert\.)?encoder\.layer\.(\d+)\.", c.num_hidden_layers),
        Architecture::Gpt2(c) => (r"^(?:transformer\.)?h\.(\d+)\.", c.n_layer),
    };
    let layer_key = regex::Regex::new(layer_key).expect("a valid pattern");
    for key in tensors.keys() {
        if let Some(n) = layer_key
            .captures(key)
            .and_then(|c| c[1].parse::<usize>().ok())
            .filter(|&n| n >= n_layers)
        {
            return Err(err(format!(
                "tensor `{key}` is of layer {n}, and config.json has {n_layers} layers (numbered from 0)"
            )));
        }
    }
    for (name, _) in &expected {
        let other = if prefix.is_empty() {
            format!("{}{name}", prefixes[1])
        } else {
            name.clone()
        };
        if tensors.contains_key(&other) {
            return Err(err(format!(
                "both `{name}` and `{}{name}` are in the file: which one is the model's is not clear",
                prefixes[1]
            )));
        }
    }
    let mut stored_dtype = None;
    for (name, shape) in &expected {
        let key = format!("{prefix}{name}");
        let t = tensors.get(&key).ok_or_else(|| {
            err(format!(
                "tensor `{key}` is missing (config.json's sizes need it)"
            ))
        })?;
        if t.shape.to_vec() != *shape {
            return Err(err(format!(
                "tensor `{key}` has shape {:?}, config.json's sizes give {shape:?}",
                t.shape.to_vec()
            )));
        }
        if !matches!(t.dtype, DType::F32 | DType::F16 | DType::BF16 | DType::F64) {
            return Err(err(format!(
                "tensor `{key}` is {:?}; float weights (f32, f16, bf16, f64) are read",
                t.dtype
            )));
        }
        stored_dtype.get_or_insert(t.dtype);
    }
    let stored_dtype = stored_dtype.expect("every architecture has tensors");
    let cast = FloatCastAdapter::to(DType::F32);
    let strip = |store: SafetensorsStore| match prefix {
        "" => store,
        p => store.with_key_remapping(&format!("^{}", regex_escape(p)), ""),
    };
    let store = strip(renamed(SafetensorsStore::from_file(&path)));
    let model = match &architecture {
        Architecture::Bert(c) => {
            let mut store = store
                .with_key_remapping(r"\.attention\.self\.", ".attention.self_attention.")
                .with_from_adapter(PyTorchToBurnAdapter.chain(cast));
            let mut m = Bert::init(c, device);
            m.load_from(&mut store)
                .map_err(|e| err(format!("cannot load: {e}")))?;
            Pretrained::Bert(m)
        }
        Architecture::Gpt2(c) => {
            // Conv1D is already [in, out]: no transpose, only LayerNorm's names.
            let mut store = store
                .with_key_remapping(r"(ln_1|ln_2|ln_f)\.weight$", "${1}.gamma")
                .with_key_remapping(r"(ln_1|ln_2|ln_f)\.bias$", "${1}.beta")
                .with_from_adapter(cast);
            let mut m = Gpt2::init(c, device);
            m.load_from(&mut store)
                .map_err(|e| err(format!("cannot load: {e}")))?;
            Pretrained::Gpt2(m)
        }
    };
    Ok(Checkpoint {
        dir: dir.to_path_buf(),
        architecture,
        model,
        stored_dtype,
    })
}

/// `dir`'s model.safetensors, or an error saying what is there instead.
fn weights_file(dir: &Path) -> Result<PathBuf, PretrainedError> {
    let path = dir.join("model.safetensors");
    if path.is_file() {
        return Ok(path);
    }
    let index = dir.join("model.safetensors.index.json");
    let message = if index.is_file() {
        format!(
            "a sharded checkpoint ({}) is not read: merge its shards into one model.safetensors",
            index.display()
        )
    } else if dir.join("pytorch_model.bin").is_file() {
        "only safetensors weights are read, and this directory has pytorch_model.bin: convert it (safetensors' `convert` script)".into()
    } else {
        "no such file: a checkpoint directory holds config.json and model.safetensors".into()
    };
    Err(PretrainedError::Weights { path, message })
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                vec![c]
            } else {
                vec!['\\', c]
            }
        })
        .collect()
}
