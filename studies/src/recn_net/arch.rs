//! The three switch-port architectures of the network study, behind one
//! [`PortEngine`] trait: a port's queues, its scheduler and the flow
//! control its senders see. The same engine serves as a switch's input port
//! (its queues keyed by this switch's outputs) and as its output port (keyed
//! by the next switch's outputs: the packet's route has moved one hop on at
//! the crossbar), as the seed's switch: "the output ports of the switch
//! replicate the structure of the inputs".
//!
//! - [`VoqNet`]: VOQ at network level, a VC per service level: a queue per
//!   (level, destination end point), each with its own credits (2 maximum
//!   packets); strict priority by level, round robin over destinations.
//! - [`VoqSwitch`]: VOQ at switch level, 8 VCs: a queue per (level, next
//!   crossbar output); per level a credit pool of an eighth of the port
//!   memory; strict priority by level, round robin over outputs.
//! - [`Recn`]: the RECN port of `docs/recn_port.md` (two VCs, detection
//!   queues, SAQs, CAM, notifications, release messages, Xon/Xoff, in-order
//!   markers), stepped through [`Stepper`]: the golden model
//!   ([`crate::bcn_loop::Model`]) or its RTL. Credits per VC: half the port
//!   memory each; a packet is not sent to this port while the SAQ it would
//!   enter is in Xoff (and, with `det_xoff`, while the detection queue it
//!   would enter holds `cfg_xoff_i` cells or more).
//!
//! What a sender sees of a port — its credits and, for RECN, its CAM lines
//! and Xoff levels — reaches the sender `delay` ticks after it changes (the
//! link's propagation delay for a switch's input port, none for an output
//! port, whose senders are its own switch's input ports): a cell freed in
//! tick `t` can be reserved again from tick `t + 1 + delay`.

use crate::bcn_loop::Stepper;
use arbitrary_int::{u3, u5};
use model::recn_port::{RecnPort, RecnPortConfig, RecnPortInputs, RecnPortOutputs, RecnPortParams};
use model::PortGroup;
use std::collections::VecDeque;

/// A packet in the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pkt {
    /// Unique id (birth order).
    pub id: u32,
    /// Source end point.
    pub src: u16,
    /// Destination end point.
    pub dst: u16,
    /// Service level.
    pub sl: u8,
    /// Length in 64-byte cells.
    pub cells: u8,
    /// Birth slot.
    pub born: u64,
    /// Remaining turnpool: bits `[TB-1:0]` are the next crossbar's output.
    pub route: u32,
}

/// A congestion (or vanish) notification, or a release message, relative
/// to the port it reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ntf {
    /// Vanish (notifications only).
    pub vanish: bool,
    /// Route from the receiving port to the congested point.
    pub route: u32,
    /// Prefix length, hops.
    pub hops: u8,
    /// Service level.
    pub sl: u8,
}

/// A release message and the sender it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rls {
    /// The sender (the receiving port's sender index).
    pub src: u8,
    /// The point, as the receiving port named it.
    pub ntf: Ntf,
}

/// What a port did in a tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotOut {
    /// The packet that left.
    pub sent: Option<Pkt>,
    /// A notification for sender `.1`.
    pub up: Option<(Ntf, u8)>,
    /// A release message (or refusal) for the port downstream.
    pub dn: Option<Ntf>,
}

