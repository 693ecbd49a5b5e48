//! What can go wrong reading a checkpoint directory, each naming the file (and the tensor or
//! key) at fault.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PretrainedError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// config.json that is not JSON, lacks a key or holds a value this reader cannot run.
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },
    /// The weights file: missing, sharded, unreadable, or a tensor missing, misshapen or of a
    /// type that is not a float.
    #[error("{}: {message}", path.display())]
    Weights { path: PathBuf, message: String },
}
