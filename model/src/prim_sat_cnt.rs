//! `rtl/prim_sat_cnt.v` as a block of its own: the [`SatCnt`] twin behind
//! the block interface, co-simulated against its RTL like any block.

use crate::block::{Block, ConfigError, Params};
use crate::prim::SatCnt;

/// The Verilog parameters of `prim_sat_cnt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimSatCntParams {
    /// Counter width (1..=32 verilated).
    pub w: u32,
    /// The largest value (at most `2^W - 1`); `MAX` is 0 for `2^W - 1`.
    pub max: u64,
}

impl Params for PrimSatCntParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        let all = (1u64 << self.w) - 1;
        vec![
            ("W", self.w as u64),
            ("MAX", if self.max == all { 0 } else { self.max }),
        ]
    }
    fn label(&self) -> String {
        format!("w{}max{}", self.w, self.max)
    }
}

crate::port_group! {
    /// No runtime configuration.
    pub struct PrimSatCntConfig<PrimSatCntParams> |p| {}
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct PrimSatCntInputs<PrimSatCntParams> |p| {
        /// Clear at the next edge (wins).
        clr_i: bool = 1,
        /// Amount added at the next edge.
        inc_i: u32 = p.w,
        /// Amount taken away at the next edge.
        dec_i: u32 = p.w,
    }
}

crate::port_group! {
    /// Outputs.
    pub struct PrimSatCntOutputs<PrimSatCntParams> |p| {
        /// The count at the start of the cycle (registered).
        count_o: u32 = p.w,
        /// The exact sum left `0..=MAX` and was clamped (combinational).
        sat_o: bool = 1,
    }
}

crate::port_group! {
    /// Registers.
    pub struct PrimSatCntState<PrimSatCntParams> |p| {
        /// The count.
        count_q: u32 = p.w,
    }
}

crate::coverage_bins! {
    /// Coverage bins of `prim_sat_cnt`.
    pub enum Bin / BINS {
        Clear = "clear",
        SatHigh = "saturate_high",
        SatLow = "saturate_low",
        ExactMax = "reach_exact_max",
        ExactZero = "reach_exact_zero",
        NetBoth = "inc_and_dec_same_cycle",
        NetAtMax = "inc_and_dec_at_max_no_clamp",
    }
}

/// `prim_sat_cnt` as a block.
#[derive(Clone, Debug)]
pub struct PrimSatCnt {
    p: PrimSatCntParams,
    c: SatCnt,
    s: PrimSatCntState,
    before: SatCnt,
}

impl Block for PrimSatCnt {
    const NAME: &'static str = "prim_sat_cnt";
    type Params = PrimSatCntParams;
    type Config = PrimSatCntConfig;
    type Inputs = PrimSatCntInputs;
    type Outputs = PrimSatCntOutputs;
    type State = PrimSatCntState;

    fn variants() -> Vec<PrimSatCntParams> {
        vec![
            PrimSatCntParams { w: 8, max: 200 },
            PrimSatCntParams { w: 4, max: 15 },
            PrimSatCntParams {
                w: 32,
                max: u32::MAX as u64,
            },
        ]
    }

    fn default_config(_: &PrimSatCntParams) -> PrimSatCntConfig {
        PrimSatCntConfig {}
    }

    fn check(p: &PrimSatCntParams, _: &PrimSatCntConfig) -> Result<(), ConfigError> {
        crate::block::check_param("W", "bits", p.w as usize, 1, 32)?;
        crate::block::check_range("MAX", p.max, 1, ((1u64 << p.w) - 1).min(u32::MAX as u64))
    }

    fn new(p: &PrimSatCntParams, _: &PrimSatCntConfig) -> Self {
        let c = SatCnt::new(p.max);
        PrimSatCnt {
            p: *p,
            c,
            s: PrimSatCntState { count_q: 0 },
            before: c,
        }
    }

    fn params(&self) -> &PrimSatCntParams {
        &self.p
    }

    fn step_into(&mut self, i: &PrimSatCntInputs, o: &mut PrimSatCntOutputs) {
        self.before = self.c;
        o.count_o = self.c.count as u32;
        o.sat_o = self.c.clock(i.clr_i, i.inc_i as u64, i.dec_i as u64);
        self.s.count_q = self.c.count as u32;
    }

    fn state(&self) -> &PrimSatCntState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &PrimSatCntInputs, o: &PrimSatCntOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        if i.clr_i {
            hit(Bin::Clear);
            return;
        }
        let exact = self.before.count as i128 + i.inc_i as i128 - i.dec_i as i128;
        if o.sat_o {
            hit(if exact < 0 { Bin::SatLow } else { Bin::SatHigh });
        }
        if exact == self.p.max as i128 {
            hit(Bin::ExactMax);
        }
        if exact == 0 && self.before.count != 0 {
            hit(Bin::ExactZero);
        }
        if i.inc_i != 0 && i.dec_i != 0 {
            hit(Bin::NetBoth);
            if self.before.count == self.p.max && !o.sat_o {
                hit(Bin::NetAtMax);
            }
        }
    }
}
