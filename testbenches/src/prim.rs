//! Stimulus for the RTL primitives (`rtl/prim_*.v`) as blocks of their own.
//!
//! Each primitive is co-simulated against its model twin (`model::prim`)
//! with a streamed random generator biased towards its edges: an LFSR held
//! and stepped, a timer loaded near 0, at 1 and at its maximum and ticked
//! through its expiry, a counter pushed over both ends and netted at its
//! maximum, an arbiter's requests sparse, dense and all set.

use crate::rng::Rng;
use crate::Bench;
use model::prim_lfsr::{PrimLfsr, PrimLfsrConfig, PrimLfsrInputs, PrimLfsrOutputs, PrimLfsrParams};
use model::prim_rr_arb::{
    PrimRrArb, PrimRrArbConfig, PrimRrArbInputs, PrimRrArbOutputs, PrimRrArbParams,
};
use model::prim_sat_cnt::{
    PrimSatCnt, PrimSatCntConfig, PrimSatCntInputs, PrimSatCntOutputs, PrimSatCntParams,
};
use model::prim_timer::{
    PrimTimer, PrimTimerConfig, PrimTimerInputs, PrimTimerOutputs, PrimTimerParams,
};
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::Block;
use proptest::prelude::*;

/// A value of `w` bits near one of the edges (0, 1, max - 1, max) or
/// anywhere.
fn edgy(r: &mut Rng, w: u32) -> u64 {
    let max = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    match r.below(8) {
        0 => 0,
        1 => 1.min(max),
        2 => max.saturating_sub(1),
        3 => max,
        4 => r.below(4) & max,
        _ => r.u64() & max,
    }
}

/// The random generator of `prim_lfsr`: enable on for runs, off for runs.
#[derive(Clone, Debug)]
pub struct LfsrGen {
    rng: Rng,
    run: u32,
    en: bool,
}

impl Generator<PrimLfsr> for LfsrGen {
    fn next(&mut self, _: &PrimLfsr, _: &PrimLfsrOutputs, i: &mut PrimLfsrInputs) -> Step {
        if self.rng.below(5000) == 0 {
            return Step::Reset;
        }
        if self.run == 0 {
            self.en = self.rng.below(4) != 0;
            self.run = self.rng.range(1, 64) as u32;
        }
        self.run -= 1;
        i.en_i = self.en;
        Step::Drive
    }
}

impl Bench for PrimLfsr {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = LfsrGen;
    fn generator(_: &PrimLfsrParams, _: &PrimLfsrConfig, seed: u64) -> LfsrGen {
        LfsrGen {
            rng: Rng::new(seed, 0x6c66),
            run: 0,
            en: false,
        }
    }
    fn scenarios() -> Vec<crate::Scenario<PrimLfsr>> {
        vec![crate::Scenario {
            name: "period-127",
            about: "x^7 + x^6 + 1, 3 steps a cycle: back to the seed after 127 enabled cycles, held every 7th",
            build: scenario::lfsr_period,
            check: Some(scenario::lfsr_period_outcome),
        }]
    }
    fn config_strategy(_: &PrimLfsrParams, _: bool) -> BoxedStrategy<PrimLfsrConfig> {
        Just(PrimLfsrConfig {}).boxed()
    }
}

/// The random generator of `prim_timer`: loads of edge values, tick runs.
#[derive(Clone, Debug)]
pub struct TimerGen {
    w: u32,
    rng: Rng,
    p_tick: u64,
    run: u32,
}

impl Generator<PrimTimer> for TimerGen {
    fn next(&mut self, m: &PrimTimer, _: &PrimTimerOutputs, i: &mut PrimTimerInputs) -> Step {
        let r = &mut self.rng;
        if r.below(5000) == 0 {
            return Step::Reset;
        }
        if self.run == 0 {
            self.p_tick = r.pick(&[0, 50, 90, 100]);
            self.run = r.range(1, 40) as u32;
        }
        self.run -= 1;
        let count = m.state().count_q;
        // Loads mostly when the timer is idle or about to expire.
        let p_load = match count {
            0 => 30,
            1 => 25,
            _ => 3,
        };
        i.load_i = r.below(100) < p_load;
        let v = if r.below(3) == 0 {
            r.range(0, 3)
        } else {
            edgy(r, self.w)
        };
        i.value_i = (v & (u64::MAX >> (64 - self.w))) as u32;
        i.tick_i = r.below(100) < self.p_tick;
        Step::Drive
    }
}

