//! Golden model of the MMU admission block (`rtl/mmu.v`, spec `docs/mmu.md`).
//!
//! Ingress admission of a PFC-enabled shared-buffer switch: per-queue private
//! buffer, a shared pool under the Dynamic Threshold, per-queue headroom,
//! a lossy pool with its own threshold, PAUSE / RESUME per queue.
//!
//! Latency: the verdict, the PAUSE/RESUME events and the thresholds are
//! outputs of the same cycle as the arrival; occupancies are the registers at
//! the start of the cycle. Order inside a cycle: departure, thresholds,
//! arrival, PAUSE, RESUME (all queues).

use crate::block::{check_pow2, refill, Block, ConfigError, Params};
use crate::port::{mask, PortGroup};
use crate::timing::Alignment;
use arbitrary_int::{i4, u3, u6};

/// Packet length width (cells).
pub const LW: u32 = 6;
/// Priorities per port.
pub const PRIOS: usize = 8;

/// Structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmuParams {
    /// Ingress ports, a power of two.
    pub ports: usize,
    /// Counter width in cells.
    pub cw: u32,
}

impl MmuParams {
    /// Number of queues (`8 * P`).
    pub const fn queues(&self) -> usize {
        self.ports * PRIOS
    }
    /// Width of a port index.
    pub const fn pw(&self) -> u32 {
        self.ports.trailing_zeros()
    }
    /// Width of a threshold.
    pub const fn tw(&self) -> u32 {
        self.cw + 7
    }
    /// Largest counter value.
    pub const fn max(&self) -> u64 {
        mask(self.cw)
    }
}

impl Default for MmuParams {
    fn default() -> Self {
        MmuParams { ports: 4, cw: 16 }
    }
}

impl Params for MmuParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![("P", self.ports as u64), ("CW", self.cw as u64)]
    }
}

crate::port_group! {
    /// Runtime configuration, held for a run.
    pub struct MmuConfig<MmuParams> |p| {
        /// Total buffer B (cells).
        cfg_buf_cells_i: u32 = p.cw,
        /// Lossy pool Bl (cells).
        cfg_lossy_cells_i: u32 = p.cw,
        /// Private buffer phi per lossless queue (cells).
        cfg_priv_cells_i: u32 = p.cw,
        /// Headroom eta per lossless queue of each ingress port, [port 0, port 1, ...] (cells).
        cfg_hdrm_cells_i: Vec<u32> = (p.cw, p.ports),
        /// Xon: RESUME when a queue's shared occupancy is below this (cells).
        cfg_xon_cells_i: u32 = p.cw,
        /// Lossless alpha = 2^k, k signed; -8 means alpha = 0.
        cfg_alpha_i: i4 = 4,
        /// Lossy alpha = 2^k, k signed; -8 means alpha = 0.
        cfg_alpha_lossy_i: i4 = 4,
        /// Bit j set: priority j is lossless (on every port).
        cfg_lossless_i: u8 = 8,
    }
}

crate::port_group! {
    /// Per-cycle inputs: at most one arrival and one departure.
    pub struct MmuInputs<MmuParams> |p| {
        /// A packet arrives.
        arr_valid_i: bool = 1,
        /// Arrival ingress port.
        arr_port_i: u8 = p.pw(),
        /// Arrival priority.
        arr_prio_i: u3 = 3,
        /// Arrival length in cells (1..63; 0 is invalid).
        arr_len_i: u6 = LW,
        /// A packet departs.
        dep_valid_i: bool = 1,
        /// Departure ingress port.
        dep_port_i: u8 = p.pw(),
        /// Departure priority.
        dep_prio_i: u3 = 3,
        /// Departure length in cells.
        dep_len_i: u6 = LW,
    }
}

