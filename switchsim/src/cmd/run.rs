//! `run`, `fuzz`, `replay`, `trace`, `config`, `size`, `list`.

use super::*;
use anyhow::{anyhow, bail, Context, Result};
use cosim::fuzz::{self, FuzzOptions};
use cosim::lockstep::{self, Options, Outcome, UserRtl, WaveFiles, Waves};
use model::stim::Stimulus;
use model::{Block, Params};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use testbenches::Bench;

/// The configuration as one `config name=value ...` line.
pub fn config_line<B: Block>(p: &B::Params, c: &B::Config) -> String {
    let l = <B::Config as model::PortGroup>::layout(p);
    let w = model::PortGroup::to_words(c, p).expect("checked configuration fits");
    let parts: Vec<String> = l
        .ports
        .iter()
        .enumerate()
        .map(|(k, d)| {
            format!(
                "{}={}",
                crate::config::short(d.name),
                model::port::format_plain(d.shape, l.slice(&w, k))
            )
        })
        .collect();
    format!("config {}", parts.join(" "))
}

pub struct RunArgs<'a> {
    pub variant: Option<&'a str>,
    pub config: Option<&'a Path>,
    pub random_config: bool,
    pub seed: u64,
    pub cycles: u64,
    pub out: &'a Path,
    pub vcd_cycles: u64,
    pub json: bool,
    pub threads: Option<usize>,
    pub fault: Option<lockstep::Fault>,
    pub user: Option<&'a UserRtl>,
}

