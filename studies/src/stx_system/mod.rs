//! Slotted simulation of the OSMOSIS switch with speculative transmission
//! (STX), seed 004 section III, around the central arbiter
//! ([`model::arbiter`], or its RTL through the same [`SlotArbiter`] trait).
//!
//! # The system
//!
//! - `N` **input adapters**, each with a VOQ per output, a retransmission
//!   (RTX) queue per VOQ of `B_RTX = RTT` cells and a sequence-number counter
//!   per VOQ. A cell arriving is put in its VOQ and reported to the arbiter
//!   at once (R1) — unless the VOQ already has `2^CW - 1` requests
//!   outstanding (the arbiter's counter limit, `docs/arbiter.md`): then the
//!   request waits in the adapter and goes in the first slot the limit
//!   allows (one request per input per slot, oldest first). In a slot
//!   without a grant, or with a wasted one (R2, R8), the adapter sends the oldest eligible cell speculatively (oldest cell
//!   first, OCF): it moves from the VOQ to the RTX queue and goes to the
//!   crossbar with a speculative request (SRQ) to the arbiter. Each cell is
//!   sent speculatively at most once (R5). A cell is eligible if its VOQ's
//!   RTX queue is not full and `seq(HOL of VOQ) - seq(HOL of RTX) <= B_RSQ`
//!   (section III-D.4). A speculative cell stays in the RTX queue until its
//!   ACK arrives or a grant of its VOQ takes it (R6). A grant takes the
//!   oldest cell of the RTX queue, else the head of the VOQ; the k-th grant
//!   of a VOQ is *regular* if it carries the VOQ's k-th cell, *spurious* if
//!   another, *wasted* if there is nothing to send (R7, R8).
//! - The **arbiter** (any [`SlotArbiter`]) matches the requests (iSLIP) and
//!   resolves the SRQs against the arbitrated cells in the crossbar (R3, R4).
//! - The **crossbar** passes every arbitrated cell and the speculative cells
//!   the arbiter acknowledged; the other speculative cells are lost.
//! - `N` **output adapters**, each with a resequencing queue (RSQ) of
//!   `B_RSQ = RTT` cells per input: a cell whose sequence number is below
//!   the next expected one, or already in the RSQ, is a duplicate and is
//!   dropped; the others wait in the RSQ until their predecessors are in.
//!   In-order cells join the output queue (unbounded, as in the paper), which
//!   sends one cell per slot to the output port.
//!
//! # Timing (all four paths `RTT/2`, as in the paper's section IV)
//!
//! With `d = RTT/2`, a cell arriving at an input in slot `t`:
//!
//! - its request reaches the arbiter in slot `t + d` and may be granted in
//!   that slot; the grant reaches the input in `t + 2d` and the cell is sent
//!   in that same slot, is in the crossbar in `t + 3d` and at the output in
//!   `t + 4d`: `2 RTT` without contention. The arbiter is configured with a
//!   crossbar delay `D = RTT` (grant to crossbar).
//! - sent speculatively in slot `s >= t` (at the earliest in its arrival
//!   slot), it is in the crossbar with its SRQ at the arbiter in `s + d`,
//!   its ACK (if it won) is back at the input in `s + 2d`, the cell at the
//!   output in `s + 2d`: `RTT` without contention.
//!
//! Order inside a slot at an input: the arriving cell is queued (and
//! requested), then the ACKs of the slot are applied, then the grant, then
//! the speculative choice. (ACKs before grants: a grant that arrives in the
//! same slot as the ACK of its cell finds it gone.) At an output: cells
//! arriving in a slot are handled by increasing input index; then one cell
//! of the output queue departs; a cell arriving at an empty output queue
//! departs in the same slot.
//!
//! # Delay
//!
//! The delay of a cell is the slot it departs from its output adapter minus
//! the slot it arrived at its input adapter: it includes the resequencing
//! delay and the output-queue wait.

pub mod traffic;

use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use model::Block;
use std::collections::VecDeque;
use traffic::Traffic;

/// What a [`SlotArbiter`] returns for one slot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotOutcome {
    /// Per input: the output it is granted in this slot's matching.
    pub grants: Vec<Option<usize>>,
    /// Per input: the (16-bit) sequence number of its SRQ of this slot, if
    /// that speculative cell won.
    pub acks: Vec<Option<u16>>,
    /// Per output: the input whose arbitrated cell is in the crossbar in this
    /// slot (the matching of `D` slots ago).
    pub xb_arb: Vec<Option<usize>>,
    /// Per output: the inputs it receives in this slot (bit mask).
    pub xb_mask: Vec<u64>,
    /// Requests the arbiter dropped (saturated counters) in this slot.
    pub dropped: usize,
}

