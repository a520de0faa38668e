//! Buffer sizing from a link, term by term, with the formulas of the seeds
//! (`docs/sizing.md` lists each with its source).
//!
//! - PFC headroom per port: seed 001, section II-C, Eq. (1),
//!   `eta = 2 (C Dprop + L_MTU) + 3840 B`, and seed 000's XON/XOFF headroom
//!   (reaction data + wire data, plus a hysteresis of another reaction data).
//! - Credit-based flow control: one BDP `R x RTT` (seed 000, "Credit-Based
//!   flow control"), the credit quantum `R x cycles per credit / f` with a
//!   fabric speed-up, rounded up to a whole cell ("Credit Quantum Sizing"),
//!   and the granularity correction of `docs/credit.md`.
//! - Cell-fabric buffer: M/D/1 large-deviation tail `P{Q > N} ~ Cq e^(-theta N)`
//!   ("Buffering in the Cell Fabric"), and the M/M/1 and M/D/1 mean queues.
//! - Pipeline parallelism `P = R / r` ("Minimum Required Parallelism").
//!
//! Units: bytes, nanoseconds, Gb/s (= bits per ns), GHz (= cycles per ns).
//! Byte counts are rounded up to whole bytes ([`ceil`]), so every figure
//! errs on the safe side.

use std::fmt;

/// Speed of light in vacuum, m/s.
pub const C_VACUUM: f64 = 299_792_458.0;
/// Seed 001's processing allowance of the PFC definition: 3840 B
/// (60 pause quanta of 512 bits), the time `3840 B / C`.
pub const PFC_ALLOWANCE_BYTES: u64 = 3840;
/// A PFC (PAUSE) frame, bytes (seed 000's plot; IEEE 802.1Qbb).
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// The smallest Ethernet frame, bytes.
pub const MIN_FRAME_BYTES: u64 = 64;
/// Preamble, start delimiter and inter-frame gap, bytes (seed 000's `G`).
pub const ETH_OVERHEAD_BYTES: u64 = 20;

/// A bad input: the field, the value and what is legal.
#[derive(Clone, Debug, PartialEq)]
pub struct InputError {
    /// The input's name (as the command line spells it).
    pub field: &'static str,
    /// What is wrong, with the value and the legal range.
    pub msg: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.msg)
    }
}

impl std::error::Error for InputError {}

fn need(field: &'static str, ok: bool, v: f64, range: &str) -> Result<(), InputError> {
    if ok && v.is_finite() {
        Ok(())
    } else {
        Err(InputError {
            field,
            msg: format!("{v} is outside the legal range {range}"),
        })
    }
}

/// `x` rounded up to an integer, ignoring floating-point noise (relative
/// 1e-9) just above an integer: `50 * 2 * 1.05` is 105, not 106.
pub fn ceil(x: f64) -> u64 {
    let r = x.round();
    if (x - r).abs() <= 1e-9 * x.abs().max(1.0) {
        r as u64
    } else {
        x.ceil() as u64
    }
}

// ---------------------------------------------------------------------------
// PFC headroom
// ---------------------------------------------------------------------------

/// One PFC link: what the headroom of its ingress port depends on.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Link speed `C`, Gb/s.
    pub gbps: f64,
    /// Cable length, m.
    pub cable_m: f64,
    /// Propagation speed, a fraction of `c` (0.65 in single-mode fibre).
    pub velocity: f64,
    /// MTU `L`, bytes: the longest frame on the link.
    pub mtu: u64,
    /// The peer's response time, ns; `None`: the PFC definition's cap,
    /// `3840 B / C`.
    pub response_ns: Option<f64>,
}

