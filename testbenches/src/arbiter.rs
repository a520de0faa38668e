//! Stimulus for the OSMOSIS crossbar arbiter (`docs/arbiter.md`).
//!
//! Configurations cover every runtime field with the edges on purpose:
//! R = 1 (every SRQ loses to an arbitrated cell), R = 2 (OSMOSIS), R = N - 1,
//! N and 127 (never a collision); 1 iteration and the most the variant's
//! slot holds (`ArbiterParams::max_iter`: 8 at K = 1 and K >= 9); STX off;
//! crossbar delays 0, 1 and 127; credits off (0), 1, a few, many and 1023.
//!
//! Traffic is generated one cycle at a time ([`ArbiterGen`]) and comes in
//! phases, each with its own pattern, request and SRQ rates and hot
//! outputs, drawn when the previous phase ends (the lockstep harness
//! shrinks the concrete cycles of a failure). Patterns:
//! - `Uniform`: requests and SRQs to uniformly random outputs;
//! - `HotSpot`: most requests and SRQs to 1..=3 hot outputs (heavy STX
//!   collisions; request counters of the hot VOQs climb to saturation);
//! - `Backlog`: every input requests every slot, rotating over the outputs
//!   (all VOQs busy, full matchings);
//! - `Burst`: each input sends bursts of 1..=32 requests (and SRQs) to one
//!   output, bursts biased to the hot outputs;
//! - `Triangle`: input `i` requests output `i + t mod (N - i)` in slot `t`
//!   (long iSLIP chains: at N = 64 iterations 7 and 8 produce matches);
//! - `Idle`.
//!
//! Credit returns (`crd_ret_i`): per phase a return rate (none, which lets
//! the credits run out, to every slot) and size (1 to 3 per output, now and
//! then more than were taken: the arbiter clamps).

use crate::{rng, Bench};
use arbitrary_int::{u4, u7};
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use model::stim::{Cycle, Generator, Step};
use proptest::prelude::*;

/// A traffic pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Uniformly random outputs.
    Uniform,
    /// Mostly the hot outputs.
    HotSpot,
    /// Every input requests every slot, rotating.
    Backlog,
    /// Bursts to one output per input.
    Burst,
    /// Input `i` requests outputs `>= i`.
    Triangle,
    /// Nothing.
    Idle,
}

/// One phase of traffic.
#[derive(Clone, Debug)]
pub struct Phase {
    /// The pattern.
    pub pattern: Pattern,
    /// Cycles (left, in the generator).
    pub len: u32,
    /// Request probability per input and slot, percent.
    pub p_req: u32,
    /// SRQ probability per input and slot, percent.
    pub p_spec: u32,
    /// Hot outputs.
    pub hot: Vec<usize>,
    /// Credit return probability per output and slot, percent.
    pub p_ret: u32,
    /// Largest return per output and slot.
    pub ret_max: u64,
}

/// Configurations for variant `p`.
pub fn config_strategy(p: &ArbiterParams, illegal: bool) -> BoxedStrategy<ArbiterConfig> {
    let n = p.n as u8;
    let recv = prop_oneof![
        3 => Just(1u8),
        3 => Just(2u8),
        2 => 3u8..=8,
        1 => Just(n.saturating_sub(1).max(1)),
        1 => Just(n),
        1 => Just(127u8),
        1 => 1u8..=127,
    ];
    // Up to the most the variant's slot holds (min(8, K - 1); 8 with K = 1).
    let most = p.max_iter() as u8;
    let iters = prop_oneof![
        3 => Just(1u8),
        2 => Just(most),
        3 => 1u8..=most,
    ];
    let delay = prop_oneof![
        3 => Just(0u8),
        2 => Just(1u8),
        3 => 2u8..=8,
        1 => Just(127u8),
        1 => 0u8..=127,
    ];
    let bad = if illegal {
        prop_oneof![
            20 => Just(None),
            1 => Just(Some((0u8, 1u8))),
            1 => Just(Some((2u8, 0u8))),
            1 => (most + 1..=15).prop_map(|it| Some((2u8, it))),
        ]
        .boxed()
    } else {
        Just(None).boxed()
    };
    let crd = prop_oneof![
        3 => Just(0u16),
        1 => Just(1u16),
        2 => 2u16..=8,
        1 => 9u16..=64,
        1 => Just(1023u16),
    ];
    (recv, iters, proptest::bool::weighted(0.9), delay, bad, crd)
        .prop_map(|(r, it, stx, d, bad, crd)| {
            let (r, it) = bad.unwrap_or((r, it));
            ArbiterConfig {
                cfg_recv_i: u7::new(r),
                cfg_iter_i: u4::new(it),
                cfg_stx_en_i: stx,
                cfg_xbar_delay_i: u7::new(d),
                cfg_crd_i: crd,
            }
        })
        .boxed()
}

