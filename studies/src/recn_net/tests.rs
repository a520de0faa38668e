use super::*;

fn small(load: f64, slots: u64) -> Config {
    Config {
        warmup: 1_000,
        slots,
        ..Config::small(load)
    }
}

fn hot(load: f64) -> Config {
    Config {
        pattern: Pattern::HotSpot { hot: 6 },
        ..small(load, 8_000)
    }
}

/// Every packet born is delivered or still somewhere: in an interface, a
/// port or on a link; and the networks deliver (nearly) everything they
/// are offered at a moderate load.
#[test]
fn packets_are_conserved() {
    let cfg = small(0.7, 3_000);
    let topo = cfg.topology();
    let check = |what: &str, born: u64, done: u64, (nic, ports, links): (u64, u64, u64)| {
        assert!(done > 1000, "{what}: {done} delivered");
        assert_eq!(
            born,
            done + nic + ports + links,
            "{what}: {nic} {ports} {links}"
        );
    };
    let mut a = Network::new(cfg.clone(), 32, |_| arch::VoqNet::new(topo.endpoints, 16));
    a.run(0);
    check("VOQ Net", a.stats().born, a.stats().done, a.in_network());
    let mut b = Network::new(cfg.clone(), 32, |_| arch::VoqSwitch::new(topo.radix, 8));
    b.run(0);
    check("VOQ Switch", b.stats().born, b.stats().done, b.in_network());
    let mut c = model_recn_network(cfg.clone());
    c.run(0);
    check("RECN", c.stats().born, c.stats().done, c.in_network());
    assert!(
        c.in_network().1 > 0,
        "nothing stored in the RECN ports at the end"
    );
}

/// The same seed gives the same deliveries; another seed other ones.
#[test]
fn runs_are_deterministic() {
    let cfg = small(0.6, 2_000);
    let go = |cfg: &Config| {
        let mut n = model_recn_network(cfg.clone());
        n.run(200);
        (n.hash(), n.stats().clone())
    };
    let (h1, s1) = go(&cfg);
    let (h2, s2) = go(&cfg);
    assert_eq!((h1, &s1), (h2, &s2));
    let (h3, _) = go(&Config { seed: 2, ..cfg });
    assert_ne!(h1, h3);
}

/// Skipping the RECN ports' quiet clock cycles changes nothing: the same
/// deliveries as clocking every port every slot, with fewer cycles.
#[test]
fn skipping_quiet_cycles_is_exact() {
    let cfg = Config {
        trace: true,
        ..small(0.5, 2_000)
    };
    let mut a = model_recn_network(cfg.clone());
    let mut b = model_recn_network(cfg);
    for p in b.ports_mut() {
        p.skip_quiet = false;
    }
    a.run(300);
    b.run(300);
    assert_eq!(a.stats(), b.stats());
    assert_eq!(a.deliveries(), b.deliveries());
    let cycles = |n: &Network<ModelRecn>| n.ports().map(|p| p.cycles).sum::<u64>();
    assert!(
        cycles(&a) * 5 < cycles(&b) * 4,
        "{} {}",
        cycles(&a),
        cycles(&b)
    );
    let acts = |n: &Network<ModelRecn>| n.ports().map(|p| p.acts[2]).sum::<u64>();
    assert!(acts(&a) > 0, "no SAQ allocated");
}

/// At a low load all three deliver what they are offered (QoS and best
/// effort), and the ideal is not below the others by more than noise.
#[test]
fn low_load_everyone_delivers_and_the_ideal_leads() {
    let cfg = small(0.3, 6_000);
    let s: Vec<Stats> = Arch::ALL.iter().map(|&a| run(&cfg, a)).collect();
    for (a, st) in Arch::ALL.iter().zip(&s) {
        let (be, off) = (st.be_throughput(), st.be_offered());
        assert!((be - off).abs() < 0.06 * off, "{a:?}: {be} of {off}");
        assert!(
            (st.qos_ratio() - 1.0).abs() < 0.03,
            "{a:?}: {}",
            st.qos_ratio()
        );
    }
    for st in &s[1..] {
        assert!(s[0].be_throughput() >= st.be_throughput() - 0.005);
    }
}

/// QoS traffic keeps its throughput at a high load with every architecture.
#[test]
fn qos_gets_its_throughput_at_high_load() {
    let cfg = small(0.9, 6_000);
    for a in Arch::ALL {
        let st = run(&cfg, a);
        assert!(
            (st.qos_ratio() - 1.0).abs() < 0.03,
            "{a:?}: {}",
            st.qos_ratio()
        );
        assert!(
            st.be_throughput() < st.be_offered(),
            "{a:?}: best effort saturated"
        );
    }
}

/// The hot spot: with RECN the victims (best effort of the other sources,
/// to other destinations) keep most of their throughput, clearly more than
/// with VOQ Switch, whose congested VOQs fill their VC's credits and block
/// them (HOL blocking); VOQ Net is the bound.
#[test]
fn recn_removes_hol_blocking_at_a_hot_spot() {
    let cfg = hot(0.8);
    let [net, sw, recn] = Arch::ALL.map(|a| run(&cfg, a).victim_ratio());
    assert!(recn > sw + 0.05, "RECN {recn} VOQ Switch {sw}");
    assert!(
        recn > 0.9 && net >= recn - 0.01,
        "RECN {recn} VOQ Net {net}"
    );
}

/// Diagnostic (not run by default): notification actions at 128 end
/// points, `LOAD` (default 0.9).
#[test]
#[ignore]
fn notification_counts() {
    let load: f64 = std::env::var("LOAD").map_or(0.9, |s| s.parse().unwrap());
    let mut net = model_recn_network(Config {
        slots: 8_000,
        ..Config::paper(load)
    });
    net.run(0);
    let mut acts = [0u64; 8];
    for p in net.ports() {
        for (a, x) in acts.iter_mut().zip(p.acts) {
            *a += x;
        }
    }
    let saq: u64 = net.ports().map(|p| p.saq_sent).sum();
    eprintln!(
        "ignore {} alloc {} refresh {} drop {} gone {}; packets sent from SAQs {saq}; {:?}",
        acts[1],
        acts[2],
        acts[3],
        acts[4],
        acts[5],
        net.stats()
    );
}
