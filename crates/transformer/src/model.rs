//! The encoder, written out so that nothing we measure is hidden: token embedding + learned
//! positions, N blocks of multi-head self-attention and a GELU feed-forward network with
//! LayerNorm (pre-LN by default, post-LN selectable), a final LayerNorm, and an LM head tied to
//! the token embedding by default.
//!
//! [`Transformer::forward`] returns the hidden states of every layer: index 0 is the embedding
//! output (token + position), 1..=N the output of each block. The raw token-embedding matrix is
//! [`Transformer::token_embedding_matrix`].
//!
//! Where W_Q, W_K, W_V are tied: [`SelfAttention`] keeps W_Q always, and W_K / W_V only when they
//! are separate parameters. `shared_qk` uses W_Q as W_K (Reformer's shared-QK attention);
//! `shared_qkv` uses W_Q for all three. W_O always stays separate. The projections have no bias,
//! so tying removes exactly d_model² parameters per tied matrix per layer.

use burn::config::Config;
use burn::module::Module;
use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::{
    Dropout, DropoutConfig, Embedding, EmbeddingConfig, Gelu, Initializer, LayerNorm,
    LayerNormConfig, Linear, LinearConfig,
};
use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Device, Int, Tensor};
use serde::{Deserialize, Serialize};

/// Standard deviation of every weight at initialisation (BERT's `initializer_range`). burn's
/// default Kaiming-uniform init (std 1/sqrt(3 fan_in) = 0.051 at d_model 128) makes each block's
/// output ~25x the 0.02-scale embeddings, so the residual stream starts with almost no token
/// identity in it and masked-LM training sits on the unigram plateau far longer.
pub const INIT_STD: f64 = 0.02;

/// Projections that write into the residual stream (W_O, the second feed-forward layer) start
/// smaller by 1/sqrt(2 n_layers), as in GPT-2, so the stream's scale does not grow with depth.
fn residual_std(cfg: &TransformerConfig) -> f64 {
    INIT_STD / (2.0 * cfg.n_layers as f64).sqrt()
}

fn linear(d_in: usize, d_out: usize, std: f64) -> LinearConfig {
    LinearConfig::new(d_in, d_out).with_initializer(Initializer::Normal { mean: 0.0, std })
}

/// Which of W_Q, W_K, W_V are one matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QkvTying {
    /// Three separate matrices (BERT).
    Untied,
    /// W_K = W_Q (Kitaev et al. 2020, Reformer): attention scores are symmetric before softmax.
    SharedQk,
    /// W_K = W_V = W_Q.
    SharedQkv,
}

/// How a block mixes information across positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mixing {
    /// Softmax self-attention.
    Attention,
    /// The no-attention control: each position takes the plain average of the value vectors of
    /// every position it may see (all of them, or the prefix for a causal LM), so what reaches a
    /// position does not depend on what the tokens are. W_V and W_O stay, W_Q and W_K are
    /// unused; everything else is the same model. Asks whether self-attention itself (rather
    /// than the objective) makes collocated words similar.
    Uniform,
}

/// Where LayerNorm sits in a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormPlacement {
    /// x + f(LN(x)): stable without warm-up tricks (GPT-2, most modern encoders).
    Pre,
    /// LN(x + f(x)): the original Transformer and BERT.
    Post,
}

#[derive(Config, Debug)]
pub struct TransformerConfig {
    /// Token ids: the corpus words plus the special tokens.
    pub vocab_size: usize,
    #[config(default = 128)]
    pub d_model: usize,
    #[config(default = 4)]
    pub n_layers: usize,
    #[config(default = 4)]
    pub n_heads: usize,
    #[config(default = 512)]
    pub d_ff: usize,
    /// Longest sequence (learned positions).
    #[config(default = 64)]
    pub max_len: usize,
    #[config(default = 0.1)]
    pub dropout: f64,
    #[config(default = "QkvTying::Untied")]
    pub qkv: QkvTying,
    #[config(default = "NormPlacement::Pre")]
    pub norm: NormPlacement,
    /// LM head weight = token embedding (transposed). Untying changes what the embedding layer
    /// learns, so it is recorded with every result.
    #[config(default = true)]
    pub tie_lm_head: bool,
    /// Keep the token embedding at its random initialisation.
    #[config(default = false)]
    pub freeze_embeddings: bool,
    /// Self-attention, or the uniform-average control ([`Mixing`]).
    #[config(default = "Mixing::Attention")]
    pub mixing: Mixing,
}

