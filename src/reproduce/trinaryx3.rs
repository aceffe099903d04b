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
//! transfers at any size, also generated: `RingStream`), under a minute
//! each; it runs at every size there too. A 12×6×8 torus (576 nodes) runs
//! the same size sweep for comparison; everything else (the model check and
//! the segment sweep, which stops past each message's best segment unless
//! `--full-sweep`) runs on 48×6×32. The output says which torus each
//! figure comes from. `--quick` moves each to a smaller torus and size.

use super::{plot, run_in_order, write};
use crate::algorithms::{trees, Request};
use crate::error::Result;
use crate::model::trinaryx3 as model;
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::{SimConfig, SimResult};
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
    /// Run the whole segment grid instead of stopping each message's sweep
    /// at its first rise (see [`segment_descent`]).
    pub full_sweep: bool,
}

/// The segments a message's sweep may try, largest first: 256 KiB down by
/// halves to `floor`.
fn sweep_segments(floor: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(256u64 << 10), |ss| Some(ss / 2)).take_while(move |&ss| ss >= floor)
}

/// The segment sweep of one message (Fig. 14): segments from 256 KiB down
/// by halves to `floor`, each simulated by `time`, stopping after the first
/// one slower than the best before it, unless `full`. Coming down from the
/// top, each point costs about twice the one before (twice the segments),
/// so the sweep stops before the expensive small segments that are past the
/// best; it finds the best segment when time against segment size falls to
/// one minimum and rises after it, as in every full sweep measured
/// (docs/allreduce.md). Returns (segment, result) for each point run, the
/// largest segment first.
fn segment_descent(
    floor: u64,
    full: bool,
    mut time: impl FnMut(u64) -> Result<SimResult>,
) -> Result<Vec<(u64, SimResult)>> {
    let mut points: Vec<(u64, SimResult)> = Vec::new();
    let mut best = f64::INFINITY;
    for ss in sweep_segments(floor) {
        let r = time(ss)?;
        let t = r.time_s;
        points.push((ss, r));
        if t > best && !full {
            break;
        }
        best = best.min(t);
    }
    Ok(points)
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
    let cfg = [config()];
    let mut p = crate::price::price(
        &req,
        crate::algorithms::find(req.collective.kind(), alg)?,
        t,
        &cfg,
        crate::price::Check::Trust,
        crate::price::Build::PreferStream,
    )?;
    Ok(p.runs.remove(0))
}

/// What a job ran: (segment, result) for each point.
type Points = Vec<(Option<u64>, SimResult)>;

/// One simulation of the reproduction, or one message's segment sweep.
struct Job<'t> {
    spec: &'t str,
    t: &'t Topology,
    collective: Collective,
    alg: &'static str,
    bytes: u64,
    segment: Option<u64>,
    /// A Trinaryx3 allreduce segment sweep down to this segment size
    /// (`segment_descent`), run as one job: each point decides whether
    /// the next is needed.
    sweep_floor: Option<u64>,
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
            sweep_floor: None,
        }
    }

    /// A rough cost for ordering: transfers scale with ranks × segments
    /// (pipelines) or ranks × steps (the ring: 2(P−1)); a sweep's cost is
    /// its whole grid's, an upper bound.
    fn cost(&self) -> f64 {
        let p = self.t.num_ranks() as f64;
        let segments = |segment: u64| (self.bytes as f64 / segment as f64).max(1.0);
        if let Some(floor) = self.sweep_floor {
            return sweep_segments(floor).map(|ss| p * segments(ss)).sum();
        }
        match self.alg {
            "trinaryx3" => p * segments(self.segment.unwrap_or(64 << 10)),
            "ring" => p * p,
            _ => p * p.log2(),
        }
    }

    /// Simulates the job: (segment, result) for each point it ran.
    fn run(&self, full_sweep: bool) -> Result<Points> {
        match self.sweep_floor {
            None => Ok(vec![(
                self.segment,
                point(self.t, self.collective, self.alg, self.bytes, self.segment)?,
            )]),
            Some(floor) => Ok(segment_descent(floor, full_sweep, |ss| {
                point(self.t, self.collective, self.alg, self.bytes, Some(ss))
            })?
            .into_iter()
            .map(|(ss, r)| (Some(ss), r))
            .collect()),
        }
    }
}

/// Runs every job on all cores, the most expensive first (each worker takes
/// the next job when it is free), and returns the results in job order.
fn run_jobs(jobs: &[Job], what: &str, full_sweep: bool) -> Result<Vec<Points>> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| jobs[b].cost().total_cmp(&jobs[a].cost()));
    run_in_order(jobs, &order, what, |j| j.run(full_sweep))
}

