//! The study's tests: the plan, the tables (seeds, intervals, paired
//! differences) and their round trip, the charts, and the recorded study
//! in `docs/` (every point complete, no acknowledged cell lost with flow
//! control).

use crate::study::stx::*;
use std::path::Path;
use studies::stx_system::{mean_ci95, Policy, Scheme};

/// A small study: N = 4, RTT = 4, 3 seeds, Bernoulli at two loads with no
/// STX and OCF / YCF at R = 2, and a saturation point.
fn small() -> SweepSpec {
    let mut spec = SweepSpec::study(4, 4);
    spec.warmup = 100;
    spec.slots = 600;
    spec.seeds = 3;
    spec.seed = 5;
    spec.voq = 64;
    spec.egress_b = 16;
    spec.jobs = 2;
    let v = vec![
        Variant::no_stx(),
        Variant::stx(2, Policy::Ocf, Scheme::Sr),
        Variant::stx(2, Policy::Ycf, Scheme::Sr),
    ];
    spec.experiments = vec![
        Experiment {
            name: "bernoulli".into(),
            traffic: TrafficKind::Bernoulli,
            loads: vec![0.3, 0.6],
            stall: None,
            variants: v.clone(),
        },
        Experiment {
            name: "saturation".into(),
            traffic: TrafficKind::Bernoulli,
            loads: vec![1.0],
            stall: None,
            variants: v,
        },
    ];
    spec
}

/// The recorded study's plan: every experiment the write-up uses, 8 seeds,
/// the variants compared on the same arrivals (one run seed per load and
/// seed number, whatever the variant), and a budget of about 1000 runs.
#[test]
fn the_study_plan() {
    let s = SweepSpec::study(64, 64);
    assert_eq!(s.seeds, 8);
    let names: Vec<&str> = s.experiments.iter().map(|e| e.name.as_str()).collect();
    for want in [
        "bernoulli",
        "onoff16",
        "saturation",
        "hotspot0.1",
        "hotspot0.3",
        "stall-bernoulli",
        "stall-onoff64",
        "hotspot0.3-nofc",
    ] {
        assert!(names.contains(&want), "{want}");
    }
    let jobs = s.jobs();
    assert!((900..=1100).contains(&jobs.len()), "{} runs", jobs.len());
    let a = s.config(jobs[0]);
    let b = s.config(jobs[1]);
    assert_eq!((jobs[0].load, jobs[0].seed), (jobs[1].load, jobs[1].seed));
    assert_eq!(a.stall_seed, b.stall_seed);
    assert_ne!(s.run_seed(0, 0), s.run_seed(0, 1));
    assert_ne!(s.run_seed(0, 0), s.run_seed(1, 0));
    s.check().unwrap();
    // The credits: 256 - 65 per output.
    assert_eq!(a.credit_pool(), 191);
}

/// A configuration that could lose a cell is refused in one line naming
/// the rule.
#[test]
fn a_study_that_could_lose_cells_is_refused() {
    let mut s = small();
    s.egress_b = 4; // w = RTT + 1 = 5 > B
    let e = s.check().unwrap_err().to_string();
    assert!(e.contains("C + w <= B") && !e.contains('\n'), "{e}");
}

