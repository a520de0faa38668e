//! The STX system simulation (`studies::stx_system`, the switch composition
//! `model::stx_switch` driven with traffic) around the arbiter's verilated
//! RTL: [`RtlArbiter`] implements the composition's [`SwitchArbiter`] by
//! running one RTL clock cycle per slot, in place of the golden model. A
//! sweep over loads, receivers, STX policies, delivery schemes and traffic
//! patterns ([`sweep`]) gives the system's curves, written as CSV
//! ([`csv_text`]) and plotted: simulated beside analytic for the paper's
//! configuration ([`sweep_svg`], [`sweep_png`]), and the policies and
//! schemes side by side ([`policy_svg`], [`policy_png`]).

use crate::lockstep::POWER_ON_RESET;
use crate::plot::{Chart, Marker, Rgb, Series, BLACK, GREY, PALETTE};
use crate::rtl::Rtl;
use anyhow::{anyhow, bail, Result};
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterOutputs, ArbiterParams};
use model::Block;
use serde::{Deserialize, Serialize};
use std::path::Path;
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
    let work = spec.jobs();
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
                match run_point(spec, work[k]) {
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

/// A number written with `D` decimals.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fixed<const D: usize>(f64);

impl<const D: usize> Serialize for Fixed<D> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{:.*}", D, self.0))
    }
}

/// One row of the sweep CSV: a field per column, in order, named like it
/// (the header is their names). Delays are written with 3 decimals, shares and probabilities
/// with 4.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CsvRow {
    n: usize,
    rtt: u64,
    r: usize,
    traffic: String,
    policy: &'static str,
    scheme: &'static str,
    load: Fixed<3>,
    offered: Fixed<4>,
    slots: u64,
    delay_stx_sim: Fixed<3>,
    delay_stx_ci95: Fixed<3>,
    delay_stx_analytic: Fixed<3>,
    delay_nostx_sim: Fixed<3>,
    delay_nostx_ci95: Fixed<3>,
    delay_nostx_analytic: Fixed<3>,
    throughput_stx: Fixed<4>,
    throughput_nostx: Fixed<4>,
    p_s_sim: Fixed<4>,
    p_s_analytic: Fixed<4>,
    p_s_given_s_sim: Fixed<4>,
    p_s_given_s_analytic: Fixed<4>,
    p_ss_sim: Fixed<4>,
    p_ss_analytic: Fixed<4>,
    spurious_sim: Fixed<4>,
    spurious_analytic: Fixed<4>,
    wasted_sim: Fixed<4>,
    wasted_analytic: Fixed<4>,
    dup_per_cell: Fixed<4>,
    reseq_mean: Fixed<3>,
    rsq_max: usize,
    rtx_max: usize,
    lost_to_wasted: Fixed<4>,
    complete: bool,
    delay_stx_analytic_reserving: Fixed<3>,
    p_s_given_s_analytic_reserving: Fixed<4>,
    delay_stx_std: Fixed<3>,
    delay_nostx_std: Fixed<3>,
    retx_per_cell: Fixed<4>,
    discard_per_cell: Fixed<4>,
    ack_void_per_cell: Fixed<4>,
    own_phantom_per_cell: Fixed<4>,
    arr_drop_share: Fixed<6>,
    voq_max: usize,
    lost: u64,
}

