//! The alignment contract on a block that takes several clocks per step and
//! keeps its state off its ports: `fixtures/slot_counter.v` (a bank of
//! counters in a register file with a registered read, one update per slot
//! of K clocks), against the golden model below, which takes one step per
//! slot. The block declares its alignment (K clocks per step, outputs two
//! clocks into the slot, `valid_i` read in a slot's first clock only); the
//! counters are compared through a state path, and with a strobe instead of
//! a latency. Bugs in the RTL are caught at the right step.

use crate::support;

use cosim::design::UserMap;
use cosim::lockstep::{self, Options, Outcome, UserRtl, Waves};
use model::block::{Block, ConfigError, Params};
use model::stim::{Generator, Step, Stimulus};
use model::timing::Alignment;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use testbenches::rng::Rng;
use testbenches::Bench;

/// The structural parameters of `slot_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SlotParams {
    /// Clocks per slot.
    k: u32,
    /// Counters.
    d: usize,
    /// Counter width.
    w: u32,
}

impl Params for SlotParams {
    fn verilog(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("K", self.k as u64),
            ("D", self.d as u64),
            ("W", self.w as u64),
        ]
    }
}

impl SlotParams {
    fn aw(&self) -> u32 {
        self.d.trailing_zeros()
    }
}

model::port_group! {
    /// Configuration.
    struct SlotConfig<SlotParams> |p| {
        /// Saturate at 2^W - 1 instead of wrapping.
        cfg_sat_i: bool = 1,
    }
}

model::port_group! {
    /// One update per slot.
    struct SlotInputs<SlotParams> |p| {
        /// Add `add_i` to counter `idx_i`.
        valid_i: bool = 1,
        /// The counter.
        idx_i: u8 = p.aw(),
        /// The amount.
        add_i: u8 = 8,
    }
}

model::port_group! {
    /// The slot's result.
    struct SlotOutputs<SlotParams> |p| {
        /// The counter after the update (0 without one).
        cnt_o: u16 = p.w,
        /// An update happened.
        hit_o: bool = 1,
    }
}

model::port_group! {
    /// The counters.
    struct SlotState<SlotParams> |p| {
        /// Counter `j`.
        cnt_q: Vec<u16> = (p.w, p.d),
    }
}

/// The golden model: one step per slot.
#[derive(Clone, Debug)]
struct SlotCounter {
    p: SlotParams,
    sat: bool,
    s: SlotState,
}

impl Block for SlotCounter {
    const NAME: &'static str = "slot_counter";
    type Params = SlotParams;
    type Config = SlotConfig;
    type Inputs = SlotInputs;
    type Outputs = SlotOutputs;
    type State = SlotState;

    fn variants() -> Vec<SlotParams> {
        vec![
            SlotParams { k: 3, d: 16, w: 12 },
            SlotParams { k: 4, d: 8, w: 8 },
            SlotParams { k: 2, d: 4, w: 10 },
        ]
    }
    /// K clocks per step; the result from the slot's third clock on.
    fn alignment(p: &SlotParams) -> Alignment {
        Alignment {
            clocks_per_step: p.k,
            latency: 2,
            pulse: vec!["valid_i".into()],
            ..Alignment::default()
        }
    }
    fn default_config(_: &SlotParams) -> SlotConfig {
        SlotConfig { cfg_sat_i: true }
    }
    fn check(_: &SlotParams, _: &SlotConfig) -> Result<(), ConfigError> {
        Ok(())
    }
    fn new(p: &SlotParams, c: &SlotConfig) -> Self {
        SlotCounter {
            p: *p,
            sat: c.cfg_sat_i,
            s: SlotState::zero(p),
        }
    }
    fn params(&self) -> &SlotParams {
        &self.p
    }
    fn step_into(&mut self, i: &SlotInputs, o: &mut SlotOutputs) {
        if !i.valid_i {
            o.cnt_o = 0;
            o.hit_o = false;
            return;
        }
        let max = (1u32 << self.p.w) - 1;
        let sum = u32::from(self.s.cnt_q[i.idx_i as usize]) + u32::from(i.add_i);
        let next = if sum > max {
            if self.sat {
                max
            } else {
                sum & max
            }
        } else {
            sum
        };
        self.s.cnt_q[i.idx_i as usize] = next as u16;
        o.cnt_o = next as u16;
        o.hit_o = true;
    }
    fn state(&self) -> &SlotState {
        &self.s
    }
}

