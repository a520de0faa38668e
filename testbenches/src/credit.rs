//! Stimulus for the credit scheduler (`docs/credit.md`).
//!
//! The block's two halves talk through the fabric, which lives here:
//! [`Fabric`] closes the credit loop around a golden model, with a credit
//! delay `dc`, a data delay `dd`, an announcement delay `da` and an egress
//! link that drains `R` bytes per cycle (`RTT = dc + dd + 1` for a credit of
//! one link-cycle's worth of bytes). Traffic is generated one cycle at a
//! time ([`CreditGen`]), closed loop against the golden model of the run,
//! the way a UVM sequence consults a reference model, and replayed
//! open-loop in co-simulation.
//!
//! Configurations cover every field over its legal range with the edges on
//! purpose: quanta of 1 and `2^LW - 1`, rates of 0, 1 (every cycle), `1/max`
//! and 21/40 (one credit per two cycles with a 5% speed-up), buffers of 0,
//! `Q - 1`, exactly `Q`, exact multiples of `Q` and `2^CW - 1`, every slice
//! layout. Traffic comes in phases: saturating or Bernoulli demand on a hot
//! set of VOQs, cells (no overdraw) or packets up to `2^LW - 1` bytes
//! (overdraw down to the minimum balance), link stalls (buffers fill to the
//! exact byte), racing and spurious announcements, and raw noise on the
//! fabric inputs (credits and data nobody issued: saturations, underflows,
//! indices out of range).

use crate::rng::Rng;
use crate::{rng, Bench};
use model::credit::{Credit, CreditConfig, CreditInputs, CreditOutputs, CreditParams};
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use std::collections::VecDeque;

/// The delays and links of the closed loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    /// Credit delay, egress to ingress (cycles, >= 1).
    pub dc: usize,
    /// Data delay, ingress to egress buffer (cycles, >= 1).
    pub dd: usize,
    /// Announcement delay, VOQ to egress scheduler (cycles, >= 0).
    pub da: usize,
    /// Egress link rate R per egress port, bytes per cycle (1..=2^LW-1).
    pub link: Vec<u32>,
}

impl Loop {
    /// Cycles from a credit's issue to the cycle its bytes can be credited
    /// again, when one link cycle drains them: `dc + dd + 1`.
    pub fn rtt(&self) -> usize {
        self.dc + self.dd + 1
    }
}

/// The fabric around the block: VOQ contents, credit and data delay lines,
/// announcements, egress buffers and links. Per cycle: [`Fabric::inputs`],
/// step the block, [`Fabric::absorb`] its outputs.
#[derive(Clone, Debug)]
pub struct Fabric {
    p: CreditParams,
    /// The loop.
    pub lp: Loop,
    /// The current cycle.
    pub t: usize,
    /// Packets (lengths) per VOQ.
    pub voq: Vec<VecDeque<u16>>,
    /// Link stalled, per egress port (the egress is congested downstream).
    pub stall: Vec<bool>,
    status: Vec<bool>,
    ann: VecDeque<(usize, usize, bool)>,
    crd: VecDeque<(usize, usize, u8, u16)>,
    data: VecDeque<(usize, usize, u8, u16)>,
    /// Bytes the link took, per egress port.
    pub link_bytes: Vec<u64>,
    /// Credits received per VOQ (as issued).
    pub credits: Vec<u64>,
    /// Credit bytes issued per egress port.
    pub credit_bytes: Vec<u64>,
    /// Bytes dequeued per VOQ.
    pub sent: Vec<u64>,
}

impl Fabric {
    /// An empty fabric for variant `p`.
    pub fn new(p: &CreditParams, lp: Loop) -> Self {
        assert!(lp.dc >= 1 && lp.dd >= 1, "delays of at least one cycle");
        assert_eq!(lp.link.len(), p.e);
        Fabric {
            p: *p,
            lp,
            t: 0,
            voq: vec![VecDeque::new(); p.voqs()],
            stall: vec![false; p.e],
            status: vec![false; p.voqs()],
            ann: VecDeque::new(),
            crd: VecDeque::new(),
            data: VecDeque::new(),
            link_bytes: vec![0; p.e],
            credits: vec![0; p.voqs()],
            credit_bytes: vec![0; p.e],
            sent: vec![0; p.voqs()],
        }
    }

