//! The BCN closed loop (`studies::bcn_loop`) on the verilated RTL, its CSV
//! and charts, and the sweep over Gd, W and the control-loop delay
//! (`switchsim bcn-loop`).

use crate::plot::{render_png, render_svg, Chart, Marker, Series, BLACK, PALETTE};
use anyhow::{anyhow, Result};
use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::bcn_cp::BcnCp;
use model::bcn_rp::BcnRp;
use model::Block;
use studies::bcn_loop::{metrics, BcnLoop, LoopConfig, Metrics, ModelLoop, Sample};

/// The system on the RTL of both blocks.
pub type RtlLoop = BcnLoop<Rtl<BcnCp>, Rtl<BcnRp>>;

fn rtl_block<B: Block>(p: &B::Params, c: &B::Config, seed: u64) -> Result<Rtl<B>> {
    B::check(p, c)?;
    let mut r = Rtl::<B>::new(p, c, seed, None)?;
    r.reset(POWER_ON_RESET as usize)
        .map_err(|e| anyhow!("{e}"))?;
    Ok(r)
}

/// The system with every block verilated (random initial state from `seed`,
/// held in reset for the power-on cycles).
pub fn rtl_loop(cfg: &LoopConfig, seed: u64) -> Result<RtlLoop> {
    let cp = rtl_block::<BcnCp>(&cfg.cp_params(), &cfg.cp_config(), seed)?;
    let rps = (0..cfg.sources)
        .map(|s| rtl_block::<BcnRp>(&cfg.rp_params(), &cfg.rp_config(), seed + 1 + s as u64))
        .collect::<Result<Vec<_>>>()?;
    Ok(BcnLoop::new(cfg.clone(), cp, rps))
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Run {
    /// The samples.
    pub samples: Vec<Sample>,
    /// Its figures.
    pub metrics: Metrics,
}

/// Samples the depth is averaged over for the convergence time.
pub const SMOOTH: usize = 20;

/// Convergence band around Qeq: a quarter of Qeq.
pub fn band(cfg: &LoopConfig) -> f64 {
    cfg.qeq as f64 / 4.0
}

/// Fairness window: the last quarter of the samples.
pub fn window(cycles: u64, cfg: &LoopConfig) -> usize {
    ((cycles / cfg.sample_every) / 4).max(1) as usize
}

/// Runs the loop for `cycles` on the models, or on the RTL.
pub fn run(cfg: &LoopConfig, cycles: u64, rtl: bool) -> Result<Run> {
    let samples = if rtl {
        let mut l = rtl_loop(cfg, 1)?;
        l.run(cycles).map_err(|e| anyhow!(e))?;
        l.samples
    } else {
        let mut l = ModelLoop::models(cfg);
        l.run(cycles).map_err(|e| anyhow!(e))?;
        l.samples
    };
    let metrics = metrics(&samples, cfg.qeq, band(cfg), window(cycles, cfg), SMOOTH);
    Ok(Run { samples, metrics })
}

/// The trace as CSV: cycle, depth, messages and drops in the interval, then
/// each source's rate and throughput (bytes per cycle).
pub fn trace_csv(cfg: &LoopConfig, samples: &[Sample]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec![
        "cycle".to_string(),
        "depth_bytes".into(),
        "msgs".into(),
        "drops".into(),
    ];
    head.extend((0..cfg.sources).map(|s| format!("rate{s}")));
    head.extend((0..cfg.sources).map(|s| format!("thr{s}")));
    w.write_record(&head)?;
    for x in samples {
        let mut r = vec![
            x.t.to_string(),
            x.depth.to_string(),
            x.msgs.to_string(),
            x.drops.to_string(),
        ];
        r.extend(x.rate.iter().map(|v| format!("{v:.5}")));
        r.extend(
            x.sent
                .iter()
                .map(|b| format!("{:.5}", *b as f64 / cfg.sample_every as f64)),
        );
        w.write_record(&r)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// Three panels against time: the queue depth (with Qeq), each source's
/// limiter rate, each source's throughput (moving mean).
pub fn trace_charts(cfg: &LoopConfig, samples: &[Sample]) -> Vec<Chart> {
    let kc = |t: u64| t as f64 / 1000.0;
    let depth = samples
        .iter()
        .map(|s| (kc(s.t), s.depth as f64 / 1000.0))
        .collect();
    let end = samples.last().map_or(0.0, |s| kc(s.t));
    let qeq = cfg.qeq as f64 / 1000.0;
    let rates = (0..cfg.sources)
        .map(|k| {
            Series::new(
                format!("source {k}"),
                samples.iter().map(|s| (kc(s.t), s.rate[k])).collect(),
                PALETTE[k % PALETTE.len()],
            )
        })
        .chain([Series::new(
            "fair share",
            vec![
                (0.0, cfg.drain / cfg.sources as f64),
                (end, cfg.drain / cfg.sources as f64),
            ],
            BLACK,
        )
        .dashed()])
        .collect();
    let avg = 20usize;
    let thr = (0..cfg.sources)
        .map(|k| {
            Series::new(
                format!("source {k}"),
                samples
                    .windows(avg)
                    .map(|w| {
                        let b: u64 = w.iter().map(|s| s.sent[k]).sum();
                        (
                            kc(w[avg - 1].t),
                            b as f64 / (avg as u64 * cfg.sample_every) as f64,
                        )
                    })
                    .collect(),
                PALETTE[k % PALETTE.len()],
            )
        })
        .collect();
    vec![
        Chart {
            title: format!(
                "CP queue, S={}, drain {} of {} B/cycle, loop delay {}",
                cfg.sources, cfg.drain, cfg.line_rate, cfg.ctrl_delay
            ),
            x_label: "time (kcycles)".into(),
            y_label: "depth (kB)".into(),
            series: vec![
                Series::new("depth", depth, PALETTE[0]),
                Series::new("Qeq", vec![(0.0, qeq), (end, qeq)], BLACK).dashed(),
            ],
            x_range: None,
            y_range: None,
        },
        Chart {
            title: format!(
                "Source rates (limiter), Gd=1/{}, W={}",
                1u32 << cfg.gd,
                cfg.w as f64 / 4.0
            ),
            x_label: "time (kcycles)".into(),
            y_label: "rate (B/cycle)".into(),
            series: rates,
            x_range: None,
            y_range: Some((0.0, cfg.line_rate * 1.25)),
        },
        Chart {
            title: format!("Source throughput, mean over {avg} samples"),
            x_label: "time (kcycles)".into(),
            y_label: "throughput (B/cycle)".into(),
            series: thr,
            x_range: None,
            y_range: None,
        },
    ]
}

/// One sweep point.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SweepRow {
    /// Which parameter is varied: `gd`, `w` or `delay`.
    pub vary: &'static str,
    /// Gd = 2^-gd.
    pub gd: u8,
    /// W.
    pub w: f64,
    /// Control-loop delay, cycles.
    pub delay: u64,
    /// Convergence time, cycles (empty: not settled).
    pub convergence: Option<u64>,
    /// Std-dev of the depth after settling, bytes.
    pub std_dev: f64,
    /// Peak-to-peak of the depth after settling, bytes.
    pub peak_to_peak: f64,
    /// Mean depth after settling, bytes.
    pub mean_depth: f64,
    /// Largest depth, bytes.
    pub max_depth: u32,
    /// Jain's index over the last quarter.
    pub jain: f64,
    /// Arrivals dropped.
    pub drops: u64,
}

/// The sweep's points: each parameter varied around `base`, the others held.
pub fn sweep_points(base: &LoopConfig) -> Vec<(&'static str, LoopConfig)> {
    let mut v = vec![];
    for gd in [5u8, 6, 7, 8, 9] {
        v.push(("gd", LoopConfig { gd, ..base.clone() }));
    }
    for w in [0u8, 2, 4, 8, 16] {
        v.push(("w", LoopConfig { w, ..base.clone() }));
    }
    for d in [250u64, 500, 1000, 2000, 4000] {
        v.push((
            "delay",
            LoopConfig {
                ctrl_delay: d,
                ..base.clone()
            },
        ));
    }
    v
}

/// Runs the sweep (`jobs` threads).
pub fn sweep(base: &LoopConfig, cycles: u64, rtl: bool, jobs: usize) -> Result<Vec<SweepRow>> {
    let pts = sweep_points(base);
    crate::sweep::par_map(&pts, jobs, |_, (vary, c)| {
        let m = run(c, cycles, rtl)?.metrics;
        Ok(SweepRow {
            vary,
            gd: c.gd,
            w: c.w as f64 / 4.0,
            delay: c.ctrl_delay,
            convergence: m.convergence,
            std_dev: m.std_dev,
            peak_to_peak: m.peak_to_peak,
            mean_depth: m.mean_depth,
            max_depth: m.max_depth,
            jain: m.jain,
            drops: m.drops,
        })
    })
}

/// Six panels: oscillation amplitude (std-dev and peak-to-peak of the
/// depth, kB; top row) and convergence time (kcycles; bottom row, missing
/// points: not settled) against Gd, W and the control-loop delay.
pub fn sweep_charts(rows: &[SweepRow]) -> Vec<Chart> {
    type X = fn(&SweepRow) -> f64;
    let axes: [(&str, &str, X); 3] = [
        ("gd", "log2(1/Gd)", |r| r.gd as f64),
        ("w", "W", |r| r.w),
        ("delay", "control-loop delay (kcycles)", |r| {
            r.delay as f64 / 1000.0
        }),
    ];
    let pts = |vary: &str, x: X, y: X| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.vary == vary)
            .map(|r| (x(r), y(r)))
            .collect()
    };
    let mut amp = vec![];
    let mut conv = vec![];
    for (vary, xl, x) in axes {
        amp.push(Chart {
            title: format!("Oscillation vs {xl}"),
            x_label: xl.into(),
            y_label: "depth (kB)".into(),
            series: vec![
                Series::new("std-dev", pts(vary, x, |r| r.std_dev / 1000.0), PALETTE[0])
                    .with_marker(Marker::Circle),
                Series::new(
                    "peak-to-peak",
                    pts(vary, x, |r| r.peak_to_peak / 1000.0),
                    PALETTE[1],
                )
                .with_marker(Marker::Square),
                Series::new(
                    "max depth",
                    pts(vary, x, |r| r.max_depth as f64 / 1000.0),
                    PALETTE[3],
                )
                .with_marker(Marker::Cross)
                .dashed(),
            ],
            x_range: None,
            y_range: None,
        });
        conv.push(Chart {
            title: format!("Convergence vs {xl}"),
            x_label: xl.into(),
            y_label: "convergence (kcycles)".into(),
            series: vec![Series::new(
                "convergence (none: not settled)",
                pts(vary, x, |r| {
                    r.convergence.map_or(f64::NAN, |c| c as f64 / 1000.0)
                }),
                PALETTE[2],
            )
            .with_marker(Marker::Triangle)],
            x_range: None,
            y_range: None,
        });
    }
    amp.extend(conv);
    amp
}

