//! The all-to-all family (verified over many shapes by the corpus,
//! tests/corpus/grids.toml and ranks.toml): which rank counts and networks
//! each takes, A2AT's link loads held against the paper's lower bounds,
//! signed-offset routes checked, Dragon's phases checked contention-free on
//! hypercubes.

use std::collections::HashSet;
use topocoll::algorithms::Error;
use topocoll::algorithms::Request;
use topocoll::model::{self, alltoall as bound};
use topocoll::schedule::{verify, Collective, Dtype, Op, ReduceOp, Schedule};
use topocoll::topology::{parse_spec, Topology};

/// Block sizes in elements (i32, so 4 and 12 bytes).
const BLOCKS: [u64; 2] = [1, 3];
/// Link bandwidth of spec-string topologies, bytes/s.
const BW: f64 = 1e9;

fn request(t: Option<&Topology>, ranks: usize, block: u64) -> Request<'_> {
    Request::new(
        Collective::Alltoall,
        ranks,
        block * 4,
        Dtype::I32,
        ReduceOp::Sum,
        t,
    )
    .unwrap()
}

/// The all-to-all named `name` (the tests here name them as `topocoll
/// list` does), built for `req`.
fn build(name: &str, req: &Request) -> topocoll::algorithms::Result<Schedule> {
    let alg = topocoll::algorithms::find(topocoll::schedule::CollectiveKind::Alltoall, name)?;
    topocoll::algorithms::build(alg, req)
}

fn on(t: &Topology, alg: &str, block: u64) -> topocoll::algorithms::Result<Schedule> {
    build(alg, &request(Some(t), t.num_ranks(), block))
}

/// Every grid shape 1 ≤ Ny ≤ Nx ≤ 12 and its transpose, as (nx, ny).
fn shapes() -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for nx in 1..=12 {
        for ny in 1..=nx {
            v.push((nx, ny));
            if nx != ny {
                v.push((ny, nx));
            }
        }
    }
    v
}

fn is_unsupported(r: &topocoll::algorithms::Result<Schedule>) -> bool {
    matches!(r, Err(Error::Unsupported { .. }))
}

/// Dragon and the pairwise exchange take a power-of-two number of ranks,
/// on a grid or without a network, and say so for any other (the corpus
/// verifies them where they apply).
#[test]
fn dragon_and_pairwise_take_only_a_power_of_two_ranks() {
    for p in 1..=64usize {
        for alg in ["dragon", "pairwise"] {
            for block in BLOCKS {
                let built = build(alg, &request(None, p, block));
                if !p.is_power_of_two() {
                    let Err(Error::Unsupported { reason, .. }) = &built else {
                        panic!("{alg} on {p} ranks: {built:?}");
                    };
                    assert!(reason.contains("power-of-two"), "{reason}");
                    continue;
                }
                built.unwrap_or_else(|e| panic!("{alg} on {p} ranks: {e}"));
            }
        }
    }
    for family in ["mesh", "torus"] {
        for (nx, ny) in shapes() {
            let t = parse_spec(&format!("{family}:{nx}x{ny}")).unwrap();
            let p = nx * ny;
            for alg in ["dragon", "pairwise"] {
                for block in BLOCKS {
                    let built = on(&t, alg, block);
                    if !p.is_power_of_two() {
                        assert!(is_unsupported(&built), "{alg} on {}: {built:?}", t.name);
                        continue;
                    }
                    built.unwrap_or_else(|e| panic!("{alg} on {}: {e}", t.name));
                }
            }
        }
    }
}

#[test]
fn grid_algorithms_need_a_grid() {
    for alg in ["a2at", "a2and"] {
        assert!(is_unsupported(&build(alg, &request(None, 16, 1))));
        let cube = parse_spec("hypercube:4").unwrap();
        assert!(is_unsupported(&on(&cube, alg, 1)), "{alg} on a hypercube");
    }
    // A2AT is defined up to three dimensions, and Tofu's routes are not
    // signed offsets.
    assert!(is_unsupported(&on(
        &parse_spec("torus:3x3x3x2").unwrap(),
        "a2at",
        1
    )));
    assert!(is_unsupported(&on(
        &parse_spec("tofu:1x1x1").unwrap(),
        "a2at",
        1
    )));
    // Dimensions of size 1 do not count, and A2AND takes any grid.
    for spec in ["mesh:1x5x4", "torus:6x1", "mesh:7", "torus:1x1x1"] {
        let t = parse_spec(spec).unwrap();
        verify(&on(&t, "a2at", 2).unwrap()).unwrap();
    }
    for spec in ["tofu:1x1x1", "tofu:2x1x1", "torus:3x2x4", "mesh:2x3x2x2"] {
        let t = parse_spec(spec).unwrap();
        verify(&on(&t, "a2and", 2).unwrap()).unwrap();
    }
}

