//! Golden model of the BCN congestion point (`rtl/bcn_cp.v`, spec
//! `docs/bcn_cp.md`).
//!
//! Backward Congestion Notification as proposed in seed 003 ("Congestion
//! Point", steps 1 to 6): the egress queues of one switch port keep their
//! depth in bytes; arriving frames are sampled with probability Pm by an
//! LFSR (never a BCN frame); on a sample the queue's offset from
//! equilibrium and its change since the last sample give the feedback
//! `Fb = Qoff - W * Qdelta`; a negative feedback, or a sampled frame whose
//! rate-limiter tag names this congestion point, sends a BCN message back
//! to the frame's source, both as parallel fields (three cycles after the
//! sample: the feedback pipeline) and as a 64-byte Ethernet frame with FCS,
//! eight beats on a PFC-style stream.
//! Rate-limiter tags naming this point are reported stripped on departure;
//! tags naming another point stay.
//!
//! Latency: `arr_drop_o`, `dep_strip_o`, `err_o` depend on the inputs of
//! the cycle; the frame stream, the depths and the counters are registers;
//! `sample_o` and the `msg_*` fields come from the last of three feedback
//! stages (the sample of cycle `t - 3`, [`Pipe`]). A message decided in
//! cycle `t` starts its frame at `t + 1` when the transmitter is free (idle,
//! or on the last beat of a frame); else it waits in the one pending slot,
//! or is dropped and counted when that slot is full. Order inside a cycle:
//! departure, arrival (admission), sampling, the feedback stages, message,
//! transmitter.

use crate::block::{check_param, check_range, Block, ConfigError, Params};
use crate::eth::{crc32, crc32_beat, mac_bytes, CRC_INIT};
use crate::port::{mask, PortGroup};
use crate::prim::{Lfsr, SatCnt};
use arbitrary_int::{u11, u13, u14, u3, u5, Int};

/// A signed 16-bit port value (two's complement, like a Verilog `signed [15:0]`).
pub type S16 = Int<i16, 16>;

/// A BCN frame is a minimum Ethernet frame: 64 bytes, FCS included, in 8
/// beats.
pub use crate::eth::{FRAME_BEATS, FRAME_BYTES};
/// The 802.1Q tag protocol identifier.
pub const TPID: u16 = 0x8100;
/// The EtherType of the rate-limiter tag (QCN's CN-TAG) in the rebuilt
/// header of the sampled frame.
pub const RLT_ETHERTYPE: u16 = 0x22e9;
/// Bytes of a rate-limiter tag: EtherType, CPID, limiter id.
pub const RLT_BYTES: u16 = 6;
/// Default EtherType of BCN frames: IEEE 802 Local Experimental EtherType 1
/// (BCN never got an assigned one).
pub const BCN_ETHERTYPE: u16 = 0x88b5;
/// Feedback units: Qoff and Qdelta count 64-byte units (shift right by 6).
pub const UNIT_SHIFT: u32 = 6;
/// Feedback width (signed bits) of Qoff, Qdelta and Fb.
pub const FB_BITS: u32 = 16;
/// The sampling LFSR: 16 bits, taps x^16 + x^14 + x^13 + x^11 + 1.
pub const LFSR_TAPS: u64 = 0xb400;
/// The sampling LFSR's reset value.
pub const LFSR_SEED: u64 = 0xace1;
/// Steps of the LFSR per arrival (so that consecutive compared windows
/// share no bit).
pub const LFSR_STEPS: u32 = 16;
/// Bits of the LFSR compared with `cfg_pm_i`: Pm = cfg_pm_i / 2^10.
pub const PM_BITS: u32 = 10;
/// `cfg_pm_i` sampling every arrival.
pub const PM_ALWAYS: u16 = 1 << PM_BITS;
/// Arrival length width (bytes, up to 16383: jumbo frames fit).
pub const LW: u32 = 14;
/// Timestamp width (a free-running cycle counter that wraps).
pub const TSW: u32 = 32;
/// Queue index width on the ports (up to 8 queues).
pub const QIW: u32 = 3;
/// Cycles from a sample to its message on the ports (the feedback stages).
pub const FB_LATENCY: u32 = 3;
/// Width of `cfg_w_i * Qdelta` (5 unsigned by 16 signed bits, exact).
pub const WQ_BITS: u32 = 21;

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BcnCpParams {
    /// Number of egress queues, 1..=8.
    pub nq: usize,
    /// Queue depth width in bytes, 14..=28 (the total is `QW + 3` bits).
    pub qw: u32,
    /// Event counter width, 1..=32 (the counters saturate).
    pub cw: u32,
}

impl BcnCpParams {
    /// Largest depth of one queue.
    pub const fn qmax(&self) -> u64 {
        mask(self.qw)
    }
    /// Width of the total depth.
    pub const fn tw(&self) -> u32 {
        self.qw + 3
    }
    /// Largest counter value.
    pub const fn cmax(&self) -> u64 {
        mask(self.cw)
    }
}

impl Default for BcnCpParams {
    fn default() -> Self {
        BcnCpParams {
            nq: 8,
            qw: 24,
            cw: 16,
        }
    }
}

impl Params for BcnCpParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("NQ", self.nq as u64),
            ("QW", self.qw as u64),
            ("CW", self.cw as u64),
        ]
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct BcnCpConfig<BcnCpParams> |p| {
        /// The CP's MAC address: SA of the BCN frames (unicast).
        cfg_cp_sa_i: u64 = 48 => Radix::Hex,
        /// The CP's id: the high 13 bits of CPID (the low 3 are the queue).
        cfg_cpid_i: u13 = 13,
        /// PCP of the BCN frame's 802.1Q tag (high priority: 7 by default).
        cfg_pcp_i: u3 = 3,
        /// EtherType of the BCN frame (after the 802.1Q tag).
        cfg_etype_i: u16 = 16 => Radix::Hex,
        /// Equilibrium depth Qeq per queue, bytes, [queue 0, queue 1, ...].
        cfg_qeq_i: Vec<u32> = (p.qw, p.nq),
        /// Depth limit of each queue, bytes: an arrival that would exceed it is dropped.
        cfg_qmax_i: u32 = p.qw,
        /// Limit of the total depth of all queues, bytes.
        cfg_buf_i: u32 = p.tw(),
        /// Derivative weight W = cfg_w_i / 4 (u3.2; QCN's w = 2 is 8).
        cfg_w_i: u5 = 5,
        /// Sampling probability Pm = cfg_pm_i / 1024, 0..=1024 (1024: every arrival).
        cfg_pm_i: u11 = 11,
    }
}

