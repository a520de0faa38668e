//! The STX system simulation (`studies::stx_system`) around the arbiter's
//! verilated RTL: [`RtlArbiter`] implements the system's
//! [`SlotArbiter`] by running one RTL clock cycle per slot, with the same
//! port packing as the golden model's adapter ([`ModelArbiter`]). A sweep
//! over loads ([`sweep`]) gives the system's curves, written as CSV
//! ([`csv_text`]) and plotted, simulated beside analytic ([`sweep_svg`],
//! [`sweep_png`]).
//!
//! [`ModelArbiter`]: studies::stx_system::ModelArbiter

use crate::lockstep::POWER_ON_RESET;
use crate::plot::{Chart, Marker, Rgb, Series, BLACK, GREY, PALETTE};
use crate::rtl::Rtl;
use anyhow::{anyhow, bail, Result};
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterParams};
use model::Block;
use serde::{Deserialize, Serialize};
use std::path::Path;
use studies::stx_system::{arbiter_inputs, arbiter_outcome, SlotArbiter, SlotOutcome};

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
    pub stats: studies::stx_system::Stats,
    /// Every measured cell left before the cap.
    pub complete: bool,
    /// Wall time, seconds.
    pub secs: f64,
}

/// Runs one point of `spec` (`r = None`: STX off) with the model or RTL
/// arbiter. The traffic seed depends on the load only, so the runs with and
/// without STX (and for every R) see the same arrivals.
pub fn run_point(spec: &SweepSpec, r: Option<usize>, load_idx: usize) -> Result<Point> {
    use studies::stx_system::traffic::{Bernoulli, OnOff, Traffic};
    use studies::stx_system::{arbiter_setup, Config, ModelArbiter, System};
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
}

/// One CSV row per (R, load): the STX run, the run without STX at the same
/// load beside it, and the analytic model (`studies::stx_analytic`); the last
/// two columns are our variant of it in which wasted grants reserve a
/// receiver too (`solve_reserving`), not the paper's.
pub fn csv_rows(spec: &SweepSpec, points: &[Point]) -> Vec<CsvRow> {
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

    const ROW: &str = "64,64,2,0.100,0.0999,30000,64.449,0.023,64.296,128.060,0.002,129.055,\
        0.0999,0.0999,0.9985,0.9998,0.9940,0.9979,0.9925,0.9948,0.0932,0.0931,0.8915,0.8690,\
        0.0863,0.356,3,4,0.0759,true,64.3,0.99";

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
            "d/s.csv:3: 3 fields, but the header has 32"
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

    /// The recorded sweeps in `docs/` still load, with and without the
    /// last two (`_reserving`) columns.
    #[test]
    fn plot_sweep_csv_reads_the_recorded_sweeps() {
        for (text, name) in [
            (include_str!("../../docs/stx_sweep.csv"), "stx_sweep.csv"),
            (
                include_str!("../../docs/stx_sweep_onoff16.csv"),
                "stx_sweep_onoff16.csv",
            ),
        ] {
            let rows = parse_sweep_csv(text, Path::new(name)).unwrap();
            assert_eq!(rows.len(), 27, "{name}: 3 R x 9 loads");
            assert!(rows.iter().all(|r| (r.n, r.rtt) == (64, 64)), "{name}");
            assert_eq!((rows[0].r, rows[0].load), (1, 0.1), "{name}");
        }
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
            traffic: TrafficKind::Bernoulli,
            rtl: false,
            jobs: 1,
        };
        let points = sweep(&spec, &|_| {}).unwrap();
        let text = csv_text(&spec, &points).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(header()));
        assert!(lines.all(|l| l.split(',').count() == 32), "{text}");
        // Fixed decimals as before: load with 3, offered with 4; Unix lines.
        let first: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(first[..4], ["4", "4", "1", "0.300"]);
        assert_eq!(first[4].split('.').nth(1).map(str::len), Some(4), "{text}");
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
