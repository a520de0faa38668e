//! System-level tests of the STX switch with the golden arbiter model.

use super::traffic::{Bernoulli, Script, Traffic};
use super::*;

fn system(n: usize, r: usize, rtt: u64, stx: bool, measure: (u64, u64)) -> System<ModelArbiter> {
    let mut cfg = Config::new(n, r, rtt, stx);
    cfg.measure = measure;
    cfg.trace = true;
    let (p, c) = arbiter_setup(&cfg);
    System::new(cfg, ModelArbiter::new(&p, &c))
}

#[test]
#[ignore]
fn timing_probe() {
    for &(n, l) in &[(64usize, 0.5f64), (64, 0.9)] {
        let mut s = system(n, 2, 64, true, (1000, 6000));
        let mut tr = Bernoulli::new(n, l, 1);
        let t0 = std::time::Instant::now();
        s.run(&mut tr, 6000);
        let e = t0.elapsed().as_secs_f64();
        let st = s.stats();
        println!(
            "N={n} λ={l}: {:.1} us/slot, D={:.2} thr={:.3} PS={:.3} PSs={:.3} Q={:.3} Pw={:.3} rsq={} rtx={}",
            e / 6000.0 * 1e6,
            st.mean_delay(),
            st.throughput(),
            st.p_s(),
            st.p_ss(),
            st.q(),
            st.p_w(),
            st.rsq_max,
            st.rtx_max
        );
    }
}

#[test]
fn single_cell_goes_speculatively_in_rtt() {
    let mut s = system(4, 1, 8, true, (0, 100));
    let mut tr = Script::new(&[(0, 1, 2)]);
    s.run(&mut tr, 40);
    assert!(s.is_empty());
    let d = s.deliveries();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].t, d[0].spec), (8, true));
    // the grant comes back at 2d = 8 (same slot as the ACK) and is wasted
    assert_eq!(s.stats().wasted, 1);
}

#[test]
fn single_cell_without_stx_takes_two_rtt() {
    let mut s = system(4, 1, 8, false, (0, 100));
    let mut tr = Script::new(&[(0, 1, 2)]);
    s.run(&mut tr, 40);
    let d = s.deliveries();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].t, d[0].spec), (16, false));
    assert_eq!(s.stats().regular, 1);
}

fn find(s: &System<ModelArbiter>, f: impl Fn(&Event) -> bool) -> Vec<&Event> {
    s.events().iter().filter(|e| f(e)).collect()
}

/// Fig. 2(c), wasted grant, RTT = 8 (t_{k+1} = t_k + 4): cell A arrives at
/// t0 = 0 and goes speculatively at once; its ACK reaches the input at
/// t2 = 8 and removes it; the grant of A's request, issued by the arbiter at
/// t1 = 4, reaches the input at t2 = 8 too (after the ACK) and finds the VOQ
/// empty.
#[test]
fn fig2c_wasted_grant() {
    let mut s = system(4, 1, 8, true, (0, 100));
    s.run(&mut Script::new(&[(0, 0, 1)]), 30);
    assert!(s.is_empty());
    let ev = s.events();
    assert!(ev.contains(&Event::Stx {
        t: 0,
        i: 0,
        j: 1,
        seq: 0
    }));
    assert!(ev.contains(&Event::XbarWin {
        t: 4,
        i: 0,
        j: 1,
        seq: 0
    }));
    assert!(ev.contains(&Event::Ack {
        t: 8,
        i: 0,
        j: 1,
        seq: 0
    }));
    assert!(ev.contains(&Event::Grant {
        t: 8,
        i: 0,
        j: 1,
        kind: GrantKind::Wasted,
        seq: None,
        retx: false
    }));
    assert_eq!(s.deliveries()[0].t, 8);
    assert_eq!((s.stats().wasted, s.stats().grants), (1, 1));
}

