//! The BCN closed loop of seed 003 (steps 1 to 6): `S` sources, each behind
//! its own reaction point ([`model::bcn_rp::BcnRp`]), send to one egress
//! queue of a congestion point ([`model::bcn_cp::BcnCp`], queue 0) that
//! drains slower than the sources offer; the CP's BCN messages come back to
//! the RP of the source they name after a control-loop delay.
//!
//! One step per clock cycle, in this order:
//!
//! 1. every active source earns credit at the line rate and offers a frame
//!    (fixed length, same DA and priority for all) when its credit covers
//!    it; a frame its RP does not take stays offered;
//! 2. every RP is stepped with its source's offer and the message due to it
//!    this cycle (delay line of `ctrl_delay` cycles); a frame it releases
//!    enters the forward delay line (`fwd_delay` cycles), carrying the
//!    rate-limiter tag when it left a limiter (4 bytes longer as stored);
//! 3. frames due at the CP join the switch's ingress FIFO (the line into
//!    the CP takes one frame header per cycle); the head goes to the CP as
//!    this cycle's arrival, together with this cycle's departure: the egress
//!    port serves the queue at `drain` bytes per cycle (work-conserving,
//!    credit only while the queue holds frames), the head frame departs when
//!    the credit covers its length on the wire (the tag stripped);
//! 4. a message the CP decides (`msg_valid_o`) enters the control delay line
//!    towards the RP whose source address it names (`msg_sa_o`).
//!
//! The blocks are stepped through [`Stepper`], so the same system runs the
//! golden models ([`Model`]) or the verilated RTL (`cosim`).

use arbitrary_int::{u14, u3, u4, u5};
use model::bcn_cp::{BcnCp, BcnCpConfig, BcnCpInputs, BcnCpOutputs, BcnCpParams};
use model::bcn_rp::{BcnRp, BcnRpConfig, BcnRpInputs, BcnRpOutputs, BcnRpParams, FW, I16};
use model::{Block, PortGroup};
use std::collections::VecDeque;

/// Steps one block a clock cycle: the golden model or the RTL.
pub trait Stepper<B: Block> {
    /// One clock cycle with inputs `i`: this cycle's outputs.
    fn step(&mut self, i: &B::Inputs) -> Result<B::Outputs, String>;
}

/// The golden model as a [`Stepper`].
pub struct Model<B>(pub B);

impl<B: Block> Stepper<B> for Model<B> {
    fn step(&mut self, i: &B::Inputs) -> Result<B::Outputs, String> {
        Ok(self.0.step(i))
    }
}

/// The DA of every flow (one destination behind the congestion point).
pub const DA: u64 = 0x02_00_00_00_d0_01;
/// The priority of every flow.
pub const PRIO: u8 = 3;
/// Source `s` has the MAC address `SA_BASE + s`.
pub const SA_BASE: u64 = 0x02_00_00_00_50_00;

/// Parameters of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopConfig {
    /// Number of sources (one RP each).
    pub sources: usize,
    /// Frame length in bytes (as the source sends it, without a tag).
    pub frame_len: u16,
    /// Line rate of every source, bytes per cycle.
    pub line_rate: f64,
    /// Drain rate of the CP's egress queue, bytes per cycle.
    pub drain: f64,
    /// Cycles from an RP's output to the CP.
    pub fwd_delay: u64,
    /// Cycles from the CP's message to the RP (control-loop delay).
    pub ctrl_delay: u64,
    /// Qeq, bytes.
    pub qeq: u32,
    /// Queue (and buffer) limit of the CP, bytes.
    pub buffer: u32,
    /// Pm = pm / 1024.
    pub pm: u16,
    /// W = w / 4 (both blocks).
    pub w: u8,
    /// Gd = 2^-gd.
    pub gd: u8,
    /// Gi = 2^-gi.
    pub gi: u8,
    /// Ru, u0.16 bytes per cycle.
    pub ru: u16,
    /// Minimum limiter rate, bytes per cycle.
    pub min_rate: f64,
    /// Idle time of a limiter (cycles).
    pub idle: u16,
    /// Cycles per recorded sample.
    pub sample_every: u64,
    /// Source `s` stops offering at cycle `stop[s]` (none: runs forever).
    pub stop: Vec<Option<u64>>,
}

