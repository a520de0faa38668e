//! The study's charts, from the point table and the paired table
//! ([`super::SweepRow`]): the paper's comparison, simulated (with 95 %
//! intervals across seeds) beside analytic ([`sweep_charts`]); the
//! policies and delivery schemes, with the paired differences
//! ([`policy_charts`]); saturation and hot spots ([`load_charts`]).
//! Rendered through [`crate::plot`].

use super::SweepRow;
use crate::plot::{Chart, Marker, Rgb, Series, BLACK, GREY, PALETTE};
use anyhow::Result;

fn colour(i: usize) -> Rgb {
    PALETTE[i % (PALETTE.len() - 1)]
}

fn marker(i: usize) -> Marker {
    [Marker::Circle, Marker::Square, Marker::Triangle][i % 3]
}

/// The rows of experiment `exp` with flow control, receivers `r` (0: no
/// STX), `policy` and `scheme` (ignored without STX), by load.
fn curve<'a>(
    rows: &'a [SweepRow],
    exp: &str,
    r: usize,
    policy: &str,
    scheme: &str,
) -> Vec<&'a SweepRow> {
    let mut v: Vec<&SweepRow> = rows
        .iter()
        .filter(|x| {
            x.s("experiment") == exp
                && x.s("fc") != "off"
                && x.r() == r
                && (r == 0 || (x.s("policy") == policy && x.s("scheme") == scheme))
        })
        .collect();
    v.sort_by(|a, b| a.f("load").total_cmp(&b.f("load")));
    v
}

/// A series of column `y` against load, with its `_ci` as error bars.
fn with_ci(label: &str, rows: &[&SweepRow], y: &str, c: Rgb, m: Marker) -> Series {
    Series::new(
        label,
        rows.iter().map(|r| (r.f("load"), r.f(y))).collect(),
        c,
    )
    .with_marker(m)
    .with_errors(rows.iter().map(|r| r.f(&format!("{y}_ci"))).collect())
}

/// A series of column `y` against load, dashed (the analytic model).
fn dashed(label: &str, rows: &[&SweepRow], y: &str, c: Rgb) -> Series {
    Series::new(
        label,
        rows.iter().map(|r| (r.f("load"), r.f(y))).collect(),
        c,
    )
    .dashed()
}

const LOAD: &str = "load (cells/slot/input)";

/// The paper's configuration (Bernoulli, OCF, SR) in four panels: (a) mean
/// delay for each R and without STX, simulated with its 95 % interval
/// across seeds beside the analytic (48); (b) `P_{s|S}`; (c) the spurious
/// and wasted shares of grants for the middle R; (d) the NSTX service rate
/// `μ = 1 - σ` of Fig. 6(b).
pub fn sweep_charts(rows: &[SweepRow]) -> Vec<Chart> {
    let exp = "bernoulli";
    let mut rs: Vec<usize> = rows
        .iter()
        .filter(|x| x.s("experiment") == exp && x.r() > 0 && x.f("load") < 1.0)
        .map(SweepRow::r)
        .collect();
    rs.sort();
    rs.dedup();
    let of = |r| {
        curve(rows, exp, r, "ocf", "sr")
            .into_iter()
            .filter(|x| x.f("load") < 1.0)
            .collect::<Vec<_>>()
    };
    let (mut delay, mut success, mut mu) = (Vec::new(), Vec::new(), Vec::new());
    for (i, &r) in rs.iter().enumerate() {
        let (c, m) = (colour(i), marker(i));
        let v = of(r);
        let l = format!("R={r}");
        delay.push(with_ci(&format!("{l} sim"), &v, "delay", c, m));
        delay.push(dashed(&format!("{l} analytic"), &v, "delay_analytic", c));
        success.push(with_ci(&format!("{l} sim"), &v, "p_s_given_s", c, m));
        success.push(dashed(
            &format!("{l} analytic"),
            &v,
            "p_s_given_s_analytic",
            c,
        ));
        mu.push(with_ci(&format!("{l} sim"), &v, "mu", c, m));
        mu.push(dashed(&format!("{l} analytic"), &v, "mu_analytic", c));
    }
    let none = of(0);
    delay.push(with_ci("no STX sim", &none, "delay", GREY, Marker::Cross));
    delay.push(dashed(
        "no STX analytic",
        &none,
        "delay_nostx_analytic",
        GREY,
    ));
    mu.push(
        Series::new(
            "λ",
            none.iter().map(|r| (r.f("load"), r.f("load"))).collect(),
            BLACK,
        )
        .dashed(),
    );
    let mid = rs.get(rs.len() / 2).copied().unwrap_or(0);
    let v = of(mid);
    let grants = vec![
        with_ci("spurious Q sim", &v, "spurious", colour(0), Marker::Circle),
        dashed("spurious Q analytic", &v, "spurious_analytic", colour(0)),
        with_ci("wasted P_w sim", &v, "wasted", colour(1), Marker::Square),
        dashed("wasted P_w analytic", &v, "wasted_analytic", colour(1)),
    ];
    let unit = Some((0.0, 1.0));
    vec![
        Chart {
            title: "(a) mean delay, OCF SR (95 % CI, 8 seeds)".into(),
            x_label: LOAD.into(),
            y_label: "delay (slots)".into(),
            series: delay,
            ..Chart::default()
        },
        Chart {
            title: "(b) speculative cells that succeed, P_{s|S}".into(),
            x_label: LOAD.into(),
            y_label: "probability".into(),
            series: success,
            y_range: unit,
            ..Chart::default()
        },
        Chart {
            title: format!("(c) spurious and wasted grants, R={mid}"),
            x_label: LOAD.into(),
            y_label: "share of grants".into(),
            series: grants,
            y_range: unit,
            ..Chart::default()
        },
        Chart {
            title: "(d) NSTX service rate μ = 1 - σ (Fig. 6b)".into(),
            x_label: LOAD.into(),
            y_label: "slots free for STX, per slot".into(),
            series: mu,
            y_range: unit,
            ..Chart::default()
        },
    ]
}

