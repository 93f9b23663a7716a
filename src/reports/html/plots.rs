//! The plots of `report.html` and `compare.html`, as inline SVG written here: a dot with an
//! interval bar per arm, a scatter of cost (or tokens) against pass rate, stacked bars of edit
//! outcomes, and strip plots with quartile boxes for per-run distributions.
//!
//! Our own SVG rather than a plotting crate: four small chart shapes need a few hundred lines,
//! no fonts or rasterisers, and every label goes through maud's escaping like the rest of the
//! page. Colours come from CSS classes (`report.css`), so the plots follow the page's palette.

use maud::{Markup, html};

/// Plot width in SVG units (the page scales it to its column).
const WIDTH: f64 = 640.0;
/// Room for the labels left of the plotting area.
const LEFT: f64 = 224.0;
const RIGHT: f64 = 24.0;
const ROW: f64 = 26.0;
const TOP: f64 = 12.0;
const AXIS: f64 = 34.0;

fn n(x: f64) -> String {
    format!("{x:.1}")
}

/// A label cut to `max` characters (the full text is the element's tooltip).
fn short(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_owned()
    } else {
        format!("{}…", label.chars().take(max - 1).collect::<String>())
    }
}

/// A horizontal axis from `lo` to `hi` under `rows` rows, with ticks formatted by `tick`.
fn x_axis(rows: usize, lo: f64, hi: f64, ticks: &[f64], tick: &dyn Fn(f64) -> String) -> Markup {
    let y = TOP + rows as f64 * ROW;
    let x = |v: f64| LEFT + (v - lo) / (hi - lo).max(f64::EPSILON) * (WIDTH - LEFT - RIGHT);
    html! {
        line.axis x1=(n(LEFT)) x2=(n(WIDTH - RIGHT)) y1=(n(y)) y2=(n(y)) {}
        @for t in ticks {
            line.grid x1=(n(x(*t))) x2=(n(x(*t))) y1=(n(TOP)) y2=(n(y)) {}
            text.tick x=(n(x(*t))) y=(n(y + 16.0)) text-anchor="middle" { (tick(*t)) }
        }
    }
}

fn frame(rows: usize, label: &str, body: Markup) -> Markup {
    let height = TOP + rows.max(1) as f64 * ROW + AXIS;
    html! {
        svg.plot xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {height:.0}"))
            role="img" aria-label=(label) {
            title { (label) }
            (body)
        }
    }
}

/// One row of [`interval_plot`]: a label, a value and its interval, all in `[lo, hi]`.
pub struct IntervalRow {
    pub label: String,
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The tooltip.
    pub note: String,
}

/// A dot per row at its value with a bar over its interval (pass rate with its Wilson interval,
/// or a difference with its bootstrap interval), on an axis from `lo` to `hi`; a dashed line
/// marks `zero` when given.
pub fn interval_plot(
    title: &str,
    rows: &[IntervalRow],
    lo: f64,
    hi: f64,
    zero: Option<f64>,
    tick: &dyn Fn(f64) -> String,
) -> Markup {
    let x = |v: f64| LEFT + (v.clamp(lo, hi) - lo) / (hi - lo) * (WIDTH - LEFT - RIGHT);
    let ticks: Vec<f64> = (0..=4)
        .map(|i| lo + (hi - lo) * f64::from(i) / 4.0)
        .collect();
    frame(
        rows.len(),
        title,
        html! {
            (x_axis(rows.len(), lo, hi, &ticks, tick))
            @if let Some(z) = zero {
                line.zero x1=(n(x(z))) x2=(n(x(z))) y1=(n(TOP)) y2=(n(TOP + rows.len() as f64 * ROW)) {}
            }
            @for (i, row) in rows.iter().enumerate() {
                @let y = TOP + (i as f64 + 0.5) * ROW;
                g {
                    title { (row.note) }
                    text.label x=(n(LEFT - 8.0)) y=(n(y + 4.0)) text-anchor="end" { (short(&row.label, 29)) }
                    @if let (Some(l), Some(h)) = (row.low, row.high) {
                        line.whisker x1=(n(x(l))) x2=(n(x(h))) y1=(n(y)) y2=(n(y)) {}
                        line.whisker x1=(n(x(l))) x2=(n(x(l))) y1=(n(y - 6.0)) y2=(n(y + 6.0)) {}
                        line.whisker x1=(n(x(h))) x2=(n(x(h))) y1=(n(y - 6.0)) y2=(n(y + 6.0)) {}
                    }
                    @if let Some(v) = row.value {
                        circle.dot cx=(n(x(v))) cy=(n(y)) r="5" {}
                    }
                }
            }
        },
    )
}

