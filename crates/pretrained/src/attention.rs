//! Multi-head scaled dot-product attention from projected queries, keys and values, shared by
//! both architectures (they differ in where the projections come from, not in this).

use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::Linear;
use burn::tensor::activation::softmax;
use burn::tensor::{Bool, Tensor};

/// `q`, `k`, `v`: `[batch, seq, hidden]` (heads side by side, head h in columns
/// `h d_head .. (h+1) d_head`); returns the heads' outputs side by side, before the output
/// projection. `pad`: `[batch, seq]`, true at keys never attended; `causal`: only earlier
/// positions are attended. A masked score is the lowest float, as `transformers` masks.
pub fn multi_head(
    q: Tensor<3>,
    k: Tensor<3>,
    v: Tensor<3>,
    n_heads: usize,
    pad: Option<Tensor<2, Bool>>,
    causal: bool,
) -> Tensor<3> {
    let [b, t, d] = q.dims();
    let d_head = d / n_heads;
    let split = |x: Tensor<3>| x.reshape([b, t, n_heads, d_head]).swap_dims(1, 2);
    let mut scores = split(q)
        .matmul(split(k).transpose())
        .div_scalar((d_head as f32).sqrt());
    if let Some(pad) = pad {
        scores = scores.mask_fill(pad.reshape([b, 1, 1, t]), f32::MIN);
    }
    if causal {
        let future = generate_autoregressive_mask(b, t, &scores.device());
        scores = scores.mask_fill(future.reshape([b, 1, t, t]), f32::MIN);
    }
    softmax(scores, 3)
        .matmul(split(v))
        .swap_dims(1, 2)
        .reshape([b, t, d])
}

/// `lin` on `[batch, seq, in]` as one `[batch * seq, in]` product.
pub fn rows(lin: &Linear, x: Tensor<3>) -> Tensor<3> {
    let [b, t, d] = x.dims();
    let y = lin.forward(x.reshape([b * t, d]));
    let d_out = y.dims()[1];
    y.reshape([b, t, d_out])
}
