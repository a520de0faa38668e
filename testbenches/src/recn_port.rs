//! Stimulus for the RECN port (`docs/recn_port.md`).
//!
//! Configurations cover every runtime field over its legal range with the
//! edges on purpose: detection and vanish thresholds of one cell, equal to
//! each other and to the memory size; Xoff at one cell and at `C`, Xon at 0
//! and one below Xoff; every SL-to-VC mapping (the paper's `0xF0` most
//! often).
//!
//! Traffic comes in phases of 30 to 300 cycles over a few flows that share
//! route prefixes (a hot switch output, a hot second hop), mostly two or
//! three service levels: a phase has its own load, packet lengths (one cell
//! most often, so that the memory fills exactly; up to 32), output
//! readiness (a stalled output fills the queues past the thresholds) and a
//! set of stopped queues (downstream Xoff). Notifications from downstream
//! name prefixes of the flows' routes (one to three hops: nested congestion
//! points), sometimes with another SL than the flow's (replicated routes),
//! in bursts that fill the CAM; vanish notifications mostly name a line the
//! CAM holds (closed loop), so lines are released; a few have hop counts of
//! 0 or above `H`.
//!
//! Both release rules and markers on and off are drawn per configuration.
//! Packets come from one to four senders per phase (an output port's input
//! ports); release messages from upstream mostly name a line or a
//! detection queue bit some sender holds (closed loop), so that lines
//! become leaves and are released, and now and then nothing.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::{u3, u5};
use model::recn_port::{RecnPort, RecnPortConfig, RecnPortInputs, RecnPortOutputs, RecnPortParams};
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;

/// Configurations of variant `p` (with `illegal`, some that `check`
/// refuses).
pub fn config_strategy(p: &RecnPortParams, illegal: bool) -> BoxedStrategy<RecnPortConfig> {
    let c = p.c as u16;
    let cmax = (1u16 << p.cw()) - 1;
    let det = prop_oneof![
        6 => 2u16..=16,
        2 => 1u16..=c,
        1 => Just(1u16),
        1 => Just(c),
    ];
    let xoff = prop_oneof![
        6 => 4u16..=24,
        2 => 1u16..=c,
        1 => Just(1u16),
        1 => Just(c),
    ];
    let slvc = prop_oneof![4 => Just(0xf0u8), 1 => Just(0x0fu8), 2 => any::<u8>()];
    let bad = if illegal {
        proptest::bool::weighted(0.1).boxed()
    } else {
        Just(false).boxed()
    };
    let idle = prop_oneof![2 => Just(0u8), 6 => 1u8..=40, 1 => any::<u8>()];
    let modes = (
        proptest::bool::weighted(0.5),
        proptest::bool::weighted(0.5),
        idle,
    );
    (
        slvc,
        det,
        any::<u16>(),
        xoff,
        any::<u16>(),
        bad,
        0u8..6,
        modes,
    )
        .prop_map(
            move |(sl_vc, det, r, xoff, x, bad, which, (leaf, order, idle))| {
                // rel in 1..=det (det itself now and then), xon in 0..xoff.
                let rel = match r % 4 {
                    0 => det,
                    1 => 1,
                    _ => 1 + r % det,
                };
                let xon = match x % 4 {
                    0 => xoff - 1,
                    1 => 0,
                    _ => x % xoff,
                };
                let mut cfg = RecnPortConfig {
                    cfg_sl_vc_i: sl_vc,
                    cfg_det_thr_i: det,
                    cfg_rel_thr_i: rel,
                    cfg_xoff_i: xoff,
                    cfg_xon_i: xon,
                    cfg_leaf_i: leaf,
                    cfg_order_i: order,
                    cfg_idle_i: idle,
                };
                if bad {
                    match which {
                        0 => cfg.cfg_rel_thr_i = 0,
                        1 => cfg.cfg_rel_thr_i = det + 1,
                        2 => cfg.cfg_det_thr_i = (c + 1).min(cmax),
                        3 => cfg.cfg_xoff_i = 0,
                        4 => {
                            cfg.cfg_xoff_i = (c + 1).min(cmax);
                            cfg.cfg_xon_i = xon.min(c);
                        }
                        _ => cfg.cfg_xon_i = xoff,
                    }
                }
                cfg
            },
        )
        .boxed()
}