/// True with probability `pct` percent (no draw for 0 and 100).
#[inline]
fn pct(r: &mut rng::Rng, pct: u32) -> bool {
    match pct {
        0 => false,
        100.. => true,
        _ => r.below(100) < pct as u64,
    }
}

/// The arbiter's traffic, one cycle at a time.
///
/// Phases of 40 to 359 cycles (200 on average, as the whole-run strategy
/// gave a default run of 1000 to 1500 cycles in 6 phases), each drawn when
/// the previous one ends: a [`Pattern`] (weights: uniform 3, hot spot 4,
/// backlog 2, burst 2, triangle 2, idle 1: the triangle's long iSLIP chains
/// are what reach the seventh and eighth iterations at N = 64), request and SRQ rates per input
/// and slot (100% or 0% 1 time in 6 each, else 0..=100%) and one to three
/// hot outputs. One reset in about 2000 cycles. Open loop: the traffic does
/// not look at the model.
pub struct ArbiterGen {
    p: ArbiterParams,
    rng: rng::Rng,
    /// Cycles since the start (resets included): the slot of the rotating
    /// patterns.
    t: u64,
    /// The current phase (`len`: the cycles left in it).
    ph: Phase,
    /// Last sequence number per input.
    seq: Vec<u16>,
    /// Current burst per input: (output, requests left).
    burst: Vec<(usize, u32)>,
    /// Every input zero: each cycle starts from it (`clone_from` keeps the
    /// vectors' allocations).
    zero: ArbiterInputs,
}

impl ArbiterGen {
    /// The generator for variant `p` from `seed` (the configuration does not
    /// shape the traffic).
    pub fn new(p: &ArbiterParams, _cfg: &ArbiterConfig, seed: u64) -> Self {
        ArbiterGen {
            p: *p,
            rng: rng::Rng::new(seed, 0x617262),
            t: 0,
            ph: Phase {
                pattern: Pattern::Idle,
                len: 0,
                p_req: 0,
                p_spec: 0,
                hot: Vec::with_capacity(3),
                p_ret: 0,
                ret_max: 1,
            },
            seq: vec![0; p.n],
            burst: vec![(0, 0); p.n],
            zero: ArbiterInputs::idle(p),
        }
    }

    /// The current phase.
    pub fn phase(&self) -> &Phase {
        &self.ph
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        let n = self.p.n as u64;
        let ph = &mut self.ph;
        ph.pattern = [
            Pattern::Uniform,
            Pattern::HotSpot,
            Pattern::Backlog,
            Pattern::Burst,
            Pattern::Triangle,
            Pattern::Idle,
        ][r.weighted(&[3, 4, 2, 2, 2, 1])];
        ph.len = (r.range(1, 8) * 40 + r.below(40)) as u32;
        let rate = |r: &mut rng::Rng| match r.weighted(&[1, 1, 4]) {
            0 => 100,
            1 => 0,
            _ => r.range(0, 100) as u32,
        };
        ph.p_req = rate(r);
        ph.p_spec = rate(r);
        ph.p_ret = rate(r);
        ph.ret_max = [1, 1, 2, 3][r.below(4) as usize];
        ph.hot.clear();
        for _ in 0..r.range(1, 3) {
            ph.hot.push(r.below(n) as usize);
        }
    }
}

