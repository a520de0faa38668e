//! Line charts as SVG and PNG, drawn with `plotters`.
//!
//! A [`Chart`] is a set of [`Series`] (polylines in data coordinates, solid
//! or dashed, with optional point markers) over a frame with grid lines at
//! plotters' ticks, axis titles, a title and a legend. [`render_svg`] and
//! [`render_png`] draw several charts in a grid into one image.
//!
//! Text in a PNG is drawn through `ab_glyph` with the bundled DejaVu Sans
//! (`engine/assets/`), so no system font library is needed; an SVG names the
//! `sans-serif` family and leaves the glyphs to the viewer. A point with a
//! NaN or infinite coordinate is skipped, and the line breaks there; lines
//! are clipped to the axes' ranges. The legend goes where it covers the
//! fewest data (a corner, or the middle of a side); if it would cover some
//! wherever it goes and the y range is automatic, the y axis is extended
//! upwards to make room for it above the data.
//!
//! ```no_run
//! use engine::plot::{render_svg, Chart, Marker, Series, PALETTE};
//!
//! let squares = (0..=10).map(|i| (f64::from(i), f64::from(i * i))).collect();
//! let chart = Chart {
//!     title: "Squares".into(),
//!     x_label: "x".into(),
//!     y_label: "x^2".into(),
//!     series: vec![Series::new("x^2", squares, PALETTE[0]).with_marker(Marker::Circle)],
//!     ..Chart::default()
//! };
//! std::fs::write("squares.svg", render_svg(&[chart], 1, 640, 440)?)?;
//! # Ok::<(), anyhow::Error>(())
//! ```

use anyhow::{anyhow, Result};
use plotters::chart::SeriesLabelPosition;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::{Drawable, MultiLineText, PointCollection};
use plotters::prelude::*;
use plotters_backend::{BackendCoord, DrawingErrorKind};

/// An RGB colour.
pub type Rgb = [u8; 3];

/// Ten distinguishable series colours (Tableau 10).
pub const PALETTE: [Rgb; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [188, 189, 34],
    [23, 190, 207],
    [127, 127, 127],
];

/// Grey, for reference curves.
pub const GREY: Rgb = [127, 127, 127];

/// Black.
pub const BLACK: Rgb = [0, 0, 0];

const GRID: Rgb = [228, 228, 228];
const FRAME: Rgb = [64, 64, 64];
const LEGEND_BORDER: Rgb = [160, 160, 160];

/// A point marker shape, drawn in the series colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// A filled disc.
    Circle,
    /// A filled square.
    Square,
    /// A filled triangle, apex up.
    Triangle,
    /// A diagonal cross.
    Cross,
}

/// One curve of a [`Chart`].
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text; an empty label keeps the series out of the legend.
    pub label: String,
    /// Points in data coordinates, joined in order. A point with a NaN or
    /// infinite coordinate is skipped, and the line breaks there.
    pub points: Vec<(f64, f64)>,
    /// Line, marker and legend colour.
    pub color: Rgb,
    /// Dashed instead of solid.
    pub dashed: bool,
    /// A marker on every point, if any.
    pub marker: Option<Marker>,
    /// Per point, the half-height of a vertical error bar (a 95 %
    /// confidence interval), if any; a NaN or 0 draws none.
    pub err: Option<Vec<f64>>,
}

impl Series {
    /// A solid line without markers.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, color: Rgb) -> Self {
        Series {
            label: label.into(),
            points,
            color,
            dashed: false,
            marker: None,
            err: None,
        }
    }

    /// The same series with error bars of half-height `err[k]` at point `k`.
    pub fn with_errors(self, err: Vec<f64>) -> Self {
        Series {
            err: Some(err),
            ..self
        }
    }

    /// The same series, dashed.
    pub fn dashed(self) -> Self {
        Series {
            dashed: true,
            ..self
        }
    }

    /// The same series, with `marker` on every point.
    pub fn with_marker(self, marker: Marker) -> Self {
        Series {
            marker: Some(marker),
            ..self
        }
    }
}

