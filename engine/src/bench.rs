//! Benchmarks: how fast the model, the RTL and the co-simulation run, side by
//! side, on the same stimulus (generated beforehand, so generation is not
//! counted). Every figure is the best of `repeat` runs, all taken in one
//! process in rounds (each figure once per round), so that their ratios are
//! comparable even on a shared, noisy machine. Used by `switchsim bench` / `make bench`.

use anyhow::{anyhow, bail, Result};
use cosim::lockstep::{self, Options, Outcome, Waves};
use cosim::rtl::{Dut, Rtl};
use model::stim::{Cycle, Stimulus};
use model::{Block, Params, PortGroup};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;
use testbenches::Bench;

/// The figures of one block variant, in cycles per second.
#[derive(Clone, Debug)]
pub struct Row {
    /// Block.
    pub block: &'static str,
    /// Variant label.
    pub variant: String,
    /// Cycles per run: model steps, each `clocks_per_step` RTL clocks.
    /// The RTL figures (2, 3, 3b) count clocks, the others steps.
    pub cycles: usize,
    /// RTL clocks per model step in the lockstep (`Alignment::clocks_per_step`).
    pub clocks_per_step: u32,
    /// 1. The golden model alone (`step_into`, outputs reused).
    pub model: f64,
    /// 1b. The model side of a lockstep cycle: step, plus packing its
    /// inputs into port words, comparing its outputs with a word buffer
    /// (`eq_words`) and sampling coverage.
    pub model_packed: f64,
    /// 2. The RTL through the project's bindings (set inputs, clock, read outputs).
    pub rtl: f64,
    /// 2b. The model (`step_into`) and the RTL through the bindings,
    /// interleaved step by step (`K` clocks each), nothing compared: what the two cost when
    /// they share one core in turn.
    pub interleaved: f64,
    /// 3. The same RTL in the minimal C++ harness reading the stimulus
    ///    from a file, inside the shared library the process opens.
    pub cxx: f64,
    /// 3b. The same harness in an executable linked statically (no
    /// position-independent code, no `dlopen`): what the shared library
    /// costs per cycle.
    pub cxx_static: f64,
    /// 4. Lockstep co-simulation (model + RTL + compare every output + coverage).
    pub lockstep: f64,
    /// 5. Lockstep with waveforms (model, RTL and merged VCD).
    pub traced: f64,
    /// The bindings and the C++ harness saw the same outputs (checksums).
    pub same_outputs: bool,
}

impl Row {
    /// The ideal lockstep rate in model steps per second: `1 / (1/model +
    /// K/rtl)`, the RTL clocked `K` times per step.
    pub fn ideal(&self) -> f64 {
        1.0 / (1.0 / self.model + f64::from(self.clocks_per_step.max(1)) / self.rtl)
    }
}

