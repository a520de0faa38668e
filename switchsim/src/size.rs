//! `switchsim size`: from a link to a configuration in one step.
//!
//! The sizing math is `studies::sizing` (pure, tested there); this module
//! picks the inputs apart, prints every term with the formula it comes from,
//! and builds the MMU configuration (one headroom per ingress port, one
//! cable length per port) and the credit scheduler configuration, as TOML
//! that `switchsim run mmu --config` and `switchsim run credit --config`
//! load. `docs/sizing.md` has the formulas and their sources.

use crate::config;
use anyhow::{anyhow, bail, Result};
use model::credit::{Credit, CreditConfig, CreditParams};
use model::mmu::{Mmu, MmuConfig, MmuParams};
use model::{Block, Params};
use std::fmt::Write;
use studies::sizing::{self, CreditLoop, Headroom, Link};

/// The inputs of `switchsim size`.
#[derive(Clone, Debug)]
pub struct SizeArgs {
    /// Link speed, Gb/s.
    pub gbps: f64,
    /// Cable length per ingress port, m (one value: every port).
    pub cables: Vec<f64>,
    /// Propagation speed, fraction of c.
    pub velocity: f64,
    /// MTU, bytes.
    pub mtu: u64,
    /// The peer's response time, ns (default: 3840 B / C).
    pub response_ns: Option<f64>,
    /// Cell size, bytes.
    pub cell: u64,
    /// Clock, GHz.
    pub clock_ghz: f64,
    /// One credit every this many cycles.
    pub credit_interval: u64,
    /// Fabric speed-up.
    pub speedup: f64,
    /// Credit loop RTT, ns (default: 2 Dprop of the longest cable + response).
    pub rtt_ns: Option<f64>,
    /// Cell-fabric utilisation.
    pub load: f64,
    /// Cell-fabric loss target.
    pub loss: f64,
    /// Switch bandwidth for the pipeline count, Gb/s (default: ports x speed).
    pub switch_gbps: Option<f64>,
    /// Datapath width, bytes.
    pub bus: u64,
    /// MMU buffer, cells (default: the largest the variant counts).
    pub buffer_cells: Option<u64>,
    /// Lossless priorities (bit mask).
    pub lossless: u8,
}

/// The defaults of `switchsim size` (its `--help` shows them): 100 Gb/s,
/// 300 m at 0.65 c, MTU 1500 B, cells of 256 B at 1 GHz, one credit per 2
/// cycles, speed-up 1.05, rho 0.9, loss 1e-6, a 256 B bus, priorities 3 and
/// 4 lossless.
impl Default for SizeArgs {
    fn default() -> Self {
        SizeArgs {
            gbps: 100.0,
            cables: vec![300.0],
            velocity: 0.65,
            mtu: 1500,
            response_ns: None,
            cell: 256,
            clock_ghz: 1.0,
            credit_interval: 2,
            speedup: 1.05,
            rtt_ns: None,
            load: 0.9,
            loss: 1e-6,
            switch_gbps: None,
            bus: 256,
            buffer_cells: None,
            lossless: 0x18,
        }
    }
}

/// What `size` computed: the text, and the two configurations.
#[derive(Clone, Debug)]
pub struct Sizing {
    /// The report, term by term.
    pub text: String,
    /// One headroom per ingress port (cable), in port order.
    pub headroom: Vec<Headroom>,
    /// MMU variant and configuration.
    pub mmu: (MmuParams, MmuConfig),
    /// Credit scheduler variant and configuration.
    pub credit: (CreditParams, CreditConfig),
}

impl Sizing {
    /// The MMU configuration as TOML.
    pub fn mmu_toml(&self) -> String {
        config::to_toml::<Mmu>(&self.mmu.0, &self.mmu.1)
    }
    /// The credit scheduler configuration as TOML.
    pub fn credit_toml(&self) -> String {
        config::to_toml::<Credit>(&self.credit.0, &self.credit.1)
    }
}

fn row(s: &mut String, name: &str, formula: &str, value: String) {
    let _ = writeln!(s, "  {name:<32} {formula:<54} {value}");
}

fn kb(b: u64) -> String {
    format!("{b} B ({:.1} KB)", b as f64 / 1000.0)
}

/// The link of port `k`.
fn link_of(a: &SizeArgs, cable: f64) -> Link {
    Link {
        gbps: a.gbps,
        cable_m: cable,
        velocity: a.velocity,
        mtu: a.mtu,
        response_ns: a.response_ns,
    }
}

