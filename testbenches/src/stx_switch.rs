//! Stimulus for the STX switch (`docs/stx_switch.md`).
//!
//! Configurations: receivers used 1 ..= R, iterations 1 ..= 8 (mostly
//! `log2 N`), STX mostly on, every policy and scheme, the window at 1, 2
//! and its maximum, the request limit at 1 and its maximum; with
//! `illegal`, receivers 0 or R + 1, iterations 0 or above 8, policy or
//! scheme 3, window 0.
//!
//! Traffic comes in phases of 50 to 600 cycles. A phase is one of:
//! Bernoulli (uniform outputs, load 0.1 to 1), bursty (per input on/off
//! bursts to one output, mean burst 8 to 32 cells), a **collision storm**
//! (every input to one output, or two: SRQs collide every slot, ACKs are
//! lost by collision, cells come again on their grants), **window fill**
//! (one or two inputs send back to back to one output each: the RTX queues
//! and the RSQ windows fill) or idle (the switch drains). Output links are
//! mostly ready; some phases stall them now and then (a cycle at a time),
//! others stall some outputs (the hot ones among them) for long periods:
//! bursts of 20 to 400 cycles, a third to most of the phase, so that the
//! credits run out and the arbiter holds grants and speculative cells
//! back. Cell ids count per input (wrapping at `IW` bits). Now and then a
//! reset.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::u2;
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::stx_egress::Fate;
use model::stx_ingress::{GrantKind, Policy, Scheme};
use model::stx_switch::{
    StxSwitch, StxSwitchConfig, StxSwitchInputs, StxSwitchOutputs, StxSwitchParams,
};
use model::{Block, PortGroup};
use proptest::prelude::*;

/// Configurations of variant `p` (with `illegal`, some that `check` refuses).
pub fn config_strategy(p: &StxSwitchParams, illegal: bool) -> BoxedStrategy<StxSwitchConfig> {
    let r = p.r as u8;
    let log = p.n.trailing_zeros() as u8;
    let wmax = StxSwitch::win_max(p) as u16;
    let lmax = StxSwitch::req_lim_max(p) as u8;
    let recv = if illegal {
        prop_oneof![3 => Just(r), 3 => 1..=r, 1 => Just(0u8), 1 => Just(r + 1)].boxed()
    } else {
        prop_oneof![3 => Just(r), 3 => 1..=r].boxed()
    };
    let iter = if illegal {
        prop_oneof![4 => Just(log), 3 => 1..=8u8, 1 => Just(0u8), 1 => 9..=15u8].boxed()
    } else {
        prop_oneof![4 => Just(log), 3 => 1..=8u8].boxed()
    };
    let code = move |bad: bool| {
        if bad {
            prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8), 1 => Just(3u8)].boxed()
        } else {
            prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8)].boxed()
        }
    };
    let win = if illegal {
        prop_oneof![2 => Just(1u16), 1 => Just(2u16.min(wmax)), 3 => Just(wmax), 2 => 1..=wmax, 1 => Just(0u16), 1 => Just(p.b as u16)]
            .boxed()
    } else {
        prop_oneof![2 => Just(1u16), 1 => Just(2u16.min(wmax)), 3 => Just(wmax), 2 => 1..=wmax]
            .boxed()
    };
    let lim = prop_oneof![2 => Just(1u8), 3 => Just(lmax), 2 => 1..=lmax].boxed();
    (
        recv,
        iter,
        proptest::bool::weighted(0.85),
        code(illegal),
        code(illegal),
        win,
        lim,
    )
        .prop_map(|(recv, iter, en, pol, sch, w, l)| StxSwitchConfig {
            cfg_recv_i: recv,
            cfg_iter_i: iter,
            cfg_stx_en_i: en,
            cfg_policy_i: u2::new(pol),
            cfg_scheme_i: u2::new(sch),
            cfg_win_i: w,
            cfg_req_lim_i: l,
        })
        .boxed()
}

/// What a phase of traffic does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Bernoulli,
    Bursty,
    Storm,
    WindowFill,
    Idle,
}

/// The switch's traffic, one cycle at a time.
pub struct StxSwitchGen {
    rng: Rng,
    p: StxSwitchParams,
    left: u32,
    mode: Mode,
    load: f64,
    hot: [usize; 2],
    senders: u64,
    stall: f64,
    /// Outputs stalled in long bursts this phase, their stall share and
    /// mean burst length.
    long: u64,
    long_share: f64,
    long_len: f64,
    /// Per output: stalled now (long bursts).
    stalled: Vec<bool>,
    burst_len: f64,
    /// Per input: the output of its current burst, if on.
    burst: Vec<Option<usize>>,
    /// Per input: the next cell id.
    ids: Vec<u16>,
}

