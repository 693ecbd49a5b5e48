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
    let mut s = lane_sum(&acc);
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

/// The largest number of output rows (target and noise words) in one window.
pub const MAX_OUTPUTS: usize = 32;
/// The largest number of context rows in one window (twice the largest window).
pub const MAX_INPUTS: usize = 32;

/// One output's scaled error `α (label - σ(f))` for the score `f = u·h`, its loss
/// (`-log σ(f)` for the target, `-log σ(-f)` for a noise word) subtracted into `loss`;
/// saturated beyond ±[`MAX_EXP`].
#[inline(always)]
fn gradient(f: f32, label: f32, alpha: f32, sigmoid: &Sigmoid, loss: &mut f32) -> f32 {
    (if f > MAX_EXP {
        *loss -= if label == 1.0 { 0.0 } else { -f };
        label - 1.0
    } else if f < -MAX_EXP {
        *loss -= if label == 1.0 { f } else { 0.0 };
        label
    } else {
        let (s, log_s) = sigmoid.both(f);
        // log σ(-f) = log σ(f) - f
        *loss -= if label == 1.0 { log_s } else { log_s - f };
        label - s
    }) * alpha
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
        let g = gradient(f, label, alpha, sigmoid, &mut loss);
        axpy(g, u, grad_h);
        axpy(g, h, u);
    }
    loss
}

/// `y = a * x`
#[inline(always)]
pub fn scale(a: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = a * xi;
    }
}

/// One centre word's whole skip-gram window at once (HogBatch, Ji et al. 2016): the `n`
/// context rows `h_i` all predict the same `m` output rows `u_j` (the centre word, label 1,
/// then its noise words, label 0, shared by the window). With every dot product taken before
/// any row changes:
///
/// ```text
/// g_ij = α (label_j - σ(u_j·h_i))
/// ∂h_i = Σ_j g_ij u_j        ∂u_j = Σ_i g_ij h_i
/// ```
///
/// the per-pair formulas above with the pairs' updates summed instead of applied in turn.
/// The updates are applied here: the `∂h_i` are first summed into `grad_in` (at least `n x d`;
/// they read the output rows as they were), then each `∂u_j` is added to its row term by term
/// (it reads only context rows, not yet changed), then the `∂h_i` to the context rows. `g` is
/// scratch of at least `n x m`. Returns the window's loss (summed over pairs).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn window_step<'a>(
    inputs: &[u32],
    outputs: &[u32],
    input_row: impl Fn(u32) -> &'a mut [f32],
    output_row: impl Fn(u32) -> &'a mut [f32],
    labels: &[f32],
    alpha: f32,
    sigmoid: &Sigmoid,
    g: &mut [f32],
    grad_in: &mut [f32],
) -> f32 {
    let (n, m) = (inputs.len(), outputs.len());
    assert!(
        m <= MAX_OUTPUTS,
        "at most {MAX_OUTPUTS} output rows in a window"
    );
    assert!(
        n <= MAX_INPUTS,
        "at most {MAX_INPUTS} context rows in a window"
    );
    let (Some(&first), Some(&target)) = (inputs.first(), outputs.first()) else {
        return 0.0;
    };
    let d = input_row(first).len();
    let mut loss = 0.0;
    for (i, &c) in inputs.iter().enumerate() {
        let h = &*input_row(c);
        for (j, &o) in outputs.iter().enumerate() {
            let f = dot(h, output_row(o));
            g[i * m + j] = gradient(f, labels[j], alpha, sigmoid, &mut loss);
        }
    }
    for i in 0..n {
        let gi = &mut grad_in[i * d..(i + 1) * d];
        scale(g[i * m], output_row(target), gi);
        for (j, &o) in outputs.iter().enumerate().skip(1) {
            axpy(g[i * m + j], output_row(o), gi);
        }
    }
    for (j, &o) in outputs.iter().enumerate() {
        let u = output_row(o);
        for (i, &c) in inputs.iter().enumerate() {
            axpy(g[i * m + j], input_row(c), u);
        }
    }
    for (i, &c) in inputs.iter().enumerate() {
        axpy(1.0, &grad_in[i * d..(i + 1) * d], input_row(c));
    }
    loss
}