use model::PortGroup;

/// Updates on a few hot counters with large amounts (so that they wrap or
/// saturate), the odd reset.
struct SlotGen {
    p: SlotParams,
    rng: Rng,
}

impl Generator<SlotCounter> for SlotGen {
    fn next(&mut self, _: &SlotCounter, _: &SlotOutputs, i: &mut SlotInputs) -> Step {
        let r = &mut self.rng;
        if r.below(400) == 0 {
            return Step::Reset;
        }
        i.valid_i = r.below(4) != 0;
        i.idx_i = (r.below(3) as usize % self.p.d) as u8;
        i.add_i = if r.below(2) == 0 {
            255
        } else {
            r.below(256) as u8
        };
        Step::Drive
    }
}

impl Bench for SlotCounter {
    const GENERATOR_VERSION: u32 = 1;
    type Gen = SlotGen;
    fn generator(p: &SlotParams, _: &SlotConfig, seed: u64) -> SlotGen {
        SlotGen {
            p: *p,
            rng: Rng::new(seed, 0x510),
        }
    }
    fn config_strategy(_: &SlotParams, _: bool) -> BoxedStrategy<SlotConfig> {
        any::<bool>()
            .prop_map(|cfg_sat_i| SlotConfig { cfg_sat_i })
            .boxed()
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The fixture (or a copy with `edit` applied) under `map`.
fn user(edit: Option<(&str, &str)>, map: &str) -> UserRtl {
    let mut file = fixture("slot_counter.v");
    if let Some((from, to)) = edit {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(from), "the edit `{from}` does not apply");
        let dir = support::out_dir().join("slot_block");
        std::fs::create_dir_all(&dir).unwrap();
        file = dir.join(format!("slot_counter_{:08x}.v", crc32(to)));
        std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
    }
    UserRtl {
        files: vec![file],
        top: None,
        map: UserMap::parse(map, Path::new("test map")).unwrap(),
        quick: false,
    }
}

fn crc32(s: &str) -> u32 {
    s.bytes().fold(0u32, |h, b| h.rotate_left(5) ^ u32::from(b))
}

/// The counters compared through the register file, the strobe unused.
const BY_LATENCY: &str = r#"
ignore = ["done_o"]
[state]
cnt_q = "cnt_q"
"#;

/// The outputs compared where `done_o` says, at most 2 clocks in.
const BY_STROBE: &str = r#"
strobe = "done_o"
latency = 2
"#;

fn run(stim: &Stimulus<SlotCounter>, u: &UserRtl) -> Outcome {
    let opts = Options {
        out_dir: support::out_dir().join("slot_block"),
        waves: Waves::Never,
        user: Some(u.clone()),
        ..Options::default()
    };
    lockstep::run(stim, &opts).unwrap()
}

fn cases(p: &SlotParams, n: u64) -> impl Iterator<Item = Stimulus<SlotCounter>> + '_ {
    (0..n).map(move |seed| {
        let cfg = SlotConfig {
            cfg_sat_i: seed % 2 == 0,
        };
        testbenches::generated::<SlotCounter>(p, &cfg, seed, 1500)
    })
}

#[test]
fn a_wrong_latency_in_the_map_fails() {
    let p = SlotCounter::variants()[0];
    let stim = testbenches::generated::<SlotCounter>(&p, &SlotConfig { cfg_sat_i: true }, 2, 300);
    for l in [0, 1, 3 * 2 + 1] {
        let u = user(None, &format!("latency = {l}\n{BY_LATENCY}"));
        assert!(
            matches!(run(&stim, &u), Outcome::Mismatch(_)),
            "latency {l} passed"
        );
    }
}

