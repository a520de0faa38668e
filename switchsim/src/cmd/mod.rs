//! The commands of `switchsim`: what each does, for one block or all of
//! them. `main.rs` parses the command line and calls these.

use anyhow::{anyhow, Result};
use cosim::lockstep::{Coverage, Options, Outcome, UserRtl, WaveFiles, Waves};
use model::{Block, Params};
use std::io::Write;
use std::path::Path;
use std::time::Duration;
use testbenches::Bench;

pub mod hw;
pub mod run;
pub mod study;

pub use hw::*;
pub use run::*;
pub use study::*;

/// The blocks named, or every block of the registry when none is.
pub fn names_or_all(blocks: Vec<String>) -> Vec<String> {
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
pub trait Command {
    fn call<B: Bench>(&mut self) -> Result<u8>;
}

/// Runs `c` for the block named `name`, found in the registry
/// (`testbenches::registry`, the one list of blocks).
pub fn for_block<C: Command>(name: &str, c: &mut C) -> Result<u8> {
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
        pub struct $c<$l> {
            $(pub $field: $ty),*
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
command!(ReplayC<'a> { text: &'a str, out: &'a Path, illegal: bool, user: Option<&'a UserRtl> } => cmd_replay);
command!(TraceC<'a> { name: Option<&'a str>, out: &'a Path, user: Option<&'a UserRtl> } => cmd_trace);
command!(ConfigC<'a> { variant: Option<&'a str> } => cmd_config);

command!(LintC<'a> { rtl: &'a Path, jobs: &'a mut Vec<hw::LintJob> } => lint_block);

command!(SynthC<'a> { rtl: &'a Path, variant: Option<&'a str>, depth_timeout: u64, rows: &'a mut Vec<String> } => synth_block);

command!(ElabCheckC<'a> { rtl: &'a Path, all: bool, out: &'a mut Vec<(String, String)> } => elab_check);

pub struct ListC;
impl Command for ListC {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        list_block::<B>()
    }
}

pub struct BenchC<'a> {
    pub seconds: f64,
    pub repeat: usize,
    pub streamed_only: bool,
    pub rows: &'a mut Vec<crate::bench::Row>,
    pub rss: &'a mut Vec<(String, String, Option<u64>)>,
    pub streamed: &'a mut Vec<crate::streambench::StreamRow>,
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

pub struct MutateC<'a> {
    pub o: &'a MutateOpts,
    pub rtl: &'a Path,
    pub md: &'a mut (String, String),
}
impl Command for MutateC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        mutate_block::<B>(self.o, self.rtl, self.md)
    }
}

/// A duration such as `90s`, `5m` or `1h30m` (`humantime`), or a bare
/// number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
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
pub struct Threads(pub Option<usize>);

pub fn parse_threads(s: &str) -> Result<Threads, String> {
    match s {
        "auto" => Ok(Threads(None)),
        "1" => Ok(Threads(Some(1))),
        "2" => Ok(Threads(Some(2))),
        _ => Err(format!("`{s}`: expected 1, 2 or auto")),
    }
}

/// The cores this machine offers.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// When the process started (for end-to-end rates).
pub static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Seconds since the process started.
pub fn since_start() -> f64 {
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}

/// The progress line of a long run, on a terminal.
pub fn run_progress(done: u64, total: u64, secs: f64) {
    let rate = done as f64 / secs.max(1e-9);
    let eta = total.saturating_sub(done) as f64 / rate.max(1.0);
    eprint!(
        "\r  {done} / {total} cycles  ({:.1} %)  {:.2} M cycles/s  {eta:.0} s left   ",
        100.0 * done as f64 / total.max(1) as f64,
        rate / 1e6
    );
    let _ = std::io::stderr().flush();
}

pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
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

pub fn variant_of<B: Block>(label: Option<&str>) -> Result<B::Params> {
    let vs = B::variants();
    let Some(l) = label else {
        return Ok(vs[0].clone());
    };
    let scale = B::scale();
    vs.iter()
        .chain(&scale)
        .find(|v| v.label() == l)
        .cloned()
        .ok_or_else(|| {
            let mut known: Vec<String> = Vec::new();
            for l in vs.iter().chain(&scale).map(|v| v.label()) {
                if !known.contains(&l) {
                    known.push(l);
                }
            }
            anyhow!(
                "unknown variant `{l}` of {} (known: {})",
                B::NAME,
                known.join(", ")
            )
        })
}