/// Floats per lane: the kernels below work a row this many floats at a time (one AVX2 register),
/// every lane of every row in one pass, so that each row is read and written once per window
/// instead of once per (context, output) pair. Rows are padded to a whole number of lanes
/// (`train::row_stride`).
pub const LANES: usize = 8;
type Lane = [f32; LANES];

/// Lane `c` of the row at `p`.
///
/// # Safety
/// `p` points at a row of at least `(c + 1) * LANES` floats.
#[inline(always)]
unsafe fn load(p: *const f32, c: usize) -> Lane {
    std::ptr::read_unaligned(p.add(c * LANES) as *const Lane)
}

/// # Safety
/// As [`load`], and no reference to the row is alive.
#[inline(always)]
unsafe fn store(p: *mut f32, c: usize, x: Lane) {
    std::ptr::write_unaligned(p.add(c * LANES) as *mut Lane, x)
}

/// The sum of a lane of partial sums, in the order [`dot`] takes it (so that the kernels' scores
/// are [`dot`]'s to the bit).
#[inline(always)]
fn lane_sum(acc: &Lane) -> f32 {
    acc.iter().sum::<f32>()
}

/// [`window_step`]'s update with every row read and written once: `M` output rows (the
/// centre word, then its noise words) against the window's context rows, the scores from the
/// rows as they were, then for each lane of the rows, in one pass, `h_i += Σ_j g_ij u_j` and
/// `u_j += Σ_i g_ij h_i`. The same arithmetic in the same order as [`window_step`], so the same
/// rows to the bit (tested), when no row stands twice in the window. A row standing twice
/// (a context word twice in the window, a noise word drawn twice) is passed once with its
/// count: its pairs' terms are summed as one term times the count, which is the same sum up to
/// rounding. An unused output slot is a zero row with count 0.
///
/// `inputs[i]` (distinct rows, `in_count[i]` times each) and `outputs[j]` (distinct rows,
/// `out_count[j]` times each, label `labels[j]`) are `d`-float rows, `d` a multiple of
/// [`LANES`]. Returns the window's loss (summed over pairs, counts included).
///
/// # Safety
/// Every pointer points at a row of `d` floats that no reference is alive to; the rows are
/// distinct (hogwild: other threads may write them), except that unused output slots (count
/// 0) may share one zero row, which their zero updates leave zero.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn window_step_lanes<const M: usize>(
    d: usize,
    inputs: &[*mut f32],
    in_count: &[f32],
    outputs: &[*mut f32; M],
    out_count: &[f32; M],
    labels: &[f32; M],
    alpha: f32,
    sigmoid: &Sigmoid,
) -> f32 {
    assert!(d.is_multiple_of(LANES), "rows are padded to whole lanes");
    assert!(inputs.len() <= MAX_INPUTS && in_count.len() == inputs.len());
    let chunks = d / LANES;
    let mut g = [[0f32; M]; MAX_INPUTS];
    let mut loss = 0.0;
    for (i, &h) in inputs.iter().enumerate() {
        // One context row against every output row: M partial sums kept in registers.
        let mut acc = [[0f32; LANES]; M];
        for c in 0..chunks {
            let x = load(h, c);
            for j in 0..M {
                let u = load(outputs[j], c);
                for k in 0..LANES {
                    acc[j][k] += x[k] * u[k];
                }
            }
        }
        for j in 0..M {
            let w = in_count[i] * out_count[j];
            let mut pair_loss = 0.0;
            g[i][j] = gradient(lane_sum(&acc[j]), labels[j], alpha, sigmoid, &mut pair_loss) * w;
            loss += pair_loss * w;
        }
    }
    for c in 0..chunks {
        let mut old = [[0f32; LANES]; M];
        for j in 0..M {
            old[j] = load(outputs[j], c);
        }
        let mut new = old;
        for (i, &h) in inputs.iter().enumerate() {
            let x = load(h, c);
            let gi = &g[i];
            // ∂h_i from the output rows as they were, summed as window_step's grad_in is.
            let mut delta = [0f32; LANES];
            for k in 0..LANES {
                delta[k] = gi[0] * old[0][k];
            }
            for j in 1..M {
                for k in 0..LANES {
                    delta[k] += gi[j] * old[j][k];
                }
            }
            // ∂u_j term by term from the context rows as they were, i in order.
            for j in 0..M {
                for k in 0..LANES {
                    new[j][k] += gi[j] * x[k];
                }
            }
            let mut y = x;
            for k in 0..LANES {
                y[k] += 1.0 * delta[k];
            }
            store(h, c, y);
        }
        for j in 0..M {
            store(outputs[j], c, new[j]);
        }
    }
    loss
}

