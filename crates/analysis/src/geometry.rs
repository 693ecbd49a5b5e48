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

/// `(||(M + M^T)/2||_F^2, ||M||_F^2)` of a square row-major `n x n` matrix: the squared norms
/// of its symmetric part and of the whole.
pub(crate) fn symmetric_part_and_total(m: &[f64], n: usize) -> (f64, f64) {
    assert_eq!(m.len(), n * n);
    let (mut sym, mut all) = (0f64, 0f64);
    for i in 0..n {
        for j in 0..n {
            let s = 0.5 * (m[i * n + j] + m[j * n + i]);
            sym += s * s;
            all += m[i * n + j] * m[i * n + j];
        }
    }
    (sym, all)
}

/// ||(M + M^T)/2||_F / ||M||_F of a square row-major `n x n` matrix.
pub fn symmetric_share(m: &[f64], n: usize) -> f64 {
    let (sym, all) = symmetric_part_and_total(m, n);
    if all == 0.0 {
        0.0
    } else {
        (sym / all).sqrt()
    }
}

/// Mean cosine over all pairs of distinct vectors (NaN with fewer than two): the pairs'
/// [`pairwise_cosines`] summed in their order from 0.
pub fn mean_pairwise_cosine(vectors: &[&[f32]]) -> f64 {
    mean_pairwise_cosine_of(&pairwise_cosines(vectors))
}

/// The mean of [`pairwise_cosines`]' values, summed in their order from 0 (NaN for none).
fn mean_pairwise_cosine_of(cosines: &[f64]) -> f64 {
    if cosines.is_empty() {
        f64::NAN
    } else {
        cosines.iter().fold(0.0, |sum, c| sum + c) / cosines.len() as f64
    }
}

/// The cosine of every pair `i < j` of `vectors`, row by row (`(0,1), (0,2), .., (1,2), ..`):
/// what [`mean_pairwise_cosine`] averages. Each equals [`cosine`] of the pair to the last bit
/// (the same sums in the same order); the squared norms are taken once per vector and the dot
/// products [`LANES`] at a time. The vectors must be equally long (it panics otherwise, where
/// [`cosine`] reads the shorter length).
pub fn pairwise_cosines(vectors: &[&[f32]]) -> Vec<f64> {
    let n = vectors.len();
    let norms = squared_norms(vectors);
    let mut out = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    let mut dots = Vec::with_capacity(n);
    for i in 0..n {
        dots.clear();
        dots_into(vectors[i], &vectors[i + 1..], &mut dots);
        out.extend(
            dots.iter()
                .zip(&norms[i + 1..])
                .map(|(&ab, &bb)| cosine_of(ab, norms[i], bb)),
        );
    }
    out
}

/// Dot products summed at once: a sum in f64 over the coordinates in order waits on each
/// addition, so one at a time leaves the processor idle; independent sums side by side do not.
const LANES: usize = 8;

/// [`cosine`] from its three sums: the dot product and the two squared norms.
fn cosine_of(ab: f64, aa: f64, bb: f64) -> f64 {
    if aa == 0.0 || bb == 0.0 {
        0.0
    } else {
        ab / (aa.sqrt() * bb.sqrt())
    }
}

/// The sum of `a[i] * b[i]` in f64 over the coordinates in order: [`cosine`]'s dot product,
/// and with `b = a` its squared norm.
fn dot(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    a.iter()
        .zip(b)
        .fold(0.0, |s, (&x, &y)| s + x as f64 * y as f64)
}

/// [`dot`] of `a` with each of `bs`, appended to `out` in order, [`LANES`] sums side by side
/// (each still in coordinate order, so each equals [`dot`]).
fn dots_into(a: &[f32], bs: &[&[f32]], out: &mut Vec<f64>) {
    let n = a.len();
    let mut chunks = bs.chunks_exact(LANES);
    for chunk in &mut chunks {
        let b: [&[f32]; LANES] = std::array::from_fn(|t| {
            assert_eq!(chunk[t].len(), n, "vectors of different lengths");
            &chunk[t][..n]
        });
        let mut acc = [0f64; LANES];
        for k in 0..n {
            let x = a[k] as f64;
            for t in 0..LANES {
                acc[t] += x * b[t][k] as f64;
            }
        }
        out.extend(acc);
    }
    out.extend(chunks.remainder().iter().map(|b| dot(a, b)));
}

/// Each vector's [`dot`] with itself, [`LANES`] sums side by side.
fn squared_norms(vectors: &[&[f32]]) -> Vec<f64> {
    let mut out = Vec::with_capacity(vectors.len());
    let mut chunks = vectors.chunks_exact(LANES);
    for chunk in &mut chunks {
        let n = chunk[0].len();
        let v: [&[f32]; LANES] = std::array::from_fn(|t| {
            assert_eq!(chunk[t].len(), n, "vectors of different lengths");
            &chunk[t][..n]
        });
        let mut acc = [0f64; LANES];
        for k in 0..n {
            for t in 0..LANES {
                let x = v[t][k] as f64;
                acc[t] += x * x;
            }
        }
        out.extend(acc);
    }
    out.extend(chunks.remainder().iter().map(|v| dot(v, v)));
    out
}

/// Linear CKA (Kornblith et al. 2019) between two `n x k` row-major matrices whose rows are the
/// same n items (here: the input dimensions) and whose columns are features (the head's output
/// dimensions): ||X^T Y||_F^2 / (||X^T X||_F ||Y^T Y||_F) after centring each column. 1 when Y is
/// X up to rotation and scale: it compares the subspaces the heads project onto, which the plain
/// cosine of the flattened matrices does not.
///
/// It is not 0 for unrelated matrices: for independent Gaussian n x k matrices it is about
/// k / (n + k) (0.20 for 128 input coordinates and 32-dimensional heads), so every CKA is read
/// beside [`linear_cka_null`].
pub fn linear_cka(x: &[f32], y: &[f32], n: usize, k: usize) -> f64 {
    linear_cka_wide(x, k, y, k, n)
}

/// [`linear_cka`] of an `n x kx` and an `n x ky` matrix (the widths may differ: the embedding
/// matrix against its projection through one head).
pub fn linear_cka_wide(x: &[f32], kx: usize, y: &[f32], ky: usize, n: usize) -> f64 {
    Centred::new(x, n, kx).cka(&Centred::new(y, n, ky))
}

/// An `n x k` matrix with each column's mean removed (f64), and its ||X^T X||_F^2: what every
/// CKA of it reuses, computed once however many matrices it is compared with.
struct Centred {
    m: Vec<f64>,
    n: usize,
    k: usize,
    gram2: f64,
}

impl Centred {
    fn new(x: &[f32], n: usize, k: usize) -> Centred {
        assert_eq!(x.len(), n * k);
        let m = centred(x, n, k);
        let gram2 = frobenius2(&cross(&m, k, &m, k, n));
        Centred { m, n, k, gram2 }
    }

    /// ||X^T Y||_F^2 / (||X^T X||_F ||Y^T Y||_F), 0 where a denominator is.
    fn cka(&self, y: &Centred) -> f64 {
        assert_eq!(self.n, y.n);
        let denom = (self.gram2 * y.gram2).sqrt();
        if denom == 0.0 {
            0.0
        } else {
            frobenius2(&cross(&self.m, self.k, &y.m, y.k, self.n)) / denom
        }
    }

    /// [`linear_cka_wide_null`]: the mean of [`Centred::cka`] over `draws` seeded permutations
    /// of `y`'s rows. A permutation changes neither Y's column means nor ||Y^T Y||, so only the
    /// cross term X^T P Y is computed per draw.
    fn cka_null(&self, y: &Centred, draws: usize, seed: u64) -> f64 {
        assert_eq!(self.n, y.n);
        let n = self.n;
        let denom = (self.gram2 * y.gram2).sqrt();
        let mut rng = crate::inference::SplitMix64::new(seed);
        let mut order: Vec<usize> = (0..n).collect();
        let mut total = 0.0;
        for _ in 0..draws {
            crate::inference::shuffle(&mut order, &mut rng);
            if denom != 0.0 {
                total +=
                    frobenius2(&cross_rows(&self.m, self.k, &y.m, y.k, n, |r| order[r])) / denom;
            }
        }
        total / draws.max(1) as f64
    }
}