impl SlotOutcome {
    /// An empty outcome for `n` ports.
    pub fn new(n: usize) -> Self {
        SlotOutcome {
            grants: vec![None; n],
            acks: vec![None; n],
            xb_arb: vec![None; n],
            xb_mask: vec![0; n],
            dropped: 0,
        }
    }
}

/// The central arbiter as the system sees it: one call per slot.
pub trait SlotArbiter {
    /// One slot. `reqs[i]`: input `i` reports a new cell for that output;
    /// `srqs[i]`: input `i`'s speculative cell for that output, with that
    /// sequence number, is in the crossbar in this slot. Fills `out`.
    fn slot(
        &mut self,
        reqs: &[Option<usize>],
        srqs: &[Option<(usize, u16)>],
        out: &mut SlotOutcome,
    );
}

/// Packs a slot's requests and SRQs into the arbiter's input ports.
pub fn arbiter_inputs(
    inp: &mut ArbiterInputs,
    reqs: &[Option<usize>],
    srqs: &[Option<(usize, u16)>],
) {
    for (i, r) in reqs.iter().enumerate() {
        inp.req_valid_i[i] = r.is_some();
        inp.req_out_i[i] = r.unwrap_or(0) as u8;
    }
    for (i, s) in srqs.iter().enumerate() {
        inp.spec_valid_i[i] = s.is_some();
        inp.spec_out_i[i] = s.map_or(0, |(j, _)| j as u8);
        inp.spec_seq_i[i] = s.map_or(0, |(_, q)| q);
    }
}

/// Reads the arbiter's output ports into a [`SlotOutcome`].
pub fn arbiter_outcome(o: &ArbiterOutputs, srqs: &[Option<(usize, u16)>], out: &mut SlotOutcome) {
    let n = o.gnt_valid_o.len();
    let mut winners = vec![0u64; n];
    for (i, srq) in srqs.iter().enumerate().take(n) {
        out.grants[i] = o.grant(i);
        out.acks[i] = o.ack(i);
        if let (Some(_), Some((j, _))) = (out.acks[i], srq) {
            winners[*j] |= 1 << i;
        }
    }
    for (j, w) in winners.iter().enumerate() {
        out.xb_mask[j] = o.xb_mask_o[j];
        out.xb_arb[j] = if o.xb_arb_o[j] {
            let rest = o.xb_mask_o[j] & !w;
            (rest != 0).then(|| rest.trailing_zeros() as usize)
        } else {
            None
        };
    }
    out.dropped = o.req_drop_o.iter().filter(|&&d| d).count();
}

/// The golden arbiter model behind [`SlotArbiter`]: one `step` per slot.
#[derive(Clone, Debug)]
pub struct ModelArbiter {
    arb: Arbiter,
    inp: ArbiterInputs,
}

impl ModelArbiter {
    /// The model for `p` and `c` (checked).
    pub fn new(p: &ArbiterParams, c: &ArbiterConfig) -> Self {
        Arbiter::check(p, c).expect("arbiter configuration");
        ModelArbiter {
            arb: Arbiter::new(p, c),
            inp: ArbiterInputs::idle(p),
        }
    }
    /// The underlying model.
    pub fn arbiter(&self) -> &Arbiter {
        &self.arb
    }
    /// The port inputs of the last slot.
    pub fn last_inputs(&self) -> &ArbiterInputs {
        &self.inp
    }
}

impl SlotArbiter for ModelArbiter {
    fn slot(
        &mut self,
        reqs: &[Option<usize>],
        srqs: &[Option<(usize, u16)>],
        out: &mut SlotOutcome,
    ) {
        arbiter_inputs(&mut self.inp, reqs, srqs);
        let o = self.arb.step(&self.inp);
        arbiter_outcome(&o, srqs, out);
    }
}

/// The arbiter variant and configuration a system needs: `N` ports (a power
/// of two, 2..=64), `R` receivers, `iters` iSLIP iterations, STX on or off,
/// crossbar delay `RTT`. The counter width is the widest verilated one for
/// `N` (see `docs/arbiter.md`).
pub fn arbiter_setup(cfg: &Config) -> (ArbiterParams, ArbiterConfig) {
    let p = Arbiter::variants()
        .into_iter()
        .filter(|v| v.n == cfg.n)
        .max_by_key(|v| v.cw)
        .unwrap_or(ArbiterParams::new(cfg.n, 10));
    let c = ArbiterConfig::new(cfg.r as u8, cfg.iters as u8, cfg.stx, cfg.rtt as u8);
    (p, c)
}

