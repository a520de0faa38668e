//! `lint`, `bench`, `synth`, `mutate`: the RTL toolchain commands.

use super::*;
use anyhow::{bail, Context, Result};
use model::{Block, Params, PortGroup};
use std::path::{Path, PathBuf};
use testbenches::Bench;

/// One `verilator --lint-only` run: the block and variant it names, and
/// its arguments.
pub struct LintJob {
    label: String,
    args: Vec<String>,
}

/// Queues the lint of every variant of `B`.
pub fn lint_block<B: Block>(rtl: &Path, jobs: &mut Vec<LintJob>) -> Result<u8> {
    let files = cosim::toolchain::rtl_files(rtl, B::NAME)
        .with_context(|| format!("cannot read {}", rtl.display()))?;
    for v in B::variants() {
        jobs.push(LintJob {
            label: format!("{} {}", B::NAME, v.label()),
            args: cosim::toolchain::verilator_args(
                cosim::toolchain::Purpose::Lint,
                B::NAME,
                &v.verilog(),
                &files,
                "",
                Path::new(""),
            ),
        });
    }
    Ok(0)
}

/// Runs `jobs` on every core (each Verilator process is single-threaded),
/// printing each verdict in the order of `jobs`; the number that failed.
fn lint_run(jobs: &[LintJob]) -> Result<usize> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let outputs = crate::sweep::par_map(jobs, cores, |_, j| {
        std::process::Command::new("verilator")
            .args(&j.args)
            .output()
            .context("cannot run verilator (install it with `make deps`)")
    })?;
    let mut failed = 0;
    for (j, o) in jobs.iter().zip(outputs) {
        if o.status.success() && o.stderr.is_empty() {
            println!("lint clean  {}", j.label);
        } else {
            failed += 1;
            println!("lint FAILED {}", j.label);
            print!("{}", String::from_utf8_lossy(&o.stderr));
        }
    }
    Ok(failed)
}

pub fn bench_block<B: Bench>(
    seconds: f64,
    repeat: usize,
    streamed_only: bool,
    rows: &mut Vec<crate::bench::Row>,
    rss: &mut Vec<(String, String, Option<u64>)>,
    streamed: &mut Vec<crate::streambench::StreamRow>,
) -> Result<u8> {
    let tmp = std::env::temp_dir().join(format!("switchsim-bench-{}", std::process::id()));
    for p in B::variants() {
        // Calibrate: cycles for about `seconds` of lockstep.
        let probe = crate::bench::measure::<B>(&p, 2000, 10, 1, &tmp)?;
        let cycles = ((probe.lockstep * seconds) as usize).clamp(5_000, 2_000_000);
        if streamed_only {
            let n = ((probe.lockstep * 5.0) as u64).clamp(20_000, 1_000_000);
            let exe = std::env::current_exe()?;
            streamed.push(crate::streambench::measure::<B>(&p, n, repeat, &exe, &tmp)?);
            continue;
        }
        let r = crate::bench::measure::<B>(
            &p,
            cycles,
            (cycles / 10).clamp(1000, 20_000),
            repeat,
            &tmp,
        )?;
        eprintln!(
            "{} {}: model {} steps/s, RTL {} C++ {} clocks/s, lockstep {} steps/s (ideal {} at {} \
             clocks/step), traced {} steps/s",
            r.block,
            r.variant,
            crate::bench::rate(r.model),
            crate::bench::rate(r.rtl),
            crate::bench::rate(r.cxx),
            crate::bench::rate(r.lockstep),
            crate::bench::rate(r.ideal()),
            r.clocks_per_step,
            crate::bench::rate(r.traced)
        );
        // Peak RSS of a co-simulation of this variant, in a fresh process.
        let o = std::process::Command::new(std::env::current_exe()?)
            .args(["run", B::NAME, "--variant", &p.label(), "--cycles", "20000"])
            .arg("--out")
            .arg(&tmp)
            .env("SWITCHSIM_PEAK_RSS", "1")
            .output()?;
        let kib = String::from_utf8_lossy(&o.stderr)
            .lines()
            .find_map(|l| l.strip_prefix("peak_rss_kib "))
            .and_then(|v| v.trim().parse().ok());
        rss.push((B::NAME.to_string(), p.label(), kib));
        // Streamed stimulus: 10^6 cycles, or about 5 s of lockstep where
        // that is fewer (the large arbiters).
        let n = ((r.lockstep * 5.0) as u64).clamp(20_000, 1_000_000);
        let exe = std::env::current_exe()?;
        let sr = crate::streambench::measure::<B>(&p, n, repeat.min(2), &exe, &tmp)?;
        eprintln!(
            "{} {} streamed: gen {} model {} e2e {} (loop {}) 2 threads {}",
            sr.block,
            sr.variant,
            crate::bench::rate(sr.gen),
            crate::bench::rate(sr.model),
            crate::bench::rate(sr.e2e1),
            crate::bench::rate(sr.loop1),
            crate::bench::rate(sr.loop2)
        );
        streamed.push(sr);
        rows.push(r);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(0)
}

/// The variant `make synth` synthesises: a block's default; a top level's
/// (an RTL file that instantiates other blocks, as `rtl_files` finds them)
/// smallest, by register bits, since a flattened top level at its default
/// size runs Yosys for far longer than a review baseline should take
/// (`stx_switch` at N = 8: over 15 minutes, against 420 s at N = 4).
fn synth_variant<B: Block>(files: &[PathBuf]) -> B::Params {
    let top_level = files.iter().skip(1).any(|f| {
        f.file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| !s.starts_with("prim_"))
    });
    let vs = B::variants();
    if !top_level {
        return vs[0].clone();
    }
    let bits = |p: &B::Params| -> usize {
        B::State::ports(p)
            .iter()
            .map(|d| d.shape.bits() as usize)
            .sum()
    };
    vs.iter()
        .min_by_key(|p| bits(p))
        .expect("a block has a variant")
        .clone()
}