/// Every 3D shape with sides 1..=6, mesh and torus: the A2AT order verifies
/// and every send reaches its peer by its offset route. With three sides > 1
/// the link-load bound is the bisection bound: every torus dimension's
/// half-ring blocks split evenly between the two directions (v with −v, and
/// the balanced half-ring sets).
#[test]
fn a2at_verifies_on_3d_grids() {
    let mut links = Vec::new();
    for a in 1..=6usize {
        for b in 1..=6usize {
            for c in 1..=6usize {
                for family in ["mesh", "torus"] {
                    let spec = format!("{family}:{a}x{b}x{c}");
                    let t = parse_spec(&spec).unwrap();
                    let s = on(&t, "a2at", 1).unwrap();
                    verify(&s).unwrap_or_else(|e| panic!("a2at on {spec}: {e}"));
                    let synced = on(&t, "a2at_sync", 1).unwrap();
                    verify(&synced).unwrap_or_else(|e| panic!("a2at_sync on {spec}: {e}"));
                    for (rank, prog) in s.programs.iter().enumerate() {
                        for op in &prog.ops {
                            if let Op::Send { peer, route, .. } = op {
                                let off = &s.offsets[*route as usize - 1];
                                links.clear();
                                let to = t.route_offset(rank, off, &mut links).unwrap();
                                assert_eq!(to, *peer as usize, "{spec}: rank {rank} {off:?}");
                            }
                        }
                    }
                    if a.min(b).min(c) == 1 {
                        continue; // the 2D order (a2at_link_load_is_the_papers_bound)
                    }
                    let n = [a, b, c];
                    let torus = family == "torus";
                    let ll = model::link_load(&s, &t).unwrap().seconds;
                    let mut lb = bound::grid(&n, &[torus; 3], 4.0, BW);
                    // One even side e on a torus: the lone node (0,…,e/2,…,0)
                    // goes +e at even coordinates and −e at odd ones (as 2D
                    // even×odd), which balances the two directions when 4
                    // divides e and leaves half a block over when it does not.
                    let even: Vec<usize> = n.into_iter().filter(|x| x % 2 == 0).collect();
                    if let (&[e], true) = (even.as_slice(), torus) {
                        let p = a * b * c;
                        let h = (e / 2) as f64;
                        let over = if e % 4 == 2 { 0.5 } else { 0.0 };
                        let load = h * h * (p / e) as f64 / 2.0 + over;
                        lb = lb.max(load * 4.0 / BW);
                        // A block of two elements goes half each way (as in
                        // 2D): exactly the bisection bound.
                        let s2 = on(&t, "a2at", 2).unwrap();
                        verify(&s2).unwrap_or_else(|e| panic!("a2at on {spec} block 2: {e}"));
                        let ll2 = model::link_load(&s2, &t).unwrap().seconds;
                        let lb2 = bound::grid(&n, &[true; 3], 8.0, BW);
                        assert!(close(ll2, lb2), "{spec} block 2: {ll2} vs {lb2}");
                    }
                    assert!(close(ll, lb), "{spec}: link load {ll} vs bound {lb}");
                }
            }
        }
    }
    // Three dimensions of size > 1 among more: the others are ignored.
    for spec in ["torus:1x3x4x5", "mesh:2x1x3x2"] {
        let t = parse_spec(spec).unwrap();
        verify(&on(&t, "a2at", 3).unwrap()).unwrap();
    }
}

