//! The STX switch system simulation (`studies::stx_system`, the switch
//! composition `model::stx_switch` with traffic) run around the arbiter's
//! golden model and around its verilated RTL (both through the
//! composition's `SwitchArbiter`) gives the same results: the same
//! statistics, the same per-cell delivery trace and the same event log, for
//! several sizes, receiver counts, loads, traffic patterns, STX policies
//! and delivery schemes.

use studies::stx_system::traffic::{Bernoulli, OnOff, Traffic};
use studies::stx_system::{
    arbiter_setup, model_arbiter, Config, Policy, Scheme, SwitchArbiter, System,
};
use switchsim::study::stx::RtlArbiter;

fn run<A: SwitchArbiter>(cfg: &Config, arb: A, traffic: &mut dyn Traffic, slots: u64) -> System<A> {
    let mut s = System::new(cfg.clone(), arb);
    s.run(traffic, slots);
    assert!(s.drain(50_000), "system did not drain");
    s
}

fn traffic(n: usize, load: f64, bursty: bool, seed: u64) -> Box<dyn Traffic> {
    if bursty {
        Box::new(OnOff::new(n, load, 8.0, seed))
    } else {
        Box::new(Bernoulli::new(n, load, seed))
    }
}

/// (N, R, RTT, STX, load, bursty, seed, slots, policy, scheme)
type Case = (usize, usize, u64, bool, f64, bool, u64, u64, Policy, Scheme);

#[test]
fn system_with_model_and_rtl_arbiter_is_identical() {
    use Policy::{Ocf, Random, Ycf};
    use Scheme::{Gbn, Saw, Sr};
    let cases: &[Case] = &[
        // (N, R, RTT, STX, load, bursty, seed, slots, policy, scheme)
        (4, 1, 8, true, 0.5, false, 1, 3000, Ocf, Sr),
        (4, 2, 8, true, 0.9, true, 2, 3000, Random, Sr),
        (8, 1, 16, true, 0.7, false, 3, 3000, Ocf, Gbn),
        (8, 3, 16, true, 0.4, true, 4, 3000, Ycf, Sr),
        (16, 2, 32, true, 0.6, false, 5, 3000, Ocf, Saw),
        (16, 2, 32, false, 0.6, false, 5, 3000, Ocf, Sr),
        (64, 2, 64, true, 0.5, false, 6, 1500, Ocf, Sr),
        (64, 1, 64, true, 0.8, true, 7, 1500, Ycf, Gbn),
    ];
    for &(n, r, rtt, stx, load, bursty, seed, slots, policy, scheme) in cases {
        let mut cfg = Config::new(n, r, rtt, stx);
        cfg.trace = true;
        cfg.measure = (slots / 5, slots);
        cfg.policy = policy;
        cfg.scheme = scheme;
        let (p, c) = arbiter_setup(&cfg);
        let m = run(
            &cfg,
            model_arbiter(&cfg),
            traffic(n, load, bursty, seed).as_mut(),
            slots,
        );
        let rtl = RtlArbiter::new(&p, &c, seed).expect("arbiter RTL");
        let v = run(&cfg, rtl, traffic(n, load, bursty, seed).as_mut(), slots);
        let what = format!(
            "N={n} R={r} RTT={rtt} STX={stx} load={load} bursty={bursty} {policy:?} {scheme:?}"
        );
        assert!(!m.deliveries().is_empty(), "{what}: nothing delivered");
        assert_eq!(m.stats(), v.stats(), "{what}: statistics differ");
        assert_eq!(
            m.deliveries().len(),
            v.deliveries().len(),
            "{what}: delivery count"
        );
        for (k, (a, b)) in m.deliveries().iter().zip(v.deliveries()).enumerate() {
            assert_eq!(a, b, "{what}: delivery {k} differs");
        }
        assert_eq!(m.events(), v.events(), "{what}: event log differs");
        assert_eq!(m.trace_hash(), v.trace_hash());
        assert_eq!(m.grant_hash(), v.grant_hash());
        if stx {
            let st = m.stats();
            assert!(st.spec_sent > 0 && st.grants > 0, "{what}: {st:?}");
        }
    }
}

/// The four cases of seed 004's Fig. 2, the arbiter's directed scenarios,
/// run on the whole STX system around the verilated arbiter: the same event
/// log as around the golden model, and the outcome each case documents.
#[test]
fn fig2_outcomes_through_the_rtl_arbiter() {
    use studies::stx_system::traffic::Script;
    use studies::stx_system::{Event, Fate, GrantKind};
    use testbenches::arbiter::scenario::{fig2_config, FIG2A, FIG2B, FIG2C, FIG2D, FIG2D_B_RTX};
    type Shows = fn(&Event) -> bool;
    /// (what, the arrivals, slots, B_RTX, the event that shows the outcome)
    type Case<'a> = (&'a str, &'a [(u64, usize, usize)], u64, usize, Shows);
    let cases: [Case; 4] = [
        ("fig2a out of order", &FIG2A, 60, 8, |e| {
            matches!(
                e,
                Event::OutArrive {
                    fate: Fate::OutOfOrder,
                    ..
                }
            )
        }),
        ("fig2b duplicate", &FIG2B, 50, 8, |e| {
            matches!(
                e,
                Event::OutArrive {
                    fate: Fate::Duplicate,
                    ..
                }
            )
        }),
        ("fig2c wasted grant", &FIG2C, 30, 8, |e| {
            matches!(
                e,
                Event::Grant {
                    kind: GrantKind::Wasted,
                    ..
                }
            )
        }),
        ("fig2d spurious grant", &FIG2D, 40, FIG2D_B_RTX, |e| {
            matches!(
                e,
                Event::Grant {
                    kind: GrantKind::Spurious,
                    ..
                }
            )
        }),
    ];
    for (what, arrivals, slots, b_rtx, shows) in cases {
        let mut cfg = fig2_config(b_rtx);
        cfg.trace = true;
        cfg.measure = (0, slots * 2);
        let (p, c) = arbiter_setup(&cfg);
        let m = run(&cfg, model_arbiter(&cfg), &mut Script::new(arrivals), slots);
        let rtl = RtlArbiter::new(&p, &c, 1).expect("arbiter RTL");
        let v = run(&cfg, rtl, &mut Script::new(arrivals), slots);
        assert_eq!(m.events(), v.events(), "{what}: event logs differ");
        assert!(
            v.events().iter().any(shows),
            "{what}: not shown:\n{:?}",
            v.events()
        );
    }
}
