//! Slotted network simulation of seed 002's section 5: the paper's three
//! architectures on one folded butterfly and one traffic — VOQ at network
//! level with a VC per service level ([`arch::VoqNet`], the ideal), VOQ at
//! switch level with 8 VCs ([`arch::VoqSwitch`]) and RECN with 2 VCs
//! ([`arch::Recn`], whose ports are the `recn_port` block: its golden model
//! or, through [`crate::bcn_loop::Stepper`], its RTL).
//!
//! # Units and time
//!
//! A **slot** is one 64-byte cell time on an 8 Gb/s link (64 ns). Packets
//! are whole cells, 1..=32 (64 B to 2 KB); a packet of `c` cells occupies a
//! link for `c` slots. The crossbar runs `speedup` times faster: time
//! advances in **ticks** of `1 / speedup` slot, every port is clocked once a
//! tick, and a packet of `c` cells crosses the crossbar in `c` ticks.
//! Throughput is in cells per slot per end point (a fraction of a link),
//! latency in slots (multiply by 64 ns).
//!
//! # The system
//!
//! - **Network interfaces** ([`NicKind`]): per end point, unbounded queues,
//!   one per service level (the paper's interface has a VC per level), or,
//!   as an option, one per (level, destination) (no head-of-line blocking
//!   of its own). Each tick its injection link is free, the interface sends
//!   the head of the highest level the first switch port accepts (round
//!   robin over destinations in the second case). The same interface for
//!   all three architectures.
//! - **Switches** of radix `R` (a [`topology::Topology`]): `R` input ports
//!   and `R` output ports, each an [`arch::PortEngine`] of the
//!   architecture (the seed's switch buffers at its inputs and outputs, its
//!   output ports replicating the input structure, their queues keyed by
//!   the next switch's outputs). In a tick, the input ports of a switch are
//!   taken in turn from `t mod R`: one may send a packet when its crossbar
//!   path is free, to an output port whose crossbar input is free and that
//!   accepts it (credits, Xoff); both are then busy for `c` ticks. Then the
//!   output ports, in turn from `t mod R`: one may send when its link is
//!   free and the next input port (or the end point) accepts the packet.
//! - **Links** are store and forward with a propagation delay of
//!   `link_delay` slots: a packet of `c` cells sent at tick `t` enters the
//!   next port (or reaches its end point) at `t + (c + link_delay) speedup`.
//!   Credits are reserved when a packet is sent and returned when it leaves
//!   the next port; they, and every other state a sender reads of a port
//!   across a link (RECN's CAM lines and Xoff), reach it `link_delay` slots
//!   later; inside a switch, the next tick.
//! - **Notifications** (RECN) go to the port that sent the packet that
//!   detected congestion (seed 2.1): from an input port to the output port
//!   of the upstream switch (same route, `link_delay` slots later; from a
//!   leaf's input port to the end point's interface, which keeps no CAM and
//!   refuses it), from an output port to the input port of its own switch
//!   the packet came from, with the output's turn prepended (one hop more;
//!   beyond the turnpool's hops it is refused). **Release messages**
//!   (RECN's leaf rule: a released leaf SAQ, or a refused notification)
//!   go the other way, downstream to the port that notified. Each port
//!   takes one notification and one release message a tick, in the order
//!   they become due.
//!
//! Order in a tick: births at the interfaces (on the first tick of a slot);
//! the switches in index order (input ports, then output ports); the
//! interfaces' injections; then every port's end of tick (credits and views
//! freed in it start on their way).
//!
//! # Measurement
//!
//! After `warmup` slots, `slots` measured slots: throughput counts the cells
//! delivered in them; latency (birth at the interface to the last cell at
//! the end point, source queueing included) the packets born in them and
//! delivered by the end of the run; out-of-order deliveries the packets
//! delivered in them after a later-born packet of their flow (source,
//! destination, level).

pub mod arch;
pub mod topology;
pub mod traffic;

use arch::{Ntf, Pkt, PortEngine, Rls, SlotOut};
use std::collections::VecDeque;
use topology::{Peer, Topology};
use traffic::{Birth, Pattern, Traffic, SLS};

/// The three architectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// VOQ at network level, a VC per level (the ideal).
    VoqNet,
    /// VOQ at switch level, 8 VCs.
    VoqSwitch,
    /// RECN, 2 VCs (the `recn_port` block).
    Recn,
}

