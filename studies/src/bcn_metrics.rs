//! The figures of a BCN closed-loop run ([`crate::bcn_loop`]), computed
//! from its windows of statistics, and the 95 % confidence intervals
//! across seeds. The definitions (docs/bcn.md, "Measures"):
//!
//! - **steady state**: the second half of the run. Its per-cycle mean depth
//!   `m` is the steady-state mean; its per-cycle standard deviation `sigma`;
//!   the **offset** is `m - Qeq`; the **drift**, the mean of the last quarter
//!   minus that of the third, says whether the second half is stationary.
//! - **period** `P`: the mean time between up-crossings of `m + sigma/2`
//!   (each after a down-crossing of `m - sigma/2`) by the window means of
//!   the steady state; one window when the windows' means do not cross
//!   twice (the oscillation is faster than a window).
//! - **settling time**: the end of the first window from which the depth
//!   averaged over one period (the trailing mean of `ceil(P / window)`
//!   windows) stays within `m (1 +- SETTLE_BAND)` to the end of the run;
//!   none when that window ends in the second half (the steady state would
//!   still hold the transient). Time 0 is the end of the warm-up.
//! - **peak-to-peak**: per period of the steady state (consecutive blocks of
//!   `ceil(P / window)` windows), the largest minus the smallest depth of
//!   any cycle (the windows keep per-cycle extremes), averaged over the
//!   blocks; also the range over the whole steady state.
//! - **fairness**: Jain's index of the flows' delivered throughputs, each
//!   divided by its max-min fair share, over every block of
//!   `FAIR_WINDOW` cycles of the steady state (mean and worst), and over
//!   the whole steady state.
//! - **overhead**: messages of every point per delivered byte.

use crate::bcn_loop::{Topology, Window, BCN_FRAME_BYTES};

/// The settling band: +-20 % of the steady-state mean, for every setting.
pub const SETTLE_BAND: f64 = 0.2;
/// Cycles of a fairness window.
pub const FAIR_WINDOW: u64 = 100_000;

/// Jain's fairness index of `x`: `(sum x)^2 / (n sum x^2)`, 1 when equal
/// (1 for an empty or all-zero vector).
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    if q == 0.0 {
        1.0
    } else {
        s * s / (x.len() as f64 * q)
    }
}

pub use crate::ci::{mean_ci, t975};

/// One congestion point's figures over a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointFig {
    /// Steady-state mean depth, bytes.
    pub mean: f64,
    /// `mean - Qeq`, bytes.
    pub offset: f64,
    /// Mean of the last quarter minus that of the third, bytes.
    pub drift: f64,
    /// Per-cycle standard deviation of the depth in the steady state, bytes.
    pub std: f64,
    /// Oscillation period, cycles.
    pub period: f64,
    /// Mean per-period peak-to-peak (per-cycle extremes), bytes.
    pub pp: f64,
    /// Largest minus smallest depth over the steady state, bytes.
    pub range: f64,
    /// Settling time, cycles (none: not settled).
    pub settle: Option<f64>,
    /// Share of the steady-state cycles with an empty queue.
    pub empty: f64,
    /// Share of all cycles with an empty queue.
    pub empty_all: f64,
    /// Bytes on the wire per cycle over the steady state, over the drain rate.
    pub util: f64,
    /// Arrivals dropped over the whole run.
    pub drops: u64,
    /// Arrivals dropped in the steady state.
    pub drops_ss: u64,
    /// Share of the arrivals dropped over the whole run.
    pub loss: f64,
    /// Largest depth of the run, bytes.
    pub max_depth: u32,
    /// Messages in the steady state.
    pub msgs: u64,
    /// Of which Fb < 0.
    pub neg: u64,
    /// Of which Fb >= 0.
    pub pos: u64,
    /// Mean Qoff over the samples of the steady state (64 B units).
    pub qoff_samples: f64,
    /// Mean Fb over the samples of the steady state.
    pub fb_samples: f64,
    /// Sum of Fb of the positive messages over the sum of |Fb| of the
    /// negative ones (steady state).
    pub fb_ratio: f64,
    /// Rate increases its messages made, bytes per cycle, steady state,
    /// per million cycles.
    pub inc_rate: f64,
    /// Rate decreases, likewise.
    pub dec_rate: f64,
    /// Increases for flows crossing another point above its Qeq (bytes per
    /// cycle per million cycles, whole run).
    pub against_rate: f64,
    /// Their count over the whole run.
    pub against_n: u64,
    /// Messages the reaction points ignored, whole run.
    pub ignored: u64,
}

