//! The model's switches and masks, on flex with small sizes.

mod common;

use burn::module::Module;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use common::{serial, small_corpus};
use transformer::data::{Objective, Sequences};
use transformer::model::{Mixing, NormPlacement, QkvTying};
use transformer::training::{train, RunControl, TrainError, TrainingConfig};
use transformer::TransformerConfig;

fn tiny(vocab: usize) -> TransformerConfig {
    common::tiny_model(vocab, 0.0)
}

fn tokens(ids: &[i64], device: &Device) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(ids.to_vec(), [1, ids.len()]), device)
}

fn floats(t: Tensor<3>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().unwrap()
}

#[test]
fn tying_removes_exactly_the_tied_matrices() {
    let _serial = serial();
    let device = Device::flex();
    let count = |qkv| tiny(50).with_qkv(qkv).init(&device).num_params();
    let (untied, qk, qkv) = (
        count(QkvTying::Untied),
        count(QkvTying::SharedQk),
        count(QkvTying::SharedQkv),
    );
    let per_matrix = 16 * 16;
    let layers = 2;
    assert_eq!(untied - qk, layers * per_matrix);
    assert_eq!(untied - qkv, 2 * layers * per_matrix);
    // Untying the LM head adds exactly one vocab x d_model matrix.
    let untied_head = tiny(50).with_tie_lm_head(false).init(&device).num_params();
    assert_eq!(untied_head - untied, 50 * 16);
}

#[test]
fn shared_qkv_uses_one_matrix_for_all_three() {
    let _serial = serial();
    let device = Device::flex();
    for (qkv, same) in [
        (QkvTying::SharedQkv, [true, true]),
        (QkvTying::SharedQk, [true, false]),
        (QkvTying::Untied, [false, false]),
    ] {
        let model = tiny(50).with_qkv(qkv).init(&device);
        let [q, k, v] = model.blocks[0].attention.qkv_weights();
        let (q, k, v) = (q.into_data(), k.into_data(), v.into_data());
        assert_eq!(q == k, same[0], "{qkv:?} q/k");
        assert_eq!(q == v, same[1], "{qkv:?} q/v");
    }
}

#[test]
fn every_layer_is_returned() {
    let _serial = serial();
    let device = Device::flex();
    for norm in [NormPlacement::Pre, NormPlacement::Post] {
        let model = tiny(50).with_norm(norm).init(&device);
        let out = model.forward(tokens(&[1, 2, 3, 4], &device), None, false);
        assert_eq!(out.hidden.len(), 3);
        for h in &out.hidden {
            assert_eq!(h.dims(), [1, 4, 16]);
        }
        assert_eq!(model.token_embedding_matrix().dims(), [50, 16]);
    }
}

#[test]
fn causal_outputs_do_not_see_the_future() {
    let _serial = serial();
    let device = Device::flex();
    let model = tiny(50).init(&device);
    let a = model.forward(tokens(&[5, 6, 7, 8, 9], &device), None, true);
    let b = model.forward(tokens(&[5, 6, 7, 30, 31], &device), None, true);
    for layer in 0..3 {
        let (x, y) = (
            floats(a.hidden[layer].clone()),
            floats(b.hidden[layer].clone()),
        );
        // positions 0..=2 (first 3 x 16 values) are identical, position 3 differs
        assert_eq!(&x[..48], &y[..48], "layer {layer}");
        assert_ne!(&x[48..64], &y[48..64]);
    }
    // Without the causal mask the change does reach earlier positions.
    let c = model.forward(tokens(&[5, 6, 7, 8, 9], &device), None, false);
    let d = model.forward(tokens(&[5, 6, 7, 30, 31], &device), None, false);
    assert_ne!(
        &floats(c.hidden[2].clone())[..48],
        &floats(d.hidden[2].clone())[..48]
    );
}

