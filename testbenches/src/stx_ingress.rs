//! Stimulus for the STX ingress adapter (`docs/stx_ingress.md`).
//!
//! Configurations: every policy and scheme, STX mostly on, the window at
//! its edges (1, 2, `RTT`, `RTT + 1`, `2^(SW-1)`) and in between, the
//! request limit at 1, 2 and its maximum; with `illegal`, policy or scheme
//! 3, window 0 or beyond `2^(SW-1)`, limit 0.
//!
//! Traffic comes in phases of 20 to 400 cycles, playing the input link and
//! the arbiter, closed loop on the model and on the previous cycle's
//! outputs. A phase picks an arrival load and a set of hot outputs (one hot
//! output fills its VOQ, its RTX queue and its sequence window); a grant
//! rate (from none, which lets requests pile up against the limit and the
//! pending counters fill, to a grant storm every cycle), grants mostly to
//! VOQs with outstanding requests and now and then to any VOQ (wasted
//! grants, grants beyond the requests); an ACK delay (0 to 12 cycles, so
//! grants come before or after the ACKs: R7) and an ACK loss rate (none to
//! all: full RTX queues, blocked windows); and now and then an ACK with a
//! random sequence field (unknown). The ACKs are those of the speculative
//! cells this block sent (`spec_seq_o`), in sending order, as the arbiter
//! returns them.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::u2;
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::stx_ingress::{
    AckKind, GrantKind, Policy, Scheme, StxIngress, StxIngressConfig, StxIngressInputs,
    StxIngressOutputs, StxIngressParams,
};
use model::{Block, PortGroup};
use proptest::prelude::*;
use std::collections::VecDeque;

/// Configurations of variant `p` (with `illegal`, some that `check` refuses).
pub fn config_strategy(p: &StxIngressParams, illegal: bool) -> BoxedStrategy<StxIngressConfig> {
    let wmax = p.win_max() as u16;
    let rtt = (p.rtt as u16).min(wmax);
    let rtt1 = (p.rtt as u16 + 1).min(wmax);
    let lmax = p.cnt_req_max() as u8;
    let code = |bad: bool| {
        if bad {
            prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8), 1 => Just(3u8)].boxed()
        } else {
            prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8)].boxed()
        }
    };
    let win = if illegal {
        prop_oneof![
            2 => Just(1u16), 1 => Just(2u16.min(wmax)), 2 => Just(rtt), 2 => Just(rtt1),
            2 => Just(wmax), 2 => 1..=wmax, 1 => Just(0u16),
            1 => Just(wmax + 1), 1 => (wmax + 1)..=((1u32 << p.sw) - 1) as u16,
        ]
        .boxed()
    } else {
        prop_oneof![
            2 => Just(1u16), 1 => Just(2u16.min(wmax)), 2 => Just(rtt), 2 => Just(rtt1),
            2 => Just(wmax), 2 => 1..=wmax,
        ]
        .boxed()
    };
    let lim = if illegal {
        prop_oneof![2 => Just(1u8), 2 => Just(2u8.min(lmax)), 3 => Just(lmax), 2 => 1..=lmax, 1 => Just(0u8)]
            .boxed()
    } else {
        prop_oneof![2 => Just(1u8), 2 => Just(2u8.min(lmax)), 3 => Just(lmax), 2 => 1..=lmax]
            .boxed()
    };
    (
        code(illegal),
        code(illegal),
        proptest::bool::weighted(0.85),
        win,
        lim,
    )
        .prop_map(|(pol, sch, en, w, l)| StxIngressConfig {
            cfg_policy_i: u2::new(pol),
            cfg_scheme_i: u2::new(sch),
            cfg_stx_en_i: en,
            cfg_win_i: w,
            cfg_req_lim_i: l,
        })
        .boxed()
}

