//! PFC pause generator: equivalence of golden model and RTL (transmit and
//! receive), the loopback properties of issue 3, real frames checked by
//! tshark, directed receive checks from REFERENCE.md, and the system scenario
//! of seeds 000 / 001 (MMU + PFC + link + upstream, headroom formula).

use crate::support;

use model::eth::beats;
use model::pfc::{
    classify, pfc_frame, Pfc, PfcConfig, PfcInputs, PfcOutputs, PfcParams, RxClass, PRIOS,
};
use model::stim::{Cycle, Stimulus};
use model::{Block, Params, PortGroup};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use studies::pfc_system as system;
use testbenches::pfc::{
    check_loopback, collect_frames, directed, loopback, pcap, refreshes_at_expiry,
    short_config_strategy, xoff_pattern_strategy, LoopStats,
};

#[test]
fn equivalence_random() {
    support::equivalence::<Pfc>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<Pfc>();
}

fn cfg(qcyc: u16, refresh: u16, gap: u8, quanta: u16) -> PfcConfig {
    directed::config(qcyc, refresh, gap, quanta)
}

// ---------------------------------------------------------------------------
// Loopback properties
// ---------------------------------------------------------------------------

/// A loopback case: variant, legal configuration, link delay, xoff pattern.
fn loop_case() -> impl Strategy<Value = (PfcParams, PfcConfig, usize, Vec<u8>)> {
    proptest::sample::select(Pfc::variants())
        .prop_flat_map(|p| (Just(p), short_config_strategy(&p), 1usize..=40))
        .prop_flat_map(|(p, c, link)| {
            let period = c
                .cfg_quanta_i
                .iter()
                .map(|&q| q as usize * c.cfg_qcyc_i as usize)
                .max()
                .unwrap_or(1);
            let len = (4 * period).clamp(3000, 40_000);
            (
                Just(p),
                Just(c),
                Just(link),
                xoff_pattern_strategy(len, period),
            )
        })
}

/// In loopback, for legal configurations: every frame is a valid PFC frame,
/// no frame is unnecessary, a priority that stays OFF keeps the peer paused
/// without a gap cycle, XOFF and RESUME act within the frame latency, and a
/// pause only ends on a RESUME. Aggregated over the cases, refreshes,
/// resumes and long pauses must all have happened (the property is not
/// vacuous).
#[test]
fn loopback_keeps_the_peer_paused_without_gaps() {
    let cases = support::cases(256);
    let mut runner = testbenches::seeded_runner(0x1005_bac4);
    let mut total = LoopStats::default();
    let mut tight = 0;
    for n in 0..cases {
        let (p, c, link, xoff) = loop_case().new_tree(&mut runner).unwrap().current();
        assert!(
            Pfc::check(&p, &c).is_ok(),
            "strategy gave an illegal configuration"
        );
        let (_, outs) = loopback(&p, &c, &xoff, link);
        let st = check_loopback(&c, &xoff, &outs, link)
            .unwrap_or_else(|e| panic!("case {n}: {} link {link} {:?}: {e}", p.label(), c));
        if c.cfg_refresh_i as u64 * c.cfg_qcyc_i as u64 == 8 + c.cfg_gap_i as u64 {
            tight += 1;
        }
        total.frames += st.frames;
        total.xoffs += st.xoffs;
        total.refreshes += st.refreshes;
        total.resumes += st.resumes;
        total.paused_cycles += st.paused_cycles;
        total.longest_pause = total.longest_pause.max(st.longest_pause);
    }
    println!("loopback: {cases} cases ({tight} at the tightest refresh point): {total:?}");
    if cases >= 64 {
        assert!(
            total.refreshes > 100 && total.resumes > 100 && total.xoffs > 100,
            "{total:?}"
        );
        assert!(tight > 0, "no case at R * qcyc = 8 + gap");
    }
}