impl Generator<Arbiter> for ArbiterGen {
    fn next(&mut self, _: &Arbiter, _: &ArbiterOutputs, i: &mut ArbiterInputs) -> Step {
        if self.ph.len == 0 {
            self.new_phase();
        }
        self.ph.len -= 1;
        let t = self.t as usize;
        self.t += 1;
        let n = self.p.n;
        let r = &mut self.rng;
        let ph = &self.ph;
        if r.below(2000) == 0 {
            return Step::Reset;
        }
        i.clone_from(&self.zero);
        for j in 0..n {
            if pct(r, ph.p_ret) {
                i.crd_ret_i[j] = r.range(1, ph.ret_max) as u8;
            }
        }
        if ph.pattern == Pattern::Idle {
            return Step::Drive;
        }
        // One of the hot outputs, drawn only where the pattern uses it.
        let hot = |r: &mut rng::Rng| ph.hot[r.below(ph.hot.len() as u64) as usize] % n;
        for inp in 0..n {
            let pick = |r: &mut rng::Rng| -> usize {
                match ph.pattern {
                    Pattern::HotSpot if pct(r, 80) => hot(r),
                    Pattern::Triangle => inp + t % (n - inp),
                    _ => r.below(n as u64) as usize,
                }
            };
            let req = match ph.pattern {
                Pattern::Backlog => Some((t + inp * 3) % n),
                Pattern::Burst => {
                    let b = &mut self.burst[inp];
                    if b.1 == 0 {
                        let tgt = if pct(r, 60) {
                            hot(r)
                        } else {
                            r.below(n as u64) as usize
                        };
                        *b = (tgt, 1 + r.below(32) as u32);
                    }
                    b.1 -= 1;
                    pct(r, ph.p_req).then_some(b.0)
                }
                _ => pct(r, ph.p_req).then(|| pick(r)),
            };
            if let Some(j) = req {
                i.request(inp, j);
            }
            if pct(r, ph.p_spec) {
                let j = if ph.pattern == Pattern::Burst {
                    self.burst[inp].0
                } else {
                    pick(r)
                };
                // Mostly consecutive sequence numbers, sometimes any.
                let s = if pct(r, 90) {
                    self.seq[inp] = self.seq[inp].wrapping_add(1);
                    self.seq[inp]
                } else {
                    r.u64() as u16
                };
                i.speculate(inp, j, s);
            }
        }
        Step::Drive
    }
}

impl Bench for Arbiter {
    fn scenarios() -> Vec<crate::Scenario<Arbiter>> {
        vec![
            crate::Scenario {
                name: "fig2a-out-of-order",
                about: "seed 004 Fig. 2(a): a speculative cell collides with an arbitrated one and is lost; the next wins and waits in the RSQ",
                build: || scenario::fig2(&scenario::FIG2A, 60, 8),
                check: Some(scenario::fig2a_outcome),
            },
            crate::Scenario {
                name: "fig2b-duplicate",
                about: "seed 004 Fig. 2(b): a grant arrives before the ACK and sends a cell twice; the duplicate is dropped",
                build: || scenario::fig2(&scenario::FIG2B, 50, 8),
                check: Some(scenario::fig2b_outcome),
            },
            crate::Scenario {
                name: "fig2c-wasted-grant",
                about: "seed 004 Fig. 2(c): a speculative cell succeeds, its grant finds the VOQ empty",
                build: || scenario::fig2(&scenario::FIG2C, 30, 8),
                check: Some(scenario::fig2c_outcome),
            },
            crate::Scenario {
                name: "fig2d-spurious-grant",
                about: "seed 004 Fig. 2(d): a later cell goes on the earlier cell's grant",
                build: || scenario::fig2(&scenario::FIG2D, 40, scenario::FIG2D_B_RTX),
                check: Some(scenario::fig2d_outcome),
            },
            crate::Scenario {
                name: "iterations-limit",
                about: "configuration boundary: iSLIP iterations = 9 (one more than the 8 the RTL holds) is flagged and grants nothing",
                build: scenario::iterations_limit,
                check: Some(scenario::flagged_grants_nothing),
            },
            crate::Scenario {
                name: "stx-collisions",
                about: "seed 004 R1-R8: STX vs arbitrated (R - 1 left) and STX vs STX (LFSR winners), N = 8, R = 2",
                build: scenario::collisions,
                check: Some(scenario::collisions_resolved),
            },
        ]
    }

