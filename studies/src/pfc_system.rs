//! MMU admission, this block, a link and an upstream sender that obeys the
//! received pause vector (model level). See `docs/pfc.md`, "System scenario".
//!
//! Units: the link carries one 8-byte beat per cycle (`C = 8 B/cycle`; at
//! 100 Gb/s a cycle is 0.64 ns, at 400 Gb/s 0.16 ns); a pause quantum (512
//! bits) is 64 bytes, so `cfg_qcyc_i = 8`. The upstream sends MTU packets of
//! `mtu_bytes` back to back, byte-exact (a packet that ends inside a beat is
//! followed by the next in the same beat); the MMU charges a packet
//! `ceil(mtu_bytes / cell_bytes)` cells when its first byte arrives. With
//! cells of 64 B and MTUs of whole cells the seed's headroom
//! `eta = 2 (C Dprop + L_MTU) + 3840 B` is `eta = D / 4 + 2 L + 60` cells for
//! a one-way delay of `D` cycles and an MTU of `L` cells.

use arbitrary_int::{i4, u3};
use model::eth::{beats, data_frame, mac_bytes, Beat};
use model::mmu::{Mmu, MmuConfig, MmuInputs, MmuParams, Verdict};
use model::pfc::{Pfc, PfcConfig, PfcInputs, PfcParams, RxClass, PRIOS};
use model::{Block, PortGroup};
use std::collections::VecDeque;

/// The switch port's MAC address.
pub const SWITCH_SA: u64 = 0x02_00_00_00_00_01;
/// The upstream port's MAC address.
pub const UPSTREAM_SA: u64 = 0x02_aa_bb_cc_dd_ee;

/// Bytes per cycle on the link.
pub const BYTES_PER_CYCLE: u64 = 8;
/// Bytes per cell of [`Setup::worst_case`].
pub const CELL_BYTES: u64 = 64;
/// Cycles per pause quantum (512 bits at 8 bytes per cycle).
pub const QCYC: u16 = 8;
/// The seed's allowance for generating and processing the PAUSE,
/// 3840 B = 60 quanta, in cycles.
pub const ALLOWANCE_CYCLES: u64 = 3840 / BYTES_PER_CYCLE;
/// Cycles of our own pipeline inside the allowance. With the arrival
/// that raises PAUSE in cycle `t0`: the MMU's `xoff_o` is 1 in `t0 + 1`
/// (1), the frame starts there and its first beat is in `t0 + 2` (1), its
/// last beat 7 cycles later (7), the upstream's `pause_o` is 1 the cycle
/// after the last beat arrives (1), and the sender, which sees that
/// `proc_cycles` later, can still start a packet in the cycle before
/// (-1): 9 cycles, plus the waiting delay and two propagation delays.
pub const PIPELINE_CYCLES: u64 = 9;

/// Parameters of one run.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// One-way propagation delay of the link, cycles.
    pub link: u64,
    /// MTU in bytes (the upstream sends packets of this size).
    pub mtu_bytes: u32,
    /// Cell size of the MMU, bytes.
    pub cell_bytes: u32,
    /// The congested ingress port (its priority 3 is lossless).
    pub port: usize,
    /// Headroom of each ingress port's lossless queues, cells
    /// (`cfg_hdrm_cells_i`); `hdrm[port]` is the one that counts.
    pub hdrm: [u32; 4],
    /// Cycles the upstream needs to act on its pause vector (on top of
    /// our pipeline): `ALLOWANCE_CYCLES - PIPELINE_CYCLES` for the
    /// seed's worst case.
    pub proc_cycles: u64,
    /// Before every PFC frame the reverse link starts an MTU data frame
    /// (the waiting delay of the seed, worst case).
    pub adversarial_mac: bool,
    /// Cycles with the egress stalled, then the queue drains at line rate.
    pub stall_cycles: u64,
    /// Total cycles.
    pub cycles: u64,
}

impl Setup {
    /// The seed's worst case for link delay `link` and MTU `mtu_cells`,
    /// with the formula's headroom.
    /// Cells of 64 B, port 0, the other ports without headroom.
    pub fn worst_case(link: u64, mtu_cells: u32) -> Self {
        let mut hdrm = [0; 4];
        hdrm[0] = eta_formula_cells(link, mtu_cells);
        Self::sized(
            link,
            mtu_cells * CELL_BYTES as u32,
            CELL_BYTES as u32,
            0,
            hdrm,
        )
    }

    /// The seed's worst case in bytes: MTU packets of `mtu_bytes` into
    /// cells of `cell_bytes`, the congested port `port`, the headroom of
    /// every port `hdrm` (cells).
    pub fn sized(link: u64, mtu_bytes: u32, cell_bytes: u32, port: usize, hdrm: [u32; 4]) -> Self {
        let pkt = (mtu_bytes as u64).div_ceil(BYTES_PER_CYCLE);
        let stall = 2 * link + 40 * pkt + 30_000;
        Setup {
            link,
            mtu_bytes,
            cell_bytes,
            port,
            hdrm,
            proc_cycles: ALLOWANCE_CYCLES - PIPELINE_CYCLES,
            adversarial_mac: true,
            stall_cycles: stall,
            cycles: stall + 4 * link + 20_000,
        }
    }