/// One line chart: a panel of [`render_svg`]'s or [`render_png`]'s grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    /// Drawn centred above the plot.
    pub title: String,
    /// Below the x axis.
    pub x_label: String,
    /// Left of the y axis, reading upwards.
    pub y_label: String,
    /// Drawn in order: later series over earlier ones.
    pub series: Vec<Series>,
    /// Fixed x range `(min, max)`; `None`: the data's, widened to ticks.
    pub x_range: Option<(f64, f64)>,
    /// Fixed y range `(min, max)`; `None`: the data's, widened to ticks (and
    /// upwards to make room for the legend).
    pub y_range: Option<(f64, f64)>,
}

/// The font family every text is drawn in; in a PNG it is the bundled
/// DejaVu Sans.
const FONT: &str = "sans-serif";
const TITLE_SIZE: f64 = 21.0;
const TEXT_SIZE: f64 = 18.0;
/// Line width, marker half-size, dash and gap lengths (pixels).
const LINE_W: u32 = 2;
const MARKER_R: i32 = 4;
const DASH_ON: i32 = 7;
const DASH_OFF: i32 = 5;
/// Space around the panel's contents, and the x axis' label area.
const PAD: i32 = 8;
const X_LABEL_AREA: i32 = 50;
/// Legend: inner padding, length of the sample line, distance from the
/// plot's edges.
const LEGEND_PAD: i32 = 6;
const LEGEND_SAMPLE: i32 = 34;
const LEGEND_INSET: i32 = 6;

/// Registers the bundled font with plotters (once): text layout needs it in
/// an SVG as well as a PNG.
fn register_font() -> Result<()> {
    static FONT_DATA: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE
        .get_or_init(|| plotters::style::register_font(FONT, FontStyle::Normal, FONT_DATA).is_ok());
    ok.then_some(())
        .ok_or_else(|| anyhow!("the bundled font assets/DejaVuSans.ttf does not load"))
}

/// The size of a grid of `n` panels in `cols` columns.
fn grid_size(n: usize, cols: usize, panel_w: u32, panel_h: u32) -> (u32, u32) {
    let side = |k: usize, each: u32| {
        u32::try_from(k)
            .ok()
            .and_then(|k| k.checked_mul(each))
            .expect("image side fits in u32")
    };
    let cols = cols.max(1);
    (side(cols, panel_w), side(n.div_ceil(cols).max(1), panel_h))
}

/// Renders `panels` in a grid of `cols` columns (row by row), each panel
/// `panel_w x panel_h`, into one SVG document of `cols * panel_w` by
/// `rows * panel_h`.
///
/// # Panics
///
/// If a side of the image exceeds `u32::MAX`.
pub fn render_svg(panels: &[Chart], cols: usize, panel_w: u32, panel_h: u32) -> Result<String> {
    register_font()?;
    let size = grid_size(panels.len(), cols, panel_w, panel_h);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw_grid(&root, panels, cols)
            .and_then(|()| root.present())
            .map_err(|e| anyhow!("drawing the SVG chart: {e}"))?;
    }
    Ok(svg)
}

/// Renders `panels` like [`render_svg`] into a PNG image (8-bit RGB).
///
/// # Panics
///
/// If a side of the image exceeds `u32::MAX`.
pub fn render_png(panels: &[Chart], cols: usize, panel_w: u32, panel_h: u32) -> Result<Vec<u8>> {
    register_font()?;
    let (w, h) = grid_size(panels.len(), cols, panel_w, panel_h);
    let mut rgb = vec![0; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw_grid(&root, panels, cols)
            .and_then(|()| root.present())
            .map_err(|e| anyhow!("drawing the PNG chart: {e}"))?;
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header()?;
    writer.write_image_data(&rgb)?;
    writer.finish()?;
    Ok(out)
}

type DrawResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw_grid<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panels: &[Chart],
    cols: usize,
) -> DrawResult<(), DB> {
    root.fill(&WHITE)?;
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    for (area, chart) in root.split_evenly((rows, cols)).iter().zip(panels) {
        draw_chart(area, chart)?;
    }
    Ok(())
}

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

