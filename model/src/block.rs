//! The contract every golden model fulfils.
//!
//! A block is a plain synchronous state machine. Cycle `t` (see
//! `docs/conventions.md`):
//!
//! 1. the inputs `I_t` are applied;
//! 2. the outputs `O_t = f(S_t, I_t)` are produced (they may depend on the
//!    inputs of the same cycle, like combinational outputs of the RTL);
//! 3. at the rising clock edge the state becomes `S_{t+1} = g(S_t, I_t)`.
//!
//! [`Block::step`] performs 2 and 3 and returns `O_t`; [`Block::step_into`]
//! does the same into an output struct the caller keeps from cycle to cycle
//! (no allocation per cycle: what the lockstep runner uses). [`Block::new`]
//! builds the reset state; a reset in the middle of a run is a fresh `new`.

use crate::port::PortGroup;
use std::fmt;

/// Structural parameters of a block: the values that are Verilog parameters
/// and fix the shape of the hardware (number of ports, counter widths).
/// Everything else is runtime configuration.
pub trait Params: Clone + fmt::Debug + PartialEq {
    /// Verilog parameter overrides, `(name, value)`, passed as `-Gname=value`.
    fn verilog(&self) -> Vec<(&'static str, u64)>;
    /// A short label naming this variant in symbols and file names, e.g. `p4c16`.
    fn label(&self) -> String {
        self.verilog()
            .iter()
            .map(|(n, v)| format!("{}{}", n.to_ascii_lowercase(), v))
            .collect()
    }
}

/// A configuration that the hardware cannot hold, with the field, the value
/// and the legal range (or the violated relation) spelled out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The configuration port the problem is attributed to.
    pub field: &'static str,
    /// What is wrong, with the value and the legal range.
    pub msg: String,
}

impl ConfigError {
    /// A new error for `field`.
    pub fn new(field: &'static str, msg: impl Into<String>) -> Self {
        ConfigError {
            field,
            msg: msg.into(),
        }
    }

    /// The same error with `why` (where the limit comes from) added in
    /// parentheses.
    pub fn note(mut self, why: impl fmt::Display) -> Self {
        self.msg = format!("{} ({why})", self.msg);
        self
    }
}

impl From<crate::port::PackError> for ConfigError {
    fn from(e: crate::port::PackError) -> Self {
        ConfigError::new(e.port, e.what)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}: {}", self.field, self.msg)
    }
}

impl std::error::Error for ConfigError {}

/// A golden model of one RTL block.
pub trait Block: Sized + 'static {
    /// The RTL module name; also the name of the Rust module, the spec in
    /// `docs/` and the testbench files.
    const NAME: &'static str;
    /// Structural parameters (Verilog parameters).
    type Params: Params;
    /// Runtime configuration, driven on `cfg_*` input ports and held for a run.
    type Config: PortGroup<Params = Self::Params>;
    /// Per-cycle inputs.
    type Inputs: PortGroup<Params = Self::Params>;
    /// Per-cycle outputs, compared against the RTL as [`Block::alignment`]
    /// says (by default every output in every cycle).
    type Outputs: PortGroup<Params = Self::Params>;
    /// The registers, named like the RTL registers; shown in the model's
    /// waveform, and compared with RTL signals where
    /// [`Block::alignment`] (or a designer's map) names them.
    type State: PortGroup<Params = Self::Params>;

    /// The structural variants that are verilated; the first is the default.
    fn variants() -> Vec<Self::Params>;
    /// The sizes the seeds describe (a switch's port count, the paper's
    /// queue depths), synthesised by `make synth-scale` to show that the
    /// RTL is hardware at that size; they may repeat a verilated variant.
    /// The others are not verilated by the tests, but any command that
    /// takes `--variant` builds them on demand.
    fn scale() -> Vec<Self::Params> {
        Vec::new()
    }
    /// A useful default configuration for `p`.
    fn default_config(p: &Self::Params) -> Self::Config;
    /// Checks that the hardware can hold `cfg`. [`Block::new`] may assume it.
    fn check(p: &Self::Params, cfg: &Self::Config) -> Result<(), ConfigError>;
    /// The model in its reset state.
    fn new(p: &Self::Params, cfg: &Self::Config) -> Self;
    /// The structural parameters the model was built with.
    fn params(&self) -> &Self::Params;
    /// One clock cycle: writes the outputs of this cycle into `o` (every
    /// field; the allocations of its vectors are reused) and advances the
    /// state. `o` may hold anything beforehand.
    fn step_into(&mut self, i: &Self::Inputs, o: &mut Self::Outputs);
    /// One clock cycle: returns the outputs of this cycle and advances the state.
    fn step(&mut self, i: &Self::Inputs) -> Self::Outputs {
        let mut o = Self::Outputs::zero(self.params());
        self.step_into(i, &mut o);
        o
    }
    /// The current register values.
    fn state(&self) -> &Self::State;

    /// How the RTL's clocks line up with this model's steps: clocks per
    /// step, output latencies, optional outputs, state read from RTL
    /// signals ([`crate::timing`]). Default: the plain contract, one clock
    /// per step and every output compared in its step's clock.
    fn alignment(p: &Self::Params) -> crate::timing::Alignment {
        let _ = p;
        crate::timing::Alignment::lockstep()
    }

    /// Names of the functional coverage bins (see each block's spec).
    fn bins() -> &'static [&'static str] {
        &[]
    }
    /// Samples coverage after a `step`: `i` and `o` are the cycle's inputs
    /// and outputs, `self` the state after the cycle; adds to `hits`
    /// (indexed like [`Block::bins`]).
    fn sample(&self, i: &Self::Inputs, o: &Self::Outputs, hits: &mut [u64]) {
        let _ = (i, o, hits);
    }
}

