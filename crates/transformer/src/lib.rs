//! The contextual side of the comparison: a BERT-style encoder in burn 0.22, trained with a
//! masked-LM or causal-LM objective on the `corpus` crate's ids (the words keep their word2vec
//! ids; the special tokens follow them).
//!
//! * [`model`]: the network. Where W_Q, W_K, W_V are tied is [`model::QkvTying`] and
//!   [`model::SelfAttention`]; `forward` returns every layer's hidden states.
//! * [`data`]: fixed-length sequences, the held-out split, masking, batches.
//! * [`training`]: AdamW with warm-up and decay, held-out loss, the training run.
//! * [`engine`]: the glue that runs training on burn-train's `Learner`, on one device or several.
//! * [`checkpoint`]: atomic checkpoints, recovery after a crash, the run-directory lock.
//! * [`backend`]: choosing flex, ndarray or wgpu at run time.

pub mod backend;
pub mod checkpoint;
pub mod data;
pub mod engine;
pub mod model;
pub mod training;

pub use model::{Transformer, TransformerConfig};
