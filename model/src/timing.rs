//! How an RTL's clocks line up with its golden model's steps: the
//! alignment in the lockstep contract (`docs/conventions.md`, "Alignment").
//!
//! The model is a step machine: `step(I_t)` gives `O_t` and the next state.
//! An RTL may spend several clocks on one step (a slot of `K` clocks), and
//! may show a step's outputs some clocks after the step began (pipelined,
//! registered outputs). Step `t` occupies RTL clocks `t K .. t K + K - 1`
//! (after the power-on reset); its inputs are presented during those clocks
//! (held, or in the first clock only for a [`Alignment::pulse`] input), and
//! output `o` of step `t` is compared with the RTL's output at clock
//! `t K + L(o)`, where `L(o)` is [`Alignment::latency_of`] — or, with
//! [`Compare::Strobe`], at the clock of the `t`-th strobe.
//!
//! A block declares its alignment in [`crate::Block::alignment`], next to
//! its port groups; a designer's map file overrides it for their RTL. The
//! default is the plain contract: one clock per step, every output compared
//! in the clock of its step.

/// When a step's outputs are compared.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Compare {
    /// At a fixed latency after the step's first clock, per output.
    #[default]
    Latency,
    /// At every clock where this 1-bit RTL output (not a declared port) is
    /// high: the `n`-th high clock carries step `n`'s outputs.
    Strobe(String),
}

/// A model register compared with an RTL signal read through Verilator's
/// public signals (not a port).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StatePath {
    /// The field of the model's `State` (a register of the spec).
    pub field: String,
    /// The RTL signal: a hierarchical path below the top module
    /// (`u_core.cnt_q`), a packed vector of the field's bits or an unpacked
    /// array of its elements.
    pub path: String,
    /// RTL clocks after the step's last clock at whose edge the signal
    /// holds the model's state after the step (0: the edge that ends the
    /// step).
    pub latency: u32,
}

/// The alignment of an RTL with its model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alignment {
    /// RTL clocks per model step (`K`, at least 1).
    pub clocks_per_step: u32,
    /// When outputs are compared.
    pub compare: Compare,
    /// Default output latency in RTL clocks after the step's first clock.
    pub latency: u32,
    /// Per-output latencies, overriding [`Alignment::latency`].
    pub port_latency: Vec<(String, u32)>,
    /// Inputs driven in the first clock of a step only (zero in its other
    /// clocks); every other input is held for the whole step.
    pub pulse: Vec<String>,
    /// Outputs an RTL may lack (mirrors of state, debug views): compared
    /// when the RTL has them.
    pub optional: Vec<String>,
    /// Registers compared through RTL signals.
    pub state: Vec<StatePath>,
}

impl Default for Alignment {
    fn default() -> Self {
        Alignment {
            clocks_per_step: 1,
            compare: Compare::Latency,
            latency: 0,
            port_latency: Vec::new(),
            pulse: Vec::new(),
            optional: Vec::new(),
            state: Vec::new(),
        }
    }
}

impl Alignment {
    /// The plain contract: one clock per step, outputs in the step's clock.
    pub fn lockstep() -> Self {
        Self::default()
    }

    /// `K` clocks per step, every output compared at the step's last clock.
    pub fn slot(k: u32) -> Self {
        Alignment {
            clocks_per_step: k,
            latency: k - 1,
            ..Self::default()
        }
    }

    /// The same with outputs `names` optional.
    pub fn with_optional(mut self, names: &[&str]) -> Self {
        self.optional.extend(names.iter().map(|s| s.to_string()));
        self
    }

    /// The pulse inputs' words in the packed inputs of layout `il`:
    /// `(offset, words)` of each, zeroed after a step's first clock.
    pub fn pulse_words(&self, il: &crate::port::Layout) -> Vec<(usize, usize)> {
        il.ports
            .iter()
            .enumerate()
            .filter(|(_, q)| self.pulse.iter().any(|n| n == q.name))
            .map(|(j, q)| (il.offsets[j], q.shape.words()))
            .collect()
    }

    /// The latency of output `name`.
    pub fn latency_of(&self, name: &str) -> u32 {
        self.port_latency
            .iter()
            .find(|(n, _)| n == name)
            .map_or(self.latency, |(_, l)| *l)
    }

    /// Whether this is the plain contract (one clock per step, every output
    /// at latency 0, no state read): the runner's fast path.
    pub fn is_lockstep(&self) -> bool {
        self.clocks_per_step == 1
            && self.compare == Compare::Latency
            && self.latency == 0
            && self.port_latency.iter().all(|(_, l)| *l == 0)
            && self.state.is_empty()
    }

    /// Checks the alignment for outputs named `outputs` and inputs named
    /// `inputs`: `Err` names what is wrong.
    pub fn check(&self, inputs: &[&str], outputs: &[&str]) -> Result<(), String> {
        if self.clocks_per_step == 0 {
            return Err("clocks_per_step must be at least 1".into());
        }
        for (n, _) in &self.port_latency {
            if !outputs.contains(&n.as_str()) {
                return Err(format!("latency of `{n}`: not an output"));
            }
        }
        for n in &self.pulse {
            if !inputs.contains(&n.as_str()) {
                return Err(format!("pulse input `{n}`: not an input"));
            }
        }
        for n in &self.optional {
            if !outputs.contains(&n.as_str()) {
                return Err(format!("optional output `{n}`: not an output"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_and_the_fast_path() {
        let a = Alignment::lockstep();
        assert!(a.is_lockstep());
        assert_eq!(a.latency_of("x_o"), 0);
        let s = Alignment::slot(4);
        assert!(!s.is_lockstep());
        assert_eq!(s.latency_of("x_o"), 3);
        let mut p = Alignment::lockstep();
        p.port_latency.push(("y_o".into(), 2));
        assert!(!p.is_lockstep());
        assert_eq!((p.latency_of("x_o"), p.latency_of("y_o")), (0, 2));
        assert!(p.check(&["a_i"], &["x_o", "y_o"]).is_ok());
        assert!(p
            .check(&["a_i"], &["x_o"])
            .unwrap_err()
            .contains("`y_o`: not an output"));
        let z = Alignment {
            clocks_per_step: 0,
            ..Alignment::default()
        };
        assert!(z.check(&[], &[]).is_err());
    }
}