impl Default for LoopConfig {
    /// S = 4 sources at 8 B/cycle (e.g. 8 B x 1.25 GHz = 10 Gb/s), 1500 B
    /// frames, drained at half the line rate, 1,000 cycles of control-loop
    /// delay, QCN's Qeq (26,000 B), Gd = 1/128, W = 2, Gi = 1/16, Ru = 1/16
    /// B/cycle; every arrival sampled (Pm = 1024/1024): with 1,500 B frames
    /// drained at 4 B/cycle a frame arrives every 376 cycles, so the seed's
    /// Pm of 1/100 would send one message per ~40,000 cycles (40 loop
    /// delays) and the loop would need ~10^7 cycles to settle.
    fn default() -> Self {
        LoopConfig {
            sources: 4,
            frame_len: 1500,
            line_rate: 8.0,
            drain: 4.0,
            fwd_delay: 0,
            ctrl_delay: 1000,
            qeq: 26_000,
            buffer: 150_000,
            pm: 1024,
            w: 8,
            gd: 7,
            gi: 4,
            ru: 1 << 12,
            min_rate: 1.0 / 8.0,
            idle: 2000,
            sample_every: 1000,
            stop: vec![],
        }
    }
}

impl LoopConfig {
    /// The CP's structural parameters (the verilated default variant).
    pub fn cp_params(&self) -> BcnCpParams {
        BcnCpParams::default()
    }
    /// The RPs' structural parameters (the verilated default variant).
    pub fn rp_params(&self) -> BcnRpParams {
        BcnRpParams::default()
    }
    /// The CP's configuration.
    pub fn cp_config(&self) -> BcnCpConfig {
        let p = self.cp_params();
        let mut c = BcnCp::default_config(&p);
        c.cfg_qeq_i = vec![self.qeq.min(self.buffer); p.nq];
        c.cfg_qmax_i = self.buffer;
        c.cfg_buf_i = self.buffer;
        c.cfg_w_i = u5::new(self.w);
        c.cfg_pm_i = arbitrary_int::u11::new(self.pm);
        c
    }
    /// The RPs' configuration.
    pub fn rp_config(&self) -> BcnRpConfig {
        BcnRpConfig {
            cfg_line_rate_i: to_fix(self.line_rate),
            cfg_min_rate_i: to_fix(self.min_rate).max(1),
            cfg_gd_i: u4::new(self.gd),
            cfg_gi_i: u4::new(self.gi),
            cfg_ru_i: self.ru,
            cfg_w_i: u5::new(self.w),
            cfg_idle_i: self.idle,
        }
    }
    /// Input bandwidth x control-loop delay (the seed's lossless buffer,
    /// above Qeq): bytes the sources offer during one loop delay.
    pub fn bw_delay(&self) -> f64 {
        self.sources as f64 * self.line_rate * (self.fwd_delay + self.ctrl_delay) as f64
    }
}

/// Bytes per cycle to u8.16.
pub fn to_fix(r: f64) -> u32 {
    (r * (1u64 << FW) as f64).round() as u32
}

/// u8.16 to bytes per cycle.
pub fn from_fix(r: u32) -> f64 {
    r as f64 / (1u64 << FW) as f64
}

/// One recorded sample (the last cycle of an interval).
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Cycle.
    pub t: u64,
    /// CP queue 0 depth, bytes (`q_o`).
    pub depth: u32,
    /// Per source: its limiter's rate (bytes/cycle), the line rate without one.
    pub rate: Vec<f64>,
    /// Per source: bytes its RP released in the interval.
    pub sent: Vec<u64>,
    /// BCN messages decided in the interval.
    pub msgs: u64,
    /// Arrivals dropped by the CP in the interval.
    pub drops: u64,
}

/// A frame on the forward path.
#[derive(Clone, Copy, Debug)]
struct Frame {
    src: usize,
    len: u16,
    tag: Option<u8>,
}

/// A message on the control path.
#[derive(Clone, Copy, Debug)]
struct Msg {
    qoff: i16,
    qdelta: i16,
    cpid: u16,
    da: u64,
    prio: u8,
}

