//! The STX system study (`studies::stx_system`, the switch composition
//! `model::stx_switch` driven with traffic), around the arbiter's golden
//! model or its verilated RTL ([`RtlArbiter`], one RTL clock cycle per
//! slot, through the composition's [`SwitchArbiter`]).
//!
//! A study ([`SweepSpec`]) is a list of experiments ([`Experiment`]): a
//! traffic pattern, loads, output-link stalls, and the variants run on it
//! (receivers or no STX, policy, delivery scheme, flow control). Every
//! point (experiment, variant, load) runs on [`SweepSpec::seeds`]
//! independent seeds; the seed fixes the arrivals and the stalls, so the
//! variants of an experiment at one load and seed see the same arrivals
//! (paired runs). The results are written as three CSV tables
//! ([`table`]): per run, per point (means and 95 % confidence intervals
//! across the seeds), and the paired differences between variants with
//! their intervals; and drawn ([`charts`]).

mod charts;
mod table;
#[cfg(test)]
mod tests;

pub use charts::{
    load_charts, load_png, load_svg, policy_charts, policy_png, policy_svg, sweep_charts,
    sweep_png, sweep_svg,
};
pub use table::{
    aggregate, csv_text, paired, paired_text, parse_paired_csv, parse_sweep_csv, runs_text,
    PairRow, PointRow, SweepRow,
};

use anyhow::{anyhow, Result};
use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use model::Block;
use studies::stx_system::{Policy, Scheme, Stall, SwitchArbiter};

/// The arbiter RTL behind the switch composition's arbiter interface: one
/// slot is `CLK_PER_SLOT` clocks with the slot's inputs held, its outputs
/// those of the last clock (the block's alignment, `docs/arbiter.md`).
pub struct RtlArbiter {
    rtl: Rtl<Arbiter>,
    k: u32,
    cycles: u64,
}

impl RtlArbiter {
    /// Instantiates the verilated variant `p` with configuration `c`,
    /// random initial state from `seed`, and holds reset for the power-on
    /// slots (as the lockstep runner does).
    pub fn new(p: &ArbiterParams, c: &ArbiterConfig, seed: u64) -> Result<Self> {
        Arbiter::check(p, c)?;
        let k = Arbiter::alignment(p).clocks_per_step.max(1);
        let mut rtl = Rtl::<Arbiter>::new(p, c, seed, None)?;
        rtl.reset(POWER_ON_RESET as usize * k as usize)
            .map_err(|e| anyhow!("{e}"))?;
        Ok(RtlArbiter { rtl, k, cycles: 0 })
    }

    /// Slots run.
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
            .step_clocks(i, self.k)
            .unwrap_or_else(|e| panic!("arbiter RTL, slot {}: {e:#}", self.cycles));
        self.cycles += 1;
    }
}

/// Which traffic an experiment runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TrafficKind {
    /// Uniform Bernoulli (the paper's); at load 1 every input is
    /// backlogged (saturation).
    Bernoulli,
    /// On/off geometric bursts to one output, of this mean length.
    OnOff(f64),
    /// A share `h` of the cells to output 0, the rest uniform.
    HotSpot(f64),
}

impl TrafficKind {
    /// The CSV name: `bernoulli`, `onoff16`, `hotspot0.3`.
    pub fn name(&self) -> String {
        match self {
            TrafficKind::Bernoulli => "bernoulli".into(),
            TrafficKind::OnOff(b) => format!("onoff{b}"),
            TrafficKind::HotSpot(h) => format!("hotspot{h}"),
        }
    }

    /// Parses a [`TrafficKind::name`]; `saturation` is Bernoulli (at load
    /// 1, which the caller sets).
    pub fn parse(s: &str) -> Result<TrafficKind> {
        let num = |rest: &str, lo: f64, hi: f64| {
            rest.parse::<f64>().ok().filter(|v| (lo..=hi).contains(v))
        };
        match s {
            "bernoulli" | "saturation" => Ok(TrafficKind::Bernoulli),
            x => {
                if let Some(b) = x.strip_prefix("onoff").and_then(|r| num(r, 1.0, 1e6)) {
                    Ok(TrafficKind::OnOff(b))
                } else if let Some(h) = x.strip_prefix("hotspot").and_then(|r| num(r, 0.0, 1.0)) {
                    Ok(TrafficKind::HotSpot(h))
                } else {
                    Err(anyhow!(
                        "traffic `{x}`: expected bernoulli, saturation, onoffL (L >= 1, e.g. \
                         onoff16) or hotspotH (0 <= H <= 1, e.g. hotspot0.3)"
                    ))
                }
            }
        }
    }

