//! The studies: `sweep` (the STX system against its analytic model),
//! `bcn-loop` (the BCN closed loop), `recn-net` (the RECN network of seed
//! 002) and `size` (buffer sizing), with their options.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// The plots of the sweep CSV `csv`: beside it, with extensions `.svg`
/// and `.png` (the paper's comparison), and `_policies.svg`,
/// `_policies.png` (the STX policies and delivery schemes).
pub fn sweep_plot_paths(csv: &Path) -> Result<[PathBuf; 4]> {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pol = |ext: &str| csv.with_file_name(format!("{stem}_policies.{ext}"));
    let paths = [
        csv.with_extension("svg"),
        csv.with_extension("png"),
        pol("svg"),
        pol("png"),
    ];
    if paths.iter().any(|p| p == csv) {
        bail!(
            "{}: the sweep CSV cannot have the extension .svg or .png, which its plots take",
            csv.display()
        );
    }
    Ok(paths)
}

/// Plots the sweep CSV `text` (read from `csv`) to `svg` and `png`, and
/// the policies and schemes to `psvg` and `ppng`.
pub fn write_sweep_plot(
    text: &str,
    csv: &Path,
    [svg, png, psvg, ppng]: &[PathBuf; 4],
) -> Result<()> {
    let rows = crate::study::stx::parse_sweep_csv(text, csv)?;
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
        Ok::<_, anyhow::Error>(())
    };
    write(svg, crate::study::stx::sweep_svg(&rows)?.as_bytes())?;
    write(png, &crate::study::stx::sweep_png(&rows)?)?;
    write(psvg, crate::study::stx::policy_svg(&rows)?.as_bytes())?;
    write(ppng, &crate::study::stx::policy_png(&rows)?)
}

/// `sweep --plot-only`: plots an existing sweep CSV.
pub fn cmd_sweep_plot(csv: &Path) -> Result<u8> {
    let plots = sweep_plot_paths(csv)?;
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
    write_sweep_plot(&text, csv, &plots)?;
    Ok(0)
}

fn sweep_points(spec: crate::study::stx::SweepSpec, out: &Path) -> Result<u8> {
    use crate::study::stx::{csv_text, sweep};
    let plots = sweep_plot_paths(out)?;
    if !spec.rtt.is_multiple_of(2) || !(2..=126).contains(&spec.rtt) {
        return Err(anyhow!("--rtt {}: must be even, in 2..=126", spec.rtt));
    }
    if !spec.n.is_power_of_two() || !(2..=64).contains(&spec.n) {
        return Err(anyhow!("--n {}: must be a power of two in 2..=64", spec.n));
    }
    if let Some(l) = spec.loads.iter().find(|l| !(**l > 0.0 && **l < 1.0)) {
        return Err(anyhow!("--loads: {l} is not in (0, 1)"));
    }
    if let Some(r) = spec.rs.iter().find(|r| !(1..=127).contains(*r)) {
        return Err(anyhow!("--r: {r} receivers is not in 1..=127"));
    }
    if !(1..=8).contains(&spec.iters) {
        return Err(anyhow!("--iters {}: must be in 1..=8", spec.iters));
    }
    println!(
        "sweep: N={} RTT={} R={:?} loads={:?} iSLIP x{} warm-up {} + {} measured slots, {} arbiter, traffic {:?}, policies {:?}, schemes {:?}{}, VOQs of {}: {} runs",
        spec.n,
        spec.rtt,
        spec.rs,
        spec.loads,
        spec.iters,
        spec.warmup,
        spec.slots,
        if spec.rtl { "RTL" } else { "model" },
        spec.traffics.iter().map(|t| t.name()).collect::<Vec<_>>(),
        spec.policies.iter().map(|&p| crate::study::stx::policy_name(p)).collect::<Vec<_>>(),
        spec.schemes.iter().map(|&s| crate::study::stx::scheme_name(s)).collect::<Vec<_>>(),
        if spec.cross { " (every combination)" } else { "" },
        spec.voq,
        spec.jobs().len()
    );
    let t0 = std::time::Instant::now();
    let points = sweep(&spec, &|p| {
        println!(
            "  {:<9} {:<7} {:<6} {:<3} load {:.2}: delay {:8.2} +- {:5.2}  throughput {:.4}  P_Ss {:.3}  refused {}  lost {}  ({:.1} s)",
            spec.traffics[p.job.traffic].name(),
            p.r.map_or("no STX".to_string(), |r| format!("R={r}")),
            crate::study::stx::policy_name(p.job.policy),
            crate::study::stx::scheme_name(p.job.scheme),
            p.load,
            p.stats.mean_delay(),
            p.stats.delay_ci95(),
            p.stats.throughput(),
            p.stats.p_ss(),
            p.stats.arr_dropped,
            p.stats.lost,
            p.secs
        );
    })?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = csv_text(&spec, &points)?;
    std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} points, {:.1} s)",
        out.display(),
        points.len(),
        t0.elapsed().as_secs_f64()
    );
    write_sweep_plot(&text, out, &plots)?;
    Ok(u8::from(points.iter().any(|p| !p.complete)))
}

