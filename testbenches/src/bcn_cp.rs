//! Stimulus for the BCN congestion point (`docs/bcn_cp.md`).
//!
//! Configurations cover every runtime field over its legal range with the
//! edges on purpose: queue limit 0, small and `2^QW - 1`; Qeq 0, equal to the
//! limit and large enough for Qoff to saturate; a buffer smaller than one
//! queue's limit and the largest one; W = 0 and 31; Pm = 0, 1/1024, about
//! 1/100 and 1 (every arrival).
//!
//! Traffic ([`BcnCpGen`]) comes in phases over one to three hot queues, each
//! with its own mode: fill (arrivals every cycle, jumbo frames: the queue
//! climbs far past Qeq, Qoff and Qdelta saturate, messages pile up in the
//! pending slot and are dropped), drain, mixed, and hover (closed loop: an
//! arrival while the queue is below Qeq, a departure while above, often
//! sized to land exactly on Qeq, on the queue limit or on the buffer limit).
//! Departures are realised against the golden model ("up to n bytes of what
//! the queue holds"; a few raw ones are clamped). Flows come from a small set
//! of stations, a fraction tagged by a rate limiter, each tag naming this
//! congestion point (its CPID and the frame's queue) or another one; a few
//! frames are BCN frames (`cfg_etype_i`), which are never sampled. A queue
//! index >= NQ now and then (variants with fewer than 8 queues). One reset
//! in about 3000 cycles.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::{u11, u13, u14, u3, u5};
use model::bcn_cp::{
    BcnCp, BcnCpConfig, BcnCpInputs, BcnCpOutputs, BcnCpParams, BCN_ETHERTYPE, FB_LATENCY,
    PM_ALWAYS,
};
use model::port::mask;
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;

/// Station addresses (unicast) the flows come from and go to.
pub const STATIONS: [u64; 4] = [
    0x02_00_00_00_00_01,
    0x02_00_00_00_00_02,
    0x0a_bb_cc_dd_ee_ff,
    0x00_1b_21_3c_4d_5e,
];

// ---------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct CfgDraw {
    sa: u64,
    cpid: u16,
    pcp: u8,
    etype: Option<u16>,
    qmax_sel: u8,
    qmax: u64,
    qeq_sel: [u8; 8],
    qeq: [u64; 8],
    buf_sel: u8,
    buf: u64,
    w: u8,
    pm: u16,
    illegal: Option<u8>,
}

fn cfg_of(p: &BcnCpParams, d: &CfgDraw) -> BcnCpConfig {
    let qm = p.qmax();
    let qmax = match d.qmax_sel {
        0 => qm,
        1 => 0,
        2 => 16_384 + d.qmax % (qm - 16_383),
        3 => d.qmax % 20_001,
        _ => (20_000 + d.qmax % 300_000).min(qm),
    };
    let mut qeq: Vec<u32> = (0..p.nq)
        .map(|k| {
            let v = d.qeq[k];
            (match d.qeq_sel[k] {
                0 => 0,
                1 => qmax,
                2 => qmax / 2,
                3 => 26_000.min(qmax),
                // Large: Qoff saturates on an empty queue when QW >= 22.
                4 => qmax.saturating_sub(v % 4096),
                _ => v % (qmax + 1),
            }) as u32
        })
        .collect();
    let tm = mask(p.tw());
    let nq = p.nq as u64;
    let buf = match d.buf_sel {
        0 => tm,
        1 => (nq * qmax).min(tm),
        2 => (qmax / 2 + d.buf % (qmax / 2 + nq * qmax / 2 + 1)).min(tm),
        _ => d.buf % 50_000,
    };
    let mut c = BcnCpConfig {
        cfg_cp_sa_i: d.sa & !(1 << 40) & mask(48),
        cfg_cpid_i: u13::new(d.cpid & 0x1fff),
        cfg_pcp_i: u3::new(d.pcp & 7),
        cfg_etype_i: d.etype.unwrap_or(BCN_ETHERTYPE),
        cfg_qeq_i: qeq.clone(),
        cfg_qmax_i: qmax as u32,
        cfg_buf_i: buf as u32,
        cfg_w_i: u5::new(d.w & 31),
        cfg_pm_i: u11::new(d.pm.min(PM_ALWAYS)),
    };
    match d.illegal {
        Some(0) => c.cfg_cp_sa_i |= 1 << 40,
        // Just above the legal range, or anywhere above it.
        Some(1) if d.w.is_multiple_of(2) => c.cfg_pm_i = u11::new(PM_ALWAYS + 1),
        Some(1) => c.cfg_pm_i = u11::new(PM_ALWAYS + 1 + d.pm % 1023),
        Some(_) if qmax < qm => {
            qeq[d.cpid as usize % p.nq] = (qmax + 1 + d.qeq[0] % (qm - qmax)) as u32;
            c.cfg_qeq_i = qeq;
        }
        _ => c.cfg_cp_sa_i |= 1 << 40,
    }
    if d.illegal.is_none() {
        c.cfg_cp_sa_i &= !(1 << 40);
    }
    c
}

