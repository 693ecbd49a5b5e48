//! A training run: initialisation, the job schedule, the learning-rate decay, progress and the
//! final report.
//!
//! The corpus is cut into jobs, one per (epoch, chunk). Threads take jobs in order from a shared
//! counter. Everything random in a job (subsampling, window reduction, noise words) comes from a
//! generator seeded by (seed, job), and the job's learning rate from its position in the
//! schedule, not from a racy global counter:
//!
//! ```text
//! α(job) = α₀ - (α₀ - α_min) · (raw words before the job) / (epochs · raw words per epoch)
//! ```
//!
//! So with one thread a run is a pure function of its inputs (bit-identical vectors), and with
//! several the only nondeterminism is hogwild's update interleaving.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use corpus::{subsample, Corpus};
use serde::Serialize;

use crate::config::{Architecture, ConfigError, Update, Word2VecConfig};
use crate::hogwild::{Rows, SharedMatrix, ThreadRows};
use crate::rng::SplitMix64;
use crate::sampling::AliasTable;
use crate::sgd::{self, Sigmoid};
use crate::{usage, WordVectors};

/// `$body` with the constant `$M` equal to `$m` (a window's output rows: the centre word and
/// its noise words) for the counts the lane kernels are compiled for (up to 16 outputs,
/// `negative` up to 15), `$fallback` for any other.
macro_rules! with_outputs {
    ($m:expr, $M:ident => $body:expr, _ => $fallback:expr) => {
        with_outputs!(@arms $m, $M, $body, $fallback; 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
    };
    (@arms $m:expr, $M:ident, $body:expr, $fallback:expr; $($n:literal)*) => {
        match $m {
            $($n => {
                const $M: usize = $n;
                $body
            })*
            _ => $fallback,
        }
    };
}

#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("training stopped: the loss became {loss} in epoch {epoch} (chunk {chunk}); lower alpha (now {alpha})")]
    NonFiniteLoss {
        epoch: usize,
        chunk: usize,
        loss: f64,
        alpha: f32,
    },
}

/// Decrements a count of running workers when dropped.
struct CountDown<'a>(&'a AtomicUsize);

impl Drop for CountDown<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// What a run did, for the CSV and the summary line.
#[derive(Clone, Debug, Serialize)]
pub struct TrainReport {
    pub architecture: Architecture,
    pub dim: usize,
    pub epochs: usize,
    pub threads: usize,
    /// Corpus tokens read over all epochs (out-of-vocabulary and subsampled ones included):
    /// the unit gensim and word2vec.c report speed in.
    pub raw_words: u64,
    /// Centre words actually trained on (after dropping OOV and subsampling).
    pub trained_words: u64,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
    pub raw_words_per_second: f64,
    pub raw_words_per_cpu_second: f64,
    /// Mean loss per (input, target) example over the last epoch.
    pub final_loss: f64,
    pub peak_rss_bytes: u64,
}

pub struct Trained {
    /// The input vectors, one row per vocabulary word (ids in order).
    pub vectors: WordVectors,
    /// The output vectors (word2vec.c's and gensim's `syn1neg`), the same rows: what noise
    /// words and centre words are scored against.
    pub output: WordVectors,
    pub report: TrainReport,
}

struct JobStats {
    loss: f64,
    examples: u64,
    trained: u64,
}

