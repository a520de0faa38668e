//! The traffic of the network study (seed 002, section 5.2): self-similar
//! bursts, and the hot-spot case.
//!
//! Per end point and service level, an independent on/off source: a burst
//! is a run of packets to one destination drawn uniformly (never the source
//! itself), until the burst holds at least the burst size (30 KB best
//! effort, 5 KB QoS: 480 and 80 cells); its packets are born one after the
//! other at the link rate (a packet of `c` cells, then the next `c` slots
//! later). Packet sizes: a bounded Pareto of shape [`PARETO_ALPHA`] from
//! 64 B to the maximum packet (2 KB), in whole 64-byte cells
//! ([`pareto_cells`]), drawn from a table of thresholds. Between bursts, an idle period,
//! geometric in slots (the slotted Poisson process), of mean
//! `B (1 - ρ) / ρ` for a mean burst of `B` cells and a load `ρ` per
//! service level, so that each service level offers `ρ` of the link.
//!
//! Every service level gets an eighth of the input load (the seed does not
//! give the mix; an equal split keeps QoS at half the links at full load, so
//! the admission control of seed section 3.1 holds).
//!
//! Hot spot ([`Pattern::HotSpot`]): every `every`-th end point (`0`,
//! `every`, `2 every`, ...: one per `every` end points, spread over the
//! leaf switches, so that the hot flows share links, input buffers and
//! VCs with other flows on their way up) sends all its best-effort traffic
//! to end point `N - 1` at the full per-level load, an oversubscribed
//! destination; the others (the victims) send to uniform destinations
//! other than `N - 1`. Under uniform traffic the same end points are the
//! victims ([`hot_source`]), for comparison.

use crate::rng::{threshold, Rng};

/// The stream of the network's traffic sources.
const STREAM: u64 = 0x02ec_74e7;

/// Shape of the bounded Pareto packet size.
pub const PARETO_ALPHA: f64 = 1.2;

/// Service levels.
pub const SLS: usize = 8;

/// Which destinations the sources use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// Uniform destinations for every level.
    Uniform,
    /// Every `every`-th end point sends its best-effort traffic to the
    /// last end point.
    HotSpot,
}

/// Whether `e` is a hot source of a hot spot of one source in `every` of
/// `n` end points (`N - 1`, the hot destination, is none).
pub fn hot_source(e: usize, every: usize, n: usize) -> bool {
    e.is_multiple_of(every) && e + 1 != n
}

/// A packet born at a network interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Birth {
    /// Destination.
    pub dst: usize,
    /// Service level.
    pub sl: u8,
    /// Cells (1..=max).
    pub cells: u8,
}

#[derive(Clone, Copy, Debug)]
struct Source {
    /// Destination of the current burst, cells left in it.
    burst: Option<(usize, u32)>,
    /// The slot the next packet of the burst is born.
    next: u64,
}

/// The self-similar sources of every end point and service level.
#[derive(Clone, Debug)]
pub struct Traffic {
    n: usize,
    pattern: Pattern,
    every: usize,
    /// Cumulative size thresholds: packet of `i + 1` cells if the draw is
    /// below `cdf[i]` (and not below `cdf[i - 1]`).
    cdf: Vec<u64>,
    /// Per level: burst cells, start threshold per idle slot.
    level: [(u32, f64); SLS],
    src: Vec<Source>,
    rng: Rng,
}

/// The mass of `1..=max` cells: a bounded Pareto of shape `alpha` over
/// `[1, max + 1)` cells, rounded down (sizes from 64 B to `64 max` B).
pub fn pareto_cells(max: usize, alpha: f64) -> Vec<f64> {
    let (l, h) = (1.0f64, max as f64 + 1.0);
    let cdf = |x: f64| (1.0 - (l / x).powf(alpha)) / (1.0 - (l / h).powf(alpha));
    (1..=max)
        .map(|c| cdf(c as f64 + 1.0) - cdf(c as f64))
        .collect()
}

/// Mean cells per packet of [`pareto_cells`].
pub fn mean_cells(max: usize, alpha: f64) -> f64 {
    pareto_cells(max, alpha)
        .iter()
        .enumerate()
        .map(|(i, p)| (i + 1) as f64 * p)
        .sum()
}