/// Configurations for variant `p`.
pub fn config_strategy(p: &BcnCpParams, illegal: bool) -> BoxedStrategy<BcnCpConfig> {
    let p = *p;
    let sel = |n: u8| 0..n;
    let draw = (
        (
            any::<u64>(),
            any::<u16>(),
            prop_oneof![3 => Just(7u8), 1 => 0u8..8],
        ),
        prop_oneof![4 => Just(None), 1 => any::<u16>().prop_map(Some)],
        (
            prop_oneof![4 => Just(0u8), 1 => Just(1u8), 2 => Just(2u8), 1 => Just(3u8), 3 => Just(4u8)],
            any::<u64>(),
        ),
        (
            proptest::array::uniform8(sel(6)),
            proptest::array::uniform8(any::<u64>()),
        ),
        (sel(4), any::<u64>()),
        prop_oneof![1 => Just(0u8), 1 => Just(31u8), 2 => Just(8u8), 4 => 0u8..32],
        prop_oneof![
            1 => Just(0u16),
            1 => Just(1u16),
            3 => Just(10u16),
            1 => Just(100u16),
            2 => Just(1023u16),
            3 => Just(1024u16),
            3 => 0u16..=1024
        ],
        if illegal {
            prop_oneof![9 => Just(None), 1 => (0u8..3).prop_map(Some)].boxed()
        } else {
            Just(None).boxed()
        },
    );
    draw.prop_map(
        move |(
            (sa, cpid, pcp),
            etype,
            (qmax_sel, qmax),
            (qeq_sel, qeq),
            (buf_sel, buf),
            w,
            pm,
            illegal,
        )| {
            cfg_of(
                &p,
                &CfgDraw {
                    sa,
                    cpid,
                    pcp,
                    etype,
                    qmax_sel,
                    qmax,
                    qeq_sel,
                    qeq,
                    buf_sel,
                    buf,
                    w,
                    pm,
                    illegal,
                },
            )
        },
    )
    .boxed()
}

// ---------------------------------------------------------------------------
// Traffic
// ---------------------------------------------------------------------------

/// What a phase does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Arrivals almost every cycle, few departures.
    Fill,
    /// Departures almost every cycle, few arrivals.
    Drain,
    /// Both at random rates.
    Mixed,
    /// Closed loop around Qeq of the hot queue.
    Hover,
}

/// The BCN congestion point's traffic, one cycle at a time.
pub struct BcnCpGen {
    p: BcnCpParams,
    c: BcnCpConfig,
    rng: Rng,
    hot: [usize; 3],
    n_hot: usize,
    mode: Mode,
    arr_p: f64,
    dep_p: f64,
    len_mode: u8,
    rlt_p: f64,
    dep_rlt_p: f64,
    own_p: f64,
    bcn_p: f64,
    prio: u8,
    left: u32,
}

impl BcnCpGen {
    /// The generator of configuration `cfg` of variant `p` from `seed`.
    pub fn new(p: &BcnCpParams, cfg: &BcnCpConfig, seed: u64) -> Self {
        BcnCpGen {
            p: *p,
            c: cfg.clone(),
            rng: Rng::new(seed, 0xbc0),
            hot: [0; 3],
            n_hot: 1,
            mode: Mode::Mixed,
            arr_p: 0.0,
            dep_p: 0.0,
            len_mode: 0,
            rlt_p: 0.0,
            dep_rlt_p: 0.0,
            own_p: 0.0,
            bcn_p: 0.0,
            prio: 0,
            left: 0,
        }
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        self.left = r.range(20, 400) as u32;
        self.n_hot = r.range(1, 3) as usize;
        for h in self.hot.iter_mut() {
            *h = r.below(self.p.nq as u64) as usize;
        }
        self.mode = match r.weighted(&[3, 2, 3, 3]) {
            0 => Mode::Fill,
            1 => Mode::Drain,
            2 => Mode::Mixed,
            _ => Mode::Hover,
        };
        let pr = |r: &mut Rng| (r.range(0, 10) as f64 + 0.25) / 10.5;
        (self.arr_p, self.dep_p) = match self.mode {
            Mode::Fill => (
                0.9 + r.range(0, 10) as f64 / 100.0,
                r.range(0, 3) as f64 / 10.0,
            ),
            Mode::Drain => (r.range(0, 3) as f64 / 10.0, 0.9),
            Mode::Mixed => (pr(r), pr(r)),
            Mode::Hover => (0.9, 0.9),
        };
        // Fill phases mostly with the longest frames: 128 of them take a
        // queue past 2 MB (Qoff and Qdelta saturate when QW >= 22).
        self.len_mode = if self.mode == Mode::Fill && r.chance(0.5) {
            4
        } else {
            r.weighted(&[3, 3, 2, 1]) as u8
        };
        if self.mode == Mode::Fill {
            self.left = r.range(100, 600) as u32;
        }
        self.rlt_p = [0.0, 0.0, 0.3, 1.0][r.below(4) as usize];
        self.dep_rlt_p = [0.0, 0.3, 1.0][r.below(3) as usize];
        // Tags naming this point: all, most, half, none.
        self.own_p = [1.0, 0.8, 0.5, 0.0][r.below(4) as usize];
        self.bcn_p = [0.0, 0.0, 0.05, 0.5][r.below(4) as usize];
        self.prio = r.below(8) as u8;
    }

    fn station(r: &mut Rng) -> u64 {
        if r.chance(0.8) {
            r.pick(&STATIONS)
        } else {
            r.u64() & mask(48)
        }
    }
}

