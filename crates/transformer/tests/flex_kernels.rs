//! flex's element-wise kernels as patched in `vendor/burn-flex` (`vendor/README.md`): loops split
//! across threads above 32K elements and compiled for AVX2 where the CPU has it, and f32 `exp`
//! and `erf` computed by branch-free code that vectorizes (`vmath.rs`) instead of a libm call
//! per element. Checked here: the new exp and the GELU built on the new erf against libm on a
//! dense grid (a bound in ulps or absolute), that an element's bits do not depend on the size of
//! the tensor it is in (whole SIMD lanes, the scalar remainder, split or not), and the fused
//! log-softmax against the same function computed in f64.

use std::f32::consts::{PI, SQRT_2};

use burn::tensor::activation::gelu;
use burn::tensor::{Device, Tensor, TensorData};

/// More than three split tasks' worth (32K is the threshold, 8K a task), not a multiple of 8K.
const N: usize = 3 * 32_768 + 5;

/// Pre-activations spread over [-6, 6], where erf and exp are far from trivial.
fn inputs() -> Vec<f32> {
    (0..N)
        .map(|i| ((i as f32 * 0.618_034).fract() - 0.5) * 12.0)
        .collect()
}

fn values(t: Tensor<1>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().unwrap()
}

fn assert_bits_equal(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let differing = got
        .iter()
        .zip(want)
        .filter(|(g, w)| g.to_bits() != w.to_bits())
        .count();
    let first = got
        .iter()
        .zip(want)
        .position(|(g, w)| g.to_bits() != w.to_bits());
    assert_eq!(
        differing,
        0,
        "{what}: {differing} of {} elements differ, first at {first:?}",
        got.len()
    );
}

fn tensor(xs: &[f32], device: &Device) -> Tensor<1> {
    Tensor::from_data(TensorData::new(xs.to_vec(), [xs.len()]), device)
}

/// Distance in units in the last place between two finite f32 of the same sign.
fn ulps(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

/// Each element alone (a one-element tensor runs the loops' scalar remainder, never a SIMD lane
/// or a split) gives the bits it got inside the large tensor.
fn assert_size_independent(xs: &[f32], whole: &[f32], op: impl Fn(Tensor<1>) -> Tensor<1>) {
    let device = Device::flex();
    for i in (0..xs.len()).step_by(97) {
        let alone = values(op(tensor(&xs[i..i + 1], &device)))[0];
        assert_eq!(
            alone.to_bits(),
            whole[i].to_bits(),
            "element {i} (x = {}): {alone} alone, {} in the tensor",
            xs[i],
            whole[i]
        );
    }
}

#[test]
fn exp_is_within_two_ulps_of_libm_and_the_same_bits_at_any_size() {
    // A dense grid over the whole range where expf is a normal number, and past both ends.
    let xs: Vec<f32> = (0..N)
        .map(|i| -87.3 + 175.9 * i as f32 / (N - 1) as f32)
        .chain([
            -1.0e4,
            -90.0,
            -87.34,
            88.73,
            100.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
        ])
        .collect();
    let x = tensor(&xs, &Device::flex());
    // A shared input takes the allocating path, a unique one the in-place path.
    let got = values(x.clone().exp());
    assert_bits_equal(&values(x.exp()), &got, "exp, in place vs allocating");
    let mut worst = (0, 0.0f32);
    for (&x, &g) in xs.iter().zip(&got) {
        let want = x.exp();
        if want >= f32::MIN_POSITIVE && want.is_finite() {
            let d = ulps(g, want);
            if d > worst.0 {
                worst = (d, x);
            }
        } else if want.is_infinite() {
            assert_eq!(g, f32::INFINITY, "exp({x})");
        } else {
            // expf is subnormal or zero here; ours flushes to zero.
            assert_eq!(g, 0.0, "exp({x})");
        }
    }
    assert!(
        worst.0 <= 2,
        "exp: {} ulps from libm at x = {}",
        worst.0,
        worst.1
    );
    assert!(values(tensor(&[f32::NAN], &Device::flex()).exp())[0].is_nan());
    assert_size_independent(&xs, &got, |t| t.exp());
}

#[test]
fn gelu_and_its_gradient_are_within_1e6_of_the_libm_formulas_per_unit_of_x() {
    let xs = inputs();
    let cdf = |x: f32| 0.5 * (1.0 + libm::erff(x / SQRT_2));
    let got = values(gelu(tensor(&xs, &Device::flex())));
    // erf within 1e-6 gives gelu = x Phi(x) within 0.5e-6 |x|, plus the product's rounding.
    let worst = xs
        .iter()
        .zip(&got)
        .map(|(&x, &g)| (g - 0.5 * x * (1.0 + libm::erff(x / SQRT_2))).abs() / x.abs().max(1.0))
        .fold(0.0f32, f32::max);
    assert!(
        worst <= 1e-6,
        "gelu: {worst} per unit of |x| from the libm formula"
    );
    assert_size_independent(&xs, &got, gelu);

    // d gelu / dx = Phi(x) + x phi(x), times the incoming gradient (1 for a sum).
    let pdf = |x: f32| 1.0 / (2.0 * PI).sqrt() * (-0.5 * x * x).exp();
    let device = Device::flex().autodiff();
    let x = tensor(&xs, &device).require_grad();
    let grads = gelu(x.clone()).sum().backward();
    let got = values(x.grad(&grads).expect("x has a gradient"));
    let worst = xs
        .iter()
        .zip(&got)
        .map(|(&x, &g)| (g - (cdf(x) + x * pdf(x))).abs() / x.abs().max(1.0))
        .fold(0.0f32, f32::max);
    assert!(
        worst <= 1e-6,
        "gelu backward: {worst} per unit of |x| from the libm formula"
    );
}

#[test]
fn log_softmax_of_vocabulary_rows_matches_f64() {
    use burn::tensor::activation::log_softmax;
    // Three rows of a 22,546-word vocabulary (one task each), logits up to +-30.
    let (rows, cols) = (3, 22_546);
    let xs: Vec<f32> = (0..rows * cols)
        .map(|i| ((i as f32 * 0.618_034).fract() - 0.5) * 60.0)
        .collect();
    let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), [rows, cols]), &Device::flex());
    let got = log_softmax(x, 1).into_data().try_into_vec::<f32>().unwrap();
    for r in 0..rows {
        let row = &xs[r * cols..(r + 1) * cols];
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64));
        let lse = row
            .iter()
            .map(|&x| (x as f64 - max).exp())
            .sum::<f64>()
            .ln()
            + max;
        for (c, &x) in row.iter().enumerate() {
            let want = x as f64 - lse;
            let g = got[r * cols + c] as f64;
            assert!(
                (g - want).abs() <= 1e-5 * want.abs().max(1.0),
                "row {r} col {c}: {g} vs {want}"
            );
        }
    }
}