#[test]
fn several_clocks_per_step_and_state_off_the_ports_agree() {
    for p in SlotCounter::variants() {
        for by in [BY_LATENCY, BY_STROBE] {
            let u = user(None, by);
            for stim in cases(&p, 6) {
                if let Outcome::Mismatch(m) = run(&stim, &u) {
                    panic!("K = {}, map {by}:\n{m}", p.k);
                }
            }
        }
    }
}

/// The first step (from the model) whose update wraps or saturates, with
/// saturation on.
fn first_saturation(stim: &Stimulus<SlotCounter>) -> Option<i64> {
    let cycles = testbenches::materialize(stim, 0, stim.len()).unwrap();
    let mut m = SlotCounter::new(&stim.params, &stim.config);
    for (k, c) in cycles.iter().enumerate() {
        match c {
            model::stim::Cycle::Reset => m = SlotCounter::new(&stim.params, &stim.config),
            model::stim::Cycle::Drive(i) => {
                let before = m.state().cnt_q[i.idx_i as usize];
                let o = m.step(i);
                if i.valid_i && u32::from(before) + u32::from(i.add_i) > (1 << stim.params.w) - 1 {
                    assert_eq!(o.cnt_o as u32, (1 << stim.params.w) - 1);
                    return Some(k as i64);
                }
            }
        }
    }
    None
}

#[test]
fn a_bug_in_the_datapath_fails_at_its_step() {
    let p = SlotCounter::variants()[0];
    // Saturation forgotten: the sum wraps.
    let u = user(
        Some(("(cfg_sat_i && sum[W])", "(1'b0 && sum[W])")),
        BY_LATENCY,
    );
    let stim = testbenches::generated::<SlotCounter>(&p, &SlotConfig { cfg_sat_i: true }, 3, 1500);
    let want = first_saturation(&stim).expect("a saturating update in 1500 steps");
    let Outcome::Mismatch(m) = run(&stim, &u) else {
        panic!("the wrapping copy passed")
    };
    assert_eq!(m.cycle, want, "{m}");
    // Output cnt_o (latency 2) is seen at clock 3 (s + 2) + 2; the register
    // file after the edge of the slot's last clock, 3 (s + 2) + 2: the
    // state path and the output disagree in the same clock here.
    let s = want as u64 + lockstep::POWER_ON_RESET;
    assert_eq!(m.clock, Some(3 * s + 2), "{m}");
    let signals: Vec<&str> = m.diffs.iter().map(|d| d.signal.as_str()).collect();
    assert_eq!(signals, ["cnt_o"], "{m}");
    let text = m.to_string();
    assert!(
        text.contains("at model step") && text.contains("RTL clock"),
        "{text}"
    );
}

#[test]
fn a_bug_only_in_the_state_is_caught_through_the_state_path() {
    let p = SlotCounter::variants()[0];
    // The write-back goes to the neighbour of the counter read: the slot's
    // output is right, the register file is not.
    let u = user(
        Some(("cnt_q[idx_q] <= next", "cnt_q[idx_q ^ 1'b1] <= next")),
        BY_LATENCY,
    );
    let stim = testbenches::generated::<SlotCounter>(&p, &SlotConfig { cfg_sat_i: true }, 5, 1500);
    let cycles = testbenches::materialize(&stim, 0, stim.len()).unwrap();
    let first_update = cycles
        .iter()
        .position(|c| matches!(c, model::stim::Cycle::Drive(i) if i.valid_i))
        .unwrap() as i64;
    let Outcome::Mismatch(m) = run(&stim, &u) else {
        panic!("the misdirected write passed")
    };
    assert_eq!(m.cycle, first_update, "{m}");
    assert!(
        m.diffs.iter().all(|d| d.signal.starts_with("state cnt_q[")),
        "{m}"
    );
    // Without the state path the same bug shows only later, on an output.
    let late = user(
        Some(("cnt_q[idx_q] <= next", "cnt_q[idx_q ^ 1'b1] <= next")),
        "ignore = [\"done_o\"]",
    );
    match run(&stim, &late) {
        Outcome::Mismatch(m2) => assert!(m2.cycle > m.cycle, "{m2}"),
        Outcome::Pass(_) | Outcome::Interrupted(_) => {}
    }
}

