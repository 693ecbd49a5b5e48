//! The seven comparisons by name, and a measurement summarised over seeds: what the views
//! ([`super::paper`]), the report ([`super::report`]) and the intervals ([`super::evidence`])
//! share. A leaf.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::cli::Experiment;
use crate::output::TidyRow;

/// The experiments `all` runs (besides `backends`), in order.
pub const PAPER: [Experiment; 7] = [
    Experiment::Analogy,
    Experiment::Similarity,
    Experiment::Layers,
    Experiment::Qkv,
    Experiment::Frozen,
    Experiment::Objective,
    Experiment::Contextuality,
];

pub fn name(exp: Experiment) -> &'static str {
    match exp {
        Experiment::Analogy => "analogy",
        Experiment::Similarity => "similarity",
        Experiment::Layers => "layers",
        Experiment::Qkv => "qkv",
        Experiment::Frozen => "frozen",
        Experiment::Objective => "objective",
        Experiment::Contextuality => "contextuality",
        _ => "other",
    }
}

/// The comparisons between tables the README's similarity answers make, read along the budget
/// ([`super::budget`]) and at every corpus size ([`super::corpus_size`]): ((model,
/// representation) a, b, how a report names a - b). Seed s of one model against seed s of the
/// other, as `analysis::evidence::Evidence::difference` pairs them.
pub const TABLE_DIFFERENCES: [((&str, &str), (&str, &str), &str); 3] = [
    (
        ("word2vec-sgns", "static"),
        ("transformer-mlm", "embedding"),
        "word2vec SGNS - masked LM (tied) embedding",
    ),
    (
        ("transformer-mlm", "embedding"),
        ("transformer-mlm-untied-head", "embedding"),
        "masked LM: tied embedding - untied input embedding",
    ),
    (
        ("transformer-mlm-untied-head", "lm_head"),
        ("transformer-mlm-untied-head", "embedding"),
        "masked LM, untied head: output matrix - input embedding",
    ),
];

/// Which side of 0 an interval `[lo, hi]` lies on, where it excludes 0 (`None` where it
/// includes 0 or is undefined).
pub fn side_of_zero(lo: f64, hi: f64) -> Option<&'static str> {
    if lo > 0.0 {
        Some("above 0")
    } else if hi < 0.0 {
        Some("below 0")
    } else {
        None
    }
}

/// Mean, spread and sample size of one measurement over seeds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    pub experiment: String,
    pub model: String,
    pub representation: String,
    pub layer: Option<usize>,
    pub benchmark: String,
    pub metric: String,
    pub mean: f64,
    /// Sample standard deviation over seeds (0 with one seed).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    pub seeds: usize,
    pub n: usize,
    pub oov: usize,
}

/// Mean, sample standard deviation (0 for one value), min and max of a non-empty sample.
pub(crate) struct Spread {
    pub mean: f64,
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub(crate) fn of(v: &[f64]) -> Spread {
        let k = v.len() as f64;
        let mean = v.iter().sum::<f64>() / k;
        let sd = if v.len() > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
        } else {
            0.0
        };
        Spread {
            mean,
            sd,
            // f64::min and max skip a NaN, which would give an undefined mean a defined
            // range: an undefined seed leaves the whole summary undefined.
            min: v.iter().copied().fold(f64::INFINITY, nan_or(f64::min)),
            max: v.iter().copied().fold(f64::NEG_INFINITY, nan_or(f64::max)),
        }
    }
}

/// `f`, except that a NaN on either side gives NaN.
fn nan_or(f: fn(f64, f64) -> f64) -> impl Fn(f64, f64) -> f64 {
    move |a, b| {
        if a.is_nan() || b.is_nan() {
            f64::NAN
        } else {
            f(a, b)
        }
    }
}

type Key = (String, String, Option<usize>, String, String);

fn key(r: &TidyRow) -> Key {
    (
        r.model.clone(),
        r.representation.clone(),
        r.layer,
        r.benchmark.clone(),
        r.metric.clone(),
    )
}

/// Groups rows over seeds. NaN values (a benchmark with no usable item) stay NaN.
pub fn summarise(experiment: &str, rows: &[TidyRow]) -> Vec<Summary> {
    let mut groups: BTreeMap<Key, Vec<&TidyRow>> = BTreeMap::new();
    for r in rows {
        groups.entry(key(r)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|((model, representation, layer, benchmark, metric), rs)| {
            let v: Vec<f64> = rs.iter().map(|r| r.value).collect();
            let Spread { mean, sd, min, max } = Spread::of(&v);
            Summary {
                experiment: experiment.into(),
                model,
                representation,
                layer,
                benchmark,
                metric,
                mean,
                sd,
                min,
                max,
                seeds: v.len(),
                n: rs[0].n,
                oov: rs[0].oov,
            }
        })
        .collect()
}

/// Lookups over one experiment's summaries.
pub struct Table(pub Vec<Summary>);

impl Table {
    pub fn get(
        &self,
        model: &str,
        representation: &str,
        layer: Option<usize>,
        benchmark: &str,
        metric: &str,
    ) -> Option<&Summary> {
        self.0.iter().find(|s| {
            s.model == model
                && s.representation == representation
                && s.layer == layer
                && s.benchmark == benchmark
                && s.metric == metric
        })
    }

    /// The layers present for a representation, in order.
    pub fn layers(&self, model: &str, representation: &str) -> Vec<usize> {
        let set: BTreeSet<usize> = self
            .0
            .iter()
            .filter(|s| s.model == model && s.representation == representation)
            .filter_map(|s| s.layer)
            .collect();
        set.into_iter().collect()
    }

    /// The layer whose seed mean is highest on (benchmark, metric).
    pub fn best_layer(
        &self,
        model: &str,
        representation: &str,
        benchmark: &str,
        metric: &str,
    ) -> Option<&Summary> {
        self.0
            .iter()
            .filter(|s| {
                s.model == model
                    && s.representation == representation
                    && s.benchmark == benchmark
                    && s.metric == metric
                    && s.layer.is_some()
                    && s.mean.is_finite()
            })
            .max_by(|a, b| a.mean.total_cmp(&b.mean))
    }
}

/// Sets with fewer than 150 pairs *used* (both words in vocabulary, not pairs in the file; the
/// `n` of a similarity row): random vectors reach +-0.3 Spearman on them, so they never
/// carry a conclusion alone (marked with * in figures and the report).
pub fn is_small_set(pairs_used: usize) -> bool {
    pairs_used < 150
}