    /// A reset of the block: everything in flight is lost, and the VOQs that
    /// hold packets announce themselves again.
    pub fn reset(&mut self) {
        self.status.fill(false);
        self.ann.clear();
        self.crd.clear();
        self.data.clear();
    }

    /// Credit bytes in flight towards the ingress, for egress `e`.
    pub fn credits_in_flight(&self, e: usize) -> i64 {
        self.crd
            .iter()
            .filter(|c| c.1 == e)
            .map(|c| c.3 as i64)
            .sum()
    }

    /// Data bytes in flight towards egress `e`.
    pub fn data_in_flight(&self, e: usize) -> i64 {
        self.data
            .iter()
            .filter(|d| d.2 as usize == e)
            .map(|d| d.3 as i64)
            .sum()
    }

    /// The inputs of this cycle, after `pkts` (VOQ, length) joined their
    /// VOQs; `occ` is the block's egress occupancy at the start of the cycle
    /// (`occ_o`): each link takes up to R bytes of it (bytes that arrived in
    /// earlier cycles).
    pub fn inputs(&mut self, pkts: &[(usize, u16)], occ: &[i64]) -> CreditInputs {
        let mut inp = CreditInputs::zero(&self.p);
        self.fill(pkts, occ, &mut inp);
        inp
    }

    /// [`Fabric::inputs`] written into `inp`, which must be all zero (its
    /// allocations are reused).
    pub fn fill(&mut self, pkts: &[(usize, u16)], occ: &[i64], inp: &mut CreditInputs) {
        let p = self.p;
        let t = self.t;
        for &(v, len) in pkts {
            assert!(len > 0);
            self.voq[v].push_back(len);
        }
        // Announcements of the transitions, `da` cycles later; the heads of
        // line.
        for v in 0..p.voqs() {
            let head = self.voq[v].front().copied();
            let ne = head.is_some();
            if ne != self.status[v] {
                self.ann.push_back((t + self.lp.da, v, ne));
                self.status[v] = ne;
            }
            inp.hol_len_i[v] = head.unwrap_or(0);
        }
        while self.ann.front().is_some_and(|a| a.0 <= t) {
            let (_, v, bl) = self.ann.pop_front().unwrap();
            if bl {
                inp.ann_bl_i[v] = true;
            } else {
                inp.ann_mt_i[v] = true;
            }
        }
        while self.crd.front().is_some_and(|c| c.0 <= t) {
            let (_, e, i, b) = self.crd.pop_front().unwrap();
            assert!(!inp.cin_valid_i[e]);
            inp.cin_valid_i[e] = true;
            inp.cin_ing_i[e] = i;
            inp.cin_bytes_i[e] = b;
        }
        while self.data.front().is_some_and(|d| d.0 <= t) {
            let (_, i, e, b) = self.data.pop_front().unwrap();
            assert!(!inp.earr_valid_i[i]);
            inp.earr_valid_i[i] = true;
            inp.earr_egr_i[i] = e;
            inp.earr_bytes_i[i] = b;
        }
        // The links take up to R bytes that arrived in earlier cycles.
        for (e, &o) in occ.iter().enumerate().take(p.e) {
            if !self.stall[e] {
                let d = (self.lp.link[e] as i64).min(o);
                inp.edep_bytes_i[e] = d as u16;
                self.link_bytes[e] += d as u64;
            }
        }
    }

    /// Takes the block's outputs of this cycle: credits and data enter their
    /// delay lines, dequeued packets leave their VOQs.
    pub fn absorb(&mut self, o: &CreditOutputs) {
        let p = self.p;
        let t = self.t;
        for e in 0..p.e {
            if o.crd_valid_o[e] {
                let i = o.crd_ing_o[e];
                self.crd.push_back((t + self.lp.dc, e, i, o.crd_bytes_o[e]));
                self.credits[p.voq(i as usize, e)] += 1;
                self.credit_bytes[e] += o.crd_bytes_o[e] as u64;
            }
        }
        for i in 0..p.i {
            if o.deq_valid_o[i] {
                let e = o.deq_egr_o[i];
                let v = p.voq(i, e as usize);
                let len = self.voq[v]
                    .pop_front()
                    .expect("the block dequeued an empty VOQ");
                assert_eq!(len, o.deq_bytes_o[i], "dequeued length");
                self.sent[v] += len as u64;
                self.data.push_back((t + self.lp.dd, i, e, len));
            }
        }
        self.t += 1;
    }
}

