//! The CI workflow can fail: its fuzz step and its merge step, taken from
//! `.github/workflows/ci.yml` and run with the workflow's own shell options,
//! exit non-zero when the command at the head of their pipeline does (a
//! mismatch, a coverage hole), though `tee` at the tail succeeds.

use std::path::{Path, PathBuf};
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

fn workflow() -> Yaml {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.github/workflows/ci.yml");
    let text = std::fs::read_to_string(&path).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

/// The workflow's default shell, as a program and its arguments (`{0}`
/// being the script).
fn shell(w: &Yaml) -> Vec<String> {
    let s = w["defaults"]["run"]["shell"]
        .as_str()
        .expect("a default shell for every run step");
    s.split_whitespace().map(str::to_string).collect()
}

/// The `run:` text of the step of job `job` whose text contains `needle`,
/// with the expressions a runner would fill in.
fn step(w: &Yaml, job: &str, needle: &str) -> String {
    let steps = w["jobs"][job]["steps"]
        .as_vec()
        .unwrap_or_else(|| panic!("no job {job}"));
    let run = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("no step of {job} runs `{needle}`"));
    assert!(
        steps.iter().all(|s| s["shell"].is_badvalue()),
        "a step of {job} overrides the default shell"
    );
    run.replace("${{ matrix.shard }}", "0")
        .replace("${{ github.run_number }}", "7")
}

/// Runs `script` with `shell` in `dir`; its exit code.
fn run_in(dir: &Path, shell: &[String], script: &str) -> i32 {
    let file = dir.join("step.sh");
    std::fs::write(&file, script).unwrap();
    let args: Vec<String> = shell[1..]
        .iter()
        .map(|a| a.replace("{0}", file.to_str().unwrap()))
        .collect();
    Command::new(&shell[0])
        .args(&args)
        .current_dir(dir)
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../out/tests/ci")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("target/release")).unwrap();
    d
}

/// A `target/release/switchsim` that prints one report line and exits
/// with `code`.
fn stub(dir: &Path, code: i32) {
    let p = dir.join("target/release/switchsim");
    std::fs::write(
        &p,
        format!("#!/bin/sh\necho '{{\"block\": \"mmu\", \"passed\": false}}'\nexit {code}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn the_fuzz_step_fails_when_fuzz_does() {
    let w = workflow();
    let sh = shell(&w);
    let script = step(&w, "fuzz", "switchsim fuzz");
    assert!(script.contains("| tee"), "the step is a pipeline: {script}");
    let dir = scratch("fuzz");
    // The injected fault: fuzz finds a mismatch (exit 1).
    stub(&dir, 1);
    assert_ne!(run_in(&dir, &sh, &script), 0, "a mismatch passed the step");
    let report = std::fs::read_to_string(dir.join("fuzz-0.json")).unwrap();
    assert!(report.contains("\"passed\": false"), "tee kept the report");
    // The same step with fuzz passing passes (the test can tell).
    stub(&dir, 0);
    assert_eq!(run_in(&dir, &sh, &script), 0);
    // Under GitHub's default `bash -e {0}` it would have passed: this is
    // what the workflow's shell options are for.
    stub(&dir, 1);
    let plain = ["bash".to_string(), "-e".into(), "{0}".into()];
    assert_eq!(run_in(&dir, &plain, &script), 0);
}

#[test]
fn the_merge_step_fails_on_a_coverage_hole_or_a_missing_shard() {
    let w = workflow();
    let sh = shell(&w);
    let script = step(&w, "fuzz-merge", "fuzz-merge");
    assert!(script.contains("--require-coverage"), "{script}");
    let dir = scratch("merge");
    let exe = dir.join("target/release/switchsim");
    std::fs::copy(env!("CARGO_BIN_EXE_switchsim"), &exe).unwrap();
    let report = |shard: u32, hits: u32| {
        format!(
            "{{\"block\": \"mmu\", \"shard\": \"{shard}/2\", \"base_seed\": 7, \"cases\": 4, \
             \"cycles\": 8000, \"passed\": true, \"coverage\": {{\"a\": {hits}, \"b\": 1}}}}\n"
        )
    };
    // Bin `a` hit in shard 1 only: covered.
    std::fs::write(dir.join("fuzz-0.json"), report(0, 0)).unwrap();
    std::fs::write(dir.join("fuzz-1.json"), report(1, 3)).unwrap();
    assert_eq!(run_in(&dir, &sh, &script), 0);
    let merged = std::fs::read_to_string(dir.join("fuzz-merged.txt")).unwrap();
    assert!(merged.contains("PASS fuzz-merge"), "{merged}");
    // Hit by no shard: a hole, the step fails.
    std::fs::write(dir.join("fuzz-1.json"), report(1, 0)).unwrap();
    assert_ne!(run_in(&dir, &sh, &script), 0);
    // A shard whose report never came: the step fails.
    std::fs::remove_file(dir.join("fuzz-1.json")).unwrap();
    std::fs::write(dir.join("fuzz-0.json"), report(0, 5)).unwrap();
    assert_ne!(run_in(&dir, &sh, &script), 0);
}