/// Fig. 2(d), spurious grant: A goes speculatively at t0 = 0 and is
/// acknowledged at t2 = 8; B arrives at t2 and is sent on A's grant (arriving
/// in the same slot): B did not wait a round trip for a grant, its delay is
/// RTT although it went arbitrated. B's own grant, at t4 = 16, is wasted.
#[test]
fn fig2d_spurious_grant() {
    let mut s = system(4, 1, 8, true, (0, 100));
    s.run(&mut Script::new(&[(0, 0, 1), (8, 0, 1)]), 40);
    assert!(s.is_empty());
    let ev = s.events();
    assert!(ev.contains(&Event::Grant {
        t: 8,
        i: 0,
        j: 1,
        kind: GrantKind::Spurious,
        seq: Some(1),
        retx: false
    }));
    assert!(ev.contains(&Event::Grant {
        t: 16,
        i: 0,
        j: 1,
        kind: GrantKind::Wasted,
        seq: None,
        retx: false
    }));
    let b = s.deliveries()[1];
    assert_eq!((b.seq, b.spec, b.t - b.arr), (1, false, 8));
    let st = s.stats();
    assert_eq!((st.spurious, st.wasted, st.regular), (1, 1, 0));
}

/// Fig. 2(b), duplicate delivery. P and Q (for output 1) arrive at 0 and 1
/// and go speculatively at once. At t0 = 8, P's grant arrives before Q's ACK
/// (9) and sends Q again (a spurious grant carrying a duplicate); the link is
/// busy, so cell A (output 0), arriving at t0 = 8, goes speculatively only at
/// t0 + 1. A's speculation succeeds and A reaches the output at t2 + 1 = 17;
/// but A's grant reaches the input at t2 = 16, before its ACK (t2 + 1): A is
/// sent a second time, and the duplicate, at the output at t4 = 24, is
/// dropped.
#[test]
fn fig2b_duplicate_delivery() {
    let mut s = system(4, 1, 8, true, (0, 100));
    s.run(&mut Script::new(&[(0, 0, 1), (1, 0, 1), (8, 0, 0)]), 50);
    assert!(s.is_empty());
    let ev = s.events();
    // Q sent again on P's grant
    assert!(ev.contains(&Event::Grant {
        t: 8,
        i: 0,
        j: 1,
        kind: GrantKind::Spurious,
        seq: Some(1),
        retx: true
    }));
    assert!(ev.contains(&Event::OutArrive {
        t: 16,
        i: 0,
        j: 1,
        seq: 1,
        spec: false,
        fate: Fate::Duplicate
    }));
    // A: speculative at t0 + 1, grant at t2 before the ACK at t2 + 1
    assert!(ev.contains(&Event::Stx {
        t: 9,
        i: 0,
        j: 0,
        seq: 0
    }));
    assert!(ev.contains(&Event::Grant {
        t: 16,
        i: 0,
        j: 0,
        kind: GrantKind::Regular,
        seq: Some(0),
        retx: true
    }));
    assert!(ev.contains(&Event::Ack {
        t: 17,
        i: 0,
        j: 0,
        seq: 0
    }));
    assert!(ev.contains(&Event::OutArrive {
        t: 17,
        i: 0,
        j: 0,
        seq: 0,
        spec: true,
        fate: Fate::InOrder
    }));
    assert!(ev.contains(&Event::OutArrive {
        t: 24,
        i: 0,
        j: 0,
        seq: 0,
        spec: false,
        fate: Fate::Duplicate
    }));
    // every cell delivered once
    let d: Vec<(usize, u64)> = s.deliveries().iter().map(|d| (d.j, d.seq)).collect();
    assert_eq!(d, vec![(1, 0), (1, 1), (0, 0)]);
    assert_eq!(s.stats().dup_dropped, 2);
}

