//! Stimulus for the STX egress adapter (`docs/stx_egress.md`).
//!
//! Configurations: every scheme (SR mostly), and with `illegal` the code 3.
//!
//! Traffic comes in phases of 30 to 400 cycles. A phase picks a load per
//! receiver, a set of hot inputs, how often the output link is ready (from
//! always to stalled, so that RSQs fill up), and the mix of what the inputs
//! send. Each input sends like a sender under selective retry, closed loop
//! on the model's RSQ (its head and expected sequence number): mostly the
//! next cell of its stream, which stays inside the window; now and then a
//! cell is skipped (lost speculatively: a hole) and sent later (the
//! retransmission on a grant fills the hole and releases a run); cells
//! inside the window out of order; duplicates, both behind the head (a
//! retransmitted cell that had won) and of a cell held; and the exact edges:
//! `head + B - 1`, `head + B` (fits only if the head leaves in the same
//! cycle), the first sequence number behind the head by half the space, and
//! beyond the window. Now and then two receivers carry the same input
//! (a protocol violation), and idle receivers carry garbage.

use crate::rng::Rng;
use crate::Bench;
use arbitrary_int::u2;
use model::stim::{Cycle, Generator, Step, Stimulus};
use model::stx_egress::{
    Scheme, StxEgress, StxEgressConfig, StxEgressInputs, StxEgressOutputs, StxEgressParams,
};
use model::{Block, PortGroup};
use proptest::prelude::*;

/// Configurations of variant `p` (with `illegal`, some with scheme 3).
pub fn config_strategy(_p: &StxEgressParams, illegal: bool) -> BoxedStrategy<StxEgressConfig> {
    let s = if illegal {
        prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8), 1 => Just(3u8)].boxed()
    } else {
        prop_oneof![4 => Just(0u8), 2 => Just(1u8), 2 => Just(2u8)].boxed()
    };
    s.prop_map(|s| StxEgressConfig {
        cfg_scheme_i: u2::new(s),
    })
    .boxed()
}

/// What an input sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The next cell of its stream (skipping one now and then).
    Stream,
    /// The first cell not yet received (a retransmission filling a hole).
    Expected,
    /// Inside the window, out of order.
    Ahead,
    /// Behind the head: a copy of a delivered cell.
    DupBehind,
    /// A copy of a held cell.
    DupHeld,
    /// An edge: head + B - 1, head + B, head - 2^(SW-1), or beyond.
    Edge,
    /// Any sequence number.
    Any,
}

/// The egress adapter's traffic, one cycle at a time.
pub struct StxEgressGen {
    rng: Rng,
    p: StxEgressParams,
    left: u32,
    load: f64,
    ready_p: f64,
    hot: u64,
    weights: [u32; 7],
    skip_p: f64,
    conflict_p: f64,
    /// Per input: the last sequence number of its stream (modulo 2^SW).
    last: Vec<u32>,
    /// Per input: sent something since reset.
    started: Vec<bool>,
    /// Inputs already on a receiver this cycle (bit mask).
    used: u64,
}

impl StxEgressGen {
    /// The generator of variant `p` from `seed`.
    pub fn new(p: &StxEgressParams, _cfg: &StxEgressConfig, seed: u64) -> Self {
        StxEgressGen {
            rng: Rng::new(seed, 0x57e9),
            p: *p,
            left: 0,
            load: 0.0,
            ready_p: 1.0,
            hot: 0,
            weights: [0; 7],
            skip_p: 0.0,
            conflict_p: 0.0,
            last: vec![0; p.n],
            started: vec![false; p.n],
            used: 0,
        }
    }

    fn new_phase(&mut self) {
        let r = &mut self.rng;
        let n = self.p.n;
        self.left = r.range(30, 400) as u32;
        self.load = [0.05, 0.3, 0.6, 0.9, 1.0][r.below(5) as usize];
        self.ready_p = [1.0, 1.0, 0.9, 0.6, 0.3, 0.05, 0.0][r.below(7) as usize];
        let k = match r.weighted(&[2, 3, 3, 2]) {
            0 => 1,
            1 => 2.min(n),
            2 => r.range(1, n as u64) as usize,
            _ => n,
        };
        self.hot = 0;
        while (self.hot.count_ones() as usize) < k {
            self.hot |= 1 << r.below(n as u64);
        }
        // Stream, Expected, Ahead, DupBehind, DupHeld, Edge, Any.
        self.weights = match r.weighted(&[4, 2, 2, 1]) {
            0 => [60, 10, 5, 3, 3, 2, 0],
            1 => [30, 20, 20, 10, 10, 8, 2],
            2 => [10, 30, 10, 5, 5, 20, 2],
            _ => [1, 1, 1, 1, 1, 1, 1],
        };
        self.skip_p = [0.0, 0.05, 0.2][r.below(3) as usize];
        self.conflict_p = [0.0, 0.0, 0.02][r.below(3) as usize];
    }