impl Generator<BcnCp> for BcnCpGen {
    fn next(&mut self, m: &BcnCp, _: &BcnCpOutputs, i: &mut BcnCpInputs) -> Step {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        if self.rng.chance(1.0 / 3000.0) {
            return Step::Reset;
        }
        let st = m.state();
        let c = &self.c;
        let nq = self.p.nq;
        // The queues of this cycle: a hot one, any one, or one past NQ.
        let pick = |r: &mut Rng, hot: &[usize]| -> usize {
            match r.weighted(&[8, 2, if nq < 8 { 1 } else { 0 }]) {
                0 => hot[r.below(hot.len() as u64) as usize],
                1 => r.below(nq as u64) as usize,
                _ => r.range(nq as u64, 7) as usize,
            }
        };
        let hot = self.hot;
        let hot = &hot[..self.n_hot];
        let aq = pick(&mut self.rng, hot);
        let dq = pick(&mut self.rng, hot);
        let depth = |q: usize| if q < nq { st.q_q[q] as u64 } else { 0 };
        let (mut arr, mut dep) = (self.rng.chance(self.arr_p), self.rng.chance(self.dep_p));
        if self.mode == Mode::Hover && aq < nq {
            let below = depth(aq) < c.cfg_qeq_i[aq] as u64;
            arr &= below || self.rng.chance(0.2);
            dep &= !below || self.rng.chance(0.2);
        }
        let mut len = self_len(&mut self.rng, self.len_mode);
        let r = &mut self.rng;
        // Exact landings: on Qeq, on the queue limit, on the buffer limit.
        if aq < nq && r.chance(0.15) {
            let q = depth(aq);
            let target = match r.below(3) {
                0 => c.cfg_qeq_i[aq] as u64,
                1 => c.cfg_qmax_i as u64,
                _ => q + (c.cfg_buf_i as u64).saturating_sub(st.tot_q as u64),
            };
            if target > q && target - q <= 16_383 {
                len = target - q;
            }
        }
        i.arr_valid_i = arr;
        i.arr_queue_i = u3::new(aq as u8);
        i.arr_len_i = u14::new(len as u16);
        i.arr_da_i = Self::station(r);
        i.arr_sa_i = Self::station(r);
        i.arr_prio_i = u3::new(if r.chance(0.8) {
            self.prio
        } else {
            r.below(8) as u8
        });
        i.arr_rlt_i = r.chance(self.rlt_p);
        i.arr_rlt_id_i = if r.chance(0.7) {
            r.below(4) as u16
        } else {
            r.u64() as u16
        };
        let cpid = |q: usize| (c.cfg_cpid_i.value() << 3) | q as u16;
        // Another point: this point's id on another queue, or anything.
        let other = |r: &mut Rng, q: usize| {
            if r.bool() {
                cpid((q + 1 + r.below(7) as usize) % 8)
            } else {
                r.u64() as u16
            }
        };
        i.arr_rlt_cpid_i = if r.chance(self.own_p) {
            cpid(aq)
        } else {
            other(r, aq)
        };
        i.arr_etype_i = if r.chance(self.bcn_p) {
            c.cfg_etype_i
        } else if r.chance(0.9) {
            r.pick(&[0x0800, 0x86dd])
        } else {
            r.u64() as u16
        };
        // A departure of up to what the queue holds, a few raw.
        let have = depth(dq);
        let dlen = match r.weighted(&[5, 3, 1]) {
            0 => self_len(r, self.len_mode).min(have),
            1 => have.min(16_383),
            _ => r.range(0, 16_383),
        };
        dep &= dlen > 0 || r.chance(0.05);
        i.dep_valid_i = dep;
        i.dep_queue_i = u3::new(dq as u8);
        i.dep_len_i = u14::new(dlen as u16);
        i.dep_rlt_i = r.chance(self.dep_rlt_p);
        i.dep_rlt_cpid_i = if r.chance(self.own_p) {
            cpid(dq)
        } else {
            other(r, dq)
        };
        Step::Drive
    }
}

fn self_len(r: &mut Rng, mode: u8) -> u64 {
    match mode {
        0 => r.range(64, 128),
        1 => r.range(64, 1518),
        2 => r.range(9000, 16_383),
        4 => 16_383,
        _ if r.bool() => r.pick(&[1, 63, 64, 16_383]),
        _ => r.range(1, 16_383),
    }
}

// ---------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------

/// Assembles the frames of the transmit stream one cycle at a time.
#[derive(Clone, Debug, Default)]
pub struct FrameAssembler {
    first: u64,
    bytes: Vec<u8>,
}

impl FrameAssembler {
    /// The outputs of cycle `t` (`None` for a reset cycle, which drops a
    /// frame half-way through); the frame whose last beat this was, with the
    /// cycle of its first beat.
    pub fn push(&mut self, t: u64, o: Option<&BcnCpOutputs>) -> Option<(u64, Vec<u8>)> {
        let Some(o) = o else {
            self.bytes.clear();
            return None;
        };
        if !o.tx_valid_o {
            return None;
        }
        if self.bytes.is_empty() {
            self.first = t;
        }
        let n = if o.tx_last_o {
            8 - o.tx_empty_o.value() as usize
        } else {
            8
        };
        self.bytes
            .extend((0..n).map(|j| (o.tx_data_o >> (8 * j)) as u8));
        if o.tx_last_o {
            return Some((self.first, std::mem::take(&mut self.bytes)));
        }
        None
    }
}

/// Every frame of `stim` (golden model), with the cycle of its first beat.
pub fn frames_of(stim: &Stimulus<BcnCp>) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let mut v = Vec::new();
    <BcnCp as Bench>::frames(stim, &mut |t, f| v.push((t, f.to_vec())))?;
    Ok(v)
}

impl Bench for BcnCp {
    const GENERATOR_VERSION: u32 = 2;
    type Gen = BcnCpGen;
    fn generator(p: &BcnCpParams, cfg: &BcnCpConfig, seed: u64) -> BcnCpGen {
        BcnCpGen::new(p, cfg, seed)
    }

    fn config_strategy(p: &BcnCpParams, illegal: bool) -> BoxedStrategy<BcnCpConfig> {
        config_strategy(p, illegal)
    }

