//! The studies: `study stx` (alias `sweep`: the STX system against its
//! analytic model, with seeds, confidence intervals and paired differences),
//! `bcn-loop` (the BCN closed loop), `recn-net` (the RECN network of seed
//! 002) and `size` (buffer sizing), with their options.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// The files beside the study's point table `csv` (`<stem>.csv`): the
/// paired differences `<stem>_paired.csv`, the runs `<stem>_runs.csv`, and
/// the charts `<stem>.svg`/`.png` (the paper's comparison),
/// `<stem>_policies.svg`/`.png` and `<stem>_load.svg`/`.png`.
pub struct StudyFiles {
    /// The paired differences.
    pub paired: PathBuf,
    /// Every run.
    pub runs: PathBuf,
    /// The charts, SVG then PNG, three of each.
    pub charts: [PathBuf; 6],
}

/// The files beside `csv` ([`StudyFiles`]); an error when `csv` would be
/// one of them.
pub fn study_files(csv: &Path) -> Result<StudyFiles> {
    let stem = csv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let f = |suffix: &str, ext: &str| csv.with_file_name(format!("{stem}{suffix}.{ext}"));
    let files = StudyFiles {
        paired: f("_paired", "csv"),
        runs: f("_runs", "csv"),
        charts: [
            f("", "svg"),
            f("", "png"),
            f("_policies", "svg"),
            f("_policies", "png"),
            f("_load", "svg"),
            f("_load", "png"),
        ],
    };
    if files
        .charts
        .iter()
        .chain([&files.paired, &files.runs])
        .any(|p| p == csv)
    {
        bail!(
            "{}: the study CSV cannot have the extension .svg or .png or end in _paired or \
             _runs, which the files beside it take",
            csv.display()
        );
    }
    Ok(files)
}

/// Draws the point table `text` (read from `csv`) and the paired table
/// `pairs` (read from `pairs_file`, if any) to the charts of `files`.
pub fn write_study_plots(
    text: &str,
    csv: &Path,
    pairs: Option<(&str, &Path)>,
    files: &StudyFiles,
) -> Result<()> {
    use crate::study::stx;
    let rows = stx::parse_sweep_csv(text, csv)?;
    let pairs = match pairs {
        Some((t, f)) => stx::parse_paired_csv(t, f)?,
        None => Vec::new(),
    };
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
        Ok::<_, anyhow::Error>(())
    };
    let [svg, png, psvg, ppng, lsvg, lpng] = &files.charts;
    write(svg, stx::sweep_svg(&rows)?.as_bytes())?;
    write(png, &stx::sweep_png(&rows)?)?;
    write(psvg, stx::policy_svg(&rows, &pairs)?.as_bytes())?;
    write(ppng, &stx::policy_png(&rows, &pairs)?)?;
    write(lsvg, stx::load_svg(&rows)?.as_bytes())?;
    write(lpng, &stx::load_png(&rows)?)
}

/// `study stx --plot-only`: draws an existing point table (and the paired
/// table beside it, when there is one).
pub fn cmd_sweep_plot(csv: &Path) -> Result<u8> {
    let files = study_files(csv)?;
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
    let pairs = std::fs::read_to_string(&files.paired).ok();
    write_study_plots(
        &text,
        csv,
        pairs.as_deref().map(|t| (t, files.paired.as_path())),
        &files,
    )?;
    Ok(0)
}

