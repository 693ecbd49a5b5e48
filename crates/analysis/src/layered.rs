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
//!
//! The two reductions of Bommasani et al. (2020) to static word vectors are written once here,
//! for any [`Layered`] model: [`decontextualized`] (each word read alone) and [`aggregated`]
//! (each word's vectors mean-pooled over a sample of its occurrences in a corpus).

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

/// Mean-pooled contextual vectors, one table per layer, and how many occurrences each word's
/// vector averages.
pub struct Aggregated {
    /// One per layer (0..=N). Only words with at least one occurrence have a row: a word never
    /// seen is out of vocabulary for every benchmark (skipped and counted like any OOV word),
    /// never a zero vector scored as if it were known.
    pub tables: Vec<word2vec::WordVectors>,
    /// Occurrences averaged, per word of `words` (0 for a word never seen).
    pub occurrences: Vec<u32>,
    /// The `N` of "up to N occurrences".
    pub max_occurrences: u32,
}

impl Aggregated {
    /// Words whose vector averages the full `N` occurrences.
    pub fn words_at_max(&self) -> usize {
        self.occurrences
            .iter()
            .filter(|&&c| c == self.max_occurrences)
            .count()
    }

    /// Words averaged over fewer than `k` occurrences (unseen words included).
    pub fn words_below(&self, k: u32) -> usize {
        self.occurrences.iter().filter(|&&c| c < k).count()
    }
}

/// The occurrences [`aggregated`] pools, as sorted positions in `sequences`: for each of the
/// ids `0..n`, a uniform random sample of up to `cap` of its positions (a reservoir per word,
/// Vitter's algorithm R, seeded by `seed`).
pub fn sample_occurrences(sequences: &[u32], n: usize, cap: usize, seed: u64) -> Vec<usize> {
    let mut rng = crate::inference::SplitMix64::new(seed);
    let mut sample: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut seen = vec![0usize; n];
    for (pos, &id) in sequences.iter().enumerate() {
        let w = id as usize;
        if w >= n || cap == 0 {
            continue;
        }
        if sample[w].len() < cap {
            sample[w].push(pos);
        } else {
            let j = crate::inference::index(&mut rng, seen[w] + 1);
            if j < cap {
                sample[w][j] = pos;
            }
        }
        seen[w] += 1;
    }
    let mut chosen: Vec<usize> = sample.iter().flatten().copied().collect();
    chosen.sort_unstable();
    chosen
}

impl Aggregated {
    /// Per-layer running sums (`words x d` each) and occurrence counts turned into tables: each
    /// word seen at least once gets its mean; an unseen word gets no row.
    fn from_sums(
        words: &[String],
        d: usize,
        sums: Vec<Vec<f64>>,
        count: Vec<u32>,
        max_occurrences: u32,
    ) -> Aggregated {
        let present: Vec<usize> = (0..count.len()).filter(|&w| count[w] > 0).collect();
        let kept: Vec<String> = present.iter().map(|&w| words[w].clone()).collect();
        let tables = sums
            .into_iter()
            .map(|s| {
                let data = present
                    .iter()
                    .flat_map(|&w| {
                        let c = count[w] as f64;
                        s[w * d..(w + 1) * d].iter().map(move |x| (x / c) as f32)
                    })
                    .collect();
                word2vec::WordVectors::new(kept.clone(), d, data)
            })
            .collect();
        Aggregated {
            tables,
            occurrences: count,
            max_occurrences,
        }
    }
}

/// Mean-pools, per layer, each of the ids `0..words.len()` over a uniform random sample of up
/// to `max_occurrences` of its occurrences anywhere in `sequences` (row-major, `seq_len` ids
/// each, as the model was trained on).
///
/// The sample is drawn first ([`sample_occurrences`], seeded by `seed`), so a frequent word's
/// contexts come from the whole split, not from its first N occurrences in an article-ordered
/// corpus; then only the rows holding a sampled occurrence go through the model, `batch` at a
/// time, and only running sums (`layers x words x width`, in f64) are kept, never the
/// occurrences themselves. A sampled occurrence with no vector (a subword model's word cut off
/// or read as its unknown piece) is not counted; a word with no counted occurrence gets no row.
/// `progress(done, total)` is called after each batch with rows read so far and in all.
#[allow(clippy::too_many_arguments)]
pub fn aggregated(
    model: &dyn Layered,
    words: &[String],
    sequences: &[u32],
    seq_len: usize,
    max_occurrences: u32,
    batch: usize,
    seed: u64,
    mut progress: impl FnMut(usize, usize),
) -> Aggregated {
    let (n, d) = (words.len(), model.width());
    let chosen = sample_occurrences(sequences, n, max_occurrences as usize, seed);
    let rows = rows_of(&chosen, seq_len);
    let mut sums = vec![vec![0f64; n * d]; model.n_layers()];
    let mut count = vec![0u32; n];
    let mut next = 0; // index into `chosen`
    for (done, chunk) in rows.chunks(batch.max(1)).enumerate() {
        let ids: Vec<u32> = chunk
            .iter()
            .flat_map(|&r| sequences[r * seq_len..(r + 1) * seq_len].iter().copied())
            .collect();
        let states = model.word_states(&ids, seq_len);
        for (i, &r) in chunk.iter().enumerate() {
            while next < chosen.len() && chosen[next] / seq_len == r {
                let pos = chosen[next];
                next += 1;
                let at = i * seq_len + pos % seq_len;
                if !states.present[at] {
                    continue;
                }
                let w = sequences[pos] as usize;
                count[w] += 1;
                for (l, h) in states.layers.iter().enumerate() {
                    let dst = &mut sums[l][w * d..(w + 1) * d];
                    for (s, x) in dst.iter_mut().zip(&h[at * d..(at + 1) * d]) {
                        *s += *x as f64;
                    }
                }
            }
        }
        progress(((done + 1) * batch.max(1)).min(rows.len()), rows.len());
    }
    Aggregated::from_sums(words, d, sums, count, max_occurrences)
}