crate::port_group! {
    /// Per-cycle inputs: at most one arrival and one departure.
    pub struct BcnCpInputs<BcnCpParams> |p| {
        /// A frame arrives (its header fields below).
        arr_valid_i: bool = 1,
        /// Its egress queue (ignored and flagged when >= NQ).
        arr_queue_i: u3 = QIW,
        /// Its length in bytes (as stored, a rate-limiter tag included).
        arr_len_i: u14 = LW,
        /// Its destination address.
        arr_da_i: u64 = 48 => Radix::Hex,
        /// Its source address (the DA of a BCN message about it).
        arr_sa_i: u64 = 48 => Radix::Hex,
        /// Its priority (PCP).
        arr_prio_i: u3 = 3,
        /// It carries a rate-limiter tag (detected by the parser).
        arr_rlt_i: bool = 1,
        /// The tag's rate-limiter id.
        arr_rlt_id_i: u16 = 16,
        /// The tag's CPID: the congestion point it names.
        arr_rlt_cpid_i: u16 = 16,
        /// Its EtherType (after its tags); cfg_etype_i marks a BCN frame, never sampled.
        arr_etype_i: u16 = 16 => Radix::Hex,
        /// A frame departs.
        dep_valid_i: bool = 1,
        /// Its queue (ignored and flagged when >= NQ).
        dep_queue_i: u3 = QIW,
        /// Its length in bytes, as stored.
        dep_len_i: u14 = LW,
        /// It carries a rate-limiter tag (from the buffer memory).
        dep_rlt_i: bool = 1,
        /// That tag's CPID (stripped only when it names this point).
        dep_rlt_cpid_i: u16 = 16,
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct BcnCpOutputs<BcnCpParams> |p| {
        /// This cycle's arrival did not fit (queue or buffer limit) and is dropped.
        arr_drop_o: bool = 1,
        /// This cycle's arrival is sampled (the msg_* fields hold its values).
        sample_o: bool = 1,
        /// A BCN message is decided this cycle.
        msg_valid_o: bool = 1,
        /// The sampled frame's DA (the flow's key at the source).
        msg_flow_da_o: u64 = 48 => Radix::Hex,
        /// The sampled frame's SA (the BCN frame's DA).
        msg_sa_o: u64 = 48 => Radix::Hex,
        /// The sampled frame's priority.
        msg_prio_o: u3 = 3,
        /// CPID: {cfg_cpid_i, queue}.
        msg_cpid_o: u16 = 16,
        /// Qoff = (Qeq - Q) / 64, floor, saturated.
        msg_qoff_o: S16 = FB_BITS,
        /// Qdelta = (Q - Qold) / 64, floor, saturated.
        msg_qdelta_o: S16 = FB_BITS,
        /// Fb = Qoff - floor(cfg_w_i * Qdelta / 4), saturated.
        msg_fb_o: S16 = FB_BITS,
        /// The sampled frame carried a rate-limiter tag.
        msg_rlt_o: bool = 1,
        /// That tag's rate-limiter id (0 when untagged).
        msg_rlt_id_o: u16 = 16,
        /// That tag's CPID (0 when untagged).
        msg_rlt_cpid_o: u16 = 16,
        /// That tag names this point (any Fb is answered).
        msg_rlt_own_o: bool = 1,
        /// The sampled frame's EtherType.
        msg_etype_o: u16 = 16 => Radix::Hex,
        /// Timestamp: the cycle counter of this cycle.
        msg_ts_o: u32 = TSW,
        /// The departing frame's rate-limiter tag names this point and is stripped (6 bytes less on the wire).
        dep_strip_o: bool = 1,
        /// Bit 0: departure longer than its queue (clamped); bit 1: arrival queue >= NQ; bit 2: departure queue >= NQ.
        err_o: u3 = 3 => Radix::Hex,
        /// BCN frame stream: a beat this cycle (registered).
        tx_valid_o: bool = 1,
        /// The last beat of a frame.
        tx_last_o: bool = 1,
        /// Unused bytes of the last beat (always 0: 64-byte frames).
        tx_empty_o: u3 = 3,
        /// The beat, frame byte 8k + j in bits [8j +: 8]; 0 when not valid.
        tx_data_o: u64 = 64 => Radix::Hex,
        /// Depth of each queue in bytes (registered).
        q_o: Vec<u32> = (p.qw, p.nq),
        /// Total depth in bytes (registered).
        tot_o: u32 = p.tw(),
        /// Sampled arrivals, saturating.
        samples_o: u32 = p.cw,
        /// Messages decided, saturating.
        msgs_o: u32 = p.cw,
        /// Messages dropped (pending slot full), saturating.
        msg_drops_o: u32 = p.cw,
        /// Arrivals dropped, saturating.
        drops_o: u32 = p.cw,
        /// Rate-limiter tags stripped on departure, saturating.
        strips_o: u32 = p.cw,
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's.
    pub struct BcnCpState<BcnCpParams> |p| {
        /// Depth per queue.
        q_q: Vec<u32> = (p.qw, p.nq),
        /// Total depth.
        tot_q: u32 = p.tw(),
        /// Depth of each queue at its last sample.
        qold_q: Vec<u32> = (p.qw, p.nq),
        /// Sampling LFSR (prim_lfsr).
        lfsr_q: u16 = 16 => Radix::Hex,
        /// Free-running cycle counter (wraps).
        ts_q: u32 = TSW,
        /// A frame is on the wire.
        tx_busy_q: bool = 1,
        /// Beat of the frame on the wire.
        tx_beat_q: u3 = 3,
        /// CRC register of the frame on the wire.
        tx_crc_q: u32 = 32 => Radix::Hex,
        /// Message on the wire: sampled SA (the frame's DA).
        cur_sa_q: u64 = 48 => Radix::Hex,
        /// Message on the wire: sampled DA.
        cur_da_q: u64 = 48 => Radix::Hex,
        /// Message on the wire: sampled priority.
        cur_prio_q: u3 = 3,
        /// Message on the wire: CPID.
        cur_cpid_q: u16 = 16,
        /// Message on the wire: Qoff.
        cur_qoff_q: u16 = 16,
        /// Message on the wire: Qdelta.
        cur_qdelta_q: u16 = 16,
        /// Message on the wire: timestamp.
        cur_ts_q: u32 = TSW,
        /// Message on the wire: tagged.
        cur_rlt_q: bool = 1,
        /// Message on the wire: tag id.
        cur_rlt_id_q: u16 = 16,
        /// Message on the wire: tag CPID.
        cur_rlt_cpid_q: u16 = 16,
        /// Message on the wire: the sampled frame's EtherType.
        cur_etype_q: u16 = 16 => Radix::Hex,
        /// The pending slot holds a message.
        pend_valid_q: bool = 1,
        /// Pending message: sampled SA.
        pend_sa_q: u64 = 48 => Radix::Hex,
        /// Pending message: sampled DA.
        pend_da_q: u64 = 48 => Radix::Hex,
        /// Pending message: sampled priority.
        pend_prio_q: u3 = 3,
        /// Pending message: CPID.
        pend_cpid_q: u16 = 16,
        /// Pending message: Qoff.
        pend_qoff_q: u16 = 16,
        /// Pending message: Qdelta.
        pend_qdelta_q: u16 = 16,
        /// Pending message: timestamp.
        pend_ts_q: u32 = TSW,
        /// Pending message: tagged.
        pend_rlt_q: bool = 1,
        /// Pending message: tag id.
        pend_rlt_id_q: u16 = 16,
        /// Pending message: tag CPID.
        pend_rlt_cpid_q: u16 = 16,
        /// Pending message: the sampled frame's EtherType.
        pend_etype_q: u16 = 16 => Radix::Hex,
        /// Counter behind samples_o (the RTL's `cnt_q[0]`).
        samples_q: u32 = p.cw,
        /// Counter behind msgs_o (the RTL's `cnt_q[1]`).
        msgs_q: u32 = p.cw,
        /// Counter behind msg_drops_o (the RTL's `cnt_q[2]`).
        msg_drops_q: u32 = p.cw,
        /// Counter behind drops_o (the RTL's `cnt_q[3]`).
        drops_q: u32 = p.cw,
        /// Counter behind strips_o (the RTL's `cnt_q[4]`).
        strips_q: u32 = p.cw,
    }
}

/// A BCN message: what the frame carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Msg {
    /// The sampled frame's SA: the BCN frame's DA.
    pub sa: u64,
    /// The sampled frame's DA.
    pub da: u64,
    /// The sampled frame's priority.
    pub prio: u8,
    /// CPID.
    pub cpid: u16,
    /// Qoffset.
    pub qoff: i16,
    /// Qdelta.
    pub qdelta: i16,
    /// Timestamp.
    pub ts: u32,
    /// The sampled frame carried a rate-limiter tag.
    pub rlt: bool,
    /// Its id.
    pub rlt_id: u16,
    /// Its CPID.
    pub rlt_cpid: u16,
    /// The sampled frame's EtherType.
    pub etype: u16,
}

/// Saturates `x` to signed 16 bits.
pub fn sat16(x: i64) -> i16 {
    x.clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// A byte difference in feedback units: floor(`diff` / 64), saturated to
/// signed 16 bits (Qoff and Qdelta).
pub fn units(diff: i64) -> i16 {
    sat16(diff >> UNIT_SHIFT)
}

/// The feedback `Fb = Qoff - floor(w * Qdelta / 4)` (W = `w` / 4 in u3.2),
/// exact, then saturated to signed 16 bits. The one definition, shared with
/// the reaction point's model.
pub fn feedback(qoff: i16, qdelta: i16, w: u5) -> i16 {
    let wd = (w.value() as i64 * qdelta as i64) >> 2;
    sat16(qoff as i64 - wd)
}

/// The message is sent: negative feedback, or a sampled frame whose tag
/// names this point (`own`).
pub fn sends(fb: i16, own: bool) -> bool {
    fb < 0 || own
}

/// Bytes 0..59 of the BCN frame of message `m` (everything but the FCS).
pub fn frame_head(c: &BcnCpConfig, m: &Msg) -> [u8; FRAME_BYTES - 4] {
    let mut f = [0u8; FRAME_BYTES - 4];
    f[0..6].copy_from_slice(&mac_bytes(m.sa));
    f[6..12].copy_from_slice(&mac_bytes(c.cfg_cp_sa_i));
    f[12..14].copy_from_slice(&TPID.to_be_bytes());
    f[14] = c.cfg_pcp_i.value() << 5;
    f[15] = 0;
    f[16..18].copy_from_slice(&c.cfg_etype_i.to_be_bytes());
    f[18..20].copy_from_slice(&m.cpid.to_be_bytes());
    f[20..22].copy_from_slice(&m.qoff.to_be_bytes());
    f[22..24].copy_from_slice(&m.qdelta.to_be_bytes());
    f[24..28].copy_from_slice(&m.ts.to_be_bytes());
    // The first 20 bytes of the sampled frame, rebuilt from its header fields.
    f[28..34].copy_from_slice(&mac_bytes(m.da));
    f[34..40].copy_from_slice(&mac_bytes(m.sa));
    f[40..42].copy_from_slice(&TPID.to_be_bytes());
    f[42] = m.prio << 5;
    f[43] = 0;
    if m.rlt {
        f[44..46].copy_from_slice(&RLT_ETHERTYPE.to_be_bytes());
        f[46..48].copy_from_slice(&m.rlt_cpid.to_be_bytes());
        f[48..50].copy_from_slice(&m.rlt_id.to_be_bytes());
        f[50..52].copy_from_slice(&m.etype.to_be_bytes());
    } else {
        f[44..46].copy_from_slice(&m.etype.to_be_bytes());
    }
    f
}

/// The whole 64-byte BCN frame of `m`, FCS included (reference encoder).
pub fn bcn_frame(c: &BcnCpConfig, m: &Msg) -> [u8; FRAME_BYTES] {
    let h = frame_head(c, m);
    let mut f = [0u8; FRAME_BYTES];
    f[..60].copy_from_slice(&h);
    f[60..].copy_from_slice(&crc32(&h).to_le_bytes());
    f
}

/// Decodes a BCN frame (64 bytes, FCS checked): the message, the PCP of its
/// tag and its EtherType; `None` when it is not one.
pub fn parse_frame(f: &[u8]) -> Option<(Msg, u8, u16)> {
    if f.len() != FRAME_BYTES || crc32(&f[..60]).to_le_bytes() != f[60..64] {
        return None;
    }
    let be16 = |k: usize| u16::from_be_bytes([f[k], f[k + 1]]);
    let mac = |k: usize| f[k..k + 6].iter().fold(0u64, |a, &b| a << 8 | b as u64);
    if be16(12) != TPID || be16(40) != TPID || mac(0) != mac(34) {
        return None;
    }
    let rlt = be16(44) == RLT_ETHERTYPE;
    Some((
        Msg {
            sa: mac(0),
            da: mac(28),
            prio: f[42] >> 5,
            cpid: be16(18),
            qoff: be16(20) as i16,
            qdelta: be16(22) as i16,
            ts: u32::from_be_bytes([f[24], f[25], f[26], f[27]]),
            rlt,
            rlt_id: if rlt { be16(48) } else { 0 },
            rlt_cpid: if rlt { be16(46) } else { 0 },
            etype: if rlt { be16(50) } else { be16(44) },
        },
        f[14] >> 5,
        be16(16),
    ))
}

crate::coverage_bins! {
    /// Functional coverage bins (indices into [`BINS`]); each variant carries
    /// its name.
    pub enum Bin / BINS {
        /// An arrival is sampled.
        Sample = "sample",
        /// Sampled at the threshold: the compared LFSR bits are cfg_pm_i - 1.
        SampleAtThreshold = "sample_at_threshold",
        /// Not sampled at the threshold: the compared bits equal cfg_pm_i.
        MissAtThreshold = "miss_at_threshold",
        /// A message for negative feedback (untagged frame).
        MsgNegative = "msg_negative_fb",
        /// A message for a frame tagged by this point, Fb >= 0.
        MsgTaggedNonNegative = "msg_tagged_fb_non_negative",
        /// A message for a frame tagged by this point, Fb < 0.
        MsgTaggedNegative = "msg_tagged_fb_negative",
        /// A message for a frame tagged by another point (Fb < 0: congested here).
        MsgTagOther = "msg_tag_other_point",
        /// A frame tagged by another point, sampled with Fb >= 0: no message.
        TagOtherSilent = "tag_other_point_silent",
        /// A BCN frame drew LFSR bits below cfg_pm_i: not sampled.
        BcnNotSampled = "bcn_frame_not_sampled",
        /// A sample without a message (untagged, Fb >= 0).
        SampleNoMsg = "sample_without_msg",
        /// Fb is exactly 0 on a sample.
        FbZero = "fb_zero",
        /// Fb is -1 on a sample (the smallest negative feedback).
        FbMinusOne = "fb_minus_one",
        /// The depth is exactly Qeq on a sample.
        AtEquilibrium = "depth_at_qeq",
        /// Qoff saturated at +32767.
        QoffSatPos = "qoff_saturated_pos",
        /// Qoff saturated at -32768.
        QoffSatNeg = "qoff_saturated_neg",
        /// Qdelta saturated (either end).
        QdeltaSat = "qdelta_saturated",
        /// Qdelta negative (the queue shrank since the last sample).
        QdeltaNeg = "qdelta_negative",
        /// Fb saturated (either end) while Qoff did not.
        FbSat = "fb_saturated",
        /// The W term is rounded down (w * Qdelta not a multiple of 4, negative).
        FbFloorNeg = "fb_floor_negative_product",
        /// An arrival dropped at the queue limit.
        DropQueue = "drop_queue_limit",
        /// An arrival dropped at the buffer limit only.
        DropBuffer = "drop_buffer_limit",
        /// An arrival fills its queue exactly to the limit.
        FillsQueue = "arrival_fills_queue_exactly",
        /// An arrival fills the buffer exactly to the limit.
        FillsBuffer = "arrival_fills_buffer_exactly",
        /// A dropped arrival is sampled.
        SampleDropped = "sample_of_dropped_arrival",
        /// Arrival and departure on the same queue in one cycle.
        SameQueue = "arrival_and_departure_same_queue",
        /// A departure longer than its queue (clamped).
        DepClamped = "departure_clamped",
        /// A departure empties its queue exactly.
        DepEmpties = "departure_empties_queue",
        /// A rate-limiter tag stripped on departure.
        Strip = "tag_stripped",
        /// A tagged departure whose tag names another point: kept.
        TagKept = "tag_kept",
        /// A message goes to the pending slot.
        MsgPending = "msg_pending",
        /// A message is dropped (pending slot full).
        MsgDropped = "msg_dropped",
        /// A message decided on the last beat, no pending: back to back.
        MsgAtLastBeat = "msg_at_last_beat",
        /// A pending message starts right after a last beat while a new one takes the slot.
        PendingAndNew = "pending_starts_and_new_pending",
        /// An arrival on a queue >= NQ.
        ArrOutOfRange = "arrival_queue_out_of_range",
        /// A departure on a queue >= NQ.
        DepOutOfRange = "departure_queue_out_of_range",
        /// A counter at its maximum.
        CounterSaturated = "counter_saturated",
        /// Illegal configuration.
        ConfigError = "config_error",
    }
}

/// A sample's header fields, carried through the feedback stages (the
/// RTL's `sN_pay_q`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pay {
    /// The sampled frame's SA.
    pub sa: u64,
    /// Its DA.
    pub da: u64,
    /// Its priority.
    pub prio: u8,
    /// Its queue.
    pub queue: u8,
    /// Its tag names this point.
    pub own: bool,
    /// It carried a rate-limiter tag.
    pub rlt: bool,
    /// That tag's id (as on the port, also when untagged).
    pub rlt_id: u16,
    /// That tag's CPID (as on the port).
    pub rlt_cpid: u16,
    /// Its EtherType.
    pub etype: u16,
}

/// The feedback pipeline's registers, named like the RTL's
/// (`docs/bcn_cp.md`, "Pipeline and latency"); the data registers of an
/// empty stage keep whatever they held (the RTL's are not reset).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pipe {
    /// Stage 1 holds a sample.
    pub s1_valid_q: bool,
    /// Stage 1: the sampled queue's depth at the end of the sample's cycle.
    pub s1_qn_q: u32,
    /// Stage 1: its Qeq.
    pub s1_qeq_q: u32,
    /// Stage 1: its Qold before the sample.
    pub s1_qold_q: u32,
    /// Stage 1: header fields.
    pub s1_pay_q: Pay,
    /// Stage 2 holds a sample.
    pub s2_valid_q: bool,
    /// Stage 2: Qoff.
    pub s2_qoff_q: i16,
    /// Stage 2: Qdelta.
    pub s2_qdelta_q: i16,
    /// Stage 2: header fields.
    pub s2_pay_q: Pay,
    /// Stage 3 holds a sample.
    pub s3_valid_q: bool,
    /// Stage 3: Qoff.
    pub s3_qoff_q: i16,
    /// Stage 3: Qdelta.
    pub s3_qdelta_q: i16,
    /// Stage 3: `cfg_w_i * Qdelta`, exact (21 bits signed).
    pub s3_wq_q: i32,
    /// Stage 3: header fields.
    pub s3_pay_q: Pay,
}