impl Arch {
    /// All three, in the paper's order.
    pub const ALL: [Arch; 3] = [Arch::VoqNet, Arch::VoqSwitch, Arch::Recn];
    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Arch::VoqNet => "VOQ Net",
            Arch::VoqSwitch => "VOQ Switch",
            Arch::Recn => "RECN 2 VCs",
        }
    }
}

/// The network interfaces' queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NicKind {
    /// One queue per service level (the paper's: a VC per level).
    PerSl,
    /// One queue per (level, destination): no head-of-line blocking at the
    /// interface.
    PerDest,
}

/// How RECN gives SAQs back (`cfg_leaf_i` of `recn_port`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Release {
    /// RECN's: a leaf SAQ is released when it empties and tells downstream.
    Leaf,
    /// Vanish notifications from the root mark lines gone.
    Root,
}

/// A network run's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Down ports per switch below the top (radix `2k`).
    pub k: usize,
    /// Stages.
    pub stages: usize,
    /// Input load per end point (fraction of a link), split equally over
    /// the 8 levels.
    pub load: f64,
    /// Destinations.
    pub pattern: Pattern,
    /// One end point in this many is a hot source of the hot spot (and not
    /// a victim, under any pattern).
    pub hot_every: usize,
    /// Largest packet, cells.
    pub max_cells: usize,
    /// Best-effort and QoS burst sizes, cells.
    pub bursts: (u32, u32),
    /// Port memory, cells (the RECN block's `C`; VOQ Switch gets an eighth
    /// per VC).
    pub mem_cells: usize,
    /// Crossbar speed-up: ticks per slot.
    pub speedup: u32,
    /// Propagation delay of a link (data, credits, notifications, Xoff),
    /// slots.
    pub link_delay: u64,
    /// The interfaces' queues.
    pub nic: NicKind,
    /// RECN: SAQs per VC.
    pub saqs: usize,
    /// RECN: the release rule.
    pub release: Release,
    /// RECN: in-order markers.
    pub markers: bool,
    /// RECN: hold packets back for a detection queue holding `cfg_xoff_i`
    /// cells or more downstream (not the paper's; off by default).
    pub det_xoff: bool,
    /// Unmeasured slots first.
    pub warmup: u64,
    /// Measured slots.
    pub slots: u64,
    /// Traffic seed.
    pub seed: u64,
    /// Keep the delivery log.
    pub trace: bool,
}

impl Config {
    /// The paper's network: 128 end points (8-port switches, 3 stages),
    /// 2 KB packets, 30 KB and 5 KB bursts, 32 KB per port, 8 SAQs per VC.
    pub fn paper(load: f64) -> Self {
        Config {
            k: 4,
            stages: 3,
            load,
            pattern: Pattern::Uniform,
            hot_every: 8,
            max_cells: 32,
            bursts: (480, 80),
            mem_cells: 512,
            speedup: 2,
            link_delay: 2,
            nic: NicKind::PerSl,
            saqs: 8,
            release: Release::Leaf,
            markers: true,
            det_xoff: false,
            warmup: 4_000,
            slots: 12_000,
            seed: 1,
            trace: false,
        }
    }

    /// A 16-end-point network of 4-port switches (3 stages) that fits the
    /// default `recn_port` variant (64 cells, 2 SAQs per VC): packets of up
    /// to 8 cells, one hot source in 4.
    pub fn small(load: f64) -> Self {
        Config {
            k: 2,
            stages: 3,
            hot_every: 4,
            max_cells: 8,
            bursts: (120, 20),
            mem_cells: 64,
            saqs: 2,
            warmup: 1_000,
            slots: 4_000,
            ..Config::paper(load)
        }
    }

    /// The topology.
    pub fn topology(&self) -> Topology {
        Topology::new(self.k, self.stages)
    }

    /// Slots run after the measured ones, for the latency of the packets
    /// born last: 100 maximum packets.
    pub fn tail(&self) -> u64 {
        100 * self.max_cells as u64
    }
}

/// One delivered packet (the delivery log).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// Tick its last cell reached the end point.
    pub t: u64,
    /// The packet (route as it left the last switch).
    pub pkt: Pkt,
}

