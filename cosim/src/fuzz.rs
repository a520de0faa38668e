//! Fuzzing campaigns: many seeded random cases (variant, configuration and
//! traffic from the block's generator) against a budget of cases or time,
//! on as many threads as asked.
//!
//! Case `k` of a campaign with base seed `b` uses seed `rng::mix(b, k)`.
//! `--shard I/N` runs the cases `k = I, I + N, I + 2N, ...` only, so N jobs
//! with the same base seed cover one campaign without overlap. `--jobs J`
//! runs a shard's cases on J threads; the cases, the verdict and the report
//! are those of `--jobs 1` (results are folded in case order, and a failure
//! is the lowest-numbered failing case). A failing case is shrunk
//! (delta-debugging over its cycles), saved as a repro file with waveforms,
//! and reported with its replay command.

use crate::lockstep::{self, Coverage, Mismatch, Options, Outcome, UserRtl, Waves};
use anyhow::Result;
use model::stim::Stimulus;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
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
    /// Threads running cases.
    pub jobs: usize,
    /// Only this variant (by label); default: the seed picks one.
    pub variant: Option<String>,
    /// A designer's RTL instead of the project's.
    pub user: Option<UserRtl>,
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
    /// The campaign was asked to stop (SIGINT, SIGTERM) before its budget
    /// ran out: the cases and cycles are those that ran to their end.
    pub interrupted: bool,
    /// The seed of every case counted, in case order.
    pub case_seeds: Vec<u64>,
}

/// The seed of case `k` of a campaign with base seed `base`.
pub fn case_seed(base: u64, k: u64) -> u64 {
    testbenches::rng::mix(base, k)
}

/// The stimulus of one fuzz case: the variant is picked by the seed, the
/// configuration (legal or not) drawn from it, the traffic is the block's
/// generator from it (named, not written out).
pub fn case<B: Bench>(seed: u64, cycles: usize) -> Stimulus<B> {
    case_of::<B>(seed, cycles, None)
}

/// [`case`] on the variant labelled `variant` (any variant when `None`, or
/// when no variant has that label).
pub fn case_of<B: Bench>(seed: u64, cycles: usize, variant: Option<&str>) -> Stimulus<B> {
    use model::Params;
    let mut vs = B::variants();
    if let Some(l) = variant {
        if vs.iter().any(|v| v.label() == l) {
            vs.retain(|v| v.label() == l);
        }
    }
    let p = vs[(seed % vs.len() as u64) as usize].clone();
    let cfg = testbenches::random_config::<B>(&p, seed, true);
    testbenches::generated(&p, &cfg, seed, cycles as u64)
}

enum CaseResult<B: Bench> {
    Pass(u64, Coverage),
    Fail(Stimulus<B>),
}

/// The campaign-wide number of case `j` of shard `(index, count)`: the
/// shards take every `count`-th case, from their index on.
pub fn global_case(shard: (u64, u64), j: u64) -> u64 {
    shard.0 + j * shard.1
}

