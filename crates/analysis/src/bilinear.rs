//! An attention head read as the bilinear form it applies: the score of query token i for key
//! token j is `x_i W_Q^h (W_K^h)^T x_j^T / sqrt(d_k)`, so what a head does with two tokens is
//! `M^h = W_Q^h (W_K^h)^T` (`d_model x d_model`), not W_Q and W_K apart. Cosine or CKA between
//! W_Q and W_K changes when the same attention is written as `W_Q A`, `W_K A^{-T}`; the
//! measures here do not, because they read M.
//!
//! * [`symmetry_score`]: `||M_s||_F^2 / ||M||_F^2` with `M_s = (M + M^T)/2`, as Saponati et al.
//!   (2025, github.com/matteosaponati/attention-geometry, `utils/scores.py`) compute it: 1 for a
//!   symmetric M, 0 for an antisymmetric one, about 1/2 for a random one. Their paper's
//!   Definition 3.1 is the affine `2 s - 1` (= `tr(M^2) / ||M||_F^2`, in [-1, 1]). The older
//!   `qk_symmetric_share` of [`crate::geometry`] is `sqrt(s)` (about 0.71 for a random M). They find
//!   bidirectional (encoder) training makes M more symmetric, causal training more
//!   directional.
//! * [`directionality_score`]: their column-versus-row score: row and column L2 norms of M, each
//!   set's excess over its mean + `num_std` (sample) standard deviations summed, then
//!   `(column excess - row excess) / (column excess + row excess)` (0 when neither exceeds):
//!   positive when a few key directions (columns) dominate, negative for query directions.
//! * [`identity_alignment`]: the cosine between M and the identity, `tr(M) / (||M||_F sqrt(d))`:
//!   1 for `M = a I` (a > 0), about 0 for a random M. A head's form has rank at most d_k, and
//!   then the cosine is at most `sqrt(d_k / d)` (0.29 for MiniLM's 32 of 384, 0.5 for our 32
//!   of 128): compare heads with heads and layers with layers, never across. Trockman & Kolter (2023, "Mimetic
//!   initialization of self-attention layers") see `W_Q W_K^T` of trained models close to a
//!   positive multiple of the identity plus noise: tokens attend to tokens like themselves.
//! * [`pair_scores`]: the (symmetrised) score two words' embeddings get from M, the quantity
//!   that may or may not be "some kind of similarity"; its Spearman correlation with human
//!   judgments and with the embeddings' cosine is read in the experiments.
//!
//! Each is read beside the same quantity for matrices of the same shapes drawn as the model
//! was initialised ([`random_reference`]) and for Q of one head against K of the others
//! ([`cross_head_null`]).

use crate::geometry::LayerQkv;
use crate::inference::SplitMix64;

/// `Q[:, qc] K[:, kc]^T`, `d_in x d_in` row-major, from `[d_in, d_out]` input-major matrices
/// and the column ranges of one head each (or all columns for the layer's whole form).
pub fn form(
    q: &[f32],
    k: &[f32],
    d_in: usize,
    d_out: usize,
    qc: std::ops::Range<usize>,
    kc: std::ops::Range<usize>,
) -> Vec<f64> {
    assert_eq!(qc.len(), kc.len(), "a query and a key of the same width");
    let mut m = vec![0f64; d_in * d_in];
    for i in 0..d_in {
        let qi = &q[i * d_out..(i + 1) * d_out];
        for j in 0..d_in {
            let kj = &k[j * d_out..(j + 1) * d_out];
            m[i * d_in + j] = qc
                .clone()
                .zip(kc.clone())
                .map(|(a, b)| qi[a] as f64 * kj[b] as f64)
                .sum();
        }
    }
    m
}

/// `||M_s||_F^2 / ||M||_F^2` of a row-major `n x n` matrix (NaN for M = 0).
pub fn symmetry_score(m: &[f64], n: usize) -> f64 {
    let (sym, all) = crate::geometry::symmetric_part_and_total(m, n);
    sym / all
}

/// Saponati et al.'s directionality score of a row-major `n x n` matrix (see the module doc).
pub fn directionality_score(m: &[f64], n: usize, num_std: f64) -> f64 {
    assert_eq!(m.len(), n * n);
    let rows: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| m[i * n + j].powi(2)).sum::<f64>().sqrt())
        .collect();
    let cols: Vec<f64> = (0..n)
        .map(|j| (0..n).map(|i| m[i * n + j].powi(2)).sum::<f64>().sqrt())
        .collect();
    let excess = |norms: &[f64]| {
        let mean = norms.iter().sum::<f64>() / n as f64;
        // torch.std: the sample (n - 1) standard deviation.
        let sd = (norms.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt();
        let t = mean + num_std * sd;
        norms.iter().filter(|&&x| x > t).map(|x| x - t).sum::<f64>()
    };
    let (r, c) = (excess(&rows), excess(&cols));
    if r + c == 0.0 {
        0.0
    } else {
        (c - r) / (c + r)
    }
}