/// Trains `config.architecture` on `corpus`; shows a progress bar on a terminal when `progress`.
pub fn train(
    corpus: &Corpus,
    config: &Word2VecConfig,
    progress: bool,
) -> Result<Trained, TrainError> {
    let enc = &corpus.encoded;
    config.validate(enc.n_chunks())?;
    let (v, dim) = (corpus.vocab.len(), config.dim);
    let cpu0 = usage::now().cpu_seconds;
    let start = Instant::now();

    let mut rng = SplitMix64::new(config.seed);
    // Rows are stored `stride` wide, zero-padded to a whole number of vector registers (see
    // `row_stride`); the padding stays zero and is dropped at the end.
    let stride = row_stride(dim);
    let mut input = vec![0f32; v * stride];
    for row in input.chunks_exact_mut(stride) {
        for x in &mut row[..dim] {
            *x = (rng.next_f32() - 0.5) / dim as f32;
        }
    }
    let mut output = vec![0f32; v * stride];
    let keep = subsample::keep_probabilities(&corpus.vocab, config.sample);
    let noise = AliasTable::unigram(corpus.vocab.counts(), 0.75);
    let sigmoid = Sigmoid::default();

    let n_chunks = enc.n_chunks();
    let per_epoch = enc.n_tokens() as u64;
    // Raw words read before a job starts; the schedule decays over the words of the jobs run.
    let before =
        |job: usize| (job / n_chunks) as u64 * per_epoch + enc.bounds[job % n_chunks] as u64;
    let (n_jobs, total) = job_budget(config, n_chunks, per_epoch, &before)?;
    let a0 = config.start_alpha();
    let alpha_of =
        |job: usize| a0 - (a0 - config.min_alpha) * (before(job) as f64 / total as f64) as f32;

    let next_job = AtomicUsize::new(0);
    let words_done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<TrainError>> = Mutex::new(None);
    let epoch_stats: Mutex<Vec<(f64, u64, u64)>> = Mutex::new(vec![(0.0, 0, 0); config.epochs]);
    let recent: Mutex<(f64, u64)> = Mutex::new((0.0, 0));

    let bar = progress_bar(progress, total, config);
    {
        let input = SharedMatrix::new(&mut input, stride);
        let output = SharedMatrix::new(&mut output, stride);
        let workers_left = AtomicUsize::new(config.threads);
        std::thread::scope(|s| {
            for _ in 0..config.threads {
                s.spawn(|| {
                    // Counted down however the worker ends: a panic must not leave the
                    // progress loop below waiting for it (the scope then re-raises the panic).
                    let _left = CountDown(&workers_left);
                    let mut buf = Buffers::new(config);
                    let mut private =
                        private_output_rows(config).map(|n| ThreadRows::new(&output, n));
                    let mut private_input =
                        private_input_rows(config).map(|n| ThreadRows::new(&input, n));
                    while !stop.load(Ordering::Relaxed) {
                        let job = next_job.fetch_add(1, Ordering::Relaxed);
                        if job >= n_jobs {
                            break;
                        }
                        let (epoch, chunk) = (job / n_chunks, job % n_chunks);
                        let alpha = alpha_of(job);
                        let ids = &enc.ids[enc.bounds[chunk]..enc.bounds[chunk + 1]];
                        let mut rng = SplitMix64::for_job(config.seed, job as u64);
                        let job_ctx = Job {
                            ids,
                            v: v as u32,
                            keep: &keep,
                            noise: &noise,
                            sigmoid: &sigmoid,
                            alpha,
                            config,
                            input: &input,
                        };
                        // The hot loop is compiled for each pairing of the two views.
                        let st = match (&private_input, &private) {
                            (None, Some(rows)) => run_job(&job_ctx, rows, &mut rng, &mut buf),
                            (None, None) => run_job(&job_ctx, &output, &mut rng, &mut buf),
                            (Some(inp), Some(rows)) => {
                                run_job(&job_ctx.with_input(inp), rows, &mut rng, &mut buf)
                            }
                            (Some(inp), None) => {
                                run_job(&job_ctx.with_input(inp), &output, &mut rng, &mut buf)
                            }
                        };
                        if let Some(rows) = &mut private {
                            rows.merge();
                        }
                        if let Some(rows) = &mut private_input {
                            rows.merge();
                        }
                        if !st.loss.is_finite() {
                            stop.store(true, Ordering::Relaxed);
                            failure
                                .lock()
                                .unwrap()
                                .get_or_insert(TrainError::NonFiniteLoss {
                                    epoch: epoch + 1,
                                    chunk,
                                    loss: st.loss,
                                    alpha,
                                });
                            break;
                        }
                        {
                            let mut e = epoch_stats.lock().unwrap();
                            e[epoch].0 += st.loss;
                            e[epoch].1 += st.examples;
                            e[epoch].2 += st.trained;
                        }
                        {
                            let mut r = recent.lock().unwrap();
                            r.0 += st.loss;
                            r.1 += st.examples;
                        }
                        words_done.fetch_add(ids.len() as u64, Ordering::Relaxed);
                    }
                });
            }
            while workers_left.load(Ordering::Acquire) > 0 {
                std::thread::sleep(Duration::from_millis(100));
                let done = words_done.load(Ordering::Relaxed);
                let (l, n) = std::mem::take(&mut *recent.lock().unwrap());
                bar.set_position(done);
                if n > 0 {
                    let job = (done as f64 / per_epoch as f64 * n_chunks as f64) as usize;
                    bar.set_message(format!(
                        "lr {:.5}  loss {:.4}",
                        alpha_of(job.min(n_jobs - 1)),
                        l / n as f64
                    ));
                }
            }
        });
    }
    bar.finish_and_clear();
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }

    let wall = start.elapsed().as_secs_f64();
    let u = usage::now();
    let cpu = u.cpu_seconds - cpu0;
    let stats = epoch_stats.into_inner().unwrap();
    // The last epoch the budget reached (all of them without `max_tokens`).
    let epochs_run = n_jobs.div_ceil(n_chunks);
    let (last_loss, last_n, _) = stats[epochs_run - 1];
    let report = TrainReport {
        architecture: config.architecture,
        dim,
        epochs: epochs_run,
        threads: config.threads,
        raw_words: total,
        trained_words: stats.iter().map(|s| s.2).sum(),
        wall_seconds: wall,
        cpu_seconds: cpu,
        raw_words_per_second: total as f64 / wall,
        raw_words_per_cpu_second: total as f64 / cpu,
        final_loss: last_loss / last_n.max(1) as f64,
        peak_rss_bytes: u.peak_rss_bytes,
    };
    assert!(
        (input.chunks_exact(stride)).all(|row| row[dim..].iter().all(|&x| x == 0.0)),
        "the padding stays zero"
    );
    drop_padding(&mut input, stride, dim);
    drop_padding(&mut output, stride, dim);
    Ok(Trained {
        vectors: WordVectors::new(corpus.vocab.words().to_vec(), dim, input),
        output: WordVectors::new(corpus.vocab.words().to_vec(), dim, output),
        report,
    })
}

/// How many output rows each thread keeps private ([`ThreadRows`]), if any: none on one thread,
/// which shares its rows with no one and reads the shared matrix itself (the hot loop compiled
/// for it, without the private rows' lookup: a one-thread run is word2vec.c's, as before).
fn private_output_rows(config: &Word2VecConfig) -> Option<usize> {
    (config.threads > 1 && config.private_rows > 0).then_some(config.private_rows)
}

/// How many input rows each thread keeps private: as [`private_output_rows`], for
/// `private_input_rows`.
fn private_input_rows(config: &Word2VecConfig) -> Option<usize> {
    (config.threads > 1 && config.private_input_rows > 0).then_some(config.private_input_rows)
}

