//! The waveforms and the mismatch report, checked by an independent reader
//! (the `vcd` crate's parser): the model's and Verilator's VCDs have the same
//! scopes, names, widths and timescale and, on a passing run, the same value
//! on every port at every cycle; the merged VCD's `mismatch` rises at the
//! reported cycle; the repro file replays.

use crate::support;

use cosim::lockstep::{self, Options, Outcome, Waves};
use model::mmu::{Mmu, MmuParams};
use model::stim::Stimulus;
use model::{Block, PortGroup};
use std::collections::HashMap;
use std::path::Path;
use vcd::{Command, IdCode, ScopeItem};

/// A parsed VCD: timescale, variables by hierarchical name, and the value
/// of each variable at each sampled time.
struct Vcd {
    timescale: Option<(u32, vcd::TimescaleUnit)>,
    vars: HashMap<String, (IdCode, u32)>,
    changes: HashMap<IdCode, Vec<(u64, String)>>,
}

fn collect(items: &[ScopeItem], prefix: &str, out: &mut HashMap<String, (IdCode, u32)>) {
    for it in items {
        match it {
            ScopeItem::Scope(s) => collect(&s.items, &format!("{prefix}{}.", s.identifier), out),
            ScopeItem::Var(v) => {
                out.insert(format!("{prefix}{}", v.reference), (v.code, v.size));
            }
            _ => {}
        }
    }
}

fn norm(bits: impl Iterator<Item = vcd::Value>) -> String {
    let s: String = bits.map(|b| b.to_string()).collect();
    let t = s.trim_start_matches('0');
    if t.is_empty() {
        "0".into()
    } else {
        t.into()
    }
}

fn read(path: &Path) -> Vcd {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let h = p
        .parse_header()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut vars = HashMap::new();
    collect(&h.items, "", &mut vars);
    let mut changes: HashMap<IdCode, Vec<(u64, String)>> = HashMap::new();
    let mut t = 0;
    for c in p {
        match c.unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            Command::Timestamp(x) => t = x,
            Command::ChangeScalar(id, v) => changes
                .entry(id)
                .or_default()
                .push((t, norm([v].into_iter()))),
            Command::ChangeVector(id, v) => {
                changes.entry(id).or_default().push((t, norm(v.iter())))
            }
            _ => {}
        }
    }
    Vcd {
        timescale: h.timescale,
        vars,
        changes,
    }
}

impl Vcd {
    /// Value of `name` at time `t` (after every change at `t`).
    fn at(&self, name: &str, t: u64) -> String {
        let (id, _) = self
            .vars
            .get(name)
            .unwrap_or_else(|| panic!("no variable {name}"));
        let ch = &self.changes[id];
        let k = ch.partition_point(|(x, _)| *x <= t);
        assert!(k > 0, "{name} has no value at {t}");
        ch[k - 1].1.clone()
    }
}

fn stimulus() -> Stimulus<Mmu> {
    let p = MmuParams::default();
    testbenches::generate::<Mmu>(&p, 11, 400, Some(&Mmu::default_config(&p)))
}

