//! Element-wise loops split across rayon's pool above a small size and compiled for AVX2, or
//! AVX-512, where the CPU has it (embedlab patch, see `vendor/README.md`; an upstream candidate).
//!
//! flex runs a closure-based element-wise kernel (`unary_op`, `binary_op`, `scalar_op`) on the
//! calling thread whatever its size; only the SIMD add/sub/mul/div kernels split, above 4M
//! elements (`simd/portable.rs`), a threshold chosen for memory-bound arithmetic. The closures
//! that reach these loops are often transcendental: `exp` (softmax, log-softmax), `erf` (exact
//! GELU and its backward), `ln`. They cost 5-20 ns an element with libm, so a 1M-element GELU
//! kept one core busy for milliseconds while the others waited. Splitting at [`MIN_ELEMS`] pays
//! rayon's few microseconds of scheduling many times over.
//!
//! The crate is compiled for the baseline x86-64 (SSE2), so a loop the compiler vectorizes does
//! 4 lanes at a time at best. Each loop here is also built with AVX2 + FMA enabled and chosen at
//! run time, so straight-line closures (`crate::vmath`'s exp and erf) run 8 lanes at a time, and
//! with AVX-512 F/VL/BW/DQ as well, for 16 lanes where the CPU has those.
//!
//! None of this changes a result: an element is computed by the same closure from the same inputs
//! whichever thread and whichever build runs it (Rust never contracts `a * b + c` into an FMA,
//! and libm calls stay calls), so results are bit-identical to the sequential baseline loops.

#[cfg(feature = "rayon")]
use rayon::prelude::*;

use crate::zip::ZipNest;

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

/// Whether the loops below run compiled for AVX2 + FMA (detected once at run time; the crate
/// itself is built for the baseline x86-64). `FLEX_NO_AVX2=1` keeps the baseline code, so one
/// binary can measure both.
#[cfg(all(target_arch = "x86_64", feature = "std"))]
fn avx2() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::env::var("FLEX_NO_AVX2").map_or(true, |v| v != "1")
    })
}
#[cfg(not(all(target_arch = "x86_64", feature = "std")))]
fn avx2() -> bool {
    false
}

/// Whether the loops below run compiled for AVX-512 (F, VL, BW, DQ) on top of AVX2 + FMA
/// (detected once at run time). `FLEX_NO_AVX512=1` keeps the AVX2 build, `FLEX_NO_AVX2=1` the
/// baseline one, so one binary can measure each.
#[cfg(all(target_arch = "x86_64", feature = "std"))]
fn avx512() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        avx2()
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq")
            && std::env::var("FLEX_NO_AVX512").map_or(true, |v| v != "1")
    })
}
#[cfg(not(all(target_arch = "x86_64", feature = "std")))]
fn avx512() -> bool {
    false
}

/// Whether broadcast and strided binary ops go through [`nest_apply_inplace`] and [`nest_map`]
/// (the default) or flex 0.22.1's sequential baseline loops in `zip.rs` (`FLEX_SEQ_BROADCAST=1`,
/// read once, so that one binary can measure both).
#[cfg(feature = "std")]
fn split_broadcast() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| std::env::var("FLEX_SEQ_BROADCAST").map_or(true, |v| v != "1"))
}
#[cfg(not(feature = "std"))]
fn split_broadcast() -> bool {
    true
}

// The sequential loops, each in three builds: as the crate is compiled, with AVX2 + FMA enabled
// and with AVX-512 on top, so that a closure of straight-line arithmetic (`crate::vmath`'s exp
// and erf, a GELU) inlines into 8- or 16-lane code. Rust never fuses `a * b + c` into an FMA on
// its own, and libm calls stay the same calls, so every build computes each element to the same
// bits.
macro_rules! multiversion {
    // One build of every loop, compiled with `$features` enabled.
    (@build $module:ident, $features:literal, $cpu:literal;
     $(fn $name:ident<$($g:ident),*>($($arg:ident: $ty:ty),*) where [$($w:tt)*])*) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            $(
                /// # Safety
                #[doc = concat!("The CPU must have ", $cpu, ".")]
                #[cfg(target_arch = "x86_64")]
                #[target_feature(enable = $features)]
                pub(super) unsafe fn $name<$($g),*>($($arg: $ty),*) where $($w)* {
                    super::$name($($arg),*)
                }
            )*
        }
    };
    ($(fn $name:ident<$($g:ident),*>($($arg:ident: $ty:ty),*) where [$($w:tt)*] $body:block)*) => {
        $(
            #[inline(always)]
            fn $name<$($g),*>($($arg: $ty),*) where $($w)* $body
        )*
        multiversion!(@build avx2_build, "avx2,fma", "AVX2 and FMA";
            $(fn $name<$($g),*>($($arg: $ty),*) where [$($w)*])*);
        multiversion!(@build avx512_build, "avx2,fma,avx512f,avx512vl,avx512bw,avx512dq",
            "AVX2, FMA and AVX-512 F, VL, BW and DQ";
            $(fn $name<$($g),*>($($arg: $ty),*) where [$($w)*])*);
    };
}