/// `tr(M) / (||M||_F sqrt(n))` of a row-major `n x n` matrix (NaN for M = 0).
pub fn identity_alignment(m: &[f64], n: usize) -> f64 {
    assert_eq!(m.len(), n * n);
    let trace: f64 = (0..n).map(|i| m[i * n + i]).sum();
    let norm = m.iter().map(|x| x * x).sum::<f64>().sqrt();
    trace / (norm * (n as f64).sqrt())
}

/// The three scores of one form.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct FormScores {
    pub symmetry: f64,
    pub directionality: f64,
    pub identity_alignment: f64,
}

impl FormScores {
    pub fn of(m: &[f64], n: usize) -> FormScores {
        FormScores {
            symmetry: symmetry_score(m, n),
            directionality: directionality_score(m, n, 2.0),
            identity_alignment: identity_alignment(m, n),
        }
    }

    fn mean(all: &[FormScores]) -> FormScores {
        let k = all.len() as f64;
        FormScores {
            symmetry: all.iter().map(|s| s.symmetry).sum::<f64>() / k,
            directionality: all.iter().map(|s| s.directionality).sum::<f64>() / k,
            identity_alignment: all.iter().map(|s| s.identity_alignment).sum::<f64>() / k,
        }
    }
}

/// One layer's scores: per head (`M^h`), and of the whole layer's `W_Q W_K^T` (the sum over
/// heads, which is what Saponati et al. score for pretrained models).
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerForms {
    pub heads: Vec<FormScores>,
    pub layer: FormScores,
}

pub fn layer_forms(w: &LayerQkv) -> LayerForms {
    let (d_in, d_out, d_k) = (w.d_in, w.d_out, w.d_k);
    let heads = (0..w.n_heads)
        .map(|h| {
            let cols = h * d_k..(h + 1) * d_k;
            FormScores::of(&form(&w.q, &w.k, d_in, d_out, cols.clone(), cols), d_in)
        })
        .collect();
    let all = 0..d_out;
    LayerForms {
        heads,
        layer: FormScores::of(&form(&w.q, &w.k, d_in, d_out, all.clone(), all), d_in),
    }
}

/// Per head h, the mean scores of `Q^h (K^{h'})^T` over the other heads h': what a query and a
/// key that were never trained together give (NaN scores with a single head).
pub fn cross_head_null(w: &LayerQkv) -> Vec<FormScores> {
    let (d_in, d_out, d_k) = (w.d_in, w.d_out, w.d_k);
    (0..w.n_heads)
        .map(|h| {
            let others: Vec<FormScores> = (0..w.n_heads)
                .filter(|&g| g != h)
                .map(|g| {
                    FormScores::of(
                        &form(
                            &w.q,
                            &w.k,
                            d_in,
                            d_out,
                            h * d_k..(h + 1) * d_k,
                            g * d_k..(g + 1) * d_k,
                        ),
                        d_in,
                    )
                })
                .collect();
            FormScores::mean(&others)
        })
        .collect()
}

/// The mean scores of a head, and of a layer, whose W_Q and W_K are drawn independently from
/// N(0, `std`^2) with the given shapes, over `draws` draws (seeded): the value at
/// initialisation (BERT and GPT-2 draw both at `initializer_range`, 0.02). The scores do not
/// depend on `std` (they are scale-free); it is kept so the reference says what it draws.
pub fn random_reference(
    d_in: usize,
    d_out: usize,
    n_heads: usize,
    std: f64,
    draws: usize,
    seed: u64,
) -> (FormScores, FormScores) {
    let mut rng = SplitMix64::new(seed ^ 0x6269_6C69);
    let mut normal = move || {
        let u = 1.0 - rng.next_f32() as f64;
        let v = rng.next_f32() as f64;
        (std * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    };
    let (mut heads, mut layers) = (Vec::new(), Vec::new());
    for _ in 0..draws.max(1) {
        let q: Vec<f32> = (0..d_in * d_out).map(|_| normal()).collect();
        let k: Vec<f32> = (0..d_in * d_out).map(|_| normal()).collect();
        let w = LayerQkv {
            v: q.clone(),
            q,
            k,
            d_in,
            d_out,
            n_heads,
            d_k: d_out / n_heads,
        };
        let f = layer_forms(&w);
        heads.extend(f.heads);
        layers.push(f.layer);
    }
    (FormScores::mean(&heads), FormScores::mean(&layers))
}

/// For each pair (i, j) of rows of `e` (`n x d`), the symmetrised score
/// `(e_i M e_j + e_j M e_i) / 2` under the `d x d` form `m`.
pub fn pair_scores(e: &[f32], d: usize, m: &[f64], pairs: &[(usize, usize)]) -> Vec<f64> {
    assert_eq!(m.len(), d * d);
    let bilinear = |a: &[f32], b: &[f32]| -> f64 {
        (0..d)
            .map(|r| {
                let mr = &m[r * d..(r + 1) * d];
                a[r] as f64 * mr.iter().zip(b).map(|(x, y)| x * *y as f64).sum::<f64>()
            })
            .sum()
    };
    pairs
        .iter()
        .map(|&(i, j)| {
            let (a, b) = (&e[i * d..(i + 1) * d], &e[j * d..(j + 1) * d]);
            0.5 * (bilinear(a, b) + bilinear(b, a))
        })
        .collect()
}

/// [`pair_scores`] under head `head`'s form `Q^h (K^h)^T` of `w` (all heads, the layer's form,
/// when `None`), computed through the projections `e Q^h` and `e K^h` (`n x d_k` each) instead of
/// the `d x d` form: the same numbers at a fraction of the cost.
pub fn head_pair_scores(
    e: &[f32],
    w: &LayerQkv,
    head: Option<usize>,
    pairs: &[(usize, usize)],
) -> Vec<f64> {
    let d = w.d_in;
    let cols = head.map_or(0..w.d_out, |h| h * w.d_k..(h + 1) * w.d_k);
    let project = |row: &[f32], m: &[f32]| -> Vec<f64> {
        cols.clone()
            .map(|c| {
                (0..d)
                    .map(|i| row[i] as f64 * m[i * w.d_out + c] as f64)
                    .sum()
            })
            .collect()
    };
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    // Each word projected once.
    let mut proj: std::collections::HashMap<usize, (Vec<f64>, Vec<f64>)> = Default::default();
    for &(i, j) in pairs {
        for r in [i, j] {
            proj.entry(r).or_insert_with(|| {
                let row = &e[r * d..(r + 1) * d];
                (project(row, &w.q), project(row, &w.k))
            });
        }
    }
    pairs
        .iter()
        .map(|&(i, j)| {
            let ((qi, ki), (qj, kj)) = (&proj[&i], &proj[&j]);
            0.5 * (dot(qi, kj) + dot(qj, ki))
        })
        .collect()
}

/// A similarity benchmark's pairs found in a word table, as the similarity scores match them
/// ([`crate::EvalVocab`]): the rows, the human judgments and the rows' cosines.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchmarkPairs {
    pub rows: Vec<(usize, usize)>,
    pub human: Vec<f64>,
    pub cosine: Vec<f64>,
    /// Each found pair's index in the benchmark's file order.
    pub positions: Vec<usize>,
    /// The benchmark's pair count, found or not.
    pub total: usize,
}