/// Measured figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// End points.
    pub endpoints: usize,
    /// Measured slots.
    pub slots: u64,
    /// Cells born in the window, per level.
    pub offered: [u64; SLS],
    /// Cells delivered in the window, per level.
    pub delivered: [u64; SLS],
    /// Packets born in the window and delivered, per level.
    pub lat_n: [u64; SLS],
    /// Their summed latency, slots.
    pub lat_sum: [u64; SLS],
    /// Their largest latency, slots.
    pub lat_max: [u64; SLS],
    /// Best-effort cells delivered in the window from victim sources (not
    /// hot sources of the hot spot, whatever the pattern).
    pub victim_delivered: u64,
    /// Best-effort cells born in the window at victim sources.
    pub victim_offered: u64,
    /// Packets delivered in the window (every level).
    pub pkts: u64,
    /// ... of them after a later-born packet of their flow.
    pub out_of_order: u64,
    /// Notifications delivered to ports.
    pub ntf_sent: u64,
    /// Notifications to an interface (refused: it keeps no CAM).
    pub ntf_nic: u64,
    /// Notifications beyond the turnpool's hops (refused).
    pub ntf_beyond: u64,
    /// Release messages delivered to ports (releases and refusals).
    pub rls_sent: u64,
    /// Release messages that cleared a notified bit.
    pub rls_hits: u64,
    /// Received notifications by action, every port (`ntf_act_o` codes:
    /// 1 ignore, 2 alloc, 3 refresh, 4 drop, 5 gone).
    pub acts: [u64; 8],
    /// Packets born (whole run).
    pub born: u64,
    /// Packets delivered (whole run).
    pub done: u64,
}

impl Stats {
    fn per_slot(&self, cells: u64) -> f64 {
        cells as f64 / (self.endpoints as f64 * self.slots as f64)
    }
    /// Throughput of level `sl`, cells per slot per end point.
    pub fn throughput(&self, sl: usize) -> f64 {
        self.per_slot(self.delivered[sl])
    }
    /// Offered load of level `sl`, cells per slot per end point.
    pub fn offered(&self, sl: usize) -> f64 {
        self.per_slot(self.offered[sl])
    }
    /// Best-effort (levels 4-7) throughput.
    pub fn be_throughput(&self) -> f64 {
        (4..8).map(|s| self.throughput(s)).sum()
    }
    /// Best-effort offered load.
    pub fn be_offered(&self) -> f64 {
        (4..8).map(|s| self.offered(s)).sum()
    }
    /// QoS (levels 0-3) throughput over offered.
    pub fn qos_ratio(&self) -> f64 {
        let d: u64 = self.delivered[..4].iter().sum();
        let o: u64 = self.offered[..4].iter().sum();
        d as f64 / o.max(1) as f64
    }
    /// Best-effort throughput over offered.
    pub fn be_ratio(&self) -> f64 {
        self.be_throughput() / self.be_offered().max(f64::MIN_POSITIVE)
    }
    /// Mean latency of level `sl`, slots.
    pub fn mean_latency(&self, sl: usize) -> f64 {
        self.lat_sum[sl] as f64 / self.lat_n[sl].max(1) as f64
    }
    /// Victims' best-effort throughput over their offered load.
    pub fn victim_ratio(&self) -> f64 {
        self.victim_delivered as f64 / self.victim_offered.max(1) as f64
    }
    /// Share of the packets delivered in the window that came out of order.
    pub fn out_of_order_share(&self) -> f64 {
        self.out_of_order as f64 / self.pkts.max(1) as f64
    }
    /// Congestion notifications dropped for want of a CAM line, over those
    /// received (allocated, refreshed or dropped).
    pub fn drop_share(&self) -> f64 {
        let c = self.acts[2] + self.acts[3] + self.acts[4];
        self.acts[4] as f64 / c.max(1) as f64
    }
}

/// Which side of a switch a port is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// An input port (its senders: the link from upstream).
    In,
    /// An output port (its senders: its switch's input ports).
    Out,
}