/// A flow: (route, service level).
pub type Flow = (u32, u8);

/// The RECN port's traffic, one cycle at a time.
pub struct RecnPortGen {
    rng: Rng,
    left: u32,
    flows: Vec<Flow>,
    in_p: f64,
    one_cell_p: f64,
    ready_p: f64,
    ntf_p: f64,
    vanish_p: f64,
    stop_p: f64,
    stopped: u64,
    held: Option<(Flow, u8, u8, u8)>,
    id: u8,
    /// Senders of this phase.
    senders: Vec<u8>,
    rls_p: f64,
}

impl RecnPortGen {
    /// The generator of variant `p` from `seed`.
    pub fn new(_p: &RecnPortParams, _cfg: &RecnPortConfig, seed: u64) -> Self {
        RecnPortGen {
            rng: Rng::new(seed, 0x2ec7),
            left: 0,
            flows: Vec::with_capacity(8),
            in_p: 0.0,
            one_cell_p: 0.0,
            ready_p: 0.0,
            ntf_p: 0.0,
            vanish_p: 0.0,
            stop_p: 0.0,
            stopped: 0,
            held: None,
            id: 0,
            senders: Vec::with_capacity(4),
            rls_p: 0.0,
        }
    }

    fn new_phase(&mut self, p: &RecnPortParams) {
        let r = &mut self.rng;
        self.left = r.range(30, 300) as u32;
        let tb = p.tb();
        let hot_d = r.below(p.d as u64) as u32;
        let hot_2 = r.below(3) as u32;
        let sls = [r.below(8) as u8, r.below(8) as u8, r.below(8) as u8];
        let rmask = if p.rw == 32 {
            u32::MAX
        } else {
            (1u32 << p.rw) - 1
        };
        self.flows.clear();
        for _ in 0..r.range(1, 6) {
            let d = if r.chance(0.7) {
                hot_d
            } else {
                r.below(p.d as u64) as u32
            };
            let h2 = if r.chance(0.6) {
                hot_2
            } else {
                r.below(3) as u32
            };
            let h3 = r.below(2) as u32;
            let rest = (r.u64() as u32) << (3 * tb).min(31);
            let route = (d | h2 << tb | h3 << (2 * tb) | rest) & rmask;
            let sl = sls[r.weighted(&[5, 3, 1])];
            self.flows.push((route, sl));
        }
        self.in_p = [0.2, 0.5, 0.8, 1.0][r.below(4) as usize];
        self.one_cell_p = [0.3, 0.7, 0.95][r.below(3) as usize];
        self.ready_p = [0.0, 0.3, 0.6, 0.9, 1.0][r.below(5) as usize];
        self.ntf_p = [0.0, 0.02, 0.05, 0.2][r.below(4) as usize];
        self.vanish_p = [0.1, 0.4, 0.7][r.below(3) as usize];
        self.stop_p = [0.0, 0.0, 0.1, 0.4][r.below(4) as usize];
        self.rls_p = [0.0, 0.05, 0.2][r.below(3) as usize];
        self.senders.clear();
        for _ in 0..[1, 1, 2, 4][r.below(4) as usize] {
            self.senders.push(r.below(p.d as u64) as u8);
        }
        self.stopped = 0;
        for q in 0..p.nq() {
            if r.chance(self.stop_p) {
                self.stopped |= 1 << q;
            }
        }
    }
}

