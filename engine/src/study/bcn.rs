//! The BCN closed loop (`studies::bcn_loop`) on the golden models or the
//! verilated RTL: one run with its trace (CSV and charts), or the study
//! (`--sweep`): every experiment of docs/bcn.md over several seeds, one CSV
//! row per run, the mean and 95 % confidence interval of every figure per
//! setting (and paired differences where two rules are compared), charts
//! (`switchsim study bcn`, old name `bcn-loop`).

use crate::plot::{render_png, render_svg, Chart, Marker, Series, BLACK, PALETTE};
use anyhow::{anyhow, Result};
use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::bcn_cp::BcnCp;
use model::bcn_rp::BcnRp;
use model::Block;
use studies::bcn_loop::{BcnLoop, LoopConfig, ModelLoop, Stepper, Topology, Window};
use studies::bcn_metrics::{mean_ci, run_figures, RunFig};

/// The system on the RTL of every block.
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
    let cps = (0..cfg.topo.points.len())
        .map(|k| rtl_block::<BcnCp>(&cfg.cp_params(), &cfg.cp_config(k), seed + k as u64))
        .collect::<Result<Vec<_>>>()?;
    let rps = cfg
        .topo
        .hosts
        .iter()
        .enumerate()
        .map(|(h, p)| rtl_block::<BcnRp>(p, &cfg.rp_config(), seed + 100 + h as u64))
        .collect::<Result<Vec<_>>>()?;
    Ok(BcnLoop::new(cfg.clone(), cps, rps))
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Run {
    /// Its windows.
    pub windows: Vec<Window>,
    /// Its figures.
    pub fig: RunFig,
}

/// How long runs go: at least `min` cycles; while the bottleneck has not
/// settled (within the first half: the second half is the steady state),
/// the run goes on to twice its length, up to `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Length {
    /// Cycles of the first stretch.
    pub min: u64,
    /// Most cycles.
    pub max: u64,
}

fn run_on<C: Stepper<BcnCp>, R: Stepper<BcnRp>>(l: &mut BcnLoop<C, R>, len: Length) -> Result<Run> {
    let cfg = l.config().clone();
    let mut target = len.min.max(cfg.window);
    loop {
        let n = target - l.elapsed();
        l.run(n).map_err(|e| anyhow!(e))?;
        let fig = run_figures(&cfg.topo, cfg.line_rate, &l.windows);
        let b = &fig.points[cfg.topo.bottleneck];
        let done = b.settle.is_some();
        if done || target >= len.max {
            return Ok(Run {
                windows: l.windows.clone(),
                fig,
            });
        }
        target = (2 * target).min(len.max);
    }
}

/// Runs the loop on the models, or on the RTL.
pub fn run(cfg: &LoopConfig, len: Length, rtl: bool) -> Result<Run> {
    cfg.validate().map_err(|e| anyhow!(e))?;
    if rtl {
        run_on(&mut rtl_loop(cfg, cfg.seed)?, len)
    } else {
        run_on(&mut ModelLoop::models(cfg), len)
    }
}

// ---------------------------------------------------------------------------
// Trace: CSV and charts of one run
// ---------------------------------------------------------------------------

/// The trace as CSV, one row per window: its end (cycles after the
/// warm-up), per point the smallest, mean and largest depth of its cycles,
/// its empty cycles, drops and messages, then per flow its throughput
/// (delivered bytes per cycle) and its limiter's mean rate.
pub fn trace_csv(cfg: &LoopConfig, w: &[Window]) -> Result<String> {
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["cycle".to_string()];
    for k in 0..cfg.topo.points.len() {
        for f in ["min", "mean", "max", "empty", "drops", "msgs"] {
            head.push(format!("p{k}_{f}"));
        }
    }
    for f in 0..cfg.topo.flows.len() {
        head.push(format!("thr{f}"));
    }
    for f in 0..cfg.topo.flows.len() {
        head.push(format!("rate{f}"));
    }
    out.write_record(&head)?;
    for x in w {
        let n = x.len.max(1) as f64;
        let mut r = vec![(x.t0 + x.len).to_string()];
        for p in &x.points {
            r.push(p.depth_min.to_string());
            r.push(format!("{:.0}", p.depth_sum as f64 / n));
            r.push(p.depth_max.to_string());
            r.push(p.empty.to_string());
            r.push(p.drops.to_string());
            r.push(p.msgs.to_string());
        }
        r.extend(x.delivered.iter().map(|b| format!("{:.4}", *b as f64 / n)));
        r.extend(x.rate_sum.iter().map(|s| format!("{:.4}", s / n)));
        out.write_record(&r)?;
    }
    Ok(String::from_utf8(out.into_inner()?)?)
}