multiversion! {
    fn update<E, F>(xs: &mut [E], f: &F) where [E: Copy, F: Fn(E) -> E] {
        for x in xs.iter_mut() {
            *x = f(*x);
        }
    }
    fn fill<E, R, F>(out: &mut [core::mem::MaybeUninit<R>], xs: &[E], f: &F)
    where [E: Copy, F: Fn(E) -> R] {
        for (o, &x) in out.iter_mut().zip(xs) {
            o.write(f(x));
        }
    }
    fn update2<E, F>(a: &mut [E], b: &[E], f: &F) where [E: Copy, F: Fn(E, E) -> E] {
        for (x, &y) in a.iter_mut().zip(b) {
            *x = f(*x, y);
        }
    }
    fn fill2<E, F>(out: &mut [core::mem::MaybeUninit<E>], a: &[E], b: &[E], f: &F)
    where [E: Copy, F: Fn(E, E) -> E] {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            o.write(f(x, y));
        }
    }
    fn fill2_kernel<K>(out: &mut [core::mem::MaybeUninit<f32>], a: &[f32], b: &[f32], k: &K)
    where [K: Kernel2] {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            o.write(k.apply(x, y));
        }
    }
    fn each_row<F>(input: &[f32], output: &mut [f32], row_len: usize, f: &F)
    where [F: Fn(&[f32], &mut [f32])] {
        for (i, o) in input.chunks(row_len).zip(output.chunks_mut(row_len)) {
            f(i, o);
        }
    }
    fn nest_update<D, S, F>(nest: &ZipNest, start: usize, dst: &mut [D], src: &[S], f: &F)
    where [D: Copy, S: Copy, F: Fn(D, S) -> D] {
        // `dst` holds output elements start.. of a dense destination; `src` is walked by the
        // nest's rhs side. The inner-loop specializations are zip_apply_inplace's.
        let (len, _, r_st) = nest.inner();
        let mut done = 0;
        let mut skip = start % len;
        nest.for_runs_from(start / len, |_, rb| {
            let n = (len - skip).min(dst.len() - done);
            let d = &mut dst[done..done + n];
            match r_st {
                1 => {
                    for (x, &y) in d.iter_mut().zip(&src[rb + skip..rb + skip + n]) {
                        *x = f(*x, y);
                    }
                }
                0 => {
                    let y = src[rb];
                    for x in d.iter_mut() {
                        *x = f(*x, y);
                    }
                }
                _ => {
                    for (i, x) in d.iter_mut().enumerate() {
                        *x = f(*x, src[rb + (skip + i) * r_st as usize]);
                    }
                }
            }
            done += n;
            skip = 0;
            done < dst.len()
        });
    }
    fn nest_fill<L, R, O, F>(
        nest: &ZipNest,
        start: usize,
        out: &mut [core::mem::MaybeUninit<O>],
        lhs: &[L],
        rhs: &[R],
        f: &F
    )
    where [L: Copy, R: Copy, F: Fn(L, R) -> O] {
        // `out` holds output elements start.., in row-major order; the inner-loop
        // specializations are zip::zip_map's.
        let (len, l_st, r_st) = nest.inner();
        let mut done = 0;
        let mut skip = start % len;
        nest.for_runs_from(start / len, |lb, rb| {
            let n = (len - skip).min(out.len() - done);
            let o = &mut out[done..done + n];
            match (l_st, r_st) {
                (1, 1) => {
                    let (a, b) = (&lhs[lb + skip..lb + skip + n], &rhs[rb + skip..rb + skip + n]);
                    for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
                        o.write(f(x, y));
                    }
                }
                (1, 0) => {
                    let y = rhs[rb];
                    for (o, &x) in o.iter_mut().zip(&lhs[lb + skip..lb + skip + n]) {
                        o.write(f(x, y));
                    }
                }
                (0, 1) => {
                    let x = lhs[lb];
                    for (o, &y) in o.iter_mut().zip(&rhs[rb + skip..rb + skip + n]) {
                        o.write(f(x, y));
                    }
                }
                _ => {
                    for (i, o) in o.iter_mut().enumerate() {
                        let k = skip + i;
                        o.write(f(lhs[lb + k * l_st as usize], rhs[rb + k * r_st as usize]));
                    }
                }
            }
            done += n;
            skip = 0;
            done < out.len()
        });
    }
}

