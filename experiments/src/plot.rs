//! Figures, drawn with plotters as SVG and PNG side by side. Every figure has a title, labelled
//! axes and a legend; error bars show the spread given with each point (min-max over repeats, or
//! over seeds). PNG text is rendered with the bundled DejaVu Sans (`assets/`) so figures look the
//! same on every machine.

use std::path::Path;

use anyhow::Context;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One line: points `(x, y, optional (low, high) spread)`.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64, Option<(f64, f64)>)>,
}

const SIZE: (u32, u32) = (900, 560);
const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        for style in [FontStyle::Normal, FontStyle::Bold] {
            // Only fails on a malformed font, which the bundled one is not.
            let _ = plotters::style::register_font(FONT, style, bytes);
        }
    });
}

fn colour(i: usize) -> RGBColor {
    // Colour-blind-safe (Okabe-Ito) first; then darker tones, so up to 12 series stay distinct.
    const C: [RGBColor; 12] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
        RGBColor(240, 228, 66),
        RGBColor(120, 120, 120),
        RGBColor(136, 34, 85),
        RGBColor(51, 34, 136),
        RGBColor(153, 153, 51),
    ];
    C[i % C.len()]
}

/// Writes `<stem>.svg` and `<stem>.png`: a line per series, with error bars where given.
pub fn lines(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> anyhow::Result<()> {
    figure(
        stem,
        SIZE,
        &Figure::Lines {
            title,
            x_label,
            y_label,
            series,
        },
    )
}

/// Grouped bars: one group per `groups` entry, one bar per series in each; a series' points are
/// `(group index, value, spread)`. Group labels are drawn under the axis, one per group.
pub fn bars(
    stem: &Path,
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[Series],
) -> anyhow::Result<()> {
    bars_with(stem, title, y_label, groups, series, &Extras::default())
}

/// What [`bars_with`] adds to plain bars.
#[derive(Default)]
pub struct Extras {
    /// Per group, a shaded band (e.g. the 95% chance band of the statistic for that group's
    /// items), drawn behind the bars and named in the legend as `band_label`.
    pub bands: Vec<Option<(f64, f64)>>,
    pub band_label: String,
    /// Each bar's value written above it (so that a bar of 0.001 is not mistaken for none).
    pub values: bool,
}

/// [`bars`] with chance bands and value labels.
pub fn bars_with(
    stem: &Path,
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[Series],
    extras: &Extras,
) -> anyhow::Result<()> {
    let width = (300 + 34 * (groups.len() * series.len().max(1)) as u32).clamp(800, 1500);
    figure(
        stem,
        (width, 600),
        &Figure::Bars {
            title,
            y_label,
            groups,
            series,
            extras,
        },
    )
}

/// One heatmap panel: `values[row][col]`, labelled cells.
pub struct Panel {
    pub title: String,
    pub values: Vec<Vec<f64>>,
}

/// Panels on a `grid` of (rows, columns), filled row by row, each a grid of cells coloured by
/// value (blue negative, red positive, white 0, full colour at |value| >= `scale`) with the
/// value written in each cell.
pub fn heatmap(
    stem: &Path,
    title: &str,
    row_label: &str,
    col_label: &str,
    scale: f64,
    grid: (usize, usize),
    panels: &[Panel],
) -> anyhow::Result<()> {
    figure(
        stem,
        (
            380 * grid.1 as u32 + 40 + COLOUR_BAR,
            330 * grid.0 as u32 + 60,
        ),
        &Figure::Heatmap {
            title,
            row_label,
            col_label,
            scale,
            grid,
            panels,
        },
    )
}

enum Figure<'a> {
    Lines {
        title: &'a str,
        x_label: &'a str,
        y_label: &'a str,
        series: &'a [Series],
    },
    Bars {
        title: &'a str,
        y_label: &'a str,
        groups: &'a [String],
        series: &'a [Series],
        extras: &'a Extras,
    },
    Heatmap {
        title: &'a str,
        row_label: &'a str,
        col_label: &'a str,
        scale: f64,
        grid: (usize, usize),
        panels: &'a [Panel],
    },
}