/// A run's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFig {
    /// Cycles run (after the warm-up).
    pub cycles: u64,
    /// Per point.
    pub points: Vec<PointFig>,
    /// Mean Jain's index (flows' throughput over their fair share) over the
    /// fairness windows of the steady state.
    pub jain: f64,
    /// The worst fairness window.
    pub jain_min: f64,
    /// Jain's index of the steady-state throughputs.
    pub jain_avg: f64,
    /// Per flow: steady-state throughput, bytes per cycle.
    pub thr: Vec<f64>,
    /// Per flow: steady-state mean limiter rate, bytes per cycle.
    pub rate: Vec<f64>,
    /// Per group: mean throughput per flow over its mean fair share.
    pub group_share: Vec<f64>,
    /// Messages (every point) per delivered megabyte, steady state.
    pub msgs_per_mb: f64,
    /// BCN bytes (64 per message) over delivered bytes, steady state.
    pub overhead: f64,
    /// Delivered bytes per cycle, steady state.
    pub delivered: f64,
    /// Falls back to coarser keys over the run.
    pub fallbacks: u64,
}

fn sum_len(w: &[Window]) -> u64 {
    w.iter().map(|x| x.len).sum()
}

/// Per-cycle mean of point `k`'s depth over `w`.
fn mean_depth(w: &[Window], k: usize) -> f64 {
    let n = sum_len(w);
    if n == 0 {
        return 0.0;
    }
    w.iter().map(|x| x.points[k].depth_sum).sum::<u64>() as f64 / n as f64
}

/// The oscillation period (cycles) of the window means `y` (windows of
/// `len` cycles) around `m` with hysteresis `h`: the mean interval between
/// up-crossings; `len` when they do not cross twice.
pub fn period(y: &[f64], len: f64, m: f64, h: f64) -> f64 {
    let mut ups = vec![];
    let mut low = false;
    for (i, &v) in y.iter().enumerate() {
        if v < m - h {
            low = true;
        } else if low && v > m + h {
            ups.push(i);
            low = false;
        }
    }
    if ups.len() < 2 {
        return len;
    }
    (ups[ups.len() - 1] - ups[0]) as f64 * len / (ups.len() - 1) as f64
}

/// The settling time: the end (cycles after `t0`) of the first window from
/// which the trailing mean of `k` window means stays within `m (1 +- band)`
/// to the end; none when the last one is outside. `y` are the windows'
/// means and `ends` their end times.
pub fn settling(y: &[f64], ends: &[u64], k: usize, m: f64, band: f64) -> Option<f64> {
    let k = k.max(1);
    let n = y.len();
    if n < k {
        return None;
    }
    let mut first = None;
    let mut acc: f64 = y[..k - 1].iter().sum();
    for i in k - 1..n {
        acc += y[i];
        let z = acc / k as f64;
        acc -= y[i + 1 - k];
        if (z - m).abs() <= band * m {
            first.get_or_insert(i);
        } else {
            first = None;
        }
    }
    first.map(|i| ends[i] as f64)
}