    fn config_strategy(p: &ArbiterParams, illegal: bool) -> BoxedStrategy<ArbiterConfig> {
        config_strategy(p, illegal)
    }
    const GENERATOR_VERSION: u32 = 3;
    type Gen = ArbiterGen;
    fn generator(p: &ArbiterParams, cfg: &ArbiterConfig, seed: u64) -> ArbiterGen {
        ArbiterGen::new(p, cfg, seed)
    }
}

/// Directed scenarios of seed 004: the Fig. 2 cases, played by the STX
/// system (N = 4, R = 1, RTT = 8) around the golden arbiter, whose inputs
/// are recorded slot by slot; and the collision rules on the block alone.
pub mod scenario {
    use super::*;
    use model::stim::Stimulus;
    use model::Block;
    use studies::stx_system::traffic::Script;
    use studies::stx_system::{arbiter_setup, Config, ModelArbiter, SwitchArbiter, System};

    /// Fig. 2(a): arrivals `(slot, input, output)` (the system's test
    /// `fig2a_out_of_order_delivery` tells the story).
    pub const FIG2A: [(u64, usize, usize); 4] = [(0, 1, 0), (1, 1, 0), (8, 0, 0), (10, 0, 0)];
    /// Fig. 2(b).
    pub const FIG2B: [(u64, usize, usize); 3] = [(0, 0, 1), (1, 0, 1), (8, 0, 0)];
    /// Fig. 2(c).
    pub const FIG2C: [(u64, usize, usize); 1] = [(0, 0, 1)];
    /// Fig. 2(d), with RTX queues of one entry ([`FIG2D_B_RTX`]): B waits
    /// in its VOQ for A's grant.
    pub const FIG2D: [(u64, usize, usize); 2] = [(0, 0, 1), (7, 0, 1)];
    /// The RTX queue size of the Fig. 2(d) case.
    pub const FIG2D_B_RTX: usize = 1;

    /// The golden arbiter, recording its inputs.
    struct Recorder {
        arb: ModelArbiter,
        cycles: Vec<Cycle<ArbiterInputs>>,
    }

    impl SwitchArbiter for Recorder {
        fn step_into(&mut self, i: &ArbiterInputs, o: &mut ArbiterOutputs) {
            Block::step_into(&mut self.arb, i, o);
            self.cycles.push(Cycle::Drive(i.clone()));
        }
    }

    /// The system configuration of the Fig. 2 cases: N = 4, R = 1, RTT = 8,
    /// STX, `B_RTX` entries per RTX queue (8, or 1 for Fig. 2(d)).
    pub fn fig2_config(b_rtx: usize) -> Config {
        let mut cfg = Config::new(4, 1, 8, true);
        cfg.b_rtx = b_rtx;
        cfg
    }

    /// The arbiter's stimulus of a Fig. 2 case: `arrivals` into the system
    /// of [`fig2_config`] for `slots` slots.
    pub fn fig2(arrivals: &[(u64, usize, usize)], slots: u64, b_rtx: usize) -> Stimulus<Arbiter> {
        let cfg = fig2_config(b_rtx);
        let (p, c) = arbiter_setup(&cfg);
        let rec = Recorder {
            arb: ModelArbiter::new(&p, &c),
            cycles: Vec::new(),
        };
        let mut sys = System::new(cfg, rec);
        sys.run(&mut Script::new(arrivals), slots);
        Stimulus {
            generated: None,
            params: p,
            config: c,
            cycles: sys.arbiter().cycles.clone(),
            seed: 0xf162,
        }
    }