/// Draws `chart` in `panel`.
fn draw_chart<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> DrawResult<(), DB> {
    let text: TextStyle = (FONT, TEXT_SIZE).into();
    let body = panel
        .margin(PAD, PAD, PAD, PAD)
        .titled(&chart.title, (FONT, TITLE_SIZE))?;
    let (body_w, body_h) = body.dim_in_pixel();
    let fixed =
        |r: Option<(f64, f64)>| r.filter(|&(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi);
    let (x_fixed, y_fixed) = (fixed(chart.x_range), fixed(chart.y_range));
    // Every point, and the ends of its error bar.
    let bar = |s: &Series, k: usize| {
        s.err
            .as_ref()
            .and_then(|e| e.get(k).copied())
            .filter(|e| e.is_finite())
            .unwrap_or(0.0)
    };
    let extent: Vec<(f64, f64)> = chart
        .series
        .iter()
        .flat_map(|s| {
            s.points.iter().enumerate().flat_map(move |(k, &(x, y))| {
                let e = bar(s, k);
                [(x, y - e), (x, y + e)]
            })
        })
        .collect();
    let finite = || {
        extent
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    let x_ticks = (body_w as usize / 90).max(2);
    let y_ticks = (body_h as usize / 50).max(2);
    let x_range = x_fixed.unwrap_or_else(|| nice_range(bounds(finite().map(|p| p.0)), x_ticks));
    let mut y_range = y_fixed.unwrap_or_else(|| nice_range(bounds(finite().map(|p| p.1)), y_ticks));

    // The legend's size, as plotters lays it out.
    let labels: Vec<&str> = chart
        .series
        .iter()
        .map(|s| s.label.as_str())
        .filter(|l| !l.is_empty())
        .collect();
    let legend = if labels.is_empty() {
        None
    } else {
        let mut lines = MultiLineText::<_, &str>::new((0, 0), text.clone());
        for l in &labels {
            lines.push_line(*l);
        }
        let (w, h) = lines.estimate_dimension().map_err(|e| {
            DrawingAreaErrorKind::BackendError(DrawingErrorKind::FontError(Box::new(e)))
        })?;
        Some((w + LEGEND_SAMPLE + 2 * LEGEND_PAD, h + 2 * LEGEND_PAD))
    };

    let mut attempt = 0;
    let (mut ctx, spot) = loop {
        let y_label_w = tick_labels(y_range, y_ticks)
            .iter()
            .map(|l| {
                body.estimate_text_size(l, &text)
                    .map_or(0, |(w, _)| w as i32)
            })
            .max()
            .unwrap_or(0);
        let ctx = ChartBuilder::on(&body)
            .margin_right(2 * PAD)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(y_label_w + 40)
            .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)?;
        let Some(size) = legend else {
            break (ctx, None);
        };
        let (w, h) = ctx.plotting_area().dim_in_pixel();
        let plot = (w as i32, h as i32);
        let (covered, spot) = place_legend(chart, x_range, y_range, plot, size);
        // Give the legend room above the data, unless the range is fixed or
        // the legend is too tall for that.
        let free = plot.1 - size.1 - 2 * LEGEND_INSET;
        if covered == 0 || y_fixed.is_some() || free <= plot.1 / 4 || attempt == 3 {
            break (ctx, Some(spot));
        }
        let (lo, hi) = y_range;
        y_range = nice_range(
            (
                lo,
                hi + (hi - lo) * f64::from(plot.1 - free) / f64::from(free),
            ),
            y_ticks,
        );
        attempt += 1;
    };

    let x_fmt = decimals_formatter(&ticks(x_range, x_ticks));
    let y_fmt = decimals_formatter(&ticks(y_range, y_ticks));
    ctx.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_labels(x_ticks)
        .y_labels(y_ticks)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .max_light_lines(0)
        .bold_line_style(rgb(GRID))
        .axis_style(rgb(FRAME))
        .label_style(text.clone())
        .axis_desc_style(text.clone())
        .draw()?;
    ctx.plotting_area().draw(&Rectangle::new(
        [(x_range.0, y_range.0), (x_range.1, y_range.1)],
        rgb(FRAME),
    ))?;

    // Lines first, then markers over them.
    for s in &chart.series {
        let style = rgb(s.color).stroke_width(LINE_W);
        let anno = ctx.draw_series(std::iter::empty::<EmptyElement<(f64, f64), DB>>())?;
        if !s.label.is_empty() {
            let (dashed, marker, color) = (s.dashed, s.marker, rgb(s.color));
            anno.label(s.label.as_str()).legend(move |at| Mark {
                at,
                marker,
                sample: Some(dashed),
                color,
            });
        }
        for run in runs(&s.points, x_range, y_range) {
            if s.dashed {
                ctx.draw_series(DashedLineSeries::new(run, DASH_ON, DASH_OFF, style))?;
            } else {
                ctx.draw_series(LineSeries::new(run, style))?;
            }
        }
    }
    // Error bars: a vertical segment with short caps.
    for s in chart.series.iter().filter(|s| s.err.is_some()) {
        let style = rgb(s.color).stroke_width(LINE_W);
        let cap = (x_range.1 - x_range.0) * 0.006;
        for (k, &(x, y)) in s.points.iter().enumerate() {
            let e = bar(s, k);
            if e <= 0.0 || !inside((x, y), x_range, y_range) {
                continue;
            }
            let (lo, hi) = ((y - e).max(y_range.0), (y + e).min(y_range.1));
            ctx.draw_series(LineSeries::new([(x, lo), (x, hi)], style))?;
            for v in [lo, hi] {
                ctx.draw_series(LineSeries::new([(x - cap, v), (x + cap, v)], style))?;
            }
        }
    }
    for s in chart.series.iter().filter(|s| s.marker.is_some()) {
        ctx.draw_series(
            s.points
                .iter()
                .filter(|&&p| inside(p, x_range, y_range))
                .map(|&at| Mark {
                    at,
                    marker: s.marker,
                    sample: None,
                    color: rgb(s.color),
                }),
        )?;
    }
    if let Some((x, y)) = spot {
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::Coordinate(x, y))
            .margin(LEGEND_PAD)
            .legend_area_size(LEGEND_SAMPLE)
            .label_font(text.clone())
            .background_style(WHITE)
            .border_style(rgb(LEGEND_BORDER))
            .draw()?;
    }
    Ok(())
}

