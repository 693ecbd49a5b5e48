//! `--exp backends`: the same model and weights on flex, ndarray and wgpu — how far their
//! numbers drift apart, and how fast each one is.
//!
//! 1. Agreement: one model initialised from one seed on flex, its weights moved unchanged to the
//!    other backends (`Module::to_device`), the same batch of real text forwarded on each; per
//!    layer, the largest absolute difference of hidden states from flex's and the same divided by
//!    flex's largest magnitude in that layer (`agreement.csv`).
//! 2. Training: K steps of masked LM from that same initialisation and data order on each backend
//!    (`loss-curves.csv`, `loss-curves.svg/png`).
//! 3. Speed: training-step and inference tokens/s for a few batch sizes, warm-up excluded,
//!    median and spread over repeats (`throughput.csv`, `throughput.svg/png`), with the device
//!    each number was measured on.

use burn::module::Module;
use burn::optim::AdamWConfig;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use analysis::representations::{hidden_states, Readout};
use corpus::CorpusConfig;
use transformer::backend::BackendKind;
use transformer::data::{Objective, Sequences};
use transformer::model::ModelSettings;
use transformer::training::{self, TrainingConfig};

use super::bench_transformer::throughput;
use crate::cli::Args;
use crate::{config, output, plot};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub corpus: CorpusConfig,
    pub model: ModelSettings,
    pub seq_len: usize,
    /// Batch used for the agreement check and the training comparison.
    pub batch_size: usize,
    /// Training steps per backend for the loss-curve comparison.
    pub train_steps: usize,
    pub lr: f64,
    /// Batch sizes for the throughput measurement.
    pub speed_batch_sizes: Vec<usize>,
    pub warmup: usize,
    pub repeats: usize,
    pub seed: u64,
    pub backends: Vec<BackendKind>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            corpus: CorpusConfig::default(),
            model: ModelSettings {
                dropout: 0.0,
                ..ModelSettings::default()
            },
            seq_len: 64,
            batch_size: 16,
            train_steps: 30,
            lr: 1e-3,
            speed_batch_sizes: vec![8, 32, 64],
            warmup: 2,
            repeats: 5,
            seed: 1,
            backends: vec![BackendKind::Flex, BackendKind::Ndarray, BackendKind::Wgpu],
        }
    }
}

#[derive(Serialize)]
struct AgreementRow {
    backend: String,
    layer: usize,
    max_abs_diff: f64,
    max_rel_diff: f64,
    reference_max_abs: f64,
}

#[derive(Serialize)]
struct LossRow {
    backend: String,
    step: usize,
    loss: f64,
}

#[derive(Serialize)]
struct SpeedRow {
    backend: String,
    device: String,
    mode: String,
    batch: usize,
    seq_len: usize,
    repeats: usize,
    median_tokens_per_s: f64,
    min_tokens_per_s: f64,
    max_tokens_per_s: f64,
}

