//! Issue 4's timing properties, on the simulator in normalised units
//! (bandwidth 1, block 1, latency 0).

use topocoll::algorithms::Request;
use topocoll::model::alltoall;
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig, Skew};
use topocoll::topology::parse_spec;

fn time(spec: &str, alg: &str, engines: usize) -> f64 {
    time_with_block(spec, alg, engines, 1)
}

/// As [`time`] with a block of `block` elements (one byte each).
fn time_with_block(spec: &str, alg: &str, engines: usize, block: u64) -> f64 {
    time_skewed(spec, alg, engines, block, 0.0)
}

/// As [`time_with_block`] with ranks starting at seeded random offsets in
/// [0, skew) block-times.
fn time_skewed(spec: &str, alg: &str, engines: usize, block: u64, skew: f64) -> f64 {
    let mut t = parse_spec(spec).unwrap();
    t.set_uniform_links(Some(1.0), Some(0.0)).unwrap();
    let req = Request::new(
        Collective::Alltoall,
        t.num_ranks(),
        block,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(
        topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
        &req,
    )
    .unwrap();
    simulate(
        &s,
        &t,
        &SimConfig {
            engines,
            skew: if skew > 0.0 {
                Skew::Random {
                    max_s: skew,
                    seed: 1,
                }
            } else {
                Skew::None
            },
            ..SimConfig::default()
        },
    )
    .unwrap()
    .time_s
}

fn bound(nx: usize, ny: usize, torus: bool) -> f64 {
    alltoall::grid(&[nx, ny], &[torus, torus], 1.0, 1.0)
}

#[test]
fn a2at_on_the_mesh_with_2_engines_reaches_the_bound() {
    for ny in 2..=12 {
        for nx in ny..=12 {
            let t = time(&format!("mesh:{nx}x{ny}"), "a2at", 2);
            let lb = bound(nx, ny, false);
            assert_eq!(lb, ((nx / 2) * nx.div_ceil(2) * ny) as f64);
            assert!(
                (t - lb).abs() <= 1e-9 * lb,
                "mesh {nx}x{ny}: {t} vs T_lb {lb}"
            );
        }
    }
}

#[test]
fn a2at_on_the_torus_with_4_engines_reaches_half_the_bound() {
    for ny in 2..=12 {
        for nx in ny..=12 {
            if !(nx == ny || (nx % 2 == 1 && ny % 2 == 1)) {
                continue;
            }
            let t = time(&format!("torus:{nx}x{ny}"), "a2at", 4);
            let lb = bound(nx, ny, true);
            assert_eq!(lb, ((nx / 2) * nx.div_ceil(2) * ny) as f64 / 2.0);
            assert!(
                (t - lb).abs() <= 1e-9 * lb,
                "torus {nx}x{ny}: {t} vs T_lb/2 {lb}"
            );
        }
    }
}

/// The rectangles the paper leaves open, in both orientations, with blocks
/// of 1, 2 and 3 elements: A2AT is optimal on every one. It finishes at the
/// bisection bound in whole elements, which is T_lb/2 except on even×odd
/// tori with Nx ≡ 2 (mod 4) and an odd block: there the cut's elements
/// cannot be shared evenly by its links, and the bound (and A2AT) is half an
/// element above T_lb/2. With even blocks, which the lone half-ring block
/// splits into halves, every open rectangle reaches T_lb/2.
#[test]
fn a2at_on_the_open_torus_rectangles_reaches_the_bisection_bound() {
    for ny in 2..=12 {
        for nx in ny + 1..=12 {
            if nx % 2 == 1 && ny % 2 == 1 {
                continue;
            }
            let lb = bound(nx, ny, true);
            for spec in [format!("torus:{nx}x{ny}"), format!("torus:{ny}x{nx}")] {
                // The bound in whole elements: T_lb/2 but where the cut's
                // elements cannot be shared evenly by its links (Nx ≡ 2 mod
                // 4, Ny and the block odd), half an element more.
                for block in [1, 2, 3] {
                    let want =
                        alltoall::grid_whole_elements(&[nx, ny], &[true; 2], block, 1.0, 1.0);
                    let odd_cut = nx % 4 == 2 && ny % 2 == 1 && block % 2 == 1;
                    let half = if odd_cut { 0.5 } else { 0.0 };
                    assert_eq!(want, lb * block as f64 + half, "{spec} block {block}");
                    let t = time_with_block(&spec, "a2at", 4, block);
                    assert!(
                        (t - want).abs() <= 1e-9 * want,
                        "{spec} block {block}: {t} vs {want} (T_lb/2 = {lb} blocks)"
                    );
                }
            }
        }
    }
}

#[test]
fn dragon_on_the_hypercube_never_shares_a_link() {
    for n in 1..=8 {
        let spec = format!("hypercube:{n}");
        let t = parse_spec(&spec).unwrap();
        let req = Request::new(
            Collective::Alltoall,
            1 << n,
            64,
            Dtype::U8,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        let s =
            topocoll::algorithms::build(&topocoll::algorithms::alltoall::dragon::ALGORITHM, &req)
                .unwrap();
        let r = simulate(&s, &t, &SimConfig::default()).unwrap();
        assert!(r.links.iter().all(|l| l.peak_flows <= 1), "hypercube:{n}");
        assert_eq!(r.links_shared_fraction, 0.0);
    }
}

fn bound_3d(n: [usize; 3], torus: bool) -> f64 {
    alltoall::grid(&n, &[torus; 3], 1.0, 1.0)
}

/// 3D A2AT on cubes (docs/alltoall.md, "3D A2AT"): on the torus with 6
/// engines exactly the bisection bound ⌊N/2⌋⌈N/2⌉·N²/2.
#[test]
fn a2at_3d_on_torus_cubes_with_6_engines_reaches_the_bisection_bound() {
    for n in 2..=8 {
        let t = time(&format!("torus:{n}x{n}x{n}"), "a2at", 6);
        let lb = bound_3d([n; 3], true);
        assert_eq!(lb, ((n / 2) * n.div_ceil(2) * n * n) as f64 / 2.0);
        assert!(
            (t - lb).abs() <= 1e-9 * lb,
            "torus {n}x{n}x{n}: {t} vs {lb}"
        );
    }
}

/// N ≡ 2 (mod 6): the last 13 sends of the torus order, run alone on every
/// rank at once, take exactly their per-direction load: 2h hops from the
/// half-ring sets Q and T (h = N/2) and h − 1, 2 and 1 from the diagonal
/// pairs. On 8×8×8 and, beyond the shapes simulated whole, 14×14×14.
#[test]
fn a2at_3d_torus_tail_for_n_2_mod_6_takes_its_per_direction_load() {
    use topocoll::algorithms::alltoall::{a2at3d::order, Wrap};
    use topocoll::schedule::{Op, Region};
    for n in [8usize, 14] {
        let o = order([n; 3], Wrap::Torus);
        let tail = &o[o.len() - 13..];
        let mut t = parse_spec(&format!("torus:{n}x{n}x{n}")).unwrap();
        t.set_uniform_links(Some(1.0), Some(0.0)).unwrap();
        let p = t.num_ranks();
        let req = Request::new(
            Collective::Alltoall,
            p,
            1,
            Dtype::U8,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        let mut s = req.unregistered_schedule("tail");
        let routes: Vec<u32> = tail.iter().map(|v| s.offset_route(v)).collect();
        let shape = t.grid_shape().unwrap();
        for r in 0..p {
            let me = shape.coords(r);
            let at = |v: &[i64; 3], sign: i64| {
                let c: Vec<usize> = (0..3)
                    .map(|d| (me[d] as i64 + sign * v[d]).rem_euclid(n as i64) as usize)
                    .collect();
                shape.rank(&c)
            };
            for (v, &route) in tail.iter().zip(&routes) {
                let (to, from) = (at(v, 1) as u32, at(v, -1) as u32);
                let prog = &mut s.programs[r];
                let region = Region::input(to as u64, 1);
                prog.push(
                    Op::Send {
                        peer: to,
                        tag: 0,
                        region,
                        route,
                    },
                    &[],
                );
                let region = Region::output(from as u64, 1);
                let combine = false;
                prog.push(
                    Op::Recv {
                        peer: from,
                        tag: 0,
                        region,
                        combine,
                    },
                    &[],
                );
            }
        }
        let cfg = SimConfig {
            engines: 6,
            ..SimConfig::default()
        };
        let time = simulate(&s, &t, &cfg).unwrap().time_s;
        let h = (n / 2) as f64;
        let load = 2.0 * h + (h - 1.0) + 3.0;
        assert!((time - load).abs() <= 1e-9 * load, "{n}: {time} vs {load}");
    }
}

/// 3D A2AT on mesh cubes with 3 engines: 3 and 4 exactly at the bound, the
/// others within the measured 0.35% (5: 150.52 for 150; 6: 324.43 for 324;
/// 8: 1024.93 for 1024).
#[test]
fn a2at_3d_on_mesh_cubes_with_3_engines_is_within_its_measured_ratios() {
    for (n, ratio) in [(3, 1.0), (4, 1.0), (5, 1.0036), (6, 1.0014), (8, 1.001)] {
        let t = time(&format!("mesh:{n}x{n}x{n}"), "a2at", 3);
        let lb = bound_3d([n; 3], false);
        assert!(
            t >= lb * (1.0 - 1e-9) && t <= lb * ratio * (1.0 + 1e-9),
            "mesh {n}x{n}x{n}: {t} vs bound {lb}, ratio {}",
            t / lb
        );
    }
}

/// 3D A2AT on rectangles (the greedy order): upper bounds just above the
/// measured ratios, so that a regression fails.
#[test]
fn a2at_3d_on_rectangles_is_within_its_measured_ratios() {
    for (spec, engines, ratio) in [
        ("torus:6x4x4", 6, 1.0),
        ("torus:4x4x2", 6, 1.042),
        ("torus:8x4x4", 6, 1.006),
        ("mesh:4x4x2", 3, 1.035),
        ("mesh:6x4x4", 3, 1.064),
    ] {
        let t = time(spec, "a2at", engines);
        let topo = parse_spec(spec).unwrap();
        let topocoll::topology::Kind::Grid(g) = &topo.kind else {
            unreachable!()
        };
        let lb = alltoall::grid(&g.dims, &g.wrap, 1.0, 1.0);
        assert!(
            t >= lb * (1.0 - 1e-9) && t <= lb * ratio * (1.0 + 1e-9),
            "{spec}: {t} vs bound {lb}, ratio {}",
            t / lb
        );
    }
}

/// `a2at_sync` runs as A2AT without skew (the same times on meshes with 2
/// engines and tori with 4), and on the torus a start skew of up to `skew`
/// block-times costs it at most 2·skew over its time without skew: its
/// groups wait for the late ranks and then run in step again. (A2AT itself
/// loses 8% and 19% at skews of 0.1 and 1 on the 16×16 torus; on the mesh
/// the synchronised variant is not robust. See docs/alltoall.md.)
#[test]
fn a2at_sync_keeps_the_torus_in_step_under_skew() {
    for (nx, ny) in [(4, 4), (7, 5), (8, 6), (9, 9), (10, 3), (12, 12)] {
        for (family, engines) in [("mesh", 2), ("torus", 4)] {
            let spec = format!("{family}:{nx}x{ny}");
            let plain = time(&spec, "a2at", engines);
            let synced = time(&spec, "a2at_sync", engines);
            assert!(
                (plain - synced).abs() <= 1e-9 * plain,
                "{spec}: a2at_sync {synced} vs a2at {plain}"
            );
        }
        let spec = format!("torus:{nx}x{ny}");
        let unskewed = time(&spec, "a2at_sync", 4);
        for skew in [0.1, 1.0, 3.0] {
            let t = time_skewed(&spec, "a2at_sync", 4, 1, skew);
            assert!(
                t <= unskewed + 2.0 * skew,
                "{spec} skew {skew}: a2at_sync {t} vs {unskewed} without skew"
            );
        }
    }
}