crate::port_group! {
    /// Per-cycle outputs.
    pub struct MmuOutputs<MmuParams> |p| {
        /// Verdict for this cycle's arrival (see `Verdict`).
        verdict_o: u3 = 3 => Radix::Names(Verdict::NAMES),
        /// Queues that go OFF this cycle.
        pause_o: Vec<bool> = (1, p.queues()),
        /// Queues that go ON this cycle.
        resume_o: Vec<bool> = (1, p.queues()),
        /// OFF state of every queue (registered).
        xoff_o: Vec<bool> = (1, p.queues()),
        /// Lossless shared threshold T used this cycle.
        thr_o: u32 = p.tw(),
        /// Lossy threshold used this cycle.
        thr_lossy_o: u32 = p.tw(),
        /// Shared pool size Bs.
        shr_size_o: u32 = p.cw,
        /// Total private occupancy (registered).
        priv_used_o: u32 = p.cw,
        /// Total shared occupancy S (registered).
        shr_used_o: u32 = p.cw,
        /// Total headroom occupancy (registered).
        hdr_used_o: u32 = p.cw,
        /// Lossy pool occupancy (registered).
        lossy_used_o: u32 = p.cw,
        /// Private occupancy per queue (registered).
        q_priv_o: Vec<u32> = (p.cw, p.queues()),
        /// Shared (or lossy pool) occupancy per queue (registered).
        q_shr_o: Vec<u32> = (p.cw, p.queues()),
        /// Headroom occupancy per queue (registered).
        q_hdr_o: Vec<u32> = (p.cw, p.queues()),
        /// Lossless packets dropped, saturating.
        drop_ll_o: u32 = p.cw,
        /// Lossy packets dropped, saturating.
        drop_ly_o: u32 = p.cw,
        /// Bit 0: departure longer than its queue; bit 1: zero-length arrival.
        err_o: u8 = 2 => Radix::Hex,
        /// Illegal configuration.
        cfg_err_o: bool = 1,
    }
}

crate::port_group! {
    /// The registers, named like the RTL's.
    pub struct MmuState<MmuParams> |p| {
        /// Private occupancy per queue.
        priv_q: Vec<u32> = (p.cw, p.queues()),
        /// Shared / lossy occupancy per queue.
        shr_q: Vec<u32> = (p.cw, p.queues()),
        /// Headroom occupancy per queue.
        hdr_q: Vec<u32> = (p.cw, p.queues()),
        /// OFF state per queue.
        xoff_q: Vec<bool> = (1, p.queues()),
        /// Total private occupancy.
        priv_used_q: u32 = p.cw,
        /// Total shared occupancy.
        shr_used_q: u32 = p.cw,
        /// Total headroom occupancy.
        hdr_used_q: u32 = p.cw,
        /// Lossy pool occupancy.
        lossy_used_q: u32 = p.cw,
        /// Lossless drop counter.
        drop_ll_q: u32 = p.cw,
        /// Lossy drop counter.
        drop_ly_q: u32 = p.cw,
    }
}

/// The verdict codes of `verdict_o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Verdict {
    /// No arrival.
    None = 0,
    /// All cells in private.
    Private = 1,
    /// Some cells in shared, none in headroom.
    Shared = 2,
    /// Some cells in headroom.
    Headroom = 3,
    /// Lossless drop.
    Drop = 4,
    /// Admitted to the lossy pool.
    Lossy = 5,
    /// Lossy drop.
    LossyDrop = 6,
    /// Zero length or illegal configuration.
    Invalid = 7,
}

impl Verdict {
    /// The codes' names, indexed by code (the waveforms' and the mismatch
    /// report's reading of `verdict_o`).
    pub const NAMES: &'static [&'static str] = &[
        "none",
        "private",
        "shared",
        "headroom",
        "drop",
        "lossy",
        "lossy_drop",
        "invalid",
    ];
    /// All codes, in order.
    pub const ALL: [Verdict; 8] = [
        Verdict::None,
        Verdict::Private,
        Verdict::Shared,
        Verdict::Headroom,
        Verdict::Drop,
        Verdict::Lossy,
        Verdict::LossyDrop,
        Verdict::Invalid,
    ];
    /// Decodes a `verdict_o` value.
    pub fn from_code(c: u3) -> Verdict {
        Self::ALL[c.value() as usize]
    }
    /// The `verdict_o` value.
    pub fn code(self) -> u3 {
        u3::new(self as u8)
    }
}

