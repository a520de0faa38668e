//! The co-simulation engine: golden models against their Verilog RTL.
//!
//! - [`design`]: what is verilated (files, top module, parameters) and how
//!   its ports meet a block's declaration: the project's RTL, or a
//!   designer's through a map file.
//! - [`builder`]: builds a design on first use (Verilator, a shim generated
//!   from the port declaration, g++) into a cached shared library.
//! - [`rtl`]: the Verilator bindings; [`rtl::Rtl`] drives one instance with
//!   one FFI call per clock.
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
//! - `hot`: each block's hot loops, compiled once in this crate.
//!
//! The command line, configuration files, charts, benchmarks and the
//! system studies live in the `switchsim` crate.

pub mod builder;
pub mod design;
pub mod fuzz;
pub mod golden;
mod hot;
pub mod lockstep;
pub mod rtl;
pub mod shimgen;
pub mod toolchain;
pub mod wave;

pub use lockstep::{run, Coverage, Mismatch, Options, Outcome, Summary, WaveFiles, Waves};
pub use rtl::Rtl;
