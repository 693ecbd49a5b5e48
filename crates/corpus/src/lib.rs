//! The corpus every model in embedlab sees: one reader, one tokeniser, one vocabulary, one
//! id-encoding, so that word2vec and the transformer are trained on the same tokens and a word
//! has the same id in both.
//!
//! * [`read`]: plain or gzip-compressed UTF-8 files, with errors that name the file and where.
//! * [`tokenize`]: named presets per format (text8, WikiText, plain lines).
//! * [`vocab`]: counts, `min_count`, `max_size`, deterministic order, TSV round trip, and the
//!   transformer's special tokens kept apart from the words.
//! * [`encode`]: the corpus as word ids with chunk boundaries.
//! * [`subsample`]: word2vec's frequent-word subsampling keep-probabilities.
//! * [`io`]: atomic file writes, so that a failed run never leaves a half-written result.

pub mod encode;
pub mod error;
pub mod io;
pub mod read;
pub mod subsample;
pub mod tokenize;
pub mod vocab;

pub use encode::{Corpus, CorpusConfig, CorpusStats, Encoded};
pub use error::CorpusError;
pub use tokenize::Preset;
pub use vocab::{SpecialTokens, Vocab};
