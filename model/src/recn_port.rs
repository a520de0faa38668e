//! Golden model of one RECN switch port with two virtual channels
//! (`rtl/recn_port.v`, spec `docs/recn_port.md`).
//!
//! Two VCs (VC0 QoS, VC1 best effort), each with `D` detection queues and
//! `S` set-aside queues (SAQs) over a shared memory of `C` cells (one
//! descriptor per cell, linked lists per queue, a free list: a counter of
//! fresh descriptors and a FIFO in a `prim_ram_1r1w`); a CAM with
//! one line per SAQ (route prefix in hops, service level, `gone` and `up`
//! flags); per detection queue the mask of SLs notified upstream; per-SAQ
//! Xon/Xoff; congestion and vanish notifications in and out; VC0 strictly
//! before VC1, round robin (`prim_rr_arb`) inside a VC; dropped
//! notifications counted (`prim_sat_cnt`).
//!
//! Latency: `in_*_o`, `out_*`, `ntf_*_o`, `up_*` and `rel_o` are outputs of
//! the same cycle (combinational); the other outputs are the registers at
//! the start of the cycle. Order inside a cycle: dequeue, arrival,
//! notification received, notification sent, Xon/Xoff, release.

use crate::block::{check_param, check_pow2, check_range, refill, Block, ConfigError, Params};
use crate::port::PortGroup;
use crate::prim::{Ram1r1w, RrArb, SatCnt};
use arbitrary_int::{u3, u5};

/// Packet id width.
pub const IDW: u32 = 8;
/// Packet length field width (cells minus one).
pub const PLW: u32 = 5;
/// Drop counter width.
pub const DCW: u32 = 8;

/// The descriptor memory's word for a packet behind a descriptor: `{nxt,
/// id, sl, len}` (`len` in bits 4:0, `sl` 7:5, `id` 15:8, `nxt` from bit
/// 16).
pub const fn dword(nxt: u16, id: u8, sl: u8, len: u8) -> u64 {
    (nxt as u64) << 16 | (id as u64) << 8 | (sl as u64) << 5 | len as u64
}

/// The fields of a descriptor memory word: (nxt, id, sl, len).
pub const fn dfields(w: u64) -> (u16, u8, u8, u8) {
    (
        (w >> 16) as u16,
        (w >> 8) as u8,
        (w >> 5) as u8 & 7,
        w as u8 & 31,
    )
}

/// `ceil(log2(n))` for `n >= 1`.
pub const fn clog2(n: usize) -> u32 {
    usize::BITS - (n - 1).leading_zeros()
}

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecnPortParams {
    /// Detection queues per VC (switch outputs), a power of two, 2..16.
    pub d: usize,
    /// SAQs per VC, 1..16.
    pub s: usize,
    /// Memory cells (descriptors), 32..1024.
    pub c: usize,
    /// Route (turnpool) width, `TB..=32`.
    pub rw: u32,
}

impl RecnPortParams {
    /// Bits per hop: `log2(D)`.
    pub const fn tb(&self) -> u32 {
        clog2(self.d)
    }
    /// Hops of the longest prefix: `RW / TB`.
    pub const fn h(&self) -> u32 {
        self.rw / self.tb()
    }
    /// Width of a hop count.
    pub const fn hw(&self) -> u32 {
        clog2(self.h() as usize + 1)
    }
    /// Queues: `2 (D + S)`.
    pub const fn nq(&self) -> usize {
        2 * (self.d + self.s)
    }
    /// Queue index width.
    pub const fn qw(&self) -> u32 {
        clog2(self.nq())
    }
    /// CAM lines: `2 S`.
    pub const fn l(&self) -> usize {
        2 * self.s
    }
    /// Line index width.
    pub const fn lw(&self) -> u32 {
        clog2(self.l())
    }
    /// Descriptor index width.
    pub const fn aw(&self) -> u32 {
        clog2(self.c)
    }
    /// Cell count width.
    pub const fn cw(&self) -> u32 {
        clog2(self.c + 1)
    }
    /// Queues per VC.
    pub const fn qv(&self) -> usize {
        self.d + self.s
    }
    /// The queue of CAM line `j`.
    pub const fn line_queue(&self, j: usize) -> usize {
        (j / self.s) * self.qv() + self.d + j % self.s
    }
    /// The CAM line of queue `q`, if it is a SAQ.
    pub const fn queue_line(&self, q: usize) -> Option<usize> {
        let k = q % self.qv();
        if k < self.d {
            None
        } else {
            Some((q / self.qv()) * self.s + k - self.d)
        }
    }
    /// The route mask of a prefix of `hops` hops.
    pub const fn mask(&self, hops: u32) -> u64 {
        (1u64 << (hops * self.tb())) - 1
    }
}

impl Default for RecnPortParams {
    fn default() -> Self {
        RecnPortParams {
            d: 4,
            s: 2,
            c: 64,
            rw: 16,
        }
    }
}

impl Params for RecnPortParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("D", self.d as u64),
            ("S", self.s as u64),
            ("C", self.c as u64),
            ("RW", self.rw as u64),
        ]
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct RecnPortConfig<RecnPortParams> |p| {
        /// Bit s: service level s uses VC1.
        cfg_sl_vc_i: u8 = 8,
        /// Detection threshold, cells (occupancy >= threshold).
        cfg_det_thr_i: u16 = p.cw(),
        /// Vanish threshold, cells (occupancy < threshold).
        cfg_rel_thr_i: u16 = p.cw(),
        /// Xoff when a SAQ holds at least this many cells.
        cfg_xoff_i: u16 = p.cw(),
        /// Xon when a SAQ holds at most this many cells.
        cfg_xon_i: u16 = p.cw(),
        /// Release rule: 0 root-driven (vanish), 1 leaf (release messages).
        cfg_leaf_i: bool = 1,
        /// In-order markers at SAQ allocation.
        cfg_order_i: bool = 1,
        /// Leaf rule: cycles after which a line whose SAQ held no packet is
        /// released (0: never).
        cfg_idle_i: u8 = 8,
    }
}