/// Computes and formats the sizing; every bad input is an error naming it.
pub fn size(a: &SizeArgs) -> Result<Sizing> {
    if a.cables.is_empty() {
        bail!("cable: give at least one cable length (m), e.g. --cable 300 or --cable 10,100,300");
    }
    sizing::check_cell(a.cell)?;
    for &c in &a.cables {
        link_of(a, c).check()?;
    }
    let mut s = String::new();
    let cables: Vec<String> = a.cables.iter().map(|c| format!("{c} m")).collect();
    let _ = writeln!(
        s,
        "switchsim size: {} Gb/s, cable {} at {} c, MTU {} B, cells of {} B, clock {} GHz",
        a.gbps,
        cables.join(", "),
        a.velocity,
        a.mtu,
        a.cell,
        a.clock_ghz
    );

    // PFC headroom, per ingress port.
    let heads: Vec<Headroom> = a
        .cables
        .iter()
        .map(|&c| sizing::headroom(&link_of(a, c), a.cell))
        .collect();
    let resp_default = a.response_ns.is_none();
    for (k, (&cable, h)) in a.cables.iter().zip(&heads).enumerate() {
        let who = if a.cables.len() == 1 {
            "every ingress port".to_string()
        } else {
            format!("ingress port {k}")
        };
        let _ = writeln!(
            s,
            "\nPFC headroom, {who}: cable {cable} m (seed 001, Sec. II-C, Eq. (1))"
        );
        row(
            &mut s,
            "Dprop",
            "length / (velocity c)",
            format!("{:.1} ns", h.prop_ns),
        );
        row(
            &mut s,
            "wire data",
            "C Dprop",
            format!("{} B", h.wire_bytes),
        );
        row(&mut s, "MTU", "L_MTU", format!("{} B", h.mtu_bytes));
        row(
            &mut s,
            "response",
            if resp_default {
                "3840 B (the PFC cap 3840 B / C, 60 quanta)"
            } else {
                "C x the peer's response time"
            },
            format!("{} B", h.response_bytes),
        );
        row(
            &mut s,
            "headroom eta",
            "2 (C Dprop + L_MTU) + response",
            kb(h.eta_bytes),
        );
        row(
            &mut s,
            "MTU packets in eta",
            "floor(eta / L_MTU)",
            h.packets.to_string(),
        );
        row(
            &mut s,
            "cells per MTU packet",
            "ceil(L_MTU / cell)",
            h.cells_per_packet.to_string(),
        );
        row(
            &mut s,
            "headroom in cells (configured)",
            "packets x cells per packet",
            format!("{} cells ({} B)", h.eta_cells, h.eta_cells * a.cell),
        );
        row(
            &mut s,
            "  bytes / cell, for comparison",
            "ceil(eta / cell) (ignores the last cell's waste)",
            format!("{} cells", h.naive_cells),
        );
        row(
            &mut s,
            "  any frames of >= 64 B",
            if a.cell >= 127 {
                "floor(eta / 64)"
            } else {
                "floor(2 eta / (cell + 1))"
            },
            format!("{} cells", h.any_frame_cells),
        );
        let _ = writeln!(s, "  seed 000 (XON/XOFF), beside it:");
        row(
            &mut s,
            "reaction data",
            "C (T_gen+T_link+T_act) = (L+64) + C Dprop + (resp+L)",
            format!("{} B", h.reaction_bytes),
        );
        row(
            &mut s,
            "headroom",
            "reaction data + wire data (C T_link)",
            kb(h.xoff_bytes),
        );
        row(
            &mut s,
            "hysteresis (Xoff - Xon)",
            "another reaction data",
            format!("{} B", h.hysteresis_bytes),
        );
        row(
            &mut s,
            "headroom + hysteresis",
            "2 reaction data + wire data",
            kb(h.xoff_total_bytes),
        );
    }

    // Credit loop.
    let longest = heads.iter().map(|h| h.prop_ns).fold(0.0f64, f64::max);
    let resp_ns = link_of(a, 0.0).response_ns();
    let rtt = a.rtt_ns.unwrap_or(2.0 * longest + resp_ns);
    let cl = CreditLoop {
        gbps: a.gbps,
        clock_ghz: a.clock_ghz,
        cycles_per_credit: a.credit_interval,
        speedup: a.speedup,
        cell: a.cell,
        rtt_ns: rtt,
    };
    cl.check()?;
    let c = sizing::credit(&cl);
    let _ = writeln!(s, "\nCredit-based flow control (seed 000, \"Credit-Based flow control\", \"Credit Quantum Sizing\")");
    row(
        &mut s,
        "RTT",
        if a.rtt_ns.is_some() {
            "given"
        } else {
            "2 Dprop (longest cable) + response"
        },
        format!("{rtt:.1} ns = {} cycles", c.rtt_cycles),
    );
    row(
        &mut s,
        "BDP",
        "R x RTT (one BDP: loss-free, full rate)",
        kb(c.bdp_bytes),
    );
    row(
        &mut s,
        "  in cells",
        "BDP / cell",
        format!("{:.2} cells", c.bdp_cells),
    );
    row(
        &mut s,
        "quantum, minimum",
        "R x cycles per credit / f",
        format!("{} B", c.q_min_bytes),
    );
    row(
        &mut s,
        "quantum, with speed-up",
        &format!("x {}", a.speedup),
        format!("{} B", c.q_speedup_bytes),
    );
    row(
        &mut s,
        "quantum Q (configured)",
        "rounded up to whole cells",
        format!("{} B", c.quantum_bytes),
    );
    row(
        &mut s,
        "credit rate",
        "one per cycles per credit",
        format!("{}/{} credits per cycle", c.rate.0, c.rate.1),
    );
    row(
        &mut s,
        "buffer, measured rule",
        "BDP + Q (docs/credit.md: full rate from 42/40 BDP)",
        format!("{} B", c.measured_bytes),
    );
    row(
        &mut s,
        "buffer, proven bound",
        "BDP + Q - 1 + floor(Q (den - 1) / den)",
        format!("{} B", c.bound_bytes),
    );
    row(
        &mut s,
        "buffer (configured)",
        "the larger",
        kb(c.buffer_bytes),
    );

    // Cell fabric.
    let f = sizing::md1_buffer(a.load, a.loss, a.cell)?;
    let q = sizing::mean_queues(a.load)?;
    let _ = writeln!(
        s,
        "\nCell-fabric buffer (seed 000, \"Buffering in the Cell Fabric\": M/D/1, large deviations)"
    );
    row(
        &mut s,
        "theta",
        "rho (e^theta - 1) = theta (Newton)",
        format!("{:.5}", f.theta),
    );
    row(
        &mut s,
        "Cq",
        "(1 - rho) / (rho + e^-theta)",
        format!("{:.5}", f.cq),
    );
    row(
        &mut s,
        "queue N",
        &format!("(ln Cq - ln P_max) / theta, P_max = {:e}", a.loss),
        format!("{:.2} -> {} cells = {} B", f.n, f.cells, f.bytes),
    );
    row(
        &mut s,
        "mean waiting, M/M/1 | M/D/1",
        "rho^2/(1-rho) | rho^2/(2(1-rho))",
        format!("{:.2} | {:.2} cells", q.mm1_waiting, q.md1_waiting),
    );
    row(
        &mut s,
        "mean wait, M/M/1 | M/D/1",
        "rho/(1-rho) | rho/(2(1-rho)) cell times",
        format!("{:.2} | {:.2}", q.mm1_wait, q.md1_wait),
    );

    // Pipelines.
    let ports = a.cables.len();
    let sw = a.switch_gbps.unwrap_or(ports as f64 * a.gbps);
    let _ = writeln!(
        s,
        "\nPipeline parallelism (seed 000, \"Minimum Required Parallelism\"): {sw} Gb/s, bus {} B, {} GHz",
        a.bus, a.clock_ghz
    );
    for payload in [64, 256, a.mtu] {
        let p = sizing::pipelines(
            sw,
            payload,
            sizing::ETH_OVERHEAD_BYTES,
            a.bus,
            1,
            a.clock_ghz,
        )?;
        row(
            &mut s,
            &format!("P = R / r, packets of {payload} B"),
            "B/(8(S+G)) x ceil((S+G)/W)/f",
            format!(
                "R {:.3} G/s, r {:.3} G/s: P = {:.2}",
                p.arrival_pps / 1e9,
                p.pipeline_pps / 1e9,
                p.p
            ),
        );
    }

    let mmu = mmu_config(a, &heads)?;
    let credit = credit_config(&c)?;
    let _ = writeln!(
        s,
        "\nMMU configuration: variant {}, headroom per port {:?} cells",
        mmu.0.label(),
        mmu.1.cfg_hdrm_cells_i
    );
    if n_ports_without_cable(a, &mmu.0) > 0 {
        let idle: Vec<String> = (a.cables.len()..mmu.0.ports)
            .map(|k| k.to_string())
            .collect();
        let _ = writeln!(s, "  (no cable on port {}: no headroom)", idle.join(", "));
    }
    Ok(Sizing {
        text: s,
        headroom: heads,
        mmu,
        credit,
    })
}

