//! Element-wise loops split across rayon's pool above a small size (embedlab patch, see
//! `vendor/README.md`; an upstream candidate).
//!
//! flex runs a closure-based element-wise kernel (`unary_op`, `binary_op`, `scalar_op`) on the
//! calling thread whatever its size; only the SIMD add/sub/mul/div kernels split, above 4M
//! elements (`simd/portable.rs`), a threshold chosen for memory-bound arithmetic. The closures
//! that reach these loops are often transcendental: `exp` (the decomposed softmax and
//! log-softmax autodiff records), `erf` (exact GELU and its backward), `ln`. They cost 5-20 ns an
//! element, so a 1M-element GELU keeps one core busy for milliseconds while the others wait.
//! Splitting at [`MIN_ELEMS`] pays rayon's few microseconds of scheduling many times over.
//!
//! Each element is still computed by the same closure from the same inputs, so the results are
//! bit-identical to the sequential loops; only which thread computes an element changes.

#[cfg(feature = "rayon")]
use rayon::prelude::*;

/// Fewest elements a loop needs before it is split: four tasks of [`CHUNK`]. A task's 8K `exp`s
/// cost ~40 µs, against ~2-5 µs to hand it to another thread.
pub(crate) const MIN_ELEMS: usize = 1 << 15;

/// Fewest elements before `simd/portable.rs`'s add/sub/mul/div kernels split (upstream's 4M).
pub(crate) const SIMD_MIN_ELEMS: usize = 4 * 1024 * 1024;

/// The thresholds in force. Two environment variables, read once, override them so that one
/// binary can measure settings side by side: `FLEX_PAR_MIN_ELEMS` for these loops
/// (`18446744073709551615`, usize::MAX, never splits them: flex 0.22.1's behaviour) and
/// `FLEX_SIMD_PAR_MIN` for the SIMD add/sub/mul/div kernels of `simd/portable.rs` (default 4M,
/// as upstream).
#[cfg(feature = "std")]
fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
#[cfg(feature = "std")]
pub(crate) fn min_elems() -> usize {
    static V: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *V.get_or_init(|| env_usize("FLEX_PAR_MIN_ELEMS", MIN_ELEMS))
}
#[cfg(not(feature = "std"))]
pub(crate) fn min_elems() -> usize {
    MIN_ELEMS
}
#[cfg(not(feature = "std"))]
pub(crate) fn simd_min() -> usize {
    SIMD_MIN_ELEMS
}
#[cfg(feature = "std")]
pub(crate) fn simd_min() -> usize {
    static V: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *V.get_or_init(|| env_usize("FLEX_SIMD_PAR_MIN", SIMD_MIN_ELEMS))
}

/// Elements per task: 32 KiB of f32, within L1 with its output.
#[cfg(feature = "rayon")]
const CHUNK: usize = 1 << 13;

/// `xs[i] = f(xs[i])` for every `i`.
#[inline]
pub(crate) fn map_inplace<E, F>(xs: &mut [E], f: F)
where
    E: Copy + Send + Sync,
    F: Fn(E) -> E + Sync + Send,
{
    #[cfg(feature = "rayon")]
    if xs.len() >= min_elems() {
        xs.par_chunks_mut(CHUNK).for_each(|c| {
            for x in c.iter_mut() {
                *x = f(*x);
            }
        });
        return;
    }
    for x in xs.iter_mut() {
        *x = f(*x);
    }
}

/// `f(xs[i])` for every `i`, in order.
#[inline]
pub(crate) fn map<E, R, F>(xs: &[E], f: F) -> alloc::vec::Vec<R>
where
    E: Copy + Send + Sync,
    R: Send,
    F: Fn(E) -> R + Sync + Send,
{
    #[cfg(feature = "rayon")]
    if xs.len() >= min_elems() {
        return xs.par_iter().with_min_len(CHUNK).map(|&x| f(x)).collect();
    }
    xs.iter().map(|&x| f(x)).collect()
}

/// `a[i] = f(a[i], b[i])` for every `i` (`b` at least as long as `a`).
#[inline]
pub(crate) fn zip_inplace<E, F>(a: &mut [E], b: &[E], f: F)
where
    E: Copy + Send + Sync,
    F: Fn(E, E) -> E + Sync + Send,
{
    let b = &b[..a.len()];
    #[cfg(feature = "rayon")]
    if a.len() >= min_elems() {
        a.par_chunks_mut(CHUNK)
            .zip(b.par_chunks(CHUNK))
            .for_each(|(ac, bc)| {
                for (x, &y) in ac.iter_mut().zip(bc) {
                    *x = f(*x, y);
                }
            });
        return;
    }
    for (x, &y) in a.iter_mut().zip(b) {
        *x = f(*x, y);
    }
}

/// `f(a[i], b[i])` for every `i`, in order (`a` and `b` of one length).
#[inline]
pub(crate) fn zip_map<E, F>(a: &[E], b: &[E], f: F) -> alloc::vec::Vec<E>
where
    E: Copy + Send + Sync,
    F: Fn(E, E) -> E + Sync + Send,
{
    debug_assert_eq!(a.len(), b.len());
    #[cfg(feature = "rayon")]
    if a.len() >= min_elems() {
        return a
            .par_iter()
            .zip(b.par_iter())
            .with_min_len(CHUNK)
            .map(|(&x, &y)| f(x, y))
            .collect();
    }
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Above and below the threshold, with a length that leaves a short last chunk, the split
    /// loops give exactly the sequential loops' results.
    #[test]
    fn split_loops_equal_sequential_ones() {
        for n in [7, MIN_ELEMS - 1, MIN_ELEMS, 3 * MIN_ELEMS + 5] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 4.0).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let f = |x: f32| libm::erff(x) * x.exp();
            let g = |x: f32, y: f32| x * libm::erff(y) - y.exp();
            let want_map: Vec<f32> = a.iter().map(|&x| f(x)).collect();
            let want_zip: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| g(x, y)).collect();

            assert_eq!(map(&a, f), want_map);
            let mut inplace = a.clone();
            map_inplace(&mut inplace, f);
            assert_eq!(inplace, want_map);
            assert_eq!(zip_map(&a, &b, g), want_zip);
            let mut inplace = a.clone();
            zip_inplace(&mut inplace, &b, g);
            assert_eq!(inplace, want_zip);
        }
    }
}