/// Calls the AVX-512 build of a loop where the CPU has it, else the AVX2 build where it has that,
/// else the baseline build.
#[cfg(target_arch = "x86_64")]
macro_rules! dispatch {
    ($name:ident($($arg:expr),*)) => {
        if avx512() {
            // SAFETY: avx512() checked that the CPU has AVX2, FMA and those AVX-512 parts.
            unsafe { avx512_build::$name($($arg),*) }
        } else if avx2() {
            // SAFETY: avx2() checked that the CPU has AVX2 and FMA.
            unsafe { avx2_build::$name($($arg),*) }
        } else {
            $name($($arg),*)
        }
    };
}
#[cfg(not(target_arch = "x86_64"))]
macro_rules! dispatch {
    ($name:ident($($arg:expr),*)) => {
        $name($($arg),*)
    };
}

/// `*x = f(*x)` for every element, split across threads above [`min_elems`] elements.
#[inline]
pub(crate) fn map_inplace<E, F>(xs: &mut [E], f: F)
where
    E: Copy + Send + Sync,
    F: Fn(E) -> E + Sync + Send,
{
    #[cfg(feature = "rayon")]
    if xs.len() >= min_elems() {
        xs.par_chunks_mut(CHUNK)
            .for_each(|c| dispatch!(update(c, &f)));
        return;
    }
    dispatch!(update(xs, &f))
}

/// `f(x)` for every element into a new vector, split across threads above [`min_elems`].
#[inline]
pub(crate) fn map<E, R, F>(xs: &[E], f: F) -> alloc::vec::Vec<R>
where
    E: Copy + Send + Sync,
    R: Send,
    F: Fn(E) -> R + Sync + Send,
{
    let mut out = alloc::vec::Vec::with_capacity(xs.len());
    let spare = &mut out.spare_capacity_mut()[..xs.len()];
    #[cfg(feature = "rayon")]
    if xs.len() >= min_elems() {
        spare
            .par_chunks_mut(CHUNK)
            .zip(xs.par_chunks(CHUNK))
            .for_each(|(o, c)| dispatch!(fill(o, c, &f)));
    } else {
        dispatch!(fill(spare, xs, &f));
    }
    #[cfg(not(feature = "rayon"))]
    dispatch!(fill(spare, xs, &f));
    // SAFETY: `fill` wrote each of the first xs.len() elements.
    unsafe { out.set_len(xs.len()) };
    out
}

/// `*x = f(*x, y)` element by element, split across threads above [`min_elems`] elements.
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
            .for_each(|(ac, bc)| dispatch!(update2(ac, bc, &f)));
        return;
    }
    dispatch!(update2(a, b, &f))
}

/// `f(x, y)` element by element into a new vector, split across threads above [`min_elems`].
#[inline]
pub(crate) fn zip_map<E, F>(a: &[E], b: &[E], f: F) -> alloc::vec::Vec<E>
where
    E: Copy + Send + Sync,
    F: Fn(E, E) -> E + Sync + Send,
{
    debug_assert_eq!(a.len(), b.len());
    let n = a.len().min(b.len());
    let mut out = alloc::vec::Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    #[cfg(feature = "rayon")]
    if n >= min_elems() {
        spare
            .par_chunks_mut(CHUNK)
            .zip(a[..n].par_chunks(CHUNK))
            .zip(b[..n].par_chunks(CHUNK))
            .for_each(|((o, ac), bc)| dispatch!(fill2(o, ac, bc, &f)));
    } else {
        dispatch!(fill2(spare, &a[..n], &b[..n], &f));
    }
    #[cfg(not(feature = "rayon"))]
    dispatch!(fill2(spare, &a[..n], &b[..n], &f));
    // SAFETY: `fill2` wrote each of the first n elements.
    unsafe { out.set_len(n) };
    out
}

