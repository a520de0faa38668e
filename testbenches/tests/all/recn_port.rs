//! RECN port: equivalence of golden model and RTL, model invariants, and
//! the directed scenarios of seed 002.

use crate::support;

use model::recn_port::{RecnPort, RecnPortParams};
use model::stim::{Cycle, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use testbenches::recn_port::scenario::{self, MARK_A, MARK_B};

#[test]
fn equivalence_random() {
    support::equivalence::<RecnPort>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<RecnPort>();
}

/// Steps the model through `s`, checking the spec's invariants every cycle.
fn check_invariants(s: &Stimulus<RecnPort>) -> Result<(), TestCaseError> {
    let mut m = RecnPort::new(&s.params, &s.config);
    for c in &s.cycles {
        let i = match c {
            Cycle::Reset => {
                m = RecnPort::new(&s.params, &s.config);
                continue;
            }
            Cycle::Drive(i) => i,
        };
        let o = m.step(i);
        prop_assert!(!o.in_ready_o || i.in_valid_i);
        prop_assert!(!(o.cfg_err_o && o.in_ready_o));
        m.assert_invariants();
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(32)))]
    #[test]
    fn model_invariants_hold(s in proptest::sample::select(RecnPort::variants())
        .prop_flat_map(|p| testbenches::stimulus_strategy::<RecnPort>(&p, 500..=2000, true))) {
        check_invariants(&s)?;
    }
}

/// A scenario and its documented outcome: [`support::directed`].
fn directed(
    (stim, s): (Stimulus<RecnPort>, scenario::Script),
    check: testbenches::ScenarioCheck<RecnPort>,
    what: &str,
) {
    support::directed(&stim, &s.outs, check, what);
}

#[test]
fn hotspot_saq_removes_hol_blocking() {
    directed(scenario::hotspot(), scenario::hol_removed, "hotspot");
}

#[test]
fn cam_full_drops_and_counts() {
    directed(scenario::cam_full(), scenario::drops_counted, "cam-full");
}

#[test]
fn release_after_vanish_and_drain() {
    directed(scenario::release(), scenario::released, "release");
}

#[test]
fn replicated_route_takes_one_saq_per_sl() {
    directed(
        scenario::replicated(),
        scenario::one_saq_per_sl,
        "replicated",
    );
}

#[test]
fn detection_per_sl_and_xoff() {
    directed(scenario::detect(), scenario::detected, "detect");
}

#[test]
fn each_sender_is_notified_once() {
    directed(scenario::senders(), scenario::each_sender_once, "senders");
}

#[test]
fn leaf_rule_releases_leaves_and_refuses() {
    directed(scenario::leaf(), scenario::leaf_released, "leaf");
}

#[test]
fn markers_keep_a_flow_in_order() {
    directed(scenario::marker(true), scenario::in_order, "marker");
    // Without markers the SAQ goes at once: A4 overtakes A2.
    let (_, s) = scenario::marker(false);
    let ids = scenario::left_ids(&s.outs);
    let a: Vec<u8> = ids.iter().copied().filter(|&id| id < 10).collect();
    assert_eq!(a[..2], [1, 4], "{ids:?} ({MARK_A:#x}, {MARK_B:#x})");
}

#[test]
fn an_empty_saq_passes_its_marker_on() {
    directed(
        scenario::marker_chain(),
        scenario::marker_passed_on,
        "marker-chain",
    );
}

#[test]
fn illegal_configuration_takes_nothing() {
    let p = RecnPortParams::default();
    let mut c = scenario::cfg();
    c.cfg_xon_i = c.cfg_xoff_i;
    let e = RecnPort::check(&p, &c).unwrap_err();
    assert_eq!(e.field, "cfg_xon_i");
    assert!(e.msg.contains("0..=15"), "{}", e.msg);
    let mut c = scenario::cfg();
    c.cfg_rel_thr_i = c.cfg_det_thr_i + 1;
    assert_eq!(RecnPort::check(&p, &c).unwrap_err().field, "cfg_rel_thr_i");
    let mut m = RecnPort::new(&p, &c);
    let mut i = model::recn_port::RecnPortInputs::zero(&p);
    scenario::offer(&mut i, 1, 1, 1);
    let o = m.step(&i);
    assert!(o.cfg_err_o && !o.in_ready_o);
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<RecnPort>();
}
