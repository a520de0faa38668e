//! The STX system simulation (`model::stx_system`) around the arbiter's
//! verilated RTL: [`RtlArbiter`] implements the system's
//! [`SlotArbiter`] by running one RTL clock cycle per slot, with the same
//! port packing as the golden model's adapter ([`ModelArbiter`]). A sweep
//! over loads ([`sweep`]) gives the system's curves, written as CSV
//! ([`csv_rows`]) and plotted, simulated beside analytic ([`sweep_svg`],
//! [`sweep_png`]).
//!
//! [`ModelArbiter`]: model::stx_system::ModelArbiter

use crate::lockstep::POWER_ON_RESET;
use crate::plot::{Chart, Marker, Rgb, Series, BLACK, GREY, PALETTE};
use crate::rtl::Rtl;
use anyhow::{anyhow, bail, Result};
use model::arbiter::{Arbiter, ArbiterConfig, ArbiterInputs, ArbiterParams};
use model::stx_system::{arbiter_inputs, arbiter_outcome, SlotArbiter, SlotOutcome};
use model::Block;
use std::path::Path;

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

/// The columns of a sweep CSV row ([`CSV_HEADER`]) that [`sweep_charts`]
/// plots.
#[derive(Clone, Debug, PartialEq)]
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
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (header_line, header) = lines.next().ok_or_else(|| {
        anyhow!(
            "{}: empty; expected the header `{CSV_HEADER}`",
            file.display()
        )
    })?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut rows = Vec::new();
    for (line, data) in lines {
        let at = format!("{}:{line}", file.display());
        let fields: Vec<&str> = data.split(',').map(str::trim).collect();
        if fields.len() != names.len() {
            bail!(
                "{at}: {} fields, but the header (line {header_line}) has {}",
                fields.len(),
                names.len()
            );
        }
        let rec = Record {
            names: &names,
            fields: &fields,
            at: &at,
            header: header_line,
            file,
        };
        rows.push(SweepRow {
            n: rec.get("n")?,
            rtt: rec.get("rtt")?,
            r: rec.get("r")?,
            load: rec.get("load")?,
            offered: rec.get("offered")?,
            delay_stx_sim: rec.get("delay_stx_sim")?,
            delay_stx_analytic: rec.get("delay_stx_analytic")?,
            delay_nostx_sim: rec.get("delay_nostx_sim")?,
            delay_nostx_analytic: rec.get("delay_nostx_analytic")?,
            throughput_stx: rec.get("throughput_stx")?,
            throughput_nostx: rec.get("throughput_nostx")?,
            p_s_given_s_sim: rec.get("p_s_given_s_sim")?,
            p_s_given_s_analytic: rec.get("p_s_given_s_analytic")?,
            spurious_sim: rec.get("spurious_sim")?,
            spurious_analytic: rec.get("spurious_analytic")?,
            wasted_sim: rec.get("wasted_sim")?,
            wasted_analytic: rec.get("wasted_analytic")?,
        });
    }
    if rows.is_empty() {
        bail!("{}: no data rows after the header", file.display());
    }
    Ok(rows)
}

/// One data line of a CSV, its fields looked up by header name.
struct Record<'a> {
    names: &'a [&'a str],
    fields: &'a [&'a str],
    /// `file:line`, for errors.
    at: &'a str,
    header: usize,
    file: &'a Path,
}

impl Record<'_> {
    fn get<T: std::str::FromStr>(&self, name: &str) -> Result<T>
    where
        T::Err: std::fmt::Display,
    {
        let i = self.names.iter().position(|n| *n == name).ok_or_else(|| {
            anyhow!(
                "{}:{}: no column `{name}` in the header",
                self.file.display(),
                self.header
            )
        })?;
        let v = self.fields[i];
        v.parse()
            .map_err(|e| anyhow!("{}: column `{name}`: `{v}`: {e}", self.at))
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

    fn csv(rows: &[&str]) -> String {
        let mut text = format!("{CSV_HEADER}\n");
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
            "d/s.csv:3: 3 fields, but the header (line 1) has 32"
        );
        assert!(err(&csv(&[&ROW.replacen("64,64,2", "64,64,-2", 1)]))
            .starts_with("d/s.csv:2: column `r`"));
        assert_eq!(
            err("n,rtt\n1,2\n"),
            "d/s.csv:1: no column `r` in the header"
        );
        assert_eq!(err(&csv(&[])), "d/s.csv: no data rows after the header");
        assert!(err("\n\n").starts_with("d/s.csv: empty"));
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
