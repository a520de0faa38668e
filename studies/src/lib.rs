//! Studies from the source documents, as pure functions: no Verilator, no
//! I/O. The command line (`switchsim size`) formats them; the testbenches
//! check them against the golden models.
//!
//! - [`sizing`]: buffer sizing from a link (seeds 000 and 001).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod sizing;