/// Panels against time: each point's depth (per window: smallest, mean and
/// largest of its cycles, and Qeq), the throughput of every flow through
/// the bottleneck (mean over 10 windows), and their limiters' mean rates.
pub fn trace_charts(cfg: &LoopConfig, w: &[Window]) -> Vec<Chart> {
    let mc = |t: u64| t as f64 / 1e6;
    let end = w.last().map_or(0.0, |x| mc(x.t0 + x.len));
    let mut charts = vec![];
    for (k, pt) in cfg.topo.points.iter().enumerate() {
        let s = |f: &dyn Fn(&Window) -> f64| -> Vec<(f64, f64)> {
            w.iter()
                .map(|x| (mc(x.t0 + x.len), f(x) / 1000.0))
                .collect()
        };
        let qeq = pt.qeq as f64 / 1000.0;
        charts.push(Chart {
            title: format!(
                "Point {k} ({}drain {} B/cycle), Pm = {}/1024, Gd = 1/{}, Gi = 1/{}, W = {}",
                if k == cfg.topo.bottleneck {
                    "bottleneck, "
                } else {
                    ""
                },
                pt.drain,
                cfg.pm,
                1u64 << cfg.gd,
                1u64 << cfg.gi,
                cfg.w as f64 / 4.0
            ),
            x_label: "time (Mcycles)".into(),
            y_label: "depth (kB)".into(),
            series: vec![
                Series::new(
                    "largest (per cycle)",
                    s(&|x| x.points[k].depth_max as f64),
                    PALETTE[1],
                ),
                Series::new(
                    "mean",
                    s(&|x| x.points[k].depth_sum as f64 / x.len.max(1) as f64),
                    PALETTE[0],
                ),
                Series::new(
                    "smallest (per cycle)",
                    s(&|x| x.points[k].depth_min as f64),
                    PALETTE[2],
                ),
                Series::new("Qeq", vec![(0.0, qeq), (end, qeq)], BLACK).dashed(),
            ],
            x_range: None,
            y_range: None,
        });
    }
    let b = cfg.topo.bottleneck;
    let flows: Vec<usize> = (0..cfg.topo.flows.len())
        .filter(|&f| cfg.topo.flows[f].route.contains(&b))
        .collect();
    let fair = cfg.topo.fair_shares(cfg.line_rate);
    let avg = 10usize;
    let thr = flows
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            Series::new(
                format!("flow {f}"),
                w.windows(avg)
                    .step_by(avg / 2)
                    .map(|ws| {
                        let b: u64 = ws.iter().map(|x| x.delivered[f]).sum();
                        let n: u64 = ws.iter().map(|x| x.len).sum();
                        (mc(ws[avg - 1].t0 + ws[avg - 1].len), b as f64 / n as f64)
                    })
                    .collect(),
                PALETTE[i % PALETTE.len()],
            )
        })
        .chain([Series::new(
            "fair share",
            vec![(0.0, fair[flows[0]]), (end, fair[flows[0]])],
            BLACK,
        )
        .dashed()])
        .collect();
    let rates = flows
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            Series::new(
                format!("flow {f}"),
                w.iter()
                    .map(|x| (mc(x.t0 + x.len), x.rate_sum[f] / x.len.max(1) as f64))
                    .collect(),
                PALETTE[i % PALETTE.len()],
            )
        })
        .collect();
    charts.push(Chart {
        title: format!(
            "Throughput of the {} flows through point {b} (mean over {avg} windows)",
            flows.len()
        ),
        x_label: "time (Mcycles)".into(),
        y_label: "B/cycle".into(),
        series: thr,
        x_range: None,
        y_range: None,
    });
    charts.push(Chart {
        title: "Their limiters' rates (window means; the line rate without one)".into(),
        x_label: "time (Mcycles)".into(),
        y_label: "B/cycle".into(),
        series: rates,
        x_range: None,
        y_range: Some((0.0, cfg.line_rate * 1.1)),
    });
    charts
}