impl Bench for PrimTimer {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = TimerGen;
    fn generator(p: &PrimTimerParams, _: &PrimTimerConfig, seed: u64) -> TimerGen {
        TimerGen {
            w: p.w,
            rng: Rng::new(seed, 0x746d),
            p_tick: 0,
            run: 0,
        }
    }
    fn scenarios() -> Vec<crate::Scenario<PrimTimer>> {
        vec![crate::Scenario {
            name: "load-tick-expire",
            about: "load 2, tick through the expiry and past 0, a load over an expiring tick wins",
            build: scenario::timer,
            check: Some(scenario::timer_outcome),
        }]
    }
    fn config_strategy(_: &PrimTimerParams, _: bool) -> BoxedStrategy<PrimTimerConfig> {
        Just(PrimTimerConfig {}).boxed()
    }
}

/// The random generator of `prim_sat_cnt`: phases of filling, draining and
/// netting, amounts near the edges.
#[derive(Clone, Debug)]
pub struct SatCntGen {
    p: PrimSatCntParams,
    rng: Rng,
    phase: u8,
    run: u32,
}

impl Generator<PrimSatCnt> for SatCntGen {
    fn next(&mut self, m: &PrimSatCnt, _: &PrimSatCntOutputs, i: &mut PrimSatCntInputs) -> Step {
        let r = &mut self.rng;
        if r.below(5000) == 0 {
            return Step::Reset;
        }
        if self.run == 0 {
            self.phase = r.below(4) as u8;
            self.run = r.range(1, 30) as u32;
        }
        self.run -= 1;
        let w = self.p.w;
        let small = |r: &mut Rng| r.range(1, 4) as u32;
        let count = m.state().count_q as u64;
        i.clr_i = r.below(200) == 0;
        (i.inc_i, i.dec_i) = match self.phase {
            // fill, sometimes exactly to the maximum
            0 => {
                let to_max = self.p.max.saturating_sub(count) as u32;
                (if r.below(3) == 0 { to_max } else { small(r) }, 0)
            }
            // drain, sometimes exactly to zero
            1 => (
                0,
                if r.below(3) == 0 {
                    count as u32
                } else {
                    small(r)
                },
            ),
            // net: both at once
            2 => {
                let x = small(r);
                (x, if r.bool() { x } else { small(r) })
            }
            _ => (edgy(r, w) as u32, edgy(r, w) as u32),
        };
        Step::Drive
    }
}

impl Bench for PrimSatCnt {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = SatCntGen;
    fn generator(p: &PrimSatCntParams, _: &PrimSatCntConfig, seed: u64) -> SatCntGen {
        SatCntGen {
            p: *p,
            rng: Rng::new(seed, 0x7363),
            phase: 0,
            run: 0,
        }
    }
    fn scenarios() -> Vec<crate::Scenario<PrimSatCnt>> {
        vec![crate::Scenario {
            name: "net-then-clamp",
            about: "MAX = 200: fill to 200, +5 -5 at the maximum (no clamp), over by one and under zero (clamped), clear",
            build: scenario::sat_cnt,
            check: Some(scenario::sat_cnt_outcome),
        }]
    }
    fn config_strategy(_: &PrimSatCntParams, _: bool) -> BoxedStrategy<PrimSatCntConfig> {
        Just(PrimSatCntConfig {}).boxed()
    }
}

/// The random generator of `prim_rr_arb`: request densities from sparse to
/// all, grants mostly taken.
#[derive(Clone, Debug)]
pub struct RrArbGen {
    n: u32,
    rng: Rng,
    density: u64,
    run: u32,
}

