//! Memory stays flat with the run's length: every block's default variant
//! run for 10^5 and for 5 x 10^5 cycles (streamed stimulus, the long-run two
//! threads both times, no waveforms), in a fresh process each, the lower of
//! two runs of each length, peaks at the same resident memory within a
//! small margin. The 10^8-cycle soak (`make
//! soak`, nightly in CI) asserts the absolute bound.

use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_switchsim");

/// The long run's cycles: five times the short one. Ten times took 83 s of
/// a cold `make test` (the default STX switch alone 2.2 x 10^6 cycles at
/// about 25 k cycles/s); memory that grows with the run grows by 4 x 10^5
/// cycles' worth here, and the soak bounds it absolutely at 10^8.
const LONG: u64 = 500_000;

/// Peak RSS in KiB of `switchsim run block --cycles n`.
fn peak_kib(block: &str, n: u64) -> u64 {
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../out/tests/memory");
    let o = Command::new(EXE)
        .args(["run", block, "--cycles", &n.to_string()])
        .args(["--vcd-cycles", "0", "--threads", "2", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{block} {n}: {text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a JSON line");
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["passed"], true, "{line}");
    v["peak_rss_kib"].as_u64().expect("peak_rss_kib")
}

/// How far above the short run's peak the long run's may be: allocator and
/// page noise, 1 MiB or 5 %, whichever is larger.
fn margin(short_kib: u64) -> u64 {
    1024.max(short_kib / 20)
}

#[test]
fn peak_memory_does_not_grow_with_the_run() {
    let b = Command::new(EXE)
        .args(["build", "all", "--default-only"])
        .output()
        .unwrap();
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    let names = Command::new(EXE).arg("list").output().unwrap();
    let blocks: Vec<String> = String::from_utf8_lossy(&names.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert!(blocks.len() >= 14, "{blocks:?}");
    // Two blocks at a time (each run is two threads; the machine has two
    // cores at least, and memory is what is measured, not time).
    let rows: Vec<(String, u64, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = blocks
            .chunks(blocks.len().div_ceil(2))
            .map(|part| {
                s.spawn(move || {
                    // The lower of two runs each: a run's peak also
                    // counts pages the allocator's per-thread arenas
                    // happen to touch, which varies run to run (credit,
                    // 10^5 cycles: 11,192 to 12,076 KiB over four runs)
                    // and only upward; a growth with the run shows in both.
                    // The long run's second go only when its first is over
                    // the bound: the lower of the two passes exactly when
                    // one of them does (the long runs were 5/6 of the
                    // test's time).
                    part.iter()
                        .map(|b| {
                            let short = peak_kib(b, 100_000).min(peak_kib(b, 100_000));
                            let first = peak_kib(b, LONG);
                            let long = if first > short + margin(short) {
                                first.min(peak_kib(b, LONG))
                            } else {
                                first
                            };
                            (b.clone(), short, long)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut bad = Vec::new();
    for (b, short, long) in &rows {
        println!("{b:<14} 10^5: {short:>7} KiB   5 x 10^5: {long:>7} KiB");
        if *long > short + margin(*short) {
            bad.push(format!(
                "{b}: {short} KiB at 10^5 cycles, {long} KiB at 5 x 10^5"
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "memory grows with the run:\n{}",
        bad.join("\n")
    );
}