/// Runs a campaign, calling `progress` now and then (on this thread).
pub fn fuzz<B: Bench>(o: &FuzzOptions, mut progress: impl FnMut(&Progress)) -> Result<FuzzReport> {
    let t0 = Instant::now();
    let (idx, count) = o.shard;
    let quiet = Options {
        out_dir: o.out_dir.clone(),
        waves: Waves::Never,
        context: 0,
        replay: o.replay.clone(),
        threads: 1,
        progress: None,
        shrink: o.shrink,
        fault: None,
        user: o.user.clone(),
    };
    // Shard-local case numbers are handed out in order; a failure at j
    // stops the handing out of cases after j (those before it still run,
    // so that the lowest failing case is found, as with one thread).
    let next = AtomicU64::new(0);
    let first_fail = AtomicU64::new(u64::MAX);
    let error = AtomicBool::new(false);
    let results: Mutex<BTreeMap<u64, CaseResult<B>>> = Mutex::new(BTreeMap::new());
    let done_cycles = AtomicU64::new(0);
    let done_cases = AtomicU64::new(0);
    let mut run_error: Option<anyhow::Error> = None;
    let worker = || -> Result<()> {
        loop {
            let j = next.fetch_add(1, Ordering::SeqCst);
            if o.cases.is_some_and(|n| j >= n)
                || o.time.is_some_and(|t| t0.elapsed() >= t)
                || j > first_fail.load(Ordering::SeqCst)
                || error.load(Ordering::SeqCst)
                || lockstep::stop_requested()
            {
                return Ok(());
            }
            let stim = case_of::<B>(
                case_seed(o.base_seed, global_case((idx, count), j)),
                o.cycles,
                o.variant.as_deref(),
            );
            let r = match lockstep::run(&stim, &quiet) {
                Ok(r) => r,
                Err(e) => {
                    error.store(true, Ordering::SeqCst);
                    return Err(e);
                }
            };
            let r = match r {
                Outcome::Pass(s) => {
                    done_cycles.fetch_add(s.cycles, Ordering::Relaxed);
                    CaseResult::Pass(s.cycles, s.coverage)
                }
                Outcome::Mismatch(_) => {
                    first_fail.fetch_min(j, Ordering::SeqCst);
                    CaseResult::Fail(stim)
                }
                // A case cut short by a stop does not count.
                Outcome::Interrupted(_) => return Ok(()),
            };
            done_cases.fetch_add(1, Ordering::Relaxed);
            results
                .lock()
                .expect("no worker panics holding it")
                .insert(j, r);
        }
    };
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..o.jobs.max(1)).map(|_| sc.spawn(worker)).collect();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            // Coverage so far, for the progress line.
            let covered = {
                let r = results.lock().expect("no worker panics holding it");
                let mut hit = vec![false; B::bins().len()];
                for c in r.values() {
                    if let CaseResult::Pass(_, cov) = c {
                        for (h, &x) in hit.iter_mut().zip(&cov.hits) {
                            *h |= x > 0;
                        }
                    }
                }
                (hit.iter().filter(|&&h| h).count(), hit.len())
            };
            progress(&Progress {
                cases: done_cases.load(Ordering::Relaxed),
                cycles: done_cycles.load(Ordering::Relaxed),
                elapsed: t0.elapsed(),
                covered,
            });
        }
        for h in handles {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => run_error = Some(e),
                Err(_) => run_error = Some(anyhow::anyhow!("a fuzz worker panicked")),
            }
        }
    });
    if let Some(e) = run_error {
        return Err(e);
    }
    // Fold the results in case order, up to the first failure.
    let mut cov = Coverage::of::<B>();
    let (mut cases, mut cycles) = (0u64, 0u64);
    let mut failing = None;
    let mut case_seeds = Vec::new();
    for (j, r) in results.into_inner().expect("workers joined") {
        if j != cases {
            break; // a gap: cases after it were not run (time budget)
        }
        cases += 1;
        case_seeds.push(case_seed(o.base_seed, global_case((idx, count), j)));
        match r {
            CaseResult::Pass(n, c) => {
                cycles += n;
                cov.merge(&c);
            }
            CaseResult::Fail(stim) => {
                failing = Some(stim);
                break;
            }
        }
    }
    let mut failure = None;
    if let Some(stim) = failing {
        let small = if lockstep::stop_requested() {
            stim
        } else {
            lockstep::minimize_with(&stim, o.shrink, o.user.as_ref())
        };
        let loud = Options {
            waves: Waves::OnMismatch,
            context: 8,
            ..quiet.clone()
        };
        if let Outcome::Mismatch(m) = lockstep::run(&small, &loud)? {
            failure = Some(m);
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
        interrupted: lockstep::stop_requested(),
        case_seeds,
    })
}

/// The coverage as a JSON object `{"bin": hits, ...}`, in bin order.
pub fn coverage_json(c: &Coverage) -> Value {
    Value::Object(
        c.bins
            .iter()
            .zip(&c.hits)
            .map(|(b, h)| (b.to_string(), json!(h)))
            .collect(),
    )
}

/// A mismatch as a JSON object.
pub fn mismatch_json(m: &Mismatch) -> Value {
    let path = |p: Option<&std::path::Path>| p.map(|p| p.display().to_string());
    json!({
        "block": m.block,
        "variant": m.variant,
        "seed": m.seed,
        "cycle": m.cycle,
        "rtl_clock": m.clock,
        "rtl": m.rtl,
        "diffs": m.diffs.iter().map(|d| json!({
            "signal": d.signal, "expected": d.expected, "actual": d.actual,
        })).collect::<Vec<_>>(),
        "rtl_error": m.rtl_error,
        "inputs": m.inputs,
        "repro": path(m.repro.as_deref()),
        "shrunk": path(m.short.as_ref().map(|s| s.0.as_path())),
        "replay": m.replay,
        "merged_vcd": path(m.waves.as_ref().map(|w| w.merged.as_path())),
        "gtkw": path(m.waves.as_ref().map(|w| w.gtkw.as_path())),
        "not_written": m.write_errors,
    })
}

/// A campaign report as JSON.
pub fn report_json(r: &FuzzReport) -> Value {
    json!({
        "block": r.block,
        "shard": format!("{}/{}", r.shard.0, r.shard.1),
        "base_seed": r.base_seed,
        "cases": r.cases,
        "cycles": r.cycles,
        "seconds": (r.secs * 1000.0).round() / 1000.0,
        "cycles_per_second": (r.cycles as f64 / r.secs.max(1e-9)).round(),
        "passed": r.failure.is_none(),
        "interrupted": r.interrupted,
        "coverage": coverage_json(&r.coverage),
        "holes": r.coverage.holes(),
        "mismatch": r.failure.as_deref().map(mismatch_json),
        "case_seeds": r.case_seeds,
    })
}
