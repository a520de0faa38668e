//! A second simulator: the golden vectors (inputs and the model's expected
//! outputs, every cycle) replayed on the RTL under Icarus Verilog by a
//! self-checking testbench generated from the port declaration. Icarus is a
//! 4-state simulator: an X or Z on any output is a mismatch.

mod support;

use model::mmu::{Mmu, MmuParams};
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

#[test]
fn mmu_under_icarus() {
    for s in Mmu::scenarios() {
        check(&(s.build)(), s.name);
    }
    for v in Mmu::variants() {
        let stim = cosim::fuzz::case::<Mmu>(v.ports as u64 * 7 + 1, 3000);
        let label = model::Params::label(&stim.params);
        check(&stim, &format!("random-{label}"));
    }
    let p = MmuParams::default();
    check(
        &testbenches::generate::<Mmu>(&p, 3, 5000, Some(&Mmu::default_config(&p))),
        "default",
    );
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
