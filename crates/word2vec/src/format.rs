//! The word2vec file formats, as word2vec.c and gensim's `KeyedVectors` read and write them.
//!
//! * text: a header line `V D`, then `V` lines `word x1 x2 ... xD`. Floats are written in the
//!   shortest form that reads back to the same `f32`, so a round trip is exact.
//! * binary: the same header line, then per word: the word's UTF-8 bytes, a space, `D`
//!   little-endian `f32`s, and a newline (word2vec.c writes it; gensim's reader skips it).
//!
//! Reading detects the format from the content, decompresses gzip, and reports malformed
//! files with the file name and the line (text) or record number and byte offset (binary).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::WordVectors;

#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error(transparent)]
    Read(#[from] corpus::CorpusError),
    #[error("{path}: cannot write: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Binary,
}

impl Format {
    /// For writing: `.bin` (optionally `.bin.gz`) is binary, anything else text.
    pub fn from_path(path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if name.ends_with(".bin") || name.ends_with(".bin.gz") {
            Format::Binary
        } else {
            Format::Text
        }
    }
}

pub fn write(vectors: &WordVectors, path: &Path, format: Format) -> Result<(), FormatError> {
    corpus::io::write_atomic(path, |w| match format {
        Format::Text => write_text(vectors, w),
        Format::Binary => write_binary(vectors, w),
    })
    .map_err(|source| FormatError::Write {
        path: path.to_owned(),
        source,
    })
}