    /// The hot output, if any.
    pub fn hot(&self) -> Option<usize> {
        matches!(self, TrafficKind::HotSpot(_)).then_some(0)
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

/// What runs on an experiment's traffic: receivers (`None`: STX off,
/// where policy and scheme do not matter and are OCF, SR), policy, scheme,
/// flow control (off only in the ablation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variant {
    /// Receivers (`None`: STX off).
    pub r: Option<usize>,
    /// STX policy.
    pub policy: Policy,
    /// Delivery scheme.
    pub scheme: Scheme,
    /// The arbiter's credits on (the largest safe pool) or off.
    pub fc: bool,
}

impl Variant {
    /// STX off (plain iSLIP), with flow control.
    pub const fn no_stx() -> Self {
        Variant {
            r: None,
            policy: Policy::Ocf,
            scheme: Scheme::Sr,
            fc: true,
        }
    }
    /// STX with `r` receivers, `policy`, `scheme`, with flow control.
    pub const fn stx(r: usize, policy: Policy, scheme: Scheme) -> Self {
        Variant {
            r: Some(r),
            policy,
            scheme,
            fc: true,
        }
    }
    /// The same without flow control (the ablation).
    pub const fn without_fc(self) -> Self {
        Variant { fc: false, ..self }
    }
    /// A short name: `nostx`, `R2 ocf sr`, `R2 ocf sr nofc`.
    pub fn name(&self) -> String {
        let base = match self.r {
            None => "nostx".to_string(),
            Some(r) => format!(
                "R{r} {} {}",
                policy_name(self.policy),
                scheme_name(self.scheme)
            ),
        };
        if self.fc {
            base
        } else {
            format!("{base} nofc")
        }
    }
}

/// A family of curves: one traffic pattern at some loads, the output
/// links' stalls, and the variants run on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// Its name in the CSV (`bernoulli`, `saturation`, `stall-onoff64`...).
    pub name: String,
    /// The traffic.
    pub traffic: TrafficKind,
    /// Loads, in (0, 1] (1: backlogged inputs, throughput only).
    pub loads: Vec<f64>,
    /// Output links stalled for bursts of slots.
    pub stall: Option<Stall>,
    /// The variants.
    pub variants: Vec<Variant>,
}

/// What a study runs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// Ports.
    pub n: usize,
    /// Round trip (slots).
    pub rtt: u64,
    /// iSLIP iterations.
    pub iters: usize,
    /// Warm-up slots (not measured).
    pub warmup: u64,
    /// Measured slots.
    pub slots: u64,
    /// Independent seeds per point.
    pub seeds: usize,
    /// Base seed.
    pub seed: u64,
    /// VOQ depth of the input adapters.
    pub voq: usize,
    /// RSQ slots per input of the output adapters.
    pub egress_b: usize,
    /// The experiments.
    pub experiments: Vec<Experiment>,
    /// Run the arbiter RTL instead of the model.
    pub rtl: bool,
    /// Worker threads.
    pub jobs: usize,
}

/// One run: experiment, variant, load and seed (indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Job {
    /// Index into [`SweepSpec::experiments`].
    pub exp: usize,
    /// Index into the experiment's variants.
    pub var: usize,
    /// Index into the experiment's loads.
    pub load: usize,
    /// Seed number, `0..seeds`.
    pub seed: usize,
}

