//! Tokenisation presets. Every preset splits on whitespace; they differ in what counts as a
//! sentence (a chunk boundary that no context window crosses) and in the markup they undo.
//!
//! * `text8`: one long line of lower-case words with no sentence boundaries. The token stream is
//!   cut into fixed-length chunks (see [`crate::CorpusConfig::chunk_len`]), as word2vec does.
//! * `wikitext`: WikiText-2's raw tokenised form. Heading lines (`= = Title = =`) are dropped,
//!   the number/hyphen markup is undone (`1 @,@ 000` -> `1,000`, `0 @.@ 7` -> `0.7`,
//!   `red @-@ tipped` -> `red-tipped`), each non-empty line is a sentence, and WikiText's own
//!   `<unk>` is never a vocabulary word: it is encoded as the unknown token.
//! * `lines`: any text, one sentence per non-empty line.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    Text8,
    Wikitext,
    Lines,
}

impl Preset {
    pub fn parse(name: &str) -> Option<Preset> {
        match name {
            "text8" => Some(Preset::Text8),
            "wikitext" => Some(Preset::Wikitext),
            "lines" => Some(Preset::Lines),
            _ => None,
        }
    }

    /// Whether line breaks end sentences.
    pub fn line_is_sentence(self) -> bool {
        !matches!(self, Preset::Text8)
    }

    /// A literal token that the source already uses for unknown words; never counted as a word.
    pub fn unknown_marker(self) -> Option<&'static str> {
        match self {
            Preset::Wikitext => Some("<unk>"),
            _ => None,
        }
    }

    /// Undoes the preset's markup, line by line. Borrowed when nothing changes.
    pub fn normalise<'a>(self, text: &'a str) -> Cow<'a, str> {
        match self {
            Preset::Text8 | Preset::Lines => Cow::Borrowed(text),
            Preset::Wikitext => {
                let mut out = String::with_capacity(text.len());
                for line in text.lines() {
                    let t = line.trim();
                    if t.starts_with("= ") && t.ends_with(" =") {
                        continue; // a heading, not running text
                    }
                    let line = line
                        .replace(" @-@ ", "-")
                        .replace(" @,@ ", ",")
                        .replace(" @.@ ", ".");
                    out.push_str(&line);
                    out.push('\n');
                }
                Cow::Owned(out)
            }
        }
    }
}

/// What the tokeniser yields: a word, or the end of a sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    Word(&'a str),
    EndOfSentence,
}

/// Streams the tokens of normalised text, with an end-of-sentence mark after each non-empty
/// sentence. Nothing is collected: text8 is one 2-million-token line.
pub fn tokens<'a>(preset: Preset, text: &'a str) -> Box<dyn Iterator<Item = Token<'a>> + 'a> {
    if preset.line_is_sentence() {
        Box::new(text.lines().flat_map(|line| {
            let mut words = line.split_whitespace().peekable();
            let end = words.peek().is_some().then_some(Token::EndOfSentence);
            words.map(Token::Word).chain(end)
        }))
    } else {
        Box::new(
            text.split_whitespace()
                .map(Token::Word)
                .chain(std::iter::once(Token::EndOfSentence)),
        )
    }
}

/// Sentences as vectors of words (convenient for small texts and tests; [`tokens`] streams).
pub fn sentences<'a>(preset: Preset, text: &'a str) -> Vec<Vec<&'a str>> {
    let mut out = vec![];
    let mut cur = vec![];
    for t in tokens(preset, text) {
        match t {
            Token::Word(w) => cur.push(w),
            Token::EndOfSentence if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
            Token::EndOfSentence => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text8_is_one_whitespace_stream() {
        let s = sentences(Preset::Text8, " anarchism originated as\na term ");
        assert_eq!(s, vec![vec!["anarchism", "originated", "as", "a", "term"]]);
    }

    #[test]
    fn wikitext_drops_headings_and_undoes_markup() {
        let raw = " \n = Homarus gammarus = \n \n It weighs 0 @.@ 7 kg , red @-@ tipped , 1 @,@ 000 <unk> .\n = = Life cycle = = \n Next line .\n";
        let norm = Preset::Wikitext.normalise(raw);
        let s = sentences(Preset::Wikitext, &norm);
        assert_eq!(
            s,
            vec![
                vec![
                    "It",
                    "weighs",
                    "0.7",
                    "kg",
                    ",",
                    "red-tipped",
                    ",",
                    "1,000",
                    "<unk>",
                    "."
                ],
                vec!["Next", "line", "."],
            ]
        );
        assert_eq!(Preset::Wikitext.unknown_marker(), Some("<unk>"));
    }

    #[test]
    fn lines_preset_keeps_lines_as_sentences() {
        let s = sentences(Preset::Lines, "a b\n\n  \nc\td e\n");
        assert_eq!(s, vec![vec!["a", "b"], vec!["c", "d", "e"]]);
    }
}
