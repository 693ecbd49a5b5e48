//! Atomic writes: the content goes to a temporary file in the destination's directory and is
//! renamed over the destination only once complete, so an error or a crash half-way never
//! leaves a truncated result file behind.

use std::io::{self, Write};
use std::path::Path;

/// Creates `path` (and its parent directories) with whatever `fill` writes, atomically.
pub fn write_atomic<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    {
        let mut w = io::BufWriter::new(tmp.as_file());
        fill(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.csv");
        let r = write_atomic(&p, |w| {
            w.write_all(b"half a row")?;
            Err(io::Error::other("boom"))
        });
        assert!(r.is_err());
        assert!(!p.exists());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert!(
            leftovers.is_empty(),
            "temporary file left behind: {leftovers:?}"
        );
    }

    #[test]
    fn successful_write_replaces_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.txt");
        std::fs::write(&p, "old").unwrap();
        write_atomic(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    }
}