/// Point `k`'s figures over `w` (all full windows of the run), with its
/// Qeq and drain rate.
pub fn point_figures(w: &[Window], k: usize, qeq: u32, drain: f64) -> PointFig {
    let n = w.len();
    let ss = &w[n / 2..];
    let len = w.first().map_or(1, |x| x.len) as f64;
    let c_ss = sum_len(ss) as f64;
    let m = mean_depth(ss, k);
    let sq: u128 = ss.iter().map(|x| x.points[k].depth_sq).sum();
    let var = (sq as f64 / c_ss.max(1.0) - m * m).max(0.0);
    let std = var.sqrt();
    let q3 = &w[n / 2..3 * n / 4];
    let q4 = &w[3 * n / 4..];
    let drift = mean_depth(q4, k) - mean_depth(q3, k);
    let y: Vec<f64> = w
        .iter()
        .map(|x| x.points[k].depth_sum as f64 / x.len.max(1) as f64)
        .collect();
    let ends: Vec<u64> = w.iter().map(|x| x.t0 + x.len).collect();
    let per = period(&y[n / 2..], len, m, std / 2.0);
    let kw = ((per / len).ceil() as usize).max(1);
    let half = w[..n / 2].iter().map(|x| x.len).sum::<u64>() as f64;
    let settle = settling(&y, &ends, kw, m, SETTLE_BAND).filter(|&t| t <= half);
    // Per-period peak-to-peak over the steady state.
    let mut pps = vec![];
    for b in ss.chunks(kw) {
        if b.len() < kw {
            break;
        }
        let hi = b.iter().map(|x| x.points[k].depth_max).max().unwrap_or(0);
        let lo = b.iter().map(|x| x.points[k].depth_min).min().unwrap_or(0);
        pps.push(hi.saturating_sub(lo) as f64);
    }
    let pp = if pps.is_empty() {
        0.0
    } else {
        pps.iter().sum::<f64>() / pps.len() as f64
    };
    let hi = ss.iter().map(|x| x.points[k].depth_max).max().unwrap_or(0);
    let lo = ss.iter().map(|x| x.points[k].depth_min).min().unwrap_or(0);
    fn pt(x: &Window, k: usize) -> &crate::bcn_loop::PointWin {
        &x.points[k]
    }
    let p = |x: &Window| pt(x, k).clone();
    let sum = |ws: &[Window], f: &dyn Fn(&Window) -> u64| ws.iter().map(f).sum::<u64>();
    let sumf = |ws: &[Window], f: &dyn Fn(&Window) -> f64| ws.iter().map(f).sum::<f64>();
    let arrivals = sum(w, &|x| p(x).arrivals);
    let drops = sum(w, &|x| p(x).drops);
    let samples = sum(ss, &|x| p(x).samples).max(1) as f64;
    let qoff: i64 = ss.iter().map(|x| p(x).qoff_sum).sum();
    let fbs: i64 = ss.iter().map(|x| p(x).fb_sum).sum();
    let fb_neg = sum(ss, &|x| p(x).fb_neg_sum);
    let fb_pos = sum(ss, &|x| p(x).fb_pos_sum);
    let all = sum_len(w) as f64;
    PointFig {
        mean: m,
        offset: m - qeq as f64,
        drift,
        std,
        period: per,
        pp,
        range: hi.saturating_sub(lo) as f64,
        settle,
        empty: sum(ss, &|x| p(x).empty) as f64 / c_ss.max(1.0),
        empty_all: sum(w, &|x| p(x).empty) as f64 / all.max(1.0),
        util: sum(ss, &|x| p(x).dep_bytes) as f64 / c_ss.max(1.0) / drain,
        drops,
        drops_ss: sum(ss, &|x| p(x).drops),
        loss: drops as f64 / arrivals.max(1) as f64,
        max_depth: w.iter().map(|x| p(x).depth_max).max().unwrap_or(0),
        msgs: sum(ss, &|x| p(x).msgs),
        neg: sum(ss, &|x| p(x).neg),
        pos: sum(ss, &|x| p(x).pos),
        qoff_samples: qoff as f64 / samples,
        fb_samples: fbs as f64 / samples,
        fb_ratio: if fb_neg == 0 {
            f64::NAN
        } else {
            fb_pos as f64 / fb_neg as f64
        },
        inc_rate: sumf(ss, &|x| p(x).inc_sum) / c_ss.max(1.0) * 1e6,
        dec_rate: sumf(ss, &|x| p(x).dec_sum) / c_ss.max(1.0) * 1e6,
        against_rate: sumf(w, &|x| p(x).inc_against_sum) / all.max(1.0) * 1e6,
        against_n: sum(w, &|x| p(x).inc_against_n),
        ignored: sum(w, &|x| p(x).ignored),
    }
}

