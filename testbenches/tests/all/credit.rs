//! Credit scheduler: equivalence of golden model and RTL, closed-loop model
//! properties (conservation, the one-BDP buffer, utilisation against
//! buffer / BDP), and the directed scenarios of seed 000.

use crate::support;

use model::credit::{Credit, CreditConfig, CreditInputs, CreditOutputs, CreditParams, BINS};
use model::stim::{Cycle, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use testbenches::credit::scenario::{
    self, cells, closed_loop, fairness_stimulus, one_port, quiet_config, toy, Stats,
};
use testbenches::credit::{Fabric, Lens, Scenario};
use testbenches::rng::Rng;

#[test]
fn equivalence_random() {
    support::equivalence::<Credit>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

/// Fewer, longer runs: deeper states (buffers filled and drained by slow
/// links, balances wandering to their limits, pointers wrapping many times).
#[test]
fn equivalence_long_runs() {
    support::equivalence::<Credit>(support::cases(64), 5000..=8000, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<Credit>();
}

// ---------------------------------------------------------------------------
// Closed-loop model properties
// ---------------------------------------------------------------------------

/// Runs `sc` closed-loop (no noise, no resets) and checks every cycle: the
/// model's invariants, `out + occ <= B`, conservation
/// (`out = credits in flight + balances + data in flight`), the overflow
/// bound `occ <= B + deficits` and, for cell traffic, `occ <= B` and no
/// negative balance.
fn check_closed_loop(
    p: &CreditParams,
    cfg: &CreditConfig,
    sc: &Scenario,
    len: usize,
    lpk: i64,
) -> Result<(), TestCaseError> {
    let mut m = Credit::new(p, cfg);
    let mut fab = Fabric::new(p, sc.lp.clone());
    let cells_only = sc.phases.iter().all(|ph| ph.lens == Lens::Cell);
    let weight: usize = sc
        .phases
        .iter()
        .map(|ph| ph.weight as usize)
        .sum::<usize>()
        .max(1);
    let mut t = 0;
    for ph in &sc.phases {
        let mut rng = Rng::new(ph.seed, 0);
        for _ in 0..(len * ph.weight as usize / weight) {
            let mut pkts = Vec::new();
            for &v in &ph.hot {
                let q = cfg.cfg_quantum_i[v % p.e];
                let len = match ph.lens {
                    Lens::Cell if cells_only => q,
                    Lens::Cell => q.min(lpk as u16),
                    _ => rng.range(1, lpk as u64) as u16,
                };
                if ph.saturate {
                    for _ in fab.voq[v].len()..2 {
                        pkts.push((v, len));
                    }
                } else if fab.voq[v].len() < 32 && rng.chance_pm(ph.load_pm) {
                    pkts.push((v, len));
                }
            }
            for e in 0..p.e {
                if rng.chance_pm(ph.stall_pm) {
                    fab.stall[e] = !fab.stall[e];
                }
            }
            let occ: Vec<i64> = (0..p.e).map(|e| m.occupancy(e)).collect();
            let mut inp = fab.inputs(&pkts, &occ);
            if rng.chance_pm(ph.glitch_pm) {
                let v = rng.below(p.voqs() as u64) as usize;
                inp.ann_bl_i[v] = rng.chance_pm(500);
                inp.ann_mt_i[v] = rng.chance_pm(500);
            }
            let o = m.step(&inp);
            fab.absorb(&o);
            m.assert_invariants();
            m.assert_closed_loop();
            let err = o.err_o.value();
            prop_assert_eq!(
                err & !model::credit::ERR_OVERFLOW,
                0,
                "cycle {}: error flags in a closed loop",
                t
            );
            for e in 0..p.e {
                let bal: Vec<i64> = (0..p.i).map(|i| m.balance(i, e)).collect();
                let want =
                    fab.credits_in_flight(e) + bal.iter().sum::<i64>() + fab.data_in_flight(e);
                prop_assert_eq!(
                    m.outstanding(e),
                    want,
                    "cycle {}: conservation at egress {}",
                    t,
                    e
                );
                let deficit: i64 = bal.iter().map(|&b| (-b).max(0)).sum();
                let buf = cfg.cfg_buf_i[e] as i64;
                prop_assert!(
                    m.occupancy(e) <= buf + deficit,
                    "cycle {}: egress {} holds {} > B {} + deficits {}",
                    t,
                    e,
                    m.occupancy(e),
                    buf,
                    deficit
                );
                prop_assert!(deficit <= p.i as i64 * (lpk - 1));
                if cells_only {
                    prop_assert!(
                        m.occupancy(e) <= buf,
                        "cycle {}: cell traffic overflowed",
                        t
                    );
                    prop_assert_eq!(deficit, 0);
                }
            }
            t += 1;
        }
    }
    Ok(())
}

/// The longest packet for which a closed loop of variant `p` cannot
/// saturate a balance with a buffer of up to `BMAX / 2`: a balance is at
/// most `B + (I - 1) (Lpk - 1)` (the buffer plus the other VOQs' deficits).
fn longest_packet(p: &CreditParams) -> i64 {
    (p.bmax() / (2 * (p.i as i64 - 1)) + 1).min(p.lmax())
}

fn closed_loop_case(
    cells_only: bool,
) -> impl Strategy<Value = (CreditParams, CreditConfig, Scenario, i64)> {
    proptest::sample::select(Credit::variants())
        .prop_flat_map(move |p| {
            testbenches::credit::config_strategy(&p, false).prop_map(move |c| (p, c))
        })
        .prop_flat_map(move |(p, mut c)| {
            let lpk = longest_packet(&p);
            // ... and the occupancy cannot saturate: B + I (Lpk - 1) <= 2^CW - 1.
            let cap = if cells_only {
                p.bmax()
            } else {
                (p.bmax() - (p.i as i64 - 1) * (lpk - 1)).min(p.occ_max() - p.i as i64 * (lpk - 1))
            };
            for b in c.cfg_buf_i.iter_mut() {
                *b = (*b as i64).min(cap) as u32;
            }
            let c2 = c.clone();
            testbenches::credit::scenario_strategy(&p, &c, 4).prop_map(move |mut sc| {
                for ph in sc.phases.iter_mut() {
                    ph.noise_pm = 0;
                    if cells_only {
                        ph.lens = Lens::Cell;
                    }
                }
                sc.reset_pcm = 0;
                (p, c2.clone(), sc, lpk)
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(256)))]

    /// Conservation and the overflow bound for any closed-loop traffic
    /// (packets of any length, overdraw included).
    #[test]
    fn closed_loop_conservation_any_traffic((p, c, sc, lpk) in closed_loop_case(false)) {
        check_closed_loop(&p, &c, &sc, 2000, lpk)?;
    }

    /// With cells (no overdraw) the egress buffer never overflows, whatever
    /// the delays, the demand, the stalls and the announcements.
    #[test]
    fn closed_loop_cells_never_overflow((p, c, sc, lpk) in closed_loop_case(true)) {
        check_closed_loop(&p, &c, &sc, 2000, lpk)?;
    }
}

/// The measured link utilisation of a single saturated egress port.
#[allow(clippy::too_many_arguments)]
fn utilisation(
    p: &CreditParams,
    q: u16,
    num: u16,
    den: u16,
    buf: u32,
    dc: usize,
    dd: usize,
    r: u32,
) -> (f64, Stats) {
    let (c, lp) = one_port(p, q, num, den, buf, dc, dd, r);
    let warm = 1000 + 20 * (dc + dd + 1 + den as usize);
    let (_, st) = closed_loop(p, &c, lp, &[0], &cells(q), None, warm + 4000, warm);
    (st.utilisation(0, r), st)
}

/// The buffer that provably keeps the link fully used with saturating
/// demand, cells of `q` bytes and a credit supply at least the link rate
/// (`q num / den >= r`): `BDP + q - 1 + floor(q (den - 1) / den)`, BDP =
/// `r (dc + dd + 1)`. Proof in docs/credit.md.
fn sufficient_buffer(q: u32, num: u32, den: u32, r: u32, dc: usize, dd: usize) -> u32 {
    let _ = num;
    r * (dc + dd + 1) as u32 + q - 1 + q * (den - 1) / den
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(64)))]

    /// One BDP, for any loop delays, quantum, rate (a supply of at least the
    /// link rate) and link, with saturating demand and cells:
    /// - utilisation <= min(1, B / BDP), BDP = R (dc + dd + 1): a credit's
    ///   bytes are committed for at least dc + dd + 1 cycles;
    /// - with one credit of one link cycle per cycle (Q = R, num = den, the
    ///   seed's setting), one BDP exactly keeps the link fully used, and one
    ///   cell less gives (RTT - 1) / RTT;
    /// - with a coarser credit, BDP + Q - 1 + floor(Q (den - 1) / den) does;
    /// - the buffer never overflows.
    #[test]
    fn one_bdp_keeps_the_link_busy(
        dc in 1usize..=12,
        dd in 1usize..=12,
        r in 1u32..=300,
        k in prop_oneof![1 => Just(0u32), 3 => 1u32..=4],
        (num, den) in (1u16..=8).prop_flat_map(|d| (1..=d, Just(d))),
        extra in 0u32..=40,
    ) {
        let p = CreditParams::default();
        let (num, den) = if k == 0 { (1, 1) } else { (num, den) };
        let q = if k == 0 { r } else { (r * k + extra).max((r * den as u32).div_ceil(num as u32)) };
        let q = q.min(p.lmax() as u32) as u16;
        prop_assume!(q as u32 * num as u32 >= r * den as u32);
        let rtt = (dc + dd + 1) as u32;
        let bdp = r * rtt;
        let suff = sufficient_buffer(q as u32, num as u32, den as u32, r, dc, dd);
        let (u, st) = utilisation(&p, q, num, den, suff, dc, dd, r);
        prop_assert_eq!(st.overflows[0], 0);
        prop_assert!(u == 1.0, "B = {} (BDP {}): utilisation {}", suff, bdp, u);
        for f in [0.25f64, 0.5, 0.75, 0.9, 1.0] {
            let b = (bdp as f64 * f) as u32;
            let (u, st) = utilisation(&p, q, num, den, b, dc, dd, r);
            prop_assert_eq!(st.overflows[0], 0);
            // In a finite window, the bytes committed at its start come on top.
            let slack = (b + q as u32) as f64 / (r as f64 * st.window as f64);
            prop_assert!(u <= b as f64 / bdp as f64 + slack + 1e-9,
                "B = {} = {} BDP: utilisation {}", b, f, u);
            if k == 0 && f == 1.0 {
                prop_assert!(u == 1.0, "Q = R at one BDP: {}", u);
            }
        }
        if k == 0 {
            let (u, st) = utilisation(&p, q, num, den, bdp - r, dc, dd, r);
            let tol = rtt as f64 / st.window as f64;
            prop_assert!((u - (rtt - 1) as f64 / rtt as f64).abs() <= tol, "one cell short: {}", u);
        }
    }
}

#[test]
fn utilisation_curve() {
    // Q = R = 64 B (one cell per link cycle, one credit per cycle) and the
    // seed's sizing example scaled down (Q = 100 B, 21/40 credits per cycle
    // = one per two cycles + 5%, R = 50 B): RTT = 40 cycles.
    let p = CreditParams::default();
    let (dc, dd) = (20, 19);
    let fractions = [0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25];
    println!("buffer/BDP | Q=R=64 rate 1 | Q=100 rate 21/40 R=50");
    let mut prev = (0.0, 0.0);
    for &f in &fractions {
        let b1 = (64.0 * 40.0 * f) as u32;
        let (u1, _) = utilisation(&p, 64, 1, 1, b1, dc, dd, 64);
        let b2 = (50.0 * 40.0 * f) as u32;
        let (u2, _) = utilisation(&p, 100, 21, 40, b2, dc, dd, 50);
        println!("{f:>10} | {u1:>13.4} | {u2:.4}");
        // Q = R: exactly min(1, B / BDP).
        assert!(
            (u1 - f64::min(1.0, f)).abs() < 1e-9,
            "Q = R at {f} BDP: {u1}"
        );
        assert!(u2 <= f64::min(1.0, f) + 1e-9 && u2 >= prev.1);
        assert!(u1 >= prev.0);
        prev = (u1, u2);
    }
    // The coarse quantum costs the loop two cycles: full rate from 42/40 BDP.
    let (u, _) = utilisation(&p, 100, 21, 40, 50 * 42, dc, dd, 50);
    assert_eq!(u, 1.0);
}

// ---------------------------------------------------------------------------
// Directed scenarios of seed 000
// ---------------------------------------------------------------------------

#[test]
fn toy_example_six_cells_full_rate_no_overflow() {
    let (s, st) = toy(6);
    assert_eq!(st.overflows[0], 0);
    // Congested: the buffer fills to exactly its 6 cells, never beyond.
    assert_eq!(st.max_occ[0], 6 * 64);
    // Before the congestion, and again after it, the link is fully used.
    let (_, before) = {
        let p = CreditParams::default();
        let (c, lp) = one_port(&p, 64, 1, 1, 6 * 64, 3, 2, 64);
        closed_loop(&p, &c, lp, &[0], &cells(64), None, 300, 50)
    };
    assert_eq!(before.utilisation(0, 64), 1.0);
    // 250 cycles before the stall + the 70 after it, minus the 30 stalled:
    // the stall costs exactly its 30 cycles, the 6 buffered cells drain
    // while the loop refills.
    assert_eq!(st.link_bytes[0], (350 - 30) * 64);
    scenario::toy_full_rate(&s, &model_outputs(&s)).unwrap();
    support::lockstep_or_report(&s, "toy example, 6 cells");
}

#[test]
fn toy_example_five_cells_rate_drops() {
    let (s, st) = toy(5);
    assert_eq!(st.overflows[0], 0);
    assert_eq!(st.max_occ[0], 5 * 64);
    let p = CreditParams::default();
    let (c, lp) = one_port(&p, 64, 1, 1, 5 * 64, 3, 2, 64);
    let (_, st) = closed_loop(&p, &c, lp, &[0], &cells(64), None, 650, 50);
    // 5 credits per 6-cycle loop: 5/6 of the link.
    assert!(
        (st.utilisation(0, 64) - 5.0 / 6.0).abs() < 1e-9,
        "{}",
        st.utilisation(0, 64)
    );
    scenario::toy_five_sixths(&s, &model_outputs(&s)).unwrap();
    support::lockstep_or_report(&s, "toy example, 5 cells");
}

/// The seed's slice (18 x 400G, 32 ingress sources, cells of 256 B, one
/// credit per step of two clocks per egress port, the 0.8 us loop of 400
/// steps). The bound of `Sufficient, any quantum and rate` with the loop's
/// longest data delay: a credited cell may wait at its ingress port while
/// the port's round robin serves its other 17 VOQs, so `RTT <= dc + dd +
/// 17 + 1 = 417` steps and `B >= 100 x 417 + 255`: 164 cells. With them
/// every link is busy from the second loop on, no buffer overflows, and
/// every egress port's credits are shared equally by the 32 ingress ports
/// (by port and by slice), on the model. One BDP
/// rounded up (158 cells) does not overflow either, but leaves the links
/// idle now and then: the ingress round robin's wait is part of the loop.
#[test]
fn seed_slice_links_busy_fair_no_overflow() {
    let (steps, warm) = (1500, 900);
    let (s, st, bdp) = scenario::seed_slice(164, steps, warm);
    let p = s.params;
    assert_eq!(bdp, 40_000);
    for e in 0..p.e {
        assert_eq!(st.overflows[e], 0, "egress {e}");
        assert_eq!(st.utilisation(e, 100), 1.0, "egress {e}");
        assert!(st.max_occ[e] <= 164 * 256, "egress {e}: {}", st.max_occ[e]);
    }
    scenario::slice_steady(&s, &model_outputs(&s), warm).unwrap();
    let (_, st, _) = scenario::seed_slice(158, steps, warm);
    let u: Vec<f64> = (0..p.e).map(|e| st.utilisation(e, 100)).collect();
    assert!(st.overflows.iter().all(|&n| n == 0));
    assert!(
        u.iter().all(|&x| x > 0.99) && u.iter().any(|&x| x < 1.0),
        "{u:?}"
    );
}

/// The first 1,000 steps of [`seed_slice_links_busy_fair_no_overflow`]'s
/// closed loop in lockstep with the RTL at the seed's slice. The slice is a
/// scale size (its design alone takes 100 s to compile), so this runs in
/// `make test-scale`, not in `make test`.
#[test]
#[ignore = "scale design: make test-scale"]
fn scale_seed_slice_lockstep() {
    let (mut s, _, _) = scenario::seed_slice(164, 1500, 900);
    s.cycles.truncate(1000);
    support::lockstep_or_report(&s, "seed slice");
}

/// The golden model's outputs of every cycle of `s` (no resets).
fn model_outputs(s: &Stimulus<Credit>) -> Vec<CreditOutputs> {
    let mut m = Credit::new(&s.params, &s.config);
    s.cycles
        .iter()
        .map(|c| match c {
            Cycle::Drive(i) => m.step(i),
            Cycle::Reset => panic!("no reset in a directed stimulus"),
        })
        .collect()
}

/// Three ingress ports sending to egress 0 of the narrow variant (I = 3),
/// ports 0 and 1 in slice 0, port 2 in slice 1: slice level 25 % / 25 % /
/// 50 % exactly in every 4 credits, port level one third each within one
/// credit, the bytes dequeued following the credits
/// ([`scenario::slice_shares`], [`scenario::port_shares`]).
#[test]
fn port_versus_slice_fairness() {
    let p = Credit::variants()[1];
    let (s_slice, st_slice) = fairness_stimulus(true);
    let (s_port, st_port) = fairness_stimulus(false);
    let share = |st: &Stats| -> Vec<f64> {
        let tot: u64 = (0..3).map(|i| st.credits[p.voq(i, 0)]).sum();
        (0..3)
            .map(|i| st.credits[p.voq(i, 0)] as f64 / tot as f64)
            .collect()
    };
    let (ss, sp) = (share(&st_slice), share(&st_port));
    println!("credit shares, slice level: {ss:.4?}; port level: {sp:.4?}");
    scenario::slice_shares(&s_slice, &model_outputs(&s_slice)).unwrap();
    scenario::port_shares(&s_port, &model_outputs(&s_port)).unwrap();
    support::lockstep_or_report(&s_slice, "fairness, slice level");
    support::lockstep_or_report(&s_port, "fairness, port level");
}

/// The smallest credit quantum (bytes) that keeps a link of `link_bps`
/// busy when a credit is issued every `cycles_per_credit` cycles of a
/// `clock_hz` clock, with a fabric speed-up `num/den`: exact rational ceil.
fn min_quantum(
    link_bps: u128,
    clock_hz: u128,
    cycles_per_credit: u128,
    speedup: (u128, u128),
) -> u128 {
    (link_bps * cycles_per_credit * speedup.0).div_ceil(8 * clock_hz * speedup.1)
}

#[test]
fn credit_quantum_sizing() {
    // The seed: 1 GHz, one credit every 2 cycles, 400 Gb/s, 5% speed-up.
    let q = min_quantum(400_000_000_000, 1_000_000_000, 2, (1, 1));
    let q_su = min_quantum(400_000_000_000, 1_000_000_000, 2, (105, 100));
    assert_eq!((q, q_su), (100, 105));
    // A slice of 18 x 400G: ~1800 B, rounded to the next power of two, 2 KB.
    let q_slice = min_quantum(18 * 400_000_000_000, 1_000_000_000, 2, (1, 1));
    assert_eq!((q_slice, q_slice.next_power_of_two()), (1800, 2048));
    // One BDP at 400 Gb/s and 0.8 us: 40 KB, ~156 cells of 256 B.
    let bdp = 400_000_000_000u128 / 8 * 800 / 1_000_000_000;
    assert_eq!((bdp, bdp.div_ceil(256)), (40_000, 157));

    // On the model: a link of 50 B per cycle (400 Gb/s at 1 GHz), one
    // credit per 2 cycles, a buffer large enough.
    let p = CreditParams::default();
    let r = (400_000_000_000u128 / 8 / 1_000_000_000) as u32;
    let run = |q: u16, num: u16, den: u16| utilisation(&p, q, num, den, 1 << 16, 4, 4, r);
    let (u99, _) = run(q as u16 - 1, 1, 2);
    let (u100, _) = run(q as u16, 1, 2);
    let (u105, _) = run(q_su as u16, 1, 2);
    println!("quantum 99 B: {u99:.4}, 100 B: {u100:.4}, 105 B: {u105:.4}");
    assert!((u99 - 0.99).abs() < 1e-3, "{u99}");
    assert_eq!(u100, 1.0);
    assert_eq!(u105, 1.0);
    // The speed-up as a rate instead: 100 B at 21/40 credits per cycle
    // issues exactly 1.05 x 50 B per cycle, with no drift over 40 000 cycles.
    let (c, lp) = one_port(&p, 100, 21, 40, 1 << 20, 4, 4, 1000);
    let (_, st) = closed_loop(&p, &c, lp, &[0], &cells(100), None, 40_000, 0);
    let credited: u64 = (0..p.i).map(|i| st.credits[p.voq(i, 0)]).sum::<u64>() * 100;
    assert_eq!(credited, 40_000 * 105 / 2);
}

/// REFERENCE.md's deficit example, on the default variant, in co-simulation.
#[test]
fn reference_overdraw_example_in_cosim() {
    let p = CreditParams::default();
    let c = quiet_config(&p);
    let v = p.voq(2, 1);
    let mut cycles = Vec::new();
    let credit = |b: u16, hol: u16| {
        let mut i = CreditInputs::zero(&p);
        i.cin_valid_i[1] = b > 0;
        i.cin_ing_i[1] = if b > 0 { 2 } else { 0 };
        i.cin_bytes_i[1] = b;
        i.hol_len_i[v] = hol;
        i
    };
    cycles.push(Cycle::Drive(credit(100, 0)));
    cycles.push(Cycle::Drive(credit(0, 1500)));
    cycles.push(Cycle::Drive(credit(1024, 1500)));
    cycles.push(Cycle::Drive(credit(0, 1500)));
    cycles.push(Cycle::Drive(credit(1024, 1500)));
    cycles.push(Cycle::Drive(credit(0, 0)));
    let s = Stimulus::<Credit> {
        generated: None,
        params: p,
        config: c.clone(),
        cycles,
        seed: 100,
    };
    let mut m = Credit::new(&p, &c);
    let mut bal = Vec::new();
    let mut deq = Vec::new();
    for cyc in &s.cycles {
        if let Cycle::Drive(i) = cyc {
            let o = m.step(i);
            bal.push(m.balance(2, 1));
            deq.push(o.deq_valid_o[2]);
        }
    }
    assert_eq!(bal, vec![100, -1400, -376, -376, 648 - 1500, -852]);
    assert_eq!(deq, vec![false, true, false, false, true, false]);
    support::lockstep_or_report(&s, "REFERENCE overdraw example");
}

// ---------------------------------------------------------------------------
// Coverage and the stimulus format
// ---------------------------------------------------------------------------

#[test]
fn generated_stimuli_hit_every_coverage_bin() {
    let mut hits = vec![0u64; BINS.len()];
    for (k, p) in Credit::variants().iter().enumerate() {
        for seed in 0..40u64 {
            let mut s = testbenches::generate::<Credit>(p, seed * 3 + k as u64, 1500, None);
            if seed == 0 {
                // An illegal configuration: no credits, accumulators held.
                s.config.cfg_quantum_i[0] = 0;
                assert!(model::credit::cfg_error(&s.config));
            }
            let mut m = Credit::new(&s.params, &s.config);
            for c in &s.cycles {
                match c {
                    Cycle::Drive(i) => {
                        let o = m.step(i);
                        m.sample(i, &o, &mut hits);
                    }
                    Cycle::Reset => m = Credit::new(&s.params, &s.config),
                }
            }
        }
    }
    let holes: Vec<&str> = BINS
        .iter()
        .zip(&hits)
        .filter(|(_, &h)| h == 0)
        .map(|(b, _)| *b)
        .collect();
    for (b, h) in BINS.iter().zip(&hits) {
        println!("  {b:<32} {h}");
    }
    assert!(holes.is_empty(), "bins never hit: {holes:?}");
}

#[test]
fn stimulus_text_round_trips() {
    for p in Credit::variants() {
        let s = testbenches::generate::<Credit>(&p, 7, 300, None);
        let text = s.to_text();
        let back = Stimulus::<Credit>::from_text(&text, &Credit::variants()).unwrap();
        assert_eq!(back.config, s.config);
        assert_eq!(back.cycles, s.cycles);
        assert_eq!(back.seed, 7);
    }
}

#[test]
fn configuration_errors_name_field_and_range() {
    let p = CreditParams::default();
    let mut c = Credit::default_config(&p);
    assert!(Credit::check(&p, &c).is_ok());
    c.cfg_rate_den_i[3] = 0;
    let e = Credit::check(&p, &c).unwrap_err();
    assert_eq!(e.field, "cfg_rate_den_i");
    assert!(
        e.msg.contains("egress 3") && e.msg.contains("1..=65535"),
        "{e}"
    );
    let bad = CreditParams { s: 3, ..p };
    assert_eq!(
        Credit::check(&bad, &Credit::default_config(&p))
            .unwrap_err()
            .field,
        "S"
    );
    let bad = CreditParams { bw: 14, ..p };
    let e = Credit::check(&bad, &c).unwrap_err();
    assert_eq!(e.field, "BW");
    assert!(e.msg.contains("15..=32"), "{e}");
}

/// Every counter at its limit (default variant): a balance or an outstanding
/// count exactly at its bound raises no error, one byte beyond saturates and
/// flags it; the occupancy saturates at 2^CW - 1; a departure larger than
/// the occupancy clamps at 0 and flags it.
#[test]
fn counters_at_their_limits() {
    use model::credit::{ERR_BAL_SAT, ERR_DEP_UNDERFLOW, ERR_OCC_SAT, ERR_OUT_SAT};
    let s = testbenches::credit::scenario::limits();
    let p = s.params;
    let mut m = Credit::new(&p, &s.config);
    let bmax = (1i64 << (p.bw - 1)) - 1;
    let omin = -(1i64 << p.cw);
    let omax = (1i64 << p.cw) - 1;
    let (mut bal_at_max_clean, mut out_at_min_clean) = (false, false);
    let mut seen = 0u8;
    for c in &s.cycles {
        let Cycle::Drive(i) = c else { continue };
        let o = m.step(i);
        let e = o.err_o.value();
        seen |= e;
        if m.balance(0, 0) == bmax && e & ERR_BAL_SAT == 0 && !bal_at_max_clean {
            bal_at_max_clean = true;
            assert_eq!(seen & ERR_BAL_SAT, 0, "saturated before reaching the bound");
        }
        if m.outstanding(0) == omin && e & ERR_OUT_SAT == 0 && !out_at_min_clean {
            out_at_min_clean = true;
            assert_eq!(seen & ERR_OUT_SAT, 0, "saturated before reaching the bound");
        }
        assert!(m.balance(0, 0) <= bmax && m.outstanding(0) >= omin);
        assert!(m.occupancy(0) <= omax && m.occupancy(1) >= 0);
    }
    assert!(bal_at_max_clean && out_at_min_clean);
    for bit in [ERR_BAL_SAT, ERR_OUT_SAT, ERR_OCC_SAT, ERR_DEP_UNDERFLOW] {
        assert_ne!(seen & bit, 0, "error bit {bit:#x} never raised");
    }
    assert_eq!(m.occupancy(0), omax);
    scenario::limits_outcome(&s, &model_outputs(&s)).unwrap();
    support::lockstep_or_report(&s, "counters at their limits");
}
