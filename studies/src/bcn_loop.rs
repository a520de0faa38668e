//! The BCN closed loop of seed 003 (steps 1 to 6) over one or several
//! congestion points: hosts, each behind its own reaction point
//! ([`model::bcn_rp::BcnRp`]), send flows along routes through congestion
//! points ([`model::bcn_cp::BcnCp`], queue 0 of each) in series; each point
//! drains slower than it may be offered, and its BCN messages come back to
//! the reaction point of the host they name after that point's control
//! delay.
//!
//! One step per clock cycle, in this order:
//!
//! 1. every host earns line credit and offers one frame of one of its
//!    active flows (round robin over the flows; a flow with a fixed demand
//!    offers only when its own credit covers a frame, a greedy flow always);
//!    a frame its reaction point does not take stays with the host, which
//!    may offer another flow's frame in the next cycle;
//! 2. every reaction point is stepped with its host's offer and the earliest
//!    message due to it (one per cycle; messages of the several points come
//!    through one delay line per point); a released frame enters the delay
//!    line to the first point of its flow's route, carrying the rate-limiter
//!    tag (limiter id and CPID, [`model::bcn_cp::RLT_BYTES`] more bytes as
//!    stored) when it left a limiter;
//! 3. at every point, frames due join its ingress FIFO (one frame header
//!    per cycle into the congestion point); the egress port serves the
//!    queue at `drain` bytes per cycle (work-conserving: credit accrues only
//!    while the queue holds frames), the head departs when the credit covers
//!    its length on the wire (its tag stripped when the tag names this
//!    point); a departed frame goes on to the next point of its route after
//!    the point's `next_delay`, or is delivered;
//! 4. a message a point decides (`msg_valid_o`) enters that point's delay
//!    line towards the reaction point of the host it names (`msg_sa_o`).
//!
//! Before the hosts start, each point receives a random number (from the
//! run's seed, below `warmup`) of zero-length BCN frames on queue 7: they
//! are never sampled and occupy nothing, but each steps the sampling LFSR,
//! so that every seed starts the points at an independent phase of their
//! sampling sequence. Flows start at random times within `start_spread`
//! after the warm-up; time 0 of every figure is the end of the warm-up.
//!
//! The run streams: what is kept is one [`Window`] of statistics per
//! `window` cycles (per-cycle extremes and sums of each point's depth,
//! drops, messages, rate changes; per-flow bytes and mean limiter rate),
//! so memory does not grow with the cycle count beyond one row per window.
//! The blocks are stepped through [`Stepper`], so the same system runs the
//! golden models ([`Model`]) or the verilated RTL (`cosim`).

use crate::rng::Rng;
use arbitrary_int::{u11, u14, u3, u4, u5};
use model::bcn_cp::{BcnCp, BcnCpConfig, BcnCpInputs, BcnCpOutputs, BcnCpParams, RLT_BYTES};
use model::bcn_rp::{
    Act, BcnRp, BcnRpConfig, BcnRpInputs, BcnRpOutputs, BcnRpParams, FW, I16, LEVEL_DA, LEVEL_PRIO,
};
use model::{Block, PortGroup};
use std::collections::VecDeque;

/// Steps one block a clock cycle: the golden model or the RTL.
pub trait Stepper<B: Block> {
    /// One clock cycle with inputs `i`: this cycle's outputs.
    fn step(&mut self, i: &B::Inputs) -> Result<B::Outputs, String>;
    /// One clock cycle with inputs `i`, the outputs into `o`.
    fn step_into(&mut self, i: &B::Inputs, o: &mut B::Outputs) -> Result<(), String> {
        *o = self.step(i)?;
        Ok(())
    }
}

/// The golden model as a [`Stepper`].
pub struct Model<B>(pub B);

impl<B: Block> Stepper<B> for Model<B> {
    fn step(&mut self, i: &B::Inputs) -> Result<B::Outputs, String> {
        Ok(self.0.step(i))
    }
    fn step_into(&mut self, i: &B::Inputs, o: &mut B::Outputs) -> Result<(), String> {
        self.0.step_into(i, o);
        Ok(())
    }
}

/// Host `h` has the MAC address `SA_BASE + h`.
pub const SA_BASE: u64 = 0x02_00_00_00_50_00;
/// Destination `d` has the MAC address `DA_BASE + d`.
pub const DA_BASE: u64 = 0x02_00_00_00_d0_00;
/// The priority of every flow (so that a full table falls back to it).
pub const PRIO: u8 = 3;
/// The EtherType of the data frames (IPv4).
pub const IPV4: u16 = 0x0800;
/// Bytes of a BCN frame on the wire (for the overhead).
pub const BCN_FRAME_BYTES: u64 = 64;
/// The queue of a point the warm-up BCN frames go to.
pub const WARMUP_QUEUE: u8 = 7;

/// A congestion point: queue 0 of one egress port.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Its id (`cfg_cpid_i`, 13 bits); the CPID of queue 0 is `cpid << 3`.
    pub cpid: u16,
    /// Drain rate of the port, bytes per cycle.
    pub drain: f64,
    /// Qeq, bytes.
    pub qeq: u32,
    /// Queue and buffer limit, bytes.
    pub buffer: u32,
    /// Cycles from one of its messages to the reaction point.
    pub ctrl_delay: u64,
    /// Cycles from its egress to the next point of a route.
    pub next_delay: u64,
}

/// A flow: frames from a host to a destination along a route.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// The sending host.
    pub host: usize,
    /// The destination (`DA_BASE + dst`).
    pub dst: u64,
    /// The points it crosses, in order.
    pub route: Vec<usize>,
    /// Offered load in bytes per cycle (`None`: greedy, as fast as the
    /// host's line and its limiter allow).
    pub demand: Option<f64>,
    /// Index into [`Topology::groups`].
    pub group: usize,
}