/// A point's marker (if any) in the series colour; in the legend, with a
/// sample of the series' line through it, starting at the point.
struct Mark<C> {
    at: C,
    marker: Option<Marker>,
    /// `Some(dashed)`: the legend sample.
    sample: Option<bool>,
    color: RGBColor,
}

impl<'b, C> PointCollection<'b, C> for &'b Mark<C> {
    type Point = &'b C;
    type IntoIter = std::iter::Once<&'b C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Mark<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut at: I,
        b: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((mut x, y)) = at.next() else {
            return Ok(());
        };
        let (line, fill) = (self.color.stroke_width(LINE_W), self.color.filled());
        if let Some(dashed) = self.sample {
            let len = LEGEND_SAMPLE - LEGEND_PAD;
            let (on, period) = if dashed {
                (DASH_ON, DASH_ON + DASH_OFF)
            } else {
                (len, len)
            };
            for x0 in (0..len).step_by(period as usize) {
                b.draw_line((x + x0, y), (x + (x0 + on).min(len), y), &line)?;
            }
            x += len / 2;
        }
        let r = MARKER_R;
        match self.marker {
            None => Ok(()),
            Some(Marker::Circle) => b.draw_circle((x, y), r as u32, &fill, true),
            Some(Marker::Square) => {
                b.draw_rect((x - r + 1, y - r + 1), (x + r - 1, y + r - 1), &fill, true)
            }
            Some(Marker::Triangle) => b.fill_polygon(
                [(x, y - r - 1), (x - r - 1, y + r), (x + r + 1, y + r)],
                &fill,
            ),
            Some(Marker::Cross) => {
                b.draw_line((x - r, y - r), (x + r, y + r), &line)?;
                b.draw_line((x - r, y + r), (x + r, y - r), &line)
            }
        }
    }
}

