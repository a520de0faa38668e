//! Line charts as PNG images, with no system library and no font file.
//!
//! A [`Chart`] is a set of [`Series`] (polylines in data coordinates, solid
//! or dashed, with optional point markers) over a frame with "nice" ticks
//! (steps of 1, 2 or 5 times a power of ten, see [`nice_ticks`]), grid lines,
//! axis titles, a title and a legend. [`render_png`] draws several charts in
//! a grid into one RGB image and encodes it with the `png` crate.
//!
//! Everything is drawn on an in-memory RGB canvas without anti-aliasing:
//! lines are 2 px thick, text uses a built-in 5x7 bitmap font for ASCII
//! 32..=126 (anything else prints as `?`) scaled x2. A point with a NaN or
//! infinite coordinate is skipped, and the line breaks there. The legend
//! goes where it covers the fewest data (a corner, or the middle of a side);
//! if it would cover some wherever it goes and the y range is automatic, the
//! y axis is extended upwards to make room for it above the data.
//!
//! ```no_run
//! use cosim::plot::{render_png, Chart, Marker, Series, PALETTE};
//!
//! let squares = (0..=10).map(|i| (f64::from(i), f64::from(i * i))).collect();
//! let chart = Chart {
//!     title: "Squares".into(),
//!     x_label: "x".into(),
//!     y_label: "x^2".into(),
//!     series: vec![Series::new("x^2", squares, PALETTE[0]).with_marker(Marker::Circle)],
//!     ..Chart::default()
//! };
//! std::fs::write("squares.png", render_png(&[chart], 1, 640, 440))?;
//! # Ok::<(), std::io::Error>(())
//! ```

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

const WHITE: Rgb = [255, 255, 255];
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

/// One line chart: a panel of [`render_png`]'s grid.
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

/// Renders `panels` in a grid of `cols` columns (row by row), each panel
/// `panel_w x panel_h` pixels, into one PNG image of `cols * panel_w` by
/// `rows * panel_h` pixels (8-bit RGB).
///
/// # Panics
///
/// If `panel_w` or `panel_h` is zero, or a side of the image exceeds
/// `u32::MAX` pixels.
pub fn render_png(panels: &[Chart], cols: usize, panel_w: u32, panel_h: u32) -> Vec<u8> {
    let cols = cols.max(1);
    let rows = panels.len().div_ceil(cols).max(1);
    let side = |n: usize, each: u32| {
        u32::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(each))
            .expect("image side fits in u32")
    };
    let mut canvas = Canvas::new(side(cols, panel_w), side(rows, panel_h));
    for (i, chart) in panels.iter().enumerate() {
        let panel = Rect {
            x: (i % cols) as i64 * i64::from(panel_w),
            y: (i / cols) as i64 * i64::from(panel_h),
            w: i64::from(panel_w),
            h: i64::from(panel_h),
        };
        draw_chart(&mut canvas, chart, panel);
    }
    canvas.encode_png()
}

/// Tick values at a "nice" step (1, 2 or 5 times a power of ten) covering
/// `[lo, hi]`: the smallest such step giving at most `max_intervals`
/// intervals over the range, from the last multiple of it at or below `lo`
/// to the first at or above `hi`. `nice_ticks(0.0, 95.0, 5)` is
/// `[0, 20, 40, 60, 80, 100]`. A degenerate range is widened around its
/// value; a non-finite one is taken as `[0, 1]`.
pub fn nice_ticks(lo: f64, hi: f64, max_intervals: usize) -> Vec<f64> {
    let (lo, hi) = widen(lo, hi);
    let step = Step::nice(hi - lo, max_intervals);
    step.covering(lo, hi).map(|k| step.value(k)).collect()
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

/// A tick step `m * 10^e`, `m` in {1, 2, 5}.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Step {
    m: i64,
    e: i32,
}

impl Step {
    /// The smallest step dividing `span` into at most `max_intervals`.
    fn nice(span: f64, max_intervals: usize) -> Step {
        let raw = span / max_intervals.max(1) as f64;
        let e = raw.log10().floor() as i32;
        [(1, e), (2, e), (5, e), (1, e + 1), (2, e + 1)]
            .into_iter()
            .map(|(m, e)| Step { m, e })
            .find(|s| s.value(1) >= raw * (1.0 - 1e-9))
            .unwrap_or(Step { m: 5, e: e + 1 })
    }

    /// `k` steps. Computed as an integer scaled by a power of ten, so that
    /// e.g. `3 x 0.2` is `0.6`, not `0.6000000000000001`.
    fn value(self, k: i64) -> f64 {
        let n = k.saturating_mul(self.m) as f64;
        if self.e >= 0 {
            n * 10f64.powi(self.e)
        } else {
            n / 10f64.powi(-self.e)
        }
    }

    /// The multiples `k` of the step from the last at or below `lo` to the
    /// first at or above `hi` (with a little slack for rounding).
    fn covering(self, lo: f64, hi: f64) -> std::ops::RangeInclusive<i64> {
        let size = self.value(1);
        (lo / size + 1e-9).floor() as i64..=(hi / size - 1e-9).ceil() as i64
    }

    /// Decimal places that print every multiple exactly.
    fn decimals(self) -> usize {
        self.e.min(0).unsigned_abs() as usize
    }
}

/// One axis: its range, ticks and how they print.
#[derive(Clone, Debug, PartialEq)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    decimals: usize,
}