fn fnv(sum: u64, words: &[u32]) -> u64 {
    words
        .iter()
        .fold(sum, |s, &w| (s ^ w as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The parts of the model side of a lockstep cycle timed besides
/// `step_into`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelSide {
    /// Packing the inputs into port words.
    pub pack_inputs: bool,
    /// Sampling functional coverage.
    pub coverage: bool,
    /// Comparing the outputs with a word buffer (`eq_words`: the same work
    /// whatever the buffer holds).
    pub compare: bool,
}

impl ModelSide {
    /// `step_into` alone.
    pub const STEP: Self = ModelSide {
        pack_inputs: false,
        coverage: false,
        compare: false,
    };
    /// Everything the runner does on the model side.
    pub const ALL: Self = ModelSide {
        pack_inputs: true,
        coverage: true,
        compare: true,
    };
}

/// Seconds of one pass of the model over `stim` (`step_into`, outputs
/// reused), with `parts` of the runner's model-side work. The loop is the
/// copy compiled in this crate for a block of the registry
/// ([`crate::hot`]), as are [`time_rtl`]'s.
pub fn time_model<B: Block>(stim: &Stimulus<B>, parts: ModelSide) -> Result<f64> {
    match crate::hot::of::<B>() {
        Some(h) => (h.time_model)(stim, parts),
        None => time_model_impl(stim, parts),
    }
}

pub(crate) fn time_model_impl<B: Block>(stim: &Stimulus<B>, parts: ModelSide) -> Result<f64> {
    let (p, cfg) = (&stim.params, &stim.config);
    let mut m = B::new(p, cfg);
    let mut o = B::Outputs::zero(p);
    let mut iw = vec![0u32; B::Inputs::layout(p).words];
    let ow = vec![0u32; B::Outputs::layout(p).words];
    let mut hits = vec![0u64; B::bins().len()];
    let mut equal = 0u64;
    let t0 = Instant::now();
    for c in &stim.cycles {
        match c {
            Cycle::Drive(i) => {
                if parts.pack_inputs {
                    i.pack(p, &mut iw).map_err(|e| anyhow!("{e}"))?;
                }
                m.step_into(black_box(i), &mut o);
                if parts.coverage {
                    m.sample(i, &o, &mut hits);
                }
                if parts.compare {
                    equal += u64::from(o.eq_words(p, black_box(&ow)));
                }
                black_box(&o);
            }
            Cycle::Reset => m = B::new(p, cfg),
        }
    }
    black_box((&hits, equal, &iw));
    Ok(t0.elapsed().as_secs_f64())
}

/// The packed input vector of every RTL clock of a stimulus, as the RTL's
/// bindings and the C++ harness read them: `rst_ni`, the configuration,
/// the inputs. A model step is `K` clocks (`Alignment::clocks_per_step`),
/// driven as the lockstep drives them: the step's inputs held, its pulse
/// inputs in the first clock only, reset held for all `K`.
pub struct Packed {
    /// All clocks, one after the other.
    pub words: Vec<u32>,
    /// Words per clock.
    pub per: usize,
    /// Clocks per model step.
    pub k: usize,
    /// Offset of the inputs within a clock.
    in_off: usize,
}

impl Packed {
    /// Packs `stim`.
    pub fn of<B: Block>(stim: &Stimulus<B>) -> Result<Self> {
        let p = &stim.params;
        let al = B::alignment(p);
        let k = al.clocks_per_step.max(1) as usize;
        let cfg_words = stim.config.to_words(p).map_err(|e| anyhow!("{e}"))?;
        let il = B::Inputs::layout(p);
        let pulse = al.pulse_words(&il);
        let per = 1 + cfg_words.len() + il.words;
        let mut words = Vec::with_capacity(per * k * stim.cycles.len());
        let mut w = vec![0u32; il.words];
        for c in &stim.cycles {
            let run = match c {
                Cycle::Drive(i) => {
                    i.pack(p, &mut w).map_err(|e| anyhow!("{e}"))?;
                    1
                }
                Cycle::Reset => {
                    w.fill(0);
                    0
                }
            };
            for clock in 0..k {
                if clock == 1 {
                    for &(o, n) in &pulse {
                        w[o..o + n].fill(0);
                    }
                }
                words.push(run);
                words.extend_from_slice(&cfg_words);
                words.extend_from_slice(&w);
            }
        }
        Ok(Packed {
            words,
            per,
            k,
            in_off: 1 + cfg_words.len(),
        })
    }

    /// Clocks in all.
    pub fn clocks(&self) -> usize {
        self.words.len() / self.per
    }

    /// Every clock: whether reset is held, and its packed inputs.
    pub fn cycles(&self) -> impl Iterator<Item = (bool, &[u32])> {
        self.words
            .chunks_exact(self.per)
            .map(|v| (v[0] == 0, &v[self.in_off..]))
    }
}

/// Seconds of one pass of the RTL, through the bindings, over `packed` (the
/// packing of `stim`), and a checksum of its outputs; with `with_model`, the
/// model steps (`step_into`) between the RTL's cycles and nothing is
/// checksummed or compared.
pub fn time_rtl<B: Block>(
    stim: &Stimulus<B>,
    packed: &Packed,
    with_model: bool,
) -> Result<(f64, u64)> {
    let mut rtl = Rtl::<B>::new(&stim.params, &stim.config, 1, None)?;
    rtl.reset(2).map_err(|e| anyhow!("{e}"))?;
    match crate::hot::of::<B>() {
        Some(h) => (h.time_rtl)(stim, packed, with_model, &mut rtl),
        None => time_rtl_impl(stim, packed, with_model, &mut rtl),
    }
}

pub(crate) fn time_rtl_impl<B: Block>(
    stim: &Stimulus<B>,
    packed: &Packed,
    with_model: bool,
    rtl: &mut Dut,
) -> Result<(f64, u64)> {
    let (p, cfg) = (&stim.params, &stim.config);
    let mut m = B::new(p, cfg);
    let mut o = B::Outputs::zero(p);
    let mut sum = 0u64;
    let t0 = Instant::now();
    for (n, (reset, inputs)) in packed.cycles().enumerate() {
        rtl.inputs_mut().copy_from_slice(inputs);
        if with_model && n % packed.k == 0 {
            match &stim.cycles[n / packed.k] {
                Cycle::Drive(i) => m.step_into(black_box(i), &mut o),
                Cycle::Reset => m = B::new(p, cfg),
            }
        }
        let out = rtl.cycle(reset).map_err(|e| anyhow!("{e}"))?;
        if with_model {
            black_box(out);
        } else {
            sum = fnv(sum, out);
        }
    }
    black_box(&o);
    Ok((t0.elapsed().as_secs_f64(), sum))
}

/// Measures block `B`, variant `p`, on `cycles` cycles of its default
/// configuration with seeded traffic; scratch files go to `tmp`.
pub fn measure<B: Bench>(
    p: &B::Params,
    cycles: usize,
    traced_cycles: usize,
    repeat: usize,
    tmp: &Path,
) -> Result<Row> {
    let cfg = B::default_config(p);
    let stim: Stimulus<B> = testbenches::generate::<B>(p, 1, cycles, Some(&cfg));
    // Model steps, and the RTL clocks they take (`K` per step).
    let n = stim.cycles.len() as f64;

    // 1. Model alone, through its fastest interface (outputs reused); 1b.
    // the model side of lockstep.
    let mut f_model = || time_model(&stim, ModelSide::STEP);
    let mut f_model_packed = || time_model(&stim, ModelSide::ALL);

    // 2. RTL through the bindings; 2b. interleaved with the model.
    let packed = Packed::of(&stim)?;
    let clocks = packed.clocks() as f64;
    let mut rtl_sum = 0;
    let mut f_rtl = || {
        let (t, sum) = time_rtl(&stim, &packed, false)?;
        rtl_sum = sum;
        Ok(t)
    };
    let mut f_inter = || Ok(time_rtl(&stim, &packed, true)?.0);

    // 3. The minimal C++ harness, same stimulus from a file.
    std::fs::create_dir_all(tmp)?;
    let file = tmp.join(format!("{}-{}.bin", B::NAME, p.label()));
    let bytes: Vec<u8> = packed.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&file, bytes)?;
    let design = cosim::design::Design::ours::<B>(p)?;
    let vt = cosim::builder::library(&design)?;
    let mut cxx_sum = 0;
    let mut f_cxx = || {
        let h = vt.harness(&file)?;
        if h.cycles as usize != packed.clocks() {
            bail!("the C++ harness read {} cycles", h.cycles);
        }
        cxx_sum = h.checksum;
        Ok(h.secs)
    };
    // 3b. The same harness, statically linked, in a process of its own.
    let exe = cosim::builder::executable(&design, cosim::builder::Flavor::Static, None)?;
    let mut static_sum = 0;
    let mut f_static = || {
        let o = std::process::Command::new(&exe)
            .arg("bench")
            .arg(&file)
            .output()
            .map_err(|e| anyhow!("{}: {e}", exe.display()))?;
        let text = String::from_utf8_lossy(&o.stdout);
        let f: Vec<&str> = text.split_whitespace().collect();
        if !o.status.success() || f.len() != 3 {
            bail!("the static C++ harness failed: {text}");
        }
        let (secs, n, sum): (f64, usize, u64) = (f[0].parse()?, f[1].parse()?, f[2].parse()?);
        if n != packed.clocks() {
            bail!("the static C++ harness read {n} cycles");
        }
        static_sum = sum;
        Ok(secs)
    };

    // 4. Lockstep, and 5. with waveforms.
    let quiet = Options {
        threads: 1,
        progress: None,
        shrink: std::time::Duration::from_secs(20),
        fault: None,
        out_dir: tmp.to_path_buf(),
        waves: Waves::Never,
        context: 0,
        replay: String::new(),
        user: None,
    };
    let mut f_lock = || match lockstep::run(&stim, &quiet)? {
        Outcome::Pass(s) => Ok(s.secs),
        Outcome::Mismatch(m) => bail!("benchmark stimulus fails:\n{m}"),
        Outcome::Interrupted(_) => bail!("interrupted"),
    };

    // Rounds: every figure once per round, `repeat` rounds, the best of each
    // kept. A burst of load from a neighbour on a shared machine then hits
    // the figures of one round alike instead of all repeats of one figure,
    // so the ratios between figures stay comparable.
    let mut t = [f64::MAX; 7];
    {
        let mut figures: [&mut dyn FnMut() -> Result<f64>; 7] = [
            &mut f_model,
            &mut f_model_packed,
            &mut f_rtl,
            &mut f_inter,
            &mut f_cxx,
            &mut f_static,
            &mut f_lock,
        ];
        for _ in 0..repeat.max(1) {
            for (b, f) in t.iter_mut().zip(figures.iter_mut()) {
                *b = b.min(f()?);
            }
        }
    }
    let [t_model, t_model_packed, t_rtl, t_inter, t_cxx, t_static, t_lock] = t;
    let _ = std::fs::remove_file(&file);
    let mut head = stim.clone();
    head.cycles.truncate(traced_cycles);
    let loud = Options {
        waves: Waves::Always,
        ..quiet.clone()
    };
    let t_traced = match lockstep::run(&head, &loud)? {
        Outcome::Pass(s) => s.secs,
        Outcome::Mismatch(m) => bail!("benchmark stimulus fails:\n{m}"),
        Outcome::Interrupted(_) => bail!("interrupted"),
    };
    let _ = std::fs::remove_dir_all(tmp.join(format!("{}-{}-seed1", B::NAME, p.label())));

    Ok(Row {
        block: B::NAME,
        variant: p.label(),
        cycles,
        clocks_per_step: packed.k as u32,
        model: n / t_model,
        model_packed: n / t_model_packed,
        rtl: clocks / t_rtl,
        interleaved: n / t_inter,
        cxx: clocks / t_cxx,
        cxx_static: clocks / t_static,
        lockstep: n / t_lock,
        traced: head.cycles.len() as f64 / t_traced,
        same_outputs: rtl_sum == cxx_sum && cxx_sum == static_sum,
    })
}

/// Peak resident set size of this process, in KiB (`VmHWM`).
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// Formats a rate: `1.23 M`, `456 k`.
pub fn rate(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_else(|| "?".into())
}

/// The machine the figures were taken on.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or("?".into(), |k| format!("{:.0} GiB", k as f64 / 1048576.0));
    format!(
        "{cpu}, {cores} cores, {mem}; {}; {}; {}",
        sh("rustc", &["--version"]),
        sh("verilator", &["--version"]),
        sh("g++", &["--version"])
    )
}