/// Ports of `p` that get no cable (none when one cable sizes every port).
fn n_ports_without_cable(a: &SizeArgs, p: &MmuParams) -> usize {
    if a.cables.len() == 1 {
        0
    } else {
        p.ports - a.cables.len()
    }
}

/// The MMU variant and configuration: one headroom per ingress port.
fn mmu_config(a: &SizeArgs, heads: &[Headroom]) -> Result<(MmuParams, MmuConfig)> {
    let n = heads.len();
    let mut vs: Vec<MmuParams> = Mmu::variants()
        .into_iter()
        .filter(|p| p.ports >= n)
        .collect();
    vs.sort_by_key(|p| (std::cmp::Reverse(p.cw), p.ports));
    let p = *vs.first().ok_or_else(|| {
        let most = Mmu::variants().iter().map(|p| p.ports).max().unwrap_or(0);
        anyhow!("cable: {n} cable lengths, but the largest MMU variant has {most} ports")
    })?;
    let max = p.max();
    let b = a.buffer_cells.unwrap_or(max);
    if b == 0 || b > max {
        bail!(
            "buffer-cells: {b} is outside the legal range 1..={max} (variant {})",
            p.label()
        );
    }
    let hdrm: Vec<u32> = (0..p.ports)
        .map(|k| {
            let h = if n == 1 {
                &heads[0]
            } else if k < n {
                &heads[k]
            } else {
                return Ok(0);
            };
            u32::try_from(h.eta_cells)
                .ok()
                .filter(|&c| c as u64 <= max)
                .ok_or_else(|| {
                    anyhow!(
                        "cable: port {k} needs {} cells of headroom, more than the MMU counts (at most {max})",
                        h.eta_cells
                    )
                })
        })
        .collect::<Result<_>>()?;
    let b32 = b as u32;
    let c = MmuConfig {
        cfg_buf_cells_i: b32,
        cfg_lossy_cells_i: b32 / 4,
        cfg_priv_cells_i: (b32 / 256).max(1),
        cfg_hdrm_cells_i: hdrm,
        cfg_xon_cells_i: (b32 / 64).max(1),
        cfg_alpha_i: arbitrary_int::i4::new(0),
        cfg_alpha_lossy_i: arbitrary_int::i4::new(-1),
        cfg_lossless_i: a.lossless,
    };
    Mmu::check(&p, &c).map_err(|e| {
        anyhow!("buffer-cells: the sized headroom does not fit the buffer of {b} cells: {e}")
    })?;
    Ok((p, c))
}

