//! Golden model of the STX switch (`rtl/stx_switch.v`, spec
//! `docs/stx_switch.md`): `N` input adapters ([`StxIngress`]), the crossbar
//! arbiter ([`Arbiter`], or any [`SwitchArbiter`]) and `N` output adapters
//! ([`StxEgress`]), joined by delay lines of `RTT/2` slots on the four
//! paths of seed 004 section III (requests, SRQs and cells up to the
//! arbiter and crossbar; grants and ACKs down to the inputs; the crossbar's
//! cells on to the outputs).
//!
//! This is a **composition**: every adapter decision is the component
//! models' own; this module only wires them, delays and routes.
//!
//! # One cycle
//!
//! With `d = RTT/2`, in cycle `t`:
//!
//! 1. every input adapter steps with the cell arriving on its link (the
//!    switch's inputs) and the grant and ACK the arbiter gave in `t - d`;
//! 2. the arbiter steps with the requests and SRQs the inputs made in
//!    `t - d` (crossbar delay `D = RTT`: a grant of `t` finds its cell in
//!    the crossbar in `t + RTT`);
//! 3. the crossbar routes the cells the inputs sent in `t - d`: output `j`
//!    receives input `i`'s cell when bit `i` of the arbiter's `xb_mask_o[j]`
//!    is set and the cell is for `j`, on receivers `0, 1, ...` by increasing
//!    input index; other cells are lost (a speculative cell that lost its
//!    collision);
//! 4. every output adapter steps with what the crossbar gave it in `t - d`
//!    and its link's ready.
//!
//! # Flow control
//!
//! The arbiter holds `C` credits per output (`cfg_crd_i`); every grant and
//! ACK for an output takes one, the output adapter returns one for every
//! cell it frees (`crd_o`) and the crossbar one for every arbitrated
//! reservation no unacknowledged cell used; the returns travel `d` cycles
//! back to the arbiter. With `C + w <= B` (`w` the inputs' window, `B` the
//! output adapters' RSQ per input) no cell reaches an output adapter beyond
//! its window, whatever the output links do (`docs/stx_switch.md`, "Flow
//! control and sizing"; asserted as `NoLoss_A`).
//!
//! Every path is a register chain, so there is no combinational path from
//! one adapter to another; the outputs of a cycle are the components'
//! outputs of that cycle.
//!
//! # Use from a system study
//!
//! ```
//! use model::stx_switch::{StxSwitch, StxSwitchConfig, StxSwitchParams};
//! use model::Block;
//!
//! let p = StxSwitchParams::default(); // N = 8, RTT = 8
//! let c = StxSwitch::default_config(&p);
//! let mut sw = StxSwitch::new(&p, &c);
//! let mut arr = vec![None; p.n];
//! arr[3] = Some((5, 0x2a)); // a cell for output 5, id 0x2a, at input 3
//! let ready = vec![true; p.n];
//! sw.cycle(&arr, &ready);
//! assert!(!sw.dropped(3));
//! arr[3] = None;
//! let mut t = 1;
//! while sw.delivery(5).is_none() {
//!     sw.cycle(&arr, &ready);
//!     t += 1;
//! }
//! // Sent speculatively in its arrival cycle, it reaches the output RTT later.
//! assert_eq!(t - 1, p.rtt);
//! assert_eq!(sw.delivery(5).unwrap().id, 0x2a);
//! ```
//!
//! [`Switch::from_parts`] builds the same switch from the components'
//! parameters and configurations (any sizes the component models accept)
//! and an arbiter of the caller's (the verilated RTL, for instance).

use crate::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use crate::block::{check_param, check_pow2, check_range, refill, Block, ConfigError, Params};
use crate::port::PortGroup;
use crate::stx_egress::{
    Fate, Scheme, StxEgress, StxEgressConfig, StxEgressInputs, StxEgressOutputs, StxEgressParams,
};
use crate::stx_ingress::{
    AckKind, GrantKind, Policy, StxIngress, StxIngressConfig, StxIngressInputs, StxIngressOutputs,
    StxIngressParams,
};
use arbitrary_int::u2;

mod ledger;

pub use ledger::{DelayStats, Ledger};

/// The arbiter of a switch: the golden model, or anything that steps like
/// it (the verilated RTL in `cosim`).
pub trait SwitchArbiter {
    /// One slot: this slot's outputs into `o` (every field), then the next
    /// state (as [`Block::step_into`]).
    fn step_into(&mut self, i: &ArbiterInputs, o: &mut ArbiterOutputs);
}

impl SwitchArbiter for Arbiter {
    fn step_into(&mut self, i: &ArbiterInputs, o: &mut ArbiterOutputs) {
        Block::step_into(self, i, o);
    }
}

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StxSwitchParams {
    /// Ports (inputs = outputs), a power of two.
    pub n: usize,
    /// VOQ depth of the input adapters.
    pub q: usize,
    /// RTX queue entries per VOQ (`B_RTX`, the input adapters' `RTT`).
    pub rtx: usize,
    /// RSQ entries per input at the output adapters (`B_RSQ`).
    pub b: usize,
    /// Receivers per output (the output adapters' `R`).
    pub r: usize,
    /// Round trip in slots, even; each of the four paths is `RTT/2`.
    pub rtt: usize,
    /// Sequence number width (both adapters).
    pub sw: u32,
    /// Cell id width.
    pub iw: u32,
    /// Request counter width (input adapters and arbiter).
    pub cw: u32,
    /// Statistics counter width (both adapters).
    pub cntw: u32,
}

