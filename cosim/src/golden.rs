//! Golden vectors and a self-checking Verilog testbench, for a second
//! simulator (Icarus Verilog) and for the mutation campaign.
//!
//! The vectors are the inputs of every cycle and the golden model's outputs,
//! as `$readmemh` files: one line per cycle, the ports concatenated in their
//! declaration order, the first port in the least significant bits
//! (`in.hex`: `rst_ni`, configuration, inputs; `out.hex`: outputs;
//! `chk.hex`: 1 where the cycle is compared). The testbench is generated from
//! the same port declaration: it instantiates the block with the variant's
//! parameters, applies each cycle's inputs with the clock low, waits for the
//! outputs to settle, compares every output port with `!==` (so an X or Z in
//! a 4-state simulator is a mismatch too), then raises the clock.

use crate::lockstep::POWER_ON_RESET;
use anyhow::{anyhow, Result};
use bitvec::prelude::*;
use model::port::{Layout, PortDesc};
use model::stim::{Cycle, Stimulus};
use model::{Block, Params, PortGroup};
use std::fmt::Write as _;

/// The golden vectors of one run.
pub struct Vectors {
    /// Input ports: `rst_ni`, configuration, inputs.
    pub inputs: Vec<PortDesc>,
    /// Output ports.
    pub outputs: Vec<PortDesc>,
    /// `in.hex` lines.
    pub in_hex: Vec<String>,
    /// `out.hex` lines.
    pub out_hex: Vec<String>,
    /// Whether each cycle is compared (not the first power-on cycle).
    pub check: Vec<bool>,
}

fn bits(ports: &[PortDesc]) -> u32 {
    ports.iter().map(|p| p.shape.bits()).sum()
}

/// Concatenates word-aligned packed groups into one bit vector, as hex.
fn hex_line(groups: &[(&Layout, &[u32])], total_bits: u32) -> String {
    // Not a hot path (a few thousand lines per Icarus run): `bitvec`
    // concatenates the ports' bit fields, LSB first.
    let mut bits: BitVec<u32, Lsb0> = BitVec::with_capacity(total_bits as usize);
    for (l, w) in groups {
        for (k, p) in l.ports.iter().enumerate() {
            bits.extend_from_bitslice(
                &l.slice(w, k).view_bits::<Lsb0>()[..p.shape.bits() as usize],
            );
        }
    }
    debug_assert_eq!(bits.len(), total_bits as usize);
    if bits.is_empty() {
        return "0".into();
    }
    bits.chunks(4)
        .rev()
        .map(|nib| char::from_digit(nib.load_le::<u32>(), 16).unwrap())
        .collect()
}

/// One RTL clock of the golden vectors: `rst_ni`, the packed inputs, the
/// packed expected outputs and whether they are compared in this clock.
struct Row {
    rst: u32,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    check: bool,
}