/// The BCN congestion point model.
#[derive(Clone, Debug)]
pub struct BcnCp {
    p: BcnCpParams,
    c: BcnCpConfig,
    cfg_err: bool,
    s: BcnCpState,
    /// The feedback stages.
    pipe: Pipe,
    /// Bins hit by the last step (bit `Bin as usize`).
    ev: u64,
}

impl BcnCp {
    /// The configuration.
    pub fn config(&self) -> &BcnCpConfig {
        &self.c
    }

    /// The message on the wire.
    pub fn cur(&self) -> Msg {
        let s = &self.s;
        Msg {
            sa: s.cur_sa_q,
            da: s.cur_da_q,
            prio: s.cur_prio_q.value(),
            cpid: s.cur_cpid_q,
            qoff: s.cur_qoff_q as i16,
            qdelta: s.cur_qdelta_q as i16,
            ts: s.cur_ts_q,
            rlt: s.cur_rlt_q,
            rlt_id: s.cur_rlt_id_q,
            rlt_cpid: s.cur_rlt_cpid_q,
            etype: s.cur_etype_q,
        }
    }

    /// The feedback stages.
    pub fn pipe(&self) -> &Pipe {
        &self.pipe
    }

    /// The pending message, if any.
    pub fn pending(&self) -> Option<Msg> {
        self.s.pend_valid_q.then(|| Self::pend_of(&self.s))
    }

