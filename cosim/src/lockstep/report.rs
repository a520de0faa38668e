//! What a run reports: its summary and coverage, or the first mismatch
//! (cycle, signals, expected and actual values, inputs, seed, replay
//! command, waveform files), and the output comparison behind it.

use super::*;

/// The waveform files of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveFiles {
    /// The golden model's waveform.
    pub model: PathBuf,
    /// Verilator's waveform of the RTL (every internal signal too).
    pub rtl: PathBuf,
    /// Both sides in one file (`TOP.model`, `TOP.rtl`, `TOP.mismatch`).
    pub merged: PathBuf,
    /// GTKWave save file opening `merged`.
    pub gtkw: PathBuf,
}

impl WaveFiles {
    pub(super) fn in_dir(dir: &Path) -> Self {
        WaveFiles {
            model: dir.join("model.vcd"),
            rtl: dir.join("rtl.vcd"),
            merged: dir.join("merged.vcd"),
            gtkw: dir.join("merged.gtkw"),
        }
    }
}

/// A passing run.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Stimulus cycles compared (not counting power-on reset).
    pub cycles: u64,
    /// Wall time of the compared run, seconds.
    pub secs: f64,
    /// Waveforms written, if any.
    pub waves: Option<WaveFiles>,
    /// Functional coverage: hits per bin, in `Block::bins()` order.
    pub coverage: Coverage,
    /// Files that could not be written (the verdict stands).
    pub write_errors: Vec<String>,
}

/// Functional coverage counts of a block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Bin names.
    pub bins: Vec<&'static str>,
    /// Hits per bin.
    pub hits: Vec<u64>,
}

impl Coverage {
    /// Zero counts for block `B`.
    pub fn of<B: Block>() -> Self {
        Coverage {
            bins: B::bins().to_vec(),
            hits: vec![0; B::bins().len()],
        }
    }
    /// Adds another run's counts.
    pub fn merge(&mut self, o: &Coverage) {
        if self.bins.is_empty() {
            *self = o.clone();
            return;
        }
        for (h, x) in self.hits.iter_mut().zip(&o.hits) {
            *h += x;
        }
    }
    /// The bins never hit.
    pub fn holes(&self) -> Vec<&'static str> {
        self.bins
            .iter()
            .zip(&self.hits)
            .filter(|(_, &h)| h == 0)
            .map(|(b, _)| *b)
            .collect()
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hit = self.hits.iter().filter(|&&h| h > 0).count();
        writeln!(f, "coverage: {hit}/{} bins hit", self.bins.len())?;
        for (b, h) in self.bins.iter().zip(&self.hits) {
            writeln!(
                f,
                "  {:<36} {:>10}{}",
                b,
                h,
                if *h == 0 { "   <- never hit" } else { "" }
            )?;
        }
        Ok(())
    }
}

impl Summary {
    /// Cycles per second.
    pub fn rate(&self) -> f64 {
        self.cycles as f64 / self.secs.max(1e-9)
    }
}

/// One output that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    /// Port name, with the element for a vector (`pause_o[5]`).
    pub signal: String,
    /// The model's value.
    pub expected: String,
    /// The RTL's value.
    pub actual: String,
}

/// The first divergent cycle of a run.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Block name.
    pub block: &'static str,
    /// Variant label.
    pub variant: String,
    /// The stimulus seed.
    pub seed: u64,
    /// Stimulus cycle index (0 = first cycle after power-on reset; negative
    /// for the power-on reset cycle); a model step where the RTL takes
    /// several clocks per step or shows outputs later.
    pub cycle: i64,
    /// The RTL clock (from the first power-on reset clock) where the
    /// difference was seen, when it is not the step's own cycle (an
    /// alignment with a latency or several clocks per step).
    pub clock: Option<u64>,
    /// The RTL verified, when it is not the project's (files and top).
    pub rtl: Option<String>,
    /// The differing outputs (all of them, first one first).
    pub diffs: Vec<Diff>,
    /// An error the RTL raised itself (assertion, $error), if that was the failure.
    pub rtl_error: Option<String>,
    /// The inputs of that cycle (`name=value`, non-zero ones).
    pub inputs: String,
    /// The saved repro file: the run cut just after the divergence (for a
    /// generated run, a few lines naming the generator, seed and length).
    pub repro: Option<PathBuf>,
    /// A short written-out window that still fails, and its length in
    /// cycles, when the shrinker found one.
    pub short: Option<(PathBuf, u64)>,
    /// Command that replays the failure.
    pub replay: String,
    /// Waveforms.
    pub waves: Option<WaveFiles>,
    /// What the waveforms show when it is not the run itself.
    pub waves_of: Option<String>,
    /// A note when the traced re-run did not reproduce the same failure.
    pub note: Option<String>,
    /// Files that could not be written (the verdict stands).
    pub write_errors: Vec<String>,
    /// The run was asked to stop (SIGINT, SIGTERM) after the mismatch was
    /// found, before its shrinking or waveforms were done.
    pub interrupted: bool,
}

