//! What a run of the system reports: the event log ([`Event`]), the
//! deliveries ([`Delivery`]) and the measured figures ([`Stats`]: means,
//! delay histograms and quantiles, per-input shares for fairness, control
//! overhead, cells lost; confidence intervals are taken across independent
//! runs by the study, [`mean_ci95`]).

use super::{Fate, GrantKind};
use model::stx_ingress::AckKind;

/// One event of the event log (with [`super::Config::trace`]). Fields: `t` the
/// slot, `i` the input, `j` the output, `seq` the cell's index in its VOQ
/// (unwrapped; the adapters carry it modulo `2^SW`).
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// A cell arrives at input `i` for output `j` and is taken.
    Arrive {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// A cell arrives at input `i` for output `j` and is refused (VOQ full).
    Refused { t: u64, i: usize, j: usize },
    /// Input `i` sends cell `seq` speculatively, with an SRQ.
    Stx {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
    },
    /// The ACK of cell `seq` reaches input `i`, and what it did there.
    Ack {
        t: u64,
        i: usize,
        j: usize,
        seq: u64,
        kind: AckKind,
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
    /// Speculative cell `seq` passes the crossbar unacknowledged, on the
    /// connection reserved for its input's own (wasted) grant.
    XbarPass {
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
    /// A copy of cell (`i`, `j`, `seq`) reaches output `j`: its fate there.
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
    /// Index of the cell in VOQ (`i`, `j`).
    pub seq: u64,
    /// Arrival slot at the input.
    pub arr: u64,
    /// The copy delivered was the speculative one.
    pub spec: bool,
}

/// Measured figures. Cells are counted if they arrived in the measurement
/// window; grants if they reached their input in it; departures, duplicates
/// and discards if they happened in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Slots of the measurement window.
    pub slots: u64,
    /// Ports.
    pub n: usize,
    /// Cells arrived in the window and taken by their input adapter.
    pub cells: u64,
    /// Cells arrived in the window and refused (VOQ full).
    pub arr_dropped: u64,
    /// Of the cells, delivered (by the end of the run).
    pub delivered: u64,
    /// Sum of their delays.
    pub delay_sum: u64,
    /// Sum of their squared delays.
    pub delay_sq_sum: u128,
    /// Largest delay.
    pub delay_max: u64,
    /// Sum of their resequencing delays.
    pub reseq_sum: u64,
    /// Of the cells, sent speculatively.
    pub spec_sent: u64,
    /// Of the cells, delivered through their speculative copy.
    pub spec_ok: u64,
    /// Of the cells, speculative copies lost at an output whose arbitrated
    /// receiver was reserved by a grant that turned out wasted (no cell
    /// came): the arbiter cannot know a grant will be wasted.
    pub spec_lost_to_wasted: u64,
    /// Of the cells, speculative copies that passed the crossbar without an
    /// ACK on the connection reserved for their own input's wasted grant.
    pub spec_on_own_phantom: u64,
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
    /// Grants in the window that retransmitted a cell from its RTX queue.
    pub retx: u64,
    /// Duplicate copies dropped by the output adapters in the window (R7).
    pub dup_dropped: u64,
    /// Copies discarded by the output adapters in the window as out of
    /// order (GBN, SAW) or beyond the window (must stay 0 under SR).
    pub discarded: u64,
    /// Acknowledged cells lost: copies an output adapter dropped beyond its
    /// window (`B <= seq - head < 2^(SW-1)`), under any scheme; nothing sends
    /// them again. Any time. 0 with flow control (`NoLoss_A`); only the
    /// ablation without it ([`super::Config::credits`] `Some(0)`) loses.
    pub lost: u64,
    /// ACKs that were void at their input (GBN, SAW: the receiver dropped
    /// that copy, or an earlier one), in the window.
    pub ack_void: u64,
    /// Largest number of cells an output adapter held for one input.
    pub rsq_max: usize,
    /// Largest RTX occupancy seen (any time).
    pub rtx_max: usize,
    /// Largest VOQ occupancy seen (any time).
    pub voq_max: usize,
    /// Requests dropped by the arbiter (any time; must stay 0).
    pub req_dropped: u64,
    /// Batch means: the measurement window cut into [`BATCHES`] equal
    /// parts by arrival slot; per part the delay sum and the cells delivered.
    pub batches: Vec<(u64, u64)>,
    /// Delays of the delivered cells by value in slots ([`HIST`] bins, the
    /// last one holding every larger delay).
    pub hist: Vec<u64>,
    /// Per input: cells delivered and their delay sum.
    pub per_input: Vec<(u64, u64)>,
    /// Per output: departures in the window.
    pub per_output: Vec<u64>,
    /// The cells not for the hot output ([`super::Config::hot`]): delivered,
    /// their delay sum and histogram (all cells when there is none).
    pub other: (u64, u64),
    /// Their delays by value, as [`Stats::hist`].
    pub other_hist: Vec<u64>,
    /// Control channel: ACKs the arbiter gave in the window.
    pub acks: u64,
    /// Data channel: cells the inputs sent in the window (first sends,
    /// retransmissions and duplicates).
    pub copies: u64,
    /// Output-slots in the window whose output had all its credits in use.
    pub crd_full: u64,
}

/// Bins of the delay histograms ([`Stats::hist`]).
pub const HIST: usize = 1 << 14;

pub use crate::ci::{mean_ci as mean_ci95, t975};

/// The `q` quantile (0..1) of a delay histogram: the smallest delay with at
/// least `q` of the cells at or below it; NaN when empty.
pub fn quantile(hist: &[u64], q: f64) -> f64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return f64::NAN;
    }
    let want = (q * total as f64).ceil().max(1.0) as u64;
    let mut acc = 0;
    for (d, &c) in hist.iter().enumerate() {
        acc += c;
        if acc >= want {
            return d as f64;
        }
    }
    (hist.len() - 1) as f64
}

