//! `step_into` (what the lockstep runner calls, with one output struct
//! reused for a whole run) gives exactly what `step` gives, for every block
//! and variant: it sets every output field, whatever the struct held
//! before. The struct starts out as garbage (every bit of every port set,
//! vectors of the wrong length) so that a field left untouched shows.

use model::arbiter::Arbiter;
use model::credit::Credit;
use model::mmu::Mmu;
use model::pfc::Pfc;
use model::stim::Cycle;
use model::PortGroup;
use testbenches::Bench;

fn same<B: Bench>() {
    for p in B::variants() {
        let cfg = B::default_config(&p);
        let stim = testbenches::generate::<B>(&p, 7, 3000, Some(&cfg));
        let ones = vec![u32::MAX; B::Outputs::layout(&p).words];
        let mut garbage = B::Outputs::unpack(&p, &ones);
        assert_ne!(garbage, B::Outputs::zero(&p));
        let mut plain = B::new(&p, &cfg);
        let mut into = B::new(&p, &cfg);
        for (k, c) in stim.cycles.iter().enumerate() {
            match c {
                Cycle::Drive(i) => {
                    let want = plain.step(i);
                    into.step_into(i, &mut garbage);
                    assert_eq!(garbage, want, "{} {p:?} cycle {k}", B::NAME);
                }
                Cycle::Reset => {
                    plain = B::new(&p, &cfg);
                    into = B::new(&p, &cfg);
                }
            }
        }
    }
    // A struct of another variant's shape (other vector lengths) is resized.
    let vs = B::variants();
    if vs.len() >= 2 {
        let (a, b) = (&vs[0], &vs[1]);
        let cfg = B::default_config(a);
        let stim = testbenches::generate::<B>(a, 8, 200, Some(&cfg));
        let mut other = B::Outputs::zero(b);
        let mut plain = B::new(a, &cfg);
        let mut into = B::new(a, &cfg);
        for c in &stim.cycles {
            if let Cycle::Drive(i) = c {
                into.step_into(i, &mut other);
                assert_eq!(other, plain.step(i), "{} from {b:?}", B::NAME);
            } else {
                plain = B::new(a, &cfg);
                into = B::new(a, &cfg);
            }
        }
    }
}

#[test]
fn mmu_step_into_equals_step() {
    same::<Mmu>();
}

#[test]
fn pfc_step_into_equals_step() {
    same::<Pfc>();
}

#[test]
fn credit_step_into_equals_step() {
    same::<Credit>();
}

#[test]
fn arbiter_step_into_equals_step() {
    same::<Arbiter>();
}
