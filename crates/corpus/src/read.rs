//! Reading text files, plain or gzip-compressed. Compression is detected from the gzip magic
//! bytes, not the file name, so a renamed file still reads.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::CorpusError;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads the whole file as bytes, decompressing gzip transparently.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, CorpusError> {
    let io_err = |source| CorpusError::Io {
        path: path.to_owned(),
        source,
    };
    let mut raw = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut raw))
        .map_err(io_err)?;
    if raw.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::with_capacity(raw.len() * 3);
        MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .map_err(|source| CorpusError::Gzip {
                path: path.to_owned(),
                source,
            })?;
        Ok(out)
    } else {
        Ok(raw)
    }
}

/// Reads the whole file as UTF-8 text (decompressing gzip). Invalid UTF-8 is an error naming the
/// 1-based line and the byte offset (in the decompressed text) of the first bad byte.
pub fn read_text(path: &Path) -> Result<String, CorpusError> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
        CorpusError::InvalidUtf8 {
            path: path.to_owned(),
            line,
            offset,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_plain_and_gzip_identically() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        std::fs::write(&plain, "hello world\nsecond line\n").unwrap();
        let gz = dir.path().join("a.bin"); // no .gz suffix on purpose: detection is by magic bytes
        let mut enc = flate2::write::GzEncoder::new(File::create(&gz).unwrap(), Default::default());
        enc.write_all(b"hello world\nsecond line\n").unwrap();
        enc.finish().unwrap();
        assert_eq!(read_text(&plain).unwrap(), read_text(&gz).unwrap());
    }

    #[test]
    fn missing_file_names_the_file() {
        let err = read_text(Path::new("/nonexistent/corpus.txt")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("/nonexistent/corpus.txt"), "{msg}");
        assert!(matches!(err, CorpusError::Io { .. }));
    }

    #[test]
    fn invalid_utf8_names_line_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.txt");
        std::fs::write(&p, b"good line\nalso good\nbad \xff byte\n").unwrap();
        let err = read_text(&p).unwrap_err();
        match &err {
            CorpusError::InvalidUtf8 { line, offset, .. } => {
                assert_eq!(*line, 3);
                assert_eq!(*offset, 24);
            }
            other => panic!("wrong error {other:?}"),
        }
        assert!(err.to_string().contains("bad.txt"));
    }

    #[test]
    fn truncated_gzip_is_a_gzip_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("broken.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        enc.write_all(&[b'x'; 5000]).unwrap();
        let full = enc.finish().unwrap();
        std::fs::write(&p, &full[..full.len() / 2]).unwrap();
        let err = read_text(&p).unwrap_err();
        assert!(matches!(err, CorpusError::Gzip { .. }), "{err:?}");
        assert!(err.to_string().contains("broken.gz"));
    }
}