/// Jain's fairness index of `x`: `(sum x)^2 / (n sum x^2)`, 1 when all are
/// equal, `1/n` when one takes everything; NaN when all are 0.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    if q == 0.0 {
        return f64::NAN;
    }
    s * s / (x.len() as f64 * q)
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
    /// Offered load measured: arrivals (taken or refused) per input per slot.
    pub fn offered(&self) -> f64 {
        (self.cells + self.arr_dropped) as f64 / (self.n as u64 * self.slots.max(1)) as f64
    }
    /// Share of cells sent speculatively (`P_S`).
    pub fn p_s(&self) -> f64 {
        self.spec_sent as f64 / self.cells.max(1) as f64
    }
    /// Share of speculative cells delivered through their speculative copy
    /// (`P_{s|S}`).
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
    /// The 99th percentile of the delay.
    pub fn p99(&self) -> f64 {
        quantile(&self.hist, 0.99)
    }
    /// Mean delay of the cells not for the hot output.
    pub fn other_mean(&self) -> f64 {
        self.other.1 as f64 / self.other.0.max(1) as f64
    }
    /// The 99th percentile of their delay.
    pub fn other_p99(&self) -> f64 {
        quantile(&self.other_hist, 0.99)
    }
    /// Jain's index of the inputs' throughputs (cells delivered per input).
    pub fn jain_throughput(&self) -> f64 {
        jain(
            &self
                .per_input
                .iter()
                .map(|&(c, _)| c as f64)
                .collect::<Vec<_>>(),
        )
    }
    /// Jain's index of the inputs' mean delays.
    pub fn jain_delay(&self) -> f64 {
        jain(
            &self
                .per_input
                .iter()
                .filter(|&&(c, _)| c > 0)
                .map(|&(c, s)| s as f64 / c as f64)
                .collect::<Vec<_>>(),
        )
    }
    /// Departures of output `j` per slot.
    pub fn output_throughput(&self, j: usize) -> f64 {
        self.per_output.get(j).copied().unwrap_or(0) as f64 / self.slots.max(1) as f64
    }
    /// `σ`: grants that sent a cell, per input per slot; `μ = 1 - σ` is the
    /// NSTX service rate of the paper's (34), Fig. 6(b).
    pub fn sigma(&self) -> f64 {
        (self.regular + self.spurious) as f64 / (self.n as u64 * self.slots.max(1)) as f64
    }
    /// Share of output-slots with every credit in use.
    pub fn crd_full_share(&self) -> f64 {
        self.crd_full as f64 / (self.n as u64 * self.slots.max(1)) as f64
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