impl StxSwitchGen {
    /// The generator of variant `p` from `seed`.
    pub fn new(p: &StxSwitchParams, _cfg: &StxSwitchConfig, seed: u64) -> Self {
        StxSwitchGen {
            rng: Rng::new(seed, 0x5e17),
            p: *p,
            left: 0,
            mode: Mode::Idle,
            load: 0.0,
            hot: [0, 0],
            senders: 0,
            stall: 0.0,
            long: 0,
            long_share: 0.0,
            long_len: 1.0,
            stalled: vec![false; p.n],
            burst_len: 8.0,
            burst: vec![None; p.n],
            ids: vec![0; p.n],
        }
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        let n = self.p.n as u64;
        self.left = r.range(50, 600) as u32;
        self.mode = match r.weighted(&[3, 3, 3, 3, 1]) {
            0 => Mode::Bernoulli,
            1 => Mode::Bursty,
            2 => Mode::Storm,
            3 => Mode::WindowFill,
            _ => Mode::Idle,
        };
        self.load = [0.1, 0.3, 0.6, 0.9, 1.0][r.below(5) as usize];
        self.hot = [r.below(n) as usize, r.below(n) as usize];
        if r.bool() {
            self.hot[1] = self.hot[0];
        }
        self.senders = 0;
        let k = 1 + r.below(2);
        while (self.senders.count_ones() as u64) < k {
            self.senders |= 1 << r.below(n);
        }
        self.stall = [0.0, 0.0, 0.0, 0.1, 0.5][r.below(5) as usize];
        self.burst_len = [8.0, 16.0, 32.0][r.below(3) as usize];
        // Long stalls in one phase of three: the hot outputs and some more.
        self.long = 0;
        if r.below(3) == 0 {
            self.long = 1 << self.hot[0] | 1 << self.hot[1];
            for _ in 0..r.below(n) {
                self.long |= 1 << r.below(n);
            }
            self.long_share = [0.3, 0.6, 0.9][r.below(3) as usize];
            self.long_len = [20.0, 100.0, 400.0][r.below(3) as usize];
        }
    }
}

impl Generator<StxSwitch> for StxSwitchGen {
    fn next(&mut self, _m: &StxSwitch, _last: &StxSwitchOutputs, i: &mut StxSwitchInputs) -> Step {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        if self.rng.chance(0.0003) {
            return Step::Reset;
        }
        let p = self.p;
        let n = p.n;
        let idmask = ((1u32 << p.iw) - 1) as u16;
        let r = &mut self.rng;
        for k in 0..n {
            let (valid, out) = match self.mode {
                Mode::Bernoulli => (r.chance(self.load), r.below(n as u64) as usize),
                Mode::Bursty => {
                    match self.burst[k] {
                        Some(_) if r.chance(1.0 / self.burst_len) => self.burst[k] = None,
                        None if r.chance(self.load / self.burst_len) => {
                            self.burst[k] = Some(r.below(n as u64) as usize)
                        }
                        _ => {}
                    }
                    (self.burst[k].is_some(), self.burst[k].unwrap_or(0))
                }
                Mode::Storm => (r.chance(self.load), self.hot[r.below(2) as usize]),
                Mode::WindowFill => (
                    self.senders >> k & 1 == 1,
                    self.hot[(self.senders & ((1 << k) - 1)).count_ones() as usize % 2],
                ),
                Mode::Idle => (false, 0),
            };
            i.arr_valid_i[k] = valid;
            i.arr_out_i[k] = out as u8;
            i.arr_id_i[k] = self.ids[k];
            if valid {
                self.ids[k] = self.ids[k].wrapping_add(1) & idmask;
            }
            // Output k's link: stalled in long bursts (a two-state chain
            // with mean stall long_len and stall share long_share) or now
            // and then for a cycle.
            if self.long >> k & 1 == 1 {
                let st = &mut self.stalled[k];
                let leave = 1.0 / self.long_len;
                let enter = leave * self.long_share / (1.0 - self.long_share);
                if r.chance(if *st { leave } else { enter }) {
                    *st = !*st;
                }
                i.dlv_ready_i[k] = !*st;
            } else {
                self.stalled[k] = false;
                i.dlv_ready_i[k] = !r.chance(self.stall);
            }
        }
        Step::Drive
    }
}

