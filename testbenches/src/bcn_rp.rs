//! Stimulus for the BCN reaction point (`docs/bcn_rp.md`).
//!
//! Configurations cover every runtime field over its legal range with the
//! edges on purpose: line rates of one fraction unit and of `2^24 - 1`,
//! whole bytes per cycle (so that a token bucket meets a frame's length
//! exactly), a minimum rate equal to the line rate, every gain exponent,
//! `Ru` of 0 and of `2^16 - 1`, every weight, idle times of 0 (never), one
//! cycle and long.
//!
//! Traffic comes in phases of 20 to 400 cycles over a few hot flows (a small
//! set of DAs and mostly three priorities, so that more flows than limiters
//! appear and the fall-back to coarser keys happens): the source offers
//! frames at a phase's load (lengths of one to four cycles of line rate,
//! with 0, 1 and 16383 bytes now and then) and the congestion points send
//! messages, mostly for flows that have a limiter (closed loop), negative in
//! congested phases and positive in recovering ones, with the extremes of
//! Qoff and Qdelta that saturate Fb. A message names the point its
//! limiter answers to (its CPID) most of the time, another point otherwise,
//! so that increases are taken and refused. Idle phases let limiters time
//! out.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::{u3, u4, u5};
use model::bcn_rp::{BcnRp, BcnRpConfig, BcnRpInputs, BcnRpOutputs, BcnRpParams, FW, I16, RW};
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;

/// The largest rate value.
pub const RATE_MAX: u32 = (1 << RW) - 1;

/// Configurations of variant `p` (with `illegal`, some with a minimum rate
/// of 0 or above the line rate).
pub fn config_strategy(_p: &BcnRpParams, illegal: bool) -> BoxedStrategy<BcnRpConfig> {
    let line = prop_oneof![
        6 => (1u32..=32).prop_map(|b| b << FW),
        2 => (1u32 << FW)..=(64u32 << FW),
        1 => Just(1u32),
        1 => Just(RATE_MAX),
        1 => 1u32..=RATE_MAX,
    ];
    let min_sel = prop_oneof![6 => 1u32..=8, 1 => Just(0u32), 1 => Just(30u32), 1 => Just(31u32)];
    let gd = prop_oneof![4 => 4u8..=8, 1 => Just(0u8), 1 => Just(15u8), 2 => 0u8..=15];
    let gi = prop_oneof![4 => 2u8..=8, 1 => Just(0u8), 1 => Just(15u8), 2 => 0u8..=15];
    let ru = prop_oneof![
        4 => (8u16..=14).prop_map(|s| 1u16 << s),
        1 => Just(0u16),
        1 => Just(u16::MAX),
        2 => any::<u16>(),
    ];
    let w = prop_oneof![4 => 0u8..=16, 1 => Just(31u8), 1 => 0u8..=31];
    let idle = prop_oneof![
        2 => 20u16..=300,
        1 => Just(0u16),
        1 => Just(1u16),
        1 => Just(u16::MAX),
        1 => any::<u16>(),
    ];
    let bad = if illegal {
        proptest::bool::weighted(0.1).boxed()
    } else {
        Just(false).boxed()
    };
    (line, min_sel, gd, gi, ru, w, idle, bad, any::<bool>())
        .prop_map(|(line, msel, gd, gi, ru, w, idle, bad, which)| {
            // The minimum: the line rate >> 1..8, or exactly the line rate
            // (0), or one fraction unit (30, 31).
            let min = match msel {
                0 => line,
                30 | 31 => 1,
                s => (line >> s).max(1),
            };
            let min = if bad {
                if which || line == RATE_MAX {
                    0
                } else {
                    line + 1
                }
            } else {
                min
            };
            BcnRpConfig {
                cfg_line_rate_i: line,
                cfg_min_rate_i: min,
                cfg_gd_i: u4::new(gd),
                cfg_gi_i: u4::new(gi),
                cfg_ru_i: ru,
                cfg_w_i: u5::new(w),
                cfg_idle_i: idle,
            }
        })
        .boxed()
}

/// A flow: (DA, priority).
pub type Flow = (u64, u8);

/// The BCN reaction point's traffic, one cycle at a time.
pub struct BcnRpGen {
    rng: Rng,
    line_bytes: u64,
    hot: Vec<Flow>,
    in_p: f64,
    msg_p: f64,
    neg_p: f64,
    big_p: f64,
    left: u32,
    /// The frame offered and not yet taken (the source holds it, or offers
    /// another with probability 1/4).
    held: Option<(Flow, u16)>,
}