/// The RTL clocks of `stim`, power-on reset included, as the lockstep
/// runner drives them under the block's alignment (`docs/conventions.md`,
/// "Alignment"): `K` clocks per step with its inputs held, every output of
/// step `t` compared in clock `t K + L`; a reset step voids the comparisons
/// of earlier steps that fall at or after its first clock, and its own
/// outputs are compared only in the plain contract (`K = 1`, `L = 0`);
/// after the last step the inputs are zero until the last comparison.
/// One latency for every output, no pulse input, no strobe (the vectors
/// carry one compare bit per clock); state paths are not compared here.
fn rows<B: Block>(stim: &Stimulus<B>) -> Result<Vec<Row>> {
    let p = &stim.params;
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
    let al = B::alignment(p);
    let k = al.clocks_per_step.max(1) as usize;
    let lat = al.latency as usize;
    if al.compare != model::timing::Compare::Latency
        || al.port_latency.iter().any(|(_, l)| *l as usize != lat)
        || (k > 1 && !al.pulse.is_empty())
    {
        anyhow::bail!(
            "{}: golden vectors need one latency for every output and no strobe or pulse input",
            B::NAME
        );
    }
    let plain = k == 1 && lat == 0;
    let mut model = B::new(p, &stim.config);
    let zero = B::Inputs::zero(p);
    let mut reset_out = vec![0u32; ol.words];
    B::new(p, &stim.config)
        .step(&zero)
        .pack(p, &mut reset_out)
        .map_err(|e| anyhow!("{e}"))?;
    let steps = POWER_ON_RESET as usize + stim.cycles.len();
    let mut rows: Vec<Row> = Vec::with_capacity(steps * k + lat);
    let mut pending: Vec<(usize, Vec<u32>)> = Vec::new();
    for t in 0..steps {
        let s = t as i64 - POWER_ON_RESET as i64;
        let c = if s < 0 {
            &Cycle::Reset
        } else {
            &stim.cycles[s as usize]
        };
        let mut iw = vec![0u32; il.words];
        let (r, out) = match c {
            Cycle::Reset => {
                model = B::new(p, &stim.config);
                // The reset clears the pipeline: results due from now on
                // are not compared.
                pending.retain(|(at, _)| *at < t * k);
                (0, plain.then(|| reset_out.clone()))
            }
            Cycle::Drive(i) => {
                i.pack(p, &mut iw).map_err(|e| anyhow!("cycle {s}: {e}"))?;
                let mut ow = vec![0u32; ol.words];
                model
                    .step(i)
                    .pack(p, &mut ow)
                    .map_err(|e| anyhow!("cycle {s}: {e}"))?;
                (1, Some(ow))
            }
        };
        if let Some(ow) = out {
            if t >= 1 {
                pending.push((t * k + lat, ow));
            }
        }
        for _ in 0..k {
            rows.push(Row {
                rst: r,
                inputs: iw.clone(),
                outputs: vec![0u32; ol.words],
                check: false,
            });
        }
    }
    let last = pending.iter().map(|(at, _)| at + 1).max().unwrap_or(0);
    while rows.len() < last {
        rows.push(Row {
            rst: 1,
            inputs: vec![0u32; il.words],
            outputs: vec![0u32; ol.words],
            check: false,
        });
    }
    for (at, ow) in pending {
        rows[at].outputs = ow;
        rows[at].check = true;
    }
    Ok(rows)
}

/// Inputs and golden-model outputs of every RTL clock of `stim`, power-on
/// reset included (as the lockstep runner drives them; see [`rows`]).
pub fn vectors<B: Block>(stim: &Stimulus<B>) -> Result<Vectors> {
    let p = &stim.params;
    let cl = B::Config::layout(p);
    let il = B::Inputs::layout(p);
    let ol = B::Outputs::layout(p);
    let inputs = model::rtl_inputs::<B>(p);
    let rst = Layout::new(inputs[..1].to_vec());
    let in_bits = bits(&inputs);
    let out_bits = bits(&ol.ports);
    let cw = stim.config.to_words(p).map_err(|e| anyhow!("{e}"))?;
    let mut v = Vectors {
        inputs,
        outputs: ol.ports.clone(),
        in_hex: vec![],
        out_hex: vec![],
        check: vec![],
    };
    for row in rows(stim)? {
        v.in_hex.push(hex_line(
            &[(&rst, &[row.rst][..]), (&cl, &cw), (&il, &row.inputs)],
            in_bits,
        ));
        v.out_hex.push(hex_line(&[(&ol, &row.outputs)], out_bits));
        v.check.push(row.check);
    }
    Ok(v)
}

/// One cycle of word-aligned vectors: (compared, `rst_ni` + configuration +
/// inputs, expected outputs).
pub type WordCycle = (bool, Vec<u32>, Vec<u32>);

/// The same vectors word-aligned as the shim reads them.
pub fn vectors_words<B: Block>(stim: &Stimulus<B>) -> Result<Vec<WordCycle>> {
    let p = &stim.params;
    let cw = stim.config.to_words(p).map_err(|e| anyhow!("{e}"))?;
    Ok(rows(stim)?
        .into_iter()
        .map(|row| {
            let mut iw = Vec::with_capacity(1 + cw.len() + row.inputs.len());
            iw.push(row.rst);
            iw.extend_from_slice(&cw);
            iw.extend_from_slice(&row.inputs);
            (row.check, iw, row.outputs)
        })
        .collect())
}

