//! Fuzzing campaigns: many seeded random cases (variant, configuration and
//! traffic from the block's strategies) against a budget of cases or time.
//!
//! Case `k` of a campaign with base seed `b` uses seed `splitmix64(b + k)`.
//! `--shard I/N` runs the cases `k = I, I + N, I + 2N, ...` only, so N jobs
//! with the same base seed cover one campaign without overlap. A failing
//! case is shrunk (delta-debugging over its cycles), saved as a repro file
//! with waveforms, and reported with its replay command.

use crate::lockstep::{self, Coverage, Mismatch, Options, Outcome, Waves};
use anyhow::Result;
use proptest::strategy::{Strategy, ValueTree};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use testbenches::Bench;

/// A campaign.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    /// Stop after this many cases (of this shard).
    pub cases: Option<u64>,
    /// Stop after this much time.
    pub time: Option<Duration>,
    /// Cycles per case.
    pub cycles: usize,
    /// Base seed of the campaign.
    pub base_seed: u64,
    /// This shard (index, count).
    pub shard: (u64, u64),
    /// Output directory for repro files and waveforms.
    pub out_dir: PathBuf,
    /// Replay command prefix.
    pub replay: String,
    /// Time allowed for shrinking a failure.
    pub shrink: Duration,
}

/// Where a campaign stands.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Cases run.
    pub cases: u64,
    /// Cycles run.
    pub cycles: u64,
    /// Elapsed time.
    pub elapsed: Duration,
    /// Coverage bins hit so far, of all.
    pub covered: (usize, usize),
}

/// The result of a campaign.
#[derive(Clone, Debug)]
pub struct FuzzReport {
    /// Block name.
    pub block: &'static str,
    /// The shard.
    pub shard: (u64, u64),
    /// Base seed.
    pub base_seed: u64,
    /// Cases run.
    pub cases: u64,
    /// Cycles compared.
    pub cycles: u64,
    /// Wall time, seconds.
    pub secs: f64,
    /// Coverage over all cases.
    pub coverage: Coverage,
    /// The first failure, shrunk, with its repro and waveforms.
    pub failure: Option<Box<Mismatch>>,
}

/// SplitMix64: the seed of case `k`.
pub fn case_seed(base: u64, k: u64) -> u64 {
    let mut z = base.wrapping_add(k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stimulus of one fuzz case: the variant is picked by the seed, the
/// configuration (legal or not) and traffic come from the block's strategies.
pub fn case<B: Bench>(seed: u64, cycles: usize) -> model::stim::Stimulus<B>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let vs = B::variants();
    let p = vs[(seed % vs.len() as u64) as usize].clone();
    let mut runner = testbenches::seeded_runner(seed);
    let mut s = testbenches::stimulus_strategy::<B>(&p, cycles..=cycles, true)
        .new_tree(&mut runner)
        .expect("stimulus strategies never reject")
        .current();
    s.seed = seed;
    s
}

/// Runs a campaign, calling `progress` now and then.
pub fn fuzz<B: Bench>(o: &FuzzOptions, mut progress: impl FnMut(&Progress)) -> Result<FuzzReport>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let t0 = Instant::now();
    let mut cov = Coverage::of::<B>();
    let mut cases = 0u64;
    let mut cycles = 0u64;
    let mut last = Instant::now();
    let (idx, count) = o.shard;
    let quiet = Options {
        out_dir: o.out_dir.clone(),
        waves: Waves::Never,
        context: 0,
        replay: o.replay.clone(),
    };
    let mut failure = None;
    loop {
        if o.cases.is_some_and(|n| cases >= n) || o.time.is_some_and(|t| t0.elapsed() >= t) {
            break;
        }
        let k = idx + cases * count;
        let stim = case::<B>(case_seed(o.base_seed, k), o.cycles);
        match lockstep::run(&stim, &quiet)? {
            Outcome::Pass(s) => {
                cov.merge(&s.coverage);
                cycles += s.cycles;
            }
            Outcome::Mismatch(_) => {
                let small = lockstep::minimize(&stim, o.shrink);
                let loud = Options {
                    waves: Waves::OnMismatch,
                    context: 8,
                    ..quiet.clone()
                };
                if let Outcome::Mismatch(m) = lockstep::run(&small, &loud)? {
                    failure = Some(m);
                }
                cases += 1;
                break;
            }
        }
        cases += 1;
        if last.elapsed() >= Duration::from_millis(250) {
            last = Instant::now();
            progress(&Progress {
                cases,
                cycles,
                elapsed: t0.elapsed(),
                covered: (cov.hits.iter().filter(|&&h| h > 0).count(), cov.bins.len()),
            });
        }
    }
    Ok(FuzzReport {
        block: B::NAME,
        shard: o.shard,
        base_seed: o.base_seed,
        cases,
        cycles,
        secs: t0.elapsed().as_secs_f64(),
        coverage: cov,
        failure,
    })
}

/// Escapes a string for JSON.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The coverage as a JSON object `{"bin": hits, ...}`.
pub fn coverage_json(c: &Coverage) -> String {
    let items: Vec<String> = c
        .bins
        .iter()
        .zip(&c.hits)
        .map(|(b, h)| format!("{}: {h}", json_str(b)))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A mismatch as a JSON object.
pub fn mismatch_json(m: &Mismatch) -> String {
    let diffs: Vec<String> = m
        .diffs
        .iter()
        .map(|d| {
            format!(
                "{{\"signal\": {}, \"expected\": {}, \"actual\": {}}}",
                json_str(&d.signal),
                json_str(&d.expected),
                json_str(&d.actual)
            )
        })
        .collect();
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or("null".into(), |p| json_str(&p.display().to_string()))
    };
    format!(
        "{{\"block\": {}, \"variant\": {}, \"seed\": {}, \"cycle\": {}, \"diffs\": [{}], \
         \"rtl_error\": {}, \"inputs\": {}, \"repro\": {}, \"replay\": {}, \"merged_vcd\": {}, \
         \"gtkw\": {}}}",
        json_str(m.block),
        json_str(&m.variant),
        m.seed,
        m.cycle,
        diffs.join(", "),
        m.rtl_error.as_deref().map_or("null".into(), json_str),
        json_str(&m.inputs),
        path(&m.repro),
        json_str(&m.replay),
        path(&m.waves.as_ref().map(|w| w.merged.clone())),
        path(&m.waves.as_ref().map(|w| w.gtkw.clone())),
    )
}

/// A campaign report as JSON.
pub fn report_json(r: &FuzzReport) -> String {
    let holes: Vec<String> = r.coverage.holes().iter().map(|h| json_str(h)).collect();
    format!(
        "{{\"block\": {}, \"shard\": \"{}/{}\", \"base_seed\": {}, \"cases\": {}, \"cycles\": {}, \
         \"seconds\": {:.3}, \"cycles_per_second\": {:.0}, \"passed\": {}, \"coverage\": {}, \
         \"holes\": [{}], \"mismatch\": {}}}",
        json_str(r.block),
        r.shard.0,
        r.shard.1,
        r.base_seed,
        r.cases,
        r.cycles,
        r.secs,
        r.cycles as f64 / r.secs.max(1e-9),
        r.failure.is_none(),
        coverage_json(&r.coverage),
        holes.join(", "),
        r.failure.as_deref().map_or("null".into(), mismatch_json)
    )
}
