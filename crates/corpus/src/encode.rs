//! The corpus encoded once as word ids, with chunk boundaries that no context window crosses.
//!
//! Encoding makes a single hashing pass: each token gets a provisional id on first sight
//! (first-occurrence order, which is also the vocabulary's tie-break), counts are summed per
//! provisional id, the vocabulary is built from the counts, and a lookup table maps provisional
//! ids to final ids. Tokens outside the vocabulary become [`crate::SpecialTokens::unk`]: word2vec
//! skips them (as gensim drops rare words before windowing), the transformer sees `[UNK]`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tokenize::Token;
use crate::{read, tokenize, CorpusError, Preset, Vocab};

/// How a corpus file becomes ids. Serialised in every experiment config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CorpusConfig {
    /// Path to the text (plain or gzip).
    pub path: PathBuf,
    pub preset: Preset,
    /// Lower-case every token before counting (text8 is already lower-case).
    pub lowercase: bool,
    /// Strip the punctuation at the ends of every token and drop the tokens left empty
    /// ([`trim_punctuation`]: `cat,` is `cat`, `"Rome` is `Rome`, `--` and WikiText's `@-@` go),
    /// so that a raw, punctuated corpus trains like text8, which has none. Punctuation inside a
    /// token stays (`u.s.` becomes `u.s`, `o'clock` stays), and digits stay digits (text8 spells
    /// them out). Left out of a config's serialised form while off, so that the runs keyed by a
    /// hash of the config before this option existed keep their names.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub drop_punctuation: bool,
    /// Words occurring fewer times are out of vocabulary.
    pub min_count: u64,
    /// Keep at most this many words (the most frequent).
    pub max_size: Option<usize>,
    /// Longest chunk of tokens: sentences longer than this, and text8's single line, are cut into
    /// chunks of this length (word2vec.c uses 1,000, gensim 10,000).
    pub chunk_len: usize,
    /// Keep only the first `fraction` of the tokens (rounded; in (0, 1]): nested subsets of one
    /// corpus, a smaller fraction a prefix of a larger, for answers stated as a function of
    /// corpus size. The vocabulary is the subset's own (`min_count` over the kept tokens), as a
    /// user with the smaller corpus would have it. Left out of the serialised form when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
}

impl Default for CorpusConfig {
    fn default() -> Self {
        CorpusConfig {
            path: PathBuf::from("data/corpora/text8.gz"),
            preset: Preset::Text8,
            lowercase: false,
            drop_punctuation: false,
            min_count: 5,
            max_size: None,
            chunk_len: 10_000,
            fraction: None,
        }
    }
}

/// Token ids with chunk boundaries: chunk `i` is `ids[bounds[i]..bounds[i + 1]]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Encoded {
    pub ids: Vec<u32>,
    pub bounds: Vec<usize>,
    /// The id used for tokens outside the vocabulary.
    pub unk: u32,
}

impl Encoded {
    pub fn chunks(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.bounds.windows(2).map(|w| &self.ids[w[0]..w[1]])
    }
    pub fn n_chunks(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }
    pub fn n_tokens(&self) -> usize {
        self.ids.len()
    }
    pub fn n_oov(&self) -> usize {
        self.ids.iter().filter(|&&i| i == self.unk).count()
    }
}

/// Counts that describe a corpus at a `min_count`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CorpusStats {
    pub tokens: u64,
    pub types: u64,
    pub min_count: u64,
    pub vocab_size: u64,
    /// Share of the corpus's tokens that are vocabulary words.
    pub coverage: f64,
    pub chunks: u64,
}

/// A corpus read, tokenised and encoded, with its vocabulary.
#[derive(Clone, Debug)]
pub struct Corpus {
    pub source: PathBuf,
    pub vocab: Vocab,
    pub encoded: Encoded,
    /// Distinct token types before `min_count` (the unknown marker of a preset excluded).
    pub n_types: usize,
    pub config: CorpusConfig,
}

