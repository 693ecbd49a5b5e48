//! `--exp corpus-size`: the answers that rest on the embedding's similarity, on pooled layers,
//! on collocation gaps and on the gain at `[MASK]`, stated as a function of corpus size
//! (issue 41). Each arm of
//! `experiments/configs/corpus-size.toml` is a study config trained on a nested prefix of the
//! corpus (`[corpus] fraction`) into its own `--out`; this reads each arm's kept measurements
//! (it trains nothing) and writes `<out>/corpus-size/summary.csv`, from which the report's
//! section is drawn ([`section`]).
//!
//! Per arm, every score is the seed mean with an interval over items and seeds
//! ([`analysis::evidence::Evidence::score`]), and each trained embedding is read against the
//! untrained model of the same arm (the same seeds, the items both answer): the reference that
//! says whether an embedding tracks human judgments beyond what a random table and the
//! vocabulary give. An embedding "tracks" them from the smallest corpus whose difference's
//! interval lies above 0 there and at every larger corpus. The arms differ in vocabulary (each
//! subset counts its own), so a benchmark's answered pairs differ between arms: each row says
//! how many it rests on.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use std::collections::BTreeSet;

use analysis::evidence::{seed_difference, seed_mean, Evidence, Half, Rep};
use analysis::inference::Interval;
use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::comparisons::{side_of_zero, TABLE_DIFFERENCES};
use super::eval::Benchmarks;
use super::settings::ModelId;
use super::study::Study;
use crate::cli::Args;
use crate::output::{self, ItemRow, TidyRow};

/// `experiments/configs/corpus-size.toml`: the arms, smallest corpus first.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub arms: Vec<Arm>,
    /// The seeds read at every arm (empty: each arm's config's own), so that no arm's
    /// intervals are narrower for having more seeds.
    #[serde(default)]
    pub seeds: Vec<u64>,
}

/// One corpus size: a study config and the `--out` its models were measured into.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    /// How the report names it ("a quarter", "all").
    pub label: String,
    /// The study config, relative to this file's directory.
    pub config: PathBuf,
    /// Its `--out`, relative to this run's `--out` (`"."`: this run's own).
    pub out: PathBuf,
}

/// The similarity benchmarks the answers are stated on.
pub const BENCHMARKS: [&str; 3] = ["WS-353-ALL", "SIMLEX-999", "MEN-TR-3k"];

/// The representations read at every size: (model, representation, how the report names it).
pub const READ: [(&str, &str, &str); 5] = [
    (
        "transformer-mlm",
        "embedding",
        "masked LM, tied head: embedding",
    ),
    (
        "transformer-mlm-untied-head",
        "embedding",
        "masked LM, untied head: input embedding",
    ),
    (
        "transformer-mlm-untied-head",
        "lm_head",
        "masked LM, untied head: output matrix",
    ),
    ("word2vec-sgns", "static", "word2vec SGNS"),
    ("word2vec-cbow", "static", "word2vec CBOW"),
];

/// The untrained model's embedding: the reference of every row.
pub const REFERENCE: (&str, &str) = ("transformer-untrained", "embedding");

/// The masked LMs whose gain at `[MASK]` is read at every size.
pub const GAIN_MODELS: [&str; 2] = ["transformer-mlm", "transformer-mlm-untied-head"];

/// One line of `summary.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    /// The arm's position, smallest corpus first.
    pub arm: usize,
    pub label: String,
    /// Tokens in the arm's prefix of the corpus (its training split and its held-out block).
    pub tokens: u64,
    pub model: String,
    pub representation: String,
    /// A similarity benchmark, `training` for the gain at `[MASK]`, or `collocation`.
    pub benchmark: String,
    /// `spearman` (the score), `spearman_minus_untrained`, `spearman_minus_other` (this
    /// table's score minus `other_model`'s `other_representation`'s, [`TABLE_DIFFERENCES`]),
    /// `largest_minus_this` (the largest arm's score, or gain, minus this arm's,
    /// [`change_with_size`]), `largest_minus_this_difference` (the largest arm's
    /// `spearman_minus_other` minus this arm's, on the pairs and seeds all four tables have),
    /// `context_gain_at_mask`, or `corpus_tokens` (one row per arm, naming it even when nothing
    /// is measured there); and, from [`pooled_and_collocations`] and
    /// [`collocation_change_with_size`], `best_layer_minus_embedding`, `collocation_gap`,
    /// `gap_minus_untrained`, `gap_minus_other`, and on benchmark `collocation` the changes
    /// `largest_minus_this` (of the gap) and `largest_minus_this_difference` (of its difference
    /// from the untrained model).
    pub quantity: String,
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
    pub seeds: usize,
    /// Items the value rests on (pairs answered); 0 for the gain, whose interval is over seeds;
    /// for a collocation gap's change between sizes, the smaller size's.
    pub items: usize,
    /// The table subtracted, for `spearman_minus_other` and `largest_minus_this_difference`;
    /// empty otherwise.
    #[serde(default)]
    pub other_model: String,
    #[serde(default)]
    pub other_representation: String,
    /// The pooled layer a `best_layer_minus_embedding` row read (chosen on the dev half);
    /// empty otherwise.
    #[serde(default)]
    pub layer: Option<usize>,
}

/// `--exp corpus-size`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let (plan, path) = crate::config::load::<Plan>(args, "corpus-size")?;
    let Some(path) = path else {
        anyhow::bail!(
            "--exp corpus-size needs its plan: experiments/configs/corpus-size.toml or --config"
        );
    };
    if plan.arms.is_empty() {
        anyhow::bail!("{}: `arms` is empty", path.display());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut rows = Vec::new();
    let mut per_arm = Vec::new();
    let mut benchmarks = None;
    let mut arm_pairs = Vec::new();
    for (i, arm) in plan.arms.iter().enumerate() {
        let mut arm_args = args.clone();
        arm_args.config = Some(dir.join(&arm.config));
        arm_args.out = args.out.join(&arm.out);
        let arm_name = format!("{}: arm {:?}", path.display(), arm.label);
        let mut cfg = super::settings::load_config(&arm_args, "corpus-size")
            .with_context(|| arm_name.clone())?;
        // `--seed` names one seed for every arm; otherwise the plan's.
        if args.seed.is_none() && !plan.seeds.is_empty() {
            cfg.seeds = plan.seeds.clone();
            // What `[seed_counts]` counts from: the plan's seeds, read at every arm.
            cfg.planned_seeds = plan.seeds.clone();
        }
        let study = Study::load(&arm_args, cfg).with_context(|| arm_name.clone())?;
        let (items, scores, seeds) = kept(&study).with_context(|| arm_name.clone())?;
        if seeds == 0 {
            println!(
                "{} ({}): no model measured yet under {}",
                arm.label,
                arm_args.config.as_ref().unwrap().display(),
                arm_args.out.display()
            );
        }
        let tokens = study.corpus.encoded.n_tokens() as u64;
        rows.extend(summarise(
            i,
            &arm.label,
            tokens,
            items.clone(),
            &study.benchmarks,
            &scores,
        ));
        rows.extend(
            pooled_and_collocations(
                i,
                &arm.label,
                tokens,
                &items,
                &study.benchmarks,
                Some(study.collocation_pairs()),
            )
            .with_context(|| arm_name.clone())?,
        );
        arm_pairs.push((
            i,
            arm.label.clone(),
            tokens,
            study.collocation_pairs().pairs.clone(),
        ));
        per_arm.push(ArmItems {
            arm: i,
            label: arm.label.clone(),
            tokens,
            items,
            scores,
        });
        benchmarks = Some(study.benchmarks);
    }
    if let Some(b) = &benchmarks {
        rows.extend(change_with_size(&per_arm, b));
    }
    let changes = collocation_change_with_size(&rows);
    rows.extend(changes);
    rows.extend(pairs_shared_with_largest(&arm_pairs));
    let out = args.out.join("corpus-size").join("summary.csv");
    output::write_csv(&out, &rows)?;
    println!("{}", section(&rows));
    println!("wrote {}", out.display());
    Ok(())
}

/// Every measured model of [`READ`] and the reference in `study`, over its seeds: the per-item
/// outcomes, the tidy scores, and how many (model, seed) were found.
fn kept(study: &Study) -> anyhow::Result<(Vec<ItemRow>, Vec<TidyRow>, usize)> {
    let mut models: Vec<&str> = READ.iter().map(|r| r.0).collect();
    models.push(REFERENCE.0);
    models.dedup();
    let (mut items, mut scores, mut found) = (Vec::new(), Vec::new(), 0);
    for name in models {
        let id = ModelId::from_name(name).expect("the models read are known models");
        for &seed in &study.cfg.seeds_of(id) {
            if !study.is_measured(id, seed)? {
                continue;
            }
            found += 1;
            let dir = study.measured_dir(id, seed);
            let h = study.settings_hash();
            scores.extend(crate::kept::read_csv::<TidyRow>(
                &dir.join(format!("scores-{h}.csv")),
            )?);
            let path = study.items_path(id, seed);
            let read = crate::kept::read_items(&path)?;
            // The pairs' words the arm's intervals resample are this study's: the cosines
            // must be of these pairs.
            super::evidence::check_pairs(&path, &read, study.collocation_pairs())?;
            items.extend(read);
            // The gain at [MASK], where the held-out split by input was kept beside the
            // measurements (it is computed from the weights; this never loads them).
            let split = dir.join("heldout-by-input.csv.gz");
            if crate::kept::exists(&split)? {
                let template = TidyRow {
                    representation: "training".into(),
                    benchmark: "training".into(),
                    seed: Some(seed),
                    ..TidyRow::template("corpus-size", name, "training")
                };
                let reported = study.reported_sequences(id, crate::kept::read_csv(&split)?);
                scores.extend(super::context_gain::tidy(&reported, &template));
            }
        }
    }
    Ok((items, scores, found))
}

