//! Builds a [`Design`] into a simulator the first time it is needed, at run
//! time, and caches it.
//!
//! A design is verilated, its ports are checked against the block's
//! declaration (both ways, one line per difference), a shim is generated
//! from the declaration and the port map, and the whole model is compiled
//! as one translation unit (over a precompiled header of the Verilator
//! runtime) into a shared library that the process opens with `dlopen`
//! (through `libloading`). The Verilator runtime is compiled once per
//! toolchain into a shared library of its own, opened first with
//! `RTLD_GLOBAL`, so that every design shares one runtime.
//!
//! The cache is a folder (`SWITCHSIM_CACHE`, else `vsim-cache` in the cargo
//! `target/` folder the program was built in, else `~/.cache/switchsim`);
//! each build is a sub-folder named after the design and a hash of
//! everything that goes into it: the sources' names and contents, the
//! Verilator flags and version, the shim, the harness and the compiler
//! flags. A file lock per build makes parallel processes (test binaries)
//! build a design once; a build is written under a temporary name and
//! renamed when complete, so an interrupted build leaves nothing that looks
//! finished. While a design builds, a progress line goes to stderr.

use crate::design::{Design, Origin};
use crate::shimgen::{self, HeaderPort, SignalShape};
use crate::toolchain;
use anyhow::{anyhow, bail, Context, Result};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The harness's C++ sources, built into the binary.
pub const CSRC: [(&str, &str); 3] = [
    ("vsim.h", include_str!("../csrc/vsim.h")),
    ("vsim_rt.h", include_str!("../csrc/vsim_rt.h")),
    ("vsim_rt.cpp", include_str!("../csrc/vsim_rt.cpp")),
];

/// Bumped when the layout of a build changes.
const FORMAT: &str = "vsim-build-1";

/// The cache folder.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("SWITCHSIM_CACHE") {
        return PathBuf::from(d);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(t) = exe
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "target"))
        {
            return t.join("vsim-cache");
        }
    }
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    home.join("switchsim")
}

/// How the C++ is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// Position-independent, `-O2`: a shared library the process opens.
    Shared,
    /// An executable at `-O2` (the benchmarks' static harness).
    Static,
    /// An executable at `-O1` (a mutant: built once, run once).
    Quick,
}

impl Flavor {
    fn opt(self) -> &'static str {
        match self {
            Flavor::Quick => "-O1",
            _ => "-O2",
        }
    }
    fn pic(self) -> bool {
        self == Flavor::Shared
    }
    fn cxx_flags(self, root: &Path, csrc: &Path) -> Vec<String> {
        let mut f = toolchain::cxx_flags(root, csrc, self.opt());
        if self.pic() {
            f.extend(["-fPIC".into(), "-fvisibility=hidden".into()]);
        }
        f
    }
}

/// The Verilator found, its root, and the hash of the toolchain.
struct Tools {
    version: String,
    root: PathBuf,
}

fn tools() -> Result<&'static Tools> {
    static T: OnceLock<Result<Tools, String>> = OnceLock::new();
    T.get_or_init(|| {
        let (version, root) = toolchain::verilator()?;
        Ok(Tools { version, root })
    })
    .as_ref()
    .map_err(|e| anyhow!("{e}"))
}