/// How to invoke this binary again: the path it was started with, and the
/// designer's RTL it was given (`--rtl`, `--top`, `--map`), so that the
/// replay runs against the same RTL.
pub fn replay_prefix() -> String {
    let args: Vec<String> = std::env::args().collect();
    let mut p = format!(
        "{} replay",
        args.first().map_or("switchsim", String::as_str)
    );
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        for flag in ["--rtl", "--top", "--map"] {
            if a == flag {
                if let Some(v) = it.next() {
                    p += &format!(" {flag} {v}");
                }
            } else if a.starts_with(&format!("{flag}=")) {
                p += &format!(" {a}");
            }
        }
    }
    p
}

pub fn opts(out: &Path, waves: Waves) -> Options {
    Options {
        out_dir: out.to_path_buf(),
        waves,
        context: 8,
        replay: replay_prefix(),
        ..Options::default()
    }
}

/// [`opts`] on a designer's RTL (the project's when `None`).
pub fn opts_on(out: &Path, waves: Waves, user: Option<&UserRtl>) -> Options {
    Options {
        user: user.cloned(),
        ..opts(out, waves)
    }
}

/// `--rtl`, `--top`, `--map`: a designer's RTL verified against the golden
/// model instead of the project's (`docs/your-rtl.md`).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct RtlArgs {
    /// Your RTL: Verilog files, comma-separated, the top module's first.
    #[arg(long, value_delimiter = ',', value_name = "FILE.v[,FILE.v..]")]
    pub rtl: Vec<std::path::PathBuf>,
    /// Your top module (default: the map's `top`, else the block's name).
    #[arg(long, requires = "rtl")]
    pub top: Option<String>,
    /// The map of your ports onto the block's declaration (TOML): names,
    /// latencies, clocks per step, state paths.
    #[arg(long, requires = "rtl", value_name = "MAP.toml")]
    pub map: Option<std::path::PathBuf>,
}

impl RtlArgs {
    /// The designer's RTL, if `--rtl` was given.
    pub fn user(&self) -> Result<Option<UserRtl>> {
        if self.rtl.is_empty() {
            return Ok(None);
        }
        let map = match &self.map {
            Some(m) => cosim::design::UserMap::load(m)?,
            None => cosim::design::UserMap::default(),
        };
        Ok(Some(UserRtl {
            files: self.rtl.clone(),
            top: self.top.clone(),
            map,
            quick: false,
        }))
    }
}

pub fn print_waves(w: &WaveFiles) {
    println!("  {}  (model)", w.model.display());
    println!("  {}  (rtl, with internals)", w.rtl.display());
    println!("  {}  (both, with `mismatch`)", w.merged.display());
    println!("  view: gtkwave {}", w.gtkw.display());
}

pub fn print_coverage(c: &Coverage) {
    print!("{c}");
    let holes = c.holes();
    if !holes.is_empty() {
        println!("never hit: {}", holes.join(", "));
    }
}

pub fn report(outcome: &Outcome, what: &str) -> u8 {
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
                if s.write_errors.is_empty() {
                    println!("waveforms:");
                } else {
                    println!("waveforms (cut short where named below):");
                }
                print_waves(w);
            }
            for e in &s.write_errors {
                println!("not written: {e}");
            }
            0
        }
        Outcome::Mismatch(m) => {
            print!("{m}");
            if m.interrupted {
                println!("INTERRUPTED after the mismatch above");
                130
            } else {
                1
            }
        }
        Outcome::Interrupted(s) => {
            println!(
                "INTERRUPTED at cycle {n}: model and RTL agree on every output of cycles 0..{n} \
                 ({what})",
                n = s.cycles
            );
            print_coverage(&s.coverage);
            if let Some(w) = &s.waves {
                println!("waveforms (to cycle {}):", s.cycles);
                print_waves(w);
            }
            for e in &s.write_errors {
                println!("not written: {e}");
            }
            130
        }
    }
}
