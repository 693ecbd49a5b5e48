//! `--exp corpus-stats`: tokens, types, vocabulary size at `min_count`, coverage.

use serde::{Deserialize, Serialize};

use corpus::CorpusConfig;

use crate::cli::Args;
use crate::{config, output};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub corpus: CorpusConfig,
}

#[derive(Serialize)]
struct Row {
    corpus: String,
    preset: String,
    tokens: u64,
    types: u64,
    min_count: u64,
    vocab_size: u64,
    coverage: f64,
    chunks: u64,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (config, _) = config::load::<Config>(args, "corpus-stats")?;
    let corpus = super::load_corpus(args, &config.corpus)?;
    let s = corpus.stats();
    println!("corpus      {}", corpus.source.display());
    println!("tokens      {}", s.tokens);
    println!("types       {}", s.types);
    println!(
        "vocabulary  {} words with count >= {}",
        s.vocab_size, s.min_count
    );
    println!(
        "coverage    {:.4} of tokens are vocabulary words",
        s.coverage
    );
    println!(
        "chunks      {} (at most {} tokens each)",
        s.chunks, corpus.config.chunk_len
    );
    let row = Row {
        corpus: corpus.source.display().to_string(),
        preset: format!("{:?}", corpus.config.preset).to_lowercase(),
        tokens: s.tokens,
        types: s.types,
        min_count: s.min_count,
        vocab_size: s.vocab_size,
        coverage: s.coverage,
        chunks: s.chunks,
    };
    let path = args.out.join("corpus-stats.csv");
    output::write_csv(&path, &[row])?;
    println!("wrote {}", path.display());
    Ok(())
}