/// The Yosys elaboration checks (`hierarchy`, `proc`, `check`, no latch)
/// of the variant `make synth` takes ([`synth_variant`]: a top level's
/// smallest, since `stx_switch` at N = 8 takes 55 s against a few at
/// N = 4, and its blocks are checked as themselves), or every variant with
/// `all`: `(block and variant, script)`, run by [`elab_run`].
pub fn elab_check<B: Block>(rtl: &Path, all: bool, out: &mut Vec<(String, String)>) -> Result<u8> {
    let files = cosim::golden::rtl_files(rtl, B::NAME)?;
    let reads: String = files
        .iter()
        .map(|f| format!("read_verilog -sv {}; ", f.display()))
        .collect();
    let variants = if all {
        B::variants()
    } else {
        vec![synth_variant::<B>(&files)]
    };
    for p in variants {
        let chparams: String = p
            .verilog()
            .iter()
            .map(|(k, v)| format!(" -chparam {k} {v}"))
            .collect();
        let script = format!(
            "{reads}hierarchy -check -top {b}{chparams}; proc; check -assert; \
             select -assert-none t:$dlatch t:$adlatch t:$dlatchsr",
            b = B::NAME
        );
        out.push((format!("{} {}", B::NAME, p.label()), script));
    }
    Ok(0)
}

/// Runs one check of [`elab_check`]: its report line, and whether it passed.
pub fn elab_run(what: &str, script: &str) -> Result<(bool, String)> {
    let o = std::process::Command::new("yosys")
        .args(["-q", "-p", script])
        .output()
        .context("cannot run yosys (install it with `make deps`: apt-get install -y yosys)")?;
    if o.status.success() {
        return Ok((true, format!("ok   {what}: no latch, no multiple driver")));
    }
    let log = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    // Yosys names the cells or drivers above its final ERROR line.
    let why: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| {
            l.contains("ERROR") || l.contains("latch") || l.contains("driver") || l.contains('$')
        })
        .take(6)
        .collect();
    Ok((false, format!("FAIL {what}: {}", why.join(" | "))))
}

/// The RTL files whose modules synthesis keeps as black boxes: the memory
/// primitives, which stand for SRAM macros or register files. Logic depth
/// is measured between flip-flops and their ports (their read is
/// registered), and their bits are counted apart from the flip-flops.
fn is_memory_primitive(f: &Path) -> bool {
    f.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.starts_with("prim_ram_"))
}

/// Bits held in memories, from a Yosys `dump` of the flattened design's
/// inferred memories (`$mem_v2`: SIZE x WIDTH) and memory primitives (black
/// boxes: D x W): `(inferred, in primitives)`.
fn memory_bits(dump: &str) -> Result<(u64, u64)> {
    let (mut inferred, mut boxed) = (0, 0);
    let cells = dump.split("\n  cell ").skip(1);
    for cell in cells {
        let head = cell.lines().next().unwrap_or_default().to_string();
        let param = |name: &str| -> Option<u64> {
            cell.lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("connect") && !l.starts_with("end"))
                .find_map(|l| {
                    let rest = l.strip_prefix("parameter ")?;
                    let rest = rest.strip_prefix("signed ").unwrap_or(rest);
                    let (n, v) = rest.split_once(' ')?;
                    (n == name).then(|| v.trim().parse().ok()).flatten()
                })
        };
        if head.starts_with("$mem_v2") {
            let (Some(size), Some(width)) = (param("\\SIZE"), param("\\WIDTH")) else {
                bail!("an inferred memory without SIZE and WIDTH: `{head}`");
            };
            inferred += size * width;
        } else {
            let (Some(d), Some(w)) = (param("\\D"), param("\\W")) else {
                bail!(
                    "memory primitive `{head}` does not set both W and D: give both \
                     parameters so that its bits can be counted"
                );
            };
            boxed += d * w;
        }
    }
    Ok((inferred, boxed))
}

/// Logic depth from a Yosys `ltp` report: the longest path's length, in
/// cells (two-input gates and muxes after `abc -g`).
fn ltp_depth(report: &str) -> Option<u64> {
    let at = report.find("(length=")? + "(length=".len();
    let len = &report[at..];
    len[..len.find(')')?].parse().ok()
}

/// The gates logic depth is counted in: two-input gates and 2:1 muxes, the
/// same for every block (about 40 of them fit one 1 GHz clock).
pub const DEPTH_GATES: &str = "AND,NAND,OR,NOR,XOR,XNOR,ANDNOT,ORNOT,MUX";

