//! The lockstep runner: golden model and RTL get the same inputs every cycle
//! and every output is compared every cycle.
//!
//! A run is a [`Stimulus`] (variant, configuration, cycles, seed). The runner
//! holds reset for [`POWER_ON_RESET`] cycles, then drives the stimulus. The
//! first power-on cycle is not compared (the RTL's state is random until the
//! first clock edge under reset, as in silicon); every later cycle is,
//! including reset cycles (outputs under reset are those of the reset state).
//!
//! On the first mismatch the runner stops, saves the stimulus as a repro
//! file, re-runs it from the start with waveforms on both sides up to a few
//! cycles past the mismatch, and returns a [`Mismatch`] naming the cycle, the
//! signals, the expected (model) and actual (RTL) values, the inputs, the
//! seed, the replay command and the waveform files.

use crate::rtl::{Rtl, RtlError};
use crate::wave::{MergedWave, ModelWave};
use anyhow::{anyhow, Context, Result};
use model::port::{format_value, get_bits, Layout};
use model::stim::{Cycle, Stimulus};
use model::{Block, Params, PortGroup};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Reset cycles before cycle 0.
pub const POWER_ON_RESET: u64 = 2;

/// When to write waveforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waves {
    /// Never (fastest; used while shrinking).
    Never,
    /// Only for a failing run: it is re-run with tracing on.
    OnMismatch,
    /// Always, from the start.
    Always,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Directory for waveforms and repro files.
    pub out_dir: PathBuf,
    /// When to write waveforms.
    pub waves: Waves,
    /// Cycles to keep running after a mismatch in the traced re-run.
    pub context: usize,
    /// The command prefix that replays a repro file (`<prefix> <file>`).
    pub replay: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            out_dir: PathBuf::from("out"),
            waves: Waves::OnMismatch,
            context: 8,
            replay: "switchsim replay".into(),
        }
    }
}

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
    fn in_dir(dir: &Path) -> Self {
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
    /// for the power-on reset cycle).
    pub cycle: i64,
    /// The differing outputs (all of them, first one first).
    pub diffs: Vec<Diff>,
    /// An error the RTL raised itself (assertion, $error), if that was the failure.
    pub rtl_error: Option<String>,
    /// The inputs of that cycle (`name=value`, non-zero ones).
    pub inputs: String,
    /// The saved repro file.
    pub repro: Option<PathBuf>,
    /// Command that replays the failure.
    pub replay: String,
    /// Waveforms.
    pub waves: Option<WaveFiles>,
    /// A note when the traced re-run did not reproduce the same failure.
    pub note: Option<String>,
}

impl Mismatch {
    /// Waveform time of the failing cycle, in ns.
    pub fn time_ns(&self) -> i64 {
        self.cycle + POWER_ON_RESET as i64
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "MISMATCH in {} ({}) at cycle {} (waveform time {} ns)",
            self.block,
            self.variant,
            self.cycle,
            self.time_ns()
        )?;
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
        writeln!(f, "  replay:     {}", self.replay)?;
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
}

