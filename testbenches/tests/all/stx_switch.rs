//! STX switch: equivalence of the golden model (a composition of the
//! adapters' and the arbiter's models) and the RTL top level; every
//! accepted cell delivered exactly once and in order per (input, output),
//! with the same delay statistics on both sides; the directed scenarios of
//! seed 004 (Fig. 2) through the switch; the switch on the arbiter's RTL.

use crate::support;

use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::arbiter::{Arbiter, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use model::stim::{Cycle, Stimulus};
use model::stx_egress::Scheme;
use model::stx_switch::{
    DelayStats, Ledger, StxSwitch, StxSwitchInputs, StxSwitchOutputs, StxSwitchParams, Switch,
    SwitchArbiter,
};
use model::{Block, PortGroup};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use testbenches::stx_switch::scenario;
use testbenches::Bench;

#[test]
fn equivalence_random() {
    support::equivalence::<StxSwitch>(support::cases(256), 600..=900, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<StxSwitch>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<StxSwitch>();
}

/// The drive cycles of `s` (resets left out; the output links as the
/// generator drives them, stalled for long periods in some phases), then
/// idle with every link ready until the model has delivered everything,
/// plus `4 RTT`.
fn deliverable(s: &Stimulus<StxSwitch>) -> Vec<StxSwitchInputs> {
    let p = s.params;
    let mut v: Vec<StxSwitchInputs> = s
        .cycles
        .iter()
        .filter_map(|c| match c {
            Cycle::Drive(i) => Some(i.clone()),
            Cycle::Reset => None,
        })
        .collect();
    let mut m = StxSwitch::new(&p, &s.config);
    let mut l = Ledger::new(p.n, p.sw);
    for (t, i) in v.iter().enumerate() {
        let o = m.step(i);
        l.book(t as u64, i, &o).unwrap();
    }
    let mut idle = StxSwitchInputs::zero(&p);
    idle.dlv_ready_i.iter_mut().for_each(|r| *r = true);
    let mut extra = 0;
    while (l.owed() > 0 || extra < 4 * p.rtt) && v.len() < s.cycles.len() + 20_000 {
        let o = m.step(&idle);
        l.book(v.len() as u64, &idle, &o).unwrap();
        v.push(idle.clone());
        if l.owed() == 0 {
            extra += 1;
        }
    }
    v
}

/// Books every cycle of `outs` (driven by `ins`) in a ledger: every
/// delivery is the next owed cell of its flow; at the end nothing is owed.
fn ledger(
    p: &StxSwitchParams,
    ins: &[StxSwitchInputs],
    outs: &[StxSwitchOutputs],
) -> Result<DelayStats, String> {
    let mut l = Ledger::new(p.n, p.sw);
    for (t, (i, o)) in ins.iter().zip(outs).enumerate() {
        l.book(t as u64, i, o)?;
    }
    if l.owed() > 0 {
        return Err(format!("{} accepted cells never delivered", l.owed()));
    }
    Ok(l.stats)
}

/// The inputs of a directed scenario, cycle by cycle (scenarios have no
/// resets).
fn drives(s: &Stimulus<StxSwitch>) -> Vec<StxSwitchInputs> {
    s.cycles
        .iter()
        .map(|c| match c {
            Cycle::Drive(i) => i.clone(),
            Cycle::Reset => unreachable!("a scenario with a reset"),
        })
        .collect()
}

fn run_model(s: &Stimulus<StxSwitch>, ins: &[StxSwitchInputs]) -> Vec<StxSwitchOutputs> {
    let mut m = StxSwitch::new(&s.params, &s.config);
    ins.iter().map(|i| m.step(i)).collect()
}

fn run_rtl(s: &Stimulus<StxSwitch>, ins: &[StxSwitchInputs]) -> Vec<StxSwitchOutputs> {
    let mut r = Rtl::<StxSwitch>::new(&s.params, &s.config, s.seed, None).unwrap();
    r.reset(POWER_ON_RESET as usize).unwrap();
    ins.iter()
        .enumerate()
        .map(|(t, i)| r.step(i).unwrap_or_else(|e| panic!("cycle {t}: {e:#}")))
        .collect()
}

/// Every accepted cell is delivered exactly once and in order per (input,
/// output), by the model and by the RTL, and the delay statistics
/// (count, sum, minimum, maximum, histogram) are identical. Legal
/// configurations, the generator's traffic (storms, bursts, window fill,
/// output links stalled for long periods), then a drain. No cell reaches
/// an output beyond its window (`NoLoss_A` in model and RTL; and no
/// out-of-window drop under SR).
#[test]
fn every_cell_once_in_order_same_delays_model_and_rtl() {
    let strategy = proptest::sample::select(StxSwitch::variants())
        .prop_flat_map(|p| testbenches::stimulus_strategy::<StxSwitch>(&p, 500..=800, false));
    // A fixed seed, as every other property test here, so that CI's verdict
    // is reproducible (`credit_reserve_prevents_deadlock` keeps the case an
    // unseeded run found).
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: support::cases(24),
            failure_persistence: None,
            ..Config::default()
        },
        testbenches::seeded_runner(29).new_rng(),
    );
    let stx_cells = std::cell::Cell::new(0u64);
    runner
        .run(&strategy, |s| {
            let ins = deliverable(&s);
            let m = run_model(&s, &ins);
            let r = run_rtl(&s, &ins);
            let sm = ledger(&s.params, &ins, &m).map_err(TestCaseError::fail)?;
            let sr = ledger(&s.params, &ins, &r).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&sm, &sr, "delay statistics of model and RTL");
            if s.config.cfg_scheme_i == Scheme::Sr.code() {
                let oow: u64 = m.last().unwrap().cnt_oow_o.iter().map(|&c| c as u64).sum();
                prop_assert_eq!(oow, 0, "a cell beyond an RSQ window");
            }
            stx_cells.set(
                stx_cells.get()
                    + m.last()
                        .unwrap()
                        .cnt_stx_o
                        .iter()
                        .map(|&c| c as u64)
                        .sum::<u64>(),
            );
            Ok(())
        })
        .unwrap();
    assert!(stx_cells.get() > 0);
}

