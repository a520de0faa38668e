//! The network study of seed 002 (`studies::recn_net`): the RECN network on
//! the verilated `recn_port` ([`rtl_recn_network`]), the sweep over input
//! loads and traffic draws of the three architectures (uniform traffic and
//! the hot spot) and of RECN's options, its statistics (means and 95 %
//! confidence intervals over the draws, paired differences between
//! architectures on the same arrivals), CSV, summary and charts
//! (`switchsim study recn`).

use crate::plot::{render_png, render_svg, Chart, Marker, Series, PALETTE};
use anyhow::{anyhow, bail, Context, Result};
use cosim::lockstep::POWER_ON_RESET;
use cosim::rtl::Rtl;
use model::recn_port::RecnPort;
use model::Block;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use studies::recn_net::arch::Recn;
use studies::recn_net::traffic::Pattern;
use studies::recn_net::{
    recn_network_with, recn_setup, run, victims_sharing_links, Arch, Config, Network, NicKind,
    Release, Stats,
};

/// The RECN network with every switch port on the verilated block.
pub type RtlRecn = Network<Recn<Rtl<RecnPort>>>;

/// The RECN network of `cfg` with every port the verilated `recn_port`
/// (the variant of [`recn_setup`], random initial state from `seed`, held
/// in reset for the power-on cycles).
pub fn rtl_recn_network(cfg: Config, seed: u64) -> Result<RtlRecn> {
    let (p, c) = recn_setup(&cfg);
    RecnPort::check(&p, &c)?;
    if !RecnPort::variants().contains(&p) {
        bail!(
            "no verilated recn_port variant for D={} S={} C={} (RTL runs: --small)",
            p.d,
            p.s,
            p.c
        );
    }
    let np = 2 * cfg.topology().switches() * cfg.topology().radix;
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

/// A variant of an architecture: what is changed from the study's base
/// configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// The base configuration.
    Base,
    /// RECN: vanish notifications from the root mark lines gone.
    RootRelease,
    /// RECN: no in-order markers.
    NoMarkers,
    /// RECN: 16 SAQs per VC.
    Saqs16,
    /// RECN: packets held back for a full detection queue downstream.
    DetXoff,
    /// Interfaces with a queue per (level, destination).
    NicPerDest,
}

impl Variant {
    /// Every variant, base first.
    pub const ALL: [Variant; 6] = [
        Variant::Base,
        Variant::RootRelease,
        Variant::NoMarkers,
        Variant::Saqs16,
        Variant::DetXoff,
        Variant::NicPerDest,
    ];
    /// Its name in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Base => "base",
            Variant::RootRelease => "root release",
            Variant::NoMarkers => "no markers",
            Variant::Saqs16 => "16 SAQs",
            Variant::DetXoff => "detection-queue Xoff",
            Variant::NicPerDest => "interface per destination",
        }
    }
    /// The architectures it applies to.
    pub fn archs(self) -> &'static [Arch] {
        match self {
            Variant::Base | Variant::NicPerDest => &Arch::ALL,
            _ => &[Arch::Recn],
        }
    }
    /// `base` changed by the variant.
    pub fn apply(self, base: &Config) -> Config {
        let mut c = base.clone();
        match self {
            Variant::Base => {}
            Variant::RootRelease => c.release = Release::Root,
            Variant::NoMarkers => c.markers = false,
            Variant::Saqs16 => c.saqs = 16,
            Variant::DetXoff => c.det_xoff = true,
            Variant::NicPerDest => c.nic = NicKind::PerDest,
        }
        c
    }
}

/// One run of the study's CSV.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// `uniform` or `hotspot`.
    pub pattern: String,
    /// The architecture (paper's name).
    pub arch: String,
    /// The variant ([`Variant::name`]).
    pub variant: String,
    /// Input load (fraction of a link).
    pub load: f64,
    /// Traffic seed.
    pub seed: u64,
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
    /// Packets delivered in the window.
    pub pkts: u64,
    /// Share of them delivered out of order.
    pub out_of_order: f64,
    /// Congestion notifications that allocated a line.
    pub ntf_alloc: u64,
    /// ... refreshed one.
    pub ntf_refresh: u64,
    /// ... were dropped for want of a line.
    pub ntf_drop: u64,
    /// Dropped over received congestion notifications.
    pub drop_share: f64,
    /// Notifications to interfaces (refused).
    pub ntf_nic: u64,
    /// Release messages (releases and refusals).
    pub rls_sent: u64,
    /// Wall time of the run, s.
    pub secs: f64,
}

