//! The directed scenarios' checks, on the model: a check refuses another
//! scenario's outcome; the arbiter's Fig. 2 scenarios exercise STX. That
//! every scenario of every block runs in lockstep and shows its documented
//! outcome is `switchsim/tests/scenarios.rs` (through the library's
//! compiled runner, so this test binary compiles no RTL binding).

use model::arbiter::Arbiter;
use model::Block;
use testbenches::Bench;

/// The model's outputs of every cycle of a scenario (scenarios have no
/// reset cycles). Every scenario's outputs are the RTL's too: model and RTL
/// agree on it in lockstep (`switchsim/tests/scenarios.rs`).
fn outputs<B: Bench>(stim: &model::stim::Stimulus<B>) -> Vec<B::Outputs> {
    let mut m = B::new(&stim.params, &stim.config);
    stim.cycles
        .iter()
        .map(|c| match c {
            model::stim::Cycle::Drive(i) => m.step(i),
            model::stim::Cycle::Reset => panic!("a reset cycle in a scenario"),
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
    let outs = outputs(&short_stim);
    assert!((short.check.unwrap())(&short_stim, &outs).is_ok());
    assert!((ok.check.unwrap())(&short_stim, &outs).is_err());
    let quarter = by("dt-alpha-quarter");
    let steady = (by("dt-steady-state").build)();
    let outs = outputs(&steady);
    assert!((quarter.check.unwrap())(&steady, &outs).is_err());
    // At 32 ports and 4 lanes: the sized headroom and one packet short
    // tell each other apart, and the 16-queue steady state is not the
    // 4-queue one.
    let (ok32, short32) = (by("headroom-p32"), by("headroom-p32-short"));
    let (a, b) = ((ok32.build)(), (short32.build)());
    let (oa, ob) = (outputs(&a), outputs(&b));
    assert!((ok32.check.unwrap())(&a, &oa).is_ok());
    assert!((short32.check.unwrap())(&b, &ob).is_ok());
    assert!((ok32.check.unwrap())(&b, &ob).is_err());
    assert!((short32.check.unwrap())(&a, &oa).is_err());
    let st32 = by("dt-steady-state-p32");
    let s32 = (st32.build)();
    let o32 = outputs(&s32);
    assert!((st32.check.unwrap())(&s32, &o32).is_ok());
    assert!((by("dt-steady-state").check.unwrap())(&s32, &o32).is_err());
    use model::pfc::Pfc;
    let sc = Pfc::scenarios();
    let shared = sc.iter().find(|s| s.name == "shared-frame").unwrap();
    let refresh = (sc.iter().find(|s| s.name == "refresh").unwrap().build)();
    let outs = outputs(&refresh);
    assert!((shared.check.unwrap())(&refresh, &outs).is_err());
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
        if stim.config.is_illegal(&stim.params) {
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