/// At `C = 1` (`cfg_win_i = B - 1`) selective retry used to stall an
/// output for ever: the one credit held by an acknowledged cell waiting for
/// its flow's missing predecessor, which only a grant (needing that credit)
/// brings. This case, found by an unseeded run of the property above, left
/// 27 cells owed after 50 000 idle cycles; the arbiter now keeps one credit
/// for grants (`docs/stx_switch.md`, "Why the credits cannot deadlock").
#[test]
fn credit_reserve_prevents_deadlock() {
    let (s, ins) = deadlock_case();
    let m = run_model(&s, &ins);
    let sm = ledger(&s.params, &ins, &m).expect("the model delivers every cell");
    let acked: u64 = m.last().unwrap().cnt_stx_o.iter().map(|&c| c as u64).sum();
    assert!(sm.delivered > 100);
    // The stall needs speculative cells.
    assert!(acked > 0);
}

/// [`credit_reserve_prevents_deadlock`]'s case on the RTL at its size
/// (`N = 16`, a scale design: `make test-scale`): the same deliveries.
#[test]
#[ignore = "scale design: make test-scale"]
fn scale_credit_reserve_prevents_deadlock_in_rtl() {
    let (s, ins) = deadlock_case();
    let sm = ledger(&s.params, &ins, &run_model(&s, &ins)).unwrap();
    let r = run_rtl(&s, &ins);
    assert_eq!(
        ledger(&s.params, &ins, &r),
        Ok(sm),
        "the RTL delivers the same"
    );
}

/// The `N = 16` case of [`credit_reserve_prevents_deadlock`], drained.
fn deadlock_case() -> (Stimulus<StxSwitch>, Vec<StxSwitchInputs>) {
    let p = StxSwitchParams::n16();
    let c = model::stx_switch::StxSwitchConfig {
        cfg_recv_i: 2,
        cfg_iter_i: 1,
        cfg_stx_en_i: true,
        cfg_policy_i: arbitrary_int::u2::new(2),
        cfg_scheme_i: Scheme::Sr.code(),
        cfg_win_i: (p.b - 1) as u16,
        cfg_req_lim_i: 3,
    };
    let s = testbenches::explicit(&testbenches::generated::<StxSwitch>(
        &p,
        &c,
        394147246114014257,
        712,
    ))
    .unwrap();
    let ins = deliverable(&s);
    (s, ins)
}

