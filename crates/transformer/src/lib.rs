//! The contextual side of the comparison: a BERT-style encoder in burn 0.22, trained with a
//! masked-LM or causal-LM objective on the `corpus` crate's ids (the words keep their word2vec
//! ids; the special tokens follow them).
//!
//! * [`model`]: the network. Where W_Q, W_K, W_V are tied is [`model::QkvTying`] and
//!   [`model::SelfAttention`]; `forward` returns every layer's hidden states.
//! * [`data`]: fixed-length sequences, the held-out split, masking, batches.
//! * [`recipe`]: what a training run is (config, plateau rule, curve points, errors).
//! * [`loss`]: the cross-entropy of a batch at its target positions.
//! * [`training`]: AdamW with warm-up and decay, held-out loss, the training run.
//! * [`engine`]: the glue that runs training on burn-train's `Learner`, on one device or several.
//! * [`checkpoint`]: atomic checkpoints, recovery after a crash, the run-directory lock.
//! * [`progress`]: a run's progress on stderr.
//! * [`backend`]: choosing flex, ndarray or wgpu at run time.
//!
//! Modules depend one way: `data`, `model`, `recipe` and `progress` on nothing here but
//! `data`/`model`; `loss` on those; `checkpoint` on `model` and `recipe`; `engine` on
//! `checkpoint`, `loss` and `recipe`; `training` on all of them (`scripts/module_cycles.py`
//! checks there is no cycle).

pub mod backend;
pub mod checkpoint;
pub mod data;
pub mod engine;
pub mod loss;
pub mod model;
pub mod progress;
pub mod recipe;
pub mod training;

pub use model::{Transformer, TransformerConfig};