/// An `n x k` row-major matrix as f64 with each column's mean removed.
fn centred(m: &[f32], n: usize, k: usize) -> Vec<f64> {
    let mut out: Vec<f64> = m.iter().map(|&v| v as f64).collect();
    for c in 0..k {
        let mean = (0..n).map(|r| out[r * k + c]).sum::<f64>() / n as f64;
        (0..n).for_each(|r| out[r * k + c] -= mean);
    }
    out
}

/// A^T B (`ka x kb`, row-major) of two `n`-row row-major matrices. Accumulated one row pair
/// at a time (a rank-1 update over contiguous rows, which the compiler vectorises); each
/// entry's sum still runs over the rows in order, so it equals the plain triple loop's.
fn cross(a: &[f64], ka: usize, b: &[f64], kb: usize, n: usize) -> Vec<f64> {
    cross_rows(a, ka, b, kb, n, |r| r)
}

/// Rows of A^T B accumulated together: [`CROSS_BLOCK`] x `kb` f64 stay in the first-level
/// cache while every row pair passes, where the whole `ka x kb` result would not.
const CROSS_BLOCK: usize = 8;

/// [`cross`] with B's rows taken in the order `row_of(r)`: A^T P B for a permutation P,
/// without building P B. The result is built [`CROSS_BLOCK`] rows at a time; within a block
/// each entry still sums over the rows in order, so the blocks change no bit.
fn cross_rows(
    a: &[f64],
    ka: usize,
    b: &[f64],
    kb: usize,
    n: usize,
    row_of: impl Fn(usize) -> usize,
) -> Vec<f64> {
    let mut g = vec![0f64; ka * kb];
    if kb == 0 {
        // No columns: an empty result (as the row-by-row loop gave), whose CKA is 0.
        return g;
    }
    for (block, out) in g.chunks_mut(CROSS_BLOCK * kb).enumerate() {
        let i0 = block * CROSS_BLOCK;
        let rows = out.len() / kb;
        for r in 0..n {
            let ar = &a[r * ka + i0..r * ka + i0 + rows];
            let rb = row_of(r);
            let br = &b[rb * kb..(rb + 1) * kb];
            for (i, &s) in ar.iter().enumerate() {
                let out = &mut out[i * kb..(i + 1) * kb];
                for (o, &v) in out.iter_mut().zip(br) {
                    *o += s * v;
                }
            }
        }
    }
    g
}

/// The squared Frobenius norm, summed in row-major order.
fn frobenius2(m: &[f64]) -> f64 {
    m.iter().map(|v| v * v).sum()
}

/// The chance level of [`linear_cka`] for these two matrices: its mean over `draws` random
/// permutations of `y`'s rows, which keep each matrix's own statistics and break only the
/// correspondence of the rows (input coordinates, or words).
pub fn linear_cka_null(x: &[f32], y: &[f32], n: usize, k: usize, draws: usize, seed: u64) -> f64 {
    linear_cka_wide_null(x, k, y, k, n, draws, seed)
}

/// [`linear_cka_null`] for matrices of different widths.
pub fn linear_cka_wide_null(
    x: &[f32],
    kx: usize,
    y: &[f32],
    k: usize,
    n: usize,
    draws: usize,
    seed: u64,
) -> f64 {
    Centred::new(x, n, kx).cka_null(&Centred::new(y, n, k), draws, seed)
}

/// One head's attention-matrix measures.
#[derive(Clone, Debug, serde::Serialize)]
pub struct HeadGeometry {
    pub layer: usize,
    pub head: usize,
    pub cos_q_k: f64,
    pub cos_q_v: f64,
    pub cos_k_v: f64,
    /// Linear CKA between the heads' projections (subspace similarity).
    pub cka_q_k: f64,
    pub cka_q_v: f64,
    pub cka_k_v: f64,
    /// Symmetric share of W_Q^h (W_K^h)^T.
    pub qk_symmetric_share: f64,
    /// [`linear_cka_null`] of each pair: the value unrelated matrices of these shapes get.
    pub cka_q_k_null: f64,
    pub cka_q_v_null: f64,
    pub cka_k_v_null: f64,
}

/// Row permutations per CKA chance level.
const NULL_DRAWS: usize = 20;

/// The columns of head `h` of a `[d_in, d_out]` input-major matrix, as `d_in x d_k` row-major.
fn head_columns(w: &[f32], d_in: usize, d_out: usize, h: usize, d_k: usize) -> Vec<f32> {
    (0..d_in)
        .flat_map(|i| {
            w[i * d_out + h * d_k..i * d_out + (h + 1) * d_k]
                .iter()
                .copied()
        })
        .collect()
}

/// Every layer's and head's measures (layers numbered from 1, as the blocks' hidden states are).
pub fn attention_geometry(model: &Transformer) -> Vec<HeadGeometry> {
    qkv_per_layer(model)
        .iter()
        .enumerate()
        .flat_map(|(l, w)| head_geometry(l + 1, w))
        .collect()
}

/// The same measures on what training changed, W - W0 per matrix: whether the *updates* to
/// W_Q, W_K and W_V point the same way, which the trained matrices (mostly their random
/// initialisation at these budgets) cannot show. `initial` is the model as initialised (the same
/// config and seed; [`transformer::TransformerConfig::init`] draws every weight at once).
pub fn attention_update_geometry(
    trained: &Transformer,
    initial: &Transformer,
) -> Vec<HeadGeometry> {
    let (t, i) = (qkv_per_layer(trained), qkv_per_layer(initial));
    t.iter()
        .zip(&i)
        .enumerate()
        .flat_map(|(l, (t, i))| {
            let delta = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x - y).collect();
            let w = LayerQkv {
                q: delta(&t.q, &i.q),
                k: delta(&t.k, &i.k),
                v: delta(&t.v, &i.v),
                ..*t
            };
            head_geometry(l + 1, &w)
        })
        .collect()
}

/// How alike the *projected activations* of one layer are: the queries, keys and values the
/// block's attention actually computes from real tokens (`LN(h) W_Q`, `LN(h) W_K`, `LN(h) W_V`
/// with pre-LN, `h W` with post-LN), all heads together. Linear CKA over tokens, each beside
/// its row-permutation null (the value for unrelated activations of these shapes). Unlike CKA
/// of the weight matrices, which sits at its chance level for trained and random weights alike,
/// this asks whether the model computes the same thing in the query and the key role.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ActivationGeometry {
    /// The block (1..=N).
    pub layer: usize,
    /// Real tokens (no [CLS], [SEP], padding) the CKA is computed over.
    pub tokens: usize,
    pub cka_q_k: f64,
    pub cka_q_v: f64,
    pub cka_k_v: f64,
    pub cka_q_k_null: f64,
    pub cka_q_v_null: f64,
    pub cka_k_v_null: f64,
}

/// [`ActivationGeometry`] of every block, over up to `max_tokens` real tokens drawn (seeded)
/// from the first `n_sequences` sequences of `ids` (`seq_len` tokens each). The model is read
/// as in `readout` (causally for a causal LM); tokens with id `>= n_words` are specials.
#[allow(clippy::too_many_arguments)]
pub fn activation_geometry(
    model: &Transformer,
    ids: &[u32],
    seq_len: usize,
    n_sequences: usize,
    n_words: u32,
    max_tokens: usize,
    seed: u64,
    readout: crate::representations::Readout,
    device: &burn::tensor::Device,
) -> Vec<ActivationGeometry> {
    use burn::tensor::{Int, Tensor, TensorData};
    let n_seq = n_sequences.min(ids.len() / seq_len);
    let ids = &ids[..n_seq * seq_len];
    // The real-token positions, a seeded sample of them.
    let mut real: Vec<usize> = (0..ids.len()).filter(|&i| ids[i] < n_words).collect();
    let mut rng = crate::inference::SplitMix64::new(seed);
    crate::inference::shuffle(&mut real, &mut rng);
    real.truncate(max_tokens);
    real.sort_unstable();
    let n = real.len();
    let tokens = Tensor::<2, Int>::from_data(
        TensorData::new(
            ids.iter().map(|&x| x as i64).collect::<Vec<_>>(),
            [n_seq, seq_len],
        ),
        device,
    );
    let hidden = model.forward(tokens, None, readout.causal).hidden;
    model
        .blocks
        .iter()
        .enumerate()
        .map(|(l, block)| {
            let h = hidden[l].clone();
            let input = if block.pre_norm {
                block.norm_attention.forward(h)
            } else {
                h
            };
            let d = input.dims()[2];
            let flat = input.reshape([n_seq * seq_len, d]);
            let [wq, wk, wv] = block.attention.qkv_weights();
            let project = |w: Tensor<2>| -> Vec<f32> {
                let all = flat
                    .clone()
                    .matmul(w)
                    .into_data()
                    .try_into_vec::<f32>()
                    .expect("f32");
                real.iter()
                    .flat_map(|&r| all[r * d..(r + 1) * d].iter().copied())
                    .collect()
            };
            // Each centred once, for the three pairs and their nulls.
            let (q, k, v) = (
                Centred::new(&project(wq), n, d),
                Centred::new(&project(wk), n, d),
                Centred::new(&project(wv), n, d),
            );
            let pair = |a: &Centred, b: &Centred, s: u64| (a.cka(b), a.cka_null(b, 10, seed ^ s));
            let (qk, qk0) = pair(&q, &k, 1);
            let (qv, qv0) = pair(&q, &v, 2);
            let (kv, kv0) = pair(&k, &v, 3);
            ActivationGeometry {
                layer: l + 1,
                tokens: n,
                cka_q_k: qk,
                cka_q_v: qv,
                cka_k_v: kv,
                cka_q_k_null: qk0,
                cka_q_v_null: qv0,
                cka_k_v_null: kv0,
            }
        })
        .collect()
}