/// `xoff_i` for the refresh worst case: priority 0 OFF for a long time;
/// priority 4 changes exactly one cycle before priority 0's refresh falls
/// due, so that its frame starts just before and the refresh waits a whole
/// frame plus the gap.
fn worst_case_refresh_xoff(p: &PfcParams, c: &PfcConfig) -> Vec<u8> {
    let mut m = Pfc::new(p, c);
    let mut x4 = 0u8;
    let mut xoff = Vec::new();
    for t in 0..7000 {
        let on = (200..6200).contains(&t);
        let tm = m.tx_timer(0);
        if on && tm.tq == c.cfg_refresh_i + 1 && tm.tc == 0 {
            x4 ^= 1;
        }
        let x = u8::from(on) | x4 << 4;
        xoff.push(x);
        let mut i = PfcInputs::zero(p);
        i.xoff_i = x;
        m.step(&i); // the transmit side does not depend on the receive side
    }
    xoff
}

/// The refresh bound is tight: at `R * qcyc = 8 + gap`, in the worst case
/// (a frame for another priority starts the cycle before the refresh falls
/// due) the refresh lands in the very last cycle of the peer's old timer and
/// there is no gap; with one quantum less (an illegal configuration) the
/// same pattern opens a gap and the checker reports it.
#[test]
fn refresh_point_bound_is_tight() {
    let p = PfcParams::default();
    for &(qcyc, gap) in &[
        (1u16, 0u8),
        (8, 0),
        (4, 4),
        (2, 10),
        (1, 255),
        (3, 7),
        (5, 3),
    ] {
        let r_min = (8 + gap as u16).div_ceil(qcyc);
        // Q - R leaves room for a whole other frame and its gap before the
        // refresh falls due (else the previous refresh itself is the blocker).
        let q = r_min + (10 + gap as u16).div_ceil(qcyc) + 3;
        let c = cfg(qcyc, r_min, gap, q);
        assert!(Pfc::check(&p, &c).is_ok());
        let xoff = worst_case_refresh_xoff(&p, &c);
        let (stim, outs) = loopback(&p, &c, &xoff, 3);
        let st = check_loopback(&c, &xoff, &outs, 3).unwrap();
        assert!(st.refreshes > 3, "qcyc {qcyc} gap {gap}: {st:?}");
        let exact = refreshes_at_expiry(&p, &c, &xoff, 3);
        let exact_possible = (8 + gap as u16).is_multiple_of(qcyc);
        if exact_possible {
            assert!(
                exact > 3,
                "qcyc {qcyc} gap {gap}: no refresh landed at the expiry cycle"
            );
        } else {
            assert_eq!(exact, 0, "qcyc {qcyc} gap {gap}");
        }
        support::lockstep_or_report(&stim, &format!("tight refresh qcyc {qcyc} gap {gap}"));
        // One quantum less: illegal, and the worst case opens a gap.
        if r_min > 1 {
            let bad = cfg(qcyc, r_min - 1, gap, q);
            assert!(Pfc::check(&p, &bad).is_err());
            let xoff = worst_case_refresh_xoff(&p, &bad);
            let (_, outs) = loopback(&p, &bad, &xoff, 3);
            let e = check_loopback(&bad, &xoff, &outs, 3).unwrap_err();
            assert!(e.contains("without a RESUME"), "qcyc {qcyc} gap {gap}: {e}");
        }
    }
}

/// A few loopback runs, replayed cycle by cycle against the RTL.
#[test]
fn loopback_runs_in_cosimulation() {
    let mut runner = testbenches::seeded_runner(0x1005_c051);
    for n in 0..support::cases(256).min(12) {
        let (p, c, link, mut xoff) = loop_case().new_tree(&mut runner).unwrap().current();
        xoff.truncate(12_000);
        let (stim, outs) = loopback(&p, &c, &xoff, link);
        check_loopback(&c, &xoff, &outs, link).unwrap();
        support::lockstep_or_report(&stim, &format!("loopback case {n} {}", p.label()));
    }
}

// ---------------------------------------------------------------------------
// Transmit frames, byte for byte, and tshark
// ---------------------------------------------------------------------------