impl Corpus {
    /// Reads, tokenises, builds the vocabulary and encodes, per `config`.
    pub fn load(config: &CorpusConfig) -> Result<Corpus, CorpusError> {
        validate(config)?;
        let text = read::read_text(&config.path)?;
        Self::from_text(&text, &config.path, config)
    }

    /// Like [`Corpus::load`] on text already in memory; `source` names it in errors.
    pub fn from_text(
        text: &str,
        source: &Path,
        config: &CorpusConfig,
    ) -> Result<Corpus, CorpusError> {
        validate(config)?;
        let lowered;
        let text = if config.lowercase {
            lowered = text.to_lowercase();
            &lowered
        } else {
            text
        };
        let normalised = config.preset.normalise(text);
        let marker = config.preset.unknown_marker();

        // Pass 1: provisional ids in first-occurrence order, counts, chunk bounds.
        const MARKER: u32 = u32::MAX;
        let mut first_seen: HashMap<&str, u32> = HashMap::new();
        let mut seen_words: Vec<&str> = Vec::new();
        let mut counts: Vec<u64> = Vec::new();
        let mut provisional: Vec<u32> = Vec::new();
        let mut bounds = vec![0usize];
        // An exact reservation: a push-grown buffer could hold twice the tokens.
        provisional.reserve_exact(normalised.split_whitespace().count());
        let mut in_chunk = 0;
        for token in tokenize::tokens(config.preset, &normalised) {
            let tok = match token {
                // The preset's unknown-word marker (WikiText's `<unk>`) is no word to trim.
                Token::Word(w) if config.drop_punctuation && Some(w) != marker => {
                    match trim_punctuation(w) {
                        "" => continue,
                        w => w,
                    }
                }
                Token::Word(w) => w,
                Token::EndOfSentence => {
                    if in_chunk > 0 {
                        bounds.push(provisional.len());
                        in_chunk = 0;
                    }
                    continue;
                }
            };
            if in_chunk == config.chunk_len {
                bounds.push(provisional.len());
                in_chunk = 0;
            }
            in_chunk += 1;
            if Some(tok) == marker {
                provisional.push(MARKER);
                continue;
            }
            let id = *first_seen.entry(tok).or_insert_with(|| {
                seen_words.push(tok);
                counts.push(0);
                (seen_words.len() - 1) as u32
            });
            counts[id as usize] += 1;
            provisional.push(id);
        }
        if let Some(f) = config.fraction {
            // The first `f` of the tokens: counts of the rest taken back, chunks cut there.
            let keep = ((provisional.len() as f64 * f).round() as usize).max(1);
            for &id in &provisional[keep.min(provisional.len())..] {
                if id != MARKER {
                    counts[id as usize] -= 1;
                }
            }
            provisional.truncate(keep);
            bounds.retain(|&b| b < keep);
            bounds.push(provisional.len());
        }
        if provisional.is_empty() {
            return Err(CorpusError::Empty {
                path: source.to_owned(),
            });
        }
        let vocab = Vocab::from_counts(
            seen_words
                .iter()
                .zip(&counts)
                .map(|(w, &c)| (w.to_string(), c)),
            config.min_count,
            config.max_size,
        );
        if vocab.is_empty() {
            return Err(CorpusError::NoWordReachesMinCount {
                path: source.to_owned(),
                min_count: config.min_count,
                max_count: counts.iter().copied().max().unwrap_or(0),
            });
        }
        // Pass 2: provisional -> final ids through a table (no second round of hashing).
        let unk = vocab.specials().unk;
        let table: Vec<u32> = seen_words
            .iter()
            .map(|w| vocab.id(w).unwrap_or(unk))
            .collect();
        let ids: Vec<u32> = provisional
            .into_iter()
            .map(|p| if p == MARKER { unk } else { table[p as usize] })
            .collect();
        Ok(Corpus {
            source: source.to_owned(),
            vocab,
            encoded: Encoded { ids, bounds, unk },
            n_types: seen_words.len(),
            config: config.clone(),
        })
    }

