//! BCN congestion point: equivalence of golden model and RTL, model
//! invariants, the frames byte for byte and through tshark, and the directed
//! scenarios of seed 003 (congestion builds, tagged frames while settling,
//! several congestion points, Pm ~ 1/100, the buffer a burst needs with
//! sampling, in closed loop with reaction points).

use crate::support;

use model::bcn_cp::{
    bcn_frame, feedback, parse_frame, BcnCp, BcnCpInputs, BcnCpOutputs, BcnCpParams, Msg,
    FB_LATENCY, FRAME_BYTES, PM_ALWAYS,
};
use model::stim::{Cycle, Stimulus};
use model::Block;
use proptest::prelude::*;
use testbenches::bcn_cp::{frames_of, scenario};

#[test]
fn equivalence_random() {
    support::equivalence::<BcnCp>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<BcnCp>();
}

/// The random stimulus reaches every coverage bin (model level, 256 cases
/// drawn like the equivalence cases from a fixed seed).
#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<BcnCp>();
}

/// The message of a cycle's outputs (when `msg_valid_o`).
fn msg_of(o: &BcnCpOutputs) -> Msg {
    Msg {
        sa: o.msg_sa_o,
        da: o.msg_flow_da_o,
        prio: o.msg_prio_o.value(),
        cpid: o.msg_cpid_o,
        qoff: o.msg_qoff_o.value(),
        qdelta: o.msg_qdelta_o.value(),
        ts: o.msg_ts_o,
        rlt: o.msg_rlt_o,
        rlt_id: o.msg_rlt_id_o,
        rlt_cpid: o.msg_rlt_cpid_o,
        etype: o.msg_etype_o,
    }
}

/// Runs `s` on the model: every cycle's outputs (`None` for a reset).
fn outputs(s: &Stimulus<BcnCp>) -> Vec<Option<BcnCpOutputs>> {
    let mut m = BcnCp::new(&s.params, &s.config);
    s.cycles
        .iter()
        .map(|c| match c {
            Cycle::Drive(i) => {
                let o = m.step(i);
                if !o.cfg_err_o {
                    m.assert_invariants();
                }
                Some(o)
            }
            Cycle::Reset => {
                m = BcnCp::new(&s.params, &s.config);
                None
            }
        })
        .collect()
}