/// Packet lengths of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lens {
    /// Cells: the quantum of the VOQ's egress port, or half of it (no
    /// overdraw ever).
    Cell,
    /// 1..=16 bytes.
    Small,
    /// Between half the largest length and the largest.
    Large,
    /// Exactly `2^LW - 1` (reaches the minimum balance).
    Max,
    /// Anything in 1..=2^LW-1.
    Any,
}

/// One phase of traffic.
#[derive(Clone, Debug)]
pub struct Phase {
    /// Share of the run.
    pub weight: u32,
    /// The VOQs with traffic.
    pub hot: Vec<usize>,
    /// Keep every hot VOQ backlogged.
    pub saturate: bool,
    /// Otherwise: per-cycle arrival probability per hot VOQ (per mille).
    pub load_pm: u32,
    /// Packet lengths.
    pub lens: Lens,
    /// Per-cycle probability that an egress link toggles its stall.
    pub stall_pm: u32,
    /// Per-cycle probability of a spurious or racing announcement.
    pub glitch_pm: u32,
    /// Per-cycle probability of raw noise on a fabric input.
    pub noise_pm: u32,
    /// Seed of the realisation.
    pub seed: u64,
}

/// A whole run: the loop and the phases.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Delays and links.
    pub lp: Loop,
    /// Phases, in order.
    pub phases: Vec<Phase>,
    /// Per-cycle probability of a reset (per 100 000).
    pub reset_pcm: u32,
}

/// True with probability `pm / 1000` (the per-mille rates of a phase; no
/// draw for 0 and 1000).
#[inline]
fn per_mille(r: &mut rng::Rng, pm: u32) -> bool {
    match pm {
        0 => false,
        1000.. => true,
        _ => r.below(1000) < pm as u64,
    }
}

fn pkt_len(p: &CreditParams, cfg: &CreditConfig, v: usize, lens: Lens, r: &mut rng::Rng) -> u16 {
    let lmax = p.lmax() as u64;
    let len = match lens {
        Lens::Cell => {
            let q = cfg.cfg_quantum_i[v % p.e] as u64;
            if q.is_multiple_of(2) && per_mille(r, 300) {
                q / 2
            } else {
                q
            }
        }
        Lens::Small => r.range(1, 16.min(lmax)),
        Lens::Large => r.range(lmax / 2, lmax),
        Lens::Max => lmax,
        Lens::Any => r.range(1, lmax),
    };
    len.max(1) as u16
}

/// Overwrites one fabric input with a random value (credits or data nobody
/// issued, departures of bytes that are not there, indices out of range),
/// or fills the fields of a credit or data input whose valid is low with
/// junk, which the block must ignore.
fn noise(p: &CreditParams, inp: &mut CreditInputs, r: &mut rng::Rng) {
    let lmax = p.lmax() as u64;
    // Mostly small amounts, so that the junk drains; sometimes the largest.
    let big = |r: &mut rng::Rng| {
        match r.below(10) {
            0 => lmax,
            1 | 2 => r.range(0, lmax),
            _ => r.range(0, 64.min(lmax)),
        }
    } as u16;
    match r.below(7) {
        5 => {
            let e = r.below(p.e as u64) as usize;
            if !inp.cin_valid_i[e] {
                inp.cin_ing_i[e] = r.below(1 << p.iw()) as u8;
                inp.cin_bytes_i[e] = big(r);
            }
        }
        6 => {
            let i = r.below(p.i as u64) as usize;
            if !inp.earr_valid_i[i] {
                inp.earr_egr_i[i] = r.below(1 << p.ew()) as u8;
                inp.earr_bytes_i[i] = big(r);
            }
        }
        0 => {
            let e = r.below(p.e as u64) as usize;
            inp.cin_valid_i[e] = true;
            inp.cin_ing_i[e] = r.below(1 << p.iw()) as u8;
            inp.cin_bytes_i[e] = big(r);
        }
        1 | 2 => {
            let i = r.below(p.i as u64) as usize;
            inp.earr_valid_i[i] = true;
            inp.earr_egr_i[i] = r.below(1 << p.ew()) as u8;
            inp.earr_bytes_i[i] = big(r);
        }
        3 => {
            let e = r.below(p.e as u64) as usize;
            inp.edep_bytes_i[e] = big(r);
        }
        _ => {
            let v = r.below(p.voqs() as u64) as usize;
            inp.ann_bl_i[v] = per_mille(r, 500);
            inp.ann_mt_i[v] = per_mille(r, 500);
        }
    }
}