/// The network around ports of type `E`.
pub struct Network<E> {
    cfg: Config,
    topo: Topology,
    traffic: Traffic,
    /// Ticks per slot, link propagation in ticks.
    sp: u64,
    lt: u64,
    inp: Vec<Option<E>>,
    outp: Vec<Option<E>>,
    /// Per output port: its link is free from this tick.
    link_free: Vec<u64>,
    /// Per input port: its crossbar path is free from this tick.
    xin_free: Vec<u64>,
    /// Per output port: its crossbar input is free from this tick.
    xout_free: Vec<u64>,
    /// Per input port: packets on its incoming link (arrival tick).
    in_link: Vec<VecDeque<(u64, Pkt)>>,
    /// Per output port: packets crossing the crossbar (arrival tick, the
    /// input port they come from).
    in_xbar: Vec<VecDeque<(u64, Pkt, u8)>>,
    /// Notifications and release messages waiting, per input port and per
    /// output port (due tick).
    ntf_in: Vec<VecDeque<(u64, Ntf)>>,
    ntf_out: Vec<VecDeque<(u64, Ntf)>>,
    rls_in: Vec<VecDeque<(u64, Rls)>>,
    rls_out: Vec<VecDeque<(u64, Rls)>>,
    /// Per end point: its interface queues and injection link.
    nics: Vec<Nic>,
    /// Per flow (source, destination, level): one more than the id of the
    /// last packet delivered (0: none yet).
    last: Vec<u32>,
    /// Turnpool hops a notification may carry (the block's `H`).
    max_hops: u32,
    t: u64,
    next_id: u32,
    births: Vec<Birth>,
    stats: Stats,
    deliveries: Vec<Delivery>,
    hash: u64,
}

struct Nic {
    q: arch::Queues,
    per_dest: bool,
    free: u64,
}

fn fnv(h: &mut u64, x: u64) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

/// Inserts `x` due at `due` into `q`, kept in due order (equal dues in
/// arrival order).
fn push_due<T>(q: &mut VecDeque<(u64, T)>, due: u64, x: T) {
    let at = q.iter().rposition(|e| e.0 <= due).map_or(0, |k| k + 1);
    q.insert(at, (due, x));
}

/// Pops the front of `q` if it is due at `t`.
fn pop_due<T: Copy>(q: &mut VecDeque<(u64, T)>, t: u64) -> Option<T> {
    match q.front() {
        Some(&(d, x)) if d <= t => {
            q.pop_front();
            Some(x)
        }
        _ => None,
    }
}

impl<E: PortEngine> Network<E> {
    /// The network of `cfg`; port `i` (`sw * R + port`) of side `s` made
    /// by `port(i, s, delay)` (`delay`: the ticks its senders see it late);
    /// notifications beyond `max_hops` hops are refused.
    pub fn new(cfg: Config, max_hops: u32, mut port: impl FnMut(usize, Side, u64) -> E) -> Self {
        let topo = cfg.topology();
        let np = topo.switches() * topo.radix;
        let n = topo.endpoints;
        let sp = cfg.speedup.max(1) as u64;
        let lt = cfg.link_delay * sp;
        let traffic = Traffic::new(
            n,
            cfg.load,
            cfg.max_cells,
            cfg.bursts,
            cfg.pattern,
            cfg.hot_every,
            cfg.seed,
        );
        let per_dest = cfg.nic == NicKind::PerDest;
        Network {
            traffic,
            sp,
            lt,
            inp: (0..np).map(|i| Some(port(i, Side::In, lt))).collect(),
            outp: (0..np).map(|i| Some(port(i, Side::Out, 0))).collect(),
            link_free: vec![0; np],
            xin_free: vec![0; np],
            xout_free: vec![0; np],
            in_link: vec![VecDeque::new(); np],
            in_xbar: vec![VecDeque::new(); np],
            ntf_in: vec![VecDeque::new(); np],
            ntf_out: vec![VecDeque::new(); np],
            rls_in: vec![VecDeque::new(); np],
            rls_out: vec![VecDeque::new(); np],
            nics: (0..n)
                .map(|_| Nic {
                    q: arch::Queues::new(if per_dest { n } else { 1 }),
                    per_dest,
                    free: 0,
                })
                .collect(),
            last: vec![0; n * n * SLS],
            max_hops,
            t: 0,
            next_id: 0,
            births: Vec::new(),
            stats: Stats {
                endpoints: n,
                slots: cfg.slots,
                ..Stats::default()
            },
            deliveries: Vec::new(),
            hash: 0xcbf2_9ce4_8422_2325,
            topo,
            cfg,
        }
    }