#[test]
fn uniform_mixing_averages_what_each_position_may_see() {
    let _serial = serial();
    let device = Device::flex();
    let cfg = tiny(50).with_mixing(Mixing::Uniform);
    let model = cfg.init(&device);
    let attention = &model.blocks[0].attention;
    let x = Tensor::<3>::random(
        [1, 5, 16],
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
    );
    // Bidirectional: every position gets the same average, whatever the tokens are.
    let out = floats(attention.forward(x.clone(), None, false));
    for p in 1..5 {
        for j in 0..16 {
            assert!((out[p * 16 + j] - out[j]).abs() < 1e-5, "position {p}");
        }
    }
    // Causal: position 0 sees only itself, position 4 everything (the bidirectional average).
    let causal = floats(attention.forward(x.clone(), None, true));
    let alone = floats(attention.forward(x.clone().slice([0..1, 0..1, 0..16]), None, false));
    for j in 0..16 {
        assert!((causal[j] - alone[j]).abs() < 1e-5);
        assert!((causal[4 * 16 + j] - out[j]).abs() < 1e-5);
    }
    // Softmax attention depends on the tokens, so its positions differ.
    let soft = floats(
        tiny(50).init(&device).blocks[0]
            .attention
            .forward(x, None, false),
    );
    assert!((1..5).any(|p| (soft[p * 16] - soft[0]).abs() > 1e-6));
}

#[test]
fn padding_positions_do_not_change_the_others() {
    let _serial = serial();
    let device = Device::flex();
    let model = tiny(50).init(&device);
    let pad = Tensor::<2, Bool>::from_data(
        TensorData::new(vec![false, false, false, true, true], [1, 5]),
        &device,
    );
    let a = model.forward(tokens(&[5, 6, 7, 0, 0], &device), Some(pad.clone()), false);
    let b = model.forward(tokens(&[5, 6, 7, 40, 41], &device), Some(pad), false);
    let (x, y) = (floats(a.hidden[2].clone()), floats(b.hidden[2].clone()));
    for (i, (p, q)) in x[..48].iter().zip(&y[..48]).enumerate() {
        assert!((p - q).abs() < 1e-5, "value {i}: {p} vs {q}");
    }
}

fn quick_training(steps: usize) -> TrainingConfig {
    TrainingConfig {
        steps,
        batch_size: 4,
        seq_len: 12,
        lr: 1e-2,
        warmup_steps: 1,
        eval_every: 2,
        eval_batches: Some(1),
        checkpoint_every: 2,
        heldout_fraction: 0.05,
        ..Default::default()
    }
}

fn params(model: &transformer::Transformer) -> Vec<(String, Vec<f32>)> {
    let mut v = vec![(
        "token_embedding".to_string(),
        model
            .token_embedding
            .weight
            .val()
            .into_data()
            .try_into_vec::<f32>()
            .unwrap(),
    )];
    v.push((
        "position_embedding".into(),
        model
            .position_embedding
            .weight
            .val()
            .into_data()
            .try_into_vec::<f32>()
            .unwrap(),
    ));
    for (i, b) in model.blocks.iter().enumerate() {
        v.push((
            format!("block{i}.query"),
            b.attention
                .query
                .weight
                .val()
                .into_data()
                .try_into_vec::<f32>()
                .unwrap(),
        ));
        v.push((
            format!("block{i}.ff_in"),
            b.ff_in
                .weight
                .val()
                .into_data()
                .try_into_vec::<f32>()
                .unwrap(),
        ));
        v.push((
            format!("block{i}.norm"),
            b.norm_ff
                .gamma
                .val()
                .into_data()
                .try_into_vec::<f32>()
                .unwrap(),
        ));
    }
    v.push((
        "lm_bias".into(),
        model
            .lm_bias
            .val()
            .into_data()
            .try_into_vec::<f32>()
            .unwrap(),
    ));
    v
}

