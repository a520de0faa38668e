//! Golden model of the STX egress adapter, the OSMOSIS output adapter
//! (`rtl/stx_egress.v`, spec `docs/stx_egress.md`).
//!
//! Per input a resequencing queue (RSQ) of `B` cells indexed by sequence
//! number modulo `B`; cells arrive from the crossbar on `R` receivers, are
//! delivered in sequence order per input, at most one per cycle, chosen
//! round robin (`prim_rr_arb`) among the inputs whose next cell is there;
//! duplicates are dropped; five saturating counters (`prim_sat_cnt`) hold
//! what the system study reads.
//!
//! Latency: the delivery (`dlv_*_o`) and the fates (`arr_fate_o`) are
//! outputs of the same cycle (an in-order cell that finds its RSQ empty
//! leaves in the cycle it arrives); everything else is the registers at the
//! start of the cycle. Order inside a cycle: delivery, admission, counters.

use crate::block::{check_param, check_pow2, check_range, refill, Block, ConfigError, Params};
use crate::port::PortGroup;
use crate::prim::{RrArb, SatCnt, SeqNum};
use arbitrary_int::u2;

/// `ceil(log2(n))` for `n >= 1`.
pub const fn clog2(n: usize) -> u32 {
    usize::BITS - (n - 1).leading_zeros()
}

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StxEgressParams {
    /// Inputs (sources), a power of two, 2..=16.
    pub n: usize,
    /// Arrival ports (crossbar receivers of this output), 1..=4.
    pub r: usize,
    /// RSQ entries per input, a power of two, 2..=64.
    pub b: usize,
    /// Sequence number width, `log2(B) + 1 ..= 16`.
    pub sw: u32,
    /// Cell id width, 1..=16.
    pub iw: u32,
    /// Statistics counter width, `clog2(N B + 1) ..= 32`.
    pub cntw: u32,
}

impl StxEgressParams {
    /// Source index width `log2(N)`.
    pub const fn srcw(&self) -> u32 {
        clog2(self.n)
    }
    /// Slot index width `log2(B)`.
    pub const fn pw(&self) -> u32 {
        clog2(self.b)
    }
    /// Per-input occupancy width `clog2(B + 1)`.
    pub const fn cw(&self) -> u32 {
        clog2(self.b + 1)
    }
    /// Width of the credits freed per cycle, `clog2(R + 2)` (up to `R + 1`:
    /// a delivery from the RSQ and `R` cells dropped).
    pub const fn kw(&self) -> u32 {
        clog2(self.r + 2)
    }
    /// Sequence numbers wrap at this modulus.
    pub const fn seq_mod(&self) -> u32 {
        self.seq().modulus()
    }
    /// The sequence numbers' arithmetic (`SW` bits).
    pub const fn seq(&self) -> SeqNum {
        SeqNum::new(self.sw)
    }
    /// The counters saturate here.
    pub const fn cnt_max(&self) -> u64 {
        (1u64 << self.cntw) - 1
    }
    /// Checks the parameters against the RTL's range (the verilated
    /// sizes, `docs/stx_egress.md`); the error names the parameter.
    pub fn check(&self) -> Result<(), ConfigError> {
        self.check_in(&RTL_RANGE)
    }

    /// Checks the parameters against the wider *model range*, for system
    /// studies of the golden model alone (N = 64, R = 8, B = 64 and more):
    /// sizes no RTL variant is verilated at. The model's behaviour is the
    /// same function of its registers at every size; inside the RTL range
    /// it is co-simulated against the RTL. The error names the parameter.
    pub fn check_model(&self) -> Result<(), ConfigError> {
        self.check_in(&MODEL_RANGE)
    }

    fn check_in(&self, lim: &Range) -> Result<(), ConfigError> {
        let range = |e: ConfigError| e.note(lim.name);
        check_pow2("N", "inputs", self.n, 2, lim.n).map_err(range)?;
        check_param("R", "receivers", self.r, 1, lim.r).map_err(range)?;
        check_pow2("B", "RSQ entries", self.b, 2, lim.b).map_err(range)?;
        let pw = self.pw() as usize;
        check_param("SW", "sequence bits", self.sw as usize, pw + 1, 16)
            .map_err(|e| e.note(format_args!("more than log2(B) = {pw}")))?;
        check_param("IW", "id bits", self.iw as usize, 1, 16)?;
        let lo = clog2(self.n * self.b + 1) as usize;
        check_param("CNTW", "counter bits", self.cntw as usize, lo, 32)
            .map_err(|e| e.note(format_args!("clog2(N B + 1) = {lo}")))
    }
}

