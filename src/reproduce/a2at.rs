//! `topocoll reproduce a2at`: the all-to-all paper's results on the simulator,
//! in its normalised units (link bandwidth 1, block 1, latency 0).
//!
//! 1. `bounds.csv`: A2AT's time / lower bound on every mesh (2 engines) and
//!    torus (4 engines) with 2 ≤ Ny ≤ Nx ≤ 12.
//!    `bounds_even_odd_block2.csv`: the even×odd tori again with blocks of
//!    two elements, which lets A2AT send its lone half-ring block half each
//!    way.
//!    `bounds3d.csv`: the same in 3D (the paper's future work), cubes 2..8,
//!    torus and mesh, 3 and 6 engines.
//! 2. `fig7.csv`, `fig7.svg`, `fig7.png`: the paper's Figure 7, all-to-all time
//!    on a 32×32 torus against the number of engines (NCT) 1..8, for A2A
//!    (`linear`), A2AND, A2AT, and `dragon` and `pairwise` for reference.
//! 3. `skew.csv`: how far each algorithm moves when ranks start up to 0.1 and
//!    1 block-time apart (random offsets, seeded): every all-to-all
//!    algorithm on the 16×16 torus, A2AT and `a2at_sync` on the 16×16 mesh
//!    (8×8 for `--quick`).

use super::{alltoall_time, alltoall_time_block, normalised, plot, progress, run_in_order, write};
use crate::error::Result;
use crate::model::alltoall;
use crate::sim::{SimConfig, Skew};
use crate::topology::Topology;
use rayon::prelude::*;
use std::fmt::Write as _;
use std::path::Path;

/// What to run: the full reproduction, or a quick one (16×16 for Figure 7).
pub struct Options {
    pub quick: bool,
}

/// 3D row: family, side, engines, time, lower bound.
type CubeRow<'a> = (&'a str, usize, usize, f64, f64);

/// Figure 7 row: algorithm, engines, time, lower bound, wall seconds.
type Fig7Row<'a> = (&'a str, usize, f64, f64, f64);

/// One simulation of the Figure 7 and skew pool.
struct NetJob<'a> {
    spec: &'a str,
    alg: &'a str,
    engines: usize,
    /// Start skew in block-times (0: none).
    skew: f64,
}

struct ShapeRow {
    family: &'static str,
    nx: usize,
    ny: usize,
    engines: usize,
    time: f64,
    bound: f64,
    /// The bound when 1-element blocks cannot be split
    /// (`alltoall::grid_whole_elements`).
    whole: f64,
}

/// A2AT's normalised time on a grid with `engines` engines.
fn a2at_time(spec: &str, engines: usize) -> Result<f64> {
    a2at_time_block(spec, engines, 1)
}

/// As [`a2at_time`] with blocks of `block` elements, in block-times.
fn a2at_time_block(spec: &str, engines: usize, block: u64) -> Result<f64> {
    let cfg = SimConfig {
        engines,
        ..SimConfig::default()
    };
    let r = alltoall_time_block(&normalised(spec)?, "a2at", &cfg, block)?.0;
    Ok(r.time_s / block as f64)
}

pub fn run(out: &Path, opts: &Options) -> Result<String> {
    let mut summary = String::new();
    let t0 = std::time::Instant::now();
    shapes(out, &mut summary)?;
    even_odd_block2(out, &mut summary)?;
    cubes(out, &mut summary)?;
    figure7_and_skew(out, opts, &mut summary)?;
    let _ = writeln!(summary, "Reproduced in {:.1} s", t0.elapsed().as_secs_f64());
    write(out, "summary.txt", &summary)?;
    Ok(summary)
}

