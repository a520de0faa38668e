//! What `switchsim` runs long, compiled optimised apart from the command
//! line (which is not: `Cargo.toml`).
//!
//! - [`study`]: the system studies of the source documents (STX, BCN,
//!   RECN) on the models and on the RTL: their runners, CSV and charts.
//! - [`sweep`]: what the studies share: points on threads, rows as CSV.
//! - [`plot`]: line charts rendered to SVG and PNG with `plotters`.
//! - [`bench`], [`streambench`]: the benchmarks and soak runs, with their
//!   timing loops.
//!
//! A per-block function of this crate that the command line calls with a
//! block type would be compiled in the command line's crate; those with
//! loops go through [`hot`] so that they are compiled here.

pub mod bench;
pub mod hot;
pub mod plot;
pub mod streambench;
pub mod study;
pub mod sweep;
