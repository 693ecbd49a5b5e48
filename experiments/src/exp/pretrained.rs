//! `--exp pretrained --model DIR`: a Hugging Face checkpoint directory (config.json,
//! model.safetensors, tokenizer.json; BERT-family or GPT-2, read by the `pretrained` crate)
//! through the study's measures on the study's word list and corpus:
//!
//! * its input embedding as a word table (each word the mean of its pieces; a word that becomes
//!   `[UNK]` is out of vocabulary), and every layer's vectors mean-pooled over up to N
//!   occurrences in the corpus's training rows (`aggregated`, [`analysis::layered::aggregated`]),
//!   and every layer's vectors of each word read alone (`decontextualized`,
//!   [`analysis::layered::decontextualized`]), scored on every analogy and similarity set
//!   exactly as the study's tables are, with the study's collocation measures (`scores.csv`),
//!   and each score's interval over the benchmark's items (`intervals.csv`);
//! * every layer's contextuality (Ethayarajh 2019: self-similarity, intra-sentence similarity,
//!   anisotropy, explained variance, each beside its chance level) on the study's training
//!   rows and, where the config names them, on real sentences, measured as the study measures
//!   its models ([`analysis::geometry::contextuality`] through
//!   [`analysis::subword::SubwordReader`]; `contextuality.csv`);
//! * every attention head's W_Q, W_K, W_V (cosine, linear CKA) and its bilinear form
//!   `W_Q W_K^T` (symmetry, directionality, alignment with the identity;
//!   [`analysis::bilinear`]), each beside independent Gaussian matrices of the same shapes (a
//!   model at initialisation; the measures are scale-free) and beside Q of the head against K
//!   of the other heads of its layer (`heads.csv`);
//! * the score each head's form gives two words' embeddings, `(e_i M e_j + e_j M e_i)/2`,
//!   against human similarity judgments and against the embeddings' cosine, beside the same
//!   for Gaussian forms and for M = I, the plain dot product (`pairs.csv`), each with an
//!   interval over the pairs (bootstrap), and, on the dot product's row, the null for the best
//!   of the model's heads (per draw, the largest score over Gaussian forms of every head's
//!   shape: what taking the best of that many heads gives by chance). The score is read
//!   on the raw embedding rows (the mean of a word's pieces): no position embedding, no
//!   LayerNorm, no projection biases (so no key-salience term), which the model's layer 1
//!   applies before its heads; later layers' forms are read on the same rows, as the question
//!   asks what W_Q and W_K make of two words, not what the model computes there.
//!
//! Writes `<out>/pretrained/<checkpoint directory name>/` (see [`out_name`] for runs on another
//! corpus or config), with `source.toml` naming the config and corpus that wrote it.

use std::path::Path;

use analysis::bilinear::{self, FormScores};
use analysis::geometry::{self, LayerQkv};
use analysis::inference::SplitMix64;
use analysis::layered;
use analysis::subword::SubwordReader;
use anyhow::Context;
use burn::tensor::Device;
use serde::Serialize;

use crate::cli::Args;
use crate::output::{self, TidyRow};
use crate::paths;

/// Draws of the initialisation reference per measure.
const INIT_DRAWS: usize = 10;

/// A row of `heads.csv`.
#[derive(Serialize, serde::Deserialize)]
pub struct HeadRow {
    pub model: String,
    pub layer: usize,
    /// A head's index, or `all` for the layer's whole `W_Q W_K^T` (the sum over heads).
    pub head: String,
    pub measure: String,
    pub value: f64,
    /// The mean, and standard deviation, over draws of independent Gaussian W_Q, W_K, W_V of
    /// the same shapes: a model at initialisation (BERT and GPT-2 draw N(0, 0.02²); every
    /// measure here is scale-free, so only the shapes matter).
    pub gaussian: f64,
    pub gaussian_sd: f64,
    /// The mean over the layer's other heads h' of the measure on Q^h against K^h' (empty
    /// where it has no meaning: V, and a layer's whole form).
    pub cross_head: Option<f64>,
}

/// A row of `pairs.csv`.
#[derive(Serialize, serde::Deserialize)]
pub struct PairRow {
    pub model: String,
    pub benchmark: String,
    pub layer: usize,
    pub head: String,
    /// Pairs whose both words have a row.
    pub pairs: usize,
    pub spearman_human: f64,
    pub spearman_cosine: f64,
    /// The same for forms of independent Gaussian W_Q, W_K (on the same embeddings): mean and
    /// standard deviation over draws. Empty for the `dot` row (M = I, the dot product).
    pub gaussian_spearman_human: Option<f64>,
    pub gaussian_spearman_human_sd: Option<f64>,
    pub gaussian_spearman_cosine: Option<f64>,
    /// `spearman_human`'s 95% interval over the pairs (bootstrap; [`bilinear::BenchmarkPairs::human_interval`]).
    #[serde(default)]
    pub spearman_human_lo: Option<f64>,
    #[serde(default)]
    pub spearman_human_hi: Option<f64>,
    /// On the `dot` row only: the null for the best of the model's single heads, the largest
    /// `spearman_human` over Gaussian forms of every head's shape, one per draw (mean and
    /// standard deviation over draws): what the best of that many random heads reaches.
    #[serde(default)]
    pub gaussian_best_head_human: Option<f64>,
    #[serde(default)]
    pub gaussian_best_head_human_sd: Option<f64>,
    /// On the `dot` row only: the best single head's `spearman_human` minus the dot
    /// product's, paired on the same pairs, with its 95% interval over the words
    /// ([`bilinear::BenchmarkPairs::human_difference_interval`]). The head is picked on
    /// these pairs, so the difference leans towards the head: an interval below zero holds
    /// all the more, one above zero would not.
    #[serde(default)]
    pub best_head_minus_dot: Option<f64>,
    #[serde(default)]
    pub best_head_minus_dot_lo: Option<f64>,
    #[serde(default)]
    pub best_head_minus_dot_hi: Option<f64>,
}

