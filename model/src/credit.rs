//! Golden model of the credit scheduler (`rtl/credit.v`, spec `docs/credit.md`).
//!
//! Two halves on one clock, sharing no state:
//!
//! - egress: per egress port a credit generator (quantum `Q` bytes, exact
//!   fractional rate `num / den` credits per cycle, only while
//!   `out + occ + Q <= B`) and a round-robin allocator, by port or by slice;
//! - ingress: a signed byte balance per VOQ and a round-robin dequeue
//!   arbiter per ingress port (a VOQ is eligible while its balance is
//!   positive; a packet may overdraw).
//!
//! The fabric between them (credit delay, data delay, link drain,
//! announcements) is the testbench's. Latency: credits and dequeues are
//! outputs of the same cycle (combinational); balances, occupancies,
//! accumulators, backlog bits and pointers are the registers at the start
//! of the cycle. Order inside a cycle: ingress — credit arrivals, dequeue;
//! egress — departure, arrivals, announcements, accumulator, grant.

use crate::block::{check_param, check_pow2, check_range, refill, Block, ConfigError, Params};
use crate::port::{mask, PortGroup};
use crate::prim::rr_pick;
use crate::timing::Alignment;
use arbitrary_int::u6;

/// Number of `err_o` bits.
pub const ERR_BITS: u32 = 6;
/// `err_o` bit: departure larger than the occupancy.
pub const ERR_DEP_UNDERFLOW: u8 = 1 << 0;
/// `err_o` bit: occupancy saturated on arrivals.
pub const ERR_OCC_SAT: u8 = 1 << 1;
/// `err_o` bit: `out` saturated at its minimum on arrivals.
pub const ERR_OUT_SAT: u8 = 1 << 2;
/// `err_o` bit: a balance saturated at its maximum on a credit.
pub const ERR_BAL_SAT: u8 = 1 << 3;
/// `err_o` bit: an index out of range (message ignored).
pub const ERR_INDEX: u8 = 1 << 4;
/// `err_o` bit: egress occupancy above the configured buffer.
pub const ERR_OVERFLOW: u8 = 1 << 5;

/// Structural parameters (the Verilog parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditParams {
    /// Egress ports `E`.
    pub e: usize,
    /// Ingress ports `I`.
    pub i: usize,
    /// Slices `S` (a power of two).
    pub s: usize,
    /// Length / quantum width `LW` (bytes).
    pub lw: u32,
    /// Egress counter width `CW` (bytes).
    pub cw: u32,
    /// Balance width `BW` (signed).
    pub bw: u32,
    /// Rate width `RW`.
    pub rw: u32,
}