/// Transmit frames for a directed xoff sequence: one frame per change set,
/// shared by simultaneous changes, RESUME with time 0; byte for byte the
/// reference encoder's frame.
#[test]
fn transmitted_frames_are_the_reference_frames() {
    let p = PfcParams::default();
    let mut c = cfg(8, 2, 2, 300);
    c.cfg_quanta_i = vec![300, 301, 0x1234, 0xabcd, 65535, 1000, 333, 334];
    assert!(Pfc::check(&p, &c).is_ok());
    let seq: &[(u8, usize)] = &[
        (0b0000_1000, 40),
        (0b0001_1000, 40),
        (0b1111_1111, 60),
        (0b0000_0000, 60),
        (0b1000_0001, 1),
        (0b0000_0001, 30),
        (0, 30),
    ];
    let mut cycles = Vec::new();
    for &(x, n) in seq {
        directed::push_idle(&p, &mut cycles, n, x);
    }
    let stim = Stimulus::<Pfc> {
        generated: None,
        params: p,
        config: c.clone(),
        cycles,
        seed: 11,
    };
    let outs = directed::outputs(&stim);
    let frames = collect_frames(outs.iter().map(|o| o.as_ref()));
    let q = &c.cfg_quanta_i;
    let t = |m: u8, off: u8| -> [u16; PRIOS] {
        std::array::from_fn(|k| {
            if m >> k & 1 != 0 && off >> k & 1 != 0 {
                q[k]
            } else {
                0
            }
        })
    };
    // A one-cycle request of priority 7 starting while idle does go out
    // (its change was pending at a start); it is then resumed.
    let expect = [
        (0b0000_1000u8, t(0b1000, 0b1000)),
        (0b0001_0000, t(0b1_0000, 0b1_0000)),
        (0b1110_0111, t(0b1110_0111, 0xff)),
        (0b1111_1111, t(0, 0)),
        (0b1000_0001, t(0b1000_0001, 0b1000_0001)),
        (0b1000_0000, t(0, 0)),
        (0b0000_0001, t(0, 0)),
    ];
    let got: Vec<Vec<u8>> = frames.iter().map(|f| f.bytes.clone()).collect();
    let want: Vec<Vec<u8>> = expect
        .iter()
        .map(|(cev, times)| pfc_frame(c.cfg_sa_i, *cev as u16, times).to_vec())
        .collect();
    assert_eq!(
        got.len(),
        want.len(),
        "frames: {:?}",
        frames.iter().map(|f| f.first).collect::<Vec<_>>()
    );
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "frame {k}");
    }
    support::lockstep_or_report(&stim, "reference frames");
}

/// Frames generated by the model (a loopback run with refreshes, changes of
/// several priorities, RESUMEs) are written to `out/pfc/frames.pcap`; tshark
/// must decode every one as a PFC frame (MAC control, opcode 0x0101) with the
/// expected class-enable vector, times and a good FCS.
#[test]
fn generated_frames_decode_in_tshark() {
    let p = PfcParams::default();
    let mut c = cfg(4, 40, 3, 100);
    c.cfg_quanta_i = vec![100, 200, 300, 400, 500, 600, 700, 65535];
    let mut xoff = Vec::new();
    for (x, n) in [
        (0x08u8, 900),
        (0x18, 300),
        (0xff, 1200),
        (0x81, 700),
        (0, 200),
    ] {
        xoff.extend(std::iter::repeat_n(x, n));
    }
    let (_, outs) = loopback(&p, &c, &xoff, 5);
    check_loopback(&c, &xoff, &outs, 5).unwrap();
    let frames: Vec<Vec<u8>> = collect_frames(outs.iter().map(Some))
        .into_iter()
        .map(|f| f.bytes)
        .collect();
    assert!(frames.len() >= 10, "{} frames", frames.len());
    let dir = support::out_dir().join("pfc");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frames.pcap");
    std::fs::write(&path, pcap(&frames)).unwrap();
    let mut fields = vec![
        "eth.dst",
        "eth.src",
        "eth.type",
        "macc.opcode",
        "macc.cbfc.enbv",
        "eth.fcs.status",
    ];
    let names: Vec<String> = (0..8)
        .map(|k| format!("macc.cbfc.pause_time.c{k}"))
        .collect();
    fields.extend(names.iter().map(|s| s.as_str()));
    let Some(rows) = support::tshark_fields(&path, &fields) else {
        return;
    };
    assert_eq!(rows.len(), frames.len(), "tshark output:\n{rows:?}");
    for (k, (v, f)) in rows.iter().zip(&frames).enumerate() {
        let (_, cev, times) = classify(f, 0);
        let line = v.join(",");
        assert_eq!(v[0], "01:80:c2:00:00:01", "frame {k}: {line}");
        assert_eq!(v[1], "02:00:5e:10:20:30", "frame {k}: {line}");
        assert_eq!(v[2], "0x8808", "frame {k}: {line}");
        assert_eq!(v[3], "0x0101", "frame {k}: {line}");
        assert_eq!(v[4], format!("0x{:04x}", cev), "frame {k}: {line}");
        assert_eq!(v[5], "1", "frame {k}: FCS not good: {line}");
        for p in 0..PRIOS {
            assert_eq!(
                v[6 + p],
                times[p].to_string(),
                "frame {k} class {p}: {line}"
            );
            if cev >> p & 1 == 0 {
                assert_eq!(times[p], 0, "frame {k}: time of disabled class {p}");
            }
        }
    }
    // A corrupted copy is flagged bad by tshark: the check above can fail.
    let mut bad = frames[0].clone();
    bad[20] ^= 4;
    let badp = dir.join("bad.pcap");
    std::fs::write(&badp, pcap(&[bad])).unwrap();
    let bad_rows = support::tshark_fields(&badp, &["eth.fcs.status"]).unwrap();
    assert_eq!(bad_rows, vec![vec!["0".to_string()]]);
    println!(
        "tshark decoded {} frames of {}",
        frames.len(),
        path.display()
    );
}

