//! What is verilated: a [`Design`] names the RTL files, the top module, its
//! parameters, and how its ports meet a block's port declaration (the
//! [`PortMap`]); with the block's [`Alignment`] it is everything the lockstep
//! runner needs to verify an RTL against the golden model.
//!
//! The project's own RTL is [`Design::ours`]: `rtl/<block>.v` and what it
//! instantiates, every port named as declared. A designer's RTL is
//! [`Design::user`]: their files, their top module, and a map file
//! ([`UserMap`], TOML, see `docs/your-rtl.md`) that renames ports, sets the
//! latency and clocks per step, and names state paths.

use anyhow::{anyhow, bail, Context, Result};
use model::port::PortDesc;
use model::timing::{Alignment, Compare, StatePath};
use model::{Block, Params, PortGroup};
use std::path::{Path, PathBuf};

/// How the RTL's ports meet the declaration: the RTL name of every declared
/// port, the clock and reset, constant inputs, and the signals read besides
/// the outputs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PortMap {
    /// The clock input.
    pub clock: String,
    /// The reset input.
    pub reset: String,
    /// Whether the reset is active low (`rst_ni`); active high otherwise.
    pub reset_active_low: bool,
    /// The RTL name of each declared input (configuration, then inputs;
    /// `rst_ni` is [`PortMap::reset`]), in declaration order.
    pub inputs: Vec<String>,
    /// The RTL name of each declared output, in declaration order; `None`
    /// for an optional output the RTL does not have (not compared).
    pub outputs: Vec<Option<String>>,
    /// RTL inputs outside the declaration, tied to a constant.
    pub ties: Vec<(String, u64)>,
    /// An RTL output outside the declaration, read beside the outputs: the
    /// strobe of [`Compare::Strobe`].
    pub strobe: Option<String>,
    /// RTL outputs outside the declaration that are not read (debug views).
    pub ignore: Vec<String>,
    /// Registers read through Verilator's public signals, compared with
    /// fields of the model's `State`.
    pub state: Vec<StatePath>,
}

/// Which Verilator flags apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The project's RTL: every lint warning is an error.
    Ours,
    /// A designer's RTL: lint warnings are reported, not fatal.
    User,
    /// A mutant of the mutation campaign (built once, run once).
    Mutant,
}

/// An RTL design to verilate for block `block`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Design {
    /// The block whose declaration the ports follow.
    pub block: &'static str,
    /// The variant label (`Params::label`).
    pub label: String,
    /// The top module.
    pub top: String,
    /// The Verilog files, the top module's first.
    pub files: Vec<PathBuf>,
    /// Parameter overrides (`-G`).
    pub generics: Vec<(String, u64)>,
    /// Declared inputs: `rst_ni`, configuration, inputs (their shapes).
    pub inputs: Vec<PortDesc>,
    /// Declared outputs.
    pub outputs: Vec<PortDesc>,
    /// Declared state (the model's registers), for [`PortMap::state`].
    pub state: Vec<PortDesc>,
    /// The ports' RTL names.
    pub map: PortMap,
    /// Modules kept as classes of their own in the C++ (not inlined): the
    /// blocks a top level instantiates many times, so that the C++ and its
    /// compile time grow with the kinds of module, not with their number.
    pub no_inline: Vec<String>,
    /// Which flags.
    pub origin: Origin,
    /// Compiled at `-O0`: for a design built to be run once on a short
    /// stimulus (a mutant), where the compile time is all the cost.
    pub quick: bool,
    /// Run long: the block's default variant (what `make run`, the soak,
    /// the benchmarks and the memory test run for 10^5 cycles and more) and
    /// a designer's RTL. Another variant of ours is compiled at `-O1`: the
    /// tests run it on short stimuli (`builder::Generated::opt`).
    pub runs_long: bool,
}

/// The project's `rtl/` folder (`SWITCHSIM_RTL` overrides it).
pub fn rtl_dir() -> PathBuf {
    std::env::var_os("SWITCHSIM_RTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl"))
}

/// A Verilog file's code with its line comments left out: whether an
/// optional output (a view of state that an RTL may keep off its ports) is
/// there is read from it. A wrong guess cannot pass silently: `check_ports`
/// fails the build on a mapped output the verilated top lacks and on an
/// output of the top that is not mapped.
struct Code(String);

impl Code {
    fn read(f: &Path) -> Result<Code> {
        let src = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        Ok(Code(
            src.lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n"),
        ))
    }

