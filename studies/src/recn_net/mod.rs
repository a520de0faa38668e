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
//! link (and the crossbar path from its input port) for `c` slots. Throughput
//! is in cells per slot per end point (a fraction of a link), latency in
//! slots (multiply by 64 ns).
//!
//! # The system
//!
//! - **Network interfaces**: per end point, unbounded queues per (service
//!   level, destination) (the paper's interface has a VC per level; a queue
//!   per destination keeps it free of HOL blocking in all three cases, so
//!   the architectures differ only in the switches). Each slot its injection
//!   link is free, the interface sends the head of the highest level with a
//!   packet the first switch port accepts, round robin over destinations.
//! - **Switches** of radix `R` (a [`topology::Topology`]), one
//!   [`arch::PortEngine`] per input port; no output buffers (the paper's
//!   switch also buffers at its outputs: here a packet goes from the input
//!   port straight onto the output link). In a slot the input ports of a
//!   switch are taken in turn, starting from `t mod R`: a port may send a
//!   packet when its crossbar path is free (`c` slots per packet, no
//!   speed-up), to an output link that is free, if the next port accepts it
//!   (credits, Xoff) or the output is an end point; an output taken by one
//!   port is busy for the ports after it.
//! - **Links** are store and forward with no propagation delay: a packet of
//!   `c` cells sent in slot `t` enters the next port (or reaches its end
//!   point) in slot `t + c`. Credits are reserved when a packet is sent and
//!   returned when it leaves the next port, visible the slot after.
//! - **Notifications** (RECN): a port's notification goes to every input
//!   port of the upstream switch but the one the link comes back in
//!   (each of them may send to that link), with the upstream switch's turn
//!   prepended (one hop more; beyond the turnpool's hops it is dropped);
//!   each port takes one per slot from a FIFO. Notifications from a leaf
//!   port to its network interface are dropped (the interface has a queue
//!   per destination already and honours the leaf port's Xoff directly).
//!
//! Order in a slot: births at the interfaces; the switches in index order
//! (arrivals, notifications, departures); the interfaces' injections; then
//! every port's credits freed in the slot are returned.
//!
//! # Measurement
//!
//! After `warmup` slots, `slots` measured slots: throughput counts the cells
//! delivered in them; latency (birth at the interface to the last cell at
//! the end point, source queueing included) the packets born in them and
//! delivered by the end of the run.

pub mod arch;
pub mod topology;
pub mod traffic;

use arch::{Ntf, Pkt, PortEngine, SlotOut};
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
    /// Largest packet, cells.
    pub max_cells: usize,
    /// Best-effort and QoS burst sizes, cells.
    pub bursts: (u32, u32),
    /// Port memory, cells (the RECN block's `C`; VOQ Switch gets an eighth
    /// per VC).
    pub mem_cells: usize,
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
    /// 2 KB packets, 30 KB and 5 KB bursts, 32 KB per port.
    pub fn paper(load: f64) -> Self {
        Config {
            k: 4,
            stages: 3,
            load,
            pattern: Pattern::Uniform,
            max_cells: 32,
            bursts: (480, 80),
            mem_cells: 512,
            warmup: 5_000,
            slots: 20_000,
            seed: 1,
            trace: false,
        }
    }

    /// A 16-end-point network of 4-port switches (3 stages) that fits the
    /// default `recn_port` variant (64 cells): packets of up to 8 cells.
    pub fn small(load: f64) -> Self {
        Config {
            k: 2,
            stages: 3,
            max_cells: 8,
            bursts: (120, 20),
            mem_cells: 64,
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
    /// born last: 200 maximum packets.
    pub fn tail(&self) -> u64 {
        200 * self.max_cells as u64
    }
}

/// One delivered packet (the delivery log).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// Slot its last cell reached the end point.
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
    /// hot; all sources without a hot spot).
    pub victim_delivered: u64,
    /// Best-effort cells born in the window at victim sources.
    pub victim_offered: u64,
    /// Notifications dropped (beyond the turnpool, or to an interface).
    pub ntf_dropped: u64,
    /// Notifications delivered to ports.
    pub ntf_sent: u64,
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
    /// Mean latency of level `sl`, slots.
    pub fn mean_latency(&self, sl: usize) -> f64 {
        self.lat_sum[sl] as f64 / self.lat_n[sl].max(1) as f64
    }
    /// Victims' best-effort throughput over their offered load.
    pub fn victim_ratio(&self) -> f64 {
        self.victim_delivered as f64 / self.victim_offered.max(1) as f64
    }
}