fn normal(rng: &mut SplitMix64, std: f64) -> f32 {
    let u = 1.0 - rng.next_f32() as f64;
    let v = rng.next_f32() as f64;
    (std * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
}

/// W_Q, W_K, W_V of `w`'s shapes drawn from N(0, std²).
fn drawn(w: &LayerQkv, std: f64, rng: &mut SplitMix64) -> LayerQkv {
    let mut m = || {
        (0..w.d_in * w.d_out)
            .map(|_| normal(rng, std))
            .collect::<Vec<f32>>()
    };
    LayerQkv {
        q: m(),
        k: m(),
        v: m(),
        ..w.clone()
    }
}

fn head_columns(w: &[f32], l: &LayerQkv, h: usize) -> Vec<f32> {
    (0..l.d_in)
        .flat_map(|i| {
            w[i * l.d_out + h * l.d_k..i * l.d_out + (h + 1) * l.d_k]
                .iter()
                .copied()
        })
        .collect()
}

/// Mean and sample standard deviation.
fn mean_sd(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|y| (y - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, v.sqrt())
}

/// Head h's cos(Q, K), CKA(Q, K), cos(Q, V), cos(K, V), CKA(Q, V), CKA(K, V) (what [`geometry::head_geometry`]
/// computes, without its permutation nulls).
fn matrix_measures(l: &LayerQkv, h: usize) -> [f64; 6] {
    let (q, k, v) = (
        head_columns(&l.q, l, h),
        head_columns(&l.k, l, h),
        head_columns(&l.v, l, h),
    );
    [
        geometry::cosine(&q, &k),
        geometry::linear_cka(&q, &k, l.d_in, l.d_k),
        geometry::cosine(&q, &v),
        geometry::cosine(&k, &v),
        geometry::linear_cka(&q, &v, l.d_in, l.d_k),
        geometry::linear_cka(&k, &v, l.d_in, l.d_k),
    ]
}

/// Cosine and CKA of Q^h against K^h' for h' != h, the mean over h'.
fn cross_head_matrices(l: &LayerQkv, h: usize) -> (f64, f64) {
    let qh = head_columns(&l.q, l, h);
    let others: Vec<(f64, f64)> = (0..l.n_heads)
        .filter(|&g| g != h)
        .map(|g| {
            let kg = head_columns(&l.k, l, g);
            (
                geometry::cosine(&qh, &kg),
                geometry::linear_cka(&qh, &kg, l.d_in, l.d_k),
            )
        })
        .collect();
    let n = others.len() as f64;
    (
        others.iter().map(|x| x.0).sum::<f64>() / n,
        others.iter().map(|x| x.1).sum::<f64>() / n,
    )
}

/// A score of one table with its 95% interval over the benchmark's items (one checkpoint, so
/// no seed term: the interval says how far another sample of items could move the score, not
/// what another training run would give). Benchmark `collocation`: the collocation gaps, over
/// pairs; `contextuality` and `contextuality-sentences`: Ethayarajh's measures, over words
/// (self-similarity), random tokens (anisotropy) and sequences (intra-sentence).
#[derive(Debug, Serialize, serde::Deserialize)]
pub struct IntervalRow {
    pub model: String,
    pub representation: String,
    pub layer: Option<usize>,
    pub benchmark: String,
    /// `spearman` or `3CosAdd`; `only-b` and `ignore-a` are Linzen's (2016) baselines on the
    /// same questions; `minus_embedding` is the score minus the input embedding's on the items
    /// both answer, `minus_only_b` 3CosAdd minus the only-b baseline. For collocation
    /// `collocated_minus_matched` and `shared_minus_matched`; for contextuality the measure's
    /// name in contextuality.csv.
    pub metric: String,
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
    pub items: usize,
    /// The 95% band of Spearman's rho for these pairs under random pairing with the human
    /// scores (empty for analogies, whose chance is in scores.csv).
    pub chance_lo: Option<f64>,
    pub chance_hi: Option<f64>,
}

impl IntervalRow {
    /// A row of `interval` over `items` items, with no chance band.
    fn new(
        model: &str,
        representation: &str,
        layer: Option<usize>,
        benchmark: &str,
        metric: &str,
        interval: analysis::inference::Interval,
        items: usize,
    ) -> Self {
        Self {
            model: model.to_string(),
            representation: representation.to_string(),
            layer,
            benchmark: benchmark.to_string(),
            metric: metric.to_string(),
            estimate: interval.estimate,
            lo: interval.lo,
            hi: interval.hi,
            items,
            chance_lo: None,
            chance_hi: None,
        }
    }
}

/// Every table's score on every benchmark with an item interval (analogy questions resampled
/// by the word pairs they are built from, as the study's are), its difference from the input
/// embedding's, and for analogies Linzen's baselines and 3CosAdd's margin over only-b.
fn item_intervals(
    name: &str,
    items: Vec<crate::output::ItemRow>,
    benchmarks: &super::eval::Benchmarks,
) -> Vec<IntervalRow> {
    use super::evidence::{baseline_rep, Half, Rep, BASELINE_IGNORE_A, BASELINE_ONLY_B};
    let mut reps: Vec<(String, Option<usize>)> = items
        .iter()
        .filter(|r| r.kind != BASELINE_ONLY_B && r.kind != BASELINE_IGNORE_A)
        .map(|r| (r.representation.clone(), r.layer))
        .collect();
    reps.dedup();
    let evidence = super::evidence::from_rows(items, benchmarks);
    let embedding = Rep::new(name, "embedding", None);
    let mut rows = Vec::new();
    let mut push = |rep: &Rep,
                    benchmark: &str,
                    metric: &str,
                    e: analysis::inference::Interval,
                    n: usize,
                    band: Option<analysis::inference::Interval>| {
        rows.push(IntervalRow {
            chance_lo: band.map(|b| b.lo),
            chance_hi: band.map(|b| b.hi),
            ..IntervalRow::new(
                name,
                &rep.representation,
                rep.layer,
                benchmark,
                metric,
                e,
                n,
            )
        })
    };
    for (representation, layer) in &reps {
        let rep = Rep::new(name, representation, *layer);
        for set in &benchmarks.similarity {
            let b = set.name.as_str();
            if let Some(e) = evidence.score(&rep, b, Half::All) {
                push(
                    &rep,
                    b,
                    "spearman",
                    e.interval,
                    e.items,
                    evidence.chance_band(&rep, b, Half::All),
                );
            }
            if rep != embedding {
                if let Some(d) = evidence.difference(&rep, &embedding, b, Half::All) {
                    push(&rep, b, "minus_embedding", d.diff, d.a.items, None);
                }
            }
        }
        for set in &benchmarks.analogy {
            let b = set.name.as_str();
            if let Some(e) = evidence.score(&rep, b, Half::All) {
                push(&rep, b, "3CosAdd", e.interval, e.items, None);
            }
            for kind in [BASELINE_ONLY_B, BASELINE_IGNORE_A] {
                let base = Rep::new(name, &baseline_rep(representation, kind), *layer);
                if let Some(e) = evidence.score(&base, b, Half::All) {
                    push(&rep, b, kind, e.interval, e.items, None);
                }
            }
            let only_b = Rep::new(name, &baseline_rep(representation, BASELINE_ONLY_B), *layer);
            if let Some(d) = evidence.difference(&rep, &only_b, b, Half::All) {
                push(&rep, b, "minus_only_b", d.diff, d.a.items, None);
            }
            if rep != embedding {
                if let Some(d) = evidence.difference(&rep, &embedding, b, Half::All) {
                    push(&rep, b, "minus_embedding", d.diff, d.a.items, None);
                }
            }
        }
    }
    rows
}

/// Bytes that pooling `words` words over `n_layers` layers of `width` keeps: its f64 running
/// sums, and the f32 tables (pooled and decontextualized, one per layer each).
fn pooling_memory(n_layers: usize, words: usize, width: usize) -> (f64, f64) {
    let cells = (n_layers * words * width) as f64;
    (cells * 8.0, 2.0 * cells * 4.0)
}

/// `--exp pretrained`'s own config, whose runs write under the checkpoint's bare name.
const DEFAULT_CONFIG: &str = "experiments/configs/pretrained.toml";

/// The directory a run writes under `out/pretrained/`: the checkpoint's name, followed by `@`
/// and the corpus file's stem when the corpus is not the default config's, or else the config
/// file's stem when another config is used, so that runs of one checkpoint on two corpora or
/// two configs never overwrite each other.
fn out_name(
    model: &str,
    corpus: &Path,
    default_corpus: Option<&Path>,
    other_config: Option<&Path>,
) -> String {
    let stem = |p: &Path| {
        let file = p
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = file.strip_suffix(".gz").unwrap_or(&file);
        let file = file.strip_suffix(".toml").unwrap_or(file);
        file.strip_suffix(".txt").unwrap_or(file).to_string()
    };
    let same_corpus = default_corpus.is_some_and(|d| paths::resolve(d) == paths::resolve(corpus));
    match (same_corpus, other_config) {
        (false, _) => format!("{model}@{}", stem(corpus)),
        (true, Some(config)) => format!("{model}@{}", stem(config)),
        (true, None) => model.to_string(),
    }
}

/// What a run's directory records of the run that wrote it (`source.toml`): its config and
/// corpus files. Two runs can fall on one directory name ([`out_name`]: the default config with
/// `--corpus X`, and a config of its own reading X); the second is refused instead of
/// overwriting the first's measurements.
#[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
struct Source {
    config: String,
    corpus: String,
}

impl Source {
    const FILE: &'static str = "source.toml";

    /// `config` and `corpus` as paths under the repository when they are there (so that a
    /// committed record reads the same in every clone), else as given.
    fn new(config: &Path, corpus: &Path) -> Self {
        let shown = |p: &Path| {
            let p = paths::resolve(p);
            let full = p.canonicalize().unwrap_or(p);
            let root = paths::repo_root();
            let root = root.canonicalize().unwrap_or(root);
            full.strip_prefix(&root)
                .map(Path::to_path_buf)
                .unwrap_or(full)
                .display()
                .to_string()
        };
        Self {
            config: shown(config),
            corpus: shown(corpus),
        }
    }

    /// Refuses `dir` when its `source.toml` names another config or corpus (a directory without
    /// one, or none at all, is this run's to write).
    fn check(&self, dir: &Path) -> anyhow::Result<()> {
        let file = dir.join(Self::FILE);
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("{}: cannot read", file.display())),
        };
        let kept: Source = toml::from_str(&text).with_context(|| {
            format!("{}: not a record of a run (config, corpus)", file.display())
        })?;
        if &kept != self {
            anyhow::bail!(
                "{} holds the measurements of config {} on corpus {}; this run (config {}, corpus {}) would overwrite them: pass another --out, or remove that directory",
                dir.display(),
                kept.config,
                kept.corpus,
                self.config,
                self.corpus
            );
        }
        Ok(())
    }

    fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let file = dir.join(Self::FILE);
        let text = toml::to_string(self)?;
        corpus::io::write_atomic(&file, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("{}: cannot write", file.display()))
    }
}

