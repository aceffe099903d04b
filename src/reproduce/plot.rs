//! Line charts as SVG and PNG, with an embedded font (DejaVu Sans) so that
//! PNGs render the same on any machine.

use crate::error::{Error, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// One line of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Axis scales.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
        // A failure only loses labels; the chart itself is still drawn.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

fn err(e: impl std::fmt::Display) -> Error {
    Error::Io(format!("plot: {e}"))
}

/// Draws `series` into `<stem>.svg` and `<stem>.png`.
pub fn line_chart(
    stem: &Path,
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[Series],
) -> Result<()> {
    register_font();
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    {
        let root = SVGBackend::new(&svg, (900, 600)).into_drawing_area();
        draw(&root, title, x, y, series)?;
        root.present().map_err(err)?;
    }
    {
        let root = BitMapBackend::new(&png, (900, 600)).into_drawing_area();
        draw(&root, title, x, y, series)?;
        root.present().map_err(err)?;
    }
    Ok(())
}

fn bounds(series: &[Series], pick: impl Fn(&(f64, f64)) -> f64, scale: Scale) -> (f64, f64) {
    let vals = series
        .iter()
        .flat_map(|s| s.points.iter().map(&pick))
        .filter(|v| v.is_finite());
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (1.0, 10.0);
    }
    match scale {
        Scale::Log => (lo.max(1e-300) / 1.5, hi * 1.5),
        Scale::Linear => {
            let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.01).max(1e-12);
            ((lo - pad).min(0.0_f64.max(lo - pad)), hi + pad)
        }
    }
}

macro_rules! chart {
    ($root:expr, $title:expr, $xr:expr, $yr:expr, $x:expr, $y:expr, $series:expr) => {{
        let mut chart = ChartBuilder::on($root)
            .caption($title, ("sans-serif", 24))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d($xr, $yr)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc($x.0)
            .y_desc($y.0)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        for (i, s) in $series.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    colour.stroke_width(2),
                ))
                .map_err(err)?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(err)?;
    }};
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[Series],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let (x0, x1) = bounds(series, |p| p.0, x.1);
    let (y0, y1) = bounds(series, |p| p.1, y.1);
    match (x.1, y.1) {
        (Scale::Linear, Scale::Linear) => chart!(root, title, x0..x1, y0..y1, x, y, series),
        (Scale::Log, Scale::Linear) => {
            chart!(root, title, (x0..x1).log_scale(), y0..y1, x, y, series)
        }
        (Scale::Linear, Scale::Log) => {
            chart!(root, title, x0..x1, (y0..y1).log_scale(), x, y, series)
        }
        (Scale::Log, Scale::Log) => chart!(
            root,
            title,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
            x,
            y,
            series
        ),
    }
    Ok(())
}