/// The closed loop around any [`Stepper`]s.
pub struct BcnLoop<C, R> {
    cfg: LoopConfig,
    cp: C,
    rps: Vec<R>,
    t: u64,
    credit: Vec<f64>,
    fwd: VecDeque<(u64, Frame)>,
    ingress: VecDeque<Frame>,
    queue: VecDeque<(u16, bool)>,
    drain_credit: f64,
    ctrl: Vec<VecDeque<(u64, Msg)>>,
    rp_in: BcnRpInputs,
    cp_in: BcnCpInputs,
    rate: Vec<f64>,
    depth: u32,
    acc_sent: Vec<u64>,
    acc_msgs: u64,
    acc_drops: u64,
    /// Recorded samples.
    pub samples: Vec<Sample>,
    /// Total arrivals dropped by the CP.
    pub drops: u64,
    /// Total messages decided by the CP.
    pub msgs: u64,
    /// Largest depth seen (bytes).
    pub max_depth: u32,
    /// Every cycle's outputs (when enabled with [`BcnLoop::record_outputs`]).
    pub outputs: Option<Vec<(BcnCpOutputs, Vec<BcnRpOutputs>)>>,
}

/// The system on the golden models.
pub type ModelLoop = BcnLoop<Model<BcnCp>, Model<BcnRp>>;

impl ModelLoop {
    /// The system with the golden models.
    pub fn models(cfg: &LoopConfig) -> Self {
        let (cpp, rpp) = (cfg.cp_params(), cfg.rp_params());
        let (cpc, rpc) = (cfg.cp_config(), cfg.rp_config());
        BcnLoop::new(
            cfg.clone(),
            Model(BcnCp::new(&cpp, &cpc)),
            (0..cfg.sources)
                .map(|_| Model(BcnRp::new(&rpp, &rpc)))
                .collect(),
        )
    }
}

impl<C: Stepper<BcnCp>, R: Stepper<BcnRp>> BcnLoop<C, R> {
    /// The system around `cp` and one RP per source (in reset state,
    /// configured with `cfg.cp_config()` and `cfg.rp_config()`).
    pub fn new(cfg: LoopConfig, cp: C, rps: Vec<R>) -> Self {
        assert_eq!(rps.len(), cfg.sources, "one RP per source");
        let s = cfg.sources;
        let line = cfg.line_rate;
        BcnLoop {
            cp_in: BcnCpInputs::zero(&cfg.cp_params()),
            rp_in: BcnRpInputs::zero(&cfg.rp_params()),
            cp,
            rps,
            t: 0,
            credit: vec![0.0; s],
            fwd: VecDeque::new(),
            ingress: VecDeque::new(),
            queue: VecDeque::new(),
            drain_credit: 0.0,
            ctrl: vec![VecDeque::new(); s],
            rate: vec![line; s],
            depth: 0,
            acc_sent: vec![0; s],
            acc_msgs: 0,
            acc_drops: 0,
            samples: vec![],
            drops: 0,
            msgs: 0,
            max_depth: 0,
            outputs: None,
            cfg,
        }
    }

    /// Keeps every cycle's outputs in [`BcnLoop::outputs`].
    pub fn record_outputs(&mut self) {
        self.outputs = Some(vec![]);
    }

    /// The configuration.
    pub fn config(&self) -> &LoopConfig {
        &self.cfg
    }

    /// Cycles run.
    pub fn cycles(&self) -> u64 {
        self.t
    }

    fn active(&self, s: usize) -> bool {
        self.cfg
            .stop
            .get(s)
            .copied()
            .flatten()
            .is_none_or(|at| self.t < at)
    }

    /// Runs `n` cycles.
    pub fn run(&mut self, n: u64) -> Result<(), String> {
        for _ in 0..n {
            self.cycle()?;
        }
        Ok(())
    }