impl BcnRpGen {
    /// The generator of configuration `cfg` from `seed`.
    pub fn new(_p: &BcnRpParams, cfg: &BcnRpConfig, seed: u64) -> Self {
        BcnRpGen {
            rng: Rng::new(seed, 0xbc4e),
            line_bytes: (cfg.cfg_line_rate_i >> FW).max(1) as u64,
            hot: Vec::with_capacity(8),
            in_p: 0.0,
            msg_p: 0.0,
            neg_p: 0.0,
            big_p: 0.0,
            left: 0,
            held: None,
        }
    }

    fn flow(r: &mut Rng) -> Flow {
        let da = match r.weighted(&[8, 1, 1]) {
            0 => 0x0200_0000_0000 + r.range(1, 6),
            1 => r.u64() & ((1 << 48) - 1),
            _ => (1 << 48) - 1,
        };
        let prio = if r.weighted(&[4, 1]) == 0 {
            r.range(0, 2) as u8
        } else {
            r.range(0, 7) as u8
        };
        (da, prio)
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        self.left = r.range(20, 400) as u32;
        self.hot.clear();
        for _ in 0..r.range(1, 7) {
            self.hot.push(Self::flow(r));
        }
        self.in_p = [0.0, 0.1, 0.3, 0.6, 0.9, 1.0][r.below(6) as usize];
        self.msg_p = [0.0, 0.02, 0.05, 0.1, 0.3][r.below(5) as usize];
        self.neg_p = [0.1, 0.5, 0.8, 0.95][r.below(4) as usize];
        self.big_p = [0.0, 0.02, 0.1][r.below(3) as usize];
    }

    fn len(&mut self) -> u16 {
        let r = &mut self.rng;
        match r.weighted(&[12, 1, 1, 1]) {
            0 => (self.line_bytes * r.range(1, 4)).min(16383) as u16,
            1 => 0,
            2 => 1,
            _ => r.range(1, 16383) as u16,
        }
    }

    fn q(r: &mut Rng, big: f64, neg: bool) -> i16 {
        if r.chance(big) {
            return r.pick(&[i16::MIN, i16::MAX, -1, 1]);
        }
        let m = r.range(0, 40) as i16;
        if neg {
            -m
        } else {
            m
        }
    }
}

impl Generator<BcnRp> for BcnRpGen {
    fn next(&mut self, m: &BcnRp, last: &BcnRpOutputs, i: &mut BcnRpInputs) -> Step {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        if self.rng.chance(0.0003) {
            self.held = None;
            return Step::Reset;
        }
        // The source: the frame it offered last cycle was taken, or not.
        if last.in_ready_o {
            self.held = None;
        }
        if self.held.is_some() && self.rng.chance(0.25) {
            self.held = None;
        }
        if self.held.is_none() && self.rng.chance(self.in_p) && !self.hot.is_empty() {
            let f = if self.rng.chance(0.9) {
                self.hot[self.rng.below(self.hot.len() as u64) as usize]
            } else {
                Self::flow(&mut self.rng)
            };
            let l = self.len();
            self.held = Some((f, l));
        }
        let p = m.params();
        let r = &mut self.rng;
        i.in_valid_i = false;
        i.in_da_i = 0;
        i.in_prio_i = u3::new(0);
        i.in_len_i = 0;
        if let Some(((da, pr), l)) = self.held {
            i.in_valid_i = true;
            i.in_da_i = da;
            i.in_prio_i = u3::new(pr);
            i.in_len_i = l;
        }
        i.msg_valid_i = r.chance(self.msg_p);
        // The congestion points sample the flows that send (the hot ones),
        // now and then another; rarely the key of a limiter whose flow has
        // gone (so that idle limiters mostly time out).
        let f = match r.weighted(&[85, 10, 5]) {
            0 if !self.hot.is_empty() => self.hot[r.below(self.hot.len() as u64) as usize],
            2 => {
                let st = m.state();
                let j = r.below(p.k as u64) as usize;
                if st.valid_q[j] && st.level_q[j] == 0 {
                    (st.key_da_q[j], st.key_prio_q[j])
                } else {
                    Self::flow(r)
                }
            }
            _ => Self::flow(r),
        };
        let neg = r.chance(self.neg_p);
        let (qoff, qd) = if r.chance(0.05) {
            (0, 0)
        } else {
            (Self::q(r, self.big_p, neg), Self::q(r, self.big_p, !neg))
        };
        i.msg_flow_da_i = f.0;
        i.msg_prio_i = u3::new(f.1);
        // The point the flow's limiter answers to, or another one.
        let st = m.state();
        i.msg_cpid_i = match m.lookup(f.0, f.1) {
            Some(j) if r.chance(0.7) => st.cpid_q[j],
            _ => r.range(0, 3) as u16 | if r.chance(0.01) { 0xfff0 } else { 0 },
        };
        i.msg_qoff_i = I16::new(qoff as i32);
        i.msg_qdelta_i = I16::new(qd as i32);
        Step::Drive
    }
}

