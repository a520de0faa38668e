//! The lockstep runner: golden model and RTL get the same inputs every cycle
//! and every output is compared every cycle.
//!
//! A run is a [`Stimulus`] (variant, configuration, seed, and its cycles
//! written out or named by the block's traffic generator, which then yields
//! them one at a time: memory does not grow with the run). The runner holds
//! reset for [`POWER_ON_RESET`] cycles, then drives the stimulus. The
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
use anyhow::{anyhow, Result};
use model::port::{describe_value, get_bits, Layout, PortDesc};
use model::stim::{Generator, Step, Stimulus};
use model::{Block, Params, PortGroup};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use testbenches::Bench;

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

/// Called now and then during a long run: cycles done, cycles in all,
/// seconds so far.
pub type ProgressFn = fn(u64, u64, f64);

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
    /// Threads of an untraced run: 1, or 2 (the model and the generator run
    /// ahead on a second thread into a bounded queue of expected outputs;
    /// this thread drives the RTL and compares). Reports, waveforms and
    /// repro files are the same either way.
    pub threads: usize,
    /// Called about twice a second during a run, if set.
    pub progress: Option<ProgressFn>,
    /// Time allowed for shrinking a long generated run's failure to a short
    /// written-out window.
    pub shrink: Duration,
    /// A fault to inject into the golden model's outputs, to see the
    /// mismatch path end to end (`--inject-fault`, for tests and demos).
    pub fault: Option<Fault>,
}

/// Flips the lowest bit of one output port of the golden model in one
/// stimulus cycle (a stand-in for a bug).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The output port, e.g. `thr_o`.
    pub port: String,
    /// The stimulus cycle.
    pub cycle: u64,
}

impl Fault {
    /// Parses `PORT@CYCLE`.
    pub fn parse(s: &str) -> Result<Fault, String> {
        let (port, c) = s
            .split_once('@')
            .ok_or_else(|| format!("`{s}`: expected PORT@CYCLE, e.g. thr_o@100"))?;
        Ok(Fault {
            port: port.to_string(),
            cycle: c
                .parse()
                .map_err(|_| format!("`{s}`: `{c}` is not a cycle number"))?,
        })
    }

    /// The word offset of the port in the packed outputs of `B`, checked.
    fn offset<B: Block>(&self, p: &B::Params) -> Result<usize> {
        let l = B::Outputs::layout(p);
        let k = l.find(&self.port).ok_or_else(|| {
            let known: Vec<&str> = l.ports.iter().map(|d| d.name).collect();
            anyhow!(
                "--inject-fault: `{}` is not an output of {} (outputs: {})",
                self.port,
                B::NAME,
                known.join(", ")
            )
        })?;
        Ok(l.offsets[k])
    }

    /// `fault`'s port offset and cycle for `B`, checked.
    fn resolve<B: Block>(fault: Option<&Fault>, p: &B::Params) -> Result<Option<(usize, u64)>> {
        fault
            .map(|f| f.offset::<B>(p).map(|o| (o, f.cycle)))
            .transpose()
    }

