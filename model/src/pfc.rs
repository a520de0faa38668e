//! Golden model of the PFC pause generator (`rtl/pfc.v`, spec `docs/pfc.md`).
//!
//! One Ethernet port, 8 priorities. Transmit: XOFF requests become IEEE
//! 802.1Qbb PFC frames (XOFF, refresh while OFF, RESUME with time 0), one at a
//! time, as 8-byte beats with valid / last / empty. Receive: frames from the
//! same kind of stream are classified (runt, FCS, other, long, bad control,
//! PFC) and a valid PFC frame loads the per-priority pause timers behind
//! `pause_o`.
//!
//! Latency: every output is a register value at the start of the cycle
//! except `rx_done_o` (the class of the frame whose last beat is this cycle)
//! and `cfg_err_o`. A change of `xoff_i` in cycle `t` starts its frame in
//! cycle `t .. t + 7 + gap`, the first beat follows one cycle later.

use crate::block::{Block, ConfigError, Params};
use crate::eth::{
    crc32, crc32_beat, mac_bytes, BEAT_BYTES, CRC_INIT, CRC_RESIDUE, FRAME_BEATS, FRAME_BYTES,
};
use crate::port::{mask, PortGroup};
use arbitrary_int::{u3, u4};

/// Priorities per port.
pub const PRIOS: usize = 8;
/// Destination address of PFC frames (01-80-C2-00-00-01).
pub const PFC_DA: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// MAC control EtherType.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// PFC opcode.
pub const OPCODE_PFC: u16 = 0x0101;
/// Legacy 802.3x PAUSE opcode.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// The 64-byte PFC frame from `sa` with class-enable vector `cev` and the
/// eight times, FCS included (reference encoder, written from the standard).
pub fn pfc_frame(sa: u64, cev: u16, times: &[u16; PRIOS]) -> [u8; FRAME_BYTES] {
    let mut f = [0u8; FRAME_BYTES];
    f[0..6].copy_from_slice(&PFC_DA);
    f[6..12].copy_from_slice(&mac_bytes(sa));
    f[12..14].copy_from_slice(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    f[14..16].copy_from_slice(&OPCODE_PFC.to_be_bytes());
    f[16..18].copy_from_slice(&cev.to_be_bytes());
    for (p, t) in times.iter().enumerate() {
        f[18 + 2 * p..20 + 2 * p].copy_from_slice(&t.to_be_bytes());
    }
    let fcs = crc32(&f[..60]);
    f[60..64].copy_from_slice(&fcs.to_le_bytes());
    f
}

/// Class of a received frame (`rx_done_o`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RxClass {
    /// No frame ends this cycle.
    None = 0,
    /// A valid PFC frame, acted on.
    Pfc = 1,
    /// Shorter than 64 bytes.
    Runt = 2,
    /// Bad FCS.
    Fcs = 3,
    /// Not a MAC control frame (EtherType is not 0x8808).
    Other = 4,
    /// A MAC control frame longer than 64 bytes.
    Long = 5,
    /// Opcode not 0x0101, or DA neither the PFC address nor our own.
    BadCtl = 6,
}

impl RxClass {
    /// The classes' names, indexed by code (for `rx_done_o`).
    pub const NAMES: &'static [&'static str] =
        &["none", "pfc", "runt", "fcs", "other", "long", "bad_ctl"];
    /// All codes, in order.
    pub const ALL: [RxClass; 7] = [
        RxClass::None,
        RxClass::Pfc,
        RxClass::Runt,
        RxClass::Fcs,
        RxClass::Other,
        RxClass::Long,
        RxClass::BadCtl,
    ];
    /// Decodes `rx_done_o`; 7 is not a class.
    pub fn from_code(c: u3) -> Option<RxClass> {
        Self::ALL.get(c.value() as usize).copied()
    }
    /// The `rx_done_o` value.
    pub fn code(self) -> u3 {
        u3::new(self as u8)
    }
}

/// Reference classifier of a whole frame (the spec's table, written from
/// bytes rather than beats): the class and, for a PFC frame, the enable
/// vector (low octet) and times.
pub fn classify(bytes: &[u8], own_sa: u64) -> (RxClass, u8, [u16; PRIOS]) {
    let mut times = [0u16; PRIOS];
    if bytes.len() < FRAME_BYTES {
        return (RxClass::Runt, 0, times);
    }
    let n = bytes.len();
    let fcs = u32::from_le_bytes([bytes[n - 4], bytes[n - 3], bytes[n - 2], bytes[n - 1]]);
    if crc32(&bytes[..n - 4]) != fcs {
        return (RxClass::Fcs, 0, times);
    }
    if u16::from_be_bytes([bytes[12], bytes[13]]) != ETHERTYPE_MAC_CONTROL {
        return (RxClass::Other, 0, times);
    }
    if n > FRAME_BYTES {
        return (RxClass::Long, 0, times);
    }
    let da = &bytes[0..6];
    let da_ok = da == PFC_DA || da == mac_bytes(own_sa);
    if u16::from_be_bytes([bytes[14], bytes[15]]) != OPCODE_PFC || !da_ok {
        return (RxClass::BadCtl, 0, times);
    }
    for (p, t) in times.iter_mut().enumerate() {
        *t = u16::from_be_bytes([bytes[18 + 2 * p], bytes[19 + 2 * p]]);
    }
    (RxClass::Pfc, bytes[17], times)
}

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcParams {
    /// Width of `cfg_qcyc_i` (cycles per pause quantum), 1..=16.
    pub qcw: u32,
    /// Width of the event counters, 1..=32.
    pub cw: u32,
}

