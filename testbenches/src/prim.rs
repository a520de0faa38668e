//! Stimulus for the RTL primitives (`rtl/prim_*.v`) as blocks of their own.
//!
//! Each primitive is co-simulated against its model twin (`model::prim`)
//! with a streamed random generator biased towards its edges: an LFSR held
//! and stepped, a timer loaded near 0, at 1 and at its maximum and ticked
//! through its expiry, a counter pushed over both ends and netted at its
//! maximum, an arbiter's requests sparse, dense and all set, a memory
//! written over every word and then read and written at its first and
//! last words, at one word in one cycle, back to back and held.

use crate::rng::Rng;
use crate::Bench;
use model::prim_lfsr::{PrimLfsr, PrimLfsrConfig, PrimLfsrInputs, PrimLfsrOutputs, PrimLfsrParams};
use model::prim_ram_1r1w::{
    PrimRam1r1w, PrimRam1r1wConfig, PrimRam1r1wInputs, PrimRam1r1wOutputs, PrimRam1r1wParams,
};
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

/// The random generator of `prim_ram_1r1w`.
///
/// After every reset (power-on and the ones it issues) it first writes
/// every word once, in address order, reading only words already written
/// (the words have no reset, so a read of a word not written since reset
/// is undefined: `docs/prim_ram_1r1w.md`). Then runs of traffic: random
/// enables, read-write collisions on one word, back-to-back reads, holds
/// (read enable low, often while the word held is rewritten), and the
/// first, last and (where the variant allows them) out-of-range addresses.
/// With `CHECK_ADDR` set an out-of-range address goes only on a port whose
/// enable is low.
#[derive(Clone, Debug)]
pub struct RamGen {
    p: PrimRam1r1wParams,
    rng: Rng,
    /// Words written since the last reset: `0..swept` (the sweep).
    swept: u32,
    /// The current run: its kind, cycles left, write and read
    /// probabilities in percent.
    kind: u8,
    run: u32,
    p_we: u64,
    p_re: u64,
    /// The last read address (the word the read register holds).
    last_read: u32,
}

impl RamGen {
    /// An address in range, the first and the last word often.
    fn word(&mut self) -> u32 {
        let d = self.p.d;
        match self.rng.below(6) {
            0 => 0,
            1 => d - 1,
            _ => self.rng.below(d as u64) as u32,
        }
    }

    /// An address the ports carry but that names no word (`None` when the
    /// depth is a power of two).
    fn beyond(&mut self) -> Option<u32> {
        let top = 1u32 << self.p.aw();
        (self.p.d < top).then(|| self.rng.range(self.p.d as u64, top as u64 - 1) as u32)
    }

    /// An address for an enabled port: out of range now and then where the
    /// variant does not assert on it.
    fn addr(&mut self) -> u32 {
        if !self.p.check_addr && self.rng.below(16) == 0 {
            if let Some(a) = self.beyond() {
                return a;
            }
        }
        self.word()
    }

    /// An address for a disabled port: anything the port carries.
    fn any(&mut self) -> u32 {
        if self.rng.below(4) == 0 {
            if let Some(a) = self.beyond() {
                return a;
            }
        }
        self.word()
    }
}

