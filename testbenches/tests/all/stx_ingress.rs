//! STX ingress adapter: equivalence of golden model and RTL, the model
//! against a plain reference input adapter (unbounded sequence numbers,
//! queues of cells with their arrival cycles), and the directed scenarios
//! of seed 004 (Fig. 2, the STX policy).

use crate::support;

use model::stim::{Cycle, Stimulus};
use model::stx_ingress::{
    AckKind, GrantKind, Policy, Scheme, StxIngress, StxIngressConfig, StxIngressOutputs,
    StxIngressParams,
};
use model::Block;
use proptest::prelude::*;
use std::collections::VecDeque;
use testbenches::stx_ingress::scenario;

#[test]
fn equivalence_random() {
    support::equivalence::<StxIngress>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<StxIngress>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<StxIngress>();
}

/// A cell of the reference: sequence number (unbounded), id, arrival cycle.
#[derive(Clone, Copy, Debug)]
struct Cell {
    seq: u64,
    id: u16,
    arr: usize,
}

/// The reference input adapter: per VOQ a queue of cells, an RTX list
/// (cell, stale) in insertion order, the next sequence number, the grants
/// received; per VOQ the pending and outstanding requests.
#[derive(Clone, Debug, Default)]
struct Voq {
    q: VecDeque<Cell>,
    rtx: Vec<(Cell, bool)>,
    next: u64,
    grants: u64,
    pnd: u64,
    out: u64,
}

fn fresh(p: &StxIngressParams) -> Vec<Voq> {
    vec![Voq::default(); p.n]
}