    /// The first illegal iteration count of the default variant (N = 4, K =
    /// 8: `cfg_iter_i = K`, one more than the slot's clocks but the last) under saturating requests and a speculative cell every slot: the
    /// arbiter flags `cfg_err_o` and grants and acknowledges nothing.
    pub fn iterations_limit() -> Stimulus<Arbiter> {
        let p = Arbiter::variants()[0];
        let traffic = |cycles: &mut Vec<Cycle<ArbiterInputs>>| {
            for t in 0..40u16 {
                let mut i = ArbiterInputs::idle(&p);
                for a in 0..p.n {
                    i.request(a, (a + t as usize) % p.n);
                }
                i.speculate(0, 1, t);
                cycles.push(Cycle::Drive(i));
            }
        };
        let mut cycles = Vec::new();
        traffic(&mut cycles);
        Stimulus {
            generated: None,
            params: p,
            config: ArbiterConfig::new(2, p.max_iter() as u8 + 1, true, 2),
            cycles,
            seed: 0x17e9,
        }
    }

    /// Slot `t` of the collision pattern (N = 8): input 0 requests output 0;
    /// inputs 1..3 speculate to output 0, 4..6 to output 1, 7 to output 2,
    /// input `a` with sequence number `100 a + t`.
    pub fn collision_inputs(p: &ArbiterParams, t: u16) -> ArbiterInputs {
        let mut i = ArbiterInputs::idle(p);
        i.request(0, 0);
        for a in 1..8 {
            let j = match a {
                1..=3 => 0,
                4..=6 => 1,
                _ => 2,
            };
            i.speculate(a, j, 100 * a as u16 + t);
        }
        i
    }

    /// Collisions on the block: N = 8, R = 2, crossbar delay 3. Input 0
    /// requests output 0 every slot (granted, arbitrated at output 0 from
    /// slot 3 on); inputs 1..3 speculate to output 0 (STX vs arbitrated:
    /// R - 1 = 1 winner once the arbitrated cell is there, 2 before), 4..6
    /// to output 1 (STX vs STX: 2 of 3 win), 7 to output 2 (alone, wins).
    pub fn collisions() -> Stimulus<Arbiter> {
        let p = Arbiter::variants()
            .into_iter()
            .find(|v| v.n == 8)
            .expect("an N = 8 variant");
        let c = ArbiterConfig::new(2, 1, true, 3);
        let cycles = (0..40u16)
            .map(|t| Cycle::Drive(collision_inputs(&p, t)))
            .collect();
        Stimulus {
            generated: None,
            params: p,
            config: c,
            cycles,
            seed: 0xc011,
        }
    }

    /// What the arbiter's ports show in a Fig. 2 case, slot by slot (the
    /// system's test of the same name tells the whole story; a slot is a
    /// cycle here).
    pub struct Fig2Outcome {
        /// Every grant: (slot, input, output).
        pub grants: &'static [(usize, usize, usize)],
        /// Every ACK: (slot, input, sequence number echoed).
        pub acks: &'static [(usize, usize, u16)],
        /// Every speculative request that lost (no ACK): (slot, input).
        pub lost: &'static [(usize, usize)],
        /// Every arbitrated cell in the crossbar (a grant of slot `t - 8`):
        /// (slot, output, input).
        pub xbar: &'static [(usize, usize, usize)],
    }

