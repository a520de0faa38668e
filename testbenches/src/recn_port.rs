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
                check: Some(s::hol_removed),
            },
            crate::Scenario {
                name: "cam-full",
                about: "seed 002 sec. 4: more congested points than SAQs in VC1: drops counted; \
                        VC0 still allocates",
                build: || s::cam_full().0,
                check: Some(s::drops_counted),
            },
            crate::Scenario {
                name: "release",
                about: "seed 002 sec. 2.1: congestion vanishes downstream, the SAQ drains and is \
                        released; its route goes back to the detection queue",
                build: || s::release().0,
                check: Some(s::released),
            },
            crate::Scenario {
                name: "replicated",
                about: "seed 002 sec. 4: one turnpool with two SLs takes two SAQs; each SL's \
                        packets go to their own",
                build: || s::replicated().0,
                check: Some(s::one_saq_per_sl),
            },
            crate::Scenario {
                name: "detect",
                about: "seed 002 sec. 4: a detection queue notifies once per SL, then vanishes; \
                        a SAQ's Xoff and Xon",
                build: || s::detect().0,
                check: Some(s::detected),
            },
            crate::Scenario {
                name: "senders",
                about:
                    "seed 002 sec. 2.1: an output port notifies each input port that sends to a \
                        congested queue, once, for the detection queue and for the SAQ",
                build: || s::senders().0,
                check: Some(s::each_sender_once),
            },
            crate::Scenario {
                name: "leaf",
                about: "RECN's leaf rule: a SAQ that notified upstream stays when empty; the \
                        release message from upstream makes it a leaf and it is released, telling \
                        downstream; refusals of notifications the CAM cannot take",
                build: || s::leaf().0,
                check: Some(s::leaf_released),
            },
            crate::Scenario {
                name: "marker",
                about: "RECN's in-order markers: a SAQ allocated for a flow waits until the \
                        flow's packets queued before it have left",
                build: || s::marker(true).0,
                check: Some(s::in_order),
            },
            crate::Scenario {
                name: "marker-chain",
                about: "in-order markers: an empty SAQ that waits for its marker passes it on to \
                        a SAQ allocated for a longer prefix of the same flow",
                build: || s::marker_chain().0,
                check: Some(s::marker_passed_on),
            },
        ]
    }
}

