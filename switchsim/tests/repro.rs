//! A real RTL bug, from the failing run to its repro files: a single-point
//! mutant of `rtl/mmu.v` (made by the mutation campaign's own operators,
//! built on the fly through `--rtl` as a designer's file is), run until it
//! diverges; then `repro.stim` replayed against the same RTL reaches the
//! same first divergence (cycle, signal, expected and actual), the shrunk
//! `repro-short.stim` still fails on the same signal in fewer cycles, and
//! both pass on the project's RTL (the bug is in the RTL, not in the
//! stimulus).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("repro");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn switchsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchsim"))
        .args(args)
        .current_dir(scratch())
        .output()
        .expect("switchsim runs")
}

/// The first divergence of a text report: cycle, signal, expected, actual.
fn first_diff(o: &Output) -> (u64, String, String, String) {
    let out = String::from_utf8_lossy(&o.stdout);
    let field = |k: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .unwrap_or_else(|| panic!("no `{k}` in:\n{out}"))
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    // "at cycle N", or "at model step N, RTL clock M" where the run is
    // aligned (a design without the optional outputs): the model's axis.
    let cycle = out
        .lines()
        .find_map(|l| {
            l.split(" at cycle ")
                .nth(1)
                .or_else(|| l.split(" at model step ").nth(1))
        })
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no mismatch cycle in:\n{out}"));
    (
        cycle,
        field("signal:"),
        field("expected:"),
        field("actual:"),
    )
}

/// A path the report names after `key`, under the scratch folder.
fn named(o: &Output, key: &str) -> PathBuf {
    let out = String::from_utf8_lossy(&o.stdout);
    let rel = out
        .lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `{key}` in:\n{out}"));
    scratch().join(rel)
}

/// `rtl/mmu.v` with the campaign's mutant that turns the release into an
/// addition, and the primitives it instantiates: the `--rtl` list.
fn mutant_rtl() -> String {
    let rtl = cosim::design::rtl_dir();
    let files = cosim::toolchain::rtl_files(&rtl, "mmu").unwrap();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let m = switchsim::mutate::operators::mutants(&text)
        .into_iter()
        .find(|m| m.op == "arith" && m.after.contains("min_cw(rel + rel_h"))
        .expect("the mutation operators still make the release mutant of mmu.v");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[m.line - 1] = &m.after;
    let top = scratch().join("mmu.v");
    std::fs::write(&top, lines.join("\n") + "\n").unwrap();
    std::iter::once(top)
        .chain(files[1..].iter().cloned())
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn a_real_rtl_bug_replays_to_the_same_first_divergence() {
    let rtl = mutant_rtl();
    let o = switchsim(&[
        "run", "mmu", "--cycles", "50000", "--seed", "5", "--rtl", &rtl, "--out", "bug",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the mutant is not caught:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let first = first_diff(&o);
    let repro = named(&o, "repro:");
    let short = named(&o, "shrunk:");
    assert!(repro.exists() && short.exists(), "{repro:?} {short:?}");
    // The replay line a user copies names the same RTL.
    let line = String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay:").map(str::to_string))
        .unwrap();
    assert!(line.contains(&format!("--rtl {rtl}")), "{line}");

    let replay = |file: &Path, rtl: Option<&str>| {
        let mut args = vec!["replay", file.to_str().unwrap(), "--out", "replayed"];
        if let Some(r) = rtl {
            args.extend(["--rtl", r]);
        }
        switchsim(&args)
    };
    let o = replay(&repro, Some(&rtl));
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(first_diff(&o), first, "repro.stim");

    let o = replay(&short, Some(&rtl));
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let s = first_diff(&o);
    assert_eq!(s.1, first.1, "repro-short.stim fails on another signal");
    assert!(
        s.0 < first.0,
        "the short window diverges at its cycle {}, no sooner than the run ({})",
        s.0,
        first.0
    );

    for f in [&repro, &short] {
        let o = replay(f, None);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{} fails on the project's RTL: {}",
            f.display(),
            String::from_utf8_lossy(&o.stdout)
        );
    }
}
