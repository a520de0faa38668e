//! Stimulus for the OSMOSIS crossbar arbiter (`docs/arbiter.md`).
//!
//! Configurations cover every runtime field with the edges on purpose:
//! R = 1 (every SRQ loses to an arbitrated cell), R = 2 (OSMOSIS), R = N - 1,
//! N and 127 (never a collision); 1 and 8 iterations; STX off; crossbar
//! delays 0, 1 and 127.
//!
//! Traffic comes in phases, each with its own pattern, request and SRQ
//! rates and hot outputs. The patterns are drawn by proptest; the cycles of
//! a phase are expanded from a drawn seed by a small PRNG (so that a run of
//! 64 ports x 1500 cycles is cheap to generate; the lockstep harness shrinks
//! the concrete cycles of a failure). Patterns:
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

use crate::Bench;
use arbitrary_int::{u4, u7};
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterParams, MAX_ITER};
use model::stim::Cycle;
use model::PortGroup;
use proptest::prelude::*;
use std::ops::RangeInclusive;

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
    /// Relative length.
    pub weight: u32,
    /// Request probability per input and slot, percent.
    pub p_req: u32,
    /// SRQ probability per input and slot, percent.
    pub p_spec: u32,
    /// Hot outputs.
    pub hot: Vec<usize>,
    /// Seed of the cycle expansion.
    pub seed: u64,
}

/// SplitMix64: a tiny deterministic PRNG for the cycle expansion.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// True with probability `pct` percent.
    pub fn pct(&mut self, pct: u32) -> bool {
        self.next_u64() % 100 < pct as u64
    }
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
    let iters = prop_oneof![
        3 => Just(1u8),
        2 => Just(MAX_ITER as u8),
        3 => 1u8..=MAX_ITER as u8,
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
            1 => (9u8..=15).prop_map(|it| Some((2u8, it))),
        ]
        .boxed()
    } else {
        Just(None).boxed()
    };
    (recv, iters, proptest::bool::weighted(0.9), delay, bad)
        .prop_map(|(r, it, stx, d, bad)| {
            let (r, it) = bad.unwrap_or((r, it));
            ArbiterConfig {
                cfg_recv_i: u7::new(r),
                cfg_iter_i: u4::new(it),
                cfg_stx_en_i: stx,
                cfg_xbar_delay_i: u7::new(d),
            }
        })
        .boxed()
}

fn phase_strategy(n: usize) -> impl Strategy<Value = Phase> {
    let pattern = prop_oneof![
        3 => Just(Pattern::Uniform),
        4 => Just(Pattern::HotSpot),
        2 => Just(Pattern::Backlog),
        2 => Just(Pattern::Burst),
        1 => Just(Pattern::Triangle),
        1 => Just(Pattern::Idle),
    ];
    let rate = prop_oneof![1 => Just(100u32), 1 => Just(0u32), 4 => 0u32..=100];
    (
        pattern,
        1u32..=8,
        rate.clone(),
        rate,
        proptest::collection::vec(0..n, 1..=3),
        any::<u64>(),
    )
        .prop_map(|(pattern, weight, p_req, p_spec, hot, seed)| Phase {
            pattern,
            weight,
            p_req,
            p_spec,
            hot,
            seed,
        })
}

/// Expands `phases` into `total` concrete cycles for `N = p.n`.
pub fn expand(p: &ArbiterParams, phases: &[Phase], total: usize) -> Vec<Cycle<ArbiterInputs>> {
    let n = p.n;
    let weight: u32 = phases.iter().map(|ph| ph.weight).sum::<u32>().max(1);
    let mut out = Vec::with_capacity(total);
    let mut seq = vec![0u16; n];
    let mut burst: Vec<(usize, u32)> = vec![(0, 0); n];
    let mut left = total;
    for (k, ph) in phases.iter().enumerate() {
        let len = if k + 1 == phases.len() {
            left
        } else {
            (total * ph.weight as usize / weight as usize).min(left)
        };
        left -= len;
        let mut rng = Rng::new(ph.seed);
        let t0 = out.len();
        for t in 0..len {
            if rng.below(2000) == 0 {
                out.push(Cycle::Reset);
                continue;
            }
            let mut i = ArbiterInputs::zero(p);
            for inp in 0..n {
                let hot = ph.hot[rng.below(ph.hot.len())] % n;
                let pick = |rng: &mut Rng| -> usize {
                    match ph.pattern {
                        Pattern::Uniform | Pattern::Idle | Pattern::Backlog => rng.below(n),
                        Pattern::HotSpot => {
                            if rng.pct(80) {
                                hot
                            } else {
                                rng.below(n)
                            }
                        }
                        Pattern::Burst => hot,
                        Pattern::Triangle => inp + (t0 + t) % (n - inp),
                    }
                };
                let req = match ph.pattern {
                    Pattern::Idle => None,
                    Pattern::Backlog => Some((t0 + t + inp * 3) % n),
                    Pattern::Burst => {
                        if burst[inp].1 == 0 {
                            let tgt = if rng.pct(60) { hot } else { rng.below(n) };
                            burst[inp] = (tgt, 1 + rng.below(32) as u32);
                        }
                        burst[inp].1 -= 1;
                        rng.pct(ph.p_req).then_some(burst[inp].0)
                    }
                    _ => rng.pct(ph.p_req).then(|| pick(&mut rng)),
                };
                if let Some(j) = req {
                    i.request(inp, j);
                }
                if ph.pattern != Pattern::Idle && rng.pct(ph.p_spec) {
                    let j = if ph.pattern == Pattern::Burst {
                        burst[inp].0
                    } else {
                        pick(&mut rng)
                    };
                    // Mostly consecutive sequence numbers, sometimes any.
                    let s = if rng.pct(90) {
                        seq[inp] = seq[inp].wrapping_add(1);
                        seq[inp]
                    } else {
                        rng.next_u64() as u16
                    };
                    i.speculate(inp, j, s);
                }
            }
            out.push(Cycle::Drive(i));
        }
    }
    out
}

