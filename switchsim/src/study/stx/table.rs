//! The sweep as a table: one CSV row per point ([`csv_rows`], [`csv_text`])
//! with `serde` and `csv`, and read back ([`parse_sweep_csv`]) for
//! `switchsim sweep --plot-only`.

use super::{policy_name, scheme_name, Point, SweepSpec};
use anyhow::{anyhow, bail, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use studies::stx_system::{Policy, Scheme};

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
    crate::sweep::csv_string(csv_rows(spec, points))
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
