//! The RECN network of seed 002 (`studies::recn_net`) with every switch port
//! on the `recn_port` golden model and with every port on its verilated RTL
//! gives the same results: the same statistics and the same delivery log
//! (every packet, the slot it reached its end point), on a 16-end-point
//! folded butterfly of 4-port switches (80 ports, the default variant
//! d4s2c64rw16), uniform self-similar traffic and a hot spot.

use studies::recn_net::traffic::Pattern;
use studies::recn_net::{model_recn_network, Config};
use switchsim::study::recn::rtl_recn_network;

#[test]
fn recn_network_on_model_and_rtl_ports_is_identical() {
    let cases = [
        (0.5, Pattern::Uniform, 1),
        (0.9, Pattern::Uniform, 2),
        (0.8, Pattern::HotSpot { hot: 6 }, 3),
    ];
    for (load, pattern, seed) in cases {
        let cfg = Config {
            warmup: 500,
            slots: 2_500,
            seed,
            pattern,
            trace: true,
            ..Config::small(load)
        };
        assert_eq!(cfg.topology().endpoints, 16);
        let mut m = model_recn_network(cfg.clone());
        m.run(cfg.tail());
        let mut r = rtl_recn_network(cfg.clone(), seed).expect("verilated recn_port");
        r.run(cfg.tail());
        let what = format!("load {load} {pattern:?} seed {seed}");
        let (ms, rs) = (m.stats(), r.stats());
        assert!(ms.done > 1000, "{what}: {} delivered", ms.done);
        // RECN did something: SAQs allocated (and notifications sent).
        let allocs: u64 = m.ports().map(|p| p.acts[2]).sum();
        let saq: u64 = m.ports().map(|p| p.saq_sent).sum();
        assert!(
            allocs > 0 && saq > 0 && ms.ntf_sent > 0,
            "{what}: {allocs} {saq}"
        );
        assert_eq!(ms, rs, "{what}: statistics differ");
        assert_eq!(m.deliveries().len(), r.deliveries().len(), "{what}");
        for (k, (a, b)) in m.deliveries().iter().zip(r.deliveries()).enumerate() {
            assert_eq!(a, b, "{what}: delivery {k} differs");
        }
        assert_eq!(m.hash(), r.hash());
        let cyc = |it: &mut dyn Iterator<Item = u64>| it.sum::<u64>();
        assert_eq!(
            cyc(&mut m.ports().map(|p| p.cycles)),
            cyc(&mut r.ports().map(|p| p.cycles)),
            "{what}: clock cycles"
        );
        let acts = |n: &[[u64; 8]]| {
            n.iter().fold([0u64; 8], |mut a, x| {
                for k in 0..8 {
                    a[k] += x[k];
                }
                a
            })
        };
        assert_eq!(
            acts(&m.ports().map(|p| p.acts).collect::<Vec<_>>()),
            acts(&r.ports().map(|p| p.acts).collect::<Vec<_>>()),
            "{what}: notification actions"
        );
    }
}
