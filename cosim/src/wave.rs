//! Waveforms written from the Rust side, with the same hierarchy, names and
//! timescale as Verilator's VCD of the RTL:
//!
//! ```text
//! $timescale 100ps            one cycle = 10 units = 1 ns
//! $scope module TOP           clk_i, rst_ni and every port
//!   $scope module <block>     the same ports, plus the model's registers
//! ```
//!
//! Cycle `n` (counting the reset cycles) starts at time `10 n` with the
//! rising edge (none at `n = 0`); the clock falls at `10 n + 5`. Where the
//! RTL takes `K` clocks per model step, the time axis is the RTL's clock:
//! the model's step `t` starts at `10 t K`, and both waveforms carry a
//! `step` signal, the model step whose inputs are applied.

use anyhow::{Context, Result};
use model::port::{get_bits, Layout, Radix};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use vcd::{IdCode, ReferenceIndex, TimescaleUnit, Value, VarType, Writer};

/// Time units (100 ps) per clock cycle.
pub const UNITS_PER_CYCLE: u64 = 10;

/// The variables of one port group in a VCD, and the last values written.
pub struct Signals {
    layout: Layout,
    ids: Vec<IdCode>,
    prev: Option<Vec<u32>>,
}

impl Signals {
    /// Declares one variable per port of `layout` in the current scope.
    pub fn declare<W: Write>(w: &mut Writer<W>, layout: &Layout) -> io::Result<Self> {
        let mut ids = Vec::with_capacity(layout.ports.len());
        for p in &layout.ports {
            ids.push(add_var(w, p.shape.bits(), p.name, None)?);
        }
        Ok(Signals {
            layout: layout.clone(),
            ids,
            prev: None,
        })
    }

    /// Declares the same variables again (aliases) in the current scope.
    pub fn alias<W: Write>(&self, w: &mut Writer<W>) -> io::Result<()> {
        for (p, id) in self.layout.ports.iter().zip(&self.ids) {
            add_var(w, p.shape.bits(), p.name, Some(*id))?;
        }
        Ok(())
    }

    /// Writes the ports whose value changed since the last call.
    pub fn emit<W: Write>(&mut self, w: &mut Writer<W>, words: &[u32]) -> io::Result<()> {
        for (k, p) in self.layout.ports.iter().enumerate() {
            let now = self.layout.slice(words, k);
            let changed = match &self.prev {
                None => true,
                Some(prev) => self.layout.slice(prev, k) != now,
            };
            if changed {
                write_value(w, self.ids[k], p.shape.bits(), now)?;
            }
        }
        match &mut self.prev {
            Some(prev) => prev.copy_from_slice(words),
            None => self.prev = Some(words.to_vec()),
        }
        Ok(())
    }
}

fn add_var<W: Write>(
    w: &mut Writer<W>,
    bits: u32,
    name: &str,
    id: Option<IdCode>,
) -> io::Result<IdCode> {
    let index = (bits > 1).then(|| ReferenceIndex::Range(bits as i32 - 1, 0));
    match id {
        Some(id) => {
            w.var_def(VarType::Wire, bits, id, name, index)?;
            Ok(id)
        }
        None => w.add_var(VarType::Wire, bits, name, index),
    }
}

/// Writes one value change (a scalar for 1-bit signals).
pub fn write_value<W: Write>(
    w: &mut Writer<W>,
    id: IdCode,
    bits: u32,
    words: &[u32],
) -> io::Result<()> {
    if bits == 1 {
        return w.change_scalar(id, words[0] & 1 != 0);
    }
    let v = (0..bits).rev().map(|b| {
        if get_bits(words, b, 1) != 0 {
            Value::V1
        } else {
            Value::V0
        }
    });
    w.change_vector(id, v)
}

/// Opens a VCD file and writes the common header lines.
pub fn open(path: &Path, comment: &str) -> Result<Writer<BufWriter<File>>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = Writer::new(BufWriter::new(f));
    w.comment(comment)?;
    w.timescale(100, TimescaleUnit::PS)?;
    Ok(w)
}

