//! The regression stimuli still catch what they were saved for: each
//! `testbenches/regressions/<block>/*.stim` with a `.mutant` manifest beside
//! it (the one-line change of `rtl/<block>.v` it was saved from, by
//! `switchsim mutate --save-kills`) is replayed against the current RTL with
//! that change made, built on the fly as the mutation campaign builds its
//! mutants, and must fail. (That each also passes on the unchanged RTL is
//! every block's own `regression_files_replay` test.) The replay is the
//! library's `replay_on` (`switchsim replay --rtl`), so this test binary
//! compiles no runner of its own.

use cosim::design::UserMap;
use cosim::lockstep::UserRtl;
use std::path::{Path, PathBuf};

fn out_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("regressions")
}

/// A manifest: the line of `rtl/<block>.v` before and after the change.
struct Manifest {
    block: String,
    id: String,
    before: String,
    after: String,
}

fn manifest(path: &Path) -> Manifest {
    let text = std::fs::read_to_string(path).unwrap();
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} ")))
            .unwrap_or_else(|| panic!("{}: no `{k}` line", path.display()))
            .to_string()
    };
    Manifest {
        block: field("block"),
        id: field("id"),
        before: field("before"),
        after: field("after"),
    }
}

/// The RTL files of `B` with the manifest's change made to its own file,
/// in a scratch folder.
fn mutant_rtl(m: &Manifest, f: &Path) -> Vec<PathBuf> {
    let rtl = cosim::design::rtl_dir();
    let files = cosim::toolchain::rtl_files(&rtl, &m.block).unwrap();
    let src = std::fs::read_to_string(&files[0]).unwrap();
    let hits: Vec<usize> = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == m.before.trim())
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "{}: the line of mutant {} is {} times in rtl/{}.v: `{}` (re-save the regression with \
         `switchsim mutate {} --save-kills testbenches/regressions`)",
        f.display(),
        m.id,
        hits.len(),
        m.block,
        m.before.trim(),
        m.block
    );
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    let indent: String = lines[hits[0]]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    lines[hits[0]] = format!("{indent}{}", m.after.trim());
    let dir = out_dir().join(format!("{}-{}", m.block, m.id.replace(':', "-")));
    std::fs::create_dir_all(&dir).unwrap();
    let top = dir.join(files[0].file_name().unwrap());
    std::fs::write(&top, lines.join("\n") + "\n").unwrap();
    std::iter::once(top)
        .chain(files[1..].iter().cloned())
        .collect()
}

use testbenches::Job;

/// One job per regression stimulus of `block` with a manifest.
fn jobs(block: &'static str) -> Vec<Job> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testbenches/regressions")
        .join(block);
    let mut stims: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "stim"))
        .collect();
    stims.sort();
    assert!(
        stims.iter().any(|s| s.with_extension("mutant").exists()),
        "{}: no regression stimulus names the mutant it catches (a `.mutant` beside it)",
        dir.display()
    );
    let mut v: Vec<Job> = Vec::new();
    for s in stims {
        let mf = s.with_extension("mutant");
        if !mf.exists() {
            continue;
        }
        v.push(Box::new(move || {
            let m = manifest(&mf);
            assert_eq!(m.block, block, "{}", mf.display());
            let user = UserRtl {
                files: mutant_rtl(&m, &mf),
                top: None,
                map: UserMap::default(),
                quick: true,
            };
            match switchsim::cmd::replay_on(&s, &out_dir(), false, Some(&user)) {
                Ok(1) => Ok(()),
                Ok(_) => Err(format!(
                    "{} no longer catches mutant {} (`{}`)",
                    s.display(),
                    m.id,
                    m.after.trim()
                )),
                Err(e) => Err(format!("{}: {e:#}", s.display())),
            }
        }));
    }
    v
}

#[test]
fn every_regression_stimulus_catches_its_mutant() {
    let names = testbenches::registry::names();
    let all: Vec<Job> = names.iter().flat_map(|&b| jobs(b)).collect();
    assert!(all.len() >= names.len());
    // Two at a time: each builds its mutant (one compiler process).
    let failures = testbenches::two_at_a_time(all);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