/// Reads the builds' times the builder records (`builds.tsv` of a cache:
/// design, Verilator seconds, C++ seconds, total seconds).
fn build_times(path: &Path) -> Option<Vec<(String, f64, f64, f64)>> {
    let s = std::fs::read_to_string(path).ok()?;
    Some(
        s.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f.len() == 4).then(|| {
                    (
                        f[0].to_string(),
                        f[1].parse().unwrap_or(0.0),
                        f[2].parse().unwrap_or(0.0),
                        f[3].parse().unwrap_or(0.0),
                    )
                })
            })
            .collect(),
    )
}

/// The generated section of BENCHMARKS.md. `partial`: the blocks of a run
/// that measured only some of the registry's; its header is then one
/// provenance line ([`provenance`]) that [`update_file`] adds to the
/// header already in the file instead of replacing it.
pub fn markdown(
    rows: &[Row],
    rss: &[(String, String, Option<u64>)],
    partial: Option<&[String]>,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let date = sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    match partial {
        Some(blocks) => writeln!(s, "{}\n", provenance(blocks, &date, &machine())).unwrap(),
        None => {
            writeln!(s, "Generated by `make bench` on {date}.  ").unwrap();
            writeln!(s, "Machine: {}.\n", machine()).unwrap();
        }
    }
    writeln!(
        s,
        "Cycles per second, best of the repeats, all in one process on the same pre-generated \
         stimulus (default configuration, seed 1). A model step is `clocks / step` RTL clocks, \
         driven as the lockstep drives them; the RTL figures (2, 3, 3b) count clocks, the \
         others (and `model / RTL`'s model) model steps; the ideal lockstep rate is `1 / (1/model \
         + clocks per step / RTL)`.\n"
    )
    .unwrap();
    writeln!(
        s,
        "| block | variant | cycles | clocks / step | 1 model | 1b model + pack + compare + coverage | 2 RTL, bindings | \
         2b model + RTL interleaved | 3 RTL, C++ harness (shared library) | 3b C++ harness, static \
         | 3 / 3b | 2 / 3 | 4 lockstep | ideal | 4 / ideal | 2b / ideal | 4 / 2b | 5 traced | \
         model / RTL | same outputs |"
    )
    .unwrap();
    writeln!(
        s,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|"
    )
    .unwrap();
    for r in rows {
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} | {:.2} | {:.2} | {:.2} | {} | {:.1} | {} |",
            r.block,
            r.variant,
            r.cycles,
            r.clocks_per_step,
            rate(r.model),
            rate(r.model_packed),
            rate(r.rtl),
            rate(r.interleaved),
            rate(r.cxx),
            rate(r.cxx_static),
            r.cxx / r.cxx_static,
            r.rtl / r.cxx,
            rate(r.lockstep),
            rate(r.ideal()),
            r.lockstep / r.ideal(),
            r.interleaved / r.ideal(),
            r.lockstep / r.interleaved,
            rate(r.traced),
            r.model / r.rtl,
            if r.same_outputs { "yes" } else { "NO" }
        )
        .unwrap();
    }
    writeln!(
        s,
        "\nPeak RSS of `switchsim run <block> --variant <v> --cycles 20000` (fresh process):\n"
    )
    .unwrap();
    writeln!(s, "| block | variant | peak RSS |\n|---|---|---:|").unwrap();
    for (b, v, k) in rss {
        writeln!(
            s,
            "| {b} | {v} | {} |",
            k.map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        )
        .unwrap();
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    for (title, file) in [
        (
            "Cold build of every design the tests use (`switchsim build all` into an empty cache, \
             2 at a time)",
            "bench-cold",
        ),
        (
            "Build after a one-line edit of `rtl/mmu.v` (a comment appended; the other designs are \
             reused by content hash)",
            "bench-incr",
        ),
    ] {
        if let Some(t) = build_times(&target.join(format!("{file}.tsv"))) {
            writeln!(s, "\n{title}, seconds (Verilator, C++ compile and link):\n").unwrap();
            writeln!(s, "| design | verilator | C++ | total |\n|---|---:|---:|---:|").unwrap();
            for (v, a, b, c) in t {
                writeln!(s, "| {v} | {a:.1} | {b:.1} | {c:.1} |").unwrap();
            }
        }
        if let Ok(w) = std::fs::read_to_string(target.join(format!("{file}.wall"))) {
            writeln!(s, "\nWall time of the whole step: {} s.", w.trim()).unwrap();
        }
    }
    s
}