/// Writes `stem.csv`, `stem.svg`, `stem.png` for a trace.
pub fn write_trace(cfg: &LoopConfig, w: &[Window], stem: &std::path::Path) -> Result<()> {
    if let Some(d) = stem.parent() {
        std::fs::create_dir_all(d)?;
    }
    let charts = trace_charts(cfg, w);
    std::fs::write(stem.with_extension("csv"), trace_csv(cfg, w)?)?;
    std::fs::write(
        stem.with_extension("svg"),
        render_svg(&charts, 1, 1000, 380)?,
    )?;
    std::fs::write(
        stem.with_extension("png"),
        render_png(&charts, 1, 1000, 380)?,
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------
// The study
// ---------------------------------------------------------------------------

/// One setting of an experiment (run over every seed).
#[derive(Clone, Debug)]
pub struct Setting {
    /// The experiment: `gains`, `pm1`, `rules`, `w`, `delay`, `buffer`, `offset`.
    pub exp: &'static str,
    /// The setting within it.
    pub label: String,
    /// The x value of its charts.
    pub x: f64,
    /// The configuration (the seed is set per run).
    pub cfg: LoopConfig,
}

/// The gain settings: Gd and Gi both scaled by 4^-k from the defaults
/// (Gd = 1/128, Gi = 1/16), so that their ratio, and with it the steady
/// offset, stays the same.
pub const GAIN_STEPS: [(i32, &str); 3] = [(0, "x1"), (1, "x1/4"), (2, "x1/16")];

fn scaled(base: &LoopConfig, k: i32) -> LoopConfig {
    LoopConfig {
        gd: (base.gd as i32 + 2 * k) as u8,
        gi: (base.gi as i32 + 2 * k) as u8,
        ..base.clone()
    }
}

/// The study's settings around `base` (the two-point topology at the
/// seed's Pm) with the recommended gain scale `rec` (a step of
/// [`GAIN_STEPS`]), for the experiments named in `exps`.
pub fn settings(base: &LoopConfig, rec: i32, exps: &[String]) -> Vec<Setting> {
    let want = |e: &str| exps.is_empty() || exps.iter().any(|x| x == e);
    let mut v = vec![];
    let s = |exp, label: String, x, cfg| Setting { exp, label, x, cfg };
    if want("gains") {
        for (k, name) in GAIN_STEPS {
            v.push(s("gains", name.into(), k as f64, scaled(base, k)));
        }
    }
    if want("pm1") {
        for (k, name) in GAIN_STEPS {
            let c = LoopConfig {
                pm: 1024,
                ..scaled(base, k)
            };
            v.push(s("pm1", name.into(), k as f64, c));
        }
    }
    if want("rules") {
        // The rules before this study: one CPID for both points (each
        // strips every tag, answers every tagged frame, and the reaction
        // points cannot tell them apart). Paired with the `gains` runs of
        // the same gain and seed.
        for k in [0, rec] {
            let mut c = scaled(base, k);
            for p in c.topo.points.iter_mut() {
                p.cpid = base.topo.points[0].cpid;
            }
            v.push(s("rules", gain_name(k).into(), k as f64, c));
        }
    }
    let r = scaled(base, rec);
    // One point, four greedy hosts at 8 B/cycle into 4 B/cycle: the loop
    // of the earlier study, for the weight and the delay.
    let one = |d: u64| LoopConfig {
        topo: Topology::one_point(4, 4.0, 26_000, 150_000, d),
        ..r.clone()
    };
    if want("w") {
        for w in [0u8, 4, 8, 16] {
            v.push(s(
                "w",
                format!("W={}", w as f64 / 4.0),
                w as f64 / 4.0,
                LoopConfig { w, ..one(1000) },
            ));
        }
    }
    if want("delay") {
        for d in [250u64, 1000, 4000] {
            v.push(s("delay", format!("delay={d}"), d as f64, one(d)));
        }
    }
    if want("buffer") {
        for k in [rec] {
            for b in [60_000u32, 600_000] {
                let mut c = scaled(base, k);
                for p in c.topo.points.iter_mut() {
                    p.buffer = b;
                }
                v.push(s(
                    "buffer",
                    format!("{} buffer={b}", gain_name(k)),
                    b as f64,
                    c,
                ));
            }
        }
    }
    if want("offset") {
        // One point, four greedy sources at 8 B/cycle into 4 B/cycle (fair
        // share r = 1 B/cycle), the recommended Gd: Gi sets kappa = Gd r /
        // (Gi Ru) = 2^(gi + 4 - gd).
        for lk in [-1i32, 0, 1, 2] {
            let gi = (r.gd as i32 - 4 + lk) as u8;
            let c = LoopConfig {
                topo: Topology::one_point(4, 4.0, 26_000, 150_000, 1000),
                gi,
                ..r.clone()
            };
            let kappa = 2f64.powi(lk);
            v.push(s("offset", format!("kappa={kappa}"), kappa, c));
        }
    }
    v
}

fn gain_name(k: i32) -> &'static str {
    GAIN_STEPS
        .iter()
        .find(|(s, _)| *s == k)
        .map_or("?", |(_, n)| n)
}

/// An experiment's name (an alias, so that serde's derive does not take
/// the `&'static str` for a borrow of the CSV text).
pub type Exp = &'static str;

/// One run of the study: the setting, the seed, and every figure.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Experiment.
    #[serde(deserialize_with = "exp_name")]
    pub exp: Exp,
    /// Setting.
    pub label: String,
    /// x value of the charts.
    pub x: f64,
    /// Topology.
    pub topology: String,
    /// Pm x 1024.
    pub pm: u16,
    /// Gd = 2^-gd.
    pub gd: u8,
    /// Gi = 2^-gi.
    pub gi: u8,
    /// W.
    pub w: f64,
    /// The bottleneck's control delay, cycles.
    pub delay: u64,
    /// The points' buffer, bytes.
    pub buffer: u32,
    /// Both points have one CPID (the earlier rules).
    pub shared_cpid: bool,
    /// Seed.
    pub seed: u64,
    /// Cycles run after the warm-up.
    pub cycles: u64,
    /// Bottleneck: settling time, cycles (empty: not settled).
    pub settle: Option<f64>,
    /// Steady-state mean depth, bytes.
    pub mean: f64,
    /// Its offset from Qeq, bytes.
    pub offset: f64,
    /// Last quarter minus third quarter, bytes.
    pub drift: f64,
    /// Per-cycle standard deviation, bytes.
    pub std: f64,
    /// Oscillation period, cycles.
    pub period: f64,
    /// Mean per-period peak-to-peak (per-cycle extremes), bytes.
    pub pp: f64,
    /// Range over the steady state, bytes.
    pub range: f64,
    /// Share of steady-state cycles empty.
    pub empty: f64,
    /// Share of all cycles empty.
    pub empty_all: f64,
    /// Utilisation of the bottleneck port, steady state.
    pub util: f64,
    /// Drops over the run.
    pub drops: u64,
    /// Drops in the steady state.
    pub drops_ss: u64,
    /// Share of arrivals dropped over the run.
    pub loss: f64,
    /// Largest depth, bytes.
    pub max_depth: u32,
    /// Messages in the steady state.
    pub msgs: u64,
    /// Negative ones.
    pub neg: u64,
    /// Positive (or zero) ones.
    pub pos: u64,
    /// Mean Qoff over the samples (64 B units).
    pub qoff_samples: f64,
    /// Mean Fb over the samples.
    pub fb_samples: f64,
    /// Sum of positive Fb over sum of |negative Fb|.
    pub fb_ratio: f64,
    /// Rate increases, B/cycle per Mcycle.
    pub inc_rate: f64,
    /// Rate decreases, B/cycle per Mcycle.
    pub dec_rate: f64,
    /// Upstream point (two-point topology): mean depth, bytes.
    pub up_mean: Option<f64>,
    /// Upstream point: share of cycles empty.
    pub up_empty: Option<f64>,
    /// Upstream point: drops over the run.
    pub up_drops: Option<u64>,
    /// Upstream point: its increases for flows crossing the bottleneck
    /// while above Qeq, B/cycle per Mcycle.
    pub up_against_rate: Option<f64>,
    /// Their count.
    pub up_against_n: Option<u64>,
    /// Upstream point: its messages the reaction points ignored.
    pub up_ignored: Option<u64>,
    /// Jain's index over fairness windows (mean).
    pub jain: f64,
    /// Worst fairness window.
    pub jain_min: f64,
    /// Jain's index of the steady-state throughputs.
    pub jain_avg: f64,
    /// Group `both` (or the only group): throughput over fair share.
    pub share_g0: f64,
    /// Group `down`: throughput over fair share.
    pub share_down: Option<f64>,
    /// Group `multi-both`: throughput over fair share.
    pub share_multi: Option<f64>,
    /// Messages per delivered MB.
    pub msgs_per_mb: f64,
    /// BCN bytes over delivered bytes.
    pub overhead: f64,
    /// Delivered bytes per cycle.
    pub delivered: f64,
    /// Falls back to coarser keys.
    pub fallbacks: u64,
}