pub fn cmd_run<B: Bench>(a: &RunArgs) -> Result<u8> {
    // End to end: from process start for the first block of the process,
    // from the start of this block's run for the next ones of `run all`.
    static FIRST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let t_block = std::time::Instant::now();
    let first = FIRST.swap(false, std::sync::atomic::Ordering::SeqCst);
    let (p, cfg) = match a.config {
        Some(path) => {
            let (p, c) = crate::config::load::<B>(path)?;
            if let Some(v) = a.variant {
                if v != p.label() {
                    bail!(
                        "--variant {v} disagrees with variant = \"{}\" in {}",
                        p.label(),
                        path.display()
                    );
                }
            }
            (p, c)
        }
        None => {
            let p = variant_of::<B>(a.variant)?;
            let c = if a.random_config {
                testbenches::random_config::<B>(&p, a.seed, false)
            } else {
                B::default_config(&p)
            };
            (p, c)
        }
    };
    B::check(&p, &cfg)?;
    let stim = testbenches::run_of::<B>(&p, a.seed, a.cycles, Some(&cfg));
    let what = format!("{} {} seed {}", B::NAME, p.label(), a.seed);
    let threads = a
        .threads
        .unwrap_or(if a.cycles >= 1_000_000 && cores() >= 2 {
            2
        } else {
            1
        });
    let tty = std::io::stderr().is_terminal() && !a.json;
    let o = Options {
        threads,
        progress: tty.then_some(run_progress as lockstep::ProgressFn),
        fault: a.fault.clone(),
        ..opts_on(a.out, Waves::OnMismatch, a.user)
    };
    // Waveforms of the whole run: one traced pass; of its first cycles only:
    // the untraced run, then its head again with tracing (the first N
    // cycles of a seed are the same for any length).
    let whole = a.vcd_cycles >= a.cycles;
    let o = if whole {
        Options {
            waves: Waves::Always,
            ..o
        }
    } else {
        o
    };
    let outcome = lockstep::run(&stim, &o)?;
    if tty && a.cycles >= 1 << 16 {
        eprint!("\r{:78}\r", "");
    }
    let mut waves = None;
    let mut not_written = Vec::new();
    if let Outcome::Pass(s) | Outcome::Interrupted(s) = &outcome {
        if whole {
            waves = s.waves.clone();
        }
    }
    let mut interrupted = matches!(outcome, Outcome::Interrupted(_));
    if matches!(outcome, Outcome::Pass(_)) && a.vcd_cycles > 0 && !whole {
        let head = testbenches::run_of::<B>(&p, a.seed, a.vcd_cycles, Some(&cfg));
        // A file that cannot be written is named; the verdict stands.
        match lockstep::run(&head, &opts_on(a.out, Waves::Always, a.user)) {
            Ok(Outcome::Pass(s)) => {
                waves = s.waves;
                not_written.extend(s.write_errors);
            }
            Ok(Outcome::Interrupted(s)) => {
                waves = s.waves;
                not_written.extend(s.write_errors);
                interrupted = true;
            }
            Ok(Outcome::Mismatch(m)) => not_written.push(format!(
                "waveforms: the traced run of the first {} cycles diverged at cycle {} (the \
                 untraced run did not): the RTL or the model is not deterministic",
                a.vcd_cycles, m.cycle
            )),
            Err(e) => not_written.push(format!("waveforms: {e:#}")),
        }
    }
    // Next to the waveforms when there are some (the same time axis; the
    // pcap holds the whole run), else in the run's own folder.
    let frames_dir = waves
        .as_ref()
        .and_then(|w: &WaveFiles| w.merged.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| lockstep::run_dir(&stim, a.out));
    // An interrupted run's frames: those of the cycles it verified.
    let framed = match &outcome {
        Outcome::Interrupted(s) => lockstep::cut_after(&stim, s.cycles as i64 - 1),
        _ => stim.clone(),
    };
    let frames = match write_frames(&framed, &frames_dir) {
        Ok(f) => f,
        Err(e) => {
            not_written.push(format!("{e:#}"));
            None
        }
    };
    // Start to here: generation, lockstep, waveforms and frames.
    let secs = if first {
        since_start()
    } else {
        t_block.elapsed().as_secs_f64()
    };
    let end_to_end = stim.len() as f64 / secs.max(1e-9);
    let path = |p: Option<&Path>| p.map(|p| p.display().to_string());
    if a.json {
        let (secs, rate, coverage) = match &outcome {
            Outcome::Pass(s) | Outcome::Interrupted(s) => (s.secs, s.rate(), Some(&s.coverage)),
            Outcome::Mismatch(_) => (0.0, 0.0, None),
        };
        let verified = match &outcome {
            Outcome::Interrupted(s) => Some(s.cycles),
            _ => None,
        };
        let mut not_written = not_written.clone();
        if let Outcome::Pass(s) | Outcome::Interrupted(s) = &outcome {
            not_written.extend(s.write_errors.iter().cloned());
        }
        let body = serde_json::json!({
            "block": B::NAME,
            "variant": p.label(),
            "seed": a.seed,
            "cycles": a.cycles,
            "seconds": (secs * 1000.0).round() / 1000.0,
            "cycles_per_second": rate.round(),
            "end_to_end_cycles_per_second": end_to_end.round(),
            "threads": threads,
            "passed": outcome.mismatch().is_none() && !interrupted,
            "interrupted": interrupted,
            "verified_cycles": verified,
            "coverage": coverage.map(fuzz::coverage_json),
            "holes": coverage.map(|c| c.holes()),
            "merged_vcd": path(waves.as_ref().map(|w: &WaveFiles| w.merged.as_path())),
            "pcap": path(frames.as_ref().map(|f| f.0.as_path())),
            "mismatch": outcome.mismatch().map(fuzz::mismatch_json),
            "not_written": not_written,
            "peak_rss_kib": crate::bench::peak_rss_kib(),
        });
        println!("{body}");
        return Ok(
            if interrupted || outcome.mismatch().is_some_and(|m| m.interrupted) {
                130
            } else {
                u8::from(outcome.mismatch().is_some())
            },
        );
    }
    println!("{}", config_line::<B>(&p, &stim.config));
    let mut code = report(&outcome, &what);
    if let Outcome::Pass(_) = &outcome {
        println!(
            "rates: lockstep loop {:.0} cycles/s, end to end {end_to_end:.0} cycles/s \
             (start to end: generation, waveforms and frames included; {threads} thread{})",
            match &outcome {
                Outcome::Pass(s) => s.rate(),
                _ => 0.0,
            },
            if threads == 1 { "" } else { "s" }
        );
    }
    if let (Some(w), false) = (waves, whole) {
        println!(
            "waveforms of the first {} cycles{}:",
            a.vcd_cycles.min(a.cycles),
            if interrupted || !not_written.is_empty() {
                " (cut short where named below)"
            } else {
                ""
            }
        );
        print_waves(&w);
    }
    print_frames(&frames);
    for e in &not_written {
        println!("not written: {e}");
    }
    if interrupted && code == 0 {
        println!("INTERRUPTED while writing the waveforms: the verdict above stands");
        code = 130;
    }
    Ok(code)
}

