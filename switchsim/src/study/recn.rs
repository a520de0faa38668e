//! The network study of seed 002 (`studies::recn_net`): the RECN network on
//! the verilated `recn_port` ([`rtl_recn_network`]), the sweep over input
//! loads of the three architectures (uniform traffic and the hot spot), and
//! its CSV and charts (`switchsim recn-net`).

use crate::plot::{render_png, render_svg, Chart, Marker, Series, PALETTE};
use anyhow::{anyhow, Context, Result};
use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::recn_port::RecnPort;
use model::Block;
use serde::Serialize;
use std::path::Path;
use studies::recn_net::arch::Recn;
use studies::recn_net::traffic::Pattern;
use studies::recn_net::{recn_network_with, recn_setup, run, Arch, Config, Network, Stats};

/// The RECN network with every switch port on the verilated block.
pub type RtlRecn = Network<Recn<Rtl<RecnPort>>>;

/// The RECN network of `cfg` with every port the verilated `recn_port`
/// (the variant of [`recn_setup`], random initial state from `seed`, held
/// in reset for the power-on cycles).
pub fn rtl_recn_network(cfg: Config, seed: u64) -> Result<RtlRecn> {
    let (p, c) = recn_setup(&cfg);
    RecnPort::check(&p, &c)?;
    let np = cfg.topology().switches() * cfg.topology().radix;
    let mut ports = (0..np)
        .map(|i| {
            let mut r = Rtl::<RecnPort>::new(&p, &c, seed + i as u64, None)?;
            r.reset(POWER_ON_RESET as usize)
                .map_err(|e| anyhow!("{e}"))?;
            Ok(r)
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter();
    Ok(recn_network_with(cfg, |_| {
        ports.next().expect("one verilated port per switch port")
    }))
}

/// Runs `cfg` on `arch`; RECN on the RTL if `rtl`.
pub fn run_point(cfg: &Config, arch: Arch, rtl: bool) -> Result<Stats> {
    if rtl && arch == Arch::Recn {
        let mut n = rtl_recn_network(cfg.clone(), cfg.seed)?;
        n.run(cfg.tail());
        Ok(n.stats().clone())
    } else {
        Ok(run(cfg, arch))
    }
}

/// One row of the study's CSV.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `uniform` or `hotspot`.
    pub pattern: String,
    /// The architecture (paper's name).
    pub arch: String,
    /// Input load (fraction of a link).
    pub load: f64,
    /// Best-effort load offered, cells/slot/end point.
    pub be_offered: f64,
    /// Best-effort throughput (Fig. 2).
    pub be_throughput: f64,
    /// Per best-effort level (Fig. 3).
    pub thr_sl4: f64,
    /// SL 5.
    pub thr_sl5: f64,
    /// SL 6.
    pub thr_sl6: f64,
    /// SL 7.
    pub thr_sl7: f64,
    /// QoS delivered over offered.
    pub qos_ratio: f64,
    /// Mean latency per QoS level, slots of 64 ns (Fig. 4).
    pub lat_mean_sl0: f64,
    /// SL 1.
    pub lat_mean_sl1: f64,
    /// SL 2.
    pub lat_mean_sl2: f64,
    /// SL 3.
    pub lat_mean_sl3: f64,
    /// Largest latency per QoS level, slots (Fig. 5).
    pub lat_max_sl0: u64,
    /// SL 1.
    pub lat_max_sl1: u64,
    /// SL 2.
    pub lat_max_sl2: u64,
    /// SL 3.
    pub lat_max_sl3: u64,
    /// Victims' best-effort throughput over their offered load.
    pub victim_ratio: f64,
    /// Wall time of the point, s.
    pub secs: f64,
}

fn r4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

impl Row {
    fn new(pattern: &str, arch: Arch, load: f64, s: &Stats, secs: f64) -> Row {
        Row {
            pattern: pattern.into(),
            arch: arch.name().into(),
            load,
            be_offered: r4(s.be_offered()),
            be_throughput: r4(s.be_throughput()),
            thr_sl4: r4(s.throughput(4)),
            thr_sl5: r4(s.throughput(5)),
            thr_sl6: r4(s.throughput(6)),
            thr_sl7: r4(s.throughput(7)),
            qos_ratio: r4(s.qos_ratio()),
            lat_mean_sl0: (s.mean_latency(0) * 10.0).round() / 10.0,
            lat_mean_sl1: (s.mean_latency(1) * 10.0).round() / 10.0,
            lat_mean_sl2: (s.mean_latency(2) * 10.0).round() / 10.0,
            lat_mean_sl3: (s.mean_latency(3) * 10.0).round() / 10.0,
            lat_max_sl0: s.lat_max[0],
            lat_max_sl1: s.lat_max[1],
            lat_max_sl2: s.lat_max[2],
            lat_max_sl3: s.lat_max[3],
            victim_ratio: r4(s.victim_ratio()),
            secs: (secs * 10.0).round() / 10.0,
        }
    }
}

/// What the study runs.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The network and traffic (its `load` and `pattern` are set per point).
    pub base: Config,
    /// Input loads.
    pub loads: Vec<f64>,
    /// Loads of the hot-spot case.
    pub hot_loads: Vec<f64>,
    /// Hot sources of the hot-spot case.
    pub hot: usize,
    /// RECN on the RTL.
    pub rtl: bool,
    /// Worker threads.
    pub jobs: usize,
}

