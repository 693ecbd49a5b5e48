//! `--exp report`: results/REPORT.md from the experiments' CSVs and the per-item outcomes
//! behind them ([`super::evidence`]), one short section per question, every score and every
//! difference with its 95% interval and, where one exists, its chance level. The README's
//! answers quote it (a test checks that every interval they give is here). Missing experiments
//! are named, not skipped silently.

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use analysis::inference::Interval;

use super::comparisons::{is_small_set, name, Summary, Table, PAPER};
use super::evidence::{
    baseline_rep, paired_seed_difference, per_seed, seed_mean, Difference, Evidence, Half, Rep,
    BASELINE_IGNORE_A, BASELINE_ONLY_B,
};
use super::settings::{Cast, ModelId};
use crate::cli::{Args, Experiment};
use crate::output;
use crate::output::TidyRow;
use analysis::collocation::CollocationPairs;

/// `0.123 [0.100, 0.150]`: an estimate and its 95% interval.
pub fn fmt_iv(iv: &Interval) -> String {
    if iv.lo.is_finite() && iv.hi.is_finite() {
        format!("{:.3} [{:.3}, {:.3}]", iv.estimate, iv.lo, iv.hi)
    } else {
        format!("{:.3} [interval needs 2+ seeds]", iv.estimate)
    }
}

/// A p-value: two decimals from 0.1 up (`1.00`, `0.25`), two significant digits below
/// (`0.012`), scientific under 0.001 (`3.1e-9`).
fn fmt_p(p: f64) -> String {
    if p >= 0.1 {
        format!("{p:.2}")
    } else if p >= 0.001 {
        let digits = (1 - p.log10().floor() as i32).max(0) as usize;
        format!("{p:.digits$}")
    } else {
        format!("{p:.1e}")
    }
}

/// A model's gain over the unigram at held-out `[MASK]` targets, where only context helps
/// ([`super::context_gain`]), per seed with its 95% interval over held-out sequences, and how
/// many seeds' intervals lie above 0; `None` when it was not measured (no weights at hand).
fn mask_gains(src: &Sources, exp: Experiment, model: &str) -> Option<(String, u64, u64)> {
    // By seed number: a model measured after its first seeds' weights were gone has the gain
    // for some seeds only, and the line must say which.
    let rows = src.rows.iter().find(|(e, _)| *e == exp)?.1.as_slice();
    let get = |metric: &str| -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, f64)> = rows
            .iter()
            .filter(|r| {
                r.model == model
                    && r.representation == "training"
                    && r.benchmark == "training"
                    && r.metric == metric
            })
            .map(|r| (r.seed.unwrap_or(0), r.value))
            .collect();
        v.sort_by_key(|x| x.0);
        v
    };
    let (g, lo, hi) = (
        get("context_gain_at_mask"),
        get("context_gain_at_mask_lo"),
        get("context_gain_at_mask_hi"),
    );
    if g.is_empty() || g.len() != lo.len() || g.len() != hi.len() {
        return None;
    }
    let trained = get("heldout_loss").len();
    let seeds: Vec<String> = (0..g.len())
        .map(|i| {
            let at = if g.len() < trained {
                format!("seed {} ", g[i].0)
            } else {
                String::new()
            };
            format!("{at}{:+.3} [{:+.3}, {:+.3}]", g[i].1, lo[i].1, hi[i].1)
        })
        .collect();
    let mut seeds = seeds.join(", ");
    if g.len() < trained {
        seeds.push_str(&format!(
            " (the other {} seeds' weights were gone)",
            trained - g.len()
        ));
    }
    let above = lo.iter().filter(|x| x.1 > 0.0).count() as u64;
    Some((seeds, above, g.len() as u64))
}

/// What [`mask_gains`] measures, said once before its numbers.
const MASK_GAIN: &str = "gain over the unigram at held-out [MASK] targets, where a model that ignores context can do no better than the unigram (nats per target, 95% interval over held-out sequences; above 0: predicts from context; `analysis::context_gain`)";

/// "<label> <gains per seed> (<k> of <n> above 0)" for each of `models` measured, joined by
/// "; ", or `None` when none was.
fn gain_list(src: &Sources, exp: Experiment, models: &[ModelId]) -> Option<String> {
    let gains: Vec<String> = models
        .iter()
        .filter_map(|m| {
            let (seeds, above, n) = mask_gains(src, exp, m.name())?;
            // The seed mean with a t interval over seeds, where there are several.
            let values: Vec<f64> = src
                .rows
                .iter()
                .find(|(e, _)| *e == exp)?
                .1
                .iter()
                .filter(|r| {
                    r.model == m.name()
                        && r.benchmark == "training"
                        && r.metric == "context_gain_at_mask"
                })
                .map(|r| r.value)
                .collect();
            let mean = if values.len() >= 2 {
                let iv = seed_mean(&values);
                format!(
                    "; seed mean {:+.3} [{:+.3}, {:+.3}]",
                    iv.estimate, iv.lo, iv.hi
                )
            } else {
                String::new()
            };
            Some(format!(
                "{} {seeds} ({above} of {n} above 0{mean})",
                m.label()
            ))
        })
        .collect();
    (!gains.is_empty()).then(|| gains.join("; "))
}

/// The value of `seed` in per-seed (seed, value) pairs, where it has one: how a measure of one
/// model or layer is matched with another's seed by seed.
fn seed_value(values: &[(u64, f64)], seed: u64) -> Option<f64> {
    values.iter().find(|(s, _)| *s == seed).map(|(_, v)| *v)
}

/// What an interval of a difference says, in words.
pub fn verdict(iv: &Interval, a: &str, b: &str) -> String {
    match interval_side(iv) {
        None => "no interval".into(),
        Some(Ordering::Greater) => format!("{a} higher (the interval excludes 0)"),
        Some(Ordering::Less) => format!("{b} higher (the interval excludes 0)"),
        Some(Ordering::Equal) => "no difference shown (the interval includes 0)".into(),
    }
}

/// Which side of 0 a difference's interval lies on: `Equal` where it includes 0, `None` where
/// it has no bounds (one seed).
fn interval_side(iv: &Interval) -> Option<Ordering> {
    if !(iv.lo.is_finite() && iv.hi.is_finite()) {
        None
    } else if iv.lo > 0.0 {
        Some(Ordering::Greater)
    } else if iv.hi < 0.0 {
        Some(Ordering::Less)
    } else {
        Some(Ordering::Equal)
    }
}

fn mcnemar(p: &[f64]) -> String {
    if p.is_empty() {
        return String::new();
    }
    let ps: Vec<String> = p.iter().map(|&p| fmt_p(p)).collect();
    format!("; McNemar exact p per seed: {}", ps.join(", "))
}

struct Sources {
    /// Each experiment's summary, if it was written with per-item outcomes (`measurements.csv`
    /// beside it); one written before those existed is in `stale`, not here.
    tables: Vec<(Experiment, Option<Table>)>,
    stale: Vec<Experiment>,
    /// Each experiment's per-seed rows, for intervals over seeds.
    rows: Vec<(Experiment, Vec<TidyRow>)>,
    evidence: Option<Evidence>,
    /// Who plays the causal LM, the frozen ablation and the attention control.
    cast: Cast,
    /// Where the comparisons' folders are, relative to the report: empty, or a round's
    /// folder ([`super::settings::ROUND`]); figures are linked through it.
    views: String,
    /// Whether the config these comparisons were drawn with splits off a dev half, so that
    /// losses are on the test half (a round always does: its config is refused without).
    dev_split: bool,
}

impl Sources {
    /// The comparisons under `out/views` (`views` empty: under `out`), their per-item
    /// outcomes read from the measurements under `out`.
    /// `collocations`: the pairs the models' collocation cosines were kept for, whose words
    /// the gap's interval resamples (pairs as independent draws without them).
    fn load(
        out: &Path,
        views: &str,
        cast: Cast,
        collocations: Option<&CollocationPairs>,
    ) -> anyhow::Result<Sources> {
        let mut tables = Vec::new();
        let mut rows = Vec::new();
        let mut stale = Vec::new();
        let root = out.join(views);
        for exp in PAPER {
            let dir = root.join(name(exp));
            let path = dir.join("summary.csv");
            if path.exists() && !dir.join("measurements.csv").exists() {
                stale.push(exp);
                tables.push((exp, None));
                continue;
            }
            let table = if path.exists() {
                Some(Table(output::read_csv::<Summary>(&path)?))
            } else {
                None
            };
            tables.push((exp, table));
            let seeds_csv = dir.join(format!("{}.csv", name(exp)));
            if seeds_csv.exists() {
                rows.push((exp, output::read_csv::<TidyRow>(&seeds_csv)?));
            }
        }
        let mut evidence =
            super::evidence::load(out, &root, &super::eval::benchmarks(&[])?, collocations)?;
        if let Some(p) = collocations {
            evidence
                .set_collocation_words(&p.pairs, &p.matched)
                .map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?;
        }
        let evidence = Some(evidence);
        Ok(Sources {
            tables,
            stale,
            rows,
            evidence,
            cast,
            views: views.to_string(),
            dev_split: !views.is_empty(),
        })
    }

    fn get(&self, exp: Experiment) -> Option<&Table> {
        self.tables
            .iter()
            .find(|(e, _)| *e == exp)
            .and_then(|(_, t)| t.as_ref())
    }

    /// Per seed (in seed order), the mean of the values of `model`'s rows in `exp` that `keep`
    /// selects: a measure averaged over layers or heads, one value per seed.
    fn seed_means(
        &self,
        exp: Experiment,
        model: &str,
        keep: impl Fn(&TidyRow) -> bool,
    ) -> Vec<(u64, f64)> {
        let mut by_seed: std::collections::BTreeMap<u64, (f64, usize)> = Default::default();
        if let Some((_, rows)) = self.rows.iter().find(|(e, _)| *e == exp) {
            for r in rows.iter().filter(|r| r.model == model && keep(r)) {
                let e = by_seed.entry(r.seed.unwrap_or(0)).or_default();
                e.0 += r.value;
                e.1 += 1;
            }
        }
        by_seed
            .into_iter()
            .map(|(s, (sum, n))| (s, sum / n as f64))
            .collect()
    }

    /// Per-seed values of one measurement, in seed order.
    fn values(&self, exp: Experiment, rep: &Rep, benchmark: &str, metric: &str) -> Vec<f64> {
        self.rows
            .iter()
            .find(|(e, _)| *e == exp)
            .map_or_else(Vec::new, |(_, rows)| per_seed(rows, rep, benchmark, metric))
    }

    /// [`Sources::values`] with each value's seed, for differences paired by seed.
    fn seed_values(
        &self,
        exp: Experiment,
        rep: &Rep,
        benchmark: &str,
        metric: &str,
    ) -> Vec<(u64, f64)> {
        self.rows
            .iter()
            .find(|(e, _)| *e == exp)
            .map_or_else(Vec::new, |(_, rows)| {
                super::evidence::seed_values(rows, rep, benchmark, metric)
            })
    }
}

const ANALOGY: &str = "questions-words";
const ANALOGY_TOTAL: &str = "questions-words:total";
const MLM: &str = "transformer-mlm";

fn missing(md: &mut String, src: &Sources, exp: Experiment) {
    if src.stale.contains(&exp) {
        let _ = writeln!(
            md,
            "_Not regenerated yet: `{}/` predates the current measures (it has no per-item outcomes to state intervals from); run `cargo run -p experiments -- --exp {}`._\n",
            name(exp),
            name(exp)
        );
    } else {
        let _ = writeln!(
            md,
            "_Not measured yet: run `cargo run -p experiments -- --exp {}`._\n",
            name(exp)
        );
    }
}

fn figure(md: &mut String, src: &Sources, exp: Experiment, file: &str) {
    let dir = if src.views.is_empty() {
        name(exp).to_string()
    } else {
        format!("{}/{}", src.views, name(exp))
    };
    let _ = writeln!(md, "![{file}]({dir}/{file}.svg)\n");
}

/// A representation the report names: fixed ones are scored on all items, a best layer on the
/// test half after being chosen on the dev half.
struct Named {
    label: String,
    rep: Rep,
    half: Half,
}

fn fixed(label: &str, model: &str, representation: &str) -> Named {
    Named {
        label: label.into(),
        rep: Rep::new(model, representation, None),
        half: Half::All,
    }
}

fn chosen(
    ev: &Evidence,
    label: &str,
    model: &str,
    representation: &str,
    bench: &str,
) -> Option<Named> {
    let l = ev.best_layer(model, representation, bench)?;
    Some(Named {
        label: format!("{label} (layer {l}, chosen on dev)"),
        rep: Rep::new(model, representation, Some(l)),
        half: Half::Test,
    })
}

/// One line comparing two representations on a benchmark: on the test half if either was
/// chosen there, else on all items both answer.
fn comparison(ev: &Evidence, a: &Named, b: &Named, bench: &str) -> Option<String> {
    let half = if a.half == Half::Test || b.half == Half::Test {
        Half::Test
    } else {
        Half::All
    };
    let d = ev.difference(&a.rep, &b.rep, bench, half)?;
    let items = if half == Half::Test {
        "test-half items"
    } else {
        "items"
    };
    // Where one was trained at more seeds, both are read at the seeds they share.
    let seeds = if d.seeds_left_out {
        format!(" and the {} seeds both have", d.seeds.len())
    } else {
        String::new()
    };
    Some(format!(
        "{} {} vs {} {} on the same {} {items}{seeds}: difference {}, {}{}",
        a.label,
        fmt_iv(&d.a.interval),
        b.label,
        fmt_iv(&d.b.interval),
        d.a.items,
        fmt_iv(&d.diff),
        verdict(&d.diff, &a.label, &b.label),
        mcnemar(&d.mcnemar)
    ))
}

fn score_cell(ev: &Evidence, n: &Named, bench: &str) -> String {
    match ev.score(&n.rep, bench, n.half) {
        Some(e) => format!("{} (n {})", fmt_iv(&e.interval), e.items),
        None => "-".into(),
    }
}

/// The objective read on the embedding matrix: masked against causal LM with tied heads,
/// then with untied heads, and the causal LM tied against untied,
/// which says how much of the tied pair's difference the head makes.
fn objective_pairs(src: &Sources) -> Vec<(ModelId, ModelId)> {
    let clm = src.cast.clm;
    let mut pairs = vec![(ModelId::Mlm, clm)];
    let (m, c) = src.cast.untied;
    pairs.extend([(m, c), (clm, c)]);
    pairs
}

/// The weight-geometry answers of the qkv section as trained minus the same seed's
/// initialisation: CKA(W_Q, W_K) against W0's (the model's own `attention-initialisation`
/// rows), and the CKA of queries and keys from real tokens and of E W^h with E against the
/// untrained model of the same seed (its weights are the masked LM's W0; only the output bias,
/// which none of these reads, is set at the first step). Each is read raw and as its excess over
/// its permutation null, because the null itself moves with training (the matrices' spectra
/// change): a raw CKA that stays put while its null falls is alignment gained. Seeds present on
/// both sides only; a t interval over the paired seeds.
fn init_reference(src: &Sources) -> Vec<String> {
    let exp = Experiment::Qkv;
    let untrained = ModelId::Untrained.name();
    let cka_qk = |state: &'static str, metric: &'static str| {
        move |r: &TidyRow| r.representation == state && r.metric == metric
    };
    let activations = |metric: &'static str| {
        move |r: &TidyRow| r.representation == "attention-activations" && r.metric == metric
    };
    let through_head = |metric: &'static str| {
        move |r: &TidyRow| {
            r.representation.starts_with("embedding-")
                && r.layer == Some(1)
                && r.benchmark == "geometry"
                && r.metric == metric
        }
    };
    // (what, trained values, trained nulls, initial values, initial nulls), per seed.
    type Seeds = Vec<(u64, f64)>;
    let cases: [(&str, Seeds, Seeds, Seeds, Seeds); 3] = [
        (
            "linear CKA(W_Q, W_K), each layer and head",
            src.seed_means(exp, MLM, cka_qk("attention-trained", "cka_q_k")),
            src.seed_means(exp, MLM, cka_qk("attention-trained", "cka_q_k_null")),
            src.seed_means(exp, MLM, cka_qk("attention-initialisation", "cka_q_k")),
            src.seed_means(exp, MLM, cka_qk("attention-initialisation", "cka_q_k_null")),
        ),
        (
            "linear CKA of the queries and keys computed from real tokens, each layer",
            src.seed_means(exp, MLM, activations("cka_q_k")),
            src.seed_means(exp, MLM, activations("cka_q_k_null")),
            src.seed_means(exp, untrained, activations("cka_q_k")),
            src.seed_means(exp, untrained, activations("cka_q_k_null")),
        ),
        (
            "linear CKA(E W^h, E), the embedding through each layer-1 head (q, k and v)",
            src.seed_means(exp, MLM, through_head("cka_with_embedding")),
            src.seed_means(exp, MLM, through_head("cka_with_embedding_null")),
            src.seed_means(exp, untrained, through_head("cka_with_embedding")),
            src.seed_means(exp, untrained, through_head("cka_with_embedding_null")),
        ),
    ];
    let at = seed_value;
    let mut lines = Vec::new();
    for (what, t, tn, i, inull) in cases {
        // (trained, initial, trained excess, initial excess) of the seeds with all four.
        let seeds: Vec<(f64, f64, f64, f64)> = t
            .iter()
            .filter_map(|&(s, tv)| {
                let (tn, iv, inn) = (at(&tn, s)?, at(&i, s)?, at(&inull, s)?);
                Some((tv, iv, tv - tn, iv - inn))
            })
            .collect();
        if seeds.len() < 2 {
            continue;
        }
        let col = |f: fn(&(f64, f64, f64, f64)) -> f64| seeds.iter().map(f).collect::<Vec<_>>();
        let raw = seed_mean(&col(|x| x.0 - x.1));
        let excess = seed_mean(&col(|x| x.2 - x.3));
        lines.push(format!(
            "{what}, over {} seeds: raw, trained {} and at initialisation {}, trained - initial {}: {}; above its permutation null, trained {} and at initialisation {}, trained - initial {}: {}",
            seeds.len(),
            fmt_iv(&seed_mean(&col(|x| x.0))),
            fmt_iv(&seed_mean(&col(|x| x.1))),
            fmt_iv(&raw),
            verdict(&raw, "trained", "initial"),
            fmt_iv(&seed_mean(&col(|x| x.2))),
            fmt_iv(&seed_mean(&col(|x| x.3))),
            fmt_iv(&excess),
            verdict(&excess, "trained", "initial"),
        ));
    }
    // The second reference: the same trained E seen through the same seed's initial head (a
    // random projection of W^h's shape), so that what a trained head keeps of E is read against
    // what any projection of that shape keeps. Measured from scores version 4 on.
    let trained = src.seed_means(exp, MLM, through_head("cka_with_embedding"));
    let projected = src.seed_means(exp, MLM, through_head("cka_with_embedding_initial_head"));
    let paired: Vec<(f64, f64)> = trained
        .iter()
        .filter_map(|&(s, t)| Some((t, at(&projected, s)?)))
        .collect();
    if paired.len() >= 2 {
        let diff = seed_mean(&paired.iter().map(|p| p.0 - p.1).collect::<Vec<_>>());
        lines.push(format!(
            "linear CKA(E W^h, E) of the trained E through each trained layer-1 head {} against through the same seed's initial head (a random projection of the same shape) {}, over {} seeds: difference {}: {}",
            fmt_iv(&seed_mean(&paired.iter().map(|p| p.0).collect::<Vec<_>>())),
            fmt_iv(&seed_mean(&paired.iter().map(|p| p.1).collect::<Vec<_>>())),
            paired.len(),
            fmt_iv(&diff),
            verdict(&diff, "trained head", "random projection"),
        ));
    }
    let random = src.seed_means(
        exp,
        MLM,
        through_head("cka_with_embedding_random_projections"),
    );
    let paired: Vec<(f64, f64)> = trained
        .iter()
        .filter_map(|&(s, t)| Some((t, at(&random, s)?)))
        .collect();
    if paired.len() >= 2 {
        let diff = seed_mean(&paired.iter().map(|p| p.0 - p.1).collect::<Vec<_>>());
        lines.push(format!(
            "linear CKA(E W^h, E) of the trained E through each trained layer-1 head {} against through fresh Gaussian projections of the same shape (10 draws) {}, over {} seeds: difference {}: {}",
            fmt_iv(&seed_mean(&paired.iter().map(|p| p.0).collect::<Vec<_>>())),
            fmt_iv(&seed_mean(&paired.iter().map(|p| p.1).collect::<Vec<_>>())),
            paired.len(),
            fmt_iv(&diff),
            verdict(&diff, "trained head", "random projections"),
        ));
    }
    lines
}

fn embedding_of(m: ModelId) -> Named {
    fixed(
        &format!("{} embedding matrix", m.label()),
        m.name(),
        "embedding",
    )
}