#[test]
fn frozen_embeddings_stay_bit_identical_while_the_rest_moves() {
    let _serial = serial();
    let corpus = small_corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = tiny(corpus.vocab.len_with_specials()).with_freeze_embeddings(true);
    device.clone().autodiff().seed(1);
    let before = params(&cfg.init(&device.clone().autodiff()));
    let dir = tempfile::tempdir().unwrap();
    let out = train(
        &cfg,
        &quick_training(4),
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    let after = params(&out.model);
    assert_eq!(before[0], after[0], "token embedding changed");
    for (b, a) in before.iter().zip(&after).skip(1) {
        assert_ne!(b.1, a.1, "{} did not move", b.0);
    }
}

#[test]
fn resume_continues_exactly_where_the_run_stopped() {
    let _serial = serial();
    let corpus = small_corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = tiny(corpus.vocab.len_with_specials());
    let straight_dir = tempfile::tempdir().unwrap();
    let straight = train(
        &cfg,
        &quick_training(6),
        &data,
        &device,
        straight_dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    // The same run stopped after step 4, then resumed from its checkpoint.
    let dir = tempfile::tempdir().unwrap();
    let first = RunControl {
        stop_at: Some(4),
        ..Default::default()
    };
    train(&cfg, &quick_training(6), &data, &device, dir.path(), &first).unwrap();
    let resumed = train(
        &cfg,
        &quick_training(6),
        &data,
        &device,
        dir.path(),
        &RunControl {
            resume: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(resumed.resumed_from, 4);
    assert_eq!(params(&resumed.model), params(&straight.model));
    // The same losses at every evaluation (timings aside), the first ones from the checkpoint.
    let losses = |c: &[transformer::training::CurvePoint]| {
        c.iter()
            .map(|p| (p.step, p.split.clone(), p.loss))
            .collect::<Vec<_>>()
    };
    assert_eq!(losses(&resumed.curve), losses(&straight.curve));
    // A changed model or training config is refused.
    let resume = RunControl {
        resume: true,
        ..Default::default()
    };
    let err = train(
        &cfg.clone().with_d_ff(64),
        &quick_training(6),
        &data,
        &device,
        dir.path(),
        &resume,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("model config differs"), "{err}");
    let err = train(
        &cfg,
        &quick_training(8),
        &data,
        &device,
        dir.path(),
        &resume,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("training config differs"), "{err}");
}

#[test]
fn a_diverging_run_stops_and_keeps_the_last_good_checkpoint() {
    let _serial = serial();
    let corpus = small_corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = tiny(corpus.vocab.len_with_specials());
    let dir = tempfile::tempdir().unwrap();
    let tc = TrainingConfig {
        lr: 1e12,
        grad_clip: None,
        warmup_steps: 1,
        ..quick_training(50)
    };
    match train(
        &cfg,
        &tc,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    ) {
        Err(e @ TrainError::NonFiniteLoss { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("Lower lr"), "{msg}");
            if let TrainError::NonFiniteLoss { step, .. } = e {
                assert!(step > 0 && step < 50);
                if step >= 2 {
                    assert!(
                        dir.path().join("checkpoint/state.json").exists(),
                        "last good checkpoint kept"
                    );
                }
            }
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a run with lr 1e12 finished"),
    }
    let _ = Objective::Mlm;
}

#[test]
fn the_heldout_loss_covers_the_whole_split_once_token_weighted() {
    let _serial = serial();
    let corpus = small_corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    device.seed(3);
    let model = tiny(corpus.vocab.len_with_specials()).init(&device);
    // Batches of 4 over the split: the last one partial, every sequence once.
    let n = data.n_heldout();
    assert!(
        n % 4 != 0,
        "{n} held-out sequences: pick a size that leaves a partial batch"
    );
    let rows: usize = (0..data.n_heldout_batches(4))
        .map(|i| data.heldout_batch(Objective::Clm, 4, i).batch)
        .sum();
    assert_eq!(rows, n);
    // Causal LM: every sequence has seq_len - 1 targets, so the whole-split loss is the mean of
    // per-sequence losses, which batches of 1 give directly.
    let whole = |batch_size| {
        let cfg = TrainingConfig {
            objective: Objective::Clm,
            batch_size,
            eval_batches: None,
            ..quick_training(4)
        };
        transformer::training::heldout_loss(&model, &data, &cfg)
    };
    let (by4, by1) = (whole(4), whole(1));
    assert!((by4 - by1).abs() < 1e-5, "{by4} vs {by1}");
    // The first batch alone is another number.
    let first = transformer::training::heldout_loss(
        &model,
        &data,
        &TrainingConfig {
            objective: Objective::Clm,
            batch_size: 4,
            eval_batches: Some(1),
            ..quick_training(4)
        },
    );
    assert_ne!(first, by4);
}

#[test]
fn init_draws_every_weight_at_once_whatever_draws_come_after() {
    let _serial = serial();
    // burn draws parameters lazily; `init` forces them, so what is drawn between init and first
    // use (dropout, another model, a reseed) cannot change a model's initial weights.
    let device = Device::flex();
    let cfg = tiny(50);
    device.seed(7);
    let first = cfg.init(&device);
    device.seed(12345);
    let _noise = Tensor::<2>::random([64, 64], burn::tensor::Distribution::Default, &device);
    let _other = cfg.init(&device);
    device.seed(7);
    let second = cfg.init(&device);
    assert_eq!(params(&first), params(&second));
}

/// The held-out loss split by input: both parts together give back the held-out loss and the
/// context-free level, about 80% of the targets are `[MASK]`, and at `[MASK]` an untrained model
/// is no better than the unigram while a trained one, on a corpus where each word follows from
/// its neighbours, is far better.
#[test]
fn the_heldout_loss_splits_by_input_and_only_context_beats_the_unigram_at_mask() {
    use transformer::training::{heldout_loss, heldout_loss_by_input, TargetLosses};
    let _serial = serial();
    let corpus = small_corpus();
    let data = Sequences::new(&corpus, 12, 0.05).unwrap();
    let device = Device::flex();
    let cfg = tiny(corpus.vocab.len_with_specials());
    let eval = TrainingConfig {
        eval_batches: None,
        eval_every: 100,
        checkpoint_every: 1000,
        ..quick_training(400)
    };
    let total = |split: &[transformer::training::InputSplit]| {
        let mut all = (TargetLosses::default(), TargetLosses::default());
        for s in split {
            for (sum, part) in [(&mut all.0, s.masked), (&mut all.1, s.visible)] {
                sum.targets += part.targets;
                sum.loss += part.loss;
                sum.context_free_loss += part.context_free_loss;
            }
        }
        all
    };
    // Gain at [MASK]: the unigram's loss minus the model's, per target.
    let gain = |m: &TargetLosses| (m.context_free_loss - m.loss) / m.targets as f64;

    device.seed(3);
    let untrained = cfg.init(&device);
    let split = heldout_loss_by_input(&untrained, &data, &eval);
    assert_eq!(split.len(), data.n_heldout());
    let (masked, visible) = total(&split);
    let n = (masked.targets + visible.targets) as f64;
    let whole = heldout_loss(&untrained, &data, &eval);
    assert!(
        ((masked.loss + visible.loss) / n - whole).abs() < 1e-5,
        "{} vs {whole}",
        (masked.loss + visible.loss) / n
    );
    let level = data.context_free_heldout_loss(Objective::Mlm, eval.batch_size, None);
    assert!(((masked.context_free_loss + visible.context_free_loss) / n - level).abs() < 1e-12);
    let share = masked.targets as f64 / n;
    assert!((0.65..0.95).contains(&share), "[MASK] share {share}");
    assert!(gain(&masked) < 0.0, "untrained gain {}", gain(&masked));
    // With a dev split the reported sequences are the test block's: their sums give back the
    // test half's loss, and the rest the dev half's.
    let split_cfg = TrainingConfig {
        dev_split: true,
        ..eval.clone()
    };
    let reported = transformer::training::reported_sequences(&data, &split_cfg);
    let n_batches = data.n_heldout_batches(eval.batch_size);
    assert!(
        n_batches >= 2,
        "{n_batches} held-out batches: too few to split"
    );
    assert_eq!(
        reported.start,
        transformer::data::dev_batches(n_batches) * eval.batch_size
    );
    let halves = transformer::training::heldout_losses(&untrained, &data, &split_cfg);
    let per_target = |part: &[transformer::training::InputSplit]| {
        let (m, v) = total(part);
        (m.loss + v.loss) / (m.targets + v.targets) as f64
    };
    let (dev, test) = split.split_at(reported.start);
    assert!(
        (per_target(test) - halves.test).abs() < 1e-5,
        "{} vs {}",
        per_target(test),
        halves.test
    );
    assert!(
        (per_target(dev) - halves.dev).abs() < 1e-5,
        "{} vs {}",
        per_target(dev),
        halves.dev
    );
    assert!(
        (halves.dev - halves.test).abs() > 1e-4,
        "the halves differ: the test can fail"
    );
    assert_eq!(
        transformer::training::reported_sequences(&data, &eval).start,
        0,
        "without a dev split every sequence is reported"
    );

    let dir = tempfile::tempdir().unwrap();
    device.clone().autodiff().seed(3);
    let out = train(
        &cfg,
        &eval,
        &data,
        &device,
        dir.path(),
        &RunControl::default(),
    )
    .unwrap();
    let (masked, _) = total(&heldout_loss_by_input(&out.model, &data, &eval));
    // 40 words, nearly uniform: the unigram costs about ln 40 = 3.7 nats at [MASK]; each word
    // follows from its left neighbour (w_{i+1} = w_i + 7 mod 40, bar every 13th), so context
    // can take most of that away. 400 steps of this tiny model take 1.08 nats of it (0.13
    // after 60 steps); the untrained model, above, is below 0.
    assert!(gain(&masked) > 0.5, "trained gain {}", gain(&masked));
}

/// The model runs every projection as one `[batch * seq, d]` product (`model::rows`, issue 18's
/// speed-up). Recomputed here with burn's `Linear` on the rank-3 input, which for 32 positions
/// takes burn's batched-matmul path, and the attention and feed-forward written out by hand: a
/// pre-norm block must give the same output to rounding.
#[test]
fn a_block_equals_its_formula_with_burns_batched_linear() {
    use burn::tensor::activation::{gelu, softmax};
    let _serial = serial();
    let device = Device::flex();
    let (b, t, d, h) = (3, 32, 16, 2);
    let model = tiny(50).with_max_len(t).init(&device);
    let block = &model.blocks[0];
    let x = Tensor::<3>::random(
        [b, t, d],
        burn::tensor::Distribution::Normal(0.0, 1.0),
        &device,
    );
    let got = floats(block.forward(x.clone(), None, false));

    let a = &block.attention;
    let n = block.norm_attention.forward(x.clone());
    let split = |y: Tensor<3>| y.reshape([b, t, h, d / h]).swap_dims(1, 2);
    let q = split(a.query.forward(n.clone()));
    let k = split(a.key.as_ref().unwrap().forward(n.clone()));
    let v = split(a.value.as_ref().unwrap().forward(n));
    let w = softmax(
        q.matmul(k.transpose()).div_scalar(((d / h) as f32).sqrt()),
        3,
    );
    let context = w.matmul(v).swap_dims(1, 2).reshape([b, t, d]);
    let x = x + a.output.forward(context);
    let ff = block
        .ff_out
        .forward(gelu(block.ff_in.forward(block.norm_ff.forward(x.clone()))));
    let want = floats(x + ff);

    assert_eq!(got.len(), b * t * d);
    let scale = want.iter().fold(0f32, |m, v| m.max(v.abs()));
    let worst = got
        .iter()
        .zip(&want)
        .fold(0f32, |m, (g, w)| m.max((g - w).abs()));
    assert!(worst <= 1e-5 * scale, "max |diff| {worst} (scale {scale})");
}