crate::port_group! {
    /// Per-cycle inputs.
    pub struct RecnPortInputs<RecnPortParams> |p| {
        /// A packet is offered.
        in_valid_i: bool = 1,
        /// Its id.
        in_id_i: u8 = IDW,
        /// Its service level.
        in_sl_i: u3 = 3,
        /// Its length in cells minus one.
        in_len_i: u5 = PLW,
        /// Its remaining route; bits [TB-1:0] are the next crossbar's output.
        in_route_i: u32 = p.rw,
        /// Its sender (0..D-1).
        in_src_i: u8 = p.tb(),
        /// A packet may leave this cycle.
        out_ready_i: bool = 1,
        /// Downstream Xoff per queue.
        stop_i: Vec<bool> = (1, p.nq()),
        /// A notification from downstream.
        ntf_valid_i: bool = 1,
        /// Its kind: 0 congestion, 1 vanish.
        ntf_kind_i: bool = 1,
        /// Route from this port to the congested point.
        ntf_route_i: u32 = p.rw,
        /// Prefix length in hops.
        ntf_hops_i: u8 = p.hw(),
        /// Service level.
        ntf_sl_i: u3 = 3,
        /// A release message from upstream.
        rls_valid_i: bool = 1,
        /// The sender it comes from.
        rls_src_i: u8 = p.tb(),
        /// The route this port notified it.
        rls_route_i: u32 = p.rw,
        /// Its hops.
        rls_hops_i: u8 = p.hw(),
        /// Its service level.
        rls_sl_i: u3 = 3,
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct RecnPortOutputs<RecnPortParams> |p| {
        /// The offered packet is taken.
        in_ready_o: bool = 1,
        /// The queue it enters (0 when not taken).
        in_queue_o: u8 = p.qw(),
        /// The descriptor it is stored in (0 when not taken).
        in_desc_o: u16 = p.aw(),
        /// A packet leaves.
        out_valid_o: bool = 1,
        /// Its queue (0 when none).
        out_queue_o: u8 = p.qw(),
        /// Its id.
        out_id_o: u8 = IDW,
        /// Its service level.
        out_sl_o: u3 = 3,
        /// Its length in cells minus one.
        out_len_o: u5 = PLW,
        /// What the received notification did (see `Act`).
        ntf_act_o: u3 = 3,
        /// The CAM line it acted on (0 when none).
        ntf_line_o: u8 = p.lw(),
        /// The received release message cleared a bit.
        rls_hit_o: bool = 1,
        /// A notification goes upstream.
        up_valid_o: bool = 1,
        /// Its kind: 0 congestion, 1 vanish.
        up_kind_o: bool = 1,
        /// Its route (from this port).
        up_route_o: u32 = p.rw,
        /// Its prefix length in hops.
        up_hops_o: u8 = p.hw(),
        /// Its service level.
        up_sl_o: u3 = 3,
        /// The sender it goes to.
        up_dst_o: u8 = p.tb(),
        /// A release message goes downstream (leaf rule).
        dn_valid_o: bool = 1,
        /// Its route (from this port).
        dn_route_o: u32 = p.rw,
        /// Its hops.
        dn_hops_o: u8 = p.hw(),
        /// Its service level.
        dn_sl_o: u3 = 3,
        /// CAM lines released this cycle.
        rel_o: Vec<bool> = (1, p.l()),
        /// Xoff per SAQ towards upstream (registered).
        xoff_o: Vec<bool> = (1, p.l()),
        /// Occupancy of each queue in cells (registered).
        occ_o: Vec<u16> = (p.cw(), p.nq()),
        /// Cells in use (registered).
        used_o: u16 = p.cw(),
        /// CAM line valid (registered).
        cam_valid_o: Vec<bool> = (1, p.l()),
        /// CAM line marked gone by downstream (registered).
        cam_gone_o: Vec<bool> = (1, p.l()),
        /// CAM line's SAQ has held a packet since its allocation (registered).
        cam_hold_o: Vec<bool> = (1, p.l()),
        /// CAM line's SAQ waits for its in-order marker (registered).
        cam_mark_o: Vec<bool> = (1, p.l()),
        /// CAM line: the senders its SAQ notified (registered).
        cam_up_o: Vec<u16> = (p.d as u32, p.l()),
        /// CAM line route prefix, masked (registered).
        cam_route_o: Vec<u32> = (p.rw, p.l()),
        /// CAM line prefix length in hops (registered).
        cam_hops_o: Vec<u8> = (p.hw(), p.l()),
        /// CAM line service level (registered).
        cam_sl_o: Vec<u8> = (3, p.l()),
        /// Per detection queue and sender, the SLs notified (registered).
        det_mask_o: Vec<u8> = (8, 2 * p.d * p.d),
        /// Notifications dropped with the CAM full (registered, saturates).
        drop_cnt_o: u8 = DCW,
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's.
    pub struct RecnPortState<RecnPortParams> |p| {
        /// Occupancy per queue, cells.
        occ_q: Vec<u16> = (p.cw(), p.nq()),
        /// Head descriptor per queue.
        head_q: Vec<u16> = (p.aw(), p.nq()),
        /// Tail descriptor per queue.
        tail_q: Vec<u16> = (p.aw(), p.nq()),
        /// Cells in use.
        used_q: u16 = p.cw(),
        /// Free list: the next descriptor never used since reset (C: none
        /// left).
        fresh_q: u16 = p.aw() + 1,
        /// Free list FIFO: the word of its head (`u_fl`).
        fl_rd_q: u16 = p.aw(),
        /// Free list FIFO: the word its next push writes.
        fl_wr_q: u16 = p.aw(),
        /// Free list FIFO: descriptors it holds (0..=C).
        fl_cnt_q: u16 = p.aw() + 1,
        /// Free list FIFO: the head register (the head when `fl_hsel_q` is
        /// 0).
        fl_hd_q: u16 = p.aw(),
        /// Free list FIFO: the head is the RAM's read register.
        fl_hsel_q: bool = 1,
        /// Head cache per queue: the head packet's id.
        hid_q: Vec<u8> = (IDW, p.nq()),
        /// Head cache per queue: the head packet's service level.
        hsl_q: Vec<u8> = (3, p.nq()),
        /// Head cache per queue: the head packet's length in cells minus
        /// one.
        hlen_q: Vec<u8> = (PLW, p.nq()),
        /// Next cache per queue: the word of the head descriptor (`{nxt,
        /// id, sl, len}` of the packet behind it), while the queue holds
        /// two packets or more.
        nx_q: Vec<u64> = (p.aw() + 16, p.nq()),
        /// The descriptor memory's read register holds the next word of
        /// queue `nx_qn_q` (read by its dequeue in the cycle before).
        nx_sel_q: bool = 1,
        /// The queue whose next word the read register holds.
        nx_qn_q: u8 = p.qw(),
        /// CAM: valid.
        valid_q: Vec<bool> = (1, p.l()),
        /// CAM: route prefix (masked).
        route_q: Vec<u32> = (p.rw, p.l()),
        /// CAM: hops.
        hops_q: Vec<u8> = (p.hw(), p.l()),
        /// CAM: service level.
        sl_q: Vec<u8> = (3, p.l()),
        /// CAM: gone (downstream vanish received).
        gone_q: Vec<bool> = (1, p.l()),
        /// CAM: the senders this SAQ notified.
        up_q: Vec<u16> = (p.d as u32, p.l()),
        /// CAM: the SAQ has held a packet since its allocation.
        hold_q: Vec<bool> = (1, p.l()),
        /// CAM: cycles valid without a packet (saturates at 255).
        age_q: Vec<u8> = (8, p.l()),
        /// CAM: an in-order marker is ahead of the SAQ.
        mk_q: Vec<bool> = (1, p.l()),
        /// CAM: the queue the marker sits in.
        mkq_q: Vec<u8> = (p.qw(), p.l()),
        /// CAM: cells ahead of the marker.
        mkc_q: Vec<u16> = (p.cw(), p.l()),
        /// Per detection queue and sender: SLs notified.
        mask_q: Vec<u8> = (8, 2 * p.d * p.d),
        /// Xoff per line.
        xoff_q: Vec<bool> = (1, p.l()),
        /// VC0 arbiter pointer (`u_arb0`, `prim_rr_arb`).
        arb0_ptr_q: u8 = clog2(p.d + p.s),
        /// VC1 arbiter pointer (`u_arb1`, `prim_rr_arb`).
        arb1_ptr_q: u8 = clog2(p.d + p.s),
        /// Drop counter (`u_drop`, `prim_sat_cnt`).
        drop_q: u8 = DCW,
    }
}

/// What a received notification did (`ntf_act_o`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Act {
    /// No notification.
    #[default]
    None = 0,
    /// Vanish without a matching line, or hops out of range.
    Ignore = 1,
    /// A free line allocated.
    Alloc = 2,
    /// The line exists: `gone` cleared.
    Refresh = 3,
    /// No free line in the VC: dropped and counted.
    Drop = 4,
    /// Vanish: the line marked `gone`.
    Gone = 5,
}

impl Act {
    /// All codes, in order.
    pub const ALL: [Act; 6] = [
        Act::None,
        Act::Ignore,
        Act::Alloc,
        Act::Refresh,
        Act::Drop,
        Act::Gone,
    ];
    /// Decodes a `ntf_act_o` value (codes 6, 7 are never produced).
    pub fn from_code(c: u3) -> Act {
        Self::ALL[(c.value() as usize).min(5)]
    }
    /// The `ntf_act_o` value.
    pub fn code(self) -> u3 {
        u3::new(self as u8)
    }
}

crate::coverage_bins! {
    /// Functional coverage bins of the RECN port.
    pub enum Bin / BINS {
        Alloc = "alloc",
        CamFull = "cam_full_drop",
        Refresh = "refresh",
        VanishMarked = "vanish_marked",
        Ignore = "ignore",
        Release = "release",
        SaqHit = "saq_hit",
        ReplicatedOtherSl = "hit_replicated_route_other_sl",
        LongestPrefix = "longest_prefix_hit",
        DetectDet = "detect_detection_queue",
        DetectSaq = "detect_saq",
        VanishSentDet = "vanish_sent_detection",
        VanishSentSaq = "vanish_sent_saq",
        Xoff = "xoff",
        Xon = "xon",
        RefusedFull = "in_refused_full",
        ExactlyFull = "memory_exactly_full",
        Vc0OverVc1 = "vc0_over_vc1",
        StoppedSkipped = "stopped_skipped",
        DeqArrSameQueue = "dequeue_and_arrival_same_queue",
        DescReused = "descriptor_reused_same_cycle",
        FreshExhausted = "fresh_exhausted",
        FreeListPushPop = "free_list_push_pop",
        FreeListForward = "free_list_forward",
        NextForward = "next_forward",
        NextFromRead = "next_from_read",
        ConfigError = "config_error",
        DetectSecondSender = "detect_second_sender",
        ReleaseMsgCleared = "release_msg_cleared",
        ReleaseMsgIgnored = "release_msg_ignored",
        LeafRelease = "leaf_release",
        RefusalSent = "refusal_sent",
        LeafReleaseWaits = "leaf_release_waits",
        IdleRelease = "idle_release",
        MarkerSet = "marker_set",
        MarkerHoldsSaq = "marker_holds_saq",
        MarkerCleared = "marker_cleared",
        MarkerPassedOn = "marker_passed_on",
    }
}

/// What happened in the last cycle, for coverage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events {
    /// The received notification's action.
    pub act: Act,
    /// A line was released.
    pub release: bool,
    /// The arrival hit a CAM line.
    pub saq_hit: bool,
    /// ... whose route and hops another valid line holds with another SL.
    pub replicated: bool,
    /// ... and another, shorter, line hit too.
    pub longest: bool,
    /// A detection queue detected congestion (notification sent).
    pub detect_det: bool,
    /// A SAQ detected congestion (notification sent).
    pub detect_saq: bool,
    /// A detection queue's vanish sent.
    pub vanish_det: bool,
    /// A SAQ's vanish sent.
    pub vanish_saq: bool,
    /// A SAQ went to Xoff.
    pub xoff: bool,
    /// A SAQ went back to Xon.
    pub xon: bool,
    /// The offered packet did not fit.
    pub refused_full: bool,
    /// The memory is exactly full at the end of the cycle.
    pub exactly_full: bool,
    /// A VC1 queue was eligible, a VC0 one left.
    pub vc0_over_vc1: bool,
    /// A stopped queue with packets while a packet left.
    pub stopped_skipped: bool,
    /// Dequeue and arrival on the same queue.
    pub same_queue: bool,
    /// The arrival took the descriptor released in the same cycle (the
    /// free list had none).
    pub desc_reused: bool,
    /// The arrival took a descriptor from the free list's FIFO.
    pub fresh_exhausted: bool,
    /// A push and a pop of the free list's FIFO in one cycle.
    pub fl_push_pop: bool,
    /// ... with one descriptor in it: the next head forwarded.
    pub fl_forward: bool,
    /// An arrival linked behind a queue's only packet: its word went to
    /// the next cache at once.
    pub next_forward: bool,
    /// A dequeue took the next head from the descriptor memory's read
    /// register (the queue's dequeue in the cycle before read it).
    pub next_from_read: bool,
    /// A queue notified a sender while another sender's bit was set.
    pub second_sender: bool,
    /// A release message cleared a bit.
    pub rls_cleared: bool,
    /// A release message cleared nothing.
    pub rls_ignored: bool,
    /// A leaf line was released (release message sent).
    pub leaf_release: bool,
    /// A refused congestion notification was answered.
    pub refusal: bool,
    /// A releasable leaf line waited for the release channel.
    pub leaf_waits: bool,
    /// A line that held no packet was released for its age.
    pub idle_release: bool,
    /// An allocation set a marker.
    pub marker_set: bool,
    /// A SAQ with packets was not eligible for its marker.
    pub marker_holds: bool,
    /// A marker was passed (cleared).
    pub marker_cleared: bool,
    /// An allocation took over the marker of an empty SAQ.
    pub marker_passed: bool,
}

