//! Word vectors from a subword model: a word's vector is the mean of its pieces' vectors, as
//! Bommasani et al. (2020) pool a word's subword pieces, so that a pretrained model with a
//! WordPiece or BPE vocabulary is scored on the same word list as a whole-word model.

use pretrained::Tokenizer;

use crate::layered::{Layered, WordStates};
use word2vec::WordVectors;

/// One row per word of `words` (in their order) that the tokenizer splits into known pieces:
/// the mean of those pieces' rows of `table` (`pieces x d`). A word that becomes the unknown
/// piece, or no piece at all, gets no row: it is out of vocabulary for every benchmark, as an
/// unseen word is for a whole-word model. Also returns how many pieces each kept word has.
pub fn piece_mean_table(
    table: &[f32],
    d: usize,
    tokenizer: &Tokenizer,
    words: &[String],
) -> (WordVectors, Vec<usize>) {
    let unk = tokenizer.specials().unk;
    let n_pieces = table.len() / d;
    let (mut kept, mut data, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    for w in words {
        // The word as it stands inside running text: after a space, which byte-level BPE
        // reads as part of it (`Ġword`, the piece GPT-2 sees for every word but a text's
        // first); WordPiece ignores it.
        let framed = tokenizer.encode_words(&["", w.as_str()]);
        let ids = &framed.ids[framed.spans[1].clone()];
        if ids.is_empty()
            || ids
                .iter()
                .any(|&p| Some(p) == unk || p as usize >= n_pieces)
        {
            continue;
        }
        let mut mean = vec![0f64; d];
        for &p in ids {
            for (m, x) in mean
                .iter_mut()
                .zip(&table[p as usize * d..(p as usize + 1) * d])
            {
                *m += *x as f64;
            }
        }
        data.extend(mean.iter().map(|m| (m / ids.len() as f64) as f32));
        kept.push(w.clone());
        counts.push(ids.len());
    }
    (WordVectors::new(kept, d, data), counts)
}

/// [`crate::layered::aggregated`] for a subword model: the occurrences the whole-word models
/// pool (the same seeded sample of up to `max_occurrences` per word among the first `n` ids of
/// `vocab`), each occurrence's vector the mean of its pieces' hidden states.
///
/// `sequences` are the study's rows of `seq_len` ids, read as [`SubwordReader`] reads them
/// (`corpus_unk` is the whole-word corpus's unknown word). An occurrence whose pieces were cut
/// off, or that became `[UNK]`, is not counted.
#[allow(clippy::too_many_arguments)]
pub fn aggregated(
    model: &pretrained::Pretrained,
    tokenizer: &Tokenizer,
    vocab: &[String],
    n: usize,
    corpus_unk: Option<u32>,
    sequences: &[u32],
    seq_len: usize,
    max_occurrences: u32,
    batch: usize,
    seed: u64,
    max_positions: usize,
    device: &burn::tensor::Device,
    progress: impl FnMut(usize, usize),
) -> crate::layered::Aggregated {
    let reader = SubwordReader::new(model, tokenizer, vocab, corpus_unk, max_positions, device);
    crate::layered::aggregated(
        &reader,
        &vocab[..n],
        sequences,
        seq_len,
        max_occurrences,
        batch,
        seed,
        progress,
    )
}

/// A pretrained checkpoint read at the word positions of rows of the study's whole-word ids
/// (the [`Layered`] of a subword model). Each row is read as the checkpoint reads text: its
/// words as pieces, each after a space (as in [`piece_mean_table`]), framed by the tokenizer's
/// start and end pieces where it has them (GPT-2, which has none, after its `<|endoftext|>`:
/// `Specials::bos`), cut at `max_positions` with the end piece kept;
/// rows are padded to the longest in their batch and the padding masked. Ids below
/// `vocab.len()` are words (`vocab[id]`); `corpus_unk`, the whole-word corpus's unknown word,
/// becomes the tokenizer's unknown piece (left out where it has none, as byte-level BPE); any
/// other id (the whole-word model's `[CLS]`, `[SEP]`, `[PAD]`) is left out. A word's vector is
/// the mean of its pieces' hidden states; a word cut off, or that became `[UNK]`, has none.
pub struct SubwordReader<'a> {
    model: &'a pretrained::Pretrained,
    tokenizer: &'a Tokenizer,
    vocab: &'a [String],
    corpus_unk: Option<u32>,
    max_positions: usize,
    device: &'a burn::tensor::Device,
    pieces: std::cell::RefCell<std::collections::HashMap<u32, Vec<u32>>>,
}

