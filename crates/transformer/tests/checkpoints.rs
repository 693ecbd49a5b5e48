//! Training state: a resumed run is the uninterrupted run (same curve, bit-identical weights)
//! wherever it stopped, with or without dropout, on flex and ndarray; nothing non-finite is
//! saved; a crash in the middle of a checkpoint swap is recovered from; two processes cannot
//! train in one run directory.

mod common;

use std::path::Path;

use burn::module::Param;
use burn::tensor::{Device, Tensor};
use common::{serial, small_corpus as corpus, tiny_model as model};
use transformer::checkpoint::{self, Pending};
use transformer::data::Sequences;
use transformer::training::{train, CurvePoint, RunControl, TrainError, TrainingConfig};

fn training(steps: usize) -> TrainingConfig {
    TrainingConfig {
        steps,
        batch_size: 4,
        seq_len: 12,
        lr: 1e-2,
        warmup_steps: 1,
        // Evaluations at 3, 6, 9 and the end; stops fall between them, so a resumed run must
        // carry the train-loss average in progress.
        eval_every: 3,
        eval_batches: Some(1),
        checkpoint_every: 100,
        heldout_fraction: 0.05,
        ..Default::default()
    }
}

/// Every float parameter, by module path, as bits.
fn weights(model: &transformer::Transformer) -> Vec<(String, Vec<u32>)> {
    let all: Vec<(String, Vec<u32>)> = checkpoint::parameters(model)
        .into_iter()
        .map(|(path, t)| {
            (
                path,
                t.into_data().iter::<f32>().map(f32::to_bits).collect(),
            )
        })
        .collect();
    assert!(all.len() > 10, "visited {} parameters", all.len());
    assert!(
        all.iter()
            .any(|(p, _)| p == "blocks.1.attention.query.weight"),
        "{:?}",
        all.iter().map(|a| &a.0).collect::<Vec<_>>()
    );
    all
}

fn curve(c: &[CurvePoint]) -> Vec<(usize, String, u64)> {
    c.iter()
        .map(|p| (p.step, p.split.clone(), p.loss.to_bits()))
        .collect()
}

/// Run control that stops (with a checkpoint) after step `k`.
fn stop_after(k: usize) -> RunControl {
    RunControl {
        stop_at: Some(k),
        ..Default::default()
    }
}

/// Run control that continues from the checkpoint.
fn resuming() -> RunControl {
    RunControl {
        resume: true,
        ..Default::default()
    }
}

#[test]
fn resume_is_exact_wherever_the_run_stopped_with_and_without_dropout() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    #[allow(deprecated)]
    let devices = [("flex", Device::flex()), ("ndarray", Device::ndarray())];
    for (backend, device) in devices {
        for dropout in [0.0, 0.2] {
            let cfg = model(corpus.vocab.len_with_specials(), dropout);
            let tc = training(10);
            let straight_dir = tempfile::tempdir().unwrap();
            let straight = train(
                &cfg,
                &tc,
                &data,
                &device,
                straight_dir.path(),
                &RunControl::default(),
            )
            .unwrap();
            assert_eq!(straight.curve.len(), 8, "rows at 3, 6, 9, 10");
            for stop in [1, 4, 8] {
                let dir = tempfile::tempdir().unwrap();
                let first = stop_after(stop);
                train(&cfg, &tc, &data, &device, dir.path(), &first).unwrap();
                let resumed = train(&cfg, &tc, &data, &device, dir.path(), &resuming()).unwrap();
                let what = format!("{backend}, dropout {dropout}, stopped after step {stop}");
                assert_eq!(resumed.resumed_from, stop, "{what}");
                assert_eq!(curve(&resumed.curve), curve(&straight.curve), "{what}");
                assert_eq!(weights(&resumed.model), weights(&straight.model), "{what}");
            }
        }
    }
}