/// The options of `switchsim sweep`.
#[derive(clap::Args, Debug)]
pub struct SweepOpts {
    /// Ports.
    #[arg(long, default_value_t = 64)]
    pub n: usize,
    /// Round trip in slots (even, 2..=126).
    #[arg(long, default_value_t = 64)]
    pub rtt: u64,
    /// Receivers per output, one STX curve each (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,8")]
    pub r: Vec<usize>,
    /// Loads (comma separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9"
    )]
    pub loads: Vec<f64>,
    /// iSLIP iterations (the paper: 6).
    #[arg(long, default_value_t = 6)]
    pub iters: usize,
    /// Warm-up slots per point.
    #[arg(long, default_value_t = 4000)]
    pub warmup: u64,
    /// Measured slots per point (cells arriving in them are measured).
    #[arg(long, default_value_t = 30_000)]
    pub slots: u64,
    /// Traffic seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Traffic patterns (comma separated): `bernoulli` (uniform, the
    /// paper's), `onoffL` (on/off bursts of mean length L, e.g. `onoff16`).
    #[arg(long, value_delimiter = ',', default_value = "bernoulli")]
    pub traffic: Vec<String>,
    /// Bursty on/off traffic with this mean burst length instead of the
    /// `--traffic` list (same as `--traffic onoffL`).
    #[arg(long)]
    pub burst: Option<f64>,
    /// STX policies of the input adapters (comma separated): `ocf` (the
    /// paper's), `random`, `ycf`.
    #[arg(long, value_delimiter = ',', default_value = "ocf")]
    pub policies: Vec<String>,
    /// Reliable-delivery schemes (comma separated): `sr` (the paper's),
    /// `gbn`, `saw`.
    #[arg(long, value_delimiter = ',', default_value = "sr")]
    pub schemes: Vec<String>,
    /// Every combination of policy and scheme (default: OCF with every
    /// scheme, SR with every policy).
    #[arg(long)]
    pub cross: bool,
    /// VOQ depth of the input adapters (a power of two, 2..=512).
    #[arg(long, default_value_t = 256)]
    pub voq: usize,
    /// Run the arbiter's verilated RTL instead of its model.
    #[arg(long)]
    pub rtl: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Output CSV file; the plots go beside it, with extensions `.svg` and
    /// `.png`.
    #[arg(long, default_value = "out/stx_sweep.csv")]
    pub out: PathBuf,
    /// Simulate nothing: plot an existing sweep CSV to an SVG and a PNG
    /// beside it.
    #[arg(
        long,
        value_name = "CSV",
        conflicts_with_all = [
            "n", "rtt", "r", "loads", "iters", "warmup", "slots", "seed", "burst", "rtl",
            "jobs", "out", "traffic", "policies", "schemes", "cross", "voq",
        ]
    )]
    pub plot_only: Option<PathBuf>,
}

