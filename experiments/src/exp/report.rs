//! `--exp report`: results/REPORT.md from the experiments' summary CSVs, one short section per
//! question, every number with its seed spread, and a plain note wherever a difference is inside
//! that spread. The same findings are copied into README.md between the
//! `<!-- findings:start -->` and `<!-- findings:end -->` markers, so no number there is typed by
//! hand. Missing experiments are named, not skipped silently.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use super::paper::{is_small_set, name, Summary, Table, PAPER};
use super::study::ModelId;
use crate::{output, paths, Args, Experiment};

const START: &str = "<!-- findings:start -->";
const END: &str = "<!-- findings:end -->";

/// `mean ± sd (min–max, k seeds)`, or the value alone for one seed.
pub fn fmt(s: &Summary) -> String {
    if s.seeds > 1 {
        format!(
            "{:.3} ± {:.3} ({:.3} to {:.3}, {} seeds)",
            s.mean, s.sd, s.min, s.max, s.seeds
        )
    } else {
        format!("{:.3} (1 seed)", s.mean)
    }
}

/// Whether two measurements' seed ranges overlap: then the difference is within seed noise.
pub fn overlap(a: &Summary, b: &Summary) -> bool {
    a.min <= b.max && b.min <= a.max
}

fn compare(a_label: &str, a: &Summary, b_label: &str, b: &Summary) -> String {
    let verdict = if overlap(a, b) {
        "the seed ranges overlap: within noise".to_string()
    } else if a.mean > b.mean {
        format!("{a_label} is higher on every seed")
    } else {
        format!("{b_label} is higher on every seed")
    };
    format!("{a_label} {} vs {b_label} {}: {verdict}", fmt(a), fmt(b))
}

struct Sources {
    tables: Vec<(Experiment, Option<Table>)>,
}

impl Sources {
    fn load(out: &Path) -> anyhow::Result<Sources> {
        let mut tables = Vec::new();
        for exp in PAPER {
            let path = out.join(name(exp)).join("summary.csv");
            let table = if path.exists() {
                Some(Table(output::read_csv::<Summary>(&path)?))
            } else {
                None
            };
            tables.push((exp, table));
        }
        Ok(Sources { tables })
    }

    fn get(&self, exp: Experiment) -> Option<&Table> {
        self.tables
            .iter()
            .find(|(e, _)| *e == exp)
            .and_then(|(_, t)| t.as_ref())
    }
}

const ANALOGY: &str = "questions-words:total";
const MLM: &str = "transformer-mlm";

fn missing(md: &mut String, exp: Experiment) {
    let _ = writeln!(
        md,
        "_Not measured yet: run `cargo run --release -p experiments -- --exp {}`._\n",
        name(exp)
    );
}

fn figure(md: &mut String, exp: Experiment, file: &str) {
    let _ = writeln!(md, "![{file}]({}/{file}.svg)\n", name(exp));
}

