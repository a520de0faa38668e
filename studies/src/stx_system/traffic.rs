//! Traffic sources of the STX system simulation and the seeded PRNG they use.
//!
//! At most one cell arrives per input per slot (the input link carries one
//! cell per slot). Every source is deterministic: the same seed gives the
//! same arrivals, on every machine (integer arithmetic only).

/// SplitMix64 (Steele, Lea, Flood 2014): used to expand a 64-bit seed into
/// the state of [`Rng`].
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** (Blackman & Vigna 2018), seeded through SplitMix64. Owned
/// by its user; no global state.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// True with probability `thr / 2^64` (see [`threshold`]).
    pub fn chance(&mut self, thr: u64) -> bool {
        thr == u64::MAX || self.next_u64() < thr
    }

    /// Uniform in `0..n` (`n >= 1`), by the multiply-high method.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// The integer threshold of probability `p`: `floor(p * 2^64)`, saturated
/// (`u64::MAX` stands for 1).
pub fn threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else if p <= 0.0 {
        0
    } else {
        (p * 18_446_744_073_709_551_616.0) as u64
    }
}

/// A source of cells: at most one arrival per input per slot.
pub trait Traffic {
    /// The output of the cell arriving at `input` in `slot`, if any. Called
    /// once per input per slot, inputs in increasing order, slots in
    /// increasing order.
    fn arrival(&mut self, input: usize, slot: u64) -> Option<usize>;
}

/// Uniform Bernoulli traffic: each slot, each input receives a cell with
/// probability `λ`, for an output drawn uniformly from `0..N`.
#[derive(Clone, Debug)]
pub struct Bernoulli {
    n: usize,
    thr: u64,
    rng: Rng,
}

impl Bernoulli {
    /// Load `lambda` over `n` outputs, stream fixed by `seed`.
    pub fn new(n: usize, lambda: f64, seed: u64) -> Self {
        Bernoulli {
            n,
            thr: threshold(lambda),
            rng: Rng::new(seed),
        }
    }
}

impl Traffic for Bernoulli {
    fn arrival(&mut self, _input: usize, _slot: u64) -> Option<usize> {
        if self.thr != 0 && self.rng.chance(self.thr) {
            Some(self.rng.below(self.n))
        } else {
            None
        }
    }
}

/// On/off bursty traffic: each input alternates geometric bursts of mean
/// length `L` cells (one per slot, all to one output drawn uniformly per
/// burst) and geometric idle periods of mean `L (1 - λ) / λ` slots, so that
/// the load is `λ`. In an idle slot a burst starts with probability
/// `q = λ / (λ + L (1 - λ))` (its first cell arrives in that slot); after
/// each cell of a burst the burst ends with probability `1 / L`.
#[derive(Clone, Debug)]
pub struct OnOff {
    n: usize,
    start_thr: u64,
    end_thr: u64,
    dest: Vec<Option<usize>>,
    rng: Rng,
}

impl OnOff {
    /// Load `lambda`, mean burst length `burst` (>= 1) cells, `n` ports.
    pub fn new(n: usize, lambda: f64, burst: f64, seed: u64) -> Self {
        assert!(burst >= 1.0, "mean burst length must be at least 1");
        let q = lambda / (lambda + burst * (1.0 - lambda));
        OnOff {
            n,
            start_thr: threshold(q),
            end_thr: threshold(1.0 / burst),
            dest: vec![None; n],
            rng: Rng::new(seed),
        }
    }
}

impl Traffic for OnOff {
    fn arrival(&mut self, input: usize, _slot: u64) -> Option<usize> {
        let d = match self.dest[input] {
            Some(d) => d,
            None => {
                if self.start_thr == 0 || !self.rng.chance(self.start_thr) {
                    return None;
                }
                self.rng.below(self.n)
            }
        };
        self.dest[input] = if self.rng.chance(self.end_thr) {
            None
        } else {
            Some(d)
        };
        Some(d)
    }
}

/// A scripted list of arrivals `(slot, input, output)`, for directed tests.
#[derive(Clone, Debug, Default)]
pub struct Script {
    events: std::collections::BTreeMap<(u64, usize), usize>,
}

impl Script {
    /// The arrivals `(slot, input, output)`; panics on two arrivals at one
    /// input in one slot.
    pub fn new(arrivals: &[(u64, usize, usize)]) -> Self {
        let mut events = std::collections::BTreeMap::new();
        for &(t, i, j) in arrivals {
            assert!(
                events.insert((t, i), j).is_none(),
                "two arrivals at input {i} in slot {t}"
            );
        }
        Script { events }
    }
}

impl Traffic for Script {
    fn arrival(&mut self, input: usize, slot: u64) -> Option<usize> {
        self.events.get(&(slot, input)).copied()
    }
}

/// No arrivals at all (used to drain a system).
#[derive(Clone, Copy, Debug, Default)]
pub struct Silence;

impl Traffic for Silence {
    fn arrival(&mut self, _input: usize, _slot: u64) -> Option<usize> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn bernoulli_load_and_uniform_destinations() {
        let mut t = Bernoulli::new(8, 0.3, 1);
        let mut per_out = [0u64; 8];
        let slots = 50_000;
        for s in 0..slots {
            for i in 0..8 {
                if let Some(j) = t.arrival(i, s) {
                    per_out[j] += 1;
                }
            }
        }
        let total: u64 = per_out.iter().sum();
        let load = total as f64 / (8 * slots) as f64;
        assert!((load - 0.3).abs() < 0.005, "load {load}");
        for &c in &per_out {
            assert!((c as f64 / total as f64 - 0.125).abs() < 0.005);
        }
    }

    #[test]
    fn on_off_load_and_burst_length() {
        let (lam, l) = (0.4, 16.0);
        let mut t = OnOff::new(8, lam, l, 3);
        let slots = 200_000;
        let mut cells = 0u64;
        let mut bursts = 0u64;
        let mut last: Vec<Option<usize>> = vec![None; 8];
        for s in 0..slots {
            for (i, prev) in last.iter_mut().enumerate() {
                let a = t.arrival(i, s);
                if a.is_some() {
                    cells += 1;
                    // a new burst starts after an idle slot (back-to-back
                    // bursts to the same output are counted as one; rare)
                    if prev.is_none() || *prev != a {
                        bursts += 1;
                    }
                }
                *prev = a;
            }
        }
        let load = cells as f64 / (8 * slots) as f64;
        assert!((load - lam).abs() < 0.01, "load {load}");
        let mean = cells as f64 / bursts as f64;
        assert!((mean - l).abs() < 1.5, "mean burst {mean}");
    }
}