    /// Fig. 2(a) at the arbiter: X and Y of input 1 win speculatively at
    /// output 0 (slots 4, 5) and are granted; X's grant brings Y again, an
    /// arbitrated cell at output 0 in slot 12, and Y's own grant reserves
    /// slot 13; A (input 0, seq 0) speculates in slot 12, collides with it
    /// (R = 1) and is lost; B (seq 1) wins in slot 14; A and B's grants
    /// (12, 14) bring A's retransmission and an unused reservation in
    /// slots 20 and 22.
    pub const FIG2A_OUTCOME: Fig2Outcome = Fig2Outcome {
        grants: &[(4, 1, 0), (5, 1, 0), (12, 0, 0), (14, 0, 0)],
        acks: &[(4, 1, 0), (5, 1, 1), (14, 0, 1)],
        lost: &[(12, 0)],
        xbar: &[(12, 0, 1), (13, 0, 1), (20, 0, 0), (22, 0, 0)],
    };
    /// Fig. 2(b) at the arbiter: P and Q (input 0, output 1) win
    /// speculatively (slots 4, 5) and are granted; A (output 0) is granted
    /// in slot 12 and acknowledged only in slot 13 (its speculative copy
    /// went a slot late, the link being busy): the grant came first, so A's
    /// second copy is an arbitrated cell at output 0 in slot 20.
    pub const FIG2B_OUTCOME: Fig2Outcome = Fig2Outcome {
        grants: &[(4, 0, 1), (5, 0, 1), (12, 0, 0)],
        acks: &[(4, 0, 0x4000), (5, 0, 0x4001), (13, 0, 0)],
        lost: &[],
        xbar: &[(12, 1, 0), (13, 1, 0), (20, 0, 0)],
    };
    /// Fig. 2(c) at the arbiter: A (input 0, output 1) wins speculatively
    /// and is granted in slot 4; the grant's reservation at output 1 in
    /// slot 12 is the wasted grant (A has gone).
    pub const FIG2C_OUTCOME: Fig2Outcome = Fig2Outcome {
        grants: &[(4, 0, 1)],
        acks: &[(4, 0, 0x4000)],
        lost: &[],
        xbar: &[(12, 1, 0)],
    };
    /// Fig. 2(d) at the arbiter: A wins speculatively and is granted in
    /// slot 4; B (same VOQ) only requests, granted in slot 11; A's grant
    /// carries B to output 1 in slot 12 (spurious), B's own grant
    /// reserves slot 19 (wasted).
    pub const FIG2D_OUTCOME: Fig2Outcome = Fig2Outcome {
        grants: &[(4, 0, 1), (11, 0, 1)],
        acks: &[(4, 0, 0x4000)],
        lost: &[],
        xbar: &[(12, 1, 0), (19, 1, 0)],
    };

    /// Checks `outs` against `want`: the grants, ACKs, lost speculative
    /// requests and arbitrated crossbar cells are exactly the listed ones.
    pub fn fig2_outcome(
        s: &Stimulus<Arbiter>,
        outs: &[ArbiterOutputs],
        want: &Fig2Outcome,
    ) -> Result<(), String> {
        let n = s.params.n;
        let (mut grants, mut acks, mut lost, mut xbar) = (vec![], vec![], vec![], vec![]);
        for (t, (c, o)) in s.cycles.iter().zip(outs).enumerate() {
            let Cycle::Drive(i) = c else {
                return Err(format!("a reset in slot {t}"));
            };
            for a in 0..n {
                if o.gnt_valid_o[a] {
                    grants.push((t, a, o.gnt_out_o[a] as usize));
                }
                if o.ack_valid_o[a] {
                    acks.push((t, a, o.ack_seq_o[a]));
                    crate::ensure_eq!(
                        o.ack_seq_o[a],
                        i.spec_seq_i[a],
                        "slot {t}: input {a}'s ACK's sequence number"
                    );
                } else if i.spec_valid_i[a] {
                    lost.push((t, a));
                }
            }
            for j in 0..n {
                if o.xb_arb_o[j] {
                    xbar.push((t, j, o.xb_mask_o[j].trailing_zeros() as usize));
                }
            }
        }
        crate::ensure_eq!(grants, want.grants, "grants (slot, input, output)");
        crate::ensure_eq!(acks, want.acks, "ACKs (slot, input, seq)");
        crate::ensure_eq!(lost, want.lost, "lost speculative requests (slot, input)");
        crate::ensure_eq!(
            xbar,
            want.xbar,
            "arbitrated cells in the crossbar (slot, output, input)"
        );
        Ok(())
    }