/// One switch port.
pub trait PortEngine {
    /// Whether a sender may send `p` now (its route as seen here), on what
    /// it sees of this port: credits, and (RECN) the Xoff of the SAQ it
    /// would enter.
    fn accepts(&self, p: &Pkt) -> bool;
    /// A sender sent `p`: its cells are reserved until it leaves.
    fn reserve(&mut self, p: &Pkt);
    /// One tick: `arrival` (already reserved, from sender `.1`) enters; if
    /// `ready`, at most one packet whose head may go (`can_go`) leaves;
    /// `ntf` is a notification from downstream, `rls` a release message
    /// from a sender.
    fn slot(
        &mut self,
        arrival: Option<(Pkt, u8)>,
        ntf: Option<Ntf>,
        rls: Option<Rls>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut;
    /// End of tick `t`: what changed in it becomes visible to the senders
    /// after the port's delay.
    fn end_tick(&mut self, t: u64);
    /// Packets stored.
    fn packets(&self) -> usize;
    /// Received notifications by action (`ntf_act_o` code; RECN only).
    fn acts(&self) -> [u64; 8] {
        [0; 8]
    }
    /// Release messages that cleared a notified bit (RECN only).
    fn rls_hits(&self) -> u64 {
        0
    }
    /// With no packet stored and no input, a tick would change nothing.
    fn can_skip(&self) -> bool {
        true
    }
}

/// Round robin over the set bits of `mask` (`n` of them at most), from
/// `ptr`: the first `k` whose `ok(k)` holds.
fn rr_pick(mask: &[u64], n: usize, ptr: usize, mut ok: impl FnMut(usize) -> bool) -> Option<usize> {
    let mut scan = |lo: usize, hi: usize| {
        let mut w = lo / 64;
        while w * 64 < hi {
            let mut bits = mask[w];
            if w * 64 < lo {
                bits &= !0u64 << (lo - w * 64);
            }
            while bits != 0 {
                let k = w * 64 + bits.trailing_zeros() as usize;
                if k >= hi {
                    return None;
                }
                if ok(k) {
                    return Some(k);
                }
                bits &= bits - 1;
            }
            w += 1;
        }
        None
    };
    scan(ptr, n).or_else(|| scan(0, ptr))
}

/// Credits a sender sees: reserved cells per pool, freed cells returned
/// `delay` ticks late.
#[derive(Clone, Debug)]
pub(crate) struct Credits {
    pub(crate) reserved: Vec<u32>,
    freed: Vec<(usize, u32)>,
    pending: VecDeque<(u64, usize, u32)>,
    delay: u64,
}

impl Credits {
    pub(crate) fn new(pools: usize, delay: u64) -> Self {
        Credits {
            reserved: vec![0; pools],
            freed: Vec::new(),
            pending: VecDeque::new(),
            delay,
        }
    }
    fn free(&mut self, pool: usize, cells: u32) {
        self.freed.push((pool, cells));
    }
    fn end_tick(&mut self, t: u64) {
        let due = t + 1 + self.delay;
        for (pool, c) in self.freed.drain(..) {
            self.pending.push_back((due, pool, c));
        }
        while let Some(&(d, pool, c)) = self.pending.front() {
            if d > t + 1 {
                break;
            }
            self.reserved[pool] -= c;
            self.pending.pop_front();
        }
    }
}

/// Queues indexed `level * width + k`, strict priority by level, round
/// robin over `k` inside a level.
#[derive(Clone, Debug)]
pub(crate) struct Queues {
    width: usize,
    q: Vec<VecDeque<Pkt>>,
    busy: Vec<Vec<u64>>,
    ptr: Vec<usize>,
    pub(crate) stored: usize,
}

impl Queues {
    pub(crate) fn new(width: usize) -> Self {
        Queues {
            width,
            q: vec![VecDeque::new(); 8 * width],
            busy: vec![vec![0; width.div_ceil(64)]; 8],
            ptr: vec![0; 8],
            stored: 0,
        }
    }

    pub(crate) fn push(&mut self, sl: usize, k: usize, p: Pkt) {
        self.q[sl * self.width + k].push_back(p);
        self.busy[sl][k / 64] |= 1 << (k % 64);
        self.stored += 1;
    }

    pub(crate) fn pick(&mut self, can_go: &mut dyn FnMut(&Pkt) -> bool) -> Option<(usize, usize)> {
        for sl in 0..8 {
            let (q, w) = (&self.q, self.width);
            if let Some(k) = rr_pick(&self.busy[sl], w, self.ptr[sl], |k| {
                can_go(q[sl * w + k].front().expect("busy queue"))
            }) {
                self.ptr[sl] = if k + 1 == w { 0 } else { k + 1 };
                return Some((sl, k));
            }
        }
        None
    }

