//! `step_into` (what the lockstep runner calls, with one output struct
//! reused for a whole run) gives exactly what `step` gives, for every block
//! and variant: it sets every output field, whatever the struct held
//! before. The struct starts out as garbage (every bit of every port set;
//! or shaped for another variant, with vectors of other lengths) so that a
//! field left untouched shows.

use model::stim::Cycle;
use model::PortGroup;
use testbenches::Bench;

/// Runs `cycles` of seeded traffic on variant `p` through `step` and,
/// starting from the output struct `o`, through `step_into`; they must agree
/// every cycle.
fn agree<B: Bench>(p: &B::Params, seed: u64, cycles: usize, mut o: B::Outputs, start: &str) {
    let cfg = B::default_config(p);
    let stim = testbenches::generate::<B>(p, seed, cycles, Some(&cfg));
    let mut plain = B::new(p, &cfg);
    let mut into = B::new(p, &cfg);
    for (k, c) in stim.cycles.iter().enumerate() {
        match c {
            Cycle::Drive(i) => {
                let want = plain.step(i);
                into.step_into(i, &mut o);
                assert_eq!(o, want, "{} {p:?} from {start}, cycle {k}", B::NAME);
            }
            Cycle::Reset => {
                plain = B::new(p, &cfg);
                into = B::new(p, &cfg);
            }
        }
    }
}

fn same<B: Bench>() {
    for p in B::variants() {
        let ones = vec![u32::MAX; B::Outputs::layout(&p).words];
        let garbage = B::Outputs::unpack(&p, &ones);
        assert_ne!(garbage, B::Outputs::zero(&p));
        agree::<B>(&p, 7, 3000, garbage, "all ones");
    }
    // A struct of another variant's shape (other vector lengths) is resized.
    if let [a, b, ..] = &B::variants()[..] {
        agree::<B>(a, 8, 200, B::Outputs::zero(b), &format!("{b:?}"));
    }
}

/// Every block of the registry.
#[test]
fn step_into_equals_step_for_every_block() {
    struct Each(usize);
    impl testbenches::registry::Visit for Each {
        fn visit<B: Bench>(&mut self) {
            same::<B>();
            self.0 += 1;
        }
    }
    let mut e = Each(0);
    testbenches::registry::each(&mut e);
    assert_eq!(e.0, testbenches::registry::names().len());
    assert!(e.0 >= 4);
}