/// The self-checking testbench for `vectors` of block `B`, variant `p`.
/// Prints `PASS <cycles>` or `MISMATCH cycle <c> <port> expected <e> actual <a>`
/// lines and `FAIL <n>`, and stops at the first mismatching cycle.
pub fn testbench<B: Block>(p: &B::Params, v: &Vectors) -> String {
    let mut s = String::new();
    let n = v.in_hex.len();
    let iw = bits(&v.inputs);
    let ow = bits(&v.outputs);
    let w = |x: u32| {
        if x > 1 {
            format!("[{}:0] ", x - 1)
        } else {
            String::new()
        }
    };
    writeln!(
        s,
        "// Generated by switchsim from the Rust port declaration of `{}` ({}).",
        B::NAME,
        p.label()
    )
    .unwrap();
    writeln!(s, "`timescale 1ns / 100ps\nmodule tb;").unwrap();
    writeln!(s, "  localparam integer N = {n};").unwrap();
    writeln!(s, "  reg [{}:0] vin [0:N-1];", iw - 1).unwrap();
    writeln!(s, "  reg [{}:0] vout [0:N-1];", ow - 1).unwrap();
    writeln!(s, "  reg vchk [0:N-1];").unwrap();
    writeln!(s, "  reg clk_i;").unwrap();
    for d in &v.inputs {
        writeln!(s, "  reg {}{};", w(d.shape.bits()), d.name).unwrap();
    }
    for d in &v.outputs {
        writeln!(s, "  wire {}{};", w(d.shape.bits()), d.name).unwrap();
    }
    let params: Vec<String> = p
        .verilog()
        .iter()
        .map(|(k, val)| format!(".{k}({val})"))
        .collect();
    let conns: Vec<String> = std::iter::once("clk_i")
        .chain(v.inputs.iter().map(|d| d.name))
        .chain(v.outputs.iter().map(|d| d.name))
        .map(|n| format!(".{n}({n})"))
        .collect();
    writeln!(
        s,
        "  {} #({}) dut (\n    {}\n  );",
        B::NAME,
        params.join(", "),
        conns.join(",\n    ")
    )
    .unwrap();
    writeln!(s, "  integer t, errors;").unwrap();
    writeln!(s, "  initial begin").unwrap();
    writeln!(s, "    $readmemh(\"in.hex\", vin);").unwrap();
    writeln!(s, "    $readmemh(\"out.hex\", vout);").unwrap();
    writeln!(s, "    $readmemb(\"chk.bin\", vchk);").unwrap();
    writeln!(s, "    errors = 0;\n    clk_i = 1'b0;").unwrap();
    writeln!(s, "    for (t = 0; t < N && errors == 0; t = t + 1) begin").unwrap();
    let mut off = 0;
    for d in &v.inputs {
        writeln!(
            s,
            "      {} = vin[t][{} +: {}];",
            d.name,
            off,
            d.shape.bits()
        )
        .unwrap();
        off += d.shape.bits();
    }
    writeln!(s, "      #4;").unwrap();
    writeln!(s, "      if (vchk[t]) begin").unwrap();
    let mut off = 0;
    for d in &v.outputs {
        writeln!(
            s,
            "        if ({n} !== vout[t][{off} +: {b}]) begin\n          $display(\"MISMATCH cycle %0d {n} expected %h actual %h\", t - {r}, vout[t][{off} +: {b}], {n});\n          errors = errors + 1;\n        end",
            n = d.name,
            b = d.shape.bits(),
            r = POWER_ON_RESET
        )
        .unwrap();
        off += d.shape.bits();
    }
    writeln!(s, "      end").unwrap();
    writeln!(s, "      #1 clk_i = 1'b1;\n      #5 clk_i = 1'b0;").unwrap();
    writeln!(s, "    end").unwrap();
    writeln!(
        s,
        "    if (errors == 0) $display(\"PASS %0d\", N);\n    else $display(\"FAIL %0d\", errors);"
    )
    .unwrap();
    writeln!(s, "    $finish;\n  end\nendmodule").unwrap();
    s
}

