//! STX egress adapter: equivalence of golden model and RTL, model
//! invariants against a reference resequencer, and the directed scenarios of
//! seed 004 (Fig. 2).

use crate::support;

use model::stim::{Cycle, Stimulus};
use model::stx_egress::{Fate, Scheme, StxEgress, StxEgressOutputs};
use model::Block;
use proptest::prelude::*;
use std::collections::HashMap;
use testbenches::stx_egress::scenario;

#[test]
fn equivalence_random() {
    support::equivalence::<StxEgress>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<StxEgress>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<StxEgress>();
}

/// Runs the model over `s`, returning the outputs of every cycle.
fn outputs(s: &Stimulus<StxEgress>) -> Vec<StxEgressOutputs> {
    let mut m = StxEgress::new(&s.params, &s.config);
    let mut v = Vec::new();
    for c in &s.cycles {
        match c {
            Cycle::Drive(i) => v.push(m.step(i)),
            Cycle::Reset => m = StxEgress::new(&s.params, &s.config),
        }
    }
    v
}

/// Steps the model through `s` beside a plain reference (per input a map
/// of held sequence numbers, unbounded integers for the head), checking
/// every delivery, every fate and every counter.
fn check_against_reference(s: &Stimulus<StxEgress>) -> Result<(), TestCaseError> {
    let p = s.params;
    let modulus = p.seq_mod() as u64;
    let b = p.b as u64;
    let mut m = StxEgress::new(&p, &s.config);
    let scheme = Scheme::from_code(s.config.cfg_scheme_i);
    // Reference: head per input (unwrapped), held cells: seq -> id.
    let fresh = || (vec![0u64; p.n], vec![HashMap::<u64, u16>::new(); p.n]);
    let (mut head, mut held) = fresh();
    let mut counts = [0u64; 5];
    // Credits: every cell that reached the adapter is held or has freed
    // its credit.
    let (mut arrived, mut freed) = (0u64, 0u64);
    for (t, c) in s.cycles.iter().enumerate() {
        let i = match c {
            Cycle::Reset => {
                m = StxEgress::new(&p, &s.config);
                (head, held) = fresh();
                counts = [0; 5];
                (arrived, freed) = (0, 0);
                continue;
            }
            Cycle::Drive(i) => i,
        };
        let waiting: u64 = held.iter().map(|h| h.len() as u64).sum();
        let o = m.step(i);
        m.assert_invariants();
        prop_assert_eq!(o.cfg_err_o, scheme.is_none());
        // The delivery: the head of its input, from the RSQ or the receiver.
        if o.dlv_valid_o {
            prop_assert!(i.dlv_ready_i, "cycle {}: delivery while not ready", t);
            let k = o.dlv_src_o as usize;
            prop_assert_eq!(o.dlv_seq_o as u64, head[k] % modulus, "cycle {}", t);
            if let Some(id) = held[k].remove(&head[k]) {
                prop_assert!(!o.dlv_byp_o);
                prop_assert_eq!(o.dlv_id_o, id);
            } else {
                prop_assert!(o.dlv_byp_o);
                let x = (0..p.r)
                    .find(|&x| Fate::from_code(o.arr_fate_o[x]) == Fate::Delivered)
                    .expect("a bypass has its receiver");
                prop_assert_eq!(i.arr_src_i[x] as usize, k);
                prop_assert_eq!(i.arr_seq_i[x] as u64, head[k] % modulus);
                prop_assert_eq!(o.dlv_id_o, i.arr_id_i[x]);
            }
            head[k] += 1;
            counts[0] += 1;
        } else {
            // Work conserving: no delivery only if nothing was ready.
            let any_held = (0..p.n).any(|k| held[k].contains_key(&head[k]));
            prop_assert!(
                !i.dlv_ready_i || !any_held,
                "cycle {}: idle with a head held",
                t
            );
        }
        // The fates.
        let mut seen = 0u64;
        for x in 0..p.r {
            let f = Fate::from_code(o.arr_fate_o[x]);
            if !i.arr_valid_i[x] {
                prop_assert_eq!(f, Fate::None);
                continue;
            }
            let k = i.arr_src_i[x] as usize;
            if seen >> k & 1 == 1 {
                prop_assert_eq!(f, Fate::Conflict);
                continue;
            }
            seen |= 1 << k;
            if scheme.is_none() {
                prop_assert_eq!(f, Fate::Refused);
                continue;
            }
            if f == Fate::Delivered {
                continue;
            }
            let s = i.arr_seq_i[x] as u64;
            // Unwrap against the head (after this cycle's delivery).
            let d = (s + modulus - head[k] % modulus) % modulus;
            let mut exp = head[k];
            while held[k].contains_key(&exp) {
                exp += 1;
            }
            let want = if d < b {
                let u = head[k] + d;
                let want = if held[k].contains_key(&u) {
                    Fate::Duplicate
                } else if u == exp {
                    Fate::InOrder
                } else if scheme == Some(Scheme::Sr) {
                    Fate::OutOfOrder
                } else {
                    Fate::OutOfWindow
                };
                if matches!(want, Fate::InOrder | Fate::OutOfOrder) {
                    held[k].insert(u, i.arr_id_i[x]);
                }
                want
            } else if d >= modulus / 2 {
                Fate::Duplicate
            } else {
                Fate::OutOfWindow
            };
            prop_assert_eq!(f, want, "cycle {}: receiver {} ({}, {})", t, x, k, s);
            match f {
                Fate::Duplicate => counts[1] += 1,
                Fate::OutOfWindow => counts[2] += 1,
                Fate::OutOfOrder => counts[3] += 1,
                _ => {}
            }
        }
        counts[4] += waiting;
        let max = p.cnt_max();
        let st = m.state();
        let got = [
            st.cnt_dlv_q,
            st.cnt_dup_q,
            st.cnt_oow_q,
            st.cnt_ooo_q,
            st.cnt_wait_q,
        ];
        for (g, c) in got.iter().zip(&counts) {
            prop_assert_eq!(*g as u64, (*c).min(max), "cycle {}: counters", t);
        }
        for k in 0..p.n {
            prop_assert_eq!(m.occupancy(k), held[k].len());
            prop_assert!(held[k].keys().all(|&u| u >= head[k] && u < head[k] + b));
        }
        let dropped = o
            .arr_fate_o
            .iter()
            .filter(|&&f| {
                matches!(
                    Fate::from_code(f),
                    Fate::Duplicate | Fate::OutOfWindow | Fate::Conflict | Fate::Refused
                )
            })
            .count() as u8;
        prop_assert_eq!(
            o.crd_o,
            u8::from(o.dlv_valid_o) + dropped,
            "cycle {}: credits",
            t
        );
        arrived += i.arr_valid_i.iter().filter(|&&v| v).count() as u64;
        freed += o.crd_o as u64;
        let now: u64 = held.iter().map(|h| h.len() as u64).sum();
        prop_assert_eq!(arrived, freed + now, "cycle {}: a credit lost or made", t);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(128)))]

    #[test]
    fn model_matches_reference_resequencer(
        stim in proptest::sample::select(StxEgress::variants())
            .prop_flat_map(|p| testbenches::stimulus_strategy::<StxEgress>(&p, 500..=2000, true))
    ) {
        check_against_reference(&stim)?;
    }
}