/// Largest |a - b| and the largest |a|.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> (f64, f64) {
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() as f64)
        .fold(0.0, f64::max);
    let scale = a.iter().map(|x| x.abs() as f64).fold(0.0, f64::max);
    (diff, scale)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (mut cfg, path) = config::load::<Config>(args, "backends")?;
    if let Some(p) = &path {
        println!("config {}", p.display());
    }
    if let Some(s) = args.seed {
        cfg.seed = s;
    }
    if let Some(b) = args.backend {
        // One backend named: compare it with flex (the reference) only.
        cfg.backends = vec![BackendKind::Flex, crate::device::kind(b)];
        cfg.backends.dedup();
    }
    if args.quick {
        cfg.model = ModelSettings {
            d_model: 32,
            n_layers: 2,
            n_heads: 2,
            d_ff: 64,
            ..cfg.model
        };
        cfg.seq_len = 16;
        cfg.batch_size = 4;
        cfg.train_steps = 4;
        cfg.speed_batch_sizes = vec![4];
        cfg.warmup = 1;
        cfg.repeats = 2;
    }
    let corpus = super::load_corpus(args, &cfg.corpus)?;
    let seqs = Sequences::new(&corpus, cfg.seq_len, 0.02).map_err(anyhow::Error::msg)?;
    let model_cfg = cfg
        .model
        .to_config(corpus.vocab.len_with_specials(), cfg.seq_len);
    let flex = Device::flex();
    flex.seed(cfg.seed);
    let reference_model = model_cfg.init(&flex);
    let devices: Vec<(BackendKind, Device)> = cfg
        .backends
        .iter()
        .map(|&k| crate::device::open(k).map(|d| (k, d)))
        .collect::<anyhow::Result<_>>()?;
    let out_dir = args.out.join("backends");

    // 1. Agreement of the forward pass.
    let batch = seqs.heldout_batch(Objective::Mlm, cfg.batch_size, 0);
    let shape = [batch.batch, batch.seq_len];
    let reference = hidden_states(
        &reference_model,
        &batch.inputs,
        shape[1],
        Readout::default(),
        &flex,
    );
    let mut agreement = Vec::new();
    for (kind, device) in &devices {
        let model = reference_model.clone().to_device(device);
        let hidden = hidden_states(&model, &batch.inputs, shape[1], Readout::default(), device);
        for (layer, (r, h)) in reference.iter().zip(&hidden).enumerate() {
            let (diff, scale) = max_abs_diff(r, h);
            println!(
                "{:>8} layer {layer}: max |diff| {diff:.3e}, relative {:.3e}",
                kind.name(),
                diff / scale
            );
            agreement.push(AgreementRow {
                backend: kind.name().into(),
                layer,
                max_abs_diff: diff,
                max_rel_diff: diff / scale,
                reference_max_abs: scale,
            });
        }
    }
    output::write_csv(&out_dir.join("agreement.csv"), &agreement)?;

    // 2. The same training run on every backend.
    let train_cfg = TrainingConfig {
        steps: cfg.train_steps,
        batch_size: cfg.batch_size,
        seq_len: cfg.seq_len,
        lr: cfg.lr,
        warmup_steps: (cfg.train_steps / 10).max(1),
        seed: cfg.seed,
        ..TrainingConfig::default()
    };
    let mut losses = Vec::new();
    for (kind, device) in &devices {
        // `to_device` keeps the weights; `train` re-enables their gradients on this backend.
        let mut model = reference_model.clone().to_device(device).train();
        let device = device.clone().autodiff();
        let mut optim = AdamWConfig::new()
            .with_weight_decay(train_cfg.weight_decay)
            .init();
        let bar = indicatif::ProgressBar::new(cfg.train_steps as u64)
            .with_message(format!("training on {}", kind.name()));
        for step in 0..cfg.train_steps {
            let b = seqs.train_batch(Objective::Mlm, cfg.batch_size, step, cfg.seed);
            let (loss, grads) = training::train_step(&model, &b, Objective::Mlm, &device);
            model = optim.step(train_cfg.lr_at(step), model, grads);
            losses.push(LossRow {
                backend: kind.name().into(),
                step: step + 1,
                loss: loss as f64,
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
        println!(
            "{:>8}: loss after {} steps {:.4}",
            kind.name(),
            cfg.train_steps,
            losses.last().unwrap().loss
        );
    }
    output::write_csv(&out_dir.join("loss-curves.csv"), &losses)?;
    let series: Vec<plot::Series> = devices
        .iter()
        .map(|(k, _)| plot::Series {
            name: k.name().into(),
            points: losses
                .iter()
                .filter(|r| r.backend == k.name())
                .map(|r| (r.step as f64, r.loss, None))
                .collect(),
        })
        .collect();
    plot::lines(
        &out_dir.join("loss-curves"),
        "Masked-LM training from one initialisation on each backend",
        "step",
        "training loss (nats)",
        &series,
    )?;

    // 3. Throughput.
    let mut speed = Vec::new();
    for (kind, device) in &devices {
        let name = crate::device::name(*kind);
        for &bsz in &cfg.speed_batch_sizes {
            let b = seqs.train_batch(Objective::Mlm, bsz, 0, cfg.seed);
            let tokens = bsz * cfg.seq_len;
            // Inference: forward only, no autodiff.
            let model = reference_model.clone().to_device(device);
            let ids: Vec<i64> = b.inputs.iter().map(|&x| x as i64).collect();
            let input =
                Tensor::<2, Int>::from_data(TensorData::new(ids, [bsz, cfg.seq_len]), device);
            let (median, min, max) = throughput(cfg.warmup, cfg.repeats, tokens, |_| {
                drop(model.forward(input.clone(), None, false));
                device.sync().map_err(|e| anyhow::anyhow!("{e:?}"))
            })?;
            speed.push(SpeedRow {
                backend: kind.name().into(),
                device: name.clone(),
                mode: "inference".into(),
                batch: bsz,
                seq_len: cfg.seq_len,
                repeats: cfg.repeats,
                median_tokens_per_s: median,
                min_tokens_per_s: min,
                max_tokens_per_s: max,
            });
            // Training: MLM loss, backward, AdamW.
            let ad = device.clone().autodiff();
            // In an Option so each step moves the model into the optimiser (see bench_transformer).
            let mut model = Some(reference_model.clone().to_device(device).train());
            let mut optim = AdamWConfig::new().init();
            let (tmedian, tmin, tmax) = throughput(cfg.warmup, cfg.repeats, tokens, |_| {
                let m = model.take().expect("model");
                let (_, grads) = training::train_step(&m, &b, Objective::Mlm, &ad);
                model = Some(optim.step(1e-4, m, grads));
                ad.sync().map_err(|e| anyhow::anyhow!("{e:?}"))
            })?;
            println!(
                "{:>8} batch {bsz:>3}: inference {median:>9.0} tokens/s, training {tmedian:>8.0} tokens/s",
                kind.name()
            );
            speed.push(SpeedRow {
                backend: kind.name().into(),
                device: name.clone(),
                mode: "training".into(),
                batch: bsz,
                seq_len: cfg.seq_len,
                repeats: cfg.repeats,
                median_tokens_per_s: tmedian,
                min_tokens_per_s: tmin,
                max_tokens_per_s: tmax,
            });
        }
    }
    output::write_csv(&out_dir.join("throughput.csv"), &speed)?;
    for mode in ["training", "inference"] {
        let series: Vec<plot::Series> = devices
            .iter()
            .map(|(k, _)| plot::Series {
                name: k.name().into(),
                points: speed
                    .iter()
                    .filter(|r| r.backend == k.name() && r.mode == mode)
                    .map(|r| {
                        (
                            r.batch as f64,
                            r.median_tokens_per_s,
                            Some((r.min_tokens_per_s, r.max_tokens_per_s)),
                        )
                    })
                    .collect(),
            })
            .collect();
        plot::lines(
            &out_dir.join(format!("throughput-{mode}")),
            &format!("{mode} throughput (median, min-max bars)"),
            "batch size (sequences)",
            "tokens per second",
            &series,
        )?;
    }
    println!("wrote {}", out_dir.display());
    Ok(())
}