/// Lockstep at `N = 16` (a scale design, `make test-scale`): generated
/// stimuli of a few seeds, each on a legal random configuration.
#[test]
#[ignore = "scale design: make test-scale"]
fn scale_equivalence_n16() {
    let p = StxSwitchParams::n16();
    for seed in 1..=4 {
        let s = testbenches::generate::<StxSwitch>(&p, seed, 3000, None);
        support::lockstep_or_report(&s, &format!("stx_switch N = 16, seed {seed}"));
    }
}

/// The ledger catches a lost cell, a second copy and an order swap.
#[test]
fn the_ledger_refuses_wrong_deliveries() {
    let s = scenario::fig2a();
    let ins = drives(&s);
    let good = run_model(&s, &ins);
    assert!(ledger(&s.params, &ins, &good).is_ok());
    let d: Vec<usize> = (0..good.len())
        .filter(|&t| good[t].dlv_valid_o[3])
        .collect();
    assert_eq!(d.len(), 3);
    // Lost: the last delivery removed.
    let mut lost = good.clone();
    lost[d[2]].dlv_valid_o[3] = false;
    assert!(ledger(&s.params, &ins, &lost)
        .unwrap_err()
        .contains("never delivered"));
    // Twice: a delivery repeated in the next cycle.
    let mut twice = good.clone();
    twice[d[2] + 1].dlv_valid_o[3] = true;
    twice[d[2] + 1].dlv_src_o[3] = good[d[2]].dlv_src_o[3];
    twice[d[2] + 1].dlv_seq_o[3] = good[d[2]].dlv_seq_o[3];
    twice[d[2] + 1].dlv_id_o[3] = good[d[2]].dlv_id_o[3];
    assert!(ledger(&s.params, &ins, &twice).is_err());
    // Swapped: input 0's two cells in the other order.
    let a: Vec<usize> = d
        .iter()
        .copied()
        .filter(|&t| good[t].dlv_src_o[3] == 1)
        .collect();
    let mut swapped = good.clone();
    for (x, y) in [(a[0], a[1]), (a[1], a[0])] {
        swapped[x].dlv_seq_o[3] = good[y].dlv_seq_o[3];
        swapped[x].dlv_id_o[3] = good[y].dlv_id_o[3];
    }
    assert!(ledger(&s.params, &ins, &swapped).is_err());
}

#[test]
fn every_scenario_checks_out_on_the_model() {
    for sc in <StxSwitch as Bench>::scenarios() {
        let s = (sc.build)();
        let ins = drives(&s);
        let o = run_model(&s, &ins);
        (sc.check.unwrap())(&s, &o).unwrap_or_else(|e| panic!("{}: {e}", sc.name));
        ledger(&s.params, &ins, &o).unwrap_or_else(|e| panic!("{}: {e}", sc.name));
    }
}

#[test]
fn scenario_checks_fail_on_wrong_outcomes() {
    let sc = <StxSwitch as Bench>::scenarios();
    for a in &sc {
        for b in &sc {
            if a.name == b.name {
                continue;
            }
            let s = (b.build)();
            let ins = drives(&s);
            let o = run_model(&s, &ins);
            assert!(
                (a.check.unwrap())(&(a.build)(), &o).is_err(),
                "{}'s check accepts {}'s outputs",
                a.name,
                b.name
            );
        }
    }
}