/// Multi-head self-attention with optional Q/K/V tying (see the module docs).
#[derive(Module, Debug)]
pub struct SelfAttention {
    /// W_Q, also used as W_K and/or W_V when those are tied.
    pub query: Linear,
    /// W_K when separate (`untied`).
    pub key: Option<Linear>,
    /// W_V when separate (`untied`, `shared_qk`).
    pub value: Option<Linear>,
    /// W_O, never tied.
    pub output: Linear,
    pub dropout: Dropout,
    pub n_heads: usize,
    pub d_k: usize,
    /// [`Mixing::Uniform`]: scores are all zero, so the softmax is a uniform average over the
    /// positions the masks leave.
    pub uniform: bool,
}

impl SelfAttention {
    fn new(cfg: &TransformerConfig, device: &Device) -> Self {
        let proj = linear(cfg.d_model, cfg.d_model, INIT_STD).with_bias(false);
        SelfAttention {
            query: proj.init(device),
            key: (cfg.qkv == QkvTying::Untied).then(|| proj.init(device)),
            value: (cfg.qkv != QkvTying::SharedQkv).then(|| proj.init(device)),
            output: linear(cfg.d_model, cfg.d_model, residual_std(cfg)).init(device),
            dropout: DropoutConfig::new(cfg.dropout).init(),
            n_heads: cfg.n_heads,
            d_k: cfg.d_model / cfg.n_heads,
            uniform: cfg.mixing == Mixing::Uniform,
        }
    }

    /// The matrices actually used as W_Q, W_K, W_V, each `[d_model_in, d_model_out]` (burn's
    /// Linear stores weights input-major). Tied ones are the same tensor.
    pub fn qkv_weights(&self) -> [Tensor<2>; 3] {
        let q = self.query.weight.val();
        let k = self
            .key
            .as_ref()
            .map_or_else(|| q.clone(), |l| l.weight.val());
        let v = self
            .value
            .as_ref()
            .map_or_else(|| q.clone(), |l| l.weight.val());
        [q, k, v]
    }

    /// `x`: `[batch, seq, d_model]`; `pad`: `[batch, seq]`, true at padding (keys never
    /// attended); `causal`: only earlier positions are attended.
    pub fn forward(&self, x: Tensor<3>, pad: Option<Tensor<2, Bool>>, causal: bool) -> Tensor<3> {
        let [b, t, d] = x.dims();
        let heads = |lin: &Linear| {
            rows(lin, x.clone())
                .reshape([b, t, self.n_heads, self.d_k])
                .swap_dims(1, 2)
        };
        let q = heads(&self.query);
        let k = self.key.as_ref().map_or_else(|| q.clone(), |l| heads(l));
        let v = match &self.value {
            Some(l) => heads(l),
            None => q.clone(),
        };
        let mut scores = if self.uniform {
            Tensor::zeros([b, self.n_heads, t, t], &x.device())
        } else {
            q.matmul(k.transpose()).div_scalar((self.d_k as f32).sqrt())
        };
        if let Some(pad) = pad {
            scores = scores.mask_fill(pad.reshape([b, 1, 1, t]), -1.0e4);
        }
        if causal {
            // tril_mask marks the positions *above* the diagonal (the future) as true.
            let future = generate_autoregressive_mask(b, t, &x.device());
            scores = scores.mask_fill(future.reshape([b, 1, t, t]), -1.0e4);
        }
        let weights = self.dropout.forward(softmax(scores, 3));
        let context = weights.matmul(v).swap_dims(1, 2).reshape([b, t, d]);
        rows(&self.output, context)
    }
}