fn hex(d: impl AsRef<[u8]>) -> String {
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `cmd`; `Err` with its output when it fails, also appended to `log`.
fn run_logged(cmd: &mut Command, log: &Path, what: &str) -> Result<String> {
    let o = cmd
        .output()
        .with_context(|| format!("cannot run {what} (install it with `make deps`)"))?;
    let text = format!(
        "$ {:?}\n{}{}",
        cmd,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = f.write_all(text.as_bytes());
    }
    if !o.status.success() {
        bail!("{text}");
    }
    Ok(text)
}

/// Holds an exclusive lock on `<cache>/locks/<key>.lock` while alive.
struct Lock(#[allow(dead_code)] std::fs::File);

fn lock(cache: &Path, key: &str) -> Result<Lock> {
    let dir = cache.join("locks");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let p = dir.join(format!("{key}.lock"));
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&p)
        .with_context(|| format!("opening {}", p.display()))?;
    f.lock()
        .with_context(|| format!("locking {}", p.display()))?;
    Ok(Lock(f))
}

/// Builds into `<cache>/<name>` unless it is complete there already: runs
/// `make(tmp)` in a fresh temporary folder under the lock, then renames it.
/// Returns the folder and whether it was built now.
fn cached(name: &str, make: impl FnOnce(&Path) -> Result<()>) -> Result<(PathBuf, bool)> {
    let cache = cache_root();
    let dir = cache.join(name);
    let done = |d: &Path| d.join("ok").exists();
    if done(&dir) {
        return Ok((dir, false));
    }
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let _l = lock(&cache, name)?;
    if done(&dir) {
        return Ok((dir, false));
    }
    let tmp = cache.join(format!("{name}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    if let Err(e) = make(&tmp) {
        // Keep a failed build (its log) where the error message says.
        let failed = cache.join(format!("{name}.failed"));
        let _ = std::fs::remove_dir_all(&failed);
        let _ = std::fs::rename(&tmp, &failed);
        let text =
            format!("{e:#}").replace(&tmp.display().to_string(), &failed.display().to_string());
        return Err(anyhow!(text));
    }
    std::fs::write(tmp.join("ok"), b"")?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&tmp, &dir)
        .with_context(|| format!("moving {} to {}", tmp.display(), dir.display()))?;
    Ok((dir, true))
}

/// The runtime of one flavour: Verilator's runtime and the harness's,
/// compiled once (a shared library for [`Flavor::Shared`], an archive
/// otherwise), the harness sources, and the precompiled header.
struct Runtime {
    dir: PathBuf,
    flags: Vec<String>,
}

fn runtime(flavor: Flavor) -> Result<&'static Runtime> {
    static R: Mutex<Vec<(Flavor, &'static Runtime)>> = Mutex::new(Vec::new());
    let mut g = R.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = g.iter().find(|(f, _)| *f == flavor) {
        return Ok(r);
    }
    let t = tools()?;
    let mut h = Sha256::new();
    h.update(FORMAT);
    h.update(&t.version);
    h.update(format!("{flavor:?}"));
    for (n, c) in CSRC {
        h.update(n);
        h.update(c);
    }
    // The flags with a placeholder for the folder, which is the result.
    h.update(flavor.cxx_flags(&t.root, Path::new("@")).join(" "));
    let key = format!(
        "rt-{}-{}",
        format!("{flavor:?}").to_lowercase(),
        &hex(h.finalize())[..16]
    );
    let (dir, built) = cached(&key, |tmp| {
        progress(&format!("the Verilator runtime ({flavor:?})"));
        let t0 = Instant::now();
        let csrc = tmp.join("csrc");
        std::fs::create_dir_all(&csrc)?;
        for (n, c) in CSRC {
            std::fs::write(csrc.join(n), c)?;
        }
        let flags = flavor.cxx_flags(&t.root, &csrc);
        let log = tmp.join("build.log");
        let srcs = toolchain::runtime_sources(&t.root, &csrc);
        // The runtime's own symbols stay visible: the designs use them.
        let rt_flags: Vec<String> = flags
            .iter()
            .filter(|f| *f != "-fvisibility=hidden")
            .cloned()
            .collect();
        let objs: Vec<PathBuf> = srcs
            .iter()
            .map(|s| tmp.join(s.file_name().unwrap()).with_extension("o"))
            .collect();
        // The precompiled header of every design's translation unit,
        // compiled beside the runtime's sources.
        let pch = tmp.join("pch");
        std::fs::create_dir_all(&pch)?;
        std::fs::write(
            pch.join("vsim_pch.h"),
            "#include \"vsim_rt.h\"\n#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n#include \"vsim.h\"\n",
        )?;
        std::thread::scope(|sc| -> Result<()> {
            let header = sc.spawn(|| {
                run_logged(
                    Command::new("g++")
                        .args(&flags)
                        .args(["-x", "c++-header"])
                        .arg(pch.join("vsim_pch.h"))
                        .arg("-o")
                        .arg(pch.join("vsim_pch.h.gch")),
                    &log,
                    "g++",
                )
            });
            let jobs: Vec<_> = srcs
                .iter()
                .zip(&objs)
                .map(|(s, o)| {
                    let (flags, log, csrc) = (&rt_flags, &log, &csrc);
                    sc.spawn(move || {
                        run_logged(
                            Command::new("g++")
                                .args(flags)
                                .arg("-include")
                                .arg(csrc.join(toolchain::PRELUDE))
                                .arg("-c")
                                .arg(s)
                                .arg("-o")
                                .arg(o),
                            log,
                            "g++",
                        )
                    })
                })
                .collect();
            for j in jobs {
                j.join()
                    .map_err(|_| anyhow!("a compiler thread panicked"))??;
            }
            header
                .join()
                .map_err(|_| anyhow!("a compiler thread panicked"))??;
            Ok(())
        })?;
        if flavor.pic() {
            run_logged(
                Command::new("g++")
                    .arg("-shared")
                    .arg("-o")
                    .arg(tmp.join("libvsimrt.so"))
                    .args(&objs)
                    .arg("-lpthread"),
                &log,
                "g++",
            )?;
        } else {
            run_logged(
                Command::new("ar")
                    .arg("rcs")
                    .arg(tmp.join("libvsimrt.a"))
                    .args(&objs),
                &log,
                "ar",
            )?;
        }
        for o in &objs {
            let _ = std::fs::remove_file(o);
        }
        done(&format!("the Verilator runtime ({flavor:?})"), t0);
        Ok(())
    })?;
    let _ = built;
    let r: &'static Runtime = Box::leak(Box::new(Runtime {
        flags: flavor.cxx_flags(&t.root, &dir.join("csrc")),
        dir,
    }));
    if flavor.pic() {
        // Opened once, globally: every design's library resolves the
        // runtime's symbols here.
        let so = r.dir.join("libvsimrt.so");
        // SAFETY: loading the runtime runs no code of ours beyond static
        // constructors of Verilator's runtime.
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(&so),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL,
            )
        }
        .with_context(|| format!("opening {}", so.display()))?;
        // SAFETY: the symbol has this signature (csrc/vsim_rt.h).
        let f: libloading::os::unix::Symbol<unsafe extern "C" fn() -> *const c_char> =
            unsafe { lib.get(b"vsim_last_error\0") }
                .with_context(|| format!("{}: vsim_last_error", so.display()))?;
        LAST_ERROR.set(*f).ok();
        // SAFETY: as above (csrc/vsim_rt.h).
        let t: libloading::os::unix::Symbol<unsafe extern "C" fn() -> *const c_char> =
            unsafe { lib.get(b"vsim_trace_error\0") }
                .with_context(|| format!("{}: vsim_trace_error", so.display()))?;
        TRACE_ERROR.set(*t).ok();
        std::mem::forget(lib);
    }
    g.push((flavor, r));
    Ok(r)
}