/// Writes the frames block `B` transmits on `stim` (golden model) to
/// `dir/frames.pcap`, stamped in nanoseconds like the waveforms (one cycle
/// per ns, the power-on reset cycles included); `None` for a block without
/// frames.
pub fn write_frames<B: Bench>(stim: &Stimulus<B>, dir: &Path) -> Result<Option<(PathBuf, usize)>> {
    let path = dir.join("frames.pcap");
    let mut pcap: Option<testbenches::pcap::PcapWriter<std::io::BufWriter<std::fs::File>>> = None;
    let mut err: Option<std::io::Error> = None;
    let sends = B::frames(stim, &mut |cycle, bytes| {
        if err.is_some() {
            return;
        }
        let r = (|| {
            if pcap.is_none() {
                std::fs::create_dir_all(dir)?;
                let f = std::fs::File::create(&path)?;
                pcap = Some(testbenches::pcap::PcapWriter::new(
                    std::io::BufWriter::new(f),
                )?);
            }
            let w = pcap.as_mut().expect("just opened");
            w.frame(cycle + lockstep::POWER_ON_RESET, bytes)
        })();
        if let Err(e) = r {
            err = Some(e);
        }
    })
    .map_err(|e| anyhow!(e))?;
    if let Some(e) = err {
        bail!("{}: {e}", path.display());
    }
    if !sends {
        return Ok(None);
    }
    let n = match pcap {
        Some(w) => {
            let n = w.frames();
            w.finish()
                .with_context(|| format!("writing {}", path.display()))?;
            n
        }
        None => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            std::fs::write(&path, testbenches::pcap::to_vec(&[]))
                .with_context(|| format!("writing {}", path.display()))?;
            0
        }
    };
    Ok(Some((path, n as usize)))
}

pub fn print_frames(f: &Option<(PathBuf, usize)>) {
    if let Some((path, n)) = f {
        println!(
            "frames: {n} transmitted -> {}  (open in Wireshark, or tshark -r)",
            path.display()
        );
    }
}

pub struct FuzzArgs {
    pub o: FuzzOptions,
    pub require_coverage: bool,
    pub json: bool,
}