/// How many rows [`aggregated`] reads for these arguments (`n` words pooled): what its cost is
/// proportional to, known before it starts.
pub fn aggregated_rows(
    sequences: &[u32],
    seq_len: usize,
    n: usize,
    max_occurrences: u32,
    seed: u64,
) -> usize {
    rows_of(
        &sample_occurrences(sequences, n, max_occurrences as usize, seed),
        seq_len,
    )
    .len()
}

/// The rows (in order, each once) that hold the sampled positions `chosen` (sorted).
fn rows_of(chosen: &[usize], seq_len: usize) -> Vec<usize> {
    let mut rows: Vec<usize> = chosen.iter().map(|&p| p / seq_len).collect();
    rows.dedup();
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A planted model: one layer whose vector at a position is `(id, sum of its row's ids)`;
    /// positions holding id 5 have no vector (a word the model cannot read).
    struct Planted;

    impl Layered for Planted {
        fn n_layers(&self) -> usize {
            1
        }
        fn width(&self) -> usize {
            2
        }
        fn word_states(&self, rows: &[u32], seq_len: usize) -> WordStates {
            WordStates {
                layers: vec![rows
                    .chunks(seq_len)
                    .flat_map(|row| {
                        let sum: u32 = row.iter().sum();
                        row.iter().flat_map(move |&id| [id as f32, sum as f32])
                    })
                    .collect()],
                present: rows.iter().map(|&id| id != 5).collect(),
            }
        }
    }

    #[test]
    fn pooling_reads_the_rows_that_hold_a_sampled_occurrence() {
        // Rows 0 and 2 hold words below n = 3; row 1 only specials (9) and word 3.
        let sequences = [9, 0, 2, 1, 9, 3, 9, 9, 2, 2, 9, 9];
        assert_eq!(aggregated_rows(&sequences, 4, 3, 5, 1), 2);
        // One occurrence per word: rows 0 (words 0 and 1) and the row of word 2's sample.
        let chosen = sample_occurrences(&sequences, 3, 1, 1);
        assert_eq!(chosen.len(), 3);
        let rows: std::collections::BTreeSet<usize> = chosen.iter().map(|p| p / 4).collect();
        assert_eq!(aggregated_rows(&sequences, 4, 3, 1, 1), rows.len());
    }

    #[test]
    fn pooling_averages_the_sampled_occurrences_and_skips_those_without_a_vector() {
        // Rows of 3: [0 1 5] [1 5 9] [0 1 1], their sums 6, 15, 2. Words 0, 1, 5 of 6 pooled
        // (all occurrences: cap 9). Word 1's rows are 0, 1, 2, 2: its second coordinate is
        // (6 + 15 + 2 + 2) / 4; word 5 has no vector anywhere, so no row; words 2-4 never occur.
        let sequences = [0, 1, 5, 1, 5, 9, 0, 1, 1];
        let words: Vec<String> = (0..6).map(|w| format!("w{w}")).collect();
        let mut calls = Vec::new();
        let agg = aggregated(&Planted, &words, &sequences, 3, 9, 2, 7, |d, t| {
            calls.push((d, t))
        });
        assert_eq!(agg.occurrences, vec![2, 4, 0, 0, 0, 0]);
        assert_eq!(agg.tables.len(), 1);
        let t = &agg.tables[0];
        assert_eq!(t.words(), ["w0".to_string(), "w1".to_string()]);
        assert_eq!(t.row(0), [0.0, 4.0]); // rows 0 and 2
        assert_eq!(t.row(1), [1.0, 6.25]);
        // Three rows read two at a time.
        assert_eq!(calls, vec![(2, 3), (3, 3)]);
        // A cap of 1 keeps one occurrence of each word.
        let one = aggregated(&Planted, &words, &sequences, 3, 1, 2, 7, |_, _| {});
        assert_eq!(one.occurrences, vec![1, 1, 0, 0, 0, 0]);
        assert_eq!(one.words_at_max(), 2);
    }
}
