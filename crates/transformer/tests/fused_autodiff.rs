//! Softmax, log-softmax and layer normalization are single autodiff nodes with a closed-form
//! backward pass (the patch in `vendor/burn-autodiff`, `vendor/README.md`) instead of the chain
//! of max/sub/exp/sum/div nodes autodiff records for the backend's default decomposition. Their
//! gradients are checked here against central finite differences of the same functions computed
//! in f64 (independent of both the closed forms and of burn), on every backend-level path the
//! model uses: the last dimension and another one, with and without beta, gradients asked for
//! on some inputs only.

use burn::tensor::activation::{log_softmax, softmax};
use burn::tensor::module::layer_norm;
use burn::tensor::{Device, Tensor, TensorData};

/// Deterministic values in [-scale, scale].
fn spread(n: usize, seed: f64, scale: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as f64 * 0.618_033_988 + seed).fract() * 2.0 - 1.0) * scale)
        .collect()
}

fn t<const D: usize>(xs: &[f64], shape: [usize; D], device: &Device) -> Tensor<D> {
    let xs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    Tensor::from_data(TensorData::new(xs, shape), device)
}

fn vals<const D: usize>(x: Tensor<D>) -> Vec<f64> {
    x.into_data()
        .try_into_vec::<f32>()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect()
}

/// d f / d xs[i] for every i, by central differences in f64.
fn numeric_grad(xs: &[f64], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let h = 1e-5;
    (0..xs.len())
        .map(|i| {
            let mut p = xs.to_vec();
            let mut m = xs.to_vec();
            p[i] += h;
            m[i] -= h;
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 2e-5 + 1e-4 * w.abs(),
            "{what}[{i}]: {g} from burn, {w} by finite differences"
        );
    }
}

/// Softmax (or log-softmax) of `xs` viewed as `shape`, along `dim`, in f64.
fn softmax_f64(xs: &[f64], shape: [usize; 3], dim: usize, log: bool) -> Vec<f64> {
    let strides = [shape[1] * shape[2], shape[2], 1];
    let mut out = vec![0.0; xs.len()];
    for start in 0..xs.len() {
        let coord = |k: usize| (start / strides[k]) % shape[k];
        if coord(dim) != 0 {
            continue;
        }
        let idx: Vec<usize> = (0..shape[dim]).map(|j| start + j * strides[dim]).collect();
        let max = idx.iter().map(|&i| xs[i]).fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = idx.iter().map(|&i| (xs[i] - max).exp()).sum();
        for &i in &idx {
            out[i] = if log {
                xs[i] - max - sum.ln()
            } else {
                (xs[i] - max).exp() / sum
            };
        }
    }
    out
}

#[test]
fn softmax_and_log_softmax_gradients_match_finite_differences() {
    let shape = [2, 3, 5];
    let n = 30;
    let xs = spread(n, 0.1, 3.0);
    let w = spread(n, 0.7, 1.0);
    let device = Device::flex().autodiff();
    for dim in [2, 1] {
        for log in [false, true] {
            let x = t(&xs, shape, &device).require_grad();
            let y = if log {
                log_softmax(x.clone(), dim)
            } else {
                softmax(x.clone(), dim)
            };
            let loss = (y.clone() * t(&w, shape, &device)).sum();
            let grads = loss.backward();
            let got = vals(x.grad(&grads).unwrap());
            let f = |v: &[f64]| -> f64 {
                softmax_f64(v, shape, dim, log)
                    .iter()
                    .zip(&w)
                    .map(|(a, b)| a * b)
                    .sum()
            };
            let what = format!("{} dim {dim}", if log { "log_softmax" } else { "softmax" });
            assert_close(&vals(y), &softmax_f64(&xs, shape, dim, log), &what);
            assert_close(&got, &numeric_grad(&xs, f), &format!("d {what}"));
        }
    }
}

/// Layer normalization of `xs` (rows of `d`) in f64.
fn layer_norm_f64(xs: &[f64], gamma: &[f64], beta: Option<&[f64]>, d: usize) -> Vec<f64> {
    let eps = 1e-5;
    xs.chunks(d)
        .flat_map(|row| {
            let mean = row.iter().sum::<f64>() / d as f64;
            let var = row.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / d as f64;
            row.iter()
                .enumerate()
                .map(move |(j, x)| {
                    (x - mean) / (var + eps).sqrt() * gamma[j] + beta.map_or(0.0, |b| b[j])
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn layer_norm_gradients_match_finite_differences() {
    let (rows, d) = (4, 6);
    let xs = spread(rows * d, 0.2, 2.0);
    let gamma = spread(d, 0.3, 1.5);
    let beta = spread(d, 0.9, 0.5);
    let w = spread(rows * d, 0.4, 1.0);
    let device = Device::flex().autodiff();
    for with_beta in [true, false] {
        // Gradients for all inputs, then for x only (gamma and beta constants).
        for all in [true, false] {
            let x = t(&xs, [2, 2, d], &device).require_grad();
            let g = t(&gamma, [d], &device);
            let b = t(&beta, [d], &device);
            let (g, b) = if all {
                (g.require_grad(), b.require_grad())
            } else {
                (g, b)
            };
            let y = layer_norm(x.clone(), g.clone(), with_beta.then(|| b.clone()), 1e-5);
            let beta_used = with_beta.then_some(&beta[..]);
            assert_close(
                &vals(y.clone()),
                &layer_norm_f64(&xs, &gamma, beta_used, d),
                "layer_norm",
            );
            let grads = (y * t(&w, [2, 2, d], &device)).sum().backward();
            let loss = |x: &[f64], g: &[f64], b: Option<&[f64]>| -> f64 {
                layer_norm_f64(x, g, b, d)
                    .iter()
                    .zip(&w)
                    .map(|(a, b)| a * b)
                    .sum()
            };
            let what = format!("beta {with_beta}, all {all}");
            assert_close(
                &vals(x.grad(&grads).unwrap()),
                &numeric_grad(&xs, |v| loss(v, &gamma, beta_used)),
                &format!("d x ({what})"),
            );
            if all {
                assert_close(
                    &vals(g.grad(&grads).unwrap()),
                    &numeric_grad(&gamma, |v| loss(&xs, v, beta_used)),
                    &format!("d gamma ({what})"),
                );
                match with_beta {
                    true => assert_close(
                        &vals(b.grad(&grads).unwrap()),
                        &numeric_grad(&beta, |v| loss(&xs, &gamma, Some(v))),
                        &format!("d beta ({what})"),
                    ),
                    false => assert!(b.grad(&grads).is_none(), "unused beta has a gradient"),
                }
            } else {
                assert!(g.grad(&grads).is_none(), "constant gamma has a gradient");
            }
        }
    }
}