impl PfcParams {
    /// Largest counter value.
    pub const fn max(&self) -> u64 {
        mask(self.cw)
    }
    /// Largest `cfg_qcyc_i`.
    pub const fn qcyc_max(&self) -> u64 {
        mask(self.qcw)
    }
}

impl Default for PfcParams {
    fn default() -> Self {
        PfcParams { qcw: 8, cw: 16 }
    }
}

impl Params for PfcParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![("QCW", self.qcw as u64), ("CW", self.cw as u64)]
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct PfcConfig<PfcParams> |p| {
        /// This port's MAC address (SA sent; accepted as DA), unicast.
        cfg_sa_i: u64 = 48 => Radix::Hex,
        /// Pause time sent per priority on XOFF and refresh (quanta).
        cfg_quanta_i: Vec<u16> = (16, PRIOS),
        /// Link speed: cycles per pause quantum of 512 bit times (>= 1).
        cfg_qcyc_i: u16 = p.qcw,
        /// Refresh point R (quanta): re-send when the peer has R quanta left.
        cfg_refresh_i: u16 = 16,
        /// Minimum idle cycles between two frames.
        cfg_gap_i: u8 = 8,
    }
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct PfcInputs<PfcParams> |p| {
        /// XOFF request per priority (level).
        xoff_i: u8 = 8 => Radix::Hex,
        /// Receive stream: a beat this cycle.
        rx_valid_i: bool = 1,
        /// Receive stream: last beat of its frame.
        rx_last_i: bool = 1,
        /// Receive stream: unused high bytes of the last beat.
        rx_empty_i: u3 = 3,
        /// Receive stream: the beat (frame byte 8k+j in bits 8j+7:8j).
        rx_data_i: u64 = 64 => Radix::Hex,
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct PfcOutputs<PfcParams> |p| {
        /// Transmit stream: a beat this cycle (registered).
        tx_valid_o: bool = 1,
        /// Transmit stream: last beat of the frame.
        tx_last_o: bool = 1,
        /// Transmit stream: unused bytes of the last beat (always 0).
        tx_empty_o: u3 = 3,
        /// Transmit stream: the beat (0 when not valid).
        tx_data_o: u64 = 64 => Radix::Hex,
        /// State advertised to the peer per priority (1 = XOFF sent last).
        tx_adv_o: u8 = 8 => Radix::Hex,
        /// Frames started, saturating.
        tx_frames_o: u32 = p.cw,
        /// Pause vector: the receive timer of each priority is running.
        pause_o: u8 = 8 => Radix::Hex,
        /// Class of the frame whose last beat is this cycle (0: none).
        rx_done_o: u3 = 3 => Radix::Names(RxClass::NAMES),
        /// Valid PFC frames received, saturating.
        rx_pfc_o: u32 = p.cw,
        /// Frames shorter than 64 bytes, saturating.
        rx_runt_o: u32 = p.cw,
        /// Frames with a bad FCS, saturating.
        rx_fcs_o: u32 = p.cw,
        /// Frames that are not MAC control frames, saturating.
        rx_other_o: u32 = p.cw,
        /// MAC control frames longer than 64 bytes, saturating.
        rx_long_o: u32 = p.cw,
        /// MAC control frames with a wrong opcode or DA, saturating.
        rx_badctl_o: u32 = p.cw,
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's.
    pub struct PfcState<PfcParams> |p| {
        /// Advertised state per priority.
        tx_adv_q: u8 = 8 => Radix::Hex,
        /// Transmit timers: quanta left.
        tx_tq_q: Vec<u16> = (16, PRIOS),
        /// Transmit timers: cycles left in the current quantum.
        tx_tc_q: Vec<u16> = (p.qcw, PRIOS),
        /// A frame is being sent.
        tx_busy_q: bool = 1,
        /// Beat of the frame being sent.
        tx_beat_q: u3 = 3,
        /// Idle cycles still required before the next first beat.
        tx_gap_q: u8 = 8,
        /// Class-enable vector of the frame being sent.
        tx_cev_q: u8 = 8 => Radix::Hex,
        /// Priorities sent as XOFF in the frame being sent.
        tx_off_q: u8 = 8,
        /// Running CRC of the frame being sent.
        tx_crc_q: u32 = 32 => Radix::Hex,
        /// Frames started.
        tx_frames_q: u32 = p.cw,
        /// Beat index of the frame being received (saturates at 8).
        rx_beat_q: u4 = 4,
        /// Running CRC of the frame being received.
        rx_crc_q: u32 = 32 => Radix::Hex,
        /// Received DA accepted.
        rx_da_q: bool = 1,
        /// Received EtherType is MAC control.
        rx_type_q: bool = 1,
        /// Received opcode is PFC.
        rx_op_q: bool = 1,
        /// Received class-enable vector (low octet).
        rx_cev_q: u8 = 8 => Radix::Hex,
        /// Received times.
        rx_time_q: Vec<u16> = (16, PRIOS),
        /// Receive timers: quanta left.
        rx_tq_q: Vec<u16> = (16, PRIOS),
        /// Receive timers: cycles left in the current quantum.
        rx_tc_q: Vec<u16> = (p.qcw, PRIOS),
        /// PFC frames received.
        rx_pfc_q: u32 = p.cw,
        /// Runts received.
        rx_runt_q: u32 = p.cw,
        /// FCS errors received.
        rx_fcs_q: u32 = p.cw,
        /// Non-MAC-control frames received.
        rx_other_q: u32 = p.cw,
        /// Over-long MAC control frames received.
        rx_long_q: u32 = p.cw,
        /// Bad MAC control frames received.
        rx_badctl_q: u32 = p.cw,
    }
}

crate::coverage_bins! {
    /// Functional coverage bins (indices into [`BINS`]).
    pub enum Bin / BINS {
        TxXoff = "tx_xoff",
        TxResume = "tx_resume",
        TxRefresh = "tx_refresh",
        TxXoffAndResume = "tx_xoff_and_resume",
        TxMultiPrio = "tx_multi_prio",
        TxAllEight = "tx_all_eight",
        TxBackToBack = "tx_back_to_back",
        TxStartAtMinGap = "tx_start_at_min_gap",
        TxDeferred = "tx_deferred",
        TxRefreshAtExactPoint = "tx_refresh_at_exact_point",
        TxGlitchCancelled = "tx_glitch_cancelled",
        TxFramesSaturated = "tx_frames_saturated",
        RxPfc = "rx_pfc",
        RxRunt = "rx_runt",
        RxFcs = "rx_fcs",
        RxOther = "rx_other",
        RxLong = "rx_long",
        RxBadCtlOpcode = "rx_badctl_opcode",
        RxBadCtlDa = "rx_badctl_da",
        RxDaOwnUnicast = "rx_da_own_unicast",
        RxCevUpperNonzero = "rx_cev_upper_nonzero",
        RxTimeZeroClears = "rx_time_zero_clears",
        RxReplaceRunning = "rx_replace_running",
        RxDisabledUntouched = "rx_disabled_untouched",
        RxTimerExpired = "rx_timer_expired",
        RxReloadAtExpiry = "rx_reload_at_expiry",
        RxIdleInsideFrame = "rx_idle_inside_frame",
        RxOneBeatFrame = "rx_one_beat_frame",
        RxCounterSaturated = "rx_counter_saturated",
        ConfigError = "config_error",
    }
}

/// What one cycle did, kept for coverage sampling (not a register).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Events {
    /// Priorities carried by a frame started this cycle.
    start_cev: u8,
    /// ... of which as XOFF.
    start_off: u8,
    /// ... of which as XOFF while already advertised OFF (refresh).
    start_refresh: u8,
    /// ... of which refreshed exactly at the refresh point.
    start_refresh_exact: u8,
    /// The frame started right after a last beat.
    start_b2b: bool,
    /// The frame started from idle with exactly the minimum gap.
    start_min_gap: bool,
    /// Something was pending but no frame could start.
    deferred: bool,
    /// Changes (xoff != adv) pending at the end of this cycle, not started.
    changes_left: u8,
    /// A change pending in the previous cycle went back without a frame.
    glitch: bool,
    /// Receive: frame class this cycle.
    rx: Option<RxClass>,
    /// Receive: DA was our own unicast address (beat 0 of this cycle).
    rx_da_own: bool,
    /// Receive: DA was neither accepted address.
    rx_da_bad: bool,
    /// Receive: opcode was not PFC.
    rx_op_bad: bool,
    /// Receive: upper octet of the enable vector was non-zero.
    rx_cev_hi: bool,
    /// Priorities cleared by time 0 while running.
    rx_cleared: u8,
    /// Priorities reloaded with a non-zero time while running.
    rx_replaced: u8,
    /// Priorities left running by a PFC frame whose bit was clear.
    rx_untouched: u8,
    /// Priorities whose timer reached 0 by counting.
    rx_expired: u8,
    /// Priorities loaded in the cycle their timer would have reached 0.
    rx_at_expiry: u8,
    /// An idle cycle inside a frame.
    rx_idle_in_frame: bool,
    /// A one-beat frame ended.
    rx_one_beat: bool,
}

