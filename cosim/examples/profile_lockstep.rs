//! Where a lockstep cycle's time goes, for one block variant, on one
//! pre-generated stimulus (generation is done once, up front, so that a
//! profiler sees the runner):
//!
//! 1. the model side, piece by piece: `step_into` alone, then with the
//!    input packing, the coverage sampling and the output comparison
//!    (`eq_words`) added one at a time, then all of them (ns per cycle,
//!    best of 3);
//! 2. the RTL alone through the bindings, and the model (`step_into`) and
//!    the RTL interleaved cycle by cycle with nothing compared (ns per
//!    cycle): the difference between their sum and the interleaved figure
//!    is what running two large programs in turn on one core costs (caches,
//!    branch predictors), before any comparison;
//! 3. `runs` full lockstep runs (cycles per second).
//!
//! ```text
//! cargo run --release -p cosim --example profile_lockstep -- mmu p2cw8 200000 5
//! perf record -e cpu-clock target/release/examples/profile_lockstep ...
//! valgrind --tool=callgrind --toggle-collect='*lockstep*pass*' target/release/examples/profile_lockstep ...
//! ```

use anyhow::{anyhow, bail, Result};
use cosim::lockstep::{self, Options, Outcome, Waves};
use cosim::rtl::Rtl;
use model::stim::{Cycle, Stimulus};
use model::{Params, PortGroup};
use std::hint::black_box;
use std::time::Instant;
use testbenches::Bench;

/// The model side of a lockstep cycle with the parts in `with` (input
/// packing, coverage, comparison) switched on; ns per cycle, best of 3.
fn model_side<B: Bench>(stim: &Stimulus<B>, with: [bool; 3]) -> Result<f64> {
    let (p, cfg) = (&stim.params, &stim.config);
    let mut best = f64::MAX;
    for _ in 0..3 {
        let mut m = B::new(p, cfg);
        let mut o = B::Outputs::zero(p);
        let mut iw = vec![0u32; B::Inputs::layout(p).words];
        let ow = vec![0u32; B::Outputs::layout(p).words];
        let mut hits = vec![0u64; B::bins().len()];
        let mut equal = 0u64;
        let t0 = Instant::now();
        for c in &stim.cycles {
            match c {
                Cycle::Drive(i) => {
                    if with[0] {
                        i.pack(p, &mut iw).map_err(|e| anyhow!("{e}"))?;
                    }
                    m.step_into(black_box(i), &mut o);
                    if with[1] {
                        m.sample(i, &o, &mut hits);
                    }
                    if with[2] {
                        equal += u64::from(o.eq_words(p, black_box(&ow)));
                    }
                    black_box(&o);
                }
                Cycle::Reset => m = B::new(p, cfg),
            }
        }
        black_box((&hits, equal, &iw));
        best = best.min(t0.elapsed().as_secs_f64());
    }
    Ok(best * 1e9 / stim.cycles.len() as f64)
}

fn go<B: Bench>(variant: &str, cycles: usize, runs: usize) -> Result<()> {
    let p = B::variants()
        .into_iter()
        .find(|p| p.label() == variant)
        .ok_or_else(|| anyhow!("no variant {variant} of {}", B::NAME))?;
    let cfg = B::default_config(&p);
    let stim = testbenches::generate::<B>(&p, 1, cycles, Some(&cfg));
    for (name, with) in [
        ("step_into", [false, false, false]),
        ("+ pack inputs", [true, false, false]),
        ("+ coverage", [false, true, false]),
        ("+ compare outputs", [false, false, true]),
        ("all", [true, true, true]),
    ] {
        println!("{name:<26} {:8.1} ns/cycle", model_side(&stim, with)?);
    }
    // The RTL alone, and interleaved with the model.
    for with_model in [false, true] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let mut rtl = Rtl::<B>::new(&p, &cfg, 1, None)?;
            rtl.reset(2).map_err(|e| anyhow!("{e}"))?;
            let mut m = B::new(&p, &cfg);
            let mut o = B::Outputs::zero(&p);
            let words: Vec<Vec<u32>> = stim
                .cycles
                .iter()
                .map(|c| match c {
                    Cycle::Drive(i) => i.to_words(&p).map_err(|e| anyhow!("{e}")),
                    Cycle::Reset => Ok(vec![0; B::Inputs::layout(&p).words]),
                })
                .collect::<Result<_>>()?;
            let t0 = Instant::now();
            for (c, w) in stim.cycles.iter().zip(&words) {
                rtl.inputs_mut().copy_from_slice(w);
                let reset = matches!(c, Cycle::Reset);
                if with_model {
                    match c {
                        Cycle::Drive(i) => m.step_into(i, &mut o),
                        Cycle::Reset => m = B::new(&p, &cfg),
                    }
                }
                black_box(rtl.cycle(reset).map_err(|e| anyhow!("{e}"))?);
                black_box(&o);
            }
            best = best.min(t0.elapsed().as_secs_f64());
        }
        let name = if with_model {
            "model + RTL, interleaved"
        } else {
            "RTL alone"
        };
        println!(
            "{name:<26} {:8.1} ns/cycle",
            best * 1e9 / stim.cycles.len() as f64
        );
    }
    let opts = Options {
        out_dir: std::env::temp_dir(),
        waves: Waves::Never,
        context: 0,
        replay: String::new(),
    };
    for _ in 0..runs {
        match lockstep::run(&stim, &opts)? {
            Outcome::Pass(s) => println!("{:<26} {:8.1} ns/cycle", "lockstep", 1e9 / s.rate()),
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
