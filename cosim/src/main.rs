//! `switchsim`: lockstep co-simulation of the golden models and the RTL.
//!
//! Exit codes: 0 model and RTL agree, 1 a mismatch (or, with
//! `--require-coverage`, a coverage bin never hit), 2 bad input (arguments,
//! configuration, stimulus file, missing tool).

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use cosim::fuzz::{self, FuzzOptions};
use cosim::lockstep::{self, Coverage, Options, Outcome, WaveFiles, Waves};
use model::stim::Stimulus;
use model::{Block, Params};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use testbenches::Bench;

/// The blocks named, or every block of the registry when none is.
fn names_or_all(blocks: Vec<String>) -> Vec<String> {
    if blocks.is_empty() {
        testbenches::registry::names()
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        blocks
    }
}

/// A command run for one block, generically.
trait Command {
    fn call<B: Bench>(&mut self) -> Result<u8>;
}

/// Runs `c` for the block named `name`, found in the registry
/// (`testbenches::registry`, the one list of blocks).
fn for_block<C: Command>(name: &str, c: &mut C) -> Result<u8> {
    struct Adapter<'a, C> {
        c: &'a mut C,
        out: Option<Result<u8>>,
    }
    impl<C: Command> testbenches::registry::Visit for Adapter<'_, C> {
        fn visit<B: Bench>(&mut self) {
            self.out = Some(self.c.call::<B>());
        }
    }
    let mut a = Adapter { c, out: None };
    testbenches::registry::visit_named(name, &mut a);
    a.out.unwrap_or_else(|| {
        let known = testbenches::registry::names().join(", ");
        Err(if name == "all" {
            anyhow!("`all` is not valid here: name one block ({known})")
        } else {
            anyhow!("unknown block `{name}` (known: {known})")
        })
    })
}

/// Declares a [`Command`] that calls the generic function `$f::<B>` with
/// the struct's fields.
macro_rules! command {
    ($c:ident<$l:lifetime> { $($field:ident : $ty:ty),* $(,)? } => $f:ident) => {
        struct $c<$l> {
            $($field: $ty),*
        }
        impl Command for $c<'_> {
            fn call<B: Bench>(&mut self) -> Result<u8> {
                $f::<B>($(self.$field),*)
            }
        }
    };
}

command!(RunC<'a> { a: &'a RunArgs<'a> } => cmd_run);
command!(FuzzC<'a> { a: &'a FuzzArgs } => cmd_fuzz);
command!(ReplayC<'a> { text: &'a str, out: &'a Path, illegal: bool } => cmd_replay);
command!(TraceC<'a> { name: Option<&'a str>, out: &'a Path } => cmd_trace);
command!(ConfigC<'a> { variant: Option<&'a str> } => cmd_config);

struct LintC<'a> {
    rtl: &'a Path,
    failed: &'a mut usize,
}
impl Command for LintC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        lint_block::<B>(self.rtl, self.failed)
    }
}

struct SynthC<'a>(&'a mut Vec<String>);
impl Command for SynthC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        synth_block::<B>(self.0)
    }
}

struct ListC;
impl Command for ListC {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        list_block::<B>()
    }
}

struct BenchC<'a> {
    seconds: f64,
    repeat: usize,
    streamed_only: bool,
    rows: &'a mut Vec<cosim::bench::Row>,
    rss: &'a mut Vec<(String, String, Option<u64>)>,
    streamed: &'a mut Vec<cosim::streambench::StreamRow>,
}
impl Command for BenchC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        bench_block::<B>(
            self.seconds,
            self.repeat,
            self.streamed_only,
            self.rows,
            self.rss,
            self.streamed,
        )
    }
}