impl SweepSpec {
    /// The recorded study (`make sweep-stx`, `docs/stx.md`): N = 64,
    /// RTT = 64, 8 seeds of 2000 + 10 000 slots per point.
    ///
    /// - `bernoulli`, loads 0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9: no STX; OCF
    ///   SR at R = 1, 2, 8 (the paper's); random and YCF with SR at R = 2
    ///   and 8; GBN and SAW with OCF at R = 2;
    /// - `onoff16` (bursts of mean 16), loads 0.1, 0.3, 0.5, 0.7, R = 2:
    ///   no STX, the three policies with SR, OCF with GBN and SAW;
    /// - `saturation` (every input backlogged, load 1): the same variants
    ///   as `bernoulli`;
    /// - `hotspot0.1`, `hotspot0.3` (that share of all cells to output 0),
    ///   loads 0.3 and 0.5, R = 2: no STX, the three policies with SR;
    /// - `stall-bernoulli`, `stall-onoff64`: every output link stalled a
    ///   quarter of the time in bursts of mean 400 slots, load 0.5, R = 2,
    ///   OCF SR with and without flow control; and `hotspot0.3-nofc`: the
    ///   ablation under a hot spot.
    pub fn study(n: usize, rtt: u64) -> Self {
        use Policy::{Ocf, Random, Ycf};
        use Scheme::{Gbn, Saw, Sr};
        let exp = |name: &str, traffic, loads: &[f64], stall, variants: Vec<Variant>| Experiment {
            name: name.into(),
            traffic,
            loads: loads.to_vec(),
            stall,
            variants,
        };
        let uniform = vec![
            Variant::no_stx(),
            Variant::stx(1, Ocf, Sr),
            Variant::stx(2, Ocf, Sr),
            Variant::stx(8, Ocf, Sr),
            Variant::stx(2, Random, Sr),
            Variant::stx(2, Ycf, Sr),
            Variant::stx(8, Random, Sr),
            Variant::stx(8, Ycf, Sr),
            Variant::stx(2, Ocf, Gbn),
            Variant::stx(2, Ocf, Saw),
        ];
        let r2 = vec![
            Variant::no_stx(),
            Variant::stx(2, Ocf, Sr),
            Variant::stx(2, Random, Sr),
            Variant::stx(2, Ycf, Sr),
            Variant::stx(2, Ocf, Gbn),
            Variant::stx(2, Ocf, Saw),
        ];
        let policies = vec![
            Variant::no_stx(),
            Variant::stx(2, Ocf, Sr),
            Variant::stx(2, Random, Sr),
            Variant::stx(2, Ycf, Sr),
        ];
        let fc = vec![
            Variant::stx(2, Ocf, Sr),
            Variant::stx(2, Ocf, Sr).without_fc(),
        ];
        let stall = Some(Stall {
            share: 0.25,
            mean: 400.0,
        });
        SweepSpec {
            n,
            rtt,
            iters: 6,
            warmup: 2000,
            slots: 10_000,
            seeds: 8,
            seed: 1,
            voq: 256,
            egress_b: 256,
            experiments: vec![
                exp(
                    "bernoulli",
                    TrafficKind::Bernoulli,
                    &[0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9],
                    None,
                    uniform.clone(),
                ),
                exp(
                    "onoff16",
                    TrafficKind::OnOff(16.0),
                    &[0.1, 0.3, 0.5, 0.7],
                    None,
                    r2,
                ),
                exp("saturation", TrafficKind::Bernoulli, &[1.0], None, uniform),
                exp(
                    "hotspot0.1",
                    TrafficKind::HotSpot(0.1),
                    &[0.3, 0.5],
                    None,
                    policies.clone(),
                ),
                exp(
                    "hotspot0.3",
                    TrafficKind::HotSpot(0.3),
                    &[0.3, 0.5],
                    None,
                    policies,
                ),
                exp(
                    "stall-bernoulli",
                    TrafficKind::Bernoulli,
                    &[0.5],
                    stall,
                    fc.clone(),
                ),
                exp(
                    "stall-onoff64",
                    TrafficKind::OnOff(64.0),
                    &[0.5],
                    stall,
                    fc.clone(),
                ),
                exp(
                    "hotspot0.3-nofc",
                    TrafficKind::HotSpot(0.3),
                    &[0.5],
                    None,
                    fc,
                ),
            ],
            rtl: false,
            jobs: 1,
        }
    }

    /// The study thinned to what ran on the shared 2-core machine in the
    /// time there was (`make sweep-stx-short`, the runs recorded in
    /// `docs/stx.md`), 8 seeds per point: `bernoulli` at loads 0.5 and 0.7
    /// without R = 8 random and YCF; `saturation` the same variants;
    /// the hot spots at load 0.5; the stalls and the ablation as in the
    /// study; no `onoff16`. The warm-up and measured slots are the
    /// command's (`--warmup 1000 --slots 3000` in the make target).
    pub fn study_short(n: usize, rtt: u64) -> Self {
        let mut s = Self::study(n, rtt);
        s.experiments.retain(|e| e.name != "onoff16");
        for e in &mut s.experiments {
            if e.name == "bernoulli" || e.name == "saturation" {
                e.variants
                    .retain(|v| v.r != Some(8) || v.policy == Policy::Ocf);
            }
            match e.name.as_str() {
                "bernoulli" => e.loads = vec![0.5, 0.7],
                "hotspot0.1" | "hotspot0.3" => e.loads = vec![0.5],
                _ => {}
            }
        }
        s
    }

    /// Every run: per experiment, load and seed, every variant (so the
    /// runs that are compared are listed side by side).
    pub fn jobs(&self) -> Vec<Job> {
        let mut v = Vec::new();
        for (exp, e) in self.experiments.iter().enumerate() {
            for load in 0..e.loads.len() {
                for seed in 0..self.seeds {
                    for var in 0..e.variants.len() {
                        v.push(Job {
                            exp,
                            var,
                            load,
                            seed,
                        });
                    }
                }
            }
        }
        v
    }

