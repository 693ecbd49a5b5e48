//! SplitMix64 (Steele, Lea & Flood 2014): one add and two multiplies per draw, passes BigCrush,
//! and any 64-bit seed is a good state — so every training job can seed its own generator from
//! (seed, job index) and get the same stream whichever thread runs it.

#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// A generator for job `job` of a run seeded with `seed`.
    pub fn for_job(seed: u64, job: u64) -> Self {
        let mut g = SplitMix64(seed ^ 0x243F_6A88_85A3_08D3);
        let mix = g.next_u64() ^ job.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        SplitMix64(mix)
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 24 bits of precision.
    #[inline(always)]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; bias below 2^-32 for the sizes used here).
    #[inline(always)]
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_and_ranges() {
        // SplitMix64 reference output for seed 1234567.
        let mut g = SplitMix64::new(1234567);
        assert_eq!(g.next_u64(), 6457827717110365317);
        assert_eq!(g.next_u64(), 3203168211198807973);
        let mut g = SplitMix64::new(7);
        let mut counts = [0usize; 5];
        for _ in 0..50_000 {
            let x = g.next_f32();
            assert!((0.0..1.0).contains(&x));
            counts[g.below(5) as usize] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        assert_ne!(
            SplitMix64::for_job(1, 0).next_u64(),
            SplitMix64::for_job(1, 1).next_u64()
        );
    }
}
