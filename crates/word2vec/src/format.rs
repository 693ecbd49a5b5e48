//! The word2vec file formats, as word2vec.c and gensim's `KeyedVectors` read and write them.
//!
//! * text: a header line `V D`, then `V` lines `word x1 x2 ... xD`. Floats are written in the
//!   shortest form that reads back to the same `f32`, so a round trip is exact.
//! * binary: the same header line, then per word: the word's UTF-8 bytes, a space, `D`
//!   little-endian `f32`s, and a newline (word2vec.c writes it; gensim's reader skips it).
//!
//! * GloVe: text rows with no header line; read as gensim reads them with `no_header=True`.
//!
//! Reading detects the format from the bytes (never from the file name), decompresses gzip,
//! and reports malformed files with the file name and the line (text) or record number and
//! byte offset (binary). NaN and infinite values are refused: one such row changes every cosine
//! it takes part in.

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

/// How a vectors file was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detected {
    /// word2vec text: header `V D`, then text rows.
    Text,
    /// word2vec binary: header `V D`, then raw little-endian `f32` records.
    Binary,
    /// GloVe: text rows with no header (gensim's `no_header=True`); `D` from the first row.
    Glove,
}

/// A vectors file, read, with what was odd about it but not wrong enough to refuse.
pub struct Loaded {
    pub vectors: WordVectors,
    pub format: Detected,
    /// Duplicate words, all-zero rows, an empty table: each with the line it was seen on.
    pub warnings: Vec<String>,
}

/// Reads a word2vec text or binary file, or a GloVe file (optionally gzip-compressed), and
/// prints its warnings on stderr. See [`read_checked`].
pub fn read(path: &Path) -> Result<WordVectors, FormatError> {
    let loaded = read_checked(path)?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    Ok(loaded.vectors)
}

/// Reads a vectors file, detecting the format from its bytes, never from its name:
/// * a first line `<count> <dim>` is a word2vec header; the rows after it are text when the
///   first one reads as a word and `dim` numbers, binary otherwise;
/// * a first line `word x1 ... xD` (D >= 2) is a GloVe file without header.
///
/// Refused, with the file and line: a header announcing more rows than the file's size can
/// hold (nothing is allocated for it), NaN or infinite values (one such row changes every
/// cosine it enters), and every malformed row.
pub fn read_checked(path: &Path) -> Result<Loaded, FormatError> {
    let bytes = corpus::read::read_bytes(path)?;
    let malformed = |line: usize, message: String| FormatError::Malformed {
        path: path.to_owned(),
        line,
        message,
    };
    let first_end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    let first = std::str::from_utf8(&bytes[..first_end]).ok();
    let header = first.and_then(parse_header);
    let mut warnings = Vec::new();
    let (vectors, format) = match header {
        Some((n, dim)) => {
            let body = bytes.get(first_end + 1..).unwrap_or(&[]);
            if n == 0 {
                warnings.push(format!(
                    "{}:1: the header announces 0 vectors",
                    path.display()
                ));
            }
            let as_text = || -> Result<(WordVectors, Detected), FormatError> {
                check_size(n, dim, 2, 1, body.len(), "text", &malformed)?;
                Ok((
                    read_text_body(body, Some(n), dim, 2, &malformed)?,
                    Detected::Text,
                ))
            };
            let as_binary = || -> Result<(WordVectors, Detected), FormatError> {
                check_size(n, dim, 4, 0, body.len(), "binary", &malformed)?;
                let v = read_binary_body(body, n, dim, first_end + 1, &malformed)?;
                Ok((v, Detected::Binary))
            };
            // The first row says which the body looks like; a binary row whose float bytes
            // happen to read as a word and numbers up to a 0x0A byte looks like text (a
            // fuzzed table found one), so the other reading is tried when the likely one
            // fails, and the likely one's error is the one reported.
            if body_is_text(body) {
                as_text().or_else(|e| as_binary().map_err(|_| e))?
            } else {
                as_binary().or_else(|e| as_text().map_err(|_| e))?
            }
        }
        None => match first.and_then(glove_dim) {
            Some(dim) => {
                let text_end = bytes.len();
                let v = read_text_body(&bytes[..text_end], None, dim, 1, &malformed)?;
                (v, Detected::Glove)
            }
            None => {
                let shown: String = String::from_utf8_lossy(&bytes[..first_end.min(60)]).into();
                let more = if first_end > 60 { "..." } else { "" };
                return Err(malformed(
                    1,
                    format!(
                        "neither a word2vec header `<count> <dim>` nor a GloVe row `word x1 ... xD`: {shown:?}{more}"
                    ),
                ));
            }
        },
    };
    let first_line = if format == Detected::Glove { 1 } else { 2 };
    warnings.extend(oddities(&vectors, first_line, path));
    Ok(Loaded {
        vectors,
        format,
        warnings,
    })
}