/// Writes `tb.v`, `in.hex`, `out.hex` and `chk.bin` into `dir`.
pub fn write<B: Block>(stim: &Stimulus<B>, dir: &std::path::Path) -> Result<()> {
    let v = vectors(stim)?;
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("tb.v"), testbench::<B>(&stim.params, &v))?;
    std::fs::write(dir.join("in.hex"), v.in_hex.join("\n") + "\n")?;
    std::fs::write(dir.join("out.hex"), v.out_hex.join("\n") + "\n")?;
    let chk: Vec<&str> = v.check.iter().map(|&c| if c { "1" } else { "0" }).collect();
    std::fs::write(dir.join("chk.bin"), chk.join("\n") + "\n")?;
    Ok(())
}

/// The RTL files of block `block` (see [`crate::toolchain::rtl_files`]).
pub fn rtl_files(rtl_dir: &std::path::Path, block: &str) -> Result<Vec<std::path::PathBuf>> {
    Ok(crate::toolchain::rtl_files(rtl_dir, block)?)
}

/// The `rtl/` directory of the source tree this crate was built from (for
/// tests; the commands use [`project_rtl`]).
pub fn default_rtl_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl")
}

/// The RTL a command works on: `arg` when given, else the `rtl/` folder of
/// the project the command is run in (the current directory or the nearest
/// parent with an `rtl/` folder holding Verilog), as `git` finds its
/// repository. Not the tree the binary was built in: a copy of the project,
/// or a designer's edited RTL, is what gets linted, synthesised and mutated.
pub fn project_rtl(arg: Option<&std::path::Path>) -> Result<std::path::PathBuf> {
    let has_verilog = |d: &std::path::Path| {
        std::fs::read_dir(d).is_ok_and(|rd| {
            rd.filter_map(|e| e.ok())
                .any(|e| e.path().extension().is_some_and(|x| x == "v"))
        })
    };
    if let Some(d) = arg {
        if !has_verilog(d) {
            anyhow::bail!("--rtl {}: no Verilog (.v) files there", d.display());
        }
        return Ok(d.to_path_buf());
    }
    let cwd = std::env::current_dir()?;
    cwd.ancestors()
        .map(|a| a.join("rtl"))
        .find(|d| has_verilog(d))
        .ok_or_else(|| {
            anyhow!(
                "no rtl/ folder with Verilog in {} or its parents: run inside the project, or pass --rtl DIR",
                cwd.display()
            )
        })
}

/// Replays `stim`'s golden vectors on the RTL under Icarus Verilog in `dir`.
/// `Ok(Ok(cycles))` when every output of every cycle matched, `Ok(Err(report))`
/// on a mismatch, `Err` when Icarus is missing or fails to compile.
pub fn icarus<B: Block>(
    stim: &Stimulus<B>,
    dir: &std::path::Path,
) -> Result<std::result::Result<usize, String>> {
    use anyhow::Context;
    write(stim, dir)?;
    let files = rtl_files(&default_rtl_dir(), B::NAME)?;
    let o = std::process::Command::new("iverilog")
        .args(["-g2012", "-Wall", "-o", "sim", "tb.v"])
        .args(&files)
        .current_dir(dir)
        .output()
        .context(
            "cannot run iverilog (install it with `make deps`: apt-get install -y iverilog)",
        )?;
    if !o.status.success() {
        anyhow::bail!(
            "iverilog failed on {}:\n{}",
            B::NAME,
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = std::process::Command::new("vvp")
        .args(["-n", "sim"])
        .current_dir(dir)
        .output()
        .context("cannot run vvp")?;
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    match out.lines().find_map(|l| l.strip_prefix("PASS ")) {
        Some(n) => Ok(Ok(n.trim().parse().unwrap_or(0))),
        None => Ok(Err(out)),
    }
}
