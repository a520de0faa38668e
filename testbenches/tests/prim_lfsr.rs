//! `prim_lfsr`: equivalence of the model twin and the RTL, coverage, and a
//! directed check of the maximal period through the RTL.

mod support;

use model::prim_lfsr::{PrimLfsr, PrimLfsrConfig};
use model::Block;

#[test]
fn equivalence_random() {
    support::equivalence::<PrimLfsr>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<PrimLfsr>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<PrimLfsr>();
}

/// The short variant (x^7 + x^6 + 1, 3 steps a cycle) comes back to its
/// seed after exactly 127 enabled cycles (3 is prime to 127) and not before;
/// the scenario runs in lockstep with the RTL in `tests/scenarios.rs`.
#[test]
fn short_variant_has_period_127() {
    let stim = testbenches::prim::scenario::lfsr_period();
    let p = stim.params;
    let mut m = PrimLfsr::new(&p, &PrimLfsrConfig {});
    let (mut en, mut back) = (0, Vec::new());
    for c in &stim.cycles {
        let model::stim::Cycle::Drive(i) = c else {
            unreachable!()
        };
        m.step(i);
        en += u32::from(i.en_i);
        if i.en_i && m.lfsr().state == p.seed {
            back.push(en);
        }
    }
    assert_eq!(back, vec![127, 254]);
}
