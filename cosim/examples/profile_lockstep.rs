//! Runs one block variant's lockstep co-simulation repeatedly on one
//! pre-generated stimulus, for a profiler (`perf record`, `valgrind
//! --tool=callgrind --toggle-collect='*lockstep*pass*'`): generation is done
//! once, up front, so the profile is the runner's.
//!
//! ```text
//! cargo run --release -p cosim --example profile_lockstep -- mmu p2cw8 200000 5
//! ```

use anyhow::{anyhow, bail, Result};
use cosim::lockstep::{self, Options, Outcome, Waves};
use model::Params;
use testbenches::Bench;

fn go<B: Bench>(variant: &str, cycles: usize, runs: usize) -> Result<()> {
    let p = B::variants()
        .into_iter()
        .find(|p| p.label() == variant)
        .ok_or_else(|| anyhow!("no variant {variant} of {}", B::NAME))?;
    let cfg = B::default_config(&p);
    let stim = testbenches::generate::<B>(&p, 1, cycles, Some(&cfg));
    let opts = Options {
        out_dir: std::env::temp_dir(),
        waves: Waves::Never,
        context: 0,
        replay: String::new(),
    };
    for _ in 0..runs {
        match lockstep::run(&stim, &opts)? {
            Outcome::Pass(s) => println!("{:.0} cycles/s", s.rate()),
            Outcome::Mismatch(m) => bail!("{m}"),
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 4 {
        bail!("usage: profile_lockstep <block> <variant> <cycles> <runs>");
    }
    let (v, n, r) = (a[1].as_str(), a[2].parse()?, a[3].parse()?);
    match a[0].as_str() {
        "mmu" => go::<model::mmu::Mmu>(v, n, r),
        "pfc" => go::<model::pfc::Pfc>(v, n, r),
        "credit" => go::<model::credit::Credit>(v, n, r),
        "arbiter" => go::<model::arbiter::Arbiter>(v, n, r),
        b => bail!("unknown block {b}"),
    }
}
