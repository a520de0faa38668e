//! `sweep`: the STX system sweep and its charts.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// The plots of the sweep CSV `csv`: beside it, with extensions `.svg`
/// and `.png`.
pub fn sweep_plot_paths(csv: &Path) -> Result<[PathBuf; 2]> {
    let paths = ["svg", "png"].map(|ext| csv.with_extension(ext));
    if paths.iter().any(|p| p == csv) {
        bail!(
            "{}: the sweep CSV cannot have the extension .svg or .png, which its plots take",
            csv.display()
        );
    }
    Ok(paths)
}

/// Plots the sweep CSV `text` (read from `csv`) to `svg` and `png`.
pub fn write_sweep_plot(text: &str, csv: &Path, [svg, png]: &[PathBuf; 2]) -> Result<()> {
    let rows = crate::stx::parse_sweep_csv(text, csv)?;
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
        Ok::<_, anyhow::Error>(())
    };
    write(svg, crate::stx::sweep_svg(&rows)?.as_bytes())?;
    write(png, &crate::stx::sweep_png(&rows)?)
}

/// `sweep --plot-only`: plots an existing sweep CSV.
pub fn cmd_sweep_plot(csv: &Path) -> Result<u8> {
    let plots = sweep_plot_paths(csv)?;
    let text =
        std::fs::read_to_string(csv).with_context(|| format!("reading {}", csv.display()))?;
    write_sweep_plot(&text, csv, &plots)?;
    Ok(0)
}

pub fn cmd_sweep(spec: crate::stx::SweepSpec, out: &Path) -> Result<u8> {
    use crate::stx::{csv_text, sweep};
    let plots = sweep_plot_paths(out)?;
    if !spec.rtt.is_multiple_of(2) || !(2..=126).contains(&spec.rtt) {
        return Err(anyhow!("--rtt {}: must be even, in 2..=126", spec.rtt));
    }
    if !spec.n.is_power_of_two() || !(2..=64).contains(&spec.n) {
        return Err(anyhow!("--n {}: must be a power of two in 2..=64", spec.n));
    }
    if let Some(l) = spec.loads.iter().find(|l| !(**l > 0.0 && **l < 1.0)) {
        return Err(anyhow!("--loads: {l} is not in (0, 1)"));
    }
    if let Some(r) = spec.rs.iter().find(|r| !(1..=127).contains(*r)) {
        return Err(anyhow!("--r: {r} receivers is not in 1..=127"));
    }
    if !(1..=8).contains(&spec.iters) {
        return Err(anyhow!("--iters {}: must be in 1..=8", spec.iters));
    }
    println!(
        "sweep: N={} RTT={} R={:?} loads={:?} iSLIP x{} warm-up {} + {} measured slots, {} arbiter, {} traffic",
        spec.n,
        spec.rtt,
        spec.rs,
        spec.loads,
        spec.iters,
        spec.warmup,
        spec.slots,
        if spec.rtl { "RTL" } else { "model" },
        match spec.traffic {
            crate::stx::TrafficKind::Bernoulli => "Bernoulli".to_string(),
            crate::stx::TrafficKind::OnOff(b) => format!("on/off (mean burst {b})"),
        }
    );
    let t0 = std::time::Instant::now();
    let points = sweep(&spec, &|p| {
        println!(
            "  {:<7} load {:.2}: delay {:8.2} +- {:5.2}  throughput {:.4}  P_Ss {:.3}  ({:.1} s)",
            p.r.map_or("no STX".to_string(), |r| format!("R={r}")),
            p.load,
            p.stats.mean_delay(),
            p.stats.delay_ci95(),
            p.stats.throughput(),
            p.stats.p_ss(),
            p.secs
        );
    })?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let text = csv_text(&spec, &points)?;
    std::fs::write(out, &text).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} ({} points, {:.1} s)",
        out.display(),
        points.len(),
        t0.elapsed().as_secs_f64()
    );
    write_sweep_plot(&text, out, &plots)?;
    Ok(u8::from(points.iter().any(|p| !p.complete)))
}