/// Points, hosts and flows.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// Short name (`one`, `two`).
    pub name: String,
    /// The congestion points.
    pub points: Vec<Point>,
    /// The reaction point of each host (its structure).
    pub hosts: Vec<BcnRpParams>,
    /// The flows; the flows of a host have distinct destinations.
    pub flows: Vec<Flow>,
    /// Names of the flow groups.
    pub groups: Vec<String>,
    /// Cycles from a host to the first point of a route.
    pub host_delay: u64,
    /// The point the headline figures are about.
    pub bottleneck: usize,
}

impl Topology {
    /// One point (drain `drain`, control delay `delay`) and `sources` hosts
    /// with one greedy flow each.
    pub fn one_point(sources: usize, drain: f64, qeq: u32, buffer: u32, delay: u64) -> Self {
        Topology {
            name: "one".into(),
            points: vec![Point {
                cpid: 0x0a5,
                drain,
                qeq,
                buffer,
                ctrl_delay: delay,
                next_delay: 0,
            }],
            hosts: vec![BcnRpParams::default(); sources],
            flows: (0..sources)
                .map(|h| Flow {
                    host: h,
                    dst: 1,
                    route: vec![0],
                    demand: None,
                    group: 0,
                })
                .collect(),
            groups: vec!["greedy".into()],
            host_delay: 0,
            bottleneck: 0,
        }
    }

    /// Two points in series (docs/bcn.md, "Two congestion points"): point 0
    /// (upstream, drain `c1`) feeds point 1 (the bottleneck, drain `c2`),
    /// both with Qeq `qeq` and buffer `buffer`. 16 hosts: six send a greedy
    /// flow across both points (group `both`); four send 0.5 B/cycle across
    /// point 0 only (`up`); four send a greedy flow across point 1 only
    /// (`down`); two hosts with a single rate limiter (K = 1) send both a
    /// greedy flow across both points (`multi-both`) and 0.5 B/cycle across
    /// point 0 only (`multi-up`), so that a second congested flow makes
    /// their table fall back to the priority. Point 0's messages take
    /// `delay / 2` cycles to the hosts, point 1's `delay`; 100 cycles from a
    /// host to point 0 or 1, 250 from point 0 to point 1.
    pub fn two_points(c1: f64, c2: f64, qeq: u32, buffer: u32, delay: u64) -> Self {
        let point = |cpid, drain, ctrl_delay, next_delay| Point {
            cpid,
            drain,
            qeq,
            buffer,
            ctrl_delay,
            next_delay,
        };
        let mut hosts = vec![BcnRpParams::default(); 14];
        hosts.extend([BcnRpParams::new(1, 2); 2]);
        let mut flows = vec![];
        let flow = |host, dst, route: &[usize], demand, group| Flow {
            host,
            dst,
            route: route.to_vec(),
            demand,
            group,
        };
        for h in 0..6 {
            flows.push(flow(h, 2, &[0, 1], None, 0));
        }
        for h in 6..10 {
            flows.push(flow(h, 1, &[0], Some(0.5), 1));
        }
        for h in 10..14 {
            flows.push(flow(h, 2, &[1], None, 2));
        }
        for h in 14..16 {
            flows.push(flow(h, 2, &[0, 1], None, 3));
            flows.push(flow(h, 1, &[0], Some(0.5), 4));
        }
        Topology {
            name: "two".into(),
            points: vec![point(0x0a5, c1, delay / 2, 250), point(0x0b7, c2, delay, 0)],
            hosts,
            flows,
            groups: ["both", "up", "down", "multi-both", "multi-up"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            host_delay: 100,
            bottleneck: 1,
        }
    }

    /// The max-min fair share of every flow, bytes per cycle (water
    /// filling over the points' drain rates, the hosts' line rate and the
    /// flows' demands).
    pub fn fair_shares(&self, line: f64) -> Vec<f64> {
        let n = self.flows.len();
        let mut share = vec![0.0; n];
        let mut frozen = vec![false; n];
        // Resources: points, then hosts' lines.
        let mut cap: Vec<f64> = self.points.iter().map(|p| p.drain).collect();
        cap.extend(std::iter::repeat_n(line, self.hosts.len()));
        let uses = |f: &Flow, r: usize| {
            if r < self.points.len() {
                f.route.contains(&r)
            } else {
                f.host == r - self.points.len()
            }
        };
        loop {
            let live: Vec<usize> = (0..n).filter(|&f| !frozen[f]).collect();
            if live.is_empty() {
                break;
            }
            // The smallest increment that saturates a resource or a demand.
            let mut inc = f64::INFINITY;
            for (r, &c) in cap.iter().enumerate() {
                let k = live.iter().filter(|&&f| uses(&self.flows[f], r)).count();
                if k > 0 {
                    inc = inc.min(c / k as f64);
                }
            }
            for &f in &live {
                if let Some(d) = self.flows[f].demand {
                    inc = inc.min(d - share[f]);
                }
            }
            for &f in &live {
                share[f] += inc;
            }
            for (r, c) in cap.iter_mut().enumerate() {
                let k = live.iter().filter(|&&f| uses(&self.flows[f], r)).count();
                *c -= inc * k as f64;
            }
            for &f in &live {
                let fl = &self.flows[f];
                let sat = fl.demand.is_some_and(|d| share[f] >= d - 1e-12)
                    || (0..cap.len()).any(|r| uses(fl, r) && cap[r] <= 1e-12);
                if sat {
                    frozen[f] = true;
                }
            }
        }
        share
    }
}

/// Parameters of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopConfig {
    /// Points, hosts and flows.
    pub topo: Topology,
    /// Frame length in bytes (as the host sends it, without a tag).
    pub frame_len: u16,
    /// Line rate of every host, bytes per cycle.
    pub line_rate: f64,
    /// Pm = pm / 1024 (every point).
    pub pm: u16,
    /// W = w / 4 (every block).
    pub w: u8,
    /// Gd = 2^-gd.
    pub gd: u8,
    /// Gi = 2^-gi.
    pub gi: u8,
    /// Ru, u0.16 bytes per cycle.
    pub ru: u16,
    /// Minimum limiter rate, bytes per cycle.
    pub min_rate: f64,
    /// Idle time of a limiter (cycles).
    pub idle: u16,
    /// Seed of the run: start times and the points' LFSR phases.
    pub seed: u64,
    /// Largest number of warm-up BCN frames per point (LFSR phase).
    pub warmup: u64,
    /// Flows start uniformly at random within this many cycles.
    pub start_spread: u64,
    /// Cycles per recorded window.
    pub window: u64,
    /// Flow `f` stops offering at cycle `stop[f]` after the warm-up (none:
    /// runs forever).
    pub stop: Vec<Option<u64>>,
}