/// `switchsim sweep`.
pub fn cmd_sweep(o: SweepOpts) -> Result<u8> {
    if let Some(csv) = &o.plot_only {
        return cmd_sweep_plot(csv);
    }
    use crate::study::stx::TrafficKind;
    use studies::stx_system::{Policy, Scheme};
    let traffics = match o.burst {
        Some(b) => vec![TrafficKind::OnOff(b)],
        None => o
            .traffic
            .iter()
            .map(|t| match t.as_str() {
                "bernoulli" => Ok(TrafficKind::Bernoulli),
                x => x
                    .strip_prefix("onoff")
                    .and_then(|b| b.parse::<f64>().ok())
                    .filter(|b| *b >= 1.0)
                    .map(TrafficKind::OnOff)
                    .ok_or_else(|| {
                        anyhow!(
                            "--traffic {x}: expected bernoulli or onoffL (L >= 1, e.g. onoff16)"
                        )
                    }),
            })
            .collect::<Result<_>>()?,
    };
    let policies = o
        .policies
        .iter()
        .map(|p| match p.as_str() {
            "ocf" => Ok(Policy::Ocf),
            "random" => Ok(Policy::Random),
            "ycf" => Ok(Policy::Ycf),
            x => Err(anyhow!("--policies {x}: expected ocf, random or ycf")),
        })
        .collect::<Result<_>>()?;
    let schemes = o
        .schemes
        .iter()
        .map(|s| match s.as_str() {
            "sr" => Ok(Scheme::Sr),
            "gbn" => Ok(Scheme::Gbn),
            "saw" => Ok(Scheme::Saw),
            x => Err(anyhow!("--schemes {x}: expected sr, gbn or saw")),
        })
        .collect::<Result<_>>()?;
    if !o.voq.is_power_of_two() || !(2..=512).contains(&o.voq) {
        bail!("--voq {}: must be a power of two in 2..=512", o.voq);
    }
    sweep_points(
        crate::study::stx::SweepSpec {
            n: o.n,
            rtt: o.rtt,
            rs: o.r,
            loads: o.loads,
            iters: o.iters,
            warmup: o.warmup,
            slots: o.slots,
            seed: o.seed,
            traffics,
            policies,
            schemes,
            cross: o.cross,
            voq: o.voq,
            rtl: o.rtl,
            jobs: o.jobs,
        },
        &o.out,
    )
}