    /// The measured figures.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The delivery log (with [`Config::trace`]).
    pub fn deliveries(&self) -> &[Delivery] {
        &self.deliveries
    }
    /// A hash of every delivery (tick, packet), in order.
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    /// Every port: the input ports (`sw * R + port`), then the output ports.
    pub fn ports(&self) -> impl Iterator<Item = &E> {
        self.inp
            .iter()
            .chain(&self.outp)
            .map(|p| p.as_ref().expect("port in place"))
    }
    /// Every port, mutable.
    pub fn ports_mut(&mut self) -> impl Iterator<Item = &mut E> {
        self.inp
            .iter_mut()
            .chain(&mut self.outp)
            .map(|p| p.as_mut().expect("port in place"))
    }
    /// Packets born and not yet delivered: in interfaces, ports, links and
    /// the crossbars.
    pub fn in_network(&self) -> (u64, u64, u64) {
        let nic: usize = self.nics.iter().map(|n| n.q.stored).sum();
        let ports: usize = self.ports().map(|p| p.packets()).sum();
        let links: usize = self
            .in_link
            .iter()
            .map(|x| x.len())
            .chain(self.in_xbar.iter().map(|x| x.len()))
            .sum();
        (nic as u64, ports as u64, links as u64)
    }
    /// The current tick.
    pub fn now(&self) -> u64 {
        self.t
    }

    fn in_window(&self, slot: u64) -> bool {
        slot >= self.cfg.warmup && slot < self.cfg.warmup + self.cfg.slots
    }

    /// Runs the warm-up and the measured slots, then `tail` slots more for
    /// the latency of the last packets born in the window; then sums the
    /// ports' notification counters into the statistics.
    pub fn run(&mut self, tail: u64) {
        let end = (self.cfg.warmup + self.cfg.slots + tail) * self.sp;
        while self.t < end {
            self.step();
        }
        let mut acts = [0u64; 8];
        let mut hits = 0;
        for p in self.ports() {
            for (a, x) in acts.iter_mut().zip(p.acts()) {
                *a += x;
            }
            hits += p.rls_hits();
        }
        // (Code 0, no notification, counts the clocked cycles: not a
        // figure of the network.)
        acts[0] = 0;
        self.stats.acts = acts;
        self.stats.rls_hits = hits;
    }

    fn deliver(&mut self, t: u64, p: Pkt) {
        self.stats.done += 1;
        let sl = p.sl as usize;
        let slot = t / self.sp;
        let f = (p.src as usize * self.topo.endpoints + p.dst as usize) * SLS + sl;
        let late = p.id < self.last[f];
        self.last[f] = self.last[f].max(p.id + 1);
        if self.in_window(slot) {
            self.stats.delivered[sl] += p.cells as u64;
            self.stats.pkts += 1;
            self.stats.out_of_order += u64::from(late);
            if sl >= 4 && self.traffic.is_victim(p.src as usize) {
                self.stats.victim_delivered += p.cells as u64;
            }
        }
        if self.in_window(p.born) {
            let lat = slot - p.born;
            self.stats.lat_n[sl] += 1;
            self.stats.lat_sum[sl] += lat;
            self.stats.lat_max[sl] = self.stats.lat_max[sl].max(lat);
        }
        fnv(&mut self.hash, t);
        fnv(&mut self.hash, p.id as u64);
        if self.cfg.trace {
            self.deliveries.push(Delivery { t, pkt: p });
        }
    }

    /// Whether input port `i` of switch `sw` may send `p` across the
    /// crossbar now.
    fn can_cross(&self, sw: usize, p: &Pkt) -> bool {
        let r = self.topo.radix;
        let o = sw * r + (p.route as usize & (r - 1));
        if self.xout_free[o] > self.t {
            return false;
        }
        let mut q = *p;
        q.route >>= self.topo.tb;
        self.outp[o].as_ref().expect("output port").accepts(&q)
    }

    /// Whether output port `o` of switch `sw` may send `p` on its link now.
    fn can_leave(&self, sw: usize, o: usize, p: &Pkt) -> bool {
        match self.topo.peers[sw][o] {
            Peer::Endpoint(_) => true,
            Peer::Switch { sw: s2, port } => self.inp[s2 * self.topo.radix + port]
                .as_ref()
                .expect("input port")
                .accepts(p),
            Peer::None => false,
        }
    }