/// Runs the depth script in Yosys for at most `secs` seconds: whether it
/// finished (a failure is an error; the time limit is not). Yosys' errors
/// go to the file `err` (a pipe read only at the end could fill and stall
/// Yosys until the time limit).
fn depth_pass(script: &str, secs: u64, err: &Path) -> Result<bool> {
    use std::os::unix::process::CommandExt;
    // A process group of its own, so that ABC (which Yosys starts through a
    // shell) goes down with it.
    let mut child = std::process::Command::new("yosys")
        .args(["-q", "-p", script])
        .process_group(0)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(err).with_context(|| format!("creating {}", err.display()))?)
        .spawn()
        .context("cannot run yosys (install it with `make deps`: apt-get install -y yosys)")?;
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(st) = child.try_wait()? {
            if st.success() {
                return Ok(true);
            }
            let text = std::fs::read_to_string(err).unwrap_or_default();
            bail!("yosys failed in the depth pass ({st}): {}", text.trim());
        }
        if std::time::Instant::now() >= end {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Ok(false);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Synthesises `variant` of a block (default: the variant `make synth`
/// takes) and appends its table row: cells, flip-flops, muxes, memory bits,
/// logic depth between flip-flops, Yosys seconds.
pub fn synth_block<B: Block>(
    rtl: &Path,
    variant: Option<&str>,
    depth_timeout: u64,
    rows: &mut Vec<String>,
) -> Result<u8> {
    let files = cosim::golden::rtl_files(rtl, B::NAME)?;
    let p = &match variant {
        Some(_) => super::variant_of::<B>(variant)?,
        None => synth_variant::<B>(&files),
    };
    let tmp = |what: &str| {
        std::env::temp_dir().join(format!(
            "switchsim-synth-{}-{}-{what}.txt",
            B::NAME,
            std::process::id()
        ))
    };
    let (stat, mem, ltp, net) = (tmp("stat"), tmp("mem"), tmp("ltp"), tmp("net"));
    let chparams: String = p
        .verilog()
        .iter()
        .map(|(k, v)| format!(" -chparam {k} {v}"))
        .collect();
    // A memory primitive is a black box inside a block, itself as the top.
    let reads: String = files
        .iter()
        .map(|f| {
            let lib = if is_memory_primitive(f) && f != &files[0] {
                " -lib"
            } else {
                ""
            };
            format!("read_verilog -sv{lib} {}; ", f.display())
        })
        .collect();
    let script = format!(
        "{reads}hierarchy -check -top {b}{chparams}; proc; check -assert; \
         select -assert-none t:$dlatch t:$adlatch t:$dlatchsr; \
         design -push-copy; flatten; opt -fast; memory -nomap; \
         tee -q -o {mem} dump t:$mem_v2 t:*prim_ram_*; design -pop; \
         synth -flatten -top {b}; check -assert; select -assert-none t:$_DLATCH*; \
         tee -q -o {stat} stat; write_rtlil {net}",
        b = B::NAME,
        stat = stat.display(),
        mem = mem.display(),
        net = net.display(),
    );
    // The depth pass on the synthesised netlist, in a process of its own:
    // ABC's gate mapping can take far longer than synthesis itself (over an
    // hour on `bcn_rp`'s multipliers), so it runs under a time limit.
    let depth_script = format!(
        "read_rtlil {net}; abc -g {DEPTH_GATES}; tee -q -o {ltp} ltp -noff * t:*prim_ram_* %d",
        net = net.display(),
        ltp = ltp.display(),
    );
    let t0 = std::time::Instant::now();
    let o = std::process::Command::new("yosys")
        .args(["-q", "-p", &script])
        .output()
        .context("cannot run yosys (install it with `make deps`: apt-get install -y yosys)")?;
    let read = |f: &Path| {
        let t = std::fs::read_to_string(f);
        let _ = std::fs::remove_file(f);
        t
    };
    let (text, dump) = (read(&stat), read(&mem));
    if !o.status.success() {
        let _ = std::fs::remove_file(&net);
        bail!(
            "yosys failed on {} {}:\n{}{}",
            B::NAME,
            p.label(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let (text, dump) = (text?, dump?);
    let err = tmp("err");
    let finished = depth_pass(&depth_script, depth_timeout, &err);
    let _ = std::fs::remove_file(&net);
    let _ = std::fs::remove_file(&err);
    let path = read(&ltp);
    let count = |pat: &str| -> u64 {
        text.lines()
            .filter(|l| l.trim_start().starts_with(pat))
            .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
            .sum()
    };
    let cells = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Number of cells:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    // `$_DFF*` includes `$_DFFE*`, `$_SDFF*` includes `$_SDFFE*`.
    let flops = count("$_DFF") + count("$_SDFF") + count("$_ALDFF");
    let muxes = count("$_MUX_");
    let (inferred, boxed) = memory_bits(&dump)?;
    let depth = if finished? {
        ltp_depth(&path?)
            .ok_or_else(|| anyhow!("no longest path in Yosys' `ltp` report of {}", B::NAME))?
            .to_string()
    } else {
        format!("n/a (abc > {depth_timeout} s)")
    };
    // Inferred memories are mapped to flip-flops by `synth` (and counted
    // there too); a primitive's bits are not flip-flops.
    let mem_bits = match (inferred, boxed) {
        (0, 0) => "0".to_string(),
        (i, 0) => format!("{i} (in flip-flops)"),
        (0, b) => b.to_string(),
        (i, b) => format!("{b} + {i} (in flip-flops)"),
    };
    let row = format!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.0} |",
        B::NAME,
        p.label(),
        cells,
        flops,
        muxes,
        mem_bits,
        depth,
        t0.elapsed().as_secs_f64()
    );
    println!("{row}");
    rows.push(row);
    Ok(0)
}

/// The rows and survivor sections of this campaign (`md`), merged with
/// those of the blocks it did not run from the generated section of `path`,
/// so that `mutate <block> --write` updates one block's figures only.
pub fn merge_mutation_report(path: &Path, md: &(String, String)) -> (String, String) {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let row_of = |text: &str, b: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("| {b} |")))
            .map(|l| format!("{l}\n"))
    };
    let section_of = |text: &str, b: &str| {
        let head = format!("\n### {b}\n");
        let at = text.find(&head)?;
        let rest = &text[at + head.len()..];
        let end = [rest.find("\n### "), rest.find("\n<!--")]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(rest.len());
        Some(format!("{head}{}", rest[..end].trim_end_matches('\n')) + "\n")
    };
    let (mut rows, mut dets) = (String::new(), String::new());
    for b in testbenches::registry::names() {
        let (r, d) = match row_of(&md.0, b) {
            Some(r) => (Some(r), section_of(&md.1, b)),
            None => (row_of(&old, b), section_of(&old, b)),
        };
        rows.push_str(&r.unwrap_or_default());
        dets.push_str(&d.unwrap_or_default());
    }
    (rows, dets)
}