impl Link {
    /// Checks every field's range.
    pub fn check(&self) -> Result<(), InputError> {
        check_speed(self.gbps)?;
        need(
            "cable",
            self.cable_m >= 0.0 && self.cable_m <= 1e6,
            self.cable_m,
            "0..=1000000 m",
        )?;
        need(
            "velocity",
            self.velocity > 0.0 && self.velocity <= 1.0,
            self.velocity,
            "(0, 1] (a fraction of c)",
        )?;
        need(
            "mtu",
            (MIN_FRAME_BYTES..=65_535).contains(&self.mtu),
            self.mtu as f64,
            "64..=65535 bytes",
        )?;
        if let Some(r) = self.response_ns {
            need("response", (0.0..=1e7).contains(&r), r, "0..=10000000 ns")?;
        }
        Ok(())
    }
    /// `C` in bytes per ns.
    pub fn bytes_per_ns(&self) -> f64 {
        self.gbps / 8.0
    }
    /// One-way propagation delay `Dprop = length / (v c)`, ns.
    pub fn prop_ns(&self) -> f64 {
        self.cable_m / (self.velocity * C_VACUUM) * 1e9
    }
    /// The peer's response time, ns.
    pub fn response_ns(&self) -> f64 {
        self.response_ns
            .unwrap_or(PFC_ALLOWANCE_BYTES as f64 / self.bytes_per_ns())
    }
}

/// The headroom of one ingress port, every term in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Headroom {
    /// `Dprop`, ns.
    pub prop_ns: f64,
    /// Wire data `C Dprop`: bytes on the cable one way.
    pub wire_bytes: u64,
    /// `C x response`: the processing allowance (3840 B by default).
    pub response_bytes: u64,
    /// `L_MTU`.
    pub mtu_bytes: u64,
    /// Seed 001: `eta = 2 (C Dprop + L_MTU) + C x response`.
    pub eta_bytes: u64,
    /// MTU packets that fit: `floor(eta / L_MTU)`. With MTU packets back to
    /// back, the packet that crosses Xoff and every packet the peer starts
    /// before it stops number at most this many.
    pub packets: u64,
    /// Cells per MTU packet, `ceil(L_MTU / cell)`.
    pub cells_per_packet: u64,
    /// Headroom in cells for MTU traffic: `packets x cells_per_packet`.
    pub eta_cells: u64,
    /// `ceil(eta / cell)`: too little when packets do not fill their last cell.
    pub naive_cells: u64,
    /// Bound for any frames of at least 64 B: [`any_frame_cells`].
    pub any_frame_cells: u64,
    /// Seed 000, reaction data `C (T_gen + T_link + T_act)`, with
    /// `T_gen = (L_MTU + 64 B) / C` (the frame in progress, then the PAUSE
    /// frame), `T_link = Dprop`, `T_act = response + L_MTU / C`.
    pub reaction_bytes: u64,
    /// Seed 000, XON/XOFF headroom: reaction data + wire data.
    pub xoff_bytes: u64,
    /// Seed 000, hysteresis between Xoff and Xon: another reaction data.
    pub hysteresis_bytes: u64,
    /// Seed 000, headroom + hysteresis.
    pub xoff_total_bytes: u64,
}

/// The most cells `bytes` of frames of at least 64 B can take in cells of
/// `cell >= 64` bytes. A frame of `f` bytes takes `ceil(f / cell)` cells;
/// the most cells per byte is `1 / 64` (a 64 B frame) when `cell >= 127`,
/// else `2 / (cell + 1)` (a frame one byte longer than a cell).
pub fn any_frame_cells(bytes: u64, cell: u64) -> u64 {
    if cell + 1 >= 2 * MIN_FRAME_BYTES {
        bytes / MIN_FRAME_BYTES
    } else {
        2 * bytes / (cell + 1)
    }
}

/// The headroom of a port on `link`, for a buffer of `cell`-byte cells.
pub fn headroom(link: &Link, cell: u64) -> Headroom {
    let c = link.bytes_per_ns();
    let prop_ns = link.prop_ns();
    let wire = ceil(c * prop_ns);
    let resp = ceil(c * link.response_ns());
    let l = link.mtu;
    let eta = 2 * (wire + l) + resp;
    let packets = eta / l;
    let cells_per_packet = l.div_ceil(cell);
    let reaction = (l + PAUSE_FRAME_BYTES) + wire + (resp + l);
    Headroom {
        prop_ns,
        wire_bytes: wire,
        response_bytes: resp,
        mtu_bytes: l,
        eta_bytes: eta,
        packets,
        cells_per_packet,
        eta_cells: packets * cells_per_packet,
        naive_cells: eta.div_ceil(cell),
        any_frame_cells: any_frame_cells(eta, cell),
        reaction_bytes: reaction,
        xoff_bytes: reaction + wire,
        hysteresis_bytes: reaction,
        xoff_total_bytes: 2 * reaction + wire,
    }
}

