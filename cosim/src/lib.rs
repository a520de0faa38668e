//! Co-simulation of the golden models against their Verilog RTL.
//!
//! - [`rtl`]: the Verilator bindings. `build.rs` verilates each block variant
//!   and generates its shim from the Rust port declaration; [`rtl::Rtl`]
//!   drives one instance with one FFI call per cycle.
//! - [`lockstep`]: model and RTL side by side, every output compared every
//!   cycle; the first mismatch is reported with waveforms and a repro file.
//! - [`streambench`]: the streamed-stimulus benchmarks and the soak runs.
//! - [`wave`]: the model's waveform, in the RTL waveform's hierarchy.
//! - [`stx`]: the STX switch system simulation around the arbiter RTL, and
//!   its curves as CSV, SVG and PNG.
//! - [`recn`]: the network study of seed 002 (VOQ Net, VOQ Switch, RECN
//!   on the `recn_port` model or RTL), its CSV and charts.
//! - [`sweep`]: what the sweeps share: points on worker threads, rows as CSV.
//! - [`plot`]: line charts rendered to SVG and PNG with `plotters`.
//! - [`size`]: `switchsim size`, buffer sizing from a link (`studies::sizing`)
//!   to MMU and credit configurations.

pub mod bcn;
pub mod bench;
pub mod cmd;
pub mod config;
pub mod fuzz;
pub mod golden;
pub mod lockstep;
pub mod mutate;
pub mod plot;
pub mod recn;
pub mod rtl;
pub mod shimgen;
pub mod size;
pub mod streambench;
pub mod stx;
pub mod sweep;
pub mod toolchain;
pub mod wave;

pub use lockstep::{run, Coverage, Mismatch, Options, Outcome, Summary, WaveFiles, Waves};
pub use rtl::Rtl;