/// The findings, as Markdown with figure paths relative to `results/`.
fn findings(src: &Sources) -> String {
    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "Numbers are mean ± sample standard deviation over seeds, then the min to max range. \"Best layer\" is the layer with the highest seed mean on the benchmark being reported: an optimistic choice for the transformer. \"Within noise\" means the seed ranges overlap.\n");

    let _ = writeln!(w, "### Do contextual vectors solve analogies?\n");
    match src.get(Experiment::Analogy) {
        Some(t) => {
            let _ = writeln!(w, "Google analogies, 3CosAdd accuracy over all sections (semantic and syntactic split in `analogy/summary.csv`):\n");
            for (label, s) in [
                (
                    "word2vec SGNS",
                    t.get(ModelId::Sgns.name(), "static", None, ANALOGY, "3CosAdd"),
                ),
                (
                    "word2vec CBOW",
                    t.get(ModelId::Cbow.name(), "static", None, ANALOGY, "3CosAdd"),
                ),
                (
                    "MLM embedding matrix",
                    t.get(MLM, "embedding", None, ANALOGY, "3CosAdd"),
                ),
                (
                    "MLM best decontextualized layer",
                    t.best_layer(MLM, "decontextualized", ANALOGY, "3CosAdd"),
                ),
                (
                    "MLM best aggregated layer",
                    t.best_layer(MLM, "aggregated", ANALOGY, "3CosAdd"),
                ),
            ] {
                if let Some(s) = s {
                    let layer = s.layer.map_or(String::new(), |l| format!(" (layer {l})"));
                    let _ = writeln!(
                        w,
                        "- {label}{layer}: {} of {} questions answerable",
                        fmt(s),
                        s.n
                    );
                }
            }
            let sgns = t.get(ModelId::Sgns.name(), "static", None, ANALOGY, "3CosAdd");
            let best = ["embedding", "decontextualized", "aggregated"]
                .iter()
                .filter_map(|r| match *r {
                    "embedding" => t.get(MLM, r, None, ANALOGY, "3CosAdd"),
                    _ => t.best_layer(MLM, r, ANALOGY, "3CosAdd"),
                })
                .max_by(|a, b| a.mean.total_cmp(&b.mean));
            if let (Some(a), Some(b)) = (sgns, best) {
                let label = match b.layer {
                    Some(l) => format!("MLM {} layer {l}", b.representation),
                    None => format!("MLM {}", b.representation),
                };
                let _ = writeln!(
                    w,
                    "- the best transformer representation against word2vec: {}",
                    compare("word2vec SGNS", a, &label, b)
                );
            }
            let _ = writeln!(w);
            figure(w, Experiment::Analogy, "analogy-3cosadd");
        }
        None => missing(w, Experiment::Analogy),
    }

    let _ = writeln!(w, "### Word similarity\n");
    match src.get(Experiment::Similarity) {
        Some(t) => {
            let _ = writeln!(w, "Spearman rho with human judgements. Sets marked * have under 150 pairs used (both words in the vocabulary): random vectors land anywhere within ±0.3 on them, so they carry no conclusion alone.\n");
            let _ = writeln!(w, "| set | pairs used (OOV) | word2vec SGNS | MLM embedding | MLM best aggregated layer |");
            let _ = writeln!(w, "|---|---|---|---|---|");
            let mut sets: Vec<&Summary> =
                t.0.iter()
                    .filter(|s| s.model == ModelId::Sgns.name() && s.metric == "spearman")
                    .collect();
            sets.sort_by(|a, b| a.benchmark.cmp(&b.benchmark));
            for s in sets {
                let b = &s.benchmark;
                let star = if is_small_set(s.n) { "*" } else { "" };
                let emb = t.get(MLM, "embedding", None, b, "spearman");
                let agg = t.best_layer(MLM, "aggregated", b, "spearman");
                let _ = writeln!(
                    w,
                    "| {}{star} | {} ({}) | {} | {} | {} |",
                    b.trim_start_matches("EN-"),
                    s.n,
                    s.oov,
                    fmt(s),
                    emb.map_or("-".into(), fmt),
                    agg.map_or("-".into(), |a| format!(
                        "{} (layer {})",
                        fmt(a),
                        a.layer.unwrap_or(0)
                    ))
                );
            }
            let _ = writeln!(w);
            for b in ["WS-353-ALL", "SIMLEX-999", "MEN-TR-3k"] {
                if let (Some(a), Some(c)) = (
                    t.get(ModelId::Sgns.name(), "static", None, b, "spearman"),
                    t.best_layer(MLM, "aggregated", b, "spearman"),
                ) {
                    let _ = writeln!(
                        w,
                        "- {b}: {}",
                        compare(
                            "word2vec SGNS",
                            a,
                            &format!("MLM aggregated layer {}", c.layer.unwrap_or(0)),
                            c
                        )
                    );
                }
                if let (Some(a), Some(c)) = (
                    t.get(MLM, "embedding", None, b, "spearman"),
                    t.best_layer(MLM, "aggregated", b, "spearman"),
                ) {
                    let _ = writeln!(
                        w,
                        "- {b}: {}",
                        compare(
                            "MLM embedding matrix",
                            a,
                            &format!("MLM aggregated layer {}", c.layer.unwrap_or(0)),
                            c
                        )
                    );
                }
            }
            let _ = writeln!(w);
            figure(w, Experiment::Similarity, "similarity-spearman");
        }
        None => missing(w, Experiment::Similarity),
    }

    let _ = writeln!(
        w,
        "### Are W_Q, W_K, W_V the embedding, and must they differ?\n"
    );
    match src.get(Experiment::Qkv) {
        Some(t) => {
            let variants = [ModelId::Mlm, ModelId::SharedQk, ModelId::SharedQkv];
            if let Some(h) = t.get(MLM, "training", None, "training", "unigram_entropy") {
                let _ = writeln!(w, "The corpus's unigram entropy, the loss of a model that ignores context, is {:.3} nats; every model trained {} steps.\n", h.mean, h.n);
            }
            for v in variants {
                if let Some(s) = t.get(v.name(), "training", None, "training", "heldout_loss") {
                    let _ = writeln!(w, "- {} held-out masked-token loss: {}", v.label(), fmt(s));
                }
            }
            let loss = |v: ModelId| t.get(v.name(), "training", None, "training", "heldout_loss");
            for v in [ModelId::SharedQk, ModelId::SharedQkv] {
                if let (Some(a), Some(b)) = (loss(ModelId::Mlm), loss(v)) {
                    let _ = writeln!(
                        w,
                        "- held-out loss (lower is better), {}",
                        compare("untied", a, v.label(), b)
                    );
                }
            }
            for v in variants {
                if let (Some(e), Some(l)) = (
                    t.get(v.name(), "embedding", None, "WS-353-ALL", "spearman"),
                    t.best_layer(v.name(), "aggregated", "WS-353-ALL", "spearman"),
                ) {
                    let _ = writeln!(
                        w,
                        "- {} WS-353: embedding matrix {}, best aggregated layer {} {}",
                        v.label(),
                        fmt(e),
                        l.layer.unwrap_or(0),
                        fmt(l)
                    );
                }
            }
            // Attention geometry averaged over layers and heads (means of seed means).
            let mean_over = |state: &str, metric: &str| {
                let v: Vec<f64> = t
                    .0
                    .iter()
                    .filter(|s| s.model == MLM && s.representation == state && s.metric == metric)
                    .map(|s| s.mean)
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            for (metric, label) in [
                ("cos_q_k", "cosine(W_Q, W_K)"),
                ("cka_q_k", "linear CKA(W_Q, W_K)"),
                ("qk_symmetric_share", "symmetric share of W_Q W_K^T"),
            ] {
                if let (Some(a), Some(b)) = (
                    mean_over("attention-trained", metric),
                    mean_over("attention-initialisation", metric),
                ) {
                    let _ = writeln!(w, "- untied MLM, {label}, mean over layers and heads: trained {a:.3} vs initialisation {b:.3}");
                }
            }
            let _ = writeln!(w);
            figure(w, Experiment::Qkv, "qkv-loss");
            figure(w, Experiment::Qkv, "qkv-attention-cos");
        }
        None => missing(w, Experiment::Qkv),
    }

    let _ = writeln!(w, "### Would frozen random embeddings do?\n");
    match src.get(Experiment::Frozen) {
        Some(t) => {
            let f = ModelId::FrozenEmbedding.name();
            if let (Some(a), Some(b)) = (
                t.get(MLM, "training", None, "training", "heldout_loss"),
                t.get(f, "training", None, "training", "heldout_loss"),
            ) {
                let _ = writeln!(
                    w,
                    "- held-out loss (lower is better): {}",
                    compare("trained embedding", a, "frozen embedding", b)
                );
            }
            for (b, m, label) in [
                ("WS-353-ALL", "spearman", "WS-353 Spearman"),
                (ANALOGY, "3CosAdd", "analogy 3CosAdd"),
            ] {
                if let (Some(a), Some(c)) = (
                    t.best_layer(MLM, "aggregated", b, m),
                    t.best_layer(f, "aggregated", b, m),
                ) {
                    let _ = writeln!(
                        w,
                        "- best aggregated layer, {label}: {}",
                        compare(
                            &format!("trained (layer {})", a.layer.unwrap_or(0)),
                            a,
                            &format!("frozen (layer {})", c.layer.unwrap_or(0)),
                            c
                        )
                    );
                }
            }
            let _ = writeln!(w);
            figure(w, Experiment::Frozen, "frozen-loss");
            figure(w, Experiment::Frozen, "frozen-layers-ws353");
        }
        None => missing(w, Experiment::Frozen),
    }

    let _ = writeln!(w, "### Does the objective make collocated words similar?\n");
    match src.get(Experiment::Objective) {
        Some(t) => {
            let _ = writeln!(w, "Mean cosine of the highest-PMI co-occurring word pairs minus that of the same words re-paired at random (0: co-occurrence does not make vectors similar):\n");
            for m in [
                ModelId::Mlm,
                ModelId::Clm,
                ModelId::Untrained,
                ModelId::Sgns,
            ] {
                let r = if m.is_word2vec() {
                    "static"
                } else {
                    "embedding"
                };
                if let Some(s) = t.get(m.name(), r, None, "collocation", "gap") {
                    let where_ = if m.is_word2vec() {
                        "vectors"
                    } else {
                        "embedding matrix"
                    };
                    let best = t.best_layer(m.name(), "aggregated", "collocation", "gap");
                    let _ = writeln!(
                        w,
                        "- {} {where_}: {}{}",
                        m.label(),
                        fmt(s),
                        best.map_or(String::new(), |b| format!(
                            "; largest in an aggregated layer: layer {} {}",
                            b.layer.unwrap_or(0),
                            fmt(b)
                        ))
                    );
                }
            }
            let gap = |m: ModelId| t.get(m.name(), "embedding", None, "collocation", "gap");
            if let (Some(a), Some(b)) = (gap(ModelId::Mlm), gap(ModelId::Clm)) {
                let _ = writeln!(w, "- embedding matrix, {}", compare("MLM", a, "CLM", b));
            }
            let _ = writeln!(w);
            figure(w, Experiment::Objective, "objective-collocation-embedding");
            figure(w, Experiment::Objective, "objective-collocation-layers");
        }
        None => missing(w, Experiment::Objective),
    }

    let _ = writeln!(w, "### How contextual is each layer?\n");
    match src.get(Experiment::Contextuality) {
        Some(t) => {
            let _ = writeln!(w, "Intra-sentence similarity is read against its null, the same statistic on bags of random tokens from other sequences at the same positions (not against the anisotropy: a token's cosine with a mean that contains it is far above the mean pairwise cosine even for unrelated tokens). Rows computed before that null existed show \"-\" there.\n");
            let _ = writeln!(w, "| layer | self-similarity | intra-sentence | intra-sentence null | intra-sentence - null | anisotropy | self-similarity - anisotropy |");
            let _ = writeln!(w, "|---|---|---|---|---|---|---|");
            for l in t.layers(MLM, "contextual") {
                let g = |m: &str| {
                    t.get(MLM, "contextual", Some(l), "contextuality", m)
                        .map_or("-".into(), fmt)
                };
                let _ = writeln!(
                    w,
                    "| {l} | {} | {} | {} | {} | {} | {} |",
                    g("self_similarity"),
                    g("intra_sentence"),
                    g("intra_sentence_null"),
                    g("intra_sentence_excess"),
                    g("anisotropy"),
                    g("self_similarity_adjusted")
                );
            }
            let _ = writeln!(w);
            figure(w, Experiment::Contextuality, "contextuality-mlm");
        }
        None => missing(w, Experiment::Contextuality),
    }
    md
}

