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

use crate::design::{Design, UserMap};
use crate::rtl::{Dut, Rtl, RtlError};
use crate::wave::{MergedWave, ModelWave};
use anyhow::{anyhow, Result};
use model::port::{describe_value, get_bits, Layout, PortDesc};
use model::stim::{Generator, Step, Stimulus};
use model::timing::Alignment;
use model::{Block, Params, PortGroup};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use testbenches::Bench;

mod aligned;
mod report;
mod shrink;
pub(crate) mod side;
pub use report::*;
pub use shrink::*;

/// A designer's RTL, verified instead of the project's: their files, top
/// module, and the map of their ports onto the declaration
/// (`docs/your-rtl.md`).
#[derive(Clone, Debug)]
pub struct UserRtl {
    /// The Verilog files, the top module's first.
    pub files: Vec<PathBuf>,
    /// The top module (else the map's, else the block's name).
    pub top: Option<String>,
    /// The map.
    pub map: UserMap,
    /// Compiled for a single short run ([`Design::quick`]).
    pub quick: bool,
}

/// What a run verifies: the design and how its clocks line up with the
/// model's steps.
#[derive(Clone, Debug)]
pub struct Target {
    /// The RTL.
    pub design: Design,
    /// The alignment.
    pub align: Alignment,
}

impl Target {
    /// The project's RTL of variant `p` with the block's own alignment, or
    /// `user`'s with the map's.
    pub fn of<B: Block>(p: &B::Params, user: Option<&UserRtl>) -> Result<Target> {
        let (design, align) = match user {
            None => (Design::ours::<B>(p)?, B::alignment(p)),
            Some(u) => {
                let (mut d, al) = Design::user::<B>(p, &u.files, u.top.as_deref(), &u.map)?;
                d.quick = u.quick;
                (d, al)
            }
        };
        let ins: Vec<&str> = design.inputs[1..].iter().map(|d| d.name).collect();
        let outs: Vec<&str> = design.outputs.iter().map(|d| d.name).collect();
        align
            .check(&ins, &outs)
            .map_err(|e| anyhow!("alignment of {}: {e}", B::NAME))?;
        Ok(Target { design, align })
    }

    /// Whether the fast path serves it: the plain contract, and every
    /// output there (it compares every output word; an RTL without one of
    /// the optional outputs goes the aligned way, which compares what it has).
    pub fn plain(&self) -> bool {
        self.align.is_lockstep() && self.design.map.outputs.iter().all(Option::is_some)
    }

    /// The RTL's name for declared port `name` (the same for the project's
    /// RTL), and for a state field its signal path.
    pub fn rtl_name(&self, name: &str) -> Option<String> {
        let d = &self.design;
        if let Some(k) = d.outputs.iter().position(|p| p.name == name) {
            return d.map.outputs[k].clone();
        }
        if let Some(k) = d.inputs[1..].iter().position(|p| p.name == name) {
            return Some(d.map.inputs[k].clone());
        }
        d.map
            .state
            .iter()
            .find(|s| s.field == name)
            .map(|s| s.path.clone())
    }
}

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
    /// A designer's RTL to verify instead of the project's.
    pub user: Option<UserRtl>,
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
            user: None,
        }
    }
}

struct Failure {
    cycle: i64,
    /// The RTL clock (counted from the first power-on reset clock) where
    /// the difference was seen, when the alignment is not the plain one.
    clock: Option<u64>,
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
            clock: None,
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

/// Set when the process is asked to stop (SIGINT, SIGTERM): every run stops
/// at its next cycle and reports what it verified so far.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks every run of this process to stop at its next cycle (what a signal
/// handler calls).
pub fn request_stop() {
    STOP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a stop was asked for.
pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::Relaxed)
}

/// What one pass over a stimulus found.
pub(crate) struct PassOut {
    failure: Option<Failure>,
    secs: f64,
    /// Stimulus cycles (steps) verified when a stop was asked for.
    stopped: Option<u64>,
    /// Waveform files that could not be written, with the reason.
    write_errors: Vec<String>,
}

/// The waveforms of a pass. A file that cannot be written (a full disk)
/// is given up at its first failed write and named in `errors`; the pass
/// and its verdict go on.
pub(crate) struct Tracer {
    files: WaveFiles,
    model: Option<ModelWave>,
    merged: Option<MergedWave>,
    errors: Vec<String>,
}

