//! No verdict lost: a run whose files cannot be written (a full disk) still
//! prints its verdict and names what was not written, with the verdict's
//! exit code; a run stopped by SIGINT or SIGTERM prints what it verified,
//! leaves valid waveforms and exits 130.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_switchsim");

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn work(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../out/tests/faults")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `switchsim args` with `dir` a tmpfs of `size` bytes, in a mount
/// namespace of its own (as root; else a user namespace); `None` when this
/// machine allows neither and `SWITCHSIM_SKIP_TMPFS` is set.
fn on_small_disk(dir: &Path, size: u64, args: &[&str]) -> Option<Output> {
    let script = format!(
        "mount -t tmpfs -o size={size} tmpfs '{}' && exec \"$0\" \"$@\"",
        dir.display()
    );
    for ns in [
        ["-m", "--propagation=private"],
        ["-rm", "--propagation=private"],
    ] {
        let o = Command::new("unshare")
            .args(ns)
            .args(["sh", "-c", &script, EXE])
            .args(args)
            .output();
        if let Ok(o) = o {
            let t = text(&o);
            if !(t.contains("unshare:") || t.contains("mount:")) {
                return Some(o);
            }
        }
    }
    if std::env::var_os("SWITCHSIM_SKIP_TMPFS").is_some() {
        eprintln!("SKIPPED (SWITCHSIM_SKIP_TMPFS set): no mount namespace for a small tmpfs here");
        return None;
    }
    panic!(
        "cannot mount a small tmpfs (unshare -m as root, or unshare -rm); set \
         SWITCHSIM_SKIP_TMPFS=1 to skip this check explicitly"
    )
}

#[test]
fn a_full_disk_does_not_hide_the_verdict() {
    let dir = work("full");
    let out = dir.display().to_string();
    // Waveforms of 4000 cycles do not fit in 48 KiB: a pass.
    let Some(o) = on_small_disk(
        &dir,
        48 << 10,
        &[
            "run",
            "mmu",
            "--cycles",
            "4000",
            "--vcd-cycles",
            "4000",
            "--out",
            &out,
        ],
    ) else {
        return;
    };
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("PASS mmu p4cw16 seed 1: 4000 cycles"), "{t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("not written:") && l.contains("No space left on device")),
        "{t}"
    );
    // A mismatch on the same full disk: the report, exit 1.
    let Some(o) = on_small_disk(
        &dir,
        48 << 10,
        &[
            "run",
            "mmu",
            "--cycles",
            "4000",
            "--vcd-cycles",
            "0",
            "--inject-fault",
            "verdict_o@1500",
            "--out",
            &out,
        ],
    ) else {
        return;
    };
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("MISMATCH in mmu (p4cw16) at model step 1500, RTL clock 1502"),
        "{t}"
    );
    assert!(t.contains("signal:     verdict_o"), "{t}");
    // And JSON keeps the verdict too.
    let Some(o) = on_small_disk(
        &dir,
        16 << 10,
        &[
            "run",
            "mmu",
            "--cycles",
            "4000",
            "--vcd-cycles",
            "4000",
            "--json",
            "--out",
            &out,
        ],
    ) else {
        return;
    };
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let line = t.lines().find(|l| l.starts_with('{')).expect("a JSON line");
    let j: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(j["passed"], true, "{t}");
    assert!(!j["not_written"].as_array().unwrap().is_empty(), "{t}");
}

#[test]
fn a_folder_that_cannot_be_made_does_not_hide_the_verdict() {
    let dir = work("blocked");
    // A file where the output folder should be: nothing can be written.
    let out = dir.join("file");
    std::fs::write(&out, b"in the way").unwrap();
    let o = Command::new(EXE)
        .args([
            "run",
            "mmu",
            "--cycles",
            "2000",
            "--vcd-cycles",
            "100",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("PASS mmu"), "{t}");
    assert!(t.contains("not written:"), "{t}");
}

/// Starts `switchsim args`, waits `after`, sends `sig`, and returns its
/// output.
fn interrupted(args: &[&str], sig: i32, after: Duration) -> Output {
    let mut c = Command::new(EXE)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: sending a signal to our own child.
    assert_eq!(unsafe { libc::kill(c.id() as i32, sig) }, 0);
    let mut stdout = Vec::new();
    c.stdout.take().unwrap().read_to_end(&mut stdout).unwrap();
    let mut stderr = Vec::new();
    c.stderr.take().unwrap().read_to_end(&mut stderr).unwrap();
    let status = c.wait().unwrap();
    Output {
        status,
        stdout,
        stderr,
    }
}

/// The cycle count of `INTERRUPTED at cycle N: ... cycles 0..N`.
fn verified(t: &str) -> u64 {
    let l = t
        .lines()
        .find(|l| l.starts_with("INTERRUPTED at cycle "))
        .unwrap_or_else(|| panic!("no INTERRUPTED line:\n{t}"));
    let n: u64 = l["INTERRUPTED at cycle ".len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        l.contains(&format!(
            "model and RTL agree on every output of cycles 0..{n}"
        )),
        "{l}"
    );
    n
}

/// A run of the MMU for 10^9 cycles (waveforms for the first `vcd_cycles`)
/// into `out`, sent `sig` after `after`. The design is built beforehand,
/// so that the signal finds the run running.
fn interrupted_mmu_run(out: &Path, vcd_cycles: &str, sig: i32, after: Duration) -> Output {
    let b = Command::new(EXE)
        .args(["build", "mmu", "--default-only"])
        .output()
        .unwrap();
    assert!(b.status.success(), "{}", text(&b));
    let out = out.display().to_string();
    let args = [
        "run",
        "mmu",
        "--cycles",
        "1000000000",
        "--vcd-cycles",
        vcd_cycles,
        "--out",
        &out,
    ];
    interrupted(&args, sig, after)
}

#[test]
fn sigint_and_sigterm_report_what_was_verified() {
    let dir = work("signal");
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let o = interrupted_mmu_run(&dir, "0", sig, Duration::from_secs(3));
        let t = text(&o);
        assert_eq!(o.status.code(), Some(130), "signal {sig}: {t}");
        verified(&t);
    }
}

#[test]
fn an_interrupted_traced_run_leaves_valid_waveforms() {
    let dir = work("traced");
    // Two seconds of traced cycles: the parser below runs in this test
    // binary, compiled at the switchsim package's opt-level 0, and reads
    // three waveforms of every cycle (after 4 s: 22 s of the test).
    let o = interrupted_mmu_run(&dir, "1000000000", libc::SIGINT, Duration::from_secs(2));
    let t = text(&o);
    assert_eq!(o.status.code(), Some(130), "{t}");
    let n = verified(&t);
    let merged = t
        .lines()
        .find_map(|l| l.trim().strip_suffix("(both, with `mismatch`)"))
        .map(|p| PathBuf::from(p.trim()))
        .unwrap_or_else(|| panic!("no merged waveform named:\n{t}"));
    // Every file reads to its end with an independent parser, and reaches
    // the last verified cycle.
    for f in ["merged.vcd", "model.vcd", "rtl.vcd"] {
        let path = merged.with_file_name(f);
        let mut r = vcd::Parser::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        r.parse_header()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut last = 0;
        for cmd in r {
            if let vcd::Command::Timestamp(t) =
                cmd.unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            {
                last = t;
            }
        }
        assert!(
            last >= 10 * n,
            "{}: ends at {last}, cycle {n} is at {}",
            path.display(),
            10 * n
        );
    }
}