    /// Encodes another text with this corpus's vocabulary (e.g. held-out WikiText with the text8
    /// vocabulary), so ids mean the same words; punctuation is dropped as this corpus's config
    /// says ([`CorpusConfig::drop_punctuation`]).
    pub fn encode_with_vocab(&self, text: &str, preset: Preset, lowercase: bool) -> Encoded {
        let lowered;
        let text = if lowercase {
            lowered = text.to_lowercase();
            &lowered
        } else {
            text
        };
        let normalised = preset.normalise(text);
        let unk = self.vocab.specials().unk;
        let mut ids = Vec::new();
        let mut bounds = vec![0];
        for mut sentence in tokenize::sentences(preset, &normalised) {
            if self.config.drop_punctuation {
                let marker = preset.unknown_marker();
                sentence = sentence
                    .into_iter()
                    .map(|w| {
                        if Some(w) == marker {
                            w
                        } else {
                            trim_punctuation(w)
                        }
                    })
                    .filter(|w| !w.is_empty())
                    .collect();
            }
            for piece in sentence.chunks(self.config.chunk_len) {
                ids.extend(piece.iter().map(|t| self.vocab.id(t).unwrap_or(unk)));
                bounds.push(ids.len());
            }
        }
        Encoded { ids, bounds, unk }
    }

    /// The sentences of another text as this corpus's vocabulary ids (`[UNK]` for a word it
    /// lacks), for measures that need sentences (contextuality on WikiText-2): each line of
    /// `preset` (a WikiText paragraph) cut after every sentence-final token (`.`, `?`, `!`
    /// standing alone, as WikiText tokenises them), lower-cased when `lowercase`, each token
    /// trimmed of punctuation at its ends ([`trim_punctuation`]) and dropped when nothing is
    /// left when `drop_punctuation`, the preset's unknown marker kept as `[UNK]`. Sentences of
    /// fewer than `min_words` tokens are left out, longer ones than `max_words` cut to it.
    pub fn encode_sentences(
        &self,
        text: &str,
        preset: Preset,
        lowercase: bool,
        drop_punctuation: bool,
        min_words: usize,
        max_words: usize,
    ) -> Vec<Vec<u32>> {
        let lowered;
        let text = if lowercase {
            lowered = text.to_lowercase();
            &lowered
        } else {
            text
        };
        let normalised = preset.normalise(text);
        let unk = self.vocab.specials().unk;
        let marker = preset.unknown_marker();
        let mut out = Vec::new();
        for line in tokenize::sentences(preset, &normalised) {
            let mut current: Vec<u32> = Vec::new();
            let mut close = |current: &mut Vec<u32>| {
                let s = std::mem::take(current);
                if s.len() >= min_words.max(1) {
                    out.push(s.into_iter().take(max_words).collect());
                }
            };
            for token in line {
                let end = matches!(token, "." | "?" | "!");
                let word = if drop_punctuation && Some(token) != marker {
                    trim_punctuation(token)
                } else {
                    token
                };
                if !word.is_empty() {
                    current.push(self.vocab.id(word).unwrap_or(unk));
                }
                if end {
                    close(&mut current);
                }
            }
            close(&mut current);
        }
        out
    }

    pub fn stats(&self) -> CorpusStats {
        let tokens = self.encoded.n_tokens() as u64;
        let covered = self.vocab.total_count();
        CorpusStats {
            tokens,
            types: self.n_types as u64,
            min_count: self.config.min_count,
            vocab_size: self.vocab.len() as u64,
            coverage: covered as f64 / tokens as f64,
            chunks: self.encoded.n_chunks() as u64,
        }
    }
}

/// A token without the characters at its ends that are neither letters nor digits (Unicode's
/// alphabetic and numeric classes): what [`CorpusConfig::drop_punctuation`] keeps of it, empty
/// when nothing is left. `cat,` -> `cat`, `u.s.` -> `u.s`, `o'clock` and `1990` stay, `--`,
/// `...` and `@-@` -> empty.
pub fn trim_punctuation(token: &str) -> &str {
    token.trim_matches(|c: char| !c.is_alphanumeric())
}