    /// A sequence number for input `i`, closed loop on the model.
    fn seq(&mut self, m: &StxEgress, i: usize) -> u16 {
        let p = self.p;
        let modulus = p.seq_mod();
        let b = p.b as u32;
        let h = m.head(i) as u32;
        let exp = m.expected(i) as u32;
        let add = |a: u32, k: u32| (a + k) % modulus;
        let r = &mut self.rng;
        let kind = match r.weighted(&self.weights) {
            0 => Kind::Stream,
            1 => Kind::Expected,
            2 => Kind::Ahead,
            3 => Kind::DupBehind,
            4 => Kind::DupHeld,
            5 => Kind::Edge,
            _ => Kind::Any,
        };
        let s = match kind {
            Kind::Stream => {
                // The stream restarts at the expected cell when it left the
                // window (the sender's window rule holds it back).
                let mut s = if self.started[i] {
                    add(self.last[i], 1)
                } else {
                    exp
                };
                if m.dist(s as u16, h as u16) >= b {
                    s = exp;
                }
                if r.chance(self.skip_p) && m.dist(add(s, 1) as u16, h as u16) < b {
                    s = add(s, 1);
                }
                self.last[i] = s;
                self.started[i] = true;
                s
            }
            Kind::Expected => exp,
            Kind::Ahead => add(h, r.below(b as u64) as u32),
            Kind::DupBehind => {
                let back = r.range(1, (b as u64).min(modulus as u64 / 2)) as u32;
                (h + modulus - back) % modulus
            }
            Kind::DupHeld => {
                let held: Vec<u32> = (0..b).filter(|&k| m.held(i, k as usize)).collect();
                if held.is_empty() {
                    exp
                } else {
                    let k = held[r.below(held.len() as u64) as usize];
                    // the sequence number of slot k inside the window
                    add(h, (k + b - h % b) % b)
                }
            }
            Kind::Edge => match r.below(4) {
                0 => add(h, b - 1),
                1 => add(h, b),
                2 => add(h, modulus / 2),
                _ => add(
                    h,
                    r.range(b as u64, (modulus / 2).max(b + 1) as u64 - 1) as u32,
                ),
            },
            Kind::Any => r.below(modulus as u64) as u32,
        };
        s as u16
    }
}

impl Generator<StxEgress> for StxEgressGen {
    fn next(&mut self, m: &StxEgress, _last: &StxEgressOutputs, i: &mut StxEgressInputs) -> Step {
        if self.left == 0 {
            self.new_phase();
        }
        self.left -= 1;
        if self.rng.chance(0.0003) {
            self.started.iter_mut().for_each(|s| *s = false);
            return Step::Reset;
        }
        let p = self.p;
        let idmask = (1u32 << p.iw) - 1;
        i.dlv_ready_i = self.rng.chance(self.ready_p);
        self.used = 0;
        for x in 0..p.r {
            let r = &mut self.rng;
            // Garbage on an idle receiver.
            i.arr_valid_i[x] = false;
            i.arr_src_i[x] = r.below(p.n as u64) as u8;
            i.arr_seq_i[x] = r.below(p.seq_mod() as u64) as u16;
            i.arr_id_i[x] = (r.u64() as u32 & idmask) as u16;
            if !r.chance(self.load) {
                continue;
            }
            let free = self.hot & !self.used;
            let src = if self.used != 0 && r.chance(self.conflict_p) {
                // a protocol violation: an input already on a receiver
                let u = self.used;
                (0..p.n).filter(|&k| u >> k & 1 == 1).nth(0).unwrap_or(0)
            } else if free != 0 {
                let k = r.below(free.count_ones() as u64) as usize;
                (0..p.n).filter(|&j| free >> j & 1 == 1).nth(k).unwrap_or(0)
            } else {
                continue;
            };
            self.used |= 1 << src;
            i.arr_valid_i[x] = true;
            i.arr_src_i[x] = src as u8;
            i.arr_seq_i[x] = self.seq(m, src);
        }
        Step::Drive
    }
}