impl Bench for BcnRp {
    const GENERATOR_VERSION: u32 = 3;
    type Gen = BcnRpGen;
    fn generator(p: &BcnRpParams, cfg: &BcnRpConfig, seed: u64) -> BcnRpGen {
        BcnRpGen::new(p, cfg, seed)
    }
    fn config_strategy(p: &BcnRpParams, illegal: bool) -> BoxedStrategy<BcnRpConfig> {
        config_strategy(p, illegal)
    }
    fn scenarios() -> Vec<crate::Scenario<BcnRp>> {
        use scenario as s;
        vec![
            crate::Scenario {
                name: "install",
                about:
                    "seed 003 step 2: the first negative BCN installs a limiter; its frames are \
                        tagged, others bypass",
                build: || s::install().0,
                check: Some(s::installed),
            },
            crate::Scenario {
                name: "decrease",
                about: "seed 003 step 2: each negative BCN multiplies the rate by (1 - Gd |Fb|)",
                build: || s::decrease().0,
                check: Some(s::decreased),
            },
            crate::Scenario {
                name: "settle",
                about: "seed 003 steps 3-4: a congestion point in the loop; the rate settles near \
                        the bottleneck's",
                build: || s::settle().0,
                check: Some(s::settled),
            },
            crate::Scenario {
                name: "increase-removal",
                about:
                    "seed 003 steps 3, 5: positive BCNs raise the rate by Gi Fb Ru; at the line \
                        rate the limiter is removed",
                build: || s::increase_removal().0,
                check: Some(s::raised_then_removed),
            },
            crate::Scenario {
                name: "idle-removal",
                about: "seed 003 step 5: the flow ends, the limiter is removed after the idle time",
                build: || s::idle_removal().0,
                check: Some(s::removed_when_idle),
            },
            crate::Scenario {
                name: "fallback",
                about: "seed 003 RP: more congestion points than limiters: fall back to the \
                        priority, then to the link",
                build: || s::fallback().0,
                check: Some(s::fell_back),
            },
            crate::Scenario {
                name: "two-points",
                about:
                    "two congestion points: a limiter answers to the point that last decreased it; \
                        only that point raises it, and its tags name it",
                build: || s::two_points().0,
                check: Some(s::answers_to_last_point),
            },
            crate::Scenario {
                name: "restart",
                about: "seed 003 step 5: a flow restarts with its limiter still in place: tagged \
                        frames, positive BCNs, faster removal",
                build: || s::restart().0,
                check: Some(s::restarted_and_removed),
            },
        ]
    }
}

/// Directed scenarios from seed 003, played closed-loop against the golden
/// model (a source that paces its frames and obeys `in_ready_o`), then
/// replayed open-loop in co-simulation.
pub mod scenario {
    use super::*;
    use model::bcn_rp::Act;

    /// Flow A of the scenarios.
    pub const A: Flow = (0x0200_0000_000a, 3);
    /// Flow B (bypasses).
    pub const B: Flow = (0x0200_0000_000b, 3);

    /// The configuration of the scenarios: line 8 B/cycle, minimum 1/64
    /// of it, Gd = 1/128, Gi = 1/16, Ru = 1/16 B/cycle, W = 2, idle 200.
    pub fn cfg() -> BcnRpConfig {
        BcnRpConfig {
            cfg_line_rate_i: 8 << FW,
            cfg_min_rate_i: 8 << (FW - 6),
            cfg_gd_i: u4::new(7),
            cfg_gi_i: u4::new(4),
            cfg_ru_i: 1 << 12,
            cfg_w_i: u5::new(8),
            cfg_idle_i: 200,
        }
    }

    /// A message for `f`.
    #[derive(Clone, Copy, Debug)]
    pub struct Msg {
        /// The flow.
        pub flow: Flow,
        /// Qoff (64 B units).
        pub qoff: i16,
        /// Qdelta (64 B units).
        pub qdelta: i16,
        /// CPID.
        pub cpid: u16,
    }

