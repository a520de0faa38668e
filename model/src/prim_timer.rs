//! `rtl/prim_timer.v` as a block of its own: the [`Timer`] twin behind the
//! block interface, co-simulated against its RTL like any block.

use crate::block::{Block, ConfigError, Params};
use crate::prim::Timer;

/// The Verilog parameters of `prim_timer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimTimerParams {
    /// Counter width (1..=32 verilated).
    pub w: u32,
}

impl Params for PrimTimerParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![("W", self.w as u64)]
    }
}

crate::port_group! {
    /// No runtime configuration.
    pub struct PrimTimerConfig<PrimTimerParams> |p| {}
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct PrimTimerInputs<PrimTimerParams> |p| {
        /// Load `value_i` at the next edge (wins over a tick).
        load_i: bool = 1,
        /// The value loaded.
        value_i: u32 = p.w,
        /// Count down one at the next edge.
        tick_i: bool = 1,
    }
}

crate::port_group! {
    /// Outputs.
    pub struct PrimTimerOutputs<PrimTimerParams> |p| {
        /// The count at the start of the cycle (registered).
        count_o: u32 = p.w,
        /// The count is not 0 (registered).
        running_o: bool = 1,
        /// The count reaches 0 at this edge (combinational).
        expire_o: bool = 1,
    }
}

crate::port_group! {
    /// Registers.
    pub struct PrimTimerState<PrimTimerParams> |p| {
        /// The count.
        count_q: u32 = p.w,
    }
}

crate::coverage_bins! {
    /// Coverage bins of `prim_timer`.
    pub enum Bin / BINS {
        Load = "load",
        LoadZero = "load_zero",
        Tick = "tick_running",
        TickAtZero = "tick_at_zero",
        Expire = "expire",
        LoadWinsOverExpiry = "load_wins_over_expiry",
        Reload = "reload_while_running",
        FromMax = "tick_from_max",
    }
}

/// `prim_timer` as a block.
#[derive(Clone, Debug)]
pub struct PrimTimer {
    p: PrimTimerParams,
    t: Timer,
    s: PrimTimerState,
    before: Timer,
}

impl Block for PrimTimer {
    const NAME: &'static str = "prim_timer";
    type Params = PrimTimerParams;
    type Config = PrimTimerConfig;
    type Inputs = PrimTimerInputs;
    type Outputs = PrimTimerOutputs;
    type State = PrimTimerState;

    fn variants() -> Vec<PrimTimerParams> {
        vec![
            PrimTimerParams { w: 8 },
            PrimTimerParams { w: 1 },
            PrimTimerParams { w: 32 },
        ]
    }

    fn default_config(_: &PrimTimerParams) -> PrimTimerConfig {
        PrimTimerConfig {}
    }

    fn check(p: &PrimTimerParams, _: &PrimTimerConfig) -> Result<(), ConfigError> {
        crate::block::check_param("W", "bits", p.w as usize, 1, 32)
    }

    fn new(p: &PrimTimerParams, _: &PrimTimerConfig) -> Self {
        PrimTimer {
            p: *p,
            t: Timer::default(),
            s: PrimTimerState { count_q: 0 },
            before: Timer::default(),
        }
    }

    fn params(&self) -> &PrimTimerParams {
        &self.p
    }

    fn step_into(&mut self, i: &PrimTimerInputs, o: &mut PrimTimerOutputs) {
        self.before = self.t;
        o.count_o = self.t.count as u32;
        o.running_o = self.t.running();
        o.expire_o = self.t.clock(i.load_i, i.value_i as u64, i.tick_i);
        self.s.count_q = self.t.count as u32;
    }

    fn state(&self) -> &PrimTimerState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &PrimTimerInputs, o: &PrimTimerOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        let b = self.before;
        let max = if self.p.w >= 32 {
            u32::MAX as u64
        } else {
            (1u64 << self.p.w) - 1
        };
        if i.load_i {
            hit(if i.value_i == 0 {
                Bin::LoadZero
            } else {
                Bin::Load
            });
            if b.running() {
                hit(Bin::Reload);
            }
            if i.tick_i && b.count == 1 {
                hit(Bin::LoadWinsOverExpiry);
            }
        } else if i.tick_i {
            hit(if b.running() {
                Bin::Tick
            } else {
                Bin::TickAtZero
            });
            if b.count == max {
                hit(Bin::FromMax);
            }
        }
        if o.expire_o {
            hit(Bin::Expire);
        }
    }
}