/// Runs of cycles for configuration `cfg`.
pub fn cycles_strategy(
    p: &ArbiterParams,
    _cfg: &ArbiterConfig,
    len: RangeInclusive<usize>,
) -> BoxedStrategy<Vec<Cycle<ArbiterInputs>>> {
    let p = *p;
    let n_phases = (*len.start() / 150).clamp(1, 10);
    (
        len,
        proptest::collection::vec(phase_strategy(p.n), n_phases..=n_phases),
    )
        .prop_map(move |(total, phases)| expand(&p, &phases, total))
        .boxed()
}

impl Bench for Arbiter {
    fn scenarios() -> Vec<crate::Scenario<Arbiter>> {
        vec![
            crate::Scenario {
                name: "fig2a-out-of-order",
                about: "seed 004 Fig. 2(a): a speculative cell collides with an arbitrated one and is lost; the next wins and waits in the RSQ",
                build: || scenario::fig2(&scenario::FIG2A, 60),
            },
            crate::Scenario {
                name: "fig2b-duplicate",
                about: "seed 004 Fig. 2(b): a grant arrives before the ACK and sends a cell twice; the duplicate is dropped",
                build: || scenario::fig2(&scenario::FIG2B, 50),
            },
            crate::Scenario {
                name: "fig2c-wasted-grant",
                about: "seed 004 Fig. 2(c): a speculative cell succeeds, its grant finds the VOQ empty",
                build: || scenario::fig2(&scenario::FIG2C, 30),
            },
            crate::Scenario {
                name: "fig2d-spurious-grant",
                about: "seed 004 Fig. 2(d): a later cell goes on the earlier cell's grant",
                build: || scenario::fig2(&scenario::FIG2D, 40),
            },
            crate::Scenario {
                name: "iterations-limit",
                about: "configuration boundary: iSLIP iterations = 9 (one more than the 8 the RTL holds) is flagged and grants nothing",
                build: scenario::iterations_limit,
            },
            crate::Scenario {
                name: "stx-collisions",
                about: "seed 004 R1-R8: STX vs arbitrated (R - 1 left) and STX vs STX (LFSR winners), N = 8, R = 2",
                build: scenario::collisions,
            },
        ]
    }

    fn config_strategy(p: &ArbiterParams, illegal: bool) -> BoxedStrategy<ArbiterConfig> {
        config_strategy(p, illegal)
    }
    const GENERATOR_VERSION: u32 = 1;
    type Gen = crate::LegacyGen<Arbiter>;
    fn generator(p: &ArbiterParams, cfg: &ArbiterConfig, seed: u64) -> Self::Gen {
        crate::LegacyGen::new(p, cfg, seed, cycles_strategy)
    }
}

/// Directed scenarios of seed 004: the Fig. 2 cases, played by the STX
/// system (N = 4, R = 1, RTT = 8) around the golden arbiter, whose inputs
/// are recorded slot by slot; and the collision rules on the block alone.
pub mod scenario {
    use super::*;
    use model::stim::Stimulus;
    use model::stx_system::traffic::Script;
    use model::stx_system::{
        arbiter_setup, Config, ModelArbiter, SlotArbiter, SlotOutcome, System,
    };
    use model::Block;

    /// Fig. 2(a): arrivals `(slot, input, output)`.
    pub const FIG2A: [(u64, usize, usize); 4] = [(0, 1, 0), (8, 1, 0), (8, 0, 0), (9, 0, 0)];
    /// Fig. 2(b).
    pub const FIG2B: [(u64, usize, usize); 3] = [(0, 0, 1), (1, 0, 1), (8, 0, 0)];
    /// Fig. 2(c).
    pub const FIG2C: [(u64, usize, usize); 1] = [(0, 0, 1)];
    /// Fig. 2(d).
    pub const FIG2D: [(u64, usize, usize); 2] = [(0, 0, 1), (8, 0, 1)];

    /// The golden arbiter, recording its inputs.
    struct Recorder {
        arb: ModelArbiter,
        cycles: Vec<Cycle<ArbiterInputs>>,
    }

    impl SlotArbiter for Recorder {
        fn slot(
            &mut self,
            reqs: &[Option<usize>],
            srqs: &[Option<(usize, u16)>],
            out: &mut SlotOutcome,
        ) {
            self.arb.slot(reqs, srqs, out);
            self.cycles
                .push(Cycle::Drive(self.arb.last_inputs().clone()));
        }
    }

    /// The arbiter's stimulus of a Fig. 2 case: `arrivals` into a system of
    /// N = 4, R = 1, RTT = 8 with STX, for `slots` slots.
    pub fn fig2(arrivals: &[(u64, usize, usize)], slots: u64) -> Stimulus<Arbiter> {
        let cfg = Config::new(4, 1, 8, true);
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

    /// The first illegal iteration count (`cfg_iter_i = MAX_ITER + 1`, N =
    /// 4) under saturating requests and a speculative cell every slot: the
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
            config: ArbiterConfig::new(2, MAX_ITER as u8 + 1, true, 2),
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
}