impl Generator<PrimRam1r1w> for RamGen {
    fn next(&mut self, _: &PrimRam1r1w, _: &PrimRam1r1wOutputs, i: &mut PrimRam1r1wInputs) -> Step {
        if self.rng.below(5000) == 0 {
            self.swept = 0;
            return Step::Reset;
        }
        let w = self.p.w;
        let (mut we, mut wa, mut re, mut ra);
        if self.swept < self.p.d {
            // The sweep: word `swept` now; reads only of words written in
            // an earlier cycle.
            we = true;
            wa = self.swept;
            self.swept += 1;
            re = wa > 0 && self.rng.bool();
            ra = if re {
                self.rng.below(wa as u64) as u32
            } else {
                self.any()
            };
        } else {
            if self.run == 0 {
                self.kind = self.rng.below(5) as u8;
                self.run = self.rng.range(1, 40) as u32;
                self.p_we = self.rng.pick(&[0, 30, 70, 100]);
                self.p_re = self.rng.pick(&[0, 30, 70, 100]);
            }
            self.run -= 1;
            we = self.rng.below(100) < self.p_we;
            re = self.rng.below(100) < self.p_re;
            wa = self.addr();
            ra = self.addr();
            match self.kind {
                // Collisions: a read and a write of one word.
                1 => {
                    we = self.rng.below(8) != 0;
                    re = self.rng.below(8) != 0;
                    ra = wa;
                }
                // Streaming reads, back to back, often of one word.
                2 => {
                    re = true;
                    if self.rng.bool() {
                        ra = self.last_read;
                    }
                }
                // Holds: the read enable low, the word held rewritten.
                3 => {
                    re = false;
                    if self.rng.bool() {
                        wa = self.last_read;
                    }
                }
                // Uniform (0) or edges (4: first and last words on both).
                4 => {
                    wa = if self.rng.bool() { 0 } else { self.p.d - 1 };
                    ra = if self.rng.bool() { 0 } else { self.p.d - 1 };
                }
                _ => {}
            }
            if !we {
                wa = self.any();
            }
            if !re {
                ra = self.any();
            }
        }
        if re && ra < self.p.d {
            self.last_read = ra;
        }
        i.we_i = we;
        i.waddr_i = wa as u16;
        i.wdata_i = edgy(&mut self.rng, w);
        i.re_i = re;
        i.raddr_i = ra as u16;
        Step::Drive
    }
}