/// Floats per stored row: `dim` rounded up to a whole number of 256-bit vector registers, so
/// that the dot products and row updates of the hot loop run without a scalar remainder. The
/// padding is zero and stays zero (every update to it is a multiple of zero). Rounding up to
/// 512-bit registers was slower: more bytes per row, and the loop waits on memory
/// (docs/performance.md).
pub fn row_stride(dim: usize) -> usize {
    const LANES: usize = 8;
    dim.div_ceil(LANES) * LANES
}

/// Rows stored `stride` wide become `dim` wide, in place and without a second copy of the
/// matrix: row `r` moves left to `r * dim`, never over a row not yet moved.
fn drop_padding(data: &mut Vec<f32>, stride: usize, dim: usize) {
    assert!(dim <= stride && data.len().is_multiple_of(stride));
    let rows = data.len() / stride;
    for r in 1..rows {
        data.copy_within(r * stride..r * stride + dim, r * dim);
    }
    data.truncate(rows * dim);
}

/// The jobs a run trains and the raw words they read (the learning rate's horizon): every
/// (epoch, chunk) job, or with `max_tokens` the jobs up to the one that reaches the budget.
/// `before(job)` is the raw words read before `job` starts.
fn job_budget(
    config: &Word2VecConfig,
    n_chunks: usize,
    per_epoch: u64,
    before: &dyn Fn(usize) -> u64,
) -> Result<(usize, u64), ConfigError> {
    let all = n_chunks * config.epochs;
    let Some(budget) = config.max_tokens else {
        return Ok((all, per_epoch * config.epochs as u64));
    };
    if budget > per_epoch * config.epochs as u64 {
        return Err(ConfigError(format!(
            "max_tokens {budget} is more than {} epochs of this corpus ({per_epoch} tokens each): raise epochs",
            config.epochs
        )));
    }
    // The first job whose start is at or past the budget is not run.
    let n_jobs = (0..all).find(|&job| before(job) >= budget).unwrap_or(all);
    let total = if n_jobs == all {
        per_epoch * config.epochs as u64
    } else {
        before(n_jobs)
    };
    Ok((n_jobs, total))
}

fn progress_bar(show: bool, total: u64, config: &Word2VecConfig) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{:?} {{bar:30}} {{percent:>3}}% {{human_pos}}/{{human_len}} words  {{per_sec}}  {{msg}}  eta {{eta}}",
            config.architecture
        ))
        .unwrap(),
    );
    bar
}

/// Per-thread scratch space, reused across jobs.
struct Buffers {
    sentence: Vec<u32>,
    h: Vec<f32>,
    grad: Vec<f32>,
    /// CBOW's noise words, drawn one position ahead.
    negs: Vec<u32>,
    /// CBOW's context rows, for [`sgd::cbow_step_lanes`].
    context_rows: Vec<*mut f32>,
    window: WindowBuffers,
}

/// A window's rows, labels and updates ([`Update::Window`]).
struct WindowBuffers {
    contexts: Vec<u32>,
    outputs: Vec<u32>,
    labels: Vec<f32>,
    g: Vec<f32>,
    grad_in: Vec<f32>,
    /// The window's distinct context words, their rows and how often each stands in the window
    /// ([`sgd::window_step_lanes`]).
    input_ids: Vec<u32>,
    input_rows: Vec<*mut f32>,
    input_count: Vec<f32>,
    /// A zero row for the output slots a window leaves unused (count 0).
    zero: Vec<f32>,
}

impl Buffers {
    /// Scratch for `config`'s runs; the window buffers only for [`Update::Window`] (whose
    /// window and noise-word counts the config bounds).
    fn new(config: &Word2VecConfig) -> Self {
        let dim = row_stride(config.dim);
        let (n, m) = if config.update == Update::Window {
            (2 * config.window, config.negative + 1)
        } else {
            (0, 0)
        };
        Buffers {
            sentence: Vec::with_capacity(10_000),
            h: vec![0.0; dim],
            grad: vec![0.0; dim],
            negs: Vec::with_capacity(config.negative),
            context_rows: Vec::with_capacity(2 * config.window),
            window: WindowBuffers {
                contexts: Vec::with_capacity(n),
                outputs: Vec::with_capacity(m),
                labels: Vec::with_capacity(m),
                g: vec![0.0; n * m],
                grad_in: vec![0.0; n * dim],
                input_ids: Vec::with_capacity(n),
                input_rows: Vec::with_capacity(n),
                input_count: Vec::with_capacity(n),
                zero: vec![0.0; dim],
            },
        }
    }
}

/// One chunk's work: its words, the run's tables, and the input matrix as this thread sees it
/// (shared, or with its frequent rows private: [`ThreadRows`]).
struct Job<'a, I: Rows> {
    ids: &'a [u32],
    v: u32,
    keep: &'a [f32],
    noise: &'a AliasTable,
    sigmoid: &'a Sigmoid,
    alpha: f32,
    config: &'a Word2VecConfig,
    input: &'a I,
}

impl<'a, I: Rows> Job<'a, I> {
    /// The same job reading and writing the input rows through `input`.
    fn with_input<'b, J: Rows>(&self, input: &'b J) -> Job<'b, J>
    where
        'a: 'b,
    {
        Job {
            ids: self.ids,
            v: self.v,
            keep: self.keep,
            noise: self.noise,
            sigmoid: self.sigmoid,
            alpha: self.alpha,
            config: self.config,
            input,
        }
    }
}