/// Steps the model through `s` beside the reference, checking every cell
/// sent, every grant and ACK class, the STX choice of OCF and YCF (and that
/// the random pick is eligible), R2, the requests and the counters.
fn check_against_reference(s: &Stimulus<StxIngress>) -> Result<(), TestCaseError> {
    let p = s.params;
    let c = &s.config;
    let modulus = p.seq_mod() as u64;
    let mut m = StxIngress::new(&p, c);
    let err = StxIngress::check(&p, c).is_err();
    let scheme = Scheme::from_code(c.cfg_scheme_i);
    let policy = Policy::from_code(c.cfg_policy_i);
    let gbn = matches!(scheme, Some(Scheme::Gbn | Scheme::Saw));
    let w = if scheme == Some(Scheme::Saw) {
        1
    } else {
        c.cfg_win_i as u64
    };
    let mut v = fresh(&p);
    let mut cnt = [0u64; 4]; // stx, retx, wasted, drop
    for (t, cy) in s.cycles.iter().enumerate() {
        let i = match cy {
            Cycle::Reset => {
                m = StxIngress::new(&p, c);
                v = fresh(&p);
                cnt = [0; 4];
                continue;
            }
            Cycle::Drive(i) => i,
        };
        let o = m.step(i);
        m.assert_invariants();
        prop_assert_eq!(o.cfg_err_o, err);
        if err {
            prop_assert!(
                !o.cell_valid_o && !o.req_valid_o && o.gnt_kind_o == 0 && o.ack_kind_o == 0
            );
            prop_assert_eq!(o.arr_drop_o, i.arr_valid_i);
            cnt[3] += u64::from(i.arr_valid_i);
            continue;
        }
        // 1. ACK.
        let mut ack = AckKind::None;
        if i.ack_valid_i {
            let a = (i.ack_seq_i >> p.sw) as usize & (p.n - 1);
            let sq = (i.ack_seq_i as u64) & (modulus - 1);
            let x = &mut v[a];
            ack = match x.rtx.iter().position(|(cl, _)| cl.seq % modulus == sq) {
                None => AckKind::Unknown,
                Some(k) => {
                    let oldest = x.rtx.iter().map(|(cl, _)| cl.seq).min();
                    if !gbn || (!x.rtx[k].1 && oldest == Some(x.rtx[k].0.seq)) {
                        x.rtx.remove(k);
                        AckKind::Taken
                    } else {
                        AckKind::Void
                    }
                }
            };
        }
        prop_assert_eq!(AckKind::from_code(o.ack_kind_o), ack, "cycle {}: ACK", t);
        // 2. Grant.
        let mut sent: Option<(usize, Cell, bool)> = None;
        let mut gkind = GrantKind::None;
        if i.gnt_valid_i {
            let g = i.gnt_out_i as usize;
            let x = &mut v[g];
            let k = x.grants;
            x.grants += 1;
            x.out = x.out.saturating_sub(1);
            let oldest = (0..x.rtx.len()).min_by_key(|&e| x.rtx[e].0.seq);
            let cell = if let Some(e) = oldest {
                let (cl, _) = x.rtx.remove(e);
                if gbn {
                    x.rtx.iter_mut().for_each(|r| r.1 = true);
                }
                Some((cl, true))
            } else {
                let h = x.q.pop_front();
                if h.is_some() {
                    x.next += 1;
                }
                h.map(|cl| (cl, false))
            };
            gkind = match cell {
                None => {
                    cnt[2] += 1;
                    GrantKind::Wasted
                }
                Some((cl, retx)) => {
                    cnt[1] += u64::from(retx);
                    sent = Some((g, cl, retx));
                    if cl.seq % modulus == k % modulus {
                        GrantKind::Regular
                    } else {
                        GrantKind::Spurious
                    }
                }
            };
        }
        prop_assert_eq!(
            GrantKind::from_code(o.gnt_kind_o),
            gkind,
            "cycle {}: grant",
            t
        );
        // 3. Arrival.
        let mut acc = None;
        if i.arr_valid_i {
            let a = i.arr_out_i as usize;
            let x = &mut v[a];
            if x.q.len() < p.q && x.pnd < p.cnt_req_max() as u64 {
                let seq = x.next + x.q.len() as u64;
                x.q.push_back(Cell {
                    seq,
                    id: i.arr_id_i,
                    arr: t,
                });
                x.pnd += 1;
                acc = Some(a);
            } else {
                cnt[3] += 1;
            }
        }
        prop_assert_eq!(
            o.arr_drop_o,
            i.arr_valid_i && acc.is_none(),
            "cycle {}: drop",
            t
        );
        // 4. STX.
        let elig: Vec<usize> = (0..p.n)
            .filter(|&j| {
                let x = &v[j];
                let head = x.next;
                !x.q.is_empty()
                    && x.rtx.len() < p.rtt
                    && x.rtx
                        .iter()
                        .map(|(cl, _)| cl.seq)
                        .min()
                        .is_none_or(|u| head - u < w)
            })
            .collect();
        if sent.is_none() && c.cfg_stx_en_i && !elig.is_empty() {
            let arr = |j: usize| v[j].q[0].arr;
            prop_assert!(
                o.spec_valid_o,
                "cycle {}: eligible {:?} but no STX",
                t,
                elig
            );
            let j = o.spec_out_o as usize;
            prop_assert!(elig.contains(&j), "cycle {}: STX of ineligible {}", t, j);
            match policy {
                Some(Policy::Ocf) => {
                    let best = elig.iter().map(|&k| arr(k)).min();
                    prop_assert_eq!(Some(arr(j)), best, "cycle {}: OCF", t);
                }
                Some(Policy::Ycf) => {
                    let best = elig.iter().map(|&k| arr(k)).max();
                    prop_assert_eq!(Some(arr(j)), best, "cycle {}: YCF", t);
                }
                _ => {}
            }
            let x = &mut v[j];
            let cl = x.q.pop_front().expect("eligible");
            x.rtx.push((cl, false));
            x.next += 1;
            cnt[0] += 1;
            prop_assert_eq!(
                o.spec_seq_o,
                ((j as u16) << p.sw) | (cl.seq % modulus) as u16
            );
            prop_assert!(o.cell_spec_o && !o.cell_retx_o);
            prop_assert_eq!(
                (o.cell_out_o as usize, o.cell_seq_o as u64, o.cell_id_o),
                (j, cl.seq % modulus, cl.id)
            );
        } else {
            prop_assert!(
                !o.spec_valid_o && !o.cell_spec_o,
                "cycle {}: unexpected STX",
                t
            );
            if let Some((g, cl, retx)) = sent {
                prop_assert!(o.cell_valid_o);
                prop_assert_eq!(o.cell_retx_o, retx);
                prop_assert_eq!(
                    (o.cell_out_o as usize, o.cell_seq_o as u64, o.cell_id_o),
                    (g, cl.seq % modulus, cl.id),
                    "cycle {}: grant's cell",
                    t
                );
            } else {
                prop_assert!(!o.cell_valid_o);
            }
        }
        // 6. Requests: one VOQ below the limit with a pending request, when any.
        let want: Vec<usize> = (0..p.n)
            .filter(|&j| v[j].pnd > 0 && v[j].out < c.cfg_req_lim_i as u64)
            .collect();
        prop_assert_eq!(o.req_valid_o, !want.is_empty(), "cycle {}: request", t);
        if o.req_valid_o {
            let j = o.req_out_o as usize;
            prop_assert!(want.contains(&j));
            v[j].pnd -= 1;
            v[j].out += 1;
        }
        // Counters and per-VOQ state.
        let max = p.cnt_max();
        let st = m.state();
        let got = [st.cnt_stx_q, st.cnt_retx_q, st.cnt_wasted_q, st.cnt_drop_q];
        for (g, k) in got.iter().zip(&cnt) {
            prop_assert_eq!(*g as u64, (*k).min(max), "cycle {}: counters", t);
        }
        for (j, x) in v.iter().enumerate() {
            prop_assert_eq!(m.voq_len(j), x.q.len());
            prop_assert_eq!(m.rtx_len(j), x.rtx.len());
            prop_assert_eq!(m.snd(j) as u64, x.next % modulus);
            prop_assert_eq!(m.pending(j) as u64, x.pnd);
            prop_assert_eq!(m.outstanding(j) as u64, x.out);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(128)))]

    #[test]
    fn model_matches_reference_adapter(
        stim in proptest::sample::select(StxIngress::variants())
            .prop_flat_map(|p| testbenches::stimulus_strategy::<StxIngress>(&p, 500..=2000, true))
    ) {
        check_against_reference(&stim)?;
    }
}