fn r4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

impl Row {
    fn new(pattern: &str, arch: Arch, v: Variant, cfg: &Config, s: &Stats, secs: f64) -> Row {
        let r1 = |x: f64| (x * 10.0).round() / 10.0;
        Row {
            pattern: pattern.into(),
            arch: arch.name().into(),
            variant: v.name().into(),
            load: cfg.load,
            seed: cfg.seed,
            be_offered: r4(s.be_offered()),
            be_throughput: r4(s.be_throughput()),
            thr_sl4: r4(s.throughput(4)),
            thr_sl5: r4(s.throughput(5)),
            thr_sl6: r4(s.throughput(6)),
            thr_sl7: r4(s.throughput(7)),
            qos_ratio: r4(s.qos_ratio()),
            lat_mean_sl0: r1(s.mean_latency(0)),
            lat_mean_sl1: r1(s.mean_latency(1)),
            lat_mean_sl2: r1(s.mean_latency(2)),
            lat_mean_sl3: r1(s.mean_latency(3)),
            lat_max_sl0: s.lat_max[0],
            lat_max_sl1: s.lat_max[1],
            lat_max_sl2: s.lat_max[2],
            lat_max_sl3: s.lat_max[3],
            victim_ratio: r4(s.victim_ratio()),
            pkts: s.pkts,
            out_of_order: (s.out_of_order_share() * 1e6).round() / 1e6,
            ntf_alloc: s.acts[2],
            ntf_refresh: s.acts[3],
            ntf_drop: s.acts[4],
            drop_share: r4(s.drop_share()),
            ntf_nic: s.ntf_nic,
            rls_sent: s.rls_sent,
            secs: r1(secs),
        }
    }
}

/// What the study runs.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The network and traffic (its `load`, `pattern` and `seed` are set
    /// per run).
    pub base: Config,
    /// Input loads, uniform traffic.
    pub loads: Vec<f64>,
    /// Loads of the hot-spot case (each also run uniform).
    pub hot_loads: Vec<f64>,
    /// Traffic draws per point: seeds `1..=seeds`.
    pub seeds: u64,
    /// The variants and the (pattern, load) points they run at.
    pub variants: Vec<Variant>,
    /// Loads of the variants, uniform and hot spot.
    pub variant_loads: (Vec<f64>, Vec<f64>),
    /// RECN on the RTL.
    pub rtl: bool,
    /// Worker threads.
    pub jobs: usize,
}

/// One run of the sweep: pattern name, pattern, load, architecture,
/// variant, seed.
type Work = (&'static str, Pattern, f64, Arch, Variant, u64);

/// The runs of `spec`: every architecture at every load and seed, uniform
/// (at `loads` and `hot_loads`) then hot spot, then the variants.
pub fn work(spec: &Spec) -> Vec<Work> {
    let mut uni: Vec<f64> = spec.loads.clone();
    for &l in &spec.hot_loads {
        if !uni.contains(&l) {
            uni.push(l);
        }
    }
    uni.sort_by(f64::total_cmp);
    let mut w = Vec::new();
    for seed in 1..=spec.seeds {
        for &l in &uni {
            for a in Arch::ALL {
                w.push(("uniform", Pattern::Uniform, l, a, Variant::Base, seed));
            }
        }
        for &l in &spec.hot_loads {
            for a in Arch::ALL {
                w.push(("hotspot", Pattern::HotSpot, l, a, Variant::Base, seed));
            }
        }
        for &v in spec.variants.iter().filter(|&&v| v != Variant::Base) {
            for (name, pat, loads) in [
                ("uniform", Pattern::Uniform, &spec.variant_loads.0),
                ("hotspot", Pattern::HotSpot, &spec.variant_loads.1),
            ] {
                for &l in loads {
                    for &a in v.archs() {
                        w.push((name, pat, l, a, v, seed));
                    }
                }
            }
        }
    }
    w
}

/// Runs every run of `spec`; `progress` is called after each.
pub fn sweep(spec: &Spec, progress: &(dyn Fn(&Row) + Sync)) -> Result<Vec<Row>> {
    let w = work(spec);
    crate::sweep::par_map(&w, spec.jobs, |_, &(name, pattern, load, arch, v, seed)| {
        let cfg = Config {
            load,
            pattern,
            seed,
            ..v.apply(&spec.base)
        };
        let t0 = std::time::Instant::now();
        let s = run_point(&cfg, arch, spec.rtl)?;
        let row = Row::new(name, arch, v, &cfg, &s, t0.elapsed().as_secs_f64());
        progress(&row);
        Ok(row)
    })
}

pub use studies::ci::{mean_ci, t975};

/// The rows of (pattern, arch, variant, load), by seed.
fn by_seed<'a>(
    rows: &'a [Row],
    pattern: &str,
    arch: Arch,
    v: Variant,
    load: f64,
) -> BTreeMap<u64, &'a Row> {
    rows.iter()
        .filter(|r| {
            r.pattern == pattern && r.arch == arch.name() && r.variant == v.name() && r.load == load
        })
        .map(|r| (r.seed, r))
        .collect()
}

