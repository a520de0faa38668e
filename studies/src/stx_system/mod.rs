//! Slotted simulation of the OSMOSIS switch with speculative transmission
//! (STX), seed 004 section III: a thin driver around the switch composition
//! [`model::stx_switch::Switch`] — `N` input adapters
//! ([`model::stx_ingress::StxIngress`]), the central arbiter (the golden
//! [`model::arbiter::Arbiter`], or its verilated RTL, through
//! [`SwitchArbiter`]), `N` output adapters ([`model::stx_egress::StxEgress`])
//! and the four `RTT/2` paths. Every adapter decision (VOQs, RTX queues, the
//! STX policy, R1..R8, the delivery scheme, resequencing, duplicates) is
//! the block models' own; this module only feeds traffic in, watches the
//! ports and keeps the statistics.
//!
//! # What is watched
//!
//! Each arriving cell gets an id (a per-input counter, 16 bits on the
//! wire) and a record: arrival slot, output, its index in its VOQ. The
//! driver reads, every slot, the input adapters' outputs (refused arrivals,
//! grant classes, retransmissions, speculative sends), the arbiter's
//! outputs (ACKs, the crossbar configuration), the cells the crossbar hands
//! each output adapter with their fates, and the deliveries. A copy that
//! reaches its output `RTT` slots after its cell was sent speculatively is
//! the speculative copy (every path takes `RTT/2`, and a cell goes
//! speculatively at most once, R5).
//!
//! The checks that make a run trustworthy are asserted as it goes: every
//! delivery is the next cell of its VOQ (by id and sequence number), so
//! every cell is delivered exactly once and in order; a duplicate is a
//! retransmission of a speculative cell (R7). A copy an output adapter
//! drops beyond its window is an acknowledged cell lost ([`Stats::lost`]):
//! the switch's flow control (the arbiter's credits) prevents it, and only
//! the ablation without credits ([`Config::credits`] `Some(0)`) shows it.
//!
//! # Output links
//!
//! Every output link is ready in every slot unless [`Config::stall`] makes
//! each one unavailable for bursts of slots: a two-state chain per output
//! (stalled for a geometric number of slots of the given mean, a given
//! share of the time), drawn from its own stream of [`Config::stall_seed`],
//! so that runs that differ only in policy, scheme or flow control see the
//! same stalls.
//!
//! # Delay
//!
//! The delay of a cell is the slot it leaves its output adapter minus the
//! slot it arrived at its input adapter. Its *resequencing delay* is the
//! time from the arrival of its accepted copy at the output adapter to the
//! slot every predecessor of its VOQ is there too (what the analysis leaves
//! out); the rest of its stay at the output adapter is the wait for the
//! output link (round robin among the inputs whose next cell is there).

mod stats;
pub mod traffic;

use crate::rng::Rng;
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterParams, CRD_MAX};
use model::stx_egress::{StxEgress, StxEgressConfig, StxEgressParams};
use model::stx_ingress::{AckKind, StxIngress, StxIngressConfig, StxIngressParams};
use model::stx_switch::{StxSwitchParts, Switch};
use model::Block;
use std::collections::VecDeque;
use traffic::Traffic;

pub use model::stx_egress::{Fate, Scheme};
pub use model::stx_ingress::{GrantKind, Policy};
pub use model::stx_switch::SwitchArbiter;
pub use stats::{jain, mean_ci95, quantile, t975, Delivery, Event, Stats, BATCHES, HIST};

/// The golden arbiter model (the switch composition's default arbiter).
pub type ModelArbiter = Arbiter;

/// The arbiter variant and configuration a system needs: `N` ports (a power
/// of two, 2..=64), `R` receivers, `iters` iSLIP iterations, STX on or off,
/// crossbar delay `RTT`, the credits of [`Config::credit_pool`]. The counter
/// width is the widest verilated for `N` (see `docs/arbiter.md`); the clocks
/// per slot those of that variant when its slot holds `iters` iterations,
/// else one (the whole slot in one clock, as in the `stx_switch` RTL).
pub fn arbiter_setup(cfg: &Config) -> (ArbiterParams, ArbiterConfig) {
    let mut p = Arbiter::variants()
        .into_iter()
        .filter(|v| v.n == cfg.n)
        .max_by_key(|v| v.cw)
        .unwrap_or(ArbiterParams::new(cfg.n, 10));
    if (p.max_iter() as usize) < cfg.iters {
        p.k = 1;
    }
    let c = ArbiterConfig::new(cfg.r as u8, cfg.iters as u8, cfg.stx, cfg.rtt as u8)
        .with_credits(cfg.credit_pool());
    (p, c)
}