impl Generator<RecnPort> for RecnPortGen {
    fn next(&mut self, m: &RecnPort, last: &RecnPortOutputs, i: &mut RecnPortInputs) -> Step {
        let p = *m.params();
        if self.left == 0 {
            self.new_phase(&p);
        }
        self.left -= 1;
        if self.rng.chance(0.0002) {
            self.held = None;
            return Step::Reset;
        }
        // The sender: the packet offered last cycle was taken, or not (it
        // then offers it again, or another with probability 1/4).
        if last.in_ready_o || (self.held.is_some() && self.rng.chance(0.25)) {
            self.held = None;
        }
        if self.held.is_none() && self.rng.chance(self.in_p) {
            let r = &mut self.rng;
            let f = if r.chance(0.9) {
                self.flows[r.below(self.flows.len() as u64) as usize]
            } else {
                (r.u64() as u32, r.below(8) as u8)
            };
            let len = if r.chance(self.one_cell_p) {
                0
            } else if r.chance(0.9) {
                r.below(4) as u8
            } else {
                r.below(32) as u8
            };
            self.id = self.id.wrapping_add(1);
            let src = self.senders[r.below(self.senders.len() as u64) as usize];
            self.held = Some((f, len, self.id, src));
        }
        let r = &mut self.rng;
        let rmask = if p.rw == 32 {
            u32::MAX
        } else {
            (1u32 << p.rw) - 1
        };
        i.in_valid_i = false;
        i.in_id_i = 0;
        i.in_sl_i = u3::new(0);
        i.in_len_i = u5::new(0);
        i.in_route_i = 0;
        i.in_src_i = 0;
        if let Some(((route, sl), len, id, src)) = self.held {
            i.in_valid_i = true;
            i.in_id_i = id;
            i.in_sl_i = u3::new(sl);
            i.in_len_i = u5::new(len);
            i.in_route_i = route & rmask;
            i.in_src_i = src;
        }
        i.out_ready_i = r.chance(self.ready_p);
        for q in 0..p.nq() {
            i.stop_i[q] = (self.stopped >> q) & 1 != 0 || r.chance(0.03);
        }
        // Downstream notifications.
        i.ntf_valid_i = r.chance(self.ntf_p);
        let kind = r.chance(self.vanish_p);
        let f = self.flows[r.below(self.flows.len() as u64) as usize];
        let mut route = f.0;
        let mut hops = r.range(1, 3.min(p.h() as u64)) as u8;
        let mut sl = if r.chance(0.75) {
            f.1
        } else {
            r.below(8) as u8
        };
        if kind && r.chance(0.8) {
            // A line the CAM holds.
            let s = m.state();
            let j = r.below(p.l() as u64) as usize;
            if s.valid_q[j] {
                route = s.route_q[j] | (r.u64() as u32 & !(p.mask(s.hops_q[j] as u32) as u32));
                hops = s.hops_q[j];
                sl = s.sl_q[j];
            }
        }
        match r.weighted(&[90, 4, 3, 3]) {
            1 => hops = 0,
            2 => hops = ((p.h() + 1).min((1 << p.hw()) - 1)) as u8,
            3 => {
                route = r.u64() as u32;
                hops = r.range(1, p.h() as u64) as u8;
            }
            _ => {}
        }
        i.ntf_kind_i = kind;
        i.ntf_route_i = route & rmask;
        i.ntf_hops_i = hops;
        i.ntf_sl_i = u3::new(sl);
        // Release messages from upstream: mostly for a bit some sender
        // holds (a line's, else a detection queue's), else anything.
        i.rls_valid_i = r.chance(self.rls_p);
        let s = m.state();
        let d = p.d;
        let j = r.below(p.l() as u64) as usize;
        let e = r.below((2 * d * d) as u64) as usize;
        let (mut rr, mut rh, mut rs, mut rsl) = (
            r.u64() as u32,
            r.range(0, p.h() as u64) as u8,
            r.below(d as u64) as u8,
            r.below(8) as u8,
        );
        if r.chance(0.9) {
            if s.valid_q[j] && s.up_q[j] != 0 {
                rr = s.route_q[j] | (r.u64() as u32 & !(p.mask(s.hops_q[j] as u32) as u32));
                rh = s.hops_q[j];
                rsl = s.sl_q[j];
                let set: Vec<u8> = (0..d as u8).filter(|&k| s.up_q[j] >> k & 1 != 0).collect();
                rs = set[r.below(set.len() as u64) as usize];
            } else if s.mask_q[e] != 0 {
                // Entry (v D + k) D + sender: detection queue k of VC v.
                let k = (e / d) % d;
                let bits: Vec<u8> = (0..8).filter(|&b| s.mask_q[e] >> b & 1 != 0).collect();
                rsl = bits[r.below(bits.len() as u64) as usize];
                rr = k as u32 | (r.u64() as u32) << p.tb();
                rh = 1;
                rs = (e % d) as u8;
            }
        }
        i.rls_src_i = rs;
        i.rls_route_i = rr & rmask;
        i.rls_hops_i = rh;
        i.rls_sl_i = u3::new(rsl);
        Step::Drive
    }
}

