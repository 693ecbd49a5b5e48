//! `--exp bench`: timings that issues promise, measured rather than asserted. Each benchmark is
//! repeated, the median and minimum reported, and written to results/bench/<name>.csv.
//!
//! * corpus: reading, tokenising and encoding the text8 slice (target: under 2 s).
//! * eval: all analogy questions, 3CosAdd and 3CosMul, on a 30,000 x 100 table (target: under
//!   1 s). The table holds random vectors for the corpus's 30,000 most frequent types: timing
//!   does not depend on the values, and the vocabulary makes the answered questions realistic.

use std::time::Instant;

use rand::{RngExt, SeedableRng};
use serde::Serialize;

use analysis::{AnalogyMethod, AnalogySet};
use corpus::{Corpus, CorpusConfig};
use word2vec::WordVectors;

use crate::cli::Args;
use crate::{output, paths};

#[derive(Serialize)]
struct Row {
    benchmark: String,
    detail: String,
    repeats: usize,
    median_s: f64,
    min_s: f64,
    max_s: f64,
    threads: usize,
}

fn time<T>(repeats: usize, mut f: impl FnMut() -> T) -> (Vec<f64>, T) {
    let mut times = Vec::with_capacity(repeats);
    let mut last = None;
    for _ in 0..repeats {
        let t = Instant::now();
        last = Some(std::hint::black_box(f()));
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (times, last.unwrap())
}

fn row(benchmark: &str, detail: String, times: &[f64]) -> Row {
    Row {
        benchmark: benchmark.into(),
        detail,
        repeats: times.len(),
        median_s: times[times.len() / 2],
        min_s: times[0],
        max_s: times[times.len() - 1],
        threads: rayon_threads(),
    }
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let repeats = if args.quick { 1 } else { 5 };
    let mut config = CorpusConfig {
        path: paths::data("corpora/text8.gz"),
        ..CorpusConfig::default()
    };
    if let Some(p) = &args.corpus {
        config.path = paths::resolve(p);
    }
    let (times, corpus) = time(repeats, || Corpus::load(&config));
    let corpus = corpus?;
    let corpus_rows = vec![row(
        "corpus-encode",
        format!(
            "{} tokens from {}",
            corpus.encoded.n_tokens(),
            config.path.display()
        ),
        &times,
    )];
    println!(
        "corpus encode: median {:.3} s over {repeats} runs ({} tokens)",
        corpus_rows[0].median_s,
        corpus.encoded.n_tokens()
    );
    output::write_csv(&args.out.join("bench/corpus.csv"), &corpus_rows)?;

    // All types, so that a 30,000-row table exists even where min_count 5 leaves fewer words.
    let all_types = Corpus::load(&CorpusConfig {
        min_count: 1,
        ..config.clone()
    })?;
    let (rows_n, dim) = (30_000.min(all_types.vocab.len()), 100);
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed.unwrap_or(1));
    let data: Vec<f32> = (0..rows_n * dim)
        .map(|_| rng.random::<f32>() - 0.5)
        .collect();
    let table = WordVectors::new(all_types.vocab.words()[..rows_n].to_vec(), dim, data);
    let set = AnalogySet::load(&paths::data("analogy/questions-words.txt.gz"))?;
    let mut eval_rows = Vec::new();
    for method in [AnalogyMethod::CosAdd, AnalogyMethod::CosMul] {
        let (times, report) = time(repeats, || set.evaluate(&table, method, rows_n, true));
        let r = row(
            "analogy",
            format!(
                "{} {} questions ({} answered) over {rows_n} x {dim}",
                method.name(),
                set.n_questions(),
                report.total().answered()
            ),
            &times,
        );
        println!(
            "analogy {}: median {:.3} s ({})",
            method.name(),
            r.median_s,
            r.detail
        );
        eval_rows.push(r);
    }
    output::write_csv(&args.out.join("bench/eval.csv"), &eval_rows)?;
    println!("wrote {}", args.out.join("bench").display());
    Ok(())
}
