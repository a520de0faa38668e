//! The system studies, run on the golden models (or on the verilated blocks
//! where a study says `--rtl`):
//!
//! - [`stx`]: the OSMOSIS switch with speculative transmission (seed 004):
//!   delay, throughput and speculation figures against load, beside the
//!   analytic model, for every policy and delivery scheme;
//! - [`bcn`]: the BCN closed loop (seed 003): sources behind reaction
//!   points into congestion points;
//! - [`recn`]: the network study of seed 002 (VOQ Net, VOQ Switch, RECN).

pub mod bcn;
pub mod recn;
pub mod stx;