pub fn cmd_fuzz<B: Bench>(a: &FuzzArgs) -> Result<u8>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let tty = std::io::stderr().is_terminal();
    let mut last_line = std::time::Instant::now();
    let r = fuzz::fuzz::<B>(&a.o, |p| {
        let rate = p.cycles as f64 / p.elapsed.as_secs_f64().max(1e-9);
        let line = format!(
            "[{}] {} cases  {} cycles  {:.0}k cycles/s  coverage {}/{}  {:.0}s",
            B::NAME,
            p.cases,
            p.cycles,
            rate / 1e3,
            p.covered.0,
            p.covered.1,
            p.elapsed.as_secs_f64()
        );
        if tty {
            eprint!("\r{line}   ");
        } else if last_line.elapsed() >= Duration::from_secs(10) {
            last_line = std::time::Instant::now();
            eprintln!("{line}");
        }
        let _ = std::io::stderr().flush();
    })?;
    if tty {
        eprintln!();
    }
    let holes = r.coverage.holes();
    let failed = r.failure.is_some() || (a.require_coverage && !holes.is_empty());
    if r.interrupted {
        if a.json {
            println!("{}", fuzz::report_json(&r));
        } else {
            if let Some(m) = &r.failure {
                println!("FAIL fuzz {} (not shrunk: interrupted):", B::NAME);
                print!("{m}");
            }
            println!(
                "INTERRUPTED fuzz {} shard {}/{} seed {}: {} cases ({} cycles) ran to their end; \
                 model and RTL agree on every output of each{}",
                B::NAME,
                r.shard.0,
                r.shard.1,
                r.base_seed,
                r.cases,
                r.cycles,
                if r.failure.is_some() {
                    " before the failing one"
                } else {
                    ""
                }
            );
            print_coverage(&r.coverage);
        }
        return Ok(130);
    }
    if a.json {
        println!("{}", fuzz::report_json(&r));
    } else {
        match &r.failure {
            None => println!(
                "PASS fuzz {} shard {}/{} seed {}: {} cases, {} cycles, {:.1}s ({:.0} cycles/s)",
                B::NAME,
                r.shard.0,
                r.shard.1,
                r.base_seed,
                r.cases,
                r.cycles,
                r.secs,
                r.cycles as f64 / r.secs.max(1e-9)
            ),
            Some(m) => {
                println!("FAIL fuzz {} after {} cases (shrunk):", B::NAME, r.cases);
                print!("{m}");
            }
        }
        print_coverage(&r.coverage);
        if a.require_coverage && !holes.is_empty() {
            println!(
                "FAIL coverage: {} bin(s) never hit over the budget: {}",
                holes.len(),
                holes.join(", ")
            );
        }
    }
    Ok(u8::from(failed))
}

pub fn cmd_replay<B: Bench>(
    text: &str,
    out: &Path,
    illegal: bool,
    user: Option<&UserRtl>,
) -> Result<u8> {
    let stim = Stimulus::<B>::from_text(text, &B::variants()).map_err(|e| anyhow!(e))?;
    // The same validation as `run --config`; a configuration the hardware
    // flags as illegal (fuzz cases include some on purpose) only with
    // --illegal-config.
    if let Err(e) = B::check(&stim.params, &stim.config) {
        if !illegal {
            bail!("{e} (to replay it anyway, as the fuzzer does on purpose: --illegal-config)");
        }
    }
    let what = format!("{} {} replay", B::NAME, stim.params.label());
    let outcome = lockstep::run(&stim, &opts_on(out, Waves::Always, user))?;
    let code = report(&outcome, &what);
    print_frames(&write_frames(&stim, &lockstep::run_dir(&stim, out))?);
    Ok(code)
}

pub fn cmd_trace<B: Bench>(name: Option<&str>, out: &Path, user: Option<&UserRtl>) -> Result<u8> {
    let all = B::scenarios();
    let Some(name) = name else {
        for s in &all {
            println!("{:<20} {}", s.name, s.about);
        }
        return Ok(0);
    };
    let s = all.iter().find(|s| s.name == name).ok_or_else(|| {
        let known: Vec<&str> = all.iter().map(|s| s.name).collect();
        anyhow!(
            "unknown scenario `{name}` of {} (known: {})",
            B::NAME,
            known.join(", ")
        )
    })?;
    let stim = (s.build)();
    println!("{}: {}", s.name, s.about);
    println!("{}", config_line::<B>(&stim.params, &stim.config));
    let dir = out.join(format!("{}-{}", B::NAME, s.name));
    let outcome = lockstep::run(&stim, &opts_on(&dir, Waves::Always, user))?;
    std::fs::write(dir.join("scenario.stim"), stim.to_text())?;
    let mut code = report(&outcome, &format!("{} trace {}", B::NAME, s.name));
    if code == 0 {
        if let Some(check) = s.check {
            // The lockstep run has shown the RTL's outputs equal to the
            // model's on every compared output of every cycle, so the
            // documented outcome is checked on the model's.
            match scenario_outputs(&stim).and_then(|outs| check(&stim, &outs)) {
                Ok(()) => println!("outcome: as documented ({})", s.about),
                Err(e) => {
                    println!("OUTCOME DIFFERS from the documented one: {e}");
                    code = 1;
                }
            }
        }
    }
    print_frames(&write_frames(&stim, &lockstep::run_dir(&stim, &dir))?);
    Ok(code)
}

