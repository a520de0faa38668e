//! Where the benchmarks' timing loops are compiled, as `cosim`'s per-cycle
//! code is (see there): built in this crate, which is optimised, for every
//! block of the registry, and looked up by the per-block entry points
//! ([`crate::bench::time_model`], [`crate::bench::time_rtl`],
//! [`crate::streambench::time_generation`]).

use crate::bench::{ModelSide, Packed};
use anyhow::Result;
use cosim::rtl::Dut;
use model::stim::Stimulus;
use model::Block;
use std::any::Any;
use std::sync::OnceLock;
use testbenches::registry::{Entry, Table};
use testbenches::Bench;

/// Block `B`'s timing loops, as compiled in this crate.
pub(crate) struct Hot<B: Block> {
    pub time_model: fn(&Stimulus<B>, ModelSide) -> Result<f64>,
    #[allow(clippy::type_complexity)]
    pub time_rtl: fn(&Stimulus<B>, &Packed, bool, &mut Dut) -> Result<(f64, u64)>,
    pub time_generator: fn(&Stimulus<B>) -> Result<f64>,
}

/// One [`Hot`] per block of the registry.
fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        struct Make;
        impl Entry for Make {
            fn make<B: Bench>() -> Box<dyn Any + Send + Sync> {
                Box::new(Hot::<B> {
                    time_model: crate::bench::time_model_impl::<B>,
                    time_rtl: crate::bench::time_rtl_impl::<B>,
                    time_generator: crate::streambench::time_generator::<B>,
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