/// Picks the widest instruction set the CPU has for the hot loop (the same code, compiled twice).
fn run_job<I: Rows, R: Rows>(
    job: &Job<I>,
    output: &R,
    rng: &mut SplitMix64,
    buf: &mut Buffers,
) -> JobStats {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the features were just detected.
        return unsafe { run_job_avx2(job, output, rng, buf) };
    }
    run_job_generic(job, output, rng, buf)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_job_avx2<I: Rows, R: Rows>(
    job: &Job<I>,
    output: &R,
    rng: &mut SplitMix64,
    buf: &mut Buffers,
) -> JobStats {
    run_job_generic(job, output, rng, buf)
}

#[inline(always)]
fn run_job_generic<I: Rows, R: Rows>(
    job: &Job<I>,
    output: &R,
    rng: &mut SplitMix64,
    buf: &mut Buffers,
) -> JobStats {
    let cfg = job.config;
    // Drop out-of-vocabulary words and subsample frequent ones; windows span what remains.
    buf.sentence.clear();
    for &w in job.ids {
        if w < job.v && job.keep[w as usize] >= rng.next_f32() {
            buf.sentence.push(w);
        }
    }
    let sent = &buf.sentence;
    let ahead = match cfg.architecture {
        Architecture::Sg if cfg.update == Update::Window => {
            Some(window_sentence(job, output, rng, sent, &mut buf.window))
        }
        Architecture::Cbow => Some(cbow_sentence(
            job,
            output,
            rng,
            sent,
            &mut buf.h,
            &mut buf.grad,
            &mut buf.negs,
            &mut buf.context_rows,
        )),
        Architecture::Sg => None,
    };
    if let Some((loss, examples)) = ahead {
        return JobStats {
            loss,
            examples,
            trained: sent.len() as u64,
        };
    }
    let (mut loss, mut examples) = (0f64, 0u64);
    for (pos, &word) in sent.iter().enumerate() {
        let reduced = cfg.window - rng.below(cfg.window as u32) as usize;
        let lo = pos.saturating_sub(reduced);
        let hi = (pos + reduced + 1).min(sent.len());
        let contexts = sent[lo..hi]
            .iter()
            .enumerate()
            .filter(|&(i, _)| lo + i != pos)
            .map(|(_, &c)| c);
        match cfg.architecture {
            Architecture::Sg => {
                for c in contexts {
                    let h = job.input.row(c);
                    buf.grad.fill(0.0);
                    loss += sgd::negative_sampling_step(
                        h,
                        &mut buf.grad,
                        word,
                        cfg.negative,
                        || job.noise.sample(rng),
                        job.alpha,
                        job.sigmoid,
                        |j| output.row(j),
                    ) as f64;
                    sgd::axpy(1.0, &buf.grad, h);
                    examples += 1;
                }
            }
            Architecture::Cbow => unreachable!("CBOW goes through cbow_sentence"),
        }
    }
    JobStats {
        loss,
        examples,
        trained: sent.len() as u64,
    }
}

/// Skip-gram over one subsampled sentence in windows ([`Update::Window`]). Each position's
/// draws (its reduced window, then its noise words) are taken one position ahead, in the same
/// order, so that the next window's new rows can be fetched from memory while this one is
/// computed: the rows are read at random over two `vocabulary x dim` matrices, and waiting
/// for them is most of the time of a window (perf).
#[inline(always)]
fn window_sentence<I: Rows, R: Rows>(
    job: &Job<I>,
    output: &R,
    rng: &mut SplitMix64,
    sent: &[u32],
    win: &mut WindowBuffers,
) -> (f64, u64) {
    let cfg = job.config;
    let (mut loss, mut examples) = (0f64, 0u64);
    // The draws of one position: its reduced window and its noise words.
    let draw = |rng: &mut SplitMix64, word: u32, negs: &mut Vec<u32>| -> usize {
        let reduced = cfg.window - rng.below(cfg.window as u32) as usize;
        negs.clear();
        for _ in 0..cfg.negative {
            let w = job.noise.sample(rng);
            // A draw of the centre word is skipped, as in the pair order.
            if w != word {
                negs.push(w);
            }
        }
        reduced
    };
    let (mut negs, mut next_negs) = (
        Vec::with_capacity(cfg.negative),
        Vec::with_capacity(cfg.negative),
    );
    let Some(&first) = sent.first() else {
        return (0.0, 0);
    };
    let mut reduced = draw(rng, first, &mut negs);
    for (pos, &word) in sent.iter().enumerate() {
        let mut next_reduced = None;
        if let Some(&next) = sent.get(pos + 1) {
            let r = draw(rng, next, &mut next_negs);
            prefetch_row(output.row(next));
            for &n in &next_negs {
                prefetch_row(output.row(n));
            }
            if let Some(&c) = sent.get(pos + 1 + r) {
                prefetch_row(job.input.row(c));
            }
            next_reduced = Some(r);
        }
        let lo = pos.saturating_sub(reduced);
        let hi = (pos + reduced + 1).min(sent.len());
        win.contexts.clear();
        win.contexts.extend(
            sent[lo..hi]
                .iter()
                .enumerate()
                .filter(|&(i, _)| lo + i != pos)
                .map(|(_, &c)| c),
        );
        if !win.contexts.is_empty() {
            win.outputs.clear();
            win.labels.clear();
            win.outputs.push(word);
            win.labels.push(1.0);
            win.outputs.extend_from_slice(&negs);
            win.labels.resize(win.outputs.len(), 0.0);
            loss += window_update(job, output, win) as f64;
            examples += win.contexts.len() as u64;
        }
        if let Some(r) = next_reduced {
            reduced = r;
            std::mem::swap(&mut negs, &mut next_negs);
        }
    }
    (loss, examples)
}