/// The header line of a run that measured only `blocks`.
pub fn provenance(blocks: &[String], date: &str, machine: &str) -> String {
    let names: Vec<String> = blocks.iter().map(|b| format!("`{b}`")).collect();
    format!(
        "The {} rows: `switchsim bench {}` on {date}, {machine} (ratios within a row are \
         side by side; absolute figures are not comparable with rows of another run; a later \
         line supersedes an earlier one for the same rows).",
        names.join(", "),
        blocks.join(" ")
    )
}

/// The blocks a provenance line names (the `` `names` `` before ` rows:`),
/// or `None` when `line` is not one.
fn provenance_blocks(line: &str) -> Option<Vec<&str>> {
    let head = line.strip_prefix("The ")?.split(" rows:").next()?;
    if !line.contains(" rows:") {
        return None;
    }
    let names: Vec<&str> = head.split('`').skip(1).step_by(2).collect();
    (!names.is_empty()).then_some(names)
}

/// `merged` (a generated section whose first paragraph is one provenance
/// line) with the first paragraph of `old` kept above that line: the
/// header of the last whole run and the lines of other partial runs. An old
/// provenance line whose blocks are all measured again is dropped.
pub fn keep_header(old: &str, merged: &str) -> String {
    let Some((line, rest)) = merged.split_once('\n') else {
        return merged.to_string();
    };
    let Some(new_blocks) = provenance_blocks(line) else {
        return merged.to_string();
    };
    let old_head: Vec<&str> = old
        .trim_start_matches('\n')
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with('|'))
        .filter(|l| provenance_blocks(l).is_none_or(|b| !b.iter().all(|x| new_blocks.contains(x))))
        .collect();
    let mut s = String::new();
    for l in old_head {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str(line);
    s.push('\n');
    s.push_str(rest);
    s
}

