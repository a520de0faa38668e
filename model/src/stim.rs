//! A stimulus: configuration plus one input vector per cycle, and its text
//! form (the repro file format), both derived from the port declarations.
//!
//! ```text
//! # switchsim stimulus v1
//! block mmu
//! variant p4c16
//! seed 42
//! config cfg_buf_cells_i=4096 cfg_lossy_cells_i=1024 ...
//! c arr_valid_i=1 arr_port_i=2 arr_prio_i=3 arr_len_i=4
//! c
//! reset
//! c dep_valid_i=1 dep_len_i=4
//! ```
//!
//! One `c` line per cycle; ports not named are zero. `reset` is one cycle
//! with `rst_ni` low. Values are decimal or `0x` hex; vectors are `[a,b,...]`.
//! The configuration line must name every configuration port.

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

/// Everything needed to replay a run: structure, configuration, inputs.
pub struct Stimulus<B: Block> {
    /// Structural parameters (which verilated variant).
    pub params: B::Params,
    /// Runtime configuration, held for the run.
    pub config: B::Config,
    /// The cycles, from the first cycle after the power-on reset.
    pub cycles: Vec<Cycle<B::Inputs>>,
    /// The seed the stimulus was generated from (also seeds the RTL's
    /// random initial state).
    pub seed: u64,
}

impl<B: Block> Clone for Stimulus<B> {
    fn clone(&self) -> Self {
        Stimulus {
            params: self.params.clone(),
            config: self.config.clone(),
            cycles: self.cycles.clone(),
            seed: self.seed,
        }
    }
}

/// Short on purpose: proptest prints and persists the `Debug` form of every
/// failing case; the full case is the text form (`to_text`).
impl<B: Block> std::fmt::Debug for Stimulus<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Stimulus {{ {} {}, {} cycles, seed {}, {:?} }}",
            B::NAME,
            self.params.label(),
            self.cycles.len(),
            self.seed,
            self.config
        )
    }
}

impl<B: Block> Stimulus<B> {
    /// Writes the text form.
    pub fn to_text(&self) -> String {
        let p = &self.params;
        let mut s = String::new();
        writeln!(s, "# switchsim stimulus v1").unwrap();
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
        s
    }

    /// Parses the text form for block `B`. `variants` are the structural
    /// variants that exist; errors name the line, the field and the problem.
    pub fn from_text(text: &str, variants: &[B::Params]) -> Result<Self, String> {
        let mut params = None;
        let mut config = None;
        let mut seed = 0u64;
        let mut cycles = Vec::new();
        let mut il: Option<Layout> = None;
        for (n, raw) in text.lines().enumerate() {
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
                "reset" => {
                    if config.is_none() {
                        return Err(err("cycle before `config`".into()));
                    }
                    cycles.push(Cycle::Reset);
                }
                "c" => {
                    let (Some(p), Some(l)) = (params.as_ref(), il.as_ref()) else {
                        return Err(err("cycle before `variant`".into()));
                    };
                    if config.is_none() {
                        return Err(err("cycle before `config`".into()));
                    }
                    let mut w = vec![0u32; l.words];
                    fill(l, rest, &mut w, None).map_err(err)?;
                    cycles.push(Cycle::Drive(B::Inputs::unpack(p, &w)));
                }
                other => return Err(err(format!("unknown keyword `{other}`"))),
            }
        }
        let params = params.ok_or("no `variant` line")?;
        let config = config.ok_or("no `config` line")?;
        Ok(Stimulus {
            params,
            config,
            cycles,
            seed,
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