/// Section 1: every 2D shape up to 12×12 against its bound.
fn shapes(out: &Path, summary: &mut String) -> Result<()> {
    let mut shapes = Vec::new();
    for (family, engines) in [("mesh", 2usize), ("torus", 4usize)] {
        for ny in 2..=12 {
            for nx in ny..=12 {
                shapes.push((family, nx, ny, engines));
            }
        }
    }
    let bar = progress(shapes.len(), "a2at shapes");
    let rows: Vec<Result<ShapeRow>> = shapes
        .par_iter()
        .map(|&(family, nx, ny, engines)| {
            let time = a2at_time(&format!("{family}:{nx}x{ny}"), engines)?;
            bar.inc(1);
            Ok(ShapeRow {
                family,
                nx,
                ny,
                engines,
                time,
                bound: alltoall::grid(&[nx, ny], &[family == "torus"; 2], 1.0, 1.0),
                whole: alltoall::grid_whole_elements(
                    &[nx, ny],
                    &[family == "torus"; 2],
                    1,
                    1.0,
                    1.0,
                ),
            })
        })
        .collect();
    bar.finish_and_clear();
    let rows: Vec<ShapeRow> = rows.into_iter().collect::<Result<_>>()?;
    let mut csv =
        String::from("topology,nx,ny,engines,time,lower_bound,ratio,whole_element_bound\n");
    for r in &rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{:.9},{}",
            r.family,
            r.nx,
            r.ny,
            r.engines,
            r.time,
            r.bound,
            r.time / r.bound,
            r.whole
        );
    }
    write(out, "bounds.csv", &csv)?;
    let even = |n: usize| n.is_multiple_of(2);
    let at_bound = |fam: &str, pred: &dyn Fn(&ShapeRow) -> bool| {
        let sel: Vec<&ShapeRow> = rows.iter().filter(|r| r.family == fam && pred(r)).collect();
        let exact = sel
            .iter()
            .filter(|r| (r.time - r.bound).abs() <= 1e-9 * r.bound)
            .count();
        let worst = sel.iter().map(|r| r.time / r.bound).fold(1.0, f64::max);
        // The largest excess in block-times.
        let excess = sel.iter().map(|r| r.time - r.bound).fold(0.0, f64::max);
        let whole = sel
            .iter()
            .filter(|r| (r.time - r.whole).abs() <= 1e-9 * r.whole)
            .count();
        (exact, sel.len(), worst, excess, whole)
    };
    let (e, n, w, ..) = at_bound("mesh", &|_| true);
    let _ = writeln!(
        summary,
        "A2AT mesh, 2 engines: {e}/{n} shapes at T_lb exactly (worst ratio {w:.6})"
    );
    let (e, n, w, ..) = at_bound("torus", &|r| r.nx == r.ny || (!even(r.nx) && !even(r.ny)));
    let _ = writeln!(
        summary,
        "A2AT torus, 4 engines, square and odd x odd: {e}/{n} at T_lb/2 (worst {w:.6})"
    );
    for (label, pred) in [
        (
            "even x odd",
            &(|r: &ShapeRow| r.nx != r.ny && even(r.nx) && !even(r.ny))
                as &dyn Fn(&ShapeRow) -> bool,
        ),
        ("odd x even", &|r: &ShapeRow| {
            r.nx != r.ny && !even(r.nx) && even(r.ny)
        }),
        ("even x even", &|r: &ShapeRow| {
            r.nx != r.ny && even(r.nx) && even(r.ny)
        }),
    ] {
        let (e, n, w, excess, whole) = at_bound("torus", pred);
        let _ = writeln!(summary, "A2AT torus, 4 engines, {label} (left open by the paper): {e}/{n} at T_lb/2 (worst {w:.6}, at most {excess:.3} block-times above); {whole}/{n} at the bound in whole elements");
    }

    Ok(())
}

/// Section 1a: the even×odd tori with two-element blocks, in both
/// orientations (the lone half-ring block goes half each way).
fn even_odd_block2(out: &Path, summary: &mut String) -> Result<()> {
    let even = |n: usize| n.is_multiple_of(2);
    let mut even_odd = Vec::new();
    for ny in (3..=11).step_by(2) {
        for nx in (ny + 1..=12).filter(|&n| even(n)) {
            even_odd.push((nx, ny));
            even_odd.push((ny, nx));
        }
    }
    let rows2: Vec<Result<(usize, usize, f64, f64)>> = even_odd
        .par_iter()
        .map(|&(nx, ny)| {
            let time = a2at_time_block(&format!("torus:{nx}x{ny}"), 4, 2)?;
            Ok((
                nx,
                ny,
                time,
                alltoall::grid(&[nx, ny], &[true; 2], 1.0, 1.0),
            ))
        })
        .collect();
    let rows2: Vec<(usize, usize, f64, f64)> = rows2.into_iter().collect::<Result<_>>()?;
    let mut csv =
        String::from("topology,nx,ny,engines,block_elements,time_block_times,lower_bound,ratio\n");
    for &(nx, ny, time, bound) in &rows2 {
        let _ = writeln!(
            csv,
            "torus,{nx},{ny},4,2,{time},{bound},{:.9}",
            time / bound
        );
    }
    write(out, "bounds_even_odd_block2.csv", &csv)?;
    let exact = rows2
        .iter()
        .filter(|r| (r.2 - r.3).abs() <= 1e-9 * r.3)
        .count();
    let worst = rows2.iter().map(|r| r.2 / r.3).fold(1.0, f64::max);
    let _ = writeln!(
        summary,
        "A2AT torus, 4 engines, even x odd in both orientations with 2-element blocks (lone block half each way): {exact}/{} at T_lb/2 (worst {worst:.6})",
        rows2.len()
    );

    Ok(())
}