struct MutateC<'a> {
    cases: usize,
    jobs: usize,
    limit: Option<usize>,
    only: &'a [String],
    list: bool,
    md: &'a mut (String, String),
}
impl Command for MutateC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        mutate_block::<B>(
            self.cases, self.jobs, self.limit, self.only, self.list, self.md,
        )
    }
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
        /// Cycles to run (any number: the traffic is streamed, memory stays flat).
        #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
        cycles: u64,
        /// Output directory for waveforms and repro files.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// After a passing run, write waveforms of its first N cycles (0: none).
        #[arg(long, default_value_t = 0)]
        vcd_cycles: u64,
        /// Threads: 1, 2 (the model runs ahead of the RTL on a second
        /// thread), or `auto` (2 for runs of a million cycles or more on a
        /// machine with two cores or more).
        #[arg(long, default_value = "auto", value_parser = parse_threads)]
        threads: Threads,
        /// Flip the lowest bit of the model's output PORT in stimulus cycle
        /// CYCLE (`PORT@CYCLE`): a stand-in for a bug, to see the mismatch
        /// path end to end. The repro file holds the traffic, not the fault.
        #[arg(long, value_name = "PORT@CYCLE", value_parser = lockstep::Fault::parse)]
        inject_fault: Option<lockstep::Fault>,
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
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        cases: Option<u64>,
        /// Time budget, e.g. `90s`, `5m`.
        #[arg(long, value_parser = parse_duration)]
        time: Option<Duration>,
        /// Cycles per case.
        #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
        cycles: u64,
        /// Threads running cases (default: every core).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
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
        /// Replay a configuration the hardware flags as illegal (the RTL
        /// must raise its configuration error; fuzz cases do this on purpose).
        #[arg(long)]
        illegal_config: bool,
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
        /// Only the streamed-stimulus figures (and their section of the file).
        #[arg(long)]
        streamed_only: bool,
    },
    /// Soak: `run BLOCK --cycles N` for every block in a fresh process each;
    /// fails on any mismatch; records wall time and peak memory.
    Soak {
        /// Blocks (default: all).
        blocks: Vec<String>,
        /// Cycles per block.
        #[arg(long, default_value_t = 100_000_000)]
        cycles: u64,
        /// Update the soak section of this Markdown file (e.g. BENCHMARKS.md).
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
    /// plotted beside it as SVG and PNG (same name, `.svg` and `.png`).
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
        /// Output CSV file; the plots go beside it, with extensions `.svg` and
        /// `.png`.
        #[arg(long, default_value = "out/stx_sweep.csv")]
        out: PathBuf,
        /// Simulate nothing: plot an existing sweep CSV to an SVG and a PNG
        /// beside it.
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
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().gbps)]
        speed: f64,
        /// Cable length in m, one per ingress port (comma separated), or one for every port.
        #[arg(long, value_delimiter = ',', default_value = "300")]
        cable: Vec<f64>,
        /// Propagation speed, a fraction of c.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().velocity)]
        velocity: f64,
        /// MTU, bytes.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().mtu)]
        mtu: u64,
        /// The peer's response time, ns (default: the PFC cap, 3840 B / C).
        #[arg(long)]
        response: Option<f64>,
        /// Cell size, bytes.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().cell)]
        cell: u64,
        /// Clock, GHz.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().clock_ghz)]
        clock: f64,
        /// One credit every this many cycles.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().credit_interval)]
        credit_interval: u64,
        /// Fabric speed-up.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().speedup)]
        speedup: f64,
        /// Credit loop RTT, ns (default: 2 Dprop of the longest cable + the response time).
        #[arg(long)]
        rtt: Option<f64>,
        /// Cell-fabric utilisation rho.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().load)]
        load: f64,
        /// Cell-fabric loss probability target.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().loss)]
        loss: f64,
        /// Switch bandwidth for the pipeline count, Gb/s (default: cables x speed).
        #[arg(long)]
        switch: Option<f64>,
        /// Datapath width, bytes.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().bus)]
        bus: u64,
        /// MMU buffer, cells (default: the largest the MMU variant counts).
        #[arg(long)]
        buffer_cells: Option<u64>,
        /// Lossless priorities, a bit mask.
        #[arg(long, default_value_t = cosim::size::SizeArgs::default().lossless)]
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