/// Checks the spec on the model, cycle by cycle, against an independent
/// reading of it: depths and totals, drops, samples only on arrivals and
/// never on a BCN frame, the feedback from the depths, the message rule
/// (Fb < 0, or a tag naming this point), the strip rule (only this point's
/// tags), and every message either transmitted byte for byte as the
/// reference frame (in order) or counted as dropped. A sample and its
/// message are on the ports `FB_LATENCY` cycles after the arrival.
fn check_spec(s: &Stimulus<BcnCp>) -> Result<(), TestCaseError> {
    let p = s.params;
    let c = &s.config;
    let mut m = BcnCp::new(&p, c);
    let mut queue: std::collections::VecDeque<Msg> = Default::default();
    let mut asm = testbenches::bcn_cp::FrameAssembler::default();
    let mut qold = vec![0u64; p.nq];
    // The arrivals of the last FB_LATENCY cycles: inputs and the depth of
    // the arrival's queue at the end of the cycle (None: before a reset).
    let mut hist: std::collections::VecDeque<Option<(BcnCpInputs, u64)>> =
        std::iter::repeat_n(None, FB_LATENCY as usize).collect();
    for (t, cyc) in s.cycles.iter().enumerate() {
        let i = match cyc {
            Cycle::Reset => {
                m = BcnCp::new(&p, c);
                queue.clear();
                asm.push(t as u64, None);
                qold.iter_mut().for_each(|q| *q = 0);
                hist.iter_mut().for_each(|h| *h = None);
                continue;
            }
            Cycle::Drive(i) => i,
        };
        let before = m.state().clone();
        let o = m.step(i);
        let after = m.state();
        // Depths: what went in minus what went out.
        let (aq, dq) = (
            i.arr_queue_i.value() as usize,
            i.dep_queue_i.value() as usize,
        );
        let mut want = before.q_q.clone();
        if i.dep_valid_i && dq < p.nq {
            let rel = (i.dep_len_i.value() as u32).min(want[dq]);
            want[dq] -= rel;
            prop_assert_eq!(
                o.err_o.value() & 1 != 0,
                (i.dep_len_i.value() as u32) > before.q_q[dq]
            );
        }
        let arr_in = i.arr_valid_i && aq < p.nq;
        if arr_in && !o.arr_drop_o {
            want[aq] += i.arr_len_i.value() as u32;
        }
        prop_assert_eq!(&after.q_q, &want, "cycle {}: depths", t);
        if arr_in && o.arr_drop_o {
            let tot: u64 = want.iter().map(|&x| x as u64).sum();
            prop_assert!(
                want[aq] as u64 + i.arr_len_i.value() as u64 > c.cfg_qmax_i as u64
                    || tot + i.arr_len_i.value() as u64 > c.cfg_buf_i as u64,
                "cycle {}: dropped although it fits",
                t
            );
        }
        hist.push_back(Some((
            i.clone(),
            after.q_q.get(aq).copied().unwrap_or(0) as u64,
        )));
        // The arrival whose sample (if any) is on the ports now.
        let then = hist.pop_front().unwrap();
        prop_assert!(
            !o.sample_o
                || then
                    .as_ref()
                    .is_some_and(|(j, _)| j.arr_valid_i && (j.arr_queue_i.value() as usize) < p.nq),
            "cycle {}: sample without arrival {} cycles earlier",
            t,
            FB_LATENCY
        );
        let own = |q: usize| (c.cfg_cpid_i.value() << 3) | q as u16;
        let dep_in = i.dep_valid_i && dq < p.nq;
        prop_assert_eq!(
            o.dep_strip_o,
            dep_in && i.dep_rlt_i && i.dep_rlt_cpid_i == own(dq),
            "cycle {}: strip",
            t
        );
        if o.sample_o {
            let (i, qn) = then.as_ref().unwrap();
            let aq = i.arr_queue_i.value() as usize;
            prop_assert!(
                i.arr_etype_i != c.cfg_etype_i,
                "cycle {}: a BCN frame sampled",
                t
            );
            let qn = *qn as i64;
            let qoff = ((c.cfg_qeq_i[aq] as i64 - qn).div_euclid(64)).clamp(-32768, 32767) as i16;
            let qdelta = ((qn - qold[aq] as i64).div_euclid(64)).clamp(-32768, 32767) as i16;
            qold[aq] = qn as u64;
            prop_assert_eq!(o.msg_qoff_o.value(), qoff, "cycle {}", t);
            prop_assert_eq!(o.msg_qdelta_o.value(), qdelta, "cycle {}", t);
            let fb = qoff as f64 - (c.cfg_w_i.value() as f64 / 4.0 * qdelta as f64).floor();
            let fb = fb.clamp(-32768.0, 32767.0) as i16;
            prop_assert_eq!(o.msg_fb_o.value(), fb, "cycle {}", t);
            let mine = i.arr_rlt_i && i.arr_rlt_cpid_i == own(aq);
            prop_assert_eq!(o.msg_valid_o, fb < 0 || mine, "cycle {}", t);
            prop_assert_eq!(o.msg_rlt_own_o, mine);
            prop_assert_eq!(o.msg_etype_o, i.arr_etype_i);
            prop_assert_eq!(o.msg_sa_o, i.arr_sa_i);
            prop_assert_eq!(o.msg_cpid_o >> 3, c.cfg_cpid_i.value());
            prop_assert_eq!(o.msg_cpid_o & 7, aq as u16);
        } else {
            prop_assert!(!o.msg_valid_o);
        }
        if o.msg_valid_o {
            if before.pend_valid_q && before.tx_busy_q && before.tx_beat_q.value() != 7 {
                prop_assert_eq!(after.msg_drops_q, sat(before.msg_drops_q, p.cw, 1));
            } else {
                queue.push_back(msg_of(&o));
            }
        }
        if let Some((_, f)) = asm.push(t as u64, Some(&o)) {
            let want = queue.pop_front();
            prop_assert!(want.is_some(), "cycle {}: a frame no message asked for", t);
            prop_assert_eq!(
                f.as_slice(),
                &bcn_frame(c, &want.unwrap())[..],
                "cycle {}",
                t
            );
        }
        prop_assert!(
            queue.len() <= 3,
            "cycle {}: more than one frame and one pending",
            t
        );
    }
    Ok(())
}