#[test]
fn model_and_rtl_waveforms_agree_for_an_independent_reader() {
    let stim = stimulus();
    let out = support::out_dir().join("tests/waves-pass");
    let o = Options {
        out_dir: out,
        waves: Waves::Always,
        context: 8,
        replay: "switchsim replay".into(),
        ..Options::default()
    };
    let Outcome::Pass(s) = lockstep::run(&stim, &o).unwrap() else {
        panic!("mismatch")
    };
    let w = s.waves.unwrap();
    let (m, r, g) = (read(&w.model), read(&w.rtl), read(&w.merged));
    for v in [&m, &r, &g] {
        assert_eq!(v.timescale, Some((100, vcd::TimescaleUnit::PS)));
    }
    let p = stim.params;
    let ports: Vec<model::PortDesc> = <Mmu as Block>::Config::ports(&p)
        .into_iter()
        .chain(<Mmu as Block>::Inputs::ports(&p))
        .chain(<Mmu as Block>::Outputs::ports(&p))
        // The per-queue counters are views the RTL keeps off its ports.
        .filter(|d| !Mmu::alignment(&p).optional.iter().any(|o| o == d.name))
        .collect();
    let n = stim.cycles.len() as u64 + lockstep::POWER_ON_RESET;
    for port in &ports {
        for scope in ["TOP.", "TOP.mmu."] {
            let name = format!("{scope}{}", port.name);
            let (_, wm) = m.vars[&name];
            let (_, wr) = r
                .vars
                .get(&name)
                .unwrap_or_else(|| panic!("RTL VCD lacks {name}"));
            assert_eq!(wm, port.shape.bits(), "{name}");
            assert_eq!(*wr, wm, "{name} width");
        }
        // Same value at every cycle (from the first compared cycle on).
        for c in 1..n {
            let t = c * 10;
            let name = format!("TOP.{}", port.name);
            assert_eq!(m.at(&name, t), r.at(&name, t), "{name} at {t}");
        }
    }
    // The clock: rises at 10 n, falls at 10 n + 5, in both.
    for c in 1..n {
        assert_eq!(m.at("TOP.clk_i", c * 10), "1");
        assert_eq!(r.at("TOP.clk_i", c * 10), "1");
        assert_eq!(m.at("TOP.clk_i", c * 10 + 5), "0");
        assert_eq!(r.at("TOP.clk_i", c * 10 + 5), "0");
    }
    // Merged: model and RTL side by side, `mismatch` low throughout.
    for c in 1..n {
        assert_eq!(g.at("TOP.mismatch", c * 10), "0");
        for port in <Mmu as Block>::Outputs::ports(&p) {
            assert_eq!(
                g.at(&format!("TOP.model.{}", port.name), c * 10),
                g.at(&format!("TOP.rtl.{}", port.name), c * 10)
            );
        }
    }
    let gtkw = std::fs::read_to_string(&w.gtkw).unwrap();
    assert!(gtkw.contains("TOP.mismatch") && gtkw.contains("[dumpfile]"));
    // Enumerations through a translate filter file, buses in hex.
    let verdict = gtkw
        .split("\n@24\n")
        .find(|b| b.contains("TOP.model.verdict_o[2:0]"))
        .unwrap_or_else(|| panic!("no verdict_o trace:\n{gtkw}"));
    assert!(verdict.contains("@2024\n^1 "), "{verdict}");
    let filter = verdict.lines().find_map(|l| l.strip_prefix("^1 ")).unwrap();
    let names = std::fs::read_to_string(filter).unwrap();
    assert!(names.contains("4 drop\n") && names.contains("6 lossy_drop\n"));
    let err = gtkw
        .split("\n@24\n")
        .find(|b| b.contains("TOP.rtl.err_o[1:0]"))
        .unwrap();
    assert!(err.starts_with("@22\n"), "{err}");
    // The folder moved elsewhere (a CI artifact downloaded): the VCD and the
    // filter are found from the save file where GTKWave looks for them.
    let dir = w.gtkw.parent().unwrap();
    let moved = support::out_dir().join("tests/waves-moved");
    let _ = std::fs::remove_dir_all(&moved);
    std::fs::create_dir_all(&moved).unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap().path();
        std::fs::copy(&e, moved.join(e.file_name().unwrap())).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
    let this_save = std::path::absolute(moved.join(w.gtkw.file_name().unwrap())).unwrap();
    let text = std::fs::read_to_string(&this_save).unwrap();
    let quoted = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| Path::new(v.trim().trim_matches('"')).to_path_buf())
            .unwrap_or_else(|| panic!("no {key} in\n{text}"))
    };
    let (dump, save) = (quoted("[dumpfile] "), quoted("[savefile] "));
    assert!(!dump.exists(), "the original folder is gone");
    for orig in [dump, Path::new(filter).to_path_buf()] {
        let found = gtkwave_relocated(&save, &orig, &this_save);
        assert!(
            found.is_file(),
            "{} not found at {}",
            orig.display(),
            found.display()
        );
    }
}

