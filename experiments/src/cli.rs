//! The command line: which experiment (`--exp`), its flags, and which flags each experiment
//! reads. A leaf: every experiment takes its [`Args`] from here.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{CommandFactory, Parser, ValueEnum};

/// Where `--quick` writes when `--out` is not given: beside the committed `results/`, never in
/// it (ignored by git).
pub const QUICK_OUT: &str = "results-quick";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// Tokens, types, vocabulary size and coverage of the corpus.
    CorpusStats,
    /// Train word2vec skip-gram and CBOW, write vectors, run stats and their evaluation.
    Word2vec,
    /// Train the transformer (masked or causal LM) and write its loss curve.
    Train,
    /// Evaluate a word2vec text/binary file on every analogy and similarity set in data/.
    Eval,
    /// The nearest words to `--word` in `--vectors`, with cosines.
    Neighbours,
    /// One representation of one study model (`--model`, `--seed`, `--representation`,
    /// `--layer`) written as word2vec vectors to `--vectors` (binary for a .bin path, else
    /// text), so that gensim reads what the study measured.
    Export,
    /// Time corpus encoding and analogy evaluation; writes results/bench/*.csv.
    Bench,
    /// Train one word2vec model (`--model`, `--threads`) for the speed/memory benchmark; one
    /// process per run so peak memory is the run's own (scripts/bench_word2vec.sh runs them all).
    BenchWord2vec,
    /// Training throughput of the transformer on flex, ndarray and wgpu; writes
    /// <out>/bench/transformer.csv (scripts/bench_transformer.sh adds PyTorch beside it and
    /// files it under results/bench/<isa>/).
    BenchTransformer,
    /// One backend's steps of `bench-transformer`, one per benchmark name read on stdin, each
    /// answered with its seconds: what scripts/bench_transformer.sh interleaves with PyTorch.
    #[value(hide = true)]
    BenchTransformerSteps,
    /// The same model and weights on every burn backend: agreement, loss curves, tokens/s.
    Backends,
    /// Paper: word analogy (semantic/syntactic) of word2vec SGNS and CBOW, the transformer's
    /// embedding matrix and its best decontextualized and aggregated layer, side by side.
    Analogy,
    /// Paper: every similarity set (Spearman, n, OOV) for the same representations.
    Similarity,
    /// Paper: analogy and similarity against layer, aggregated and decontextualized, with
    /// word2vec as the reference line.
    Layers,
    /// Paper: untied vs shared-QK vs shared-QKV attention: loss, quality, W_Q/W_K/W_V geometry.
    Qkv,
    /// Paper: trained vs frozen random token embeddings.
    Frozen,
    /// Paper: masked LM vs causal LM vs untrained: are collocated words similar?
    Objective,
    /// Paper: self-similarity, intra-sentence similarity and anisotropy per layer.
    Contextuality,
    /// Followed through training: every variant trained to a plateau (fair budget) and measured
    /// at log-spaced snapshots, word2vec on the same token counts (the `[dynamics]` table of
    /// experiments/configs/paper.toml).
    Dynamics,
    /// Each variant's learning rate chosen on the dev block: the `[sweep]` grid, budget and
    /// seeds, the same for every variant (`--model`, `--seed`: one variant and seed, so that
    /// runs go side by side); writes <out>/sweep/.
    Sweep,
    /// A Hugging Face checkpoint directory (`--model DIR`: config.json, model.safetensors,
    /// tokenizer.json; BERT-family or GPT-2) through the study's measures on the study's
    /// word list and corpus: its embedding, every layer decontextualized and pooled over the
    /// corpus (item intervals), contextuality per layer beside published BERT-base and GPT-2,
    /// its heads' W_Q/W_K/W_V and bilinear forms against their initialisation; writes
    /// <out>/pretrained/<name>/.
    Pretrained,
    /// One forward pass of a checkpoint (`--model DIR`) per `forward` line on stdin, timed:
    /// what scripts/bench_pretrained.py interleaves with PyTorch.
    #[value(hide = true)]
    BenchPretrainedSteps,
    /// Every comparison of the study (each model trained once, or read from its kept
    /// measurements) and the report; the backend comparison is `--exp backends`.
    All,
    /// One model of a study (`--model`, `--seed`) trained and measured: what `--jobs` runs in
    /// each child process.
    #[value(hide = true)]
    MeasureModel,
    /// One model's snapshots measured (`--exp dynamics --jobs`' children).
    #[value(hide = true)]
    MeasureSnapshots,
    /// The similarity and [MASK]-gain answers as a function of corpus size: reads the kept
    /// measurements of each arm of experiments/configs/corpus-size.toml (a study config and
    /// its own `--out`, relative to this `--out`), trains nothing; writes
    /// <out>/corpus-size/summary.csv, which the report's section is drawn from.
    CorpusSize,
    /// results/REPORT.md from the experiments' CSVs and the kept per-item outcomes.
    Report,
    /// Checks that every file `all` writes under `--out` exists and parses (CI runs it after
    /// `--exp all --quick`).
    CheckOutputs,
    /// Checks every kept measurement directory under `--out` (`measurements/*` and
    /// `*/measurements/*`): a sealed one against its manifest, one written before manifests
    /// existed by what can be checked, after which it is sealed; with `--config` (and `--quick`
    /// for a toy study of it), also records which collocation pairs the cosines of that
    /// config's models were kept for, where they
    /// were kept before that was recorded (after checking the pairs' number; nothing is
    /// recorded when any directory under `--out` has a problem).
    Seal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Flex,
    Ndarray,
    Wgpu,
}