impl Bench for RecnPort {
    const GENERATOR_VERSION: u32 = 2;
    type Gen = RecnPortGen;
    fn generator(p: &RecnPortParams, cfg: &RecnPortConfig, seed: u64) -> RecnPortGen {
        RecnPortGen::new(p, cfg, seed)
    }
    fn config_strategy(p: &RecnPortParams, illegal: bool) -> BoxedStrategy<RecnPortConfig> {
        config_strategy(p, illegal)
    }
    fn scenarios() -> Vec<crate::Scenario<RecnPort>> {
        use scenario as s;
        vec![
            crate::Scenario {
                name: "hotspot",
                about: "seed 002 sec. 2.1/4: a downstream notification allocates a SAQ for the \
                        hot flow and removes the HOL blocking of the cold flow",
                build: || s::hotspot().0,
                check: None,
            },
            crate::Scenario {
                name: "cam-full",
                about: "seed 002 sec. 4: more congested points than SAQs in VC1: drops counted; \
                        VC0 still allocates",
                build: || s::cam_full().0,
                check: None,
            },
            crate::Scenario {
                name: "release",
                about: "seed 002 sec. 2.1: congestion vanishes downstream, the SAQ drains and is \
                        released; its route goes back to the detection queue",
                build: || s::release().0,
                check: None,
            },
            crate::Scenario {
                name: "replicated",
                about: "seed 002 sec. 4: one turnpool with two SLs takes two SAQs; each SL's \
                        packets go to their own",
                build: || s::replicated().0,
                check: None,
            },
            crate::Scenario {
                name: "detect",
                about: "seed 002 sec. 4: a detection queue notifies once per SL, then vanishes; \
                        a SAQ's Xoff and Xon",
                build: || s::detect().0,
                check: None,
            },
            crate::Scenario {
                name: "senders",
                about:
                    "seed 002 sec. 2.1: an output port notifies each input port that sends to a \
                        congested queue, once, for the detection queue and for the SAQ",
                build: || s::senders().0,
                check: None,
            },
            crate::Scenario {
                name: "leaf",
                about: "RECN's leaf rule: a SAQ that notified upstream stays when empty; the \
                        release message from upstream makes it a leaf and it is released, telling \
                        downstream; refusals of notifications the CAM cannot take",
                build: || s::leaf().0,
                check: None,
            },
            crate::Scenario {
                name: "marker",
                about: "RECN's in-order markers: a SAQ allocated for a flow waits until the \
                        flow's packets queued before it have left",
                build: || s::marker(true).0,
                check: None,
            },
            crate::Scenario {
                name: "marker-chain",
                about: "in-order markers: an empty SAQ that waits for its marker passes it on to \
                        a SAQ allocated for a longer prefix of the same flow",
                build: || s::marker_chain().0,
                check: None,
            },
        ]
    }
}

/// Directed scenarios from seed 002, played closed-loop against the golden
/// model, then replayed open-loop in co-simulation.
pub mod scenario {
    use super::*;

