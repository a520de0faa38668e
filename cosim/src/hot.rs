//! Where the per-cycle code of the registry's blocks is compiled.
//!
//! A generic function is compiled in the crate that names its type
//! argument. The command line names every block in its per-block commands,
//! so without this table each block's per-cycle code would be compiled
//! there, at that crate's optimisation level. `switchsim` is compiled at
//! opt-level 1 (most of its code runs once per command, and it was most of
//! a cold build: `Cargo.toml`), so its loops go through here: the
//! table below is built in this crate, which is optimised, and names every
//! block of the registry, so each block's per-cycle code is compiled once,
//! here.
//!
//! The passes of [`crate::lockstep`] are not generic: they run a block's
//! generator and model through `lockstep::side::ModelSide`, whose copy for
//! each block is made here. `lockstep::side::of` looks the block up; a
//! block outside the registry (a test's own block) runs the caller's copy
//! instead.

use crate::lockstep::side::ModelSide;
use anyhow::Result;
use model::stim::Stimulus;
use model::Block;
use std::any::Any;
use std::sync::OnceLock;
use testbenches::registry::{Entry, Table};
use testbenches::Bench;

/// Block `B`'s model side of a pass, as compiled in this crate.
pub(crate) struct Hot<B: Block> {
    #[allow(clippy::type_complexity)]
    pub side: for<'a> fn(&'a Stimulus<B>, Option<(usize, u64)>) -> Result<Box<dyn ModelSide + 'a>>,
}

/// One [`Hot`] per block of the registry.
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        struct Make;
        impl Entry for Make {
            fn make<B: Bench>() -> Box<dyn Any + Send + Sync> {
                Box::new(Hot::<B> {
                    side: crate::lockstep::side::make::<B>,
                })
            }
        }
        Table::new::<Make>()
    })
}

/// Block `B`'s entry, when `B` is in the registry.
pub(crate) fn of<B: Block>() -> Option<&'static Hot<B>> {
    table().get::<Hot<B>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_block_has_its_entry_and_no_other_does() {
        struct Check(usize);
        impl testbenches::registry::Visit for Check {
            fn visit<B: Bench>(&mut self) {
                assert!(of::<B>().is_some(), "{} has no entry", B::NAME);
                self.0 += 1;
            }
        }
        let mut c = Check(0);
        testbenches::registry::each(&mut c);
        assert_eq!(c.0, table().len());
        // A type outside the registry finds none (and so runs its own copy).
        struct Outside;
        assert!(table().get::<Outside>().is_none());
    }
}