fn row(s: &Setting, seed: u64, f: &RunFig) -> Row {
    let c = &s.cfg;
    let b = c.topo.bottleneck;
    let bp = &f.points[b];
    let up = (c.topo.points.len() > 1).then(|| &f.points[0]);
    let group = |name: &str| {
        c.topo
            .groups
            .iter()
            .position(|g| g == name)
            .map(|i| f.group_share[i])
    };
    Row {
        exp: s.exp,
        label: s.label.clone(),
        x: s.x,
        topology: c.topo.name.clone(),
        pm: c.pm,
        gd: c.gd,
        gi: c.gi,
        w: c.w as f64 / 4.0,
        delay: c.topo.points[b].ctrl_delay,
        buffer: c.topo.points[b].buffer,
        shared_cpid: c.topo.points.len() > 1 && c.cpid16(0) == c.cpid16(1),
        seed,
        cycles: f.cycles,
        settle: bp.settle,
        mean: bp.mean,
        offset: bp.offset,
        drift: bp.drift,
        std: bp.std,
        period: bp.period,
        pp: bp.pp,
        range: bp.range,
        empty: bp.empty,
        empty_all: bp.empty_all,
        util: bp.util,
        drops: bp.drops,
        drops_ss: bp.drops_ss,
        loss: bp.loss,
        max_depth: bp.max_depth,
        msgs: bp.msgs,
        neg: bp.neg,
        pos: bp.pos,
        qoff_samples: bp.qoff_samples,
        fb_samples: bp.fb_samples,
        fb_ratio: bp.fb_ratio,
        inc_rate: bp.inc_rate,
        dec_rate: bp.dec_rate,
        up_mean: up.map(|p| p.mean),
        up_empty: up.map(|p| p.empty),
        up_drops: up.map(|p| p.drops),
        up_against_rate: up.map(|p| p.against_rate),
        up_against_n: up.map(|p| p.against_n),
        up_ignored: up.map(|p| p.ignored),
        jain: f.jain,
        jain_min: f.jain_min,
        jain_avg: f.jain_avg,
        share_g0: f.group_share[0],
        share_down: group("down"),
        share_multi: group("multi-both"),
        msgs_per_mb: f.msgs_per_mb,
        overhead: f.overhead,
        delivered: f.delivered,
        fallbacks: f.fallbacks,
    }
}