fn fates(o: &StxEgressOutputs) -> Vec<Fate> {
    o.arr_fate_o.iter().map(|&c| Fate::from_code(c)).collect()
}

/// The deliveries: (cycle, input, seq, id).
fn deliveries(outs: &[StxEgressOutputs]) -> Vec<(usize, u8, u16, u16)> {
    outs.iter()
        .enumerate()
        .filter(|(_, o)| o.dlv_valid_o)
        .map(|(t, o)| (t, o.dlv_src_o, o.dlv_seq_o, o.dlv_id_o))
        .collect()
}

fn of_input(outs: &[StxEgressOutputs], k: u8) -> Vec<u16> {
    deliveries(outs)
        .into_iter()
        .filter(|d| d.1 == k)
        .map(|d| d.2)
        .collect()
}

fn directed(s: &Stimulus<StxEgress>, what: &str) -> Vec<StxEgressOutputs> {
    check_against_reference(s).unwrap_or_else(|e| panic!("{what}: {e}"));
    support::lockstep_or_report(s, what);
    outputs(s)
}

#[test]
fn fig2a_out_of_order_is_resequenced() {
    let outs = directed(&scenario::ooo_resequenced(), "ooo-resequenced");
    // B (seq 6) is held at cycle 6, A (seq 5) arrives at cycle 10.
    assert_eq!(fates(&outs[6])[1], Fate::OutOfOrder);
    assert!(matches!(
        fates(&outs[10])[1],
        Fate::Delivered | Fate::InOrder
    ));
    assert_eq!(of_input(&outs, 2), vec![0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(of_input(&outs, 1), (0..12).collect::<Vec<_>>());
    let last = outs.last().unwrap();
    assert_eq!(last.cnt_ooo_o, 1);
    assert_eq!(last.cnt_dlv_o, 19);
    assert_eq!((last.cnt_dup_o, last.cnt_oow_o), (0, 0));
}

#[test]
fn fig2b_duplicate_is_dropped() {
    let outs = directed(&scenario::duplicate(), "duplicate");
    assert_eq!(fates(&outs[4])[0], Fate::Delivered);
    assert_eq!(fates(&outs[8])[0], Fate::Duplicate);
    assert_eq!(fates(&outs[9])[0], Fate::Delivered);
    assert_eq!(deliveries(&outs), vec![(4, 3, 0, 0xa0), (9, 3, 1, 0xb1)]);
    assert_eq!(outs.last().unwrap().cnt_dup_o, 1);
}

#[test]
fn sequence_numbers_wrap() {
    let s = scenario::sequence_wrap();
    let outs = directed(&s, "sequence-wrap");
    scenario::wraps_in_order(&s, &outs).unwrap();
}

#[test]
fn contention_is_round_robin() {
    let s = scenario::contention();
    let outs = directed(&s, "contention");
    scenario::round_robin(&s, &outs).unwrap();
}

#[test]
fn go_back_n_drops_out_of_order() {
    let s = scenario::go_back_n();
    let outs = directed(&s, "go-back-n");
    scenario::b_dropped_then_in_order(&s, &outs).unwrap();
}

#[test]
fn illegal_scheme_is_refused() {
    let p = StxEgress::variants()[0];
    let c = model::stx_egress::StxEgressConfig {
        cfg_scheme_i: arbitrary_int::u2::new(3),
    };
    let e = StxEgress::check(&p, &c).unwrap_err();
    assert_eq!(e.field, "cfg_scheme_i");
    assert!(e.msg.contains("0..=2"), "{}", e.msg);
    for (bad, field) in [
        (model::stx_egress::StxEgressParams { n: 6, ..p }, "N"),
        (model::stx_egress::StxEgressParams { r: 5, ..p }, "R"),
        (model::stx_egress::StxEgressParams { b: 12, ..p }, "B"),
        (model::stx_egress::StxEgressParams { sw: 3, ..p }, "SW"),
        (model::stx_egress::StxEgressParams { iw: 0, ..p }, "IW"),
        (model::stx_egress::StxEgressParams { cntw: 6, ..p }, "CNTW"),
    ] {
        let e = StxEgress::check(&bad, &StxEgress::default_config(&bad)).unwrap_err();
        assert_eq!(e.field, field);
    }
}
