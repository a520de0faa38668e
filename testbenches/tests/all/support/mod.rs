//! Shared harness of the equivalence tests.

#![allow(dead_code)]

use cosim::lockstep::{self, Options, Outcome, Waves};
use model::stim::Stimulus;
use model::Params;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestError, TestRunner};
use std::path::{Path, PathBuf};
use testbenches::Bench;

/// Number of cases: `PROPTEST_CASES`, else `default`. At least one: with
/// none an equivalence test would pass without running anything, so a
/// value below 1 (or not a number) is refused, not taken.
pub fn cases(default: u32) -> u32 {
    match std::env::var("PROPTEST_CASES") {
        Err(_) => default,
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => panic!(
                "PROPTEST_CASES={v}: at least 1 case (an equivalence test of no case would \
                 pass on nothing); unset it for the default of {default}"
            ),
        },
    }
}

/// The workspace's `out/` directory.
pub fn out_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    root.canonicalize().unwrap_or(root).join("out")
}

fn replay_prefix() -> String {
    "cargo run --release -p switchsim --bin switchsim -- replay".into()
}

/// Runs `stim` in lockstep without waveforms; `Err` describes a mismatch.
pub fn lockstep_quiet<B: Bench>(stim: &Stimulus<B>) -> Result<u64, String> {
    let opts = Options {
        out_dir: out_dir(),
        waves: Waves::Never,
        context: 0,
        replay: replay_prefix(),
        ..Options::default()
    };
    match lockstep::run(stim, &opts) {
        Ok(Outcome::Pass(s)) => Ok(s.cycles),
        Ok(Outcome::Mismatch(m)) => Err(format!(
            "cycle {}: {}",
            m.cycle,
            m.diffs
                .first()
                .map(|d| format!("{} expected {} actual {}", d.signal, d.expected, d.actual))
                .or(m.rtl_error.clone())
                .unwrap_or_default()
        )),
        Ok(Outcome::Interrupted(_)) => Err("interrupted".into()),
        Err(e) => Err(format!("{e:#}")),
    }
}

/// A directed scenario's documented outcome (the check the scenarios test
/// runs on the RTL's outputs) on the golden model's outputs `outs`, then
/// model and RTL in lockstep on it.
pub fn directed<B: Bench>(
    stim: &Stimulus<B>,
    outs: &[B::Outputs],
    check: testbenches::ScenarioCheck<B>,
    what: &str,
) {
    check(stim, outs).unwrap_or_else(|e| panic!("{what}: {e}"));
    lockstep_or_report(stim, what);
}

/// Runs `stim` in lockstep; on a mismatch writes the repro and waveforms
/// and panics with the full report.
pub fn lockstep_or_report<B: Bench>(stim: &Stimulus<B>, what: &str) {
    let opts = Options {
        out_dir: out_dir().join("tests"),
        waves: Waves::OnMismatch,
        context: 8,
        replay: replay_prefix(),
        ..Options::default()
    };
    match lockstep::run(stim, &opts) {
        Ok(Outcome::Pass(_)) => {}
        Ok(Outcome::Mismatch(m)) => panic!("{what}:\n{m}"),
        Ok(Outcome::Interrupted(_)) => panic!("{what}: interrupted"),
        Err(e) => panic!("{what}: {e:#}"),
    }
}

/// The equivalence property: for `cases` random stimuli (configuration,
/// variant and traffic from the block's strategies, `cycles` each), model
/// and RTL agree on every output of every cycle. A failure is shrunk by
/// proptest, cut just after its first divergent cycle, and reported with
/// waveforms and a repro file; the proptest seed is kept in
/// `testbenches/regressions/<block>.proptest` and replayed first next time.
pub fn equivalence<B: Bench>(cases: u32, cycles: std::ops::RangeInclusive<usize>, illegal: bool)
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let variants = B::variants();
    let strategy = proptest::sample::select(variants)
        .prop_flat_map(move |p| testbenches::stimulus_strategy::<B>(&p, cycles.clone(), illegal));
    let persistence: &'static str = Box::leak(
        format!(
            "{}/regressions/{}.proptest",
            env!("CARGO_MANIFEST_DIR"),
            B::NAME
        )
        .into_boxed_str(),
    );
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(persistence))),
        max_shrink_iters: 1024,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |stim| {
        lockstep_quiet(&stim)
            .map(|_| ())
            .map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, minimal)) => {
            // proptest shrank the generated intents; now shrink the concrete
            // cycles (cut after the mismatch, remove chunks).
            let minimal = lockstep::minimize(&minimal, std::time::Duration::from_secs(60));
            lockstep_or_report(
                &minimal,
                &format!(
                    "{} equivalence failed (shrunk to {} cycles, variant {})",
                    B::NAME,
                    minimal.cycles.len(),
                    minimal.params.label()
                ),
            );
            panic!("the shrunk case passed when re-run: {why}");
        }
        Err(TestError::Abort(why)) => panic!("{why}"),
    }
}