impl Figure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        match *self {
            Figure::Lines {
                title,
                x_label,
                y_label,
                series,
            } => draw_lines(root, title, x_label, y_label, series),
            Figure::Bars {
                title,
                y_label,
                groups,
                series,
                extras,
            } => draw_bars(root, title, y_label, groups, series, extras),
            Figure::Heatmap {
                title,
                row_label,
                col_label,
                scale,
                grid,
                panels,
            } => draw_heatmap(root, title, row_label, col_label, scale, grid, panels),
        }
    }
}

/// Draws one figure as SVG and PNG, each written to a temporary name and renamed into place
/// only once both are drawn: complete figures or none.
fn figure(stem: &Path, size: (u32, u32), fig: &Figure) -> anyhow::Result<()> {
    // A figure without a single point is a wrong benchmark or model name, not a result.
    let empty = match fig {
        Figure::Lines { series, .. } | Figure::Bars { series, .. } => {
            series.iter().all(|s| s.points.is_empty())
        }
        Figure::Heatmap { panels, .. } => panels.iter().all(|p| p.values.is_empty()),
    };
    if empty {
        anyhow::bail!("{}: no data to plot", stem.display());
    }
    register_font();
    if let Some(dir) = stem.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create", dir.display()))?;
    }
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    let tmp_svg = svg.with_extension("svg.tmp");
    let tmp_png = png.with_extension("tmp.png");
    {
        let root = SVGBackend::new(&tmp_svg, size).into_drawing_area();
        fig.draw(&root)?;
        root.present()
            .map_err(|e| anyhow::anyhow!("{}: {e}", svg.display()))?;
    }
    {
        let root = BitMapBackend::new(&tmp_png, size).into_drawing_area();
        fig.draw(&root)?;
        root.present()
            .map_err(|e| anyhow::anyhow!("{}: {e}", png.display()))?;
    }
    std::fs::rename(&tmp_svg, &svg).with_context(|| format!("{}: cannot write", svg.display()))?;
    std::fs::rename(&tmp_png, &png).with_context(|| format!("{}: cannot write", png.display()))?;
    Ok(())
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.06).max(hi.abs().max(1e-9) * 1e-3);
    (lo - pad, hi + pad)
}

/// The title's font size: 22 px, smaller for a long title so that it fits the figure's width
/// (DejaVu Sans averages about 0.56 em per character).
fn title_size<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> f64 {
    let width = root.dim_in_pixel().0 as f64 - 32.0;
    (width / (0.56 * title.chars().count().max(1) as f64)).clamp(11.0, 22.0)
}

/// The y extent of every point and error bar, padded.
fn y_range(series: &[Series]) -> (f64, f64) {
    range(series.iter().flat_map(|s| s.points.iter()).flat_map(|p| {
        let (lo, hi) = p.2.unwrap_or((p.1, p.1));
        [p.1, lo, hi]
    }))
}

/// Where a line figure's legend goes and how far the y axis must reach so that it hides no
/// point or error bar: the upper corner (left or right) that needs the less headroom.
///
/// The legend box is estimated in axis fractions from the plot area in pixels (`plot_px`):
/// `h = (19 n + 12) / height` for `n` entries of 14 px text, `w = (7 c + 44) / width` for a
/// longest label of `c` characters. With the top of the axis at `t`, the box covers
/// `[t - h (t - y0), t]`; every point under it (by x) must lie below its bottom edge, so
/// `t >= (ymax - h y0) / (1 - h)` where `ymax` is the highest point or bar end within the box's
/// x extent. Returns the corner and the new top, never below `y1`.
fn legend_corner(
    series: &[Series],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    plot_px: (f64, f64),
) -> (SeriesLabelPosition, f64) {
    let n = series.len() as f64;
    let chars = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let h = ((19.0 * n + 12.0) / plot_px.1).min(0.9);
    let w = ((7.0 * chars + 44.0) / plot_px.0).min(1.0);
    let top_under = |from: f64, to: f64| {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| p.0 >= from && p.0 <= to)
            .map(|p| p.2.map_or(p.1, |(_, hi)| hi.max(p.1)))
            .filter(|v| v.is_finite())
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let span = x1 - x0;
    let need = |ymax: f64| {
        if ymax.is_finite() {
            ((ymax - h * y0) / (1.0 - h)).max(y1)
        } else {
            y1
        }
    };
    let right = need(top_under(x1 - w * span, x1));
    let left = need(top_under(x0, x0 + w * span));
    if left < right {
        (SeriesLabelPosition::UpperLeft, left)
    } else {
        (SeriesLabelPosition::UpperRight, right)
    }
}

