//! `switchsim`: lockstep co-simulation of the golden models and the RTL.
//!
//! Exit codes: 0 model and RTL agree, 1 a mismatch (or, with
//! `--require-coverage`, a coverage bin never hit), 2 bad input (arguments,
//! configuration, stimulus file, missing tool), 130 stopped by SIGINT or
//! SIGTERM (after reporting what was verified).

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

use switchsim::cmd::*;

#[derive(Parser)]
#[command(
    name = "switchsim",
    version,
    about = "Co-simulate the switch-ASIC golden models against their Verilog RTL, cycle by cycle.",
    after_help = "Exit codes: 0 agree, 1 mismatch (or uncovered bin with --require-coverage), 2 bad input, 130 interrupted (SIGINT/SIGTERM; what was verified is reported)."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Lockstep co-simulation of a block (or all) on seeded random traffic.
    Run(switchsim::cmd::RunOpts),
    /// Fuzz: many seeded random cases (variant, configuration, traffic) against a budget.
    Fuzz(switchsim::cmd::FuzzOpts),
    /// The verdict of a fuzz campaign run as shards: every shard's JSON
    /// report merged (coverage union per block, cases, cycles, failures with
    /// their repro files); fails on a mismatch, a missing shard, or (with
    /// --require-coverage) a bin no shard hit.
    FuzzMerge(switchsim::cmd::FuzzMergeOpts),
    /// Re-run a repro file deterministically and write its waveforms.
    Replay(switchsim::cmd::ReplayOpts),
    /// Run a named directed scenario from the source documents and write its waveforms.
    Trace {
        /// Block.
        block: String,
        /// Scenario name; omit to list the block's scenarios.
        scenario: Option<String>,
        /// Output directory.
        #[arg(long, default_value = "out/trace")]
        out: PathBuf,
        #[command(flatten)]
        rtl: switchsim::cmd::RtlArgs,
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
    Bench(switchsim::cmd::BenchOpts),
    /// Soak: `run BLOCK --cycles N` for every block in a fresh process each;
    /// fails on any mismatch; records wall time and peak memory.
    Soak(switchsim::cmd::SoakOpts),
    /// Synthesise every block (default variant) with Yosys: no latches, no
    /// multiple drivers; print (and optionally record) the cell counts.
    Synth(switchsim::cmd::SynthOpts),
    /// Mutation campaign: single-point RTL mutants against the default test budget.
    Mutate(switchsim::cmd::MutateOpts),
    /// List the blocks, their verilated variants and scenarios.
    List,
    /// Verilate and compile the blocks' designs ahead of use (they are
    /// built on first use anyway), every variant or the default ones, on
    /// every core; prints the cache folder and its size.
    Build(switchsim::cmd::BuildOpts),
    /// Buffer sizing from a link (seeds 000 and 001), term by term: PFC headroom
    /// per ingress port, credit buffer and quantum, cell-fabric buffer, mean
    /// queues, pipelines; then the MMU and credit configurations as TOML
    /// (see docs/sizing.md).
    Size(switchsim::cmd::SizeOpts),
    /// The system studies of the source documents, on the golden models
    /// (or the verilated blocks with `--rtl`): `study stx`, `study bcn`,
    /// `study recn`.
    #[command(subcommand)]
    Study(Study),
    /// Alias of `study stx`.
    #[command(hide = true)]
    Sweep(switchsim::cmd::SweepOpts),
    /// Alias of `study bcn`.
    #[command(hide = true)]
    BcnLoop(switchsim::cmd::BcnLoopOpts),
    /// Alias of `study recn`.
    #[command(hide = true)]
    RecnNet(switchsim::cmd::RecnNetOpts),
    /// Lint every RTL block, for every verilated variant, with
    /// `verilator --lint-only -Wall`.
    Lint(switchsim::cmd::LintOpts),
}

/// The studies, one family.
#[derive(Subcommand)]
enum Study {
    /// The OSMOSIS switch with and without speculative transmission (seed
    /// 004) over a range of loads, around the arbiter model (or RTL): the
    /// measured figures beside the analytic model, as CSV, SVG and PNG (old
    /// name: `sweep`).
    #[command(alias = "sweep")]
    Stx(switchsim::cmd::SweepOpts),
    /// The BCN closed loop (seed 003): sources behind reaction points into
    /// a congestion-point queue drained slower than they offer; CSV and
    /// charts of the queue depth and the sources' rates (see docs/bcn.md).
    /// With `--sweep`: amplitude and convergence against Gd, W and the
    /// control-loop delay (old name: `bcn-loop`).
    #[command(alias = "bcn-loop")]
    Bcn(switchsim::cmd::BcnLoopOpts),
    /// The network study of seed 002 section 5: VOQ Net, VOQ Switch and
    /// RECN 2 VCs (the recn_port model, or its RTL) on a folded butterfly;
    /// best-effort throughput and QoS latency against the input load, and a
    /// hot spot; CSV and charts (see docs/recn_net.md; old name: `recn-net`).
    #[command(alias = "recn-net")]
    Recn(switchsim::cmd::RecnNetOpts),
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
    // SIGINT / SIGTERM: every run stops at its next cycle, closes its
    // waveforms and reports what it verified (exit 130); a second signal
    // ends the process at once.
    let _ = ctrlc::set_handler(|| {
        if cosim::lockstep::stop_requested() {
            std::process::exit(130);
        }
        cosim::lockstep::request_stop();
    });
    let cli = Cli::parse();
    let r: Result<u8> = match cli.cmd {
        Cmd::Run(o) => run_blocks(o),
        Cmd::Fuzz(o) => fuzz_blocks(o),
        Cmd::Replay(o) => replay_file(o),
        Cmd::FuzzMerge(o) => fuzz_merge(o),
        Cmd::Trace {
            block,
            scenario,
            out,
            rtl,
        } => rtl
            .user()
            .and_then(|user| trace_block(&block, scenario.as_deref(), &out, user.as_ref())),
        Cmd::Config { block, variant } => config_block(&block, variant.as_deref()),
        Cmd::Lint(o) => lint_all(o),
        Cmd::Bench(o) => bench_blocks(o),
        Cmd::Soak(o) => soak_blocks(o),
        Cmd::Synth(o) => synth_blocks(o),
        Cmd::Mutate(o) => mutate_blocks(o),
        Cmd::Study(Study::Stx(o)) | Cmd::Sweep(o) => cmd_sweep(o),
        Cmd::Study(Study::Bcn(o)) | Cmd::BcnLoop(o) => cmd_bcn_loop(o),
        Cmd::Study(Study::Recn(o)) | Cmd::RecnNet(o) => cmd_recn_net(o),
        Cmd::Size(o) => cmd_size(o),
        Cmd::List => list_all(),
        Cmd::Build(o) => build_blocks(o),
    };
    if std::env::var_os("SWITCHSIM_PEAK_RSS").is_some() {
        if let Some(k) = switchsim::bench::peak_rss_kib() {
            eprintln!("peak_rss_kib {k}");
        }
    }
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) if cosim::lockstep::stop_requested() => {
            eprintln!("interrupted: {e:#}");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
