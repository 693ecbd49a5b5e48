//! The embedlab study as a library: every experiment behind `--exp` (the `experiments`
//! binary is a thin command line over [`run`]), and what is measured on a model, callable
//! without it.
//!
//! Data flows one way: corpus (`corpus` crate) -> vocabulary -> models (`word2vec`,
//! `transformer`) -> vectors and their measures (`analysis`) -> tidy rows ([`output::TidyRow`])
//! -> CSV -> figures ([`plot`]) -> report ([`exp::report`]). What is measured lives in
//! `analysis`; this crate keeps the study. The modules (no two refer to each other, directly or
//! around a loop: `scripts/module_cycles.py` checks it):
//! * [`cli`]: the command line ([`Args`], [`Experiment`]), a leaf every experiment reads;
//! * [`config`], [`paths`], [`output`], [`kept`], [`lock`], [`runs`], [`device`]: configs, paths
//!   under the repository, CSV output, kept measurements (sealed by a manifest and checked
//!   whenever read), one writer per `--out`, the run cache, the device a run computes on;
//! * [`exp::settings`]: the study's config schema, its models ([`exp::settings::ModelId`]) and
//!   who plays each role; [`exp::comparisons`]: the seven comparisons by name and summaries over
//!   seeds;
//! * [`exp::study`]: what is measured on each model, once:
//!   [`exp::study::Study::measure_transformer`] turns a model (a final one or a snapshot) into
//!   tidy rows and per-item outcomes; [`exp::study::Study::scores`] does it for a (variant,
//!   seed) through the run cache and keeps the result under `measurements/`;
//! * [`exp::eval`], [`exp::context_gain`], [`exp::evidence`]: the measures of `analysis`
//!   (benchmark scores, the gain at `[MASK]`, intervals over items and seeds) read and written
//!   as the study's tidy rows and kept per-item outcomes;
//! * [`exp::jobs`]: models trained and measured side by side in child processes;
//! * [`exp::report`]: `REPORT.md`; [`exp::paper`]: the seven comparisons' CSVs and figures;
//! * [`exp::dynamics`]: the whole study, each measure against tokens seen, then the
//!   comparisons and the report.
//!
//! Each experiment lives in its own module under `exp/`.

pub mod cli;
pub mod config;
pub mod device;
pub mod exp;
pub mod kept;
pub mod lock;
pub mod output;
pub mod paths;
pub mod plot;
pub mod runs;

pub use cli::{unused_flags, Args, Backend, Experiment, QUICK_OUT};

/// The README's Rust example compiled with the tests (`cargo test --doc`), so that it keeps up
/// with the library's signatures.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExample;

/// Runs the experiment `args.exp` names (what the binary does once the command line is checked
/// and burn's default device pinned to the run's backend).
pub fn run(args: &Args) -> anyhow::Result<()> {
    match args.exp {
        Experiment::CorpusStats => exp::corpus_stats::run(args),
        Experiment::Word2vec => exp::word2vec::run(args),
        Experiment::Train => exp::train::run(args),
        Experiment::Eval => exp::eval::run(args),
        Experiment::Neighbours => exp::eval::neighbours(args),
        Experiment::Export => exp::export::run(args),
        Experiment::Bench => exp::bench::run(args),
        Experiment::BenchWord2vec => exp::word2vec::bench(args),
        Experiment::BenchTransformer => exp::bench_transformer::run(args),
        Experiment::BenchTransformerSteps => exp::bench_transformer::serve(args),
        Experiment::Backends => exp::backends::run(args),
        Experiment::Analogy
        | Experiment::Similarity
        | Experiment::Layers
        | Experiment::Qkv
        | Experiment::Frozen
        | Experiment::Objective
        | Experiment::Contextuality => exp::paper::run(args, args.exp),
        Experiment::Dynamics => exp::dynamics::run(args),
        Experiment::Sweep => exp::sweep::run(args),
        Experiment::Pretrained => exp::pretrained::run(args),
        Experiment::BenchPretrainedSteps => exp::pretrained::serve(args),
        Experiment::All => exp::paper::all(args),
        Experiment::MeasureModel => exp::dynamics::measure_one(args, exp::jobs::Work::Scores),
        Experiment::MeasureSnapshots => {
            exp::dynamics::measure_one(args, exp::jobs::Work::Snapshots)
        }
        Experiment::CorpusSize => exp::corpus_size::run(args),
        Experiment::Report => exp::report::run(args),
        Experiment::CheckOutputs => exp::paper::check_outputs(args),
        Experiment::Seal => exp::seal::run(args),
    }
}