// ---------------------------------------------------------------------------
// Transmit: no unnecessary frames
// ---------------------------------------------------------------------------

/// Glitches of the request (OFF and back within a frame and its gap) send
/// nothing; one long OFF gives one XOFF and refreshes, then one RESUME
/// ([`directed::refresh_outcome`], on the model here).
#[test]
fn glitches_send_nothing_and_one_off_gives_one_xoff() {
    directed_on_model(&directed::refresh(), directed::refresh_outcome, "glitches");
}

/// The model's outputs of a directed stimulus without resets.
fn model_outputs(stim: &Stimulus<Pfc>) -> Vec<PfcOutputs> {
    directed::outputs(stim)
        .into_iter()
        .map(|o| o.expect("no reset in a directed stimulus"))
        .collect()
}

/// A scenario's documented outcome (the check the scenarios test runs on
/// the RTL) on the golden model, then model and RTL in lockstep.
fn directed_on_model(stim: &Stimulus<Pfc>, check: testbenches::ScenarioCheck<Pfc>, what: &str) {
    check(stim, &model_outputs(stim)).unwrap_or_else(|e| panic!("{what}: {e}"));
    support::lockstep_or_report(stim, what);
}

/// With the refresh point at 0 (illegal, flagged) the transmitter still runs
/// as specified: the refresh waits until its copy of the peer's timer is
/// 0, i.e. one refresh per 3 quanta x 4 cycles + 1 after the previous frame
/// started, each carrying the priority's quanta
/// ([`directed::refresh_zero_outcome`]).
#[test]
fn refresh_point_zero_refreshes_at_expiry() {
    let stim = directed::refresh_zero();
    assert!(Pfc::check(&stim.params, &stim.config).is_err());
    directed_on_model(&stim, directed::refresh_zero_outcome, "refresh point 0");
}