/// `ceil(log2(n))`, at least 1 (a port index of `n >= 2` things).
pub const fn clog2(n: usize) -> u32 {
    if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

impl CreditParams {
    /// Number of VOQs `I * E`.
    pub const fn voqs(&self) -> usize {
        self.i * self.e
    }
    /// Width of an egress port index.
    pub const fn ew(&self) -> u32 {
        clog2(self.e)
    }
    /// Width of an ingress port index.
    pub const fn iw(&self) -> u32 {
        clog2(self.i)
    }
    /// Width of a slice index.
    pub const fn sw(&self) -> u32 {
        clog2(self.s)
    }
    /// Width of `out` (signed).
    pub const fn ow(&self) -> u32 {
        self.cw + 1
    }
    /// Largest length / quantum.
    pub const fn lmax(&self) -> i64 {
        mask(self.lw) as i64
    }
    /// Largest balance.
    pub const fn bmax(&self) -> i64 {
        (1i64 << (self.bw - 1)) - 1
    }
    /// Lowest balance the rules can produce: `1 - Lmax`.
    pub const fn bmin(&self) -> i64 {
        1 - self.lmax()
    }
    /// Largest occupancy.
    pub const fn occ_max(&self) -> i64 {
        mask(self.cw) as i64
    }
    /// Lowest `out`: `-2^CW`.
    pub const fn out_min(&self) -> i64 {
        -(1i64 << self.cw)
    }
    /// Largest rate numerator / denominator.
    pub const fn rate_max(&self) -> u32 {
        mask(self.rw) as u32
    }
    /// Flat index of VOQ `(i, e)`.
    pub const fn voq(&self, i: usize, e: usize) -> usize {
        i * self.e + e
    }
    /// Checks the structural parameters against the spec's table.
    pub fn check(&self) -> Result<(), ConfigError> {
        check_param("E", "egress ports", self.e, 2, 32)?;
        check_param("I", "ingress ports", self.i, 2, 32)?;
        check_pow2("S", "slices", self.s, 2, 8)?;
        check_param("LW", "length bits", self.lw as usize, 4, 16)?;
        check_param("CW", "credit bits", self.cw as usize, self.lw as usize, 30)?;
        check_param(
            "BW",
            "balance bits",
            self.bw as usize,
            self.lw as usize + 1,
            32,
        )?;
        check_param("RW", "rate bits", self.rw as usize, 2, 16)?;
        Ok(())
    }
}

impl Default for CreditParams {
    fn default() -> Self {
        CreditParams {
            e: 4,
            i: 4,
            s: 2,
            lw: 14,
            cw: 20,
            bw: 22,
            rw: 16,
        }
    }
}

impl Params for CreditParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("E", self.e as u64),
            ("I", self.i as u64),
            ("S", self.s as u64),
            ("LW", self.lw as u64),
            ("CW", self.cw as u64),
            ("BW", self.bw as u64),
            ("RW", self.rw as u64),
        ]
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct CreditConfig<CreditParams> |p| {
        /// Credit quantum Q per egress port (bytes, 1..2^LW-1).
        cfg_quantum_i: Vec<u16> = (p.lw, p.e),
        /// Rate numerator per egress port: num/den credits per cycle.
        cfg_rate_num_i: Vec<u16> = (p.rw, p.e),
        /// Rate denominator per egress port (>= 1, >= num).
        cfg_rate_den_i: Vec<u16> = (p.rw, p.e),
        /// Egress buffer B per egress port (bytes).
        cfg_buf_i: Vec<u32> = (p.cw, p.e),
        /// Per egress port: 1 allocates by slice, 0 by port.
        cfg_slice_mode_i: Vec<bool> = (1, p.e),
        /// Slice of each ingress port.
        cfg_slice_i: Vec<u8> = (p.sw(), p.i),
    }
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct CreditInputs<CreditParams> |p| {
        /// A credit message from egress port e reaches the ingress.
        cin_valid_i: Vec<bool> = (1, p.e),
        /// Its ingress port (VOQ (cin_ing_i[e], e)).
        cin_ing_i: Vec<u8> = (p.iw(), p.e),
        /// Its bytes.
        cin_bytes_i: Vec<u16> = (p.lw, p.e),
        /// Head-of-line packet length per VOQ i*E+e (0: empty).
        hol_len_i: Vec<u16> = (p.lw, p.voqs()),
        /// Data on the fabric channel of ingress port i reaches an egress buffer.
        earr_valid_i: Vec<bool> = (1, p.i),
        /// Its egress port.
        earr_egr_i: Vec<u8> = (p.ew(), p.i),
        /// Its bytes.
        earr_bytes_i: Vec<u16> = (p.lw, p.i),
        /// Bytes the egress link of e takes from its buffer (0: none).
        edep_bytes_i: Vec<u16> = (p.lw, p.e),
        /// VOQ announces it became backlogged.
        ann_bl_i: Vec<bool> = (1, p.voqs()),
        /// VOQ announces it became empty.
        ann_mt_i: Vec<bool> = (1, p.voqs()),
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct CreditOutputs<CreditParams> |p| {
        /// Egress port e issues a credit this cycle.
        crd_valid_o: Vec<bool> = (1, p.e),
        /// Its ingress port (0 when not valid).
        crd_ing_o: Vec<u8> = (p.iw(), p.e),
        /// Its bytes, Q (0 when not valid).
        crd_bytes_o: Vec<u16> = (p.lw, p.e),
        /// Ingress port i dequeues a packet this cycle.
        deq_valid_o: Vec<bool> = (1, p.i),
        /// Its egress port (0 when not valid).
        deq_egr_o: Vec<u8> = (p.ew(), p.i),
        /// Its bytes (0 when not valid).
        deq_bytes_o: Vec<u16> = (p.lw, p.i),
        /// VOQ balances, two's complement BW bits (registered).
        bal_o: Vec<u32> = (p.bw, p.voqs()),
        /// Egress buffer occupancy (registered).
        occ_o: Vec<u32> = (p.cw, p.e),
        /// Credit bytes outstanding, two's complement CW+1 bits (registered).
        out_o: Vec<u32> = (p.ow(), p.e),
        /// Rate accumulators (registered).
        acc_o: Vec<u16> = (p.rw, p.e),
        /// Backlog bits seen by the egress schedulers (registered).
        bl_o: Vec<bool> = (1, p.voqs()),
        /// Port-level round-robin pointers (registered).
        pptr_o: Vec<u8> = (p.iw(), p.e),
        /// Slice-level round-robin pointers (registered).
        sptr_o: Vec<u8> = (p.sw(), p.e),
        /// Member pointers, index e*S+s (registered).
        mptr_o: Vec<u8> = (p.iw(), p.e * p.s),
        /// Ingress dequeue pointers (registered).
        dptr_o: Vec<u8> = (p.ew(), p.i),
        /// Error / event flags (see ERR_*).
        err_o: u6 = ERR_BITS => Radix::Hex,
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's.
    pub struct CreditState<CreditParams> |p| {
        /// VOQ balances, two's complement.
        bal_q: Vec<u32> = (p.bw, p.voqs()),
        /// Egress occupancies.
        occ_q: Vec<u32> = (p.cw, p.e),
        /// Credit bytes outstanding, two's complement.
        out_q: Vec<u32> = (p.ow(), p.e),
        /// Rate accumulators.
        acc_q: Vec<u16> = (p.rw, p.e),
        /// Backlog bits.
        bl_q: Vec<bool> = (1, p.voqs()),
        /// Port-level pointers.
        pptr_q: Vec<u8> = (p.iw(), p.e),
        /// Slice-level pointers.
        sptr_q: Vec<u8> = (p.sw(), p.e),
        /// Member pointers.
        mptr_q: Vec<u8> = (p.iw(), p.e * p.s),
        /// Dequeue pointers.
        dptr_q: Vec<u8> = (p.ew(), p.i),
    }
}

/// Sign-extends the low `w` bits of `raw`.
pub fn sx(raw: u32, w: u32) -> i64 {
    let sh = 64 - w;
    ((raw as u64) << sh) as i64 >> sh
}

/// The `w`-bit two's complement form of `v` (which must fit).
pub fn to_raw(v: i64, w: u32) -> u32 {
    assert!(
        v >= -(1i64 << (w - 1)) && v < (1i64 << (w - 1)),
        "{v} does not fit {w} signed bits"
    );
    (v as u64 & mask(w)) as u32
}

crate::coverage_bins! {
    /// Functional coverage bins of the credit scheduler (indices into [`BINS`]).
    pub enum Bin / BINS {
        CreditPortLevel = "credit_port_level",
        CreditSliceLevel = "credit_slice_level",
        SliceGrantAmongSeveral = "slice_grant_among_several",
        RrPortPointerWraps = "rr_port_pointer_wraps",
        RrSlicePointerWraps = "rr_slice_pointer_wraps",
        CreditDueBufferFull = "credit_due_buffer_full",
        CreditDueIdle = "credit_due_idle",
        CreditExactFit = "credit_exact_fit",
        CreditOneByteShort = "credit_one_byte_short",
        AccumulatorWrap = "accumulator_wrap",
        AccumulatorEveryCycle = "accumulator_every_cycle",
        AllEgressGrant = "all_egress_grant",
        Dequeue = "dequeue",
        Overdraw = "overdraw",
        BalanceAtMin = "balance_at_min",
        BalanceSaturated = "balance_saturated",
        DeficitRepaid = "deficit_repaid",
        DequeueBlockedByBalance = "dequeue_blocked_by_balance",
        CreditAndDequeueSameVoq = "credit_and_dequeue_same_voq",
        DequeueRrSkips = "dequeue_rr_skips",
        ArrivalsCollide = "arrivals_collide",
        BufferExactlyFull = "buffer_exactly_full",
        OutNegative = "out_negative",
        AnnounceRace = "announce_race",
        EmptyAnnounceSkipsPointer = "empty_announce_skips_pointer",
        CreditToEmptyVoq = "credit_to_empty_voq",
        DepartureUnderflow = "departure_underflow",
        OccupancySaturated = "occupancy_saturated",
        OutSaturated = "out_saturated",
        IndexOutOfRange = "index_out_of_range",
        EgressOverflow = "egress_overflow",
        ConfigError = "config_error",
    }
}

/// What happened inside the last cycle (for coverage; not state).
#[derive(Clone, Debug, Default)]
struct Events {
    hits: Vec<Bin>,
}

/// The credit scheduler model.
#[derive(Clone, Debug)]
pub struct Credit {
    p: CreditParams,
    c: CreditConfig,
    cfg_err: bool,
    s: CreditState,
    ev: Events,
}

/// Whether configuration `c` is illegal for the hardware (`cfg_err_o`).
pub fn cfg_error(c: &CreditConfig) -> bool {
    (0..c.cfg_quantum_i.len()).any(|e| {
        c.cfg_quantum_i[e] == 0
            || c.cfg_rate_den_i[e] == 0
            || c.cfg_rate_num_i[e] > c.cfg_rate_den_i[e]
    })
}

impl Credit {
    /// The structural parameters.
    pub fn params(&self) -> &CreditParams {
        &self.p
    }
    /// The configuration.
    pub fn config(&self) -> &CreditConfig {
        &self.c
    }
    /// Balance of VOQ `(i, e)`.
    pub fn balance(&self, i: usize, e: usize) -> i64 {
        sx(self.s.bal_q[self.p.voq(i, e)], self.p.bw)
    }
    /// Egress buffer occupancy of `e`.
    pub fn occupancy(&self, e: usize) -> i64 {
        self.s.occ_q[e] as i64
    }
    /// Credit bytes outstanding at `e`.
    pub fn outstanding(&self, e: usize) -> i64 {
        sx(self.s.out_q[e], self.p.ow())
    }

    /// Checks the invariants that hold for any inputs; panics with the
    /// broken one.
    pub fn assert_invariants(&self) {
        let p = &self.p;
        let s = &self.s;
        for v in 0..p.voqs() {
            let b = sx(s.bal_q[v], p.bw);
            assert!(
                (p.bmin()..=p.bmax()).contains(&b),
                "balance of VOQ {v} = {b} outside {}..={}",
                p.bmin(),
                p.bmax()
            );
        }
        for e in 0..p.e {
            if !self.cfg_err {
                assert!(
                    s.acc_q[e] < self.c.cfg_rate_den_i[e],
                    "accumulator {e} = {} >= den {}",
                    s.acc_q[e],
                    self.c.cfg_rate_den_i[e]
                );
            } else {
                assert_eq!(s.acc_q[e], 0, "accumulator {e} under cfg_err");
            }
            assert!(self.outstanding(e) <= p.occ_max(), "out {e} above 2^CW-1");
            assert!((s.pptr_q[e] as usize) < p.i, "pptr {e}");
            assert!((s.sptr_q[e] as usize) < p.s, "sptr {e}");
            for sl in 0..p.s {
                assert!((s.mptr_q[e * p.s + sl] as usize) < p.i, "mptr {e} {sl}");
            }
        }
        for i in 0..p.i {
            assert!((s.dptr_q[i] as usize) < p.e, "dptr {i}");
        }
    }

    /// The invariant of a closed loop (every input consistent with what
    /// the block issued): `out + occ <= B` on every egress port.
    pub fn assert_closed_loop(&self) {
        for e in 0..self.p.e {
            let committed = self.outstanding(e) + self.occupancy(e);
            assert!(
                committed <= self.c.cfg_buf_i[e] as i64,
                "egress {e}: out {} + occ {} > B {}",
                self.outstanding(e),
                self.occupancy(e),
                self.c.cfg_buf_i[e]
            );
        }
    }
}

impl Block for Credit {
    const NAME: &'static str = "credit";
    type Params = CreditParams;
    type Config = CreditConfig;
    type Inputs = CreditInputs;
    type Outputs = CreditOutputs;
    type State = CreditState;

    fn variants() -> Vec<CreditParams> {
        vec![
            CreditParams::default(),
            CreditParams {
                e: 2,
                i: 3,
                s: 2,
                lw: 8,
                cw: 10,
                bw: 9,
                rw: 4,
            },
            // Four slices at a size the fuzz runs quickly.
            CreditParams {
                e: 3,
                i: 6,
                s: 4,
                lw: 12,
                cw: 16,
                bw: 14,
                rw: 8,
            },
        ]
    }

    /// The seed's slice: 18 x 400G egress ports, 32 ingress sources in
    /// four slices, cells of 256 B and credits of up to 4 KiB, buffers of
    /// one BDP (40 000 B) with room for the deficits. Its verilated model
    /// runs at about 2.4 k cycles/s (the default's 190 k), too slow for the
    /// fuzz's variant draw, so it is a scale size: synthesised by `make
    /// synth-scale`, run by `--variant`, and by the closed-loop test.
    fn scale() -> Vec<CreditParams> {
        vec![CreditParams {
            e: 18,
            i: 32,
            s: 4,
            lw: 12,
            cw: 18,
            bw: 19,
            rw: 8,
        }]
    }

    /// Two RTL clocks per step (the seed's one credit every two clocks
    /// per egress port), every output compared in the step's second clock
    /// (`L = 1`): the registers change only at the end of a step, so
    /// `bal_o` .. `dptr_o` still show the state at its start. The
    /// environment reacts to a step's credits and dequeues in the next
    /// step, after that clock, as the hardware's does.
    fn alignment(_: &CreditParams) -> Alignment {
        Alignment::slot(2)
    }

    fn default_config(p: &CreditParams) -> CreditConfig {
        // Cells of 256 B (or the largest length), one credit per two cycles
        // with a 5% fabric speed-up (21/40) where the rate width allows it,
        // a buffer of 16 quanta, odd egress ports allocating by slice, the
        // ingress ports in contiguous slices (I = 3, S = 2: {0, 1}, {2}).
        let q = 256.min(p.lmax()) as u16;
        let (num, den) = if p.rate_max() >= 40 { (21, 40) } else { (1, 2) };
        CreditConfig {
            cfg_quantum_i: vec![q; p.e],
            cfg_rate_num_i: vec![num; p.e],
            cfg_rate_den_i: vec![den; p.e],
            cfg_buf_i: vec![(16 * q as i64).min(p.occ_max()) as u32; p.e],
            cfg_slice_mode_i: (0..p.e).map(|e| e % 2 == 1).collect(),
            cfg_slice_i: (0..p.i).map(|i| (i * p.s / p.i) as u8).collect(),
        }
    }

    fn check(p: &CreditParams, c: &CreditConfig) -> Result<(), ConfigError> {
        p.check()?;
        c.to_words(p)?;
        for e in 0..p.e {
            let q = c.cfg_quantum_i[e] as u64;
            if q == 0 {
                return Err(ConfigError::new(
                    "cfg_quantum_i",
                    format!(
                        "egress {e}: quantum 0 is outside the legal range 1..={}",
                        p.lmax()
                    ),
                ));
            }
            let den = c.cfg_rate_den_i[e] as u64;
            check_range("cfg_rate_den_i", den, 1, p.rate_max() as u64)
                .map_err(|x| ConfigError::new(x.field, format!("egress {e}: {}", x.msg)))?;
            let num = c.cfg_rate_num_i[e] as u64;
            check_range("cfg_rate_num_i", num, 0, den).map_err(|x| {
                ConfigError::new(
                    x.field,
                    format!(
                        "egress {e}: {} (at most one credit per cycle: num <= den)",
                        x.msg
                    ),
                )
            })?;
        }
        Ok(())
    }

    fn new(p: &CreditParams, c: &CreditConfig) -> Self {
        Credit {
            p: *p,
            c: c.clone(),
            cfg_err: cfg_error(c),
            s: CreditState::zero(p),
            ev: Events::default(),
        }
    }

    fn state(&self) -> &CreditState {
        &self.s
    }

    fn params(&self) -> &CreditParams {
        &self.p
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &CreditInputs, o: &CreditOutputs, hits: &mut [u64]) {
        for &b in &self.ev.hits {
            hits[b as usize] += 1;
        }
        let p = &self.p;
        let s = &self.s;
        for e in 0..p.e {
            let occ = s.occ_q[e] as i64;
            if occ == self.c.cfg_buf_i[e] as i64 && occ > 0 {
                hits[Bin::BufferExactlyFull as usize] += 1;
            }
            if self.outstanding(e) < 0 {
                hits[Bin::OutNegative as usize] += 1;
            }
        }
        let err = o.err_o.value();
        for (bit, bin) in [
            (ERR_DEP_UNDERFLOW, Bin::DepartureUnderflow),
            (ERR_OCC_SAT, Bin::OccupancySaturated),
            (ERR_OUT_SAT, Bin::OutSaturated),
            (ERR_BAL_SAT, Bin::BalanceSaturated),
            (ERR_INDEX, Bin::IndexOutOfRange),
            (ERR_OVERFLOW, Bin::EgressOverflow),
        ] {
            if err & bit != 0 {
                hits[bin as usize] += 1;
            }
        }
        if o.cfg_err_o {
            hits[Bin::ConfigError as usize] += 1;
        }
    }

    /// One step (two RTL clocks), in next-state form: every `*_d` is a
    /// function of the registers at the start of the step (`self.s`, the
    /// RTL's `*_q`) and the step's inputs; nothing of `self.s` changes
    /// until the end. The names follow `rtl/credit.v`: phase A gives
    /// `bal_a` (balances after the credits, the RTL's `bal_q` in phase B),
    /// `occ1`, the arrival sum, `bl_d`, `acc_d` and `due`; phase B the
    /// dequeues, `bal_d`, `occ_d`, `out_d`, the grants and the pointers.
    fn step_into(&mut self, inp: &CreditInputs, o: &mut CreditOutputs) {
        let p = self.p;
        let c = &self.c;
        let q = &self.s;
        let mut err = 0u8;
        let mut ev = Vec::new();
        let (ne, ni, ns) = (p.e, p.i, p.s);

        refill(&mut o.crd_valid_o, ne, false);
        refill(&mut o.crd_ing_o, ne, 0);
        refill(&mut o.crd_bytes_o, ne, 0);
        refill(&mut o.deq_valid_o, ni, false);
        refill(&mut o.deq_egr_o, ni, 0);
        refill(&mut o.deq_bytes_o, ni, 0);
        o.bal_o.clone_from(&q.bal_q);
        o.occ_o.clone_from(&q.occ_q);
        o.out_o.clone_from(&q.out_q);
        o.acc_o.clone_from(&q.acc_q);
        o.bl_o.clone_from(&q.bl_q);
        o.pptr_o.clone_from(&q.pptr_q);
        o.sptr_o.clone_from(&q.sptr_q);
        o.mptr_o.clone_from(&q.mptr_q);
        o.dptr_o.clone_from(&q.dptr_q);
        o.err_o = u6::new(0);
        o.cfg_err_o = self.cfg_err;

        // ---------------------------------------------------------------
        // Ingress half
        // ---------------------------------------------------------------
        // A1. Credit arrivals, saturating at BMAX.
        let mut bal_a: Vec<i64> = q.bal_q.iter().map(|&r| sx(r, p.bw)).collect();
        let mut credited = vec![false; p.voqs()];
        for e in 0..ne {
            if !inp.cin_valid_i[e] {
                continue;
            }
            let i = inp.cin_ing_i[e] as usize;
            if i >= ni {
                err |= ERR_INDEX;
                continue;
            }
            let v = p.voq(i, e);
            credited[v] = true;
            if bal_a[v] < 0 {
                ev.push(Bin::DeficitRepaid);
            }
            if inp.hol_len_i[v] == 0 {
                ev.push(Bin::CreditToEmptyVoq);
            }
            let isum = bal_a[v] + inp.cin_bytes_i[e] as i64;
            if isum > p.bmax() {
                err |= ERR_BAL_SAT;
                bal_a[v] = p.bmax();
            } else {
                bal_a[v] = isum;
            }
        }
        // B2. Dequeue: round robin (prim_rr_arb u_deq) over the eligible
        // VOQs of each ingress port, on the balances after the credits.
        let mut bal_d = bal_a.clone();
        let mut dptr_d = q.dptr_q.clone();
        for i in 0..ni {
            let delig = (0..ne)
                .filter(|&e| inp.hol_len_i[p.voq(i, e)] > 0 && bal_a[p.voq(i, e)] > 0)
                .fold(0u64, |m, e| m | 1 << e);
            if delig.count_ones() >= 2 {
                ev.push(Bin::DequeueRrSkips);
            }
            if (0..ne).any(|e| inp.hol_len_i[p.voq(i, e)] > 0 && bal_a[p.voq(i, e)] <= 0) {
                ev.push(Bin::DequeueBlockedByBalance);
            }
            if let Some(e) = rr_pick(delig, ne as u32, q.dptr_q[i] as u32) {
                let e = e as usize;
                let v = p.voq(i, e);
                let len = inp.hol_len_i[v];
                bal_d[v] = bal_a[v] - len as i64;
                o.deq_valid_o[i] = true;
                o.deq_egr_o[i] = e as u8;
                o.deq_bytes_o[i] = len;
                dptr_d[i] = ((e + 1) % ne) as u8;
                ev.push(Bin::Dequeue);
                if bal_d[v] < 0 {
                    ev.push(Bin::Overdraw);
                }
                if bal_d[v] == p.bmin() {
                    ev.push(Bin::BalanceAtMin);
                }
                if credited[v] {
                    ev.push(Bin::CreditAndDequeueSameVoq);
                }
            }
        }

        // ---------------------------------------------------------------
        // Egress half
        // ---------------------------------------------------------------
        // A2. Arrivals per egress port, from the fabric channels (the RTL's
        // compressor tree).
        let mut asum = vec![0i64; ne];
        let mut arr_n = vec![0usize; ne];
        for i in 0..ni {
            if !inp.earr_valid_i[i] {
                continue;
            }
            let e = inp.earr_egr_i[i] as usize;
            if e >= ne {
                err |= ERR_INDEX;
                continue;
            }
            asum[e] += inp.earr_bytes_i[i] as i64;
            arr_n[e] += 1;
        }
        // A3. Announcements (backlogged wins).
        let bl_d: Vec<bool> = (0..p.voqs())
            .map(|v| {
                if inp.ann_bl_i[v] && inp.ann_mt_i[v] {
                    ev.push(Bin::AnnounceRace);
                }
                (q.bl_q[v] && !inp.ann_mt_i[v]) || inp.ann_bl_i[v]
            })
            .collect();
        let mut occ_d = q.occ_q.clone();
        let mut out_d = q.out_q.clone();
        let mut acc_d = q.acc_q.clone();
        let mut pptr_d = q.pptr_q.clone();
        let mut sptr_d = q.sptr_q.clone();
        let mut mptr_d = q.mptr_q.clone();
        let mut grants = 0;
        for e in 0..ne {
            if arr_n[e] >= 2 {
                ev.push(Bin::ArrivalsCollide);
            }
            // A1. Departure (release), clamping at 0.
            let occ0 = q.occ_q[e] as i64;
            let dep = inp.edep_bytes_i[e] as i64;
            let occ1 = if dep > occ0 {
                err |= ERR_DEP_UNDERFLOW;
                0
            } else {
                occ0 - dep
            };
            // A4. Accumulator.
            let (num, den) = (c.cfg_rate_num_i[e] as u32, c.cfg_rate_den_i[e] as u32);
            let due = if self.cfg_err {
                acc_d[e] = 0;
                false
            } else {
                let accs = q.acc_q[e] as u32 + num;
                if accs >= den {
                    acc_d[e] = (accs - den) as u16;
                    if accs > den {
                        ev.push(Bin::AccumulatorWrap);
                    }
                    if num == den {
                        ev.push(Bin::AccumulatorEveryCycle);
                    }
                    true
                } else {
                    acc_d[e] = accs as u16;
                    false
                }
            };
            // B2. Arrivals: from outstanding into the buffer, saturating.
            let mut occ2 = occ1 + asum[e];
            if occ2 > p.occ_max() {
                err |= ERR_OCC_SAT;
                occ2 = p.occ_max();
            }
            let mut out2 = sx(q.out_q[e], p.ow()) - asum[e];
            if out2 < p.out_min() {
                err |= ERR_OUT_SAT;
                out2 = p.out_min();
            }
            let buf = c.cfg_buf_i[e] as i64;
            if occ2 > buf {
                err |= ERR_OVERFLOW;
            }
            // B5. Grant.
            let qb = c.cfg_quantum_i[e] as i64;
            let need = out2 + occ2 + qb;
            let room = need <= buf;
            let blcol = (0..ni)
                .filter(|&i| bl_d[p.voq(i, e)])
                .fold(0u64, |m, i| m | 1 << i);
            let ptr_i = q.pptr_q[e] as usize;
            if due && blcol != 0 && !room {
                ev.push(Bin::CreditDueBufferFull);
                if need == buf + 1 {
                    ev.push(Bin::CreditOneByteShort);
                }
            }
            if due && blcol == 0 {
                ev.push(Bin::CreditDueIdle);
            }
            if q.bl_q[p.voq(ptr_i, e)]
                && inp.ann_mt_i[p.voq(ptr_i, e)]
                && !inp.ann_bl_i[p.voq(ptr_i, e)]
            {
                ev.push(Bin::EmptyAnnounceSkipsPointer);
            }
            if due && blcol != 0 && room {
                let i = if c.cfg_slice_mode_i[e] {
                    // Slice pick (u_slice), then the slice's member pick
                    // (u_member, one per slice, all computed in parallel).
                    let memb = |sl: usize| {
                        (0..ni)
                            .filter(|&i| c.cfg_slice_i[i] as usize == sl)
                            .fold(0u64, |m, i| m | 1 << i)
                    };
                    let selig = (0..ns)
                        .filter(|&sl| blcol & memb(sl) != 0)
                        .fold(0u64, |m, sl| m | 1 << sl);
                    let sl = rr_pick(selig, ns as u32, q.sptr_q[e] as u32)
                        .expect("a backlogged VOQ belongs to an eligible slice")
                        as usize;
                    let mp = e * ns + sl;
                    let melig = blcol & memb(sl);
                    let i = rr_pick(melig, ni as u32, q.mptr_q[mp] as u32)
                        .expect("the eligible slice has a backlogged member")
                        as usize;
                    sptr_d[e] = ((sl + 1) % ns) as u8;
                    mptr_d[mp] = ((i + 1) % ni) as u8;
                    ev.push(Bin::CreditSliceLevel);
                    if melig.count_ones() >= 2 {
                        ev.push(Bin::SliceGrantAmongSeveral);
                    }
                    if sl == ns - 1 {
                        ev.push(Bin::RrSlicePointerWraps);
                    }
                    i
                } else {
                    let i = rr_pick(blcol, ni as u32, ptr_i as u32).expect("some VOQ is backlogged")
                        as usize;
                    pptr_d[e] = ((i + 1) % ni) as u8;
                    ev.push(Bin::CreditPortLevel);
                    if i == ni - 1 {
                        ev.push(Bin::RrPortPointerWraps);
                    }
                    i
                };
                if need == buf {
                    ev.push(Bin::CreditExactFit);
                }
                // B6. Issue.
                out2 += qb;
                o.crd_valid_o[e] = true;
                o.crd_ing_o[e] = i as u8;
                o.crd_bytes_o[e] = qb as u16;
                grants += 1;
            }
            occ_d[e] = occ2 as u32;
            out_d[e] = to_raw(out2, p.ow());
        }
        if grants == ne {
            ev.push(Bin::AllEgressGrant);
        }

        o.err_o = u6::new(err);
        self.s = CreditState {
            bal_q: bal_d.iter().map(|&b| to_raw(b, p.bw)).collect(),
            occ_q: occ_d,
            out_q: out_d,
            acc_q: acc_d,
            bl_q: bl_d,
            pptr_q: pptr_d,
            sptr_q: sptr_d,
            mptr_q: mptr_d,
            dptr_q: dptr_d,
        };
        self.ev = Events { hits: ev };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clog2_is_the_smallest_width_that_counts_to_n() {
        for n in 0..5000usize {
            let w = (0..64).find(|&w| (1usize << w) >= n).unwrap();
            assert_eq!(clog2(n), w, "n = {n}");
        }
    }

    fn quiet(p: &CreditParams) -> CreditInputs {
        CreditInputs::zero(p)
    }

    #[test]
    fn reference_overdraw_example() {
        // REFERENCE.md: balance 100 B, packet 1500 B -> -1400; with 1024 B
        // credits, exactly two credits later +648 and eligible again.
        let p = CreditParams::default();
        let c = Credit::default_config(&p);
        let mut m = Credit::new(&p, &c);
        let mut i = quiet(&p);
        i.cin_valid_i[1] = true;
        i.cin_ing_i[1] = 2;
        i.cin_bytes_i[1] = 100;
        m.step(&i);
        assert_eq!(m.balance(2, 1), 100);
        let mut i = quiet(&p);
        i.hol_len_i[p.voq(2, 1)] = 1500;
        let o = m.step(&i);
        assert!(o.deq_valid_o[2]);
        assert_eq!((o.deq_egr_o[2], o.deq_bytes_o[2]), (1, 1500));
        assert_eq!(m.balance(2, 1), -1400);
        for (k, want) in [(0, -376i64), (1, 648)] {
            let mut i = quiet(&p);
            i.hol_len_i[p.voq(2, 1)] = 1500;
            i.cin_valid_i[1] = true;
            i.cin_ing_i[1] = 2;
            i.cin_bytes_i[1] = 1024;
            let o = m.step(&i);
            if k == 0 {
                assert!(!o.deq_valid_o[2], "not eligible at -376");
                assert_eq!(m.balance(2, 1), want);
            } else {
                // +648 after the credit: eligible in the same cycle.
                assert!(o.deq_valid_o[2]);
                assert_eq!(m.balance(2, 1), want - 1500);
            }
        }
        m.assert_invariants();
    }

    #[test]
    fn accumulator_is_exact() {
        let p = CreditParams::default();
        let mut c = Credit::default_config(&p);
        c.cfg_rate_num_i[0] = 21;
        c.cfg_rate_den_i[0] = 40;
        c.cfg_buf_i[0] = p.occ_max() as u32;
        let mut m = Credit::new(&p, &c);
        let mut i = quiet(&p);
        i.ann_bl_i[p.voq(0, 0)] = true;
        let mut n = 0u64;
        for t in 0..40_000u64 {
            let o = m.step(&i);
            i.ann_bl_i[p.voq(0, 0)] = false;
            // Keep out bounded: the credited bytes arrive and leave at once.
            n += o.crd_valid_o[0] as u64;
            assert_eq!(n, (t + 1) * 21 / 40, "cycle {t}");
            let mut j = quiet(&p);
            j.earr_valid_i[0] = o.crd_valid_o[0];
            j.earr_bytes_i[0] = o.crd_bytes_o[0];
            let occ = m.occupancy(0) as u16;
            j.edep_bytes_i[0] = occ;
            i = j;
        }
    }

    #[test]
    fn illegal_configuration_is_rejected_and_flagged() {
        let p = CreditParams::default();
        let mut c = Credit::default_config(&p);
        c.cfg_rate_num_i[2] = 41;
        let e = Credit::check(&p, &c).unwrap_err();
        assert_eq!(e.field, "cfg_rate_num_i");
        assert!(
            e.msg.contains("egress 2") && e.msg.contains("0..=40"),
            "{e}"
        );
        let mut m = Credit::new(&p, &c);
        let mut i = quiet(&p);
        i.ann_bl_i.iter_mut().for_each(|b| *b = true);
        for _ in 0..10 {
            let o = m.step(&i);
            assert!(o.cfg_err_o);
            assert!(o.crd_valid_o.iter().all(|v| !v));
        }
        m.assert_invariants();
        c.cfg_rate_num_i[2] = 1;
        c.cfg_quantum_i[0] = 0;
        assert_eq!(Credit::check(&p, &c).unwrap_err().field, "cfg_quantum_i");
    }

    #[test]
    fn signed_raw_round_trip() {
        for w in [9u32, 14, 22, 32] {
            for v in [-(1i64 << (w - 1)), -1, 0, 1, (1i64 << (w - 1)) - 1] {
                assert_eq!(sx(to_raw(v, w), w), v);
            }
        }
    }
}
