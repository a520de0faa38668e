//! The three switch-port architectures of the network study, behind one
//! [`PortEngine`] trait: a switch input port's queues, its scheduler and
//! the flow control its upstream sender sees.
//!
//! - [`VoqNet`]: VOQ at network level, a VC per service level: a queue per
//!   (level, destination end point), each with its own credits (2 maximum
//!   packets); strict priority by level, round robin over destinations.
//! - [`VoqSwitch`]: VOQ at switch level, 8 VCs: a queue per (level, output
//!   of this switch); per level a credit pool of an eighth of the port
//!   memory; strict priority by level, round robin over outputs.
//! - [`Recn`]: the RECN port of `docs/recn_port.md` (two VCs, detection
//!   queues, SAQs, CAM, notifications, Xon/Xoff), stepped through
//!   [`Stepper`]: the golden model ([`crate::bcn_loop::Model`]) or its RTL.
//!   Credits per VC: half the port memory each; a packet is not sent to
//!   this port while the SAQ it would enter is in Xoff, or, if it would
//!   enter a detection queue, while that queue holds `cfg_xoff_i` cells or
//!   more (the block has Xoff per SAQ only; without output buffers the root
//!   of a congestion tree is a detection queue of the last switch, which
//!   would otherwise take its VC's whole memory).
//!
//! Credits are returned without delay: a cell freed in slot `t` can be
//! reserved again from slot `t + 1` ([`PortEngine::end_slot`]).

use crate::bcn_loop::Stepper;
use arbitrary_int::{u3, u5};
use model::recn_port::{RecnPort, RecnPortConfig, RecnPortInputs, RecnPortParams};
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
    /// Remaining turnpool: bits `[TB-1:0]` are the next switch's output.
    pub route: u32,
}

/// A congestion (or vanish) notification, relative to the port it reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ntf {
    /// Vanish.
    pub vanish: bool,
    /// Route from the receiving port to the congested point.
    pub route: u32,
    /// Prefix length, hops.
    pub hops: u8,
    /// Service level.
    pub sl: u8,
}

/// What a port did in a slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotOut {
    /// The packet that left towards the crossbar.
    pub sent: Option<Pkt>,
    /// A notification for the upstream senders.
    pub up: Option<Ntf>,
}