    /// The configuration of the scenarios (default variant: D = 4, S = 2,
    /// 64 cells): SL 0-3 on VC0, 4-7 on VC1; detection at 8 cells, vanish
    /// below 2, Xoff at 16, Xon at 4.
    pub fn cfg() -> RecnPortConfig {
        RecnPort::default_config(&RecnPortParams::default())
    }

    /// A scripted run: a callback writes each cycle's inputs, looking at
    /// the model and the outputs so far.
    pub struct Script {
        /// Variant.
        pub p: RecnPortParams,
        /// The configuration.
        pub cfg: RecnPortConfig,
        /// The model, as it stands.
        pub m: RecnPort,
        /// The cycles so far.
        pub cycles: Vec<Cycle<RecnPortInputs>>,
        /// The outputs of every cycle.
        pub outs: Vec<RecnPortOutputs>,
    }

    impl Script {
        /// A new run of the default variant.
        pub fn new(cfg: RecnPortConfig) -> Self {
            let p = RecnPortParams::default();
            Script {
                p,
                m: RecnPort::new(&p, &cfg),
                cfg,
                cycles: Vec::new(),
                outs: Vec::new(),
            }
        }

        /// `n` cycles; `f(t, model, outputs so far, inputs)` writes the
        /// inputs (zero beforehand).
        pub fn run(
            &mut self,
            n: usize,
            mut f: impl FnMut(usize, &RecnPort, &[RecnPortOutputs], &mut RecnPortInputs),
        ) {
            for _ in 0..n {
                let t = self.cycles.len();
                let mut i = RecnPortInputs::zero(&self.p);
                f(t, &self.m, &self.outs, &mut i);
                let o = self.m.step(&i);
                self.m.assert_invariants();
                self.cycles.push(Cycle::Drive(i));
                self.outs.push(o);
            }
        }

        /// The stimulus.
        pub fn stimulus(&self, seed: u64) -> Stimulus<RecnPort> {
            Stimulus::explicit(self.p, self.cfg.clone(), seed, self.cycles.clone())
        }
    }

    /// Offers packet `(route, sl)` of one cell with id `id`.
    pub fn offer(i: &mut RecnPortInputs, route: u32, sl: u8, id: u8) {
        i.in_valid_i = true;
        i.in_route_i = route;
        i.in_sl_i = u3::new(sl);
        i.in_len_i = u5::new(0);
        i.in_id_i = id;
    }

    /// A notification from downstream.
    pub fn notify(i: &mut RecnPortInputs, vanish: bool, route: u32, hops: u8, sl: u8) {
        i.ntf_valid_i = true;
        i.ntf_kind_i = vanish;
        i.ntf_route_i = route;
        i.ntf_hops_i = hops;
        i.ntf_sl_i = u3::new(sl);
    }

    /// Ids of the hot flow's packets have bit 7 set.
    pub const HOT: u8 = 0x80;
    /// Hot flow: output 1, then output 3 of the next switch; SL 5 (VC1).
    pub const HOT_ROUTE: u32 = 1 | 3 << 2;
    /// Its service level.
    pub const HOT_SL: u8 = 5;
    /// Cold flow: output 1, then output 0; SL 4 (VC1, the same detection
    /// queue as the hot flow).
    pub const COLD_ROUTE: u32 = 1;
    /// Its service level.
    pub const COLD_SL: u8 = 4;

    /// Packets with ids matching `hot` that left in cycles `from..to`.
    pub fn left(outs: &[RecnPortOutputs], hot: bool, from: usize, to: usize) -> usize {
        outs[from..to]
            .iter()
            .filter(|o| o.out_valid_o && (o.out_id_o & HOT != 0) == hot)
            .count()
    }