/// Bytes that one contextuality pass keeps at most, per layer: `occurrences` tracked
/// occurrence vectors, 64 tokens per position for the intra-sentence null
/// (`geometry::contextuality`'s per-position reservoir) and the anisotropy sample of about
/// sqrt(2 pairs) tokens with every pair's cosine (f64); the report keeps two passes' pair cosines.
fn contextuality_memory(
    n_layers: usize,
    width: usize,
    occurrences: usize,
    seq_len: usize,
    pairs: usize,
) -> f64 {
    let tokens = ((2.0 * pairs as f64).sqrt().ceil() as usize).max(4 * seq_len);
    let vectors = (occurrences + 64 * seq_len + tokens) * width * 4;
    let cosines = 2 * tokens * tokens.saturating_sub(1) / 2 * 8;
    (n_layers * (vectors + cosines)) as f64
}

/// This machine's memory in bytes (`MemTotal` of /proc/meminfo), where there is one.
fn memory_total() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// Resamples behind the collocation and contextuality intervals (as many as the item
/// bootstrap's).
const RESAMPLES: usize = 2000;

/// A table's collocation gaps (collocated and shared-context pairs minus their matched pairs'
/// mean cosine) with intervals over the pairs, as rows of `intervals.csv` (benchmark
/// `collocation`).
fn collocation_intervals(
    table: &word2vec::WordVectors,
    pairs: &analysis::collocation::CollocationPairs,
    template: &TidyRow,
) -> Vec<IntervalRow> {
    let g = analysis::collocation::collocation_gaps(table, pairs, RESAMPLES, 0x636f_6c6c);
    [
        (
            "collocated_minus_matched",
            g.collocated_minus_matched,
            g.collocated_pairs,
        ),
        (
            "shared_minus_matched",
            g.shared_minus_matched,
            g.shared_pairs,
        ),
    ]
    .into_iter()
    .map(|(metric, i, n)| {
        IntervalRow::new(
            &template.model,
            &template.representation,
            template.layer,
            "collocation",
            metric,
            i,
            n,
        )
    })
    .collect()
}

/// Every layer's contextuality with intervals over its words, sequences and tokens
/// ([`analysis::geometry::LayerContextuality::intervals`]), as rows of `intervals.csv`
/// (representation `contextual`, benchmark as in contextuality.csv).
fn contextuality_intervals(
    name: &str,
    ctx: &[analysis::geometry::LayerContextuality],
    benchmark: &str,
    seed: u64,
) -> Vec<IntervalRow> {
    let mut rows = Vec::new();
    for l in ctx {
        let iv = l.intervals(RESAMPLES, seed ^ l.layer as u64);
        let (words, sequences, tokens) = (l.words, l.items.intra_sentence.len(), l.items.tokens);
        for (metric, i, n) in [
            ("self_similarity", iv.self_similarity, words),
            ("anisotropy", iv.anisotropy, tokens),
            (
                "self_similarity_adjusted",
                iv.self_similarity_adjusted,
                words,
            ),
            ("intra_sentence", iv.intra_sentence, sequences),
            ("intra_sentence_excess", iv.intra_sentence_excess, sequences),
        ] {
            rows.push(IntervalRow::new(
                name,
                "contextual",
                Some(l.layer),
                benchmark,
                metric,
                i,
                n,
            ));
        }
    }
    rows
}

/// Ethayarajh (2019)'s published per-layer statistics of BERT-base and GPT-2
/// (`scripts/ethayarajh_reference.py`; origin and licence in data/README.md).
pub(crate) const ETHAYARAJH: &str = "data/reference/ethayarajh2019-embedding-space-stats.csv";