/// The legend, in the given corner, over a translucent white box.
fn draw_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    corner: SeriesLabelPosition,
) -> anyhow::Result<()>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()
        .map_err(|e| anyhow::anyhow!("drawing failed: {e:?}"))
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing failed: {e:?}");
    root.fill(&WHITE).map_err(err)?;
    let all = || series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = range(all().map(|p| p.0));
    let (y0, y1) = y_range(series);
    // Headroom for the legend, in whichever upper corner hides nothing with less of it. The
    // plot area is the figure less the margins, caption and label areas set below.
    let (w, h) = root.dim_in_pixel();
    let plot_px = (w as f64 - 80.0 - 32.0, h as f64 - 48.0 - 32.0 - 40.0);
    let (corner, y1) = legend_corner(series, (x0, x1), (y0, y1), plot_px);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, title_size(root, title)))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    // Small integer x (layers): one tick per integer, no fractional layers on the axis.
    let integer_x = all().all(|p| p.0.fract() == 0.0) && x1 - x0 <= 16.0;
    let x_format = |x: &f64| {
        if integer_x {
            format!("{x:.0}")
        } else {
            // Three decimals at most: tick positions are sums of floats (2.4000000000000004).
            let t = format!("{x:.3}");
            t.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    chart
        .configure_mesh()
        .x_labels(if integer_x {
            (x1.floor() - x0.ceil()) as usize + 1
        } else {
            10
        })
        .x_label_formatter(&x_format)
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let c = colour(i);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().map(|p| (p.0, p.1)),
                c.stroke_width(2),
            ))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3)));
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new((p.0, p.1), 3, c.filled())),
            )
            .map_err(err)?;
        chart
            .draw_series(s.points.iter().filter_map(|p| {
                p.2.map(|(lo, hi)| ErrorBar::new_vertical(p.0, lo, p.1, hi, c.stroke_width(1), 8))
            }))
            .map_err(err)?;
    }
    draw_legend(&mut chart, corner)
}

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    y_label: &str,
    groups: &[String],
    series: &[Series],
    extras: &Extras,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing failed: {e:?}");
    root.fill(&WHITE).map_err(err)?;
    let (mut y0, mut y1) = y_range(series);
    for (lo, hi) in extras.bands.iter().flatten() {
        y0 = y0.min(*lo);
        y1 = y1.max(*hi);
    }
    // Bars start at 0, and the legend gets the top fifth of the plot to itself.
    y0 = y0.min(0.0);
    y1 = y1.max(0.0);
    y1 += (y1 - y0) * 0.25;
    let n = groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, title_size(root, title)))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.5..n - 0.5, y0..y1)
        .map_err(err)?;
    let label = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < groups.len() {
            groups[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_desc(y_label)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    let band_colour = RGBColor(120, 120, 120).mix(0.25);
    let bands: Vec<(usize, f64, f64)> = extras
        .bands
        .iter()
        .enumerate()
        .filter_map(|(g, b)| b.map(|(lo, hi)| (g, lo, hi)))
        .collect();
    if !bands.is_empty() {
        chart
            .draw_series(bands.iter().map(|&(g, lo, hi)| {
                Rectangle::new(
                    [(g as f64 - 0.47, lo), (g as f64 + 0.47, hi)],
                    band_colour.filled(),
                )
            }))
            .map_err(err)?
            .label(extras.band_label.clone())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 6), (x + 16, y + 6)], band_colour.filled())
            });
    }
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    let lift = (y1 - y0) * 0.01;
    for (i, s) in series.iter().enumerate() {
        let c = colour(i);
        let offset = -0.4 + width * (i as f64 + 0.5);
        chart
            .draw_series(s.points.iter().filter(|p| p.1.is_finite()).map(|p| {
                let x = p.0 + offset;
                Rectangle::new(
                    [(x - width * 0.45, 0.0), (x + width * 0.45, p.1)],
                    c.filled(),
                )
            }))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        chart
            .draw_series(s.points.iter().filter_map(|p| {
                p.2.map(|(lo, hi)| {
                    ErrorBar::new_vertical(p.0 + offset, lo, p.1, hi, BLACK.stroke_width(1), 6)
                })
            }))
            .map_err(err)?;
        if extras.values {
            let style = TextStyle::from((FONT, 11).into_font())
                .transform(FontTransform::Rotate270)
                .color(&BLACK);
            chart
                .draw_series(s.points.iter().filter(|p| p.1.is_finite()).map(|p| {
                    let top = p.2.map_or(p.1, |(_, hi)| hi).max(p.1).max(0.0);
                    Text::new(
                        format!("{:.3}", p.1),
                        (p.0 + offset - width * 0.2, top + lift),
                        style.clone(),
                    )
                }))
                .map_err(err)?;
        }
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)
}

