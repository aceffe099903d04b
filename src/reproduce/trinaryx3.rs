//! `topocoll reproduce trinaryx3`: the allreduce paper's section 6 on the
//! simulator, with its parameters: 4 engines per node, link bandwidth
//! BWcomm = 11.6/3 GB/s, per-message latency L = 1.27 µs (charged as the
//! sender CPU's per-message overhead, links themselves having no latency),
//! combine at BWcomp = 6.58 GB/s on the one CPU per node.
//!
//! Scale. The paper's machine is the 48×6×32 torus (9,216 nodes). Trinaryx3
//! runs there up to 1 GiB (about 300 M transfers), its schedule generated op
//! by op as the simulator reaches it (`PipelineStream`); recursive doubling
//! is small at any size. The ring needs 2(P−1) steps per rank there (170 M
//! transfers at any size, also generated: `RingStream`), one to two minutes
//! each; it runs at every size there too. A 12×6×8 torus (576 nodes) runs
//! the same size sweep for comparison; everything else (the model check and
//! the segment sweep) runs on 48×6×32. The output says which torus each
//! figure comes from. `--quick` moves each to a smaller torus and size.

use super::{plot, run_in_order, write};
use crate::algorithms::{self, trees, Request};
use crate::error::Result;
use crate::model::trinaryx3 as model;
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::{simulate, simulate_source, SimConfig, SimResult};
use crate::topology::{parse_spec, Topology};
use crate::units::format_bytes;
use std::fmt::Write as _;
use std::path::Path;

pub const BW_COMM: f64 = 11.6e9 / 3.0;
pub const LATENCY_S: f64 = 1.27e-6;
pub const BW_COMP: f64 = 6.58e9;
pub const ENGINES: usize = 4;

/// Allreduce bandwidth as the paper plots it: 2 × bytes / time, in GB/s.
fn gb_s(bytes: u64, time_s: f64) -> f64 {
    2.0 * bytes as f64 / time_s / 1e9
}

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
    // Pipelines and the ring are generated op by op as the simulator needs them (the same
    // result as written out, in memory that follows the ops in flight).
    if let Some(st) = algorithms::generator(alg, &req)? {
        return simulate_source(&st, t, &config());
    }
    let s = algorithms::build(alg, &req)?;
    simulate(&s, t, &config())
}

/// One simulation of the reproduction.
struct Job<'t> {
    spec: &'t str,
    t: &'t Topology,
    collective: Collective,
    alg: &'static str,
    bytes: u64,
    segment: Option<u64>,
}