/// One pause timer: quanta left and cycles left in the current quantum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    /// Quanta left.
    pub tq: u16,
    /// Cycles left in the current quantum, minus one.
    pub tc: u16,
}

impl Timer {
    /// The timer after one cycle without a load (`qe` = cycles per quantum).
    pub fn tick(self, qe: u16) -> Timer {
        if self.tq == 0 {
            self
        } else if self.tc == 0 {
            Timer {
                tq: self.tq - 1,
                tc: qe - 1,
            }
        } else {
            Timer {
                tq: self.tq,
                tc: self.tc - 1,
            }
        }
    }
    /// The timer loaded with `n` quanta.
    pub fn load(n: u16, qe: u16) -> Timer {
        Timer { tq: n, tc: qe - 1 }
    }
    /// Cycles for which the timer stays non-zero, this one included.
    pub fn remaining(self, qe: u16) -> u64 {
        if self.tq == 0 {
            0
        } else {
            (self.tq as u64 - 1) * qe as u64 + self.tc as u64 + 1
        }
    }
}

/// Values derived from the configuration alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derived {
    /// Cycles per quantum used by the timers (`max(cfg_qcyc_i, 1)`).
    pub qe: u16,
    /// The configuration is illegal.
    pub cfg_err: bool,
}

impl Derived {
    /// Derives the effective quantum and `cfg_err_o` from `c`.
    pub fn new(c: &PfcConfig) -> Self {
        let r = c.cfg_refresh_i as u64;
        let cfg_err = c.cfg_qcyc_i == 0
            || r * (c.cfg_qcyc_i as u64) < FRAME_BEATS as u64 + c.cfg_gap_i as u64
            || c.cfg_quanta_i.iter().any(|&q| q <= c.cfg_refresh_i)
            || (c.cfg_sa_i >> 40) & 1 != 0;
        Derived {
            qe: c.cfg_qcyc_i.max(1),
            cfg_err,
        }
    }
}

