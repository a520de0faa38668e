//! `rtl/prim_ram_1r1w.v` as a block of its own: the [`Ram1r1w`] twin behind
//! the block interface, co-simulated against its RTL like any block. One
//! clock per step; `rdata_o` is registered (the read of step `t` shows in
//! step `t + 1`). Spec: `docs/prim_ram_1r1w.md`.

use crate::block::{Block, ConfigError, Params};
use crate::prim::Ram1r1w;

/// The Verilog parameters of `prim_ram_1r1w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrimRam1r1wParams {
    /// Data bits per word (1..=64).
    pub w: u32,
    /// Words (2..=4096), not necessarily a power of two.
    pub d: u32,
    /// `CHECK_ADDR`: `AddrInRange_A` stops the run on an enabled access at
    /// an address >= `D` (with `false` such an access is ignored silently,
    /// as the spec says, and the random traffic drives it).
    pub check_addr: bool,
}

impl PrimRam1r1wParams {
    /// Address width `AW = clog2(D)`.
    pub const fn aw(&self) -> u32 {
        u32::BITS - (self.d - 1).leading_zeros()
    }

    /// Some addresses on the ports name no word (`D < 2^AW`).
    pub const fn has_out_of_range(&self) -> bool {
        self.d < 1 << self.aw()
    }
}

impl Params for PrimRam1r1wParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("W", self.w as u64),
            ("D", self.d as u64),
            ("CHECK_ADDR", self.check_addr as u64),
        ]
    }
    fn label(&self) -> String {
        format!("w{}d{}a{}", self.w, self.d, self.check_addr as u8)
    }
}

crate::port_group! {
    /// No runtime configuration.
    pub struct PrimRam1r1wConfig<PrimRam1r1wParams> |p| {}
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct PrimRam1r1wInputs<PrimRam1r1wParams> |p| {
        /// Write `wdata_i` to word `waddr_i` at the next edge.
        we_i: bool = 1,
        /// Write address (ignored at `D` and above).
        waddr_i: u16 = p.aw() => Radix::Hex,
        /// Write data.
        wdata_i: u64 = p.w => Radix::Hex,
        /// Read word `raddr_i` into `rdata_o` at the next edge.
        re_i: bool = 1,
        /// Read address (ignored at `D` and above).
        raddr_i: u16 = p.aw() => Radix::Hex,
    }
}

crate::port_group! {
    /// Outputs.
    pub struct PrimRam1r1wOutputs<PrimRam1r1wParams> |p| {
        /// The read register: the word the last read took (registered).
        rdata_o: u64 = p.w => Radix::Hex,
    }
}

crate::port_group! {
    /// Registers.
    pub struct PrimRam1r1wState<PrimRam1r1wParams> |p| {
        /// The words (no reset in the RTL; 0 in the model).
        mem: Vec<u64> = (p.w, p.d as usize) => Radix::Hex,
        /// The read register.
        rdata_q: u64 = p.w => Radix::Hex,
    }
}

crate::coverage_bins! {
    /// Coverage bins of `prim_ram_1r1w`.
    pub enum Bin / BINS {
        Write = "write",
        Read = "read",
        Idle = "idle",
        WriteFirst = "write_first_word",
        WriteLast = "write_last_word",
        ReadFirst = "read_first_word",
        ReadLast = "read_last_word",
        WriteZero = "write_zero",
        WriteOnes = "write_all_ones",
        Collision = "read_during_write_same_address",
        ReadWhileWrite = "read_during_write_other_address",
        BackToBack = "back_to_back_reads",
        Hold = "hold_re_low",
        HoldOverWrite = "hold_over_write",
        WriteOutOfRange = "write_out_of_range",
        ReadOutOfRange = "read_out_of_range",
    }
}

/// `prim_ram_1r1w` as a block.
#[derive(Clone, Debug)]
pub struct PrimRam1r1w {
    p: PrimRam1r1wParams,
    ram: Ram1r1w,
    s: PrimRam1r1wState,
    /// For coverage (set by the step, read by `sample` after it): the last
    /// step read (in range) and the one before it did.
    read_now: bool,
    read_prev: bool,
    /// For coverage: the address of the word the read register holds after
    /// the last step, and before it (`None`: no read since reset).
    held: Option<u32>,
    held_prev: Option<u32>,
}

