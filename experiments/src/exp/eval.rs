//! `--exp eval --vectors FILE`: every analogy and similarity set in data/ (and any
//! `--similarity FILE`) on one table of vectors. `--exp neighbours`: gensim's `most_similar`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use analysis::inference::permutation_band;
use analysis::{AnalogyMethod, AnalogySet, SimilaritySet};
use word2vec::WordVectors;

use crate::output::{self, encode_cosines, encode_outcomes, ItemRow, TidyRow};
use crate::{config, paths, Args};

#[derive(Clone, Debug, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Only the first N rows (the most frequent words) take part, as in gensim.
    pub restrict_vocab: usize,
    pub case_insensitive: bool,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            restrict_vocab: 30_000,
            case_insensitive: true,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Config {
    eval: EvalConfig,
}

/// The benchmarks that ship in data/: every analogy file and every `EN-*` similarity set.
pub struct Benchmarks {
    pub analogy: Vec<AnalogySet>,
    pub similarity: Vec<SimilaritySet>,
}

impl Benchmarks {
    pub fn load(extra_similarity: &[PathBuf]) -> anyhow::Result<Benchmarks> {
        let analogy = list(&paths::data("analogy"), |n| {
            n.ends_with(".txt") || n.ends_with(".txt.gz")
        })?
        .iter()
        .map(|p| AnalogySet::load(p))
        .collect::<Result<Vec<_>, _>>()?;
        let mut sim_files = list(&paths::data("similarity"), |n| {
            n.starts_with("EN-") && n.ends_with(".txt")
        })?;
        sim_files.extend(extra_similarity.iter().map(|p| paths::resolve(p)));
        let similarity = sim_files
            .iter()
            .map(|p| SimilaritySet::load(p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Benchmarks {
            analogy,
            similarity,
        })
    }
}

fn list(dir: &Path, keep: impl Fn(&str) -> bool) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list benchmark directory", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    files.sort();
    Ok(files)
}

/// Permutations behind each similarity score's chance band: the 2.5% and 97.5% quantiles of
/// 500 draws move by about 0.005 from one set of draws to another on 300 pairs.
const NULL_DRAWS: usize = 500;

/// Scores one table on every benchmark; the rows are labelled by the caller's `template`
/// (experiment, model, representation, layer, seed, backend).
pub fn evaluate_table(
    vectors: &WordVectors,
    benchmarks: &Benchmarks,
    cfg: &EvalConfig,
    template: &TidyRow,
) -> Vec<TidyRow> {
    evaluate_table_items(vectors, benchmarks, cfg, template).0
}

/// [`evaluate_table`], and every item's outcome: each 3CosAdd question right, wrong or skipped,
/// each similarity pair's cosine (what the report's intervals resample).
pub fn evaluate_table_items(
    vectors: &WordVectors,
    benchmarks: &Benchmarks,
    cfg: &EvalConfig,
    template: &TidyRow,
) -> (Vec<TidyRow>, Vec<ItemRow>) {
    let mut rows = Vec::new();
    let mut items = Vec::new();
    let item = |benchmark: &str, kind: &str, values: String| ItemRow {
        model: template.model.clone(),
        representation: template.representation.clone(),
        layer: template.layer,
        benchmark: benchmark.into(),
        kind: kind.into(),
        seed: template.seed,
        values,
    };
    let row = |benchmark: String, metric: &str, value: f64, n: usize, oov: usize| TidyRow {
        benchmark,
        metric: metric.to_owned(),
        value,
        n,
        oov,
        ..template.clone()
    };
    for set in &benchmarks.analogy {
        for method in [AnalogyMethod::CosAdd, AnalogyMethod::CosMul] {
            let r = set.evaluate(vectors, method, cfg.restrict_vocab, cfg.case_insensitive);
            if method == AnalogyMethod::CosAdd {
                items.push(item(&set.name, method.name(), encode_outcomes(&r.outcomes)));
            }
            if method == AnalogyMethod::CosAdd {
                // Chance: a table with no structure answers uniformly among the candidate rows
                // other than a, b and c (by symmetry), so 1 / (rows - 3) of answered questions.
                let rows_searched = vectors.len().min(cfg.restrict_vocab);
                let total = r.total();
                rows.push(row(
                    format!("{}:total", set.name),
                    "3CosAdd_chance",
                    1.0 / rows_searched.saturating_sub(3).max(1) as f64,
                    total.answered(),
                    total.skipped,
                ));
            }
            let parts = [
                ("total", r.total()),
                ("semantic", r.semantic()),
                ("syntactic", r.syntactic()),
            ];
            let sections = r.sections.iter().map(|(name, _, s)| (name.as_str(), *s));
            for (part, s) in parts.into_iter().chain(sections) {
                rows.push(row(
                    format!("{}:{part}", set.name),
                    method.name(),
                    s.accuracy(),
                    s.answered(),
                    s.skipped,
                ));
            }
        }
    }
    for set in &benchmarks.similarity {
        let r = set.evaluate(vectors, cfg.restrict_vocab, cfg.case_insensitive);
        rows.push(row(set.name.clone(), "spearman", r.spearman, r.used, r.oov));
        rows.push(row(set.name.clone(), "pearson", r.pearson, r.used, r.oov));
        // The chance band of Spearman's rho for exactly these pairs (ties and size included):
        // the model's cosines permuted against the human scores.
        let (gold, model): (Vec<f64>, Vec<f64>) = set
            .pairs
            .iter()
            .zip(&r.cosines)
            .filter_map(|((_, _, g), c)| c.map(|c| (*g, c)))
            .unzip();
        if gold.len() >= 3 {
            let band = permutation_band(
                &gold,
                &model,
                analysis::stats::spearman,
                NULL_DRAWS,
                0.95,
                29,
            );
            rows.push(row(
                set.name.clone(),
                "spearman_null_lo",
                band.lo,
                r.used,
                r.oov,
            ));
            rows.push(row(
                set.name.clone(),
                "spearman_null_hi",
                band.hi,
                r.used,
                r.oov,
            ));
        }
        items.push(item(&set.name, "cosine", encode_cosines(&r.cosines)));
    }
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
    let benchmarks = Benchmarks::load(&args.similarity)?;
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