fn sat(v: u32, cw: u32, inc: u32) -> u32 {
    (v as u64 + inc as u64).min((1u64 << cw) - 1) as u32
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(64)))]

    /// The model against an independent reading of the spec (depths,
    /// drops, feedback, message rule, frames byte for byte, in order).
    #[test]
    fn model_follows_the_spec(
        stim in proptest::sample::select(BcnCp::variants())
            .prop_flat_map(|p| testbenches::stimulus_strategy::<BcnCp>(&p, 500..=2000, false))
    ) {
        check_spec(&stim)?;
    }

    /// `feedback` is Qoff - floor(W * Qdelta) with W = w/4, saturated.
    #[test]
    fn feedback_is_exact_then_saturated(qoff in any::<i16>(), qdelta in any::<i16>(), w in 0u8..32) {
        let exact = qoff as f64 - (w as f64 / 4.0 * qdelta as f64).floor();
        let fb = feedback(qoff, qdelta, arbitrary_int::u5::new(w));
        prop_assert_eq!(fb as f64, exact.clamp(-32768.0, 32767.0));
    }
}

#[test]
fn every_scenario_follows_the_spec() {
    for s in <BcnCp as testbenches::Bench>::scenarios() {
        check_spec(&(s.build)()).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    }
}

/// A directed scenario's documented outcome (the check the scenarios test
/// runs on the RTL's outputs) on the golden model's outputs (the spec's
/// invariants checked on the way), then model and RTL in lockstep.
fn directed(s: &Stimulus<BcnCp>, check: testbenches::ScenarioCheck<BcnCp>, what: &str) {
    let outs: Vec<BcnCpOutputs> = outputs(s).into_iter().map(Option::unwrap).collect();
    check(s, &outs).unwrap_or_else(|e| panic!("{what}: {e}"));
    support::lockstep_or_report(s, what);
}

/// Step 1: the queue crosses Qeq and every message from then on is a
/// negative feedback to the sampled frame's SA; below Qeq there is none.
#[test]
fn congestion_builds_sends_negative_feedback_to_the_sources() {
    let s = scenario::congestion_builds();
    directed(&s, scenario::negative_to_sources, "congestion-builds");
    // The frames the check reads from the outputs are the model's.
    let outs: Vec<BcnCpOutputs> = outputs(&s).into_iter().map(Option::unwrap).collect();
    assert_eq!(scenario::frames_on(&outs), frames_of(&s).unwrap());
}

/// Step 3: every sampled tagged frame elicits a message (Fb >= 0 here),
/// no untagged one does; tagged departures are stripped and counted.
#[test]
fn tagged_frames_elicit_messages_and_lose_their_tags() {
    directed(
        &scenario::tagged_settling(),
        scenario::tagged_answered,
        "tagged-settling",
    );
}

/// One frame on the wire, one pending, the third dropped; a message on the
/// last beat while one is pending: the pending one goes back to back.
#[test]
fn pending_slot_and_drop() {
    directed(
        &scenario::pending_and_drop(),
        scenario::pending_then_drop,
        "pending-and-drop",
    );
}

/// Pm = 10/1024 ~ 1/100 (1/102.4): over 20,000 arrivals the LFSR samples
/// close to that rate.
#[test]
fn pm_is_about_one_percent() {
    directed(
        &scenario::pm_one_percent(),
        scenario::about_one_percent,
        "pm-one-percent",
    );
    // The compared bits are uniform: Pm = k / 1024 for every k.
    let (p, c) = scenario::config(0, PM_ALWAYS);
    let mut m = BcnCp::new(&p, &c);
    let a = scenario::arrival(0, 64, 1, 2, false);
    let mut lows = vec![0u32; 1024];
    for _ in 0..65_535 {
        lows[(m.state().lfsr_q & 1023) as usize] += 1;
        let mut i = a.clone();
        i.dep_valid_i = true;
        i.dep_len_i = arbitrary_int::u14::new(64);
        m.step(&i);
    }
    assert_eq!(lows[0], 63, "the all-zero state is not visited");
    assert!(lows[1..].iter().all(|&x| x == 64));
}