/// Bommasani, Davis & Cardie (2020)'s per-layer similarity scores of bert-base-uncased and gpt2
/// (pieces and contexts averaged), read off their figures (`scripts/bommasani_reference.py`;
/// origin, precision and licence in data/README.md). Statistic `spearman:<set>`.
pub(crate) const BOMMASANI: &str = "data/reference/bommasani2020-aggregated-similarity.csv";

/// One published value: `model`'s `statistic` at `layer` (0 = input embeddings).
#[derive(Debug, serde::Deserialize)]
pub struct ReferenceRow {
    pub model: String,
    pub layer: usize,
    pub statistic: String,
    pub value: f64,
}

/// The reference rows of `path`; a row that does not parse, or a value that is not finite, is
/// refused naming the file and the line.
pub fn read_reference(path: &Path) -> anyhow::Result<Vec<ReferenceRow>> {
    let mut r = csv::Reader::from_path(path)
        .with_context(|| format!("{}: cannot read the reference rows", path.display()))?;
    let mut rows = Vec::new();
    for (i, row) in r.deserialize::<ReferenceRow>().enumerate() {
        // Line 1 is the header.
        let line = i + 2;
        let row = row.map_err(|e| anyhow::anyhow!("{}: line {line}: {e}", path.display()))?;
        if !row.value.is_finite() {
            anyhow::bail!(
                "{}: line {line}: the value of {} {} at layer {} is not finite",
                path.display(),
                row.model,
                row.statistic,
                row.layer
            );
        }
        rows.push(row);
    }
    if rows.is_empty() {
        anyhow::bail!("{}: holds no reference row", path.display());
    }
    Ok(rows)
}

/// How many transformer layers the checkpoint has (its tables are layers 0..=this).
fn layers_of(ckpt: &pretrained::Checkpoint) -> usize {
    ckpt.model.qkv_weights().len()
}

