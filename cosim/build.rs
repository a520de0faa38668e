//! Verilates every block variant, generates its C++ shim from the Rust port
//! declaration, checks the declaration against the RTL's ports, compiles
//! everything with `cc` and links it statically.
//!
//! For each `(block, variant)` of `Block::variants()`:
//!
//! 1. `verilator --cc --trace --assert --x-assign unique --x-initial unique`
//!    on `rtl/<block>.v` plus the shared primitives `rtl/prim_*.v`, with the
//!    variant's `-G` parameters and the prefix `V<block>_<label>`;
//! 2. the ports Verilator declares in `V<block>_<label>.h` are compared with
//!    the Rust declaration (`rst_ni` + config + inputs, outputs) in both
//!    directions, name and width: any difference fails the build;
//! 3. a shim (`put_inputs` / `get_outputs`, one line per port, in the Rust
//!    declaration's word layout) is generated and compiled with the verilated
//!    C++ into `libvsim_<block>_<label>.a`;
//! 4. `registry.rs` lists the variants and their `extern "C"` entry points.
//!
//! A variant whose inputs (RTL sources, Verilator version, flags, shim) have
//! not changed since the last build is reused from `OUT_DIR`, so touching the
//! model does not re-verilate anything.

#[path = "src/shimgen.rs"]
mod shimgen;
#[path = "src/toolchain.rs"]
#[allow(dead_code)]
mod toolchain;

use model::port::PortDesc;
use model::{Block, Params, PortGroup};
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Variant {
    block: &'static str,
    label: String,
    generics: Vec<(&'static str, u64)>,
    inputs: Vec<PortDesc>,
    outputs: Vec<PortDesc>,
}

impl Variant {
    fn name(&self) -> String {
        format!("{}_{}", self.block, self.label)
    }
}

fn variants_of<B: Block>() -> Vec<Variant> {
    B::variants()
        .into_iter()
        .map(|p| {
            let inputs = model::rtl_inputs::<B>(&p);
            Variant {
                block: B::NAME,
                label: p.label(),
                generics: p.verilog(),
                inputs,
                outputs: B::Outputs::ports(&p),
            }
        })
        .collect()
}

/// The variants of every block of the registry (`testbenches::registry`).
fn all_variants() -> Vec<Variant> {
    struct All(Vec<Variant>);
    impl testbenches::registry::Visit for All {
        fn visit<B: testbenches::Bench>(&mut self) {
            self.0.extend(variants_of::<B>());
        }
    }
    let mut v = All(Vec::new());
    testbenches::registry::each(&mut v);
    v.0
}

fn fail(msg: impl AsRef<str>) -> ! {
    eprintln!("error: {}", msg.as_ref());
    std::process::exit(1);
}

/// Ports declared in a Verilator header: `(name, is_input, width)`.
fn header_ports(h: &Path) -> Vec<(String, bool, u32)> {
    let text = std::fs::read_to_string(h).unwrap_or_else(|e| fail(format!("{}: {e}", h.display())));
    let mut v = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let is_in = l.starts_with("VL_IN");
        if !is_in && !l.starts_with("VL_OUT") {
            continue;
        }
        let (Some(a), Some(b)) = (l.find("(&"), l.rfind(')')) else {
            continue;
        };
        let parts: Vec<&str> = l[a + 2..b].split(',').map(str::trim).collect();
        if parts.len() < 3 {
            continue;
        }
        let msb: u32 = parts[1].parse().unwrap_or(0);
        let lsb: u32 = parts[2].parse().unwrap_or(0);
        v.push((parts[0].to_string(), is_in, msb - lsb + 1));
    }
    v
}

