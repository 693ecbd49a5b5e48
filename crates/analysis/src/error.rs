//! What can go wrong reading a benchmark.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Read(#[from] corpus::CorpusError),
    #[error("{path}: cannot list benchmark directory: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
}
