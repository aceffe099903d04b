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
    Error::io("plot", std::io::Error::other(e.to_string()))
}

/// Draws `series` into `<stem>.svg` and `<stem>.png`.
pub fn line_chart(
    stem: &Path,
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[Series],
) -> Result<()> {
    chart_file(&stem.with_extension("svg"), title, x, y, series)?;
    chart_file(&stem.with_extension("png"), title, x, y, series)
}

/// Draws `series` into one file, SVG or PNG by its extension.
pub fn chart_file(
    path: &Path,
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[Series],
) -> Result<()> {
    chart_file_marked(path, title, x, y, series, None)
}

/// [`chart_file`] with `marks` drawn over the lines as rings, unjoined (a
/// choice made among the lines).
pub fn chart_file_marked(
    path: &Path,
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[Series],
    marks: Option<&Series>,
) -> Result<()> {
    register_font();
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => {
            let root = SVGBackend::new(path, (1100, 600)).into_drawing_area();
            draw(&root, title, x, y, series, marks)?;
            root.present().map_err(err)?;
        }
        Some("png") => {
            let root = BitMapBackend::new(path, (1100, 600)).into_drawing_area();
            draw(&root, title, x, y, series, marks)?;
            root.present().map_err(err)?;
        }
        _ => {
            return Err(crate::invalid!(
                "plot '{}': give a file ending in .svg or .png",
                path.display()
            ))
        }
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

/// A tick label people read: bytes in binary units (1 KiB, 64 MiB), seconds
/// in engineering units (10 ms), other numbers with k, M, G and no trailing
/// ".0" (an axis of engine counts reads 1, 2, 4). The unit is the axis
/// description's: "bytes" or "(s)" in it.
fn tick(v: f64, desc: &str) -> String {
    let trim = |x: f64| {
        let t = format!("{x:.2}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" {
            "0".to_string()
        } else {
            t.to_string()
        }
    };
    if desc.contains("bytes") && v >= 1.0 {
        // Binary units where they are exact (1 KiB, 64 MiB), decimal ones
        // otherwise (a log axis's 1 kB, 10 kB, 100 kB).
        let binary = (v.round() - v).abs() < 1e-9 && (v as u64).is_multiple_of(1024);
        let units: [(&str, f64); 3] = if binary {
            [("GiB", 1073741824.0), ("MiB", 1048576.0), ("KiB", 1024.0)]
        } else {
            [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)]
        };
        for (unit, f) in units {
            if v >= f {
                return format!("{} {unit}", trim(v / f));
            }
        }
        return format!("{} B", trim(v));
    }
    if desc.contains("(s)") && v != 0.0 {
        return crate::units::format_seconds(v)
            .replace(".000", "")
            .replace(".00 ", " ")
            .replace(".0 ", " ");
    }
    let a = v.abs();
    match a {
        a if a >= 1e9 => format!("{}G", trim(v / 1e9)),
        a if a >= 1e6 => format!("{}M", trim(v / 1e6)),
        a if a >= 1e4 => format!("{}k", trim(v / 1e3)),
        a if a == 0.0 || a >= 1e-2 => trim(v),
        _ => format!("{v:.1e}"),
    }
}

macro_rules! chart {
    ($root:expr, $title:expr, $xr:expr, $yr:expr, $x:expr, $y:expr, $series:expr, $marks:expr) => {{
        let xf = |v: &f64| tick(*v, $x.0);
        let yf = |v: &f64| tick(*v, $y.0);
        let mut chart = ChartBuilder::on($root)
            .caption($title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d($xr, $yr)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc($x.0)
            .y_desc($y.0)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
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
                .map_err(err)?;
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(err)?;
        }
        if let Some(m) = $marks {
            chart
                .draw_series(
                    m.points
                        .iter()
                        .map(|&p| Circle::new(p, 8, BLACK.stroke_width(2))),
                )
                .map_err(err)?;
        }
    }};
}

/// The legend, in its own panel beside the chart (never over the data).
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    series: &[Series],
    marks: Option<&Series>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if let Some(m) = marks {
        let y = 60 + 22 * series.len() as i32;
        area.draw(&Circle::new((20, y), 6, BLACK.stroke_width(2)))
            .map_err(err)?;
        area.draw(&Text::new(
            m.name.clone(),
            (38, y - 8),
            ("sans-serif", 14).into_font(),
        ))
        .map_err(err)?;
    }
    for (i, s) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let y = 60 + 22 * i as i32;
        area.draw(&PathElement::new(
            vec![(8, y), (32, y)],
            colour.stroke_width(2),
        ))
        .map_err(err)?;
        area.draw(&Text::new(
            s.name.clone(),
            (38, y - 8),
            ("sans-serif", 14).into_font(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x: (&str, Scale),
    y: (&str, Scale),
    series: &[Series],
    marks: Option<&Series>,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let (w, _) = root.dim_in_pixel();
    let (root, side) = root.split_horizontally((w as f64 * 0.72) as u32);
    legend(&side, series, marks)?;
    let root = &root;
    let (x0, x1) = bounds(series, |p| p.0, x.1);
    let (y0, y1) = bounds(series, |p| p.1, y.1);
    match (x.1, y.1) {
        (Scale::Linear, Scale::Linear) => chart!(root, title, x0..x1, y0..y1, x, y, series, marks),
        (Scale::Log, Scale::Linear) => {
            chart!(
                root,
                title,
                (x0..x1).log_scale(),
                y0..y1,
                x,
                y,
                series,
                marks
            )
        }
        (Scale::Linear, Scale::Log) => {
            chart!(
                root,
                title,
                x0..x1,
                (y0..y1).log_scale(),
                x,
                y,
                series,
                marks
            )
        }
        (Scale::Log, Scale::Log) => chart!(
            root,
            title,
            (x0..x1).log_scale(),
            (y0..y1).log_scale(),
            x,
            y,
            series,
            marks
        ),
    }
    Ok(())
}
