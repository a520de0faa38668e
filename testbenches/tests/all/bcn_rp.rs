//! BCN reaction point: equivalence of golden model and RTL, model
//! invariants, the arithmetic of the seed's rules, and the directed
//! scenarios of seed 003.

use crate::support;

use arbitrary_int::{u4, u5};
use model::bcn_rp::{decrease, feedback, increase, Act, BcnRp, BcnRpOutputs, BcnRpParams};
use model::stim::{Cycle, Stimulus};
use model::{Block, PortGroup};
use proptest::prelude::*;
use testbenches::bcn_rp::scenario;

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

/// A scenario and its documented outcome: [`support::directed`].
fn directed(
    (stim, s): (Stimulus<BcnRp>, scenario::Script),
    check: testbenches::ScenarioCheck<BcnRp>,
    what: &str,
) {
    support::directed(&stim, &s.outs, check, what);
}

#[test]
fn install_on_first_negative_message() {
    directed(scenario::install(), scenario::installed, "install");
}

#[test]
fn decrease_is_multiplicative() {
    directed(scenario::decrease(), scenario::decreased, "decrease");
}

#[test]
fn rate_settles_near_the_bottleneck() {
    directed(scenario::settle(), scenario::settled, "settle");
}

#[test]
fn increase_to_line_rate_removes_the_limiter() {
    directed(
        scenario::increase_removal(),
        scenario::raised_then_removed,
        "increase-removal",
    );
}

#[test]
fn idle_limiter_is_removed_after_the_idle_time() {
    directed(
        scenario::idle_removal(),
        scenario::removed_when_idle,
        "idle-removal",
    );
}

#[test]
fn fallback_to_coarser_keys_when_the_table_is_full() {
    directed(scenario::fallback(), scenario::fell_back, "fallback");
}

#[test]
fn only_the_point_that_set_the_rate_raises_it() {
    directed(
        scenario::two_points(),
        scenario::answers_to_last_point,
        "two-points",
    );
}

#[test]
fn restarted_flow_meets_its_limiter_and_it_dissipates() {
    directed(
        scenario::restart(),
        scenario::restarted_and_removed,
        "restart",
    );
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