/// Directed scenarios from seed 002, played closed-loop against the golden
/// model, then replayed open-loop in co-simulation.
pub mod scenario {
    use super::*;
    use model::recn_port::Act;

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
            six_behind_a_stall(t, i);
            match t {
                10 => notify(i, false, MARK_A, 2, 5),
                11..=13 => offer(i, MARK_A, 5, t as u8 - 7),
                _ => {}
            }
        });
        (s.stimulus(0x3a4c), s)
    }

    /// The start of [`marker`] and [`marker_chain`]: A1 B1 A2 B2 A3 B3 (SL
    /// 5) offered in cycles 1 to 6, the output stalled until cycle 30.
    fn six_behind_a_stall(t: usize, i: &mut RecnPortInputs) {
        match t {
            1 | 3 | 5 => offer(i, MARK_A, 5, t.div_ceil(2) as u8),
            2 | 4 | 6 => offer(i, MARK_B, 5, 10 + t as u8 / 2),
            _ => {}
        }
        i.out_ready_i = t >= 30;
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
            six_behind_a_stall(t, i);
            match t {
                10 => notify(i, false, MARK_A, 2, 5),
                11 => notify(i, false, MARK_A, 3, 5),
                12..=14 => offer(i, MARK_A, 5, t as u8 - 8),
                _ => {}
            }
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

    fn act(o: &RecnPortOutputs) -> Act {
        Act::from_code(o.ntf_act_o)
    }

    /// The notifications upstream: (cycle, vanish, route, hops, SL, sender).
    pub fn ups(o: &[RecnPortOutputs]) -> Vec<(usize, bool, u32, u8, u8, u8)> {
        o.iter()
            .enumerate()
            .filter(|(_, o)| o.up_valid_o)
            .map(|(t, o)| {
                (
                    t,
                    o.up_kind_o,
                    o.up_route_o,
                    o.up_hops_o,
                    o.up_sl_o.value(),
                    o.up_dst_o,
                )
            })
            .collect()
    }

    /// The (action, CAM line) of cycle `t`.
    fn ntf(o: &[RecnPortOutputs], t: usize) -> (Act, u8) {
        (act(&o[t]), o[t].ntf_line_o)
    }

    /// The ids of the packets that leave, in order.
    pub fn left_ids(o: &[RecnPortOutputs]) -> Vec<u8> {
        o.iter()
            .filter(|o| o.out_valid_o)
            .map(|o| o.out_id_o)
            .collect()
    }

    /// Scenario check of [`hotspot`]: the notification at cycle 100
    /// allocates the first line of VC1 (2) for the hot route; the cold flow
    /// leaves at most 20 packets in cycles 0..100 (behind the hot ones) and
    /// at least 45 in 1000..1100 (the rate offered); from cycle 200 every
    /// admitted packet goes to the SAQ or the cold flow's detection queue
    /// (some to the SAQ); the hot flow still leaves 10..=14 packets in
    /// 1000..1100; every packet leaves with the SL it was offered with
    /// (more than 100 of each flow).
    pub fn hol_removed(s: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        let p = s.params;
        crate::ensure_eq!(ntf(o, 100), (Act::Alloc, 2), "(action, line) at 100");
        crate::ensure!(
            o[101].cam_valid_o[2] && o[101].cam_route_o[2] == HOT_ROUTE,
            "line 2 after 100: valid {}, route {:#x}",
            o[101].cam_valid_o[2],
            o[101].cam_route_o[2]
        );
        let cold_before = left(o, false, 0, 100);
        let cold_after = left(o, false, 1000, 1100);
        crate::ensure!(
            cold_before <= 20 && cold_after >= 45,
            "cold packets out: {cold_before} in 0..100 (at most 20), {cold_after} in 1000..1100 (at least 45)"
        );
        let saq = p.line_queue(2);
        let cold_q = p.qv() + (COLD_ROUTE as usize & 3);
        crate::ensure!(
            o[200..]
                .iter()
                .any(|o| o.in_ready_o && o.in_queue_o as usize == saq),
            "no packet into the SAQ after 200"
        );
        if let Some(t) = (200..o.len())
            .find(|&t| o[t].in_ready_o && ![saq, cold_q].contains(&(o[t].in_queue_o as usize)))
        {
            return Err(format!(
                "cycle {t}: a packet into queue {}",
                o[t].in_queue_o
            ));
        }
        let hot_after = left(o, true, 1000, 1100);
        crate::ensure!(
            (10..=14).contains(&hot_after),
            "hot packets out in 1000..1100: {hot_after}"
        );
        let mut n = [0usize; 2];
        for o in o.iter().filter(|o| o.out_valid_o) {
            let hot = o.out_id_o & HOT != 0;
            let want = if hot { HOT_SL } else { COLD_SL };
            crate::ensure_eq!(
                o.out_sl_o.value(),
                want,
                "the SL of packet {:#x}",
                o.out_id_o
            );
            n[usize::from(hot)] += 1;
        }
        crate::ensure!(n[0] > 100 && n[1] > 100, "packets out (cold, hot): {n:?}");
        Ok(())
    }

    /// Scenario check of [`cam_full`]: VC1's two lines allocated (cycles 5
    /// and 10), the third point dropped and counted (15), a refresh of line
    /// 3 (20), VC0 still allocates line 0 (25); the dropped point's packets
    /// stay in their detection queue (queue 9 at 30), the next go to VC0's
    /// first SAQ (queue 4 at 31).
    pub fn drops_counted(_: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        crate::ensure_eq!(act(&o[5]), Act::Alloc, "action at 5");
        crate::ensure_eq!(act(&o[10]), Act::Alloc, "action at 10");
        crate::ensure_eq!(
            (act(&o[15]), o[16].drop_cnt_o),
            (Act::Drop, 1),
            "(action at 15, drops after)"
        );
        crate::ensure_eq!(ntf(o, 20), (Act::Refresh, 3), "(action, line) at 20");
        crate::ensure_eq!(ntf(o, 25), (Act::Alloc, 0), "(action, line) at 25");
        crate::ensure_eq!(
            (o[30].in_queue_o, o[31].in_queue_o),
            (6 + 3, 4),
            "queues at 30 and 31"
        );
        Ok(())
    }

    /// Scenario check of [`release`]: line 2 allocated (cycle 2), packets
    /// into its SAQ (5); at its 8th cell (cycle 12) the SAQ notifies
    /// upstream (route 2, SL 6); congestion vanishes downstream (30, line 2
    /// marked gone); the drained SAQ tells upstream it vanished (1 hop) and
    /// is released at 51, its line cleared; the route goes back to the
    /// detection queue (cycle 100).
    pub fn released(s: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        let p = s.params;
        let saq = p.line_queue(2);
        crate::ensure_eq!(act(&o[2]), Act::Alloc, "action at 2");
        crate::ensure_eq!(o[5].in_queue_o as usize, saq, "queue at 5");
        let u = ups(o);
        crate::ensure!(!u.is_empty(), "no notification upstream");
        crate::ensure_eq!(
            (u[0].0, u[0].1, u[0].2, u[0].4),
            (12, false, 2, 6),
            "first notification (cycle, vanish, route, SL)"
        );
        crate::ensure_eq!(act(&o[30]), Act::Gone, "action at 30");
        crate::ensure!(o[31].cam_gone_o[2], "line 2 not gone after 30");
        let van = u[u.len() - 1];
        crate::ensure!(
            van.1 && van.3 == 1,
            "last notification {van:?}: not a 1-hop vanish"
        );
        let rel = o
            .iter()
            .position(|o| o.rel_o[2])
            .ok_or("line 2 never released")?;
        crate::ensure!(
            rel >= van.0 && rel == 51,
            "released at {rel} (expected 51), vanish at {}",
            van.0
        );
        crate::ensure!(
            !o[rel + 1].cam_valid_o[2] && o[rel + 1].cam_route_o[2] == 0,
            "line 2 not cleared after its release"
        );
        crate::ensure_eq!(
            o[100].in_queue_o as usize,
            p.qv() + 2,
            "queue at 100 (the detection queue)"
        );
        Ok(())
    }

    /// Scenario check of [`replicated`]: one route, two SLs: lines 2 and 3
    /// allocated (cycles 1, 2); each SL's packets go to its own SAQ (5, 6),
    /// another SL's to the detection queue (7).
    pub fn one_saq_per_sl(s: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        let p = s.params;
        crate::ensure_eq!(ntf(o, 1), (Act::Alloc, 2), "(action, line) at 1");
        crate::ensure_eq!(ntf(o, 2), (Act::Alloc, 3), "(action, line) at 2");
        crate::ensure_eq!(
            [5, 6, 7].map(|t| o[t].in_queue_o as usize),
            [p.line_queue(2), p.line_queue(3), p.qv() + 3],
            "queues at 5, 6, 7"
        );
        Ok(())
    }

    /// Scenario check of [`detect`]: the detection queue notifies at its
    /// 8th cell once per SL (cycle 9 SL 1, cycle 10 SL 2), the SAQ (route
    /// 1, SL 3) at its 8th (18); three vanishes once drained, six in all;
    /// Xoff from cycle 27 (16 cells at the end of 26), Xon with 4 cells.
    pub fn detected(_: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        let u: Vec<(usize, bool, u32, u8)> = ups(o).iter().map(|x| (x.0, x.1, x.2, x.4)).collect();
        crate::ensure!(
            u.len() == 6
                && u[..3] == [(9, false, 0, 1), (10, false, 0, 2), (18, false, 1, 3)]
                && u[3..].iter().all(|x| x.1),
            "notifications (cycle, vanish, route, SL) {u:?}"
        );
        let xoff = o.iter().position(|o| o.xoff_o[0]).ok_or("no Xoff")?;
        crate::ensure_eq!(xoff, 27, "Xoff's cycle");
        let xon = (xoff..o.len()).find(|&t| !o[t].xoff_o[0]).ok_or("no Xon")?;
        crate::ensure_eq!(o[xon].occ_o[4], 4, "cells at the Xon");
        Ok(())
    }

    /// Scenario check of [`senders`]: the detection queue's 8th cell (cycle
    /// 8) notifies sender 2, sender 1's next packet (9) sender 1; the SAQ's
    /// 8th cell (38) sender 2, then (39) sender 1; once drained (the SAQ
    /// first) one vanish per (queue, sender), lowest sender first.
    pub fn each_sender_once(_: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        let u = ups(o);
        crate::ensure!(u.len() == 8, "notifications {u:?}: expected 8");
        crate::ensure_eq!(
            u[..4],
            [
                (8, false, 2, 1, 5, 2),
                (9, false, 2, 1, 5, 1),
                (38, false, SENDERS_ROUTE, 2, 5, 2),
                (39, false, SENDERS_ROUTE, 2, 5, 1)
            ],
            "notifications (cycle, vanish, route, hops, SL, sender)"
        );
        let v: Vec<_> = u[4..].iter().map(|x| (x.1, x.2, x.3, x.5)).collect();
        crate::ensure_eq!(
            v,
            vec![
                (true, SENDERS_ROUTE, 2, 1),
                (true, SENDERS_ROUTE, 2, 2),
                (true, 2, 1, 1),
                (true, 2, 1, 2)
            ],
            "vanishes (vanish, route, hops, sender)"
        );
        Ok(())
    }

    /// Scenario check of [`leaf`]: line 2 allocated (cycle 1), one
    /// notification upstream (9) and no vanish; drained by 60 but not a
    /// leaf, it stays (60..70, nothing released or sent downstream); the
    /// release message (70) makes it a leaf: released at once, told
    /// downstream (route 2, 1 hop, SL 6); refusals told downstream: a full
    /// VC1 (82, a drop), a bad hop count (83, ignored); the emptied (1, 1
    /// hop) line waits one cycle behind a refusal (100) and goes at 101; a
    /// line that never held a packet goes for its age at 102; six messages
    /// downstream in all.
    pub fn leaf_released(s: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        let p = s.params;
        crate::ensure_eq!(ntf(o, 1), (Act::Alloc, 2), "(action, line) at 1");
        crate::ensure_eq!(
            ups(o),
            vec![(9, false, 2, 1, 6, 0)],
            "notifications upstream"
        );
        crate::ensure_eq!(o[60].occ_o[p.line_queue(2)], 0, "SAQ 2's cells at 60");
        crate::ensure!(
            o[69].cam_valid_o[2] && o[69].cam_up_o[2] == 1,
            "line 2 gone before 70"
        );
        crate::ensure!(
            o[60..70].iter().all(|o| !o.dn_valid_o && !o.rel_o[2]),
            "a release or a message downstream in 60..70"
        );
        crate::ensure!(
            o[70].rls_hit_o && o[70].rel_o[2],
            "line 2 not released at 70"
        );
        let dn = |t: usize| {
            (
                o[t].dn_valid_o,
                o[t].dn_route_o,
                o[t].dn_hops_o,
                o[t].dn_sl_o.value(),
            )
        };
        crate::ensure_eq!(dn(70), (true, 2, 1, 6), "downstream at 70");
        crate::ensure!(!o[71].cam_valid_o[2], "line 2 still valid at 71");
        crate::ensure_eq!((act(&o[82]), dn(82)), (Act::Drop, (true, 0, 1, 5)), "at 82");
        crate::ensure_eq!(
            (act(&o[83]), dn(83)),
            (Act::Ignore, (true, 2, 0, 5)),
            "at 83"
        );
        crate::ensure!(
            o[100].out_valid_o && act(&o[100]) == Act::Drop,
            "no packet out and refusal at 100"
        );
        crate::ensure_eq!(dn(100), (true, 0, 1, 5), "downstream at 100");
        crate::ensure!(
            !o[100].rel_o[2] && o[101].rel_o[2],
            "line 2 not released at 101 (only)"
        );
        crate::ensure_eq!(dn(101), (true, 1, 1, 5), "downstream at 101");
        crate::ensure!(
            o[101].cam_valid_o[3] && !o[101].cam_hold_o[3],
            "line 3 at 101"
        );
        crate::ensure!(
            !o[101].rel_o[3] && o[102].rel_o[3],
            "line 3 not released at 102 (only)"
        );
        crate::ensure_eq!(dn(102), (true, 3, 1, 5), "downstream at 102");
        crate::ensure_eq!(
            o.iter().filter(|o| o.dn_valid_o).count(),
            6,
            "messages downstream"
        );
        Ok(())
    }

    /// Scenario check of [`marker`] with markers: set at the allocation
    /// (cycle 11); the packets leave as 1, 11, 2, 12, 3, 13, 4, 5, 6 (flow
    /// A in order, B's queued cells ahead of the SAQ); the marker goes with
    /// 13 (B3), the last cell queued before the allocation.
    pub fn in_order(_: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        crate::ensure!(o[11].cam_mark_o[2], "no marker at the allocation (11)");
        crate::ensure_eq!(
            left_ids(o),
            vec![1, 11, 2, 12, 3, 13, 4, 5, 6],
            "packets out"
        );
        let last = o
            .iter()
            .position(|o| o.out_valid_o && o.out_id_o == 13)
            .ok_or("13 never leaves")?;
        crate::ensure!(
            o[last].cam_mark_o[2] && !o[last + 1].cam_mark_o[2],
            "the marker does not go with 13 (cycle {last})"
        );
        Ok(())
    }

    /// Scenario check of [`marker_chain`]: lines 2 and 3 allocated (cycles
    /// 10, 11), both marked (12); A4..A6 in the 3-hop SAQ (15); the packets
    /// leave as 1, 11, 2, 12, 3, 13, 4, 5, 6.
    pub fn marker_passed_on(s: &Stimulus<RecnPort>, o: &[RecnPortOutputs]) -> Result<(), String> {
        crate::ensure_eq!(ntf(o, 10), (Act::Alloc, 2), "(action, line) at 10");
        crate::ensure_eq!(ntf(o, 11), (Act::Alloc, 3), "(action, line) at 11");
        crate::ensure!(
            o[12].cam_mark_o[2] && o[12].cam_mark_o[3],
            "lines 2, 3 not both marked at 12"
        );
        crate::ensure_eq!(
            o[15].occ_o[s.params.line_queue(3)],
            3,
            "cells in the 3-hop SAQ at 15"
        );
        crate::ensure_eq!(
            left_ids(o),
            vec![1, 11, 2, 12, 3, 13, 4, 5, 6],
            "packets out"
        );
        Ok(())
    }
}