fn sweep_points(spec: crate::study::stx::SweepSpec, out: &Path) -> Result<u8> {
    use crate::study::stx::{csv_text, paired_text, runs_text, sweep};
    let files = study_files(out)?;
    if !spec.rtt.is_multiple_of(2) || !(2..=126).contains(&spec.rtt) {
        return Err(anyhow!("--rtt {}: must be even, in 2..=126", spec.rtt));
    }
    if !spec.n.is_power_of_two() || !(2..=64).contains(&spec.n) {
        return Err(anyhow!("--n {}: must be a power of two in 2..=64", spec.n));
    }
    if !(1..=8).contains(&spec.iters) {
        return Err(anyhow!("--iters {}: must be in 1..=8", spec.iters));
    }
    if spec.seeds == 0 {
        return Err(anyhow!("--seeds 0: at least one"));
    }
    spec.check()?;
    let jobs = spec.jobs();
    println!(
        "study stx: N={} RTT={} iSLIP x{} warm-up {} + {} measured slots, {} seeds, {} arbiter, \
         VOQs of {}, RSQs of {} per input: {} experiments, {} runs",
        spec.n,
        spec.rtt,
        spec.iters,
        spec.warmup,
        spec.slots,
        spec.seeds,
        if spec.rtl { "RTL" } else { "model" },
        spec.voq,
        spec.egress_b,
        spec.experiments.len(),
        jobs.len()
    );
    for e in &spec.experiments {
        println!(
            "  {:<16} loads {:?}{}: {}",
            e.name,
            e.loads,
            e.stall.map_or(String::new(), |s| format!(
                ", links stalled {} (mean {} slots)",
                s.share, s.mean
            )),
            e.variants
                .iter()
                .map(|v| v.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let t0 = std::time::Instant::now();
    let points = sweep(&spec, &|p| {
        let e = &spec.experiments[p.job.exp];
        println!(
            "  {:<16} {:<16} load {:.2} seed {}: delay {:8.2} p99 {:6} throughput {:.4} P_Ss {:.3} refused {} lost {} ({:.1} s)",
            e.name,
            e.variants[p.job.var].name(),
            p.load,
            p.job.seed,
            p.stats.mean_delay(),
            p.stats.p99(),
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
    let pairs = paired_text(&spec, &points)?;
    for (path, t) in [
        (out, &text),
        (files.paired.as_path(), &pairs),
        (files.runs.as_path(), &runs_text(&spec, &points)?),
    ] {
        std::fs::write(path, t).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    println!(
        "{} runs in {:.1} s",
        points.len(),
        t0.elapsed().as_secs_f64()
    );
    write_study_plots(&text, out, Some((&pairs, &files.paired)), &files)?;
    // Runs without flow control (the ablation) stop at the end of their
    // window once they have lost a cell: not a failure.
    let incomplete = points
        .iter()
        .any(|p| !p.complete && spec.experiments[p.job.exp].variants[p.job.var].fc);
    Ok(u8::from(incomplete))
}

/// The options of `switchsim study stx`.
#[derive(clap::Args, Debug)]
pub struct SweepOpts {
    /// `study`: the full study (`make sweep-stx`; the options below that
    /// shape the grid are then not used: traffic, loads, r, policies,
    /// schemes, cross, stall); `short`: the same thinned, the runs recorded
    /// in `docs/stx.md` (`make sweep-stx-short`); `custom`: the grid of
    /// those options.
    #[arg(long, default_value = "study")]
    pub plan: String,
    /// Ports.
    #[arg(long, default_value_t = 64)]
    pub n: usize,
    /// Round trip in slots (even, 2..=126).
    #[arg(long, default_value_t = 64)]
    pub rtt: u64,
    /// Custom plan: receivers per output, one STX curve each (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,8")]
    pub r: Vec<usize>,
    /// Custom plan: loads (comma separated, in (0, 1]).
    #[arg(long, value_delimiter = ',', default_value = "0.1,0.3,0.5,0.7,0.9")]
    pub loads: Vec<f64>,
    /// iSLIP iterations (the paper: 6).
    #[arg(long, default_value_t = 6)]
    pub iters: usize,
    /// Warm-up slots per run.
    #[arg(long, default_value_t = 2000)]
    pub warmup: u64,
    /// Measured slots per run (cells arriving in them are measured).
    #[arg(long, default_value_t = 10_000)]
    pub slots: u64,
    /// Independent seeds per point.
    #[arg(long, default_value_t = 8)]
    pub seeds: usize,
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Custom plan: traffic patterns (comma separated), one experiment
    /// each: `bernoulli` (uniform, the paper's), `saturation` (every input
    /// backlogged, load 1), `onoffL` (on/off bursts of mean length L, e.g.
    /// `onoff16`), `hotspotH` (a share H of the cells to output 0, e.g.
    /// `hotspot0.3`).
    #[arg(long, value_delimiter = ',', default_value = "bernoulli")]
    pub traffic: Vec<String>,
    /// Custom plan: STX policies of the input adapters (comma separated):
    /// `ocf` (the paper's), `random`, `ycf`.
    #[arg(long, value_delimiter = ',', default_value = "ocf")]
    pub policies: Vec<String>,
    /// Custom plan: reliable-delivery schemes (comma separated): `sr` (the
    /// paper's), `gbn`, `saw`.
    #[arg(long, value_delimiter = ',', default_value = "sr")]
    pub schemes: Vec<String>,
    /// Custom plan: every combination of policy and scheme (default: OCF
    /// with every scheme, SR with every policy).
    #[arg(long)]
    pub cross: bool,
    /// Custom plan: every output link stalled a share S of the time in
    /// bursts of mean M slots, `S:M` (e.g. `0.25:400`).
    #[arg(long)]
    pub stall: Option<String>,
    /// VOQ depth of the input adapters (a power of two, 2..=512).
    #[arg(long, default_value_t = 256)]
    pub voq: usize,
    /// RSQ slots per input of the output adapters (a power of two): with
    /// the inputs' window `w = RTT + 1` it sets the arbiter's credits per
    /// output, `B - w` (refused when below 1: a cell could be lost).
    #[arg(long, default_value_t = 256)]
    pub egress_b: usize,
    /// Run the arbiter's verilated RTL instead of its model.
    #[arg(long)]
    pub rtl: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// The point table; the paired table, the runs and the charts go
    /// beside it (`_paired.csv`, `_runs.csv`, `.svg`, `.png`,
    /// `_policies.*`, `_load.*`).
    #[arg(long, default_value = "out/stx_sweep.csv")]
    pub out: PathBuf,
    /// Simulate nothing: draw the charts of an existing point table (and
    /// of the paired table beside it).
    #[arg(
        long,
        value_name = "CSV",
        conflicts_with_all = [
            "plan", "n", "rtt", "r", "loads", "iters", "warmup", "slots", "seeds", "seed",
            "rtl", "jobs", "out", "traffic", "policies", "schemes", "cross", "voq",
            "egress_b", "stall",
        ]
    )]
    pub plot_only: Option<PathBuf>,
}

/// `switchsim study stx` (alias `sweep`).
pub fn cmd_sweep(o: SweepOpts) -> Result<u8> {
    if let Some(csv) = &o.plot_only {
        return cmd_sweep_plot(csv);
    }
    use crate::study::stx::{Experiment, SweepSpec, TrafficKind, Variant};
    use studies::stx_system::{Policy, Scheme, Stall};
    if !o.voq.is_power_of_two() || !(2..=512).contains(&o.voq) {
        bail!("--voq {}: must be a power of two in 2..=512", o.voq);
    }
    if !o.egress_b.is_power_of_two() || !(2..=1024).contains(&o.egress_b) {
        bail!(
            "--egress-b {}: must be a power of two in 2..=1024",
            o.egress_b
        );
    }
    let mut spec = match o.plan.as_str() {
        "study" => SweepSpec::study(o.n, o.rtt),
        "short" => SweepSpec::study_short(o.n, o.rtt),
        "custom" => {
            let policies = o
                .policies
                .iter()
                .map(|p| match p.as_str() {
                    "ocf" => Ok(Policy::Ocf),
                    "random" => Ok(Policy::Random),
                    "ycf" => Ok(Policy::Ycf),
                    x => Err(anyhow!("--policies {x}: expected ocf, random or ycf")),
                })
                .collect::<Result<Vec<_>>>()?;
            let schemes = o
                .schemes
                .iter()
                .map(|s| match s.as_str() {
                    "sr" => Ok(Scheme::Sr),
                    "gbn" => Ok(Scheme::Gbn),
                    "saw" => Ok(Scheme::Saw),
                    x => Err(anyhow!("--schemes {x}: expected sr, gbn or saw")),
                })
                .collect::<Result<Vec<_>>>()?;
            if let Some(r) = o.r.iter().find(|r| !(1..=127).contains(*r)) {
                bail!("--r: {r} receivers is not in 1..=127");
            }
            if let Some(l) = o.loads.iter().find(|l| !(**l > 0.0 && **l <= 1.0)) {
                bail!("--loads: {l} is not in (0, 1]");
            }
            let stall = match &o.stall {
                None => None,
                Some(t) => {
                    let bad = || {
                        anyhow!("--stall {t}: expected SHARE:MEAN, 0 <= SHARE < 1, MEAN >= 1 (e.g. 0.25:400)")
                    };
                    let (a, b) = t.split_once(':').ok_or_else(bad)?;
                    let (share, mean) = (
                        a.parse::<f64>().map_err(|_| bad())?,
                        b.parse::<f64>().map_err(|_| bad())?,
                    );
                    if !(0.0..1.0).contains(&share) || mean < 1.0 {
                        return Err(bad());
                    }
                    Some(Stall { share, mean })
                }
            };
            let mut variants = vec![Variant::no_stx()];
            for &r in &o.r {
                for &p in &policies {
                    for &s in &schemes {
                        let paper = u8::from(p == Policy::Ocf) + u8::from(s == Scheme::Sr);
                        if o.cross || paper >= 1 {
                            variants.push(Variant::stx(r, p, s));
                        }
                    }
                }
            }
            let experiments = o
                .traffic
                .iter()
                .map(|t| {
                    let kind = TrafficKind::parse(t).map_err(|e| anyhow!("--traffic: {e}"))?;
                    let loads = if t == "saturation" {
                        vec![1.0]
                    } else {
                        o.loads.clone()
                    };
                    let name = if stall.is_some() {
                        format!("stall-{t}")
                    } else {
                        t.clone()
                    };
                    Ok(Experiment {
                        name,
                        traffic: kind,
                        loads,
                        stall,
                        variants: variants.clone(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let mut spec = SweepSpec::study(o.n, o.rtt);
            spec.experiments = experiments;
            spec
        }
        x => bail!("--plan {x}: expected study, short or custom"),
    };
    spec.n = o.n;
    spec.rtt = o.rtt;
    spec.iters = o.iters;
    spec.warmup = o.warmup;
    spec.slots = o.slots;
    spec.seeds = o.seeds;
    spec.seed = o.seed;
    spec.voq = o.voq;
    spec.egress_b = o.egress_b;
    spec.rtl = o.rtl;
    spec.jobs = o.jobs;
    sweep_points(spec, &o.out)
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
