//! Word vectors from a subword model: a word's vector is the mean of its pieces' vectors, as
//! Bommasani et al. (2020) pool a word's subword pieces, so that a pretrained model with a
//! WordPiece or BPE vocabulary is scored on the same word list as a whole-word model.

use pretrained::Tokenizer;
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
}