crate::coverage_bins! {
    /// Functional coverage bins of the MMU (indices into [`BINS`]).
    pub enum Bin / BINS {
        Private = "verdict_private",
        Shared = "verdict_shared",
        Headroom = "verdict_headroom",
        Drop = "verdict_drop",
        Lossy = "verdict_lossy",
        LossyDrop = "verdict_lossy_drop",
        Invalid = "verdict_invalid",
        Pause = "pause",
        PauseOnDrop = "pause_on_drop",
        Resume = "resume",
        MultiResume = "resume_several_in_one_cycle",
        ResumeWithoutArrival = "resume_without_arrival",
        ResumeAtXonMinus1 = "resume_at_xon_minus_1",
        OffAtXon = "off_at_exactly_xon",
        ThresholdZero = "threshold_zero_on_arrival",
        SharedAtThreshold = "shared_at_exact_threshold",
        HeadroomFull = "headroom_full",
        SameQueueArrDep = "arrival_and_departure_same_queue",
        SharedPoolFull = "shared_pool_full",
        LossyPoolFull = "lossy_pool_full",
        DropLosslessSaturated = "drop_lossless_counter_saturated",
        DropLossySaturated = "drop_lossy_counter_saturated",
        DepartureUnderflow = "departure_underflow",
        ConfigError = "config_error",
    }
}

/// `alpha * free` for `alpha = 2^k` encoded as a 4-bit signed `k`; -8 is 0.
pub fn dt_threshold(free: u64, k: i4) -> u64 {
    let k = k.value();
    match k {
        -8 => 0,
        k if k < 0 => free >> (-k),
        k => free << k,
    }
}

/// Values derived from the configuration alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derived {
    /// Number of lossless queues.
    pub n_lossless: u64,
    /// Sum of the per-port headroom values.
    pub hdrm_sum: u64,
    /// Private plus headroom of all lossless queues.
    pub reserved: u64,
    /// Shared pool size Bs (0 when the configuration is illegal).
    pub shared: u64,
    /// The configuration cannot be held.
    pub cfg_err: bool,
}

impl Derived {
    /// Derives `Bs` and the illegal-configuration flag from `c`.
    pub fn new(p: &MmuParams, c: &MmuConfig) -> Self {
        // Every lossless priority has one queue per port: private phi each,
        // and the headroom of its port.
        let n_prio = c.cfg_lossless_i.count_ones() as u64;
        let n_lossless = p.ports as u64 * n_prio;
        let hdrm_sum: u64 = c.cfg_hdrm_cells_i.iter().map(|&h| h as u64).sum();
        let reserved = n_prio * (p.ports as u64 * c.cfg_priv_cells_i as u64 + hdrm_sum);
        let need = reserved + c.cfg_lossy_cells_i as u64;
        let cfg_err = need > c.cfg_buf_cells_i as u64;
        let shared = if cfg_err {
            0
        } else {
            c.cfg_buf_cells_i as u64 - need
        };
        Derived {
            n_lossless,
            hdrm_sum,
            reserved,
            shared,
            cfg_err,
        }
    }
}

/// The MMU admission model.
#[derive(Clone, Debug)]
pub struct Mmu {
    p: MmuParams,
    c: MmuConfig,
    d: Derived,
    s: MmuState,
}

impl Mmu {
    /// The configuration.
    pub fn config(&self) -> &MmuConfig {
        &self.c
    }
    /// Values derived from the configuration.
    pub fn derived(&self) -> Derived {
        self.d
    }
    /// Whether priority `prio` is lossless.
    pub fn is_lossless(&self, prio: usize) -> bool {
        self.c.cfg_lossless_i >> prio & 1 != 0
    }