/// Several congestion points: a frame tagged by this point is answered
/// with any Fb, one tagged by another point only when Fb < 0 (here only
/// after the queue passes Qeq), an untagged one likewise; BCN frames are
/// never sampled; only this point's tags are stripped.
#[test]
fn only_this_points_tags_are_answered_and_stripped() {
    directed(
        &scenario::several_points(),
        scenario::own_tags_only,
        "several-points",
    );
}

/// The buffer a burst needs, with sampling (docs/bcn.md, "The lossless
/// buffer with sampling"; seed 003 step 6): four sources at 8 B/cycle start
/// together into a port draining 4 B/cycle, behind reaction points (golden
/// models) that hear this point's messages after a loop delay. The first
/// overshoot of the queue is predicted, independently of the blocks, by
/// the mean-field model `studies::bcn_metrics::burst_peak`: the queue
/// grows until Fb turns negative, then every sampled frame halves one
/// source a loop delay later. Every arrival sampled, for three delays
/// (deterministic); a quarter of them over eight seeds (the mean). The
/// seed's own rule, Qeq plus input bandwidth x delay, is the first term
/// only: it holds at Pm = 1 and misses the sampling (the studies test the
/// seed's Pm). The point's inputs of one run are replayed on its RTL.
#[test]
fn burst_buffer_follows_the_sampling_model() {
    let peak = |pm: u16, delay: u64, seed: u64| -> f64 {
        let s = scenario::closed_loop_config(pm, delay, seed);
        let mut l = studies::bcn_loop::ModelLoop::models(&s);
        l.run(40_000).unwrap();
        assert_eq!(l.drops[0], 0);
        l.max_depth[0] as f64
    };
    let model = |pm: u16, delay: u64| {
        studies::bcn_metrics::burst_peak(
            4,
            8.0,
            4.0,
            1500.0,
            pm as f64 / 1024.0,
            delay,
            26_000.0,
            2.0,
        )
    };
    for delay in [250u64, 1000, 4000] {
        let (got, want) = (peak(1024, delay, 1), model(1024, delay));
        assert!(
            (got - want).abs() <= 0.15 * want,
            "Pm = 1, delay {delay}: peak {got:.0} B, model {want:.0} B"
        );
    }
    let runs: Vec<f64> = (1..=8).map(|seed| peak(256, 1000, seed)).collect();
    let mean = runs.iter().sum::<f64>() / runs.len() as f64;
    let want = model(256, 1000);
    assert!(
        (mean - want).abs() <= 0.15 * want,
        "Pm = 1/4: mean peak {mean:.0} B over {runs:?}, model {want:.0} B"
    );
    directed(
        &scenario::closed_loop(),
        scenario::peak_as_modelled,
        "closed-loop",
    );
}