/// A duration such as `90s`, `5m` or `1h30m` (`humantime`), or a bare
/// number of seconds.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = match s.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => humantime::parse_duration(s)
            .map_err(|e| format!("`{s}` is not a duration (e.g. 90s, 5m, 1h30m): {e}"))?,
    };
    if d.is_zero() {
        return Err(format!("`{s}`: a budget of no time runs nothing"));
    }
    Ok(d)
}

/// `--threads`: a count, or chosen by the run's length.
#[derive(Clone, Copy, Debug)]
struct Threads(Option<usize>);

fn parse_threads(s: &str) -> Result<Threads, String> {
    match s {
        "auto" => Ok(Threads(None)),
        "1" => Ok(Threads(Some(1))),
        "2" => Ok(Threads(Some(2))),
        _ => Err(format!("`{s}`: expected 1, 2 or auto")),
    }
}

/// The cores this machine offers.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// When the process started (for end-to-end rates).
static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Seconds since the process started.
fn since_start() -> f64 {
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

/// The progress line of a long run, on a terminal.
fn run_progress(done: u64, total: u64, secs: f64) {
    let rate = done as f64 / secs.max(1e-9);
    let eta = total.saturating_sub(done) as f64 / rate.max(1.0);
    eprint!(
        "\r  {done} / {total} cycles  ({:.1} %)  {:.2} M cycles/s  {eta:.0} s left   ",
        100.0 * done as f64 / total.max(1) as f64,
        rate / 1e6
    );
    let _ = std::io::stderr().flush();
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
        ..Options::default()
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
    cycles: u64,
    out: &'a Path,
    vcd_cycles: u64,
    json: bool,
    threads: Option<usize>,
    fault: Option<lockstep::Fault>,
}

fn cmd_run<B: Bench>(a: &RunArgs) -> Result<u8> {
    // End to end: from process start for the first block of the process,
    // from the start of this block's run for the next ones of `run all`.
    static FIRST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);
    let t_block = std::time::Instant::now();
    let first = FIRST.swap(false, std::sync::atomic::Ordering::SeqCst);
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
        ..opts(a.out, Waves::OnMismatch)
    };
    let outcome = lockstep::run(&stim, &o)?;
    if tty && a.cycles >= 1 << 16 {
        eprint!("\r{:78}\r", "");
    }
    let mut waves = None;
    let mut not_written = Vec::new();
    if matches!(outcome, Outcome::Pass(_)) && a.vcd_cycles > 0 {
        // The first N cycles of a seed are the same for any length.
        let head = testbenches::run_of::<B>(&p, a.seed, a.vcd_cycles.min(a.cycles), Some(&cfg));
        if let Outcome::Pass(s) = lockstep::run(&head, &opts(a.out, Waves::Always))? {
            waves = s.waves;
            not_written.extend(s.write_errors);
        }
    }
    // Next to the waveforms when there are some (the same time axis; the
    // pcap holds the whole run), else in the run's own folder.
    let frames_dir = waves
        .as_ref()
        .and_then(|w: &WaveFiles| w.merged.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| lockstep::run_dir(&stim, a.out));
    let frames = match write_frames(&stim, &frames_dir) {
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
            Outcome::Pass(s) => (s.secs, s.rate(), Some(&s.coverage)),
            Outcome::Mismatch(_) => (0.0, 0.0, None),
        };
        let body = serde_json::json!({
            "block": B::NAME,
            "variant": p.label(),
            "seed": a.seed,
            "cycles": a.cycles,
            "seconds": (secs * 1000.0).round() / 1000.0,
            "cycles_per_second": rate.round(),
            "end_to_end_cycles_per_second": end_to_end.round(),
            "threads": threads,
            "passed": outcome.mismatch().is_none(),
            "coverage": coverage.map(fuzz::coverage_json),
            "holes": coverage.map(|c| c.holes()),
            "merged_vcd": path(waves.as_ref().map(|w: &WaveFiles| w.merged.as_path())),
            "pcap": path(frames.as_ref().map(|f| f.0.as_path())),
            "mismatch": outcome.mismatch().map(fuzz::mismatch_json),
            "not_written": not_written,
            "peak_rss_kib": cosim::bench::peak_rss_kib(),
        });
        println!("{body}");
        return Ok(u8::from(outcome.mismatch().is_some()));
    }
    println!("{}", config_line::<B>(&p, &stim.config));
    let code = report(&outcome, &what);
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
    if let Some(w) = waves {
        println!(
            "waveforms of the first {} cycles:",
            a.vcd_cycles.min(a.cycles)
        );
        print_waves(&w);
    }
    print_frames(&frames);
    for e in &not_written {
        println!("not written: {e}");
    }
    Ok(code)
}