/// The options of `switchsim study bcn` (old name `bcn-loop`).
#[derive(clap::Args, Debug)]
pub struct BcnLoopOpts {
    /// Topology: `two` (two congestion points in series, 16 hosts, 18
    /// flows; docs/bcn.md) or `one` (one point, `--sources` greedy hosts).
    #[arg(long, default_value = "two")]
    pub topology: String,
    /// Hosts of the `one` topology.
    #[arg(long, default_value_t = 4)]
    pub sources: usize,
    /// Frame length, bytes.
    #[arg(long, default_value_t = 1500)]
    pub frame_len: u16,
    /// Line rate of each host, bytes per cycle.
    #[arg(long, default_value_t = 8.0)]
    pub line_rate: f64,
    /// Drain rate of the bottleneck, bytes per cycle.
    #[arg(long, default_value_t = 4.0)]
    pub drain: f64,
    /// Drain rate of the upstream point (`two`), bytes per cycle.
    #[arg(long, default_value_t = 8.0)]
    pub drain_up: f64,
    /// Control delay of the bottleneck's messages, cycles (the upstream
    /// point's: half of it).
    #[arg(long, default_value_t = 1000)]
    pub delay: u64,
    /// Gd = 2^-GD.
    #[arg(long, default_value_t = 7)]
    pub gd: u8,
    /// Gi = 2^-GI.
    #[arg(long, default_value_t = 4)]
    pub gi: u8,
    /// W, in quarters (0..31): 8 is W = 2.
    #[arg(long, default_value_t = 8)]
    pub w: u8,
    /// Pm = PM / 1024 (10: the seed's 1/100; 1024: every arrival).
    #[arg(long, default_value_t = 10)]
    pub pm: u16,
    /// Qeq of every point, bytes.
    #[arg(long, default_value_t = 26_000)]
    pub qeq: u32,
    /// Queue and buffer limit of every point, bytes.
    #[arg(long, default_value_t = 150_000)]
    pub buffer: u32,
    /// One CPID for both points (the rules before docs/bcn_cp.md's
    /// "Several congestion points").
    #[arg(long)]
    pub shared_cpid: bool,
    /// Seed of the run (start times, sampling phases).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cycles to run at least (after the warm-up).
    #[arg(long, default_value_t = 10_000_000)]
    pub cycles: u64,
    /// Cycles to run at most: a run whose bottleneck has not settled
    /// within the first half of its length (the second half is the steady
    /// state) doubles, up to this.
    #[arg(long, default_value_t = 20_000_000)]
    pub max_cycles: u64,
    /// Cycles per recorded window.
    #[arg(long, default_value_t = 10_000)]
    pub window: u64,
    /// Run the verilated RTL of every block instead of the models.
    #[arg(long)]
    pub rtl: bool,
    /// The study: every experiment (or those of --exp) over --seeds seeds.
    #[arg(long)]
    pub sweep: bool,
    /// Seeds per setting of the study.
    #[arg(long, default_value_t = 8)]
    pub seeds: u64,
    /// Experiments of the study (comma separated: gains, pm1, rules, w,
    /// delay, buffer, offset; default all).
    #[arg(long, value_delimiter = ',')]
    pub exp: Vec<String>,
    /// Gain step the study's rules, w, delay and buffer experiments use
    /// (Gd and Gi x 4^-STEP).
    #[arg(long, default_value_t = 2)]
    pub rec: i32,
    /// Keep the runs the study's CSV already holds and run the others.
    #[arg(long)]
    pub resume: bool,
    /// Study threads.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Redraw the study's summary and charts from its per-run CSV.
    #[arg(long)]
    pub plot_only: Option<PathBuf>,
    /// Output stem: STEM.csv, STEM.svg, STEM.png (default out/bcn_loop, or
    /// out/bcn_sweep with --sweep; the study adds STEM_summary.csv).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `switchsim study bcn`.
pub fn cmd_bcn_loop(o: BcnLoopOpts) -> Result<u8> {
    use studies::bcn_loop::{LoopConfig, Topology};
    if let Some(p) = &o.plot_only {
        let rows = crate::study::bcn::read_rows(p)?;
        let stem = p.with_extension("");
        crate::study::bcn::write_study(&rows, &stem)?;
        println!("wrote {0}_summary.csv, {0}.{{svg,png}}", stem.display());
        return Ok(0);
    }
    let mut topo = match o.topology.as_str() {
        "two" => Topology::two_points(o.drain_up, o.drain, o.qeq, o.buffer, o.delay),
        "one" => Topology::one_point(o.sources, o.drain, o.qeq, o.buffer, o.delay),
        t => return Err(anyhow::anyhow!("--topology {t}: legal values are one, two")),
    };
    if o.shared_cpid {
        let c = topo.points[0].cpid;
        topo.points.iter_mut().for_each(|p| p.cpid = c);
    }
    let cfg = LoopConfig {
        topo,
        frame_len: o.frame_len,
        line_rate: o.line_rate,
        pm: o.pm,
        w: o.w,
        gd: o.gd,
        gi: o.gi,
        seed: o.seed,
        window: o.window,
        ..Default::default()
    };
    let len = crate::study::bcn::Length {
        min: o.cycles,
        max: o.max_cycles,
    };
    let sweep = o.sweep.then(|| crate::study::bcn::StudyOpts {
        seeds: o.seeds,
        len,
        rtl: o.rtl,
        jobs: o.jobs,
        exps: o.exp.clone(),
        rec: o.rec,
        resume: o.resume,
    });
    crate::study::bcn::cmd_bcn_loop(&cfg, len, o.rtl, sweep, o.out)
}

/// The options of `switchsim study recn` (alias `recn-net`).
#[derive(clap::Args, Debug)]
pub struct RecnNetOpts {
    /// Input loads, uniform traffic (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "0.2,0.5,0.7,0.8,0.9,1.0")]
    pub loads: Vec<f64>,
    /// Loads of the hot-spot case, each also run uniform (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "0.5,0.8,1.0")]
    pub hot_loads: Vec<f64>,
    /// One end point in this many is a hot source (default: 8; 4 with --small).
    #[arg(long)]
    pub hot_every: Option<usize>,
    /// Traffic draws per point (seeds 1..=N).
    #[arg(long, default_value_t = 8)]
    pub seeds: u64,
    /// Variants run beside the base configuration (comma separated: root,
    /// nomarkers, saqs16, detxoff, nicdest; `none` for none).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "root,nomarkers,saqs16,detxoff,nicdest"
    )]
    pub variants: Vec<String>,
    /// Uniform loads of the variants (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "0.9")]
    pub variant_loads: Vec<f64>,
    /// Hot-spot loads of the variants (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "0.8")]
    pub variant_hot_loads: Vec<f64>,
    /// Warm-up slots per run.
    #[arg(long, default_value_t = 3_000)]
    pub warmup: u64,
    /// Measured slots per run.
    #[arg(long, default_value_t = 8_000)]
    pub slots: u64,
    /// Crossbar speed-up (ticks per slot, 1..=4).
    #[arg(long, default_value_t = 2)]
    pub speedup: u32,
    /// Link propagation delay, slots (data, credits, notifications).
    #[arg(long, default_value_t = 2)]
    pub link_delay: u64,
    /// RECN's SAQs per VC (default: 8; 2 with --small).
    #[arg(long)]
    pub saqs: Option<usize>,
    /// The 16-end-point network of 4-port switches (64-cell ports, packets
    /// of up to 8 cells) instead of the paper's 128 end points.
    #[arg(long)]
    pub small: bool,
    /// RECN ports on the verilated `recn_port` instead of its model.
    #[arg(long)]
    pub rtl: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Output stem: STEM.csv, STEM_summary.md and
    /// STEM_{fig2,fig3,fig4,fig5,hotspot}.{svg,png}.
    #[arg(long, default_value = "out/recn_net")]
    pub out: PathBuf,
    /// Only write the summary and charts of an existing CSV, beside it.
    #[arg(long)]
    pub plot_only: Option<PathBuf>,
}