impl Generator<PrimRrArb> for RrArbGen {
    fn next(&mut self, _: &PrimRrArb, _: &PrimRrArbOutputs, i: &mut PrimRrArbInputs) -> Step {
        let r = &mut self.rng;
        if r.below(5000) == 0 {
            return Step::Reset;
        }
        if self.run == 0 {
            self.density = r.pick(&[0, 10, 30, 60, 100]);
            self.run = r.range(1, 50) as u32;
        }
        self.run -= 1;
        let mut req = 0u64;
        for k in 0..self.n {
            if r.below(100) < self.density {
                req |= 1 << k;
            }
        }
        i.req_i = req;
        i.ack_i = r.below(5) != 0;
        Step::Drive
    }
}

impl Bench for PrimRrArb {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = RrArbGen;
    fn generator(p: &PrimRrArbParams, _: &PrimRrArbConfig, seed: u64) -> RrArbGen {
        RrArbGen {
            n: p.n,
            rng: Rng::new(seed, 0x7272),
            density: 0,
            run: 0,
        }
    }
    fn scenarios() -> Vec<crate::Scenario<PrimRrArb>> {
        vec![crate::Scenario {
            name: "all-request",
            about: "N = 5, every requester on: grants 0, 1, 2, 3, 4, 0, ... (the pointer wraps at N, not at 8)",
            build: scenario::rr_all,
            check: Some(scenario::rr_all_outcome),
        }]
    }
    fn config_strategy(_: &PrimRrArbParams, _: bool) -> BoxedStrategy<PrimRrArbConfig> {
        Just(PrimRrArbConfig {}).boxed()
    }
}

/// The directed scenarios of the primitives.
pub mod scenario {
    use super::*;

    fn stim<B: Bench>(p: B::Params, config: B::Config, cycles: Vec<B::Inputs>) -> Stimulus<B> {
        Stimulus {
            generated: None,
            params: p,
            config,
            cycles: cycles.into_iter().map(Cycle::Drive).collect(),
            seed: 1,
        }
    }

    /// The short LFSR variant enabled for 300 cycles except every 7th.
    pub fn lfsr_period() -> Stimulus<PrimLfsr> {
        let p = PrimLfsr::variants()
            .into_iter()
            .find(|p| p.w == 7)
            .expect("w7 variant");
        let c = (0..300)
            .map(|t| PrimLfsrInputs { en_i: t % 7 != 3 })
            .collect();
        stim(p, PrimLfsrConfig {}, c)
    }

    /// Load 2, tick 3 times, load 1 then load 5 over the expiring tick.
    pub fn timer() -> Stimulus<PrimTimer> {
        let i = |load_i, value_i, tick_i| PrimTimerInputs {
            load_i,
            value_i,
            tick_i,
        };
        let mut c = vec![
            i(true, 2, false),
            i(false, 0, true),
            i(false, 0, true),
            i(false, 0, true),
        ];
        c.extend([i(true, 1, false), i(true, 5, true)]);
        c.extend((0..6).map(|_| i(false, 0, true)));
        stim(PrimTimer::variants()[0], PrimTimerConfig {}, c)
    }

    /// The saturating counter's netting and clamping at MAX = 200.
    pub fn sat_cnt() -> Stimulus<PrimSatCnt> {
        let i = |clr_i, inc_i, dec_i| PrimSatCntInputs {
            clr_i,
            inc_i,
            dec_i,
        };
        let mut c = vec![
            i(false, 200, 0),
            i(false, 5, 5),
            i(false, 1, 0),
            i(false, 3, 204),
        ];
        c.extend([i(false, 9, 0), i(true, 9, 0), i(false, 0, 0)]);
        c.extend((0..5).map(|_| i(false, 60, 10)));
        stim(PrimSatCnt::variants()[0], PrimSatCntConfig {}, c)
    }

    /// Every requester of the N = 5 arbiter on, every grant taken.
    pub fn rr_all() -> Stimulus<PrimRrArb> {
        let p = PrimRrArb::variants()[0];
        let all = (1u64 << p.n) - 1;
        let c = (0..3 * p.n)
            .map(|_| PrimRrArbInputs {
                req_i: all,
                ack_i: true,
            })
            .collect();
        stim(p, PrimRrArbConfig {}, c)
    }