/// The loop of a run: credit and data delays of 1 to 4 cycles (1 in 4: 5
/// to 24), announcement delays of 0, 1 to 3 or 4 to 12 cycles, and a link
/// rate per egress port (see `link_rate`).
fn draw_loop(p: &CreditParams, cfg: &CreditConfig, r: &mut rng::Rng) -> Loop {
    let delay = |r: &mut rng::Rng| match r.weighted(&[3, 1]) {
        0 => r.range(1, 4) as usize,
        _ => r.range(5, 24) as usize,
    };
    let dc = delay(r);
    let dd = delay(r);
    let da = match r.weighted(&[2, 2, 1]) {
        0 => 0,
        1 => r.range(1, 3) as usize,
        _ => r.range(4, 12) as usize,
    };
    let link = (0..p.e)
        .map(|e| {
            let sel = r.below(6) as u8;
            let x = r.u64();
            link_rate(p, cfg, e, sel, x)
        })
        .collect();
    Loop { dc, dd, da, link }
}

/// The credit scheduler's traffic, one cycle at a time, closed loop.
///
/// The run has one [`Loop`] (delays and link rates) and a reset rate (none
/// in 4 runs out of 5, else 1 to 50 per 100 000 cycles). Traffic comes in
/// phases of 50 to 449 cycles (about 250 on average), each with its own hot
/// set of one to eight VOQs, saturating demand (2 in 5) or a Bernoulli load
/// of 0 to 1000 per mille per hot VOQ (at most 32 packets queued), packet
/// lengths ([`Lens`]), and per-mille rates of link-stall toggles, racing or
/// spurious announcements and raw noise on a fabric input. The [`Fabric`]
/// (VOQ contents, delay lines, announcements, links) lives in the generator
/// and takes the block's outputs of the previous cycle (`last`); the links
/// drain what the golden model holds (its occupancy at the start of the
/// cycle). No shadow model: the state the traffic needs is the model handed
/// to [`Generator::next`].
pub struct CreditGen {
    p: CreditParams,
    cfg: CreditConfig,
    rng: rng::Rng,
    fab: Fabric,
    reset_pcm: u32,
    /// The previous cycle was driven (its outputs go into the fabric).
    driven: bool,
    pkts: Vec<(usize, u16)>,
    occ: Vec<i64>,
    // The current phase.
    left: u32,
    hot: Vec<usize>,
    saturate: bool,
    load_pm: u32,
    lens: Lens,
    stall_pm: u32,
    glitch_pm: u32,
    noise_pm: u32,
    /// Every input zero: each cycle starts from it (`clone_from` keeps the
    /// vectors' allocations).
    zero: CreditInputs,
}

impl CreditGen {
    /// The generator of configuration `cfg` of variant `p` from `seed`.
    pub fn new(p: &CreditParams, cfg: &CreditConfig, seed: u64) -> Self {
        let mut r = rng::Rng::new(seed, 0x63726564);
        let lp = draw_loop(p, cfg, &mut r);
        let reset_pcm = match r.weighted(&[4, 1]) {
            0 => 0,
            _ => r.range(1, 50) as u32,
        };
        CreditGen {
            p: *p,
            cfg: cfg.clone(),
            rng: r,
            fab: Fabric::new(p, lp),
            reset_pcm,
            driven: false,
            pkts: Vec::with_capacity(2 * 8),
            occ: vec![0; p.e],
            left: 0,
            hot: Vec::with_capacity(8),
            saturate: false,
            load_pm: 0,
            lens: Lens::Cell,
            stall_pm: 0,
            glitch_pm: 0,
            noise_pm: 0,
            zero: CreditInputs::zero(p),
        }
    }