/// `switchsim study recn`.
pub fn cmd_recn_net(o: RecnNetOpts) -> Result<u8> {
    use crate::study::recn::Variant;
    use studies::recn_net::Config;
    let base = if o.small {
        Config::small(0.5)
    } else {
        Config::paper(0.5)
    };
    if o.slots == 0 {
        bail!("--slots: must be at least 1");
    }
    if !(1..=4).contains(&o.speedup) {
        bail!("--speedup {}: must be in 1..=4", o.speedup);
    }
    let saqs = o.saqs.unwrap_or(base.saqs);
    if !(1..=16).contains(&saqs) {
        bail!("--saqs {saqs}: must be in 1..=16 (the block's S)");
    }
    let hot_every = o.hot_every.unwrap_or(base.hot_every);
    if hot_every < 2 {
        bail!("--hot-every {hot_every}: must be at least 2");
    }
    let base = Config {
        warmup: o.warmup,
        slots: o.slots,
        speedup: o.speedup,
        link_delay: o.link_delay,
        saqs,
        hot_every,
        ..base
    };
    let mut variants = vec![Variant::Base];
    for v in &o.variants {
        variants.push(match v.as_str() {
            "none" => continue,
            "root" => Variant::RootRelease,
            "nomarkers" => Variant::NoMarkers,
            "saqs16" => Variant::Saqs16,
            "detxoff" => Variant::DetXoff,
            "nicdest" => Variant::NicPerDest,
            _ => bail!(
                "--variants: `{v}` is not one of root, nomarkers, saqs16, detxoff, nicdest, none"
            ),
        });
    }
    if let Some(csv) = &o.plot_only {
        return crate::study::recn::cmd_plot_only(csv, &base);
    }
    crate::study::recn::cmd_recn_net(
        &crate::study::recn::Spec {
            base,
            loads: o.loads,
            hot_loads: o.hot_loads,
            seeds: o.seeds,
            variants,
            variant_loads: (o.variant_loads, o.variant_hot_loads),
            rtl: o.rtl,
            jobs: o.jobs,
        },
        &o.out,
    )
}

