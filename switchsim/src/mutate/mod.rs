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
use cosim::shimgen;
use model::port::PortDesc;
use model::stim::Stimulus;
use model::{Block, Params, PortGroup};
use proptest::strategy::{Strategy, ValueTree};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use testbenches::Bench;

pub mod operators;

pub use operators::{apply, mutants, Mutant};

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

/// Writes the kill set as the checker's binary vector file.
fn write_vectors<B: Block>(set: &[Stimulus<B>], path: &Path) -> Result<(usize, usize)> {
    let p = &set[0].params;
    let cl = B::Config::layout(p);
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
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
        for (chk, i, o) in v {
            w.push(chk as u32);
            w.extend_from_slice(&i);
            w.extend_from_slice(&o);
        }
    }
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes)?;
    Ok((in_words, ol.words))
}

/// The C++ harness sources (`cosim/csrc/`), as built into the binary.
const CSRC: [(&str, &str); 3] = [
    ("vsim.h", include_str!("../../../cosim/csrc/vsim.h")),
    ("vsim_rt.h", include_str!("../../../cosim/csrc/vsim_rt.h")),
    (
        "vsim_rt.cpp",
        include_str!("../../../cosim/csrc/vsim_rt.cpp"),
    ),
];

struct Toolchain {
    root: PathBuf,
    csrc: PathBuf,
    rt: PathBuf,
    /// A precompiled header of the Verilator runtime headers (saves about
    /// 40% of a mutant's compile time).
    pch: PathBuf,
}

/// The co-simulation's flags ([`cosim::toolchain::cxx_flags`]) at `opt`: the
/// runtime at `-O2` (built once), a mutant and its precompiled header at
/// `-O1` (each mutant runs once).
fn cxx_flags(tc: &Toolchain, opt: &str) -> Vec<String> {
    cosim::toolchain::cxx_flags(&tc.root, &tc.csrc, opt)
}

/// The flags of a mutant's translation unit: the runtime's, with the
/// precompiled header force-included first.
fn mutant_flags(tc: &Toolchain) -> Vec<String> {
    let mut f = cxx_flags(tc, "-O1");
    f.extend([
        "-Winvalid-pch".into(),
        "-include".into(),
        tc.pch.display().to_string(),
    ]);
    f
}

fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output> {
    let o = cmd.output().with_context(|| format!("cannot run {what}"))?;
    Ok(o)
}