/// Writes `stem.csv`, `stem.svg`, `stem.png` for a trace.
pub fn write_trace(cfg: &LoopConfig, samples: &[Sample], stem: &std::path::Path) -> Result<()> {
    if let Some(d) = stem.parent() {
        std::fs::create_dir_all(d)?;
    }
    let charts = trace_charts(cfg, samples);
    std::fs::write(stem.with_extension("csv"), trace_csv(cfg, samples)?)?;
    std::fs::write(
        stem.with_extension("svg"),
        render_svg(&charts, 1, 900, 400)?,
    )?;
    std::fs::write(
        stem.with_extension("png"),
        render_png(&charts, 1, 900, 400)?,
    )?;
    Ok(())
}

/// Writes `stem.csv`, `stem.svg`, `stem.png` for a sweep.
pub fn write_sweep(rows: &[SweepRow], stem: &std::path::Path) -> Result<()> {
    if let Some(d) = stem.parent() {
        std::fs::create_dir_all(d)?;
    }
    let charts = sweep_charts(rows);
    std::fs::write(stem.with_extension("csv"), crate::sweep::csv_string(rows)?)?;
    std::fs::write(
        stem.with_extension("svg"),
        render_svg(&charts, 3, 560, 380)?,
    )?;
    std::fs::write(
        stem.with_extension("png"),
        render_png(&charts, 3, 560, 380)?,
    )?;
    Ok(())
}