pub fn write_text(v: &WordVectors, w: &mut dyn Write) -> std::io::Result<()> {
    writeln!(w, "{} {}", v.len(), v.dim())?;
    for (i, word) in v.words().iter().enumerate() {
        w.write_all(word.as_bytes())?;
        for x in v.row(i) {
            write!(w, " {x}")?;
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}

pub fn write_binary(v: &WordVectors, w: &mut dyn Write) -> std::io::Result<()> {
    writeln!(w, "{} {}", v.len(), v.dim())?;
    let mut buf = Vec::with_capacity(v.dim() * 4);
    for (i, word) in v.words().iter().enumerate() {
        w.write_all(word.as_bytes())?;
        w.write_all(b" ")?;
        buf.clear();
        for x in v.row(i) {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        w.write_all(&buf)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// Reads a text or binary word2vec file (optionally gzip-compressed). The format comes from the
/// name (`.bin` binary; `.txt`, `.vec` text); for other names, a body that is valid UTF-8 is
/// text and anything else binary.
pub fn read(path: &Path) -> Result<WordVectors, FormatError> {
    let bytes = corpus::read::read_bytes(path)?;
    let malformed = |line: usize, message: String| FormatError::Malformed {
        path: path.to_owned(),
        line,
        message,
    };
    let header_end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| malformed(1, "no header line `<count> <dim>`".into()))?;
    let header = std::str::from_utf8(&bytes[..header_end])
        .map_err(|_| malformed(1, "header is not text".into()))?;
    let (n, dim) = parse_header(header).ok_or_else(|| {
        malformed(
            1,
            format!("expected header `<count> <dim>`, found {header:?}"),
        )
    })?;
    let body = &bytes[header_end + 1..];
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let name = name.trim_end_matches(".gz");
    let binary = if name.ends_with(".bin") {
        true
    } else if name.ends_with(".txt") || name.ends_with(".vec") {
        false
    } else {
        std::str::from_utf8(body).is_err()
    };
    if binary {
        read_binary_body(body, n, dim, header_end + 1, &malformed)
    } else {
        read_text_body(body, n, dim, &malformed)
    }
}

fn parse_header(h: &str) -> Option<(usize, usize)> {
    let mut it = h.split_whitespace();
    let n = it.next()?.parse().ok()?;
    let d: usize = it.next()?.parse().ok()?;
    (it.next().is_none() && d > 0).then_some((n, d))
}

type Malformed<'a> = dyn Fn(usize, String) -> FormatError + 'a;

fn read_text_body(
    body: &[u8],
    n: usize,
    dim: usize,
    malformed: &Malformed,
) -> Result<WordVectors, FormatError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        let line = 2 + body[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        malformed(line, "invalid UTF-8".into())
    })?;
    let mut words = Vec::with_capacity(n);
    let mut data = Vec::with_capacity(n * dim);
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 2;
        if line.trim().is_empty() {
            continue;
        }
        if words.len() == n {
            return Err(malformed(
                lineno,
                format!("more rows than the header's {n}"),
            ));
        }
        let mut fields = line.split(' ').filter(|f| !f.is_empty());
        let word = fields.next().unwrap_or_default();
        let before = data.len();
        for (k, f) in fields.enumerate() {
            if k == dim {
                return Err(malformed(
                    lineno,
                    format!("row for {word:?} has more than {dim} values"),
                ));
            }
            let x: f32 = f.trim_end_matches('\r').parse().map_err(|_| {
                malformed(
                    lineno,
                    format!("value {} of {word:?} is not a number: {f:?}", k + 1),
                )
            })?;
            data.push(x);
        }
        let got = data.len() - before;
        if got != dim {
            return Err(malformed(
                lineno,
                format!("row for {word:?} has {got} values, expected {dim}"),
            ));
        }
        words.push(word.to_owned());
    }
    if words.len() != n {
        return Err(malformed(
            text.lines().count() + 2,
            format!("file ends after {} rows, header says {n}", words.len()),
        ));
    }
    Ok(WordVectors::new(words, dim, data))
}

fn read_binary_body(
    body: &[u8],
    n: usize,
    dim: usize,
    body_offset: usize,
    malformed: &Malformed,
) -> Result<WordVectors, FormatError> {
    let mut words = Vec::with_capacity(n);
    let mut data = Vec::with_capacity(n * dim);
    let mut pos = 0usize;
    for rec in 0..n {
        // Record numbers are reported as lines: the header is line 1, record r is line r + 2.
        let lineno = rec + 2;
        while pos < body.len() && body[pos] == b'\n' {
            pos += 1;
        }
        let space = body[pos..].iter().position(|&b| b == b' ').ok_or_else(|| {
            malformed(lineno, format!("record {} at byte {}: file ends before the word's terminating space (header says {n} records)", rec + 1, body_offset + pos))
        })?;
        let word = std::str::from_utf8(&body[pos..pos + space]).map_err(|_| {
            malformed(
                lineno,
                format!(
                    "record {} at byte {}: word is not UTF-8",
                    rec + 1,
                    body_offset + pos
                ),
            )
        })?;
        if word.is_empty() {
            return Err(malformed(
                lineno,
                format!(
                    "record {} at byte {}: empty word",
                    rec + 1,
                    body_offset + pos
                ),
            ));
        }
        if word.chars().any(char::is_control) {
            return Err(malformed(
                lineno,
                format!("record {} at byte {}: word {word:?} contains control bytes (wrong dimension in the header?)", rec + 1, body_offset + pos),
            ));
        }
        pos += space + 1;
        let need = dim * 4;
        if body.len() - pos < need {
            return Err(malformed(
                lineno,
                format!(
                    "record {} ({word:?}) at byte {}: short row, {} of {need} vector bytes",
                    rec + 1,
                    body_offset + pos,
                    body.len() - pos
                ),
            ));
        }
        data.extend(
            body[pos..pos + need]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        pos += need;
        words.push(word.to_owned());
    }
    while pos < body.len() && body[pos].is_ascii_whitespace() {
        pos += 1;
    }
    if pos != body.len() {
        return Err(malformed(
            n + 2,
            format!(
                "{} unexpected bytes after the {n} records the header announces (wrong dimension?)",
                body.len() - pos
            ),
        ));
    }
    Ok(WordVectors::new(words, dim, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> WordVectors {
        WordVectors::new(
            vec!["the".into(), "über".into(), "x".into()],
            3,
            vec![
                0.1,
                -2.5e-8,
                3.4028235e38,
                1.0 / 3.0,
                0.0,
                -0.0,
                f32::MIN_POSITIVE,
                7.0,
                -1.25,
            ],
        )
    }

    #[test]
    fn text_and_binary_round_trips_are_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        let v = sample();
        for (name, fmt) in [
            ("v.txt", Format::Text),
            ("v.bin", Format::Binary),
            ("v.vectors", Format::Binary),
        ] {
            let p = dir.path().join(name);
            write(&v, &p, fmt).unwrap();
            let back = read(&p).unwrap();
            assert_eq!(back.words(), v.words());
            let bits = |w: &WordVectors| w.data().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&back), bits(&v), "{name}");
        }
    }

    fn expect_malformed(name: &str, content: &[u8], line: usize, needle: &str) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        let err = read(&p).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&format!("{name}:{line}:")), "{msg}");
        assert!(msg.contains(needle), "{msg}");
    }

    #[test]
    fn malformed_text_files_name_file_and_line() {
        expect_malformed("h.txt", b"three 2\na 1 2\n", 1, "expected header");
        expect_malformed("h.txt", b"2 2 7\na 1 2\n", 1, "expected header");
        expect_malformed(
            "s.txt",
            b"2 3\na 1 2 3\nb 1 2\n",
            3,
            "has 2 values, expected 3",
        );
        expect_malformed("l.txt", b"2 2\na 1 2 3\nb 1 2\n", 2, "more than 2 values");
        expect_malformed("n.txt", b"2 2\na 1 2\nb 1 x2\n", 3, "not a number");
        expect_malformed("t.txt", b"3 2\na 1 2\nb 1 2\n", 4, "ends after 2 rows");
        expect_malformed("m.txt", b"1 2\na 1 2\nb 1 2\n", 3, "more rows");
    }

    #[test]
    fn malformed_binary_files_name_file_and_record() {
        let mut ok = b"2 2\n".to_vec();
        for w in ["a", "b"] {
            ok.extend_from_slice(w.as_bytes());
            ok.push(b' ');
            ok.extend_from_slice(&1f32.to_le_bytes());
            ok.extend_from_slice(&2f32.to_le_bytes());
            ok.push(b'\n');
        }
        // Short row: the last record loses bytes.
        expect_malformed("short.bin", &ok[..ok.len() - 4], 3, "short row");
        // Wrong dimension in the header: records are longer than announced.
        let mut wrong = ok.clone();
        wrong[2] = b'1';
        expect_malformed("dim.bin", &wrong, 3, "wrong dimension");
        // Fewer records than announced.
        let mut more = ok.clone();
        more[0] = b'3';
        expect_malformed("count.bin", &more, 4, "header says 3 records");
        expect_malformed("hdr.bin", b"x y\n", 1, "expected header");
    }
}
