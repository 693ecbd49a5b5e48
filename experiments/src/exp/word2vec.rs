//! `--exp word2vec`: trains skip-gram (SGNS) and CBOW on the configured corpus, writes each
//! model's vectors (word2vec binary), one CSV row per run (speed, loss, memory) and the tidy
//! evaluation of both on every benchmark in data/.

use anyhow::Context;
use serde::Deserialize;

use corpus::CorpusConfig;
use word2vec::{format, Architecture, Trained, Word2VecConfig};

use super::eval::{self, EvalConfig};
use crate::cli::Args;
use crate::config;
use crate::output::{self, TidyRow};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub corpus: CorpusConfig,
    pub sgns: Word2VecConfig,
    pub cbow: Word2VecConfig,
    pub eval: EvalConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            corpus: CorpusConfig::default(),
            sgns: Word2VecConfig::default(),
            cbow: Word2VecConfig {
                architecture: Architecture::Cbow,
                ..Word2VecConfig::default()
            },
            eval: EvalConfig::default(),
        }
    }
}

/// Applies `--seed`, `--threads` and `--quick` (one epoch, 32 dimensions) to a model config.
pub fn effective(args: &Args, mut c: Word2VecConfig) -> Word2VecConfig {
    if let Some(s) = args.seed {
        c.seed = s;
    }
    if let Some(t) = args.threads {
        c.threads = t;
    }
    if args.quick {
        c.epochs = 1;
        c.dim = c.dim.min(32);
    }
    c
}

pub fn train_and_report(
    corpus: &corpus::Corpus,
    name: &str,
    cfg: &Word2VecConfig,
) -> anyhow::Result<Trained> {
    let trained = word2vec::train(corpus, cfg, true)?;
    let r = &trained.report;
    println!(
        "{name}: {} epochs, {:.0} raw words/s ({:.0} per CPU-second, {} threads), final loss {:.4}, {:.1} s, peak RSS {:.0} MiB",
        r.epochs,
        r.raw_words_per_second,
        r.raw_words_per_cpu_second,
        r.threads,
        r.final_loss,
        r.wall_seconds,
        r.peak_rss_bytes as f64 / (1 << 20) as f64
    );
    Ok(trained)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (config, config_path) = config::load::<Config>(args, "word2vec")?;
    if let Some(p) = &config_path {
        println!("config {}", p.display());
    }
    let corpus = super::load_corpus(args, &config.corpus)?;
    println!(
        "corpus {}: {} tokens, {} words at min_count {}",
        corpus.source.display(),
        corpus.encoded.n_tokens(),
        corpus.vocab.len(),
        config.corpus.min_count
    );
    // Both models' settings checked before either trains, naming the file and the table.
    let source = config_path
        .as_ref()
        .map_or("the built-in defaults".to_string(), |p| {
            p.display().to_string()
        });
    for (name, cfg) in [("sgns", &config.sgns), ("cbow", &config.cbow)] {
        effective(args, cfg.clone())
            .validate(corpus.encoded.n_chunks())
            .map_err(|e| anyhow::anyhow!("{source}: [{name}] {}", e.0))?;
    }
    let benchmarks = super::eval::benchmarks(&args.similarity)?;
    let dir = args.out.join("word2vec");
    let (mut runs, mut rows) = (Vec::new(), Vec::new());
    for (name, cfg) in [("sgns", &config.sgns), ("cbow", &config.cbow)] {
        let cfg = effective(args, cfg.clone());
        let trained = train_and_report(&corpus, name, &cfg)?;
        // Both word2vec formats, so any tool (gensim's load_word2vec_format among them) reads them.
        for (ext, f) in [
            ("bin", format::Format::Binary),
            ("txt", format::Format::Text),
        ] {
            format::write(&trained.vectors, &dir.join(format!("{name}.{ext}")), f)?;
        }
        let template = TidyRow {
            seed: Some(cfg.seed),
            ..TidyRow::template("word2vec", name, "static")
        };
        let evaluated =
            eval::evaluate_table(&trained.vectors, &benchmarks, &config.eval, &template);
        eval::print_table(&evaluated);
        rows.extend(evaluated);
        runs.push(trained.report);
    }
    output::write_csv(&dir.join("runs.csv"), &runs)?;
    output::write_csv(&dir.join("eval.csv"), &rows)?;
    println!("wrote {}", dir.display());
    Ok(())
}