fn check_ports(v: &Variant, hdr: &[(String, bool, u32)], rtl_file: &Path) {
    let mut errors = Vec::new();
    let declared = v
        .inputs
        .iter()
        .map(|p| (p, true))
        .chain(v.outputs.iter().map(|p| (p, false)));
    for (p, is_in) in declared {
        match hdr.iter().find(|(n, _, _)| n == p.name) {
            None => errors.push(format!(
                "port `{}` is declared in Rust but not in the RTL",
                p.name
            )),
            Some((_, hi, w)) => {
                if *hi != is_in {
                    errors.push(format!(
                        "port `{}` is an {} in Rust but an {} in the RTL",
                        p.name,
                        if is_in { "input" } else { "output" },
                        if *hi { "input" } else { "output" }
                    ));
                }
                if *w != p.shape.bits() {
                    errors.push(format!(
                        "port `{}` is {} bits in Rust but {} bits in the RTL",
                        p.name,
                        p.shape.bits(),
                        w
                    ));
                }
            }
        }
    }
    for (n, _, _) in hdr {
        let known = n == "clk_i"
            || v.inputs.iter().any(|p| p.name == n)
            || v.outputs.iter().any(|p| p.name == n);
        if !known {
            errors.push(format!(
                "RTL port `{n}` is not declared in the Rust port groups"
            ));
        }
    }
    if !errors.is_empty() {
        fail(format!(
            "{} ({}) and the Rust declaration of `{}` disagree:\n  {}",
            rtl_file.display(),
            v.label,
            v.block,
            errors.join("\n  ")
        ));
    }
}

fn shim_source(v: &Variant, prefix: &str) -> String {
    shimgen::shim(v.block, &v.name(), prefix, &v.inputs, &v.outputs)
}

fn base_build(root: &Path, csrc: &Path) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .std(toolchain::CXX_STD)
        .opt_level(2)
        .debug(false)
        .warnings(false)
        .extra_warnings(false)
        .cargo_metadata(false)
        .includes(toolchain::cxx_includes(root, csrc));
    for (k, v) in toolchain::CXX_DEFINES {
        b.define(k, v);
    }
    b.flag("-include")
        .flag(csrc.join(toolchain::PRELUDE).to_str().unwrap());
    for f in toolchain::CXX_EXTRA {
        b.flag(f);
    }
    b
}

