//! `switchsim`: lockstep co-simulation of the golden models and the RTL.
//!
//! Exit codes: 0 model and RTL agree, 1 a mismatch (or, with
//! `--require-coverage`, a coverage bin never hit), 2 bad input (arguments,
//! configuration, stimulus file, missing tool).

use anyhow::Result;
use clap::{Parser, Subcommand};
use cosim::lockstep::{self};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use cosim::cmd::*;

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
    /// The BCN closed loop (seed 003): S sources, each behind a reaction
    /// point, into one congestion-point queue drained slower than they offer;
    /// CSV and charts of the queue depth and the sources' rates (see
    /// docs/bcn.md). With `--sweep`: amplitude and convergence time against
    /// Gd, W and the control-loop delay.
    BcnLoop {
        /// Sources (one reaction point each).
        #[arg(long, default_value_t = 4)]
        sources: usize,
        /// Frame length, bytes.
        #[arg(long, default_value_t = 1500)]
        frame_len: u16,
        /// Line rate of each source, bytes per cycle.
        #[arg(long, default_value_t = 8.0)]
        line_rate: f64,
        /// Drain rate of the congested queue, bytes per cycle (default: half the line rate).
        #[arg(long)]
        drain: Option<f64>,
        /// Control-loop delay (CP message to RP), cycles.
        #[arg(long, default_value_t = 1000)]
        delay: u64,
        /// Forward delay (RP to CP), cycles.
        #[arg(long, default_value_t = 0)]
        fwd_delay: u64,
        /// Gd = 2^-GD.
        #[arg(long, default_value_t = 7)]
        gd: u8,
        /// Gi = 2^-GI.
        #[arg(long, default_value_t = 4)]
        gi: u8,
        /// W, in quarters (0..31): 8 is W = 2.
        #[arg(long, default_value_t = 8)]
        w: u8,
        /// Pm = PM / 1024 (default: every arrival; see docs/bcn.md).
        #[arg(long, default_value_t = 1024)]
        pm: u16,
        /// Qeq, bytes.
        #[arg(long, default_value_t = 26_000)]
        qeq: u32,
        /// CP queue limit, bytes.
        #[arg(long, default_value_t = 150_000)]
        buffer: u32,
        /// Cycles to run.
        #[arg(long, default_value_t = 1_500_000)]
        cycles: u64,
        /// Cycles per sample.
        #[arg(long, default_value_t = 1000)]
        sample_every: u64,
        /// Run both blocks' verilated RTL instead of the models.
        #[arg(long)]
        rtl: bool,
        /// Sweep Gd, W and the delay around the other settings.
        #[arg(long)]
        sweep: bool,
        /// Sweep threads.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Output stem: STEM.csv, STEM.svg, STEM.png (default out/bcn_loop, or
        /// out/bcn_sweep with --sweep).
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
        } => run_blocks(
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
        ),
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
        } => fuzz_blocks(
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
        ),
        Cmd::Replay {
            file,
            out,
            illegal_config,
        } => replay_file(file, out, illegal_config),
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
        Cmd::Lint { rtl } => lint_all(rtl),
        Cmd::Bench {
            blocks,
            seconds,
            repeat,
            write,
            streamed_only,
        } => bench_blocks(blocks, seconds, repeat, write, streamed_only),
        Cmd::Soak {
            blocks,
            cycles,
            write,
        } => soak_blocks(blocks, cycles, write),
        Cmd::Synth { blocks, write } => synth_blocks(blocks, write),
        Cmd::Mutate {
            blocks,
            cases,
            jobs,
            limit,
            only,
            list,
            write,
        } => mutate_blocks(blocks, cases, jobs, limit, only, list, write),
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
        Cmd::BcnLoop {
            sources,
            frame_len,
            line_rate,
            drain,
            delay,
            fwd_delay,
            gd,
            gi,
            w,
            pm,
            qeq,
            buffer,
            cycles,
            sample_every,
            rtl,
            sweep,
            jobs,
            out,
        } => cosim::bcn::cmd_bcn_loop(
            &studies::bcn_loop::LoopConfig {
                sources,
                frame_len,
                line_rate,
                drain: drain.unwrap_or(line_rate / 2.0),
                ctrl_delay: delay,
                fwd_delay,
                gd,
                gi,
                w,
                pm,
                qeq,
                buffer,
                sample_every,
                ..Default::default()
            },
            cycles,
            rtl,
            sweep,
            jobs,
            out,
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
        Cmd::List => list_all(),
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