/// Runs every point of `spec` (each architecture at each load, uniform then
/// hot spot); `progress` is called after each.
pub fn sweep(spec: &Spec, progress: &(dyn Fn(&Row) + Sync)) -> Result<Vec<Row>> {
    let mut work = Vec::new();
    for &l in &spec.loads {
        for a in Arch::ALL {
            work.push(("uniform", Pattern::Uniform, l, a));
        }
    }
    for &l in &spec.hot_loads {
        for a in Arch::ALL {
            work.push(("hotspot", Pattern::HotSpot { hot: spec.hot }, l, a));
        }
    }
    crate::sweep::par_map(&work, spec.jobs, |_, &(name, pattern, load, arch)| {
        let cfg = Config {
            load,
            pattern,
            ..spec.base.clone()
        };
        let t0 = std::time::Instant::now();
        let s = run_point(&cfg, arch, spec.rtl)?;
        let row = Row::new(name, arch, load, &s, t0.elapsed().as_secs_f64());
        progress(&row);
        Ok(row)
    })
}

/// The charts, by file suffix: `fig2` (global best-effort throughput),
/// `fig3` (each best-effort level), `fig4` and `fig5` (mean and largest
/// latency of each QoS level), `hotspot` (the victims' throughput).
pub fn charts(rows: &[Row]) -> Vec<(&'static str, usize, Vec<Chart>)> {
    type Y = fn(&Row) -> f64;
    let marker = [Marker::Circle, Marker::Square, Marker::Triangle];
    let series = |pattern: &str, y: Y| -> Vec<Series> {
        Arch::ALL
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let pts = rows
                    .iter()
                    .filter(|r| r.pattern == pattern && r.arch == a.name())
                    .map(|r| (r.load, y(r)))
                    .collect();
                Series::new(a.name(), pts, PALETTE[i]).with_marker(marker[i])
            })
            .collect()
    };
    let chart = |title: String, y_label: &str, s: Vec<Series>| Chart {
        title,
        x_label: "input load".into(),
        y_label: y_label.into(),
        series: s,
        x_range: Some((0.0, 1.0)),
        y_range: None,
    };
    let thr: [Y; 4] = [|r| r.thr_sl4, |r| r.thr_sl5, |r| r.thr_sl6, |r| r.thr_sl7];
    let mean: [Y; 4] = [
        |r| r.lat_mean_sl0,
        |r| r.lat_mean_sl1,
        |r| r.lat_mean_sl2,
        |r| r.lat_mean_sl3,
    ];
    let max: [Y; 4] = [
        |r| r.lat_max_sl0 as f64,
        |r| r.lat_max_sl1 as f64,
        |r| r.lat_max_sl2 as f64,
        |r| r.lat_max_sl3 as f64,
    ];
    vec![
        (
            "fig2",
            1,
            vec![chart(
                "Fig. 2: best-effort throughput (SL 4-7)".into(),
                "cells/slot/end point",
                series("uniform", |r| r.be_throughput),
            )],
        ),
        (
            "fig3",
            2,
            (0..4)
                .map(|i| {
                    chart(
                        format!("Fig. 3: SL {} throughput", i + 4),
                        "cells/slot/end point",
                        series("uniform", thr[i]),
                    )
                })
                .collect(),
        ),
        (
            "fig4",
            2,
            (0..4)
                .map(|i| {
                    chart(
                        format!("Fig. 4: SL {i} mean latency"),
                        "slots (64 ns)",
                        series("uniform", mean[i]),
                    )
                })
                .collect(),
        ),
        (
            "fig5",
            2,
            (0..4)
                .map(|i| {
                    chart(
                        format!("Fig. 5: SL {i} maximum latency"),
                        "slots (64 ns)",
                        series("uniform", max[i]),
                    )
                })
                .collect(),
        ),
        (
            "hotspot",
            2,
            vec![
                chart(
                    "Hot spot: victims' best-effort delivered/offered".into(),
                    "ratio",
                    series("hotspot", |r| r.victim_ratio),
                ),
                chart(
                    "Hot spot: best-effort throughput".into(),
                    "cells/slot/end point",
                    series("hotspot", |r| r.be_throughput),
                ),
            ],
        ),
    ]
}

