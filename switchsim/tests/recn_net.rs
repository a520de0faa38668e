//! The RECN network of seed 002 (`studies::recn_net`) on the `recn_port`
//! golden model and on its verilated RTL: the same statistics and the same
//! delivery log (every packet, the tick it reached its end point), on a
//! 16-end-point folded butterfly of 4-port switches (160 ports, input and
//! output, the default variant d4s2c64rw16), uniform traffic and the hot
//! spot; and the hot-spot experiment, whose claim is checked over several
//! traffic draws on the model and, for the same draws, on the RTL ports.

use studies::recn_net::traffic::Pattern;
use studies::recn_net::{model_recn_network, run, Arch, Config, Release, Stats};
use switchsim::study::recn::{mean_ci, ratio_ci, rtl_recn_network};

/// Runs `cfg` on model ports and RTL ports; asserts identical statistics,
/// deliveries, clock cycles and notification actions; returns the model's.
fn model_and_rtl(cfg: &Config) -> Stats {
    let mut m = model_recn_network(cfg.clone());
    m.run(cfg.tail());
    let mut r = rtl_recn_network(cfg.clone(), cfg.seed).expect("verilated recn_port");
    r.run(cfg.tail());
    let what = format!(
        "load {} {:?} {:?} seed {}",
        cfg.load, cfg.pattern, cfg.release, cfg.seed
    );
    let (ms, rs) = (m.stats(), r.stats());
    assert_eq!(ms, rs, "{what}: statistics differ");
    if cfg.trace {
        assert_eq!(m.deliveries().len(), r.deliveries().len(), "{what}");
        for (k, (a, b)) in m.deliveries().iter().zip(r.deliveries()).enumerate() {
            assert_eq!(a, b, "{what}: delivery {k} differs");
        }
    }
    assert_eq!(m.hash(), r.hash(), "{what}: deliveries differ");
    let cyc = |it: &mut dyn Iterator<Item = u64>| it.sum::<u64>();
    assert_eq!(
        cyc(&mut m.ports().map(|p| p.cycles)),
        cyc(&mut r.ports().map(|p| p.cycles)),
        "{what}: clock cycles"
    );
    ms.clone()
}

#[test]
fn recn_network_on_model_and_rtl_ports_is_identical() {
    let cases = [
        (0.5, Pattern::Uniform, Release::Leaf, 1),
        (0.9, Pattern::Uniform, Release::Root, 2),
    ];
    for (load, pattern, release, seed) in cases {
        let cfg = Config {
            warmup: 500,
            slots: 2_000,
            seed,
            pattern,
            release,
            trace: true,
            ..Config::small(load)
        };
        assert_eq!(cfg.topology().endpoints, 16);
        let s = model_and_rtl(&cfg);
        assert!(s.done > 1000, "{load}: {} delivered", s.done);
        // RECN did something: SAQs allocated, notifications and (leaf
        // rule) release messages sent.
        assert!(s.acts[2] > 0 && s.ntf_sent > 0, "{load}: {:?}", s.acts);
        assert_eq!(s.rls_sent > 0, release == Release::Leaf, "{load}");
        assert_eq!(s.out_of_order, 0, "markers on: in order");
    }
}

/// The hot-spot claim, over `SEEDS` traffic draws of the 16-end-point
/// network at load 0.8 (one source in 4 sends its best effort to end point
/// 15; 36 of the 169 victim flows share a link with a hot flow): the
/// victims' best effort, delivered over offered, falls under VOQ Switch
/// against uniform traffic (the 95 % confidence interval of the loss is
/// above 0), and RECN recovers at least `SHARE` of that loss: the lower end
/// of the 95 % Fieller interval of `mean(RECN_hot - Switch_hot) /
/// mean(Switch_uniform - Switch_hot)`, measured on these draws when the
/// test was written (0.516 [0.138, 1.407], docs/recn_net.md). RECN runs on
/// the model for every draw and, for the first `RTL_SEEDS`, on the RTL
/// ports too, with identical results.
#[test]
fn recn_recovers_what_the_hot_spot_takes_from_the_victims() {
    const SEEDS: u64 = 8;
    const RTL_SEEDS: u64 = 2;
    const SHARE: f64 = 0.13;
    let cfg = |pattern, seed| Config {
        warmup: 1_000,
        slots: 3_000,
        seed,
        pattern,
        ..Config::small(0.8)
    };
    // One draw: the victims' loss under VOQ Switch and what RECN gains.
    let draw = |seed| {
        let su = run(&cfg(Pattern::Uniform, seed), Arch::VoqSwitch).victim_ratio();
        let sh = run(&cfg(Pattern::HotSpot, seed), Arch::VoqSwitch).victim_ratio();
        let rc = cfg(Pattern::HotSpot, seed);
        let rh = if seed <= RTL_SEEDS {
            model_and_rtl(&rc)
        } else {
            run(&rc, Arch::Recn)
        }
        .victim_ratio();
        (su - sh, rh - sh)
    };
    // The model-only draws on a second thread while this one runs those
    // with the RTL; the results in seed order either way.
    let draws: Vec<(f64, f64)> = std::thread::scope(|s| {
        let model_only = s.spawn(|| (RTL_SEEDS + 1..=SEEDS).map(draw).collect::<Vec<_>>());
        let mut v: Vec<_> = (1..=RTL_SEEDS).map(draw).collect();
        v.extend(model_only.join().expect("a model-only draw panicked"));
        v
    });
    let hurt: Vec<f64> = draws.iter().map(|d| d.0).collect();
    let gain: Vec<f64> = draws.iter().map(|d| d.1).collect();
    let (h, hh) = mean_ci(&hurt);
    let share = ratio_ci(&gain, &hurt);
    eprintln!("victims' loss under VOQ Switch {h:.4} +- {hh:.4}; RECN recovers {share:?}");
    assert!(
        h - hh > 0.0,
        "the hot spot does not clearly hurt the victims under VOQ Switch: {h:.4} +- {hh:.4}"
    );
    let (s, lo, hi) = share.expect("a bounded interval: the loss is clearly above 0");
    assert!(
        lo >= SHARE,
        "RECN recovers {s:.3} [{lo:.3}, {hi:.3}] of the victims' loss, not at least {SHARE}"
    );
}