/// Limits of the structural parameters.
struct Range {
    name: &'static str,
    n: usize,
    r: usize,
    b: usize,
}

/// The RTL's range (`Block::check`, the verilated variants).
const RTL_RANGE: Range = Range {
    name: "RTL range",
    n: 16,
    r: 4,
    b: 64,
};

/// The model range ([`StxEgressParams::check_model`]): the delivery round
/// robin takes a 64-bit mask of inputs, `rsq_cnt_o` is 16 bits.
const MODEL_RANGE: Range = Range {
    name: "model range",
    n: 64,
    r: 16,
    b: 1024,
};

impl Default for StxEgressParams {
    fn default() -> Self {
        StxEgressParams {
            n: 8,
            r: 2,
            b: 8,
            sw: 8,
            iw: 8,
            cntw: 32,
        }
    }
}

impl Params for StxEgressParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("N", self.n as u64),
            ("R", self.r as u64),
            ("B", self.b as u64),
            ("SW", self.sw as u64),
            ("IW", self.iw as u64),
            ("CNTW", self.cntw as u64),
        ]
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct StxEgressConfig<StxEgressParams> |p| {
        /// Delivery scheme: 0 selective retry, 1 go-back-N, 2 stop-and-wait (3 illegal).
        cfg_scheme_i: u2 = 2 => Radix::Names(&["sr", "gbn", "saw"]),
    }
}

crate::port_group! {
    /// Per-cycle inputs: the cells on the receivers, the output link's ready.
    pub struct StxEgressInputs<StxEgressParams> |p| {
        /// Receiver `r` holds a cell from the crossbar.
        arr_valid_i: Vec<bool> = (1, p.r),
        /// Its source input.
        arr_src_i: Vec<u8> = (p.srcw(), p.r),
        /// Its sequence number.
        arr_seq_i: Vec<u16> = (p.sw, p.r),
        /// Its cell id (payload tag).
        arr_id_i: Vec<u16> = (p.iw, p.r),
        /// The output link takes a cell this cycle.
        dlv_ready_i: bool = 1,
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct StxEgressOutputs<StxEgressParams> |p| {
        /// A cell is delivered to the output link.
        dlv_valid_o: bool = 1,
        /// Its source input (0 when none).
        dlv_src_o: u8 = p.srcw(),
        /// Its sequence number (0 when none).
        dlv_seq_o: u16 = p.sw,
        /// Its cell id (0 when none).
        dlv_id_o: u16 = p.iw,
        /// It is this cycle's arrival (bypass), not a cell from the RSQ.
        dlv_byp_o: bool = 1,
        /// Per receiver: what became of its cell (see `Fate`).
        arr_fate_o: Vec<u8> = (3, p.r) => Radix::Names(Fate::NAMES),
        /// Credits freed: the delivered cell and the cells dropped on arrival.
        crd_o: u8 = p.kw(),
        /// Per input: next sequence number to deliver (registered).
        head_seq_o: Vec<u16> = (p.sw, p.n),
        /// Per input: next sequence number expected, the first not received (registered).
        exp_seq_o: Vec<u16> = (p.sw, p.n),
        /// Per input and slot (input i, slot k at i * B + k): held (registered).
        rsq_vld_o: Vec<bool> = (1, p.n * p.b),
        /// Per input: cells held (registered).
        rsq_cnt_o: Vec<u16> = (p.cw(), p.n),
        /// Cells delivered (registered, saturating).
        cnt_dlv_o: u32 = p.cntw,
        /// Duplicates dropped (registered, saturating).
        cnt_dup_o: u32 = p.cntw,
        /// Cells dropped beyond the window or out of order under GBN/SAW (registered, saturating).
        cnt_oow_o: u32 = p.cntw,
        /// Cells stored out of order (registered, saturating).
        cnt_ooo_o: u32 = p.cntw,
        /// Sum over cycles of the cells held at the start of the cycle (registered, saturating).
        cnt_wait_o: u32 = p.cntw,
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's (primitive instances by their
    /// instance names).
    pub struct StxEgressState<StxEgressParams> |p| {
        /// Per input: next sequence number to deliver.
        head_q: Vec<u16> = (p.sw, p.n),
        /// Per input and slot: held.
        vld_q: Vec<bool> = (1, p.n * p.b),
        /// Per input and slot: the held cell's id (data, not reset).
        id_q: Vec<u16> = (p.iw, p.n * p.b),
        /// Delivery arbiter pointer (`u_arb`, `prim_rr_arb` over N).
        arb_ptr_q: u8 = p.srcw(),
        /// `u_cnt_dlv` (`prim_sat_cnt`).
        cnt_dlv_q: u32 = p.cntw,
        /// `u_cnt_dup` (`prim_sat_cnt`).
        cnt_dup_q: u32 = p.cntw,
        /// `u_cnt_oow` (`prim_sat_cnt`).
        cnt_oow_q: u32 = p.cntw,
        /// `u_cnt_ooo` (`prim_sat_cnt`).
        cnt_ooo_q: u32 = p.cntw,
        /// `u_cnt_wait` (`prim_sat_cnt`).
        cnt_wait_q: u32 = p.cntw,
    }
}

/// What became of a cell on a receiver (`arr_fate_o`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Fate {
    /// No cell.
    #[default]
    None = 0,
    /// The head of its input: delivered in this cycle (bypass).
    Delivered = 1,
    /// Every predecessor received: stored, waiting for the output link.
    InOrder = 2,
    /// A predecessor missing: stored (selective retry).
    OutOfOrder = 3,
    /// Behind the head, or a copy of a held cell: dropped.
    Duplicate = 4,
    /// Beyond the window, or out of order under GBN/SAW: dropped.
    OutOfWindow = 5,
    /// A lower receiver carries a cell of the same input: dropped.
    Conflict = 6,
    /// Illegal configuration: dropped.
    Refused = 7,
}

impl Fate {
    /// The fates' names, indexed by code (for `arr_fate_o`).
    pub const NAMES: &'static [&'static str] = &[
        "none",
        "delivered",
        "in_order",
        "out_of_order",
        "duplicate",
        "out_of_window",
        "conflict",
        "refused",
    ];
    /// All codes, in order.
    pub const ALL: [Fate; 8] = [
        Fate::None,
        Fate::Delivered,
        Fate::InOrder,
        Fate::OutOfOrder,
        Fate::Duplicate,
        Fate::OutOfWindow,
        Fate::Conflict,
        Fate::Refused,
    ];
    /// Decodes an `arr_fate_o` element.
    pub fn from_code(c: u8) -> Fate {
        Self::ALL[(c & 7) as usize]
    }
    /// The `arr_fate_o` element.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Delivery scheme (`cfg_scheme_i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Selective retry (the paper's): resequencing.
    Sr = 0,
    /// Go-back-N: only the next expected cell is accepted.
    Gbn = 1,
    /// Stop-and-wait: at the receiver as GBN.
    Saw = 2,
}