impl Bench for StxSwitch {
    const GENERATOR_VERSION: u32 = 2;
    type Gen = StxSwitchGen;
    fn generator(p: &StxSwitchParams, cfg: &StxSwitchConfig, seed: u64) -> StxSwitchGen {
        StxSwitchGen::new(p, cfg, seed)
    }
    fn config_strategy(p: &StxSwitchParams, illegal: bool) -> BoxedStrategy<StxSwitchConfig> {
        config_strategy(p, illegal)
    }
    fn scenarios() -> Vec<crate::Scenario<StxSwitch>> {
        use scenario as s;
        vec![
            crate::Scenario {
                name: "fig2a-ooo",
                about: "seed 004 Fig. 2(a) through the switch: A's speculative copy loses its \
                        collision (R = 1), B wins and waits in the RSQ; A's grant retransmits A \
                        and both leave in order",
                build: s::fig2a,
                check: Some(s::fig2a_check),
            },
            crate::Scenario {
                name: "fig2b-duplicate",
                about: "seed 004 Fig. 2(b): a grant reaches the input before the ACK of the \
                        cell it sends: the cell goes twice, the output drops the copy, the late \
                        ACK finds nothing",
                build: s::fig2b,
                check: Some(s::fig2b_check),
            },
            crate::Scenario {
                name: "fig2c-wasted",
                about: "seed 004 Fig. 2(c): A acknowledged, its grant finds nothing to send \
                        (wasted); the free link carries a speculative cell in that cycle",
                build: s::fig2c,
                check: Some(s::fig2c_check),
            },
            crate::Scenario {
                name: "fig2d-spurious",
                about: "seed 004 Fig. 2(d): B, held back by the window, leaves on the grant of \
                        A's request (spurious); B's own grant is then wasted",
                build: s::fig2d,
                check: Some(s::fig2d_check),
            },
            crate::Scenario {
                name: "storm",
                about: "a collision storm: every input sends 4 cells to output 0 at once; \
                        speculative copies lose, come again on grants, all delivered in order",
                build: s::storm,
                check: Some(s::storm_check),
            },
            crate::Scenario {
                name: "stall",
                about: "flow control: every input sends 6 cells to output 2 while its link is \
                        stalled for 120 cycles; the credits run out, grants and ACKs stop, no \
                        RSQ overflows; released, every cell leaves in order",
                build: s::stall,
                check: Some(s::stall_check),
            },
        ]
    }
}

/// Directed scenarios from seed 004 (Fig. 2) through the whole switch, on
/// the default variant (N = 8, RTT = 8: every path 4 cycles; a cell sent
/// speculatively in its arrival cycle `t` reaches its output in `t + 8`, a
/// cell sent on a grant `16` cycles after its arrival without contention).
pub mod scenario {
    use super::*;

    /// Builds `len` cycles with the arrivals `arr` (cycle, input, output,
    /// id) for configuration `cfg` of the default variant; every output
    /// link ready.
    pub fn build(
        cfg: StxSwitchConfig,
        len: usize,
        seed: u64,
        arr: &[(usize, usize, usize, u16)],
    ) -> Stimulus<StxSwitch> {
        build_stalled(cfg, len, seed, arr, |_, _| true)
    }

    /// [`build`] with output `j`'s link ready in cycle `t` when
    /// `ready(t, j)`.
    pub fn build_stalled(
        cfg: StxSwitchConfig,
        len: usize,
        seed: u64,
        arr: &[(usize, usize, usize, u16)],
        ready: impl Fn(usize, usize) -> bool,
    ) -> Stimulus<StxSwitch> {
        let p = StxSwitchParams::default();
        let mut cycles = Vec::with_capacity(len);
        for t in 0..len {
            let mut i = StxSwitchInputs::zero(&p);
            for (j, r) in i.dlv_ready_i.iter_mut().enumerate() {
                *r = ready(t, j);
            }
            for &(c, k, j, id) in arr {
                if c == t {
                    i.arr_valid_i[k] = true;
                    i.arr_out_i[k] = j as u8;
                    i.arr_id_i[k] = id;
                }
            }
            cycles.push(Cycle::Drive(i));
        }
        Stimulus {
            params: p,
            config: cfg,
            cycles,
            seed,
            generated: None,
        }
    }

