use std::path::PathBuf;

/// Everything that can go wrong between a file on disk and an encoded corpus. Each variant
/// names the file, and the line or byte offset where that applies.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a valid gzip stream: {source}")]
    Gzip {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: invalid UTF-8 at line {line}, byte offset {offset}")]
    InvalidUtf8 {
        path: PathBuf,
        line: usize,
        offset: usize,
    },
    #[error("{path}: the corpus is empty (no tokens after tokenisation)")]
    Empty { path: PathBuf },
    #[error("{path}: no word reaches min_count {min_count} (the most frequent word occurs {max_count} times)")]
    NoWordReachesMinCount {
        path: PathBuf,
        min_count: u64,
        max_count: u64,
    },
    #[error("{path}:{line}: {message}")]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("invalid corpus configuration: {0}")]
    Config(String),
}
