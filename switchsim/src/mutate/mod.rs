//! The mutation campaign: does the checker catch bugs?
//!
//! Each mutant is one single-point change of `rtl/<block>.v` from the
//! catalogue ([`operators`]), applied to a scratch copy of `rtl/`. Every mutant is
//! verilated (same flags as the co-simulation, `--x-initial unique`) and
//! compiled with a small C++ checker that replays the *default test budget*
//! of the block: the 256 random cases of the equivalence test's strategies
//! (fixed seeds, the block's default variant, legal and illegal
//! configurations), followed by the block's directed scenarios, as golden
//! vectors (inputs and the model's expected outputs, every cycle). A mutant
//! is *killed* when an output differs in some compared cycle, when the RTL
//! raises an assertion, or when it hangs (runs 20x longer than the
//! original, at least 10 s); it *survives* otherwise. Mutants
//! that Verilator rejects are *stillborn* and not counted.

use anyhow::{bail, Context, Result};
use cosim::builder::Flavor;
use cosim::design::{Design, Origin};
use model::stim::Stimulus;
use model::{Block, Params, PortGroup};
use proptest::strategy::{Strategy, ValueTree};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use testbenches::Bench;

pub mod operators;

pub use operators::{apply, mutants, Mutant};

/// The manifest of a regression stimulus saved from mutant `m` of
/// `rtl/<block>.v` (`--save-kills`): the line before and after, which the
/// regression test applies to the current RTL (finding the line by its
/// text) to show that the stimulus still catches the mutant.
pub fn manifest(block: &str, m: &Mutant) -> String {
    format!(
        "# The mutant this stimulus was saved from (`switchsim mutate {block} --save-kills`):\n\
         # line {} of rtl/{block}.v then; the test finds the line by its text.\n\
         block {block}\nid {}\nbefore {}\nafter {}\n",
        m.line, m.id, m.before, m.after
    )
}

/// What happened to a mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Caught: the checker's message.
    Killed(String),
    /// Not caught.
    Survived,
    /// Verilator or the compiler rejected it.
    Stillborn(String),
}

/// The kill set of variant `p`: `cases` random cases drawn like the
/// equivalence test's (its strategies, legal and illegal configurations;
/// seeds of the campaign's own, `fuzz::case_seed(0x6d75_7461, k)`), then
/// the block's directed scenarios on that variant.
pub fn kill_set_of<B: Bench>(p: &B::Params, cases: usize) -> Vec<Stimulus<B>>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let p = p.clone();
    let mut v: Vec<Stimulus<B>> = (0..cases as u64)
        .map(|k| {
            let seed = cosim::fuzz::case_seed(0x6d75_7461, k);
            let mut r = testbenches::seeded_runner(seed);
            let mut s = testbenches::stimulus_strategy::<B>(&p, testbenches::DEFAULT_CYCLES, true)
                .new_tree(&mut r)
                .expect("strategies never reject")
                .current();
            s.seed = seed;
            s
        })
        .collect();
    for sc in B::scenarios() {
        let s = (sc.build)();
        if s.params == p {
            v.push(s);
        }
    }
    v
}

/// Writes the kill set as the checker's binary vector file. An optional
/// output that `design` lacks (a view of state the RTL keeps off its
/// ports, as the MMU's per-queue counters) reads as zero in the checker, so
/// its expected words are zero: it is not compared, as in the lockstep.
fn write_vectors<B: Block>(
    set: &[Stimulus<B>],
    design: &Design,
    path: &Path,
) -> Result<(usize, usize)> {
    let p = &set[0].params;
    let cl = B::Config::layout(p);
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
    let absent: Vec<std::ops::Range<usize>> = (0..ol.ports.len())
        .filter(|&j| design.map.outputs[j].is_none())
        .map(|j| ol.offsets[j]..ol.offsets[j] + ol.ports[j].shape.words())
        .collect();
    let in_words = 1 + cl.words + il.words;
    let mut w: Vec<u32> = vec![
        0x5653_494d,
        in_words as u32,
        ol.words as u32,
        set.len() as u32,
    ];
    for s in set {
        let v = cosim::golden::vectors_words(s)?;
        w.push(s.seed as u32);
        w.push((v.len()) as u32);
        for (chk, i, mut o) in v {
            for r in &absent {
                o[r.clone()].fill(0);
            }
            w.push(chk as u32);
            w.extend_from_slice(&i);
            w.extend_from_slice(&o);
        }
    }
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes)?;
    Ok((in_words, ol.words))
}

fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output> {
    let o = cmd.output().with_context(|| format!("cannot run {what}"))?;
    Ok(o)
}

/// The design of variant `p` of `B` on the RTL in `rtl_dir` (a mutant's
/// scratch copy, or `rtl/` itself).
fn design_in<B: Block>(p: &B::Params, rtl_dir: &Path) -> Result<Design> {
    let mut d = Design::ours::<B>(p)?;
    d.files = cosim::golden::rtl_files(rtl_dir, B::NAME)?;
    d.origin = Origin::Mutant;
    Ok(d)
}

/// Builds the checker of `design` in `work` (the builder's executable at
/// `-O1`: the co-simulation's verilating, shim and compile) and runs it on
/// the golden vectors.
fn evaluate(design: &Design, work: &Path, vectors: &Path, timeout: Duration) -> Result<Fate> {
    let exe = match cosim::builder::executable(design, Flavor::Quick, Some(work)) {
        Ok(exe) => exe,
        Err(e) => {
            let text = format!("{e:#}");
            let first = text
                .lines()
                .find(|l| l.contains("rror") || l.contains("rejected"))
                .unwrap_or(text.lines().next().unwrap_or(""));
            return Ok(Fate::Stillborn(first.trim().to_string()));
        }
    };
    let mut child = Command::new(&exe)
        .arg("check")
        .arg(vectors)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let t0 = Instant::now();
    loop {
        if let Some(st) = child.try_wait()? {
            let mut s = String::new();
            use std::io::Read;
            child.stdout.take().unwrap().read_to_string(&mut s)?;
            let last = s.lines().last().unwrap_or("").to_string();
            return Ok(match st.code() {
                Some(0) => Fate::Survived,
                Some(1) => Fate::Killed(last.trim_start_matches("KILLED ").to_string()),
                _ => Fate::Killed(format!("checker aborted ({st}): {last}")),
            });
        }
        if t0.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Fate::Killed(format!(
                "hang: no result in {}s",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The result of a campaign on one block.
pub struct Campaign {
    /// Block.
    pub block: &'static str,
    /// Every mutant with its fate.
    pub results: Vec<(Mutant, Fate)>,
    /// Seconds.
    pub secs: f64,
    /// Cycles in the kill set.
    pub cycles: usize,
}

/// One variant's part of a campaign: its kill set as golden vectors, its
/// ports and generics, and the unmutated RTL checked to pass them.
struct Stage<B: Block> {
    label: String,
    params: B::Params,
    vectors: PathBuf,
    cycles: usize,
    timeout: Duration,
    _b: std::marker::PhantomData<fn() -> B>,
}

impl<B: Bench> Stage<B>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    /// Writes variant `p`'s kill set and checks the unmutated RTL on it.
    fn new(rtl_dir: &Path, scratch: &Path, p: &B::Params, cases: usize) -> Result<Self> {
        let label = p.label();
        let set = kill_set_of::<B>(p, cases);
        let cycles = set.iter().map(|s| s.cycles.len()).sum();
        let vectors = scratch.join(format!("{}-{label}.vectors", B::NAME));
        let design = design_in::<B>(p, rtl_dir)?;
        write_vectors(&set, &design, &vectors)?;
        let base_dir = scratch.join(format!("base-{label}"));
        // The unmutated RTL must pass, else the campaign means nothing.
        let base = evaluate(&design, &base_dir, &vectors, Duration::from_secs(300))?;
        if base != Fate::Survived {
            bail!(
                "the unmutated {} ({label}) does not pass its own kill set: {base:?}",
                B::NAME
            );
        }
        // A mutant hangs when it runs far longer than the original (e.g. a
        // loop whose increment became a decrement): 20x the original's run
        // time, at least 10 s, is a hang and counts as killed.
        let tb = Instant::now();
        let o = run(
            Command::new(base_dir.join("vsim"))
                .arg("check")
                .arg(&vectors),
            "the checker",
        )?;
        if !o.status.success() {
            bail!(
                "the unmutated {} ({label}) checker failed on a re-run",
                B::NAME
            );
        }
        let timeout = (tb.elapsed() * 20).max(Duration::from_secs(10));
        Ok(Stage {
            label,
            params: p.clone(),
            vectors,
            cycles,
            timeout,
            _b: std::marker::PhantomData,
        })
    }

    /// Each of `ms` applied to `src` and run against this stage's kill
    /// set, `jobs` at a time; their fates, in order.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        rtl_dir: &Path,
        scratch: &Path,
        src: &str,
        ms: &[Mutant],
        jobs: usize,
        progress: &(impl Fn(&str, usize, usize, &Mutant, &Fate) + Sync),
    ) -> Result<Vec<Fate>> {
        let total = ms.len();
        // Mutants finished in this stage, for the progress report.
        let done = std::sync::atomic::AtomicUsize::new(0);
        // Each worker builds in a folder of its own.
        crate::sweep::par_map(ms, jobs, |j, m| {
            let dir = scratch.join(format!("job{j}"));
            let rtl = dir.join("rtl");
            let _ = std::fs::remove_dir_all(&rtl);
            std::fs::create_dir_all(&rtl)?;
            for f in cosim::golden::rtl_files(rtl_dir, B::NAME)? {
                std::fs::copy(&f, rtl.join(f.file_name().unwrap()))?;
            }
            std::fs::write(rtl.join(format!("{}.v", B::NAME)), apply(src, m))?;
            let fate = evaluate(
                &design_in::<B>(&self.params, &rtl)?,
                &dir.join(format!("build-{}", self.label)),
                &self.vectors,
                self.timeout,
            )?;
            let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            progress(&self.label, n, total, m, &fate);
            Ok(fate)
        })
    }
}

/// Runs the campaign on block `B` with `jobs` mutants in parallel.
pub fn campaign<B: Bench>(
    rtl_dir: &Path,
    cases: usize,
    jobs: usize,
    limit: Option<usize>,
    only: &[String],
    scratch: &Path,
    progress: impl Fn(&str, usize, usize, &Mutant, &Fate) + Sync,
) -> Result<Campaign>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let t0 = Instant::now();
    let src = std::fs::read_to_string(rtl_dir.join(format!("{}.v", B::NAME)))?;
    let mut all = mutants(&src);
    if !only.is_empty() {
        if let Some(id) = only.iter().find(|id| !all.iter().any(|m| &m.id == *id)) {
            bail!(
                "no mutant {id} in rtl/{}.v (see `switchsim mutate {} --list`)",
                B::NAME,
                B::NAME
            );
        }
        all.retain(|m| only.contains(&m.id));
    }
    if let Some(n) = limit {
        all.truncate(n);
    }
    std::fs::create_dir_all(scratch)?;
    let variants = B::variants();
    // The whole catalogue on the default variant; then each survivor on
    // every other variant, with that variant's own kill set: a mutant only
    // the default variant cannot tell apart is killed there.
    let first = Stage::<B>::new(rtl_dir, scratch, &variants[0], cases)?;
    let cycles = first.cycles;
    let fates = first.run(rtl_dir, scratch, &src, &all, jobs, &progress)?;
    let mut results: Vec<(Mutant, Fate)> = all.into_iter().zip(fates).collect();
    for v in &variants[1..] {
        let left: Vec<usize> = (0..results.len())
            .filter(|&k| results[k].1 == Fate::Survived)
            .collect();
        if left.is_empty() {
            break;
        }
        let stage = Stage::<B>::new(rtl_dir, scratch, v, cases)?;
        let ms: Vec<Mutant> = left.iter().map(|&k| results[k].0.clone()).collect();
        let fates = stage.run(rtl_dir, scratch, &src, &ms, jobs, &progress)?;
        for (&k, f) in left.iter().zip(fates) {
            if let Fate::Killed(why) = f {
                results[k].1 = Fate::Killed(format!("on variant {}: {why}", v.label()));
            }
        }
    }
    Ok(Campaign {
        block: B::NAME,
        results,
        secs: t0.elapsed().as_secs_f64(),
        cycles,
    })
}
