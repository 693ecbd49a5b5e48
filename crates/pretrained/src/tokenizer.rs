//! Tokenization as a checkpoint's tokenizer.json says, without Python: WordPiece with BERT's
//! normaliser and pre-tokenizer (BERT-family models) and byte-level BPE with GPT-2's
//! pre-tokenizer (GPT-2). Both give what Hugging Face `tokenizers` gives for the same text
//! without special tokens, padding or truncation (tests/tokenizers.rs checks hard cases
//! against it), and [`Tokenizer::encode_words`] maps each word of a text to its span of pieces,
//! which is how a word's vector is read from a subword model (the mean of its pieces).
//!
//! WordPiece (Wu et al. 2016, as BERT uses it):
//! 1. normalise: drop NUL, U+FFFD and control/format characters (Cc, Cf, Co; not tab,
//!    newline, return; surrogates cannot occur in Rust text), turn whitespace into spaces, put spaces around CJK ideographs, strip
//!    accents (NFD, then drop Mn) when lower-casing (unless `strip_accents` says otherwise),
//!    lower-case;
//! 2. split on whitespace, then split off every punctuation character (ASCII punctuation and
//!    Unicode P*) as a word of its own;
//! 3. each word greedily into the longest vocabulary pieces from the left, later pieces with
//!    the `##` prefix; a word with no such split, or longer than `max_input_chars_per_word`
//!    characters, is one `[UNK]`.
//!
//! Byte-level BPE (Radford et al. 2019): the text is split by GPT-2's pattern
//! `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`, each part's
//! UTF-8 bytes mapped to printable characters (GPT-2's `bytes_to_unicode`), and merged pair by
//! pair, lowest merge rank first, until no ranked pair is left.
//!
//! Not read: added tokens written in the text (`[MASK]` in a string is tokenized as text),
//! padding and truncation settings, post-processors (no `[CLS]`/`[SEP]` is added here; the
//! caller adds [`Tokenizer::specials`] where the model expects them).

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use regex::Regex;
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use crate::error::PretrainedError;

/// The special pieces a model's input is framed with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Specials {
    /// Starts a sequence (`[CLS]`); GPT-2 has none.
    pub start: Option<u32>,
    /// Ends a sequence (`[SEP]`); GPT-2 has none.
    pub end: Option<u32>,
    /// Fills a padded position (`[PAD]`; GPT-2: `<|endoftext|>`, masked out anyway).
    pub pad: u32,
    /// What a word with no split into known pieces becomes (`[UNK]`); byte-level BPE has none.
    pub unk: Option<u32>,
    /// What a text begins with where there is no start piece: GPT-2's `<|endoftext|>` (its
    /// `bos_token`, the piece it saw between documents in training). `transformers` does not
    /// add it; a reader that wants no word at a causal model's first position (which the model
    /// uses as an attention sink) puts it first. `None` where `start` is given.
    pub bos: Option<u32>,
}

#[derive(Debug)]
pub enum Tokenizer {
    WordPiece(WordPiece),
    Bpe(ByteLevelBpe),
}

/// Pieces of a text and, for each of its words, the range of pieces it became.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordPieces {
    pub ids: Vec<u32>,
    /// One per word; empty for a word that normalises to nothing (control characters only).
    pub spans: Vec<Range<usize>>,
}

impl Tokenizer {
    /// Reads a tokenizer.json; what it cannot reproduce is refused, naming the key.
    pub fn from_file(path: &Path) -> Result<Tokenizer, PretrainedError> {
        let text = std::fs::read_to_string(path).map_err(|source| PretrainedError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let err = |message: String| PretrainedError::Config {
            path: path.to_path_buf(),
            message,
        };
        let json: Value = serde_json::from_str(&text).map_err(|e| err(format!("not JSON: {e}")))?;
        let model = &json["model"];
        match model["type"].as_str() {
            Some("WordPiece") => WordPiece::parse(&json)
                .map(Tokenizer::WordPiece)
                .map_err(err),
            Some("BPE") => ByteLevelBpe::parse(&json).map(Tokenizer::Bpe).map_err(err),
            other => Err(err(format!(
                "model.type {other:?} is not read: WordPiece (BERT) and BPE (GPT-2) are"
            ))),
        }
    }

    /// The pieces of `text`, as `tokenizers`' `encode(text, add_special_tokens=False)`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Tokenizer::WordPiece(t) => t.encode(text),
            Tokenizer::Bpe(t) => t.encode(text),
        }
    }

    /// `words` read as one text with single spaces between them: its pieces and each word's
    /// span. For words without whitespace at their edges (a corpus's tokens) the pieces are
    /// those of [`Tokenizer::encode`] on the joined text; for BPE each word after the first
    /// carries the space before it (`Ġword`), as GPT-2 reads running text.
    pub fn encode_words(&self, words: &[&str]) -> WordPieces {
        let mut ids = Vec::new();
        let mut spans = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            let start = ids.len();
            match self {
                Tokenizer::WordPiece(t) => ids.extend(t.encode(w)),
                // GPT-2 reads the space before a word as part of it ("Ġword").
                Tokenizer::Bpe(t) if i > 0 => ids.extend(t.encode(&format!(" {w}"))),
                Tokenizer::Bpe(t) => ids.extend(t.encode(w)),
            }
            spans.push(start..ids.len());
        }
        WordPieces { ids, spans }
    }

    pub fn specials(&self) -> &Specials {
        match self {
            Tokenizer::WordPiece(t) => &t.specials,
            Tokenizer::Bpe(t) => &t.specials,
        }
    }

    /// The number of pieces of the vocabulary.
    pub fn vocab_size(&self) -> usize {
        match self {
            Tokenizer::WordPiece(t) => t.vocab.len(),
            Tokenizer::Bpe(t) => t.vocab.len(),
        }
    }
}