fn heat_colour(v: f64, scale: f64) -> RGBColor {
    if !v.is_finite() {
        return RGBColor(200, 200, 200);
    }
    let t = (v / scale).clamp(-1.0, 1.0);
    let fade = |full: u8| (255.0 - (255.0 - full as f64) * t.abs()) as u8;
    if t >= 0.0 {
        RGBColor(fade(202), fade(0), fade(32))
    } else {
        RGBColor(fade(5), fade(113), fade(176))
    }
}

/// Width in pixels of a heatmap's colour bar.
const COLOUR_BAR: u32 = 110;

/// The colour scale of a heatmap: -scale (blue) to +scale (red), values beyond it saturate.
fn draw_colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    scale: f64,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing failed: {e:?}");
    let mut chart = ChartBuilder::on(area)
        .margin_top(60)
        .margin_bottom(60)
        .margin_right(12)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..1.0, -scale..scale)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(5)
        .y_label_formatter(&|v| format!("{v:.2}"))
        .label_style((FONT, 13))
        .draw()
        .map_err(err)?;
    let steps = 100;
    chart
        .draw_series((0..steps).map(|i| {
            let lo = -scale + 2.0 * scale * i as f64 / steps as f64;
            let hi = lo + 2.0 * scale / steps as f64;
            Rectangle::new(
                [(0.0, lo), (1.0, hi)],
                heat_colour((lo + hi) / 2.0, scale).filled(),
            )
        }))
        .map_err(err)?;
    Ok(())
}