    /// One tick.
    pub fn step(&mut self) {
        let t = self.t;
        let n = self.topo.endpoints;
        let r = self.topo.radix;
        let tb = self.topo.tb;
        let sp = self.sp;

        // 1. Births, on the first tick of a slot.
        if t.is_multiple_of(sp) {
            let slot = t / sp;
            for e in 0..n {
                let mut b = std::mem::take(&mut self.births);
                b.clear();
                self.traffic.births(e, slot, &mut b);
                for x in &b {
                    let (route, _) = self.topo.route(e, x.dst);
                    let p = Pkt {
                        id: self.next_id,
                        src: e as u16,
                        dst: x.dst as u16,
                        sl: x.sl,
                        cells: x.cells,
                        born: slot,
                        route,
                    };
                    self.next_id += 1;
                    self.stats.born += 1;
                    if self.in_window(slot) {
                        self.stats.offered[x.sl as usize] += x.cells as u64;
                        if x.sl >= 4 && self.traffic.is_victim(e) {
                            self.stats.victim_offered += x.cells as u64;
                        }
                    }
                    let nic = &mut self.nics[e];
                    let k = if nic.per_dest { x.dst } else { 0 };
                    nic.q.push(x.sl as usize, k, p);
                }
                self.births = b;
            }
        }

        // 2. Switches: input ports, then output ports.
        for sw in 0..self.topo.switches() {
            for k in 0..r {
                let port = (t as usize + k) % r;
                let i = sw * r + port;
                let arrival = pop_due(&mut self.in_link[i], t).map(|p| (p, 0u8));
                let ntf = pop_due(&mut self.ntf_in[i], t);
                let rls = pop_due(&mut self.rls_in[i], t);
                let ready = self.xin_free[i] <= t;
                if arrival.is_none() && ntf.is_none() && rls.is_none() {
                    let e = self.inp[i].as_ref().expect("port in place");
                    if e.packets() == 0 && e.can_skip() {
                        continue;
                    }
                }
                let mut e = self.inp[i].take().expect("port in place");
                let out: SlotOut = {
                    let me = &*self;
                    e.slot(arrival, ntf, rls, ready, &mut |p| me.can_cross(sw, p))
                };
                self.inp[i] = Some(e);
                if let Some(p) = out.sent {
                    let o = sw * r + (p.route as usize & (r - 1));
                    let c = p.cells as u64;
                    self.xin_free[i] = t + c;
                    self.xout_free[o] = t + c;
                    let mut q = p;
                    q.route >>= tb;
                    self.outp[o].as_mut().expect("output port").reserve(&q);
                    self.in_xbar[o].push_back((t + c, q, port as u8));
                }
                if let Some((nt, _)) = out.up {
                    self.notify_from_input(sw, port, nt);
                }
                if let Some(d) = out.dn {
                    self.release_from_input(sw, port, d);
                }
            }
            for k in 0..r {
                let port = (t as usize + k) % r;
                let o = sw * r + port;
                let arrival = match self.in_xbar[o].front() {
                    Some(&(at, p, src)) if at <= t => {
                        self.in_xbar[o].pop_front();
                        Some((p, src))
                    }
                    _ => None,
                };
                let ntf = pop_due(&mut self.ntf_out[o], t);
                let rls = pop_due(&mut self.rls_out[o], t);
                let ready = self.link_free[o] <= t;
                if arrival.is_none() && ntf.is_none() && rls.is_none() {
                    let e = self.outp[o].as_ref().expect("port in place");
                    if e.packets() == 0 && e.can_skip() {
                        continue;
                    }
                }
                let mut e = self.outp[o].take().expect("port in place");
                let out: SlotOut = {
                    let me = &*self;
                    e.slot(arrival, ntf, rls, ready, &mut |p| me.can_leave(sw, port, p))
                };
                self.outp[o] = Some(e);
                if let Some(p) = out.sent {
                    let c = p.cells as u64;
                    self.link_free[o] = t + c * sp;
                    let at = t + c * sp + self.lt;
                    match self.topo.peers[sw][port] {
                        Peer::Endpoint(_) => self.deliver(at, p),
                        Peer::Switch { sw: s2, port: p2 } => {
                            let j = s2 * r + p2;
                            self.inp[j].as_mut().expect("port").reserve(&p);
                            self.in_link[j].push_back((at, p));
                        }
                        Peer::None => unreachable!("route to an unconnected port"),
                    }
                }
                if let Some((nt, dst)) = out.up {
                    self.notify_from_output(sw, port, nt, dst);
                }
                if let Some(d) = out.dn {
                    self.release_from_output(sw, port, d);
                }
            }
        }

        // 3. Interfaces.
        for e in 0..n {
            if self.nics[e].free > t {
                continue;
            }
            let (lsw, lport) = self.topo.leaf(e);
            let li = lsw * r + lport;
            let leaf = self.inp[li].as_ref().expect("leaf port");
            let nic = &mut self.nics[e];
            if let Some((sl, d)) = nic.q.pick(&mut |p| leaf.accepts(p)) {
                let p = nic.q.pop(sl, d);
                let c = p.cells as u64;
                nic.free = t + c * sp;
                self.inp[li].as_mut().expect("leaf port").reserve(&p);
                self.in_link[li].push_back((t + c * sp + self.lt, p));
            }
        }

        // 4. End of tick.
        for p in self.ports_mut() {
            p.end_tick(t);
        }
        self.t += 1;
    }