impl Traffic {
    /// `n` end points, input `load` (fraction of a link) split equally over
    /// the 8 levels, packets of at most `max_cells` cells, best-effort and
    /// QoS bursts of `be_burst` and `qos_burst` cells; hot sources one in
    /// `every`; stream fixed by `seed`.
    pub fn new(
        n: usize,
        load: f64,
        max_cells: usize,
        (be_burst, qos_burst): (u32, u32),
        pattern: Pattern,
        every: usize,
        seed: u64,
    ) -> Self {
        let mass = pareto_cells(max_cells, PARETO_ALPHA);
        let mut acc = 0.0;
        let mut cdf: Vec<u64> = mass
            .iter()
            .map(|p| {
                acc += p;
                threshold(acc)
            })
            .collect();
        *cdf.last_mut().expect("max >= 1") = u64::MAX;
        let mean = mean_cells(max_cells, PARETO_ALPHA);
        let rho = load / SLS as f64;
        let level = std::array::from_fn(|sl| {
            let b = if sl < 4 { qos_burst } else { be_burst };
            // Mean cells of a burst: its size plus the mean overshoot of
            // the last packet (about half a mean packet).
            let mb = b as f64 + mean / 2.0;
            let gap = mb * (1.0 - rho) / rho;
            (b, 1.0 / (1.0 + gap))
        });
        Traffic {
            n,
            pattern,
            every,
            cdf,
            level,
            src: vec![
                Source {
                    burst: None,
                    next: 0
                };
                n * SLS
            ],
            rng: Rng::new(seed, STREAM),
        }
    }

    fn cells(&mut self) -> u8 {
        let x = self.rng.u64();
        (self.cdf.partition_point(|&t| t <= x) + 1).min(self.cdf.len()) as u8
    }

    /// Whether `e` is a hot source of best-effort traffic.
    pub fn is_hot(&self, e: usize) -> bool {
        self.pattern == Pattern::HotSpot && hot_source(e, self.every, self.n)
    }

    /// Whether `e` is a victim: not a hot source of the hot spot (under
    /// uniform traffic too).
    pub fn is_victim(&self, e: usize) -> bool {
        !hot_source(e, self.every, self.n)
    }

    fn destination(&mut self, e: usize, sl: usize) -> usize {
        match self.pattern {
            Pattern::HotSpot if sl >= 4 => {
                if hot_source(e, self.every, self.n) {
                    self.n - 1
                } else if e == self.n - 1 {
                    self.rng.below(self.n as u64 - 1) as usize
                } else {
                    // uniform over the others, without e and n - 1
                    let d = self.rng.below(self.n as u64 - 2) as usize;
                    if d >= e {
                        d + 1
                    } else {
                        d
                    }
                }
            }
            _ => {
                let d = self.rng.below(self.n as u64 - 1) as usize;
                if d >= e {
                    d + 1
                } else {
                    d
                }
            }
        }
    }

    /// The packets born at end point `e` in slot `t` (called once per end
    /// point per slot, end points in order, slots in order), into `out`.
    pub fn births(&mut self, e: usize, t: u64, out: &mut Vec<Birth>) {
        for sl in 0..SLS {
            let k = e * SLS + sl;
            let mut s = self.src[k];
            if s.burst.is_none() {
                let start = self.level[sl].1;
                if !self.rng.chance(start) {
                    continue;
                }
                let dst = self.destination(e, sl);
                s.burst = Some((dst, self.level[sl].0));
                s.next = t;
            }
            if let Some((dst, left)) = s.burst {
                if s.next == t {
                    let cells = self.cells();
                    out.push(Birth {
                        dst,
                        sl: sl as u8,
                        cells,
                    });
                    s.next = t + cells as u64;
                    s.burst = (left > cells as u32).then(|| (dst, left - cells as u32));
                }
            }
            self.src[k] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_mass_sums_to_one_and_favours_small_packets() {
        let m = pareto_cells(32, PARETO_ALPHA);
        assert!((m.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(m[0] > 0.5 && m[31] < 0.01, "{m:?}");
        let mean = mean_cells(32, PARETO_ALPHA);
        assert!((2.0..6.0).contains(&mean), "{mean}");
    }

    #[test]
    fn offered_load_per_level_and_destinations() {
        let n = 16;
        let load = 0.6;
        let mut t = Traffic::new(n, load, 32, (480, 80), Pattern::Uniform, 4, 5);
        let slots = 400_000u64;
        let mut cells = [0u64; SLS];
        let mut out = Vec::new();
        for s in 0..slots {
            for e in 0..n {
                out.clear();
                t.births(e, s, &mut out);
                for b in &out {
                    assert_ne!(b.dst, e);
                    assert!(b.dst < n && (1..=32).contains(&b.cells));
                    cells[b.sl as usize] += b.cells as u64;
                }
            }
        }
        for (sl, &c) in cells.iter().enumerate() {
            let got = c as f64 / (slots * n as u64) as f64;
            assert!(
                (got - load / 8.0).abs() < 0.1 * load / 8.0,
                "SL {sl}: {got}"
            );
        }
    }

    #[test]
    fn hot_spot_sends_best_effort_to_the_last_end_point() {
        let n = 16;
        let mut t = Traffic::new(n, 0.8, 8, (480, 80), Pattern::HotSpot, 4, 2);
        let mut out = Vec::new();
        for s in 0..50_000 {
            for e in 0..n {
                out.clear();
                t.births(e, s, &mut out);
                for b in &out {
                    if b.sl >= 4 {
                        assert_eq!(b.dst == n - 1, e % 4 == 0, "{e} -> {}", b.dst);
                    }
                }
            }
        }
    }
}