/// Sets `v` to `n` copies of `x`, keeping its allocation (for the
/// combinational output vectors in [`Block::step_into`]).
#[inline]
pub fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    v.clear();
    v.resize(n, x);
}

/// Checks that a configuration value lies in `lo..=hi`.
pub fn check_range(field: &'static str, v: u64, lo: u64, hi: u64) -> Result<(), ConfigError> {
    if v < lo || v > hi {
        Err(ConfigError::new(
            field,
            format!("value {v} is outside the legal range {lo}..={hi}"),
        ))
    } else {
        Ok(())
    }
}

/// Checks a structural parameter (a Verilog parameter) that counts `what`:
/// `v` must lie in `lo..=hi`. The message reads `4 ports: must be 2..=16`.
pub fn check_param(
    field: &'static str,
    what: &str,
    v: usize,
    lo: usize,
    hi: usize,
) -> Result<(), ConfigError> {
    param_in(field, what, v, lo, hi, false)
}

/// As [`check_param`], and `v` must be a power of two (an index of
/// `log2(v)` bits that wraps by itself).
pub fn check_pow2(
    field: &'static str,
    what: &str,
    v: usize,
    lo: usize,
    hi: usize,
) -> Result<(), ConfigError> {
    param_in(field, what, v, lo, hi, true)
}

fn param_in(
    field: &'static str,
    what: &str,
    v: usize,
    lo: usize,
    hi: usize,
    pow2: bool,
) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&v) && (!pow2 || v.is_power_of_two()) {
        return Ok(());
    }
    let kind = if pow2 { "a power of two in " } else { "" };
    Err(ConfigError::new(
        field,
        format!("{v} {what}: must be {kind}{lo}..={hi}"),
    ))
}

/// Declares a block's functional coverage bins once: an enum whose variants
/// index the hit counts, and the bins' report names beside them.
///
/// ```
/// model::coverage_bins! {
///     /// Bins of an example block.
///     pub enum Bin / BINS {
///         Idle = "idle",
///         Full = "queue_full",
///     }
/// }
/// assert_eq!(BINS[Bin::Full as usize], "queue_full");
/// assert_eq!(BINS.len(), 2);
/// ```
#[macro_export]
macro_rules! coverage_bins {
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident / $names:ident {
            $($(#[$vm:meta])* $v:ident = $s:literal),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$vm])* #[allow(missing_docs)] $v,)*
        }
        /// The bins' names, in the order of their enum.
        $vis const $names: &[&str] = &[$($s,)*];
    };
}

/// The RTL's input ports of block `B` in the order the module declares
/// them: `rst_ni` (active-low reset), then the configuration, then the
/// inputs. The one list behind the build script's shim, the golden vectors
/// and the mutation harness.
pub fn rtl_inputs<B: Block>(p: &B::Params) -> Vec<crate::PortDesc> {
    let mut v = vec![crate::PortDesc {
        doc: "reset, active low",
        ..crate::PortDesc::plain("rst_ni", crate::Shape::scalar(1))
    }];
    v.extend(B::Config::ports(p));
    v.extend(B::Inputs::ports(p));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_checks_name_the_value_and_the_range() {
        assert!(check_param("K", "limiters", 8, 1, 8).is_ok());
        let e = check_param("K", "limiters", 9, 1, 8).unwrap_err();
        assert_eq!(
            (e.field, e.msg.as_str()),
            ("K", "9 limiters: must be 1..=8")
        );
        assert!(check_pow2("N", "ports", 16, 2, 16).is_ok());
        for bad in [0, 1, 6, 32] {
            let e = check_pow2("N", "ports", bad, 2, 16).unwrap_err();
            assert_eq!(
                e.msg,
                format!("{bad} ports: must be a power of two in 2..=16")
            );
        }
        let e = check_param("R", "receivers", 0, 1, 4)
            .unwrap_err()
            .note("RTL range");
        assert_eq!(
            e.to_string(),
            "invalid configuration: R: 0 receivers: must be 1..=4 (RTL range)"
        );
    }
}
