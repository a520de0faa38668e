//! A stimulus: configuration plus the cycles of a run, and its text form
//! (the repro file format), both derived from the port declarations.
//!
//! The cycles are either written out one by one (a directed scenario, a
//! shrunk failure) or named by what regenerates them: the block's traffic
//! generator, its version, the seed and the length ([`Generated`]). A
//! generated run of 10^8 cycles is a file of a few lines.
//!
//! ```text
//! # switchsim stimulus v2
//! block mmu
//! variant p4c16
//! seed 42
//! config cfg_buf_cells_i=4096 cfg_lossy_cells_i=1024 ...
//! cycles 4
//! c arr_valid_i=1 arr_port_i=2 arr_prio_i=3 arr_len_i=4
//! c
//! reset
//! c dep_valid_i=1 dep_len_i=4
//! end crc32=1c291ca3
//! ```
//!
//! or, for a generated run, `generator mmu 2` before `cycles 100000000`
//! and no `c` lines. One `c` line per cycle; ports not named are zero.
//! `reset` is one cycle with `rst_ni` low. Values are decimal or `0x` hex;
//! vectors are `[a,b,...]`. The configuration line must name every
//! configuration port. `cycles` is the length and the last line, `end`,
//! carries the CRC-32 of every byte before it: a file cut short, grown or
//! corrupted is refused, never replayed as a different run. A file edited by
//! hand may end in a bare `end` (the length is still checked).

use crate::block::{Block, Params};
use crate::port::{format_plain, parse_value, Layout, PortGroup};
use std::fmt::Write as _;

/// One cycle of a stimulus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cycle<I> {
    /// Drive these inputs.
    Drive(I),
    /// Hold reset (`rst_ni` low) for one cycle; the model restarts from reset.
    Reset,
}

/// What the cycle source of a run asks for in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Drive the inputs the generator wrote.
    Drive,
    /// Hold reset (`rst_ni` low) for one cycle; the model restarts from reset.
    Reset,
}

/// A source of stimulus that yields one cycle at a time, so that a run of
/// any length needs constant memory. A generator may react to what the
/// block did (closed loop): it is handed the golden model as it stands
/// before the cycle and the outputs of the cycle before. Everything it
/// yields is a pure function of its seed, its configuration and those
/// observations, so the first N cycles of a seed do not depend on how many
/// cycles the run has.
pub trait Generator<B: Block> {
    /// Writes the inputs of the next cycle into `i` (every field) and says
    /// whether to drive them or to hold reset. `model` is the golden model
    /// before this cycle; `last` the outputs of the previous cycle (of the
    /// reset state before the first cycle and after a reset).
    fn next(&mut self, model: &B, last: &B::Outputs, i: &mut B::Inputs) -> Step;
}

/// Replays written-out cycles as a [`Generator`] (it ignores the model).
pub struct Replay<'a, I> {
    cycles: &'a [Cycle<I>],
    k: usize,
}

impl<'a, I> Replay<'a, I> {
    /// Replays `cycles` from the first.
    pub fn new(cycles: &'a [Cycle<I>]) -> Self {
        Replay { cycles, k: 0 }
    }
}

impl<B: Block> Generator<B> for Replay<'_, B::Inputs> {
    fn next(&mut self, _: &B, _: &B::Outputs, i: &mut B::Inputs) -> Step {
        let c = &self.cycles[self.k];
        self.k += 1;
        match c {
            Cycle::Reset => Step::Reset,
            Cycle::Drive(x) => {
                i.clone_from(x);
                Step::Drive
            }
        }
    }
}

/// The cycles of a run named by what regenerates them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The generator's version (the block's traffic generator; bumped
    /// whenever the cycles a seed yields change).
    pub version: u32,
    /// The number of cycles.
    pub cycles: u64,
}

/// Everything needed to replay a run: structure, configuration, inputs.
pub struct Stimulus<B: Block> {
    /// Structural parameters (which verilated variant).
    pub params: B::Params,
    /// Runtime configuration, held for the run.
    pub config: B::Config,
    /// The cycles, from the first cycle after the power-on reset; empty
    /// when `generated` names them instead.
    pub cycles: Vec<Cycle<B::Inputs>>,
    /// The seed the stimulus was generated from (also seeds the RTL's
    /// random initial state).
    pub seed: u64,
    /// When set, the run is the first `cycles` cycles of the block's
    /// traffic generator from `seed` (and `cycles` above is empty).
    pub generated: Option<Generated>,
}

impl<B: Block> Clone for Stimulus<B> {
    fn clone(&self) -> Self {
        Stimulus {
            params: self.params.clone(),
            config: self.config.clone(),
            cycles: self.cycles.clone(),
            seed: self.seed,
            generated: self.generated.clone(),
        }
    }
}

