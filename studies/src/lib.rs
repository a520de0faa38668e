//! Studies from the source documents, as pure functions: no Verilator, no
//! I/O. The command line (`switchsim size`) formats them; the testbenches
//! check them against the golden models.
//!
//! - [`bcn_loop`]: the BCN closed loop (seed 003) around the CP and RP models (or their RTL).
//! - [`pfc_system`]: MMU admission, the PFC generator, a link and an
//!   upstream sender: the headroom formula run cycle by cycle (seeds 000, 001).
//! - [`rng`]: the project's one PRNG for traffic (testbenches and studies).
//! - [`recn_net`]: the network study of seed 002 section 5: VOQ Net, VOQ
//!   Switch and RECN 2 VCs (the `recn_port` model, or its RTL) on a folded
//!   butterfly with self-similar traffic.
//! - [`sizing`]: buffer sizing from a link (seeds 000 and 001).
//! - [`stx_analytic`]: the STX delay model of seed 004, eqs (1) to (51).
//! - [`stx_system`]: the slotted STX switch study, a driver over the block
//!   composition `model::stx_switch` (the arbiter's golden model, or its
//!   RTL, through [`stx_system::SwitchArbiter`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bcn_loop;
pub mod bcn_metrics;
pub mod ci;
pub mod pfc_system;
pub mod recn_net;
pub mod rng;
pub mod sizing;
pub mod stx_analytic;
pub mod stx_system;
