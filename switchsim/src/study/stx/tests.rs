//! The sweep's tests: CSV round trip, charts, policies and schemes.

mod sweep {
    use crate::study::stx::*;
    use std::path::Path;

    /// The header of the recorded sweep, `docs/stx_sweep.csv`.
    fn header() -> &'static str {
        include_str!("../../../../docs/stx_sweep.csv")
            .lines()
            .next()
            .unwrap()
    }

    fn csv(rows: &[&str]) -> String {
        let mut text = format!("{}\n", header());
        for row in rows {
            text.push_str(row);
            text.push('\n');
        }
        text
    }

    const ROW: &str = "64,64,2,bernoulli,ocf,sr,0.100,0.0999,30000,64.449,0.023,64.296,128.060,\
        0.002,129.055,0.0999,0.0999,0.9985,0.9998,0.9940,0.9979,0.9925,0.9948,0.0932,0.0931,\
        0.8915,0.8690,0.0863,0.356,3,4,0.0759,true,64.3,0.99,2.1,0.5,0.0863,0.0000,0.0000,\
        0.0100,0.000000,3,0";

    #[test]
    fn plot_sweep_csv_is_read_by_column_name() {
        let rows = parse_sweep_csv(&csv(&[ROW, ROW]), Path::new("s.csv")).unwrap();
        assert_eq!(rows.len(), 2);
        let r = &rows[0];
        assert_eq!((r.n, r.rtt, r.r), (64, 64, 2));
        assert_eq!(
            (r.load, r.delay_stx_sim, r.wasted_analytic),
            (0.1, 64.449, 0.869)
        );
        // Reordered and extra columns, NaN values.
        let text = "extra,wasted_analytic,wasted_sim,spurious_analytic,spurious_sim,\
            p_s_given_s_analytic,p_s_given_s_sim,throughput_nostx,throughput_stx,\
            delay_nostx_analytic,delay_nostx_sim,delay_stx_analytic,delay_stx_sim,offered,load,r,rtt,n\n\
            x,1,2,3,4,5,6,7,8,9,10,11,NaN,0.5,0.5,8,16,4\n";
        let rows = parse_sweep_csv(text, Path::new("s.csv")).unwrap();
        assert_eq!((rows[0].n, rows[0].rtt, rows[0].r), (4, 16, 8));
        assert_eq!(rows[0].wasted_analytic, 1.0);
        assert!(rows[0].delay_stx_sim.is_nan());
    }

    #[test]
    fn plot_sweep_csv_errors_name_file_and_line() {
        let err = |text: &str| {
            parse_sweep_csv(text, Path::new("d/s.csv"))
                .unwrap_err()
                .to_string()
        };
        let bad = ROW.replacen("0.100", "0.1x", 1);
        assert_eq!(
            err(&csv(&[ROW, bad.as_str()])),
            "d/s.csv:3: column `load`: `0.1x`: invalid float literal"
        );
        assert_eq!(
            err(&csv(&[ROW, "1,2,3"])),
            "d/s.csv:3: 3 fields, but the header has 44"
        );
        assert_eq!(
            err(&csv(&[&ROW.replacen("64,64,2", "64,64,-2", 1)])),
            "d/s.csv:2: column `r`: `-2`: invalid digit found in string"
        );
        assert_eq!(
            err("n,rtt\n1,2\n"),
            "d/s.csv:1: no column `r` in the header"
        );
        assert_eq!(err(&csv(&[])), "d/s.csv: no data rows after the header");
        assert!(err("\n\n").starts_with("d/s.csv: empty"));
        assert!(
            err("n,r\n1,\"2\n").starts_with("d/s.csv:"),
            "{}",
            err("n,r\n1,\"2\n")
        );
    }

    /// The recorded sweep in `docs/` loads: two traffics x five
    /// policy/scheme variants x 3 R x 9 loads, the paper's configuration
    /// first; and a sweep recorded before the traffic, policy and scheme
    /// columns still loads (they default to Bernoulli, OCF, SR).
    #[test]
    fn plot_sweep_csv_reads_the_recorded_sweeps() {
        let text = include_str!("../../../../docs/stx_sweep.csv");
        let rows = parse_sweep_csv(text, Path::new("stx_sweep.csv")).unwrap();
        assert_eq!(rows.len(), 2 * 5 * 3 * 9);
        assert!(rows.iter().all(|r| (r.n, r.rtt) == (64, 64)));
        let r0 = &rows[0];
        assert_eq!(
            (
                r0.r,
                r0.load,
                r0.traffic.as_str(),
                r0.policy.as_str(),
                r0.scheme.as_str()
            ),
            (1, 0.1, "bernoulli", "ocf", "sr")
        );
        let old = "n,rtt,r,load,offered,delay_stx_sim,delay_stx_analytic,delay_nostx_sim,\
            delay_nostx_analytic,throughput_stx,throughput_nostx,p_s_given_s_sim,\
            p_s_given_s_analytic,spurious_sim,spurious_analytic,wasted_sim,wasted_analytic\n\
            64,64,1,0.1,0.1,73,68,128,129,0.1,0.1,0.86,0.94,0.08,0.09,0.77,0.82\n";
        let rows = parse_sweep_csv(old, Path::new("old.csv")).unwrap();
        assert_eq!(
            (
                rows[0].traffic.as_str(),
                rows[0].policy.as_str(),
                rows[0].scheme.as_str()
            ),
            ("bernoulli", "ocf", "sr")
        );
        assert!(rows[0].p_ss_sim.is_nan());
    }

    /// A small model sweep written as CSV reads back: the header is
    /// the recorded sweeps' header, every row has its columns, and the values read back
    /// are the measured ones, rounded as written.
    #[test]
    fn plot_sweep_csv_round_trips() {
        let spec = SweepSpec {
            n: 4,
            rtt: 4,
            rs: vec![1, 2],
            loads: vec![0.3, 0.6],
            iters: 2,
            warmup: 100,
            slots: 400,
            seed: 3,
            traffics: vec![TrafficKind::Bernoulli],
            policies: vec![Policy::Ocf],
            schemes: vec![Scheme::Sr],
            cross: false,
            voq: 64,
            rtl: false,
            jobs: 1,
        };
        let points = sweep(&spec, &|_| {}).unwrap();
        let text = csv_text(&spec, &points).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(header()));
        assert!(lines.all(|l| l.split(',').count() == 44), "{text}");
        // Fixed decimals as before: load with 3, offered with 4; Unix lines.
        let first: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
        assert_eq!(
            first[..7],
            ["4", "4", "1", "bernoulli", "ocf", "sr", "0.300"]
        );
        assert_eq!(first[7].split('.').nth(1).map(str::len), Some(4), "{text}");
        assert!(!text.contains('\r'));
        let rows = parse_sweep_csv(&text, Path::new("t.csv")).unwrap();
        assert_eq!(rows.len(), 4);
        for row in &rows {
            let find = |r: Option<usize>| {
                points
                    .iter()
                    .find(|p| p.r == r && p.load == row.load)
                    .expect("point")
            };
            let (s, o) = (&find(Some(row.r)).stats, &find(None).stats);
            assert_eq!((row.n, row.rtt), (4, 4));
            let close = |got: f64, want: f64, d: i32| (got - want).abs() <= 0.5 * 10f64.powi(-d);
            assert!(close(row.offered, s.offered(), 4), "{row:?}");
            assert!(close(row.delay_stx_sim, s.mean_delay(), 3), "{row:?}");
            assert!(close(row.delay_nostx_sim, o.mean_delay(), 3), "{row:?}");
            assert!(close(row.throughput_nostx, o.throughput(), 4), "{row:?}");
            assert!(close(row.wasted_sim, s.p_w(), 4), "{row:?}");
            assert!(row.delay_stx_sim > 0.0, "{row:?}");
        }
        assert_eq!(
            rows.iter().map(|r| (r.r, r.load)).collect::<Vec<_>>(),
            [(1, 0.3), (1, 0.6), (2, 0.3), (2, 0.6)]
        );
    }

    #[test]
    fn plot_sweep_charts_pair_sim_with_analytic() {
        let rows: Vec<SweepRow> = [ROW, ROW.replacen("64,64,2", "64,64,8", 1).as_str()]
            .iter()
            .flat_map(|r| parse_sweep_csv(&csv(&[r]), Path::new("s.csv")).unwrap())
            .collect();
        let charts = sweep_charts(&rows);
        assert_eq!(charts.len(), 4);
        let labels: Vec<&str> = charts[0].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "R=2 sim",
                "R=2 analytic",
                "R=8 sim",
                "R=8 analytic",
                "no STX sim",
                "no STX analytic"
            ]
        );
        let (sim, analytic) = (&charts[0].series[0], &charts[0].series[1]);
        assert_eq!(sim.color, analytic.color);
        assert!(!sim.dashed && analytic.dashed && sim.marker.is_some());
        assert_eq!(sim.points, [(0.1, 64.449)]);
        assert_eq!(charts[1].series[1].points, [(0.1, 0.9979)]);
        // (c) shows the middle R of [2, 8].
        assert!(charts[2].title.ends_with("R=8"), "{}", charts[2].title);
        let png = sweep_png(&rows).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let svg = sweep_svg(&rows).unwrap();
        assert!(svg.contains("R=8 analytic") && svg.contains("no STX sim"));
    }
}