// ---------------------------------------------------------------------------
// Credit-based flow control
// ---------------------------------------------------------------------------

/// A credit loop.
#[derive(Clone, Debug, PartialEq)]
pub struct CreditLoop {
    /// Rate `R`, Gb/s.
    pub gbps: f64,
    /// Clock of the credit scheduler, GHz.
    pub clock_ghz: f64,
    /// One credit every this many cycles.
    pub cycles_per_credit: u64,
    /// Fabric speed-up (1.05: 5 %).
    pub speedup: f64,
    /// Cell size, bytes: the quantum is a whole number of cells.
    pub cell: u64,
    /// Round-trip time of the credit loop, ns.
    pub rtt_ns: f64,
}

impl CreditLoop {
    /// Checks every field's range.
    pub fn check(&self) -> Result<(), InputError> {
        check_speed(self.gbps)?;
        need(
            "clock",
            self.clock_ghz > 0.0 && self.clock_ghz <= 100.0,
            self.clock_ghz,
            "(0, 100] GHz",
        )?;
        need(
            "credit-interval",
            (1..=1_000_000).contains(&self.cycles_per_credit),
            self.cycles_per_credit as f64,
            "1..=1000000 cycles",
        )?;
        need(
            "speedup",
            (1.0..=16.0).contains(&self.speedup),
            self.speedup,
            "1..=16",
        )?;
        check_cell(self.cell)?;
        need(
            "rtt",
            self.rtt_ns > 0.0 && self.rtt_ns <= 1e9,
            self.rtt_ns,
            "(0, 1e9] ns",
        )
    }
}

/// The link speed's range (Gb/s).
pub fn check_speed(gbps: f64) -> Result<(), InputError> {
    need("speed", gbps > 0.0 && gbps <= 1e5, gbps, "(0, 100000] Gb/s")
}

/// The cell size's range.
pub fn check_cell(cell: u64) -> Result<(), InputError> {
    need(
        "cell",
        (MIN_FRAME_BYTES..=65_535).contains(&cell),
        cell as f64,
        "64..=65535 bytes",
    )
}

/// Credit buffer and quantum.
#[derive(Clone, Debug, PartialEq)]
pub struct CreditSizing {
    /// `R / f`, bytes per cycle.
    pub bytes_per_cycle: f64,
    /// `RTT x f`, cycles (rounded up).
    pub rtt_cycles: u64,
    /// One BDP, `R x RTT`, bytes.
    pub bdp_bytes: u64,
    /// One BDP in cells, real-valued (the seed rounds it).
    pub bdp_cells: f64,
    /// The quantum that keeps the port busy: `R x cycles per credit / f`.
    pub q_min_bytes: u64,
    /// With the fabric speed-up.
    pub q_speedup_bytes: u64,
    /// Rounded up to a whole number of cells.
    pub quantum_bytes: u64,
    /// Credits per cycle `num / den` (one per `cycles_per_credit`).
    pub rate: (u64, u64),
    /// What the project measured with a coarse quantum on irregular credit
    /// slots: full rate from `BDP + Q` (`docs/credit.md`: 42/40 BDP for
    /// `Q = 100 B`, `R = 50 B/cycle`, `RTT = 40` cycles).
    pub measured_bytes: u64,
    /// The proven sufficient buffer of `docs/credit.md`:
    /// `BDP + Q - 1 + floor(Q (den - 1) / den)`.
    pub bound_bytes: u64,
    /// The buffer to configure: the larger of the two.
    pub buffer_bytes: u64,
}