/// The frame latency of the spec: a change of `xoff_i` in cycle `t` is in
/// force at a peer `link` cycles away from cycle `t + latency` on.
pub fn frame_latency(gap: u8, link: u64) -> u64 {
    2 * FRAME_BEATS as u64 + gap as u64 + link
}

/// The PFC pause generator model.
#[derive(Clone, Debug)]
pub struct Pfc {
    p: PfcParams,
    c: PfcConfig,
    d: Derived,
    s: PfcState,
    ev: Events,
    /// Coverage only (not a register): (DA was our own address, upper
    /// enable octet non-zero) of the frame being received.
    rx_seen: (bool, bool),
}

impl Pfc {
    /// The configuration.
    pub fn config(&self) -> &PfcConfig {
        &self.c
    }
    /// Values derived from the configuration.
    pub fn derived(&self) -> Derived {
        self.d
    }
    /// Receive timer of priority `p`.
    pub fn rx_timer(&self, p: usize) -> Timer {
        Timer {
            tq: self.s.rx_tq_q[p],
            tc: self.s.rx_tc_q[p],
        }
    }
    /// Transmit timer of priority `p`.
    pub fn tx_timer(&self, p: usize) -> Timer {
        Timer {
            tq: self.s.tx_tq_q[p],
            tc: self.s.tx_tc_q[p],
        }
    }

    /// Checks the spec's invariants; panics with the broken one.
    pub fn assert_invariants(&self) {
        let s = &self.s;
        assert!(s.tx_busy_q || s.tx_beat_q.value() == 0, "TxBeatInFrame");
        assert!(s.rx_beat_q.value() <= 8, "RxBeatSaturates");
        for p in 0..PRIOS {
            assert!(s.tx_tc_q[p] < self.d.qe, "TimerSubInRange tx {p}");
            assert!(s.rx_tc_q[p] < self.d.qe, "TimerSubInRange rx {p}");
        }
    }

    /// Frame byte `k` (0..60) of the frame being sent.
    fn tx_byte(&self, k: usize) -> u8 {
        let s = &self.s;
        let time = |p: usize| {
            if s.tx_off_q >> p & 1 != 0 {
                self.c.cfg_quanta_i[p]
            } else {
                0
            }
        };
        match k {
            0..=5 => PFC_DA[k],
            6..=11 => mac_bytes(self.c.cfg_sa_i)[k - 6],
            12..=13 => ETHERTYPE_MAC_CONTROL.to_be_bytes()[k - 12],
            14..=15 => OPCODE_PFC.to_be_bytes()[k - 14],
            16 => 0,
            17 => s.tx_cev_q,
            18..=33 => time((k - 18) / 2).to_be_bytes()[(k - 18) % 2],
            _ => 0,
        }
    }