/// An element-wise f32 function of two arguments whose `apply` is `#[inline(always)]`. A closure
/// of more than a few dozen instructions (the GELU gradient's erf and exp) is not inlined into a
/// loop, which then calls it once per element and cannot vectorize; a kernel type is.
pub(crate) trait Kernel2: Sync {
    fn apply(&self, x: f32, y: f32) -> f32;
}

/// [`zip_map`] for a [`Kernel2`].
pub(crate) fn zip_map_kernel<K: Kernel2>(a: &[f32], b: &[f32], k: K) -> alloc::vec::Vec<f32> {
    let n = a.len().min(b.len());
    let mut out = alloc::vec::Vec::with_capacity(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    #[cfg(feature = "rayon")]
    if n >= min_elems() {
        spare
            .par_chunks_mut(CHUNK)
            .zip(a[..n].par_chunks(CHUNK))
            .zip(b[..n].par_chunks(CHUNK))
            .for_each(|((o, ac), bc)| dispatch!(fill2_kernel(o, ac, bc, &k)));
    } else {
        dispatch!(fill2_kernel(spare, &a[..n], &b[..n], &k));
    }
    #[cfg(not(feature = "rayon"))]
    dispatch!(fill2_kernel(spare, &a[..n], &b[..n], &k));
    // SAFETY: `fill2_kernel` wrote each of the first n elements.
    unsafe { out.set_len(n) };
    out
}

/// [`crate::zip::zip_apply_inplace`] (the broadcast and strided binary ops that write into a
/// uniquely owned operand: `x - mean`, `x / std`, `y + bias`), split across threads by ranges
/// of [`CHUNK`] output elements above [`min_elems`] and compiled for AVX2 where the CPU has it.
/// flex ran these single-threaded in baseline SSE code; a layer norm's forward and backward
/// are mostly such ops. `dst` must be dense from index 0 over the nest (what
/// `ZipNest::lhs_is_dense_from_zero` checks), and `op` gets `(dst value, src value)`.
pub(crate) fn nest_apply_inplace<D, S, F>(nest: &ZipNest, dst: &mut [D], src: &[S], op: F)
where
    D: Copy + Send + Sync,
    S: Copy + Sync,
    F: Fn(D, S) -> D + Sync + Send,
{
    if nest.ndim == 0 || nest.shape[..nest.ndim].contains(&0) || !split_broadcast() {
        return crate::zip::zip_apply_inplace(nest, dst, src, op);
    }
    let numel: usize = nest.shape[..nest.ndim].iter().product();
    let dst = &mut dst[..numel];
    #[cfg(feature = "rayon")]
    if numel >= min_elems() {
        dst.par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, c)| dispatch!(nest_update(nest, i * CHUNK, c, src, &op)));
        return;
    }
    dispatch!(nest_update(nest, 0, dst, src, &op))
}

/// [`crate::zip::zip_map`] (a broadcast or strided binary op into a new buffer), split across
/// threads by ranges of [`CHUNK`] output elements above [`min_elems`] and compiled for AVX2
/// where the CPU has it. `None` where `zip_map` would give `None` (a layout it cannot collapse).
pub(crate) fn nest_map<L, R, O, F>(
    lhs: &[L],
    lhs_layout: &crate::layout::Layout,
    rhs: &[R],
    rhs_layout: &crate::layout::Layout,
    op: F,
) -> Option<alloc::vec::Vec<O>>
where
    L: Copy + Sync,
    R: Copy + Sync,
    O: Send,
    F: Fn(L, R) -> O + Sync + Send,
{
    let numel = lhs_layout.num_elements();
    let nest = crate::zip::collapse_for_zip(lhs_layout, rhs_layout)?;
    if numel == 0 || nest.ndim == 0 || !split_broadcast() {
        return crate::zip::zip_map(lhs, lhs_layout, rhs, rhs_layout, op);
    }
    let mut out = alloc::vec::Vec::with_capacity(numel);
    let spare = &mut out.spare_capacity_mut()[..numel];
    #[cfg(feature = "rayon")]
    if numel >= min_elems() {
        spare
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(i, c)| dispatch!(nest_fill(&nest, i * CHUNK, c, lhs, rhs, &op)));
    } else {
        dispatch!(nest_fill(&nest, 0, spare, lhs, rhs, &op));
    }
    #[cfg(not(feature = "rayon"))]
    dispatch!(nest_fill(&nest, 0, spare, lhs, rhs, &op));
    // SAFETY: `nest_fill` wrote each of the first numel elements, in row-major order.
    unsafe { out.set_len(numel) };
    Some(out)
}