/// The RECN port model.
#[derive(Clone, Debug)]
pub struct RecnPort {
    p: RecnPortParams,
    c: RecnPortConfig,
    cfg_err: bool,
    s: RecnPortState,
    /// The free list's words (`u_fl`, `prim_ram_1r1w`, C words of AW bits).
    fl: Ram1r1w,
    /// The descriptor memory (`u_dm`, `prim_ram_1r1w`, C words of AW + 16
    /// bits): the word of descriptor `x` is [`dword`] of the packet behind
    /// `x` in its queue.
    dm: Ram1r1w,
    ev: Events,
}

/// The configuration check without the structural one (also the RTL's
/// `cfg_err_o`).
fn cfg_bad(p: &RecnPortParams, c: &RecnPortConfig) -> bool {
    let cc = p.c as u16;
    c.cfg_rel_thr_i == 0
        || c.cfg_rel_thr_i > c.cfg_det_thr_i
        || c.cfg_det_thr_i > cc
        || c.cfg_xoff_i > cc
        || c.cfg_xon_i >= c.cfg_xoff_i
}

impl RecnPort {
    /// The configuration.
    pub fn config(&self) -> &RecnPortConfig {
        &self.c
    }

    /// The VC of service level `sl`.
    pub fn vc(&self, sl: u8) -> usize {
        ((self.c.cfg_sl_vc_i >> sl) & 1) as usize
    }

    /// The CAM line a packet of (`route`, `sl`) hits: the longest prefix,
    /// then the lowest index; with the number of lines that hit.
    pub fn lookup(&self, route: u32, sl: u8) -> (Option<usize>, usize) {
        self.lookup_below(route, sl, u32::MAX)
    }

    /// [`lookup`](Self::lookup) among the lines of fewer than `limit` hops.
    fn lookup_below(&self, route: u32, sl: u8, limit: u32) -> (Option<usize>, usize) {
        let s = &self.s;
        let mut best: Option<usize> = None;
        let mut n = 0;
        for j in 0..self.p.l() {
            if s.valid_q[j]
                && (s.hops_q[j] as u32) < limit
                && s.sl_q[j] == sl
                && (route as u64 ^ s.route_q[j] as u64) & self.p.mask(s.hops_q[j] as u32) == 0
            {
                n += 1;
                if best.is_none_or(|b| s.hops_q[j] > s.hops_q[b]) {
                    best = Some(j);
                }
            }
        }
        (best, n)
    }

    /// The queue a packet of (`route`, `sl`) enters.
    pub fn queue_of(&self, route: u32, sl: u8) -> usize {
        self.queue_below(route, sl, u32::MAX)
    }

    /// The queue a packet of (`route`, `sl`) enters when only the lines of
    /// fewer than `limit` hops count (an allocation's marker queue).
    fn queue_below(&self, route: u32, sl: u8, limit: u32) -> usize {
        match self.lookup_below(route, sl, limit).0 {
            Some(j) => self.p.line_queue(j),
            None => self.vc(sl) * self.p.qv() + (route as usize & (self.p.d - 1)),
        }
    }

    /// The head packet of queue `q`: (id, sl, len - 1), if any.
    pub fn head(&self, q: usize) -> Option<(u8, u8, u8)> {
        let s = &self.s;
        if s.occ_q[q] == 0 {
            return None;
        }
        Some((s.hid_q[q], s.hsl_q[q], s.hlen_q[q]))
    }

    /// The next word of queue `q` as the registers hold it (`nx_sel_q &&
    /// nx_qn_q == q ? rdata(u_dm) : nx_q[q]`): the head descriptor's word,
    /// meaningful while the queue holds two packets or more.
    fn next_word(&self, q: usize) -> u64 {
        let s = &self.s;
        if s.nx_sel_q && s.nx_qn_q as usize == q {
            self.dm.rdata()
        } else {
            s.nx_q[q]
        }
    }

    /// The packets of queue `q`, head first: (id, sl, len - 1).
    pub fn packets(&self, q: usize) -> Vec<(u8, u8, u8)> {
        self.walk(q).into_iter().map(|x| x.1).collect()
    }

    /// The descriptors of queue `q`, head first.
    pub fn descriptors(&self, q: usize) -> Vec<usize> {
        self.walk(q).into_iter().map(|x| x.0).collect()
    }

    /// Queue `q` head first: (descriptor, (id, sl, len - 1)); the head from
    /// the head cache, the others from the words of the descriptors ahead.
    fn walk(&self, q: usize) -> Vec<(usize, (u8, u8, u8))> {
        let s = &self.s;
        let mut v = Vec::new();
        if s.occ_q[q] == 0 {
            return v;
        }
        let mut x = s.head_q[q] as usize;
        let mut f = (s.hid_q[q], s.hsl_q[q], s.hlen_q[q]);
        let mut cells = 0u32;
        loop {
            v.push((x, f));
            cells += f.2 as u32 + 1;
            if cells >= s.occ_q[q] as u32 {
                break;
            }
            let (n, id, sl, len) = dfields(self.dm.mem[x]);
            x = n as usize;
            f = (id, sl, len);
        }
        v
    }