    fn frames(stim: &Stimulus<BcnCp>, sink: &mut dyn FnMut(u64, &[u8])) -> Result<bool, String> {
        let (p, cfg) = (&stim.params, &stim.config);
        let mut src = crate::source(stim)?;
        let mut m = BcnCp::new(p, cfg);
        let reset_out = BcnCp::new(p, cfg).step(&BcnCpInputs::zero(p));
        let mut o = reset_out.clone();
        let mut i = BcnCpInputs::zero(p);
        let mut a = FrameAssembler::default();
        for t in 0..stim.len() {
            let f = match src.next(&m, &o, &mut i) {
                Step::Reset => {
                    m = BcnCp::new(p, cfg);
                    o.clone_from(&reset_out);
                    a.push(t, None)
                }
                Step::Drive => {
                    m.step_into(&i, &mut o);
                    a.push(t, Some(&o))
                }
            };
            if let Some((first, bytes)) = f {
                sink(first, &bytes);
            }
        }
        Ok(true)
    }

    fn scenarios() -> Vec<crate::Scenario<BcnCp>> {
        vec![
            crate::Scenario {
                name: "congestion-builds",
                about: "seed 003 step 1: sources collide on one queue, it crosses Qeq, sampled frames \
                        (Pm = 1/1024 x 1024 here: every frame) send negative-feedback messages back to their SA",
                build: scenario::congestion_builds,
                check: Some(scenario::negative_to_sources),
            },
            crate::Scenario {
                name: "tagged-settling",
                about: "seed 003 step 3: every sampled rate-limited (tagged) frame elicits a message, \
                        also with Fb >= 0; the CP strips the tags on departure",
                build: scenario::tagged_settling,
                check: Some(scenario::tagged_answered),
            },
            crate::Scenario {
                name: "several-points",
                about: "several congestion points: a frame tagged by this point is answered with any Fb, \
                        one tagged by another point only when Fb < 0; BCN frames are never sampled; \
                        only this point's tags are stripped",
                build: scenario::several_points,
                check: Some(scenario::own_tags_only),
            },
            crate::Scenario {
                name: "pending-and-drop",
                about: "a message decided while a frame is on the wire waits in the pending slot; \
                        a third one is dropped and counted",
                build: scenario::pending_and_drop,
                check: Some(scenario::pending_then_drop),
            },
            crate::Scenario {
                name: "pm-one-percent",
                about: "seed 003 step 1: Pm ~ 1/100 (cfg_pm_i = 10, 10/1024): about 1 in 100 arrivals is sampled",
                build: scenario::pm_one_percent,
                check: Some(scenario::about_one_percent),
            },
            crate::Scenario {
                name: "closed-loop",
                about: "seed 003 steps 1-4 and 6: four sources start together behind reaction points \
                        (golden models) that hear this point after 250 cycles; the burst's peak \
                        follows the sampling model (docs/bcn.md)",
                build: scenario::closed_loop,
                check: Some(scenario::peak_as_modelled),
            },
        ]
    }
}

/// Directed scenarios from seed 003.
pub mod scenario {
    use super::*;
    use model::bcn_cp::parse_frame;

    /// The default configuration of the default variant with every arrival
    /// sampled (`cfg_pm_i` = 1024) and Qeq = `qeq` bytes on every queue.
    pub fn config(qeq: u32, pm: u16) -> (BcnCpParams, BcnCpConfig) {
        let p = BcnCpParams::default();
        let mut c = BcnCp::default_config(&p);
        c.cfg_qeq_i = vec![qeq; p.nq];
        c.cfg_pm_i = u11::new(pm);
        (p, c)
    }

    /// The CPID of queue `q` of the scenarios' point (`cfg_cpid_i` of the
    /// default configuration).
    pub fn own_cpid(q: u8) -> u16 {
        let c = BcnCp::default_config(&BcnCpParams::default());
        (c.cfg_cpid_i.value() << 3) | q as u16
    }

    /// Another point's CPID.
    pub const OTHER_CPID: u16 = 0x0777;

    /// An IPv4 frame's EtherType.
    pub const IPV4: u16 = 0x0800;

    /// An IPv4 arrival of `len` bytes on queue `q` from `sa` to `da`, tagged
    /// (limiter id 0x42) by this point when `rlt`.
    pub fn arrival(q: u8, len: u16, sa: u64, da: u64, rlt: bool) -> BcnCpInputs {
        let mut i = BcnCpInputs::zero(&BcnCpParams::default());
        i.arr_valid_i = true;
        i.arr_queue_i = u3::new(q);
        i.arr_len_i = u14::new(len);
        i.arr_sa_i = sa;
        i.arr_da_i = da;
        i.arr_prio_i = u3::new(3);
        i.arr_rlt_i = rlt;
        i.arr_rlt_id_i = if rlt { 0x0042 } else { 0 };
        i.arr_rlt_cpid_i = if rlt { own_cpid(q) } else { 0 };
        i.arr_etype_i = IPV4;
        i
    }

    /// A departure of `len` bytes from queue `q`, tagged by this point when `rlt`.
    pub fn departure(q: u8, len: u16, rlt: bool) -> BcnCpInputs {
        let mut i = BcnCpInputs::zero(&BcnCpParams::default());
        i.dep_valid_i = true;
        i.dep_queue_i = u3::new(q);
        i.dep_len_i = u14::new(len);
        i.dep_rlt_i = rlt;
        i.dep_rlt_cpid_i = if rlt { own_cpid(q) } else { 0 };
        i
    }

    /// `a` with the departure fields of `d`.
    pub fn with_departure(mut a: BcnCpInputs, d: &BcnCpInputs) -> BcnCpInputs {
        a.dep_valid_i = d.dep_valid_i;
        a.dep_queue_i = d.dep_queue_i;
        a.dep_len_i = d.dep_len_i;
        a.dep_rlt_i = d.dep_rlt_i;
        a.dep_rlt_cpid_i = d.dep_rlt_cpid_i;
        a
    }

