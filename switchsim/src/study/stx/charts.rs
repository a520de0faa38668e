//! The sweep's charts: simulated beside analytic for the paper's
//! configuration ([`sweep_charts`]), the policies and delivery schemes side
//! by side ([`policy_charts`]), rendered through [`crate::plot`].

use super::SweepRow;
use crate::plot::{Chart, Marker, Rgb, Series, BLACK, GREY, PALETTE};
use anyhow::Result;

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
