//! Figures, drawn with plotters as SVG and PNG side by side. Every figure has a title, labelled
//! axes and a legend; error bars show the spread given with each point (min-max over repeats, or
//! over seeds). PNG text is rendered with the bundled DejaVu Sans (`assets/`) so figures look the
//! same on every machine.

use std::path::Path;

use anyhow::Context;
use plotters::coord::Shift;
use plotters::prelude::*;

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
    // Colour-blind-safe (Okabe-Ito).
    const C: [RGBColor; 8] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
        RGBColor(240, 228, 66),
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
        let root = SVGBackend::new(&tmp_svg, SIZE).into_drawing_area();
        draw_lines(&root, title, x_label, y_label, series)?;
        root.present()
            .map_err(|e| anyhow::anyhow!("{}: {e}", svg.display()))?;
    }
    {
        let root = BitMapBackend::new(&tmp_png, SIZE).into_drawing_area();
        draw_lines(&root, title, x_label, y_label, series)?;
        root.present()
            .map_err(|e| anyhow::anyhow!("{}: {e}", png.display()))?;
    }
    // Complete figures or none: renamed into place only once both are drawn.
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
    let (y0, y1) = range(all().flat_map(|p| {
        let (lo, hi) = p.2.unwrap_or((p.1, p.1));
        [p.1, lo, hi]
    }));
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    chart
        .configure_mesh()
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
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 15))
        .draw()
        .map_err(err)?;
    Ok(())
}
