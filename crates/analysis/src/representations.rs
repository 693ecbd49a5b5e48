//! From a trained transformer to tables of word vectors that the evaluation scores exactly as it
//! scores word2vec (Bommasani et al. 2020, "Interpreting pretrained contextualized
//! representations via reductions to static embeddings").
//!
//! * [`embedding_table`]: rows of the input token-embedding matrix (and [`lm_head_table`], the
//!   output matrix when the head is untied).
//! * [`decontextualized`]: the word fed alone, `[CLS] w [SEP]`, through the encoder; layer l's
//!   hidden state at the word's position. One table per layer, 0 = embedding output.
//! * [`aggregated`]: the mean of the word's hidden states over a uniform random sample of up to
//!   N of its occurrences in the whole training split (Bommasani et al. found mean pooling
//!   best). **This is where contextual vectors are pooled.** The corpus pass streams batches
//!   through the model and keeps only running sums (`layers x words x d_model`), never the
//!   occurrences themselves. A word with no occurrence gets no row (it is OOV).
//! * [`Readout`]: every table is read with the attention mask the model was trained with (causal
//!   for a causal LM), from the raw residual stream or through the final LayerNorm.
//!
//! Layer 0 of the decontextualized and aggregated tables is token + position embedding; the
//! token-only table is [`embedding_table`], reported beside it so that position does not pass
//! for meaning.
//!
//! Which words get vectors is the evaluation vocabulary: the first `n_words` ids, which are the
//! corpus's most frequent words (the `corpus` crate orders its vocabulary by count), so the
//! tables' rows are in frequency order as `restrict_vocab` expects.

use burn::tensor::{Device, Int, Tensor, TensorData};
use corpus::SpecialTokens;
use transformer::Transformer;
use word2vec::WordVectors;

pub use crate::layered::Aggregated;

fn table(words: &[String], dim: usize, data: Vec<f32>) -> WordVectors {
    WordVectors::new(words.to_vec(), dim, data)
}

fn to_vec(t: Tensor<2>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().expect("f32 tensor")
}

/// How hidden states are read out of a model.
///
/// * `causal`: attend as the model was trained. A causal LM's layers 1..N never saw a token
///   attend to later tokens; read bidirectionally they would be probed out of distribution.
/// * `final_norm`: pass every layer's vector through the model's final LayerNorm. In a pre-LN
///   model the residual stream is never normalised inside the blocks, so the raw stream keeps
///   the token embedding (and its scale) in every layer; Ethayarajh (2019) measured BERT's
///   normalised outputs. Both readouts are reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readout {
    pub causal: bool,
    pub final_norm: bool,
}

impl Readout {
    /// The readout of a model trained with `objective`, raw or normalised.
    pub fn of(objective: transformer::data::Objective, final_norm: bool) -> Readout {
        Readout {
            causal: objective == transformer::data::Objective::Clm,
            final_norm,
        }
    }

    /// A short name for tables: `raw` or `norm`.
    pub fn name(self) -> &'static str {
        if self.final_norm {
            "norm"
        } else {
            "raw"
        }
    }
}

/// Every layer's hidden states (0..=N) for `[batch, seq_len]` token ids, as the model computes
/// them under `readout`, flat row-major `batch x seq_len x d_model` vectors.
pub fn hidden_states(
    model: &Transformer,
    ids: &[u32],
    seq_len: usize,
    readout: Readout,
    device: &Device,
) -> Vec<Vec<f32>> {
    hidden_states_padded(model, ids, seq_len, readout, None, device)
}

/// [`hidden_states`] of sequences padded with `pad` (sentences of different lengths in one
/// batch): no position attends to a padding position, as the model's own padding mask has it.
pub fn hidden_states_padded(
    model: &Transformer,
    ids: &[u32],
    seq_len: usize,
    readout: Readout,
    pad: Option<u32>,
    device: &Device,
) -> Vec<Vec<f32>> {
    let (tokens, mask) = tokens_and_padding(ids, seq_len, pad, device);
    layers(model, tokens, mask, readout)
        .into_iter()
        .map(|h| h.into_data().try_into_vec::<f32>().expect("f32"))
        .collect()
}

/// Rows of `seq_len` ids as a batch of tokens, and where `pad` is given, the positions that
/// hold it (masked out of attention).
fn tokens_and_padding(
    ids: &[u32],
    seq_len: usize,
    pad: Option<u32>,
    device: &Device,
) -> (Tensor<2, Int>, Option<Tensor<2, burn::tensor::Bool>>) {
    let ids: Vec<i64> = ids.iter().map(|&x| x as i64).collect();
    let b = ids.len() / seq_len;
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, seq_len]), device);
    let mask = pad.map(|p| tokens.clone().equal_elem(p as i64));
    (tokens, mask)
}

/// The model's hidden states under `readout`, as tensors.
fn layers(
    model: &Transformer,
    tokens: Tensor<2, Int>,
    pad: Option<Tensor<2, burn::tensor::Bool>>,
    readout: Readout,
) -> Vec<Tensor<3>> {
    let hidden = model.forward(tokens, pad, readout.causal).hidden;
    if readout.final_norm {
        hidden
            .into_iter()
            .map(|h| model.final_norm.forward(h))
            .collect()
    } else {
        hidden
    }
}