impl Mismatch {
    /// Waveform time of the clock where the difference was seen, in ns.
    pub fn time_ns(&self) -> i64 {
        match self.clock {
            Some(c) => c as i64,
            None => self.cycle + POWER_ON_RESET as i64,
        }
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.clock {
            None => writeln!(
                f,
                "MISMATCH in {} ({}) at cycle {} (waveform time {} ns)",
                self.block,
                self.variant,
                self.cycle,
                self.time_ns()
            )?,
            Some(c) => writeln!(
                f,
                "MISMATCH in {} ({}) at model step {}, RTL clock {c} (waveform time {} ns)",
                self.block,
                self.variant,
                self.cycle,
                self.time_ns()
            )?,
        }
        if let Some(r) = &self.rtl {
            writeln!(f, "  rtl:        {r}")?;
        }
        if let Some(e) = &self.rtl_error {
            writeln!(f, "  RTL error:  {e}")?;
        }
        if let Some(d) = self.diffs.first() {
            writeln!(f, "  signal:     {}", d.signal)?;
            writeln!(f, "  expected:   {}   (model)", d.expected)?;
            writeln!(f, "  actual:     {}   (rtl)", d.actual)?;
        }
        if self.diffs.len() > 1 {
            let more: Vec<&str> = self.diffs[1..].iter().map(|d| d.signal.as_str()).collect();
            let n = more.len();
            let shown = more.iter().take(12).copied().collect::<Vec<_>>().join(", ");
            writeln!(
                f,
                "  also:       {shown}{}",
                if n > 12 {
                    format!(" and {} more", n - 12)
                } else {
                    String::new()
                }
            )?;
        }
        writeln!(f, "  inputs:     {}", self.inputs)?;
        writeln!(f, "  seed:       {}", self.seed)?;
        if let Some(r) = &self.repro {
            writeln!(f, "  repro:      {}", r.display())?;
        }
        if let Some((r, n)) = &self.short {
            writeln!(f, "  shrunk:     {}  ({n} cycles from reset)", r.display())?;
        }
        if !self.replay.is_empty() {
            writeln!(f, "  replay:     {}", self.replay)?;
        }
        if let Some(w) = &self.waves_of {
            writeln!(f, "  waveforms of {w}:")?;
        }
        if let Some(w) = &self.waves {
            writeln!(f, "  waveforms:  {}  (model)", w.model.display())?;
            writeln!(
                f,
                "              {}  (rtl, with internals)",
                w.rtl.display()
            )?;
            writeln!(
                f,
                "              {}  (both, with `mismatch`)",
                w.merged.display()
            )?;
            writeln!(f, "  view:       gtkwave {}", w.gtkw.display())?;
        }
        if let Some(n) = &self.note {
            writeln!(f, "  note:       {n}")?;
        }
        for e in &self.write_errors {
            writeln!(f, "  not written: {e}")?;
        }
        Ok(())
    }
}

/// The result of a run.
#[derive(Debug)]
pub enum Outcome {
    /// Model and RTL agreed on every output of every cycle.
    Pass(Summary),
    /// They did not.
    Mismatch(Box<Mismatch>),
    /// The run was asked to stop (SIGINT, SIGTERM) before its end; model and
    /// RTL agreed on every output of the `cycles` it ran.
    Interrupted(Summary),
}

impl Outcome {
    /// The mismatch, if any.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match self {
            Outcome::Mismatch(m) => Some(m),
            Outcome::Pass(_) | Outcome::Interrupted(_) => None,
        }
    }
}

/// Lists the differing ports (vector ports element by element).
pub fn diff_outputs(layout: &Layout, exp: &[u32], act: &[u32]) -> Vec<Diff> {
    let mut v = Vec::new();
    for (k, p) in layout.ports.iter().enumerate() {
        let e = layout.slice(exp, k);
        let a = layout.slice(act, k);
        if e == a {
            continue;
        }
        let s = p.shape;
        if s.is_vec {
            let one = PortDesc {
                shape: model::Shape::scalar(s.width).with_signed(s.signed),
                ..p.clone()
            };
            for i in 0..s.count {
                let (x, y) = (
                    get_bits(e, i * s.width, s.width),
                    get_bits(a, i * s.width, s.width),
                );
                if x != y {
                    v.push(Diff {
                        signal: format!("{}[{i}]", p.name),
                        expected: describe_value(&one, &[x as u32, (x >> 32) as u32]),
                        actual: describe_value(&one, &[y as u32, (y >> 32) as u32]),
                    });
                }
            }
        } else {
            v.push(Diff {
                signal: p.name.to_string(),
                expected: describe_value(p, e),
                actual: describe_value(p, a),
            });
        }
    }
    v
}

/// Formats a packed group as `name=value`: every scalar port, and the
/// vector ports that are not all zero.
pub fn format_nonzero(layout: &Layout, w: &[u32]) -> String {
    let parts: Vec<String> = layout
        .ports
        .iter()
        .enumerate()
        .filter(|(k, p)| !p.shape.is_vec || layout.slice(w, *k).iter().any(|&x| x != 0))
        .map(|(k, p)| format!("{}={}", p.name, describe_value(p, layout.slice(w, k))))
        .collect();
    if parts.is_empty() {
        "(all zero)".into()
    } else {
        parts.join(" ")
    }
}