const BEGIN: &str = "<!-- generated:begin (by switchsim; edit outside these markers) -->";
const END: &str = "<!-- generated:end -->";

/// Where the markers [`update_file`] writes stand in `text`: the offsets
/// of [`BEGIN`] and of [`END`].
fn markers(text: &str) -> Option<(usize, usize)> {
    match (text.find(BEGIN), text.find(END)) {
        (Some(a), Some(b)) if a < b => Some((a, b)),
        _ => None,
    }
}

/// The generated section of `text` (between the markers [`update_file`]
/// writes), or all of it when it has none.
pub fn generated_part(text: &str) -> &str {
    markers(text).map_or(text, |(a, b)| &text[a + BEGIN.len()..b])
}

/// Replaces the generated section `name` of `path` (between its own
/// markers) with `md`, keeping everything else; creates the file or the
/// section if needed.
pub fn update_section(path: &Path, name: &str, md: &str) -> Result<()> {
    let (begin, end) = (
        format!("<!-- generated:{name}:begin (by switchsim; edit outside these markers) -->"),
        format!("<!-- generated:{name}:end -->"),
    );
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let new = match (old.find(&begin), old.find(&end)) {
        (Some(a), Some(b)) if a < b => {
            let md = keep_other_rows(&old[a + begin.len()..b], md);
            format!("{}{begin}\n{md}{end}{}", &old[..a], &old[b + end.len()..])
        }
        _ => format!("{old}\n{begin}\n{md}{end}\n"),
    };
    std::fs::write(path, new).map_err(|e| anyhow!("writing {}: {e}", path.display()))
}