    /// A message with Qdelta = 0.
    pub fn msg(flow: Flow, qoff: i16) -> Msg {
        Msg {
            flow,
            qoff,
            qdelta: 0,
            cpid: 1,
        }
    }

    /// A scripted run: sources offering frames of fixed length at fixed
    /// rates, and the messages of a callback.
    pub struct Script {
        /// Variant.
        pub p: BcnRpParams,
        /// The configuration.
        pub cfg: BcnRpConfig,
        /// The model, as it stands.
        pub m: BcnRp,
        /// The cycles so far.
        pub cycles: Vec<Cycle<BcnRpInputs>>,
        /// The outputs of every cycle.
        pub outs: Vec<BcnRpOutputs>,
        credit: Vec<f64>,
        rr: usize,
    }

    impl Script {
        /// A new run of variant `p`.
        pub fn new(p: BcnRpParams, cfg: BcnRpConfig) -> Self {
            Script {
                p,
                m: BcnRp::new(&p, &cfg),
                cfg,
                cycles: Vec::new(),
                outs: Vec::new(),
                credit: Vec::new(),
                rr: 0,
            }
        }

        /// `n` cycles: each source `(flow, len, bytes per cycle)` earns
        /// credit at its rate (capped at two frames) and offers a frame when
        /// it has a frame's worth (sources take turns); `msg(t)` gives the
        /// message of the cycle, if any.
        pub fn run(
            &mut self,
            n: usize,
            src: &[(Flow, u16, f64)],
            mut msg: impl FnMut(usize, &BcnRp, &[BcnRpOutputs]) -> Option<Msg>,
        ) {
            self.credit.resize(src.len(), 0.0);
            for _ in 0..n {
                let t = self.cycles.len();
                let mut i = BcnRpInputs::zero(&self.p);
                for (k, &(_, l, r)) in src.iter().enumerate() {
                    self.credit[k] = (self.credit[k] + r).min(2.0 * l as f64);
                }
                let mut offered = None;
                for d in 0..src.len() {
                    let k = (self.rr + d) % src.len();
                    let (f, l, _) = src[k];
                    if self.credit[k] >= l as f64 {
                        i.in_valid_i = true;
                        i.in_da_i = f.0;
                        i.in_prio_i = u3::new(f.1);
                        i.in_len_i = l;
                        offered = Some(k);
                        break;
                    }
                }
                if let Some(x) = msg(t, &self.m, &self.outs) {
                    i.msg_valid_i = true;
                    i.msg_flow_da_i = x.flow.0;
                    i.msg_prio_i = u3::new(x.flow.1);
                    i.msg_cpid_i = x.cpid;
                    i.msg_qoff_i = I16::new(x.qoff as i32);
                    i.msg_qdelta_i = I16::new(x.qdelta as i32);
                }
                let o = self.m.step(&i);
                if let (Some(k), true) = (offered, o.in_ready_o) {
                    self.credit[k] -= src[k].1 as f64;
                    self.rr = k + 1;
                }
                self.cycles.push(Cycle::Drive(i));
                self.outs.push(o);
            }
        }

        /// The stimulus.
        pub fn stimulus(&self, seed: u64) -> Stimulus<BcnRp> {
            Stimulus {
                params: self.p,
                config: self.cfg.clone(),
                cycles: self.cycles.clone(),
                seed,
                generated: None,
            }
        }
    }

    /// Bytes of `f` sent in cycles `from..to`, and how many of its frames
    /// were tagged.
    pub fn sent(outs: &[BcnRpOutputs], f: Flow, from: usize, to: usize) -> (u64, usize, usize) {
        let mut bytes = 0;
        let (mut tagged, mut frames) = (0, 0);
        for o in &outs[from..to] {
            if o.out_valid_o && o.out_da_o == f.0 && o.out_prio_o.value() == f.1 {
                bytes += o.out_len_o as u64;
                frames += 1;
                tagged += usize::from(o.out_tag_valid_o);
            }
        }
        (bytes, tagged, frames)
    }

    /// The cycle of the first output with action `a`.
    pub fn first_act(outs: &[BcnRpOutputs], a: Act) -> Option<usize> {
        outs.iter().position(|o| Act::from_code(o.msg_act_o) == a)
    }

    const LINE: f64 = 8.0;

    /// Flow A at the line rate, flow B at a quarter of it; one negative
    /// message (Fb = -32: rate x 3/4) for A at cycle 100.
    pub fn install() -> (Stimulus<BcnRp>, Script) {
        let mut s = Script::new(BcnRpParams::default(), cfg());
        let src = [(A, 64, LINE * 0.75), (B, 64, LINE * 0.25)];
        s.run(600, &src, |t, _, _| (t == 100).then(|| msg(A, -32)));
        (s.stimulus(0xb1), s)
    }