fn vocab(model: &Value) -> Result<HashMap<String, u32>, String> {
    model["vocab"]
        .as_object()
        .ok_or("model.vocab is not a map of pieces to ids")?
        .iter()
        .map(|(k, v)| {
            v.as_u64()
                .filter(|&id| id <= u32::MAX as u64)
                .map(|id| (k.clone(), id as u32))
                .ok_or_else(|| format!("model.vocab[{k:?}] is not an id: {v}"))
        })
        .collect()
}

fn flag(v: &Value, key: &str, default: bool) -> Result<bool, String> {
    match &v[key] {
        Value::Null => Ok(default),
        Value::Bool(b) => Ok(*b),
        other => Err(format!("{key} must be true, false or null, got {other}")),
    }
}

/// BERT's WordPiece.
#[derive(Debug)]
pub struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    prefix: String,
    max_chars: usize,
    clean_text: bool,
    chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
    pub specials: Specials,
    punctuation: Regex,
    other: Regex,
}

impl WordPiece {
    fn parse(json: &Value) -> Result<WordPiece, String> {
        let model = &json["model"];
        let vocab = vocab(model)?;
        let unk_token = model["unk_token"].as_str().unwrap_or("[UNK]");
        let id = |t: &str| {
            vocab
                .get(t)
                .copied()
                .ok_or_else(|| format!("{t:?} is not in model.vocab"))
        };
        let unk = id(unk_token)?;
        let norm = &json["normalizer"];
        let (clean_text, chinese_chars, strip_accents, lowercase) = match norm["type"].as_str() {
            Some("BertNormalizer") => {
                let lowercase = flag(norm, "lowercase", true)?;
                (
                    flag(norm, "clean_text", true)?,
                    flag(norm, "handle_chinese_chars", true)?,
                    // null: strip accents exactly when lower-casing (BERT's uncased models).
                    flag(norm, "strip_accents", lowercase)?,
                    lowercase,
                )
            }
            None if norm.is_null() => (false, false, false, false),
            other => {
                return Err(format!(
                "normalizer.type {other:?} is not read with WordPiece: BertNormalizer (or none) is"
            ))
            }
        };
        match json["pre_tokenizer"]["type"].as_str() {
            Some("BertPreTokenizer") => {}
            other => {
                return Err(format!(
                    "pre_tokenizer.type {other:?} is not read with WordPiece: BertPreTokenizer is"
                ))
            }
        }
        Ok(WordPiece {
            unk,
            prefix: model["continuing_subword_prefix"]
                .as_str()
                .unwrap_or("##")
                .to_string(),
            max_chars: model["max_input_chars_per_word"].as_u64().unwrap_or(100) as usize,
            clean_text,
            chinese_chars,
            strip_accents,
            lowercase,
            specials: Specials {
                start: Some(id("[CLS]")?),
                end: Some(id("[SEP]")?),
                pad: id("[PAD]")?,
                unk: Some(unk),
                bos: None,
            },
            vocab,
            punctuation: Regex::new(r"^\p{P}$").expect("a valid pattern"),
            other: Regex::new(r"^[\p{Cc}\p{Cf}\p{Co}]$").expect("a valid pattern"),
        })
    }

    fn is_class(re: &Regex, c: char) -> bool {
        let mut buf = [0u8; 4];
        re.is_match(c.encode_utf8(&mut buf))
    }

