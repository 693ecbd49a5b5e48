//! The paper's experiments (`--exp analogy | similarity | layers | qkv | frozen | objective |
//! contextuality | all`): each is a view over the per-model measurements of [`super::study`],
//! written as `results/<exp>/<exp>.csv` (tidy, one row per seed), `results/<exp>/summary.csv`
//! (mean, standard deviation, min and max over seeds) and figures showing the mean with the
//! min-max spread over seeds as error bars.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::comparisons::{is_small_set, name, summarise, Spread, Summary, Table, PAPER};
use super::settings::{load_config_from, Cast, ModelId};
use super::study::Study;
use crate::cli::{Args, Experiment};
use crate::output::{self, TidyRow};
use crate::plot::{self, Panel, Series};

/// A point with its seed spread.
fn point(x: f64, s: &Summary) -> (f64, f64, Option<(f64, f64)>) {
    (x, s.mean, (s.seeds > 1).then_some((s.min, s.max)))
}

/// Which models each experiment needs, given who plays the causal LM, the frozen ablation
/// and the attention control (`[roles]`).
fn models(exp: Experiment, cast: &Cast) -> Vec<ModelId> {
    use ModelId::*;
    let clm = cast.clm;
    let control = cast.controls();
    // The untied pair beside the tied one, where the objectives are compared.
    let untied = cast.untied_models();
    match exp {
        // CLM beside MLM: the objective is the transformer's other reading of the corpus.
        Experiment::Analogy | Experiment::Similarity => [
            vec![Sgns, Cbow, Mlm, clm],
            untied,
            cast.no_attention_untied.into_iter().collect(),
        ]
        .concat(),
        Experiment::Layers => vec![Sgns, Mlm],
        // The untrained model of each seed is the masked LM's initialisation: the reference
        // of its weight geometry.
        Experiment::Qkv => vec![Mlm, SharedQk, SharedQkv, Untrained],
        // The untied no-attention control, where there is one: how much context a uniform
        // average of the window gives, beside what a frozen table learns to get.
        Experiment::Frozen => [
            vec![cast.frozen_reference, cast.frozen],
            cast.no_attention_untied.into_iter().collect(),
        ]
        .concat(),
        Experiment::Objective => [vec![Sgns, Mlm, clm], untied, control, vec![Untrained]].concat(),
        // The untied masked LM beside its own attention control (where a config trains one):
        // how contextual a model is whose input embedding is not its output matrix.
        Experiment::Contextuality => [
            vec![Mlm, clm],
            vec![cast.untied.0],
            control,
            vec![Untrained],
        ]
        .concat(),
        _ => vec![],
    }
}

/// What a round's run says instead of writing the report: the report is the committed
/// study's, with the round's comparisons in a section of their own.
pub const ROUND_REPORT: &str = "a round in progress: its comparisons are under round/; the report is written by `--exp report` with the study's config (experiments/configs/paper.toml), which reads them";

/// `--exp <one of PAPER>`.
pub fn run(args: &Args, exp: Experiment) -> anyhow::Result<()> {
    let (cfg, path) = load_config_from(args, name(exp))?;
    cfg.check_round(args)?;
    let study = Study::load(args, cfg)?;
    prepare(args, path.as_deref(), &study, &models(exp, &study.cast))?;
    view(&study, exp, path.as_deref())
}

/// Says what the models not measured yet will cost, then (`--jobs N`) trains and measures
/// them in child processes.
fn prepare(
    args: &Args,
    config: Option<&Path>,
    study: &Study,
    ids: &[ModelId],
) -> anyhow::Result<()> {
    let missing = study.missing(ids, &|id, s| study.is_measured(id, s))?;
    study.announce(&missing, args.jobs);
    super::jobs::run_pending(args, config, &missing, super::jobs::Work::Scores)
}

/// `--exp all`: every model trained and measured once (paper.toml; from its kept measurements
/// when they are there), then every view and the report.
pub fn all(args: &Args) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let (cfg, path) = load_config_from(args, "paper")?;
    cfg.check_round(args)?;
    let study = Study::load(args, cfg)?;
    views(args, path.as_deref(), &study)?;
    if study.cfg.round {
        println!("{ROUND_REPORT}");
        return Ok(());
    }
    let config = super::report::config_label(path.as_deref());
    let described = super::report::Described::of(&study, &config);
    let (cast, dev_split) = (study.cast, study.cfg.training.dev_split);
    drop(study);
    println!("== report");
    super::report::write(&args.out, cast, Some(&described), dev_split)?;
    println!(
        "all experiments in {:.1} min",
        started.elapsed().as_secs_f64() / 60.0
    );
    Ok(())
}