/// The model's outputs of every cycle of a scenario (scenarios have no
/// reset cycles: an error for one that has).
fn scenario_outputs<B: Bench>(stim: &Stimulus<B>) -> Result<Vec<B::Outputs>, String> {
    let mut m = B::new(&stim.params, &stim.config);
    stim.cycles
        .iter()
        .map(|c| match c {
            model::stim::Cycle::Drive(i) => Ok(m.step(i)),
            model::stim::Cycle::Reset => {
                Err("a reset cycle in a scenario: outcome not checked".into())
            }
        })
        .collect()
}

/// `switchsim trace`: the scenarios of `block` (no `name`), or one run with
/// its waveforms and its documented outcome checked.
pub fn trace_block(
    block: &str,
    name: Option<&str>,
    out: &Path,
    user: Option<&UserRtl>,
) -> Result<u8> {
    super::for_block(block, &mut super::TraceC { name, out, user })
}

/// `switchsim config`: a block's default configuration as TOML.
pub fn config_block(block: &str, variant: Option<&str>) -> Result<u8> {
    super::for_block(block, &mut super::ConfigC { variant })
}

pub fn cmd_config<B: Block>(variant: Option<&str>) -> Result<u8> {
    let p = variant_of::<B>(variant)?;
    print!(
        "{}",
        crate::config::to_toml::<B>(&p, &B::default_config(&p))
    );
    Ok(0)
}

pub fn list_block<B: Bench>() -> Result<u8> {
    let labels: Vec<String> = B::variants().iter().map(|v| v.label()).collect();
    let scen: Vec<&str> = B::scenarios().iter().map(|s| s.name).collect();
    println!(
        "{:<10} variants: {:<28} scenarios: {}",
        B::NAME,
        labels.join(" "),
        scen.join(" ")
    );
    Ok(0)
}

/// The options of `switchsim fuzz`.
#[derive(clap::Args, Debug)]
pub struct FuzzOpts {
    /// Block to fuzz, or `all` (the budget is split between blocks).
    #[arg(default_value = "all")]
    pub block: String,
    /// Number of cases (of this shard).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub cases: Option<u64>,
    /// Time budget, e.g. `90s`, `5m`.
    #[arg(long, value_parser = parse_duration)]
    pub time: Option<Duration>,
    /// Cycles per case.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub cycles: u64,
    /// Threads running cases (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// Base seed of the campaign.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run only shard I of N (`I/N`, 0-based): N jobs share one campaign without overlap.
    #[arg(long, value_parser = parse_shard, default_value = "0/1")]
    pub shard: (u64, u64),
    /// Fail (exit 1) if a coverage bin is never hit.
    #[arg(long)]
    pub require_coverage: bool,
    /// Output directory.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Print a machine-readable summary (JSON).
    #[arg(long)]
    pub json: bool,
    /// Only this structural variant (default: each case's seed picks one;
    /// with --rtl, the block's default).
    #[arg(long)]
    pub variant: Option<String>,
    #[command(flatten)]
    pub rtl: RtlArgs,
}