impl Scheme {
    /// The configuration value.
    pub fn code(self) -> u2 {
        u2::new(self as u8)
    }
    /// Decodes `cfg_scheme_i` (`None`: illegal).
    pub fn from_code(c: u2) -> Option<Scheme> {
        match c.value() {
            0 => Some(Scheme::Sr),
            1 => Some(Scheme::Gbn),
            2 => Some(Scheme::Saw),
            _ => None,
        }
    }
}

crate::coverage_bins! {
    /// Functional coverage bins of the egress adapter.
    pub enum Bin / BINS {
        DeliveredAtOnce = "in_order_delivered_at_once",
        InOrderStored = "in_order_stored",
        OutOfOrderHeld = "out_of_order_held",
        HoleFilled = "hole_filled_releasing_run",
        FromRsq = "delivered_from_rsq",
        DupBehind = "duplicate_behind_head",
        DupHeld = "duplicate_of_held_cell",
        OutOfWindow = "out_of_window",
        GbnDropped = "gbn_out_of_order_dropped",
        RsqFull = "rsq_full",
        FreedSlotReused = "stored_into_slot_freed_same_cycle",
        SeqWrap = "sequence_wrap",
        Contention = "several_inputs_ready",
        Backpressure = "output_backpressure",
        SeveralArrivals = "several_arrivals",
        Conflict = "receiver_conflict",
        SchemeSr = "scheme_sr",
        SchemeGbn = "scheme_gbn",
        SchemeSaw = "scheme_saw",
        Saturated = "counter_saturated",
        ConfigError = "config_error",
    }
}

/// What happened in the last cycle, for coverage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events {
    /// Count of each fate over the receivers.
    pub fates: [u8; 8],
    /// A cell became in order (or was delivered at once) while its
    /// successor was already held.
    pub hole_filled: bool,
    /// A cell left from an RSQ slot.
    pub from_rsq: bool,
    /// A duplicate behind the head.
    pub dup_behind: bool,
    /// A duplicate of a held cell.
    pub dup_held: bool,
    /// Under GBN/SAW, an out-of-order cell inside the window dropped.
    pub gbn_dropped: bool,
    /// Some RSQ was full at the start of the cycle.
    pub full: bool,
    /// A cell stored in the slot its input's head left in the same cycle.
    pub freed_reused: bool,
    /// A delivery at sequence number `2^SW - 1` (the head wraps).
    pub wrap: bool,
    /// Several inputs ready for the output.
    pub contention: bool,
    /// Some input ready, the output link not.
    pub backpressure: bool,
    /// Several effective arrivals.
    pub several: bool,
    /// A cell was delivered.
    pub delivered: bool,
    /// A counter saturated.
    pub saturated: bool,
}