/// `f` over the seeds of (pattern, arch, variant, load): mean and CI.
pub fn stat(
    rows: &[Row],
    pattern: &str,
    arch: Arch,
    v: Variant,
    load: f64,
    f: fn(&Row) -> f64,
) -> (f64, f64) {
    let x: Vec<f64> = by_seed(rows, pattern, arch, v, load)
        .values()
        .map(|r| f(r))
        .collect();
    mean_ci(&x)
}

/// The paired difference `f(a) - f(b)` over the seeds both ran (same
/// arrivals), as mean and CI, and relative to `f(b)`'s mean.
#[allow(clippy::too_many_arguments)]
pub fn paired(
    rows: &[Row],
    pattern: &str,
    (a, va): (Arch, Variant),
    (b, vb): (Arch, Variant),
    load: f64,
    f: fn(&Row) -> f64,
) -> ((f64, f64), f64) {
    let ra = by_seed(rows, pattern, a, va, load);
    let rb = by_seed(rows, pattern, b, vb, load);
    let mut d = Vec::new();
    let mut base = Vec::new();
    for (s, x) in &ra {
        if let Some(y) = rb.get(s) {
            d.push(f(x) - f(y));
            base.push(f(y));
        }
    }
    let (m, h) = mean_ci(&d);
    let mb = mean_ci(&base).0;
    ((m, h), m / mb)
}

/// The ratio `mean(num) / mean(den)` of paired samples and its 95 %
/// confidence interval by Fieller's theorem (Student's t): the `x` for which
/// the interval of `num - x den` holds 0. `None` when the interval is not
/// bounded (`den` not clearly away from 0) or with fewer than two samples.
pub fn ratio_ci(num: &[f64], den: &[f64]) -> Option<(f64, f64, f64)> {
    let n = num.len();
    if n < 2 || den.len() != n {
        return None;
    }
    let mean = |x: &[f64]| x.iter().sum::<f64>() / n as f64;
    let (mn, md) = (mean(num), mean(den));
    let cov = |x: &[f64], mx: f64, y: &[f64], my: f64| {
        x.iter()
            .zip(y)
            .map(|(a, b)| (a - mx) * (b - my))
            .sum::<f64>()
            / (n - 1) as f64
    };
    let k = t975(n - 1).powi(2) / n as f64;
    // (mn - x md)^2 = k var(num - x den), a quadratic in x.
    let a = md * md - k * cov(den, md, den, md);
    let b = -2.0 * (mn * md - k * cov(num, mn, den, md));
    let c = mn * mn - k * cov(num, mn, num, mn);
    let disc = b * b - 4.0 * a * c;
    if a <= 0.0 || disc < 0.0 {
        return None;
    }
    let r = disc.sqrt();
    Some((mn / md, (-b - r) / (2.0 * a), (-b + r) / (2.0 * a)))
}