    fn set_cur(s: &mut BcnCpState, m: &Msg) {
        s.cur_sa_q = m.sa;
        s.cur_da_q = m.da;
        s.cur_prio_q = u3::new(m.prio);
        s.cur_cpid_q = m.cpid;
        s.cur_qoff_q = m.qoff as u16;
        s.cur_qdelta_q = m.qdelta as u16;
        s.cur_ts_q = m.ts;
        s.cur_rlt_q = m.rlt;
        s.cur_rlt_id_q = m.rlt_id;
        s.cur_rlt_cpid_q = m.rlt_cpid;
        s.cur_etype_q = m.etype;
    }

    fn set_pend(s: &mut BcnCpState, m: &Msg) {
        s.pend_sa_q = m.sa;
        s.pend_da_q = m.da;
        s.pend_prio_q = u3::new(m.prio);
        s.pend_cpid_q = m.cpid;
        s.pend_qoff_q = m.qoff as u16;
        s.pend_qdelta_q = m.qdelta as u16;
        s.pend_ts_q = m.ts;
        s.pend_rlt_q = m.rlt;
        s.pend_rlt_id_q = m.rlt_id;
        s.pend_rlt_cpid_q = m.rlt_cpid;
        s.pend_etype_q = m.etype;
    }

    /// The illegal-configuration flag (`cfg_err_o`).
    pub fn cfg_err(c: &BcnCpConfig) -> bool {
        (c.cfg_cp_sa_i >> 40) & 1 != 0
            || c.cfg_pm_i.value() > PM_ALWAYS
            || c.cfg_qeq_i.iter().any(|&q| q > c.cfg_qmax_i)
    }

