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
//! cargo run --release -p engine --features profiling --example profile_lockstep -- mmu p2cw8 200000 5
//! perf record -e cpu-clock target/release/examples/profile_lockstep ...
//! valgrind --tool=callgrind --toggle-collect='*lockstep*pass*' target/release/examples/profile_lockstep ...
//! ```

use anyhow::{anyhow, bail, Result};
use cosim::lockstep::{self, Options, Outcome, Waves};
use engine::bench::{time_model, time_rtl, ModelSide, Packed};
use model::Params;
use testbenches::Bench;

/// Best of 3 runs of `f` (seconds), in ns per cycle of `cycles`.
fn ns(cycles: usize, mut f: impl FnMut() -> Result<f64>) -> Result<f64> {
    let mut best = f64::MAX;
    for _ in 0..3 {
        best = best.min(f()?);
    }
    Ok(best * 1e9 / cycles as f64)
}

fn go<B: Bench>(variant: &str, cycles: usize, runs: usize) -> Result<()> {
    let p = B::variants()
        .into_iter()
        .find(|p| p.label() == variant)
        .ok_or_else(|| anyhow!("no variant {variant} of {}", B::NAME))?;
    let cfg = B::default_config(&p);
    let stim = testbenches::generate::<B>(&p, 1, cycles, Some(&cfg));
    let n = stim.cycles.len();
    let only = |pack_inputs, coverage, compare| ModelSide {
        pack_inputs,
        coverage,
        compare,
    };
    for (name, parts) in [
        ("step_into", ModelSide::STEP),
        ("+ pack inputs", only(true, false, false)),
        ("+ coverage", only(false, true, false)),
        ("+ compare outputs", only(false, false, true)),
        ("all", ModelSide::ALL),
    ] {
        let t = ns(n, || time_model(&stim, parts))?;
        println!("{name:<26} {t:8.1} ns/cycle");
    }
    let packed = Packed::of(&stim)?;
    for (name, with_model) in [("RTL alone", false), ("model + RTL, interleaved", true)] {
        let t = ns(n, || Ok(time_rtl(&stim, &packed, with_model)?.0))?;
        println!("{name:<26} {t:8.1} ns/cycle");
    }
    let opts = Options {
        out_dir: std::env::temp_dir(),
        waves: Waves::Never,
        context: 0,
        replay: String::new(),
        ..Options::default()
    };
    for _ in 0..runs {
        match lockstep::run(&stim, &opts)? {
            Outcome::Pass(s) => println!("{:<26} {:8.1} ns/cycle", "lockstep", 1e9 / s.rate()),
            Outcome::Mismatch(m) => bail!("{m}"),
            Outcome::Interrupted(_) => bail!("interrupted"),
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
    struct Go<'a>(&'a str, usize, usize, Option<Result<()>>);
    impl testbenches::registry::Visit for Go<'_> {
        fn visit<B: Bench>(&mut self) {
            self.3 = Some(go::<B>(self.0, self.1, self.2));
        }
    }
    let mut g = Go(v, n, r, None);
    if !testbenches::registry::visit_named(&a[0], &mut g) {
        bail!(
            "unknown block {} (known: {})",
            a[0],
            testbenches::registry::names().join(", ")
        );
    }
    g.3.expect("visited")
}
