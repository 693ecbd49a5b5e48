//! What embedlab measures on a table of word vectors, whatever produced it.
//!
//! * [`eval_vocab`]: which rows a benchmark may use (`restrict_vocab`) and how words are matched
//!   (case-insensitively, the most frequent casing winning, as gensim does).
//! * [`analogy`]: 3CosAdd and 3CosMul on questions-words files, per section, semantic/syntactic.
//! * [`similarity`]: Pearson and Spearman against human similarity judgements, OOV counted.
//! * [`benchmarks`]: a table scored on every analogy and similarity set, with chance levels and
//!   each item's outcome.
//! * [`stats`]: the correlation coefficients.
//! * [`inference`]: intervals that carry both the items' sampling and the seeds' spread, exact
//!   McNemar and Fisher tests, permutation chance bands.
//! * [`evidence`]: scores and differences of representations from per-item outcomes over
//!   seeds, best layers chosen on a dev half of the items.
//! * [`representations`]: a trained transformer turned into tables of word vectors — its
//!   embedding matrix, and per layer decontextualized and mean-pooled (aggregated) vectors.
//! * [`subword`]: a word's vector from a subword model, the mean of its pieces.
//! * [`layered`]: a model read layer by layer at word positions (whole-word or subword), what
//!   the word-level measures read.
//! * [`collocation`]: whether words that occur together get similar vectors (PMI pairs vs
//!   shuffled pairs).
//! * [`geometry`]: W_Q/W_K/W_V similarity per layer and head, and contextuality measures.
//! * [`bilinear`]: each head as the bilinear form W_Q W_K^T: symmetry, directionality, alignment
//!   with the identity, the scores it gives word pairs.
//! * [`context_gain`]: whether a masked LM predicts from context, at its `[MASK]` targets.
//!
//! The numbers agree with gensim 4.4 (`tests/conformance.rs`).

pub mod analogy;
pub mod benchmarks;
pub mod bilinear;
pub mod collocation;
pub mod context_gain;
pub mod error;
pub mod eval_vocab;
pub mod evidence;
pub mod geometry;
pub mod inference;
pub mod layered;
pub mod representations;
pub mod similarity;
pub mod stats;
pub mod subword;

pub use analogy::{AnalogyMethod, AnalogyReport, AnalogySet};
pub use error::EvalError;
pub use eval_vocab::EvalVocab;
pub use similarity::{SimilarityReport, SimilaritySet};