/// Replaces the generated section of `path` (between the markers) with `md`,
/// keeping everything else; creates the file if needed.
pub fn update_file(path: &Path, md: &str) -> Result<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let new = match markers(&old) {
        Some((a, b)) => {
            let section = &old[a + BEGIN.len()..b];
            let md = keep_header(section, &keep_other_rows(section, md));
            format!("{}{BEGIN}\n{md}{END}{}", &old[..a], &old[b + END.len()..])
        }
        None => format!("{old}\n{BEGIN}\n{md}{END}\n"),
    };
    std::fs::write(path, new)?;
    Ok(())
}

/// Whether line `k` of `ls` is a Markdown table's header (the rule line
/// follows it).
fn is_head(ls: &[&str], k: usize) -> bool {
    ls[k].starts_with('|')
        && ls
            .get(k + 1)
            .is_some_and(|l| l.starts_with("|--") || l.starts_with("|:-"))
}

/// The cells of a Markdown table row, trimmed.
fn cells(line: &str) -> Vec<&str> {
    let inner = line.trim().strip_prefix('|').unwrap_or(line);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim).collect()
}

/// The table of `old` whose rows go under `head` (a header of `new`): the
/// one with the same header, or else the one of the same kind (first
/// column) with the most columns in common that no table of `new` has as
/// its header (an older format: a column added since). Returns its
/// header's line, and for an older format, for each column of `head`, the
/// old column holding it (`None`: not measured then, shown as `n/a`).
fn old_table(
    old: &[&str],
    new: &[&str],
    head: &str,
) -> Option<(usize, Option<Vec<Option<usize>>>)> {
    if let Some(h) = (0..old.len()).find(|&k| old[k] == head && is_head(old, k)) {
        return Some((h, None));
    }
    let want = cells(head);
    (0..old.len())
        .filter(|&k| is_head(old, k) && first_cell(old[k]) == first_cell(head))
        .filter(|&k| !new.contains(&old[k]))
        .map(|k| {
            let have = cells(old[k]);
            let cols: Vec<Option<usize>> = want
                .iter()
                .map(|w| {
                    have.iter()
                        .position(|h| h == w || RENAMED.contains(&(*w, *h)))
                })
                .collect();
            let common = cols.iter().filter(|c| c.is_some()).count();
            (k, cols, common)
        })
        .filter(|&(_, _, common)| common >= 2)
        .max_by_key(|&(_, _, common)| common)
        .map(|(k, cols, _)| (k, Some(cols)))
}

/// Columns renamed since a table was written: (today's header, the
/// older one), so that rows carried over from an older table keep their
/// figures under the new name.
const RENAMED: &[(&str, &str)] = &[("3 RTL, C++ harness (shared library)", "3 RTL, C++ harness")];

/// The first cell of a Markdown table row (`| mmu | ...` gives `mmu`).
fn first_cell(line: &str) -> Option<&str> {
    line.strip_prefix('|')?.split('|').next().map(str::trim)
}