    pub(crate) fn pop(&mut self, sl: usize, k: usize) -> Pkt {
        let q = &mut self.q[sl * self.width + k];
        let p = q.pop_front().expect("picked queue");
        if q.is_empty() {
            self.busy[sl][k / 64] &= !(1 << (k % 64));
        }
        self.stored -= 1;
        p
    }
}

/// VOQ at network level with a VC per service level.
#[derive(Clone, Debug)]
pub struct VoqNet {
    qs: Queues,
    cr: Credits,
    /// Credits per (level, destination) queue, cells.
    pub credits: u32,
}

impl VoqNet {
    /// A port of a network of `endpoints`, `credits` cells per queue, seen
    /// `delay` ticks late.
    pub fn new(endpoints: usize, credits: u32, delay: u64) -> Self {
        VoqNet {
            qs: Queues::new(endpoints),
            cr: Credits::new(8 * endpoints, delay),
            credits,
        }
    }
}

impl PortEngine for VoqNet {
    fn accepts(&self, p: &Pkt) -> bool {
        let pool = p.sl as usize * self.qs.width + p.dst as usize;
        self.cr.reserved[pool] + p.cells as u32 <= self.credits
    }
    fn reserve(&mut self, p: &Pkt) {
        self.cr.reserved[p.sl as usize * self.qs.width + p.dst as usize] += p.cells as u32;
    }
    fn slot(
        &mut self,
        arrival: Option<(Pkt, u8)>,
        _ntf: Option<Ntf>,
        _rls: Option<Rls>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut {
        let mut out = SlotOut::default();
        if ready {
            if let Some((sl, k)) = self.qs.pick(can_go) {
                let p = self.qs.pop(sl, k);
                self.cr.free(sl * self.qs.width + k, p.cells as u32);
                out.sent = Some(p);
            }
        }
        if let Some((p, _)) = arrival {
            self.qs.push(p.sl as usize, p.dst as usize, p);
        }
        out
    }
    fn end_tick(&mut self, t: u64) {
        self.cr.end_tick(t);
    }
    fn packets(&self) -> usize {
        self.qs.stored
    }
}

/// VOQ at switch level with 8 VCs (one per service level).
#[derive(Clone, Debug)]
pub struct VoqSwitch {
    qs: Queues,
    cr: Credits,
    /// Credits per VC, cells.
    pub credits: u32,
    radix: usize,
}

impl VoqSwitch {
    /// A port of a switch of `radix` outputs, `credits` cells per VC, seen
    /// `delay` ticks late.
    pub fn new(radix: usize, credits: u32, delay: u64) -> Self {
        VoqSwitch {
            qs: Queues::new(radix),
            cr: Credits::new(8, delay),
            credits,
            radix,
        }
    }
}

impl PortEngine for VoqSwitch {
    fn accepts(&self, p: &Pkt) -> bool {
        self.cr.reserved[p.sl as usize] + p.cells as u32 <= self.credits
    }
    fn reserve(&mut self, p: &Pkt) {
        self.cr.reserved[p.sl as usize] += p.cells as u32;
    }
    fn slot(
        &mut self,
        arrival: Option<(Pkt, u8)>,
        _ntf: Option<Ntf>,
        _rls: Option<Rls>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut {
        let mut out = SlotOut::default();
        if ready {
            if let Some((sl, k)) = self.qs.pick(can_go) {
                let p = self.qs.pop(sl, k);
                self.cr.free(sl, p.cells as u32);
                out.sent = Some(p);
            }
        }
        if let Some((p, _)) = arrival {
            let o = p.route as usize & (self.radix - 1);
            self.qs.push(p.sl as usize, o, p);
        }
        out
    }
    fn end_tick(&mut self, t: u64) {
        self.cr.end_tick(t);
    }
    fn packets(&self) -> usize {
        self.qs.stored
    }
}

/// What a sender sees of a CAM line: (valid, route, hops, sl, xoff).
type LineView = (bool, u32, u8, u8, bool);

/// The RECN port block (model or RTL) as a switch port. The study keeps a
/// mirror of every queue's packets (the block stores only an 8-bit id): it
/// follows `in_queue_o` and `out_queue_o`, and checks the id of every
/// packet that leaves.
pub struct Recn<S> {
    blk: S,
    p: RecnPortParams,
    inp: RecnPortInputs,
    /// The last step's outputs, stepped into in place: a fresh outputs
    /// struct per step (its per-line vectors) was a third of a 128-end-point
    /// run's time in the allocator.
    out: RecnPortOutputs,
    mirror: Vec<VecDeque<Pkt>>,
    /// The CAM lines as the last step's registered outputs show them.
    cur: Vec<LineView>,
    /// ... and as the senders see them (`delay` ticks late).
    seen: Vec<LineView>,
    /// Detection queues holding `det_xoff` cells or more (last step; seen).
    det_full: (Vec<bool>, Vec<bool>),
    /// Changes on their way to the senders: (due tick, line or detection
    /// queue, new view).
    changes: VecDeque<(u64, Change)>,
    changed: Vec<Change>,
    /// Stop packets for a detection queue holding this many cells or more
    /// (0: no such rule).
    det_xoff: u16,
    /// The leaf rule releases unused lines by age: a valid line without a
    /// packet yet keeps the block clocked.
    aging: bool,
    sl_vc: u8,
    cr: Credits,
    /// Credits per VC, cells.
    pub credits: u32,
    stored: usize,
    /// The last step had idle inputs, sent nothing and had no line ageing:
    /// the block's state does not change in a further step with idle
    /// inputs, so it is skipped.
    quiet: bool,
    /// Skip quiet steps (off: every tick is a clock cycle).
    pub skip_quiet: bool,
    /// Clock cycles run.
    pub cycles: u64,
    /// Received notifications by action (`ntf_act_o` code).
    pub acts: [u64; 8],
    /// Packets sent from a SAQ.
    pub saq_sent: u64,
    /// Release messages that cleared a bit.
    pub rls_hits: u64,
}

#[derive(Clone, Copy, Debug)]
enum Change {
    Line(usize, LineView),
    Det(usize, bool),
}

impl<S: Stepper<RecnPort>> Recn<S> {
    /// The port around `blk` (in reset state, configured with `cfg`), seen
    /// by its senders `delay` ticks late; with `det_xoff`, packets are held
    /// back for a detection queue holding `cfg_xoff_i` cells or more.
    pub fn new(
        blk: S,
        p: RecnPortParams,
        cfg: &RecnPortConfig,
        delay: u64,
        det_xoff: bool,
    ) -> Self {
        let nd = 2 * p.d;
        Recn {
            blk,
            p,
            inp: RecnPortInputs::zero(&p),
            out: RecnPortOutputs::zero(&p),
            mirror: vec![VecDeque::new(); p.nq()],
            cur: vec![(false, 0, 0, 0, false); p.l()],
            seen: vec![(false, 0, 0, 0, false); p.l()],
            det_full: (vec![false; nd], vec![false; nd]),
            changes: VecDeque::new(),
            changed: Vec::new(),
            det_xoff: if det_xoff { cfg.cfg_xoff_i } else { 0 },
            aging: cfg.cfg_leaf_i && cfg.cfg_idle_i != 0,
            sl_vc: cfg.cfg_sl_vc_i,
            cr: Credits::new(2, delay),
            credits: p.c as u32 / 2,
            stored: 0,
            quiet: true,
            skip_quiet: true,
            cycles: 0,
            acts: [0; 8],
            saq_sent: 0,
            rls_hits: 0,
        }
    }