/// One layer's W_Q, W_K, W_V as `[d_in, d_out]` input-major floats.
#[derive(Clone)]
pub struct LayerQkv {
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub d_in: usize,
    pub d_out: usize,
    pub n_heads: usize,
    pub d_k: usize,
}

impl LayerQkv {
    /// A layer's `[d_in, d_out]` W_Q, W_K, W_V tensors, heads of `d_k` side by side.
    fn of([q, k, v]: [burn::tensor::Tensor<2>; 3], n_heads: usize, d_k: usize) -> LayerQkv {
        let [d_in, d_out] = q.dims();
        let get = |t: burn::tensor::Tensor<2>| t.into_data().try_into_vec::<f32>().expect("f32");
        LayerQkv {
            q: get(q),
            k: get(k),
            v: get(v),
            d_in,
            d_out,
            n_heads,
            d_k,
        }
    }
}

/// Every layer's W_Q, W_K, W_V (the matrices used; tied ones are equal).
pub fn qkv_per_layer(model: &Transformer) -> Vec<LayerQkv> {
    model
        .blocks
        .iter()
        .map(|block| {
            let att = &block.attention;
            LayerQkv::of(att.qkv_weights(), att.n_heads, att.d_k)
        })
        .collect()
}

/// Every layer's W_Q, W_K, W_V of a pretrained checkpoint ([`pretrained::Pretrained`]).
pub fn qkv_per_layer_pretrained(model: &pretrained::Pretrained) -> Vec<LayerQkv> {
    model
        .qkv_weights()
        .into_iter()
        .map(|(w, n_heads)| {
            let d_out = w[0].dims()[1];
            LayerQkv::of(w, n_heads, d_out / n_heads)
        })
        .collect()
}

/// The measures of every head of one layer's matrices.
pub fn head_geometry(layer: usize, w: &LayerQkv) -> Vec<HeadGeometry> {
    let (d_in, d_out, d_k) = (w.d_in, w.d_out, w.d_k);
    (0..w.n_heads)
        .map(|h| {
            let qh = head_columns(&w.q, d_in, d_out, h, d_k);
            let kh = head_columns(&w.k, d_in, d_out, h, d_k);
            let vh = head_columns(&w.v, d_in, d_out, h, d_k);
            // M = Q_h K_h^T, d_in x d_in.
            let mut m = vec![0f64; d_in * d_in];
            for i in 0..d_in {
                for j in 0..d_in {
                    m[i * d_in + j] = (0..d_k)
                        .map(|c| qh[i * d_k + c] as f64 * kh[j * d_k + c] as f64)
                        .sum();
                }
            }
            let seed = (layer * 1000 + h) as u64;
            HeadGeometry {
                layer,
                head: h,
                cos_q_k: cosine(&qh, &kh),
                cos_q_v: cosine(&qh, &vh),
                cos_k_v: cosine(&kh, &vh),
                cka_q_k: linear_cka(&qh, &kh, d_in, d_k),
                cka_q_v: linear_cka(&qh, &vh, d_in, d_k),
                cka_k_v: linear_cka(&kh, &vh, d_in, d_k),
                qk_symmetric_share: symmetric_share(&m, d_in),
                cka_q_k_null: linear_cka_null(&qh, &kh, d_in, d_k, NULL_DRAWS, seed),
                cka_q_v_null: linear_cka_null(&qh, &vh, d_in, d_k, NULL_DRAWS, seed + 1),
                cka_k_v_null: linear_cka_null(&kh, &vh, d_in, d_k, NULL_DRAWS, seed + 2),
            }
        })
        .collect()
}

/// The embedding matrix seen through one head: rows `E[w] W^h` (`words x d_k`), the vectors a
/// head's query, key or value projection makes of each word before any context. Scored like any
/// table, and compared with E by [`linear_cka_wide`] over the words.
pub fn project_rows(
    e: &[f32],
    d: usize,
    w: &[f32],
    d_out: usize,
    h: usize,
    d_k: usize,
) -> Vec<f32> {
    let n = e.len() / d;
    let wh = head_columns(w, d, d_out, h, d_k);
    let mut out = vec![0f32; n * d_k];
    // Row by row, W^h's rows streamed in order: each entry's sum runs over i ascending.
    let mut acc = vec![0f64; d_k];
    for r in 0..n {
        acc.fill(0.0);
        for i in 0..d {
            let s = e[r * d + i] as f64;
            for (a, &w) in acc.iter_mut().zip(&wh[i * d_k..(i + 1) * d_k]) {
                *a += s * w as f64;
            }
        }
        for (o, a) in out[r * d_k..(r + 1) * d_k].iter_mut().zip(&acc) {
            *o = *a as f32;
        }
    }
    out
}

/// Linear CKA between `x` (`n` rows of `kx`) and `x` seen through random Gaussian
/// projections to `k` columns, the mean over `draws` projections (seeded): what any projection
/// of that shape keeps of `x`'s geometry, the reference for CKA(E W^h, E) of a trained head.
/// Linear CKA does not change with the projection's scale, so the draws are N(0, 1).
pub fn random_projection_cka(
    x: &[f32],
    kx: usize,
    k: usize,
    n: usize,
    draws: usize,
    seed: u64,
) -> f64 {
    let mut rng = crate::inference::SplitMix64::new(seed ^ 0x7072_6F6A);
    let mut normal = move || {
        // Box-Muller: two uniforms in (0, 1] -> one standard normal.
        let u = 1.0 - rng.next_f32() as f64;
        let v = rng.next_f32() as f64;
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    };
    let mut sum = 0.0;
    for _ in 0..draws.max(1) {
        let w: Vec<f32> = (0..kx * k).map(|_| normal()).collect();
        let mut y = vec![0f32; n * k];
        for i in 0..n {
            let yi = &mut y[i * k..(i + 1) * k];
            for c in 0..kx {
                let s = x[i * kx + c];
                for (o, &wv) in yi.iter_mut().zip(&w[c * k..(c + 1) * k]) {
                    *o += s * wv;
                }
            }
        }
        sum += linear_cka_wide(&x[..n * kx], kx, &y, k, n);
    }
    sum / draws.max(1) as f64
}

/// The scale of a model's input embedding over the word rows: for each coordinate its
/// standard deviation across words, then the root mean square over coordinates; plain, and
/// with each word weighted by its count (the scale of the input the model reads, token by
/// token). A table drawn from N(0, s²) has both near s.
pub fn embedding_scale(model: &Transformer, counts: &[f64]) -> (f64, f64) {
    let table = model.token_embedding.weight.val();
    let [_, d] = table.dims();
    let values: Vec<f32> = table.into_data().iter::<f32>().collect();
    scale_of(&values, d, counts)
}