impl Default for LoopConfig {
    /// The two-point topology ([`Topology::two_points`]: upstream drain 8,
    /// bottleneck 4 B/cycle, QCN's Qeq of 26,000 B, buffers of 150,000 B,
    /// control delay 1,000 cycles) at the seed's Pm (10/1024 = 1/102.4),
    /// hosts at 8 B/cycle sending 1,500 B frames, Gd = 1/128 (QCN's),
    /// W = 2 (QCN's), Gi = 1/16, Ru = 1/16 B/cycle, minimum rate 1/8
    /// B/cycle, idle removal after 2,000 cycles; windows of 10,000
    /// cycles; flows start within 100,000 cycles.
    fn default() -> Self {
        LoopConfig {
            topo: Topology::two_points(8.0, 4.0, 26_000, 150_000, 1000),
            frame_len: 1500,
            line_rate: 8.0,
            pm: 10,
            w: 8,
            gd: 7,
            gi: 4,
            ru: 1 << 12,
            min_rate: 1.0 / 8.0,
            idle: 2000,
            seed: 1,
            warmup: 65_535,
            start_spread: 100_000,
            window: 10_000,
            stop: vec![],
        }
    }
}

impl LoopConfig {
    /// The points' structural parameters (the verilated default variant).
    pub fn cp_params(&self) -> BcnCpParams {
        BcnCpParams::default()
    }
    /// The configuration of point `k`.
    pub fn cp_config(&self, k: usize) -> BcnCpConfig {
        let p = self.cp_params();
        let pt = &self.topo.points[k];
        let mut c = BcnCp::default_config(&p);
        c.cfg_cpid_i = arbitrary_int::u13::new(pt.cpid & 0x1fff);
        c.cfg_qeq_i = vec![pt.qeq.min(pt.buffer); p.nq];
        c.cfg_qmax_i = pt.buffer;
        c.cfg_buf_i = pt.buffer;
        c.cfg_w_i = u5::new(self.w);
        c.cfg_pm_i = u11::new(self.pm);
        c
    }
    /// The reaction points' configuration.
    pub fn rp_config(&self) -> BcnRpConfig {
        BcnRpConfig {
            cfg_line_rate_i: to_fix(self.line_rate),
            cfg_min_rate_i: to_fix(self.min_rate).max(1),
            cfg_gd_i: u4::new(self.gd),
            cfg_gi_i: u4::new(self.gi),
            cfg_ru_i: self.ru,
            cfg_w_i: u5::new(self.w),
            cfg_idle_i: self.idle,
        }
    }
    /// The CPID of point `k`'s queue 0 (what its messages and tags carry).
    pub fn cpid16(&self, k: usize) -> u16 {
        (self.topo.points[k].cpid & 0x1fff) << 3
    }
    /// Checks what the blocks cannot: one line per problem.
    pub fn validate(&self) -> Result<(), String> {
        let t = &self.topo;
        if t.points.is_empty() || t.hosts.is_empty() || t.flows.is_empty() {
            return Err("the topology needs points, hosts and flows".into());
        }
        if self.window == 0 || self.line_rate <= 0.0 || self.frame_len == 0 {
            return Err("window, line rate and frame length must be positive".into());
        }
        for (k, p) in t.points.iter().enumerate() {
            if p.drain <= 0.0 {
                return Err(format!("point {k}: drain must be positive"));
            }
        }
        for (f, fl) in t.flows.iter().enumerate() {
            if fl.host >= t.hosts.len() || fl.route.iter().any(|&p| p >= t.points.len()) {
                return Err(format!("flow {f}: host or route out of range"));
            }
            if fl.route.is_empty() {
                return Err(format!("flow {f}: empty route"));
            }
        }
        Ok(())
    }
}

/// Bytes per cycle to u8.16.
pub fn to_fix(r: f64) -> u32 {
    (r * (1u64 << FW) as f64).round() as u32
}

/// u8.16 to bytes per cycle.
pub fn from_fix(r: u32) -> f64 {
    r as f64 / (1u64 << FW) as f64
}

/// One point's statistics over a window (per-cycle values: the depth is
/// the queue's at the start of each cycle, `q_o`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointWin {
    /// Smallest depth of any cycle, bytes.
    pub depth_min: u32,
    /// Largest depth of any cycle, bytes.
    pub depth_max: u32,
    /// Sum of the depths over the cycles.
    pub depth_sum: u64,
    /// Sum of the squared depths over the cycles.
    pub depth_sq: u128,
    /// Cycles with an empty queue (the port idle).
    pub empty: u64,
    /// Frames that arrived (data frames).
    pub arrivals: u64,
    /// Arrivals dropped.
    pub drops: u64,
    /// Bytes that left on the wire.
    pub dep_bytes: u64,
    /// Sampled arrivals.
    pub samples: u64,
    /// Sum of Qoff over the samples (units of 64 bytes, positive below Qeq).
    pub qoff_sum: i64,
    /// Sum of Fb over the samples.
    pub fb_sum: i64,
    /// Messages decided.
    pub msgs: u64,
    /// Messages with Fb < 0.
    pub neg: u64,
    /// Sum of |Fb| of those.
    pub fb_neg_sum: u64,
    /// Messages with Fb >= 0 (frames tagged by this point).
    pub pos: u64,
    /// Sum of Fb of those.
    pub fb_pos_sum: u64,
    /// Rate decreases its messages made at the reaction points: count.
    pub dec_n: u64,
    /// Their sum, bytes per cycle.
    pub dec_sum: f64,
    /// Rate increases its messages made: count.
    pub inc_n: u64,
    /// Their sum, bytes per cycle.
    pub inc_sum: f64,
    /// Increases its messages made for a flow that crosses another point
    /// whose queue was above that point's Qeq at the time: count.
    pub inc_against_n: u64,
    /// Their sum, bytes per cycle.
    pub inc_against_sum: f64,
    /// Messages of this point the reaction points ignored (Fb >= 0 for a
    /// limiter that answers to another point, or no limiter).
    pub ignored: u64,
}

