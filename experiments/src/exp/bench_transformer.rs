//! `--exp bench-transformer`: training throughput of the transformer on each burn backend,
//! each timed on its own in this process, written to <out>/bench/transformer.csv. The
//! comparison with PyTorch (`scripts/bench_transformer.sh`, filed under results/bench/<isa>/)
//! takes the same steps from [`serve`] instead, in turn with PyTorch's.
//!
//! What is timed, per step: the forward pass of the encoder on a random `[batch, seq]` batch of
//! token ids and the backward pass of `mean(h_N²)` (the last layer's hidden states; no LM head,
//! no optimiser), as issue 9 specifies, ending with `device.sync()` so asynchronous backends
//! (wgpu) are charged for their work. A second benchmark, `mlm-step`, times what training really
//! does per step: masked-LM loss with the tied head over the vocabulary, backward and AdamW;
//! `clm-step` and `clm-matched-step` the same for a causal LM on every position and on 15% of
//! positions (no PyTorch counterpart yet). The step server also times `forward`, the first half
//! of forward-backward.
//! Warm-up steps (autotuning, allocation) are excluded; the median of the repeats is reported
//! with the minimum and maximum.
//!
//! [`serve`] (`--exp bench-transformer-steps`) runs these steps one per request on stdin:
//! a ratio of two backends timed minutes apart on our VMs measures the VM's drift as well.

use std::time::Instant;

use burn::optim::{AdamWConfig, ModuleOptimizer};
use burn::tensor::{Int, Tensor, TensorData};
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use transformer::backend::BackendKind;
use transformer::data::{Objective, Sequences};
use transformer::model::{ModelSettings, Transformer};
use transformer::training;

use crate::cli::Args;
use crate::output;

#[derive(Serialize)]
struct Row {
    framework: String,
    backend: String,
    device: String,
    benchmark: String,
    threads: usize,
    d_model: usize,
    n_layers: usize,
    n_heads: usize,
    d_ff: usize,
    vocab: usize,
    batch: usize,
    seq_len: usize,
    repeats: usize,
    median_tokens_per_s: f64,
    min_tokens_per_s: f64,
    max_tokens_per_s: f64,
    /// Whether the CPU has AVX-512 (gemm's, and so flex's, matmul kernels use it when it does).
    avx512: bool,
    /// The 1-minute load average when the row was measured: above ~0.5 the machine was not
    /// quiet, and only ratios measured in the same run mean much.
    load_1min: f64,
}

/// One timed training step of `transformer-rounds.csv`: the steps of the three objectives
/// alternate within a round, so ratios can be taken round by round.
#[derive(Serialize)]
struct RoundRow {
    backend: String,
    round: usize,
    benchmark: String,
    seconds: f64,
    load_1min: f64,
}

