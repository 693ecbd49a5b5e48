//! Branch-free `exp` and `erf` for f32 that the compiler can vectorize.
//!
//! libm's `expf` and `erff` are calls per element, so every loop that uses them runs one element
//! at a time: the exps of softmax and log-softmax and the erfs and exps of the exact GELU and its
//! gradient took about a seventh of a small transformer's training step (perf: `expf` 8.7%,
//! `erff` 6.0%, on an AVX2 machine). These are
//! straight-line code (selects instead of branches, bit tricks instead of `ldexp`), so a loop
//! over a slice becomes SIMD code: 8 lanes where [`crate::par`] runs it compiled for AVX2.
//!
//! Only correctly rounded IEEE operations are used (`*`, `+`, `/`, comparisons), never `mul_add`,
//! and Rust never contracts `a * b + c` into an FMA on its own: each element's result is the same
//! bits whatever the vector width and whatever the CPU.
//!
//! `FLEX_LIBM=1` (read once) puts libm back in their place, and log-softmax back to the default
//! decomposition, so that one binary can measure both.
//!
//! Accuracy (checked against libm on a dense grid by the tests of the crate that vendors this):
//! [`exp_f32`] within 2 ulp of `expf` where the result is a normal number; results below
//! f32::MIN_POSITIVE (x < -87.33) are 0 instead of a subnormal. [`erf_f32`] within 1e-6 of
//! `erff` absolutely (the rational approximation of Eigen and XLA).

/// Whether flex computes f32 exp and erf with libm as flex 0.22.1 does, and log-softmax by the
/// default decomposition (`FLEX_LIBM=1`, read once), so that one binary can measure both.
#[cfg(feature = "std")]
pub(crate) fn libm() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| std::env::var("FLEX_LIBM").is_ok_and(|v| v == "1"))
}
#[cfg(not(feature = "std"))]
pub(crate) fn libm() -> bool {
    false
}

const LOG2E: f32 = core::f32::consts::LOG2_E;
/// ln 2 split in two (Cephes): `n * LN2_HI` is exact for the `n` that occur.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5 * 2^23: adding it rounds a float of magnitude below 2^22 to an integer (ties to even),
/// which then sits in the low mantissa bits.
const ROUND: f32 = 12_582_912.0;
/// Above this `expf` overflows to infinity.
const EXP_HI: f32 = 88.722_84;
/// Below this `expf` is subnormal; we return 0.
const EXP_LO: f32 = -87.336_55;

/// `e^x` (see the module docs for accuracy and the subnormal range).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let xc = x.clamp(EXP_LO, EXP_HI);
    // n = round(x / ln 2), as a float and as an integer.
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    let ni = (t.to_bits() as i32).wrapping_sub(0x4B40_0000);
    // r = x - n ln 2, in [-ln2/2, ln2/2].
    let r = xc - n * LN2_HI - n * LN2_LO;
    // Cephes expf's polynomial: e^r = 1 + r + r^2 P(r).
    let mut p = 1.987_569_2e-4_f32;
    p = p * r + 1.398_2e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let y = p * (r * r) + r + 1.0;
    // y * 2^n, as two powers of two so that n = 128 (x near EXP_HI) does not overflow the
    // exponent field.
    let half = ni >> 1;
    let s1 = f32::from_bits((half.wrapping_add(127) << 23) as u32);
    let s2 = f32::from_bits((ni.wrapping_sub(half).wrapping_add(127) << 23) as u32);
    let y = y * s1 * s2;
    let y = if x > EXP_HI { f32::INFINITY } else { y };
    let y = if x < EXP_LO { 0.0 } else { y };
    // NaN fails both comparisons above and has been clamped to a number: give it back.
    if x.is_nan() { x } else { y }
}

/// The error function: `x P(x^2) / Q(x^2)` on x clamped to [-4, 4] (erf(±4) rounds to ±1 in
/// f32), the rational approximation Eigen and XLA use.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    let xc = x.clamp(-4.0, 4.0);
    let x2 = xc * xc;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906e-4;
    p = p * x2 - 2.954_600_1e-3;
    p = p * x2 - 1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329e-3;
    q = q * x2 - 1.426_473_9e-2;
    let y = (xc * p / q).clamp(-1.0, 1.0);
    if x.is_nan() { x } else { y }
}
