//! `topocoll reproduce trinaryx3`: the allreduce paper's section 6 on the
//! simulator, with its parameters: 4 engines per node, link bandwidth
//! BWcomm = 11.6/3 GB/s, per-message latency L = 1.27 µs (charged as the
//! sender CPU's per-message overhead, links themselves having no latency),
//! combine at BWcomp = 6.58 GB/s on the one CPU per node.
//!
//! Scale. The paper's machine is the 48×6×32 torus (9,216 nodes). Schedules
//! are materialised operation by operation, so the experiments that would
//! need hundreds of millions of operations there (ring at any size: 2(P−1)
//! steps per rank; anything at 1 GiB) run on a 12×6×8 torus (576 nodes)
//! instead, and say so in their output.

use super::{plot, progress, write};
use crate::algorithms::{self, trees, Request};
use crate::error::Result;
use crate::model::trinaryx3 as model;
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::{simulate, simulate_source, SimConfig, SimResult};
use crate::topology::{parse_spec, Topology};
use crate::units::format_bytes;
use rayon::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

pub const BW_COMM: f64 = 11.6e9 / 3.0;
pub const LATENCY_S: f64 = 1.27e-6;
pub const BW_COMP: f64 = 6.58e9;
pub const ENGINES: usize = 4;

/// A size-sweep row: topology, algorithm, bytes, time, shared-link fraction.
type SizeRow = (String, String, u64, f64, f64);

pub struct Options {
    pub quick: bool,
}

/// The paper's node and link model.
pub fn config() -> SimConfig {
    SimConfig {
        engines: ENGINES,
        overhead_s: LATENCY_S,
        compute_bandwidth: Some(BW_COMP),
        ..SimConfig::default()
    }
}

fn topology(spec: &str) -> Result<Topology> {
    let mut t = parse_spec(spec)?;
    t.set_uniform_links(Some(BW_COMM), Some(0.0))?;
    Ok(t)
}

/// Builds and simulates one point (allreduce, bcast or reduce, f64 sum).
pub fn point(
    t: &Topology,
    collective: Collective,
    alg: &str,
    bytes: u64,
    segment: Option<u64>,
) -> Result<SimResult> {
    let mut req = Request::new(
        collective,
        t.num_ranks(),
        bytes,
        Dtype::F64,
        ReduceOp::Sum,
        Some(t),
    )?;
    req.segment_bytes = segment;
    // Pipelines are generated op by op as the simulator needs them (the same
    // result as written out, in memory proportional to the ranks).
    if algorithms::find(collective.name(), alg)?.stream.is_some() {
        let st = algorithms::build_stream(alg, &req)?;
        return simulate_source(&st, t, &config());
    }
    let s = algorithms::build(alg, &req)?;
    simulate(&s, t, &config())
}