/// CBOW over one subsampled sentence, word2vec.c's update (the mean of the context rows
/// predicts the centre word; [`sgd::negative_sampling_step`]), with each position's draws
/// (its reduced window, then, when it has a context, its noise words) taken one position
/// ahead in the same order as one at a time: the same vectors, bit for bit, with the next
/// position's output rows and new context row fetched while this one is computed.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn cbow_sentence<I: Rows, R: Rows>(
    job: &Job<I>,
    output: &R,
    rng: &mut SplitMix64,
    sent: &[u32],
    h: &mut [f32],
    grad: &mut [f32],
    negs: &mut Vec<u32>,
    context_rows: &mut Vec<*mut f32>,
) -> (f64, u64) {
    let cfg = job.config;
    let (mut loss, mut examples) = (0f64, 0u64);
    let span = |pos: usize, reduced: usize| {
        (
            pos.saturating_sub(reduced),
            (pos + reduced + 1).min(sent.len()),
        )
    };
    // One position's draws: its reduced window, and its noise words if it has a context
    // (word2vec.c draws none for a position without one).
    let draw = |rng: &mut SplitMix64, pos: usize, negs: &mut Vec<u32>| -> usize {
        let reduced = cfg.window - rng.below(cfg.window as u32) as usize;
        let (lo, hi) = span(pos, reduced);
        negs.clear();
        if hi - lo > 1 {
            negs.extend((0..cfg.negative).map(|_| job.noise.sample(rng)));
        }
        reduced
    };
    if sent.is_empty() {
        return (0.0, 0);
    }
    let mut next_negs = Vec::with_capacity(cfg.negative);
    let mut reduced = draw(rng, 0, negs);
    for (pos, &word) in sent.iter().enumerate() {
        let mut next_reduced = None;
        if pos + 1 < sent.len() {
            let r = draw(rng, pos + 1, &mut next_negs);
            prefetch_row(output.row(sent[pos + 1]));
            for &n in next_negs.iter() {
                prefetch_row(output.row(n));
            }
            if let Some(&c) = sent.get(pos + 1 + r) {
                prefetch_row(job.input.row(c));
            }
            next_reduced = Some(r);
        }
        let (lo, hi) = span(pos, reduced);
        let contexts = sent[lo..hi]
            .iter()
            .enumerate()
            .filter(|&(i, _)| lo + i != pos)
            .map(|(_, &c)| c);
        // The lane kernel where the position's output rows are distinct (the same update,
        // bit for bit); word2vec.c's one-output-at-a-time loop where a noise word repeats or
        // is the centre word, whose scores depend on the order of the updates.
        // (No closure here: a closure is compiled without the AVX2 of `run_job_avx2`.)
        let mut lanes = None;
        if hi - lo > 1 {
            context_rows.clear();
            for c in contexts.clone() {
                context_rows.push(job.input.row_ptr(c));
            }
            lanes = with_outputs!(cfg.negative + 1, M => cbow_lanes::<I, R, M>(job, output, word, negs, context_rows, h), _ => None);
        }
        if let Some(l) = lanes {
            loss += l as f64;
            examples += 1;
        } else if hi - lo > 1 {
            h.fill(0.0);
            let mut n = 0;
            for c in contexts.clone() {
                sgd::axpy(1.0, job.input.row(c), h);
                n += 1;
            }
            let inv = 1.0 / n as f32;
            h.iter_mut().for_each(|x| *x *= inv);
            grad.fill(0.0);
            let mut drawn = negs.iter().copied();
            loss += sgd::negative_sampling_step(
                h,
                grad,
                word,
                cfg.negative,
                || {
                    drawn
                        .next()
                        .expect("a position with a context has its noise words drawn")
                },
                job.alpha,
                job.sigmoid,
                |j| output.row(j),
            ) as f64;
            for c in contexts {
                sgd::axpy(1.0, grad, job.input.row(c));
            }
            examples += 1;
        }
        if let Some(r) = next_reduced {
            reduced = r;
            std::mem::swap(negs, &mut next_negs);
        }
    }
    (loss, examples)
}

/// One CBOW position through [`sgd::cbow_step_lanes`], or `None` (nothing changed) when its
/// output rows are not distinct: a noise word drawn twice or equal to the centre word.
#[inline(always)]
fn cbow_lanes<I: Rows, R: Rows, const M: usize>(
    job: &Job<I>,
    output: &R,
    word: u32,
    negs: &[u32],
    contexts: &[*mut f32],
    h: &mut [f32],
) -> Option<f32> {
    debug_assert_eq!(negs.len() + 1, M);
    let mut ids = [word; M];
    ids[1..].copy_from_slice(negs);
    for j in 1..M {
        if ids[..j].contains(&ids[j]) {
            return None;
        }
    }
    let rows = ids.map(|o| output.row_ptr(o));
    // SAFETY: the rows are `cols` floats of the two matrices, the output rows distinct, and no
    // reference to any of them is held here; hogwild as everywhere.
    Some(unsafe {
        sgd::cbow_step_lanes::<M>(job.input.cols(), contexts, &rows, h, job.alpha, job.sigmoid)
    })
}

