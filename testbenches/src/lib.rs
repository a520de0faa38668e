//! Stimulus for the co-simulation: a streamed traffic generator per block,
//! proptest strategies for configurations, the directed scenarios of the
//! source documents, and the helpers that turn a seed into cycles.
//!
//! Every block implements [`Bench`]: a strategy for its configuration and a
//! [`Generator`] that yields its traffic one cycle at a time from a seed
//! (closed loop: it may look at the golden model). A run of any length thus
//! needs constant memory, and the first N cycles of a seed are the same
//! whatever the run's length. The property tests draw from the same
//! generators: proptest picks the variant, the configuration, the seed and
//! the length (and shrinks the length and the configuration); the cycles
//! are a pure function of them, and a failure is then shrunk further over
//! its concrete cycles (`cosim::lockstep::minimize`).

pub mod pcap;
pub mod registry;
/// The project's one PRNG for traffic (it lives with the studies, which use
/// it too).
pub use studies::rng;

pub mod arbiter;
pub mod bcn_cp;
pub mod bcn_rp;
pub mod credit;
pub mod mmu;
pub mod pfc;
pub mod prim;
pub mod recn_port;
pub mod stx_egress;
pub mod stx_ingress;
pub mod stx_switch;

#[cfg(test)]
mod gen_check;

use model::stim::{Cycle, Generated, Generator, Step, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::ops::RangeInclusive;

/// A named directed scenario (from the source documents), for `switchsim trace`.
pub struct Scenario<B: Block> {
    /// Short name, e.g. `headroom`.
    pub name: &'static str,
    /// One line: what it shows and where it comes from.
    pub about: &'static str,
    /// Builds the stimulus.
    pub build: fn() -> Stimulus<B>,
    /// The outcome the scenario documents, checked on the outputs of every
    /// cycle of the co-simulated run (the RTL's). Every scenario has one (the
    /// scenarios test refuses `None`): a scenario states an outcome.
    pub check: Option<ScenarioCheck<B>>,
}

/// In a [`ScenarioCheck`]: return `Err` with the formatted message unless
/// `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        let holds: bool = $cond;
        if !holds {
            return Err(format!($($fmt)+));
        }
    };
}

/// In a [`ScenarioCheck`]: return `Err` naming what was checked, the value
/// seen and the one documented, unless they are equal.
#[macro_export]
macro_rules! ensure_eq {
    ($got:expr, $want:expr, $($fmt:tt)+) => {{
        let (got, want) = (&$got, &$want);
        if got != want {
            return Err(format!("{}: {:?}, expected {:?}", format!($($fmt)+), got, want));
        }
    }};
}

/// Checks a scenario's documented outcome on its stimulus and the outputs of
/// each of its cycles (one per cycle, reset cycles included); `Err` says
/// what differs from the documented outcome.
pub type ScenarioCheck<B> = fn(&Stimulus<B>, &[<B as Block>::Outputs]) -> Result<(), String>;

/// A block the testbench can drive.
pub trait Bench:
    Block<Params: Send + Sync, Config: Send + Sync, Inputs: Send + Sync, Outputs: Send>
    + Clone
    + std::fmt::Debug
    + 'static
{
    /// The version of [`Bench::Gen`]: bumped whenever the cycles a seed
    /// yields change, so that a stimulus file naming an older generator is
    /// refused instead of replayed as a different run.
    const GENERATOR_VERSION: u32;
    /// The block's traffic generator.
    type Gen: Generator<Self> + Send;
    /// The traffic generator for configuration `cfg` of variant `p`, seeded
    /// by `seed`.
    fn generator(p: &Self::Params, cfg: &Self::Config, seed: u64) -> Self::Gen;
    /// The directed scenarios of this block.
    fn scenarios() -> Vec<Scenario<Self>> {
        Vec::new()
    }
    /// Hands the Ethernet frames the block transmits on `stim` (golden
    /// model) to `sink` as they complete, each with the cycle of its first
    /// beat (constant memory, for a run of any length); `false` for a block
    /// that sends no frames. Written as pcap next to the waveforms.
    fn frames(_stim: &Stimulus<Self>, _sink: &mut dyn FnMut(u64, &[u8])) -> Result<bool, String> {
        Ok(false)
    }
    /// Configurations over the legal ranges, edges included (mostly legal;
    /// with `illegal`, some the configuration check rejects).
    fn config_strategy(p: &Self::Params, illegal: bool) -> BoxedStrategy<Self::Config>;
}

/// The cycle source of `stim`: its written-out cycles, or its generator
/// (refused when the file names another version of the generator than this
/// build has).
pub fn source<'a, B: Bench>(stim: &'a Stimulus<B>) -> Result<Source<'a, B>, String> {
    match &stim.generated {
        None => Ok(Source::Replay(model::stim::Replay::new(&stim.cycles))),
        Some(g) if g.version != B::GENERATOR_VERSION => Err(format!(
            "the stimulus names version {} of the {} traffic generator; this switchsim has \
             version {}, which yields other cycles for the same seed: replay it with the \
             switchsim that wrote it",
            g.version,
            B::NAME,
            B::GENERATOR_VERSION
        )),
        Some(_) => Ok(Source::Gen(Box::new(B::generator(
            &stim.params,
            &stim.config,
            stim.seed,
        )))),
    }
}

/// Where the cycles of a run come from.
pub enum Source<'a, B: Bench> {
    /// Written-out cycles.
    Replay(model::stim::Replay<'a, B::Inputs>),
    /// The block's generator.
    Gen(Box<B::Gen>),
}