/// What the hot spot takes from the victims under VOQ Switch, and what RECN
/// (variant `v`) recovers of it, over the seeds run by all three: `hurt` =
/// `Switch_uniform - Switch_hot`, `gain` = `RECN_hot - Switch_hot` (the
/// victims' delivered/offered; the gain paired, the same arrivals), each as
/// mean and CI, and the recovered share `mean(gain) / mean(hurt)` with its
/// Fieller interval ([`ratio_ci`]).
pub struct Recovered {
    /// The victims' loss under VOQ Switch.
    pub hurt: (f64, f64),
    /// RECN's gain over VOQ Switch under the hot spot.
    pub gain: (f64, f64),
    /// Share recovered, its interval's low and high end.
    pub share: Option<(f64, f64, f64)>,
}

/// [`Recovered`] at `load` from the study's rows.
pub fn recovered(rows: &[Row], load: f64, v: Variant) -> Option<Recovered> {
    let su = by_seed(rows, "uniform", Arch::VoqSwitch, Variant::Base, load);
    let sh = by_seed(rows, "hotspot", Arch::VoqSwitch, Variant::Base, load);
    let rh = by_seed(rows, "hotspot", Arch::Recn, v, load);
    let mut gain = Vec::new();
    let mut hurt = Vec::new();
    for (s, r) in &rh {
        if let (Some(u), Some(h)) = (su.get(s), sh.get(s)) {
            hurt.push(u.victim_ratio - h.victim_ratio);
            gain.push(r.victim_ratio - h.victim_ratio);
        }
    }
    (!gain.is_empty()).then(|| Recovered {
        hurt: mean_ci(&hurt),
        gain: mean_ci(&gain),
        share: ratio_ci(&gain, &hurt),
    })
}

fn pm((m, h): (f64, f64), digits: usize) -> String {
    if h.is_nan() {
        format!("{m:.digits$}")
    } else {
        format!("{m:.digits$} ± {h:.digits$}")
    }
}

fn loads_of(rows: &[Row], pattern: &str, v: Variant) -> Vec<f64> {
    let mut l: Vec<f64> = rows
        .iter()
        .filter(|r| r.pattern == pattern && r.variant == v.name())
        .map(|r| r.load)
        .collect();
    l.sort_by(f64::total_cmp);
    l.dedup();
    l
}