    /// Refuses notification `nt` on behalf of the port it was meant for:
    /// a release message back to the notifier (input port `i` or output
    /// port `o`) from sender `src`, `delay` ticks later.
    fn refuse(&mut self, at_input: bool, i: usize, src: u8, nt: Ntf, delay: u64) {
        if self.cfg.release != Release::Leaf {
            return;
        }
        let q = if at_input {
            &mut self.rls_in[i]
        } else {
            &mut self.rls_out[i]
        };
        push_due(q, self.t + 1 + delay, Rls { src, ntf: nt });
    }

    /// A notification of input port `port` of switch `sw`: to the output
    /// port upstream (the same route), or refused by an interface.
    fn notify_from_input(&mut self, sw: usize, port: usize, nt: Ntf) {
        let r = self.topo.radix;
        match self.topo.peers[sw][port] {
            Peer::Switch { sw: us, port: uo } => {
                self.stats.ntf_sent += 1;
                push_due(&mut self.ntf_out[us * r + uo], self.t + 1 + self.lt, nt);
            }
            _ => {
                self.stats.ntf_nic += 1;
                self.refuse(true, sw * r + port, 0, nt, 2 * self.lt);
            }
        }
    }

    /// A notification of output port `o` of switch `sw` for its input port
    /// `dst`, with the output's turn prepended.
    fn notify_from_output(&mut self, sw: usize, o: usize, nt: Ntf, dst: u8) {
        let r = self.topo.radix;
        if nt.hops as u32 + 1 > self.max_hops {
            self.stats.ntf_beyond += 1;
            self.refuse(false, sw * r + o, dst, nt, 0);
            return;
        }
        let up = Ntf {
            route: o as u32 | (nt.route << self.topo.tb),
            hops: nt.hops + 1,
            ..nt
        };
        self.stats.ntf_sent += 1;
        push_due(&mut self.ntf_in[sw * r + dst as usize], self.t + 1, up);
    }

    /// A release message of input port `port` of switch `sw`: to the output
    /// port its route's first turn names, that turn taken off.
    fn release_from_input(&mut self, sw: usize, port: usize, d: Ntf) {
        let r = self.topo.radix;
        // An input port's lines all come from its own switch's output
        // ports, one hop more (at least 2).
        assert!(
            d.hops >= 2,
            "release of a {}-hop point at an input port",
            d.hops
        );
        let o = d.route as usize & (r - 1);
        let m = Ntf {
            route: d.route >> self.topo.tb,
            hops: d.hops - 1,
            ..d
        };
        self.stats.rls_sent += 1;
        push_due(
            &mut self.rls_out[sw * r + o],
            self.t + 1,
            Rls {
                src: port as u8,
                ntf: m,
            },
        );
    }

    /// A release message of output port `o` of switch `sw`: across its link
    /// to the input port that notified it.
    fn release_from_output(&mut self, sw: usize, o: usize, d: Ntf) {
        let r = self.topo.radix;
        if let Peer::Switch { sw: s2, port: p2 } = self.topo.peers[sw][o] {
            self.stats.rls_sent += 1;
            push_due(
                &mut self.rls_in[s2 * r + p2],
                self.t + 1 + self.lt,
                Rls { src: 0, ntf: d },
            );
        }
    }
}

