//! `switchsim`: lockstep co-simulation of the golden models and the RTL.

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand};
use cosim::lockstep::{self, Options, Outcome, Waves};
use model::arbiter::Arbiter;
use model::mmu::Mmu;
use model::stim::Stimulus;
use model::{Block, Params};
use std::path::PathBuf;
use std::process::ExitCode;
use testbenches::Bench;

/// Blocks with a golden model and RTL, in the order `all` runs them.
const BLOCKS: &[&str] = &["mmu", "arbiter"];

/// Calls `$f::<Block>($args)` for the block named `$name`.
macro_rules! with_block {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name {
            "mmu" => $f::<Mmu>($($arg),*),
            "arbiter" => $f::<Arbiter>($($arg),*),
            other => Err(anyhow!(
                "unknown block `{other}` (known: {})", BLOCKS.join(", ")
            )),
        }
    };
}

#[derive(Parser)]
#[command(
    name = "switchsim",
    version,
    about = "Co-simulate the switch-ASIC golden models against their Verilog RTL, cycle by cycle."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a seeded random co-simulation of a block.
    Run {
        /// Block to simulate.
        #[arg(default_value = "mmu")]
        block: String,
        /// Structural variant (see `switchsim list`); default: the block's first.
        #[arg(long)]
        variant: Option<String>,
        /// Seed of the stimulus (and of the RTL's random initial state).
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
        /// Draw the configuration from the seed too, instead of the block's default.
        #[arg(long)]
        random_config: bool,
    },
    /// Re-run a repro file (written on a mismatch) and write its waveforms.
    Replay {
        /// The repro file.
        file: PathBuf,
        /// Output directory.
        #[arg(long, default_value = "out")]
        out: PathBuf,
    },
    /// List the blocks and their verilated variants.
    List,
    /// Simulate the OSMOSIS switch with and without speculative transmission
    /// (seed 004) over a range of loads, around the arbiter model (or RTL),
    /// and write the measured figures beside the analytic model to CSV.
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
        /// Output CSV file.
        #[arg(long, default_value = "out/stx_sweep.csv")]
        out: PathBuf,
    },
    /// Lint every RTL block, for every verilated variant, with
    /// `verilator --lint-only -Wall`.
    Lint {
        /// The RTL directory.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../rtl"))]
        rtl: PathBuf,
    },
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

fn opts(out: PathBuf, waves: Waves) -> Options {
    Options {
        out_dir: out,
        waves,
        context: 8,
        replay: format!("{} replay", replay_prefix()),
    }
}

/// How to invoke this binary again: the path it was started with.
fn replay_prefix() -> String {
    std::env::args()
        .next()
        .unwrap_or_else(|| "switchsim".into())
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
            print!("{}", s.coverage);
            if let Some((m, r)) = &s.waves {
                println!("waveforms: {}\n           {}", m.display(), r.display());
            }
            0
        }
        Outcome::Mismatch(m) => {
            print!("{m}");
            1
        }
    }
}

fn cmd_run<B: Bench>(
    variant: Option<&str>,
    seed: u64,
    cycles: usize,
    out: PathBuf,
    vcd_cycles: usize,
    random_config: bool,
) -> Result<u8>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let p = variant_of::<B>(variant)?;
    let default = B::default_config(&p);
    let stim = testbenches::generate::<B>(&p, seed, cycles, (!random_config).then_some(&default));
    B::check(&p, &stim.config)?;
    println!("{}", config_line::<B>(&p, &stim.config));
    let what = format!("{} {} seed {}", B::NAME, p.label(), seed);
    let outcome = lockstep::run(&stim, &opts(out.clone(), Waves::OnMismatch))?;
    let code = report(&outcome, &what);
    if code == 0 && vcd_cycles > 0 {
        let mut head = stim.clone();
        head.cycles.truncate(vcd_cycles);
        match lockstep::run(&head, &opts(out, Waves::Always))? {
            Outcome::Pass(s) => {
                let (m, r) = s.waves.expect("traced run writes waveforms");
                println!(
                    "waveforms of the first {} cycles:\n  {}\n  {}",
                    head.cycles.len(),
                    m.display(),
                    r.display()
                );
            }
            Outcome::Mismatch(m) => {
                print!("{m}");
                return Ok(1);
            }
        }
    }
    Ok(code)
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
                d.name,
                model::port::format_plain(d.shape, l.slice(&w, k))
            )
        })
        .collect();
    format!("config {}", parts.join(" "))
}

fn cmd_replay<B: Bench>(text: &str, out: PathBuf) -> Result<u8> {
    let stim = Stimulus::<B>::from_text(text, &B::variants()).map_err(|e| anyhow!(e))?;
    let what = format!("{} {} replay", B::NAME, stim.params.label());
    let outcome = lockstep::run(&stim, &opts(out, Waves::Always))?;
    Ok(report(&outcome, &what))
}

fn list_block<B: Block>() -> Result<u8> {
    let labels: Vec<String> = B::variants().iter().map(|v| v.label()).collect();
    println!("{:<10} {}", B::NAME, labels.join(" "));
    Ok(0)
}

fn lint_block<B: Block>(rtl: &std::path::Path, failed: &mut usize) -> Result<u8> {
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

fn cmd_sweep(spec: cosim::stx::SweepSpec, out: &std::path::Path) -> Result<u8> {
    use cosim::stx::{csv_rows, sweep, CSV_HEADER};
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
    std::fs::write(out, text).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} points, {:.1} s)",
        out.display(),
        points.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(u8::from(points.iter().any(|p| !p.complete)))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Run {
            block,
            variant,
            seed,
            cycles,
            out,
            vcd_cycles,
            random_config,
        } => with_block!(
            block.as_str(),
            cmd_run(
                variant.as_deref(),
                seed,
                cycles,
                out,
                vcd_cycles,
                random_config
            )
        ),
        Cmd::Replay { file, out } => (|| {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let block = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("block "))
                .map(|s| s.trim().to_string())
                .ok_or_else(|| anyhow!("{}: no `block` line", file.display()))?;
            with_block!(block.as_str(), cmd_replay(&text, out))
                .with_context(|| format!("{}", file.display()))
        })(),
        Cmd::Lint { rtl } => (|| {
            let mut failed = 0;
            for b in BLOCKS {
                with_block!(*b, lint_block(&rtl, &mut failed))?;
            }
            Ok(u8::from(failed > 0))
        })(),
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
        Cmd::List => (|| {
            for b in BLOCKS {
                with_block!(*b, list_block())?;
            }
            Ok(0)
        })(),
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