/// Every model of the seven comparisons trained and measured (`--jobs`), then each view.
pub fn views(args: &Args, config: Option<&Path>, study: &Study) -> anyhow::Result<()> {
    let every: Vec<ModelId> = PAPER
        .iter()
        .flat_map(|&e| models(e, &study.cast))
        .collect::<BTreeSet<ModelId>>()
        .into_iter()
        .collect();
    prepare(args, config, study, &every)?;
    for exp in PAPER {
        println!("== {}", name(exp));
        view(study, exp, config)?;
    }
    Ok(())
}

fn view(study: &Study, exp: Experiment, config: Option<&Path>) -> anyhow::Result<()> {
    let exp_name = name(exp);
    let mut rows = Vec::new();
    for id in models(exp, &study.cast) {
        for &seed in &study.cfg.seeds_of(id) {
            let mut scores = study.scores(id, seed)?;
            // The chance level of the held-out loss comes from the corpus and the objective,
            // not from the weights, so it is added here beside the unigram entropy (runs
            // measured before it existed need no measuring again).
            if let Some(h) = scores
                .iter()
                .find(|r| r.metric == "unigram_entropy")
                .cloned()
            {
                let level = study.context_free_loss(id);
                scores.push(TidyRow {
                    metric: "context_free_loss".into(),
                    value: level,
                    ..h.clone()
                });
                // When the held-out loss first went below that level (the step of the first
                // such evaluation; the steps trained, `n`, when none did): how long a run sat
                // on a context-free plateau, read from its curve.
                // Where only context helps: the gain over the unigram at [MASK] targets, when
                // the model's weights are (or were) at hand to measure it.
                if let Some(split) = study.context_gain(id, seed)? {
                    scores.extend(super::context_gain::tidy(&split, &h));
                }
                if id != ModelId::Untrained {
                    let below = study
                        .curve(id, seed)?
                        .into_iter()
                        .find(|p| p.split == study.reported_split() && p.loss < level)
                        .map_or(h.n, |p| p.step);
                    scores.push(TidyRow {
                        metric: "steps_to_context_free_level".into(),
                        value: below as f64,
                        ..h
                    });
                }
            }
            rows.extend(scores.into_iter().map(|r| TidyRow {
                experiment: exp_name.into(),
                ..r
            }));
        }
    }
    let rows = keep(exp, rows);
    let dir = study.cfg.views_dir(&study.out).join(exp_name);
    if study.cfg.round {
        // A description from an earlier run must not stand beside this run's summary should
        // it stop half way: the report refuses a round's summary without one.
        match std::fs::remove_file(dir.join("round.json")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("{}: cannot replace", dir.display()));
            }
            _ => {}
        }
    }
    output::write_csv(&dir.join(format!("{exp_name}.csv")), &rows)?;
    // Which per-item outcomes this experiment's numbers rest on, for the report's intervals.
    let mut measured = Vec::new();
    for id in models(exp, &study.cast) {
        for &seed in &study.cfg.seeds_of(id) {
            let path = study.items_path(id, seed);
            let relative = path.strip_prefix(&study.out).unwrap_or(&path);
            measured.push(super::evidence::Measured {
                model: id.name().into(),
                seed,
                items: relative.to_string_lossy().into_owned(),
            });
        }
    }
    output::write_csv(&dir.join("measurements.csv"), &measured)?;
    let table = Table(summarise(exp_name, &rows));
    output::write_csv(&dir.join("summary.csv"), &table.0)?;
    if matches!(
        exp,
        Experiment::Qkv | Experiment::Frozen | Experiment::Objective
    ) {
        write_curves(study, exp, &dir)?;
    }
    let v = View {
        rows: &rows,
        study,
        table: &table,
        dir: &dir,
    };
    match exp {
        Experiment::Analogy => v.analogy()?,
        Experiment::Similarity => v.similarity()?,
        Experiment::Layers => v.layers()?,
        Experiment::Qkv => v.qkv()?,
        Experiment::Frozen => v.frozen()?,
        Experiment::Objective => v.objective()?,
        Experiment::Contextuality => v.contextuality()?,
        _ => unreachable!("not a paper experiment"),
    }
    if study.cfg.round {
        // The report reads a round's comparison with the roles, seeds and models it was
        // drawn with, kept beside it; written last, so that a description stands only beside
        // a comparison written whole.
        let label = super::report::config_label(config);
        let info = super::settings::RoundInfo {
            config: label.clone(),
            roles: study.cfg.roles.clone(),
            seeds: models(exp, &study.cast)
                .into_iter()
                .map(|id| (id.name().to_string(), study.cfg.seeds_of(id)))
                .collect(),
            models: study.describe(&label),
        };
        let path = study
            .cfg
            .views_dir(&study.out)
            .join(exp_name)
            .join("round.json");
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("{}: cannot create", parent.display()))?;
        }
        let json = serde_json::to_vec_pretty(&info)?;
        corpus::io::write_atomic(&path, |w| w.write_all(&json))
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    println!("wrote {}", dir.display());
    Ok(())
}