/// A system's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Ports `N`.
    pub n: usize,
    /// Receivers per output `R`.
    pub r: usize,
    /// Round trip in slots (even, 2..=126): `RTT/2` on each path.
    pub rtt: u64,
    /// Speculative transmission on.
    pub stx: bool,
    /// iSLIP iterations of the arbiter.
    pub iters: usize,
    /// Statistics cover cells arriving, grants arriving and departures in
    /// slots `measure.0 .. measure.1`.
    pub measure: (u64, u64),
    /// Keep the per-cell delivery trace and the event log.
    pub trace: bool,
    /// Most requests a VOQ may have outstanding (the arbiter's counter
    /// maximum `2^CW - 1`).
    pub req_limit: u64,
}

impl Config {
    /// `N` ports, `R` receivers, round trip `rtt`, STX on or off; 6 iSLIP
    /// iterations (as in the paper), statistics over the whole run, no
    /// trace, the request limit of the arbiter variant of [`arbiter_setup`].
    pub fn new(n: usize, r: usize, rtt: u64, stx: bool) -> Self {
        let mut c = Config {
            n,
            r,
            rtt,
            stx,
            iters: 6,
            measure: (0, u64::MAX),
            trace: false,
            req_limit: 0,
        };
        c.req_limit = arbiter_setup(&c).0.cnt_max() as u64;
        c
    }

    /// `B_RTX = B_RSQ = RTT`.
    pub fn window(&self) -> usize {
        self.rtt as usize
    }
}

/// The class of a grant at its input (R8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GrantKind {
    /// Used by the cell that requested it.
    Regular,
    /// Used by another cell of the VOQ.
    Spurious,
    /// Nothing to send: the VOQ and its RTX queue are empty.
    Wasted,
}

/// What happened to a cell arriving at an output adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fate {
    /// The next expected cell: released at once (with any successors waiting
    /// in the RSQ).
    InOrder,
    /// Out of order: stored in the RSQ.
    Stored,
    /// A copy of a cell already received: dropped.
    Duplicate,
}