/// Rows as piece ids, padded to the longest, and each word position's span of pieces.
struct PieceBatch {
    /// `rows x longest` piece ids, padding included.
    ids: Vec<i64>,
    /// `rows x longest`: padding.
    padding: Vec<bool>,
    /// The longest row's pieces, which every row is padded to.
    longest: usize,
    /// Per row, per word position: its pieces' positions, `None` for a position with no vector.
    spans: Vec<Vec<Option<std::ops::Range<usize>>>>,
}

impl<'a> SubwordReader<'a> {
    /// A reader of `model` with its `tokenizer`; `vocab` names the whole-word ids, `corpus_unk`
    /// is the whole-word corpus's unknown word, `max_positions` the model's.
    pub fn new(
        model: &'a pretrained::Pretrained,
        tokenizer: &'a Tokenizer,
        vocab: &'a [String],
        corpus_unk: Option<u32>,
        max_positions: usize,
        device: &'a burn::tensor::Device,
    ) -> Self {
        SubwordReader {
            model,
            tokenizer,
            vocab,
            corpus_unk,
            max_positions,
            device,
            pieces: Default::default(),
        }
    }

    /// The pieces of whole word `id`, read inside running text.
    fn pieces(&self, id: u32) -> Vec<u32> {
        self.pieces
            .borrow_mut()
            .entry(id)
            .or_insert_with(|| {
                let framed = self
                    .tokenizer
                    .encode_words(&["", self.vocab[id as usize].as_str()]);
                framed.ids[framed.spans[1].clone()].to_vec()
            })
            .clone()
    }

    /// `rows` (each a row of whole-word ids) as the checkpoint reads them.
    fn piece_batch<'r>(&self, rows: impl Iterator<Item = &'r [u32]>) -> PieceBatch {
        let specials = self.tokenizer.specials().clone();
        let mut seqs: Vec<Vec<u32>> = Vec::new();
        let mut spans: Vec<Vec<Option<std::ops::Range<usize>>>> = Vec::new();
        for row in rows {
            // A model with no start piece (GPT-2) reads its text after `bos`: otherwise every
            // row's first word would sit on the position a causal model makes its attention
            // sink, whose states are outliers in norm, and would see no context at all.
            let mut ids: Vec<u32> = specials.start.or(specials.bos).into_iter().collect();
            let mut row_spans = vec![None; row.len()];
            for (p, &id) in row.iter().enumerate() {
                if (id as usize) < self.vocab.len() {
                    let ps = self.pieces(id);
                    let start = ids.len();
                    ids.extend(&ps);
                    let unknown = ps.is_empty() || ps.iter().any(|&x| Some(x) == specials.unk);
                    if !unknown {
                        row_spans[p] = Some(start..ids.len());
                    }
                } else if Some(id) == self.corpus_unk {
                    ids.extend(specials.unk);
                }
            }
            // Cut to the model's positions, the end piece kept (as transformers truncates).
            let room = self.max_positions - usize::from(specials.end.is_some());
            if ids.len() > room {
                ids.truncate(room);
                for s in row_spans.iter_mut() {
                    if s.as_ref().is_some_and(|s| s.end > room) {
                        *s = None;
                    }
                }
            }
            ids.extend(specials.end);
            seqs.push(ids);
            spans.push(row_spans);
        }
        let longest = seqs.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut ids = Vec::with_capacity(seqs.len() * longest);
        let mut padding = Vec::with_capacity(seqs.len() * longest);
        for s in &seqs {
            for t in 0..longest {
                ids.push(*s.get(t).unwrap_or(&specials.pad) as i64);
                padding.push(t >= s.len());
            }
        }
        PieceBatch {
            ids,
            padding,
            longest,
            spans,
        }
    }

    /// Every layer's hidden states of a batch, `rows x longest x width` each.
    fn forward(&self, batch: &PieceBatch) -> Vec<Vec<f32>> {
        use burn::tensor::{Bool, Int, Tensor, TensorData};
        let (b, longest) = (batch.spans.len(), batch.longest);
        let tokens = Tensor::<2, Int>::from_data(
            TensorData::new(batch.ids.clone(), [b, longest]),
            self.device,
        );
        let pad = Tensor::<2, Bool>::from_data(
            TensorData::new(batch.padding.clone(), [b, longest]),
            self.device,
        );
        self.model
            .hidden_states(tokens, Some(pad))
            .into_iter()
            .map(|h| h.into_data().try_into_vec::<f32>().expect("f32"))
            .collect()
    }
}

