//! Forward + backward time of single ops under autodiff on flex, at the shapes of one masked-LM
//! step of the paper model (loss = sum(op(x) * w); median of 20 calls after 5 warm-up ones), to
//! compare with PyTorch op by op (`scripts/op_costs_torch.py`, the same harness). The switches
//! of `vendor/README.md` turn the patches off, so one binary gives before and after:
//!
//! ```text
//! cargo run -p experiments --example op_costs
//! FLEX_PAR_MIN_ELEMS=18446744073709551615 FLEX_NO_AVX2=1 FLEX_LIBM=1 BURN_AUTODIFF_DECOMPOSE=1 \
//!   cargo run -p experiments --example op_costs
//! python3 scripts/op_costs_torch.py
//! ```
use burn::nn::LayerNormConfig;
use burn::tensor::activation::{gelu, log_softmax, softmax};
use burn::tensor::{Device, Distribution, Tensor};
use std::time::Instant;

fn time<const D: usize>(
    name: &str,
    shape: [usize; D],
    f: impl Fn(Tensor<D>) -> Tensor<D>,
    device: &Device,
) {
    let x0 = Tensor::<D>::random(shape, Distribution::Normal(0.0, 1.0), device);
    let w = Tensor::<D>::random(shape, Distribution::Normal(0.0, 1.0), device);
    let mut ts = vec![];
    for i in 0..25 {
        let x = x0.clone().require_grad();
        let t = Instant::now();
        let y = f(x.clone());

        let t1 = t.elapsed().as_secs_f64();
        let g = (y * w.clone()).sum().backward();
        let gx = x.grad(&g).unwrap();
        drop(gx);
        let t2 = t.elapsed().as_secs_f64();
        if i >= 5 {
            ts.push((t1, t2));
        }
    }
    ts.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (f, fb) = ts[ts.len() / 2];
    println!(
        "{name:>12} {:?}: fwd {:7.3} ms  fwd+bwd {:7.3} ms",
        shape,
        f * 1e3,
        fb * 1e3
    );
}

fn main() {
    transformer::backend::keep_freed_memory();
    let d = Device::flex().autodiff();
    time("softmax", [32, 4, 64, 64], |x| softmax(x, 3), &d);
    time("log_softmax", [307, 22546], |x| log_softmax(x, 1), &d);
    let ln = LayerNormConfig::new(128).init(&d);
    time("layer_norm", [32, 64, 128], |x| ln.forward(x), &d);
    time("gelu", [32, 64, 512], gelu, &d);
    let wl = Tensor::<2>::random([128, 512], Distribution::Normal(0.0, 0.02), &d).require_grad();
    time(
        "linear128x512",
        [2048, 128],
        |x| {
            let y = x.matmul(wl.clone());
            y.slice([0..2048, 0..128])
        },
        &d,
    );
    let emb = Tensor::<2>::random([22546, 128], Distribution::Normal(0.0, 0.02), &d).require_grad();
    time(
        "lm_head",
        [307, 128],
        |x| {
            let y = x.matmul(emb.clone().transpose());
            y.slice([0..307, 0..128])
        },
        &d,
    );
    let k = Tensor::<4>::random([32, 4, 64, 32], Distribution::Normal(0.0, 1.0), &d).require_grad();
    time(
        "scores",
        [32, 4, 64, 32],
        |q| {
            let s = q.matmul(k.clone().swap_dims(2, 3));
            s.slice([0..32, 0..4, 0..64, 0..32])
        },
        &d,
    );
    time(
        "heads",
        [32, 64, 128],
        |x| {
            x.reshape([32, 64, 4, 32])
                .swap_dims(1, 2)
                .swap_dims(1, 2)
                .reshape([32, 64, 128])
                * 1.0
        },
        &d,
    );
    time("add", [32, 64, 128], |x| x.clone() + x, &d);
}