/// The smallest and largest of `vs`; `(0, 1)` if there are none.
fn bounds(vs: impl Iterator<Item = f64>) -> (f64, f64) {
    vs.fold(None, |b: Option<(f64, f64)>, v| {
        Some(b.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
    })
    .unwrap_or((0.0, 1.0))
}

/// `[lo, hi]` ordered, finite and of positive length.
fn widen(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite() && (hi - lo).is_finite()) {
        return (0.0, 1.0);
    }
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if hi - lo > f64::EPSILON * lo.abs().max(hi.abs()) {
        (lo, hi)
    } else if lo == 0.0 {
        (-1.0, 1.0)
    } else {
        (lo - 0.1 * lo.abs(), hi + 0.1 * hi.abs())
    }
}

/// The ticks plotters puts on `range` when asked for at most `n`.
fn ticks(range: (f64, f64), n: usize) -> Vec<f64> {
    use plotters::coord::ranged1d::Ranged;
    let (lo, hi) = widen(range.0, range.1);
    RangedCoordf64::from(lo..hi).key_points(n)
}

/// `range` widened outwards to the nearest multiples of plotters' tick step.
fn nice_range(range: (f64, f64), n: usize) -> (f64, f64) {
    let (lo, hi) = widen(range.0, range.1);
    let t = ticks((lo, hi), n);
    match t.as_slice() {
        [a, b, ..] => {
            let step = b - a;
            let k = |v: f64| (v / step * 1e6).round() / 1e6;
            (k(lo).floor() * step, k(hi).ceil() * step)
        }
        _ => (lo, hi),
    }
}

/// The tick labels of `range` with at most `n` ticks.
fn tick_labels(range: (f64, f64), n: usize) -> Vec<String> {
    let t = ticks(range, n);
    t.iter().map(decimals_formatter(&t)).collect()
}

/// A tick label formatter printing every value of `ticks` with the same
/// number of decimals, the fewest that print each exactly (`-0` as `0`).
fn decimals_formatter(ticks: &[f64]) -> impl Fn(&f64) -> String {
    let exact = |v: f64, d: usize| {
        let s = 10f64.powi(d as i32);
        ((v * s).round() / s - v).abs() <= 1e-9 * v.abs().max(1e-12)
    };
    let d = ticks
        .iter()
        .map(|&v| (0..=9).find(|&d| exact(v, d)).unwrap_or(9))
        .max()
        .unwrap_or(0);
    move |v: &f64| {
        let s = format!("{v:.d$}");
        match s.strip_prefix('-') {
            Some(abs) if abs.bytes().all(|b| b == b'0' || b == b'.') => abs.to_string(),
            _ => s,
        }
    }
}

fn inside((x, y): (f64, f64), xr: (f64, f64), yr: (f64, f64)) -> bool {
    let slack = |r: (f64, f64)| 1e-9 * (r.1 - r.0);
    (xr.0 - slack(xr)..=xr.1 + slack(xr)).contains(&x)
        && (yr.0 - slack(yr)..=yr.1 + slack(yr)).contains(&y)
}

/// The part of the segment `a`-`b` inside the box `xr x yr` (Liang-Barsky
/// clipping); `None` if there is none or a coordinate is not finite.
fn clip(
    a: (f64, f64),
    b: (f64, f64),
    xr: (f64, f64),
    yr: (f64, f64),
) -> Option<((f64, f64), (f64, f64))> {
    if ![a.0, a.1, b.0, b.1].iter().all(|v| v.is_finite()) {
        return None;
    }
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - xr.0),
        (dx, xr.1 - a.0),
        (-dy, a.1 - yr.0),
        (dy, yr.1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    let at = |t: f64| match t {
        0.0 => a,
        1.0 => b,
        _ => (
            (a.0 + t * dx).clamp(xr.0, xr.1),
            (a.1 + t * dy).clamp(yr.0, yr.1),
        ),
    };
    (t0 <= t1).then(|| (at(t0), at(t1)))
}