impl<B: Bench> Generator<B> for Source<'_, B> {
    #[inline]
    fn next(&mut self, model: &B, last: &B::Outputs, i: &mut B::Inputs) -> Step {
        match self {
            Source::Replay(r) => r.next(model, last, i),
            Source::Gen(g) => g.next(model, last, i),
        }
    }
}

/// A generated run: the first `cycles` cycles of `B`'s generator from
/// `seed`, named rather than written out.
pub fn generated<B: Bench>(p: &B::Params, cfg: &B::Config, seed: u64, cycles: u64) -> Stimulus<B> {
    Stimulus {
        params: p.clone(),
        config: cfg.clone(),
        cycles: Vec::new(),
        seed,
        generated: Some(Generated {
            version: B::GENERATOR_VERSION,
            cycles,
        }),
    }
}

/// Writes out cycles `from..to` of `stim` (generated or not), running the
/// golden model alongside for the generator to look at (a shadow of the
/// block, as in lockstep; so these are exactly the cycles a lockstep run
/// drives).
pub fn materialize<B: Bench>(
    stim: &Stimulus<B>,
    from: u64,
    to: u64,
) -> Result<Vec<Cycle<B::Inputs>>, String> {
    let p = &stim.params;
    let cfg = &stim.config;
    let mut src = source(stim)?;
    let mut model = B::new(p, cfg);
    let reset_out = B::new(p, cfg).step(&B::Inputs::zero(p));
    let mut last = reset_out.clone();
    let mut i = B::Inputs::zero(p);
    let mut out = Vec::with_capacity(to.saturating_sub(from).min(1 << 24) as usize);
    for k in 0..to.min(stim.len()) {
        match src.next(&model, &last, &mut i) {
            Step::Reset => {
                model = B::new(p, cfg);
                last.clone_from(&reset_out);
                if k >= from {
                    out.push(Cycle::Reset);
                }
            }
            Step::Drive => {
                model.step_into(&i, &mut last);
                if k >= from {
                    out.push(Cycle::Drive(i.clone()));
                }
            }
        }
    }
    Ok(out)
}

/// The written-out form of `stim` (all its cycles).
pub fn explicit<B: Bench>(stim: &Stimulus<B>) -> Result<Stimulus<B>, String> {
    Ok(Stimulus {
        cycles: materialize(stim, 0, stim.len())?,
        generated: None,
        ..stim.clone()
    })
}

/// Default number of cycles per generated case.
pub const DEFAULT_CYCLES: RangeInclusive<usize> = 1000..=1500;

/// Whole stimuli (configuration, seed, length; the cycles written out from
/// the generator) for variant `p`. Proptest shrinks the length and the
/// configuration.
pub fn stimulus_strategy<B: Bench>(
    p: &B::Params,
    len: RangeInclusive<usize>,
    illegal: bool,
) -> BoxedStrategy<Stimulus<B>> {
    let p2 = p.clone();
    (B::config_strategy(p, illegal), any::<u64>(), len)
        .prop_map(move |(cfg, seed, n)| {
            explicit(&generated::<B>(&p2, &cfg, seed, n as u64))
                .expect("this build's own generator")
        })
        .boxed()
}

/// A test runner whose random stream is fixed by `seed` (ChaCha), the same
/// on every machine (for drawing configurations from a seed).
pub fn seeded_runner(seed: u64) -> TestRunner {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(b"switchsm");
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
    TestRunner::new_with_rng(Config::default(), rng)
}

/// A configuration of variant `p` drawn from `seed`, deterministically.
pub fn random_config<B: Bench>(p: &B::Params, seed: u64, illegal: bool) -> B::Config {
    let mut runner = seeded_runner(seed);
    B::config_strategy(p, illegal)
        .new_tree(&mut runner)
        .expect("configuration strategies never reject")
        .current()
}

/// A generated run of `cycles` cycles from `seed` (named, not written out).
/// With `config`, only the traffic is drawn; without, the configuration is
/// drawn from the seed too.
pub fn run_of<B: Bench>(
    p: &B::Params,
    seed: u64,
    cycles: u64,
    config: Option<&B::Config>,
) -> Stimulus<B> {
    let cfg = match config {
        Some(c) => c.clone(),
        None => random_config::<B>(p, seed, false),
    };
    generated(p, &cfg, seed, cycles)
}

/// Draws one stimulus from `seed` with its cycles written out,
/// deterministically (same seed, same stimulus, on every machine; the
/// first N cycles the same for any length). With `config`, only the
/// traffic is drawn.
pub fn generate<B: Bench>(
    p: &B::Params,
    seed: u64,
    cycles: usize,
    config: Option<&B::Config>,
) -> Stimulus<B> {
    explicit(&run_of::<B>(p, seed, cycles as u64, config)).expect("this build's own generator")
}

/// A job of [`two_at_a_time`]: `Err` (or a panic) says what failed.
pub type Job = Box<dyn FnOnce() -> Result<(), String> + Send>;

/// Runs `jobs` two at a time (each may start a compiler or simulator
/// process; CI machines have two cores), every one to its end: the
/// failures, each job's `Err` or panic message, not only the first.
pub fn two_at_a_time(jobs: Vec<Job>) -> Vec<String> {
    let queue = std::sync::Mutex::new(jobs);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let Some(job) = queue.lock().unwrap().pop() else {
                    return;
                };
                let failed = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
                    Ok(r) => r.err(),
                    Err(e) => Some(
                        e.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "a job panicked".into()),
                    ),
                };
                failures.lock().unwrap().extend(failed);
            });
        }
    });
    failures.into_inner().unwrap()
}