/// Section 1b: 3D cubes (the paper's future work), A2AT against the
/// bisection bound, torus and mesh, 3 and 6 engines.
fn cubes(out: &Path, summary: &mut String) -> Result<()> {
    let mut cubes = Vec::new();
    for family in ["torus", "mesh"] {
        for n in 2..=8usize {
            for engines in [3usize, 6] {
                cubes.push((family, n, engines));
            }
        }
    }
    let bar = progress(cubes.len(), "a2at 3D cubes");
    let rows3: Vec<Result<CubeRow>> = cubes
        .par_iter()
        .map(|&(family, n, engines)| {
            let time = a2at_time(&format!("{family}:{n}x{n}x{n}"), engines)?;
            bar.inc(1);
            let bound = alltoall::grid(&[n, n, n], &[family == "torus"; 3], 1.0, 1.0);
            Ok((family, n, engines, time, bound))
        })
        .collect();
    bar.finish_and_clear();
    let rows3: Vec<CubeRow> = rows3.into_iter().collect::<Result<_>>()?;
    let mut csv = String::from("topology,n,engines,time,lower_bound,ratio\n");
    for &(family, n, engines, time, bound) in &rows3 {
        let _ = writeln!(
            csv,
            "{family}:{n}x{n}x{n},{n},{engines},{time},{bound},{:.9}",
            time / bound
        );
    }
    write(out, "bounds3d.csv", &csv)?;
    for (family, engines) in [("torus", 6), ("torus", 3), ("mesh", 3), ("mesh", 6)] {
        let line: Vec<String> = rows3
            .iter()
            .filter(|r| r.0 == family && r.2 == engines)
            .map(|r| format!("{}: {:.4}", r.1, r.3 / r.4))
            .collect();
        let _ = writeln!(
            summary,
            "A2AT 3D {family} cubes, {engines} engines, time / bisection bound: {}",
            line.join(", ")
        );
    }

    Ok(())
}

/// Sections 2 and 3: Figure 7 and the start skew, simulated in one pool.
// Long on purpose: the two experiments are one pool of simulations, the
// slowest first so both cores stay busy to the end.
fn figure7_and_skew(out: &Path, opts: &Options, summary: &mut String) -> Result<()> {
    // 2. Figure 7.
    let spec = if opts.quick {
        "torus:16x16"
    } else {
        "torus:32x32"
    };
    let algorithms = ["linear", "a2and", "a2at", "dragon", "pairwise"];
    let side = if opts.quick { 16 } else { 32 };
    // The collective's bound (bisection of the torus), the same for every algorithm.
    let lb = alltoall::grid(&[side, side], &[true, true], 1.0, 1.0);
    let mut jobs: Vec<NetJob> = Vec::new();
    for alg in algorithms {
        for engines in 1..=8usize {
            jobs.push(NetJob {
                spec,
                alg,
                engines,
                skew: 0.0,
            });
        }
    }
    // 3. (run with Figure 7, in one pool) Start skew: the torus with its 4
    // engines, every all-to-all algorithm of the registry that runs one rank
    // a node (16×16, or 8×8 when quick: a power of two, for Dragon and
    // pairwise); the mesh with its 2, A2AT and its synchronised variant.
    let (skew_torus, skew_mesh) = if opts.quick {
        ("torus:8x8", "mesh:8x8")
    } else {
        ("torus:16x16", "mesh:16x16")
    };
    let every: Vec<&str> = crate::algorithms::of(crate::schedule::CollectiveKind::Alltoall)
        .filter(|a| {
            !matches!(
                a.applies.topology,
                crate::algorithms::TopologyNeed::Nodes(_)
            )
        })
        .map(|a| a.name)
        .collect();
    let fig7_jobs = jobs.len();
    for (skew_spec, engines, algs) in [
        (skew_torus, 4usize, &every[..]),
        (skew_mesh, 2, &["a2at", "a2at_sync"][..]),
    ] {
        for &alg in algs {
            for skew in [0.0, 0.1, 1.0] {
                jobs.push(NetJob {
                    spec: skew_spec,
                    alg,
                    engines,
                    skew,
                });
            }
        }
    }
    // The slowest simulations first, so the two cores stay busy to the end:
    // `linear` for Figure 7 (slower with more engines), then skewed `linear`
    // (a skew breaks its waves), then the other skewed runs, then the rest.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| {
        let j = &jobs[i];
        let class = match (j.alg, i < fig7_jobs, j.skew > 0.0) {
            ("linear", true, _) => 0,
            ("linear", false, true) => 1,
            (_, _, true) => 2,
            _ => 3,
        };
        (class, std::cmp::Reverse(j.engines))
    });
    let topos: Vec<(&str, Topology)> = [spec, skew_torus, skew_mesh]
        .iter()
        .map(|&sp| Ok((sp, normalised(sp)?)))
        .collect::<Result<_>>()?;
    // (time, wall) of each job.
    let outcome = run_in_order(
        &jobs,
        &order,
        &format!("figure 7 on {spec}, and start skew"),
        |j| {
            let topo = &topos.iter().find(|t| t.0 == j.spec).expect("listed").1;
            let cfg = SimConfig {
                engines: j.engines,
                skew: if j.skew > 0.0 {
                    Skew::Random {
                        max_s: j.skew,
                        seed: 1,
                    }
                } else {
                    Skew::None
                },
                ..SimConfig::default()
            };
            let (r, _) = alltoall_time(topo, j.alg, &cfg)?;
            Ok((r.time_s, r.run.wall_s))
        },
    )?;
    let mut results: Vec<Fig7Row> = (0..fig7_jobs)
        .map(|i| (jobs[i].alg, jobs[i].engines, outcome[i].0, lb, outcome[i].1))
        .collect();
    results.sort_by_key(|r| (algorithms.iter().position(|a| *a == r.0), r.1));
    let mut csv = String::from("topology,algorithm,engines,time,lower_bound,ratio,wall_s\n");
    for r in &results {
        let _ = writeln!(
            csv,
            "{spec},{},{},{},{},{:.6},{:.3}",
            r.0,
            r.1,
            r.2,
            r.3,
            r.2 / r.3,
            r.4
        );
    }
    write(out, "fig7.csv", &csv)?;
    let mut series: Vec<plot::Series> = algorithms
        .iter()
        .map(|&alg| plot::Series {
            name: match alg {
                "linear" => "A2A (linear)".to_string(),
                "a2and" => "A2AND".to_string(),
                "a2at" => "A2AT".to_string(),
                "dragon" => "dragon (= pairwise here)".to_string(),
                other => other.to_string(),
            },
            points: results
                .iter()
                .filter(|r| r.0 == alg)
                .map(|r| (r.1 as f64, r.2))
                .collect(),
        })
        .collect();
    series.push(plot::Series {
        name: "lower bound T_lb/2".to_string(),
        points: vec![(1.0, lb), (8.0, lb)],
    });
    plot::line_chart(
        &out.join("fig7"),
        &format!("All-to-all on {spec} (normalised: bandwidth 1, block 1)"),
        ("engines (NCT)", plot::Scale::Linear),
        ("time", plot::Scale::Linear),
        &series,
    )?;
    let _ = writeln!(summary, "Figure 7 on {spec}: lower bound T_lb/2 = {lb}");
    for alg in algorithms {
        let line: Vec<String> = results
            .iter()
            .filter(|r| r.0 == alg)
            .map(|r| format!("{}:{:.1}", r.1, r.2))
            .collect();
        let _ = writeln!(summary, "  {alg:<9} time by engines {}", line.join(" "));
    }

    skew_table(out, &jobs[fig7_jobs..], &outcome[fig7_jobs..], summary)
}