/// Asks the CPU to bring a row into cache ahead of its use (a hint: no effect on results).
#[inline(always)]
fn prefetch_row(row: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(row);
        let p = row.as_ptr() as *const i8;
        let mut at = 0;
        while at < bytes {
            // SAFETY: a prefetch never faults, and `at` stays inside the row.
            unsafe { _mm_prefetch(p.add(at), _MM_HINT_T0) };
            at += 64;
        }
        // SAFETY: the row's last byte, in case the row does not start on a cache line.
        unsafe { _mm_prefetch(p.add(bytes.saturating_sub(1)), _MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// One window's HogBatch update on the shared rows named in `buf`: the lane kernel
/// ([`sgd::window_step_lanes`]) for the noise-word counts it is compiled for,
/// [`sgd::window_step`] for others.
#[inline(always)]
fn window_update<I: Rows, R: Rows>(job: &Job<I>, output: &R, buf: &mut WindowBuffers) -> f32 {
    with_outputs!(job.config.negative + 1, M => window_update_lanes::<I, R, M>(job, output, buf), _ => window_update_pairs(job, output, buf))
}

/// [`sgd::window_step_lanes`] on the window in `buf`: each context word and each noise word
/// once, with how often it stands in the window; the output slots left over (noise draws of
/// the centre word are skipped) point at a zero row with count 0.
#[inline(always)]
fn window_update_lanes<I: Rows, R: Rows, const M: usize>(
    job: &Job<I>,
    output: &R,
    buf: &mut WindowBuffers,
) -> f32 {
    buf.input_ids.clear();
    buf.input_rows.clear();
    buf.input_count.clear();
    for &c in &buf.contexts {
        match buf.input_ids.iter().position(|&x| x == c) {
            Some(k) => buf.input_count[k] += 1.0,
            None => {
                buf.input_ids.push(c);
                buf.input_rows.push(job.input.row_ptr(c));
                buf.input_count.push(1.0);
            }
        }
    }
    assert!(buf.outputs.len() <= M && buf.outputs.len() == buf.labels.len());
    let zero = buf.zero.as_mut_ptr();
    let (mut ids, mut rows, mut count, mut labels) =
        ([u32::MAX; M], [zero; M], [0f32; M], [0f32; M]);
    let mut n = 0;
    for (&o, &label) in buf.outputs.iter().zip(&buf.labels) {
        match ids[..n].iter().position(|&x| x == o) {
            Some(k) => count[k] += 1.0,
            None => {
                (ids[n], rows[n], count[n], labels[n]) = (o, output.row_ptr(o), 1.0, label);
                n += 1;
            }
        }
    }
    // SAFETY: the rows are `cols` floats of the two matrices (the zero row too), each word's
    // named once (the unused slots share the zero row, as the kernel allows), and no reference
    // to any of them is held here; hogwild as everywhere.
    let loss = unsafe {
        sgd::window_step_lanes::<M>(
            job.input.cols(),
            &buf.input_rows,
            &buf.input_count,
            &rows,
            &count,
            &labels,
            job.alpha,
            job.sigmoid,
        )
    };
    if n < M {
        // Count 0 leaves it zero; cleared all the same, so that nothing carries over.
        buf.zero.fill(0.0);
    }
    loss
}

/// [`sgd::window_step`] on the window in `buf`.
#[inline(always)]
fn window_update_pairs<I: Rows, R: Rows>(job: &Job<I>, output: &R, buf: &mut WindowBuffers) -> f32 {
    sgd::window_step(
        &buf.contexts,
        &buf.outputs,
        |c| job.input.row(c),
        |o| output.row(o),
        &buf.labels,
        job.alpha,
        job.sigmoid,
        &mut buf.g,
        &mut buf.grad_in,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Input and output matrices of `v` random rows, `row_stride(dim)` wide (zero padding).
    fn matrices(v: usize, dim: usize) -> (Vec<f32>, Vec<f32>) {
        let stride = row_stride(dim);
        let mut rng = SplitMix64::new(7);
        let mut m = || {
            let mut x = vec![0f32; v * stride];
            for row in x.chunks_exact_mut(stride) {
                for y in &mut row[..dim] {
                    *y = rng.next_f32() - 0.5;
                }
            }
            x
        };
        (m(), m())
    }

    /// A job over `input`'s words (every word kept, rate 0.1) for calling the update functions
    /// directly.
    fn test_job<'a, 'm>(
        config: &'a Word2VecConfig,
        input: &'a SharedMatrix<'m>,
        noise: &'a AliasTable,
        sigmoid: &'a Sigmoid,
    ) -> Job<'a, SharedMatrix<'m>> {
        const KEEP: [f32; 16] = [1.0; 16];
        Job {
            ids: &[],
            v: noise.len() as u32,
            keep: &KEEP[..noise.len()],
            noise,
            sigmoid,
            alpha: 0.1,
            config,
            input,
        }
    }

    /// A job whose input rows are all private (`ThreadRows` over every row) writes only the
    /// private copy: the shared input matrix is untouched until the merge, and equals the
    /// private copy after it (one thread, so the merge adds what the job changed, up to
    /// rounding). The same for each architecture's hot loop, through `run_job` as `train` calls
    /// it.
    #[test]
    fn a_job_through_private_input_rows_writes_them_and_the_merge_brings_them_back() {
        let (v, dim) = (6usize, 8usize);
        let ids: Vec<u32> = (0..60).map(|i| (i * 7 % v) as u32).collect();
        let counts = vec![10u64; v];
        let noise = AliasTable::unigram(&counts, 0.75);
        let sigmoid = Sigmoid::default();
        for (architecture, update) in [
            (Architecture::Sg, Update::Pair),
            (Architecture::Sg, Update::Window),
            (Architecture::Cbow, Update::Pair),
        ] {
            let config = Word2VecConfig {
                architecture,
                update,
                dim,
                window: 2,
                negative: 2,
                ..Default::default()
            };
            let (mut input, mut output) = matrices(v, dim);
            let start = input.clone();
            let stride = row_stride(dim);
            let shared_in = SharedMatrix::new(&mut input, stride);
            let shared_out = SharedMatrix::new(&mut output, stride);
            let mut private = ThreadRows::new(&shared_in, v);
            let mut job = test_job(&config, &shared_in, &noise, &sigmoid);
            job.ids = &ids;
            let mut buf = Buffers::new(&config);
            let mut rng = SplitMix64::new(3);
            let st = run_job(&job.with_input(&private), &shared_out, &mut rng, &mut buf);
            assert!(
                st.examples > 0 && st.loss.is_finite(),
                "{architecture:?} {update:?}"
            );
            let shared_rows = |m: &SharedMatrix| -> Vec<f32> {
                (0..v as u32).flat_map(|i| m.row(i).to_vec()).collect()
            };
            let private_rows: Vec<f32> = (0..v as u32)
                .flat_map(|i| private.row(i).to_vec())
                .collect();
            assert_eq!(
                shared_rows(&shared_in),
                start,
                "{architecture:?} {update:?}: written before the merge"
            );
            assert_ne!(
                private_rows, start,
                "{architecture:?} {update:?}: the private rows did not train"
            );
            private.merge();
            // `s + (l - s)` rounds to within an ulp of `l`, not always to `l`.
            let merged = shared_rows(&shared_in);
            let off =
                (merged.iter().zip(&private_rows)).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                off < 1e-6,
                "{architecture:?} {update:?}: after the merge, {off} off the private rows"
            );
        }
    }

    /// The window update of `contexts` against `outputs` (the centre word first), through
    /// the lane kernel or the pair-by-pair one; the two matrices after it and the loss.
    fn window_update_with(
        lanes: bool,
        contexts: &[u32],
        outputs: &[u32],
    ) -> (Vec<f32>, Vec<f32>, f32) {
        let config = Word2VecConfig {
            update: Update::Window,
            dim: 12,
            negative: 3,
            ..Default::default()
        };
        let (mut input, mut output) = matrices(5, config.dim);
        let stride = row_stride(config.dim);
        let loss = {
            let (input, output) = (
                SharedMatrix::new(&mut input, stride),
                SharedMatrix::new(&mut output, stride),
            );
            let (noise, sigmoid) = (AliasTable::unigram(&[1; 5], 0.75), Sigmoid::default());
            let job = test_job(&config, &input, &noise, &sigmoid);
            let mut buf = Buffers::new(&config);
            let win = &mut buf.window;
            win.contexts.extend_from_slice(contexts);
            win.outputs.extend_from_slice(outputs);
            win.labels.push(1.0);
            win.labels.resize(outputs.len(), 0.0);
            let loss = if lanes {
                window_update_lanes::<SharedMatrix, SharedMatrix, 4>(&job, &output, win)
            } else {
                window_update_pairs(&job, &output, win)
            };
            assert!(
                win.zero.iter().all(|&x| x == 0.0),
                "the zero row stays zero"
            );
            loss
        };
        (input, output, loss)
    }

    #[test]
    fn the_lane_window_update_merges_repeated_words_into_the_pair_updates() {
        // Context word 1 twice, noise word 3 twice, one output slot left over (a noise draw
        // of the centre word was skipped): the same rows as pair by pair, up to rounding.
        let (want_in, want_out, want_loss) = window_update_with(false, &[1, 2, 1], &[0, 3, 3]);
        let (got_in, got_out, got_loss) = window_update_with(true, &[1, 2, 1], &[0, 3, 3]);
        assert!(
            (got_loss - want_loss).abs() < 1e-5,
            "{got_loss} vs {want_loss}"
        );
        let (before_in, _) = matrices(5, 12);
        assert_ne!(got_in, before_in, "the update moved the rows");
        for (a, b) in got_in
            .iter()
            .zip(&want_in)
            .chain(got_out.iter().zip(&want_out))
        {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        // With no word repeated, the same bits.
        assert_eq!(
            window_update_with(true, &[1, 2, 4], &[0, 3, 2, 1]),
            window_update_with(false, &[1, 2, 4], &[0, 3, 2, 1])
        );
    }

    #[test]
    fn cbow_takes_the_lane_kernel_only_for_distinct_output_rows() {
        let config = Word2VecConfig {
            architecture: Architecture::Cbow,
            dim: 8,
            negative: 2,
            ..Default::default()
        };
        let (mut input, mut output) = matrices(4, config.dim);
        let (before_in, before_out) = (input.clone(), output.clone());
        let (input, output) = (
            SharedMatrix::new(&mut input, 8),
            SharedMatrix::new(&mut output, 8),
        );
        let (noise, sigmoid) = (AliasTable::unigram(&[1; 4], 0.75), Sigmoid::default());
        let job = test_job(&config, &input, &noise, &sigmoid);
        let contexts = [input.row_ptr(1), input.row_ptr(2)];
        let mut h = vec![0f32; 8];
        // A noise word equal to the centre word, or drawn twice: refused, nothing changed.
        for negs in [[0, 3], [3, 3]] {
            assert_eq!(
                cbow_lanes::<SharedMatrix, SharedMatrix, 3>(
                    &job, &output, 0, &negs, &contexts, &mut h
                ),
                None
            );
        }
        assert_eq!(input.row(1), &before_in[8..16]);
        assert_eq!(output.row(3), &before_out[24..32]);
        let loss = cbow_lanes::<SharedMatrix, SharedMatrix, 3>(
            &job,
            &output,
            0,
            &[2, 3],
            &contexts,
            &mut h,
        );
        assert!(loss.is_some_and(|l| l > 0.0));
        assert_ne!(output.row(3), &before_out[24..32]);
        assert_ne!(input.row(1), &before_in[8..16]);
    }

    /// CBOW's sentence loop, which draws one position ahead and takes the lane kernel where it
    /// can, is word2vec.c's loop to the bit: each position draws its reduced window and
    /// (with a context) its noise words in turn, averages its context rows, takes
    /// `negative_sampling_step` and adds the gradient to every context row. Sixteen words and
    /// five noise words make both paths common (repeated noise words take the plain step).
    #[test]
    fn cbow_sentence_is_word2vec_c_one_position_at_a_time() {
        let config = Word2VecConfig {
            architecture: Architecture::Cbow,
            dim: 12,
            window: 3,
            negative: 5,
            ..Default::default()
        };
        let (v, stride) = (16usize, row_stride(config.dim));
        let mut counts: Vec<u64> = (0..v as u64).map(|i| 40 - 2 * i).collect();
        counts[3] = 90;
        let (noise, sigmoid) = (AliasTable::unigram(&counts, 0.75), Sigmoid::default());
        let sent: Vec<u32> = (0..57u32).map(|i| (i * i + 3 * i) % v as u32).collect();
        let (input0, output0) = matrices(v, config.dim);

        let (mut input, mut output) = (input0.clone(), output0.clone());
        let (ours, rng_after) = {
            let (inp, out) = (
                SharedMatrix::new(&mut input, stride),
                SharedMatrix::new(&mut output, stride),
            );
            let job = test_job(&config, &inp, &noise, &sigmoid);
            let mut buf = Buffers::new(&config);
            let mut rng = SplitMix64::new(11);
            let got = cbow_sentence(
                &job,
                &out,
                &mut rng,
                &sent,
                &mut buf.h,
                &mut buf.grad,
                &mut buf.negs,
                &mut buf.context_rows,
            );
            (got, rng.next_f32())
        };

        let (mut ref_in, mut ref_out) = (input0.clone(), output0.clone());
        let (mut loss, mut examples) = (0f64, 0u64);
        let mut rng = SplitMix64::new(11);
        {
            let (inp, out) = (
                SharedMatrix::new(&mut ref_in, stride),
                SharedMatrix::new(&mut ref_out, stride),
            );
            let (mut h, mut grad) = (vec![0f32; stride], vec![0f32; stride]);
            for (pos, &word) in sent.iter().enumerate() {
                let reduced = config.window - rng.below(config.window as u32) as usize;
                let lo = pos.saturating_sub(reduced);
                let hi = (pos + reduced + 1).min(sent.len());
                let contexts: Vec<u32> = (lo..hi).filter(|&i| i != pos).map(|i| sent[i]).collect();
                if contexts.is_empty() {
                    continue;
                }
                h.fill(0.0);
                for &c in &contexts {
                    sgd::axpy(1.0, inp.row(c), &mut h);
                }
                let inv = 1.0 / contexts.len() as f32;
                h.iter_mut().for_each(|x| *x *= inv);
                grad.fill(0.0);
                loss += sgd::negative_sampling_step(
                    &h,
                    &mut grad,
                    word,
                    config.negative,
                    || noise.sample(&mut rng),
                    0.1,
                    &sigmoid,
                    |j| out.row(j),
                ) as f64;
                for &c in &contexts {
                    sgd::axpy(1.0, &grad, inp.row(c));
                }
                examples += 1;
            }
        }
        assert_eq!(ours.1, examples);
        assert_eq!(ours.0.to_bits(), loss.to_bits());
        assert_eq!(
            rng_after.to_bits(),
            rng.next_f32().to_bits(),
            "the same draws"
        );
        let bits = |m: &[f32]| m.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&input), bits(&ref_in));
        assert_eq!(bits(&output), bits(&ref_out));
        assert_ne!(bits(&input), bits(&input0), "the sentence trained");
    }

    #[test]
    fn private_rows_only_with_several_threads() {
        let cfg = |threads, private_rows| Word2VecConfig {
            threads,
            private_rows,
            ..Default::default()
        };
        assert_eq!(
            private_output_rows(&cfg(1, 1024)),
            None,
            "one thread keeps none"
        );
        assert_eq!(private_output_rows(&cfg(2, 0)), None);
        assert_eq!(private_output_rows(&cfg(2, 1024)), Some(1024));
        let input = |threads, private_input_rows| Word2VecConfig {
            threads,
            private_input_rows,
            ..Default::default()
        };
        assert_eq!(
            private_input_rows(&input(1, 512)),
            None,
            "one thread keeps none"
        );
        assert_eq!(private_input_rows(&input(2, 0)), None);
        assert_eq!(private_input_rows(&input(2, 512)), Some(512));
        assert_eq!(
            private_output_rows(&input(2, 512)),
            None,
            "the two are apart"
        );
    }

    #[test]
    fn rows_are_padded_to_whole_vectors_and_the_padding_is_dropped() {
        assert_eq!(row_stride(100), 104);
        assert_eq!(row_stride(8), 8);
        assert_eq!(row_stride(1), 8);
        // Three rows of 3 stored 8 wide: the numbers come back in order, the padding gone.
        let mut data = vec![0f32; 24];
        for r in 0..3 {
            for c in 0..3 {
                data[r * 8 + c] = (10 * r + c) as f32;
            }
        }
        drop_padding(&mut data, 8, 3);
        assert_eq!(data, [0., 1., 2., 10., 11., 12., 20., 21., 22.]);
    }
}