/// The figures summarised per setting: (name, value of a row; none when
/// the row has none).
type Getter = fn(&Row) -> Option<f64>;

/// Every figure of a row the summary averages.
pub fn figures() -> Vec<(&'static str, Getter)> {
    vec![
        ("settle", |r| r.settle),
        ("mean", |r| Some(r.mean)),
        ("offset", |r| Some(r.offset)),
        ("drift", |r| Some(r.drift)),
        ("std", |r| Some(r.std)),
        ("period", |r| Some(r.period)),
        ("pp", |r| Some(r.pp)),
        ("range", |r| Some(r.range)),
        ("empty", |r| Some(r.empty)),
        ("empty_all", |r| Some(r.empty_all)),
        ("util", |r| Some(r.util)),
        ("drops", |r| Some(r.drops as f64)),
        ("drops_ss", |r| Some(r.drops_ss as f64)),
        ("loss", |r| Some(r.loss)),
        ("max_depth", |r| Some(r.max_depth as f64)),
        ("msgs", |r| Some(r.msgs as f64)),
        ("qoff_samples", |r| Some(r.qoff_samples)),
        ("fb_samples", |r| Some(r.fb_samples)),
        ("fb_ratio", |r| Some(r.fb_ratio)),
        ("inc_rate", |r| Some(r.inc_rate)),
        ("dec_rate", |r| Some(r.dec_rate)),
        ("up_mean", |r| r.up_mean),
        ("up_empty", |r| r.up_empty),
        ("up_drops", |r| r.up_drops.map(|x| x as f64)),
        ("up_against_rate", |r| r.up_against_rate),
        ("up_against_n", |r| r.up_against_n.map(|x| x as f64)),
        ("up_ignored", |r| r.up_ignored.map(|x| x as f64)),
        ("jain", |r| Some(r.jain)),
        ("jain_min", |r| Some(r.jain_min)),
        ("jain_avg", |r| Some(r.jain_avg)),
        ("share_g0", |r| Some(r.share_g0)),
        ("share_down", |r| r.share_down),
        ("share_multi", |r| r.share_multi),
        ("msgs_per_mb", |r| Some(r.msgs_per_mb)),
        ("overhead", |r| Some(r.overhead)),
        ("delivered", |r| Some(r.delivered)),
        ("fallbacks", |r| Some(r.fallbacks as f64)),
        ("cycles", |r| Some(r.cycles as f64)),
    ]
}

/// One figure of one setting over its seeds.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Summary {
    /// Experiment (`rules-diff`: paired differences, the shared CPID minus
    /// distinct CPIDs, same gain and seed).
    pub exp: String,
    /// Setting.
    pub label: String,
    /// x value of the charts.
    pub x: f64,
    /// Figure (a column of the per-run CSV).
    pub figure: &'static str,
    /// Runs that have the figure (for `settle`: the runs that settled).
    pub n: usize,
    /// Runs of the setting.
    pub runs: usize,
    /// Mean over those runs.
    pub mean: f64,
    /// Half-width of its 95 % confidence interval (Student's t).
    pub ci95: f64,
}

/// Mean and 95 % CI of every figure per setting (in order of first
/// appearance), and for the `rules` experiment the paired differences
/// (shared minus distinct CPID, same seed and gain).
pub fn summarize(rows: &[Row]) -> Vec<Summary> {
    let mut keys: Vec<(&'static str, String, f64)> = vec![];
    for r in rows {
        let k = (r.exp, r.label.clone(), r.x);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = vec![];
    for (exp, label, x) in &keys {
        let rs: Vec<&Row> = rows
            .iter()
            .filter(|r| r.exp == *exp && r.label == *label)
            .collect();
        for (name, get) in figures() {
            let v: Vec<f64> = rs
                .iter()
                .filter_map(|r| get(r))
                .filter(|v| v.is_finite())
                .collect();
            let (mean, ci95) = mean_ci(&v);
            out.push(Summary {
                exp: exp.to_string(),
                label: label.clone(),
                x: *x,
                figure: name,
                n: v.len(),
                runs: rs.len(),
                mean,
                ci95,
            });
        }
    }
    // Paired differences of the rules: shared CPID minus the `gains` run
    // of the same gain and seed.
    for (_, label, x) in keys.iter().filter(|k| k.0 == "rules") {
        let gain = label.as_str();
        for (name, get) in figures() {
            let mut d = vec![];
            for a in rows
                .iter()
                .filter(|r| r.exp == "rules" && &r.label == label)
            {
                if let Some(b) = rows
                    .iter()
                    .find(|r| r.exp == "gains" && r.label == gain && r.seed == a.seed)
                {
                    if let (Some(p), Some(q)) = (get(a), get(b)) {
                        if p.is_finite() && q.is_finite() {
                            d.push(p - q);
                        }
                    }
                }
            }
            let (mean, ci95) = mean_ci(&d);
            out.push(Summary {
                exp: "rules-diff".into(),
                label: gain.to_string(),
                x: *x,
                figure: name,
                n: d.len(),
                runs: d.len(),
                mean,
                ci95,
            });
        }
    }
    out
}

#[cfg(test)]
fn find<'a>(s: &'a [Summary], exp: &str, label: &str, fig: &str) -> Option<&'a Summary> {
    s.iter()
        .find(|x| x.exp == exp && x.label == label && x.figure == fig)
}

