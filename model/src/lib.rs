//! Golden models of the switch-ASIC blocks, bit- and cycle-accurate against
//! the Verilog in `rtl/`.
//!
//! Each block module mirrors one RTL file of the same name and implements
//! [`block::Block`]: a plain state machine with declared configuration,
//! inputs, outputs and registers (see [`port`]) and a `step` per clock cycle.
//! The crate has no I/O and no hidden global state: the same configuration
//! and stimulus give the same outputs, bit for bit.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod block;
pub mod eth;
pub mod port;
pub mod stim;
pub mod timing;

pub mod arbiter;
pub mod bcn_cp;
pub mod bcn_rp;
pub mod credit;
pub mod mmu;
pub mod pfc;
pub mod prim;
pub mod prim_lfsr;
pub mod prim_ram_1r1w;
pub mod prim_rr_arb;
pub mod prim_sat_cnt;
pub mod prim_timer;
pub mod recn_port;
pub mod stx_egress;
pub mod stx_ingress;
pub mod stx_switch;

pub use block::{rtl_inputs, Block, ConfigError, Params};
pub use port::{PortDesc, PortGroup, Radix, Shape};