/// Statistics of one window of cycles.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Window {
    /// First cycle of the window (after the warm-up).
    pub t0: u64,
    /// Cycles in the window.
    pub len: u64,
    /// Per point.
    pub points: Vec<PointWin>,
    /// Per flow: data bytes delivered (left the last point of its route).
    pub delivered: Vec<u64>,
    /// Per flow: bytes its reaction point released.
    pub released: Vec<u64>,
    /// Per flow: sum over the cycles of the rate of the limiter its frames
    /// match (the line rate without one), bytes per cycle.
    pub rate_sum: Vec<f64>,
    /// Reaction point actions in the window: falls back to a coarser key.
    pub fallbacks: u64,
    /// Limiters installed.
    pub installs: u64,
}

impl Window {
    fn new(t0: u64, points: usize, flows: usize) -> Self {
        Window {
            t0,
            len: 0,
            points: vec![
                PointWin {
                    depth_min: u32::MAX,
                    ..Default::default()
                };
                points
            ],
            delivered: vec![0; flows],
            released: vec![0; flows],
            rate_sum: vec![0.0; flows],
            fallbacks: 0,
            installs: 0,
        }
    }
}

/// A frame in the network.
#[derive(Clone, Copy, Debug)]
struct Frame {
    flow: u16,
    hop: u8,
    len: u16,
    /// The rate-limiter tag: limiter id and CPID.
    tag: Option<(u8, u16)>,
}

impl Frame {
    fn stored(&self) -> u16 {
        self.len + if self.tag.is_some() { RLT_BYTES } else { 0 }
    }
}

/// A message on the control path.
#[derive(Clone, Copy, Debug)]
struct Msg {
    point: u8,
    qoff: i16,
    qdelta: i16,
    cpid: u16,
    da: u64,
    prio: u8,
}

/// A rate change an action makes, resolved at the next cycle's outputs.
#[derive(Clone, Copy, Debug)]
struct Pending {
    lim: usize,
    before: u32,
    act: Act,
    point: usize,
    against: bool,
}

struct PointState {
    /// Delay lines into the point: from the hosts, then from each point.
    inbound: Vec<VecDeque<(u64, Frame)>>,
    ingress: VecDeque<Frame>,
    queue: VecDeque<Frame>,
    drain_credit: f64,
    warm: u64,
    depth: u32,
    cpid16: u16,
    inp: BcnCpInputs,
    out: BcnCpOutputs,
}

struct HostState {
    flows: Vec<usize>,
    line_credit: f64,
    rr: usize,
    /// Messages per point, in order.
    ctrl: Vec<VecDeque<(u64, Msg)>>,
    /// Key (DA, prio) of each limiter, set at install.
    keys: Vec<(u64, u8)>,
    pending: Option<Pending>,
    inp: BcnRpInputs,
    out: BcnRpOutputs,
    /// The limiter outputs of the last cycle (rates, valid, level).
    last_lim: (Vec<bool>, Vec<u8>, Vec<u32>),
}

/// The closed loop around any [`Stepper`]s.
pub struct BcnLoop<C, R> {
    cfg: LoopConfig,
    cps: Vec<C>,
    rps: Vec<R>,
    /// Cycles run, warm-up included.
    t: u64,
    warm_len: u64,
    start: Vec<u64>,
    stop_at: Vec<u64>,
    flow_credit: Vec<f64>,
    flow_rate: Vec<f64>,
    points: Vec<PointState>,
    hosts: Vec<HostState>,
    win: Window,
    /// Recorded windows.
    pub windows: Vec<Window>,
    /// Total arrivals dropped, per point.
    pub drops: Vec<u64>,
    /// Total messages decided, per point.
    pub msgs: Vec<u64>,
    /// Largest depth seen, per point (bytes).
    pub max_depth: Vec<u32>,
    /// Every cycle's outputs (when enabled with [`BcnLoop::record_outputs`]).
    pub outputs: Option<Vec<(Vec<BcnCpOutputs>, Vec<BcnRpOutputs>)>>,
    /// Every cycle's inputs of point 0 (when enabled with
    /// [`BcnLoop::record_cp_inputs`]).
    pub cp_inputs: Option<Vec<BcnCpInputs>>,
}

/// The system on the golden models.
pub type ModelLoop = BcnLoop<Model<BcnCp>, Model<BcnRp>>;

impl ModelLoop {
    /// The system with the golden models.
    pub fn models(cfg: &LoopConfig) -> Self {
        let cpp = cfg.cp_params();
        let rpc = cfg.rp_config();
        BcnLoop::new(
            cfg.clone(),
            (0..cfg.topo.points.len())
                .map(|k| Model(BcnCp::new(&cpp, &cfg.cp_config(k))))
                .collect(),
            cfg.topo
                .hosts
                .iter()
                .map(|p| Model(BcnRp::new(p, &rpc)))
                .collect(),
        )
    }
}

