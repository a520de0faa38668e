//! RECN port: equivalence of golden model and RTL, model invariants, and
//! the directed scenarios of seed 002.

mod support;

use model::recn_port::{Act, RecnPort, RecnPortOutputs, RecnPortParams};
use model::stim::{Cycle, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use testbenches::recn_port::scenario::{
    self, COLD_ROUTE, COLD_SL, HOT, HOT_ROUTE, HOT_SL, MARK_A, MARK_B, SENDERS_ROUTE,
};

#[test]
fn equivalence_random() {
    support::equivalence::<RecnPort>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<RecnPort>();
}

fn act(o: &RecnPortOutputs) -> Act {
    Act::from_code(o.ntf_act_o)
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

#[test]
fn hotspot_saq_removes_hol_blocking() {
    let (stim, s) = scenario::hotspot();
    let o = &s.outs;
    let p = RecnPortParams::default();
    assert_eq!(act(&o[100]), Act::Alloc);
    assert_eq!(o[100].ntf_line_o, 2, "the first line of VC1");
    assert!(o[101].cam_valid_o[2] && o[101].cam_route_o[2] == HOT_ROUTE);
    // Before: cold packets wait behind hot ones (one hot packet per 8
    // cycles lets one cold one through); after: the cold flow goes at the
    // rate it is offered.
    let cold_before = scenario::left(o, false, 0, 100);
    // (The hot packets that were in the detection queue before the
    // allocation still go one per 8 cycles; they are gone by cycle 900.)
    let cold_after = scenario::left(o, false, 1000, 1100);
    assert!(cold_before <= 20, "cold before {cold_before}");
    assert!(cold_after >= 45, "cold after {cold_after}");
    // Hot packets enter the SAQ after the allocation.
    let saq = p.line_queue(2);
    assert!(o[200..]
        .iter()
        .any(|o| o.in_ready_o && o.in_queue_o as usize == saq));
    assert!(o[200..].iter().all(|o| !o.in_ready_o
        || o.in_queue_o as usize == saq
        || o.in_queue_o as usize == p.qv() + (COLD_ROUTE as usize & 3)));
    // The hot point still gets its share.
    let hot_after = scenario::left(o, true, 1000, 1100);
    assert!((10..=14).contains(&hot_after), "hot after {hot_after}");
    // Every packet leaves with the SL it was offered with: the hot flow's
    // SL 5, the cold flow's SL 4 (one detection queue holds both).
    let mut left = [0usize; 2];
    for o in o.iter().filter(|o| o.out_valid_o) {
        let hot = o.out_id_o & HOT != 0;
        let want = if hot { HOT_SL } else { COLD_SL };
        assert_eq!(o.out_sl_o.value(), want, "packet {:#x}", o.out_id_o);
        left[usize::from(hot)] += 1;
    }
    assert!(left[0] > 100 && left[1] > 100, "{left:?}");
    support::lockstep_or_report(&stim, "hotspot");
}

#[test]
fn cam_full_drops_and_counts() {
    let (stim, s) = scenario::cam_full();
    let o = &s.outs;
    assert_eq!(act(&o[5]), Act::Alloc);
    assert_eq!(act(&o[10]), Act::Alloc);
    assert_eq!((act(&o[15]), o[16].drop_cnt_o), (Act::Drop, 1));
    assert_eq!((act(&o[20]), o[20].ntf_line_o), (Act::Refresh, 3));
    assert_eq!((act(&o[25]), o[25].ntf_line_o), (Act::Alloc, 0));
    // The dropped point's packets stay in their detection queue.
    assert_eq!(o[30].in_queue_o, 6 + 3);
    assert_eq!(o[31].in_queue_o, 4, "VC0's first SAQ");
    support::lockstep_or_report(&stim, "cam-full");
}

#[test]
fn release_after_vanish_and_drain() {
    let (stim, s) = scenario::release();
    let o = &s.outs;
    let p = RecnPortParams::default();
    let saq = p.line_queue(2);
    assert_eq!(act(&o[2]), Act::Alloc);
    assert!(o[5].in_queue_o as usize == saq);
    // 8 cells: the SAQ detects congestion and notifies upstream.
    let up = o.iter().position(|o| o.up_valid_o).unwrap();
    assert_eq!(up, 12);
    assert!(!o[up].up_kind_o && o[up].up_route_o == 2 && o[up].up_sl_o.value() == 6);
    assert_eq!(act(&o[30]), Act::Gone);
    assert!(o[31].cam_gone_o[2]);
    let van = o.iter().rposition(|o| o.up_valid_o).unwrap();
    assert!(o[van].up_kind_o && o[van].up_hops_o == 1);
    let rel = o.iter().position(|o| o.rel_o[2]).expect("released");
    assert!(
        rel >= van && rel == 40 + 11,
        "released at {rel}, vanish at {van}"
    );
    assert!(!o[rel + 1].cam_valid_o[2] && o[rel + 1].cam_route_o[2] == 0);
    assert_eq!(
        o[100].in_queue_o as usize,
        p.qv() + 2,
        "back to the detection queue"
    );
    support::lockstep_or_report(&stim, "release");
}

#[test]
fn replicated_route_takes_one_saq_per_sl() {
    let (stim, s) = scenario::replicated();
    let o = &s.outs;
    let p = RecnPortParams::default();
    assert_eq!((act(&o[1]), o[1].ntf_line_o), (Act::Alloc, 2));
    assert_eq!((act(&o[2]), o[2].ntf_line_o), (Act::Alloc, 3));
    assert_eq!(o[5].in_queue_o as usize, p.line_queue(2));
    assert_eq!(o[6].in_queue_o as usize, p.line_queue(3));
    assert_eq!(o[7].in_queue_o as usize, p.qv() + 3);
    support::lockstep_or_report(&stim, "replicated");
}

#[test]
fn detection_per_sl_and_xoff() {
    let (stim, s) = scenario::detect();
    let o = &s.outs;
    let ups: Vec<(usize, bool, u32, u8)> = o
        .iter()
        .enumerate()
        .filter(|(_, o)| o.up_valid_o)
        .map(|(t, o)| (t, o.up_kind_o, o.up_route_o, o.up_sl_o.value()))
        .collect();
    // 8 cells at cycle 9: SL 1; cycle 10: SL 2; the SAQ (1, SL 3) at its
    // 8th cell (cycle 18); then the vanishes once drained.
    assert_eq!(ups[0], (9, false, 0, 1));
    assert_eq!(ups[1], (10, false, 0, 2));
    assert_eq!(ups[2], (18, false, 1, 3));
    assert_eq!(ups.len(), 6, "{ups:?}");
    assert!(ups[3..].iter().all(|u| u.1));
    let xoff = o.iter().position(|o| o.xoff_o[0]).unwrap();
    assert_eq!(xoff, 27, "16 cells at the end of cycle 26");
    let xon = (xoff..o.len()).find(|&t| !o[t].xoff_o[0]).unwrap();
    assert_eq!(o[xon].occ_o[4], 4);
    support::lockstep_or_report(&stim, "detect");
}

/// The notifications of a scenario: (cycle, vanish, route, hops, SL, sender).
fn ups(o: &[RecnPortOutputs]) -> Vec<(usize, bool, u32, u8, u8, u8)> {
    o.iter()
        .enumerate()
        .filter(|(_, o)| o.up_valid_o)
        .map(|(t, o)| {
            (
                t,
                o.up_kind_o,
                o.up_route_o,
                o.up_hops_o,
                o.up_sl_o.value(),
                o.up_dst_o,
            )
        })
        .collect()
}

#[test]
fn each_sender_is_notified_once() {
    let (stim, s) = scenario::senders();
    let u = ups(&s.outs);
    // The detection queue's 8th cell (cycle 8, sender 2), then sender 1's
    // next packet; the SAQ's 8th cell (cycle 38, sender 2), then sender 1.
    assert_eq!(u[0], (8, false, 2, 1, 5, 2));
    assert_eq!(u[1], (9, false, 2, 1, 5, 1));
    assert_eq!(u[2], (38, false, SENDERS_ROUTE, 2, 5, 2));
    assert_eq!(u[3], (39, false, SENDERS_ROUTE, 2, 5, 1));
    // Drained (the SAQ, with fewer packets, first): one vanish per (queue,
    // sender), lowest sender first.
    let v: Vec<_> = u[4..].iter().map(|x| (x.1, x.2, x.3, x.5)).collect();
    assert_eq!(
        v,
        vec![
            (true, SENDERS_ROUTE, 2, 1),
            (true, SENDERS_ROUTE, 2, 2),
            (true, 2, 1, 1),
            (true, 2, 1, 2)
        ]
    );
    support::lockstep_or_report(&stim, "senders");
}

#[test]
fn leaf_rule_releases_leaves_and_refuses() {
    let (stim, s) = scenario::leaf();
    let o = &s.outs;
    let p = RecnPortParams::default();
    assert_eq!((act(&o[1]), o[1].ntf_line_o), (Act::Alloc, 2));
    let u = ups(o);
    assert_eq!(
        u,
        vec![(9, false, 2, 1, 6, 0)],
        "one notification, no vanish"
    );
    // Drained by cycle 60 but not a leaf: still there.
    assert_eq!(o[60].occ_o[p.line_queue(2)], 0);
    assert!(o[69].cam_valid_o[2] && o[69].cam_up_o[2] == 1);
    assert!(o[60..70].iter().all(|o| !o.dn_valid_o && !o.rel_o[2]));
    // The release message makes it a leaf: released at once, told downstream.
    assert!(o[70].rls_hit_o && o[70].rel_o[2]);
    let dn = |o: &RecnPortOutputs| (o.dn_valid_o, o.dn_route_o, o.dn_hops_o, o.dn_sl_o.value());
    assert_eq!(dn(&o[70]), (true, 2, 1, 6));
    assert!(!o[71].cam_valid_o[2]);
    // Refusals: a full VC1, a bad hop count.
    assert_eq!(act(&o[82]), Act::Drop);
    assert_eq!(dn(&o[82]), (true, 0, 1, 5));
    assert_eq!(act(&o[83]), Act::Ignore);
    assert_eq!(dn(&o[83]), (true, 2, 0, 5));
    // The emptied (1, 1 hop) line waits one cycle behind a refusal.
    assert!(o[100].out_valid_o && act(&o[100]) == Act::Drop);
    assert_eq!(dn(&o[100]), (true, 0, 1, 5));
    assert!(!o[100].rel_o[2] && o[101].rel_o[2]);
    assert_eq!(dn(&o[101]), (true, 1, 1, 5));
    // A line that never held a packet goes for its age: valid from 82,
    // released at 82 + 20.
    assert!(o[101].cam_valid_o[3] && !o[101].cam_hold_o[3]);
    assert!(!o[101].rel_o[3] && o[102].rel_o[3]);
    assert_eq!(dn(&o[102]), (true, 3, 1, 5));
    assert_eq!(o.iter().filter(|o| o.dn_valid_o).count(), 6);
    support::lockstep_or_report(&stim, "leaf");
}

#[test]
fn markers_keep_a_flow_in_order() {
    let ids = |s: &scenario::Script| -> Vec<u8> {
        s.outs
            .iter()
            .filter(|o| o.out_valid_o)
            .map(|o| o.out_id_o)
            .collect()
    };
    let (stim, s) = scenario::marker(true);
    let o = &s.outs;
    assert!(o[11].cam_mark_o[2], "the marker is set at the allocation");
    assert_eq!(
        ids(&s),
        vec![1, 11, 2, 12, 3, 13, 4, 5, 6],
        "{MARK_A:#x} in order, {MARK_B:#x} ahead of the SAQ"
    );
    // The marker goes with B3, the last cell queued before the allocation.
    let last = o
        .iter()
        .position(|o| o.out_valid_o && o.out_id_o == 13)
        .unwrap();
    assert!(o[last].cam_mark_o[2] && !o[last + 1].cam_mark_o[2]);
    support::lockstep_or_report(&stim, "marker");
    // Without markers the SAQ goes at once: A4 overtakes A2.
    let (_, s) = scenario::marker(false);
    let a: Vec<u8> = ids(&s).into_iter().filter(|&id| id < 10).collect();
    assert_eq!(a[..2], [1, 4], "{:?}", ids(&s));
}

#[test]
fn an_empty_saq_passes_its_marker_on() {
    let (stim, s) = scenario::marker_chain();
    let o = &s.outs;
    let p = RecnPortParams::default();
    assert_eq!((act(&o[10]), o[10].ntf_line_o), (Act::Alloc, 2));
    assert_eq!((act(&o[11]), o[11].ntf_line_o), (Act::Alloc, 3));
    assert!(o[12].cam_mark_o[2] && o[12].cam_mark_o[3]);
    assert_eq!(o[15].occ_o[p.line_queue(3)], 3, "A4..A6 in the 3-hop SAQ");
    let ids: Vec<u8> = o
        .iter()
        .filter(|o| o.out_valid_o)
        .map(|o| o.out_id_o)
        .collect();
    assert_eq!(ids, vec![1, 11, 2, 12, 3, 13, 4, 5, 6]);
    support::lockstep_or_report(&stim, "marker-chain");
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