#[derive(Clone, Debug, Parser)]
#[command(
    name = "experiments",
    about = "embedlab: word2vec vs transformer embeddings, measured"
)]
pub struct Args {
    /// The experiment to run.
    #[arg(long, value_enum)]
    pub exp: Experiment,
    /// TOML config (default: experiments/configs/<exp>.toml when it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Corpus file, overriding the config's `corpus.path`.
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Where CSV and figures go (with `--quick` and no `--out`: results-quick, so that a toy
    /// run never writes into the committed results).
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Random seed, overriding the config's (paper experiments: this one seed instead of the
    /// config's `seeds`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// `train`: the seed of the initial weights, overriding the config's `[training]
    /// init_seed`; `--seed` (or the config's) then sets only the batch order, the masks and
    /// dropout: a crossed run, one seed's weights on another's batches.
    #[arg(long = "init-seed", id = "init-seed")]
    pub init_seed: Option<u64>,
    /// burn backend for transformer experiments (default flex; `backends` and
    /// `bench-transformer` compare all three unless one is named).
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Tiny sizes for smoke runs.
    #[arg(long)]
    pub quick: bool,
    /// Word vectors (word2vec text or binary) for `eval` and `neighbours`.
    #[arg(long)]
    pub vectors: Option<PathBuf>,
    /// Extra similarity sets (`word<TAB>word<TAB>score`) for `eval`; repeatable.
    #[arg(long)]
    pub similarity: Vec<PathBuf>,
    /// Query word for `neighbours`.
    #[arg(long)]
    pub word: Option<String>,
    /// `export`: which of the model's tables (static for word2vec; embedding, lm_head,
    /// decontextualized or aggregated for a transformer).
    #[arg(long)]
    pub representation: Option<String>,
    /// `export`: the layer of a decontextualized or aggregated table (0: the embedding layer's
    /// output).
    #[arg(long)]
    pub layer: Option<usize>,
    /// Which model an experiment trains, where it trains one (`bench-word2vec`: sgns or cbow).
    #[arg(long)]
    pub model: Option<String>,
    /// Transformer objective for `train`: mlm or clm, overriding the config's.
    #[arg(long)]
    pub objective: Option<String>,
    /// Continue a training run from its last checkpoint.
    #[arg(long)]
    pub resume: bool,
    /// `pretrained`: say what reading the corpus will cost (time from one batch timed, memory)
    /// and stop before the corpus passes, writing nothing.
    #[arg(long)]
    pub estimate: bool,
    /// `pretrained`: only the attention heads and their word-pair scores (`heads.csv`,
    /// `pairs.csv`), from the weights and the embedding table: no corpus pass.
    #[arg(long = "heads-only", id = "heads-only", conflicts_with = "estimate")]
    pub heads_only: bool,
    /// `bench-transformer-steps`: blocks in the benchmark model (default 4, the paper model's),
    /// for scripts/bench_depth.py, which asks whether flex's gap to PyTorch grows with depth.
    #[arg(long)]
    pub layers: Option<usize>,
    /// Training threads, overriding the config's.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Paper experiments and `dynamics`: how many models train and measure side by side, one
    /// child process each (their output in <out>/logs/). 1: one after another, in this process.
    /// 2 by default: one flex training does not keep both cores busy (models per hour of two
    /// side by side against one alone: results/bench/<isa>/jobs.csv).
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// `train`: devices of the backend to train one model on, data-parallel (burn-train's
    /// `MultiDevice`: each device computes its shard of every step's batch, the gradients are
    /// summed on the first). For a machine with several GPUs; on one CPU, flex has a single
    /// device and N > 1 only splits each step into N shards on it.
    #[arg(long, default_value_t = 1)]
    pub devices: usize,
    /// `train`: burn-train's distributed data parallel instead of `--devices`' MultiDevice
    /// (burn 0.22.1: CUDA only, which this build lacks; refused with the reason).
    #[arg(long)]
    pub ddp: bool,
    /// How many neighbours `neighbours` prints.
    #[arg(long, default_value_t = 10)]
    pub topn: usize,
}

impl Experiment {
    /// The flags this experiment reads (besides `--exp`). Any other flag given on the command
    /// line is refused: a flag that does nothing must not look as if it had done something.
    pub fn flags(self) -> &'static [&'static str] {
        use Experiment::*;
        const PAPER: &[&str] = &[
            "config",
            "corpus",
            "out",
            "seed",
            "backend",
            "quick",
            "similarity",
            "jobs",
        ];
        const ONE: &[&str] = &[
            "config",
            "corpus",
            "out",
            "seed",
            "backend",
            "quick",
            "similarity",
            "model",
        ];
        match self {
            CorpusStats => &["config", "corpus", "out"],
            CorpusSize => &["config", "out", "quick", "similarity"],
            Word2vec => &[
                "config",
                "corpus",
                "out",
                "seed",
                "quick",
                "threads",
                "similarity",
            ],
            Train => &[
                "config",
                "corpus",
                "out",
                "seed",
                "init-seed",
                "backend",
                "quick",
                "objective",
                "resume",
                "devices",
                "ddp",
            ],
            Eval => &["config", "out", "vectors", "similarity"],
            Neighbours => &["vectors", "word", "topn"],
            Export => &[
                "config",
                "corpus",
                "out",
                "seed",
                "backend",
                "quick",
                "model",
                "representation",
                "layer",
                "vectors",
            ],
            Bench => &["corpus", "out", "seed", "quick"],
            BenchWord2vec => &[
                "config", "corpus", "out", "seed", "quick", "threads", "model",
            ],
            BenchTransformer => &["out", "seed", "backend", "quick"],
            BenchTransformerSteps => &["seed", "backend", "quick", "layers"],
            Backends => &["config", "corpus", "out", "seed", "backend", "quick"],
            Analogy | Similarity | Layers | Qkv | Frozen | Objective | Contextuality | Dynamics
            | All => PAPER,
            MeasureModel | MeasureSnapshots | Sweep => ONE,
            Pretrained => &["config", "corpus", "out", "model", "estimate", "heads-only"],
            BenchPretrainedSteps => &["model", "seed"],
            Report => &["config", "out", "quick"],
            CheckOutputs => &["out"],
            Seal => &["config", "out", "quick"],
        }
    }

    /// Whether this is a `--jobs` child (`measure-model`, `measure-snapshots`), which runs
    /// under its parent's `--out` lock.
    pub fn is_child(self) -> bool {
        matches!(
            self,
            Experiment::MeasureModel | Experiment::MeasureSnapshots
        )
    }

    /// Whether the experiment writes under `--out` (checked before any work starts).
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Experiment::Neighbours | Experiment::CheckOutputs | Experiment::BenchTransformerSteps
        )
    }
}

/// Flags given on the command line that `exp` does not read.
pub fn unused_flags(exp: Experiment, matches: &clap::ArgMatches) -> Vec<String> {
    Args::command()
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .filter(|id| id != "exp" && !exp.flags().contains(&id.as_str()))
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .map(|id| format!("--{id}"))
        .collect()
}