/// Short on purpose: proptest prints and persists the `Debug` form of every
/// failing case; the full case is the text form (`to_text`).
impl<B: Block> std::fmt::Debug for Stimulus<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Stimulus {{ {} {}, {} cycles{}, seed {}, {:?} }}",
            B::NAME,
            self.params.label(),
            self.len(),
            if self.generated.is_some() {
                " (generated)"
            } else {
                ""
            },
            self.seed,
            self.config
        )
    }
}

/// The first line of every stimulus file this version writes and reads.
pub const HEADER: &str = "# switchsim stimulus v2";

impl<B: Block> Stimulus<B> {
    /// Written-out cycles.
    pub fn explicit(
        params: B::Params,
        config: B::Config,
        seed: u64,
        cycles: Vec<Cycle<B::Inputs>>,
    ) -> Self {
        Stimulus {
            params,
            config,
            cycles,
            seed,
            generated: None,
        }
    }

    /// The number of cycles of the run.
    pub fn len(&self) -> u64 {
        match &self.generated {
            Some(g) => g.cycles,
            None => self.cycles.len() as u64,
        }
    }

    /// True for a run of no cycles.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the text form.
    pub fn to_text(&self) -> String {
        let p = &self.params;
        let mut s = String::new();
        writeln!(s, "{HEADER}").unwrap();
        writeln!(s, "block {}", B::NAME).unwrap();
        writeln!(s, "variant {}", p.label()).unwrap();
        writeln!(s, "seed {}", self.seed).unwrap();
        let cl = B::Config::layout(p);
        let cw = self
            .config
            .to_words(p)
            .expect("configuration fits its ports");
        s.push_str("config");
        for (k, d) in cl.ports.iter().enumerate() {
            write!(s, " {}={}", d.name, format_plain(d.shape, cl.slice(&cw, k))).unwrap();
        }
        s.push('\n');
        if let Some(g) = &self.generated {
            writeln!(s, "generator {} {}", B::NAME, g.version).unwrap();
        }
        writeln!(s, "cycles {}", self.len()).unwrap();
        let il = B::Inputs::layout(p);
        let mut w = vec![0u32; il.words];
        for c in &self.cycles {
            match c {
                Cycle::Reset => s.push_str("reset\n"),
                Cycle::Drive(i) => {
                    i.pack(p, &mut w).expect("inputs fit their ports");
                    s.push('c');
                    for (k, d) in il.ports.iter().enumerate() {
                        let v = il.slice(&w, k);
                        if v.iter().any(|&x| x != 0) {
                            write!(s, " {}={}", d.name, format_plain(d.shape, v)).unwrap();
                        }
                    }
                    s.push('\n');
                }
            }
        }
        let crc = crc32fast::hash(s.as_bytes());
        writeln!(s, "end crc32={crc:08x}").unwrap();
        s
    }