/// Snapshots are the run's own model at those steps: the same weights as a run stopped there
/// (one learning-rate schedule), also when the run was interrupted between two of them; the
/// last is the final model; a missing snapshot is an error naming its file.
#[test]
fn snapshots_keep_the_model_at_their_steps_across_a_resume() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = model(corpus.vocab.len_with_specials(), 0.0);
    let tc = TrainingConfig {
        snapshot_steps: vec![2, 5, 10],
        ..training(10)
    };
    let straight_dir = tempfile::tempdir().unwrap();
    let straight = train(
        &cfg,
        &tc,
        &data,
        &device,
        straight_dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    let interrupted = tempfile::tempdir().unwrap();
    train(
        &cfg,
        &tc,
        &data,
        &device,
        interrupted.path(),
        &stop_after(4),
    )
    .unwrap();
    train(&cfg, &tc, &data, &device, interrupted.path(), &resuming()).unwrap();
    // The run without snapshots, stopped after step 5, is the model the snapshot at 5 must be.
    let plain = tempfile::tempdir().unwrap();
    let at5 = train(
        &cfg,
        &training(10),
        &data,
        &device,
        plain.path(),
        &stop_after(5),
    )
    .unwrap();
    let snap = |dir: &Path, step| checkpoint::load_snapshot(dir, step, &cfg, &device).unwrap();
    assert_eq!(weights(&snap(straight_dir.path(), 5)), weights(&at5.model));
    assert_eq!(
        weights(&snap(straight_dir.path(), 10)),
        weights(&straight.model)
    );
    assert_ne!(
        weights(&snap(straight_dir.path(), 2)),
        weights(&snap(straight_dir.path(), 5))
    );
    for step in [2, 5, 10] {
        assert_eq!(
            weights(&snap(interrupted.path(), step)),
            weights(&snap(straight_dir.path(), step)),
            "step {step}"
        );
    }
    let files: Vec<String> = std::fs::read_dir(straight_dir.path().join("snapshots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 3, "no temporary file left: {files:?}");
    let missing = checkpoint::load_snapshot(straight_dir.path(), 3, &cfg, &device)
        .err()
        .expect("no snapshot at step 3")
        .to_string();
    assert!(missing.contains("step-3.bpk"), "{missing}");
}

#[test]
fn checkpoints_from_before_the_mixing_key_still_resume_and_a_changed_mixing_is_refused() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = model(corpus.vocab.len_with_specials(), 0.0);
    let tc = training(4);
    let dir = tempfile::tempdir().unwrap();
    let stop = stop_after(2);
    train(&cfg, &tc, &data, &device, dir.path(), &stop).unwrap();
    // The record of a default-mixing model has no `mixing` key: byte for byte what a checkpoint
    // written before the key existed holds.
    let state = std::fs::read_to_string(dir.path().join("checkpoint/state.json")).unwrap();
    assert!(
        state.contains("\"qkv\"") && !state.contains("mixing"),
        "{state}"
    );
    let resume = resuming();
    let resumed = train(&cfg, &tc, &data, &device, dir.path(), &resume).unwrap();
    assert_eq!(resumed.resumed_from, 2);
    // The same run directory asked to continue as the no-attention control: refused.
    let uniform = cfg.clone().with_mixing(transformer::model::Mixing::Uniform);
    let dir = tempfile::tempdir().unwrap();
    train(&cfg, &tc, &data, &device, dir.path(), &stop).unwrap();
    let err = train(&uniform, &tc, &data, &device, dir.path(), &resume)
        .err()
        .expect("a different model config is refused");
    assert!(err.to_string().contains("model config differs"), "{err}");
}

#[test]
fn a_run_stops_on_its_plateau_and_a_resume_stops_there_too() {
    use transformer::training::{finished, plateau_step, Plateau};
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = model(corpus.vocab.len_with_specials(), 0.0);
    // Evaluations at 3, 6, 9; "gained less than 100 nats over 3 steps" holds at the first
    // evaluation that has one 3 steps before it: step 6.
    let tc = TrainingConfig {
        plateau: Some(Plateau {
            min_gain: 100.0,
            window: 3,
            context_free_loss: None,
        }),
        ..training(10)
    };
    let dir = tempfile::tempdir().unwrap();
    let run = train(
        &cfg,
        &tc,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    let last = run.curve.iter().map(|p| p.step).max().unwrap();
    assert_eq!(last, 6);
    assert_eq!(
        plateau_step(&run.curve, tc.plateau.as_ref().unwrap()),
        Some(6)
    );
    assert!(finished(&run.curve, &tc));
    // Resuming a run that stopped on its plateau trains nothing more.
    let resume = resuming();
    let again = train(&cfg, &tc, &data, &device, dir.path(), &resume).unwrap();
    assert_eq!(
        (again.resumed_from, again.curve.len()),
        (6, run.curve.len())
    );
    assert_eq!(weights(&again.model), weights(&run.model));
    // Cut short before the plateau, a resumed run stops at the same step with the same weights.
    let dir = tempfile::tempdir().unwrap();
    let stop = stop_after(4);
    train(&cfg, &tc, &data, &device, dir.path(), &stop).unwrap();
    let resumed = train(&cfg, &tc, &data, &device, dir.path(), &resume).unwrap();
    assert_eq!(curve(&resumed.curve), curve(&run.curve));
    assert_eq!(weights(&resumed.model), weights(&run.model));
    // A window shorter than eval_every is refused: the rule compares two evaluations.
    let short = TrainingConfig {
        plateau: Some(Plateau {
            min_gain: 0.01,
            window: 2,
            context_free_loss: None,
        }),
        ..training(10)
    };
    let err = short.validate().unwrap_err();
    assert!(
        err.contains("plateau.window (2) must be at least eval_every (3)"),
        "{err}"
    );
}

#[test]
fn dropout_draws_differ_between_steps_and_seeds() {
    // The per-step seed must not give every step (or every run) the same dropout mask.
    use transformer::training::step_seed;
    let seeds: std::collections::HashSet<u64> = (0..1000)
        .flat_map(|step| [step_seed(1, step), step_seed(2, step)])
        .collect();
    assert_eq!(seeds.len(), 2000);
}

#[test]
fn non_finite_weights_are_never_saved_and_the_last_good_checkpoint_stays() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = model(corpus.vocab.len_with_specials(), 0.0);
    let tc = TrainingConfig {
        checkpoint_every: 2,
        ..training(6)
    };
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("checkpoint");
    let stopped = stop_after(2);
    let out = train(&cfg, &tc, &data, &device, dir.path(), &stopped).unwrap();
    assert_eq!(checkpoint::step(&ckpt), Some(2));
    // The same model with one NaN, saved as if it were step 3: refused, naming the parameter.
    let mut poisoned = out.model.clone();
    let mut bias = vec![0.0f32; cfg.vocab_size];
    bias[5] = f32::NAN;
    poisoned.lm_bias = Param::from_tensor(Tensor::from_floats(
        bias.as_slice(),
        &device.clone().autodiff(),
    ));
    let optim = transformer::training::optimizer(&tc);
    let err = checkpoint::save(
        &ckpt,
        &poisoned,
        optim.to_record(),
        &cfg,
        &tc,
        3,
        Pending::default(),
        &out.curve,
    )
    .unwrap_err();
    match &err {
        TrainError::NonFiniteWeights {
            param, checkpoint, ..
        } => {
            assert_eq!(param, "lm_bias");
            assert_eq!(checkpoint, "step 2");
        }
        e => panic!("wrong error: {e}"),
    }
    assert_eq!(
        checkpoint::step(&ckpt),
        Some(2),
        "the good checkpoint was replaced"
    );
    // And the run continues from it.
    let resumed = train(&cfg, &tc, &data, &device, dir.path(), &resuming()).unwrap();
    assert_eq!(resumed.resumed_from, 2);

    // End to end: an lr so large that the first update leaves infinities in the weights while
    // the loss it was computed from is finite. Nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let diverging = TrainingConfig {
        lr: 1e39,
        grad_clip: None,
        checkpoint_every: 1,
        ..training(6)
    };
    match train(
        &cfg,
        &diverging,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    ) {
        Err(TrainError::NonFiniteWeights {
            step: 1,
            checkpoint,
            ..
        }) => assert_eq!(checkpoint, "none"),
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a run at lr 1e39 finished"),
    }
    assert!(checkpoint::step(&dir.path().join("checkpoint")).is_none());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn a_crash_between_the_two_renames_is_recovered_from() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = model(corpus.vocab.len_with_specials(), 0.0);
    let tc = training(10);
    let resume = resuming();
    // Checkpoints of the same run at steps 4 and 6.
    let at4 = tempfile::tempdir().unwrap();
    train(&cfg, &tc, &data, &device, at4.path(), &stop_after(4)).unwrap();
    let at6 = tempfile::tempdir().unwrap();
    train(&cfg, &tc, &data, &device, at6.path(), &stop_after(6)).unwrap();
    let straight = train(
        &cfg,
        &tc,
        &data,
        &device,
        tempfile::tempdir().unwrap().path(),
        &RunControl::default(),
    )
    .unwrap();

    // Crash after `checkpoint` -> `checkpoint.old`, before `.tmp` -> `checkpoint`: the
    // finished .tmp (step 6) is newer than .old (step 4) and wins.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &at4.path().join("checkpoint"),
        &dir.path().join("checkpoint.old"),
    );
    copy_dir(
        &at6.path().join("checkpoint"),
        &dir.path().join("checkpoint.tmp"),
    );
    let out = train(&cfg, &tc, &data, &device, dir.path(), &resume).unwrap();
    assert_eq!(out.resumed_from, 6);
    assert_eq!(weights(&out.model), weights(&straight.model));

    // Crash while .tmp was being written (no state.json yet): .old is the checkpoint.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &at4.path().join("checkpoint"),
        &dir.path().join("checkpoint.old"),
    );
    copy_dir(
        &at6.path().join("checkpoint"),
        &dir.path().join("checkpoint.tmp"),
    );
    std::fs::remove_file(dir.path().join("checkpoint.tmp/state.json")).unwrap();
    let out = train(&cfg, &tc, &data, &device, dir.path(), &resume).unwrap();
    assert_eq!(out.resumed_from, 4);
    assert_eq!(weights(&out.model), weights(&straight.model));
    assert_eq!(curve(&out.curve), curve(&straight.curve));
}