    fn mentions(&self, name: &str) -> bool {
        self.0
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == name)
    }
}

impl Design {
    /// The project's RTL of `B` at variant `p`: `rtl/<block>.v` and what it
    /// instantiates, every port named as declared, the state paths of
    /// `B::alignment`.
    pub fn ours<B: Block>(p: &B::Params) -> Result<Design> {
        let dir = rtl_dir();
        let files = crate::toolchain::rtl_files(&dir, B::NAME)
            .with_context(|| format!("reading {}", dir.display()))?;
        if !files[0].exists() {
            bail!("{} is missing", files[0].display());
        }
        let inputs = model::rtl_inputs::<B>(p);
        let outputs = B::Outputs::ports(p);
        let al = B::alignment(p);
        let code = Code::read(&files[0])?;
        let no_inline = files[1..]
            .iter()
            .filter_map(|f| f.file_stem()?.to_str().map(str::to_string))
            .filter(|m| !m.starts_with("prim_"))
            .collect();
        Ok(Design {
            block: B::NAME,
            label: p.label(),
            top: B::NAME.to_string(),
            files,
            generics: p
                .verilog()
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            map: PortMap {
                clock: "clk_i".into(),
                reset: "rst_ni".into(),
                reset_active_low: true,
                inputs: inputs[1..].iter().map(|d| d.name.to_string()).collect(),
                outputs: outputs
                    .iter()
                    .map(|d| {
                        (!al.optional.iter().any(|o| o == d.name) || code.mentions(d.name))
                            .then(|| d.name.to_string())
                    })
                    .collect(),
                ties: Vec::new(),
                ignore: Vec::new(),
                strobe: match &al.compare {
                    Compare::Strobe(s) => Some(s.clone()),
                    Compare::Latency => None,
                },
                state: al.state.clone(),
            },
            state: B::State::ports(p),
            inputs,
            outputs,
            no_inline,
            origin: Origin::Ours,
            quick: false,
            runs_long: B::variants().first().map(|v| v.label()) == Some(p.label()),
        })
    }

    /// A designer's RTL of `B` at variant `p`: `files` (the top module's
    /// first), `top` (default: the map's, else the block's name), ports
    /// renamed by `map`. Returns the design and the alignment: the block's
    /// own with the map's settings over it.
    pub fn user<B: Block>(
        p: &B::Params,
        files: &[PathBuf],
        top: Option<&str>,
        map: &UserMap,
    ) -> Result<(Design, Alignment)> {
        if files.is_empty() {
            bail!("--rtl: no Verilog file given");
        }
        for f in files {
            if !f.is_file() {
                bail!("--rtl: {} does not exist", f.display());
            }
        }
        let inputs = model::rtl_inputs::<B>(p);
        let outputs = B::Outputs::ports(p);
        let state = B::State::ports(p);
        map.check_names::<B>(p)?;
        let mut al = B::alignment(p);
        map.apply(&mut al);
        let rename = |n: &str| map.ports.get(n).cloned().unwrap_or_else(|| n.to_string());
        // An optional output the map does not name is taken as present iff
        // the top file's code names it.
        let code = Code::read(&files[0])?;
        let outs = outputs
            .iter()
            .map(|d| {
                let optional = al.optional.iter().any(|o| o == d.name);
                let absent = map.absent.iter().any(|a| a == d.name)
                    || (optional && !map.ports.contains_key(d.name) && !code.mentions(d.name));
                (!absent).then(|| rename(d.name))
            })
            .collect();
        let design = Design {
            block: B::NAME,
            label: p.label(),
            top: top
                .map(str::to_string)
                .or_else(|| map.top.clone())
                .unwrap_or_else(|| B::NAME.to_string()),
            files: files.to_vec(),
            generics: map.generics(p),
            map: PortMap {
                clock: map.clock.clone().unwrap_or_else(|| "clk_i".into()),
                reset: map.reset.clone().unwrap_or_else(|| "rst_ni".into()),
                reset_active_low: map.reset_active_low.unwrap_or(true),
                inputs: inputs[1..].iter().map(|d| rename(d.name)).collect(),
                outputs: outs,
                ties: map.ties.clone(),
                ignore: map.ignore.clone(),
                strobe: match &al.compare {
                    Compare::Strobe(s) => Some(s.clone()),
                    Compare::Latency => None,
                },
                state: al.state.clone(),
            },
            inputs,
            outputs,
            state,
            no_inline: Vec::new(),
            origin: Origin::User,
            quick: false,
            runs_long: true,
        };
        Ok((design, al))
    }