/// The study's charts: for the gain settings at the seed's Pm and at
/// Pm = 1, the settling time, the per-period peak-to-peak, the empty
/// share and Jain's index against the gain scale (mean and 95 % CI as
/// dashed lines); the steady offset against kappa.
pub fn study_charts(s: &[Summary]) -> Vec<Chart> {
    let series = |exp: &str, fig: &str, scale: f64, name: &str, color| -> Vec<Series> {
        let pts: Vec<(f64, f64, f64)> = s
            .iter()
            .filter(|x| x.exp == exp && x.figure == fig && x.n > 0)
            .map(|x| (x.x, x.mean * scale, x.ci95 * scale))
            .collect();
        let ci = |sign: f64| -> Vec<(f64, f64)> {
            pts.iter()
                .filter(|p| p.2.is_finite())
                .map(|p| (p.0, p.1 + sign * p.2))
                .collect()
        };
        vec![
            Series::new(name, pts.iter().map(|p| (p.0, p.1)).collect(), color)
                .with_marker(Marker::Circle),
            Series::new(format!("{name} 95 % CI"), ci(1.0), color).dashed(),
            Series::new("", ci(-1.0), color).dashed(),
        ]
    };
    let gx = "gain step k (Gd, Gi x 4^-k)";
    let chart = |title: &str, y: &str, fig: &str, scale: f64| Chart {
        title: title.into(),
        x_label: gx.into(),
        y_label: y.into(),
        series: [
            series("gains", fig, scale, "Pm = 10/1024", PALETTE[0]),
            series("pm1", fig, scale, "Pm = 1", PALETTE[1]),
        ]
        .concat(),
        x_range: None,
        y_range: None,
    };
    let mut v = vec![
        chart("Settling time (settled runs)", "Mcycles", "settle", 1e-6),
        chart("Peak-to-peak per period", "kB", "pp", 1e-3),
        chart("Bottleneck queue empty", "share of cycles", "empty", 1.0),
        chart("Jain's index (100 kcycle windows)", "index", "jain", 1.0),
        chart("Steady offset from Qeq", "kB", "offset", 1e-3),
        chart("Drops over the run", "frames", "drops", 1.0),
    ];
    v.push(Chart {
        title: "Offset from Qeq against kappa = Gd r / (Gi Ru), one point".into(),
        x_label: "kappa".into(),
        y_label: "kB".into(),
        series: series("offset", "offset", 1e-3, "offset", PALETTE[2]),
        x_range: None,
        y_range: None,
    });
    v
}

/// Writes `stem.csv` (one row per run), `stem_summary.csv` and the charts.
pub fn write_study(rows: &[Row], stem: &std::path::Path) -> Result<Vec<Summary>> {
    if let Some(d) = stem.parent() {
        std::fs::create_dir_all(d)?;
    }
    let sum = summarize(rows);
    std::fs::write(stem.with_extension("csv"), crate::sweep::csv_string(rows)?)?;
    let name = stem
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    std::fs::write(
        stem.with_file_name(format!("{name}_summary.csv")),
        crate::sweep::csv_string(&sum)?,
    )?;
    let charts = study_charts(&sum);
    std::fs::write(
        stem.with_extension("svg"),
        render_svg(&charts, 2, 620, 400)?,
    )?;
    std::fs::write(
        stem.with_extension("png"),
        render_png(&charts, 2, 620, 400)?,
    )?;
    Ok(sum)
}

/// Reads the per-run CSV back (to redraw the summary and the charts).
pub fn read_rows(path: &std::path::Path) -> Result<Vec<Row>> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .enumerate()
        .map(|(k, r)| r.map_err(|e| anyhow!("{}: row {}: {e}", path.display(), k + 1)))
        .collect()
}

/// The experiment of a row read back, as one of the names the study runs.
fn exp_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    const EXPS: [&str; 7] = ["gains", "pm1", "rules", "w", "delay", "buffer", "offset"];
    let name = <String as serde::Deserialize>::deserialize(d)?;
    EXPS.iter()
        .copied()
        .find(|e| *e == name)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown experiment {name:?}")))
}

/// Options of the study.
#[derive(Clone, Debug)]
pub struct StudyOpts {
    /// Seeds per setting (1..=seeds).
    pub seeds: u64,
    /// Run length.
    pub len: Length,
    /// On the RTL.
    pub rtl: bool,
    /// Threads.
    pub jobs: usize,
    /// Experiments (empty: all).
    pub exps: Vec<String>,
    /// Recommended gain step (for `rules`, `w`, `delay`, `buffer`).
    pub rec: i32,
    /// Per-run CSV to append to and skip what it holds (resume).
    pub resume: bool,
}