/// One switch input port.
pub trait PortEngine {
    /// Whether the upstream sender may send `p` now (its route as seen
    /// here): credits, and (RECN) the Xoff of the SAQ it would enter.
    fn accepts(&self, p: &Pkt) -> bool;
    /// The sender sent `p`: its cells are reserved until it leaves.
    fn reserve(&mut self, p: &Pkt);
    /// One slot: `arrival` (already reserved) enters; if `ready`, at most
    /// one packet whose head may go (`can_go`) leaves; `ntf` is a
    /// notification from downstream.
    fn slot(
        &mut self,
        arrival: Option<Pkt>,
        ntf: Option<Ntf>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut;
    /// End of the slot: credits freed in it become visible.
    fn end_slot(&mut self);
    /// Packets stored.
    fn packets(&self) -> usize;
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

/// Queues indexed `level * width + k`, strict priority by level, round
/// robin over `k` inside a level; credits per pool.
#[derive(Clone, Debug)]
pub(crate) struct Queues {
    width: usize,
    q: Vec<VecDeque<Pkt>>,
    busy: Vec<Vec<u64>>,
    ptr: Vec<usize>,
    reserved: Vec<u32>,
    freed: Vec<(usize, u32)>,
    pub(crate) stored: usize,
}

impl Queues {
    pub(crate) fn new(width: usize, pools: usize) -> Self {
        Queues {
            width,
            q: vec![VecDeque::new(); 8 * width],
            busy: vec![vec![0; width.div_ceil(64)]; 8],
            ptr: vec![0; 8],
            reserved: vec![0; pools],
            freed: Vec::new(),
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

    pub(crate) fn pop(&mut self, sl: usize, k: usize, pool: Option<usize>) -> Pkt {
        let q = &mut self.q[sl * self.width + k];
        let p = q.pop_front().expect("picked queue");
        if q.is_empty() {
            self.busy[sl][k / 64] &= !(1 << (k % 64));
        }
        if let Some(pool) = pool {
            self.freed.push((pool, p.cells as u32));
        }
        self.stored -= 1;
        p
    }

    fn end_slot(&mut self) {
        for (pool, c) in self.freed.drain(..) {
            self.reserved[pool] -= c;
        }
    }
}

/// VOQ at network level with a VC per service level.
#[derive(Clone, Debug)]
pub struct VoqNet {
    qs: Queues,
    /// Credits per (level, destination) queue, cells.
    pub credits: u32,
}

impl VoqNet {
    /// A port of a network of `endpoints`, `credits` cells per queue.
    pub fn new(endpoints: usize, credits: u32) -> Self {
        VoqNet {
            qs: Queues::new(endpoints, 8 * endpoints),
            credits,
        }
    }
}

impl PortEngine for VoqNet {
    fn accepts(&self, p: &Pkt) -> bool {
        let pool = p.sl as usize * self.qs.width + p.dst as usize;
        self.qs.reserved[pool] + p.cells as u32 <= self.credits
    }
    fn reserve(&mut self, p: &Pkt) {
        self.qs.reserved[p.sl as usize * self.qs.width + p.dst as usize] += p.cells as u32;
    }
    fn slot(
        &mut self,
        arrival: Option<Pkt>,
        _ntf: Option<Ntf>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut {
        let mut out = SlotOut::default();
        if ready {
            if let Some((sl, k)) = self.qs.pick(can_go) {
                let pool = sl * self.qs.width + k;
                out.sent = Some(self.qs.pop(sl, k, Some(pool)));
            }
        }
        if let Some(p) = arrival {
            self.qs.push(p.sl as usize, p.dst as usize, p);
        }
        out
    }
    fn end_slot(&mut self) {
        self.qs.end_slot();
    }
    fn packets(&self) -> usize {
        self.qs.stored
    }
}

/// VOQ at switch level with 8 VCs (one per service level).
#[derive(Clone, Debug)]
pub struct VoqSwitch {
    qs: Queues,
    /// Credits per VC, cells.
    pub credits: u32,
    radix: usize,
}

impl VoqSwitch {
    /// A port of a switch of `radix` outputs, `credits` cells per VC.
    pub fn new(radix: usize, credits: u32) -> Self {
        VoqSwitch {
            qs: Queues::new(radix, 8),
            credits,
            radix,
        }
    }
}

impl PortEngine for VoqSwitch {
    fn accepts(&self, p: &Pkt) -> bool {
        self.qs.reserved[p.sl as usize] + p.cells as u32 <= self.credits
    }
    fn reserve(&mut self, p: &Pkt) {
        self.qs.reserved[p.sl as usize] += p.cells as u32;
    }
    fn slot(
        &mut self,
        arrival: Option<Pkt>,
        _ntf: Option<Ntf>,
        ready: bool,
        can_go: &mut dyn FnMut(&Pkt) -> bool,
    ) -> SlotOut {
        let mut out = SlotOut::default();
        if ready {
            if let Some((sl, k)) = self.qs.pick(can_go) {
                out.sent = Some(self.qs.pop(sl, k, Some(sl)));
            }
        }
        if let Some(p) = arrival {
            let o = p.route as usize & (self.radix - 1);
            self.qs.push(p.sl as usize, o, p);
        }
        out
    }
    fn end_slot(&mut self) {
        self.qs.end_slot();
    }
    fn packets(&self) -> usize {
        self.qs.stored
    }
}

/// The RECN port block (model or RTL) as a switch input port. The study
/// keeps a mirror of every queue's packets (the block stores only an 8-bit
/// id): it follows `in_queue_o` and `out_queue_o`, and checks the id of
/// every packet that leaves.
pub struct Recn<S> {
    blk: S,
    p: RecnPortParams,
    inp: RecnPortInputs,
    mirror: Vec<VecDeque<Pkt>>,
    /// The CAM and Xoff as the last step's registered outputs show them:
    /// (valid, route, hops, sl, xoff) per line.
    view: Vec<(bool, u32, u8, u8, bool)>,
    /// Occupancy of every queue, the last step's `occ_o`.
    occ: Vec<u16>,
    /// Stop packets for a detection queue holding this many cells or more.
    det_xoff: u16,
    sl_vc: u8,
    reserved: [u32; 2],
    freed: [u32; 2],
    /// Credits per VC, cells.
    pub credits: u32,
    stored: usize,
    /// The last step had idle inputs and sent no notification: the block's
    /// state does not change in a step with idle inputs, so it is skipped.
    quiet: bool,
    /// Skip quiet steps (off: every slot is a clock cycle).
    pub skip_quiet: bool,
    /// Clock cycles run.
    pub cycles: u64,
    /// Received notifications by action (`ntf_act_o` code).
    pub acts: [u64; 8],
    /// Packets sent from a SAQ.
    pub saq_sent: u64,
}

impl<S: Stepper<RecnPort>> Recn<S> {
    /// The port around `blk` (in reset state, configured with `cfg`).
    pub fn new(blk: S, p: RecnPortParams, cfg: &RecnPortConfig) -> Self {
        Recn {
            blk,
            p,
            inp: RecnPortInputs::zero(&p),
            mirror: vec![VecDeque::new(); p.nq()],
            view: vec![(false, 0, 0, 0, false); p.l()],
            occ: vec![0; p.nq()],
            det_xoff: cfg.cfg_xoff_i,
            sl_vc: cfg.cfg_sl_vc_i,
            reserved: [0; 2],
            freed: [0; 2],
            credits: p.c as u32 / 2,
            stored: 0,
            quiet: true,
            skip_quiet: true,
            cycles: 0,
            acts: [0; 8],
            saq_sent: 0,
        }
    }

    fn vc(&self, sl: u8) -> usize {
        ((self.sl_vc >> sl) & 1) as usize
    }

    /// The CAM line (of the view) a packet hits: the longest prefix.
    fn hit(&self, route: u32, sl: u8) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (j, &(v, r, h, s, _)) in self.view.iter().enumerate() {
            if v && s == sl
                && (route as u64 ^ r as u64) & self.p.mask(h as u32) == 0
                && best.is_none_or(|b| h > self.view[b].2)
            {
                best = Some(j);
            }
        }
        best
    }
}

impl<S: Stepper<RecnPort>> PortEngine for Recn<S> {
    fn accepts(&self, p: &Pkt) -> bool {
        let vc = self.vc(p.sl);
        self.reserved[vc] + p.cells as u32 <= self.credits
            && match self.hit(p.route, p.sl) {
                Some(j) => !self.view[j].4,
                None => {
                    let q = vc * self.p.qv() + (p.route as usize & (self.p.d - 1));
                    self.occ[q] < self.det_xoff
                }
            }
    }
    fn reserve(&mut self, p: &Pkt) {
        let v = self.vc(p.sl);
        self.reserved[v] += p.cells as u32;
    }
    fn slot(
        &mut self,
        arrival: Option<Pkt>,
        ntf: Option<Ntf>,
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
        if let Some(a) = arrival {
            i.in_id_i = a.id as u8;
            i.in_sl_i = u3::new(a.sl);
            i.in_len_i = u5::new(a.cells - 1);
            i.in_route_i = a.route;
        } else {
            (i.in_id_i, i.in_sl_i, i.in_len_i, i.in_route_i) = (0, u3::new(0), u5::new(0), 0);
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
        let idle = !i.in_valid_i && !i.ntf_valid_i && !i.out_ready_i;
        if idle && self.quiet && self.skip_quiet {
            return SlotOut::default();
        }
        let o = self
            .blk
            .step(&self.inp)
            .unwrap_or_else(|e| panic!("RECN port, cycle {}: {e}", self.cycles));
        self.cycles += 1;
        self.acts[o.ntf_act_o.value() as usize] += 1;
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
            self.freed[v] += p.cells as u32;
            self.stored -= 1;
            out.sent = Some(p);
        }
        if let Some(a) = arrival {
            assert!(o.in_ready_o, "a reserved arrival was refused");
            self.mirror[o.in_queue_o as usize].push_back(a);
            self.stored += 1;
        }
        if o.up_valid_o {
            out.up = Some(Ntf {
                vanish: o.up_kind_o,
                route: o.up_route_o,
                hops: o.up_hops_o,
                sl: o.up_sl_o.value(),
            });
        }
        for (j, v) in self.view.iter_mut().enumerate() {
            *v = (
                o.cam_valid_o[j],
                o.cam_route_o[j],
                o.cam_hops_o[j],
                o.cam_sl_o[j],
                o.xoff_o[j],
            );
        }
        self.occ.clone_from(&o.occ_o);
        self.quiet = idle && !o.up_valid_o;
        out
    }
    fn end_slot(&mut self) {
        for v in 0..2 {
            self.reserved[v] -= self.freed[v];
            self.freed[v] = 0;
        }
    }
    fn packets(&self) -> usize {
        self.stored
    }
}