/// The golden model's waveform.
pub struct ModelWave {
    w: Writer<BufWriter<File>>,
    path: PathBuf,
    clk: IdCode,
    rst: IdCode,
    step: Option<IdCode>,
    k: u64,
    cfg: Signals,
    inp: Signals,
    out: Signals,
    st: Signals,
    n: u64,
}

impl ModelWave {
    /// Creates `path` with the ports of the given layouts and the registers;
    /// one step every `k` RTL clocks (with a `step` signal when `k` > 1 or
    /// `with_step`).
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        path: &Path,
        block: &str,
        cfg: &Layout,
        inp: &Layout,
        out: &Layout,
        state: &Layout,
        k: u64,
        with_step: bool,
    ) -> Result<Self> {
        let mut w = open(path, &format!("golden model of `{block}` (switchsim)"))?;
        w.add_module("TOP")?;
        let clk = w.add_wire(1, "clk_i")?;
        let rst = w.add_wire(1, "rst_ni")?;
        let step = if with_step || k > 1 {
            Some(w.add_wire(32, "step")?)
        } else {
            None
        };
        let cfg = Signals::declare(&mut w, cfg)?;
        let inp = Signals::declare(&mut w, inp)?;
        let out = Signals::declare(&mut w, out)?;
        w.add_module(block)?;
        w.var_def(VarType::Wire, 1, clk, "clk_i", None)?;
        w.var_def(VarType::Wire, 1, rst, "rst_ni", None)?;
        cfg.alias(&mut w)?;
        inp.alias(&mut w)?;
        out.alias(&mut w)?;
        let st = Signals::declare(&mut w, state)?;
        w.upscope()?;
        w.upscope()?;
        w.enddefinitions()?;
        Ok(ModelWave {
            w,
            path: path.to_path_buf(),
            clk,
            rst,
            step,
            k: k.max(1),
            cfg,
            inp,
            out,
            st,
            n: 0,
        })
    }

    /// Records one cycle: the registers at its start, its inputs and outputs.
    pub fn cycle(
        &mut self,
        reset: bool,
        cfg: &[u32],
        inp: &[u32],
        out: &[u32],
        state: &[u32],
    ) -> Result<()> {
        let t = self.n * self.k * UNITS_PER_CYCLE;
        let w = &mut self.w;
        w.timestamp(t)?;
        w.change_scalar(self.clk, self.n > 0)?;
        w.change_scalar(self.rst, !reset)?;
        if let Some(id) = self.step {
            write_value(w, id, 32, &[self.n as u32])?;
        }
        self.cfg.emit(w, cfg)?;
        self.inp.emit(w, inp)?;
        self.out.emit(w, out)?;
        self.st.emit(w, state)?;
        w.timestamp(t + UNITS_PER_CYCLE / 2)?;
        w.change_scalar(self.clk, false)?;
        self.n += 1;
        Ok(())
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.w.timestamp(self.n * self.k * UNITS_PER_CYCLE)?;
        self.w.flush()?;
        Ok(self.path)
    }
}

/// One waveform with both sides: the configuration, clock, reset and inputs
/// once under `TOP`, the model's outputs and registers under `TOP.model`,
/// the RTL's outputs under `TOP.rtl`, and `TOP.mismatch`, high in every cycle
/// whose outputs differ (so it rises at the first divergent cycle).
pub struct MergedWave {
    w: Writer<BufWriter<File>>,
    path: PathBuf,
    clk: IdCode,
    rst: IdCode,
    mismatch: IdCode,
    step: Option<IdCode>,
    cfg: Signals,
    inp: Signals,
    model: Signals,
    state: Signals,
    rtl: Signals,
    n: u64,
    first_mismatch: Option<u64>,
}