/// Replays every repro file in `testbenches/regressions/<block>/` and
/// returns how many. A missing or empty folder fails: every block keeps at
/// least one stimulus known to catch a bug (see the folder's README).
pub fn regressions<B: Bench>() -> usize {
    regressions_in::<B>(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("regressions")
            .join(B::NAME),
    )
}

/// [`regressions`] of the folder `dir`.
pub fn regressions_in<B: Bench>(dir: &Path) -> usize {
    let rd = std::fs::read_dir(dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (every block keeps its regressions there)",
            dir.display()
        )
    });
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    // Only stimuli (and the manifests naming the mutant each was saved
    // from): anything else would be skipped silently, so it is refused.
    for f in &files {
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        assert!(
            ext == "stim" || ext == "mutant",
            "{}: not a stimulus (.stim) or a mutant manifest (.mutant); a regression folder \
             holds nothing else",
            f.display()
        );
    }
    let mut n = 0;
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "stim"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let stim = Stimulus::<B>::from_text(&text, &B::variants())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        lockstep_or_report(&stim, &format!("regression {}", f.display()));
        n += 1;
    }
    assert!(n > 0, "{}: no .stim regression to replay", dir.display());
    n
}

/// The random stimulus of the equivalence test reaches every coverage bin of
/// `B` (model-level, over 256 cases drawn like the equivalence cases, from a
/// fixed seed).
pub fn random_stimulus_covers_every_bin<B: Bench>() {
    use model::stim::Cycle;
    use proptest::strategy::ValueTree;
    let mut runner = testbenches::seeded_runner(2024);
    let strategy = proptest::sample::select(B::variants()).prop_flat_map(|p| {
        testbenches::stimulus_strategy::<B>(&p, testbenches::DEFAULT_CYCLES, true)
    });
    let bins = B::bins();
    let mut hits = vec![0u64; bins.len()];
    for _ in 0..256 {
        let s = strategy.new_tree(&mut runner).unwrap().current();
        let mut m = B::new(&s.params, &s.config);
        for c in &s.cycles {
            match c {
                Cycle::Drive(i) => {
                    let o = m.step(i);
                    m.sample(i, &o, &mut hits);
                }
                Cycle::Reset => m = B::new(&s.params, &s.config),
            }
        }
    }
    let holes: Vec<&str> = bins
        .iter()
        .zip(&hits)
        .filter(|(_, &h)| h == 0)
        .map(|(b, _)| *b)
        .collect();
    assert!(
        holes.is_empty(),
        "{}: bins never hit: {holes:?} ({hits:?})",
        B::NAME
    );
}

/// The `fields` tshark decodes from each frame of the pcap at `path`, one
/// row per frame, with the Ethernet FCS checked (`eth.fcs.status` is 1 for a
/// good one). `None` when tshark is not installed and
/// `SWITCHSIM_SKIP_TSHARK` is set; without that variable a missing tshark
/// fails the test (`make test` installs it: a run without it must say so
/// rather than pass on nothing).
pub fn tshark_fields(path: &Path, fields: &[&str]) -> Option<Vec<Vec<String>>> {
    let found = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var_os("SWITCHSIM_SKIP_TSHARK").is_some() {
            eprintln!(
                "SKIPPED (SWITCHSIM_SKIP_TSHARK set): tshark is not installed; wrote {} \
                 without decoding it",
                path.display()
            );
            return None;
        }
        panic!(
            "tshark is not installed (`make deps` installs it); set SWITCHSIM_SKIP_TSHARK=1 \
             to skip this check explicitly"
        );
    }
    let mut cmd = std::process::Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args(["-o", "eth.fcs:Always", "-o", "eth.check_fcs:TRUE"])
        .args(["-T", "fields", "-E", "separator=,"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let o = cmd.output().expect("tshark runs");
    assert!(
        o.status.success(),
        "tshark failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split(',').map(String::from).collect())
            .collect(),
    )
}