    fn stim(
        p: BcnCpParams,
        c: BcnCpConfig,
        cycles: Vec<BcnCpInputs>,
        seed: u64,
    ) -> Stimulus<BcnCp> {
        Stimulus {
            generated: None,
            params: p,
            config: c,
            cycles: cycles.into_iter().map(Cycle::Drive).collect(),
            seed,
        }
    }

    fn idle() -> BcnCpInputs {
        BcnCpInputs::zero(&BcnCpParams::default())
    }

    /// Step 1: four sources send 1500-byte frames to queue 2 at one frame
    /// per cycle while it drains one frame every other cycle; the queue
    /// crosses Qeq = 26,000 bytes; every arrival is sampled; from then on
    /// every message has Fb < 0 and goes back to the frame's SA. Then
    /// 200 idle cycles while the queue drains.
    pub fn congestion_builds() -> Stimulus<BcnCp> {
        let (p, c) = config(26_000, PM_ALWAYS);
        let mut v = Vec::new();
        for t in 0..120usize {
            let mut i = arrival(2, 1500, STATIONS[t % 4], STATIONS[(t + 1) % 4], false);
            if t % 2 == 1 {
                i = with_departure(i, &departure(2, 1500, false));
            }
            v.push(i);
        }
        for _ in 0..60 {
            v.push(departure(2, 1500, false));
        }
        for _ in 0..20 {
            v.push(idle());
        }
        stim(p, c, v, 0xbc1)
    }

    /// Step 3: a queue held just below Qeq (Fb >= 0 for untagged frames)
    /// receives alternately tagged and untagged frames: the tagged ones
    /// (every one sampled) each elicit a message, the untagged ones none;
    /// the departures of tagged frames are reported stripped.
    pub fn tagged_settling() -> Stimulus<BcnCp> {
        let (p, c) = config(40_000, PM_ALWAYS);
        let mut v = Vec::new();
        for t in 0..200usize {
            let mut i = arrival(5, 1000, STATIONS[t % 2], STATIONS[3], t % 2 == 0);
            if t >= 20 {
                // Steady: one in, one out (the queue stays at 20 kB).
                i = with_departure(i, &departure(5, 1000, t % 2 == 1));
            }
            v.push(i);
        }
        for _ in 0..20 {
            v.push(idle());
        }
        stim(p, c, v, 0xbc3)
    }

    /// The kind of arrival `several_points` sends in cycle `t`: 0 tagged by
    /// this point, 1 tagged by another point, 2 untagged, 3 a BCN frame.
    pub fn several_points_kind(t: usize) -> usize {
        t % 4
    }

    /// Several congestion points (docs/bcn_cp.md, rules 1 to 4): queue 5
    /// is filled to 20 kB (below Qeq = 40 kB, so Fb >= 0), then held there
    /// (one in, one out) for 200 cycles while the arrivals cycle through a
    /// frame tagged by this point, one tagged by another point
    /// (`OTHER_CPID`), an untagged one and a BCN frame, every arrival
    /// sampled but the BCN frames; the departures alternate between tags
    /// of this point (stripped) and of the other (kept). Then 80 cycles of
    /// arrivals only take the queue to 100 kB, past Qeq: every kind but the
    /// BCN frame now gets a negative message.
    pub fn several_points() -> Stimulus<BcnCp> {
        let (p, c) = config(40_000, PM_ALWAYS);
        let kind = |t: usize| {
            let mut i = arrival(5, 1000, STATIONS[t % 4], STATIONS[3], false);
            match several_points_kind(t) {
                0 => {
                    i.arr_rlt_i = true;
                    i.arr_rlt_id_i = 2;
                    i.arr_rlt_cpid_i = own_cpid(5);
                }
                1 => {
                    i.arr_rlt_i = true;
                    i.arr_rlt_id_i = 3;
                    i.arr_rlt_cpid_i = OTHER_CPID;
                }
                3 => i.arr_etype_i = c.cfg_etype_i,
                _ => {}
            }
            i
        };
        let mut v: Vec<BcnCpInputs> = (0..20)
            .map(|t| arrival(5, 1000, STATIONS[t % 4], STATIONS[3], false))
            .collect();
        for t in 20..220usize {
            let mut d = departure(5, 1000, true);
            if t % 2 == 1 {
                d.dep_rlt_cpid_i = OTHER_CPID;
            }
            v.push(with_departure(kind(t), &d));
        }
        for t in 220..300usize {
            v.push(kind(t));
        }
        for _ in 0..20 {
            v.push(idle());
        }
        stim(p, c, v, 0xbc7)
    }

    /// Three messages in three consecutive cycles: the first starts a frame,
    /// the second waits in the pending slot, the third is dropped; then a
    /// fourth on the last beat of the first frame while the second is
    /// pending: the second starts back to back, the fourth takes the slot.
    pub fn pending_and_drop() -> Stimulus<BcnCp> {
        let (p, c) = config(0, PM_ALWAYS);
        let mut v = Vec::new();
        for &sa in &STATIONS[..3] {
            v.push(arrival(0, 1000, sa, STATIONS[3], false));
        }
        // Their messages come in cycles 3..5 (the feedback pipeline); the
        // first frame's beats are in cycles 4..11: the arrival of cycle 8
        // has its message on the last beat.
        for _ in 3..8 {
            v.push(idle());
        }
        v.push(arrival(1, 2000, STATIONS[1], STATIONS[0], false));
        for _ in 0..30 {
            v.push(idle());
        }
        stim(p, c, v, 0xbc4)
    }

    /// Pm ~ 1/100: 20,000 arrivals of 64 bytes, departing at once, with
    /// `cfg_pm_i` = 10.
    pub fn pm_one_percent() -> Stimulus<BcnCp> {
        let (p, c) = config(26_000, 10);
        let mut v = Vec::new();
        for t in 0..20_000usize {
            let mut i = arrival((t % 8) as u8, 64, STATIONS[t % 4], STATIONS[2], false);
            if t > 0 {
                i = with_departure(i, &departure(((t - 1) % 8) as u8, 64, false));
            }
            v.push(i);
        }
        stim(p, c, v, 0xbc5)
    }

