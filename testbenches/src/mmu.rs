//! Stimulus for the MMU admission block (`docs/mmu.md`).
//!
//! Configurations cover every runtime field over its legal range, with the
//! edges on purpose: a buffer of exactly `2^CW - 1` cells, a shared pool of
//! exactly zero (private + headroom + lossy filling the buffer), every alpha
//! encoding from -8 (alpha = 0) to 7, Xon of 0 and of the whole pool, no
//! lossless priority and all eight, a headroom that differs from port to port
//! (ports with none, one port with all of it, one port with `2^CW - 1`).
//!
//! Traffic is generated one cycle at a time as *intents* and realised
//! against the golden model, the way a UVM sequence consults a reference
//! model: a departure is
//! "up to `n` cells of queue `q`" and becomes a legal departure of what the
//! queue holds (a few are left raw to exercise the underflow flag). Traffic
//! comes in phases (fill, drain, mixed) over a small set of hot queues, so
//! queues climb to their threshold one cell at a time (exact threshold hits),
//! spill into headroom, get dropped, pause and resume, and the 8-bit variant
//! saturates its drop counters.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::i4;
use model::mmu::{Mmu, MmuConfig, MmuInputs, MmuOutputs, MmuParams, PRIOS};
use model::stim::{Cycle, Generator, Step};
use model::{Block, PortGroup};
use proptest::prelude::*;

/// A departure length request.
#[derive(Clone, Copy, Debug)]
pub enum DepLen {
    /// Up to `n` cells (what the queue holds, if less).
    UpTo(u8),
    /// Everything the queue holds (at most 63 cells).
    All,
    /// Exactly `n` cells, even beyond what the queue holds (underflow).
    Raw(u8),
}

/// Which queue a request targets.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// This queue.
    Queue(usize),
    /// The queue holding the most cells (departures only).
    Fullest,
}

/// What one lane should do in one cycle.
#[derive(Clone, Copy, Debug)]
pub struct LaneIntent {
    /// An arrival of `len` cells.
    pub arr: Option<(Target, u8)>,
    /// A departure.
    pub dep: Option<(Target, DepLen)>,
}

/// What one cycle should do.
#[derive(Clone, Debug)]
pub struct Intent {
    /// Hold reset for this cycle.
    pub reset: bool,
    /// Each lane's arrival and departure (a `Target::Queue(q)` of lane `l`
    /// means queue `q` folded into the lane's slice).
    pub lanes: Vec<LaneIntent>,
}

fn cfg_of(p: &MmuParams, v: CfgDraw) -> MmuConfig {
    let max = p.max();
    let b = match v.buf_sel {
        0 => max,
        1 => (v.buf % (max.min(4096) + 1)).max(1),
        _ => 16 + v.buf % 512.min(max - 15),
    };
    let n_prio = v.mask.count_ones() as u64;
    let n_ll = p.ports as u64 * n_prio;
    let budget = b * v.reserved_pm / 1000;
    let per_q = budget.checked_div(n_ll).unwrap_or(0);
    let mut phi = per_q * v.phi_pm / 1000;
    // Headroom: the ports share `P (per_q - phi)` cells per lossless
    // priority unevenly, by weight: a port of weight 0 has none, a port
    // alone with weight has it all.
    let pool = (per_q - phi) * p.ports as u64;
    let w = |k: usize| v.eta_w[k % v.eta_w.len()] as u64;
    let wsum: u64 = (0..p.ports).map(w).sum();
    let mut eta: Vec<u64> = (0..p.ports)
        .map(|k| (pool * w(k)).checked_div(wsum).unwrap_or(0))
        .collect();
    if v.illegal {
        // Headroom beyond what the buffer can hold (when anything is lossless).
        eta = vec![max - v.buf % 4; p.ports];
        eta[v.eta_port % p.ports] = max;
        phi = phi.min(max);
    } else if v.eta_max && n_prio > 0 {
        // The largest headroom a port can have: the whole buffer, one
        // lossless priority, nothing private, no lossy pool, Bs = 0.
        let b = max;
        let mut eta = vec![0; p.ports];
        eta[v.eta_port % p.ports] = max as u32;
        return MmuConfig {
            cfg_buf_cells_i: b as u32,
            cfg_lossy_cells_i: 0,
            cfg_priv_cells_i: 0,
            cfg_hdrm_cells_i: eta,
            cfg_xon_cells_i: (v.xon % (max + 1)) as u32,
            cfg_alpha_i: i4::new(v.alpha),
            cfg_alpha_lossy_i: i4::new(v.alpha_l),
            cfg_lossless_i: 1 << v.mask.trailing_zeros(),
        };
    }
    let rest = b.saturating_sub(n_ll * phi + n_prio * eta.iter().sum::<u64>());
    let lossy = if v.lossy_pm == 1000 {
        rest // shared pool of exactly zero cells
    } else {
        rest * v.lossy_pm / 1000
    };
    let bs = rest - lossy;
    let xon = match v.xon_sel {
        0 => 0,
        1 => 1,
        2 => bs.min(max),
        3 => max,
        _ => (v.xon % (bs / 2 + 2)).min(max),
    };
    MmuConfig {
        cfg_buf_cells_i: b as u32,
        cfg_lossy_cells_i: lossy.min(max) as u32,
        cfg_priv_cells_i: phi.min(max) as u32,
        cfg_hdrm_cells_i: eta.iter().map(|&e| e.min(max) as u32).collect(),
        cfg_xon_cells_i: xon as u32,
        cfg_alpha_i: i4::new(v.alpha),
        cfg_alpha_lossy_i: i4::new(v.alpha_l),
        cfg_lossless_i: v.mask,
    }
}

