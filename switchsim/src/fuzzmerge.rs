//! `switchsim fuzz-merge`: the verdict of one fuzz campaign run as shards.
//!
//! Each shard (`switchsim fuzz all --shard I/N --json`) prints one JSON
//! report per block. A coverage bin hit in one shard only is a hole in the
//! others, so a shard's own `--require-coverage` says little: the campaign
//! is judged on the union. The merge checks that the files are shards of one
//! campaign (one base seed, one shard count, every shard once), adds up
//! cases, cycles and each bin's hits per block, and lists every failure with
//! its repro. It fails (exit 1) on a mismatch, on a missing shard, and with
//! `--require-coverage` on a bin no shard hit; on files that are not fuzz
//! reports it exits 2.

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One block's merged campaign.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockTotal {
    /// Cases over all shards.
    pub cases: u64,
    /// Cycles compared over all shards.
    pub cycles: u64,
    /// Bins in report order, with the hits summed over the shards.
    pub bins: Vec<(String, u64)>,
    /// Shards that reported this block.
    pub shards: Vec<u64>,
}

impl BlockTotal {
    /// The bins no shard hit.
    pub fn holes(&self) -> Vec<&str> {
        self.bins
            .iter()
            .filter(|(_, h)| *h == 0)
            .map(|(b, _)| b.as_str())
            .collect()
    }
}

/// A failure one shard found.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// Block.
    pub block: String,
    /// The shard.
    pub shard: u64,
    /// The first difference (`signal: expected ... actual ...`), or the RTL
    /// error.
    pub what: String,
    /// The step.
    pub cycle: i64,
    /// The repro file, if written.
    pub repro: Option<String>,
}

/// The merged campaign.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Merged {
    /// The campaign's base seed.
    pub base_seed: u64,
    /// Its shard count.
    pub shard_count: u64,
    /// The shards seen.
    pub shards: Vec<u64>,
    /// Per block, in the order first seen.
    pub blocks: Vec<(String, BlockTotal)>,
    /// Every failure.
    pub failures: Vec<Failure>,
}

impl Merged {
    /// The shards of `0..shard_count` no file reported.
    pub fn missing(&self) -> Vec<u64> {
        (0..self.shard_count)
            .filter(|s| !self.shards.contains(s))
            .collect()
    }
}

/// The reports (one JSON object per line) in `text`.
fn reports(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter(|v| v.get("block").is_some() && v.get("coverage").is_some())
        .collect()
}

/// Merges the reports of `files` (their texts, named for messages).
pub fn merge(files: &[(PathBuf, String)]) -> Result<Merged> {
    let mut m = Merged::default();
    let mut campaign: Option<(u64, u64)> = None;
    let mut seen: BTreeMap<u64, PathBuf> = BTreeMap::new();
    for (path, text) in files {
        let rs = reports(text);
        if rs.is_empty() {
            bail!(
                "{}: no fuzz report in it (expected the lines of `switchsim fuzz ... --json`)",
                path.display()
            );
        }
        let mut shard_of_file: Option<u64> = None;
        for r in rs {
            let block = r["block"].as_str().context("a report without a block")?;
            let (i, n) = r["shard"]
                .as_str()
                .and_then(|s| s.split_once('/'))
                .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
                .with_context(|| format!("{}: {block}: no `shard` I/N", path.display()))?;
            let seed = r["base_seed"]
                .as_u64()
                .with_context(|| format!("{}: {block}: no `base_seed`", path.display()))?;
            match campaign {
                None => campaign = Some((seed, n)),
                Some((s0, n0)) if (s0, n0) != (seed, n) => bail!(
                    "{}: shard {i}/{n} of seed {seed} is not of the campaign of the other \
                     files (seed {s0}, {n0} shards)",
                    path.display()
                ),
                _ => {}
            }
            match shard_of_file {
                None => {
                    if let Some(other) = seen.insert(i, path.clone()) {
                        bail!(
                            "shard {i}/{n} is in both {} and {}",
                            other.display(),
                            path.display()
                        );
                    }
                    shard_of_file = Some(i);
                }
                Some(j) if j != i => bail!(
                    "{}: reports of shards {j} and {i} in one file",
                    path.display()
                ),
                _ => {}
            }
            let cov = r["coverage"].as_object().with_context(|| {
                format!("{}: {block}: `coverage` is not an object", path.display())
            })?;
            let k = match m.blocks.iter().position(|(b, _)| b == block) {
                Some(k) => k,
                None => {
                    m.blocks.push((block.to_string(), BlockTotal::default()));
                    m.blocks.len() - 1
                }
            };
            let t = &mut m.blocks[k].1;
            t.cases += r["cases"].as_u64().unwrap_or(0);
            t.cycles += r["cycles"].as_u64().unwrap_or(0);
            t.shards.push(i);
            for (bin, hits) in cov {
                let h = hits.as_u64().unwrap_or(0);
                match t.bins.iter_mut().find(|(b, _)| b == bin) {
                    Some(e) => e.1 += h,
                    None => t.bins.push((bin.clone(), h)),
                }
            }
            if r["passed"] == Value::Bool(false) {
                let mm = &r["mismatch"];
                let d = &mm["diffs"][0];
                let what = match (d["signal"].as_str(), mm["rtl_error"].as_str()) {
                    (Some(sig), _) => format!(
                        "{sig}: expected {} actual {}",
                        d["expected"].as_str().unwrap_or("?"),
                        d["actual"].as_str().unwrap_or("?")
                    ),
                    (None, Some(e)) => format!("RTL error: {e}"),
                    _ => "a mismatch".into(),
                };
                m.failures.push(Failure {
                    block: block.to_string(),
                    shard: i,
                    what,
                    cycle: mm["cycle"].as_i64().unwrap_or(-1),
                    repro: mm["repro"].as_str().map(str::to_string),
                });
            }
        }
    }
    let (seed, n) = campaign.ok_or_else(|| anyhow!("no reports"))?;
    m.base_seed = seed;
    m.shard_count = n;
    m.shards = seen.keys().copied().collect();
    Ok(m)
}

