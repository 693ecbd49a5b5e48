//! Helpers of the fused autodiff nodes for softmax, log-softmax and layer normalization
//! (`ActivationOps::softmax`, `ActivationOps::log_softmax`, `ModuleOps::layer_norm` of
//! [`Autodiff`](crate::Autodiff)): the backward pass of layer normalization, and the backend's
//! default decompositions, which `BURN_AUTODIFF_DECOMPOSE=1` selects so that both can be
//! measured with one binary.

use alloc::vec::Vec;
use burn_backend::tensor::FloatTensor;
use burn_backend::{Backend, Shape, TensorMetadata};

/// Whether softmax, log-softmax and layer normalization are recorded as one node each (the
/// default) or as the backend's decomposition (`BURN_AUTODIFF_DECOMPOSE=1`). Read once.
pub(crate) fn enabled() -> bool {
    #[cfg(feature = "std")]
    {
        static DECOMPOSE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        !*DECOMPOSE.get_or_init(|| {
            std::env::var("BURN_AUTODIFF_DECOMPOSE").is_ok_and(|v| v == "1")
        })
    }
    #[cfg(not(feature = "std"))]
    {
        true
    }
}

/// `ActivationOps::softmax`'s default body.
pub(crate) fn softmax_decomposed<B: Backend>(tensor: FloatTensor<B>, dim: usize) -> FloatTensor<B> {
    let max = B::float_max_dim(B::float_detach(tensor.clone()), dim);
    let shifted = B::float_sub(tensor, max);
    let exp = B::float_exp(shifted);
    let sum = B::float_sum_dim(exp.clone(), dim);
    B::float_div(exp, sum)
}

/// `ActivationOps::log_softmax`'s default body.
pub(crate) fn log_softmax_decomposed<B: Backend>(
    tensor: FloatTensor<B>,
    dim: usize,
) -> FloatTensor<B> {
    let max = B::float_max_dim(B::float_detach(tensor.clone()), dim);
    let shifted = B::float_sub(tensor, max);
    let log_sum_exp = B::float_log(B::float_sum_dim(B::float_exp(shifted.clone()), dim));
    B::float_sub(shifted, log_sum_exp)
}

/// `[1, .., 1, d]`: gamma and beta reshaped to broadcast over the rows.
fn row_shape(rank: usize, d: usize) -> Shape {
    Shape::from(
        (0..rank)
            .map(|i| if i == rank - 1 { d } else { 1 })
            .collect::<Vec<_>>(),
    )
}

/// What the layer-norm node keeps from its forward pass.
#[derive(Debug, Clone)]
pub(crate) struct LayerNormState<B: Backend> {
    /// `(x - mean) / sqrt(var + eps)`, the input's shape.
    normalized: FloatTensor<B>,
    /// `sqrt(var + eps)`, one per row (last dimension kept as 1).
    denom: FloatTensor<B>,
    /// `[d]`.
    gamma: FloatTensor<B>,
}

/// The forward pass of layer normalization over the last dimension, the same backend ops in the
/// same order as `ModuleOps::layer_norm`'s default (so the output is the same bits), keeping
/// what the backward pass needs.
pub(crate) fn layer_norm_forward<B: Backend>(
    tensor: FloatTensor<B>,
    gamma: FloatTensor<B>,
    beta: Option<FloatTensor<B>>,
    epsilon: f64,
) -> (FloatTensor<B>, LayerNormState<B>) {
    let shape = tensor.shape();
    let rank = shape.num_dims();
    let last = rank - 1;
    let d = shape[last];
    let mean = B::float_mean_dim(tensor.clone(), last);
    let centered = B::float_sub(tensor, mean);
    let var = B::float_mean_dim(B::float_mul(centered.clone(), centered.clone()), last);
    let denom = B::float_sqrt(B::float_add_scalar(var, epsilon.into()));
    let normalized = B::float_div(centered, denom.clone());
    let scaled = B::float_mul(
        normalized.clone(),
        B::float_reshape(gamma.clone(), row_shape(rank, d)),
    );
    let output = match beta {
        Some(beta) => B::float_add(scaled, B::float_reshape(beta, row_shape(rank, d))),
        None => scaled,
    };
    let state = LayerNormState {
        normalized,
        denom,
        gamma,
    };
    (output, state)
}

/// Sums `tensor` (`[.., d]`) over every dimension but the last: `[d]`.
fn sum_rows<B: Backend>(tensor: FloatTensor<B>) -> FloatTensor<B> {
    let shape = tensor.shape();
    let d = shape[shape.num_dims() - 1];
    let rows = shape.num_elements() / d.max(1);
    let summed = B::float_sum_dim(B::float_reshape(tensor, Shape::from([rows, d])), 0);
    B::float_reshape(summed, Shape::from([d]))
}

/// Gradients of layer normalization with respect to the input, gamma and beta, each only when
/// asked for. With `n = (x - mean) / s` (`s = sqrt(var + eps)`) and `h = g * gamma`:
///
/// ```text
/// dx     = (h - mean(h) - n * mean(h * n)) / s      (means over the last dimension)
/// dgamma = sum over rows of g * n
/// dbeta  = sum over rows of g
/// ```
pub(crate) fn layer_norm_backward<B: Backend>(
    state: LayerNormState<B>,
    grad: FloatTensor<B>,
    want: [bool; 3],
) -> [Option<FloatTensor<B>>; 3] {
    let LayerNormState {
        normalized,
        denom,
        gamma,
    } = state;
    let shape = grad.shape();
    let rank = shape.num_dims();
    let last = rank - 1;
    let d = shape[last];
    let beta_grad = want[2].then(|| sum_rows::<B>(grad.clone()));
    let gamma_grad =
        want[1].then(|| sum_rows::<B>(B::float_mul(grad.clone(), normalized.clone())));
    let x_grad = want[0].then(|| {
        let h = B::float_mul(grad, B::float_reshape(gamma, row_shape(rank, d)));
        let mean_h = B::float_mean_dim(h.clone(), last);
        let mean_hn = B::float_mean_dim(B::float_mul(h.clone(), normalized.clone()), last);
        let centered = B::float_sub(h, mean_h);
        let dx = B::float_sub(centered, B::float_mul(normalized, mean_hn));
        B::float_div(dx, denom)
    });
    [x_grad, gamma_grad, beta_grad]
}
