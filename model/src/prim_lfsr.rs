//! `rtl/prim_lfsr.v` as a block of its own: the [`Lfsr`] twin behind the
//! block interface, so the primitive is co-simulated against its RTL like
//! any block (blocks that instantiate it hold an [`Lfsr`] in their state).

use crate::block::{Block, ConfigError, Params};
use crate::prim::Lfsr;

/// The Verilog parameters of `prim_lfsr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimLfsrParams {
    /// Register width (2..=32 verilated).
    pub w: u32,
    /// Feedback taps.
    pub taps: u64,
    /// Reset value (non-zero).
    pub seed: u64,
    /// Steps per enabled cycle.
    pub steps: u32,
}

impl Params for PrimLfsrParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("W", self.w as u64),
            ("TAPS", self.taps),
            ("SEED", self.seed),
            ("STEPS", self.steps as u64),
        ]
    }
    fn label(&self) -> String {
        format!("w{}s{}", self.w, self.steps)
    }
}

crate::port_group! {
    /// No runtime configuration.
    pub struct PrimLfsrConfig<PrimLfsrParams> |p| {}
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct PrimLfsrInputs<PrimLfsrParams> |p| {
        /// Take `STEPS` steps at the next edge.
        en_i: bool = 1,
    }
}

crate::port_group! {
    /// Outputs.
    pub struct PrimLfsrOutputs<PrimLfsrParams> |p| {
        /// The register at the start of the cycle.
        state_o: u32 = p.w,
    }
}

crate::port_group! {
    /// Registers.
    pub struct PrimLfsrState<PrimLfsrParams> |p| {
        /// The LFSR register.
        state_q: u32 = p.w => Radix::Hex,
    }
}

crate::coverage_bins! {
    /// Coverage bins of `prim_lfsr`.
    pub enum Bin / BINS {
        Step = "step",
        Hold = "hold",
    }
}

/// `prim_lfsr` as a block.
#[derive(Clone, Debug)]
pub struct PrimLfsr {
    p: PrimLfsrParams,
    l: Lfsr,
    s: PrimLfsrState,
}

impl Block for PrimLfsr {
    const NAME: &'static str = "prim_lfsr";
    type Params = PrimLfsrParams;
    type Config = PrimLfsrConfig;
    type Inputs = PrimLfsrInputs;
    type Outputs = PrimLfsrOutputs;
    type State = PrimLfsrState;

    fn variants() -> Vec<PrimLfsrParams> {
        vec![
            // The default: x^16 + x^14 + x^13 + x^11 + 1.
            PrimLfsrParams {
                w: 16,
                taps: 0xB400,
                seed: 1,
                steps: 1,
            },
            // The arbiter's: 32 bits, 16 steps per slot.
            PrimLfsrParams {
                w: 32,
                taps: crate::arbiter::LFSR_TAPS as u64,
                seed: crate::arbiter::LFSR_SEED as u64,
                steps: crate::arbiter::LFSR_STEPS,
            },
            // A short one (x^7 + x^6 + 1, period 127) that wraps in a short
            // run, three steps per cycle.
            PrimLfsrParams {
                w: 7,
                taps: 0x60,
                seed: 0x5A,
                steps: 3,
            },
        ]
    }

    fn default_config(_: &PrimLfsrParams) -> PrimLfsrConfig {
        PrimLfsrConfig {}
    }

    fn check(p: &PrimLfsrParams, _: &PrimLfsrConfig) -> Result<(), ConfigError> {
        crate::block::check_param("W", "bits", p.w as usize, 2, 32)?;
        crate::block::check_param("STEPS", "steps per cycle", p.steps as usize, 1, 64)?;
        let mask = (1u64 << p.w) - 1;
        if p.seed & mask == 0 || p.seed > mask || p.taps > mask {
            return Err(ConfigError::new(
                "SEED",
                format!(
                    "seed {:#x} / taps {:#x}: must be non-zero W-bit values",
                    p.seed, p.taps
                ),
            ));
        }
        Ok(())
    }

    fn new(p: &PrimLfsrParams, _: &PrimLfsrConfig) -> Self {
        let l = Lfsr::new(p.seed, p.taps, p.steps);
        PrimLfsr {
            p: *p,
            l,
            s: PrimLfsrState {
                state_q: l.state as u32,
            },
        }
    }

    fn params(&self) -> &PrimLfsrParams {
        &self.p
    }

    fn step_into(&mut self, i: &PrimLfsrInputs, o: &mut PrimLfsrOutputs) {
        o.state_o = self.l.state as u32;
        self.l.clock(i.en_i);
        self.s.state_q = self.l.state as u32;
    }

    fn state(&self) -> &PrimLfsrState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &PrimLfsrInputs, _: &PrimLfsrOutputs, hits: &mut [u64]) {
        hits[if i.en_i { Bin::Step } else { Bin::Hold } as usize] += 1;
    }
}

impl PrimLfsr {
    /// The register (the twin).
    pub fn lfsr(&self) -> &Lfsr {
        &self.l
    }
}