/// Whether this CPU has AVX-512F.
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The 1-minute load average (`/proc/loadavg`), NaN where there is none.
pub fn load_1min() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Tokens per second of `step` (called with the call's index) over `repeats` timed calls after
/// `warmup` untimed ones: (median, min, max). `step` must end with `device.sync()`.
pub fn throughput(
    warmup: usize,
    repeats: usize,
    tokens: usize,
    mut step: impl FnMut(usize) -> anyhow::Result<()>,
) -> anyhow::Result<(f64, f64, f64)> {
    let mut rates = Vec::with_capacity(repeats);
    for i in 0..warmup + repeats {
        let t = Instant::now();
        step(i)?;
        if i >= warmup {
            rates.push(tokens as f64 / t.elapsed().as_secs_f64());
        }
    }
    rates.sort_by(f64::total_cmp);
    Ok((rates[rates.len() / 2], rates[0], rates[rates.len() - 1]))
}

fn sync(device: &burn::tensor::Device) -> anyhow::Result<()> {
    device
        .sync()
        .map_err(|e| anyhow::anyhow!("device sync failed: {e:?}"))
}

/// The benchmarks a [`StepBench`] times, in the order the CSV lists them. `forward` is
/// forward-backward's forward pass alone (the autodiff graph recorded, as training does, then
/// dropped): with it the step server splits forward + backward into its two halves. The last
/// five are [`PARTS`].
pub const BENCHMARKS: [&str; 10] = [
    "forward",
    "forward-backward",
    "mlm-step",
    "clm-step",
    "clm-matched-step",
    "identity",
    "embedding",
    "layer-norm",
    "attention",
    "feed-forward",
];

/// Forward + backward of one part of the model alone, to locate where forward-backward's time
/// goes (scripts/bench_transformer_interleaved.py `--parts` takes them in turn with PyTorch's):
/// the token and position embeddings; the first block's attention layer norm, its
/// self-attention and its feed-forward layer (no layer norm in either), each on one fixed
/// `[batch, seq, d_model]` input that requires a gradient, as a block's input does in training.
/// Loss `mean(y²)`, as forward-backward's. One forward-backward runs the embeddings once and
/// each of the others four times (layer norm eight), plus the residual additions. `identity`
/// is the control: the loss and its backward on the input itself, what each part's time
/// includes besides the part (and a framework's fixed cost per backward pass).
pub const PARTS: [&str; 5] = [
    "identity",
    "embedding",
    "layer-norm",
    "attention",
    "feed-forward",
];

/// The training steps among [`BENCHMARKS`]: objective and causal-LM target fraction. Masked LM;
/// causal LM on every position (its vocabulary projection is ~6.7x larger); causal LM on 15% of
/// its positions (matched targets, the study's comparison with masked LM).
const TRAINING_STEPS: [(&str, Objective, Option<f64>); 3] = [
    ("mlm-step", Objective::Mlm, None),
    ("clm-step", Objective::Clm, None),
    ("clm-matched-step", Objective::Clm, Some(0.15)),
];

/// How many distinct batches each training benchmark cycles through.
const BATCHES: usize = 16;

/// One backend's benchmark model (the default config, dropout 0), its AdamW state and its data,
/// ready to time one step of any of [`BENCHMARKS`] at a time: what `bench-transformer` times
/// in one process and what `bench-transformer-steps` serves, a step per request, for
/// scripts/bench_transformer.sh to interleave with the other backends and with PyTorch.
pub struct StepBench {
    kind: BackendKind,
    device: burn::tensor::Device,
    /// In an Option so each step can move the model into the optimiser (a clone would keep a
    /// second reference to every parameter and stop in-place updates).
    model: Option<Transformer>,
    optim: ModuleOptimizer,
    /// The forward-backward benchmark's batch: random ids over the text8 vocabulary.
    tokens: Tensor<2, Int>,
    /// The input of the [`PARTS`] benchmarks: `[batch, seq, d_model]`, uniform with variance 1.
    hidden: Tensor<3>,
    seqs: Sequences,
    batch: usize,
    /// How many steps of each training benchmark have run: which batch comes next.
    calls: [usize; TRAINING_STEPS.len()],
}

impl StepBench {
    /// The vocabulary: text8 at min_count 5 plus the five special tokens.
    pub const VOCAB: usize = 22_541 + 5;

    /// `quick`: a [4, 16] batch instead of [32, 64].
    pub fn new(kind: BackendKind, quick: bool, seed: u64) -> anyhow::Result<Self> {
        Self::with_layers(kind, quick, seed, Self::settings().n_layers)
    }

    /// [`Self::new`] with `n_layers` blocks instead of the default model's.
    pub fn with_layers(
        kind: BackendKind,
        quick: bool,
        seed: u64,
        n_layers: usize,
    ) -> anyhow::Result<Self> {
        let (batch, seq_len) = Self::shape(quick);
        let settings = ModelSettings {
            n_layers,
            ..Self::settings()
        };
        settings
            .validate()
            .map_err(|e| anyhow::anyhow!("--layers {n_layers}: {e}"))?;
        let cfg = settings.to_config(Self::VOCAB, seq_len);
        let device = crate::device::open(kind)?.autodiff();
        let model = cfg.init(&device);
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let ids: Vec<i64> = (0..batch * seq_len)
            .map(|_| rng.random_range(0..22_541))
            .collect();
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [batch, seq_len]), &device);
        let d_model = cfg.d_model;
        let hidden: Vec<f32> = (0..batch * seq_len * d_model)
            .map(|_| rng.random_range(-3f32.sqrt()..3f32.sqrt()))
            .collect();
        let hidden =
            Tensor::<3>::from_data(TensorData::new(hidden, [batch, seq_len, d_model]), &device);
        Ok(Self {
            kind,
            device,
            model: Some(model),
            optim: AdamWConfig::new().init(),
            tokens,
            hidden,
            seqs: synthetic_sequences(Self::VOCAB - 5, seq_len, batch * BATCHES + 1, 7),
            batch,
            calls: [0; TRAINING_STEPS.len()],
        })
    }

    pub fn settings() -> ModelSettings {
        ModelSettings {
            dropout: 0.0,
            ..ModelSettings::default()
        }
    }

    /// (batch, seq_len).
    pub fn shape(quick: bool) -> (usize, usize) {
        if quick {
            (4, 16)
        } else {
            (32, 64)
        }
    }

    /// Tokens per step.
    pub fn tokens(&self) -> usize {
        self.tokens.dims().iter().product()
    }

    /// Runs one step of `benchmark` (one of [`BENCHMARKS`]) and returns its wall-clock seconds,
    /// ending with `device.sync()` so asynchronous backends are charged for their work. The
    /// batch is built before the clock starts.
    pub fn step(&mut self, benchmark: &str) -> anyhow::Result<f64> {
        if benchmark == "forward" || benchmark == "forward-backward" {
            let model = self.model.as_ref().expect("model");
            let t = Instant::now();
            let out = model.forward(self.tokens.clone(), None, false);
            let loss = out.hidden.last().unwrap().clone().powi_scalar(2).mean();
            if benchmark == "forward" {
                // Wait for the value, as backward would, then drop the recorded graph.
                let _: f32 = loss.into_scalar();
            } else {
                drop(loss.backward());
            }
            sync(&self.device)?;
            return Ok(t.elapsed().as_secs_f64());
        }
        if PARTS.contains(&benchmark) {
            let model = self.model.as_ref().expect("model");
            let block = &model.blocks[0];
            let t = Instant::now();
            let out = if benchmark == "embedding" {
                model.embed(self.tokens.clone())
            } else {
                let x = self.hidden.clone().require_grad();
                match benchmark {
                    "identity" => x,
                    "layer-norm" => block.norm_attention.forward(x),
                    "attention" => block.attention.forward(x, None, false),
                    _ => block.feed_forward(x),
                }
            };
            drop(out.powi_scalar(2).mean().backward());
            sync(&self.device)?;
            return Ok(t.elapsed().as_secs_f64());
        }
        let Some(k) = TRAINING_STEPS.iter().position(|s| s.0 == benchmark) else {
            anyhow::bail!(
                "unknown benchmark `{benchmark}`: expected one of {}",
                BENCHMARKS.join(", ")
            );
        };
        let (_, objective, fraction) = TRAINING_STEPS[k];
        let i = self.calls[k] % BATCHES;
        self.calls[k] += 1;
        let batch = self
            .seqs
            .train_batch_sampled(objective, self.batch, i, 1, fraction);
        let t = Instant::now();
        let m = self.model.take().expect("model");
        let grads = match training::try_train_step(&m, &batch, objective, &self.device) {
            Ok((_, grads)) => grads,
            Err(e) => {
                self.model = Some(m);
                anyhow::bail!("{benchmark} on {}: {e}", self.kind.name());
            }
        };
        self.model = Some(self.optim.step(1e-4, m, grads));
        sync(&self.device)?;
        Ok(t.elapsed().as_secs_f64())
    }
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let settings = StepBench::settings();
    let (batch, seq_len) = StepBench::shape(args.quick);
    let (warmup, repeats) = if args.quick { (1, 2) } else { (3, 10) };
    let backends: Vec<BackendKind> = if args.backend.is_some() {
        vec![crate::device::backend(args)]
    } else {
        vec![BackendKind::Flex, BackendKind::Ndarray, BackendKind::Wgpu]
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows = Vec::new();
    let mut rounds = Vec::new();
    for kind in backends {
        let mut bench = StepBench::new(kind, args.quick, args.seed.unwrap_or(1))?;
        let tokens = bench.tokens();
        let (median, min, max) = throughput(warmup, repeats, tokens, |_| {
            bench.step("forward-backward").map(drop)
        })?;
        println!(
            "{:>8} forward+backward: {median:>8.0} tokens/s (min {min:.0}, max {max:.0})",
            kind.name()
        );
        let row = |benchmark: &str, (median, min, max): (f64, f64, f64)| Row {
            framework: "burn 0.22.1".into(),
            backend: kind.name().into(),
            device: crate::device::name(kind),
            benchmark: benchmark.into(),
            threads,
            d_model: settings.d_model,
            n_layers: settings.n_layers,
            n_heads: settings.n_heads,
            d_ff: settings.d_ff,
            vocab: StepBench::VOCAB,
            batch,
            seq_len,
            repeats,
            median_tokens_per_s: median,
            min_tokens_per_s: min,
            max_tokens_per_s: max,
            avx512: has_avx512(),
            load_1min: load_1min(),
        };
        rows.push(row("forward-backward", (median, min, max)));

        // A full training step per objective, head and optimiser included, timed in turn, one
        // step each per round, so their ratios are measured under the same conditions even on
        // a machine whose load changes during the run.
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); TRAINING_STEPS.len()];
        // A step this backend cannot compute (lavapipe cannot allocate the full causal LM's
        // logits) leaves this backend's training steps out of the CSV, said on the console; the
        // other backends are still measured.
        let mut failed = None;
        'rounds: for i in 0..warmup + repeats {
            let load = load_1min();
            for (k, &(benchmark, _, _)) in TRAINING_STEPS.iter().enumerate() {
                let seconds = match bench.step(benchmark) {
                    Ok(s) => s,
                    Err(e) => {
                        failed = Some(e.to_string());
                        break 'rounds;
                    }
                };
                if i >= warmup {
                    rates[k].push(tokens as f64 / seconds);
                    rounds.push(RoundRow {
                        backend: kind.name().into(),
                        round: i - warmup,
                        benchmark: benchmark.into(),
                        seconds,
                        load_1min: load,
                    });
                }
            }
        }
        if let Some(why) = failed {
            println!(
                "{:>8} training steps left out of the CSV: {why}",
                kind.name()
            );
            continue;
        }
        // Each causal-LM step against the masked-LM step of the same round: the paired ratio
        // of costs, robust to a load that changes between rounds.
        for (k, &(benchmark, _, _)) in TRAINING_STEPS.iter().enumerate().skip(1) {
            let mut r: Vec<f64> = rates[0]
                .iter()
                .zip(&rates[k])
                .map(|(mlm, other)| mlm / other)
                .collect();
            r.sort_by(f64::total_cmp);
            println!(
                "{:>8} {benchmark} / mlm-step cost, paired by round: median {:.3} (min {:.3}, max {:.3})",
                kind.name(),
                r[r.len() / 2],
                r[0],
                r[r.len() - 1]
            );
        }
        for (&(benchmark, _, _), mut r) in TRAINING_STEPS.iter().zip(rates) {
            r.sort_by(f64::total_cmp);
            let stats = (r[r.len() / 2], r[0], r[r.len() - 1]);
            println!(
                "{:>8} {benchmark}: {:>8.0} tokens/s (min {:.0}, max {:.0})",
                kind.name(),
                stats.0,
                stats.1,
                stats.2
            );
            rows.push(row(benchmark, stats));
        }
    }
    let out = args.out.join("bench/transformer.csv");
    output::write_csv(&out, &rows)?;
    println!("wrote {}", out.display());
    let out = args.out.join("bench/transformer-rounds.csv");
    output::write_csv(&out, &rounds)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// `--exp bench-transformer-steps`: one backend's [`StepBench`] serving steps on request, so