#[test]
fn a_second_process_in_the_same_run_directory_is_refused() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = model(corpus.vocab.len_with_specials(), 0.0);
    let dir = tempfile::tempdir().unwrap();
    let held = checkpoint::lock(dir.path()).unwrap();
    let err = train(
        &cfg,
        &training(4),
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .err()
    .unwrap();
    let msg = err.to_string();
    assert!(
        msg.contains(&format!(
            "run directory in use by process {}",
            std::process::id()
        )),
        "{msg}"
    );
    assert!(!dir.path().join("checkpoint").exists());
    drop(held);
    train(
        &cfg,
        &training(4),
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap();
}

#[test]
fn configs_burn_cannot_take_are_refused_naming_the_key() {
    let base = training(10);
    let cases: Vec<(TrainingConfig, &str)> = vec![
        (
            TrainingConfig {
                snapshot_steps: vec![3, 11],
                ..base.clone()
            },
            "snapshot_steps must lie in 1..=10 (steps), got 11",
        ),
        (
            TrainingConfig {
                snapshot_steps: vec![0],
                ..base.clone()
            },
            "snapshot_steps must lie in 1..=10 (steps), got 0",
        ),
        (
            TrainingConfig {
                warmup_steps: 10,
                ..base.clone()
            },
            "warmup_steps (10) must be less than steps (10)",
        ),
        (
            TrainingConfig {
                grad_clip: Some(-1.0),
                ..base.clone()
            },
            "grad_clip must be a finite number > 0",
        ),
        (
            TrainingConfig {
                weight_decay: -0.1,
                ..base.clone()
            },
            "weight_decay must be a finite number >= 0",
        ),
        (
            TrainingConfig {
                adam_epsilon: 0.0,
                ..base.clone()
            },
            "adam_epsilon must be a finite number > 0",
        ),
        (
            TrainingConfig {
                batch_size: 0,
                ..base.clone()
            },
            "batch_size must be at least 1",
        ),
        (
            TrainingConfig {
                lr: f64::NAN,
                ..base.clone()
            },
            "lr must be a finite number > 0",
        ),
        (
            TrainingConfig {
                heldout_fraction: 1.0,
                ..base.clone()
            },
            "heldout_fraction must be in (0, 1)",
        ),
    ];
    for (tc, needle) in cases {
        let e = tc.validate().unwrap_err();
        assert!(e.contains(needle), "{e}");
    }
    assert!(base.validate().is_ok());
    let m = model(50, 0.0).settings();
    use transformer::model::ModelSettings;
    let models: Vec<(ModelSettings, &str)> = vec![
        (
            ModelSettings {
                dropout: 1.0,
                ..m.clone()
            },
            "dropout must be in [0, 1), got 1",
        ),
        (
            ModelSettings {
                dropout: -0.1,
                ..m.clone()
            },
            "dropout must be in [0, 1)",
        ),
        (
            ModelSettings {
                n_heads: 3,
                ..m.clone()
            },
            "n_heads (3) must divide d_model (16)",
        ),
        (
            ModelSettings {
                d_ff: 0,
                ..m.clone()
            },
            "d_ff must be at least 1",
        ),
    ];
    for (ms, needle) in models {
        let e = ms.validate().unwrap_err();
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn a_dev_split_halves_the_heldout_block_and_its_rows_are_the_models_losses() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = TrainingConfig {
        dev_split: true,
        eval_batches: Some(3),
        ..training(6)
    };
    let dir = tempfile::tempdir().unwrap();
    let model_cfg = model(corpus.vocab.len_with_specials(), 0.0);
    let out = train(
        &model_cfg,
        &cfg,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    // Every evaluation (steps 3 and 6) writes the whole block, then its dev and test halves.
    let splits: Vec<(usize, &str)> = out
        .curve
        .iter()
        .map(|p| (p.step, p.split.as_str()))
        .collect();
    assert_eq!(
        splits,
        [3, 6]
            .iter()
            .flat_map(|&s| ["train", "heldout", "dev", "test"].map(|x| (s, x)))
            .collect::<Vec<_>>()
    );
    // The last evaluation's rows are the final model's losses on batch 0 (dev: 3 / 2 = 1
    // batch) and batches 1..3 (test), and the whole block is their target-weighted mean.
    let at6 = |split: &str| {
        out.curve
            .iter()
            .find(|p| p.step == 6 && p.split == split)
            .unwrap()
            .loss
    };
    let direct = transformer::training::heldout_losses(&out.model, &data, &cfg);
    for (split, want) in [
        ("heldout", direct.heldout),
        ("dev", direct.dev),
        ("test", direct.test),
    ] {
        assert!(
            (at6(split) - want).abs() < 1e-5,
            "{split}: curve {} vs model {want}",
            at6(split)
        );
    }
    let targets = |range: std::ops::Range<usize>| -> f64 {
        range
            .map(|i| data.heldout_batch(cfg.objective, 4, i).targets.len() as f64)
            .sum()
    };
    let (td, tt) = (targets(0..1), targets(1..3));
    let mixed = (direct.dev * td + direct.test * tt) / (td + tt);
    assert!(
        (mixed - direct.heldout).abs() < 1e-9,
        "{mixed} vs {}",
        direct.heldout
    );
    assert_ne!(direct.dev, direct.test, "the halves score different text");

    // A run stopped after step 4 and resumed writes the same dev and test rows as the run
    // that never stopped.
    let dir = tempfile::tempdir().unwrap();
    train(&model_cfg, &cfg, &data, &device, dir.path(), &stop_after(4)).unwrap();
    let resumed = train(&model_cfg, &cfg, &data, &device, dir.path(), &resuming()).unwrap();
    assert_eq!(curve(&resumed.curve), curve(&out.curve));
    // More evaluation batches than the held-out split has would wrap round onto dev
    // sequences in the test half: refused.
    let wrapping = TrainingConfig {
        eval_batches: Some(data.n_heldout_batches(4) + 1),
        ..cfg.clone()
    };
    let dir = tempfile::tempdir().unwrap();
    match train(
        &model_cfg,
        &wrapping,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    ) {
        Err(TrainError::Config(m)) => assert!(m.contains("wrap round"), "{m}"),
        other => panic!("expected a config error, got {:?}", other.map(|o| o.curve)),
    }
    // One held-out batch cannot be halved: refused, naming the key.
    let one = TrainingConfig {
        eval_batches: Some(1),
        ..cfg.clone()
    };
    let dir = tempfile::tempdir().unwrap();
    match train(
        &model_cfg,
        &one,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    ) {
        Err(TrainError::Config(m)) => {
            assert!(m.contains("dev_split") && m.contains("got 1"), "{m}")
        }
        other => panic!("expected a config error, got {:?}", other.map(|o| o.curve)),
    }
}

#[test]
fn a_frozen_embedding_is_drawn_at_the_asked_scale_and_stays_there() {
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let frozen = model(corpus.vocab.len_with_specials(), 0.0).with_freeze_embeddings(true);
    let cfg = TrainingConfig {
        frozen_embedding_std: Some(0.5),
        ..training(3)
    };
    let dir = tempfile::tempdir().unwrap();
    let out = train(
        &frozen,
        &cfg,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    let table: Vec<f32> = out
        .model
        .token_embedding
        .weight
        .val()
        .into_data()
        .iter::<f32>()
        .collect();
    let n = table.len() as f64;
    let mean = table.iter().map(|&x| x as f64).sum::<f64>() / n;
    let std = (table
        .iter()
        .map(|&x| (x as f64 - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    assert!((std - 0.5).abs() < 0.02, "std {std} over {n} entries");
    // Frozen: the table after 3 steps is the one drawn (a run of 2 steps has it too).
    let dir1 = tempfile::tempdir().unwrap();
    let short = TrainingConfig {
        frozen_embedding_std: Some(0.5),
        ..training(2)
    };
    let first = train(
        &frozen,
        &short,
        &data,
        &device,
        dir1.path(),
        &RunControl::default(),
    )
    .unwrap();
    let t1: Vec<f32> = first
        .model
        .token_embedding
        .weight
        .val()
        .into_data()
        .iter::<f32>()
        .collect();
    assert_eq!(t1, table);
    // Every other weight at initialisation is what the seed gives without the option: the
    // table is drawn after them.
    device.seed(cfg.seed);
    let plain = frozen.init(&device);
    device.seed(cfg.seed);
    let redrawn = frozen
        .init(&device)
        .with_token_embedding_std(0.5, true, &device);
    let block = |m: &transformer::Transformer| -> Vec<f32> {
        m.blocks[0]
            .attention
            .query
            .weight
            .val()
            .into_data()
            .iter::<f32>()
            .collect()
    };
    assert_eq!(block(&plain), block(&redrawn));
    // Asked for a trained (unfrozen) table: refused, naming the key.
    let trained = model(corpus.vocab.len_with_specials(), 0.0);
    let dir = tempfile::tempdir().unwrap();
    match train(
        &trained,
        &cfg,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    ) {
        Err(TrainError::Config(m)) => assert!(m.contains("frozen_embedding_std"), "{m}"),
        other => panic!("expected a config error, got {:?}", other.map(|o| o.curve)),
    }
}

/// `lm_head_init`: an untied head copied from the embedding starts as exactly the tied model
/// (same logits at step 0, every other weight the seed's), zeros start at the bias alone; the
/// head then trains apart from the embedding, a run with it resumes exactly, and a tied model
/// refuses the option, naming it.
#[test]
fn an_untied_head_starts_as_asked_and_resumes_exactly() {
    use transformer::training::{initial_model, LmHeadInit};
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let vocab = corpus.vocab.len_with_specials();
    let tied = model(vocab, 0.0);
    let untied = model(vocab, 0.0).with_tie_lm_head(false);
    let copied = TrainingConfig {
        lm_head_init: LmHeadInit::Embedding,
        ..training(6)
    };
    let start = initial_model(&untied, &copied, &device).unwrap();
    let tied_start = initial_model(&tied, &training(6), &device).unwrap();
    let flat = |t: Tensor<2>| -> Vec<f32> { t.into_data().iter::<f32>().collect() };
    let head = start.lm_head.as_ref().unwrap().weight.val();
    assert_eq!(head.dims(), [16, vocab]);
    assert_eq!(
        flat(head.transpose()),
        flat(start.token_embedding.weight.val())
    );
    // The same step-0 logits as the tied model of the same seed: the untied model's other
    // weights are drawn in the same order (the head comes last).
    let hidden = Tensor::<2>::random(
        [3, 16],
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
    );
    let a = flat(start.lm_logits(hidden.clone()));
    let b = flat(tied_start.lm_logits(hidden));
    assert_eq!(a.len(), 3 * vocab);
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    assert!(worst < 1e-6, "largest logit difference {worst}");
    let zero = TrainingConfig {
        lm_head_init: LmHeadInit::Zero,
        ..training(6)
    };
    let z = initial_model(&untied, &zero, &device).unwrap();
    let zw = flat(z.lm_head.as_ref().unwrap().weight.val());
    assert!(zw.iter().all(|&x| x == 0.0) && zw.len() == 16 * vocab);
    // Trained: the head moves apart from the embedding, and stopping half-way then resuming
    // gives the same weights bit for bit.
    let straight_dir = tempfile::tempdir().unwrap();
    let straight = train(
        &untied,
        &copied,
        &data,
        &device,
        straight_dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    let h = flat(
        straight
            .model
            .lm_head
            .as_ref()
            .unwrap()
            .weight
            .val()
            .transpose(),
    );
    let e = flat(straight.model.token_embedding.weight.val());
    assert!(
        h.iter().zip(&e).any(|(x, y)| x != y),
        "head still the embedding"
    );
    let dir = tempfile::tempdir().unwrap();
    train(&untied, &copied, &data, &device, dir.path(), &stop_after(3)).unwrap();
    let resumed = train(&untied, &copied, &data, &device, dir.path(), &resuming()).unwrap();
    assert_eq!(weights(&resumed.model), weights(&straight.model));
    // A tied head has no start of its own.
    let dir = tempfile::tempdir().unwrap();
    match train(
        &tied,
        &zero,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    ) {
        Err(TrainError::Config(m)) => {
            assert!(
                m.contains("lm_head_init = \"zero\"") && m.contains("tie_lm_head"),
                "{m}"
            )
        }
        other => panic!("expected a config error, got {:?}", other.map(|o| o.curve)),
    }
}

/// `init_seed`: a crossed run starts from one seed's weights bit for bit and trains on the
/// other's batches and masks (its end differs from the plain run of its initial seed, which
/// started from the same weights); `init_seed` equal to `seed` is the plain run exactly; and
/// a config without it serialises as before, so run hashes do not move.
#[test]
fn a_crossed_run_starts_from_one_seeds_weights_and_reads_the_others_batches() {
    use transformer::training::initial_model;
    let _serial = serial();
    let corpus = corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let m = model(corpus.vocab.len_with_specials(), 0.0);
    let plain = |seed| TrainingConfig {
        seed,
        ..training(6)
    };
    let crossed = TrainingConfig {
        init_seed: Some(2),
        ..plain(1)
    };
    let w0 = |cfg: &TrainingConfig| weights(&initial_model(&m, cfg, &device).unwrap());
    assert_eq!(w0(&crossed), w0(&plain(2)));
    assert_ne!(w0(&crossed), w0(&plain(1)));
    let run = |cfg: &TrainingConfig| {
        let dir = tempfile::tempdir().unwrap();
        let out = train(&m, cfg, &data, &device, dir.path(), &RunControl::default()).unwrap();
        (weights(&out.model), curve(&out.curve))
    };
    let (a, one, two) = (run(&crossed), run(&plain(1)), run(&plain(2)));
    assert_ne!(
        a.0, two.0,
        "the same start trained on another seed's batches must end elsewhere"
    );
    assert_ne!(a.0, one.0);
    assert_ne!(a.1, two.1);
    let same = run(&TrainingConfig {
        init_seed: Some(1),
        ..plain(1)
    });
    assert_eq!(same, one);
    let json = |cfg: &TrainingConfig| serde_json::to_string(cfg).unwrap();
    assert!(
        !json(&plain(1)).contains("init_seed"),
        "{}",
        json(&plain(1))
    );
    assert!(
        json(&crossed).contains("\"init_seed\":2"),
        "{}",
        json(&crossed)
    );
}