/// The merged campaign as text; the verdict last.
pub fn report(m: &Merged, require_coverage: bool) -> (String, bool) {
    use std::fmt::Write as _;
    let mut s = String::new();
    writeln!(
        s,
        "fuzz campaign seed {}: {} of {} shards",
        m.base_seed,
        m.shards.len(),
        m.shard_count
    )
    .unwrap();
    writeln!(
        s,
        "{:<14} {:>6} {:>7} {:>11} {:>9}  holes",
        "block", "shards", "cases", "cycles", "bins"
    )
    .unwrap();
    let mut holes = 0;
    for (b, t) in &m.blocks {
        let h = t.holes();
        holes += h.len();
        writeln!(
            s,
            "{:<14} {:>6} {:>7} {:>11} {:>4}/{:<4}  {}",
            b,
            t.shards.len(),
            t.cases,
            t.cycles,
            t.bins.len() - h.len(),
            t.bins.len(),
            if h.is_empty() {
                "-".into()
            } else {
                h.join(", ")
            }
        )
        .unwrap();
    }
    for f in &m.failures {
        writeln!(
            s,
            "FAIL {} (shard {}): step {}: {}{}",
            f.block,
            f.shard,
            f.cycle,
            f.what,
            f.repro
                .as_deref()
                .map(|r| format!("\n  repro: {r}"))
                .unwrap_or_default()
        )
        .unwrap();
    }
    let missing = m.missing();
    if !missing.is_empty() {
        let v: Vec<String> = missing
            .iter()
            .map(|i| format!("{i}/{}", m.shard_count))
            .collect();
        writeln!(
            s,
            "FAIL missing shards: {} (their cases were not run)",
            v.join(", ")
        )
        .unwrap();
    }
    let cov_fail = require_coverage && holes > 0;
    if cov_fail {
        writeln!(s, "FAIL coverage: {holes} bin(s) hit by no shard").unwrap();
    }
    let failed = !m.failures.is_empty() || !missing.is_empty() || cov_fail;
    if !failed {
        writeln!(
            s,
            "PASS fuzz-merge: {} blocks, {} cases, {} cycles{}",
            m.blocks.len(),
            m.blocks.iter().map(|(_, t)| t.cases).sum::<u64>(),
            m.blocks.iter().map(|(_, t)| t.cycles).sum::<u64>(),
            if require_coverage {
                ", every bin hit"
            } else {
                ""
            }
        )
        .unwrap();
    }
    (s, failed)
}