#[derive(Clone, Copy, Debug)]
struct CfgDraw {
    mask: u8,
    buf_sel: u8,
    buf: u64,
    reserved_pm: u64,
    phi_pm: u64,
    lossy_pm: u64,
    xon_sel: u8,
    xon: u64,
    alpha: i8,
    alpha_l: i8,
    illegal: bool,
    /// Headroom weight of each port (port `k` uses `eta_w[k % 8]`).
    eta_w: [u8; 8],
    /// The port that gets the largest (or an illegal) headroom.
    eta_port: usize,
    /// One port with the largest legal headroom, `2^CW - 1`.
    eta_max: bool,
}

/// Configurations for variant `p`.
pub fn config_strategy(p: &MmuParams, illegal: bool) -> BoxedStrategy<MmuConfig> {
    let p = *p;
    let mask = prop_oneof![
        2 => Just(0b0001_1000u8),
        1 => Just(0xffu8),
        1 => Just(0u8),
        3 => any::<u8>(),
    ];
    let per_mille = prop_oneof![1 => Just(0u64), 1 => Just(1000u64), 4 => 0u64..=1000];
    let alpha = prop_oneof![1 => Just(-8i8), 1 => Just(7i8), 4 => -8i8..=7, 3 => -3i8..=1];
    let draw = (
        mask,
        (
            prop_oneof![1 => Just(0u8), 1 => Just(1u8), 4 => Just(2u8)],
            any::<u64>(),
        ),
        (0u64..=900, per_mille.clone(), per_mille),
        (0u8..5, any::<u64>()),
        (alpha.clone(), alpha),
        if illegal {
            proptest::bool::weighted(0.1).boxed()
        } else {
            Just(false).boxed()
        },
        (
            proptest::array::uniform8(
                prop_oneof![2 => Just(0u8), 1 => Just(255u8), 3 => any::<u8>()],
            ),
            0usize..16,
            proptest::bool::weighted(0.05),
        ),
    )
        .prop_map(
            |(
                mask,
                (buf_sel, buf),
                (reserved_pm, phi_pm, lossy_pm),
                (xon_sel, xon),
                (a, al),
                ill,
                (eta_w, eta_port, eta_max),
            )| {
                CfgDraw {
                    mask,
                    buf_sel,
                    buf,
                    reserved_pm,
                    phi_pm,
                    lossy_pm,
                    xon_sel,
                    xon,
                    alpha: a,
                    alpha_l: al,
                    illegal: ill,
                    eta_w,
                    eta_port,
                    eta_max,
                }
            },
        );
    draw.prop_map(move |d| cfg_of(&p, d)).boxed()
}

