//! Traffic sources of the STX system simulation, drawn from the project's
//! PRNG ([`crate::rng`]).
//!
//! At most one cell arrives per input per slot (the input link carries one
//! cell per slot). Every source is deterministic: the same seed gives the
//! same arrivals, on every machine (integer arithmetic only).

use crate::rng::Rng;

/// The stream of the traffic sources: one seed gives the same arrivals
/// whatever else draws from that seed.
const STREAM: u64 = 0x7a_ff1c;

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
    lambda: f64,
    rng: Rng,
}

impl Bernoulli {
    /// Load `lambda` over `n` outputs, stream fixed by `seed`.
    pub fn new(n: usize, lambda: f64, seed: u64) -> Self {
        Bernoulli {
            n,
            lambda,
            rng: Rng::new(seed, STREAM),
        }
    }
}

impl Traffic for Bernoulli {
    fn arrival(&mut self, _input: usize, _slot: u64) -> Option<usize> {
        if self.rng.chance(self.lambda) {
            Some(self.rng.below(self.n as u64) as usize)
        } else {
            None
        }
    }
}

/// Hot-spot traffic: each slot, each input receives a cell with
/// probability `λ`; it is for the hot output with probability `h`, else for
/// an output drawn uniformly from `0..N` (the hot one included), so the hot
/// output is offered `N λ (h + (1 - h) / N)` cells per slot.
#[derive(Clone, Debug)]
pub struct HotSpot {
    n: usize,
    lambda: f64,
    h: f64,
    hot: usize,
    rng: Rng,
}

impl HotSpot {
    /// Load `lambda` over `n` outputs, a share `h` of it to output `hot`.
    pub fn new(n: usize, lambda: f64, h: f64, hot: usize, seed: u64) -> Self {
        HotSpot {
            n,
            lambda,
            h,
            hot,
            rng: Rng::new(seed, STREAM),
        }
    }
}

impl Traffic for HotSpot {
    fn arrival(&mut self, _input: usize, _slot: u64) -> Option<usize> {
        if !self.rng.chance(self.lambda) {
            return None;
        }
        if self.rng.chance(self.h) {
            Some(self.hot)
        } else {
            Some(self.rng.below(self.n as u64) as usize)
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
    start: f64,
    end: f64,
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
            start: q,
            end: 1.0 / burst,
            dest: vec![None; n],
            rng: Rng::new(seed, STREAM),
        }
    }
}

impl Traffic for OnOff {
    fn arrival(&mut self, input: usize, _slot: u64) -> Option<usize> {
        let d = match self.dest[input] {
            Some(d) => d,
            None => {
                if !self.rng.chance(self.start) {
                    return None;
                }
                self.rng.below(self.n as u64) as usize
            }
        };
        self.dest[input] = if self.rng.chance(self.end) {
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
    fn same_seed_same_arrivals() {
        let draw = |seed| {
            let mut t = OnOff::new(8, 0.5, 4.0, seed);
            (0..64u64)
                .flat_map(|s| (0..8).map(move |i| (s, i)))
                .map(|(s, i)| t.arrival(i, s))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
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
    fn hot_spot_share() {
        let (n, lam, h) = (16, 0.5, 0.3);
        let mut t = HotSpot::new(n, lam, h, 5, 2);
        let (mut cells, mut hot) = (0u64, 0u64);
        for s in 0..40_000 {
            for i in 0..n {
                if let Some(j) = t.arrival(i, s) {
                    cells += 1;
                    hot += u64::from(j == 5);
                }
            }
        }
        let load = cells as f64 / (n as f64 * 40_000.0);
        assert!((load - lam).abs() < 0.005, "load {load}");
        let share = hot as f64 / cells as f64;
        let want = h + (1.0 - h) / n as f64;
        assert!(
            (share - want).abs() < 0.005,
            "hot share {share}, want {want}"
        );
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
