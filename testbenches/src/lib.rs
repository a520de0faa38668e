//! Stimulus for the co-simulation: proptest strategies per block, the
//! directed scenarios of the source documents, and seeded generation for the
//! command line.
//!
//! Every block implements [`Bench`]: a strategy for its configuration and one
//! for a run of cycles. The same strategies serve the property tests (which
//! shrink a failure to the smallest stimulus) and `switchsim run --seed`
//! (which draws one stimulus from a seed, deterministically).

pub mod arbiter;
pub mod credit;
pub mod mmu;
pub mod pfc;

use model::stim::{Cycle, Stimulus};
use model::Block;
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
}

/// A block the testbench can drive.
pub trait Bench: Block + Clone + std::fmt::Debug + 'static {
    /// The directed scenarios of this block.
    fn scenarios() -> Vec<Scenario<Self>> {
        Vec::new()
    }
    /// The Ethernet frames the block transmits on `stim` (golden model),
    /// each with the cycle of its first beat; `None` for a block that sends
    /// no frames. Written as pcap next to the waveforms.
    fn frames(_stim: &Stimulus<Self>) -> Option<Vec<(u64, Vec<u8>)>> {
        None
    }
    /// Configurations over the legal ranges, edges included (mostly legal;
    /// with `illegal`, some the configuration check rejects).
    fn config_strategy(p: &Self::Params, illegal: bool) -> BoxedStrategy<Self::Config>;
    /// Runs of `len` cycles for configuration `cfg`.
    fn cycles_strategy(
        p: &Self::Params,
        cfg: &Self::Config,
        len: RangeInclusive<usize>,
    ) -> BoxedStrategy<Vec<Cycle<Self::Inputs>>>;
}

/// Default number of cycles per generated case.
pub const DEFAULT_CYCLES: RangeInclusive<usize> = 1000..=1500;

/// Whole stimuli (configuration, cycles, seed) for variant `p`.
pub fn stimulus_strategy<B: Bench>(
    p: &B::Params,
    len: RangeInclusive<usize>,
    illegal: bool,
) -> BoxedStrategy<Stimulus<B>>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let p2 = p.clone();
    (B::config_strategy(p, illegal), any::<u64>())
        .prop_flat_map(move |(cfg, seed)| {
            let p3 = p2.clone();
            let c2 = cfg.clone();
            B::cycles_strategy(&p2, &cfg, len.clone()).prop_map(move |cycles| Stimulus {
                params: p3.clone(),
                config: c2.clone(),
                cycles,
                seed,
            })
        })
        .boxed()
}

/// A test runner whose random stream is fixed by `seed` (ChaCha), the same
/// on every machine.
pub fn seeded_runner(seed: u64) -> TestRunner {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(b"switchsm");
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
    TestRunner::new_with_rng(Config::default(), rng)
}

/// Draws one stimulus from `seed`, deterministically (same seed, same
/// stimulus, on every machine). With `config`, only the traffic is drawn.
pub fn generate<B: Bench>(
    p: &B::Params,
    seed: u64,
    cycles: usize,
    config: Option<&B::Config>,
) -> Stimulus<B>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let mut runner = seeded_runner(seed);
    match config {
        None => {
            let tree = stimulus_strategy::<B>(p, cycles..=cycles, false)
                .new_tree(&mut runner)
                .expect("stimulus strategies never reject");
            let mut s = tree.current();
            s.seed = seed;
            s
        }
        Some(c) => {
            let tree = B::cycles_strategy(p, c, cycles..=cycles)
                .new_tree(&mut runner)
                .expect("stimulus strategies never reject");
            Stimulus {
                params: p.clone(),
                config: c.clone(),
                cycles: tree.current(),
                seed,
            }
        }
    }
}