/// One point of [`scatter_plot`].
pub struct Point {
    pub label: String,
    pub x: f64,
    pub y: f64,
}

/// Points with `x` against `y` (y a rate in `[0, 1]`), labelled; `x_label` names the x axis.
pub fn scatter_plot(
    title: &str,
    points: &[Point],
    x_label: &str,
    x_tick: &dyn Fn(f64) -> String,
) -> Markup {
    const H: f64 = 260.0;
    const L: f64 = 60.0;
    let max_x = points.iter().map(|p| p.x).fold(0.0_f64, f64::max);
    let min_x = points
        .iter()
        .map(|p| p.x)
        .fold(f64::INFINITY, f64::min)
        .min(max_x);
    // Pad the range of x by a tenth of its span (of half a tenth of its size when the points
    // nearly agree).
    let pad = (max_x - min_x).max(max_x * 0.05).max(f64::EPSILON) * 0.1;
    let (lo, hi) = if max_x > 0.0 {
        ((min_x - pad).max(0.0), max_x + pad)
    } else {
        (0.0, 1.0)
    };
    let px = |v: f64| L + (v - lo) / (hi - lo) * (WIDTH - L - RIGHT - 120.0);
    let py = |v: f64| TOP + (1.0 - v.clamp(0.0, 1.0)) * (H - TOP - AXIS);
    let height = H;
    html! {
        svg.plot xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {height:.0}"))
            role="img" aria-label=(title) {
            title { (title) }
            line.axis x1=(n(L)) x2=(n(WIDTH - RIGHT - 120.0)) y1=(n(py(0.0))) y2=(n(py(0.0))) {}
            line.axis x1=(n(L)) x2=(n(L)) y1=(n(py(0.0))) y2=(n(py(1.0))) {}
            @for i in 0..=4 {
                @let v = f64::from(i) / 4.0;
                line.grid x1=(n(L)) x2=(n(WIDTH - RIGHT - 120.0)) y1=(n(py(v))) y2=(n(py(v))) {}
                text.tick x=(n(L - 6.0)) y=(n(py(v) + 4.0)) text-anchor="end" { (format!("{:.0}%", v * 100.0)) }
                @let t = lo + (hi - lo) * f64::from(i) / 4.0;
                text.tick x=(n(px(t))) y=(n(py(0.0) + 16.0)) text-anchor="middle" { (x_tick(t)) }
            }
            text.axis-label x=(n((L + WIDTH - RIGHT - 120.0) / 2.0)) y=(n(height - 2.0)) text-anchor="middle" { (x_label) }
            @for (i, p) in points.iter().enumerate() {
                g {
                    title { (format!("{}: {} at {:.1}%", p.label, x_tick(p.x), p.y * 100.0)) }
                    circle class=(format!("dot series-{}", i % 8)) cx=(n(px(p.x))) cy=(n(py(p.y))) r="6" {}
                    // Labels of points that coincide are stacked, not drawn over each other.
                    @let above = points[..i].iter().filter(|q| (px(q.x) - px(p.x)).abs() < 40.0 && (py(q.y) - py(p.y)).abs() < 12.0).count();
                    text.point-label x=(n(px(p.x) + 9.0)) y=(n(py(p.y) + 4.0 + above as f64 * 13.0)) { (short(&p.label, 30)) }
                }
            }
        }
    }
}

/// One bar of [`stacked_plot`]: a label and one count per series.
pub struct Stack {
    pub label: String,
    pub counts: Vec<u64>,
}