static LAST_ERROR: OnceLock<unsafe extern "C" fn() -> *const c_char> = OnceLock::new();
static TRACE_ERROR: OnceLock<unsafe extern "C" fn() -> *const c_char> = OnceLock::new();

/// The first failed write of Verilator's waveform on this thread since the
/// last model was created (empty if none).
pub fn trace_error() -> String {
    match TRACE_ERROR.get() {
        // SAFETY: as in `last_error`.
        Some(f) => unsafe { std::ffi::CStr::from_ptr(f()) }
            .to_string_lossy()
            .into_owned(),
        None => String::new(),
    }
}

/// The message of the last error the RTL raised on this thread.
pub fn last_error() -> String {
    match LAST_ERROR.get() {
        // SAFETY: returns a NUL-terminated thread-local string that stays
        // valid until the next call into the runtime on this thread.
        Some(f) => unsafe { std::ffi::CStr::from_ptr(f()) }
            .to_string_lossy()
            .into_owned(),
        None => String::new(),
    }
}

fn progress(what: &str) {
    eprintln!(
        "  building {what} (first use; cache {})",
        cache_root().display()
    );
}

fn done(what: &str, t0: Instant) {
    eprintln!("  built {what} in {:.1} s", t0.elapsed().as_secs_f64());
}

/// Appends a build's times to `<cache>/builds.tsv` (name, Verilator
/// seconds, C++ seconds, total seconds), for `make bench`.
fn record(name: &str, verilate: f64, cxx: f64, total: f64) {
    let path = cache_root().join("builds.tsv");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{name}\t{verilate:.2}\t{cxx:.2}\t{total:.2}");
    }
}

/// What goes into a design's build, hashed: its cache key.
fn design_key(d: &Design, flavor: Flavor) -> Result<String> {
    let t = tools()?;
    let mut h = Sha256::new();
    h.update(FORMAT);
    h.update(&t.version);
    h.update(format!("{flavor:?}"));
    h.update(format!(
        "{:?}",
        (
            &d.top,
            &d.generics,
            &d.map,
            &d.no_inline,
            d.origin,
            d.quick,
            d.runs_long
        )
    ));
    h.update(format!("{:?}", (&d.inputs, &d.outputs, &d.state)));
    for f in &d.files {
        h.update(
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        h.update(std::fs::read(f).with_context(|| format!("reading {}", f.display()))?);
    }
    for (n, c) in CSRC {
        h.update(n);
        h.update(c);
    }
    h.update(verilator_args(d, "@", Path::new("@"), None).join(" "));
    h.update(flavor.cxx_flags(&t.root, Path::new("@")).join(" "));
    // The rule that picks a level from the generated code's size.
    h.update(format!("{:?} above {LARGE_BYTES}", Opt::O1));
    h.update(format!("__Slow at {:?} from {SLOW_UNIT_BYTES}", Opt::O0));
    Ok(format!("{}-{}", d.name(), &hex(h.finalize())[..16]))
}

fn verilator_args(d: &Design, prefix: &str, mdir: &Path, vlt: Option<&Path>) -> Vec<String> {
    let purpose = match d.origin {
        Origin::Mutant => toolchain::Purpose::Mutant,
        Origin::Ours | Origin::User => toolchain::Purpose::Cosim,
    };
    let generics: Vec<(&str, u64)> = d.generics.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let mut files = d.files.clone();
    if let Some(v) = vlt {
        files.insert(0, v.to_path_buf());
    }
    let mut a = toolchain::verilator_args(purpose, &d.top, &generics, &files, prefix, mdir);
    if d.origin == Origin::User {
        a.insert(0, "-Wno-fatal".into());
    }
    a
}

/// The first `%Error` line of Verilator's output, or its first lines.
fn verilator_error(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("%Error"))
        .map(|l| l.trim_start_matches("%Error: ").to_string())
        .unwrap_or_else(|| text.lines().take(3).collect::<Vec<_>>().join(" / "))
}