    /// The free list's FIFO, head first.
    pub fn free_fifo(&self) -> Vec<usize> {
        let s = &self.s;
        (0..s.fl_cnt_q as usize)
            .map(|k| self.fl.mem[(s.fl_rd_q as usize + k) % self.p.c] as usize)
            .collect()
    }

    /// The FIFO's head as the registers hold it (`fl_hsel_q ? rdata(u_fl)
    /// : fl_hd_q`); meaningful while the FIFO is not empty.
    fn fl_head(&self) -> u16 {
        if self.s.fl_hsel_q {
            self.fl.rdata() as u16
        } else {
            self.s.fl_hd_q
        }
    }

    /// Checks the spec's invariants; panics with the broken one.
    pub fn assert_invariants(&self) {
        let p = &self.p;
        let s = &self.s;
        let sum: u32 = s.occ_q.iter().map(|&x| x as u32).sum();
        assert_eq!(sum, s.used_q as u32, "used != sum of occupancies");
        assert!(s.used_q as usize <= p.c, "used over C");
        // Every descriptor exactly once: in a queue, fresh, or in the free
        // list's FIFO (conservation: in use + (C - fresh) + FIFO = C).
        let mut seen = vec![0u32; p.c];
        let mut pkts = 0;
        for q in 0..p.nq() {
            let v = self.packets(q);
            let cells: u32 = v.iter().map(|x| x.2 as u32 + 1).sum();
            assert_eq!(cells, s.occ_q[q] as u32, "queue {q}: list vs occupancy");
            pkts += v.len();
            for e in self.descriptors(q) {
                seen[e] += 1;
            }
        }
        assert!(s.fresh_q as usize <= p.c, "fresh_q over C");
        assert!(s.fl_cnt_q as usize <= p.c, "free list over C");
        assert_eq!(
            pkts + (p.c - s.fresh_q as usize) + s.fl_cnt_q as usize,
            p.c,
            "descriptors in use + fresh + free list != C"
        );
        for n in &mut seen[s.fresh_q as usize..] {
            *n += 1;
        }
        let fifo = self.free_fifo();
        for &e in &fifo {
            seen[e] += 1;
        }
        if let Some(e) = seen.iter().position(|&n| n != 1) {
            panic!(
                "descriptor {e} held {} times (queues, fresh, free list)",
                seen[e]
            );
        }
        if let Some(&h) = fifo.first() {
            assert_eq!(self.fl_head() as usize, h, "free list head register");
        }
        // The next cache holds the head's word wherever it is read.
        for q in 0..p.nq() {
            if s.occ_q[q] != 0 && s.head_q[q] != s.tail_q[q] {
                let h = s.head_q[q] as usize;
                assert_eq!(
                    self.next_word(q),
                    self.dm.mem[h],
                    "queue {q}: next cache vs the head's word"
                );
            }
        }
        for j in 0..p.l() {
            if s.mk_q[j] {
                let mq = s.mkq_q[j] as usize;
                assert!(
                    s.mkc_q[j] != 0 && s.mkc_q[j] <= s.occ_q[mq],
                    "line {j}: marker of {} cells in queue {mq} of {}",
                    s.mkc_q[j],
                    s.occ_q[mq]
                );
            } else {
                assert_eq!(s.mkc_q[j], 0, "line {j}: cells ahead of no marker");
            }
            if !s.valid_q[j] {
                assert_eq!(s.occ_q[p.line_queue(j)], 0, "free line {j} holds packets");
                assert!(
                    !s.gone_q[j] && s.up_q[j] == 0 && !s.hold_q[j] && s.age_q[j] == 0 && !s.mk_q[j],
                    "free line {j}: flags"
                );
                // (With an illegal Xoff of 0 an empty SAQ is in Xoff.)
                assert!(self.cfg_err || !s.xoff_q[j], "free line {j}: Xoff");
            }
            for k in j + 1..p.l() {
                if s.valid_q[j] && s.valid_q[k] {
                    assert!(
                        !(s.sl_q[j] == s.sl_q[k]
                            && s.hops_q[j] == s.hops_q[k]
                            && s.route_q[j] == s.route_q[k]),
                        "lines {j} and {k} are the same"
                    );
                }
            }
        }
    }
}

impl Block for RecnPort {
    const NAME: &'static str = "recn_port";
    type Params = RecnPortParams;
    type Config = RecnPortConfig;
    type Inputs = RecnPortInputs;
    type Outputs = RecnPortOutputs;
    type State = RecnPortState;

    fn variants() -> Vec<RecnPortParams> {
        vec![
            RecnPortParams::default(),
            RecnPortParams {
                d: 8,
                s: 8,
                c: 512,
                rw: 31,
            },
            RecnPortParams {
                d: 16,
                s: 16,
                c: 1024,
                rw: 32,
            },
        ]
    }

    /// The paper's port: 8 destinations, 8 SAQs, 512 descriptors.
    fn scale() -> Vec<RecnPortParams> {
        vec![RecnPortParams {
            d: 8,
            s: 8,
            c: 512,
            rw: 31,
        }]
    }

    fn default_config(p: &RecnPortParams) -> RecnPortConfig {
        // The paper's SL mapping; detection at 1/8 of the memory, vanish
        // below 1/32, Xoff at 1/4, Xon at 1/16.
        let c = p.c as u16;
        RecnPortConfig {
            cfg_sl_vc_i: 0xf0,
            cfg_det_thr_i: c / 8,
            cfg_rel_thr_i: (c / 32).max(1),
            cfg_xoff_i: c / 4,
            cfg_xon_i: c / 16,
            cfg_leaf_i: false,
            cfg_order_i: false,
            cfg_idle_i: 0,
        }
    }

    fn check(p: &RecnPortParams, c: &RecnPortConfig) -> Result<(), ConfigError> {
        check_pow2("D", "detection queues", p.d, 2, 16)?;
        check_param("S", "SAQs", p.s, 1, 16)?;
        check_param("C", "cells", p.c, 32, 1024)?;
        check_param("RW", "route bits", p.rw as usize, p.tb() as usize, 32)?;
        c.to_words(p)?;
        let cc = p.c as u64;
        check_range("cfg_det_thr_i", c.cfg_det_thr_i as u64, 1, cc)?;
        check_range(
            "cfg_rel_thr_i",
            c.cfg_rel_thr_i as u64,
            1,
            c.cfg_det_thr_i as u64,
        )
        .map_err(|e| e.note("cfg_det_thr_i"))?;
        check_range("cfg_xoff_i", c.cfg_xoff_i as u64, 1, cc)?;
        check_range("cfg_xon_i", c.cfg_xon_i as u64, 0, c.cfg_xoff_i as u64 - 1)
            .map_err(|e| e.note("below cfg_xoff_i"))?;
        debug_assert!(!cfg_bad(p, c));
        Ok(())
    }

    fn new(p: &RecnPortParams, c: &RecnPortConfig) -> Self {
        RecnPort {
            p: *p,
            c: c.clone(),
            cfg_err: cfg_bad(p, c),
            s: RecnPortState::zero(p),
            fl: Ram1r1w::new(p.aw(), p.c as u32),
            dm: Ram1r1w::new(p.aw() + 16, p.c as u32),
            ev: Events::default(),
        }
    }

    fn params(&self) -> &RecnPortParams {
        &self.p
    }