    /// The beat on `tx_data_o`: frame bytes, and the FCS on beat 7.
    fn tx_beat(&self) -> u64 {
        let s = &self.s;
        if !s.tx_busy_q {
            return 0;
        }
        let b = s.tx_beat_q.value() as usize;
        let mut v = 0u64;
        let n = if b == FRAME_BEATS - 1 { 4 } else { 8 };
        for j in 0..n {
            v |= (self.tx_byte(8 * b + j) as u64) << (8 * j);
        }
        if b == FRAME_BEATS - 1 {
            let fcs = !crc32_beat(s.tx_crc_q, v, 4);
            v |= (fcs as u64) << 32;
        }
        v
    }
}

fn sat_inc(v: u32, max: u64) -> u32 {
    if v as u64 >= max {
        v
    } else {
        v + 1
    }
}

impl Block for Pfc {
    const NAME: &'static str = "pfc";
    type Params = PfcParams;
    type Config = PfcConfig;
    type Inputs = PfcInputs;
    type Outputs = PfcOutputs;
    type State = PfcState;

    fn variants() -> Vec<PfcParams> {
        vec![
            PfcParams { qcw: 8, cw: 16 },
            PfcParams { qcw: 4, cw: 4 },
            PfcParams { qcw: 12, cw: 32 },
        ]
    }

    fn default_config(p: &PfcParams) -> PfcConfig {
        // 100 Gb/s with an 8-byte bus at one beat per cycle: a quantum of
        // 512 bits is 8 cycles. Short pause times (so that refresh and
        // expiry happen within a short run), refresh at half.
        let qcyc = 8u16.min(p.qcyc_max() as u16);
        PfcConfig {
            cfg_sa_i: 0x02_00_5e_10_20_30,
            cfg_quanta_i: vec![64, 64, 64, 96, 96, 64, 64, 64],
            cfg_qcyc_i: qcyc,
            cfg_refresh_i: 32,
            cfg_gap_i: 4,
        }
    }

    fn check(p: &PfcParams, c: &PfcConfig) -> Result<(), ConfigError> {
        if !(1..=16).contains(&p.qcw) {
            return Err(ConfigError::new(
                "QCW",
                format!("{} bits is outside the legal range 1..=16", p.qcw),
            ));
        }
        if !(1..=32).contains(&p.cw) {
            return Err(ConfigError::new(
                "CW",
                format!("{} bits is outside the legal range 1..=32", p.cw),
            ));
        }
        c.to_words(p)?;
        crate::block::check_range("cfg_qcyc_i", c.cfg_qcyc_i as u64, 1, p.qcyc_max())?;
        if (c.cfg_sa_i >> 40) & 1 != 0 {
            return Err(ConfigError::new(
                "cfg_sa_i",
                format!(
                    "0x{:012x} is a multicast address (bit 40, the I/G bit of the first \
                     octet, is set); a source address must be unicast",
                    c.cfg_sa_i
                ),
            ));
        }
        let need = FRAME_BEATS as u64 + c.cfg_gap_i as u64;
        let have = c.cfg_refresh_i as u64 * c.cfg_qcyc_i as u64;
        if have < need {
            return Err(ConfigError::new(
                "cfg_refresh_i",
                format!(
                    "refresh point {} quanta x {} cycles per quantum = {have} cycles is less \
                     than one frame ({FRAME_BEATS} beats) plus the gap ({} cycles) = {need}: \
                     the peer's timer could run out before the refresh arrives; legal: \
                     cfg_refresh_i >= {}",
                    c.cfg_refresh_i,
                    c.cfg_qcyc_i,
                    c.cfg_gap_i,
                    need.div_ceil(c.cfg_qcyc_i as u64)
                ),
            ));
        }
        if let Some((k, q)) = c
            .cfg_quanta_i
            .iter()
            .enumerate()
            .find(|(_, &q)| q <= c.cfg_refresh_i)
        {
            return Err(ConfigError::new(
                "cfg_quanta_i",
                format!(
                    "priority {k}: {q} quanta is not above the refresh point {}; legal: {}..=65535",
                    c.cfg_refresh_i,
                    c.cfg_refresh_i as u32 + 1
                ),
            ));
        }
        Ok(())
    }

    fn new(p: &PfcParams, c: &PfcConfig) -> Self {
        let mut s = PfcState::zero(p);
        s.tx_crc_q = CRC_INIT;
        s.rx_crc_q = CRC_INIT;
        Pfc {
            p: *p,
            c: c.clone(),
            d: Derived::new(c),
            s,
            ev: Events::default(),
            rx_seen: (false, false),
        }
    }