    /// The name of the build: `<block>_<label>` for the project's RTL,
    /// `<block>_<label>_<top>` for another (an identifier: the C++ prefix is
    /// `V` and this).
    pub fn name(&self) -> String {
        let base = format!("{}_{}", self.block, self.label);
        let s = match self.origin {
            Origin::Ours => base,
            Origin::User | Origin::Mutant => format!("{base}_{}", self.top),
        };
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }

    /// Bytes of Verilog the design reads (a file that cannot be read counts
    /// 0: its build fails with the reason).
    pub fn source_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Words of the packed inputs: `rst_ni`, configuration, inputs.
    pub fn in_words(&self) -> usize {
        self.inputs.iter().map(|d| d.shape.words()).sum()
    }

    /// Words of the packed outputs (absent optional outputs read as zero).
    pub fn out_words(&self) -> usize {
        self.outputs.iter().map(|d| d.shape.words()).sum()
    }

    /// Words read beside the outputs: the strobe, if any.
    pub fn aux_words(&self) -> usize {
        usize::from(self.map.strobe.is_some())
    }

    /// Words of the state read through [`PortMap::state`], in its order.
    pub fn state_words(&self) -> usize {
        self.map
            .state
            .iter()
            .filter_map(|s| self.state.iter().find(|d| d.name == s.field))
            .map(|d| d.shape.words())
            .sum()
    }
}

/// A designer's map file (TOML): how their RTL meets a block's declaration.
///
/// ```toml
/// top = "my_mmu"                 # the top module (or --top)
/// clock = "clk"                  # default clk_i
/// reset = "rst_n"                # default rst_ni
/// reset_active_low = true        # default true
/// clocks_per_step = 1            # K: RTL clocks per model step
/// latency = 0                    # default output latency, RTL clocks
/// strobe = "out_valid"           # compare when this output is high
/// pulse = ["arr_valid_i"]        # inputs driven in a step's first clock only
/// ignore = ["dbg_state"]         # your extra outputs, not compared
///
/// [ports]                        # declared name = your name
/// arr_valid_i = "in_valid"
/// verdict_o = { name = "verdict", latency = 1 }
/// q_priv_o = false               # an optional output your RTL lacks
///
/// [state]                        # model register = your signal
/// priv_q = "u_core.priv_cnt"
///
/// [tie]                          # your extra inputs, held constant
/// scan_en = 0
///
/// [parameters]                   # your parameter = a declared one, or a number
/// NPORTS = "P"
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserMap {
    /// The file it came from (for messages).
    pub path: PathBuf,
    /// The top module.
    pub top: Option<String>,
    /// The clock input.
    pub clock: Option<String>,
    /// The reset input.
    pub reset: Option<String>,
    /// Reset polarity.
    pub reset_active_low: Option<bool>,
    /// RTL clocks per model step.
    pub clocks_per_step: Option<u32>,
    /// Default output latency.
    pub latency: Option<u32>,
    /// The strobe output.
    pub strobe: Option<String>,
    /// Inputs driven in a step's first clock only.
    pub pulse: Option<Vec<String>>,
    /// Extra RTL outputs not compared.
    pub ignore: Vec<String>,
    /// Declared name -> RTL name.
    pub ports: std::collections::BTreeMap<String, String>,
    /// Per-output latencies.
    pub port_latency: Vec<(String, u32)>,
    /// Optional outputs the RTL lacks.
    pub absent: Vec<String>,
    /// State field -> RTL path (and latency).
    pub state: Vec<StatePath>,
    /// Extra RTL inputs held constant.
    pub ties: Vec<(String, u64)>,
    /// Their parameter -> a declared parameter's name or a number.
    pub parameters: Vec<(String, ParamValue)>,
}

/// The value of one of the designer's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamValue {
    /// The value of a declared (Verilog) parameter of the variant.
    Declared(String),
    /// A number.
    Number(u64),
}