impl StxSwitchParams {
    /// The 16-port size (`n16q2rtx4b8r2rtt4sw8iw8cw2cntw16`). Not among the
    /// verilated [`variants`](Block::variants): its one-clock RTL is 57 MB
    /// of verilated C++ (three minutes of a cold build), so it is
    /// co-simulated by `make test-scale` (nightly).
    pub const fn n16() -> Self {
        StxSwitchParams {
            n: 16,
            q: 2,
            rtx: 4,
            b: 8,
            r: 2,
            rtt: 4,
            sw: 8,
            iw: 8,
            cw: 2,
            cntw: 16,
        }
    }
    /// Port index width `log2(N)`.
    pub const fn ow(&self) -> u32 {
        crate::stx_ingress::clog2(self.n)
    }
    /// The delay of each path, `RTT/2`.
    pub const fn half(&self) -> usize {
        self.rtt / 2
    }
    /// The input adapters' parameters.
    pub fn ingress(&self) -> StxIngressParams {
        StxIngressParams {
            n: self.n,
            q: self.q,
            rtt: self.rtx,
            sw: self.sw,
            iw: self.iw,
            cw: self.cw,
            cntw: self.cntw,
            idx: 0,
        }
    }
    /// The arbiter's parameters.
    pub fn arbiter(&self) -> ArbiterParams {
        ArbiterParams::new(self.n, self.cw)
    }
    /// The output adapters' parameters.
    pub fn egress(&self) -> StxEgressParams {
        StxEgressParams {
            n: self.n,
            r: self.r,
            b: self.b,
            sw: self.sw,
            iw: self.iw,
            cntw: self.cntw,
        }
    }
    /// The components' parameters and configurations for configuration `c`.
    /// A `cfg_recv_i` outside `1..=R`, or a window of `B` or more, reaches
    /// the arbiter as `cfg_recv_i = 0` (which flags it: no matching, no
    /// ACK). The arbiter's credits are `B - cfg_win_i`.
    pub fn parts(&self, c: &StxSwitchConfig) -> StxSwitchParts {
        let recv = c.cfg_recv_i as usize;
        let win = c.cfg_win_i as usize;
        let recv = if (1..=self.r).contains(&recv) && win < self.b {
            recv
        } else {
            0
        };
        let crd = self
            .b
            .saturating_sub(win)
            .min(crate::arbiter::CRD_MAX as usize) as u16;
        StxSwitchParts {
            ingress: (
                self.ingress(),
                StxIngressConfig {
                    cfg_policy_i: c.cfg_policy_i,
                    cfg_scheme_i: c.cfg_scheme_i,
                    cfg_stx_en_i: c.cfg_stx_en_i,
                    cfg_win_i: c.cfg_win_i,
                    cfg_req_lim_i: c.cfg_req_lim_i,
                },
            ),
            arbiter: (
                self.arbiter(),
                ArbiterConfig::new(
                    recv as u8,
                    c.cfg_iter_i & 0xf,
                    c.cfg_stx_en_i,
                    self.rtt as u8,
                )
                .with_credits(crd),
            ),
            egress: (
                self.egress(),
                StxEgressConfig {
                    cfg_scheme_i: c.cfg_scheme_i,
                },
            ),
            rtt: self.rtt,
        }
    }
}

impl Default for StxSwitchParams {
    fn default() -> Self {
        StxSwitch::variants()[0]
    }
}

impl Params for StxSwitchParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("N", self.n as u64),
            ("Q", self.q as u64),
            ("RTX", self.rtx as u64),
            ("B", self.b as u64),
            ("R", self.r as u64),
            ("RTT", self.rtt as u64),
            ("SW", self.sw as u64),
            ("IW", self.iw as u64),
            ("CW", self.cw as u64),
            ("CNTW", self.cntw as u64),
        ]
    }
}

/// The components of a switch: parameters and configurations of the input
/// adapters, the arbiter and the output adapters, and the round trip.
#[derive(Clone, Debug, PartialEq)]
pub struct StxSwitchParts {
    /// Every input adapter.
    pub ingress: (StxIngressParams, StxIngressConfig),
    /// The arbiter (its `cfg_xbar_delay_i` must be `rtt`).
    pub arbiter: (ArbiterParams, ArbiterConfig),
    /// Every output adapter.
    pub egress: (StxEgressParams, StxEgressConfig),
    /// Round trip in slots, even, at least 2.
    pub rtt: usize,
}

impl StxSwitchParts {
    /// The switch's parameters these parts make.
    pub fn params(&self) -> StxSwitchParams {
        let (i, e) = (&self.ingress.0, &self.egress.0);
        StxSwitchParams {
            n: i.n,
            q: i.q,
            rtx: i.rtt,
            b: e.b,
            r: e.r,
            rtt: self.rtt,
            sw: i.sw,
            iw: i.iw,
            cw: i.cw,
            cntw: i.cntw,
        }
    }
    /// Whether the parts fit together ([`StxSwitchParts::check_fit`]) and
    /// can lose no acknowledged cell: credits `C >= 1` with
    /// `C + w <= B` (`w` the inputs' window, `B` the output adapters' RSQ
    /// per input) and `RTT <= 2^(SW-1)` (duplicates recognised). The error
    /// names the rule (`docs/stx_switch.md`, "Flow control and sizing").
    pub fn check(&self) -> Result<(), ConfigError> {
        self.check_fit()?;
        let (i, a, e) = (&self.ingress, &self.arbiter, &self.egress);
        let (crd, w, b) = (a.1.cfg_crd_i as usize, i.1.cfg_win_i as usize, e.0.b);
        if crd == 0 || crd + w > b {
            return Err(ConfigError::new(
                "cfg_crd_i",
                format!(
                    "credits C = {crd}, window w = {w}, RSQ B = {b} per input: an acknowledged \
                     cell could be lost; flow control needs C >= 1 and C + w <= B"
                ),
            ));
        }
        let half = 1usize << (i.0.sw - 1);
        if self.rtt > half {
            return Err(ConfigError::new(
                "RTT",
                format!(
                    "round trip {}: a duplicate can lag its flow's head by RTT cells, SW = {} \
                     recognises {half}; the rule is RTT <= 2^(SW-1)",
                    self.rtt, i.0.sw
                ),
            ));
        }
        Ok(())
    }