impl Outcome {
    /// The mismatch, if any.
    pub fn mismatch(&self) -> Option<&Mismatch> {
        match self {
            Outcome::Mismatch(m) => Some(m),
            Outcome::Pass(_) => None,
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
            for i in 0..s.count {
                let (x, y) = (
                    get_bits(e, i * s.width, s.width),
                    get_bits(a, i * s.width, s.width),
                );
                if x != y {
                    let one = model::Shape::scalar(s.width);
                    v.push(Diff {
                        signal: format!("{}[{i}]", p.name),
                        expected: format_value(one, &[x as u32, (x >> 32) as u32]),
                        actual: format_value(one, &[y as u32, (y >> 32) as u32]),
                    });
                }
            }
        } else {
            v.push(Diff {
                signal: p.name.to_string(),
                expected: format_value(s, e),
                actual: format_value(s, a),
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
        .map(|(k, p)| format!("{}={}", p.name, format_value(p.shape, layout.slice(w, k))))
        .collect();
    if parts.is_empty() {
        "(all zero)".into()
    } else {
        parts.join(" ")
    }
}

struct Failure {
    cycle: i64,
    diffs: Vec<Diff>,
    rtl_error: Option<String>,
    inputs: String,
}

/// One pass over the stimulus. With `paths`, writes both waveforms; with
/// `stop`, stops `stop` cycles after a mismatch (else at it).
fn pass<B: Block>(
    stim: &Stimulus<B>,
    paths: Option<&WaveFiles>,
    context: usize,
    cov: &mut Coverage,
) -> Result<(Option<Failure>, f64)> {
    let p = &stim.params;
    let cfg = &stim.config;
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
    let cfg_words = cfg.to_words(p).map_err(|e| anyhow!("configuration: {e}"))?;
    let mut rtl = Rtl::<B>::new(p, cfg, stim.seed, paths.map(|w| w.rtl.as_path()))?;
    let mut wave = match paths {
        Some(w) => {
            let (cl, sl) = (B::Config::layout(p), B::State::layout(p));
            Some((
                ModelWave::create(&w.model, B::NAME, &cl, &il, &ol, &sl)?,
                MergedWave::create(&w.merged, B::NAME, &cl, &il, &ol, &sl)?,
            ))
        }
        None => None,
    };
    let mut model = B::new(p, cfg);
    let zero_words = vec![0u32; il.words];
    // The model's outputs, reused every cycle; and under reset.
    let mut out = B::Outputs::zero(p);
    let reset_out = B::new(p, cfg).step(&B::Inputs::zero(p));
    reset_out
        .to_words(p)
        .map_err(|e| anyhow!("model output under reset: {e}"))?;
    // The packed inputs and expected outputs, filled only when tracing and
    // for a report: the comparison itself runs on the model's own outputs
    // (`eq_words`), without packing them.
    let mut in_words = vec![0u32; il.words];
    let mut exp = vec![0u32; ol.words];
    let mut state_words = vec![0u32; B::State::layout(p).words];
    let mut failure: Option<Failure> = None;
    let mut stop_at: Option<usize> = None;

    let total = POWER_ON_RESET as usize + stim.cycles.len();
    let t0 = Instant::now();
    for n in 0..total {
        if let Some(s) = stop_at {
            if n > s {
                break;
            }
        }
        let k = n as i64 - POWER_ON_RESET as i64;
        let cyc = if k < 0 {
            &Cycle::Reset
        } else {
            &stim.cycles[k as usize]
        };
        let reset = matches!(cyc, Cycle::Reset);
        if wave.is_some() {
            model
                .state()
                .pack(p, &mut state_words)
                .map_err(|e| anyhow!("model register {e}"))?;
        }
        // Drive the RTL and the model with the same inputs.
        let expected = match cyc {
            Cycle::Reset => {
                rtl.inputs_mut().fill(0);
                model = B::new(p, cfg);
                &reset_out
            }
            Cycle::Drive(i) => {
                i.pack(p, rtl.inputs_mut())
                    .map_err(|e| anyhow!("stimulus cycle {k}: {e}"))?;
                model.step_into(i, &mut out);
                model.sample(i, &out, &mut cov.hits);
                &out
            }
        };
        let (equal, rtl_err) = match rtl.cycle(reset) {
            Ok(act) => (expected.eq_words(p, act), None),
            Err(RtlError(e)) => (false, Some(e)),
        };
        let compared = n >= 1;
        let report = failure.is_none() && compared && !equal;
        if wave.is_some() || report {
            in_words.copy_from_slice(rtl.inputs());
            if let Err(e) = expected.pack(p, &mut exp) {
                return Err(anyhow!(
                    "golden model bug at cycle {k}: output {e} (the model produced a value \
                     wider than its port)"
                ));
            }
        }
        if let Some((w, mw)) = wave.as_mut() {
            w.cycle(reset, &cfg_words, &in_words, &exp, &state_words)?;
            let act = if rtl_err.is_some() {
                &exp[..]
            } else {
                rtl.outputs()
            };
            mw.cycle(
                reset,
                &cfg_words,
                &in_words,
                &exp,
                &state_words,
                act,
                compared,
            )?;
        }
        if report {
            let diffs = if rtl_err.is_some() {
                vec![]
            } else {
                diff_outputs(&ol, &exp, rtl.outputs())
            };
            failure = Some(Failure {
                cycle: k,
                diffs,
                rtl_error: rtl_err,
                inputs: if reset {
                    format!("rst_ni=0 {}", format_nonzero(&il, &zero_words))
                } else {
                    format_nonzero(&il, &in_words)
                },
            });
            stop_at = Some(if paths.is_some() { n + context } else { n });
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    rtl.flush();
    drop(rtl);
    if let Some((w, mw)) = wave {
        w.finish()?;
        mw.finish(B::NAME)?;
    }
    Ok((failure, secs))
}

/// The directory of `stim`'s waveforms and repro files under `out_dir`:
/// `<block>-<variant>-seed<seed>`.
pub fn run_dir<B: Block>(stim: &Stimulus<B>, out_dir: &Path) -> PathBuf {
    out_dir.join(format!(
        "{}-{}-seed{}",
        B::NAME,
        stim.params.label(),
        stim.seed
    ))
}

/// Runs `stim` in lockstep. `Err` only for problems that are not a
/// mismatch: a missing variant, a stimulus that does not fit its ports, a
/// file that cannot be written.
pub fn run<B: Block>(stim: &Stimulus<B>, opts: &Options) -> Result<Outcome> {
    let dir = run_dir(stim, &opts.out_dir);
    let files = WaveFiles::in_dir(&dir);
    if opts.waves == Waves::Always {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let traced = opts.waves == Waves::Always;
    let mut coverage = Coverage::of::<B>();
    let (fail, secs) = pass(stim, traced.then_some(&files), opts.context, &mut coverage)?;
    let Some(fail) = fail else {
        return Ok(Outcome::Pass(Summary {
            cycles: stim.cycles.len() as u64,
            secs,
            waves: traced.then(|| files.clone()),
            coverage,
        }));
    };

    let mut m = Mismatch {
        block: B::NAME,
        variant: stim.params.label(),
        seed: stim.seed,
        cycle: fail.cycle,
        diffs: fail.diffs,
        rtl_error: fail.rtl_error,
        inputs: fail.inputs,
        repro: None,
        replay: String::new(),
        waves: None,
        note: None,
    };
    if opts.waves == Waves::Never {
        return Ok(Outcome::Mismatch(Box::new(m)));
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let repro = dir.join("repro.stim");
    std::fs::write(&repro, stim.to_text())
        .with_context(|| format!("writing {}", repro.display()))?;
    m.replay = format!("{} {}", opts.replay, repro.display());
    m.repro = Some(repro);
    if !traced {
        let (again, _) = pass(stim, Some(&files), opts.context, &mut Coverage::of::<B>())?;
        match again {
            Some(f) if f.cycle == m.cycle => {}
            Some(f) => {
                m.note = Some(format!(
                    "the traced re-run diverged at cycle {} instead: the RTL or the model is \
                     not deterministic",
                    f.cycle
                ))
            }
            None => {
                m.note = Some(
                    "the traced re-run did not reproduce the mismatch: the RTL or the model is \
                     not deterministic"
                        .into(),
                )
            }
        }
    }
    m.waves = Some(files);
    Ok(Outcome::Mismatch(Box::new(m)))
}

/// Runs `stim` without waveforms and returns the first divergent cycle, or
/// `None` if model and RTL agree (or the run cannot start).
pub fn first_mismatch<B: Block>(stim: &Stimulus<B>) -> Option<i64> {
    let mut cov = Coverage::of::<B>();
    match pass(stim, None, 0, &mut cov) {
        Ok((Some(f), _)) => Some(f.cycle),
        _ => None,
    }
}

/// Shrinks a failing stimulus to a smaller one that still fails: cuts it
/// after its first divergent cycle, then removes chunks of cycles (halving
/// the chunk size down to single cycles, delta-debugging style) as long as
/// a mismatch remains, within `budget`. Works on any block; the result is
/// a valid stimulus (every input of every block is legal by its spec).
pub fn minimize<B: Block>(stim: &Stimulus<B>, budget: std::time::Duration) -> Stimulus<B> {
    let t0 = Instant::now();
    let mut best = stim.clone();
    let Some(c) = first_mismatch(&best) else {
        return best;
    };
    best.cycles.truncate((c + 1).max(0) as usize);
    let mut chunk = best.cycles.len().div_ceil(2);
    while chunk >= 1 && t0.elapsed() < budget {
        let mut i = 0;
        while i < best.cycles.len() && t0.elapsed() < budget {
            let mut trial = best.clone();
            let end = (i + chunk).min(trial.cycles.len());
            trial.cycles.drain(i..end);
            if let Some(c) = first_mismatch(&trial) {
                trial.cycles.truncate((c + 1).max(0) as usize);
                best = trial;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk = chunk.div_ceil(2).min(chunk - 1).max(1);
    }
    best
}
