//! Benchmarks of streamed stimulus (`make bench`, second table): what
//! generating the traffic costs next to the model's step, the end-to-end
//! rate of a whole `switchsim run` (process start to exit, generation
//! included) against the lockstep loop on written-out stimulus, the
//! two-thread lockstep against the single-core figures, the peak memory of
//! a run, and `fuzz --jobs 2` against `--jobs 1`. Figures are taken side by
//! side in one `bench` invocation and compared as ratios; none of them is
//! asserted in a test.

use anyhow::{anyhow, bail, Context, Result};
use cosim::lockstep::{self, Options, Outcome, Waves};
use model::stim::{Generator, Step, Stimulus};
use model::{Params, PortGroup};
use serde_json::Value;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;
use testbenches::Bench;

/// The streamed-stimulus figures of one block variant.
#[derive(Clone, Debug)]
pub struct StreamRow {
    /// Block.
    pub block: &'static str,
    /// Variant label.
    pub variant: String,
    /// Cycles of each run.
    pub cycles: u64,
    /// Cycles per second of the generator alone (its own work; see
    /// [`time_generation`]).
    pub gen: f64,
    /// Cycles per second of the model's `step_into` alone on the same cycles.
    pub model: f64,
    /// Cycles per second of the RTL alone through the bindings.
    pub rtl: f64,
    /// Lockstep loop on the written-out stimulus, one thread.
    pub loop1: f64,
    /// Lockstep on the generated stimulus, two threads (in process).
    pub loop2: f64,
    /// `switchsim run` end to end (spawn to exit), one thread.
    pub e2e1: f64,
    /// The same with two threads.
    pub e2e2: f64,
    /// Peak RSS of the one-thread run, KiB.
    pub rss_kib: Option<u64>,
}

/// Seconds of the generator alone over the cycles of `stim` (it is handed
/// a model held in its reset state and the reset outputs, so that only the
/// generator's own work is timed: a closed-loop generator reads the model
/// it is handed, which costs the same whatever state it holds), and of the
/// model's `step_into` alone over the same cycles written out. (The copy
/// compiled in this crate for a block of the registry: [`crate::hot`].)
pub fn time_generation<B: Bench>(stim: &Stimulus<B>) -> Result<(f64, f64)> {
    let gen = match crate::hot::of::<B>() {
        Some(h) => (h.time_generator)(stim),
        None => time_generator(stim),
    }?;
    let written = testbenches::explicit(stim).map_err(|e| anyhow!(e))?;
    let model = crate::bench::time_model(&written, crate::bench::ModelSide::STEP)?;
    Ok((gen, model))
}

/// Seconds of the generator alone over the cycles of `stim`.
pub(crate) fn time_generator<B: Bench>(stim: &Stimulus<B>) -> Result<f64> {
    let (p, cfg) = (&stim.params, &stim.config);
    let n = stim.len();
    let mut src = testbenches::source(stim).map_err(|e| anyhow!(e))?;
    let m = B::new(p, cfg);
    let o = B::new(p, cfg).step(&B::Inputs::zero(p));
    let mut i = B::Inputs::zero(p);
    let mut resets = 0u64;
    let t0 = Instant::now();
    for _ in 0..n {
        resets += u64::from(src.next(black_box(&m), &o, &mut i) == Step::Reset);
        black_box(&i);
    }
    let gen = t0.elapsed().as_secs_f64();
    black_box(resets);
    Ok(gen)
}

/// Runs `switchsim ARGS --json` in a fresh process; its JSON and the wall
/// time from spawn to exit.
pub fn child_json(exe: &Path, args: &[&str]) -> Result<(Value, f64)> {
    let t0 = Instant::now();
    let o = Command::new(exe)
        .args(args)
        .arg("--json")
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let secs = t0.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .last()
        .ok_or_else(|| anyhow!("`switchsim {}` printed nothing", args.join(" ")))?;
    let v: Value = serde_json::from_str(line)
        .with_context(|| format!("`switchsim {}` printed `{line}`", args.join(" ")))?;
    if v["passed"] != Value::Bool(true) {
        bail!("`switchsim {}` did not pass: {line}", args.join(" "));
    }
    Ok((v, secs))
}