/// The STX egress adapter model.
#[derive(Clone, Debug)]
pub struct StxEgress {
    p: StxEgressParams,
    c: StxEgressConfig,
    scheme: Option<Scheme>,
    s: StxEgressState,
    ev: Events,
    /// Per input: the receiver of its effective arrival this cycle (scratch).
    arr: Vec<Option<usize>>,
    /// Per input: cells held, a cache of `vld_q` (not a register; the RTL
    /// counts the valid bits combinationally).
    occ: Vec<u16>,
    /// The parameters are in the RTL range: `rsq_vld_o` (N x B bits) is
    /// produced. Beyond it (model range only) it is left empty: copying
    /// N x B flags per cycle dominated a 64-port study (`docs/stx.md`,
    /// section 5); the state is there through [`StxEgress::held`].
    bulk: bool,
}

impl StxEgress {
    /// The configuration.
    pub fn config(&self) -> &StxEgressConfig {
        &self.c
    }

    /// The scheme (`None`: illegal configuration).
    pub fn scheme(&self) -> Option<Scheme> {
        self.scheme
    }

    /// The events of the last cycle.
    pub fn events(&self) -> &Events {
        &self.ev
    }

    /// Whether input `i`'s slot `k` holds a cell.
    pub fn held(&self, i: usize, k: usize) -> bool {
        self.s.vld_q[i * self.p.b + k]
    }

    /// Cells held for input `i`.
    pub fn occupancy(&self, i: usize) -> usize {
        self.occ[i] as usize
    }

    /// Cells held for every input.
    pub fn total_occupancy(&self) -> usize {
        self.occ.iter().map(|&c| c as usize).sum()
    }

    /// Input `i`'s run: the cells held consecutively from its head slot.
    pub fn run(&self, i: usize) -> usize {
        let b = self.p.b;
        let h = self.s.head_q[i] as usize % b;
        (0..b)
            .take_while(|&k| self.s.vld_q[i * b + (h + k) % b])
            .count()
    }

    /// Input `i`'s next sequence number to deliver.
    pub fn head(&self, i: usize) -> u16 {
        self.s.head_q[i]
    }

    /// Input `i`'s next expected sequence number (head + run).
    pub fn expected(&self, i: usize) -> u16 {
        self.add(self.s.head_q[i], self.run(i) as u32)
    }

    fn add(&self, a: u16, k: u32) -> u16 {
        self.p.seq().add(a, k)
    }

    /// `(a - b) mod 2^SW`.
    pub fn dist(&self, a: u16, b: u16) -> u32 {
        self.p.seq().dist(a, b)
    }

    /// Checks the spec's invariants; panics with the broken one.
    pub fn assert_invariants(&self) {
        let p = &self.p;
        for i in 0..p.n {
            let held = self.s.vld_q[i * p.b..(i + 1) * p.b]
                .iter()
                .filter(|&&v| v)
                .count();
            assert_eq!(self.occupancy(i), held, "occupancy cache of input {i}");
            assert!(self.occupancy(i) <= p.b);
            assert!((self.s.head_q[i] as u32) < p.seq_mod(), "head width");
            if matches!(self.scheme, Some(Scheme::Gbn | Scheme::Saw)) {
                assert_eq!(
                    self.run(i),
                    self.occupancy(i),
                    "GBN/SAW: input {i}'s RSQ is not a run from its head"
                );
            }
        }
        if self.scheme.is_none() {
            assert_eq!(self.total_occupancy(), 0, "cells stored under cfg_err");
        }
    }
}

impl StxEgress {
    /// Checks `c` (the parameters themselves are not checked).
    fn check_config(c: &StxEgressConfig) -> Result<(), ConfigError> {
        check_range("cfg_scheme_i", c.cfg_scheme_i.value() as u64, 0, 2)
            .map_err(|e| e.note("0 SR, 1 GBN, 2 SAW"))
    }

    /// A model at a size of the *model range* ([`StxEgressParams::check_model`]),
    /// for system studies; `c` must be legal. Inside the RTL range this is
    /// [`Block::new`] after [`Block::check`].
    pub fn new_model(p: &StxEgressParams, c: &StxEgressConfig) -> Result<Self, ConfigError> {
        p.check_model()?;
        Self::check_config(c)?;
        Ok(Self::build(p, c))
    }