fn validate(config: &CorpusConfig) -> Result<(), CorpusError> {
    if config.chunk_len == 0 {
        return Err(CorpusError::Config("chunk_len must be at least 1".into()));
    }
    if let Some(f) = config.fraction {
        if !(f > 0.0 && f <= 1.0) {
            return Err(CorpusError::Config(format!(
                "fraction must be in (0, 1] (the share of the corpus's tokens kept), got {f}"
            )));
        }
    }
    if config.max_size == Some(0) {
        return Err(CorpusError::Config(
            "max_size must be at least 1 when set".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(preset: Preset, min_count: u64, chunk_len: usize) -> CorpusConfig {
        CorpusConfig {
            path: "mem".into(),
            preset,
            lowercase: false,
            drop_punctuation: false,
            min_count,
            max_size: None,
            chunk_len,
            fraction: None,
        }
    }

    #[test]
    fn encodes_ids_chunks_and_unknowns() {
        let text = "b a b c a b d";
        let c = Corpus::from_text(text, Path::new("mem"), &cfg(Preset::Text8, 2, 3)).unwrap();
        assert_eq!(c.vocab.words(), &["b", "a"]);
        let unk = c.vocab.specials().unk;
        assert_eq!(c.encoded.ids, vec![0, 1, 0, unk, 1, 0, unk]);
        let chunks: Vec<_> = c.encoded.chunks().collect();
        assert_eq!(chunks, vec![&[0, 1, 0][..], &[unk, 1, 0][..], &[unk][..]]);
        let s = c.stats();
        assert_eq!((s.tokens, s.types, s.vocab_size, s.chunks), (7, 4, 2, 3));
        assert!((s.coverage - 5.0 / 7.0).abs() < 1e-12);
        assert_eq!(c.encoded.n_oov(), 2);
    }

    #[test]
    fn wikitext_unk_marker_is_never_a_word() {
        let text = " <unk> cat <unk>\n = Head = \n cat dog <unk>\n";
        let c = Corpus::from_text(text, Path::new("mem"), &cfg(Preset::Wikitext, 1, 100)).unwrap();
        assert_eq!(c.vocab.words(), &["cat", "dog"]);
        let unk = c.vocab.specials().unk;
        assert_eq!(c.encoded.ids, vec![unk, 0, unk, 0, 1, unk]);
        assert_eq!(c.encoded.bounds, vec![0, 3, 6]);
        assert_eq!(c.n_types, 2);
    }

    #[test]
    fn lowercase_merges_casings() {
        let mut config = cfg(Preset::Lines, 2, 100);
        config.lowercase = true;
        let c = Corpus::from_text("The cat\nthe Cat", Path::new("mem"), &config).unwrap();
        assert_eq!(c.vocab.words(), &["the", "cat"]);
    }

    /// A raw, cased, punctuated text with `lowercase` and `drop_punctuation` encodes exactly as
    /// its hand-cleaned form does, punctuation attached to words and standing alone alike.
    #[test]
    fn punctuation_is_dropped_so_a_raw_corpus_reads_like_text8() {
        let mut config = cfg(Preset::Lines, 1, 100);
        config.lowercase = true;
        config.drop_punctuation = true;
        let raw = "The U.S. cat, in 1990 -- sat.\n\"Cat @-@ cat\" ...\n. , ;\n";
        let clean = "the u.s cat in 1990 sat\ncat cat\n";
        let a = Corpus::from_text(raw, Path::new("raw"), &config).unwrap();
        let mut plain = cfg(Preset::Lines, 1, 100);
        plain.lowercase = true;
        let b = Corpus::from_text(clean, Path::new("clean"), &plain).unwrap();
        assert_eq!(a.vocab.words(), b.vocab.words());
        assert_eq!(a.vocab.words(), &["cat", "the", "u.s", "in", "1990", "sat"]);
        assert_eq!(a.encoded, b.encoded);
        // The all-punctuation third line leaves no empty chunk behind.
        assert_eq!(a.encoded.bounds, vec![0, 6, 8]);
        // Encoding another text with this vocabulary trims its punctuation too.
        let other = a.encode_with_vocab("Sat, cat!", Preset::Lines, true);
        assert_eq!(
            other.ids,
            vec![a.vocab.id("sat").unwrap(), a.vocab.id("cat").unwrap()]
        );
        // Nothing but punctuation is an empty corpus, named as such.
        let err = Corpus::from_text(", . --\n", Path::new("p.txt"), &config).unwrap_err();
        assert!(matches!(err, CorpusError::Empty { .. }));
        for (token, kept) in [
            (",", ""),
            ("--", ""),
            ("@-@", ""),
            ("...", ""),
            ("cat,", "cat"),
            ("\"Rome", "Rome"),
            ("u.s.", "u.s"),
            ("1990.", "1990"),
            ("o'clock", "o'clock"),
            ("é", "é"),
        ] {
            assert_eq!(trim_punctuation(token), kept, "{token}");
        }
    }

    /// WikiText's unknown-word marker survives the trimming: `<unk>` is still the marker (not a
    /// word `unk`), in the corpus and in a text encoded with its vocabulary.
    #[test]
    fn drop_punctuation_keeps_the_unknown_marker() {
        let mut config = cfg(Preset::Wikitext, 1, 100);
        config.drop_punctuation = true;
        let c = Corpus::from_text(" the <unk> , cat .\n", Path::new("w"), &config).unwrap();
        assert_eq!(c.vocab.words(), &["the", "cat"]);
        let unk = c.vocab.specials().unk;
        assert_eq!(c.encoded.ids, vec![0, unk, 1]);
        let other = c.encode_with_vocab(" <unk> cat ,\n", Preset::Wikitext, false);
        assert_eq!(other.ids, vec![unk, 1]);
    }

    /// Off, the option is not in the serialised config, so the run names hashed from configs
    /// written before it existed stay the same; on, it is.
    #[test]
    fn drop_punctuation_leaves_the_config_hash_alone_while_off() {
        let off = serde_json::to_string(&CorpusConfig::default()).unwrap();
        assert!(!off.contains("drop_punctuation"), "{off}");
        assert_eq!(
            off,
            r#"{"path":"data/corpora/text8.gz","preset":"text8","lowercase":false,"min_count":5,"max_size":null,"chunk_len":10000}"#
        );
        let on = CorpusConfig {
            drop_punctuation: true,
            ..CorpusConfig::default()
        };
        assert!(serde_json::to_string(&on)
            .unwrap()
            .contains(r#""drop_punctuation":true"#));
    }

    #[test]
    fn empty_corpus_is_an_error_naming_the_file() {
        let err = Corpus::from_text(
            "  \n \n",
            Path::new("data/empty.txt"),
            &cfg(Preset::Lines, 1, 10),
        )
        .unwrap_err();
        assert!(matches!(err, CorpusError::Empty { .. }));
        assert!(err.to_string().contains("data/empty.txt"));
        // A WikiText file with only headings is empty too.
        let err = Corpus::from_text(
            " = A = \n",
            Path::new("w.txt"),
            &cfg(Preset::Wikitext, 1, 10),
        )
        .unwrap_err();
        assert!(matches!(err, CorpusError::Empty { .. }));
    }

    #[test]
    fn no_word_reaching_min_count_is_an_error() {
        let err = Corpus::from_text(
            "a b a c",
            Path::new("small.txt"),
            &cfg(Preset::Text8, 5, 10),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("small.txt")
                && msg.contains("min_count 5")
                && msg.contains("occurs 2 times"),
            "{msg}"
        );
    }

    #[test]
    fn bad_config_is_rejected() {
        let err = Corpus::from_text("a", Path::new("m"), &cfg(Preset::Text8, 1, 0)).unwrap_err();
        assert!(err.to_string().contains("chunk_len"));
    }

    #[test]
    fn other_text_is_encoded_with_the_same_ids() {
        let c =
            Corpus::from_text("x y x z y x", Path::new("m"), &cfg(Preset::Text8, 2, 100)).unwrap();
        let e = c.encode_with_vocab("y q\nx", Preset::Lines, false);
        let unk = c.vocab.specials().unk;
        assert_eq!(e.ids, vec![1, unk, 0]);
        assert_eq!(e.bounds, vec![0, 2, 3]);
    }

    #[test]
    fn sentences_of_another_text_are_cut_at_their_final_tokens_and_encoded_with_this_vocabulary() {
        let corpus = Corpus::from_text(
            "the cat sat the cat ran the dog sat the dog ran the end the end the end",
            Path::new("mem"),
            &cfg(Preset::Text8, 2, 100),
        )
        .unwrap();
        let id = |w: &str| corpus.vocab.id(w).unwrap();
        let unk = corpus.vocab.specials().unk;
        let text = " = Title = \n The Cat sat , and ran . The dog ? <unk> sat \n A cat .\n";
        let s = corpus.encode_sentences(text, Preset::Wikitext, true, true, 2, 3);
        // "the cat sat and ran ." (and unknown): cut to 3; "the dog ?": 2 words; "<unk> sat"
        // (the line's end closes it); "a cat ." has 2 words.
        assert_eq!(
            s,
            vec![
                vec![id("the"), id("cat"), id("sat")],
                vec![id("the"), id("dog")],
                vec![unk, id("sat")],
                vec![unk, id("cat")],
            ]
        );
        // Sentences shorter than min_words are left out; without dropping punctuation a comma
        // is a token (unknown here).
        let long = corpus.encode_sentences(text, Preset::Wikitext, true, false, 5, 10);
        assert_eq!(
            long,
            vec![vec![
                id("the"),
                id("cat"),
                id("sat"),
                unk,
                unk,
                id("ran"),
                unk
            ]]
        );
    }

    #[test]
    fn a_fraction_keeps_a_prefix_of_the_tokens_and_counts_its_own_vocabulary() {
        // 12 tokens: "a" 4 times in the first half, "b" 4 times in the second, "c" throughout.
        let text = "a c a c a c a b c b b b";
        let mut config = cfg(Preset::Text8, 2, 5);
        let whole = Corpus::from_text(text, Path::new("mem"), &config).unwrap();
        config.fraction = Some(0.5);
        let half = Corpus::from_text(text, Path::new("mem"), &config).unwrap();
        assert_eq!(half.encoded.n_tokens(), 6);
        // "b" never occurs in the first 6 tokens: not a word of the half's vocabulary.
        assert!(whole.vocab.id("b").is_some() && half.vocab.id("b").is_none());
        let words: Vec<&str> = half
            .encoded
            .ids
            .iter()
            .map(|&i| half.vocab.words()[i as usize].as_str())
            .collect();
        assert_eq!(words, ["a", "c", "a", "c", "a", "c"]);
        // Chunks of 5 are cut where the prefix ends: [0, 5), [5, 6).
        assert_eq!(half.encoded.bounds, [0, 5, 6]);
        // Nested: a quarter is a prefix of the half.
        config.fraction = Some(0.25);
        let quarter = Corpus::from_text(text, Path::new("mem"), &config).unwrap();
        assert_eq!(quarter.encoded.n_tokens(), 3);
        for bad in [0.0, 1.5, f64::NAN] {
            config.fraction = Some(bad);
            let e = Corpus::from_text(text, Path::new("mem"), &config)
                .unwrap_err()
                .to_string();
            assert!(e.contains("fraction must be in (0, 1]"), "{e}");
        }
        // Absent, the serialised config is what it was before the key existed.
        let json = serde_json::to_string(&CorpusConfig::default()).unwrap();
        assert!(!json.contains("fraction"), "{json}");
    }
}