    /// Cells per MTU packet.
    pub fn mtu_cells(&self) -> u32 {
        self.mtu_bytes.div_ceil(self.cell_bytes)
    }

    /// Cycles of one MTU packet on the link (a partial last beat counts).
    pub fn pkt_cycles(&self) -> u64 {
        (self.mtu_bytes as u64).div_ceil(BYTES_PER_CYCLE)
    }

    /// The congested port's headroom, cells.
    pub fn eta_cells(&self) -> u32 {
        self.hdrm[self.port]
    }

    /// The same with the congested port's headroom `eta` cells.
    pub fn with_eta(&self, eta: u32) -> Self {
        let mut s = *self;
        s.hdrm[s.port] = eta;
        s
    }
}

/// `eta = 2 (C Dprop + L_MTU) + 3840 B`, in cells.
pub fn eta_formula_bytes(link: u64, mtu_cells: u32) -> u64 {
    2 * (BYTES_PER_CYCLE * link + mtu_cells as u64 * CELL_BYTES) + 3840
}

/// The formula in cells (`link` a multiple of 4: exact).
pub fn eta_formula_cells(link: u64, mtu_cells: u32) -> u32 {
    eta_formula_bytes(link, mtu_cells).div_ceil(CELL_BYTES) as u32
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Headroom configured, cells.
    pub eta_cells: u32,
    /// Most headroom cells the queue ever held.
    pub max_headroom: u32,
    /// Lossless packets dropped.
    pub drops: u32,
    /// PFC frames on the reverse link.
    pub pfc_frames: u32,
    /// Data packets the upstream sent.
    pub packets: u32,
    /// Cycles from the arrival that raised the first PAUSE to the last
    /// packet start of the upstream before it stopped.
    pub reaction: Option<u64>,
    /// The upstream's pause of the lossless priority went from 1 to 0
    /// while the switch queue was still OFF (a gap: must never happen).
    pub gaps: u32,
    /// The upstream resumed after the drain phase.
    pub resumed: bool,
    /// Frames the upstream's receiver classified, by class code.
    pub rx_classes: [u32; 8],
}