/// Output links unavailable for bursts of slots ([`Config::stall`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stall {
    /// Share of the slots each output link is stalled (0..1).
    pub share: f64,
    /// Mean length of a stall, slots (>= 1).
    pub mean: f64,
}

/// The golden arbiter for `cfg`.
pub fn model_arbiter(cfg: &Config) -> ModelArbiter {
    let (p, c) = arbiter_setup(cfg);
    Arbiter::check(&p, &c).expect("arbiter configuration");
    Arbiter::new(&p, &c)
}

/// A system's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Ports `N` (a power of two, 2..=64).
    pub n: usize,
    /// Receivers per output `R`.
    pub r: usize,
    /// Round trip in slots (even, 2..=126): `RTT/2` on each path.
    pub rtt: u64,
    /// Speculative transmission on.
    pub stx: bool,
    /// iSLIP iterations of the arbiter.
    pub iters: usize,
    /// STX policy of the input adapters.
    pub policy: Policy,
    /// Reliable-delivery scheme of both adapters.
    pub scheme: Scheme,
    /// VOQ depth `Q` of the input adapters (a power of two): an arrival
    /// into a full VOQ is refused and counted ([`Stats::arr_dropped`]).
    pub voq: usize,
    /// RTX queue entries per VOQ, `B_RTX`.
    pub b_rtx: usize,
    /// `B_RSQ` in the paper's sense: an STX needs
    /// `seq(head of VOQ) - seq(oldest unacknowledged) <= B_RSQ`
    /// (the input adapters' `cfg_win_i = B_RSQ + 1`, `docs/stx_ingress.md`).
    pub b_rsq: usize,
    /// RSQ slots per input at the output adapters (a power of two): they
    /// hold the cells out of order *and* those waiting for the output link.
    pub egress_b: usize,
    /// The arbiter's credits per output (flow control): `None`, the largest
    /// pool that loses no cell, `B - w` (`B` = [`Config::egress_b`],
    /// `w = B_RSQ + 1` the inputs' window); `Some(0)`, no flow control (the
    /// ablation that shows the loss); `Some(c)`, `c` (refused by
    /// [`Config::check`] when `c + w > B`).
    pub credits: Option<u16>,
    /// Output links stalled for bursts of slots (none: always ready).
    pub stall: Option<Stall>,
    /// Seed of the stalls.
    pub stall_seed: u64,
    /// The hot output of hot-spot traffic: [`Stats::other`] keeps the cells
    /// for the other outputs apart, and [`System::run_measured`] does not
    /// wait for the hot output's backlog.
    pub hot: Option<usize>,
    /// Statistics cover cells arriving, grants arriving and departures in
    /// slots `measure.0 .. measure.1`.
    pub measure: (u64, u64),
    /// Keep the per-cell delivery trace and the event log.
    pub trace: bool,
}

impl Config {
    /// `N` ports, `R` receivers, round trip `rtt`, STX on or off; 6 iSLIP
    /// iterations (as in the paper), OCF and selective retry (the paper's),
    /// `B_RTX = B_RSQ = RTT`, VOQs of 256 cells, output RSQs of 256 slots
    /// per input with the largest credit pool (`256 - RTT - 1`: they also
    /// hold the cells waiting for the output link, and a credit needs
    /// `2 RTT` to come back, see `docs/stx.md`), every output link ready,
    /// statistics over the whole run, no trace.
    pub fn new(n: usize, r: usize, rtt: u64, stx: bool) -> Self {
        Config {
            n,
            r,
            rtt,
            stx,
            iters: 6,
            policy: Policy::Ocf,
            scheme: Scheme::Sr,
            voq: 256,
            b_rtx: rtt as usize,
            b_rsq: rtt as usize,
            egress_b: 256,
            credits: None,
            stall: None,
            stall_seed: 0,
            hot: None,
            measure: (0, u64::MAX),
            trace: false,
        }
    }

    /// The inputs' STX window `cfg_win_i = B_RSQ + 1`.
    pub fn window(&self) -> usize {
        self.b_rsq + 1
    }