    /// The loop of this run.
    pub fn lp(&self) -> &Loop {
        &self.fab.lp
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        let nv = self.p.voqs() as u64;
        self.left = (r.range(1, 8) * 50 + r.below(50)) as u32;
        self.hot.clear();
        for _ in 0..r.range(1, nv.min(8)) {
            self.hot.push(r.below(nv) as usize);
        }
        self.saturate = r.chance(0.4);
        self.load_pm = r.range(0, 1000) as u32;
        self.lens = [Lens::Cell, Lens::Small, Lens::Large, Lens::Max, Lens::Any]
            [r.weighted(&[4, 2, 2, 1, 3])];
        self.stall_pm = match r.weighted(&[3, 2, 1]) {
            0 => 0,
            1 => r.range(1, 100) as u32,
            _ => r.range(100, 500) as u32,
        };
        self.glitch_pm = match r.weighted(&[3, 2]) {
            0 => 0,
            _ => r.range(1, 100) as u32,
        };
        self.noise_pm = match r.weighted(&[6, 2, 1]) {
            0 => 0,
            1 => r.range(1, 30) as u32,
            _ => r.range(30, 200) as u32,
        };
        self.fab.stall.fill(false);
    }
}

impl Generator<Credit> for CreditGen {
    fn next(&mut self, m: &Credit, last: &CreditOutputs, i: &mut CreditInputs) -> Step {
        if self.driven {
            self.fab.absorb(last);
        }
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        let p = self.p;
        let r = &mut self.rng;
        if self.reset_pcm > 0 && r.below(100_000) < self.reset_pcm as u64 {
            self.fab.reset();
            self.driven = false;
            return Step::Reset;
        }
        self.pkts.clear();
        for &v in &self.hot {
            let q = self.fab.voq[v].len();
            if self.saturate {
                for _ in q..2 {
                    self.pkts.push((v, pkt_len(&p, &self.cfg, v, self.lens, r)));
                }
            } else if q < 32 && per_mille(r, self.load_pm) {
                self.pkts.push((v, pkt_len(&p, &self.cfg, v, self.lens, r)));
            }
        }
        for e in 0..p.e {
            if per_mille(r, self.stall_pm) {
                self.fab.stall[e] = !self.fab.stall[e];
            }
            self.occ[e] = m.occupancy(e);
        }
        i.clone_from(&self.zero);
        self.fab.fill(&self.pkts, &self.occ, i);
        if per_mille(r, self.glitch_pm) {
            let v = if self.hot.is_empty() || per_mille(r, 200) {
                r.below(p.voqs() as u64) as usize
            } else {
                self.hot[r.below(self.hot.len() as u64) as usize]
            };
            match r.below(3) {
                0 => i.ann_bl_i[v] = true,
                1 => i.ann_mt_i[v] = true,
                _ => {
                    i.ann_bl_i[v] = true;
                    i.ann_mt_i[v] = true;
                }
            }
        }
        if per_mille(r, self.noise_pm) {
            noise(&p, i, r);
        }
        self.driven = true;
        Step::Drive
    }
}

#[derive(Clone, Copy, Debug)]
struct EgressDraw {
    q_sel: u8,
    q: u64,
    rate_sel: u8,
    num: u64,
    den: u64,
    buf_sel: u8,
    buf: u64,
    slice_mode: bool,
}

fn egress_cfg(p: &CreditParams, d: EgressDraw) -> (u16, u16, u16, u32) {
    let lmax = p.lmax() as u64;
    let rmax = p.rate_max() as u64;
    let q = match d.q_sel {
        0 => 1,
        1 => lmax,
        2 => 64.min(lmax),
        3 => 256.min(lmax),
        _ => 1 + d.q % lmax,
    };
    let (num, den) = match d.rate_sel {
        0 => (0, 1 + d.den % rmax),
        1 => {
            let x = 1 + d.den % rmax;
            (x, x)
        }
        2 => (1, rmax),
        3 if rmax >= 40 => (21, 40),
        3 => (1, 2),
        4 => (rmax, rmax),
        _ => {
            let den = 1 + d.den % rmax;
            (d.num % (den + 1), den)
        }
    };
    let cmax = p.occ_max() as u64;
    let buf = match d.buf_sel {
        0 => 0,
        1 => q - 1,
        2 => q,
        3 => cmax,
        4 => (q * (1 + d.buf % 8)).min(cmax),
        5 => (q * (1 + d.buf % 24) + d.buf % q).min(cmax),
        _ => d.buf % (cmax + 1),
    };
    (q as u16, num as u16, den as u16, buf as u32)
}