/// Compares the verilated top's ports with the design: every declared port
/// under its mapped name (direction and width), the clock, reset, ties and
/// strobe; and every RTL port accounted for. One line per difference.
pub fn check_ports(d: &Design, hdr: &[HeaderPort]) -> Vec<String> {
    let mut errors = Vec::new();
    let m = &d.map;
    let find = |n: &str| hdr.iter().find(|p| p.name == n);
    let mut want: Vec<(String, &str, bool, u32)> = Vec::new(); // rtl name, decl name, input, width
    want.push((m.clock.clone(), "clock", true, 1));
    want.push((m.reset.clone(), "reset", true, 1));
    for (dp, n) in d.inputs[1..].iter().zip(&m.inputs) {
        want.push((n.clone(), dp.name, true, dp.shape.bits()));
    }
    for (dp, n) in d.outputs.iter().zip(&m.outputs) {
        if let Some(n) = n {
            want.push((n.clone(), dp.name, false, dp.shape.bits()));
        }
    }
    for (n, v) in &m.ties {
        let w = find(n).map_or(64, |p| p.width);
        if w < 64 && *v >> w != 0 {
            errors.push(format!("tie `{n}` = {v}: does not fit its {w} bits"));
        }
        want.push((n.clone(), "tie", true, w));
    }
    if let Some(s) = &m.strobe {
        want.push((s.clone(), "strobe", false, 1));
    }
    for n in &m.ignore {
        match find(n) {
            Some(p) if !p.input => want.push((n.clone(), "ignored", false, p.width)),
            Some(_) => errors.push(format!("ignore `{n}`: an input cannot be ignored (tie it)")),
            None => errors.push(format!("ignore `{n}`: the RTL has no output `{n}`")),
        }
    }
    let dir = |i: bool| if i { "input" } else { "output" };
    let named = |rtl: &str, decl: &str| {
        if rtl == decl {
            format!("`{rtl}`")
        } else {
            format!("`{rtl}` ({decl})")
        }
    };
    for (rtl, decl, input, width) in &want {
        match find(rtl) {
            None => errors.push(format!(
                "missing: the RTL has no {} {} of {width} bit{}",
                dir(*input),
                named(rtl, decl),
                if *width == 1 { "" } else { "s" }
            )),
            Some(p) => {
                if p.input != *input {
                    errors.push(format!(
                        "direction: {} is an {} in the declaration but an {} in the RTL",
                        named(rtl, decl),
                        dir(*input),
                        dir(p.input)
                    ));
                }
                if p.width != *width {
                    errors.push(format!(
                        "width: {} is {width} bits in the declaration but {} bits in the RTL",
                        named(rtl, decl),
                        p.width
                    ));
                }
            }
        }
    }
    for p in hdr {
        if !want.iter().any(|(n, ..)| *n == p.name) {
            errors.push(format!(
                "extra: the RTL's {} `{}` ({} bit{}) is not in the declaration{}",
                dir(p.input),
                p.name,
                p.width,
                if p.width == 1 { "" } else { "s" },
                if p.input {
                    " (tie it in the map's [tie])"
                } else {
                    " (list it in the map's `ignore`)"
                }
            ));
        }
    }
    errors
}

/// The C++ Verilator wrote for a design: its translation units and how
/// much code they hold.
struct Generated {
    units: Vec<PathBuf>,
    /// The `__Slow` files' unit, compiled at `-O0`, when they are apart.
    slow: Option<PathBuf>,
    bytes: u64,
}

impl Generated {
    /// How the units of `d` are optimised: `-O0` for a mutant; `-O1` above
    /// [`LARGE_BYTES`] and for a variant that does not run long
    /// ([`Design::runs_long`]); else the runtime's `-O2`.
    ///
    /// The variants other than a block's default, at `-O1` instead of
    /// `-O2`, measured on 2026-11-27 (2 cores, nothing else running, one
    /// unit compiled alone): `recn_port` d16s16c1024 34.6 -> 18.1 s,
    /// `stx_ingress` n16 31.8 -> 16.5 s. The tests run them on short
    /// stimuli; the default variants keep `-O2`.
    fn opt(&self, d: &Design) -> Opt {
        if d.quick {
            Opt::O0
        } else if self.bytes > LARGE_BYTES || !d.runs_long {
            Opt::O1
        } else {
            Opt::Runtime
        }
    }
}