/// The summary tables (Markdown) of a sweep's rows: means ± 95 % CI over
/// the seeds, paired differences, the hot spot and the variants.
pub fn summary(rows: &[Row], cfg: &Config) -> String {
    let mut s = String::new();
    let seeds = rows.iter().map(|r| r.seed).max().unwrap_or(0);
    let (victims, sharing) = victims_sharing_links(cfg);
    let _ = writeln!(
        s,
        "{} end points, {} traffic draws per point (seeds 1..={seeds}); ± is the half-width of the 95 % confidence interval over the draws (Student's t); differences are paired (the same arrivals).\n",
        cfg.topology().endpoints,
        seeds
    );
    let base = Variant::Base;
    let uni = loads_of(rows, "uniform", base);
    let _ = writeln!(
        s,
        "### Best effort, uniform traffic (Figs. 2 and 3), cells/slot/end point\n"
    );
    let _ = writeln!(
        s,
        "| load | offered | VOQ Net | VOQ Switch | RECN 2 VCs | RECN - VOQ Switch | RECN - VOQ Net |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    let thr: fn(&Row) -> f64 = |r| r.be_throughput;
    for &l in &uni {
        let st = |a| pm(stat(rows, "uniform", a, base, l, thr), 4);
        let off = stat(rows, "uniform", Arch::Recn, base, l, |r| r.be_offered).0;
        let d = |b| {
            let ((m, h), rel) = paired(rows, "uniform", (Arch::Recn, base), (b, base), l, thr);
            format!("{} ({:+.1} %)", pm((m, h), 4), 100.0 * rel)
        };
        let _ = writeln!(
            s,
            "| {l} | {off:.4} | {} | {} | {} | {} | {} |",
            st(Arch::VoqNet),
            st(Arch::VoqSwitch),
            st(Arch::Recn),
            d(Arch::VoqSwitch),
            d(Arch::VoqNet)
        );
    }
    let _ = writeln!(s, "\nPer level (SL 4 / 5 / 6 / 7, means):\n");
    let _ = writeln!(s, "| load | VOQ Net | VOQ Switch | RECN 2 VCs |");
    let _ = writeln!(s, "|---|---|---|---|");
    let sls: [fn(&Row) -> f64; 4] = [|r| r.thr_sl4, |r| r.thr_sl5, |r| r.thr_sl6, |r| r.thr_sl7];
    for &l in &uni {
        let per = |a| {
            sls.iter()
                .map(|f| format!("{:.3}", stat(rows, "uniform", a, base, l, *f).0))
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let _ = writeln!(
            s,
            "| {l} | {} | {} | {} |",
            per(Arch::VoqNet),
            per(Arch::VoqSwitch),
            per(Arch::Recn)
        );
    }
    let _ = writeln!(
        s,
        "\n### QoS (Figs. 4 and 5): delivered/offered, mean latency SL 0 / 3, largest latency SL 0 / 3 (slots)\n"
    );
    let _ = writeln!(
        s,
        "| load | architecture | QoS delivered/offered | mean SL 0 | mean SL 3 | max SL 0 | max SL 3 |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for &l in &uni {
        for a in Arch::ALL {
            let q = |f: fn(&Row) -> f64, d| pm(stat(rows, "uniform", a, base, l, f), d);
            let _ = writeln!(
                s,
                "| {l} | {} | {} | {} | {} | {} | {} |",
                a.name(),
                q(|r| r.qos_ratio, 4),
                q(|r| r.lat_mean_sl0, 1),
                q(|r| r.lat_mean_sl3, 1),
                q(|r| r.lat_max_sl0 as f64, 0),
                q(|r| r.lat_max_sl3 as f64, 0)
            );
        }
    }
    let hot = loads_of(rows, "hotspot", base);
    let _ = writeln!(
        s,
        "\n### Hot spot: the victims' best effort, delivered/offered\n\nOne end point in {} sends its best effort to end point {}; {} of the {} victim flows (source, destination) share a link with a hot flow (route table).\n",
        cfg.hot_every,
        cfg.topology().endpoints - 1,
        sharing,
        victims
    );
    let _ = writeln!(
        s,
        "| load | architecture | uniform | hot spot | hot - uniform (per seed; the two patterns draw apart) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    let vr: fn(&Row) -> f64 = |r| r.victim_ratio;
    for &l in &hot {
        for a in Arch::ALL {
            let u = stat(rows, "uniform", a, base, l, vr);
            let h = stat(rows, "hotspot", a, base, l, vr);
            let du = by_seed(rows, "uniform", a, base, l);
            let dh = by_seed(rows, "hotspot", a, base, l);
            let d: Vec<f64> = dh
                .iter()
                .filter_map(|(k, x)| du.get(k).map(|y| x.victim_ratio - y.victim_ratio))
                .collect();
            let _ = writeln!(
                s,
                "| {l} | {} | {} | {} | {} |",
                a.name(),
                pm(u, 4),
                pm(h, 4),
                pm(mean_ci(&d), 4)
            );
        }
        if let Some(rc) = recovered(rows, l, base) {
            let share = rc.share.map_or("interval unbounded".into(), |(m, lo, hi)| {
                format!("{m:.3} [{lo:.3}, {hi:.3}]")
            });
            let _ = writeln!(
                s,
                "| {l} | VOQ Switch's loss {}; RECN's gain over it {}; RECN recovers (ratio of means, 95 % Fieller interval) | | | {share} |",
                pm(rc.hurt, 4),
                pm(rc.gain, 4),
            );
        }
    }
    let _ = writeln!(
        s,
        "\n### In-order delivery and notifications (base configuration)\n"
    );
    let _ = writeln!(
        s,
        "| pattern | load | architecture | out of order (share of packets) | congestion notifications dropped (share) | allocations | to interfaces |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for (pat, ls) in [("uniform", &uni), ("hotspot", &hot)] {
        for &l in ls {
            for a in Arch::ALL {
                let q = |f: fn(&Row) -> f64, d| pm(stat(rows, pat, a, base, l, f), d);
                let (ds, al, ni) = if a == Arch::Recn {
                    (
                        q(|r| r.drop_share, 4),
                        q(|r| r.ntf_alloc as f64, 0),
                        q(|r| r.ntf_nic as f64, 0),
                    )
                } else {
                    ("-".into(), "-".into(), "-".into())
                };
                let _ = writeln!(
                    s,
                    "| {pat} | {l} | {} | {} | {ds} | {al} | {ni} |",
                    a.name(),
                    q(|r| r.out_of_order, 6)
                );
            }
        }
    }
    let vs: Vec<Variant> = Variant::ALL
        .into_iter()
        .filter(|v| *v != base && rows.iter().any(|r| r.variant == v.name()))
        .collect();
    if !vs.is_empty() {
        let _ = writeln!(
            s,
            "\n### Variants against the base configuration (paired, same arrivals)\n"
        );
        let _ = writeln!(
            s,
            "| variant | architecture | pattern | load | best effort | variant - base | victims | variant - base | out of order | drops (share) |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
        for v in vs {
            for pat in ["uniform", "hotspot"] {
                for l in loads_of(rows, pat, v) {
                    for &a in v.archs() {
                        let q = |f: fn(&Row) -> f64, d| pm(stat(rows, pat, a, v, l, f), d);
                        let dd = |f| pm(paired(rows, pat, (a, v), (a, base), l, f).0, 4);
                        let _ = writeln!(
                            s,
                            "| {} | {} | {pat} | {l} | {} | {} | {} | {} | {} | {} |",
                            v.name(),
                            a.name(),
                            q(thr, 4),
                            dd(thr),
                            q(vr, 4),
                            dd(vr),
                            q(|r| r.out_of_order, 6),
                            q(|r| r.drop_share, 4)
                        );
                    }
                }
            }
        }
    }
    s
}

/// The charts, by file suffix: `fig2` (global best-effort throughput),
/// `fig3` (each best-effort level), `fig4` and `fig5` (mean and largest
/// latency of each QoS level), `hotspot` (the victims' throughput under the
/// hot spot and uniform traffic). Means over the seeds; vertical bars: the
/// 95 % confidence intervals.
pub fn charts(rows: &[Row]) -> Vec<(&'static str, usize, Vec<Chart>)> {
    type Y = fn(&Row) -> f64;
    let marker = [Marker::Circle, Marker::Square, Marker::Triangle];
    let series = |pattern: &str, y: Y, dashed: bool| -> Vec<Series> {
        let mut out = Vec::new();
        for (i, a) in Arch::ALL.iter().enumerate() {
            let loads = loads_of(rows, pattern, Variant::Base);
            let st: Vec<(f64, (f64, f64))> = loads
                .iter()
                .map(|&l| (l, stat(rows, pattern, *a, Variant::Base, l, y)))
                .collect();
            let pts = st.iter().map(|&(l, (m, _))| (l, m)).collect();
            let label = if dashed {
                format!("{} (uniform)", a.name())
            } else {
                a.name().to_string()
            };
            let mut s = Series::new(label, pts, PALETTE[i]).with_marker(marker[i]);
            if dashed {
                s = s.dashed();
            }
            out.push(s);
            // The confidence intervals: one vertical segment per point.
            let mut bars = Vec::new();
            for &(l, (m, h)) in &st {
                if h.is_finite() {
                    bars.extend([(l, m - h), (l, m + h), (f64::NAN, f64::NAN)]);
                }
            }
            out.push(Series::new("", bars, PALETTE[i]));
        }
        out
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
    let mut victims = series("hotspot", |r| r.victim_ratio, false);
    victims.extend(series("uniform", |r| r.victim_ratio, true));
    vec![
        (
            "fig2",
            1,
            vec![chart(
                "Fig. 2: best-effort throughput (SL 4-7)".into(),
                "cells/slot/end point",
                series("uniform", |r| r.be_throughput, false),
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
                        series("uniform", thr[i], false),
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
                        series("uniform", mean[i], false),
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
                        series("uniform", max[i], false),
                    )
                })
                .collect(),
        ),
        (
            "hotspot",
            2,
            vec![
                chart(
                    "Victims' best effort delivered/offered".into(),
                    "ratio",
                    victims,
                ),
                chart(
                    "Hot spot: best-effort throughput".into(),
                    "cells/slot/end point",
                    series("hotspot", |r| r.be_throughput, false),
                ),
            ],
        ),
    ]
}

/// Writes the charts of `rows` beside `stem` (`stem_<fig>.svg` / `.png`).
pub fn write_charts(rows: &[Row], stem: &Path) -> Result<()> {
    let name = stem
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| anyhow!("{}: not a file stem", stem.display()))?;
    for (fig, cols, ch) in charts(rows) {
        let f = stem.with_file_name(format!("{name}_{fig}"));
        let svg = f.with_extension("svg");
        std::fs::write(&svg, render_svg(&ch, cols, 640, 420)?)
            .with_context(|| format!("writing {}", svg.display()))?;
        let png = f.with_extension("png");
        std::fs::write(&png, render_png(&ch, cols, 640, 420)?)
            .with_context(|| format!("writing {}", png.display()))?;
    }
    Ok(())
}

/// Writes `stem.csv`, `stem_summary.md` and the charts.
pub fn write(rows: &[Row], cfg: &Config, stem: &Path) -> Result<()> {
    if let Some(d) = stem.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let csv = stem.with_extension("csv");
    std::fs::write(&csv, crate::sweep::csv_string(rows)?)
        .with_context(|| format!("writing {}", csv.display()))?;
    let md = stem.with_file_name(format!(
        "{}_summary.md",
        stem.file_name()
            .and_then(|s| s.to_str())
            .unwrap_or("recn_net")
    ));
    std::fs::write(&md, summary(rows, cfg)).with_context(|| format!("writing {}", md.display()))?;
    write_charts(rows, stem)
}

/// Reads the rows of a study CSV.
pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    r.deserialize()
        .enumerate()
        .map(|(k, x)| x.with_context(|| format!("{}: row {}", path.display(), k + 1)))
        .collect()
}

/// `switchsim study recn`: the sweep of `spec`, written to `stem.csv`,
/// `stem_summary.md` and the charts beside them.
pub fn cmd_recn_net(spec: &Spec, stem: &Path) -> Result<u8> {
    if let Some(l) = spec
        .loads
        .iter()
        .chain(&spec.hot_loads)
        .chain(&spec.variant_loads.0)
        .chain(&spec.variant_loads.1)
        .find(|l| !(**l > 0.0 && **l <= 1.0))
    {
        return Err(anyhow!("--loads: {l} is not in (0, 1]"));
    }
    if spec.seeds == 0 {
        bail!("--seeds: must be at least 1");
    }
    let topo = spec.base.topology();
    let b = &spec.base;
    let (victims, sharing) = victims_sharing_links(b);
    println!(
        "study recn: {} end points ({} stages of {}-port switches, speed-up {}, links {} slots), loads {:?}, hot spot {:?} (one source in {}; {sharing} of {victims} victim flows share a link with a hot flow), {} seeds, {} + {} slots, variants {:?} at {:?}, RECN on the {} ({} runs)",
        topo.endpoints,
        b.stages,
        topo.radix,
        b.speedup,
        b.link_delay,
        spec.loads,
        spec.hot_loads,
        b.hot_every,
        spec.seeds,
        b.warmup,
        b.slots,
        spec.variants.iter().map(|v| v.name()).collect::<Vec<_>>(),
        spec.variant_loads,
        if spec.rtl { "RTL" } else { "model" },
        work(spec).len()
    );
    let t0 = std::time::Instant::now();
    let rows = sweep(spec, &|r| {
        println!(
            "  {:<8} {:<11} {:<20} load {:.2} seed {}: BE {:.4} of {:.4}  QoS {:.3}  victims {:.3}  out of order {:.5}  drops {:.3}  ({:.1} s)",
            r.pattern,
            r.arch,
            r.variant,
            r.load,
            r.seed,
            r.be_throughput,
            r.be_offered,
            r.qos_ratio,
            r.victim_ratio,
            r.out_of_order,
            r.drop_share,
            r.secs
        );
    })?;
    write(&rows, &spec.base, stem)?;
    println!(
        "wrote {}.csv, {}_summary.md and {}_{{fig2,fig3,fig4,fig5,hotspot}}.{{svg,png}} ({:.1} s)",
        stem.display(),
        stem.display(),
        stem.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(0)
}

/// `switchsim study recn --plot-only CSV`: the summary and charts of an
/// existing CSV, beside it.
pub fn cmd_plot_only(csv: &Path, cfg: &Config) -> Result<u8> {
    let rows = read_csv(csv)?;
    if rows.is_empty() {
        bail!("{}: no rows", csv.display());
    }
    let stem = csv.with_extension("");
    let md = stem.with_file_name(format!(
        "{}_summary.md",
        stem.file_name()
            .and_then(|s| s.to_str())
            .unwrap_or("recn_net")
    ));
    std::fs::write(&md, summary(&rows, cfg))
        .with_context(|| format!("writing {}", md.display()))?;
    write_charts(&rows, &stem)?;
    println!(
        "wrote {} and the charts beside {}",
        md.display(),
        csv.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_and_intervals() {
        assert_eq!(t975(7), 2.365);
        let (m, h) = mean_ci(&[1.0, 2.0, 3.0, 4.0]);
        assert!((m - 2.5).abs() < 1e-12);
        // s = 1.291, t(3) = 3.182: 3.182 * 1.291 / 2.
        assert!((h - 2.0540).abs() < 1e-3, "{h}");
        assert!(mean_ci(&[5.0]).1.is_nan());
        // num = 2 den exactly: the ratio and both ends of its interval are 2.
        let (r, lo, hi) = ratio_ci(&[2.0, 4.0, 6.0, 8.0], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((r - 2.0).abs() < 1e-12 && (lo - 2.0).abs() < 1e-9 && (hi - 2.0).abs() < 1e-9);
        // Noisy: the interval holds the ratio of means and widens with the
        // noise of the denominator.
        let num = [0.9, 1.1, 1.0, 1.2, 0.8];
        let (r, lo, hi) = ratio_ci(&num, &[1.0, 1.0, 1.0, 1.0, 1.0]).unwrap();
        let (m, h) = mean_ci(&num);
        assert!(
            (r - m).abs() < 1e-12 && (lo - (m - h)).abs() < 1e-9 && (hi - (m + h)).abs() < 1e-9
        );
        let (_, lo2, hi2) = ratio_ci(&num, &[0.8, 1.2, 1.0, 0.9, 1.1]).unwrap();
        assert!(lo2 < lo && hi2 > hi, "{lo2} {hi2}");
        // A denominator not clearly away from 0: no bounded interval.
        assert!(ratio_ci(&num, &[1.0, -1.0, 1.0, -1.0, 0.5]).is_none());
    }

    #[test]
    fn csv_summary_and_charts_of_a_small_sweep() {
        let spec = Spec {
            base: Config {
                warmup: 200,
                slots: 800,
                ..Config::small(0.5)
            },
            loads: vec![0.3],
            hot_loads: vec![0.6],
            seeds: 2,
            variants: vec![Variant::NoMarkers],
            variant_loads: (vec![], vec![0.6]),
            rtl: false,
            jobs: 2,
        };
        let rows = sweep(&spec, &|_| {}).unwrap();
        // 2 seeds x (2 uniform loads + 1 hot) x 3 + 2 x 1 variant run.
        assert_eq!(rows.len(), 2 * 9 + 2);
        let text = crate::sweep::csv_string(&rows).unwrap();
        assert!(text.starts_with("pattern,arch,variant,load,seed,be_offered,"));
        assert_eq!(text.lines().count(), rows.len() + 1);
        // The CSV reads back as written.
        let dir = std::env::temp_dir().join(format!("recn-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.csv");
        std::fs::write(&f, &text).unwrap();
        assert_eq!(read_csv(&f).unwrap(), rows);
        std::fs::remove_dir_all(&dir).ok();
        let md = summary(&rows, &spec.base);
        assert!(md.contains("| 0.6 | RECN 2 VCs |"), "{md}");
        assert!(md.contains("RECN recovers"));
        assert!(md.contains("| no markers | RECN 2 VCs | hotspot | 0.6 |"));
        let ch = charts(&rows);
        assert_eq!(ch.len(), 5);
        // Per architecture a curve and its confidence bars.
        assert_eq!(ch[0].2[0].series.len(), 6);
        assert_eq!(ch[0].2[0].series[4].points.len(), 2);
        assert_eq!(ch[0].2[0].series[5].points.len(), 2 * 3);
        assert_eq!(ch[4].2[0].series.len(), 12);
        let svg = render_svg(&ch[1].2, 2, 640, 420).unwrap();
        assert!(svg.contains("RECN 2 VCs"));
    }
}