/// Configurations for variant `p` (with `illegal`, 1 in 10 is rejected by
/// the configuration check).
pub fn config_strategy(p: &CreditParams, illegal: bool) -> BoxedStrategy<CreditConfig> {
    let p = *p;
    let egress = (
        (0u8..6, any::<u64>()),
        (0u8..7, any::<u64>(), any::<u64>()),
        (0u8..8, any::<u64>()),
        any::<bool>(),
    )
        .prop_map(
            |((q_sel, q), (rate_sel, num, den), (buf_sel, buf), slice_mode)| EgressDraw {
                q_sel,
                q,
                rate_sel,
                num,
                den,
                buf_sel,
                buf,
                slice_mode,
            },
        );
    let slices = (0u8..4, proptest::collection::vec(0u8..p.s as u8, p.i));
    let bad = if illegal {
        proptest::option::weighted(0.1, (0u8..3, 0..p.e)).boxed()
    } else {
        Just(None).boxed()
    };
    (
        proptest::collection::vec(egress, p.e),
        slices,
        bad,
        any::<bool>(),
    )
        .prop_map(move |(eg, (slice_sel, rnd), bad, all_same_mode)| {
            let mut c = CreditConfig::zero(&p);
            for (e, d) in eg.iter().enumerate() {
                let (q, num, den, buf) = egress_cfg(&p, *d);
                c.cfg_quantum_i[e] = q;
                c.cfg_rate_num_i[e] = num;
                c.cfg_rate_den_i[e] = den;
                c.cfg_buf_i[e] = buf;
                c.cfg_slice_mode_i[e] = if all_same_mode {
                    eg[0].slice_mode
                } else {
                    d.slice_mode
                };
            }
            c.cfg_slice_i = match slice_sel {
                0 => vec![0; p.i],
                1 => (0..p.i).map(|i| (i % p.s) as u8).collect(),
                2 => (0..p.i).map(|i| (i * p.s / p.i) as u8).collect(),
                _ => rnd,
            };
            if let Some((kind, e)) = bad {
                match kind {
                    0 => c.cfg_quantum_i[e] = 0,
                    1 => c.cfg_rate_den_i[e] = 0,
                    _ => {
                        let den = c.cfg_rate_den_i[e].max(1);
                        if den as u32 == p.rate_max() {
                            c.cfg_rate_den_i[e] = den - 1;
                            c.cfg_rate_num_i[e] = den;
                        } else {
                            c.cfg_rate_den_i[e] = den;
                            c.cfg_rate_num_i[e] = den + 1;
                        }
                    }
                }
            }
            c
        })
        .boxed()
}

fn link_rate(p: &CreditParams, cfg: &CreditConfig, e: usize, sel: u8, x: u64) -> u32 {
    let lmax = p.lmax() as u64;
    let (q, num, den) = (
        cfg.cfg_quantum_i[e] as u64,
        cfg.cfg_rate_num_i[e] as u64,
        cfg.cfg_rate_den_i[e].max(1) as u64,
    );
    let r = match sel {
        // The link as fast as the credits (no speed-up) ...
        0 => (q * num).div_ceil(den),
        // ... or 5% slower (the fabric has a speed-up) ...
        1 => q * num * 20 / (den * 21),
        // ... or a cell per cycle, the largest, the smallest, anything.
        2 => q,
        3 => lmax,
        4 if x.is_multiple_of(4) => 1,
        _ => 1 + x % lmax,
    };
    r.clamp(1, lmax) as u32
}

fn lens_strategy() -> impl Strategy<Value = Lens> {
    prop_oneof![
        4 => Just(Lens::Cell),
        2 => Just(Lens::Small),
        2 => Just(Lens::Large),
        1 => Just(Lens::Max),
        3 => Just(Lens::Any),
    ]
}