/// Measures variant `p` of `B` on `cycles` cycles of its default
/// configuration, seed 1; `exe` is this binary, `tmp` a scratch folder.
pub fn measure<B: Bench>(
    p: &B::Params,
    cycles: u64,
    repeat: usize,
    exe: &Path,
    tmp: &Path,
) -> Result<StreamRow> {
    let cfg = B::default_config(p);
    let stim = testbenches::run_of::<B>(p, 1, cycles, Some(&cfg));
    let written = testbenches::explicit(&stim).map_err(|e| anyhow!(e))?;
    let packed = crate::bench::Packed::of(&written)?;
    let n = cycles as f64;
    let quiet = |threads| Options {
        out_dir: tmp.to_path_buf(),
        waves: Waves::Never,
        context: 0,
        replay: String::new(),
        threads,
        ..Options::default()
    };
    let lock = |s: &Stimulus<B>, threads| -> Result<f64> {
        match lockstep::run(s, &quiet(threads))? {
            Outcome::Pass(r) => Ok(r.secs),
            Outcome::Mismatch(m) => bail!("benchmark stimulus fails:\n{m}"),
            Outcome::Interrupted(_) => bail!("interrupted"),
        }
    };
    let label = p.label();
    let cyc = cycles.to_string();
    let tmp_s = tmp.display().to_string();
    let args = |t: &'static str| -> Vec<String> {
        [
            "run",
            B::NAME,
            "--variant",
            &label,
            "--cycles",
            &cyc,
            "--threads",
            t,
            "--out",
            &tmp_s,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let (a1, a2) = (args("1"), args("2"));
    let mut rss = None;
    let mut best = [f64::MAX; 7];
    for _ in 0..repeat.max(1) {
        let (gen, model) = time_generation(&stim)?;
        let rtl = crate::bench::time_rtl(&written, &packed, false)?.0;
        let l1 = lock(&written, 1)?;
        let l2 = lock(&stim, 2)?;
        let (v1, e1) = child_json(exe, &a1.iter().map(String::as_str).collect::<Vec<_>>())?;
        let (_, e2) = child_json(exe, &a2.iter().map(String::as_str).collect::<Vec<_>>())?;
        rss = v1["peak_rss_kib"].as_u64().or(rss);
        for (b, x) in best.iter_mut().zip([gen, model, rtl, l1, l2, e1, e2]) {
            *b = b.min(x);
        }
    }
    let [gen, model, rtl, l1, l2, e1, e2] = best;
    Ok(StreamRow {
        block: B::NAME,
        variant: label,
        cycles,
        gen: n / gen,
        model: n / model,
        rtl: n / rtl,
        loop1: n / l1,
        loop2: n / l2,
        e2e1: n / e1,
        e2e2: n / e2,
        rss_kib: rss,
    })
}

/// `fuzz BLOCK --cases K --jobs J` in a fresh process: cycles per second
/// over the whole campaign as it reports it, and its cases and verdict.
pub fn fuzz_rate(exe: &Path, block: &str, cases: u64, jobs: usize, tmp: &Path) -> Result<f64> {
    let (v, _) = child_json(
        exe,
        &[
            "fuzz",
            block,
            "--cases",
            &cases.to_string(),
            "--jobs",
            &jobs.to_string(),
            "--seed",
            "1",
            "--out",
            &tmp.display().to_string(),
        ],
    )?;
    v["cycles_per_second"]
        .as_f64()
        .ok_or_else(|| anyhow!("no cycles_per_second in the fuzz report"))
}

/// The streamed-stimulus section of BENCHMARKS.md.
pub fn markdown(rows: &[StreamRow], fuzz: &[(String, u64, f64, f64)]) -> String {
    use crate::bench::rate;
    use std::fmt::Write as _;
    let mut s = String::new();
    writeln!(
        s,
        "Streamed stimulus, cycles per second, best of the repeats, default configuration, \
         seed 1. `gen` is the generator alone (against a model held in reset: its own work); \
         `loop 1` the lockstep loop on the same cycles written out beforehand; `e2e` a whole \
         `switchsim run` process, spawn to exit, generation included; `loop 2` the two-thread \
         lockstep in process; `min` = min(model, RTL), the bound of a two-thread pipeline.\n"
    )
    .unwrap();
    writeln!(
        s,
        "| block | variant | cycles | gen | model | gen / model | RTL | loop 1 | e2e 1 thread | \
         e2e / loop 1 | loop 2 threads | min | loop 2 / min | model / RTL | e2e 2 threads | \
         peak RSS |"
    )
    .unwrap();
    writeln!(
        s,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    for r in rows {
        let min = r.model.min(r.rtl);
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {:.2} | {} | {} | {:.2} | {:.1} | {} | {} |",
            r.block,
            r.variant,
            r.cycles,
            rate(r.gen),
            rate(r.model),
            r.gen / r.model,
            rate(r.rtl),
            rate(r.loop1),
            rate(r.e2e1),
            r.e2e1 / r.loop1,
            rate(r.loop2),
            rate(min),
            r.loop2 / min,
            r.model / r.rtl,
            rate(r.e2e2),
            r.rss_kib
                .map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
        )
        .unwrap();
    }
    if !fuzz.is_empty() {
        writeln!(
            s,
            "\n`fuzz BLOCK --cases K` with `--jobs 1` and `--jobs 2` (cycles per second the \
             campaign reports, one process each):\n"
        )
        .unwrap();
        writeln!(
            s,
            "| block | cases | jobs 1 | jobs 2 | jobs 2 / jobs 1 |\n|---|---:|---:|---:|---:|"
        )
        .unwrap();
        for (b, k, j1, j2) in fuzz {
            writeln!(
                s,
                "| {b} | {k} | {} | {} | {:.2} |",
                rate(*j1),
                rate(*j2),
                j2 / j1
            )
            .unwrap();
        }
    }
    s
}

/// One soak run: `run BLOCK --cycles N` in a fresh process.
#[derive(Clone, Debug)]
pub struct Soak {
    /// Block.
    pub block: String,
    /// Cycles.
    pub cycles: u64,
    /// Wall seconds, spawn to exit.
    pub secs: f64,
    /// Peak RSS, KiB.
    pub rss_kib: Option<u64>,
    /// Passed.
    pub passed: bool,
    /// The report's first line on a failure.
    pub what: String,
}

/// Runs `switchsim run BLOCK --cycles N` and reads its verdict and peak RSS.
pub fn soak(exe: &Path, block: &str, cycles: u64, tmp: &Path) -> Result<Soak> {
    let t0 = Instant::now();
    let o = Command::new(exe)
        .args([
            "run",
            block,
            "--cycles",
            &cycles.to_string(),
            "--json",
            "--out",
        ])
        .arg(tmp)
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    let secs = t0.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text.lines().last().unwrap_or("");
    let v: Value = serde_json::from_str(line).map_err(|_| {
        anyhow!(
            "`switchsim run {block}` printed no report: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )
    })?;
    Ok(Soak {
        block: block.to_string(),
        cycles,
        secs,
        rss_kib: v["peak_rss_kib"].as_u64(),
        passed: v["passed"] == Value::Bool(true),
        what: if v["passed"] == Value::Bool(true) {
            String::new()
        } else {
            line.to_string()
        },
    })
}

/// The soak section of BENCHMARKS.md.
pub fn soak_markdown(runs: &[Soak]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    writeln!(
        s,
        "Generated by `make soak` on {date}: `switchsim run BLOCK --cycles N` (default variant \
         and configuration, seed 1, `--threads auto`), one fresh process each.\n"
    )
    .unwrap();
    writeln!(
        s,
        "| block | cycles | verdict | wall | cycles/s end to end | peak RSS |\n|---|---:|:-:|---:|---:|---:|"
    )
    .unwrap();
    for r in runs {
        writeln!(
            s,
            "| {} | {} | {} | {:.1} s | {} | {} |",
            r.block,
            r.cycles,
            if r.passed { "PASS" } else { "FAIL" },
            r.secs,
            crate::bench::rate(r.cycles as f64 / r.secs),
            r.rss_kib
                .map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        )
        .unwrap();
    }
    s
}