    /// Scenario check of Fig. 2(a): [`FIG2A_OUTCOME`].
    pub fn fig2a_outcome(s: &Stimulus<Arbiter>, o: &[ArbiterOutputs]) -> Result<(), String> {
        fig2_outcome(s, o, &FIG2A_OUTCOME)
    }
    /// Scenario check of Fig. 2(b): [`FIG2B_OUTCOME`].
    pub fn fig2b_outcome(s: &Stimulus<Arbiter>, o: &[ArbiterOutputs]) -> Result<(), String> {
        fig2_outcome(s, o, &FIG2B_OUTCOME)
    }
    /// Scenario check of Fig. 2(c): [`FIG2C_OUTCOME`].
    pub fn fig2c_outcome(s: &Stimulus<Arbiter>, o: &[ArbiterOutputs]) -> Result<(), String> {
        fig2_outcome(s, o, &FIG2C_OUTCOME)
    }
    /// Scenario check of Fig. 2(d): [`FIG2D_OUTCOME`].
    pub fn fig2d_outcome(s: &Stimulus<Arbiter>, o: &[ArbiterOutputs]) -> Result<(), String> {
        fig2_outcome(s, o, &FIG2D_OUTCOME)
    }

    /// Scenario check of [`iterations_limit`]: `cfg_err_o` in every slot;
    /// no grant, no ACK, nothing in the crossbar, no pointer moved; the
    /// requests are still counted (every VOQ has its `t / 4` or so: `t`
    /// requests in all at the start of slot `t`, none saturated), and the
    /// LFSR steps every slot.
    pub fn flagged_grants_nothing(
        s: &Stimulus<Arbiter>,
        outs: &[ArbiterOutputs],
    ) -> Result<(), String> {
        for (t, o) in outs.iter().enumerate() {
            crate::ensure!(o.cfg_err_o, "slot {t}: no cfg_err_o");
            crate::ensure!(
                !o.gnt_valid_o.iter().any(|&v| v)
                    && !o.ack_valid_o.iter().any(|&v| v)
                    && o.xb_mask_o.iter().all(|&m| m == 0)
                    && o.gptr_o.iter().chain(&o.aptr_o).all(|&p| p == 0),
                "slot {t}: a grant, an ACK, a crossbar connection or a pointer moved"
            );
            let total: u64 = o.voq_cnt_o.iter().map(|&c| c as u64).sum();
            crate::ensure_eq!(
                total,
                (s.params.n * t) as u64,
                "requests counted at the start of slot {t}"
            );
            crate::ensure!(
                t == 0 || o.lfsr_o != outs[t - 1].lfsr_o,
                "slot {t}: the LFSR did not step"
            );
        }
        Ok(())
    }