/// One CSV row per STX run (traffic, R, policy, scheme, load), in the
/// order of [`SweepSpec::jobs`] grouped by curve: the STX run, the run
/// without STX at the same traffic and load beside it, and the analytic
/// model (`studies::stx_analytic`, Bernoulli traffic, OCF, SR: the paper's)
/// — the `_reserving` columns are our variant of it in which wasted grants
/// reserve a receiver too (`solve_reserving`), not the paper's.
pub fn csv_rows(spec: &SweepSpec, points: &[Point]) -> Vec<CsvRow> {
    let mut curves: Vec<(usize, usize, Policy, Scheme)> = Vec::new();
    for j in spec.jobs() {
        if let Some(r) = j.r {
            let key = (j.traffic, r, j.policy, j.scheme);
            if !curves.contains(&key) {
                curves.push(key);
            }
        }
    }
    curves.sort_by_key(|&(t, r, p, s)| (t, p as u8, s as u8, r));
    let mut rows = Vec::new();
    for (ti, r, policy, scheme) in curves {
        for (li, &load) in spec.loads.iter().enumerate() {
            let find = |rr: Option<usize>, p: Policy, sc: Scheme| {
                points
                    .iter()
                    .find(|x| {
                        x.job.traffic == ti
                            && x.job.load == li
                            && x.job.r == rr
                            && x.job.policy == p
                            && x.job.scheme == sc
                    })
                    .expect("point")
            };
            let (s, o) = (
                find(Some(r), policy, scheme),
                find(None, Policy::Ocf, Scheme::Sr),
            );
            let (a, b) = (&s.stats, &o.stats);
            let an = studies::stx_analytic::solve(spec.n, r.min(spec.n), spec.rtt as f64, load);
            let av = studies::stx_analytic::solve_reserving(
                spec.n,
                r.min(spec.n),
                spec.rtt as f64,
                load,
            );
            let per_cell = |k: u64| Fixed(k as f64 / a.cells.max(1) as f64);
            rows.push(CsvRow {
                n: spec.n,
                rtt: spec.rtt,
                r,
                traffic: spec.traffics[ti].name(),
                policy: policy_name(policy),
                scheme: scheme_name(scheme),
                load: Fixed(load),
                offered: Fixed(a.offered()),
                slots: spec.slots,
                delay_stx_sim: Fixed(a.mean_delay()),
                delay_stx_ci95: Fixed(a.delay_ci95()),
                delay_stx_analytic: Fixed(an.delay_stx),
                delay_nostx_sim: Fixed(b.mean_delay()),
                delay_nostx_ci95: Fixed(b.delay_ci95()),
                delay_nostx_analytic: Fixed(an.delay_no_stx),
                throughput_stx: Fixed(a.throughput()),
                throughput_nostx: Fixed(b.throughput()),
                p_s_sim: Fixed(a.p_s()),
                p_s_analytic: Fixed(an.p_s),
                p_s_given_s_sim: Fixed(a.p_s_given_s()),
                p_s_given_s_analytic: Fixed(an.p_s_given_s),
                p_ss_sim: Fixed(a.p_ss()),
                p_ss_analytic: Fixed(an.p_ss),
                spurious_sim: Fixed(a.q()),
                spurious_analytic: Fixed(an.q),
                wasted_sim: Fixed(a.p_w()),
                wasted_analytic: Fixed(an.p_w),
                dup_per_cell: per_cell(a.dup_dropped),
                reseq_mean: Fixed(a.mean_reseq()),
                rsq_max: a.rsq_max,
                rtx_max: a.rtx_max,
                lost_to_wasted: per_cell(a.spec_lost_to_wasted),
                complete: s.complete && o.complete,
                delay_stx_analytic_reserving: Fixed(av.delay_stx),
                p_s_given_s_analytic_reserving: Fixed(av.p_s_given_s),
                delay_stx_std: Fixed(a.delay_std()),
                delay_nostx_std: Fixed(b.delay_std()),
                retx_per_cell: per_cell(a.retx),
                discard_per_cell: per_cell(a.discarded),
                ack_void_per_cell: per_cell(a.ack_void),
                own_phantom_per_cell: per_cell(a.spec_on_own_phantom),
                arr_drop_share: Fixed(
                    a.arr_dropped as f64 / (a.cells + a.arr_dropped).max(1) as f64,
                ),
                voq_max: a.voq_max.max(b.voq_max),
                lost: a.lost + b.lost,
            });
        }
    }
    rows
}