/// The run's figures over its full windows `w` (topology `topo`, hosts'
/// line rate `line`).
pub fn run_figures(topo: &Topology, line: f64, w: &[Window]) -> RunFig {
    let n = w.len();
    let ss = &w[n / 2..];
    let nf = topo.flows.len();
    let fair = topo.fair_shares(line);
    let c_ss = sum_len(ss).max(1) as f64;
    let thr: Vec<f64> = (0..nf)
        .map(|f| ss.iter().map(|x| x.delivered[f]).sum::<u64>() as f64 / c_ss)
        .collect();
    let rate: Vec<f64> = (0..nf)
        .map(|f| ss.iter().map(|x| x.rate_sum[f]).sum::<f64>() / c_ss)
        .collect();
    let norm = |t: &[f64]| -> Vec<f64> { t.iter().zip(&fair).map(|(a, b)| a / b).collect() };
    let len = w.first().map_or(1, |x| x.len);
    let per = (FAIR_WINDOW / len).max(1) as usize;
    let mut js = vec![];
    for b in ss.chunks(per) {
        if b.len() < per {
            break;
        }
        let c = sum_len(b) as f64;
        let t: Vec<f64> = (0..nf)
            .map(|f| b.iter().map(|x| x.delivered[f]).sum::<u64>() as f64 / c)
            .collect();
        js.push(jain(&norm(&t)));
    }
    let group_share = (0..topo.groups.len())
        .map(|g| {
            let fs: Vec<usize> = (0..nf).filter(|&f| topo.flows[f].group == g).collect();
            let a: f64 = fs.iter().map(|&f| thr[f]).sum();
            let b: f64 = fs.iter().map(|&f| fair[f]).sum();
            a / b
        })
        .collect();
    let delivered: u64 = ss.iter().flat_map(|x| x.delivered.iter()).sum();
    let msgs: u64 = ss
        .iter()
        .flat_map(|x| x.points.iter().map(|p| p.msgs))
        .sum();
    RunFig {
        cycles: sum_len(w),
        points: (0..topo.points.len())
            .map(|k| point_figures(w, k, topo.points[k].qeq, topo.points[k].drain))
            .collect(),
        jain: if js.is_empty() {
            f64::NAN
        } else {
            js.iter().sum::<f64>() / js.len() as f64
        },
        jain_min: js.iter().copied().fold(f64::NAN, f64::min),
        jain_avg: jain(&norm(&thr)),
        thr,
        rate,
        group_share,
        msgs_per_mb: msgs as f64 / (delivered.max(1) as f64 / 1e6),
        overhead: (msgs * BCN_FRAME_BYTES) as f64 / delivered.max(1) as f64,
        delivered: delivered as f64 / c_ss,
        fallbacks: w.iter().map(|x| x.fallbacks).sum(),
    }
}