/// Start skew (section 3, simulated with Figure 7): each case with its
/// time and its time without skew; `outcome` holds each job's (time, wall).
fn skew_table(
    out: &Path,
    jobs: &[NetJob],
    outcome: &[(f64, f64)],
    summary: &mut String,
) -> Result<()> {
    let skewed: Vec<(&NetJob, f64)> = jobs.iter().zip(outcome).map(|(j, o)| (j, o.0)).collect();
    let rows: Vec<(&str, usize, &str, f64, f64, f64)> = skewed
        .iter()
        .map(|&(j, time)| {
            let base = skewed
                .iter()
                .find(|(c, _)| c.spec == j.spec && c.alg == j.alg && c.skew == 0.0)
                .map_or(f64::NAN, |&(_, t)| t);
            (j.spec, j.engines, j.alg, j.skew, time, base)
        })
        .collect();
    let mut csv =
        String::from("topology,algorithm,engines,skew_block_times,time,ratio_to_no_skew\n");
    for &(spec, engines, alg, skew, time, base) in &rows {
        let _ = writeln!(
            csv,
            "{spec},{alg},{engines},{skew},{time},{:.6}",
            time / base
        );
    }
    write(out, "skew.csv", &csv)?;
    let mut last = ("", "");
    for &(spec, engines, alg, _, _, _) in &rows {
        if last.0 != spec {
            let _ = writeln!(
                summary,
                "Start skew on {spec}, {engines} engines (time / time without skew):"
            );
        }
        if last != (spec, alg) {
            let line: Vec<String> = rows
                .iter()
                .filter(|c| c.0 == spec && c.2 == alg)
                .map(|c| format!("skew {}: {:.4}", c.3, c.4 / c.5))
                .collect();
            let _ = writeln!(summary, "  {alg:<9} {}", line.join(", "));
        }
        last = (spec, alg);
    }
    Ok(())
}
