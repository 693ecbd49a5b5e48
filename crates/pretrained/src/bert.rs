//! A BERT-family encoder as `transformers`' `BertModel` computes it (post-LayerNorm,
//! bidirectional), every weight named as the checkpoint names it, so that a checkpoint's keys
//! are this module's paths (one rename: `attention.self` is `attention.self_attention`, `self`
//! being a Rust keyword).
//!
//! ```text
//! h_0     = LayerNorm(E[w] + P[t] + T[0])                              (embeddings)
//! a_l     = LayerNorm(h_{l-1} + Dense_o(Attention(h_{l-1})))           (attention.output)
//! h_l     = LayerNorm(a_l + Dense_2(gelu(Dense_1(a_l))))                (intermediate, output)
//! ```
//! `Attention` is multi-head scaled dot-product attention with biased projections
//! (`softmax((x W_Q + b_Q)(x W_K + b_K)^T / sqrt(d_head)) (x W_V + b_V)` per head), `gelu` the
//! exact (erf) form, every LayerNorm at `layer_norm_eps`. Padding keys are never attended.
//! The pooler and the MLM head are not read: the hidden states are what is measured.

#![allow(non_snake_case)] // `LayerNorm` is the checkpoint's name for these weights.

use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::activation::gelu;
use burn::tensor::{Bool, Device, Int, Tensor};

use crate::attention::{multi_head, rows};
use crate::config::BertConfig;

#[derive(Module, Debug)]
pub struct BertEmbeddings {
    pub word_embeddings: Embedding,
    pub position_embeddings: Embedding,
    pub token_type_embeddings: Embedding,
    pub LayerNorm: LayerNorm,
}

#[derive(Module, Debug)]
pub struct BertSelfAttention {
    pub query: Linear,
    pub key: Linear,
    pub value: Linear,
    pub n_heads: usize,
}

#[derive(Module, Debug)]
pub struct BertSelfOutput {
    pub dense: Linear,
    pub LayerNorm: LayerNorm,
}

#[derive(Module, Debug)]
pub struct BertAttention {
    /// `attention.self` in the checkpoint.
    pub self_attention: BertSelfAttention,
    pub output: BertSelfOutput,
}

#[derive(Module, Debug)]
pub struct BertIntermediate {
    pub dense: Linear,
}

#[derive(Module, Debug)]
pub struct BertOutput {
    pub dense: Linear,
    pub LayerNorm: LayerNorm,
}

#[derive(Module, Debug)]
pub struct BertLayer {
    pub attention: BertAttention,
    pub intermediate: BertIntermediate,
    pub output: BertOutput,
}

#[derive(Module, Debug)]
pub struct BertEncoder {
    pub layer: Vec<BertLayer>,
}

#[derive(Module, Debug)]
pub struct Bert {
    pub embeddings: BertEmbeddings,
    pub encoder: BertEncoder,
}

impl Bert {
    /// A model of `cfg`'s shape with placeholder weights (burn's defaults), to be overwritten by a
    /// checkpoint ([`crate::load`]).
    pub fn init(cfg: &BertConfig, device: &Device) -> Bert {
        let h = cfg.hidden_size;
        let norm = || {
            LayerNormConfig::new(h)
                .with_epsilon(cfg.layer_norm_eps)
                .init(device)
        };
        let lin = |i, o| LinearConfig::new(i, o).init(device);
        Bert {
            embeddings: BertEmbeddings {
                word_embeddings: EmbeddingConfig::new(cfg.vocab_size, h).init(device),
                position_embeddings: EmbeddingConfig::new(cfg.max_position_embeddings, h)
                    .init(device),
                token_type_embeddings: EmbeddingConfig::new(cfg.type_vocab_size, h).init(device),
                LayerNorm: norm(),
            },
            encoder: BertEncoder {
                layer: (0..cfg.num_hidden_layers)
                    .map(|_| BertLayer {
                        attention: BertAttention {
                            self_attention: BertSelfAttention {
                                query: lin(h, h),
                                key: lin(h, h),
                                value: lin(h, h),
                                n_heads: cfg.num_attention_heads,
                            },
                            output: BertSelfOutput {
                                dense: lin(h, h),
                                LayerNorm: norm(),
                            },
                        },
                        intermediate: BertIntermediate {
                            dense: lin(h, cfg.intermediate_size),
                        },
                        output: BertOutput {
                            dense: lin(cfg.intermediate_size, h),
                            LayerNorm: norm(),
                        },
                    })
                    .collect(),
            },
        }
    }