/// The options of `switchsim size`.
#[derive(clap::Args, Debug)]
pub struct SizeOpts {
    /// Link speed, Gb/s.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().gbps)]
    pub speed: f64,
    /// Cable length in m, one per ingress port (comma separated), or one for every port.
    #[arg(long, value_delimiter = ',', default_value = "300")]
    pub cable: Vec<f64>,
    /// Propagation speed, a fraction of c.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().velocity)]
    pub velocity: f64,
    /// MTU, bytes.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().mtu)]
    pub mtu: u64,
    /// The peer's response time, ns (default: the PFC cap, 3840 B / C).
    #[arg(long)]
    pub response: Option<f64>,
    /// Cell size, bytes.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().cell)]
    pub cell: u64,
    /// Clock, GHz.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().clock_ghz)]
    pub clock: f64,
    /// One credit every this many cycles.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().credit_interval)]
    pub credit_interval: u64,
    /// Fabric speed-up.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().speedup)]
    pub speedup: f64,
    /// Credit loop RTT, ns (default: 2 Dprop of the longest cable + the response time).
    #[arg(long)]
    pub rtt: Option<f64>,
    /// Cell-fabric utilisation rho.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().load)]
    pub load: f64,
    /// Cell-fabric loss probability target.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().loss)]
    pub loss: f64,
    /// Switch bandwidth for the pipeline count, Gb/s (default: cables x speed).
    #[arg(long)]
    pub switch: Option<f64>,
    /// Datapath width, bytes.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().bus)]
    pub bus: u64,
    /// MMU buffer, cells (default: the largest the MMU variant counts).
    #[arg(long)]
    pub buffer_cells: Option<u64>,
    /// Lossless priorities, a bit mask.
    #[arg(long, default_value_t = crate::size::SizeArgs::default().lossless)]
    pub lossless: u8,
    /// Write the MMU configuration (TOML) to this file instead of printing it.
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Write the credit scheduler configuration (TOML) to this file instead of printing it.
    #[arg(long)]
    pub write_credit: Option<PathBuf>,
}

/// `switchsim size`.
pub fn cmd_size(o: SizeOpts) -> Result<u8> {
    let a = crate::size::SizeArgs {
        gbps: o.speed,
        cables: o.cable,
        velocity: o.velocity,
        mtu: o.mtu,
        response_ns: o.response,
        cell: o.cell,
        clock_ghz: o.clock,
        credit_interval: o.credit_interval,
        speedup: o.speedup,
        rtt_ns: o.rtt,
        load: o.load,
        loss: o.loss,
        switch_gbps: o.switch,
        bus: o.bus,
        buffer_cells: o.buffer_cells,
        lossless: o.lossless,
    };
    let s = crate::size::size(&a)?;
    print!("{}", s.text);
    for (path, toml, what) in [
        (o.write.as_deref(), s.mmu_toml(), "mmu"),
        (o.write_credit.as_deref(), s.credit_toml(), "credit"),
    ] {
        match path {
            Some(p) => {
                std::fs::write(p, &toml)
                    .with_context(|| format!("cannot write {}", p.display()))?;
                println!(
                    "wrote {} (switchsim run {what} --config {})",
                    p.display(),
                    p.display()
                );
            }
            None => print!("\n{toml}"),
        }
    }
    Ok(0)
}