impl BenchmarkPairs {
    /// `set`'s pairs with both words in `vocab`; `None` when fewer than 3 (no rank correlation
    /// to speak of).
    pub fn find(
        table: &word2vec::WordVectors,
        vocab: &crate::EvalVocab,
        set: &crate::SimilaritySet,
    ) -> Option<BenchmarkPairs> {
        let (mut rows, mut human, mut cosine) = (Vec::new(), Vec::new(), Vec::new());
        let mut positions = Vec::new();
        for (k, (a, b, s)) in set.pairs.iter().enumerate() {
            if let (Some(i), Some(j)) = (vocab.row(a), vocab.row(b)) {
                let (i, j) = (i as usize, j as usize);
                rows.push((i, j));
                human.push(*s);
                cosine.push(crate::geometry::cosine(table.row(i), table.row(j)));
                positions.push(k);
            }
        }
        (rows.len() >= 3).then_some(BenchmarkPairs {
            rows,
            human,
            cosine,
            positions,
            total: set.pairs.len(),
        })
    }

    /// `scores` (one per found pair) in the benchmark's file order, `None` for the pairs not
    /// found: per-item values that intervals over items and seeds resample.
    pub fn aligned(&self, scores: &[f64]) -> Vec<Option<f64>> {
        assert_eq!(scores.len(), self.rows.len());
        let mut out = vec![None; self.total];
        for (&k, &x) in self.positions.iter().zip(scores) {
            out[k] = Some(x);
        }
        out
    }

    /// Spearman's rho of `scores` (one per pair) with the human judgments and with the cosines.
    pub fn spearman(&self, scores: &[f64]) -> (f64, f64) {
        (
            crate::stats::spearman(&self.human, scores),
            crate::stats::spearman(&self.cosine, scores),
        )
    }

    /// Spearman's rho of `scores` (one per pair) with the human judgments and its 95% interval
    /// over `resamples` resamples of the benchmark's words (seeded): pairs that share a word
    /// are not independent draws, so they resample through their two words, with the
    /// correction for crossed units of [`crate::inference::item_and_seed_interval`] (one
    /// table, so no seed term): a normal interval, cut to rho's range [-1, 1] (before
    /// 2026-11-28, a percentile interval over pairs resampled as if independent).
    pub fn human_interval(
        &self,
        scores: &[f64],
        resamples: usize,
        seed: u64,
    ) -> crate::inference::Interval {
        self.rho_interval(scores, None, 1.0, resamples, seed)
    }

    /// The paired difference of two scores' Spearman rho with the human judgments,
    /// `rho(human, a) - rho(human, b)` (one score per pair each, on the same pairs), with its
    /// 95% interval over `resamples` resamples of the benchmark's words (seeded), as
    /// [`BenchmarkPairs::human_interval`]: both rhos read each resample's pairs, so what the two
    /// scores share on those pairs cancels (two intervals that overlap can still hold a
    /// difference that excludes zero). Cut to the difference's range [-2, 2]; an undefined
    /// difference (a constant score) stays NaN.
    pub fn human_difference_interval(
        &self,
        a: &[f64],
        b: &[f64],
        resamples: usize,
        seed: u64,
    ) -> crate::inference::Interval {
        assert_eq!(a.len(), self.rows.len());
        assert_eq!(b.len(), self.rows.len());
        self.rho_interval(a, Some(b), 2.0, resamples, seed)
    }