/// A packet length in cells: mostly short, some 63 (the longest), some 0.
fn draw_len(r: &mut Rng) -> u8 {
    match r.weighted(&[5, 3, 1, 1]) {
        0 => r.range(1, 4) as u8,
        1 => r.range(1, 16) as u8,
        2 => 63,
        _ => r.range(0, 63) as u8,
    }
}

fn draw_target(r: &mut Rng, nq: usize, hot: &[usize], dep: bool) -> Target {
    match r.weighted(&[6, 1, if dep { 2 } else { 0 }]) {
        0 => Target::Queue(hot[r.below(hot.len() as u64) as usize]),
        1 => Target::Queue(r.below(nq as u64) as usize),
        _ => Target::Fullest,
    }
}

fn draw_dep_len(r: &mut Rng) -> DepLen {
    match r.weighted(&[4, 4, 2, 1, 1]) {
        0 => DepLen::UpTo(1),
        1 => DepLen::UpTo(r.range(1, 8) as u8),
        2 => DepLen::All,
        3 => DepLen::UpTo(r.range(1, 63) as u8),
        _ => DepLen::Raw(r.range(0, 63) as u8),
    }
}

/// The MMU's traffic, one cycle at a time.
///
/// Traffic comes in phases of 20 to 300 cycles, each with its own one to
/// four hot queues (mostly lossless ones, where PFC happens) and its own
/// arrival and departure probabilities (fill, drain, mixed, idle). Each
/// cycle draws an [`Intent`] and realises it against the golden model
/// (closed loop): a departure is "up to `n` cells of queue `q`" and becomes
/// a legal departure of what the queue holds (a few are left raw, to
/// exercise the underflow flag). One reset in about 2000 cycles.
pub struct MmuGen {
    p: MmuParams,
    rng: Rng,
    lossless: Vec<usize>,
    hot: Vec<usize>,
    arr_p: f64,
    dep_p: f64,
    left: u32,
}

impl MmuGen {
    /// The generator of configuration `cfg` of variant `p` from `seed`.
    pub fn new(p: &MmuParams, cfg: &MmuConfig, seed: u64) -> Self {
        let nq = p.queues();
        MmuGen {
            p: *p,
            rng: Rng::new(seed, 0x6d6d75),
            lossless: (0..nq)
                .filter(|q| cfg.cfg_lossless_i >> (q % PRIOS) & 1 != 0)
                .collect(),
            hot: Vec::with_capacity(4),
            arr_p: 0.0,
            dep_p: 0.0,
            left: 0,
        }
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        let nq = self.p.queues();
        self.left = r.range(20, 300) as u32;
        self.hot.clear();
        for _ in 0..r.range(1, 4) {
            let q = if !self.lossless.is_empty() && r.weighted(&[3, 1]) == 0 {
                self.lossless[r.below(self.lossless.len() as u64) as usize]
            } else {
                r.below(nq as u64) as usize
            };
            self.hot.push(q);
        }
        let pr = |x: u64| (x as f64 + 0.25) / 10.5;
        self.arr_p = pr(r.range(0, 10));
        self.dep_p = pr(r.range(0, 10));
    }

    /// The intent of the next cycle.
    pub fn intent(&mut self) -> Intent {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        let nq = self.p.queues();
        let r = &mut self.rng;
        let reset = r.chance(0.0005);
        let lanes = (0..self.p.npipe)
            .map(|_| {
                let arr = r
                    .chance(self.arr_p)
                    .then(|| (draw_target(r, nq, &self.hot, false), draw_len(r)));
                let dep = r
                    .chance(self.dep_p)
                    .then(|| (draw_target(r, nq, &self.hot, true), draw_dep_len(r)));
                LaneIntent { arr, dep }
            })
            .collect();
        Intent { reset, lanes }
    }
}

