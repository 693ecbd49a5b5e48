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

/// Broadcast and strided binary ops (`vendor/burn-flex/src/par.rs`'s `nest_apply_inplace` and
/// `nest_map`, split across threads and AVX2-built): each element is the plain f32 operation
/// on its two operands, bit for bit, for every pattern a layer norm or a bias add makes (per-row
/// `[n, d] op [n, 1]`, per-column `[n, d] op [1, d]`, the broadcast side on the left), written
/// into a uniquely owned operand and into a new buffer (operands still held elsewhere), on a
/// transposed operand, at a size that is split (rows of 100 elements, so the 8K-element tasks
/// start mid-row) and at one that is not.
#[test]
fn broadcast_binary_ops_are_the_plain_f32_operations_element_by_element() {
    let device = Device::flex();
    for rows in [7, 3 * 32_768 / 100 + 3] {
        let d = 100;
        let x: Vec<f32> = (0..rows * d)
            .map(|i| ((i as f32 * 0.618_034).fract() - 0.5) * 12.0)
            .collect();
        let r: Vec<f32> = (0..rows)
            .map(|i| 0.5 + (i as f32 * 0.37).sin().abs())
            .collect();
        let c: Vec<f32> = (0..d).map(|j| 1.5 - (j as f32 * 0.11).cos()).collect();
        let t2 = |v: &[f32], s: [usize; 2]| {
            Tensor::<2>::from_data(TensorData::new(v.to_vec(), s), &device)
        };
        let xt = t2(&x, [rows, d]);
        let rt = t2(&r, [rows, 1]);
        let ct = t2(&c, [1, d]);
        let want = |f: &dyn Fn(f32, f32) -> f32, by_row: bool| -> Vec<f32> {
            (0..rows * d)
                .map(|i| f(x[i], if by_row { r[i / d] } else { c[i % d] }))
                .collect()
        };
        let got = |t: Tensor<2>| t.into_data().try_into_vec::<f32>().unwrap();
        let what = |s: &str| format!("{s}, {rows} rows");
        // `xt.clone()` keeps a second reference, so these take the allocating path...
        assert_bits_equal(
            &got(xt.clone() - rt.clone()),
            &want(&|a, b| a - b, true),
            &what("x - row"),
        );
        assert_bits_equal(
            &got(xt.clone() / rt.clone()),
            &want(&|a, b| a / b, true),
            &what("x / row"),
        );
        assert_bits_equal(
            &got(xt.clone() * ct.clone()),
            &want(&|a, b| a * b, false),
            &what("x * col"),
        );
        assert_bits_equal(
            &got(rt.clone() - xt.clone()),
            &want(&|a, b| b - a, true),
            &what("row - x"),
        );
        // ...and a fresh operand is written in place (the lhs, or the rhs when the lhs is the
        // broadcast one).
        assert_bits_equal(
            &got(t2(&x, [rows, d]) / rt.clone()),
            &want(&|a, b| a / b, true),
            &what("x /= row"),
        );
        assert_bits_equal(
            &got(t2(&x, [rows, d]) + ct.clone()),
            &want(&|a, b| a + b, false),
            &what("x += col"),
        );
        assert_bits_equal(
            &got(ct.clone() - t2(&x, [rows, d])),
            &want(&|a, b| b - a, false),
            &what("col - x, into x"),
        );
        // A transposed operand: x^T (a strided view) times itself contiguous.
        let xtt = t2(&x, [rows, d]).transpose();
        let dense: Vec<f32> = (0..d * rows)
            .map(|k| x[(k % rows) * d + k / rows])
            .collect();
        let want_t: Vec<f32> = dense.iter().map(|&a| a * a - 1.0 / a).collect();
        let prod = xtt.clone() * t2(&dense, [d, rows]) - t2(&dense, [d, rows]).recip();
        assert_bits_equal(&got(prod), &want_t, &what("x^T * dense - 1 / dense"));
    }
}