impl<C: Stepper<BcnCp>, R: Stepper<BcnRp>> BcnLoop<C, R> {
    /// The system around one congestion point per topology point and one
    /// reaction point per host (each in reset state, configured with
    /// `cfg.cp_config(k)` and `cfg.rp_config()`).
    pub fn new(cfg: LoopConfig, cps: Vec<C>, rps: Vec<R>) -> Self {
        let topo = &cfg.topo;
        assert_eq!(cps.len(), topo.points.len(), "one CP per point");
        assert_eq!(rps.len(), topo.hosts.len(), "one RP per host");
        let np = topo.points.len();
        let nf = topo.flows.len();
        let mut rng = Rng::new(cfg.seed, 0xbc10);
        let warm: Vec<u64> = (0..np)
            .map(|_| {
                if cfg.warmup > 0 {
                    rng.below(cfg.warmup)
                } else {
                    0
                }
            })
            .collect();
        let warm_len = cfg.warmup;
        let start: Vec<u64> = (0..nf)
            .map(|_| {
                if cfg.start_spread > 0 {
                    rng.below(cfg.start_spread)
                } else {
                    0
                }
            })
            .collect();
        let cpp = cfg.cp_params();
        let points = (0..np)
            .map(|k| PointState {
                inbound: vec![VecDeque::new(); np + 1],
                ingress: VecDeque::new(),
                queue: VecDeque::new(),
                drain_credit: 0.0,
                warm: warm[k],
                depth: 0,
                cpid16: cfg.cpid16(k),
                inp: BcnCpInputs::zero(&cpp),
                out: BcnCpOutputs::zero(&cpp),
            })
            .collect();
        let hosts = topo
            .hosts
            .iter()
            .enumerate()
            .map(|(h, p)| HostState {
                flows: (0..nf).filter(|&f| topo.flows[f].host == h).collect(),
                line_credit: 0.0,
                rr: 0,
                ctrl: vec![VecDeque::new(); np],
                keys: vec![(0, 0); p.k],
                pending: None,
                inp: BcnRpInputs::zero(p),
                out: BcnRpOutputs::zero(p),
                last_lim: (vec![false; p.k], vec![0; p.k], vec![0; p.k]),
            })
            .collect();
        let stop_at = (0..nf)
            .map(|f| cfg.stop.get(f).copied().flatten().unwrap_or(u64::MAX))
            .collect();
        BcnLoop {
            cps,
            rps,
            t: 0,
            warm_len,
            start,
            stop_at,
            flow_credit: vec![0.0; nf],
            flow_rate: vec![cfg.line_rate; nf],
            points,
            hosts,
            win: Window::new(0, np, nf),
            windows: vec![],
            drops: vec![0; np],
            msgs: vec![0; np],
            max_depth: vec![0; np],
            outputs: None,
            cp_inputs: None,
            cfg,
        }
    }

    /// Keeps every cycle's outputs in [`BcnLoop::outputs`].
    pub fn record_outputs(&mut self) {
        self.outputs = Some(vec![]);
    }

    /// Keeps every cycle's inputs of point 0 in [`BcnLoop::cp_inputs`].
    pub fn record_cp_inputs(&mut self) {
        self.cp_inputs = Some(vec![]);
    }

    /// The configuration.
    pub fn config(&self) -> &LoopConfig {
        &self.cfg
    }

    /// Cycles run, the warm-up included.
    pub fn cycles(&self) -> u64 {
        self.t
    }

    /// Cycles of warm-up before the hosts may start.
    pub fn warmup(&self) -> u64 {
        self.warm_len
    }

    /// Cycles run after the warm-up.
    pub fn elapsed(&self) -> u64 {
        self.t.saturating_sub(self.warm_len)
    }

    fn active(&self, f: usize) -> bool {
        let Some(now) = self.t.checked_sub(self.warm_len) else {
            return false;
        };
        now >= self.start[f] && now < self.stop_at[f]
    }

    /// Runs the warm-up (if not yet done) and then `n` cycles.
    pub fn run(&mut self, n: u64) -> Result<(), String> {
        while self.t < self.warm_len {
            self.cycle()?;
        }
        for _ in 0..n {
            self.cycle()?;
        }
        Ok(())
    }

    /// Closes the current (partial) window, if it holds cycles.
    pub fn flush(&mut self) {
        if self.win.len > 0 {
            let np = self.points.len();
            let nf = self.cfg.topo.flows.len();
            let next = self.win.t0 + self.win.len;
            let w = std::mem::replace(&mut self.win, Window::new(next, np, nf));
            self.windows.push(w);
        }
    }

    /// The flow of host `h` with destination address `da`.
    fn flow_of(&self, h: usize, da: u64) -> Option<usize> {
        self.hosts[h]
            .flows
            .iter()
            .copied()
            .find(|&f| DA_BASE + self.cfg.topo.flows[f].dst == da)
    }

    /// The rate of the limiter flow `f`'s frames match at its host: the
    /// finest level, the lowest index (as the reaction point looks up).
    fn lookup_rate(&self, f: usize) -> f64 {
        let fl = &self.cfg.topo.flows[f];
        let hs = &self.hosts[fl.host];
        let (valid, level, rate) = &hs.last_lim;
        let da = DA_BASE + fl.dst;
        let mut best: Option<(u8, usize)> = None;
        for j in 0..valid.len() {
            if !valid[j] {
                continue;
            }
            let (kda, kp) = hs.keys[j];
            let m = match level[j] {
                LEVEL_DA => kda == da && kp == PRIO,
                LEVEL_PRIO => kp == PRIO,
                _ => true,
            };
            if m && best.is_none_or(|(l, _)| level[j] < l) {
                best = Some((level[j], j));
            }
        }
        best.map_or(self.cfg.line_rate, |(_, j)| from_fix(rate[j]))
    }

