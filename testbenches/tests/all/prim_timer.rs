//! `prim_timer`: equivalence of the model twin and the RTL, coverage, and
//! the contract on a directed sequence.

use crate::support;

use model::prim_timer::{PrimTimer, PrimTimerConfig, PrimTimerInputs};
use model::stim::{Cycle, Stimulus};
use model::Block;

#[test]
fn equivalence_random() {
    support::equivalence::<PrimTimer>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<PrimTimer>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<PrimTimer>();
}

/// Load 2, tick through the expiry and beyond, reload over an expiry:
/// the outputs cycle by cycle, and the same sequence in lockstep with the RTL.
#[test]
fn load_tick_expire_in_rtl() {
    let p = PrimTimer::variants()[0];
    let i = |load: bool, value: u32, tick: bool| PrimTimerInputs {
        load_i: load,
        value_i: value,
        tick_i: tick,
    };
    let seq = vec![
        i(true, 2, false),
        i(false, 0, true),
        i(false, 0, true),
        i(false, 0, true),
        i(true, 1, false),
        i(true, 5, true),
    ];
    let mut m = PrimTimer::new(&p, &PrimTimerConfig {});
    let got: Vec<(u32, bool, bool)> = seq
        .iter()
        .map(|x| {
            let o = m.step(x);
            (o.count_o, o.running_o, o.expire_o)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, false, false),
            (2, true, false),
            (1, true, true),
            (0, false, false),
            (0, false, false),
            (1, true, false)
        ]
    );
    assert_eq!(m.state().count_q, 5, "a load wins over the expiring tick");
    let stim: Stimulus<PrimTimer> = Stimulus {
        generated: None,
        params: p,
        config: PrimTimerConfig {},
        cycles: seq.into_iter().map(Cycle::Drive).collect(),
        seed: 5,
    };
    support::lockstep_or_report(&stim, "timer directed");
}