    /// The arbiter's credits per output ([`Config::credits`]).
    pub fn credit_pool(&self) -> u16 {
        self.credits.unwrap_or_else(|| {
            self.egress_b
                .saturating_sub(self.window())
                .min(CRD_MAX as usize) as u16
        })
    }

    /// Flow control on: every configuration but the ablation
    /// ([`Config::credits`] `Some(0)`).
    pub fn flow_control(&self) -> bool {
        self.credits != Some(0)
    }

    /// Whether the system can be built: the block models accept the sizes,
    /// and (with credits) no acknowledged cell can be lost (`C >= 1`,
    /// `C + w <= B`, `RTT <= 2^(SW-1)`, `docs/stx_switch.md`). The error is
    /// one line naming the field and the rule.
    pub fn check(&self) -> Result<(), String> {
        if !(self.n.is_power_of_two() && (2..=64).contains(&self.n)) {
            return Err(format!("N = {}: a power of two in 2..=64", self.n));
        }
        if self.rtt < 2 || !self.rtt.is_multiple_of(2) || self.rtt >= 128 {
            return Err(format!("RTT = {}: even, 2..=126", self.rtt));
        }
        if self.r == 0 {
            return Err("R = 0: at least one receiver".into());
        }
        if let Some(st) = self.stall {
            if !(0.0..1.0).contains(&st.share) || st.mean < 1.0 {
                return Err(format!(
                    "stall share {} (0..1), mean {} (>= 1 slot)",
                    st.share, st.mean
                ));
            }
        }
        let parts = self.try_parts()?;
        let r = if !self.flow_control() {
            parts.check_fit()
        } else {
            parts.check()
        };
        r.map_err(|e| e.to_string())
    }

    /// The switch's parts: the block models' parameters and configurations
    /// (model range, `StxIngressParams::check_model`), the arbiter of
    /// [`arbiter_setup`]. Panics with the parameter at fault if a size is
    /// outside the models' range ([`Config::check`] says it in one line).
    pub fn parts(&self) -> StxSwitchParts {
        self.try_parts().unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_parts(&self) -> Result<StxSwitchParts, String> {
        let (ap, ac) = arbiter_setup(self);
        let ow = self.n.trailing_zeros();
        let sw = 16 - ow;
        let cw = ap.cw.min(10);
        let ip = StxIngressParams {
            n: self.n,
            q: self.voq,
            rtt: self.b_rtx,
            sw,
            iw: 16,
            cw,
            cntw: 32,
            idx: 0,
        };
        let ic = StxIngressConfig {
            cfg_policy_i: self.policy.code(),
            cfg_scheme_i: self.scheme.code(),
            cfg_stx_en_i: self.stx,
            cfg_win_i: self.window() as u16,
            cfg_req_lim_i: ((1u32 << cw) - 1).min(255) as u8,
        };
        let ep = StxEgressParams {
            n: self.n,
            r: self.r,
            b: self.egress_b,
            sw,
            iw: 16,
            cntw: 32,
        };
        let ec = StxEgressConfig {
            cfg_scheme_i: self.scheme.code(),
        };
        if let Err(e) = StxIngress::new_model(&ip, &ic) {
            return Err(format!("input adapter: {e}"));
        }
        if let Err(e) = StxEgress::new_model(&ep, &ec) {
            return Err(format!("output adapter: {e}"));
        }
        Ok(StxSwitchParts {
            ingress: (ip, ic),
            arbiter: (ap, ac),
            egress: (ep, ec),
            rtt: self.rtt as usize,
        })
    }
}

/// What the driver knows of one cell.
#[derive(Clone, Copy, Debug, Default)]
struct Rec {
    /// Arrival slot.
    arr: u64,
    /// Output.
    j: usize,
    /// Index in its VOQ.
    seq: u64,
    /// Slot it was sent speculatively.
    spec_t: Option<u64>,
    /// Slot its accepted copy reached the output adapter, and whether it
    /// was the speculative one.
    acc: Option<(u64, bool)>,
    /// Delivered.
    done: bool,
    /// In its RTX queue.
    in_rtx: bool,
    /// Slot it was last sent (a copy may reach its output until `RTT` later).
    last_send: u64,
}

/// A cell on the link from an input to the crossbar (the driver's view of
/// the upstream path, for the event log and the phantom count).
#[derive(Clone, Copy, Debug)]
struct Sent {
    j: usize,
    id: u16,
    spec: bool,
}

/// The switch around arbiter `A`, with its traffic bookkeeping.
pub struct System<A: SwitchArbiter> {
    cfg: Config,
    sw: Switch<A>,
    t: u64,
    d: usize,
    /// Per input: records of the cells not yet done, oldest first; the
    /// front's id counter.
    recs: Vec<VecDeque<Rec>>,
    base: Vec<u64>,
    /// Per (input, output): cells taken, cells delivered.
    taken: Vec<u64>,
    departed: Vec<u64>,
    /// Per (input, output): the slot its last delivered cell became in order.
    inorder: Vec<u64>,
    /// The cells each input sent, `d` slots deep (oldest first).
    up: VecDeque<Vec<Option<Sent>>>,
    /// The arbiter's grants, `d` slots deep.
    down: VecDeque<Vec<Option<usize>>>,
    /// ACKs on their way down: (slot due, input, output, seq, id).
    acks: VecDeque<(u64, usize, usize, u64, u16)>,
    arr: Vec<Option<(usize, u16)>>,
    ready: Vec<bool>,
    stats: Stats,
    deliveries: Vec<Delivery>,
    events: Vec<Event>,
    hash: u64,
    grant_hash: u64,
    in_system: u64,
    /// Measured cells for outputs other than the hot one (all when none).
    other_cells: u64,
    /// The output links' stalls: their stream, and per output stalled now.
    stall_rng: Rng,
    stalled: Vec<bool>,
}

/// The stream of the output links' stalls.
const STALL_STREAM: u64 = 0x57a11;

/// The few outputs of an input adapter the driver reads.
#[derive(Clone, Copy, Debug)]
struct InView {
    ack_kind_o: u8,
    gnt_kind_o: u8,
    cell_valid_o: bool,
    cell_out_o: u8,
    cell_id_o: u16,
    cell_spec_o: bool,
    cell_retx_o: bool,
}

impl InView {
    fn of(o: &model::stx_ingress::StxIngressOutputs) -> Self {
        InView {
            ack_kind_o: o.ack_kind_o,
            gnt_kind_o: o.gnt_kind_o,
            cell_valid_o: o.cell_valid_o,
            cell_out_o: o.cell_out_o,
            cell_id_o: o.cell_id_o,
            cell_spec_o: o.cell_spec_o,
            cell_retx_o: o.cell_retx_o,
        }
    }
}

fn fnv(h: &mut u64, x: u64) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
}