/// The ingress adapter's traffic and arbiter, one cycle at a time.
pub struct StxIngressGen {
    rng: Rng,
    p: StxIngressParams,
    t: u64,
    left: u32,
    arr_p: f64,
    hot: u64,
    gnt_p: f64,
    any_gnt_p: f64,
    loss_p: f64,
    delay: u64,
    garbage_p: f64,
    /// ACKs on their way: (due cycle, sequence field).
    acks: VecDeque<(u64, u16)>,
}

impl StxIngressGen {
    /// The generator of variant `p` from `seed`.
    pub fn new(p: &StxIngressParams, _cfg: &StxIngressConfig, seed: u64) -> Self {
        StxIngressGen {
            rng: Rng::new(seed, 0x1a9e),
            p: *p,
            t: 0,
            left: 0,
            arr_p: 0.0,
            hot: 1,
            gnt_p: 0.0,
            any_gnt_p: 0.0,
            loss_p: 0.0,
            delay: 0,
            garbage_p: 0.0,
            acks: VecDeque::with_capacity(256),
        }
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        let n = self.p.n;
        self.left = r.range(20, 400) as u32;
        self.arr_p = [0.0, 0.1, 0.3, 0.6, 0.9, 1.0][r.below(6) as usize];
        let k = match r.weighted(&[3, 3, 2, 2]) {
            0 => 1,
            1 => 2.min(n),
            2 => r.range(1, n as u64) as usize,
            _ => n,
        };
        self.hot = 0;
        while (self.hot.count_ones() as usize) < k {
            self.hot |= 1 << r.below(n as u64);
        }
        self.gnt_p = [0.0, 0.05, 0.2, 0.5, 0.8, 1.0][r.below(6) as usize];
        self.any_gnt_p = [0.0, 0.02, 0.1, 0.5][r.below(4) as usize];
        self.loss_p = [0.0, 0.0, 0.2, 0.5, 0.9, 1.0][r.below(6) as usize];
        self.delay = [0, 1, 3, 8, 12][r.below(5) as usize];
        self.garbage_p = [0.0, 0.0, 0.02][r.below(3) as usize];
    }
}

impl Generator<StxIngress> for StxIngressGen {
    fn next(&mut self, m: &StxIngress, last: &StxIngressOutputs, i: &mut StxIngressInputs) -> Step {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        let p = self.p;
        let n = p.n as u64;
        // The previous cycle's speculative cell: its ACK, unless lost.
        if last.spec_valid_o && !self.rng.chance(self.loss_p) && self.acks.len() < 256 {
            self.acks.push_back((self.t + self.delay, last.spec_seq_o));
        }
        if self.rng.chance(0.0005) {
            self.acks.clear();
            self.t += 1;
            return Step::Reset;
        }
        let r = &mut self.rng;
        let idmask = (1u32 << p.iw) - 1;
        // Arrival (garbage fields when none).
        i.arr_valid_i = r.chance(self.arr_p);
        let hot = self.hot;
        let k = r.below(hot.count_ones() as u64) as usize;
        i.arr_out_i = (0..p.n).filter(|&j| hot >> j & 1 == 1).nth(k).unwrap_or(0) as u8;
        if !i.arr_valid_i {
            i.arr_out_i = r.below(n) as u8;
        }
        i.arr_id_i = (r.u64() as u32 & idmask) as u16;
        // Grant: mostly to a VOQ with outstanding requests.
        i.gnt_valid_i = false;
        i.gnt_out_i = r.below(n) as u8;
        if r.chance(self.gnt_p) {
            let owed = (0..p.n).filter(|&j| m.outstanding(j) > 0).count();
            if r.chance(self.any_gnt_p) {
                i.gnt_valid_i = true;
            } else if owed > 0 {
                let k = r.below(owed as u64) as usize;
                i.gnt_out_i = (0..p.n)
                    .filter(|&j| m.outstanding(j) > 0)
                    .nth(k)
                    .unwrap_or(0) as u8;
                i.gnt_valid_i = true;
            }
        }
        // ACK: the next one due, else now and then garbage.
        i.ack_valid_i = false;
        i.ack_seq_i = r.u64() as u16;
        if self.acks.front().is_some_and(|&(due, _)| due <= self.t) {
            let (_, s) = self.acks.pop_front().expect("due ACK");
            i.ack_valid_i = true;
            i.ack_seq_i = s;
        } else if r.chance(self.garbage_p) {
            i.ack_valid_i = true;
            let out = r.below(n) as u16;
            let seq = r.below(p.seq_mod() as u64) as u16;
            i.ack_seq_i = (out << p.sw) | seq;
        }
        self.t += 1;
        Step::Drive
    }
}