impl Bench for PrimRam1r1w {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = RamGen;
    fn generator(p: &PrimRam1r1wParams, _: &PrimRam1r1wConfig, seed: u64) -> RamGen {
        RamGen {
            p: *p,
            rng: Rng::new(seed, 0x7261),
            swept: 0,
            kind: 0,
            run: 0,
            p_we: 0,
            p_re: 0,
            last_read: 0,
        }
    }
    fn scenarios() -> Vec<crate::Scenario<PrimRam1r1w>> {
        vec![
            crate::Scenario {
                name: "read-first",
                about: "D = 12, every word written; a read and a write of one word in one cycle give the old word (words 5, 11, 0), the next read the new one",
                build: scenario::ram_read_first,
                check: Some(scenario::ram_read_first_outcome),
            },
            crate::Scenario {
                name: "hold",
                about: "word 3 read, then re_i low for five cycles while word 3 is rewritten twice and raddr_i moves: rdata_o keeps the word read",
                build: scenario::ram_hold,
                check: Some(scenario::ram_hold_outcome),
            },
            crate::Scenario {
                name: "last-word",
                about: "D = 12 (not a power of two): the last word and word 0 read back; writes to 12..15 change no word, reads of 12..15 leave rdata_o as it was",
                build: scenario::ram_last_word,
                check: Some(scenario::ram_last_word_outcome),
            },
        ]
    }
    fn config_strategy(_: &PrimRam1r1wParams, _: bool) -> BoxedStrategy<PrimRam1r1wConfig> {
        Just(PrimRam1r1wConfig {}).boxed()
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

    /// The default `prim_ram_1r1w` variant (`W = 8`, `D = 12`, no address
    /// assertion: the last scenario drives addresses 12..15).
    fn ram_p() -> PrimRam1r1wParams {
        let p = PrimRam1r1w::variants()[0];
        assert_eq!((p.w, p.d, p.check_addr), (8, 12, false));
        p
    }

    /// One cycle of `prim_ram_1r1w`: `(we, waddr, wdata, re, raddr)`.
    fn ram(we_i: bool, waddr_i: u16, wdata_i: u64, re_i: bool, raddr_i: u16) -> PrimRam1r1wInputs {
        PrimRam1r1wInputs {
            we_i,
            waddr_i,
            wdata_i,
            re_i,
            raddr_i,
        }
    }

    /// Word `a` written with `0x10 + a`, for every word of the default
    /// variant (12 cycles, no read).
    fn ram_sweep() -> Vec<PrimRam1r1wInputs> {
        (0..12)
            .map(|a| ram(true, a, 0x10 + a as u64, false, 0))
            .collect()
    }

    /// Every word written, then a read and a write of one word in one
    /// cycle (word 5, then the last word 11, then word 0), each followed by
    /// a read of the same word.
    pub fn ram_read_first() -> Stimulus<PrimRam1r1w> {
        let mut c = ram_sweep();
        c.extend([
            ram(true, 5, 0xA5, true, 5),
            ram(false, 0, 0, true, 5),
            ram(true, 11, 0xB0, true, 11),
            ram(true, 0, 0xC0, true, 0),
            ram(false, 0, 0, true, 11),
            ram(false, 0, 0, true, 0),
            ram(false, 0, 0, false, 0),
        ]);
        stim(ram_p(), PrimRam1r1wConfig {}, c)
    }

    /// Word 3 read, then the read enable low for five cycles while word 3
    /// is rewritten twice and the read address moves, then word 3 read.
    pub fn ram_hold() -> Stimulus<PrimRam1r1w> {
        let mut c = ram_sweep();
        c.extend([
            ram(false, 0, 0, true, 3),
            ram(false, 0, 0, false, 7),
            ram(true, 3, 0x33, false, 0),
            ram(false, 0, 0, false, 3),
            ram(true, 3, 0x34, false, 11),
            ram(false, 0, 0, false, 5),
            ram(false, 0, 0, true, 3),
            ram(false, 0, 0, false, 0),
        ]);
        stim(ram_p(), PrimRam1r1wConfig {}, c)
    }

    /// `D = 12`: the last word and word 0 read back; writes to 12..15
    /// (with the read enable low), reads of 12 and of 15 (the latter with a
    /// write to 15 in the same cycle), then every word 0..11 read back.
    pub fn ram_last_word() -> Stimulus<PrimRam1r1w> {
        let mut c = ram_sweep();
        c.extend([ram(false, 0, 0, true, 11), ram(false, 0, 0, true, 0)]);
        c.extend((12..16).map(|a| ram(true, a, 0xE0 + a as u64, false, 0)));
        c.extend([ram(false, 0, 0, true, 12), ram(true, 15, 0xFF, true, 15)]);
        c.extend((0..12).map(|a| ram(false, 0, 0, true, a)));
        c.push(ram(false, 0, 0, false, 0));
        stim(ram_p(), PrimRam1r1wConfig {}, c)
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

    /// `read-first`: `rdata_o` per cycle. 0 through the sweep and the first
    /// collision's cycle (nothing read yet); then the old word of each
    /// collision (0x15, 0x1B, 0x10) and, one read later, the new one
    /// (0xA5, then 0xB0 and 0xC0).
    pub fn ram_read_first_outcome(
        _: &Stimulus<PrimRam1r1w>,
        outs: &[PrimRam1r1wOutputs],
    ) -> Result<(), String> {
        let mut want = vec![0u64; 13];
        want.extend([0x15, 0xA5, 0x1B, 0x10, 0xB0, 0xC0]);
        table(outs, &want, |o| o.rdata_o)
    }

    /// `hold`: 0 until the read of word 3 shows (0x13), held for the five
    /// cycles with the read enable low and one more (the cycle of the next
    /// read), though word 3 became 0x33 and then 0x34; then the new word.
    pub fn ram_hold_outcome(
        _: &Stimulus<PrimRam1r1w>,
        outs: &[PrimRam1r1wOutputs],
    ) -> Result<(), String> {
        let mut want = vec![0u64; 13];
        want.extend([0x13; 6]);
        want.push(0x34);
        table(outs, &want, |o| o.rdata_o)
    }

    /// `last-word`: 0 through the sweep; the last word (0x1B) and word 0
    /// (0x10); 0x10 held through the out-of-range writes and reads; then
    /// every word 0..11 as the sweep wrote it (0x10 + a: no write to 12..15
    /// reached a word).
    pub fn ram_last_word_outcome(
        _: &Stimulus<PrimRam1r1w>,
        outs: &[PrimRam1r1wOutputs],
    ) -> Result<(), String> {
        let mut want = vec![0u64; 13];
        want.push(0x1B);
        want.extend([0x10; 7]);
        want.extend((0..12).map(|a| 0x10 + a));
        table(outs, &want, |o| o.rdata_o)
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

#[cfg(test)]
mod tests {
    use crate::gen_check;
    use model::prim_ram_1r1w::PrimRam1r1w;

    /// The memory's generator is a function of its seed, writes every
    /// input field, and its first cycles do not depend on the run's length
    /// (it keeps the sweep's progress and the run's state of its own).
    #[test]
    fn ram_generator_is_deterministic_and_prefix_stable() {
        for seed in [1, 2, 3] {
            gen_check::deterministic::<PrimRam1r1w>(seed, 2000);
            gen_check::prefix_stable::<PrimRam1r1w>(seed, 500, 3000);
        }
        gen_check::writes_every_field::<PrimRam1r1w>(5, 5000);
    }
}
