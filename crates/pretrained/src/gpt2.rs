//! GPT-2 as `transformers`' `GPT2Model` computes it (pre-LayerNorm, causal), every weight named
//! as the checkpoint names it.
//!
//! ```text
//! h_0 = wte[w] + wpe[t]
//! x   = h_{l-1} + c_proj(Attention_causal(c_attn(ln_1(h_{l-1}))))
//! h_l = x + mlp.c_proj(gelu_new(mlp.c_fc(ln_2(x))))
//! ```
//! with the last layer's output read after `ln_f`, as `transformers` returns it (its
//! `hidden_states[-1]`) and as Ethayarajh (2019) read GPT-2's top layer. GPT-2's `Conv1D` stores
//! weights `[in, out]`, which is burn's `Linear` layout: nothing is transposed. `c_attn` holds
//! W_Q, W_K, W_V side by side (`[hidden, 3 hidden]`, in that order).

use burn::module::Module;
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::activation::gelu_approximate;
use burn::tensor::{Bool, Device, Int, Tensor};

use crate::attention::{multi_head, rows};
use crate::config::Gpt2Config;

#[derive(Module, Debug)]
pub struct Gpt2Attention {
    pub c_attn: Linear,
    pub c_proj: Linear,
    pub n_heads: usize,
}

#[derive(Module, Debug)]
pub struct Gpt2Mlp {
    pub c_fc: Linear,
    pub c_proj: Linear,
}

#[derive(Module, Debug)]
pub struct Gpt2Block {
    pub ln_1: LayerNorm,
    pub attn: Gpt2Attention,
    pub ln_2: LayerNorm,
    pub mlp: Gpt2Mlp,
}

#[derive(Module, Debug)]
pub struct Gpt2 {
    pub wte: Embedding,
    pub wpe: Embedding,
    pub h: Vec<Gpt2Block>,
    pub ln_f: LayerNorm,
}

impl Gpt2 {
    /// A model of `cfg`'s shape with placeholder weights, to be overwritten by a checkpoint.
    pub fn init(cfg: &Gpt2Config, device: &Device) -> Gpt2 {
        let d = cfg.n_embd;
        let norm = || {
            LayerNormConfig::new(d)
                .with_epsilon(cfg.layer_norm_epsilon)
                .init(device)
        };
        let lin = |i, o| LinearConfig::new(i, o).init(device);
        Gpt2 {
            wte: EmbeddingConfig::new(cfg.vocab_size, d).init(device),
            wpe: EmbeddingConfig::new(cfg.n_positions, d).init(device),
            h: (0..cfg.n_layer)
                .map(|_| Gpt2Block {
                    ln_1: norm(),
                    attn: Gpt2Attention {
                        c_attn: lin(d, 3 * d),
                        c_proj: lin(d, d),
                        n_heads: cfg.n_head,
                    },
                    ln_2: norm(),
                    mlp: Gpt2Mlp {
                        c_fc: lin(d, cfg.n_inner),
                        c_proj: lin(cfg.n_inner, d),
                    },
                })
                .collect(),
            ln_f: norm(),
        }
    }

    /// Every tensor `GPT2Model` keeps, as the checkpoint names and shapes it (`Conv1D`:
    /// `[in, out]`).
    pub fn expected_tensors(cfg: &Gpt2Config) -> Vec<(String, Vec<usize>)> {
        let (d, f) = (cfg.n_embd, cfg.n_inner);
        let mut t = vec![
            ("wte.weight".to_string(), vec![cfg.vocab_size, d]),
            ("wpe.weight".into(), vec![cfg.n_positions, d]),
        ];
        for l in 0..cfg.n_layer {
            for (name, shape) in [
                ("ln_1.weight", vec![d]),
                ("ln_1.bias", vec![d]),
                ("attn.c_attn.weight", vec![d, 3 * d]),
                ("attn.c_attn.bias", vec![3 * d]),
                ("attn.c_proj.weight", vec![d, d]),
                ("attn.c_proj.bias", vec![d]),
                ("ln_2.weight", vec![d]),
                ("ln_2.bias", vec![d]),
                ("mlp.c_fc.weight", vec![d, f]),
                ("mlp.c_fc.bias", vec![f]),
                ("mlp.c_proj.weight", vec![f, d]),
                ("mlp.c_proj.bias", vec![d]),
            ] {
                t.push((format!("h.{l}.{name}"), shape));
            }
        }
        t.push(("ln_f.weight".into(), vec![d]));
        t.push(("ln_f.bias".into(), vec![d]));
        t
    }
}

impl Gpt2 {
    /// Every layer's hidden states `[batch, seq, n_embd]`: 0 the embedding output
    /// (`wte + wpe`), l the output of block l, the last one after `ln_f` (`transformers`'
    /// `hidden_states`). `pad` true at padding positions (keys never attended; with causal
    /// attention, right padding changes nothing before it).
    pub fn forward(&self, tokens: Tensor<2, Int>, pad: Option<Tensor<2, Bool>>) -> Vec<Tensor<3>> {
        let [b, t] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<1, Int>::arange(0..t as i64, &device)
            .reshape([1, t])
            .expand([b, t]);
        let mut hidden = vec![self.wte.forward(tokens) + self.wpe.forward(positions)];
        let d = self.wte.weight.dims()[1];
        for block in &self.h {
            let x = hidden.last().unwrap().clone();
            let qkv = rows(&block.attn.c_attn, block.ln_1.forward(x.clone()));
            let [q, k, v]: [Tensor<3>; 3] = qkv
                .chunk(3, 2)
                .try_into()
                .expect("c_attn holds three blocks of n_embd columns");
            debug_assert_eq!(q.dims()[2], d);
            let context = multi_head(q, k, v, block.attn.n_heads, pad.clone(), true);
            let x = x + rows(&block.attn.c_proj, context);
            let ff = rows(
                &block.mlp.c_proj,
                gelu_approximate(rows(&block.mlp.c_fc, block.ln_2.forward(x.clone()))),
            );
            hidden.push(x + ff);
        }
        let last = hidden.pop().expect("the embedding output at least");
        hidden.push(self.ln_f.forward(last));
        hidden
    }
}
