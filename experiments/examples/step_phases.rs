//! Where the time of one masked-LM training step goes on flex: the encoder's forward pass, the
//! LM head and loss, the backward pass and the AdamW update, each timed on its own (mean over
//! the steps after two warm-up steps). The default model of experiments/configs/train.toml on a
//! random batch over the text8 vocabulary, with 307 masked positions (15% of 32 x 64).
//!
//! ```text
//! cargo run -p experiments --example step_phases            # as `experiments` runs
//! cargo run -p experiments --example step_phases -- --system-malloc
//! ```
//!
//! `--system-malloc` skips `transformer::backend::keep_freed_memory`, to see what glibc's default
//! handling of large blocks costs. `STEPS=n` sets how many steps are timed (default 20).

use std::time::Instant;

use burn::optim::GradientsParams;
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::{RngExt, SeedableRng};

use transformer::model::ModelSettings;
use transformer::training::{self, TrainingConfig};

fn main() {
    if !std::env::args().any(|a| a == "--system-malloc") {
        transformer::backend::keep_freed_memory();
    }
    let steps: usize = std::env::var("STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let settings = ModelSettings {
        dropout: 0.0,
        ..ModelSettings::default()
    };
    let (n_words, vocab) = (22_541, 22_541 + 5);
    let (batch, seq_len, masked) = (32usize, 64usize, 307usize);
    let device = Device::flex().autodiff();
    let mut model = settings.to_config(vocab, seq_len).init(&device);
    let mut optim = training::optimizer(&TrainingConfig::default());
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let names = [
        "encoder forward",
        "LM head + loss",
        "backward",
        "AdamW update",
    ];
    let mut total = [0.0f64; 4];
    let warmup = 2;
    for step in 0..warmup + steps {
        let ids: Vec<i64> = (0..batch * seq_len)
            .map(|_| rng.random_range(0..n_words as i64))
            .collect();
        let targets: Vec<(usize, u32)> = (0..masked)
            .map(|j| (j * 6, rng.random_range(0..n_words as u32)))
            .collect();
        let t0 = Instant::now();
        let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [batch, seq_len]), &device);
        let last = model.forward(tokens, None, false).hidden.pop().unwrap();
        // flex runs eagerly, but reading a value back makes sure each phase is finished.
        let _ = last.clone().into_data();
        let t1 = Instant::now();
        let loss = training::target_loss(&model, last, &targets, &device);
        let _: f32 = loss.clone().into_scalar();
        let t2 = Instant::now();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        let t3 = Instant::now();
        model = optim.step(1e-3, model, grads);
        let _ = model.lm_bias.val().into_data();
        let t4 = Instant::now();
        if step >= warmup {
            for (acc, (a, b)) in total
                .iter_mut()
                .zip([(t0, t1), (t1, t2), (t2, t3), (t3, t4)])
            {
                *acc += (b - a).as_secs_f64();
            }
        }
    }
    let per_step: f64 = total.iter().sum::<f64>() / steps as f64;
    for (name, t) in names.iter().zip(total) {
        println!("{name:>16}: {:6.1} ms", t / steps as f64 * 1e3);
    }
    println!(
        "{:>16}: {:6.1} ms  ({:.0} tokens/s)",
        "step",
        per_step * 1e3,
        (batch * seq_len) as f64 / per_step
    );
}