    /// One clock cycle of the whole system.
    pub fn cycle(&mut self) -> Result<(), String> {
        let t = self.t;
        let len = self.cfg.frame_len;
        let mut rp_outs = vec![];
        for s in 0..self.cfg.sources {
            // 1. The source.
            let active = self.active(s);
            if active {
                self.credit[s] =
                    (self.credit[s] + self.cfg.line_rate).min(len as f64 + self.cfg.line_rate);
            } else {
                self.credit[s] = 0.0;
            }
            let offer = active && self.credit[s] >= len as f64;
            // 2. The RP.
            let i = &mut self.rp_in;
            i.in_valid_i = offer;
            i.in_da_i = if offer { DA } else { 0 };
            i.in_prio_i = u3::new(if offer { PRIO } else { 0 });
            i.in_len_i = if offer { len } else { 0 };
            let m = match self.ctrl[s].front() {
                Some(&(at, m)) if at <= t => {
                    self.ctrl[s].pop_front();
                    Some(m)
                }
                _ => None,
            };
            i.msg_valid_i = m.is_some();
            let m = m.unwrap_or(Msg {
                qoff: 0,
                qdelta: 0,
                cpid: 0,
                da: 0,
                prio: 0,
            });
            i.msg_flow_da_i = m.da;
            i.msg_prio_i = u3::new(m.prio);
            i.msg_cpid_i = m.cpid;
            i.msg_qoff_i = I16::new(m.qoff as i32);
            i.msg_qdelta_i = I16::new(m.qdelta as i32);
            let o = self.rps[s]
                .step(&self.rp_in)
                .map_err(|e| format!("RP {s}, cycle {t}: {e}"))?;
            if o.in_ready_o {
                self.credit[s] -= len as f64;
            }
            if o.out_valid_o {
                self.acc_sent[s] += o.out_len_o as u64;
                let f = Frame {
                    src: s,
                    len: o.out_len_o,
                    tag: o.out_tag_valid_o.then_some(o.out_tag_id_o),
                };
                self.fwd.push_back((t + self.cfg.fwd_delay, f));
            }
            self.rate[s] = o
                .lim_valid_o
                .iter()
                .zip(&o.lim_rate_o)
                .find(|(v, _)| **v)
                .map_or(self.cfg.line_rate, |(_, r)| from_fix(*r));
            if self.outputs.is_some() {
                rp_outs.push(o);
            }
        }
        // 3. The switch: ingress FIFO, departure, the CP.
        while let Some(&(at, f)) = self.fwd.front() {
            if at > t {
                break;
            }
            self.fwd.pop_front();
            self.ingress.push_back(f);
        }
        let arr = self.ingress.pop_front();
        if !self.queue.is_empty() {
            self.drain_credit += self.cfg.drain;
        }
        let dep = match self.queue.front() {
            Some(&(stored, tagged)) => {
                let wire = stored - if tagged { 4 } else { 0 };
                (self.drain_credit >= wire as f64).then(|| {
                    self.drain_credit -= wire as f64;
                    self.queue.pop_front();
                    (stored, tagged)
                })
            }
            None => None,
        };
        if self.queue.is_empty() && dep.is_none() {
            self.drain_credit = 0.0;
        }
        let i = &mut self.cp_in;
        i.arr_valid_i = arr.is_some();
        i.arr_queue_i = u3::new(0);
        let stored = arr.map_or(0, |f| f.len + if f.tag.is_some() { 4 } else { 0 });
        i.arr_len_i = u14::new(stored);
        i.arr_da_i = if arr.is_some() { DA } else { 0 };
        i.arr_sa_i = arr.map_or(0, |f| SA_BASE + f.src as u64);
        i.arr_prio_i = u3::new(if arr.is_some() { PRIO } else { 0 });
        i.arr_rlt_i = arr.is_some_and(|f| f.tag.is_some());
        i.arr_rlt_id_i = arr.and_then(|f| f.tag).unwrap_or(0) as u16;
        i.dep_valid_i = dep.is_some();
        i.dep_queue_i = u3::new(0);
        i.dep_len_i = u14::new(dep.map_or(0, |d| d.0));
        i.dep_rlt_i = dep.is_some_and(|d| d.1);
        let o = self
            .cp
            .step(&self.cp_in)
            .map_err(|e| format!("CP, cycle {t}: {e}"))?;
        if arr.is_some() {
            if o.arr_drop_o {
                self.drops += 1;
                self.acc_drops += 1;
            } else {
                self.queue
                    .push_back((stored, arr.is_some_and(|f| f.tag.is_some())));
            }
        }
        self.depth = o.q_o[0];
        self.max_depth = self.max_depth.max(self.depth);
        // 4. The message goes back.
        if o.msg_valid_o {
            self.msgs += 1;
            self.acc_msgs += 1;
            let sa = o.msg_sa_o;
            if sa >= SA_BASE && sa < SA_BASE + self.cfg.sources as u64 {
                let s = (sa - SA_BASE) as usize;
                self.ctrl[s].push_back((
                    t + self.cfg.ctrl_delay,
                    Msg {
                        qoff: o.msg_qoff_o.value(),
                        qdelta: o.msg_qdelta_o.value(),
                        cpid: o.msg_cpid_o,
                        da: o.msg_flow_da_o,
                        prio: o.msg_prio_o.value(),
                    },
                ));
            }
        }
        if let Some(v) = &mut self.outputs {
            v.push((o, rp_outs));
        }
        self.t += 1;
        if self.t.is_multiple_of(self.cfg.sample_every) {
            self.samples.push(Sample {
                t: self.t,
                depth: self.depth,
                rate: self.rate.clone(),
                sent: std::mem::replace(&mut self.acc_sent, vec![0; self.cfg.sources]),
                msgs: std::mem::take(&mut self.acc_msgs),
                drops: std::mem::take(&mut self.acc_drops),
            });
        }
        Ok(())
    }
}

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