/// One arm's rows: each representation's score and its difference from the untrained
/// embedding on every benchmark, and the masked LMs' gain at `[MASK]` (seed mean, t interval).
/// The difference pairs each seed with the untrained model of the same seed (its
/// initialisation), on the seeds both have. A score or difference resting on fewer than two
/// seeds is left out: its interval could not carry seed-to-seed variation.
pub fn summarise(
    arm: usize,
    label: &str,
    tokens: u64,
    items: Vec<ItemRow>,
    benchmarks: &Benchmarks,
    scores: &[TidyRow],
) -> Vec<SizeRow> {
    let seeds_in = |model: &str| -> BTreeSet<u64> {
        (items.iter())
            .filter(|i| i.model == model)
            .filter_map(|i| i.seed)
            .collect()
    };
    let reference_seeds = seeds_in(REFERENCE.0);
    // Each model with the reference, on the seeds both have.
    let paired = |model: &str| -> (Evidence, usize) {
        let common: BTreeSet<u64> = seeds_in(model)
            .intersection(&reference_seeds)
            .copied()
            .collect();
        let rows = (items.iter())
            .filter(|i| i.model == model || i.model == REFERENCE.0)
            .filter(|i| i.seed.is_some_and(|s| common.contains(&s)))
            .cloned()
            .collect();
        (super::evidence::from_rows(rows, benchmarks), common.len())
    };
    let evidence = super::evidence::from_rows(items.clone(), benchmarks);
    let row = |model: &str, rep: &str, benchmark: &str, quantity: &str| SizeRow {
        arm,
        label: label.into(),
        tokens,
        model: model.into(),
        representation: rep.into(),
        benchmark: benchmark.into(),
        quantity: quantity.into(),
        value: f64::NAN,
        lo: f64::NAN,
        hi: f64::NAN,
        seeds: 0,
        items: 0,
        other_model: String::new(),
        other_representation: String::new(),
        layer: None,
    };
    let with = |mut r: SizeRow, iv: &Interval, seeds: usize, items: usize| {
        (r.value, r.lo, r.hi, r.seeds, r.items) = (iv.estimate, iv.lo, iv.hi, seeds, items);
        r
    };
    let reference = Rep::new(REFERENCE.0, REFERENCE.1, None);
    // The arm itself, so that an arm with nothing measured yet still has its column.
    let mut rows = vec![SizeRow {
        value: tokens as f64,
        lo: tokens as f64,
        hi: tokens as f64,
        ..row("", "", "", "corpus_tokens")
    }];
    let mut read: Vec<(&str, &str)> = READ.iter().map(|r| (r.0, r.1)).collect();
    read.push(REFERENCE);
    for (model, representation) in read {
        let rep = Rep::new(model, representation, None);
        let (with_reference, common) = paired(model);
        if seeds_in(model).len() < 2 {
            continue;
        }
        for bench in BENCHMARKS {
            let Some(score) = evidence.score(&rep, bench, Half::All) else {
                continue;
            };
            rows.push(with(
                row(model, representation, bench, "spearman"),
                &score.interval,
                seeds_in(model).len(),
                score.items,
            ));
            if (model, representation) == REFERENCE {
                continue;
            }
            if common < 2 {
                continue;
            }
            if let Some(d) = with_reference.difference(&rep, &reference, bench, Half::All) {
                rows.push(with(
                    row(model, representation, bench, "spearman_minus_untrained"),
                    &d.diff,
                    common,
                    d.a.items,
                ));
            }
        }
    }
    for ((ma, ra), (mb, rb), _) in TABLE_DIFFERENCES {
        let (a, b) = (Rep::new(ma, ra, None), Rep::new(mb, rb, None));
        for bench in BENCHMARKS {
            let Some(d) = evidence.difference(&a, &b, bench, Half::All) else {
                continue;
            };
            if d.seeds.len() >= 2 {
                rows.push(SizeRow {
                    other_model: mb.into(),
                    other_representation: rb.into(),
                    ..with(
                        row(ma, ra, bench, "spearman_minus_other"),
                        &d.diff,
                        d.seeds.len(),
                        d.a.items,
                    )
                });
            }
        }
    }
    for model in GAIN_MODELS {
        let gains = super::evidence::per_seed(
            scores,
            &Rep::new(model, "training", None),
            "training",
            "context_gain_at_mask",
        );
        if gains.len() >= 2 {
            rows.push(with(
                row(model, "training", "training", "context_gain_at_mask"),
                &seed_mean(&gains),
                gains.len(),
                0,
            ));
        }
    }
    rows.retain(|r| r.value.is_finite() && r.lo.is_finite() && r.hi.is_finite());
    rows
}

/// One arm's pooled layers and collocation gaps.
///
/// * Each masked LM's best aggregated layer minus its (input) embedding, per benchmark
///   (quantity `best_layer_minus_embedding`, representation `aggregated`, `layer` the one
///   read): the layer with the highest seed mean on the dev half of the pairs, the difference
///   scored on the test half, as the round's similarity comparison reads it. Each size chooses
///   its own layer, so no change between sizes is computed for it.
/// * Each table's collocation gap, the mean cosine of the corpus's collocated pairs minus that
///   of frequency-matched pairs (benchmark `collocation`, quantity `collocation_gap`,
///   [`Evidence::collocation_gap`]), and its difference from the untrained embedding and
///   between the tables of [`TABLE_DIFFERENCES`] (`gap_minus_untrained`, `gap_minus_other`:
///   seed s against seed s, on the pairs both have). The pairs are the arm's own corpus's,
///   resampled through their words where `collocations` gives them (as independent draws
///   otherwise); an error where a table kept another number of pairs' cosines than given.
///
/// Rows resting on fewer than two seeds are left out, as in [`summarise`].
pub fn pooled_and_collocations(
    arm: usize,
    label: &str,
    tokens: u64,
    items: &[ItemRow],
    benchmarks: &Benchmarks,
    collocations: Option<&analysis::collocation::CollocationPairs>,
) -> anyhow::Result<Vec<SizeRow>> {
    let mut evidence = super::evidence::from_rows(items.to_vec(), benchmarks);
    if let Some(p) = collocations {
        evidence
            .set_collocation_words(&p.pairs, &p.matched)
            .map_err(|e| anyhow::anyhow!("arm {label:?}: {e}"))?;
    }
    let row = |model: &str, rep: &str, benchmark: &str, quantity: &str, iv: &Interval| SizeRow {
        arm,
        label: label.into(),
        tokens,
        model: model.into(),
        representation: rep.into(),
        benchmark: benchmark.into(),
        quantity: quantity.into(),
        value: iv.estimate,
        lo: iv.lo,
        hi: iv.hi,
        seeds: 0,
        items: 0,
        other_model: String::new(),
        other_representation: String::new(),
        layer: None,
    };
    let mut rows = Vec::new();
    for model in GAIN_MODELS {
        let embedding = Rep::new(model, "embedding", None);
        for bench in BENCHMARKS {
            let Some(l) = evidence.best_layer(model, "aggregated", bench) else {
                continue;
            };
            let layer = Rep::new(model, "aggregated", Some(l));
            let Some(d) = evidence.difference(&layer, &embedding, bench, Half::Test) else {
                continue;
            };
            if d.seeds.len() >= 2 {
                rows.push(SizeRow {
                    seeds: d.seeds.len(),
                    items: d.a.items,
                    other_model: model.into(),
                    other_representation: "embedding".into(),
                    layer: Some(l),
                    ..row(
                        model,
                        "aggregated",
                        bench,
                        "best_layer_minus_embedding",
                        &d.diff,
                    )
                });
            }
        }
    }
    let reference = Rep::new(REFERENCE.0, REFERENCE.1, None);
    let mut read: Vec<(&str, &str)> = READ.iter().map(|r| (r.0, r.1)).collect();
    read.push(REFERENCE);
    let mut gaps: Vec<(Rep, Option<Rep>, &str)> = Vec::new();
    for (model, representation) in read {
        let rep = Rep::new(model, representation, None);
        gaps.push((rep.clone(), None, "collocation_gap"));
        if (model, representation) != REFERENCE {
            gaps.push((rep, Some(reference.clone()), "gap_minus_untrained"));
        }
    }
    for ((ma, ra), (mb, rb), _) in TABLE_DIFFERENCES {
        let other = Rep::new(mb, rb, None);
        gaps.push((Rep::new(ma, ra, None), Some(other), "gap_minus_other"));
    }
    for (a, b, quantity) in gaps {
        let seeds = evidence.collocation_seeds(&a, b.as_ref()).len();
        let Some(g) = evidence.collocation_gap(&a, b.as_ref()) else {
            continue;
        };
        if seeds < 2 {
            continue;
        }
        let (om, or) = b.map_or((String::new(), String::new()), |b| {
            (b.model.clone(), b.representation.clone())
        });
        rows.push(SizeRow {
            seeds,
            items: g.items,
            other_model: if quantity == "gap_minus_other" {
                om
            } else {
                String::new()
            },
            other_representation: if quantity == "gap_minus_other" {
                or
            } else {
                String::new()
            },
            ..row(
                &a.model,
                &a.representation,
                "collocation",
                quantity,
                &g.interval,
            )
        });
    }
    rows.retain(|r| r.value.is_finite() && r.lo.is_finite() && r.hi.is_finite());
    Ok(rows)
}