    /// The closed loop of the burst test (docs/bcn.md, "The lossless buffer
    /// with sampling"): one point draining 4 B/cycle, Qeq 26,000 B, a
    /// buffer large enough for any burst (16 MB), four hosts at 8 B/cycle
    /// with 1500 B frames starting together, reaction points with the
    /// defaults; Pm = `pm` / 1024, control delay `delay`; the seed sets the
    /// point's sampling phase (up to 1024 warm-up arrivals).
    pub fn closed_loop_config(pm: u16, delay: u64, seed: u64) -> studies::bcn_loop::LoopConfig {
        use studies::bcn_loop::{LoopConfig, Topology};
        LoopConfig {
            topo: Topology::one_point(4, 4.0, 26_000, 16_000_000, delay),
            pm,
            seed,
            warmup: 1024,
            start_spread: 0,
            ..LoopConfig::default()
        }
    }

    /// The point's inputs, cycle by cycle, in that closed loop with every
    /// arrival sampled and 250 cycles of delay (the warm-up and 8,000
    /// cycles: the burst, its peak and the decline).
    pub fn closed_loop() -> Stimulus<BcnCp> {
        let c = closed_loop_config(PM_ALWAYS, 250, 1);
        let mut l = studies::bcn_loop::ModelLoop::models(&c);
        l.record_cp_inputs();
        l.run(8_000).expect("the models do not fail");
        stim(
            c.cp_params(),
            c.cp_config(0),
            l.cp_inputs.take().unwrap_or_default(),
            0xbc6,
        )
    }

    /// The frames the outputs transmit, with the cycle of their first beat.
    pub fn frames_on(outs: &[BcnCpOutputs]) -> Vec<(u64, Vec<u8>)> {
        let mut a = FrameAssembler::default();
        outs.iter()
            .enumerate()
            .filter_map(|(t, o)| a.push(t as u64, Some(o)))
            .collect()
    }

    /// The outputs that show the sample of cycle `t`'s arrival (the feedback
    /// pipeline's latency later; the scenarios end idle for longer).
    fn sampled(outs: &[BcnCpOutputs], t: usize) -> Result<&BcnCpOutputs, String> {
        outs.get(t + FB_LATENCY as usize)
            .ok_or_else(|| format!("the sample of cycle {t} is past the end"))
    }

    /// The inputs of cycle `t` (the scenarios have no reset).
    fn inputs(s: &Stimulus<BcnCp>, t: usize) -> Result<&BcnCpInputs, String> {
        match &s.cycles[t] {
            Cycle::Drive(i) => Ok(i),
            Cycle::Reset => Err(format!("a reset in cycle {t}")),
        }
    }

    /// Scenario check of [`congestion_builds`]: every arrival sampled;
    /// no message while the queue is below Qeq = 26,000 B; the first for an
    /// arrival in cycles 20..=40 (the queue grows 750 B a cycle; the message
    /// is on the ports three cycles later), then every message
    /// a negative feedback (no tag), to each of the four sources; more than
    /// 10 frames, each a BCN frame (PCP 7, the BCN EtherType, Fb < 0) to
    /// one of the stations.
    pub fn negative_to_sources(s: &Stimulus<BcnCp>, outs: &[BcnCpOutputs]) -> Result<(), String> {
        let mut first = None;
        let mut sources = std::collections::BTreeSet::new();
        for (t, o) in outs.iter().enumerate() {
            let arrived = t
                .checked_sub(FB_LATENCY as usize)
                .map(|a| inputs(s, a).map(|i| i.arr_valid_i))
                .transpose()?
                .unwrap_or(false);
            crate::ensure_eq!(o.sample_o, arrived, "sampled in cycle {t}");
            if o.msg_valid_o {
                first.get_or_insert(t);
                crate::ensure!(
                    o.msg_fb_o.value() < 0 && !o.msg_rlt_o,
                    "cycle {t}: a message with Fb {} (tag {})",
                    o.msg_fb_o.value(),
                    o.msg_rlt_o
                );
                sources.insert(o.msg_sa_o);
            }
            // The depth at the start of the sampled arrival's cycle.
            let q = outs[t.saturating_sub(FB_LATENCY as usize)].q_o[2];
            crate::ensure!(
                first.is_some() || !o.sample_o || q < 26_000,
                "cycle {t}: queue at {q} B, above Qeq, without a message"
            );
        }
        let first = first.ok_or("no message")? - FB_LATENCY as usize;
        crate::ensure!(
            (20..=40).contains(&first),
            "first message for the arrival of cycle {first}"
        );
        crate::ensure_eq!(sources.len(), 4, "sources told");
        let frames = frames_on(outs);
        crate::ensure!(frames.len() > 10, "{} frames", frames.len());
        for (t, f) in &frames {
            let (m, pcp, etype) = parse_frame(f).ok_or(format!("frame at {t}: not a BCN frame"))?;
            crate::ensure!(
                STATIONS.contains(&m.sa)
                    && pcp == 7
                    && etype == model::bcn_cp::BCN_ETHERTYPE
                    && model::bcn_cp::feedback(m.qoff, m.qdelta, s.config.cfg_w_i) < 0,
                "frame at {t}: {m:?}, PCP {pcp}, EtherType {etype:#x}"
            );
        }
        Ok(())
    }