    fn state(&self) -> &RecnPortState {
        &self.s
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, _i: &RecnPortInputs, _o: &RecnPortOutputs, hits: &mut [u64]) {
        let e = &self.ev;
        let mut hit = |b: Bin, on: bool| hits[b as usize] += u64::from(on);
        hit(Bin::Alloc, e.act == Act::Alloc);
        hit(Bin::CamFull, e.act == Act::Drop);
        hit(Bin::Refresh, e.act == Act::Refresh);
        hit(Bin::VanishMarked, e.act == Act::Gone);
        hit(Bin::Ignore, e.act == Act::Ignore);
        hit(Bin::Release, e.release);
        hit(Bin::SaqHit, e.saq_hit);
        hit(Bin::ReplicatedOtherSl, e.replicated);
        hit(Bin::LongestPrefix, e.longest);
        hit(Bin::DetectDet, e.detect_det);
        hit(Bin::DetectSaq, e.detect_saq);
        hit(Bin::VanishSentDet, e.vanish_det);
        hit(Bin::VanishSentSaq, e.vanish_saq);
        hit(Bin::Xoff, e.xoff);
        hit(Bin::Xon, e.xon);
        hit(Bin::RefusedFull, e.refused_full);
        hit(Bin::ExactlyFull, e.exactly_full);
        hit(Bin::Vc0OverVc1, e.vc0_over_vc1);
        hit(Bin::StoppedSkipped, e.stopped_skipped);
        hit(Bin::DeqArrSameQueue, e.same_queue);
        hit(Bin::DescReused, e.desc_reused);
        hit(Bin::FreshExhausted, e.fresh_exhausted);
        hit(Bin::FreeListPushPop, e.fl_push_pop);
        hit(Bin::FreeListForward, e.fl_forward);
        hit(Bin::NextForward, e.next_forward);
        hit(Bin::NextFromRead, e.next_from_read);
        hit(Bin::ConfigError, self.cfg_err);
        hit(Bin::DetectSecondSender, e.second_sender);
        hit(Bin::ReleaseMsgCleared, e.rls_cleared);
        hit(Bin::ReleaseMsgIgnored, e.rls_ignored);
        hit(Bin::LeafRelease, e.leaf_release);
        hit(Bin::RefusalSent, e.refusal);
        hit(Bin::LeafReleaseWaits, e.leaf_waits);
        hit(Bin::IdleRelease, e.idle_release);
        hit(Bin::MarkerSet, e.marker_set);
        hit(Bin::MarkerHoldsSaq, e.marker_holds);
        hit(Bin::MarkerCleared, e.marker_cleared);
        hit(Bin::MarkerPassedOn, e.marker_passed);
    }