impl UserMap {
    /// Parses a map file.
    pub fn load(path: &Path) -> Result<UserMap> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&text, path).map_err(|e| anyhow!("{}: {e}", path.display()))
    }

    /// Parses the text of a map file (`path` only names it).
    pub fn parse(text: &str, path: &Path) -> Result<UserMap, String> {
        let t: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| e.to_string().lines().next().unwrap_or("").to_string())?;
        let mut m = UserMap {
            path: path.to_path_buf(),
            ..UserMap::default()
        };
        let string = |k: &str, v: &toml::Value| -> Result<String, String> {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("`{k}` must be a string"))
        };
        let count = |k: &str, v: &toml::Value, lo: i64| -> Result<u32, String> {
            match v.as_integer() {
                Some(n) if n >= lo && n <= 1 << 20 => Ok(n as u32),
                _ => Err(format!("`{k}` must be an integer of at least {lo}")),
            }
        };
        for (k, v) in &t {
            match k.as_str() {
                "top" => m.top = Some(string(k, v)?),
                "clock" => m.clock = Some(string(k, v)?),
                "reset" => m.reset = Some(string(k, v)?),
                "reset_active_low" => {
                    m.reset_active_low = Some(
                        v.as_bool()
                            .ok_or("`reset_active_low` must be true or false")?,
                    )
                }
                "clocks_per_step" => m.clocks_per_step = Some(count(k, v, 1)?),
                "latency" => m.latency = Some(count(k, v, 0)?),
                "strobe" => m.strobe = Some(string(k, v)?),
                "pulse" | "ignore" => {
                    let a = v
                        .as_array()
                        .ok_or_else(|| format!("`{k}` must be a list of port names"))?;
                    let names = a
                        .iter()
                        .map(|x| string(k, x))
                        .collect::<Result<Vec<_>, _>>()?;
                    if k == "pulse" {
                        m.pulse = Some(names);
                    } else {
                        m.ignore = names;
                    }
                }
                "ports" => {
                    let tab = v.as_table().ok_or("[ports] must be a table")?;
                    for (decl, x) in tab {
                        match x {
                            toml::Value::String(s) => {
                                m.ports.insert(decl.clone(), s.clone());
                            }
                            toml::Value::Boolean(false) => m.absent.push(decl.clone()),
                            toml::Value::Table(e) => {
                                for (ek, ev) in e {
                                    match ek.as_str() {
                                        "name" => {
                                            m.ports.insert(decl.clone(), string("name", ev)?);
                                        }
                                        "latency" => m
                                            .port_latency
                                            .push((decl.clone(), count("latency", ev, 0)?)),
                                        _ => {
                                            return Err(format!(
                                                "[ports] {decl}: unknown key `{ek}` (name, latency)"
                                            ))
                                        }
                                    }
                                }
                            }
                            _ => {
                                return Err(format!(
                                    "[ports] {decl}: expected your port's name, \
                                     {{ name = .., latency = .. }}, or false"
                                ))
                            }
                        }
                    }
                }
                "state" => {
                    let tab = v.as_table().ok_or("[state] must be a table")?;
                    for (field, x) in tab {
                        let (path, latency) = match x {
                            toml::Value::String(s) => (s.clone(), 0),
                            toml::Value::Table(e) => (
                                e.get("path")
                                    .and_then(|p| p.as_str())
                                    .ok_or_else(|| format!("[state] {field}: `path` missing"))?
                                    .to_string(),
                                match e.get("latency") {
                                    Some(l) => count("latency", l, 0)?,
                                    None => 0,
                                },
                            ),
                            _ => {
                                return Err(format!(
                                    "[state] {field}: expected a signal path or {{ path = .., latency = .. }}"
                                ))
                            }
                        };
                        m.state.push(StatePath {
                            field: field.clone(),
                            path,
                            latency,
                        });
                    }
                }
                "tie" => {
                    let tab = v.as_table().ok_or("[tie] must be a table")?;
                    for (name, x) in tab {
                        let n = x
                            .as_integer()
                            .filter(|&n| n >= 0)
                            .ok_or_else(|| format!("[tie] {name}: expected a number >= 0"))?;
                        m.ties.push((name.clone(), n as u64));
                    }
                }
                "parameters" => {
                    let tab = v.as_table().ok_or("[parameters] must be a table")?;
                    for (name, x) in tab {
                        let pv = match x {
                            toml::Value::String(s) => ParamValue::Declared(s.clone()),
                            toml::Value::Integer(n) if *n >= 0 => ParamValue::Number(*n as u64),
                            _ => {
                                return Err(format!(
                                    "[parameters] {name}: expected a declared parameter's name or a number"
                                ))
                            }
                        };
                        m.parameters.push((name.clone(), pv));
                    }
                }
                other => {
                    return Err(format!(
                        "unknown key `{other}` (top, clock, reset, reset_active_low, \
                         clocks_per_step, latency, strobe, pulse, ignore, [ports], [state], [tie], \
                         [parameters])"
                    ))
                }
            }
        }
        Ok(m)
    }

    /// Checks that every declared name the map uses is one of `B`'s.
    fn check_names<B: Block>(&self, p: &B::Params) -> Result<()> {
        let ins = model::rtl_inputs::<B>(p);
        let outs = B::Outputs::ports(p);
        let st = B::State::ports(p);
        let is_in = |n: &str| ins[1..].iter().any(|d| d.name == n);
        let is_out = |n: &str| outs.iter().any(|d| d.name == n);
        let mut errors = Vec::new();
        let known = || {
            let v: Vec<&str> = ins[1..].iter().chain(outs.iter()).map(|d| d.name).collect();
            v.join(", ")
        };
        for n in self.ports.keys() {
            if !is_in(n) && !is_out(n) {
                errors.push(format!(
                    "[ports] {n}: not a port of {} ({})",
                    B::NAME,
                    known()
                ));
            }
        }
        let al = B::alignment(p);
        for n in &self.absent {
            if !is_out(n) {
                errors.push(format!("[ports] {n} = false: not an output of {}", B::NAME));
            } else if !al.optional.iter().any(|o| o == n) {
                errors.push(format!(
                    "[ports] {n} = false: {} needs this output (optional ones: {})",
                    B::NAME,
                    if al.optional.is_empty() {
                        "none".to_string()
                    } else {
                        al.optional.join(", ")
                    }
                ));
            }
        }
        for (n, _) in &self.port_latency {
            if !is_out(n) {
                errors.push(format!(
                    "[ports] {n}: a latency is for outputs; {n} is not an output of {}",
                    B::NAME
                ));
            }
        }
        for n in self.pulse.iter().flatten() {
            if !is_in(n) {
                errors.push(format!("pulse: {n} is not an input of {}", B::NAME));
            }
        }
        for s in &self.state {
            if !st.iter().any(|d| d.name == s.field) {
                let fields: Vec<&str> = st.iter().map(|d| d.name).collect();
                errors.push(format!(
                    "[state] {}: not a register of the {} model ({})",
                    s.field,
                    B::NAME,
                    fields.join(", ")
                ));
            }
        }
        let decl = p.verilog();
        for (name, v) in &self.parameters {
            if let ParamValue::Declared(d) = v {
                if !decl.iter().any(|(k, _)| k == d) {
                    let ks: Vec<&str> = decl.iter().map(|(k, _)| *k).collect();
                    errors.push(format!(
                        "[parameters] {name} = \"{d}\": not a parameter of {} ({})",
                        B::NAME,
                        ks.join(", ")
                    ));
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(anyhow!(
                "{}: {}",
                self.path.display(),
                errors.join(&format!("\n{}: ", self.path.display()))
            ))
        }
    }

    /// The block's alignment with this map's settings over it.
    fn apply(&self, al: &mut Alignment) {
        if let Some(k) = self.clocks_per_step {
            al.clocks_per_step = k;
            if self.latency.is_none() {
                al.latency = k - 1;
            }
        }
        if let Some(l) = self.latency {
            al.latency = l;
        }
        for (n, l) in &self.port_latency {
            al.port_latency.retain(|(m, _)| m != n);
            al.port_latency.push((n.clone(), *l));
        }
        if let Some(s) = &self.strobe {
            al.compare = Compare::Strobe(s.clone());
        }
        if let Some(p) = &self.pulse {
            al.pulse = p.clone();
        }
        if !self.state.is_empty() {
            al.state = self.state.clone();
        } else {
            // The block's own state paths name signals of its RTL, not theirs.
            al.state.clear();
        }
    }

    /// The `-G` overrides: the declared parameters by their names, renamed
    /// or set as the map says (a parameter the map names replaces the
    /// declared one of the same value's name).
    fn generics<P: Params>(&self, p: &P) -> Vec<(String, u64)> {
        let decl = p.verilog();
        if self.parameters.is_empty() {
            return decl.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        }
        self.parameters
            .iter()
            .map(|(name, v)| {
                let value = match v {
                    ParamValue::Number(n) => *n,
                    ParamValue::Declared(d) => decl
                        .iter()
                        .find(|(k, _)| k == d)
                        .map(|(_, v)| *v)
                        .expect("checked"),
                };
                (name.clone(), value)
            })
            .collect()
    }
}