/// Fig. 2(a), out-of-order delivery, R = 1. Input 1's cell B1 goes on a
/// spurious grant at 8 and is an arbitrated cell in the crossbar at 12. Cell
/// A (input 0, same output) arrives at t0 = 8 and goes speculatively at once:
/// it collides with B1 at t1 = 12 and is dropped (R4). Cell B arrives at
/// t0 + 1, goes speculatively and wins: it reaches the output at t2 + 1 = 17,
/// before A, which waits for its grant. B is not discarded but stored in the
/// RSQ until A arrives (retransmitted on its grant); then both leave in
/// order.
#[test]
fn fig2a_out_of_order_delivery() {
    let mut s = system(4, 1, 8, true, (0, 100));
    s.run(
        &mut Script::new(&[(0, 1, 0), (8, 1, 0), (8, 0, 0), (9, 0, 0)]),
        60,
    );
    assert!(s.is_empty());
    let ev = s.events();
    assert!(ev.contains(&Event::Grant {
        t: 8,
        i: 1,
        j: 0,
        kind: GrantKind::Spurious,
        seq: Some(1),
        retx: false
    }));
    assert!(ev.contains(&Event::Stx {
        t: 8,
        i: 0,
        j: 0,
        seq: 0
    }));
    assert!(ev.contains(&Event::XbarLoss {
        t: 12,
        i: 0,
        j: 0,
        seq: 0
    }));
    assert!(ev.contains(&Event::Stx {
        t: 9,
        i: 0,
        j: 0,
        seq: 1
    }));
    assert!(ev.contains(&Event::XbarWin {
        t: 13,
        i: 0,
        j: 0,
        seq: 1
    }));
    assert!(ev.contains(&Event::OutArrive {
        t: 17,
        i: 0,
        j: 0,
        seq: 1,
        spec: true,
        fate: Fate::Stored
    }));
    // A arrives later, retransmitted on its own grant, and releases B
    let a = find(&s, |e| {
        matches!(
            e,
            Event::OutArrive {
                i: 0,
                j: 0,
                seq: 0,
                fate: Fate::InOrder,
                ..
            }
        )
    });
    assert_eq!(a.len(), 1);
    let Event::OutArrive { t: ta, spec, .. } = *a[0] else {
        unreachable!()
    };
    assert!(ta > 17 && !spec, "A at {ta}");
    let from0: Vec<(u64, u64)> = s
        .deliveries()
        .iter()
        .filter(|d| d.i == 0)
        .map(|d| (d.seq, d.t))
        .collect();
    assert_eq!(from0.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1]);
    assert!(from0[1].1 >= ta, "B leaves after A arrived");
    assert_eq!(s.stats().rsq_max, 1);
    assert!(s.stats().reseq_sum > 0);
}

#[allow(clippy::too_many_arguments)]
fn random_run(
    n: usize,
    r: usize,
    rtt: u64,
    stx: bool,
    load: f64,
    bursty: bool,
    seed: u64,
    slots: u64,
) -> System<ModelArbiter> {
    let mut s = system(n, r, rtt, stx, (slots / 5, slots));
    s.cfg.trace = false;
    let mut tr: Box<dyn Traffic> = if bursty {
        Box::new(traffic::OnOff::new(n, load, 12.0, seed))
    } else {
        Box::new(Bernoulli::new(n, load, seed))
    };
    s.run(tr.as_mut(), slots);
    s
}

fn check_delivered_once_in_order(s: &mut System<ModelArbiter>) {
    assert!(s.drain(200_000), "system did not drain");
    assert!(s.is_empty());
    let n = s.config().n;
    for i in 0..n {
        for j in 0..n {
            let (arr, dep) = s.counts(i, j);
            assert_eq!(arr, dep, "VOQ ({i},{j}): {arr} arrived, {dep} delivered");
        }
    }
    let st = s.stats();
    let w = s.config().window();
    assert_eq!(st.order_errors, 0, "out-of-order departures");
    assert_eq!(st.rsq_overflow, 0, "RSQ overflow");
    assert!(st.rsq_max <= w && st.rtx_max <= w, "{st:?}");
    assert_eq!(st.req_dropped, 0);
    assert_eq!(st.delivered, st.cells, "every measured cell delivered");
}

