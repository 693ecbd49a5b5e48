//! Relative paths (data files, configs) resolve against the current directory first and then
//! against the repository root, so `cargo run -p experiments` works from anywhere in the clone.

use std::path::{Path, PathBuf};

/// The repository root this binary was built from.
pub fn repo_root() -> PathBuf {
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