/// Verilates `d` in `dir/v` with prefix `prefix`, checks its ports and
/// state paths, and writes the shim and the translation units.
fn verilate(d: &Design, prefix: &str, dir: &Path) -> Result<Generated> {
    let log = dir.join("build.log");
    let mdir = dir.join("v");
    let vlt = shimgen::control_file(d)
        .map(|text| -> Result<PathBuf> {
            let p = dir.join("design.vlt");
            std::fs::write(&p, text)?;
            Ok(p)
        })
        .transpose()?;
    let args = verilator_args(d, prefix, &mdir, vlt.as_deref());
    if let Err(e) = run_logged(Command::new("verilator").args(&args), &log, "verilator") {
        bail!(
            "verilator rejected {} (top `{}`): {}\n  (full log: {})",
            d.files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            d.top,
            verilator_error(&e.to_string()),
            log.display()
        );
    }
    let top_h = std::fs::read_to_string(mdir.join(format!("{prefix}.h")))?;
    let errors = check_ports(d, &shimgen::header_ports(&top_h));
    if !errors.is_empty() {
        bail!(
            "{} (top `{}`, {} {}) and the port declaration of `{}` disagree:\n  {}",
            d.files[0].display(),
            d.top,
            d.block,
            d.label,
            d.block,
            errors.join("\n  ")
        );
    }
    let mut state = Vec::new();
    if !d.map.state.is_empty() {
        let root_h = std::fs::read_to_string(mdir.join(format!("{prefix}___024root.h")))?;
        let mut errors = Vec::new();
        for sp in &d.map.state {
            let member = shimgen::mangle(&d.top, &sp.path);
            let Some(field) = d.state.iter().find(|f| f.name == sp.field) else {
                errors.push(format!("state `{}`: not a register of the model", sp.field));
                continue;
            };
            match shimgen::signal_shape(&root_h, &member) {
                None => errors.push(format!(
                    "state `{}`: no signal `{}` in the RTL (a path below the top module, e.g. \
                     `u_core.cnt_q`)",
                    sp.field, sp.path
                )),
                Some(Err(why)) => {
                    errors.push(format!("state `{}` at `{}`: {why}", sp.field, sp.path))
                }
                Some(Ok(shape)) => {
                    let fs = field.shape;
                    let ok = match shape {
                        SignalShape::Packed(w) => w == fs.bits(),
                        SignalShape::Unpacked(w, n) => w == fs.width && n == fs.count,
                    };
                    if !ok {
                        errors.push(format!(
                            "state `{}` at `{}`: the model's register is {} x {} bits, the RTL \
                             signal {}",
                            sp.field,
                            sp.path,
                            fs.count,
                            fs.width,
                            match shape {
                                SignalShape::Packed(w) => format!("{w} bits"),
                                SignalShape::Unpacked(w, n) => format!("{n} x {w} bits"),
                            }
                        ));
                    }
                    state.push((member, shape));
                }
            }
        }
        if !errors.is_empty() {
            bail!("{}: {}", d.files[0].display(), errors.join("\n  "));
        }
    }
    let shim = shimgen::shim(d, prefix, &state);
    std::fs::write(mdir.join(format!("{prefix}__shim.cpp")), &shim)?;
    let mut cpps: Vec<(String, u64)> = std::fs::read_dir(&mdir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_str()?.to_string();
            let len = e.metadata().ok()?.len();
            (n.ends_with(".cpp") && n.starts_with(prefix) && !n.ends_with("__shim.cpp"))
                .then_some((n, len))
        })
        .collect();
    cpps.sort();
    let total: u64 = cpps.iter().map(|c| c.1).sum();
    // Verilator's `__Slow` files (construction, the initial and settle
    // evaluation, the trace's declarations) run once per simulation: in a
    // unit of their own at `-O0` when there is enough of them to pay for
    // parsing the headers a second time (about 1.5 s).
    let (slow, cpps): (Vec<_>, Vec<_>) = cpps.into_iter().partition(|c| c.0.contains("__Slow"));
    let (slow, mut cpps): (Vec<String>, _) =
        if slow.iter().map(|c| c.1).sum::<u64>() >= SLOW_UNIT_BYTES {
            (slow.into_iter().map(|c| c.0).collect(), cpps)
        } else {
            (Vec::new(), [cpps, slow].concat())
        };
    // One translation unit parses the Verilator headers once (a small
    // design compiles about 3x faster than file by file); a large one is
    // cut into a few units of about UNIT_BYTES, compiled in parallel.
    let fast: u64 = cpps.iter().map(|c| c.1).sum();
    let n = (fast.div_ceil(UNIT_BYTES) as usize).clamp(1, MAX_UNITS);
    let mut units: Vec<(Vec<String>, u64)> = vec![(Vec::new(), 0); n];
    // Largest file first into the lightest unit.
    cpps.sort_by_key(|c| std::cmp::Reverse(c.1));
    for (name, len) in cpps {
        let u = units
            .iter_mut()
            .min_by_key(|u| u.1)
            .expect("at least one unit");
        u.0.push(name);
        u.1 += len;
    }
    // The shim in the first: it defines the entry points over the model's
    // classes.
    units[0].0.push(format!("{prefix}__shim.cpp"));
    let write = |name: String, files: &[String]| -> Result<PathBuf> {
        let unit = mdir.join(name);
        let text: String = files
            .iter()
            .map(|c| format!("#include \"{c}\"\n"))
            .collect();
        std::fs::write(&unit, text)?;
        Ok(unit)
    };
    let mut paths = Vec::new();
    for (k, (files, _)) in units.iter().enumerate() {
        paths.push(write(format!("{prefix}__unit{k}.cpp"), files)?);
    }
    let slow = (!slow.is_empty())
        .then(|| write(format!("{prefix}__slow.cpp"), &slow))
        .transpose()?;
    Ok(Generated {
        units: paths,
        slow,
        bytes: total,
    })
}

