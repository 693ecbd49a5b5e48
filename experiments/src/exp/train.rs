//! `--exp train`: trains the transformer with a masked- or causal-LM objective on the
//! configured corpus, on the chosen backend, and writes its loss curve. Checkpoints go under
//! the run cache's directory for this exact config (results/runs/<label>-seed<s>-<hash>/, see
//! `crate::runs`); `--resume` continues the same run from there.

use anyhow::Context;
use serde::Deserialize;

use corpus::CorpusConfig;
use transformer::data::{self, Objective, Sequences};
use transformer::model::ModelSettings;
use transformer::training::{self, RunControl, TrainingConfig};

use crate::cli::Args;
use crate::{config, output, runs};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub corpus: CorpusConfig,
    pub model: ModelSettings,
    pub training: TrainingConfig,
}

/// `--quick`: a toy model and a few steps, for smoke runs.
pub fn quick(model: &mut ModelSettings, training: &mut TrainingConfig) {
    *model = ModelSettings {
        d_model: 32,
        n_layers: 2,
        n_heads: 2,
        d_ff: 64,
        ..model.clone()
    };
    *training = TrainingConfig {
        steps: 20,
        batch_size: 8,
        seq_len: 32,
        warmup_steps: 5,
        eval_every: 10,
        eval_batches: Some(2),
        checkpoint_every: 10,
        ..training.clone()
    };
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    if args.devices == 0 {
        anyhow::bail!("--devices must be at least 1, got 0");
    }
    if args.ddp {
        // Before the corpus is read: nothing else can make it work.
        anyhow::bail!("--ddp: {}", transformer::training::DDP_UNAVAILABLE);
    }
    let (mut config, path) = config::load::<Config>(args, "train")?;
    if let Some(p) = &path {
        println!("config {}", p.display());
    }
    if let Some(o) = &args.objective {
        config.training.objective = match o.as_str() {
            "mlm" => Objective::Mlm,
            "clm" => Objective::Clm,
            other => anyhow::bail!("--objective must be mlm or clm, got {other:?}"),
        };
    }
    if let Some(s) = args.seed {
        config.training.seed = s;
    }
    if let Some(s) = args.init_seed {
        config.training.init_seed = Some(s);
    }
    if config.training.init_seed == Some(config.training.seed) {
        // The plain run, under its own name and hash (not retrained as a "crossed" one).
        config.training.init_seed = None;
    }
    if args.quick {
        quick(&mut config.model, &mut config.training);
    }
    config::check_transformer(path.as_deref(), &config.model, &config.training)?;
    // One model, the config's own: its training options must fit it (a study's variants are
    // fitted one by one in `Study::variant`).
    transformer::training::fits_model(&config.model, &config.training).map_err(|e| {
        let source = path
            .as_deref()
            .map_or("the built-in defaults".into(), |p| p.display().to_string());
        anyhow::anyhow!("{source}: {e}")
    })?;
    let corpus_as_written = config.corpus.clone();
    let corpus = super::load_corpus(args, &config.corpus)?;
    let seqs = Sequences::new(
        &corpus,
        config.training.seq_len,
        config.training.heldout_fraction,
    )
    .map_err(anyhow::Error::msg)?;
    let entropy = data::unigram_entropy(&corpus);
    let kind = crate::device::backend(args);
    let device = crate::device::open(kind)?;
    let model_cfg = config
        .model
        .to_config(corpus.vocab.len_with_specials(), config.training.seq_len);
    let objective = format!("{:?}", config.training.objective).to_lowercase();
    let key = runs::TransformerKey {
        corpus: &corpus_as_written,
        model: &model_cfg,
        training: &config.training,
        backend: kind.name(),
    };
    let run_dir = runs::transformer_dir(&args.out, &key);
    std::fs::create_dir_all(&run_dir)
        .with_context(|| format!("{}: cannot create", run_dir.display()))?;
    runs::record_key(&run_dir, &key)?;
    if args.resume {
        let ckpt = run_dir.join("checkpoint");
        // Recovered here (not only inside `train`) so that the step printed next is the one the
        // run continues from; the message would otherwise be lost.
        if let Some(what) = transformer::checkpoint::recover(&ckpt)? {
            println!("--resume: {what}");
        }
        match transformer::checkpoint::step(&ckpt) {
            Some(step) => println!("--resume: continuing from the checkpoint at step {step}"),
            None => {
                println!(
                    "--resume: no checkpoint for this config in {}; training from step 0",
                    run_dir.display()
                );
                for other in runs::other_checkpoints(&run_dir) {
                    println!(
                        "  (a checkpoint of another config of this model and seed: {}; \
                         its config.json says what differs)",
                        other.display()
                    );
                }
            }
        }
    }
    let name = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!(
        "{}: {} training and {} held-out sequences of {} tokens; {} parameters; backend {}",
        corpus.source.display(),
        seqs.n_train(),
        seqs.n_heldout(),
        seqs.seq_len,
        {
            use burn::module::Module;
            model_cfg.init(&device).num_params()
        },
        kind.name()
    );
    let control = RunControl {
        resume: args.resume,
        stop_at: None,
        progress: true,
        more_devices: kind.devices(args.devices).split_off(1),
        ddp: args.ddp,
    };
    let started = std::time::Instant::now();
    let outcome = training::train(
        &model_cfg,
        &config.training,
        &seqs,
        &device,
        &run_dir,
        &control,
    )?;
    if outcome.resumed_from > 0 {
        println!("resumed from step {}", outcome.resumed_from);
    }
    let last = outcome
        .curve
        .iter()
        .rev()
        .find(|p| p.split == "heldout")
        .map(|p| p.loss)
        .unwrap_or(f64::NAN);
    println!(
        "{} steps in {:.1} s; held-out {} loss {:.4} nats (perplexity {:.1}); unigram entropy {:.4} nats; {:.4} nats below it",
        config.training.steps,
        started.elapsed().as_secs_f64(),
        objective,
        last,
        last.exp(),
        entropy,
        entropy - last
    );
    let out = args.out.join("train").join(format!("{name}.csv"));
    output::write_csv(&out, &outcome.curve)?;
    println!(
        "wrote {} (checkpoint in {})",
        out.display(),
        run_dir.display()
    );
    Ok(())
}