/// How each table's collocation gap moves with the corpus: the largest arm's gap minus each
/// smaller arm's (quantity `largest_minus_this`, benchmark `collocation`, on the smaller arm's
/// row), and the same for its difference from the untrained model (`largest_minus_this_difference`,
/// the untrained embedding as the other table), which takes out what a change in the pairs does
/// to a table that learned nothing. Each size draws its own pairs from its own corpus, so the
/// two gaps are not read on shared items, and the difference's 95% half-width is the two
/// half-widths combined in quadrature (each carries its own pairs and seeds). That errs wide:
/// the arms are nested prefixes of one text, so some pairs and more words are shared
/// ([`pairs_shared_with_largest`]) and the two gaps, if anything, move together (independently
/// trained models agree on a shared pair), which the sum ignores; and with t quantiles of
/// different df the sum of squared half-widths is at least what a Welch-Satterthwaite
/// combination would give (t975^2 is increasing and convex in 1/df).
pub fn collocation_change_with_size(rows: &[SizeRow]) -> Vec<SizeRow> {
    let Some(largest) = rows.iter().map(|r| r.arm).max() else {
        return Vec::new();
    };
    let mut arms: Vec<usize> = (rows.iter().map(|r| r.arm))
        .filter(|&a| a < largest)
        .collect();
    arms.sort_unstable();
    arms.dedup();
    let mut out = Vec::new();
    for (quantity, change) in [
        ("collocation_gap", "largest_minus_this"),
        ("gap_minus_untrained", "largest_minus_this_difference"),
    ] {
        let of = |arm: usize, model: &str, rep: &str| {
            rows.iter().find(|r| {
                r.arm == arm
                    && r.model == model
                    && r.representation == rep
                    && r.benchmark == "collocation"
                    && r.quantity == quantity
            })
        };
        for big in rows
            .iter()
            .filter(|r| r.arm == largest && r.benchmark == "collocation" && r.quantity == quantity)
        {
            for &a in &arms {
                let Some(small) = of(a, &big.model, &big.representation) else {
                    continue;
                };
                let half = |r: &SizeRow| (r.hi - r.lo) / 2.0;
                let value = big.value - small.value;
                let h = half(big).hypot(half(small));
                let other = if quantity == "gap_minus_untrained" {
                    (REFERENCE.0.to_string(), REFERENCE.1.to_string())
                } else {
                    (String::new(), String::new())
                };
                out.push(SizeRow {
                    value,
                    lo: value - h,
                    hi: value + h,
                    quantity: change.into(),
                    seeds: big.seeds.min(small.seeds),
                    other_model: other.0,
                    other_representation: other.1,
                    ..small.clone()
                });
            }
        }
    }
    out
}

/// How many of each smaller arm's collocated pairs are also the largest arm's (either order;
/// quantity `pairs_shared_with_largest`, benchmark `collocation`, `items` the arm's own pair
/// count): what the nested prefixes' pair lists have in common, which a gap's change between
/// sizes does not pair up ([`collocation_change_with_size`]).
pub fn pairs_shared_with_largest(
    arms: &[(usize, String, u64, Vec<(String, String)>)],
) -> Vec<SizeRow> {
    let key = |(a, b): &(String, String)| {
        if a <= b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        }
    };
    let Some(largest) = arms.iter().max_by_key(|a| a.0) else {
        return Vec::new();
    };
    let big: BTreeSet<(String, String)> = largest.3.iter().map(key).collect();
    (arms.iter().filter(|a| a.0 != largest.0))
        .map(|(arm, label, tokens, pairs)| {
            let own: BTreeSet<(String, String)> = pairs.iter().map(key).collect();
            let shared = own.intersection(&big).count() as f64;
            SizeRow {
                arm: *arm,
                label: label.clone(),
                tokens: *tokens,
                model: String::new(),
                representation: String::new(),
                benchmark: "collocation".into(),
                quantity: "pairs_shared_with_largest".into(),
                value: shared,
                lo: shared,
                hi: shared,
                seeds: 0,
                items: own.len(),
                other_model: String::new(),
                other_representation: String::new(),
                layer: None,
            }
        })
        .collect()
}

/// One arm's kept per-item outcomes, for the differences between sizes.
pub struct ArmItems {
    pub arm: usize,
    pub label: String,
    pub tokens: u64,
    pub items: Vec<ItemRow>,
    /// The arm's tidy scores, where the gain at `[MASK]` is read.
    pub scores: Vec<TidyRow>,
}

/// How each representation's score moves with the corpus: the largest arm's score minus each
/// smaller arm's (quantity `largest_minus_this`, on the smaller arm's row), on the pairs both
/// sizes answer, with the interval over pairs and seeds that every score has. The models of two
/// arms are trained apart, so seed s of one is not paired with seed s of the other in any sense
/// but their count: the per-seed differences spread as both arms' seeds do, which the seed
/// term carries. Read on the seeds measured at both sizes; left out where they are fewer
/// than two.
pub fn change_with_size(arms: &[ArmItems], benchmarks: &Benchmarks) -> Vec<SizeRow> {
    let Some(largest) = arms.iter().max_by_key(|a| a.arm) else {
        return Vec::new();
    };
    let mut read: Vec<(&str, &str)> = READ.iter().map(|r| (r.0, r.1)).collect();
    read.push(REFERENCE);
    // Each arm's models under a name of their own, so that two arms sit in one evidence.
    let renamed = |a: &ArmItems, model: &str| -> Vec<ItemRow> {
        (a.items.iter())
            .filter(|i| i.model == model)
            .map(|i| ItemRow {
                model: format!("{}@{}", i.model, a.arm),
                ..i.clone()
            })
            .collect()
    };
    let mut rows = Vec::new();
    for a in arms.iter().filter(|a| a.arm != largest.arm) {
        for &(model, representation) in &read {
            let both: Vec<ItemRow> = renamed(largest, model)
                .into_iter()
                .chain(renamed(a, model))
                .collect();
            let seeds = |arm: usize| -> BTreeSet<u64> {
                let name = format!("{model}@{arm}");
                both.iter()
                    .filter(|i| i.model == name)
                    .filter_map(|i| i.seed)
                    .collect()
            };
            // Seeds measured at both sizes (a seed not yet measured at one is left out).
            let k = seeds(a.arm).intersection(&seeds(largest.arm)).count();
            if k < 2 {
                continue;
            }
            let evidence = super::evidence::from_rows(both, benchmarks);
            let big = Rep::new(&format!("{model}@{}", largest.arm), representation, None);
            let small = Rep::new(&format!("{model}@{}", a.arm), representation, None);
            for bench in BENCHMARKS {
                let Some(d) = evidence.difference(&big, &small, bench, Half::All) else {
                    continue;
                };
                // The seeds the difference read (both sizes measured them on this benchmark).
                if d.seeds.len() >= 2 {
                    rows.push(SizeRow {
                        arm: a.arm,
                        label: a.label.clone(),
                        tokens: a.tokens,
                        model: model.into(),
                        representation: representation.into(),
                        benchmark: bench.into(),
                        quantity: "largest_minus_this".into(),
                        value: d.diff.estimate,
                        lo: d.diff.lo,
                        hi: d.diff.hi,
                        seeds: d.seeds.len(),
                        items: d.a.items,
                        other_model: String::new(),
                        other_representation: String::new(),
                        layer: None,
                    });
                }
            }
        }
        // How each comparison between tables changed between the sizes: the four tables'
        // contrast (largest arm's difference minus this arm's) on the pairs all four answer
        // and the seeds all four were measured with, with its own interval.
        for ((ma, ra), (mb, rb), _) in TABLE_DIFFERENCES {
            let four: Vec<ItemRow> = [largest, a]
                .iter()
                .flat_map(|arm| renamed(arm, ma).into_iter().chain(renamed(arm, mb)))
                .collect();
            let evidence = super::evidence::from_rows(four, benchmarks);
            let rep = |m: &str, r: &str, arm: usize| Rep::new(&format!("{m}@{arm}"), r, None);
            let (ab, bb) = (rep(ma, ra, largest.arm), rep(mb, rb, largest.arm));
            let (asm, bsm) = (rep(ma, ra, a.arm), rep(mb, rb, a.arm));
            for bench in BENCHMARKS {
                let Some(c) = evidence.difference_change([&ab, &bb, &asm, &bsm], bench, Half::All)
                else {
                    continue;
                };
                if c.seeds.len() < 2 {
                    continue;
                }
                rows.push(SizeRow {
                    arm: a.arm,
                    label: a.label.clone(),
                    tokens: a.tokens,
                    model: ma.into(),
                    representation: ra.into(),
                    benchmark: bench.into(),
                    quantity: "largest_minus_this_difference".into(),
                    value: c.change.interval.estimate,
                    lo: c.change.interval.lo,
                    hi: c.change.interval.hi,
                    seeds: c.seeds.len(),
                    items: c.change.items,
                    other_model: mb.into(),
                    other_representation: rb.into(),
                    layer: None,
                });
            }
        }
        // The gain at [MASK]: each arm's seeds are trained apart and its held-out block is
        // its own prefix's tail, so the change is Welch's over both arms' seeds (it carries
        // the seeds' spread, not the sampling of either held-out text).
        // Read on the seeds measured at both sizes: Welch needs no pairing, but the plan reads
        // every size at the same seeds so that no size's interval is narrower for having more
        // (a seed not yet measured at one size waits for it).
        for model in GAIN_MODELS {
            let gains = |arm: &ArmItems| -> std::collections::BTreeMap<u64, f64> {
                super::evidence::seed_values(
                    &arm.scores,
                    &Rep::new(model, "training", None),
                    "training",
                    "context_gain_at_mask",
                )
                .into_iter()
                .collect()
            };
            let (big, small) = (gains(largest), gains(a));
            let common: Vec<u64> = big
                .keys()
                .filter(|s| small.contains_key(s))
                .copied()
                .collect();
            let (big, small): (Vec<f64>, Vec<f64>) =
                common.iter().map(|s| (big[s], small[s])).unzip();
            if big.len() < 2 || small.len() < 2 {
                continue;
            }
            let d = seed_difference(&big, &small);
            rows.push(SizeRow {
                arm: a.arm,
                label: a.label.clone(),
                tokens: a.tokens,
                model: model.into(),
                representation: "training".into(),
                benchmark: "training".into(),
                quantity: "largest_minus_this".into(),
                value: d.estimate,
                lo: d.lo,
                hi: d.hi,
                seeds: big.len().min(small.len()),
                items: 0,
                other_model: String::new(),
                other_representation: String::new(),
                layer: None,
            });
        }
    }
    rows.retain(|r| r.value.is_finite() && r.lo.is_finite() && r.hi.is_finite());
    rows
}

