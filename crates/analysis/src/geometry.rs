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

/// Linear CKA (Kornblith et al. 2019) between two `n x k` row-major matrices whose rows are the
/// same n items (here: the input dimensions) and whose columns are features (the head's output
/// dimensions): ||X^T Y||_F^2 / (||X^T X||_F ||Y^T Y||_F) after centring each column. 1 when Y is
/// X up to rotation and scale: it compares the subspaces the heads project onto, which the plain
/// cosine of the flattened matrices does not.
pub fn linear_cka(x: &[f32], y: &[f32], n: usize, k: usize) -> f64 {
    let centre = |m: &[f32]| -> Vec<f64> {
        let mut out: Vec<f64> = m.iter().map(|&v| v as f64).collect();
        for c in 0..k {
            let mean = (0..n).map(|r| out[r * k + c]).sum::<f64>() / n as f64;
            (0..n).for_each(|r| out[r * k + c] -= mean);
        }
        out
    };
    let (x, y) = (centre(x), centre(y));
    // Frobenius norm squared of A^T B (k x k).
    let cross = |a: &[f64], b: &[f64]| -> f64 {
        let mut total = 0.0;
        for i in 0..k {
            for j in 0..k {
                let v: f64 = (0..n).map(|r| a[r * k + i] * b[r * k + j]).sum();
                total += v * v;
            }
        }
        total
    };
    let denom = (cross(&x, &x) * cross(&y, &y)).sqrt();
    if denom == 0.0 {
        0.0
    } else {
        cross(&x, &y) / denom
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
    /// Linear CKA between the heads' projections (subspace similarity).
    pub cka_q_k: f64,
    pub cka_q_v: f64,
    pub cka_k_v: f64,
    /// Symmetric share of W_Q^h (W_K^h)^T.
    pub qk_symmetric_share: f64,
}

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
                cka_q_k: linear_cka(&qh, &kh, d_in, att.d_k),
                cka_q_v: linear_cka(&qh, &vh, d_in, att.d_k),
                cka_k_v: linear_cka(&kh, &vh, d_in, att.d_k),
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
    let energy = |rows: &mut dyn Iterator<Item = &[f32]>| {
        rows.map(|r| r.iter().map(|x| (*x as f64).powi(2)).sum::<f64>())
            .sum::<f64>()
    };
    let total = energy(&mut rows.iter().copied());
    let spread = energy(&mut centred.iter().map(|r| r.as_slice()));
    if spread <= 1e-10 * total {
        return 1.0;
    }
    let refs: Vec<&[f32]> = centred.iter().map(|r| r.as_slice()).collect();
    first_component_share(&refs)
}

/// Mean cosine between each vector of a bag and the bag's mean (the intra-sentence statistic).
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
    vectors.iter().map(|v| cosine(v, &mean)).sum::<f64>() / vectors.len() as f64
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
/// statistics use words with at least [`MIN_CONTEXTS`] occurrences. Ids at or above `n_words`
/// (special tokens) are left out. `readout` says how the layers are read (causal for a CLM).
#[allow(clippy::too_many_arguments)]
pub fn contextuality(
    model: &Transformer,
    sequences: &[u32],
    seq_len: usize,
    n_sequences: usize,
    n_words: u32,
    track: &[u32],
    per_word: usize,
    pairs: usize,
    seed: u64,
    readout: crate::representations::Readout,
    device: &burn::tensor::Device,
) -> Vec<LayerContextuality> {
    let n_layers = model.blocks.len() + 1;
    let d = model.token_embedding_matrix().dims()[1];
    let tracked: std::collections::HashMap<u32, usize> =
        track.iter().enumerate().map(|(i, &w)| (w, i)).collect();
    // occurrences[layer][word] = vectors
    let mut occ: Vec<Vec<Vec<Vec<f32>>>> = vec![vec![Vec::new(); track.len()]; n_layers];
    let mut intra = vec![(0f64, 0usize); n_layers];
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
        let hidden = crate::representations::hidden_states(
            model,
            &sequences[start * seq_len..end * seq_len],
            seq_len,
            readout,
            device,
        );
        for s in 0..b {
            let ids = &sequences[(start + s) * seq_len..(start + s + 1) * seq_len];
            let words: Vec<usize> = (0..seq_len).filter(|&p| ids[p] < n_words).collect();
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
                    intra[l].0 += mean_cosine_to_mean(&bag);
                    intra[l].1 += 1;
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
                .map(|&p| (p, draw.below(at_position[0][p].len())))
                .collect()
        })
        .collect();
    let mut bag_of = |size: usize, n: usize| -> Vec<usize> {
        // Floyd's algorithm: `size` distinct indices below n.
        let mut picked = std::collections::BTreeSet::new();
        for j in n - size.min(n)..n {
            let t = draw.below(j + 1);
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
            let self_sim = mean_over(&|v| mean_pairwise_cosine(v));
            let mev = mean_over(&|v| first_component_share_centred(v));
            let res: Vec<&[f32]> = reservoir[l].iter().map(|x| x.as_slice()).collect();
            let aniso = mean_pairwise_cosine(&res);
            let over_bags = |bags: &[Vec<usize>], f: &dyn Fn(&[&[f32]]) -> f64| {
                let values: Vec<f64> = bags
                    .iter()
                    .map(|b| f(&b.iter().map(|&i| res[i]).collect::<Vec<_>>()))
                    .filter(|v| v.is_finite())
                    .collect();
                values.iter().sum::<f64>() / values.len().max(1) as f64
            };
            let intra_null = {
                let values: Vec<f64> = intra_bags
                    .iter()
                    .map(|bag| {
                        let v: Vec<&[f32]> = bag
                            .iter()
                            .map(|&(p, i)| at_position[l][p][i].as_slice())
                            .collect();
                        mean_cosine_to_mean(&v)
                    })
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
            }
        })
        .collect()
}