/// The first overshoot of a point's queue when `s` equal greedy sources
/// start together at `line` bytes per cycle each into a port draining
/// `drain` (docs/bcn.md, "The lossless buffer with sampling"): a mean-field
/// model, independent of the blocks. The queue grows at `g = s line -
/// drain`; no message is sent until Fb = (Qeq - Q - W Qdelta) / 64 turns
/// negative, with Qdelta the growth since the last sample: `g frame / (pm s
/// line)` over a mean sampling interval, or all of Q at the first sample
/// (Qold = 0), whichever is smaller, so from Q = max(Qeq / (1 + W), Qeq - W
/// g frame / (pm s line)); from then on messages are
/// decided at `pm` per arrival, `R / frame` arrivals per cycle, and each
/// halves the rate of one source (the 50 % cap: |Fb| >= 1 / (2 Gd) units
/// during the burst) `delay` cycles later, so the aggregate rate falls as
/// `dR/dt = -pm R(t - delay) / frame * R(t) / (2 s)`. Returns the largest
/// depth (bytes), integrated cycle by cycle until the rate is down to the
/// drain rate.
#[allow(clippy::too_many_arguments)]
pub fn burst_peak(
    s: usize,
    line: f64,
    drain: f64,
    frame: f64,
    pm: f64,
    delay: u64,
    qeq: f64,
    w: f64,
) -> f64 {
    let r0 = s as f64 * line;
    let grow = (r0 - drain) * frame / (pm * r0);
    let threshold = (qeq / (1.0 + w)).max(qeq - w * grow);
    let mut q = 0.0;
    let mut r = r0;
    // Messages decided per cycle, by cycle, while they are in flight.
    let mut sent: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
    let mut triggered = false;
    let mut t = 0u64;
    while r > drain && t < 1_000_000_000 {
        q += r - drain;
        triggered |= q > threshold;
        sent.push_back(if triggered { pm * r / frame } else { 0.0 });
        if sent.len() as u64 > delay {
            let m = sent.pop_front().unwrap();
            r -= m * r / (2.0 * s as f64);
        }
        t += 1;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bcn_loop::PointWin;

    #[test]
    fn jain_index_and_t_quantiles() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0]);
        // s = 1, t(2) = 4.303, h = 4.303 / sqrt(3).
        assert!((m - 2.0).abs() < 1e-12 && (h - 4.303 / 3f64.sqrt()).abs() < 1e-9);
        assert!(mean_ci(&[5.0]).1.is_nan());
    }

    #[test]
    fn period_and_settling_of_a_synthetic_signal() {
        // A square wave of period 10 windows around 100 (+-50).
        let y: Vec<f64> = (0..100)
            .map(|i| if i % 10 < 5 { 150.0 } else { 50.0 })
            .collect();
        assert_eq!(period(&y, 1000.0, 100.0, 25.0), 10_000.0);
        // No crossing twice: one window.
        assert_eq!(period(&[1.0, 2.0], 1000.0, 1.5, 0.1), 1000.0);
        // A transient at 400 for 30 windows, then the wave: averaged over
        // one period (10 windows) it is 100 from window 39 on.
        let mut z = vec![400.0; 30];
        z.extend(&y[..70]);
        let ends: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(settling(&z, &ends, 10, 100.0, 0.2), Some(40_000.0));
        // Averaged over fewer windows than a period it never settles
        // within +-20 %.
        assert_eq!(settling(&z, &ends, 3, 100.0, 0.2), None);
        // A last window outside the band: not settled.
        let mut bad = vec![100.0; 50];
        bad.push(200.0);
        let ends: Vec<u64> = (1..=51).collect();
        assert_eq!(settling(&bad, &ends, 1, 100.0, 0.2), None);
    }

    fn win(t0: u64, depth: &[u32], delivered: Vec<u64>) -> Window {
        let len = depth.len() as u64;
        let p = PointWin {
            depth_min: *depth.iter().min().unwrap(),
            depth_max: *depth.iter().max().unwrap(),
            depth_sum: depth.iter().map(|&d| d as u64).sum(),
            depth_sq: depth.iter().map(|&d| (d as u128) * d as u128).sum(),
            empty: depth.iter().filter(|&&d| d == 0).count() as u64,
            ..Default::default()
        };
        Window {
            t0,
            len,
            points: vec![p],
            rate_sum: vec![0.0; delivered.len()],
            released: delivered.clone(),
            delivered,
            ..Default::default()
        }
    }

    #[test]
    fn figures_of_synthetic_windows() {
        // One point, windows of 4 cycles: 10 windows of a transient at
        // 1000, then 30 windows alternating (per cycle) 0 and 200.
        let topo = Topology::one_point(2, 4.0, 100, 10_000, 10);
        let mut w = vec![];
        for i in 0..40u64 {
            let d: Vec<u32> = if i < 10 {
                vec![1000; 4]
            } else {
                vec![0, 200, 0, 200]
            };
            // Flow 1 gets nothing in odd windows.
            w.push(win(4 * i, &d, vec![8, if i % 2 == 0 { 16 } else { 0 }]));
        }
        let f = point_figures(&w, 0, 100, 4.0);
        assert_eq!(f.mean, 100.0);
        assert_eq!(f.offset, 0.0);
        assert_eq!(f.std, 100.0);
        assert_eq!(f.pp, 200.0, "per-cycle extremes, not window means");
        assert_eq!(f.empty, 0.5);
        assert_eq!(f.max_depth, 1000);
        // Window means are 100 from window 10 on: settled at its end.
        assert_eq!(f.settle, Some(44.0));
        let r = run_figures(&topo, 8.0, &w);
        // Fair share 2 B/cycle each; over the steady state both got 2 B/cycle.
        assert_eq!(r.thr, vec![2.0, 2.0]);
        assert_eq!(r.jain_avg, 1.0);
    }
}