    /// Whether the parts fit together (same N, sequence and id widths,
    /// crossbar delay `RTT`, request counters no wider at the inputs than at
    /// the arbiter, an even round trip of at least 2). Component limits are
    /// the components' own business.
    pub fn check_fit(&self) -> Result<(), ConfigError> {
        let (i, a, e) = (&self.ingress.0, &self.arbiter.0, &self.egress.0);
        let err = |f: &'static str, m: String| Err(ConfigError::new(f, m));
        if i.n != a.n || e.n != a.n {
            return err(
                "N",
                format!("ingress {}, arbiter {}, egress {} ports", i.n, a.n, e.n),
            );
        }
        if i.sw != e.sw || i.iw != e.iw {
            return err(
                "SW",
                format!(
                    "sequence / id widths differ: ingress {}/{}, egress {}/{}",
                    i.sw, i.iw, e.sw, e.iw
                ),
            );
        }
        if i.cw > a.cw {
            return err(
                "CW",
                format!(
                    "ingress request counters {} wider than the arbiter's {}",
                    i.cw, a.cw
                ),
            );
        }
        if self.rtt < 2 || !self.rtt.is_multiple_of(2) {
            return err(
                "RTT",
                format!("round trip {}: must be even, at least 2", self.rtt),
            );
        }
        if self.arbiter.1.cfg_xbar_delay_i.value() as usize != self.rtt {
            return err(
                "cfg_xbar_delay_i",
                format!(
                    "arbiter crossbar delay {} must be the round trip {}",
                    self.arbiter.1.cfg_xbar_delay_i.value(),
                    self.rtt
                ),
            );
        }
        Ok(())
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct StxSwitchConfig<StxSwitchParams> |p| {
        /// Receivers used per output (the arbiter's R), 1..=R.
        cfg_recv_i: u8 = 7,
        /// iSLIP iterations, 1..=8.
        cfg_iter_i: u8 = 4,
        /// Speculative transmission on (inputs and arbiter).
        cfg_stx_en_i: bool = 1,
        /// STX policy of the inputs: 0 OCF, 1 random, 2 YCF.
        cfg_policy_i: u2 = 2 => Radix::Names(&["ocf", "random", "ycf"]),
        /// Delivery scheme of both adapters: 0 SR, 1 GBN, 2 SAW.
        cfg_scheme_i: u2 = 2 => Radix::Names(&["sr", "gbn", "saw"]),
        /// The inputs' STX window (B_RSQ), 1..=min(B, 2^(SW-1)).
        cfg_win_i: u16 = p.sw,
        /// Most requests outstanding per VOQ, 1..=2^CW-1.
        cfg_req_lim_i: u8 = p.cw,
    }
}

crate::port_group! {
    /// Per-cycle inputs: the input links and the output links' ready.
    pub struct StxSwitchInputs<StxSwitchParams> |p| {
        /// Input i: a cell arrives ...
        arr_valid_i: Vec<bool> = (1, p.n),
        /// ... for this output ...
        arr_out_i: Vec<u8> = (p.ow(), p.n),
        /// ... with this id.
        arr_id_i: Vec<u16> = (p.iw, p.n),
        /// Output j's link takes a cell this cycle.
        dlv_ready_i: Vec<bool> = (1, p.n),
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct StxSwitchOutputs<StxSwitchParams> |p| {
        /// Input i refused its arriving cell.
        arr_drop_o: Vec<bool> = (1, p.n),
        /// Input i sends a cell towards the crossbar ...
        tx_valid_o: Vec<bool> = (1, p.n),
        /// ... speculatively ...
        tx_spec_o: Vec<bool> = (1, p.n),
        /// ... or as a retransmission on a grant.
        tx_retx_o: Vec<bool> = (1, p.n),
        /// Input i's grant of this cycle: 0 none, 1 regular, 2 spurious, 3 wasted.
        gnt_kind_o: Vec<u8> = (2, p.n) => Radix::Names(GrantKind::NAMES),
        /// Input i's ACK of this cycle: 0 none, 1 taken, 2 void, 3 unknown.
        ack_kind_o: Vec<u8> = (2, p.n) => Radix::Names(AckKind::NAMES),
        /// Crossbar: bit i of element j = output j takes input i's cell (arbiter).
        xb_mask_o: Vec<u64> = (p.n as u32, p.n) => Radix::Hex,
        /// Input i's cell in the crossbar was lost (lost its collision).
        xb_drop_o: Vec<bool> = (1, p.n),
        /// Output j delivers a cell ...
        dlv_valid_o: Vec<bool> = (1, p.n),
        /// ... from this input ...
        dlv_src_o: Vec<u8> = (p.ow(), p.n),
        /// ... with this sequence number ...
        dlv_seq_o: Vec<u16> = (p.sw, p.n),
        /// ... and this id.
        dlv_id_o: Vec<u16> = (p.iw, p.n),
        /// Output j, receiver k (at j*R + k): the fate of its cell.
        arr_fate_o: Vec<u8> = (3, p.n * p.r) => Radix::Names(Fate::NAMES),
        /// Per input: speculative cells sent (registered, saturating).
        cnt_stx_o: Vec<u32> = (p.cntw, p.n),
        /// Per input: retransmissions (registered, saturating).
        cnt_retx_o: Vec<u32> = (p.cntw, p.n),
        /// Per input: wasted grants (registered, saturating).
        cnt_wasted_o: Vec<u32> = (p.cntw, p.n),
        /// Per input: arrivals refused (registered, saturating).
        cnt_drop_o: Vec<u32> = (p.cntw, p.n),
        /// Per output: cells delivered (registered, saturating).
        cnt_dlv_o: Vec<u32> = (p.cntw, p.n),
        /// Per output: duplicates dropped (registered, saturating).
        cnt_dup_o: Vec<u32> = (p.cntw, p.n),
        /// Per output: cells dropped beyond the window (registered, saturating).
        cnt_oow_o: Vec<u32> = (p.cntw, p.n),
        /// Per output: cells stored out of order (registered, saturating).
        cnt_ooo_o: Vec<u32> = (p.cntw, p.n),
        /// Per output: cycles spent in the RSQs (registered, saturating).
        cnt_wait_o: Vec<u32> = (p.cntw, p.n),
        /// Illegal configuration (any component's, or cfg_recv_i outside 1..=R).
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The delay lines (ring buffers of `RTT/2` entries here, entry `e`
    /// of input or output `x` at `e*N + x`; shift registers in the RTL).
    /// The components' registers are theirs.
    pub struct StxSwitchState<StxSwitchParams> |p| {
        /// Up: request valid.
        up_req_v_q: Vec<bool> = (1, p.half() * p.n),
        /// Up: request output.
        up_req_o_q: Vec<u8> = (p.ow(), p.half() * p.n),
        /// Up: SRQ valid.
        up_spec_v_q: Vec<bool> = (1, p.half() * p.n),
        /// Up: SRQ output.
        up_spec_o_q: Vec<u8> = (p.ow(), p.half() * p.n),
        /// Up: SRQ sequence field.
        up_spec_s_q: Vec<u16> = (16, p.half() * p.n),
        /// Up: cell valid.
        up_cell_v_q: Vec<bool> = (1, p.half() * p.n),
        /// Up: cell speculative.
        up_cell_p_q: Vec<bool> = (1, p.half() * p.n),
        /// Up: cell output.
        up_cell_o_q: Vec<u8> = (p.ow(), p.half() * p.n),
        /// Up: cell sequence number.
        up_cell_s_q: Vec<u16> = (p.sw, p.half() * p.n),
        /// Up: cell id.
        up_cell_i_q: Vec<u16> = (p.iw, p.half() * p.n),
        /// Down: grant valid.
        dn_gnt_v_q: Vec<bool> = (1, p.half() * p.n),
        /// Down: grant output.
        dn_gnt_o_q: Vec<u8> = (p.ow(), p.half() * p.n),
        /// Down: ACK valid.
        dn_ack_v_q: Vec<bool> = (1, p.half() * p.n),
        /// Down: ACK sequence field.
        dn_ack_s_q: Vec<u16> = (16, p.half() * p.n),
        /// Out: receiver valid (entry e, output j, receiver k at (e*N + j)*R + k).
        xo_v_q: Vec<bool> = (1, p.half() * p.n * p.r),
        /// Out: source input.
        xo_src_q: Vec<u8> = (p.ow(), p.half() * p.n * p.r),
        /// Out: sequence number.
        xo_seq_q: Vec<u16> = (p.sw, p.half() * p.n * p.r),
        /// Out: cell id.
        xo_id_q: Vec<u16> = (p.iw, p.half() * p.n * p.r),
        /// Credits: returned to output j's credits (entry e at e*N + j).
        cr_q: Vec<u8> = (8, p.half() * p.n),
        /// Ring position (model only).
        wp_q: u8 = 8,
    }
}

crate::coverage_bins! {
    /// Functional coverage bins of the switch (see the spec).
    pub enum Bin / BINS {
        DeliveredAtOnce = "delivered_at_once",
        StxAck = "stx_ack",
        Collision = "stx_collision",
        CollisionStorm = "collision_storm",
        ArbCollision = "stx_vs_arbitrated",
        AckLost = "ack_lost_by_collision",
        Retransmission = "retransmission",
        GrantRegular = "grant_regular",
        GrantSpurious = "grant_spurious",
        GrantWasted = "grant_wasted",
        AckUnknown = "ack_unknown",
        AckVoid = "ack_void",
        RtxFull = "rtx_full_blocks",
        WindowBlocks = "window_blocks",
        VoqFull = "voq_full_drop",
        PndFull = "pnd_full_drop",
        OutOfOrderHeld = "out_of_order_held",
        HoleFilled = "hole_filled",
        Duplicate = "duplicate_dropped",
        GbnDropped = "gbn_out_of_order_dropped",
        SeveralArrivals = "several_arrivals",
        Backpressure = "output_backpressure",
        FullMatching = "full_matching",
        SeqWrap = "sequence_wrap",
        SchemeSr = "scheme_sr",
        SchemeGbn = "scheme_gbn",
        SchemeSaw = "scheme_saw",
        StxOff = "stx_disabled",
        Saturated = "counter_saturated",
        ConfigError = "config_error",
        CreditsExhausted = "credits_exhausted",
        ReservationUnused = "reservation_unused",
    }
}

/// A cell an output delivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Its input.
    pub src: usize,
    /// Its sequence number in its VOQ (modulo `2^SW`).
    pub seq: u16,
    /// Its id.
    pub id: u16,
}

/// The switch: `N` input adapters, an arbiter `A`, `N` output adapters.
#[derive(Clone, Debug)]
pub struct Switch<A> {
    p: StxSwitchParams,
    parts: StxSwitchParts,
    ing: Vec<StxIngress>,
    ing_in: Vec<StxIngressInputs>,
    ing_out: Vec<StxIngressOutputs>,
    arb: A,
    arb_in: ArbiterInputs,
    arb_out: ArbiterOutputs,
    eg: Vec<StxEgress>,
    eg_in: Vec<StxEgressInputs>,
    eg_out: Vec<StxEgressOutputs>,
    s: StxSwitchState,
    /// Per input: its cell in the crossbar this cycle was lost.
    xb_drop: Vec<bool>,
    /// Outputs whose SRQs of this cycle outnumbered the receivers, per output (scratch).
    srq_cnt: Vec<u32>,
    /// The output adapters' heads at the start of the cycle, output `j`,
    /// input `i` at `j*N + i` (scratch, for `NoLoss_A`).
    heads: Vec<u16>,
    /// Coverage bins hit in the last cycle (bit per [`Bin`]).
    hits: u64,
}

/// The switch with the golden arbiter: the block co-simulated against
/// `rtl/stx_switch.v`.
pub type StxSwitch = Switch<Arbiter>;

impl<A: SwitchArbiter> Switch<A> {
    /// The switch from its components' parameters and configurations and
    /// an arbiter built for `parts.arbiter` (in its reset state). Fails
    /// when the parts do not fit together or could lose a cell
    /// ([`StxSwitchParts::check`]).
    pub fn from_parts(parts: &StxSwitchParts, arb: A) -> Result<Self, ConfigError> {
        parts.check()?;
        Ok(Self::build(parts, arb))
    }

    /// The switch without flow control (the arbiter's `cfg_crd_i = 0`):
    /// the design before the credits, for the study's ablation that shows
    /// what they prevent. An output link stalled for long, or an
    /// oversubscribed output, then loses acknowledged cells (counted by
    /// the system study). Fails when the parts do not fit together or
    /// have credits.
    pub fn without_flow_control(parts: &StxSwitchParts, arb: A) -> Result<Self, ConfigError> {
        parts.check_fit()?;
        if parts.arbiter.1.cfg_crd_i != 0 {
            return Err(ConfigError::new(
                "cfg_crd_i",
                "without flow control the arbiter's credits must be 0",
            ));
        }
        Ok(Self::build(parts, arb))
    }

    fn build(parts: &StxSwitchParts, arb: A) -> Self {
        let p = parts.params();
        let (ip, ic) = &parts.ingress;
        let (ap, _) = &parts.arbiter;
        let (ep, ec) = &parts.egress;
        let n = p.n;
        Switch {
            p,
            parts: parts.clone(),
            ing: (0..n)
                .map(|i| StxIngress::new(&StxIngressParams { idx: i, ..*ip }, ic))
                .collect(),
            ing_in: vec![StxIngressInputs::zero(ip); n],
            ing_out: vec![StxIngressOutputs::zero(ip); n],
            arb,
            arb_in: ArbiterInputs::zero(ap),
            arb_out: ArbiterOutputs::zero(ap),
            eg: (0..n).map(|_| StxEgress::new(ep, ec)).collect(),
            eg_in: vec![StxEgressInputs::zero(ep); n],
            eg_out: vec![StxEgressOutputs::zero(ep); n],
            s: StxSwitchState::zero(&p),
            xb_drop: vec![false; n],
            srq_cnt: vec![0; n],
            heads: vec![0; n * n],
            hits: 0,
        }
    }

    /// The parts the switch was built from.
    pub fn parts(&self) -> &StxSwitchParts {
        &self.parts
    }
    /// Input adapter `i`.
    pub fn ingress(&self, i: usize) -> &StxIngress {
        &self.ing[i]
    }
    /// Input adapter `i`'s outputs of the last cycle.
    pub fn ingress_out(&self, i: usize) -> &StxIngressOutputs {
        &self.ing_out[i]
    }
    /// The arbiter.
    pub fn arbiter(&self) -> &A {
        &self.arb
    }
    /// The arbiter, mutable (an RTL arbiter's own bookkeeping).
    pub fn arbiter_mut(&mut self) -> &mut A {
        &mut self.arb
    }
    /// The arbiter's inputs of the last cycle.
    pub fn arbiter_in(&self) -> &ArbiterInputs {
        &self.arb_in
    }
    /// The arbiter's outputs of the last cycle.
    pub fn arbiter_out(&self) -> &ArbiterOutputs {
        &self.arb_out
    }
    /// Output adapter `j`.
    pub fn egress(&self, j: usize) -> &StxEgress {
        &self.eg[j]
    }
    /// Output adapter `j`'s inputs of the last cycle (what the crossbar gave it).
    pub fn egress_in(&self, j: usize) -> &StxEgressInputs {
        &self.eg_in[j]
    }
    /// Output adapter `j`'s outputs of the last cycle.
    pub fn egress_out(&self, j: usize) -> &StxEgressOutputs {
        &self.eg_out[j]
    }
    /// Whether input `i` refused its cell in the last cycle.
    pub fn dropped(&self, i: usize) -> bool {
        self.ing_out[i].arr_drop_o
    }
    /// Whether input `i`'s cell in the crossbar was lost in the last cycle.
    pub fn xb_dropped(&self, i: usize) -> bool {
        self.xb_drop[i]
    }
    /// The cell output `j` delivered in the last cycle.
    pub fn delivery(&self, j: usize) -> Option<Delivery> {
        let o = &self.eg_out[j];
        o.dlv_valid_o.then_some(Delivery {
            src: o.dlv_src_o as usize,
            seq: o.dlv_seq_o,
            id: o.dlv_id_o,
        })
    }
    /// Whether any component flags its configuration.
    pub fn cfg_err(&self) -> bool {
        self.ing.iter().any(|x| x.cfg_err())
            || self.eg.iter().any(|x| x.config().cfg_scheme_i.value() == 3)
            || self.parts.arbiter.1.is_illegal(&self.parts.arbiter.0)
    }
    /// Coverage bins hit in the last cycle (bit `b` for `Bin` number `b`).
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// One cycle: `arr[i]` is the cell arriving at input `i` (output, id),
    /// `ready[j]` whether output `j`'s link takes a cell.
    pub fn cycle(&mut self, arr: &[Option<(usize, u16)>], ready: &[bool]) {
        for (x, a) in self.ing_in.iter_mut().zip(arr) {
            x.arr_valid_i = a.is_some();
            let (o, id) = a.unwrap_or((0, 0));
            x.arr_out_i = o as u8;
            x.arr_id_i = id;
        }
        for (x, &r) in self.eg_in.iter_mut().zip(ready) {
            x.dlv_ready_i = r;
        }
        self.step_core();
    }

    /// One cycle on the inputs already in `ing_in` (arrivals) and `eg_in`
    /// (ready).
    fn step_core(&mut self) {
        let n = self.p.n;
        let r = self.p.r;
        let d = self.p.half();
        let wp = self.s.wp_q as usize;
        let s = &mut self.s;
        let mut hits = 0u64;
        let mut hit = |b: Bin, on: bool| {
            if on {
                hits |= 1 << b as u32
            }
        };

        // 1. Inputs, with the grants and ACKs of t - d.
        for i in 0..n {
            let e = wp * n + i;
            let x = &mut self.ing_in[i];
            x.gnt_valid_i = s.dn_gnt_v_q[e];
            x.gnt_out_i = s.dn_gnt_o_q[e];
            x.ack_valid_i = s.dn_ack_v_q[e];
            x.ack_seq_i = s.dn_ack_s_q[e];
            self.ing[i].step_into(x, &mut self.ing_out[i]);
        }

        // 2. Arbiter, with the requests and SRQs of t - d.
        for c in self.srq_cnt.iter_mut() {
            *c = 0;
        }
        for i in 0..n {
            let e = wp * n + i;
            let a = &mut self.arb_in;
            a.req_valid_i[i] = s.up_req_v_q[e];
            a.req_out_i[i] = s.up_req_o_q[e];
            a.spec_valid_i[i] = s.up_spec_v_q[e];
            a.spec_out_i[i] = s.up_spec_o_q[e];
            a.spec_seq_i[i] = s.up_spec_s_q[e];
            a.crd_ret_i[i] = s.cr_q[e];
            if s.up_spec_v_q[e] {
                self.srq_cnt[s.up_spec_o_q[e] as usize] += 1;
            }
        }
        self.arb.step_into(&self.arb_in, &mut self.arb_out);

        // 3. Crossbar: the cells of t - d, routed by this slot's mask.
        for (j, x) in self.eg_in.iter_mut().enumerate() {
            // What reaches output j now: the crossbar's output of t - d.
            for k in 0..r {
                let e = (wp * n + j) * r + k;
                x.arr_valid_i[k] = s.xo_v_q[e];
                x.arr_src_i[k] = s.xo_src_q[e];
                x.arr_seq_i[k] = s.xo_seq_q[e];
                x.arr_id_i[k] = s.xo_id_q[e];
            }
        }
        for i in 0..n {
            self.xb_drop[i] = s.up_cell_v_q[wp * n + i];
        }
        // Per output: its arbitrated reservation unused (no cell without an
        // ACK taken): a credit back.
        let mut unused = 0u64;
        for j in 0..n {
            let mut mask = self.arb_out.xb_mask_o[j];
            let mut k = 0;
            let mut unacked = false;
            while mask != 0 && k < r {
                let i = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let e = wp * n + i;
                if s.up_cell_v_q[e] && s.up_cell_o_q[e] as usize == j {
                    let o = (wp * n + j) * r + k;
                    s.xo_v_q[o] = true;
                    s.xo_src_q[o] = i as u8;
                    s.xo_seq_q[o] = s.up_cell_s_q[e];
                    s.xo_id_q[o] = s.up_cell_i_q[e];
                    self.xb_drop[i] = false;
                    unacked |= !self.arb_out.ack_valid_o[i];
                    k += 1;
                }
            }
            if self.arb_out.xb_arb_o[j] && !unacked {
                unused |= 1 << j;
            }
            for k in k..r {
                let o = (wp * n + j) * r + k;
                s.xo_v_q[o] = false;
                s.xo_src_q[o] = 0;
                s.xo_seq_q[o] = 0;
                s.xo_id_q[o] = 0;
            }
        }

        // ArbCellPasses_A: only speculative cells lose in the crossbar.
        if !self.arb_out.cfg_err_o {
            for i in 0..n {
                assert!(
                    !self.xb_drop[i] || s.up_cell_p_q[wp * n + i],
                    "ArbCellPasses_A: input {i}'s cell sent on a grant lost in the crossbar"
                );
            }
        }

        // 4. Outputs, with the crossbar's cells of t - d (read above).
        for j in 0..n {
            for i in 0..n {
                self.heads[j * n + i] = self.eg[j].head(i);
            }
            self.eg[j].step_into(&self.eg_in[j], &mut self.eg_out[j]);
            // Their credits, and the crossbar's, go back to the arbiter.
            s.cr_q[wp * n + j] = self.eg_out[j].crd_o + u8::from(unused >> j & 1 != 0);
        }

        // NoLoss_A: with flow control, no cell beyond an output's window.
        if self.parts.arbiter.1.cfg_crd_i != 0 && !self.arb_out.cfg_err_o {
            let b = self.p.b as u32;
            let seq = crate::prim::SeqNum::new(self.p.sw);
            for j in 0..n {
                let (x, o) = (&self.eg_in[j], &self.eg_out[j]);
                for k in 0..r {
                    if !x.arr_valid_i[k] {
                        continue;
                    }
                    let i = x.arr_src_i[k] as usize;
                    let moved = o.dlv_valid_o && o.dlv_src_o as usize == i;
                    let h = seq.add(self.heads[j * n + i], u32::from(moved));
                    let dist = seq.dist(x.arr_seq_i[k], h);
                    assert!(
                        dist < b || dist >= seq.modulus() / 2,
                        "NoLoss_A: output {j} got input {i}'s cell {} {dist} beyond its head",
                        x.arr_seq_i[k]
                    );
                }
            }
        }

        // 5. The delay lines take this cycle's values.
        for i in 0..n {
            let e = wp * n + i;
            let o = &self.ing_out[i];
            s.up_req_v_q[e] = o.req_valid_o;
            s.up_req_o_q[e] = o.req_out_o;
            s.up_spec_v_q[e] = o.spec_valid_o;
            s.up_spec_o_q[e] = o.spec_out_o;
            s.up_spec_s_q[e] = o.spec_seq_o;
            s.up_cell_v_q[e] = o.cell_valid_o;
            s.up_cell_p_q[e] = o.cell_spec_o;
            s.up_cell_o_q[e] = o.cell_out_o;
            s.up_cell_s_q[e] = o.cell_seq_o;
            s.up_cell_i_q[e] = o.cell_id_o;
            let a = &self.arb_out;
            s.dn_gnt_v_q[e] = a.gnt_valid_o[i];
            s.dn_gnt_o_q[e] = a.gnt_out_o[i];
            s.dn_ack_v_q[e] = a.ack_valid_o[i];
            s.dn_ack_s_q[e] = a.ack_seq_o[i];
        }
        s.wp_q = ((wp + 1) % d) as u8;

        // Coverage.
        let recv = self.parts.arbiter.1.cfg_recv_i.value() as u32;
        let mut fates = [false; 8];
        for (j, o) in self.eg_out.iter().enumerate() {
            for &f in &o.arr_fate_o {
                fates[f as usize & 7] = true;
            }
            let ev = self.eg[j].events();
            hit(Bin::HoleFilled, ev.hole_filled);
            hit(Bin::SeveralArrivals, ev.several);
            hit(Bin::Backpressure, ev.backpressure);
            hit(Bin::GbnDropped, ev.gbn_dropped);
            hit(Bin::SeqWrap, ev.wrap);
            hit(Bin::Saturated, ev.saturated);
            if ev.delivered {
                let sc = self.eg[j].scheme();
                hit(Bin::SchemeSr, sc == Some(Scheme::Sr));
                hit(Bin::SchemeGbn, sc == Some(Scheme::Gbn));
                hit(Bin::SchemeSaw, sc == Some(Scheme::Saw));
            }
            let storm = (n as u32).min(4).max(recv + 1);
            hit(Bin::CollisionStorm, self.srq_cnt[j] >= storm);
        }
        hit(Bin::OutOfOrderHeld, fates[Fate::OutOfOrder as usize]);
        hit(Bin::Duplicate, fates[Fate::Duplicate as usize]);
        for (i, x) in self.ing.iter().enumerate() {
            let ev = x.events();
            hit(Bin::Retransmission, ev.retx);
            hit(Bin::GrantRegular, ev.grant == GrantKind::Regular);
            hit(Bin::GrantSpurious, ev.grant == GrantKind::Spurious);
            hit(Bin::GrantWasted, ev.grant == GrantKind::Wasted);
            hit(Bin::AckUnknown, ev.ack == AckKind::Unknown);
            hit(Bin::AckVoid, ev.ack == AckKind::Void);
            hit(Bin::RtxFull, ev.rtx_full);
            hit(Bin::WindowBlocks, ev.window || ev.saw_one);
            hit(Bin::VoqFull, ev.voq_full);
            hit(Bin::PndFull, ev.pnd_full);
            hit(Bin::Saturated, ev.saturated);
            hit(Bin::StxOff, ev.disabled_grant);
            hit(Bin::AckLost, self.xb_drop[i]);
        }
        let a = &self.arb_out;
        hit(Bin::StxAck, a.ack_valid_o.iter().any(|&v| v));
        let crd = self.parts.arbiter.1.cfg_crd_i;
        hit(Bin::CreditsExhausted, crd != 0 && a.crd_o.contains(&crd));
        hit(Bin::ReservationUnused, unused != 0);
        let mut stx_vs_stx = false;
        let mut stx_vs_arb = false;
        for j in 0..n {
            let cap = if a.xb_arb_o[j] {
                recv.saturating_sub(1)
            } else {
                recv
            };
            if self.srq_cnt[j] > cap {
                if a.xb_arb_o[j] {
                    stx_vs_arb = true;
                } else {
                    stx_vs_stx = true;
                }
            }
        }
        hit(Bin::Collision, stx_vs_stx);
        hit(Bin::ArbCollision, stx_vs_arb);
        hit(
            Bin::FullMatching,
            a.gnt_valid_o.iter().filter(|&&g| g).count() == n,
        );
        hit(Bin::DeliveredAtOnce, fates[Fate::Delivered as usize]);
        hit(Bin::ConfigError, a.cfg_err_o || self.ing_out[0].cfg_err_o);
        self.hits = hits;
    }
}

impl Block for StxSwitch {
    const NAME: &'static str = "stx_switch";
    type Params = StxSwitchParams;
    type Config = StxSwitchConfig;
    type Inputs = StxSwitchInputs;
    type Outputs = StxSwitchOutputs;
    type State = StxSwitchState;

    fn variants() -> Vec<StxSwitchParams> {
        let v = |n, q, rtx, b, r, rtt, sw, iw, cw, cntw| StxSwitchParams {
            n,
            q,
            rtx,
            b,
            r,
            rtt,
            sw,
            iw,
            cw,
            cntw,
        };
        vec![
            v(8, 4, 4, 16, 2, 8, 8, 8, 3, 16),
            v(4, 4, 3, 8, 2, 6, 5, 6, 2, 8),
        ]
    }

    fn default_config(p: &StxSwitchParams) -> StxSwitchConfig {
        StxSwitchConfig {
            cfg_recv_i: p.r as u8,
            cfg_iter_i: (p.n.trailing_zeros().clamp(1, 8)) as u8,
            cfg_stx_en_i: true,
            cfg_policy_i: Policy::Ocf.code(),
            cfg_scheme_i: Scheme::Sr.code(),
            cfg_win_i: (p.rtx as u32 + 1).min(Self::win_max(p)) as u16,
            cfg_req_lim_i: Self::req_lim_max(p) as u8,
        }
    }

    fn check(p: &StxSwitchParams, c: &StxSwitchConfig) -> Result<(), ConfigError> {
        check_pow2("N", "ports", p.n, 4, 16)?;
        if !p.rtt.is_multiple_of(2) || !(2..=32).contains(&p.rtt) {
            return Err(ConfigError::new(
                "RTT",
                format!("round trip {}: must be even, 2..=32", p.rtt),
            ));
        }
        check_param("R", "receivers", p.r, 1, 4)?;
        let parts = p.parts(c);
        parts.check_fit()?;
        parts.ingress.0.check()?;
        parts.egress.0.check()?;
        check_range("cfg_recv_i", c.cfg_recv_i as u64, 1, p.r as u64)?;
        check_range("cfg_iter_i", c.cfg_iter_i as u64, 1, 8)?;
        StxIngress::check(&parts.ingress.0, &parts.ingress.1)?;
        check_range("cfg_win_i", c.cfg_win_i as u64, 1, Self::win_max(p) as u64)
            .map_err(|e| e.note("the credits B - cfg_win_i must be at least 1"))?;
        check_range(
            "cfg_req_lim_i",
            c.cfg_req_lim_i as u64,
            1,
            Self::req_lim_max(p) as u64,
        )?;
        parts.check()?;
        Arbiter::check(&parts.arbiter.0, &parts.arbiter.1)?;
        StxEgress::check(&parts.egress.0, &parts.egress.1)
    }

    fn new(p: &StxSwitchParams, c: &StxSwitchConfig) -> Self {
        // The hardware runs any configuration (an illegal one flagged), so
        // only the fit is checked here; `check` refuses the rest.
        let parts = p.parts(c);
        parts.check_fit().expect("parts of the switch fit");
        let arb = Arbiter::new(&parts.arbiter.0, &parts.arbiter.1);
        Switch::build(&parts, arb)
    }

    fn params(&self) -> &StxSwitchParams {
        &self.p
    }

    fn state(&self) -> &StxSwitchState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &StxSwitchInputs, _o: &StxSwitchOutputs, hits: &mut [u64]) {
        let mut h = self.hits;
        while h != 0 {
            let b = h.trailing_zeros() as usize;
            h &= h - 1;
            hits[b] += 1;
        }
    }

    fn step_into(&mut self, i: &StxSwitchInputs, o: &mut StxSwitchOutputs) {
        let n = self.p.n;
        let r = self.p.r;
        for (k, x) in self.ing_in.iter_mut().enumerate() {
            x.arr_valid_i = i.arr_valid_i[k];
            x.arr_out_i = i.arr_out_i[k];
            x.arr_id_i = i.arr_id_i[k];
        }
        for (k, x) in self.eg_in.iter_mut().enumerate() {
            x.dlv_ready_i = i.dlv_ready_i[k];
        }
        self.step_core();
        refill(&mut o.arr_drop_o, n, false);
        refill(&mut o.tx_valid_o, n, false);
        refill(&mut o.tx_spec_o, n, false);
        refill(&mut o.tx_retx_o, n, false);
        refill(&mut o.gnt_kind_o, n, 0);
        refill(&mut o.ack_kind_o, n, 0);
        refill(&mut o.xb_drop_o, n, false);
        refill(&mut o.dlv_valid_o, n, false);
        refill(&mut o.dlv_src_o, n, 0);
        refill(&mut o.dlv_seq_o, n, 0);
        refill(&mut o.dlv_id_o, n, 0);
        refill(&mut o.arr_fate_o, n * r, 0);
        for v in [
            &mut o.cnt_stx_o,
            &mut o.cnt_retx_o,
            &mut o.cnt_wasted_o,
            &mut o.cnt_drop_o,
            &mut o.cnt_dlv_o,
            &mut o.cnt_dup_o,
            &mut o.cnt_oow_o,
            &mut o.cnt_ooo_o,
            &mut o.cnt_wait_o,
        ] {
            refill(v, n, 0);
        }
        let mut err = self.arb_out.cfg_err_o;
        for (k, x) in self.ing_out.iter().enumerate() {
            o.arr_drop_o[k] = x.arr_drop_o;
            o.tx_valid_o[k] = x.cell_valid_o;
            o.tx_spec_o[k] = x.cell_spec_o;
            o.tx_retx_o[k] = x.cell_retx_o;
            o.gnt_kind_o[k] = x.gnt_kind_o;
            o.ack_kind_o[k] = x.ack_kind_o;
            o.cnt_stx_o[k] = x.cnt_stx_o;
            o.cnt_retx_o[k] = x.cnt_retx_o;
            o.cnt_wasted_o[k] = x.cnt_wasted_o;
            o.cnt_drop_o[k] = x.cnt_drop_o;
            o.xb_drop_o[k] = self.xb_drop[k];
            err |= x.cfg_err_o;
        }
        o.xb_mask_o.clone_from(&self.arb_out.xb_mask_o);
        for (k, x) in self.eg_out.iter().enumerate() {
            o.dlv_valid_o[k] = x.dlv_valid_o;
            o.dlv_src_o[k] = x.dlv_src_o;
            o.dlv_seq_o[k] = x.dlv_seq_o;
            o.dlv_id_o[k] = x.dlv_id_o;
            o.arr_fate_o[k * r..(k + 1) * r].copy_from_slice(&x.arr_fate_o);
            o.cnt_dlv_o[k] = x.cnt_dlv_o;
            o.cnt_dup_o[k] = x.cnt_dup_o;
            o.cnt_oow_o[k] = x.cnt_oow_o;
            o.cnt_ooo_o[k] = x.cnt_ooo_o;
            o.cnt_wait_o[k] = x.cnt_wait_o;
            err |= x.cfg_err_o;
        }
        o.cfg_err_o = err;
    }
}

impl StxSwitch {
    /// Largest legal `cfg_win_i`: `B - 1` (the credits `B - cfg_win_i`
    /// must be at least 1) and the sequence half range.
    pub fn win_max(p: &StxSwitchParams) -> u32 {
        (p.b as u32 - 1).min(1 << (p.sw - 1))
    }
    /// Largest legal `cfg_req_lim_i`: `2^CW - 1` (the counters).
    pub fn req_lim_max(p: &StxSwitchParams) -> u32 {
        ((1u32 << p.cw) - 1).min(255)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use rand_core::{Rng as _, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The tests' traffic draws (31 bits).
    fn draw(r: &mut Xoshiro256PlusPlus) -> u64 {
        r.next_u64() >> 33
    }

    /// Random Bernoulli traffic, then a drain: every accepted cell is
    /// delivered once, in order.
    fn run(p: &StxSwitchParams, c: &StxSwitchConfig, load: u64, hot: bool, cycles: u64) -> Ledger {
        StxSwitch::check(p, c).unwrap();
        let mut sw = StxSwitch::new(p, c);
        let mut inp = StxSwitchInputs::zero(p);
        let mut o = StxSwitchOutputs::zero(p);
        let mut l = Ledger::new(p.n, p.sw);
        let mut x = Xoshiro256PlusPlus::seed_from_u64(12345);
        let mut id = 0u16;
        for t in 0..cycles + 2000 {
            for k in 0..p.n {
                let on = t < cycles && draw(&mut x) % 100 < load;
                inp.arr_valid_i[k] = on;
                inp.arr_out_i[k] = if hot {
                    0
                } else {
                    (draw(&mut x) % p.n as u64) as u8
                };
                id = id.wrapping_add(1) & ((1 << p.iw) - 1);
                inp.arr_id_i[k] = id;
                inp.dlv_ready_i[k] = true;
            }
            sw.step_into(&inp, &mut o);
            l.book(t, &inp, &o).unwrap();
            for e in &sw.eg {
                e.assert_invariants();
            }
            for g in &sw.ing {
                g.assert_invariants();
            }
            if c.cfg_scheme_i == Scheme::Sr.code() {
                assert!(
                    o.cnt_oow_o.iter().all(|&c| c == 0),
                    "{p:?} load {load} hot {hot}: a cell beyond the window by cycle {t}"
                );
            }
        }
        assert_eq!(l.owed(), 0, "cells never delivered");
        l
    }

    #[test]
    fn a_lone_cell_goes_speculatively_in_one_rtt() {
        for p in StxSwitch::variants() {
            let c = StxSwitch::default_config(&p);
            let mut sw = StxSwitch::new(&p, &c);
            let mut arr = vec![None; p.n];
            let ready = vec![true; p.n];
            arr[1] = Some((p.n - 1, 7));
            let mut got = None;
            for t in 0..4 * p.rtt as u64 {
                sw.cycle(&arr, &ready);
                arr[1] = None;
                if let Some(d) = sw.delivery(p.n - 1) {
                    assert!(got.is_none());
                    got = Some((t, d));
                }
            }
            let (t, d) = got.unwrap();
            assert_eq!((t, d.src, d.seq, d.id), (p.rtt as u64, 1, 0, 7));
        }
    }

    #[test]
    fn without_stx_a_lone_cell_takes_two_rtt() {
        let p = StxSwitchParams::default();
        let mut c = StxSwitch::default_config(&p);
        c.cfg_stx_en_i = false;
        let mut sw = StxSwitch::new(&p, &c);
        let ready = vec![true; p.n];
        let mut arr = vec![None; p.n];
        arr[2] = Some((3, 9));
        let mut at = None;
        for t in 0..40u64 {
            sw.cycle(&arr, &ready);
            arr[2] = None;
            if sw.delivery(3).is_some() {
                at = Some(t);
            }
        }
        assert_eq!(at, Some(2 * p.rtt as u64));
    }

    #[test]
    fn every_cell_once_and_in_order_under_every_scheme_and_load() {
        for p in StxSwitch::variants() {
            for scheme in [Scheme::Sr, Scheme::Gbn, Scheme::Saw] {
                for (load, hot) in [(30, false), (90, false), (40, true)] {
                    let mut c = StxSwitch::default_config(&p);
                    c.cfg_scheme_i = scheme.code();
                    let l = run(&p, &c, load, hot, 1500);
                    assert!(l.stats.delivered > 100, "{p:?} {scheme:?} {load}");
                }
            }
        }
    }

    #[test]
    fn collisions_lose_cells_and_they_come_again() {
        let p = StxSwitchParams::default();
        let mut c = StxSwitch::default_config(&p);
        c.cfg_recv_i = 1;
        let mut sw = StxSwitch::new(&p, &c);
        let ready = vec![true; p.n];
        // Every input sends one cell to output 0 in cycle 0.
        let arr: Vec<_> = (0..p.n).map(|i| Some((0, i as u16))).collect();
        let idle = vec![None; p.n];
        let mut lost = 0;
        let mut got = Vec::new();
        for t in 0..200 {
            sw.cycle(if t == 0 { &arr } else { &idle }, &ready);
            lost += (0..p.n).filter(|&i| sw.xb_dropped(i)).count();
            if let Some(d) = sw.delivery(0) {
                got.push(d.src);
            }
        }
        assert_eq!(lost, p.n - 1);
        got.sort();
        assert_eq!(got, (0..p.n).collect::<Vec<_>>());
    }

    /// The duplicate rule at its edge: `B = 2^(SW-1)` (the old margin
    /// `2^(SW-1) - B` is 0) and `RTT = 2^(SW-1)`, the largest round trip the
    /// rule allows; Bernoulli traffic, some output links stalled for long,
    /// every scheme. Duplicates arrive (grants before ACKs), each lags its
    /// flow's head by at most `max(RTT, w)` and is dropped as one; every
    /// cell is delivered once and in order (the ledger) and none reaches an
    /// output beyond its window (`NoLoss_A`).
    #[test]
    fn stalled_outputs_lose_nothing_at_margin_zero() {
        let p = StxSwitchParams {
            n: 4,
            q: 8,
            rtx: 8,
            b: 16,
            r: 2,
            rtt: 16,
            sw: 5,
            iw: 8,
            cw: 3,
            cntw: 16,
        };
        let seq = crate::prim::SeqNum::new(p.sw);
        for scheme in [Scheme::Sr, Scheme::Gbn, Scheme::Saw] {
            let mut c = StxSwitch::default_config(&p);
            c.cfg_scheme_i = scheme.code();
            // SAW's window is 1 whatever cfg_win_i says; 1 also leaves it
            // the most credits (C = B - 1), and ACKs to make duplicates.
            if scheme == Scheme::Saw {
                c.cfg_win_i = 1;
            }
            StxSwitch::check(&p, &c).unwrap();
            let w = c.cfg_win_i as u32;
            let mut sw = StxSwitch::new(&p, &c);
            let mut inp = StxSwitchInputs::zero(&p);
            let mut o = StxSwitchOutputs::zero(&p);
            let mut l = Ledger::new(p.n, p.sw);
            let mut x = Xoshiro256PlusPlus::seed_from_u64(7);
            let (mut dups, mut lag_max) = (0u64, 0u32);
            for t in 0..8000u64 {
                for k in 0..p.n {
                    inp.arr_valid_i[k] = t < 5000 && draw(&mut x) % 100 < 60;
                    inp.arr_out_i[k] = (draw(&mut x) % p.n as u64) as u8;
                    inp.arr_id_i[k] = (t as u16).wrapping_mul(4).wrapping_add(k as u16) & 0xff;
                    inp.dlv_ready_i[k] = t >= 5000 || k != 0 || t % 300 < 100;
                }
                let heads: Vec<Vec<u16>> = (0..p.n)
                    .map(|j| (0..p.n).map(|i| sw.egress(j).head(i)).collect())
                    .collect();
                sw.step_into(&inp, &mut o);
                l.book(t, &inp, &o).unwrap();
                for (j, hj) in heads.iter().enumerate() {
                    let e = sw.egress_in(j);
                    for k in 0..p.r {
                        if o.arr_fate_o[j * p.r + k] == Fate::Duplicate.code() {
                            let i = e.arr_src_i[k] as usize;
                            let lag = seq.dist(hj[i], e.arr_seq_i[k]);
                            dups += 1;
                            lag_max = lag_max.max(lag);
                        }
                    }
                }
            }
            assert_eq!(l.owed(), 0, "{scheme:?}: cells never delivered");
            assert!(dups > 0, "{scheme:?}: no duplicate");
            assert!(
                lag_max <= (p.rtt as u32).max(w) && lag_max <= 1 << (p.sw - 1),
                "{scheme:?}: a duplicate {lag_max} behind its head"
            );
        }
    }

    #[test]
    fn the_parts_must_fit() {
        let p = StxSwitchParams::default();
        let c = StxSwitch::default_config(&p);
        let mut parts = p.parts(&c);
        assert!(parts.check().is_ok());
        parts.rtt = 7;
        assert_eq!(parts.check().unwrap_err().field, "RTT");
        let mut parts = p.parts(&c);
        parts.arbiter.1.cfg_xbar_delay_i = arbitrary_int::u7::new(3);
        assert_eq!(parts.check().unwrap_err().field, "cfg_xbar_delay_i");
        let mut bad = c.clone();
        bad.cfg_recv_i = 3;
        assert_eq!(StxSwitch::check(&p, &bad).unwrap_err().field, "cfg_recv_i");
        let mut sw = StxSwitch::new(&p, &bad);
        let o = sw.step(&StxSwitchInputs::zero(&p));
        assert!(o.cfg_err_o);
    }
}