    fn step_into(&mut self, i: &RecnPortInputs, o: &mut RecnPortOutputs) {
        let p = self.p;
        let (d, qv, nq, l) = (p.d, p.qv(), p.nq(), p.l());
        let cfg = &self.c;
        let det = cfg.cfg_det_thr_i;
        let rel = cfg.cfg_rel_thr_i;
        let leaf = cfg.cfg_leaf_i;
        let mut ev = Events::default();

        // Registered outputs.
        {
            let s = &self.s;
            o.xoff_o.clone_from(&s.xoff_q);
            o.occ_o.clone_from(&s.occ_q);
            o.used_o = s.used_q;
            o.cam_valid_o.clone_from(&s.valid_q);
            o.cam_gone_o.clone_from(&s.gone_q);
            o.cam_hold_o.clone_from(&s.hold_q);
            o.cam_mark_o.clone_from(&s.mk_q);
            o.cam_up_o.clone_from(&s.up_q);
            o.cam_route_o.clone_from(&s.route_q);
            o.cam_hops_o.clone_from(&s.hops_q);
            o.cam_sl_o.clone_from(&s.sl_q);
            o.det_mask_o.clone_from(&s.mask_q);
            o.drop_cnt_o = s.drop_q;
        }
        o.cfg_err_o = self.cfg_err;
        refill(&mut o.rel_o, l, false);

        // 1. Dequeue: a SAQ behind its marker is not eligible.
        let mut req = [0u64; 2];
        for q in 0..nq {
            let marked = p.queue_line(q).is_some_and(|j| self.s.mk_q[j]);
            if self.s.occ_q[q] != 0 && !i.stop_i[q] && !marked {
                req[q / qv] |= 1 << (q % qv);
            }
            ev.marker_holds |= marked && self.s.occ_q[q] != 0 && i.out_ready_i;
        }
        let mut arb0 = RrArb {
            n: qv as u32,
            ptr: self.s.arb0_ptr_q as u32,
        };
        let mut arb1 = RrArb {
            n: qv as u32,
            ptr: self.s.arb1_ptr_q as u32,
        };
        let rdy = i.out_ready_i;
        let g0 = arb0.clock(req[0], rdy);
        let g1 = arb1.clock(req[1], rdy && req[0] == 0);
        self.s.arb0_ptr_q = arb0.ptr as u8;
        self.s.arb1_ptr_q = arb1.ptr as u8;
        let deq = if !rdy {
            None
        } else if let Some(k) = g0 {
            Some(k as usize)
        } else {
            g1.map(|k| qv + k as usize)
        };
        ev.vc0_over_vc1 = rdy && req[0] != 0 && req[1] != 0;
        ev.stopped_skipped = deq.is_some() && (0..nq).any(|q| i.stop_i[q] && self.s.occ_q[q] != 0);
        o.out_valid_o = deq.is_some();
        o.out_queue_o = 0;
        o.out_id_o = 0;
        o.out_sl_o = u3::new(0);
        o.out_len_o = u5::new(0);
        let mut h = 0usize;
        let mut rel_cells = 0u16;
        if let Some(r) = deq {
            // From the head cache: nothing is read from memory.
            h = self.s.head_q[r] as usize;
            o.out_queue_o = r as u8;
            o.out_id_o = self.s.hid_q[r];
            o.out_sl_o = u3::new(self.s.hsl_q[r]);
            o.out_len_o = u5::new(self.s.hlen_q[r]);
            rel_cells = self.s.hlen_q[r] as u16 + 1;
            // The markers in that queue move up by the packet's cells.
            let s = &mut self.s;
            for j in 0..l {
                if s.mk_q[j] && s.mkq_q[j] as usize == r {
                    s.mkc_q[j] -= rel_cells;
                    if s.mkc_q[j] == 0 {
                        s.mk_q[j] = false;
                        ev.marker_cleared = true;
                    }
                }
            }
        }

        // 2. Arrival, on the CAM at the start of the cycle.
        let sl = i.in_sl_i.value();
        let src = i.in_src_i as usize;
        let (hitl, nhit) = self.lookup(i.in_route_i, sl);
        let aq = self.queue_of(i.in_route_i, sl);
        let len = i.in_len_i.value() as u16 + 1;
        let fits = self.s.used_q - rel_cells + len <= p.c as u16;
        let enq = i.in_valid_i && !self.cfg_err && fits;
        o.in_ready_o = enq;
        o.in_queue_o = if enq { aq as u8 } else { 0 };
        o.in_desc_o = 0;
        if i.in_valid_i && !self.cfg_err && !fits {
            ev.refused_full = true;
        }
        if enq {
            if let Some(j) = hitl {
                ev.saq_hit = true;
                ev.longest = nhit > 1;
                let s = &self.s;
                ev.replicated = (0..l).any(|k| {
                    s.valid_q[k]
                        && s.sl_q[k] != sl
                        && s.hops_q[k] == s.hops_q[j]
                        && s.route_q[k] == s.route_q[j]
                });
                self.s.hold_q[j] = true;
            }
        }

        // The free list: next = f(current, inputs). The arrival takes a
        // fresh descriptor, else the FIFO's head (a pop), else `h`; a
        // released `h` it does not take is pushed.
        let e = {
            let s = &self.s;
            let c = p.c as u16;
            let wrap = |x: u16| if x == c - 1 { 0 } else { x + 1 };
            let n = s.fl_cnt_q;
            let fresh_ok = s.fresh_q < c;
            let pop = enq && !fresh_ok && n != 0;
            let reuse = enq && !fresh_ok && n == 0;
            let push = deq.is_some() && !reuse;
            assert!(
                !reuse || deq.is_some(),
                "DescAvail: no descriptor for an arrival"
            );
            assert!(
                !(push && !pop && n == c),
                "FlOverflow: push into a full free list"
            );
            let e = if fresh_ok {
                s.fresh_q
            } else if n != 0 {
                self.fl_head()
            } else {
                h as u16
            };
            // Read the next head (pushed in an earlier cycle) when one
            // remains; forward `h` when it becomes the head this cycle.
            let fl_re = pop && n >= 2;
            let fwd = push && ((!pop && n == 0) || (pop && n == 1));
            let fresh_d = if enq && fresh_ok {
                s.fresh_q + 1
            } else {
                s.fresh_q
            };
            let fl_rd_d = if pop { wrap(s.fl_rd_q) } else { s.fl_rd_q };
            let fl_wr_d = if push { wrap(s.fl_wr_q) } else { s.fl_wr_q };
            let fl_cnt_d = n + u16::from(push) - u16::from(pop);
            let (fl_hsel_d, fl_hd_d) = if fwd {
                (false, h as u16)
            } else if fl_re {
                (true, s.fl_hd_q)
            } else {
                (s.fl_hsel_q, s.fl_hd_q)
            };
            ev.desc_reused = reuse;
            ev.fresh_exhausted = pop;
            ev.fl_push_pop = push && pop;
            ev.fl_forward = push && pop && n == 1;
            // The edge.
            self.fl.step(
                push,
                s.fl_wr_q as u32,
                h as u64,
                fl_re,
                wrap(s.fl_rd_q) as u32,
            );
            let s = &mut self.s;
            s.fresh_q = fresh_d;
            s.fl_rd_q = fl_rd_d;
            s.fl_wr_q = fl_wr_d;
            s.fl_cnt_q = fl_cnt_d;
            s.fl_hsel_q = fl_hsel_d;
            s.fl_hd_q = fl_hd_d;
            e as usize
        };

        // The list updates, the head and next caches and the descriptor
        // memory: next = f(current, inputs).
        {
            let s = &self.s;
            let nw_r = deq.map_or(0, |r| self.next_word(r));
            let (nw_nxt, nw_id, nw_sl, nw_len) = dfields(nw_r);
            // Occupancy and head of a queue after step 1 (the dequeue).
            let occ1 = |q: usize| {
                if deq == Some(q) {
                    s.occ_q[q] - rel_cells
                } else {
                    s.occ_q[q]
                }
            };
            let head1 = |q: usize| {
                if deq == Some(q) {
                    nw_nxt
                } else {
                    s.head_q[q]
                }
            };
            // Step 1: read the new head's word when the queue keeps two
            // packets or more (`h` and the new head are not the tail): it
            // was written when the packet behind the new head arrived, in
            // an earlier cycle. With one packet the next word is none of
            // the queue's (unknown in the RTL's simulation after a reset)
            // and nothing depends on it.
            let dm_re = deq.is_some_and(|r| h as u16 != s.tail_q[r] && nw_nxt != s.tail_q[r]);
            let nx_sel_d = dm_re;
            let nx_qn_d = match deq {
                Some(r) if dm_re => r as u8,
                _ => s.nx_qn_q,
            };
            // Step 2: link behind the tail (one word written), or become
            // the head of an empty queue; the word goes to the next cache
            // when the tail is the head.
            let aocc = occ1(aq);
            let dm_we = enq && aocc != 0;
            let dm_waddr = s.tail_q[aq];
            let dm_wdata = dword(e as u16, i.in_id_i, sl, i.in_len_i.value());
            let nx_fwd = dm_we && s.tail_q[aq] == head1(aq);
            let used_d = s.used_q - rel_cells + if enq { len } else { 0 };
            let fill = s.nx_sel_q.then(|| (s.nx_qn_q as usize, self.dm.rdata()));
            if enq {
                o.in_desc_o = e as u16;
                ev.same_queue = deq == Some(aq);
            }
            ev.next_forward = nx_fwd;
            ev.next_from_read =
                deq.is_some_and(|r| s.nx_sel_q && s.nx_qn_q as usize == r && occ1(r) != 0);
            // The edge.
            self.dm.step(
                dm_we,
                dm_waddr as u32,
                dm_wdata,
                dm_re,
                head1(deq.unwrap_or(0)) as u32,
            );
            let s = &mut self.s;
            if let Some((q, w)) = fill {
                s.nx_q[q] = w;
            }
            if let Some(r) = deq {
                s.occ_q[r] -= rel_cells;
                s.head_q[r] = nw_nxt;
                s.hid_q[r] = nw_id;
                s.hsl_q[r] = nw_sl;
                s.hlen_q[r] = nw_len;
            }
            if enq {
                if aocc == 0 {
                    s.head_q[aq] = e as u16;
                    s.hid_q[aq] = i.in_id_i;
                    s.hsl_q[aq] = sl;
                    s.hlen_q[aq] = i.in_len_i.value();
                }
                if nx_fwd {
                    s.nx_q[aq] = dm_wdata;
                }
                s.tail_q[aq] = e as u16;
                s.occ_q[aq] = aocc + len;
            }
            s.nx_sel_q = nx_sel_d;
            s.nx_qn_q = nx_qn_d;
            s.used_q = used_d;
            ev.exactly_full = s.used_q as usize == p.c;
        }

        // Ages, on the lines valid at the start of the cycle (an allocation
        // below finds its free line at age 0); which were old enough to go.
        let mut old = 0u32;
        {
            let s = &mut self.s;
            let idle = cfg.cfg_idle_i;
            for j in 0..l {
                if idle != 0 && s.age_q[j] >= idle {
                    old |= 1 << j;
                }
                if s.valid_q[j] && !s.hold_q[j] {
                    s.age_q[j] = s.age_q[j].saturating_add(1);
                }
            }
        }

        // 5. Release message received, on the CAM and masks at the start of
        //    the cycle (nothing above changed them; step 4 below only
        //    allocates lines, whose up masks are clear).
        o.rls_hit_o = false;
        if i.rls_valid_i {
            let hops = i.rls_hops_i as u32;
            let rsl = i.rls_sl_i.value();
            let rs = i.rls_src_i as usize;
            if (1..=p.h()).contains(&hops) {
                let route = (i.rls_route_i as u64 & p.mask(hops)) as u32;
                let s = &mut self.s;
                if let Some(j) = (0..l).find(|&j| {
                    s.valid_q[j]
                        && s.sl_q[j] == rsl
                        && s.hops_q[j] as u32 == hops
                        && s.route_q[j] == route
                }) {
                    o.rls_hit_o |= s.up_q[j] & (1 << rs) != 0;
                    s.up_q[j] &= !(1 << rs);
                }
                if hops == 1 {
                    let v = ((cfg.cfg_sl_vc_i >> rsl) & 1) as usize;
                    let e = (v * d + (route as usize & (d - 1))) * d + rs;
                    o.rls_hit_o |= s.mask_q[e] & (1 << rsl) != 0;
                    s.mask_q[e] &= !(1 << rsl);
                }
            }
            ev.rls_cleared = o.rls_hit_o;
            ev.rls_ignored = !o.rls_hit_o;
        }

        // 4. Notification received (CAM at the start of the cycle: nothing
        //    above changed it).
        let mut act = Act::None;
        let mut line = 0usize;
        if i.ntf_valid_i {
            let hops = i.ntf_hops_i as u32;
            let nsl = i.ntf_sl_i.value();
            if hops == 0 || hops > p.h() {
                act = Act::Ignore;
            } else {
                let m = p.mask(hops);
                let route = (i.ntf_route_i as u64 & m) as u32;
                let s = &self.s;
                let exact = (0..l).find(|&j| {
                    s.valid_q[j]
                        && s.sl_q[j] == nsl
                        && s.hops_q[j] as u32 == hops
                        && s.route_q[j] == route
                });
                // The marker queue: where this point's packets went so far.
                let mq = self.queue_below(route, nsl, hops);
                let s = &mut self.s;
                if i.ntf_kind_i {
                    match exact {
                        Some(j) => {
                            act = Act::Gone;
                            line = j;
                            s.gone_q[j] = true;
                        }
                        None => act = Act::Ignore,
                    }
                } else if let Some(j) = exact {
                    act = Act::Refresh;
                    line = j;
                    s.gone_q[j] = false;
                } else {
                    let v = ((cfg.cfg_sl_vc_i >> nsl) & 1) as usize;
                    match (v * p.s..(v + 1) * p.s).find(|&j| !s.valid_q[j]) {
                        Some(j) => {
                            act = Act::Alloc;
                            line = j;
                            s.valid_q[j] = true;
                            s.route_q[j] = route;
                            s.hops_q[j] = hops as u8;
                            s.sl_q[j] = nsl;
                            if cfg.cfg_order_i {
                                // An empty SAQ that waits for its own
                                // marker passes that marker on.
                                let (mut mq, mut mc) = (mq, s.occ_q[mq]);
                                if let Some(k) = p.queue_line(mq).filter(|&k| mc == 0 && s.mk_q[k])
                                {
                                    (mq, mc) = (s.mkq_q[k] as usize, s.mkc_q[k]);
                                    ev.marker_passed = true;
                                }
                                s.mkq_q[j] = mq as u8;
                                s.mkc_q[j] = mc;
                                s.mk_q[j] = mc != 0;
                                ev.marker_set = s.mk_q[j];
                            }
                        }
                        None => act = Act::Drop,
                    }
                }
            }
        }
        o.ntf_act_o = act.code();
        o.ntf_line_o = line as u8;
        ev.act = act;
        let mut drop = SatCnt {
            count: self.s.drop_q as u64,
            max: (1 << DCW) - 1,
        };
        drop.clock(false, u64::from(act == Act::Drop), 0);
        self.s.drop_q = drop.count as u8;
        // A congestion notification not taken is refused (leaf rule).
        o.dn_valid_o = false;
        o.dn_route_o = 0;
        o.dn_hops_o = 0;
        o.dn_sl_o = u3::new(0);
        if leaf && i.ntf_valid_i && !i.ntf_kind_i && matches!(act, Act::Drop | Act::Ignore) {
            o.dn_valid_o = true;
            o.dn_route_o = i.ntf_route_i;
            o.dn_hops_o = i.ntf_hops_i;
            o.dn_sl_o = i.ntf_sl_i;
            ev.refusal = true;
        }

        // 6. Notification sent, on the end-of-cycle occupancies and the
        //    masks after the release message; the lines' flags as they were
        //    at the start of the cycle (an allocated line has no bits set
        //    and no packets).
        o.up_valid_o = false;
        o.up_kind_o = false;
        o.up_route_o = 0;
        o.up_hops_o = 0;
        o.up_sl_o = u3::new(0);
        o.up_dst_o = 0;
        {
            let s = &mut self.s;
            let mut sent = false;
            if enq && s.occ_q[aq] >= det {
                match p.queue_line(aq) {
                    None => {
                        let mi = (aq / qv) * d + aq % qv;
                        if s.mask_q[mi * d + src] & (1 << sl) == 0 {
                            ev.second_sender =
                                (0..d).any(|k| k != src && s.mask_q[mi * d + k] & (1 << sl) != 0);
                            s.mask_q[mi * d + src] |= 1 << sl;
                            sent = true;
                            o.up_route_o = (aq % qv) as u32;
                            o.up_hops_o = 1;
                            o.up_sl_o = u3::new(sl);
                            o.up_dst_o = src as u8;
                            ev.detect_det = true;
                        }
                    }
                    Some(j) => {
                        if s.up_q[j] & (1 << src) == 0 {
                            ev.second_sender = s.up_q[j] != 0;
                            s.up_q[j] |= 1 << src;
                            sent = true;
                            o.up_route_o = s.route_q[j];
                            o.up_hops_o = s.hops_q[j];
                            o.up_sl_o = u3::new(s.sl_q[j]);
                            o.up_dst_o = src as u8;
                            ev.detect_saq = true;
                        }
                    }
                }
            }
            if !sent && !leaf {
                'scan: for q in 0..nq {
                    if s.occ_q[q] >= rel {
                        continue;
                    }
                    match p.queue_line(q) {
                        None => {
                            let mi = (q / qv) * d + q % qv;
                            for k in 0..d {
                                let m = s.mask_q[mi * d + k];
                                if m != 0 {
                                    let b = m.trailing_zeros() as u8;
                                    s.mask_q[mi * d + k] &= !(1 << b);
                                    sent = true;
                                    o.up_kind_o = true;
                                    o.up_route_o = (q % qv) as u32;
                                    o.up_hops_o = 1;
                                    o.up_sl_o = u3::new(b);
                                    o.up_dst_o = k as u8;
                                    ev.vanish_det = true;
                                    break 'scan;
                                }
                            }
                        }
                        Some(j) => {
                            if s.up_q[j] != 0 {
                                let k = s.up_q[j].trailing_zeros();
                                s.up_q[j] &= !(1 << k);
                                sent = true;
                                o.up_kind_o = true;
                                o.up_route_o = s.route_q[j];
                                o.up_hops_o = s.hops_q[j];
                                o.up_sl_o = u3::new(s.sl_q[j]);
                                o.up_dst_o = k as u8;
                                ev.vanish_saq = true;
                                break 'scan;
                            }
                        }
                    }
                }
            }
            o.up_valid_o = sent;
        }