/// Mutants known to be equivalent (`docs/mutation-equivalent.txt` beside
/// the RTL folder `rtl`: `<block> <line>:<col>:<op> <reason>` per line).
pub fn known_equivalent(rtl: &Path) -> Vec<(String, String, String)> {
    let path = rtl.join("../docs/mutation-equivalent.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            Some((
                it.next()?.to_string(),
                it.next()?.to_string(),
                it.next().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// `switchsim mutate` on block `B`, with the RTL of folder `rtl`; the row and
/// the survivors' section are appended to `md`.
pub fn mutate_block<B: Bench>(o: &MutateOpts, rtl: &Path, md: &mut (String, String)) -> Result<u8>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    use crate::mutate::Fate;
    use std::fmt::Write as _;
    let (cases, jobs, limit, only, list) = (o.cases, o.jobs, o.limit, &o.only[..], o.list);
    let top = rtl.join(format!("{}.v", B::NAME));
    let src =
        std::fs::read_to_string(&top).with_context(|| format!("reading {}", top.display()))?;
    if list {
        for m in crate::mutate::mutants(&src) {
            println!("{} {:<16} {}", B::NAME, m.id, m.after.trim());
        }
        return Ok(0);
    }
    // A re-check (--only) gets its own scratch, so it can run beside a campaign.
    // Absolute: the compiler runs in other folders and includes by path.
    let scratch = std::path::absolute(&o.out)?
        .join("mutate")
        .join(if only.is_empty() {
            B::NAME.to_string()
        } else {
            format!("{}-only", B::NAME)
        });
    let c = crate::mutate::campaign::<B>(
        rtl,
        cases,
        jobs,
        limit,
        only,
        &scratch,
        |variant, n, total, m, f| {
            let what = match f {
                Fate::Killed(_) => "killed".to_string(),
                Fate::Survived => "SURVIVED".to_string(),
                Fate::Stillborn(_) => "stillborn".to_string(),
            };
            eprintln!("[{} {variant}] {n}/{total} {:<16} {what}", B::NAME, m.id);
        },
    )?;
    if let Some(dir) = &o.save_kills {
        save_kills::<B>(&c.results, cases, dir)?;
    }
    let equiv = known_equivalent(rtl);
    let is_equiv = |id: &str| {
        equiv
            .iter()
            .find(|(b, i, _)| b == B::NAME && i == id)
            .map(|(_, _, r)| r.clone())
    };
    let killed = c
        .results
        .iter()
        .filter(|(_, f)| matches!(f, Fate::Killed(_)))
        .count();
    let still = c
        .results
        .iter()
        .filter(|(_, f)| matches!(f, Fate::Stillborn(_)))
        .count();
    let survivors: Vec<&(crate::mutate::Mutant, Fate)> = c
        .results
        .iter()
        .filter(|(_, f)| *f == Fate::Survived)
        .collect();
    let eq = survivors
        .iter()
        .filter(|(m, _)| is_equiv(&m.id).is_some())
        .count();
    let valid = c.results.len() - still;
    let nonequiv = valid - eq;
    let rate = 100.0 * killed as f64 / nonequiv.max(1) as f64;
    let line = format!(
        "| {} | {} | {} | {} | {} | {} | {} | {:.1}% | {:.0} |",
        B::NAME,
        c.results.len(),
        still,
        valid,
        eq,
        killed,
        survivors.len() - eq,
        rate,
        c.secs
    );
    println!("{line}");
    writeln!(md.0, "{line}").unwrap();
    let mut detail = String::new();
    for (m, _) in &survivors {
        let why =
            is_equiv(&m.id).map_or("**not killed**".to_string(), |r| format!("equivalent: {r}"));
        writeln!(
            detail,
            "- `{}` line {} ({}): `{}` -> `{}` — {}",
            B::NAME,
            m.line,
            m.op,
            m.before.trim(),
            m.after.trim(),
            why
        )
        .unwrap();
    }
    if limit.is_none() && only.is_empty() {
        // An entry of the equivalence list must name a surviving mutant:
        // one that no longer exists (the RTL moved) or that was killed
        // (then it was not equivalent) is reported, not silently counted.
        for (_, id, _) in equiv.iter().filter(|(b, _, _)| b == B::NAME) {
            match c.results.iter().find(|(m, _)| &m.id == id) {
                None => writeln!(
                    detail,
                    "- `{}` {id}: **stale entry** in docs/mutation-equivalent.txt (no such mutant)",
                    B::NAME
                )
                .unwrap(),
                Some((_, Fate::Killed(_))) => writeln!(
                    detail,
                    "- `{}` {id}: **listed as equivalent but killed** (remove it from docs/mutation-equivalent.txt)",
                    B::NAME
                )
                .unwrap(),
                _ => {}
            }
        }
    }
    println!("{detail}");
    md.1.push_str(&format!(
        "\n### {}\n\n{}",
        B::NAME,
        if detail.is_empty() { "none\n" } else { &detail }
    ));
    Ok(u8::from(rate < 95.0))
}

pub fn blocks_of(name: &str) -> Result<Vec<&str>> {
    if name == "all" {
        Ok(testbenches::registry::names())
    } else if testbenches::registry::names().contains(&name) {
        Ok(vec![name])
    } else {
        bail!(
            "unknown block `{name}` (known: {}, all)",
            testbenches::registry::names().join(", ")
        )
    }
}

/// The options of `switchsim lint`.
#[derive(clap::Args, Debug)]
pub struct LintOpts {
    /// Blocks to lint (default: all).
    pub blocks: Vec<String>,
    /// The RTL directory (default: the `rtl/` of the project this is run in).
    #[arg(long)]
    pub rtl: Option<PathBuf>,
}

/// `switchsim lint`.
pub fn lint_all(o: LintOpts) -> Result<u8> {
    let rtl = cosim::golden::project_rtl(o.rtl.as_deref())?;
    let mut jobs = Vec::new();
    for b in names_or_all(o.blocks) {
        for_block(
            &b,
            &mut LintC {
                rtl: &rtl,
                jobs: &mut jobs,
            },
        )?;
    }
    Ok(u8::from(lint_run(&jobs)? > 0))
}

/// The options of `switchsim bench`.
#[derive(clap::Args, Debug)]
pub struct BenchOpts {
    /// Blocks to measure (default: all), every verilated variant of each.
    pub blocks: Vec<String>,
    /// Target wall time of one lockstep run, per variant (sets the cycle count).
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Rounds (every figure once per round); the best of each figure is kept.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Update the generated section of this Markdown file (e.g. BENCHMARKS.md).
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Only the streamed-stimulus figures (and their section of the file).
    #[arg(long)]
    pub streamed_only: bool,
}

/// `switchsim bench`.
pub fn bench_blocks(o: BenchOpts) -> Result<u8> {
    let BenchOpts {
        blocks,
        seconds,
        repeat,
        write,
        streamed_only,
    } = o;
    let names = names_or_all(blocks);
    let mut rows = Vec::new();
    let mut rss = Vec::new();
    let mut streamed = Vec::new();
    let mut fuzz_rows = Vec::new();
    for b in &names {
        for_block(
            b,
            &mut BenchC {
                seconds,
                repeat,
                streamed_only,
                rows: &mut rows,
                rss: &mut rss,
                streamed: &mut streamed,
            },
        )?;
        let tmp = std::env::temp_dir().join(format!("switchsim-fuzz-{}", std::process::id()));
        let exe = std::env::current_exe()?;
        // About 3 s of cases at one job (2000 cycles each): a short
        // campaign measures the per-case start-up, not the scaling.
        let rate = streamed
            .iter()
            .find(|r| r.block == b.as_str())
            .map_or(100_000.0, |r| r.e2e1);
        let cases = ((rate * 3.0 / 2000.0) as u64).clamp(100, 2000);
        let j1 = crate::streambench::fuzz_rate(&exe, b, cases, 1, &tmp)?;
        let j2 = crate::streambench::fuzz_rate(&exe, b, cases, 2, &tmp)?;
        eprintln!("{b} fuzz: jobs 1 {j1:.0}, jobs 2 {j2:.0} cycles/s");
        fuzz_rows.push((b.clone(), cases, j1, j2));
        let _ = std::fs::remove_dir_all(&tmp);
    }
    let partial = (names.len() < testbenches::registry::names().len()).then_some(&names[..]);
    let md = crate::bench::markdown(&rows, &rss, partial);
    let md2 = crate::streambench::markdown(&streamed, &fuzz_rows);
    if !streamed_only {
        println!("{md}");
    }
    print!("{md2}");
    if let Some(path) = write {
        if !streamed_only {
            crate::bench::update_file(&path, &md)?;
        }
        crate::bench::update_section(&path, "streamed", &md2)?;
        println!("updated {}", path.display());
    }
    Ok(0)
}

/// The options of `switchsim soak`.
#[derive(clap::Args, Debug)]
pub struct SoakOpts {
    /// Blocks (default: all).
    pub blocks: Vec<String>,
    /// Cycles per block.
    #[arg(long, default_value_t = 100_000_000)]
    pub cycles: u64,
    /// Update the soak section of this Markdown file (e.g. BENCHMARKS.md).
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// Fail a block whose peak resident memory exceeds this many MiB.
    #[arg(long)]
    pub max_rss_mib: Option<u64>,
}

/// `switchsim soak`.
pub fn soak_blocks(o: SoakOpts) -> Result<u8> {
    let SoakOpts {
        blocks,
        cycles,
        write,
        max_rss_mib,
    } = o;
    let names = names_or_all(blocks);
    let exe = std::env::current_exe()?;
    let tmp = PathBuf::from("out/soak");
    let mut runs = Vec::new();
    for b in &names {
        eprintln!("soak: {b}, {cycles} cycles ...");
        let mut r = crate::streambench::soak(&exe, b, cycles, &tmp)?;
        if let (Some(max), Some(k)) = (max_rss_mib, r.rss_kib) {
            if k > max * 1024 {
                r.passed = false;
                r.what = format!(
                    "{b}: peak RSS {:.1} MiB over the limit of {max} MiB",
                    k as f64 / 1024.0
                );
            }
        }
        if max_rss_mib.is_some() && r.rss_kib.is_none() {
            r.passed = false;
            r.what = format!("{b}: no peak RSS reported");
        }
        eprintln!(
            "  {} in {:.1} s, peak RSS {}",
            if r.passed { "PASS" } else { "FAIL" },
            r.secs,
            r.rss_kib
                .map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
        );
        if !r.passed {
            println!("{}", r.what);
        }
        runs.push(r);
    }
    let md = crate::streambench::soak_markdown(&runs);
    print!("{md}");
    if let Some(path) = write {
        crate::bench::update_section(&path, "soak", &md)?;
        println!("updated {}", path.display());
    }
    Ok(u8::from(runs.iter().any(|r| !r.passed)))
}

/// The options of `switchsim synth`.
#[derive(clap::Args, Debug)]
pub struct SynthOpts {
    /// Blocks (default: all).
    pub blocks: Vec<String>,
    /// Update the generated section of this Markdown file (e.g. docs/synth.md).
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// The RTL directory (default: the `rtl/` of the project this is run in).
    #[arg(long)]
    pub rtl: Option<PathBuf>,
    /// Only elaborate each block's default variant (a top level's smallest;
    /// Yosys `proc`, seconds, two at a time): fails (exit 1) on a latch or a
    /// multiple driver; no synthesis.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
    /// With `--check`: every variant (the large ones take Yosys minutes).
    #[arg(long, requires = "check")]
    pub all_variants: bool,
    /// Synthesise this structural variant (see `switchsim list`) of the one
    /// block named, instead of the default one.
    #[arg(long, conflicts_with = "check")]
    pub variant: Option<String>,
    /// Synthesise each block's sizes of the seeds (`Block::scale`: the
    /// 32-port MMU, the paper-size RECN port, ...) instead of its default;
    /// blocks without such a size are skipped. `make synth-scale`.
    #[arg(long, conflicts_with_all = ["check", "variant"])]
    pub scale: bool,
    /// Seconds the depth pass (ABC's gate mapping and `ltp`) may take per
    /// block; beyond it the row says so instead of a depth.
    #[arg(long, default_value_t = 900)]
    pub depth_timeout: u64,
}

const TABLE_HEAD: &str =
    "| block | variant | cells | flip-flops | muxes | memory bits | depth | yosys s |\n\
     |---|---|---:|---:|---:|---:|---:|---:|";

/// `switchsim synth`.
pub fn synth_blocks(o: SynthOpts) -> Result<u8> {
    let SynthOpts {
        blocks,
        write,
        rtl,
        check,
        all_variants,
        variant,
        scale,
        depth_timeout,
    } = o;
    if variant.is_some() && blocks.len() != 1 {
        bail!("--variant names a variant of one block: name exactly one block");
    }
    let rtl = cosim::golden::project_rtl(rtl.as_deref())?;
    let names = names_or_all(blocks);
    if check {
        let mut jobs = Vec::new();
        for b in &names {
            for_block(
                b,
                &mut ElabCheckC {
                    rtl: &rtl,
                    all: all_variants,
                    out: &mut jobs,
                },
            )?;
        }
        // Two Yosys processes at a time; the lines in the blocks' order.
        let done = crate::sweep::par_map(&jobs, 2, |_, (what, script)| elab_run(what, script))?;
        let mut failed = 0;
        for (ok, line) in done {
            println!("{line}");
            failed |= u8::from(!ok);
        }
        return Ok(failed);
    }
    // (block, variant label) in the table's order.
    let mut jobs: Vec<(String, Option<String>)> = Vec::new();
    for b in &names {
        if scale {
            let mut labels = Vec::new();
            for_block(b, &mut ScaleC(&mut labels))?;
            jobs.extend(labels.into_iter().map(|l| (b.clone(), Some(l))));
        } else {
            jobs.push((b.clone(), variant.clone()));
        }
    }
    if jobs.is_empty() {
        bail!("no block named has a size of the seeds to synthesise (`Block::scale`)");
    }
    println!("{TABLE_HEAD}");
    let mut rows = Vec::new();
    for (b, v) in &jobs {
        for_block(
            b,
            &mut SynthC {
                rtl: &rtl,
                variant: v.as_deref(),
                depth_timeout,
                rows: &mut rows,
            },
        )?;
    }
    if let (Some(path), true) = (&write, scale) {
        // Sizes not synthesised in this run keep their row (a run can take
        // hours: one block at a time fills the table).
        let old = std::fs::read_to_string(path).unwrap_or_default();
        let md = format!(
            "Generated by `make synth-scale` (`switchsim synth --scale`: Yosys generic \
             `synth -flatten` of each block at the sizes of the seeds, `Block::scale`). \
             Memory bits and depth as in the default table of [synth.md](synth.md).\n\n\
             {TABLE_HEAD}\n{}\n",
            merge_scale_rows(&old, &rows).join("\n")
        );
        crate::bench::update_file(path, &md)?;
        println!("updated {}", path.display());
    } else if let Some(path) = write {
        // Blocks not synthesised in this run keep their row of the
        // generated table (not a row of another table of the file).
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let old_rows = table_rows(&old);
        let merged: Vec<String> = testbenches::registry::names()
            .iter()
            .filter_map(|b| {
                let head = format!("| {b} |");
                rows.iter()
                    .find(|r| r.starts_with(&head))
                    .cloned()
                    .or_else(|| {
                        old_rows
                            .iter()
                            .find(|l| l.starts_with(&head))
                            .map(|l| l.to_string())
                    })
            })
            .collect();
        let md = format!(
            "Generated by `make synth` (Yosys generic `synth -flatten`, default variant of \
             each block, smallest of a top level; the run fails on a latch or a multiple \
             driver). Memory bits: words x width of the memory primitives (black boxes) \
             and of memories Yosys inferred (which `synth` maps to flip-flops). Depth: \
             the longest path between flip-flops, memory ports and the block's ports \
             after `abc -g {DEPTH_GATES}`, by `ltp -noff`.\n\n{TABLE_HEAD}\n{}\n",
            merged.join("\n")
        );
        crate::bench::update_file(&path, &md)?;
        println!("updated {}", path.display());
    }
    Ok(0)
}

/// The rows of the generated table in `text` (under [`TABLE_HEAD`] in the
/// generated section): a file's hand-written tables may have the same
/// header and rows that start alike.
fn table_rows(text: &str) -> Vec<&str> {
    let text = crate::bench::generated_part(text);
    let Some(at) = text.find(TABLE_HEAD) else {
        return Vec::new();
    };
    text[at + TABLE_HEAD.len()..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .collect()
}

/// The rows of a `synth --scale` table: `new` and the rows of `old` (a
/// table written before) whose block and variant `new` lacks, in the
/// registry's block order, a block's sizes in the order they were first
/// written.
fn merge_scale_rows(old: &str, new: &[String]) -> Vec<String> {
    let key = |r: &str| -> Option<(String, String)> {
        let mut f = r.split('|').map(str::trim).skip(1);
        Some((f.next()?.to_string(), f.next()?.to_string()))
    };
    let blocks = testbenches::registry::names();
    let mut rows: Vec<String> = table_rows(old)
        .into_iter()
        .filter(|l| key(l).is_some_and(|(b, _)| blocks.contains(&b.as_str())))
        .map(|l| {
            let k = key(l);
            new.iter()
                .find(|r| key(r) == k)
                .cloned()
                .unwrap_or_else(|| l.to_string())
        })
        .collect();
    for r in new {
        if !rows.contains(r) {
            rows.push(r.clone());
        }
    }
    let rank = |r: &String| {
        key(r)
            .and_then(|(b, _)| blocks.iter().position(|n| *n == b))
            .unwrap_or(usize::MAX)
    };
    rows.sort_by_key(rank);
    rows
}

#[cfg(test)]
mod scale_table_tests {
    use super::merge_scale_rows;

    #[test]
    fn a_scale_run_keeps_the_rows_of_sizes_it_did_not_synthesise() {
        let old = format!(
            "{0}\n| credit | e1 | a hand-written table's row |\n\n\
             <!-- generated:begin (by switchsim; edit outside these markers) -->\n\
             Generated by ...\n\n{0}\n| credit | e18 | 10 |\n| recn_port | d8 | 20 |\n\n\
             <!-- generated:end -->\nA note.\n",
            super::TABLE_HEAD
        );
        let new = vec![
            "| mmu | p32 | 5 |".to_string(),
            "| recn_port | d8 | 21 |".to_string(),
        ];
        assert_eq!(
            merge_scale_rows(&old, &new),
            [
                "| mmu | p32 | 5 |",
                "| credit | e18 | 10 |",
                "| recn_port | d8 | 21 |"
            ]
        );
    }
}

/// The labels of a block's sizes of the seeds ([`Block::scale`]).
struct ScaleC<'a>(&'a mut Vec<String>);
impl super::Command for ScaleC<'_> {
    fn call<B: Bench>(&mut self) -> Result<u8> {
        self.0.extend(B::scale().iter().map(|p| p.label()));
        Ok(0)
    }
}