    /// What [`BenchmarkPairs::human_interval`] and [`BenchmarkPairs::human_difference_interval`]
    /// share: the pairs' words as the resampled units, `rho(human, a)` (minus `rho(human, b)`
    /// when `b` is given) on each resample, the bounds cut to `[-range, range]`. `f64::clamp`
    /// keeps a NaN a NaN, so an undefined bound stays undefined.
    fn rho_interval(
        &self,
        a: &[f64],
        b: Option<&[f64]>,
        range: f64,
        resamples: usize,
        seed: u64,
    ) -> crate::inference::Interval {
        use crate::inference::RankedPairs;
        let (a, b) = (
            (self.human.clone(), a.to_vec()),
            b.map(|b| (self.human.clone(), b.to_vec())),
        );
        let words: Vec<Vec<usize>> = self.rows.iter().map(|&(i, j)| vec![i, j]).collect();
        let (a, b) = (
            [RankedPairs::new(&a)],
            b.as_ref().map(|b| [RankedPairs::new(b)]),
        );
        let iv = crate::inference::item_and_seed_interval(
            &a,
            b.as_ref().map(|x| x.as_slice()),
            self.rows.len(),
            Some(&words),
            |r: &RankedPairs, items: &[usize]| r.spearman_at(items),
            resamples,
            seed,
        );
        crate::inference::Interval {
            lo: iv.lo.clamp(-range, range),
            hi: iv.hi.clamp(-range, range),
            ..iv
        }
    }

    /// The plain dot product of each pair's rows of `e` (`n x d`): the score of M = I.
    pub fn dot(&self, e: &[f32], d: usize) -> Vec<f64> {
        self.rows
            .iter()
            .map(|&(i, j)| {
                let (a, b) = (&e[i * d..(i + 1) * d], &e[j * d..(j + 1) * d]);
                a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
            })
            .collect()
    }
}

/// A similarity benchmark read through attention forms: the Spearman correlation of the plain
/// dot product `e_i . e_j` (M = I) with the human judgments and with the rows' cosine, and the
/// same for every head's form and every layer's whole form ([`head_pair_scores`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PairForms {
    /// Pairs with both words in the table.
    pub pairs: usize,
    pub dot_human: f64,
    pub dot_cosine: f64,
    /// (layer, 1-based; head, `None` for the layer's whole form; Spearman with the human
    /// judgments; Spearman with the rows' cosine).
    pub forms: Vec<(usize, Option<usize>, f64, f64)>,
    /// Per pair, in the benchmark's file order (`None`: not found; [`BenchmarkPairs::aligned`]):
    /// the dot product's scores, and each layer's whole form's.
    pub dot_scores: Vec<Option<f64>>,
    pub layer_scores: Vec<Vec<Option<f64>>>,
}