/// The polylines to draw for `points`: broken where a point is not finite
/// or the line leaves the box `xr x yr`, and clipped to it.
fn runs(points: &[(f64, f64)], xr: (f64, f64), yr: (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut open = false;
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        match clip(a, b, xr, yr) {
            Some((p, q)) => {
                match runs.last_mut() {
                    Some(run) if open && p == a => run.push(q),
                    _ => runs.push(vec![p, q]),
                }
                open = q == b;
            }
            None => open = false,
        }
    }
    runs
}

/// Puts a legend of `size` (pixels) where it covers the fewest samples of
/// the data in a plot area of `plot` pixels (a point every 2 pixels along
/// the lines, and the markers), preferring the corners. Returns how many it
/// covers and its top-left corner in the plot area.
fn place_legend(
    chart: &Chart,
    xr: (f64, f64),
    yr: (f64, f64),
    plot: (i32, i32),
    size: (i32, i32),
) -> (usize, (i32, i32)) {
    let (pw, ph) = (f64::from(plot.0 - 1), f64::from(plot.1 - 1));
    let to_px = |(x, y): (f64, f64)| {
        (
            (x - xr.0) / (xr.1 - xr.0) * pw,
            (yr.1 - y) / (yr.1 - yr.0) * ph,
        )
    };
    let mut samples = Vec::new();
    for s in &chart.series {
        for run in runs(&s.points, xr, yr) {
            for w in run.windows(2) {
                let (a, b) = (to_px(w[0]), to_px(w[1]));
                let steps = ((b.0 - a.0).hypot(b.1 - a.1) / 2.0).ceil().max(1.0);
                for i in 0..=steps as usize {
                    let t = i as f64 / steps;
                    samples.push((a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1)));
                }
            }
        }
        if s.marker.is_some() {
            samples.extend(
                s.points
                    .iter()
                    .filter(|&&p| inside(p, xr, yr))
                    .map(|&p| to_px(p)),
            );
        }
    }
    let (w, h) = size;
    let (l, r) = (LEGEND_INSET, plot.0 - LEGEND_INSET - w);
    let (t, b) = (LEGEND_INSET, plot.1 - LEGEND_INSET - h);
    let (mid_x, mid_y) = ((plot.0 - w) / 2, (plot.1 - h) / 2);
    [
        (r, t),
        (l, t),
        (r, b),
        (l, b),
        (r, mid_y),
        (l, mid_y),
        (mid_x, t),
        (mid_x, b),
    ]
    .into_iter()
    .map(|(x, y)| {
        let (x0, y0) = (f64::from(x - MARKER_R), f64::from(y - MARKER_R));
        let (x1, y1) = (f64::from(x + w + MARKER_R), f64::from(y + h + MARKER_R));
        let n = samples
            .iter()
            .filter(|&&(sx, sy)| (x0..=x1).contains(&sx) && (y0..=y1).contains(&sy))
            .count();
        (n, (x, y))
    })
    .min_by_key(|&(n, _)| n)
    .expect("candidates")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `png` into its header and RGB bytes.
    fn decode(png: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut reader = png::Decoder::new(png).read_info().expect("PNG header");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("PNG data");
        buf.truncate(info.buffer_size());
        (info, buf)
    }

    /// A chart over the fixed range [0, 10] x [0, 10] with one series.
    fn square_chart(series: Series) -> Chart {
        Chart {
            title: "test".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![series],
            x_range: Some((0.0, 10.0)),
            y_range: Some((0.0, 10.0)),
        }
    }

    /// The text of every `<text>` element of `svg`, which must be
    /// well-formed XML with an `<svg>` root of `size`.
    fn svg_texts(svg: &str, size: (u32, u32)) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        let attr = |a: &str| root.attribute(a).map(str::to_string);
        assert_eq!(attr("width"), Some(size.0.to_string()));
        assert_eq!(attr("height"), Some(size.1.to_string()));
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    #[test]
    fn plot_svg_is_well_formed_and_names_the_series() {
        let mut chart = square_chart(
            Series::new("R=2 sim", vec![(0.0, 1.0), (10.0, 9.0)], PALETTE[0])
                .with_marker(Marker::Triangle),
        );
        chart.title = "(a) <delay> & more".into();
        chart
            .series
            .push(Series::new("R=2 analytic", vec![(0.0, 2.0), (10.0, 8.0)], PALETTE[0]).dashed());
        chart
            .series
            .push(Series::new("", vec![(0.0, 5.0), (10.0, 5.0)], GREY));
        let svg = render_svg(&[chart.clone(), chart], 2, 400, 300).unwrap();
        let texts = svg_texts(&svg, (800, 300));
        for want in ["R=2 sim", "R=2 analytic", "(a) <delay> & more", "x", "y"] {
            assert_eq!(
                texts.iter().filter(|t| *t == want).count(),
                2,
                "`{want}` once per panel in {texts:?}"
            );
        }
        // Ticks at 0, 5 and 10 on both axes of both panels.
        assert_eq!(texts.iter().filter(|t| *t == "10").count(), 4);
        // The unlabelled series stays out of the legend.
        assert_eq!(
            texts.iter().filter(|t| t.is_empty()).count(),
            0,
            "{texts:?}"
        );
        // Two panels, each with the solid, the dashed (several dashes) and
        // the grey line in its colour.
        let blue = "stroke=\"#1F77B4\"";
        assert!(svg.matches(blue).count() > 10, "{svg}");
        assert!(svg.contains("stroke=\"#7F7F7F\""));
    }

    #[test]
    fn plot_png_decodes_with_the_grid_size() {
        let chart = square_chart(Series::new("a", vec![(0.0, 0.0), (10.0, 10.0)], PALETTE[0]));
        let png = render_png(&[chart.clone(), chart.clone(), chart], 2, 320, 200).unwrap();
        let (info, buf) = decode(&png);
        assert_eq!((info.width, info.height), (640, 400));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(buf.len(), 640 * 400 * 3);
        let px = |x: usize, y: usize| -> Rgb {
            let i = (y * 640 + x) * 3;
            [buf[i], buf[i + 1], buf[i + 2]]
        };
        // The fourth cell of the grid is empty: white.
        assert!((200..400).all(|y| (320..640).all(|x| px(x, y) == [255; 3])));
        // The series is drawn in its colour in each of the three charts.
        for (x0, y0) in [(0, 0), (320, 0), (0, 200)] {
            let n = (y0..y0 + 200)
                .flat_map(|y| (x0..x0 + 320).map(move |x| (x, y)))
                .filter(|&(x, y)| px(x, y) == PALETTE[0])
                .count();
            assert!(
                n > 100,
                "{n} pixels of the series in the panel at {x0},{y0}"
            );
        }
    }

    #[test]
    fn plot_png_text_is_drawn_with_the_bundled_font() {
        // Dark pixels in the title band, above the plot: the title's glyphs.
        let dark_in_title = |title: &str| {
            let chart = Chart {
                title: title.into(),
                ..Chart::default()
            };
            let (info, buf) = decode(&render_png(&[chart], 1, 400, 300).unwrap());
            buf[..info.width as usize * 3 * 25]
                .chunks(3)
                .filter(|c| c.iter().all(|&v| v < 128))
                .count()
        };
        let (dot, short, long) = (
            dark_in_title("."),
            dark_in_title("Mean delay"),
            dark_in_title("Mean delay, N=64, RTT=64"),
        );
        assert!(
            dot < 20 && short > 100 && long > short + 50,
            "{dot} {short} {long}"
        );
    }

    #[test]
    fn plot_lines_break_at_nan_and_are_clipped() {
        let (xr, yr) = ((0.0, 10.0), (0.0, 10.0));
        let pts = [
            (0.0, 5.0),
            (4.0, 5.0),
            (5.0, f64::NAN),
            (6.0, 5.0),
            (f64::INFINITY, 1.0),
            (10.0, 5.0),
            (8.0, 6.0),
        ];
        assert_eq!(
            runs(&pts, xr, yr),
            [vec![(0.0, 5.0), (4.0, 5.0)], vec![(10.0, 5.0), (8.0, 6.0)]]
        );
        // Far outside: clipped to the box, not drawn out to it.
        assert_eq!(
            runs(&[(-1e6, -1e6), (1e6, 1e6)], xr, yr),
            [vec![(0.0, 0.0), (10.0, 10.0)]]
        );
        // Leaving the box and coming back: two runs.
        assert_eq!(
            runs(&[(2.0, 5.0), (5.0, 15.0), (8.0, 5.0)], xr, yr),
            [vec![(2.0, 5.0), (3.5, 10.0)], vec![(6.5, 10.0), (8.0, 5.0)]]
        );
        assert!(runs(&[(20.0, 20.0), (30.0, 30.0)], xr, yr).is_empty());
        // All points invalid, no points, or no series at all: still an image.
        let mut chart = square_chart(Series::new("x", vec![(f64::NAN, 1.0)], PALETTE[1]));
        chart.x_range = None;
        chart.y_range = None;
        for _ in 0..3 {
            let png = render_png(std::slice::from_ref(&chart), 1, 400, 300).unwrap();
            assert_eq!(decode(&png).0.width, 400);
            chart.series.pop();
        }
    }

    #[test]
    fn plot_legend_avoids_the_data() {
        // A rising diagonal leaves the top-left and bottom-right corners free.
        let chart = square_chart(Series::new(
            "data",
            vec![(0.0, 0.0), (10.0, 10.0)],
            PALETTE[2],
        ));
        let (plot, size) = ((500, 300), (120, 40));
        let (covered, (x, y)) = place_legend(&chart, (0.0, 10.0), (0.0, 10.0), plot, size);
        assert_eq!(covered, 0);
        assert!(
            (x + size.0 < plot.0 / 2 && y + size.1 < plot.1 / 2)
                || (x > plot.0 / 2 && y > plot.1 / 2),
            "{x},{y}"
        );
        // Data filling the whole plot leaves no free spot.
        let zigzag = Series::new(
            "zigzag",
            (0..=40)
                .map(|i| (f64::from(i) / 4.0, f64::from(i % 2) * 10.0))
                .collect(),
            PALETTE[1],
        );
        let chart = square_chart(zigzag);
        assert!(place_legend(&chart, (0.0, 10.0), (0.0, 10.0), plot, size).0 > 0);
        // Then an automatic y axis grows upwards to make room above it.
        let auto = Chart {
            y_range: None,
            ..chart
        };
        let svg = render_svg(&[auto], 1, 640, 440).unwrap();
        let top = svg_texts(&svg, (640, 440))
            .iter()
            .filter_map(|t| t.parse::<f64>().ok())
            .fold(f64::MIN, f64::max);
        assert!(top > 10.0, "highest tick {top}");
    }

    #[test]
    fn plot_ranges_and_tick_labels() {
        assert_eq!(nice_range((64.0, 137.6), 8), (60.0, 140.0));
        assert_eq!(nice_range((0.1, 0.9), 5), (0.0, 1.0));
        let (lo, hi) = nice_range((3.0, 3.0), 5);
        assert!(
            (lo - 2.6).abs() < 1e-9 && (hi - 3.4).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(nice_range((f64::NAN, 1.0), 5), (0.0, 1.0));
        let labels = |t: &[f64]| -> Vec<String> { t.iter().map(decimals_formatter(t)).collect() };
        assert_eq!(labels(&[0.0, 0.5, 1.0]), ["0.0", "0.5", "1.0"]);
        assert_eq!(labels(&[60.0, 100.0, 140.0]), ["60", "100", "140"]);
        assert_eq!(labels(&[-0.05, 0.0, 0.05]), ["-0.05", "0.00", "0.05"]);
        assert_eq!(decimals_formatter(&[0.5])(&-0.0001), "0.0");
        assert_eq!(
            tick_labels((0.0, 1.0), 6),
            ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
        );
    }
}
