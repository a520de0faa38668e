//! `prim_sat_cnt`: equivalence of the model twin and the RTL, coverage, and
//! the netting rule on a directed sequence.

use crate::support;

use model::prim_sat_cnt::{PrimSatCnt, PrimSatCntConfig, PrimSatCntInputs};
use model::stim::{Cycle, Stimulus};
use model::Block;

#[test]
fn equivalence_random() {
    support::equivalence::<PrimSatCnt>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<PrimSatCnt>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<PrimSatCnt>();
}

/// MAX = 200: fill to 200, net +5 -5 at the maximum (no clamp), over by
/// one (clamped), drain below 0 (clamped), clear; in lockstep with the RTL.
#[test]
fn nets_then_clamps_in_rtl() {
    let p = PrimSatCnt::variants()[0];
    assert_eq!(p.max, 200);
    let i = |clr: bool, inc: u32, dec: u32| PrimSatCntInputs {
        clr_i: clr,
        inc_i: inc,
        dec_i: dec,
    };
    let seq = vec![
        i(false, 200, 0),
        i(false, 5, 5),
        i(false, 1, 0),
        i(false, 3, 204),
        i(false, 9, 0),
        i(true, 9, 0),
        i(false, 0, 0),
    ];
    let mut m = PrimSatCnt::new(&p, &PrimSatCntConfig {});
    let got: Vec<(u32, bool)> = seq
        .iter()
        .map(|x| {
            let o = m.step(x);
            (o.count_o, o.sat_o)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, false),
            (200, false),
            (200, true),
            (200, true),
            (0, false),
            (9, false),
            (0, false)
        ]
    );
    let stim: Stimulus<PrimSatCnt> = Stimulus {
        generated: None,
        params: p,
        config: PrimSatCntConfig {},
        cycles: seq.into_iter().map(Cycle::Drive).collect(),
        seed: 3,
    };
    support::lockstep_or_report(&stim, "sat_cnt directed");
}
