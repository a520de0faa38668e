//! The command line as a user meets it: exit codes (0 agree, 1 mismatch,
//! 2 bad input), one-line errors that name the field, value and range, and
//! never a panic on user input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn switchsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchsim"))
        .args(args)
        .current_dir(scratch())
        .output()
        .expect("switchsim runs")
}

fn scratch() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The last line of stdout as JSON.
fn json(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().last().unwrap_or("");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Exit code 2, a single `error:` line, no panic.
fn assert_bad_input(o: &Output, needles: &[&str]) {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(2), "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() <= 2, "error is not short:\n{err}");
    for n in needles {
        assert!(err.contains(n), "error lacks `{n}`:\n{err}");
    }
}

#[test]
fn run_passes_and_prints_coverage() {
    let o = switchsim(&["run", "mmu", "--cycles", "3000", "--seed", "4"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("PASS mmu p4cw16 seed 4: 3000 cycles"), "{out}");
    assert!(out.contains("coverage:"), "{out}");
}

#[test]
fn run_json_is_machine_readable() {
    let o = switchsim(&["run", "mmu", "--cycles", "500", "--json"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out.lines().count(), 1, "one JSON document: {out}");
    let v = json(&o);
    assert_eq!(v["passed"], true);
    assert_eq!(v["cycles"], 500);
    assert!(v["peak_rss_kib"].as_u64().unwrap() > 0);
}

/// A failing `--json` has the same top-level keys as a passing one.
#[test]
fn run_json_has_the_same_keys_passing_or_failing() {
    let pass = json(&switchsim(&["run", "mmu", "--cycles", "300", "--json"]));
    let o = switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "300",
        "--json",
        "--inject-fault",
        "thr_o@100",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let fail = json(&o);
    assert_eq!(fail["passed"], false);
    assert_eq!(fail["mismatch"]["cycle"], 100);
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&pass), keys(&fail));
}

/// A real mismatch (a fault injected into the model's outputs) gives exit
/// code 1 and the report: cycle, signal, expected and actual, seed, repro.
#[test]
fn a_mismatch_exits_1_with_the_report() {
    let o = switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "2000",
        "--seed",
        "3",
        "--inject-fault",
        "thr_o@1500",
        "--out",
        "fault-out",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("MISMATCH in mmu (p4cw16) at model step 1500, RTL clock 1502"),
        "{out}"
    );
    assert!(out.contains("signal:     thr_o"), "{out}");
    assert!(out.contains("seed:       3"), "{out}");
    assert!(out.contains("repro.stim"), "{out}");
    assert!(out.contains("merged.gtkw"), "{out}");
}

/// An enumerated output reads by its names in the mismatch report (both
/// sides), not as bare numbers.
#[test]
fn a_mismatch_on_an_enumeration_names_the_values() {
    let o = switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "600",
        "--seed",
        "3",
        "--inject-fault",
        "verdict_o@500",
        "--out",
        "fault-enum-out",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("signal:     verdict_o"), "{out}");
    let names = model::mmu::Verdict::NAMES;
    for side in ["expected:", "actual:"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(side))
            .unwrap_or_else(|| panic!("no {side} line:\n{out}"));
        assert!(
            names.iter().any(|n| line.contains(&format!(" ({n})"))),
            "{line}"
        );
    }
}

/// An output folder that cannot be written does not hide a mismatch: the
/// verdict and the first divergence reach stdout (exit 1), with a line
/// saying what could not be written.
#[test]
fn an_unwritable_output_folder_does_not_hide_a_mismatch() {
    let dir = scratch();
    let blocker = dir.join("not-a-dir");
    std::fs::write(&blocker, "a file where the output folder would go").unwrap();
    let out_arg = blocker.join("out");
    let o = switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "600",
        "--inject-fault",
        "thr_o@200",
        "--out",
        out_arg.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("MISMATCH in mmu (p4cw16) at model step 200, RTL clock 202"),
        "{out}"
    );
    assert!(out.contains("signal:     thr_o"), "{out}");
    assert!(out.contains("not written:"), "{out}");
    assert!(std::fs::read(&blocker).is_ok(), "the blocking file is kept");
}