impl Bench for StxEgress {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = StxEgressGen;
    fn generator(p: &StxEgressParams, cfg: &StxEgressConfig, seed: u64) -> StxEgressGen {
        StxEgressGen::new(p, cfg, seed)
    }
    fn config_strategy(p: &StxEgressParams, illegal: bool) -> BoxedStrategy<StxEgressConfig> {
        config_strategy(p, illegal)
    }
    fn scenarios() -> Vec<crate::Scenario<StxEgress>> {
        use scenario as s;
        vec![
            crate::Scenario {
                name: "ooo-resequenced",
                about: "seed 004 Fig. 2(a): A's speculative copy is lost, B arrives first and is \
                        held; A's retransmission releases both, in order",
                build: s::ooo_resequenced,
                check: Some(s::held_then_in_order),
            },
            crate::Scenario {
                name: "duplicate",
                about: "seed 004 Fig. 2(b): A wins speculatively; a grant before the ACK sends \
                        it again; the copy is dropped",
                build: s::duplicate,
                check: Some(s::a_copy_dropped),
            },
            crate::Scenario {
                name: "sequence-wrap",
                about: "one input's stream crosses the sequence-number wrap twice, reordered \
                        inside the window",
                build: s::sequence_wrap,
                check: Some(s::wraps_in_order),
            },
            crate::Scenario {
                name: "contention",
                about: "four inputs hold cells while the output is stalled, then leave round \
                        robin, one per cycle",
                build: s::contention,
                check: Some(s::round_robin),
            },
            crate::Scenario {
                name: "go-back-n",
                about: "the Fig. 2(a) arrivals under GBN: B is dropped, A and B's resend are \
                        taken in order",
                build: s::go_back_n,
                check: Some(s::b_dropped_then_in_order),
            },
        ]
    }
}

/// Directed scenarios from seed 004 (section III-D, Fig. 2), as explicit
/// cycles. `RTT = 8`: a cell sent in slot `t` reaches the output in
/// `t + RTT/2 + RTT/2`; the timelines below are at the output.
pub mod scenario {
    use super::*;
    use model::stx_egress::Fate;

    /// A cell on a receiver: (source input, sequence number, id).
    pub type Cell = (u8, u16, u16);

    /// Builds the cycles: `cells(t)` on the receivers, the output ready
    /// unless `stall(t)`.
    pub fn build(
        p: StxEgressParams,
        scheme: Scheme,
        n: usize,
        seed: u64,
        cells: impl Fn(usize) -> Vec<Cell>,
        stall: impl Fn(usize) -> bool,
    ) -> Stimulus<StxEgress> {
        let mut cycles = Vec::with_capacity(n);
        for t in 0..n {
            let mut i = StxEgressInputs::zero(&p);
            for (x, (src, seq, id)) in cells(t).into_iter().enumerate() {
                i.arr_valid_i[x] = true;
                i.arr_src_i[x] = src;
                i.arr_seq_i[x] = seq;
                i.arr_id_i[x] = id;
            }
            i.dlv_ready_i = !stall(t);
            cycles.push(Cycle::Drive(i));
        }
        Stimulus {
            params: p,
            config: StxEgressConfig {
                cfg_scheme_i: scheme.code(),
            },
            cycles,
            seed,
            generated: None,
        }
    }

    /// The Fig. 2(a) arrivals at the output of input 2's cells A (seq 5)
    /// and B (seq 6): B's speculative copy at cycle 4, A on its grant at
    /// cycle 8; input 1 streams in order beside them on the other receiver.
    fn fig2a(t: usize) -> Vec<Cell> {
        let mut v = Vec::new();
        if t < 12 {
            v.push((1, t as u16, 0x10 + t as u16));
        }
        match t {
            // cells 0..4 of input 2 before A and B, in order
            0..=4 => v.push((2, t as u16, 0x20 + t as u16)),
            6 => v.push((2, 6, 0xbb)),
            10 => v.push((2, 5, 0xaa)),
            _ => {}
        }
        v
    }