/// `lin` applied to `x` `[batch, seq, d_in]` as one `[batch * seq, d_in] @ [d_in, d_out]`
/// product. burn's `Linear` on a rank-3 input runs a batched matmul of `batch` products of
/// `seq` rows each whenever `seq` is a multiple of 32 (`MatmulTransformPolicy::BetterTiling`),
/// and its input gradient the same way; on flex that made a masked-LM training step 1.15x
/// slower than one product per layer (issue 18, `results/bench/avx2/step-phases-ab.csv`).
/// Same products, same sums: only how they are batched.
fn rows(lin: &Linear, x: Tensor<3>) -> Tensor<3> {
    let [b, t, d] = x.dims();
    let y = lin.forward(x.reshape([b * t, d]));
    let d_out = y.dims()[1];
    y.reshape([b, t, d_out])
}

#[derive(Module, Debug)]
pub struct Block {
    pub attention: SelfAttention,
    pub norm_attention: LayerNorm,
    pub ff_in: Linear,
    pub ff_out: Linear,
    pub norm_ff: LayerNorm,
    pub activation: Gelu,
    pub dropout: Dropout,
    pub pre_norm: bool,
}

impl Block {
    fn new(cfg: &TransformerConfig, device: &Device) -> Self {
        Block {
            attention: SelfAttention::new(cfg, device),
            norm_attention: LayerNormConfig::new(cfg.d_model).init(device),
            ff_in: linear(cfg.d_model, cfg.d_ff, INIT_STD).init(device),
            ff_out: linear(cfg.d_ff, cfg.d_model, residual_std(cfg)).init(device),
            norm_ff: LayerNormConfig::new(cfg.d_model).init(device),
            activation: Gelu::new(),
            dropout: DropoutConfig::new(cfg.dropout).init(),
            pre_norm: cfg.norm == NormPlacement::Pre,
        }
    }

    /// The feed-forward layer, `W_2 gelu(W_1 x + b_1) + b_2` (no layer norm, no residual).
    pub fn feed_forward(&self, x: Tensor<3>) -> Tensor<3> {
        rows(
            &self.ff_out,
            self.dropout
                .forward(self.activation.forward(rows(&self.ff_in, x))),
        )
    }

    pub fn forward(&self, x: Tensor<3>, pad: Option<Tensor<2, Bool>>, causal: bool) -> Tensor<3> {
        if self.pre_norm {
            let x = x.clone()
                + self.dropout.forward(self.attention.forward(
                    self.norm_attention.forward(x),
                    pad,
                    causal,
                ));
            x.clone()
                + self
                    .dropout
                    .forward(self.feed_forward(self.norm_ff.forward(x)))
        } else {
            let x = self
                .norm_attention
                .forward(x.clone() + self.dropout.forward(self.attention.forward(x, pad, causal)));
            self.norm_ff
                .forward(x.clone() + self.dropout.forward(self.feed_forward(x)))
        }
    }
}

#[derive(Module, Debug)]
pub struct Transformer {
    pub token_embedding: Embedding,
    pub position_embedding: Embedding,
    pub embedding_dropout: Dropout,
    pub blocks: Vec<Block>,
    pub final_norm: LayerNorm,
    /// Present only when the LM head is untied; tied heads use the token embedding.
    pub lm_head: Option<Linear>,
    /// Output bias over the vocabulary (BERT has one on its tied head too).
    pub lm_bias: burn::module::Param<Tensor<1>>,
}

/// Every layer's hidden states, `[batch, seq, d_model]` each: 0 = embeddings, i = block i.
pub struct EncoderOutput {
    pub hidden: Vec<Tensor<3>>,
}

impl TransformerConfig {
    pub fn validate(&self) -> Result<(), String> {
        self.settings().validate()?;
        if self.max_len < 3 || self.vocab_size == 0 {
            return Err(format!(
                "vocab_size must be positive and max_len at least 3, got {} and {}",
                self.vocab_size, self.max_len
            ));
        }
        Ok(())
    }