/// The paired difference of `measure` of variant `a` minus `b` in
/// experiment `exp`, against load, with its interval.
fn diff(
    pairs: &[SweepRow],
    exp: &str,
    a: &str,
    b: &str,
    measure: &str,
    c: Rgb,
    m: Marker,
) -> Series {
    let mut v: Vec<&SweepRow> = pairs
        .iter()
        .filter(|p| {
            p.s("experiment") == exp && p.s("a") == a && p.s("b") == b && p.s("measure") == measure
        })
        .collect();
    v.sort_by(|x, y| x.f("load").total_cmp(&y.f("load")));
    Series::new(
        format!("{a} - {b}"),
        v.iter().map(|p| (p.f("load"), p.f("diff"))).collect(),
        c,
    )
    .with_marker(m)
    .with_errors(v.iter().map(|p| p.f("diff_ci")).collect())
}

/// Mean delay (or `y`) of the three policies with SR and no STX, or of the
/// three schemes with OCF, at R = `r` in experiment `exp`.
fn variants(rows: &[SweepRow], exp: &str, r: usize, y: &str, schemes: bool) -> Vec<Series> {
    let list: [(&str, &str); 3] = if schemes {
        [("ocf", "sr"), ("ocf", "gbn"), ("ocf", "saw")]
    } else {
        [("ocf", "sr"), ("random", "sr"), ("ycf", "sr")]
    };
    let mut v: Vec<Series> = list
        .iter()
        .enumerate()
        .map(|(i, (p, s))| {
            with_ci(
                &format!("{p} {s}"),
                &curve(rows, exp, r, p, s),
                y,
                colour(i),
                marker(i),
            )
        })
        .collect();
    v.push(with_ci(
        "no STX",
        &curve(rows, exp, 0, "", ""),
        y,
        GREY,
        Marker::Cross,
    ));
    v.retain(|s| !s.points.is_empty());
    v
}

/// The STX policies and delivery schemes at R = 2: (a) mean delay and (b)
/// 99th percentile by policy, Bernoulli; (c) the paired differences YCF -
/// OCF and random - OCF of the mean delay (same arrivals, 95 % interval of
/// the differences), R = 2 and 8; (d) mean delay by scheme, Bernoulli;
/// (e), (f) the same as (a), (d) under on/off bursts of mean 16.
pub fn policy_charts(rows: &[SweepRow], pairs: &[SweepRow]) -> Vec<Chart> {
    let chart = |title: &str, y: &str, series| Chart {
        title: title.into(),
        x_label: LOAD.into(),
        y_label: y.into(),
        series,
        ..Chart::default()
    };
    let mut d = Vec::new();
    for (k, r) in [2usize, 8].iter().enumerate() {
        for (i, p) in ["ycf", "random"].iter().enumerate() {
            let mut s = diff(
                pairs,
                "bernoulli",
                &format!("R{r} {p} sr"),
                &format!("R{r} ocf sr"),
                "delay",
                colour(2 * k + i),
                marker(i),
            );
            if k == 1 {
                s = s.dashed();
            }
            if !s.points.is_empty() {
                d.push(s);
            }
        }
    }
    let onoff = rows
        .iter()
        .find(|x| x.s("experiment").starts_with("onoff"))
        .map_or("onoff16".to_string(), |x| x.s("experiment").to_string());
    vec![
        chart(
            "(a) mean delay by policy, R=2, Bernoulli",
            "delay (slots)",
            variants(rows, "bernoulli", 2, "delay", false),
        ),
        chart(
            "(b) 99th percentile of the delay, R=2",
            "delay (slots)",
            variants(rows, "bernoulli", 2, "p99", false),
        ),
        chart(
            "(c) paired difference of the mean delay",
            "delay difference (slots)",
            d,
        ),
        chart(
            "(d) mean delay by scheme, R=2, Bernoulli",
            "delay (slots)",
            variants(rows, "bernoulli", 2, "delay", true),
        ),
        chart(
            &format!("(e) mean delay by policy, R=2, {onoff}"),
            "delay (slots)",
            variants(rows, &onoff, 2, "delay", false),
        ),
        chart(
            &format!("(f) mean delay by scheme, R=2, {onoff}"),
            "delay (slots)",
            variants(rows, &onoff, 2, "delay", true),
        ),
    ]
}