    /// A hot flow (SL 5) and a cold flow (SL 4) alternate into detection
    /// queue 1 of VC1.
    /// Downstream, the hot point takes one packet every 8 cycles (the
    /// queue whose head is a hot packet is stopped otherwise), the cold
    /// one takes everything. At cycle 100 the downstream port notifies
    /// congestion at (1, 3), 2 hops, SL 5: a SAQ is allocated, the hot
    /// packets go there and the cold flow is no longer blocked. The sender
    /// honours the SAQ's Xoff (it sends cold packets while the hot SAQ is
    /// in Xoff), so the hot packets do not fill the memory. The hot packets
    /// already in the detection queue at the allocation still leave one
    /// per 8 cycles: the cold flow is free once they are gone.
    pub fn hotspot() -> (Stimulus<RecnPort>, Script) {
        let mut s = Script::new(cfg());
        let mut budget = 0u32;
        let mut k = 0u8;
        let mut last_taken = true;
        let mut offered_hot = false;
        s.run(1200, |t, m, outs, i| {
            if let Some(o) = outs.last() {
                if o.out_valid_o && o.out_id_o & HOT != 0 {
                    budget = budget.saturating_sub(1);
                }
                last_taken = o.in_ready_o;
            }
            if t % 8 == 0 {
                budget = 1;
            }
            if last_taken {
                offered_hot = !offered_hot;
                k = k.wrapping_add(1) & 0x7f;
            }
            // The sender honours the SAQs' Xoff: while the hot flow's SAQ
            // is in Xoff it sends cold packets only.
            let q = m.queue_of(HOT_ROUTE, HOT_SL);
            let hot_xoff = m
                .params()
                .queue_line(q)
                .is_some_and(|j| m.state().xoff_q[j]);
            if offered_hot && !hot_xoff {
                offer(i, HOT_ROUTE, HOT_SL, HOT | k);
            } else {
                offer(i, COLD_ROUTE, COLD_SL, k);
            }
            i.out_ready_i = true;
            for q in 0..m.params().nq() {
                i.stop_i[q] = matches!(m.head(q), Some((id, _, _)) if id & HOT != 0) && budget == 0;
            }
            if t == 100 {
                notify(i, false, HOT_ROUTE, 2, HOT_SL);
            }
        });
        (s.stimulus(0x4075), s)
    }

    /// A release message from sender `src` for (`route`, `hops`, `sl`).
    pub fn release_msg(i: &mut RecnPortInputs, src: u8, route: u32, hops: u8, sl: u8) {
        i.rls_valid_i = true;
        i.rls_src_i = src;
        i.rls_route_i = route;
        i.rls_hops_i = hops;
        i.rls_sl_i = u3::new(sl);
    }

    /// The route of the `senders` scenario: output 2, then output 1.
    pub const SENDERS_ROUTE: u32 = 2 | 1 << 2;

    /// An output port (the default variant): one-cell packets of
    /// `SENDERS_ROUTE`, SL 5, from senders 1 and 2 in turn, the output
    /// stalled. Detection queue 2 of VC1 crosses the threshold (8 cells)
    /// and notifies sender 1, then sender 2 at its next packet, once each;
    /// at cycle 30 downstream names (2, 1) for SL 5: the packets go to a
    /// SAQ, which notifies sender 1 and sender 2 in turn at 8 cells. The
    /// output drains everything from cycle 60: four vanishes, one to each
    /// (queue, sender).
    pub fn senders() -> (Stimulus<RecnPort>, Script) {
        let mut s = Script::new(cfg());
        s.run(140, |t, _, _, i| {
            if (1..29).contains(&t) || (31..50).contains(&t) {
                offer(i, SENDERS_ROUTE, 5, t as u8);
                i.in_src_i = if t % 2 == 1 { 1 } else { 2 };
            }
            if t == 30 {
                notify(i, false, SENDERS_ROUTE, 2, 5);
            }
            i.out_ready_i = t >= 60;
        });
        (s.stimulus(0x5e4d), s)
    }