/// The sweep CSV: the header and [`csv_rows`].
pub fn csv_text(spec: &SweepSpec, points: &[Point]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in csv_rows(spec, points) {
        w.serialize(row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The columns of a sweep CSV row ([`CsvRow`]) that [`sweep_charts`]
/// plots, read by header name.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SweepRow {
    /// Ports.
    pub n: usize,
    /// Round trip (slots).
    pub rtt: u64,
    /// Receivers per output.
    pub r: usize,
    /// Traffic (`bernoulli`, `onoff16`, ...); absent in sweeps recorded
    /// before the column: `bernoulli`.
    #[serde(default = "bernoulli")]
    pub traffic: String,
    /// STX policy (`ocf`, `random`, `ycf`); absent: `ocf`.
    #[serde(default = "ocf")]
    pub policy: String,
    /// Delivery scheme (`sr`, `gbn`, `saw`); absent: `sr`.
    #[serde(default = "sr")]
    pub scheme: String,
    /// Share of cells that succeeded speculatively (absent: NaN).
    #[serde(default = "nan")]
    pub p_ss_sim: f64,
    /// Duplicates dropped per cell (absent: NaN).
    #[serde(default = "nan")]
    pub dup_per_cell: f64,
    /// Retransmissions per cell (absent: NaN).
    #[serde(default = "nan")]
    pub retx_per_cell: f64,
    /// Load the traffic was generated for.
    pub load: f64,
    /// Load measured (cells/slot/input).
    pub offered: f64,
    /// Mean delay with STX (slots), simulated and analytic.
    pub delay_stx_sim: f64,
    /// See `delay_stx_sim`.
    pub delay_stx_analytic: f64,
    /// Mean delay without STX (slots), simulated and analytic.
    pub delay_nostx_sim: f64,
    /// See `delay_nostx_sim`.
    pub delay_nostx_analytic: f64,
    /// Throughput with and without STX (cells/slot/output).
    pub throughput_stx: f64,
    /// See `throughput_stx`.
    pub throughput_nostx: f64,
    /// `P_{s|S}`, simulated and analytic.
    pub p_s_given_s_sim: f64,
    /// See `p_s_given_s_sim`.
    pub p_s_given_s_analytic: f64,
    /// Share of grants that were spurious (`Q`), simulated and analytic.
    pub spurious_sim: f64,
    /// See `spurious_sim`.
    pub spurious_analytic: f64,
    /// Share of grants that were wasted (`P_w`), simulated and analytic.
    pub wasted_sim: f64,
    /// See `wasted_sim`.
    pub wasted_analytic: f64,
}

fn bernoulli() -> String {
    "bernoulli".into()
}
fn ocf() -> String {
    "ocf".into()
}
fn sr() -> String {
    "sr".into()
}
fn nan() -> f64 {
    f64::NAN
}

/// Reads the rows of a sweep CSV (`text`, read from `file`): columns are
/// found by their header names, in any order, and other columns are
/// ignored. Errors name the file and line.
pub fn parse_sweep_csv(text: &str, file: &Path) -> Result<Vec<SweepRow>> {
    let f = file.display();
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = rdr.headers().map_err(|e| csv_error(file, &e))?.clone();
    if header.iter().all(str::is_empty) {
        bail!("{f}: empty; expected a sweep CSV, its first line the header");
    }
    let header_line = header.position().map_or(1, |p| p.line());
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| csv_error(file, &e))?;
        let line = rec.position().map_or(0, |p| p.line());
        let row = rec.deserialize(Some(&header)).map_err(|e| {
            let csv::ErrorKind::Deserialize { err, .. } = e.kind() else {
                return csv_error(file, &e);
            };
            let kind = err.kind().to_string();
            match err.field().map(|i| i as usize) {
                Some(i) => anyhow!(
                    "{f}:{line}: column `{}`: `{}`: {kind}",
                    header.get(i).unwrap_or("?"),
                    rec.get(i).unwrap_or("")
                ),
                None => match kind.strip_prefix("missing field ") {
                    Some(name) => anyhow!("{f}:{header_line}: no column {name} in the header"),
                    None => anyhow!("{f}:{line}: {kind}"),
                },
            }
        })?;
        rows.push(row);
    }
    if rows.is_empty() {
        bail!("{f}: no data rows after the header");
    }
    Ok(rows)
}

/// A CSV reading error as `file:line: what`.
fn csv_error(file: &Path, e: &csv::Error) -> anyhow::Error {
    let f = file.display();
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => {
            let line = pos.as_ref().map_or(0, |p| p.line());
            anyhow!("{f}:{line}: {len} fields, but the header has {expected_len}")
        }
        _ => match e.position() {
            Some(p) => anyhow!("{f}:{}: {e}", p.line()),
            None => anyhow!("{f}: {e}"),
        },
    }
}

