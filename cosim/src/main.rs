//! `switchsim`: lockstep co-simulation of the golden models and the RTL.
//!
//! Exit codes: 0 model and RTL agree, 1 a mismatch (or, with
//! `--require-coverage`, a coverage bin never hit), 2 bad input (arguments,
//! configuration, stimulus file, missing tool).

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use cosim::fuzz::{self, FuzzOptions};
use cosim::lockstep::{self, Coverage, Options, Outcome, WaveFiles, Waves};
use model::arbiter::Arbiter;
use model::credit::Credit;
use model::mmu::Mmu;
use model::pfc::Pfc;
use model::stim::Stimulus;
use model::{Block, Params};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use testbenches::Bench;

/// Blocks with a golden model and RTL, in the order `all` runs them.
const BLOCKS: &[&str] = &["mmu", "pfc", "credit", "arbiter"];

/// Calls `$f::<Block>($args)` for the block named `$name`.
macro_rules! with_block {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name {
            "mmu" => $f::<Mmu>($($arg),*),
            "pfc" => $f::<Pfc>($($arg),*),
            "arbiter" => $f::<Arbiter>($($arg),*),
            "credit" => $f::<Credit>($($arg),*),
            other => Err(anyhow!(
                "unknown block `{other}` (known: {}, all)", BLOCKS.join(", ")
            )),
        }
    };
}