/// The merged campaign as one JSON object.
pub fn to_json(m: &Merged, failed: bool) -> Value {
    serde_json::json!({
        "base_seed": m.base_seed,
        "shards": m.shards,
        "shard_count": m.shard_count,
        "missing_shards": m.missing(),
        "passed": !failed,
        "blocks": m.blocks.iter().map(|(b, t)| serde_json::json!({
            "block": b,
            "shards": t.shards,
            "cases": t.cases,
            "cycles": t.cycles,
            "coverage": t.bins.iter().map(|(n, h)| (n.clone(), Value::from(*h))).collect::<serde_json::Map<_, _>>(),
            "holes": t.holes(),
        })).collect::<Vec<_>>(),
        "failures": m.failures.iter().map(|f| serde_json::json!({
            "block": f.block, "shard": f.shard, "cycle": f.cycle, "what": f.what, "repro": f.repro,
        })).collect::<Vec<_>>(),
    })
}

/// Reads `paths` and merges them.
pub fn merge_files(paths: &[impl AsRef<Path>]) -> Result<Merged> {
    let mut files = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        files.push((p.to_path_buf(), text));
    }
    if files.is_empty() {
        bail!("no files to merge");
    }
    merge(&files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(block: &str, shard: &str, seed: u64, cov: &[(&str, u64)], fail: bool) -> String {
        let c: serde_json::Map<String, Value> = cov
            .iter()
            .map(|(b, h)| (b.to_string(), Value::from(*h)))
            .collect();
        serde_json::json!({
            "block": block, "shard": shard, "base_seed": seed, "cases": 3, "cycles": 30,
            "passed": !fail, "coverage": c,
            "mismatch": if fail { serde_json::json!({"cycle": 7, "diffs": [{"signal": "x_o", "expected": "1", "actual": "0"}], "repro": "out/r.stim"}) } else { Value::Null },
        })
        .to_string()
    }

    fn files(v: &[(&str, String)]) -> Vec<(PathBuf, String)> {
        v.iter()
            .map(|(n, t)| (PathBuf::from(n), t.clone()))
            .collect()
    }

    #[test]
    fn a_bin_hit_in_one_shard_only_is_covered_and_one_hit_in_none_is_a_hole() {
        let a = format!(
            "progress noise\n{}\n{}",
            line("mmu", "0/2", 5, &[("x", 1), ("y", 0), ("z", 0)], false),
            line("pfc", "0/2", 5, &[("p", 0)], false)
        );
        let b = format!(
            "{}\n{}",
            line("mmu", "1/2", 5, &[("x", 0), ("y", 4), ("z", 0)], false),
            line("pfc", "1/2", 5, &[("p", 2)], false)
        );
        let m = merge(&files(&[("a.json", a), ("b.json", b)])).unwrap();
        assert_eq!(
            m.blocks[0].1.bins,
            vec![("x".into(), 1), ("y".into(), 4), ("z".into(), 0)]
        );
        assert_eq!(m.blocks[0].1.holes(), vec!["z"]);
        assert_eq!(m.blocks[0].1.cases, 6);
        assert!(m.blocks[1].1.holes().is_empty());
        let (text, failed) = report(&m, true);
        assert!(failed && text.contains("FAIL coverage: 1 bin(s)"), "{text}");
        let (text, failed) = report(&m, false);
        assert!(!failed && text.contains("PASS fuzz-merge"), "{text}");
    }

    #[test]
    fn a_failure_a_missing_shard_or_a_foreign_file_fails() {
        let ok = line("mmu", "0/2", 5, &[("x", 1)], false);
        let bad = line("mmu", "1/2", 5, &[("x", 1)], true);
        let m = merge(&files(&[("a", ok.clone()), ("b", bad)])).unwrap();
        let (text, failed) = report(&m, false);
        assert!(failed, "{text}");
        assert!(text.contains("FAIL mmu (shard 1): step 7: x_o: expected 1 actual 0"));
        assert!(text.contains("repro: out/r.stim"));
        let m = merge(&files(&[("a", ok.clone())])).unwrap();
        assert_eq!(m.missing(), vec![1]);
        assert!(report(&m, false).1);
        let other = line("mmu", "1/2", 6, &[("x", 1)], false);
        assert!(merge(&files(&[("a", ok.clone()), ("b", other)]))
            .unwrap_err()
            .to_string()
            .contains("not of the campaign"));
        assert!(merge(&files(&[("a", ok.clone()), ("b", ok)]))
            .unwrap_err()
            .to_string()
            .contains("in both"));
        assert!(merge(&files(&[("c", "hello".into())]))
            .unwrap_err()
            .to_string()
            .contains("no fuzz report"));
    }
}
