//! Golden model of the OSMOSIS crossbar arbiter: iSLIP with speculative
//! transmission (STX) (`rtl/arbiter.v`, spec `docs/arbiter.md`).
//!
//! The central arbiter of an `N x N` input-queued crossbar with `R` receivers
//! per output: request counters per VOQ fed by the incremental request
//! protocol, an iSLIP matching of 1 to 8 iterations, and the resolution of
//! speculative requests (rules R3/R4 of the STX paper) with ACKs.
//!
//! # Slots and `step`
//!
//! **One slot is one [`Block::step`].** Everything of a slot happens in
//! that call: the inputs of the slot (new requests, SRQs) go in, the outputs
//! of the slot (grants, ACKs, crossbar configuration) come out, and the
//! model is left in the state of the next slot. The grant, ACK and crossbar
//! outputs depend on this slot's inputs (a request can be granted in the
//! slot it arrives); the counters, pointers and LFSR outputs are the
//! registers at the start of the slot. The RTL spends `CLK_PER_SLOT` clocks
//! on a slot (one iSLIP iteration per clock, the STX resolution in the
//! last), with its inputs held and its outputs compared in the slot's last
//! clock ([`Block::alignment`]: `Alignment::slot(K)`); what it computes per
//! slot is this step, whatever `K`, for every legal iteration count
//! (`1..=`[`ArbiterParams::max_iter`]).
//!
//! # Use from a system simulation
//!
//! ```
//! use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterParams};
//! use model::Block;
//!
//! let p = ArbiterParams::osmosis(); // N = 64, CW = 10
//! // R = 2 receivers, 1 iSLIP iteration, STX on, cells reach the crossbar
//! // 64 slots after their grant (RTT = 64).
//! let c = ArbiterConfig::new(2, 1, true, 64);
//! Arbiter::check(&p, &c).unwrap();
//! let mut arb = Arbiter::new(&p, &c);
//! let mut i = ArbiterInputs::idle(&p);
//! i.request(3, 7); // input 3 reports a new cell for output 7 (R1)
//! i.speculate(5, 7, 42); // input 5's cell with sequence number 42 is in the crossbar now
//! let o = arb.step(&i);
//! assert_eq!(o.grant(3), Some(7)); // granted in the same slot
//! assert_eq!(o.ack(5), Some(42)); // output 7 has no arbitrated cell now: STX succeeds
//! assert_eq!(o.receivers(7), 1 << 5);
//! ```
//!
//! The arbiter knows nothing of cells: what an input sends on a grant, and
//! whether it obeys R2, is the system's business.

use crate::block::{check_param, check_pow2, check_range, refill, Block, ConfigError, Params};
use crate::port::{mask, PortGroup};
use crate::timing::Alignment;
use arbitrary_int::{u3, u4, u7};

/// Sequence number width of SRQs and ACKs.
pub const SW: u32 = 16;
/// The most iSLIP iterations per slot (largest legal `cfg_iter_i` when the
/// slot has the clocks for them: [`ArbiterParams::max_iter`]).
pub const MAX_ITER: u32 = 8;
/// The paper's clocks per slot: a 51.2 ns cell at about 1 GHz.
pub const PAPER_CLK_PER_SLOT: u32 = 50;
/// Depth of the crossbar delay line (`cfg_xbar_delay_i` is `0..DL`).
pub const DL: usize = 128;
/// Reset value of the collision LFSR.
pub const LFSR_SEED: u32 = 0xACE1_ACE1;
/// Feedback mask of the Galois LFSR (`x^32 + x^22 + x^2 + x + 1`).
pub const LFSR_TAPS: u32 = 0x8020_0003;
/// LFSR steps per slot.
pub const LFSR_STEPS: u32 = 16;
/// Multiplier that spreads the output index over the 16 random bits.
pub const OUT_HASH: u32 = 0x9E37;
/// Width of the credit pool `cfg_crd_i` and of the credits in use.
pub const KW: u32 = 10;
/// Width of a credit return (`crd_ret_i`, per output).
pub const RETW: u32 = 8;
/// The largest credit pool `cfg_crd_i`.
pub const CRD_MAX: u16 = (1 << KW) - 1;

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArbiterParams {
    /// Ports (inputs = outputs), a power of two in 2..=64.
    pub n: usize,
    /// Request counter width, 2..=16.
    pub cw: u32,
    /// `CLK_PER_SLOT`: RTL clocks per slot, 1..=64 (one iSLIP iteration per
    /// clock, the STX resolution in the last; 1: everything in one clock).
    pub k: u32,
}

