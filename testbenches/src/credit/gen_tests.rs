//! The streamed credit traffic generator: deterministic, prefix-stable and cheap next to the model's step.

use super::*;
use crate::gen_check;

#[test]
fn generator_is_deterministic() {
    for seed in [1, 7, 0xdead_beef] {
        gen_check::deterministic::<Credit>(seed, 2000);
    }
    gen_check::writes_every_field::<Credit>(5, 5000);
}

#[test]
fn generator_prefix_is_stable() {
    for seed in [3, 11] {
        gen_check::prefix_stable::<Credit>(seed, 500, 3000);
    }
}

/// Over a few seeds and 20 000 cycles per variant, the traffic reaches
/// every coverage bin the whole-run strategy reached (all but the
/// configuration error, which legal configurations never raise): credits
/// at port and slice level, dequeues and overdraw, balances at their
/// minimum and saturated, buffers exactly full, underflows and
/// saturations from the noise; and resets.
#[test]
fn traffic_exercises_the_block() {
    let (mut credits, mut deqs, mut at_max, mut at_min) = (0u64, 0u64, 0u64, 0u64);
    let (hits, resets) = gen_check::exercise::<Credit>(&[1, 2, 3, 4, 5, 6], 20_000, |m, _, o| {
        credits += o.crd_valid_o.iter().filter(|&&v| v).count() as u64;
        deqs += o.deq_valid_o.iter().filter(|&&v| v).count() as u64;
        let p = m.params();
        for i in 0..p.i {
            for e in 0..p.e {
                let b = m.balance(i, e);
                at_max += (b == p.bmax()) as u64;
                at_min += (b == p.bmin()) as u64;
            }
        }
    });
    assert!(credits > 1000, "{credits} credits");
    assert!(deqs > 1000, "{deqs} dequeues");
    assert!(at_max > 0, "no balance at its maximum");
    assert!(at_min > 0, "no balance at its minimum");
    assert!(resets > 0, "no reset");
    let missed = gen_check::missed::<Credit>(&hits, &["config_error"]);
    assert!(missed.is_empty(), "bins never hit: {missed:?}");
}

/// Phases end and new ones are drawn (every kind of packet length
/// among them); each phase's length is within its range.
#[test]
fn phases_follow_one_another() {
    let p = CreditParams::default();
    let cfg = crate::random_config::<Credit>(&p, 5, false);
    let mut g = CreditGen::new(&p, &cfg, 5);
    let mut m = Credit::new(&p, &cfg);
    let mut last = CreditOutputs::zero(&p);
    let mut i = CreditInputs::zero(&p);
    let (mut phases, mut lens) = (0, Vec::new());
    for _ in 0..40_000 {
        let before = g.left;
        match g.next(&m, &last, &mut i) {
            Step::Reset => m = Credit::new(&p, &cfg),
            Step::Drive => m.step_into(&i, &mut last),
        }
        if g.left >= before {
            phases += 1;
            assert!((49..449).contains(&g.left), "phase of {}", g.left + 1);
            if !lens.contains(&g.lens) {
                lens.push(g.lens);
            }
        }
    }
    assert!(phases > 40_000 / 450, "{phases} phases");
    assert_eq!(lens.len(), 5, "{lens:?}");
}

/// `cargo test --release -p testbenches --lib -- --ignored --nocapture`
#[test]
#[ignore]
fn generator_speed() {
    gen_check::speed::<Credit>(1_000_000);
}
