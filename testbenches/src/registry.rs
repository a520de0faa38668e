//! The one list of blocks.
//!
//! Everything that does something for every block (the verilated variants
//! in `cosim/build.rs`, every command of `switchsim` and `all`, fuzz, lint,
//! synthesis, mutation, bench, the profiling example, the Icarus, scenario
//! and `step_into` tests) walks this list through a [`Visit`]or. Adding a
//! block is its spec, RTL, model and testbench, plus one line in [`each`].

use crate::Bench;
use std::any::Any;

/// Something done for one block, generically.
pub trait Visit {
    /// Does it for block `B`.
    fn visit<B: Bench>(&mut self);
}

/// Visits every block, in the order `all` runs them.
pub fn each<V: Visit>(v: &mut V) {
    v.visit::<model::mmu::Mmu>();
    v.visit::<model::pfc::Pfc>();
    v.visit::<model::credit::Credit>();
    v.visit::<model::arbiter::Arbiter>();
    v.visit::<model::bcn_cp::BcnCp>();
    v.visit::<model::bcn_rp::BcnRp>();
    v.visit::<model::stx_egress::StxEgress>();
    v.visit::<model::stx_ingress::StxIngress>();
    v.visit::<model::stx_switch::StxSwitch>();
    v.visit::<model::recn_port::RecnPort>();
    // The RTL primitives, co-simulated as blocks of their own.
    v.visit::<model::prim_lfsr::PrimLfsr>();
    v.visit::<model::prim_timer::PrimTimer>();
    v.visit::<model::prim_sat_cnt::PrimSatCnt>();
    v.visit::<model::prim_rr_arb::PrimRrArb>();
    v.visit::<model::prim_ram_1r1w::PrimRam1r1w>();
}

/// An entry of a per-block table (see [`Table`]): made for each block of
/// the registry, generically.
pub trait Entry {
    /// Block `B`'s entry.
    fn make<B: Bench>() -> Box<dyn Any + Send + Sync>;
}

/// One entry per block of the registry, each of its own type, looked up by
/// that type. A crate that builds such a table instantiates each block's
/// code it names in itself, at its own optimisation level: the lockstep's
/// per-cycle code in `cosim`, the benchmarks' timing loops in `engine`,
/// whatever crate calls them.
pub struct Table(Vec<Box<dyn Any + Send + Sync>>);

impl Table {
    /// `E`'s entry of every block of the registry.
    pub fn new<E: Entry>() -> Table {
        struct Collect<E>(Vec<Box<dyn Any + Send + Sync>>, std::marker::PhantomData<E>);
        impl<E: Entry> Visit for Collect<E> {
            fn visit<B: Bench>(&mut self) {
                self.0.push(E::make::<B>());
            }
        }
        let mut c = Collect::<E>(Vec::new(), std::marker::PhantomData);
        each(&mut c);
        Table(c.0)
    }

    /// The entry of type `T`, when one was made.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.iter().find_map(|e| e.downcast_ref::<T>())
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No entry at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The blocks' names, in the order `all` runs them.
pub fn names() -> Vec<&'static str> {
    struct Names(Vec<&'static str>);
    impl Visit for Names {
        fn visit<B: Bench>(&mut self) {
            self.0.push(B::NAME);
        }
    }
    let mut n = Names(Vec::new());
    each(&mut n);
    n.0
}

/// Visits the block named `name`; `false` when there is none.
pub fn visit_named<V: Visit>(name: &str, v: &mut V) -> bool {
    struct One<'a, V> {
        name: &'a str,
        v: &'a mut V,
        found: bool,
    }
    impl<V: Visit> Visit for One<'_, V> {
        fn visit<B: Bench>(&mut self) {
            if B::NAME == self.name {
                self.v.visit::<B>();
                self.found = true;
            }
        }
    }
    let mut one = One {
        name,
        v,
        found: false,
    };
    each(&mut one);
    one.found
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::Params;

    #[test]
    fn names_are_unique_and_found() {
        let n = names();
        assert!(n.len() >= 4);
        let mut s = n.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), n.len(), "a block listed twice");
        struct Count(usize);
        impl Visit for Count {
            fn visit<B: Bench>(&mut self) {
                self.0 += 1;
            }
        }
        for name in &n {
            let mut c = Count(0);
            assert!(visit_named(name, &mut c));
            assert_eq!(c.0, 1);
        }
        assert!(!visit_named("nosuch", &mut Count(0)));
    }

    /// `switchsim run BLOCK --variant V` and the benchmarks start from the
    /// default configuration: it must hold in every variant, the scale
    /// ones included.
    #[test]
    fn every_variant_holds_its_default_configuration() {
        struct Check(Vec<String>);
        impl Visit for Check {
            fn visit<B: Bench>(&mut self) {
                for p in B::variants().into_iter().chain(B::scale()) {
                    if let Err(e) = B::check(&p, &B::default_config(&p)) {
                        self.0.push(format!("{} {}: {e}", B::NAME, p.label()));
                    }
                }
            }
        }
        let mut c = Check(Vec::new());
        each(&mut c);
        assert!(c.0.is_empty(), "{}", c.0.join("\n"));
    }
}