/// Rewrites figure links for a file that sits in the repository root instead of `results/`.
fn from_root(md: &str, results: &str) -> String {
    md.replace("](", &format!("]({results}/"))
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let src = Sources::load(&args.out)?;
    let body = findings(&src);
    let mut report = String::from("# embedlab report\n\nGenerated by `cargo run --release -p experiments -- --exp report` from the summary CSVs under this directory (mean ± sample standard deviation over seeds, then the min to max range). Do not edit by hand.\n\n");
    report.push_str(&body);
    let path = args.out.join("REPORT.md");
    corpus::io::write_atomic(&path, |w| w.write_all(report.as_bytes()))
        .with_context(|| format!("{}: cannot write", path.display()))?;
    println!("wrote {}", path.display());

    // README findings, only when the report describes the repository's own results/.
    let readme = paths::repo_root().join("README.md");
    let own = std::fs::canonicalize(&args.out).ok()
        == std::fs::canonicalize(paths::repo_root().join("results")).ok();
    if own && readme.exists() && !args.quick {
        let text = std::fs::read_to_string(&readme)
            .with_context(|| format!("{}: cannot read", readme.display()))?;
        if let (Some(a), Some(b)) = (text.find(START), text.find(END)) {
            let new = format!(
                "{}{START}\n<!-- generated by `--exp report` from results/REPORT.md; do not edit -->\n\n{}{}",
                &text[..a],
                from_root(&body, "results"),
                &text[b..]
            );
            corpus::io::write_atomic(&readme, |w| w.write_all(new.as_bytes()))
                .with_context(|| format!("{}: cannot write", readme.display()))?;
            println!("updated the findings in {}", readme.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mean: f64, min: f64, max: f64) -> Summary {
        Summary {
            experiment: "x".into(),
            model: "m".into(),
            representation: "r".into(),
            layer: None,
            benchmark: "b".into(),
            metric: "m".into(),
            mean,
            sd: 0.01,
            min,
            max,
            seeds: 3,
            n: 10,
            oov: 0,
        }
    }

    #[test]
    fn overlapping_seed_ranges_are_called_noise() {
        let a = s(0.50, 0.45, 0.55);
        let b = s(0.52, 0.50, 0.56);
        assert!(compare("A", &a, "B", &b).ends_with("within noise"));
        let c = s(0.70, 0.66, 0.74);
        assert!(compare("A", &a, "C", &c).ends_with("C is higher on every seed"));
        assert_eq!(fmt(&a), "0.500 ± 0.010 (0.450 to 0.550, 3 seeds)");
    }

    #[test]
    fn small_sets_are_judged_by_pairs_used_not_pairs_in_the_file() {
        // MEN-TR-3k-like: 3,000 in the file, 2,115 used; a set of 300 pairs with 120 used.
        assert!(!is_small_set(2115));
        assert!(is_small_set(120));
        assert!(is_small_set(149) && !is_small_set(150));
        let used_120 = Summary {
            n: 120,
            oov: 180,
            ..s(0.5, 0.4, 0.6)
        };
        assert!(is_small_set(used_120.n));
    }

    #[test]
    fn figure_links_move_under_results() {
        assert_eq!(
            from_root("![a](qkv/a.svg)", "results"),
            "![a](results/qkv/a.svg)"
        );
    }

    #[test]
    fn a_missing_experiment_is_named() {
        let src = Sources {
            tables: PAPER.iter().map(|&e| (e, None)).collect(),
        };
        let md = findings(&src);
        assert!(md.contains("--exp analogy") && md.contains("--exp contextuality"));
    }
}