/// Generated C++ per translation unit when a design is cut into several.
const UNIT_BYTES: u64 = 6 << 20;
/// At most this many units per design.
const MAX_UNITS: usize = 4;
/// `__Slow` C++ from which a design compiles it apart, at `-O0`. Measured
/// on 2026-11-27 (2 cores, one compile at a time, user seconds): the
/// default `credit` one unit at `-O2` 9.7 s, its 0.9 MB of `__Slow` apart
/// 2.3 s at `-O0` beside 6.5 s for the rest; the default `stx_switch`
/// (5.6 of its 15.8 MB `__Slow`) 47.4 s at `-O1`, 10.9 + 28.9 s split.
const SLOW_UNIT_BYTES: u64 = 512 << 10;
/// Generated C++ above which a design is compiled at `-O1`. Above it: the
/// default `stx_switch` (N = 8) and the N = 32 and N = 64 arbiters, most of
/// the compile time of a cold `make test`. Measured side by side on
/// 2026-11-26 (2 cores, nothing else running; lockstep `--threads 1`, two
/// runs each):
///
/// | design | build `-O2` | build `-O1` | lockstep `-O1` / `-O2` |
/// |---|---:|---:|---:|
/// | `stx_switch` n8 | 95 s | 33 s | 0.85-0.92 |
/// | `arbiter` n64cw10k9 | 71 s | 20 s | 1.03-1.18 |
/// | `arbiter` n32cw10k2 | 56 s | 15 s | 0.67-0.96 |
///
/// (the `-O2` builds inside a cold `make test`, the `-O1` ones two at a
/// time). Earlier, on the N = 16 switch: `-O2` 133 s, `-O1` 65 s, 0.70 of
/// the speed (BENCHMARKS.md, "Cold set-up").
const LARGE_BYTES: u64 = 5 << 20;

/// The optimisation level of a design's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    /// The runtime's level (`-O2`), with its precompiled header.
    Runtime,
    /// `-O1`: a design whose compile time would dominate every build.
    O1,
    /// `-O0`: a design built to run once on a short stimulus (a mutant).
    O0,
}