    /// Leaf rule (`cfg_leaf_i`). A SAQ for (2, 1 hop), SL 6, fills with
    /// the output stalled and notifies sender 0 (no longer a leaf); the
    /// output drains it, and the empty SAQ stays; at cycle 70 the release
    /// message from sender 0 makes it a leaf: it is released at once and
    /// its release message goes downstream. Then VC1's two lines are taken
    /// by (1, 1 hop) and (3, 1 hop), SL 5: a third point is dropped and
    /// refused downstream (cycle 82), as is a notification of 0 hops
    /// (cycle 83). A packet enters the (1, 1 hop) SAQ and leaves at cycle
    /// 100, when a dropped notification's refusal takes the release
    /// channel: the line is released at cycle 101. The (3, 1 hop) SAQ never
    /// holds a packet: with `cfg_idle_i` = 20 it is released at cycle 102,
    /// 20 cycles after it became valid.
    pub fn leaf() -> (Stimulus<RecnPort>, Script) {
        let mut c = cfg();
        c.cfg_leaf_i = true;
        c.cfg_idle_i = 20;
        let mut s = Script::new(c);
        s.run(110, |t, _, _, i| {
            match t {
                1 => notify(i, false, 2, 1, 6),
                80 => notify(i, false, 1, 1, 5),
                81 => notify(i, false, 3, 1, 5),
                82 | 100 => notify(i, false, 0, 1, 5),
                83 => notify(i, false, 2, 0, 5),
                95 => offer(i, 1, 5, 95),
                70 => release_msg(i, 0, 2, 1, 6),
                _ => {}
            }
            if (2..14).contains(&t) {
                offer(i, 2, 6, t as u8);
            }
            i.out_ready_i = (40..60).contains(&t) || t == 100;
        });
        (s.stimulus(0x1eaf), s)
    }

    /// Route of flow A of the `marker` scenario: output 2, then 1.
    pub const MARK_A: u32 = 2 | 1 << 2;
    /// Route of flow B: output 2, then 3 (the same detection queue).
    pub const MARK_B: u32 = 2 | 3 << 2;

    /// In-order markers (`cfg_order_i` = `order`): flows A (ids 1..=6) and
    /// B (ids 11..=13), SL 5, alternate into detection queue 2 of VC1 with
    /// the output stalled (A1 B1 A2 B2 A3 B3); at cycle 10 downstream
    /// names (2, 1), SL 5: a SAQ for flow A, whose marker sits behind the
    /// 6 cells queued; A4..A6 enter the SAQ. From cycle 30 the output
    /// drains both queues in turn: with the marker the SAQ waits until B3
    /// has left and A leaves in order; without it A4 overtakes A2.
    pub fn marker(order: bool) -> (Stimulus<RecnPort>, Script) {
        let mut c = cfg();
        c.cfg_order_i = order;
        let mut s = Script::new(c);
        s.run(60, |t, _, _, i| {
            match t {
                1 | 3 | 5 => offer(i, MARK_A, 5, t.div_ceil(2) as u8),
                2 | 4 | 6 => offer(i, MARK_B, 5, 10 + t as u8 / 2),
                10 => notify(i, false, MARK_A, 2, 5),
                11..=13 => offer(i, MARK_A, 5, t as u8 - 7),
                _ => {}
            }
            i.out_ready_i = t >= 30;
        });
        (s.stimulus(0x3a4c), s)
    }

    /// Markers on: A1 B1 A2 B2 A3 B3 wait in detection queue 2 of VC1 as
    /// in [`marker`]; downstream names (2, 1), SL 5 at cycle 10 (a SAQ whose
    /// marker sits behind the 6 cells) and (2, 1, 0), SL 5 at cycle 11: its
    /// marker queue is the first SAQ, empty but waiting for its marker,
    /// which it takes over. A4..A6 enter the second SAQ and leave after B3.
    pub fn marker_chain() -> (Stimulus<RecnPort>, Script) {
        let mut c = cfg();
        c.cfg_order_i = true;
        let mut s = Script::new(c);
        s.run(60, |t, _, _, i| {
            match t {
                1 | 3 | 5 => offer(i, MARK_A, 5, t.div_ceil(2) as u8),
                2 | 4 | 6 => offer(i, MARK_B, 5, 10 + t as u8 / 2),
                10 => notify(i, false, MARK_A, 2, 5),
                11 => notify(i, false, MARK_A, 3, 5),
                12..=14 => offer(i, MARK_A, 5, t as u8 - 8),
                _ => {}
            }
            i.out_ready_i = t >= 30;
        });
        (s.stimulus(0x3a4d), s)
    }