/// `switchsim fuzz`.
pub fn fuzz_blocks(o: FuzzOpts) -> Result<u8> {
    let FuzzOpts {
        block,
        cases,
        time,
        cycles,
        seed,
        shard,
        require_coverage,
        out,
        json,
        jobs,
        variant,
        rtl,
    } = o;
    let blocks = blocks_of(&block)?;
    if cases.is_none() && time.is_none() {
        bail!("give a budget: --cases N and/or --time DURATION");
    }
    let user = rtl.user()?;
    if user.is_some() && blocks.len() > 1 {
        bail!("--rtl is one block's RTL: name the block, not `all`");
    }
    if let Some(v) = &variant {
        for b in &blocks {
            for_block(b, &mut CheckVariantC { label: v })?;
        }
    }
    let variant = match (&variant, &user, blocks.first()) {
        (None, Some(_), Some(b)) => Some(default_label(b)?),
        _ => variant,
    };
    let share = time.map(|t| t / blocks.len() as u32);
    let mut worst = 0;
    for b in blocks {
        let a = FuzzArgs {
            o: FuzzOptions {
                cases,
                time: share,
                cycles: cycles as usize,
                base_seed: seed,
                shard,
                out_dir: out.clone(),
                replay: replay_prefix(),
                shrink: Duration::from_secs(60),
                jobs: jobs.map_or_else(cores, |j| j as usize),
                variant: variant.clone(),
                user: user.clone(),
            },
            require_coverage,
            json,
        };
        worst = worst.max(for_block(b, &mut FuzzC { a: &a })?);
        if (worst == 1 && !require_coverage) || worst == 130 {
            break;
        }
    }
    Ok(worst)
}

/// The options of `switchsim replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayOpts {
    /// The repro file (written on a mismatch, or by hand).
    pub file: PathBuf,
    /// Replay a configuration the hardware flags as illegal (the RTL
    /// must raise its configuration error; fuzz cases do this on purpose).
    #[arg(long)]
    pub illegal_config: bool,
    /// Output directory.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    #[command(flatten)]
    pub rtl: RtlArgs,
}

/// `switchsim replay`.
pub fn replay_file(o: ReplayOpts) -> Result<u8> {
    let ReplayOpts {
        file,
        out,
        illegal_config,
        rtl,
    } = o;
    replay_on(&file, &out, illegal_config, rtl.user()?.as_ref())
}

/// Replays the repro file `file` on the project's RTL or on `user`'s,
/// printing the report: 0 agree, 1 a mismatch.
pub fn replay_on(
    file: &Path,
    out: &Path,
    illegal_config: bool,
    user: Option<&UserRtl>,
) -> Result<u8> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let block = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("block "))
        .map(|s| s.trim().to_string())
        .ok_or_else(|| anyhow!("{}: no `block` line", file.display()))?;
    for_block(
        block.as_str(),
        &mut ReplayC {
            text: &text,
            out,
            illegal: illegal_config,
            user,
        },
    )
    .with_context(|| format!("{}", file.display()))
}

/// `switchsim list`.
pub fn list_all() -> Result<u8> {
    for b in testbenches::registry::names() {
        for_block(b, &mut ListC)?;
    }
    Ok(0)
}