/// Sizes a credit loop.
pub fn credit(l: &CreditLoop) -> CreditSizing {
    let bpc = l.gbps / 8.0 / l.clock_ghz;
    let bdp = ceil(l.gbps / 8.0 * l.rtt_ns);
    let q_min = ceil(bpc * l.cycles_per_credit as f64);
    let q_s = ceil(bpc * l.cycles_per_credit as f64 * l.speedup);
    let q = q_s.div_ceil(l.cell).max(1) * l.cell;
    let (num, den) = (1, l.cycles_per_credit);
    let measured = bdp + q;
    let bound = bdp + q - 1 + q * (den - num) / den;
    CreditSizing {
        bytes_per_cycle: bpc,
        rtt_cycles: ceil(l.rtt_ns * l.clock_ghz),
        bdp_bytes: bdp,
        bdp_cells: bdp as f64 / l.cell as f64,
        q_min_bytes: q_min,
        q_speedup_bytes: q_s,
        quantum_bytes: q,
        rate: (num, den),
        measured_bytes: measured,
        bound_bytes: bound,
        buffer_bytes: measured.max(bound),
    }
}

// ---------------------------------------------------------------------------
// Queues in the cell fabric
// ---------------------------------------------------------------------------

fn check_load(rho: f64) -> Result<(), InputError> {
    need(
        "load",
        rho > 0.0 && rho < 1.0,
        rho,
        "(0, 1) (utilisation rho)",
    )
}

/// The positive root `theta` of `rho (e^theta - 1) = theta` (Newton-Raphson).
///
/// `f(theta) = rho (e^theta - 1) - theta` is convex with `f(0) = 0` and
/// `f'(0) = rho - 1 < 0`, so it has one positive root, at most
/// `2 (1 - rho) / rho` (as `e^x - 1 >= x + x^2 / 2`); Newton's method from
/// that bound decreases monotonically onto it.
pub fn md1_theta(rho: f64) -> Result<f64, InputError> {
    check_load(rho)?;
    let mut t = 2.0 * (1.0 - rho) / rho;
    for _ in 0..200 {
        let f = rho * t.exp_m1() - t;
        let df = rho * t.exp() - 1.0;
        let next = t - f / df;
        if (next - t).abs() <= 1e-15 * t {
            return Ok(next);
        }
        t = next;
    }
    Ok(t)
}

/// The M/D/1 buffer for a loss target (large-deviation tail bound).
#[derive(Clone, Debug, PartialEq)]
pub struct FabricBuffer {
    /// Utilisation `rho`.
    pub rho: f64,
    /// Target `P_max`.
    pub p_max: f64,
    /// Decay rate `theta`: `rho (e^theta - 1) = theta`.
    pub theta: f64,
    /// `Cq = (1 - rho) / (rho + e^-theta)`.
    pub cq: f64,
    /// `N >= (ln Cq - ln P_max) / theta`, real-valued.
    pub n: f64,
    /// `N` rounded up, cells.
    pub cells: u64,
    /// In bytes.
    pub bytes: u64,
}

/// The smallest queue `N` (cells) with `Cq e^(-theta N) <= p_max`.
pub fn md1_buffer(rho: f64, p_max: f64, cell: u64) -> Result<FabricBuffer, InputError> {
    let theta = md1_theta(rho)?;
    need(
        "loss",
        p_max > 0.0 && p_max < 1.0,
        p_max,
        "(0, 1) (probability)",
    )?;
    check_cell(cell)?;
    let cq = (1.0 - rho) / (rho + (-theta).exp());
    let n = ((cq.ln() - p_max.ln()) / theta).max(0.0);
    let cells = ceil(n);
    Ok(FabricBuffer {
        rho,
        p_max,
        theta,
        cq,
        n,
        cells,
        bytes: cells * cell,
    })
}

/// Mean queues of M/M/1 and M/D/1 at utilisation `rho` (in cells, and
/// waiting times in cell times `1 / mu`).
#[derive(Clone, Debug, PartialEq)]
pub struct MeanQueues {
    /// Utilisation.
    pub rho: f64,
    /// M/M/1 mean number waiting `rho^2 / (1 - rho)` (seed 000's table).
    pub mm1_waiting: f64,
    /// M/D/1 mean number waiting `rho^2 / (2 (1 - rho))` (seed 000's table).
    pub md1_waiting: f64,
    /// M/M/1 mean number in the system `rho / (1 - rho)`.
    pub mm1_in_system: f64,
    /// M/D/1 mean number in the system `rho + rho^2 / (2 (1 - rho))`.
    pub md1_in_system: f64,
    /// M/M/1 mean wait, cell times: `mu rho / (mu - lambda) = rho / (1 - rho)`.
    pub mm1_wait: f64,
    /// M/D/1 mean wait, cell times: `rho / (2 (1 - rho))`.
    pub md1_wait: f64,
}