    fn vc(&self, sl: u8) -> usize {
        ((self.sl_vc >> sl) & 1) as usize
    }

    /// The CAM line (as the senders see it) a packet hits: the longest
    /// prefix.
    fn hit(&self, route: u32, sl: u8) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (j, &(v, r, h, s, _)) in self.seen.iter().enumerate() {
            if v && s == sl
                && (route as u64 ^ r as u64) & self.p.mask(h as u32) == 0
                && best.is_none_or(|b| h > self.seen[b].2)
            {
                best = Some(j);
            }
        }
        best
    }

    /// The block.
    pub fn block(&self) -> &S {
        &self.blk
    }
}

impl<S: Stepper<RecnPort>> PortEngine for Recn<S> {
    fn accepts(&self, p: &Pkt) -> bool {
        let vc = self.vc(p.sl);
        self.cr.reserved[vc] + p.cells as u32 <= self.credits
            && match self.hit(p.route, p.sl) {
                Some(j) => !self.seen[j].4,
                None => {
                    self.det_xoff == 0
                        || !self.det_full.1[vc * self.p.d + (p.route as usize & (self.p.d - 1))]
                }
            }
    }
    fn reserve(&mut self, p: &Pkt) {
        let v = self.vc(p.sl);
        self.cr.reserved[v] += p.cells as u32;
    }
    fn slot(
        &mut self,
        arrival: Option<(Pkt, u8)>,
        ntf: Option<Ntf>,
        rls: Option<Rls>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut {
        let mut any = false;
        for (q, m) in self.mirror.iter().enumerate() {
            // (Without `ready` the stops do not matter: nothing leaves.)
            let stop = ready && m.front().is_some_and(|h| !can_go(h));
            self.inp.stop_i[q] = stop;
            any |= !m.is_empty() && !stop;
        }
        let i = &mut self.inp;
        i.out_ready_i = ready && any;
        i.in_valid_i = arrival.is_some();
        if let Some((a, src)) = arrival {
            i.in_id_i = a.id as u8;
            i.in_sl_i = u3::new(a.sl);
            i.in_len_i = u5::new(a.cells - 1);
            i.in_route_i = a.route;
            i.in_src_i = src;
        } else {
            (i.in_id_i, i.in_sl_i, i.in_len_i, i.in_route_i, i.in_src_i) =
                (0, u3::new(0), u5::new(0), 0, 0);
        }
        i.ntf_valid_i = ntf.is_some();
        let n = ntf.unwrap_or(Ntf {
            vanish: false,
            route: 0,
            hops: 0,
            sl: 0,
        });
        (i.ntf_kind_i, i.ntf_route_i, i.ntf_hops_i, i.ntf_sl_i) =
            (n.vanish, n.route, n.hops, u3::new(n.sl));
        i.rls_valid_i = rls.is_some();
        let r = rls.unwrap_or(Rls { src: 0, ntf: n });
        (i.rls_src_i, i.rls_route_i, i.rls_hops_i, i.rls_sl_i) = if rls.is_some() {
            (r.src, r.ntf.route, r.ntf.hops, u3::new(r.ntf.sl))
        } else {
            (0, 0, 0, u3::new(0))
        };
        let idle = !i.in_valid_i && !i.ntf_valid_i && !i.rls_valid_i && !i.out_ready_i;
        if idle && self.quiet && self.skip_quiet {
            return SlotOut::default();
        }
        self.blk
            .step_into(&self.inp, &mut self.out)
            .unwrap_or_else(|e| panic!("RECN port, cycle {}: {e}", self.cycles));
        let o = &self.out;
        self.cycles += 1;
        self.acts[o.ntf_act_o.value() as usize] += 1;
        self.rls_hits += u64::from(o.rls_hit_o);
        let mut out = SlotOut::default();
        if o.out_valid_o {
            let q = o.out_queue_o as usize;
            let p = self.mirror[q]
                .pop_front()
                .expect("the block sent from an empty queue");
            assert_eq!(p.id as u8, o.out_id_o, "the block sent another packet");
            assert!(!self.inp.stop_i[q], "the block sent from a stopped queue");
            self.saq_sent += u64::from(self.p.queue_line(q).is_some());
            let v = self.vc(p.sl);
            self.cr.free(v, p.cells as u32);
            self.stored -= 1;
            out.sent = Some(p);
        }
        if let Some((a, _)) = arrival {
            assert!(o.in_ready_o, "a reserved arrival was refused");
            self.mirror[o.in_queue_o as usize].push_back(a);
            self.stored += 1;
        }
        if o.up_valid_o {
            out.up = Some((
                Ntf {
                    vanish: o.up_kind_o,
                    route: o.up_route_o,
                    hops: o.up_hops_o,
                    sl: o.up_sl_o.value(),
                },
                o.up_dst_o,
            ));
        }
        if o.dn_valid_o {
            out.dn = Some(Ntf {
                vanish: false,
                route: o.dn_route_o,
                hops: o.dn_hops_o,
                sl: o.dn_sl_o.value(),
            });
        }
        for j in 0..self.p.l() {
            let v = (
                o.cam_valid_o[j],
                o.cam_route_o[j],
                o.cam_hops_o[j],
                o.cam_sl_o[j],
                o.xoff_o[j],
            );
            if v != self.cur[j] {
                self.cur[j] = v;
                self.changed.push(Change::Line(j, v));
            }
        }
        if self.det_xoff != 0 {
            let qv = self.p.qv();
            for (k, f) in self.det_full.0.iter_mut().enumerate() {
                let full = o.occ_o[(k / self.p.d) * qv + k % self.p.d] >= self.det_xoff;
                if full != *f {
                    *f = full;
                    self.changed.push(Change::Det(k, full));
                }
            }
        }
        let ageing = self.aging && (0..self.p.l()).any(|j| o.cam_valid_o[j] && !o.cam_hold_o[j]);
        self.quiet = idle && !o.up_valid_o && !o.dn_valid_o && !ageing;
        out
    }
    fn end_tick(&mut self, t: u64) {
        self.cr.end_tick(t);
        let due = t + 1 + self.cr.delay;
        for c in self.changed.drain(..) {
            self.changes.push_back((due, c));
        }
        while let Some(&(d, c)) = self.changes.front() {
            if d > t + 1 {
                break;
            }
            match c {
                Change::Line(j, v) => self.seen[j] = v,
                Change::Det(k, f) => self.det_full.1[k] = f,
            }
            self.changes.pop_front();
        }
    }
    fn packets(&self) -> usize {
        self.stored
    }
    fn acts(&self) -> [u64; 8] {
        self.acts
    }
    fn rls_hits(&self) -> u64 {
        self.rls_hits
    }
    fn can_skip(&self) -> bool {
        self.quiet && self.skip_quiet
    }
}
