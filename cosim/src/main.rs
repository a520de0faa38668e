//! `switchsim`: lockstep co-simulation of the golden models and the RTL.

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand};
use cosim::lockstep::{self, Options, Outcome, Waves};
use model::credit::Credit;
use model::mmu::Mmu;
use model::stim::Stimulus;
use model::{Block, Params};
use std::path::PathBuf;
use std::process::ExitCode;
use testbenches::Bench;

/// Blocks with a golden model and RTL, in the order `all` runs them.
const BLOCKS: &[&str] = &["mmu", "credit"];

/// Calls `$f::<Block>($args)` for the block named `$name`.
macro_rules! with_block {
    ($name:expr, $f:ident ( $($arg:expr),* )) => {
        match $name {
            "mmu" => $f::<Mmu>($($arg),*),
            "credit" => $f::<Credit>($($arg),*),
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