/// Where GTKWave looks for file `orig` (a VCD or filter named in save file
/// `orig_save`) when it is missing and the save file is now `this_save`:
/// at the same path relative to the save file (`find_dumpfile`,
/// `get_relative_adjusted_name` in GTKWave's `savefile.c`).
fn gtkwave_relocated(orig_save: &Path, orig: &Path, this_save: &Path) -> std::path::PathBuf {
    let from = orig_save.parent().unwrap();
    let common = from
        .components()
        .zip(orig.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut rel = std::path::PathBuf::new();
    for _ in from.components().skip(common) {
        rel.push("..");
    }
    rel.extend(orig.components().skip(common));
    this_save.parent().unwrap().join(rel)
}

/// The MMU model with one bit of `thr_o` flipped in stimulus cycle 100: a
/// stand-in for a bug, to check the mismatch path end to end.
#[derive(Clone, Debug)]
struct FlippedMmu(Mmu, u64);

impl Block for FlippedMmu {
    const NAME: &'static str = "mmu";
    type Params = <Mmu as Block>::Params;
    type Config = <Mmu as Block>::Config;
    type Inputs = <Mmu as Block>::Inputs;
    type Outputs = <Mmu as Block>::Outputs;
    type State = <Mmu as Block>::State;
    fn variants() -> Vec<Self::Params> {
        Mmu::variants()
    }
    fn default_config(p: &Self::Params) -> Self::Config {
        Mmu::default_config(p)
    }
    fn check(p: &Self::Params, c: &Self::Config) -> Result<(), model::ConfigError> {
        Mmu::check(p, c)
    }
    fn new(p: &Self::Params, c: &Self::Config) -> Self {
        FlippedMmu(Mmu::new(p, c), 0)
    }
    fn params(&self) -> &Self::Params {
        self.0.params()
    }
    fn step_into(&mut self, i: &Self::Inputs, o: &mut Self::Outputs) {
        self.0.step_into(i, o);
        self.1 += 1;
        if self.1 == 101 {
            o.thr_o ^= 4;
        }
    }
    fn state(&self) -> &Self::State {
        self.0.state()
    }
    fn alignment(p: &Self::Params) -> model::timing::Alignment {
        Mmu::alignment(p)
    }
}

/// The MMU's own traffic, for the flipped model.
struct FlippedGen(testbenches::mmu::MmuGen);

impl model::stim::Generator<FlippedMmu> for FlippedGen {
    fn next(
        &mut self,
        m: &FlippedMmu,
        last: &<Mmu as Block>::Outputs,
        i: &mut <Mmu as Block>::Inputs,
    ) -> model::stim::Step {
        self.0.next(&m.0, last, i)
    }
}

impl testbenches::Bench for FlippedMmu {
    const GENERATOR_VERSION: u32 = Mmu::GENERATOR_VERSION;
    type Gen = FlippedGen;
    fn generator(p: &Self::Params, cfg: &Self::Config, seed: u64) -> FlippedGen {
        FlippedGen(Mmu::generator(p, cfg, seed))
    }
    fn config_strategy(
        p: &Self::Params,
        illegal: bool,
    ) -> proptest::strategy::BoxedStrategy<Self::Config> {
        Mmu::config_strategy(p, illegal)
    }
}

#[test]
fn a_mismatch_is_reported_with_cycle_signal_values_repro_and_waveforms() {
    let s = stimulus();
    let stim = Stimulus::<FlippedMmu> {
        generated: None,
        params: s.params,
        config: s.config.clone(),
        cycles: s.cycles.clone(),
        seed: 11,
    };
    let out = support::out_dir().join("tests/waves-fail");
    let o = Options {
        out_dir: out,
        waves: Waves::OnMismatch,
        context: 8,
        replay: "switchsim replay".into(),
        ..Options::default()
    };
    let Outcome::Mismatch(m) = lockstep::run(&stim, &o).unwrap() else {
        panic!("no mismatch found")
    };
    assert_eq!(m.cycle, 100);
    assert_eq!(m.diffs.len(), 1);
    assert_eq!(m.diffs[0].signal, "thr_o");
    assert_ne!(m.diffs[0].expected, m.diffs[0].actual);
    assert_eq!(m.seed, 11);
    let text = m.to_string();
    // The MMU's state is compared through state paths (the general
    // lockstep path), whose report names both time axes.
    for needle in [
        "model step 100, RTL clock 102",
        "thr_o",
        "(model)",
        "(rtl)",
        "seed:       11",
        "replay:",
        "merged.vcd",
        "gtkwave",
    ] {
        assert!(text.contains(needle), "report lacks {needle}:\n{text}");
    }
    // The repro replays: the real model agrees with the RTL on it.
    let repro = std::fs::read_to_string(m.repro.as_ref().unwrap()).unwrap();
    let back = Stimulus::<Mmu>::from_text(&repro, &Mmu::variants()).unwrap();
    // The repro is the run cut just after the divergent cycle.
    assert_eq!(back.cycles, s.cycles[..=100]);
    support::lockstep_or_report(&back, "repro of the flipped model");
    // The merged waveform: mismatch rises at the reported cycle.
    let w = m.waves.as_ref().unwrap();
    let g = read(&w.merged);
    let t = (m.cycle as u64 + lockstep::POWER_ON_RESET) * 10;
    assert_eq!(g.at("TOP.mismatch", t - 10), "0");
    assert_eq!(g.at("TOP.mismatch", t), "1");
    assert_ne!(g.at("TOP.model.thr_o", t), g.at("TOP.rtl.thr_o", t));
    let gtkw = std::fs::read_to_string(&w.gtkw).unwrap();
    assert!(
        gtkw.contains(&format!("*-13.000000 {} ", t * 100)),
        "marker at {t}:\n{gtkw}"
    );
    // The view opens with the divergence in it: it starts a few cycles
    // before (GTKWave counts in ps; a cycle is 1 ns, `t` is in 100 ps).
    let start: u64 = gtkw
        .lines()
        .find_map(|l| l.strip_prefix("[timestart] "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no [timestart]:\n{gtkw}"));
    assert!(
        start < t * 100 && start + 40 * 1000 >= t * 100,
        "view at {start} ps"
    );
}
