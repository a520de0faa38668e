//! `rtl/prim_rr_arb.v` as a block of its own: the [`RrArb`] twin behind the
//! block interface, co-simulated against its RTL like any block.

use crate::block::{Block, ConfigError, Params};
use crate::prim::RrArb;

/// The Verilog parameters of `prim_rr_arb`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimRrArbParams {
    /// Number of requesters (1..=64).
    pub n: u32,
}

impl PrimRrArbParams {
    /// Width of an index (`IW`).
    pub const fn iw(&self) -> u32 {
        if self.n > 1 {
            u32::BITS - (self.n - 1).leading_zeros()
        } else {
            1
        }
    }
}

impl Params for PrimRrArbParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![("N", self.n as u64)]
    }
}

crate::port_group! {
    /// No runtime configuration.
    pub struct PrimRrArbConfig<PrimRrArbParams> |p| {}
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct PrimRrArbInputs<PrimRrArbParams> |p| {
        /// Requests.
        req_i: u64 = p.n,
        /// The grant is taken: move the pointer at the next edge.
        ack_i: bool = 1,
    }
}

crate::port_group! {
    /// Outputs.
    pub struct PrimRrArbOutputs<PrimRrArbParams> |p| {
        /// Some requester is granted (combinational).
        valid_o: bool = 1,
        /// The granted index, 0 when none (combinational).
        idx_o: u8 = p.iw(),
        /// The grant, one-hot (combinational).
        gnt_o: u64 = p.n,
        /// The pointer at the start of the cycle (registered).
        ptr_o: u8 = p.iw(),
    }
}

crate::port_group! {
    /// Registers.
    pub struct PrimRrArbState<PrimRrArbParams> |p| {
        /// The pointer.
        ptr_q: u8 = p.iw(),
    }
}

crate::coverage_bins! {
    /// Coverage bins of `prim_rr_arb`.
    pub enum Bin / BINS {
        NoRequest = "no_request",
        AtPointer = "grant_at_pointer",
        AfterPointer = "grant_after_pointer",
        Wrapped = "grant_wrapped_below_pointer",
        PointerWraps = "pointer_wraps_to_0",
        Held = "grant_not_taken",
        AllRequest = "all_request",
    }
}

/// `prim_rr_arb` as a block.
#[derive(Clone, Debug)]
pub struct PrimRrArb {
    p: PrimRrArbParams,
    a: RrArb,
    s: PrimRrArbState,
    before: RrArb,
}

impl Block for PrimRrArb {
    const NAME: &'static str = "prim_rr_arb";
    type Params = PrimRrArbParams;
    type Config = PrimRrArbConfig;
    type Inputs = PrimRrArbInputs;
    type Outputs = PrimRrArbOutputs;
    type State = PrimRrArbState;

    fn variants() -> Vec<PrimRrArbParams> {
        vec![
            PrimRrArbParams { n: 5 },
            PrimRrArbParams { n: 1 },
            PrimRrArbParams { n: 8 },
            PrimRrArbParams { n: 64 },
        ]
    }

    fn default_config(_: &PrimRrArbParams) -> PrimRrArbConfig {
        PrimRrArbConfig {}
    }

    fn check(p: &PrimRrArbParams, _: &PrimRrArbConfig) -> Result<(), ConfigError> {
        crate::block::check_param("N", "requesters", p.n as usize, 1, 64)
    }

    fn new(p: &PrimRrArbParams, _: &PrimRrArbConfig) -> Self {
        let a = RrArb::new(p.n);
        PrimRrArb {
            p: *p,
            a,
            s: PrimRrArbState { ptr_q: 0 },
            before: a,
        }
    }

    fn params(&self) -> &PrimRrArbParams {
        &self.p
    }

    fn step_into(&mut self, i: &PrimRrArbInputs, o: &mut PrimRrArbOutputs) {
        self.before = self.a;
        o.ptr_o = self.a.ptr as u8;
        let g = self.a.clock(i.req_i, i.ack_i);
        o.valid_o = g.is_some();
        o.idx_o = g.unwrap_or(0) as u8;
        o.gnt_o = g.map_or(0, |k| 1u64 << k);
        self.s.ptr_q = self.a.ptr as u8;
    }

    fn state(&self) -> &PrimRrArbState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &PrimRrArbInputs, o: &PrimRrArbOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        let all = if self.p.n >= 64 {
            u64::MAX
        } else {
            (1u64 << self.p.n) - 1
        };
        if i.req_i & all == all {
            hit(Bin::AllRequest);
        }
        if !o.valid_o {
            hit(Bin::NoRequest);
            return;
        }
        let (k, ptr) = (o.idx_o as u32, self.before.ptr);
        hit(match k {
            _ if k == ptr => Bin::AtPointer,
            _ if k > ptr => Bin::AfterPointer,
            _ => Bin::Wrapped,
        });
        if !i.ack_i {
            hit(Bin::Held);
        } else if self.a.ptr == 0 && k + 1 == self.p.n {
            hit(Bin::PointerWraps);
        }
    }
}