/// Writes, for each killed mutant of `results`, the kill-set case that
/// killed it to `dir/<block>/mutant-<line>-<col>-<op>.stim`: a stimulus
/// known to catch a plausible bug, for `testbenches/regressions/`; and the
/// mutant itself beside it (`.mutant`).
fn save_kills<B: Bench>(
    results: &[(crate::mutate::Mutant, crate::mutate::Fate)],
    cases: usize,
    dir: &Path,
) -> Result<()>
where
    B::Params: 'static,
    B::Config: 'static,
    B::Inputs: 'static,
{
    let dir = dir.join(B::NAME);
    let mut sets = std::collections::HashMap::new();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for (m, f) in results {
        let crate::mutate::Fate::Killed(why) = f else {
            continue;
        };
        // `case C ...` on the default variant, `on variant L: case C ...`
        // on another.
        let (variant, rest) = match why.strip_prefix("on variant ") {
            Some(r) => r.split_once(": ").unwrap_or((r, "")),
            None => ("", why.as_str()),
        };
        let Some(p) = B::variants()
            .into_iter()
            .enumerate()
            .find(|(k, p)| p.label() == variant || (variant.is_empty() && *k == 0))
            .map(|(_, p)| p)
        else {
            continue;
        };
        let set = sets
            .entry(p.label())
            .or_insert_with(|| crate::mutate::kill_set_of::<B>(&p, cases));
        let case = rest
            .strip_prefix("case ")
            .and_then(|r| r.split_whitespace().next())
            .and_then(|c| c.parse::<usize>().ok());
        let Some(stim) = case.and_then(|c| set.get(c)) else {
            eprintln!("{} {}: killed by `{why}`, no case to save", B::NAME, m.id);
            continue;
        };
        let path = dir.join(format!("mutant-{}.stim", m.id.replace(':', "-")));
        std::fs::write(&path, stim.to_text())
            .with_context(|| format!("writing {}", path.display()))?;
        // The mutant beside it, so that the regression test can show that
        // the stimulus still catches it.
        let manifest = path.with_extension("mutant");
        std::fs::write(&manifest, crate::mutate::manifest(B::NAME, m))
            .with_context(|| format!("writing {}", manifest.display()))?;
        println!(
            "{} {}: killed by {why}; saved {}",
            B::NAME,
            m.id,
            path.display()
        );
    }
    Ok(())
}