impl Axis {
    /// A fixed range keeps its bounds and shows the ticks inside; an
    /// automatic one is widened to the ticks covering it.
    fn new((lo, hi): (f64, f64), fixed: bool, max_intervals: usize) -> Axis {
        let (lo, hi) = widen(lo, hi);
        let step = Step::nice(hi - lo, max_intervals);
        let ks = step.covering(lo, hi);
        let (lo, hi) = if fixed {
            (lo, hi)
        } else {
            (step.value(*ks.start()), step.value(*ks.end()))
        };
        let slack = 1e-9 * (hi - lo);
        Axis {
            lo,
            hi,
            ticks: ks
                .map(|k| step.value(k))
                .filter(|t| (lo - slack..=hi + slack).contains(t))
                .collect(),
            decimals: step.decimals(),
        }
    }

    /// Where `v` falls, 0 at `lo` and 1 at `hi`.
    fn frac(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }

    /// The tick label of `v`.
    fn label(&self, v: f64) -> String {
        let s = format!("{:.*}", self.decimals, v);
        match s.strip_prefix('-') {
            Some(abs) if abs.bytes().all(|b| b == b'0' || b == b'.') => abs.to_string(),
            _ => s,
        }
    }
}

/// A rectangle of pixels, `w x h` from the top-left corner `(x, y)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rect {
    x: i64,
    y: i64,
    w: i64,
    h: i64,
}

impl Rect {
    fn right(self) -> i64 {
        self.x + self.w
    }

    fn bottom(self) -> i64 {
        self.y + self.h
    }

    fn contains(self, x: i64, y: i64) -> bool {
        (self.x..self.right()).contains(&x) && (self.y..self.bottom()).contains(&y)
    }

    fn contains_f(self, (x, y): (f64, f64)) -> bool {
        (self.x as f64..=self.right() as f64).contains(&x)
            && (self.y as f64..=self.bottom() as f64).contains(&y)
    }

    fn grow(self, d: i64) -> Rect {
        Rect {
            x: self.x - d,
            y: self.y - d,
            w: self.w + 2 * d,
            h: self.h + 2 * d,
        }
    }

    fn intersect(self, o: Rect) -> Rect {
        let (x, y) = (self.x.max(o.x), self.y.max(o.y));
        Rect {
            x,
            y,
            w: (self.right().min(o.right()) - x).max(0),
            h: (self.bottom().min(o.bottom()) - y).max(0),
        }
    }
}

/// Font scale: a font pixel is `SCALE x SCALE` image pixels.
const SCALE: i64 = 2;
const GLYPH_W: i64 = 5;
/// Glyph rows: capitals and digits take the first seven, descenders the
/// eighth.
const GLYPH_H: i64 = 8;
/// Horizontal advance from one character to the next.
const ADVANCE: i64 = (GLYPH_W + 1) * SCALE;
/// Height of a line of text, and of capitals and digits.
const TEXT_H: i64 = GLYPH_H * SCALE;
const CAP_H: i64 = 7 * SCALE;
/// Space around the panel's contents.
const PAD: i64 = 8;
const TICK_LEN: i64 = 5;
/// Gap between a tick and its label.
const TICK_GAP: i64 = 4;
/// Gap between tick labels and the axis title.
const TITLE_GAP: i64 = 8;
/// Dash pattern: pixels on, then off.
const DASH_ON: f64 = 7.0;
const DASH_OFF: f64 = 5.0;
/// Marker half-size.
const MARKER_R: i64 = 4;
/// Legend: inner padding, row pitch, length of the sample line, distance
/// from the plot's edges.
const LEGEND_PAD: i64 = 6;
const LEGEND_ROW: i64 = TEXT_H + 4;
const LEGEND_SAMPLE: i64 = 30;
const LEGEND_INSET: i64 = 6;

/// The width of `s` in pixels.
fn text_width(s: &str) -> i64 {
    match s.chars().count() as i64 {
        0 => 0,
        n => n * ADVANCE - SCALE,
    }
}

/// Where a chart's parts go in its panel, and its axes.
#[derive(Clone, Debug, PartialEq)]
struct Layout {
    /// The plot area: the data range spans it, the frame is around it.
    plot: Rect,
    x: Axis,
    y: Axis,
    legend: Option<Rect>,
}