impl Bench for StxIngress {
    // 2: the random policy's picks (per-input LFSR, uniform pick) change
    // the speculative cells this closed-loop generator acknowledges.
    const GENERATOR_VERSION: u32 = 2;
    type Gen = StxIngressGen;
    fn generator(p: &StxIngressParams, cfg: &StxIngressConfig, seed: u64) -> StxIngressGen {
        StxIngressGen::new(p, cfg, seed)
    }
    fn config_strategy(p: &StxIngressParams, illegal: bool) -> BoxedStrategy<StxIngressConfig> {
        config_strategy(p, illegal)
    }
    fn scenarios() -> Vec<crate::Scenario<StxIngress>> {
        use scenario as s;
        vec![
            crate::Scenario {
                name: "fig2a-ooo",
                about: "seed 004 Fig. 2(a) at the input: A and B sent speculatively, A lost, B \
                        acknowledged; A's grant retransmits A, B's grant is wasted",
                build: s::fig2a,
                check: Some(s::fig2a_check),
            },
            crate::Scenario {
                name: "fig2b-duplicate",
                about: "seed 004 Fig. 2(b): A wins speculatively but its grant comes before its \
                        ACK: A is sent again; the late ACK finds nothing",
                build: s::fig2b,
                check: Some(s::fig2b_check),
            },
            crate::Scenario {
                name: "fig2c-wasted",
                about:
                    "seed 004 Fig. 2(c): A acknowledged, its grant finds an empty VOQ (wasted); \
                        the free link carries an STX of another VOQ in that cycle",
                build: s::fig2c,
                check: Some(s::fig2c_check),
            },
            crate::Scenario {
                name: "fig2d-spurious",
                about: "seed 004 Fig. 2(d): B, held back by the window, leaves on the grant of \
                        A's request (spurious) once A's ACK frees the window",
                build: s::fig2d,
                check: Some(s::fig2d_check),
            },
            crate::Scenario {
                name: "ocf-order",
                about: "seed 004 III-A: three heads wait (grants hold the link, R2); OCF sends \
                        them in arrival order",
                build: s::ocf_order,
                check: Some(s::ocf_check),
            },
            crate::Scenario {
                name: "ycf-order",
                about: "the same arrivals under youngest cell first: the reverse order",
                build: s::ycf_order,
                check: Some(s::ycf_check),
            },
            crate::Scenario {
                name: "gbn-stale",
                about: "go-back-N at the sender: A lost, B won; B's ACK is void; A's \
                        retransmission, then B's",
                build: s::gbn_stale,
                check: Some(s::gbn_check),
            },
        ]
    }
}

/// Directed scenarios from seed 004 (Fig. 2, III-A), as explicit cycles at
/// one input adapter (`RTT = 8`: an ACK comes 8 cycles after its cell was
/// sent, a grant 8 cycles after its request unless said otherwise).
pub mod scenario {
    use super::*;

    /// One cycle's events: arrival (output, id), grant (output), ACK
    /// (output, seq).
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Ev {
        /// Arrival.
        pub arr: Option<(u8, u16)>,
        /// Grant.
        pub gnt: Option<u8>,
        /// ACK.
        pub ack: Option<(u8, u16)>,
    }