/// CBOW's update for one position ([`negative_sampling_step`] on the mean of the context rows,
/// then `∂h` added to every context row) in two passes over the rows' lanes: the mean and the
/// `M` scores, then the output rows' and the context rows' updates. When the `M` output rows
/// (the centre word, then its noise words) are distinct, the scores do not depend on the order
/// the output rows are updated in, and this is word2vec.c's update to the bit (tested); a
/// position whose noise words repeat or hit the centre word must take
/// [`negative_sampling_step`] instead. `contexts` may repeat a row (each occurrence gets the
/// update, as there). `h` is scratch of `d` floats; returns the position's loss.
///
/// With AVX the kernel is [`cbow_step_avx`], the same arithmetic in 256-bit registers (the
/// compiler left this one's first pass in 128-bit pieces with shuffles and stack spills:
/// docs/performance.md); [`cbow_step_portable`] elsewhere. Both give the same bits (tested).
///
/// # Safety
/// As [`window_step_lanes`]; `outputs` distinct, `contexts` rows of the other matrix.
#[inline(always)]
pub unsafe fn cbow_step_lanes<const M: usize>(
    d: usize,
    contexts: &[*mut f32],
    outputs: &[*mut f32; M],
    h: &mut [f32],
    alpha: f32,
    sigmoid: &Sigmoid,
) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx") {
        // SAFETY: the feature was just detected; the rows as the caller promised.
        return cbow_step_avx::<M>(d, contexts, outputs, h, alpha, sigmoid);
    }
    cbow_step_portable::<M>(d, contexts, outputs, h, alpha, sigmoid)
}

/// [`cbow_step_lanes`] written with `[f32; LANES]` lanes for the compiler to vectorise.
///
/// # Safety
/// As [`cbow_step_lanes`].
#[inline(always)]
pub unsafe fn cbow_step_portable<const M: usize>(
    d: usize,
    contexts: &[*mut f32],
    outputs: &[*mut f32; M],
    h: &mut [f32],
    alpha: f32,
    sigmoid: &Sigmoid,
) -> f32 {
    assert!(d.is_multiple_of(LANES) && h.len() >= d && !contexts.is_empty());
    let chunks = d / LANES;
    let hp = h.as_mut_ptr();
    let inv = 1.0 / contexts.len() as f32;
    let mut acc = [[0f32; LANES]; M];
    for c in 0..chunks {
        let mut s = [0f32; LANES];
        for &p in contexts {
            let x = load(p, c);
            for k in 0..LANES {
                s[k] += 1.0 * x[k];
            }
        }
        for x in &mut s {
            *x *= inv;
        }
        store(hp, c, s);
        for j in 0..M {
            let u = load(outputs[j], c);
            for k in 0..LANES {
                acc[j][k] += s[k] * u[k];
            }
        }
    }
    let mut loss = 0.0;
    let mut g = [0f32; M];
    for j in 0..M {
        let label = if j == 0 { 1.0 } else { 0.0 };
        g[j] = gradient(lane_sum(&acc[j]), label, alpha, sigmoid, &mut loss);
    }
    for c in 0..chunks {
        let x = load(hp, c);
        let mut grad = [0f32; LANES];
        for j in 0..M {
            let mut u = load(outputs[j], c);
            for k in 0..LANES {
                grad[k] += g[j] * u[k];
            }
            for k in 0..LANES {
                u[k] += g[j] * x[k];
            }
            store(outputs[j], c, u);
        }
        for &p in contexts {
            let mut y = load(p, c);
            for k in 0..LANES {
                y[k] += 1.0 * grad[k];
            }
            store(p, c, y);
        }
    }
    loss
}