    fn state(&self) -> &PfcState {
        &self.s
    }

    fn params(&self) -> &PfcParams {
        &self.p
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &PfcInputs, o: &PfcOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        let e = &self.ev;
        if e.start_cev != 0 {
            let changed_off = e.start_off & !e.start_refresh;
            let resumes = e.start_cev & !e.start_off;
            if changed_off != 0 {
                hit(Bin::TxXoff);
            }
            if resumes != 0 {
                hit(Bin::TxResume);
            }
            if e.start_refresh != 0 {
                hit(Bin::TxRefresh);
            }
            if e.start_refresh_exact != 0 {
                hit(Bin::TxRefreshAtExactPoint);
            }
            if changed_off != 0 && resumes != 0 {
                hit(Bin::TxXoffAndResume);
            }
            if e.start_cev.count_ones() > 1 {
                hit(Bin::TxMultiPrio);
            }
            if e.start_cev == 0xff {
                hit(Bin::TxAllEight);
            }
            if e.start_b2b {
                hit(Bin::TxBackToBack);
            }
            if e.start_min_gap {
                hit(Bin::TxStartAtMinGap);
            }
        }
        if e.deferred {
            hit(Bin::TxDeferred);
        }
        if e.glitch {
            hit(Bin::TxGlitchCancelled);
        }
        let max = self.p.max() as u32;
        if self.s.tx_frames_q == max {
            hit(Bin::TxFramesSaturated);
        }
        match e.rx {
            Some(RxClass::Pfc) => hit(Bin::RxPfc),
            Some(RxClass::Runt) => hit(Bin::RxRunt),
            Some(RxClass::Fcs) => hit(Bin::RxFcs),
            Some(RxClass::Other) => hit(Bin::RxOther),
            Some(RxClass::Long) => hit(Bin::RxLong),
            Some(RxClass::BadCtl) => {
                if e.rx_op_bad {
                    hit(Bin::RxBadCtlOpcode);
                }
                if e.rx_da_bad {
                    hit(Bin::RxBadCtlDa);
                }
            }
            _ => {}
        }
        if e.rx == Some(RxClass::Pfc) {
            if e.rx_da_own {
                hit(Bin::RxDaOwnUnicast);
            }
            if e.rx_cev_hi {
                hit(Bin::RxCevUpperNonzero);
            }
        }
        if e.rx_cleared != 0 {
            hit(Bin::RxTimeZeroClears);
        }
        if e.rx_replaced != 0 {
            hit(Bin::RxReplaceRunning);
        }
        if e.rx_untouched != 0 {
            hit(Bin::RxDisabledUntouched);
        }
        if e.rx_expired != 0 {
            hit(Bin::RxTimerExpired);
        }
        if e.rx_at_expiry != 0 {
            hit(Bin::RxReloadAtExpiry);
        }
        if e.rx_idle_in_frame {
            hit(Bin::RxIdleInsideFrame);
        }
        if e.rx_one_beat {
            hit(Bin::RxOneBeatFrame);
        }
        let s = &self.s;
        if [
            s.rx_pfc_q,
            s.rx_runt_q,
            s.rx_fcs_q,
            s.rx_other_q,
            s.rx_long_q,
            s.rx_badctl_q,
        ]
        .contains(&max)
        {
            hit(Bin::RxCounterSaturated);
        }
        if o.cfg_err_o {
            hit(Bin::ConfigError);
        }
    }