    /// Checks every invariant of the spec; panics with the broken one.
    pub fn assert_invariants(&self) {
        let s = &self.s;
        let c = &self.c;
        let sum = |v: &[u32], f: &dyn Fn(usize) -> bool| -> u64 {
            v.iter()
                .enumerate()
                .filter(|(q, _)| f(*q))
                .map(|(_, &x)| x as u64)
                .sum()
        };
        let ll = |q: usize| self.is_lossless(q % PRIOS);
        let ly = |q: usize| !self.is_lossless(q % PRIOS);
        assert_eq!(s.priv_used_q as u64, sum(&s.priv_q, &ll), "private total");
        assert_eq!(s.shr_used_q as u64, sum(&s.shr_q, &ll), "shared total");
        assert_eq!(s.hdr_used_q as u64, sum(&s.hdr_q, &ll), "headroom total");
        assert_eq!(s.lossy_used_q as u64, sum(&s.shr_q, &ly), "lossy total");
        for q in 0..self.p.queues() {
            if ll(q) {
                assert!(s.priv_q[q] <= c.cfg_priv_cells_i, "private of queue {q}");
                assert!(
                    s.hdr_q[q] <= c.cfg_hdrm_cells_i[q / PRIOS],
                    "headroom of queue {q}"
                );
            } else {
                assert_eq!(s.priv_q[q] + s.hdr_q[q], 0, "lossy queue {q}");
                assert!(!s.xoff_q[q], "lossy queue {q} is OFF");
            }
        }
        assert!(s.shr_used_q as u64 <= self.d.shared, "shared pool over Bs");
        assert!(s.lossy_used_q <= c.cfg_lossy_cells_i, "lossy pool over Bl");
        let total = s.priv_used_q as u64
            + s.shr_used_q as u64
            + s.hdr_used_q as u64
            + s.lossy_used_q as u64;
        assert!(
            total <= c.cfg_buf_cells_i as u64,
            "buffer over B: {total} > {}",
            c.cfg_buf_cells_i
        );
    }
}

impl Block for Mmu {
    const NAME: &'static str = "mmu";
    type Params = MmuParams;
    type Config = MmuConfig;
    type Inputs = MmuInputs;
    type Outputs = MmuOutputs;
    type State = MmuState;

    fn variants() -> Vec<MmuParams> {
        vec![
            MmuParams { ports: 4, cw: 16 },
            MmuParams { ports: 2, cw: 8 },
            MmuParams { ports: 8, cw: 16 },
        ]
    }

    /// One clock per step, every output in its step's clock; the per-queue
    /// counters on `q_*_o` are views of the registers an RTL may keep off
    /// its ports (in memories): it is then verified on its other outputs,
    /// and the counters through state paths where it names them.
    fn alignment(_: &MmuParams) -> Alignment {
        Alignment::lockstep().with_optional(&["q_priv_o", "q_shr_o", "q_hdr_o"])
    }

    fn default_config(p: &MmuParams) -> MmuConfig {
        // Priorities 3 and 4 lossless (the RoCE classes), the rest lossy; a
        // quarter of the buffer for the lossy pool; a small buffer, so that
        // thresholds, PAUSE and RESUME happen within a short run. P = 4:
        // B = 2048, Bl = 512, phi = 8, eta = 64, Xon = 32, Bs = 960.
        let b = (p.max() as u32).min(2048);
        MmuConfig {
            cfg_buf_cells_i: b,
            cfg_lossy_cells_i: b / 4,
            cfg_priv_cells_i: (b / 256).max(1),
            cfg_hdrm_cells_i: vec![(b / 32).max(2); p.ports],
            cfg_xon_cells_i: (b / 64).max(1),
            cfg_alpha_i: i4::new(0),
            cfg_alpha_lossy_i: i4::new(-1),
            cfg_lossless_i: 0b0001_1000,
        }
    }

    fn check(p: &MmuParams, c: &MmuConfig) -> Result<(), ConfigError> {
        check_pow2("P", "ports", p.ports, 2, 16)?;
        c.to_words(p)?;
        let d = Derived::new(p, c);
        if d.cfg_err {
            return Err(ConfigError::new(
                "cfg_buf_cells_i",
                format!(
                    "{} lossless queues x private {} + {} lossless priorities x headroom {:?} \
                     (sum {}) = {} cells plus the lossy pool of {} cells exceed the buffer of {} \
                     cells",
                    d.n_lossless,
                    c.cfg_priv_cells_i,
                    c.cfg_lossless_i.count_ones(),
                    c.cfg_hdrm_cells_i,
                    d.hdrm_sum,
                    d.reserved,
                    c.cfg_lossy_cells_i,
                    c.cfg_buf_cells_i
                ),
            ));
        }
        Ok(())
    }

    fn new(p: &MmuParams, c: &MmuConfig) -> Self {
        Mmu {
            p: *p,
            c: c.clone(),
            d: Derived::new(p, c),
            s: MmuState::zero(p),
        }
    }

