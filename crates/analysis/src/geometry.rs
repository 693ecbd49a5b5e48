//! The model's geometry: how alike its attention matrices are, and how contextual its layers'
//! vectors are.
//!
//! Attention, per layer and head h (columns `h d_k .. (h+1) d_k` of each projection):
//! * cosine between the flattened W_Q^h, W_K^h, W_V^h (1 for matrices that are tied);
//! * symmetric share of the bilinear form W_Q^h (W_K^h)^T: ||(M + M^T)/2||_F / ||M||_F, which is
//!   1 for a symmetric M (always so under shared-QK) and about 1/sqrt(2) for a random one.
//!
//! Contextuality (Ethayarajh 2019): the self-similarity of a word is the mean cosine between its
//! occurrences' vectors in one layer; anisotropy is the mean cosine between vectors of random
//! token pairs, the baseline that self-similarity should be read against.

use transformer::Transformer;

/// Cosine of two equally long vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (*x as f64, *y as f64);
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        ab / (aa.sqrt() * bb.sqrt())
    }
}

/// ||(M + M^T)/2||_F / ||M||_F of a square row-major `n x n` matrix.
pub fn symmetric_share(m: &[f64], n: usize) -> f64 {
    assert_eq!(m.len(), n * n);
    let (mut sym, mut all) = (0f64, 0f64);
    for i in 0..n {
        for j in 0..n {
            let s = 0.5 * (m[i * n + j] + m[j * n + i]);
            sym += s * s;
            all += m[i * n + j] * m[i * n + j];
        }
    }
    if all == 0.0 {
        0.0
    } else {
        (sym / all).sqrt()
    }
}

/// Mean cosine over all pairs of distinct vectors (NaN with fewer than two).
pub fn mean_pairwise_cosine(vectors: &[&[f32]]) -> f64 {
    let (mut sum, mut n) = (0f64, 0usize);
    for i in 0..vectors.len() {
        for j in i + 1..vectors.len() {
            sum += cosine(vectors[i], vectors[j]);
            n += 1;
        }
    }
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// One head's attention-matrix measures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HeadGeometry {
    pub layer: usize,
    pub head: usize,
    pub cos_q_k: f64,
    pub cos_q_v: f64,
    pub cos_k_v: f64,
    /// Symmetric share of W_Q^h (W_K^h)^T.
    pub qk_symmetric_share: f64,
}

/// The columns of head `h` of a `[d_in, d_out]` input-major matrix, as `d_in x d_k` row-major.
fn head_columns(w: &[f32], d_in: usize, d_out: usize, h: usize, d_k: usize) -> Vec<f32> {
    (0..d_in)
        .flat_map(|i| w[i * d_out + h * d_k..i * d_out + (h + 1) * d_k].iter().copied())
        .collect()
}

/// Every layer's and head's measures (layers numbered from 1, as the blocks' hidden states are).
pub fn attention_geometry(model: &Transformer) -> Vec<HeadGeometry> {
    let mut rows = Vec::new();
    for (l, block) in model.blocks.iter().enumerate() {
        let att = &block.attention;
        let [q, k, v] = att.qkv_weights();
        let [d_in, d_out] = q.dims();
        let get = |t: burn::tensor::Tensor<2>| t.into_data().try_into_vec::<f32>().expect("f32");
        let (q, k, v) = (get(q), get(k), get(v));
        for h in 0..att.n_heads {
            let qh = head_columns(&q, d_in, d_out, h, att.d_k);
            let kh = head_columns(&k, d_in, d_out, h, att.d_k);
            let vh = head_columns(&v, d_in, d_out, h, att.d_k);
            // M = Q_h K_h^T, d_in x d_in.
            let mut m = vec![0f64; d_in * d_in];
            for i in 0..d_in {
                for j in 0..d_in {
                    m[i * d_in + j] = (0..att.d_k)
                        .map(|c| qh[i * att.d_k + c] as f64 * kh[j * att.d_k + c] as f64)
                        .sum();
                }
            }
            rows.push(HeadGeometry {
                layer: l + 1,
                head: h,
                cos_q_k: cosine(&qh, &kh),
                cos_q_v: cosine(&qh, &vh),
                cos_k_v: cosine(&kh, &vh),
                qk_symmetric_share: symmetric_share(&m, d_in),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_share_of_symmetric_and_antisymmetric_matrices() {
        let sym = [1.0, 2.0, 2.0, -3.0];
        assert!((symmetric_share(&sym, 2) - 1.0).abs() < 1e-12);
        let anti = [0.0, 1.0, -1.0, 0.0];
        assert_eq!(symmetric_share(&anti, 2), 0.0);
        // [[0, 1], [0, 0]]: symmetric part [[0, .5], [.5, 0]], norm sqrt(.5) over 1.
        let upper = [0.0, 1.0, 0.0, 0.0];
        assert!((symmetric_share(&upper, 2) - 0.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn identical_occurrences_have_self_similarity_one() {
        let v = [0.3f32, -1.0, 2.0];
        assert!((mean_pairwise_cosine(&[&v, &v, &v]) - 1.0).abs() < 1e-12);
        let w = [1.0f32, 0.0, 0.0];
        let x = [0.0f32, 1.0, 0.0];
        // cos(w,x)=0, cos(w,w)=1, cos(x,w)=0: pairs (w,x), (w,w), (x,w) -> 1/3.
        assert!((mean_pairwise_cosine(&[&w, &x, &w]) - 1.0 / 3.0).abs() < 1e-12);
    }
}