/// The credit scheduler's default variant with the sized quantum, rate and
/// buffer on every egress port.
fn credit_config(c: &sizing::CreditSizing) -> Result<(CreditParams, CreditConfig)> {
    let p = Credit::variants()[0];
    let mut cfg = Credit::default_config(&p);
    let q = u16::try_from(c.quantum_bytes)
        .ok()
        .filter(|&q| q as i64 <= p.lmax())
        .ok_or_else(|| {
            anyhow!(
                "quantum: {} B (from --speed, --clock, --credit-interval, --speedup, --cell) is more \
                 than the credit scheduler takes (at most {} B)",
                c.quantum_bytes,
                p.lmax()
            )
        })?;
    if c.buffer_bytes as i64 > p.occ_max() {
        bail!(
            "rtt: a credit buffer of {} B (one BDP and a quantum) is more than the credit \
             scheduler counts (at most {} B)",
            c.buffer_bytes,
            p.occ_max()
        );
    }
    if c.rate.1 > p.rate_max() as u64 {
        bail!(
            "credit-interval: {} is more than the rate denominator holds (at most {})",
            c.rate.1,
            p.rate_max()
        );
    }
    cfg.cfg_quantum_i = vec![q; p.e];
    cfg.cfg_rate_num_i = vec![c.rate.0 as u16; p.e];
    cfg.cfg_rate_den_i = vec![c.rate.1 as u16; p.e];
    cfg.cfg_buf_i = vec![c.buffer_bytes as u32; p.e];
    Credit::check(&p, &cfg).map_err(|e| anyhow!("credit configuration: {e}"))?;
    Ok((p, cfg))
}