/// The sweep's curves in four panels, simulated (solid, with markers) beside
/// analytic (dashed, same colour): (a) mean delay with STX for each R, and
/// without STX (grey, once: it does not depend on R); (b) `P_{s|S}` for each
/// R; (c) the spurious and wasted shares of grants for the middle R; (d)
/// throughput against the offered load, with the analytic model's (equal to
/// the offered load) as reference.
pub fn sweep_charts(rows: &[SweepRow]) -> Vec<Chart> {
    // The paper's configuration (OCF, SR) under the first traffic listed
    // (Bernoulli when there).
    let traffic = rows
        .iter()
        .find(|r| r.traffic == "bernoulli")
        .or(rows.first())
        .map(|r| r.traffic.clone())
        .unwrap_or_default();
    let rows: Vec<SweepRow> = rows
        .iter()
        .filter(|r| r.traffic == traffic && r.policy == "ocf" && r.scheme == "sr")
        .cloned()
        .collect();
    let rows = &rows[..];
    let mut rs: Vec<usize> = Vec::new();
    for row in rows {
        if !rs.contains(&row.r) {
            rs.push(row.r);
        }
    }
    // The rows of one R, by load.
    let of = |r: usize| {
        let mut v: Vec<&SweepRow> = rows.iter().filter(|row| row.r == r).collect();
        v.sort_by(|a, b| a.load.total_cmp(&b.load));
        v
    };
    let curve = |rows: &[&SweepRow], x: fn(&SweepRow) -> f64, y: fn(&SweepRow) -> f64| {
        rows.iter().map(|row| (x(row), y(row))).collect::<Vec<_>>()
    };
    let load = |row: &SweepRow| row.load;
    // A simulated curve against load (solid, with markers) and its analytic
    // counterpart (dashed, same colour).
    let pair = |label: &str,
                rows: &[&SweepRow],
                sim: fn(&SweepRow) -> f64,
                an: fn(&SweepRow) -> f64,
                c: Rgb,
                m: Marker| {
        [
            Series::new(format!("{label} sim"), curve(rows, load, sim), c).with_marker(m),
            Series::new(format!("{label} analytic"), curve(rows, load, an), c).dashed(),
        ]
    };
    let colour = |i: usize| PALETTE[i % (PALETTE.len() - 1)];
    // Cross is kept for the run without STX.
    let marker = |i: usize| [Marker::Circle, Marker::Square, Marker::Triangle][i % 3];
    let load_label = "load (cells/slot/input)".to_string();
    let unit = Some((0.0, 1.0));

    let first = of(rs.first().copied().unwrap_or(0));
    let mut delay = Vec::new();
    let mut success = Vec::new();
    let mut throughput = Vec::new();
    for (i, &r) in rs.iter().enumerate() {
        let rows = of(r);
        let (c, m) = (colour(i), marker(i));
        let label = format!("R={r}");
        delay.extend(pair(
            &label,
            &rows,
            |row| row.delay_stx_sim,
            |row| row.delay_stx_analytic,
            c,
            m,
        ));
        success.extend(pair(
            &label,
            &rows,
            |row| row.p_s_given_s_sim,
            |row| row.p_s_given_s_analytic,
            c,
            m,
        ));
        throughput.push(
            Series::new(
                format!("R={r} STX"),
                curve(&rows, |row| row.offered, |row| row.throughput_stx),
                c,
            )
            .with_marker(m),
        );
    }
    delay.extend(pair(
        "no STX",
        &first,
        |row| row.delay_nostx_sim,
        |row| row.delay_nostx_analytic,
        GREY,
        Marker::Cross,
    ));
    throughput.push(
        Series::new(
            "no STX",
            curve(&first, |row| row.offered, |row| row.throughput_nostx),
            GREY,
        )
        .with_marker(Marker::Cross),
    );
    throughput.push(
        Series::new(
            "analytic (= offered)",
            curve(&first, |row| row.offered, |row| row.offered),
            BLACK,
        )
        .dashed(),
    );

    let mid = rs.get(rs.len() / 2).copied().unwrap_or(0);
    let mid_rows = of(mid);
    let (spurious, wasted) = (PALETTE[3], PALETTE[4]);
    let grants: Vec<Series> = pair(
        "spurious",
        &mid_rows,
        |row| row.spurious_sim,
        |row| row.spurious_analytic,
        spurious,
        Marker::Circle,
    )
    .into_iter()
    .chain(pair(
        "wasted",
        &mid_rows,
        |row| row.wasted_sim,
        |row| row.wasted_analytic,
        wasted,
        Marker::Square,
    ))
    .collect();

    let (n, rtt) = rows.first().map_or((0, 0), |row| (row.n, row.rtt));
    vec![
        Chart {
            title: format!("(a) Mean delay, N={n}, RTT={rtt}"),
            x_label: load_label.clone(),
            y_label: "delay (slots)".into(),
            series: delay,
            x_range: unit,
            y_range: None,
        },
        Chart {
            title: "(b) Speculative success P(s|S)".into(),
            x_label: load_label.clone(),
            y_label: "P(spec. cell succeeds)".into(),
            series: success,
            x_range: unit,
            y_range: unit,
        },
        Chart {
            title: format!("(c) Spurious and wasted grants, R={mid}"),
            x_label: load_label,
            y_label: "share of grants".into(),
            series: grants,
            x_range: unit,
            y_range: unit,
        },
        Chart {
            title: "(d) Throughput with STX".into(),
            x_label: "offered load (cells/slot/input)".into(),
            y_label: "throughput (cells/slot/output)".into(),
            series: throughput,
            x_range: unit,
            y_range: unit,
        },
    ]
}