    /// Fig. 2(a) under SR.
    pub fn ooo_resequenced() -> Stimulus<StxEgress> {
        build(
            StxEgressParams::default(),
            Scheme::Sr,
            20,
            0x2a,
            fig2a,
            |_| false,
        )
    }

    /// Scenario check of [`ooo_resequenced`]: input 2's B (seq 6) is held
    /// out of order, and input 2's cells leave in sequence order, 0 to 6,
    /// each once.
    pub fn held_then_in_order(
        _: &Stimulus<StxEgress>,
        outs: &[StxEgressOutputs],
    ) -> Result<(), String> {
        if !outs.iter().any(|o| {
            o.arr_fate_o
                .contains(&model::stx_egress::Fate::OutOfOrder.code())
        }) {
            return Err("no cell held out of order".into());
        }
        let seqs: Vec<u16> = outs
            .iter()
            .filter(|o| o.dlv_valid_o && o.dlv_src_o == 2)
            .map(|o| o.dlv_seq_o)
            .collect();
        if seqs == (0..=6).collect::<Vec<u16>>() {
            Ok(())
        } else {
            Err(format!(
                "input 2 delivered {seqs:?}, expected 0..=6 in order"
            ))
        }
    }

    /// Scenario check of [`duplicate`]: one copy dropped as a duplicate, and
    /// input 3 delivers seq 0 then 1, each once.
    pub fn a_copy_dropped(
        _: &Stimulus<StxEgress>,
        outs: &[StxEgressOutputs],
    ) -> Result<(), String> {
        let dups = outs
            .iter()
            .flat_map(|o| &o.arr_fate_o)
            .filter(|&&f| f == model::stx_egress::Fate::Duplicate.code())
            .count();
        let seqs: Vec<u16> = outs
            .iter()
            .filter(|o| o.dlv_valid_o && o.dlv_src_o == 3)
            .map(|o| o.dlv_seq_o)
            .collect();
        if dups == 1 && seqs == [0, 1] {
            Ok(())
        } else {
            Err(format!(
                "{dups} duplicates, input 3 delivered {seqs:?}: expected 1 and [0, 1]"
            ))
        }
    }

    /// Fig. 2(b): input 3's cell A (seq 0) arrives speculatively at cycle 4
    /// and leaves; its copy, sent on the grant that came before the ACK,
    /// arrives at cycle 8 and is dropped; B (seq 1) follows.
    pub fn duplicate() -> Stimulus<StxEgress> {
        build(
            StxEgressParams::default(),
            Scheme::Sr,
            16,
            0x2b,
            |t| match t {
                4 => vec![(3, 0, 0xa0)],
                8 => vec![(3, 0, 0xa0)],
                9 => vec![(3, 1, 0xb1)],
                _ => vec![],
            },
            |_| false,
        )
    }

    /// The small variant (SW = 4, B = 4): input 1 sends 0..48 in pairs
    /// swapped (1, 0, 3, 2, ...), crossing the wrap at 16 three times.
    pub fn sequence_wrap() -> Stimulus<StxEgress> {
        let p = StxEgress::variants()[1];
        build(
            p,
            Scheme::Sr,
            52,
            0x2c,
            |t| {
                if t < 48 {
                    let s = (t ^ 1) as u16;
                    vec![(1, s % 16, s & 15)]
                } else {
                    vec![]
                }
            },
            |_| false,
        )
    }

    /// Inputs 0..3 send cell 0 in cycles 0..3 and cell 1 in cycles 4..7
    /// while the output is stalled; from cycle 8 it takes one per cycle,
    /// round robin: inputs 0, 1, 2, 3 (cells 0), then 0, 1, 2, 3 (cells 1).
    pub fn contention() -> Stimulus<StxEgress> {
        build(
            StxEgressParams::default(),
            Scheme::Sr,
            20,
            0x2d,
            |t| match t {
                0..=3 => vec![(t as u8, 0, t as u16)],
                4..=7 => vec![(t as u8 - 4, 1, 0x40 + t as u16 - 4)],
                _ => vec![],
            },
            |t| t < 8,
        )
    }