/// `contextuality-<statistic>.{svg,png}`: the checkpoint's per-layer self-similarity,
/// intra-sentence similarity and anisotropy (on the corpus's rows and, where measured, on
/// sentences) beside Ethayarajh's BERT-base and GPT-2 on STS sentences, against relative depth
/// (layer / number of layers), as models of different depths are compared.
fn contextuality_figures(
    out: &Path,
    name: &str,
    rows: &[TidyRow],
    n_layers: usize,
    reference: &[ReferenceRow],
    sentences: Option<&Path>,
) -> anyhow::Result<()> {
    // The sentences named by their file (`wikitext-2-valid sentences`).
    let sentences_label = sentences
        .and_then(|p| p.file_name())
        .map(|f| {
            let f = f.to_string_lossy();
            let stem = f.split('.').next().unwrap_or(&f).to_string();
            format!("{stem} sentences")
        })
        .unwrap_or_else(|| "sentences".into());
    let depth = |layer: usize, of: usize| layer as f64 / of.max(1) as f64;
    for (ours, theirs, title) in [
        ("self_similarity", "self_similarity", "Self-similarity"),
        (
            "intra_sentence",
            "intra_sentence_similarity",
            "Intra-sentence similarity",
        ),
        ("anisotropy", "anisotropy", "Anisotropy"),
    ] {
        let mut series = Vec::new();
        for (benchmark, label) in [
            ("contextuality-sentences", sentences_label.as_str()),
            ("contextuality", "corpus windows"),
        ] {
            let points: Vec<(f64, f64, Option<(f64, f64)>)> = rows
                .iter()
                .filter(|r| r.benchmark == benchmark && r.metric == ours)
                .filter_map(|r| r.layer.map(|l| (depth(l, n_layers), r.value, None)))
                .collect();
            if !points.is_empty() {
                series.push(crate::plot::Series {
                    name: format!("{name}, {label}"),
                    points,
                });
            }
        }
        for model in ["bert-base-cased", "gpt2"] {
            let of_model: Vec<&ReferenceRow> = reference
                .iter()
                .filter(|r| r.model == model && r.statistic == theirs)
                .collect();
            let deepest = of_model.iter().map(|r| r.layer).max().unwrap_or(0);
            let points = of_model
                .iter()
                .map(|r| (depth(r.layer, deepest), r.value, None))
                .collect::<Vec<_>>();
            if !points.is_empty() {
                series.push(crate::plot::Series {
                    name: format!("{model}, STS sentences (Ethayarajh 2019)"),
                    points,
                });
            }
        }
        crate::plot::lines(
            &out.join(format!("contextuality-{}", ours.replace('_', "-"))),
            &format!("{title} per layer: {name} beside published BERT-base and GPT-2"),
            "relative depth (layer / layers; 0 = input embeddings)",
            title,
            &series,
        )?;
    }
    Ok(())
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let dir = args.model.as_deref().context(
        "--exp pretrained needs --model DIR: a checkpoint directory with config.json, model.safetensors and tokenizer.json",
    )?;
    let dir = paths::resolve(Path::new(dir));
    let cfg = super::settings::load_config(args, "pretrained")?;
    let device = Device::flex();
    let ckpt = pretrained::load(&dir, &device)?;
    let tokenizer = pretrained::Tokenizer::from_file(&dir.join("tokenizer.json"))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pretrained".into());
    let init_std = ckpt.architecture.initializer_range();
    let corpus_path = args
        .corpus
        .clone()
        .unwrap_or_else(|| cfg.corpus.path.clone());
    let default_config = paths::resolve(Path::new(DEFAULT_CONFIG));
    let default_corpus = if default_config.exists() {
        Some(
            crate::config::load_file::<super::settings::Config>(&default_config)?
                .corpus
                .path,
        )
    } else {
        None
    };
    let other_config = args
        .config
        .as_ref()
        .filter(|c| paths::resolve(c) != default_config);
    let out = args.out.join("pretrained").join(out_name(
        &name,
        &corpus_path,
        default_corpus.as_deref(),
        other_config.map(|c| c.as_path()),
    ));
    let source = Source::new(
        args.config.as_deref().unwrap_or(Path::new(DEFAULT_CONFIG)),
        &corpus_path,
    );
    source.check(&out)?;
    println!(
        "{}: {:?}, weights stored as {:?}; initialisation reference N(0, {init_std}^2)",
        dir.display(),
        ckpt.architecture,
        ckpt.stored_dtype
    );

    // The study's word list: the corpus vocabulary in frequency order.
    let corpus = super::load_corpus(args, &cfg.corpus)?;
    // The first `restrict_vocab` words by corpus frequency, as for the study's tables, before
    // any is dropped as [UNK] (so the rows reach no further down the list than ours do).
    let words: Vec<String> = (0..corpus.vocab.len().min(cfg.eval.restrict_vocab))
        .map(|i| corpus.vocab.word(i as u32).to_string())
        .collect();
    let e = ckpt.model.token_embedding_matrix();
    let d = e.dims()[1];
    let e: Vec<f32> = e.into_data().try_into_vec::<f32>().expect("f32 weights");
    let (table, pieces) = analysis::subword::piece_mean_table(&e, d, &tokenizer, &words);
    println!(
        "{} of the corpus's {} words have a row ({} of them one piece); the rest become [UNK]",
        table.words().len(),
        words.len(),
        pieces.iter().filter(|&&p| p == 1).count()
    );
    let benchmarks = super::eval::benchmarks(&[])?;
    if args.heads_only {
        std::fs::create_dir_all(&out)
            .with_context(|| format!("{}: cannot create", out.display()))?;
        source.write(&out)?;
        heads_and_pairs(&out, &name, &ckpt, &table, &benchmarks, &cfg, init_std)?;
        println!(
            "--heads-only: wrote {}/{{heads,pairs}}.csv; the corpus measures are left as they were",
            out.display()
        );
        return Ok(());
    }
    // Collocated word pairs of the corpus and their controls, as the study draws them.
    let collocations = super::study::collocations(&corpus, &cfg.collocation);
    // Every table: analogy and similarity rows with each item's outcome, and collocation rows
    // with the gaps' intervals over pairs.
    let mut gaps = Vec::new();
    let mut score = |t: &word2vec::WordVectors, template: &TidyRow| {
        let (mut rows, items) =
            super::eval::evaluate_table_items(t, &benchmarks, &cfg.eval, template);
        rows.extend(super::study::collocation_rows(t, &collocations, template));
        gaps.extend(collocation_intervals(t, &collocations, template));
        (rows, items)
    };
    let template = TidyRow::template("pretrained", &name, "embedding");
    let (mut scores, mut items) = score(&table, &template);

    // Every layer's vectors pooled over the corpus, as the study pools its models': the same
    // sample of up to N occurrences per word in the training split's rows, each occurrence the
    // mean of its pieces' states (analysis::layered::aggregated).
    let seqs = transformer::data::Sequences::new(
        &corpus,
        cfg.training.seq_len,
        cfg.training.heldout_fraction,
    )
    .map_err(anyhow::Error::msg)?;
    let vocab_words: Vec<String> = (0..corpus.vocab.len())
        .map(|i| corpus.vocab.word(i as u32).to_string())
        .collect();
    // What pooling will cost, said before it starts: one batch of rows timed, times the
    // batches the sample needs.
    let seed = cfg.seeds.first().copied().unwrap_or(1);
    let reader = SubwordReader::new(
        &ckpt.model,
        &tokenizer,
        &vocab_words,
        Some(seqs.specials.unk),
        ckpt.architecture.max_positions(),
        &device,
    );
    let rows = analysis::layered::aggregated_rows(
        &seqs.train,
        seqs.seq_len,
        words.len(),
        cfg.pooling.max_occurrences,
        seed,
    );
    let batch = cfg.pooling.batch.max(1).min(seqs.n_train().max(1));
    let started = std::time::Instant::now();
    let _ =
        layered::Layered::word_states(&reader, &seqs.train[..batch * seqs.seq_len], seqs.seq_len);
    let per_batch = started.elapsed().as_secs_f64();
    println!(
        "pooling reads {rows} rows of {} words in batches of {batch}: about {:.1} min at {per_batch:.2} s per batch (one timed now); contextuality reads {} more rows (about {:.1} min; the sentences' rows, shorter, not counted)",
        seqs.seq_len,
        per_batch * rows.div_ceil(batch) as f64 / 60.0,
        cfg.contextuality.sequences.min(seqs.n_train()),
        per_batch * cfg.contextuality.sequences.min(seqs.n_train()).div_ceil(batch) as f64 / 60.0
    );
    // Each word alone, framed: its pieces and two special tokens. Timed by tokens against the
    // batch above, a lower bound (short rows cost more per token); the heads' and pairs' passes
    // (no corpus, Gaussian references) are not estimated.
    let alone_tokens: usize = pieces.iter().map(|&p| p + 2).sum();
    println!(
        "the decontextualized pass reads {} words alone ({alone_tokens} tokens): at least {:.1} min; the heads' and pairs' passes come after it, not estimated",
        pieces.len(),
        per_batch * alone_tokens as f64 / (batch * seqs.seq_len) as f64 / 60.0
    );
    // Memory: what the process holds now (weights, corpus, one batch's activations: measured),
    // plus what pooling keeps (f64 running sums for every word at every layer, then an f32
    // table per layer) and the decontextualized tables (as many again).
    let (n_layers, width) = (
        layered::Layered::n_layers(&reader),
        layered::Layered::width(&reader),
    );
    let gib = |bytes: f64| bytes / f64::from(1u32 << 30);
    let now = word2vec::usage::now().peak_rss_bytes as f64;
    let (sums, tables) = pooling_memory(n_layers, words.len(), width);
    let c = &cfg.contextuality;
    let context = contextuality_memory(
        n_layers,
        width,
        c.words.min(words.len()) * c.per_word,
        seqs.seq_len,
        c.pairs,
    );
    let total = now + sums + tables + context;
    let machine = memory_total();
    println!(
        "memory: {:.2} GiB at the peak so far (weights, corpus, one batch), pooling's running sums {:.2} GiB, the tables {:.2} GiB, contextuality's samples {:.2} GiB: at most about {:.1} GiB in all{}",
        gib(now),
        gib(sums),
        gib(tables),
        gib(context),
        gib(total),
        machine.map_or(String::new(), |m| format!(" of this machine's {:.1} GiB", gib(m)))
    );
    if machine.is_some_and(|m| total > m) {
        println!("warning: that is more memory than this machine has; a smaller [eval] restrict_vocab pools fewer words");
    }
    if args.estimate {
        println!("--estimate: stopping here; nothing measured or written");
        return Ok(());
    }
    let started = std::time::Instant::now();
    let pooled = analysis::subword::aggregated(
        &ckpt.model,
        &tokenizer,
        &vocab_words,
        words.len(),
        Some(seqs.specials.unk),
        &seqs.train,
        seqs.seq_len,
        cfg.pooling.max_occurrences,
        cfg.pooling.batch,
        seed,
        ckpt.architecture.max_positions(),
        &device,
        |_, _| {},
    );
    println!(
        "pooled {} words' occurrences over {} layers in {:.1} s ({} words at the full {})",
        pooled.occurrences.iter().filter(|&&c| c > 0).count(),
        pooled.tables.len(),
        started.elapsed().as_secs_f64(),
        pooled.words_at_max(),
        pooled.max_occurrences
    );
    for (l, t) in pooled.tables.iter().enumerate() {
        let template = TidyRow {
            layer: Some(l),
            ..TidyRow::template("pretrained", &name, "aggregated")
        };
        let (rows, outcomes) = score(t, &template);
        scores.extend(rows);
        items.extend(outcomes);
    }

    // Each word read alone, `[CLS] pieces [SEP]` (or the tokenizer's own frame), every layer.
    let started = std::time::Instant::now();
    let alone = layered::decontextualized(
        &reader,
        &words,
        seqs.specials.cls,
        seqs.specials.sep,
        cfg.pooling.batch,
    );
    for (l, t) in alone.iter().enumerate() {
        let template = TidyRow {
            layer: Some(l),
            ..TidyRow::template("pretrained", &name, "decontextualized")
        };
        let (rows, outcomes) = score(t, &template);
        scores.extend(rows);
        items.extend(outcomes);
    }
    println!(
        "decontextualized: {} words over {} layers in {:.1} s",
        alone[0].words().len(),
        alone.len(),
        started.elapsed().as_secs_f64()
    );
    std::fs::create_dir_all(&out).with_context(|| format!("{}: cannot create", out.display()))?;
    source.write(&out)?;
    output::write_csv(&out.join("scores.csv"), &scores)?;
    let started = std::time::Instant::now();
    let mut intervals = item_intervals(&name, items, &benchmarks);
    intervals.extend(gaps);
    println!(
        "intervals over items: {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Contextuality (Ethayarajh 2019) as the study measures its models: the same training rows
    // and tracked words, and the same sentences where the config names them.
    let started = std::time::Instant::now();
    let c = &cfg.contextuality;
    let top = words.len().min(c.top) as u32;
    let track: Vec<u32> = (0..top)
        .step_by((top as usize / c.words.max(1)).max(1))
        .collect();
    let t = |rep: &str, layer: Option<usize>| TidyRow {
        layer,
        ..TidyRow::template("pretrained", &name, rep)
    };
    let ctx = geometry::contextuality(
        &reader,
        &seqs.train,
        seqs.seq_len,
        c.sequences.min(seqs.n_train()),
        &track,
        c.per_word,
        c.pairs,
        seed,
    );
    let mut context_rows = super::study::contextuality_rows(&ctx, "contextuality", &t);
    intervals.extend(contextuality_intervals(&name, &ctx, "contextuality", seed));
    if let Some(s) = &c.sentences {
        let rows = super::study::sentence_sequences(&corpus, s, seqs.seq_len, c.sequences)?;
        let ctx = geometry::contextuality(
            &reader,
            &rows,
            seqs.seq_len,
            rows.len() / seqs.seq_len,
            &track,
            c.per_word,
            c.pairs,
            seed,
        );
        context_rows.extend(super::study::contextuality_rows(
            &ctx,
            "contextuality-sentences",
            &t,
        ));
        intervals.extend(contextuality_intervals(
            &name,
            &ctx,
            "contextuality-sentences",
            seed,
        ));
    }
    output::write_csv(&out.join("contextuality.csv"), &context_rows)?;
    output::write_csv(&out.join("intervals.csv"), &intervals)?;
    let reference = read_reference(&paths::resolve(Path::new(ETHAYARAJH)))?;
    contextuality_figures(
        &out,
        &name,
        &context_rows,
        layers_of(&ckpt),
        &reference,
        c.sentences.as_ref().map(|s| s.path.as_path()),
    )?;
    println!("contextuality: {:.1} s", started.elapsed().as_secs_f64());

    heads_and_pairs(&out, &name, &ckpt, &table, &benchmarks, &cfg, init_std)?;
    println!(
        "wrote {}/{{scores,intervals,contextuality,heads,pairs}}.csv and the contextuality figures",
        out.display()
    );
    Ok(())
}

/// Every attention head's W_Q, W_K, W_V and bilinear form (`heads.csv`) and the scores its form
/// gives the similarity benchmarks' word pairs (`pairs.csv`), each beside Gaussian forms of the
/// same shapes; the module docs say what is measured. Weights and the embedding table only: no
/// corpus pass (`--heads-only` runs this alone).
fn heads_and_pairs(
    out: &Path,
    name: &str,
    ckpt: &pretrained::Checkpoint,
    table: &word2vec::WordVectors,
    benchmarks: &super::eval::Benchmarks,
    cfg: &super::settings::Config,
    init_std: f64,
) -> anyhow::Result<()> {
    let name = name.to_string();
    let d = table.dim();
    // Heads: the trained matrices, the initialisation reference, the cross-head null.
    let layers = geometry::qkv_per_layer_pretrained(&ckpt.model);
    let mut rng = SplitMix64::new(0x7072_6574);
    let mut heads = Vec::new();
    let started = std::time::Instant::now();
    for (li, l) in layers.iter().enumerate() {
        let layer = li + 1;
        let trained = geometry::head_geometry(layer, l);
        let forms = bilinear::layer_forms(l);
        let cross = bilinear::cross_head_null(l);
        let draws: Vec<(Vec<[f64; 6]>, bilinear::LayerForms)> = (0..INIT_DRAWS)
            .map(|_| {
                let w = drawn(l, init_std, &mut rng);
                let m = (0..w.n_heads).map(|h| matrix_measures(&w, h)).collect();
                (m, bilinear::layer_forms(&w))
            })
            .collect();
        let mean = |f: &dyn Fn(&(Vec<[f64; 6]>, bilinear::LayerForms)) -> f64| {
            mean_sd(&draws.iter().map(f).collect::<Vec<f64>>())
        };
        let mut row = |head: String,
                       measure: &str,
                       value: f64,
                       gaussian: (f64, f64),
                       cross_head: Option<f64>| {
            heads.push(HeadRow {
                model: name.clone(),
                layer,
                head,
                measure: measure.into(),
                value,
                gaussian: gaussian.0,
                gaussian_sd: gaussian.1,
                cross_head,
            })
        };
        for h in 0..l.n_heads {
            let (g, f) = (&trained[h], forms.heads[h]);
            let (cos_x, cka_x) = cross_head_matrices(l, h);
            row(
                h.to_string(),
                "cos_q_k",
                g.cos_q_k,
                mean(&|d| d.0[h][0]),
                Some(cos_x),
            );
            row(
                h.to_string(),
                "cka_q_k",
                g.cka_q_k,
                mean(&|d| d.0[h][1]),
                Some(cka_x),
            );
            row(
                h.to_string(),
                "cos_q_v",
                g.cos_q_v,
                mean(&|d| d.0[h][2]),
                None,
            );
            row(
                h.to_string(),
                "cos_k_v",
                g.cos_k_v,
                mean(&|d| d.0[h][3]),
                None,
            );
            row(
                h.to_string(),
                "cka_q_v",
                g.cka_q_v,
                mean(&|d| d.0[h][4]),
                None,
            );
            row(
                h.to_string(),
                "cka_k_v",
                g.cka_k_v,
                mean(&|d| d.0[h][5]),
                None,
            );
            let forms_of = |s: &FormScores| [s.symmetry, s.directionality, s.identity_alignment];
            let names = ["symmetry", "directionality", "identity_alignment"];
            for (i, m) in names.iter().enumerate() {
                row(
                    h.to_string(),
                    m,
                    forms_of(&f)[i],
                    mean(&|d| forms_of(&d.1.heads[h])[i]),
                    Some(forms_of(&cross[h])[i]),
                );
            }
        }
        let names = ["symmetry", "directionality", "identity_alignment"];
        let of = |s: &FormScores| [s.symmetry, s.directionality, s.identity_alignment];
        for (i, m) in names.iter().enumerate() {
            row(
                "all".into(),
                m,
                of(&forms.layer)[i],
                mean(&|d| of(&d.1.layer)[i]),
                None,
            );
        }
    }
    output::write_csv(&out.join("heads.csv"), &heads)?;
    println!("heads: {:.1} s", started.elapsed().as_secs_f64());
    let started = std::time::Instant::now();

    // Scores of word pairs under each head's form, against people and against cosine, on the
    // pairs the similarity scores use (words matched as the benchmarks match them).
    let vocab =
        analysis::EvalVocab::new(&table, cfg.eval.restrict_vocab, cfg.eval.case_insensitive);
    let mut pair_rows = Vec::new();
    for set in &benchmarks.similarity {
        let Some(found) = bilinear::BenchmarkPairs::find(&table, &vocab, set) else {
            continue;
        };
        let e = table.data();
        // M = I: the plain dot product of the two embeddings, the score that is a similarity
        // by construction (layer 0).
        let dot = found.dot(e, d);
        let (dot_human, dot_cosine) = found.spearman(&dot);
        let interval = |scores: &[f64]| {
            let iv = found.human_interval(scores, RESAMPLES, 0x7061_6972);
            (Some(iv.lo), Some(iv.hi))
        };
        let (lo, hi) = interval(&dot);
        let dot_row = pair_rows.len();
        pair_rows.push(PairRow {
            model: name.clone(),
            benchmark: set.name.clone(),
            layer: 0,
            head: "dot".into(),
            pairs: found.rows.len(),
            spearman_human: dot_human,
            spearman_cosine: dot_cosine,
            gaussian_spearman_human: None,
            gaussian_spearman_human_sd: None,
            gaussian_spearman_cosine: None,
            spearman_human_lo: lo,
            spearman_human_hi: hi,
            gaussian_best_head_human: None,
            gaussian_best_head_human_sd: None,
            best_head_minus_dot: None,
            best_head_minus_dot_lo: None,
            best_head_minus_dot_hi: None,
        });
        // Per draw, the best single head among Gaussian forms of every head's shape.
        let mut best_by_draw = vec![f64::NEG_INFINITY; INIT_DRAWS];
        // The best single head's scores (its rho with the human judgments first).
        let mut best: Option<(f64, Vec<f64>)> = None;
        for (li, l) in layers.iter().enumerate() {
            let init: Vec<LayerQkv> = (0..INIT_DRAWS)
                .map(|_| drawn(l, init_std, &mut rng))
                .collect();
            for head in (0..l.n_heads).map(Some).chain([None]) {
                let scores = bilinear::head_pair_scores(e, l, head, &found.rows);
                let (human, cosine) = found.spearman(&scores);
                let (lo, hi) = interval(&scores);
                // The last maximum in row order, as the report labels it.
                if head.is_some() && human.is_finite() && best.as_ref().is_none_or(|b| human >= b.0)
                {
                    best = Some((human, scores.clone()));
                }
                let (mut ih, mut ic) = (Vec::new(), Vec::new());
                for (k, w) in init.iter().enumerate() {
                    let (h0, c0) =
                        found.spearman(&bilinear::head_pair_scores(e, w, head, &found.rows));
                    if head.is_some() {
                        best_by_draw[k] = best_by_draw[k].max(h0);
                    }
                    ih.push(h0);
                    ic.push(c0);
                }
                let (h_mean, h_sd) = mean_sd(&ih);
                pair_rows.push(PairRow {
                    model: name.clone(),
                    benchmark: set.name.clone(),
                    layer: li + 1,
                    head: head.map_or("all".into(), |h| h.to_string()),
                    pairs: found.rows.len(),
                    spearman_human: human,
                    spearman_cosine: cosine,
                    gaussian_spearman_human: Some(h_mean),
                    gaussian_spearman_human_sd: Some(h_sd),
                    gaussian_spearman_cosine: Some(mean_sd(&ic).0),
                    spearman_human_lo: lo,
                    spearman_human_hi: hi,
                    gaussian_best_head_human: None,
                    gaussian_best_head_human_sd: None,
                    best_head_minus_dot: None,
                    best_head_minus_dot_lo: None,
                    best_head_minus_dot_hi: None,
                });
            }
        }
        if !layers.is_empty() {
            let (m, sd) = mean_sd(&best_by_draw);
            pair_rows[dot_row].gaussian_best_head_human = Some(m);
            pair_rows[dot_row].gaussian_best_head_human_sd = Some(sd);
        }
        if let Some((_, scores)) = best {
            let iv = found.human_difference_interval(&scores, &dot, RESAMPLES, 0x6265_7374);
            let row = &mut pair_rows[dot_row];
            row.best_head_minus_dot = Some(iv.estimate);
            row.best_head_minus_dot_lo = Some(iv.lo);
            row.best_head_minus_dot_hi = Some(iv.hi);
        }
    }
    output::write_csv(&out.join("pairs.csv"), &pair_rows)?;
    println!("pairs: {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// `--exp bench-pretrained-steps --model DIR`: one forward pass of the checkpoint per `forward`
/// line on stdin, answered `forward <seconds>`, on a fixed `[batch, seq]` of random piece ids
/// (`--seed`; the values do not matter, the shapes do; 128 pieces, fewer for a model with fewer
/// positions): what scripts/bench_pretrained.py interleaves with PyTorch's eager forward of the
/// same model. `ready <batch> <seq>` first.
pub fn serve(args: &Args) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    const BATCH: usize = 32;
    let dir = args
        .model
        .as_deref()
        .context("--exp bench-pretrained-steps needs --model DIR")?;
    let device = Device::flex();
    let ckpt = pretrained::load(&paths::resolve(Path::new(dir)), &device)?;
    let vocab = ckpt.model.token_embedding_matrix().dims()[0];
    // 128 pieces, or as many as the model's positions cover.
    let seq = 128.min(ckpt.architecture.max_positions());
    let mut rng = SplitMix64::new(args.seed.unwrap_or(1));
    let ids: Vec<i64> = (0..BATCH * seq)
        .map(|_| analysis::inference::index(&mut rng, vocab) as i64)
        .collect();
    let tokens = burn::tensor::Tensor::<2, burn::tensor::Int>::from_data(
        burn::tensor::TensorData::new(ids, [BATCH, seq]),
        &device,
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready {BATCH} {seq}")?;
    out.flush()?;
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        match line.trim() {
            "" => continue,
            "forward" => {
                let started = std::time::Instant::now();
                let hidden = ckpt.model.hidden_states(tokens.clone(), None);
                // Wait for the values, as PyTorch's eager forward has them on return.
                let last = hidden.last().expect("layers").clone().into_data();
                let seconds = started.elapsed().as_secs_f64();
                debug_assert!(!last.as_slice::<f32>().unwrap().is_empty());
                writeln!(out, "forward {seconds}")?;
            }
            other => anyhow::bail!(
                "stdin line {}: unknown request `{other}` (expected `forward`)",
                n + 1
            ),
        }
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_on_another_corpus_writes_beside_the_default_ones() {
        let text8 = Path::new("data/corpora/text8.gz");
        assert_eq!(out_name("m", text8, Some(text8), None), "m");
        let wt = Path::new("data/corpora/wikitext-2-test.txt.gz");
        assert_eq!(out_name("m", wt, Some(text8), None), "m@wikitext-2-test");
        assert_eq!(
            out_name("m", Path::new("/tmp/mine.txt"), None, None),
            "m@mine"
        );
        // Another config on the same corpus (other pooling, other preprocessing).
        let other = Path::new("/tmp/more-occurrences.toml");
        assert_eq!(
            out_name("m", text8, Some(text8), Some(other)),
            "m@more-occurrences"
        );
        assert_eq!(
            out_name("m", wt, Some(text8), Some(other)),
            "m@wikitext-2-test"
        );
        // The committed default is the study's corpus.
        let cfg: super::super::settings::Config =
            crate::config::load_file(&paths::resolve(Path::new(DEFAULT_CONFIG))).unwrap();
        assert_eq!(out_name("m", text8, Some(&cfg.corpus.path), None), "m");
    }

    #[test]
    fn a_directory_written_by_another_config_or_corpus_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text8 = Path::new("data/corpora/text8.gz");
        let wt = Path::new("data/corpora/wikitext-2-test.txt.gz");
        let ours = Source::new(Path::new(DEFAULT_CONFIG), wt);
        // Paths under the repository are kept relative to it, whatever the clone.
        assert_eq!(ours.config, "experiments/configs/pretrained.toml");
        assert_eq!(ours.corpus, "data/corpora/wikitext-2-test.txt.gz");
        // No directory, or one without a record: the run's to write.
        ours.check(&dir.path().join("missing")).unwrap();
        ours.check(dir.path()).unwrap();
        ours.write(dir.path()).unwrap();
        ours.check(dir.path()).unwrap();
        // The same directory name from a config of its own reading the same corpus.
        let theirs = Source::new(
            Path::new("experiments/configs/pretrained-wikitext2.toml"),
            wt,
        );
        let e = format!("{:#}", theirs.check(dir.path()).unwrap_err());
        assert!(
            e.contains("config experiments/configs/pretrained.toml on corpus data/corpora/wikitext-2-test.txt.gz")
                && e.contains("pretrained-wikitext2.toml")
                && e.contains("--out"),
            "{e}"
        );
        // Another corpus under the same config.
        assert!(Source::new(Path::new(DEFAULT_CONFIG), text8)
            .check(dir.path())
            .is_err());
        // A record that is not one is named.
        std::fs::write(dir.path().join("source.toml"), "config = 3\n").unwrap();
        let e = format!("{:#}", ours.check(dir.path()).unwrap_err());
        assert!(e.contains("source.toml: not a record of a run"), "{e}");
    }

    #[test]
    fn pooling_memory_is_the_sums_and_the_tables() {
        // BERT-base over the text8 slice's 22,541 words: 13 layers of 768.
        let (sums, tables) = pooling_memory(13, 22_541, 768);
        assert_eq!(sums, 1_800_394_752.0); // 13 x 22,541 x 768 f64: 1.68 GiB
        assert_eq!(tables, 1_800_394_752.0); // twice as many f32
                                             // Contextuality: 10 x 20 occurrences, 64 x 64 position samples and the 1,000 tokens
                                             // of 500,000 pairs, 768 f32 each, and 2 x 1,000 x 999 / 2 f64 cosines, per layer.
        let c = contextuality_memory(13, 768, 200, 64, 500_000);
        assert_eq!(
            c,
            13.0 * ((200.0 + 4096.0 + 1000.0) * 768.0 * 4.0 + 999_000.0 * 8.0)
        );
        assert_eq!(memory_total().is_some(), cfg!(target_os = "linux"));
    }

    #[test]
    fn the_committed_reference_rows_read_and_a_bad_row_is_named_by_file_and_line() {
        let rows = read_reference(&paths::resolve(Path::new(ETHAYARAJH))).unwrap();
        // Two models x 13 layers x 3 statistics; BERT-base's layer-12 anisotropy as published.
        assert_eq!(rows.len(), 78);
        let at = |m: &str, s: &str, l: usize| {
            rows.iter()
                .find(|r| r.model == m && r.statistic == s && r.layer == l)
                .unwrap()
                .value
        };
        assert_eq!(at("bert-base-cased", "anisotropy", 12), 0.477);
        assert_eq!(at("gpt2", "intra_sentence_similarity", 12), 0.99);
        // Bommasani et al.'s: three sets x 13 layers x 2 models, less gpt2's RG-65 at layer 12
        // (left out where its lines cross); BERT's WS-353 peak at layer 1, as the figure shows.
        let bom = read_reference(&paths::resolve(Path::new(BOMMASANI))).unwrap();
        assert_eq!(bom.len(), 77);
        let ws = |m: &str, l: usize| {
            bom.iter()
                .find(|r| r.model == m && r.statistic == "spearman:WS-353-ALL" && r.layer == l)
                .unwrap()
                .value
        };
        assert_eq!(ws("bert-base-uncased", 1), 0.70);
        assert!((0..13).all(|l| ws("bert-base-uncased", l) <= 0.70));
        assert_eq!(ws("gpt2", 12), 0.24);
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("ref.csv");
        let header = "model,layer,statistic,value\n";
        for (body, says) in [
            ("gpt2,0,anisotropy,0.1\ngpt2,one,anisotropy,0.2\n", "line 3"),
            (
                "gpt2,0,anisotropy,NaN\n",
                "line 2: the value of gpt2 anisotropy at layer 0 is not finite",
            ),
            ("", "holds no reference row"),
        ] {
            std::fs::write(&bad, format!("{header}{body}")).unwrap();
            let e = format!("{:#}", read_reference(&bad).unwrap_err());
            assert!(e.contains("ref.csv") && e.contains(says), "{e}");
        }
        let e = format!(
            "{:#}",
            read_reference(&dir.path().join("none.csv")).unwrap_err()
        );
        assert!(e.contains("none.csv: cannot read"), "{e}");
    }
}