    /// Five negative messages, 50 cycles apart, Fb = -16 each: the rate
    /// goes 8 x (7/8)^n.
    pub fn decrease() -> (Stimulus<BcnRp>, Script) {
        let mut s = Script::new(BcnRpParams::default(), cfg());
        let src = [(A, 64, LINE)];
        s.run(400, &src, |t, _, _| {
            (t >= 50 && t % 50 == 0 && t <= 250).then(|| msg(A, -16))
        });
        (s.stimulus(0xdec), s)
    }

    /// A congestion point in the loop: a bottleneck queue served at
    /// `mu = 2` bytes per cycle fed by flow A's frames (the RP's output),
    /// `Qeq = 16` units of 64 B; every 4th frame is sampled and its
    /// message (`Qoff = Qeq - Q`, `Qdelta = Q - Q at the last sample`)
    /// arrives 20 cycles later. Gi = 1/4 here (faster recovery).
    pub fn settle() -> (Stimulus<BcnRp>, Script) {
        let c = BcnRpConfig {
            cfg_gi_i: u4::new(2),
            ..cfg()
        };
        let mut s = Script::new(BcnRpParams::default(), c);
        let src = [(A, 64, LINE)];
        let mu = 2.0;
        let qeq = 16.0 * 64.0;
        let mut q = 0.0f64;
        let mut q_old = 0.0f64;
        let mut frames = 0u64;
        let mut pending: std::collections::VecDeque<(usize, Msg)> = Default::default();
        s.run(6_000, &src, |t, _, outs| {
            if let Some(o) = outs.last() {
                if o.out_valid_o {
                    q += o.out_len_o as f64;
                    frames += 1;
                    if frames.is_multiple_of(4) {
                        let qoff = ((qeq - q) / 64.0).round() as i16;
                        let qdelta = ((q - q_old) / 64.0).round() as i16;
                        q_old = q;
                        pending.push_back((
                            t + 20,
                            Msg {
                                flow: A,
                                qoff,
                                qdelta,
                                cpid: 7,
                            },
                        ));
                    }
                }
            }
            q = (q - mu).max(0.0);
            match pending.front() {
                Some(&(at, m)) if at <= t => {
                    pending.pop_front();
                    Some(m)
                }
                _ => None,
            }
        });
        (s.stimulus(0x5e77), s)
    }

    /// Install (Fb = -64: rate halves to 4 B/cycle), then positive
    /// messages (Fb = +512: +512 x 1/16 x 1/16 = 2 B/cycle each) every 40
    /// cycles until the rate
    /// reaches the line rate and the limiter is removed.
    pub fn increase_removal() -> (Stimulus<BcnRp>, Script) {
        let mut s = Script::new(BcnRpParams::default(), cfg());
        let src = [(A, 64, LINE * 0.5)];
        s.run(500, &src, |t, _, _| match t {
            20 => Some(msg(A, -64)),
            t if (100..=220).contains(&t) && (t - 100) % 40 == 0 => Some(msg(A, 512)),
            _ => None,
        });
        (s.stimulus(0x1c), s)
    }

    /// Install, flow A sends for 300 cycles, then stops: the limiter is
    /// removed 200 cycles after its last frame left.
    pub fn idle_removal() -> (Stimulus<BcnRp>, Script) {
        let mut s = Script::new(BcnRpParams::default(), cfg());
        s.run(300, &[(A, 64, LINE)], |t, _, _| {
            (t == 10).then(|| msg(A, -32))
        });
        s.run(400, &[], |_, _, _| None);
        (s.stimulus(0x1d1e), s)
    }

    /// K = 1: a limiter for A (priority 3); a negative message for C
    /// (other DA, priority 3) coarsens it to priority 3; then for D
    /// (priority 5) to the whole link. Flows of every kind are sent.
    pub fn fallback() -> (Stimulus<BcnRp>, Script) {
        let p = BcnRpParams::new(1, 2);
        let c: Flow = (0x0200_0000_000c, 3);
        let d: Flow = (0x0200_0000_000d, 5);
        let mut s = Script::new(p, cfg());
        let src = [(A, 64, 2.0), (c, 64, 2.0), (d, 64, 2.0)];
        s.run(600, &src, |t, _, _| match t {
            10 => Some(msg(A, -8)),
            200 => Some(msg(c, -8)),
            400 => Some(msg(d, -8)),
            _ => None,
        });
        (s.stimulus(0xfb), s)
    }