/// Long random runs over sizes, receivers, round trips, loads and both
/// traffic patterns: every cell is delivered exactly once and in order per
/// input-output pair, no RSQ or RTX queue overflows, nothing is lost.
#[test]
fn random_runs_deliver_every_cell_once_in_order() {
    let mut seed = 11;
    for &(n, rtt) in &[(4usize, 8u64), (8, 16), (16, 32)] {
        for &r in &[1usize, 2, 3] {
            for &(load, bursty) in &[(0.3, false), (0.7, false), (0.95, false), (0.6, true)] {
                seed += 1;
                let mut s = random_run(n, r, rtt, true, load, bursty, seed, 6000);
                let st = s.stats().clone();
                assert!(st.spec_sent > 0 && st.grants > 0);
                check_delivered_once_in_order(&mut s);
            }
        }
    }
}

/// Collisions, duplicates, resequencing, spurious and wasted grants all
/// occur in such runs (the properties above are not vacuous).
#[test]
fn random_runs_exercise_every_mechanism() {
    let s = random_run(16, 1, 16, true, 0.5, false, 5, 20_000);
    let st = s.stats();
    assert!(st.spec_ok < st.spec_sent, "no collision");
    assert!(st.dup_dropped > 0, "no duplicate");
    assert!(st.rsq_max > 1, "no resequencing");
    assert!(st.spurious > 0 && st.wasted > 0 && st.regular > 0);
    assert!(st.reseq_sum > 0);
}

/// STX never disturbs the matching: a run with STX and one without, on the
/// same traffic, get exactly the same grants slot by slot (the requests are
/// the same, R1; the arbiter's iSLIP ignores the SRQs). Without STX the
/// system is plain iSLIP: no speculation, every grant regular, no
/// duplicates, every delay at least 2 RTT.
#[test]
fn stx_off_is_plain_islip_and_stx_leaves_the_matching_alone() {
    for &(r, load, bursty, seed) in &[(1, 0.5, false, 1), (2, 0.9, false, 2), (2, 0.6, true, 3)] {
        let on = random_run(16, r, 16, true, load, bursty, seed, 8000);
        let mut off = random_run(16, r, 16, false, load, bursty, seed, 8000);
        assert_eq!(on.grant_hash(), off.grant_hash(), "R={r} λ={load}");
        let st = off.stats().clone();
        assert_eq!(
            (st.spec_sent, st.spurious, st.wasted, st.dup_dropped),
            (0, 0, 0, 0)
        );
        assert_eq!(st.regular, st.grants);
        assert!(st.mean_delay() >= 32.0);
        assert_ne!(on.trace_hash(), off.trace_hash());
        check_delivered_once_in_order(&mut off);
    }
}

/// Every delay without STX is at least 2 RTT; with STX at least RTT.
#[test]
fn delay_bounds() {
    for &stx in &[false, true] {
        let mut s = system(8, 2, 16, stx, (0, 4000));
        s.run(&mut Bernoulli::new(8, 0.5, 9), 4000);
        s.drain(10_000);
        let min = s.deliveries().iter().map(|d| d.t - d.arr).min().unwrap();
        assert_eq!(min, if stx { 16 } else { 32 });
    }
}

/// Same seed, same trace, byte for byte; another seed, another trace.
#[test]
fn deterministic() {
    let a = random_run(8, 2, 16, true, 0.6, false, 42, 3000);
    let b = random_run(8, 2, 16, true, 0.6, false, 42, 3000);
    let c = random_run(8, 2, 16, true, 0.6, false, 43, 3000);
    assert_eq!(a.trace_hash(), b.trace_hash());
    assert_eq!(a.stats(), b.stats());
    assert_ne!(a.trace_hash(), c.trace_hash());
}

/// The paper's light-load claim at N = 64, RTT = 64: with STX the delay is
/// close to RTT, without it 2 RTT.
#[test]
fn light_load_delay_rtt_vs_two_rtt() {
    let run = |stx| {
        let mut s = system(64, 2, 64, stx, (200, 2200));
        s.cfg.trace = false;
        s.run(&mut Bernoulli::new(64, 0.05, 1), 2200);
        s.drain(2000);
        s.stats().mean_delay()
    };
    let (with, without) = (run(true), run(false));
    assert!((64.0..66.0).contains(&with), "with STX {with}");
    assert!((128.0..130.0).contains(&without), "without STX {without}");
}