impl MergedWave {
    /// Creates `path`; with `with_step`, a `step` signal names the model
    /// step whose inputs each RTL clock applies.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        path: &Path,
        block: &str,
        cfg: &Layout,
        inp: &Layout,
        out: &Layout,
        state: &Layout,
        with_step: bool,
    ) -> Result<Self> {
        let mut w = open(
            path,
            &format!("golden model and RTL of `{block}`, merged (switchsim)"),
        )?;
        w.add_module("TOP")?;
        let mismatch = w.add_wire(1, "mismatch")?;
        let clk = w.add_wire(1, "clk_i")?;
        let rst = w.add_wire(1, "rst_ni")?;
        let step = if with_step {
            Some(w.add_wire(32, "step")?)
        } else {
            None
        };
        let cfg = Signals::declare(&mut w, cfg)?;
        let inp = Signals::declare(&mut w, inp)?;
        w.add_module("model")?;
        let model = Signals::declare(&mut w, out)?;
        let state = Signals::declare(&mut w, state)?;
        w.upscope()?;
        w.add_module("rtl")?;
        let rtl = Signals::declare(&mut w, out)?;
        w.upscope()?;
        w.upscope()?;
        w.enddefinitions()?;
        Ok(MergedWave {
            w,
            path: path.to_path_buf(),
            clk,
            rst,
            mismatch,
            step,
            cfg,
            inp,
            model,
            state,
            rtl,
            n: 0,
            first_mismatch: None,
        })
    }

    /// Records one clock of both sides: `model_out` are the model's outputs
    /// compared in this clock (or last compared), `differ` whether a
    /// compared one differs, `step` the model step whose inputs apply.
    #[allow(clippy::too_many_arguments)]
    pub fn cycle(
        &mut self,
        reset: bool,
        cfg: &[u32],
        inp: &[u32],
        model_out: &[u32],
        state: &[u32],
        rtl_out: &[u32],
        differ: bool,
        step: Option<u32>,
    ) -> Result<()> {
        let t = self.n * UNITS_PER_CYCLE;
        if differ && self.first_mismatch.is_none() {
            self.first_mismatch = Some(self.n);
        }
        let w = &mut self.w;
        w.timestamp(t)?;
        w.change_scalar(self.clk, self.n > 0)?;
        w.change_scalar(self.rst, !reset)?;
        w.change_scalar(self.mismatch, differ)?;
        if let (Some(id), Some(k)) = (self.step, step) {
            write_value(w, id, 32, &[k])?;
        }
        self.cfg.emit(w, cfg)?;
        self.inp.emit(w, inp)?;
        self.model.emit(w, model_out)?;
        self.state.emit(w, state)?;
        self.rtl.emit(w, rtl_out)?;
        w.timestamp(t + UNITS_PER_CYCLE / 2)?;
        w.change_scalar(self.clk, false)?;
        self.n += 1;
        Ok(())
    }

    /// Flushes the file and writes the GTKWave save file next to it
    /// (`<name>.gtkw`): mismatch on top, clock, reset, the inputs, then each
    /// output as a model / RTL pair, the model's registers last; the marker
    /// and the view on the first divergent cycle, if any. Buses declared
    /// [`Radix::Hex`] open in hex; enumerations ([`Radix::Names`]) through a
    /// GTKWave translate filter file, `<name>.<port>.names`, written beside
    /// it.
    ///
    /// The save file names the VCD, the filters and itself (`[savefile]`)
    /// by absolute path: when the folder has moved and the VCD is not where
    /// it was, GTKWave looks for it (and the filters) at the same place
    /// relative to the save file (`find_dumpfile` and
    /// `get_relative_adjusted_name` in its `savefile.c`), so the folder can
    /// be copied anywhere (a CI artifact) and still open.
    pub fn finish(mut self, block: &str) -> Result<(PathBuf, PathBuf)> {
        self.w.timestamp(self.n * UNITS_PER_CYCLE)?;
        self.w.flush()?;
        let gtkw = self.path.with_extension("gtkw");
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let vcd_name = abs(&self.path);
        let mut g = String::new();
        use std::fmt::Write as _;
        // One translate filter file per enumerated port, numbered from 1.
        let mut filters: Vec<(&'static str, PathBuf)> = Vec::new();
        let groups = [
            &self.inp.layout,
            &self.model.layout,
            &self.state.layout,
            &self.cfg.layout,
        ];
        for p in groups.iter().flat_map(|l| &l.ports) {
            if let Radix::Names(names) = p.radix {
                if p.shape.is_vec || filters.iter().any(|(n, _)| *n == p.name) {
                    continue;
                }
                let path = vcd_name.with_extension(format!("{}.names", p.name));
                let text: String = names
                    .iter()
                    .enumerate()
                    .map(|(k, n)| format!("{k} {n}\n"))
                    .collect();
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                filters.push((p.name, path));
            }
        }
        // `+{alias}` names the trace `model:x` / `rtl:x` in the viewer; the
        // flags line before it picks the radix (GTKWave's TR_* bits: 0x20
        // right-justify, 0x04 decimal, 0x02 hex, 0x2000 translate filter).
        let sig = |scope: &str, p: &model::PortDesc| {
            let full = if p.shape.bits() > 1 {
                format!("TOP.{scope}{}[{}:0]", p.name, p.shape.bits() - 1)
            } else {
                format!("TOP.{scope}{}", p.name)
            };
            let trace = match scope.strip_suffix('.') {
                // A dot in an alias reads as hierarchy: use `model:x`.
                Some(side) => format!("+{{{side}:{}}} {full}", p.name),
                None => full,
            };
            let filter = filters.iter().position(|(n, _)| *n == p.name);
            match (p.radix, filter) {
                (Radix::Names(_), Some(k)) => {
                    format!("@2024\n^{} {}\n{trace}\n@24", k + 1, filters[k].1.display())
                }
                (Radix::Hex, _) => format!("@22\n{trace}\n@24"),
                _ => trace,
            }
        };
        writeln!(
            g,
            "[*] GTKWave save file written by switchsim for `{block}`"
        )?;
        writeln!(g, "[dumpfile] \"{}\"", vcd_name.display())?;
        writeln!(g, "[savefile] \"{}\"", abs(&gtkw).display())?;
        // GTKWave save files count time in the base unit (ps), not in
        // timescale units (100 ps).
        let ps = |units: u64| units * 100;
        let marker = self.first_mismatch.map(|n| ps(n * UNITS_PER_CYCLE));
        let start = marker.map_or(0, |m| m.saturating_sub(ps(20 * UNITS_PER_CYCLE)));
        writeln!(g, "[timestart] {start}")?;
        writeln!(g, "[size] 1600 900")?;
        writeln!(g, "[sst_width] 260")?;
        writeln!(g, "[signals_width] 320")?;
        writeln!(
            g,
            "*-13.000000 {} {}",
            marker.map_or(-1i64, |m| m as i64),
            vec!["-1"; 26].join(" ")
        )?;
        writeln!(g, "[treeopen] TOP.")?;
        writeln!(g, "@28")?;
        writeln!(g, "TOP.mismatch")?;
        writeln!(g, "TOP.clk_i")?;
        writeln!(g, "TOP.rst_ni")?;
        if self.step.is_some() {
            writeln!(g, "@24\nTOP.step[31:0]\n@28")?;
        }
        // Sections: a comment trace, then each port in the scopes given.
        let sections: [(String, &Layout, &[&str]); 4] = [
            ("inputs".into(), &self.inp.layout, &[""]),
            (
                format!("{block}: model / rtl"),
                &self.model.layout,
                &["model.", "rtl."],
            ),
            (
                format!("{block}: model registers"),
                &self.state.layout,
                &["model."],
            ),
            ("configuration".into(), &self.cfg.layout, &[""]),
        ];
        for (title, layout, scopes) in sections {
            writeln!(g, "@200\n-{title}\n@24")?;
            for p in &layout.ports {
                for scope in scopes {
                    writeln!(g, "{}", sig(scope, p))?;
                }
            }
        }
        std::fs::write(&gtkw, g).with_context(|| format!("writing {}", gtkw.display()))?;
        Ok((self.path, gtkw))
    }
}