pub fn run(out: &Path, opts: &Options) -> Result<String> {
    let t0 = std::time::Instant::now();
    let mut summary = String::new();
    let _ = writeln!(
        summary,
        "Parameters: {ENGINES} engines per node, link bandwidth BWcomm = 11.6/3 GB/s = {BW_COMM:.6e} B/s, per-message latency L = {LATENCY_S} s (sender CPU overhead; links 0 s), combine BWcomp = {BW_COMP:.3e} B/s on one CPU per node that also serialises the per-message overhead; f64 sum."
    );
    let big = if opts.quick {
        "torus:12x6x8"
    } else {
        "torus:48x6x32"
    };
    let small = if opts.quick {
        "torus:6x6x4"
    } else {
        "torus:12x6x8"
    };
    let big_t = topology(big)?;
    let small_t = topology(small)?;

    // 1. Allreduce bandwidth against size (Figs. 10-12).
    let sizes: Vec<u64> = (0..7).map(|k| 16u64 << (4 * k)).collect(); // 16 B .. 256 MiB step x16
    let mut points: Vec<(&str, &Topology, &str, u64)> = Vec::new();
    for &n in &sizes {
        for alg in ["trinaryx3", "ring", "recursive_doubling"] {
            if n <= 64 << 20 {
                points.push((small, &small_t, alg, n));
            }
        }
        // On the paper's torus: the algorithms whose schedules fit in memory.
        if n <= 1 << 20 {
            for alg in ["trinaryx3", "recursive_doubling"] {
                points.push((big, &big_t, alg, n));
            }
        }
    }
    let bar = progress(points.len(), "allreduce sizes");
    let res: Vec<Result<SizeRow>> = points
        .par_iter()
        .map(|&(spec, t, alg, n)| {
            let r = point(t, Collective::Allreduce, alg, n, None)?;
            bar.inc(1);
            Ok((
                spec.to_string(),
                alg.to_string(),
                n,
                r.time_s,
                r.links_shared_fraction,
            ))
        })
        .collect();
    bar.finish_and_clear();
    let mut res: Vec<SizeRow> = res.into_iter().collect::<Result<_>>()?;
    res.sort_by(|a, b| (&a.0, &a.1, a.2).cmp(&(&b.0, &b.1, b.2)));
    let mut csv =
        String::from("topology,algorithm,size_bytes,time_s,bandwidth_gb_s,links_shared_fraction\n");
    for r in &res {
        let _ = writeln!(
            csv,
            "{},{},{},{:.9e},{:.6},{:.6}",
            r.0,
            r.1,
            r.2,
            r.3,
            2.0 * r.2 as f64 / r.3 / 1e9,
            r.4
        );
    }
    write(out, "allreduce_bandwidth.csv", &csv)?;
    let mut series = Vec::new();
    for spec in [small, big] {
        for alg in ["trinaryx3", "ring", "recursive_doubling"] {
            let pts: Vec<(f64, f64)> = res
                .iter()
                .filter(|r| r.0 == spec && r.1 == alg)
                .map(|r| (r.2 as f64, 2.0 * r.2 as f64 / r.3 / 1e9))
                .collect();
            if !pts.is_empty() {
                series.push(plot::Series {
                    name: format!("{alg} ({spec})"),
                    points: pts,
                });
            }
        }
    }
    plot::line_chart(
        &out.join("allreduce_bandwidth"),
        "Allreduce bandwidth (2 x bytes / time)",
        ("message bytes", plot::Scale::Log),
        ("GB/s", plot::Scale::Log),
        &series,
    )?;
    let _ = writeln!(summary, "Allreduce bandwidth, GB/s = 2 x bytes / time (paper, 48x6x32 at 1 GiB: Trinaryx3 7.1, ring 1.4):");
    for r in &res {
        let _ = writeln!(
            summary,
            "  {:<14} {:<19} {:>8}: {:>9.4} GB/s",
            r.0,
            r.1,
            format_bytes(r.2),
            2.0 * r.2 as f64 / r.3 / 1e9
        );
    }

    // 2. Links that ever carried two flows at once, 1 MiB allreduce.
    let _ = writeln!(summary, "Links ever shared by 2+ flows, 1 MiB allreduce (paper: recursive doubling 36%, Trinaryx3 0.89%):");
    for r in res.iter().filter(|r| r.2 == 1 << 20) {
        let _ = writeln!(summary, "  {:<14} {:<19} {:.2}%", r.0, r.1, 100.0 * r.4);
    }

    // 3. Bcast and reduce against eqs (3) and (4).
    let shape = small_t.grid_shape().expect("a torus");
    let h = trees::torus_tree_height(&shape) as f64;
    let n: u64 = if opts.quick { 16 << 20 } else { 64 << 20 };
    let cases = [
        (Collective::Bcast { root: 0 }, 64u64 << 10),
        (Collective::Reduce { root: 0 }, 48u64 << 10),
    ];
    let eq: Vec<Result<(Collective, u64, f64, f64)>> = cases
        .par_iter()
        .map(|&(c, ss)| {
            let r = point(&small_t, c, "trinaryx3", n, Some(ss))?;
            let p = model::Params {
                h,
                l: LATENCY_S,
                bw_comm: BW_COMM,
                bw_comp: BW_COMP,
                n: n as f64,
                ss: ss as f64,
            };
            let m = if matches!(c, Collective::Bcast { .. }) {
                model::trinaryx3_bcast(&p)
            } else {
                model::trinaryx3_reduce(&p)
            };
            Ok((c, ss, r.time_s, m))
        })
        .collect();
    let mut csv = String::from(
        "topology,collective,size_bytes,segment_bytes,tree_height,simulated_s,model_s,ratio\n",
    );
    let _ = writeln!(
        summary,
        "Trinaryx3 against the model on {small} (H = {h}), {}:",
        format_bytes(n)
    );
    for e in eq {
        let (c, ss, sim_t, model_t) = e?;
        let _ = writeln!(
            csv,
            "{small},{},{n},{ss},{h},{sim_t:.9e},{model_t:.9e},{:.6}",
            c.name(),
            sim_t / model_t
        );
        let _ = writeln!(
            summary,
            "  {:<6} SS {:>7}: simulated {:.3} ms, eq ({}) {:.3} ms, ratio {:.4}",
            c.name(),
            format_bytes(ss),
            sim_t * 1e3,
            if c.name() == "bcast" { 3 } else { 4 },
            model_t * 1e3,
            sim_t / model_t
        );
    }
    let paper_b = model::trinaryx3_bcast(&model::Params::paper(model::PAPER_BCAST_SEGMENT_BYTES));
    let paper_r = model::trinaryx3_reduce(&model::Params::paper(model::PAPER_REDUCE_SEGMENT_BYTES));
    let _ = writeln!(
        summary,
        "  (the model with the paper's H = 84, N = 1 GiB: bcast {:.1} ms, reduce {:.1} ms)",
        paper_b * 1e3,
        paper_r * 1e3
    );
    write(out, "model.csv", &csv)?;

    // 4. Best segment size per message size (Fig. 14).
    let seg_sizes: Vec<u64> = (13..=18).map(|k| 1u64 << k).collect(); // 8 KiB .. 256 KiB
    let msg_sizes: Vec<u64> = if opts.quick {
        vec![1 << 20, 4 << 20]
    } else {
        vec![1 << 20, 4 << 20, 16 << 20]
    };
    let mut grid = Vec::new();
    for &m in &msg_sizes {
        for &ss in &seg_sizes {
            grid.push((m, ss));
        }
    }
    let bar = progress(grid.len(), "segment sizes");
    let seg: Vec<Result<(u64, u64, f64)>> = grid
        .par_iter()
        .map(|&(m, ss)| {
            let r = point(&small_t, Collective::Allreduce, "trinaryx3", m, Some(ss))?;
            bar.inc(1);
            Ok((m, ss, r.time_s))
        })
        .collect();
    bar.finish_and_clear();
    let seg: Vec<(u64, u64, f64)> = seg.into_iter().collect::<Result<_>>()?;
    let mut csv = String::from("topology,size_bytes,segment_bytes,time_s\n");
    for s in &seg {
        let _ = writeln!(csv, "{small},{},{},{:.9e}", s.0, s.1, s.2);
    }
    write(out, "segments.csv", &csv)?;
    let series: Vec<plot::Series> = msg_sizes
        .iter()
        .map(|&m| plot::Series {
            name: format_bytes(m),
            points: seg
                .iter()
                .filter(|s| s.0 == m)
                .map(|s| (s.1 as f64, s.2 * 1e3))
                .collect(),
        })
        .collect();
    plot::line_chart(
        &out.join("segments"),
        &format!("Trinaryx3 allreduce on {small}: time against segment size"),
        ("segment bytes", plot::Scale::Log),
        ("time (ms)", plot::Scale::Log),
        &series,
    )?;
    let _ = writeln!(
        summary,
        "Best segment size for the Trinaryx3 allreduce on {small}:"
    );
    for &m in &msg_sizes {
        if let Some(best) = seg
            .iter()
            .filter(|s| s.0 == m)
            .min_by(|a, b| a.2.total_cmp(&b.2))
        {
            let _ = writeln!(
                summary,
                "  {:>7}: {} ({:.3} ms)",
                format_bytes(m),
                format_bytes(best.1),
                best.2 * 1e3
            );
        }
    }
    let _ = writeln!(summary, "Reproduced in {:.1} s", t0.elapsed().as_secs_f64());
    write(out, "summary.txt", &summary)?;
    Ok(summary)
}