/// One event of the event log (with [`Config::trace`]). Fields: `t` the
/// slot, `i` the input, `j` the output, `seq` the cell's sequence number in
/// its VOQ.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A cell arrives at input `i` for output `j` and is requested (R1).
    Arrive {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// Input `i` sends cell `seq` speculatively, with an SRQ.
    Stx {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// The ACK of cell `seq` reaches input `i`.
    Ack {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// A grant for VOQ (`i`, `j`) reaches input `i`; `seq` is the cell it
    /// sends, `retx` whether that cell came from the RTX queue.
    Grant {
        t: u64,
        i: usize,
        j: usize,
        kind: GrantKind,
        seq: Option<u64>,
        retx: bool,
    },
    /// The arbiter acknowledges speculative cell `seq` in the crossbar.
    XbarWin {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// Speculative cell `seq` loses in the crossbar and is dropped.
    XbarLoss {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// A copy of cell (`i`, `j`, `seq`) reaches output `j`.
    OutArrive {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
        spec: bool,
        fate: Fate,
    },
}

/// One cell leaving its output adapter (the delivery trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// Departure slot.
    pub t: u64,
    /// Input.
    pub i: usize,
    /// Output.
    pub j: usize,
    /// Sequence number of VOQ (`i`, `j`).
    pub seq: u64,
    /// Arrival slot at the input.
    pub arr: u64,
    /// The copy received was the speculative one.
    pub spec: bool,
}

/// Measured figures. Cells are counted if they arrived in the measurement
/// window; grants if they reached their input in it; departures and
/// duplicates if they happened in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Slots of the measurement window.
    pub slots: u64,
    /// Ports.
    pub n: usize,
    /// Cells arrived in the window.
    pub cells: u64,
    /// Of those, delivered (by the end of the run).
    pub delivered: u64,
    /// Sum of their delays.
    pub delay_sum: u64,
    /// Sum of their squared delays.
    pub delay_sq_sum: u128,
    /// Largest delay.
    pub delay_max: u64,
    /// Sum of the slots they spent in an RSQ.
    pub reseq_sum: u64,
    /// Of the cells, sent speculatively.
    pub spec_sent: u64,
    /// Of the cells, delivered through their speculative copy.
    pub spec_ok: u64,
    /// Of the cells, speculative copies lost at an output whose arbitrated
    /// receiver was reserved by a grant that turned out wasted (no cell
    /// came): the arbiter cannot know a grant will be wasted.
    pub spec_lost_to_wasted: u64,
    /// Departures in the window (all cells).
    pub departures: u64,
    /// Grants reaching their input in the window.
    pub grants: u64,
    /// Of those, regular.
    pub regular: u64,
    /// Of those, spurious.
    pub spurious: u64,
    /// Of those, wasted.
    pub wasted: u64,
    /// Grants in the window that retransmitted a speculative cell from its
    /// RTX queue.
    pub retx: u64,
    /// Duplicate copies dropped by the output adapters in the window (the
    /// retransmissions of speculative cells that had won, R7).
    pub dup_dropped: u64,
    /// Largest RSQ occupancy seen (any time).
    pub rsq_max: usize,
    /// Largest RTX occupancy seen (any time).
    pub rtx_max: usize,
    /// RSQ insertions beyond `B_RSQ` (any time; must stay 0).
    pub rsq_overflow: u64,
    /// Requests dropped by the arbiter (any time; must stay 0).
    pub req_dropped: u64,
    /// Slots in which an input held back a request (counter limit, or more
    /// than one request waiting), any time.
    pub req_deferred: u64,
    /// Cells departing out of sequence (any time; must stay 0).
    pub order_errors: u64,
    /// Batch means: the measurement window cut into [`BATCHES`] equal
    /// parts by arrival slot; per part the delay sum and the cells delivered.
    pub batches: Vec<(u64, u64)>,
}

/// Number of batches of [`Stats::batches`].
pub const BATCHES: usize = 10;

impl Stats {
    /// Mean delay of the delivered cells (slots).
    pub fn mean_delay(&self) -> f64 {
        self.delay_sum as f64 / self.delivered.max(1) as f64
    }
    /// Standard deviation of the delay.
    pub fn delay_std(&self) -> f64 {
        let n = self.delivered.max(1) as f64;
        let m = self.mean_delay();
        (self.delay_sq_sum as f64 / n - m * m).max(0.0).sqrt()
    }
    /// Mean resequencing delay.
    pub fn mean_reseq(&self) -> f64 {
        self.reseq_sum as f64 / self.delivered.max(1) as f64
    }
    /// Throughput: departures per output per slot.
    pub fn throughput(&self) -> f64 {
        self.departures as f64 / (self.n as u64 * self.slots.max(1)) as f64
    }
    /// Offered load measured: arrivals per input per slot.
    pub fn offered(&self) -> f64 {
        self.cells as f64 / (self.n as u64 * self.slots.max(1)) as f64
    }
    /// Share of cells sent speculatively (`P_S`).
    pub fn p_s(&self) -> f64 {
        self.spec_sent as f64 / self.cells.max(1) as f64
    }
    /// Share of speculative cells that won (`P_{s|S}`).
    pub fn p_s_given_s(&self) -> f64 {
        self.spec_ok as f64 / self.spec_sent.max(1) as f64
    }
    /// Share of cells that succeeded speculatively (`P_Ss`).
    pub fn p_ss(&self) -> f64 {
        self.spec_ok as f64 / self.cells.max(1) as f64
    }
    /// Share of grants that were spurious (`Q`).
    pub fn q(&self) -> f64 {
        self.spurious as f64 / self.grants.max(1) as f64
    }
    /// Share of grants that were wasted (`P_w`).
    pub fn p_w(&self) -> f64 {
        self.wasted as f64 / self.grants.max(1) as f64
    }
    /// Half-width of the 95 % confidence interval of the mean delay, by
    /// batch means (Student t with `BATCHES - 1` degrees of freedom).
    pub fn delay_ci95(&self) -> f64 {
        let m: Vec<f64> = self
            .batches
            .iter()
            .filter(|b| b.1 > 0)
            .map(|&(s, c)| s as f64 / c as f64)
            .collect();
        if m.len() < 2 {
            return f64::NAN;
        }
        let k = m.len() as f64;
        let mean = m.iter().sum::<f64>() / k;
        let var = m.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (k - 1.0);
        // t_{0.975, 9} = 2.262 (9 = BATCHES - 1 degrees of freedom)
        2.262 * (var / k).sqrt()
    }
}

#[derive(Clone, Copy, Debug)]
struct Cell {
    seq: u64,
    arr: u64,
}

/// A cell on the data path.
#[derive(Clone, Copy, Debug)]
struct Flight {
    i: usize,
    j: usize,
    seq: u64,
    arr: u64,
    spec: bool,
    /// Sent on a grant from the RTX queue (a speculative cell sent again).
    retx: bool,
}

/// What the inputs put on the upstream paths in one slot.
#[derive(Clone, Debug)]
struct Up {
    reqs: Vec<Option<usize>>,
    srqs: Vec<Option<(usize, u16)>>,
    cells: Vec<Option<Flight>>,
}

/// What the arbiter puts on the downstream control path in one slot.
#[derive(Clone, Debug)]
struct Down {
    grants: Vec<Option<usize>>,
    acks: Vec<Option<(usize, u64)>>,
}

#[derive(Clone, Debug)]
struct Input {
    voq: Vec<VecDeque<Cell>>,
    /// RTX queues: speculative cells not yet acknowledged nor granted, in
    /// sequence order.
    rtx: Vec<VecDeque<Cell>>,
    next_seq: Vec<u64>,
    grants: Vec<u64>,
    /// Bit `j`: VOQ `j` is not empty.
    busy: u64,
    /// Requests not yet sent (outputs, oldest first).
    pending: VecDeque<usize>,
    /// Per VOQ: requests sent minus grants received.
    outstanding: Vec<u64>,
}

#[derive(Clone, Debug)]
struct Output {
    /// Per input: next expected sequence number.
    next: Vec<u64>,
    /// Per input: out-of-order cells with the slot they were stored.
    rsq: Vec<Vec<(Flight, u64)>>,
    /// In-order cells waiting for the output port, with the slots they spent
    /// in the RSQ.
    queue: VecDeque<(Flight, u64)>,
    /// Per input: sequence number of the next departure (order check).
    departed: Vec<u64>,
}

/// The switch: inputs, arbiter, crossbar, outputs and the paths between.
pub struct System<A: SlotArbiter> {
    cfg: Config,
    arb: A,
    t: u64,
    inputs: Vec<Input>,
    outputs: Vec<Output>,
    up: VecDeque<Up>,
    down: VecDeque<Down>,
    xo: VecDeque<Vec<Flight>>,
    outcome: SlotOutcome,
    stats: Stats,
    deliveries: Vec<Delivery>,
    events: Vec<Event>,
    /// FNV-1a hash of every delivery and every grant, in order.
    hash: u64,
    /// Per slot: the grants of the matching, hashed (the arbitrated
    /// schedule, independent of STX).
    grant_hash: u64,
    /// Cells in the system (arrived, not departed).
    in_system: u64,
}

fn fnv(h: &mut u64, x: u64) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
}

impl<A: SlotArbiter> System<A> {
    /// A system, empty, at slot 0. The arbiter must be configured to match
    /// (`R`, STX, crossbar delay `RTT`): see [`arbiter_setup`].
    pub fn new(cfg: Config, arb: A) -> Self {
        let n = cfg.n;
        assert!((2..=64).contains(&n), "N in 2..=64");
        assert!(
            cfg.rtt >= 2 && cfg.rtt.is_multiple_of(2) && cfg.rtt < 128,
            "RTT even in 2..=126"
        );
        assert!(cfg.r >= 1, "R >= 1");
        let d = (cfg.rtt / 2) as usize;
        let up = Up {
            reqs: vec![None; n],
            srqs: vec![None; n],
            cells: vec![None; n],
        };
        let down = Down {
            grants: vec![None; n],
            acks: vec![None; n],
        };
        System {
            arb,
            t: 0,
            inputs: (0..n)
                .map(|_| Input {
                    voq: vec![VecDeque::new(); n],
                    rtx: vec![VecDeque::new(); n],
                    next_seq: vec![0; n],
                    grants: vec![0; n],
                    busy: 0,
                    pending: VecDeque::new(),
                    outstanding: vec![0; n],
                })
                .collect(),
            outputs: (0..n)
                .map(|_| Output {
                    next: vec![0; n],
                    rsq: vec![Vec::new(); n],
                    queue: VecDeque::new(),
                    departed: vec![0; n],
                })
                .collect(),
            up: (0..d).map(|_| up.clone()).collect(),
            down: (0..d).map(|_| down.clone()).collect(),
            xo: (0..d).map(|_| Vec::new()).collect(),
            outcome: SlotOutcome::new(n),
            stats: Stats {
                n,
                slots: cfg.measure.1.saturating_sub(cfg.measure.0),
                batches: vec![(0, 0); BATCHES],
                ..Stats::default()
            },
            deliveries: Vec::new(),
            events: Vec::new(),
            hash: 0xCBF2_9CE4_8422_2325,
            grant_hash: 0xCBF2_9CE4_8422_2325,
            in_system: 0,
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
    /// Cells that arrived and have not left their output adapter.
    pub fn in_system(&self) -> u64 {
        self.in_system
    }
    /// The arbiter.
    pub fn arbiter(&self) -> &A {
        &self.arb
    }
    /// Current occupancy of the RTX queue of VOQ (`i`, `j`).
    pub fn rtx_len(&self, i: usize, j: usize) -> usize {
        self.inputs[i].rtx[j].len()
    }
    /// Current occupancy of the RSQ of input `i` at output `j`.
    pub fn rsq_len(&self, j: usize, i: usize) -> usize {
        self.outputs[j].rsq[i].len()
    }

    fn in_window(&self, t: u64) -> bool {
        (self.cfg.measure.0..self.cfg.measure.1).contains(&t)
    }

    fn log(&mut self, e: Event) {
        if self.cfg.trace {
            self.events.push(e);
        }
    }

    /// Runs `slots` slots with `traffic`.
    pub fn run(&mut self, traffic: &mut dyn Traffic, slots: u64) {
        for _ in 0..slots {
            self.step(traffic);
        }
    }

    /// Runs up to the end of the measurement window, then on with the same
    /// traffic until every measured cell has left: true, or `cap` slots in
    /// all have passed: false.
    pub fn run_measured(&mut self, traffic: &mut dyn Traffic, cap: u64) -> bool {
        while self.t < cap {
            if self.t >= self.cfg.measure.1 && self.stats.delivered == self.stats.cells {
                return true;
            }
            self.step(traffic);
        }
        self.stats.delivered == self.stats.cells
    }

    /// Runs without arrivals until every cell has left (true) or `max`
    /// slots have passed (false).
    pub fn drain(&mut self, max: u64) -> bool {
        let mut silence = traffic::Silence;
        for _ in 0..max {
            if self.in_system == 0 {
                return true;
            }
            self.step(&mut silence);
        }
        self.in_system == 0
    }

    /// Whether every queue and path is empty.
    pub fn is_empty(&self) -> bool {
        self.in_system == 0
            && self
                .inputs
                .iter()
                .all(|x| x.voq.iter().all(|q| q.is_empty()) && x.rtx.iter().all(|q| q.is_empty()))
            && self
                .outputs
                .iter()
                .all(|o| o.queue.is_empty() && o.rsq.iter().all(|q| q.is_empty()))
    }

    /// Per (input, output): cells arrived (sequence numbers handed out) and
    /// cells departed in order.
    pub fn counts(&self, i: usize, j: usize) -> (u64, u64) {
        (self.inputs[i].next_seq[j], self.outputs[j].departed[i])
    }

    /// One slot.
    pub fn step(&mut self, traffic: &mut dyn Traffic) {
        let t = self.t;
        let n = self.cfg.n;
        let win = self.cfg.window();
        let up_now = self.up.pop_front().expect("upstream path");
        let down_now = self.down.pop_front().expect("downstream path");
        let xo_now = self.xo.pop_front().expect("crossbar to output path");
        let mut up_new = Up {
            reqs: vec![None; n],
            srqs: vec![None; n],
            cells: vec![None; n],
        };

        // 1. Input adapters.
        for i in 0..n {
            // Arrival and its request (R1).
            if let Some(j) = traffic.arrival(i, t) {
                assert!(j < n, "traffic output {j} out of range");
                let inp = &mut self.inputs[i];
                let seq = inp.next_seq[j];
                inp.next_seq[j] += 1;
                inp.voq[j].push_back(Cell { seq, arr: t });
                inp.busy |= 1 << j;
                inp.pending.push_back(j);
                self.in_system += 1;
                if self.in_window(t) {
                    self.stats.cells += 1;
                }
                self.log(Event::Arrive { t, i, j, seq });
            }
            // One request per slot, oldest first, within the counter limit.
            let inp = &mut self.inputs[i];
            let lim = self.cfg.req_limit;
            if !inp.pending.is_empty() {
                let pos = inp.pending.iter().position(|&j| inp.outstanding[j] < lim);
                if pos != Some(0) || inp.pending.len() > 1 {
                    self.stats.req_deferred += 1;
                }
                if let Some(k) = pos {
                    let j = inp.pending.remove(k).expect("pending request");
                    inp.outstanding[j] += 1;
                    up_new.reqs[i] = Some(j);
                }
            }
            // ACKs first (R6): the acknowledged cell leaves the RTX queue.
            if let Some((j, seq)) = down_now.acks[i] {
                let rtx = &mut self.inputs[i].rtx[j];
                if let Some(k) = rtx.iter().position(|c| c.seq == seq) {
                    rtx.remove(k);
                }
                self.log(Event::Ack { t, i, j, seq });
            }
            // The grant (R2, R7, R8).
            let mut link_busy = false;
            if let Some(j) = down_now.grants[i] {
                let inp = &mut self.inputs[i];
                let k = inp.grants[j];
                inp.grants[j] += 1;
                inp.outstanding[j] -= 1;
                let (cell, retx) = if let Some(c) = inp.rtx[j].pop_front() {
                    (Some(c), true)
                } else if let Some(c) = inp.voq[j].pop_front() {
                    if inp.voq[j].is_empty() {
                        inp.busy &= !(1 << j);
                    }
                    (Some(c), false)
                } else {
                    (None, false)
                };
                let kind = match cell {
                    None => GrantKind::Wasted,
                    Some(c) if c.seq == k => GrantKind::Regular,
                    Some(_) => GrantKind::Spurious,
                };
                if let Some(c) = cell {
                    link_busy = true;
                    up_new.cells[i] = Some(Flight {
                        i,
                        j,
                        seq: c.seq,
                        arr: c.arr,
                        spec: false,
                        retx,
                    });
                }
                fnv(&mut self.hash, (t << 16) ^ ((i as u64) << 8) ^ j as u64);
                fnv(&mut self.hash, kind as u64);
                if self.in_window(t) {
                    self.stats.grants += 1;
                    match kind {
                        GrantKind::Regular => self.stats.regular += 1,
                        GrantKind::Spurious => self.stats.spurious += 1,
                        GrantKind::Wasted => self.stats.wasted += 1,
                    }
                    if retx {
                        self.stats.retx += 1;
                    }
                }
                self.log(Event::Grant {
                    t,
                    i,
                    j,
                    kind,
                    seq: cell.map(|c| c.seq),
                    retx,
                });
            }
            // Speculative transmission: oldest eligible cell first (R2, R5).
            if self.cfg.stx && !link_busy {
                let inp = &self.inputs[i];
                let mut best: Option<(u64, usize)> = None;
                let mut rest = inp.busy;
                while rest != 0 {
                    let j = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    let hol = inp.voq[j].front().expect("busy VOQ");
                    let rtx = &inp.rtx[j];
                    let ok = rtx.len() < win
                        && rtx.front().is_none_or(|c| hol.seq - c.seq <= win as u64);
                    if ok && best.is_none_or(|(a, _)| hol.arr < a) {
                        best = Some((hol.arr, j));
                    }
                }
                if let Some((_, j)) = best {
                    let inp = &mut self.inputs[i];
                    let c = inp.voq[j].pop_front().expect("eligible VOQ");
                    if inp.voq[j].is_empty() {
                        inp.busy &= !(1 << j);
                    }
                    inp.rtx[j].push_back(c);
                    let occ = inp.rtx[j].len();
                    self.stats.rtx_max = self.stats.rtx_max.max(occ);
                    up_new.srqs[i] = Some((j, c.seq as u16));
                    up_new.cells[i] = Some(Flight {
                        i,
                        j,
                        seq: c.seq,
                        arr: c.arr,
                        spec: true,
                        retx: false,
                    });
                    if self.in_window(c.arr) {
                        self.stats.spec_sent += 1;
                    }
                    self.log(Event::Stx {
                        t,
                        i,
                        j,
                        seq: c.seq,
                    });
                }
            }
        }

        // 2. The arbiter: requests and SRQs sent d slots ago.
        self.arb.slot(&up_now.reqs, &up_now.srqs, &mut self.outcome);
        self.stats.req_dropped += self.outcome.dropped as u64;
        for (i, g) in self.outcome.grants.iter().enumerate() {
            if let Some(j) = g {
                fnv(
                    &mut self.grant_hash,
                    (t << 16) ^ ((i as u64) << 8) ^ *j as u64,
                );
            }
        }
        let mut down_new = Down {
            grants: self.outcome.grants.clone(),
            acks: vec![None; n],
        };

        // 3. The crossbar: the cells sent d slots ago.
        let mut xo_new = Vec::new();
        let mut at_output = vec![0usize; n];
        // Outputs whose reserved arbitrated receiver gets no cell (the grant
        // D slots ago was wasted).
        let mut phantom: Vec<bool> = self.outcome.xb_arb.iter().map(|a| a.is_some()).collect();
        for f in up_now.cells.iter().flatten() {
            if !f.spec {
                phantom[f.j] = false;
            }
        }
        for i in 0..n {
            let Some(f) = up_now.cells[i] else {
                continue;
            };
            let j = f.j;
            if f.spec {
                let (sj, sq) = up_now.srqs[i].expect("speculative cell without SRQ");
                assert_eq!((sj, sq), (j, f.seq as u16), "SRQ does not match its cell");
                if let Some(a) = self.outcome.acks[i] {
                    assert_eq!(a, f.seq as u16, "ACK for another sequence number");
                    down_new.acks[i] = Some((j, f.seq));
                    if self.in_window(f.arr) {
                        self.stats.spec_ok += 1;
                    }
                    at_output[j] += 1;
                    xo_new.push(f);
                    self.log(Event::XbarWin {
                        t,
                        i,
                        j,
                        seq: f.seq,
                    });
                } else {
                    if phantom[j] && self.in_window(f.arr) {
                        self.stats.spec_lost_to_wasted += 1;
                    }
                    self.log(Event::XbarLoss {
                        t,
                        i,
                        j,
                        seq: f.seq,
                    });
                }
            } else {
                assert_eq!(
                    self.outcome.xb_arb[j],
                    Some(i),
                    "slot {t}: arbitrated cell {i}->{j} not in the arbiter's crossbar configuration"
                );
                at_output[j] += 1;
                xo_new.push(f);
            }
        }
        for (j, &k) in at_output.iter().enumerate() {
            assert!(
                k <= self.cfg.r,
                "slot {t}: {k} cells at output {j} with R = {}",
                self.cfg.r
            );
            let _ = j;
        }

        // 4. Output adapters: cells that passed the crossbar d slots ago.
        for f in xo_now {
            let (i, j) = (f.i, f.j);
            let out = &mut self.outputs[j];
            let fate = if f.seq < out.next[i] || out.rsq[i].iter().any(|(g, _)| g.seq == f.seq) {
                Fate::Duplicate
            } else if f.seq == out.next[i] {
                out.queue.push_back((f, 0));
                out.next[i] += 1;
                // release the successors waiting in the RSQ
                while let Some(k) = out.rsq[i].iter().position(|(g, _)| g.seq == out.next[i]) {
                    let (g, since) = out.rsq[i].remove(k);
                    out.queue.push_back((g, t - since));
                    out.next[i] += 1;
                }
                Fate::InOrder
            } else {
                out.rsq[i].push((f, t));
                let occ = out.rsq[i].len();
                self.stats.rsq_max = self.stats.rsq_max.max(occ);
                if occ > win {
                    self.stats.rsq_overflow += 1;
                }
                Fate::Stored
            };
            assert!(
                fate != Fate::Duplicate || f.retx,
                "slot {t}: cell ({i},{j},{}) is a duplicate but not a retransmission \
                 of a speculative cell (R7)",
                f.seq
            );
            if fate == Fate::Duplicate && self.in_window(t) {
                self.stats.dup_dropped += 1;
            }
            self.log(Event::OutArrive {
                t,
                i,
                j,
                seq: f.seq,
                spec: f.spec,
                fate,
            });
        }
        for j in 0..n {
            let Some((f, reseq)) = self.outputs[j].queue.pop_front() else {
                continue;
            };
            let out = &mut self.outputs[j];
            if out.departed[f.i] != f.seq {
                self.stats.order_errors += 1;
            }
            out.departed[f.i] = f.seq + 1;
            self.in_system -= 1;
            let delay = t - f.arr;
            let measured = self.in_window(f.arr);
            let s = &mut self.stats;
            if self.cfg.measure.0 <= t && t < self.cfg.measure.1 {
                s.departures += 1;
            }
            if measured {
                s.delivered += 1;
                s.delay_sum += delay;
                s.delay_sq_sum += (delay as u128) * (delay as u128);
                s.delay_max = s.delay_max.max(delay);
                s.reseq_sum += reseq;
                let (m0, m1) = self.cfg.measure;
                let b = ((f.arr - m0) as u128 * BATCHES as u128 / (m1 - m0) as u128) as usize;
                s.batches[b].0 += delay;
                s.batches[b].1 += 1;
            }
            fnv(
                &mut self.hash,
                (t << 24) ^ ((f.i as u64) << 16) ^ ((j as u64) << 8),
            );
            fnv(&mut self.hash, f.seq ^ ((f.spec as u64) << 63));
            if self.cfg.trace {
                self.deliveries.push(Delivery {
                    t,
                    i: f.i,
                    j,
                    seq: f.seq,
                    arr: f.arr,
                    spec: f.spec,
                });
            }
        }

        self.up.push_back(up_new);
        self.down.push_back(down_new);
        self.xo.push_back(xo_new);
        self.t += 1;
    }
}

#[cfg(test)]
mod tests;