/// Compiles the units of `code` into objects in their folder, in parallel
/// (the `__Slow` unit at `-O0`, the others at `opt`); returns the objects.
fn compile_all(rt: &Runtime, code: &Generated, log: &Path, opt: Opt) -> Result<Vec<PathBuf>> {
    let units: Vec<(&PathBuf, Opt)> = code
        .units
        .iter()
        .map(|u| (u, opt))
        .chain(code.slow.iter().map(|u| (u, Opt::O0)))
        .collect();
    let objs: Vec<PathBuf> = units.iter().map(|u| u.0.with_extension("o")).collect();
    std::thread::scope(|sc| -> Result<()> {
        let jobs: Vec<_> = units
            .iter()
            .zip(&objs)
            .map(|(&(u, opt), o)| sc.spawn(move || compile(rt, u, o, log, opt)))
            .collect();
        for j in jobs {
            j.join()
                .map_err(|_| anyhow!("a compiler thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(objs)
}

/// Compiles the unit with the runtime's flags and precompiled header.
/// A unit at another level than the runtime's does not fit the `-O2`
/// precompiled header: GCC then reads the header itself (a second or two,
/// against minutes of optimisation saved on a large design).
fn compile(rt: &Runtime, unit: &Path, obj: &Path, log: &Path, opt: Opt) -> Result<()> {
    let level = match opt {
        Opt::Runtime => None,
        Opt::O1 => Some("-O1"),
        Opt::O0 => Some("-O0"),
    };
    run_logged(
        Command::new("g++")
            .args(&rt.flags)
            .args(level)
            .arg(format!("-I{}", rt.dir.join("pch").display()))
            .args(["-include", "vsim_pch.h"])
            .args(level.is_none().then_some("-Winvalid-pch"))
            .arg(format!("-I{}", unit.parent().unwrap().display()))
            .arg("-c")
            .arg(unit)
            .arg("-o")
            .arg(obj),
        log,
        "g++",
    )
    .map(|_| ())
    .map_err(|e| {
        let first = e
            .to_string()
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("")
            .to_string();
        anyhow!(
            "g++ failed on {}: {first}\n  (full log: {})",
            unit.display(),
            log.display()
        )
    })
}

/// The entry points of one built design.
pub struct Library {
    /// The design's name (`Design::name`).
    pub name: String,
    /// The folder the build lives in.
    pub dir: PathBuf,
    /// Words of the inputs (`rst_ni`, configuration, inputs).
    pub in_words: usize,
    /// Words of the declared outputs.
    pub out_words: usize,
    /// Words read besides them (a strobe).
    pub aux_words: usize,
    /// Words of the state read through public signals.
    pub state_words: usize,
    pub(crate) new: unsafe extern "C" fn(u64, *const c_char) -> *mut c_void,
    pub(crate) free: unsafe extern "C" fn(*mut c_void),
    pub(crate) cycle: unsafe extern "C" fn(*mut c_void, *const u32, *mut u32) -> c_int,
    pub(crate) state: unsafe extern "C" fn(*mut c_void, *mut u32),
    pub(crate) flush: unsafe extern "C" fn(*mut c_void),
    pub(crate) bench:
        unsafe extern "C" fn(*const c_char, usize, usize, *mut f64, *mut u64, *mut u64) -> c_int,
}

/// What the C++ harness measured.
#[derive(Clone, Copy, Debug)]
pub struct HarnessRun {
    /// Seconds spent in the timed loop.
    pub secs: f64,
    /// Cycles run.
    pub cycles: u64,
    /// Checksum of every output word of every cycle.
    pub checksum: u64,
}

impl Library {
    /// Runs the minimal C++ harness inside this library on a file of packed
    /// input vectors (`rst_ni`, configuration, inputs per cycle).
    pub fn harness(&self, path: &Path) -> Result<HarnessRun> {
        let c = std::ffi::CString::new(path.to_string_lossy().as_bytes())?;
        let (mut secs, mut n, mut sum) = (0f64, 0u64, 0u64);
        // SAFETY: a NUL-terminated path and three valid out-pointers.
        let rc = unsafe {
            (self.bench)(
                c.as_ptr(),
                self.in_words,
                self.out_words + self.aux_words,
                &mut secs,
                &mut n,
                &mut sum,
            )
        };
        if rc != 0 {
            bail!("the C++ harness cannot read {}", path.display());
        }
        Ok(HarnessRun {
            secs,
            cycles: n,
            checksum: sum,
        })
    }
}

type Slot = Arc<OnceLock<Result<&'static Library, String>>>;

/// The design built and opened (built on first use; cached on disk and in
/// the process).
pub fn library(d: &Design) -> Result<&'static Library> {
    static OPEN: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let key = design_key(d, Flavor::Shared)?;
    let slot = {
        let mut m = OPEN
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        m.entry(key.clone()).or_default().clone()
    };
    slot.get_or_init(|| open(d, &key).map_err(|e| format!("{e:#}")))
        .as_ref()
        .map(|l| *l)
        .map_err(|e| anyhow!("{e}"))
}

fn open(d: &Design, key: &str) -> Result<&'static Library> {
    let rt = runtime(Flavor::Shared)?;
    let prefix = format!("V{}", d.name());
    let (dir, _) = cached(key, |tmp| {
        let what = format!("{} {} ({})", d.block, d.label, d.top);
        progress(&what);
        let t0 = Instant::now();
        let code = verilate(d, &prefix, tmp)?;
        let t_v = t0.elapsed().as_secs_f64();
        let log = tmp.join("build.log");
        let objs = compile_all(rt, &code, &log, code.opt(d))?;
        run_logged(
            Command::new("g++")
                .args(["-shared", "-o"])
                .arg(tmp.join("vsim.so"))
                .args(&objs),
            &log,
            "g++",
        )?;
        // The generated C++ and the objects are large and not needed again.
        let _ = std::fs::remove_dir_all(tmp.join("v"));
        let total = t0.elapsed().as_secs_f64();
        record(&d.name(), t_v, total - t_v, total);
        done(&what, t0);
        Ok(())
    })?;
    let so = dir.join("vsim.so");
    // SAFETY: loading runs only the static constructors of the verilated
    // model and its shim.
    let lib = unsafe { libloading::Library::new(&so) }
        .with_context(|| format!("opening {}", so.display()))?;
    macro_rules! sym {
        ($n:literal) => {
            // SAFETY: the entry points have these signatures (VSIM_DEFINE in
            // csrc/vsim.h).
            *unsafe { lib.get($n) }
                .with_context(|| format!("{}: no entry point {}", so.display(), stringify!($n)))?
        };
    }
    let words: unsafe extern "C" fn(*mut usize, *mut usize, *mut usize, *mut usize) =
        sym!(b"vsim_words\0");
    let (mut iw, mut ow, mut aw, mut sw) = (0, 0, 0, 0);
    // SAFETY: four valid out-pointers.
    unsafe { words(&mut iw, &mut ow, &mut aw, &mut sw) };
    if (iw, ow, aw) != (d.in_words(), d.out_words(), d.aux_words()) || sw != d.state_words() {
        bail!(
            "{} was built for another port layout ({iw}/{ow}/{aw}/{sw} words); remove it",
            so.display()
        );
    }
    let l = Library {
        name: d.name(),
        dir: dir.clone(),
        in_words: iw,
        out_words: ow,
        aux_words: aw,
        state_words: sw,
        new: sym!(b"vsim_new\0"),
        free: sym!(b"vsim_free\0"),
        cycle: sym!(b"vsim_cycle\0"),
        state: sym!(b"vsim_state\0"),
        flush: sym!(b"vsim_flush\0"),
        bench: sym!(b"vsim_bench\0"),
    };
    // Never unloaded: the functions above point into it.
    std::mem::forget(lib);
    Ok(Box::leak(Box::new(l)))
}

/// Builds `d` as an executable (not cached in the process; cached on disk
/// unless it is a mutant): `exe check VECTORS` runs the mutation checker
/// (`vsim::check`), `exe bench INPUTS` the C++ harness, printing
/// `seconds cycles checksum`. [`Flavor::Static`] for the benchmarks'
/// statically linked harness, [`Flavor::Quick`] for a mutant.
pub fn executable(d: &Design, flavor: Flavor, scratch: Option<&Path>) -> Result<PathBuf> {
    let rt = runtime(flavor)?;
    let prefix = format!("V{}", d.name());
    let build = |tmp: &Path| -> Result<()> {
        let code = verilate(d, &prefix, tmp)?;
        let log = tmp.join("build.log");
        std::fs::write(
            tmp.join("main.cpp"),
            format!(
                "#include <cstdio>\n#include <cstring>\n#include <cstdint>\n#include <cstddef>\n\
                 extern \"C\" int vsim_check(const char*);\n\
                 extern \"C\" int vsim_bench(const char*, size_t, size_t, double*, uint64_t*, uint64_t*);\n\
                 int main(int argc, char** argv) {{\n\
                 \x20   if (argc == 3 && !std::strcmp(argv[1], \"check\")) return vsim_check(argv[2]);\n\
                 \x20   if (argc == 3 && !std::strcmp(argv[1], \"bench\")) {{\n\
                 \x20       double s; uint64_t n, sum;\n\
                 \x20       int rc = vsim_bench(argv[2], {}, {}, &s, &n, &sum);\n\
                 \x20       std::printf(\"%.9f %llu %llu\\n\", s, (unsigned long long)n, (unsigned long long)sum);\n\
                 \x20       return rc;\n\
                 \x20   }}\n\
                 \x20   return 2;\n}}\n",
                d.in_words(),
                d.out_words() + d.aux_words()
            ),
        )?;
        let objs = compile_all(rt, &code, &log, code.opt(d))?;
        run_logged(
            Command::new("g++")
                .args(&rt.flags)
                .arg("-o")
                .arg(tmp.join("vsim"))
                .arg(tmp.join("main.cpp"))
                .args(&objs)
                .arg(rt.dir.join("libvsimrt.a"))
                .arg("-lpthread"),
            &log,
            "g++",
        )?;
        let _ = std::fs::remove_dir_all(tmp.join("v"));
        Ok(())
    };
    match scratch {
        Some(dir) => {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir_all(dir)?;
            build(dir)?;
            Ok(dir.join("vsim"))
        }
        None => {
            let key = design_key(d, flavor)?;
            let (dir, _) = cached(&format!("{key}-exe"), |tmp| {
                let what = format!("{} {} ({}, executable)", d.block, d.label, d.top);
                progress(&what);
                let t0 = Instant::now();
                build(tmp)?;
                done(&what, t0);
                Ok(())
            })?;
            Ok(dir.join("vsim"))
        }
    }
}

/// Builds every design of `designs` that is not cached yet, `jobs` at a
/// time (each build is one compiler process); the first error stops it.
///
/// No new build starts once `cancel` is set or a stop was asked for
/// ([`crate::lockstep::request_stop`]); the builds under way finish.
pub fn prebuild(designs: &[Design], jobs: usize, cancel: &AtomicBool) -> Result<()> {
    runtime(Flavor::Shared)?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|sc| {
        for _ in 0..jobs.max(1) {
            sc.spawn(|| loop {
                if failed.lock().unwrap_or_else(|e| e.into_inner()).is_some()
                    || cancel.load(Ordering::Relaxed)
                    || crate::lockstep::stop_requested()
                {
                    return;
                }
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(d) = designs.get(k) else { return };
                if let Err(e) = library(d) {
                    failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(e);
                }
            });
        }
    });
    match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Bytes under `dir`, recursively.
pub fn disk_usage(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => disk_usage(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verilator_errors_name_the_file_and_line() {
        let log = "$ verilator ...\n%Warning-WIDTH: x.v:3:1: ...\n%Error: my.v:12:5: syntax error, unexpected ')'\n%Error: Exiting\n";
        assert_eq!(
            verilator_error(log),
            "my.v:12:5: syntax error, unexpected ')'"
        );
    }
}