/// REFERENCE.md: hysteresis. An MMU queue that hovers around its Xoff point
/// (a cell into headroom, a cell out, for a long time) gives exactly one
/// PAUSE, hence one XOFF frame (and its refreshes), and one RESUME once it
/// drains below Xon.
#[test]
fn hysteresis_around_xoff_gives_one_xoff() {
    use arbitrary_int::i4;
    use model::mmu::{Mmu, MmuConfig, MmuInputs, MmuParams};
    let mp = MmuParams::default();
    let mc = MmuConfig {
        cfg_buf_cells_i: 100 + 4 * 20,
        cfg_lossy_cells_i: 0,
        cfg_priv_cells_i: 0,
        cfg_hdrm_cells_i: vec![20; 4],
        cfg_xon_cells_i: 10,
        cfg_alpha_i: i4::new(0),
        cfg_alpha_lossy_i: i4::new(0),
        cfg_lossless_i: 1 << 3,
    };
    let mut mmu = Mmu::new(&mp, &mc);
    let p = PfcParams::default();
    let c = cfg(8, 20, 0, 60);
    let mut stim = Stimulus::<Pfc> {
        generated: None,
        params: p,
        config: c.clone(),
        cycles: Vec::new(),
        seed: 8,
    };
    let one = |arr: bool, dep: bool| {
        let mut i = MmuInputs::zero(&mp);
        if arr {
            i.set_arr(&mp, 3, 1);
        }
        if dep {
            i.set_dep(&mp, 3, 1);
        }
        i
    };
    let mut pauses = 0;
    let mut resumes = 0;
    let mut crossings = 0;
    let mut t = 0;
    while t < 6000 {
        let i = if t < 51 {
            // Fill: 50 cells in shared (T = Bs - S), the 51st into headroom.
            one(true, false)
        } else if t < 4000 {
            // Hover: a departure empties the headroom, the next arrival
            // crosses the threshold into it again.
            one(t % 2 == 0, t % 2 == 1)
        } else {
            one(false, true) // drain
        };
        let mo = mmu.step(&i);
        if (51..4000).contains(&t) && mo.verdict(0) == model::mmu::Verdict::Headroom {
            crossings += 1;
        }
        pauses += mo.pause_o[3] as u32;
        resumes += mo.resume_o[3] as u32;
        let mut pi = PfcInputs::zero(&p);
        pi.xoff_i = mo.xoff_o[..8]
            .iter()
            .enumerate()
            .fold(0, |a, (k, &b)| a | (u8::from(b) << k));
        stim.cycles.push(Cycle::Drive(pi));
        t += 1;
    }
    assert!(
        crossings > 1000,
        "the queue did not hover around Xoff: {crossings}"
    );
    assert_eq!((pauses, resumes), (1, 1), "the MMU's hysteresis");
    let outs = directed::outputs(&stim);
    let frames = collect_frames(outs.iter().map(|o| o.as_ref()));
    let mut adv = false;
    let (mut xoffs, mut refreshes, mut res) = (0, 0, 0);
    for f in &frames {
        let (_, cev, times) = classify(&f.bytes, 0);
        assert_eq!(cev, 1 << 3);
        match (adv, times[3] != 0) {
            (false, true) => xoffs += 1,
            (true, true) => refreshes += 1,
            (true, false) => res += 1,
            (false, false) => panic!("RESUME while ON"),
        }
        adv = times[3] != 0;
    }
    assert_eq!(
        (xoffs, res),
        (1, 1),
        "frames at {:?}",
        frames.iter().map(|f| f.first).collect::<Vec<_>>()
    );
    assert!(refreshes >= 10, "{refreshes} refreshes");
    support::lockstep_or_report(&stim, "hysteresis");
}

// ---------------------------------------------------------------------------
// Receive
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(256)))]

    /// The per-beat receive logic agrees with the byte-level reference
    /// classifier on every generated frame (good, corrupted, truncated,
    /// over-long, other types and opcodes, wrong DA), whatever idle cycles
    /// separate its beats, and only a PFC frame touches the timers.
    #[test]
    fn receive_classes_match_the_reference(
        specs in proptest::collection::vec(
            (testbenches::pfc::frame_spec_strategy(), 0usize..3), 1..20)
    ) {
        let p = PfcParams { qcw: 8, cw: 16 };
        let c = cfg(2, 8, 0, 100);
        let mut m = Pfc::new(&p, &c);
        for (spec, idle) in &specs {
            let bytes = spec.bytes(c.cfg_sa_i);
            let (want, cev, times) = classify(&bytes, c.cfg_sa_i);
            let bs = beats(&bytes);
            let before: Vec<_> = (0..PRIOS).map(|k| m.rx_timer(k)).collect();
            let mut got = None;
            for (k, &(d, last, empty)) in bs.iter().enumerate() {
                let mut i = PfcInputs::zero(&p);
                i.rx_valid_i = true;
                i.rx_last_i = last;
                i.rx_empty_i = arbitrary_int::u3::new(empty);
                i.rx_data_i = d;
                let o = m.step(&i);
                if last {
                    got = RxClass::from_code(o.rx_done_o);
                } else {
                    prop_assert_eq!(o.rx_done_o.value(), 0);
                }
                if k == 0 {
                    for _ in 0..*idle {
                        let o = m.step(&PfcInputs::zero(&p));
                        prop_assert_eq!(o.rx_done_o.value(), 0);
                    }
                }
            }
            prop_assert_eq!(got, Some(want), "{:?}", spec);
            for k in 0..PRIOS {
                let t = m.rx_timer(k);
                if want == RxClass::Pfc && cev >> k & 1 != 0 {
                    prop_assert_eq!(t.tq, times[k]);
                    prop_assert_eq!(t.tc, c.cfg_qcyc_i - 1);
                } else {
                    // Untouched: only ticked (never loaded) since before.
                    prop_assert!(t.tq <= before[k].tq);
                    if before[k].tq == 0 { prop_assert_eq!(t.tq, 0); }
                }
            }
        }
    }
}

