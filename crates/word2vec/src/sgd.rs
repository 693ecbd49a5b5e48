//! One SGD update of word2vec with negative sampling (Mikolov et al. 2013; the gradients as in
//! word2vec.c). With input vectors `v` (the word vectors we keep) and output vectors `u`, an
//! input `h` predicts the target word `t` against `k` noise words `n_1..n_k`:
//!
//! ```text
//! loss = -log σ(u_t·h) - Σ_i log σ(-u_{n_i}·h)
//! g_j  = α (label_j - σ(u_j·h))          label = 1 for t, 0 for noise
//! u_j += g_j h;   ∂h = Σ_j g_j u_j  (accumulated before the u_j change is applied to h)
//! ```
//!
//! Skip-gram: `h = v_c` for one context word `c`, and `v_c += ∂h`.
//! CBOW: `h = mean(v_c over the window)`, and every context word gets `v_c += ∂h` (word2vec.c and
//! gensim's `cbow_mean=1` do not divide the error among the context words).
//!
//! σ comes from a table over [-6, 6] as in word2vec.c; beyond it the gradient saturates. The
//! loss is read from a log-σ table: the progress bar shows it at no measurable cost.

pub const MAX_EXP: f32 = 6.0;
const TABLE_SIZE: usize = 1024;

/// σ(x) and log σ(x), tabulated on [-MAX_EXP, MAX_EXP].
pub struct Sigmoid {
    sigma: Vec<f32>,
    log_sigma: Vec<f32>,
}

impl Default for Sigmoid {
    fn default() -> Self {
        let at = |i: usize| (i as f32 / TABLE_SIZE as f32 * 2.0 - 1.0) * MAX_EXP;
        let sigma = (0..=TABLE_SIZE)
            .map(|i| 1.0 / (1.0 + (-at(i)).exp()))
            .collect();
        let log_sigma = (0..=TABLE_SIZE)
            .map(|i| -(1.0 + (-at(i) as f64).exp()).ln() as f32)
            .collect();
        Sigmoid { sigma, log_sigma }
    }
}

impl Sigmoid {
    #[inline(always)]
    fn index(x: f32) -> usize {
        ((x + MAX_EXP) * (TABLE_SIZE as f32 / MAX_EXP / 2.0)) as usize
    }
    /// (σ(x), log σ(x)); `x` must be within [-MAX_EXP, MAX_EXP].
    #[inline(always)]
    pub fn both(&self, x: f32) -> (f32, f32) {
        let i = Self::index(x);
        (self.sigma[i], self.log_sigma[i])
    }
}

#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight partial sums let the compiler keep a full vector register of accumulators.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = acc.iter().sum::<f32>();
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// `y += a * x`
#[inline(always)]
pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Trains `h` against the target and `negatives` noise words drawn by `noise`. Updates the output
/// rows in place, accumulates the input gradient into `grad_h`, and returns the loss.
///
/// `output_row(j)` gives mutable access to output row `j` (hogwild: rows may be shared).
#[inline(always)]
pub fn negative_sampling_step<'a>(
    h: &[f32],
    grad_h: &mut [f32],
    target: u32,
    negatives: usize,
    mut noise: impl FnMut() -> u32,
    alpha: f32,
    sigmoid: &Sigmoid,
    mut output_row: impl FnMut(u32) -> &'a mut [f32],
) -> f32 {
    let mut loss = 0.0;
    for k in 0..=negatives {
        let (word, label) = if k == 0 {
            (target, 1.0)
        } else {
            let w = noise();
            if w == target {
                continue;
            }
            (w, 0.0)
        };
        let u = output_row(word);
        let f = dot(h, u);
        let g = if f > MAX_EXP {
            loss -= if label == 1.0 { 0.0 } else { -f };
            label - 1.0
        } else if f < -MAX_EXP {
            loss -= if label == 1.0 { f } else { 0.0 };
            label
        } else {
            let (s, log_s) = sigmoid.both(f);
            // log σ(-f) = log σ(f) - f
            loss -= if label == 1.0 { log_s } else { log_s - f };
            label - s
        } * alpha;
        axpy(g, u, grad_h);
        axpy(g, h, u);
    }
    loss
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_the_functions() {
        let s = Sigmoid::default();
        for x in [-5.9f32, -1.0, 0.0, 0.5, 3.3, 5.9] {
            let (sig, log_sig) = s.both(x);
            let exact = 1.0 / (1.0 + (-x).exp());
            assert!((sig - exact).abs() < 4e-3, "{x}: {sig} vs {exact}");
            assert!((log_sig - exact.ln()).abs() < 2e-2, "{x}");
        }
        assert_eq!(dot(&[1.0; 19], &[2.0; 19]), 38.0);
        let mut y = vec![1.0; 3];
        axpy(2.0, &[1.0, 2.0, 3.0], &mut y);
        assert_eq!(y, vec![3.0, 5.0, 7.0]);
    }

    #[test]
    fn one_step_matches_hand_computed_gradients() {
        // h = (1, 0), target row u = (0.5, 0) -> f = 0.5, σ ≈ 0.6225, g = α (1 - σ).
        let sigmoid = Sigmoid::default();
        let h = [1.0f32, 0.0];
        let mut grad = [0f32; 2];
        let mut out = vec![0.5f32, 0.0, 0.0, 0.0];
        let alpha = 0.1;
        let ptr = out.as_mut_ptr();
        let loss = negative_sampling_step(
            &h,
            &mut grad,
            0,
            1,
            || 1,
            alpha,
            &sigmoid,
            |j| unsafe { std::slice::from_raw_parts_mut(ptr.add(j as usize * 2), 2) },
        );
        let s = 1.0 / (1.0 + (-0.5f32).exp());
        let g = alpha * (1.0 - s);
        // The noise row (all zero): f = 0, σ = 0.5, g = -α/2; grad_h got g * u_t + (-α/2) * 0.
        assert!((grad[0] - g * 0.5).abs() < 2e-3, "{grad:?}");
        assert!((out[0] - (0.5 + g)).abs() < 2e-3);
        assert!((out[2] - (-alpha / 2.0)).abs() < 1e-6, "{out:?}");
        // loss = -log σ(0.5) - log σ(0) = 0.4741 + 0.6931
        assert!(
            (loss - (0.474_077 + std::f32::consts::LN_2)).abs() < 2e-2,
            "{loss}"
        );
    }
}