fn hash_of(parts: &[&[u8]]) -> String {
    let mut h = DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let rtl = manifest
        .join("../rtl")
        .canonicalize()
        .unwrap_or_else(|_| fail("the RTL directory `rtl/` next to `cosim/` is missing"));
    let csrc = manifest.join("csrc");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed={}", rtl.display());
    println!("cargo:rerun-if-changed={}", csrc.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-env-changed=VSIM_FORCE_REBUILD");

    let (version, root) = toolchain::verilator().unwrap_or_else(|e| fail(e));
    let read =
        |p: &Path| std::fs::read(p).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())));
    let vsim_h = read(&csrc.join("vsim.h"));
    let vsim_rt_h = read(&csrc.join("vsim_rt.h"));
    let vsim_rt = read(&csrc.join("vsim_rt.cpp"));

    // The Verilator runtime, once.
    // What the C++ is compiled with (a change rebuilds everything).
    let cxx_id = toolchain::cxx_flags(&root, &csrc, "-O2").join(" ");
    let rt_hash = hash_of(&[
        version.as_bytes(),
        &vsim_rt,
        &vsim_rt_h,
        cxx_id.as_bytes(),
        b"rt-v1",
    ]);
    let rt_stamp = out.join("vsimrt.stamp");
    if std::fs::read_to_string(&rt_stamp).ok().as_deref() != Some(&rt_hash)
        || !out.join("libvsimrt.a").exists()
    {
        base_build(&root, &csrc)
            .files(toolchain::runtime_sources(&root, &csrc))
            .compile("vsimrt");
        std::fs::write(&rt_stamp, &rt_hash).unwrap();
    }

    let variants = all_variants();
    let t_all = Instant::now();
    let mut times = String::from("variant\tstatus\tverilate_s\tcxx_s\n");
    let mut registry = String::new();
    let mut entries = String::new();
    writeln!(registry, "// Generated by cosim/build.rs.").unwrap();
    writeln!(registry, "unsafe extern \"C\" {{").unwrap();
    for v in &variants {
        let name = v.name();
        let prefix = format!("V{name}");
        let file = rtl.join(format!("{}.v", v.block));
        if !file.exists() {
            fail(format!("{} is missing", file.display()));
        }
        let sources = toolchain::rtl_files(&rtl, v.block)
            .unwrap_or_else(|e| fail(format!("{}: {e}", rtl.display())));
        let mdir = out.join(&prefix);
        let args = toolchain::verilator_args(
            toolchain::Purpose::Cosim,
            v.block,
            &v.generics,
            &sources,
            &prefix,
            &mdir,
        );
        // The shim depends only on the declaration, known before verilating.
        let shim = shim_source(v, &prefix);
        let mut parts: Vec<Vec<u8>> = vec![
            version.clone().into_bytes(),
            args.join(" ").into_bytes(),
            cxx_id.clone().into_bytes(),
            shim.clone().into_bytes(),
            vsim_h.clone(),
            vsim_rt_h.clone(),
        ];
        for s in &sources {
            parts.push(read(s));
        }
        let refs: Vec<&[u8]> = parts.iter().map(|p| p.as_slice()).collect();
        let hash = hash_of(&refs);
        let stamp = out.join(format!("{prefix}.stamp"));
        let lib = format!("vsim_{name}");
        let fresh = std::env::var_os("VSIM_FORCE_REBUILD").is_none()
            && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&hash)
            && out.join(format!("lib{lib}.a")).exists();
        let (mut t_verilate, mut t_cxx) = (0.0, 0.0);
        if !fresh {
            let t0 = Instant::now();
            let _ = std::fs::remove_dir_all(&mdir);
            let o = Command::new("verilator")
                .args(&args)
                .output()
                .unwrap_or_else(|e| fail(format!("cannot run verilator: {e}")));
            if !o.status.success() {
                fail(format!(
                    "verilator failed on {} ({}):\n{}{}",
                    file.display(),
                    v.label,
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
            t_verilate = t0.elapsed().as_secs_f64();
            let hdr = header_ports(&mdir.join(format!("{prefix}.h")));
            check_ports(v, &hdr, &file);
            let shim_path = mdir.join(format!("{prefix}__shim.cpp"));
            std::fs::write(&shim_path, &shim).unwrap();
            let mut b = base_build(&root, &csrc);
            b.include(&mdir).file(&shim_path);
            let mut cpps: Vec<PathBuf> = std::fs::read_dir(&mdir)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "cpp")
                        && p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(&prefix) && !n.ends_with("__shim.cpp"))
                })
                .collect();
            cpps.sort();
            b.files(&cpps);
            let t1 = Instant::now();
            b.compile(&lib);
            t_cxx = t1.elapsed().as_secs_f64();
            std::fs::write(&stamp, &hash).unwrap();
        }
        writeln!(
            times,
            "{name}\t{}\t{t_verilate:.2}\t{t_cxx:.2}",
            if fresh { "cached" } else { "built" }
        )
        .unwrap();
        println!("cargo:rustc-link-lib=static={lib}");

        for f in ["new", "free", "cycle", "flush", "bench"] {
            let sig = match f {
                "new" => "(seed: u64, vcd: *const c_char) -> *mut c_void",
                "free" | "flush" => "(h: *mut c_void)",
                "bench" => {
                    "(path: *const c_char, iw: usize, ow: usize, secs: *mut f64, n: *mut u64, \
                     sum: *mut u64) -> c_int"
                }
                _ => "(h: *mut c_void, i: *const u32, o: *mut u32) -> c_int",
            };
            writeln!(registry, "    fn vsim_{name}_{f}{sig};").unwrap();
        }
        let in_words: usize = v.inputs.iter().map(|p| p.shape.words()).sum();
        let out_words: usize = v.outputs.iter().map(|p| p.shape.words()).sum();
        writeln!(
            entries,
            "    Vtable {{ block: {:?}, label: {:?}, in_words: {in_words}, out_words: {out_words}, \
             new: vsim_{name}_new, free: vsim_{name}_free, cycle: vsim_{name}_cycle, \
             flush: vsim_{name}_flush, bench: vsim_{name}_bench }},",
            v.block, v.label
        )
        .unwrap();
    }
    writeln!(registry, "}}").unwrap();
    writeln!(registry, "/// Every verilated variant.").unwrap();
    writeln!(registry, "pub static VARIANTS: &[Vtable] = &[").unwrap();
    registry.push_str(&entries);
    writeln!(registry, "];").unwrap();
    std::fs::write(out.join("registry.rs"), registry).unwrap();
    // Build times of this run, for `make bench`: <target>/vsim-build.tsv.
    writeln!(times, "total\t-\t-\t{:.2}", t_all.elapsed().as_secs_f64()).unwrap();
    if let Some(target) = out.ancestors().nth(4) {
        let _ = std::fs::write(target.join("vsim-build.tsv"), &times);
    }
    std::fs::write(out.join("vsim-build.tsv"), &times).unwrap();

    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=vsimrt");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
}
