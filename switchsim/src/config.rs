//! Configuration files (TOML) for `switchsim run --config FILE`.
//!
//! Keys are the block's configuration ports, with or without the `cfg_`
//! prefix and `_i` suffix; fields not given keep the block's default
//! configuration. An optional `variant = "p4cw16"` picks the structural
//! variant. Values are integers (negative for signed fields) or arrays for
//! vector fields; an integer for a vector field sets every element
//! (`hdrm_cells = 64`: every port). Every error names the field, the value
//! and the legal range.
//!
//! ```toml
//! variant = "p4cw16"
//! buf_cells = 2048
//! alpha = -1          # cfg_alpha_i, alpha = 2^-1
//! lossless = 0x18     # priorities 3 and 4
//! ```

use anyhow::{anyhow, bail, Context, Result};
use model::port::{format_plain, parse_value};
use model::{Block, Params, PortGroup};
use std::path::Path;

/// The variant and configuration described by `text`.
pub fn parse<B: Block>(text: &str, origin: &str) -> Result<(B::Params, B::Config)> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        // One line: file, line and column of the problem.
        let at = e.span().map(|sp| {
            let before = &text[..sp.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!(":{line}:{col}")
        });
        anyhow!(
            "{origin}{}: not valid TOML: {}",
            at.unwrap_or_default(),
            e.message().lines().next().unwrap_or("").trim()
        )
    })?;
    let variants = B::variants();
    let params = match table.get("variant") {
        None => variants[0].clone(),
        Some(toml::Value::String(l)) => variants
            .iter()
            .find(|v| v.label() == *l)
            .cloned()
            .ok_or_else(|| {
                let known: Vec<String> = variants.iter().map(|v| v.label()).collect();
                anyhow!(
                    "{origin}: variant = \"{l}\": not a verilated variant of {} (known: {})",
                    B::NAME,
                    known.join(", ")
                )
            })?,
        Some(v) => bail!(
            "{origin}: variant = {v}: expected a string such as \"{}\"",
            variants[0].label()
        ),
    };
    let layout = B::Config::layout(&params);
    let mut words = B::default_config(&params)
        .to_words(&params)
        .map_err(|e| anyhow!("default configuration: {e}"))?;
    for (key, value) in &table {
        if key == "variant" {
            continue;
        }
        let k = layout
            .ports
            .iter()
            .position(|p| p.name == key || short(p.name) == key)
            .ok_or_else(|| {
                let known: Vec<&str> = layout.ports.iter().map(|p| short(p.name)).collect();
                anyhow!(
                    "{origin}: unknown field `{key}` for {} (known: {})",
                    B::NAME,
                    known.join(", ")
                )
            })?;
        let d = &layout.ports[k];
        let text = match value {
            toml::Value::Integer(i) if d.shape.is_vec => {
                format!(
                    "[{}]",
                    vec![i.to_string(); d.shape.count as usize].join(",")
                )
            }
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => u8::from(*b).to_string(),
            toml::Value::Array(a) => {
                let items: Result<Vec<String>> = a
                    .iter()
                    .map(|x| match x {
                        toml::Value::Integer(i) => Ok(i.to_string()),
                        toml::Value::Boolean(b) => Ok(u8::from(*b).to_string()),
                        other => Err(anyhow!("{origin}: {key}: `{other}` is not an integer")),
                    })
                    .collect();
                format!("[{}]", items?.join(","))
            }
            other => bail!("{origin}: {key} = {other}: expected an integer"),
        };
        let off = layout.offsets[k];
        parse_value(d, &text, &mut words[off..off + d.shape.words()])
            .map_err(|e| anyhow!("{origin}: {key} = {text}: {e}"))?;
    }
    let cfg = B::Config::unpack(&params, &words);
    B::check(&params, &cfg).map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok((params, cfg))
}

/// Reads and parses a configuration file.
pub fn load<B: Block>(path: &Path) -> Result<(B::Params, B::Config)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse::<B>(&text, &path.display().to_string())
}

/// `cfg_buf_cells_i` -> `buf_cells`.
pub fn short(name: &str) -> &str {
    let n = name.strip_prefix("cfg_").unwrap_or(name);
    n.strip_suffix("_i").unwrap_or(n)
}

/// The configuration as TOML (the format `load` reads).
pub fn to_toml<B: Block>(p: &B::Params, c: &B::Config) -> String {
    let layout = B::Config::layout(p);
    let words = c.to_words(p).expect("configuration fits its ports");
    let mut s = format!("# {} configuration\nvariant = \"{}\"\n", B::NAME, p.label());
    for (k, d) in layout.ports.iter().enumerate() {
        s.push_str(&format!(
            "{} = {}    # {}\n",
            short(d.name),
            format_plain(d.shape, layout.slice(&words, k)).replace(',', ", "),
            d.doc
        ));
    }
    s
}
