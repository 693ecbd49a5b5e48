//! The masked- or causal-LM loss of a batch: cross-entropy at the target positions only (the
//! vocabulary projection is computed where a prediction is scored, not at every position).

use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::data::{Batch, Objective};
use crate::model::Transformer;

/// Cross-entropy of the model's predictions at the batch's target positions.
pub fn batch_loss(
    model: &Transformer,
    batch: &Batch,
    objective: Objective,
    device: &Device,
) -> Tensor<1> {
    let (b, t) = (batch.batch, batch.seq_len);
    let ids: Vec<i64> = batch.inputs.iter().map(|&x| x as i64).collect();
    let tokens = Tensor::<2, Int>::from_data(TensorData::new(ids, [b, t]), device);
    let mut out = model.forward(tokens, None, objective == Objective::Clm);
    let last = out.hidden.pop().unwrap();
    target_loss(model, last, &batch.targets, device)
}

/// Mean cross-entropy of the LM head's predictions from the last layer's hidden states
/// `[batch, seq, d_model]` at `targets`: (flat position, target id) pairs, as in [`Batch`]. Only
/// those positions go through the vocabulary projection.
pub fn target_loss(
    model: &Transformer,
    last: Tensor<3>,
    targets: &[(usize, u32)],
    device: &Device,
) -> Tensor<1> {
    target_log_probs(model, last, targets, device).mean().neg()
}

/// Log-probability of each target under the LM head, `[targets, 1]`: only the target
/// positions go through the vocabulary projection.
pub(crate) fn target_log_probs(
    model: &Transformer,
    last: Tensor<3>,
    targets: &[(usize, u32)],
    device: &Device,
) -> Tensor<2> {
    let [b, t, d] = last.dims();
    let m = targets.len();
    let positions: Vec<i64> = targets.iter().map(|&(p, _)| p as i64).collect();
    let targets: Vec<i64> = targets.iter().map(|&(_, y)| y as i64).collect();
    let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [m]), device);
    let targets = Tensor::<2, Int>::from_data(TensorData::new(targets, [m, 1]), device);
    let hidden = last.reshape([b * t, d]).select(0, positions);
    let logp = log_softmax(model.lm_logits(hidden), 1);
    logp.gather(1, targets)
}