    fn state(&self) -> &MmuState {
        &self.s
    }

    fn params(&self) -> &MmuParams {
        &self.p
    }

    fn bins() -> &'static [&'static str] {
        BINS
    }

    fn sample(&self, i: &MmuInputs, o: &MmuOutputs, hits: &mut [u64]) {
        let mut hit = |b: Bin| hits[b as usize] += 1;
        let v = Verdict::from_code(o.verdict_o);
        match v {
            Verdict::None => {}
            Verdict::Private => hit(Bin::Private),
            Verdict::Shared => hit(Bin::Shared),
            Verdict::Headroom => hit(Bin::Headroom),
            Verdict::Drop => hit(Bin::Drop),
            Verdict::Lossy => hit(Bin::Lossy),
            Verdict::LossyDrop => hit(Bin::LossyDrop),
            Verdict::Invalid => hit(Bin::Invalid),
        }
        let s = &self.s;
        let c = &self.c;
        let aq = i
            .arr_valid_i
            .then(|| i.arr_port_i as usize * PRIOS + i.arr_prio_i.value() as usize);
        let dq = i
            .dep_valid_i
            .then(|| i.dep_port_i as usize * PRIOS + i.dep_prio_i.value() as usize);
        // Whole-vector scans are branch-free folds: a data-dependent branch
        // per queue costs more than the scan (this runs every cycle). The
        // counts wrap explicitly (they cannot overflow: at most 128 queues)
        // so that the overflow checks do not keep them from vectorising.
        let count = |v: &[bool]| v.iter().fold(0u32, |a, &x| a.wrapping_add(u32::from(x)));
        let (pauses, resumes) = (count(&o.pause_o), count(&o.resume_o));
        if pauses > 0 {
            hit(Bin::Pause);
            if v == Verdict::Drop {
                hit(Bin::PauseOnDrop);
            }
        }
        if resumes > 0 {
            hit(Bin::Resume);
        }
        if resumes > 1 {
            hit(Bin::MultiResume);
        }
        if resumes > 0 {
            for q in (0..o.resume_o.len()).filter(|&q| o.resume_o[q]) {
                if Some(q) != aq {
                    hit(Bin::ResumeWithoutArrival);
                }
                if c.cfg_xon_cells_i > 0 && s.shr_q[q] == c.cfg_xon_cells_i - 1 {
                    hit(Bin::ResumeAtXonMinus1);
                }
            }
        }
        let xon = c.cfg_xon_cells_i;
        let off_at_xon = (s.xoff_q.iter().zip(&s.hdr_q).zip(&s.shr_q))
            .fold(false, |a, ((&off, &h), &sh)| {
                a | (off & (h == 0) & (sh == xon))
            });
        if off_at_xon {
            hit(Bin::OffAtXon);
        }
        if let Some(q) = aq {
            if self.is_lossless(q % PRIOS) {
                if o.thr_o == 0 {
                    hit(Bin::ThresholdZero);
                }
                if o.thr_o > 0 && s.shr_q[q] == o.thr_o {
                    hit(Bin::SharedAtThreshold);
                }
                let eta = c.cfg_hdrm_cells_i[q / PRIOS];
                if eta > 0 && s.hdr_q[q] == eta {
                    hit(Bin::HeadroomFull);
                }
            }
            if aq == dq {
                hit(Bin::SameQueueArrDep);
            }
        }
        if self.d.shared > 0 && s.shr_used_q as u64 == self.d.shared {
            hit(Bin::SharedPoolFull);
        }
        if c.cfg_lossy_cells_i > 0 && s.lossy_used_q == c.cfg_lossy_cells_i {
            hit(Bin::LossyPoolFull);
        }
        let max = self.p.max() as u32;
        if s.drop_ll_q == max {
            hit(Bin::DropLosslessSaturated);
        }
        if s.drop_ly_q == max {
            hit(Bin::DropLossySaturated);
        }
        if o.err_o & 1 != 0 {
            hit(Bin::DepartureUnderflow);
        }
        if o.cfg_err_o {
            hit(Bin::ConfigError);
        }
    }

    fn step_into(&mut self, i: &MmuInputs, o: &mut MmuOutputs) {
        let p = self.p;
        let d = self.d;
        let c = &self.c;
        let lossless = |q: usize| c.cfg_lossless_i >> (q % PRIOS) & 1 != 0;
        let nx = &mut self.s;
        let mut err = 0u8;

        // Registered outputs: the state at the start of the cycle (the state
        // is then updated in place).
        o.verdict_o = Verdict::None.code();
        refill(&mut o.pause_o, p.queues(), false);
        refill(&mut o.resume_o, p.queues(), false);
        o.xoff_o.clone_from(&nx.xoff_q);
        o.thr_o = 0;
        o.thr_lossy_o = 0;
        o.shr_size_o = d.shared as u32;
        o.priv_used_o = nx.priv_used_q;
        o.shr_used_o = nx.shr_used_q;
        o.hdr_used_o = nx.hdr_used_q;
        o.lossy_used_o = nx.lossy_used_q;
        o.q_priv_o.clone_from(&nx.priv_q);
        o.q_shr_o.clone_from(&nx.shr_q);
        o.q_hdr_o.clone_from(&nx.hdr_q);
        o.drop_ll_o = nx.drop_ll_q;
        o.drop_ly_o = nx.drop_ly_q;
        o.err_o = 0;
        o.cfg_err_o = d.cfg_err;
        let xoff_start = &o.xoff_o;

        // 1. Departure: headroom first, then shared, then private.
        if i.dep_valid_i {
            let q = i.dep_port_i as usize * PRIOS + i.dep_prio_i.value() as usize;
            let len = i.dep_len_i.value() as u32;
            let have = nx.priv_q[q] + nx.shr_q[q] + nx.hdr_q[q];
            if len > have {
                err |= 1;
            }
            let rel = len.min(have);
            let dh = rel.min(nx.hdr_q[q]);
            let ds = (rel - dh).min(nx.shr_q[q]);
            let dp = rel - dh - ds;
            nx.hdr_q[q] -= dh;
            nx.shr_q[q] -= ds;
            nx.priv_q[q] -= dp;
            if lossless(q) {
                nx.hdr_used_q -= dh;
                nx.shr_used_q -= ds;
                nx.priv_used_q -= dp;
            } else {
                nx.lossy_used_q -= ds;
            }
        }

        // 2. Thresholds after the departure.
        let free = d.shared.saturating_sub(nx.shr_used_q as u64);
        let thr = dt_threshold(free, c.cfg_alpha_i);
        let free_l = (c.cfg_lossy_cells_i as u64).saturating_sub(nx.lossy_used_q as u64);
        let thr_l = dt_threshold(free_l, c.cfg_alpha_lossy_i);
        o.thr_o = thr as u32;
        o.thr_lossy_o = thr_l as u32;

        // 3. Arrival, seeing the counters after the departure.
        let mut pause_q = None;
        if i.arr_valid_i {
            let q = i.arr_port_i as usize * PRIOS + i.arr_prio_i.value() as usize;
            let len = i.arr_len_i.value() as u64;
            let verdict = if len == 0 {
                err |= 2;
                Verdict::Invalid
            } else if d.cfg_err {
                Verdict::Invalid
            } else if lossless(q) {
                let (pv, sv, hv) = (nx.priv_q[q] as u64, nx.shr_q[q] as u64, nx.hdr_q[q] as u64);
                let a1 = len.min(c.cfg_priv_cells_i as u64 - pv);
                let room_s = thr.saturating_sub(sv).min(d.shared - nx.shr_used_q as u64);
                let a2 = (len - a1).min(room_s);
                let r2 = len - a1 - a2;
                let dropped = r2 > c.cfg_hdrm_cells_i[q / PRIOS] as u64 - hv;
                // 4. PAUSE if the packet did not fit private + shared.
                if !xoff_start[q] && (r2 > 0 || dropped) {
                    pause_q = Some(q);
                }
                if dropped {
                    nx.drop_ll_q = (nx.drop_ll_q + 1).min(p.max() as u32);
                    Verdict::Drop
                } else {
                    nx.priv_q[q] += a1 as u32;
                    nx.shr_q[q] += a2 as u32;
                    nx.hdr_q[q] += r2 as u32;
                    nx.priv_used_q += a1 as u32;
                    nx.shr_used_q += a2 as u32;
                    nx.hdr_used_q += r2 as u32;
                    if r2 > 0 {
                        Verdict::Headroom
                    } else if a2 > 0 {
                        Verdict::Shared
                    } else {
                        Verdict::Private
                    }
                }
            } else {
                let sv = nx.shr_q[q] as u64;
                let used = nx.lossy_used_q as u64;
                if sv + len <= thr_l && used + len <= c.cfg_lossy_cells_i as u64 {
                    nx.shr_q[q] += len as u32;
                    nx.lossy_used_q += len as u32;
                    Verdict::Lossy
                } else {
                    nx.drop_ly_q = (nx.drop_ly_q + 1).min(p.max() as u32);
                    Verdict::LossyDrop
                }
            };
            o.verdict_o = verdict.code();
        }
        if let Some(q) = pause_q {
            o.pause_o[q] = true;
            nx.xoff_q[q] = true;
        }

        // 5. RESUME: every queue OFF at the start of the cycle, headroom
        //    empty and shared occupancy below Xon after this cycle.
        //    (Branch-free over the queues: this runs every cycle.)
        for (q, &off) in xoff_start.iter().enumerate() {
            let r = off & (nx.hdr_q[q] == 0) & (nx.shr_q[q] < c.cfg_xon_cells_i);
            o.resume_o[q] = r;
            nx.xoff_q[q] &= !r;
        }

        o.err_o = err;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrive(port: u8, prio: u8, len: u8) -> MmuInputs {
        let mut i = MmuInputs::zero(&MmuParams::default());
        i.arr_valid_i = true;
        i.arr_port_i = port;
        i.arr_prio_i = u3::new(prio);
        i.arr_len_i = u6::new(len);
        i
    }

    fn depart(port: u8, prio: u8, len: u8) -> MmuInputs {
        let mut i = MmuInputs::zero(&MmuParams::default());
        i.dep_valid_i = true;
        i.dep_port_i = port;
        i.dep_prio_i = u3::new(prio);
        i.dep_len_i = u6::new(len);
        i
    }

    fn small() -> (MmuParams, MmuConfig) {
        let p = MmuParams::default();
        let c = MmuConfig {
            cfg_buf_cells_i: 1000,
            cfg_lossy_cells_i: 100,
            cfg_priv_cells_i: 2,
            cfg_hdrm_cells_i: vec![5; 4],
            cfg_xon_cells_i: 3,
            cfg_alpha_i: i4::new(0),
            cfg_alpha_lossy_i: i4::new(0),
            cfg_lossless_i: 0b1000,
        };
        (p, c)
    }

    #[test]
    fn four_cases_of_the_seed() {
        let (p, c) = small();
        let mut m = Mmu::new(&p, &c);
        // Bs = 1000 - 100 - 4 * 7 = 872
        assert_eq!(m.derived().shared, 872);
        let v = |o: &MmuOutputs| Verdict::from_code(o.verdict_o);
        assert_eq!(v(&m.step(&arrive(0, 3, 2))), Verdict::Private);
        // T = 872 - 0 = 872: the next cells go to shared.
        assert_eq!(v(&m.step(&arrive(0, 3, 60))), Verdict::Shared);
        m.assert_invariants();
        // Fill until the threshold: s + a2 <= T = 872 - S.
        let mut last = Verdict::None;
        let mut paused = false;
        for _ in 0..20 {
            let o = m.step(&arrive(0, 3, 63));
            last = v(&o);
            paused |= o.pause_o[3];
            m.assert_invariants();
            if last == Verdict::Drop {
                break;
            }
        }
        assert_eq!(last, Verdict::Drop);
        assert!(paused);
        assert!(m.state().xoff_q[3]);
        assert_eq!(m.state().hdr_q[3], 5.min(m.state().hdr_q[3]));
    }

    #[test]
    fn drained_queue_resumes_without_arrivals() {
        let (p, c) = small();
        let mut m = Mmu::new(&p, &c);
        for _ in 0..10 {
            m.step(&arrive(1, 3, 63));
        }
        assert!(m.state().xoff_q[8 + 3]);
        let mut resumed = false;
        for _ in 0..40 {
            let o = m.step(&depart(1, 3, 63));
            m.assert_invariants();
            if o.resume_o[8 + 3] {
                resumed = true;
                assert!(m.state().shr_q[8 + 3] < c.cfg_xon_cells_i);
                break;
            }
        }
        assert!(resumed);
        assert!(!m.state().xoff_q[8 + 3]);
    }

    #[test]
    fn thresholds_follow_the_exponent() {
        assert_eq!(dt_threshold(1000, i4::new(-8)), 0);
        assert_eq!(dt_threshold(1000, i4::new(-1)), 500);
        assert_eq!(dt_threshold(1001, i4::new(-2)), 250);
        assert_eq!(dt_threshold(1000, i4::new(0)), 1000);
        assert_eq!(dt_threshold(1000, i4::new(7)), 128_000);
    }

    #[test]
    fn illegal_configuration_is_rejected_and_flagged() {
        let (p, mut c) = small();
        c.cfg_hdrm_cells_i = vec![300; 4];
        let e = Mmu::check(&p, &c).unwrap_err();
        assert_eq!(e.field, "cfg_buf_cells_i");
        assert!(e.msg.contains("exceed the buffer of 1000 cells"), "{e}");
        let mut m = Mmu::new(&p, &c);
        let o = m.step(&arrive(0, 3, 1));
        assert!(o.cfg_err_o);
        assert_eq!(Verdict::from_code(o.verdict_o), Verdict::Invalid);
    }

    #[test]
    fn headroom_is_per_port() {
        // Port 0 has no headroom, port 1 ten cells, ports 2 and 3 the
        // largest value; the configuration check sums the four values.
        let p = MmuParams::default();
        let mut c = small().1;
        c.cfg_hdrm_cells_i = vec![0, 10, 3, 7];
        let d = Derived::new(&p, &c);
        assert_eq!(d.hdrm_sum, 20);
        assert_eq!(d.reserved, 4 * 2 + 20);
        assert_eq!(d.shared, 1000 - 100 - 28);
        // Exactly full is legal, one cell more of headroom on any port is not.
        c.cfg_buf_cells_i = 100 + 28;
        assert!(Mmu::check(&p, &c).is_ok());
        c.cfg_hdrm_cells_i[2] += 1;
        let e = Mmu::check(&p, &c).unwrap_err();
        assert!(e.msg.contains("headroom [0, 10, 4, 7] (sum 21)"), "{e}");
        // Bs = 0 and no private: every cell goes to headroom at once.
        c.cfg_hdrm_cells_i = vec![0, 10, 3, 7];
        c.cfg_priv_cells_i = 0;
        c.cfg_buf_cells_i = 100 + 20;
        let mut m = Mmu::new(&p, &c);
        assert_eq!(m.derived().shared, 0);
        let v = |o: &MmuOutputs| Verdict::from_code(o.verdict_o);
        let o = m.step(&arrive(0, 3, 1));
        assert_eq!(v(&o), Verdict::Drop);
        assert!(o.pause_o[3], "PAUSE on a drop");
        let o = m.step(&arrive(1, 3, 10));
        assert_eq!(v(&o), Verdict::Headroom);
        assert!(o.pause_o[8 + 3]);
        assert_eq!(v(&m.step(&arrive(1, 3, 1))), Verdict::Drop);
        assert_eq!(v(&m.step(&arrive(3, 3, 7))), Verdict::Headroom);
        assert_eq!(v(&m.step(&arrive(2, 3, 4))), Verdict::Drop);
        assert_eq!(v(&m.step(&arrive(2, 3, 3))), Verdict::Headroom);
        m.assert_invariants();
        let st = m.state();
        assert_eq!(
            (st.hdr_q[3], st.hdr_q[11], st.hdr_q[19], st.hdr_q[27]),
            (0, 10, 3, 7)
        );
        assert_eq!(st.drop_ll_q, 3);
    }

    #[test]
    fn departure_underflow_clamps_and_flags() {
        let (p, c) = small();
        let mut m = Mmu::new(&p, &c);
        m.step(&arrive(0, 3, 4));
        let o = m.step(&depart(0, 3, 9));
        assert_eq!(o.err_o, 1);
        m.assert_invariants();
        assert_eq!(m.state().priv_used_q + m.state().shr_used_q, 0);
    }
}