/// [`cbow_step_portable`] in AVX registers, operation for operation: each sum starts from
/// zero and takes its terms in the same order, each product is rounded before it is added
/// (no fused multiply-add), and the scores are summed lane by lane as [`lane_sum`] does, so
/// the two give the same bits (tested). Multiplying by 1.0, which the portable kernel writes
/// to keep word2vec.c's form, is exact and left out.
///
/// # Safety
/// AVX must be present, and the rows as for [`cbow_step_lanes`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
pub unsafe fn cbow_step_avx<const M: usize>(
    d: usize,
    contexts: &[*mut f32],
    outputs: &[*mut f32; M],
    h: &mut [f32],
    alpha: f32,
    sigmoid: &Sigmoid,
) -> f32 {
    use std::arch::x86_64::*;
    const { assert!(LANES == 8, "one __m256 per lane") };
    assert!(d.is_multiple_of(LANES) && h.len() >= d && !contexts.is_empty());
    let hp = h.as_mut_ptr();
    let inv = _mm256_set1_ps(1.0 / contexts.len() as f32);
    let mut acc = [_mm256_setzero_ps(); M];
    for o in (0..d).step_by(LANES) {
        let mut s = _mm256_setzero_ps();
        for &p in contexts {
            s = _mm256_add_ps(s, _mm256_loadu_ps(p.add(o)));
        }
        s = _mm256_mul_ps(s, inv);
        _mm256_storeu_ps(hp.add(o), s);
        for j in 0..M {
            let u = _mm256_loadu_ps(outputs[j].add(o));
            acc[j] = _mm256_add_ps(acc[j], _mm256_mul_ps(s, u));
        }
    }
    let mut loss = 0.0;
    let mut g = [0f32; M];
    for j in 0..M {
        let mut lanes = [0f32; LANES];
        _mm256_storeu_ps(lanes.as_mut_ptr(), acc[j]);
        let label = if j == 0 { 1.0 } else { 0.0 };
        g[j] = gradient(lane_sum(&lanes), label, alpha, sigmoid, &mut loss);
    }
    let g = g.map(|x| _mm256_set1_ps(x));
    for o in (0..d).step_by(LANES) {
        let x = _mm256_loadu_ps(hp.add(o));
        let mut grad = _mm256_setzero_ps();
        for j in 0..M {
            let u = _mm256_loadu_ps(outputs[j].add(o));
            grad = _mm256_add_ps(grad, _mm256_mul_ps(g[j], u));
            _mm256_storeu_ps(outputs[j].add(o), _mm256_add_ps(u, _mm256_mul_ps(g[j], x)));
        }
        // A row named twice gets the update twice, the second on the first's result.
        for &p in contexts {
            _mm256_storeu_ps(p.add(o), _mm256_add_ps(_mm256_loadu_ps(p.add(o)), grad));
        }
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

    /// Rows handed out mutably from one buffer, as the trainer's shared matrices do.
    fn rows(buf: &mut [f32], d: usize) -> impl Fn(u32) -> &'static mut [f32] {
        let ptr = buf.as_mut_ptr() as usize;
        let len = buf.len();
        move |i| {
            assert!((i as usize + 1) * d <= len);
            // SAFETY: in bounds; the test's buffers outlive every row taken from them.
            unsafe { std::slice::from_raw_parts_mut((ptr as *mut f32).add(i as usize * d), d) }
        }
    }

    #[test]
    fn a_window_step_is_the_pair_steps_taken_from_the_same_rows_and_summed() {
        // Two contexts, the target and one noise word, d = 3.
        let sigmoid = Sigmoid::default();
        let h = [[0.3f32, -0.2, 0.5], [0.1, 0.4, -0.3]];
        let u = [[0.2f32, 0.1, -0.4], [-0.5, 0.3, 0.2]];
        let alpha = 0.05;
        let (mut g, mut gi) = (vec![0f32; 4], vec![0f32; 6]);
        let (mut hb, mut ub) = (h.concat(), u.concat());
        let loss = window_step(
            &[0, 1],
            &[0, 1],
            rows(&mut hb, 3),
            rows(&mut ub, 3),
            &[1.0, 0.0],
            alpha,
            &sigmoid,
            &mut g,
            &mut gi,
        );
        // By hand: g_ij = α (label - σ(u_j·h_i)), with the exact σ (the table is within 4e-3).
        let sig = |x: f32| 1.0 / (1.0 + (-x).exp());
        let mut want_loss = 0.0;
        for i in 0..2 {
            for j in 0..2 {
                let f = dot(&h[i], &u[j]);
                let label = if j == 0 { 1.0 } else { 0.0 };
                let gij = alpha * (label - sig(f));
                assert!((g[i * 2 + j] - gij).abs() < 4e-3 * alpha, "g{i}{j}");
                want_loss -= if j == 0 { sig(f).ln() } else { sig(-f).ln() };
            }
        }
        // Each row's update sums its pairs' terms, from the rows before any update.
        for i in 0..2 {
            for c in 0..3 {
                let want: f32 = h[i][c] + (0..2).map(|j| g[i * 2 + j] * u[j][c]).sum::<f32>();
                assert!((hb[i * 3 + c] - want).abs() < 1e-7, "h{i}{c}");
            }
        }
        for j in 0..2 {
            for c in 0..3 {
                let want: f32 = u[j][c] + (0..2).map(|i| g[i * 2 + j] * h[i][c]).sum::<f32>();
                assert!((ub[j * 3 + c] - want).abs() < 1e-7, "u{j}{c}");
            }
        }
        assert!((loss - want_loss).abs() < 2e-2, "{loss} vs {want_loss}");

        // One context and its own noise words: exactly the pair step's updates, to the bit
        // (the pair step also reads each u_j before its own update, and h changes after).
        let (mut h_pair, mut u_pair) = (h[0], u.concat());
        let mut grad_h = [0f32; 3];
        let mut draws = [1u32].into_iter();
        let pair_loss = negative_sampling_step(
            &h_pair,
            &mut grad_h,
            0,
            1,
            || draws.next().unwrap(),
            alpha,
            &sigmoid,
            rows(&mut u_pair, 3),
        );
        axpy(1.0, &grad_h, &mut h_pair);
        let (mut hb, mut ub) = (h[0].to_vec(), u.concat());
        let one = window_step(
            &[0],
            &[0, 1],
            rows(&mut hb, 3),
            rows(&mut ub, 3),
            &[1.0, 0.0],
            alpha,
            &sigmoid,
            &mut g,
            &mut gi,
        );
        assert_eq!(one, pair_loss);
        assert_eq!(hb, h_pair);
        assert_eq!(ub, u_pair);
    }

    #[test]
    fn a_noise_word_drawn_twice_gets_both_updates() {
        // The same output row twice in a window: each occurrence's update lands on the row.
        let sigmoid = Sigmoid::default();
        let (h, u) = ([0.3f32, -0.2], [[0.2f32, 0.1], [-0.5, 0.3]]);
        let alpha = 0.1;
        let (mut g, mut gi) = (vec![0f32; 3], vec![0f32; 2]);
        let (mut hb, mut ub) = (h.to_vec(), u.concat());
        window_step(
            &[0],
            &[0, 1, 1],
            rows(&mut hb, 2),
            rows(&mut ub, 2),
            &[1.0, 0.0, 0.0],
            alpha,
            &sigmoid,
            &mut g,
            &mut gi,
        );
        assert_eq!(g[1], g[2]);
        for c in 0..2 {
            let want = u[1][c] + g[1] * h[c] + g[2] * h[c];
            assert!((ub[2 + c] - want).abs() < 1e-7, "{c}");
            let want_h = h[c] + g[0] * u[0][c] + 2.0 * g[1] * u[1][c];
            assert!((hb[c] - want_h).abs() < 1e-7, "{c}");
        }
    }

    /// `rows x d` floats in [-0.5, 0.5): the scores of a few lanes stay inside the σ table.
    fn random_rows(seed: u64, rows: usize, d: usize) -> Vec<f32> {
        let mut rng = crate::rng::SplitMix64::new(seed);
        (0..rows * d).map(|_| rng.next_f32() - 0.5).collect()
    }

    fn ptrs<const N: usize>(buf: &mut [f32], d: usize, ids: [usize; N]) -> [*mut f32; N] {
        assert!(ids.iter().all(|&i| (i + 1) * d <= buf.len()));
        let p = buf.as_mut_ptr();
        // SAFETY: in bounds by the assert.
        ids.map(|i| unsafe { p.add(i * d) })
    }

    #[test]
    fn the_lane_window_kernel_is_window_step_to_the_bit_when_no_row_repeats() {
        // Three contexts against the centre word and two noise words, two lanes wide.
        let sigmoid = Sigmoid::default();
        let d = 2 * LANES;
        let (h0, u0) = (random_rows(1, 3, d), random_rows(2, 3, d));
        let (mut h, mut u) = (h0.clone(), u0.clone());
        let (mut g, mut gi) = (vec![0f32; 9], vec![0f32; 3 * d]);
        let want_loss = window_step(
            &[0, 1, 2],
            &[0, 1, 2],
            rows(&mut h, d),
            rows(&mut u, d),
            &[1.0, 0.0, 0.0],
            0.05,
            &sigmoid,
            &mut g,
            &mut gi,
        );
        assert_ne!(h, h0, "the rows moved");
        let (mut hl, mut ul) = (h0.clone(), u0.clone());
        let inputs = ptrs(&mut hl, d, [0, 1, 2]);
        let outputs = ptrs(&mut ul, d, [0, 1, 2]);
        // SAFETY: distinct rows of live buffers, no reference held.
        let loss = unsafe {
            window_step_lanes::<3>(
                d,
                &inputs,
                &[1.0; 3],
                &outputs,
                &[1.0; 3],
                &[1.0, 0.0, 0.0],
                0.05,
                &sigmoid,
            )
        };
        assert_eq!(loss, want_loss);
        assert_eq!(hl, h);
        assert_eq!(ul, u);
    }

    #[test]
    fn the_lane_window_kernel_counts_a_repeated_row_once_per_occurrence() {
        // Contexts (a, b, a) and outputs (t, n, n): window_step takes the pairs one by one;
        // the lane kernel takes a and n once each, with count 2, and one unused slot.
        let sigmoid = Sigmoid::default();
        let d = LANES;
        let (h0, u0) = (random_rows(3, 2, d), random_rows(4, 2, d));
        let (mut h, mut u) = (h0.clone(), u0.clone());
        let (mut g, mut gi) = (vec![0f32; 9], vec![0f32; 3 * d]);
        let want_loss = window_step(
            &[0, 1, 0],
            &[0, 1, 1],
            rows(&mut h, d),
            rows(&mut u, d),
            &[1.0, 0.0, 0.0],
            0.1,
            &sigmoid,
            &mut g,
            &mut gi,
        );
        let (mut hl, mut ul) = (h0.clone(), u0.clone());
        let mut zero = vec![0f32; d];
        let inputs = ptrs(&mut hl, d, [0, 1]);
        let [t, n] = ptrs(&mut ul, d, [0, 1]);
        // SAFETY: distinct rows of live buffers, no reference held.
        let loss = unsafe {
            window_step_lanes::<3>(
                d,
                &inputs,
                &[2.0, 1.0],
                &[t, n, zero.as_mut_ptr()],
                &[1.0, 2.0, 0.0],
                &[1.0, 0.0, 0.0],
                0.1,
                &sigmoid,
            )
        };
        assert!((loss - want_loss).abs() < 1e-5, "{loss} vs {want_loss}");
        for (a, b) in hl.iter().zip(&h).chain(ul.iter().zip(&u)) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
        assert_ne!(hl, h0);
        assert!(zero.iter().all(|&x| x == 0.0), "the unused slot stays zero");
    }

    #[test]
    fn the_lane_cbow_kernel_is_the_pair_step_on_the_mean_to_the_bit() {
        // Contexts (a, b, a): the mean counts a twice and both occurrences get the update, as
        // word2vec.c's loop over the window does; outputs t, n1, n2 distinct.
        let sigmoid = Sigmoid::default();
        let d = 3 * LANES;
        let (h0, u0) = (random_rows(5, 2, d), random_rows(6, 3, d));
        // word2vec.c's order: h = mean, one output at a time, then ∂h to every context.
        let (mut h, mut u) = (h0.clone(), u0.clone());
        let (mut mean, mut grad) = (vec![0f32; d], vec![0f32; d]);
        for c in [0, 1, 0] {
            axpy(1.0, &h[c * d..(c + 1) * d], &mut mean);
        }
        mean.iter_mut().for_each(|x| *x *= 1.0 / 3.0);
        let mut draws = [1u32, 2].into_iter();
        let want_loss = negative_sampling_step(
            &mean,
            &mut grad,
            0,
            2,
            || draws.next().unwrap(),
            0.05,
            &sigmoid,
            rows(&mut u, d),
        );
        for c in [0, 1, 0] {
            axpy(1.0, &grad, &mut h[c * d..(c + 1) * d]);
        }
        let (mut hl, mut ul) = (h0.clone(), u0.clone());
        let contexts = ptrs(&mut hl, d, [0, 1, 0]);
        let outputs = ptrs(&mut ul, d, [0, 1, 2]);
        let mut scratch = vec![0f32; d];
        // SAFETY: rows of live buffers, the outputs distinct, no reference held.
        let loss =
            unsafe { cbow_step_lanes::<3>(d, &contexts, &outputs, &mut scratch, 0.05, &sigmoid) };
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(loss.to_bits(), want_loss.to_bits());
        assert_eq!(bits(&scratch), bits(&mean));
        assert_eq!(bits(&ul), bits(&u));
        assert_eq!(bits(&hl), bits(&h));
        assert_ne!(hl, h0);
        // Each kernel alone, not only the one this CPU dispatches to.
        type Kernel = unsafe fn(&[*mut f32], &[*mut f32; 3], &mut [f32]) -> f32;
        let mut kernels: Vec<(&str, Kernel)> = vec![("portable", |c, o, h| unsafe {
            cbow_step_portable::<3>(3 * LANES, c, o, h, 0.05, &Sigmoid::default())
        })];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx") {
            kernels.push(("avx", |c, o, h| unsafe {
                cbow_step_avx::<3>(3 * LANES, c, o, h, 0.05, &Sigmoid::default())
            }));
        }
        for (name, kernel) in kernels {
            let (mut hk, mut uk) = (h0.clone(), u0.clone());
            let contexts = ptrs(&mut hk, d, [0, 1, 0]);
            let outputs = ptrs(&mut uk, d, [0, 1, 2]);
            let mut scratch = vec![0f32; d];
            // SAFETY: as above; AVX was detected for the AVX kernel.
            let loss = unsafe { kernel(&contexts, &outputs, &mut scratch) };
            assert_eq!(loss.to_bits(), want_loss.to_bits(), "{name}");
            assert_eq!(bits(&scratch), bits(&mean), "{name}");
            assert_eq!(bits(&uk), bits(&u), "{name}");
            assert_eq!(bits(&hk), bits(&h), "{name}");
        }
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
