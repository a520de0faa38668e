//! `prim_lfsr`: equivalence of the model twin and the RTL, coverage, and a
//! directed check of the maximal period through the RTL.

use crate::support;

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

/// A file in a regression folder that is not a stimulus (or the manifest
/// of the mutant one was saved from) is refused, not skipped.
#[test]
fn a_regression_folder_holds_only_stimuli() {
    let dir = support::out_dir().join("prim_lfsr_regressions");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ours = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions/prim_lfsr");
    for e in std::fs::read_dir(ours).unwrap() {
        let f = e.unwrap().path();
        std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
    }
    assert!(support::regressions_in::<PrimLfsr>(&dir) >= 1);
    std::fs::write(dir.join("case-7.stm"), "a stimulus saved with a typo").unwrap();
    let why = std::panic::catch_unwind(|| support::regressions_in::<PrimLfsr>(&dir))
        .expect_err("a non-stimulus file was skipped silently");
    let why = why.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        why.contains("case-7.stm") && why.contains("not a stimulus"),
        "{why}"
    );
}

/// `PROPTEST_CASES=0` would make every equivalence test pass on nothing:
/// it is refused with the reason (this test's own binary, run again).
#[test]
fn zero_cases_are_refused() {
    let o = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "prim_lfsr::equivalence_random",
            "--exact",
            "--test-threads",
            "1",
        ])
        .env("PROPTEST_CASES", "0")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "PROPTEST_CASES=0 passed:\n{out}");
    assert!(out.contains("at least 1 case"), "{out}");
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<PrimLfsr>();
}

/// The short variant (x^7 + x^6 + 1, 3 steps a cycle) comes back to its
/// seed after exactly 127 enabled cycles (3 is prime to 127) and not before;
/// the scenario runs in lockstep with the RTL in `switchsim/tests/scenarios.rs`.
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