    /// Two congestion points, CPID 1 and 2: point 1 installs A's limiter
    /// (cycle 10, Fb = -32); a positive message from point 2 (cycle 100) is
    /// ignored; a negative one from point 2 (cycle 200) decreases the rate
    /// and the limiter answers to point 2; a positive one from point 1
    /// (cycle 300) is ignored, one from point 2 (cycle 400) raises the rate.
    /// A sends at the line rate throughout.
    pub fn two_points() -> (Stimulus<BcnRp>, Script) {
        let mut s = Script::new(BcnRpParams::default(), cfg());
        let from = |cpid: u16, qoff: i16| Msg {
            cpid,
            ..msg(A, qoff)
        };
        s.run(500, &[(A, 64, LINE)], |t, _, _| match t {
            10 => Some(from(1, -32)),
            100 => Some(from(2, 64)),
            200 => Some(from(2, -16)),
            300 => Some(from(1, 64)),
            400 => Some(from(2, 64)),
            _ => None,
        });
        (s.stimulus(0x2c9), s)
    }

    /// A limiter at a low rate, the flow pauses for 100 cycles (less than
    /// the idle time), restarts: its first frames are tagged; each tagged
    /// frame brings a positive message (the congestion has gone), so the
    /// limiter reaches the line rate and is removed.
    pub fn restart() -> (Stimulus<BcnRp>, Script) {
        let mut s = Script::new(BcnRpParams::default(), cfg());
        s.run(150, &[(A, 64, LINE)], |t, _, _| {
            (t == 10 || t == 60).then(|| msg(A, -64))
        });
        s.run(100, &[], |_, _, _| None);
        s.run(600, &[(A, 64, LINE)], |_, _, outs| {
            let o = outs.last()?;
            (o.out_valid_o && o.out_tag_valid_o).then(|| msg(A, 64))
        });
        (s.stimulus(0x2e5), s)
    }

    fn act(o: &BcnRpOutputs) -> Act {
        Act::from_code(o.msg_act_o)
    }

    /// Scenario check of [`install`]: the message at cycle 100 installs
    /// the limiter (the only action of the run) at 8 x (1 - 1/4) = 6
    /// B/cycle exactly; nothing is tagged before, every one of A's frames
    /// after (more than 20), none of B's (more than 10); A leaves at 6
    /// B/cycle (within 0.3).
    pub fn installed(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        let t = first_act(o, Act::Install).ok_or("no limiter installed")?;
        crate::ensure_eq!(t, 100, "the install's cycle");
        crate::ensure_eq!(
            o[t + 1].lim_rate_o[0],
            6 << FW,
            "the rate after the install"
        );
        crate::ensure!(
            o[t + 1].lim_valid_o[0],
            "no valid limiter after the install"
        );
        crate::ensure_eq!(sent(o, A, 0, t + 1).1, 0, "A's tagged frames before");
        let (bytes_a, tagged_a, frames_a) = sent(o, A, t + 1, o.len());
        crate::ensure!(
            frames_a > 20 && tagged_a == frames_a,
            "A after the install: {tagged_a} of {frames_a} frames tagged"
        );
        let (_, tagged_b, frames_b) = sent(o, B, 0, o.len());
        crate::ensure!(
            frames_b > 10 && tagged_b == 0,
            "B (bypasses): {tagged_b} of {frames_b} frames tagged"
        );
        let rate = bytes_a as f64 / (o.len() - t - 1) as f64;
        crate::ensure!((rate - 6.0).abs() < 0.3, "A at {rate} B/cycle, expected 6");
        let acts = o.iter().filter(|o| act(o) != Act::None).count();
        crate::ensure_eq!(acts, 1, "actions in the run");
        Ok(())
    }

    /// Scenario check of [`decrease`]: message `n` (cycle 50 + 50 n) sets
    /// the rate to the previous one x (1 - 1/8), floored (the first one
    /// installs, the others decrease); after the last one A sends at that
    /// rate (8 x (7/8)^5 = 4.1 B/cycle, within 0.7).
    pub fn decreased(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        let mut want = 8u64 << FW;
        for n in 0..5 {
            let t = 50 + 50 * n;
            want -= (want * 16) >> 7;
            crate::ensure_eq!(
                o[t + 1].lim_rate_o[0] as u64,
                want,
                "rate after message {n}"
            );
            let a = if n == 0 { Act::Install } else { Act::Decrease };
            crate::ensure_eq!(act(&o[t]), a, "action of message {n}");
        }
        let r = sent(o, A, 300, 400).0 as f64 / 100.0;
        crate::ensure!(
            (r - want as f64 / 65536.0).abs() < 0.7,
            "A at {r} B/cycle after the last message"
        );
        Ok(())
    }

