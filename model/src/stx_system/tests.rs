//! System-level tests of the STX switch with the golden arbiter model.

use super::traffic::{Bernoulli, Script};
use super::*;

fn system(n: usize, r: usize, rtt: u64, stx: bool, measure: (u64, u64)) -> System<ModelArbiter> {
    let cfg = Config {
        n,
        r,
        rtt,
        stx,
        iters: 6,
        measure,
        trace: true,
    };
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
