//! The STX system simulation (`model::stx_system`) around the arbiter's
//! verilated RTL: [`RtlArbiter`] implements the system's
//! [`SlotArbiter`] by running one RTL clock cycle per slot, with the same
//! port packing as the golden model's adapter ([`ModelArbiter`]).
//!
//! [`ModelArbiter`]: model::stx_system::ModelArbiter

use crate::lockstep::POWER_ON_RESET;
use crate::rtl::Rtl;
use anyhow::{anyhow, Result};
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterParams};
use model::stx_system::{arbiter_inputs, arbiter_outcome, SlotArbiter, SlotOutcome};
use model::Block;

/// The arbiter RTL behind the system's slot interface.
pub struct RtlArbiter {
    rtl: Rtl<Arbiter>,
    inp: ArbiterInputs,
    cycles: u64,
}

impl RtlArbiter {
    /// Instantiates the verilated variant `p` with configuration `c`,
    /// random initial state from `seed`, and holds reset for the power-on
    /// cycles (as the lockstep runner does).
    pub fn new(p: &ArbiterParams, c: &ArbiterConfig, seed: u64) -> Result<Self> {
        Arbiter::check(p, c)?;
        let mut rtl = Rtl::<Arbiter>::new(p, c, seed, None)?;
        rtl.reset(POWER_ON_RESET as usize)
            .map_err(|e| anyhow!("{e}"))?;
        Ok(RtlArbiter {
            rtl,
            inp: ArbiterInputs::idle(p),
            cycles: 0,
        })
    }

    /// Clock cycles run (slots).
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
}

impl SlotArbiter for RtlArbiter {
    fn slot(
        &mut self,
        reqs: &[Option<usize>],
        srqs: &[Option<(usize, u16)>],
        out: &mut SlotOutcome,
    ) {
        arbiter_inputs(&mut self.inp, reqs, srqs);
        // An RTL assertion or a failed FFI call is a broken contract: the
        // system cannot go on.
        let o = self
            .rtl
            .step(&self.inp)
            .unwrap_or_else(|e| panic!("arbiter RTL, slot {}: {e:#}", self.cycles));
        self.cycles += 1;
        arbiter_outcome(&o, srqs, out);
    }
}

/// Which traffic a sweep point runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TrafficKind {
    /// Uniform Bernoulli (the paper's).
    Bernoulli,
    /// On/off geometric bursts to one output, of this mean length.
    OnOff(f64),
}

/// What a sweep runs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// Ports.
    pub n: usize,
    /// Round trip (slots).
    pub rtt: u64,
    /// Receivers per output, one STX curve each.
    pub rs: Vec<usize>,
    /// Loads.
    pub loads: Vec<f64>,
    /// iSLIP iterations.
    pub iters: usize,
    /// Warm-up slots (not measured).
    pub warmup: u64,
    /// Measured slots.
    pub slots: u64,
    /// Base seed of the traffic.
    pub seed: u64,
    /// Traffic pattern.
    pub traffic: TrafficKind,
    /// Run the arbiter RTL instead of the model.
    pub rtl: bool,
    /// Worker threads.
    pub jobs: usize,
}

/// One simulated point: `R = None` is the run without STX.
#[derive(Clone, Debug)]
pub struct Point {
    /// Receivers (`None`: STX off).
    pub r: Option<usize>,
    /// Load.
    pub load: f64,
    /// The measured statistics.
    pub stats: model::stx_system::Stats,
    /// Every measured cell left before the cap.
    pub complete: bool,
    /// Wall time, seconds.
    pub secs: f64,
}

/// Runs one point of `spec` (`r = None`: STX off) with the model or RTL
/// arbiter. The traffic seed depends on the load only, so the runs with and
/// without STX (and for every R) see the same arrivals.
pub fn run_point(spec: &SweepSpec, r: Option<usize>, load_idx: usize) -> Result<Point> {
    use model::stx_system::traffic::{Bernoulli, OnOff, Traffic};
    use model::stx_system::{arbiter_setup, Config, ModelArbiter, System};
    let load = spec.loads[load_idx];
    let mut cfg = Config::new(spec.n, r.unwrap_or(1), spec.rtt, r.is_some());
    cfg.iters = spec.iters;
    cfg.measure = (spec.warmup, spec.warmup + spec.slots);
    let seed = spec
        .seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(load_idx as u64 + 1);
    let mut traffic: Box<dyn Traffic> = match spec.traffic {
        TrafficKind::Bernoulli => Box::new(Bernoulli::new(spec.n, load, seed)),
        TrafficKind::OnOff(b) => Box::new(OnOff::new(spec.n, load, b, seed)),
    };
    // Enough time for every measured cell to leave, even at high load.
    let cap = cfg.measure.1 + 20 * spec.slots.max(10_000);
    let (p, c) = arbiter_setup(&cfg);
    let t0 = std::time::Instant::now();
    let (stats, complete) = if spec.rtl {
        let mut s = System::new(cfg, RtlArbiter::new(&p, &c, seed)?);
        let ok = s.run_measured(traffic.as_mut(), cap);
        (s.stats().clone(), ok)
    } else {
        let mut s = System::new(cfg, ModelArbiter::new(&p, &c));
        let ok = s.run_measured(traffic.as_mut(), cap);
        (s.stats().clone(), ok)
    };
    Ok(Point {
        r,
        load,
        stats,
        complete,
        secs: t0.elapsed().as_secs_f64(),
    })
}