        // 7. Xon/Xoff; 8. release.
        {
            let s = &mut self.s;
            let mut leaf_done = false;
            for j in 0..l {
                let old = old >> j & 1 != 0;
                let occ = s.occ_q[p.line_queue(j)];
                let x = if occ >= cfg.cfg_xoff_i {
                    true
                } else if occ <= cfg.cfg_xon_i {
                    false
                } else {
                    s.xoff_q[j]
                };
                ev.xoff |= x && !s.xoff_q[j];
                ev.xon |= !x && s.xoff_q[j];
                s.xoff_q[j] = x;
                let free = if leaf {
                    let ok = s.valid_q[j] && s.up_q[j] == 0 && (s.hold_q[j] || old) && occ == 0;
                    if ok && (leaf_done || o.dn_valid_o) {
                        ev.leaf_waits = true;
                        false
                    } else {
                        ok
                    }
                } else {
                    s.valid_q[j] && s.gone_q[j] && s.up_q[j] == 0 && occ == 0
                };
                if free {
                    if leaf {
                        leaf_done = true;
                        o.dn_valid_o = true;
                        o.dn_route_o = s.route_q[j];
                        o.dn_hops_o = s.hops_q[j];
                        o.dn_sl_o = u3::new(s.sl_q[j]);
                        ev.leaf_release = true;
                        ev.idle_release |= !s.hold_q[j];
                    }
                    s.valid_q[j] = false;
                    s.gone_q[j] = false;
                    s.hold_q[j] = false;
                    s.age_q[j] = 0;
                    s.mk_q[j] = false;
                    s.mkq_q[j] = 0;
                    s.mkc_q[j] = 0;
                    s.route_q[j] = 0;
                    s.hops_q[j] = 0;
                    s.sl_q[j] = 0;
                    o.rel_o[j] = true;
                    ev.release = true;
                }
            }
        }
        self.ev = ev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `i` with the output side ready (a dequeue when a packet waits).
    fn deq(mut i: RecnPortInputs) -> RecnPortInputs {
        i.out_ready_i = true;
        i
    }

    /// One step, the invariants checked after it; its outputs and events.
    fn step(m: &mut RecnPort, i: &RecnPortInputs) -> (RecnPortOutputs, Events) {
        let o = m.step(i);
        m.assert_invariants();
        (o, m.ev)
    }

    fn p() -> RecnPortParams {
        RecnPortParams::default()
    }

    fn ntf(kind: bool, route: u32, hops: u8, sl: u8) -> RecnPortInputs {
        let mut i = RecnPortInputs::zero(&p());
        i.ntf_valid_i = true;
        i.ntf_kind_i = kind;
        i.ntf_route_i = route;
        i.ntf_hops_i = hops;
        i.ntf_sl_i = u3::new(sl);
        i
    }

    fn pkt(id: u8, route: u32, sl: u8, cells: u8) -> RecnPortInputs {
        let mut i = RecnPortInputs::zero(&p());
        i.in_valid_i = true;
        i.in_id_i = id;
        i.in_route_i = route;
        i.in_sl_i = u3::new(sl);
        i.in_len_i = u5::new(cells - 1);
        i
    }

    #[test]
    fn queue_and_line_numbering() {
        let p = p();
        assert_eq!((p.tb(), p.h(), p.hw(), p.nq(), p.qw()), (2, 8, 4, 12, 4));
        assert_eq!(p.line_queue(0), 4);
        assert_eq!(p.line_queue(3), 11);
        assert_eq!(p.queue_line(11), Some(3));
        assert_eq!(p.queue_line(6), None);
        let paper = RecnPort::variants()[1];
        assert_eq!(
            (paper.tb(), paper.h(), paper.hw(), paper.cw()),
            (3, 10, 4, 10)
        );
    }

    #[test]
    fn alloc_hit_longest_prefix_and_drop() {
        let p = p();
        let c = RecnPort::default_config(&p);
        let mut m = RecnPort::new(&p, &c);
        let act = |o: &RecnPortOutputs| Act::from_code(o.ntf_act_o);
        // SL 5 uses VC1: lines 2, 3.
        assert_eq!(act(&m.step(&ntf(false, 0b0111, 1, 5))), Act::Alloc);
        assert_eq!(m.state().route_q[2], 0b11, "stored masked");
        assert_eq!(act(&m.step(&ntf(false, 0b0111, 2, 5))), Act::Alloc);
        assert_eq!(act(&m.step(&ntf(false, 0b0111, 2, 5))), Act::Refresh);
        assert_eq!(act(&m.step(&ntf(false, 0b1011, 2, 5))), Act::Drop);
        assert_eq!(m.state().drop_q, 1);
        assert_eq!(m.lookup(0b0111, 5), (Some(3), 2));
        assert_eq!(m.lookup(0b1011, 5), (Some(2), 1));
        assert_eq!(m.lookup(0b0111, 4), (None, 0));
        let o = m.step(&pkt(9, 0b0111, 5, 2));
        assert!(o.in_ready_o);
        assert_eq!(o.in_queue_o as usize, p.line_queue(3));
        let o = m.step(&pkt(10, 0b0010, 1, 1));
        assert_eq!(o.in_queue_o, 2, "VC0 detection queue 2");
        assert_eq!(act(&m.step(&ntf(false, 0, 0, 1))), Act::Ignore);
        assert_eq!(act(&m.step(&ntf(true, 0b11, 1, 1))), Act::Ignore);
        m.assert_invariants();
    }