impl Tracer {
    /// Opens both waveforms of `B` at `files`: `k` RTL clocks per model
    /// step, with a `step` signal when `with_step`.
    fn create<B: Block>(files: &WaveFiles, p: &B::Params, k: u64, with_step: bool) -> Self {
        let (cl, il, ol, sl) = (
            B::Config::layout(p),
            B::Inputs::layout(p),
            B::Outputs::layout(p),
            B::State::layout(p),
        );
        let mut errors = Vec::new();
        let model = ModelWave::create(&files.model, B::NAME, &cl, &il, &ol, &sl, k, with_step)
            .map_err(|e| errors.push(format!("{}: {e:#}", files.model.display())))
            .ok();
        let merged = MergedWave::create(&files.merged, B::NAME, &cl, &il, &ol, &sl, with_step)
            .map_err(|e| errors.push(format!("{}: {e:#}", files.merged.display())))
            .ok();
        Tracer {
            files: files.clone(),
            model,
            merged,
            errors,
        }
    }

    /// One step of the model's waveform.
    fn model(&mut self, reset: bool, cfg: &[u32], inp: &[u32], out: &[u32], state: &[u32]) {
        if let Some(w) = self.model.as_mut() {
            if let Err(e) = w.cycle(reset, cfg, inp, out, state) {
                self.errors
                    .push(format!("{}: {e:#}", self.files.model.display()));
                self.model = None;
            }
        }
    }

    /// One clock of the merged waveform.
    #[allow(clippy::too_many_arguments)]
    fn merged(
        &mut self,
        reset: bool,
        cfg: &[u32],
        inp: &[u32],
        model_out: &[u32],
        state: &[u32],
        rtl_out: &[u32],
        differ: bool,
        step: Option<u32>,
    ) {
        if let Some(w) = self.merged.as_mut() {
            if let Err(e) = w.cycle(reset, cfg, inp, model_out, state, rtl_out, differ, step) {
                self.errors
                    .push(format!("{}: {e:#}", self.files.merged.display()));
                self.merged = None;
            }
        }
    }

    /// Closes both files (and writes the GTKWave save file); returns the
    /// files not written.
    fn finish(mut self, block: &str) -> Vec<String> {
        if let Some(w) = self.model.take() {
            if let Err(e) = w.finish() {
                self.errors
                    .push(format!("{}: {e:#}", self.files.model.display()));
            }
        }
        if let Some(w) = self.merged.take() {
            if let Err(e) = w.finish(block) {
                self.errors
                    .push(format!("{}: {e:#}", self.files.merged.display()));
            }
        }
        self.errors
    }
}

/// The RTL of `target` for `stim`, with Verilator's waveform at `vcd` when
/// given; when that file cannot be opened, without it, the reason added to
/// `errors`.
fn open_rtl<B: Block>(
    target: &Target,
    stim: &Stimulus<B>,
    vcd: Option<&Path>,
    errors: &mut Vec<String>,
) -> Result<Rtl<B>> {
    let (p, cfg) = (&stim.params, &stim.config);
    match Rtl::<B>::of(&target.design, p, cfg, stim.seed, vcd) {
        Ok(r) => Ok(r),
        Err(e) if vcd.is_some() && format!("{e:#}").contains("cannot open the VCD") => {
            errors.push(format!("{}: cannot be created", vcd.unwrap().display()));
            Rtl::<B>::of(&target.design, p, cfg, stim.seed, None)
        }
        Err(e) => Err(e),
    }
}

