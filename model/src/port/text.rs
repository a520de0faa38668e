//! A port's packed value as text and back: Verilog-style literals for the
//! mismatch reports and waveform annotations ([`format_value`],
//! [`describe_value`]), plain numbers for the stimulus files
//! ([`format_plain`], [`parse_value`]).

use super::{get_bits, mask, put_bits, PortDesc, Radix, Shape};

/// Formats the packed value of one port as Verilog-style text: `8'd12`,
/// `40'h00_0000_0abc` for wide scalars, `[3'd1, 3'd0, ...]` for vectors.
pub fn format_value(shape: Shape, words: &[u32]) -> String {
    let elem = |k: u32| get_bits(words, k * shape.width, shape.width);
    let one = |v: u64| {
        if shape.signed {
            let x = sign_extend(v, shape.width);
            if x < 0 {
                format!("-{}'sd{}", shape.width, x.unsigned_abs())
            } else {
                format!("{}'sd{}", shape.width, x)
            }
        } else if shape.width <= 16 {
            format!("{}'d{}", shape.width, v)
        } else {
            format!("{}'h{:x}", shape.width, v)
        }
    };
    if shape.is_vec {
        let items: Vec<String> = (0..shape.count).map(|k| one(elem(k))).collect();
        format!("[{}]", items.join(", "))
    } else {
        one(elem(0))
    }
}

/// Formats the packed value of port `p` for a reader: [`format_value`], in
/// hex for a [`Radix::Hex`] port, and with the name beside the number for a
/// [`Radix::Names`] one (`3'd4 (drop)`).
pub fn describe_value(p: &PortDesc, words: &[u32]) -> String {
    let shape = p.shape;
    let one = |v: u64| {
        let w = shape.width;
        match p.radix {
            Radix::Hex => format!("{w}'h{v:x}"),
            Radix::Names(names) => match names.get(v as usize) {
                Some(n) => format!("{w}'d{v} ({n})"),
                None => format!("{w}'d{v}"),
            },
            Radix::Dec => format_value(
                Shape::scalar(w).with_signed(shape.signed),
                &[v as u32, (v >> 32) as u32],
            ),
        }
    };
    if shape.is_vec {
        let items: Vec<String> = (0..shape.count)
            .map(|k| one(get_bits(words, k * shape.width, shape.width)))
            .collect();
        format!("[{}]", items.join(", "))
    } else {
        one(get_bits(words, 0, shape.width))
    }
}

/// Formats the packed value of one port in the stimulus-file syntax: a
/// decimal number, or a comma-separated list in brackets for a vector.
pub fn format_plain(shape: Shape, words: &[u32]) -> String {
    let elem = |k: u32| {
        let v = get_bits(words, k * shape.width, shape.width);
        if shape.signed {
            sign_extend(v, shape.width).to_string()
        } else {
            v.to_string()
        }
    };
    if shape.is_vec {
        let items: Vec<String> = (0..shape.count).map(elem).collect();
        format!("[{}]", items.join(","))
    } else {
        elem(0)
    }
}

/// Sign-extends the low `width` bits of `v`.
pub fn sign_extend(v: u64, width: u32) -> i64 {
    let sh = 64 - width;
    ((v << sh) as i64) >> sh
}

/// Parses one port value in the stimulus-file syntax (decimal or `0x` hex,
/// a bracketed list for a vector) into `out` (the port's words).
pub fn parse_value(desc: &PortDesc, text: &str, out: &mut [u32]) -> Result<(), String> {
    let s = desc.shape;
    let num = |t: &str| -> Result<u64, String> {
        let t = t.trim();
        if s.signed {
            let lo = -(1i64 << (s.width - 1));
            let hi = (1i64 << (s.width - 1)) - 1;
            let v: i64 = t
                .replace('_', "")
                .parse()
                .map_err(|_| format!("`{t}` is not a number"))?;
            if v < lo || v > hi {
                return Err(format!(
                    "{v} is outside the legal range {lo}..={hi} ({} bits, signed)",
                    s.width
                ));
            }
            return Ok(v as u64 & mask(s.width));
        }
        let r = if let Some(h) = t.strip_prefix("0x") {
            u64::from_str_radix(&h.replace('_', ""), 16)
        } else {
            t.replace('_', "").parse::<u64>()
        };
        let v = r.map_err(|_| {
            if t.starts_with('-') && t[1..].replace('_', "").parse::<u64>().is_ok() {
                format!(
                    "{t} is outside the legal range 0..={} ({} bits, unsigned)",
                    mask(s.width),
                    s.width
                )
            } else if t.replace('_', "").chars().all(|c| c.is_ascii_digit()) && !t.is_empty() {
                format!(
                    "{t} is too large for {} ({} bits: legal range 0..={})",
                    desc.name,
                    s.width,
                    mask(s.width)
                )
            } else {
                format!("`{t}` is not a number")
            }
        })?;
        if v & !mask(s.width) != 0 {
            return Err(format!(
                "{v} is outside the legal range 0..={} ({} bits)",
                mask(s.width),
                s.width
            ));
        }
        Ok(v)
    };
    out.fill(0);
    let text = text.trim();
    if s.is_vec {
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| format!("expected a list like [1,2,3] of {} values", s.count))?;
        let items: Vec<&str> = if inner.trim().is_empty() {
            vec![]
        } else {
            inner.split(',').collect()
        };
        if items.len() != s.count as usize {
            return Err(format!(
                "expected {} values, found {}",
                s.count,
                items.len()
            ));
        }
        for (k, it) in items.iter().enumerate() {
            put_bits(out, k as u32 * s.width, s.width, num(it)?);
        }
    } else {
        put_bits(out, 0, s.width, num(text)?);
    }
    Ok(())
}