impl ArbiterParams {
    /// A variant with one clock per slot.
    pub const fn new(n: usize, cw: u32) -> Self {
        ArbiterParams { n, cw, k: 1 }
    }
    /// The same with `k` clocks per slot.
    pub const fn clocks(mut self, k: u32) -> Self {
        self.k = k;
        self
    }
    /// The OSMOSIS size: 64 ports, 10-bit request counters, the paper's
    /// clocks per slot.
    pub const fn osmosis() -> Self {
        ArbiterParams {
            n: 64,
            cw: 10,
            k: PAPER_CLK_PER_SLOT,
        }
    }
    /// The most iSLIP iterations a slot of `k` clocks holds: one per clock
    /// but the last (which resolves STX), at most [`MAX_ITER`]; all
    /// [`MAX_ITER`] with `k = 1`.
    pub const fn max_iter(&self) -> u32 {
        if self.k <= 1 {
            MAX_ITER
        } else if self.k - 1 < MAX_ITER {
            self.k - 1
        } else {
            MAX_ITER
        }
    }
    /// Width of a port index (at least 1).
    pub const fn iw(&self) -> u32 {
        let w = self.n.trailing_zeros();
        if w == 0 {
            1
        } else {
            w
        }
    }
    /// Largest value of a request counter.
    pub const fn cnt_max(&self) -> u16 {
        mask(self.cw) as u16
    }
    /// Mask of the `N` port bits.
    pub const fn all(&self) -> u64 {
        mask(self.n as u32)
    }
}

impl Default for ArbiterParams {
    fn default() -> Self {
        ArbiterParams { n: 4, cw: 4, k: 8 }
    }
}

impl Params for ArbiterParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("N", self.n as u64),
            ("CW", self.cw as u64),
            ("CLK_PER_SLOT", self.k as u64),
        ]
    }
    /// `n64cw10k9`: N, CW and K (`CLK_PER_SLOT`).
    fn label(&self) -> String {
        format!("n{}cw{}k{}", self.n, self.cw, self.k)
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct ArbiterConfig<ArbiterParams> |p| {
        /// R: receivers per output (1..=127; R > N never collides).
        cfg_recv_i: u7 = 7,
        /// iSLIP iterations (1..=min(8, K - 1); 1..=8 with K = 1).
        cfg_iter_i: u4 = 4,
        /// Speculative transmission enabled (0: plain iSLIP).
        cfg_stx_en_i: bool = 1,
        /// D: slots from a grant to its cell's arrival in the crossbar (0..=127).
        cfg_xbar_delay_i: u7 = 7,
        /// C: credits per output (0: no flow control).
        cfg_crd_i: u16 = KW,
    }
}

crate::port_group! {
    /// Per-slot inputs.
    pub struct ArbiterInputs<ArbiterParams> |p| {
        /// Input i reports one new cell (incremental request) ...
        req_valid_i: Vec<bool> = (1, p.n),
        /// ... for this output.
        req_out_i: Vec<u8> = (p.iw(), p.n),
        /// Input i presents a speculative request (its cell is in the crossbar) ...
        spec_valid_i: Vec<bool> = (1, p.n),
        /// ... for this output ...
        spec_out_i: Vec<u8> = (p.iw(), p.n),
        /// ... with this sequence number.
        spec_seq_i: Vec<u16> = (SW, p.n),
        /// Credits output j's adapter returns in this slot.
        crd_ret_i: Vec<u8> = (RETW, p.n),
    }
}