impl<'t> Job<'t> {
    fn allreduce(spec: &'t str, t: &'t Topology, alg: &'static str, bytes: u64) -> Job<'t> {
        Job {
            spec,
            t,
            collective: Collective::Allreduce,
            alg,
            bytes,
            segment: None,
        }
    }

    /// A rough cost for ordering: transfers scale with ranks × segments
    /// (pipelines) or ranks × steps (the ring: 2(P−1)).
    fn cost(&self) -> f64 {
        let p = self.t.num_ranks() as f64;
        let segment = self.segment.unwrap_or(64 << 10) as f64;
        match self.alg {
            "trinaryx3" => p * (self.bytes as f64 / segment).max(1.0),
            "ring" => p * p,
            _ => p * p.log2(),
        }
    }
}

/// Runs every job on all cores, the most expensive first (each worker takes
/// the next job when it is free), and returns the results in job order.
fn run_jobs(jobs: &[Job], what: &str) -> Result<Vec<SimResult>> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[b].cost().total_cmp(&jobs[a].cost()));
    run_in_order(jobs, &order, what, |j| {
        point(j.t, j.collective, j.alg, j.bytes, j.segment)
    })
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

    // The paper's experiments at its scale: 1 GiB on 48x6x32 (16 MiB on
    // 12x6x8 with --quick), for the top of the size sweep and the model check.
    let paper_n: u64 = if opts.quick { 16 << 20 } else { 1 << 30 };
    let model_cases = [
        (Collective::Bcast { root: 0 }, 64u64 << 10),
        (Collective::Reduce { root: 0 }, 48u64 << 10),
    ];

    // 1. Allreduce bandwidth against size (Figs. 10-12), and 3. the model
    // check, simulated together, heaviest first, so both cores stay busy.
    let sizes: Vec<u64> = (0..7).map(|k| 16u64 << (4 * k)).collect(); // 16 B .. 256 MiB step x16
    let mut jobs: Vec<Job> = Vec::new();
    for &n in &sizes {
        if n <= 64 << 20 {
            for alg in ["trinaryx3", "ring", "recursive_doubling"] {
                jobs.push(Job::allreduce(small, &small_t, alg, n));
            }
        }
        // On the paper's torus. The ring runs 2(P-1) = 18,430 steps per rank
        // there at any size (170 M transfers, generated op by op, one to two
        // minutes each).
        if n <= 16 << 20 {
            for alg in ["trinaryx3", "recursive_doubling", "ring"] {
                jobs.push(Job::allreduce(big, &big_t, alg, n));
            }
        }
    }
    if paper_n > 16 << 20 {
        for alg in ["trinaryx3", "recursive_doubling", "ring"] {
            jobs.push(Job::allreduce(big, &big_t, alg, paper_n));
        }
    }
    let first_model_job = jobs.len();
    for &(c, ss) in &model_cases {
        jobs.push(Job {
            spec: big,
            t: &big_t,
            collective: c,
            alg: "trinaryx3",
            bytes: paper_n,
            segment: Some(ss),
        });
    }
    // 4. (simulated with the rest) Best segment size per message size (Fig. 14),
    // 8 KiB .. 256 KiB, and 4 KiB for messages up to 1 MiB: their best
    // segment on 48x6x32 is 8 KiB, which must not be the end of the sweep.
    let seg_sizes = |m: u64| {
        let smallest = if m <= 1 << 20 { 12 } else { 13 };
        (smallest..=18).map(|k| 1u64 << k).collect::<Vec<u64>>()
    };
    let msg_sizes: Vec<u64> = if opts.quick {
        vec![1 << 20, 4 << 20]
    } else {
        vec![1 << 20, 4 << 20, 16 << 20]
    };
    let first_sweep_job = jobs.len();
    for &m in &msg_sizes {
        for ss in seg_sizes(m) {
            jobs.push(Job {
                spec: big,
                t: &big_t,
                collective: Collective::Allreduce,
                alg: "trinaryx3",
                bytes: m,
                segment: Some(ss),
            });
        }
    }
    let results = run_jobs(&jobs, "allreduce sizes, model and segment sizes")?;
    // The size sweep's rows: each job with its result, by torus, algorithm, size.
    let mut res: Vec<(&Job, &SimResult)> = jobs[..first_model_job].iter().zip(&results).collect();
    res.sort_by_key(|(j, _)| (j.spec, j.alg, j.bytes));
    let mut csv = String::from(
        "topology,algorithm,size_bytes,time_s,bandwidth_gb_s,links_shared_fraction,wall_s\n",
    );
    for (j, r) in &res {
        let _ = writeln!(
            csv,
            "{},{},{},{:.9e},{:.6},{:.6},{:.1}",
            j.spec,
            j.alg,
            j.bytes,
            r.time_s,
            gb_s(j.bytes, r.time_s),
            r.links_shared_fraction,
            r.wall_s
        );
    }
    write(out, "allreduce_bandwidth.csv", &csv)?;
    let mut series = Vec::new();
    for spec in [small, big] {
        for alg in ["trinaryx3", "ring", "recursive_doubling"] {
            let pts: Vec<(f64, f64)> = res
                .iter()
                .filter(|(j, _)| j.spec == spec && j.alg == alg)
                .map(|(j, r)| (j.bytes as f64, gb_s(j.bytes, r.time_s)))
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
    for (j, r) in &res {
        let _ = writeln!(
            summary,
            "  {:<14} {:<19} {:>8}: {:>9.4} GB/s",
            j.spec,
            j.alg,
            format_bytes(j.bytes),
            gb_s(j.bytes, r.time_s)
        );
    }

    // 2. Links that ever carried two flows at once, 1 MiB allreduce.
    let _ = writeln!(summary, "Links ever shared by 2+ flows, 1 MiB allreduce (paper: recursive doubling 36%, Trinaryx3 0.89%):");
    for (j, r) in res.iter().filter(|(j, _)| j.bytes == 1 << 20) {
        let _ = writeln!(
            summary,
            "  {:<14} {:<19} {:.2}%",
            j.spec,
            j.alg,
            100.0 * r.links_shared_fraction
        );
    }

    // 3. Bcast and reduce against eqs (3) and (4), on the big torus.
    let shape = big_t.grid_shape().expect("a torus");
    let h = trees::torus_tree_height(&shape) as f64;
    let n = paper_n;
    let eq: Vec<(Collective, u64, f64, f64, f64)> = model_cases
        .iter()
        .zip(&results[first_model_job..first_sweep_job])
        .map(|(&(c, ss), r)| {
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
            (c, ss, r.time_s, m, r.wall_s)
        })
        .collect();
    let mut csv = String::from(
        "topology,collective,size_bytes,segment_bytes,tree_height,simulated_s,model_s,ratio,wall_s\n",
    );
    let _ = writeln!(
        summary,
        "Trinaryx3 against the model on {big} (H = {h}), {}:",
        format_bytes(n)
    );
    for (c, ss, sim_t, model_t, wall) in eq {
        let _ = writeln!(
            csv,
            "{big},{},{n},{ss},{h},{sim_t:.9e},{model_t:.9e},{:.6},{wall:.1}",
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

    // 4. Best segment size per message size (Fig. 14), on the paper's torus.
    // (message, segment, time, wall) per sweep job.
    let seg: Vec<(u64, u64, f64, f64)> = jobs[first_sweep_job..]
        .iter()
        .zip(&results[first_sweep_job..])
        .map(|(j, r)| {
            let ss = j.segment.expect("a sweep job has a segment");
            (j.bytes, ss, r.time_s, r.wall_s)
        })
        .collect();
    let mut csv = String::from("topology,size_bytes,segment_bytes,time_s,wall_s\n");
    for (m, ss, t, wall) in &seg {
        let _ = writeln!(csv, "{big},{m},{ss},{t:.9e},{wall:.1}");
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
        &format!("Trinaryx3 allreduce on {big}: time against segment size"),
        ("segment bytes", plot::Scale::Log),
        ("time (ms)", plot::Scale::Log),
        &series,
    )?;
    let _ = writeln!(
        summary,
        "Best segment size for the Trinaryx3 allreduce on {big}:"
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