/// Horizontal bars of counts stacked by series (`series` names each part, in order; the CSS
/// colours them `part-0`, `part-1`, ...), scaled to the largest total.
pub fn stacked_plot(title: &str, series: &[&str], stacks: &[Stack]) -> Markup {
    let max = stacks
        .iter()
        .map(|s| s.counts.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let w = |c: u64| c as f64 / max * (WIDTH - LEFT - RIGHT);
    let ticks: Vec<f64> = (0..=4).map(|i| max * f64::from(i) / 4.0).collect();
    let legend_y = TOP + stacks.len() as f64 * ROW + AXIS - 4.0;
    // (series, x, width, count) of each visible part, per stack.
    let parts: Vec<Vec<(usize, f64, f64, u64)>> = stacks
        .iter()
        .map(|stack| {
            let mut offset = LEFT;
            let mut out = Vec::new();
            for (j, &count) in stack.counts.iter().enumerate() {
                if count > 0 {
                    out.push((j, offset, w(count), count));
                }
                offset += w(count);
            }
            out
        })
        .collect();
    frame(
        stacks.len() + 1,
        title,
        html! {
            (x_axis(stacks.len(), 0.0, max, &ticks, &|t| format!("{t:.0}")))
            @for (i, (stack, parts)) in stacks.iter().zip(&parts).enumerate() {
                @let y = TOP + i as f64 * ROW + 4.0;
                text.label x=(n(LEFT - 8.0)) y=(n(y + 13.0)) text-anchor="end" { (short(&stack.label, 32)) }
                @for (j, x0, width, count) in parts {
                    rect class=(format!("part-{j}")) x=(n(*x0)) y=(n(y)) width=(n(*width)) height=(n(ROW - 8.0)) {
                        title { (format!("{}: {} {}", stack.label, count, series[*j])) }
                    }
                }
            }
            @for (j, name) in series.iter().enumerate() {
                @let x = LEFT + j as f64 * 130.0;
                rect class=(format!("part-{j}")) x=(n(x)) y=(n(legend_y + 12.0)) width="12" height="12" {}
                text.tick x=(n(x + 16.0)) y=(n(legend_y + 22.0)) { (name) }
            }
        },
    )
}

/// One row of [`strip_plot`]: a label and its values.
pub struct Strip {
    pub label: String,
    pub values: Vec<f64>,
}

/// The `q`-quantile of sorted values (linear between order statistics).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let (below, above) = (position.floor() as usize, position.ceil() as usize);
    sorted[below] + (sorted[above] - sorted[below]) * (position - below as f64)
}

/// One row per label: a box from the first to the third quartile with the median marked, and
/// every value as a dot (spread vertically by a fixed pattern so equal values stay visible).
pub fn strip_plot(title: &str, strips: &[Strip], tick: &dyn Fn(f64) -> String) -> Markup {
    let max = strips
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0_f64, f64::max);
    let hi = if max > 0.0 { max * 1.05 } else { 1.0 };
    let x = |v: f64| LEFT + v / hi * (WIDTH - LEFT - RIGHT);
    let ticks: Vec<f64> = (0..=4).map(|i| hi * f64::from(i) / 4.0).collect();
    let sorted: Vec<Vec<f64>> = strips
        .iter()
        .map(|s| {
            let mut v = s.values.clone();
            v.sort_by(f64::total_cmp);
            v
        })
        .collect();
    frame(
        strips.len(),
        title,
        html! {
            (x_axis(strips.len(), 0.0, hi, &ticks, tick))
            @for (i, (strip, sorted)) in strips.iter().zip(&sorted).enumerate() {
                @let y = TOP + (i as f64 + 0.5) * ROW;
                text.label x=(n(LEFT - 8.0)) y=(n(y + 4.0)) text-anchor="end" { (short(&strip.label, 32)) }
                @if !sorted.is_empty() {
                    @let (q1, q2, q3) = (quantile(sorted, 0.25), quantile(sorted, 0.5), quantile(sorted, 0.75));
                    rect.box x=(n(x(q1))) y=(n(y - 8.0)) width=(n((x(q3) - x(q1)).max(1.0))) height="16" {
                        title { (format!("{}: median {}, quartiles {} to {}, {} runs", strip.label, tick(q2), tick(q1), tick(q3), sorted.len())) }
                    }
                    line.median x1=(n(x(q2))) x2=(n(x(q2))) y1=(n(y - 9.0)) y2=(n(y + 9.0)) {}
                    @for (cx, cy) in distinct_points(strip.values.iter().enumerate().map(|(j, v)| (n(x(*v)), n(y + ((j * 7) % 11) as f64 - 5.0)))) {
                        circle.point cx=(cx) cy=(cy) r="2.5" {}
                    }
                }
            }
        },
    )
}

/// The points in order of first appearance, each once: two runs with the same value and the same
/// jitter draw the same circle, so a strip of 10,000 runs of a few distinct turn counts draws a
/// few dozen circles instead of 10,000 (the same picture, a smaller page).
fn distinct_points(points: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut seen = std::collections::HashSet::new();
    points.filter(|p| seen.insert(p.clone())).collect()
}