    /// Checks every invariant of the spec; panics with the broken one.
    pub fn assert_invariants(&self) {
        let s = &self.s;
        let sum: u64 = s.q_q.iter().map(|&q| q as u64).sum();
        assert_eq!(sum, s.tot_q as u64, "total depth");
        assert!(s.tot_q <= self.c.cfg_buf_i, "buffer over its limit");
        for (k, &q) in s.q_q.iter().enumerate() {
            assert!(q <= self.c.cfg_qmax_i, "queue {k} over its limit");
        }
        assert_ne!(s.lfsr_q, 0, "LFSR at 0");
        if !s.tx_busy_q {
            assert_eq!(s.tx_beat_q.value(), 0, "beat while idle");
            assert_eq!(s.tx_crc_q, CRC_INIT, "CRC while idle");
            assert!(!s.pend_valid_q, "pending while idle");
        }
    }

    /// The beat on `tx_data_o` (0 when idle).
    fn tx_beat(&self) -> u64 {
        let s = &self.s;
        if !s.tx_busy_q {
            return 0;
        }
        let b = s.tx_beat_q.value() as usize;
        let h = frame_head(&self.c, &self.cur());
        let n = if b == FRAME_BEATS - 1 { 4 } else { 8 };
        let mut v = 0u64;
        for j in 0..n {
            v |= (h[8 * b + j] as u64) << (8 * j);
        }
        if b == FRAME_BEATS - 1 {
            v |= (!crc32_beat(s.tx_crc_q, v, 4) as u64) << 32;
        }
        v
    }
}

impl Block for BcnCp {
    const NAME: &'static str = "bcn_cp";
    type Params = BcnCpParams;
    type Config = BcnCpConfig;
    type Inputs = BcnCpInputs;
    type Outputs = BcnCpOutputs;
    type State = BcnCpState;

    fn variants() -> Vec<BcnCpParams> {
        vec![
            BcnCpParams {
                nq: 8,
                qw: 24,
                cw: 16,
            },
            BcnCpParams {
                nq: 1,
                qw: 16,
                cw: 4,
            },
            BcnCpParams {
                nq: 3,
                qw: 20,
                cw: 8,
            },
        ]
    }

    /// Synthesised at scale at its default variant (8 queues, one per
    /// priority of an egress port).
    fn scale() -> Vec<BcnCpParams> {
        Self::variants()[..1].to_vec()
    }

    fn default_config(p: &BcnCpParams) -> BcnCpConfig {
        // QCN's set point of 26,000 bytes; a queue limit of 150,000 bytes
        // (QCN's sample base) and a buffer of twice that; W = 2; Pm = 10/1024.
        let qmax = (p.qmax() as u32).min(150_000);
        BcnCpConfig {
            cfg_cp_sa_i: 0x02_00_5e_00_bc_01,
            cfg_cpid_i: u13::new(0x0a5),
            cfg_pcp_i: u3::new(7),
            cfg_etype_i: BCN_ETHERTYPE,
            cfg_qeq_i: vec![26_000.min(qmax / 2); p.nq],
            cfg_qmax_i: qmax,
            cfg_buf_i: (2 * qmax as u64).min(mask(p.tw())) as u32,
            cfg_w_i: u5::new(8),
            cfg_pm_i: u11::new(10),
        }
    }

    fn check(p: &BcnCpParams, c: &BcnCpConfig) -> Result<(), ConfigError> {
        check_param("NQ", "queues", p.nq, 1, 8)?;
        check_param("QW", "queue depth bits", p.qw as usize, LW as usize, 28)?;
        check_param("CW", "counter bits", p.cw as usize, 1, 32)?;
        c.to_words(p)?;
        if (c.cfg_cp_sa_i >> 40) & 1 != 0 {
            return Err(ConfigError::new(
                "cfg_cp_sa_i",
                format!(
                    "0x{:012x} is a multicast address (bit 40, the I/G bit of the first octet, \
                     is set); a source address must be unicast",
                    c.cfg_cp_sa_i
                ),
            ));
        }
        check_range("cfg_pm_i", c.cfg_pm_i.value() as u64, 0, PM_ALWAYS as u64)?;
        if let Some((k, q)) = c
            .cfg_qeq_i
            .iter()
            .enumerate()
            .find(|(_, &q)| q > c.cfg_qmax_i)
        {
            return Err(ConfigError::new(
                "cfg_qeq_i",
                format!(
                    "queue {k}: equilibrium {q} bytes is above the queue limit cfg_qmax_i = {}; \
                     legal: 0..={}",
                    c.cfg_qmax_i, c.cfg_qmax_i
                ),
            ));
        }
        Ok(())
    }

    fn new(p: &BcnCpParams, c: &BcnCpConfig) -> Self {
        let mut s = BcnCpState::zero(p);
        s.lfsr_q = LFSR_SEED as u16;
        s.tx_crc_q = CRC_INIT;
        BcnCp {
            p: *p,
            c: c.clone(),
            cfg_err: Self::cfg_err(c),
            s,
            pipe: Pipe::default(),
            ev: 0,
        }
    }

    fn params(&self) -> &BcnCpParams {
        &self.p
    }