/// Runs `f` on every row of `input` / `output` (rows of `row_len` elements), compiled for AVX2
/// where the CPU has it, split across threads by groups of rows of about 64K elements.
pub(crate) fn rows<F>(input: &[f32], output: &mut [f32], row_len: usize, f: F)
where
    F: Fn(&[f32], &mut [f32]) + Sync + Send,
{
    assert_eq!(input.len(), output.len());
    if row_len == 0 {
        return;
    }
    #[cfg(feature = "rayon")]
    {
        let per_task = (65_536 / row_len).max(1) * row_len;
        if input.len() > per_task {
            output
                .par_chunks_mut(per_task)
                .zip(input.par_chunks(per_task))
                .for_each(|(o, i)| dispatch!(each_row(i, o, row_len, &f)));
            return;
        }
    }
    dispatch!(each_row(input, output, row_len, &f))
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

    /// The split, AVX2-built broadcast/strided loops ([`nest_apply_inplace`], [`nest_map`])
    /// give exactly the sequential `zip.rs` loops' results, for each inner-loop specialization
    /// (row broadcast `[n, d] op [n, 1]`, column broadcast `[n, d] op [1, d]`, a broadcast on
    /// the left, a transposed operand, a scalar), below and above the threshold, with runs
    /// that do not divide the chunk and chunks that start mid-run.
    #[test]
    fn split_nest_loops_equal_sequential_ones() {
        use crate::layout::Layout;
        use burn_std::Shape;
        let contiguous = |s: &[usize]| Layout::contiguous(Shape::from(s.to_vec()));
        // `small` expanded to `full`: stride 0 on its size-1 dims, as `expand` does.
        let expanded = |small: &[usize], full: &[usize]| {
            let mut strides = contiguous(small).strides().to_vec();
            for d in 0..small.len() {
                if small[d] == 1 && full[d] != 1 {
                    strides[d] = 0;
                }
            }
            Layout::new(Shape::from(full.to_vec()), strides, 0)
        };
        let g = |x: f32, y: f32| x * libm::erff(y) - y.exp();
        let data = |n: usize, k: f32| -> Vec<f32> {
            (0..n).map(|i| ((i as f32 + k) * 0.37).sin() * 3.0).collect()
        };
        for rows in [5, 301, 3 * MIN_ELEMS / 100 + 7] {
            let d = 100;
            let full = [rows, d];
            let cases: Vec<(Layout, Layout, usize, usize)> = vec![
                (contiguous(&full), expanded(&[rows, 1], &full), rows * d, rows),
                (contiguous(&full), expanded(&[1, d], &full), rows * d, d),
                (expanded(&[rows, 1], &full), contiguous(&full), rows, rows * d),
                (
                    contiguous(&full),
                    contiguous(&[d, rows]).transpose(0, 1),
                    rows * d,
                    rows * d,
                ),
                (contiguous(&[rows * d]), expanded(&[1], &[rows * d]), rows * d, 1),
                (
                    contiguous(&[rows, 2, 50]),
                    expanded(&[rows, 1, 50], &[rows, 2, 50]),
                    rows * d,
                    rows * 50,
                ),
            ];
            for (k, (ll, rl, ln, rn)) in cases.into_iter().enumerate() {
                let (a, b) = (data(ln, 0.0), data(rn, 1.5));
                let want = crate::zip::zip_map(&a, &ll, &b, &rl, g).unwrap();
                assert_eq!(nest_map(&a, &ll, &b, &rl, g).unwrap(), want, "map {k} rows {rows}");
                let nest = crate::zip::collapse_for_zip(&ll, &rl).unwrap();
                if nest.lhs_is_dense_from_zero() {
                    let (mut seq, mut split) = (a.clone(), a.clone());
                    crate::zip::zip_apply_inplace(&nest, &mut seq, &b, g);
                    nest_apply_inplace(&nest, &mut split, &b, g);
                    assert_eq!(split, seq, "in place {k} rows {rows}");
                    assert_eq!(split, want, "in place vs map {k} rows {rows}");
                }
            }
        }
    }
}
