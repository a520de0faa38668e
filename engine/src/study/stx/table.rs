//! The study as tables: every run ([`runs_text`]), every point with its
//! means and 95 % confidence intervals across the seeds ([`aggregate`],
//! [`csv_text`]), and the paired differences between variants run on the
//! same arrivals ([`paired`], [`paired_text`]); read back by header name
//! ([`parse_sweep_csv`], [`parse_paired_csv`]) for `--plot-only`.

use super::{policy_name, scheme_name, Point, SweepSpec, Variant};
use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;
use std::path::Path;
use studies::stx_system::{mean_ci95, Policy, Scheme, Stats};

/// A measure of one run: its column name and how it is read from the
/// statistics (`n` the ports, `sw` the sequence number width).
type Measure = (&'static str, fn(&Stats, usize, u32) -> f64);

/// Per delivered cell.
fn per(x: u64, s: &Stats) -> f64 {
    x as f64 / s.delivered.max(1) as f64
}

/// The measures of a run, in column order.
pub const MEASURES: &[Measure] = &[
    ("delay", |s, _, _| s.mean_delay()),
    ("p99", |s, _, _| s.p99()),
    ("std", |s, _, _| s.delay_std()),
    ("throughput", |s, _, _| s.throughput()),
    ("offered", |s, _, _| s.offered()),
    ("p_s", |s, _, _| s.p_s()),
    ("p_s_given_s", |s, _, _| s.p_s_given_s()),
    ("p_ss", |s, _, _| s.p_ss()),
    ("spurious", |s, _, _| s.q()),
    ("wasted", |s, _, _| s.p_w()),
    ("mu", |s, _, _| 1.0 - s.sigma()),
    ("dup_per_cell", |s, _, _| per(s.dup_dropped, s)),
    ("retx_per_cell", |s, _, _| per(s.retx, s)),
    ("discard_per_cell", |s, _, _| per(s.discarded, s)),
    ("ack_void_per_cell", |s, _, _| per(s.ack_void, s)),
    ("reseq", |s, _, _| s.mean_reseq()),
    ("jain_throughput", |s, _, _| s.jain_throughput()),
    ("jain_delay", |s, _, _| s.jain_delay()),
    ("srq_per_cell", |s, _, _| per(s.spec_sent, s)),
    ("ack_per_cell", |s, _, _| per(s.acks, s)),
    ("copies_per_cell", |s, _, _| per(s.copies, s)),
    // Sequence-number bits per delivered cell: SW on every copy on the
    // data channel, the 16-bit field of every SRQ and ACK on the control
    // channel.
    ("seqbits_per_cell", |s, _, sw| {
        (s.copies as f64 * sw as f64 + 16.0 * (s.spec_sent + s.acks) as f64)
            / s.delivered.max(1) as f64
    }),
    ("hot_throughput", |s, _, _| s.output_throughput(0)),
    ("other_delay", |s, _, _| s.other_mean()),
    ("other_p99", |s, _, _| s.other_p99()),
    ("credits_full", |s, _, _| s.crd_full_share()),
    ("lost", |s, _, _| s.lost as f64),
    ("arr_drop_share", |s, _, _| {
        s.arr_dropped as f64 / (s.cells + s.arr_dropped).max(1) as f64
    }),
    ("lost_to_wasted_per_cell", |s, _, _| {
        per(s.spec_lost_to_wasted, s)
    }),
    ("own_phantom_per_cell", |s, _, _| {
        per(s.spec_on_own_phantom, s)
    }),
];

/// The text columns of the point table, before the measures.
const KEYS: [&str; 11] = [
    "experiment",
    "traffic",
    "stall_share",
    "stall_mean",
    "n",
    "rtt",
    "r",
    "policy",
    "scheme",
    "fc",
    "load",
];

/// The analytic model's columns (`studies::stx_analytic`: Bernoulli, OCF,
/// SR, the paper's; `_reserving` our variant in which wasted grants
/// reserve a receiver too).
const ANALYTIC: [&str; 9] = [
    "delay_analytic",
    "p_s_given_s_analytic",
    "p_ss_analytic",
    "spurious_analytic",
    "wasted_analytic",
    "mu_analytic",
    "delay_nostx_analytic",
    "delay_analytic_reserving",
    "p_s_given_s_analytic_reserving",
];

/// Sequence number width of the study's adapters (`16 - log2 N`).
fn sw(n: usize) -> u32 {
    16 - n.trailing_zeros()
}

/// The runs of one point (experiment, variant, load), by seed.
fn runs(points: &[Point], exp: usize, var: usize, load: usize) -> Vec<&Point> {
    let mut v: Vec<&Point> = points
        .iter()
        .filter(|p| p.job.exp == exp && p.job.var == var && p.job.load == load)
        .collect();
    v.sort_by_key(|p| p.job.seed);
    v
}

fn num(x: f64, d: usize) -> String {
    format!("{x:.d$}")
}

/// The key columns of a point.
fn keys(spec: &SweepSpec, exp: usize, v: &Variant, load: f64) -> Vec<String> {
    let e = &spec.experiments[exp];
    let (sh, me) = e.stall.map_or((0.0, 0.0), |s| (s.share, s.mean));
    vec![
        e.name.clone(),
        e.traffic.name(),
        num(sh, 2),
        num(me, 0),
        spec.n.to_string(),
        spec.rtt.to_string(),
        v.r.unwrap_or(0).to_string(),
        policy_name(v.policy).into(),
        scheme_name(v.scheme).into(),
        if v.fc { "on" } else { "off" }.into(),
        num(load, 3),
    ]
}

/// The point table: per experiment, variant and load, the number of seeds,
/// whether every run completed, every measure's mean and 95 % interval
/// across the seeds (`<name>`, `<name>_ci`), the total of cells lost, the
/// largest queues seen, and the analytic model where it applies.
pub fn aggregate(spec: &SweepSpec, points: &[Point]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head: Vec<String> = KEYS.iter().map(|s| s.to_string()).collect();
    head.extend(["seeds", "complete"].map(String::from));
    for (m, _) in MEASURES {
        head.push(m.to_string());
        head.push(format!("{m}_ci"));
    }
    head.extend(["lost_total", "rsq_max", "rtx_max", "voq_max"].map(String::from));
    head.extend(ANALYTIC.map(String::from));
    let mut rows = Vec::new();
    for (ei, e) in spec.experiments.iter().enumerate() {
        for (vi, v) in e.variants.iter().enumerate() {
            for (li, &load) in e.loads.iter().enumerate() {
                let rs = runs(points, ei, vi, li);
                if rs.is_empty() {
                    continue;
                }
                let mut row = keys(spec, ei, v, load);
                row.push(rs.len().to_string());
                row.push(rs.iter().all(|p| p.complete).to_string());
                for (_, f) in MEASURES {
                    let x: Vec<f64> = rs.iter().map(|p| f(&p.stats, spec.n, sw(spec.n))).collect();
                    let (m, ci) = mean_ci95(&x);
                    row.push(num(m, 4));
                    row.push(num(ci, 4));
                }
                let st = |f: fn(&Stats) -> usize| rs.iter().map(|p| f(&p.stats)).max().unwrap_or(0);
                row.push(rs.iter().map(|p| p.stats.lost).sum::<u64>().to_string());
                row.push(st(|s| s.rsq_max).to_string());
                row.push(st(|s| s.rtx_max).to_string());
                row.push(st(|s| s.voq_max).to_string());
                let paper = e.traffic == super::TrafficKind::Bernoulli
                    && e.stall.is_none()
                    && v.fc
                    && v.policy == Policy::Ocf
                    && v.scheme == Scheme::Sr
                    && load < 1.0;
                match (paper, v.r) {
                    (true, Some(r)) => {
                        let rr = r.min(spec.n);
                        let a = studies::stx_analytic::solve(spec.n, rr, spec.rtt as f64, load);
                        let b = studies::stx_analytic::solve_reserving(
                            spec.n,
                            rr,
                            spec.rtt as f64,
                            load,
                        );
                        for x in [
                            a.delay_stx,
                            a.p_s_given_s,
                            a.p_ss,
                            a.q,
                            a.p_w,
                            a.mu,
                            a.delay_no_stx,
                            b.delay_stx,
                            b.p_s_given_s,
                        ] {
                            row.push(num(x, 4));
                        }
                    }
                    (true, None) => {
                        let a = studies::stx_analytic::solve(spec.n, 2, spec.rtt as f64, load);
                        for (k, _) in ANALYTIC.iter().enumerate() {
                            row.push(if k == 6 {
                                num(a.delay_no_stx, 4)
                            } else {
                                "NaN".into()
                            });
                        }
                    }
                    _ => row.extend(ANALYTIC.iter().map(|_| "NaN".to_string())),
                }
                rows.push(row);
            }
        }
    }
    (head, rows)
}

fn write_csv(head: &[String], rows: &[Vec<String>]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(head)?;
    for r in rows {
        w.write_record(r)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The point table as CSV ([`aggregate`]).
pub fn csv_text(spec: &SweepSpec, points: &[Point]) -> Result<String> {
    let (h, r) = aggregate(spec, points);
    write_csv(&h, &r)
}

/// Every run as CSV: the point's keys, the seed number and the run seed,
/// whether it completed, its wall time and every measure.
pub fn runs_text(spec: &SweepSpec, points: &[Point]) -> Result<String> {
    let mut head: Vec<String> = KEYS.iter().map(|s| s.to_string()).collect();
    head.extend(["seed", "run_seed", "complete", "secs"].map(String::from));
    head.extend(MEASURES.iter().map(|(m, _)| m.to_string()));
    let mut rows = Vec::new();
    let mut ps: Vec<&Point> = points.iter().collect();
    ps.sort_by_key(|p| (p.job.exp, p.job.var, p.job.load, p.job.seed));
    for p in ps {
        let e = &spec.experiments[p.job.exp];
        let mut row = keys(spec, p.job.exp, &e.variants[p.job.var], p.load);
        row.push(p.job.seed.to_string());
        row.push(spec.run_seed(p.job.load, p.job.seed).to_string());
        row.push(p.complete.to_string());
        row.push(num(p.secs, 2));
        for (_, f) in MEASURES {
            row.push(num(f(&p.stats, spec.n, sw(spec.n)), 4));
        }
        rows.push(row);
    }
    write_csv(&head, &rows)
}

/// The variant a variant is compared with on the same arrivals: another
/// policy or scheme with OCF SR (same receivers, same flow control); OCF
/// SR with STX off; no flow control with flow control.
pub fn reference(variants: &[Variant], v: &Variant) -> Option<usize> {
    let find = |w: Variant| variants.iter().position(|x| *x == w);
    if !v.fc {
        return find(Variant { fc: true, ..*v });
    }
    let r = v.r?;
    if (v.policy, v.scheme) != (Policy::Ocf, Scheme::Sr) {
        find(Variant::stx(r, Policy::Ocf, Scheme::Sr))
    } else {
        find(Variant::no_stx())
    }
}

/// The measures compared between variants at `load` of traffic with a
/// hot output or not.
fn compared(load: f64, hot: bool, fc_pair: bool) -> &'static [&'static str] {
    if fc_pair {
        &["lost", "delay", "throughput"]
    } else if load >= 1.0 {
        &["throughput", "jain_throughput"]
    } else if hot {
        &["other_delay", "other_p99", "hot_throughput"]
    } else {
        &["delay", "p99", "p_ss"]
    }
}

/// The paired differences: per experiment, load and variant with a
/// reference ([`reference`]), per compared measure, the mean difference
/// (variant - reference) over the seeds where both ran, its 95 % interval
/// (a t interval of the differences: the arrivals are the same, so it is
/// narrower than the difference of the two intervals), and both means.
pub fn paired(spec: &SweepSpec, points: &[Point]) -> (Vec<String>, Vec<Vec<String>>) {
    let head: Vec<String> = [
        "experiment",
        "traffic",
        "load",
        "a",
        "b",
        "measure",
        "seeds",
        "diff",
        "diff_ci",
        "a_mean",
        "b_mean",
    ]
    .map(String::from)
    .to_vec();
    let mut rows = Vec::new();
    for (ei, e) in spec.experiments.iter().enumerate() {
        for (li, &load) in e.loads.iter().enumerate() {
            for (vi, v) in e.variants.iter().enumerate() {
                let Some(bi) = reference(&e.variants, v) else {
                    continue;
                };
                let (ra, rb) = (runs(points, ei, vi, li), runs(points, ei, bi, li));
                for m in compared(load, e.traffic.hot().is_some(), !v.fc) {
                    let f = MEASURES.iter().find(|(n, _)| n == m).expect("measure").1;
                    let mut d = Vec::new();
                    let (mut xa, mut xb) = (Vec::new(), Vec::new());
                    for a in &ra {
                        if let Some(b) = rb.iter().find(|b| b.job.seed == a.job.seed) {
                            let (x, y) = (
                                f(&a.stats, spec.n, sw(spec.n)),
                                f(&b.stats, spec.n, sw(spec.n)),
                            );
                            d.push(x - y);
                            xa.push(x);
                            xb.push(y);
                        }
                    }
                    if d.is_empty() {
                        continue;
                    }
                    let (dm, dci) = mean_ci95(&d);
                    rows.push(vec![
                        e.name.clone(),
                        e.traffic.name(),
                        num(load, 3),
                        v.name(),
                        e.variants[bi].name(),
                        m.to_string(),
                        d.len().to_string(),
                        num(dm, 4),
                        num(dci, 4),
                        num(mean_ci95(&xa).0, 4),
                        num(mean_ci95(&xb).0, 4),
                    ]);
                }
            }
        }
    }
    (head, rows)
}

/// The paired differences as CSV ([`paired`]).
pub fn paired_text(spec: &SweepSpec, points: &[Point]) -> Result<String> {
    let (h, r) = paired(spec, points);
    write_csv(&h, &r)
}

/// A row of a table read back: its text columns and its numbers, by
/// column name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepRow {
    text: BTreeMap<String, String>,
    nums: BTreeMap<String, f64>,
}

/// A row of the paired table.
pub type PairRow = SweepRow;
/// A row of the point table.
pub type PointRow = SweepRow;

impl SweepRow {
    /// The number in column `name` (NaN when the table has no such column).
    pub fn f(&self, name: &str) -> f64 {
        self.nums.get(name).copied().unwrap_or(f64::NAN)
    }
    /// The text in column `name` (empty when the table has no such column).
    pub fn s(&self, name: &str) -> &str {
        self.text.get(name).map_or("", |s| s.as_str())
    }
    /// Receivers (0: no STX).
    pub fn r(&self) -> usize {
        self.f("r") as usize
    }
}

/// The point table's text columns.
const TEXT: [&str; 7] = [
    "experiment",
    "traffic",
    "policy",
    "scheme",
    "fc",
    "complete",
    "a",
];

/// Reads a table (`text`, read from `file`) by header name: the columns
/// `required` must be there; text columns are kept as text, every other
/// value must be a number (NaN allowed). Errors name the file and line.
fn parse_table(
    text: &str,
    file: &Path,
    required: &[&str],
    text_cols: &[&str],
) -> Result<Vec<SweepRow>> {
    let f = file.display();
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = rdr.headers().map_err(|e| csv_error(file, &e))?.clone();
    if header.iter().all(str::is_empty) {
        bail!("{f}: empty; expected a study CSV, its first line the header");
    }
    let header_line = header.position().map_or(1, |p| p.line());
    for r in required {
        if !header.iter().any(|h| h == *r) {
            bail!("{f}:{header_line}: no column `{r}` in the header");
        }
    }
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| csv_error(file, &e))?;
        let line = rec.position().map_or(0, |p| p.line());
        let mut row = SweepRow::default();
        for (h, v) in header.iter().zip(rec.iter()) {
            if text_cols.contains(&h) {
                row.text.insert(h.to_string(), v.to_string());
            } else {
                let x: f64 = v
                    .parse()
                    .map_err(|e| anyhow!("{f}:{line}: column `{h}`: `{v}`: {e}"))?;
                row.nums.insert(h.to_string(), x);
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        bail!("{f}: no data rows after the header");
    }
    Ok(rows)
}

/// Reads the point table ([`csv_text`]).
pub fn parse_sweep_csv(text: &str, file: &Path) -> Result<Vec<SweepRow>> {
    parse_table(
        text,
        file,
        &["experiment", "r", "policy", "scheme", "load", "delay"],
        &TEXT,
    )
}

/// Reads the paired table ([`paired_text`]).
pub fn parse_paired_csv(text: &str, file: &Path) -> Result<Vec<SweepRow>> {
    parse_table(
        text,
        file,
        &["experiment", "load", "a", "b", "measure", "diff", "diff_ci"],
        &["experiment", "traffic", "a", "b", "measure"],
    )
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