impl Layout {
    /// Lays `chart` out in `panel`.
    fn new(chart: &Chart, panel: Rect) -> Layout {
        let fixed = |r: Option<(f64, f64)>| {
            r.filter(|&(lo, hi)| lo.is_finite() && hi.is_finite() && lo < hi)
        };
        let (x_fixed, y_fixed) = (fixed(chart.x_range), fixed(chart.y_range));
        let finite = || {
            chart
                .series
                .iter()
                .flat_map(|s| &s.points)
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        let bounds = |vs: Vec<f64>| {
            vs.into_iter()
                .fold(None, |b: Option<(f64, f64)>, v| {
                    Some(b.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
                })
                .unwrap_or((0.0, 1.0))
        };
        let x_want = x_fixed.unwrap_or_else(|| bounds(finite().map(|p| p.0).collect()));
        let mut y_want = y_fixed.unwrap_or_else(|| bounds(finite().map(|p| p.1).collect()));

        let top = panel.y + PAD + TEXT_H + PAD;
        let bottom = panel.bottom() - (TICK_LEN + TICK_GAP + TEXT_H + TITLE_GAP + TEXT_H + PAD);
        let h = (bottom - top).max(1);
        let mut attempt = 0;
        loop {
            let y = Axis::new(y_want, y_fixed.is_some(), (h / 50).max(2) as usize);
            let label_w = y
                .ticks
                .iter()
                .map(|&t| text_width(&y.label(t)))
                .max()
                .unwrap_or(0);
            let left = panel.x + PAD + TEXT_H + TITLE_GAP + label_w + TICK_GAP + TICK_LEN;
            // Room on the right for half a tick label of up to 5 characters.
            let right = panel.right() - (PAD + 2 * ADVANCE);
            let plot = Rect {
                x: left,
                y: top,
                w: (right - left).max(1),
                h,
            };
            let x = Axis::new(x_want, x_fixed.is_some(), (plot.w / 90).max(2) as usize);
            let mut lay = Layout {
                plot,
                x,
                y,
                legend: None,
            };
            let covered = lay.place_legend(chart);
            // Give the legend room above the data, unless the range is fixed
            // or the legend is too tall for that.
            let free = plot.h - lay.legend.map_or(0, |r| r.h) - 2 * LEGEND_INSET;
            if covered == 0 || y_fixed.is_some() || free <= plot.h / 4 || attempt == 3 {
                return lay;
            }
            let (lo, hi) = (lay.y.lo, lay.y.hi);
            y_want.1 = hi + (hi - lo) * (plot.h - free) as f64 / free as f64;
            attempt += 1;
        }
    }

    /// Pixel coordinates of a data point (the data range spans the centres
    /// of the plot area's edge pixels).
    fn to_px(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let p = self.plot;
        (
            p.x as f64 + 0.5 + self.x.frac(x) * (p.w - 1) as f64,
            p.bottom() as f64 - 0.5 - self.y.frac(y) * (p.h - 1) as f64,
        )
    }

    /// The polyline of `s` in pixels; `None` where a point is not finite.
    fn trace(&self, s: &Series) -> Vec<Option<(f64, f64)>> {
        s.points
            .iter()
            .map(|&(x, y)| (x.is_finite() && y.is_finite()).then(|| self.to_px((x, y))))
            .collect()
    }

    /// Puts the legend where it covers the fewest samples of the data (a
    /// point every pixel along the lines, and the markers), preferring the
    /// corners; returns how many it covers.
    fn place_legend(&mut self, chart: &Chart) -> usize {
        let labels: Vec<&str> = chart
            .series
            .iter()
            .map(|s| s.label.as_str())
            .filter(|l| !l.is_empty())
            .collect();
        if labels.is_empty() {
            return 0;
        }
        let text_w = labels.iter().map(|l| text_width(l)).max().unwrap_or(0);
        let (w, h) = (
            2 * LEGEND_PAD + LEGEND_SAMPLE + LEGEND_PAD + text_w,
            2 * LEGEND_PAD + labels.len() as i64 * LEGEND_ROW - (LEGEND_ROW - TEXT_H),
        );
        let p = self.plot;
        let (l, r) = (p.x + LEGEND_INSET, p.right() - LEGEND_INSET - w);
        let (t, b) = (p.y + LEGEND_INSET, p.bottom() - LEGEND_INSET - h);
        let (mid_y, mid_x) = (p.y + (p.h - h) / 2, p.x + (p.w - w) / 2);
        let candidates = [
            (r, t),
            (l, t),
            (r, b),
            (l, b),
            (r, mid_y),
            (l, mid_y),
            (mid_x, t),
            (mid_x, b),
        ]
        .map(|(x, y)| Rect { x, y, w, h });

        let mut samples = Vec::new();
        let bounds = self.plot;
        for s in &chart.series {
            let pts = self.trace(s);
            for pair in pts.windows(2) {
                if let [Some(a), Some(b)] = *pair {
                    raster(a, b, bounds, |x, y, _| samples.push((x, y)));
                }
            }
            if s.marker.is_some() {
                samples.extend(pts.into_iter().flatten());
            }
        }
        let (covered, best) = candidates
            .iter()
            .map(|c| {
                let zone = c.grow(MARKER_R);
                let n = samples
                    .iter()
                    .filter(|&&(x, y)| zone.contains(x.floor() as i64, y.floor() as i64))
                    .count();
                (n, *c)
            })
            .min_by_key(|&(n, _)| n)
            .expect("candidates");
        self.legend = Some(best);
        covered
    }
}

/// Calls `visit(x, y, distance from a)` at every pixel step along the part
/// of the segment `a`-`b` inside `bounds` (Liang-Barsky clipping), both ends
/// included.
fn raster(a: (f64, f64), b: (f64, f64), bounds: Rect, mut visit: impl FnMut(f64, f64, f64)) {
    if ![a.0, a.1, b.0, b.1].iter().all(|v| v.is_finite()) {
        return;
    }
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - bounds.x as f64),
        (dx, bounds.right() as f64 - a.0),
        (-dy, a.1 - bounds.y as f64),
        (dy, bounds.bottom() as f64 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return;
            }
        } else if p < 0.0 {
            t0 = t0.max(q / p);
        } else {
            t1 = t1.min(q / p);
        }
    }
    if t0 > t1 {
        return;
    }
    let len = dx.hypot(dy);
    let steps = (dx.abs().max(dy.abs()) * (t1 - t0)).ceil().max(1.0);
    for i in 0..=steps as i64 {
        let t = t0 + (t1 - t0) * i as f64 / steps;
        visit(a.0 + t * dx, a.1 + t * dy, t * len);
    }
}

/// An RGB image being drawn; drawing outside `clip` has no effect.
struct Canvas {
    w: i64,
    h: i64,
    px: Vec<u8>,
    clip: Rect,
}

impl Canvas {
    /// A white canvas.
    fn new(w: u32, h: u32) -> Canvas {
        let (w, h) = (i64::from(w), i64::from(h));
        Canvas {
            w,
            h,
            px: vec![255; (w * h * 3) as usize],
            clip: Rect { x: 0, y: 0, w, h },
        }
    }

    fn set_clip(&mut self, r: Rect) {
        self.clip = r.intersect(Rect {
            x: 0,
            y: 0,
            w: self.w,
            h: self.h,
        });
    }

