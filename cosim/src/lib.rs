//! The co-simulation engine: golden models against their Verilog RTL.
//!
//! - [`rtl`]: the Verilator bindings. `build.rs` verilates each block variant
//!   and generates its shim from the Rust port declaration; [`rtl::Rtl`]
//!   drives one instance with one FFI call per cycle.
//! - [`toolchain`]: which files, which Verilator flags and installation,
//!   and how the C++ is compiled; shared by every tool that runs Verilator.
//! - [`lockstep`]: model and RTL side by side, every output compared every
//!   cycle; the first mismatch is reported with waveforms and a repro file.
//! - [`wave`]: the model's waveform, in the RTL waveform's hierarchy, and
//!   the merged one.
//! - [`fuzz`]: campaigns of random cases, sharded, with coverage.
//! - [`golden`]: golden vectors and a self-checking testbench for a
//!   second simulator (Icarus Verilog) and the mutation campaign.
//!
//! The command line, configuration files, charts, benchmarks and the
//! system studies live in the `switchsim` crate.

pub mod fuzz;
pub mod golden;
pub mod lockstep;
pub mod rtl;
pub mod shimgen;
pub mod toolchain;
pub mod wave;

pub use lockstep::{run, Coverage, Mismatch, Options, Outcome, Summary, WaveFiles, Waves};
pub use rtl::Rtl;