/// A BCN frame byte for byte (the table of docs/bcn_cp.md).
#[test]
fn frame_layout_is_the_documented_one() {
    let p = BcnCpParams::default();
    let c = BcnCp::default_config(&p);
    let m = Msg {
        sa: 0x02_11_22_33_44_55,
        da: 0x02_66_77_88_99_aa,
        prio: 5,
        cpid: (0x0a5 << 3) | 6,
        qoff: -2,
        qdelta: 0x1234,
        ts: 0xdead_beef,
        rlt: true,
        rlt_id: 0xabcd,
        rlt_cpid: 0x0529,
        etype: 0x86dd,
    };
    let f = bcn_frame(&c, &m);
    let want_head: [u8; 52] = [
        0x02, 0x11, 0x22, 0x33, 0x44, 0x55, // DA = sampled SA
        0x02, 0x00, 0x5e, 0x00, 0xbc, 0x01, // SA = cfg_cp_sa_i
        0x81, 0x00, 0xe0, 0x00, // 802.1Q, PCP 7
        0x88, 0xb5, // EtherType
        0x05, 0x2e, // CPID = 0x0a5 << 3 | 6
        0xff, 0xfe, // Qoff = -2
        0x12, 0x34, // Qdelta
        0xde, 0xad, 0xbe, 0xef, // timestamp
        0x02, 0x66, 0x77, 0x88, 0x99, 0xaa, // sampled DA
        0x02, 0x11, 0x22, 0x33, 0x44, 0x55, // sampled SA
        0x81, 0x00, 0xa0, 0x00, // its Q-tag, PCP 5
        0x22, 0xe9, 0x05, 0x29, 0xab, 0xcd, // its rate-limiter tag: CPID, id
        0x86, 0xdd, // its EtherType
    ];
    assert_eq!(&f[..52], &want_head);
    assert!(f[52..60].iter().all(|&b| b == 0));
    assert_eq!(f.len(), FRAME_BYTES);
    // The FCS: the zlib CRC-32, least significant byte first.
    let fcs = u32::from_le_bytes([f[60], f[61], f[62], f[63]]);
    assert_eq!(fcs, model::eth::crc32(&f[..60]));
    assert_eq!(parse_frame(&f), Some((m, 7, 0x88b5)));
    let mut bad = f;
    bad[20] ^= 1;
    assert_eq!(parse_frame(&bad), None, "a flipped bit fails the FCS");
    // Untagged: the EtherType at 44..45, then zeros.
    let u = Msg {
        rlt: false,
        rlt_id: 0,
        rlt_cpid: 0,
        ..m
    };
    let f = bcn_frame(&c, &u);
    assert_eq!(&f[44..52], &[0x86, 0xdd, 0, 0, 0, 0, 0, 0]);
    assert_eq!(parse_frame(&f), Some((u, 7, 0x88b5)));
}

/// Frames of a random run go to `out/bcn_cp/frames.pcap`; tshark decodes
/// each as Ethernet + 802.1Q (PCP 7) + the BCN EtherType with a good FCS,
/// and the payload bytes are the documented ones (checked here, as BCN
/// has no Wireshark dissector).
#[test]
fn generated_frames_decode_in_tshark() {
    let p = BcnCpParams::default();
    let c = BcnCp::default_config(&p);
    let s = scenario::congestion_builds();
    let mut frames: Vec<(u64, Vec<u8>)> = frames_of(&s).unwrap();
    let run = testbenches::generated::<BcnCp>(&p, &c, 5, 3000);
    frames.extend(
        frames_of(&run)
            .unwrap()
            .into_iter()
            .map(|(t, f)| (t + 1000, f)),
    );
    assert!(frames.len() >= 20, "{} frames", frames.len());
    let dir = support::out_dir().join("bcn_cp");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("frames.pcap");
    std::fs::write(&path, testbenches::pcap::to_vec(&frames)).unwrap();
    let fields = [
        "eth.dst",
        "eth.src",
        "vlan.priority",
        "vlan.id",
        "vlan.etype",
        "eth.fcs.status",
        "frame.len",
    ];
    let Some(rows) = support::tshark_fields(&path, &fields) else {
        return;
    };
    assert_eq!(rows.len(), frames.len());
    let mac = |a: u64| {
        model::eth::mac_bytes(a)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    for ((_, f), cols) in frames.iter().zip(&rows) {
        let (m, _, _) = parse_frame(f).unwrap();
        let line = cols.join(",");
        assert_eq!(cols[0], mac(m.sa), "{line}");
        assert_eq!(cols[1], mac(c.cfg_cp_sa_i), "{line}");
        assert_eq!(cols[2], "7", "{line}");
        assert_eq!(cols[3], "0", "{line}");
        assert_eq!(cols[4], "0x88b5", "{line}");
        assert_eq!(cols[5], "1", "FCS not good: {line}");
        assert_eq!(cols[6], "64", "{line}");
    }
    // A corrupted copy is flagged bad by tshark: the check above can fail.
    let mut bad = frames[0].1.clone();
    bad[21] ^= 4;
    let badp = dir.join("bad.pcap");
    std::fs::write(&badp, testbenches::pcap::to_vec(&[(0, bad)])).unwrap();
    let bad_rows = support::tshark_fields(&badp, &["eth.fcs.status"]).unwrap();
    assert_eq!(bad_rows, vec![vec!["0".to_string()]]);
}