    /// Scenario check of [`tagged_settling`]: every arrival sampled with
    /// Fb >= 0 (the queue stays below Qeq), a message exactly for the 100
    /// tagged ones (tag id 0x42), a strip exactly for the 90 tagged
    /// departures, the counters reading 90 strips and 100 messages; frames
    /// sent and messages dropped (a message every other cycle, eight beats
    /// a frame) add up to 100; every frame echoes the tag (0x22E9, this
    /// point's CPID, id 0x42) and the IPv4 EtherType.
    pub fn tagged_answered(s: &Stimulus<BcnCp>, outs: &[BcnCpOutputs]) -> Result<(), String> {
        let (mut tagged, mut msgs, mut strips) = (0, 0, 0);
        for (t, o) in outs.iter().enumerate() {
            let i = inputs(s, t)?;
            if i.arr_valid_i {
                let f = sampled(outs, t)?;
                crate::ensure!(
                    f.sample_o && f.msg_fb_o.value() >= 0 && f.msg_valid_o == i.arr_rlt_i,
                    "arrival in cycle {t}: sampled {}, Fb {}, message {} for a frame tagged {}",
                    f.sample_o,
                    f.msg_fb_o.value(),
                    f.msg_valid_o,
                    i.arr_rlt_i
                );
                tagged += i.arr_rlt_i as u32;
            }
            msgs += o.msg_valid_o as u32;
            crate::ensure!(
                !o.msg_valid_o || o.msg_rlt_id_o == 0x42,
                "cycle {t}: tag id {:#x}",
                o.msg_rlt_id_o
            );
            crate::ensure_eq!(
                o.dep_strip_o,
                i.dep_valid_i && i.dep_rlt_i,
                "strip in cycle {t}"
            );
            strips += o.dep_strip_o as u32;
        }
        crate::ensure_eq!(
            (tagged, msgs, strips),
            (100, 100, 90),
            "(tagged, messages, strips)"
        );
        let last = outs.last().ok_or("no cycles")?;
        crate::ensure_eq!(
            (last.strips_o, last.msgs_o),
            (90, 100),
            "counters (strips, messages)"
        );
        let frames = frames_on(outs);
        crate::ensure_eq!(
            frames.len() as u32 + last.msg_drops_o,
            100,
            "frames + dropped messages"
        );
        let cpid = own_cpid(5).to_be_bytes();
        for (t, f) in &frames {
            let (m, _, _) = parse_frame(f).ok_or(format!("frame at {t}: not a BCN frame"))?;
            crate::ensure!(
                m.rlt && m.rlt_id == 0x42 && m.rlt_cpid == own_cpid(5),
                "frame at {t}: {m:?}"
            );
            crate::ensure_eq!(
                &f[44..52],
                &[0x22, 0xe9, cpid[0], cpid[1], 0x00, 0x42, 0x08, 0x00],
                "frame at {t}: the echoed tag and EtherType"
            );
        }
        Ok(())
    }

    /// Scenario check of [`several_points`]: the fill (cycles < 20) sampled
    /// without a message; then this point's tags answered every time (70),
    /// another point's never below Qeq (50, Fb >= 0) and after it only with
    /// Fb < 0 naming that point (at least 10), untagged frames exactly when
    /// Fb < 0, BCN frames never sampled (70); departures stripped exactly
    /// when they carry this point's tag (100 kept, 100 stripped).
    pub fn own_tags_only(s: &Stimulus<BcnCp>, outs: &[BcnCpOutputs]) -> Result<(), String> {
        let (mut own, mut other_silent, mut other_neg, mut bcn, mut kept) = (0, 0, 0, 0, 0);
        for (t, o) in outs.iter().enumerate() {
            let i = inputs(s, t)?;
            // The sample of this cycle's arrival, on the ports later.
            let f = if i.arr_valid_i { sampled(outs, t)? } else { o };
            let fb = f.msg_fb_o.value();
            if i.arr_valid_i && t < 20 {
                let o = f;
                crate::ensure!(
                    o.sample_o && !o.msg_valid_o,
                    "cycle {t} (fill): sampled {}, message {}",
                    o.sample_o,
                    o.msg_valid_o
                );
            } else if i.arr_valid_i {
                let o = f;
                let below = t < 220;
                let ok = match several_points_kind(t) {
                    0 => {
                        own += 1;
                        o.sample_o && o.msg_valid_o && o.msg_rlt_own_o
                    }
                    1 if below => {
                        other_silent += 1;
                        o.sample_o && !o.msg_valid_o && fb >= 0
                    }
                    1 => {
                        other_neg += usize::from(o.msg_valid_o);
                        !o.msg_valid_o
                            || (fb < 0 && !o.msg_rlt_own_o && o.msg_rlt_cpid_o == OTHER_CPID)
                    }
                    3 => {
                        bcn += 1;
                        !o.sample_o && !o.msg_valid_o
                    }
                    _ => o.msg_valid_o == (fb < 0),
                };
                crate::ensure!(
                    ok,
                    "cycle {t} (arrival kind {}): sampled {}, message {}, Fb {fb}, own {}, CPID {:#x}",
                    several_points_kind(t),
                    o.sample_o,
                    o.msg_valid_o,
                    o.msg_rlt_own_o,
                    o.msg_rlt_cpid_o
                );
            }
            if i.dep_valid_i {
                crate::ensure_eq!(
                    o.dep_strip_o,
                    i.dep_rlt_cpid_i != OTHER_CPID,
                    "strip in cycle {t}"
                );
                kept += usize::from(!o.dep_strip_o);
            }
        }
        crate::ensure_eq!(
            (own, other_silent, bcn, kept),
            (70, 50, 70, 100),
            "(own answered, other silent, BCN, kept)"
        );
        crate::ensure!(
            other_neg >= 10,
            "{other_neg} negative messages for another point's tags"
        );
        crate::ensure_eq!(
            outs.last().ok_or("no cycles")?.strips_o,
            100,
            "strips counted"
        );
        Ok(())
    }

