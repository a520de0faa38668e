//! A second simulator: the golden vectors (inputs and the model's expected
//! outputs, every cycle) replayed on the RTL under Icarus Verilog by a
//! self-checking testbench generated from the port declaration. Icarus is a
//! 4-state simulator: an X or Z on any output is a mismatch.

use crate::support;

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

/// Icarus interprets the RTL at a rate that falls with its size: a random
/// run gets about this many input words in all (1500 cycles of the MMU,
/// a few hundred of the N = 32 and 64 arbiters).
const WORD_BUDGET: usize = 12_000;

/// Blocks whose RTL Icarus runs far slower per input word than the
/// others', and by how much their runs are shortened. The STX switch holds
/// N adapters behind narrow ports: at N = 8 it took 22 ms per clock under
/// Icarus against 0.3 ms for the N = 4 arbiter, and its two runs at N = 8
/// were 82 of the 172 s of Icarus time in a `make test` (2026-11-27). A
/// quarter: 600 slots at N = 8; the test 110 -> 65 s on 2 cores.
const SLOW: &[(&str, usize)] = &[("stx_switch", 4)];

use testbenches::Job;

/// Every directed scenario of `B`, a random run on every variant (shorter
/// for wider ones) and one on the default configuration: one job each.
fn under_icarus<B: Bench>(jobs: &mut Vec<Job>) {
    for s in B::scenarios() {
        let (build, name) = (s.build, s.name);
        jobs.push(Box::new(move || {
            check(&build(), name);
            Ok(())
        }));
    }
    let cycles_of = |v: &B::Params| {
        use model::PortGroup;
        let slow = SLOW.iter().find(|s| s.0 == B::NAME).map_or(1, |s| s.1);
        (WORD_BUDGET / B::Inputs::layout(v).words.max(1) / slow).clamp(150, 3000)
    };
    for (k, v) in B::variants().into_iter().enumerate() {
        let cycles = cycles_of(&v);
        jobs.push(Box::new(move || {
            let stim = testbenches::generate::<B>(&v, 7 * k as u64 + 1, cycles, None);
            let label = model::Params::label(&stim.params);
            check(&stim, &format!("random-{label}"));
            Ok(())
        }));
    }
    let p = B::variants()[0].clone();
    let cycles = cycles_of(&p);
    jobs.push(Box::new(move || {
        let stim = testbenches::generate::<B>(&p, 3, cycles, Some(&B::default_config(&p)));
        check(&stim, "default");
        Ok(())
    }));
}

/// Every block of the registry, every variant (the N = 32 and 64 arbiters
/// too, on a short run), two Icarus runs at a time (each one process);
/// every failure reported, not only the first.
#[test]
fn every_block_under_icarus() {
    struct Each(usize, Vec<Job>);
    impl testbenches::registry::Visit for Each {
        fn visit<B: Bench>(&mut self) {
            under_icarus::<B>(&mut self.1);
            self.0 += 1;
        }
    }
    let mut e = Each(0, Vec::new());
    testbenches::registry::each(&mut e);
    assert_eq!(e.0, testbenches::registry::names().len());
    let failures = testbenches::two_at_a_time(e.1);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