#[test]
fn bad_configuration_names_field_value_and_range() {
    let dir = scratch();
    let f = dir.join("bad.toml");
    std::fs::write(&f, "alpha = 9\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["alpha = 9", "-8..=7"],
    );
    std::fs::write(&f, "hdrm_cells = [64, 70000, 0, 64]\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["hdrm_cells", "70000", "0..=65535"],
    );
    std::fs::write(&f, "hdrm_cells = [0, 1000, 1000, 1000]\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["cfg_buf_cells_i", "exceed the buffer"],
    );
    // An integer for a vector field sets every element.
    std::fs::write(&f, "hdrm_cells = 600\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &[
            "headroom [600, 600, 600, 600] (sum 2400)",
            "exceed the buffer",
        ],
    );
    std::fs::write(&f, "hdrm_cells = [1, 2]\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["hdrm_cells", "expected 4 values, found 2"],
    );
    std::fs::write(&f, "xoff = 3\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["unknown field `xoff`", "xon_cells"],
    );
    std::fs::write(&f, "this is not toml").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["not valid TOML"],
    );
    // File, line and column, on one line.
    std::fs::write(&f, "xon_cells = 3\nalpha = \"oops\n").unwrap();
    let o = switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]);
    assert_bad_input(&o, &["bad.toml:2:", "not valid TOML"]);
    assert_eq!(text(&o).1.trim().lines().count(), 1, "{:?}", text(&o));
    // A negative number says the legal range.
    std::fs::write(&f, "buf_cells = -5\n").unwrap();
    assert_bad_input(
        &switchsim(&["run", "mmu", "--config", f.to_str().unwrap()]),
        &["-5", "0..=65535"],
    );
}

#[test]
fn bad_arguments_and_files_exit_2() {
    assert_bad_input(&switchsim(&["run", "nosuch"]), &["unknown block `nosuch`"]);
    assert_bad_input(
        &switchsim(&["run", "mmu", "--variant", "p3"]),
        &["unknown variant `p3`"],
    );
    assert_bad_input(
        &switchsim(&["replay", "does-not-exist.stim"]),
        &["cannot read"],
    );
    assert_bad_input(
        &switchsim(&["trace", "mmu", "nosuch"]),
        &["unknown scenario"],
    );
    assert_bad_input(&switchsim(&["fuzz", "mmu"]), &["give a budget"]);
    let o = switchsim(&["fuzz", "mmu", "--cases", "1", "--shard", "3/2"]);
    assert_eq!(o.status.code(), Some(2));
    let dir = scratch();
    let f = dir.join("bad.stim");
    std::fs::write(
        &f,
        "# switchsim stimulus v2\nblock mmu\nvariant p4cw16\nconfig cfg_buf_cells_i=1\ncycles 0\nend\n",
    )
    .unwrap();
    assert_bad_input(
        &switchsim(&["replay", f.to_str().unwrap()]),
        &["line 4", "configuration field", "missing"],
    );
    assert_bad_input(&switchsim(&["config", "all"]), &["`all` is not valid here"]);
    assert_bad_input(&switchsim(&["trace", "all"]), &["`all` is not valid here"]);
    assert_bad_input(&switchsim(&["run", "nosuch"]), &["known: mmu"]);
}