    /// Builds `n` cycles from `ev(t)` for the default variant.
    pub fn build(
        cfg: StxIngressConfig,
        n: usize,
        seed: u64,
        ev: impl Fn(usize) -> Ev,
    ) -> Stimulus<StxIngress> {
        let p = StxIngressParams::default();
        let mut cycles = Vec::with_capacity(n);
        for t in 0..n {
            let e = ev(t);
            let mut i = StxIngressInputs::zero(&p);
            if let Some((o, id)) = e.arr {
                i.arr_valid_i = true;
                i.arr_out_i = o;
                i.arr_id_i = id;
            }
            if let Some(o) = e.gnt {
                i.gnt_valid_i = true;
                i.gnt_out_i = o;
            }
            if let Some((o, s)) = e.ack {
                i.ack_valid_i = true;
                i.ack_seq_i = ((o as u16) << p.sw) | s;
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

    fn cfg(policy: Policy, scheme: Scheme, win: u16) -> StxIngressConfig {
        let p = StxIngressParams::default();
        StxIngressConfig {
            cfg_policy_i: policy.code(),
            cfg_scheme_i: scheme.code(),
            cfg_win_i: win,
            ..StxIngress::default_config(&p)
        }
    }

    fn expect(what: &str, ok: bool, got: String) -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("{what}: got {got}"))
        }
    }

    fn gk(o: &StxIngressOutputs) -> GrantKind {
        GrantKind::from_code(o.gnt_kind_o)
    }

    fn ak(o: &StxIngressOutputs) -> AckKind {
        AckKind::from_code(o.ack_kind_o)
    }

    /// Fig. 2(a): A (output 1) arrives at 0, B at 2, both sent
    /// speculatively at once; A's copy is lost; B's ACK at 10; A's grant at
    /// 8, B's at 10.
    pub fn fig2a() -> Stimulus<StxIngress> {
        build(cfg(Policy::Ocf, Scheme::Sr, 8), 16, 0x4a, |t| match t {
            0 => Ev {
                arr: Some((1, 0xa)),
                ..Ev::default()
            },
            2 => Ev {
                arr: Some((1, 0xb)),
                ..Ev::default()
            },
            8 => Ev {
                gnt: Some(1),
                ..Ev::default()
            },
            10 => Ev {
                gnt: Some(1),
                ack: Some((1, 1)),
                ..Ev::default()
            },
            _ => Ev::default(),
        })
    }