/// [`PairForms`] of `set` on `table`'s rows under `layers`' forms; `None` when fewer than 3
/// pairs are found ([`BenchmarkPairs::find`]).
pub fn similarity_pair_forms(
    table: &word2vec::WordVectors,
    vocab: &crate::EvalVocab,
    set: &crate::SimilaritySet,
    layers: &[LayerQkv],
) -> Option<PairForms> {
    let p = BenchmarkPairs::find(table, vocab, set)?;
    let (e, d) = (table.data(), table.dim());
    let mut forms = Vec::new();
    let mut layer_scores = Vec::new();
    for (li, l) in layers.iter().enumerate() {
        assert_eq!(l.d_in, d, "a layer's forms read rows of the table's width");
        for head in (0..l.n_heads).map(Some).chain([None]) {
            let scores = head_pair_scores(e, l, head, &p.rows);
            let (human, cosine) = p.spearman(&scores);
            forms.push((li + 1, head, human, cosine));
            if head.is_none() {
                layer_scores.push(p.aligned(&scores));
            }
        }
    }
    let dot = p.dot(e, d);
    let (dot_human, dot_cosine) = p.spearman(&dot);
    Some(PairForms {
        pairs: p.rows.len(),
        dot_human,
        dot_cosine,
        forms,
        dot_scores: p.aligned(&dot),
        layer_scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_rows(rows: &[&[f64]]) -> Vec<f64> {
        rows.iter().flat_map(|r| r.iter().copied()).collect()
    }

    /// Every pair of `words` words, in order: (0, 1), (0, 2), ..., (1, 2), ...
    fn every_pair(words: usize) -> Vec<(usize, usize)> {
        (0..words)
            .flat_map(|i| (i + 1..words).map(move |j| (i, j)))
            .collect()
    }

    /// A benchmark of `rows` with these human judgments, every pair found.
    fn all_found(rows: Vec<(usize, usize)>, human: Vec<f64>) -> BenchmarkPairs {
        let n = rows.len();
        BenchmarkPairs {
            rows,
            human,
            cosine: vec![0.0; n],
            positions: (0..n).collect(),
            total: n,
        }
    }

    #[test]
    fn known_forms_score_as_defined() {
        let sym = from_rows(&[&[1.0, 2.0, 0.0], &[2.0, -1.0, 3.0], &[0.0, 3.0, 5.0]]);
        let anti = from_rows(&[&[0.0, 2.0, -1.0], &[-2.0, 0.0, 3.0], &[1.0, -3.0, 0.0]]);
        assert!((symmetry_score(&sym, 3) - 1.0).abs() < 1e-12);
        assert!(symmetry_score(&anti, 3).abs() < 1e-12);
        // [[1, 1], [0, 0]]: M_s = [[1, .5], [.5, 0]], ||M_s||^2 = 1.5, ||M||^2 = 2.
        assert!((symmetry_score(&[1.0, 1.0, 0.0, 0.0], 2) - 0.75).abs() < 1e-12);
        let eye = from_rows(&[&[2.0, 0.0, 0.0], &[0.0, 2.0, 0.0], &[0.0, 0.0, 2.0]]);
        assert!((identity_alignment(&eye, 3) - 1.0).abs() < 1e-12);
        let neg: Vec<f64> = eye.iter().map(|x| -x).collect();
        assert!((identity_alignment(&neg, 3) + 1.0).abs() < 1e-12);
        // tr = 5, ||M||^2 = 1 + 4 + 4 + 1 + 9 + 9 + 25 = 53.
        assert!((identity_alignment(&sym, 3) - 5.0 / (53f64.sqrt() * 3f64.sqrt())).abs() < 1e-12);
    }

    #[test]
    fn directionality_is_columns_against_rows() {
        // One dominant column among ten: the column excess wins (+1); transposed, the row (-1);
        // symmetric matrices have equal row and column norms (0).
        let n = 10;
        let mut m = vec![0.1f64; n * n];
        for i in 0..n {
            m[i * n + 3] = 5.0;
        }
        assert!((directionality_score(&m, n, 2.0) - 1.0).abs() < 1e-12);
        let t: Vec<f64> = (0..n * n).map(|x| m[(x % n) * n + x / n]).collect();
        assert!((directionality_score(&t, n, 2.0) + 1.0).abs() < 1e-12);
        let s: Vec<f64> = (0..n * n).map(|x| m[x] + t[x]).collect();
        assert_eq!(directionality_score(&s, n, 2.0), 0.0);
        // By hand: a 3x3 with row norms (3, 0, 0) and column norms (1, 2, 2)... rows [1,2,2],
        // [0,0,0], [0,0,0]: rows mean 1, sample sd sqrt(3), threshold 1 + 2 sqrt(3) > 3: no row
        // excess; columns mean 5/3, sd sqrt(1/3), threshold 5/3 + 2/sqrt(3) = 2.82 > 2: none.
        let m = [1.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert_eq!(directionality_score(&m, 3, 2.0), 0.0);
        // With num_std 0: row excess 3 - 1 = 2; column excess (2 - 5/3) * 2 = 2/3.
        let want = (2.0 / 3.0 - 2.0) / (2.0 / 3.0 + 2.0);
        assert!((directionality_score(&m, 3, 0.0) - want).abs() < 1e-12);
    }

    #[test]
    fn forms_of_tied_and_random_heads() {
        // Q = K: every head's form Q^h Q^h^T is symmetric and positive semi-definite.
        let (d_in, d_out, n_heads) = (8, 4, 2);
        let q: Vec<f32> = (0..d_in * d_out)
            .map(|i| ((i * 7 % 11) as f32 - 5.0) / 5.0)
            .collect();
        let w = LayerQkv {
            q: q.clone(),
            k: q.clone(),
            v: q,
            d_in,
            d_out,
            n_heads,
            d_k: d_out / n_heads,
        };
        let f = layer_forms(&w);
        for h in &f.heads {
            assert!((h.symmetry - 1.0).abs() < 1e-12);
            assert!(h.identity_alignment > 0.0);
        }
        assert!((f.layer.symmetry - 1.0).abs() < 1e-12);
        // Cross-head forms of a tied head are not symmetric in general.
        assert!(cross_head_null(&w).iter().all(|s| s.symmetry < 1.0 - 1e-6));
        // Independent Gaussian Q and K: symmetry near 1/2, alignment near 0, whatever the std.
        let (head, layer) = random_reference(64, 64, 4, 0.02, 20, 7);
        assert!((head.symmetry - 0.5).abs() < 0.03, "{head:?}");
        assert!(head.identity_alignment.abs() < 0.05, "{head:?}");
        assert!((layer.symmetry - 0.5).abs() < 0.03, "{layer:?}");
        let (again, _) = random_reference(64, 64, 4, 1.0, 20, 7);
        assert!((again.symmetry - head.symmetry).abs() < 1e-9);
    }

    #[test]
    fn similarity_pairs_through_forms_by_hand() {
        // a = (1, 0), b = (3, 0), c = (0, 1), d = (2, 1); dots of the found pairs (a, b) 3,
        // (a, c) 0, (b, d) 6, (c, d) 1 rank as the human scores do; the pair with an unknown
        // word is left out.
        let words = ["a", "b", "c", "d"].map(String::from).to_vec();
        let table =
            word2vec::WordVectors::new(words, 2, vec![1.0, 0.0, 3.0, 0.0, 0.0, 1.0, 2.0, 1.0]);
        let vocab = crate::EvalVocab::new(&table, 4, false);
        let pairs = [
            ("a", "b", 3.0),
            ("a", "zzz", 5.0),
            ("a", "c", 0.0),
            ("b", "d", 9.0),
            ("c", "d", 1.0),
        ];
        let set = crate::SimilaritySet {
            name: "planted".into(),
            pairs: pairs
                .iter()
                .map(|(a, b, s)| (a.to_string(), b.to_string(), *s))
                .collect(),
        };
        // Head 0: M0 = x x^T (scores x_i x_j: 3, 0, 6, 0); head 1: M1 = -y y^T; the layer's
        // form diag(1, -1) scores 3, 0, 6, -1.
        let w = LayerQkv {
            q: vec![1.0, 0.0, 0.0, 1.0],
            k: vec![1.0, 0.0, 0.0, -1.0],
            v: vec![0.0; 4],
            d_in: 2,
            d_out: 2,
            n_heads: 2,
            d_k: 1,
        };
        let w0 = w.clone();
        let p = similarity_pair_forms(&table, &vocab, &set, &[w]).unwrap();
        assert_eq!(p.pairs, 4);
        assert!((p.dot_human - 1.0).abs() < 1e-12);
        // Cosines 1, 0, 0.894, 0.447 rank (4, 1, 3, 2) against the dots' (3, 1, 4, 2):
        // 1 - 6 * 2 / (4 * 15) = 0.8.
        assert!((p.dot_cosine - 0.8).abs() < 1e-12);
        let at = |head: Option<usize>| p.forms.iter().find(|f| f.1 == head).unwrap();
        // Head 0's scores rank (3, 1.5, 4, 1.5) against the human (3, 1, 4, 2): Pearson of the
        // ranks 4.5 / sqrt(4.5 * 5).
        assert!(
            (at(Some(0)).2 - 4.5 / (22.5f64).sqrt()).abs() < 1e-12,
            "{p:?}"
        );
        // The layer's form ranks (3, 2, 4, 1): 1 - 6 * 2 / 60 = 0.8.
        assert!((at(None).2 - 0.8).abs() < 1e-12, "{p:?}");
        assert_eq!(p.forms.len(), 3);
        assert!(p.forms.iter().all(|f| f.0 == 1));
        // Per pair in file order, the unknown word's pair empty: dots 3, 0, 6, 1; the layer's
        // form diag(1, -1) scores 3, 0, 6, -1.
        assert_eq!(
            p.dot_scores,
            vec![Some(3.0), None, Some(0.0), Some(6.0), Some(1.0)]
        );
        assert_eq!(
            p.layer_scores,
            vec![vec![Some(3.0), None, Some(0.0), Some(6.0), Some(-1.0)]]
        );
        // The interval over the words holds the estimate; with scores that rank exactly as
        // the human judgments do, every resample gives 1 (or NaN where a resample has one
        // distinct pair, which the interval leaves out), so it has no width.
        let found = BenchmarkPairs::find(&table, &vocab, &set).unwrap();
        let exact = found.human_interval(&found.dot(table.data(), 2), 200, 3);
        let near = |x: f64, y: f64| (x - y).abs() < 1e-12;
        assert!(
            near(exact.estimate, 1.0) && near(exact.lo, 1.0) && near(exact.hi, 1.0),
            "{exact:?}"
        );
        let reversed: Vec<f64> = found.human.iter().map(|h| -h).collect();
        let iv = found.human_interval(&reversed, 200, 3);
        assert!(
            near(iv.estimate, -1.0) && near(iv.lo, -1.0) && near(iv.hi, -1.0),
            "{iv:?}"
        );
        let head0 = head_pair_scores(table.data(), &w0, Some(0), &found.rows);
        let iv = found.human_interval(&head0, 500, 3);
        assert!(
            iv.lo <= iv.estimate && iv.estimate <= iv.hi && iv.lo < iv.hi,
            "{iv:?}"
        );
        // The paired difference: scores ranked as people rank the pairs against the reverse
        // order is 1 - (-1) = 2 in every resample, so no width; a score against itself is 0.
        let iv = found.human_difference_interval(&found.human, &reversed, 200, 3);
        assert!(
            near(iv.estimate, 2.0) && near(iv.lo, 2.0) && near(iv.hi, 2.0),
            "{iv:?}"
        );
        let iv = found.human_difference_interval(&head0, &head0, 200, 3);
        assert!(near(iv.estimate, 0.0) && near(iv.lo, 0.0) && near(iv.hi, 0.0));
        // Fewer than three pairs found: nothing to rank.
        let few = crate::SimilaritySet {
            name: "few".into(),
            pairs: set.pairs[..2].to_vec(),
        };
        assert!(similarity_pair_forms(&table, &vocab, &few, &[]).is_none());
    }

    #[test]
    fn a_paired_difference_cancels_what_two_scores_share() {
        // Every pair of 30 words; two scores that share a large noise and differ by a small
        // one: each alone is a loose read of the judgments, their difference a tight one.
        let mut rng = SplitMix64::new(11);
        let mut g = || rng.next_f32() as f64 - 0.5;
        let rows = every_pair(30);
        let n = rows.len();
        let human: Vec<f64> = (0..n).map(|_| g()).collect();
        let shared: Vec<f64> = (0..n).map(|_| g()).collect();
        let a: Vec<f64> = (0..n).map(|k| human[k] + shared[k]).collect();
        let b: Vec<f64> = (0..n).map(|k| a[k] + 0.1 * g()).collect();
        let p = all_found(rows, human);
        let d = p.human_difference_interval(&a, &b, 400, 5);
        let (ra, rb) = (p.spearman(&a).0, p.spearman(&b).0);
        assert!((d.estimate - (ra - rb)).abs() < 1e-12, "{d:?}");
        let alone = p.human_interval(&a, 400, 5);
        assert!(
            d.hi - d.lo < 0.25 * (alone.hi - alone.lo),
            "paired {d:?} against a alone {alone:?}"
        );
        // Where the judgments and the two scores' difference both carry an effect of each
        // word, pairs sharing a word move the difference alike: the interval over words is
        // wider than one over pairs as if independent.
        let (h, w): (Vec<f64>, Vec<f64>) = (0..30).map(|_| (g(), g())).unzip();
        let rows = p.rows.clone();
        let by_word = |x: &[f64], k: usize| x[rows[k].0] + x[rows[k].1];
        let p = BenchmarkPairs {
            human: (0..n).map(|k| by_word(&h, k) + 0.5 * g()).collect(),
            ..p
        };
        let a: Vec<f64> = (0..n).map(|k| p.human[k] + g()).collect();
        let c: Vec<f64> = (0..n).map(|k| a[k] + by_word(&w, k)).collect();
        let by_words = p.human_difference_interval(&a, &c, 400, 5);
        let of = |s: &[f64]| [(p.human.clone(), s.to_vec())];
        let by_pairs = crate::inference::item_and_seed_interval(
            &of(&a),
            Some(&of(&c)),
            n,
            None,
            crate::inference::spearman_at,
            400,
            5,
        );
        assert!(
            by_words.hi - by_words.lo > 1.3 * (by_pairs.hi - by_pairs.lo),
            "{by_words:?} against pairs as if independent {by_pairs:?}"
        );
        // A constant score has no rank correlation: the difference is undefined, not cut to 2.
        let flat = p.human_difference_interval(&a, &vec![1.0; n], 100, 5);
        assert!(
            flat.estimate.is_nan() && flat.lo.is_nan() && flat.hi.is_nan(),
            "{flat:?}"
        );
    }

    #[test]
    fn rho_intervals_are_cut_to_their_range_and_undefined_stays_undefined() {
        // Every pair of 8 words, a score that ranks the pairs nearly as the judgments do: rho
        // near 1 with few words, so the normal interval over words reaches past 1 and is cut
        // there, its lower bound untouched.
        let mut rng = SplitMix64::new(3);
        let mut g = || rng.next_f32() as f64 - 0.5;
        let rows = every_pair(8);
        let n = rows.len();
        let human: Vec<f64> = (0..n).map(|_| g()).collect();
        let near: Vec<f64> = human.iter().map(|h| h + 0.08 * g()).collect();
        let reversed: Vec<f64> = near.iter().map(|x| -x).collect();
        let words: Vec<Vec<usize>> = rows.iter().map(|&(i, j)| vec![i, j]).collect();
        let p = all_found(rows, human);
        let of = |s: &[f64]| [(p.human.clone(), s.to_vec())];
        let uncut = |a: &[f64], b: Option<&[f64]>| {
            crate::inference::item_and_seed_interval(
                &of(a),
                b.map(of).as_ref().map(|x| x.as_slice()),
                n,
                Some(&words),
                crate::inference::spearman_at,
                400,
                9,
            )
        };
        let (raw, iv) = (uncut(&near, None), p.human_interval(&near, 400, 9));
        assert!(
            raw.hi > 1.0 && raw.lo < 1.0,
            "the case needs a bound past 1: {raw:?}"
        );
        assert_eq!(
            (iv.estimate, iv.lo, iv.hi),
            (raw.estimate, raw.lo, 1.0),
            "{iv:?}"
        );
        // Its difference from its own reverse is near 2, cut at 2 likewise.
        let raw = uncut(&near, Some(&reversed));
        let iv = p.human_difference_interval(&near, &reversed, 400, 9);
        assert!(
            raw.hi > 2.0 && raw.lo < 2.0,
            "the case needs a bound past 2: {raw:?}"
        );
        assert_eq!(
            (iv.estimate, iv.lo, iv.hi),
            (raw.estimate, raw.lo, 2.0),
            "{iv:?}"
        );
        // A constant score has no rank correlation: undefined, not cut to -1 or 1.
        let flat = p.human_interval(&vec![0.5; n], 100, 9);
        assert!(
            flat.estimate.is_nan() && flat.lo.is_nan() && flat.hi.is_nan(),
            "{flat:?}"
        );
    }

    #[test]
    fn forms_do_not_move_where_cosine_and_cka_of_w_q_w_k_do() {
        // A tied layer (W_Q = W_K, two heads of two columns), then the same attention written
        // as W_Q A, W_K A^-T with A = diag(3, 1/3) in every head: each head's form
        // Q A (K A^-T)^T = Q K^T is unchanged, so its scores are, while cosine and linear CKA
        // of W_Q with W_K, which read the factors, fall from 1.
        let (d_in, d_out, n_heads) = (6, 4, 2);
        let q: Vec<f32> = (0..d_in * d_out)
            .map(|i| ((i * 5 % 7) as f32 - 3.0) / 3.0 + (i % d_out) as f32 * 0.25)
            .collect();
        let tied = LayerQkv {
            q: q.clone(),
            k: q.clone(),
            v: q.clone(),
            d_in,
            d_out,
            n_heads,
            d_k: d_out / n_heads,
        };
        let scale = [3.0f32, 1.0 / 3.0];
        let (mut qa, mut ka) = (q.clone(), q.clone());
        for i in 0..d_in {
            for c in 0..d_out {
                qa[i * d_out + c] *= scale[c % 2];
                ka[i * d_out + c] /= scale[c % 2];
            }
        }
        let moved = LayerQkv {
            q: qa,
            k: ka,
            ..tied.clone()
        };
        let (before, after) = (layer_forms(&tied), layer_forms(&moved));
        let same = |a: &FormScores, b: &FormScores| {
            // f32 factors scaled by 3 and 1/3: equal to f32 rounding.
            (a.symmetry - b.symmetry).abs() < 1e-5
                && (a.identity_alignment - b.identity_alignment).abs() < 1e-5
                && (a.directionality - b.directionality).abs() < 1e-5
        };
        assert!(before
            .heads
            .iter()
            .zip(&after.heads)
            .all(|(a, b)| same(a, b)));
        assert!(same(&before.layer, &after.layer));
        assert!(before
            .heads
            .iter()
            .all(|h| (h.symmetry - 1.0).abs() < 1e-12));
        let e: Vec<f32> = (0..5 * d_in)
            .map(|i| ((i * 3 % 11) as f32 - 5.0) / 4.0)
            .collect();
        let pairs = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)];
        for head in [Some(0), Some(1), None] {
            let (a, b) = (
                head_pair_scores(&e, &tied, head, &pairs),
                head_pair_scores(&e, &moved, head, &pairs),
            );
            assert!(
                a.iter()
                    .zip(&b)
                    .all(|(x, y)| (x - y).abs() < 1e-4 * x.abs().max(1.0)),
                "{a:?} {b:?}"
            );
        }
        let (g0, g1) = (
            crate::geometry::head_geometry(1, &tied),
            crate::geometry::head_geometry(1, &moved),
        );
        for (a, b) in g0.iter().zip(&g1) {
            assert!(
                (a.cos_q_k - 1.0).abs() < 1e-6 && (a.cka_q_k - 1.0).abs() < 1e-6,
                "{a:?}"
            );
            assert!(b.cos_q_k < 0.9 && b.cka_q_k < 0.95, "{b:?}");
        }
    }

    #[test]
    fn pair_scores_are_the_symmetrised_bilinear_form() {
        // M = [[1, 2], [0, 3]], e_0 = (1, 0), e_1 = (1, 1): e_0 M e_1 = 3, e_1 M e_0 = 1.
        let m = [1.0, 2.0, 0.0, 3.0];
        let e = [1.0f32, 0.0, 1.0, 1.0];
        assert_eq!(pair_scores(&e, 2, &m, &[(0, 1), (1, 1)]), vec![2.0, 6.0]);
        // Through a head's projections: the same as through its form.
        let w = LayerQkv {
            q: vec![1.0, 0.5, -1.0, 2.0, 0.0, 1.0],
            k: vec![0.0, 1.0, 3.0, -1.0, 1.0, 1.0],
            v: vec![0.0; 6],
            d_in: 3,
            d_out: 2,
            n_heads: 2,
            d_k: 1,
        };
        let e3 = [1.0f32, 2.0, 0.0, -1.0, 0.5, 2.0, 0.0, 1.0, 1.0];
        let pairs = [(0, 1), (1, 2), (2, 0), (1, 1)];
        for head in [Some(0), Some(1), None] {
            let cols = head.map_or(0..2, |h| h..h + 1);
            let m = form(&w.q, &w.k, 3, 2, cols.clone(), cols);
            let a = head_pair_scores(&e3, &w, head, &pairs);
            let b = pair_scores(&e3, 3, &m, &pairs);
            assert!(
                a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-12),
                "{a:?} {b:?}"
            );
        }
        // With M = I the score is the dot product.
        let eye = [1.0, 0.0, 0.0, 1.0];
        assert_eq!(pair_scores(&e, 2, &eye, &[(0, 1)]), vec![1.0]);
    }
}