/// Empty budgets run nothing and say so (exit 2) instead of passing.
#[test]
fn empty_budgets_are_refused() {
    for args in [
        &["run", "mmu", "--cycles", "0"][..],
        &["fuzz", "mmu", "--cases", "0"],
        &["fuzz", "mmu", "--time", "0s"],
        &["fuzz", "mmu", "--cases", "2", "--cycles", "0"],
    ] {
        let o = switchsim(args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {out}{err}");
        assert!(!out.contains("PASS"), "{args:?}: {out}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A closed pipe ends the process quietly (no panic, no exit 101).
#[test]
fn a_closed_pipe_is_not_a_panic() {
    use std::process::Stdio;
    for args in [
        &["run", "mmu", "--cycles", "20000"][..],
        &["trace", "pfc", "refresh"],
        &["fuzz", "mmu", "--cases", "3", "--cycles", "300"],
    ] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_switchsim"))
            .args(args)
            .current_dir(scratch())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(c.stdout.take()); // the reader goes away at once
        let o = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(101), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
    }
}

/// A stimulus file cut short, grown, corrupted or of an unknown version is
/// refused (exit 2, with what is wrong), never replayed as a shorter run.
#[test]
fn a_truncated_or_corrupted_repro_is_refused() {
    let dir = scratch();
    let o = switchsim(&["trace", "mmu", "headroom", "--out", "trunc"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let good = std::fs::read_to_string(dir.join("trunc/mmu-headroom/scenario.stim")).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let write = |name: &str, body: String| {
        let f = dir.join(name);
        std::fs::write(&f, body).unwrap();
        f
    };
    // Cut at a line boundary, before the end.
    let cut = write("cut.stim", lines[..lines.len() / 2].join("\n") + "\n");
    assert_bad_input(
        &switchsim(&["replay", cut.to_str().unwrap()]),
        &["cut short"],
    );
    // Grown by a cycle (checksum and length disagree).
    let mut grown: Vec<&str> = lines.clone();
    grown.insert(lines.len() - 1, "c");
    let grown = write("grown.stim", grown.join("\n") + "\n");
    assert_bad_input(
        &switchsim(&["replay", grown.to_str().unwrap()]),
        &["checksum"],
    );
    // One digit changed.
    let corrupt = write(
        "corrupt.stim",
        good.replacen("arr_len_i=4", "arr_len_i=5", 1),
    );
    assert_bad_input(
        &switchsim(&["replay", corrupt.to_str().unwrap()]),
        &["checksum"],
    );
    // A bare `end` (edited by hand) with a cycle dropped: the length check.
    let mut short: Vec<&str> = lines[..lines.len() - 2].to_vec();
    short.push("end");
    let short = write("short.stim", short.join("\n") + "\n");
    assert_bad_input(
        &switchsim(&["replay", short.to_str().unwrap()]),
        &["cut short or grown"],
    );
    // An unknown format version.
    let v9 = write("v9.stim", good.replacen("stimulus v2", "stimulus v9", 1));
    assert_bad_input(
        &switchsim(&["replay", v9.to_str().unwrap()]),
        &["`v9`", "not known"],
    );
    // The whole file still replays.
    let whole = write("whole.stim", good);
    assert_eq!(
        switchsim(&["replay", whole.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
}

/// `replay` validates the configuration as `run --config` does.
#[test]
fn replay_refuses_what_config_refuses() {
    let dir = scratch();
    let o = switchsim(&["trace", "credit", "bdp-toy", "--out", "val"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let good = std::fs::read_to_string(dir.join("val/credit-bdp-toy/scenario.stim")).unwrap();
    // quantum = 0 in every slot, the end mark made bare (a hand edit).
    let cfg = good
        .lines()
        .find(|l| l.starts_with("config "))
        .unwrap()
        .to_string();
    let q = cfg
        .split_whitespace()
        .find(|t| t.starts_with("cfg_quantum_i="))
        .unwrap()
        .to_string();
    let n = q.matches(',').count() + 1;
    let zero = format!("cfg_quantum_i=[{}]", vec!["0"; n].join(","));
    let mut bad = good.replacen(&q, &zero, 1);
    let end = bad.rfind("end crc32=").unwrap();
    bad.replace_range(end.., "end\n");
    let f = dir.join("quantum0.stim");
    std::fs::write(&f, bad).unwrap();
    assert_bad_input(
        &switchsim(&["replay", f.to_str().unwrap()]),
        &["quantum", "--illegal-config"],
    );
    let o = switchsim(&["replay", "--illegal-config", f.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(2), "{:?}", text(&o));
}

/// Two runs that differ only in their configuration get folders of their
/// own; a run leaves nothing stale beside its results.
#[test]
fn runs_do_not_overwrite_each_other() {
    let dir = scratch();
    let f = dir.join("other.toml");
    std::fs::write(&f, "xon_cells = 7\n").unwrap();
    let a = json(&switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "300",
        "--vcd-cycles",
        "50",
        "--out",
        "ow",
        "--json",
    ]));
    let b = json(&switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "300",
        "--vcd-cycles",
        "50",
        "--out",
        "ow",
        "--json",
        "--config",
        f.to_str().unwrap(),
    ]));
    let (va, vb) = (
        a["merged_vcd"].as_str().unwrap(),
        b["merged_vcd"].as_str().unwrap(),
    );
    assert_ne!(va, vb, "another configuration, another folder");
    assert!(dir.join(va).exists() && dir.join(vb).exists());
    // A failing run, then a passing run of the same stimulus: no repro left.
    let o = switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "300",
        "--out",
        "stale",
        "--json",
        "--inject-fault",
        "thr_o@50",
    ]);
    let repro = json(&o)["mismatch"]["repro"].as_str().unwrap().to_string();
    assert!(dir.join(&repro).exists());
    let o = switchsim(&[
        "run",
        "mmu",
        "--cycles",
        "300",
        "--out",
        "stale",
        "--vcd-cycles",
        "300",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        !dir.join(&repro).exists(),
        "a stale repro.stim was left beside new waveforms"
    );
}

#[test]
fn a_stimulus_file_replays_and_config_round_trips() {
    let dir = scratch();
    let cfg = switchsim(&["config", "mmu"]);
    assert_eq!(cfg.status.code(), Some(0));
    let f = dir.join("default.toml");
    std::fs::write(&f, &cfg.stdout).unwrap();
    let o = switchsim(&[
        "run",
        "mmu",
        "--config",
        f.to_str().unwrap(),
        "--cycles",
        "200",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = switchsim(&["trace", "mmu", "headroom"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("merged.gtkw"));
    let stim = dir.join("out/trace/mmu-headroom/scenario.stim");
    let o = switchsim(&["replay", stim.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

#[test]
fn shards_split_one_campaign_without_overlap() {
    // The cases shards 0/2 and 1/2 ran (their seeds, from the reports) are
    // disjoint and together those of one unsharded campaign.
    let seeds = |shard: &str, cases: &str, jobs: &str| -> Vec<u64> {
        let o = switchsim(&[
            "fuzz",
            "prim_timer",
            "--cases",
            cases,
            "--cycles",
            "50",
            "--seed",
            "5",
            "--shard",
            shard,
            "--jobs",
            jobs,
            "--json",
        ]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{err}");
        let v = json(&o);
        assert_eq!(v["shard"], shard);
        v["case_seeds"]
            .as_array()
            .expect("case_seeds")
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    let all = seeds("0/1", "12", "1");
    let s0 = seeds("0/2", "6", "2");
    let s1 = seeds("1/2", "6", "1");
    assert_eq!((all.len(), s0.len(), s1.len()), (12, 6, 6));
    assert!(s0.iter().all(|x| !s1.contains(x)), "shards overlap");
    let mut u: Vec<u64> = s0.iter().chain(&s1).copied().collect();
    u.sort();
    let mut a = all.clone();
    a.sort();
    assert_eq!(u, a, "the shards are not one campaign");
    // And a shard's cases are every second one of the campaign's.
    assert_eq!(
        s1,
        all.iter().skip(1).step_by(2).copied().collect::<Vec<_>>()
    );
}

/// `fuzz --jobs 2` runs the same cases and gives the same report as
/// `--jobs 1` (apart from the time taken).
#[test]
fn fuzz_jobs_give_the_same_report() {
    let run = |jobs: &str| {
        let o = switchsim(&[
            "fuzz", "all", "--cases", "6", "--cycles", "500", "--seed", "11", "--jobs", jobs,
            "--json",
        ]);
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                let o = v.as_object_mut().unwrap();
                o.remove("seconds");
                o.remove("cycles_per_second");
                v
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (run("1"), run("2"));
    assert_eq!(
        a.len(),
        testbenches::registry::names().len(),
        "one report per block"
    );
    assert!(a.iter().all(|r| r["cases"] == 6));
    assert_eq!(a, b);
}

/// A PFC run writes the frames it transmitted as a pcap file (nanosecond
/// timestamps); every record is a 64-byte PFC frame with its FCS.
#[test]
fn pfc_run_writes_a_pcap_of_its_frames() {
    let o = switchsim(&[
        "run", "pfc", "--cycles", "4000", "--seed", "9", "--out", "pcap-out", "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let pcap = json(&o)["pcap"].as_str().unwrap().to_string();
    let bytes = std::fs::read(scratch().join(pcap)).unwrap();
    assert_eq!(&bytes[0..4], &0xa1b2_3c4du32.to_le_bytes());
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 1);
    let (mut at, mut n, mut last_ns) = (24, 0, 0u64);
    while at < bytes.len() {
        let w = |k: usize| u32::from_le_bytes(bytes[at + k..at + k + 4].try_into().unwrap());
        let ns = w(0) as u64 * 1_000_000_000 + w(4) as u64;
        let len = w(8) as usize;
        assert_eq!(len, 64);
        let f = &bytes[at + 16..at + 16 + len];
        assert_eq!(&f[0..6], &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x01]);
        assert_eq!(&f[12..16], &[0x88, 0x08, 0x01, 0x01]);
        assert!(ns > last_ns || n == 0, "timestamps increase");
        last_ns = ns;
        at += 16 + len;
        n += 1;
    }
    assert!(n > 0, "no frames in 4000 cycles");
    // A block without frames writes none.
    let o = switchsim(&[
        "run", "mmu", "--cycles", "500", "--out", "pcap-out", "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(json(&o)["pcap"].is_null());
}

/// `study stx --plot-only` draws an existing study CSV (and the paired
/// differences beside it) to SVGs and PNGs beside it.
#[test]
fn sweep_plot_only_writes_svg_and_png_beside_the_csv() {
    let dir = scratch().join("sweep-plot");
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("sweep.csv");
    let (svg, png) = (dir.join("sweep.svg"), dir.join("sweep.png"));
    let others = [
        dir.join("sweep_policies.svg"),
        dir.join("sweep_policies.png"),
        dir.join("sweep_load.svg"),
        dir.join("sweep_load.png"),
    ];
    for f in others.iter().chain([&svg, &png]) {
        let _ = std::fs::remove_file(f);
    }
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/");
    std::fs::copy(format!("{docs}stx_sweep.csv"), &csv).unwrap();
    std::fs::copy(
        format!("{docs}stx_sweep_paired.csv"),
        dir.join("sweep_paired.csv"),
    )
    .unwrap();
    let o = switchsim(&["study", "stx", "--plot-only", csv.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("wrote") && out.contains("sweep.svg") && out.contains("sweep.png"),
        "{out}"
    );
    assert!(others.iter().all(|f| f.exists()), "{out}");
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("R=8 analytic") && svg.contains("(d) NSTX service rate"));
    let pol = std::fs::read_to_string(&others[0]).unwrap();
    assert!(pol.contains("R2 ycf sr - R2 ocf sr"));
    let png = std::fs::read(&png).unwrap();
    let info = png::Decoder::new(png.as_slice()).read_info().unwrap();
    assert_eq!((info.info().width, info.info().height), (1280, 880));
}

/// A malformed sweep CSV, or a CSV named like its plot: one-line errors,
/// exit 2.
#[test]
fn sweep_plot_only_rejects_bad_input() {
    let dir = scratch().join("sweep-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let recorded = include_str!("../../docs/stx_sweep.csv");
    let csv = dir.join("bad.csv");
    let mut lines: Vec<&str> = recorded.lines().collect();
    let col = lines[0].split(',').position(|h| h == "load").unwrap();
    let mut fields: Vec<&str> = lines[2].split(',').collect();
    fields[col] = "0.3oo";
    let bad = fields.join(",");
    lines[2] = &bad;
    std::fs::write(&csv, lines.join("\n")).unwrap();
    assert_bad_input(
        &switchsim(&["sweep", "--plot-only", csv.to_str().unwrap()]),
        &["bad.csv:3", "column `load`", "0.3oo"],
    );
    assert!(!dir.join("bad.svg").exists() && !dir.join("bad.png").exists());
    std::fs::write(&csv, "experiment,r,policy,scheme,load,delay\nbernoulli,2\n").unwrap();
    assert_bad_input(
        &switchsim(&["sweep", "--plot-only", csv.to_str().unwrap()]),
        &["bad.csv:2", "2 fields, but the header has 6"],
    );
    let png = dir.join("plot.png");
    std::fs::write(&png, recorded).unwrap();
    assert_bad_input(
        &switchsim(&["sweep", "--plot-only", png.to_str().unwrap()]),
        &["cannot have the extension"],
    );
    // A study that could lose an acknowledged cell is refused before it
    // runs: RSQs of 8 per input, window RTT + 1 = 9.
    let out = dir.join("lossy.csv");
    assert_bad_input(
        &switchsim(&[
            "study",
            "stx",
            "--plan",
            "custom",
            "--n",
            "4",
            "--rtt",
            "8",
            "--egress-b",
            "8",
            "--out",
            out.to_str().unwrap(),
        ]),
        &["C + w <= B"],
    );
    assert!(!out.exists());
}

/// `--time` takes humantime durations (and bare seconds); a bad one is a
/// one-line error, exit 2.
#[test]
fn fuzz_time_is_a_duration() {
    assert_bad_input(
        &switchsim(&["fuzz", "mmu", "--time", "5x"]),
        &["`5x` is not a duration", "e.g. 90s, 5m"],
    );
    assert_bad_input(
        &switchsim(&["fuzz", "mmu", "--time", "5m30"]),
        &["`5m30`", "unit"],
    );
    for ok in ["1s", "1", "300ms"] {
        let o = switchsim(&["fuzz", "mmu", "--time", ok, "--cycles", "200", "--json"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "--time {ok}: {out}{err}");
    }
}

/// `--require-coverage` fails a campaign that agrees on every cycle but
/// leaves a bin unhit (one case of 50 cycles cannot reach the MMU's drop
/// and headroom bins), naming the holes; without it the same campaign
/// passes, and a budget that reaches every bin passes with it.
#[test]
fn require_coverage_fails_on_a_hole() {
    let small = [
        "fuzz", "mmu", "--cases", "1", "--cycles", "50", "--seed", "9",
    ];
    let o = switchsim(&[&small[..], &["--require-coverage"]].concat());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        out.contains("FAIL coverage:") && out.contains("never hit"),
        "{out}"
    );
    let o = switchsim(&small);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = switchsim(&[
        "fuzz",
        "mmu",
        "--cases",
        "64",
        "--seed",
        "9",
        "--require-coverage",
    ]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
}

/// `size`: a link to configurations in one step. The report shows the
/// library's figures, the per-port headroom follows the cables, and the
/// TOML files it writes run in lockstep as they are.
#[test]
fn size_prints_the_sizing_and_writes_configurations_that_run() {
    let args = switchsim::size::SizeArgs {
        gbps: 400.0,
        cables: vec![10.0, 100.0, 300.0],
        mtu: 9216,
        ..switchsim::size::SizeArgs::default()
    };
    let want = switchsim::size::size(&args).unwrap();
    let o = switchsim(&[
        "size",
        "--speed",
        "400",
        "--cable",
        "10,100,300",
        "--mtu",
        "9216",
        "--write",
        "sized-mmu.toml",
        "--write-credit",
        "sized-credit.toml",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert_eq!(
        want.text,
        out.lines()
            .take(want.text.lines().count())
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    for (k, h) in want.headroom.iter().enumerate() {
        assert!(out.contains(&format!("ingress port {k}")), "{out}");
        assert!(
            out.contains(&format!("{} cells ({} B)", h.eta_cells, h.eta_cells * 256)),
            "{out}"
        );
    }
    let hdrm = &want.mmu.1.cfg_hdrm_cells_i;
    assert!(
        hdrm[0] < hdrm[1] && hdrm[1] < hdrm[2] && hdrm[3] == 0,
        "{hdrm:?}"
    );
    let mmu = std::fs::read_to_string(scratch().join("sized-mmu.toml")).unwrap();
    assert_eq!(mmu, want.mmu_toml());
    assert!(mmu.contains(&format!("hdrm_cells = {hdrm:?}")), "{mmu}");
    for (block, file) in [("mmu", "sized-mmu.toml"), ("credit", "sized-credit.toml")] {
        let o = switchsim(&["run", block, "--config", file, "--cycles", "2000"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{block}: {out}{err}");
        assert!(out.contains(&format!("PASS {block}")), "{out}");
    }
    // Without --write both configurations are printed.
    let o = switchsim(&["size", "--cable", "300"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        out.contains("# mmu configuration") && out.contains("# credit configuration"),
        "{out}"
    );
}

/// Thirty-two cables size the 32-port MMU (four lanes): one headroom per
/// port, and the configuration it writes runs in lockstep.
#[test]
fn size_writes_the_32_port_mmu() {
    let cables: Vec<&str> = ["10", "100", "300", "30"].repeat(8);
    let o = switchsim(&[
        "size",
        "--speed",
        "400",
        "--cable",
        &cables.join(","),
        "--write",
        "sized-mmu32.toml",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("variant p32cw16npipe4"), "{out}");
    let mmu = std::fs::read_to_string(scratch().join("sized-mmu32.toml")).unwrap();
    assert!(mmu.contains("variant = \"p32cw16npipe4\""), "{mmu}");
    let hdrm = mmu
        .lines()
        .find(|l| l.starts_with("hdrm_cells = ["))
        .expect("a headroom line");
    let list = &hdrm[..hdrm.find(']').unwrap()];
    assert_eq!(list.matches(',').count(), 31, "{hdrm}");
    let o = switchsim(&[
        "run",
        "mmu",
        "--config",
        "sized-mmu32.toml",
        "--cycles",
        "2000",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("PASS mmu p32cw16npipe4"), "{out}");
}

#[test]
fn size_bad_input_exits_2() {
    assert_bad_input(
        &switchsim(&["size", "--velocity", "1.5"]),
        &["velocity", "1.5", "(0, 1]"],
    );
    assert_bad_input(&switchsim(&["size", "--mtu", "10"]), &["mtu", "64..=65535"]);
    assert_bad_input(&switchsim(&["size", "--load", "1"]), &["load", "(0, 1)"]);
    assert_bad_input(&switchsim(&["size", "--cable", "10,x"]), &["--cable"]);
    assert_bad_input(
        &switchsim(&["size", "--cable", &["5"; 33].join(",")]),
        &["33 cable lengths", "32 ports"],
    );
    assert_bad_input(
        &switchsim(&["size", "--cable", "300", "--buffer-cells", "500"]),
        &["buffer-cells", "does not fit"],
    );
}

/// Two threads give the same verdict and the same first divergence (cycle,
/// signals, values, inputs) as one.
#[test]
fn two_threads_report_the_same_mismatch_as_one() {
    let run = |t: &str| {
        let o = switchsim(&[
            "run",
            "pfc",
            "--cycles",
            "5000",
            "--seed",
            "2",
            "--threads",
            t,
            "--json",
            "--inject-fault",
            "tx_valid_o@3000",
            "--out",
            "threads",
        ]);
        assert_eq!(o.status.code(), Some(1), "{:?}", text(&o));
        let v = json(&o);
        assert_eq!(v["threads"], t.parse::<u64>().unwrap());
        let m = &v["mismatch"];
        (m["cycle"].clone(), m["diffs"].clone(), m["inputs"].clone())
    };
    let one = run("1");
    assert_eq!(one.0, 3000);
    assert_eq!(one, run("2"));
    // And on a passing run, the same coverage.
    let cov = |t: &str| {
        json(&switchsim(&[
            "run",
            "credit",
            "--cycles",
            "3000",
            "--threads",
            t,
            "--json",
            "--out",
            "threads",
        ]))["coverage"]
            .clone()
    };
    assert_eq!(cov("1"), cov("2"));
}

/// A copy of the project's `rtl/` (and the equivalent-mutant list beside
/// it) under `dir`, with `edit` applied to `rtl/<file>`.
fn project_copy(dir: &Path, file: &str, edit: impl Fn(&str) -> String) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("rtl")).unwrap();
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    for e in std::fs::read_dir(src.join("rtl")).unwrap() {
        let e = e.unwrap().path();
        std::fs::copy(&e, dir.join("rtl").join(e.file_name().unwrap())).unwrap();
    }
    let eq = "docs/mutation-equivalent.txt";
    std::fs::copy(src.join(eq), dir.join(eq)).unwrap();
    let f = dir.join("rtl").join(file);
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, edit(&text)).unwrap();
}

fn switchsim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchsim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("switchsim runs")
}

/// `lint`, `synth` and `mutate` work on the RTL of the project they are run
/// in (found upwards from the current directory, as git finds its
/// repository), not on the tree the binary was built from; `mutate` builds
/// under its output folder; outside any project they say so (exit 2).
#[test]
fn hardware_commands_use_the_project_they_run_in() {
    let proj = scratch().join("project-copy");
    // A lint warning (an unused signal) and one more mutable line, in the
    // copy only.
    project_copy(&proj, "prim_sat_cnt.v", |t| {
        t.replacen("endmodule", "  wire extra_w = 1'b0 & 1'b1;\nendmodule", 1)
    });
    let sub = proj.join("docs");
    let lint = switchsim_in(&sub, &["lint", "prim_sat_cnt"]);
    let (out, err) = text(&lint);
    assert_eq!(
        lint.status.code(),
        Some(1),
        "the copy's fault is linted:\n{out}{err}"
    );
    assert!(format!("{out}{err}").contains("extra_w"), "{out}{err}");
    let clean = switchsim_in(
        &sub,
        &[
            "lint",
            "prim_sat_cnt",
            "--rtl",
            &format!("{}/../rtl", env!("CARGO_MANIFEST_DIR")),
        ],
    );
    assert_eq!(clean.status.code(), Some(0), "{:?}", text(&clean));
    // The mutant list is the copy's.
    let count = |o: &Output| String::from_utf8_lossy(&o.stdout).lines().count();
    let here = switchsim_in(&sub, &["mutate", "prim_sat_cnt", "--list"]);
    let built = switchsim(&["mutate", "prim_sat_cnt", "--list"]);
    assert!(
        count(&here) > count(&built),
        "{} vs {}",
        count(&here),
        count(&built)
    );
    // The campaign builds under --out, in the project it runs in, and kills
    // the mutant the block's regression stimulus was saved from.
    let manifest = std::fs::read_dir(format!(
        "{}/../testbenches/regressions/prim_lfsr",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .map(|e| e.unwrap().path())
    .find(|p| p.extension().is_some_and(|e| e == "mutant"))
    .unwrap();
    let id = std::fs::read_to_string(&manifest)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("id ").map(str::to_string))
        .unwrap();
    let m = switchsim_in(
        &proj,
        &[
            "mutate",
            "prim_lfsr",
            "--only",
            &id,
            "--cases",
            "2",
            "--out",
            "mut-out",
        ],
    );
    let (out, err) = assert_killed_alone(&m, "prim_lfsr", &id);
    assert!(
        proj.join("mut-out/mutate/prim_lfsr-only").is_dir(),
        "{out}{err}"
    );
    // Outside any project.
    let nowhere = std::env::temp_dir().join(format!("switchsim-nowhere-{}", std::process::id()));
    std::fs::create_dir_all(&nowhere).unwrap();
    for args in [
        &["lint"][..],
        &["synth", "prim_lfsr"],
        &["mutate", "prim_lfsr", "--list"],
    ] {
        let o = switchsim_in(&nowhere, args);
        assert_bad_input(&o, &["no rtl/ folder", "--rtl"]);
    }
    let _ = std::fs::remove_dir_all(&nowhere);
}

/// A mutation campaign on a block whose per-queue counters are off its
/// ports (the MMU's `q_priv_o`, `q_shr_o`, `q_hdr_o` are optional outputs
/// its RTL lacks): the unmutated RTL passes its kill set, and a wrong
/// per-queue counter is killed through the outputs that depend on it.
#[test]
fn mutate_checks_a_block_whose_state_is_off_its_ports() {
    let list = switchsim(&["mutate", "mmu", "--list"]);
    let (out, err) = text(&list);
    // The shared-cell count of a queue after its arrival, `+` made `-`.
    let id = out
        .lines()
        .find(|l| l.contains(":arith") && l.contains("shr_d[g*CW +: CW]  = as_v - a2"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no such mutant of mmu:\n{out}{err}"))
        .to_string();
    let m = switchsim(&[
        "mutate", "mmu", "--only", &id, "--cases", "2", "--out", "mut-mmu",
    ]);
    assert!(m.status.success(), "{:?}", text(&m));
    assert_killed_alone(&m, "mmu", &id);
}

/// The campaign `m` of `block` ran the one mutant `id`, and killed it.
/// Returns its stdout and stderr.
fn assert_killed_alone(m: &Output, block: &str, id: &str) -> (String, String) {
    let (out, err) = text(m);
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with(&format!("| {block} |")))
        .unwrap_or_else(|| panic!("no row:\n{out}{err}"))
        .split('|')
        .map(str::trim)
        .collect();
    // | block | mutants | stillborn | valid | equivalent | killed | survived |
    assert_eq!(
        (row[2], row[6], row[7]),
        ("1", "1", "0"),
        "mutant {id} not killed:\n{out}{err}"
    );
    (out, err)
}

/// `synth --check` (part of `make test`): every block elaborates without
/// a latch or a multiple driver (its default variant, a top level's
/// smallest; every variant in CI's synthesis job); a latch added to a copy
/// of the RTL fails it (exit 1), naming the block.
#[test]
fn no_block_has_a_latch() {
    let o = switchsim(&["synth", "--check"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    for b in ["mmu", "stx_switch", "prim_timer", "prim_ram_1r1w"] {
        assert!(
            out.contains(&format!("ok   {b} ")),
            "{b} not checked:\n{out}"
        );
    }
    let proj = scratch().join("latch-copy");
    project_copy(&proj, "prim_sat_cnt.v", |t| {
        t.replacen(
            "endmodule",
            "  reg latch_r;\n  always @* if (rst_ni) latch_r = 1'b1;\nendmodule",
            1,
        )
    });
    let o = switchsim_in(&proj, &["synth", "--check", "prim_sat_cnt"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(out.contains("FAIL prim_sat_cnt"), "{out}{err}");
}

/// `synth` counts a memory primitive's bits apart and keeps it out of the
/// flip-flops: a copy of `prim_timer` with a 20 x 8 `prim_ram_1r1w` inside
/// reports 160 memory bits and the timer's own 8 flip-flops (the RAM is a
/// black box); without its depth parameter the run stops, naming it.
#[test]
fn synth_counts_memory_primitives_apart() {
    let ram = "  wire [7:0] ram_q;\n  \
               prim_ram_1r1w #(.W(8), .D(20)) u_ram (.clk_i(clk_i), .rst_ni(rst_ni), \
               .we_i(load_i), .waddr_i(value_i[4:0]), .wdata_i(value_i[7:0]), \
               .re_i(tick_i), .raddr_i(count_q[4:0]), .rdata_o(ram_q));\n\
               endmodule";
    // The RAM's read feeds an output, so that synthesis keeps it.
    let with_ram = |t: &str, ram: &str| {
        t.replacen("endmodule", ram, 1).replacen(
            "assign expire_o  = !load_i && tick_i && count_q == ONE;",
            "assign expire_o  = !load_i && tick_i && count_q == ONE && ^ram_q;",
            1,
        )
    };
    let proj = scratch().join("ram-copy");
    project_copy(&proj, "prim_timer.v", |t| with_ram(t, ram));
    let o = switchsim_in(&proj, &["synth", "prim_timer"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| prim_timer | w8 |"))
        .unwrap_or_else(|| panic!("no row:\n{out}{err}"));
    let cols: Vec<&str> = row.split('|').map(str::trim).collect();
    // | block | variant | cells | flip-flops | muxes | memory bits | depth | s |
    assert_eq!(cols[4], "8", "{row}");
    assert_eq!(cols[6], "160", "{row}");
    assert!(cols[7].parse::<u32>().is_ok_and(|d| d > 0), "{row}");

    let proj = scratch().join("ram-copy-no-depth");
    project_copy(&proj, "prim_timer.v", |t| {
        with_ram(t, &ram.replace(", .D(20)", ""))
    });
    let o = switchsim_in(&proj, &["synth", "prim_timer"]);
    let (out, err) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("does not set both W and D"), "{out}{err}");
}

/// `synth --scale` on a block without a size of the seeds says so in one
/// line and fails, instead of writing an empty table.
#[test]
fn synth_scale_needs_a_block_with_a_scale() {
    let o = switchsim(&["synth", "--scale", "prim_lfsr"]);
    let (out, err) = text(&o);
    assert_ne!(o.status.code(), Some(0), "{out}{err}");
    assert!(err.contains("Block::scale"), "{out}{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `recn-net` on the small network writes its CSV and the five charts, and
/// refuses a load outside (0, 1] (exit 2).
#[test]
fn recn_net_small_writes_csv_and_charts() {
    let dir = scratch().join("recn-net");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = dir.join("rn");
    let o = switchsim(&[
        "recn-net",
        "--small",
        "--loads",
        "0.4",
        "--hot-loads",
        "0.6",
        "--warmup",
        "100",
        "--slots",
        "600",
        "--seeds",
        "1",
        "--variants",
        "none",
        "--out",
        stem.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let csv = std::fs::read_to_string(dir.join("rn.csv")).unwrap();
    // Three architectures at uniform 0.4, uniform 0.6 and hot spot 0.6.
    assert_eq!(csv.lines().count(), 1 + 3 * 3, "{csv}");
    for fig in ["fig2", "fig3", "fig4", "fig5", "hotspot"] {
        let svg = std::fs::read_to_string(dir.join(format!("rn_{fig}.svg"))).unwrap();
        assert!(svg.contains("RECN 2 VCs"), "{fig}");
        assert!(dir.join(format!("rn_{fig}.png")).exists());
    }
    let o = switchsim(&[
        "recn-net",
        "--loads",
        "1.5",
        "--out",
        stem.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("--loads: 1.5"), "{err}");
}