/// From which arm on a representation's difference from the untrained embedding lies above 0
/// on `benchmark`, at that arm and every larger one; `None` when it never does (or an arm
/// lacks it).
pub fn tracks_from(rows: &[SizeRow], model: &str, rep: &str, benchmark: &str) -> Option<usize> {
    let mut d: Vec<&SizeRow> = rows
        .iter()
        .filter(|r| {
            r.model == model
                && r.representation == rep
                && r.benchmark == benchmark
                && r.quantity == "spearman_minus_untrained"
        })
        .collect();
    d.sort_by_key(|r| r.arm);
    let arms = rows.iter().map(|r| r.arm).max()? + 1;
    if d.len() != arms {
        return None;
    }
    let mut from = None;
    for r in d.iter().rev() {
        if r.lo > 0.0 {
            from = Some(r.arm);
        } else {
            break;
        }
    }
    from
}

/// The report's section from `summary.csv`'s rows.
pub fn section(rows: &[SizeRow]) -> String {
    let mut w = String::new();
    let _ = writeln!(w, "### How much text does each answer need?\n");
    if rows.is_empty() {
        let _ = writeln!(
            w,
            "Not measured yet: the arms of experiments/configs/corpus-size.toml are trained with `--exp dynamics --config <arm's config> --out <arm's out>` and read with `--exp corpus-size`.\n"
        );
        return w;
    }
    let mut arms: Vec<(usize, String, u64)> = rows
        .iter()
        .map(|r| (r.arm, r.label.clone(), r.tokens))
        .collect();
    arms.sort();
    arms.dedup();
    let names: Vec<String> = arms
        .iter()
        .map(|(_, l, t)| format!("{l} ({t} tokens)"))
        .collect();
    let _ = writeln!(
        w,
        "The same models on nested prefixes of the corpus ({}), each trained for the same number of epochs (so a smaller corpus also means fewer steps), each prefix with its own vocabulary. Spearman's rho with human judgments, seed mean [95% interval over pairs and seeds], and trained minus the untrained model of the same size and seed on the pairs both answer; (n) pairs answered, which differ between sizes as the vocabulary does. An embedding tracks human judgments from the smallest corpus whose difference lies above 0 there and at every larger one. The change from each smaller corpus to the largest is the difference of the two sizes' scores on the pairs both answer, its interval over pairs and both sizes' seeds. Under each table, the comparisons between tables the answers make, at each size (seed s of one model against seed s of the other, on the pairs both answer), and each comparison's change from a smaller size to the largest: the four tables' contrast on the pairs all four answer (each size's own vocabulary decides which survive, so the change need not equal the difference of the two cells beside it, and (n) counts those pairs) and the seeds measured at both sizes, seed s of one size set beside seed s of the other (runs trained apart: the pairing is by label, which the seeds' spread carries). The gain's change between sizes is Welch's over the seeds measured at both: it carries the seeds' spread, not the sampling of either held-out text, and it is not the corpus size alone that changes: each size reports on its own prefix's held-out tail (other text), scored against its own vocabulary's unigram.\n",
        names.join(", ")
    );
    let get = |arm: usize, model: &str, rep: &str, bench: &str, q: &str| {
        rows.iter().find(|r| {
            r.arm == arm
                && r.model == model
                && r.representation == rep
                && r.benchmark == bench
                && r.quantity == q
        })
    };
    for bench in BENCHMARKS {
        let _ = writeln!(w, "**{bench}**\n");
        let header: Vec<&str> = arms.iter().map(|a| a.1.as_str()).collect();
        let largest = &arms[arms.len() - 1];
        // The change from each smaller corpus to the largest.
        let smaller = &arms[..arms.len() - 1];
        let changes: String = smaller
            .iter()
            .map(|a| format!(" {} - {} |", largest.1, a.1))
            .collect();
        let _ = writeln!(
            w,
            "| representation | {} |{changes} tracks human judgments from |",
            header.join(" | "),
        );
        let _ = writeln!(
            w,
            "|---|{}{}---|",
            "---|".repeat(arms.len()),
            "---|".repeat(smaller.len())
        );
        let mut read: Vec<(&str, &str, &str)> = READ.to_vec();
        read.push((REFERENCE.0, REFERENCE.1, "untrained model: embedding"));
        for (model, rep, name) in read {
            let cells: Vec<String> = arms
                .iter()
                .map(|(arm, _, _)| {
                    score_cell(
                        get(*arm, model, rep, bench, "spearman"),
                        get(*arm, model, rep, bench, "spearman_minus_untrained"),
                    )
                })
                .collect();
            let from = if (model, rep) == REFERENCE {
                "(the reference)".to_string()
            } else {
                let measured = arms.iter().all(|(arm, _, _)| {
                    get(*arm, model, rep, bench, "spearman_minus_untrained").is_some()
                });
                let reference = arms.iter().all(|(arm, _, _)| {
                    get(*arm, REFERENCE.0, REFERENCE.1, bench, "spearman").is_some()
                });
                match tracks_from(rows, model, rep, bench) {
                    Some(a) => arms[a].1.clone(),
                    None if measured => "at none of the sizes".into(),
                    None if !reference => "(the untrained model not measured at every size)".into(),
                    None => "(not every size measured)".into(),
                }
            };
            let change: String = smaller
                .iter()
                .map(
                    |a| match get(a.0, model, rep, bench, "largest_minus_this") {
                        Some(r) => format!(" {} (n {}) |", fmt_row(r), r.items),
                        None => " - |".into(),
                    },
                )
                .collect();
            let _ = writeln!(w, "| {name} | {} |{change} {from} |", cells.join(" | "));
        }
        let _ = writeln!(w);
        // The comparisons between tables, at each size.
        for ((ma, ra), (mb, rb), what) in TABLE_DIFFERENCES {
            let cells: Vec<String> = arms
                .iter()
                .map(|(arm, label, _)| {
                    match between(
                        rows,
                        *arm,
                        (ma, ra),
                        (mb, rb),
                        bench,
                        "spearman_minus_other",
                    ) {
                        Some(r) => format!(
                            "{label} {} (n {}, {} seeds): {}",
                            fmt_row(r),
                            r.items,
                            r.seeds,
                            verdict(r)
                        ),
                        None => format!("{label} not measured"),
                    }
                })
                .collect();
            let largest = &arms[arms.len() - 1].1;
            let changes: String = arms[..arms.len() - 1]
                .iter()
                .filter_map(|(arm, label, _)| {
                    let r = between(
                        rows,
                        *arm,
                        (ma, ra),
                        (mb, rb),
                        bench,
                        "largest_minus_this_difference",
                    )?;
                    Some(format!(
                        "; change {largest} - {label} {} (n {}): {}",
                        fmt_row(r),
                        r.items,
                        verdict(r)
                    ))
                })
                .collect();
            let _ = writeln!(w, "- {what}: {}{changes}", cells.join("; "));
        }
        let _ = writeln!(w);
    }
    let _ = writeln!(
        w,
        "**Gain at held-out [MASK] targets over the unigram (nats), seed mean [95% t interval over seeds]**\n"
    );
    for model in ["transformer-mlm", "transformer-mlm-untied-head"] {
        let cells: Vec<String> = arms
            .iter()
            .map(|(arm, label, _)| {
                match get(*arm, model, "training", "training", "context_gain_at_mask") {
                    Some(r) => format!("{label} {} ({} seeds)", fmt_row(r), r.seeds),
                    None => format!("{label} not measured"),
                }
            })
            .collect();
        let changes: Vec<String> = arms[..arms.len() - 1]
            .iter()
            .filter_map(|(arm, label, _)| {
                let r = get(*arm, model, "training", "training", "largest_minus_this")?;
                Some(format!(
                    "{} - {label} {} (Welch over seeds): {}",
                    arms[arms.len() - 1].1,
                    fmt_row(r),
                    verdict(r)
                ))
            })
            .collect();
        let changes = if changes.is_empty() {
            String::new()
        } else {
            format!("; change {}", changes.join("; "))
        };
        let _ = writeln!(w, "- {model}: {}{changes}", cells.join("; "));
    }
    let _ = writeln!(w);
    pooled_section(&mut w, rows, &arms);
    collocation_section(&mut w, rows, &arms);
    w
}