impl Block for PrimRam1r1w {
    const NAME: &'static str = "prim_ram_1r1w";
    type Params = PrimRam1r1wParams;
    type Config = PrimRam1r1wConfig;
    type Inputs = PrimRam1r1wInputs;
    type Outputs = PrimRam1r1wOutputs;
    type State = PrimRam1r1wState;

    fn variants() -> Vec<PrimRam1r1wParams> {
        vec![
            PrimRam1r1wParams {
                w: 8,
                d: 12,
                check_addr: false,
            },
            PrimRam1r1wParams {
                w: 32,
                d: 256,
                check_addr: true,
            },
            PrimRam1r1wParams {
                w: 64,
                d: 3,
                check_addr: true,
            },
        ]
    }

    fn default_config(_: &PrimRam1r1wParams) -> PrimRam1r1wConfig {
        PrimRam1r1wConfig {}
    }

    fn check(p: &PrimRam1r1wParams, _: &PrimRam1r1wConfig) -> Result<(), ConfigError> {
        crate::block::check_param("W", "bits", p.w as usize, 1, 64)?;
        crate::block::check_param("D", "words", p.d as usize, 2, 4096)
    }

    fn new(p: &PrimRam1r1wParams, _: &PrimRam1r1wConfig) -> Self {
        PrimRam1r1w {
            p: *p,
            ram: Ram1r1w::new(p.w, p.d),
            s: PrimRam1r1wState {
                mem: vec![0; p.d as usize],
                rdata_q: 0,
            },
            read_now: false,
            read_prev: false,
            held: None,
            held_prev: None,
        }
    }

    fn params(&self) -> &PrimRam1r1wParams {
        &self.p
    }

    fn step_into(&mut self, i: &PrimRam1r1wInputs, o: &mut PrimRam1r1wOutputs) {
        let (wa, ra) = (u32::from(i.waddr_i), u32::from(i.raddr_i));
        let read = i.re_i && self.ram.in_range(ra);
        self.read_prev = self.read_now;
        self.read_now = read;
        self.held_prev = self.held;
        if read {
            self.held = Some(ra);
        }
        o.rdata_o = self.ram.step(i.we_i, wa, i.wdata_i, i.re_i, ra);
        // The registers as declared: the word written and the read register.
        if i.we_i && self.ram.in_range(wa) {
            self.s.mem[wa as usize] = self.ram.mem[wa as usize];
        }
        self.s.rdata_q = self.ram.rdata_q;
    }

    fn state(&self) -> &PrimRam1r1wState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &PrimRam1r1wInputs, _: &PrimRam1r1wOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        let (wa, ra) = (u32::from(i.waddr_i), u32::from(i.raddr_i));
        let last = self.p.d - 1;
        let ones = u64::MAX >> (64 - self.p.w);
        let write = i.we_i && wa < self.p.d;
        let read = i.re_i && ra < self.p.d;
        if write {
            hit(Bin::Write);
            if wa == 0 {
                hit(Bin::WriteFirst);
            }
            if wa == last {
                hit(Bin::WriteLast);
            }
            if i.wdata_i == 0 {
                hit(Bin::WriteZero);
            }
            if i.wdata_i == ones {
                hit(Bin::WriteOnes);
            }
        }
        if read {
            hit(Bin::Read);
            if ra == 0 {
                hit(Bin::ReadFirst);
            }
            if ra == last {
                hit(Bin::ReadLast);
            }
        }
        if !i.we_i && !i.re_i {
            hit(Bin::Idle);
        }
        if write && read {
            hit(if wa == ra {
                Bin::Collision
            } else {
                Bin::ReadWhileWrite
            });
        }
        if i.we_i && wa >= self.p.d {
            hit(Bin::WriteOutOfRange);
        }
        if i.re_i && ra >= self.p.d {
            hit(Bin::ReadOutOfRange);
        }
        // `sample` follows the step: `read_prev` is the cycle before this
        // one, `held_prev` the word `rdata_o` holds in this cycle.
        if read && self.read_prev {
            hit(Bin::BackToBack);
        }
        if !i.re_i && self.read_prev {
            hit(Bin::Hold);
        }
        if !i.re_i && write && self.held_prev == Some(wa) {
            hit(Bin::HoldOverWrite);
        }
    }
}
