//! `prim_rr_arb`: equivalence of the model twin and the RTL, coverage, and
//! fairness: with every requester on, N grants in a row serve each once.

use crate::support;

use model::prim_rr_arb::{PrimRrArb, PrimRrArbConfig, PrimRrArbInputs};
use model::stim::{Cycle, Stimulus};
use model::Block;

#[test]
fn equivalence_random() {
    support::equivalence::<PrimRrArb>(support::cases(256), testbenches::DEFAULT_CYCLES, true);
}

#[test]
fn regression_files_replay() {
    support::regressions::<PrimRrArb>();
}

#[test]
fn random_stimulus_covers_every_bin() {
    support::random_stimulus_covers_every_bin::<PrimRrArb>();
}

#[test]
fn all_requesting_is_served_in_turn_in_rtl() {
    for p in PrimRrArb::variants() {
        let all = if p.n == 64 { u64::MAX } else { (1 << p.n) - 1 };
        let mut m = PrimRrArb::new(&p, &PrimRrArbConfig {});
        let cycles: Vec<PrimRrArbInputs> = (0..3 * p.n)
            .map(|_| PrimRrArbInputs {
                req_i: all,
                ack_i: true,
            })
            .collect();
        let idx: Vec<u32> = cycles.iter().map(|i| m.step(i).idx_o as u32).collect();
        let want: Vec<u32> = (0..3 * p.n).map(|t| t % p.n).collect();
        assert_eq!(idx, want, "N = {}", p.n);
        let stim: Stimulus<PrimRrArb> = Stimulus {
            generated: None,
            params: p,
            config: PrimRrArbConfig {},
            cycles: cycles.into_iter().map(Cycle::Drive).collect(),
            seed: 1,
        };
        support::lockstep_or_report(&stim, "rr fairness");
    }
}