/// The `recn_port` variant and configuration of a network: `D` = the
/// switch radix, `S` = [`Config::saqs`], `C` = [`Config::mem_cells`], the
/// turnpool of the smallest verilated variant of those that holds the
/// longest route (else 32 bits, for the model only); the thresholds are the
/// block's default ratios of a VC's half of the memory (the credits of a
/// VC); the release rule and markers of `cfg`; unused lines released after
/// 4 maximum packet times.
pub fn recn_setup(
    cfg: &Config,
) -> (
    model::recn_port::RecnPortParams,
    model::recn_port::RecnPortConfig,
) {
    use model::recn_port::{RecnPort, RecnPortParams};
    use model::Block;
    let topo = cfg.topology();
    let p = RecnPort::variants()
        .into_iter()
        .filter(|v| {
            v.d == topo.radix
                && v.s == cfg.saqs
                && v.c == cfg.mem_cells
                && v.rw >= topo.route_bits()
        })
        .min_by_key(|v| v.rw)
        .unwrap_or(RecnPortParams {
            d: topo.radix,
            s: cfg.saqs,
            c: cfg.mem_cells,
            rw: 32,
        });
    // The block's default ratios (detection at 1/8, vanish below 1/32,
    // Xoff at 1/4, Xon at 1/16) of a VC's share of the memory.
    let mut c = RecnPort::default_config(&p);
    let vc = (p.c / 2) as u16;
    c.cfg_det_thr_i = vc / 8;
    c.cfg_rel_thr_i = (vc / 32).max(1);
    c.cfg_xoff_i = vc / 4;
    c.cfg_xon_i = vc / 16;
    c.cfg_leaf_i = cfg.release == Release::Leaf;
    c.cfg_order_i = cfg.markers;
    // A line whose SAQ gets no packet goes after 4 maximum packet times
    // (in ticks, at most 255): its sender had time to send one.
    c.cfg_idle_i = (4 * cfg.max_cells as u64 * cfg.speedup.max(1) as u64).min(255) as u8;
    (p, c)
}

/// Runs `cfg` on architecture `arch` (RECN on the golden model).
pub fn run(cfg: &Config, arch: Arch) -> Stats {
    let topo = cfg.topology();
    let tail = cfg.tail();
    match arch {
        Arch::VoqNet => {
            let credits = 2 * cfg.max_cells as u32;
            let mut net = Network::new(cfg.clone(), 32, |_, _, delay| {
                arch::VoqNet::new(topo.endpoints, credits, delay)
            });
            net.run(tail);
            net.stats().clone()
        }
        Arch::VoqSwitch => {
            let credits = cfg.mem_cells as u32 / 8;
            let mut net = Network::new(cfg.clone(), 32, |_, _, delay| {
                arch::VoqSwitch::new(topo.radix, credits, delay)
            });
            net.run(tail);
            net.stats().clone()
        }
        Arch::Recn => {
            let mut net = model_recn_network(cfg.clone());
            net.run(tail);
            net.stats().clone()
        }
    }
}

/// The RECN network on the golden model.
pub type ModelRecn = arch::Recn<crate::bcn_loop::Model<model::recn_port::RecnPort>>;

/// The RECN network of `cfg` on ports `make(i)` (each a `recn_port` of
/// [`recn_setup`]'s variant and configuration, in reset state; `i` counts
/// the input ports, then the output ports).
pub fn recn_network_with<S: crate::bcn_loop::Stepper<model::recn_port::RecnPort>>(
    cfg: Config,
    mut make: impl FnMut(usize) -> S,
) -> Network<arch::Recn<S>> {
    let (p, c) = recn_setup(&cfg);
    let det_xoff = cfg.det_xoff;
    let np = cfg.topology().switches() * cfg.topology().radix;
    Network::new(cfg, p.h(), |i, side, delay| {
        let k = if side == Side::In { i } else { np + i };
        arch::Recn::new(make(k), p, &c, delay, det_xoff)
    })
}

/// The RECN network of `cfg` on the golden model.
pub fn model_recn_network(cfg: Config) -> Network<ModelRecn> {
    use model::Block;
    let (p, c) = recn_setup(&cfg);
    recn_network_with(cfg, |_| {
        crate::bcn_loop::Model(model::recn_port::RecnPort::new(&p, &c))
    })
}

/// The victim flows (source, destination) of the hot spot of `cfg` (a
/// victim source to any other end point but the hot destination), and how
/// many of them share a link (a switch's output link, in the same
/// direction, or an injection link) with a hot flow.
pub fn victims_sharing_links(cfg: &Config) -> (usize, usize) {
    let topo = cfg.topology();
    let n = topo.endpoints;
    let hot_dst = n - 1;
    let hot = |e: usize| traffic::hot_source(e, cfg.hot_every, n);
    let mut hot_links = std::collections::HashSet::new();
    for s in (0..n).filter(|&s| hot(s)) {
        hot_links.extend(topo.links(s, hot_dst));
    }
    let (mut total, mut sharing) = (0, 0);
    for s in (0..n).filter(|&s| !hot(s)) {
        for d in (0..n).filter(|&d| d != s && d != hot_dst) {
            total += 1;
            sharing += usize::from(topo.links(s, d).iter().any(|l| hot_links.contains(l)));
        }
    }
    (total, sharing)
}

#[cfg(test)]
mod tests;