/// Refuses a header whose rows cannot fit in the bytes that follow it, before anything is
/// allocated for them: a row takes at least `per_value` bytes per value plus `extra` (text: a
/// digit and a space per value and a one-letter word; binary: four bytes per value). A file
/// merely cut short passes this bound and gets the precise record-level error instead. Every product is checked, so a header of u64::MAX is an error, not an overflow.
fn check_size(
    n: usize,
    dim: usize,
    per_value: usize,
    extra: usize,
    available: usize,
    kind: &str,
    malformed: &Malformed,
) -> Result<(), FormatError> {
    let min_row = dim
        .checked_mul(per_value)
        .and_then(|b| b.checked_add(extra));
    let need = min_row.and_then(|r| n.checked_mul(r));
    if need.is_none_or(|need| need > available) {
        let row = min_row.map_or(format!("{dim} values"), |r| format!("at least {r} bytes"));
        return Err(malformed(
            1,
            format!(
                "the header announces {n} {kind} rows of {row} each, but only {available} bytes follow it"
            ),
        ));
    }
    Ok(())
}

/// Whether the rows after a header are text: the first one is UTF-8 and reads as a word and
/// numbers (how many is for the row parser to check, with a precise message). Raw `f32` bytes
/// essentially never form space-separated decimal numbers.
fn body_is_text(body: &[u8]) -> bool {
    let end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
    if body.is_empty() {
        return true;
    }
    let Ok(line) = std::str::from_utf8(&body[..end]) else {
        return false;
    };
    let fields: Vec<&str> = line
        .trim_end_matches('\r')
        .split(' ')
        .filter(|f| !f.is_empty())
        .collect();
    fields.len() >= 2 && fields[1..].iter().all(|f| f.parse::<f32>().is_ok())
}

/// The dimension of a GloVe file from its first row: a word and at least two numbers.
fn glove_dim(line: &str) -> Option<usize> {
    let fields: Vec<&str> = line
        .trim_end_matches('\r')
        .split(' ')
        .filter(|f| !f.is_empty())
        .collect();
    (fields.len() >= 3 && fields[1..].iter().all(|f| f.parse::<f32>().is_ok()))
        .then(|| fields.len() - 1)
}

/// Duplicate words and all-zero rows: allowed by the format, rarely meant.
fn oddities(v: &WordVectors, first_line: usize, path: &Path) -> Vec<String> {
    let mut seen = std::collections::HashMap::new();
    let (mut dups, mut zeros) = (Vec::new(), Vec::new());
    for (i, w) in v.words().iter().enumerate() {
        if let Some(j) = seen.insert(w.as_str(), i) {
            dups.push(format!(
                "{w:?} (lines {} and {})",
                j + first_line,
                i + first_line
            ));
        }
        if v.row(i).iter().all(|&x| x == 0.0) {
            zeros.push(format!("{w:?} (line {})", i + first_line));
        }
    }
    let mut out = Vec::new();
    let list = |xs: &[String]| {
        let shown = xs.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        if xs.len() > 3 {
            format!("{shown}, ...")
        } else {
            shown
        }
    };
    if !dups.is_empty() {
        out.push(format!(
            "{}: {} duplicate word(s), the last row wins in look-ups: {}",
            path.display(),
            dups.len(),
            list(&dups)
        ));
    }
    if !zeros.is_empty() {
        out.push(format!(
            "{}: {} all-zero row(s), which have no direction (cosine undefined): {}",
            path.display(),
            zeros.len(),
            list(&zeros)
        ));
    }
    out
}

fn parse_header(h: &str) -> Option<(usize, usize)> {
    let mut it = h.split_whitespace();
    let n = it.next()?.parse().ok()?;
    let d: usize = it.next()?.parse().ok()?;
    (it.next().is_none() && d > 0).then_some((n, d))
}

type Malformed<'a> = dyn Fn(usize, String) -> FormatError + 'a;