/// The options of `switchsim run`.
#[derive(clap::Args, Debug)]
pub struct RunOpts {
    /// Block to simulate, or `all`.
    #[arg(default_value = "mmu")]
    pub block: String,
    /// Structural variant (see `switchsim list`); default: the block's first.
    #[arg(long)]
    pub variant: Option<String>,
    /// Configuration file (TOML); default: the block's default configuration.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Draw the configuration from the seed too.
    #[arg(long, conflicts_with = "config")]
    pub random_config: bool,
    /// Seed of the traffic (and of the RTL's random initial state).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cycles to run (any number: the traffic is streamed, memory stays flat).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub cycles: u64,
    /// Output directory for waveforms and repro files.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// After a passing run, write waveforms of its first N cycles (0: none).
    #[arg(long, default_value_t = 0)]
    pub vcd_cycles: u64,
    /// Threads: 1, 2 (the model runs ahead of the RTL on a second
    /// thread), or `auto` (2 for runs of a million cycles or more on a
    /// machine with two cores or more).
    #[arg(long, default_value = "auto", value_parser = parse_threads)]
    pub threads: Threads,
    /// Flip the lowest bit of the model's output PORT in stimulus cycle
    /// CYCLE (`PORT@CYCLE`): a stand-in for a bug, to see the mismatch
    /// path end to end. The repro file holds the traffic, not the fault.
    #[arg(long, value_name = "PORT@CYCLE", value_parser = lockstep::Fault::parse)]
    pub inject_fault: Option<lockstep::Fault>,
    #[command(flatten)]
    pub rtl: RtlArgs,
    /// Print a machine-readable summary (JSON) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `switchsim run`.
pub fn run_blocks(o: RunOpts) -> Result<u8> {
    let RunOpts {
        block,
        variant,
        config,
        random_config,
        seed,
        cycles,
        out,
        vcd_cycles,
        json,
        threads,
        inject_fault,
        rtl,
    } = o;
    let user = rtl.user()?;
    let a = RunArgs {
        variant: variant.as_deref(),
        config: config.as_deref(),
        random_config,
        seed,
        cycles,
        out: &out,
        vcd_cycles,
        json,
        threads: threads.0,
        fault: inject_fault.clone(),
        user: user.as_ref(),
    };
    if block == "all" && (a.variant.is_some() || a.config.is_some() || a.user.is_some()) {
        bail!("--variant, --config and --rtl name one block; not valid with `all`");
    }
    let blocks = blocks_of(&block)?;
    let run_all = || -> Result<u8> {
        let mut worst = 0;
        for b in &blocks {
            worst = worst.max(for_block(b, &mut RunC { a: &a })?);
        }
        Ok(worst)
    };
    if blocks.len() == 1 {
        return run_all();
    }
    // Every block's design is built in the background, on every core, while
    // the blocks run in order: a run waits for its design (or builds it
    // itself when the background has not started it), so the runs fill the
    // time the builds leave a core idle.
    // (`all` takes no --variant: the default variants.)
    let names: Vec<String> = blocks.iter().map(|b| b.to_string()).collect();
    let cancel = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let builds = sc.spawn(|| prebuild(&names, true, cores(), &cancel));
        let runs = run_all();
        // A run that fails leaves the other designs unbuilt.
        cancel.store(true, Ordering::Relaxed);
        let built = builds
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the design builder panicked")));
        // A failed build is also its block's failed run (the process keeps
        // a design's build result), so the runs' error comes first.
        let worst = runs?;
        built?;
        Ok(worst)
    })
}

/// The options of `switchsim build`.
#[derive(clap::Args, Debug)]
pub struct BuildOpts {
    /// Blocks to build (default: all).
    pub blocks: Vec<String>,
    /// Only each block's default variant (what `run all` uses); default:
    /// every variant (what the tests use).
    #[arg(long)]
    pub default_only: bool,
    /// Builds at a time (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
}

/// The project's designs of block `B`: every variant, or the default one.
pub fn designs_of<B: Bench>(default_only: bool) -> Result<Vec<cosim::design::Design>> {
    let vs = B::variants();
    let n = if default_only { 1 } else { vs.len() };
    vs[..n]
        .iter()
        .map(cosim::design::Design::ours::<B>)
        .collect()
}

struct DesignsC<'a> {
    default_only: bool,
    out: &'a mut Vec<cosim::design::Design>,
}
impl Command for DesignsC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        self.out.extend(designs_of::<B>(self.default_only)?);
        Ok(0)
    }
}

/// Builds the named blocks' designs that are not cached yet, `jobs` at a
/// time.
pub fn prebuild(
    blocks: &[String],
    default_only: bool,
    jobs: usize,
    cancel: &AtomicBool,
) -> Result<()> {
    let mut ds = Vec::new();
    for b in blocks {
        for_block(
            b,
            &mut DesignsC {
                default_only,
                out: &mut ds,
            },
        )?;
    }
    // The longest first, so that the last build does not run alone, judged
    // by the Verilog a design reads, then by its ports: ordered by ports
    // alone, a cold `make run` started the STX switch (44 s, the longest by
    // far) fourth, behind designs of 3-6 s.
    ds.sort_by_cached_key(|d| std::cmp::Reverse((d.source_bytes(), d.out_words() + d.in_words())));
    cosim::builder::prebuild(&ds, jobs, cancel)
}