    fn state(&self) -> &BcnCpState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &BcnCpInputs, _o: &BcnCpOutputs, hits: &mut [u64]) {
        let mut ev = self.ev;
        while ev != 0 {
            hits[ev.trailing_zeros() as usize] += 1;
            ev &= ev - 1;
        }
    }

    fn step_into(&mut self, i: &BcnCpInputs, o: &mut BcnCpOutputs) {
        let p = self.p;
        let nq = p.nq;
        let mut ev = 0u64;
        let mut hit = |b: Bin| ev |= 1 << b as u32;

        // Registered outputs: the registers at the start of the cycle.
        let tx_last = self.s.tx_busy_q && self.s.tx_beat_q.value() as usize == FRAME_BEATS - 1;
        o.tx_data_o = self.tx_beat();
        let c = &self.c;
        let s = &mut self.s;
        o.tx_valid_o = s.tx_busy_q;
        o.tx_last_o = tx_last;
        o.tx_empty_o = u3::new(0);
        o.q_o.clone_from(&s.q_q);
        o.tot_o = s.tot_q;
        o.samples_o = s.samples_q;
        o.msgs_o = s.msgs_q;
        o.msg_drops_o = s.msg_drops_q;
        o.drops_o = s.drops_q;
        o.strips_o = s.strips_q;
        o.cfg_err_o = self.cfg_err;
        if self.cfg_err {
            hit(Bin::ConfigError);
        }
        let cmax = p.cmax();
        if [s.samples_q, s.msgs_q, s.msg_drops_q, s.drops_q, s.strips_q]
            .iter()
            .any(|&v| v as u64 == cmax)
        {
            hit(Bin::CounterSaturated);
        }
        let mut err = 0u8;

        // 1. Departure (released first): clamped to what the queue holds.
        let dq = i.dep_queue_i.value() as usize;
        let dep_in = i.dep_valid_i && dq < nq;
        if i.dep_valid_i && !dep_in {
            err |= 4;
            hit(Bin::DepOutOfRange);
        }
        let mut rel = 0u64;
        if dep_in {
            let have = s.q_q[dq] as u64;
            let len = i.dep_len_i.value() as u64;
            if len > have {
                err |= 1;
                hit(Bin::DepClamped);
            }
            rel = len.min(have);
            if have > 0 && len == have {
                hit(Bin::DepEmpties);
            }
        }
        let dep_cpid = (c.cfg_cpid_i.value() << QIW) | dq as u16;
        let strip = dep_in && i.dep_rlt_i && i.dep_rlt_cpid_i == dep_cpid;
        o.dep_strip_o = strip;
        if strip {
            hit(Bin::Strip);
        }
        if dep_in && i.dep_rlt_i && !strip {
            hit(Bin::TagKept);
        }

        // 2. Arrival: admitted when it fits its queue and the buffer, both
        //    after the departure.
        let aq = i.arr_queue_i.value() as usize;
        let arr_in = i.arr_valid_i && aq < nq;
        if i.arr_valid_i && !arr_in {
            err |= 2;
            hit(Bin::ArrOutOfRange);
        }
        let len = i.arr_len_i.value() as u64;
        let mut admit = false;
        if arr_in {
            let q1 = s.q_q[aq] as u64 - if dep_in && dq == aq { rel } else { 0 };
            let tot1 = s.tot_q as u64 - rel;
            let fits_q = q1 + len <= c.cfg_qmax_i as u64;
            let fits_b = tot1 + len <= c.cfg_buf_i as u64;
            admit = fits_q && fits_b;
            if !fits_q {
                hit(Bin::DropQueue);
            } else if !fits_b {
                hit(Bin::DropBuffer);
            }
            if admit && q1 + len == c.cfg_qmax_i as u64 {
                hit(Bin::FillsQueue);
            }
            if admit && tot1 + len == c.cfg_buf_i as u64 {
                hit(Bin::FillsBuffer);
            }
            if dep_in && dq == aq {
                hit(Bin::SameQueue);
            }
        }
        o.arr_drop_o = arr_in && !admit;
        let inc = if admit { len } else { 0 };
        // The depths' next values: the release and the admission netted
        // (they never leave [0, cfg_qmax_i] and [0, cfg_buf_i]).
        let qmax = p.qmax();
        // (Arrays of the largest NQ: no allocation per step.)
        let mut q_d = [0u32; 8];
        q_d[..nq].copy_from_slice(&s.q_q);
        for (k, q) in q_d.iter_mut().enumerate().take(nq) {
            let (ik, dk) = (
                if admit && k == aq { inc } else { 0 },
                if dep_in && k == dq { rel } else { 0 },
            );
            if ik != 0 || dk != 0 {
                let (v, sat) = SatCnt {
                    count: *q as u64,
                    max: qmax,
                }
                .next(false, ik, dk);
                debug_assert!(!sat);
                *q = v as u32;
            }
        }
        let tot_d = SatCnt {
            count: s.tot_q as u64,
            max: mask(p.tw()),
        }
        .next(false, inc, rel)
        .0 as u32;

        // 3. Sampling: the LFSR's low bits against cfg_pm_i; the LFSR steps
        //    on every arrival.
        let low = s.lfsr_q as u64 & mask(PM_BITS);
        let pm = c.cfg_pm_i.value() as u64;
        let bcn = i.arr_etype_i == c.cfg_etype_i;
        let sample = arr_in && !bcn && low < pm;
        if arr_in && bcn && low < pm {
            hit(Bin::BcnNotSampled);
        }
        if arr_in && pm > 0 && low == pm - 1 {
            hit(Bin::SampleAtThreshold);
        }
        if arr_in && low == pm {
            hit(Bin::MissAtThreshold);
        }
        let mut lf = Lfsr::new(s.lfsr_q as u64, LFSR_TAPS, LFSR_STEPS);
        lf.clock(i.arr_valid_i);
        let lfsr_d = lf.state as u16;

        // 4. Feedback, in three stages (docs/bcn_cp.md, "Pipeline and
        //    latency"): every stage's next value from the registers at the
        //    start of the cycle (`_q`) and this cycle's inputs.
        let pq = &self.pipe;
        // Stage 0: the sample's depth at the end of the cycle (`qn`, its
        // queue's next depth); Qold is written here, where it is read.
        let cpid_of = |q: u8| (c.cfg_cpid_i.value() << QIW) | q as u16;
        let mut s1_d = Pipe {
            s1_valid_q: sample,
            ..pq.clone()
        };
        if sample {
            hit(Bin::Sample);
            if !admit {
                hit(Bin::SampleDropped);
            }
            let own = i.arr_rlt_i && i.arr_rlt_cpid_i == cpid_of(aq as u8);
            s1_d.s1_qn_q = q_d[aq];
            s1_d.s1_qeq_q = c.cfg_qeq_i[aq];
            s1_d.s1_qold_q = s.qold_q[aq];
            s1_d.s1_pay_q = Pay {
                sa: i.arr_sa_i,
                da: i.arr_da_i,
                prio: i.arr_prio_i.value(),
                queue: aq as u8,
                own,
                rlt: i.arr_rlt_i,
                rlt_id: i.arr_rlt_id_i,
                rlt_cpid: i.arr_rlt_cpid_i,
                etype: i.arr_etype_i,
            };
        }
        let mut qold_d = [0u32; 8];
        qold_d[..nq].copy_from_slice(&s.qold_q);
        if sample {
            qold_d[aq] = q_d[aq];
        }
        // Stage 1: the two differences in feedback units.
        let s2_valid_d = pq.s1_valid_q;
        let (qn, qeq, qold) = (pq.s1_qn_q as i64, pq.s1_qeq_q as i64, pq.s1_qold_q as i64);
        let s2_qoff_d = units(qeq - qn);
        let s2_qdelta_d = units(qn - qold);
        if s2_valid_d {
            if (qeq - qn) >> UNIT_SHIFT > i16::MAX as i64 {
                hit(Bin::QoffSatPos);
            }
            if (qeq - qn) >> UNIT_SHIFT < i16::MIN as i64 {
                hit(Bin::QoffSatNeg);
            }
            if (qn - qold) >> UNIT_SHIFT != s2_qdelta_d as i64 {
                hit(Bin::QdeltaSat);
            }
            if s2_qdelta_d < 0 {
                hit(Bin::QdeltaNeg);
            }
            if qn == qeq {
                hit(Bin::AtEquilibrium);
            }
        }
        // Stage 2: the multiply.
        let s3_valid_d = pq.s2_valid_q;
        let s3_wq_d = c.cfg_w_i.value() as i32 * pq.s2_qdelta_q as i32;
        // Stage 3: Fb and the decision; the sample on the ports.
        let pay = pq.s3_pay_q;
        let fb = sat16(pq.s3_qoff_q as i64 - (pq.s3_wq_q as i64 >> 2));
        debug_assert_eq!(fb, feedback(pq.s3_qoff_q, pq.s3_qdelta_q, c.cfg_w_i));
        let fb_sample = pq.s3_valid_q;
        let send = fb_sample && sends(fb, pay.own);
        let mut msg = None;
        refill_msg(o);
        if fb_sample {
            let (qoff, qdelta, wq) = (pq.s3_qoff_q, pq.s3_qdelta_q, pq.s3_wq_q as i64);
            if qoff as i64 - (wq >> 2) != fb as i64 {
                hit(Bin::FbSat);
            }
            if wq < 0 && wq % 4 != 0 {
                hit(Bin::FbFloorNeg);
            }
            if fb == 0 {
                hit(Bin::FbZero);
            }
            if fb == -1 {
                hit(Bin::FbMinusOne);
            }
            match (send, pay.rlt, pay.own) {
                (false, true, _) => hit(Bin::TagOtherSilent),
                (false, false, _) => hit(Bin::SampleNoMsg),
                (true, false, _) => hit(Bin::MsgNegative),
                (true, true, false) => hit(Bin::MsgTagOther),
                (true, true, true) if fb < 0 => hit(Bin::MsgTaggedNegative),
                (true, true, true) => hit(Bin::MsgTaggedNonNegative),
            }
            let m = Msg {
                sa: pay.sa,
                da: pay.da,
                prio: pay.prio,
                cpid: cpid_of(pay.queue),
                qoff,
                qdelta,
                // The cycle counter of the sample's cycle.
                ts: s.ts_q.wrapping_sub(FB_LATENCY),
                rlt: pay.rlt,
                rlt_id: if pay.rlt { pay.rlt_id } else { 0 },
                rlt_cpid: if pay.rlt { pay.rlt_cpid } else { 0 },
                etype: pay.etype,
            };
            o.sample_o = true;
            o.msg_valid_o = send;
            o.msg_flow_da_o = m.da;
            o.msg_sa_o = m.sa;
            o.msg_prio_o = u3::new(m.prio);
            o.msg_cpid_o = m.cpid;
            o.msg_qoff_o = S16::new(qoff);
            o.msg_qdelta_o = S16::new(qdelta);
            o.msg_fb_o = S16::new(fb);
            o.msg_rlt_o = m.rlt;
            o.msg_rlt_id_o = m.rlt_id;
            o.msg_rlt_cpid_o = m.rlt_cpid;
            o.msg_rlt_own_o = pay.own;
            o.msg_etype_o = m.etype;
            o.msg_ts_o = m.ts;
            if send {
                msg = Some(m);
            }
        }
        // The stages advance: each takes the one before it.
        self.pipe = Pipe {
            s2_valid_q: s2_valid_d,
            s2_qoff_q: s2_qoff_d,
            s2_qdelta_q: s2_qdelta_d,
            s2_pay_q: pq.s1_pay_q,
            s3_valid_q: s3_valid_d,
            s3_qoff_q: pq.s2_qoff_q,
            s3_qdelta_q: pq.s2_qdelta_q,
            s3_wq_q: s3_wq_d,
            s3_pay_q: pq.s2_pay_q,
            ..s1_d
        };
        o.err_o = u3::new(err);

        // 5. Transmitter: the wire is free for a new frame next cycle when
        //    idle or on the last beat; the pending message goes first.
        let free = !s.tx_busy_q || tx_last;
        let mut msg_drop = false;
        if free {
            let pend = s.pend_valid_q;
            let next = if pend {
                let m = BcnCp::pend_of(s);
                if let Some(n) = msg {
                    BcnCp::set_pend(s, &n);
                    hit(Bin::PendingAndNew);
                }
                s.pend_valid_q = msg.is_some();
                Some(m)
            } else {
                if msg.is_some() && tx_last {
                    hit(Bin::MsgAtLastBeat);
                }
                msg
            };
            match next {
                Some(m) => {
                    BcnCp::set_cur(s, &m);
                    s.tx_busy_q = true;
                }
                None => s.tx_busy_q = false,
            }
            s.tx_beat_q = u3::new(0);
            s.tx_crc_q = CRC_INIT;
        } else {
            s.tx_crc_q = crc32_beat(s.tx_crc_q, o.tx_data_o, 8);
            s.tx_beat_q = u3::new(s.tx_beat_q.value() + 1);
            if let Some(n) = msg {
                if s.pend_valid_q {
                    msg_drop = true;
                    hit(Bin::MsgDropped);
                } else {
                    BcnCp::set_pend(s, &n);
                    s.pend_valid_q = true;
                    hit(Bin::MsgPending);
                }
            }
        }

        // 6. Counters (saturating at 2^CW - 1) and the timestamp; the depths,
        //    Qold and the LFSR take their next values.
        let bump = |v: &mut u32, inc: bool| {
            *v = SatCnt {
                count: *v as u64,
                max: cmax,
            }
            .next(false, inc as u64, 0)
            .0 as u32;
        };
        bump(&mut s.samples_q, fb_sample);
        bump(&mut s.msgs_q, msg.is_some());
        bump(&mut s.msg_drops_q, msg_drop);
        bump(&mut s.drops_q, arr_in && !admit);
        bump(&mut s.strips_q, strip);
        s.ts_q = s.ts_q.wrapping_add(1);
        s.q_q.copy_from_slice(&q_d[..nq]);
        s.tot_q = tot_d;
        s.qold_q.copy_from_slice(&qold_d[..nq]);
        s.lfsr_q = lfsr_d;
        self.ev = ev;
    }
}

