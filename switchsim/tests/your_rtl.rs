//! A designer's own RTL against the golden model (`docs/your-rtl.md`): a
//! copy of the project's MMU with every port renamed (its per-queue counters
//! are not on its ports: they are compared through state paths), and one more
//! register stage on two outputs only, so that the outputs have different
//! latencies. With the right map it passes; with a one-line bug it fails at
//! the step the model says, and the report names the designer's port; a
//! port of the wrong width is refused before anything runs.

use model::mmu::{Mmu, Verdict};
use model::stim::Cycle;
use model::Block;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn switchsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchsim"))
        .args(args)
        .output()
        .expect("switchsim runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn work() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/tests/your_rtl");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `text` with every whole identifier `from` replaced by `to`.
fn rename(text: &str, from: &str, to: &str) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + from.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(ident) || after.is_some_and(ident) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The project's ports and the designer's names for them.
const NAMES: &[(&str, &str)] = &[
    ("clk_i", "clk"),
    ("rst_ni", "rst_n"),
    ("arr_valid_i", "in_vld"),
    ("arr_port_i", "in_port"),
    ("arr_prio_i", "in_prio"),
    ("arr_len_i", "in_len"),
    ("dep_valid_i", "out_vld"),
    ("dep_port_i", "out_port"),
    ("dep_prio_i", "out_prio"),
    ("dep_len_i", "out_len"),
    ("drop_ll_o", "drops_lossless"),
    ("pause_o", "pfc_pause"),
];

/// The designer's MMU: `rtl/mmu.v` renamed (it has no `q_*_o`), with
/// `verdict` and `threshold` one register stage later.
fn their_mmu() -> String {
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl/mmu.v"))
        .unwrap();
    let mut s = src.replace("module mmu #(", "module their_mmu #(");
    for (ours, theirs) in NAMES {
        s = rename(&s, ours, theirs);
    }
    let decl = |s: &str, port: &str| {
        s.lines()
            .find(|l| l.contains("output reg") && l.trim_end().ends_with(&format!("{port},")))
            .unwrap_or_else(|| panic!("no `output reg` {port} in rtl/mmu.v"))
            .to_string()
    };
    for (port, reg) in [("verdict_o", "verdict"), ("thr_o", "threshold")] {
        let d = decl(&s, port);
        s = s.replacen(&d, &d.replace(port, reg), 1);
        s = rename(&s, port, &format!("{reg}_c"));
    }
    let stage = "  reg [2:0]    verdict_c;\n  reg [CW+6:0] threshold_c;\n\
        \x20 always @(posedge clk or negedge rst_n) begin\n\
        \x20   if (!rst_n) begin\n      verdict   <= 3'd0;\n      threshold <= {(CW+7){1'b0}};\n\
        \x20   end else begin\n      verdict   <= verdict_c;\n      threshold <= threshold_c;\n\
        \x20   end\n  end\n";
    let anchor = "  localparam integer Q   = 8 * P;\n";
    assert!(s.contains(anchor), "rtl/mmu.v changed: no `{anchor}`");
    s.replacen(anchor, &format!("{anchor}{stage}"), 1)
}

const MAP: &str = r#"top = "their_mmu"
clock = "clk"
reset = "rst_n"

[ports]
arr_valid_i = "in_vld"
arr_port_i = "in_port"
arr_prio_i = "in_prio"
arr_len_i = "in_len"
dep_valid_i = "out_vld"
dep_port_i = "out_port"
dep_prio_i = "out_prio"
dep_len_i = "out_len"
drop_ll_o = "drops_lossless"
pause_o = "pfc_pause"
verdict_o = { name = "verdict", latency = 1 }
thr_o = { name = "threshold", latency = 1 }
q_priv_o = false
q_shr_o = false
q_hdr_o = false

[state]
priv_q = "priv_q"
shr_q = "shr_q"
hdr_q = "hdr_q"
"#;

/// Writes the copy (with `edit` applied) and the map; returns their paths.
fn files(name: &str, edit: Option<(&str, &str)>, map: &str) -> (String, String) {
    let dir = work();
    let mut v = their_mmu();
    if let Some((from, to)) = edit {
        assert!(v.contains(from), "the edit `{from}` does not apply");
        v = v.replacen(from, to, 1);
    }
    let rtl = dir.join(format!("{name}.v"));
    std::fs::write(&rtl, v).unwrap();
    let m = dir.join(format!("{name}.toml"));
    std::fs::write(&m, map).unwrap();
    (rtl.display().to_string(), m.display().to_string())
}