/// The section's pooled layers: each masked LM's best aggregated layer minus its embedding at
/// each size.
fn pooled_section(w: &mut String, rows: &[SizeRow], arms: &[(usize, String, u64)]) {
    let found = |arm: usize, model: &str, bench: &str| {
        rows.iter().find(|r| {
            r.arm == arm
                && r.model == model
                && r.benchmark == bench
                && r.quantity == "best_layer_minus_embedding"
        })
    };
    if !rows
        .iter()
        .any(|r| r.quantity == "best_layer_minus_embedding")
    {
        return;
    }
    let _ = writeln!(
        w,
        "**Pooled layers: the best aggregated layer minus the embedding matrix (input embedding with an untied head)**, each size choosing its layer on the dev half of a benchmark's pairs and scored on the test half (seed mean [95% interval over pairs and seeds], seed s against seed s; n test pairs). Each size chooses its own layer, so no change between sizes is computed. Pairs are split into halves one by one, so a word can have pairs in both: the choice is not wholly blind to the test half.\n"
    );
    for model in GAIN_MODELS {
        for bench in BENCHMARKS {
            let cells: Vec<String> = arms
                .iter()
                .map(|(arm, label, _)| match found(*arm, model, bench) {
                    Some(r) => format!(
                        "{label} layer {} {:.3} [{:.3}, {:.3}] (n {}, {} seeds): {}",
                        r.layer.map_or("?".into(), |l| l.to_string()),
                        r.value,
                        r.lo,
                        r.hi,
                        r.items,
                        r.seeds,
                        verdict(r)
                    ),
                    None => format!("{label} not measured"),
                })
                .collect();
            let _ = writeln!(w, "- {model}, {bench}: {}", cells.join("; "));
        }
    }
    let _ = writeln!(w);
}

/// The section's collocations: each table's gap at each size, against the untrained model,
/// its change to the largest size, and the comparisons between tables.
fn collocation_section(w: &mut String, rows: &[SizeRow], arms: &[(usize, String, u64)]) {
    let get = |arm: usize, model: &str, rep: &str, q: &str| {
        rows.iter().find(|r| {
            r.arm == arm
                && r.model == model
                && r.representation == rep
                && r.benchmark == "collocation"
                && r.quantity == q
        })
    };
    if !rows.iter().any(|r| r.benchmark == "collocation") {
        return;
    }
    let _ = writeln!(
        w,
        "**Collocations: collocated minus frequency-matched pairs' mean cosine** (each size's own corpus gives its own pairs; seed mean [95% interval over the pairs, resampled through their words, and the seeds]; minus the untrained model of the same size and seed on the same pairs; n collocated and matched pairs read). The change from a smaller size to the largest, of the gap and of its difference from the untrained model (which takes out what the change of pairs does to a table that learned nothing), is the difference of two estimates on different pairs (each size draws its own from its own prefix; how many the sizes share is below), its half-width the two half-widths combined in quadrature, which leaves out that shared pairs and words make the two estimates move together, if anything: wide rather than narrow for that, and because with t quantiles of different df the sum is at least a Welch-Satterthwaite combination's.\n"
    );
    let largest = &arms[arms.len() - 1];
    let smaller = &arms[..arms.len() - 1];
    let shared: Vec<String> = (rows.iter())
        .filter(|r| r.quantity == "pairs_shared_with_largest")
        .map(|r| format!("{} of {}'s {}", r.value, r.label, r.items))
        .collect();
    if !shared.is_empty() {
        let _ = writeln!(
            w,
            "Collocated pairs that are also {}'s (either order): {}.\n",
            largest.1,
            shared.join(", ")
        );
    }
    let changes: String = smaller
        .iter()
        .map(|a| format!(" {} - {} |", largest.1, a.1))
        .collect();
    let header: Vec<&str> = arms.iter().map(|a| a.1.as_str()).collect();
    let _ = writeln!(w, "| table | {} |{changes}", header.join(" | "));
    let _ = writeln!(
        w,
        "|---|{}{}",
        "---|".repeat(arms.len()),
        "---|".repeat(smaller.len())
    );
    let mut read: Vec<(&str, &str, &str)> = READ.to_vec();
    read.push((REFERENCE.0, REFERENCE.1, "untrained model: embedding"));
    for (model, rep, name) in read {
        let cells: Vec<String> = arms
            .iter()
            .map(|(arm, _, _)| {
                score_cell(
                    get(*arm, model, rep, "collocation_gap"),
                    get(*arm, model, rep, "gap_minus_untrained"),
                )
            })
            .collect();
        let change: String = smaller
            .iter()
            .map(|a| {
                let g = get(a.0, model, rep, "largest_minus_this");
                let d = get(a.0, model, rep, "largest_minus_this_difference");
                match (g, d) {
                    (Some(g), Some(d)) => format!(
                        " {}: {}; - untrained {}: {} |",
                        fmt_row(g),
                        verdict(g),
                        fmt_row(d),
                        verdict(d)
                    ),
                    (Some(g), None) => format!(" {}: {} |", fmt_row(g), verdict(g)),
                    _ => " - |".into(),
                }
            })
            .collect();
        let _ = writeln!(w, "| {name} | {} |{change}", cells.join(" | "));
    }
    let _ = writeln!(w);
    for ((ma, ra), (mb, rb), what) in TABLE_DIFFERENCES {
        let cells: Vec<String> = arms
            .iter()
            .map(|(arm, label, _)| {
                match between(
                    rows,
                    *arm,
                    (ma, ra),
                    (mb, rb),
                    "collocation",
                    "gap_minus_other",
                ) {
                    Some(r) => {
                        format!("{label} {} ({} seeds): {}", fmt_row(r), r.seeds, verdict(r))
                    }
                    None => format!("{label} not measured"),
                }
            })
            .collect();
        let _ = writeln!(w, "- gap, {what}: {}", cells.join("; "));
    }
    let _ = writeln!(w);
}

/// A row's value and interval as the section writes them.
fn fmt_row(r: &SizeRow) -> String {
    format!("{:.3} [{:.3}, {:.3}]", r.value, r.lo, r.hi)
}

/// A table's cell at one size: its score or gap with the items it rests on, and its
/// difference from the untrained model where there is one.
fn score_cell(score: Option<&SizeRow>, minus_untrained: Option<&SizeRow>) -> String {
    match (score, minus_untrained) {
        (Some(s), Some(d)) => format!("{} (n {}); - untrained {}", fmt_row(s), s.items, fmt_row(d)),
        (Some(s), None) => format!("{} (n {})", fmt_row(s), s.items),
        _ => "not measured".into(),
    }
}

/// The row of `quantity` on `benchmark` at `arm` that compares table `a` with table `b`.
fn between<'r>(
    rows: &'r [SizeRow],
    arm: usize,
    a: (&str, &str),
    b: (&str, &str),
    benchmark: &str,
    quantity: &str,
) -> Option<&'r SizeRow> {
    rows.iter().find(|r| {
        r.arm == arm
            && (r.model.as_str(), r.representation.as_str()) == a
            && (r.other_model.as_str(), r.other_representation.as_str()) == b
            && r.benchmark == benchmark
            && r.quantity == quantity
    })
}

/// Whether a difference's interval excludes 0, in words.
fn verdict(r: &SizeRow) -> String {
    match side_of_zero(r.lo, r.hi) {
        Some(side) => format!("{side} (the interval excludes 0)"),
        None => "no difference shown".into(),
    }
}