/// One benchmark run: speed, memory and quality of a single model, as one CSV row.
#[derive(serde::Serialize)]
struct BenchRow {
    implementation: &'static str,
    model: String,
    seed: u64,
    threads: usize,
    /// Output rows private to each thread (`private_rows`; 0 on one thread, which keeps none).
    private_rows: usize,
    /// Input rows private to each thread (`private_input_rows`; 0 on one thread).
    private_input_rows: usize,
    epochs: usize,
    dim: usize,
    raw_words: u64,
    wall_s: f64,
    cpu_s: f64,
    raw_words_per_cpu_s: f64,
    raw_words_per_s: f64,
    peak_rss_mib: f64,
    /// Twice the two embedding matrices plus the encoded corpus: the memory target.
    rss_budget_mib: f64,
    analogy_3cosadd: f64,
    ws353_all_spearman: f64,
    simlex999_spearman: f64,
}

pub fn bench(args: &Args) -> anyhow::Result<()> {
    let (config, _) = config::load::<Config>(args, "word2vec")?;
    let (name, cfg) = match args.model.as_deref() {
        Some("sgns") => ("sgns", config.sgns.clone()),
        // Skip-gram with HogBatch's window update ([word2vec::Update::Window]).
        Some("sgns-window") => (
            "sgns-window",
            Word2VecConfig {
                update: word2vec::Update::Window,
                ..config.sgns.clone()
            },
        ),
        Some("cbow") => ("cbow", config.cbow.clone()),
        other => anyhow::bail!(
            "--model must be sgns, sgns-window or cbow for bench-word2vec, got {other:?}"
        ),
    };
    let cfg = effective(args, cfg);
    let corpus = super::load_corpus(args, &config.corpus)?;
    let trained = train_and_report(&corpus, name, &cfg)?;
    let r = &trained.report;
    let mib = (1u64 << 20) as f64;
    let matrices = 2 * corpus.vocab.len() * cfg.dim * 4;
    let encoded = corpus.encoded.n_tokens() * 4;
    let benchmarks = super::eval::benchmarks(&[])?;
    let analogy = benchmarks
        .analogy
        .iter()
        .find(|a| a.name == "questions-words")
        .context("questions-words missing")?;
    let acc = analogy
        .evaluate(
            &trained.vectors,
            analysis::AnalogyMethod::CosAdd,
            config.eval.restrict_vocab,
            config.eval.case_insensitive,
        )
        .total()
        .accuracy();
    let spearman = |set: &str| -> anyhow::Result<f64> {
        let s = benchmarks
            .similarity
            .iter()
            .find(|s| s.name == set)
            .with_context(|| format!("{set} missing"))?;
        Ok(s.evaluate(
            &trained.vectors,
            config.eval.restrict_vocab,
            config.eval.case_insensitive,
        )
        .spearman)
    };
    let row = BenchRow {
        implementation: "embedlab",
        model: name.into(),
        seed: cfg.seed,
        threads: r.threads,
        private_rows: if r.threads > 1 { cfg.private_rows } else { 0 },
        private_input_rows: if r.threads > 1 {
            cfg.private_input_rows
        } else {
            0
        },
        epochs: r.epochs,
        dim: r.dim,
        raw_words: r.raw_words,
        wall_s: r.wall_seconds,
        cpu_s: r.cpu_seconds,
        raw_words_per_cpu_s: r.raw_words_per_cpu_second,
        raw_words_per_s: r.raw_words_per_second,
        peak_rss_mib: r.peak_rss_bytes as f64 / mib,
        rss_budget_mib: 2.0 * (matrices + encoded) as f64 / mib,
        analogy_3cosadd: acc,
        ws353_all_spearman: spearman("WS-353-ALL")?,
        simlex999_spearman: spearman("SIMLEX-999")?,
    };
    println!(
        "analogy {:.4}  WS-353-ALL {:.4}  SimLex-999 {:.4}  peak RSS {:.1} MiB (budget {:.1})",
        row.analogy_3cosadd,
        row.ws353_all_spearman,
        row.simlex999_spearman,
        row.peak_rss_mib,
        row.rss_budget_mib
    );
    let path = args.out.join("bench").join(format!(
        "word2vec-embedlab-{name}-t{}-s{}.csv",
        r.threads, cfg.seed
    ));
    output::write_csv(&path, &[row])?;
    println!("wrote {}", path.display());
    Ok(())
}