/// REFERENCE.md's directed checks, exact to the cycle, then in co-simulation:
/// overwrite (time 1000, then time 10 later: paused until 10 quanta after
/// the second frame), cancel (time 0 releases the next cycle), a disabled
/// bit leaves its priority alone, and every malformed frame is counted and
/// ignored ([`directed::receive_outcome`]).
#[test]
fn receive_overwrite_cancel_disabled_and_malformed() {
    directed_on_model(
        &directed::receive().0,
        directed::receive_outcome,
        "receive directed",
    );
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

#[test]
fn illegal_configurations_are_rejected_and_flagged() {
    let p = PfcParams::default();
    let good = cfg(4, 3, 4, 10);
    assert!(Pfc::check(&p, &good).is_ok());
    let cases: Vec<(PfcConfig, &str, &str)> = vec![
        (
            PfcConfig {
                cfg_qcyc_i: 0,
                ..good.clone()
            },
            "cfg_qcyc_i",
            "1..=255",
        ),
        (
            PfcConfig {
                cfg_refresh_i: 2,
                ..good.clone()
            },
            "cfg_refresh_i",
            "cfg_refresh_i >= 3",
        ),
        (
            PfcConfig {
                cfg_gap_i: 5,
                ..good.clone()
            },
            "cfg_refresh_i",
            "= 13",
        ),
        (
            PfcConfig {
                cfg_quanta_i: vec![10, 10, 3, 10, 10, 10, 10, 10],
                ..good.clone()
            },
            "cfg_quanta_i",
            "priority 2",
        ),
        (
            PfcConfig {
                cfg_sa_i: 0x01_80_c2_00_00_01,
                ..good.clone()
            },
            "cfg_sa_i",
            "multicast",
        ),
    ];
    for (c, field, msg) in cases {
        let e = Pfc::check(&p, &c).unwrap_err();
        assert_eq!(e.field, field, "{e}");
        assert!(e.msg.contains(msg), "{e}");
        let mut m = Pfc::new(&p, &c);
        assert!(m.step(&PfcInputs::zero(&p)).cfg_err_o, "{field}");
    }
    let mut m = Pfc::new(&p, &good);
    assert!(!m.step(&PfcInputs::zero(&p)).cfg_err_o);
}

// ---------------------------------------------------------------------------
// Coverage and stimulus files
// ---------------------------------------------------------------------------

/// The generated stimulus reaches every coverage bin (model level, the
/// strategies of the equivalence test).
#[test]
fn stimulus_reaches_every_coverage_bin() {
    let mut hits = vec![0u64; Pfc::bins().len()];
    let mut runner = testbenches::seeded_runner(0xc0ffee);
    let strategy = proptest::sample::select(Pfc::variants()).prop_flat_map(|p| {
        testbenches::stimulus_strategy::<Pfc>(&p, testbenches::DEFAULT_CYCLES, true)
    });
    for _ in 0..200 {
        let s = strategy.new_tree(&mut runner).unwrap().current();
        let mut m = Pfc::new(&s.params, &s.config);
        for c in &s.cycles {
            match c {
                Cycle::Drive(i) => {
                    let o = m.step(i);
                    m.sample(i, &o, &mut hits);
                    m.assert_invariants();
                }
                Cycle::Reset => m = Pfc::new(&s.params, &s.config),
            }
        }
    }
    let holes: Vec<&str> = Pfc::bins()
        .iter()
        .zip(&hits)
        .filter(|(_, &h)| h == 0)
        .map(|(b, _)| *b)
        .collect();
    for (b, h) in Pfc::bins().iter().zip(&hits) {
        println!("{b:<28} {h}");
    }
    assert!(holes.is_empty(), "coverage holes: {holes:?}");
}

#[test]
fn stimulus_text_round_trips() {
    let p = PfcParams::default();
    let s = testbenches::generate::<Pfc>(&p, 9, 400, None);
    let back = Stimulus::<Pfc>::from_text(&s.to_text(), &Pfc::variants()).unwrap();
    assert_eq!(back.config, s.config);
    assert_eq!(back.cycles, s.cycles);
    let z = PfcOutputs::zero(&p);
    assert!(!z.tx_valid_o);
}

// ---------------------------------------------------------------------------
// The system scenario
// ---------------------------------------------------------------------------

/// MMU admission + PFC + link + an upstream that obeys the pause vector,
/// worst case (back-to-back MTU packets, egress stalled, the switch's MAC
/// starting an MTU frame just before each PFC frame, the upstream taking the
/// whole 3840 B allowance to react). With the seed's headroom no packet is
/// lost and the refreshes keep the upstream paused while the queue is OFF;
/// with one MTU less a drop happens. Three link lengths with 1536 B packets
/// and one with the largest packet the MMU takes (63 cells).
#[test]
fn system_headroom_formula() {
    println!(
        "| link D (cycles) | MTU (cells) | eta formula (B) | eta (cells) | max headroom used | \
         drops | eta - MTU (cells) | max used | drops | reaction (cycles) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &(d, l) in &[(100u64, 24u32), (1000, 24), (4000, 24), (1000, 63)] {
        let s = system::Setup::worst_case(d, l);
        let ok = system::run(&s);
        let short = system::run(&s.with_eta(s.eta_cells() - l));
        println!(
            "| {d} | {l} | {} | {} | {} | {} | {} | {} | {} | {} |",
            system::eta_formula_bytes(d, l),
            s.eta_cells(),
            ok.max_headroom,
            ok.drops,
            short.eta_cells,
            short.max_headroom,
            short.drops,
            ok.reaction.unwrap_or(0)
        );
        assert_eq!(
            ok.drops, 0,
            "D {d} L {l}: drop with the formula's headroom: {ok:?}"
        );
        assert_eq!(
            ok.gaps, 0,
            "D {d} L {l}: the upstream was released while OFF"
        );
        assert!(ok.resumed, "D {d} L {l}: never resumed: {ok:?}");
        assert!(ok.max_headroom <= s.eta_cells());
        assert!(
            ok.max_headroom > s.eta_cells() - l,
            "D {d} L {l}: the worst case is not tight ({} of {})",
            ok.max_headroom,
            s.eta_cells()
        );
        assert!(ok.pfc_frames >= 3, "refreshes expected: {ok:?}");
        assert_eq!(ok.rx_classes[RxClass::Fcs as usize], 0);
        assert_eq!(ok.rx_classes[RxClass::Pfc as usize], ok.pfc_frames);
        assert!(
            ok.rx_classes[RxClass::Other as usize] >= ok.pfc_frames,
            "data frames are 'other'"
        );
        // The upstream kept starting packets back to back until the bound
        // 2 Dprop + waiting (one MTU) + the 3840 B allowance, counted from
        // the start of the packet that raised PAUSE.
        let bound = 2 * d + 8 * l as u64 + system::ALLOWANCE_CYCLES;
        let r = ok.reaction.expect("the upstream stopped");
        assert!(
            r <= bound && r + 8 * l as u64 > bound,
            "D {d} L {l}: reaction {r}, bound {bound}"
        );
        assert!(
            short.drops >= 1,
            "D {d} L {l}: no drop with eta one MTU smaller: {short:?}"
        );
    }
}