/// Realises one intent against the golden model `m` (before the cycle)
/// into the inputs `i`: lane `l`'s targets are folded into its slice of
/// queues (with one lane, the queue itself).
pub fn realize(m: &Mmu, it: &Intent, i: &mut MmuInputs) {
    let p = m.params();
    let lq = p.lane_queues();
    let st = m.state();
    let occ = |q: usize| st.priv_q[q] + st.shr_q[q] + st.hdr_q[q];
    *i = MmuInputs::zero(p);
    for (l, li) in it.lanes.iter().enumerate() {
        let base = l * lq;
        let pick = |t: Target| match t {
            Target::Queue(q) => base + q % lq,
            Target::Fullest => (base..base + lq)
                .max_by_key(|&q| (occ(q), q))
                .unwrap_or(base),
        };
        if let Some((t, len)) = li.arr {
            i.set_arr(p, pick(t), len as u32);
        }
        if let Some((t, l)) = li.dep {
            let q = pick(t);
            let have = occ(q).min(63) as u8;
            let len = match l {
                DepLen::UpTo(n) => n.min(have),
                DepLen::All => have,
                DepLen::Raw(n) => n,
            };
            if len > 0 || matches!(l, DepLen::Raw(_)) {
                i.set_dep(p, q, len as u32);
            }
        }
    }
}

impl Generator<Mmu> for MmuGen {
    fn next(&mut self, m: &Mmu, _: &MmuOutputs, i: &mut MmuInputs) -> Step {
        let it = self.intent();
        if it.reset {
            return Step::Reset;
        }
        realize(m, &it, i);
        Step::Drive
    }
}

impl Bench for Mmu {
    fn scenarios() -> Vec<crate::Scenario<Mmu>> {
        vec![
            crate::Scenario {
                name: "headroom",
                about:
                    "seed 001: upstream sends 12 cycles after PAUSE, headroom sized for it: no drop",
                build: || scenario::headroom(4, 12, 16).0,
                check: Some(scenario::no_drop),
            },
            crate::Scenario {
                name: "headroom-short",
                about:
                    "seed 001: the same with headroom one packet short: the last packet is dropped",
                build: || scenario::headroom(4, 12, 12).0,
                check: Some(scenario::last_packet_dropped),
            },
            crate::Scenario {
                name: "headroom-per-port",
                about:
                    "seed 001: port 2's upstream reacts in 30 cycles, its headroom sized for that; \
                        ports 0, 1, 3 sized for 0, 12 and 100 cycles: no drop",
                build: || {
                    let p = MmuParams::default();
                    scenario::headroom_on(p, 2, 4, 30, &scenario::per_port_headroom(p.ports)).0
                },
                check: Some(scenario::no_drop),
            },
            crate::Scenario {
                name: "headroom-p32",
                about: "seed 000/001 at 32 ports x 4 lanes: port 22 (lane 2) reacts in 30 cycles, \
                        every port's headroom sized for its own delay while the other lanes \
                        fill their queues: no drop",
                build: || {
                    let p = scenario::p32();
                    scenario::headroom_on(p, 22, 4, 30, &scenario::per_port_headroom(p.ports)).0
                },
                check: Some(scenario::no_drop),
            },
            crate::Scenario {
                name: "headroom-p32-short",
                about: "the same with port 22's headroom one packet short: its last packet \
                        is dropped, nothing else",
                build: || {
                    let p = scenario::p32();
                    let mut h = scenario::per_port_headroom(p.ports);
                    h[22] -= 4;
                    scenario::headroom_on(p, 22, 4, 30, &h).0
                },
                check: Some(scenario::last_packet_dropped),
            },
            crate::Scenario {
                name: "dt-steady-state",
                about:
                    "seed 001: 4 queues under the Dynamic Threshold (alpha = 1) settle at Bs/5 each",
                build: || scenario::dt_fill(MmuParams::default(), 0, 4, 3000),
                check: Some(|s, o| scenario::dt_settled(s, o, 4)),
            },
            crate::Scenario {
                name: "dt-steady-state-p32",
                about: "seed 001 at 32 ports x 4 lanes: 16 queues (4 per lane, arriving in the \
                        same clocks) under alpha = 1 settle at Bs/17 each",
                build: || scenario::dt_fill(scenario::p32(), 0, 16, 3000),
                check: Some(|s, o| scenario::dt_settled(s, o, 16)),
            },
            crate::Scenario {
                name: "dt-alpha-quarter",
                about: "REFERENCE: one queue with alpha = 1/4 settles at one fifth of the pool",
                build: || scenario::dt_fill(MmuParams::default(), -2, 1, 3000),
                check: Some(|s, o| scenario::dt_settled(s, o, 1)),
            },
        ]
    }