    fn put(&mut self, x: i64, y: i64, c: Rgb) {
        if self.clip.contains(x, y) {
            let i = ((y * self.w + x) * 3) as usize;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn fill(&mut self, r: Rect, c: Rgb) {
        for y in r.y..r.bottom() {
            for x in r.x..r.right() {
                self.put(x, y, c);
            }
        }
    }

    /// A 1 px border just inside `r`.
    fn outline(&mut self, r: Rect, c: Rgb) {
        for (x, y, w, h) in [
            (r.x, r.y, r.w, 1),
            (r.x, r.bottom() - 1, r.w, 1),
            (r.x, r.y, 1, r.h),
            (r.right() - 1, r.y, 1, r.h),
        ] {
            self.fill(Rect { x, y, w, h }, c);
        }
    }

    /// The 2 x 2 pixels nearest to `(x, y)`.
    fn dot(&mut self, x: f64, y: f64, c: Rgb) {
        let (x0, y0) = ((x - 0.5).floor() as i64, (y - 0.5).floor() as i64);
        self.fill(
            Rect {
                x: x0,
                y: y0,
                w: 2,
                h: 2,
            },
            c,
        );
    }

    /// A 2 px line from `a` to `b`, clipped to `bounds`. `dash`: `None` for
    /// a solid line, or the length of the dashed polyline drawn so far,
    /// which the segment continues and advances.
    fn segment(
        &mut self,
        a: (f64, f64),
        b: (f64, f64),
        c: Rgb,
        dash: Option<&mut f64>,
        bounds: Rect,
    ) {
        let phase = dash.as_deref().copied();
        raster(a, b, bounds, |x, y, d| {
            let on = phase.is_none_or(|p| (p + d).rem_euclid(DASH_ON + DASH_OFF) < DASH_ON);
            if on {
                self.dot(x, y, c);
            }
        });
        if let Some(p) = dash {
            *p += (b.0 - a.0).hypot(b.1 - a.1);
        }
    }

    /// The line through the points of `pts` (in pixels), broken at `None`.
    fn polyline(&mut self, pts: &[Option<(f64, f64)>], s: &Series, bounds: Rect) {
        let mut phase = 0.0;
        for pair in pts.windows(2) {
            match *pair {
                [Some(a), Some(b)] => {
                    self.segment(a, b, s.color, s.dashed.then_some(&mut phase), bounds);
                }
                _ => phase = 0.0,
            }
        }
    }

    fn marker(&mut self, m: Marker, (x, y): (f64, f64), c: Rgb) {
        let (cx, cy) = (x.floor() as i64, y.floor() as i64);
        let r = MARKER_R;
        match m {
            Marker::Circle => {
                for dy in -r..=r {
                    for dx in -r..=r {
                        if dx * dx + dy * dy <= r * r + 1 {
                            self.put(cx + dx, cy + dy, c);
                        }
                    }
                }
            }
            Marker::Square => self.fill(
                Rect {
                    x: cx - r + 1,
                    y: cy - r + 1,
                    w: 2 * r - 1,
                    h: 2 * r - 1,
                },
                c,
            ),
            Marker::Triangle => {
                for k in 0..2 * r {
                    let half = (k + 1) / 2;
                    self.fill(
                        Rect {
                            x: cx - half,
                            y: cy - r + k + 1,
                            w: 2 * half + 1,
                            h: 1,
                        },
                        c,
                    );
                }
            }
            Marker::Cross => {
                for i in -r..=r {
                    for (px, py) in [(cx + i, cy + i), (cx + i, cy - i)] {
                        self.put(px, py, c);
                        self.put(px + 1, py, c);
                    }
                }
            }
        }
    }

    /// `s` with its top-left corner at `(x, y)`.
    fn text(&mut self, x: i64, y: i64, s: &str, c: Rgb) {
        self.glyphs(s, c, |gx, gy| (x + gx * SCALE, y + gy * SCALE));
    }

    /// `s` turned a quarter left (reading upwards), its first character's
    /// bottom-left corner (as read) at `(x, y)`.
    fn text_up(&mut self, x: i64, y: i64, s: &str, c: Rgb) {
        self.glyphs(s, c, |gx, gy| (x + gy * SCALE, y - (gx + 1) * SCALE));
    }

    /// Fills a `SCALE x SCALE` block at `at(column, row)` for every set
    /// font pixel of `s`, its glyphs side by side (`column` counts across
    /// the string, one blank column between glyphs).
    fn glyphs(&mut self, s: &str, c: Rgb, at: impl Fn(i64, i64) -> (i64, i64)) {
        for (k, ch) in s.chars().enumerate() {
            for (row, bits) in glyph(ch).iter().enumerate() {
                for col in 0..GLYPH_W {
                    if bits >> (GLYPH_W - 1 - col) & 1 == 1 {
                        let (x, y) = at(k as i64 * (GLYPH_W + 1) + col, row as i64);
                        self.fill(
                            Rect {
                                x,
                                y,
                                w: SCALE,
                                h: SCALE,
                            },
                            c,
                        );
                    }
                }
            }
        }
    }

    fn encode_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.w as u32, self.h as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // An in-memory image of the declared size cannot fail to encode.
        let mut writer = enc.write_header().expect("PNG header");
        writer.write_image_data(&self.px).expect("PNG data");
        writer.finish().expect("PNG end");
        out
    }
}

/// Draws `chart` in `panel`.
fn draw_chart(cv: &mut Canvas, chart: &Chart, panel: Rect) {
    let lay = Layout::new(chart, panel);
    let plot = lay.plot;
    cv.set_clip(panel);

    // Grid, ticks and tick labels.
    for &t in &lay.x.ticks {
        let x = lay.to_px((t, lay.y.lo)).0.floor() as i64;
        cv.fill(
            Rect {
                x,
                y: plot.y,
                w: 1,
                h: plot.h,
            },
            GRID,
        );
        cv.fill(
            Rect {
                x,
                y: plot.bottom(),
                w: 1,
                h: TICK_LEN + 1,
            },
            FRAME,
        );
        let label = lay.x.label(t);
        let y = plot.bottom() + 1 + TICK_LEN + TICK_GAP;
        cv.text(x - text_width(&label) / 2, y, &label, BLACK);
    }
    for &t in &lay.y.ticks {
        let y = lay.to_px((lay.x.lo, t)).1.floor() as i64;
        cv.fill(
            Rect {
                x: plot.x,
                y,
                w: plot.w,
                h: 1,
            },
            GRID,
        );
        cv.fill(
            Rect {
                x: plot.x - 1 - TICK_LEN,
                y,
                w: TICK_LEN + 1,
                h: 1,
            },
            FRAME,
        );
        let label = lay.y.label(t);
        let x = plot.x - 1 - TICK_LEN - TICK_GAP - text_width(&label);
        cv.text(x, y - CAP_H / 2, &label, BLACK);
    }
    cv.outline(plot.grow(1), FRAME);

    // Series: lines, then markers over them.
    cv.set_clip(plot.grow(MARKER_R + 1).intersect(panel));
    let traces: Vec<_> = chart.series.iter().map(|s| lay.trace(s)).collect();
    for (s, pts) in chart.series.iter().zip(&traces) {
        cv.polyline(pts, s, plot);
    }
    for (s, pts) in chart.series.iter().zip(&traces) {
        if let Some(m) = s.marker {
            for &p in pts.iter().flatten().filter(|&&p| plot.contains_f(p)) {
                cv.marker(m, p, s.color);
            }
        }
    }
    cv.set_clip(panel);
    if let Some(r) = lay.legend {
        draw_legend(cv, chart, r);
    }

    // Titles.
    let centre = |s: &str| (plot.x + (plot.w - text_width(s)) / 2).max(panel.x + PAD);
    cv.text(centre(&chart.title), panel.y + PAD, &chart.title, BLACK);
    let y = plot.bottom() + 1 + TICK_LEN + TICK_GAP + TEXT_H + TITLE_GAP;
    cv.text(centre(&chart.x_label), y, &chart.x_label, BLACK);
    let y = (plot.y + (plot.h + text_width(&chart.y_label)) / 2).min(panel.bottom() - PAD);
    cv.text_up(panel.x + PAD, y, &chart.y_label, BLACK);
}

/// The legend box at `r`: a sample of each labelled series' line and
/// marker, and its label.
fn draw_legend(cv: &mut Canvas, chart: &Chart, r: Rect) {
    cv.fill(r, WHITE);
    cv.outline(r, LEGEND_BORDER);
    let labelled = chart.series.iter().filter(|s| !s.label.is_empty());
    for (i, s) in labelled.enumerate() {
        let top = r.y + LEGEND_PAD + i as i64 * LEGEND_ROW;
        let (x0, yc) = ((r.x + LEGEND_PAD) as f64, top as f64 + CAP_H as f64 / 2.0);
        let x1 = x0 + LEGEND_SAMPLE as f64;
        let mut phase = 0.0;
        cv.segment(
            (x0, yc),
            (x1, yc),
            s.color,
            s.dashed.then_some(&mut phase),
            r,
        );
        if let Some(m) = s.marker {
            cv.marker(m, ((x0 + x1) / 2.0, yc), s.color);
        }
        let x = r.x + 2 * LEGEND_PAD + LEGEND_SAMPLE;
        cv.text(x, top, &s.label, BLACK);
    }
}

/// The glyph of `c` (`?` for anything outside ASCII 32..=126).
fn glyph(c: char) -> &'static [u8; 8] {
    let i = (c as usize).wrapping_sub(32);
    FONT.get(i).unwrap_or(&FONT[usize::from(b'?' - 32)])
}