    /// One clock cycle of the whole system.
    pub fn cycle(&mut self) -> Result<(), String> {
        let t = self.t;
        let warm = t < self.warm_len;
        let len = self.cfg.frame_len;
        let line = self.cfg.line_rate;
        let np = self.points.len();
        let record = self.outputs.is_some();

        // 1. and 2. Hosts and their reaction points.
        for h in 0..self.hosts.len() {
            let nflows = self.hosts[h].flows.len();
            let mut act = 0u64;
            for k in 0..nflows {
                act |= u64::from(self.active(self.hosts[h].flows[k])) << k;
            }
            let any = act != 0;
            // Fixed-demand flows earn their own credit (two frames at most).
            for k in 0..nflows {
                let f = self.hosts[h].flows[k];
                if let Some(d) = self.cfg.topo.flows[f].demand {
                    self.flow_credit[f] = if self.active(f) {
                        (self.flow_credit[f] + d).min(2.0 * len as f64)
                    } else {
                        0.0
                    };
                }
            }
            let hs = &mut self.hosts[h];
            hs.line_credit = if any {
                (hs.line_credit + line).min(len as f64 + line)
            } else {
                0.0
            };
            let mut offer = None;
            if hs.line_credit >= len as f64 {
                for d in 0..nflows {
                    let k = (hs.rr + d) % nflows;
                    let f = hs.flows[k];
                    let fl = &self.cfg.topo.flows[f];
                    if act >> k & 1 == 1
                        && fl.demand.is_none_or(|_| self.flow_credit[f] >= len as f64)
                    {
                        offer = Some((k, f));
                        break;
                    }
                }
            }
            // The message due to this reaction point: the earliest of the
            // points' delay lines (ties: the lower point).
            let mut due: Option<(usize, u64)> = None;
            for (p, q) in hs.ctrl.iter().enumerate() {
                if let Some(&(at, _)) = q.front() {
                    if at <= t && due.is_none_or(|(_, a)| at < a) {
                        due = Some((p, at));
                    }
                }
            }
            let m = due.map(|(p, _)| hs.ctrl[p].pop_front().unwrap().1);
            let i = &mut hs.inp;
            match offer {
                Some((_, f)) => {
                    i.in_valid_i = true;
                    i.in_da_i = DA_BASE + self.cfg.topo.flows[f].dst;
                    i.in_prio_i = u3::new(PRIO);
                    i.in_len_i = len;
                }
                None => {
                    i.in_valid_i = false;
                    i.in_da_i = 0;
                    i.in_prio_i = u3::new(0);
                    i.in_len_i = 0;
                }
            }
            i.msg_valid_i = m.is_some();
            let mm = m.unwrap_or(Msg {
                point: 0,
                qoff: 0,
                qdelta: 0,
                cpid: 0,
                da: 0,
                prio: 0,
            });
            i.msg_flow_da_i = mm.da;
            i.msg_prio_i = u3::new(mm.prio);
            i.msg_cpid_i = mm.cpid;
            i.msg_qoff_i = I16::new(mm.qoff as i32);
            i.msg_qdelta_i = I16::new(mm.qdelta as i32);
            self.rps[h]
                .step_into(&hs.inp, &mut hs.out)
                .map_err(|e| format!("RP {h}, cycle {t}: {e}"))?;
            let o = &hs.out;
            // The rate change of last cycle's action, now visible.
            if let Some(pd) = hs.pending.take() {
                let after = if o.lim_valid_o[pd.lim] {
                    o.lim_rate_o[pd.lim]
                } else {
                    to_fix(line)
                };
                let d = from_fix(after) - from_fix(pd.before);
                let pw = &mut self.win.points[pd.point];
                match pd.act {
                    Act::Increase => {
                        pw.inc_n += 1;
                        pw.inc_sum += d;
                        if pd.against {
                            pw.inc_against_n += 1;
                            pw.inc_against_sum += d;
                        }
                    }
                    Act::Decrease | Act::Install | Act::FallbackPrio | Act::FallbackLink => {
                        pw.dec_n += 1;
                        pw.dec_sum -= d;
                    }
                    _ => {}
                }
            }
            if let Some((k, f)) = offer {
                if o.in_ready_o {
                    hs.line_credit -= len as f64;
                    if self.cfg.topo.flows[f].demand.is_some() {
                        self.flow_credit[f] -= len as f64;
                    }
                }
                hs.rr = k + 1;
            }
            if let Some(mm) = m {
                let act = Act::from_code(o.msg_act_o);
                let lim = o.msg_lim_o as usize;
                match act {
                    Act::Ignore => self.win.points[mm.point as usize].ignored += 1,
                    Act::Install => {
                        hs.keys[lim] = (mm.da, mm.prio);
                        self.win.installs += 1;
                    }
                    Act::FallbackPrio | Act::FallbackLink => self.win.fallbacks += 1,
                    _ => {}
                }
                if !matches!(act, Act::None | Act::Ignore | Act::Hold) {
                    let before = if act == Act::Install {
                        to_fix(line)
                    } else {
                        o.lim_rate_o[lim]
                    };
                    let flow = self.flow_of(h, mm.da).unwrap_or(usize::MAX);
                    // Against: the flow crosses another point above its Qeq.
                    let against = flow != usize::MAX
                        && self.cfg.topo.flows[flow].route.iter().any(|&q| {
                            q != mm.point as usize
                                && self.points[q].depth > self.cfg.topo.points[q].qeq
                        });
                    self.hosts[h].pending = Some(Pending {
                        lim,
                        before,
                        act,
                        point: mm.point as usize,
                        against,
                    });
                }
            }
            let o = &self.hosts[h].out;
            if o.out_valid_o {
                let f = self
                    .flow_of(h, o.out_da_o)
                    .ok_or_else(|| format!("RP {h}, cycle {t}: a frame of no flow"))?;
                let o = &self.hosts[h].out;
                self.win.released[f] += o.out_len_o as u64;
                let fr = Frame {
                    flow: f as u16,
                    hop: 0,
                    len: o.out_len_o,
                    tag: o
                        .out_tag_valid_o
                        .then_some((o.out_tag_id_o, o.out_tag_cpid_o)),
                };
                let p0 = self.cfg.topo.flows[f].route[0];
                self.points[p0].inbound[0].push_back((t + self.cfg.topo.host_delay, fr));
            }
            let hs = &mut self.hosts[h];
            let o = &hs.out;
            // The flows' rates, when the table moved.
            let changed = hs.last_lim.0 != o.lim_valid_o
                || hs.last_lim.1 != o.lim_level_o
                || hs.last_lim.2 != o.lim_rate_o;
            if changed {
                hs.last_lim.0.clone_from(&o.lim_valid_o);
                hs.last_lim.1.clone_from(&o.lim_level_o);
                hs.last_lim.2.clone_from(&o.lim_rate_o);
                for k in 0..self.hosts[h].flows.len() {
                    let f = self.hosts[h].flows[k];
                    self.flow_rate[f] = self.lookup_rate(f);
                }
            }
        }

        // 3. The points.
        let mut cp_outs = vec![];
        for k in 0..np {
            let ps = &mut self.points[k];
            for q in ps.inbound.iter_mut() {
                while let Some(&(at, f)) = q.front() {
                    if at > t {
                        break;
                    }
                    q.pop_front();
                    ps.ingress.push_back(f);
                }
            }
            let arr = ps.ingress.pop_front();
            if !ps.queue.is_empty() {
                ps.drain_credit += self.cfg.topo.points[k].drain;
            }
            let cpid16 = ps.cpid16;
            let dep = match ps.queue.front() {
                Some(fr) => {
                    let own = fr.tag.is_some_and(|(_, c)| c == cpid16);
                    let wire = fr.stored() - if own { RLT_BYTES } else { 0 };
                    (ps.drain_credit >= wire as f64).then(|| {
                        ps.drain_credit -= wire as f64;
                        ps.queue.pop_front().unwrap()
                    })
                }
                None => None,
            };
            if ps.queue.is_empty() && dep.is_none() {
                ps.drain_credit = 0.0;
            }
            let warm_arr = warm && ps.warm > 0 && arr.is_none();
            if warm_arr {
                ps.warm -= 1;
            }
            let i = &mut ps.inp;
            i.arr_valid_i = arr.is_some() || warm_arr;
            i.arr_queue_i = u3::new(if warm_arr { WARMUP_QUEUE } else { 0 });
            let stored = arr.map_or(0, |f| f.stored());
            i.arr_len_i = u14::new(stored);
            let af = arr.map(|f| &self.cfg.topo.flows[f.flow as usize]);
            i.arr_da_i = af.map_or(0, |fl| DA_BASE + fl.dst);
            i.arr_sa_i = af.map_or(0, |fl| SA_BASE + fl.host as u64);
            i.arr_prio_i = u3::new(if arr.is_some() { PRIO } else { 0 });
            let atag = arr.and_then(|f| f.tag);
            i.arr_rlt_i = atag.is_some();
            i.arr_rlt_id_i = atag.map_or(0, |(id, _)| id as u16);
            i.arr_rlt_cpid_i = atag.map_or(0, |(_, c)| c);
            i.arr_etype_i = if warm_arr {
                model::bcn_cp::BCN_ETHERTYPE
            } else if arr.is_some() {
                IPV4
            } else {
                0
            };
            i.dep_valid_i = dep.is_some();
            i.dep_queue_i = u3::new(0);
            i.dep_len_i = u14::new(dep.map_or(0, |d| d.stored()));
            let dtag = dep.and_then(|d| d.tag);
            i.dep_rlt_i = dtag.is_some();
            i.dep_rlt_cpid_i = dtag.map_or(0, |(_, c)| c);
            if k == 0 {
                if let Some(v) = &mut self.cp_inputs {
                    v.push(ps.inp.clone());
                }
            }
            self.cps[k]
                .step_into(&ps.inp, &mut ps.out)
                .map_err(|e| format!("CP {k}, cycle {t}: {e}"))?;
            let o = &ps.out;
            let depth = o.q_o[0];
            ps.depth = depth;
            if let Some(mut d) = dep {
                if o.dep_strip_o != d.tag.is_some_and(|(_, c)| c == cpid16) {
                    return Err(format!("CP {k}, cycle {t}: strip differs from the rule"));
                }
                if o.dep_strip_o {
                    d.tag = None;
                }
                let fl = &self.cfg.topo.flows[d.flow as usize];
                let h = d.hop as usize + 1;
                if h < fl.route.len() {
                    d.hop = h as u8;
                    let next = fl.route[h];
                    let at = t + self.cfg.topo.points[k].next_delay;
                    self.points[next].inbound[1 + k].push_back((at, d));
                } else {
                    self.win.delivered[d.flow as usize] += d.len as u64;
                }
            }
            let ps = &mut self.points[k];
            let o = &ps.out;
            let pw = &mut self.win.points[k];
            if let Some(a) = arr {
                pw.arrivals += 1;
                if o.arr_drop_o {
                    pw.drops += 1;
                    self.drops[k] += 1;
                } else {
                    ps.queue.push_back(a);
                }
            }
            if let Some(d) = dep {
                let own = d.tag.is_some_and(|(_, c)| c == cpid16);
                pw.dep_bytes += (d.stored() - if own { RLT_BYTES } else { 0 }) as u64;
            }
            if !warm {
                pw.depth_min = pw.depth_min.min(depth);
                pw.depth_max = pw.depth_max.max(depth);
                pw.depth_sum += depth as u64;
                pw.depth_sq += (depth as u128) * (depth as u128);
                pw.empty += u64::from(depth == 0);
                self.max_depth[k] = self.max_depth[k].max(depth);
            }
            if o.sample_o {
                pw.samples += 1;
                pw.qoff_sum += o.msg_qoff_o.value() as i64;
                pw.fb_sum += o.msg_fb_o.value() as i64;
            }
            // 4. The message goes back.
            if o.msg_valid_o {
                self.msgs[k] += 1;
                pw.msgs += 1;
                let fb = o.msg_fb_o.value();
                if fb < 0 {
                    pw.neg += 1;
                    pw.fb_neg_sum += fb.unsigned_abs() as u64;
                } else {
                    pw.pos += 1;
                    pw.fb_pos_sum += fb as u64;
                }
                let sa = o.msg_sa_o;
                let nh = self.hosts.len() as u64;
                if sa >= SA_BASE && sa < SA_BASE + nh {
                    let h = (sa - SA_BASE) as usize;
                    let m = Msg {
                        point: k as u8,
                        qoff: o.msg_qoff_o.value(),
                        qdelta: o.msg_qdelta_o.value(),
                        cpid: o.msg_cpid_o,
                        da: o.msg_flow_da_o,
                        prio: o.msg_prio_o.value(),
                    };
                    let at = t + self.cfg.topo.points[k].ctrl_delay;
                    self.hosts[h].ctrl[k].push_back((at, m));
                }
            }
            if record {
                cp_outs.push(ps.out.clone());
            }
        }
        if record {
            let rp_outs = self.hosts.iter().map(|h| h.out.clone()).collect();
            self.outputs.as_mut().unwrap().push((cp_outs, rp_outs));
        }
        self.t += 1;
        if !warm {
            for (s, r) in self.win.rate_sum.iter_mut().zip(&self.flow_rate) {
                *s += r;
            }
            self.win.len += 1;
            if self.win.len == self.cfg.window {
                self.flush();
            }
        } else if self.t == self.warm_len {
            // The warm-up's messages and counts are not part of the run.
            self.win = Window::new(0, np, self.cfg.topo.flows.len());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One point, four greedy hosts into half their line rate, 256 B
    /// frames, a quarter of the arrivals sampled, 100 cycles of delay.
    fn fast_one() -> LoopConfig {
        LoopConfig {
            topo: Topology::one_point(4, 4.0, 4096, 40_000, 100),
            frame_len: 256,
            pm: 256,
            warmup: 1000,
            start_spread: 0,
            window: 1000,
            ..LoopConfig::default()
        }
    }

    /// The short two-point loop of the RTL test (switchsim's
    /// `study::bcn::tests::short`), with `shared` CPIDs or not.
    fn short_two(shared: bool) -> LoopConfig {
        let mut topo = Topology::two_points(6.0, 4.0, 2048, 4000, 60);
        topo.host_delay = 3;
        topo.points[0].next_delay = 5;
        if shared {
            let c = topo.points[0].cpid;
            topo.points.iter_mut().for_each(|p| p.cpid = c);
        }
        LoopConfig {
            topo,
            frame_len: 64,
            pm: 256,
            idle: 300,
            warmup: 200,
            start_spread: 300,
            window: 500,
            ..LoopConfig::default()
        }
    }

    #[test]
    fn max_min_fair_shares_of_the_two_point_topology() {
        // Point 1 (4 B/cycle) is shared by the 12 greedy flows crossing it:
        // 1/3 each; the fixed 0.5 B/cycle flows get their demand; point 0
        // (8 B/cycle) then carries 8/3 + 3 < 8.
        let t = Topology::two_points(8.0, 4.0, 26_000, 150_000, 1000);
        let s = t.fair_shares(8.0);
        for (f, fl) in t.flows.iter().enumerate() {
            let want = if fl.demand.is_some() { 0.5 } else { 1.0 / 3.0 };
            assert!((s[f] - want).abs() < 1e-9, "flow {f}: {} != {want}", s[f]);
        }
        // With point 0 at 4 B/cycle it is the tighter one for its 14 flows.
        let s = Topology::two_points(4.0, 4.0, 26_000, 150_000, 1000).fair_shares(8.0);
        assert!(s.iter().sum::<f64>() <= 4.0 + 4.0 + 1e-9);
        assert!(s[0] < 1.0 / 3.0 && s[6] < 0.5, "{s:?}");
    }

    #[test]
    fn congestion_builds_then_every_source_decreases() {
        let c = fast_one();
        let mut l = ModelLoop::models(&c);
        l.run(60_000).unwrap();
        l.flush();
        assert!(
            l.max_depth[0] > c.topo.points[0].qeq,
            "the queue crosses Qeq"
        );
        assert!(l.msgs[0] > 0);
        let last = l.windows.last().unwrap();
        for (f, r) in last.rate_sum.iter().enumerate() {
            let r = r / last.len as f64;
            assert!(r < 0.75 * c.line_rate, "flow {f}: rate {r}");
        }
        // The port stays busy: the second half delivers at least 80 % of
        // the drain rate, and never more (up to the one frame whose credit
        // was earned before the half began).
        let half = &l.windows[l.windows.len() / 2..];
        let n: u64 = half.iter().map(|w| w.len).sum();
        let b: u64 = half.iter().flat_map(|w| w.delivered.iter()).sum();
        let thr = b as f64 / n as f64;
        let slack = c.frame_len as f64 / n as f64;
        assert!(thr >= 0.8 * 4.0 && thr <= 4.0 + slack, "throughput {thr}");
    }

    #[test]
    fn the_survivor_recovers_the_line_rate() {
        // The port drains at one host's line rate: congested while four
        // send, not when one is left; its limiter is removed.
        let mut c = fast_one();
        c.topo.points[0].drain = c.line_rate;
        c.stop = vec![Some(30_000), Some(30_000), Some(30_000), None];
        let mut l = ModelLoop::models(&c);
        l.run(30_000).unwrap();
        l.flush();
        let w = l.windows.last().unwrap();
        assert!(w.rate_sum[3] / (w.len as f64) < 0.75 * c.line_rate);
        l.run(200_000).unwrap();
        l.flush();
        let w = l.windows.last().unwrap();
        assert_eq!(w.rate_sum[3] / w.len as f64, c.line_rate, "limiter removed");
        assert!(w.delivered[3] as f64 / w.len as f64 > 0.9 * c.line_rate);
    }

    /// Frames of the hosts whose flows cross both points, sampled at the
    /// bottleneck with a tag naming it.
    fn own_tagged_at_bottleneck(shared: bool) -> usize {
        let c = short_two(shared);
        let mut l = ModelLoop::models(&c);
        l.record_outputs();
        l.run(20_000).unwrap();
        let both = SA_BASE..SA_BASE + 6;
        l.outputs
            .unwrap()
            .iter()
            .filter(|(cp, _)| cp[1].msg_rlt_own_o && both.contains(&cp[1].msg_sa_o))
            .count()
    }

    #[test]
    fn tags_naming_the_bottleneck_pass_the_upstream_point() {
        // Distinct CPIDs: the upstream point keeps the bottleneck's tags, so
        // the bottleneck sees (and answers) the tagged frames of the flows
        // crossing both points. One CPID for both (the rules before): the
        // upstream point strips every tag, the bottleneck never sees one.
        assert!(own_tagged_at_bottleneck(false) > 20);
        assert_eq!(own_tagged_at_bottleneck(true), 0);
    }
}
