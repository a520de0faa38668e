//! Checks shared by the tests of the streamed traffic generators:
//! determinism, prefix stability, what the traffic exercises, and the
//! generator's speed against the model's.

use crate::{generate, random_config, Bench};
use model::stim::{Cycle, Generator, Step};
use model::{Block, Params, PortGroup};
use std::time::{Duration, Instant};

/// For every variant: the same seed gives the same cycles twice, of the
/// length asked for, and another seed other cycles.
pub fn deterministic<B: Bench>(seed: u64, n: usize) {
    for p in B::variants() {
        let cfg = random_config::<B>(&p, seed, false);
        let a = generate::<B>(&p, seed, n, Some(&cfg));
        let b = generate::<B>(&p, seed, n, Some(&cfg));
        assert_eq!(a.cycles.len(), n, "{}", p.label());
        assert!(
            a.cycles == b.cycles,
            "{}: seed {seed} not deterministic",
            p.label()
        );
        let c = generate::<B>(&p, seed ^ 0x5a5a, n, Some(&cfg));
        assert!(
            a.cycles != c.cycles,
            "{}: the seed does not matter",
            p.label()
        );
    }
}

/// For every variant: the generator writes every field of the inputs (a
/// run that hands it the same inputs buffer every cycle, as
/// [`generate`] does, equals one that hands it fresh zero inputs).
pub fn writes_every_field<B: Bench>(seed: u64, n: usize) {
    for p in B::variants() {
        let cfg = random_config::<B>(&p, seed, false);
        let s = generate::<B>(&p, seed, n, Some(&cfg));
        let mut g = B::generator(&p, &cfg, seed);
        let mut m = B::new(&p, &cfg);
        let reset_out = B::new(&p, &cfg).step(&B::Inputs::zero(&p));
        let mut last = reset_out.clone();
        for (k, c) in s.cycles.iter().enumerate() {
            let mut i = B::Inputs::zero(&p);
            match (g.next(&m, &last, &mut i), c) {
                (Step::Reset, Cycle::Reset) => {
                    m = B::new(&p, &cfg);
                    last.clone_from(&reset_out);
                }
                (Step::Drive, Cycle::Drive(x)) if i == *x => m.step_into(&i, &mut last),
                _ => panic!("{}: cycle {k} depends on the inputs buffer", p.label()),
            }
        }
    }
}

/// For every variant: the first `short` cycles of a run of `short` cycles
/// are the first `short` of a run of `long`.
pub fn prefix_stable<B: Bench>(seed: u64, short: usize, long: usize) {
    for p in B::variants() {
        let cfg = random_config::<B>(&p, seed, false);
        let a = generate::<B>(&p, seed, short, Some(&cfg));
        let b = generate::<B>(&p, seed, long, Some(&cfg));
        assert_eq!(b.cycles.len(), long);
        assert!(
            a.cycles[..] == b.cycles[..short],
            "{}: seed {seed}: the first {short} cycles depend on the run's length",
            p.label()
        );
    }
}

/// Runs `n` cycles of every variant for each seed (configuration drawn from
/// the seed), closed loop against the golden model; calls `f` with the
/// model after each driven cycle, its inputs and outputs. Returns the
/// coverage hits ([`Block::bins`]) and the number of resets.
pub fn exercise<B: Bench>(
    seeds: &[u64],
    n: u64,
    mut f: impl FnMut(&B, &B::Inputs, &B::Outputs),
) -> (Vec<u64>, u64) {
    let mut hits = vec![0u64; B::bins().len()];
    let mut resets = 0;
    for p in B::variants() {
        for &seed in seeds {
            let cfg = random_config::<B>(&p, seed, false);
            let mut g = B::generator(&p, &cfg, seed);
            let mut m = B::new(&p, &cfg);
            let reset_out = B::new(&p, &cfg).step(&B::Inputs::zero(&p));
            let mut last = reset_out.clone();
            let mut i = B::Inputs::zero(&p);
            for _ in 0..n {
                match g.next(&m, &last, &mut i) {
                    Step::Reset => {
                        resets += 1;
                        m = B::new(&p, &cfg);
                        last.clone_from(&reset_out);
                    }
                    Step::Drive => {
                        m.step_into(&i, &mut last);
                        m.sample(&i, &last, &mut hits);
                        f(&m, &i, &last);
                    }
                }
            }
        }
    }
    (hits, resets)
}

/// The bins of `hits` never hit, except those in `except`.
pub fn missed<B: Block>(hits: &[u64], except: &[&str]) -> Vec<&'static str> {
    B::bins()
        .iter()
        .zip(hits)
        .filter(|(b, &h)| h == 0 && !except.contains(b))
        .map(|(b, _)| *b)
        .collect()
}

/// Prints, per variant, the generator's time per cycle against the model's
/// `step_into`, over `n` cycles (4 seeds, configurations drawn from them).
///
/// The generator is closed loop, so it runs with the model: each call of
/// either is timed on its own (`Instant` around it), less the cost of
/// reading the clock (measured first).
pub fn speed<B: Bench>(n: u64) {
    let clock = {
        let k = 1_000_000;
        let mut t = Duration::ZERO;
        for _ in 0..k {
            let t0 = Instant::now();
            t += t0.elapsed();
        }
        t.as_secs_f64() / k as f64
    };
    for p in B::variants() {
        let (mut t_gen, mut t_model) = (Duration::ZERO, Duration::ZERO);
        let (mut gen_calls, mut model_calls) = (0u64, 0u64);
        for seed in 1..=4u64 {
            let cfg = random_config::<B>(&p, seed, false);
            let mut g = B::generator(&p, &cfg, seed);
            let mut m = B::new(&p, &cfg);
            let reset_out = B::new(&p, &cfg).step(&B::Inputs::zero(&p));
            let mut last = reset_out.clone();
            let mut i = B::Inputs::zero(&p);
            for _ in 0..n / 4 {
                let t0 = Instant::now();
                let step = g.next(&m, &last, &mut i);
                t_gen += t0.elapsed();
                gen_calls += 1;
                match step {
                    Step::Reset => {
                        m = B::new(&p, &cfg);
                        last.clone_from(&reset_out);
                    }
                    Step::Drive => {
                        let t0 = Instant::now();
                        m.step_into(&i, &mut last);
                        t_model += t0.elapsed();
                        model_calls += 1;
                    }
                }
            }
        }
        let ns = |t: Duration, k: u64| (t.as_secs_f64() / k as f64 - clock) * 1e9;
        let (gen, model) = (ns(t_gen, gen_calls), ns(t_model, model_calls));
        println!(
            "{} {:<28} generator {:7.1} ns/cycle   model step_into {:7.1} ns/cycle   \
             model/generator {:5.1}x   (clock read {:.1} ns, subtracted)",
            B::NAME,
            p.label(),
            gen,
            model,
            model / gen,
            clock * 1e9
        );
    }
}