/// `switchsim build`: verilates and compiles the designs ahead of use.
pub fn build_blocks(o: BuildOpts) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let blocks = names_or_all(o.blocks);
    let blocks: Vec<String> = blocks
        .into_iter()
        .flat_map(|b| {
            if b == "all" {
                names_or_all(vec![])
            } else {
                vec![b]
            }
        })
        .collect();
    let jobs = o.jobs.map_or(cores(), |j| j as usize);
    prebuild(&blocks, o.default_only, jobs, &AtomicBool::new(false))?;
    let root = cosim::builder::cache_root();
    println!(
        "built: {} block{} in {:.1} s; cache {} ({:.1} MiB)",
        blocks.len(),
        if blocks.len() == 1 { "" } else { "s" },
        t0.elapsed().as_secs_f64(),
        root.display(),
        cosim::builder::disk_usage(&root) as f64 / (1 << 20) as f64
    );
    Ok(0)
}

struct CheckVariantC<'a> {
    label: &'a str,
}
impl Command for CheckVariantC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        variant_of::<B>(Some(self.label)).map(|_| 0)
    }
}

struct DefaultLabelC(String);
impl Command for DefaultLabelC {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        self.0 = B::variants()[0].label();
        Ok(0)
    }
}

/// The label of block `b`'s default variant.
fn default_label(b: &str) -> Result<String> {
    let mut c = DefaultLabelC(String::new());
    for_block(b, &mut c)?;
    Ok(c.0)
}

/// The options of `switchsim fuzz-merge`.
#[derive(clap::Args, Debug)]
pub struct FuzzMergeOpts {
    /// The shards' reports (`switchsim fuzz ... --shard I/N --json`, one file each).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Fail (exit 1) if a coverage bin is hit by no shard.
    #[arg(long)]
    pub require_coverage: bool,
    /// Print the merged campaign as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `switchsim fuzz-merge`.
pub fn fuzz_merge(o: FuzzMergeOpts) -> Result<u8> {
    let m = crate::fuzzmerge::merge_files(&o.files)?;
    let (text, failed) = crate::fuzzmerge::report(&m, o.require_coverage);
    if o.json {
        println!("{}", crate::fuzzmerge::to_json(&m, failed));
    } else {
        print!("{text}");
    }
    Ok(u8::from(failed))
}

/// One scenario's verdict: model and RTL in lockstep, then its documented
/// outcome (`Scenario::check`).
#[derive(Debug)]
pub struct ScenarioVerdict {
    /// The block.
    pub block: &'static str,
    /// The scenario.
    pub name: &'static str,
    /// Its stimulus' cycles.
    pub cycles: usize,
    /// Whether it declares a documented outcome.
    pub checked: bool,
    /// `Err`: the mismatch report, or how the outcome differs.
    pub result: Result<(), String>,
}

/// Every scenario of `block` run as `switchsim trace` runs it (waveforms
/// only on a mismatch, under `out`). Not generic, so that a test calling
/// it reuses this crate's compiled runner instead of compiling its own.
pub fn scenario_verdicts(block: &str, out: &Path) -> Result<Vec<ScenarioVerdict>> {
    struct C<'a>(&'a Path, Vec<ScenarioVerdict>);
    impl Command for C<'_> {
        fn call<B: Bench>(&mut self) -> Result<u8> {
            for s in B::scenarios() {
                let stim = (s.build)();
                let dir = self.0.join(format!("{}-{}", B::NAME, s.name));
                let result = match lockstep::run(&stim, &opts_on(&dir, Waves::OnMismatch, None))? {
                    Outcome::Pass(_) => match s.check {
                        Some(check) => scenario_outputs(&stim).and_then(|o| check(&stim, &o)),
                        None => Ok(()),
                    },
                    Outcome::Mismatch(m) => Err(m.to_string()),
                    Outcome::Interrupted(_) => Err("interrupted".into()),
                };
                self.1.push(ScenarioVerdict {
                    block: B::NAME,
                    name: s.name,
                    cycles: stim.cycles.len(),
                    checked: s.check.is_some(),
                    result,
                });
            }
            Ok(0)
        }
    }
    let mut c = C(out, Vec::new());
    super::for_block(block, &mut c)?;
    Ok(c.1)
}
