//! `--exp layers`: analogy and similarity for every representation the transformer offers — its
//! embedding matrix (and LM head when untied), and per layer the decontextualized and the
//! aggregated (mean-pooled) vectors — plus the W_Q/W_K/W_V geometry per layer and head.
//!
//! The model is the one `--exp train` trains with the same config (experiments/configs/
//! layers.toml repeats train.toml's model and training sections): an existing complete run under
//! results/runs/ is reused, a missing one is trained first, a partial one is continued.
//! Word vectors come from `analysis::representations`; see there for how they are pooled.

use serde::Deserialize;

use analysis::geometry::{attention_geometry, contextuality};
use analysis::representations::{aggregated, decontextualized, embedding_table, lm_head_table};
use burn::module::Module;
use corpus::CorpusConfig;
use transformer::data::{Objective, Sequences};
use transformer::model::ModelSettings;
use transformer::training::{self, RunControl, TrainingConfig};

use super::eval::{evaluate_table, Benchmarks, EvalConfig};
use crate::output::{self, TidyRow};
use crate::{config, plot, Args};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Pooling {
    /// Occurrences averaged per word (the default: 100).
    pub max_occurrences: u32,
    /// Sequences per forward pass in the corpus pass.
    pub batch: usize,
}

impl Default for Pooling {
    fn default() -> Self {
        Pooling {
            max_occurrences: 100,
            batch: 64,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub corpus: CorpusConfig,
    pub model: ModelSettings,
    pub training: TrainingConfig,
    pub eval: EvalConfig,
    pub pooling: Pooling,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (mut cfg, path) = config::load::<Config>(args, "layers")?;
    if let Some(p) = &path {
        println!("config {}", p.display());
    }
    if let Some(s) = args.seed {
        cfg.training.seed = s;
    }
    if args.quick {
        super::train::quick(&mut cfg.model, &mut cfg.training);
        cfg.pooling.max_occurrences = 5;
        cfg.eval.restrict_vocab = cfg.eval.restrict_vocab.min(5_000);
    }
    let corpus = super::load_corpus(args, &cfg.corpus)?;
    let seqs = Sequences::new(&corpus, cfg.training.seq_len, cfg.training.heldout_fraction)
        .map_err(anyhow::Error::msg)?;
    let kind = super::train::backend(args);
    let device = super::backends::open_device(kind)?;
    let model_cfg = cfg
        .model
        .to_config(corpus.vocab.len_with_specials(), cfg.training.seq_len);
    let objective = match cfg.training.objective {
        Objective::Mlm => "mlm",
        Objective::Clm => "clm",
    };
    let name = super::train::run_name(cfg.training.objective, kind, cfg.training.seed, args.quick);
    let run_dir = args.out.join("runs").join(&name);
    println!("model: {} (trained now unless complete)", run_dir.display());
    let outcome = training::train(
        &model_cfg,
        &cfg.training,
        &seqs,
        &device,
        &run_dir,
        RunControl {
            resume: true,
            stop_at: None,
            progress: true,
        },
    )?;
    let model = outcome.model.valid();

    let n_words = corpus.vocab.len().min(cfg.eval.restrict_vocab);
    let words: Vec<String> = corpus.vocab.words()[..n_words].to_vec();
    let benchmarks = Benchmarks::load(&args.similarity)?;
    let template = TidyRow {
        seed: Some(cfg.training.seed),
        backend: Some(kind.name().into()),
        ..TidyRow::template("layers", &format!("transformer-{objective}"), "")
    };
    let mut rows = Vec::new();
    let mut score = |table: &word2vec::WordVectors, representation: &str, layer: Option<usize>| {
        let t = TidyRow {
            representation: representation.into(),
            layer,
            ..template.clone()
        };
        rows.extend(evaluate_table(table, &benchmarks, &cfg.eval, &t));
    };
    score(&embedding_table(&model, &words), "embedding", None);
    if let Some(head) = lm_head_table(&model, &words) {
        score(&head, "lm_head", None);
    }
    println!("decontextualized vectors for {n_words} words");
    let dec = decontextualized(&model, &words, corpus.vocab.specials(), &device, 256);
    for (l, t) in dec.iter().enumerate() {
        score(t, "decontextualized", Some(l));
    }
    let bar = indicatif::ProgressBar::new(seqs.n_train() as u64).with_message("pooling");
    let agg = aggregated(
        &model,
        &words,
        &seqs.train,
        seqs.seq_len,
        cfg.pooling.max_occurrences,
        cfg.pooling.batch,
        &device,
        |done, _| bar.set_position(done as u64),
    );
    bar.finish_and_clear();
    let reached = agg
        .occurrences
        .iter()
        .filter(|&&c| c == agg.max_occurrences)
        .count();
    println!(
        "aggregated over up to {} occurrences: {reached} of {n_words} words reached it, {} words never occur in the training split",
        agg.max_occurrences,
        agg.occurrences.iter().filter(|&&c| c == 0).count()
    );
    for (l, t) in agg.tables.iter().enumerate() {
        score(t, "aggregated", Some(l));
    }
    // The pooling settings travel with the numbers.
    for (metric, value) in [
        ("pooling_max_occurrences", agg.max_occurrences as f64),
        ("pooling_words_at_max", reached as f64),
    ] {
        rows.push(TidyRow {
            representation: "aggregated".into(),
            benchmark: "pooling".into(),
            metric: metric.into(),
            value,
            n: n_words,
            ..template.clone()
        });
    }
    let out_dir = args.out.join("layers");
    // The control: the same measures on the model as initialised (same seed, before training).
    #[derive(serde::Serialize)]
    struct AttentionRow {
        state: &'static str,
        layer: usize,
        head: usize,
        cos_q_k: f64,
        cos_q_v: f64,
        cos_k_v: f64,
        cka_q_k: f64,
        cka_q_v: f64,
        cka_k_v: f64,
        qk_symmetric_share: f64,
    }
    device.seed(cfg.training.seed);
    let initial = model_cfg.init(&device);
    let mut attention = Vec::new();
    for (state, m) in [("trained", &model), ("initialisation", &initial)] {
        for g in attention_geometry(m) {
            attention.push(AttentionRow {
                state,
                layer: g.layer,
                head: g.head,
                cos_q_k: g.cos_q_k,
                cos_q_v: g.cos_q_v,
                cos_k_v: g.cos_k_v,
                cka_q_k: g.cka_q_k,
                cka_q_v: g.cka_q_v,
                cka_k_v: g.cka_k_v,
                qk_symmetric_share: g.qk_symmetric_share,
            });
        }
    }
    output::write_csv(&out_dir.join(format!("{name}-attention.csv")), &attention)?;

    // Contextuality: 500 words spread over the 5,000 most frequent, 20 occurrences each, from
    // the first 2,000 training sequences; anisotropy from a 1,000-token reservoir.
    let top = n_words.min(5_000) as u32;
    let track: Vec<u32> = (0..top).step_by((top as usize / 500).max(1)).collect();
    let n_seq = if args.quick { 200 } else { 2_000 };
    let ctx = contextuality(
        &model,
        &seqs.train,
        seqs.seq_len,
        n_seq,
        corpus.vocab.len() as u32,
        &track,
        20,
        500_000,
        cfg.training.seed,
        &device,
    );
    output::write_csv(&out_dir.join(format!("{name}-contextuality.csv")), &ctx)?;

    // The same measures as tidy rows beside the analogy and similarity scores, so one file
    // holds everything this experiment measured (the two CSVs above are the wide views).
    let tidy = |representation: String,
                layer: usize,
                benchmark: String,
                metric: &str,
                value: f64,
                n: usize| TidyRow {
        representation,
        layer: Some(layer),
        benchmark,
        metric: metric.into(),
        value,
        n,
        ..template.clone()
    };
    for c in &ctx {
        for (metric, value) in [
            ("self_similarity", c.self_similarity),
            ("intra_sentence", c.intra_sentence),
            ("anisotropy", c.anisotropy),
            ("max_explainable_variance", c.max_explainable_variance),
            ("self_similarity_adjusted", c.self_similarity_adjusted),
            ("intra_sentence_adjusted", c.intra_sentence_adjusted),
        ] {
            rows.push(tidy(
                "contextual".into(),
                c.layer,
                "contextuality".into(),
                metric,
                value,
                c.words,
            ));
        }
    }
    for a in &attention {
        for (metric, value) in [
            ("cos_q_k", a.cos_q_k),
            ("cos_q_v", a.cos_q_v),
            ("cos_k_v", a.cos_k_v),
            ("cka_q_k", a.cka_q_k),
            ("cka_q_v", a.cka_q_v),
            ("cka_k_v", a.cka_k_v),
            ("qk_symmetric_share", a.qk_symmetric_share),
        ] {
            rows.push(tidy(
                format!("attention-{}", a.state),
                a.layer,
                format!("head-{}", a.head),
                metric,
                value,
                1,
            ));
        }
    }
    output::write_csv(&out_dir.join(format!("{name}.csv")), &rows)?;
    let line =
        |label: &str, f: &dyn Fn(&analysis::geometry::LayerContextuality) -> f64| plot::Series {
            name: label.into(),
            points: ctx.iter().map(|c| (c.layer as f64, f(c), None)).collect(),
        };
    plot::lines(
        &out_dir.join(format!("{name}-contextuality")),
        &format!(
            "Contextuality by layer ({objective}, seed {})",
            cfg.training.seed
        ),
        "layer (0 = embedding output)",
        "mean cosine",
        &[
            line("self-similarity", &|c| c.self_similarity),
            line("intra-sentence similarity", &|c| c.intra_sentence),
            line("anisotropy (random pairs)", &|c| c.anisotropy),
            line("self-similarity - anisotropy", &|c| {
                c.self_similarity_adjusted
            }),
        ],
    )?;
    for c in &ctx {
        println!(
            "layer {}: self-similarity {:.3}, intra-sentence {:.3}, anisotropy {:.3}, first-PC variance {:.3} ({} words)",
            c.layer, c.self_similarity, c.intra_sentence, c.anisotropy, c.max_explainable_variance, c.words
        );
    }

    // Figure: analogy accuracy and WS-353 Spearman against layer.
    for (benchmark, metric, label, file) in [
        (
            "questions-words:total",
            "3CosAdd",
            "analogy accuracy (3CosAdd)",
            "analogy",
        ),
        ("WS-353-ALL", "spearman", "WS-353-ALL Spearman rho", "ws353"),
    ] {
        let pick = |representation: &str| plot::Series {
            name: representation.into(),
            points: rows
                .iter()
                .filter(|r| {
                    r.representation == representation
                        && r.benchmark == benchmark
                        && r.metric == metric
                })
                .filter_map(|r| r.layer.map(|l| (l as f64, r.value, None)))
                .collect(),
        };
        let mut series = vec![pick("aggregated"), pick("decontextualized")];
        if let Some(e) = rows.iter().find(|r| {
            r.representation == "embedding" && r.benchmark == benchmark && r.metric == metric
        }) {
            let last = model.blocks.len() as f64;
            series.push(plot::Series {
                name: "embedding matrix".into(),
                points: vec![(0.0, e.value, None), (last, e.value, None)],
            });
        }
        plot::lines(
            &out_dir.join(format!("{name}-{file}")),
            &format!("{label} by layer ({objective}, seed {})", cfg.training.seed),
            "layer (0 = embedding output)",
            label,
            &series,
        )?;
    }
    for r in rows.iter().filter(|r| {
        (r.benchmark == "questions-words:total" && r.metric == "3CosAdd")
            || (r.benchmark == "WS-353-ALL" && r.metric == "spearman")
    }) {
        println!(
            "{:<17} layer {:>4} {:<22} {:<8} {:.4} (n {})",
            r.representation,
            r.layer.map_or("-".into(), |l| l.to_string()),
            r.benchmark,
            r.metric,
            r.value,
            r.n
        );
    }
    println!("wrote {}", out_dir.display());
    Ok(())
}