crate::port_group! {
    /// Per-slot outputs.
    pub struct ArbiterOutputs<ArbiterParams> |p| {
        /// Input i is granted (matched in this slot's iSLIP matching) ...
        gnt_valid_o: Vec<bool> = (1, p.n),
        /// ... to this output.
        gnt_out_o: Vec<u8> = (p.iw(), p.n),
        /// ... in this iteration (0-based).
        gnt_iter_o: Vec<u3> = (3, p.n),
        /// Input i's speculative request won: ACK ...
        ack_valid_o: Vec<bool> = (1, p.n),
        /// ... with this sequence number.
        ack_seq_o: Vec<u16> = (SW, p.n),
        /// Output j holds an arbitrated cell in this slot (matching of D slots ago).
        xb_arb_o: Vec<bool> = (1, p.n),
        /// Crossbar: bit i of element j = output j receives input i.
        xb_mask_o: Vec<u64> = (p.n as u32, p.n) => Radix::Hex,
        /// Input i's request was dropped (its counter was saturated).
        req_drop_o: Vec<bool> = (1, p.n),
        /// Request counter of VOQ (i, j) at i*N + j (registered).
        voq_cnt_o: Vec<u16> = (p.cw, p.n * p.n),
        /// Grant pointer of each output (registered).
        gptr_o: Vec<u8> = (p.iw(), p.n),
        /// Accept pointer of each input (registered).
        aptr_o: Vec<u8> = (p.iw(), p.n),
        /// Collision LFSR (registered).
        lfsr_o: u32 = 32 => Radix::Hex,
        /// Credits in use per output (registered).
        crd_o: Vec<u16> = (KW, p.n),
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's.
    pub struct ArbiterState<ArbiterParams> |p| {
        /// Request counter per VOQ, (i, j) at i*N + j.
        cnt_q: Vec<u16> = (p.cw, p.n * p.n),
        /// Non-empty VOQs: bit j of row i is cnt_q[i*N+j] != 0.
        nz_q: Vec<u64> = (p.n as u32, p.n) => Radix::Hex,
        /// Grant pointer per output.
        gptr_q: Vec<u8> = (p.iw(), p.n),
        /// Accept pointer per input.
        aptr_q: Vec<u8> = (p.iw(), p.n),
        /// Collision LFSR.
        lfsr_q: u32 = 32 => Radix::Hex,
        /// Delay line of matchings: entry e, output j at e*N + j: bit IW valid, low bits input.
        dl_q: Vec<u8> = (p.iw() + 1, DL * p.n),
        /// Delay line write pointer.
        wp_q: u7 = 7,
        /// Credits in use per output.
        use_q: Vec<u16> = (KW, p.n),
    }
}

impl ArbiterConfig {
    /// A configuration: `recv` receivers, `iters` iSLIP iterations, STX on
    /// or off, crossbar delay `delay` slots.
    pub fn new(recv: u8, iters: u8, stx: bool, delay: u8) -> Self {
        ArbiterConfig {
            cfg_recv_i: u7::new(recv),
            cfg_iter_i: u4::new(iters),
            cfg_stx_en_i: stx,
            cfg_xbar_delay_i: u7::new(delay),
            cfg_crd_i: 0,
        }
    }
    /// The same with `crd` credits per output (flow control; 0: none).
    pub fn with_credits(mut self, crd: u16) -> Self {
        self.cfg_crd_i = crd;
        self
    }
    /// Whether the hardware of variant `p` flags this configuration
    /// (`cfg_err_o`).
    pub fn is_illegal(&self, p: &ArbiterParams) -> bool {
        self.cfg_recv_i.value() == 0
            || self.cfg_iter_i.value() == 0
            || self.cfg_iter_i.value() as u32 > p.max_iter()
    }
}

impl ArbiterInputs {
    /// No request and no SRQ.
    pub fn idle(p: &ArbiterParams) -> Self {
        Self::zero(p)
    }
    /// Input `input` reports a new cell for `output` (one per input per slot).
    pub fn request(&mut self, input: usize, output: usize) {
        self.req_valid_i[input] = true;
        self.req_out_i[input] = output as u8;
    }
    /// Input `input`'s cell for `output`, sequence number `seq`, is in the
    /// crossbar speculatively this slot (one per input per slot).
    pub fn speculate(&mut self, input: usize, output: usize, seq: u16) {
        self.spec_valid_i[input] = true;
        self.spec_out_i[input] = output as u8;
        self.spec_seq_i[input] = seq;
    }
}

impl ArbiterOutputs {
    /// The output input `i` is granted, if any.
    pub fn grant(&self, i: usize) -> Option<usize> {
        self.gnt_valid_o[i].then(|| self.gnt_out_o[i] as usize)
    }
    /// The sequence number acknowledged to input `i`, if any.
    pub fn ack(&self, i: usize) -> Option<u16> {
        self.ack_valid_o[i].then(|| self.ack_seq_o[i])
    }
    /// The inputs output `j` receives in this slot (bit mask).
    pub fn receivers(&self, j: usize) -> u64 {
        self.xb_mask_o[j]
    }
    /// Number of grants (size of the matching).
    pub fn matching_size(&self) -> usize {
        self.gnt_valid_o.iter().filter(|&&g| g).count()
    }
}

crate::coverage_bins! {
    /// Functional coverage bins (indices into [`BINS`]).
    pub enum Bin / BINS {
        MatchIter1 = "match_iter_1",
        MatchIter2 = "match_iter_2",
        MatchIter3 = "match_iter_3",
        MatchIter4 = "match_iter_4",
        MatchIter5 = "match_iter_5",
        MatchIter6 = "match_iter_6",
        MatchIter7 = "match_iter_7",
        MatchIter8 = "match_iter_8",
        FullMatching = "full_matching",
        RefusedGrantFirstIter = "refused_grant_first_iter",
        GptrWrap = "gptr_wrap",
        GrantSameSlotRequest = "grant_same_slot_request",
        StxAck = "stx_ack",
        StxVsStx = "stx_vs_stx_collision",
        StxVsArb = "stx_vs_arb_collision",
        StxLostR1Arbitrated = "stx_lost_r1_arbitrated",
        StxAckBesideArbitrated = "stx_ack_beside_arbitrated",
        StxExactCapacity = "stx_exact_capacity",
        StxMultiCollision = "stx_multi_collision",
        StxInputArbAndSpec = "stx_input_arb_and_spec",
        StxDisabledSrq = "stx_disabled_srq",
        XbarDelayedArb = "xbar_delayed_arb",
        CounterSaturated = "counter_saturated",
        RequestDropped = "request_dropped",
        ConfigError = "config_error",
        CreditBlocksGrant = "credit_blocks_grant",
        CreditLimitsStx = "credit_limits_stx",
    }
}

/// The LFSR after one slot ([`LFSR_STEPS`] steps): `prim_lfsr` in the RTL,
/// [`crate::prim::Lfsr`] here.
pub const fn lfsr_slot(s: u32) -> u32 {
    crate::prim::Lfsr::new(s as u64, LFSR_TAPS as u64, LFSR_STEPS).peek_next() as u32
}

/// The 16 random bits output `j` uses in a slot whose LFSR is `lfsr`.
pub const fn random_of(lfsr: u32, j: usize) -> u32 {
    (lfsr & 0xffff) ^ ((j as u32).wrapping_mul(OUT_HASH) & 0xffff)
}

/// Round-robin choice: the first set bit of `v` at or after position `ptr`,
/// cyclically. `v` must be non-zero.
pub fn round_robin(v: u64, ptr: u32) -> usize {
    debug_assert!(v != 0);
    let hi = v & !mask(ptr);
    let x = if hi != 0 { hi } else { v };
    x.trailing_zeros() as usize
}

/// Winners among the speculative requesters `srq` (bit mask over inputs) of
/// one output with capacity `cap`, random bits `r` (16 bits): all when they
/// fit, else the cyclic window of `cap` requesters (in input order)
/// starting at requester number `(r * k) >> 16`.
pub fn stx_winners(srq: u64, cap: u32, r: u32) -> u64 {
    let k = srq.count_ones();
    if k <= cap {
        return srq;
    }
    let m = (r * k) >> 16;
    let mut win = 0u64;
    let mut rest = srq;
    let mut c = 0u32;
    while rest != 0 {
        let i = rest.trailing_zeros();
        rest &= rest - 1;
        if (c + k - m) % k < cap {
            win |= 1 << i;
        }
        c += 1;
    }
    win
}

/// Transposes the `n x n` bit matrix `m` (row `r` bit `c` -> row `c` bit `r`).
pub fn transpose(m: &[u64], n: usize) -> Vec<u64> {
    let mut t = vec![0u64; n];
    for (r, &row) in m.iter().enumerate() {
        let mut rest = row;
        while rest != 0 {
            let c = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            t[c] |= 1 << r;
        }
    }
    t
}

/// What happened in the last slot, beyond the outputs (for coverage and
/// for system statistics). Not a register.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotInfo {
    /// Matches made in each iteration.
    pub matches_per_iter: [u32; MAX_ITER as usize],
    /// First-iteration grants that were not accepted.
    pub refused_first_iter: u32,
    /// A grant pointer wrapped to 0.
    pub gptr_wrapped: bool,
    /// Grants on VOQs empty at the start of the slot (request of this slot).
    pub grants_on_new_request: u32,
    /// Outputs where more SRQs arrived than fit (collisions), without an
    /// arbitrated cell.
    pub stx_vs_stx: u32,
    /// Outputs with an arbitrated cell where SRQs lost because of it.
    pub stx_vs_arb: u32,
    /// Outputs (R = 1) holding an arbitrated cell with SRQs that all lost.
    pub stx_lost_r1: u32,
    /// ACKs at outputs holding an arbitrated cell.
    pub ack_beside_arb: u32,
    /// Outputs with exactly `cap` SRQs (all win), `cap > 0`.
    pub exact_capacity: u32,
    /// Speculative requests presented (counted also with STX off).
    pub srqs: u32,
    /// Speculative winners (ACKs).
    pub acks: u32,
    /// Inputs both arbitrated in the crossbar and speculative winners.
    pub arb_and_spec: u32,
    /// Outputs with a request and no credit (flow control withholds it).
    pub crd_blocked: u32,
    /// Outputs where SRQs the receivers would have taken lost for lack of
    /// credit.
    pub crd_cut: u32,
}

