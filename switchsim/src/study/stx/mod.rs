//! The STX system simulation (`studies::stx_system`, the switch composition
//! `model::stx_switch` driven with traffic) around the arbiter's verilated
//! RTL: [`RtlArbiter`] implements the composition's [`SwitchArbiter`] by
//! running one RTL clock cycle per slot, in place of the golden model. A
//! sweep over loads, receivers, STX policies, delivery schemes and traffic
//! patterns ([`sweep`]) gives the system's curves, written as CSV
//! ([`csv_text`]) and plotted: simulated beside analytic for the paper's
//! configuration ([`sweep_svg`], [`sweep_png`]), and the policies and
//! schemes side by side ([`policy_svg`], [`policy_png`]).

mod charts;
mod table;
#[cfg(test)]
mod tests;

pub use charts::{policy_charts, policy_png, policy_svg, sweep_charts, sweep_png, sweep_svg};
pub use table::{csv_rows, csv_text, parse_sweep_csv, CsvRow, SweepRow};

use anyhow::{anyhow, Result};
use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use model::Block;
use studies::stx_system::{Policy, Scheme, SwitchArbiter};

/// The arbiter RTL behind the switch composition's arbiter interface.
pub struct RtlArbiter {
    rtl: Rtl<Arbiter>,
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
        Ok(RtlArbiter { rtl, cycles: 0 })
    }

    /// Clock cycles run (slots).
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
}

impl SwitchArbiter for RtlArbiter {
    fn step_into(&mut self, i: &ArbiterInputs, o: &mut ArbiterOutputs) {
        // An RTL assertion or a failed FFI call is a broken contract: the
        // system cannot go on.
        *o = self
            .rtl
            .step(i)
            .unwrap_or_else(|e| panic!("arbiter RTL, slot {}: {e:#}", self.cycles));
        self.cycles += 1;
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

impl TrafficKind {
    /// The CSV name: `bernoulli`, or `onoff` and the mean burst (`onoff16`).
    pub fn name(&self) -> String {
        match self {
            TrafficKind::Bernoulli => "bernoulli".into(),
            TrafficKind::OnOff(b) => format!("onoff{b}"),
        }
    }
}

/// The CSV name of a policy.
pub fn policy_name(p: Policy) -> &'static str {
    match p {
        Policy::Ocf => "ocf",
        Policy::Random => "random",
        Policy::Ycf => "ycf",
    }
}

/// The CSV name of a delivery scheme.
pub fn scheme_name(s: Scheme) -> &'static str {
    match s {
        Scheme::Sr => "sr",
        Scheme::Gbn => "gbn",
        Scheme::Saw => "saw",
    }
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
    /// Traffic patterns, each a sweep of its own.
    pub traffics: Vec<TrafficKind>,
    /// STX policies of the input adapters.
    pub policies: Vec<Policy>,
    /// Reliable-delivery schemes.
    pub schemes: Vec<Scheme>,
    /// Every combination of policy and scheme; else (the default) the
    /// paper's configuration (OCF, SR) and each other policy with SR and
    /// each other scheme with OCF, for every R.
    pub cross: bool,
    /// VOQ depth of the input adapters.
    pub voq: usize,
    /// Run the arbiter RTL instead of the model.
    pub rtl: bool,
    /// Worker threads.
    pub jobs: usize,
}

/// What one run of a sweep is: traffic, receivers (`None`: STX off, where
/// policy and scheme do not matter and are OCF, SR), policy, scheme, load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Job {
    /// Index into [`SweepSpec::traffics`].
    pub traffic: usize,
    /// Receivers (`None`: STX off).
    pub r: Option<usize>,
    /// STX policy.
    pub policy: Policy,
    /// Delivery scheme.
    pub scheme: Scheme,
    /// Index into [`SweepSpec::loads`].
    pub load: usize,
}

impl SweepSpec {
    /// Every run of the sweep: per traffic and load, one without STX, then
    /// the STX runs (see [`SweepSpec::variants_at`]).
    pub fn jobs(&self) -> Vec<Job> {
        let mut v = Vec::new();
        for traffic in 0..self.traffics.len() {
            for load in 0..self.loads.len() {
                let j = |r, policy, scheme| Job {
                    traffic,
                    r,
                    policy,
                    scheme,
                    load,
                };
                v.push(j(None, Policy::Ocf, Scheme::Sr));
                for &r in &self.rs {
                    for &policy in &self.policies {
                        for &scheme in &self.schemes {
                            let paper =
                                u8::from(policy == Policy::Ocf) + u8::from(scheme == Scheme::Sr);
                            if self.cross || paper >= 1 {
                                v.push(j(Some(r), policy, scheme));
                            }
                        }
                    }
                }
            }
        }
        v
    }
}

/// One simulated point.
#[derive(Clone, Debug)]
pub struct Point {
    /// What ran.
    pub job: Job,
    /// Receivers (`None`: STX off).
    pub r: Option<usize>,
    /// Load.
    pub load: f64,
    /// The measured statistics.
    pub stats: studies::stx_system::Stats,
    /// Every measured cell left before the cap.
    pub complete: bool,
    /// Wall time, seconds.
    pub secs: f64,
}

/// Runs one point of `spec` with the model or RTL arbiter. The traffic seed
/// depends on the load only, so the runs with and without STX (and for
/// every R, policy and scheme) see the same arrivals.
pub fn run_point(spec: &SweepSpec, job: Job) -> Result<Point> {
    use studies::stx_system::traffic::{Bernoulli, OnOff, Traffic};
    use studies::stx_system::{arbiter_setup, Config, System};
    let (r, load_idx) = (job.r, job.load);
    let load = spec.loads[load_idx];
    let mut cfg = Config::new(spec.n, r.unwrap_or(1), spec.rtt, r.is_some());
    cfg.iters = spec.iters;
    cfg.policy = job.policy;
    cfg.scheme = job.scheme;
    cfg.voq = spec.voq;
    cfg.measure = (spec.warmup, spec.warmup + spec.slots);
    let seed = spec
        .seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(load_idx as u64 + 1);
    let mut traffic: Box<dyn Traffic> = match spec.traffics[job.traffic] {
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
        let mut s = System::with_model(cfg);
        let ok = s.run_measured(traffic.as_mut(), cap);
        (s.stats().clone(), ok)
    };
    Ok(Point {
        job,
        r,
        load,
        stats,
        complete,
        secs: t0.elapsed().as_secs_f64(),
    })
}

/// Runs every point of `spec` ([`SweepSpec::jobs`]). `progress` is called
/// after each point. Points are independent and deterministic; `jobs`
/// threads share them.
pub fn sweep(spec: &SweepSpec, progress: &(dyn Fn(&Point) + Sync)) -> Result<Vec<Point>> {
    crate::sweep::par_map(&spec.jobs(), spec.jobs, |_, &job| {
        let p = run_point(spec, job)?;
        progress(&p);
        Ok(p)
    })
}