/// The network around ports of type `E`.
pub struct Network<E> {
    cfg: Config,
    topo: Topology,
    traffic: Traffic,
    ports: Vec<Option<E>>,
    /// Per switch output link (`sw * R + o`): the slot it is free from.
    link_free: Vec<u64>,
    /// Per input port: its crossbar path is free from this slot.
    xbar_free: Vec<u64>,
    /// Per input port: the packet on its incoming link and its arrival slot.
    /// (A packet may be sent in the slot the previous one arrives: two.)
    incoming: Vec<VecDeque<(u64, Pkt)>>,
    /// Per input port: notifications waiting.
    ntfs: Vec<VecDeque<Ntf>>,
    /// Per end point: its interface queues and injection link.
    nics: Vec<Nic>,
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
    /// Queues per (level, destination).
    q: arch::Queues,
    free: u64,
}

fn fnv(h: &mut u64, x: u64) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

impl<E: PortEngine> Network<E> {
    /// The network of `cfg`, its switch input port `i` (`sw * R + port`)
    /// made by `port(i)`; notifications beyond `max_hops` hops are dropped.
    pub fn new(cfg: Config, max_hops: u32, mut port: impl FnMut(usize) -> E) -> Self {
        let topo = cfg.topology();
        let np = topo.switches() * topo.radix;
        let n = topo.endpoints;
        let traffic = Traffic::new(
            n,
            cfg.load,
            cfg.max_cells,
            cfg.bursts,
            cfg.pattern,
            cfg.seed,
        );
        Network {
            traffic,
            ports: (0..np).map(|i| Some(port(i))).collect(),
            link_free: vec![0; np],
            xbar_free: vec![0; np],
            incoming: vec![VecDeque::new(); np],
            ntfs: vec![VecDeque::new(); np],
            nics: (0..n)
                .map(|_| Nic {
                    q: arch::Queues::new(n, 1),
                    free: 0,
                })
                .collect(),
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
    /// A hash of every delivery (slot, packet), in order.
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }
    /// The ports, `sw * R + port`.
    pub fn ports(&self) -> impl Iterator<Item = &E> {
        self.ports
            .iter()
            .map(|p| p.as_ref().expect("port in place"))
    }
    /// The ports, mutable.
    pub fn ports_mut(&mut self) -> impl Iterator<Item = &mut E> {
        self.ports
            .iter_mut()
            .map(|p| p.as_mut().expect("port in place"))
    }
    /// Packets born and not yet delivered: in interfaces, ports and links.
    pub fn in_network(&self) -> (u64, u64, u64) {
        let nic: usize = self.nics.iter().map(|n| n.q.stored).sum();
        let ports: usize = self.ports().map(|p| p.packets()).sum();
        let links: usize = self.incoming.iter().map(|x| x.len()).sum();
        (nic as u64, ports as u64, links as u64)
    }
    /// The current slot.
    pub fn now(&self) -> u64 {
        self.t
    }

    fn in_window(&self, t: u64) -> bool {
        t >= self.cfg.warmup && t < self.cfg.warmup + self.cfg.slots
    }

    /// Runs the warm-up and the measured slots, then `tail` slots more for
    /// the latency of the last packets born in the window.
    pub fn run(&mut self, tail: u64) {
        let end = self.cfg.warmup + self.cfg.slots + tail;
        while self.t < end {
            self.step();
        }
    }

    fn deliver(&mut self, t: u64, p: Pkt) {
        self.stats.done += 1;
        let sl = p.sl as usize;
        if self.in_window(t) {
            self.stats.delivered[sl] += p.cells as u64;
            if sl >= 4 && !self.traffic.is_hot(p.src as usize) {
                self.stats.victim_delivered += p.cells as u64;
            }
        }
        if self.in_window(p.born) {
            let lat = t - p.born;
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

    /// Whether the packet `p` at switch `sw` may go out of its output now.
    fn can_go(&self, sw: usize, p: &Pkt) -> bool {
        let r = self.topo.radix;
        let o = p.route as usize & (r - 1);
        if self.link_free[sw * r + o] > self.t {
            return false;
        }
        match self.topo.peers[sw][o] {
            Peer::Endpoint(_) => true,
            Peer::Switch { sw: s2, port } => {
                let mut q = *p;
                q.route >>= self.topo.tb;
                self.ports[s2 * r + port]
                    .as_ref()
                    .expect("other port in place")
                    .accepts(&q)
            }
            Peer::None => false,
        }
    }

    /// One slot.
    pub fn step(&mut self) {
        let t = self.t;
        let n = self.topo.endpoints;
        let r = self.topo.radix;
        let tb = self.topo.tb;

        // 1. Births.
        for e in 0..n {
            let mut b = std::mem::take(&mut self.births);
            b.clear();
            self.traffic.births(e, t, &mut b);
            for x in &b {
                let (route, _) = self.topo.route(e, x.dst);
                let p = Pkt {
                    id: self.next_id,
                    src: e as u16,
                    dst: x.dst as u16,
                    sl: x.sl,
                    cells: x.cells,
                    born: t,
                    route,
                };
                self.next_id += 1;
                self.stats.born += 1;
                if self.in_window(t) {
                    self.stats.offered[x.sl as usize] += x.cells as u64;
                    if x.sl >= 4 && !self.traffic.is_hot(e) {
                        self.stats.victim_offered += x.cells as u64;
                    }
                }
                self.nics[e].q.push(x.sl as usize, x.dst, p);
            }
            self.births = b;
        }

        // 2. Switches.
        for sw in 0..self.topo.switches() {
            for k in 0..r {
                let port = (t as usize + k) % r;
                let i = sw * r + port;
                let arrival = match self.incoming[i].front() {
                    Some(&(at, p)) if at == t => {
                        self.incoming[i].pop_front();
                        Some(p)
                    }
                    _ => None,
                };
                let ntf = self.ntfs[i].pop_front();
                let ready = self.xbar_free[i] <= t;
                let mut e = self.ports[i].take().expect("port in place");
                let out: SlotOut = {
                    let me = &*self;
                    e.slot(arrival, ntf, ready, &mut |p| me.can_go(sw, p))
                };
                self.ports[i] = Some(e);
                if let Some(p) = out.sent {
                    let o = p.route as usize & (r - 1);
                    let c = p.cells as u64;
                    self.link_free[sw * r + o] = t + c;
                    self.xbar_free[i] = t + c;
                    match self.topo.peers[sw][o] {
                        Peer::Endpoint(_) => self.deliver(t + c, p),
                        Peer::Switch { sw: s2, port: p2 } => {
                            let mut q = p;
                            q.route >>= tb;
                            let j = s2 * r + p2;
                            self.ports[j].as_mut().expect("port").reserve(&q);
                            self.incoming[j].push_back((t + c, q));
                        }
                        Peer::None => unreachable!("route to an unconnected port"),
                    }
                }
                if let Some(nt) = out.up {
                    self.notify_upstream(sw, port, nt);
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
            let leaf = self.ports[li].as_ref().expect("leaf port");
            let nic = &mut self.nics[e];
            if let Some((sl, d)) = nic.q.pick(&mut |p| leaf.accepts(p)) {
                let p = nic.q.pop(sl, d, None);
                nic.free = t + p.cells as u64;
                self.ports[li].as_mut().expect("leaf port").reserve(&p);
                self.incoming[li].push_back((t + p.cells as u64, p));
            }
        }

        // 4. Credits.
        for p in self.ports.iter_mut() {
            p.as_mut().expect("port").end_slot();
        }
        self.t += 1;
    }

    /// Sends `nt` (from input port `port` of switch `sw`) to the input
    /// ports of the upstream switch that can send to the link.
    fn notify_upstream(&mut self, sw: usize, port: usize, nt: Ntf) {
        let r = self.topo.radix;
        match self.topo.peers[sw][port] {
            Peer::Switch { sw: us, port: uo } => {
                if nt.hops as u32 + 1 > self.max_hops {
                    self.stats.ntf_dropped += 1;
                    return;
                }
                let up = Ntf {
                    route: uo as u32 | (nt.route << self.topo.tb),
                    hops: nt.hops + 1,
                    ..nt
                };
                for q in (0..r).filter(|&q| q != uo) {
                    self.ntfs[us * r + q].push_back(up);
                    self.stats.ntf_sent += 1;
                }
            }
            _ => self.stats.ntf_dropped += 1,
        }
    }
}

/// The `recn_port` variant and configuration of a network: `D` = the
/// switch radix, the smallest verilated variant with at least `mem` cells
/// and a turnpool wide enough for the longest route; the thresholds are
/// the block's default ratios of a VC's half of the memory (the credits of
/// a VC).
pub fn recn_setup(
    cfg: &Config,
) -> (
    model::recn_port::RecnPortParams,
    model::recn_port::RecnPortConfig,
) {
    use model::recn_port::RecnPort;
    use model::Block;
    let topo = cfg.topology();
    let p = RecnPort::variants()
        .into_iter()
        .filter(|v| v.d == topo.radix && v.c >= cfg.mem_cells && v.rw >= topo.route_bits())
        .min_by_key(|v| v.c)
        .unwrap_or(model::recn_port::RecnPortParams {
            d: topo.radix,
            s: 8,
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
    (p, c)
}

/// Runs `cfg` on architecture `arch` (RECN on the golden model).
pub fn run(cfg: &Config, arch: Arch) -> Stats {
    let topo = cfg.topology();
    let tail = cfg.tail();
    match arch {
        Arch::VoqNet => {
            let credits = 2 * cfg.max_cells as u32;
            let mut net = Network::new(cfg.clone(), 32, |_| {
                arch::VoqNet::new(topo.endpoints, credits)
            });
            net.run(tail);
            net.stats().clone()
        }
        Arch::VoqSwitch => {
            let credits = cfg.mem_cells as u32 / 8;
            let mut net = Network::new(cfg.clone(), 32, |_| {
                arch::VoqSwitch::new(topo.radix, credits)
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
/// [`recn_setup`]'s variant and configuration, in reset state).
pub fn recn_network_with<S: crate::bcn_loop::Stepper<model::recn_port::RecnPort>>(
    cfg: Config,
    mut make: impl FnMut(usize) -> S,
) -> Network<arch::Recn<S>> {
    let (p, c) = recn_setup(&cfg);
    Network::new(cfg, p.h(), |i| arch::Recn::new(make(i), p, &c))
}

/// The RECN network of `cfg` on the golden model.
pub fn model_recn_network(cfg: Config) -> Network<ModelRecn> {
    use model::Block;
    let (p, c) = recn_setup(&cfg);
    recn_network_with(cfg, |_| {
        crate::bcn_loop::Model(model::recn_port::RecnPort::new(&p, &c))
    })
}

#[cfg(test)]
mod tests;