    /// The settings a config states (everything but the vocabulary and the longest sequence).
    pub fn settings(&self) -> ModelSettings {
        ModelSettings {
            d_model: self.d_model,
            n_layers: self.n_layers,
            n_heads: self.n_heads,
            d_ff: self.d_ff,
            dropout: self.dropout,
            qkv: self.qkv,
            norm: self.norm,
            tie_lm_head: self.tie_lm_head,
            freeze_embeddings: self.freeze_embeddings,
            mixing: self.mixing,
        }
    }

    pub fn init(&self, device: &Device) -> Transformer {
        let small = Initializer::Normal {
            mean: 0.0,
            std: INIT_STD,
        };
        let token_embedding = EmbeddingConfig::new(self.vocab_size, self.d_model)
            .with_initializer(small.clone())
            .init(device);
        let token_embedding = if self.freeze_embeddings {
            token_embedding.no_grad()
        } else {
            token_embedding
        };
        let model = Transformer {
            token_embedding,
            position_embedding: EmbeddingConfig::new(self.max_len, self.d_model)
                .with_initializer(small)
                .init(device),
            embedding_dropout: DropoutConfig::new(self.dropout).init(),
            blocks: (0..self.n_layers)
                .map(|_| Block::new(self, device))
                .collect(),
            final_norm: LayerNormConfig::new(self.d_model).init(device),
            lm_head: (!self.tie_lm_head).then(|| {
                linear(self.d_model, self.vocab_size, INIT_STD)
                    .with_bias(false)
                    .init(device)
            }),
            lm_bias: burn::module::Param::from_tensor(Tensor::zeros([self.vocab_size], device)),
        };
        materialize(&model);
        model
    }
}

/// Draws every parameter now, in module order.
///
/// Why: burn 0.22 initialises parameters lazily, on first access, from whatever state its
/// random number generator is in at that moment. Left lazy, a model's initial weights would
/// depend on what drew from the generator between `init` and first use (dropout masks, the
/// per-step reseeding of training, the order a measurement reads the weights in), so
/// `device.seed(s); cfg.init(..)` would not give the same weights twice. Module order equals the
/// order a forward pass first reads the random parameters, so dropout-free models get the same
/// weights as when they were drawn lazily.
fn materialize(model: &Transformer) {
    struct Touch;
    impl burn::module::ModuleVisitor for Touch {
        fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
            let _ = param.val();
        }
    }
    model.visit(&mut Touch);
}

impl Transformer {
    /// The token embedding drawn again from N(0, `std`²), frozen (no gradient) when `frozen`:
    /// a frozen random input at another scale
    /// ([`crate::recipe::TrainingConfig::frozen_embedding_std`]). Drawn from the device's
    /// generator where it stands, after every other weight.
    pub fn with_token_embedding_std(
        mut self,
        std: f64,
        frozen: bool,
        device: &Device,
    ) -> Transformer {
        let [vocab, d_model] = self.token_embedding.weight.dims();
        let table = EmbeddingConfig::new(vocab, d_model)
            .with_initializer(Initializer::Normal { mean: 0.0, std })
            .init(device);
        let _ = table.weight.val();
        self.token_embedding = if frozen { table.no_grad() } else { table };
        self
    }

    /// The untied LM head set to `W_out = E^T` (a copy of the token embedding as it stands, which
    /// then trains on its own), or to zeros when `zero`
    /// ([`crate::recipe::LmHeadInit`]). `None` for a tied head, which has no matrix of its own.
    pub fn with_lm_head_start(mut self, zero: bool) -> Option<Transformer> {
        let head = self.lm_head.as_mut()?;
        let [d_model, vocab] = head.weight.dims();
        let device = head.weight.device();
        let start = if zero {
            Tensor::<2>::zeros([d_model, vocab], &device)
        } else {
            // Through TensorData: an owned, contiguous leaf with no link to the embedding's graph.
            let e = self.token_embedding.weight.val().detach().transpose();
            Tensor::from_data(e.into_data(), &device)
        };
        head.weight = burn::module::Param::from_tensor(start);
        Some(self)
    }