    /// The documented outcome of a table of expected outputs, cycle by cycle.
    fn table<O: std::fmt::Debug, T: PartialEq + std::fmt::Debug>(
        outs: &[O],
        want: &[T],
        got: impl Fn(&O) -> T,
    ) -> Result<(), String> {
        if outs.len() != want.len() {
            return Err(format!(
                "{} cycles, the table has {}",
                outs.len(),
                want.len()
            ));
        }
        for (t, (o, w)) in outs.iter().zip(want).enumerate() {
            if got(o) != *w {
                return Err(format!(
                    "cycle {t}: expected {w:?}, got {:?} ({o:?})",
                    got(o)
                ));
            }
        }
        Ok(())
    }

    /// `period-127`: the register shows its seed exactly when the enabled
    /// cycles so far are a multiple of 127 (127 and 254 within 300 cycles,
    /// never before), and never 0.
    pub fn lfsr_period_outcome(
        s: &Stimulus<PrimLfsr>,
        outs: &[PrimLfsrOutputs],
    ) -> Result<(), String> {
        let mut en = 0u32;
        for (t, (c, o)) in s.cycles.iter().zip(outs).enumerate() {
            if o.state_o == 0 {
                return Err(format!("cycle {t}: the register is 0"));
            }
            let at_seed = u64::from(o.state_o) == s.params.seed;
            if at_seed != en.is_multiple_of(127) {
                return Err(format!(
                    "cycle {t}: after {en} enabled cycles the register is {:#x} (seed {:#x})",
                    o.state_o, s.params.seed
                ));
            }
            if let Cycle::Drive(i) = c {
                en += u32::from(i.en_i);
            }
        }
        if en < 254 {
            return Err(format!(
                "only {en} enabled cycles: the period is not shown twice"
            ));
        }
        Ok(())
    }

    /// `load-tick-expire`: (count, running, expire) per cycle: 2 loaded,
    /// expiry on the tick from 1, no wrap below 0, the load of 5 over the
    /// tick from 1 wins (no expiry), then 5 ticks down to an expiry.
    pub fn timer_outcome(_: &Stimulus<PrimTimer>, outs: &[PrimTimerOutputs]) -> Result<(), String> {
        let want = [
            (0, false, false),
            (2, true, false),
            (1, true, true),
            (0, false, false),
            (0, false, false),
            (1, true, false),
            (5, true, false),
            (4, true, false),
            (3, true, false),
            (2, true, false),
            (1, true, true),
            (0, false, false),
        ];
        table(outs, &want, |o| (o.count_o, o.running_o, o.expire_o))
    }

    /// `net-then-clamp`: (count, sat) per cycle with MAX = 200.
    pub fn sat_cnt_outcome(
        s: &Stimulus<PrimSatCnt>,
        outs: &[PrimSatCntOutputs],
    ) -> Result<(), String> {
        if s.params.max != 200 {
            return Err(format!("MAX is {}, the table is for 200", s.params.max));
        }
        let want = [
            (0, false),   // +200
            (200, false), // +5 -5 at the maximum: netted, no clamp
            (200, true),  // +1: over by one, clamped
            (200, true),  // +3 -204: under zero, clamped
            (0, false),   // +9
            (9, false),   // clear (wins over +9)
            (0, false),
            (0, false), // +60 -10 five times
            (50, false),
            (100, false),
            (150, false),
            (200, true),
        ];
        table(outs, &want, |o| (o.count_o, o.sat_o))
    }

    /// `all-request`: with every requester on and every grant taken, the
    /// grant goes round 0, 1, .., N-1, 0, .. and the pointer follows it.
    pub fn rr_all_outcome(
        s: &Stimulus<PrimRrArb>,
        outs: &[PrimRrArbOutputs],
    ) -> Result<(), String> {
        let n = s.params.n as usize;
        let want: Vec<(bool, u8, u64, u8)> = (0..outs.len())
            .map(|t| (true, (t % n) as u8, 1u64 << (t % n), (t % n) as u8))
            .collect();
        table(outs, &want, |o| (o.valid_o, o.idx_o, o.gnt_o, o.ptr_o))
    }
}