    fn normalize(&self, text: &str) -> String {
        let mut s = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                let control = !matches!(c, '\t' | '\n' | '\r') && Self::is_class(&self.other, c);
                if c == '\0' || c == '\u{fffd}' || control {
                    continue;
                }
                if c.is_whitespace() {
                    s.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_cjk(c) {
                s.push(' ');
                s.push(c);
                s.push(' ');
            } else {
                s.push(c);
            }
        }
        if self.strip_accents {
            s = s.nfd().filter(|&c| !is_mn(c)).collect();
        }
        if self.lowercase {
            // Character by character, as `tokenizers` does (no final-sigma rule).
            s = s.chars().flat_map(char::to_lowercase).collect();
        }
        s
    }

    pub fn encode(&self, text: &str) -> Vec<u32> {
        let text = self.normalize(text);
        let mut ids = Vec::new();
        for chunk in text.split(|c: char| c.is_whitespace()) {
            let mut word = String::new();
            for c in chunk.chars() {
                if c.is_ascii_punctuation() || Self::is_class(&self.punctuation, c) {
                    if !word.is_empty() {
                        self.word(&word, &mut ids);
                        word.clear();
                    }
                    self.word(c.encode_utf8(&mut [0u8; 4]), &mut ids);
                } else {
                    word.push(c);
                }
            }
            if !word.is_empty() {
                self.word(&word, &mut ids);
            }
        }
        ids
    }

    /// One pre-token into pieces, longest match first.
    fn word(&self, word: &str, ids: &mut Vec<u32>) {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() > self.max_chars {
            ids.push(self.unk);
            return;
        }
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < chars.len() {
            let from = chars[start].0;
            let found = (start + 1..=chars.len()).rev().find_map(|end| {
                let to = chars.get(end).map_or(word.len(), |c| c.0);
                let piece = if start > 0 {
                    format!("{}{}", self.prefix, &word[from..to])
                } else {
                    word[from..to].to_string()
                };
                self.vocab.get(&piece).map(|&id| (id, end))
            });
            match found {
                Some((id, end)) => {
                    pieces.push(id);
                    start = end;
                }
                None => {
                    ids.push(self.unk);
                    return;
                }
            }
        }
        ids.extend(pieces);
    }
}

/// Nonspacing marks (Mn), which BERT's accent stripping drops after NFD.
fn is_mn(c: char) -> bool {
    use std::sync::OnceLock;
    static MN: OnceLock<Regex> = OnceLock::new();
    let re = MN.get_or_init(|| Regex::new(r"^\p{Mn}$").expect("a valid pattern"));
    re.is_match(c.encode_utf8(&mut [0u8; 4]))
}

/// CJK ideographs as BERT defines them (its `_is_chinese_char`).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// GPT-2's byte-level BPE.
#[derive(Debug)]
pub struct ByteLevelBpe {
    vocab: HashMap<String, u32>,
    ranks: HashMap<(String, String), usize>,
    add_prefix_space: bool,
    byte_char: [char; 256],
    pub specials: Specials,
    /// GPT-2's pattern without its whitespace alternatives (`\s+(?!\S)|\s+`, which need a
    /// look-ahead the `regex` crate has not; [`ByteLevelBpe::pre_tokenize`] does them).
    pattern: Regex,
}

/// GPT-2's `bytes_to_unicode`: printable bytes stand for themselves, the others for 256 + n.
fn bytes_to_unicode() -> [char; 256] {
    let mut table = ['\0'; 256];
    let printable = |b: u32| {
        (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b)
    };
    let mut n = 0;
    for b in 0..256u32 {
        table[b as usize] = if printable(b) {
            char::from_u32(b).expect("a Latin-1 code point")
        } else {
            n += 1;
            char::from_u32(255 + n).expect("a code point below 512")
        };
    }
    table
}