    /// Three congested points with SL 5 (VC1, two lines): two allocations,
    /// then a drop; a duplicate refreshes; SL 1 still allocates in VC0.
    pub fn cam_full() -> (Stimulus<RecnPort>, Script) {
        let mut s = Script::new(cfg());
        s.run(40, |t, _, _, i| match t {
            5 => notify(i, false, 1, 1, 5),
            10 => notify(i, false, 2, 1, 5),
            15 => notify(i, false, 3, 1, 5),
            20 => notify(i, false, 2, 1, 5),
            25 => notify(i, false, 3, 1, 1),
            30 => offer(i, 3, 5, 7),
            31 => offer(i, 3, 1, 8),
            _ => {}
        });
        (s.stimulus(0xca4), s)
    }

    /// A SAQ for (2, 1 hop), SL 6 fills with the output stalled (past the
    /// detection threshold: it notifies upstream); downstream says the
    /// congestion is gone; the output drains the SAQ; below the vanish
    /// threshold it tells upstream, and once empty it is released. Later
    /// packets of the route go to the detection queue.
    pub fn release() -> (Stimulus<RecnPort>, Script) {
        let mut s = Script::new(cfg());
        s.run(120, |t, _, _, i| {
            if t == 2 {
                notify(i, false, 2, 1, 6);
            }
            if (5..17).contains(&t) || t == 100 {
                offer(i, 2, 6, t as u8);
            }
            if t == 30 {
                notify(i, true, 2, 1, 6);
            }
            i.out_ready_i = t >= 40;
        });
        (s.stimulus(0x2e1), s)
    }

    /// (3, 1 hop) congested for SL 4 and SL 5: two lines of VC1; packets
    /// of SL 4, 5 and 6 to output 3 go to the SL 4 SAQ, the SL 5 SAQ and
    /// the detection queue.
    pub fn replicated() -> (Stimulus<RecnPort>, Script) {
        let mut s = Script::new(cfg());
        s.run(30, |t, _, _, i| match t {
            1 => notify(i, false, 3, 1, 4),
            2 => notify(i, false, 3, 1, 5),
            5 => offer(i, 3 | 2 << 2, 4, 1),
            6 => offer(i, 3 | 1 << 2, 5, 2),
            7 => offer(i, 3, 6, 3),
            _ => {}
        });
        (s.stimulus(0x4e9), s)
    }

    /// Detection queue 0 of VC0 fills with the output stalled: at 8 cells
    /// it notifies upstream for SL 1; an SL 2 packet notifies for SL 2.
    /// A SAQ for (1, 1 hop), SL 3 fills to 16 cells: Xoff. The output
    /// drains everything: vanish notifications for SL 1 and SL 2 and the
    /// SAQ's, Xon at 4 cells.
    pub fn detect() -> (Stimulus<RecnPort>, Script) {
        let mut s = Script::new(cfg());
        s.run(120, |t, _, _, i| {
            if t == 1 {
                notify(i, false, 1, 1, 3);
            }
            if (2..10).contains(&t) {
                offer(i, 0, 1, t as u8);
            }
            if t == 10 {
                offer(i, 0, 2, t as u8);
            }
            if (11..27).contains(&t) {
                offer(i, 1, 3, t as u8);
            }
            i.out_ready_i = t >= 40;
        });
        (s.stimulus(0xde7), s)
    }
}