/// Closes the RTL's waveform and adds a failed write of it to `errors`.
fn close_rtl<B: Block>(mut rtl: Rtl<B>, vcd: Option<&Path>, errors: &mut Vec<String>) {
    rtl.flush();
    drop(rtl);
    let e = crate::builder::trace_error();
    if let (false, Some(v)) = (e.is_empty(), vcd) {
        errors.push(format!("{}: {e}", v.display()));
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

/// What a pass needs of its block besides the model side, in words.
pub(crate) struct Shape {
    pub block: &'static str,
    pub il: Layout,
    pub ol: Layout,
    pub sl: Layout,
    pub cfg_words: Vec<u32>,
    /// Coverage bins.
    pub bins: usize,
    /// Stimulus steps (without the power-on reset).
    pub steps: u64,
}

impl Shape {
    fn of<B: Bench>(stim: &Stimulus<B>) -> Result<Shape> {
        let p = &stim.params;
        Ok(Shape {
            block: B::NAME,
            il: B::Inputs::layout(p),
            ol: B::Outputs::layout(p),
            sl: B::State::layout(p),
            cfg_words: stim
                .config
                .to_words(p)
                .map_err(|e| anyhow!("configuration: {e}"))?,
            bins: B::bins().len(),
            steps: stim.len(),
        })
    }
}

/// What a pass's loop found; the waveforms still open.
pub(crate) struct Found {
    failure: Option<Failure>,
    secs: f64,
    stopped: Option<u64>,
    wave: Option<Tracer>,
}

impl Found {
    /// The pass's result: closes the waveforms of block `block`, their
    /// write errors after `write_errors`.
    fn finish(self, block: &str, mut write_errors: Vec<String>) -> PassOut {
        if let Some(t) = self.wave {
            write_errors.extend(t.finish(block));
        }
        PassOut {
            failure: self.failure,
            secs: self.secs,
            stopped: self.stopped,
            write_errors,
        }
    }
}

/// One pass over the stimulus against `target`. With `paths`, writes both
/// waveforms and goes on `context` cycles past a mismatch (else stops at
/// it).
fn pass<B: Bench>(
    stim: &Stimulus<B>,
    target: &Target,
    paths: Option<&WaveFiles>,
    context: usize,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
    fault: Option<&Fault>,
) -> Result<PassOut> {
    let p = &stim.params;
    let fault = Fault::resolve::<B>(fault, p)?;
    let shape = Shape::of(stim)?;
    let mut side = side::of(stim, fault)?;
    let mut write_errors = Vec::new();
    let vcd = paths.map(|w| w.rtl.as_path());
    let mut rtl = open_rtl(target, stim, vcd, &mut write_errors)?;
    let found = if target.plain() {
        let wave = paths.map(|w| Tracer::create::<B>(w, p, 1, false));
        plain(&shape, &mut *side, &mut rtl, wave, context, cov, progress)
    } else {
        let k = u64::from(target.align.clocks_per_step.max(1));
        let wave = paths.map(|w| Tracer::create::<B>(w, p, k, true));
        aligned::pass(
            &shape, &mut *side, &mut rtl, target, wave, context, cov, progress,
        )
    };
    close_rtl(rtl, vcd, &mut write_errors);
    Ok(found?.finish(B::NAME, write_errors))
}

/// [`pass`]'s loop under the plain alignment: one RTL clock per step,
/// every output compared in its step. With `wave`, goes on `context`
/// cycles past a mismatch.
fn plain(
    shape: &Shape,
    side: &mut dyn side::ModelSide,
    rtl: &mut Dut,
    mut wave: Option<Tracer>,
    context: usize,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
) -> Result<Found> {
    let (il, ol) = (&shape.il, &shape.ol);
    let traced = wave.is_some();
    // The packed inputs and expected outputs, filled only when tracing and
    // for a report: the comparison itself runs on the model's own outputs
    // (`outputs_are`), without packing them.
    let mut in_words = vec![0u32; il.words];
    let mut exp = vec![0u32; ol.words];
    let mut state_words = vec![0u32; shape.sl.words];
    let mut failure: Option<Failure> = None;
    let mut stop_at: Option<u64> = None;
    let mut stopped = None;

    let total = POWER_ON_RESET + shape.steps;
    let mut ticker = Ticker::new(progress, shape.steps);
    let t0 = Instant::now();
    for n in 0..total {
        if stop_at.is_some_and(|s| n > s) {
            break;
        }
        if stop_requested() {
            stopped = Some(n.saturating_sub(POWER_ON_RESET));
            break;
        }
        ticker.tick(n);
        let k = n as i64 - POWER_ON_RESET as i64;
        let reset = k < 0 || side.next();
        if traced {
            side.pack_state(&mut state_words, None)
                .map_err(|e| anyhow!("model register {e}"))?;
        }
        // Drive the RTL and the model with the same inputs.
        if reset {
            rtl.inputs_mut().fill(0);
            side.reset();
        } else {
            side.step(k as u64, rtl.inputs_mut(), &mut cov.hits)
                .map_err(|e| anyhow!("stimulus cycle {k}: {e}"))?;
        }
        let (equal, rtl_err) = match rtl.cycle(reset) {
            Ok(act) => (side.outputs_are(act), None),
            Err(RtlError(e)) => (false, Some(e)),
        };
        let compared = n >= 1;
        let report = failure.is_none() && compared && !equal;
        if traced || report {
            in_words.copy_from_slice(rtl.inputs());
            if let Err(e) = side.pack_outputs(&mut exp, None) {
                return Err(anyhow!(
                    "golden model bug at cycle {k}: output {e} (the model produced a value \
                     wider than its port)"
                ));
            }
        }
        if let Some(t) = wave.as_mut() {
            t.model(reset, &shape.cfg_words, &in_words, &exp, &state_words);
            let act = if rtl_err.is_some() {
                &exp[..]
            } else {
                rtl.outputs()
            };
            t.merged(
                reset,
                &shape.cfg_words,
                &in_words,
                &exp,
                &state_words,
                act,
                compared && exp[..] != act[..],
                None,
            );
        }
        if report {
            // Under reset the RTL's inputs were zeroed: `in_words` is zero.
            failure = Some(Failure::at(
                k,
                reset,
                il,
                ol,
                &in_words,
                &exp,
                rtl.outputs(),
                rtl_err,
            ));
            stop_at = Some(if traced { n + context as u64 } else { n });
        }
    }
    Ok(Found {
        failure,
        secs: t0.elapsed().as_secs_f64(),
        stopped,
        wave,
    })
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
    target: &Target,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
    fault: Option<&Fault>,
) -> Result<PassOut> {
    let p = &stim.params;
    let fault = Fault::resolve::<B>(fault, p)?;
    let shape = Shape::of(stim)?;
    // Fail early, on this thread, for what would fail there.
    side::of(stim, fault)?;
    let mut rtl = Rtl::<B>::of(&target.design, p, &stim.config, stim.seed, None)?;
    let make = || side::of(stim, fault);
    Ok(threaded(&shape, &make, &mut rtl, cov, progress)?.finish(B::NAME, Vec::new()))
}

/// Makes a pass's model side (on the thread that runs it).
type MakeSide<'a> = dyn Fn() -> Result<Box<dyn side::ModelSide + 'a>> + Sync + 'a;

/// [`pass_threaded`]'s two loops: the model side (made by `make` on
/// the second thread) and the RTL.
fn threaded(
    shape: &Shape,
    make: &MakeSide<'_>,
    rtl: &mut Dut,
    cov: &mut Coverage,
    progress: Option<ProgressFn>,
) -> Result<Found> {
    use std::sync::mpsc::{channel, sync_channel};
    let (il, ol) = (&shape.il, &shape.ol);
    let (iw, ow) = (il.words, ol.words);
    let total = POWER_ON_RESET + shape.steps;
    let (to_rtl, from_model) = sync_channel::<Result<Batch, String>>(IN_FLIGHT);
    let (recycle, spare) = channel::<Batch>();
    let mut ticker = Ticker::new(progress, shape.steps);
    let t0 = Instant::now();
    let mut stopped = None;
    let (failure, hits) = std::thread::scope(|sc| -> Result<(Option<Failure>, Vec<u64>)> {
        let worker = sc.spawn(move || {
            let mut hits = vec![0u64; shape.bins];
            let mut side = match make() {
                Ok(s) => s,
                Err(e) => {
                    let _ = to_rtl.send(Err(format!("{e:#}")));
                    return hits;
                }
            };
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
                    let reset = n < POWER_ON_RESET || side.next();
                    let (ins, exp) = (
                        &mut b.inputs[j * iw..(j + 1) * iw],
                        &mut b.expected[j * ow..(j + 1) * ow],
                    );
                    if reset {
                        ins.fill(0);
                        side.reset();
                    } else if let Err(e) = side.step(n - POWER_ON_RESET, ins, &mut hits) {
                        let k = n - POWER_ON_RESET;
                        let _ = to_rtl.send(Err(format!("stimulus cycle {k}: {e}")));
                        return hits;
                    }
                    if let Err(e) = side.pack_outputs(exp, None) {
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
                if stop_requested() {
                    stopped = Some(n.saturating_sub(POWER_ON_RESET));
                    break 'run;
                }
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
                        il,
                        ol,
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
    Ok(Found {
        failure,
        secs,
        stopped,
        wave: None,
    })
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
    let target = Target::of::<B>(&stim.params, opts.user.as_ref())?;
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
    let out = if traced {
        pass(
            stim,
            &target,
            Some(&files),
            opts.context,
            &mut coverage,
            opts.progress,
            opts.fault.as_ref(),
        )?
    } else if opts.threads >= 2 && target.plain() {
        pass_threaded(
            stim,
            &target,
            &mut coverage,
            opts.progress,
            opts.fault.as_ref(),
        )?
    } else {
        pass(
            stim,
            &target,
            None,
            0,
            &mut coverage,
            opts.progress,
            opts.fault.as_ref(),
        )?
    };
    write_errors.extend(out.write_errors);
    let Some(fail) = out.failure else {
        let summary = Summary {
            cycles: out.stopped.unwrap_or(stim.len()),
            secs: out.secs,
            waves: traced.then(|| files.clone()),
            coverage,
            write_errors,
        };
        return Ok(match out.stopped {
            Some(_) => Outcome::Interrupted(summary),
            None => Outcome::Pass(summary),
        });
    };

    let mut m = Mismatch {
        block: B::NAME,
        variant: stim.params.label(),
        seed: stim.seed,
        cycle: fail.cycle,
        clock: fail.clock,
        rtl: (target.design.origin != crate::design::Origin::Ours).then(|| {
            format!(
                "{} (top `{}`)",
                target
                    .design
                    .files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                target.design.top
            )
        }),
        diffs: name_diffs(fail.diffs, &target),
        rtl_error: fail.rtl_error,
        inputs: fail.inputs,
        repro: None,
        short: None,
        replay: String::new(),
        waves: None,
        waves_of: None,
        note: None,
        write_errors,
        interrupted: false,
    };
    m.interrupted = out.stopped.is_some() || stop_requested();
    if opts.waves == Waves::Never || m.interrupted {
        if traced {
            m.waves = Some(files);
        }
        return Ok(Outcome::Mismatch(Box::new(m)));
    }
    // The run cut just after its first divergent cycle: what regenerates it.
    let cut = cut_after(stim, fail.cycle);
    // A short written-out window that still fails, for a long generated run.
    let short = (stim.generated.is_some() && fail.cycle >= 0)
        .then(|| shrink_window(&cut, opts.shrink, opts.user.as_ref()))
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
        // The context past the divergence, in steps; the drain clocks of a
        // latency show the rest.
        let context = opts.context.div_ceil(target.align.clocks_per_step as usize);
        (cut_after(stim, fail.cycle + context as i64), Some(m.cycle))
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
        &target,
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
        Ok(again) => {
            m.write_errors.extend(again.write_errors);
            if again.stopped.is_some() {
                m.interrupted = true;
            }
            match (again.failure, want) {
                (Some(f), Some(c)) if f.cycle == c => {}
                (Some(_), None) => {}
                (Some(f), Some(_)) => {
                    m.note = Some(format!(
                        "the traced re-run diverged at cycle {} instead: the RTL or the model \
                         is not deterministic",
                        f.cycle
                    ))
                }
                (None, _) if again.stopped.is_some() => {
                    m.note = Some("the traced re-run was interrupted before the mismatch".into())
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

/// The differences under the RTL's own names: `their[3] (ours_o)` where a
/// designer's map renamed the port or names a state signal.
fn name_diffs(diffs: Vec<Diff>, target: &Target) -> Vec<Diff> {
    diffs
        .into_iter()
        .map(|mut d| {
            let (base, index) = match d.signal.find('[') {
                Some(i) => (d.signal[..i].to_string(), d.signal[i..].to_string()),
                None => (d.signal.clone(), String::new()),
            };
            let (state, base) = match base.strip_prefix("state ") {
                Some(b) => (true, b.to_string()),
                None => (false, base),
            };
            if let Some(r) = target.rtl_name(&base) {
                if r != base {
                    d.signal = format!("{}{r}{index} ({base})", if state { "state " } else { "" });
                }
            }
            d
        })
        .collect()
}