    /// The seed of the arrivals and stalls at load `load` and seed number
    /// `seed`: the same for every variant (and every experiment).
    pub fn run_seed(&self, load: usize, seed: usize) -> u64 {
        self.seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(1000 * seed as u64 + load as u64 + 1)
    }

    /// The system configuration of `job`.
    pub fn config(&self, job: Job) -> studies::stx_system::Config {
        let e = &self.experiments[job.exp];
        let v = e.variants[job.var];
        let mut cfg =
            studies::stx_system::Config::new(self.n, v.r.unwrap_or(1), self.rtt, v.r.is_some());
        cfg.iters = self.iters;
        cfg.policy = v.policy;
        cfg.scheme = v.scheme;
        cfg.voq = self.voq;
        cfg.egress_b = self.egress_b;
        cfg.credits = if v.fc { None } else { Some(0) };
        cfg.stall = e.stall;
        cfg.stall_seed = self.run_seed(job.load, job.seed);
        cfg.hot = e.traffic.hot();
        cfg.measure = (self.warmup, self.warmup + self.slots);
        cfg
    }

    /// Checks every configuration of the study (one line naming the field
    /// and the rule) and the loads.
    pub fn check(&self) -> Result<()> {
        for e in &self.experiments {
            if let Some(l) = e.loads.iter().find(|l| !(**l > 0.0 && **l <= 1.0)) {
                return Err(anyhow!("{}: load {l} is not in (0, 1]", e.name));
            }
        }
        let mut seen = Vec::new();
        for job in self.jobs() {
            let mut c = self.config(job);
            c.stall_seed = 0;
            if !seen.contains(&c) {
                c.check().map_err(|e| anyhow!("{e}"))?;
                seen.push(c);
            }
        }
        Ok(())
    }
}

/// One run of a study.
#[derive(Clone, Debug)]
pub struct Point {
    /// What ran.
    pub job: Job,
    /// The load.
    pub load: f64,
    /// The measured statistics.
    pub stats: studies::stx_system::Stats,
    /// Every measured cell left before the cap (at load 1, where only the
    /// throughput is measured: true).
    pub complete: bool,
    /// Wall time, seconds.
    pub secs: f64,
}

/// Runs one point of `spec` with the model or RTL arbiter.
pub fn run_point(spec: &SweepSpec, job: Job) -> Result<Point> {
    use studies::stx_system::traffic::{Bernoulli, HotSpot, OnOff, Traffic};
    use studies::stx_system::{arbiter_setup, System};
    let e = &spec.experiments[job.exp];
    let load = e.loads[job.load];
    let cfg = spec.config(job);
    let seed = spec.run_seed(job.load, job.seed);
    let mut traffic: Box<dyn Traffic> = match e.traffic {
        TrafficKind::Bernoulli => Box::new(Bernoulli::new(spec.n, load, seed)),
        TrafficKind::OnOff(b) => Box::new(OnOff::new(spec.n, load, b, seed)),
        TrafficKind::HotSpot(h) => Box::new(HotSpot::new(spec.n, load, h, 0, seed)),
    };
    // Enough time for every measured cell to leave, even at high load.
    let cap = cfg.measure.1 + 20 * spec.slots.max(10_000);
    let end = cfg.measure.1;
    let saturated = load >= 1.0;
    let (p, c) = arbiter_setup(&cfg);
    let t0 = std::time::Instant::now();
    fn drive<A: SwitchArbiter>(
        s: &mut System<A>,
        t: &mut dyn Traffic,
        saturated: bool,
        end: u64,
        cap: u64,
    ) -> bool {
        if saturated {
            s.run(t, end);
            true
        } else {
            s.run_measured(t, cap)
        }
    }
    let (stats, complete) = if spec.rtl {
        let mut s = System::new(cfg, RtlArbiter::new(&p, &c, seed)?);
        let ok = drive(&mut s, traffic.as_mut(), saturated, end, cap);
        (s.stats().clone(), ok)
    } else {
        let mut s = System::with_model(cfg);
        let ok = drive(&mut s, traffic.as_mut(), saturated, end, cap);
        (s.stats().clone(), ok)
    };
    Ok(Point {
        job,
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
    spec.check()?;
    crate::sweep::par_map(&spec.jobs(), spec.jobs, |_, &job| {
        let p = run_point(spec, job)?;
        progress(&p);
        Ok(p)
    })
}
