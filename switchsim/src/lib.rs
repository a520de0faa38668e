//! `switchsim`, the application: the command line over the `cosim` engine,
//! and what a user does beyond one co-simulation.
//!
//! - [`cmd`]: the commands (`main.rs` parses the command line and calls them).
//! - [`config`]: a block's configuration as a TOML file.
//! - [`size`]: buffer sizing from a link (`studies::sizing`) to MMU and
//!   credit configurations.
//! - [`fuzzmerge`]: the verdict of a fuzz campaign run as shards.
//! - [`mutate`]: the mutation campaign.
//!
//! From the `engine` crate, which is compiled optimised while this one is
//! not (the workspace's `Cargo.toml` says why):
//! - [`bench`], [`streambench`]: the benchmarks and soak runs.
//! - [`study`]: the system studies of the source documents (STX, BCN,
//!   RECN): their runners, CSV and charts.
//! - [`sweep`]: what the studies share: points on threads, rows as CSV.
//! - [`plot`]: line charts rendered to SVG and PNG with `plotters`.

pub mod cmd;
pub mod config;
pub mod fuzzmerge;
pub mod mutate;
pub mod size;

pub use engine::{bench, plot, streambench, study, sweep};
