//! `--exp eval --vectors FILE`: every analogy and similarity set in data/ (and any
//! `--similarity FILE`) on one table of vectors. `--exp neighbours`: gensim's `most_similar`.

use std::path::PathBuf;

use anyhow::Context;
use serde::Deserialize;

use analysis::evidence::Values;
use word2vec::WordVectors;

use crate::cli::Args;
use crate::output::{self, encode_cosines, encode_outcomes, ItemRow, TidyRow};
use crate::{config, paths};

pub use analysis::benchmarks::{Benchmarks, EvalConfig};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    eval: EvalConfig,
}

/// The benchmarks that ship in data/ (every analogy file and every `EN-*` similarity set) and
/// the `extra` similarity sets (`--similarity`).
pub fn benchmarks(extra: &[PathBuf]) -> anyhow::Result<Benchmarks> {
    let extra: Vec<PathBuf> = extra.iter().map(|p| paths::resolve(p)).collect();
    Ok(Benchmarks::load(
        &paths::data("analogy"),
        &paths::data("similarity"),
        &extra,
    )?)
}

/// Scores one table on every benchmark ([`analysis::benchmarks::evaluate`]); the rows are
/// labelled by the caller's `template` (experiment, model, representation, layer, seed, backend).
pub fn evaluate_table(
    vectors: &WordVectors,
    benchmarks: &Benchmarks,
    cfg: &EvalConfig,
    template: &TidyRow,
) -> Vec<TidyRow> {
    evaluate_table_items(vectors, benchmarks, cfg, template).0
}

/// [`evaluate_table`], and every item's outcome as it is kept (`items-<h>.csv.gz`): each
/// 3CosAdd question right, wrong or skipped, each similarity pair's cosine.
pub fn evaluate_table_items(
    vectors: &WordVectors,
    benchmarks: &Benchmarks,
    cfg: &EvalConfig,
    template: &TidyRow,
) -> (Vec<TidyRow>, Vec<ItemRow>) {
    let (scores, outcomes) = analysis::benchmarks::evaluate(vectors, benchmarks, cfg);
    let rows = scores
        .into_iter()
        .map(|s| TidyRow {
            benchmark: s.benchmark,
            metric: s.metric,
            value: s.value,
            n: s.n,
            oov: s.oov,
            ..template.clone()
        })
        .collect();
    let items = outcomes
        .into_iter()
        .map(|o| ItemRow {
            model: template.model.clone(),
            representation: template.representation.clone(),
            layer: template.layer,
            benchmark: o.benchmark,
            kind: o.kind.into(),
            seed: template.seed,
            values: match &o.values {
                Values::Outcomes(v) => encode_outcomes(v),
                Values::Cosines(v) => encode_cosines(v),
            },
        })
        .collect();
    (rows, items)
}

/// Prints the headline rows: analogy total/semantic/syntactic, and Spearman per similarity set.
pub fn print_table(rows: &[TidyRow]) {
    println!(
        "{:<34} {:<9} {:>8} {:>7} {:>7}",
        "benchmark", "metric", "value", "n", "oov"
    );
    for r in rows {
        let headline = r.benchmark.ends_with(":total")
            || r.benchmark.ends_with(":semantic")
            || r.benchmark.ends_with(":syntactic")
            || r.metric == "spearman";
        if headline {
            println!(
                "{:<34} {:<9} {:>8.4} {:>7} {:>7}",
                r.benchmark, r.metric, r.value, r.n, r.oov
            );
        }
    }
}

fn vectors_arg(args: &Args) -> anyhow::Result<(PathBuf, WordVectors)> {
    let path = args
        .vectors
        .as_ref()
        .context("--vectors FILE is required (word2vec text or binary format)")?;
    let path = paths::resolve(path);
    let vectors = word2vec::format::read(&path)?;
    Ok((path, vectors))
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (config, _) = config::load::<Config>(args, "eval")?;
    let (path, vectors) = vectors_arg(args)?;
    let benchmarks = benchmarks(&args.similarity)?;
    let model = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!(
        "{}: {} words x {} dimensions, restrict_vocab {}",
        path.display(),
        vectors.len(),
        vectors.dim(),
        config.eval.restrict_vocab
    );
    let template = TidyRow::template("eval", &model, "static");
    let rows = evaluate_table(&vectors, &benchmarks, &config.eval, &template);
    print_table(&rows);
    let out = args.out.join("eval").join(format!("{model}.csv"));
    output::write_csv(&out, &rows)?;
    println!("wrote {}", out.display());
    Ok(())
}

pub fn neighbours(args: &Args) -> anyhow::Result<()> {
    let word = args.word.as_deref().context("--word WORD is required")?;
    let (path, vectors) = vectors_arg(args)?;
    let found = vectors
        .most_similar(word, args.topn)
        .with_context(|| format!("{word:?} is not in {}", path.display()))?;
    for (w, cos) in found {
        println!("{w:<20} {cos:.4}");
    }
    Ok(())
}