/// Every send that names a signed offset reaches its peer that way.
#[test]
fn offsets_lead_to_their_peers() {
    let mut specs: Vec<String> = Vec::new();
    for (nx, ny) in shapes() {
        specs.push(format!("mesh:{nx}x{ny}"));
        specs.push(format!("torus:{nx}x{ny}"));
    }
    specs.extend(["mesh:1x5x4", "torus:6x1x1", "torus:8"].map(String::from));
    let mut links = Vec::new();
    for spec in specs {
        let t = parse_spec(&spec).unwrap();
        let s = on(&t, "a2at", 1).unwrap();
        let mut named = 0;
        for (rank, prog) in s.programs.iter().enumerate() {
            for op in &prog.ops {
                if let Op::Send { peer, route, .. } = op {
                    assert!(*route > 0, "{spec}: a2at send without an offset route");
                    let off = &s.offsets[*route as usize - 1];
                    links.clear();
                    let to = t.route_offset(rank, off, &mut links).unwrap();
                    assert_eq!(to, *peer as usize, "{spec}: rank {rank} offset {off:?}");
                    named += 1;
                }
            }
        }
        assert_eq!(named, s.ranks * (s.ranks - 1), "{spec}");
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// A2AT reaches the mesh lower bound, so its link-load bound must equal the
/// paper's T_lb on every mesh; on the torus T_lb/2 for the shapes the paper
/// claims (square, odd×odd) and for our odd×even and even×even orders; for
/// even×odd the Ny blocks at x-offset Nx/2 cannot split evenly between the
/// two directions, T_lb/2 + Nx/4 blocks.
#[test]
fn a2at_link_load_is_the_papers_bound() {
    for (nx, ny) in shapes() {
        for block in BLOCKS {
            let bytes = (block * 4) as f64;
            let mesh = parse_spec(&format!("mesh:{nx}x{ny}")).unwrap();
            let s = on(&mesh, "a2at", block).unwrap();
            let ll = model::link_load(&s, &mesh).unwrap().seconds;
            let tlb = bound::mesh_2d(nx, ny, bytes, BW);
            assert!(
                close(ll, tlb),
                "mesh {nx}x{ny}: link load {ll} vs T_lb {tlb}"
            );
            assert!(close(model::lower_bound(&s, &mesh).unwrap(), tlb));

            let torus = parse_spec(&format!("torus:{nx}x{ny}")).unwrap();
            let s = on(&torus, "a2at", block).unwrap();
            let ll = model::link_load(&s, &torus).unwrap().seconds;
            let half = bound::torus_2d(nx, ny, bytes, BW);
            let (long, short) = (nx.max(ny), nx.min(ny));
            // Even×odd: ranks at odd x send the lone half-ring block the
            // other way, which balances the directions when 4 divides Nx.
            // When it does not, a block of one element leaves half a block
            // over; a larger block goes half each way, which leaves nothing
            // over when it is even and half an element when it is odd.
            let expect = if long % 4 == 2 && short % 2 == 1 && long != short {
                half + 0.5 * (block % 2 * 4) as f64 / BW
            } else {
                half
            };
            assert!(
                close(ll, expect),
                "torus {nx}x{ny}: link load {ll} vs {expect} (T_lb/2 = {half})"
            );
        }
    }
}

/// Dragon on hypercube:n: within a phase (tag) no two sends share a directed link.
#[test]
fn dragon_phases_are_contention_free_on_hypercubes() {
    for n in 1..=8 {
        let t = parse_spec(&format!("hypercube:{n}")).unwrap();
        let s = on(&t, "dragon", 1).unwrap();
        verify(&s).unwrap();
        let p = s.ranks;
        let mut used: Vec<HashSet<u32>> = vec![HashSet::new(); p];
        let mut route = Vec::new();
        let mut sends = 0;
        for (v, prog) in s.programs.iter().enumerate() {
            for op in &prog.ops {
                if let Op::Send { peer, tag, .. } = op {
                    assert_eq!(*peer as usize, v ^ *tag as usize);
                    route.clear();
                    t.route(v, *peer as usize, &mut route);
                    for &l in &route {
                        assert!(
                            used[*tag as usize].insert(l),
                            "hypercube:{n} phase {tag}: link {l} used twice"
                        );
                    }
                    sends += 1;
                }
            }
        }
        assert_eq!(sends, p * (p - 1));
    }
}

/// Steps separated per rank: the sends and receives of step i wait for exactly
/// the send and receive of step i−1; partners follow SimGrid (pair: r XOR i;
/// ring: to r+i, from r−i) and Dragon (v XOR s).
#[test]
fn pairwise_ring_and_dragon_exchange_with_one_partner_a_step() {
    for p in [1usize, 2, 4, 8, 16, 5, 6, 12] {
        for alg in ["pairwise", "ring", "dragon"] {
            if alg != "ring" && !p.is_power_of_two() {
                continue;
            }
            let s = build(alg, &request(None, p, 1)).unwrap();
            for (r, prog) in s.programs.iter().enumerate() {
                assert!(matches!(prog.ops[0], Op::Copy { .. }));
                assert!(prog.deps(0).is_empty());
                assert_eq!(prog.len(), 2 * p - 1);
                for i in 1..p {
                    let (si, ri) = (2 * i - 1, 2 * i);
                    let (to, from) = match alg {
                        "ring" => ((r + i) % p, (r + p - i) % p),
                        _ => (r ^ i, r ^ i),
                    };
                    let Op::Send { peer, tag, .. } = prog.ops[si] else {
                        panic!()
                    };
                    assert_eq!((peer as usize, tag as usize), (to, i));
                    let Op::Recv { peer, tag, .. } = prog.ops[ri] else {
                        panic!()
                    };
                    assert_eq!((peer as usize, tag as usize), (from, i));
                    let want: Vec<u32> = if i == 1 {
                        vec![]
                    } else {
                        vec![si as u32 - 2, ri as u32 - 2]
                    };
                    assert_eq!(prog.deps(si), want.as_slice());
                    assert_eq!(prog.deps(ri), want.as_slice());
                }
            }
        }
    }
}

/// Bruck sends ⌈log2 P⌉ packed messages per rank, to rank + 2^k.
#[test]
fn bruck_sends_log_p_messages() {
    for p in 1..=40usize {
        let s = build("bruck", &request(None, p, 2)).unwrap();
        let steps = (0..).take_while(|&k| (1usize << k) < p).count();
        for (r, prog) in s.programs.iter().enumerate() {
            let peers: Vec<usize> = prog
                .ops
                .iter()
                .filter_map(|o| match o {
                    Op::Send { peer, .. } => Some(*peer as usize),
                    _ => None,
                })
                .collect();
            let want: Vec<usize> = (0..steps).map(|k| (r + (1 << k)) % p).collect();
            assert_eq!(peers, want, "P = {p} rank {r}");
        }
    }
}

/// A2AT and A2AND send in exactly the documented order on a small case.
#[test]
fn a2at_and_a2and_send_in_the_documented_order() {
    use topocoll::algorithms::alltoall::{a2at::order, Wrap};
    // 3×3 mesh: Step 1 then Step 2 as printed.
    assert_eq!(
        order(3, 3, Wrap::Mesh),
        vec![
            (1, 0),
            (0, 1),
            (-1, 0),
            (0, -1),
            (1, 1),
            (-1, -1),
            (1, -1),
            (-1, 1)
        ]
    );
    // Torus Step 2 regrouped: (i,j), (−i,−j), (−j,i), (j,−i).
    assert_eq!(
        order(3, 3, Wrap::Torus)[4..],
        [(1, 1), (-1, -1), (-1, 1), (1, -1)]
    );
    // 4×4 torus: Step 3_T from i = 1.
    assert_eq!(
        order(4, 4, Wrap::Torus)[8..],
        [(2, 1), (-1, -2), (-2, -1), (1, 2), (2, 0), (0, 2), (-2, -2)]
    );
    // A2AND on mesh:2x3 from rank 0: x outer, y inner, skipping (0,0).
    let t = parse_spec("mesh:2x3").unwrap();
    let s = on(&t, "a2and", 1).unwrap();
    let peers: Vec<u32> = s.programs[0]
        .ops
        .iter()
        .filter_map(|o| match o {
            Op::Send { peer, .. } => Some(*peer),
            _ => None,
        })
        .collect();
    // (0,1)=2, (0,2)=4, (1,0)=1, (1,1)=3, (1,2)=5.
    assert_eq!(peers, vec![2, 4, 1, 3, 5]);
}