/// Runs the study's settings over the seeds (resuming from `stem.csv` when
/// asked: a setting and seed already there is not run again), printing a
/// line per run, and writes the CSVs and charts.
pub fn study(base: &LoopConfig, o: &StudyOpts, stem: &std::path::Path) -> Result<Vec<Summary>> {
    let sets = settings(base, o.rec, &o.exps);
    let done: Vec<Row> = if o.resume && stem.with_extension("csv").exists() {
        read_rows(&stem.with_extension("csv"))?
    } else {
        vec![]
    };
    let mut todo = vec![];
    for s in &sets {
        for seed in 1..=o.seeds {
            if !done
                .iter()
                .any(|r| r.exp == s.exp && r.label == s.label && r.seed == seed)
            {
                todo.push((s.clone(), seed));
            }
        }
    }
    println!(
        "bcn study ({}): {} settings x {} seeds, {} runs to go, {}..{} cycles each",
        if o.rtl { "RTL" } else { "models" },
        sets.len(),
        o.seeds,
        todo.len(),
        o.len.min,
        o.len.max
    );
    let out = std::sync::Mutex::new(done);
    crate::sweep::par_map(&todo, o.jobs, |_, (s, seed)| {
        let cfg = LoopConfig {
            seed: *seed,
            ..s.cfg.clone()
        };
        let r = run(&cfg, o.len, o.rtl)?;
        let rw = row(s, *seed, &r.fig);
        println!(
            "{:>6} {:<18} seed {seed}: {:>9} cycles, settle {:>10}, mean {:>7.0} B, pp {:>7.0} B, empty {:.3}, drops {}, Jain {:.3}",
            s.exp,
            s.label,
            rw.cycles,
            rw.settle.map_or("none".into(), |x| format!("{x:.0}")),
            rw.mean,
            rw.pp,
            rw.empty,
            rw.drops,
            rw.jain
        );
        let mut g = out.lock().map_err(|_| anyhow!("a worker failed"))?;
        g.push(rw);
        // Written after every run, so an interrupted study resumes.
        std::fs::write(
            stem.with_extension("csv"),
            crate::sweep::csv_string(g.iter())?,
        )?;
        Ok(())
    })?;
    let mut done = out.into_inner().map_err(|_| anyhow!("a worker failed"))?;
    // In the settings' order, then by seed.
    let order = |r: &Row| {
        sets.iter()
            .position(|s| s.exp == r.exp && s.label == r.label)
            .unwrap_or(usize::MAX)
    };
    done.sort_by_key(|r| (order(r), r.seed));
    write_study(&done, stem)
}

fn fmt_settle(c: Option<f64>) -> String {
    c.map_or("not settled".into(), |c| format!("{:.0} cycles", c))
}