/// `<out>/corpus-size/summary.csv` when `--exp corpus-size` has written it.
pub fn read_summary(out: &Path) -> anyhow::Result<Option<Vec<SizeRow>>> {
    let path = out.join("corpus-size").join("summary.csv");
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(crate::output::read_csv(&path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planted outcomes: at the small arm the masked LM's cosines are noise, at the large arm
    /// they follow the human scores; the untrained model's are noise at both.
    fn arm_rows(follows: bool, seeds: &[u64]) -> (Vec<ItemRow>, Vec<TidyRow>) {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let ws = benchmarks
            .similarity
            .iter()
            .find(|s| s.name == "WS-353-ALL")
            .unwrap();
        let mut items = Vec::new();
        let mut scores = Vec::new();
        for &seed in seeds {
            for (salt, model, rep, signal) in [
                (0u64, "transformer-mlm", "embedding", follows),
                (1, "transformer-untrained", "embedding", false),
            ] {
                let cos: Vec<Option<f64>> = ws
                    .pairs
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let mut g = analysis::inference::SplitMix64::new(
                            i as u64 ^ (seed << 20) ^ (salt << 40),
                        );
                        let noise = g.next_f32() as f64;
                        Some(if signal {
                            p.2 / 10.0 + 0.1 * noise
                        } else {
                            noise
                        })
                    })
                    .collect();
                items.push(ItemRow {
                    model: model.into(),
                    representation: rep.into(),
                    layer: None,
                    benchmark: "WS-353-ALL".into(),
                    kind: "cosine".into(),
                    seed: Some(seed),
                    values: crate::output::encode_cosines(&cos),
                });
                scores.push(TidyRow {
                    experiment: String::new(),
                    model: model.into(),
                    representation: "training".into(),
                    layer: None,
                    benchmark: "training".into(),
                    metric: "context_gain_at_mask".into(),
                    value: if model == "transformer-mlm" {
                        1.0 + seed as f64 / 10.0
                    } else {
                        0.0
                    },
                    n: 0,
                    oov: 0,
                    seed: Some(seed),
                    backend: Some("flex".into()),
                });
            }
        }
        (items, scores)
    }

    #[test]
    fn an_embedding_tracks_judgments_from_the_size_where_it_beats_the_untrained_model() {
        let seeds = [1, 2, 3];
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let (small, small_scores) = arm_rows(false, &seeds);
        let (large, large_scores) = arm_rows(true, &seeds);
        let mut rows = summarise(0, "a quarter", 1000, small, &benchmarks, &small_scores);
        rows.extend(summarise(1, "all", 4000, large, &benchmarks, &large_scores));
        let at = |arm: usize, model: &str, q: &str| {
            rows.iter()
                .find(|r| {
                    r.arm == arm
                        && r.model == model
                        && r.benchmark == "WS-353-ALL"
                        && r.quantity == q
                })
                .unwrap()
                .clone()
        };
        // Following the human scores closely: rho near 1 at the large arm, with 3 seeds and
        // every pair answered.
        let big = at(1, "transformer-mlm", "spearman");
        assert!(big.value > 0.95 && big.lo > 0.9, "{big:?}");
        assert_eq!((big.seeds, big.items), (3, 353));
        let d_big = at(1, "transformer-mlm", "spearman_minus_untrained");
        assert!(d_big.lo > 0.5, "{d_big:?}");
        let d_small = at(0, "transformer-mlm", "spearman_minus_untrained");
        assert!(d_small.lo < 0.0 && d_small.hi > 0.0, "{d_small:?}");
        assert_eq!(
            tracks_from(&rows, "transformer-mlm", "embedding", "WS-353-ALL"),
            Some(1)
        );
        // Not measured at an arm: no answer rather than a wrong one.
        let only_large: Vec<SizeRow> = rows.iter().filter(|r| r.arm == 1).cloned().collect();
        let shifted: Vec<SizeRow> = only_large
            .iter()
            .cloned()
            .map(|mut r| {
                r.arm = 2;
                r
            })
            .chain(rows.iter().filter(|r| r.arm == 0).cloned())
            .collect();
        assert_eq!(
            tracks_from(&shifted, "transformer-mlm", "embedding", "WS-353-ALL"),
            None
        );
        // The gain: seeds 1.1, 1.2, 1.3 -> mean 1.2, t interval 1.2 +- t(2) * 0.1 / sqrt(3),
        // with the quantile from the table `inference::t975` keeps (4.303 at 2 df).
        let g = rows
            .iter()
            .find(|r| r.arm == 1 && r.model == "transformer-mlm" && r.benchmark == "training")
            .unwrap();
        assert_eq!((g.quantity.as_str(), g.seeds), ("context_gain_at_mask", 3));
        assert!((g.value - 1.2).abs() < 1e-12);
        assert!(
            (g.hi - (1.2 + 4.303 * 0.1 / 3f64.sqrt())).abs() < 1e-6,
            "{g:?}"
        );
        let text = section(&rows);
        assert!(
            text.contains("| masked LM, tied head: embedding |"),
            "{text}"
        );
        assert!(text.contains("| all |\n"), "{text}");
        assert!(text.contains("(the reference)"), "{text}");
    }

    #[test]
    fn the_change_between_sizes_is_the_difference_of_their_scores_on_common_pairs() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let arm = |arm: usize, follows: bool, seeds: &[u64]| {
            let (items, mut scores) = arm_rows(follows, seeds);
            // The smaller corpus's gains 0.5 lower: 0.6, 0.7, 0.8 against 1.1, 1.2, 1.3.
            if arm == 0 {
                for r in &mut scores {
                    r.value -= 0.5;
                }
            }
            ArmItems {
                arm,
                label: ["a quarter", "all"][arm].into(),
                tokens: [1000, 4000][arm],
                items,
                scores,
            }
        };
        let arms = [arm(0, false, &[1, 2, 3]), arm(1, true, &[1, 2, 3])];
        let rows = change_with_size(&arms, &benchmarks);
        let at = |model: &str| {
            rows.iter()
                .find(|r| r.model == model && r.benchmark == "WS-353-ALL")
                .unwrap()
        };
        // The masked LM goes from noise (rho near 0) to the human scores (near 1).
        let mlm = at("transformer-mlm");
        assert_eq!((mlm.arm, mlm.quantity.as_str()), (0, "largest_minus_this"));
        assert!(mlm.value > 0.8 && mlm.lo > 0.6, "{mlm:?}");
        assert_eq!((mlm.seeds, mlm.items), (3, 353));
        // The untrained model's cosines are the same draws at both sizes: a change of exactly 0.
        let u = at("transformer-untrained");
        assert!(
            u.value.abs() < 1e-12 && u.lo.abs() < 1e-9 && u.hi.abs() < 1e-9,
            "{u:?}"
        );
        // Every row on the smaller arm, none for the largest against itself.
        assert!(rows.iter().all(|r| r.arm == 0));
        // The gain: 0.5 higher at the larger size. Welch with equal variances 0.01 and 3 seeds a
        // side: standard error sqrt(0.02 / 3), 4 degrees of freedom (t 2.776).
        let g = rows
            .iter()
            .find(|r| r.model == "transformer-mlm" && r.benchmark == "training")
            .unwrap();
        assert_eq!((g.quantity.as_str(), g.seeds), ("largest_minus_this", 3));
        let half = 2.776 * (0.02f64 / 3.0).sqrt();
        assert!((g.value - 0.5).abs() < 1e-12, "{g:?}");
        assert!((g.hi - (0.5 + half)).abs() < 1e-3, "{g:?}");
        // Seeds measured at one size only are left out; fewer than two in common: no change.
        let uneven = [arm(0, false, &[1, 2]), arm(1, true, &[1, 2, 3])];
        let on_two = change_with_size(&uneven, &benchmarks);
        assert!(on_two.iter().all(|r| r.seeds == 2) && !on_two.is_empty());
        let apart = [arm(0, false, &[1, 4]), arm(1, true, &[1, 2, 3])];
        assert!(change_with_size(&apart, &benchmarks).is_empty());
        // The section shows the change beside the sizes' scores.
        let mut all = summarise(
            0,
            "a quarter",
            1000,
            arms[0].items.clone(),
            &benchmarks,
            &[],
        );
        all.extend(summarise(
            1,
            "all",
            4000,
            arms[1].items.clone(),
            &benchmarks,
            &[],
        ));
        all.extend(rows.clone());
        let text = section(&all);
        assert!(
            text.contains("| all - a quarter | tracks human judgments from |"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "; change all - a quarter {:.3} [{:.3}, {:.3}] (Welch over seeds): above 0",
                g.value, g.lo, g.hi
            )),
            "{text}"
        );
        let cell = format!(
            "| {:.3} [{:.3}, {:.3}] (n 353) |",
            mlm.value, mlm.lo, mlm.hi
        );
        assert!(text.contains(&cell), "{text}");
    }

    #[test]
    fn the_difference_pairs_each_seed_with_its_own_untrained_model() {
        // The masked LM at seeds 1-3, the untrained model at seeds 2-4: the score rests on
        // 3 seeds, the difference on the 2 both have, never on seed 1 against seed 4.
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let (mut items, scores) = arm_rows(true, &[1, 2, 3, 4]);
        items.retain(|i| match i.model.as_str() {
            "transformer-mlm" => i.seed != Some(4),
            _ => i.seed != Some(1),
        });
        let rows = summarise(0, "all", 4000, items.clone(), &benchmarks, &scores);
        let get = |q: &str| {
            rows.iter()
                .find(|r| r.model == "transformer-mlm" && r.quantity == q)
                .unwrap()
        };
        assert_eq!(get("spearman").seeds, 3);
        let d = get("spearman_minus_untrained");
        assert_eq!(d.seeds, 2);
        // By hand from the same outcomes restricted to seeds 2 and 3.
        let two: Vec<ItemRow> = (items.into_iter())
            .filter(|i| matches!(i.seed, Some(2 | 3)))
            .collect();
        let ev = super::super::evidence::from_rows(two, &benchmarks);
        let want = ev
            .difference(
                &Rep::new("transformer-mlm", "embedding", None),
                &Rep::new(REFERENCE.0, REFERENCE.1, None),
                "WS-353-ALL",
                Half::All,
            )
            .unwrap();
        assert_eq!(
            (d.value, d.lo, d.hi),
            (want.diff.estimate, want.diff.lo, want.diff.hi)
        );
        // One seed of the untrained model: the masked LM's score stays, but neither the
        // reference's score nor the difference gets a row (one seed cannot show seed variation).
        let (mut items, scores) = arm_rows(true, &[1, 2]);
        items.retain(|i| i.model == "transformer-mlm" || i.seed == Some(1));
        let rows = summarise(0, "all", 4000, items, &benchmarks, &scores);
        let has = |model: &str, q: &str| rows.iter().any(|r| r.model == model && r.quantity == q);
        assert!(has("transformer-mlm", "spearman"));
        assert!(!has("transformer-mlm", "spearman_minus_untrained"));
        assert!(!has(REFERENCE.0, "spearman"));
    }

    /// A word2vec table that follows the human scores beside a masked LM whose cosines are
    /// noise: the arm's SGNS - MLM row is the evidence's own difference of the two on the seeds
    /// both have, named with the table subtracted, and the section says it lies above 0.
    #[test]
    fn each_size_compares_the_tables_the_answers_compare() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let (mut items, scores) = arm_rows(false, &[1, 2, 3]);
        let (follows, _) = arm_rows(true, &[1, 2, 3]);
        items.extend(
            follows
                .into_iter()
                .filter(|i| i.model == "transformer-mlm")
                .map(|i| ItemRow {
                    model: "word2vec-sgns".into(),
                    representation: "static".into(),
                    ..i
                }),
        );
        let rows = summarise(0, "all", 4000, items.clone(), &benchmarks, &scores);
        let d = rows
            .iter()
            .find(|r| r.quantity == "spearman_minus_other" && r.benchmark == "WS-353-ALL")
            .unwrap();
        assert_eq!(
            (d.model.as_str(), d.representation.as_str()),
            ("word2vec-sgns", "static")
        );
        assert_eq!(
            (d.other_model.as_str(), d.other_representation.as_str()),
            ("transformer-mlm", "embedding")
        );
        let want = super::super::evidence::from_rows(items, &benchmarks)
            .difference(
                &Rep::new("word2vec-sgns", "static", None),
                &Rep::new("transformer-mlm", "embedding", None),
                "WS-353-ALL",
                Half::All,
            )
            .unwrap();
        assert_eq!(
            (d.value, d.lo, d.hi, d.seeds),
            (want.diff.estimate, want.diff.lo, want.diff.hi, 3)
        );
        assert!(d.lo > 0.5, "{d:?}");
        // Only the pair planted: the untied model was not, so neither of its comparisons is.
        assert_eq!(
            rows.iter()
                .filter(|r| r.quantity == "spearman_minus_other")
                .count(),
            1
        );
        let text = section(&rows);
        let line = format!(
            "- word2vec SGNS - masked LM (tied) embedding: all {:.3} [{:.3}, {:.3}] (n 353, 3 seeds): above 0 (the interval excludes 0)\n",
            d.value, d.lo, d.hi
        );
        assert!(text.contains(&line), "{line}\n{text}");
        assert!(
            text.contains(
                "- masked LM: tied embedding - untied input embedding: all not measured\n"
            ),
            "{text}"
        );
    }

    /// Two sizes: at the smaller, word2vec follows the human scores and the masked LM's
    /// cosines are noise; at the larger both follow them. SGNS - MLM falls from well above 0
    /// to about 0, and the change between sizes is the two arms' differences' difference (the
    /// same pairs and seeds), below 0 with its own interval, and the section says so.
    #[test]
    fn a_comparison_between_tables_gets_its_change_between_sizes() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let arm = |arm: usize, mlm_follows: bool| {
            let (mut items, scores) = arm_rows(mlm_follows, &[1, 2, 3]);
            let (follows, _) = arm_rows(true, &[1, 2, 3]);
            items.extend(
                (follows.into_iter())
                    .filter(|i| i.model == "transformer-mlm")
                    .map(|i| ItemRow {
                        model: "word2vec-sgns".into(),
                        representation: "static".into(),
                        ..i
                    }),
            );
            ArmItems {
                arm,
                label: ["a quarter", "all"][arm].into(),
                tokens: [1000, 4000][arm],
                items,
                scores,
            }
        };
        let arms = [arm(0, false), arm(1, true)];
        let other = |a: &ArmItems| {
            summarise(
                a.arm,
                &a.label,
                a.tokens,
                a.items.clone(),
                &benchmarks,
                &a.scores,
            )
            .into_iter()
            .find(|r| r.quantity == "spearman_minus_other")
            .unwrap()
        };
        let (small, large) = (other(&arms[0]), other(&arms[1]));
        let rows = change_with_size(&arms, &benchmarks);
        let c = rows
            .iter()
            .find(|r| r.quantity == "largest_minus_this_difference")
            .unwrap();
        assert_eq!(
            (
                c.arm,
                c.model.as_str(),
                c.other_model.as_str(),
                c.seeds,
                c.items
            ),
            (0, "word2vec-sgns", "transformer-mlm", 3, 353)
        );
        assert!(
            (c.value - (large.value - small.value)).abs() < 1e-9,
            "{c:?}"
        );
        assert!(small.lo > 0.5 && c.hi < 0.0, "{small:?} {c:?}");
        let mut all = vec![small, large];
        all.extend(rows.iter().cloned());
        let text = section(&all);
        let tail = format!(
            "; change all - a quarter {:.3} [{:.3}, {:.3}] (n 353): below 0 (the interval excludes 0)\n",
            c.value, c.lo, c.hi
        );
        assert!(text.contains(&tail), "{tail}\n{text}");
    }

    #[test]
    fn no_rows_say_how_to_measure() {
        assert!(section(&[]).contains("--exp corpus-size"));
    }

    /// Per-item rows for one seed: a table's cosines on WS-353 (following the human scores or
    /// noise) or its collocated and matched pairs' cosines.
    fn cosine_row(
        model: &str,
        rep: &str,
        layer: Option<usize>,
        bench: &str,
        kind: &str,
        seed: u64,
        cos: &[f64],
    ) -> ItemRow {
        let cos: Vec<Option<f64>> = cos.iter().map(|&c| Some(c)).collect();
        ItemRow {
            model: model.into(),
            representation: rep.into(),
            layer,
            benchmark: bench.into(),
            kind: kind.into(),
            seed: Some(seed),
            values: crate::output::encode_cosines(&cos),
        }
    }

    #[test]
    fn the_best_pooled_layer_is_chosen_on_dev_and_read_against_the_embedding() {
        use analysis::evidence::half_of;
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let ws = (benchmarks.similarity.iter())
            .find(|s| s.name == "WS-353-ALL")
            .unwrap();
        let noise = |i: usize, salt: u64| {
            analysis::inference::SplitMix64::new(i as u64 ^ (salt << 32)).next_f32() as f64
        };
        let dev = |i: usize| half_of("WS-353-ALL", i) == Half::Dev;
        let mut items = Vec::new();
        for seed in [1u64, 2, 3] {
            // Layer 1 follows the human scores on the dev half only; layer 2 on the test half,
            // and loosely on dev: over all pairs, or on test, layer 2 is the better one.
            let planted = |on_dev: f64, on_test: f64, salt: u64| -> Vec<f64> {
                (ws.pairs.iter().enumerate())
                    .map(|(i, p)| {
                        let n = noise(i, seed * 10 + salt);
                        let w = if dev(i) { on_dev } else { on_test };
                        w * p.2 / 10.0 + n
                    })
                    .collect()
            };
            for (rep, layer, cos) in [
                ("embedding", None, planted(0.0, 0.0, 1)),
                ("aggregated", Some(0), planted(0.0, 0.0, 2)),
                ("aggregated", Some(1), planted(10.0, 0.0, 3)),
                ("aggregated", Some(2), planted(2.0, 10.0, 4)),
            ] {
                items.push(cosine_row(
                    "transformer-mlm",
                    rep,
                    layer,
                    "WS-353-ALL",
                    "cosine",
                    seed,
                    &cos,
                ));
            }
        }
        let ev = super::super::evidence::from_rows(items.clone(), &benchmarks);
        let on = |l: usize, half: Half| {
            let rep = Rep::new("transformer-mlm", "aggregated", Some(l));
            ev.score(&rep, "WS-353-ALL", half)
                .unwrap()
                .interval
                .estimate
        };
        assert!(on(2, Half::All) > on(1, Half::All) && on(2, Half::Test) > 0.8);
        assert!(on(1, Half::Dev) > on(2, Half::Dev));
        let rows = pooled_and_collocations(0, "all", 4000, &items, &benchmarks, None).unwrap();
        let r: Vec<&SizeRow> = rows
            .iter()
            .filter(|r| r.quantity == "best_layer_minus_embedding")
            .collect();
        assert_eq!(r.len(), 1, "{rows:?}");
        let r = r[0];
        assert_eq!(
            (r.layer, r.seeds, r.benchmark.as_str()),
            (Some(1), 3, "WS-353-ALL")
        );
        assert_eq!(
            (r.other_model.as_str(), r.other_representation.as_str()),
            ("transformer-mlm", "embedding")
        );
        // Scored on the test half (about half the pairs), where the layer chosen on dev is
        // noise, as the embedding is.
        assert!(r.items > 100 && r.items < 200, "{r:?}");
        assert!(r.lo < 0.0 && r.hi > 0.0 && r.value.abs() < 0.2, "{r:?}");
        assert!(section(&rows).contains("transformer-mlm, WS-353-ALL: all layer 1 "));
        // One seed: no interval can carry seeds, so no row.
        let one: Vec<ItemRow> = items.into_iter().filter(|i| i.seed == Some(1)).collect();
        let rows = pooled_and_collocations(0, "all", 4000, &one, &benchmarks, None).unwrap();
        assert!(rows.is_empty(), "{rows:?}");
    }

    #[test]
    fn shared_pairs_are_counted_in_either_order_against_the_largest_arm() {
        let p = |a: &str, b: &str| (a.to_string(), b.to_string());
        let arms = vec![
            (
                0,
                "a quarter".to_string(),
                10,
                vec![p("new", "york"), p("x", "y"), p("b", "a")],
            ),
            (
                2,
                "all".to_string(),
                40,
                vec![p("york", "new"), p("a", "b"), p("c", "d")],
            ),
            (1, "a half".to_string(), 20, vec![p("c", "d"), p("e", "f")]),
        ];
        let rows = pairs_shared_with_largest(&arms);
        let got: Vec<(usize, f64, usize)> =
            rows.iter().map(|r| (r.arm, r.value, r.items)).collect();
        assert_eq!(got, vec![(0, 2.0, 3), (1, 1.0, 2)]);
        assert!(rows
            .iter()
            .all(|r| r.quantity == "pairs_shared_with_largest"));
        let mut all = rows.clone();
        all.push(SizeRow {
            arm: 2,
            label: "all".into(),
            tokens: 40,
            model: "word2vec-sgns".into(),
            representation: "static".into(),
            benchmark: "collocation".into(),
            quantity: "collocation_gap".into(),
            value: 0.3,
            lo: 0.2,
            hi: 0.4,
            seeds: 5,
            items: 6,
            other_model: String::new(),
            other_representation: String::new(),
            layer: None,
        });
        let text = section(&all);
        assert!(
            text.contains("Collocated pairs that are also all's (either order): 2 of a quarter's 3, 1 of a half's 2."),
            "{text}"
        );
    }

    #[test]
    fn a_change_between_sizes_combines_the_two_half_widths_in_quadrature() {
        let row = |arm: usize, model: &str, q: &str, value: f64, half: f64| SizeRow {
            arm,
            label: format!("arm {arm}"),
            tokens: 1000 * (arm as u64 + 1),
            model: model.into(),
            representation: "embedding".into(),
            benchmark: "collocation".into(),
            quantity: q.into(),
            value,
            lo: value - half,
            hi: value + half,
            seeds: 5 - arm,
            items: 100 + arm,
            other_model: String::new(),
            other_representation: String::new(),
            layer: None,
        };
        let rows = vec![
            row(0, "m", "collocation_gap", 0.1, 0.05),
            row(2, "m", "collocation_gap", 0.3, 0.12),
            row(1, "m", "collocation_gap", 0.2, 0.09),
            row(0, "m", "gap_minus_untrained", 0.08, 0.06),
            row(2, "m", "gap_minus_untrained", 0.28, 0.08),
            // Not at the largest size: no change.
            row(0, "only-small", "collocation_gap", 0.5, 0.1),
        ];
        let out = collocation_change_with_size(&rows);
        let find = |arm: usize, q: &str| {
            out.iter()
                .find(|r| r.arm == arm && r.quantity == q)
                .unwrap_or_else(|| panic!("{arm} {q}: {out:?}"))
        };
        // 0.3 - 0.1 = 0.2 +- sqrt(0.12^2 + 0.05^2) = 0.13; 0.3 - 0.2 = 0.1 +- 0.15.
        let c = find(0, "largest_minus_this");
        assert!(
            (c.value - 0.2).abs() < 1e-12 && (c.lo - 0.07).abs() < 1e-12,
            "{c:?}"
        );
        assert_eq!((c.seeds, c.label.as_str()), (3, "arm 0"));
        let c = find(1, "largest_minus_this");
        assert!(
            (c.value - 0.1).abs() < 1e-12 && (c.hi - 0.25).abs() < 1e-12,
            "{c:?}"
        );
        // 0.28 - 0.08 = 0.2 +- sqrt(0.08^2 + 0.06^2) = 0.1, against the untrained model.
        let d = find(0, "largest_minus_this_difference");
        assert!(
            (d.lo - 0.1).abs() < 1e-12 && (d.hi - 0.3).abs() < 1e-12,
            "{d:?}"
        );
        assert_eq!(d.other_model, REFERENCE.0);
        assert_eq!(out.len(), 3, "{out:?}");
    }

    #[test]
    fn collocation_gaps_are_read_per_size_against_the_untrained_model_and_between_sizes() {
        let benchmarks = super::super::eval::benchmarks(&[]).unwrap();
        let pairs: Vec<(String, String)> = (0..40)
            .map(|k| (format!("a{k}"), format!("b{}", k % 8)))
            .collect();
        let matched: Vec<(String, String)> = (0..40)
            .map(|k| (format!("c{k}"), format!("d{k}")))
            .collect();
        let arm = |gap: f64| -> Vec<ItemRow> {
            let mut items = Vec::new();
            for seed in [1u64, 2, 3] {
                let jitter = 0.01 * seed as f64;
                for (model, rep, g) in [
                    ("transformer-mlm", "embedding", gap),
                    ("transformer-untrained", "embedding", 0.0),
                ] {
                    let c: Vec<f64> = (0..40)
                        .map(|k| 0.1 + g + jitter + 0.02 * (k % 8) as f64)
                        .collect();
                    let m: Vec<f64> = (0..40).map(|k| 0.1 + 0.01 * (k % 5) as f64).collect();
                    items.push(cosine_row(
                        model,
                        rep,
                        None,
                        "collocation",
                        "collocated",
                        seed,
                        &c,
                    ));
                    items.push(cosine_row(
                        model,
                        rep,
                        None,
                        "collocation",
                        "matched",
                        seed,
                        &m,
                    ));
                }
            }
            items
        };
        let cp = analysis::collocation::CollocationPairs {
            pairs: pairs.clone(),
            shuffled: vec![],
            matched: matched.clone(),
            shared_context: vec![],
            shared_matched: vec![],
            excluded: 0,
        };
        let mut rows =
            pooled_and_collocations(0, "a quarter", 1000, &arm(0.1), &benchmarks, Some(&cp))
                .unwrap();
        rows.extend(
            pooled_and_collocations(1, "all", 4000, &arm(0.3), &benchmarks, Some(&cp)).unwrap(),
        );
        let get = |arm: usize, model: &str, q: &str| {
            rows.iter()
                .find(|r| {
                    r.arm == arm
                        && r.model == model
                        && r.benchmark == "collocation"
                        && r.quantity == q
                })
                .unwrap_or_else(|| panic!("{arm} {model} {q}: {rows:?}"))
                .clone()
        };
        // Collocated cosines 0.1 + gap + 0.01 seed + 0.02 (k mod 8) (mean 0.07 over k), matched
        // 0.1 + 0.01 (k mod 5) (mean 0.02): the seed mean gap is gap + 0.02 + 0.05.
        let g = get(1, "transformer-mlm", "collocation_gap");
        assert!(
            (g.value - 0.37).abs() < 1e-9 && g.lo < 0.37 && g.hi > 0.37,
            "{g:?}"
        );
        assert_eq!((g.seeds, g.items), (3, 80));
        let u = get(1, "transformer-untrained", "collocation_gap");
        assert!((u.value - 0.07).abs() < 1e-9, "{u:?}");
        // Seed s against seed s: the jitter cancels, the difference is the planted gap.
        let d = get(1, "transformer-mlm", "gap_minus_untrained");
        assert!((d.value - 0.3).abs() < 1e-9 && d.lo > 0.0, "{d:?}");
        // Between sizes: 0.37 - 0.17, half-widths in quadrature.
        let changes = collocation_change_with_size(&rows);
        let c = changes
            .iter()
            .find(|r| r.model == "transformer-mlm" && r.arm == 0)
            .unwrap();
        assert!((c.value - 0.2).abs() < 1e-9 && c.lo > 0.0, "{c:?}");
        assert_eq!(
            (c.quantity.as_str(), c.label.as_str()),
            ("largest_minus_this", "a quarter")
        );
        // Resampled through the words: eight b-words carry the collocated pairs' spread, so
        // the interval is wider than as independent pairs.
        let apart = pooled_and_collocations(1, "all", 4000, &arm(0.3), &benchmarks, None).unwrap();
        let a = apart
            .iter()
            .find(|r| r.model == "transformer-mlm" && r.quantity == "collocation_gap")
            .unwrap();
        assert!(g.hi - g.lo > 1.5 * (a.hi - a.lo), "{g:?} {a:?}");
        let mut all = rows.clone();
        all.extend(changes);
        let text = section(&all);
        assert!(
            text.contains("**Collocations: collocated minus frequency-matched"),
            "{text}"
        );
        assert!(
            text.contains("| masked LM, tied head: embedding | 0.170 ["),
            "{text}"
        );
        // Pairs that are not the kept cosines' are refused, naming the arm.
        let short = analysis::collocation::CollocationPairs {
            pairs: pairs[..39].to_vec(),
            ..cp
        };
        let e = pooled_and_collocations(1, "all", 4000, &arm(0.3), &benchmarks, Some(&short))
            .unwrap_err();
        assert!(
            e.to_string().contains("arm \"all\"")
                && e.to_string().contains("40 pairs' cosines, but 39"),
            "{e}"
        );
    }
}
