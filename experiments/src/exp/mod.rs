pub mod backends;
pub mod bench;
pub mod bench_transformer;
pub mod budget;
pub mod budget_seeds;
pub mod comparisons;
pub mod context_gain;
pub mod corpus_size;
pub mod corpus_stats;
pub mod dynamics;
pub mod eval;
pub mod evidence;
pub mod export;
pub mod jobs;
pub mod ledger;
pub mod paper;
pub mod pretrained;
pub mod report;
pub mod seal;
pub mod settings;
pub mod study;
pub mod sweep;
pub mod train;
pub mod word2vec;

use corpus::{Corpus, CorpusConfig};

use crate::cli::Args;
use crate::paths;

/// The corpus named by `--corpus` or the config, resolved against the repository root.
pub fn load_corpus(args: &Args, config: &CorpusConfig) -> anyhow::Result<Corpus> {
    let mut config = config.clone();
    if let Some(p) = &args.corpus {
        config.path = p.clone();
    }
    config.path = paths::resolve(&config.path);
    Ok(Corpus::load(&config)?)
}