/// The tables of a small study: one row per point with the mean and the
/// 95 % interval across the seeds of every measure (recomputed here from
/// the runs), the runs table, and the paired differences (YCF − OCF, OCF
/// − no STX), whose mean is the difference of the means; they read back
/// by header name, rounded as written.
#[test]
fn tables_of_seeds_intervals_and_paired_differences() {
    let spec = small();
    let points = sweep(&spec, &|_| {}).unwrap();
    assert_eq!(points.len(), spec.jobs().len());
    assert_eq!(points.len(), 3 * 3 * 3);
    let text = csv_text(&spec, &points).unwrap();
    assert!(!text.contains('\r'));
    let rows = parse_sweep_csv(&text, Path::new("t.csv")).unwrap();
    assert_eq!(rows.len(), 9);
    let close = |a: f64, b: f64| (a - b).abs() <= 0.6e-4 * (1.0 + b.abs());
    for row in &rows {
        assert_eq!(row.f("seeds"), 3.0);
        let exp = spec
            .experiments
            .iter()
            .position(|e| e.name == row.s("experiment"))
            .unwrap();
        let e = &spec.experiments[exp];
        let var = e
            .variants
            .iter()
            .position(|v| v.r.unwrap_or(0) == row.r() && policy_name(v.policy) == row.s("policy"))
            .unwrap();
        let li = e.loads.iter().position(|&l| l == row.f("load")).unwrap();
        let x: Vec<f64> = points
            .iter()
            .filter(|p| p.job.exp == exp && p.job.var == var && p.job.load == li)
            .map(|p| p.stats.mean_delay())
            .collect();
        let (m, ci) = mean_ci95(&x);
        assert!(
            close(row.f("delay"), m) && close(row.f("delay_ci"), ci),
            "{row:?}"
        );
        assert_eq!(row.f("lost_total"), 0.0);
        if row.f("load") < 1.0 {
            assert_eq!(row.s("complete"), "true");
        }
    }
    // The analytic model beside the paper's configuration only.
    let ocf = rows
        .iter()
        .find(|r| r.s("experiment") == "bernoulli" && r.r() == 2 && r.s("policy") == "ocf")
        .unwrap();
    assert!(ocf.f("delay_analytic") > 0.0);
    let ycf = rows
        .iter()
        .find(|r| r.s("experiment") == "bernoulli" && r.s("policy") == "ycf")
        .unwrap();
    assert!(ycf.f("delay_analytic").is_nan());
    // Runs: one row each.
    let runs = runs_text(&spec, &points).unwrap();
    assert_eq!(runs.lines().count(), 1 + points.len());
    // Paired: per Bernoulli load, YCF - OCF and OCF - no STX on delay, p99
    // and P_Ss; at saturation on throughput and Jain's index.
    let ptext = paired_text(&spec, &points).unwrap();
    let pairs = parse_paired_csv(&ptext, Path::new("p.csv")).unwrap();
    assert_eq!(pairs.len(), 2 * 2 * 3 + 2 * 2);
    for p in &pairs {
        // Three values rounded to 4 decimals.
        let d = p.f("a_mean") - p.f("b_mean");
        assert!((p.f("diff") - d).abs() <= 1.6e-4, "{p:?}");
        assert_eq!(p.f("seeds"), 3.0);
    }
    let ycf_ocf = pairs
        .iter()
        .find(|p| p.s("a") == "R2 ycf sr" && p.s("b") == "R2 ocf sr" && p.s("measure") == "delay")
        .unwrap();
    assert!(ycf_ocf.f("diff_ci") >= 0.0);
    let sat = pairs
        .iter()
        .find(|p| p.s("experiment") == "saturation" && p.s("measure") == "throughput")
        .unwrap();
    assert!(sat.f("a_mean") > 0.5, "{sat:?}");
    // Charts: the paper's comparison with error bars, the policies with
    // the paired differences, the load charts.
    let charts = sweep_charts(&rows);
    assert_eq!(charts.len(), 4);
    let sim = &charts[0].series[0];
    assert_eq!(sim.label, "R=2 sim");
    assert_eq!(sim.points.len(), 2);
    assert!(sim.err.as_ref().unwrap().iter().all(|e| *e >= 0.0));
    assert!(charts[0].series[1].dashed);
    let pol = policy_charts(&rows, &pairs);
    assert_eq!(pol.len(), 6);
    assert_eq!(pol[2].series[0].label, "R2 ycf sr - R2 ocf sr");
    assert_eq!(pol[2].series[0].points.len(), 2);
    let load = load_charts(&rows);
    assert_eq!(load.len(), 4);
    assert!(!load[3].series.is_empty());
    assert_eq!(&sweep_png(&rows).unwrap()[1..4], b"PNG");
    assert!(policy_svg(&rows, &pairs).unwrap().contains("ycf sr"));
    assert_eq!(&load_png(&rows).unwrap()[1..4], b"PNG");
}

/// Reading errors name the file, the line and the column.
#[test]
fn bad_tables_are_refused_with_file_and_line() {
    let err = |text: &str| {
        parse_sweep_csv(text, Path::new("d/s.csv"))
            .unwrap_err()
            .to_string()
    };
    let head = "experiment,traffic,r,policy,scheme,fc,load,delay";
    assert_eq!(
        err(&format!(
            "{head}\nbernoulli,bernoulli,2,ocf,sr,on,0.1x,64\n"
        )),
        "d/s.csv:2: column `load`: `0.1x`: invalid float literal"
    );
    assert_eq!(
        err(&format!("{head}\nbernoulli,bernoulli\n")),
        "d/s.csv:2: 2 fields, but the header has 8"
    );
    assert_eq!(
        err("n,rtt\n1,2\n"),
        "d/s.csv:1: no column `experiment` in the header"
    );
    assert_eq!(
        err(&format!("{head}\n")),
        "d/s.csv: no data rows after the header"
    );
    assert!(err("\n\n").starts_with("d/s.csv: empty"));
}

/// The recorded study (`docs/stx_sweep.csv` and `_paired.csv`, the short
/// plan): every point of the plan, 8 seeds per point, every run with flow control
/// complete and without an acknowledged cell lost, the ablation without
/// flow control losing cells; the charts draw.
#[test]
fn the_recorded_study() {
    let text = include_str!("../../../../docs/stx_sweep.csv");
    let rows = parse_sweep_csv(text, Path::new("stx_sweep.csv")).unwrap();
    let spec = SweepSpec::study_short(64, 64);
    let points: usize = spec
        .experiments
        .iter()
        .map(|e| e.loads.len() * e.variants.len())
        .sum();
    assert_eq!(rows.len(), points);
    for r in &rows {
        assert_eq!(r.f("seeds"), 8.0, "{r:?}");
        if r.s("fc") == "on" {
            assert_eq!(r.f("lost_total"), 0.0, "acknowledged cells lost: {r:?}");
            assert_eq!(r.s("complete"), "true", "{r:?}");
        }
    }
    assert!(
        rows.iter()
            .any(|r| r.s("fc") == "off" && r.f("lost_total") > 0.0),
        "the ablation without flow control loses nothing"
    );
    let ptext = include_str!("../../../../docs/stx_sweep_paired.csv");
    let pairs = parse_paired_csv(ptext, Path::new("stx_sweep_paired.csv")).unwrap();
    assert!(pairs.iter().all(|p| p.f("seeds") == 8.0));
    assert!(!sweep_charts(&rows)[0].series.is_empty());
    assert!(!policy_charts(&rows, &pairs)[2].series.is_empty());
}
