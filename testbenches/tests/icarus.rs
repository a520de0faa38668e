//! A second simulator: the golden vectors (inputs and the model's expected
//! outputs, every cycle) replayed on the RTL under Icarus Verilog by a
//! self-checking testbench generated from the port declaration. Icarus is a
//! 4-state simulator: an X or Z on any output is a mismatch.

mod support;

use model::arbiter::Arbiter;
use model::credit::Credit;
use model::mmu::{Mmu, MmuParams};
use model::pfc::Pfc;
use model::stim::Stimulus;
use model::Block;
use testbenches::Bench;

fn check<B: Bench>(stim: &Stimulus<B>, name: &str)
where
    B::Params: 'static,
{
    let dir = support::out_dir()
        .join("icarus")
        .join(format!("{}-{name}", B::NAME));
    match cosim::golden::icarus(stim, &dir) {
        Ok(Ok(n)) => assert!(n >= stim.cycles.len()),
        Ok(Err(report)) => panic!(
            "{} {name}: Icarus disagrees with the golden model:\n{report}",
            B::NAME
        ),
        Err(e) => panic!("{e:#}"),
    }
}

/// Every directed scenario of `B`, a random run of `cycles` cycles on each
/// variant that `keep` selects, and one on the default configuration.
fn under_icarus<B: Bench>(cycles: usize, keep: impl Fn(&B::Params) -> bool)
where
    B::Params: 'static,
{
    for s in B::scenarios() {
        check(&(s.build)(), s.name);
    }
    for (k, v) in B::variants().into_iter().enumerate() {
        if !keep(&v) {
            continue;
        }
        let stim = testbenches::generate::<B>(&v, 7 * k as u64 + 1, cycles, None);
        let label = model::Params::label(&stim.params);
        check(&stim, &format!("random-{label}"));
    }
    let p = B::variants()[0].clone();
    check(
        &testbenches::generate::<B>(&p, 3, cycles, Some(&B::default_config(&p))),
        "default",
    );
}

#[test]
fn mmu_under_icarus() {
    under_icarus::<Mmu>(3000, |_| true);
}

#[test]
fn pfc_under_icarus() {
    under_icarus::<Pfc>(3000, |_| true);
}

#[test]
fn credit_under_icarus() {
    under_icarus::<Credit>(2000, |_| true);
}

/// Icarus interprets the N = 32 and 64 arbiters at a few cycles per second;
/// the random runs take N <= 16 (the directed scenarios are N = 4 and 8).
#[test]
fn arbiter_under_icarus() {
    under_icarus::<Arbiter>(1000, |p| p.n <= 16);
}

#[test]
fn the_icarus_testbench_catches_a_wrong_expectation() {
    // Vectors whose expected outputs are wrong in one cycle must fail.
    let p = MmuParams::default();
    let stim = testbenches::generate::<Mmu>(&p, 5, 300, Some(&Mmu::default_config(&p)));
    let dir = support::out_dir().join("icarus/mmu-corrupted");
    cosim::golden::write(&stim, &dir).unwrap();
    let path = dir.join("out.hex");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let l = &mut lines[150];
    let last = l.pop().unwrap();
    l.push(if last == '0' { '1' } else { '0' });
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let files = cosim::golden::rtl_files(&cosim::golden::default_rtl_dir(), Mmu::NAME).unwrap();
    let ok = std::process::Command::new("iverilog")
        .args(["-g2012", "-o", "sim", "tb.v"])
        .args(&files)
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(ok.success());
    let out = std::process::Command::new("vvp")
        .args(["-n", "sim"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("MISMATCH cycle 148 verdict_o"), "{out}");
}