#[test]
fn reading_a_pulse_input_after_the_first_clock_is_caught() {
    let p = SlotCounter::variants()[0];
    // The RTL reads valid_i in phase 1 instead of the value latched in
    // phase 0: with valid_i driven in the first clock only, it never counts.
    let u = user(Some(("if (go_q) cnt_q", "if (valid_i) cnt_q")), BY_LATENCY);
    let stim = testbenches::generated::<SlotCounter>(&p, &SlotConfig { cfg_sat_i: false }, 7, 300);
    assert!(matches!(run(&stim, &u), Outcome::Mismatch(_)));
}

#[test]
fn a_strobe_that_never_comes_is_reported() {
    let p = SlotCounter::variants()[0];
    let u = user(
        Some(("done_o  <= phase_q == PW'(1);", "done_o  <= 1'b0;")),
        BY_STROBE,
    );
    let stim = testbenches::generated::<SlotCounter>(&p, &SlotConfig { cfg_sat_i: false }, 1, 300);
    let Outcome::Mismatch(m) = run(&stim, &u) else {
        panic!("no strobe passed")
    };
    assert_eq!(m.diffs[0].signal, "done_o", "{m}");
    assert!(m.diffs[0].expected.starts_with("1 by clock"), "{m}");
}

/// The first time `TOP.<var>` takes value `want` in the VCD at `path`, and
/// the value of `TOP.step` then.
fn first_time(path: &Path, var: &str, want: vcd::Value) -> (u64, u64) {
    let mut p = vcd::Parser::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let h = p.parse_header().unwrap();
    let id = |name: &str| {
        h.find_var(&["TOP", name])
            .unwrap_or_else(|| panic!("{}: no TOP.{name}", path.display()))
            .code
    };
    let (m, s) = (id(var), id("step"));
    let (mut t, mut step) = (0, 0);
    for c in p {
        match c.unwrap() {
            vcd::Command::Timestamp(x) => t = x,
            vcd::Command::ChangeVector(i, v) if i == s => {
                step = v
                    .iter()
                    .fold(0, |a, b| 2 * a + u64::from(b == vcd::Value::V1));
            }
            vcd::Command::ChangeScalar(i, v) if i == m && v == want => return (t, step),
            _ => {}
        }
    }
    panic!("{}: TOP.{var} never {want}", path.display())
}

#[test]
fn the_merged_waveform_shows_the_mismatch_on_the_rtl_clock_it_was_seen() {
    let p = SlotCounter::variants()[0];
    let u = user(
        Some(("(cfg_sat_i && sum[W])", "(1'b0 && sum[W])")),
        BY_LATENCY,
    );
    let stim = testbenches::generated::<SlotCounter>(&p, &SlotConfig { cfg_sat_i: true }, 3, 1500);
    let opts = Options {
        out_dir: support::out_dir().join("slot_block"),
        waves: Waves::OnMismatch,
        context: 8,
        user: Some(u),
        ..Options::default()
    };
    let Outcome::Mismatch(m) = lockstep::run(&stim, &opts).unwrap() else {
        panic!("the wrapping copy passed")
    };
    let w = m.waves.as_ref().expect("waveforms");
    let clock = m.clock.expect("an RTL clock");
    // One RTL clock = 10 units; `step` names the step driven then.
    let (t, step) = first_time(&w.merged, "mismatch", vcd::Value::V1);
    assert_eq!(t, 10 * clock, "{m}");
    assert_eq!(step, clock / u64::from(p.k), "{m}");
    // The model's waveform runs on the same axis: its step s starts at 10 s K.
    let (t0, _) = first_time(&w.model, "rst_ni", vcd::Value::V1);
    assert_eq!(t0, 10 * u64::from(p.k) * lockstep::POWER_ON_RESET);
}