/// Runs every point of `spec`: for each load, one run without STX and one
/// per R. `progress` is called after each point. Points are independent and
/// deterministic; `jobs` threads share them.
pub fn sweep(spec: &SweepSpec, progress: &(dyn Fn(&Point) + Sync)) -> Result<Vec<Point>> {
    let mut work = Vec::new();
    for li in 0..spec.loads.len() {
        work.push((None, li));
        for &r in &spec.rs {
            work.push((Some(r), li));
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(vec![None; work.len()]);
    let err = std::sync::Mutex::new(None);
    std::thread::scope(|sc| {
        for _ in 0..spec.jobs.max(1) {
            sc.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if k >= work.len() || err.lock().unwrap().is_some() {
                    break;
                }
                let (r, li) = work[k];
                match run_point(spec, r, li) {
                    Ok(p) => {
                        progress(&p);
                        results.lock().unwrap()[k] = Some(p);
                    }
                    Err(e) => {
                        *err.lock().unwrap() = Some(e);
                    }
                }
            });
        }
    });
    if let Some(e) = err.into_inner().unwrap() {
        return Err(e);
    }
    Ok(results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|p| p.expect("every point ran"))
        .collect())
}

/// The CSV header of [`csv_rows`].
pub const CSV_HEADER: &str = "n,rtt,r,load,offered,slots,\
delay_stx_sim,delay_stx_ci95,delay_stx_analytic,delay_nostx_sim,delay_nostx_ci95,delay_nostx_analytic,\
throughput_stx,throughput_nostx,p_s_sim,p_s_analytic,p_s_given_s_sim,p_s_given_s_analytic,\
p_ss_sim,p_ss_analytic,spurious_sim,spurious_analytic,wasted_sim,wasted_analytic,\
dup_per_cell,reseq_mean,rsq_max,rtx_max,lost_to_wasted,complete,\
delay_stx_analytic_reserving,p_s_given_s_analytic_reserving";

/// One CSV row per (R, load): the STX run, the run without STX at the same
/// load beside it, and the analytic model (`model::stx_analytic`); the last
/// two columns are our variant of it in which wasted grants reserve a
/// receiver too (`solve_reserving`), not the paper's.
pub fn csv_rows(spec: &SweepSpec, points: &[Point]) -> Vec<String> {
    let mut rows = Vec::new();
    for &r in &spec.rs {
        for &load in &spec.loads {
            let find = |rr: Option<usize>| {
                points
                    .iter()
                    .find(|p| p.r == rr && p.load == load)
                    .expect("point")
            };
            let (s, o) = (find(Some(r)), find(None));
            let (a, b) = (&s.stats, &o.stats);
            let an = model::stx_analytic::solve(spec.n, r.min(spec.n), spec.rtt as f64, load);
            let av =
                model::stx_analytic::solve_reserving(spec.n, r.min(spec.n), spec.rtt as f64, load);
            rows.push(format!(
                "{},{},{},{:.3},{:.4},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.4},{:.4},\
                 {:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.3},{},{},{:.4},{},{:.3},{:.4}",
                spec.n,
                spec.rtt,
                r,
                load,
                a.offered(),
                spec.slots,
                a.mean_delay(),
                a.delay_ci95(),
                an.delay_stx,
                b.mean_delay(),
                b.delay_ci95(),
                an.delay_no_stx,
                a.throughput(),
                b.throughput(),
                a.p_s(),
                an.p_s,
                a.p_s_given_s(),
                an.p_s_given_s,
                a.p_ss(),
                an.p_ss,
                a.q(),
                an.q,
                a.p_w(),
                an.p_w,
                a.dup_dropped as f64 / a.cells.max(1) as f64,
                a.mean_reseq(),
                a.rsq_max,
                a.rtx_max,
                a.spec_lost_to_wasted as f64 / a.cells.max(1) as f64,
                s.complete && o.complete,
                av.delay_stx,
                av.p_s_given_s
            ));
        }
    }
    rows
}