/// The arbiter model.
#[derive(Clone, Debug)]
pub struct Arbiter {
    p: ArbiterParams,
    c: ArbiterConfig,
    err: bool,
    s: ArbiterState,
    last: SlotInfo,
}

impl Arbiter {
    /// The configuration.
    pub fn config(&self) -> &ArbiterConfig {
        &self.c
    }
    /// Request counter of VOQ (`input`, `output`).
    pub fn counter(&self, input: usize, output: usize) -> u16 {
        self.s.cnt_q[input * self.p.n + output]
    }
    /// Grant pointer of `output`.
    pub fn gptr(&self, output: usize) -> usize {
        self.s.gptr_q[output] as usize
    }
    /// Accept pointer of `input`.
    pub fn aptr(&self, input: usize) -> usize {
        self.s.aptr_q[input] as usize
    }
    /// What happened in the last slot.
    pub fn last_slot(&self) -> &SlotInfo {
        &self.last
    }
    /// Credits in use of `output`.
    pub fn credits_used(&self, output: usize) -> u16 {
        self.s.use_q[output]
    }
    /// The same registers under another configuration (what-if analysis and
    /// tests; the hardware holds its configuration for a whole run).
    pub fn reconfigure(&mut self, c: &ArbiterConfig) {
        self.c = c.clone();
        self.err = c.is_illegal(&self.p);
    }