    /// Flips the port's lowest bit in `out` if `k` is the cycle.
    fn apply<B: Block>(off: Option<(usize, u64)>, k: u64, p: &B::Params, out: &mut B::Outputs) {
        if let Some((off, at)) = off {
            if k == at {
                let mut w = vec![0u32; B::Outputs::layout(p).words];
                if out.pack(p, &mut w).is_ok() {
                    w[off] ^= 1;
                    *out = B::Outputs::unpack(p, &w);
                }
            }
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            out_dir: PathBuf::from("out"),
            waves: Waves::OnMismatch,
            context: 8,
            replay: "switchsim replay".into(),
            threads: 1,
            progress: None,
            shrink: Duration::from_secs(20),
            fault: None,
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
    /// for the power-on reset cycle).
    pub cycle: i64,
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

struct Failure {
    cycle: i64,
    diffs: Vec<Diff>,
    rtl_error: Option<String>,
    inputs: String,
}

impl Failure {
    /// The failure of stimulus cycle `cycle`: `ins` the packed inputs
    /// driven (zero under reset), `exp` the model's packed outputs, `act`
    /// the RTL's (not read when the RTL raised an error itself).
    #[allow(clippy::too_many_arguments)]
    fn at(
        cycle: i64,
        reset: bool,
        il: &Layout,
        ol: &Layout,
        ins: &[u32],
        exp: &[u32],
        act: &[u32],
        rtl_error: Option<String>,
    ) -> Self {
        let inputs = format_nonzero(il, ins);
        Failure {
            cycle,
            diffs: if rtl_error.is_some() {
                vec![]
            } else {
                diff_outputs(ol, exp, act)
            },
            rtl_error,
            inputs: if reset {
                format!("rst_ni=0 {inputs}")
            } else {
                inputs
            },
        }
    }
}

/// Calls `progress` about twice a second.
struct Ticker {
    f: Option<ProgressFn>,
    t0: Instant,
    last: Instant,
    total: u64,
}

impl Ticker {
    fn new(f: Option<ProgressFn>, total: u64) -> Self {
        let now = Instant::now();
        Ticker {
            f,
            t0: now,
            last: now,
            total,
        }
    }
    /// Every 2^16 cycles: reports if half a second has passed.
    #[inline]
    fn tick(&mut self, n: u64) {
        if n & 0xffff == 0 {
            if let Some(f) = self.f {
                if self.last.elapsed() >= Duration::from_millis(500) {
                    self.last = Instant::now();
                    f(n, self.total, self.t0.elapsed().as_secs_f64());
                }
            }
        }
    }
}

/// One pass over the stimulus. With `paths`, writes both waveforms; with
/// `stop`, stops `stop` cycles after a mismatch (else at it).
fn pass<B: Bench>(
    stim: &Stimulus<B>,
    paths: Option<&WaveFiles>,
    context: usize,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
    fault: Option<&Fault>,
) -> Result<(Option<Failure>, f64)> {
    let p = &stim.params;
    let fault = Fault::resolve::<B>(fault, p)?;
    let cfg = &stim.config;
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
    let cfg_words = cfg.to_words(p).map_err(|e| anyhow!("configuration: {e}"))?;
    let mut src = testbenches::source(stim).map_err(|e| anyhow!(e))?;
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
    // The outputs under reset; and the model's outputs, reused every cycle
    // (they are also the generator's view of the cycle before).
    let reset_out = B::new(p, cfg).step(&B::Inputs::zero(p));
    reset_out
        .to_words(p)
        .map_err(|e| anyhow!("model output under reset: {e}"))?;
    let mut out = reset_out.clone();
    let mut i = B::Inputs::zero(p);
    // The packed inputs and expected outputs, filled only when tracing and
    // for a report: the comparison itself runs on the model's own outputs
    // (`eq_words`), without packing them.
    let mut in_words = vec![0u32; il.words];
    let mut exp = vec![0u32; ol.words];
    let mut state_words = vec![0u32; B::State::layout(p).words];
    let mut failure: Option<Failure> = None;
    let mut stop_at: Option<u64> = None;

    let total = POWER_ON_RESET + stim.len();
    let mut ticker = Ticker::new(progress, stim.len());
    let t0 = Instant::now();
    for n in 0..total {
        if stop_at.is_some_and(|s| n > s) {
            break;
        }
        ticker.tick(n);
        let k = n as i64 - POWER_ON_RESET as i64;
        let reset = k < 0 || src.next(&model, &out, &mut i) == Step::Reset;
        if wave.is_some() {
            model
                .state()
                .pack(p, &mut state_words)
                .map_err(|e| anyhow!("model register {e}"))?;
        }
        // Drive the RTL and the model with the same inputs.
        if reset {
            rtl.inputs_mut().fill(0);
            model = B::new(p, cfg);
            out.clone_from(&reset_out);
        } else {
            i.pack(p, rtl.inputs_mut())
                .map_err(|e| anyhow!("stimulus cycle {k}: {e}"))?;
            model.step_into(&i, &mut out);
            Fault::apply::<B>(fault, k as u64, p, &mut out);
            model.sample(&i, &out, &mut cov.hits);
        }
        let (equal, rtl_err) = match rtl.cycle(reset) {
            Ok(act) => (out.eq_words(p, act), None),
            Err(RtlError(e)) => (false, Some(e)),
        };
        let compared = n >= 1;
        let report = failure.is_none() && compared && !equal;
        if wave.is_some() || report {
            in_words.copy_from_slice(rtl.inputs());
            if let Err(e) = out.pack(p, &mut exp) {
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
            // Under reset the RTL's inputs were zeroed: `in_words` is zero.
            failure = Some(Failure::at(
                k,
                reset,
                &il,
                &ol,
                &in_words,
                &exp,
                rtl.outputs(),
                rtl_err,
            ));
            stop_at = Some(if paths.is_some() {
                n + context as u64
            } else {
                n
            });
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

/// Cycles per batch handed from the model thread to the RTL thread.
const BATCH: usize = 1024;
/// Batches in flight between the two threads (the queue's bound).
const IN_FLIGHT: usize = 4;

/// A batch of cycles: packed inputs and the outputs the model expects.
struct Batch {
    n: usize,
    reset: Vec<bool>,
    inputs: Vec<u32>,
    expected: Vec<u32>,
}

/// [`pass`] without waveforms on two threads: the generator and the model
/// run ahead on a second thread and hand packed inputs and expected
/// outputs over a bounded queue; this thread drives the RTL and compares.
/// The same verdict, first divergent cycle and report as [`pass`].
fn pass_threaded<B: Bench>(
    stim: &Stimulus<B>,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
    fault: Option<&Fault>,
) -> Result<(Option<Failure>, f64)> {
    use std::sync::mpsc::{channel, sync_channel};
    let p = &stim.params;
    let fault = Fault::resolve::<B>(fault, p)?;
    let cfg = &stim.config;
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
    let (iw, ow) = (il.words, ol.words);
    // Fail early, on this thread, for what would fail there.
    testbenches::source(stim).map_err(|e| anyhow!(e))?;
    let mut rtl = Rtl::<B>::new(p, cfg, stim.seed, None)?;
    let total = POWER_ON_RESET + stim.len();
    let (to_rtl, from_model) = sync_channel::<Result<Batch, String>>(IN_FLIGHT);
    let (recycle, spare) = channel::<Batch>();
    let mut ticker = Ticker::new(progress, stim.len());
    let t0 = Instant::now();
    let (failure, hits) = std::thread::scope(|sc| -> Result<(Option<Failure>, Vec<u64>)> {
        let worker = sc.spawn(move || {
            let mut hits = vec![0u64; B::bins().len()];
            let mut src = testbenches::source(stim).expect("checked above");
            let mut model = B::new(p, cfg);
            let reset_out = B::new(p, cfg).step(&B::Inputs::zero(p));
            let mut out = reset_out.clone();
            let mut i = B::Inputs::zero(p);
            let mut n = 0u64;
            while n < total {
                let mut b = spare.try_recv().unwrap_or_else(|_| Batch {
                    n: 0,
                    reset: vec![false; BATCH],
                    inputs: vec![0; BATCH * iw],
                    expected: vec![0; BATCH * ow],
                });
                b.n = 0;
                while b.n < BATCH && n < total {
                    let j = b.n;
                    let reset = n < POWER_ON_RESET || src.next(&model, &out, &mut i) == Step::Reset;
                    let (ins, exp) = (
                        &mut b.inputs[j * iw..(j + 1) * iw],
                        &mut b.expected[j * ow..(j + 1) * ow],
                    );
                    if reset {
                        ins.fill(0);
                        model = B::new(p, cfg);
                        out.clone_from(&reset_out);
                    } else {
                        if let Err(e) = i.pack(p, ins) {
                            let k = n - POWER_ON_RESET;
                            let _ = to_rtl.send(Err(format!("stimulus cycle {k}: {e}")));
                            return hits;
                        }
                        model.step_into(&i, &mut out);
                        Fault::apply::<B>(fault, n - POWER_ON_RESET, p, &mut out);
                        model.sample(&i, &out, &mut hits);
                    }
                    if let Err(e) = out.pack(p, exp) {
                        let k = n as i64 - POWER_ON_RESET as i64;
                        let _ = to_rtl.send(Err(format!(
                            "golden model bug at cycle {k}: output {e} (the model produced a \
                             value wider than its port)"
                        )));
                        return hits;
                    }
                    b.reset[j] = reset;
                    b.n += 1;
                    n += 1;
                }
                if to_rtl.send(Ok(b)).is_err() {
                    break; // the RTL side stopped at a mismatch
                }
            }
            hits
        });
        let mut n = 0u64;
        let mut failure = None;
        'run: for b in from_model.iter() {
            let b = b.map_err(|e| anyhow!(e))?;
            for j in 0..b.n {
                ticker.tick(n);
                let reset = b.reset[j];
                let ins = &b.inputs[j * iw..(j + 1) * iw];
                let exp = &b.expected[j * ow..(j + 1) * ow];
                rtl.inputs_mut().copy_from_slice(ins);
                let (equal, rtl_err) = match rtl.cycle(reset) {
                    Ok(act) => (act == exp, None),
                    Err(RtlError(e)) => (false, Some(e)),
                };
                if n >= 1 && !equal {
                    let k = n as i64 - POWER_ON_RESET as i64;
                    failure = Some(Failure::at(
                        k,
                        reset,
                        &il,
                        &ol,
                        ins,
                        exp,
                        rtl.outputs(),
                        rtl_err,
                    ));
                    break 'run;
                }
                n += 1;
            }
            let _ = recycle.send(b);
        }
        drop(from_model);
        let hits = worker
            .join()
            .map_err(|_| anyhow!("the model thread panicked"))?;
        Ok((failure, hits))
    })?;
    let secs = t0.elapsed().as_secs_f64();
    if failure.is_none() {
        for (h, x) in cov.hits.iter_mut().zip(&hits) {
            *h += x;
        }
    }
    Ok((failure, secs))
}

/// The directory of `stim`'s waveforms and repro files under `out_dir`:
/// `<block>-<variant>-seed<seed>-<id>`, where `<id>` is a checksum of the
/// whole stimulus (configuration and cycles, or the generator and length),
/// so that runs that differ in anything get folders of their own.
pub fn run_dir<B: Block>(stim: &Stimulus<B>, out_dir: &Path) -> PathBuf {
    let id = crc32fast::hash(stim.to_text().as_bytes());
    out_dir.join(format!(
        "{}-{}-seed{}-{id:08x}",
        B::NAME,
        stim.params.label(),
        stim.seed
    ))
}

/// The files a run may write into its folder; the ones a run does not
/// write again are removed first, so nothing stale stands beside new
/// results.
const RUN_FILES: &[&str] = &[
    "model.vcd",
    "rtl.vcd",
    "merged.vcd",
    "merged.gtkw",
    "repro.stim",
    "repro-short.stim",
    "frames.pcap",
];

/// Creates `dir` and removes what an earlier run left in it: the
/// [`RUN_FILES`] and the waveforms' translate filters (`merged.*.names`).
pub fn fresh_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let filters = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .filter(|n| {
            n.to_str()
                .is_some_and(|n| n.starts_with("merged.") && n.ends_with(".names"))
        });
    let stale: Vec<std::path::PathBuf> = RUN_FILES
        .iter()
        .map(|f| dir.join(f))
        .chain(filters.map(|n| dir.join(n)))
        .collect();
    for f in stale {
        match std::fs::remove_file(f) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// A divergence further in than this many cycles gets no waveform of the
/// whole run (it would be gigabytes): the waveforms are those of the short
/// window the shrinker found, if any.
pub const WAVE_LIMIT: u64 = 200_000;

/// Runs `stim` in lockstep. `Err` only for problems that are not a
/// mismatch: a missing variant, a stimulus that does not fit its ports or
/// that names another generator version. A mismatch is always returned as
/// such, even when its files cannot be written (the `note` says what was
/// not written).
pub fn run<B: Bench>(stim: &Stimulus<B>, opts: &Options) -> Result<Outcome> {
    let dir = run_dir(stim, &opts.out_dir);
    let files = WaveFiles::in_dir(&dir);
    let mut write_errors: Vec<String> = Vec::new();
    let mut traced = opts.waves == Waves::Always;
    if traced {
        if let Err(e) = fresh_dir(&dir) {
            write_errors.push(format!("{}: {e}", dir.display()));
            traced = false;
        }
    }
    let mut coverage = Coverage::of::<B>();
    let (fail, secs) = if traced {
        pass(
            stim,
            Some(&files),
            opts.context,
            &mut coverage,
            opts.progress,
            opts.fault.as_ref(),
        )?
    } else if opts.threads >= 2 {
        pass_threaded(stim, &mut coverage, opts.progress, opts.fault.as_ref())?
    } else {
        pass(
            stim,
            None,
            0,
            &mut coverage,
            opts.progress,
            opts.fault.as_ref(),
        )?
    };
    let Some(fail) = fail else {
        return Ok(Outcome::Pass(Summary {
            cycles: stim.len(),
            secs,
            waves: traced.then(|| files.clone()),
            coverage,
            write_errors,
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
        short: None,
        replay: String::new(),
        waves: None,
        waves_of: None,
        note: None,
        write_errors,
    };
    if opts.waves == Waves::Never {
        return Ok(Outcome::Mismatch(Box::new(m)));
    }
    // The run cut just after its first divergent cycle: what regenerates it.
    let cut = cut_after(stim, fail.cycle);
    // A short written-out window that still fails, for a long generated run.
    let short = (stim.generated.is_some() && fail.cycle >= 0)
        .then(|| shrink_window(&cut, opts.shrink))
        .flatten();
    if !traced {
        if let Err(e) = fresh_dir(&dir) {
            m.write_errors.push(format!("{}: {e}", dir.display()));
        }
    }
    let repro = dir.join("repro.stim");
    match std::fs::write(&repro, cut.to_text()) {
        Ok(()) => {
            let illegal = if B::check(&stim.params, &stim.config).is_err() {
                " --illegal-config"
            } else {
                ""
            };
            m.replay = format!("{}{illegal} {}", opts.replay, repro.display());
            m.repro = Some(repro);
        }
        Err(e) => m.write_errors.push(format!("{}: {e}", repro.display())),
    }
    if let Some(sh) = &short {
        let path = dir.join("repro-short.stim");
        match std::fs::write(&path, sh.to_text()) {
            Ok(()) => m.short = Some((path, sh.cycles.len() as u64)),
            Err(e) => m.write_errors.push(format!("{}: {e}", path.display())),
        }
    }
    if !m.write_errors.is_empty() {
        return Ok(Outcome::Mismatch(Box::new(m)));
    }
    if traced {
        m.waves = Some(files);
        return Ok(Outcome::Mismatch(Box::new(m)));
    }
    // Waveforms: of the run itself up to a few cycles past the divergence,
    // or of the short window when the divergence is too far in.
    let (traced_stim, want) = if (fail.cycle.max(0) as u64) < WAVE_LIMIT {
        (
            cut_after(stim, fail.cycle + opts.context as i64),
            Some(m.cycle),
        )
    } else if let Some(sh) = short {
        m.waves_of = Some("the short window (repro-short.stim)".into());
        (sh, None)
    } else {
        m.note = Some(format!(
            "no waveforms: the divergence is {} cycles in (over {WAVE_LIMIT}) and no short \
             window reproduces it",
            fail.cycle
        ));
        return Ok(Outcome::Mismatch(Box::new(m)));
    };
    match pass(
        &traced_stim,
        Some(&files),
        opts.context,
        &mut Coverage::of::<B>(),
        None,
        if want.is_some() {
            opts.fault.as_ref()
        } else {
            None
        },
    ) {
        Ok((again, _)) => {
            match (again, want) {
                (Some(f), Some(c)) if f.cycle == c => {}
                (Some(_), None) => {}
                (Some(f), Some(_)) => {
                    m.note = Some(format!(
                        "the traced re-run diverged at cycle {} instead: the RTL or the model \
                         is not deterministic",
                        f.cycle
                    ))
                }
                (None, _) => {
                    m.note = Some(
                        "the traced re-run did not reproduce the mismatch: the RTL or the \
                         model is not deterministic"
                            .into(),
                    )
                }
            }
            m.waves = Some(files);
        }
        Err(e) => m.write_errors.push(format!("waveforms: {e:#}")),
    }
    Ok(Outcome::Mismatch(Box::new(m)))
}

/// `stim` cut just after cycle `c` (all of it when `c` is past its end).
pub fn cut_after<B: Block>(stim: &Stimulus<B>, c: i64) -> Stimulus<B> {
    let keep = (c + 1).max(0) as u64;
    let mut s = stim.clone();
    match &mut s.generated {
        Some(g) => g.cycles = g.cycles.min(keep),
        None => s.cycles.truncate(keep.min(s.cycles.len() as u64) as usize),
    }
    s
}

/// For a run cut just after its first divergent cycle: the last W cycles
/// written out and played from reset, for W = 256, 4096, 65536 (the first
/// that still fails), then shrunk by [`minimize`] within `budget`. `None`
/// when no such window fails.
pub fn shrink_window<B: Bench>(cut: &Stimulus<B>, budget: Duration) -> Option<Stimulus<B>> {
    let t0 = Instant::now();
    let end = cut.len();
    let widest = end.min(1 << 16);
    let tail = testbenches::materialize(cut, end - widest, end).ok()?;
    for w in [256u64, 4096, 1 << 16] {
        let w = w.min(widest);
        let win = Stimulus::explicit(
            cut.params.clone(),
            cut.config.clone(),
            cut.seed,
            tail[(widest - w) as usize..].to_vec(),
        );
        if first_mismatch(&win).is_some() {
            return Some(minimize(&win, budget.saturating_sub(t0.elapsed())));
        }
        if w == widest {
            break;
        }
    }
    None
}

/// Runs `stim` without waveforms and returns the first divergent cycle, or
/// `None` if model and RTL agree (or the run cannot start).
pub fn first_mismatch<B: Bench>(stim: &Stimulus<B>) -> Option<i64> {
    let mut cov = Coverage::of::<B>();
    match pass(stim, None, 0, &mut cov, None, None) {
        Ok((Some(f), _)) => Some(f.cycle),
        _ => None,
    }
}

/// Shrinks a failing stimulus to a smaller one that still fails: cuts it
/// after its first divergent cycle (a generated one is first written out:
/// the window of [`shrink_window`], or all of it when it is short), then
/// removes chunks of cycles (halving the chunk size down to single cycles,
/// delta-debugging style) as long as a mismatch remains, within `budget`.
/// Works on any block; the result is a valid stimulus (every input of
/// every block is legal by its spec).
pub fn minimize<B: Bench>(stim: &Stimulus<B>, budget: Duration) -> Stimulus<B> {
    let t0 = Instant::now();
    let Some(c) = first_mismatch(stim) else {
        return stim.clone();
    };
    let mut best = cut_after(stim, c);
    if best.generated.is_some() {
        match shrink_window(&best, budget) {
            Some(s) => return s,
            None => return best,
        }
    }
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