fn directed(s: &Stimulus<StxIngress>, what: &str) -> Vec<StxIngressOutputs> {
    check_against_reference(s).unwrap_or_else(|e| panic!("{what}: {e}"));
    support::lockstep_or_report(s, what);
    let mut m = StxIngress::new(&s.params, &s.config);
    s.cycles
        .iter()
        .map(|c| match c {
            Cycle::Drive(i) => m.step(i),
            Cycle::Reset => unreachable!("no reset in the scenarios"),
        })
        .collect()
}

#[test]
fn every_scenario_checks_out() {
    for sc in <StxIngress as testbenches::Bench>::scenarios() {
        let s = (sc.build)();
        let outs = directed(&s, sc.name);
        let check = sc.check.expect("every scenario has a check");
        check(&s, &outs).unwrap_or_else(|e| panic!("{}: {e}", sc.name));
    }
}

#[test]
fn scenario_checks_fail_on_wrong_outcomes() {
    // A check must be able to fail: each scenario's check refuses the
    // outputs of another scenario.
    let scs = <StxIngress as testbenches::Bench>::scenarios();
    for (k, sc) in scs.iter().enumerate() {
        let other = &scs[(k + 1) % scs.len()];
        let s = (other.build)();
        let outs = directed(&s, other.name);
        let check = sc.check.expect("check");
        assert!(
            check(&(sc.build)(), &outs).is_err(),
            "{}'s check accepts {}'s outputs",
            sc.name,
            other.name
        );
    }
}

#[test]
fn fig2a_counts() {
    let outs = directed(&scenario::fig2a(), "fig2a");
    assert_eq!(GrantKind::from_code(outs[8].gnt_kind_o), GrantKind::Regular);
    assert_eq!(outs[9].rtx_cnt_o[1], 1, "B waits for its ACK");
    assert_eq!(outs[11].rtx_cnt_o[1], 0);
    assert_eq!(outs[11].out_cnt_o[1], 0, "two requests, two grants");
}

#[test]
fn saw_sends_one_at_a_time() {
    let p = StxIngressParams::default();
    let c = StxIngressConfig {
        cfg_scheme_i: Scheme::Saw.code(),
        ..StxIngress::default_config(&p)
    };
    let s = scenario::build(c, 14, 0x51, |t| scenario::Ev {
        arr: (t < 3).then_some((1, t as u16)),
        ack: (t == 8).then_some((1, 0)),
        ..Default::default()
    });
    let outs = directed(&s, "saw");
    let spec: Vec<usize> = (0..14).filter(|&t| outs[t].spec_valid_o).collect();
    assert_eq!(
        spec,
        vec![0, 8],
        "one outstanding: the second leaves with the first's ACK"
    );
    assert_eq!(outs[8].cell_seq_o, 1);
}

#[test]
fn illegal_configurations_are_refused() {
    let p = StxIngressParams::default();
    let d = StxIngress::default_config(&p);
    for (bad, field) in [
        (
            StxIngressConfig {
                cfg_policy_i: arbitrary_int::u2::new(3),
                ..d.clone()
            },
            "cfg_policy_i",
        ),
        (
            StxIngressConfig {
                cfg_scheme_i: arbitrary_int::u2::new(3),
                ..d.clone()
            },
            "cfg_scheme_i",
        ),
        (
            StxIngressConfig {
                cfg_win_i: 0,
                ..d.clone()
            },
            "cfg_win_i",
        ),
        (
            StxIngressConfig {
                cfg_win_i: 129,
                ..d.clone()
            },
            "cfg_win_i",
        ),
        (
            StxIngressConfig {
                cfg_req_lim_i: 0,
                ..d.clone()
            },
            "cfg_req_lim_i",
        ),
    ] {
        let e = StxIngress::check(&p, &bad).unwrap_err();
        assert_eq!(e.field, field);
        let s = scenario::build(bad, 6, 0x52, |t| scenario::Ev {
            arr: Some((t as u8 % 8, 1)),
            gnt: Some(0),
            ack: Some((0, 0)),
        });
        let outs = directed(&s, field);
        assert!(outs
            .iter()
            .all(|o| o.cfg_err_o && o.arr_drop_o && !o.cell_valid_o && !o.req_valid_o));
        assert_eq!(outs.last().unwrap().cnt_drop_o, 5);
    }
    assert!(StxIngress::check(
        &p,
        &StxIngressConfig {
            cfg_win_i: 128,
            ..d.clone()
        }
    )
    .is_ok());
    for (bad, field) in [
        (StxIngressParams { n: 6, ..p }, "N"),
        (StxIngressParams { q: 3, ..p }, "Q"),
        (StxIngressParams { rtt: 0, ..p }, "RTT"),
        (StxIngressParams { sw: 14, ..p }, "SW"),
        (StxIngressParams { iw: 0, ..p }, "IW"),
        (StxIngressParams { cw: 1, ..p }, "CW"),
        (StxIngressParams { cntw: 3, ..p }, "CNTW"),
    ] {
        let e = StxIngress::check(&bad, &StxIngress::default_config(&bad)).unwrap_err();
        assert_eq!(e.field, field);
    }
}