    /// Checks the register invariants; panics with the broken one.
    pub fn assert_invariants(&self) {
        let n = self.p.n;
        for i in 0..n {
            let mut row = 0u64;
            for j in 0..n {
                let c = self.s.cnt_q[i * n + j];
                assert!(
                    c <= self.p.cnt_max(),
                    "counter ({i},{j}) = {c} over its width"
                );
                if c != 0 {
                    row |= 1 << j;
                }
            }
            assert_eq!(self.s.nz_q[i], row, "nz_q row {i} disagrees with cnt_q");
            assert!((self.s.gptr_q[i] as usize) < n && (self.s.aptr_q[i] as usize) < n);
            let c = self.c.cfg_crd_i;
            assert!(
                self.s.use_q[i] <= c,
                "CrdBound_A: output {i} uses {} credits of {c}",
                self.s.use_q[i]
            );
        }
        assert_ne!(self.s.lfsr_q, 0, "LFSR stuck at zero");
    }
}

impl Block for Arbiter {
    const NAME: &'static str = "arbiter";
    type Params = ArbiterParams;
    type Config = ArbiterConfig;
    type Inputs = ArbiterInputs;
    type Outputs = ArbiterOutputs;
    type State = ArbiterState;

    fn variants() -> Vec<ArbiterParams> {
        vec![
            ArbiterParams::new(4, 4).clocks(8),
            // One clock per slot: the arbiter of the stx_switch RTL.
            ArbiterParams::new(8, 6),
            ArbiterParams::new(16, 8).clocks(8),
            // Two clocks: the STX stages in one clock, one iteration.
            ArbiterParams::new(32, 10).clocks(2),
            // All eight iterations and the STX clock.
            ArbiterParams::new(64, 10).clocks(9),
        ]
    }

    /// The paper's size: 64 ports, 50 clocks per 51.2 ns slot.
    fn scale() -> Vec<ArbiterParams> {
        vec![ArbiterParams::osmosis()]
    }

    /// `CLK_PER_SLOT` clocks per slot, inputs held, every output compared in
    /// the slot's last clock.
    fn alignment(p: &ArbiterParams) -> Alignment {
        Alignment::slot(p.k.max(1))
    }

    fn default_config(p: &ArbiterParams) -> ArbiterConfig {
        // OSMOSIS: two receivers per output; log2(N) iterations (as many as
        // the slot holds); STX on; a short crossbar delay so that
        // collisions with arbitrated cells show within a short run.
        let iters = p.n.trailing_zeros().clamp(1, p.max_iter()) as u8;
        ArbiterConfig::new(2, iters, true, 4)
    }

    fn check(p: &ArbiterParams, c: &ArbiterConfig) -> Result<(), ConfigError> {
        check_pow2("N", "ports", p.n, 2, 64)?;
        check_param("CW", "request counter bits", p.cw as usize, 2, 16)?;
        check_param("CLK_PER_SLOT", "clocks per slot", p.k as usize, 1, 64)?;
        check_range("cfg_recv_i", c.cfg_recv_i.value() as u64, 1, 127)?;
        check_range(
            "cfg_iter_i",
            c.cfg_iter_i.value() as u64,
            1,
            p.max_iter() as u64,
        )
        .map_err(|e| {
            e.note(format!(
                "one iteration per clock of the slot but the last, at most {MAX_ITER}; \
                 CLK_PER_SLOT = {}",
                p.k
            ))
        })?;
        check_range("cfg_crd_i", c.cfg_crd_i as u64, 0, mask(KW))
            .map_err(|e| e.note("0: no flow control"))?;
        Ok(())
    }

    fn new(p: &ArbiterParams, c: &ArbiterConfig) -> Self {
        let mut s = ArbiterState::zero(p);
        s.lfsr_q = LFSR_SEED;
        Arbiter {
            p: *p,
            c: c.clone(),
            err: c.is_illegal(p),
            s,
            last: SlotInfo::default(),
        }
    }

