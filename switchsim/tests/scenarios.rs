//! Every directed scenario of every block, as `switchsim trace` runs it:
//! model and RTL agree on it in lockstep, it is not empty, it declares its
//! documented outcome (`Scenario::check`) and the run shows it. (The
//! arbiter's Fig. 2 cases are also played on the whole STX system around
//! the RTL arbiter, in `testbenches/tests/all/stx_switch.rs`.)

use std::path::Path;

#[test]
fn every_blocks_scenarios() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scenarios");
    let mut failed = Vec::new();
    let names = testbenches::registry::names();
    for b in names {
        let v = switchsim::cmd::scenario_verdicts(b, &out).unwrap_or_else(|e| panic!("{b}: {e:#}"));
        let at_least = if b.starts_with("prim_") { 1 } else { 3 };
        assert!(v.len() >= at_least, "{b} has {} scenarios", v.len());
        for s in v {
            assert_eq!(s.block, b);
            assert!(s.cycles >= 10, "{b} {}: empty", s.name);
            if !s.checked {
                failed.push(format!("{b} scenario {}: no check of its outcome", s.name));
            }
            if let Err(e) = s.result {
                failed.push(format!("{b} scenario {}: {e}", s.name));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} outcomes not shown:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