fn draw_heatmap<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    row_label: &str,
    col_label: &str,
    scale: f64,
    grid: (usize, usize),
    panels: &[Panel],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("drawing failed: {e:?}");
    root.fill(&WHITE).map_err(err)?;
    let root = root
        .titled(title, (FONT, title_size(root, title)))
        .map_err(err)?;
    let (panels_area, bar_area) = root.split_horizontally(root.dim_in_pixel().0 - COLOUR_BAR);
    draw_colour_bar(&bar_area, scale)?;
    let areas = panels_area.split_evenly((grid.0, grid.1));
    for (panel, area) in panels.iter().zip(areas.iter()) {
        let rows = panel.values.len().max(1);
        let cols = panel.values.first().map_or(1, |r| r.len().max(1));
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, (FONT, 17))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(56)
            // A discrete range includes its end: 0..cols-1 holds `cols` segments.
            .build_cartesian_2d(
                (0..cols - 1).into_segmented(),
                (0..rows - 1).into_segmented(),
            )
            .map_err(err)?;
        let centre_label = |v: &SegmentValue<usize>, base: usize| match v {
            SegmentValue::CenterOf(i) => (i + base).to_string(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(cols)
            .y_labels(rows)
            .x_label_formatter(&|c| centre_label(c, 0))
            .y_label_formatter(&|r| centre_label(r, 1))
            .x_desc(col_label)
            .y_desc(row_label)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(err)?;
        for (r, row) in panel.values.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [
                            (SegmentValue::Exact(c), SegmentValue::Exact(r)),
                            (SegmentValue::Exact(c + 1), SegmentValue::Exact(r + 1)),
                        ],
                        heat_colour(v, scale).filled(),
                    )))
                    .map_err(err)?;
                let style = (FONT, 14)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{v:.2}"),
                        (SegmentValue::CenterOf(c), SegmentValue::CenterOf(r)),
                        style,
                    )))
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_without_points_is_an_error_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("empty");
        let series = [Series {
            name: "none".into(),
            points: vec![],
        }];
        let e = lines(&stem, "t", "x", "y", &series)
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty: no data to plot"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    fn rising(name: &str) -> Series {
        Series {
            name: name.into(),
            points: vec![(0.0, 0.0, None), (1.0, 1.0, Some((0.9, 1.1)))],
        }
    }

    #[test]
    fn the_legend_goes_where_it_hides_no_point() {
        // Rising curves: the upper left is empty, so the legend goes there and the axis keeps
        // its extent. Eleven entries on a 440 px plot take h = (19 * 11 + 12) / 440 = 0.502.
        let series: Vec<Series> = (0..11).map(|i| rising(&format!("s{i}"))).collect();
        let (corner, top) = legend_corner(&series, (0.0, 1.0), (0.0, 1.2), (788.0, 440.0));
        assert!(matches!(corner, SeriesLabelPosition::UpperLeft));
        assert_eq!(top, 1.2);
        // Falling curves: the upper right is empty.
        let falling: Vec<Series> = series
            .iter()
            .map(|s| Series {
                name: s.name.clone(),
                points: s.points.iter().map(|p| (1.0 - p.0, p.1, p.2)).collect(),
            })
            .collect();
        let (corner, top) = legend_corner(&falling, (0.0, 1.0), (0.0, 1.2), (788.0, 440.0));
        assert!(matches!(corner, SeriesLabelPosition::UpperRight));
        assert_eq!(top, 1.2);
        // High at both ends, higher on the left (a bar end at 1.1): the legend takes the
        // right, and the axis grows until the box clears the right's highest point, 1.0:
        // top = (1.0 - h * 0) / (1 - h) = 2.009 with h = 0.502, where the left needs 2.210.
        let both: Vec<Series> = (0..11)
            .map(|i| Series {
                name: format!("s{i}"),
                points: vec![
                    (0.0, 1.0, Some((0.9, 1.1))),
                    (0.5, 0.0, None),
                    (1.0, 1.0, None),
                ],
            })
            .collect();
        let (corner, top) = legend_corner(&both, (0.0, 1.0), (0.0, 1.2), (788.0, 440.0));
        let h: f64 = (19.0 * 11.0 + 12.0) / 440.0;
        assert!(matches!(corner, SeriesLabelPosition::UpperRight));
        assert!((top - 1.0 / (1.0 - h)).abs() < 1e-12, "{top}");
        // A point under the box's x extent only: the box is w = (7 * 3 + 44) / 788 of the
        // width, so a peak at x = 0.5 is under neither corner and needs no headroom.
        let mid = [Series {
            name: "mid".into(),
            points: vec![(0.0, 0.0, None), (0.5, 5.0, None), (1.0, 0.0, None)],
        }];
        let (_, top) = legend_corner(&mid, (0.0, 1.0), (0.0, 5.3), (788.0, 440.0));
        assert_eq!(top, 5.3);
    }

    #[test]
    fn bars_and_heatmaps_write_svg_and_png() {
        let dir = tempfile::tempdir().unwrap();
        let series = [Series {
            name: "a".into(),
            points: vec![(0.0, 0.5, Some((0.4, 0.6))), (1.0, -0.2, None)],
        }];
        bars(
            &dir.path().join("b"),
            "t",
            "y",
            &["g0".into(), "g1".into()],
            &series,
        )
        .unwrap();
        let panels = [Panel {
            title: "p".into(),
            values: vec![vec![0.1, -0.3], vec![0.0, f64::NAN]],
        }];
        heatmap(
            &dir.path().join("h"),
            "t",
            "layer",
            "head",
            0.3,
            (1, 1),
            &panels,
        )
        .unwrap();
        for f in ["b.svg", "b.png", "h.svg", "h.png"] {
            assert!(
                std::fs::metadata(dir.path().join(f)).unwrap().len() > 500,
                "{f}"
            );
        }
        let svg = std::fs::read_to_string(dir.path().join("h.svg")).unwrap();
        assert!(
            svg.contains("-0.30") && svg.contains("0.10"),
            "cell values are written"
        );
    }
}
