//! Every directed scenario of every block (`switchsim trace <block>`): model
//! and RTL agree on it, and it is not empty. What each scenario shows is
//! checked on the model in the block's own tests.

mod support;

use model::arbiter::Arbiter;
use model::Block;
use testbenches::Bench;

fn all<B: Bench>(at_least: usize) {
    let sc = B::scenarios();
    assert!(
        sc.len() >= at_least,
        "{} has {} scenarios",
        B::NAME,
        sc.len()
    );
    for s in sc {
        let stim = (s.build)();
        assert!(stim.cycles.len() >= 10, "{} {}: empty", B::NAME, s.name);
        support::lockstep_or_report(&stim, &format!("{} scenario {}", B::NAME, s.name));
    }
}

/// Every block of the registry: at least three scenarios each (one for a
/// primitive), every one equivalent in lockstep.
#[test]
fn every_blocks_scenarios() {
    struct Each(usize);
    impl testbenches::registry::Visit for Each {
        fn visit<B: Bench>(&mut self) {
            all::<B>(if B::NAME.starts_with("prim_") { 1 } else { 3 });
            self.0 += 1;
        }
    }
    let mut e = Each(0);
    testbenches::registry::each(&mut e);
    assert_eq!(e.0, testbenches::registry::names().len());
}

/// The Fig. 2 scenarios are recorded from the STX system: each must put
/// speculative requests and grants on the arbiter's ports.
#[test]
fn arbiter_scenarios() {
    assert!(Arbiter::scenarios().len() >= 6);
    for s in Arbiter::scenarios() {
        let stim = (s.build)();
        let mut m = Arbiter::new(&stim.params, &stim.config);
        let (mut spec, mut acks, mut grants, mut err) = (0, 0, 0, 0);
        for c in &stim.cycles {
            if let model::stim::Cycle::Drive(i) = c {
                spec += i.spec_valid_i.iter().filter(|&&v| v).count();
                let o = m.step(i);
                acks += o.ack_valid_o.iter().filter(|&&v| v).count();
                grants += o.gnt_valid_o.iter().filter(|&&v| v).count();
                err += usize::from(o.cfg_err_o);
            }
        }
        if stim.config.is_illegal() {
            // Flagged every cycle, and nothing granted or acknowledged.
            assert_eq!((err, acks, grants), (stim.cycles.len(), 0, 0), "{}", s.name);
            assert!(spec > 0, "{}", s.name);
        } else {
            assert!(
                spec > 0 && acks > 0 && grants > 0 && err == 0,
                "{}: {spec} {acks} {grants} {err}",
                s.name
            );
        }
    }
}