    fn build(p: &StxEgressParams, c: &StxEgressConfig) -> Self {
        StxEgress {
            p: *p,
            c: c.clone(),
            scheme: Scheme::from_code(c.cfg_scheme_i),
            s: StxEgressState::zero(p),
            ev: Events::default(),
            arr: vec![None; p.n],
            occ: vec![0; p.n],
            bulk: p.check().is_ok(),
        }
    }
}

impl Block for StxEgress {
    const NAME: &'static str = "stx_egress";
    type Params = StxEgressParams;
    type Config = StxEgressConfig;
    type Inputs = StxEgressInputs;
    type Outputs = StxEgressOutputs;
    type State = StxEgressState;

    fn variants() -> Vec<StxEgressParams> {
        let v = |n, r, b, sw, iw, cntw| StxEgressParams {
            n,
            r,
            b,
            sw,
            iw,
            cntw,
        };
        vec![
            v(8, 2, 8, 8, 8, 32),
            v(4, 1, 4, 4, 4, 8),
            v(16, 2, 16, 6, 8, 16),
            v(4, 4, 2, 3, 4, 6),
        ]
    }

    fn default_config(_: &StxEgressParams) -> StxEgressConfig {
        StxEgressConfig {
            cfg_scheme_i: Scheme::Sr.code(),
        }
    }

    fn check(p: &StxEgressParams, c: &StxEgressConfig) -> Result<(), ConfigError> {
        p.check()?;
        StxEgress::check_config(c)
    }

    fn new(p: &StxEgressParams, c: &StxEgressConfig) -> Self {
        StxEgress::build(p, c)
    }
    fn params(&self) -> &StxEgressParams {
        &self.p
    }