#[test]
fn a_renamed_deeper_copy_passes_with_its_map() {
    let (rtl, map) = files("their_mmu", None, MAP);
    let out = work().join("pass");
    let o = run_theirs(&rtl, &map, "30000", &["--vcd-cycles", "300"], &out);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("PASS mmu p4cw16 seed 1: 30000 cycles"), "{t}");
    // The same map with the register stage forgotten (latency 0) fails on
    // the very first compared step: the pipeline shifts `verdict`.
    let map0 = work().join("their_mmu_l0.toml");
    std::fs::write(&map0, MAP.replace("latency = 1", "latency = 0")).unwrap();
    let o = run_theirs(
        &rtl,
        map0.to_str().unwrap(),
        "2000",
        &["--vcd-cycles", "0"],
        &out,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

/// `switchsim run mmu` on the designer's RTL `rtl` with the map `map`, for
/// `cycles` cycles, into `out`, with `extra` options.
fn run_theirs(rtl: &str, map: &str, cycles: &str, extra: &[&str], out: &Path) -> Output {
    let out = out.to_str().unwrap();
    let mut args = vec!["run", "mmu", "--rtl", rtl, "--map", map, "--cycles", cycles];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", out]);
    switchsim(&args)
}

/// The first step of the MMU's default run (seed 1) with a lossless drop.
fn first_lossless_drop(cycles: u64) -> i64 {
    let p = Mmu::variants()[0];
    let cfg = Mmu::default_config(&p);
    let stim = testbenches::run_of::<Mmu>(&p, 1, cycles, Some(&cfg));
    let cs = testbenches::materialize(&stim, 0, cycles).unwrap();
    let mut m = Mmu::new(&p, &cfg);
    for (k, c) in cs.iter().enumerate() {
        match c {
            Cycle::Reset => m = Mmu::new(&p, &cfg),
            Cycle::Drive(i) => {
                if m.step(i).verdict(0) == Verdict::Drop {
                    return k as i64;
                }
            }
        }
    }
    panic!("no lossless drop in {cycles} cycles of seed 1")
}

#[test]
fn a_one_line_bug_fails_at_its_step_under_the_designers_names() {
    // The lossless drop counter counts two per drop.
    let (rtl, map) = files(
        "their_mmu_bug",
        Some((
            "n_drop_ll = n_drop_ll + 4'd1;",
            "n_drop_ll = n_drop_ll + 4'd2;",
        )),
        MAP,
    );
    let out = work().join("bug");
    let o = run_theirs(&rtl, &map, "30000", &["--json"], &out);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let line = t.lines().find(|l| l.starts_with('{')).expect("a JSON line");
    let j: serde_json::Value = serde_json::from_str(line).unwrap();
    let m = &j["mismatch"];
    // drop_ll_o is registered: the step after the first drop shows it.
    let want = first_lossless_drop(30000) + 1;
    assert_eq!(m["cycle"].as_i64(), Some(want), "{t}");
    assert_eq!(m["rtl_clock"].as_u64(), Some(want as u64 + 2), "{t}");
    assert_eq!(m["diffs"][0]["signal"], "drops_lossless (drop_ll_o)", "{t}");
    assert_eq!(m["diffs"][0]["expected"], "16'd1", "{t}");
    assert_eq!(m["diffs"][0]["actual"], "16'd2", "{t}");
    // The repro replays to the same step on the same RTL.
    let repro = m["repro"].as_str().expect("a repro file");
    let o = switchsim(&[
        "replay",
        repro,
        "--rtl",
        &rtl,
        "--map",
        &map,
        "--out",
        out.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("at model step {want}, RTL clock {}", want + 2)),
        "{t}"
    );
}

#[test]
fn a_bug_in_a_counter_kept_off_the_ports_is_caught_through_its_state_path() {
    // A departure releases one cell too few from the shared segment: the
    // per-queue shared counter drifts; no output shows it at once.
    let (rtl, map) = files(
        "their_mmu_state",
        Some((
            "shr_d[g*CW +: CW]  = ds_v - rel_s;",
            "shr_d[g*CW +: CW]  = ds_v - (rel_s >> 1);",
        )),
        MAP,
    );
    let out = work().join("state");
    let o = run_theirs(&rtl, &map, "30000", &["--vcd-cycles", "0"], &out);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("signal:     state shr_q["), "{t}");
}

#[test]
fn ports_that_disagree_are_refused_one_line_each() {
    let wide = (
        "input  wire [6*NPIPE-1:0]                             in_len,",
        "input  wire [6*NPIPE:0]                               in_len,",
    );
    let (rtl, map) = files("their_mmu_wide", Some(wide), MAP);
    let o = switchsim(&["run", "mmu", "--rtl", &rtl, "--map", &map, "--cycles", "10"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains(
            "width: `in_len` (arr_len_i) is 6 bits in the declaration but 7 bits in the RTL"
        ),
        "{t}"
    );
    // A name the map forgets, and an output the RTL has that nobody named.
    let (rtl, map) = files(
        "their_mmu_names",
        None,
        &MAP.replace("arr_len_i = \"in_len\"\n", "")
            .replace("pause_o = \"pfc_pause\"\n", ""),
    );
    let o = switchsim(&["run", "mmu", "--rtl", &rtl, "--map", &map, "--cycles", "10"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    for want in [
        "missing: the RTL has no input `arr_len_i` of 6 bits",
        "missing: the RTL has no output `pause_o` of 32 bits",
        "extra: the RTL's input `in_len` (6 bits) is not in the declaration",
        "extra: the RTL's output `pfc_pause` (32 bits) is not in the declaration",
    ] {
        assert!(t.contains(want), "`{want}` not in:\n{t}");
    }
    // A map naming something the block does not have.
    let (rtl, map) = files(
        "their_mmu_typo",
        None,
        &format!("{MAP}\n[tie]\nscan = 0\n")
            .replace("q_hdr_o = false", "q_hdr_o = false\nverdict = \"x\""),
    );
    let o = switchsim(&["run", "mmu", "--rtl", &rtl, "--map", &map, "--cycles", "10"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("[ports] verdict: not a port of mmu"), "{t}");
}