// Long on purpose: the four experiments are one pool of simulations
// (heaviest first, so both cores stay busy to the end), and each section
// below reads its figure's results from that pool by job index.
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
        // there at any size (170 M transfers, generated op by op, under a
        // minute each).
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
            sweep_floor: None,
        });
    }
    // 4. (simulated with the rest) Best segment size per message size (Fig. 14):
    // from 256 KiB down to 8 KiB, and 4 KiB for messages up to 1 MiB (their
    // best segment on 48x6x32 is 8 KiB, which must not be the end of the
    // sweep), each message's sweep stopping at its first rise.
    let floor = |m: u64| if m <= 1 << 20 { 4u64 << 10 } else { 8 << 10 };
    let msg_sizes: Vec<u64> = if opts.quick {
        vec![1 << 20, 4 << 20]
    } else {
        vec![1 << 20, 4 << 20, 16 << 20]
    };
    let first_sweep_job = jobs.len();
    for &m in &msg_sizes {
        jobs.push(Job {
            spec: big,
            t: &big_t,
            collective: Collective::Allreduce,
            alg: "trinaryx3",
            bytes: m,
            segment: None,
            sweep_floor: Some(floor(m)),
        });
    }
    let ran = run_jobs(
        &jobs,
        "allreduce sizes, model and segment sizes",
        opts.full_sweep,
    )?;
    // Every job but a sweep ran one point.
    let results: Vec<&SimResult> = ran[..first_sweep_job].iter().map(|p| &p[0].1).collect();
    // The size sweep's rows: each job with its result, by torus, algorithm, size.
    let mut res: Vec<(&Job, &SimResult)> = jobs[..first_model_job]
        .iter()
        .zip(results.iter().copied())
        .collect();
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
            r.run.wall_s
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
            (c, ss, r.time_s, m, r.run.wall_s)
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
    // (message, segment, time, wall) per point run, smallest segment first.
    let mut seg: Vec<(u64, u64, f64, f64)> = jobs[first_sweep_job..]
        .iter()
        .zip(&ran[first_sweep_job..])
        .flat_map(|(j, points)| {
            points.iter().map(|(ss, r)| {
                let ss = ss.expect("a sweep point has a segment");
                (j.bytes, ss, r.time_s, r.run.wall_s)
            })
        })
        .collect();
    seg.sort_by_key(|s| (s.0, s.1));
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
        "Best segment size for the Trinaryx3 allreduce on {big} ({}):",
        if opts.full_sweep {
            "every segment from 256 KiB down"
        } else {
            "segments from 256 KiB down by halves, each message's sweep stopping at its first rise"
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The descent runs a prefix of the full grid, stops at the first point
    /// slower than the best before it, and so finds the same best segment
    /// as the full sweep where the curve has one minimum.
    #[test]
    fn the_segment_descent_stops_at_the_first_rise_and_finds_the_best() {
        let t = topology("torus:6x6x4").unwrap();
        for (m, floor) in [(1u64 << 20, 4u64 << 10), (4 << 20, 4 << 10)] {
            let run = |ss| point(&t, Collective::Allreduce, "trinaryx3", m, Some(ss));
            let full = segment_descent(floor, true, run).unwrap();
            let descent = segment_descent(floor, false, run).unwrap();
            let segs = |p: &[(u64, SimResult)]| p.iter().map(|x| x.0).collect::<Vec<_>>();
            let expected: Vec<u64> = (12..=18).rev().map(|k| 1u64 << k).collect();
            assert_eq!(segs(&full), expected, "{m}");
            // Each point of the descent is the full sweep's, and the descent
            // stops exactly after the first rise.
            let times: Vec<f64> = full.iter().map(|x| x.1.time_s).collect();
            let stop = (1..times.len())
                .find(|&k| times[k] > times[..k].iter().copied().fold(f64::INFINITY, f64::min))
                .map_or(times.len(), |k| k + 1);
            assert!(
                stop < times.len(),
                "{m}: this torus's curve rises before 4 KiB"
            );
            assert_eq!(segs(&descent), expected[..stop], "{m}");
            for (d, f) in descent.iter().zip(&full) {
                assert_eq!(d.1.time_s, f.1.time_s);
            }
            let best = |p: &[(u64, SimResult)]| {
                p.iter()
                    .min_by(|a, b| a.1.time_s.total_cmp(&b.1.time_s))
                    .map(|x| x.0)
            };
            assert_eq!(best(&descent), best(&full), "{m}");
        }
    }
}