    /// Scenario check of [`collisions`] (N = 8, R = 2, D = 3), slot by
    /// slot: input 0 is granted output 0 every slot, and is output 0's
    /// arbitrated cell from slot 3 on; at output 0 (inputs 1..3) 2 of the
    /// 3 speculative cells win before slot 3 and R - 1 = 1 after; at output
    /// 1 (inputs 4..6) 2 of 3 win; input 7, alone at output 2, always wins;
    /// the winners are the spec's cyclic window of `cap` requesters from
    /// `m = (r_j k) >> 16`, `r_j = lfsr[15:0] ^ (j x 0x9E37)` (the
    /// slot's `lfsr_o`); every ACK echoes its sequence number; each
    /// output's receive mask is its arbitrated input and its winners.
    pub fn collisions_resolved(
        s: &Stimulus<Arbiter>,
        outs: &[ArbiterOutputs],
    ) -> Result<(), String> {
        let groups: [(usize, &[usize]); 3] = [(0, &[1, 2, 3]), (1, &[4, 5, 6]), (2, &[7])];
        for (t, (c, o)) in s.cycles.iter().zip(outs).enumerate() {
            let Cycle::Drive(i) = c else {
                return Err(format!("a reset in slot {t}"));
            };
            crate::ensure!(
                o.gnt_valid_o[0] && o.gnt_out_o[0] == 0,
                "slot {t}: input 0 not granted output 0"
            );
            for &(j, req) in &groups {
                let arb = o.xb_arb_o[j];
                crate::ensure_eq!(
                    arb,
                    j == 0 && t >= 3,
                    "slot {t}: output {j} holds an arbitrated cell"
                );
                let cap = if arb { 1 } else { 2 }.min(req.len());
                let k = req.len();
                let r = (o.lfsr_o as u16) ^ ((j as u32 * model::arbiter::OUT_HASH) as u16);
                let m = (r as usize * k) >> 16;
                let winners: Vec<usize> = if k <= cap {
                    req.to_vec()
                } else {
                    let mut w: Vec<usize> = (0..cap).map(|x| req[(m + x) % k]).collect();
                    w.sort();
                    w
                };
                let got: Vec<usize> = req.iter().copied().filter(|&a| o.ack_valid_o[a]).collect();
                crate::ensure_eq!(got, winners, "slot {t}: the winners at output {j}");
                for &a in &got {
                    crate::ensure_eq!(
                        o.ack_seq_o[a],
                        i.spec_seq_i[a],
                        "slot {t}: input {a}'s ACK's sequence number"
                    );
                }
                let mask = got.iter().fold(u64::from(arb), |m, &a| m | 1 << a);
                crate::ensure_eq!(o.xb_mask_o[j], mask, "slot {t}: output {j}'s receive mask");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod gen_tests {
    use super::*;
    use crate::gen_check;
    use model::{Block, PortGroup};

    #[test]
    fn generator_is_deterministic() {
        for seed in [1, 7, 0xdead_beef] {
            gen_check::deterministic::<Arbiter>(seed, 2000);
        }
        gen_check::writes_every_field::<Arbiter>(5, 5000);
    }

    #[test]
    fn generator_prefix_is_stable() {
        for seed in [3, 11] {
            gen_check::prefix_stable::<Arbiter>(seed, 500, 3000);
        }
    }

    /// Over a few seeds and 20 000 cycles per variant, the traffic reaches
    /// every coverage bin the whole-run strategy reached (all but the
    /// configuration error, which legal configurations never raise):
    /// matches in every iSLIP iteration, full matchings, ACKs, STX
    /// collisions of every kind, saturated counters and dropped requests;
    /// and resets.
    #[test]
    fn traffic_exercises_the_block() {
        let (mut grants, mut acks, mut srqs, mut drops) = (0u64, 0u64, 0u64, 0u64);
        let (hits, resets) =
            gen_check::exercise::<Arbiter>(&[1, 2, 3, 4, 5, 6], 20_000, |_, i, o| {
                grants += o.matching_size() as u64;
                acks += o.ack_valid_o.iter().filter(|&&v| v).count() as u64;
                srqs += i.spec_valid_i.iter().filter(|&&v| v).count() as u64;
                drops += o.req_drop_o.iter().filter(|&&v| v).count() as u64;
            });
        assert!(grants > 1000, "{grants} grants");
        assert!(srqs > 1000, "{srqs} speculative requests");
        assert!(acks > 1000, "{acks} ACKs");
        assert!(acks < srqs, "every SRQ acknowledged: no collision");
        assert!(drops > 0, "no request dropped");
        assert!(resets > 0, "no reset");
        let missed = gen_check::missed::<Arbiter>(&hits, &["config_error"]);
        assert!(missed.is_empty(), "bins never hit: {missed:?}");
    }

    /// Phases end and new ones are drawn, every pattern among them; each
    /// phase's length is within its range.
    #[test]
    fn phases_follow_one_another() {
        let p = Arbiter::variants()[1];
        let cfg = Arbiter::default_config(&p);
        let mut g = ArbiterGen::new(&p, &cfg, 5);
        let m = Arbiter::new(&p, &cfg);
        let last = ArbiterOutputs::zero(&p);
        let mut i = ArbiterInputs::zero(&p);
        let (mut phases, mut patterns) = (0, Vec::new());
        for _ in 0..20_000 {
            let before = g.phase().len;
            g.next(&m, &last, &mut i);
            if g.phase().len >= before {
                phases += 1;
                assert!((39..359).contains(&g.phase().len), "{:?}", g.phase());
                if !patterns.contains(&g.phase().pattern) {
                    patterns.push(g.phase().pattern);
                }
            }
        }
        assert!(phases > 20_000 / 360, "{phases} phases");
        assert_eq!(patterns.len(), 6, "{patterns:?}");
    }

    /// `cargo test --release -p testbenches --lib -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn generator_speed() {
        gen_check::speed::<Arbiter>(1_000_000);
    }
}
