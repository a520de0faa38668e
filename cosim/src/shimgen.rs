//! Generates the C++ shim of one design from its port declaration and port
//! map: `put_inputs` / `get_outputs` copy the packed word buffers (see
//! `model::port`) to and from the Verilated model's ports, one line per
//! port; `set_clock` drives the clock; `get_state` reads the registers the
//! map names through Verilator's public signals; `VSIM_DEFINE` (in
//! `csrc/vsim.h`) adds the `extern "C"` entry points. Also the Verilator
//! control file that makes those registers public, and the parsers of the
//! headers Verilator writes (ports, and the public signals' types), with
//! which the builder checks a design against its declaration.

use crate::design::Design;
use std::fmt::Write as _;

/// A port of the verilated top module, from its header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderPort {
    /// The port's name.
    pub name: String,
    /// Whether it is an input.
    pub input: bool,
    /// Its width in bits.
    pub width: u32,
}

/// The ports declared in a Verilator top header (`V<prefix>.h`).
pub fn header_ports(text: &str) -> Vec<HeaderPort> {
    let mut v = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let input = l.starts_with("VL_IN");
        if !input && !l.starts_with("VL_OUT") {
            continue;
        }
        let (Some(a), Some(b)) = (l.find("(&"), l.rfind(')')) else {
            continue;
        };
        let parts: Vec<&str> = l[a + 2..b].split(',').map(str::trim).collect();
        if parts.len() < 3 {
            continue;
        }
        let msb: u32 = parts[1].parse().unwrap_or(0);
        let lsb: u32 = parts[2].parse().unwrap_or(0);
        v.push(HeaderPort {
            name: parts[0].to_string(),
            input,
            width: msb.saturating_sub(lsb) + 1,
        });
    }
    v
}

/// The shape of a public signal, from the root header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalShape {
    /// A packed vector of this many bits.
    Packed(u32),
    /// An unpacked array: element width, element count.
    Unpacked(u32, u32),
}

impl SignalShape {
    /// Total bits.
    pub fn bits(self) -> u32 {
        match self {
            SignalShape::Packed(w) => w,
            SignalShape::Unpacked(w, n) => w * n,
        }
    }
}

/// The member name Verilator gives the signal at `path` (below top module
/// `top`) when it is public and flattened: `<top>__DOT__<a>__DOT__<b>`. A
/// leading `TOP.` or `<top>.` is accepted.
pub fn mangle(top: &str, path: &str) -> String {
    let p = path.strip_prefix("TOP.").unwrap_or(path);
    let p = p
        .strip_prefix(top)
        .and_then(|r| r.strip_prefix('.'))
        .unwrap_or(p);
    format!("{top}__DOT__{}", p.replace('.', "__DOT__"))
}

