//! Relative paths (data files, configs) resolve against the current directory first and then
//! against the repository root, so `cargo run -p experiments` works from anywhere in the clone.

use std::path::{Path, PathBuf};

/// The repository root: looked up at run time first, because a target directory shared between
/// clones (CI's cache) can hold a binary built from another clone, whose compile-time path may
/// be gone. `cargo run` and `cargo test` set CARGO_MANIFEST_DIR for the process; otherwise the
/// nearest ancestor of the current directory with `data/` and `experiments/`; otherwise the
/// clone the binary was built from.
pub fn repo_root() -> PathBuf {
    let is_root = |p: &Path| p.join("data").is_dir() && p.join("experiments").is_dir();
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
        let root = Path::new(&dir).join("..");
        if is_root(&root) {
            return root;
        }
    }
    if let Ok(cwd) = std::env::current_dir() {
        if let Some(root) = cwd.ancestors().find(|a| is_root(a)) {
            return root.to_owned();
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `path` itself if it exists or is absolute, else the same path under the repository root if
/// that exists, else `path` unchanged (so the error names what the user wrote).
pub fn resolve(path: &Path) -> PathBuf {
    if path.is_absolute() || path.exists() {
        return path.to_owned();
    }
    let under_root = repo_root().join(path);
    if under_root.exists() {
        under_root
    } else {
        path.to_owned()
    }
}

pub fn data(rel: &str) -> PathBuf {
    resolve(&Path::new("data").join(rel))
}

/// Checks, before any work, that `--out` is (or can be made) a directory this process can write
/// in: a run must not train for an hour and then fail to save. Creates it when missing.
pub fn check_out(out: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    if out.exists() && !out.is_dir() {
        anyhow::bail!("--out {}: is a file, not a directory", out.display());
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("--out {}: cannot create the directory", out.display()))?;
    tempfile::Builder::new()
        .prefix(".write-check-")
        .tempfile_in(out)
        .with_context(|| format!("--out {}: cannot write there", out.display()))?;
    Ok(())
}