/// Scenarios for configuration `cfg`, for the closed-loop property tests
/// (which realise them with [`Rng`]); the traffic of a run is [`CreditGen`]'s,
/// whose phases are drawn from the same distributions.
pub fn scenario_strategy(
    p: &CreditParams,
    cfg: &CreditConfig,
    phases: usize,
) -> BoxedStrategy<Scenario> {
    let p = *p;
    let cfg = cfg.clone();
    let nv = p.voqs();
    let phase = (
        1u32..=8,
        proptest::collection::vec(0..nv, 1..=nv.min(8)),
        proptest::bool::weighted(0.4),
        0u32..=1000,
        lens_strategy(),
        prop_oneof![3 => Just(0u32), 2 => 1u32..=100, 1 => 100u32..=500],
        prop_oneof![3 => Just(0u32), 2 => 1u32..=100],
        prop_oneof![6 => Just(0u32), 2 => 1u32..=30, 1 => 30u32..=200],
        any::<u64>(),
    )
        .prop_map(
            |(weight, hot, saturate, load_pm, lens, stall_pm, glitch_pm, noise_pm, seed)| Phase {
                weight,
                hot,
                saturate,
                load_pm,
                lens,
                stall_pm,
                glitch_pm,
                noise_pm,
                seed,
            },
        );
    (
        prop_oneof![3 => 1usize..=4, 1 => 5usize..=24],
        prop_oneof![3 => 1usize..=4, 1 => 5usize..=24],
        prop_oneof![2 => Just(0usize), 2 => 1usize..=3, 1 => 4usize..=12],
        proptest::collection::vec((0u8..6, any::<u64>()), p.e),
        proptest::collection::vec(phase, phases..=phases),
        prop_oneof![4 => Just(0u32), 1 => 1u32..=50],
    )
        .prop_map(move |(dc, dd, da, links, phases, reset_pcm)| Scenario {
            lp: Loop {
                dc,
                dd,
                da,
                link: (0..p.e)
                    .map(|e| link_rate(&p, &cfg, e, links[e].0, links[e].1))
                    .collect(),
            },
            phases,
            reset_pcm,
        })
        .boxed()
}

impl Bench for Credit {
    fn scenarios() -> Vec<crate::Scenario<Credit>> {
        vec![
            crate::Scenario {
                name: "bdp-toy",
                about: "seed 000 toy example: RTT 6, a buffer of 6 cells (one BDP) keeps the link busy; congested at 300..330, never overflows",
                build: || scenario::toy(6).0,
                check: Some(scenario::toy_full_rate),
            },
            crate::Scenario {
                name: "bdp-toy-short",
                about: "seed 000 toy example with 5 cells (BDP - 1): the link runs at 5/6",
                build: || scenario::toy(5).0,
                check: Some(scenario::toy_five_sixths),
            },
            crate::Scenario {
                name: "fairness-slice",
                about: "seed 000: three ingress ports, two slices, slice-level allocation: 25% / 25% / 50%",
                build: || scenario::fairness_stimulus(true).0,
                check: Some(scenario::slice_shares),
            },
            crate::Scenario {
                name: "limits",
                about: "every counter at its limit on the default variant: balance and outstanding exactly at their bounds (no error), then saturated (error); occupancy saturated; departure larger than the occupancy",
                build: scenario::limits,
                check: Some(scenario::limits_outcome),
            },
            crate::Scenario {
                name: "fairness-port",
                about: "seed 000: the same with port-level allocation: one third each",
                build: || scenario::fairness_stimulus(false).0,
                check: Some(scenario::port_shares),
            },
        ]
    }

    fn config_strategy(p: &CreditParams, illegal: bool) -> BoxedStrategy<CreditConfig> {
        config_strategy(p, illegal)
    }
    const GENERATOR_VERSION: u32 = 2;
    type Gen = CreditGen;
    fn generator(p: &CreditParams, cfg: &CreditConfig, seed: u64) -> CreditGen {
        CreditGen::new(p, cfg, seed)
    }
}

pub mod scenario;

#[cfg(test)]
mod gen_tests;