/// Writes the frames block `B` transmits on `stim` (golden model) to
/// `dir/frames.pcap`, stamped in nanoseconds like the waveforms (one cycle
/// per ns, the power-on reset cycles included); `None` for a block without
/// frames.
fn write_frames<B: Bench>(stim: &Stimulus<B>, dir: &Path) -> Result<Option<(PathBuf, usize)>> {
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

fn cmd_replay<B: Bench>(text: &str, out: &Path, illegal: bool) -> Result<u8> {
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
    let files = cosim::toolchain::rtl_files(rtl, B::NAME)
        .with_context(|| format!("cannot read {}", rtl.display()))?;
    for v in B::variants() {
        let mut cmd = std::process::Command::new("verilator");
        cmd.args(cosim::toolchain::verilator_args(
            cosim::toolchain::Purpose::Lint,
            B::NAME,
            &v.verilog(),
            &files,
            "",
            Path::new(""),
        ));
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
    streamed_only: bool,
    rows: &mut Vec<cosim::bench::Row>,
    rss: &mut Vec<(String, String, Option<u64>)>,
    streamed: &mut Vec<cosim::streambench::StreamRow>,
) -> Result<u8> {
    let tmp = std::env::temp_dir().join(format!("switchsim-bench-{}", std::process::id()));
    for p in B::variants() {
        // Calibrate: cycles for about `seconds` of lockstep.
        let probe = cosim::bench::measure::<B>(&p, 2000, 10, 1, &tmp)?;
        let cycles = ((probe.lockstep * seconds) as usize).clamp(5_000, 2_000_000);
        if streamed_only {
            let n = ((probe.lockstep * 5.0) as u64).clamp(20_000, 1_000_000);
            let exe = std::env::current_exe()?;
            streamed.push(cosim::streambench::measure::<B>(&p, n, repeat, &exe, &tmp)?);
            continue;
        }
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
        // Streamed stimulus: 10^6 cycles, or about 5 s of lockstep where
        // that is fewer (the large arbiters).
        let n = ((r.lockstep * 5.0) as u64).clamp(20_000, 1_000_000);
        let exe = std::env::current_exe()?;
        let sr = cosim::streambench::measure::<B>(&p, n, repeat.min(2), &exe, &tmp)?;
        eprintln!(
            "{} {} streamed: gen {} model {} e2e {} (loop {}) 2 threads {}",
            sr.block,
            sr.variant,
            cosim::bench::rate(sr.gen),
            cosim::bench::rate(sr.model),
            cosim::bench::rate(sr.e2e1),
            cosim::bench::rate(sr.loop1),
            cosim::bench::rate(sr.loop2)
        );
        streamed.push(sr);
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
         synth -flatten -top {b}; check -assert; select -assert-none t:$_DLATCH*; \
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
    for b in testbenches::registry::names() {
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

fn blocks_of(name: &str) -> Result<Vec<&str>> {
    if name == "all" {
        Ok(testbenches::registry::names())
    } else if testbenches::registry::names().contains(&name) {
        Ok(vec![name])
    } else {
        bail!(
            "unknown block `{name}` (known: {}, all)",
            testbenches::registry::names().join(", ")
        )
    }
}

/// The plots of the sweep CSV `csv`: beside it, with extensions `.svg`
/// and `.png`.
fn sweep_plot_paths(csv: &Path) -> Result<[PathBuf; 2]> {
    let paths = ["svg", "png"].map(|ext| csv.with_extension(ext));
    if paths.iter().any(|p| p == csv) {
        bail!(
            "{}: the sweep CSV cannot have the extension .svg or .png, which its plots take",
            csv.display()
        );
    }
    Ok(paths)
}

/// Plots the sweep CSV `text` (read from `csv`) to `svg` and `png`.
fn write_sweep_plot(text: &str, csv: &Path, [svg, png]: &[PathBuf; 2]) -> Result<()> {
    let rows = cosim::stx::parse_sweep_csv(text, csv)?;
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
        Ok::<_, anyhow::Error>(())
    };
    write(svg, cosim::stx::sweep_svg(&rows)?.as_bytes())?;
    write(png, &cosim::stx::sweep_png(&rows)?)
}

/// `sweep --plot-only`: plots an existing sweep CSV.
fn cmd_sweep_plot(csv: &Path) -> Result<u8> {
    let plots = sweep_plot_paths(csv)?;
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
    write_sweep_plot(&text, csv, &plots)?;
    Ok(0)
}

fn cmd_sweep(spec: cosim::stx::SweepSpec, out: &Path) -> Result<u8> {
    use cosim::stx::{csv_text, sweep};
    let plots = sweep_plot_paths(out)?;
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
    let text = csv_text(&spec, &points)?;
    std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} points, {:.1} s)",
        out.display(),
        points.len(),
        t0.elapsed().as_secs_f64()
    );
    write_sweep_plot(&text, out, &plots)?;
    Ok(u8::from(points.iter().any(|p| !p.complete)))
}

fn main() -> ExitCode {
    // A closed pipe (`switchsim ... | head -1`) ends the process quietly, as
    // it does for Unix tools, instead of a panic on the next print.
    // SAFETY: setting a signal's disposition to the default, before any
    // thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    since_start();
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
            threads,
            inject_fault,
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
                threads: threads.0,
                fault: inject_fault.clone(),
            };
            if block == "all" && (a.variant.is_some() || a.config.is_some()) {
                bail!("--variant and --config name one block; not valid with `all`");
            }
            let mut worst = 0;
            for b in blocks_of(&block)? {
                worst = worst.max(for_block(b, &mut RunC { a: &a })?);
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
            jobs,
        } => (|| {
            let blocks = blocks_of(&block)?;
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
                        cycles: cycles as usize,
                        base_seed: seed,
                        shard,
                        out_dir: out.clone(),
                        replay: replay_prefix(),
                        shrink: Duration::from_secs(60),
                        jobs: jobs.map_or_else(cores, |j| j as usize),
                    },
                    require_coverage,
                    json,
                };
                worst = worst.max(for_block(b, &mut FuzzC { a: &a })?);
                if worst == 1 && !require_coverage {
                    break;
                }
            }
            Ok(worst)
        })(),
        Cmd::Replay {
            file,
            out,
            illegal_config,
        } => (|| {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let block = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("block "))
                .map(|s| s.trim().to_string())
                .ok_or_else(|| anyhow!("{}: no `block` line", file.display()))?;
            for_block(
                block.as_str(),
                &mut ReplayC {
                    text: &text,
                    out: &out,
                    illegal: illegal_config,
                },
            )
            .with_context(|| format!("{}", file.display()))
        })(),
        Cmd::Trace {
            block,
            scenario,
            out,
        } => for_block(
            block.as_str(),
            &mut TraceC {
                name: scenario.as_deref(),
                out: &out,
            },
        ),
        Cmd::Config { block, variant } => for_block(
            block.as_str(),
            &mut ConfigC {
                variant: variant.as_deref(),
            },
        ),
        Cmd::Lint { rtl } => (|| {
            let mut failed = 0;
            for b in testbenches::registry::names() {
                for_block(
                    b,
                    &mut LintC {
                        rtl: &rtl,
                        failed: &mut failed,
                    },
                )?;
            }
            Ok(u8::from(failed > 0))
        })(),
        Cmd::Bench {
            blocks,
            seconds,
            repeat,
            write,
            streamed_only,
        } => (|| {
            let names = names_or_all(blocks);
            let mut rows = Vec::new();
            let mut rss = Vec::new();
            let mut streamed = Vec::new();
            let mut fuzz_rows = Vec::new();
            for b in &names {
                for_block(
                    b,
                    &mut BenchC {
                        seconds,
                        repeat,
                        streamed_only,
                        rows: &mut rows,
                        rss: &mut rss,
                        streamed: &mut streamed,
                    },
                )?;
                let tmp =
                    std::env::temp_dir().join(format!("switchsim-fuzz-{}", std::process::id()));
                let exe = std::env::current_exe()?;
                // About 3 s of cases at one job (2000 cycles each): a short
                // campaign measures the per-case start-up, not the scaling.
                let rate = streamed
                    .iter()
                    .find(|r| r.block == b.as_str())
                    .map_or(100_000.0, |r| r.e2e1);
                let cases = ((rate * 3.0 / 2000.0) as u64).clamp(100, 2000);
                let j1 = cosim::streambench::fuzz_rate(&exe, b, cases, 1, &tmp)?;
                let j2 = cosim::streambench::fuzz_rate(&exe, b, cases, 2, &tmp)?;
                eprintln!("{b} fuzz: jobs 1 {j1:.0}, jobs 2 {j2:.0} cycles/s");
                fuzz_rows.push((b.clone(), cases, j1, j2));
                let _ = std::fs::remove_dir_all(&tmp);
            }
            let md = cosim::bench::markdown(&rows, &rss);
            let md2 = cosim::streambench::markdown(&streamed, &fuzz_rows);
            if !streamed_only {
                println!("{md}");
            }
            print!("{md2}");
            if let Some(path) = write {
                if !streamed_only {
                    cosim::bench::update_file(&path, &md)?;
                }
                cosim::bench::update_section(&path, "streamed", &md2)?;
                println!("updated {}", path.display());
            }
            Ok(0)
        })(),
        Cmd::Soak {
            blocks,
            cycles,
            write,
        } => (|| {
            let names = names_or_all(blocks);
            let exe = std::env::current_exe()?;
            let tmp = PathBuf::from("out/soak");
            let mut runs = Vec::new();
            for b in &names {
                eprintln!("soak: {b}, {cycles} cycles ...");
                let r = cosim::streambench::soak(&exe, b, cycles, &tmp)?;
                eprintln!(
                    "  {} in {:.1} s, peak RSS {}",
                    if r.passed { "PASS" } else { "FAIL" },
                    r.secs,
                    r.rss_kib
                        .map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
                );
                if !r.passed {
                    println!("{}", r.what);
                }
                runs.push(r);
            }
            let md = cosim::streambench::soak_markdown(&runs);
            print!("{md}");
            if let Some(path) = write {
                cosim::bench::update_section(&path, "soak", &md)?;
                println!("updated {}", path.display());
            }
            Ok(u8::from(runs.iter().any(|r| !r.passed)))
        })(),
        Cmd::Synth { blocks, write } => (|| {
            let names = names_or_all(blocks);
            println!("| block | variant | cells | flip-flops | muxes | yosys s |\n|---|---|---:|---:|---:|---:|");
            let mut rows = Vec::new();
            for b in &names {
                for_block(b, &mut SynthC(&mut rows))?;
            }
            if let Some(path) = write {
                // Blocks not synthesised in this run keep their row.
                let old = std::fs::read_to_string(&path).unwrap_or_default();
                let merged: Vec<String> = testbenches::registry::names()
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
            let names = names_or_all(blocks);
            let mut md = (String::new(), String::new());
            let mut worst = 0;
            println!("| block | mutants | stillborn | valid | equivalent | killed | survived | kill rate | seconds |");
            for b in &names {
                worst = worst.max(for_block(
                    b,
                    &mut MutateC {
                        cases,
                        jobs,
                        limit,
                        only: &only,
                        list,
                        md: &mut md,
                    },
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
            for b in testbenches::registry::names() {
                for_block(b, &mut ListC)?;
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