    const GENERATOR_VERSION: u32 = 2;
    type Gen = MmuGen;
    fn generator(p: &MmuParams, cfg: &MmuConfig, seed: u64) -> MmuGen {
        MmuGen::new(p, cfg, seed)
    }
    fn config_strategy(p: &MmuParams, illegal: bool) -> BoxedStrategy<MmuConfig> {
        config_strategy(p, illegal)
    }
}

/// Directed scenarios from the seed (`seeds/001`), generated closed-loop
/// against the golden model (an upstream that obeys PAUSE), then replayed
/// open-loop in co-simulation.
pub mod scenario {
    use super::*;
    use model::mmu::Verdict;
    use model::stim::Stimulus;

    fn drive(p: &MmuParams, port: usize, prio: usize, len: u8) -> MmuInputs {
        let mut i = MmuInputs::zero(p);
        i.set_arr(p, port * PRIOS + prio, len as u32);
        i
    }

    /// The large variant: 32 ports, 4 lanes (seed 000's 32 x 400G).
    pub fn p32() -> MmuParams {
        MmuParams {
            ports: 32,
            cw: 16,
            npipe: 4,
        }
    }

    /// Headroom sizing, seed case 3 (`PAUSE`) and the headroom formula: one
    /// lossless queue (port 0, priority 3), an upstream at line rate (one
    /// cell per cycle, packets of `len` cells back to back) that keeps
    /// sending for `d` cycles after the PAUSE, an egress that is stalled.
    ///
    /// `phi = 0`, `alpha = 1` and `Bs = 20 * len`: the queue takes ten
    /// packets in shared (`s = T = Bs - s = 10 len`), the eleventh goes whole
    /// into headroom and raises PAUSE. The headroom then has to absorb that
    /// packet plus every packet the upstream starts within `d` cycles:
    /// `eta_needed = len * (1 + floor(d / len))`.
    ///
    /// Returns the stimulus (with headroom `eta`) and `eta_needed`.
    pub fn headroom(len: u8, d: usize, eta: u32) -> (Stimulus<Mmu>, u32) {
        // Only port 0 carries traffic: the other ports get no headroom.
        let p = MmuParams::default();
        let mut hdrm = vec![0; p.ports];
        hdrm[0] = eta;
        headroom_on(p, 0, len, d, &hdrm)
    }

    /// The headroom needed by an upstream sending packets of `len` cells
    /// back to back that stops `d` cycles after the PAUSE.
    pub fn headroom_needed(len: u8, d: usize) -> u32 {
        len as u32 * (1 + d as u32 / len as u32)
    }

    /// Headroom per port for upstreams that stop 0, 12, 30 and 100 cycles
    /// after PAUSE (port `k` the `k % 4`-th), packets of 4 cells (the
    /// `headroom-per-port` scenarios).
    pub fn per_port_headroom(ports: usize) -> Vec<u32> {
        (0..ports)
            .map(|k| headroom_needed(4, [0, 12, 30, 100][k % 4]))
            .collect()
    }