/// [`embedding_scale`] of a row-major table of `d` columns, over its first `counts.len()` rows.
pub fn scale_of(values: &[f32], d: usize, counts: &[f64]) -> (f64, f64) {
    let rows = counts.len();
    let rms = |weights: &dyn Fn(usize) -> f64| -> f64 {
        let total: f64 = (0..rows).map(weights).sum();
        let mut sum = 0.0;
        for j in 0..d {
            let mean: f64 = (0..rows)
                .map(|i| weights(i) * values[i * d + j] as f64)
                .sum::<f64>()
                / total;
            let var: f64 = (0..rows)
                .map(|i| weights(i) * (values[i * d + j] as f64 - mean).powi(2))
                .sum::<f64>()
                / total;
            sum += var;
        }
        (sum / d as f64).sqrt()
    };
    (rms(&|_| 1.0), rms(&|i| counts[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_projections_keep_all_of_a_rank_one_table_and_less_of_a_rank_two_one() {
        // Rows a_i u (one direction): any projection gives rows a_i (u W), the same Gram
        // matrix up to scale, so CKA 1 for every draw. Two directions projected to one column
        // lose one of them: below 1.
        let n = 200;
        let a = |i: usize| (i as f32 * 0.37).sin();
        let b = |i: usize| (i as f32 * 0.11).cos();
        let rank1: Vec<f32> = (0..n)
            .flat_map(|i| [a(i), 2.0 * a(i), -a(i), 0.5 * a(i)])
            .collect();
        let one = random_projection_cka(&rank1, 4, 3, n, 5, 1);
        assert!((one - 1.0).abs() < 1e-4, "{one}");
        let rank2: Vec<f32> = (0..n)
            .flat_map(|i| [a(i), b(i), a(i) + b(i), a(i) - b(i)])
            .collect();
        let less = random_projection_cka(&rank2, 4, 1, n, 5, 1);
        assert!(less > 0.0 && less < 0.95, "{less}");
        assert_eq!(less, random_projection_cka(&rank2, 4, 1, n, 5, 1), "seeded");
    }

    #[test]
    fn the_embedding_scale_is_each_coordinates_spread_plain_and_weighted() {
        // Two coordinates over three words: column 0 is (1, -1, 0), column 1 is (2, 2, 2).
        // Plain: var 2/3 and 0, RMS sqrt(1/3). Weighted by counts (1, 1, 2): mean 0, var
        // (1 + 1) / 4 = 1/2 and 0, RMS 1/2.
        let values = [1.0, 2.0, -1.0, 2.0, 0.0, 2.0, 9.0, 9.0];
        let (plain, weighted) = scale_of(&values, 2, &[1.0, 1.0, 2.0]);
        assert!((plain - (1.0f64 / 3.0).sqrt()).abs() < 1e-12, "{plain}");
        assert!((weighted - 0.5).abs() < 1e-12, "{weighted}");
    }

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
    fn linear_cka_is_one_under_rotation_and_scale_and_small_for_unrelated() {
        // X: 4 x 2; Y = 3 X R with R a 90-degree rotation.
        let x = [1.0f32, 0.0, 0.0, 2.0, -1.0, 1.0, 0.5, -3.0];
        let y: Vec<f32> = x
            .chunks(2)
            .flat_map(|r| [-3.0 * r[1], 3.0 * r[0]])
            .collect();
        assert!((linear_cka(&x, &y, 4, 2) - 1.0).abs() < 1e-12);
        // Orthogonal column spaces after centring: CKA 0.
        let a = [1.0f32, -1.0, 1.0, -1.0];
        let b = [1.0f32, 1.0, -1.0, -1.0];
        assert!(linear_cka(&a, &b, 4, 1).abs() < 1e-12);
    }

    /// Deterministic standard-normal-ish values.
    fn gaussian(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = crate::inference::SplitMix64::new(seed);
        (0..n)
            .map(|_| {
                let mut u = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let (a, b) = (u().max(1e-12), u());
                ((-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()) as f32
            })
            .collect()
    }

    #[test]
    fn unrelated_matrices_sit_at_the_cka_chance_level_k_over_n_plus_k() {
        // 128 input coordinates, 32-dimensional heads: independent matrices give about
        // 32 / 160 = 0.20, and the permutation null finds the same level.
        let (n, k) = (128, 32);
        let (x, y) = (gaussian(n * k, 1), gaussian(n * k, 2));
        let cka = linear_cka(&x, &y, n, k);
        let null = linear_cka_null(&x, &y, n, k, 20, 3);
        assert!((cka - 0.2).abs() < 0.03, "{cka}");
        assert!((null - 0.2).abs() < 0.02, "{null}");
        // A matrix against itself is far above its null.
        assert!((linear_cka(&x, &x, n, k) - 1.0).abs() < 1e-12);
        assert!(linear_cka_null(&x, &x, n, k, 20, 3) < 0.25);
    }

    /// Linear CKA as its definition reads, column by column (what the code computed before
    /// it accumulated A^T B row by row): the reference the fast path is checked against.
    fn cka_by_definition(x: &[f32], kx: usize, y: &[f32], ky: usize, n: usize) -> f64 {
        let col = |m: &[f32], k: usize, c: usize| -> Vec<f64> {
            let v: Vec<f64> = (0..n).map(|r| m[r * k + c] as f64).collect();
            let mean = v.iter().sum::<f64>() / n as f64;
            v.iter().map(|a| a - mean).collect()
        };
        let hsic = |a: &[f32], ka: usize, b: &[f32], kb: usize| -> f64 {
            let mut t = 0.0;
            for i in 0..ka {
                for j in 0..kb {
                    let (ci, cj) = (col(a, ka, i), col(b, kb, j));
                    let v: f64 = ci.iter().zip(&cj).map(|(p, q)| p * q).sum();
                    t += v * v;
                }
            }
            t
        };
        hsic(x, kx, y, ky) / (hsic(x, kx, x, kx) * hsic(y, ky, y, ky)).sqrt()
    }

    #[test]
    fn the_fast_cka_and_its_null_agree_with_the_definition() {
        // Widths that differ and do not fill a vector register; y partly driven by x.
        let (n, kx, ky) = (37, 5, 3);
        let x = gaussian(n * kx, 11);
        let noise = gaussian(n * ky, 12);
        let y: Vec<f32> = (0..n * ky)
            .map(|i| x[(i / ky) * kx + i % ky] + 0.5 * noise[i])
            .collect();
        let fast = linear_cka_wide(&x, kx, &y, ky, n);
        let slow = cka_by_definition(&x, kx, &y, ky, n);
        assert!((fast - slow).abs() < 1e-12, "{fast} vs {slow}");
        assert!(fast > 0.5, "{fast}");
        // The null: the same permutations applied by hand to y's rows.
        let (draws, seed) = (7, 5);
        let mut rng = crate::inference::SplitMix64::new(seed);
        let mut order: Vec<usize> = (0..n).collect();
        let mut by_hand = 0.0;
        for _ in 0..draws {
            crate::inference::shuffle(&mut order, &mut rng);
            let shuffled: Vec<f32> = order
                .iter()
                .flat_map(|&r| y[r * ky..(r + 1) * ky].iter().copied())
                .collect();
            by_hand += cka_by_definition(&x, kx, &shuffled, ky, n);
        }
        let null = linear_cka_wide_null(&x, kx, &y, ky, n, draws, seed);
        assert!((null - by_hand / draws as f64).abs() < 1e-12, "{null}");
        assert!(null < fast / 2.0, "{null} vs {fast}");
        // Projections: E W^h by the definition, entry by entry.
        let (d, d_out, d_k) = (5, 6, 3);
        let w = gaussian(d * d_out, 13);
        let rows = project_rows(&x, d, &w, d_out, 1, d_k);
        for r in 0..n {
            for c in 0..d_k {
                let want: f64 = (0..d)
                    .map(|i| x[r * d + i] as f64 * w[i * d_out + d_k + c] as f64)
                    .sum();
                assert!((rows[r * d_k + c] as f64 - want).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn updates_that_move_q_and_k_together_are_found_in_the_deltas_only() {
        // Trained = random init + the same update U on W_Q and W_K; the trained matrices look
        // unrelated (init dominates), the updates are identical.
        let (d, heads, d_k) = (16, 2, 8);
        let layer = |q: Vec<f32>, k: Vec<f32>, v: Vec<f32>| LayerQkv {
            q,
            k,
            v,
            d_in: d,
            d_out: d,
            n_heads: heads,
            d_k,
        };
        let (q0, k0, v0) = (gaussian(d * d, 4), gaussian(d * d, 5), gaussian(d * d, 6));
        let u: Vec<f32> = gaussian(d * d, 7).iter().map(|x| 0.05 * x).collect();
        let add = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x + y).collect::<Vec<_>>();
        let trained = layer(add(&q0, &u), add(&k0, &u), v0.clone());
        let t = head_geometry(1, &trained);
        assert!(t.iter().all(|h| h.cos_q_k.abs() < 0.3), "{t:?}");
        let delta = layer(u.clone(), u.clone(), vec![0.0; d * d]);
        let dg = head_geometry(1, &delta);
        assert!(dg
            .iter()
            .all(|h| (h.cos_q_k - 1.0).abs() < 1e-9 && (h.cka_q_k - 1.0).abs() < 1e-9));
        assert!(dg.iter().all(|h| h.cka_q_k_null < 0.7), "{dg:?}");
    }

    #[test]
    fn projecting_rows_through_a_head_is_e_times_its_columns() {
        // E (2 x 2) times W (2 x 4) with two heads of 2: head 1 takes columns 2 and 3.
        let e = [1.0f32, 2.0, 3.0, 4.0];
        let w = [1.0f32, 0.0, 0.5, 1.0, 0.0, 1.0, 2.0, -1.0];
        assert_eq!(project_rows(&e, 2, &w, 4, 1, 2), vec![4.5, -1.0, 9.5, -1.0]);
        assert_eq!(project_rows(&e, 2, &w, 4, 0, 2), vec![1.0, 2.0, 3.0, 4.0]);
        // Head 0's columns are the identity, so E W^0 = E: CKA 1. (Linear CKA is invariant to
        // rotations and isotropic scaling only, so a general projection scores below 1.)
        let cka = linear_cka_wide(&e, 2, &project_rows(&e, 2, &w, 4, 0, 2), 2, 2);
        assert!((cka - 1.0).abs() < 1e-12);
    }

    /// Vectors of `d` coordinates, `n` of them, one all zero (cosine 0 by convention).
    fn vectors(n: usize, d: usize, seed: u64) -> Vec<Vec<f32>> {
        let values = gaussian(n * d, seed);
        let mut rows: Vec<Vec<f32>> = values.chunks(d).map(|r| r.to_vec()).collect();
        if n > 3 {
            rows[3] = vec![0.0; d];
        }
        rows
    }

    #[test]
    fn cosines_summed_side_by_side_equal_one_pair_at_a_time_to_the_last_bit() {
        // Counts below, at and past the lanes, widths that do not fill them.
        for (n, d, seed) in [
            (0, 4, 1),
            (1, 4, 2),
            (2, 3, 3),
            (9, 5, 4),
            (17, 128, 5),
            (23, 7, 6),
        ] {
            let rows = vectors(n, d, seed);
            let refs: Vec<&[f32]> = rows.iter().map(|r| r.as_slice()).collect();
            let one_at_a_time: Vec<u64> = (0..n)
                .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
                .map(|(i, j)| cosine(refs[i], refs[j]).to_bits())
                .collect();
            let got: Vec<u64> = pairwise_cosines(&refs)
                .iter()
                .map(|c| c.to_bits())
                .collect();
            assert_eq!(got, one_at_a_time, "{n} vectors of {d}");
            let mut sum = 0f64;
            one_at_a_time.iter().for_each(|&b| sum += f64::from_bits(b));
            let mean = mean_pairwise_cosine(&refs);
            if n < 2 {
                assert!(mean.is_nan());
            } else {
                assert_eq!(mean.to_bits(), (sum / one_at_a_time.len() as f64).to_bits());
            }
            if n >= 2 {
                // Each vector against the bag's mean, as cosine() computes it.
                let mut m = vec![0f32; d];
                refs.iter()
                    .for_each(|v| m.iter_mut().zip(v.iter()).for_each(|(a, x)| *a += x));
                let want = refs.iter().map(|v| cosine(v, &m)).sum::<f64>() / n as f64;
                assert_eq!(mean_cosine_to_mean(&refs).to_bits(), want.to_bits());
            }
        }
        // A planted pair: (1, 0) and (1, 1) at 45 degrees, and the zero vector's 0.
        let (a, b, z) = ([1.0f32, 0.0], [1.0f32, 1.0], [0.0f32, 0.0]);
        let c = pairwise_cosines(&[&a, &b, &z]);
        assert!((c[0] - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15);
        assert_eq!(&c[1..], &[0.0, 0.0]);
    }

    #[test]
    fn the_blocked_cross_product_equals_the_row_by_row_sum_to_the_last_bit() {
        // ka not a multiple of the block; B's rows permuted.
        let (n, ka, kb) = (29, 13, 6);
        let a: Vec<f64> = gaussian(n * ka, 21).iter().map(|&x| x as f64).collect();
        let b: Vec<f64> = gaussian(n * kb, 22).iter().map(|&x| x as f64).collect();
        let order: Vec<usize> = (0..n).map(|r| (r * 7) % n).collect();
        let got = cross_rows(&a, ka, &b, kb, n, |r| order[r]);
        for i in 0..ka {
            for j in 0..kb {
                let mut want = 0f64;
                for r in 0..n {
                    want += a[r * ka + i] * b[order[r] * kb + j];
                }
                assert_eq!(got[i * kb + j].to_bits(), want.to_bits(), "({i}, {j})");
            }
        }
    }

    #[test]
    fn a_centred_matrix_reused_gives_the_row_by_row_cka_to_the_last_bit() {
        // The formula as the code computed it before the Gram terms were kept: each term's
        // cross product summed over the rows in order, one entry at a time.
        let (n, d) = (40, 9);
        let (x, y) = (gaussian(n * d, 31), gaussian(n * d, 32));
        let (xc, yc) = (centred(&x, n, d), centred(&y, n, d));
        let by_rows = |a: &[f64], b: &[f64], row_of: &dyn Fn(usize) -> usize| -> f64 {
            let mut f = 0f64;
            for i in 0..d {
                for j in 0..d {
                    let mut g = 0f64;
                    for r in 0..n {
                        g += a[r * d + i] * b[row_of(r) * d + j];
                    }
                    f += g * g;
                }
            }
            f
        };
        let id = |r: usize| r;
        let denom = (by_rows(&xc, &xc, &id) * by_rows(&yc, &yc, &id)).sqrt();
        let (cx, cy) = (Centred::new(&x, n, d), Centred::new(&y, n, d));
        assert_eq!(
            cx.cka(&cy).to_bits(),
            (by_rows(&xc, &yc, &id) / denom).to_bits()
        );
        let mut rng = crate::inference::SplitMix64::new(7);
        let mut order: Vec<usize> = (0..n).collect();
        let mut total = 0.0;
        for _ in 0..10 {
            crate::inference::shuffle(&mut order, &mut rng);
            total += by_rows(&xc, &yc, &|r| order[r]) / denom;
        }
        assert_eq!(cx.cka_null(&cy, 10, 7).to_bits(), (total / 10.0).to_bits());
        assert!((cx.cka(&cx) - 1.0).abs() < 1e-12);
        // No columns, as the row-by-row loop gave: CKA 0, not a panic.
        assert_eq!(Centred::new(&[], n, 0).cka(&cy), 0.0);
        assert_eq!(cy.cka_null(&Centred::new(&[], n, 0), 3, 1), 0.0);
        // A constant matrix centres to zero: CKA 0 and its null 0, not NaN.
        let flat = vec![2.0f32; n * d];
        assert_eq!(Centred::new(&flat, n, d).cka(&cy), 0.0);
        assert_eq!(Centred::new(&flat, n, d).cka_null(&cy, 3, 1), 0.0);
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

/// How contextual one layer's vectors are (Ethayarajh 2019), with the anisotropy-adjusted values
/// (measure minus anisotropy), which say how much of a similarity is the word's own and how much
/// is every vector's common direction.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerContextuality {
    pub layer: usize,
    /// Mean over the tracked words of the mean cosine between a word's occurrences.
    pub self_similarity: f64,
    /// Mean over sequences of the mean cosine between each word's vector and the sequence mean.
    pub intra_sentence: f64,
    /// The same measure on bags of random tokens from other sequences, one bag per sequence,
    /// with its positions (a token per word position, drawn among the tokens seen at that
    /// position): what intra-sentence similarity is when a sequence is only a bag of the
    /// layer's typical vectors. It is not the anisotropy: a token's cosine with a
    /// mean that contains it is about sqrt((1 + (m - 1) a) / m) for m tokens of mean pairwise
    /// cosine a, at least 0.127 for m = 62 even when a = 0.
    pub intra_sentence_null: f64,
    /// Mean cosine between vectors of random pairs of tokens.
    pub anisotropy: f64,
    /// MEV: mean over the tracked words of the share of their occurrence vectors' variance that
    /// the first principal component explains (centred PCA, as Ethayarajh's code computes it
    /// with scikit-learn's `PCA`).
    pub max_explainable_variance: f64,
    /// The same statistic on bags of random tokens, one per tracked word and of its size: the
    /// first component of k points explains at least 1/(k - 1) of their variance whatever they
    /// are, so MEV is read against this.
    pub max_explainable_variance_null: f64,
    /// Self-similarity minus anisotropy (the paper's adjustment).
    pub self_similarity_adjusted: f64,
    /// Intra-sentence similarity minus its null.
    pub intra_sentence_excess: f64,
    /// MEV minus its null.
    pub max_explainable_variance_excess: f64,
    /// Words tracked: those with at least [`MIN_CONTEXTS`] occurrences in the pass.
    pub words: usize,
    /// What the means above average, for intervals over them ([`LayerContextuality::intervals`]).
    #[serde(skip)]
    pub items: ContextualityItems,
}

/// The items a layer's contextuality statistics are means over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextualityItems {
    /// Each tracked word's self-similarity (the words counted in `words`).
    pub self_similarity: Vec<f64>,
    /// Each sequence's intra-sentence similarity and that of its null bag (sequences with two
    /// or more word positions).
    pub intra_sentence: Vec<(f64, f64)>,
    /// The anisotropy sample's tokens: how many, and the cosine of every pair `i < j`, row by
    /// row (`(0,1), (0,2), .., (1,2), ..`).
    pub tokens: usize,
    pub token_cosines: Vec<f64>,
}

/// 95% percentile intervals of one layer's contextuality over the sampling of its items.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextualityIntervals {
    /// Tracked words resampled.
    pub self_similarity: crate::inference::Interval,
    /// The sample's tokens resampled (a pair of two draws of one token is not a pair).
    pub anisotropy: crate::inference::Interval,
    /// Words and tokens resampled, independently, in each draw.
    pub self_similarity_adjusted: crate::inference::Interval,
    /// Sequences resampled.
    pub intra_sentence: crate::inference::Interval,
    /// Sequences resampled with their own null bags (paired). The null's bags are drawn from
    /// a fixed sample of 64 tokens per position, whose own sampling is not resampled: the
    /// interval carries the sentences' variation, not the null's, and is narrow for it.
    pub intra_sentence_excess: crate::inference::Interval,
}

impl LayerContextuality {
    /// Intervals over `resamples` bootstrap draws of the words, sequences and tokens behind the
    /// layer's means: how far another sample of words, sentences and random tokens from the same
    /// model and text could move them. One model: nothing here says what another training run
    /// would give. Words share sequences, sequences share articles and tokens share words,
    /// which the draws ignore (so the intervals are if anything narrow). A statistic with no
    /// items (no tracked word, no sequence, fewer than two tokens) gets a NaN interval.
    pub fn intervals(&self, resamples: usize, seed: u64) -> ContextualityIntervals {
        use crate::inference::{index, percentile_interval, SplitMix64};
        let it = &self.items;
        let mut rng = SplitMix64::new(seed);
        let mean_of = |n: usize, rng: &mut SplitMix64, f: &dyn Fn(usize) -> f64| {
            (0..n).map(|_| f(index(rng, n))).sum::<f64>() / n.max(1) as f64
        };
        let n_tok = it.tokens;
        // Row i's pairs start at offset(i) in the upper triangle.
        let offset = |i: usize| i * n_tok - i * (i + 1) / 2;
        let mut counts = vec![0f64; n_tok];
        let mut draws = [(); 5].map(|_| Vec::with_capacity(resamples));
        for _ in 0..resamples {
            let self_sim = mean_of(it.self_similarity.len(), &mut rng, &|i| {
                it.self_similarity[i]
            });
            let intra_draw: Vec<usize> = (0..it.intra_sentence.len())
                .map(|_| index(&mut rng, it.intra_sentence.len()))
                .collect();
            let k = intra_draw.len().max(1) as f64;
            let intra = intra_draw
                .iter()
                .map(|&i| it.intra_sentence[i].0)
                .sum::<f64>()
                / k;
            let excess = intra_draw
                .iter()
                .map(|&i| it.intra_sentence[i].0 - it.intra_sentence[i].1)
                .sum::<f64>()
                / k;
            counts.iter_mut().for_each(|c| *c = 0.0);
            for _ in 0..n_tok {
                counts[index(&mut rng, n_tok)] += 1.0;
            }
            // The mean cosine over pairs of draws of distinct tokens: pair (i, j) is drawn
            // c_i c_j times.
            let (mut sum, mut weight) = (0f64, 0f64);
            for i in 0..n_tok {
                if counts[i] == 0.0 {
                    continue;
                }
                let row = &it.token_cosines[offset(i)..offset(i) + n_tok - i - 1];
                let mut s = 0f64;
                let mut w = 0f64;
                for (c, x) in counts[i + 1..].iter().zip(row) {
                    s += c * x;
                    w += c;
                }
                sum += counts[i] * s;
                weight += counts[i] * w;
            }
            let aniso = sum / weight;
            draws[0].push(self_sim);
            draws[1].push(aniso);
            draws[2].push(self_sim - aniso);
            draws[3].push(intra);
            draws[4].push(excess);
        }
        let [mut a, mut b, mut c, mut d, mut e] = draws;
        // No items: no draw means anything (an empty mean would read as 0).
        let blank = |x: &mut Vec<f64>| x.iter_mut().for_each(|v| *v = f64::NAN);
        if it.self_similarity.is_empty() {
            blank(&mut a);
            blank(&mut c);
        }
        if n_tok < 2 {
            blank(&mut b);
            blank(&mut c);
        }
        if it.intra_sentence.is_empty() {
            blank(&mut d);
            blank(&mut e);
        }
        ContextualityIntervals {
            self_similarity: percentile_interval(self.self_similarity, a, 0.95),
            anisotropy: percentile_interval(self.anisotropy, b, 0.95),
            self_similarity_adjusted: percentile_interval(self.self_similarity_adjusted, c, 0.95),
            intra_sentence: percentile_interval(self.intra_sentence, d, 0.95),
            intra_sentence_excess: percentile_interval(self.intra_sentence_excess, e, 0.95),
        }
    }
}

/// Word-level contextuality statistics use words seen in at least this many contexts
/// (Ethayarajh 2019 keeps words with at least 5 occurrences).
pub const MIN_CONTEXTS: usize = 5;

/// [`first_component_share`] of the rows after subtracting their mean: the share of variance
/// the first principal component explains (scikit-learn's `PCA(1).explained_variance_ratio_`).
pub fn first_component_share_centred(rows: &[&[f32]]) -> f64 {
    let k = rows.len();
    if k < 2 {
        return f64::NAN;
    }
    let d = rows[0].len();
    let mut mean = vec![0f64; d];
    for r in rows {
        for (m, x) in mean.iter_mut().zip(r.iter()) {
            *m += *x as f64 / k as f64;
        }
    }
    let centred: Vec<Vec<f32>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .zip(&mean)
                .map(|(x, m)| (*x as f64 - m) as f32)
                .collect()
        })
        .collect();
    // Identical rows (to rounding) have no variance to explain: one static vector stands for
    // all of them, MEV 1 — not the first component of the rounding noise.
    let energy = |r: &[f32]| r.iter().map(|x| (*x as f64).powi(2)).sum::<f64>();
    let total: f64 = rows.iter().map(|r| energy(r)).sum();
    let spread: f64 = centred.iter().map(|r| energy(r)).sum();
    if spread <= 1e-10 * total {
        return 1.0;
    }
    let refs: Vec<&[f32]> = centred.iter().map(|r| r.as_slice()).collect();
    first_component_share(&refs)
}

/// Mean cosine between each vector of a bag and the bag's mean (the intra-sentence statistic).
/// The vectors must be equally long (it panics otherwise).
pub fn mean_cosine_to_mean(vectors: &[&[f32]]) -> f64 {
    debug_assert!(vectors.iter().all(|v| v.len() == vectors[0].len()));
    if vectors.len() < 2 {
        return f64::NAN;
    }
    let d = vectors[0].len();
    let mut mean = vec![0f32; d];
    for v in vectors {
        mean.iter_mut().zip(v.iter()).for_each(|(m, x)| *m += x);
    }
    // Each term is cosine(v, mean) to the last bit: the mean's norm taken once, the sums
    // side by side.
    let mean_norm = dot(&mean, &mean);
    let mut dots = Vec::with_capacity(vectors.len());
    dots_into(&mean, vectors, &mut dots);
    (dots.iter().zip(squared_norms(vectors)))
        .map(|(&ab, aa)| cosine_of(ab, aa, mean_norm))
        .sum::<f64>()
        / vectors.len() as f64
}

/// Share of the squared Frobenius norm of the `k x d` matrix `rows` that its first singular
/// vector explains: sigma_1^2 / sum sigma_i^2, via power iteration on the k x k Gram matrix.
pub fn first_component_share(rows: &[&[f32]]) -> f64 {
    let k = rows.len();
    if k == 0 {
        return f64::NAN;
    }
    let mut g = vec![0f64; k * k];
    for i in 0..k {
        for j in i..k {
            let v: f64 = rows[i]
                .iter()
                .zip(rows[j])
                .map(|(a, b)| *a as f64 * *b as f64)
                .sum();
            g[i * k + j] = v;
            g[j * k + i] = v;
        }
    }
    let trace: f64 = (0..k).map(|i| g[i * k + i]).sum();
    if trace == 0.0 {
        return f64::NAN;
    }
    let mut x = vec![1.0 / (k as f64).sqrt(); k];
    let mut lambda = 0.0;
    for _ in 0..200 {
        let y: Vec<f64> = (0..k)
            .map(|i| (0..k).map(|j| g[i * k + j] * x[j]).sum())
            .collect();
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm == 0.0 {
            break;
        }
        let next: Vec<f64> = y.iter().map(|v| v / norm).collect();
        let converged = next.iter().zip(&x).map(|(a, b)| (a - b).abs()).sum::<f64>() < 1e-12;
        x = next;
        lambda = norm;
        if converged {
            break;
        }
    }
    lambda / trace
}

/// Contextuality of every layer over the first `n_sequences` of `sequences` (row-major,
/// `seq_len` ids each): self-similarity and explained variance of the word ids in `track` (up to
/// `per_word` occurrences each), intra-sentence similarity of every sequence, and anisotropy
/// from `pairs` random token pairs (Ethayarajh 2019), each beside its chance level: anisotropy
/// for self-similarity (the paper's adjustment), and for intra-sentence similarity and MEV an
/// empirical null, the same statistic on bags of random tokens of the same sizes. Word-level
/// statistics use words with at least [`MIN_CONTEXTS`] occurrences. Only positions `model`
/// gives a vector count ([`crate::layered`]: a whole-word model's special tokens and padding do
/// not, nor a word a subword model cannot read); how the layers are read (causal, padding) is
/// the model's.
#[allow(clippy::too_many_arguments)]
pub fn contextuality(
    model: &dyn crate::layered::Layered,
    sequences: &[u32],
    seq_len: usize,
    n_sequences: usize,
    track: &[u32],
    per_word: usize,
    pairs: usize,
    seed: u64,
) -> Vec<LayerContextuality> {
    let n_layers = model.n_layers();
    let d = model.width();
    let tracked: std::collections::HashMap<u32, usize> =
        track.iter().enumerate().map(|(i, &w)| (w, i)).collect();
    // occurrences[layer][word] = vectors
    let mut occ: Vec<Vec<Vec<Vec<f32>>>> = vec![vec![Vec::new(); track.len()]; n_layers];
    let mut intra = vec![(0f64, 0usize); n_layers];
    let mut intra_values: Vec<Vec<f64>> = vec![Vec::new(); n_layers];
    // A reservoir of token vectors per layer for anisotropy (same tokens in every layer).
    // Large enough to draw the null's bags (one sequence's tokens) without replacement.
    let reservoir_size = ((2.0 * pairs as f64).sqrt().ceil() as usize).max(4 * seq_len);
    // The intra-sentence null keeps each sequence's position profile: for a sequence whose
    // words sit at positions P, a bag of one token per p in P, each from the tokens seen at
    // position p in other sequences (a reservoir per position). Position is half of a layer-0
    // vector; bags with random positions would not be a null for sequences of distinct ones.
    const PER_POSITION: usize = 64;
    let mut at_position: Vec<Vec<Vec<Vec<f32>>>> = vec![vec![Vec::new(); seq_len]; n_layers];
    let mut seen_at = vec![0usize; seq_len];
    let mut bag_positions: Vec<Vec<usize>> = Vec::new();
    let mut reservoir: Vec<Vec<Vec<f32>>> = vec![Vec::new(); n_layers];
    let mut rng = seed | 1;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut seen_tokens = 0u64;
    let n_seq = n_sequences.min(sequences.len() / seq_len);
    let batch = 32;
    for start in (0..n_seq).step_by(batch) {
        let end = (start + batch).min(n_seq);
        let b = end - start;
        let states = model.word_states(&sequences[start * seq_len..end * seq_len], seq_len);
        let hidden = &states.layers;
        for s in 0..b {
            let ids = &sequences[(start + s) * seq_len..(start + s + 1) * seq_len];
            let words: Vec<usize> = (0..seq_len)
                .filter(|&p| states.present[s * seq_len + p])
                .collect();
            // Which reservoir slots this sequence's tokens take (the same in every layer).
            let mut slots = Vec::new();
            for &p in &words {
                seen_tokens += 1;
                if reservoir[0].len() + slots.len() < reservoir_size {
                    slots.push((p, None));
                } else {
                    let r = next() % seen_tokens;
                    if (r as usize) < reservoir_size {
                        slots.push((p, Some(r as usize)));
                    }
                }
            }
            // Which per-position reservoir slots this sequence's tokens take (same in every layer).
            let mut position_slots = Vec::new();
            for &p in &words {
                seen_at[p] += 1;
                if seen_at[p] <= PER_POSITION {
                    position_slots.push((p, None));
                } else {
                    let r = (next() % seen_at[p] as u64) as usize;
                    if r < PER_POSITION {
                        position_slots.push((p, Some(r)));
                    }
                }
            }
            for (l, h) in hidden.iter().enumerate() {
                let vec_at = |p: usize| &h[((s * seq_len) + p) * d..((s * seq_len) + p + 1) * d];
                for &(p, slot) in &position_slots {
                    match slot {
                        None => at_position[l][p].push(vec_at(p).to_vec()),
                        Some(r) => at_position[l][p][r] = vec_at(p).to_vec(),
                    }
                }
                if words.len() >= 2 {
                    let bag: Vec<&[f32]> = words.iter().map(|&p| vec_at(p)).collect();
                    let value = mean_cosine_to_mean(&bag);
                    intra[l].0 += value;
                    intra[l].1 += 1;
                    intra_values[l].push(value);
                    if l == 0 {
                        bag_positions.push(words.clone());
                    }
                }
                for &p in &words {
                    if let Some(&i) = tracked.get(&ids[p]) {
                        if occ[l][i].len() < per_word {
                            occ[l][i].push(vec_at(p).to_vec());
                        }
                    }
                }
                for &(p, slot) in &slots {
                    match slot {
                        None => reservoir[l].push(vec_at(p).to_vec()),
                        Some(r) => reservoir[l][r] = vec_at(p).to_vec(),
                    }
                }
            }
        }
    }
    // The nulls draw bags from the reservoir of random tokens: the same token indices in every
    // layer, so layers are compared on the same draws.
    let mut draw = crate::inference::SplitMix64::new(seed ^ 0x6E75_6C6C);
    // (position, slot) per token of each null bag.
    let intra_bags: Vec<Vec<(usize, usize)>> = bag_positions
        .iter()
        .map(|ps| {
            ps.iter()
                .map(|&p| {
                    (
                        p,
                        crate::inference::index(&mut draw, at_position[0][p].len()),
                    )
                })
                .collect()
        })
        .collect();
    let mut bag_of = |size: usize, n: usize| -> Vec<usize> {
        // Floyd's algorithm: `size` distinct indices below n.
        let mut picked = std::collections::BTreeSet::new();
        for j in n - size.min(n)..n {
            let t = crate::inference::index(&mut draw, j + 1);
            if !picked.insert(t) {
                picked.insert(j);
            }
        }
        picked.into_iter().collect()
    };
    let n_res = reservoir[0].len();
    let word_sizes: Vec<usize> = occ[0]
        .iter()
        .map(|v| v.len())
        .filter(|&k| k >= MIN_CONTEXTS)
        .collect();
    let mev_bags: Vec<Vec<usize>> = word_sizes.iter().map(|&k| bag_of(k, n_res)).collect();
    (0..n_layers)
        .map(|l| {
            let words: Vec<&Vec<Vec<f32>>> =
                occ[l].iter().filter(|v| v.len() >= MIN_CONTEXTS).collect();
            let mean_over = |f: &dyn Fn(&[&[f32]]) -> f64| {
                words
                    .iter()
                    .map(|v| f(&v.iter().map(|x| x.as_slice()).collect::<Vec<_>>()))
                    .sum::<f64>()
                    / words.len().max(1) as f64
            };
            let self_sims: Vec<f64> = words
                .iter()
                .map(|v| mean_pairwise_cosine(&v.iter().map(|x| x.as_slice()).collect::<Vec<_>>()))
                .collect();
            let self_sim = self_sims.iter().sum::<f64>() / words.len().max(1) as f64;
            let mev = mean_over(&|v| first_component_share_centred(v));
            let res: Vec<&[f32]> = reservoir[l].iter().map(|x| x.as_slice()).collect();
            let token_cosines = pairwise_cosines(&res);
            // The same sum in the same order as mean_pairwise_cosine.
            let aniso = mean_pairwise_cosine_of(&token_cosines);
            let over_bags = |bags: &[Vec<usize>], f: &dyn Fn(&[&[f32]]) -> f64| {
                let values: Vec<f64> = bags
                    .iter()
                    .map(|b| f(&b.iter().map(|&i| res[i]).collect::<Vec<_>>()))
                    .filter(|v| v.is_finite())
                    .collect();
                values.iter().sum::<f64>() / values.len().max(1) as f64
            };
            let null_values: Vec<f64> = intra_bags
                .iter()
                .map(|bag| {
                    let v: Vec<&[f32]> = bag
                        .iter()
                        .map(|&(p, i)| at_position[l][p][i].as_slice())
                        .collect();
                    mean_cosine_to_mean(&v)
                })
                .collect();
            let intra_null = {
                let values: Vec<f64> = null_values
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .collect();
                values.iter().sum::<f64>() / values.len().max(1) as f64
            };
            let mev_null = over_bags(&mev_bags, &first_component_share_centred);
            let intra_s = intra[l].0 / intra[l].1.max(1) as f64;
            LayerContextuality {
                layer: l,
                self_similarity: self_sim,
                intra_sentence: intra_s,
                intra_sentence_null: intra_null,
                anisotropy: aniso,
                max_explainable_variance: mev,
                max_explainable_variance_null: mev_null,
                self_similarity_adjusted: self_sim - aniso,
                intra_sentence_excess: intra_s - intra_null,
                max_explainable_variance_excess: mev - mev_null,
                words: words.len(),
                items: ContextualityItems {
                    self_similarity: self_sims,
                    intra_sentence: intra_values[l]
                        .iter()
                        .zip(&null_values)
                        .filter(|(a, b)| a.is_finite() && b.is_finite())
                        .map(|(a, b)| (*a, *b))
                        .collect(),
                    tokens: res.len(),
                    token_cosines,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod interval_tests {
    use super::*;

    fn layer(items: ContextualityItems) -> LayerContextuality {
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        let self_sim = mean(&items.self_similarity);
        let aniso = mean(&items.token_cosines);
        let intra = mean(&items.intra_sentence.iter().map(|p| p.0).collect::<Vec<_>>());
        let null = mean(&items.intra_sentence.iter().map(|p| p.1).collect::<Vec<_>>());
        LayerContextuality {
            layer: 1,
            self_similarity: self_sim,
            intra_sentence: intra,
            intra_sentence_null: null,
            anisotropy: aniso,
            max_explainable_variance: f64::NAN,
            max_explainable_variance_null: f64::NAN,
            self_similarity_adjusted: self_sim - aniso,
            intra_sentence_excess: intra - null,
            max_explainable_variance_excess: f64::NAN,
            words: items.self_similarity.len(),
            items,
        }
    }

    /// The upper triangle of `n` tokens' cosines from `cos(i, j)`.
    fn triangle(n: usize, cos: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| cos(i, j))
            .collect()
    }

    #[test]
    fn intervals_have_the_known_spread_of_their_items() {
        // 100 words of self-similarity 0 or 1: mean 0.5, standard error 0.05, so the 95%
        // interval is about 0.5 +- 0.098. 400 tokens in two halves, cosine 1 within the first
        // half and 0 elsewhere: anisotropy about p^2 for the first half's share p, standard
        // error about 2 * 0.5 * sqrt(0.25 / 400) = 0.025. Each sequence's intra-sentence value
        // spreads, but its null is always 0.1 below it: the paired excess is exactly 0.1.
        let n_tok = 400;
        let items = ContextualityItems {
            self_similarity: (0..100).map(|i| (i % 2) as f64).collect(),
            intra_sentence: (0..50)
                .map(|i| (0.2 + 0.01 * i as f64, 0.1 + 0.01 * i as f64))
                .collect(),
            tokens: n_tok,
            token_cosines: triangle(n_tok, |i, j| f64::from(i < n_tok / 2 && j < n_tok / 2)),
        };
        let l = layer(items);
        let iv = l.intervals(4000, 3);
        assert_eq!(iv.self_similarity.estimate, 0.5);
        let half = |i: crate::inference::Interval| (i.hi - i.lo) / 2.0;
        assert!((half(iv.self_similarity) - 0.098).abs() < 0.012, "{iv:?}");
        let a = l.anisotropy;
        assert!((a - 199.0 / 798.0).abs() < 1e-12); // (200 choose 2) / (400 choose 2)
        assert!((half(iv.anisotropy) - 0.049).abs() < 0.008, "{iv:?}");
        assert!(iv.anisotropy.lo < a && a < iv.anisotropy.hi);
        // Words and tokens drawn independently: the variances add.
        let both = (0.05f64.powi(2) + 0.025f64.powi(2)).sqrt() * 1.96;
        assert!(
            (half(iv.self_similarity_adjusted) - both).abs() < 0.015,
            "{iv:?}"
        );
        assert!((iv.intra_sentence_excess.lo - 0.1).abs() < 1e-12);
        assert!((iv.intra_sentence_excess.hi - 0.1).abs() < 1e-12);
        // The sequences' own values (0.20 to 0.69 by 0.01) spread: standard error
        // 0.01 * sqrt((50^2 - 1) / 12) / sqrt(50) = 0.0204.
        assert!((half(iv.intra_sentence) - 0.040).abs() < 0.006, "{iv:?}");
    }

    #[test]
    fn a_pair_of_two_draws_of_one_token_is_not_a_pair() {
        // Every distinct pair has cosine 0.3: any resample of two or more distinct tokens gives
        // 0.3 exactly, which a draw counting a token paired with itself (cosine 1) would not.
        let items = ContextualityItems {
            self_similarity: vec![0.5; 10],
            intra_sentence: vec![(0.4, 0.2); 10],
            tokens: 30,
            token_cosines: vec![0.3; 30 * 29 / 2],
        };
        let iv = layer(items).intervals(200, 5);
        assert!((iv.anisotropy.lo - 0.3).abs() < 1e-12 && (iv.anisotropy.hi - 0.3).abs() < 1e-12);
        assert!((iv.self_similarity_adjusted.lo - 0.2).abs() < 1e-12);
        assert!((iv.intra_sentence_excess.hi - 0.2).abs() < 1e-12);
        // No tracked word, one token, no sequence: NaN, not a certain 0.
        let none = layer(ContextualityItems {
            self_similarity: vec![],
            intra_sentence: vec![],
            tokens: 1,
            token_cosines: vec![],
        });
        let iv = none.intervals(50, 1);
        for i in [
            iv.self_similarity,
            iv.anisotropy,
            iv.self_similarity_adjusted,
            iv.intra_sentence,
            iv.intra_sentence_excess,
        ] {
            assert!(i.lo.is_nan() && i.hi.is_nan(), "{iv:?}");
        }
    }
}
