//! The command line as a user meets it: exit codes (0 agree, 1 mismatch,
//! 2 bad input), one-line errors that name the field, value and range, and
//! never a panic on user input.

use std::path::PathBuf;
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
    let line = out.trim();
    assert!(line.starts_with('{') && line.ends_with('}'), "{out}");
    assert!(
        line.contains("\"passed\": true") && line.contains("\"cycles\": 500"),
        "{out}"
    );
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
    std::fs::write(&f, "block mmu\nvariant p4cw16\nconfig cfg_buf_cells_i=1\n").unwrap();
    assert_bad_input(
        &switchsim(&["replay", f.to_str().unwrap()]),
        &["line 3", "configuration field", "missing"],
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
    // The seeds of shard 0/2 and 1/2 are disjoint and together those of 0/1.
    let all: Vec<u64> = (0..8).map(|k| cosim::fuzz::case_seed(5, k)).collect();
    let s0: Vec<u64> = (0..4).map(|j| cosim::fuzz::case_seed(5, 2 * j)).collect();
    let s1: Vec<u64> = (0..4)
        .map(|j| cosim::fuzz::case_seed(5, 2 * j + 1))
        .collect();
    let mut u: Vec<u64> = s0.iter().chain(&s1).copied().collect();
    u.sort();
    let mut a = all.clone();
    a.sort();
    assert_eq!(u, a);
    let o = switchsim(&[
        "fuzz", "mmu", "--cases", "3", "--cycles", "300", "--shard", "1/4", "--json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("\"shard\": \"1/4\"") && out.contains("\"cases\": 3"),
        "{out}"
    );
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
    assert!(out.contains("\"pcap\": \""), "{out}");
    let bytes = std::fs::read(scratch().join("pcap-out/pfc-qcw8cw16-seed9/frames.pcap")).unwrap();
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
    let o = switchsim(&["run", "mmu", "--cycles", "500", "--out", "pcap-out"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(!scratch()
        .join("pcap-out/mmu-p4cw16-seed1/frames.pcap")
        .exists());
}

/// `size`: a link to configurations in one step. The report shows the
/// library's figures, the per-port headroom follows the cables, and the
/// TOML files it writes run in lockstep as they are.
#[test]
fn size_prints_the_sizing_and_writes_configurations_that_run() {
    let args = cosim::size::SizeArgs {
        gbps: 400.0,
        cables: vec![10.0, 100.0, 300.0],
        velocity: 0.65,
        mtu: 9216,
        response_ns: None,
        cell: 256,
        clock_ghz: 1.0,
        credit_interval: 2,
        speedup: 1.05,
        rtt_ns: None,
        load: 0.9,
        loss: 1e-6,
        switch_gbps: None,
        bus: 256,
        buffer_cells: None,
        lossless: 0x18,
    };
    let want = cosim::size::size(&args).unwrap();
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
        &switchsim(&["size", "--cable", "1,2,3,4,5,6,7,8,9"]),
        &["9 cable lengths", "8 ports"],
    );
    assert_bad_input(
        &switchsim(&["size", "--cable", "300", "--buffer-cells", "500"]),
        &["buffer-cells", "does not fit"],
    );
}