/// The findings, as Markdown with figure paths relative to `results/`.
/// Do contextual vectors solve analogies?
fn analogy_section(w: &mut String, src: &Sources, ev: &Evidence) {
    let (clm, clm_label) = (src.cast.clm.name(), src.cast.clm.label());
    let _ = writeln!(w, "### Do contextual vectors solve analogies?\n");
    match src.get(Experiment::Analogy) {
        Some(t) => {
            let chance = t.get(
                ModelId::Sgns.name(),
                "static",
                None,
                ANALOGY_TOTAL,
                "3CosAdd_chance",
            );
            let _ = writeln!(w, "Google analogies, 3CosAdd accuracy over all sections. Chance (a table with no structure answers uniformly among the candidate words) is {}.\n", chance.map_or("-".into(), |c| format!("{:.5}", c.mean)));
            let mut reps = vec![
                fixed("word2vec SGNS", ModelId::Sgns.name(), "static"),
                fixed("word2vec CBOW", ModelId::Cbow.name(), "static"),
            ];
            for (m, label) in [(MLM, "MLM"), (clm, clm_label)] {
                reps.push(fixed(&format!("{label} embedding matrix"), m, "embedding"));
                for r in ["decontextualized", "aggregated"] {
                    reps.extend(chosen(ev, &format!("{label} best {r}"), m, r, ANALOGY));
                }
            }
            reps.extend(src.cast.untied_models().into_iter().map(embedding_of));
            // An untied model's output matrix is a table of its own (a tied head's embedding
            // is both), read beside its input embedding.
            let output_of =
                |m: ModelId| fixed(&format!("{} output matrix", m.label()), m.name(), "lm_head");
            reps.extend(src.cast.untied_models().into_iter().map(output_of));
            // Linzen's (2016) baselines on the same questions and rows: b's nearest neighbour
            // (only-b), and b + c's (ignore-a). A score no higher than its baseline is
            // neighbourhood, not an offset.
            let kinds = [BASELINE_ONLY_B, BASELINE_IGNORE_A];
            let _ = writeln!(
                w,
                "| representation | 3CosAdd accuracy [95% interval] (questions) | only-b | ignore-a |"
            );
            let _ = writeln!(w, "|---|---|---|---|");
            for n in &reps {
                let _ = writeln!(
                    w,
                    "| {} | {} | {} | {} |",
                    n.label,
                    score_cell(ev, n, ANALOGY),
                    score_cell(ev, &baseline_of(n, kinds[0]), ANALOGY),
                    score_cell(ev, &baseline_of(n, kinds[1]), ANALOGY)
                );
            }
            let _ = writeln!(w);
            let against: Vec<String> = reps
                .iter()
                .flat_map(|n| kinds.map(|k| (n, baseline_of(n, k))))
                .filter_map(|(n, b)| comparison(ev, n, &b, ANALOGY))
                .collect();
            if against.is_empty() {
                let _ = writeln!(w, "Linzen's (2016) baselines (for a is to b as c is to ?, only-b: the nearest neighbour of c, Linzen's b; ignore-a: of b + c) are not kept for these models: they are measured from the ten-seed round on (scores version 4).\n");
            } else {
                let _ = writeln!(w, "Each score against Linzen's (2016) baselines on the same questions (for a is to b as c is to ?, only-b: the nearest neighbour of c, Linzen's b; ignore-a: of b + c):\n");
                for line in against {
                    let _ = writeln!(w, "- {line}");
                }
                let _ = writeln!(w);
            }
            let mut models = vec![(MLM, "MLM"), (clm, clm_label)];
            models.extend(
                src.cast
                    .untied_models()
                    .into_iter()
                    .map(|m| (m.name(), m.label())),
            );
            layers_against_baselines(w, ev, &models);
            // word2vec against the best transformer representation (by dev-half mean).
            let best = reps[2..]
                .iter()
                .filter_map(|n| {
                    ev.score(&n.rep, ANALOGY, Half::Dev)
                        .map(|e| (n, e.interval.estimate))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(n, _)| n);
            if let Some(b) = best {
                let b = Named {
                    label: b.label.clone(),
                    rep: b.rep.clone(),
                    half: Half::Test,
                };
                if let Some(line) = comparison(ev, &reps[0], &b, ANALOGY) {
                    let _ = writeln!(
                        w,
                        "- word2vec against the transformer representation best on dev: {line}"
                    );
                }
            }
            if let (Some(e), Some(a)) = (
                reps.iter().find(|n| n.label == "MLM embedding matrix"),
                reps.iter()
                    .find(|n| n.label.starts_with("MLM best aggregated")),
            ) {
                if let Some(line) = comparison(ev, a, e, ANALOGY) {
                    let _ = writeln!(w, "- {line}");
                }
            }
            for (x, y) in objective_pairs(src) {
                let (x, y) = (embedding_of(x), embedding_of(y));
                if let Some(line) = comparison(ev, &x, &y, ANALOGY) {
                    let _ = writeln!(w, "- {line}");
                }
            }
            for m in src.cast.untied_models() {
                if let Some(line) = comparison(ev, &output_of(m), &embedding_of(m), ANALOGY) {
                    let _ = writeln!(w, "- {line}");
                }
            }
            let _ = writeln!(w);
            figure(w, src, Experiment::Analogy, "analogy-3cosadd");
        }
        None => missing(w, src, Experiment::Analogy),
    }
}

/// Every aggregated layer of `models` (name, label) against Linzen's baselines on all
/// questions: no layer is chosen, so none needs a dev half, and a reader who fixed a layer in
/// advance (the last, say) finds its answer here. Each row's intervals are its own (the five
/// layers of a model are not corrected for being read together). Layers measured before the
/// baselines were kept get no row, and no table where none has them.
fn layers_against_baselines(w: &mut String, ev: &Evidence, models: &[(&str, &str)]) {
    let mut rows = Vec::new();
    for (model, label) in models {
        for l in ev.layers(model, "aggregated", ANALOGY) {
            let n = Named {
                label: format!("{label} aggregated layer {l}"),
                rep: Rep::new(model, "aggregated", Some(l)),
                half: Half::All,
            };
            let minus = |kind| {
                ev.difference(&n.rep, &baseline_of(&n, kind).rep, ANALOGY, Half::All)
                    .map(|d| difference_cell(&d))
            };
            let (only_b, ignore_a) = (minus(BASELINE_ONLY_B), minus(BASELINE_IGNORE_A));
            // A layer whose baselines were not kept (measured before them) has nothing to add
            // to the analogy table above.
            if only_b.is_none() && ignore_a.is_none() {
                continue;
            }
            let cell = |x: Option<String>| x.unwrap_or_else(|| "-".into());
            rows.push(format!(
                "| {label} | {l} | {} | {} | {} |",
                score_cell(ev, &n, ANALOGY),
                cell(only_b),
                cell(ignore_a)
            ));
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(w, "Every aggregated layer against Linzen's baselines on all questions (no layer chosen, so a layer fixed in advance reads its row; each row's 95% intervals are its own, not corrected for the layers read beside it). Each difference says whether its interval excludes 0: above or below the baseline, or not shown where it includes 0:\n");
    let _ = writeln!(
        w,
        "| model | layer | 3CosAdd accuracy [95% interval] (questions) | minus only-b | minus ignore-a |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|");
    for r in rows {
        let _ = writeln!(w, "{r}");
    }
    let _ = writeln!(w);
}

/// A difference in a table cell: its interval, whether the interval excludes 0, and, where one
/// side has seeds the other lacks, that it is read on the seeds both have (the score beside it
/// reads every seed of its own).
fn difference_cell(d: &Difference) -> String {
    let iv = &d.diff;
    let side = match interval_side(iv) {
        None => "no interval",
        Some(Ordering::Greater) => "above",
        Some(Ordering::Less) => "below",
        Some(Ordering::Equal) => "not shown",
    };
    let seeds = match (d.seeds_left_out, d.seeds.len()) {
        (false, _) => String::new(),
        (true, 1) => ", on the one seed both have".into(),
        (true, n) => format!(", on the {n} seeds both have"),
    };
    format!("{} {side}{seeds}", fmt_iv(iv))
}

/// `n`'s outcomes under one of Linzen's (2016) analogy baselines (`kind`), on the same rows and
/// questions.
fn baseline_of(n: &Named, kind: &str) -> Named {
    Named {
        label: format!("{} {kind}", n.label),
        rep: Rep::new(
            &n.rep.model,
            &baseline_rep(&n.rep.representation, kind),
            n.rep.layer,
        ),
        half: n.half,
    }
}

/// Word similarity.
fn similarity_section(w: &mut String, src: &Sources, ev: &Evidence) {
    let (clm, clm_label) = (src.cast.clm.name(), src.cast.clm.label());
    let _ = writeln!(w, "### Word similarity\n");
    match src.get(Experiment::Similarity) {
        Some(t) => {
            let _ = writeln!(w, "Spearman rho with human judgements, each beside the 95% chance band of the pairs used (the same cosines permuted against the human scores). Sets marked * have under 150 pairs used: their chance band is about ±0.2 to ±0.5 wide, so they carry no conclusion alone. The best aggregated layer is chosen per set on dev pairs and scored on test pairs (hence fewer pairs).\n");
            let _ = writeln!(w, "| set | chance band | word2vec SGNS | MLM embedding | MLM best aggregated layer | {clm_label} embedding |");
            let _ = writeln!(w, "|---|---|---|---|---|---|");
            let mut sets: Vec<&Summary> =
                t.0.iter()
                    .filter(|s| s.model == ModelId::Sgns.name() && s.metric == "spearman")
                    .collect();
            sets.sort_by(|a, b| a.benchmark.cmp(&b.benchmark));
            for s in sets {
                let b = &s.benchmark;
                let star = if is_small_set(s.n) { "*" } else { "" };
                let sgns = fixed("SGNS", ModelId::Sgns.name(), "static");
                let band = ev
                    .chance_band(&sgns.rep, b, Half::All)
                    .map_or("-".into(), |c| format!("[{:.3}, {:.3}]", c.lo, c.hi));
                let agg = chosen(ev, "", MLM, "aggregated", b);
                let _ = writeln!(
                    w,
                    "| {}{star} | {band} | {} | {} | {} | {} |",
                    b.trim_start_matches("EN-"),
                    score_cell(ev, &sgns, b),
                    score_cell(ev, &fixed("", MLM, "embedding"), b),
                    agg.as_ref().map_or("-".into(), |a| format!(
                        "{} (layer {})",
                        score_cell(ev, a, b),
                        a.rep.layer.unwrap_or(0)
                    )),
                    score_cell(ev, &fixed("", clm, "embedding"), b),
                );
            }
            let _ = writeln!(w);
            for b in ["WS-353-ALL", "SIMLEX-999", "MEN-TR-3k"] {
                let sgns = fixed("word2vec SGNS", ModelId::Sgns.name(), "static");
                let emb = fixed("MLM embedding matrix", MLM, "embedding");
                if let Some(line) = comparison(ev, &sgns, &emb, b) {
                    let _ = writeln!(w, "- {b}: {line}");
                }
                if let Some(agg) = chosen(ev, "MLM best aggregated", MLM, "aggregated", b) {
                    for (x, y) in [(&sgns, &agg), (&agg, &emb)] {
                        if let Some(line) = comparison(ev, x, y, b) {
                            let _ = writeln!(w, "- {b}: {line}");
                        }
                    }
                }
                for (x, y) in objective_pairs(src) {
                    let (x, y) = (embedding_of(x), embedding_of(y));
                    if let Some(line) = comparison(ev, &x, &y, b) {
                        let _ = writeln!(w, "- {b}: {line}");
                    }
                }
            }
            head_confound(w, src, ev);
            let _ = writeln!(w);
            figure(w, src, Experiment::Similarity, "similarity-spearman");
        }
        None => missing(w, src, Experiment::Similarity),
    }
}

/// The head confound: with a tied head the embedding is also the output softmax matrix, so
/// "the embedding learns word similarity" is asked of the untied models' input embedding too,
/// beside their output matrix, the tied masked LM's embedding and word2vec.
fn head_confound(w: &mut String, src: &Sources, ev: &Evidence) {
    let (mlm_untied, _) = src.cast.untied;
    let mut lines = Vec::new();
    for b in ["WS-353-ALL", "SIMLEX-999", "MEN-TR-3k"] {
        let untied = src.cast.untied_models().into_iter();
        for m in untied.chain(src.cast.no_attention_untied) {
            let input = fixed(
                &format!("{} input embedding", m.label()),
                m.name(),
                "embedding",
            );
            let output = fixed(&format!("{} output matrix", m.label()), m.name(), "lm_head");
            lines.extend(comparison(ev, &output, &input, b).map(|l| format!("{b}: {l}")));
        }
        let input = fixed(
            &format!("{} input embedding", mlm_untied.label()),
            mlm_untied.name(),
            "embedding",
        );
        let output = fixed(
            &format!("{} output matrix", mlm_untied.label()),
            mlm_untied.name(),
            "lm_head",
        );
        let tied = fixed("MLM (tied head) embedding matrix", MLM, "embedding");
        let sgns = fixed("word2vec SGNS", ModelId::Sgns.name(), "static");
        for (x, y) in [(&tied, &input), (&tied, &output), (&sgns, &input)] {
            lines.extend(comparison(ev, x, y, b).map(|l| format!("{b}: {l}")));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(w, "\nThe head: with a tied head the embedding matrix is also the output matrix the softmax scores every prediction against; with an untied head they are two tables. Each untied model's output matrix against its input embedding, and the untied masked LM's two tables against the tied masked LM's embedding, its input embedding against word2vec:\n");
        for l in lines {
            let _ = writeln!(w, "- {l}");
        }
    }
}

/// Are W_Q, W_K, W_V the embedding, and must they differ?
fn qkv_section(w: &mut String, src: &Sources, ev: &Evidence) {
    let _ = writeln!(
        w,
        "### Are W_Q, W_K, W_V the embedding, and must they differ?\n"
    );
    match src.get(Experiment::Qkv) {
        Some(t) => {
            if let Some(h) = t.get(MLM, "training", None, "training", "unigram_entropy") {
                let _ = writeln!(w, "The corpus's unigram entropy, the loss of a model that sees neither the context nor its own input, is {:.3} nats; every model trained {} steps.", h.mean, h.n);
            }
            if let Some(l) = t.get(MLM, "training", None, "training", "context_free_loss") {
                let _ = writeln!(w, "A masked LM can beat it without context: a chosen position not replaced by [MASK] shows its own token (kept 10%, random 10%), and copying it leaves {:.3} nats, the chance level of this loss on the same held-out targets (`Sequences::context_free_heldout_loss`; `transformer::data::context_free_loss` derives it). A loss below that level is the first sign a model uses context; a loss above it does not show the opposite, since a model can use context at [MASK] and copy its visible input badly. Where the final weights were at hand, the gain over the unigram at [MASK] targets separates the two (`analysis::context_gain`).", l.mean);
            }
            let _ = writeln!(
                w,
                "\nHeld-out masked-token loss over {} (lower is better):\n",
                if src.dev_split {
                    "the test half of the held-out split"
                } else {
                    "the whole held-out split"
                }
            );
            // Each model's held-out loss by seed. A difference is read on the seeds both models
            // have (the shared variants train at fewer seeds than the masked LM), seed s against
            // seed s: the two runs of a seed read the same batches and masks.
            let loss = |m: ModelId| {
                src.seed_means(Experiment::Qkv, m.name(), |r: &TidyRow| {
                    r.representation == "training"
                        && r.layer.is_none()
                        && r.benchmark == "training"
                        && r.metric == "heldout_loss"
                })
            };
            let values = |x: &[(u64, f64)]| x.iter().map(|p| p.1).collect::<Vec<_>>();
            let separate = loss(ModelId::Mlm);
            let _ = writeln!(
                w,
                "- separate W_Q, W_K, W_V (MLM): {}",
                fmt_iv(&seed_mean(&values(&separate)))
            );
            for v in [ModelId::SharedQk, ModelId::SharedQkv] {
                let l = loss(v);
                if let Some((d, n)) = paired_seed_difference(&l, &separate) {
                    let _ = writeln!(
                        w,
                        "- {}: {}; {} - separate = {} (paired by seed, on the {n} seeds both have): {}",
                        v.label(),
                        fmt_iv(&seed_mean(&values(&l))),
                        v.label(),
                        fmt_iv(&d),
                        verdict(&d, &format!("{} (worse)", v.label()), "separate (worse)")
                    );
                }
            }
            // Sharing V on top of Q and K: the one contrast that isolates V.
            if let Some((d, n)) =
                paired_seed_difference(&loss(ModelId::SharedQkv), &loss(ModelId::SharedQk))
            {
                let (a, b) = (ModelId::SharedQkv.label(), ModelId::SharedQk.label());
                let _ = writeln!(
                    w,
                    "- {a} - {b} (sharing V as well as Q and K) = {} (paired by seed, on the {n} seeds both have): {}",
                    fmt_iv(&d),
                    verdict(&d, &format!("{a} (worse)"), &format!("{b} (worse)"))
                );
            }
            let qkv = [ModelId::Mlm, ModelId::SharedQk, ModelId::SharedQkv];
            if let Some(gains) = gain_list(src, Experiment::Qkv, &qkv) {
                let _ = writeln!(w, "- {MASK_GAIN}, per seed: {gains}");
            }
            for v in [ModelId::SharedQk, ModelId::SharedQkv] {
                let a = fixed(&format!("{} embedding", v.label()), v.name(), "embedding");
                let b = fixed("separate-Q/K/V MLM embedding", MLM, "embedding");
                if let Some(line) = comparison(ev, &a, &b, "WS-353-ALL") {
                    let _ = writeln!(w, "- WS-353: {line}");
                }
            }
            // What training changed, W - W0, per seed (mean over layers and heads), beside its
            // permutation null; the trained matrices, the queries and keys, and E through each
            // head are read against the same seed's initialisation below.
            let per_seed = |metric: &'static str| {
                src.seed_means(Experiment::Qkv, MLM, move |r: &TidyRow| {
                    r.representation == "attention-updates" && r.metric == metric
                })
            };
            let (c, n, cos) = (
                per_seed("cka_q_k"),
                per_seed("cka_q_k_null"),
                per_seed("cos_q_k"),
            );
            // The seeds with all three, matched by seed.
            let at = seed_value;
            let seeds: Vec<(f64, f64, f64)> = c
                .iter()
                .filter_map(|&(s, cka)| Some((cka, at(&n, s)?, at(&cos, s)?)))
                .collect();
            if seeds.len() >= 2 {
                let col = |f: fn(&(f64, f64, f64)) -> f64| seeds.iter().map(f).collect::<Vec<_>>();
                let _ = writeln!(w, "- MLM with separate W_Q, W_K, W_V, what training changed (W - W0, mean over layers and heads, t interval over {} seeds): linear CKA(W_Q - W_Q0, W_K - W_K0) {}, its permutation null {}, CKA above the null {}; cosine {} (the updates have no initialisation of their own to be read against: the null is their only reference)", seeds.len(), fmt_iv(&seed_mean(&col(|x| x.0))), fmt_iv(&seed_mean(&col(|x| x.1))), fmt_iv(&seed_mean(&col(|x| x.0 - x.1))), fmt_iv(&seed_mean(&col(|x| x.2))));
            }
            // The reference a reviewer asks for: the same model at its initialisation (the
            // untrained model of a seed is exactly that seed's W0), trained minus initial per
            // seed, with a t interval over seeds.
            let lines = init_reference(src);
            if !lines.is_empty() {
                let _ = writeln!(w, "\nAgainst the model's own initialisation (the untrained model of each seed is that seed's masked LM before its first step, W0), trained minus initial per seed, mean over layers and heads, with a t interval over seeds; raw, and above each state's own permutation null, which moves with training:\n");
                for line in lines {
                    let _ = writeln!(w, "- {line}");
                }
            }
            let _ = writeln!(w);
            figure(w, src, Experiment::Qkv, "qkv-loss");
            figure(w, src, Experiment::Qkv, "qkv-attention-cos");
        }
        None => missing(w, src, Experiment::Qkv),
    }
}

/// Would frozen random embeddings do?
fn frozen_section(w: &mut String, src: &Sources, ev: &Evidence) {
    let _ = writeln!(w, "### Would frozen random embeddings do?\n");
    match src.get(Experiment::Frozen) {
        Some(table) => {
            // The frozen ablation and the trained model with the same head ([roles]).
            let (f, trained) = (src.cast.frozen.name(), src.cast.frozen_reference.name());
            let _ = writeln!(
                w,
                "{} against {}.\n",
                src.cast.frozen.label(),
                src.cast.frozen_reference.label()
            );
            // One value per seed of model `m`: `metric` of `benchmark` read on `representation`.
            let values = |m: &str, representation: &str, benchmark: &str, metric: &str| {
                src.values(
                    Experiment::Frozen,
                    &Rep::new(m, representation, None),
                    benchmark,
                    metric,
                )
            };
            // The scale the frozen table was drawn at, beside the trained embedding's: position
            // embeddings train in both, so a frozen table far smaller than a trained one would
            // let position swamp the token.
            let scale = |m: &str| values(m, "embedding", "embedding-scale", "std");
            let (sf, st) = (scale(f), scale(trained));
            if sf.len() >= 2 && st.len() >= 2 {
                let _ = writeln!(
                    w,
                    "- input embedding's per-coordinate standard deviation over the words: frozen {} (its random table), trained {}",
                    fmt_iv(&seed_mean(&sf)),
                    fmt_iv(&seed_mean(&st))
                );
            }
            let loss = |m: &str| values(m, "training", "training", "heldout_loss");
            let (a, b) = (loss(f), loss(trained));
            let level = table.get(f, "training", None, "training", "context_free_loss");
            if let (Some(level), false, false) = (level, a.is_empty(), b.is_empty()) {
                // Per seed: a model can sit on a context-free plateau in one seed and leave it
                // in another, which a mean over seeds hides; with 3 seeds an arm, the counts of
                // seeds that end below the level are compared by Fisher's exact test.
                let per_seed = |m: &str, losses: &[f64]| {
                    let steps = values(m, "training", "training", "steps_to_context_free_level");
                    let seeds: Vec<String> = (losses.iter().enumerate())
                        .map(|(i, x)| {
                            let when = match steps.get(i) {
                                Some(s) if *x < level.mean => format!(" (below from step {s})"),
                                _ if *x < level.mean => String::new(),
                                _ => " (above at the end)".into(),
                            };
                            format!("{:+.3}{when}", x - level.mean)
                        })
                        .collect();
                    let below = losses.iter().filter(|x| **x < level.mean).count() as u64;
                    (seeds.join(", "), below)
                };
                let (fa, fa_below) = per_seed(f, &a);
                let (tb, tb_below) = per_seed(trained, &b);
                let p = analysis::inference::fisher_exact(
                    fa_below,
                    a.len() as u64,
                    tb_below,
                    b.len() as u64,
                );
                let _ = writeln!(
                    w,
                    "- held-out loss minus the context-free level ({:.3} nats: a model that copies its visible input and ignores context), per seed: frozen {fa}; trained {tb}. Seeds ending below it, the first sign of predicting from context: frozen {fa_below} of {}, trained {tb_below} of {}; Fisher's exact p = {}",
                    level.mean,
                    a.len(),
                    b.len(),
                    fmt_p(p)
                );
            }
            if let (Some((fg, fa, fn_)), Some((tg, tb, tn))) = (
                mask_gains(src, Experiment::Frozen, f),
                mask_gains(src, Experiment::Frozen, trained),
            ) {
                let p = analysis::inference::fisher_exact(fa, fn_, tb, tn);
                let _ = writeln!(
                    w,
                    "- {MASK_GAIN}, per seed: frozen {fg}; trained {tg}. Seeds whose interval lies above 0: frozen {fa} of {fn_}, trained {tb} of {tn}; Fisher's exact p = {}",
                    fmt_p(p)
                );
            }
            let gain = |m: &str| values(m, "training", "training", "context_gain_at_mask");
            // The same with seeds, for differences paired by seed: seed s of every variant
            // reads the same batches and masks.
            let seeded = |m: &str, metric: &str| {
                src.seed_values(
                    Experiment::Frozen,
                    &Rep::new(m, "training", None),
                    "training",
                    metric,
                )
            };
            let (ga, gb) = (gain(f), gain(trained));
            let paired_gain = |m: &str| {
                paired_seed_difference(
                    &seeded(f, "context_gain_at_mask"),
                    &seeded(m, "context_gain_at_mask"),
                )
            };
            if let (true, true, Some((d, n))) = (ga.len() >= 2, gb.len() >= 2, paired_gain(trained))
            {
                let _ = writeln!(
                    w,
                    "- gain at [MASK], seed means (nats per target): frozen {} vs trained {}; frozen - trained = {} (paired by seed, {n} seeds): {}",
                    fmt_iv(&seed_mean(&ga)),
                    fmt_iv(&seed_mean(&gb)),
                    fmt_iv(&d),
                    verdict(&d, "frozen", "trained")
                );
            }
            // How much a model gets from context when its attention is a uniform average (the
            // untied control, where the comparison reads it): a frozen table that learns less
            // than that uses context little, whatever its gain's interval says about 0.
            if let Some(control) = src.cast.no_attention_untied {
                let gc = gain(control.name());
                if let Some((per_seed, above, n)) =
                    mask_gains(src, Experiment::Frozen, control.name())
                {
                    let _ = writeln!(
                        w,
                        "- {MASK_GAIN}, {} (the same recipe, attention a uniform average), per seed: {per_seed} ({above} of {n} above 0)",
                        control.label()
                    );
                }
                if let (true, Some((d, n))) = (gc.len() >= 2, paired_gain(control.name())) {
                    let _ = writeln!(
                        w,
                        "- gain at [MASK], seed means (nats per target): {} {}; frozen - {} = {} (paired by seed, {n} seeds): {}",
                        control.label(),
                        fmt_iv(&seed_mean(&gc)),
                        control.label(),
                        fmt_iv(&d),
                        verdict(&d, "frozen", control.label())
                    );
                }
            }
            let paired_loss = paired_seed_difference(
                &seeded(f, "heldout_loss"),
                &seeded(trained, "heldout_loss"),
            );
            if let (true, true, Some((d, n))) = (a.len() >= 2, b.len() >= 2, paired_loss) {
                let _ = writeln!(
                    w,
                    "- held-out loss: frozen {} vs trained {}; frozen - trained = {} (paired by seed, {n} seeds): {}",
                    fmt_iv(&seed_mean(&a)),
                    fmt_iv(&seed_mean(&b)),
                    fmt_iv(&d),
                    verdict(&d, "frozen (worse)", "trained (worse)")
                );
            }
            // Both heads are untied: the input embedding and the output matrix are two tables,
            // each read on its own (the frozen model's input embedding is its random table).
            for (m, label) in [(trained, "trained"), (f, "frozen")] {
                let input = fixed(&format!("{label}, input embedding"), m, "embedding");
                let output = fixed(&format!("{label}, output matrix"), m, "lm_head");
                if let Some(line) = comparison(ev, &output, &input, "WS-353-ALL") {
                    let _ = writeln!(w, "- WS-353: {line}");
                }
            }
            for (bench, label) in [("WS-353-ALL", "WS-353"), (ANALOGY, "analogy 3CosAdd")] {
                if let (Some(x), Some(y)) = (
                    chosen(ev, "trained, best aggregated", trained, "aggregated", bench),
                    chosen(ev, "frozen, best aggregated", f, "aggregated", bench),
                ) {
                    if let Some(line) = comparison(ev, &x, &y, bench) {
                        let _ = writeln!(w, "- {label}: {line}");
                    }
                    // An analogy score is read against Linzen's baselines: how much of it the
                    // neighbourhood of b (or of b + c) alone would give.
                    if bench == ANALOGY {
                        for n in [&x, &y] {
                            for kind in [BASELINE_ONLY_B, BASELINE_IGNORE_A] {
                                if let Some(line) = comparison(ev, n, &baseline_of(n, kind), bench)
                                {
                                    let _ = writeln!(
                                        w,
                                        "- {label} against Linzen's {kind} baseline: {line}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
            let _ = writeln!(w);
            figure(w, src, Experiment::Frozen, "frozen-loss");
            figure(w, src, Experiment::Frozen, "frozen-layers-ws353");
        }
        None => missing(w, src, Experiment::Frozen),
    }
}

/// Does the objective make collocated words similar?
fn objective_section(w: &mut String, src: &Sources) {
    let _ = writeln!(w, "### Does the objective make collocated words similar?\n");
    match src.get(Experiment::Objective) {
        Some(t) => {
            let excluded = t
                .get(MLM, "embedding", None, "collocation", "excluded_pairs")
                .map_or(0.0, |s| s.mean);
            let _ = writeln!(w, "z-score of the mean cosine of high-PMI co-occurring word pairs against frequency-matched pairs that never co-occur (a permutation null: 0 means co-occurrence does not make vectors similar, and ±2 is its 95% band); {excluded:.0} pairs that occur in one fixed order at near-ceiling PMI (words split by the preprocessing, names) are left out. The untrained model is the control.\n");
            let z = |m: ModelId, r: &str| {
                src.seed_values(
                    Experiment::Objective,
                    &Rep::new(m.name(), r, None),
                    "collocation",
                    "z_collocated",
                )
            };
            let control = src.cast.no_attention;
            let shown = [ModelId::Sgns, ModelId::Mlm, src.cast.clm];
            let shown = shown.into_iter().chain(src.cast.untied_models());
            for m in shown.chain(src.cast.controls()).chain([ModelId::Untrained]) {
                let r = if m.is_word2vec() {
                    "static"
                } else {
                    "embedding"
                };
                let v: Vec<f64> = z(m, r).iter().map(|p| p.1).collect();
                if !v.is_empty() {
                    let where_ = if m.is_word2vec() {
                        "vectors"
                    } else {
                        "embedding matrix"
                    };
                    let _ = writeln!(w, "- {} {where_}: z {}", m.label(), fmt_iv(&seed_mean(&v)));
                }
            }
            // The z-score grows with the number of pairs (about sqrt of it at the ceiling), so a
            // difference of z-scores says whether, not how much: the effect size is the gap
            // itself, the mean cosine of collocated pairs minus that of their matched pairs.
            let gap_of = |m: ModelId, r: &str| -> Vec<(u64, f64)> {
                let rep = Rep::new(m.name(), r, None);
                let of =
                    |metric| src.seed_values(Experiment::Objective, &rep, "collocation", metric);
                let k = of("matched_cosine");
                (of("collocated_cosine").iter())
                    .filter_map(|&(s, c)| Some((s, c - seed_value(&k, s)?)))
                    .collect()
            };
            // With the pairs' cosines kept (scores version 5 on) for every seed measured, the
            // interval carries the pairs and the seeds; where some seeds lack them, the seeds
            // alone (said beside it), so that the gap rests on every seed either way.
            let kept = |x: &Rep, y: Option<&Rep>, seeds: usize| {
                let ev = src.evidence.as_ref()?;
                let with_pairs = ev.collocation_seeds(x, y).len();
                (with_pairs >= seeds).then(|| ev.collocation_gap(x, y))?
            };
            let gap_iv = |m: ModelId, r: &str| -> Option<String> {
                let rep = Rep::new(m.name(), r, None);
                let g: Vec<f64> = gap_of(m, r).iter().map(|p| p.1).collect();
                if let Some(e) = kept(&rep, None, g.len()) {
                    return Some(fmt_iv(&e.interval));
                }
                (g.len() >= 2).then(|| format!("{} (seeds only)", fmt_iv(&seed_mean(&g))))
            };
            let gap_difference = |x: ModelId, y: ModelId| -> Option<(Interval, String)> {
                let (rx, ry) = (
                    Rep::new(x.name(), "embedding", None),
                    Rep::new(y.name(), "embedding", None),
                );
                let (ga, gb) = (gap_of(x, "embedding"), gap_of(y, "embedding"));
                // The seeds both were measured at, as the difference with pairs reads them.
                let shared = {
                    let seeds = |m: ModelId| {
                        src.seed_means(Experiment::Objective, m.name(), |r: &TidyRow| {
                            r.representation == "embedding" && r.metric == "collocated_cosine"
                        })
                    };
                    let sy = seeds(y);
                    seeds(x)
                        .iter()
                        .filter(|(s, _)| sy.iter().any(|(t, _)| t == s))
                        .count()
                };
                if let Some(e) = kept(&rx, Some(&ry), shared) {
                    let left_out = shared < ga.len().max(gb.len());
                    let carries = if left_out {
                        format!("pairs and the {shared} seeds both have")
                    } else {
                        "pairs and seeds".into()
                    };
                    return Some((e.interval, carries));
                }
                // Without the pairs' cosines: the seeds' gaps, seed s against seed s.
                let (d, n) = paired_seed_difference(&ga, &gb)?;
                Some((d, format!("seeds only, paired by seed, {n} seeds")))
            };
            // Every model's vectors, and an untied model's output matrix beside its input
            // embedding: a tied head's embedding is both, an untied one's is not.
            let mut read: Vec<(ModelId, &str, String)> =
                vec![(ModelId::Sgns, "static", ModelId::Sgns.label().to_string())];
            for m in [ModelId::Mlm, src.cast.clm]
                .into_iter()
                .chain(src.cast.untied_models())
                .chain(src.cast.controls())
                .chain([ModelId::Untrained])
            {
                read.push((m, "embedding", m.label().to_string()));
                if src.cast.untied_models().contains(&m) || src.cast.no_attention_untied == Some(m)
                {
                    read.push((m, "lm_head", format!("{} output matrix", m.label())));
                }
            }
            let gaps: Vec<String> = read
                .iter()
                .filter_map(|(m, r, label)| Some(format!("{label} {}", gap_iv(*m, r)?)))
                .collect();
            if !gaps.is_empty() {
                let how = if src
                    .evidence
                    .as_ref()
                    .is_some_and(|e| e.has_collocation_words())
                {
                    "both groups resampled through the pairs' words, as similarity pairs are: a frequent word stands in many collocated pairs"
                } else {
                    "both groups resampled; the corpus, which names the pairs' words, could not be read, so pairs that share a word are drawn as if independent and the interval is if anything narrow"
                };
                let _ = writeln!(w, "- effect size: mean cosine of the collocated pairs minus that of their frequency-matched pairs, of each model's embedding matrix (word2vec: its vectors) unless named, the interval carrying the pairs ({how}) and the seeds; \"seeds only\" where the pairs' cosines were not kept (a t interval over seeds): {}", gaps.join("; "));
            }
            // Whether each model predicts from context at all: a seed above its objective's
            // context-free level learnt no more than a model that ignores context, and its
            // vectors enter the comparisons below anyway (dropping it would bias them).
            let mut levels = Vec::new();
            let transformers: Vec<ModelId> = [ModelId::Mlm, src.cast.clm]
                .into_iter()
                .chain(src.cast.untied_models())
                .chain([control])
                .collect();
            for &m in &transformers {
                let rep = Rep::new(m.name(), "training", None);
                let loss = src.values(Experiment::Objective, &rep, "training", "heldout_loss");
                let level =
                    src.values(Experiment::Objective, &rep, "training", "context_free_loss");
                if let (false, Some(level)) = (loss.is_empty(), level.first()) {
                    let d: Vec<String> =
                        loss.iter().map(|x| format!("{:+.3}", x - level)).collect();
                    levels.push(format!("{} {} (level {level:.3})", m.label(), d.join(", ")));
                }
            }
            if !levels.is_empty() {
                let _ = writeln!(w, "- held-out loss minus the objective's context-free level, per seed (below 0: predicts better than any model that ignores context; the losses of the two objectives are not comparable with each other): {}", levels.join("; "));
            }
            // Only masked LMs have it (a causal LM sees no [MASK]).
            if let Some(gains) = gain_list(src, Experiment::Objective, &transformers) {
                let _ = writeln!(w, "- masked LMs, {MASK_GAIN}, per seed: {gains}");
            }
            // The objective (MLM against the causal LM), then self-attention (MLM against the
            // same model with attention replaced by a uniform average).
            let mut pairs = objective_pairs(src);
            pairs.push((ModelId::Mlm, control));
            if let Some(u) = src.cast.no_attention_untied {
                pairs.push((src.cast.untied.0, u));
            }
            for (x, y) in pairs {
                if let Some((d, n)) = paired_seed_difference(&z(x, "embedding"), &z(y, "embedding"))
                {
                    let _ = writeln!(
                        w,
                        "- embedding matrix, {} - {}: {} (paired by seed, {n} seeds): {}",
                        x.label(),
                        y.label(),
                        fmt_iv(&d),
                        verdict(&d, x.label(), y.label())
                    );
                }
                if let Some((d, carries)) = gap_difference(x, y) {
                    let _ = writeln!(
                        w,
                        "- effect size, embedding matrix, {} - {}: cosine gap {} ({carries}): {}",
                        x.label(),
                        y.label(),
                        fmt_iv(&d),
                        verdict(&d, x.label(), y.label())
                    );
                }
            }
            let _ = writeln!(w);
            figure(
                w,
                src,
                Experiment::Objective,
                "objective-collocation-embedding",
            );
            figure(
                w,
                src,
                Experiment::Objective,
                "objective-collocation-layers",
            );
        }
        None => missing(w, src, Experiment::Objective),
    }
}

/// How contextual is each layer?
fn contextuality_section(w: &mut String, src: &Sources) {
    let _ = writeln!(w, "### How contextual is each layer?\n");
    match src.get(Experiment::Contextuality) {
        Some(t) => {
            let _ = writeln!(w, "Ethayarajh's measures on the MLM. Intra-sentence similarity is read against its null, the same statistic on bags of random tokens from other sequences at the same positions (not against the anisotropy: a token's cosine with a mean that contains it is far above the mean pairwise cosine even for unrelated tokens); the first-PC share (MEV) is centred PCA over words with 5+ contexts, read against a size-matched null. Seed means with 95% t intervals over seeds; the untrained model's excesses are the control.\n");
            // The attention control's excess: what averaging the sequence alone does to
            // intra-sentence similarity; with untied heads too (the untied MLM beside its own
            // control), where a config trains them.
            let control = src.cast.no_attention;
            let mut extra_columns =
                vec![(control, "intra_sentence_excess", "intra-sentence - null")];
            let untied_mlm = src.cast.untied.0;
            extra_columns.push((
                untied_mlm,
                "self_similarity_adjusted",
                "self-similarity - anisotropy",
            ));
            extra_columns.push((untied_mlm, "intra_sentence_excess", "intra-sentence - null"));
            if let Some(u) = src.cast.no_attention_untied {
                extra_columns.push((u, "intra_sentence_excess", "intra-sentence - null"));
            }
            let readouts = [
                ("contextuality", "the raw residual stream"),
                (
                    "contextuality-norm",
                    "each layer through the final LayerNorm",
                ),
                (
                    "contextuality-sentences",
                    "the raw residual stream on WikiText-2's sentences (each padded; no position attends to the padding)",
                ),
                (
                    "contextuality-sentences-norm",
                    "each layer through the final LayerNorm on WikiText-2's sentences",
                ),
            ];
            for (bench, readout) in readouts {
                let layers: Vec<usize> = t
                    .layers(MLM, "contextual")
                    .into_iter()
                    .filter(|&l| {
                        let rep = Rep::new(MLM, "contextual", Some(l));
                        !src.values(Experiment::Contextuality, &rep, bench, "self_similarity")
                            .is_empty()
                    })
                    .collect();
                if layers.is_empty() {
                    let _ = writeln!(w, "Read as {readout}: not kept for these models (measured from the ten-seed round on).\n");
                    continue;
                }
                // How many tracked words self-similarity averages over (those with enough
                // occurrences in the pass): fewer on a shorter text.
                let words = layers
                    .iter()
                    .filter_map(|&l| t.get(MLM, "contextual", Some(l), bench, "self_similarity"))
                    .map(|s| s.n)
                    .min()
                    .unwrap_or(0);
                let _ = writeln!(w, "Read as {readout} (self-similarity over the {words} tracked words with at least {} occurrences there):\n", analysis::geometry::MIN_CONTEXTS);
                let has = |m: ModelId, metric: &str| {
                    layers.iter().any(|&l| {
                        !src.values(
                            Experiment::Contextuality,
                            &Rep::new(m.name(), "contextual", Some(l)),
                            bench,
                            metric,
                        )
                        .is_empty()
                    })
                };
                let columns: Vec<&(ModelId, &str, &str)> = extra_columns
                    .iter()
                    .filter(|(m, metric, _)| has(*m, metric))
                    .collect();
                let head: String = columns
                    .iter()
                    .map(|(m, _, h)| format!(" {}: {h} |", m.label()))
                    .collect();
                let rule = "---|".repeat(columns.len());
                let _ = writeln!(w, "| layer | self-similarity | anisotropy | self-similarity - anisotropy | intra-sentence - null | untrained: intra-sentence - null | MEV - null |{head}");
                let _ = writeln!(w, "|---|---|---|---|---|---|---|{rule}");
                for &l in &layers {
                    let g = |m: &str, metric: &str| {
                        let v = src.values(
                            Experiment::Contextuality,
                            &Rep::new(m, "contextual", Some(l)),
                            bench,
                            metric,
                        );
                        if v.is_empty() {
                            "-".to_string()
                        } else {
                            fmt_iv(&seed_mean(&v))
                        }
                    };
                    let u = ModelId::Untrained.name();
                    let extra: String = columns
                        .iter()
                        .map(|(m, metric, _)| format!(" {} |", g(m.name(), metric)))
                        .collect();
                    let _ = writeln!(
                        w,
                        "| {l} | {} | {} | {} | {} | {} | {} |{extra}",
                        g(MLM, "self_similarity"),
                        g(MLM, "anisotropy"),
                        g(MLM, "self_similarity_adjusted"),
                        g(MLM, "intra_sentence_excess"),
                        g(u, "intra_sentence_excess"),
                        g(MLM, "mev_centred_excess")
                    );
                }
                let _ = writeln!(w);
                let lines = contextuality_differences(src, bench, &layers);
                if !lines.is_empty() {
                    let _ = writeln!(w, "The differences these layers' answers rest on, each the mean of the seeds' differences with a 95% t interval over them, paired by seed: within a model, layer against layer; between models at the last layer, seed s against seed s (seed s of every variant reads the same batches and masks, and the untrained model of seed s is the masked LM of seed s before training). The intervals vary the seeds only: the tracked words and sequences are the same for every seed.\n");
                    for l in lines {
                        let _ = writeln!(w, "- {l}");
                    }
                    let _ = writeln!(w);
                }
            }
            let _ = writeln!(w, "Self-similarity - anisotropy is Ethayarajh's adjustment (his BERT and GPT-2 fall with depth on it). What intra-sentence similarity does not show: it is the cosine of a token with the mean of its sequence, which any averaging of the sequence raises; the {} column, a model whose every attention layer is a uniform average, is the measure's reading of pure averaging, so a value there or below is no sign of attention contextualising (the untied masked LM is read against the untied control the same way, where both were measured). The text8 slice has no punctuation, so its 64-token windows are not sentences.", control.label());
            let _ = writeln!(w);
            figure(w, src, Experiment::Contextuality, "contextuality-mlm");
        }
        None => missing(w, src, Experiment::Contextuality),
    }
}

/// What the contextuality answers say, as differences with intervals over seeds, on one
/// readout (`bench`) measured at `layers`: the masked LM's (and the untied one's, where
/// measured) self-similarity - anisotropy and intra-sentence - null from layer to layer, and
/// its intra-sentence - null at the last layer against its attention control (uniform
/// averaging) and the untrained model. Every difference pairs seed s with seed s: within a
/// model trivially, between models because seed s of every variant reads the same batches and
/// masks and the untrained model of seed s is the masked LM's initialisation, so the models'
/// seed-to-seed variation is shared and an unpaired (Welch) interval would misstate it.
fn contextuality_differences(src: &Sources, bench: &str, layers: &[usize]) -> Vec<String> {
    let exp = Experiment::Contextuality;
    let series = |m: ModelId, metric: &str, l: usize| {
        src.seed_means(exp, m.name(), |r| {
            r.representation == "contextual"
                && r.layer == Some(l)
                && r.benchmark == bench
                && r.metric == metric
        })
    };
    // x - y of the seeds both have, with its t interval; None under two seeds.
    let mut layers = layers.to_vec();
    layers.sort_unstable();
    let (Some(&first), Some(&last)) = (layers.first(), layers.last()) else {
        return Vec::new();
    };
    // Layer against layer: the first step, the rest, and the whole depth.
    let mut steps = Vec::new();
    if let Some(&second) = layers.get(1) {
        steps.push((second, first));
        if last > second {
            steps.extend([(last, second), (last, first)]);
        }
    }
    let measures = [
        ("self_similarity_adjusted", "self-similarity - anisotropy"),
        ("intra_sentence_excess", "intra-sentence - null"),
    ];
    let mut lines = Vec::new();
    for m in [ModelId::Mlm, src.cast.untied.0] {
        for (metric, what) in measures {
            for &(a, b) in &steps {
                let Some((iv, k)) =
                    paired_seed_difference(&series(m, metric, a), &series(m, metric, b))
                else {
                    continue;
                };
                lines.push(format!(
                    "{}, {what}, layer {a} - layer {b} ({k} seeds): {}: {}",
                    m.label(),
                    fmt_iv(&iv),
                    verdict(&iv, &format!("layer {a}"), &format!("layer {b}"))
                ));
            }
        }
    }
    let metric = "intra_sentence_excess";
    let mut pairs = vec![
        (ModelId::Mlm, src.cast.no_attention),
        (ModelId::Mlm, ModelId::Untrained),
    ];
    pairs.extend(src.cast.no_attention_untied.map(|c| (src.cast.untied.0, c)));
    for (a, b) in pairs {
        let Some((iv, k)) =
            paired_seed_difference(&series(a, metric, last), &series(b, metric, last))
        else {
            continue;
        };
        lines.push(format!(
            "intra-sentence - null at layer {last}, {} - {} ({k} seeds): {}: {}",
            a.label(),
            b.label(),
            fmt_iv(&iv),
            verdict(&iv, a.label(), b.label())
        ));
    }
    lines
}

/// Every section of the report, each a question.
fn findings(src: &Sources) -> String {
    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "How to read the numbers: a score is the mean over seeds with a 95% interval in brackets that carries both the sampling of benchmark items (2,000 resamples: a similarity pair through its two words, an analogy question through the two word pairs it is built from, each item's own noise counted once) and the spread between seeds (a t term with one degree of freedom fewer than there are seeds, combined by Welch-Satterthwaite): on a few hundred pairs the items are the main noise, and with few seeds a seed-to-seed spread weighs heavily (the t term's quantile falls from 4.30 at 3 seeds to 2.26 at 10). A difference \"a - b\" has its own interval, computed on the items both representations answer; it is called a difference only when that interval excludes 0. A best layer is chosen on a random half of each benchmark's items (dev) and reported on the other half (test), so it is not picked on the numbers reported; analogy questions are split by the word pairs they are built from, so that no pair is on both sides (a question whose two pairs fall on different sides is in neither half; a pair makes many questions, so a half holds anywhere from a fifth to a third of them); similarity pairs are split pair by pair, so a word can have pairs on both sides; embedding matrices and word2vec are scored on all items. Quantities taken once per model (held-out loss, the gain at [MASK], collocation z-scores, contextuality) get a t interval over seeds, which with few seeds is wide and leaves out the sampling of the held-out text (each seed's own gain interval carries it); a difference of two such quantities pairs seed s of one model with seed s of the other, as the design matches them (seed s of every transformer variant reads the rows in the same order, the masked LMs with the same masks, and the untrained model of seed s is the masked LM's initialisation; seeds are independent draws, so the interval holds whatever a pair shares), while models trained on different corpora, which share nothing, get Welch's unpaired interval.\n");
    let Some(ev) = src.evidence.as_ref() else {
        return md;
    };
    analogy_section(w, src, ev);
    similarity_section(w, src, ev);
    qkv_section(w, src, ev);
    frozen_section(w, src, ev);
    objective_section(w, src);
    contextuality_section(w, src);
    md
}

/// Similarity sets and the analogy set of the pretrained tables, and the collocation gap, as
/// columns.
const PRETRAINED_COLUMNS: [(&str, &str, &str); 5] = [
    ("WS-353-ALL", "spearman", "WS-353"),
    ("SIMLEX-999", "spearman", "SimLex-999"),
    ("MEN-TR-3k", "spearman", "MEN"),
    ("questions-words", "3CosAdd", "Google analogies (3CosAdd)"),
    (
        "collocation",
        "collocated_minus_matched",
        "collocated - matched cosine",
    ),
];

/// One section per checkpoint measured by `--exp pretrained` (`out/pretrained/<name>/`, with
/// `intervals.csv` and `contextuality.csv`): its tables' scores with item intervals, and its
/// contextuality per layer with the figures beside Ethayarajh's BERT-base and GPT-2.
fn pretrained_section(w: &mut String, out: &Path) -> anyhow::Result<()> {
    for dir in checkpoint_dirs(out) {
        let name = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let intervals: Vec<super::pretrained::IntervalRow> =
            output::read_csv(&dir.join("intervals.csv"))?;
        let ctx: Vec<TidyRow> = output::read_csv(&dir.join("contextuality.csv"))?;
        let _ = writeln!(w, "## A pretrained checkpoint: {name}\n");
        let _ = writeln!(w, "Read by `--exp pretrained --model DIR` on the word list and corpus of its config: the study's text8 slice, unless the name says `@` and another corpus or config (each word the mean of its pieces; `pretrained/{name}/`, its run.log names the config). One checkpoint, so every interval is over the benchmark's items only ({} resamples; analogy questions through their word pairs, similarity pairs through their words): it says how far other items could move a score, not what another training run would give. Layer 0 is the embedding output (token and position embeddings as the model combines them); `embedding` is the token embedding matrix alone.\n", analysis::evidence::RESAMPLES);
        let cell = |rep: &str, layer: Option<usize>, bench: &str, metric: &str| {
            intervals
                .iter()
                .find(|r| {
                    r.representation == rep
                        && r.layer == layer
                        && r.benchmark == bench
                        && r.metric == metric
                })
                .map(|r| format!("{:.3} [{:.3}, {:.3}]", r.estimate, r.lo, r.hi))
                .unwrap_or_else(|| "-".into())
        };
        let _ = write!(w, "| table | layer |");
        for (_, _, label) in PRETRAINED_COLUMNS {
            let _ = write!(w, " {label} |");
        }
        let _ = writeln!(w, "\n|---|---|{}", "---|".repeat(PRETRAINED_COLUMNS.len()));
        // The tables, in the file's order (each once; contextuality's rows are not a table).
        let mut reps: Vec<(String, Option<usize>)> = Vec::new();
        for r in intervals
            .iter()
            .filter(|r| r.representation != "contextual")
        {
            let rep = (r.representation.clone(), r.layer);
            if !reps.contains(&rep) {
                reps.push(rep);
            }
        }
        for (rep, layer) in &reps {
            let _ = write!(
                w,
                "| {rep} | {} |",
                layer.map_or("-".to_string(), |l| l.to_string())
            );
            for (bench, metric, _) in PRETRAINED_COLUMNS {
                let _ = write!(w, " {} |", cell(rep, *layer, bench, metric));
            }
            let _ = writeln!(w);
        }
        let _ = writeln!(w, "\nThe collocation column is the mean cosine of the corpus's collocated pairs minus that of frequency-matched pairs that never co-occur (the study's effect size), its interval over the pairs, resampled through their words (a group and its matched controls from one pool of words; before 2026-11-29 each group on its own and the pairs as if independent, up to six times narrower where a few words carry many pairs: CHANGELOG).");
        let _ = writeln!(
            w,
            "\nEach table minus the input embedding, on the items both answer:\n"
        );
        let scored = &PRETRAINED_COLUMNS[..PRETRAINED_COLUMNS.len() - 1];
        let _ = write!(w, "| table | layer |");
        for (_, _, label) in scored {
            let _ = write!(w, " {label} |");
        }
        let _ = writeln!(w, "\n|---|---|{}", "---|".repeat(scored.len()));
        for (rep, layer) in reps.iter().filter(|(r, _)| r != "embedding") {
            let _ = write!(
                w,
                "| {rep} | {} |",
                layer.map_or("-".to_string(), |l| l.to_string())
            );
            for (bench, _, _) in scored {
                let _ = write!(w, " {} |", cell(rep, *layer, bench, "minus_embedding"));
            }
            let _ = writeln!(w);
        }
        let base = |kind: &str| cell("embedding", None, "questions-words", kind);
        let _ = writeln!(w, "\nThe embedding's analogy score beside Linzen's (2016) baselines on the same questions: only-b {}, ignore-a {}; 3CosAdd minus only-b {}.\n", base("only-b"), base("ignore-a"), base("minus_only_b"));
        for (benchmark, what) in [
            ("contextuality-sentences", "on the config's `[contextuality] sentences` (WikiText-2's validation split in the committed runs; words outside the study's vocabulary read as `[UNK]`)"),
            ("contextuality", "on the corpus's training rows"),
        ] {
            // With its interval where intervals.csv has one (runs before it did have none).
            let at = |layer: usize, metric: &str| {
                let with = cell("contextual", Some(layer), benchmark, metric);
                if with != "-" {
                    return with;
                }
                ctx.iter()
                    .find(|r| r.benchmark == benchmark && r.layer == Some(layer) && r.metric == metric)
                    .map(|r| format!("{:.3}", r.value))
                    .unwrap_or_else(|| "-".into())
            };
            let mut layers: Vec<usize> = ctx
                .iter()
                .filter(|r| r.benchmark == benchmark)
                .filter_map(|r| r.layer)
                .collect();
            layers.dedup();
            if layers.is_empty() {
                continue;
            }
            let _ = writeln!(w, "Contextuality {what}:\n\n| layer | self-similarity | intra-sentence | its null | intra-sentence - null | anisotropy | self-sim. - anisotropy |\n|---|---|---|---|---|---|---|");
            for l in layers {
                let _ = writeln!(
                    w,
                    "| {l} | {} | {} | {} | {} | {} | {} |",
                    at(l, "self_similarity"),
                    at(l, "intra_sentence"),
                    at(l, "intra_sentence_null"),
                    at(l, "intra_sentence_excess"),
                    at(l, "anisotropy"),
                    at(l, "self_similarity_adjusted")
                );
            }
            let _ = writeln!(w);
        }
        let _ = writeln!(w, "Ethayarajh (2019) measured BERT-base (cased) and GPT-2 on STS sentences, each WordPiece piece (BERT) or word (GPT-2) a token, with no start piece before GPT-2's text; the figures draw his published values (`data/reference/`) beside these against relative depth. The intervals are over the tracked words (self-similarity), the random tokens of the anisotropy sample, and the sequences (intra-sentence, each with its own null bag), one checkpoint; they leave out the null's own sample of tokens (64 per position) and the word list, so the intra-sentence ones in particular are narrow. The figures and his values are point values.\n");
        for stem in ["self-similarity", "intra-sentence", "anisotropy"] {
            let _ = writeln!(w, "![{stem}](pretrained/{name}/contextuality-{stem}.png)");
        }
        let _ = writeln!(w);
        heads_section(w, &dir)?;
    }
    Ok(())
}

/// The checkpoints measured under `out/pretrained/` (each directory with `intervals.csv` and
/// `contextuality.csv`), in name order; none where there is no such folder.
fn checkpoint_dirs(out: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(out.join("pretrained")) else {
        return Vec::new();
    };
    let mut dirs: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.join("intervals.csv").is_file() && d.join("contextuality.csv").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The published BERT-base and GPT-2 values the checkpoints are read beside, per layer:
/// Bommasani et al. (2020)'s similarity of pooled vectors and Ethayarajh (2019)'s
/// self-similarity minus anisotropy (both from `data/reference/`).
fn published_section(w: &mut String) -> anyhow::Result<()> {
    use super::pretrained::{read_reference, BOMMASANI, ETHAYARAJH};
    let resolve = |p: &str| crate::paths::resolve(Path::new(p));
    let (bom, eth) = (
        read_reference(&resolve(BOMMASANI))?,
        read_reference(&resolve(ETHAYARAJH))?,
    );
    let value =
        |rows: &[super::pretrained::ReferenceRow], model: &str, stat: &str, layer: usize| {
            rows.iter()
                .find(|r| r.model == model && r.statistic == stat && r.layer == layer)
                .map(|r| r.value)
        };
    let _ = writeln!(w, "## Published values: BERT-base and GPT-2\n");
    let _ = writeln!(w, "Point values, per layer (0 = the embedding layer's output), from `data/reference/` (origin in data/README.md). Spearman rho with human judgments of bert-base-uncased's and gpt2's vectors pooled over 100,000 Wikipedia sentences, a word's pieces averaged and its contexts averaged (Bommasani et al. 2020; read off their figures' pixels, about ±0.01, ±0.02 at layer 12; `-` where the lines cross), and Ethayarajh (2019)'s self-similarity minus anisotropy of bert-base-cased and gpt2 on STS sentences (his two published statistics subtracted here). Their corpora, sentences, casing and subword vocabularies differ from the study's text8 slice and whole words, so they are a reference for the shape across layers, not for a difference with an interval.\n");
    let models = [
        ("bert-base-uncased", "bert-base-cased", "BERT-base"),
        ("gpt2", "gpt2", "GPT-2"),
    ];
    let sets = [
        ("WS-353-ALL", "WS-353"),
        ("SIMLEX-999", "SimLex-999"),
        ("RG-65", "RG-65"),
    ];
    let _ = write!(w, "| layer |");
    for (_, _, label) in models {
        for (_, set) in sets {
            let _ = write!(w, " {label} {set} |");
        }
        let _ = write!(w, " {label} self-sim. - anisotropy |");
    }
    let _ = writeln!(
        w,
        "\n|---|{}",
        "---|".repeat(models.len() * (sets.len() + 1))
    );
    let show =
        |v: Option<f64>, places: usize| v.map_or("-".to_string(), |v| format!("{v:.places$}"));
    for layer in 0..=12 {
        let _ = write!(w, "| {layer} |");
        for (pooled, stats, _) in models {
            for (set, _) in sets {
                let _ = write!(
                    w,
                    " {} |",
                    show(value(&bom, pooled, &format!("spearman:{set}"), layer), 2)
                );
            }
            let adjusted = value(&eth, stats, "self_similarity", layer)
                .zip(value(&eth, stats, "anisotropy", layer))
                .map(|(s, a)| s - a);
            let _ = write!(w, " {} |", show(adjusted, 3));
        }
        let _ = writeln!(w);
    }
    let _ = writeln!(w);
    Ok(())
}

/// A checkpoint's attention heads (`heads.csv`, `pairs.csv`, where the run wrote them): each
/// layer's whole form, the heads' W_Q/W_K likeness against Gaussian matrices and against the
/// other heads, and the pair scores against human judgments.
fn heads_section(w: &mut String, dir: &Path) -> anyhow::Result<()> {
    use super::pretrained::{HeadRow, PairRow};
    let (hp, pp) = (dir.join("heads.csv"), dir.join("pairs.csv"));
    if !hp.is_file() || !pp.is_file() {
        return Ok(());
    }
    let heads: Vec<HeadRow> = output::read_csv(&hp)?;
    let pairs: Vec<PairRow> = output::read_csv(&pp)?;
    let band = |r: &HeadRow| format!("{:.3} ({:.3} ± {:.3})", r.value, r.gaussian, r.gaussian_sd);
    let _ = writeln!(w, "Attention heads read as bilinear forms M = W_Q W_K^T (`heads.csv`; Saponati et al. 2025's symmetry and directionality, Trockman & Kolter 2023's alignment with the identity), each layer's whole form (the sum over its heads), beside independent Gaussian matrices of the same shapes (mean ± sd over draws: a model at initialisation):\n\n| layer | symmetry | directionality | identity alignment |\n|---|---|---|---|");
    let mut layers: Vec<usize> = heads.iter().map(|r| r.layer).collect();
    layers.dedup();
    let whole = |l: usize, m: &str| {
        heads
            .iter()
            .find(|r| r.layer == l && r.head == "all" && r.measure == m)
            .map(band)
            .unwrap_or_else(|| "-".into())
    };
    for &l in &layers {
        let _ = writeln!(
            w,
            "| {l} | {} | {} | {} |",
            whole(l, "symmetry"),
            whole(l, "directionality"),
            whole(l, "identity_alignment")
        );
    }
    let _ = writeln!(w, "\nPer head: linear CKA and cosine of W_Q with W_K, the heads above the Gaussian mean + 2 sd and above the cross-head reference (Q of the head against K of the layer's other heads), linear CKA of W_V with W_Q and with W_K beside the Gaussian mean (`-` in runs before it was kept), and the heads' symmetry:\n\n| layer | heads | CKA(W_Q, W_K) | above Gaussian | above cross-head | cos(W_Q, W_K) | CKA(W_Q, W_V) | CKA(W_K, W_V) | Gaussian CKA | symmetry |\n|---|---|---|---|---|---|---|---|---|---|");
    let range = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        format!("{lo:.3} to {hi:.3}")
    };
    for &l in &layers {
        let of = |m: &str| -> Vec<&HeadRow> {
            heads
                .iter()
                .filter(|r| r.layer == l && r.head != "all" && r.measure == m)
                .collect()
        };
        let cka = of("cka_q_k");
        let above = cka
            .iter()
            .filter(|r| r.value > r.gaussian + 2.0 * r.gaussian_sd)
            .count();
        let above_cross = cka
            .iter()
            .filter(|r| r.cross_head.is_some_and(|c| r.value > c))
            .count();
        let values = |rows: &[&HeadRow]| rows.iter().map(|r| r.value).collect::<Vec<_>>();
        let kept = |m: &str| {
            let rows = of(m);
            if rows.is_empty() {
                "-".to_string()
            } else {
                range(&values(&rows))
            }
        };
        // Any two of Q, K, V have one shape, so one Gaussian band: Q with K's, the mean over
        // the layer's heads of each head's draws' mean and sd.
        let gaussian = if cka.is_empty() {
            "-".to_string()
        } else {
            let n = cka.len() as f64;
            let m = cka.iter().map(|r| r.gaussian).sum::<f64>() / n;
            let sd = cka.iter().map(|r| r.gaussian_sd).sum::<f64>() / n;
            format!("{m:.3} ± {sd:.3}")
        };
        let _ = writeln!(
            w,
            "| {l} | {} | {} | {above} | {above_cross} | {} | {} | {} | {gaussian} | {} |",
            cka.len(),
            range(&values(&cka)),
            range(&values(&of("cos_q_k"))),
            kept("cka_q_v"),
            kept("cka_k_v"),
            range(&values(&of("symmetry")))
        );
    }
    let _ = writeln!(w, "\nThe score a head gives two words' embeddings, (e_i M e_j + e_j M e_i)/2, as a similarity: Spearman with the human judgments (`pairs.csv`; 95% intervals over the words, pairs resampled through them, where the run computed them), the plain dot product (M = I) beside the heads, the best single head, its paired difference from the dot product (both rhos on each resample's pairs; the head is picked on these pairs, so the difference leans its way: an interval below zero holds all the more), the best head against the best of as many Gaussian heads (the largest over Gaussian forms of every head's shape, mean ± sd over draws: the null for a maximum), the head at the median rank (the upper middle one of an even count) with its own interval, how many heads score above their own Gaussian forms' mean + 2 sd, and the best head's and the median-rank head's Spearman with the embeddings' cosine on the same pairs (how far a head's score is the cosine similarity itself):\n\n| benchmark | pairs | dot product | best head (layer.head) | best head - dot product | best Gaussian head | median-rank head | heads above Gaussian | with cosine: best, median-rank head |\n|---|---|---|---|---|---|---|---|---|");
    let mut sets: Vec<&str> = pairs.iter().map(|r| r.benchmark.as_str()).collect();
    sets.dedup();
    for set in sets {
        let rows: Vec<&PairRow> = pairs.iter().filter(|r| r.benchmark == set).collect();
        let dot = rows.iter().find(|r| r.head == "dot");
        // Single heads (the layer's whole form, `all`, is another kind of row) with a rank
        // correlation; the best is the last maximum in row order, as `best_head_minus_dot`'s.
        let mut by_head: Vec<&&PairRow> = rows
            .iter()
            .filter(|r| r.head != "dot" && r.head != "all" && r.spearman_human.is_finite())
            .collect();
        by_head.sort_by(|a, b| a.spearman_human.total_cmp(&b.spearman_human));
        let (Some(best), Some(median)) = (by_head.last(), by_head.get(by_head.len() / 2)) else {
            continue;
        };
        let above = by_head
            .iter()
            .filter(
                |r| match (r.gaussian_spearman_human, r.gaussian_spearman_human_sd) {
                    (Some(m), Some(sd)) => r.spearman_human > m + 2.0 * sd,
                    _ => false,
                },
            )
            .count();
        let rho = |r: &PairRow| match (r.spearman_human_lo, r.spearman_human_hi) {
            (Some(lo), Some(hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", r.spearman_human),
            _ => format!("{:.3}", r.spearman_human),
        };
        let best_null = dot
            .and_then(|d| Some((d.gaussian_best_head_human?, d.gaussian_best_head_human_sd?)))
            .map_or("-".into(), |(m, sd)| format!("{m:.3} ± {sd:.3}"));
        let minus_dot = dot
            .and_then(|d| {
                Some((
                    d.best_head_minus_dot?,
                    d.best_head_minus_dot_lo?,
                    d.best_head_minus_dot_hi?,
                ))
            })
            .map_or("-".into(), |(x, lo, hi)| {
                format!("{x:.3} [{lo:.3}, {hi:.3}]")
            });
        let _ = writeln!(
            w,
            "| {set} | {} | {} | {} ({}.{}) | {minus_dot} | {best_null} | {} | {above} of {} | {:.3}, {:.3} |",
            best.pairs,
            dot.map_or("-".into(), |d| rho(d)),
            rho(best),
            best.layer,
            best.head,
            rho(median),
            by_head.len(),
            best.spearman_cosine,
            median.spearman_cosine
        );
    }
    let _ = writeln!(w, "\nThe intervals resample the words the pairs share (each pair through its two words; before 2026-11-28, the pairs as if independent) and carry no seed term: one checkpoint. The pair score is read on the raw embedding rows (no position embedding, LayerNorm or bias), for every layer's form (`docs/method.md`).\n");
    Ok(())
}

/// `--exp report`. The config names the roles (paper.toml's by default) and says what the
/// models are (the paragraph "The models", from the config and its corpus: nothing is
/// trained; left out, with a warning, where the corpus cannot be read).
pub fn run(args: &Args) -> anyhow::Result<()> {
    let (cfg, path) = super::settings::load_config_from(args, "paper")?;
    if cfg.round {
        anyhow::bail!(
            "{}: a round in progress (round = true); the report is the committed study's, written with its config (experiments/configs/paper.toml), and reads the round's comparisons from round/",
            path.as_deref().map_or("the config".into(), |p| p.display().to_string())
        );
    }
    let cast = cfg.roles.cast()?;
    let dev_split = cfg.training.dev_split;
    let study = describe(args, cfg, path.as_deref());
    write(&args.out, cast, study.as_ref(), dev_split)
}

/// How the report names a config file: relative to the repository root where it lies under it
/// (a committed report names no machine's paths).
pub fn config_label(path: Option<&Path>) -> String {
    let Some(p) = path else {
        return "the built-in defaults".into();
    };
    let root = crate::paths::repo_root().canonicalize().ok();
    match (p.canonicalize().ok(), root) {
        (Some(p), Some(root)) if p.starts_with(&root) => {
            p.strip_prefix(&root).unwrap_or(&p).display().to_string()
        }
        _ => p.display().to_string(),
    }
}

/// What the report needs of the study beyond its CSVs.
pub struct Described {
    /// The paragraph "The models" ([`super::study::Study::describe`]).
    pub models: String,
    /// The collocated pairs and their frequency-matched controls every model was scored on.
    pub collocations: CollocationPairs,
}

impl Described {
    pub fn of(study: &super::study::Study, config: &str) -> Described {
        Described {
            models: study.describe(config),
            collocations: study.collocation_pairs().clone(),
        }
    }
}

/// [`super::study::Study::describe`] of `cfg`, or `None` (with a warning) where the study
/// cannot be loaded: the report's answers do not need it.
pub fn describe(
    args: &Args,
    cfg: super::settings::Config,
    path: Option<&Path>,
) -> Option<Described> {
    let config = config_label(path);
    match super::study::Study::load(args, cfg) {
        Ok(study) => Some(Described::of(&study, &config)),
        Err(e) => {
            eprintln!("warning: the report says nothing of what the models are: {e:#}");
            None
        }
    }
}

/// The similarity sets the attention forms' pair scores are tabled on (the README's three).
const PAIR_SETS: [&str; 3] = ["WS-353-ALL", "SIMLEX-999", "MEN-TR-3k"];

/// One model's attention-form measures, per seed, from its kept `scores-<h>.csv` files.
#[derive(Default)]
struct FormSeeds {
    /// (layer, measure) -> per seed (trained, at the seed's own initialisation W0).
    forms: std::collections::BTreeMap<(usize, String), Vec<(f64, f64)>>,
    /// (benchmark, what) -> per seed values, `what` one of `median head`, `median head at W0`
    /// (the median over every layer's single heads of Spearman's rho with the human judgments,
    /// the mean of the two middle ones for an even count), `median head with cosine` (the same
    /// trained heads' rho with the embeddings' cosine), `best head` and `best head at W0` (the
    /// largest rho with the human judgments; at W0 the same maximum over as many heads, its
    /// null).
    pairs: std::collections::BTreeMap<(String, &'static str), Vec<f64>>,
    /// Seed -> the measurement directory it came from.
    seeds: std::collections::BTreeMap<u64, std::path::PathBuf>,
    /// Per-pair scores of the embedding's cosine, the dot product and each layer's whole form
    /// (trained and W0), where the model's items file holds them.
    items: Vec<crate::output::ItemRow>,
    /// Two measurement directories of one seed: runs of two configs of this model under the
    /// same measurement settings, which must not be pooled.
    clash: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

/// Our own models' attention forms, gathered from every kept model measurement under
/// `out/measurements/` that holds them, grouped by model name and measurement-settings hash:
/// studies measured under other settings are never pooled, and a model with two runs of one
/// seed under the same settings (another config of the same model written into the same
/// `--out`, as when a user changes one knob) is marked, both runs named, and left out of the
/// tables rather than pooled. A run measured again under newer settings keeps both files; where
/// a comparison (the study's or a round's `measurements.csv`) reads one of them, only that one
/// is read, so that one run is not shown twice.
fn our_forms(
    out: &Path,
) -> anyhow::Result<std::collections::BTreeMap<(String, String), FormSeeds>> {
    let mut models: std::collections::BTreeMap<(String, String), FormSeeds> = Default::default();
    let Ok(entries) = std::fs::read_dir(out.join("measurements")) else {
        return Ok(models);
    };
    let read = compared_items(out)?;
    let mut files = Vec::new();
    for dir in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if !dir.is_dir() {
            continue;
        }
        let listing =
            std::fs::read_dir(&dir).with_context(|| format!("{}: cannot list", dir.display()))?;
        let mut here = Vec::new();
        for f in listing.filter_map(|e| e.ok().map(|e| e.path())) {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Some(h) = name
                .strip_prefix("scores-")
                .and_then(|n| n.strip_suffix(".csv"))
            {
                here.push((f.clone(), h.to_string()));
            }
        }
        let compared = |h: &str| read.contains(&dir.join(format!("items-{h}.csv.gz")));
        if here.iter().any(|(_, h)| compared(h)) {
            here.retain(|(_, h)| compared(h));
        }
        files.extend(here);
    }
    files.sort();
    for (path, hash) in files {
        let rows: Vec<TidyRow> = crate::kept::read_csv(&path)?;
        let forms: Vec<&TidyRow> = rows
            .iter()
            .filter(|r| {
                r.benchmark == "all-heads"
                    && r.metric.starts_with("qk_")
                    && !r.metric.ends_with("_cross_head")
            })
            .collect();
        if forms.is_empty() {
            continue;
        }
        let seed = forms[0].seed.unwrap_or(0);
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let items_path = dir.join(format!("items-{hash}.csv.gz"));
        let m = models.entry((forms[0].model.clone(), hash)).or_default();
        if let Some(other) = m.seeds.get(&seed) {
            m.clash.get_or_insert((other.clone(), dir.clone()));
            continue;
        }
        m.seeds.insert(seed, dir.clone());
        if crate::kept::exists(&items_path)? {
            m.items.extend(
                crate::kept::read_items(&items_path)?
                    .into_iter()
                    .filter(|i| {
                        matches!(
                            i.representation.as_str(),
                            "embedding" | "dot" | "form-trained" | "form-initial"
                        ) && i.kind == "cosine"
                    }),
            );
        }
        let value = |rep: &str, layer: Option<usize>, metric: &str| {
            forms
                .iter()
                .find(|r| r.representation == rep && r.layer == layer && r.metric == metric)
                .map(|r| r.value)
        };
        for r in forms
            .iter()
            .filter(|r| r.representation == "attention-trained")
        {
            if let (Some(l), Some(init)) = (
                r.layer,
                value("attention-initialisation", r.layer, &r.metric),
            ) {
                m.forms
                    .entry((l, r.metric.clone()))
                    .or_default()
                    .push((r.value, init));
            }
        }
        // Pair scores (measured from the ten-seed round's later models on).
        let median = |mut v: Vec<f64>| -> Option<f64> {
            v.sort_by(f64::total_cmp);
            (!v.is_empty()).then(|| {
                let n = v.len();
                if n % 2 == 1 {
                    v[n / 2]
                } else {
                    0.5 * (v[n / 2 - 1] + v[n / 2])
                }
            })
        };
        let mut sets: Vec<&str> = rows
            .iter()
            .filter_map(|r| r.benchmark.strip_prefix("pairs:")?.strip_suffix(":dot"))
            .collect();
        sets.dedup();
        for set in sets {
            let heads = |rep: &str, metric: &str| {
                median(
                    rows.iter()
                        .filter(|r| {
                            r.representation == rep
                                && r.metric == metric
                                && r.benchmark.starts_with(&format!("pairs:{set}:head-"))
                        })
                        .map(|r| r.value)
                        .collect(),
                )
            };
            let dot = rows.iter().find(|r| {
                r.benchmark == format!("pairs:{set}:dot") && r.metric == "spearman_human"
            });
            let best = |rep: &str| {
                rows.iter()
                    .filter(|r| {
                        r.representation == rep
                            && r.metric == "spearman_human"
                            && r.benchmark.starts_with(&format!("pairs:{set}:head-"))
                    })
                    .map(|r| r.value)
                    .max_by(f64::total_cmp)
            };
            if let (Some(_), Some(t), Some(i), Some(c), Some(b), Some(b0)) = (
                dot,
                heads("attention-trained", "spearman_human"),
                heads("attention-initialisation", "spearman_human"),
                heads("attention-trained", "spearman_cosine"),
                best("attention-trained"),
                best("attention-initialisation"),
            ) {
                for (what, v) in [
                    ("median head", t),
                    ("median head at W0", i),
                    ("median head with cosine", c),
                    ("best head", b),
                    ("best head at W0", b0),
                ] {
                    m.pairs.entry((set.to_string(), what)).or_default().push(v);
                }
            }
        }
    }
    Ok(models)
}

/// The items files the comparisons under `out` read (the study's and a round's
/// `measurements.csv`), as paths under `out`.
fn compared_items(out: &Path) -> anyhow::Result<std::collections::BTreeSet<std::path::PathBuf>> {
    let mut read = super::evidence::listed_items(out, out)?;
    read.extend(super::evidence::listed_items(
        out,
        &out.join(super::settings::ROUND),
    )?);
    Ok(read)
}

/// Our models' attention heads read as bilinear forms, trained against their own
/// initialisation with a t interval over seeds, beside each pretrained checkpoint's forms
/// against Gaussian forms of its shapes (`heads.csv`): the one table the seed question asks for.
fn forms_section(w: &mut String, out: &Path) -> anyhow::Result<()> {
    use analysis::evidence::seed_mean;
    let mut ours = our_forms(out)?;
    let clashes: Vec<String> = ours
        .iter()
        .filter_map(|((model, _), m)| {
            let (a, b) = m.clash.as_ref()?;
            Some(format!(
                "{model}: left out, two runs of one seed under one measurement setting ({} and {}): runs of two configs of one model; give each study its own --out",
                a.display(),
                b.display()
            ))
        })
        .collect();
    ours.retain(|_, m| m.clash.is_none());
    // The untrained control and a model whose attention is not used (no-attention) keep their
    // W0: nothing to read in either table.
    let unchanged = |m: &FormSeeds| m.forms.values().flatten().all(|(t, i)| t == i);
    if ours.is_empty() && clashes.is_empty() {
        return Ok(());
    }
    let _ = writeln!(
        w,
        "## Attention heads as bilinear forms: our models beside a pretrained checkpoint\n"
    );
    for c in &clashes {
        let _ = writeln!(w, "- {c}");
    }
    if !clashes.is_empty() {
        let _ = writeln!(w);
    }
    let _ = writeln!(w, "Each layer's whole form M = W_Q W_K^T (the sum over its heads; `analysis::bilinear`): Saponati et al. 2025's symmetry (1 symmetric, 1/2 for independent random Q and K, 0 antisymmetric) and Trockman & Kolter 2023's alignment with the identity (cosine of M with I). Our models: trained and at the same seed's initialisation W0 (seed means), and trained - W0 with a t interval over seeds (`measurements/<run>/scores-<h>.csv`, rows `all-heads`). A pretrained checkpoint: its value beside Gaussian forms of its shapes, mean ± sd over draws (its `heads.csv`).\n");
    let _ = writeln!(w, "| model | seeds | layer | symmetry: trained, W0 | trained - W0 | identity alignment: trained, W0 | trained - W0 |\n|---|---|---|---|---|---|---|");
    for ((model, hash), m) in &ours {
        if unchanged(m) {
            continue;
        }
        let layers: std::collections::BTreeSet<usize> = m.forms.keys().map(|k| k.0).collect();
        for l in layers {
            let cell = |metric: &str| -> (String, String) {
                let Some(v) = m.forms.get(&(l, metric.to_string())) else {
                    return ("-".into(), "-".into());
                };
                let mean =
                    |f: fn(&(f64, f64)) -> f64| v.iter().map(f).sum::<f64>() / v.len() as f64;
                let diff: Vec<f64> = v.iter().map(|(t, i)| t - i).collect();
                (
                    format!("{:.3}, {:.3}", mean(|x| x.0), mean(|x| x.1)),
                    fmt_iv(&seed_mean(&diff)),
                )
            };
            let (s, sd) = cell("qk_symmetry");
            let (a, ad) = cell("qk_identity_alignment");
            let _ = writeln!(
                w,
                "| {model} (`{hash}`) | {} | {l} | {s} | {sd} | {a} | {ad} |",
                m.seeds.len()
            );
        }
    }
    if let Ok(entries) = std::fs::read_dir(out.join("pretrained")) {
        let mut dirs: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| d.join("heads.csv").is_file())
            .collect();
        dirs.sort();
        // The heads are the weights': a checkpoint read on a second corpus has the same rows.
        let mut shown: Vec<Vec<u8>> = Vec::new();
        for dir in dirs {
            let path = dir.join("heads.csv");
            let bytes =
                std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
            let heads: Vec<super::pretrained::HeadRow> = output::read_csv(&path)?;
            let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("?");
            let Some(name) = name.split('@').next().filter(|_| !shown.contains(&bytes)) else {
                continue;
            };
            shown.push(bytes);
            let layers: std::collections::BTreeSet<usize> = heads.iter().map(|h| h.layer).collect();
            for l in layers {
                let cell = |measure: &str| {
                    heads
                        .iter()
                        .find(|h| h.layer == l && h.head == "all" && h.measure == measure)
                        .map_or("-".into(), |h| {
                            format!(
                                "{:.3} (Gaussian {:.3} ± {:.3})",
                                h.value, h.gaussian, h.gaussian_sd
                            )
                        })
                };
                let _ = writeln!(
                    w,
                    "| {name} (pretrained) | 1 | {l} | {} | - | {} | - |",
                    cell("symmetry"),
                    cell("identity_alignment")
                );
            }
        }
    }
    let pairs: Vec<_> = ours
        .iter()
        .filter(|(_, m)| !m.pairs.is_empty() && !unchanged(m))
        .collect();
    if !pairs.is_empty() {
        use super::evidence::{Half, Rep};
        let benchmarks = super::eval::benchmarks(&[])?;
        let _ = writeln!(w, "\nThe score a form gives two words' trained input embeddings, (e_i M e_j + e_j M e_i)/2, as a similarity (Spearman with the human judgments; rows `pairs:<set>:...` and the items beside them): the embeddings' cosine and plain dot product (M = I), each layer's whole form trained and under the same seed's initial forms W0 on the same rows (95% intervals over pairs and seeds together, as every similarity score's), the median over single heads (of every layer) trained and at W0, the trained heads' median rho with the embeddings' cosine, and the best single head trained and at W0 (the best of as many random heads: the null for a maximum) (seed means, t intervals over seeds). Only models measured after pair scores were added have these, so the seeds column can be smaller than above.\n");
        let _ = writeln!(w, "| model | seeds | benchmark | embedding cosine | dot product | median over heads | at W0 | median - W0 | median over heads, with cosine | best head | best head at W0 |\n|---|---|---|---|---|---|---|---|---|---|---|");
        let mut layer_lines = Vec::new();
        for ((model, hash), m) in pairs {
            // The seeds with pair items, and every item of theirs: each interval over the same
            // seeds.
            let seeds: std::collections::BTreeSet<Option<u64>> = m
                .items
                .iter()
                .filter(|i| i.representation == "dot")
                .map(|i| i.seed)
                .collect();
            let items: Vec<crate::output::ItemRow> = m
                .items
                .iter()
                .filter(|i| seeds.contains(&i.seed))
                .cloned()
                .collect();
            let ev = super::evidence::from_rows(items, &benchmarks);
            let score = |rep: &str, layer: Option<usize>, set: &str| {
                ev.score(&Rep::new(model, rep, layer), set, Half::All)
                    .map_or("-".into(), |e| fmt_iv(&e.interval))
            };
            for set in PAIR_SETS {
                let get = |what: &'static str| {
                    m.pairs
                        .get(&(set.to_string(), what))
                        .cloned()
                        .unwrap_or_default()
                };
                let (t, i) = (get("median head"), get("median head at W0"));
                if t.is_empty() {
                    continue;
                }
                let diff: Vec<f64> = t.iter().zip(&i).map(|(a, b)| a - b).collect();
                let _ = writeln!(
                    w,
                    "| {model} (`{hash}`) | {} | {set} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    t.len(),
                    score("embedding", None, set),
                    score("dot", None, set),
                    fmt_iv(&seed_mean(&t)),
                    fmt_iv(&seed_mean(&i)),
                    fmt_iv(&seed_mean(&diff)),
                    fmt_iv(&seed_mean(&get("median head with cosine"))),
                    fmt_iv(&seed_mean(&get("best head"))),
                    fmt_iv(&seed_mean(&get("best head at W0")))
                );
                for l in ev.layers(model, "form-trained", set) {
                    let (a, b) = (
                        Rep::new(model, "form-trained", Some(l)),
                        Rep::new(model, "form-initial", Some(l)),
                    );
                    if let Some(d) = ev.difference(&a, &b, set, Half::All) {
                        layer_lines.push(format!(
                            "| {model} (`{hash}`) | {set} | {l} | {} | {} | {} |",
                            fmt_iv(&d.a.interval),
                            fmt_iv(&d.b.interval),
                            fmt_iv(&d.diff)
                        ));
                    }
                }
            }
        }
        if !layer_lines.is_empty() {
            let _ = writeln!(w, "\nEach layer's whole form (the sum over its heads), trained and at W0, on the same pairs and seeds:\n\n| model | benchmark | layer | trained | W0 | trained - W0 |\n|---|---|---|---|---|---|");
            for line in layer_lines {
                let _ = writeln!(w, "{line}");
            }
        }
    }
    let _ = writeln!(w, "\nA symmetry above W0's says training made the form more symmetric (bidirectional training does, by Saponati et al.); the pretrained checkpoint is read against Gaussian forms only, having no own W0. The models' widths and head counts differ (see each model's description above): read layers against layers, and one model's change from its W0, rather than values across models.\n");
    Ok(())
}

/// The comparisons a round in progress has written so far (`out/round/<comparison>/`, by a
/// config with `round = true`), each section as in the findings, read with the roles, seeds and
/// models its `round.json` keeps; empty when no round has written one.
/// The roles a round's comparisons were drawn with (the first `round.json` under `round`, in
/// the order of [`PAPER`]), or `None` before any comparison has one.
fn round_cast(round: &Path) -> anyhow::Result<Option<Cast>> {
    for exp in PAPER {
        let path = round.join(name(exp)).join("round.json");
        if path.is_file() {
            let info = super::settings::RoundInfo::read(&path)?;
            return Ok(Some(
                info.roles
                    .cast()
                    .with_context(|| format!("{}: its roles", path.display()))?,
            ));
        }
    }
    Ok(None)
}

fn round_section(out: &Path, collocations: Option<&CollocationPairs>) -> anyhow::Result<String> {
    let dir = out.join(super::settings::ROUND);
    let mut md = String::new();
    let mut shown_models: Option<String> = None;
    // One load of the round's comparisons per set of roles.
    let mut loaded: Vec<(String, Sources)> = Vec::new();
    // The comparisons the round has not written yet.
    let mut missing: Vec<&str> = Vec::new();
    for exp in PAPER {
        // The comparisons the findings give a section to.
        if exp == Experiment::Layers {
            continue;
        }
        let info_path = dir.join(name(exp)).join("round.json");
        if !info_path.is_file() {
            missing.push(name(exp));
            if dir.join(name(exp)).join("summary.csv").is_file() {
                anyhow::bail!(
                    "{}: a round's comparison without its description (round.json, written after its summary): run it again",
                    dir.join(name(exp)).display()
                );
            }
            continue;
        }
        let info = super::settings::RoundInfo::read(&info_path)?;
        let cast = info
            .roles
            .cast()
            .with_context(|| format!("{}: its roles", info_path.display()))?;
        let key = serde_json::to_string(&info.roles)?;
        if !loaded.iter().any(|(k, _)| *k == key) {
            loaded.push((
                key.clone(),
                Sources::load(out, super::settings::ROUND, cast, collocations)?,
            ));
        }
        let src = &loaded.iter().find(|(k, _)| *k == key).expect("loaded").1;
        if src.get(exp).is_none() {
            continue;
        }
        if shown_models.as_deref() != Some(info.models.as_str()) {
            // The description names its config.
            let _ = writeln!(md, "{}\n", info.models.trim_end());
            shown_models = Some(info.models.clone());
        }
        let seeds: Vec<String> = info
            .seeds
            .iter()
            .map(|(m, s)| format!("{m} seeds {}", seed_list(s)))
            .collect();
        let Some(ev) = src.evidence.as_ref() else {
            anyhow::bail!("{}: no per-item outcomes read", dir.display());
        };
        let mut section = String::new();
        let s = &mut section;
        match exp {
            Experiment::Analogy => analogy_section(s, src, ev),
            Experiment::Similarity => similarity_section(s, src, ev),
            Experiment::Qkv => qkv_section(s, src, ev),
            Experiment::Frozen => frozen_section(s, src, ev),
            Experiment::Objective => objective_section(s, src),
            Experiment::Contextuality => contextuality_section(s, src),
            // Layers has no section of its own in the findings either (skipped above).
            _ => continue,
        }
        // A heading of its own, so that it links apart from the committed study's; the seeds
        // read right under it.
        let section = match section.split_once('\n') {
            Some((heading, rest)) => format!(
                "{}\n\nRead at: {}.\n{rest}",
                heading.replacen("### ", "### Round: ", 1),
                seeds.join("; ")
            ),
            None => section,
        };
        md.push_str(&section);
    }
    if md.is_empty() {
        return Ok(md);
    }
    // The heading and the sentence on where the answers are, once it is known which
    // comparisons are there.
    let (heading, state) = round_state(&missing);
    Ok(format!(
        "{heading}\n\nEach comparison below is read on every seed the round plans for its models (named with it), from the same kept measurements, in `{}/`. Read as the findings above are, but of other models: the round's recipe is its own config's, not the committed study's (its learning rates, scales and seeds), every \"held-out loss\" below is on the test half of the held-out block (a round splits off a dev half), and so is the gain at [MASK] (its dev half is where learning rates and plateaus were judged). {state}\n\n{md}",
        super::settings::ROUND
    ))
}

/// The round section's heading and its sentence on where the answers are: complete when no
/// comparison is `missing`, else in progress, naming what is not there yet.
fn round_state(missing: &[&str]) -> (String, String) {
    if missing.is_empty() {
        (
            "## The round: every comparison".into(),
            "Every comparison of the round is here; the findings above are the committed study's, kept beside it (the README gives the round's answers where it says so).".into(),
        )
    } else {
        (
            "## The round in progress: comparisons complete so far".into(),
            format!(
                "Not written yet: {}. The findings above stay the committed study's until the round is complete.",
                missing.join(", ")
            ),
        )
    }
}

/// Seeds as `1-10`, or `1, 3, 5` where they do not run on.
fn seed_list(seeds: &[u64]) -> String {
    let mut seeds = seeds.to_vec();
    seeds.sort_unstable();
    match (seeds.first(), seeds.last()) {
        (Some(&a), Some(&b)) if b > a && (b - a) as usize + 1 == seeds.len() => format!("{a}-{b}"),
        _ => seeds
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `out/REPORT.md` from the comparisons under `out`, drawn with a config that does (or does
/// not) split off a dev half.
/// `study`: what the models are (the paragraph "The models") and the collocation pairs they
/// were scored on, where the study's corpus could be read.
pub fn write(
    out: &Path,
    cast: Cast,
    study: Option<&Described>,
    dev_split: bool,
) -> anyhow::Result<()> {
    let collocations = study.map(|d| &d.collocations);
    let src = Sources {
        dev_split,
        ..Sources::load(out, "", cast, collocations)?
    };
    let models = study.map(|d| d.models.as_str());
    let mut body = models.map_or(String::new(), |m| format!("{m}\n"));
    body.push_str(&findings(&src));
    body.push_str(&round_section(out, collocations)?);
    pretrained_section(&mut body, out)?;
    if !checkpoint_dirs(out).is_empty() {
        published_section(&mut body)?;
    }
    forms_section(&mut body, out)?;
    // Each answer along the budget, once `--exp dynamics` has written its curves.
    if let Some(rows) = super::budget::read(out)? {
        body.push_str(&super::budget::section(&rows, ""));
    }
    // A round's, once its `--exp dynamics` has written them (under round/, at the round's end),
    // with the answers measured once per seed from the snapshots' rows beside them.
    let round = out.join(super::settings::ROUND);
    if let Some(rows) = super::budget::read(&round)? {
        body.push_str(&super::budget::section(&rows, "Round: "));
        if let (Some(dynamics), Some(cast)) = (
            super::budget_seeds::read(&round.join("dynamics"))?,
            round_cast(&round)?,
        ) {
            let rows = super::budget_seeds::rows(&dynamics, &cast);
            body.push_str(&super::budget_seeds::section(&rows, &cast));
        }
    }
    // The corpus-size answers, once `--exp corpus-size` has read its arms.
    if let Some(rows) = super::corpus_size::read_summary(out)? {
        body.push_str(&super::corpus_size::section(&rows));
    }
    let mut report = String::from("# embedlab report\n\nGenerated by `cargo run -p experiments -- --exp report` from the CSVs under this directory and the per-item outcomes under `measurements/` (what the models are: from the config named below). Do not edit by hand.\n\n");
    report.push_str(&body);
    let path = out.join("REPORT.md");
    corpus::io::write_atomic(&path, |w| w.write_all(report.as_bytes()))
        .with_context(|| format!("{}: cannot write", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_says_whether_every_comparison_is_there() {
        let (heading, state) = round_state(&[]);
        assert_eq!(heading, "## The round: every comparison");
        assert!(
            state.starts_with("Every comparison of the round is here"),
            "{state}"
        );
        let (heading, state) = round_state(&["frozen", "contextuality"]);
        assert_eq!(
            heading,
            "## The round in progress: comparisons complete so far"
        );
        assert!(
            state.starts_with("Not written yet: frozen, contextuality."),
            "{state}"
        );
    }

    #[test]
    fn the_published_values_are_laid_out_by_layer_with_ethayarajhs_adjustment_computed() {
        let mut md = String::new();
        published_section(&mut md).unwrap();
        // Layer 0: Bommasani's BERT WS-353, SimLex, RG-65, then Ethayarajh's BERT-base
        // self-similarity 0.954 minus anisotropy 0.105; then GPT-2's (0.917 - 0.611).
        assert!(
            md.contains("| 0 | 0.67 | 0.51 | 0.68 | 0.849 | 0.64 | 0.38 | 0.48 | 0.306 |\n"),
            "{md}"
        );
        // gpt2's RG-65 at layer 12 is not in the file: shown as missing, not as 0.
        assert!(
            md.contains("| 12 | 0.50 | 0.33 | 0.37 | 0.278 | 0.24 | 0.11 | - | 0.007 |\n"),
            "{md}"
        );
        assert_eq!(
            md.matches("\n| ").count(),
            14,
            "the header and 13 layers: {md}"
        );
        // Written only beside a checkpoint's measurements.
        let dir = tempfile::tempdir().unwrap();
        assert!(checkpoint_dirs(dir.path()).is_empty());
        let ckpt = dir.path().join("pretrained").join("tiny");
        std::fs::create_dir_all(&ckpt).unwrap();
        std::fs::write(ckpt.join("intervals.csv"), "").unwrap();
        assert!(
            checkpoint_dirs(dir.path()).is_empty(),
            "contextuality.csv missing"
        );
        std::fs::write(ckpt.join("contextuality.csv"), "").unwrap();
        assert_eq!(checkpoint_dirs(dir.path()), [ckpt]);
    }

    #[test]
    fn seed_lists_read_as_ranges_where_they_run_on() {
        assert_eq!(seed_list(&[1, 2, 3]), "1-3");
        assert_eq!(seed_list(&[3, 1, 2]), "1-3");
        assert_eq!(seed_list(&[3, 1, 1, 2]), "1, 1, 2, 3");
        assert_eq!(seed_list(&[1, 3, 5]), "1, 3, 5");
        assert_eq!(seed_list(&[4]), "4");
        assert_eq!(seed_list(&[]), "");
    }

    #[test]
    fn our_forms_are_read_against_their_own_initialisation_beside_a_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let ws = benchmarks
            .similarity
            .iter()
            .find(|s| s.name == "WS-353-ALL")
            .unwrap();
        let gold: Vec<f64> = ws.pairs[..10].iter().map(|p| p.2).collect();
        let planted = |rep: &str, seed: u64| -> Vec<Option<f64>> {
            let s = seed as usize;
            (0..ws.pairs.len())
                .map(|i| {
                    (i < 10).then(|| {
                        let g = gold[i];
                        match rep {
                            "embedding" => g + ((i * 7 + s) % 5) as f64,
                            "dot" => 0.5 * g + ((i * 3 + s) % 4) as f64,
                            "form-trained" => -g + ((i * 5 + s) % 3) as f64,
                            _ => ((i * 11 + s * 3) % 7) as f64,
                        }
                    })
                })
                .collect()
        };
        // The seed mean of Spearman's rho with the gold scores, computed here.
        let rho = |rep: &str| {
            [1u64, 2]
                .iter()
                .map(|&s| {
                    let v: Vec<f64> = planted(rep, s).into_iter().flatten().collect();
                    analysis::stats::spearman(&gold, &v)
                })
                .sum::<f64>()
                / 2.0
        };
        let row = |model: &str,
                   seed: u64,
                   rep: &str,
                   layer: Option<usize>,
                   bench: &str,
                   metric: &str,
                   v: f64| TidyRow {
            layer,
            benchmark: bench.into(),
            metric: metric.into(),
            value: v,
            seed: Some(seed),
            ..TidyRow::template("", model, rep)
        };
        // Two seeds of a trained model; layer 1's symmetry 0.7 and 0.8 against W0's 0.5 and
        // 0.5, identity alignment 0.1 against 0.0 for both; pair scores on one benchmark.
        for (seed, sym, dot, heads, init) in [
            (1u64, 0.7, 0.6, [0.2, 0.4], [0.0, 0.1]),
            (2, 0.8, 0.7, [0.3, 0.5], [0.1, 0.1]),
        ] {
            let mut rows = vec![
                row(
                    "mlm",
                    seed,
                    "attention-trained",
                    Some(1),
                    "all-heads",
                    "qk_symmetry",
                    sym,
                ),
                row(
                    "mlm",
                    seed,
                    "attention-initialisation",
                    Some(1),
                    "all-heads",
                    "qk_symmetry",
                    0.5,
                ),
                row(
                    "mlm",
                    seed,
                    "attention-trained",
                    Some(1),
                    "all-heads",
                    "qk_identity_alignment",
                    0.1,
                ),
                row(
                    "mlm",
                    seed,
                    "attention-initialisation",
                    Some(1),
                    "all-heads",
                    "qk_identity_alignment",
                    0.0,
                ),
                row(
                    "mlm",
                    seed,
                    "attention-trained",
                    Some(1),
                    "head-0",
                    "qk_symmetry",
                    0.99,
                ),
                row(
                    "mlm",
                    seed,
                    "embedding",
                    None,
                    "pairs:WS-353-ALL:dot",
                    "spearman_human",
                    dot,
                ),
                row(
                    "mlm",
                    seed,
                    "embedding",
                    None,
                    "pairs:WS-353-ALL:dot",
                    "spearman_cosine",
                    0.9,
                ),
            ];
            for h in 0..2 {
                let b = format!("pairs:WS-353-ALL:head-{h}");
                rows.push(row(
                    "mlm",
                    seed,
                    "attention-trained",
                    Some(1),
                    &b,
                    "spearman_cosine",
                    0.1 * (h + seed as usize) as f64,
                ));
                rows.push(row(
                    "mlm",
                    seed,
                    "attention-trained",
                    Some(1),
                    &b,
                    "spearman_human",
                    heads[h],
                ));
                rows.push(row(
                    "mlm",
                    seed,
                    "attention-initialisation",
                    Some(1),
                    &b,
                    "spearman_human",
                    init[h],
                ));
            }
            let d = dir.path().join(format!("measurements/mlm-seed{seed}-abc"));
            crate::kept::write_csv(&d.join("scores-0123456789ab.csv"), &rows).unwrap();
            // Per-pair scores on WS-353's first ten pairs (the rest not found).
            let items: Vec<crate::output::ItemRow> =
                ["embedding", "dot", "form-trained", "form-initial"]
                    .iter()
                    .map(|rep| crate::output::ItemRow {
                        model: "mlm".into(),
                        representation: rep.to_string(),
                        layer: rep.starts_with("form").then_some(1),
                        benchmark: "WS-353-ALL".into(),
                        kind: "cosine".into(),
                        seed: Some(seed),
                        values: crate::output::encode_cosines(&planted(rep, seed)),
                    })
                    .collect();
            crate::kept::write_items(&d.join("items-0123456789ab.csv.gz"), &items).unwrap();
        }
        // The untrained control: its trained forms are its W0, so it gets no row.
        let d = dir.path().join("measurements/untrained-seed1-abc");
        crate::kept::write_csv(
            &d.join("scores-0123456789ab.csv"),
            &[
                row(
                    "untrained",
                    1,
                    "attention-trained",
                    Some(1),
                    "all-heads",
                    "qk_symmetry",
                    0.5,
                ),
                row(
                    "untrained",
                    1,
                    "attention-initialisation",
                    Some(1),
                    "all-heads",
                    "qk_symmetry",
                    0.5,
                ),
            ],
        )
        .unwrap();
        let m = dir.path().join("pretrained/tiny");
        std::fs::create_dir_all(&m).unwrap();
        let head = |measure: &str, value: f64| super::super::pretrained::HeadRow {
            model: "tiny".into(),
            layer: 1,
            head: "all".into(),
            measure: measure.into(),
            value,
            gaussian: 0.501,
            gaussian_sd: 0.002,
            cross_head: None,
        };
        output::write_csv(
            &m.join("heads.csv"),
            &[head("symmetry", 0.703), head("identity_alignment", -0.009)],
        )
        .unwrap();
        let mut md = String::new();
        forms_section(&mut md, dir.path()).unwrap();
        // Differences 0.2 and 0.3: mean 0.25, standard error 0.05, t(1) 12.706.
        assert!(
            md.contains("| mlm (`0123456789ab`) | 2 | 1 | 0.750, 0.500 | 0.250 [-0.385, 0.885] | 0.100, 0.000 | 0.100 [0.100, 0.100] |"),
            "{md}"
        );
        assert!(!md.contains("| untrained"), "{md}");
        assert!(
            md.contains("| tiny (pretrained) | 1 | 1 | 0.703 (Gaussian 0.501 ± 0.002) | - | -0.009 (Gaussian 0.501 ± 0.002) | - |"),
            "{md}"
        );
        // Median heads 0.3 and 0.4 trained, 0.05 and 0.1 at W0 (standard error 0.05 and 0.025,
        // differences 0.25 and 0.3); best heads 0.4 and 0.5 trained, 0.1 and 0.1 at W0.
        let line = md
            .lines()
            .find(|l| l.starts_with("| mlm (`0123456789ab`) | 2 | WS-353-ALL |"))
            .unwrap_or_else(|| panic!("{md}"));
        let cells: Vec<&str> = line.split(" | ").collect();
        // The cosine's and the dot product's rho over both seeds and the ten pairs, each with
        // an interval over pairs and seeds around it.
        assert!(
            cells[3].starts_with(&format!("{:.3} [", rho("embedding"))),
            "{line}"
        );
        assert!(
            cells[4].starts_with(&format!("{:.3} [", rho("dot"))),
            "{line}"
        );
        assert!(
            line.ends_with(
                // Heads' rho with cosine 0.1, 0.2 (seed 1) and 0.2, 0.3 (seed 2): medians 0.15
                // and 0.25.
                "| 0.350 [-0.285, 0.985] | 0.075 [-0.243, 0.393] | 0.275 [-0.043, 0.593] | 0.200 [-0.435, 0.835] | 0.450 [-0.185, 1.085] | 0.100 [0.100, 0.100] |"
            ),
            "{line}"
        );
        let layer = md
            .lines()
            .find(|l| l.starts_with("| mlm (`0123456789ab`) | WS-353-ALL | 1 |"))
            .unwrap_or_else(|| panic!("{md}"));
        let cells: Vec<&str> = layer.split(" | ").collect();
        assert!(
            cells[3].starts_with(&format!("{:.3} [", rho("form-trained"))),
            "{layer}"
        );
        assert!(
            cells[4].starts_with(&format!("{:.3} [", rho("form-initial"))),
            "{layer}"
        );
        let diff = rho("form-trained") - rho("form-initial");
        assert!(cells[5].starts_with(&format!("{diff:.3} [")), "{layer}");
        // A stray file beside the models' directories is no model.
        std::fs::write(dir.path().join("measurements/notes.txt"), "x").unwrap();
        forms_section(&mut String::new(), dir.path()).unwrap();
        // Two runs of one model and seed under one settings hash would be pooled: the model is
        // left out, both runs named.
        let twin = dir.path().join("measurements/mlm-seed1-other");
        let seed1: Vec<TidyRow> = crate::kept::read_csv(
            &dir.path()
                .join("measurements/mlm-seed1-abc/scores-0123456789ab.csv"),
        )
        .unwrap();
        crate::kept::write_csv(&twin.join("scores-0123456789ab.csv"), &seed1).unwrap();
        let mut md = String::new();
        forms_section(&mut md, dir.path()).unwrap();
        let note = md
            .lines()
            .find(|l| l.starts_with("- mlm: left out"))
            .unwrap_or_else(|| panic!("{md}"));
        assert!(
            note.contains("mlm-seed1-abc")
                && note.contains("mlm-seed1-other")
                && note.contains("own --out"),
            "{note}"
        );
        assert!(!md.contains("| mlm (`"), "{md}");
        assert!(md.contains("| tiny (pretrained) |"), "{md}");
        std::fs::remove_dir_all(&twin).unwrap();
        // The same run measured again under other settings: both kept, both shown while no
        // comparison reads either; only the one a comparison reads once one does.
        let again = dir
            .path()
            .join("measurements/mlm-seed1-abc/scores-fedcba987654.csv");
        crate::kept::write_csv(&again, &seed1).unwrap();
        let rows_of = |md: &str, hash: &str| {
            md.lines()
                .filter(|l| l.starts_with(&format!("| mlm (`{hash}`) |")))
                .count()
        };
        let mut md = String::new();
        forms_section(&mut md, dir.path()).unwrap();
        assert!(
            rows_of(&md, "0123456789ab") > 0 && rows_of(&md, "fedcba987654") > 0,
            "{md}"
        );
        let listed = dir.path().join("round/qkv/measurements.csv");
        crate::output::write_csv(
            &listed,
            &[super::super::evidence::Measured {
                model: "mlm".into(),
                seed: 1,
                items: "measurements/mlm-seed1-abc/items-fedcba987654.csv.gz".into(),
            }],
        )
        .unwrap();
        let mut md = String::new();
        forms_section(&mut md, dir.path()).unwrap();
        // Seed 1 is read under the listed settings only; seed 2 has no other file.
        assert!(md.contains("| mlm (`fedcba987654`) | 1 |"), "{md}");
        assert!(md.contains("| mlm (`0123456789ab`) | 1 |"), "{md}");

        // A damaged kept file is an error naming it, not a table without it.
        let bad = dir
            .path()
            .join("measurements/mlm-seed2-abc/scores-0123456789ab.csv");
        std::fs::write(&bad, "model\n").unwrap();
        let err = format!(
            "{:#}",
            forms_section(&mut String::new(), dir.path()).unwrap_err()
        );
        assert!(
            err.contains("mlm-seed2-abc/scores-0123456789ab.csv"),
            "{err}"
        );
    }

    #[test]
    fn a_pretrained_checkpoint_gets_its_scores_and_contextuality_and_a_bad_file_is_named() {
        use super::super::pretrained::IntervalRow;
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("pretrained/tiny");
        std::fs::create_dir_all(&m).unwrap();
        let iv = |rep: &str, layer: Option<usize>, bench: &str, metric: &str, e: f64| IntervalRow {
            model: "tiny".into(),
            representation: rep.into(),
            layer,
            benchmark: bench.into(),
            metric: metric.into(),
            estimate: e,
            lo: e - 0.1,
            hi: e + 0.1,
            items: 300,
            chance_lo: None,
            chance_hi: None,
        };
        output::write_csv(
            &m.join("intervals.csv"),
            &[
                iv("embedding", None, "WS-353-ALL", "spearman", 0.7),
                iv("embedding", None, "questions-words", "3CosAdd", 0.5),
                iv("embedding", None, "questions-words", "only-b", 0.25),
                iv("aggregated", Some(2), "SIMLEX-999", "spearman", 0.45),
                iv(
                    "embedding",
                    None,
                    "collocation",
                    "collocated_minus_matched",
                    0.2,
                ),
                iv(
                    "contextual",
                    Some(1),
                    "contextuality-sentences",
                    "self_similarity",
                    0.8,
                ),
            ],
        )
        .unwrap();
        let ctx = |metric: &str, v: f64| TidyRow {
            layer: Some(1),
            benchmark: "contextuality-sentences".into(),
            metric: metric.into(),
            value: v,
            ..TidyRow::template("pretrained", "tiny", "contextual")
        };
        output::write_csv(
            &m.join("contextuality.csv"),
            &[ctx("self_similarity", 0.81), ctx("anisotropy", 0.3)],
        )
        .unwrap();
        let mut md = String::new();
        pretrained_section(&mut md, dir.path()).unwrap();
        assert!(md.contains("## A pretrained checkpoint: tiny"), "{md}");
        assert!(
            md.contains(
                "| embedding | - | 0.700 [0.600, 0.800] | - | - | 0.500 [0.400, 0.600] | 0.200 [0.100, 0.300] |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| aggregated | 2 | - | 0.450 [0.350, 0.550] | - | - | - |"),
            "{md}"
        );
        assert!(md.contains("only-b 0.250 [0.150, 0.350]"), "{md}");
        // Contextuality: the interval where intervals.csv has one, else the point value; the
        // contextual rows are not a table of the score table.
        assert!(
            md.contains("| 1 | 0.800 [0.700, 0.900] | - | - | - | 0.300 | - |"),
            "{md}"
        );
        assert!(!md.contains("| contextual |"), "{md}");
        assert!(
            md.contains("pretrained/tiny/contextuality-anisotropy.png"),
            "{md}"
        );
        // The difference table: only the aggregated row, its cells `-` where no difference
        // was written.
        assert!(md.contains("Each table minus the input embedding"), "{md}");
        assert!(md.contains("| aggregated | 2 | - | - | - | - |"), "{md}");
        // No heads.csv: no heads section.
        assert!(!md.contains("bilinear forms"), "{md}");
        // Heads and pairs: two heads of layer 1 and its whole form; one benchmark.
        use super::super::pretrained::{HeadRow, PairRow};
        let head = |head: &str, measure: &str, value: f64, cross_head: Option<f64>| HeadRow {
            model: "tiny".into(),
            layer: 1,
            head: head.into(),
            measure: measure.into(),
            value,
            gaussian: 0.1,
            gaussian_sd: 0.01,
            cross_head,
        };
        output::write_csv(
            &m.join("heads.csv"),
            &[
                head("0", "cka_q_k", 0.13, Some(0.14)), // above 0.1 + 2 x 0.01, below cross-head
                head("0", "cos_q_k", -0.2, Some(0.0)),
                head("0", "symmetry", 0.6, None),
                head("1", "cka_q_k", 0.11, Some(0.09)), // within the band, above cross-head
                head("1", "cos_q_k", 0.3, Some(0.0)),
                head("1", "symmetry", 0.9, None),
                head("all", "symmetry", 0.7, None),
                head("all", "directionality", 0.4, None),
            ],
        )
        .unwrap();
        let pair = |head: &str, rho: f64, g: Option<(f64, f64)>| PairRow {
            model: "tiny".into(),
            benchmark: "MEN".into(),
            layer: if head == "dot" { 0 } else { 1 },
            head: head.into(),
            pairs: 40,
            spearman_human: rho,
            spearman_cosine: match head {
                "1" => 0.6,
                "0" => 0.4,
                _ => 0.5,
            },
            gaussian_spearman_human: g.map(|g| g.0),
            gaussian_spearman_human_sd: g.map(|g| g.1),
            gaussian_spearman_cosine: g.map(|g| g.0),
            spearman_human_lo: (head != "2").then_some(rho - 0.05),
            spearman_human_hi: (head != "2").then_some(rho + 0.05),
            gaussian_best_head_human: (head == "dot").then_some(0.15),
            gaussian_best_head_human_sd: (head == "dot").then_some(0.02),
            best_head_minus_dot: (head == "dot").then_some(-0.43),
            best_head_minus_dot_lo: (head == "dot").then_some(-0.5),
            best_head_minus_dot_hi: (head == "dot").then_some(-0.36),
        };
        output::write_csv(
            &m.join("pairs.csv"),
            &[
                pair("dot", 0.78, None),
                pair("0", 0.2, Some((0.0, 0.1))), // at the band's top: not above
                pair("1", 0.35, Some((0.0, 0.1))),
                pair("2", -0.1, Some((0.0, 0.1))),
                pair("all", 0.9, Some((0.0, 0.1))), // the whole layer's form: not a head
            ],
        )
        .unwrap();
        let mut md = String::new();
        pretrained_section(&mut md, dir.path()).unwrap();
        assert!(
            md.contains("| 1 | 0.700 (0.100 ± 0.010) | 0.400 (0.100 ± 0.010) | - |"),
            "{md}"
        );
        assert!(
            md.contains("| 1 | 2 | 0.110 to 0.130 | 1 | 1 | -0.200 to 0.300 | - | - | 0.100 ± 0.010 | 0.600 to 0.900 |"),
            "a heads.csv without V's CKA: {md}"
        );
        assert!(
            md.contains("| MEN | 40 | 0.780 [0.730, 0.830] | 0.350 [0.300, 0.400] (1.1) | -0.430 [-0.500, -0.360] | 0.150 ± 0.020 | 0.200 [0.150, 0.250] | 1 of 3 | 0.600, 0.400 |"),
            "{md}"
        );
        // With V's CKA kept: each head's range beside the Gaussian band.
        let mut rows: Vec<HeadRow> = output::read_csv(&m.join("heads.csv")).unwrap();
        for (h, qv, kv) in [("0", 0.05, 0.08), ("1", 0.07, 0.06)] {
            rows.push(head(h, "cka_q_v", qv, None));
            rows.push(head(h, "cka_k_v", kv, None));
        }
        output::write_csv(&m.join("heads.csv"), &rows).unwrap();
        let mut with_v = String::new();
        pretrained_section(&mut with_v, dir.path()).unwrap();
        assert!(
            with_v.contains("| 1 | 2 | 0.110 to 0.130 | 1 | 1 | -0.200 to 0.300 | 0.050 to 0.070 | 0.060 to 0.080 | 0.100 ± 0.010 | 0.600 to 0.900 |"),
            "{with_v}"
        );
        // A pairs.csv written before the intervals and the maximum null: point values, `-`.
        std::fs::write(
            m.join("pairs.csv"),
            "model,benchmark,layer,head,pairs,spearman_human,spearman_cosine,gaussian_spearman_human,gaussian_spearman_human_sd,gaussian_spearman_cosine\n\
             tiny,MEN,0,dot,40,0.78,0.5,,,\n\
             tiny,MEN,1,0,40,0.2,0.5,0.0,0.1,0.0\n\
             tiny,MEN,1,1,40,0.35,0.5,0.0,0.1,0.0\n\
             tiny,MEN,1,2,40,-0.1,0.5,0.0,0.1,0.0\n",
        )
        .unwrap();
        let mut old = String::new();
        pretrained_section(&mut old, dir.path()).unwrap();
        assert!(
            old.contains("| MEN | 40 | 0.780 | 0.350 (1.1) | - | - | 0.200 | 1 of 3 |"),
            "{old}"
        );
        // No pretrained directory: nothing, and no error.
        let empty = tempfile::tempdir().unwrap();
        let mut none = String::new();
        pretrained_section(&mut none, empty.path()).unwrap();
        assert!(none.is_empty());
        let good = std::fs::read(m.join("contextuality.csv")).unwrap();
        std::fs::write(
            m.join("contextuality.csv"),
            "experiment,model\npretrained\n",
        )
        .unwrap();
        let e = format!("{:#}", pretrained_section(&mut md, dir.path()).unwrap_err());
        assert!(e.contains("contextuality.csv"), "{e}");
        std::fs::write(m.join("contextuality.csv"), good).unwrap();
        std::fs::write(m.join("intervals.csv"), "model,representation\ntiny\n").unwrap();
        let e = format!("{:#}", pretrained_section(&mut md, dir.path()).unwrap_err());
        assert!(e.contains("intervals.csv"), "{e}");
    }
    use crate::exp::eval::Benchmarks;

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
    fn a_difference_is_called_only_when_its_interval_excludes_zero() {
        let iv = |estimate, lo, hi| Interval {
            estimate,
            lo,
            hi,
            level: 0.95,
        };
        assert!(verdict(&iv(0.1, -0.01, 0.2), "A", "B").starts_with("no difference shown"));
        assert!(verdict(&iv(0.1, 0.02, 0.2), "A", "B").starts_with("A higher"));
        assert!(verdict(&iv(-0.1, -0.2, -0.02), "A", "B").starts_with("B higher"));
        assert_eq!(fmt_iv(&iv(0.1234, 0.1, 0.15)), "0.123 [0.100, 0.150]");
        assert_eq!(
            mcnemar(&[0.0123, 0.5]),
            "; McNemar exact p per seed: 0.012, 0.50"
        );
        assert_eq!(fmt_p(3.1e-9), "3.1e-9");
        assert_eq!(fmt_p(1.0), "1.00");
        assert_eq!(fmt_p(0.99996), "1.00");
        assert_eq!(fmt_p(0.0123), "0.012");
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

    /// Planted held-out losses: the frozen section states each seed against the context-free
    /// level, when it went below, and the counts by Fisher's exact test (1 of 3 against 3 of
    /// 3: 4 seeds below in all, the frozen arm holding 1, 2 or 3 of them with probabilities
    /// 3/15, 9/15, 3/15; the two as extreme as observed sum to 0.40).
    #[test]
    fn the_frozen_section_reads_each_seed_against_the_context_free_level_and_at_mask() {
        let exp = name(Experiment::Frozen);
        let mut rows = Vec::new();
        // (loss, first step below the level, gain at [MASK] with its interval)
        let planted = [
            (
                ModelId::FrozenUntied,
                [
                    (6.30, 4752, [0.021, 0.012, 0.030]),
                    (6.92, 5280, [0.004, -0.003, 0.011]),
                    (6.95, 5280, [-0.010, -0.018, -0.002]),
                ],
            ),
            (
                ModelId::MlmUntied,
                [
                    (5.40, 528, [1.1, 1.05, 1.15]),
                    (5.50, 792, [1.0, 0.95, 1.05]),
                    (5.60, 1056, [0.9, 0.85, 0.95]),
                ],
            ),
        ];
        for (m, seeds) in planted {
            for (seed, (loss, below, [g, lo, hi])) in (1..).zip(seeds) {
                let t = TidyRow::template(exp, m.name(), "training");
                let values = [
                    ("heldout_loss", loss),
                    ("context_free_loss", 6.313),
                    ("steps_to_context_free_level", below as f64),
                    ("context_gain_at_mask", g),
                    ("context_gain_at_mask_lo", lo),
                    ("context_gain_at_mask_hi", hi),
                ];
                rows.extend(t.measures("training", 5280, &values).map(|r| TidyRow {
                    seed: Some(seed),
                    ..r
                }));
            }
        }
        // The embeddings' scale: the frozen table at 0.060 every seed; the trained 0.058, 0.060,
        // 0.062: 0.060 +- 4.303 * 0.002 / sqrt(3) = [0.055, 0.065].
        let frozen_id = Cast::default().frozen;
        for (m, stds) in [
            (frozen_id, [0.060, 0.060, 0.060]),
            (ModelId::MlmUntied, [0.058, 0.060, 0.062]),
        ] {
            for (seed, sd) in (1..).zip(stds) {
                let t = TidyRow::template(exp, m.name(), "embedding");
                rows.extend(
                    t.measures("embedding-scale", 22541, &[("std", sd)])
                        .map(|r| TidyRow {
                            seed: Some(seed),
                            ..r
                        }),
                );
            }
        }
        let mut src = sources_with(Experiment::Frozen, rows);
        let with_every_gain = src.rows.clone();
        let md = findings(&src);
        assert!(
            md.contains("- input embedding's per-coordinate standard deviation over the words: frozen 0.060 [0.060, 0.060] (its random table), trained 0.060 [0.055, 0.065]\n"),
            "{md}"
        );
        assert!(
            md.contains("per seed: frozen -0.013 (below from step 4752), +0.607 (above at the end), +0.637 (above at the end); trained -0.913 (below from step 528), -0.813 (below from step 792), -0.713 (below from step 1056)."),
            "{md}"
        );
        // The trained arm's gain measured for seed 3 alone (the others' weights gone): the line
        // names the seed and says what is missing.
        src.rows = with_every_gain;
        src.rows[0].1.retain(|r| {
            !(r.model == ModelId::MlmUntied.name()
                && r.metric.starts_with("context_gain")
                && r.seed != Some(3))
        });
        let md_partial = findings(&src);
        assert!(
            md_partial.contains("trained seed 3 +0.900 [+0.850, +0.950] (the other 2 seeds' weights were gone). Seeds whose interval lies above 0: frozen 1 of 3, trained 1 of 1; Fisher's exact p = 1.00"),
            "{md_partial}"
        );
        assert!(
            md.contains("frozen 1 of 3, trained 3 of 3; Fisher's exact p = 0.40"),
            "{md}"
        );
        // Only frozen seed 1's interval lies above 0 (seed 2's straddles it).
        assert!(
            md.contains("per seed: frozen +0.021 [+0.012, +0.030], +0.004 [-0.003, +0.011], -0.010 [-0.018, -0.002]; trained +1.100 [+1.050, +1.150], +1.000 [+0.950, +1.050], +0.900 [+0.850, +0.950]. Seeds whose interval lies above 0: frozen 1 of 3, trained 3 of 3; Fisher's exact p = 0.40"),
            "{md}"
        );
    }

    /// An untied model's output matrix gets its own analogy row and is read against its input
    /// embedding: planted outcomes, every 5th question right in the output matrix and every
    /// 10th in the input embedding, the same at each of 3 seeds: 0.2 against 0.1.
    #[test]
    fn the_analogy_table_reads_an_untied_output_matrix_beside_its_input_embedding() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let n: usize = benchmarks
            .analogy
            .iter()
            .find(|s| s.name == ANALOGY)
            .unwrap()
            .sections
            .iter()
            .map(|s| s.questions.len())
            .sum();
        let untied = ModelId::MlmUntied;
        let mut items = Vec::new();
        for seed in 1..=3 {
            for (rep, every) in [("embedding", 10), ("lm_head", 5)] {
                let outcomes: Vec<Option<bool>> = (0..n).map(|i| Some(i % every == 0)).collect();
                items.push(crate::output::ItemRow {
                    model: untied.name().into(),
                    representation: rep.into(),
                    layer: None,
                    benchmark: ANALOGY.into(),
                    kind: "3CosAdd".into(),
                    seed: Some(seed),
                    values: output::encode_outcomes(&outcomes),
                });
            }
        }
        let exp = name(Experiment::Analogy);
        let chance: Vec<TidyRow> = TidyRow::template(exp, ModelId::Sgns.name(), "static")
            .measures(ANALOGY_TOTAL, n, &[("3CosAdd_chance", 0.00004)])
            .collect();
        let mut src = sources_with(Experiment::Analogy, chance);
        src.evidence = Some(crate::exp::evidence::from_rows(items, &benchmarks));
        let mut md = String::new();
        analogy_section(&mut md, &src, src.evidence.as_ref().unwrap());
        let l = untied.label();
        let row = |what: &str, v: &str| format!("| {l} {what} | {v} [");
        assert!(md.contains(&row("output matrix", "0.200")), "{md}");
        assert!(md.contains(&row("embedding matrix", "0.100")), "{md}");
        let line = md
            .lines()
            .find(|x| x.starts_with(&format!("- {l} output matrix 0.200 [")))
            .unwrap_or_else(|| panic!("{md}"));
        assert!(
            line.contains(&format!("vs {l} embedding matrix 0.100 ["))
                && line.contains(&format!("on the same {n} items: difference 0.100 [")),
            "{line}"
        );
        assert!(
            line.contains(&format!("{l} output matrix higher")),
            "{line}"
        );
    }

    /// Sharing V as well as Q and K, read against sharing Q and K alone (the contrast that
    /// isolates V), seed s against seed s: planted held-out losses 5.5, 5.7, 5.7 against 5.2,
    /// 5.3, 5.45, differences 0.3, 0.4, 0.25 (mean 0.3167, sd 0.0764): 0.3167 +- 4.303 *
    /// 0.0764 / sqrt(3) = [0.127, 0.506], where Welch's, blind to the pairing, would be about
    /// [0.04, 0.59]. A masked-LM seed the shared variants lack is left out of their
    /// differences from it.
    #[test]
    fn the_qkv_section_reads_shared_qkv_against_shared_qk() {
        let exp = name(Experiment::Qkv);
        let mut rows = Vec::new();
        for (m, losses) in [
            (ModelId::Mlm, vec![5.3, 5.4, 5.5, 9.0]),
            (ModelId::SharedQk, vec![5.2, 5.3, 5.45]),
            (ModelId::SharedQkv, vec![5.5, 5.7, 5.7]),
        ] {
            for (seed, l) in (1..).zip(losses) {
                let t = TidyRow::template(exp, m.name(), "training");
                rows.extend(
                    t.measures("training", 5280, &[("heldout_loss", l)])
                        .map(|r| TidyRow {
                            seed: Some(seed),
                            ..r
                        }),
                );
            }
        }
        let src = sources_with(Experiment::Qkv, rows);
        let md = findings(&src);
        let (a, b) = (ModelId::SharedQkv.label(), ModelId::SharedQk.label());
        assert!(
            md.contains(&format!(
                "- {a} - {b} (sharing V as well as Q and K) = 0.317 [0.127, 0.506] (paired by seed, on the 3 seeds both have): {a} (worse) higher (the interval excludes 0)"
            )),
            "{md}"
        );
        // The masked LM's seed 4, which the shared variants lack, stays out of their
        // differences from it: -0.1, -0.1, -0.05 on seeds 1-3 (sd 0.0289): -0.0833 +- 4.303 *
        // 0.0289 / sqrt(3) = [-0.155, -0.012].
        assert!(
            md.contains(&format!(
                "{b} - separate = -0.083 [-0.155, -0.012] (paired by seed, on the 3 seeds both have): separate (worse) higher (the interval excludes 0)"
            )),
            "{md}"
        );
    }

    /// Planted cosines: the effect size of collocation is the gap (collocated - matched) per
    /// seed with a t interval: MLM gaps 0.30, 0.31, 0.32: 0.310 +- 4.303 * 0.01 / sqrt(3) =
    /// [0.285, 0.335]; the causal LM's 0.20 each time; their difference, seed s against seed
    /// s (0.10, 0.11, 0.12), the same half-width: 0.110 [0.085, 0.135].
    #[test]
    fn the_objective_section_gives_the_collocation_gap_as_an_effect_size() {
        let exp = name(Experiment::Objective);
        let clm = Cast::default().clm;
        let mut rows = Vec::new();
        for (m, gaps) in [
            (ModelId::Mlm, [0.30, 0.31, 0.32]),
            (clm, [0.20, 0.20, 0.20]),
        ] {
            for (seed, g) in (1..).zip(gaps) {
                let t = TidyRow::template(exp, m.name(), "embedding");
                let values = [("collocated_cosine", 0.5 + g), ("matched_cosine", 0.5)];
                rows.extend(t.measures("collocation", 400, &values).map(|r| TidyRow {
                    seed: Some(seed),
                    ..r
                }));
            }
        }
        // An untied model's output matrix is read beside the embeddings, named as such.
        for seed in 1..=3 {
            let t = TidyRow::template(exp, ModelId::MlmUntied.name(), "lm_head");
            let values = [("collocated_cosine", 0.6), ("matched_cosine", 0.5)];
            rows.extend(t.measures("collocation", 400, &values).map(|r| TidyRow {
                seed: Some(seed),
                ..r
            }));
        }
        // The untied control, where a config trains it: its z and gap read beside the untied
        // masked LM's (z 20, 21, 22 against 18, 18.5, 17.5: differences 2, 2.5, 4.5, sd 1.32,
        // 3.000 +- 4.303 * 1.32 / sqrt(3) = [-0.286, 6.286] paired by seed, where Welch's would
        // exclude 0; gaps 0.10 each against 0.05: 0.050 [0.050, 0.050]).
        for (m, z, g) in [
            (ModelId::MlmUntied, [20.0, 21.0, 22.0], 0.10),
            (ModelId::NoAttentionUntied, [18.0, 18.5, 17.5], 0.05),
        ] {
            for (seed, z) in (1..).zip(z) {
                let t = TidyRow::template(exp, m.name(), "embedding");
                let values = [
                    ("z_collocated", z),
                    ("collocated_cosine", 0.5 + g),
                    ("matched_cosine", 0.5),
                ];
                rows.extend(t.measures("collocation", 400, &values).map(|r| TidyRow {
                    seed: Some(seed),
                    ..r
                }));
            }
        }
        let mut src = sources_with(Experiment::Objective, rows);
        src.cast.no_attention_untied = Some(ModelId::NoAttentionUntied);
        let md = findings(&src);
        let (u, c) = (
            ModelId::MlmUntied.label(),
            ModelId::NoAttentionUntied.label(),
        );
        assert!(
            md.contains(&format!(
                "- embedding matrix, {u} - {c}: 3.000 [-0.286, 6.286] (paired by seed, 3 seeds): no difference shown"
            )),
            "{md}"
        );
        assert!(
            md.contains(&format!("- effect size, embedding matrix, {u} - {c}: cosine gap 0.050 [0.050, 0.050] (seeds only, paired by seed, 3 seeds): {u} higher")),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "(a t interval over seeds): MLM 0.310 [0.285, 0.335] (seeds only); {} 0.200 [0.200, 0.200] (seeds only); {u} 0.100 [0.100, 0.100] (seeds only); {} output matrix 0.100 [0.100, 0.100] (seeds only); {c} 0.050 [0.050, 0.050] (seeds only)\n",
                clm.label(),
                ModelId::MlmUntied.label()
            )),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "effect size, embedding matrix, MLM - {}: cosine gap 0.110 [0.085, 0.135] (seeds only, paired by seed, 3 seeds): MLM higher",
                clm.label()
            )),
            "{md}"
        );
        // With the pairs' cosines kept, the gap and its difference come from them, their
        // interval carrying the pairs: the untied MLM's 200 collocated pairs at 0.6 and 0.8
        // alternately and 150 matched at 0.5 (gap 0.2 every seed: no seed term, the pairs'
        // alone), the control's collocated all at 0.55 (gap 0.05, no spread at all).
        let mut items = Vec::new();
        for (m, colloc) in [
            (ModelId::MlmUntied, [0.6, 0.8]),
            (ModelId::NoAttentionUntied, [0.55, 0.55]),
        ] {
            for seed in 1..=3 {
                for (kind, values) in [
                    (
                        "collocated",
                        (0..200).map(|i| Some(colloc[i % 2])).collect::<Vec<_>>(),
                    ),
                    ("matched", vec![Some(0.5); 150]),
                ] {
                    items.push(output::ItemRow {
                        model: m.name().into(),
                        representation: "embedding".into(),
                        layer: None,
                        benchmark: "collocation".into(),
                        kind: kind.into(),
                        seed: Some(seed),
                        values: output::encode_cosines(&values),
                    });
                }
            }
        }
        src.evidence = Some(crate::exp::evidence::from_rows(
            items,
            &Benchmarks {
                analogy: Vec::new(),
                similarity: Vec::new(),
            },
        ));
        let md = findings(&src);
        let line = md
            .lines()
            .find(|l| l.starts_with("- effect size: "))
            .unwrap();
        let mlm = line.split(&format!("; {u} ")).nth(1).unwrap();
        let (est, rest) = mlm.split_once(" [").unwrap();
        assert_eq!(est, "0.200", "{line}");
        let bounds: Vec<f64> = rest
            .split(']')
            .next()
            .unwrap()
            .split(", ")
            .map(|b| b.parse().unwrap())
            .collect();
        // sd 0.1 over 200 collocated pairs: 1.96 * 0.1 / sqrt(200) = 0.0139 each side.
        assert!(
            ((bounds[1] - bounds[0]) / 2.0 - 0.0139).abs() < 0.003,
            "{line}"
        );
        assert!(
            line.ends_with(&format!("; {c} 0.050 [0.050, 0.050]")),
            "{line}"
        );
        assert!(
            line.contains(
                "could not be read, so pairs that share a word are drawn as if independent"
            ),
            "{line}"
        );
        // Given the pairs' words (here every pair its own two), the gap resamples through
        // them, and the line says so.
        let words = |n: usize, p: &str| -> Vec<(String, String)> {
            (0..n)
                .map(|i| (format!("{p}{i}"), format!("{p}-{i}")))
                .collect()
        };
        let ev = src.evidence.as_mut().unwrap();
        ev.set_collocation_words(&words(200, "c"), &words(150, "m"))
            .unwrap();
        let md = findings(&src);
        assert!(
            md.contains("the interval carrying the pairs (both groups resampled through the pairs' words, as similarity pairs are"),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "- effect size, embedding matrix, {u} - {c}: cosine gap 0.150 ["
            )),
            "{md}"
        );
        assert!(
            md.contains(&format!("(pairs and seeds): {u} higher")),
            "{md}"
        );
        assert!(
            md.contains(&format!(
                "effect size, embedding matrix, MLM - {}: cosine gap 0.110 [0.085, 0.135] (seeds only, paired by seed, 3 seeds): MLM higher",
                clm.label()
            )),
            "{md}"
        );
    }

    /// Planted weight geometry against the initialisation: CKA(W_Q, W_K) of two heads per seed
    /// (trained 0.29 and 0.31 + 0.01 (s - 1), so seed means 0.30, 0.31, 0.32, null 0.05; W0 0.20
    /// with null 0.20): raw differences 0.10, 0.11, 0.12 give 0.110 +- 4.303 * 0.01 / sqrt(3) =
    /// [0.085, 0.135], excesses 0.25, 0.26, 0.27 against 0 give 0.260 [0.235, 0.285]. The
    /// activations' CKA and null equal to the untrained model's: 0 with a zero-width interval.
    /// The embedding through a head, measured for the trained model only, gets no line.
    #[test]
    fn weight_geometry_is_read_against_the_same_seeds_initialisation() {
        let exp = name(Experiment::Qkv);
        let mut rows = Vec::new();
        let mut push = |model: ModelId, rep: &str, bench: &str, metric: &str, seed, value| {
            rows.push(TidyRow {
                layer: Some(1),
                benchmark: bench.into(),
                metric: metric.into(),
                value,
                seed: Some(seed),
                ..TidyRow::template(exp, model.name(), rep)
            })
        };
        for seed in 1..=3u64 {
            let shift = 0.01 * (seed - 1) as f64;
            for (h, trained) in [(0, 0.29), (1, 0.31)] {
                let head = format!("head-{h}");
                let (t, i) = ("attention-trained", "attention-initialisation");
                push(ModelId::Mlm, t, &head, "cka_q_k", seed, trained + shift);
                push(ModelId::Mlm, t, &head, "cka_q_k_null", seed, 0.05);
                push(ModelId::Mlm, i, &head, "cka_q_k", seed, 0.20);
                push(ModelId::Mlm, i, &head, "cka_q_k_null", seed, 0.20);
            }
            for m in [ModelId::Mlm, ModelId::Untrained] {
                push(
                    m,
                    "attention-activations",
                    "all-heads",
                    "cka_q_k",
                    seed,
                    0.7,
                );
                push(
                    m,
                    "attention-activations",
                    "all-heads",
                    "cka_q_k_null",
                    seed,
                    0.1,
                );
            }
            let e = "embedding-q-head-0";
            push(ModelId::Mlm, e, "geometry", "cka_with_embedding", seed, 0.5);
            push(
                ModelId::Mlm,
                e,
                "geometry",
                "cka_with_embedding_null",
                seed,
                0.01,
            );
            // The trained E through the initial head: 0.40, 0.42, 0.44 (differences 0.10,
            // 0.08, 0.06: mean 0.08, sd 0.02, t(2) half-width 4.303 * 0.02 / sqrt 3 = 0.050).
            let through_initial = 0.38 + 0.02 * seed as f64;
            push(
                ModelId::Mlm,
                e,
                "geometry",
                "cka_with_embedding_initial_head",
                seed,
                through_initial,
            );
            push(
                ModelId::Mlm,
                e,
                "geometry",
                "cka_with_embedding_random_projections",
                seed,
                0.3,
            );
        }
        // What training changed, W - W0: CKA 0.09 and 0.11 + 0.01 (s - 1) (seed means 0.10,
        // 0.11, 0.12), null 0.05, cosine 0.02.
        let mut updates = rows.clone();
        for seed in 1..=3u64 {
            for (h, c) in [(0, 0.09), (1, 0.11)] {
                let row = |metric: &str, value| TidyRow {
                    layer: Some(1),
                    benchmark: format!("head-{h}"),
                    metric: metric.into(),
                    value,
                    seed: Some(seed),
                    ..TidyRow::template(exp, ModelId::Mlm.name(), "attention-updates")
                };
                updates.push(row("cka_q_k", c + 0.01 * (seed - 1) as f64));
                updates.push(row("cka_q_k_null", 0.05));
                updates.push(row("cos_q_k", 0.02));
            }
        }
        let md = findings(&sources_with(Experiment::Qkv, updates));
        assert!(md.contains("- MLM with separate W_Q, W_K, W_V, what training changed (W - W0, mean over layers and heads, t interval over 3 seeds): linear CKA(W_Q - W_Q0, W_K - W_K0) 0.110 [0.085, 0.135], its permutation null 0.050 [0.050, 0.050], CKA above the null 0.060 [0.035, 0.085]; cosine 0.020 [0.020, 0.020] (the updates have no initialisation of their own to be read against: the null is their only reference)\n"), "{md}");
        // The trained matrices are read against W0 alone, not against a null by themselves.
        assert!(!md.contains("trained W_Q, W_K: linear CKA"), "{md}");
        let lines = init_reference(&sources_with(Experiment::Qkv, rows));
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(
            lines[3].ends_with("against through fresh Gaussian projections of the same shape (10 draws) 0.300 [0.300, 0.300], over 3 seeds: difference 0.200 [0.200, 0.200]: trained head higher (the interval excludes 0)"),
            "{}",
            lines[3]
        );
        assert_eq!(lines[2], "linear CKA(E W^h, E) of the trained E through each trained layer-1 head 0.500 [0.500, 0.500] against through the same seed's initial head (a random projection of the same shape) 0.420 [0.370, 0.470], over 3 seeds: difference 0.080 [0.030, 0.130]: trained head higher (the interval excludes 0)");
        assert_eq!(lines[0], "linear CKA(W_Q, W_K), each layer and head, over 3 seeds: raw, trained 0.310 [0.285, 0.335] and at initialisation 0.200 [0.200, 0.200], trained - initial 0.110 [0.085, 0.135]: trained higher (the interval excludes 0); above its permutation null, trained 0.260 [0.235, 0.285] and at initialisation 0.000 [0.000, 0.000], trained - initial 0.260 [0.235, 0.285]: trained higher (the interval excludes 0)");
        assert!(
            lines[1].contains("raw, trained 0.700 [0.700, 0.700] and at initialisation 0.700 [0.700, 0.700], trained - initial 0.000 [0.000, 0.000]: no difference shown"),
            "{}",
            lines[1]
        );
    }

    /// A comparison of two representations trained at different seed counts is read on the
    /// seeds both have, and says so: a at seeds 1-3 (seed 3 answers every question), b at 1-2;
    /// both answer half of 100 questions at seeds 1 and 2, so the difference is exactly 0.
    #[test]
    fn a_comparison_says_when_it_left_seeds_out() {
        let half: Vec<Option<bool>> = (0..100).map(|i| Some(i % 2 == 0)).collect();
        let row = |model: &str, seed: u64, outcomes: &[Option<bool>]| output::ItemRow {
            model: model.into(),
            representation: "embedding".into(),
            layer: None,
            benchmark: "q".into(),
            kind: "3CosAdd".into(),
            seed: Some(seed),
            values: output::encode_outcomes(outcomes),
        };
        let rows = vec![
            row("a", 1, &half),
            row("a", 2, &half),
            row("a", 3, &[Some(true); 100]),
            row("b", 1, &half),
            row("b", 2, &half),
        ];
        let ev = crate::exp::evidence::from_rows(
            rows,
            &Benchmarks {
                analogy: Vec::new(),
                similarity: Vec::new(),
            },
        );
        let line = comparison(
            &ev,
            &fixed("A", "a", "embedding"),
            &fixed("B", "b", "embedding"),
            "q",
        )
        .unwrap();
        assert!(
            line.starts_with("A 0.500 [") && line.contains("on the same 100 items and the 2 seeds both have: difference 0.000 [0.000, 0.000]"),
            "{line}"
        );
        // The same seeds on both sides: nothing said.
        let same = comparison(
            &ev,
            &fixed("B", "b", "embedding"),
            &fixed("B", "b", "embedding"),
            "q",
        )
        .unwrap();
        assert!(same.contains("on the same 100 items: difference"), "{same}");
    }

    /// Contextuality on sentences through the final LayerNorm, and the untied masked LM beside
    /// its own attention control: planted seed values (intra-sentence excess 0.10, 0.12, 0.14
    /// for the untied MLM: 0.120 [0.070, 0.170]; 0.30 for its control every seed).
    #[test]
    fn contextuality_reads_sentences_through_the_norm_and_the_untied_pair() {
        let exp = name(Experiment::Contextuality);
        let mut rows = Vec::new();
        for seed in 1..=3u64 {
            let mut push = |m: ModelId, metric: &str, value: f64| {
                rows.push(TidyRow {
                    layer: Some(1),
                    benchmark: "contextuality-sentences-norm".into(),
                    metric: metric.into(),
                    value,
                    n: 99,
                    seed: Some(seed),
                    ..TidyRow::template(exp, m.name(), "contextual")
                })
            };
            push(ModelId::Mlm, "self_similarity", 0.5);
            push(ModelId::Mlm, "intra_sentence_excess", 0.2);
            push(
                ModelId::MlmUntied,
                "intra_sentence_excess",
                0.08 + 0.02 * seed as f64,
            );
            push(ModelId::NoAttentionUntied, "intra_sentence_excess", 0.3);
        }
        let mut src = sources_with(Experiment::Contextuality, rows);
        src.cast.no_attention_untied = Some(ModelId::NoAttentionUntied);
        let md = findings(&src);
        let (u, c) = (
            ModelId::MlmUntied.label(),
            ModelId::NoAttentionUntied.label(),
        );
        assert!(
            md.contains("Read as the raw residual stream: not kept"),
            "{md}"
        );
        assert!(
            md.contains(
                "Read as each layer through the final LayerNorm on WikiText-2's sentences (self-similarity over the 99 tracked words with at least 5 occurrences there):\n"
            ),
            "{md}"
        );
        // Only the columns with values: the tied control and the untied MLM's adjusted
        // self-similarity were not planted.
        assert!(md.contains(&format!("| MEV - null | {u}: intra-sentence - null | {c}: intra-sentence - null |\n|---|---|---|---|---|---|---|---|---|\n| 1 | 0.500 [0.500, 0.500] | - | - | 0.200 [0.200, 0.200] | - | - | 0.120 [0.070, 0.170] | 0.300 [0.300, 0.300] |")), "{md}");
    }

    /// A round's curves along the budget (written by its `--exp dynamics` under round/) get a
    /// section of their own, headed apart from the study's.
    #[test]
    fn a_rounds_budget_curves_are_read_under_a_heading_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let row = super::super::budget::BudgetRow {
            model: "transformer-mlm".into(),
            representation: "embedding".into(),
            benchmark: "WS-353-ALL".into(),
            quantity: "score".into(),
            tokens_seen: 1_000_000,
            from_tokens: 1_000_000,
            value: 0.25,
            lo: 0.2,
            hi: 0.3,
            seeds: 10,
            items: 308,
            other_model: String::new(),
            other_representation: String::new(),
        };
        let path = dir.path().join("round/dynamics/budget.csv");
        crate::output::write_csv(&path, std::slice::from_ref(&row)).unwrap();
        write(dir.path(), Cast::default(), None, true).unwrap();
        let md = std::fs::read_to_string(dir.path().join("REPORT.md")).unwrap();
        assert!(
            md.contains("### Round: How each answer moves with the budget\n"),
            "{md}"
        );
        assert!(
            md.contains("- transformer-mlm embedding (10 seeds): 1.0M 0.250 [0.200, 0.300]\n"),
            "{md}"
        );
        assert!(!md.contains("\n### How each answer moves"), "{md}");
    }

    /// Planted per-seed contextuality: the masked LM's self-similarity - anisotropy rises from
    /// layer 0 to 1 by 0.21, 0.22, 0.23 (seeds 1-3: mean 0.22, sd 0.01, t(2) 4.303, half-width
    /// 0.0248) and not after. Its intra-sentence - null at layer 2 (0.2, 0.3, 0.4 at seeds 1-3)
    /// against the control's (0.55, 0.65, 0.75 at seeds 2-4) is -0.25 at both seeds they share,
    /// a zero-width interval: paired by seed id (by position it would be -0.35; unpaired, Welch's
    /// interval would be about +-0.3 wide). The untied masked LM's layers are read on the seeds
    /// both have (2 and 3), not by position.
    #[test]
    fn contextuality_differences_pair_layers_and_models_by_seed() {
        let exp = name(Experiment::Contextuality);
        let mut rows = Vec::new();
        let mut push = |m: ModelId, seed: u64, layer: usize, metric: &str, value: f64| {
            rows.push(TidyRow {
                layer: Some(layer),
                benchmark: "contextuality".into(),
                metric: metric.into(),
                value,
                seed: Some(seed),
                ..TidyRow::template(exp, m.name(), "contextual")
            })
        };
        for seed in 1..=3u64 {
            let s = seed as f64;
            push(ModelId::Mlm, seed, 0, "self_similarity", 0.9);
            push(ModelId::Mlm, seed, 0, "self_similarity_adjusted", 0.4);
            for l in [1, 2] {
                push(ModelId::Mlm, seed, l, "self_similarity", 0.9);
                push(
                    ModelId::Mlm,
                    seed,
                    l,
                    "self_similarity_adjusted",
                    0.6 + 0.01 * s,
                );
            }
            push(
                ModelId::Mlm,
                seed,
                2,
                "intra_sentence_excess",
                0.1 * (s + 1.0),
            );
            push(
                ModelId::NoAttention,
                seed + 1,
                2,
                "intra_sentence_excess",
                0.1 * (s + 1.0) + 0.35,
            );
            push(
                ModelId::MlmUntied,
                seed,
                0,
                "self_similarity_adjusted",
                0.1 * s,
            );
            push(
                ModelId::MlmUntied,
                seed + 1,
                1,
                "self_similarity_adjusted",
                0.1 * (s + 1.0) + 0.05,
            );
        }
        let src = sources_with(Experiment::Contextuality, rows);
        let md = findings(&src);
        let (mlm, untied, control) = (
            ModelId::Mlm.label(),
            ModelId::MlmUntied.label(),
            ModelId::NoAttention.label(),
        );
        for line in [
            format!("- {mlm}, self-similarity - anisotropy, layer 1 - layer 0 (3 seeds): 0.220 [0.195, 0.245]: layer 1 higher (the interval excludes 0)\n"),
            format!("- {mlm}, self-similarity - anisotropy, layer 2 - layer 1 (3 seeds): 0.000 [0.000, 0.000]: no difference shown (the interval includes 0)\n"),
            format!("- {mlm}, self-similarity - anisotropy, layer 2 - layer 0 (3 seeds): 0.220 [0.195, 0.245]: layer 2 higher (the interval excludes 0)\n"),
            format!("- {untied}, self-similarity - anisotropy, layer 1 - layer 0 (2 seeds): 0.050 [0.050, 0.050]: layer 1 higher (the interval excludes 0)\n"),
            format!("- intra-sentence - null at layer 2, {mlm} - {control} (2 seeds): -0.250 [-0.250, -0.250]: {control} higher (the interval excludes 0)\n"),
        ] {
            assert!(md.contains(&line), "{line}\n{md}");
        }
        // No untrained model was planted: no line invents it.
        assert!(
            !md.contains(&format!("- {}", ModelId::Untrained.label())),
            "{md}"
        );
        assert!(
            !md.contains(&format!("{mlm} - {}", ModelId::Untrained.label())),
            "{md}"
        );
    }

    /// Planted cosines on a 40-pair WS-353: the untied masked LM's output matrix ranks the
    /// pairs as the humans do (rho 1 for every seed), its input embedding in reverse (rho -1):
    /// the head block reads output - input as 2 with a zero-width interval; the comparisons
    /// with models that have no outcomes are left out, not invented.
    #[test]
    fn the_untied_models_input_embedding_and_output_matrix_are_read_apart() {
        use crate::output::{encode_cosines, ItemRow};
        let gold: Vec<f64> = (0..40).map(|i| i as f64).collect();
        let text: String = gold
            .iter()
            .enumerate()
            .map(|(i, g)| format!("w{i}\tv{i}\t{g}\n"))
            .collect();
        let set = analysis::SimilaritySet::parse(
            &text,
            std::path::Path::new("ws.txt"),
            "WS-353-ALL".into(),
        )
        .unwrap();
        let untied = Cast::default().untied.0;
        let mut rows = Vec::new();
        for seed in 1..=3 {
            for (rep, sign) in [("lm_head", 1.0), ("embedding", -1.0)] {
                let cos: Vec<Option<f64>> = gold.iter().map(|g| Some(sign * g / 40.0)).collect();
                rows.push(ItemRow {
                    model: untied.name().into(),
                    representation: rep.into(),
                    layer: None,
                    benchmark: "WS-353-ALL".into(),
                    kind: "cosine".into(),
                    seed: Some(seed),
                    values: encode_cosines(&cos),
                });
            }
        }
        let benchmarks = Benchmarks {
            analogy: Vec::new(),
            similarity: vec![set],
        };
        let src = Sources {
            evidence: Some(crate::exp::evidence::from_rows(rows, &benchmarks)),
            ..sources_without_measurements()
        };
        let mut md = String::new();
        head_confound(&mut md, &src, src.evidence.as_ref().unwrap());
        let line = format!(
            "- WS-353-ALL: {l} output matrix 1.000 [1.000, 1.000] vs {l} input embedding -1.000 [-1.000, -1.000] on the same 40 items: difference 2.000 [2.000, 2.000], {l} output matrix higher",
            l = untied.label()
        );
        assert!(md.contains(&line), "{md}");
        assert_eq!(md.matches("\n- ").count(), 1, "{md}");
    }

    /// A planted Google analogy set: two sections of 10 word pairs each, every ordered pair of
    /// distinct pairs a question (2 x 90 = 180 questions).
    fn planted_analogies() -> analysis::AnalogySet {
        let mut text = String::new();
        for s in 0..2 {
            text.push_str(&format!(": s{s}\n"));
            for p in 0..10 {
                for q in 0..10 {
                    if p != q {
                        text.push_str(&format!("a{s}{p} b{s}{p} a{s}{q} b{s}{q}\n"));
                    }
                }
            }
        }
        analysis::AnalogySet::parse(&text, Path::new("q.txt"), ANALOGY.into()).unwrap()
    }

    /// One seed's outcomes of `model`'s aggregated `layer` on the planted analogies, under
    /// `kind` (3CosAdd or one of Linzen's baselines).
    fn layer_outcomes(
        model: ModelId,
        layer: usize,
        kind: &str,
        seed: u64,
        outcomes: &[Option<bool>],
    ) -> crate::output::ItemRow {
        crate::output::ItemRow {
            model: model.name().into(),
            representation: "aggregated".into(),
            layer: Some(layer),
            benchmark: ANALOGY.into(),
            kind: kind.into(),
            seed: Some(seed),
            values: crate::output::encode_outcomes(outcomes),
        }
    }

    /// The frozen section reads both untied tables on WS-353, each analogy score beside
    /// Linzen's baselines, and the untied no-attention control's gains, from planted outcomes:
    /// an output matrix that ranks every pair as the humans do beside an input embedding that
    /// ranks them in reverse; a best layer right on every analogy question whose ignore-a
    /// baseline is right on the same ones (so no offset beyond the neighbourhood) and whose
    /// only-b baseline is right on none.
    #[test]
    fn the_frozen_section_reads_both_untied_tables_linzens_baselines_and_the_control() {
        use crate::output::{encode_cosines, encode_outcomes, ItemRow};
        let gold: Vec<f64> = (0..40).map(|i| i as f64).collect();
        let ws = analysis::SimilaritySet::parse(
            &(0..40)
                .map(|i| format!("u{i}\tv{i}\t{i}\n"))
                .collect::<String>(),
            Path::new("ws.txt"),
            "WS-353-ALL".into(),
        )
        .unwrap();
        let google = planted_analogies();
        let n_q = 180;
        let benchmarks = Benchmarks {
            analogy: vec![google],
            similarity: vec![ws],
        };
        let (trained, frozen, control) = (
            ModelId::MlmUntied,
            ModelId::FrozenUntied,
            ModelId::NoAttentionUntied,
        );
        let item = |m: ModelId, rep: &str, layer, bench: &str, kind: &str, seed, values| ItemRow {
            model: m.name().into(),
            representation: rep.into(),
            layer,
            benchmark: bench.into(),
            kind: kind.into(),
            seed: Some(seed),
            values,
        };
        let up: Vec<Option<f64>> = gold.iter().map(|&g| Some(g)).collect();
        let down: Vec<Option<f64>> = gold.iter().map(|&g| Some(-g)).collect();
        let (all, none) = (vec![Some(true); n_q], vec![Some(false); n_q]);
        let mut items = Vec::new();
        let mut rows = Vec::new();
        for seed in 1..=3u64 {
            for m in [trained, frozen] {
                items.push(item(
                    m,
                    "embedding",
                    None,
                    "WS-353-ALL",
                    "cosine",
                    seed,
                    encode_cosines(&down),
                ));
                items.push(item(
                    m,
                    "lm_head",
                    None,
                    "WS-353-ALL",
                    "cosine",
                    seed,
                    encode_cosines(&up),
                ));
                for layer in [1, 2] {
                    let right = if m == trained && layer == 2 {
                        &all
                    } else {
                        &none
                    };
                    for (kind, outcomes) in [
                        ("3CosAdd", right),
                        (crate::exp::evidence::BASELINE_IGNORE_A, right),
                        (crate::exp::evidence::BASELINE_ONLY_B, &none),
                    ] {
                        items.push(item(
                            m,
                            "aggregated",
                            Some(layer),
                            ANALOGY,
                            kind,
                            seed,
                            encode_outcomes(outcomes),
                        ));
                    }
                }
            }
            for (m, g) in [
                (trained, 1.0 + seed as f64 / 10.0),
                (frozen, 0.3 + seed as f64 / 100.0),
                (control, 0.4 + seed as f64 / 100.0),
            ] {
                let t = TidyRow::template(name(Experiment::Frozen), m.name(), "training");
                let values = [
                    ("heldout_loss", 5.0),
                    ("context_gain_at_mask", g),
                    ("context_gain_at_mask_lo", g - 0.05),
                    ("context_gain_at_mask_hi", g + 0.05),
                ];
                rows.extend(t.measures("training", 5280, &values).map(|r| TidyRow {
                    seed: Some(seed),
                    ..r
                }));
            }
        }
        let mut src = sources_with(Experiment::Frozen, rows);
        src.cast.no_attention_untied = Some(control);
        src.evidence = Some(crate::exp::evidence::from_rows(items, &benchmarks));
        let md = findings(&src);
        let line = |start: &str| -> String {
            md.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no line {start:?} in\n{md}"))
                .to_string()
        };
        let tables = line("- WS-353: trained, output matrix 1.000");
        assert!(
            tables.contains("vs trained, input embedding -1.000")
                && tables.contains("difference 2.000"),
            "{tables}"
        );
        assert!(line("- WS-353: frozen, output matrix 1.000")
            .contains("frozen, input embedding -1.000"));
        let ignore_a = line("- analogy 3CosAdd against Linzen's ignore-a baseline: trained, best aggregated (layer 2, chosen on dev) 1.000");
        assert!(
            ignore_a.contains("difference 0.000 [0.000, 0.000]"),
            "{ignore_a}"
        );
        let only_b = line("- analogy 3CosAdd against Linzen's only-b baseline: trained, best aggregated (layer 2, chosen on dev) 1.000");
        assert!(
            only_b.contains("difference 1.000 [1.000, 1.000]"),
            "{only_b}"
        );
        // The control's gains 0.41, 0.42, 0.43 (seed mean 0.42); the frozen model's 0.31,
        // 0.32, 0.33: frozen - control is -0.10 at every seed, a zero-width interval paired by
        // seed (Welch's, blind to the pairing, would be -0.100 +- 0.023).
        let per_seed = line(&format!("- {MASK_GAIN}, {}", control.label()));
        assert!(
            per_seed.contains("+0.410 [+0.360, +0.460], +0.420")
                && per_seed.contains("(3 of 3 above 0)"),
            "{per_seed}"
        );
        let d = line(&format!(
            "- gain at [MASK], seed means (nats per target): {} 0.420",
            control.label()
        ));
        assert!(
            d.contains(&format!(
                "frozen - {} = -0.100 [-0.100, -0.100] (paired by seed, 3 seeds)",
                control.label()
            )),
            "{d}"
        );
        // Frozen - trained: 0.31 - 1.1, 0.32 - 1.2, 0.33 - 1.3 = -0.79, -0.88, -0.97 (sd 0.09):
        // -0.88 +- 4.303 * 0.09 / sqrt(3) = [-1.104, -0.656].
        let d = line("- gain at [MASK], seed means (nats per target): frozen 0.320");
        assert!(
            d.contains("frozen - trained = -0.880 [-1.104, -0.656] (paired by seed, 3 seeds)"),
            "{d}"
        );
    }

    /// The analogy section gives every aggregated layer beside Linzen's baselines, on all
    /// questions, from planted outcomes: each layer right on every question; its only-b
    /// baseline right on all of them at layer 0 and on none above; its ignore-a baseline right
    /// on all of them at every layer. The causal LM's layer, kept without its baselines, has no
    /// row; with only such layers there is no table.
    #[test]
    fn the_analogy_section_gives_every_layer_beside_linzens_baselines() {
        use crate::output::ItemRow;
        let google = planted_analogies();
        let benchmarks = Benchmarks {
            analogy: vec![google],
            similarity: Vec::new(),
        };
        let (all, none) = (vec![Some(true); 180], vec![Some(false); 180]);
        let mut items = Vec::new();
        for seed in 1..=3u64 {
            for layer in 0..=2usize {
                let only_b = if layer == 0 { &all } else { &none };
                for (kind, outcomes) in [
                    ("3CosAdd", &all),
                    (crate::exp::evidence::BASELINE_ONLY_B, only_b),
                    (crate::exp::evidence::BASELINE_IGNORE_A, &all),
                ] {
                    items.push(layer_outcomes(ModelId::Mlm, layer, kind, seed, outcomes));
                }
            }
        }
        // The causal LM's layers without their baselines (measured before they were kept).
        let items_of_clm = |outcomes: &[Option<bool>]| -> Vec<ItemRow> {
            (1..=3u64)
                .map(|seed| layer_outcomes(Cast::default().clm, 1, "3CosAdd", seed, outcomes))
                .collect()
        };
        items.extend(items_of_clm(&all));
        let mut src = sources_with(Experiment::Analogy, Vec::new());
        src.evidence = Some(crate::exp::evidence::from_rows(items, &benchmarks));
        let mut md = String::new();
        analogy_section(&mut md, &src, src.evidence.as_ref().unwrap());
        let one = "1.000 [1.000, 1.000]";
        let zero = "0.000 [0.000, 0.000] not shown";
        for (l, only_b) in [
            (0, zero.to_string()),
            (1, format!("{one} above")),
            (2, format!("{one} above")),
        ] {
            let row = format!("| MLM | {l} | {one} (n 180) | {only_b} | {zero} |");
            assert!(md.contains(&row), "no row {row:?} in\n{md}");
        }
        assert_eq!(md.matches("| MLM | ").count(), 3, "{md}");
        let clm = format!("| {} | ", Cast::default().clm.label());
        assert!(!md.contains(&clm), "{md}");
        assert_eq!(md.matches("Every aggregated layer").count(), 1, "{md}");
        // The masked LM's layers kept without their baselines too: no row, so no table.
        let mut no_baselines: Vec<ItemRow> = items_of_clm(&all);
        no_baselines
            .extend((1..=3u64).map(|seed| layer_outcomes(ModelId::Mlm, 1, "3CosAdd", seed, &all)));
        src.evidence = Some(crate::exp::evidence::from_rows(no_baselines, &benchmarks));
        let mut md = String::new();
        analogy_section(&mut md, &src, src.evidence.as_ref().unwrap());
        assert!(!md.contains("Every aggregated layer"), "{md}");
        assert!(!md.contains("| MLM | "), "{md}");
    }

    /// A difference cell for each side of 0 and for a difference with no interval (one seed):
    /// the same rule as the comparison lines' verdict.
    #[test]
    fn a_difference_cell_names_its_side_of_zero() {
        let iv = |estimate: f64, lo: f64, hi: f64| Interval {
            estimate,
            lo,
            hi,
            level: 0.95,
        };
        let d = |diff: Interval, seeds: Vec<u64>, seeds_left_out| Difference {
            a: analysis::evidence::Estimate {
                interval: iv(0.5, 0.4, 0.6),
                items: 10,
            },
            b: analysis::evidence::Estimate {
                interval: iv(0.5, 0.4, 0.6),
                items: 10,
            },
            diff,
            mcnemar: Vec::new(),
            seeds,
            seeds_left_out,
        };
        let cell =
            |diff, seeds: &[u64], left_out| difference_cell(&d(diff, seeds.to_vec(), left_out));
        assert_eq!(
            cell(iv(0.2, 0.1, 0.3), &[1, 2], false),
            "0.200 [0.100, 0.300] above"
        );
        assert_eq!(
            cell(iv(-0.2, -0.3, -0.1), &[1, 2], false),
            "-0.200 [-0.300, -0.100] below"
        );
        assert_eq!(
            cell(iv(0.0, -0.1, 0.1), &[1, 2], true),
            "0.000 [-0.100, 0.100] not shown, on the 2 seeds both have"
        );
        assert_eq!(
            cell(iv(0.2, f64::NAN, f64::NAN), &[1], true),
            "0.200 [interval needs 2+ seeds] no interval, on the one seed both have"
        );
        assert_eq!(
            verdict(&iv(0.2, f64::NAN, f64::NAN), "a", "b"),
            "no interval"
        );
        assert_eq!(
            verdict(&iv(0.2, 0.1, 0.3), "a", "b"),
            "a higher (the interval excludes 0)"
        );
    }

    /// The every-layer table's cells from mixed planted outcomes: each difference cell is the
    /// paired difference on all questions (`Half::All`), not on the test half, whatever its
    /// sign (a layer below its baseline says so); where the baseline was kept at fewer seeds
    /// than the layer, the cell says it is read on the seeds both have while the score beside
    /// it reads every seed of the layer.
    #[test]
    fn the_every_layer_tables_cells_are_all_question_differences_on_shared_seeds() {
        let google = planted_analogies();
        let benchmarks = Benchmarks {
            analogy: vec![google],
            similarity: Vec::new(),
        };
        // Right on question q when `pick(q, seed)`: the layer on most questions, only-b on
        // fewer (the layer above it), ignore-a on more (the layer below it), differing by seed
        // and between the halves, so that an all-question and a test-half cell differ.
        let outcomes = |pick: &dyn Fn(usize, u64) -> bool, seed| -> Vec<Option<bool>> {
            (0..180).map(|q| Some(pick(q, seed))).collect()
        };
        // The layer's fourth seed, which only-b lacks, is right on fewer questions.
        let layer =
            |q: usize, s: u64| (q * 7 + s as usize) % 10 < if s == 4 { 3 } else { 6 } || q < 30;
        let only_b = |q: usize, s: u64| (q * 3 + s as usize) % 10 < 2;
        let ignore_a = |q: usize, s: u64| (q * 7 + s as usize) % 10 < 8 || q % 5 == 0;
        let mut items = Vec::new();
        let row = |kind: &str, seed, outcomes: &[Option<bool>]| {
            layer_outcomes(ModelId::Mlm, 1, kind, seed, outcomes)
        };
        for seed in 1..=4u64 {
            items.push(row("3CosAdd", seed, &outcomes(&layer, seed)));
            // only-b kept at seeds 1-3 only; ignore-a at every seed of the layer.
            if seed <= 3 {
                items.push(row(
                    crate::exp::evidence::BASELINE_ONLY_B,
                    seed,
                    &outcomes(&only_b, seed),
                ));
            }
            items.push(row(
                crate::exp::evidence::BASELINE_IGNORE_A,
                seed,
                &outcomes(&ignore_a, seed),
            ));
        }
        let ev = crate::exp::evidence::from_rows(items, &benchmarks);
        let mut src = sources_with(Experiment::Analogy, Vec::new());
        let rep = Rep::new(ModelId::Mlm.name(), "aggregated", Some(1));
        let base = |kind| {
            Rep::new(
                ModelId::Mlm.name(),
                &baseline_rep("aggregated", kind),
                Some(1),
            )
        };
        let d_b = ev
            .difference(&rep, &base(BASELINE_ONLY_B), ANALOGY, Half::All)
            .unwrap();
        let d_a = ev
            .difference(&rep, &base(BASELINE_IGNORE_A), ANALOGY, Half::All)
            .unwrap();
        let t_b = ev
            .difference(&rep, &base(BASELINE_ONLY_B), ANALOGY, Half::Test)
            .unwrap();
        let t_a = ev
            .difference(&rep, &base(BASELINE_IGNORE_A), ANALOGY, Half::Test)
            .unwrap();
        assert!(
            (d_b.diff.lo > 0.0, d_a.diff.hi < 0.0) == (true, true),
            "{d_b:?} {d_a:?}"
        );
        assert_eq!(
            (d_b.seeds.as_slice(), d_b.seeds_left_out),
            (&[1, 2, 3][..], true)
        );
        assert!(!d_a.seeds_left_out);
        assert_ne!(fmt_iv(&d_b.diff), fmt_iv(&t_b.diff));
        assert_ne!(fmt_iv(&d_a.diff), fmt_iv(&t_a.diff));
        let score = ev.score(&rep, ANALOGY, Half::All).unwrap();
        assert_eq!(score.items, 180);
        let want = format!(
            "| MLM | 1 | {} (n 180) | {} above, on the 3 seeds both have | {} below |",
            fmt_iv(&score.interval),
            fmt_iv(&d_b.diff),
            fmt_iv(&d_a.diff)
        );
        // The score reads the layer's four seeds, not the three it shares with only-b.
        assert_ne!(fmt_iv(&score.interval), fmt_iv(&d_b.a.interval));
        src.evidence = Some(ev);
        let mut md = String::new();
        analogy_section(&mut md, &src, src.evidence.as_ref().unwrap());
        assert!(md.contains(&want), "no row {want:?} in\n{md}");
    }

    /// The Q/K/V comparison's loss line names the block the losses are on: the whole held-out
    /// split, or its test half where the config splits off a dev half.
    #[test]
    fn the_qkv_loss_line_names_the_block_it_is_read_on() {
        let rows: Vec<TidyRow> = (1..=2u64)
            .flat_map(|seed| {
                TidyRow::template(name(Experiment::Qkv), ModelId::Mlm.name(), "training")
                    .measures("training", 5280, &[("heldout_loss", 5.0 + seed as f64)])
                    .map(move |r| TidyRow {
                        seed: Some(seed),
                        ..r
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut src = sources_with(Experiment::Qkv, rows);
        let md = findings(&src);
        assert!(
            md.contains("Held-out masked-token loss over the whole held-out split"),
            "{md}"
        );
        src.dev_split = true;
        let md = findings(&src);
        assert!(
            md.contains("Held-out masked-token loss over the test half of the held-out split"),
            "{md}"
        );
    }

    /// One experiment's planted tidy rows and their summary, the others missing.
    fn sources_with(exp: Experiment, rows: Vec<TidyRow>) -> Sources {
        let mut src = sources_without_measurements();
        for (e, t) in src.tables.iter_mut() {
            if *e == exp {
                *t = Some(Table(super::super::comparisons::summarise(
                    name(exp),
                    &rows,
                )));
            }
        }
        src.rows = vec![(exp, rows)];
        src
    }

    /// The paper's experiments with no table, no rows and no per-item outcomes.
    fn sources_without_measurements() -> Sources {
        Sources {
            tables: PAPER.iter().map(|&e| (e, None)).collect(),
            stale: Vec::new(),
            rows: Vec::new(),
            evidence: Some(crate::exp::evidence::from_rows(
                Vec::new(),
                &Benchmarks {
                    analogy: Vec::new(),
                    similarity: Vec::new(),
                },
            )),
            cast: Cast::default(),
            views: String::new(),
            dev_split: false,
        }
    }

    #[test]
    fn a_missing_experiment_is_named() {
        let src = Sources {
            stale: vec![Experiment::Qkv],
            ..sources_without_measurements()
        };
        let md = findings(&src);
        assert!(md.contains("Not measured yet: run `cargo run -p experiments -- --exp analogy`"));
        assert!(md.contains("--exp contextuality"));
        assert!(md.contains("Not regenerated yet: `qkv/` predates the current measures"));
    }
}
