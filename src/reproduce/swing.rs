//! The Swing paper (De Sensi et al., NSDI 2024): allreduce on 2D and 3D
//! tori, Swing's bandwidth- and latency-optimal torus algorithms against
//! recursive doubling, Rabenseifner, the ring and the bucket algorithm,
//! for buffers from 32 B to 128 MiB.
//!
//! Every node drives all its ports at once (engines = 2 · dimensions), as
//! the paper's NICs do; links and latencies are the torus spec's own. The
//! comparison is Swing's better variant at each size against the best of
//! the others at that size, as the paper plots it.

use super::plot::{self, Scale, Series};
use crate::algorithms::Request;
use crate::error::Result;
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::SimConfig;
use crate::topology::{parse_spec, Topology};
use std::fmt::Write;
use std::path::Path;

pub struct Settings {
    pub quick: bool,
}

/// Swing's two torus algorithms.
pub const SWING: [&str; 2] = ["swing_bw_torus", "swing_lat_torus"];
/// The algorithms the paper compares Swing with.
pub const OTHERS: [&str; 4] = ["recursive_doubling", "rabenseifner", "ring", "bucket"];

/// The tori and buffer sizes of a run.
fn plan(quick: bool) -> (Vec<&'static str>, Vec<u64>) {
    if quick {
        (
            vec!["torus:4x4", "torus:2x2x2"],
            vec![32, 32 << 10, 2 << 20],
        )
    } else {
        // 32 B, 128 B, ... 128 MiB: every power of 4.
        let sizes = (0..12).map(|k| 32u64 << (2 * k)).collect();
        (
            vec!["torus:8x8", "torus:16x16", "torus:4x4x4", "torus:8x8x8"],
            sizes,
        )
    }
}

/// One simulation: an f64 sum allreduce of `bytes` with `alg` on `t`.
fn allreduce_time(t: &Topology, alg: &str, bytes: u64) -> Result<f64> {
    let req = Request::new(
        Collective::Allreduce,
        t.num_ranks(),
        bytes,
        Dtype::F64,
        ReduceOp::Sum,
        Some(t),
    )?;
    let cfg = SimConfig {
        // Every port of a node busy at once: 4 on a 2D torus, 6 on a 3D one.
        engines: 2 * t.grid_shape().map_or(1, |g| g.dims.len()),
        ..SimConfig::default()
    };
    let mut p = crate::price::price(
        &req,
        crate::algorithms::find(req.collective.kind(), alg)?,
        t,
        std::slice::from_ref(&cfg),
        crate::price::Check::Trust,
        crate::price::Build::StreamIfLarge,
    )?;
    Ok(p.runs.remove(0).time_s)
}

/// One point of the comparison.
struct Point {
    topo: usize,
    alg: &'static str,
    size: u64,
}

/// The best time among `algs` at one torus and size, and its algorithm.
fn best<'a>(times: &[(&'a str, f64)], algs: &[&str]) -> (&'a str, f64) {
    times
        .iter()
        .filter(|(a, _)| algs.contains(a))
        .fold(
            ("", f64::INFINITY),
            |b, &(a, t)| if t < b.1 { (a, t) } else { b },
        )
}

pub fn run(dir: &Path, settings: &Settings) -> Result<String> {
    let (specs, sizes) = plan(settings.quick);
    let topos = specs
        .iter()
        .map(|s| parse_spec(s))
        .collect::<Result<Vec<_>, crate::topology::Error>>()?;
    let algs: Vec<&'static str> = SWING.iter().chain(OTHERS.iter()).copied().collect();
    let mut points = Vec::new();
    for topo in 0..topos.len() {
        for &alg in &algs {
            for &size in &sizes {
                points.push(Point { topo, alg, size });
            }
        }
    }
    // The largest tori and buffers take longest: run them first.
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by_key(|&i| {
        std::cmp::Reverse(
            points[i]
                .size
                .saturating_mul(topos[points[i].topo].num_ranks() as u64),
        )
    });
    let times = super::run_in_order(&points, &order, "swing allreduce", |p| {
        allreduce_time(&topos[p.topo], p.alg, p.size)
    })?;
    // (topology, size) -> [(algorithm, time)], and the ratio at each.
    let at = |topo: usize, size: u64| -> Vec<(&'static str, f64)> {
        points
            .iter()
            .zip(&times)
            .filter(|(p, _)| p.topo == topo && p.size == size)
            .map(|(p, &t)| (p.alg, t))
            .collect()
    };
    let mut csv = String::from("topology,algorithm,size_bytes,time_s,best_other_over_best_swing\n");
    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "Swing allreduce on {} tori, {} sizes from {} B to {} B (f64 sum, every port busy)",
        specs.len(),
        sizes.len(),
        sizes[0],
        sizes[sizes.len() - 1]
    );
    let mut ratio_series = Vec::new();
    for (ti, spec) in specs.iter().enumerate() {
        let mut ratios = Vec::new();
        for &size in &sizes {
            let ts = at(ti, size);
            let ratio = best(&ts, &OTHERS).1 / best(&ts, &SWING).1;
            ratios.push((size, ratio));
            for (alg, t) in &ts {
                let _ = writeln!(csv, "{spec},{alg},{size},{t:.9e},{ratio:.4}");
            }
        }
        let series: Vec<Series> = algs
            .iter()
            .map(|&alg| Series {
                name: alg.to_string(),
                points: sizes
                    .iter()
                    .map(|&size| {
                        let t = at(ti, size).iter().find(|(a, _)| *a == alg).expect("ran").1;
                        (size as f64, t)
                    })
                    .collect(),
            })
            .collect();
        let stem = spec.replace(':', "_");
        plot::line_chart(
            &dir.join(format!("allreduce_{stem}")),
            &format!("Allreduce on {spec}"),
            ("buffer (bytes)", Scale::Log),
            ("time (s)", Scale::Log),
            &series,
        )?;
        let (lo, hi) = ratios
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), &(_, r)| {
                (lo.min(r), hi.max(r))
            });
        let at_max = ratios
            .iter()
            .find(|&&(_, r)| r == hi)
            .map_or(0, |&(s, _)| s);
        let _ = writeln!(
            summary,
            "  {spec}: best other / best Swing {lo:.2}x to {hi:.2}x (highest at {at_max} B; paper: up to 3x)"
        );
        ratio_series.push(Series {
            name: spec.to_string(),
            points: ratios.iter().map(|&(s, r)| (s as f64, r)).collect(),
        });
    }
    super::write(dir, "allreduce.csv", &csv)?;
    plot::line_chart(
        &dir.join("speedup"),
        "Best other allreduce / best Swing (above 1: Swing faster)",
        ("buffer (bytes)", Scale::Log),
        ("time ratio", Scale::Linear),
        &ratio_series,
    )?;
    Ok(summary)
}