/// that scripts/bench_transformer.sh can time burn and PyTorch step by step in turn on a
/// machine whose speed drifts within a minute. Prints `ready` once set up, then reads one
/// benchmark name per line of stdin and answers each with `<benchmark> <seconds>`, or with
/// `failed <benchmark>: <why>` when this backend cannot compute that step (lavapipe and the full
/// causal LM's logits), and goes on serving; ends at end of input. A name that is not one of
/// [`BENCHMARKS`] is an error naming the stdin line.
pub fn serve(args: &Args) -> anyhow::Result<()> {
    use std::io::{BufRead, Write};
    let mut bench = StepBench::with_layers(
        crate::device::backend(args),
        args.quick,
        args.seed.unwrap_or(1),
        args.layers.unwrap_or(StepBench::settings().n_layers),
    )?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        let benchmark = line.trim();
        if benchmark.is_empty() {
            continue;
        }
        if !BENCHMARKS.contains(&benchmark) {
            anyhow::bail!(
                "stdin line {}: unknown benchmark `{benchmark}` (expected one of {})",
                n + 1,
                BENCHMARKS.join(", ")
            );
        }
        match bench.step(benchmark) {
            Ok(seconds) => writeln!(out, "{benchmark} {seconds}")?,
            Err(e) => writeln!(out, "failed {benchmark}: {e:#}")?,
        }
        out.flush()?;
    }
    Ok(())
}

/// Random word ids cut into sequences, for timing (the values do not matter, the shapes do).
fn synthetic_sequences(n_words: usize, seq_len: usize, n_seq: usize, seed: u64) -> Sequences {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let text: String = (0..n_seq * seq_len)
        .map(|_| format!("w{} ", rng.random_range(0..n_words)))
        .collect();
    let corpus = corpus::Corpus::from_text(
        &text,
        std::path::Path::new("<synthetic>"),
        &corpus::CorpusConfig {
            min_count: 1,
            ..Default::default()
        },
    )
    .expect("synthetic corpus");
    Sequences::new(&corpus, seq_len, 0.0).expect("synthetic sequences")
}
