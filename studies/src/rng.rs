//! The project's one pseudo-random generator for traffic: xoshiro256++
//! (`rand_xoshiro`), seeded through SplitMix64, with the few draws the
//! generators need written so that their values are fixed by this file (not
//! by a distribution crate's implementation, which may change between
//! versions and would silently change what a seed means).
//!
//! This is the traffic's randomness, in the testbenches' generators and in
//! the studies' sources. The blocks' own pseudo-random
//! sequences (LFSRs) are part of the hardware and live in the models and
//! the RTL.

use rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};

/// A seeded stream of random numbers.
#[derive(Clone, Debug)]
pub struct Rng(Xoshiro256PlusPlus);

/// Mixes `seed` and `k` into a new, well-spread seed (SplitMix64 of
/// `seed + k * golden ratio`): the seed of case `k` of a campaign, of a
/// sub-stream of a generator.
pub fn mix(seed: u64, k: u64) -> u64 {
    let mut s = SplitMix64::seed_from_u64(seed.wrapping_add(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    s.next_u64()
}

/// The integer threshold of probability `p` against a draw of [`Rng::u64`]:
/// `floor(p * 2^64)`, saturated (`u64::MAX` stands for 1). For tables of
/// cumulative probabilities searched with one draw.
pub fn threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else if p <= 0.0 {
        0
    } else {
        (p * 18_446_744_073_709_551_616.0) as u64
    }
}

impl Rng {
    /// The stream of `seed`; `stream` separates independent streams of one
    /// seed (traffic, configuration, ...).
    pub fn new(seed: u64, stream: u64) -> Self {
        Rng(Xoshiro256PlusPlus::seed_from_u64(mix(seed, stream)))
    }

    /// 64 random bits.
    #[inline]
    pub fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`), by the widening multiply (Lemire's
    /// method without the rejection step: a bias below `n / 2^64`).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        // 53 bits of the draw against p: exact for p = 0 and p = 1.
        ((self.u64() >> 11) as f64) < p * (1u64 << 53) as f64
    }

    /// True with probability `pm / 1000` (per mille).
    #[inline]
    pub fn chance_pm(&mut self, pm: u32) -> bool {
        self.below(1000) < pm as u64
    }

    /// An index into `weights`, with probability proportional to its weight.
    #[inline]
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        let mut x = self.below(total);
        for (k, &w) in weights.iter().enumerate() {
            if x < w as u64 {
                return k;
            }
            x -= w as u64;
        }
        weights.len() - 1
    }

    /// One element of `xs` (not empty), uniformly.
    #[inline]
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// A random boolean.
    #[inline]
    pub fn bool(&mut self) -> bool {
        self.u64() >> 63 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let a: Vec<u64> = (0..8).map(|_| Rng::new(5, 0).u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::new(5, 0);
        let mut y = Rng::new(5, 1);
        assert_ne!(
            (0..4).map(|_| x.u64()).collect::<Vec<_>>(),
            (0..4).map(|_| y.u64()).collect::<Vec<_>>()
        );
    }

    /// The values of a seed are part of the repro format (a generated
    /// stimulus names only its seed): pinned here so that a dependency
    /// update that changed them fails this test instead of silently
    /// changing what every saved seed means.
    #[test]
    fn values_are_pinned() {
        let mut r = Rng::new(1, 0);
        let v: Vec<u64> = (0..3).map(|_| r.u64()).collect();
        assert_eq!(v, PINNED);
        assert_eq!(mix(1, 0), PINNED_MIX);
    }

    const PINNED: [u64; 3] = [
        8089978747140965633,
        5687923198772495674,
        15915821081677751511,
    ];
    const PINNED_MIX: u64 = 10451216379200822465;

    #[test]
    fn draws_stay_in_range_and_cover_it() {
        let mut r = Rng::new(9, 3);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let x = r.range(3, 9);
            assert!((3..=9).contains(&x));
            seen[(x - 3) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
        let mut w = [0u32; 3];
        for _ in 0..6000 {
            w[r.weighted(&[1, 0, 2])] += 1;
        }
        assert_eq!(w[1], 0);
        assert!(w[2] > w[0] * 3 / 2, "{w:?}");
        assert!(!(0..1000).any(|_| r.chance(0.0)));
        assert!((0..1000).all(|_| r.chance(1.0)));
    }
}