/// The policies and schemes side by side, at the middle R of the sweep
/// (R = 2 for R = 1, 2, 8): mean delay against load for each policy (with
/// SR) and for each scheme (with OCF), Bernoulli and bursty, beside the
/// delay without STX; and the share of cells that succeed speculatively.
pub fn policy_charts(rows: &[SweepRow]) -> Vec<Chart> {
    let mut rs: Vec<usize> = rows.iter().map(|r| r.r).collect();
    rs.sort_unstable();
    rs.dedup();
    let r = rs.get(rs.len() / 2).copied().unwrap_or(0);
    let mut traffics: Vec<String> = Vec::new();
    for row in rows {
        if !traffics.contains(&row.traffic) {
            traffics.push(row.traffic.clone());
        }
    }
    let curve = |traffic: &str, policy: &str, scheme: &str, y: fn(&SweepRow) -> f64| {
        let mut v: Vec<(f64, f64)> = rows
            .iter()
            .filter(|x| {
                x.r == r && x.traffic == traffic && x.policy == policy && x.scheme == scheme
            })
            .map(|x| (x.load, y(x)))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let variants: [(&str, &str, Rgb, Marker); 5] = [
        ("ocf", "sr", PALETTE[0], Marker::Circle),
        ("random", "sr", PALETTE[1], Marker::Square),
        ("ycf", "sr", PALETTE[2], Marker::Triangle),
        ("ocf", "gbn", PALETTE[3], Marker::Square),
        ("ocf", "saw", PALETTE[4], Marker::Triangle),
    ];
    let unit = Some((0.0, 1.0));
    let mut charts = Vec::new();
    for traffic in &traffics {
        for (what, pick) in [("policies (SR)", 0..3), ("schemes (OCF)", 3..5)] {
            let mut series = Vec::new();
            let ocf_sr = &variants[0];
            for v in std::iter::once(ocf_sr).chain(variants[pick].iter()) {
                if what.starts_with("schemes") || v.1 == "sr" {
                    let pts = curve(traffic, v.0, v.1, |x| x.delay_stx_sim);
                    if !pts.is_empty()
                        && !series
                            .iter()
                            .any(|s: &Series| s.label == format!("{} {}", v.0, v.1))
                    {
                        series.push(
                            Series::new(format!("{} {}", v.0, v.1), pts, v.2).with_marker(v.3),
                        );
                    }
                }
            }
            series.push(
                Series::new(
                    "no STX",
                    curve(traffic, "ocf", "sr", |x| x.delay_nostx_sim),
                    GREY,
                )
                .with_marker(Marker::Cross),
            );
            charts.push(Chart {
                title: format!("Mean delay, {what}, R={r}, {traffic}"),
                x_label: "load (cells/slot/input)".into(),
                y_label: "delay (slots)".into(),
                series,
                x_range: unit,
                y_range: None,
            });
        }
    }
    for traffic in &traffics {
        let series = variants
            .iter()
            .map(|v| {
                Series::new(
                    format!("{} {}", v.0, v.1),
                    curve(traffic, v.0, v.1, |x| x.p_ss_sim),
                    v.2,
                )
                .with_marker(v.3)
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        charts.push(Chart {
            title: format!("Cells delivered speculatively P_Ss, R={r}, {traffic}"),
            x_label: "load (cells/slot/input)".into(),
            y_label: "share of cells".into(),
            series,
            x_range: unit,
            y_range: unit,
        });
    }
    charts
}

/// [`policy_charts`] as an SVG document (two panels per row).
pub fn policy_svg(rows: &[SweepRow]) -> Result<String> {
    crate::plot::render_svg(&policy_charts(rows), 2, 640, 440)
}

/// [`policy_charts`] as a PNG image, laid out like [`policy_svg`].
pub fn policy_png(rows: &[SweepRow]) -> Result<Vec<u8>> {
    crate::plot::render_png(&policy_charts(rows), 2, 640, 440)
}

/// [`sweep_charts`] as an SVG document: a 2 x 2 grid of 640 x 440 panels.
pub fn sweep_svg(rows: &[SweepRow]) -> Result<String> {
    crate::plot::render_svg(&sweep_charts(rows), 2, 640, 440)
}

/// [`sweep_charts`] as a PNG image, laid out like [`sweep_svg`].
pub fn sweep_png(rows: &[SweepRow]) -> Result<Vec<u8>> {
    crate::plot::render_png(&sweep_charts(rows), 2, 640, 440)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of the recorded sweep, `docs/stx_sweep.csv`.
    fn header() -> &'static str {
        include_str!("../../docs/stx_sweep.csv")
            .lines()
            .next()
            .unwrap()
    }

    fn csv(rows: &[&str]) -> String {
        let mut text = format!("{}\n", header());
        for row in rows {
            text.push_str(row);
            text.push('\n');
        }
        text
    }

    const ROW: &str = "64,64,2,bernoulli,ocf,sr,0.100,0.0999,30000,64.449,0.023,64.296,128.060,\
        0.002,129.055,0.0999,0.0999,0.9985,0.9998,0.9940,0.9979,0.9925,0.9948,0.0932,0.0931,\
        0.8915,0.8690,0.0863,0.356,3,4,0.0759,true,64.3,0.99,2.1,0.5,0.0863,0.0000,0.0000,\
        0.0100,0.000000,3,0";

    #[test]
    fn plot_sweep_csv_is_read_by_column_name() {
        let rows = parse_sweep_csv(&csv(&[ROW, ROW]), Path::new("s.csv")).unwrap();
        assert_eq!(rows.len(), 2);
        let r = &rows[0];
        assert_eq!((r.n, r.rtt, r.r), (64, 64, 2));
        assert_eq!(
            (r.load, r.delay_stx_sim, r.wasted_analytic),
            (0.1, 64.449, 0.869)
        );
        // Reordered and extra columns, NaN values.
        let text = "extra,wasted_analytic,wasted_sim,spurious_analytic,spurious_sim,\
            p_s_given_s_analytic,p_s_given_s_sim,throughput_nostx,throughput_stx,\
            delay_nostx_analytic,delay_nostx_sim,delay_stx_analytic,delay_stx_sim,offered,load,r,rtt,n\n\
            x,1,2,3,4,5,6,7,8,9,10,11,NaN,0.5,0.5,8,16,4\n";
        let rows = parse_sweep_csv(text, Path::new("s.csv")).unwrap();
        assert_eq!((rows[0].n, rows[0].rtt, rows[0].r), (4, 16, 8));
        assert_eq!(rows[0].wasted_analytic, 1.0);
        assert!(rows[0].delay_stx_sim.is_nan());
    }

    #[test]
    fn plot_sweep_csv_errors_name_file_and_line() {
        let err = |text: &str| {
            parse_sweep_csv(text, Path::new("d/s.csv"))
                .unwrap_err()
                .to_string()
        };
        let bad = ROW.replacen("0.100", "0.1x", 1);
        assert_eq!(
            err(&csv(&[ROW, bad.as_str()])),
            "d/s.csv:3: column `load`: `0.1x`: invalid float literal"
        );
        assert_eq!(
            err(&csv(&[ROW, "1,2,3"])),
            "d/s.csv:3: 3 fields, but the header has 44"
        );
        assert_eq!(
            err(&csv(&[&ROW.replacen("64,64,2", "64,64,-2", 1)])),
            "d/s.csv:2: column `r`: `-2`: invalid digit found in string"
        );
        assert_eq!(
            err("n,rtt\n1,2\n"),
            "d/s.csv:1: no column `r` in the header"
        );
        assert_eq!(err(&csv(&[])), "d/s.csv: no data rows after the header");
        assert!(err("\n\n").starts_with("d/s.csv: empty"));
        assert!(
            err("n,r\n1,\"2\n").starts_with("d/s.csv:"),
            "{}",
            err("n,r\n1,\"2\n")
        );
    }

    /// The recorded sweep in `docs/` loads: two traffics x five
    /// policy/scheme variants x 3 R x 9 loads, the paper's configuration
    /// first; and a sweep recorded before the traffic, policy and scheme
    /// columns still loads (they default to Bernoulli, OCF, SR).
    #[test]
    fn plot_sweep_csv_reads_the_recorded_sweeps() {
        let text = include_str!("../../docs/stx_sweep.csv");
        let rows = parse_sweep_csv(text, Path::new("stx_sweep.csv")).unwrap();
        assert_eq!(rows.len(), 2 * 5 * 3 * 9);
        assert!(rows.iter().all(|r| (r.n, r.rtt) == (64, 64)));
        let r0 = &rows[0];
        assert_eq!(
            (
                r0.r,
                r0.load,
                r0.traffic.as_str(),
                r0.policy.as_str(),
                r0.scheme.as_str()
            ),
            (1, 0.1, "bernoulli", "ocf", "sr")
        );
        let old = "n,rtt,r,load,offered,delay_stx_sim,delay_stx_analytic,delay_nostx_sim,\
            delay_nostx_analytic,throughput_stx,throughput_nostx,p_s_given_s_sim,\
            p_s_given_s_analytic,spurious_sim,spurious_analytic,wasted_sim,wasted_analytic\n\
            64,64,1,0.1,0.1,73,68,128,129,0.1,0.1,0.86,0.94,0.08,0.09,0.77,0.82\n";
        let rows = parse_sweep_csv(old, Path::new("old.csv")).unwrap();
        assert_eq!(
            (
                rows[0].traffic.as_str(),
                rows[0].policy.as_str(),
                rows[0].scheme.as_str()
            ),
            ("bernoulli", "ocf", "sr")
        );
        assert!(rows[0].p_ss_sim.is_nan());
    }

    /// A small model sweep written as CSV reads back: the header is
    /// the recorded sweeps' header, every row has its columns, and the values read back
    /// are the measured ones, rounded as written.
    #[test]
    fn plot_sweep_csv_round_trips() {
        let spec = SweepSpec {
            n: 4,
            rtt: 4,
            rs: vec![1, 2],
            loads: vec![0.3, 0.6],
            iters: 2,
            warmup: 100,
            slots: 400,
            seed: 3,
            traffics: vec![TrafficKind::Bernoulli],
            policies: vec![Policy::Ocf],
            schemes: vec![Scheme::Sr],
            cross: false,
            voq: 64,
            rtl: false,
            jobs: 1,
        };
        let points = sweep(&spec, &|_| {}).unwrap();
        let text = csv_text(&spec, &points).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(header()));
        assert!(lines.all(|l| l.split(',').count() == 44), "{text}");
        // Fixed decimals as before: load with 3, offered with 4; Unix lines.
        let first: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(
            first[..7],
            ["4", "4", "1", "bernoulli", "ocf", "sr", "0.300"]
        );
        assert_eq!(first[7].split('.').nth(1).map(str::len), Some(4), "{text}");
        assert!(!text.contains('\r'));
        let rows = parse_sweep_csv(&text, Path::new("t.csv")).unwrap();
        assert_eq!(rows.len(), 4);
        for row in &rows {
            let find = |r: Option<usize>| {
                points
                    .iter()
                    .find(|p| p.r == r && p.load == row.load)
                    .expect("point")
            };
            let (s, o) = (&find(Some(row.r)).stats, &find(None).stats);
            assert_eq!((row.n, row.rtt), (4, 4));
            let close = |got: f64, want: f64, d: i32| (got - want).abs() <= 0.5 * 10f64.powi(-d);
            assert!(close(row.offered, s.offered(), 4), "{row:?}");
            assert!(close(row.delay_stx_sim, s.mean_delay(), 3), "{row:?}");
            assert!(close(row.delay_nostx_sim, o.mean_delay(), 3), "{row:?}");
            assert!(close(row.throughput_nostx, o.throughput(), 4), "{row:?}");
            assert!(close(row.wasted_sim, s.p_w(), 4), "{row:?}");
            assert!(row.delay_stx_sim > 0.0, "{row:?}");
        }
        assert_eq!(
            rows.iter().map(|r| (r.r, r.load)).collect::<Vec<_>>(),
            [(1, 0.3), (1, 0.6), (2, 0.3), (2, 0.6)]
        );
    }

    #[test]
    fn plot_sweep_charts_pair_sim_with_analytic() {
        let rows: Vec<SweepRow> = [ROW, ROW.replacen("64,64,2", "64,64,8", 1).as_str()]
            .iter()
            .flat_map(|r| parse_sweep_csv(&csv(&[r]), Path::new("s.csv")).unwrap())
            .collect();
        let charts = sweep_charts(&rows);
        assert_eq!(charts.len(), 4);
        let labels: Vec<&str> = charts[0].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "R=2 sim",
                "R=2 analytic",
                "R=8 sim",
                "R=8 analytic",
                "no STX sim",
                "no STX analytic"
            ]
        );
        let (sim, analytic) = (&charts[0].series[0], &charts[0].series[1]);
        assert_eq!(sim.color, analytic.color);
        assert!(!sim.dashed && analytic.dashed && sim.marker.is_some());
        assert_eq!(sim.points, [(0.1, 64.449)]);
        assert_eq!(charts[1].series[1].points, [(0.1, 0.9979)]);
        // (c) shows the middle R of [2, 8].
        assert!(charts[2].title.ends_with("R=8"), "{}", charts[2].title);
        let png = sweep_png(&rows).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let svg = sweep_svg(&rows).unwrap();
        assert!(svg.contains("R=8 analytic") && svg.contains("no STX sim"));
    }
}