/// Runs the scenario.
pub fn run(s: &Setup) -> Outcome {
    const PRIO: usize = 3;
    let q = s.port * PRIOS + PRIO;
    let l = s.mtu_cells();
    assert!((1..64).contains(&l), "an MTU packet is 1..=63 cells");
    let pkt_cycles = s.pkt_cycles();
    // MMU: 4 ports, priority 3 lossless, no private buffer, alpha = 1:
    // one congested queue takes 10 packets in shared, the 11th goes whole
    // into headroom and raises PAUSE.
    let mp = MmuParams::default();
    let bs = 20 * l;
    let mc = MmuConfig {
        cfg_buf_cells_i: bs + s.hdrm.iter().sum::<u32>(),
        cfg_lossy_cells_i: 0,
        cfg_priv_cells_i: 0,
        cfg_hdrm_cells_i: s.hdrm.to_vec(),
        cfg_xon_cells_i: l,
        cfg_alpha_i: i4::new(0),
        cfg_alpha_lossy_i: i4::new(0),
        cfg_lossless_i: 1 << PRIO,
    };
    assert_eq!(mp.ports, s.hdrm.len());
    assert!(Mmu::check(&mp, &mc).is_ok());
    let mut mmu = Mmu::new(&mp, &mc);
    // PFC: both ends the same configuration. The MAC may hold a frame
    // back by one MTU, so the refresh point leaves room for that too.
    let pp = PfcParams::default();
    let pc = PfcConfig {
        cfg_sa_i: SWITCH_SA,
        cfg_quanta_i: vec![1024; PRIOS],
        cfg_qcyc_i: QCYC,
        cfg_refresh_i: 512,
        cfg_gap_i: 0,
    };
    assert!(Pfc::check(&pp, &pc).is_ok());
    assert!(
        512 * QCYC as u64 >= 8 + pkt_cycles + 8,
        "refresh must cover the MAC delay"
    );
    let mut sw = Pfc::new(&pp, &pc); // switch port: transmit side used
    let mut up = Pfc::new(
        &pp,
        &PfcConfig {
            cfg_sa_i: UPSTREAM_SA,
            ..pc.clone()
        },
    ); // upstream port: receive side used
       // What the switch port's MAC sends upstream between PFC frames.
    let data_frame = beats(&data_frame(
        mac_bytes(UPSTREAM_SA),
        SWITCH_SA,
        s.mtu_bytes as usize,
    ));
    let mut out = Outcome {
        eta_cells: s.eta_cells(),
        ..Outcome::default()
    };
    let d = s.link as usize;
    let mut fwd: VecDeque<u64> = VecDeque::new(); // arrival cycles at the switch
    let mut rev: VecDeque<Option<Beat>> = VecDeque::from(vec![None; d]);
    let mut pause_seen: VecDeque<bool> = VecDeque::from(vec![false; s.proc_cycles as usize]);
    let mut pfc_fifo: VecDeque<Beat> = VecDeque::new();
    let mut data_left = 0usize;
    let mut pfc_in_progress = false;
    let mut sending_left = 0u64; // bytes left of the packet being sent upstream
    let mut last_start = 0u64;
    let mut first_pause_at: Option<u64> = None;
    let mut dep_timer = 0u64;
    let mut up_was_paused = false;
    let mut paused_ever = false;
    for t in 0..s.cycles {
        // Upstream: obeys its pause vector, `proc_cycles` late, at packet
        // boundaries; back-to-back MTU packets otherwise.
        let seen = if s.proc_cycles == 0 {
            up_was_paused
        } else {
            *pause_seen.front().unwrap()
        };
        let mut beat = BYTES_PER_CYCLE;
        loop {
            if sending_left == 0 {
                if seen {
                    break;
                }
                sending_left = s.mtu_bytes as u64;
                fwd.push_back(t + s.link);
                out.packets += 1;
                last_start = t;
            }
            let b = sending_left.min(beat);
            sending_left -= b;
            beat -= b;
            if beat == 0 {
                break;
            }
        }
        // Switch: MMU admission, departures after the stall.
        let mut mi = MmuInputs::zero(&mp);
        if fwd.front() == Some(&t) {
            fwd.pop_front();
            mi.set_arr(&mp, q, l);
        }
        if t >= s.stall_cycles {
            if dep_timer == 0 {
                let st = mmu.state();
                let have = st.priv_q[q] + st.shr_q[q] + st.hdr_q[q];
                if have > 0 {
                    mi.set_dep(&mp, q, have.min(l));
                }
                dep_timer = pkt_cycles;
            }
            dep_timer -= 1;
        }
        let mo = mmu.step(&mi);
        let v = mo.verdict(0);
        if v == Verdict::Drop {
            out.drops += 1;
        }
        if mo.pause_o[q] && first_pause_at.is_none() {
            first_pause_at = Some(t);
        }
        out.max_headroom = out.max_headroom.max(mmu.state().hdr_q[q]);
        let xoff_now = mo.xoff_o[s.port * PRIOS..][..PRIOS]
            .iter()
            .enumerate()
            .fold(0u8, |a, (k, &b)| a | (u8::from(b) << k));
        // Switch port's PFC transmitter.
        let mut si = PfcInputs::zero(&pp);
        si.xoff_i = xoff_now;
        let so = sw.step(&si);
        if so.tx_valid_o {
            pfc_fifo.push_back((so.tx_data_o, so.tx_last_o, so.tx_empty_o.value()));
        }
        // The MAC of the switch port: a data frame in progress finishes;
        // then PFC frames; an adversarial MAC starts a data frame just
        // before each PFC frame.
        let beat = if data_left > 0 {
            data_left -= 1;
            Some(data_frame[data_frame.len() - 1 - data_left])
        } else if let Some(&b) = pfc_fifo.front() {
            if s.adversarial_mac && !pfc_in_progress {
                pfc_in_progress = true;
                data_left = data_frame.len() - 1;
                Some(data_frame[0])
            } else {
                pfc_fifo.pop_front();
                if b.1 {
                    pfc_in_progress = false;
                    out.pfc_frames += 1;
                } else {
                    pfc_in_progress = true;
                }
                Some(b)
            }
        } else {
            None
        };
        rev.push_back(beat);
        // Upstream port's receiver.
        let mut ui = PfcInputs::zero(&pp);
        if let Some((data, last, empty)) = rev.pop_front().flatten() {
            ui.rx_valid_i = true;
            ui.rx_last_i = last;
            ui.rx_empty_i = u3::new(empty);
            ui.rx_data_i = data;
        }
        let uo = up.step(&ui);
        if let Some(c) = RxClass::from_code(uo.rx_done_o) {
            out.rx_classes[c as usize] += 1;
        }
        let paused = uo.pause_o >> PRIO & 1 != 0;
        if up_was_paused && !paused && mmu.state().xoff_q[q] {
            out.gaps += 1;
        }
        if paused {
            paused_ever = true;
        }
        if paused_ever && !paused && t > s.stall_cycles {
            out.resumed = true;
        }
        up_was_paused = paused;
        if s.proc_cycles > 0 {
            pause_seen.pop_front();
            pause_seen.push_back(paused);
        }
        if let Some(t0) = first_pause_at {
            if out.reaction.is_none() && seen && t > t0 {
                out.reaction = Some(last_start - (t0 - s.link));
            }
        }
        mmu.assert_invariants();
    }
    out
}
