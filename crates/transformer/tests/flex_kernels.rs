//! flex's element-wise kernels split across threads above 32K elements (the patch in
//! `vendor/burn-flex`, `vendor/README.md`), so that the `exp`s of the loss's log-softmax and the
//! `erf`s of the GELUs no longer run on one core while the other waits. The split must not change
//! a bit: each element is still computed by the same scalar code. These tests run the kernels
//! the training step uses on tensors large enough to be split, with a length that leaves a short
//! last task, and compare every element's bits with the scalar definition computed here.

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

#[test]
fn exp_of_a_large_tensor_is_the_scalar_exp_of_each_element() {
    let xs = inputs();
    let want: Vec<f32> = xs.iter().map(|x| x.exp()).collect();
    let x = tensor(&xs, &Device::flex());
    // A shared input takes the allocating path, a unique one the in-place path.
    assert_bits_equal(&values(x.clone().exp()), &want, "exp, allocating");
    assert_bits_equal(&values(x.exp()), &want, "exp, in place");
}

#[test]
fn gelu_and_its_gradient_on_a_large_tensor_are_the_scalar_formulas() {
    let xs = inputs();
    let cdf = |x: f32| 0.5 * (1.0 + libm::erff(x / SQRT_2));
    let want: Vec<f32> = xs
        .iter()
        .map(|&x| 0.5 * x * (1.0 + libm::erff(x / SQRT_2)))
        .collect();
    assert_bits_equal(&values(gelu(tensor(&xs, &Device::flex()))), &want, "gelu");

    // d gelu / dx = Phi(x) + x phi(x), times the incoming gradient (1 for a sum).
    let pdf = |x: f32| 1.0 / (2.0 * PI).sqrt() * (-0.5 * x * x).exp();
    let want: Vec<f32> = xs.iter().map(|&x| 1.0 * (cdf(x) + x * pdf(x))).collect();
    let device = Device::flex().autodiff();
    let x = tensor(&xs, &device).require_grad();
    let grads = gelu(x.clone()).sum().backward();
    let got = x.grad(&grads).expect("x has a gradient");
    assert_bits_equal(&values(got), &want, "gelu backward");
}