    /// Parses the text form for block `B`. `variants` are the structural
    /// variants that exist; errors name the line, the field and the
    /// problem. A file of another format version, cut short, grown, or
    /// whose checksum does not match is refused.
    pub fn from_text(text: &str, variants: &[B::Params]) -> Result<Self, String> {
        let first = text.lines().next().unwrap_or("").trim_end();
        if first != HEADER {
            return Err(match first.strip_prefix("# switchsim stimulus ") {
                Some("v1") => "line 1: a v1 stimulus file (it carries no length or end mark, \
                               so a cut file cannot be told from a whole one); this switchsim \
                               reads v2: regenerate it with the switchsim that wrote it, or add \
                               the `cycles N` and `end` lines by hand"
                    .to_string(),
                Some(v) => format!(
                    "line 1: stimulus format `{v}` is not known to this switchsim (it reads v2)"
                ),
                None => format!("line 1: not a switchsim stimulus file (expected `{HEADER}`)"),
            });
        }
        // The end mark: the last non-empty line, with the CRC of every byte
        // before it.
        let body_end = text.trim_end().rfind('\n').map_or(0, |i| i + 1);
        let last = text[body_end..].trim();
        let total_lines = text.trim_end().lines().count();
        let Some(mark) = last.strip_prefix("end") else {
            return Err(format!(
                "line {}: the file does not end in an `end` line: it was cut short (or the \
                 end mark removed)",
                total_lines + 1
            ));
        };
        match mark.trim() {
            "" => {}
            m => {
                let want = m
                    .strip_prefix("crc32=")
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("line {total_lines}: bad end mark `{last}`"))?;
                let got = crc32fast::hash(&text.as_bytes()[..body_end]);
                if got != want {
                    return Err(format!(
                        "line {total_lines}: checksum mismatch (crc32 {got:08x}, the end line \
                         says {want:08x}): the file was changed or corrupted; if you edited it \
                         by hand, end it with a bare `end` line"
                    ));
                }
            }
        }
        let mut params = None;
        let mut config = None;
        let mut seed = 0u64;
        let mut cycles = Vec::new();
        let mut declared: Option<u64> = None;
        let mut version: Option<u32> = None;
        let mut il: Option<Layout> = None;
        for (n, raw) in text[..body_end].lines().enumerate() {
            let ln = n + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (kw, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let rest = rest.trim();
            let err = |m: String| format!("line {ln}: {m}");
            match kw {
                "block" => {
                    if rest != B::NAME {
                        return Err(err(format!(
                            "stimulus is for block `{rest}`, expected `{}`",
                            B::NAME
                        )));
                    }
                }
                "variant" => {
                    let p = variants.iter().find(|v| v.label() == rest).ok_or_else(|| {
                        let known: Vec<String> = variants.iter().map(|v| v.label()).collect();
                        err(format!(
                            "unknown variant `{rest}` of `{}` (verilated: {})",
                            B::NAME,
                            known.join(", ")
                        ))
                    })?;
                    il = Some(B::Inputs::layout(p));
                    params = Some(p.clone());
                }
                "seed" => {
                    seed = rest
                        .parse()
                        .map_err(|_| err(format!("seed `{rest}` is not a number")))?;
                }
                "config" => {
                    let p = params
                        .as_ref()
                        .ok_or_else(|| err("`config` before `variant`".into()))?;
                    let cl = B::Config::layout(p);
                    let mut w = vec![0u32; cl.words];
                    let mut seen = vec![false; cl.ports.len()];
                    fill(&cl, rest, &mut w, Some(&mut seen)).map_err(err)?;
                    if let Some(k) = seen.iter().position(|s| !s) {
                        return Err(err(format!(
                            "configuration field `{}` is missing",
                            cl.ports[k].name
                        )));
                    }
                    config = Some(B::Config::unpack(p, &w));
                }
                "generator" => {
                    let (name, v) = rest.split_once(char::is_whitespace).ok_or_else(|| {
                        err(format!(
                            "`generator {rest}`: expected `generator NAME VERSION`"
                        ))
                    })?;
                    if name != B::NAME {
                        return Err(err(format!(
                            "generator `{name}` is not the traffic generator of `{}`",
                            B::NAME
                        )));
                    }
                    version =
                        Some(v.trim().parse().map_err(|_| {
                            err(format!("generator version `{v}` is not a number"))
                        })?);
                }
                "cycles" => {
                    declared = Some(
                        rest.parse()
                            .map_err(|_| err(format!("cycle count `{rest}` is not a number")))?,
                    );
                }
                "reset" | "c" => {
                    let (Some(p), Some(l)) = (params.as_ref(), il.as_ref()) else {
                        return Err(err("cycle before `variant`".into()));
                    };
                    if config.is_none() {
                        return Err(err("cycle before `config`".into()));
                    }
                    if declared.is_none() {
                        return Err(err("cycle before the `cycles` line".into()));
                    }
                    if version.is_some() {
                        return Err(err(
                            "a generated stimulus lists no cycles (they come from the generator)"
                                .into(),
                        ));
                    }
                    if kw == "reset" {
                        cycles.push(Cycle::Reset);
                    } else {
                        let mut w = vec![0u32; l.words];
                        fill(l, rest, &mut w, None).map_err(err)?;
                        cycles.push(Cycle::Drive(B::Inputs::unpack(p, &w)));
                    }
                }
                "end" => return Err(err("`end` before the last line".into())),
                other => return Err(err(format!("unknown keyword `{other}`"))),
            }
        }
        let params = params.ok_or("no `variant` line")?;
        let config = config.ok_or("no `config` line")?;
        let declared = declared.ok_or("no `cycles` line")?;
        let generated = match version {
            Some(version) => Some(Generated {
                version,
                cycles: declared,
            }),
            None => {
                if cycles.len() as u64 != declared {
                    return Err(format!(
                        "the file lists {} cycles but says `cycles {declared}`: it was cut short \
                         or grown",
                        cycles.len()
                    ));
                }
                None
            }
        };
        Ok(Stimulus {
            params,
            config,
            cycles,
            seed,
            generated,
        })
    }
}

/// Parses `name=value` pairs into the packed buffer of `layout`.
fn fill(
    layout: &Layout,
    text: &str,
    w: &mut [u32],
    mut seen: Option<&mut Vec<bool>>,
) -> Result<(), String> {
    // Split on whitespace outside brackets.
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = None;
    for (i, ch) in text.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if ch.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                items.push(&text[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        items.push(&text[s..]);
    }
    let mut given = vec![false; layout.ports.len()];
    for it in items {
        let (name, val) = it
            .split_once('=')
            .ok_or_else(|| format!("`{it}` is not of the form name=value"))?;
        let k = layout.find(name).ok_or_else(|| {
            let known: Vec<&str> = layout.ports.iter().map(|p| p.name).collect();
            format!("unknown port `{name}` (known: {})", known.join(", "))
        })?;
        if given[k] {
            return Err(format!("port `{name}` is given twice"));
        }
        given[k] = true;
        let off = layout.offsets[k];
        let d = &layout.ports[k];
        parse_value(d, val, &mut w[off..off + d.shape.words()])
            .map_err(|e| format!("{name}={val}: {e}"))?;
        if let Some(s) = seen.as_deref_mut() {
            s[k] = true;
        }
    }
    Ok(())
}