impl Layered for SubwordReader<'_> {
    fn n_layers(&self) -> usize {
        self.model.qkv_weights().len() + 1
    }

    fn width(&self) -> usize {
        self.model.token_embedding_matrix().dims()[1]
    }

    fn word_states(&self, rows: &[u32], seq_len: usize) -> WordStates {
        let d = self.width();
        let batch = self.piece_batch(rows.chunks(seq_len));
        let hidden = self.forward(&batch);
        let n = batch.spans.len() * seq_len;
        let mut layers = vec![vec![0f32; n * d]; hidden.len()];
        let mut present = vec![false; n];
        for (r, row_spans) in batch.spans.iter().enumerate() {
            for (p, span) in row_spans.iter().enumerate() {
                let Some(span) = span else { continue };
                present[r * seq_len + p] = true;
                let k = span.len() as f64;
                for (h, out) in hidden.iter().zip(layers.iter_mut()) {
                    let dst = &mut out[(r * seq_len + p) * d..(r * seq_len + p + 1) * d];
                    for (c, x) in dst.iter_mut().enumerate() {
                        *x = (span
                            .clone()
                            .map(|t| h[(r * batch.longest + t) * d + c] as f64)
                            .sum::<f64>()
                            / k) as f32;
                    }
                }
            }
        }
        WordStates { layers, present }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_the_mean_of_its_pieces_and_an_unknown_word_has_no_row() {
        // all-MiniLM-L6-v2's WordPiece (scripts/fetch_pretrained.sh): "unaffable" is
        // una ##ffa ##ble = 14477, 20961, 3468; "the" is 1996; a 150-letter word is [UNK].
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/pretrained/all-MiniLM-L6-v2/tokenizer.json");
        let tok = Tokenizer::from_file(&path).expect("scripts/fetch_pretrained.sh fetches it");
        // Row p of the planted table is (p, 1).
        let table: Vec<f32> = (0..30522).flat_map(|p| [p as f32, 1.0]).collect();
        let words: Vec<String> = ["unaffable", &"a".repeat(150), "the"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        let (v, counts) = piece_mean_table(&table, 2, &tok, &words);
        assert_eq!(v.words(), ["unaffable".to_string(), "the".to_string()]);
        assert_eq!(counts, vec![3, 1]);
        assert_eq!(v.row(0), [(14477.0 + 20961.0 + 3468.0) / 3.0, 1.0]);
        assert_eq!(v.row(1), [1996.0, 1.0]);
    }

    #[test]
    fn a_byte_level_word_is_read_as_inside_running_text() {
        // The tiny BPE of crates/pretrained's fixtures: "the" after a space is the piece
        // `Ġthe`, not the text-initial `t` `he`.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pretrained/tests/fixtures/tiny-bpe/tokenizer.json");
        let tok = Tokenizer::from_file(&path).unwrap();
        let inside = tok.encode(" the");
        assert_eq!(inside.len(), 1);
        assert_ne!(tok.encode("the"), inside);
        let table: Vec<f32> = (0..tok.vocab_size()).map(|p| p as f32).collect();
        let (v, counts) = piece_mean_table(&table, 1, &tok, &["the".to_string()]);
        assert_eq!(counts, vec![1]);
        assert_eq!(v.row(0), [inside[0] as f32]);
    }

    #[test]
    fn a_pooled_word_is_the_mean_over_its_occurrences_of_its_pieces_states() {
        use burn::tensor::{Device, Int, Tensor, TensorData};
        // The tiny BERT of crates/pretrained's fixtures and its 60-piece WordPiece: "love" is
        // l ##o ##v ##e, "the", "cat", "dog" one piece each.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pretrained/tests/fixtures/tiny-bert");
        let device = Device::flex();
        let ckpt = pretrained::load(&dir, &device).unwrap();
        let tok = Tokenizer::from_file(&dir.join("tokenizer.json")).unwrap();
        let vocab: Vec<String> = ["the", "cat", "love", "dog"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        // Two rows of 4 ids; 9 is a special of the whole-word model, left out. Row 1 is shorter
        // in pieces, so it is padded in the batch.
        let sequences = [9, 0, 2, 1, 2, 3, 9, 9];
        let agg = aggregated(
            &ckpt.model,
            &tok,
            &vocab,
            3,
            None,
            &sequences,
            4,
            5,
            2,
            1,
            16,
            &device,
            |_, _| {},
        );
        assert_eq!(agg.occurrences, vec![1, 1, 2]);
        // By hand: each row alone, unpadded; "love" is pieces 2..6 of row 0 ([CLS] the love cat
        // [SEP]) and 1..5 of row 1 ([CLS] love dog [SEP]).
        let ids = |w: &str| tok.encode(w);
        let row = |words: &[&str]| -> Vec<i64> {
            let mut v = vec![2i64];
            for w in words {
                v.extend(ids(w).iter().map(|&x| x as i64));
            }
            v.push(3);
            v
        };
        let states = |r: Vec<i64>| -> Vec<Vec<f32>> {
            let t = r.len();
            let tokens = Tensor::<2, Int>::from_data(TensorData::new(r, [1, t]), &device);
            ckpt.model
                .hidden_states(tokens, None)
                .into_iter()
                .map(|h| h.into_data().try_into_vec::<f32>().unwrap())
                .collect()
        };
        let (a, b) = (
            states(row(&["the", "love", "cat"])),
            states(row(&["love", "dog"])),
        );
        assert_eq!(ids("love").len(), 4);
        let d = 16;
        let love = agg.tables[0]
            .words()
            .iter()
            .position(|w| w == "love")
            .unwrap();
        for l in 0..3 {
            let mean = |h: &Vec<f32>, span: std::ops::Range<usize>, c: usize| {
                span.clone().map(|t| h[t * d + c] as f64).sum::<f64>() / span.len() as f64
            };
            for c in 0..d {
                let want = 0.5 * (mean(&a[l], 2..6, c) + mean(&b[l], 1..5, c));
                let got = agg.tables[l].row(love)[c] as f64;
                assert!(
                    (got - want).abs() < 1e-5,
                    "layer {l} coordinate {c}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn the_corpus_unknown_word_is_read_as_unk_and_rows_are_cut_with_their_end_kept() {
        use burn::tensor::{Device, Int, Tensor, TensorData};
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pretrained/tests/fixtures/tiny-bert");
        let device = Device::flex();
        let ckpt = pretrained::load(&dir, &device).unwrap();
        let tok = Tokenizer::from_file(&dir.join("tokenizer.json")).unwrap();
        let vocab: Vec<String> = ["the", "cat", "love", "dog"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        // One row: [CLS]-like 9, love, the corpus's [UNK] (8), cat. As pieces: [CLS] l ##o ##v
        // ##e [UNK] cat [SEP], 8 > 7 positions: cut to [CLS] l ##o ##v ##e [UNK] [SEP], so cat's
        // occurrence is not counted and love's is read beside an [UNK] piece.
        let sequences = [9, 2, 8, 1];
        let agg = aggregated(
            &ckpt.model,
            &tok,
            &vocab,
            3,
            Some(8),
            &sequences,
            4,
            5,
            1,
            1,
            7,
            &device,
            |_, _| {},
        );
        assert_eq!(agg.occurrences, vec![0, 0, 1]);
        let mut ids = vec![2i64];
        ids.extend(tok.encode("love").iter().map(|&x| x as i64));
        ids.extend([1, 3]); // [UNK], [SEP]
        assert_eq!(ids.len(), 7);
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [1, 7]), &device);
        let states: Vec<Vec<f32>> = ckpt
            .model
            .hidden_states(tokens, None)
            .into_iter()
            .map(|h| h.into_data().try_into_vec::<f32>().unwrap())
            .collect();
        let d = 16;
        for l in 0..3 {
            for c in 0..d {
                let want = (1..5).map(|t| states[l][t * d + c] as f64).sum::<f64>() / 4.0;
                let got = agg.tables[l].row(0)[c] as f64;
                assert!(
                    (got - want).abs() < 1e-5,
                    "layer {l} coordinate {c}: {got} vs {want}"
                );
            }
        }
    }

    /// Every layer's hidden states of one row of piece ids read alone, unpadded.
    fn alone(model: &pretrained::Pretrained, ids: Vec<i64>) -> Vec<Vec<f32>> {
        use burn::tensor::{Device, Int, Tensor, TensorData};
        let t = ids.len();
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [1, t]), &Device::flex());
        model
            .hidden_states(tokens, None)
            .into_iter()
            .map(|h| h.into_data().try_into_vec::<f32>().unwrap())
            .collect()
    }

    fn tiny_bert() -> (pretrained::Checkpoint, Tokenizer, Vec<String>) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../pretrained/tests/fixtures/tiny-bert");
        let ckpt = pretrained::load(&dir, &burn::tensor::Device::flex()).unwrap();
        let tok = Tokenizer::from_file(&dir.join("tokenizer.json")).unwrap();
        let vocab = ["the", "cat", "love", "dog"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        (ckpt, tok, vocab)
    }

    #[test]
    fn a_word_position_reads_as_the_mean_of_its_pieces_and_specials_have_none() {
        let (ckpt, tok, vocab) = tiny_bert();
        let device = burn::tensor::Device::flex();
        let reader = SubwordReader::new(&ckpt.model, &tok, &vocab, None, 16, &device);
        assert_eq!((reader.n_layers(), reader.width()), (3, 16));
        // Two rows of 4 whole-word ids; 9 is a special of the whole-word model.
        let states = reader.word_states(&[9, 0, 2, 1, 2, 3, 9, 9], 4);
        assert_eq!(
            states.present,
            [false, true, true, true, true, true, false, false]
        );
        // By hand, each row alone: [CLS] the l ##o ##v ##e cat [SEP] and [CLS] l ##o ##v ##e
        // dog [SEP] (2 and 3 are [CLS] and [SEP]).
        let row = |words: &[&str]| -> Vec<i64> {
            let mut v = vec![2i64];
            for w in words {
                v.extend(tok.encode(w).iter().map(|&x| x as i64));
            }
            v.push(3);
            v
        };
        let a = alone(&ckpt.model, row(&["the", "love", "cat"]));
        let b = alone(&ckpt.model, row(&["love", "dog"]));
        let d = 16;
        // (row, position, hand-read states, piece span)
        let cases = [
            (0, 1, &a, 1..2),
            (0, 2, &a, 2..6),
            (0, 3, &a, 6..7),
            (1, 0, &b, 1..5),
            (1, 1, &b, 5..6),
        ];
        for l in 0..3 {
            for (r, p, h, span) in cases.iter().cloned() {
                for c in 0..d {
                    let want = span.clone().map(|t| h[l][t * d + c] as f64).sum::<f64>()
                        / span.len() as f64;
                    let got = states.layers[l][(r * 4 + p) * d + c] as f64;
                    assert!(
                        (got - want).abs() < 1e-5,
                        "layer {l} row {r} position {p} coordinate {c}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_subword_word_in_identical_contexts_has_self_similarity_one() {
        // Every row is the same, so "love" (4 pieces) has the same vector at every occurrence
        // in every layer; at the embedding output the other words differ from it, so anisotropy
        // is below one there (the tiny random model's top layers are nearly collinear).
        let (ckpt, tok, vocab) = tiny_bert();
        let device = burn::tensor::Device::flex();
        let reader = SubwordReader::new(&ckpt.model, &tok, &vocab, None, 16, &device);
        let rows: Vec<u32> = [9, 0, 2, 1, 3].repeat(12);
        let ctx = crate::geometry::contextuality(&reader, &rows, 5, 12, &[2], 10, 100, 1);
        assert_eq!(ctx.len(), 3);
        for r in &ctx {
            assert_eq!(r.words, 1);
            assert!((r.self_similarity - 1.0).abs() < 1e-6, "{r:?}");
            assert!((r.max_explainable_variance - 1.0).abs() < 1e-6, "{r:?}");
        }
        assert!(ctx[0].anisotropy < 0.9, "{:?}", ctx[0]);
    }

    #[test]
    fn a_decontextualized_subword_word_is_its_pieces_read_alone() {
        let (ckpt, tok, mut vocab) = tiny_bert();
        // A word of 150 letters becomes [UNK]: no row.
        vocab.push("a".repeat(150));
        let device = burn::tensor::Device::flex();
        let reader = SubwordReader::new(&ckpt.model, &tok, &vocab, None, 16, &device);
        // 9 and 10 stand for the whole-word model's [CLS] and [SEP], left out for the
        // tokenizer's own; batches of 2 words.
        let tables = crate::layered::decontextualized(&reader, &vocab, 9, 10, 2);
        assert_eq!(tables.len(), 3);
        assert_eq!(tables[0].words(), &vocab[..4]);
        let mut ids = vec![2i64];
        ids.extend(tok.encode("love").iter().map(|&x| x as i64));
        ids.push(3);
        let h = alone(&ckpt.model, ids);
        let d = 16;
        for (l, t) in tables.iter().enumerate() {
            for c in 0..d {
                let want = (1..5).map(|p| h[l][p * d + c] as f64).sum::<f64>() / 4.0;
                assert!((t.row(2)[c] as f64 - want).abs() < 1e-5, "layer {l}");
            }
        }
    }

    #[test]
    fn a_byte_level_row_is_read_after_its_bos_piece() {
        // The tiny BPE's `<|endoftext|>` is piece 0. Only the pieces are read here, so the
        // tiny GPT-2 (whose 60 pieces are not this tokenizer's) is never run.
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pretrained/tests/fixtures");
        let tok = Tokenizer::from_file(&root.join("tiny-bpe/tokenizer.json")).unwrap();
        assert_eq!(tok.specials().bos, Some(0));
        let device = burn::tensor::Device::flex();
        let ckpt = pretrained::load(&root.join("tiny-gpt2"), &device).unwrap();
        let vocab: Vec<String> = ["the", "of"].iter().map(|w| w.to_string()).collect();
        let reader = SubwordReader::new(&ckpt.model, &tok, &vocab, None, 16, &device);
        let batch = reader.piece_batch([&[0u32, 1][..]].into_iter());
        let the = tok.encode(" the");
        let of = tok.encode(" of");
        let mut want = vec![0i64];
        want.extend(the.iter().chain(&of).map(|&p| p as i64));
        assert_eq!(batch.ids, want);
        assert_eq!(batch.spans[0][0], Some(1..1 + the.len()));
        // The WordPiece tokenizer starts with [CLS] and has no bos.
        let wp = Tokenizer::from_file(&root.join("tiny-bert/tokenizer.json")).unwrap();
        assert_eq!(wp.specials().bos, None);
    }

    #[test]
    fn a_row_cut_at_the_positions_keeps_its_bos_and_drops_the_words_cut() {
        // GPT-2's room is all `max_positions` (no end piece): bos, then " the" and " of" whole,
        // then a word cut in its pieces, which gets no span.
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pretrained/tests/fixtures");
        let tok = Tokenizer::from_file(&root.join("tiny-bpe/tokenizer.json")).unwrap();
        let device = burn::tensor::Device::flex();
        let ckpt = pretrained::load(&root.join("tiny-gpt2"), &device).unwrap();
        let long = "unbelievablenesses".to_string();
        let vocab: Vec<String> = vec!["the".into(), "of".into(), long.clone()];
        let (the, of, cut) = (
            tok.encode(" the").len(),
            tok.encode(" of").len(),
            tok.encode(&format!(" {long}")).len(),
        );
        assert!(cut >= 2, "{cut}");
        let max = 1 + the + of + 1;
        let reader = SubwordReader::new(&ckpt.model, &tok, &vocab, None, max, &device);
        let batch = reader.piece_batch([&[0u32, 1, 2][..]].into_iter());
        assert_eq!(batch.longest, max);
        assert_eq!(batch.ids[0], 0);
        assert_eq!(
            batch.spans[0],
            vec![Some(1..1 + the), Some(1 + the..1 + the + of), None]
        );
    }
}