/// One point of a trained model's loss curve, for `curves.csv`.
#[derive(Serialize)]
struct CurveRow {
    model: &'static str,
    seed: u64,
    step: usize,
    split: String,
    loss: f64,
    perplexity: f64,
    lr: f64,
    tokens_per_second: f64,
}

/// The loss curves (training and held-out, with tokens/s) of the experiment's transformers.
fn write_curves(study: &Study, exp: Experiment, dir: &Path) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for id in models(exp, &study.cast) {
        if id.is_word2vec() || id == ModelId::Untrained {
            continue;
        }
        for &seed in &study.cfg.seeds_of(id) {
            for p in study.curve(id, seed)? {
                rows.push(CurveRow {
                    model: id.name(),
                    seed,
                    step: p.step,
                    split: p.split,
                    loss: p.loss,
                    perplexity: p.perplexity,
                    lr: p.lr,
                    tokens_per_second: p.tokens_per_second,
                });
            }
        }
    }
    output::write_csv(&dir.join("curves.csv"), &rows)
}

/// The rows an experiment's CSV keeps.
fn keep(exp: Experiment, rows: Vec<TidyRow>) -> Vec<TidyRow> {
    let analogy = |r: &TidyRow| r.benchmark.starts_with("questions-words");
    let similarity = |r: &TidyRow| r.metric.starts_with("spearman") || r.metric == "pearson";
    let vectors = |r: &TidyRow| {
        matches!(
            r.representation.as_str(),
            "static" | "embedding" | "lm_head" | "decontextualized" | "aggregated"
        )
    };
    rows.into_iter()
        // Attention forms' pair scores: read by the report from each model's kept scores.
        .filter(|r| !r.benchmark.starts_with("pairs:"))
        .filter(|r| match exp {
            Experiment::Analogy => vectors(r) && analogy(r),
            Experiment::Similarity => vectors(r) && similarity(r),
            Experiment::Layers => vectors(r) || r.benchmark == "pooling",
            Experiment::Qkv => {
                vectors(r)
                    || r.representation.starts_with("attention")
                    || r.representation.starts_with("embedding-")
                    || r.benchmark == "training"
            }
            Experiment::Frozen => vectors(r) || r.benchmark == "training",
            Experiment::Objective => vectors(r) || r.benchmark == "training",
            Experiment::Contextuality => r.representation == "contextual",
            _ => true,
        })
        .collect()
}

/// Every file `--exp all` writes (paths under `--out`), for `--exp check-outputs`.
pub fn expected_outputs() -> Vec<String> {
    let figures: [(&str, &[&str]); 7] = [
        ("analogy", &["analogy-3cosadd", "analogy-3cosmul"]),
        ("similarity", &["similarity-spearman"]),
        (
            "layers",
            &[
                "layers-analogy",
                "layers-ws353",
                "layers-simlex",
                "layers-men",
            ],
        ),
        (
            "qkv",
            &[
                "qkv-loss",
                "qkv-quality",
                "qkv-attention-cos",
                "qkv-attention-cka",
            ],
        ),
        (
            "frozen",
            &[
                "frozen-loss",
                "frozen-layers-analogy",
                "frozen-layers-ws353",
            ],
        ),
        (
            "objective",
            &[
                "objective-collocation-embedding",
                "objective-collocation-layers",
                "objective-ws353",
            ],
        ),
        (
            "contextuality",
            &["contextuality-mlm", "contextuality-objective"],
        ),
    ];
    let mut files = Vec::new();
    for (exp, figs) in figures {
        if matches!(exp, "qkv" | "frozen" | "objective") {
            files.push(format!("{exp}/curves.csv"));
        }
        files.push(format!("{exp}/{exp}.csv"));
        files.push(format!("{exp}/summary.csv"));
        for f in figs {
            files.push(format!("{exp}/{f}.svg"));
            files.push(format!("{exp}/{f}.png"));
        }
    }
    files.push("REPORT.md".into());
    files
}