/// The options of `switchsim mutate`.
#[derive(clap::Args, Debug)]
pub struct MutateOpts {
    /// Blocks (default: all).
    pub blocks: Vec<String>,
    /// Random cases in the kill set (the default test budget is 256).
    #[arg(long, default_value_t = 256)]
    pub cases: usize,
    /// Mutants evaluated in parallel.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Evaluate only the first N mutants of each block.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Evaluate only these mutants (ids as listed, comma separated), e.g.
    /// to re-check survivors after strengthening the tests; not with --write.
    #[arg(long, value_delimiter = ',', conflicts_with = "write")]
    pub only: Vec<String>,
    /// Only list the mutants.
    #[arg(long)]
    pub list: bool,
    /// Update the generated section of this Markdown file (e.g. docs/mutation.md).
    #[arg(long)]
    pub write: Option<PathBuf>,
    /// The RTL directory (default: the `rtl/` of the project this is run
    /// in); the equivalent mutants are read from `../docs/` beside it.
    #[arg(long)]
    pub rtl: Option<PathBuf>,
    /// Output folder: the mutants are built under `OUT/mutate/<block>/`.
    #[arg(long, default_value = "out")]
    pub out: PathBuf,
    /// Save the kill-set case that killed each mutant to
    /// `DIR/<block>/mutant-<id>.stim` (for `testbenches/regressions/`).
    #[arg(long, value_name = "DIR")]
    pub save_kills: Option<PathBuf>,
}

