//! A model read layer by layer at the positions of words: what the word-level measures
//! (contextuality, decontextualized vectors) need from a model, whatever its vocabulary.
//!
//! The measures walk rows of the study's whole-word ids. A [`Layered`] model turns a batch of
//! such rows into every layer's vector at every word position:
//!
//! * [`crate::representations::WholeWord`]: one of our transformers, whose tokens are the
//!   study's words; a position's vector is that token's hidden state.
//! * [`crate::subword::SubwordReader`]: a pretrained checkpoint with a WordPiece or BPE
//!   vocabulary; each row is read as the checkpoint reads text and a word's vector is the mean
//!   of its pieces' hidden states (Bommasani et al. 2020).
//!
//! Positions that are not words (special tokens, padding, a word the model cannot read) have
//! no vector and are marked absent, so every measure skips them alike.

/// Every layer's vectors at the word positions of a batch of rows.
pub struct WordStates {
    /// One per layer (0 = the embedding output), row-major `rows x seq_len x width`; the
    /// vector of an absent position is unspecified.
    pub layers: Vec<Vec<f32>>,
    /// `rows x seq_len`: whether the position holds a word with a vector.
    pub present: Vec<bool>,
}

/// A model whose layers can be read at the word positions of rows of whole-word ids.
pub trait Layered {
    /// How many layers [`Layered::word_states`] gives, the embedding output included.
    fn n_layers(&self) -> usize;
    /// The width of every layer's vectors.
    fn width(&self) -> usize;
    /// `rows` holds whole rows of `seq_len` ids of the study's vocabulary.
    fn word_states(&self, rows: &[u32], seq_len: usize) -> WordStates;
}

/// One table per layer (0 = the embedding output): each of `words` (ids `0..words.len()`) read
/// alone, as the row `cls w sep`, its vector at the word's position (Bommasani et al.'s
/// decontextualized vectors). A subword model reads the row with its own start and end pieces
/// ([`crate::subword::SubwordReader`]); a word it cannot read has no row (out of vocabulary).
pub fn decontextualized(
    model: &dyn Layered,
    words: &[String],
    cls: u32,
    sep: u32,
    batch: usize,
) -> Vec<word2vec::WordVectors> {
    let (n_layers, d) = (model.n_layers(), model.width());
    let mut kept = Vec::new();
    let mut data = vec![Vec::with_capacity(words.len() * d); n_layers];
    for start in (0..words.len()).step_by(batch.max(1)) {
        let end = (start + batch.max(1)).min(words.len());
        let rows: Vec<u32> = (start..end).flat_map(|w| [cls, w as u32, sep]).collect();
        let states = model.word_states(&rows, 3);
        for (i, w) in (start..end).enumerate() {
            if !states.present[i * 3 + 1] {
                continue;
            }
            kept.push(words[w].clone());
            let at = (i * 3 + 1) * d;
            for (l, h) in states.layers.iter().enumerate() {
                data[l].extend_from_slice(&h[at..at + d]);
            }
        }
    }
    data.into_iter()
        .map(|v| word2vec::WordVectors::new(kept.clone(), d, v))
        .collect()
}