fn fmt_conv(c: Option<u64>) -> String {
    c.map_or("not settled".into(), |c| format!("{c} cycles"))
}

/// `switchsim bcn-loop`: a run (or, with `sweep`, the sweep) written to
/// `out` (a stem: `.csv`, `.svg`, `.png`), with the figures on stdout.
pub fn cmd_bcn_loop(
    cfg: &LoopConfig,
    cycles: u64,
    rtl: bool,
    sweep_: bool,
    jobs: usize,
    out: Option<std::path::PathBuf>,
) -> Result<u8> {
    if cfg.sources == 0 || cfg.sample_every == 0 || cfg.drain <= 0.0 || cfg.line_rate <= 0.0 {
        return Err(anyhow!(
            "sources, sample interval, line and drain rates must be positive"
        ));
    }
    BcnCp::check(&cfg.cp_params(), &cfg.cp_config())?;
    BcnRp::check(&cfg.rp_params(), &cfg.rp_config())?;
    let which = if rtl { "RTL" } else { "models" };
    if sweep_ {
        let stem = out.unwrap_or_else(|| "out/bcn_sweep".into());
        println!("bcn-loop sweep ({which}): 15 points of {cycles} cycles");
        let rows = sweep(cfg, cycles, rtl, jobs)?;
        for r in &rows {
            println!(
                "{:>5} Gd=1/{:<4} W={:<5} delay={:<5} convergence {:>16}  std-dev {:>8.0} B  p-p {:>8.0} B  max {:>7} B  Jain {:.3}  drops {}",
                r.vary,
                1u32 << r.gd,
                r.w,
                r.delay,
                fmt_conv(r.convergence),
                r.std_dev,
                r.peak_to_peak,
                r.max_depth,
                r.jain,
                r.drops
            );
        }
        write_sweep(&rows, &stem)?;
        println!("wrote {}.{{csv,svg,png}}", stem.display());
    } else {
        let stem = out.unwrap_or_else(|| "out/bcn_loop".into());
        let r = run(cfg, cycles, rtl)?;
        let m = &r.metrics;
        println!(
            "bcn-loop ({which}): S={} frames {} B, line {} B/cycle, drain {} B/cycle, delay {}+{} cycles, Gd=1/{} W={} Pm={}/1024, Qeq {} B, buffer {} B, {cycles} cycles",
            cfg.sources,
            cfg.frame_len,
            cfg.line_rate,
            cfg.drain,
            cfg.fwd_delay,
            cfg.ctrl_delay,
            1u32 << cfg.gd,
            cfg.w as f64 / 4.0,
            cfg.pm,
            cfg.qeq,
            cfg.buffer
        );
        println!(
            "convergence (within {:.0} B of Qeq): {}\nafter it: mean depth {:.0} B, std-dev {:.0} B, peak-to-peak {:.0} B\nmax depth {} B, drops {}, messages {}\nthroughput over the last quarter (B/cycle): {:?}, Jain {:.4}",
            band(cfg),
            fmt_conv(m.convergence),
            m.mean_depth,
            m.std_dev,
            m.peak_to_peak,
            m.max_depth,
            m.drops,
            m.msgs,
            m.throughput.iter().map(|x| (x * 1000.0).round() / 1000.0).collect::<Vec<_>>(),
            m.jain
        );
        write_trace(cfg, &r.samples, &stem)?;
        println!("wrote {}.{{csv,svg,png}}", stem.display());
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short, busy run: small frames, a quarter of the arrivals sampled, a
    /// small buffer: the loop reacts (and loses frames) within a few thousand
    /// cycles.
    fn short() -> LoopConfig {
        LoopConfig {
            frame_len: 64,
            pm: 256,
            qeq: 2048,
            buffer: 3000,
            ctrl_delay: 40,
            fwd_delay: 3,
            idle: 300,
            sample_every: 50,
            ..LoopConfig::default()
        }
    }

    #[test]
    fn model_and_rtl_loops_agree() {
        let c = short();
        let mut m = ModelLoop::models(&c);
        let mut r = rtl_loop(&c, 7).unwrap();
        m.record_outputs();
        r.record_outputs();
        m.run(20_000).unwrap();
        r.run(20_000).unwrap();
        // The loop did something: messages, limiters, drops.
        assert!(m.msgs > 10, "{} messages", m.msgs);
        assert!(m.drops > 0, "no drops");
        assert!(m
            .samples
            .iter()
            .any(|s| s.rate.iter().any(|r| *r < c.line_rate)));
        let (mo, ro) = (m.outputs.as_ref().unwrap(), r.outputs.as_ref().unwrap());
        for (t, (a, b)) in mo.iter().zip(ro).enumerate() {
            assert_eq!(a, b, "cycle {t}");
        }
        assert_eq!(m.samples, r.samples);
        assert_eq!((m.msgs, m.drops), (r.msgs, r.drops));
    }

    #[test]
    fn csv_and_charts() {
        let c = short();
        let r = run(&c, 2000, false).unwrap();
        let text = trace_csv(&c, &r.samples).unwrap();
        assert_eq!(text.lines().count(), 1 + 2000 / 50);
        assert!(text.starts_with("cycle,depth_bytes,msgs,drops,rate0"));
        let svg = render_svg(&trace_charts(&c, &r.samples), 1, 600, 300).unwrap();
        assert!(svg.contains("<svg"));
    }
}