#[derive(Parser)]
#[command(
    name = "switchsim",
    version,
    about = "Co-simulate the switch-ASIC golden models against their Verilog RTL, cycle by cycle.",
    after_help = "Exit codes: 0 agree, 1 mismatch (or uncovered bin with --require-coverage), 2 bad input."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Lockstep co-simulation of a block (or all) on seeded random traffic.
    Run {
        /// Block to simulate, or `all`.
        #[arg(default_value = "mmu")]
        block: String,
        /// Structural variant (see `switchsim list`); default: the block's first.
        #[arg(long)]
        variant: Option<String>,
        /// Configuration file (TOML); default: the block's default configuration.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Draw the configuration from the seed too.
        #[arg(long, conflicts_with = "config")]
        random_config: bool,
        /// Seed of the traffic (and of the RTL's random initial state).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Cycles to run.
        #[arg(long, default_value_t = 100_000)]
        cycles: usize,
        /// Output directory for waveforms and repro files.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// After a passing run, write waveforms of its first N cycles (0: none).
        #[arg(long, default_value_t = 0)]
        vcd_cycles: usize,
        /// Print a machine-readable summary (JSON) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Fuzz: many seeded random cases (variant, configuration, traffic) against a budget.
    Fuzz {
        /// Block to fuzz, or `all` (the budget is split between blocks).
        #[arg(default_value = "all")]
        block: String,
        /// Number of cases (of this shard).
        #[arg(long)]
        cases: Option<u64>,
        /// Time budget, e.g. `90s`, `5m`.
        #[arg(long, value_parser = parse_duration)]
        time: Option<Duration>,
        /// Cycles per case.
        #[arg(long, default_value_t = 2000)]
        cycles: usize,
        /// Base seed of the campaign.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Run only shard I of N (`I/N`, 0-based): N jobs share one campaign without overlap.
        #[arg(long, value_parser = parse_shard, default_value = "0/1")]
        shard: (u64, u64),
        /// Fail (exit 1) if a coverage bin is never hit.
        #[arg(long)]
        require_coverage: bool,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Print a machine-readable summary (JSON).
        #[arg(long)]
        json: bool,
    },
    /// Re-run a repro file deterministically and write its waveforms.
    Replay {
        /// The repro file (written on a mismatch, or by hand).
        file: PathBuf,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// Run a named directed scenario from the source documents and write its waveforms.
    Trace {
        /// Block.
        block: String,
        /// Scenario name; omit to list the block's scenarios.
        scenario: Option<String>,
        /// Output directory.
        #[arg(long, default_value = "out/trace")]
        out: PathBuf,
    },
    /// Print a block's default configuration as TOML (a starting point for --config).
    Config {
        /// Block.
        block: String,
        /// Variant.
        #[arg(long)]
        variant: Option<String>,
    },
    /// Benchmark model, RTL (bindings and C++ harness), lockstep and tracing, side by side.
    Bench {
        /// Blocks to measure (default: all), every verilated variant of each.
        blocks: Vec<String>,
        /// Target wall time of one lockstep run, per variant (sets the cycle count).
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// Rounds (every figure once per round); the best of each figure is kept.
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Update the generated section of this Markdown file (e.g. BENCHMARKS.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Synthesise every block (default variant) with Yosys: no latches, no
    /// multiple drivers; print (and optionally record) the cell counts.
    Synth {
        /// Blocks (default: all).
        blocks: Vec<String>,
        /// Update the generated section of this Markdown file (e.g. docs/synth.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// Mutation campaign: single-point RTL mutants against the default test budget.
    Mutate {
        /// Blocks (default: all).
        blocks: Vec<String>,
        /// Random cases in the kill set (the default test budget is 256).
        #[arg(long, default_value_t = 256)]
        cases: usize,
        /// Mutants evaluated in parallel.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Evaluate only the first N mutants of each block.
        #[arg(long)]
        limit: Option<usize>,
        /// Evaluate only these mutants (ids as listed, comma separated), e.g.
        /// to re-check survivors after strengthening the tests; not with --write.
        #[arg(long, value_delimiter = ',', conflicts_with = "write")]
        only: Vec<String>,
        /// Only list the mutants.
        #[arg(long)]
        list: bool,
        /// Update the generated section of this Markdown file (e.g. docs/mutation.md).
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// List the blocks, their verilated variants and scenarios.
    List,
    /// Simulate the OSMOSIS switch with and without speculative transmission
    /// (seed 004) over a range of loads, around the arbiter model (or RTL),
    /// and write the measured figures beside the analytic model to CSV, and
    /// plotted to a PNG beside it (same name, `.png`).
    Sweep {
        /// Ports.
        #[arg(long, default_value_t = 64)]
        n: usize,
        /// Round trip in slots (even, 2..=126).
        #[arg(long, default_value_t = 64)]
        rtt: u64,
        /// Receivers per output, one STX curve each (comma separated).
        #[arg(long, value_delimiter = ',', default_value = "1,2,8")]
        r: Vec<usize>,
        /// Loads (comma separated).
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9"
        )]
        loads: Vec<f64>,
        /// iSLIP iterations (the paper: 6).
        #[arg(long, default_value_t = 6)]
        iters: usize,
        /// Warm-up slots per point.
        #[arg(long, default_value_t = 4000)]
        warmup: u64,
        /// Measured slots per point (cells arriving in them are measured).
        #[arg(long, default_value_t = 30_000)]
        slots: u64,
        /// Traffic seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Bursty on/off traffic with this mean burst length instead of
        /// uniform Bernoulli.
        #[arg(long)]
        burst: Option<f64>,
        /// Run the arbiter's verilated RTL instead of its model.
        #[arg(long)]
        rtl: bool,
        /// Worker threads.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Output CSV file; the plot goes beside it, with extension `.png`.
        #[arg(long, default_value = "out/stx_sweep.csv")]
        out: PathBuf,
        /// Simulate nothing: plot an existing sweep CSV to a PNG beside it.
        #[arg(
            long,
            value_name = "CSV",
            conflicts_with_all = [
                "n", "rtt", "r", "loads", "iters", "warmup", "slots", "seed", "burst", "rtl",
                "jobs", "out",
            ]
        )]
        plot_only: Option<PathBuf>,
    },
    /// Buffer sizing from a link (seeds 000 and 001), term by term: PFC headroom
    /// per ingress port, credit buffer and quantum, cell-fabric buffer, mean
    /// queues, pipelines; then the MMU and credit configurations as TOML
    /// (see docs/sizing.md).
    Size {
        /// Link speed, Gb/s.
        #[arg(long, default_value_t = 100.0)]
        speed: f64,
        /// Cable length in m, one per ingress port (comma separated), or one for every port.
        #[arg(long, value_delimiter = ',', default_value = "300")]
        cable: Vec<f64>,
        /// Propagation speed, a fraction of c.
        #[arg(long, default_value_t = 0.65)]
        velocity: f64,
        /// MTU, bytes.
        #[arg(long, default_value_t = 1500)]
        mtu: u64,
        /// The peer's response time, ns (default: the PFC cap, 3840 B / C).
        #[arg(long)]
        response: Option<f64>,
        /// Cell size, bytes.
        #[arg(long, default_value_t = 256)]
        cell: u64,
        /// Clock, GHz.
        #[arg(long, default_value_t = 1.0)]
        clock: f64,
        /// One credit every this many cycles.
        #[arg(long, default_value_t = 2)]
        credit_interval: u64,
        /// Fabric speed-up.
        #[arg(long, default_value_t = 1.05)]
        speedup: f64,
        /// Credit loop RTT, ns (default: 2 Dprop of the longest cable + the response time).
        #[arg(long)]
        rtt: Option<f64>,
        /// Cell-fabric utilisation rho.
        #[arg(long, default_value_t = 0.9)]
        load: f64,
        /// Cell-fabric loss probability target.
        #[arg(long, default_value_t = 1e-6)]
        loss: f64,
        /// Switch bandwidth for the pipeline count, Gb/s (default: cables x speed).
        #[arg(long)]
        switch: Option<f64>,
        /// Datapath width, bytes.
        #[arg(long, default_value_t = 256)]
        bus: u64,
        /// MMU buffer, cells (default: the largest the MMU variant counts).
        #[arg(long)]
        buffer_cells: Option<u64>,
        /// Lossless priorities, a bit mask.
        #[arg(long, default_value_t = 0x18)]
        lossless: u8,
        /// Write the MMU configuration (TOML) to this file instead of printing it.
        #[arg(long)]
        write: Option<PathBuf>,
        /// Write the credit scheduler configuration (TOML) to this file instead of printing it.
        #[arg(long)]
        write_credit: Option<PathBuf>,
    },
    /// Lint every RTL block, for every verilated variant, with
    /// `verilator --lint-only -Wall`.
    Lint {
        /// The RTL directory.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../rtl"))]
        rtl: PathBuf,
    },
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, mul) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 90s, 5m)"))?;
    if v < 0.0 || !v.is_finite() {
        return Err(format!("`{s}` is not a duration"));
    }
    Ok(Duration::from_secs_f64(v * mul))
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}`: expected I/N, e.g. 0/4"))?;
    let i: u64 = i.parse().map_err(|_| format!("`{s}`: I is not a number"))?;
    let n: u64 = n.parse().map_err(|_| format!("`{s}`: N is not a number"))?;
    if n == 0 || i >= n {
        return Err(format!("`{s}`: need 0 <= I < N"));
    }
    Ok((i, n))
}

fn variant_of<B: Block>(label: Option<&str>) -> Result<B::Params> {
    let vs = B::variants();
    match label {
        None => Ok(vs[0].clone()),
        Some(l) => vs.iter().find(|v| v.label() == l).cloned().ok_or_else(|| {
            let known: Vec<String> = vs.iter().map(|v| v.label()).collect();
            anyhow!(
                "unknown variant `{l}` of {} (known: {})",
                B::NAME,
                known.join(", ")
            )
        }),
    }
}

/// How to invoke this binary again: the path it was started with.
fn replay_prefix() -> String {
    format!(
        "{} replay",
        std::env::args()
            .next()
            .unwrap_or_else(|| "switchsim".into())
    )
}

fn opts(out: &Path, waves: Waves) -> Options {
    Options {
        out_dir: out.to_path_buf(),
        waves,
        context: 8,
        replay: replay_prefix(),
    }
}

fn print_waves(w: &WaveFiles) {
    println!("  {}  (model)", w.model.display());
    println!("  {}  (rtl, with internals)", w.rtl.display());
    println!("  {}  (both, with `mismatch`)", w.merged.display());
    println!("  view: gtkwave {}", w.gtkw.display());
}

fn print_coverage(c: &Coverage) {
    print!("{c}");
    let holes = c.holes();
    if !holes.is_empty() {
        println!("never hit: {}", holes.join(", "));
    }
}

fn report(outcome: &Outcome, what: &str) -> u8 {
    match outcome {
        Outcome::Pass(s) => {
            println!(
                "PASS {what}: {} cycles, model and RTL agree on every output of every cycle \
                 ({:.0} cycles/s)",
                s.cycles,
                s.rate()
            );
            print_coverage(&s.coverage);
            if let Some(w) = &s.waves {
                println!("waveforms:");
                print_waves(w);
            }
            0
        }
        Outcome::Mismatch(m) => {
            print!("{m}");
            1
        }
    }
}

/// The configuration as one `config name=value ...` line.
fn config_line<B: Block>(p: &B::Params, c: &B::Config) -> String {
    let l = <B::Config as model::PortGroup>::layout(p);
    let w = model::PortGroup::to_words(c, p).expect("checked configuration fits");
    let parts: Vec<String> = l
        .ports
        .iter()
        .enumerate()
        .map(|(k, d)| {
            format!(
                "{}={}",
                cosim::config::short(d.name),
                model::port::format_plain(d.shape, l.slice(&w, k))
            )
        })
        .collect();
    format!("config {}", parts.join(" "))
}

struct RunArgs<'a> {
    variant: Option<&'a str>,
    config: Option<&'a Path>,
    random_config: bool,
    seed: u64,
    cycles: usize,
    out: &'a Path,
    vcd_cycles: usize,
    json: bool,
}

fn cmd_run<B: Bench>(a: &RunArgs) -> Result<u8>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let (p, cfg) = match a.config {
        Some(path) => {
            let (p, c) = cosim::config::load::<B>(path)?;
            if let Some(v) = a.variant {
                if v != p.label() {
                    bail!(
                        "--variant {v} disagrees with variant = \"{}\" in {}",
                        p.label(),
                        path.display()
                    );
                }
            }
            (p, Some(c))
        }
        None => {
            let p = variant_of::<B>(a.variant)?;
            let c = (!a.random_config).then(|| B::default_config(&p));
            (p, c)
        }
    };
    let stim = testbenches::generate::<B>(&p, a.seed, a.cycles, cfg.as_ref());
    B::check(&p, &stim.config)?;
    let what = format!("{} {} seed {}", B::NAME, p.label(), a.seed);
    let outcome = lockstep::run(&stim, &opts(a.out, Waves::OnMismatch))?;
    let mut waves = None;
    if matches!(outcome, Outcome::Pass(_)) && a.vcd_cycles > 0 {
        let mut head = stim.clone();
        head.cycles.truncate(a.vcd_cycles);
        if let Outcome::Pass(s) = lockstep::run(&head, &opts(a.out, Waves::Always))? {
            waves = s.waves;
        }
    }
    let frames = write_frames(&stim, &lockstep::run_dir(&stim, a.out))?;
    if a.json {
        let body = match &outcome {
            Outcome::Pass(s) => format!(
                "{{\"block\": {}, \"variant\": {}, \"seed\": {}, \"cycles\": {}, \"seconds\": {:.3}, \
                 \"cycles_per_second\": {:.0}, \"passed\": true, \"coverage\": {}, \"holes\": [{}], \
                 \"merged_vcd\": {}, \"pcap\": {}}}",
                fuzz::json_str(B::NAME),
                fuzz::json_str(&p.label()),
                a.seed,
                s.cycles,
                s.secs,
                s.rate(),
                fuzz::coverage_json(&s.coverage),
                s.coverage
                    .holes()
                    .iter()
                    .map(|h| fuzz::json_str(h))
                    .collect::<Vec<_>>()
                    .join(", "),
                waves
                    .as_ref()
                    .map_or("null".into(), |w| fuzz::json_str(&w.merged.display().to_string())),
                frames
                    .as_ref()
                    .map_or("null".into(), |f| fuzz::json_str(&f.0.display().to_string()))
            ),
            Outcome::Mismatch(m) => format!(
                "{{\"block\": {}, \"passed\": false, \"mismatch\": {}}}",
                fuzz::json_str(B::NAME),
                fuzz::mismatch_json(m)
            ),
        };
        println!("{body}");
        return Ok(u8::from(outcome.mismatch().is_some()));
    }
    println!("{}", config_line::<B>(&p, &stim.config));
    let code = report(&outcome, &what);
    if let Some(w) = waves {
        println!(
            "waveforms of the first {} cycles:",
            a.vcd_cycles.min(a.cycles)
        );
        print_waves(&w);
    }
    print_frames(&frames);
    Ok(code)
}

/// Writes the frames block `B` transmits on `stim` (golden model) to
/// `dir/frames.pcap`, stamped in nanoseconds like the waveforms (one cycle
/// per ns, the power-on reset cycles included); `None` for a block without
/// frames.
fn write_frames<B: Bench>(stim: &Stimulus<B>, dir: &Path) -> Result<Option<(PathBuf, usize)>> {
    let Some(frames) = B::frames(stim) else {
        return Ok(None);
    };
    let timed: Vec<(u64, Vec<u8>)> = frames
        .into_iter()
        .map(|(c, f)| (c + lockstep::POWER_ON_RESET, f))
        .collect();
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join("frames.pcap");
    std::fs::write(&path, testbenches::pfc::pcap_ns(&timed))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(Some((path, timed.len())))
}

fn print_frames(f: &Option<(PathBuf, usize)>) {
    if let Some((path, n)) = f {
        println!(
            "frames: {n} transmitted -> {}  (open in Wireshark, or tshark -r)",
            path.display()
        );
    }
}

struct FuzzArgs {
    o: FuzzOptions,
    require_coverage: bool,
    json: bool,
}

fn cmd_fuzz<B: Bench>(a: &FuzzArgs) -> Result<u8>
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

fn cmd_replay<B: Bench>(text: &str, out: &Path) -> Result<u8> {
    let stim = Stimulus::<B>::from_text(text, &B::variants()).map_err(|e| anyhow!(e))?;
    let what = format!("{} {} replay", B::NAME, stim.params.label());
    let outcome = lockstep::run(&stim, &opts(out, Waves::Always))?;
    let code = report(&outcome, &what);
    print_frames(&write_frames(&stim, &lockstep::run_dir(&stim, out))?);
    Ok(code)
}

fn cmd_trace<B: Bench>(name: Option<&str>, out: &Path) -> Result<u8> {
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
    let outcome = lockstep::run(&stim, &opts(&dir, Waves::Always))?;
    std::fs::write(dir.join("scenario.stim"), stim.to_text())?;
    let code = report(&outcome, &format!("{} trace {}", B::NAME, s.name));
    print_frames(&write_frames(&stim, &lockstep::run_dir(&stim, &dir))?);
    Ok(code)
}

fn cmd_config<B: Block>(variant: Option<&str>) -> Result<u8> {
    let p = variant_of::<B>(variant)?;
    print!(
        "{}",
        cosim::config::to_toml::<B>(&p, &B::default_config(&p))
    );
    Ok(0)
}

fn cmd_size(a: &cosim::size::SizeArgs, mmu: Option<&Path>, credit: Option<&Path>) -> Result<u8> {
    let s = cosim::size::size(a)?;
    print!("{}", s.text);
    for (path, toml, what) in [
        (mmu, s.mmu_toml(), "mmu"),
        (credit, s.credit_toml(), "credit"),
    ] {
        match path {
            Some(p) => {
                std::fs::write(p, &toml)
                    .with_context(|| format!("cannot write {}", p.display()))?;
                println!(
                    "wrote {} (switchsim run {what} --config {})",
                    p.display(),
                    p.display()
                );
            }
            None => print!("\n{toml}"),
        }
    }
    Ok(0)
}

fn list_block<B: Bench>() -> Result<u8> {
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

fn lint_block<B: Block>(rtl: &Path, failed: &mut usize) -> Result<u8> {
    let file = rtl.join(format!("{}.v", B::NAME));
    let mut prims: Vec<PathBuf> = std::fs::read_dir(rtl)
        .with_context(|| format!("cannot read {}", rtl.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("prim_") && n.ends_with(".v"))
        })
        .collect();
    prims.sort();
    for v in B::variants() {
        let mut cmd = std::process::Command::new("verilator");
        cmd.args(["--lint-only", "-Wall", "--top-module", B::NAME]);
        for (k, val) in v.verilog() {
            cmd.arg(format!("-G{k}={val}"));
        }
        cmd.arg(&file).args(&prims);
        let o = cmd
            .output()
            .context("cannot run verilator (install it with `make deps`)")?;
        if o.status.success() && o.stderr.is_empty() {
            println!("lint clean  {} {}", B::NAME, v.label());
        } else {
            *failed += 1;
            println!("lint FAILED {} {}", B::NAME, v.label());
            print!("{}", String::from_utf8_lossy(&o.stderr));
        }
    }
    Ok(0)
}

fn bench_block<B: Bench>(
    seconds: f64,
    repeat: usize,
    rows: &mut Vec<cosim::bench::Row>,
    rss: &mut Vec<(String, String, Option<u64>)>,
) -> Result<u8>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let tmp = std::env::temp_dir().join(format!("switchsim-bench-{}", std::process::id()));
    for p in B::variants() {
        // Calibrate: cycles for about `seconds` of lockstep.
        let probe = cosim::bench::measure::<B>(&p, 2000, 10, 1, &tmp)?;
        let cycles = ((probe.lockstep * seconds) as usize).clamp(5_000, 2_000_000);
        let r = cosim::bench::measure::<B>(
            &p,
            cycles,
            (cycles / 10).clamp(1000, 20_000),
            repeat,
            &tmp,
        )?;
        eprintln!(
            "{} {}: model {} RTL {} C++ {} lockstep {} (ideal {}) traced {} cycles/s",
            r.block,
            r.variant,
            cosim::bench::rate(r.model),
            cosim::bench::rate(r.rtl),
            cosim::bench::rate(r.cxx),
            cosim::bench::rate(r.lockstep),
            cosim::bench::rate(r.ideal()),
            cosim::bench::rate(r.traced)
        );
        // Peak RSS of a co-simulation of this variant, in a fresh process.
        let o = std::process::Command::new(std::env::current_exe()?)
            .args(["run", B::NAME, "--variant", &p.label(), "--cycles", "20000"])
            .arg("--out")
            .arg(&tmp)
            .env("SWITCHSIM_PEAK_RSS", "1")
            .output()?;
        let kib = String::from_utf8_lossy(&o.stderr)
            .lines()
            .find_map(|l| l.strip_prefix("peak_rss_kib "))
            .and_then(|v| v.trim().parse().ok());
        rss.push((B::NAME.to_string(), p.label(), kib));
        rows.push(r);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(0)
}

fn synth_block<B: Block>(rows: &mut Vec<String>) -> Result<u8> {
    let p = &B::variants()[0];
    let files = cosim::golden::rtl_files(&cosim::golden::default_rtl_dir(), B::NAME)?;
    let stat = std::env::temp_dir().join(format!(
        "switchsim-synth-{}-{}.txt",
        B::NAME,
        std::process::id()
    ));
    let chparams: String = p
        .verilog()
        .iter()
        .map(|(k, v)| format!(" -chparam {k} {v}"))
        .collect();
    let reads: String = files
        .iter()
        .map(|f| format!("read_verilog -sv {}; ", f.display()))
        .collect();
    let script = format!(
        "{reads}hierarchy -check -top {b}{chparams}; proc; check -assert; \
         select -assert-none t:$dlatch t:$adlatch t:$dlatchsr; \
         synth -top {b}; check -assert; select -assert-none t:$_DLATCH*; \
         tee -q -o {stat} stat",
        b = B::NAME,
        stat = stat.display()
    );
    let t0 = std::time::Instant::now();
    let o = std::process::Command::new("yosys")
        .args(["-q", "-p", &script])
        .output()
        .context("cannot run yosys (install it with `make deps`: apt-get install -y yosys)")?;
    if !o.status.success() {
        bail!(
            "yosys failed on {} {}:\n{}{}",
            B::NAME,
            p.label(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let text = std::fs::read_to_string(&stat)?;
    let _ = std::fs::remove_file(&stat);
    let count = |pat: &str| -> u64 {
        text.lines()
            .filter(|l| l.trim_start().starts_with(pat))
            .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
            .sum()
    };
    let cells = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Number of cells:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    // `$_DFF*` includes `$_DFFE*`, `$_SDFF*` includes `$_SDFFE*`.
    let flops = count("$_DFF") + count("$_SDFF") + count("$_ALDFF");
    let muxes = count("$_MUX_");
    let row = format!(
        "| {} | {} | {} | {} | {} | {:.0} |",
        B::NAME,
        p.label(),
        cells,
        flops,
        muxes,
        t0.elapsed().as_secs_f64()
    );
    println!("{row}");
    rows.push(row);
    Ok(0)
}

/// The rows and survivor sections of this campaign (`md`), merged with
/// those of the blocks it did not run from the generated section of `path`,
/// so that `mutate <block> --write` updates one block's figures only.
fn merge_mutation_report(path: &Path, md: &(String, String)) -> (String, String) {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let row_of = |text: &str, b: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| {b} |")))
            .map(|l| format!("{l}\n"))
    };
    let section_of = |text: &str, b: &str| {
        let head = format!("\n### {b}\n");
        let at = text.find(&head)?;
        let rest = &text[at + head.len()..];
        let end = [rest.find("\n### "), rest.find("\n<!--")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(rest.len());
        Some(format!("{head}{}", rest[..end].trim_end_matches('\n')) + "\n")
    };
    let (mut rows, mut dets) = (String::new(), String::new());
    for b in BLOCKS {
        let (r, d) = match row_of(&md.0, b) {
            Some(r) => (Some(r), section_of(&md.1, b)),
            None => (row_of(&old, b), section_of(&old, b)),
        };
        rows.push_str(&r.unwrap_or_default());
        dets.push_str(&d.unwrap_or_default());
    }
    (rows, dets)
}

/// Mutants known to be equivalent (`docs/mutation-equivalent.txt`:
/// `<block> <line>:<col>:<op> <reason>` per line).
fn known_equivalent() -> Vec<(String, String, String)> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/mutation-equivalent.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            Some((
                it.next()?.to_string(),
                it.next()?.to_string(),
                it.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

fn mutate_block<B: Bench>(
    cases: usize,
    jobs: usize,
    limit: Option<usize>,
    only: &[String],
    list: bool,
    md: &mut (String, String),
) -> Result<u8>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    use cosim::mutate::Fate;
    use std::fmt::Write as _;
    let src =
        std::fs::read_to_string(cosim::golden::default_rtl_dir().join(format!("{}.v", B::NAME)))?;
    if list {
        for m in cosim::mutate::mutants(&src) {
            println!("{} {:<16} {}", B::NAME, m.id, m.after.trim());
        }
        return Ok(0);
    }
    // A re-check (--only) gets its own scratch, so it can run beside a campaign.
    let scratch = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/mutate")
        .join(if only.is_empty() {
            B::NAME.to_string()
        } else {
            format!("{}-only", B::NAME)
        });
    let done = std::sync::atomic::AtomicUsize::new(0);
    let c = cosim::mutate::campaign::<B>(cases, jobs, limit, only, &scratch, |_, total, m, f| {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let what = match f {
            Fate::Killed(_) => "killed".to_string(),
            Fate::Survived => "SURVIVED".to_string(),
            Fate::Stillborn(_) => "stillborn".to_string(),
        };
        eprintln!("[{}] {n}/{total} {:<16} {what}", B::NAME, m.id);
    })?;
    let equiv = known_equivalent();
    let is_equiv = |id: &str| {
        equiv
            .iter()
            .find(|(b, i, _)| b == B::NAME && i == id)
            .map(|(_, _, r)| r.clone())
    };
    let killed = c
        .results
        .iter()
        .filter(|(_, f)| matches!(f, Fate::Killed(_)))
        .count();
    let still = c
        .results
        .iter()
        .filter(|(_, f)| matches!(f, Fate::Stillborn(_)))
        .count();
    let survivors: Vec<&(cosim::mutate::Mutant, Fate)> = c
        .results
        .iter()
        .filter(|(_, f)| *f == Fate::Survived)
        .collect();
    let eq = survivors
        .iter()
        .filter(|(m, _)| is_equiv(&m.id).is_some())
        .count();
    let valid = c.results.len() - still;
    let nonequiv = valid - eq;
    let rate = 100.0 * killed as f64 / nonequiv.max(1) as f64;
    let line = format!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.1}% | {:.0} |",
        B::NAME,
        c.results.len(),
        still,
        valid,
        eq,
        killed,
        survivors.len() - eq,
        rate,
        c.secs
    );
    println!("{line}");
    writeln!(md.0, "{line}").unwrap();
    let mut detail = String::new();
    for (m, _) in &survivors {
        let why =
            is_equiv(&m.id).map_or("**not killed**".to_string(), |r| format!("equivalent: {r}"));
        writeln!(
            detail,
            "- `{}` line {} ({}): `{}` -> `{}` — {}",
            B::NAME,
            m.line,
            m.op,
            m.before.trim(),
            m.after.trim(),
            why
        )
        .unwrap();
    }
    if limit.is_none() && only.is_empty() {
        // An entry of the equivalence list must name a surviving mutant:
        // one that no longer exists (the RTL moved) or that was killed
        // (then it was not equivalent) is reported, not silently counted.
        for (_, id, _) in equiv.iter().filter(|(b, _, _)| b == B::NAME) {
            match c.results.iter().find(|(m, _)| &m.id == id) {
                None => writeln!(
                    detail,
                    "- `{}` {id}: **stale entry** in docs/mutation-equivalent.txt (no such mutant)",
                    B::NAME
                )
                .unwrap(),
                Some((_, Fate::Killed(_))) => writeln!(
                    detail,
                    "- `{}` {id}: **listed as equivalent but killed** (remove it from docs/mutation-equivalent.txt)",
                    B::NAME
                )
                .unwrap(),
                _ => {}
            }
        }
    }
    println!("{detail}");
    md.1.push_str(&format!(
        "\n### {}\n\n{}",
        B::NAME,
        if detail.is_empty() { "none\n" } else { &detail }
    ));
    Ok(u8::from(rate < 95.0))
}

fn blocks_of(name: &str) -> Vec<&str> {
    if name == "all" {
        BLOCKS.to_vec()
    } else {
        vec![name]
    }
}

/// The plot of the sweep CSV `csv`: beside it, with extension `.png`.
fn sweep_plot_path(csv: &Path) -> Result<PathBuf> {
    let png = csv.with_extension("png");
    if png == csv {
        bail!(
            "{}: the sweep CSV cannot have the extension .png, which its plot takes",
            csv.display()
        );
    }
    Ok(png)
}

/// Plots the sweep CSV `text` (read from `csv`) to `png`.
fn write_sweep_plot(text: &str, csv: &Path, png: &Path) -> Result<()> {
    let rows = cosim::stx::parse_sweep_csv(text, csv)?;
    std::fs::write(png, cosim::stx::sweep_png(&rows))
        .with_context(|| format!("writing {}", png.display()))?;
    println!("wrote {}", png.display());
    Ok(())
}

/// `sweep --plot-only`: plots an existing sweep CSV.
fn cmd_sweep_plot(csv: &Path) -> Result<u8> {
    let png = sweep_plot_path(csv)?;
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
    write_sweep_plot(&text, csv, &png)?;
    Ok(0)
}

fn cmd_sweep(spec: cosim::stx::SweepSpec, out: &Path) -> Result<u8> {
    use cosim::stx::{csv_rows, sweep, CSV_HEADER};
    let png = sweep_plot_path(out)?;
    if !spec.rtt.is_multiple_of(2) || !(2..=126).contains(&spec.rtt) {
        return Err(anyhow!("--rtt {}: must be even, in 2..=126", spec.rtt));
    }
    if !spec.n.is_power_of_two() || !(2..=64).contains(&spec.n) {
        return Err(anyhow!("--n {}: must be a power of two in 2..=64", spec.n));
    }
    if let Some(l) = spec.loads.iter().find(|l| !(**l > 0.0 && **l < 1.0)) {
        return Err(anyhow!("--loads: {l} is not in (0, 1)"));
    }
    if let Some(r) = spec.rs.iter().find(|r| !(1..=127).contains(*r)) {
        return Err(anyhow!("--r: {r} receivers is not in 1..=127"));
    }
    if !(1..=8).contains(&spec.iters) {
        return Err(anyhow!("--iters {}: must be in 1..=8", spec.iters));
    }
    println!(
        "sweep: N={} RTT={} R={:?} loads={:?} iSLIP x{} warm-up {} + {} measured slots, {} arbiter, {} traffic",
        spec.n,
        spec.rtt,
        spec.rs,
        spec.loads,
        spec.iters,
        spec.warmup,
        spec.slots,
        if spec.rtl { "RTL" } else { "model" },
        match spec.traffic {
            cosim::stx::TrafficKind::Bernoulli => "Bernoulli".to_string(),
            cosim::stx::TrafficKind::OnOff(b) => format!("on/off (mean burst {b})"),
        }
    );
    let t0 = std::time::Instant::now();
    let points = sweep(&spec, &|p| {
        println!(
            "  {:<7} load {:.2}: delay {:8.2} +- {:5.2}  throughput {:.4}  P_Ss {:.3}  ({:.1} s)",
            p.r.map_or("no STX".to_string(), |r| format!("R={r}")),
            p.load,
            p.stats.mean_delay(),
            p.stats.delay_ci95(),
            p.stats.throughput(),
            p.stats.p_ss(),
            p.secs
        );
    })?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut text = String::from(CSV_HEADER);
    text.push('\n');
    for row in csv_rows(&spec, &points) {
        text.push_str(&row);
        text.push('\n');
    }
    std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} points, {:.1} s)",
        out.display(),
        points.len(),
        t0.elapsed().as_secs_f64()
    );
    write_sweep_plot(&text, out, &png)?;
    Ok(u8::from(points.iter().any(|p| !p.complete)))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r: Result<u8> = match cli.cmd {
        Cmd::Run {
            block,
            variant,
            config,
            random_config,
            seed,
            cycles,
            out,
            vcd_cycles,
            json,
        } => (|| {
            let a = RunArgs {
                variant: variant.as_deref(),
                config: config.as_deref(),
                random_config,
                seed,
                cycles,
                out: &out,
                vcd_cycles,
                json,
            };
            if block == "all" && (a.variant.is_some() || a.config.is_some()) {
                bail!("--variant and --config name one block; not valid with `all`");
            }
            let mut worst = 0;
            for b in blocks_of(&block) {
                worst = worst.max(with_block!(b, cmd_run(&a))?);
            }
            Ok(worst)
        })(),
        Cmd::Fuzz {
            block,
            cases,
            time,
            cycles,
            seed,
            shard,
            require_coverage,
            out,
            json,
        } => (|| {
            let blocks = blocks_of(&block);
            if cases.is_none() && time.is_none() {
                bail!("give a budget: --cases N and/or --time DURATION");
            }
            let share = time.map(|t| t / blocks.len() as u32);
            let mut worst = 0;
            for b in blocks {
                let a = FuzzArgs {
                    o: FuzzOptions {
                        cases,
                        time: share,
                        cycles,
                        base_seed: seed,
                        shard,
                        out_dir: out.clone(),
                        replay: replay_prefix(),
                        shrink: Duration::from_secs(60),
                    },
                    require_coverage,
                    json,
                };
                worst = worst.max(with_block!(b, cmd_fuzz(&a))?);
                if worst == 1 && !require_coverage {
                    break;
                }
            }
            Ok(worst)
        })(),
        Cmd::Replay { file, out } => (|| {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let block = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("block "))
                .map(|s| s.trim().to_string())
                .ok_or_else(|| anyhow!("{}: no `block` line", file.display()))?;
            with_block!(block.as_str(), cmd_replay(&text, &out))
                .with_context(|| format!("{}", file.display()))
        })(),
        Cmd::Trace {
            block,
            scenario,
            out,
        } => with_block!(block.as_str(), cmd_trace(scenario.as_deref(), &out)),
        Cmd::Config { block, variant } => {
            with_block!(block.as_str(), cmd_config(variant.as_deref()))
        }
        Cmd::Lint { rtl } => (|| {
            let mut failed = 0;
            for b in BLOCKS {
                with_block!(*b, lint_block(&rtl, &mut failed))?;
            }
            Ok(u8::from(failed > 0))
        })(),
        Cmd::Bench {
            blocks,
            seconds,
            repeat,
            write,
        } => (|| {
            let names: Vec<String> = if blocks.is_empty() {
                BLOCKS.iter().map(|s| s.to_string()).collect()
            } else {
                blocks
            };
            let mut rows = Vec::new();
            let mut rss = Vec::new();
            for b in &names {
                with_block!(
                    b.as_str(),
                    bench_block(seconds, repeat, &mut rows, &mut rss)
                )?;
            }
            let md = cosim::bench::markdown(&rows, &rss);
            print!("{md}");
            if let Some(path) = write {
                cosim::bench::update_file(&path, &md)?;
                println!("updated {}", path.display());
            }
            Ok(0)
        })(),
        Cmd::Synth { blocks, write } => (|| {
            let names: Vec<String> = if blocks.is_empty() {
                BLOCKS.iter().map(|s| s.to_string()).collect()
            } else {
                blocks
            };
            println!("| block | variant | cells | flip-flops | muxes | yosys s |\n|---|---|---:|---:|---:|---:|");
            let mut rows = Vec::new();
            for b in &names {
                with_block!(b.as_str(), synth_block(&mut rows))?;
            }
            if let Some(path) = write {
                // Blocks not synthesised in this run keep their row.
                let old = std::fs::read_to_string(&path).unwrap_or_default();
                let merged: Vec<String> = BLOCKS
                    .iter()
                    .filter_map(|b| {
                        let head = format!("| {b} |");
                        rows.iter()
                            .find(|r| r.starts_with(&head))
                            .cloned()
                            .or_else(|| {
                                old.lines().find(|l| l.starts_with(&head)).map(String::from)
                            })
                    })
                    .collect();
                let md = format!(
                    "Generated by `make synth` (Yosys generic `synth`, default variant of each \
                     block; the run fails on a latch or a multiple driver).\n\n\
                     | block | variant | cells | flip-flops | muxes | yosys s |\n\
                     |---|---|---:|---:|---:|---:|\n{}\n",
                    merged.join("\n")
                );
                cosim::bench::update_file(&path, &md)?;
                println!("updated {}", path.display());
            }
            Ok(0)
        })(),
        Cmd::Mutate {
            blocks,
            cases,
            jobs,
            limit,
            only,
            list,
            write,
        } => (|| {
            let names: Vec<String> = if blocks.is_empty() {
                BLOCKS.iter().map(|s| s.to_string()).collect()
            } else {
                blocks
            };
            let mut md = (String::new(), String::new());
            let mut worst = 0;
            println!("| block | mutants | stillborn | valid | equivalent | killed | survived | kill rate | seconds |");
            for b in &names {
                worst = worst.max(with_block!(
                    b.as_str(),
                    mutate_block(cases, jobs, limit, &only, list, &mut md)
                )?);
            }
            if let (Some(path), false) = (write, list) {
                let (rows, dets) = merge_mutation_report(&path, &md);
                let out = format!(
                    "Generated by `make mutate`: {cases} random cases of the default test budget plus the directed \
                     scenarios per mutant, on each block's default variant.\n\n\
                     | block | mutants | stillborn | valid | equivalent | killed | survived | kill rate | seconds |\n\
                     |---|---:|---:|---:|---:|---:|---:|---:|---:|\n{rows}\n## Survivors\n{dets}\n"
                );
                cosim::bench::update_file(&path, &out)?;
                println!("updated {}", path.display());
            }
            Ok(worst)
        })(),
        Cmd::Sweep {
            plot_only: Some(csv),
            ..
        } => cmd_sweep_plot(&csv),
        Cmd::Sweep {
            n,
            rtt,
            r,
            loads,
            iters,
            warmup,
            slots,
            seed,
            burst,
            rtl,
            jobs,
            out,
            plot_only: None,
        } => cmd_sweep(
            cosim::stx::SweepSpec {
                n,
                rtt,
                rs: r,
                loads,
                iters,
                warmup,
                slots,
                seed,
                traffic: burst.map_or(cosim::stx::TrafficKind::Bernoulli, |b| {
                    cosim::stx::TrafficKind::OnOff(b)
                }),
                rtl,
                jobs,
            },
            &out,
        ),
        Cmd::Size {
            speed,
            cable,
            velocity,
            mtu,
            response,
            cell,
            clock,
            credit_interval,
            speedup,
            rtt,
            load,
            loss,
            switch,
            bus,
            buffer_cells,
            lossless,
            write,
            write_credit,
        } => cmd_size(
            &cosim::size::SizeArgs {
                gbps: speed,
                cables: cable,
                velocity,
                mtu,
                response_ns: response,
                cell,
                clock_ghz: clock,
                credit_interval,
                speedup,
                rtt_ns: rtt,
                load,
                loss,
                switch_gbps: switch,
                bus,
                buffer_cells,
                lossless,
            },
            write.as_deref(),
            write_credit.as_deref(),
        ),
        Cmd::List => (|| {
            for b in BLOCKS {
                with_block!(*b, list_block())?;
            }
            Ok(0)
        })(),
    };
    if std::env::var_os("SWITCHSIM_PEAK_RSS").is_some() {
        if let Some(k) = cosim::bench::peak_rss_kib() {
            eprintln!("peak_rss_kib {k}");
        }
    }
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