/// The mean queues at utilisation `rho`.
pub fn mean_queues(rho: f64) -> Result<MeanQueues, InputError> {
    check_load(rho)?;
    let r = rho;
    Ok(MeanQueues {
        rho,
        mm1_waiting: r * r / (1.0 - r),
        md1_waiting: r * r / (2.0 * (1.0 - r)),
        mm1_in_system: r / (1.0 - r),
        md1_in_system: r + r * r / (2.0 * (1.0 - r)),
        mm1_wait: r / (1.0 - r),
        md1_wait: r / (2.0 * (1.0 - r)),
    })
}

// ---------------------------------------------------------------------------
// Pipeline parallelism
// ---------------------------------------------------------------------------

/// A switch's packet rate against one pipeline's.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipelines {
    /// Payload `S`, bytes.
    pub payload: u64,
    /// Arrival rate `R = B / (8 (S + G))`, packets per second.
    pub arrival_pps: f64,
    /// Cycles per packet `ceil(((S + G) / W) / c)`.
    pub cycles_per_packet: u64,
    /// One pipeline's rate `r = f / cycles per packet`, packets per second.
    pub pipeline_pps: f64,
    /// `P = R / r`.
    pub p: f64,
}

/// Seed 000: pipelines for a switch of `gbps` total bandwidth, packets of
/// `payload` bytes plus `overhead`, a datapath of `width` bytes taking
/// `per_cycle` packets per cycle at `clock_ghz`.
pub fn pipelines(
    gbps: f64,
    payload: u64,
    overhead: u64,
    width: u64,
    per_cycle: u64,
    clock_ghz: f64,
) -> Result<Pipelines, InputError> {
    need(
        "switch",
        gbps > 0.0 && gbps <= 1e7,
        gbps,
        "(0, 10000000] Gb/s",
    )?;
    need(
        "bus",
        (1..=65_535).contains(&width),
        width as f64,
        "1..=65535 bytes",
    )?;
    need(
        "clock",
        clock_ghz > 0.0 && clock_ghz <= 100.0,
        clock_ghz,
        "(0, 100] GHz",
    )?;
    let per_cycle = per_cycle.max(1);
    let wire = payload + overhead;
    let arrival = gbps * 1e9 / (8.0 * wire as f64);
    let cycles = wire.div_ceil(width).div_ceil(per_cycle);
    let r = clock_ghz * 1e9 / cycles as f64;
    Ok(Pipelines {
        payload,
        arrival_pps: arrival,
        cycles_per_packet: cycles,
        pipeline_pps: r,
        p: arrival / r,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(gbps: f64, m: f64, mtu: u64) -> Link {
        Link {
            gbps,
            cable_m: m,
            velocity: 0.65,
            mtu,
            response_ns: None,
        }
    }

    #[test]
    fn seed_001_propagation_300_m_is_about_1_5_us() {
        // "the distance ... can be as large as 300 meters ... 65% of [c] ...
        // the propagation delay is ~1.5 us".
        let d = link(100.0, 300.0, 1500).prop_ns();
        assert!((d - 1539.5).abs() < 0.05, "{d}");
        assert!((d / 1000.0 - 1.5).abs() < 0.05);
    }

    #[test]
    fn reference_worked_headroom_values_at_100g() {
        // REFERENCE.md: at 100 Gb/s, MTU 1500: 19,340 B (Dprop 0.5 us),
        // 31,840 B (1 us); MTU 9216: 34,772 B and 47,272 B. Cable lengths
        // that give exactly those delays at 0.65 c.
        for (dprop_ns, mtu, want) in [
            (500.0, 1500, 19_340),
            (1000.0, 1500, 31_840),
            (500.0, 9216, 34_772),
            (1000.0, 9216, 47_272),
        ] {
            let m = dprop_ns * 1e-9 * 0.65 * C_VACUUM;
            let h = headroom(&link(100.0, m, mtu), 256);
            assert_eq!(h.eta_bytes, want, "Dprop {dprop_ns} ns MTU {mtu}");
            assert_eq!(h.response_bytes, 3840);
        }
    }

    #[test]
    fn headroom_terms_add_up() {
        let h = headroom(&link(400.0, 300.0, 9216), 256);
        assert_eq!(h.eta_bytes, 2 * (h.wire_bytes + 9216) + 3840);
        assert_eq!(h.packets, h.eta_bytes / 9216);
        assert_eq!(h.cells_per_packet, 36);
        assert_eq!(h.eta_cells, h.packets * 36);
        assert!(h.eta_cells * 256 <= h.eta_bytes + 36 * 256);
        // Seed 000 against seed 001: the same delays plus the PAUSE frame.
        assert_eq!(h.xoff_bytes, h.eta_bytes + PAUSE_FRAME_BYTES);
        assert_eq!(h.xoff_total_bytes, h.xoff_bytes + h.reaction_bytes);
        // MTU packets of 1500 B waste 36 B of their sixth cell: the naive
        // conversion falls short at 100G over 300 m.
        let h = headroom(&link(100.0, 300.0, 1500), 256);
        assert!(h.naive_cells < h.eta_cells, "{h:?}");
        assert!(h.any_frame_cells >= h.eta_cells);
    }

    #[test]
    fn any_frame_bound_covers_every_frame_size() {
        // Frames of one size f back to back in `bytes`: floor(bytes / f)
        // frames of ceil(f / cell) cells never exceed the bound.
        for cell in [64u64, 100, 126, 127, 128, 256, 384] {
            for bytes in [0u64, 1000, 45_330, 176_226] {
                let bound = any_frame_cells(bytes, cell);
                let worst = (64..=4 * cell)
                    .map(|f| bytes / f * f.div_ceil(cell))
                    .max()
                    .unwrap();
                assert!(
                    worst <= bound,
                    "cell {cell} bytes {bytes}: {worst} > {bound}"
                );
            }
        }
        // Cells of 64 B: frames of 65 B take two cells each.
        assert_eq!(any_frame_cells(65 * 10, 64), 20);
    }

    #[test]
    fn a_given_response_time_replaces_the_3840_b_allowance() {
        let mut l = link(100.0, 0.0, 1500);
        l.response_ns = Some(100.0);
        let h = headroom(&l, 256);
        assert_eq!(h.wire_bytes, 0);
        assert_eq!(h.response_bytes, 1250);
        assert_eq!(h.eta_bytes, 2 * 1500 + 1250);
    }

    #[test]
    fn seed_000_credit_quantum_100_b_105_b_one_cell() {
        // 400 Gb/s, one credit per 2 cycles of 1 GHz: 100 B; 5 % speed-up:
        // 105 B; rounded to a 256 B cell.
        let s = credit(&CreditLoop {
            gbps: 400.0,
            clock_ghz: 1.0,
            cycles_per_credit: 2,
            speedup: 1.05,
            cell: 256,
            rtt_ns: 800.0,
        });
        assert_eq!(s.q_min_bytes, 100);
        assert_eq!(s.q_speedup_bytes, 105);
        assert_eq!(s.quantum_bytes, 256);
        assert_eq!(s.rate, (1, 2));
        // One BDP at 400G and 0.8 us: 40 KB, 156.25 cells (the seed's ~156).
        assert_eq!(s.bdp_bytes, 40_000);
        assert!((s.bdp_cells - 156.25).abs() < 1e-9);
        assert_eq!(s.rtt_cycles, 800);
        assert_eq!(s.bound_bytes, 40_000 + 255 + 128);
        assert_eq!(s.measured_bytes, 40_256);
        assert_eq!(s.buffer_bytes, s.bound_bytes);
    }

    #[test]
    fn credit_measurement_of_docs_credit_md_is_42_40_bdp() {
        // docs/credit.md: Q = 100 B, R = 50 B/cycle, RTT = 40 cycles:
        // BDP = 2000 B, full rate from 42/40 BDP = 2100 B, bound 2196 B.
        let s = credit(&CreditLoop {
            gbps: 400.0,
            clock_ghz: 1.0,
            cycles_per_credit: 2,
            speedup: 1.0,
            cell: 100,
            rtt_ns: 40.0,
        });
        assert_eq!(s.bdp_bytes, 2000);
        assert_eq!(s.quantum_bytes, 100);
        assert_eq!(s.measured_bytes * 40, 42 * s.bdp_bytes);
        // den = 2 here (the measurement used 21/40): 2000 + 99 + 50.
        assert_eq!(s.bound_bytes, 2149);
    }

    #[test]
    fn seed_000_md1_buffer_is_about_53_cells() {
        // rho = 0.9, P_max = 1e-6: ~53 cells, ~13.5 kB of 256 B cells.
        let b = md1_buffer(0.9, 1e-6, 256).unwrap();
        assert!((b.rho * b.theta.exp_m1() - b.theta).abs() < 1e-12);
        assert!((b.theta - 0.20715).abs() < 1e-5, "{b:?}");
        assert_eq!(b.cells, 53);
        assert!((b.bytes as f64 / 1000.0 - 13.5).abs() < 0.1, "{}", b.bytes);
        // The bound holds at N and fails one cell earlier.
        let tail = |n: f64| b.cq * (-b.theta * n).exp();
        assert!(tail(53.0) <= 1e-6 && tail(52.0) > 1e-6);
        // Heavier load or a tighter target needs more.
        assert!(md1_buffer(0.95, 1e-6, 256).unwrap().cells > 53);
        assert!(md1_buffer(0.9, 1e-9, 256).unwrap().cells > 53);
    }

    #[test]
    fn seed_000_mean_queues_9_against_4_5() {
        // "if rho = 0.9, an M/M/1 queue averages 9 ... while M/D/1 averages
        // only 4.5": the seed's mean waits in cell times (its table's
        // rho / (mu - lambda) and rho / (2 mu (1 - rho))); the numbers
        // waiting are 8.1 and 4.05, half as well.
        let q = mean_queues(0.9).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(q.mm1_wait, 9.0), "{q:?}");
        assert!(close(q.md1_wait, 4.5));
        assert!(close(q.mm1_in_system, 9.0));
        assert!(close(q.mm1_waiting, 8.1));
        assert!(close(q.md1_waiting, 4.05));
        assert!(close(q.md1_in_system, 4.95));
        assert!(close(q.md1_waiting * 2.0, q.mm1_waiting));
    }

    #[test]
    fn seed_000_pipelines_for_25_6_tbps() {
        // 32 x 400G at 1.2 GHz with a 256 B bus: ~38 G packets/s of 64 B,
        // ~11.6 G of 256 B, one pipeline ~1.2 G/s.
        let p64 = pipelines(25_600.0, 64, 20, 256, 1, 1.2).unwrap();
        assert!((p64.arrival_pps / 1e9 - 38.1).abs() < 0.1, "{p64:?}");
        assert!((p64.pipeline_pps / 1e9 - 1.2).abs() < 1e-9);
        assert_eq!(p64.cycles_per_packet, 1);
        assert!(p64.p > 31.0 && p64.p < 32.0);
        let p256 = pipelines(25_600.0, 256, 20, 256, 1, 1.2).unwrap();
        assert!((p256.arrival_pps / 1e9 - 11.6).abs() < 0.05, "{p256:?}");
        assert_eq!(p256.cycles_per_packet, 2);
    }

    #[test]
    fn bad_inputs_name_the_field_and_range() {
        let mut l = link(100.0, 300.0, 1500);
        l.velocity = 1.5;
        let e = l.check().unwrap_err();
        assert_eq!(e.field, "velocity");
        assert!(
            e.to_string().contains("1.5 is outside the legal range"),
            "{e}"
        );
        l.velocity = 0.65;
        l.mtu = 10;
        assert_eq!(l.check().unwrap_err().field, "mtu");
        assert_eq!(md1_theta(1.0).unwrap_err().field, "load");
        assert_eq!(md1_buffer(0.9, 0.0, 256).unwrap_err().field, "loss");
        assert!(link(f64::NAN, 1.0, 1500).check().is_err());
    }

    #[test]
    fn ceil_ignores_float_noise_only() {
        assert_eq!(ceil(50.0 * 2.0 * 1.05), 105);
        assert_eq!(ceil(105.01), 106);
        assert_eq!(ceil(0.0), 0);
    }
}