#[cfg(test)]
mod policy_tests {
    use super::*;

    /// A small sweep over every policy and scheme, two traffics: the jobs
    /// are the paper's configuration and the one-at-a-time variants (or
    /// every combination with `cross`), the CSV names them, and the policy
    /// charts draw one curve per variant and traffic.
    #[test]
    fn sweep_covers_policies_schemes_and_traffics() {
        let mut spec = SweepSpec {
            n: 4,
            rtt: 4,
            rs: vec![2],
            loads: vec![0.3],
            iters: 2,
            warmup: 50,
            slots: 300,
            seed: 5,
            traffics: vec![TrafficKind::Bernoulli, TrafficKind::OnOff(4.0)],
            policies: vec![Policy::Ocf, Policy::Random, Policy::Ycf],
            schemes: vec![Scheme::Sr, Scheme::Gbn, Scheme::Saw],
            cross: false,
            voq: 64,
            rtl: false,
            jobs: 2,
        };
        // Per traffic and load: no STX + OCF SR + 2 policies + 2 schemes.
        assert_eq!(spec.jobs().len(), 2 * 6);
        spec.cross = true;
        assert_eq!(spec.jobs().len(), 2 * 10);
        spec.cross = false;
        let points = sweep(&spec, &|_| {}).unwrap();
        let text = csv_text(&spec, &points).unwrap();
        let rows = parse_sweep_csv(&text, Path::new("p.csv")).unwrap();
        assert_eq!(rows.len(), 2 * 5);
        let names: Vec<(String, String, String)> = rows
            .iter()
            .map(|r| (r.traffic.clone(), r.policy.clone(), r.scheme.clone()))
            .collect();
        assert!(names.contains(&("onoff4".into(), "ycf".into(), "sr".into())));
        assert!(names.contains(&("bernoulli".into(), "ocf".into(), "saw".into())));
        assert!(!names.contains(&("bernoulli".into(), "random".into(), "gbn".into())));
        let charts = policy_charts(&rows);
        // Delay by policy and by scheme per traffic, then P_Ss per traffic.
        assert_eq!(charts.len(), 6);
        let labels: Vec<&str> = charts[0].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["ocf sr", "random sr", "ycf sr", "no STX"]);
        let labels: Vec<&str> = charts[1].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["ocf sr", "ocf gbn", "ocf saw", "no STX"]);
        assert_eq!(charts[4].series.len(), 5);
        // The paper's charts take only Bernoulli, OCF, SR.
        let paper = sweep_charts(&rows);
        assert_eq!(
            paper[0].series.len(),
            4,
            "R=2 sim/analytic, no STX sim/analytic"
        );
        assert_eq!(&policy_png(&rows).unwrap()[1..4], b"PNG");
    }
}
