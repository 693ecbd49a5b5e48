//! From a trained transformer to tables of word vectors that the evaluation scores exactly as it
//! scores word2vec (Bommasani et al. 2020, "Interpreting pretrained contextualized
//! representations via reductions to static embeddings").
//!
//! * [`embedding_table`]: rows of the input token-embedding matrix (and [`lm_head_table`], the
//!   output matrix when the head is untied).
//! * [`decontextualized`]: the word fed alone, `[CLS] w [SEP]`, through the encoder; layer l's
//!   hidden state at the word's position. One table per layer, 0 = embedding output.
//! * [`aggregated`]: the mean of the word's hidden states over its first N occurrences in the
//!   corpus (Bommasani et al. found mean pooling best). **This is where contextual vectors are
//!   pooled.** The corpus pass streams batches through the model and keeps only running sums
//!   (`layers x words x d_model`), never the occurrences themselves.
//!
//! Which words get vectors is the evaluation vocabulary: the first `n_words` ids, which are the
//! corpus's most frequent words (the `corpus` crate orders its vocabulary by count), so the
//! tables' rows are in frequency order as `restrict_vocab` expects.

use burn::tensor::{Device, Int, Tensor, TensorData};
use corpus::SpecialTokens;
use transformer::Transformer;
use word2vec::WordVectors;

fn table(words: &[String], dim: usize, data: Vec<f32>) -> WordVectors {
    WordVectors::new(words.to_vec(), dim, data)
}

fn to_vec(t: Tensor<2>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().expect("f32 tensor")
}

/// Every layer's hidden states (0..=N) for `[batch, seq_len]` token ids, as flat row-major
/// `batch x seq_len x d_model` vectors.
pub fn hidden_states(
    model: &Transformer,
    ids: &[u32],
    seq_len: usize,
    device: &Device,
) -> Vec<Vec<f32>> {
    let ids: Vec<i64> = ids.iter().map(|&x| x as i64).collect();
    let b = ids.len() / seq_len;
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, seq_len]), device);
    model
        .forward(tokens, None, false)
        .hidden
        .into_iter()
        .map(|h| h.into_data().try_into_vec::<f32>().expect("f32"))
        .collect()
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

/// One table per layer (0..=N): each word alone between `[CLS]` and `[SEP]`.
pub fn decontextualized(
    model: &Transformer,
    words: &[String],
    specials: SpecialTokens,
    device: &Device,
    batch: usize,
) -> Vec<WordVectors> {
    let n_layers = model.blocks.len() + 1;
    let d = model.token_embedding_matrix().dims()[1];
    let mut data = vec![Vec::with_capacity(words.len() * d); n_layers];
    for start in (0..words.len()).step_by(batch.max(1)) {
        let end = (start + batch.max(1)).min(words.len());
        let ids: Vec<i64> = (start..end)
            .flat_map(|w| [specials.cls as i64, w as i64, specials.sep as i64])
            .collect();
        let b = end - start;
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, 3]), device);
        for (l, h) in model
            .forward(tokens, None, false)
            .hidden
            .into_iter()
            .enumerate()
        {
            let word_position = h.slice([0..b, 1..2, 0..d]).reshape([b, d]);
            data[l].extend(to_vec(word_position));
        }
    }
    data.into_iter().map(|v| table(words, d, v)).collect()
}

/// Mean-pooled contextual vectors, one table per layer, and how many occurrences each word's
/// vector averages.
pub struct Aggregated {
    pub tables: Vec<WordVectors>,
    pub occurrences: Vec<u32>,
    /// The `N` of "up to N occurrences".
    pub max_occurrences: u32,
}

/// Streams `sequences` (row-major, `seq_len` ids each, as the model was trained on) through the
/// model `batch` sequences at a time and averages, per layer, each of the first `words.len()`
/// ids' hidden states over its first `max_occurrences` occurrences. Sequences whose words have
/// all reached `max_occurrences` are skipped, and the pass stops once every word has.
/// `progress(done, total)` is called after each batch.
#[allow(clippy::too_many_arguments)]
pub fn aggregated(
    model: &Transformer,
    words: &[String],
    sequences: &[u32],
    seq_len: usize,
    max_occurrences: u32,
    batch: usize,
    device: &Device,
    mut progress: impl FnMut(usize, usize),
) -> Aggregated {
    let n = words.len();
    let n_layers = model.blocks.len() + 1;
    let d = model.token_embedding_matrix().dims()[1];
    let mut sums = vec![vec![0f64; n * d]; n_layers];
    let mut count = vec![0u32; n];
    let n_seq = sequences.len() / seq_len;
    let mut rows: Vec<usize> = Vec::with_capacity(batch);
    let mut remaining = n; // words still below max_occurrences
    let mut seq = 0;
    while seq < n_seq && remaining > 0 {
        rows.clear();
        while rows.len() < batch && seq < n_seq {
            let s = &sequences[seq * seq_len..(seq + 1) * seq_len];
            if s.iter()
                .any(|&id| (id as usize) < n && count[id as usize] < max_occurrences)
            {
                rows.push(seq);
            }
            seq += 1;
        }
        if rows.is_empty() {
            break;
        }
        let ids: Vec<u32> = rows
            .iter()
            .flat_map(|&r| sequences[r * seq_len..(r + 1) * seq_len].iter().copied())
            .collect();
        let hidden = hidden_states(model, &ids, seq_len, device);
        for (i, &r) in rows.iter().enumerate() {
            for (p, &id) in sequences[r * seq_len..(r + 1) * seq_len].iter().enumerate() {
                let w = id as usize;
                if w >= n || count[w] >= max_occurrences {
                    continue;
                }
                count[w] += 1;
                if count[w] == max_occurrences {
                    remaining -= 1;
                }
                let at = (i * seq_len + p) * d;
                for (l, h) in hidden.iter().enumerate() {
                    let dst = &mut sums[l][w * d..(w + 1) * d];
                    for (s, x) in dst.iter_mut().zip(&h[at..at + d]) {
                        *s += *x as f64;
                    }
                }
            }
        }
        progress(seq, n_seq);
    }
    let tables = sums
        .into_iter()
        .map(|s| {
            let data = s
                .chunks_exact(d)
                .zip(&count)
                .flat_map(|(row, &c)| row.iter().map(move |x| (x / c.max(1) as f64) as f32))
                .collect();
            table(words, d, data)
        })
        .collect();
    Aggregated {
        tables,
        occurrences: count,
        max_occurrences,
    }
}