    /// [`headroom`] on ingress port `port` of variant `p`, every port's
    /// headroom given (`hdrm`, `cfg_hdrm_cells_i`): only `hdrm[port]` may
    /// decide a drop. With several lanes, one port of every other lane
    /// sends a packet of `len` cells into a lossy priority in the same
    /// clocks (busy lanes that do not touch the pools of the lossless one).
    pub fn headroom_on(
        p: MmuParams,
        port: usize,
        len: u8,
        d: usize,
        hdrm: &[u32],
    ) -> (Stimulus<Mmu>, u32) {
        assert_eq!(hdrm.len(), p.ports);
        let l = len as u32;
        let needed = headroom_needed(len, d);
        let bs = 20 * l;
        let cfg = MmuConfig {
            cfg_buf_cells_i: bs + hdrm.iter().sum::<u32>() + 1000, // priority 3 lossless
            cfg_lossy_cells_i: 1000,
            cfg_priv_cells_i: 0,
            cfg_hdrm_cells_i: hdrm.to_vec(),
            cfg_xon_cells_i: l,
            cfg_alpha_i: i4::new(0),
            cfg_alpha_lossy_i: i4::new(0),
            cfg_lossless_i: 1 << 3,
        };
        let lane = p.lane_of(port * PRIOS);
        let per_lane = p.ports / p.npipe;
        let mut m = Mmu::new(&p, &cfg);
        let mut cycles = Vec::new();
        let mut paused_at: Option<usize> = None;
        let mut t = 0usize;
        // Send a packet every `len` cycles until `d` cycles after the PAUSE.
        loop {
            if let Some(t0) = paused_at {
                if t > t0 + d {
                    break;
                }
            }
            let mut i = if t.is_multiple_of(len as usize) {
                drive(&p, port, 3, len)
            } else {
                MmuInputs::zero(&p)
            };
            for other in (0..p.npipe).filter(|&o| o != lane) {
                // Lossy traffic in and out of the other lanes' first port.
                let q = other * per_lane * PRIOS;
                i.set_arr(&p, q, len as u32);
                if t > 8 {
                    i.set_dep(&p, q, len as u32);
                }
            }
            let o = m.step(&i);
            if o.pause_o[port * PRIOS + 3] && paused_at.is_none() {
                paused_at = Some(t);
            }
            cycles.push(Cycle::Drive(i));
            t += 1;
            assert!(t < 100_000, "no PAUSE: the scenario is mis-sized");
        }
        // A few idle cycles to see the final state.
        for _ in 0..4 {
            cycles.push(Cycle::Drive(MmuInputs::zero(&p)));
        }
        (
            Stimulus {
                generated: None,
                params: p,
                config: cfg,
                cycles,
                seed: 0x4ead,
            },
            needed,
        )
    }

    /// The port of the `k`-th queue of [`dt_fill`]: spread over the lanes
    /// (lane `k % NPIPE`), so that with one lane it is port `k`.
    pub fn dt_port(p: &MmuParams, k: usize) -> usize {
        (k % p.npipe) * (p.ports / p.npipe) + k / p.npipe
    }

    /// Dynamic Threshold steady state: `n` lossless queues (priority 3 of
    /// ports [`dt_port`]`(0..n)`, `n <= P`) fed with one-cell packets by upstreams that
    /// obey PAUSE, no egress. Each lane serves its own ports of the `n`
    /// round robin, one arrival per clock (with several lanes, several
    /// queues take cells in the same clock under one threshold snapshot).
    /// Each queue stops at its threshold: in steady state
    /// `s = alpha * (Bs - n s)`, i.e. each settles at
    /// `alpha * Bs / (1 + n * alpha)`.
    pub fn dt_fill(p: MmuParams, alpha_k: i8, n: usize, bs: u32) -> Stimulus<Mmu> {
        assert!(n <= p.ports);
        let eta = 4;
        let cfg = MmuConfig {
            cfg_buf_cells_i: bs + p.ports as u32 * eta,
            cfg_lossy_cells_i: 0,
            cfg_priv_cells_i: 0,
            cfg_hdrm_cells_i: vec![eta; p.ports],
            cfg_xon_cells_i: 0,
            cfg_alpha_i: i4::new(alpha_k),
            cfg_alpha_lossy_i: i4::new(0),
            cfg_lossless_i: 1 << 3,
        };
        let mut m = Mmu::new(&p, &cfg);
        let mut cycles = Vec::new();
        let lanes: Vec<Vec<usize>> = (0..p.npipe)
            .map(|l| (0..n).filter(|&k| k % p.npipe == l).collect())
            .collect();
        let mut rr = vec![0usize; p.npipe];
        let mut off = vec![false; n];
        while off.iter().any(|o| !o) {
            let mut i = MmuInputs::zero(&p);
            for (l, ports) in lanes.iter().enumerate() {
                let k = ports.len();
                if let Some(j) = (0..k).find(|j| !off[ports[(rr[l] + j) % k]]) {
                    let port = dt_port(&p, ports[(rr[l] + j) % k]);
                    rr[l] += j + 1;
                    i.set_arr(&p, port * PRIOS + 3, 1);
                }
            }
            let o = m.step(&i);
            for (k, f) in off.iter_mut().enumerate() {
                *f |= o.pause_o[dt_port(&p, k) * PRIOS + 3];
            }
            cycles.push(Cycle::Drive(i));
            assert!(cycles.len() < 1_000_000);
        }
        cycles.push(Cycle::Drive(MmuInputs::zero(&p)));
        Stimulus {
            generated: None,
            params: p,
            config: cfg,
            cycles,
            seed: 0xd7,
        }
    }