#[test]
fn illegal_configurations_are_refused_and_flagged() {
    let p = StxSwitchParams::default();
    let good = StxSwitch::default_config(&p);
    assert!(StxSwitch::check(&p, &good).is_ok());
    type Edit = Box<dyn Fn(&mut model::stx_switch::StxSwitchConfig)>;
    let cases: Vec<(&str, Edit, bool)> = vec![
        ("cfg_recv_i", Box::new(|c| c.cfg_recv_i = 0), true),
        ("cfg_recv_i", Box::new(|c| c.cfg_recv_i = 3), true),
        ("cfg_iter_i", Box::new(|c| c.cfg_iter_i = 9), true),
        (
            "cfg_scheme_i",
            Box::new(|c| c.cfg_scheme_i = arbitrary_int::u2::new(3)),
            true,
        ),
        (
            "cfg_policy_i",
            Box::new(|c| c.cfg_policy_i = arbitrary_int::u2::new(3)),
            true,
        ),
        ("cfg_win_i", Box::new(|c| c.cfg_win_i = 0), true),
        // A window of B or more leaves no credit: the arbiter sees
        // cfg_recv_i = 0 and flags it (docs/stx_switch.md).
        ("cfg_win_i", Box::new(|c| c.cfg_win_i = 16), true),
        ("cfg_win_i", Box::new(|c| c.cfg_win_i = 17), true),
        ("cfg_req_lim_i", Box::new(|c| c.cfg_req_lim_i = 0), true),
    ];
    for (field, f, flagged) in cases {
        let mut c = good.clone();
        f(&mut c);
        let e = StxSwitch::check(&p, &c).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        let mut m = StxSwitch::new(&p, &c);
        let o = m.step(&StxSwitchInputs::zero(&p));
        assert_eq!(o.cfg_err_o, flagged, "{field}");
    }
    // The duplicate rule: RTT <= 2^(SW-1).
    let mut bad = p;
    bad.b = 8;
    bad.sw = 4;
    bad.rtt = 10;
    let c = StxSwitch::default_config(&bad);
    let e = StxSwitch::check(&bad, &c).unwrap_err();
    assert_eq!(e.field, "RTT", "{e}");
    assert!(e.to_string().contains("RTT <= 2^(SW-1)"), "{e}");
    bad.rtt = 8;
    assert!(StxSwitch::check(&bad, &StxSwitch::default_config(&bad)).is_ok());
    // Parts whose credits break C + w <= B are refused, naming the rule.
    let mut parts = p.parts(&good);
    parts.arbiter.1.cfg_crd_i += 1;
    let arb = Arbiter::new(&parts.arbiter.0, &parts.arbiter.1);
    let Err(e) = Switch::from_parts(&parts, arb) else {
        panic!("refused")
    };
    assert_eq!(e.field, "cfg_crd_i");
    assert!(e.to_string().contains("C + w <= B"), "{e}");
    parts.arbiter.1.cfg_crd_i = 0;
    let arb = Arbiter::new(&parts.arbiter.0, &parts.arbiter.1);
    assert!(Switch::from_parts(&parts, arb).is_err());
}

/// Storms onto outputs 1 and 5, whose links are stalled for 200 of every
/// 260 cycles (the other links stall now and then), at every verilated
/// size, 1600 cycles: the inputs of the test below.
fn stalled_storm(p: &StxSwitchParams, seed: u64) -> Vec<StxSwitchInputs> {
    let mut r = testbenches::rng::Rng::new(seed, 0x57a1);
    let mut ids = vec![0u16; p.n];
    (0..1600u64)
        .map(|t| {
            let mut i = StxSwitchInputs::zero(p);
            for (k, id) in ids.iter_mut().enumerate() {
                if r.chance(0.6) {
                    i.arr_valid_i[k] = true;
                    i.arr_out_i[k] = if r.chance(0.8) {
                        [1u8, 5][r.below(2) as usize] % p.n as u8
                    } else {
                        r.below(p.n as u64) as u8
                    };
                    i.arr_id_i[k] = *id;
                    *id = (*id + 1) & ((1 << p.iw) - 1);
                }
            }
            for j in 0..p.n {
                i.dlv_ready_i[j] = if j == 1 || j == 5 % p.n {
                    t % 260 >= 200
                } else {
                    !r.chance(0.05)
                };
            }
            i
        })
        .collect()
}