    /// Check of [`fig2a`].
    pub fn fig2a_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "A and B sent speculatively at 0 and 2",
            o[0].cell_spec_o && o[0].cell_seq_o == 0 && o[2].cell_spec_o && o[2].cell_seq_o == 1,
            format!(
                "{:?} / {:?}",
                (o[0].cell_spec_o, o[0].cell_seq_o),
                (o[2].cell_spec_o, o[2].cell_seq_o)
            ),
        )?;
        expect(
            "A retransmitted on the regular grant at 8",
            o[8].cell_retx_o
                && o[8].cell_seq_o == 0
                && o[8].cell_id_o == 0xa
                && gk(&o[8]) == GrantKind::Regular,
            format!("{:?}", (o[8].cell_retx_o, o[8].cell_seq_o, gk(&o[8]))),
        )?;
        expect(
            "B's ACK taken and its grant wasted at 10",
            ak(&o[10]) == AckKind::Taken && gk(&o[10]) == GrantKind::Wasted,
            format!("{:?}", (ak(&o[10]), gk(&o[10]))),
        )?;
        let l = o.last().expect("cycles");
        expect(
            "counters stx 2, retx 1, wasted 1",
            (l.cnt_stx_o, l.cnt_retx_o, l.cnt_wasted_o) == (2, 1, 1),
            format!("{:?}", (l.cnt_stx_o, l.cnt_retx_o, l.cnt_wasted_o)),
        )
    }

    /// Fig. 2(b): A (output 2) sent speculatively at 0 and won; its grant
    /// comes at 4, before its ACK at 8.
    pub fn fig2b() -> Stimulus<StxIngress> {
        build(cfg(Policy::Ocf, Scheme::Sr, 8), 12, 0x4b, |t| match t {
            0 => Ev {
                arr: Some((2, 0xa)),
                ..Ev::default()
            },
            4 => Ev {
                gnt: Some(2),
                ..Ev::default()
            },
            8 => Ev {
                ack: Some((2, 0)),
                ..Ev::default()
            },
            _ => Ev::default(),
        })
    }

    /// Check of [`fig2b`].
    pub fn fig2b_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "A sent again from the RTX queue at 4",
            o[4].cell_valid_o && o[4].cell_retx_o && o[4].cell_seq_o == 0 && !o[4].cell_spec_o,
            format!(
                "{:?}",
                (o[4].cell_valid_o, o[4].cell_retx_o, o[4].cell_seq_o)
            ),
        )?;
        expect(
            "the late ACK finds nothing",
            ak(&o[8]) == AckKind::Unknown && o[9].rtx_cnt_o[2] == 0,
            format!("{:?}", ak(&o[8])),
        )
    }

    /// Fig. 2(c): A (output 1) at 0, acknowledged at 8; its grant at 9
    /// finds the VOQ empty; C (output 3) arrives at 9 and leaves
    /// speculatively in that cycle.
    pub fn fig2c() -> Stimulus<StxIngress> {
        build(cfg(Policy::Ocf, Scheme::Sr, 8), 12, 0x4c, |t| match t {
            0 => Ev {
                arr: Some((1, 0xa)),
                ..Ev::default()
            },
            8 => Ev {
                ack: Some((1, 0)),
                ..Ev::default()
            },
            9 => Ev {
                arr: Some((3, 0xc)),
                gnt: Some(1),
                ..Ev::default()
            },
            _ => Ev::default(),
        })
    }

    /// Check of [`fig2c`].
    pub fn fig2c_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "ACK taken at 8",
            ak(&o[8]) == AckKind::Taken,
            format!("{:?}", ak(&o[8])),
        )?;
        expect(
            "wasted grant and C speculative at 9",
            gk(&o[9]) == GrantKind::Wasted
                && o[9].spec_valid_o
                && o[9].spec_out_o == 3
                && o[9].cell_id_o == 0xc,
            format!("{:?}", (gk(&o[9]), o[9].spec_valid_o, o[9].spec_out_o)),
        )
    }

    /// Fig. 2(d), window 1: A (output 1) at 0 sent speculatively; B at 3
    /// waits (the window); A's ACK and A's grant at 8: B leaves on the
    /// grant.
    pub fn fig2d() -> Stimulus<StxIngress> {
        build(cfg(Policy::Ocf, Scheme::Sr, 1), 12, 0x4d, |t| match t {
            0 => Ev {
                arr: Some((1, 0xa)),
                ..Ev::default()
            },
            3 => Ev {
                arr: Some((1, 0xb)),
                ..Ev::default()
            },
            8 => Ev {
                gnt: Some(1),
                ack: Some((1, 0)),
                ..Ev::default()
            },
            _ => Ev::default(),
        })
    }

    /// Check of [`fig2d`].
    pub fn fig2d_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "B not sent before 8",
            (3..8).all(|t| !o[t].cell_valid_o),
            "a cell".into(),
        )?;
        expect(
            "B sent on A's grant at 8: spurious",
            gk(&o[8]) == GrantKind::Spurious
                && o[8].cell_seq_o == 1
                && o[8].cell_id_o == 0xb
                && !o[8].cell_retx_o,
            format!("{:?}", (gk(&o[8]), o[8].cell_seq_o, o[8].cell_id_o)),
        )
    }

    /// Window 1: x0, x1 (output 3) at 0, 1 (x0 speculative, x1 waits);
    /// grants of output 3 at 2, 3 (x0 again, x1) hold the link while a
    /// (output 2) arrives at 2 and b (output 0) at 3; at 4 a wasted grant
    /// and c (output 1) arriving: three heads eligible.
    fn order(policy: Policy, seed: u64) -> Stimulus<StxIngress> {
        build(cfg(policy, Scheme::Sr, 1), 10, seed, |t| match t {
            0 => Ev {
                arr: Some((3, 0x30)),
                ..Ev::default()
            },
            1 => Ev {
                arr: Some((3, 0x31)),
                ..Ev::default()
            },
            2 => Ev {
                arr: Some((2, 0x20)),
                gnt: Some(3),
                ..Ev::default()
            },
            3 => Ev {
                arr: Some((0, 0x00)),
                gnt: Some(3),
                ..Ev::default()
            },
            4 => Ev {
                arr: Some((1, 0x10)),
                gnt: Some(3),
                ..Ev::default()
            },
            _ => Ev::default(),
        })
    }

    /// The OCF order.
    pub fn ocf_order() -> Stimulus<StxIngress> {
        order(Policy::Ocf, 0x4e)
    }

    /// The YCF order.
    pub fn ycf_order() -> Stimulus<StxIngress> {
        order(Policy::Ycf, 0x4f)
    }

    fn spec_outs(o: &[StxIngressOutputs]) -> Vec<u8> {
        o[4..7]
            .iter()
            .filter(|x| x.spec_valid_o)
            .map(|x| x.spec_out_o)
            .collect()
    }

    /// Check of [`ocf_order`].
    pub fn ocf_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "no STX at 2, 3 (R2); OCF sends 2, 0, 1 at 4..6",
            !o[2].spec_valid_o && !o[3].spec_valid_o && spec_outs(o) == [2, 0, 1],
            format!("{:?}", spec_outs(o)),
        )
    }

    /// Check of [`ycf_order`].
    pub fn ycf_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "YCF sends 1, 0, 2 at 4..6",
            spec_outs(o) == [1, 0, 2],
            format!("{:?}", spec_outs(o)),
        )
    }

    /// GBN: A, B (output 1) at 0, 1, speculative; A lost; B's ACK at 9;
    /// grants at 10 and 12.
    pub fn gbn_stale() -> Stimulus<StxIngress> {
        build(cfg(Policy::Ocf, Scheme::Gbn, 8), 16, 0x50, |t| match t {
            0 => Ev {
                arr: Some((1, 0xa)),
                ..Ev::default()
            },
            1 => Ev {
                arr: Some((1, 0xb)),
                ..Ev::default()
            },
            9 => Ev {
                ack: Some((1, 1)),
                ..Ev::default()
            },
            10 | 12 => Ev {
                gnt: Some(1),
                ..Ev::default()
            },
            _ => Ev::default(),
        })
    }

    /// Check of [`gbn_stale`].
    pub fn gbn_check(_: &Stimulus<StxIngress>, o: &[StxIngressOutputs]) -> Result<(), String> {
        expect(
            "B's ACK void at 9",
            ak(&o[9]) == AckKind::Void && o[10].rtx_cnt_o[1] == 2,
            format!("{:?}", ak(&o[9])),
        )?;
        expect(
            "A then B retransmitted at 10 and 12, both regular",
            o[10].cell_retx_o
                && o[10].cell_seq_o == 0
                && gk(&o[10]) == GrantKind::Regular
                && o[12].cell_retx_o
                && o[12].cell_seq_o == 1
                && gk(&o[12]) == GrantKind::Regular,
            format!(
                "{:?}",
                (o[10].cell_seq_o, gk(&o[10]), o[12].cell_seq_o, gk(&o[12]))
            ),
        )
    }
}