    /// Fig. 2(a) under GBN: B (seq 6) is out of order and dropped; A is
    /// taken at cycle 10 and B's resend at cycle 12.
    pub fn go_back_n() -> Stimulus<StxEgress> {
        build(
            StxEgressParams::default(),
            Scheme::Gbn,
            20,
            0x2e,
            |t| {
                let mut v = fig2a(t);
                if t == 12 {
                    v.push((2, 6, 0xbb));
                }
                v
            },
            |_| false,
        )
    }

    /// The deliveries of `outs`: (cycle, input, seq).
    pub fn deliveries(outs: &[StxEgressOutputs]) -> Vec<(usize, u8, u16)> {
        outs.iter()
            .enumerate()
            .filter(|(_, o)| o.dlv_valid_o)
            .map(|(t, o)| (t, o.dlv_src_o, o.dlv_seq_o))
            .collect()
    }

    /// The sequence numbers input `k` delivered, in order.
    pub fn of_input(outs: &[StxEgressOutputs], k: u8) -> Vec<u16> {
        deliveries(outs)
            .into_iter()
            .filter(|d| d.1 == k)
            .map(|d| d.2)
            .collect()
    }

    fn fate(o: &StxEgressOutputs, x: usize) -> Fate {
        Fate::from_code(o.arr_fate_o[x])
    }

    /// Scenario check of [`sequence_wrap`]: input 1 delivers 0..48 (mod 16)
    /// in order; each of the 24 odd cells came first and waited (24 held
    /// out of order), no duplicate, none out of the window.
    pub fn wraps_in_order(
        _: &Stimulus<StxEgress>,
        outs: &[StxEgressOutputs],
    ) -> Result<(), String> {
        let want: Vec<u16> = (0..48).map(|s| s % 16).collect();
        crate::ensure_eq!(of_input(outs, 1), want, "input 1 delivered");
        let last = outs.last().ok_or("no cycles")?;
        crate::ensure_eq!(
            (last.cnt_ooo_o, last.cnt_dup_o, last.cnt_oow_o),
            (24, 0, 0),
            "(out of order, duplicates, out of window)"
        );
        Ok(())
    }

    /// Scenario check of [`contention`]: nothing leaves while the output is
    /// stalled; at cycle 8 every input holds two cells, then one leaves per
    /// cycle from cycle 8 on, round robin: inputs 0..3 with cell 0, then
    /// 0..3 with cell 1.
    pub fn round_robin(_: &Stimulus<StxEgress>, outs: &[StxEgressOutputs]) -> Result<(), String> {
        let want: Vec<(usize, u8, u16)> =
            (0..8).map(|k| (8 + k, k as u8 % 4, k as u16 / 4)).collect();
        crate::ensure_eq!(deliveries(outs), want, "deliveries (cycle, input, seq)");
        crate::ensure_eq!(
            outs[8].rsq_cnt_o,
            vec![2, 2, 2, 2, 0, 0, 0, 0],
            "cells held per input at cycle 8"
        );
        Ok(())
    }

    /// Scenario check of [`go_back_n`]: B (seq 6) arriving before A at
    /// cycle 6 is out of the window and dropped; A is taken at cycle 10 and
    /// B's resend at cycle 12 (stored in order: input 1 shares the link);
    /// input 2 delivers 0..6 in order, A at cycle 11 and B at 13; one drop,
    /// nothing held out of order.
    pub fn b_dropped_then_in_order(
        _: &Stimulus<StxEgress>,
        outs: &[StxEgressOutputs],
    ) -> Result<(), String> {
        crate::ensure_eq!(fate(&outs[6], 1), Fate::OutOfWindow, "B's fate at cycle 6");
        crate::ensure_eq!(fate(&outs[10], 1), Fate::InOrder, "A's fate at cycle 10");
        crate::ensure_eq!(fate(&outs[12], 0), Fate::InOrder, "B's fate at cycle 12");
        let d2: Vec<(usize, u16)> = deliveries(outs)
            .into_iter()
            .filter(|d| d.1 == 2)
            .map(|d| (d.0, d.2))
            .collect();
        crate::ensure_eq!(
            d2,
            (0..7).map(|k| (2 * k + 1, k as u16)).collect::<Vec<_>>(),
            "input 2's deliveries (cycle, seq)"
        );
        let last = outs.last().ok_or("no cycles")?;
        crate::ensure_eq!(
            (last.cnt_oow_o, last.cnt_ooo_o),
            (1, 0),
            "(out of window, out of order)"
        );
        Ok(())
    }
}