    /// The default configuration with `recv` receivers and window `win`.
    pub fn cfg(recv: u8, win: u16) -> StxSwitchConfig {
        let p = StxSwitchParams::default();
        StxSwitchConfig {
            cfg_recv_i: recv,
            cfg_win_i: win,
            cfg_policy_i: Policy::Ocf.code(),
            cfg_scheme_i: Scheme::Sr.code(),
            ..StxSwitch::default_config(&p)
        }
    }

    fn expect(what: &str, ok: bool, got: String) -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}: got {got}"))
        }
    }

    /// The deliveries of output `j`: (cycle, source, seq, id).
    pub fn deliveries(o: &[StxSwitchOutputs], j: usize) -> Vec<(usize, usize, u16, u16)> {
        o.iter()
            .enumerate()
            .filter(|(_, x)| x.dlv_valid_o[j])
            .map(|(t, x)| (t, x.dlv_src_o[j] as usize, x.dlv_seq_o[j], x.dlv_id_o[j]))
            .collect()
    }

    /// Cycles in which a receiver of output `j` had fate `f`.
    pub fn fates(o: &[StxSwitchOutputs], j: usize, f: Fate) -> Vec<usize> {
        let r = StxSwitchParams::default().r;
        o.iter()
            .enumerate()
            .filter(|(_, x)| x.arr_fate_o[j * r..(j + 1) * r].contains(&f.code()))
            .map(|(t, _)| t)
            .collect()
    }

    /// Every cell of `arr` delivered once, in order per (input, output),
    /// with its id.
    fn all_once(arr: &[(usize, usize, usize, u16)], o: &[StxSwitchOutputs]) -> Result<(), String> {
        let n = StxSwitchParams::default().n;
        for j in 0..n {
            for k in 0..n {
                let want: Vec<u16> = arr
                    .iter()
                    .filter(|a| a.1 == k && a.2 == j)
                    .map(|a| a.3)
                    .collect();
                let got: Vec<u16> = deliveries(o, j)
                    .into_iter()
                    .filter(|d| d.1 == k)
                    .map(|d| d.3)
                    .collect();
                expect(
                    &format!("input {k} to output {j}: every cell once, in order"),
                    got == want,
                    format!("{got:x?}, want {want:x?}"),
                )?;
            }
        }
        Ok(())
    }

    /// Fig. 2(a): inputs 0 and 1 each send a cell to output 3 at cycle 0
    /// (one receiver: their SRQs collide at the arbiter in cycle 4, the
    /// LFSR picks input 0); input 1 sends B at cycle 1, alone in cycle 5.
    const FIG2A: [(usize, usize, usize, u16); 3] = [(0, 1, 3, 0xa), (0, 0, 3, 0xc), (1, 1, 3, 0xb)];

    /// Fig. 2(a).
    pub fn fig2a() -> Stimulus<StxSwitch> {
        build(cfg(1, 8), 40, 0x2a, &FIG2A)
    }

    /// Check of [`fig2a`].
    pub fn fig2a_check(_: &Stimulus<StxSwitch>, o: &[StxSwitchOutputs]) -> Result<(), String> {
        expect(
            "A (input 1) lost in the crossbar in cycle 4, C (input 0) passed",
            o[4].xb_drop_o[1] && !o[4].xb_drop_o[0],
            format!("{:?}", o[4].xb_drop_o),
        )?;
        expect(
            "B stored out of order at output 3 in cycle 9",
            fates(o, 3, Fate::OutOfOrder) == vec![9],
            format!("{:?}", fates(o, 3, Fate::OutOfOrder)),
        )?;
        expect(
            "A retransmitted on its grant",
            o.iter().filter(|x| x.tx_retx_o[1]).count() == 1,
            format!("{}", o.iter().filter(|x| x.tx_retx_o[1]).count()),
        )?;
        let d: Vec<(usize, u16)> = deliveries(o, 3)
            .into_iter()
            .filter(|d| d.1 == 1)
            .map(|d| (d.0, d.3))
            .collect();
        expect(
            "A delivered on arrival, B from the RSQ the cycle after",
            d.len() == 2 && d[0].1 == 0xa && d[1] == (d[0].0 + 1, 0xb),
            format!("{d:x?}"),
        )?;
        all_once(&FIG2A, o)
    }

    /// Fig. 2(b): input 2 sends A0, A1 to output 5 in cycles 0 and 1 (window
    /// 2: both go speculatively). A0's grant and ACK come back in cycle 8:
    /// the ACK frees A0, the grant retransmits A1, whose ACK is not back
    /// yet (cycle 9).
    const FIG2B: [(usize, usize, usize, u16); 2] = [(0, 2, 5, 0x10), (1, 2, 5, 0x11)];

    /// Fig. 2(b).
    pub fn fig2b() -> Stimulus<StxSwitch> {
        build(cfg(2, 2), 40, 0x2b, &FIG2B)
    }

    /// Check of [`fig2b`].
    pub fn fig2b_check(_: &Stimulus<StxSwitch>, o: &[StxSwitchOutputs]) -> Result<(), String> {
        expect(
            "A1 retransmitted on the grant of cycle 8 (spurious: it is A0's grant)",
            o[8].tx_retx_o[2] && GrantKind::from_code(o[8].gnt_kind_o[2]) == GrantKind::Spurious,
            format!("{:?}", (o[8].tx_retx_o[2], o[8].gnt_kind_o[2])),
        )?;
        expect(
            "A1's late ACK finds nothing (unknown) in cycle 9",
            o[9].ack_kind_o[2] == 3,
            format!("{}", o[9].ack_kind_o[2]),
        )?;
        expect(
            "the second copy of A1 dropped as a duplicate at output 5 in cycle 16",
            fates(o, 5, Fate::Duplicate) == vec![16],
            format!("{:?}", fates(o, 5, Fate::Duplicate)),
        )?;
        all_once(&FIG2B, o)
    }

    /// Fig. 2(c): input 4 sends A to output 1 at cycle 0; its ACK and
    /// grant come in cycle 8; X for output 6 arrives in cycle 8.
    const FIG2C: [(usize, usize, usize, u16); 2] = [(0, 4, 1, 0x20), (8, 4, 6, 0x21)];

    /// Fig. 2(c).
    pub fn fig2c() -> Stimulus<StxSwitch> {
        build(cfg(2, 8), 40, 0x2c, &FIG2C)
    }

    /// Check of [`fig2c`].
    pub fn fig2c_check(_: &Stimulus<StxSwitch>, o: &[StxSwitchOutputs]) -> Result<(), String> {
        expect(
            "A's ACK taken and its grant wasted in cycle 8, X sent speculatively then",
            o[8].ack_kind_o[4] == 1
                && GrantKind::from_code(o[8].gnt_kind_o[4]) == GrantKind::Wasted
                && o[8].tx_spec_o[4],
            format!(
                "{:?}",
                (o[8].ack_kind_o[4], o[8].gnt_kind_o[4], o[8].tx_spec_o[4])
            ),
        )?;
        expect(
            "A at output 1 in cycle 8, X at output 6 in cycle 16",
            deliveries(o, 1) == vec![(8, 4, 0, 0x20)] && deliveries(o, 6) == vec![(16, 4, 0, 0x21)],
            format!("{:?} {:?}", deliveries(o, 1), deliveries(o, 6)),
        )?;
        all_once(&FIG2C, o)
    }

    /// Fig. 2(d): input 6 sends A and B to output 2 in cycles 0 and 1
    /// (window 1: B waits for A's ACK).
    const FIG2D: [(usize, usize, usize, u16); 2] = [(0, 6, 2, 0x30), (1, 6, 2, 0x31)];

    /// Fig. 2(d).
    pub fn fig2d() -> Stimulus<StxSwitch> {
        build(cfg(2, 1), 40, 0x2d, &FIG2D)
    }

    /// Check of [`fig2d`].
    pub fn fig2d_check(_: &Stimulus<StxSwitch>, o: &[StxSwitchOutputs]) -> Result<(), String> {
        expect(
            "B not sent before cycle 8",
            (1..8).all(|t| !o[t].tx_valid_o[6]),
            "a cell".into(),
        )?;
        expect(
            "A's ACK taken and B sent on A's grant (spurious) in cycle 8, B's grant wasted in 9",
            o[8].ack_kind_o[6] == 1
                && GrantKind::from_code(o[8].gnt_kind_o[6]) == GrantKind::Spurious
                && o[8].tx_valid_o[6]
                && !o[8].tx_spec_o[6]
                && GrantKind::from_code(o[9].gnt_kind_o[6]) == GrantKind::Wasted,
            format!(
                "{:?}",
                (o[8].ack_kind_o[6], o[8].gnt_kind_o[6], o[9].gnt_kind_o[6])
            ),
        )?;
        expect(
            "A at output 2 in cycle 8, B in cycle 16",
            deliveries(o, 2) == vec![(8, 6, 0, 0x30), (16, 6, 1, 0x31)],
            format!("{:?}", deliveries(o, 2)),
        )?;
        all_once(&FIG2D, o)
    }

    fn storm_arrivals() -> Vec<(usize, usize, usize, u16)> {
        let n = StxSwitchParams::default().n;
        (0..4)
            .flat_map(|t| (0..n).map(move |k| (t, k, 0, (k * 16 + t) as u16)))
            .collect()
    }

    /// A collision storm at output 0 (window 8: 8 credits).
    pub fn storm() -> Stimulus<StxSwitch> {
        build(cfg(2, 8), 160, 0x57, &storm_arrivals())
    }

    /// Check of [`storm`].
    pub fn storm_check(_: &Stimulus<StxSwitch>, o: &[StxSwitchOutputs]) -> Result<(), String> {
        let lost: usize = o
            .iter()
            .map(|x| x.xb_drop_o.iter().filter(|&&d| d).count())
            .sum();
        expect(
            "speculative cells lost in the crossbar",
            lost > 0,
            "none".into(),
        )?;
        all_once(&storm_arrivals(), o)
    }

    fn stall_arrivals() -> Vec<(usize, usize, usize, u16)> {
        let n = StxSwitchParams::default().n;
        (0..6)
            .flat_map(|t| (0..n).map(move |k| (2 * t, k, 2, (k * 16 + t) as u16)))
            .collect()
    }

    /// Output 2's link stalled in cycles 10..130.
    const STALL: std::ops::Range<usize> = 10..130;

    /// Flow control: 48 cells for output 2 (RSQs of 16 per input, window 4:
    /// 12 credits) while its link is stalled.
    pub fn stall() -> Stimulus<StxSwitch> {
        build_stalled(cfg(2, 4), 240, 0x5a, &stall_arrivals(), |t, j| {
            j != 2 || !STALL.contains(&t)
        })
    }

    /// Check of [`stall`].
    pub fn stall_check(_: &Stimulus<StxSwitch>, o: &[StxSwitchOutputs]) -> Result<(), String> {
        // Cells stored at output 2 during the stall: at most its 12
        // credits' worth, and none delivered until the link comes back.
        let stored = [Fate::InOrder.code(), Fate::OutOfOrder.code()];
        expect(
            "outputs for the whole stall and its release",
            o.len() > STALL.end,
            format!("{} cycles", o.len()),
        )?;
        let got: usize = o[STALL]
            .iter()
            .map(|x| {
                x.arr_fate_o[4..6]
                    .iter()
                    .filter(|f| stored.contains(f))
                    .count()
            })
            .sum();
        expect(
            "at most the 12 credits' cells stored at the stalled output",
            (1..=12).contains(&got) && deliveries(o, 2).iter().all(|d| !STALL.contains(&d.0)),
            format!("{got} cells, deliveries {:?}", deliveries(o, 2)),
        )?;
        expect(
            "grants withheld while the credits are out",
            o[STALL.end - 20..STALL.end]
                .iter()
                .all(|x| x.gnt_kind_o.iter().all(|&g| g == 0)),
            "a grant".into(),
        )?;
        all_once(&stall_arrivals(), o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_reaches_storms_and_full_windows() {
        use model::stx_switch::Bin;
        for p in StxSwitch::variants() {
            let c = StxSwitch::default_config(&p);
            let mut hits = vec![0u64; StxSwitch::bins().len()];
            // Four seeds of 4000 cycles: at N = 4 a storm needs all four
            // inputs to speculate to one output in one cycle (R = 2), which
            // seed 3 alone did not reach in 4000 cycles.
            for seed in 1..=4 {
                let s =
                    crate::explicit(&crate::generated::<StxSwitch>(&p, &c, seed, 4000)).unwrap();
                let mut m = StxSwitch::new(&p, &c);
                for cy in &s.cycles {
                    match cy {
                        Cycle::Drive(i) => {
                            let o = m.step(i);
                            m.sample(i, &o, &mut hits);
                        }
                        Cycle::Reset => m = StxSwitch::new(&p, &c),
                    }
                }
            }
            for b in [
                Bin::CollisionStorm,
                Bin::AckLost,
                Bin::RtxFull,
                Bin::Retransmission,
            ] {
                assert!(hits[b as usize] > 0, "{p:?}: {b:?} (hits {hits:?})");
            }
        }
    }
}