/// Text rows `word x1 ... xD`, the first on line `first_line`; `n` rows exactly when given.
fn read_text_body(
    body: &[u8],
    n: Option<usize>,
    dim: usize,
    first_line: usize,
    malformed: &Malformed,
) -> Result<WordVectors, FormatError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        let line = first_line
            + body[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
        malformed(line, "invalid UTF-8".into())
    })?;
    let glove = if n.is_none() {
        " (a GloVe file without header: the dimension comes from line 1)"
    } else {
        ""
    };
    let mut words = Vec::with_capacity(n.unwrap_or(0));
    let mut data = Vec::with_capacity(n.unwrap_or(0) * dim);
    for (i, line) in text.lines().enumerate() {
        let lineno = i + first_line;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(n) = n {
            if words.len() == n {
                return Err(malformed(
                    lineno,
                    format!("more rows than the header's {n}"),
                ));
            }
        }
        let mut fields = line.split(' ').filter(|f| !f.is_empty());
        let word = fields.next().unwrap_or_default();
        let before = data.len();
        for (k, f) in fields.enumerate() {
            if k == dim {
                return Err(malformed(
                    lineno,
                    format!("row for {word:?} has more than {dim} values{glove}"),
                ));
            }
            let x: f32 = f.trim_end_matches('\r').parse().map_err(|_| {
                malformed(
                    lineno,
                    format!("value {} of {word:?} is not a number: {f:?}", k + 1),
                )
            })?;
            if !x.is_finite() {
                return Err(malformed(
                    lineno,
                    format!(
                        "value {} of {word:?} is {f:?}, not a finite number (NaN or infinity, or beyond f32's range)",
                        k + 1
                    ),
                ));
            }
            data.push(x);
        }
        let got = data.len() - before;
        if got != dim {
            return Err(malformed(
                lineno,
                format!("row for {word:?} has {got} values, expected {dim}{glove}"),
            ));
        }
        words.push(word.to_owned());
    }
    if let Some(n) = n {
        if words.len() != n {
            return Err(malformed(
                text.lines().count() + first_line,
                format!("file ends after {} rows, header says {n}", words.len()),
            ));
        }
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
    // `n` is bounded by the body's size (`check_size`), so these reservations are too.
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
        for (k, b) in body[pos..pos + need].chunks_exact(4).enumerate() {
            let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if !x.is_finite() {
                return Err(malformed(
                    lineno,
                    format!(
                        "record {} ({word:?}) at byte {}: value {} is {x}, not a finite number",
                        rec + 1,
                        body_offset + pos + 4 * k,
                        k + 1
                    ),
                ));
            }
            data.push(x);
        }
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
        expect_malformed("h.txt", b"three 2\na 1 2\n", 1, "neither a word2vec header");
        expect_malformed("h.txt", b"2 x\na 1 2\n", 1, "neither a word2vec header");
        expect_malformed(
            "s.txt",
            b"2 3\na 1 2 3\nb 1 2\n",
            3,
            "has 2 values, expected 3",
        );
        expect_malformed("l.txt", b"2 2\na 1 2 3\nb 1 2\n", 2, "more than 2 values");
        expect_malformed("n.txt", b"2 2\na 1 2\nb 1 x2\n", 3, "not a number");
        // More rows announced than the file can hold: the header is what is wrong (line 1); one
        // row short of what fits is found at the end instead.
        expect_malformed("t.txt", b"3 2\na 1 2\nb 1 2\n", 1, "announces 3 text rows");
        expect_malformed(
            "t.txt",
            b"3 2\naa 1.5 2.5\nbb 1 2\n",
            4,
            "ends after 2 rows",
        );
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
        expect_malformed(
            "count.bin",
            &more,
            1,
            "announces 3 binary rows of at least 8 bytes each, but only 22",
        );
        expect_malformed("hdr.bin", b"x y\n", 1, "neither a word2vec header");
    }

    fn binary_file(header: &str, rows: &[(&str, &[f32])]) -> Vec<u8> {
        let mut b = format!("{header}\n").into_bytes();
        for (w, xs) in rows {
            b.extend_from_slice(w.as_bytes());
            b.push(b' ');
            for x in *xs {
                b.extend_from_slice(&x.to_le_bytes());
            }
            b.push(b'\n');
        }
        b
    }

    #[test]
    fn a_header_larger_than_the_file_is_refused_before_allocating() {
        // 99,999,999,999 x 300 floats would be 120 GB; u64::MAX rows overflow any product.
        expect_malformed(
            "big.txt",
            b"99999999999 300\na 1 2\n",
            1,
            "announces 99999999999 text rows",
        );
        let huge = format!("{} 2\na 1 2\n", u64::MAX);
        expect_malformed(
            "max.txt",
            huge.as_bytes(),
            1,
            "announces 18446744073709551615",
        );
        let bin = binary_file("99999999999 2", &[("a", &[1.0, 2.0])]);
        expect_malformed("big.bin", &bin, 1, "binary rows of at least 8 bytes");
        let bin = binary_file(&format!("2 {}", u64::MAX / 2), &[("a", &[1.0, 2.0])]);
        expect_malformed("dim.bin", &bin, 1, "announces 2");
    }

    #[test]
    fn non_finite_values_are_refused_with_their_line() {
        expect_malformed(
            "nan.txt",
            b"2 2\na 1 2\nb NaN 2\n",
            3,
            "value 1 of \"b\" is \"NaN\"",
        );
        expect_malformed(
            "inf.txt",
            b"2 2\na 1 inf\nb 1 2\n",
            2,
            "not a finite number",
        );
        // Beyond f32's range parses to infinity: refused the same way.
        expect_malformed("big.txt", b"1 2\na 1 1e39\n", 2, "value 2 of \"a\"");
        let bin = binary_file("2 2", &[("a", &[1.0, 2.0]), ("b", &[f32::NAN, 0.5])]);
        expect_malformed(
            "nan.bin",
            &bin,
            3,
            "record 2 (\"b\") at byte 17: value 1 is NaN",
        );
        let bin = binary_file("1 2", &[("a", &[1.0, f32::NEG_INFINITY])]);
        expect_malformed("inf.bin", &bin, 2, "value 2 is -inf");
    }

    #[test]
    fn the_format_comes_from_the_bytes_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let v = sample();
        // Binary content under a text name and text content under a binary name.
        for (name, fmt, want) in [
            ("looks-text.txt", Format::Binary, Detected::Binary),
            ("looks-binary.bin", Format::Text, Detected::Text),
            ("no-extension", Format::Binary, Detected::Binary),
        ] {
            let p = dir.path().join(name);
            write(&v, &p, fmt).unwrap();
            let loaded = read_checked(&p).unwrap();
            assert_eq!(loaded.format, want, "{name}");
            assert_eq!(loaded.vectors, v, "{name}");
        }
    }

    #[test]
    fn glove_files_without_header_read_as_gensim_no_header() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("glove.6B.3d.txt");
        std::fs::write(&p, "the 0.418 0.24968 -0.41242\n, 0.013441 0.23682 -0.16899\r\n\nof 0.70853 0.57088 -0.4716\n").unwrap();
        let loaded = read_checked(&p).unwrap();
        assert_eq!(loaded.format, Detected::Glove);
        assert_eq!(loaded.vectors.words(), ["the", ",", "of"]);
        assert_eq!(loaded.vectors.dim(), 3);
        assert_eq!(loaded.vectors.row(1), [0.013441f32, 0.23682, -0.16899]);
        // A short row names its line and says how the dimension was found.
        std::fs::write(&p, "the 0.4 0.2 -0.4\nof 0.7 0.5\n").unwrap();
        let msg = read(&p).unwrap_err().to_string();
        assert!(
            msg.contains("glove.6B.3d.txt:2:") && msg.contains("GloVe"),
            "{msg}"
        );
        // A long first line is not dumped whole into the message.
        let long = format!("{}\n", "x".repeat(5000));
        std::fs::write(&p, long).unwrap();
        let msg = read(&p).unwrap_err().to_string();
        assert!(msg.contains(":1:") && msg.len() < 300, "{msg}");
    }

    #[test]
    fn duplicates_zero_rows_and_empty_headers_are_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("odd.txt");
        std::fs::write(&p, "3 2\na 1 2\nz 0 0\na 3 4\n").unwrap();
        let w = read_checked(&p).unwrap().warnings;
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].contains("1 duplicate word(s)") && w[0].contains("\"a\" (lines 2 and 4)"),
            "{w:?}"
        );
        assert!(
            w[1].contains("1 all-zero row(s)") && w[1].contains("\"z\" (line 3)"),
            "{w:?}"
        );
        std::fs::write(&p, "0 5\n").unwrap();
        let loaded = read_checked(&p).unwrap();
        assert_eq!(loaded.vectors.len(), 0);
        assert!(loaded.warnings[0].contains("odd.txt:1: the header announces 0 vectors"));
        std::fs::write(&p, "2 2\na 1 2\nb 3 4\n").unwrap();
        assert!(read_checked(&p).unwrap().warnings.is_empty());
    }
}