/// Flow control with output links stalled for long periods, at every
/// verilated size, under SR and GBN: model and RTL agree cycle by
/// cycle, no cell reaches an output beyond its window (`NoLoss_A` on both
/// sides), and after a drain every accepted cell has been delivered once
/// and in order (model and RTL). The same inputs without flow control
/// (the arbiter's credits off, model) drop cells beyond the window: the
/// losses this test would see without the credits.
#[test]
fn stalled_outputs_lose_nothing() {
    for p in StxSwitch::variants() {
        for scheme in [Scheme::Sr, Scheme::Gbn] {
            let mut c = StxSwitch::default_config(&p);
            c.cfg_scheme_i = scheme.code();
            StxSwitch::check(&p, &c).unwrap();
            let mut ins = stalled_storm(&p, p.n as u64);
            let mut idle = StxSwitchInputs::zero(&p);
            idle.dlv_ready_i.iter_mut().for_each(|r| *r = true);
            ins.extend(std::iter::repeat_n(idle, 3000));
            let s = Stimulus {
                params: p,
                config: c.clone(),
                cycles: ins.iter().cloned().map(Cycle::Drive).collect(),
                seed: 0x57a1,
                generated: None,
            };
            support::lockstep_or_report(&s, &format!("stalled outputs {p:?} {scheme:?}"));
            // The RTL's outputs are the model's (lockstep above).
            let m = run_model(&s, &ins);
            let sm = ledger(&p, &ins, &m).unwrap_or_else(|e| panic!("{p:?}: {e}"));
            // Enough traffic to matter: 749 cells at N = 4.
            assert!(
                sm.delivered > 150 * p.n as u64,
                "{p:?}: {} cells",
                sm.delivered
            );
            // Without the credits the same inputs lose cells.
            let mut parts = p.parts(&c);
            parts.arbiter.1.cfg_crd_i = 0;
            let arb = Arbiter::new(&parts.arbiter.0, &parts.arbiter.1);
            let mut bare = Switch::without_flow_control(&parts, arb).unwrap();
            let mut lost = 0u64;
            for i in &ins {
                let o = bare.step(i);
                lost = o.cnt_oow_o.iter().map(|&x| x as u64).sum();
            }
            if scheme == Scheme::Sr {
                assert!(lost > 0, "{p:?}: without credits nothing was lost");
            }
        }
    }
}

/// The verilated arbiter behind [`SwitchArbiter`].
struct RtlArb(Rtl<Arbiter>);

impl SwitchArbiter for RtlArb {
    fn step_into(&mut self, i: &ArbiterInputs, o: &mut ArbiterOutputs) {
        *o = self.0.step(i).expect("arbiter RTL");
    }
}

/// The same switch on the arbiter's RTL (variant `n8cw6k1`: one clock per
/// slot, as in the switch's RTL; wider request counters than the switch's,
/// which never saturate either way) gives the model switch's deliveries,
/// cycle by cycle.
#[test]
fn the_switch_runs_on_the_arbiter_rtl() {
    let p = StxSwitchParams::default();
    let c = StxSwitch::default_config(&p);
    let mut parts = p.parts(&c);
    parts.arbiter.0 = ArbiterParams::new(8, 6);
    let mut rtl = Rtl::<Arbiter>::new(&parts.arbiter.0, &parts.arbiter.1, 1, None).unwrap();
    rtl.reset(POWER_ON_RESET as usize).unwrap();
    let mut a = Switch::from_parts(&parts, RtlArb(rtl)).unwrap();
    let mut b = StxSwitch::new(&p, &c);
    let s = testbenches::explicit(&testbenches::generated::<StxSwitch>(&p, &c, 7, 3000)).unwrap();
    let mut delivered = 0;
    for cy in &s.cycles {
        if let Cycle::Drive(i) = cy {
            let arr: Vec<Option<(usize, u16)>> = (0..p.n)
                .map(|k| i.arr_valid_i[k].then_some((i.arr_out_i[k] as usize, i.arr_id_i[k])))
                .collect();
            a.cycle(&arr, &i.dlv_ready_i);
            b.cycle(&arr, &i.dlv_ready_i);
            for j in 0..p.n {
                assert_eq!(a.delivery(j), b.delivery(j));
                delivered += usize::from(a.delivery(j).is_some());
            }
            for k in 0..p.n {
                assert_eq!(a.dropped(k), b.dropped(k));
            }
        }
    }
    assert!(delivered > 500, "{delivered}");
}