/// `switchsim mutate`.
pub fn mutate_blocks(o: MutateOpts) -> Result<u8> {
    let rtl = cosim::golden::project_rtl(o.rtl.as_deref())?;
    let names = names_or_all(o.blocks.clone());
    let mut md = (String::new(), String::new());
    let mut worst = 0;
    println!("| block | mutants | stillborn | valid | equivalent | killed | survived | kill rate | seconds |");
    for b in &names {
        worst = worst.max(for_block(
            b,
            &mut MutateC {
                o: &o,
                rtl: &rtl,
                md: &mut md,
            },
        )?);
    }
    if let (Some(path), false) = (&o.write, o.list) {
        let (rows, dets) = merge_mutation_report(path, &md);
        let out = format!(
            "Generated by `make mutate`: {} random cases of the default test budget plus the directed \
             scenarios per mutant, on each block's default variant; a survivor there again on every \
             other verilated variant.\n\n\
             | block | mutants | stillborn | valid | equivalent | killed | survived | kill rate | seconds |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|\n{rows}\n## Survivors\n{dets}\n",
            o.cases
        );
        crate::bench::update_file(path, &out)?;
        println!("updated {}", path.display());
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cut from Yosys 0.23's `dump` of a design with one inferred memory
    /// (8 x 16) and one memory primitive (20 x 16).
    const DUMP: &str = r#"

  attribute \src "top.v:4.14-4.15"
  cell $mem_v2 \m
    parameter \INIT 128'x
    parameter \WR_PORTS 1
    parameter \RD_INIT_VALUE 16'x
    parameter \ABITS 3
    parameter \SIZE 8
    parameter \OFFSET 0
    parameter \WIDTH 16
    parameter \MEMID "\\m"
    connect \RD_DATA \q
  end

  attribute \module_not_derived 1
  attribute \src "top.v:3.35-3.139"
  cell \prim_ram_1r1w \u_ram
    parameter signed \D 20
    parameter signed \W 16
    connect \clk_i \clk_i
  end
"#;

    #[test]
    fn memory_bits_are_counted_per_kind() {
        assert_eq!(memory_bits(DUMP).unwrap(), (8 * 16, 20 * 16));
        assert_eq!(memory_bits("\n").unwrap(), (0, 0));
    }

    #[test]
    fn a_primitive_without_its_size_is_refused() {
        let no_d = DUMP.replace("    parameter signed \\D 20\n", "");
        let e = memory_bits(&no_d).unwrap_err().to_string();
        assert!(e.contains("does not set both W and D"), "{e}");
    }

    #[test]
    fn depth_is_read_from_ltp() {
        let r = "\n10. Executing LTP pass (find longest path).\n\n\
                 Longest topological path in top (length=27):\n    0: \\a [0]\n";
        assert_eq!(ltp_depth(r), Some(27));
        assert_eq!(ltp_depth("no path"), None);
    }
}