/// Compiles the Verilator runtime once into `dir/rt.a`.
fn toolchain(dir: &Path) -> Result<Toolchain> {
    let (_, root) = cosim::toolchain::verilator().map_err(|e| anyhow::anyhow!(e))?;
    // The harness sources are compiled into the binary, so a campaign
    // needs no source tree of switchsim's own.
    let csrc = dir.join("csrc");
    std::fs::create_dir_all(&csrc)?;
    for (name, text) in CSRC {
        let path = csrc.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            std::fs::write(&path, text)?;
        }
    }
    let rt = dir.join("rt.a");
    let pch = dir.join("mut_pch.h");
    let tc = Toolchain {
        root,
        csrc,
        rt,
        pch,
    };
    if !tc.rt.exists() {
        std::fs::create_dir_all(dir)?;
        let mut objs = vec![];
        for src in cosim::toolchain::runtime_sources(&tc.root, &tc.csrc) {
            let obj = dir.join(src.file_name().unwrap()).with_extension("o");
            let o = run(
                Command::new("g++")
                    .args(cxx_flags(&tc, "-O2"))
                    .arg("-include")
                    .arg(tc.csrc.join(cosim::toolchain::PRELUDE))
                    .arg("-c")
                    .arg(&src)
                    .arg("-o")
                    .arg(&obj),
                "g++",
            )?;
            if !o.status.success() {
                bail!(
                    "compiling {}: {}",
                    src.display(),
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            objs.push(obj);
        }
        let o = run(Command::new("ar").arg("rcs").arg(&tc.rt).args(&objs), "ar")?;
        if !o.status.success() {
            bail!("ar failed");
        }
    }
    let gch = dir.join("mut_pch.h.gch");
    if !gch.exists() {
        std::fs::write(
            &tc.pch,
            format!(
                "#include \"{}\"\n#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n",
                tc.csrc.join(cosim::toolchain::PRELUDE).display()
            ),
        )?;
        let o = run(
            Command::new("g++")
                .args(cxx_flags(&tc, "-O1"))
                .args(["-x", "c++-header"])
                .arg(&tc.pch)
                .arg("-o")
                .arg(&gch),
            "g++",
        )?;
        if !o.status.success() {
            bail!(
                "precompiling {}: {}",
                tc.pch.display(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    Ok(tc)
}

/// Builds and runs the checker on the RTL in `rtl_dir`.
#[allow(clippy::too_many_arguments)]
fn evaluate(
    tc: &Toolchain,
    block: &str,
    params: &[(&'static str, u64)],
    inputs: &[PortDesc],
    outputs: &[PortDesc],
    rtl_dir: &Path,
    work: &Path,
    vectors: &Path,
    timeout: Duration,
) -> Result<Fate> {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work)?;
    let prefix = format!("V{block}_mut");
    let files = cosim::golden::rtl_files(rtl_dir, block)?;
    let args = cosim::toolchain::verilator_args(
        cosim::toolchain::Purpose::Mutant,
        block,
        params,
        &files,
        &prefix,
        work,
    );
    let o = run(Command::new("verilator").args(&args), "verilator")?;
    if !o.status.success() {
        let e = String::from_utf8_lossy(&o.stderr);
        return Ok(Fate::Stillborn(e.lines().next().unwrap_or("").to_string()));
    }
    let shim = shimgen::shim(block, &format!("{block}_mut"), &prefix, inputs, outputs);
    std::fs::write(work.join("shim.cpp"), shim)?;
    std::fs::write(
        work.join("main.cpp"),
        // The checker: `vsim::check` (`cosim/csrc/vsim.h`) on the mutant's
        // build, the same create/cycle code the co-simulation runs.
        format!(
            "#include \"shim.cpp\"\n\
             int main(int argc, char** argv) {{ return argc == 2 ? vsim_{block}_mut_check(argv[1]) : 2; }}\n"
        ),
    )?;
    let mut cpps: Vec<PathBuf> = std::fs::read_dir(work)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "cpp")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    cpps.sort();
    // One translation unit: the Verilator headers are parsed once, which
    // makes a mutant build about 3x faster than compiling the files apart.
    let mut unity = String::new();
    for c in &cpps {
        unity.push_str(&format!("#include \"{}\"\n", c.display()));
    }
    unity.push_str("#include \"main.cpp\"\n");
    std::fs::write(work.join("unity.cpp"), unity)?;
    let exe = work.join("check");
    let o = run(
        Command::new("g++")
            .args(mutant_flags(tc))
            .arg(format!("-I{}", work.display()))
            .arg(work.join("unity.cpp"))
            .arg(&tc.rt)
            .arg("-lpthread")
            .arg("-o")
            .arg(&exe),
        "g++",
    )?;
    if !o.status.success() {
        let e = String::from_utf8_lossy(&o.stderr);
        return Ok(Fate::Stillborn(
            e.lines()
                .find(|l| l.contains("error"))
                .unwrap_or("")
                .to_string(),
        ));
    }
    let mut child = Command::new(&exe)
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
    generics: Vec<(&'static str, u64)>,
    inputs: Vec<model::PortDesc>,
    outputs: Vec<model::PortDesc>,
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
    fn new(
        tc: &Toolchain,
        rtl_dir: &Path,
        scratch: &Path,
        p: &B::Params,
        cases: usize,
    ) -> Result<Self> {
        let label = p.label();
        let set = kill_set_of::<B>(p, cases);
        let cycles = set.iter().map(|s| s.cycles.len()).sum();
        let vectors = scratch.join(format!("{}-{label}.vectors", B::NAME));
        write_vectors(&set, &vectors)?;
        let inputs = model::rtl_inputs::<B>(p);
        let outputs = B::Outputs::ports(p);
        let generics = p.verilog();
        let base_dir = scratch.join(format!("base-{label}"));
        // The unmutated RTL must pass, else the campaign means nothing.
        let base = evaluate(
            tc,
            B::NAME,
            &generics,
            &inputs,
            &outputs,
            rtl_dir,
            &base_dir,
            &vectors,
            Duration::from_secs(300),
        )?;
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
            Command::new(base_dir.join("check")).arg(&vectors),
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
            generics,
            inputs,
            outputs,
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
        tc: &Toolchain,
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
                tc,
                B::NAME,
                &self.generics,
                &self.inputs,
                &self.outputs,
                &rtl,
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
    let tc = toolchain(&scratch.join("rt"))?;
    std::fs::create_dir_all(scratch)?;
    let variants = B::variants();
    // The whole catalogue on the default variant; then each survivor on
    // every other variant, with that variant's own kill set: a mutant only
    // the default variant cannot tell apart is killed there.
    let first = Stage::<B>::new(&tc, rtl_dir, scratch, &variants[0], cases)?;
    let cycles = first.cycles;
    let fates = first.run(&tc, rtl_dir, scratch, &src, &all, jobs, &progress)?;
    let mut results: Vec<(Mutant, Fate)> = all.into_iter().zip(fates).collect();
    for v in &variants[1..] {
        let left: Vec<usize> = (0..results.len())
            .filter(|&k| results[k].1 == Fate::Survived)
            .collect();
        if left.is_empty() {
            break;
        }
        let stage = Stage::<B>::new(&tc, rtl_dir, scratch, v, cases)?;
        let ms: Vec<Mutant> = left.iter().map(|&k| results[k].0.clone()).collect();
        let fates = stage.run(&tc, rtl_dir, scratch, &src, &ms, jobs, &progress)?;
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