    /// The steady-state shared occupancy of each of `n` queues:
    /// `alpha * Bs / (1 + n * alpha)` (real-valued).
    pub fn dt_steady_state(alpha_k: i8, n: usize, bs: u32) -> f64 {
        let a = 2f64.powi(alpha_k as i32);
        a * bs as f64 / (1.0 + n as f64 * a)
    }

    /// Scenario check: no packet dropped (no `drop` verdict in any cycle).
    pub fn no_drop(s: &Stimulus<Mmu>, outs: &[MmuOutputs]) -> Result<(), String> {
        match outs
            .iter()
            .position(|o| o.verdicts(&s.params).any(|v| v == Verdict::Drop))
        {
            Some(t) => Err(format!("a packet dropped in cycle {t}")),
            None => Ok(()),
        }
    }

    /// Scenario check: the last lossless packet, and only it, is dropped
    /// (and no lossy packet).
    pub fn last_packet_dropped(s: &Stimulus<Mmu>, outs: &[MmuOutputs]) -> Result<(), String> {
        if let Some(t) = outs
            .iter()
            .position(|o| o.verdicts(&s.params).any(|v| v == Verdict::LossyDrop))
        {
            return Err(format!("a lossy packet dropped in cycle {t}"));
        }
        let v: Vec<Verdict> = outs
            .iter()
            .flat_map(|o| o.verdicts(&s.params).collect::<Vec<_>>())
            .filter(|v| !matches!(v, Verdict::None | Verdict::Lossy))
            .collect();
        let drops = v.iter().filter(|v| **v == Verdict::Drop).count();
        if drops == 1 && v.last() == Some(&Verdict::Drop) {
            Ok(())
        } else {
            Err(format!(
                "verdicts {v:?}: expected exactly the last one dropped"
            ))
        }
    }

    /// Scenario check for [`dt_fill`] over `n` ports: after the last cycle
    /// each queue holds the Dynamic Threshold's steady state
    /// ([`dt_steady_state`]) of shared cells, to within one cell.
    pub fn dt_settled(s: &Stimulus<Mmu>, outs: &[MmuOutputs], n: usize) -> Result<(), String> {
        let bs = s.config.cfg_buf_cells_i - s.config.cfg_hdrm_cells_i.iter().sum::<u32>();
        let want = dt_steady_state(s.config.cfg_alpha_i.value(), n, bs);
        let last = outs.last().ok_or("no cycles")?;
        for k in 0..n {
            let port = dt_port(&s.params, k);
            let got = last.q_shr_o[port * PRIOS + 3] as f64;
            if (got - want).abs() > 1.0 {
                return Err(format!(
                    "queue {port} settled at {got} shared cells, expected {want:.2}"
                ));
            }
        }
        Ok(())
    }

    /// The verdict of lane 0 in every cycle of `s`, from the golden model.
    pub fn verdicts(s: &Stimulus<Mmu>) -> Vec<Verdict> {
        let mut m = Mmu::new(&s.params, &s.config);
        s.cycles
            .iter()
            .map(|c| match c {
                Cycle::Drive(i) => m.step(i).verdict(0),
                Cycle::Reset => {
                    m = Mmu::new(&s.params, &s.config);
                    Verdict::None
                }
            })
            .collect()
    }
}