mod policy {
    use crate::study::stx::*;
    use std::path::Path;

    /// A small sweep over every policy and scheme, two traffics: the jobs
    /// are the paper's configuration and the one-at-a-time variants (or
    /// every combination with `cross`), the CSV names them, and the policy
    /// charts draw one curve per variant and traffic.
    #[test]
    fn sweep_covers_policies_schemes_and_traffics() {
        let mut spec = SweepSpec {
            n: 4,
            rtt: 4,
            rs: vec![2],
            loads: vec![0.3],
            iters: 2,
            warmup: 50,
            slots: 300,
            seed: 5,
            traffics: vec![TrafficKind::Bernoulli, TrafficKind::OnOff(4.0)],
            policies: vec![Policy::Ocf, Policy::Random, Policy::Ycf],
            schemes: vec![Scheme::Sr, Scheme::Gbn, Scheme::Saw],
            cross: false,
            voq: 64,
            rtl: false,
            jobs: 2,
        };
        // Per traffic and load: no STX + OCF SR + 2 policies + 2 schemes.
        assert_eq!(spec.jobs().len(), 2 * 6);
        spec.cross = true;
        assert_eq!(spec.jobs().len(), 2 * 10);
        spec.cross = false;
        let points = sweep(&spec, &|_| {}).unwrap();
        let text = csv_text(&spec, &points).unwrap();
        let rows = parse_sweep_csv(&text, Path::new("p.csv")).unwrap();
        assert_eq!(rows.len(), 2 * 5);
        let names: Vec<(String, String, String)> = rows
            .iter()
            .map(|r| (r.traffic.clone(), r.policy.clone(), r.scheme.clone()))
            .collect();
        assert!(names.contains(&("onoff4".into(), "ycf".into(), "sr".into())));
        assert!(names.contains(&("bernoulli".into(), "ocf".into(), "saw".into())));
        assert!(!names.contains(&("bernoulli".into(), "random".into(), "gbn".into())));
        let charts = policy_charts(&rows);
        // Delay by policy and by scheme per traffic, then P_Ss per traffic.
        assert_eq!(charts.len(), 6);
        let labels: Vec<&str> = charts[0].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["ocf sr", "random sr", "ycf sr", "no STX"]);
        let labels: Vec<&str> = charts[1].series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["ocf sr", "ocf gbn", "ocf saw", "no STX"]);
        assert_eq!(charts[4].series.len(), 5);
        // The paper's charts take only Bernoulli, OCF, SR.
        let paper = sweep_charts(&rows);
        assert_eq!(
            paper[0].series.len(),
            4,
            "R=2 sim/analytic, no STX sim/analytic"
        );
        assert_eq!(&policy_png(&rows).unwrap()[1..4], b"PNG");
    }
}