    fn state(&self) -> &StxEgressState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &StxEgressInputs, _o: &StxEgressOutputs, hits: &mut [u64]) {
        let e = &self.ev;
        let f = |x: Fate| e.fates[x as usize] > 0;
        let mut hit = |b: Bin, on: bool| hits[b as usize] += u64::from(on);
        hit(Bin::DeliveredAtOnce, f(Fate::Delivered));
        hit(Bin::InOrderStored, f(Fate::InOrder));
        hit(Bin::OutOfOrderHeld, f(Fate::OutOfOrder));
        hit(Bin::HoleFilled, e.hole_filled);
        hit(Bin::FromRsq, e.from_rsq);
        hit(Bin::DupBehind, e.dup_behind);
        hit(Bin::DupHeld, e.dup_held);
        hit(
            Bin::OutOfWindow,
            f(Fate::OutOfWindow) && self.scheme == Some(Scheme::Sr),
        );
        hit(Bin::GbnDropped, e.gbn_dropped);
        hit(Bin::RsqFull, e.full);
        hit(Bin::FreedSlotReused, e.freed_reused);
        hit(Bin::SeqWrap, e.wrap);
        hit(Bin::Contention, e.contention);
        hit(Bin::Backpressure, e.backpressure);
        hit(Bin::SeveralArrivals, e.several);
        hit(Bin::Conflict, f(Fate::Conflict));
        hit(
            Bin::SchemeSr,
            e.delivered && self.scheme == Some(Scheme::Sr),
        );
        hit(
            Bin::SchemeGbn,
            e.delivered && self.scheme == Some(Scheme::Gbn),
        );
        hit(
            Bin::SchemeSaw,
            e.delivered && self.scheme == Some(Scheme::Saw),
        );
        hit(Bin::Saturated, e.saturated);
        hit(Bin::ConfigError, f(Fate::Refused));
    }

    fn step_into(&mut self, i: &StxEgressInputs, o: &mut StxEgressOutputs) {
        let p = self.p;
        let (n, r, b) = (p.n, p.r, p.b);
        let mut ev = Events::default();

        // Registered outputs: the state at the start of the cycle.
        let mut held_total = 0u64;
        refill(&mut o.exp_seq_o, n, 0);
        refill(&mut o.rsq_cnt_o, n, 0);
        for k in 0..n {
            let occ = self.occupancy(k);
            held_total += occ as u64;
            o.rsq_cnt_o[k] = occ as u16;
            // The run from the head is 0 unless the head slot is held.
            o.exp_seq_o[k] = if occ == 0 {
                self.s.head_q[k]
            } else {
                self.expected(k)
            };
            ev.full |= occ == b;
        }
        o.head_seq_o.clone_from(&self.s.head_q);
        if self.bulk {
            o.rsq_vld_o.clone_from(&self.s.vld_q);
        } else {
            o.rsq_vld_o.clear();
        }
        o.cnt_dlv_o = self.s.cnt_dlv_q;
        o.cnt_dup_o = self.s.cnt_dup_q;
        o.cnt_oow_o = self.s.cnt_oow_q;
        o.cnt_ooo_o = self.s.cnt_ooo_q;
        o.cnt_wait_o = self.s.cnt_wait_q;
        let cfg_err = self.scheme.is_none();
        o.cfg_err_o = cfg_err;

        // 0. Receivers: conflicts, the illegal configuration; one effective
        //    arrival per input.
        refill(&mut o.arr_fate_o, r, Fate::None.code());
        self.arr.iter_mut().for_each(|a| *a = None);
        let mut effective = 0;
        for x in 0..r {
            if !i.arr_valid_i[x] {
                continue;
            }
            let src = i.arr_src_i[x] as usize;
            let conflict = (0..x).any(|y| i.arr_valid_i[y] && i.arr_src_i[y] == i.arr_src_i[x]);
            if conflict {
                o.arr_fate_o[x] = Fate::Conflict.code();
            } else if cfg_err {
                o.arr_fate_o[x] = Fate::Refused.code();
            } else {
                self.arr[src] = Some(x);
                effective += 1;
            }
        }
        ev.several = effective > 1;

        // 1-2. Delivery: the ready inputs, the round robin.
        let mut req = 0u64;
        for k in 0..n {
            let h = self.s.head_q[k];
            let buf = self.s.vld_q[k * b + h as usize % b];
            let byp = self.arr[k].is_some_and(|x| i.arr_seq_i[x] == h);
            if buf || byp {
                req |= 1 << k;
            }
        }
        ev.contention = req.count_ones() > 1;
        ev.backpressure = req != 0 && !i.dlv_ready_i;
        let mut arb = RrArb {
            n: n as u32,
            ptr: self.s.arb_ptr_q as u32,
        };
        let g = arb
            .clock(if i.dlv_ready_i { req } else { 0 }, true)
            .map(|g| g as usize);
        self.s.arb_ptr_q = arb.ptr as u8;
        o.dlv_valid_o = g.is_some();
        o.dlv_src_o = 0;
        o.dlv_seq_o = 0;
        o.dlv_id_o = 0;
        o.dlv_byp_o = false;
        // The input whose arrival left at once.
        let mut bypassed = None;
        if let Some(k) = g {
            let h = self.s.head_q[k];
            let slot = k * b + h as usize % b;
            o.dlv_src_o = k as u8;
            o.dlv_seq_o = h;
            if self.s.vld_q[slot] {
                o.dlv_id_o = self.s.id_q[slot];
                self.s.vld_q[slot] = false;
                self.occ[k] -= 1;
                ev.from_rsq = true;
            } else {
                let x = self.arr[k].expect("bypass without arrival");
                o.dlv_id_o = i.arr_id_i[x];
                o.dlv_byp_o = true;
                bypassed = Some(k);
            }
            ev.wrap = h as u32 == p.seq_mod() - 1;
            ev.delivered = true;
        }

        // 3. Admission, seeing the delivery.
        let half = p.seq_mod() / 2;
        for k in 0..n {
            let Some(x) = self.arr[k] else { continue };
            let s = i.arr_seq_i[x];
            let fate = if bypassed == Some(k) {
                Fate::Delivered
            } else {
                // The expected one from the registers (the delivery does not
                // move it); the window from the head after the delivery.
                let exp = o.exp_seq_o[k];
                let h = if g == Some(k) {
                    self.add(self.s.head_q[k], 1)
                } else {
                    self.s.head_q[k]
                };
                let d = self.dist(s, h);
                let slot = k * b + s as usize % b;
                if (d as usize) < b {
                    if self.s.vld_q[slot] {
                        ev.dup_held = true;
                        Fate::Duplicate
                    } else if s == exp || self.scheme == Some(Scheme::Sr) {
                        self.s.vld_q[slot] = true;
                        self.occ[k] += 1;
                        self.s.id_q[slot] = i.arr_id_i[x];
                        ev.freed_reused |= g == Some(k) && d as usize == b - 1;
                        if s == exp {
                            Fate::InOrder
                        } else {
                            Fate::OutOfOrder
                        }
                    } else {
                        ev.gbn_dropped = true;
                        Fate::OutOfWindow
                    }
                } else if d >= half {
                    ev.dup_behind = true;
                    Fate::Duplicate
                } else {
                    Fate::OutOfWindow
                }
            };
            if matches!(fate, Fate::Delivered | Fate::InOrder) {
                // Its successor already held: a run is released.
                let nx = self.add(s, 1);
                let h = self.s.head_q[k];
                let hn = if g == Some(k) { self.add(h, 1) } else { h };
                ev.hole_filled |=
                    (self.dist(nx, hn) as usize) < b && self.s.vld_q[k * b + nx as usize % b];
            }
            o.arr_fate_o[x] = fate.code();
        }
        if let Some(k) = g {
            self.s.head_q[k] = self.add(self.s.head_q[k], 1);
        }
        for &c in &o.arr_fate_o {
            ev.fates[c as usize] += 1;
        }
        o.crd_o = u8::from(g.is_some())
            + [
                Fate::Duplicate,
                Fate::OutOfWindow,
                Fate::Conflict,
                Fate::Refused,
            ]
            .iter()
            .map(|&f| ev.fates[f as usize])
            .sum::<u8>();

        // 4. Counters.
        let max = p.cnt_max();
        let fc = |f: Fate| ev.fates[f as usize] as u64;
        let mut sat = false;
        for (q, inc) in [
            (&mut self.s.cnt_dlv_q, u64::from(g.is_some())),
            (&mut self.s.cnt_dup_q, fc(Fate::Duplicate)),
            (&mut self.s.cnt_oow_q, fc(Fate::OutOfWindow)),
            (&mut self.s.cnt_ooo_q, fc(Fate::OutOfOrder)),
            (&mut self.s.cnt_wait_q, held_total),
        ] {
            let mut c = SatCnt {
                count: *q as u64,
                max,
            };
            sat |= c.clock(false, inc, 0);
            *q = c.count as u32;
        }
        ev.saturated = sat;
        self.ev = ev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> StxEgressParams {
        StxEgressParams::default()
    }

    /// One cycle with cells `(src, seq, id)` on the receivers.
    fn cyc(m: &mut StxEgress, cells: &[(u8, u16, u16)], ready: bool) -> StxEgressOutputs {
        let mut i = StxEgressInputs::zero(m.params());
        for (x, &(src, seq, id)) in cells.iter().enumerate() {
            i.arr_valid_i[x] = true;
            i.arr_src_i[x] = src;
            i.arr_seq_i[x] = seq;
            i.arr_id_i[x] = id;
        }
        i.dlv_ready_i = ready;
        let o = m.step(&i);
        m.assert_invariants();
        o
    }

    fn fate(o: &StxEgressOutputs, x: usize) -> Fate {
        Fate::from_code(o.arr_fate_o[x])
    }

    #[test]
    fn in_order_leaves_at_once_out_of_order_waits() {
        let mut m = StxEgress::new(&p(), &StxEgress::default_config(&p()));
        let o = cyc(&mut m, &[(3, 0, 10)], true);
        assert_eq!(fate(&o, 0), Fate::Delivered);
        assert!(o.dlv_valid_o && o.dlv_byp_o);
        assert_eq!((o.dlv_src_o, o.dlv_seq_o, o.dlv_id_o), (3, 0, 10));
        // 2 before 1: held; 1 fills the hole, 1 and 2 leave on two cycles.
        let o = cyc(&mut m, &[(3, 2, 12)], true);
        assert_eq!(fate(&o, 0), Fate::OutOfOrder);
        assert!(!o.dlv_valid_o);
        let o = cyc(&mut m, &[(3, 1, 11)], true);
        assert_eq!(fate(&o, 0), Fate::Delivered);
        assert!(m.events().hole_filled);
        let o = cyc(&mut m, &[], true);
        assert_eq!((o.dlv_seq_o, o.dlv_id_o, o.dlv_byp_o), (2, 12, false));
        assert_eq!(o.exp_seq_o[3], 3);
        // A copy of 1: behind the head.
        let o = cyc(&mut m, &[(3, 1, 11)], true);
        assert_eq!(fate(&o, 0), Fate::Duplicate);
        assert_eq!(m.state().cnt_dup_q, 1);
        assert_eq!(m.state().cnt_dlv_q, 3);
        assert_eq!(m.state().cnt_ooo_q, 1);
        assert_eq!(m.state().cnt_wait_q, 2, "cell 2 held two cycle boundaries");
    }

    #[test]
    fn window_freed_slot_and_conflict() {
        let mut m = StxEgress::new(&p(), &StxEgress::default_config(&p()));
        // Output stalled: 0..7 of input 1 fill the RSQ.
        for s in 0..8 {
            let o = cyc(&mut m, &[(1, s, s)], false);
            assert_eq!(fate(&o, 0), Fate::InOrder);
        }
        // 8 does not fit; with the head leaving it does.
        let o = cyc(&mut m, &[(1, 8, 8)], false);
        assert_eq!(fate(&o, 0), Fate::OutOfWindow);
        let o = cyc(&mut m, &[(1, 8, 8), (1, 9, 9)], true);
        assert_eq!(fate(&o, 0), Fate::InOrder);
        assert_eq!(fate(&o, 1), Fate::Conflict);
        assert!(m.events().freed_reused);
        assert_eq!(m.occupancy(1), 8);
        // Behind by more than half the sequence space is a duplicate; 128 ahead too.
        let o = cyc(&mut m, &[(1, 200, 0), (2, 128, 0)], false);
        assert_eq!(fate(&o, 0), Fate::Duplicate);
        assert_eq!(fate(&o, 1), Fate::Duplicate);
        let o = cyc(&mut m, &[(2, 127, 0)], false);
        assert_eq!(fate(&o, 0), Fate::OutOfWindow);
    }

    #[test]
    fn go_back_n_takes_only_the_next() {
        let c = StxEgressConfig {
            cfg_scheme_i: Scheme::Gbn.code(),
        };
        let mut m = StxEgress::new(&p(), &c);
        let o = cyc(&mut m, &[(0, 1, 1)], true);
        assert_eq!(fate(&o, 0), Fate::OutOfWindow);
        let o = cyc(&mut m, &[(0, 0, 0)], false);
        assert_eq!(fate(&o, 0), Fate::InOrder);
        let o = cyc(&mut m, &[(0, 1, 1)], false);
        assert_eq!(fate(&o, 0), Fate::InOrder);
        let o = cyc(&mut m, &[(0, 1, 1)], true);
        assert_eq!(fate(&o, 0), Fate::Duplicate);
        assert_eq!((o.dlv_seq_o, o.dlv_byp_o), (0, false));
    }

    /// At `SW = log2(B) + 1` (the margin `2^(SW-1) - B` is 0): a copy
    /// `2^(SW-1)` behind the head is a duplicate, one `2^(SW-1) + 1` behind
    /// falls into the window and is taken for a new cell. So a switch must
    /// keep duplicates within `2^(SW-1)` of the head (`docs/stx_switch.md`,
    /// the duplicate rule), not within `2^(SW-1) - B`.
    #[test]
    fn duplicates_are_recognised_at_the_margin() {
        let p = StxEgressParams {
            n: 2,
            r: 1,
            b: 8,
            sw: 4,
            iw: 8,
            cntw: 8,
        };
        let half = 1u32 << (p.sw - 1);
        for (lag, want) in [
            (1u32, Fate::Duplicate),
            (half, Fate::Duplicate),
            (half + 1, Fate::OutOfOrder),
        ] {
            let mut m = StxEgress::new(&p, &StxEgress::default_config(&p));
            // Deliver 20 cells of input 0 in order (the head wraps past 16).
            for s in 0..20u16 {
                let o = cyc(&mut m, &[(0, s % 16, s)], true);
                assert_eq!(fate(&o, 0), Fate::Delivered);
            }
            let head = m.head(0);
            let old = p.seq().add(head, (1 << p.sw) - lag);
            let o = cyc(&mut m, &[(0, old, 0xee)], false);
            assert_eq!(fate(&o, 0), want, "a copy {lag} behind the head");
        }
    }

    #[test]
    fn wraps_and_checks() {
        let q = StxEgressParams {
            n: 2,
            r: 1,
            b: 2,
            sw: 2,
            iw: 1,
            cntw: 3,
        };
        let mut m = StxEgress::new(&q, &StxEgress::default_config(&q));
        for s in 0..10u16 {
            let o = cyc(&mut m, &[(0, s % 4, 0)], true);
            assert_eq!(fate(&o, 0), Fate::Delivered);
        }
        assert_eq!(m.state().cnt_dlv_q, 7, "saturated");
        assert_eq!(m.head(0), 2);
        let bad = StxEgressConfig {
            cfg_scheme_i: u2::new(3),
        };
        let e = StxEgress::check(&q, &bad).unwrap_err();
        assert_eq!(e.field, "cfg_scheme_i");
        let e = StxEgress::check(
            &StxEgressParams { sw: 1, ..q },
            &StxEgress::default_config(&q),
        )
        .unwrap_err();
        assert_eq!(e.field, "SW");
        let mut m = StxEgress::new(&q, &bad);
        let o = cyc(&mut m, &[(0, 0, 0)], true);
        assert!(o.cfg_err_o && !o.dlv_valid_o);
        assert_eq!(fate(&o, 0), Fate::Refused);
    }
}