    fn step_into(&mut self, i: &PfcInputs, o: &mut PfcOutputs) {
        let c = &self.c;
        let qe = self.d.qe;
        let cur = &self.s;
        let max = self.p.max();
        let mut nx = cur.clone();
        let mut ev = Events::default();

        // ---- Transmit: outputs from the registers ----------------------
        let beat = cur.tx_beat_q.value() as usize;
        let last_beat = cur.tx_busy_q && beat == FRAME_BEATS - 1;
        let tx_data = self.tx_beat();
        *o = PfcOutputs {
            tx_valid_o: cur.tx_busy_q,
            tx_last_o: last_beat,
            tx_empty_o: u3::new(0),
            tx_data_o: tx_data,
            tx_adv_o: cur.tx_adv_q,
            tx_frames_o: cur.tx_frames_q,
            pause_o: (0..PRIOS).fold(0u8, |a, p| a | (u8::from(cur.rx_tq_q[p] != 0) << p)),
            rx_done_o: RxClass::None.code(),
            rx_pfc_o: cur.rx_pfc_q,
            rx_runt_o: cur.rx_runt_q,
            rx_fcs_o: cur.rx_fcs_q,
            rx_other_o: cur.rx_other_q,
            rx_long_o: cur.rx_long_q,
            rx_badctl_o: cur.rx_badctl_q,
            cfg_err_o: self.d.cfg_err,
        };

        // ---- Transmit: next state ----------------------------------------
        let due = (0..PRIOS).fold(0u8, |a, p| {
            a | (u8::from(cur.tx_tq_q[p] <= c.cfg_refresh_i) << p)
        });
        let xoff = i.xoff_i;
        let change = xoff ^ cur.tx_adv_q;
        let pend = change | (xoff & cur.tx_adv_q & due);
        let can = if cur.tx_busy_q {
            last_beat && c.cfg_gap_i == 0
        } else {
            cur.tx_gap_q <= 1
        };
        let start = can && pend != 0;
        if cur.tx_busy_q {
            if last_beat {
                nx.tx_busy_q = false;
                nx.tx_beat_q = u3::new(0);
                nx.tx_gap_q = c.cfg_gap_i;
                nx.tx_crc_q = CRC_INIT;
            } else {
                nx.tx_beat_q = u3::new(beat as u8 + 1);
                nx.tx_crc_q = crc32_beat(cur.tx_crc_q, tx_data, BEAT_BYTES);
            }
        } else {
            nx.tx_gap_q = cur.tx_gap_q.saturating_sub(1);
        }
        for p in 0..PRIOS {
            let t = Timer {
                tq: cur.tx_tq_q[p],
                tc: cur.tx_tc_q[p],
            };
            let t = if start && pend >> p & 1 != 0 {
                let n = if xoff >> p & 1 != 0 {
                    c.cfg_quanta_i[p]
                } else {
                    0
                };
                Timer::load(n, qe)
            } else {
                t.tick(qe)
            };
            nx.tx_tq_q[p] = t.tq;
            nx.tx_tc_q[p] = t.tc;
        }
        if start {
            nx.tx_busy_q = true;
            nx.tx_beat_q = u3::new(0);
            nx.tx_crc_q = CRC_INIT;
            nx.tx_cev_q = pend;
            nx.tx_off_q = xoff & pend;
            nx.tx_adv_q = (cur.tx_adv_q & !pend) | (xoff & pend);
            nx.tx_frames_q = sat_inc(cur.tx_frames_q, max);
            ev.start_cev = pend;
            ev.start_off = xoff & pend;
            ev.start_refresh = xoff & pend & cur.tx_adv_q;
            ev.start_refresh_exact = (0..PRIOS).fold(0u8, |a, p| {
                let exact = cur.tx_tq_q[p] == c.cfg_refresh_i && cur.tx_tc_q[p] == qe - 1;
                a | (u8::from(exact) << p)
            }) & ev.start_refresh;
            ev.start_b2b = last_beat;
            ev.start_min_gap = !cur.tx_busy_q && cur.tx_gap_q == 1;
        } else if pend != 0 {
            ev.deferred = true;
        }
        ev.changes_left = if start { 0 } else { change };
        ev.glitch = self.ev.changes_left & !change & !ev.start_cev != 0;

        // ---- Receive -------------------------------------------------------
        let mut load: [Option<u16>; PRIOS] = [None; PRIOS];
        let b = cur.rx_beat_q.value() as usize;
        if !i.rx_valid_i && b != 0 {
            ev.rx_idle_in_frame = true;
        }
        if i.rx_valid_i {
            let data = i.rx_data_i;
            let byte = |k: usize| (data >> (8 * k)) as u8;
            let n = if i.rx_last_i {
                BEAT_BYTES - i.rx_empty_i.value() as usize
            } else {
                BEAT_BYTES
            };
            let crc = crc32_beat(cur.rx_crc_q, data, n);
            let time = |k: usize| u16::from_be_bytes([byte(k), byte(k + 1)]);
            match b {
                0 => {
                    let da = [byte(0), byte(1), byte(2), byte(3), byte(4), byte(5)];
                    let own = da == mac_bytes(c.cfg_sa_i);
                    nx.rx_da_q = da == PFC_DA || own;
                    self.rx_seen.0 = own && da != PFC_DA;
                }
                1 => {
                    nx.rx_type_q = time(4) == ETHERTYPE_MAC_CONTROL;
                    nx.rx_op_q = time(6) == OPCODE_PFC;
                }
                2 => {
                    self.rx_seen.1 = byte(0) != 0;
                    nx.rx_cev_q = byte(1);
                    nx.rx_time_q[0] = time(2);
                    nx.rx_time_q[1] = time(4);
                    nx.rx_time_q[2] = time(6);
                }
                3 => {
                    for k in 0..4 {
                        nx.rx_time_q[3 + k] = time(2 * k);
                    }
                }
                4 => nx.rx_time_q[7] = time(0),
                _ => {}
            }
            if i.rx_last_i {
                let empty = i.rx_empty_i.value();
                let class = if b < 7 || (b == 7 && empty != 0) {
                    RxClass::Runt
                } else if crc != CRC_RESIDUE {
                    RxClass::Fcs
                } else if !cur.rx_type_q {
                    RxClass::Other
                } else if b == 8 {
                    RxClass::Long
                } else if !cur.rx_op_q || !cur.rx_da_q {
                    RxClass::BadCtl
                } else {
                    RxClass::Pfc
                };
                o.rx_done_o = class.code();
                ev.rx = Some(class);
                ev.rx_one_beat = b == 0;
                let counter = match class {
                    RxClass::Pfc => &mut nx.rx_pfc_q,
                    RxClass::Runt => &mut nx.rx_runt_q,
                    RxClass::Fcs => &mut nx.rx_fcs_q,
                    RxClass::Other => &mut nx.rx_other_q,
                    RxClass::Long => &mut nx.rx_long_q,
                    RxClass::BadCtl => &mut nx.rx_badctl_q,
                    RxClass::None => unreachable!("a frame always has a class"),
                };
                *counter = sat_inc(*counter, max);
                if class == RxClass::BadCtl {
                    ev.rx_op_bad = !cur.rx_op_q;
                    ev.rx_da_bad = !cur.rx_da_q;
                }
                if class == RxClass::Pfc {
                    for (p, l) in load.iter_mut().enumerate() {
                        if cur.rx_cev_q >> p & 1 != 0 {
                            *l = Some(cur.rx_time_q[p]);
                        }
                    }
                }
                nx.rx_beat_q = u4::new(0);
                nx.rx_crc_q = CRC_INIT;
            } else {
                nx.rx_beat_q = u4::new((b as u8 + 1).min(8));
                nx.rx_crc_q = crc;
            }
        }
        for (p, l) in load.iter().enumerate() {
            let t = Timer {
                tq: cur.rx_tq_q[p],
                tc: cur.rx_tc_q[p],
            };
            let ticked = t.tick(qe);
            let bit = 1u8 << p;
            let t2 = match *l {
                Some(n) => {
                    if t.tq != 0 {
                        if n == 0 {
                            ev.rx_cleared |= bit;
                        } else {
                            ev.rx_replaced |= bit;
                        }
                        if ticked.tq == 0 {
                            ev.rx_at_expiry |= bit;
                        }
                    }
                    Timer::load(n, qe)
                }
                None => {
                    if t.tq != 0 && ticked.tq == 0 {
                        ev.rx_expired |= bit;
                    }
                    if ev.rx == Some(RxClass::Pfc) && t.tq != 0 {
                        ev.rx_untouched |= bit;
                    }
                    ticked
                }
            };
            nx.rx_tq_q[p] = t2.tq;
            nx.rx_tc_q[p] = t2.tc;
        }
        if ev.rx.is_some() {
            (ev.rx_da_own, ev.rx_cev_hi) = self.rx_seen;
        }
        self.ev = ev;
        self.s = nx;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eth::{beats, crc32_byte, data_frame};

    #[test]
    fn data_frames_are_other_frames_and_pack_into_beats() {
        for len in [10, 64, 65, 1500] {
            let f = data_frame(PFC_DA, 0x02_00_00_00_00_01, len);
            assert_eq!(f.len(), len.max(FRAME_BYTES));
            let n = f.len() - 4;
            assert_eq!(
                f[n..],
                crc32(&f[..n]).to_le_bytes(),
                "good FCS at {len} bytes"
            );
            assert_eq!(classify(&f, 0).0, RxClass::Other);
            let b = beats(&f);
            assert_eq!(b.len(), f.len().div_ceil(BEAT_BYTES));
            assert!(b[..b.len() - 1]
                .iter()
                .all(|&(_, last, empty)| !last && empty == 0));
            let &(data, last, empty) = b.last().unwrap();
            assert!(last);
            assert_eq!(usize::from(empty), b.len() * BEAT_BYTES - f.len());
            assert_eq!(data & 0xff, f[(b.len() - 1) * BEAT_BYTES] as u64);
        }
    }

    #[test]
    fn crc_matches_the_check_value() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        let f = pfc_frame(0x0200_0000_0001, 0x0008, &[0, 0, 0, 0xffff, 0, 0, 0, 0]);
        // A frame with its FCS leaves the residue in the CRC register.
        assert_eq!(
            f.iter().fold(CRC_INIT, |c, &b| crc32_byte(c, b)),
            CRC_RESIDUE
        );
        assert_eq!(classify(&f, 0).0, RxClass::Pfc);
    }

    #[test]
    fn timer_counts_exactly_n_quanta() {
        for qe in [1u16, 3, 8] {
            for n in [1u16, 2, 5] {
                let mut t = Timer::load(n, qe);
                let mut cycles = 0;
                while t.tq != 0 {
                    assert_eq!(t.remaining(qe), (n as u64) * qe as u64 - cycles);
                    cycles += 1;
                    t = t.tick(qe);
                }
                assert_eq!(cycles, n as u64 * qe as u64);
            }
        }
    }
}