/// The last path element: the signal's own name (for the control file).
pub fn leaf(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Finds member `member` in the root header text and returns its shape;
/// `Err` says why it cannot be read (`None`: not there).
pub fn signal_shape(root_h: &str, member: &str) -> Option<Result<SignalShape, String>> {
    let want = format!(" {member};");
    let line = root_h.lines().find(|l| l.trim_end().ends_with(&want))?;
    let ty = line.trim().strip_suffix(&want)?.trim();
    Some(
        parse_type(ty).ok_or_else(|| {
            format!("its C++ type `{ty}` is not a packed vector or an array of them")
        }),
    )
}

/// `CData/*7:0*/`, `VlWide<3>/*95:0*/`, `VlUnpacked<SData/*9:0*/, 16>`.
fn parse_type(ty: &str) -> Option<SignalShape> {
    fn range(t: &str) -> Option<u32> {
        let a = t.find("/*")?;
        let b = t[a..].find("*/")? + a;
        let (m, l) = t[a + 2..b].split_once(':')?;
        let (m, l): (u32, u32) = (m.trim().parse().ok()?, l.trim().parse().ok()?);
        Some(m.checked_sub(l)? + 1)
    }
    if let Some(inner) = ty.strip_prefix("VlUnpacked<") {
        let inner = inner.strip_suffix('>')?;
        let (elem, n) = inner.rsplit_once(',')?;
        if elem.contains("VlUnpacked") || elem.contains("VlWide") {
            return None;
        }
        return Some(SignalShape::Unpacked(range(elem)?, n.trim().parse().ok()?));
    }
    Some(SignalShape::Packed(range(ty)?))
}

/// The Verilator control file that keeps the design's state signals and
/// makes them readable (`public_flat_rd`) and keeps the modules the design
/// names out of line (`no_inline`), or `None` when there is nothing to say.
pub fn control_file(design: &Design) -> Option<String> {
    if design.map.state.is_empty() && design.no_inline.is_empty() {
        return None;
    }
    let mut s = String::from("`verilator_config\n");
    for m in &design.no_inline {
        writeln!(s, "no_inline -module \"{m}\"").unwrap();
    }
    let mut seen = Vec::new();
    for st in &design.map.state {
        let v = leaf(&st.path);
        if !seen.contains(&v) {
            seen.push(v);
            writeln!(s, "public_flat_rd -module \"*\" -var \"{v}\"").unwrap();
        }
    }
    Some(s)
}

/// The shim source for `design`, whose Verilator prefix is `prefix`;
/// `state` gives, for each entry of the map's state paths, its root member
/// and shape (checked by the caller against the declaration).
pub fn shim(design: &Design, prefix: &str, state: &[(String, SignalShape)]) -> String {
    let m = &design.map;
    let mut s = String::new();
    writeln!(
        s,
        "// Generated by cosim from the Rust port declaration of `{}` and the port map of `{}`.",
        design.block, design.top
    )
    .unwrap();
    writeln!(s, "#include \"{prefix}.h\"").unwrap();
    if !state.is_empty() {
        writeln!(s, "#include \"{prefix}___024root.h\"").unwrap();
    }
    writeln!(s, "#include \"vsim.h\"").unwrap();
    writeln!(s, "using Top = {prefix};").unwrap();
    writeln!(
        s,
        "static void set_clock(Top* t, int v) {{ t->{} = v; }}",
        m.clock
    )
    .unwrap();
    writeln!(s, "static void put_inputs(Top* t, const uint32_t* w) {{").unwrap();
    if m.reset_active_low {
        writeln!(s, "    t->{} = w[0] & 1;", m.reset).unwrap();
    } else {
        writeln!(s, "    t->{} = !(w[0] & 1);", m.reset).unwrap();
    }
    let mut off = design.inputs[0].shape.words();
    for (d, name) in design.inputs[1..].iter().zip(&m.inputs) {
        writeln!(s, "    vsim::put(t->{name}, w + {off});").unwrap();
        off += d.shape.words();
    }
    for (name, v) in &m.ties {
        writeln!(s, "    t->{name} = {v}ULL;").unwrap();
    }
    writeln!(s, "}}").unwrap();
    writeln!(s, "static void get_outputs(Top* t, uint32_t* w) {{").unwrap();
    let mut off = 0;
    for (d, name) in design.outputs.iter().zip(&m.outputs) {
        match name {
            Some(n) => writeln!(s, "    vsim::get(t->{n}, w + {off});").unwrap(),
            None => writeln!(s, "    vsim::zero(w + {off}, {});", d.shape.words()).unwrap(),
        }
        off += d.shape.words();
    }
    if let Some(st) = &m.strobe {
        writeln!(s, "    w[{off}] = t->{st} & 1;").unwrap();
    }
    writeln!(s, "}}").unwrap();
    writeln!(s, "static void get_state(Top* t, uint32_t* w) {{").unwrap();
    writeln!(s, "    (void)t;\n    (void)w;").unwrap();
    let mut off = 0;
    for (member, shape) in state {
        let words = (shape.bits() as usize).div_ceil(32);
        match shape {
            SignalShape::Packed(_) => {
                writeln!(s, "    vsim::get(t->rootp->{member}, w + {off});").unwrap()
            }
            SignalShape::Unpacked(width, _) => writeln!(
                s,
                "    vsim::get_unpacked(t->rootp->{member}, {width}, w + {off}, {words});"
            )
            .unwrap(),
        }
        off += words;
    }
    writeln!(s, "}}").unwrap();
    writeln!(
        s,
        "VSIM_DEFINE(Top, {}, {}, {}, {off})",
        design.in_words(),
        design.out_words(),
        design.aux_words()
    )
    .unwrap();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_types_parse() {
        assert_eq!(parse_type("CData/*7:0*/"), Some(SignalShape::Packed(8)));
        assert_eq!(
            parse_type("VlWide<3>/*95:0*/"),
            Some(SignalShape::Packed(96))
        );
        assert_eq!(
            parse_type("VlUnpacked<SData/*9:0*/, 16>"),
            Some(SignalShape::Unpacked(10, 16))
        );
        assert_eq!(
            parse_type("VlUnpacked<VlUnpacked<CData/*0:0*/, 2>, 2>"),
            None
        );
        let h = "    CData/*7:0*/ t__DOT__cnt_q;\n    VlUnpacked<CData/*3:0*/, 4> t__DOT__mem;\n";
        assert_eq!(
            signal_shape(h, "t__DOT__cnt_q"),
            Some(Ok(SignalShape::Packed(8)))
        );
        assert_eq!(
            signal_shape(h, "t__DOT__mem"),
            Some(Ok(SignalShape::Unpacked(4, 4)))
        );
        assert_eq!(signal_shape(h, "t__DOT__nope"), None);
        assert_eq!(mangle("t", "u_a.x_q"), "t__DOT__u_a__DOT__x_q");
        assert_eq!(mangle("t", "TOP.t.x_q"), "t__DOT__x_q");
        assert_eq!(mangle("t", "t.x_q"), "t__DOT__x_q");
    }

    #[test]
    fn header_ports_parse() {
        let h = "    VL_IN8(&clk_i,0,0);\n    VL_OUT16(&q_o,9,0);\n    VL_INW(&w_i,95,0,3);\n";
        let p = header_ports(h);
        assert_eq!(
            p,
            vec![
                HeaderPort {
                    name: "clk_i".into(),
                    input: true,
                    width: 1
                },
                HeaderPort {
                    name: "q_o".into(),
                    input: false,
                    width: 10
                },
                HeaderPort {
                    name: "w_i".into(),
                    input: true,
                    width: 96
                },
            ]
        );
    }
}
