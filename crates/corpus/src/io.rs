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
    let mut builder = tempfile::Builder::new();
    builder.prefix(".tmp-").suffix(".tmp");
    // tempfile creates 0600 files by default (it is made for secrets); a result file should get
    // what any other tool would give it: 0666 less the user's umask.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = builder.tempfile_in(dir)?;
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

    #[cfg(unix)]
    #[test]
    fn written_files_follow_the_umask_not_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.csv");
        // Under umask 022 a file is created 0644 (tempfile's own default would be 0600). The
        // umask is process-wide: set for the write, then restored.
        let before = unsafe { libc_umask(0o022) };
        let written = write_atomic(&p, |w| w.write_all(b"x"));
        unsafe { libc_umask(before) };
        written.unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "mode {mode:o}");
    }

    #[cfg(unix)]
    extern "C" {
        #[link_name = "umask"]
        fn libc_umask(mask: u32) -> u32;
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