    /// `tokens`: `[batch, seq]`; `pad`: true at padding positions; `causal`: causal attention.
    pub fn forward(
        &self,
        tokens: Tensor<2, Int>,
        pad: Option<Tensor<2, Bool>>,
        causal: bool,
    ) -> EncoderOutput {
        let mut hidden = vec![self.embed(tokens)];
        for block in &self.blocks {
            let x = block.forward(
                self.embedding_dropout
                    .forward(hidden.last().unwrap().clone()),
                pad.clone(),
                causal,
            );
            hidden.push(x);
        }
        EncoderOutput { hidden }
    }

    /// Layer 0 of [`Self::forward`]: token plus position embeddings, `[batch, seq, d_model]`.
    pub fn embed(&self, tokens: Tensor<2, Int>) -> Tensor<3> {
        let [b, t] = tokens.dims();
        let positions = Tensor::<1, Int>::arange(0..t as i64, &tokens.device())
            .reshape([1, t])
            .expand([b, t]);
        self.token_embedding.forward(tokens) + self.position_embedding.forward(positions)
    }

    /// Vocabulary logits for hidden states `[n, d_model]` taken from the last layer.
    pub fn lm_logits(&self, last_hidden: Tensor<2>) -> Tensor<2> {
        let h = self.final_norm.forward(last_hidden);
        let logits = match &self.lm_head {
            Some(head) => head.forward(h),
            None => h.matmul(self.token_embedding.weight.val().transpose()),
        };
        logits + self.lm_bias.val().unsqueeze::<2>()
    }

    /// The token-embedding matrix `[vocab_size, d_model]`: row i is token id i.
    pub fn token_embedding_matrix(&self) -> Tensor<2> {
        self.token_embedding.weight.val()
    }

    /// The LM head's matrix `[vocab_size, d_model]` when untied.
    pub fn lm_head_matrix(&self) -> Option<Tensor<2>> {
        self.lm_head.as_ref().map(|h| h.weight.val().transpose())
    }
}

/// The model's hyper-parameters as an experiment config states them: everything but the
/// vocabulary size (the corpus's) and the longest sequence (the training's `seq_len`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelSettings {
    pub d_model: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub d_ff: usize,
    pub dropout: f64,
    pub qkv: QkvTying,
    pub norm: NormPlacement,
    pub tie_lm_head: bool,
    pub freeze_embeddings: bool,
    pub mixing: Mixing,
}

impl Default for ModelSettings {
    fn default() -> Self {
        ModelSettings {
            d_model: 128,
            n_layers: 4,
            n_heads: 4,
            d_ff: 512,
            dropout: 0.1,
            qkv: QkvTying::Untied,
            norm: NormPlacement::Pre,
            tie_lm_head: true,
            freeze_embeddings: false,
            mixing: Mixing::Attention,
        }
    }
}

impl ModelSettings {
    /// Checks every value burn can take; the message names the key (as in the `[model]` table
    /// of a config) and the value.
    pub fn validate(&self) -> Result<(), String> {
        for (key, value) in [
            ("d_model", self.d_model),
            ("n_layers", self.n_layers),
            ("n_heads", self.n_heads),
            ("d_ff", self.d_ff),
        ] {
            if value == 0 {
                return Err(format!("{key} must be at least 1, got 0"));
            }
        }
        if self.d_model % self.n_heads != 0 {
            return Err(format!(
                "n_heads ({}) must divide d_model ({})",
                self.n_heads, self.d_model
            ));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(format!("dropout must be in [0, 1), got {}", self.dropout));
        }
        Ok(())
    }

    pub fn to_config(&self, vocab_size: usize, max_len: usize) -> TransformerConfig {
        TransformerConfig::new(vocab_size)
            .with_d_model(self.d_model)
            .with_n_layers(self.n_layers)
            .with_n_heads(self.n_heads)
            .with_d_ff(self.d_ff)
            .with_max_len(max_len)
            .with_dropout(self.dropout)
            .with_qkv(self.qkv)
            .with_norm(self.norm)
            .with_tie_lm_head(self.tie_lm_head)
            .with_freeze_embeddings(self.freeze_embeddings)
            .with_mixing(self.mixing)
    }
}