    /// Every tensor `BertModel` keeps, as the checkpoint names and shapes it (PyTorch's
    /// `Linear` stores `[out, in]`).
    pub fn expected_tensors(cfg: &BertConfig) -> Vec<(String, Vec<usize>)> {
        let (h, f) = (cfg.hidden_size, cfg.intermediate_size);
        let mut t = vec![
            (
                "embeddings.word_embeddings.weight".to_string(),
                vec![cfg.vocab_size, h],
            ),
            (
                "embeddings.position_embeddings.weight".into(),
                vec![cfg.max_position_embeddings, h],
            ),
            (
                "embeddings.token_type_embeddings.weight".into(),
                vec![cfg.type_vocab_size, h],
            ),
            ("embeddings.LayerNorm.weight".into(), vec![h]),
            ("embeddings.LayerNorm.bias".into(), vec![h]),
        ];
        for l in 0..cfg.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            for (name, shape) in [
                ("attention.self.query.weight", vec![h, h]),
                ("attention.self.query.bias", vec![h]),
                ("attention.self.key.weight", vec![h, h]),
                ("attention.self.key.bias", vec![h]),
                ("attention.self.value.weight", vec![h, h]),
                ("attention.self.value.bias", vec![h]),
                ("attention.output.dense.weight", vec![h, h]),
                ("attention.output.dense.bias", vec![h]),
                ("attention.output.LayerNorm.weight", vec![h]),
                ("attention.output.LayerNorm.bias", vec![h]),
                ("intermediate.dense.weight", vec![f, h]),
                ("intermediate.dense.bias", vec![f]),
                ("output.dense.weight", vec![h, f]),
                ("output.dense.bias", vec![h]),
                ("output.LayerNorm.weight", vec![h]),
                ("output.LayerNorm.bias", vec![h]),
            ] {
                t.push((format!("{p}.{name}"), shape));
            }
        }
        t
    }
}

impl Bert {
    /// Every layer's hidden states `[batch, seq, hidden]`: 0 the embedding output (after its
    /// LayerNorm, as `transformers`' `hidden_states[0]`), l the output of layer l.
    /// `tokens` `[batch, seq]` (segment 0 throughout); `pad` true at padding positions.
    pub fn forward(&self, tokens: Tensor<2, Int>, pad: Option<Tensor<2, Bool>>) -> Vec<Tensor<3>> {
        let [b, t] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<1, Int>::arange(0..t as i64, &device)
            .reshape([1, t])
            .expand([b, t]);
        let segments = Tensor::<2, Int>::zeros([b, t], &device);
        let e = &self.embeddings;
        let x = e.word_embeddings.forward(tokens)
            + e.position_embeddings.forward(positions)
            + e.token_type_embeddings.forward(segments);
        let mut hidden = vec![e.LayerNorm.forward(x)];
        for layer in &self.encoder.layer {
            let x = hidden.last().unwrap().clone();
            let sa = &layer.attention.self_attention;
            let context = multi_head(
                rows(&sa.query, x.clone()),
                rows(&sa.key, x.clone()),
                rows(&sa.value, x.clone()),
                sa.n_heads,
                pad.clone(),
                false,
            );
            let out = &layer.attention.output;
            let a = out.LayerNorm.forward(x + rows(&out.dense, context));
            let ff = rows(
                &layer.output.dense,
                gelu(rows(&layer.intermediate.dense, a.clone())),
            );
            hidden.push(layer.output.LayerNorm.forward(a + ff));
        }
        hidden
    }
}