impl BcnCp {
    fn pend_of(s: &BcnCpState) -> Msg {
        Msg {
            sa: s.pend_sa_q,
            da: s.pend_da_q,
            prio: s.pend_prio_q.value(),
            cpid: s.pend_cpid_q,
            qoff: s.pend_qoff_q as i16,
            qdelta: s.pend_qdelta_q as i16,
            ts: s.pend_ts_q,
            rlt: s.pend_rlt_q,
            rlt_id: s.pend_rlt_id_q,
            rlt_cpid: s.pend_rlt_cpid_q,
            etype: s.pend_etype_q,
        }
    }
}

/// The comb. sample and message fields at rest (no sample this cycle).
fn refill_msg(o: &mut BcnCpOutputs) {
    o.sample_o = false;
    o.msg_valid_o = false;
    o.msg_flow_da_o = 0;
    o.msg_sa_o = 0;
    o.msg_prio_o = u3::new(0);
    o.msg_cpid_o = 0;
    o.msg_qoff_o = S16::new(0);
    o.msg_qdelta_o = S16::new(0);
    o.msg_fb_o = S16::new(0);
    o.msg_rlt_o = false;
    o.msg_rlt_id_o = 0;
    o.msg_rlt_cpid_o = 0;
    o.msg_rlt_own_o = false;
    o.msg_etype_o = 0;
    o.msg_ts_o = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_floor_towards_minus_infinity_and_saturate() {
        assert_eq!(units(0), 0);
        assert_eq!(units(63), 0);
        assert_eq!(units(64), 1);
        assert_eq!(units(-1), -1);
        assert_eq!(units(-64), -1);
        assert_eq!(units(-65), -2);
        assert_eq!(units(32_767 * 64 + 63), 32_767);
        assert_eq!(units(32_768 * 64), 32_767);
        assert_eq!(units(-32_768 * 64), -32_768);
        assert_eq!(units(-32_768 * 64 - 1), -32_768);
    }

    #[test]
    fn feedback_examples() {
        let w = u5::new;
        // QCN's w = 2: Fb = Qoff - 2 Qdelta.
        assert_eq!(feedback(10, 3, w(8)), 4);
        assert_eq!(feedback(10, 5, w(8)), 0);
        assert_eq!(feedback(10, 6, w(8)), -2);
        // W = 1/4: the product is floored, also when negative.
        assert_eq!(feedback(0, 1, w(1)), 0);
        assert_eq!(feedback(0, -1, w(1)), 1);
        assert_eq!(feedback(0, -5, w(3)), 4); // floor(-15 / 4) = -4
        assert_eq!(feedback(7, 100, w(0)), 7);
        // Exact, then saturated.
        assert_eq!(feedback(-32_768, 32_767, w(31)), -32_768);
        assert_eq!(feedback(32_767, -32_768, w(31)), 32_767);
        assert_eq!(feedback(-32_768, -1, w(4)), -32_767);
        assert!(sends(-1, false) && !sends(0, false) && sends(0, true) && sends(5, true));
        assert!(sends(-1, true) && !sends(3, false));
    }

    fn arrival(q: u8, len: u16) -> BcnCpInputs {
        let mut i = BcnCpInputs::zero(&BcnCpParams::default());
        i.arr_valid_i = true;
        i.arr_queue_i = u3::new(q);
        i.arr_len_i = u14::new(len);
        i.arr_sa_i = 0x02_00_00_00_00_07;
        i
    }

    #[test]
    fn sample_reads_the_depth_at_the_end_of_the_cycle() {
        let p = BcnCpParams::default();
        let mut c = BcnCp::default_config(&p);
        c.cfg_pm_i = u11::new(PM_ALWAYS);
        c.cfg_qeq_i = vec![6400; 8];
        let mut m = BcnCp::new(&p, &c);
        // 640 bytes: Q = 640, Qoff = (6400 - 640) / 64 = 90, Qdelta = 10,
        // Fb = 90 - 2 * 10 = 70: no message. In the next cycle 6400 more
        // on the same queue: Q = 7040, Qoff = floor(-640 / 64) = -10,
        // Qdelta = 100 (Qold is the first sample's depth, written in its
        // own cycle), Fb = -210: a message. Each on the ports three cycles
        // after its arrival, nothing before.
        let idle = BcnCpInputs::zero(&p);
        let mut outs = vec![m.step(&arrival(4, 640)), m.step(&arrival(4, 6400))];
        assert_eq!(m.state().qold_q[4], 7040);
        for _ in 0..3 {
            outs.push(m.step(&idle));
        }
        assert!(outs[..3].iter().all(|o| !o.sample_o && !o.msg_valid_o));
        let o = &outs[3];
        assert!(o.sample_o && !o.msg_valid_o);
        assert_eq!(
            (
                o.msg_qoff_o.value(),
                o.msg_qdelta_o.value(),
                o.msg_fb_o.value()
            ),
            (90, 10, 70)
        );
        assert_eq!(o.msg_cpid_o, (0x0a5 << 3) | 4);
        assert_eq!(o.msg_ts_o, 0, "the sample's cycle");
        let o = &outs[4];
        assert_eq!((o.msg_qoff_o.value(), o.msg_qdelta_o.value()), (-10, 100));
        assert_eq!(o.msg_fb_o.value(), -210);
        assert!(o.msg_valid_o);
        assert_eq!(o.msg_ts_o, 1, "the sample's cycle");
        assert!(m.state().tx_busy_q, "the frame starts next cycle");
        m.assert_invariants();
    }

    #[test]
    fn drops_at_the_limits_and_clamps_departures() {
        let p = BcnCpParams::default();
        let mut c = BcnCp::default_config(&p);
        c.cfg_qmax_i = 1000;
        c.cfg_buf_i = 1500;
        c.cfg_qeq_i = vec![500; 8];
        let mut m = BcnCp::new(&p, &c);
        assert!(
            !m.step(&arrival(0, 1000)).arr_drop_o,
            "fills the queue exactly"
        );
        assert!(m.step(&arrival(0, 1)).arr_drop_o, "queue limit");
        assert!(
            !m.step(&arrival(1, 500)).arr_drop_o,
            "fills the buffer exactly"
        );
        assert!(m.step(&arrival(2, 1)).arr_drop_o, "buffer limit");
        // Release first: a departure makes room for the arrival of the same cycle.
        let mut i = arrival(2, 100);
        i.dep_valid_i = true;
        i.dep_queue_i = u3::new(1);
        i.dep_len_i = u14::new(600);
        let o = m.step(&i);
        assert!(!o.arr_drop_o);
        assert_eq!(o.err_o.value(), 1, "600 > 500: clamped and flagged");
        assert_eq!(m.state().q_q[..3], [1000, 0, 100]);
        assert_eq!(m.state().drops_q, 2);
        m.assert_invariants();
    }

    #[test]
    fn illegal_configurations_are_named() {
        let p = BcnCpParams::default();
        let c = BcnCp::default_config(&p);
        assert!(BcnCp::check(&p, &c).is_ok());
        assert!(!BcnCp::cfg_err(&c));
        let mut bad = c.clone();
        bad.cfg_cp_sa_i |= 1 << 40;
        assert_eq!(BcnCp::check(&p, &bad).unwrap_err().field, "cfg_cp_sa_i");
        assert!(BcnCp::cfg_err(&bad));
        let mut bad = c.clone();
        bad.cfg_pm_i = u11::new(PM_ALWAYS + 1);
        assert_eq!(BcnCp::check(&p, &bad).unwrap_err().field, "cfg_pm_i");
        assert!(BcnCp::cfg_err(&bad));
        let mut bad = c.clone();
        bad.cfg_qeq_i[3] = bad.cfg_qmax_i + 1;
        let e = BcnCp::check(&p, &bad).unwrap_err();
        assert!(e.field == "cfg_qeq_i" && e.msg.contains("queue 3"), "{e}");
        assert!(BcnCp::cfg_err(&bad));
        let q = BcnCpParams { nq: 9, ..p };
        assert_eq!(BcnCp::check(&q, &c).unwrap_err().field, "NQ");
    }

    #[test]
    fn bins_have_unique_names() {
        let mut n = BINS.to_vec();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), BINS.len());
        assert_eq!(BINS[Bin::ConfigError as usize], "config_error");
        assert!(BINS.len() <= 64, "the event mask is a u64");
    }
}