    fn state(&self) -> &ArbiterState {
        &self.s
    }

    fn params(&self) -> &ArbiterParams {
        &self.p
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &ArbiterInputs, o: &ArbiterOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        let l = &self.last;
        const ITER_BINS: [Bin; 8] = [
            Bin::MatchIter1,
            Bin::MatchIter2,
            Bin::MatchIter3,
            Bin::MatchIter4,
            Bin::MatchIter5,
            Bin::MatchIter6,
            Bin::MatchIter7,
            Bin::MatchIter8,
        ];
        for (k, &m) in l.matches_per_iter.iter().enumerate() {
            if m > 0 {
                hit(ITER_BINS[k]);
            }
        }
        if o.matching_size() == self.p.n {
            hit(Bin::FullMatching);
        }
        if l.refused_first_iter > 0 {
            hit(Bin::RefusedGrantFirstIter);
        }
        if l.gptr_wrapped {
            hit(Bin::GptrWrap);
        }
        if l.grants_on_new_request > 0 {
            hit(Bin::GrantSameSlotRequest);
        }
        if l.acks > 0 {
            hit(Bin::StxAck);
        }
        if l.stx_vs_stx > 0 {
            hit(Bin::StxVsStx);
        }
        if l.stx_vs_arb > 0 {
            hit(Bin::StxVsArb);
        }
        if l.stx_lost_r1 > 0 {
            hit(Bin::StxLostR1Arbitrated);
        }
        if l.ack_beside_arb > 0 {
            hit(Bin::StxAckBesideArbitrated);
        }
        if l.exact_capacity > 0 {
            hit(Bin::StxExactCapacity);
        }
        if l.stx_vs_stx + l.stx_vs_arb >= 2 {
            hit(Bin::StxMultiCollision);
        }
        if l.arb_and_spec > 0 {
            hit(Bin::StxInputArbAndSpec);
        }
        if !self.c.cfg_stx_en_i && l.srqs > 0 {
            hit(Bin::StxDisabledSrq);
        }
        if self.c.cfg_xbar_delay_i.value() > 0 && o.xb_arb_o.iter().any(|&a| a) {
            hit(Bin::XbarDelayedArb);
        }
        let max = self.p.cnt_max();
        if self.s.cnt_q.contains(&max) {
            hit(Bin::CounterSaturated);
        }
        if o.req_drop_o.iter().any(|&d| d) {
            hit(Bin::RequestDropped);
        }
        if o.cfg_err_o {
            hit(Bin::ConfigError);
        }
        if l.crd_blocked > 0 {
            hit(Bin::CreditBlocksGrant);
        }
        if l.crd_cut > 0 {
            hit(Bin::CreditLimitsStx);
        }
        let _ = i;
    }

