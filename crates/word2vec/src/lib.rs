//! word2vec: skip-gram and CBOW with negative sampling on the `corpus` crate's ids, and the
//! word2vec text/binary formats.

pub mod format;
pub mod vectors;

pub use vectors::WordVectors;