impl ByteLevelBpe {
    fn parse(json: &Value) -> Result<ByteLevelBpe, String> {
        let model = &json["model"];
        for (key, default) in [
            ("dropout", Value::Null),
            ("continuing_subword_prefix", Value::Null),
            ("end_of_word_suffix", Value::Null),
            ("unk_token", Value::Null),
        ] {
            let v = &model[key];
            if *v != default && !(v.is_string() && v.as_str() == Some("")) {
                return Err(format!(
                    "model.{key} = {v}: only GPT-2's BPE ({key} null) is read"
                ));
            }
        }
        for key in ["byte_fallback", "ignore_merges"] {
            if flag(model, key, false)? {
                return Err(format!(
                    "model.{key} = true: only GPT-2's BPE ({key} false) is read"
                ));
            }
        }
        if !json["normalizer"].is_null() {
            return Err(format!(
                "normalizer {}: GPT-2's byte-level BPE has none",
                json["normalizer"]
            ));
        }
        let pre = &json["pre_tokenizer"];
        if pre["type"].as_str() != Some("ByteLevel") || !flag(pre, "use_regex", true)? {
            return Err(format!(
                "pre_tokenizer {pre}: only ByteLevel with GPT-2's pattern (use_regex true) is read"
            ));
        }
        let vocab = vocab(model)?;
        let mut ranks = HashMap::new();
        for (rank, m) in model["merges"]
            .as_array()
            .ok_or("model.merges is not a list")?
            .iter()
            .enumerate()
        {
            // "a b" (older files) or ["a", "b"].
            let pair = match m {
                Value::String(s) => s
                    .split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string())),
                Value::Array(p) if p.len() == 2 => p[0]
                    .as_str()
                    .zip(p[1].as_str())
                    .map(|(a, b)| (a.to_string(), b.to_string())),
                _ => None,
            }
            .ok_or_else(|| format!("model.merges[{rank}] is not a pair: {m}"))?;
            let merged = format!("{}{}", pair.0, pair.1);
            if !vocab.contains_key(&merged) {
                return Err(format!(
                    "model.merges[{rank}] makes {merged:?}, which is not in model.vocab"
                ));
            }
            ranks.entry(pair).or_insert(rank);
        }
        let byte_char = bytes_to_unicode();
        if let Some(c) = byte_char
            .iter()
            .find(|c| !vocab.contains_key(&c.to_string()))
        {
            return Err(format!(
                "model.vocab lacks the byte piece {c:?}: a byte-level vocabulary has all 256"
            ));
        }
        let eot = vocab
            .get("<|endoftext|>")
            .copied()
            .ok_or("\"<|endoftext|>\" is not in model.vocab")?;
        Ok(ByteLevelBpe {
            vocab,
            ranks,
            add_prefix_space: flag(pre, "add_prefix_space", false)?,
            byte_char,
            specials: Specials {
                start: None,
                end: None,
                pad: eot,
                unk: None,
                bos: Some(eot),
            },
            pattern: Regex::new(
                r"^(?:'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+)",
            )
            .expect("a valid pattern"),
        })
    }

    /// GPT-2's pattern, leftmost-first at each position, as a list of byte ranges of `text`.
    fn pre_tokenize(&self, text: &str) -> Vec<Range<usize>> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < text.len() {
            if let Some(m) = self.pattern.find(&text[at..]) {
                out.push(at..at + m.end());
                at += m.end();
                continue;
            }
            // At whitespace the pattern did not take: `\s+(?!\S)` takes the run but for its
            // last character when something follows, `\s+` a single one.
            let run_end = text[at..]
                .char_indices()
                .find(|(_, c)| !c.is_whitespace())
                .map_or(text.len(), |(i, _)| at + i);
            let end = if run_end == text.len() {
                run_end
            } else {
                let last = text[at..run_end]
                    .char_indices()
                    .last()
                    .map(|(i, _)| at + i)
                    .expect("a whitespace run of at least one character");
                if last > at {
                    last
                } else {
                    run_end
                }
            };
            out.push(at..end);
            at = end;
        }
        out
    }

    pub fn encode(&self, text: &str) -> Vec<u32> {
        let owned;
        let text = if self.add_prefix_space && !text.starts_with(' ') && !text.is_empty() {
            owned = format!(" {text}");
            &owned
        } else {
            text
        };
        let mut ids = Vec::new();
        for r in self.pre_tokenize(text) {
            let mut symbols: Vec<String> = text[r]
                .bytes()
                .map(|b| self.byte_char[b as usize].to_string())
                .collect();
            loop {
                let best = symbols
                    .windows(2)
                    .enumerate()
                    .filter_map(|(i, w)| {
                        self.ranks
                            .get(&(w[0].clone(), w[1].clone()))
                            .map(|&rank| (rank, i))
                    })
                    .min();
                let Some((rank, _)) = best else { break };
                // Every occurrence of the best pair, left to right, without overlaps.
                let mut merged = Vec::with_capacity(symbols.len());
                let mut i = 0;
                while i < symbols.len() {
                    if i + 1 < symbols.len()
                        && self
                            .ranks
                            .get(&(symbols[i].clone(), symbols[i + 1].clone()))
                            == Some(&rank)
                    {
                        merged.push(format!("{}{}", symbols[i], symbols[i + 1]));
                        i += 2;
                    } else {
                        merged.push(std::mem::take(&mut symbols[i]));
                        i += 1;
                    }
                }
                symbols = merged;
            }
            ids.extend(symbols.iter().map(|s| {
                *self
                    .vocab
                    .get(s)
                    .expect("checked when read: bytes and merge results are all in the vocabulary")
            }));
        }
        ids
    }
}