/// Writes `stem.csv` and `stem_<fig>.svg` / `.png` for every chart.
pub fn write(rows: &[Row], stem: &Path) -> Result<()> {
    if let Some(d) = stem.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let csv = stem.with_extension("csv");
    std::fs::write(&csv, crate::sweep::csv_string(rows)?)
        .with_context(|| format!("writing {}", csv.display()))?;
    let name = stem
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| anyhow!("{}: not a file stem", stem.display()))?;
    for (fig, cols, ch) in charts(rows) {
        let f = stem.with_file_name(format!("{name}_{fig}"));
        std::fs::write(f.with_extension("svg"), render_svg(&ch, cols, 640, 420)?)?;
        std::fs::write(f.with_extension("png"), render_png(&ch, cols, 640, 420)?)?;
    }
    Ok(())
}

/// `switchsim recn-net`: the sweep of `spec`, written to `stem.csv` and the
/// charts beside it.
pub fn cmd_recn_net(spec: &Spec, stem: &Path) -> Result<u8> {
    if let Some(l) = spec
        .loads
        .iter()
        .chain(&spec.hot_loads)
        .find(|l| !(**l > 0.0 && **l <= 1.0))
    {
        return Err(anyhow!("--loads: {l} is not in (0, 1]"));
    }
    let topo = spec.base.topology();
    println!(
        "recn-net: {} end points ({} stages of {}-port switches), loads {:?}, hot spot {:?} ({} hot sources), {} + {} slots, RECN on the {}",
        topo.endpoints,
        spec.base.stages,
        topo.radix,
        spec.loads,
        spec.hot_loads,
        spec.hot,
        spec.base.warmup,
        spec.base.slots,
        if spec.rtl { "RTL" } else { "model" }
    );
    let t0 = std::time::Instant::now();
    let rows = sweep(spec, &|r| {
        println!(
            "  {:<8} {:<11} load {:.2}: BE {:.4} of {:.4}  QoS {:.3}  lat SL0-3 {:>6.1} {:>6.1} {:>6.1} {:>6.1}  victims {:.3}  ({:.1} s)",
            r.pattern,
            r.arch,
            r.load,
            r.be_throughput,
            r.be_offered,
            r.qos_ratio,
            r.lat_mean_sl0,
            r.lat_mean_sl1,
            r.lat_mean_sl2,
            r.lat_mean_sl3,
            r.victim_ratio,
            r.secs
        );
    })?;
    write(&rows, stem)?;
    println!(
        "wrote {}.csv and {}_{{fig2,fig3,fig4,fig5,hotspot}}.{{svg,png}} ({:.1} s)",
        stem.display(),
        stem.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_charts_of_a_small_sweep() {
        let spec = Spec {
            base: Config {
                warmup: 200,
                slots: 800,
                ..Config::small(0.5)
            },
            loads: vec![0.3, 0.6],
            hot_loads: vec![0.6],
            hot: 4,
            rtl: false,
            jobs: 2,
        };
        let rows = sweep(&spec, &|_| {}).unwrap();
        assert_eq!(rows.len(), 9);
        let text = crate::sweep::csv_string(&rows).unwrap();
        assert!(text.starts_with("pattern,arch,load,be_offered,be_throughput,"));
        assert_eq!(text.lines().count(), 10);
        let ch = charts(&rows);
        assert_eq!(ch.len(), 5);
        assert_eq!(ch[0].2[0].series.len(), 3);
        assert_eq!(ch[0].2[0].series[2].points.len(), 2);
        assert_eq!(ch[4].2[0].series[0].points.len(), 1);
        let svg = render_svg(&ch[1].2, 2, 640, 420).unwrap();
        assert!(svg.contains("RECN 2 VCs"));
    }
}