/// `new` (a generated section of one or more tables, one row per block or
/// per block variant), with the rows of `old`'s tables of the same header
/// for the blocks `new` does not measure, so that writing the figures of
/// some blocks keeps the others'. Rows are ordered as the registry lists
/// the blocks (an unknown name last).
pub fn keep_other_rows(old: &str, new: &str) -> String {
    let order = testbenches::registry::names();
    let rank = |l: &str| {
        first_cell(l)
            .and_then(|b| order.iter().position(|n| *n == b))
            .unwrap_or(usize::MAX)
    };
    let old_lines: Vec<&str> = old.lines().collect();
    let lines: Vec<&str> = new.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if !is_head(&lines, k) {
            out.push(lines[k].to_string());
            k += 1;
            continue;
        }
        let (head, rule) = (lines[k], lines[k + 1]);
        let mut body: Vec<String> = Vec::new();
        let mut j = k + 2;
        while j < lines.len() && lines[j].starts_with('|') {
            body.push(lines[j].to_string());
            j += 1;
        }
        let measured: Vec<String> = body
            .iter()
            .filter_map(|l| first_cell(l))
            .map(String::from)
            .collect();
        if let Some((h, cols)) = old_table(&old_lines, &lines, head) {
            body.extend(
                old_lines[h + 2..]
                    .iter()
                    .take_while(|l| l.starts_with('|'))
                    .filter(|l| first_cell(l).is_some_and(|b| !measured.iter().any(|m| m == b)))
                    .map(|l| match &cols {
                        None => l.to_string(),
                        Some(cols) => {
                            let cells = cells(l);
                            let row: Vec<&str> = cols
                                .iter()
                                .map(|c| c.and_then(|c| cells.get(c).copied()).unwrap_or("n/a"))
                                .collect();
                            format!("| {} |", row.join(" | "))
                        }
                    }),
            );
        }
        body.sort_by_key(|l| rank(l));
        out.push(head.to_string());
        out.push(rule.to_string());
        out.extend(body);
        k = j;
    }
    // Tables of `old` of a kind `new` does not have (another first column:
    // the build times, which only a whole `make bench` measures) are kept
    // too, each with the paragraph just above and just below it. A table of
    // the same kind under another header (a column added) is not kept apart:
    // its rows went into the new table above, column by column.
    let new_kinds: Vec<Option<&str>> = (0..lines.len())
        .filter(|&k| is_head(&lines, k))
        .map(|k| first_cell(lines[k]))
        .collect();
    let mut k = 0;
    while k < old_lines.len() {
        if !is_head(&old_lines, k) || new_kinds.contains(&first_cell(old_lines[k])) {
            k += 1;
            continue;
        }
        let mut p = k;
        let prose = |l: &str| !l.trim().is_empty() && !l.starts_with('|');
        if p >= 2 && old_lines[p - 1].trim().is_empty() && prose(old_lines[p - 2]) {
            p -= 1;
        }
        while p > 0 && !old_lines[p - 1].trim().is_empty() && !old_lines[p - 1].starts_with('|') {
            p -= 1;
        }
        let mut j = k + 2;
        while j < old_lines.len() && old_lines[j].starts_with('|') {
            j += 1;
        }
        // A one-paragraph trailer (not the title of a table after it).
        if j + 1 < old_lines.len()
            && old_lines[j].trim().is_empty()
            && prose(old_lines[j + 1])
            && !(j + 3 < old_lines.len()
                && old_lines[j + 2].trim().is_empty()
                && is_head(&old_lines, j + 3))
        {
            j += 2;
        }
        while out.last().is_some_and(|l| l.trim().is_empty()) {
            out.pop();
        }
        out.push(String::new());
        out.extend(old_lines[p..j].iter().map(|l| l.to_string()));
        k = j;
    }
    let mut s = out.join("\n");
    if new.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod drive_tests {
    use super::{time_rtl, Packed};
    use model::arbiter::Arbiter;
    use model::stim::Cycle;
    use model::Block;

    /// The RTL figures drive a model step as the lockstep does: `K` clocks
    /// with the step's inputs held (reset held for all `K`). The arbiter
    /// (a slot of 8 clocks) asserts `GntImpliesReq_A` when its inputs
    /// change every clock, as they did with one clock per step.
    #[test]
    fn a_step_of_k_clocks_is_driven_as_the_lockstep_drives_it() {
        let p = Arbiter::variants()
            .into_iter()
            .find(|p| Arbiter::alignment(p).clocks_per_step == 8)
            .expect("an arbiter variant of 8 clocks per slot");
        let stim = testbenches::generate::<Arbiter>(&p, 1, 300, None);
        let packed = Packed::of(&stim).unwrap();
        assert_eq!(packed.k, 8);
        assert_eq!(packed.clocks(), 8 * stim.cycles.len());
        let clocks: Vec<(bool, &[u32])> = packed.cycles().collect();
        for (s, c) in stim.cycles.iter().enumerate() {
            let step = &clocks[8 * s..8 * s + 8];
            assert!(
                step.iter().all(|x| x == &step[0]),
                "step {s}: inputs not held"
            );
            assert_eq!(step[0].0, matches!(c, Cycle::Reset), "step {s}: reset");
        }
        let (_, sum) = time_rtl(&stim, &packed, false).unwrap();
        assert_ne!(sum, 0);
        time_rtl(&stim, &packed, true).unwrap();
    }
}