    /// Scenario check of [`pending_and_drop`]: messages (three cycles after
    /// their arrivals) in cycles 3, 4 and 5, none before; the first frame
    /// starts in cycle 4; the third message is dropped (counted in cycle
    /// 6); a message on the first frame's last beat (cycle 11); the frames
    /// go to the stations of messages 0, 1 (back to back) and 3, at cycles
    /// 4, 12 and 20, the last naming queue 1.
    pub fn pending_then_drop(_: &Stimulus<BcnCp>, outs: &[BcnCpOutputs]) -> Result<(), String> {
        let o = |t: usize| &outs[t];
        crate::ensure!(
            !(0..3).any(|t| o(t).msg_valid_o || o(t).sample_o),
            "a message before the feedback pipeline's latency"
        );
        crate::ensure!(
            o(3).msg_valid_o && o(4).msg_valid_o && o(5).msg_valid_o,
            "no message in each of cycles 3..6"
        );
        crate::ensure!(
            !o(3).tx_valid_o && o(4).tx_valid_o,
            "the first frame does not start in cycle 4"
        );
        crate::ensure_eq!(o(6).msg_drops_o, 1, "messages dropped at cycle 6");
        crate::ensure!(
            o(11).tx_last_o && o(11).msg_valid_o,
            "no message on the last beat (cycle 11)"
        );
        let frames = frames_on(outs);
        let got: Vec<(u64, u64)> = frames
            .iter()
            .map(|(t, f)| (*t, parse_frame(f).map_or(0, |m| m.0.sa)))
            .collect();
        crate::ensure_eq!(
            got,
            vec![(4, STATIONS[0]), (12, STATIONS[1]), (20, STATIONS[1])],
            "frames (cycle, DA)"
        );
        crate::ensure_eq!(
            parse_frame(&frames[2].1).map(|m| m.0.cpid & 7),
            Some(1),
            "the third frame's queue"
        );
        Ok(())
    }

    /// Scenario check of [`pm_one_percent`]: of the 20,000 arrivals, the
    /// LFSR samples 20,000 x 10 / 1024 = 195, within 15 %.
    pub fn about_one_percent(_: &Stimulus<BcnCp>, outs: &[BcnCpOutputs]) -> Result<(), String> {
        let n = outs.iter().filter(|o| o.sample_o).count();
        let expect = 20_000.0 * 10.0 / 1024.0;
        crate::ensure!(
            (n as f64 - expect).abs() < 0.15 * expect,
            "{n} samples, expected about {expect:.0}"
        );
        Ok(())
    }

    /// Scenario check of [`closed_loop`]: the queue's peak is the mean-field
    /// model's (`studies::bcn_metrics::burst_peak`: four sources at 8
    /// B/cycle, 4 B/cycle drained, 1500 B frames, Pm = 1, delay 250, Qeq
    /// 26,000 B, W = 2) within 15 %, the test `burst_buffer_follows_the_
    /// sampling_model` asserts on the whole loop; every message has Fb < 0
    /// until the peak (the sources are only slowed down).
    pub fn peak_as_modelled(_: &Stimulus<BcnCp>, outs: &[BcnCpOutputs]) -> Result<(), String> {
        let (tp, peak) = outs
            .iter()
            .enumerate()
            .map(|(t, o)| (t, o.q_o.iter().copied().max().unwrap_or(0)))
            .max_by_key(|x| (x.1, std::cmp::Reverse(x.0)))
            .ok_or("no cycles")?;
        let want = studies::bcn_metrics::burst_peak(4, 8.0, 4.0, 1500.0, 1.0, 250, 26_000.0, 2.0);
        crate::ensure!(
            (peak as f64 - want).abs() <= 0.15 * want,
            "peak {peak} B at cycle {tp}, model {want:.0} B"
        );
        if let Some(t) = (0..tp).find(|&t| outs[t].msg_valid_o && outs[t].msg_fb_o.value() >= 0) {
            return Err(format!(
                "cycle {t}: Fb {} >= 0 before the peak",
                outs[t].msg_fb_o.value()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod gen_tests {
    use super::*;
    use crate::gen_check;

    #[test]
    fn generator_is_deterministic() {
        for seed in [1, 7, 0xdead_beef] {
            gen_check::deterministic::<BcnCp>(seed, 2000);
        }
        gen_check::writes_every_field::<BcnCp>(5, 5000);
    }

    #[test]
    fn generator_prefix_is_stable() {
        for seed in [3, 11] {
            gen_check::prefix_stable::<BcnCp>(seed, 500, 3000);
        }
    }

    /// Over a few seeds and 20 000 cycles per variant (legal configurations
    /// drawn from the seeds), the traffic samples, sends and drops messages,
    /// drops arrivals, and resets; and reaches the coverage bins but the
    /// configuration error.
    #[test]
    fn traffic_exercises_the_block() {
        let (mut msgs, mut drops, mut frames) = (0u64, 0u64, 0u64);
        let (hits, resets) =
            gen_check::exercise::<BcnCp>(&[1, 2, 3, 4, 5, 6], 20_000, |_, _, o| {
                msgs += o.msg_valid_o as u64;
                drops += o.arr_drop_o as u64;
                frames += (o.tx_valid_o && o.tx_last_o) as u64;
            });
        assert!(msgs > 1000, "{msgs} messages");
        assert!(drops > 1000, "{drops} drops");
        assert!(frames > 1000, "{frames} frames");
        assert!(resets > 0, "no reset");
        let missed = gen_check::missed::<BcnCp>(&hits, &["config_error"]);
        assert!(missed.is_empty(), "bins never hit: {missed:?}");
    }
}