    #[test]
    fn fifo_order_and_memory_bound() {
        let p = p();
        let c = RecnPort::default_config(&p);
        let mut m = RecnPort::new(&p, &c);
        for k in 0..4u8 {
            assert!(m.step(&pkt(k, 1, 0, 16)).in_ready_o);
        }
        assert_eq!(m.state().used_q, 64);
        assert!(!m.step(&pkt(99, 1, 0, 1)).in_ready_o, "full");
        let mut i = pkt(4, 1, 0, 16);
        i.out_ready_i = true;
        let o = m.step(&i);
        assert!(
            o.out_valid_o && o.out_id_o == 0 && o.in_ready_o,
            "release first"
        );
        m.assert_invariants();
        assert_eq!(
            m.packets(1).iter().map(|x| x.0).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
    }

    #[test]
    fn free_list_fresh_then_fifo_order() {
        let p = p();
        let c = RecnPort::default_config(&p);
        let mut m = RecnPort::new(&p, &c);
        // Fresh descriptors in index order fill the memory with 1-cell
        // packets (detection queue 1 of VC0).
        for k in 0..64u16 {
            let o = m.step(&pkt(k as u8, 1, 0, 1));
            assert!(o.in_ready_o && o.in_desc_o == k);
        }
        assert_eq!(m.state().fresh_q, 64);
        // Nothing fresh, the FIFO empty: the arrival takes the descriptor
        // the dequeue releases (0).
        let (o, ev) = step(&mut m, &deq(pkt(100, 1, 0, 1)));
        assert!(o.out_valid_o && o.in_ready_o && o.in_desc_o == 0 && ev.desc_reused);
        // 1 released into the empty FIFO: straight to the head.
        step(&mut m, &deq(RecnPortInputs::zero(&p)));
        assert!(!m.s.fl_hsel_q && m.s.fl_hd_q == 1 && m.s.fl_cnt_q == 1);
        // Pop 1 and push 2 with one in the FIFO: 2 forwarded to the head.
        let (o, ev) = step(&mut m, &deq(pkt(101, 1, 0, 1)));
        assert!(o.in_desc_o == 1 && ev.fl_push_pop && ev.fl_forward && ev.fresh_exhausted);
        assert!(!m.s.fl_hsel_q && m.s.fl_hd_q == 2);
        // Push 3 and 4 behind it; pops then come from the RAM's read.
        step(&mut m, &deq(RecnPortInputs::zero(&p)));
        step(&mut m, &deq(RecnPortInputs::zero(&p)));
        assert_eq!(m.free_fifo(), vec![2, 3, 4]);
        let (o, _) = step(&mut m, &pkt(102, 1, 0, 1));
        assert!(o.in_desc_o == 2 && m.s.fl_hsel_q);
        let (o, ev) = step(&mut m, &deq(pkt(103, 1, 0, 1)));
        assert!(o.in_desc_o == 3 && ev.fl_push_pop && !ev.fl_forward);
        assert_eq!(m.free_fifo(), vec![4, 5]);
        assert_eq!(step(&mut m, &pkt(104, 1, 0, 1)).0.in_desc_o, 4);
        assert_eq!(step(&mut m, &pkt(105, 1, 0, 1)).0.in_desc_o, 5);
        assert_eq!(m.s.fl_cnt_q, 0);
        // Empty again: the read pointer has caught up with the write one.
        assert_eq!((m.s.fl_rd_q, m.s.fl_wr_q), (5, 5));
    }

    #[test]
    fn head_and_next_caches() {
        let p = p();
        let c = RecnPort::default_config(&p);
        let mut m = RecnPort::new(&p, &c);
        // A packet into an empty queue goes to the head cache only; the
        // second is linked behind it: the head's word goes to the next
        // cache at once.
        let (_, ev) = step(&mut m, &pkt(10, 1, 0, 2));
        assert!(!ev.next_forward && m.s.hid_q[1] == 10 && m.s.hlen_q[1] == 1);
        let (_, ev) = step(&mut m, &pkt(11, 1, 0, 3));
        assert!(ev.next_forward && m.s.nx_q[1] == dword(1, 11, 0, 2));
        assert_eq!(m.dm.mem[0], dword(1, 11, 0, 2), "the word of descriptor 0");
        let (_, ev) = step(&mut m, &pkt(12, 1, 0, 1));
        assert!(!ev.next_forward, "behind a tail that is not the head");
        step(&mut m, &pkt(13, 1, 0, 1));
        // Back-to-back departures of one queue: 10 from the head cache, the
        // read of 11's word issued; 11 leaves with 12 from the read
        // register; 12 leaves (13 is the tail: nothing read), then 13.
        let (o, ev) = step(&mut m, &deq(RecnPortInputs::zero(&p)));
        assert!(o.out_id_o == 10 && o.out_len_o.value() == 1 && !ev.next_from_read);
        assert!(m.s.nx_sel_q && m.s.nx_qn_q == 1);
        let (o, ev) = step(&mut m, &deq(RecnPortInputs::zero(&p)));
        assert!(o.out_id_o == 11 && o.out_len_o.value() == 2 && ev.next_from_read);
        assert!(
            m.s.nx_sel_q,
            "the new head (12) is not the tail: 12's word read"
        );
        let (o, ev) = step(&mut m, &deq(RecnPortInputs::zero(&p)));
        assert!(o.out_id_o == 12 && ev.next_from_read);
        assert!(!m.s.nx_sel_q, "the new head (13) is the tail: nothing read");
        // 13 alone; an arrival and its departure in one cycle: the arrival
        // becomes the head of the emptied queue.
        let (o, ev) = step(&mut m, &deq(pkt(14, 1, 0, 1)));
        assert!(o.out_id_o == 13 && o.in_ready_o && !ev.next_forward);
        assert_eq!(m.head(1), Some((14, 0, 0)));
        // Two packets, a departure and an arrival in one cycle: the new
        // head is the tail the arrival links behind (forwarded).
        step(&mut m, &pkt(15, 1, 0, 1));
        let (o, ev) = step(&mut m, &deq(pkt(16, 1, 0, 1)));
        assert!(o.out_id_o == 14 && ev.next_forward);
        assert_eq!(m.packets(1), vec![(15, 0, 0), (16, 0, 0)]);
        assert_eq!(step(&mut m, &deq(RecnPortInputs::zero(&p))).0.out_id_o, 15);
        assert_eq!(step(&mut m, &deq(RecnPortInputs::zero(&p))).0.out_id_o, 16);
    }

    #[test]
    fn detection_vanish_and_release() {
        let p = p();
        let c = RecnPort::default_config(&p); // det 8, rel 2, xoff 16, xon 4
        let mut m = RecnPort::new(&p, &c);
        let o = m.step(&pkt(0, 3, 6, 8));
        assert!(o.up_valid_o && !o.up_kind_o && o.up_route_o == 3 && o.up_hops_o == 1);
        // Detection queue 3 of VC1, sender 0: entry (4 + 3) * D + 0.
        assert_eq!(m.state().mask_q[(4 + 3) * 4], 1 << 6);
        // Drain: the vanish goes.
        let mut i = RecnPortInputs::zero(&p);
        i.out_ready_i = true;
        let o = m.step(&i);
        assert!(o.out_valid_o && o.up_valid_o && o.up_kind_o && o.up_sl_o.value() == 6);
        assert_eq!(m.state().mask_q[7 * 4], 0);
        // A SAQ marked gone and empty is released at once.
        m.step(&ntf(false, 1, 1, 0));
        let o = m.step(&ntf(true, 1, 1, 0));
        assert_eq!(Act::from_code(o.ntf_act_o), Act::Gone);
        assert!(o.rel_o[0]);
        assert!(!m.state().valid_q[0]);
        m.assert_invariants();
    }
}
