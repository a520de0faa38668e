//! BCN reaction point: equivalence of golden model and RTL, model
//! invariants, the arithmetic of the seed's rules, and the directed
//! scenarios of seed 003.

mod support;

use arbitrary_int::{u4, u5};
use model::bcn_rp::{
    decrease, feedback, increase, Act, BcnRp, BcnRpOutputs, BcnRpParams, FW, LEVEL_LINK, LEVEL_PRIO,
};
use model::stim::{Cycle, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use testbenches::bcn_rp::scenario::{self, A, B};

#[test]
fn equivalence_random() {
    support::equivalence::<BcnRp>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<BcnRp>();
}

/// Steps the model through `s`, checking the spec's invariants and the
/// handshake every cycle.
fn check_invariants(s: &Stimulus<BcnRp>) -> Result<(), TestCaseError> {
    let mut m = BcnRp::new(&s.params, &s.config);
    for (t, c) in s.cycles.iter().enumerate() {
        let i = match c {
            Cycle::Reset => {
                m = BcnRp::new(&s.params, &s.config);
                continue;
            }
            Cycle::Drive(i) => i,
        };
        let before = m.state().clone();
        let o = m.step(i);
        if !o.cfg_err_o {
            m.assert_invariants();
        } else {
            prop_assert!(
                !m.state().valid_q.contains(&true),
                "cycle {t}: limiter with cfg_err"
            );
        }
        prop_assert!(
            !o.in_ready_o || i.in_valid_i,
            "cycle {t}: ready without valid"
        );
        if o.out_valid_o && !o.out_tag_valid_o {
            // A bypass frame is the offered one, taken this cycle.
            prop_assert!(o.in_ready_o && o.out_da_o == i.in_da_i && o.out_len_o == i.in_len_i);
        }
        if o.out_tag_valid_o {
            let j = o.out_tag_id_o as usize;
            prop_assert!(before.valid_q[j], "cycle {t}: tag of a free limiter");
            prop_assert!(before.cnt_q[j] > 0);
            prop_assert_eq!(
                o.out_tag_cpid_o,
                before.cpid_q[j],
                "cycle {}: the tag names its point",
                t
            );
        } else {
            prop_assert_eq!(o.out_tag_cpid_o, 0);
        }
        // Fb >= 0 acts only from the limiter's own point.
        if i.msg_valid_i && !o.cfg_err_o {
            let act = Act::from_code(o.msg_act_o);
            if matches!(act, Act::Increase | Act::Hold) {
                let j = o.msg_lim_o as usize;
                prop_assert_eq!(
                    i.msg_cpid_i,
                    before.cpid_q[j],
                    "cycle {}: {:?} from another point",
                    t,
                    act
                );
            }
        }
        // Frames are conserved: the count moves by enqueue - release.
        let st = m.state();
        for j in 0..s.params.k {
            let rel = o.out_tag_valid_o && o.out_tag_id_o as usize == j;
            let d = st.cnt_q[j] as i32 - before.cnt_q[j] as i32;
            prop_assert!(
                d == -(rel as i32) || d == 1 - rel as i32,
                "cycle {t}: count {j}"
            );
            if o.rm_line_o[j] || o.rm_idle_o[j] {
                prop_assert!(!st.valid_q[j]);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(128)))]

    #[test]
    fn model_invariants(
        stim in proptest::sample::select(BcnRp::variants())
            .prop_flat_map(|p| testbenches::stimulus_strategy::<BcnRp>(&p, 500..=2000, true))
    ) {
        check_invariants(&stim)?;
    }

    /// Fb against its definition in plain integers (floor division).
    #[test]
    fn feedback_is_exact_then_saturated(qoff in any::<i16>(), qd in any::<i16>(), w in 0u8..32) {
        let exact = qoff as i64 - (w as i64 * qd as i64).div_euclid(4);
        let want = exact.clamp(-32768, 32767) as i16;
        prop_assert_eq!(feedback(qoff, qd, u5::new(w)), want);
    }

    /// Decrease and increase against real-valued arithmetic: never below
    /// the minimum, never above the line, never by more than half.
    #[test]
    fn rate_rules(rate in 1u32..(1 << 24), fb in 1u32..=32768, g in 0u8..16,
                  ru in any::<u16>(), min in 1u32..(1 << 24)) {
        let min = min.min(rate);
        let (r, capped, at_min) = decrease(rate, fb, u4::new(g), min);
        let want = rate as f64 * (1.0 - (fb as f64 / 2f64.powi(g as i32)).min(0.5));
        prop_assert!(r >= min && r <= rate);
        if !at_min {
            prop_assert!((r as f64 - want).abs() <= 1.0, "{} vs {}", r, want);
        }
        let _ = capped;
        let line = (1u32 << 24) - 1;
        let (r, _) = increase(rate, fb.min(32767), ru, u4::new(g), line);
        let inc = (fb.min(32767) as u64 * ru as u64) >> g;
        prop_assert_eq!(r as u64, (rate as u64 + inc).min(line as u64));
    }
}

fn act(o: &BcnRpOutputs) -> Act {
    Act::from_code(o.msg_act_o)
}

#[test]
fn install_on_first_negative_message() {
    let (stim, s) = scenario::install();
    let o = &s.outs;
    let t = scenario::first_act(o, Act::Install).expect("installed");
    assert_eq!(t, 100);
    // Fb = -32, Gd = 1/128: rate = 8 x (1 - 1/4) = 6 B/cycle, exactly.
    assert_eq!(o[t + 1].lim_rate_o[0], 6 << FW);
    assert!(o[t + 1].lim_valid_o[0]);
    // Before: nothing tagged. After: A's frames all tagged, B's none.
    assert_eq!(scenario::sent(o, A, 0, t + 1).1, 0);
    let (bytes_a, tagged_a, frames_a) = scenario::sent(o, A, t + 1, o.len());
    assert!(frames_a > 20 && tagged_a == frames_a);
    let (_, tagged_b, frames_b) = scenario::sent(o, B, 0, o.len());
    assert!(frames_b > 10 && tagged_b == 0, "B bypasses");
    // A offered 6 B/cycle; the limiter passes them at 6 B/cycle.
    let cycles = (o.len() - t - 1) as f64;
    let rate = bytes_a as f64 / cycles;
    assert!((rate - 6.0).abs() < 0.3, "A at {rate} B/cycle");
    // Only one message, so no other action.
    assert!(o.iter().filter(|o| act(o) != Act::None).count() == 1);
    support::lockstep_or_report(&stim, "install");
}

#[test]
fn decrease_is_multiplicative() {
    let (stim, s) = scenario::decrease();
    let o = &s.outs;
    let mut want = 8u64 << FW;
    for n in 0..5 {
        let t = 50 + 50 * n;
        // Fb = -16, Gd = 1/128: x (1 - 1/8), floored.
        want -= (want * 16) >> 7;
        assert_eq!(o[t + 1].lim_rate_o[0] as u64, want, "after message {n}");
        let a = act(&o[t]);
        assert_eq!(a, if n == 0 { Act::Install } else { Act::Decrease });
    }
    // 8 x (7/8)^5 = 4.1 B/cycle: A's throughput after the last message.
    let (bytes, _, _) = scenario::sent(o, A, 300, 400);
    let r = bytes as f64 / 100.0;
    assert!((r - want as f64 / 65536.0).abs() < 0.7, "{r}");
    support::lockstep_or_report(&stim, "decrease");
}

#[test]
fn rate_settles_near_the_bottleneck() {
    let (stim, s) = scenario::settle();
    let o = &s.outs;
    let acts: Vec<Act> = o.iter().map(act).collect();
    assert!(acts.contains(&Act::Install));
    assert!(acts.contains(&Act::Decrease) && acts.contains(&Act::Increase));
    // Over the second half, A's throughput is the bottleneck's 2 B/cycle
    // within 25 %, and the limiter's rate oscillates around it.
    let n = o.len();
    let (bytes, tagged, frames) = scenario::sent(o, A, n / 2, n);
    let r = bytes as f64 / (n / 2) as f64;
    assert!((r - 2.0).abs() < 0.5, "settled at {r} B/cycle");
    assert_eq!(tagged, frames);
    let mean_rate: f64 = o[n / 2..]
        .iter()
        .map(|o| o.lim_rate_o[0] as f64 / 65536.0)
        .sum::<f64>()
        / (n / 2) as f64;
    assert!((mean_rate - 2.0).abs() < 0.6, "mean rate {mean_rate}");
    support::lockstep_or_report(&stim, "settle");
}

#[test]
fn increase_to_line_rate_removes_the_limiter() {
    let (stim, s) = scenario::increase_removal();
    let o = &s.outs;
    assert_eq!(o[21].lim_rate_o[0], 4 << FW, "Fb = -64: halved");
    // +Gi Fb Ru = 512 / 16 x 1/16 B/cycle = 2 B/cycle per message.
    assert_eq!(act(&o[100]), Act::Increase);
    assert_eq!(o[101].lim_rate_o[0], 6 << FW);
    assert_eq!(act(&o[140]), Act::Increase);
    // At 8 B/cycle = line: removed once its FIFO is empty.
    let rm = o
        .iter()
        .position(|o| o.rm_line_o[0])
        .expect("removed at line rate");
    assert!(rm >= 140);
    assert!(!o[rm + 1].lim_valid_o[0]);
    assert_eq!(o[rm + 1].lim_rate_o[0], 0);
    // Later messages for A (positive) do not install anything.
    assert!(o[rm + 1..].iter().all(|o| !o.lim_valid_o[0]));
    let (_, tagged, frames) = scenario::sent(o, A, rm + 1, o.len());
    assert!(frames > 10 && tagged == 0, "A bypasses after the removal");
    support::lockstep_or_report(&stim, "increase-removal");
}

#[test]
fn idle_limiter_is_removed_after_the_idle_time() {
    let (stim, s) = scenario::idle_removal();
    let o = &s.outs;
    let last_rel = o
        .iter()
        .rposition(|o| o.out_tag_valid_o)
        .expect("tagged frames");
    let rm = o.iter().position(|o| o.rm_idle_o[0]).expect("removed idle");
    // Loaded to 200 at the last release, counted down from the next cycle.
    assert_eq!(rm, last_rel + 200, "last release {last_rel}");
    assert!(o[rm].lim_valid_o[0] && !o[rm + 1].lim_valid_o[0]);
    support::lockstep_or_report(&stim, "idle-removal");
}

#[test]
fn fallback_to_coarser_keys_when_the_table_is_full() {
    let (stim, s) = scenario::fallback();
    let o = &s.outs;
    assert_eq!(act(&o[10]), Act::Install);
    assert_eq!(act(&o[200]), Act::FallbackPrio);
    assert_eq!(o[201].lim_level_o[0], LEVEL_PRIO);
    assert_eq!(act(&o[400]), Act::FallbackLink);
    assert_eq!(o[401].lim_level_o[0], LEVEL_LINK);
    let c: testbenches::bcn_rp::Flow = (0x0200_0000_000c, 3);
    let d: testbenches::bcn_rp::Flow = (0x0200_0000_000d, 5);
    // Before 200 only A is tagged; between 200 and 400 A and C (priority
    // 3); after 400 all three.
    let tag = |f, a, b| scenario::sent(o, f, a, b);
    assert!(tag(A, 20, 200).1 > 0 && tag(c, 20, 200).1 == 0 && tag(d, 20, 200).1 == 0);
    assert!(tag(c, 210, 400).1 > 0 && tag(d, 210, 400).1 == 0);
    assert!(tag(d, 410, 600).1 > 0);
    // Every rate is a decrease of the previous: 8 x (1 - 1/16)^3.
    let mut want = 8u64 << FW;
    for _ in 0..3 {
        want -= (want * 8) >> 7;
    }
    assert_eq!(o[401].lim_rate_o[0] as u64, want);
    support::lockstep_or_report(&stim, "fallback");
}

/// Two congestion points: the limiter answers to the point that last
/// decreased it (its CPID, carried in its frames' tags); only that point's
/// positive feedback raises it.
#[test]
fn only_the_point_that_set_the_rate_raises_it() {
    let (stim, s) = scenario::two_points();
    let o = &s.outs;
    let rate = |t: usize| o[t].lim_rate_o[0];
    assert_eq!(act(&o[10]), Act::Install);
    assert_eq!(o[11].lim_cpid_o[0], 1);
    // Point 2 has room: its positive message is ignored.
    assert_eq!(act(&o[100]), Act::Ignore);
    assert_eq!((rate(101), o[101].lim_cpid_o[0]), (rate(100), 1));
    // Point 2 is congested: it decreases the rate and takes the limiter.
    assert_eq!(act(&o[200]), Act::Decrease);
    assert!(rate(201) < rate(200) && o[201].lim_cpid_o[0] == 2);
    // Point 1 cannot raise it any more; point 2 can.
    assert_eq!(act(&o[300]), Act::Ignore);
    assert_eq!(rate(301), rate(300));
    assert_eq!(act(&o[400]), Act::Increase);
    assert!(rate(401) > rate(400));
    // The tags name the point the limiter answers to.
    let tags = |a: usize, b: usize| -> Vec<u16> {
        let mut v: Vec<u16> = o[a..b]
            .iter()
            .filter(|x| x.out_tag_valid_o)
            .map(|x| x.out_tag_cpid_o)
            .collect();
        v.dedup();
        v
    };
    assert_eq!(tags(11, 201), vec![1]);
    assert_eq!(tags(201, 500), vec![2]);
    support::lockstep_or_report(&stim, "two-points");
}

#[test]
fn restarted_flow_meets_its_limiter_and_it_dissipates() {
    let (stim, s) = scenario::restart();
    let o = &s.outs;
    let restart = 250;
    assert!(o[restart].lim_valid_o[0], "still in place at the restart");
    // The first frames after the restart are tagged.
    let first = (restart..o.len())
        .find(|&t| o[t].out_valid_o && o[t].out_da_o == A.0)
        .unwrap();
    assert!(o[first].out_tag_valid_o);
    // Positive messages only, and the limiter goes at line rate.
    let rm = o.iter().position(|o| o.rm_line_o[0]).expect("removed");
    assert!(rm > restart);
    assert!(o[restart..rm]
        .iter()
        .all(|o| matches!(act(o), Act::None | Act::Increase)));
    support::lockstep_or_report(&stim, "restart");
}

#[test]
fn illegal_configuration_bypasses_everything() {
    let p = BcnRpParams::default();
    let mut c = scenario::cfg();
    c.cfg_min_rate_i = c.cfg_line_rate_i + 1;
    let e = BcnRp::check(&p, &c).unwrap_err();
    assert_eq!(e.field, "cfg_min_rate_i");
    c.cfg_min_rate_i = 0;
    assert!(BcnRp::check(&p, &c).is_err());
    let mut m = BcnRp::new(&p, &c);
    let mut i = model::bcn_rp::BcnRpInputs::zero(&p);
    i.msg_valid_i = true;
    i.msg_qoff_i = model::bcn_rp::I16::new(-100);
    i.in_valid_i = true;
    i.in_len_i = 64;
    let o = m.step(&i);
    assert!(o.cfg_err_o && act(&o) == Act::Ignore);
    assert!(o.out_valid_o && !o.out_tag_valid_o && o.in_ready_o);
    assert!(!m.state().valid_q[0]);
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<BcnRp>();
}
