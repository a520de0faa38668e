//! Every directed scenario of every block (`switchsim trace <block>`): model
//! and RTL agree on it, it is not empty, it declares its documented outcome
//! (`Scenario::check`), and the RTL's outputs of the run show it. (The
//! arbiter's Fig. 2 cases are also played on the whole STX system around
//! the RTL arbiter, in `stx_switch.rs`.)

mod support;

use model::arbiter::Arbiter;
use model::Block;
use testbenches::Bench;

/// Runs every scenario of `B`; the documented outcomes the RTL's outputs do
/// not show are added to `failed` (all of them reported at the end, not
/// only the first).
fn all<B: Bench>(at_least: usize, failed: &mut Vec<String>) {
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
        let Some(check) = s.check else {
            failed.push(format!(
                "{} scenario {}: no check of its outcome",
                B::NAME,
                s.name
            ));
            continue;
        };
        let outs = rtl_outputs(&stim);
        if let Err(e) = check(&stim, &outs) {
            failed.push(format!("{} scenario {} on the RTL: {e}", B::NAME, s.name));
        }
    }
}

/// The RTL's outputs of every cycle of `stim` (reset cycles included).
fn rtl_outputs<B: Bench>(stim: &model::stim::Stimulus<B>) -> Vec<B::Outputs> {
    use model::PortGroup;
    let mut rtl = cosim::rtl::Rtl::<B>::new(&stim.params, &stim.config, stim.seed, None)
        .expect("the RTL starts");
    rtl.reset(cosim::lockstep::POWER_ON_RESET as usize)
        .expect("reset");
    stim.cycles
        .iter()
        .map(|c| match c {
            model::stim::Cycle::Drive(i) => rtl.step(i).expect("RTL cycle"),
            model::stim::Cycle::Reset => {
                rtl.reset(1).expect("reset");
                B::Outputs::unpack(&stim.params, rtl.outputs())
            }
        })
        .collect()
}

/// The checks bite: a scenario's documented outcome is refused on outputs
/// that do not show it (here: another scenario's).
#[test]
fn a_scenario_check_refuses_the_wrong_outcome() {
    use model::mmu::Mmu;
    let sc = Mmu::scenarios();
    let by = |n: &str| sc.iter().find(|s| s.name == n).unwrap();
    let (ok, short) = (by("headroom"), by("headroom-short"));
    let short_stim = (short.build)();
    let outs = rtl_outputs(&short_stim);
    assert!((short.check.unwrap())(&short_stim, &outs).is_ok());
    assert!((ok.check.unwrap())(&short_stim, &outs).is_err());
    let quarter = by("dt-alpha-quarter");
    let steady = (by("dt-steady-state").build)();
    let outs = rtl_outputs(&steady);
    assert!((quarter.check.unwrap())(&steady, &outs).is_err());
    use model::pfc::Pfc;
    let sc = Pfc::scenarios();
    let shared = sc.iter().find(|s| s.name == "shared-frame").unwrap();
    let refresh = (sc.iter().find(|s| s.name == "refresh").unwrap().build)();
    let outs = rtl_outputs(&refresh);
    assert!((shared.check.unwrap())(&refresh, &outs).is_err());
}

/// Every block of the registry: at least three scenarios each (one for a
/// primitive), every one equivalent in lockstep.
#[test]
fn every_blocks_scenarios() {
    struct Each(usize, Vec<String>);
    impl testbenches::registry::Visit for Each {
        fn visit<B: Bench>(&mut self) {
            all::<B>(
                if B::NAME.starts_with("prim_") { 1 } else { 3 },
                &mut self.1,
            );
            self.0 += 1;
        }
    }
    let mut e = Each(0, Vec::new());
    testbenches::registry::each(&mut e);
    assert_eq!(e.0, testbenches::registry::names().len());
    assert!(
        e.1.is_empty(),
        "{} outcomes not shown:\n{}",
        e.1.len(),
        e.1.join("\n")
    );
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