/// A 5x7 bitmap font for ASCII 32..=126, with a descender row below the
/// baseline (for g, j, p, q, y and the comma): eight rows per glyph, top
/// first, bit 4 the leftmost column.
#[rustfmt::skip]
const FONT: [[u8; 8]; 95] = [
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000], // ' '
    [0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00000, 0b00100, 0b00000], // !
    [0b01010, 0b01010, 0b01010, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000], // "
    [0b01010, 0b01010, 0b11111, 0b01010, 0b11111, 0b01010, 0b01010, 0b00000], // #
    [0b00100, 0b01111, 0b10100, 0b01110, 0b00101, 0b11110, 0b00100, 0b00000], // $
    [0b11000, 0b11001, 0b00010, 0b00100, 0b01000, 0b10011, 0b00011, 0b00000], // %
    [0b01100, 0b10010, 0b10100, 0b01000, 0b10101, 0b10010, 0b01101, 0b00000], // &
    [0b00100, 0b00100, 0b01000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000], // '
    [0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00100, 0b00010, 0b00000], // (
    [0b01000, 0b00100, 0b00010, 0b00010, 0b00010, 0b00100, 0b01000, 0b00000], // )
    [0b00000, 0b00100, 0b10101, 0b01110, 0b10101, 0b00100, 0b00000, 0b00000], // *
    [0b00000, 0b00100, 0b00100, 0b11111, 0b00100, 0b00100, 0b00000, 0b00000], // +
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b00100, 0b01000], // ,
    [0b00000, 0b00000, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000, 0b00000], // -
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b01100, 0b01100, 0b00000], // .
    [0b00000, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b00000, 0b00000], // /
    [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110, 0b00000], // 0
    [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000], // 1
    [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111, 0b00000], // 2
    [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110, 0b00000], // 3
    [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010, 0b00000], // 4
    [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110, 0b00000], // 5
    [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110, 0b00000], // 6
    [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000, 0b00000], // 7
    [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110, 0b00000], // 8
    [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100, 0b00000], // 9
    [0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b01100, 0b00000, 0b00000], // :
    [0b00000, 0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b00100, 0b01000], // ;
    [0b00010, 0b00100, 0b01000, 0b10000, 0b01000, 0b00100, 0b00010, 0b00000], // <
    [0b00000, 0b00000, 0b11111, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000], // =
    [0b01000, 0b00100, 0b00010, 0b00001, 0b00010, 0b00100, 0b01000, 0b00000], // >
    [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b00000, 0b00100, 0b00000], // ?
    [0b01110, 0b10001, 0b00001, 0b01101, 0b10101, 0b10101, 0b01110, 0b00000], // @
    [0b01110, 0b10001, 0b10001, 0b10001, 0b11111, 0b10001, 0b10001, 0b00000], // A
    [0b11110, 0b10001, 0b10001, 0b11110, 0b10001, 0b10001, 0b11110, 0b00000], // B
    [0b01110, 0b10001, 0b10000, 0b10000, 0b10000, 0b10001, 0b01110, 0b00000], // C
    [0b11100, 0b10010, 0b10001, 0b10001, 0b10001, 0b10010, 0b11100, 0b00000], // D
    [0b11111, 0b10000, 0b10000, 0b11110, 0b10000, 0b10000, 0b11111, 0b00000], // E
    [0b11111, 0b10000, 0b10000, 0b11110, 0b10000, 0b10000, 0b10000, 0b00000], // F
    [0b01110, 0b10001, 0b10000, 0b10111, 0b10001, 0b10001, 0b01111, 0b00000], // G
    [0b10001, 0b10001, 0b10001, 0b11111, 0b10001, 0b10001, 0b10001, 0b00000], // H
    [0b01110, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000], // I
    [0b00111, 0b00010, 0b00010, 0b00010, 0b00010, 0b10010, 0b01100, 0b00000], // J
    [0b10001, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010, 0b10001, 0b00000], // K
    [0b10000, 0b10000, 0b10000, 0b10000, 0b10000, 0b10000, 0b11111, 0b00000], // L
    [0b10001, 0b11011, 0b10101, 0b10101, 0b10001, 0b10001, 0b10001, 0b00000], // M
    [0b10001, 0b10001, 0b11001, 0b10101, 0b10011, 0b10001, 0b10001, 0b00000], // N
    [0b01110, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01110, 0b00000], // O
    [0b11110, 0b10001, 0b10001, 0b11110, 0b10000, 0b10000, 0b10000, 0b00000], // P
    [0b01110, 0b10001, 0b10001, 0b10001, 0b10101, 0b10010, 0b01101, 0b00000], // Q
    [0b11110, 0b10001, 0b10001, 0b11110, 0b10100, 0b10010, 0b10001, 0b00000], // R
    [0b01111, 0b10000, 0b10000, 0b01110, 0b00001, 0b00001, 0b11110, 0b00000], // S
    [0b11111, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00000], // T
    [0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01110, 0b00000], // U
    [0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100, 0b00000], // V
    [0b10001, 0b10001, 0b10001, 0b10101, 0b10101, 0b10101, 0b01010, 0b00000], // W
    [0b10001, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001, 0b10001, 0b00000], // X
    [0b10001, 0b10001, 0b10001, 0b01010, 0b00100, 0b00100, 0b00100, 0b00000], // Y
    [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b10000, 0b11111, 0b00000], // Z
    [0b01110, 0b01000, 0b01000, 0b01000, 0b01000, 0b01000, 0b01110, 0b00000], // [
    [0b00000, 0b10000, 0b01000, 0b00100, 0b00010, 0b00001, 0b00000, 0b00000], // \
    [0b01110, 0b00010, 0b00010, 0b00010, 0b00010, 0b00010, 0b01110, 0b00000], // ]
    [0b00100, 0b01010, 0b10001, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000], // ^
    [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b11111, 0b00000], // _
    [0b01000, 0b00100, 0b00010, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000], // `
    [0b00000, 0b00000, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111, 0b00000], // a
    [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b11110, 0b00000], // b
    [0b00000, 0b00000, 0b01110, 0b10000, 0b10000, 0b10001, 0b01110, 0b00000], // c
    [0b00001, 0b00001, 0b01101, 0b10011, 0b10001, 0b10001, 0b01111, 0b00000], // d
    [0b00000, 0b00000, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110, 0b00000], // e
    [0b00110, 0b01001, 0b01000, 0b11100, 0b01000, 0b01000, 0b01000, 0b00000], // f
    [0b00000, 0b00000, 0b01111, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110], // g
    [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001, 0b00000], // h
    [0b00100, 0b00000, 0b01100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000], // i
    [0b00010, 0b00000, 0b00110, 0b00010, 0b00010, 0b00010, 0b10010, 0b01100], // j
    [0b10000, 0b10000, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010, 0b00000], // k
    [0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110, 0b00000], // l
    [0b00000, 0b00000, 0b11010, 0b10101, 0b10101, 0b10001, 0b10001, 0b00000], // m
    [0b00000, 0b00000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001, 0b00000], // n
    [0b00000, 0b00000, 0b01110, 0b10001, 0b10001, 0b10001, 0b01110, 0b00000], // o
    [0b00000, 0b00000, 0b11110, 0b10001, 0b10001, 0b11110, 0b10000, 0b10000], // p
    [0b00000, 0b00000, 0b01111, 0b10001, 0b10001, 0b01111, 0b00001, 0b00001], // q
    [0b00000, 0b00000, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000, 0b00000], // r
    [0b00000, 0b00000, 0b01110, 0b10000, 0b01110, 0b00001, 0b11110, 0b00000], // s
    [0b01000, 0b01000, 0b11100, 0b01000, 0b01000, 0b01001, 0b00110, 0b00000], // t
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b10011, 0b01101, 0b00000], // u
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100, 0b00000], // v
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10101, 0b10101, 0b01010, 0b00000], // w
    [0b00000, 0b00000, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001, 0b00000], // x
    [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110], // y
    [0b00000, 0b00000, 0b11111, 0b00010, 0b00100, 0b01000, 0b11111, 0b00000], // z
    [0b00010, 0b00100, 0b00100, 0b01000, 0b00100, 0b00100, 0b00010, 0b00000], // {
    [0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00000], // |
    [0b01000, 0b00100, 0b00100, 0b00010, 0b00100, 0b00100, 0b01000, 0b00000], // }
    [0b00000, 0b00000, 0b01000, 0b10101, 0b00010, 0b00000, 0b00000, 0b00000], // ~
];

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

    fn pixel(info: &png::OutputInfo, buf: &[u8], (x, y): (i64, i64)) -> Rgb {
        let i = (y as usize * info.width as usize + x as usize) * 3;
        [buf[i], buf[i + 1], buf[i + 2]]
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

    const PANEL: Rect = Rect {
        x: 0,
        y: 0,
        w: 400,
        h: 300,
    };

    /// Renders `chart` alone in a `PANEL`-sized image; returns its layout
    /// and the decoded image.
    fn render_one(chart: &Chart) -> (Layout, png::OutputInfo, Vec<u8>) {
        let png = render_png(
            std::slice::from_ref(chart),
            1,
            PANEL.w as u32,
            PANEL.h as u32,
        );
        let (info, buf) = decode(&png);
        (Layout::new(chart, PANEL), info, buf)
    }

    fn at(lay: &Layout, p: (f64, f64)) -> (i64, i64) {
        let (x, y) = lay.to_px(p);
        (x.floor() as i64, y.floor() as i64)
    }

    #[test]
    fn plot_png_decodes_with_the_grid_size() {
        let chart = square_chart(Series::new("a", vec![(0.0, 0.0), (10.0, 10.0)], PALETTE[0]));
        let png = render_png(&[chart.clone(), chart.clone(), chart], 2, 320, 200);
        let (info, buf) = decode(&png);
        assert_eq!((info.width, info.height), (640, 400));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(buf.len(), 640 * 400 * 3);
        // The fourth cell of the grid is empty: white.
        assert!(buf
            .chunks(3)
            .skip(200 * 640)
            .enumerate()
            .filter(|(i, _)| i % 640 >= 320)
            .all(|(_, c)| c == WHITE));
    }

    #[test]
    fn plot_line_pixels_have_the_series_colour() {
        let red = [200, 10, 20];
        let (lay, info, buf) = render_one(&square_chart(Series::new(
            "",
            vec![(0.0, 2.5), (10.0, 2.5), (10.0, 7.5)],
            red,
        )));
        for p in [(1.0, 2.5), (5.5, 2.5), (9.0, 2.5), (10.0, 5.5)] {
            assert_eq!(pixel(&info, &buf, at(&lay, p)), red, "on the line at {p:?}");
        }
        for p in [(5.5, 5.5), (1.0, 7.5), (5.5, 3.5)] {
            assert_ne!(
                pixel(&info, &buf, at(&lay, p)),
                red,
                "off the line at {p:?}"
            );
        }
        // 2 px thick: the rows just above and below the line's centre.
        let (x, y) = at(&lay, (5.5, 2.5));
        let rows: Vec<i64> = (y - 3..=y + 3)
            .filter(|&y| pixel(&info, &buf, (x, y)) == red)
            .collect();
        assert_eq!(rows.len(), 2, "{rows:?}");
    }

    #[test]
    fn plot_dashed_line_has_gaps() {
        let red = [200, 10, 20];
        let (lay, info, buf) = render_one(&square_chart(
            Series::new("", vec![(0.0, 5.5), (10.0, 5.5)], red).dashed(),
        ));
        let (x0, y) = at(&lay, (0.0, 5.5));
        let (x1, _) = at(&lay, (10.0, 5.5));
        let on: Vec<bool> = (x0..=x1)
            .map(|x| pixel(&info, &buf, (x, y)) == red)
            .collect();
        let dashes = on.windows(2).filter(|w| w[1] && !w[0]).count() + usize::from(on[0]);
        let expected = on.len() as f64 / (DASH_ON + DASH_OFF);
        assert!(
            (dashes as f64 - expected).abs() <= 1.0,
            "{dashes} dashes, expected {expected}"
        );
        // Each dash is about DASH_ON long (plus the brush's second pixel).
        let share = on.iter().filter(|&&b| b).count() as f64 / on.len() as f64;
        let expected = (DASH_ON + 1.0) / (DASH_ON + DASH_OFF);
        assert!(
            (share - expected).abs() < 0.05,
            "{share} on, expected {expected}"
        );
    }

    #[test]
    fn plot_markers_and_legend_are_drawn() {
        let green = [10, 150, 30];
        let chart = square_chart(
            Series::new("data", vec![(0.0, 0.0), (10.0, 10.0)], green).with_marker(Marker::Square),
        );
        let (lay, info, buf) = render_one(&chart);
        // The square marker at the origin reaches left of the line's start.
        let (x, y) = at(&lay, (0.0, 0.0));
        assert_eq!(pixel(&info, &buf, (x - 3, y - 3)), green);
        // The diagonal leaves the top-left and bottom-right corners free.
        let legend = lay.legend.expect("a labelled series has a legend");
        let (mid_x, mid_y) = (lay.plot.x + lay.plot.w / 2, lay.plot.y + lay.plot.h / 2);
        assert!(
            (legend.right() < mid_x && legend.bottom() < mid_y)
                || (legend.x > mid_x && legend.y > mid_y),
            "{legend:?} in {:?}",
            lay.plot
        );
        let border = (legend.x, legend.y + legend.h / 2);
        assert_eq!(pixel(&info, &buf, border), LEGEND_BORDER);
    }

    #[test]
    fn plot_legend_gets_room_above_the_data() {
        // Data filling the whole plot leaves no free corner: the automatic
        // y axis grows upwards instead.
        let mut chart = square_chart(Series::new(
            "zigzag",
            (0..=40)
                .map(|i| (f64::from(i) / 4.0, f64::from(i % 2) * 10.0))
                .collect(),
            PALETTE[1],
        ));
        chart.y_range = None;
        let lay = Layout::new(&chart, PANEL);
        assert!(lay.y.hi > 10.0, "{:?}", lay.y);
        let legend = lay.legend.expect("legend");
        let top_of_data = lay.to_px((0.0, 10.0)).1;
        assert!(((legend.bottom() + MARKER_R) as f64) < top_of_data);
    }

    #[test]
    fn plot_nice_ticks() {
        assert_eq!(
            nice_ticks(0.0, 100.0, 5),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(
            nice_ticks(3.0, 95.0, 5),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(nice_ticks(0.1, 0.9, 5), [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(
            nice_ticks(64.0, 138.0, 7),
            [60.0, 80.0, 100.0, 120.0, 140.0]
        );
        assert_eq!(nice_ticks(-0.03, 0.07, 4), [-0.05, 0.0, 0.05, 0.1]);
        assert_eq!(nice_ticks(1.0, 1.0, 2), [0.9, 1.0, 1.1]);
        assert_eq!(nice_ticks(f64::NAN, 1.0, 5), nice_ticks(0.0, 1.0, 5));
        assert_eq!(nice_ticks(2e6, 0.0, 4), [0.0, 5e5, 1e6, 1.5e6, 2e6]);
    }

    #[test]
    fn plot_tick_labels() {
        let axis = Axis::new((0.1, 0.9), false, 5);
        assert_eq!((axis.lo, axis.hi), (0.0, 1.0));
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        let axis = Axis::new((-1.0, 1.0), false, 4);
        assert_eq!(axis.label(-0.0001), "0.0");
        assert_eq!(axis.label(-0.5), "-0.5");
        // A fixed range keeps its bounds; ticks stay inside it.
        let axis = Axis::new((0.05, 0.95), true, 5);
        assert_eq!((axis.lo, axis.hi), (0.05, 0.95));
        assert_eq!(axis.ticks, [0.2, 0.4, 0.6, 0.8]);
    }

    #[test]
    fn plot_nan_points_break_the_line() {
        let red = [200, 10, 20];
        let pts = vec![
            (0.0, 5.0),
            (4.0, 5.0),
            (5.0, f64::NAN),
            (6.0, 5.0),
            (f64::INFINITY, 1.0),
            (10.0, 5.0),
        ];
        let mut chart = square_chart(Series::new("gappy", pts, red).with_marker(Marker::Circle));
        chart.series.push(Series::new(
            "nothing",
            vec![(f64::NAN, f64::NAN)],
            PALETTE[2],
        ));
        let (lay, info, buf) = render_one(&chart);
        assert_eq!(pixel(&info, &buf, at(&lay, (2.0, 5.0))), red);
        assert_ne!(
            pixel(&info, &buf, at(&lay, (5.0, 5.0))),
            red,
            "no line across the NaN"
        );
        assert_ne!(
            pixel(&info, &buf, at(&lay, (8.0, 5.0))),
            red,
            "no line across the inf"
        );
        // All points invalid, no points, or no series at all: still an image.
        chart.x_range = None;
        chart.y_range = None;
        chart.series.clear();
        render_one(&chart);
        chart.series.push(Series::new("", vec![], red));
        render_one(&chart);
        chart
            .series
            .push(Series::new("x", vec![(f64::NAN, 1.0)], red));
        render_one(&chart);
        // Points far outside a fixed range are clipped, not rasterised.
        let far = Series::new("far", vec![(-1e6, -1e6), (1e6, 1e6)], red);
        let (lay, info, buf) = render_one(&square_chart(far));
        assert_eq!(pixel(&info, &buf, at(&lay, (5.0, 5.0))), red);
    }

    #[test]
    fn plot_font_glyphs_are_distinct() {
        for (i, g) in FONT.iter().enumerate().skip(1) {
            let c = char::from(32 + i as u8);
            assert!(g.iter().any(|&row| row != 0), "{c:?} is blank");
            assert!(g.iter().all(|&row| row < 1 << GLYPH_W), "{c:?} too wide");
            let twin = FONT.iter().position(|h| h == g).expect("itself");
            assert_eq!(
                twin,
                i,
                "{c:?} looks like {:?}",
                char::from(32 + twin as u8)
            );
        }
        assert_eq!(glyph('é'), glyph('?'));
        assert_eq!(text_width("abc"), 3 * ADVANCE - SCALE);
    }

    #[test]
    fn plot_text_is_drawn_upright_and_turned() {
        let mut cv = Canvas::new(40, 40);
        cv.text(1, 1, "L", BLACK);
        // L: the left column and the bottom row are set.
        assert_eq!(cv.px[(3 * 40 + 1) * 3..][..3], BLACK);
        assert_eq!(cv.px[((1 + 12) * 40 + 9) * 3..][..3], BLACK);
        assert_eq!(cv.px[(3 * 40 + 9) * 3..][..3], WHITE);
        let mut cv = Canvas::new(40, 40);
        cv.text_up(1, 30, "L", BLACK);
        // Turned left, the left column is along the bottom and the bottom row
        // along the right.
        assert_eq!(cv.px[(29 * 40 + 5) * 3..][..3], BLACK);
        assert_eq!(cv.px[((30 - 9) * 40 + 13) * 3..][..3], BLACK);
        assert_eq!(cv.px[((30 - 9) * 40 + 3) * 3..][..3], WHITE);
    }
}