/// Beyond the paper: (a), (b) the delay of the cells not for the hot
/// output under hot-spot traffic (10 % and 30 % of the cells to one
/// output), by policy; (c) the hot output's throughput; (d) saturation
/// throughput (every input backlogged) against R, by policy and scheme.
pub fn load_charts(rows: &[SweepRow]) -> Vec<Chart> {
    let hot = |exp: &str| variants(rows, exp, 2, "other_delay", false);
    let mut thr = Vec::new();
    for (k, exp) in ["hotspot0.1", "hotspot0.3"].iter().enumerate() {
        for mut s in variants(rows, exp, 2, "hot_throughput", false) {
            s.label = format!("{} h={}", s.label, &exp[7..]);
            if k == 1 {
                s = s.dashed();
            }
            thr.push(s);
        }
    }
    // Saturation: throughput against R.
    let sat: Vec<&SweepRow> = rows
        .iter()
        .filter(|x| x.s("experiment") == "saturation" && x.s("fc") != "off")
        .collect();
    let by_r = |p: &str, s: &str| {
        let mut v: Vec<&SweepRow> = sat
            .iter()
            .copied()
            .filter(|x| x.r() > 0 && x.s("policy") == p && x.s("scheme") == s)
            .collect();
        v.sort_by_key(|x| x.r());
        v
    };
    let mut satur = Vec::new();
    for (i, (p, s)) in [
        ("ocf", "sr"),
        ("random", "sr"),
        ("ycf", "sr"),
        ("ocf", "gbn"),
        ("ocf", "saw"),
    ]
    .iter()
    .enumerate()
    {
        let v = by_r(p, s);
        if v.is_empty() {
            continue;
        }
        satur.push(
            Series::new(
                format!("{p} {s}"),
                v.iter()
                    .map(|x| (x.r() as f64, x.f("throughput")))
                    .collect(),
                colour(i),
            )
            .with_marker(marker(i))
            .with_errors(v.iter().map(|x| x.f("throughput_ci")).collect()),
        );
    }
    if let Some(none) = sat.iter().find(|x| x.r() == 0) {
        let rs: Vec<f64> = sat
            .iter()
            .filter(|x| x.r() > 0)
            .map(|x| x.r() as f64)
            .collect();
        let (lo, hi) = rs
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &r| (a.min(r), b.max(r)));
        if lo <= hi {
            satur.push(
                Series::new(
                    "no STX",
                    vec![(lo, none.f("throughput")), (hi, none.f("throughput"))],
                    GREY,
                )
                .dashed(),
            );
        }
    }
    let chart = |title: &str, x: &str, y: &str, series| Chart {
        title: title.into(),
        x_label: x.into(),
        y_label: y.into(),
        series,
        ..Chart::default()
    };
    vec![
        chart(
            "(a) other cells' delay, 10 % hot spot, R=2",
            LOAD,
            "delay (slots)",
            hot("hotspot0.1"),
        ),
        chart(
            "(b) other cells' delay, 30 % hot spot, R=2",
            LOAD,
            "delay (slots)",
            hot("hotspot0.3"),
        ),
        chart("(c) hot output throughput, R=2", LOAD, "cells/slot", thr),
        chart(
            "(d) saturation throughput (backlogged inputs)",
            "receivers R",
            "cells/slot/output",
            satur,
        ),
    ]
}

/// [`sweep_charts`] as SVG, two columns.
pub fn sweep_svg(rows: &[SweepRow]) -> Result<String> {
    crate::plot::render_svg(&sweep_charts(rows), 2, 640, 440)
}
/// [`sweep_charts`] as PNG.
pub fn sweep_png(rows: &[SweepRow]) -> Result<Vec<u8>> {
    crate::plot::render_png(&sweep_charts(rows), 2, 640, 440)
}
/// [`policy_charts`] as SVG, two columns.
pub fn policy_svg(rows: &[SweepRow], pairs: &[SweepRow]) -> Result<String> {
    crate::plot::render_svg(&policy_charts(rows, pairs), 2, 640, 440)
}
/// [`policy_charts`] as PNG.
pub fn policy_png(rows: &[SweepRow], pairs: &[SweepRow]) -> Result<Vec<u8>> {
    crate::plot::render_png(&policy_charts(rows, pairs), 2, 640, 440)
}
/// [`load_charts`] as SVG, two columns.
pub fn load_svg(rows: &[SweepRow]) -> Result<String> {
    crate::plot::render_svg(&load_charts(rows), 2, 640, 440)
}
/// [`load_charts`] as PNG.
pub fn load_png(rows: &[SweepRow]) -> Result<Vec<u8>> {
    crate::plot::render_png(&load_charts(rows), 2, 640, 440)
}