/// One of our transformers, read under `readout`: ids below `n_words` are words, the rest
/// (`[CLS]`, `[SEP]`, `[MASK]`, `[PAD]`) are read but have no vector. `pad`, when given, pads
/// shorter rows (sentences): no position attends to it.
pub struct WholeWord<'a> {
    pub model: &'a Transformer,
    /// Ids below this are words; the rest are special tokens.
    pub n_words: u32,
    pub readout: Readout,
    /// The id that pads shorter rows, masked out of attention.
    pub pad: Option<u32>,
    pub device: &'a Device,
}

impl<'a> WholeWord<'a> {
    /// `model` read under `readout`, ids below `n_words` as words, rows of full length (no pad).
    pub fn new(model: &'a Transformer, n_words: u32, readout: Readout, device: &'a Device) -> Self {
        Self {
            model,
            n_words,
            readout,
            pad: None,
            device,
        }
    }
}

impl crate::layered::Layered for WholeWord<'_> {
    fn n_layers(&self) -> usize {
        self.model.blocks.len() + 1
    }

    fn width(&self) -> usize {
        self.model.token_embedding_matrix().dims()[1]
    }

    fn word_states(&self, rows: &[u32], seq_len: usize) -> crate::layered::WordStates {
        crate::layered::WordStates {
            layers: hidden_states_padded(
                self.model,
                rows,
                seq_len,
                self.readout,
                self.pad,
                self.device,
            ),
            present: rows.iter().map(|&id| id < self.n_words).collect(),
        }
    }
}

/// One of our transformers read under both readouts from one forward pass: layers `0..=N` of
/// the raw residual stream, then the same `0..=N` through the final LayerNorm, as one list of
/// `2 (N + 1)` layers. `inner.readout.final_norm` is ignored; the rest of `inner` (causal
/// attention, padding, which ids are words) applies to both halves.
///
/// The per-layer measures treat every layer alike and draw their samples from positions, not
/// vectors ([`crate::geometry::contextuality`]), so each half gives what reading that readout
/// alone gives (to the last bit on flex, whose forward pass is deterministic; tested), for one
/// forward pass instead of two. The measures then hold both readouts' samples at once: twice
/// the memory of one.
pub struct BothReadouts<'a> {
    pub inner: WholeWord<'a>,
}

impl crate::layered::Layered for BothReadouts<'_> {
    fn n_layers(&self) -> usize {
        2 * crate::layered::Layered::n_layers(&self.inner)
    }

    fn width(&self) -> usize {
        crate::layered::Layered::width(&self.inner)
    }

    fn word_states(&self, rows: &[u32], seq_len: usize) -> crate::layered::WordStates {
        let w = &self.inner;
        let (tokens, mask) = tokens_and_padding(rows, seq_len, w.pad, w.device);
        let raw = w.model.forward(tokens, mask, w.readout.causal).hidden;
        let normed: Vec<Tensor<3>> = raw
            .iter()
            .map(|h| w.model.final_norm.forward(h.clone()))
            .collect();
        crate::layered::WordStates {
            layers: raw
                .into_iter()
                .chain(normed)
                .map(|h| h.into_data().try_into_vec::<f32>().expect("f32"))
                .collect(),
            present: rows.iter().map(|&id| id < w.n_words).collect(),
        }
    }
}

/// The input embedding rows of `words` (ids `0..words.len()`).
pub fn embedding_table(model: &Transformer, words: &[String]) -> WordVectors {
    let e = model.token_embedding_matrix();
    let d = e.dims()[1];
    table(words, d, to_vec(e.slice([0..words.len(), 0..d])))
}

/// The LM head's rows of `words` when the head is untied (`None` when tied: it is the embedding).
pub fn lm_head_table(model: &Transformer, words: &[String]) -> Option<WordVectors> {
    model.lm_head_matrix().map(|h| {
        let d = h.dims()[1];
        table(words, d, to_vec(h.slice([0..words.len(), 0..d])))
    })
}

/// One table per layer (0..=N): each word alone between `[CLS]` and `[SEP]`
/// ([`crate::layered::decontextualized`]).
pub fn decontextualized(
    model: &Transformer,
    words: &[String],
    specials: SpecialTokens,
    readout: Readout,
    device: &Device,
    batch: usize,
) -> Vec<WordVectors> {
    let reader = WholeWord::new(model, words.len() as u32, readout, device);
    crate::layered::decontextualized(&reader, words, specials.cls, specials.sep, batch)
}

/// [`crate::layered::aggregated`] for one of our transformers read under `readout`: each of
/// the ids `0..words.len()` mean-pooled, per layer, over a seeded sample of up to
/// `max_occurrences` of its occurrences in `sequences`.
#[allow(clippy::too_many_arguments)]
pub fn aggregated(
    model: &Transformer,
    words: &[String],
    sequences: &[u32],
    seq_len: usize,
    max_occurrences: u32,
    batch: usize,
    readout: Readout,
    seed: u64,
    device: &Device,
    progress: impl FnMut(usize, usize),
) -> Aggregated {
    let reader = WholeWord::new(model, words.len() as u32, readout, device);
    crate::layered::aggregated(
        &reader,
        words,
        sequences,
        seq_len,
        max_occurrences,
        batch,
        seed,
        progress,
    )
}