/// `--exp check-outputs`: every expected file under `--out` exists and parses (CSV with a
/// header and at least one row; SVG a complete document; PNG signature and end chunk).
pub fn check_outputs(args: &Args) -> anyhow::Result<()> {
    let mut problems = Vec::new();
    let files = expected_outputs();
    for f in &files {
        let path = args.out.join(f);
        let Ok(bytes) = std::fs::read(&path) else {
            problems.push(format!("{}: missing", path.display()));
            continue;
        };
        let problem = if f.ends_with(".csv") {
            let mut r = csv::Reader::from_reader(bytes.as_slice());
            match r.records().collect::<Result<Vec<_>, _>>() {
                Ok(rows) if rows.is_empty() => Some("no rows".to_string()),
                Ok(_) => None,
                Err(e) => Some(format!("not CSV: {e}")),
            }
        } else if f.ends_with(".svg") {
            let text = String::from_utf8_lossy(&bytes);
            (!(text.contains("<svg") && text.trim_end().ends_with("</svg>")))
                .then(|| "not a complete SVG document".to_string())
        } else if f.ends_with(".png") {
            let ok = bytes.starts_with(b"\x89PNG\r\n\x1a\n")
                && bytes.len() > 20
                && &bytes[bytes.len() - 8..bytes.len() - 4] == b"IEND";
            (!ok).then(|| "not a complete PNG".to_string())
        } else {
            bytes.is_empty().then(|| "empty".to_string())
        };
        if let Some(p) = problem {
            problems.push(format!("{}: {p}", path.display()));
        }
    }
    if !problems.is_empty() {
        anyhow::bail!(
            "{} of {} expected outputs are missing or broken:\n{}",
            problems.len(),
            files.len(),
            problems.join("\n")
        );
    }
    println!("{} expected outputs present and parsed", files.len());
    Ok(())
}

struct View<'a> {
    /// The experiment's per-seed rows (what `table` summarises).
    rows: &'a [TidyRow],
    study: &'a Study,
    table: &'a Table,
    dir: &'a Path,
}

const ANALOGY: &str = "questions-words:total";