    /// Scenario check of [`settle`]: installs, decreases and increases
    /// happen; over the second half A's frames are all tagged, its
    /// throughput is the bottleneck's 2 B/cycle within 25 % and the mean
    /// limiter rate is 2 B/cycle within 0.6.
    pub fn settled(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        for a in [Act::Install, Act::Decrease, Act::Increase] {
            crate::ensure!(first_act(o, a).is_some(), "no {a:?}");
        }
        let n = o.len();
        let (bytes, tagged, frames) = sent(o, A, n / 2, n);
        let r = bytes as f64 / (n / 2) as f64;
        crate::ensure!((r - 2.0).abs() < 0.5, "settled at {r} B/cycle, expected 2");
        crate::ensure_eq!(tagged, frames, "tagged frames of the second half");
        let mean_rate: f64 = o[n / 2..]
            .iter()
            .map(|o| o.lim_rate_o[0] as f64 / 65536.0)
            .sum::<f64>()
            / (n / 2) as f64;
        crate::ensure!(
            (mean_rate - 2.0).abs() < 0.6,
            "mean rate {mean_rate}, expected 2"
        );
        Ok(())
    }

    /// Scenario check of [`increase_removal`]: Fb = -64 halves the rate to
    /// 4 B/cycle; the positive messages at 100 and 140 increase it, each by
    /// 2 B/cycle (6 after the first); at the line rate the limiter is
    /// removed (not before 140), and A bypasses it afterwards (more than 10
    /// frames, none tagged, no limiter installed again).
    pub fn raised_then_removed(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        crate::ensure_eq!(o[21].lim_rate_o[0], 4 << FW, "rate after Fb = -64");
        crate::ensure_eq!(act(&o[100]), Act::Increase, "action at 100");
        crate::ensure_eq!(
            o[101].lim_rate_o[0],
            6 << FW,
            "rate after the first increase"
        );
        crate::ensure_eq!(act(&o[140]), Act::Increase, "action at 140");
        let rm = o
            .iter()
            .position(|o| o.rm_line_o[0])
            .ok_or("not removed at the line rate")?;
        crate::ensure!(
            rm >= 140,
            "removed at {rm}, before the rate reached the line"
        );
        crate::ensure!(
            !o[rm + 1].lim_valid_o[0] && o[rm + 1].lim_rate_o[0] == 0,
            "a limiter after its removal at {rm}"
        );
        crate::ensure!(
            o[rm + 1..].iter().all(|o| !o.lim_valid_o[0]),
            "a limiter installed again after the removal"
        );
        let (_, tagged, frames) = sent(o, A, rm + 1, o.len());
        crate::ensure!(
            frames > 10 && tagged == 0,
            "A after the removal: {tagged} of {frames} frames tagged"
        );
        Ok(())
    }

    /// Scenario check of [`idle_removal`]: the limiter is removed exactly
    /// 200 cycles (the idle time) after A's last (tagged) frame left.
    pub fn removed_when_idle(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        let last_rel = o
            .iter()
            .rposition(|o| o.out_tag_valid_o)
            .ok_or("no tagged frame")?;
        let rm = o
            .iter()
            .position(|o| o.rm_idle_o[0])
            .ok_or("not removed idle")?;
        crate::ensure_eq!(
            rm,
            last_rel + 200,
            "the removal's cycle (last release {last_rel})"
        );
        crate::ensure!(
            o[rm].lim_valid_o[0] && !o[rm + 1].lim_valid_o[0],
            "the limiter is not valid up to its removal at {rm} and gone after"
        );
        Ok(())
    }