/// `switchsim study bcn`: one run (trace CSV and charts in `out`), or with
/// `sweep` the study; figures on stdout.
pub fn cmd_bcn_loop(
    cfg: &LoopConfig,
    len: Length,
    rtl: bool,
    sweep: Option<StudyOpts>,
    out: Option<std::path::PathBuf>,
) -> Result<u8> {
    cfg.validate().map_err(|e| anyhow!(e))?;
    BcnCp::check(&cfg.cp_params(), &cfg.cp_config(0))?;
    for p in &cfg.topo.hosts {
        BcnRp::check(p, &cfg.rp_config())?;
    }
    if len.min == 0 || len.max < len.min {
        return Err(anyhow!(
            "--cycles {} and --max-cycles {}: need 0 < cycles <= max-cycles",
            len.min,
            len.max
        ));
    }
    if let Some(o) = sweep {
        let stem = out.unwrap_or_else(|| "out/bcn_sweep".into());
        let sum = study(cfg, &o, &stem)?;
        println!(
            "wrote {0}.csv, {0}_summary.csv ({1} figures), {0}.{{svg,png}}",
            stem.display(),
            sum.len()
        );
        return Ok(0);
    }
    let stem = out.unwrap_or_else(|| "out/bcn_loop".into());
    let r = run(cfg, len, rtl)?;
    let f = &r.fig;
    println!(
        "bcn ({}): topology {}, {} flows, frames {} B, line {} B/cycle, Gd=1/{} Gi=1/{} W={} Pm={}/1024, seed {}, {} cycles",
        if rtl { "RTL" } else { "models" },
        cfg.topo.name,
        cfg.topo.flows.len(),
        cfg.frame_len,
        cfg.line_rate,
        1u64 << cfg.gd,
        1u64 << cfg.gi,
        cfg.w as f64 / 4.0,
        cfg.pm,
        cfg.seed,
        f.cycles
    );
    for (k, p) in f.points.iter().enumerate() {
        let pt = &cfg.topo.points[k];
        println!(
            "point {k} (drain {} B/cycle, Qeq {} B, buffer {} B): settling {} (+-{:.0} % of the steady mean, over a period of {:.0} cycles)\n  steady mean {:.0} B (offset {:+.0} B, drift {:+.0} B), std-dev {:.0} B, peak-to-peak {:.0} B per period, range {:.0} B\n  empty {:.1} % of the steady state ({:.1} % of the run), utilisation {:.3}, drops {} ({} in the steady state), largest depth {} B\n  messages {} ({} negative), mean Fb over the samples {:.1}, positive/negative Fb {:.2}",
            pt.drain,
            pt.qeq,
            pt.buffer,
            fmt_settle(p.settle),
            100.0 * studies::bcn_metrics::SETTLE_BAND,
            p.period,
            p.mean,
            p.offset,
            p.drift,
            p.std,
            p.pp,
            p.range,
            100.0 * p.empty,
            100.0 * p.empty_all,
            p.util,
            p.drops,
            p.drops_ss,
            p.max_depth,
            p.msgs,
            p.neg,
            p.fb_samples,
            p.fb_ratio
        );
    }
    println!(
        "Jain's index (throughput over fair share, 100 kcycle windows): mean {:.3}, worst {:.3}; of the steady averages {:.3}\nmessages per delivered MB {:.2} (BCN bytes / data bytes {:.5}), delivered {:.3} B/cycle, falls back {}",
        f.jain, f.jain_min, f.jain_avg, f.msgs_per_mb, f.overhead, f.delivered, f.fallbacks
    );
    write_trace(cfg, &r.windows, &stem)?;
    println!("wrote {}.{{csv,svg,png}}", stem.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short, busy two-point loop: 64 B frames, a quarter of the
    /// arrivals sampled, small buffers, short delays: both points send
    /// messages, limiters are installed (a table falls back), tags pass
    /// the upstream point to the bottleneck, frames are dropped.
    pub fn short() -> LoopConfig {
        let mut topo = Topology::two_points(6.0, 4.0, 2048, 4000, 60);
        topo.host_delay = 3;
        topo.points[0].next_delay = 5;
        LoopConfig {
            topo,
            frame_len: 64,
            pm: 256,
            idle: 300,
            warmup: 200,
            start_spread: 300,
            window: 500,
            ..LoopConfig::default()
        }
    }

    #[test]
    fn model_and_rtl_loops_agree_on_two_points() {
        let c = short();
        let mut m = ModelLoop::models(&c);
        let mut r = rtl_loop(&c, 7).unwrap();
        m.record_outputs();
        r.record_outputs();
        m.run(6_000).unwrap();
        r.run(6_000).unwrap();
        // The loop did something at both points.
        assert!(m.msgs.iter().all(|&n| n > 10), "messages {:?}", m.msgs);
        assert!(m.drops.iter().sum::<u64>() > 0, "no drops");
        let (mo, ro) = (m.outputs.as_ref().unwrap(), r.outputs.as_ref().unwrap());
        assert_eq!(mo.len(), ro.len());
        let mut kept = 0;
        let mut fallback = false;
        for (t, (a, b)) in mo.iter().zip(ro).enumerate() {
            assert_eq!(a, b, "cycle {t}");
            // A tag naming the bottleneck leaves the upstream point.
            kept += usize::from(a.0[0].msg_rlt_o && !a.0[0].msg_rlt_own_o);
            fallback |= a.1.iter().any(|o| {
                let act = model::bcn_rp::Act::from_code(o.msg_act_o);
                matches!(
                    act,
                    model::bcn_rp::Act::FallbackPrio | model::bcn_rp::Act::FallbackLink
                )
            });
        }
        assert!(kept > 0, "no sample of a frame tagged by the other point");
        assert!(fallback, "no fall-back");
        assert_eq!(m.windows, r.windows);
    }

    #[test]
    fn csv_charts_and_summary() {
        let c = short();
        let r = run(
            &c,
            Length {
                min: 4000,
                max: 4000,
            },
            false,
        )
        .unwrap();
        let text = trace_csv(&c, &r.windows).unwrap();
        assert_eq!(text.lines().count(), 1 + 4000 / 500);
        assert!(text.starts_with("cycle,p0_min,p0_mean,p0_max"));
        let svg = render_svg(&trace_charts(&c, &r.windows), 1, 600, 300).unwrap();
        assert!(svg.contains("<svg"));
        let s = Setting {
            exp: "gains",
            label: "x1".into(),
            x: 0.0,
            cfg: c.clone(),
        };
        let rows: Vec<Row> = (1..=3).map(|seed| row(&s, seed, &r.fig)).collect();
        let sum = summarize(&rows);
        let m = find(&sum, "gains", "x1", "mean").unwrap();
        assert_eq!((m.n, m.runs), (3, 3));
        assert!((m.mean - r.fig.points[1].mean).abs() < 1e-9 && m.ci95 == 0.0);
        // The per-run CSV reads back to the same rows.
        let dir = std::env::temp_dir().join(format!("bcn-study-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let stem = dir.join("s");
        write_study(&rows, &stem).unwrap();
        let back = read_rows(&stem.with_extension("csv")).unwrap();
        assert_eq!(
            crate::sweep::csv_string(&back).unwrap(),
            crate::sweep::csv_string(&rows).unwrap()
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