impl View<'_> {
    fn stem(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn seeds_note(&self) -> String {
        let k = self.study.cfg.seeds.len();
        if !self.study.cfg.seed_counts.is_empty() {
            format!("mean of each model's seeds (up to {k}), bars min-max")
        } else if k > 1 {
            format!("mean of {k} seeds, bars min-max")
        } else {
            "one seed".into()
        }
    }

    /// The representations compared side by side: word2vec, the embedding matrix, and the best
    /// decontextualized and aggregated layer (best by seed mean on `benchmark`/`metric`).
    fn side_by_side(&self, benchmark: &str, metric: &str) -> Vec<(String, String, Option<usize>)> {
        let mut reps = vec![
            (ModelId::Sgns.name().into(), "static".into(), None),
            (ModelId::Cbow.name().into(), "static".into(), None),
        ];
        for m in [ModelId::Mlm.name(), self.study.cast.clm.name()] {
            if self
                .table
                .get(m, "embedding", None, benchmark, metric)
                .is_none()
            {
                continue;
            }
            reps.push((m.into(), "embedding".into(), None));
            for r in ["decontextualized", "aggregated"] {
                if let Some(best) = self.table.best_layer(m, r, benchmark, metric) {
                    reps.push((m.into(), r.into(), best.layer));
                }
            }
        }
        reps
    }

    fn rep_label(model: &str, representation: &str, layer: Option<usize>) -> String {
        let who = ModelId::from_name(model).map_or(model, |m| m.label());
        match (representation, layer) {
            ("static", _) if model == ModelId::Sgns.name() => "word2vec SGNS".into(),
            ("static", _) => "word2vec CBOW".into(),
            ("embedding", _) => format!("{who} embedding matrix"),
            (r, Some(l)) => format!("{who} {r} (layer {l})"),
            (r, None) => format!("{who} {r}"),
        }
    }

    fn analogy(&self) -> anyhow::Result<()> {
        // The headline on the terminal: total accuracy per representation, seed means.
        println!(
            "{:<44} {:>8} {:>8} {:>8} {:>8}  (Google analogies, all sections; seed means; best \
             layers by seed mean on all questions, REPORT.md chooses them on a dev half; only-b \
             and ignore-a: Linzen's baselines, '-' where not measured)",
            "representation", "3CosAdd", "3CosMul", "only-b", "ignore-a"
        );
        for (m, r, l) in self.side_by_side(ANALOGY, "3CosAdd") {
            let get = |metric: &str| {
                self.table
                    .get(&m, &r, l, ANALOGY, metric)
                    .map_or("-".to_string(), |s| format!("{:.4}", s.mean))
            };
            println!(
                "{:<44} {:>8} {:>8} {:>8} {:>8}",
                Self::rep_label(&m, &r, l),
                get("3CosAdd"),
                get("3CosMul"),
                get("only-b"),
                get("ignore-a")
            );
        }
        for metric in ["3CosAdd", "3CosMul"] {
            let parts = ["total", "semantic", "syntactic"];
            let series: Vec<Series> = self
                .side_by_side(ANALOGY, metric)
                .into_iter()
                .map(|(m, r, l)| Series {
                    name: Self::rep_label(&m, &r, l),
                    points: parts
                        .iter()
                        .enumerate()
                        .filter_map(|(i, p)| {
                            let b = format!("questions-words:{p}");
                            self.table
                                .get(&m, &r, l, &b, metric)
                                .map(|s| point(i as f64, s))
                        })
                        .collect(),
                })
                .collect();
            plot::bars_with(
                &self.stem(&format!("analogy-{}", metric.to_lowercase())),
                &format!(
                    "Google analogies, {metric} accuracy ({}; best layer by total; chance ~ 1/vocabulary)",
                    self.seeds_note()
                ),
                &format!("{metric} accuracy (fraction correct)"),
                &parts.map(String::from),
                &series,
                &plot::Extras {
                    values: true,
                    ..Default::default()
                },
            )?;
        }
        Ok(())
    }

    fn similarity_sets(&self) -> Vec<(String, usize)> {
        let mut sets: Vec<(String, usize)> = self
            .table
            .0
            .iter()
            .filter(|s| s.model == ModelId::Sgns.name() && s.metric == "spearman")
            .map(|s| (s.benchmark.clone(), s.n))
            .collect();
        sets.sort();
        sets.dedup();
        sets
    }

    fn similarity(&self) -> anyhow::Result<()> {
        let sets = self.similarity_sets();
        let groups: Vec<String> = sets
            .iter()
            .map(|(b, n)| {
                format!(
                    "{}{}",
                    b.trim_start_matches("EN-"),
                    if is_small_set(*n) { "*" } else { "" }
                )
            })
            .collect();
        let mlm = ModelId::Mlm.name();
        let mut series: Vec<Series> = Vec::new();
        for (m, r, label) in [
            (ModelId::Sgns.name(), "static", "word2vec SGNS".to_string()),
            (ModelId::Cbow.name(), "static", "word2vec CBOW".to_string()),
            (mlm, "embedding", "MLM embedding matrix".to_string()),
            (
                mlm,
                "decontextualized",
                "MLM decontextualized (best layer per set)".into(),
            ),
            (
                mlm,
                "aggregated",
                "MLM aggregated (best layer per set)".into(),
            ),
        ] {
            let points = sets
                .iter()
                .enumerate()
                .filter_map(|(i, (b, _))| {
                    let s = if r == "static" || r == "embedding" {
                        self.table.get(m, r, None, b, "spearman")
                    } else {
                        self.table.best_layer(m, r, b, "spearman")
                    };
                    s.map(|s| point(i as f64, s))
                })
                .collect();
            series.push(Series {
                name: label,
                points,
            });
        }
        // The chance band of each set for the pairs word2vec uses (seed means of its bounds).
        let bands = sets
            .iter()
            .map(|(b, _)| {
                let g = |m: &str| self.table.get(ModelId::Sgns.name(), "static", None, b, m);
                Some((g("spearman_null_lo")?.mean, g("spearman_null_hi")?.mean))
            })
            .collect();
        plot::bars_with(
            &self.stem("similarity-spearman"),
            &format!(
                "Word similarity, Spearman rho ({}; * = under 150 pairs)",
                self.seeds_note()
            ),
            "Spearman rho with human judgements",
            &groups,
            &series,
            &plot::Extras {
                bands,
                band_label: "95% chance band (pairs permuted)".into(),
                values: false,
            },
        )
    }

    /// One line per (model, representation) against layer, word2vec and the embedding matrix
    /// as horizontal reference lines.
    fn by_layer(
        &self,
        stem: &str,
        title: &str,
        benchmark: &str,
        metric: &str,
        y_label: &str,
        models: &[ModelId],
        representations: &[&str],
    ) -> anyhow::Result<()> {
        let mut series = Vec::new();
        let layers = self.table.layers(ModelId::Mlm.name(), "aggregated");
        let (first, last) = (
            *layers.first().unwrap_or(&0) as f64,
            *layers.last().unwrap_or(&1) as f64,
        );
        for &id in models {
            for &r in representations {
                let points: Vec<_> = self
                    .table
                    .layers(id.name(), r)
                    .into_iter()
                    .filter_map(|l| {
                        self.table
                            .get(id.name(), r, Some(l), benchmark, metric)
                            .map(|s| point(l as f64, s))
                    })
                    .collect();
                if !points.is_empty() {
                    series.push(Series {
                        name: format!("{} {r}", id.label()),
                        points,
                    });
                }
            }
            let flat = if id.is_word2vec() {
                "static"
            } else {
                "embedding"
            };
            if let Some(s) = self.table.get(id.name(), flat, None, benchmark, metric) {
                let name = if id.is_word2vec() {
                    format!("{} (reference)", id.label())
                } else {
                    format!("{} embedding matrix", id.label())
                };
                series.push(Series {
                    name,
                    points: vec![point(first, s), point(last, s)],
                });
            }
        }
        plot::lines(
            &self.stem(stem),
            &format!("{title} ({})", self.seeds_note()),
            "layer (0 = token + position embedding)",
            y_label,
            &series,
        )
    }

    fn layers(&self) -> anyhow::Result<()> {
        let models = [ModelId::Mlm, ModelId::Sgns];
        let reps = ["aggregated", "decontextualized"];
        self.by_layer(
            "layers-analogy",
            "Analogy by layer, 3CosAdd",
            ANALOGY,
            "3CosAdd",
            "3CosAdd accuracy",
            &models,
            &reps,
        )?;
        for (set, file) in [
            ("WS-353-ALL", "layers-ws353"),
            ("SIMLEX-999", "layers-simlex"),
            ("MEN-TR-3k", "layers-men"),
        ] {
            self.by_layer(
                file,
                &format!("{} by layer, Spearman", set.trim_start_matches("EN-")),
                set,
                "spearman",
                "Spearman rho",
                &models,
                &reps,
            )?;
        }
        Ok(())
    }

    fn qkv(&self) -> anyhow::Result<()> {
        let variants = [ModelId::Mlm, ModelId::SharedQk, ModelId::SharedQkv];
        // Each tying's held-out loss as a difference from the untied model's, with its 95% t
        // interval over the seeds both have, seed s against seed s (the two runs of a seed read
        // the same batches and masks): the gaps are hundredths of a nat, invisible on bars from 0.
        let losses = |v: ModelId| {
            let rep = super::evidence::Rep::new(v.name(), "training", None);
            super::evidence::seed_values(self.rows, &rep, "training", "heldout_loss")
        };
        let untied = losses(ModelId::Mlm);
        let tied = [ModelId::SharedQk, ModelId::SharedQkv];
        let groups: Vec<String> = tied.iter().map(|v| v.label().to_string()).collect();
        let loss = Series {
            name: "held-out loss minus the separate-Q/K/V model's".into(),
            points: tied
                .iter()
                .enumerate()
                .filter_map(|(i, &v)| {
                    let l = losses(v);
                    if let Some((d, _)) = super::evidence::paired_seed_difference(&l, &untied) {
                        return Some((i as f64, d.estimate, Some((d.lo, d.hi))));
                    }
                    // One common seed: the difference alone, no interval.
                    let d = l
                        .iter()
                        .find_map(|&(s, x)| Some(x - untied.iter().find(|p| p.0 == s)?.1))?;
                    Some((i as f64, d, None))
                })
                .collect(),
        };
        plot::bars(
            &self.stem("qkv-loss"),
            "Held-out loss of tied Q/K/V minus separate Q/K/V (> 0: tying costs; 95% t interval over seeds, paired by seed)",
            "difference in cross-entropy (nats)",
            &groups,
            &[loss],
        )?;
        let measures = [
            ("analogy", ANALOGY, "3CosAdd"),
            ("WS-353", "WS-353-ALL", "spearman"),
            ("SimLex", "SIMLEX-999", "spearman"),
            ("MEN", "MEN-TR-3k", "spearman"),
        ];
        let mut quality_groups = Vec::new();
        for (label, _, _) in measures {
            quality_groups.push(format!("{label} embedding"));
            quality_groups.push(format!("{label} best layer"));
        }
        let series: Vec<Series> = variants
            .iter()
            .map(|v| {
                let mut points = Vec::new();
                for (i, (_, b, m)) in measures.iter().enumerate() {
                    if let Some(s) = self.table.get(v.name(), "embedding", None, b, m) {
                        points.push(point(2.0 * i as f64, s));
                    }
                    if let Some(s) = self.table.best_layer(v.name(), "aggregated", b, m) {
                        points.push(point(2.0 * i as f64 + 1.0, s));
                    }
                }
                Series {
                    name: v.label().into(),
                    points,
                }
            })
            .collect();
        plot::bars(
            &self.stem("qkv-quality"),
            &format!(
                "Embedding-matrix and best aggregated layer quality by Q/K/V tying ({})",
                self.seeds_note()
            ),
            "3CosAdd accuracy / Spearman rho",
            &quality_groups,
            &series,
        )?;
        // Per layer and head, the untied model's W_Q/W_K/W_V similarity, trained vs initial.
        let mlm = ModelId::Mlm.name();
        let grid = |state: &str, metric: &str| -> Vec<Vec<f64>> {
            let layers = self.table.layers(mlm, state);
            layers
                .iter()
                .map(|&l| {
                    (0..)
                        .map_while(|h| {
                            self.table
                                .get(mlm, state, Some(l), &format!("head-{h}"), metric)
                                .map(|s| s.mean)
                        })
                        .collect()
                })
                .collect()
        };
        for (kind, prefix) in [("cosine", "cos"), ("linear CKA", "cka")] {
            let mut panels = Vec::new();
            for (state, when) in [
                ("attention-trained", "trained"),
                ("attention-initialisation", "at initialisation"),
            ] {
                for (pair, label) in [
                    ("q_k", "W_Q, W_K"),
                    ("q_v", "W_Q, W_V"),
                    ("k_v", "W_K, W_V"),
                ] {
                    panels.push(Panel {
                        title: format!("{label} {when}"),
                        values: grid(state, &format!("{prefix}_{pair}")),
                    });
                }
            }
            let scale = panels
                .iter()
                .flat_map(|p| p.values.iter().flatten())
                .fold(0.05f64, |a, v| a.max(v.abs()));
            plot::heatmap(
                &self.stem(&format!("qkv-attention-{prefix}")),
                &format!(
                    "Untied MLM: {kind} between W_Q, W_K, W_V per layer and head (mean of seeds)"
                ),
                "layer",
                "head",
                scale,
                (2, 3),
                &panels,
            )?;
        }
        Ok(())
    }

    fn frozen(&self) -> anyhow::Result<()> {
        let mut series = Vec::new();
        let cast = &self.study.cast;
        let models = [cast.frozen_reference, cast.frozen];
        for id in models {
            let mut by_step: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
            for &seed in &self.study.cfg.seeds_of(id) {
                for p in self.study.curve(id, seed)? {
                    // The block losses are reported on: the test half with a dev split.
                    if p.split == self.study.reported_split() {
                        by_step.entry(p.step).or_default().push(p.loss);
                    }
                }
            }
            series.push(Series {
                name: format!("{} held-out loss", id.label()),
                points: by_step
                    .iter()
                    .map(|(&step, losses)| {
                        let s = Spread::of(losses);
                        let bar = (losses.len() > 1).then_some((s.min, s.max));
                        (step as f64, s.mean, bar)
                    })
                    .collect(),
            });
        }
        plot::lines(
            &self.stem("frozen-loss"),
            &format!(
                "Held-out masked-token loss ({}), trained vs frozen random embeddings ({})",
                if self.study.reported_split() == "test" {
                    "test half"
                } else {
                    "whole held-out split"
                },
                self.seeds_note()
            ),
            "training step",
            "cross-entropy (nats)",
            &series,
        )?;
        self.by_layer(
            "frozen-layers-analogy",
            "Analogy by layer, trained vs frozen embedding",
            ANALOGY,
            "3CosAdd",
            "3CosAdd accuracy",
            &models,
            &["aggregated"],
        )?;
        self.by_layer(
            "frozen-layers-ws353",
            "WS-353 by layer, trained vs frozen embedding",
            "WS-353-ALL",
            "spearman",
            "Spearman rho",
            &models,
            &["aggregated"],
        )
    }

    fn objective(&self) -> anyhow::Result<()> {
        let models = models(Experiment::Objective, &self.study.cast);
        let groups: Vec<String> = models.iter().map(|m| m.label().to_string()).collect();
        let series: Vec<Series> = [
            ("collocated_cosine", "collocated pairs"),
            ("shuffled_cosine", "shuffled pairs"),
            ("gap", "collocated - shuffled"),
        ]
        .iter()
        .map(|(metric, label)| Series {
            name: (*label).into(),
            points: models
                .iter()
                .enumerate()
                .filter_map(|(i, m)| {
                    let r = if m.is_word2vec() {
                        "static"
                    } else {
                        "embedding"
                    };
                    self.table
                        .get(m.name(), r, None, "collocation", metric)
                        .map(|s| point(i as f64, s))
                })
                .collect(),
        })
        .collect();
        plot::bars(
            &self.stem("objective-collocation-embedding"),
            &format!(
                "Mean cosine of collocated word pairs in the embedding matrix ({})",
                self.seeds_note()
            ),
            "mean cosine",
            &groups,
            &series,
        )?;
        self.by_layer(
            "objective-collocation-layers",
            "Collocated minus shuffled cosine by layer (aggregated vectors)",
            "collocation",
            "gap",
            "mean cosine difference",
            &models,
            &["aggregated"],
        )?;
        self.by_layer(
            "objective-ws353",
            "WS-353 by layer and objective (aggregated vectors)",
            "WS-353-ALL",
            "spearman",
            "Spearman rho",
            &models,
            &["aggregated"],
        )
    }

    fn contextuality(&self) -> anyhow::Result<()> {
        let mlm = ModelId::Mlm.name();
        let line = |model: &str, metric: &str, name: String| Series {
            name,
            points: self
                .table
                .layers(model, "contextual")
                .into_iter()
                .filter_map(|l| {
                    self.table
                        .get(model, "contextual", Some(l), "contextuality", metric)
                        .map(|s| point(l as f64, s))
                })
                .collect(),
        };
        plot::lines(
            &self.stem("contextuality-mlm"),
            &format!("Contextuality by layer, MLM ({})", self.seeds_note()),
            "layer (0 = token + position embedding)",
            "mean cosine",
            &[
                line(mlm, "self_similarity", "self-similarity".into()),
                line(mlm, "intra_sentence", "intra-sentence similarity".into()),
                line(
                    mlm,
                    "intra_sentence_null",
                    "intra-sentence null (random tokens, same positions)".into(),
                ),
                line(mlm, "anisotropy", "anisotropy (random token pairs)".into()),
                line(
                    mlm,
                    "self_similarity_adjusted",
                    "self-similarity - anisotropy".into(),
                ),
            ],
        )?;
        let series: Vec<Series> = models(Experiment::Contextuality, &self.study.cast)
            .iter()
            .flat_map(|m| {
                [
                    line(
                        m.name(),
                        "self_similarity_adjusted",
                        format!("{} self-similarity - anisotropy", m.label()),
                    ),
                    line(m.name(), "anisotropy", format!("{} anisotropy", m.label())),
                ]
            })
            .collect();
        plot::lines(
            &self.stem("contextuality-objective"),
            &format!(
                "Contextuality by layer and objective ({})",
                self.seeds_note()
            ),
            "layer (0 = token + position embedding)",
            "mean cosine",
            &series,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seed: u64, layer: Option<usize>, value: f64) -> TidyRow {
        TidyRow {
            seed: Some(seed),
            layer,
            value,
            benchmark: "b".into(),
            metric: "m".into(),
            ..TidyRow::template("e", "model", "aggregated")
        }
    }

    #[test]
    fn attention_forms_pair_scores_stay_out_of_the_paper_tables() {
        let r = |rep: &str, bench: &str, metric: &str| TidyRow {
            benchmark: bench.into(),
            metric: metric.into(),
            ..TidyRow::template("e", "model", rep)
        };
        let rows = vec![
            r("embedding", "WS-353-ALL", "spearman"),
            r("embedding", "pairs:WS-353-ALL:dot", "spearman_human"),
            r(
                "attention-trained",
                "pairs:WS-353-ALL:head-0",
                "spearman_human",
            ),
            r("attention-trained", "head-0", "cos_q_k"),
        ];
        for exp in [Experiment::Similarity, Experiment::Layers, Experiment::Qkv] {
            let kept = keep(exp, rows.clone());
            assert!(
                kept.iter().all(|r| !r.benchmark.starts_with("pairs:")),
                "{exp:?}"
            );
            assert!(kept.iter().any(|r| r.benchmark == "WS-353-ALL"), "{exp:?}");
        }
        assert!(keep(Experiment::Qkv, rows)
            .iter()
            .any(|r| r.benchmark == "head-0"));
    }

    #[test]
    fn summaries_are_mean_sd_min_max_over_seeds() {
        let rows = [
            row(1, Some(1), 0.1),
            row(2, Some(1), 0.2),
            row(3, Some(1), 0.6),
            row(1, Some(2), 0.5),
        ];
        let t = Table(summarise("e", &rows));
        let s = t.get("model", "aggregated", Some(1), "b", "m").unwrap();
        assert!((s.mean - 0.3).abs() < 1e-12);
        // Sample sd of 0.1, 0.2, 0.6: sqrt((0.04 + 0.01 + 0.09) / 2) = sqrt(0.07).
        assert!((s.sd - 0.07f64.sqrt()).abs() < 1e-12);
        assert_eq!((s.min, s.max, s.seeds), (0.1, 0.6, 3));
        let one = t.get("model", "aggregated", Some(2), "b", "m").unwrap();
        assert_eq!((one.sd, one.seeds), (0.0, 1));
        assert_eq!(
            t.best_layer("model", "aggregated", "b", "m").unwrap().layer,
            Some(2)
        );
        assert_eq!(t.layers("model", "aggregated"), vec![1, 2]);
    }
}