/// Figures of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// First sample time from which the depth averaged over the last
    /// `smooth` samples stays within `band` of Qeq (none: it does not settle,
    /// or only in the last quarter of the run).
    pub convergence: Option<u64>,
    /// Standard deviation of the depth after settling (or over the second
    /// half when it does not settle), bytes.
    pub std_dev: f64,
    /// Peak-to-peak of the depth over the same samples, bytes.
    pub peak_to_peak: f64,
    /// Mean depth over the same samples, bytes.
    pub mean_depth: f64,
    /// Jain's index of the sources' throughputs over the last `window` samples.
    pub jain: f64,
    /// Throughput per source over that window, bytes per cycle.
    pub throughput: Vec<f64>,
    /// Frames the CP dropped.
    pub drops: u64,
    /// Largest depth, bytes.
    pub max_depth: u32,
    /// Messages decided.
    pub msgs: u64,
}

/// The figures of `samples` (band in bytes around `qeq`; the fairness
/// window and the smoothing of the depth for the convergence time in
/// samples). The oscillation is measured on the raw depth.
pub fn metrics(samples: &[Sample], qeq: u32, band: f64, window: usize, smooth: usize) -> Metrics {
    let n = samples.len();
    let smooth = smooth.max(1);
    let inside = |k: usize| {
        k + 1 >= smooth && {
            let w = &samples[k + 1 - smooth..=k];
            let avg = w.iter().map(|s| s.depth as f64).sum::<f64>() / smooth as f64;
            (avg - qeq as f64).abs() <= band
        }
    };
    let mut first = n;
    for k in (0..n).rev() {
        if inside(k) {
            first = k;
        } else {
            break;
        }
    }
    // Settled only if it stays for at least the last quarter of the run.
    let convergence = (n > 0 && first < n && first <= n - n / 4).then(|| samples[first].t);
    let from = if convergence.is_some() { first } else { n / 2 };
    let d: Vec<f64> = samples[from..].iter().map(|s| s.depth as f64).collect();
    let mean = d.iter().sum::<f64>() / d.len().max(1) as f64;
    let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / d.len().max(1) as f64;
    let (lo, hi) = d
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let w = &samples[n.saturating_sub(window)..];
    let s = samples.first().map_or(0, |s| s.rate.len());
    let cycles = w.len() as f64 * samples.first().map_or(1.0, |s| s.t as f64);
    let throughput: Vec<f64> = (0..s)
        .map(|k| w.iter().map(|x| x.sent[k] as f64).sum::<f64>() / cycles.max(1.0))
        .collect();
    Metrics {
        convergence,
        std_dev: var.sqrt(),
        peak_to_peak: if d.is_empty() { 0.0 } else { hi - lo },
        mean_depth: mean,
        jain: jain(&throughput),
        throughput,
        drops: samples.iter().map(|s| s.drops).sum(),
        max_depth: samples.iter().map(|s| s.depth).max().unwrap_or(0),
        msgs: samples.iter().map(|s| s.msgs).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast() -> LoopConfig {
        LoopConfig {
            frame_len: 512,
            ctrl_delay: 200,
            sample_every: 200,
            ..LoopConfig::default()
        }
    }

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn metrics_of_a_synthetic_trace() {
        // Depth 0 for 10 samples, then 1000 +- 100 alternating: converges at
        // the 11th sample (no smoothing), std-dev 100, peak-to-peak 200.
        let s: Vec<Sample> = (0..40u64)
            .map(|k| Sample {
                t: (k + 1) * 10,
                depth: if k < 10 {
                    0
                } else if k % 2 == 0 {
                    1100
                } else {
                    900
                },
                rate: vec![1.0, 1.0],
                sent: vec![10, if k < 20 { 10 } else { 0 }],
                msgs: 1,
                drops: 0,
            })
            .collect();
        let m = metrics(&s, 1000, 150.0, 10, 1);
        assert_eq!(m.convergence, Some(110));
        assert!((m.std_dev - 100.0).abs() < 1e-9 && m.peak_to_peak == 200.0);
        assert!((m.jain - 0.5).abs() < 1e-12, "one of two sources idle");
        assert_eq!(metrics(&s, 1000, 50.0, 10, 1).convergence, None);
        // Averaged over pairs the depth is 1000 from the 12th sample on.
        assert_eq!(metrics(&s, 1000, 50.0, 10, 2).convergence, Some(120));
    }

    #[test]
    fn congestion_builds_then_sources_decrease() {
        let c = fast();
        let mut l = ModelLoop::models(&c);
        l.run(100_000).unwrap();
        let s = &l.samples;
        assert!(s.iter().any(|x| x.depth > c.qeq), "the queue crosses Qeq");
        assert!(l.msgs > 0);
        let last = s.last().unwrap();
        for r in &last.rate {
            assert!(*r < c.line_rate * 0.75, "rates {:?}", last.rate);
        }
        let total: f64 = last.rate.iter().sum();
        assert!(total < 2.0 * c.drain, "aggregate {total}");
    }

    #[test]
    fn long_flows_settle_fair() {
        let c = fast();
        let mut l = ModelLoop::models(&c);
        l.run(400_000).unwrap();
        let m = metrics(&l.samples, c.qeq, c.qeq as f64, 500, 1);
        assert!(m.jain > 0.9, "{m:?}");
        let tot: f64 = m.throughput.iter().sum();
        assert!(tot > 0.8 * c.drain && tot <= c.drain * 1.01, "{m:?}");
    }

    #[test]
    fn survivor_recovers_full_rate() {
        // The port drains at one source's line rate: congested while the
        // four send, free when one is left.
        let mut c = fast();
        c.drain = c.line_rate;
        c.stop = vec![Some(100_000), Some(100_000), Some(100_000), None];
        let mut l = ModelLoop::models(&c);
        l.run(100_000).unwrap();
        assert!(l.samples.last().unwrap().rate[3] < 0.75 * c.line_rate);
        l.run(300_000).unwrap();
        let last = l.samples.last().unwrap();
        assert_eq!(last.rate[3], c.line_rate, "limiter removed");
        // The survivor alone fills the drain rate.
        let w = &l.samples[l.samples.len() - 100..];
        let thr = w.iter().map(|s| s.sent[3]).sum::<u64>() as f64 / (100 * c.sample_every) as f64;
        assert!(thr > 0.9 * c.drain, "{thr}");
    }

    #[test]
    fn lossless_buffer_is_bw_times_delay() {
        let mut c = fast();
        c.pm = 1024;
        c.buffer = 10_000_000;
        let big = {
            let mut l = ModelLoop::models(&c);
            l.run(60_000).unwrap();
            assert_eq!(l.drops, 0);
            l.max_depth
        };
        let bound = c.qeq as f64 + c.bw_delay();
        assert!(
            (big as f64) <= 2.0 * bound,
            "peak {big} vs Qeq + bw x delay {bound}"
        );
        c.buffer = (2.0 * bound) as u32;
        let mut l = ModelLoop::models(&c);
        l.run(60_000).unwrap();
        assert_eq!(l.drops, 0, "buffer {}", c.buffer);
        c.buffer = c.qeq + (c.bw_delay() / 4.0) as u32;
        let mut l = ModelLoop::models(&c);
        l.run(60_000).unwrap();
        assert!(l.drops > 0, "buffer {} loses", c.buffer);
    }
}