    fn step_into(&mut self, inp: &ArbiterInputs, o: &mut ArbiterOutputs) {
        let p = self.p;
        let n = p.n;
        let c = &self.c;
        let cur = &self.s;
        let mut nx = cur.clone();
        let mut info = SlotInfo::default();

        refill(&mut o.gnt_valid_o, n, false);
        refill(&mut o.gnt_out_o, n, 0);
        refill(&mut o.gnt_iter_o, n, u3::new(0));
        refill(&mut o.ack_valid_o, n, false);
        refill(&mut o.ack_seq_o, n, 0);
        refill(&mut o.xb_arb_o, n, false);
        refill(&mut o.xb_mask_o, n, 0);
        refill(&mut o.req_drop_o, n, false);
        o.voq_cnt_o.clone_from(&cur.cnt_q);
        o.gptr_o.clone_from(&cur.gptr_q);
        o.aptr_o.clone_from(&cur.aptr_q);
        o.lfsr_o = cur.lfsr_q;
        o.crd_o.clone_from(&cur.use_q);
        o.cfg_err_o = self.err;

        // 0. Credit returns (release first); outputs with a credit.
        let crd = c.cfg_crd_i;
        let mut used: Vec<u16> = (0..n)
            .map(|j| {
                if crd == 0 {
                    0
                } else {
                    cur.use_q[j].saturating_sub(inp.crd_ret_i[j] as u16)
                }
            })
            .collect();
        let has_credit = (0..n).fold(0u64, |m, j| {
            if crd == 0 || used[j] < crd {
                m | 1 << j
            } else {
                m
            }
        });

        // 1. Request matrix: the counters plus this slot's requests, for
        //    the outputs with a credit.
        let mut req = cur.nz_q.clone();
        for (row, (&v, &j)) in req
            .iter_mut()
            .zip(inp.req_valid_i.iter().zip(&inp.req_out_i))
        {
            if v {
                *row |= 1 << j;
            }
        }
        let mut req_t = transpose(&req, n);
        for (j, r) in req_t.iter_mut().enumerate() {
            if has_credit >> j & 1 == 0 {
                if *r != 0 {
                    info.crd_blocked += 1;
                }
                *r = 0;
            }
        }

        // 2. iSLIP.
        let iters = if self.err {
            0
        } else {
            c.cfg_iter_i.value() as usize
        };
        let mut ui = p.all(); // unmatched inputs
        let mut uo = p.all(); // unmatched outputs
        let mut match_of_in: Vec<Option<usize>> = vec![None; n]; // input -> output
        let mut match_of_out: Vec<Option<usize>> = vec![None; n]; // output -> input
        for k in 0..iters {
            let mut granted_by = vec![0u64; n]; // per input: outputs granting it
            let mut grant_to = vec![usize::MAX; n]; // per output: input granted
            for j in 0..n {
                if uo >> j & 1 == 0 {
                    continue;
                }
                let cand = req_t[j] & ui;
                if cand == 0 {
                    continue;
                }
                let g = round_robin(cand, cur.gptr_q[j] as u32);
                granted_by[g] |= 1 << j;
                grant_to[j] = g;
            }
            let mut accepted_outs = 0u64;
            for i in 0..n {
                if granted_by[i] == 0 {
                    continue;
                }
                let a = round_robin(granted_by[i], cur.aptr_q[i] as u32);
                match_of_in[i] = Some(a);
                match_of_out[a] = Some(i);
                accepted_outs |= 1 << a;
                ui &= !(1 << i);
                o.gnt_valid_o[i] = true;
                o.gnt_out_o[i] = a as u8;
                o.gnt_iter_o[i] = u3::new(k as u8);
                info.matches_per_iter[k] += 1;
                if k == 0 {
                    let g = ((i + 1) % n) as u8;
                    if g == 0 {
                        info.gptr_wrapped = true;
                    }
                    nx.gptr_q[a] = g;
                    nx.aptr_q[i] = ((a + 1) % n) as u8;
                }
            }
            if k == 0 {
                info.refused_first_iter = (0..n)
                    .filter(|&j| grant_to[j] != usize::MAX && accepted_outs >> j & 1 == 0)
                    .count() as u32;
            }
            uo &= !accepted_outs;
            if accepted_outs == 0 {
                break; // nothing more can change
            }
        }

        // 3. Counters: release (grant) before arrival (request), saturating.
        let max = p.cnt_max();
        for (i, &g) in match_of_in.iter().enumerate() {
            let r = inp.req_valid_i[i].then(|| inp.req_out_i[i] as usize);
            if let Some(j) = g {
                if cur.cnt_q[i * n + j] == 0 {
                    info.grants_on_new_request += 1;
                }
            }
            if let Some(j) = r {
                if g != Some(j) {
                    let v = &mut nx.cnt_q[i * n + j];
                    if *v == max {
                        o.req_drop_o[i] = true;
                    } else {
                        *v += 1;
                        nx.nz_q[i] |= 1 << j;
                    }
                }
            }
            if let Some(j) = g {
                if r != Some(j) {
                    let v = &mut nx.cnt_q[i * n + j];
                    assert!(*v > 0, "grant of an empty VOQ ({i},{j})");
                    *v -= 1;
                    if *v == 0 {
                        nx.nz_q[i] &= !(1 << j);
                    }
                }
            }
        }

        // 4. Delay line: read the arbitrated cells of this slot, then write
        //    this slot's matching.
        let d = c.cfg_xbar_delay_i.value() as usize;
        let iw = p.iw();
        let wp = cur.wp_q.value() as usize;
        let arb: Vec<Option<usize>> = if d == 0 {
            match_of_out.clone()
        } else {
            let e = (wp + DL - d) % DL;
            (0..n)
                .map(|j| {
                    let v = cur.dl_q[e * n + j];
                    (v >> iw & 1 != 0).then(|| (v as usize) & (mask(iw) as usize))
                })
                .collect()
        };
        for (j, m) in match_of_out.iter().enumerate() {
            nx.dl_q[wp * n + j] = match *m {
                Some(i) => (1 << iw) | i as u8,
                None => 0,
            };
        }
        nx.wp_q = u7::new(((wp + 1) % DL) as u8);

        // 5. STX resolution.
        let stx_on = c.cfg_stx_en_i && !self.err;
        let mut srq = vec![0u64; n];
        for i in 0..n {
            if inp.spec_valid_i[i] {
                info.srqs += 1;
                if stx_on {
                    srq[inp.spec_out_i[i] as usize] |= 1 << i;
                }
            }
        }
        let recv = c.cfg_recv_i.value() as u32;
        let mut arb_inputs = 0u64;
        let mut winners_all = 0u64;
        for j in 0..n {
            let mut xb = 0u64;
            if let Some(a) = arb[j] {
                o.xb_arb_o[j] = true;
                xb |= 1 << a;
                arb_inputs |= 1 << a;
            }
            if srq[j] != 0 {
                let rcap = if arb[j].is_some() {
                    recv.saturating_sub(1)
                } else {
                    recv
                };
                let cap = if crd == 0 {
                    rcap
                } else {
                    // One credit is kept for grants: an acknowledged cell
                    // may wait in the output adapter for a predecessor that
                    // only a grant brings (selective retry), so ACKs
                    // holding all C credits would stall that grant for
                    // ever.
                    let g = u16::from(match_of_out[j].is_some());
                    rcap.min(crd.saturating_sub(used[j] + g + 1) as u32)
                };
                let k = srq[j].count_ones();
                if cap < rcap && k > cap {
                    info.crd_cut += 1;
                }
                let win = stx_winners(srq[j], cap, random_of(cur.lfsr_q, j));
                if k > cap {
                    if arb[j].is_some() {
                        info.stx_vs_arb += 1;
                        if recv == 1 {
                            info.stx_lost_r1 += 1;
                        }
                    } else {
                        info.stx_vs_stx += 1;
                    }
                } else if k == cap {
                    info.exact_capacity += 1;
                }
                if arb[j].is_some() && win != 0 {
                    info.ack_beside_arb += 1;
                }
                xb |= win;
                winners_all |= win;
                if crd != 0 {
                    used[j] += win.count_ones() as u16;
                }
            }
            o.xb_mask_o[j] = xb;
        }
        // 7. Credits: the grants and ACKs of this slot take theirs.
        for (j, m) in match_of_out.iter().enumerate() {
            nx.use_q[j] = if crd == 0 {
                0
            } else {
                used[j] + u16::from(m.is_some())
            };
        }
        for i in 0..n {
            if winners_all >> i & 1 != 0 {
                o.ack_valid_o[i] = true;
                o.ack_seq_o[i] = inp.spec_seq_i[i];
                info.acks += 1;
            }
        }
        info.arb_and_spec = (arb_inputs & winners_all).count_ones();

        // 8. LFSR.
        nx.lfsr_q = lfsr_slot(cur.lfsr_q);

        self.s = nx;
        self.last = info;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlogged(p: &ArbiterParams, a: &mut Arbiter, fill: u16) {
        // Every VOQ holds `fill` requests.
        let n = p.n;
        for i in 0..n {
            for j in 0..n {
                a.s.cnt_q[i * n + j] = fill;
            }
            a.s.nz_q[i] = if fill > 0 { p.all() } else { 0 };
        }
    }

    #[test]
    fn islip_4x4_desynchronises_1_2_3_then_4() {
        let p = ArbiterParams::new(4, 8);
        let c = ArbiterConfig::new(1, 1, false, 0);
        let mut a = Arbiter::new(&p, &c);
        backlogged(&p, &mut a, 200);
        let sizes: Vec<usize> = (0..8)
            .map(|_| a.step(&ArbiterInputs::idle(&p)).matching_size())
            .collect();
        assert_eq!(sizes, vec![1, 2, 3, 4, 4, 4, 4, 4]);
        a.assert_invariants();
    }

    #[test]
    fn lfsr_is_maximal_on_a_sample_and_never_zero() {
        let mut s = LFSR_SEED;
        for _ in 0..100_000 {
            s = lfsr_slot(s);
            assert_ne!(s, 0);
            assert_ne!(s, LFSR_SEED);
        }
    }

    #[test]
    fn winners_are_a_cyclic_window() {
        // requesters 1, 4, 6, 9; cap 2; m = (r * 4) >> 16
        let srq = 0b10_0101_0010u64;
        assert_eq!(stx_winners(srq, 2, 0), (1 << 1) | (1 << 4));
        assert_eq!(stx_winners(srq, 2, 0x4000), (1 << 4) | (1 << 6));
        assert_eq!(stx_winners(srq, 2, 0xC000), (1 << 9) | (1 << 1));
        assert_eq!(stx_winners(srq, 0, 0x1234), 0);
        assert_eq!(stx_winners(srq, 4, 0x1234), srq);
    }

    #[test]
    fn transpose_round_trips() {
        let m: Vec<u64> = (0..8u64).map(|r| (r * 37 + 11) & 0xff).collect();
        let t = transpose(&m, 8);
        for (r, &row) in m.iter().enumerate() {
            for (c, &col) in t.iter().enumerate() {
                assert_eq!(row >> c & 1, col >> r & 1);
            }
        }
        assert_eq!(transpose(&t, 8), m);
    }
}