impl System<ModelArbiter> {
    /// The system around the golden arbiter.
    pub fn with_model(cfg: Config) -> Self {
        let a = model_arbiter(&cfg);
        System::new(cfg, a)
    }
}

impl<A: SwitchArbiter> System<A> {
    /// A system, empty, at slot 0. The arbiter must be configured as
    /// [`arbiter_setup`] says and be in its reset state. Panics when
    /// [`Config::check`] refuses `cfg`.
    pub fn new(cfg: Config, arb: A) -> Self {
        let n = cfg.n;
        if let Err(e) = cfg.check() {
            panic!("{e}");
        }
        let parts = cfg.parts();
        let sw = if !cfg.flow_control() {
            Switch::without_flow_control(&parts, arb)
        } else {
            Switch::from_parts(&parts, arb)
        }
        .unwrap_or_else(|e| panic!("switch: {e}"));
        let d = (cfg.rtt / 2) as usize;
        System {
            sw,
            t: 0,
            d,
            recs: vec![VecDeque::new(); n],
            base: vec![0; n],
            taken: vec![0; n * n],
            departed: vec![0; n * n],
            inorder: vec![0; n * n],
            up: (0..d).map(|_| vec![None; n]).collect(),
            down: (0..d).map(|_| vec![None; n]).collect(),
            acks: VecDeque::new(),
            arr: vec![None; n],
            ready: vec![true; n],
            stats: Stats {
                n,
                slots: cfg.measure.1.saturating_sub(cfg.measure.0),
                batches: vec![(0, 0); BATCHES],
                hist: vec![0; HIST],
                per_input: vec![(0, 0); n],
                per_output: vec![0; n],
                other_hist: vec![0; HIST],
                ..Stats::default()
            },
            deliveries: Vec::new(),
            events: Vec::new(),
            hash: 0xCBF2_9CE4_8422_2325,
            grant_hash: 0xCBF2_9CE4_8422_2325,
            in_system: 0,
            other_cells: 0,
            stall_rng: Rng::new(cfg.stall_seed, STALL_STREAM),
            stalled: vec![false; n],
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// The next slot to simulate.
    pub fn slot(&self) -> u64 {
        self.t
    }
    /// The statistics so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The delivery trace (with [`Config::trace`]).
    pub fn deliveries(&self) -> &[Delivery] {
        &self.deliveries
    }
    /// The event log (with [`Config::trace`]).
    pub fn events(&self) -> &[Event] {
        &self.events
    }
    /// Hash of the whole delivery trace and grant classification.
    pub fn trace_hash(&self) -> u64 {
        self.hash
    }
    /// Hash of the arbiter's grants, slot by slot.
    pub fn grant_hash(&self) -> u64 {
        self.grant_hash
    }
    /// Cells taken that have not left their output adapter.
    pub fn in_system(&self) -> u64 {
        self.in_system
    }
    /// The switch composition.
    pub fn switch(&self) -> &Switch<A> {
        &self.sw
    }
    /// The arbiter.
    pub fn arbiter(&self) -> &A {
        self.sw.arbiter()
    }
    /// Current occupancy of the RTX queue of VOQ (`i`, `j`).
    pub fn rtx_len(&self, i: usize, j: usize) -> usize {
        self.sw.ingress(i).rtx_len(j)
    }
    /// Cells output `j` holds for input `i`.
    pub fn rsq_len(&self, j: usize, i: usize) -> usize {
        self.sw.egress(j).occupancy(i)
    }

    fn in_window(&self, t: u64) -> bool {
        (self.cfg.measure.0..self.cfg.measure.1).contains(&t)
    }

    fn log(&mut self, e: Event) {
        if self.cfg.trace {
            self.events.push(e);
        }
    }

    fn rec(&mut self, i: usize, id: u16) -> &mut Rec {
        let k = (id.wrapping_sub(self.base[i] as u16)) as usize;
        &mut self.recs[i][k]
    }

    /// Runs `slots` slots with `traffic`.
    pub fn run(&mut self, traffic: &mut dyn Traffic, slots: u64) {
        for _ in 0..slots {
            self.step(traffic);
        }
    }

    /// Runs up to the end of the measurement window, then on with the same
    /// traffic until every measured cell has left (with a hot output
    /// [`Config::hot`]: every measured cell for the other outputs): true,
    /// or `cap` slots in all have passed, or a cell was lost and the window
    /// is over: false.
    pub fn run_measured(&mut self, traffic: &mut dyn Traffic, cap: u64) -> bool {
        let done = |s: &Self| {
            if s.cfg.hot.is_some() {
                s.stats.other.0 == s.other_cells
            } else {
                s.stats.delivered == s.stats.cells
            }
        };
        while self.t < cap {
            if self.t >= self.cfg.measure.1 && (done(self) || self.stats.lost > 0) {
                return done(self);
            }
            self.step(traffic);
        }
        done(self)
    }

    /// Runs without arrivals until every cell has left (true) or `max`
    /// slots have passed (false).
    pub fn drain(&mut self, max: u64) -> bool {
        let mut silence = traffic::Silence;
        for _ in 0..max {
            if self.is_empty() {
                return true;
            }
            self.step(&mut silence);
        }
        self.is_empty()
    }

    /// Whether every cell has left and every RTX queue is empty (the ACKs
    /// or grants of the last speculative cells have come back).
    pub fn is_empty(&self) -> bool {
        self.in_system == 0
            && (0..self.cfg.n).all(|i| (0..self.cfg.n).all(|j| self.sw.ingress(i).rtx_len(j) == 0))
    }

    /// Per (input, output): cells taken and cells delivered in order.
    pub fn counts(&self, i: usize, j: usize) -> (u64, u64) {
        let k = i * self.cfg.n + j;
        (self.taken[k], self.departed[k])
    }

    /// One slot.
    // The input loop indexes the arrivals, the records and the cells sent.
    #[allow(clippy::needless_range_loop)]
    pub fn step(&mut self, traffic: &mut dyn Traffic) {
        let t = self.t;
        let n = self.cfg.n;
        let rtt = self.cfg.rtt;
        let win = self.in_window(t);

        // Arrivals: ids are per-input counters.
        for i in 0..n {
            self.arr[i] = traffic.arrival(i, t).map(|j| {
                assert!(j < n, "traffic output {j} out of range");
                (j, (self.base[i] + self.recs[i].len() as u64) as u16)
            });
        }
        // Output links: stalled in bursts.
        if let Some(st) = self.cfg.stall {
            let leave = 1.0 / st.mean;
            let enter = leave * st.share / (1.0 - st.share);
            for j in 0..n {
                let p = if self.stalled[j] { leave } else { enter };
                if self.stall_rng.chance(p) {
                    self.stalled[j] = !self.stalled[j];
                }
                self.ready[j] = !self.stalled[j];
            }
        }
        self.sw.cycle(&self.arr, &self.ready);

        // 1. Input adapters.
        let mut sent_now = vec![None; n];
        for i in 0..n {
            if let Some((j, _)) = self.arr[i] {
                if self.sw.dropped(i) {
                    if win {
                        self.stats.arr_dropped += 1;
                    }
                    self.log(Event::Refused { t, i, j });
                } else {
                    let k = i * n + j;
                    let seq = self.taken[k];
                    self.taken[k] += 1;
                    assert!(
                        self.recs[i].len() < 1 << 16,
                        "input {i}: 2^16 cells in the switch"
                    );
                    self.recs[i].push_back(Rec {
                        arr: t,
                        j,
                        seq,
                        ..Rec::default()
                    });
                    self.in_system += 1;
                    if win {
                        self.stats.cells += 1;
                        if self.cfg.hot != Some(j) {
                            self.other_cells += 1;
                        }
                    }
                    self.log(Event::Arrive { t, i, j, seq });
                    let v = self.sw.ingress(i).voq_len(j);
                    self.stats.voq_max = self.stats.voq_max.max(v);
                }
            }
            let o = InView::of(self.sw.ingress_out(i));
            // The ACK reaching the input now (sent by the arbiter d ago).
            let ack = AckKind::from_code(o.ack_kind_o);
            if ack != AckKind::None {
                let (due, ai, aj, aseq, aid) = self.acks.pop_front().expect("an ACK on its way");
                assert_eq!((due, ai), (t, i), "ACK timing");
                if ack == AckKind::Taken {
                    self.rec(i, aid).in_rtx = false;
                }
                if win && ack == AckKind::Void {
                    self.stats.ack_void += 1;
                }
                self.log(Event::Ack {
                    t,
                    i,
                    j: aj,
                    seq: aseq,
                    kind: ack,
                });
            }
            // The grant reaching the input now (issued d ago).
            let kind = GrantKind::from_code(o.gnt_kind_o);
            if kind != GrantKind::None {
                let j = self.down[0][i].expect("a grant on its way");
                let seq = (kind != GrantKind::Wasted).then(|| {
                    assert_eq!(o.cell_out_o as usize, j, "grant's cell for its VOQ");
                    let r = self.rec(i, o.cell_id_o);
                    assert_eq!(
                        r.in_rtx, o.cell_retx_o,
                        "slot {t}: retransmission of a cell not in RTX"
                    );
                    r.in_rtx = false;
                    r.last_send = t;
                    r.seq
                });
                fnv(&mut self.hash, (t << 16) ^ ((i as u64) << 8) ^ j as u64);
                fnv(&mut self.hash, kind as u64);
                if win {
                    self.stats.grants += 1;
                    match kind {
                        GrantKind::Regular => self.stats.regular += 1,
                        GrantKind::Spurious => self.stats.spurious += 1,
                        GrantKind::Wasted => self.stats.wasted += 1,
                        GrantKind::None => {}
                    }
                    if o.cell_retx_o {
                        self.stats.retx += 1;
                    }
                }
                self.log(Event::Grant {
                    t,
                    i,
                    j,
                    kind,
                    seq,
                    retx: o.cell_retx_o,
                });
            } else {
                assert!(self.down[0][i].is_none(), "slot {t}: grant to {i} lost");
            }
            if o.cell_valid_o {
                let j = o.cell_out_o as usize;
                if win {
                    self.stats.copies += 1;
                }
                sent_now[i] = Some(Sent {
                    j,
                    id: o.cell_id_o,
                    spec: o.cell_spec_o,
                });
                if o.cell_spec_o {
                    let r = self.rec(i, o.cell_id_o);
                    assert!(r.spec_t.is_none(), "a cell goes speculatively once (R5)");
                    r.spec_t = Some(t);
                    r.in_rtx = true;
                    r.last_send = t;
                    let (arr, seq) = (r.arr, r.seq);
                    if self.in_window(arr) {
                        self.stats.spec_sent += 1;
                    }
                    let x = self.sw.ingress(i).rtx_len(j);
                    self.stats.rtx_max = self.stats.rtx_max.max(x);
                    self.log(Event::Stx { t, i, j, seq });
                }
            }
        }

        // 2. Arbiter and crossbar: the cells sent d slots ago.
        let a = self.sw.arbiter_out();
        self.stats.req_dropped += a.req_drop_o.iter().filter(|&&x| x).count() as u64;
        if win {
            self.stats.acks += a.ack_valid_o.iter().filter(|&&x| x).count() as u64;
            let c = self.sw.parts().arbiter.1.cfg_crd_i;
            if c != 0 {
                self.stats.crd_full += a.crd_o.iter().filter(|&&u| u == c).count() as u64;
            }
        }
        let mut grants_now = vec![None; n];
        for (i, g) in grants_now.iter_mut().enumerate() {
            if a.gnt_valid_o[i] {
                *g = Some(a.gnt_out_o[i] as usize);
                fnv(
                    &mut self.grant_hash,
                    (t << 16) ^ ((i as u64) << 8) ^ a.gnt_out_o[i] as u64,
                );
            }
        }
        let xb_arb: Vec<bool> = a.xb_arb_o.clone();
        let acked: Vec<bool> = a.ack_valid_o.clone();
        let at_xb = self.up.pop_front().expect("upstream path");
        // Outputs whose reserved arbitrated receiver gets no cell.
        let mut phantom = xb_arb;
        for s in at_xb.iter().flatten() {
            if !s.spec {
                phantom[s.j] = false;
            }
        }
        for (i, s) in at_xb.iter().enumerate() {
            let Some(s) = *s else { continue };
            if !s.spec {
                assert!(!self.sw.xb_dropped(i), "slot {t}: arbitrated cell lost");
                continue;
            }
            let (arr, seq) = {
                let r = self.rec(i, s.id);
                (r.arr, r.seq)
            };
            if acked[i] {
                assert!(!self.sw.xb_dropped(i), "slot {t}: acknowledged cell lost");
                self.acks.push_back((t + self.d as u64, i, s.j, seq, s.id));
                self.log(Event::XbarWin { t, i, j: s.j, seq });
            } else if self.sw.xb_dropped(i) {
                if phantom[s.j] && self.in_window(arr) {
                    self.stats.spec_lost_to_wasted += 1;
                }
                self.log(Event::XbarLoss { t, i, j: s.j, seq });
            } else {
                // The crossbar connects i to j for i's own arbitrated cell
                // (a grant of RTT ago that turned out wasted, R8): the
                // speculative cell passes on that connection, without an
                // ACK (it stays in its RTX queue; its grant sends it again).
                if self.in_window(arr) {
                    self.stats.spec_on_own_phantom += 1;
                }
                self.log(Event::XbarPass { t, i, j: s.j, seq });
            }
        }
        self.up.push_back(sent_now);
        self.down.pop_front();
        self.down.push_back(grants_now);

        // 3. Output adapters: the copies arriving, their fates; deliveries.
        let mut copies = Vec::new();
        for j in 0..n {
            // (input, id, fate) of each copy reaching output j now.
            copies.clear();
            let (ei, eo) = (self.sw.egress_in(j), self.sw.egress_out(j));
            for k in 0..ei.arr_valid_i.len() {
                if ei.arr_valid_i[k] {
                    copies.push((
                        ei.arr_src_i[k] as usize,
                        ei.arr_id_i[k],
                        Fate::from_code(eo.arr_fate_o[k]),
                    ));
                }
            }
            let dlv = eo
                .dlv_valid_o
                .then_some((eo.dlv_src_o as usize, eo.dlv_seq_o, eo.dlv_id_o));
            for &(i, id, fate) in &copies {
                let r = *self.rec(i, id);
                assert_eq!(r.j, j, "slot {t}: copy of ({i}, id) at the wrong output");
                let spec = r.spec_t == Some(t - rtt);
                match fate {
                    Fate::Delivered | Fate::InOrder | Fate::OutOfOrder => {
                        assert!(
                            r.acc.is_none(),
                            "slot {t}: cell ({i},{j},{}) accepted twice",
                            r.seq
                        );
                        self.rec(i, id).acc = Some((t, spec));
                        if fate != Fate::Delivered {
                            let h = self.sw.egress(j).occupancy(i);
                            self.stats.rsq_max = self.stats.rsq_max.max(h);
                        }
                    }
                    Fate::Duplicate => {
                        assert!(
                            r.spec_t.is_some() && !spec,
                            "slot {t}: duplicate ({i},{j},{}) is not a retransmission of a \
                             speculative cell (R7)",
                            r.seq
                        );
                        if win {
                            self.stats.dup_dropped += 1;
                        }
                    }
                    Fate::OutOfWindow => {
                        // Beyond the window (B or more ahead of the head
                        // after this slot's delivery): an acknowledged or
                        // granted cell nothing sends again, lost; under SR
                        // its VOQ's later cells wait for it at the output
                        // for ever. Counted; the run stops at the end of
                        // the window (`run_measured`). Else (GBN, SAW) a
                        // copy discarded out of order, sent again.
                        let k = i * n + j;
                        let moved = dlv.is_some_and(|d| d.0 == i);
                        let head = self.departed[k] + u64::from(moved);
                        if r.seq >= head + self.cfg.egress_b as u64 {
                            self.stats.lost += 1;
                        } else if win {
                            self.stats.discarded += 1;
                        }
                    }
                    f => panic!("slot {t}: fate {f:?} at output {j}"),
                }
                self.log(Event::OutArrive {
                    t,
                    i,
                    j,
                    seq: r.seq,
                    spec,
                    fate,
                });
            }
            if let Some((i, seq, id)) = dlv {
                self.deliver(t, j, i, seq, id);
            }
        }
        // Records retire when no copy of their cell can appear any more.
        for i in 0..n {
            while self.recs[i]
                .front()
                .is_some_and(|x| x.done && !x.in_rtx && x.last_send + rtt < t)
            {
                self.recs[i].pop_front();
                self.base[i] += 1;
            }
        }
        self.t += 1;
    }

    fn deliver(&mut self, t: u64, j: usize, i: usize, wire_seq: u16, id: u16) {
        let n = self.cfg.n;
        let sw_mod = 1u64 << self.sw.parts().ingress.0.sw;
        let r = *self.rec(i, id);
        let k = i * n + j;
        assert!(
            !r.done && r.j == j && r.seq == self.departed[k] && wire_seq as u64 == r.seq % sw_mod,
            "slot {t}: output {j} delivers ({i}, seq {wire_seq}, id {id}), expected cell {} of VOQ ({i},{j})",
            self.departed[k]
        );
        let (acc_t, spec) = r.acc.expect("delivered cell accepted");
        self.departed[k] += 1;
        let ready = acc_t.max(self.inorder[k]);
        self.inorder[k] = ready;
        self.rec(i, id).done = true;
        self.in_system -= 1;
        let delay = t - r.arr;
        let s = &mut self.stats;
        if self.cfg.measure.0 <= t && t < self.cfg.measure.1 {
            s.departures += 1;
            s.per_output[j] += 1;
        }
        if (self.cfg.measure.0..self.cfg.measure.1).contains(&r.arr) {
            let bin = (delay as usize).min(HIST - 1);
            s.hist[bin] += 1;
            s.per_input[i].0 += 1;
            s.per_input[i].1 += delay;
            if self.cfg.hot != Some(j) {
                s.other.0 += 1;
                s.other.1 += delay;
                s.other_hist[bin] += 1;
            }
            s.delivered += 1;
            s.delay_sum += delay;
            s.delay_sq_sum += (delay as u128) * (delay as u128);
            s.delay_max = s.delay_max.max(delay);
            s.reseq_sum += ready - acc_t;
            if spec {
                s.spec_ok += 1;
            }
            let (m0, m1) = self.cfg.measure;
            let b = ((r.arr - m0) as u128 * BATCHES as u128 / (m1 - m0) as u128) as usize;
            s.batches[b].0 += delay;
            s.batches[b].1 += 1;
        }
        fnv(
            &mut self.hash,
            (t << 24) ^ ((i as u64) << 16) ^ ((j as u64) << 8),
        );
        fnv(&mut self.hash, r.seq ^ ((spec as u64) << 63));
        if self.cfg.trace {
            self.deliveries.push(Delivery {
                t,
                i,
                j,
                seq: r.seq,
                arr: r.arr,
                spec,
            });
        }
    }
}

#[cfg(test)]
mod tests;