#[cfg(test)]
mod keep_tests {
    use super::{keep_header, keep_other_rows, provenance};

    #[test]
    fn a_partial_run_adds_its_line_to_the_header_and_keeps_the_rest() {
        let m = "EPYC, 2 cores";
        let old = "\nGenerated by `make bench` on D0.  \nMachine: M.\nThe `bcn_cp`, `bcn_rp` rows: x.\nThe `stx_egress` rows: y.\n\nCycles.\n\n| block | v |\n|---|---:|\n| mmu | 1 |\n";
        let line = provenance(&["stx_egress".into()], "D1", m);
        let new = format!("{line}\n\nCycles.\n\n| block | v |\n|---|---:|\n| stx_egress | 9 |\n");
        let got = keep_header(old, &keep_other_rows(old, &new));
        assert_eq!(
            got,
            format!(
                "Generated by `make bench` on D0.  \nMachine: M.\nThe `bcn_cp`, `bcn_rp` rows: x.\n{line}\n\nCycles.\n\n| block | v |\n|---|---:|\n| mmu | 1 |\n| stx_egress | 9 |\n"
            )
        );
        // A line naming a block not measured again stays, even if another
        // of its blocks is.
        let line2 = provenance(&["bcn_cp".into()], "D2", m);
        let got2 = keep_header(&got, &format!("{line2}\n\nCycles.\n"));
        assert!(got2.contains("The `bcn_cp`, `bcn_rp` rows: x.\n"), "{got2}");
        assert!(got2.contains(&line) && got2.contains(&line2), "{got2}");
        // A whole run's header (no provenance line) replaces it all.
        let full = "Generated by `make bench` on D3.  \nMachine: M.\n\nCycles.\n";
        assert_eq!(keep_header(&got, full), full);
    }

    #[test]
    fn tables_a_partial_run_does_not_measure_are_kept() {
        let old = "x\n| block | v |\n|---|---:|\n| mmu | 1 |\n\nBuild times:\n\n| what | s |\n|---|---:|\n| cold | 300 |\n\nWall: 9 s.\n";
        let new = "y\n| block | v |\n|---|---:|\n| pfc | 9 |\n";
        assert_eq!(
            keep_other_rows(old, new),
            "y\n| block | v |\n|---|---:|\n| mmu | 1 |\n| pfc | 9 |\n\nBuild times:\n\n| what | s |\n|---|---:|\n| cold | 300 |\n\nWall: 9 s.\n"
        );
    }

    #[test]
    fn rows_of_blocks_not_measured_are_kept_in_registry_order() {
        let old = "x\n| block | v |\n|---|---:|\n| mmu | 1 |\n| pfc | 2 |\n| credit | 3 |\n";
        let new = "y\n| block | v |\n|---|---:|\n| pfc | 9 |\n";
        assert_eq!(
            keep_other_rows(old, new),
            "y\n| block | v |\n|---|---:|\n| mmu | 1 |\n| pfc | 9 |\n| credit | 3 |\n"
        );
        // Another header, no column in common but the block: nothing
        // carried over.
        let new2 = "| block | w |\n|---|---:|\n| pfc | 9 |\n";
        assert_eq!(keep_other_rows(old, new2), new2);
    }

    #[test]
    fn rows_of_an_older_header_are_carried_over_column_by_column() {
        // A column added (k) and one moved: the old rows keep their figures
        // under the new header, `n/a` where the old run did not measure.
        let old = "x\n| block | v | w |\n|---|---:|---:|\n| mmu | 1 | 2 |\n| pfc | 3 | 4 |\n";
        let new = "y\n| block | k | w | v |\n|---|---:|---:|---:|\n| pfc | 2 | 8 | 9 |\n";
        assert_eq!(
            keep_other_rows(old, new),
            "y\n| block | k | w | v |\n|---|---:|---:|---:|\n| mmu | n/a | 2 | 1 |\n| pfc | 2 | 8 | 9 |\n"
        );
    }

    #[test]
    fn a_renamed_column_keeps_its_figures() {
        let old = "x\n| block | v | 3 RTL, C++ harness |\n|---|---:|---:|\n| mmu | 1 | 2 |\n";
        let new = "y\n| block | k | v | 3 RTL, C++ harness (shared library) |\n\
                   |---|---:|---:|---:|\n| pfc | 7 | 8 | 9 |\n";
        assert!(keep_other_rows(old, new).contains("| mmu | n/a | 1 | 2 |"));
    }
}