    /// Scenario check of [`fallback`] (one limiter): A's message installs
    /// it (cycle 10), C's coarsens it to priority 3 (200), D's to the link
    /// (400), each a decrease of the rate (8 x (1 - 1/16)^3 at the end);
    /// the tagged frames follow: only A's before 200, C's from 200, D's
    /// from 400.
    pub fn fell_back(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        use model::bcn_rp::{LEVEL_LINK, LEVEL_PRIO};
        crate::ensure_eq!(act(&o[10]), Act::Install, "action at 10");
        crate::ensure_eq!(act(&o[200]), Act::FallbackPrio, "action at 200");
        crate::ensure_eq!(o[201].lim_level_o[0], LEVEL_PRIO, "level after 200");
        crate::ensure_eq!(act(&o[400]), Act::FallbackLink, "action at 400");
        crate::ensure_eq!(o[401].lim_level_o[0], LEVEL_LINK, "level after 400");
        let c: Flow = (0x0200_0000_000c, 3);
        let d: Flow = (0x0200_0000_000d, 5);
        let tag = |f, a, b| sent(o, f, a, b).1;
        crate::ensure!(
            tag(A, 20, 200) > 0 && tag(c, 20, 200) == 0 && tag(d, 20, 200) == 0,
            "tagged in 20..200 (A, C, D): {}, {}, {}",
            tag(A, 20, 200),
            tag(c, 20, 200),
            tag(d, 20, 200)
        );
        crate::ensure!(
            tag(c, 210, 400) > 0 && tag(d, 210, 400) == 0,
            "tagged in 210..400 (C, D): {}, {}",
            tag(c, 210, 400),
            tag(d, 210, 400)
        );
        crate::ensure!(tag(d, 410, 600) > 0, "none of D's frames tagged after 400");
        let mut want = 8u64 << FW;
        for _ in 0..3 {
            want -= (want * 8) >> 7;
        }
        crate::ensure_eq!(o[401].lim_rate_o[0] as u64, want, "rate after 400");
        Ok(())
    }

    /// Scenario check of [`two_points`]: point 1 installs (CPID 1); point
    /// 2's positive message (100) is ignored; its negative one (200)
    /// decreases the rate and takes the limiter (CPID 2); point 1's
    /// positive message (300) is then ignored, point 2's (400) raises the
    /// rate; A's tags name point 1 in 11..201 and point 2 in 201..500.
    pub fn answers_to_last_point(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        let rate = |t: usize| o[t].lim_rate_o[0];
        let cpid = |t: usize| o[t].lim_cpid_o[0];
        crate::ensure_eq!(act(&o[10]), Act::Install, "action at 10");
        crate::ensure_eq!(cpid(11), 1, "CPID after 10");
        crate::ensure_eq!(act(&o[100]), Act::Ignore, "action at 100");
        crate::ensure_eq!(
            (rate(101), cpid(101)),
            (rate(100), 1),
            "(rate, CPID) after 100"
        );
        crate::ensure_eq!(act(&o[200]), Act::Decrease, "action at 200");
        crate::ensure!(
            rate(201) < rate(200) && cpid(201) == 2,
            "after 200: rate {} (before {}), CPID {}",
            rate(201),
            rate(200),
            cpid(201)
        );
        crate::ensure_eq!(act(&o[300]), Act::Ignore, "action at 300");
        crate::ensure_eq!(rate(301), rate(300), "rate after 300");
        crate::ensure_eq!(act(&o[400]), Act::Increase, "action at 400");
        crate::ensure!(rate(401) > rate(400), "rate not raised at 400");
        let tags = |a: usize, b: usize| -> Vec<u16> {
            let mut v: Vec<u16> = o[a..b]
                .iter()
                .filter(|x| x.out_tag_valid_o)
                .map(|x| x.out_tag_cpid_o)
                .collect();
            v.dedup();
            v
        };
        crate::ensure_eq!(tags(11, 201), vec![1], "tag CPIDs in 11..201");
        crate::ensure_eq!(tags(201, 500), vec![2], "tag CPIDs in 201..500");
        Ok(())
    }

    /// Scenario check of [`restart`]: the limiter is still in place at the
    /// restart (cycle 250); A's first frame after it is tagged; from then
    /// on only increases until the limiter is removed at the line rate.
    pub fn restarted_and_removed(_: &Stimulus<BcnRp>, o: &[BcnRpOutputs]) -> Result<(), String> {
        let restart = 250;
        crate::ensure!(o[restart].lim_valid_o[0], "no limiter at the restart");
        let first = (restart..o.len())
            .find(|&t| o[t].out_valid_o && o[t].out_da_o == A.0)
            .ok_or("A sends nothing after the restart")?;
        crate::ensure!(
            o[first].out_tag_valid_o,
            "A's first frame after the restart ({first}) untagged"
        );
        let rm = o
            .iter()
            .position(|o| o.rm_line_o[0])
            .ok_or("not removed at the line rate")?;
        crate::ensure!(rm > restart, "removed at {rm}, before the restart");
        if let Some(t) = (restart..rm).find(|&t| !matches!(act(&o[t]), Act::None | Act::Increase)) {
            return Err(format!(
                "action {:?} at {t}, between the restart and the removal",
                act(&o[t])
            ));
        }
        Ok(())
    }
}
