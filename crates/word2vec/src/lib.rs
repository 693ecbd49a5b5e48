//! word2vec (Mikolov et al. 2013): skip-gram and CBOW with negative sampling, trained with
//! multi-threaded lock-free ("hogwild") SGD on the `corpus` crate's word ids, so the vectors
//! share the transformer's vocabulary. Also the word2vec text/binary formats.
//!
//! * [`config`]: hyper-parameters and their validation.
//! * [`rng`]: the small, fast generator every thread uses.
//! * [`sampling`]: the unigram^0.75 noise distribution (Walker's alias method).
//! * [`sgd`]: one update of skip-gram or CBOW with negative sampling — the maths.
//! * [`hogwild`]: how threads share the two matrices and split the corpus.
//! * [`train`]: the training run (epochs, learning-rate schedule, progress, report).
//! * [`heldout`]: the training objective on held-out text (what a learning rate is chosen by).
//! * [`vectors`], [`format`]: the resulting table and its files.

pub mod config;
pub mod format;
pub mod heldout;
pub mod hogwild;
pub mod rng;
pub mod sampling;
pub mod sgd;
pub mod train;
pub mod usage;
pub mod vectors;

pub use config::{Architecture, Update, Word2VecConfig};
pub use heldout::Heldout;
pub use train::{train, TrainReport, Trained};
pub use vectors::WordVectors;
