//! The bcast / reduce / allreduce family: every algorithm verified symbolically
//! over many shapes, roots, counts and segment sizes, and a determinism check
//! that runs the reductions on real floats with a tiny sequential interpreter
//! under several execution orders.

use std::collections::{HashMap, VecDeque};
use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::error::Error;
use topocoll::schedule::{self, Buf, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::topology::{parse_spec, Topology};

const FAMILIES: [&str; 3] = ["bcast", "reduce", "allreduce"];

fn collective(name: &str, root: u32) -> Collective {
    Collective::parse(name, root).unwrap()
}

/// Builds `alg` for `coll`; None when the algorithm says the shape is unsupported.
fn build(
    alg: &str,
    coll: Collective,
    ranks: usize,
    count: u64,
    segment_elems: Option<u64>,
    topo: Option<&Topology>,
) -> Option<Schedule> {
    let dtype = Dtype::F64;
    let mut req = Request::new(coll, ranks, count * 8, dtype, ReduceOp::Sum, topo).unwrap();
    req.segment_bytes = segment_elems.map(|e| e * 8);
    match algorithms::build(alg, &req) {
        Ok(s) => Some(s),
        Err(Error::Unsupported { .. }) => None,
        Err(e) => panic!("{alg} {coll:?} on {ranks} ranks, count {count}: {e}"),
    }
}

fn verify_ok(s: &Schedule, what: &str) {
    if let Err(e) = schedule::verify(s) {
        panic!("{what}: {e}");
    }
}

fn roots_for(p: usize, all: bool) -> Vec<u32> {
    if all {
        (0..p as u32).collect()
    } else {
        let mut r = vec![0, (p - 1) as u32, (p / 2 + 1) as u32 % p as u32];
        r.sort_unstable();
        r.dedup();
        r
    }
}

fn trinaryx3_sweep(spec: &str, all_roots: bool, cases: &[(u64, Option<u64>)]) {
    let topo = parse_spec(spec).unwrap();
    let p = topo.num_ranks();
    for fam in FAMILIES {
        let roots = if fam == "allreduce" {
            vec![0]
        } else {
            roots_for(p, all_roots)
        };
        for &root in &roots {
            for &(count, seg) in cases {
                let s = build(
                    "trinaryx3",
                    collective(fam, root),
                    p,
                    count,
                    seg,
                    Some(&topo),
                )
                .unwrap_or_else(|| panic!("trinaryx3 {fam} unsupported on {spec}"));
                verify_ok(
                    &s,
                    &format!("trinaryx3 {fam} on {spec} root {root} count {count} seg {seg:?}"),
                );
            }
        }
    }
}

#[test]
fn trinaryx3_every_3d_torus_up_to_6x6x6() {
    // 100 elements in 3 parts of 34/33/33, segments of 7: none divides.
    let cases = [
        (0, None),
        (1, None),
        (100, Some(7)),
        (13, Some(1)),
        (64, None),
    ];
    for x in 1..=6 {
        for y in 1..=6 {
            for z in 1..=6 {
                trinaryx3_sweep(&format!("torus:{x}x{y}x{z}"), false, &cases);
            }
        }
    }
}

#[test]
fn trinaryx3_2d_tori_rings_and_tofu() {
    let cases = [
        (0, None),
        (1, None),
        (50, Some(3)),
        (8, Some(8)),
        (9, Some(2)),
    ];
    for x in 1..=8 {
        trinaryx3_sweep(&format!("torus:{x}"), true, &cases);
        for y in 1..=8 {
            trinaryx3_sweep(&format!("torus:{x}x{y}"), x * y <= 16, &cases);
        }
    }
    for spec in [
        "tofu:1x1x1",
        "tofu:2x1x1",
        "tofu:1x2x1",
        "tofu:1x1x2",
        "tofu:2x2x1",
        "torus:3x2x4x2",
    ] {
        trinaryx3_sweep(spec, false, &cases);
    }
    trinaryx3_sweep("tofu:1x1x1", true, &[(10, Some(1)), (5, None)]);
}

#[test]
fn trinaryx3_every_root_on_small_3d_tori() {
    let cases = [(11, Some(2)), (1, None)];
    for spec in [
        "torus:2x2x2",
        "torus:3x3x3",
        "torus:4x3x2",
        "torus:2x3x2",
        "torus:4x4x4",
    ] {
        trinaryx3_sweep(spec, true, &cases);
    }
}

#[test]
fn trinaryx3_needs_a_torus() {
    for (spec, p) in [(Some("mesh:4x4"), 16), (Some("hypercube:3"), 8), (None, 8)] {
        let topo = spec.map(|s| parse_spec(s).unwrap());
        for fam in FAMILIES {
            assert!(
                build("trinaryx3", collective(fam, 0), p, 10, None, topo.as_ref()).is_none(),
                "{fam} on {spec:?}"
            );
        }
    }
    // A mesh whose long dimensions... there are none: a 2x2 mesh is a 2x2 torus.
    let topo = parse_spec("mesh:2x2").unwrap();
    let s = build(
        "trinaryx3",
        collective("allreduce", 0),
        4,
        10,
        Some(3),
        Some(&topo),
    )
    .unwrap();
    verify_ok(&s, "trinaryx3 on mesh:2x2");
}

/// Every registered rank-based algorithm of the family, verified for P up to 64.
#[test]
fn rank_based_algorithms_up_to_64_ranks() {
    let counts_segs: [(u64, Option<u64>); 6] = [
        (0, None),
        (1, None),
        (5, Some(2)),
        (64, None),
        (100, Some(7)),
        (37, Some(1)),
    ];
    let mut seen = HashMap::new();
    for alg in ALGORITHMS
        .iter()
        .filter(|a| FAMILIES.contains(&a.collective.name()))
    {
        for p in 1..=64usize {
            for root in roots_for(p, p <= 12) {
                for &(count, seg) in &counts_segs {
                    let coll = alg.collective.with_root(root);
                    if coll.root().is_none() && root != 0 {
                        continue;
                    }
                    let Some(s) = build(alg.name, coll, p, count, seg, None) else {
                        continue;
                    };
                    *seen.entry((alg.collective.name(), alg.name)).or_insert(0) += 1;
                    verify_ok(
                        &s,
                        &format!(
                            "{} {} P {p} root {root} count {count} seg {seg:?}",
                            alg.collective, alg.name
                        ),
                    );
                }
            }
        }
    }
    for name in [
        ("allreduce", "recursive_doubling"),
        ("allreduce", "rabenseifner"),
        ("allreduce", "reduce_bcast"),
        ("allreduce", "ring"),
        ("bcast", "pipeline"),
        ("bcast", "scatter_allgather"),
        ("bcast", "binomial"),
        ("reduce", "binomial"),
    ] {
        assert!(
            seen.get(&name).copied().unwrap_or(0) > 100,
            "{name:?} not swept"
        );
    }
}

/// Rank-based algorithms also run on a topology's ranks (they ignore the network).
#[test]
fn rank_based_algorithms_on_topologies() {
    for spec in ["tofu:1x1x1", "torus:3x3x3", "torus:5x4"] {
        let topo = parse_spec(spec).unwrap();
        let p = topo.num_ranks();
        // The multi-lane algorithms need a grid of sites (tests/multilane.rs).
        for alg in ALGORITHMS
            .iter()
            .filter(|a| FAMILIES.contains(&a.collective.name()) && !a.lanes)
        {
            let s = build(
                alg.name,
                alg.collective.with_root(1),
                p,
                29,
                Some(4),
                Some(&topo),
            )
            .unwrap_or_else(|| panic!("{} on {spec}", alg.name));
            verify_ok(&s, &format!("{} {} on {spec}", alg.collective, alg.name));
        }
    }
}

// ---------------------------------------------------------------------------
// Determinism: a tiny sequential interpreter on real f64 data.

#[derive(Clone, Copy, Debug)]
enum Policy {
    Fifo,
    Lifo,
    Random(u64),
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Rank r's element i: a random mantissa scaled by 10^-6 .. 10^6, so sums
/// depend on the order of the additions.
fn datum(r: usize, i: u64) -> f64 {
    let h = splitmix((r as u64) << 32 | i);
    let mant = (h >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    mant * 10f64.powi((h % 13) as i32 - 6)
}

/// Runs the schedule on real data, taking one ready op at a time in the order
/// `policy` picks; sends are eager, receives match (src, dst, tag) in FIFO
/// order. Returns every rank's Output.
fn run_floats(s: &Schedule, policy: Policy) -> Vec<Vec<f64>> {
    assert_eq!(s.op, ReduceOp::Sum);
    let p = s.ranks;
    let mut bufs: Vec<[Vec<f64>; 3]> = (0..p)
        .map(|r| {
            [Buf::Input, Buf::Output, Buf::Scratch]
                .map(|b| vec![f64::NAN; s.buffer_len(r, b) as usize])
        })
        .collect();
    for (r, b) in bufs.iter_mut().enumerate() {
        if let Some((buf, len)) = s.collective.initial(p, s.count, r) {
            for i in 0..len {
                b[buf as usize][i as usize] = datum(r, i);
            }
        }
    }
    let mut remaining: Vec<Vec<usize>> = s
        .programs
        .iter()
        .map(|pr| (0..pr.len()).map(|i| pr.deps(i).len()).collect())
        .collect();
    let mut succ: Vec<Vec<Vec<usize>>> = s
        .programs
        .iter()
        .map(|pr| {
            let mut v = vec![Vec::new(); pr.len()];
            for i in 0..pr.len() {
                for &d in pr.deps(i) {
                    v[d as usize].push(i);
                }
            }
            v
        })
        .collect();
    let mut ready: VecDeque<(usize, usize)> = VecDeque::new();
    for (r, rem) in remaining.iter().enumerate() {
        for (i, &n) in rem.iter().enumerate() {
            if n == 0 {
                ready.push_back((r, i));
            }
        }
    }
    let mut messages: HashMap<(u32, u32, u32), VecDeque<Vec<f64>>> = HashMap::new();
    let mut waiting: HashMap<(u32, u32, u32), VecDeque<usize>> = HashMap::new();
    let mut rng = 0u64;
    let read = |bufs: &Vec<[Vec<f64>; 3]>, r: usize, reg: &Region| -> Vec<f64> {
        let b = &bufs[r][reg.buf as usize];
        b[reg.offset as usize..reg.end() as usize].to_vec()
    };
    fn write(dst: &mut [f64], data: &[f64], combine: bool) {
        for (d, &x) in dst.iter_mut().zip(data) {
            *d = if combine { *d + x } else { x };
        }
    }
    let mut done = 0;
    let total = s.num_ops();
    let mut complete = |r: usize, i: usize, ready: &mut VecDeque<(usize, usize)>| {
        done += 1;
        for &j in &std::mem::take(&mut succ[r][i]) {
            remaining[r][j] -= 1;
            if remaining[r][j] == 0 {
                ready.push_back((r, j));
            }
        }
    };
    loop {
        let next = match policy {
            Policy::Fifo => ready.pop_front(),
            Policy::Lifo => ready.pop_back(),
            Policy::Random(seed) => {
                if ready.is_empty() {
                    None
                } else {
                    rng = splitmix(rng ^ seed);
                    let k = (rng % ready.len() as u64) as usize;
                    ready.swap_remove_back(k)
                }
            }
        };
        let Some((r, i)) = next else { break };
        match s.programs[r].ops[i] {
            Op::Send {
                peer, tag, region, ..
            } => {
                let data = read(&bufs, r, &region);
                let key = (r as u32, peer, tag);
                if let Some(j) = waiting.get_mut(&key).and_then(|q| q.pop_front()) {
                    let Op::Recv {
                        region: dst,
                        combine,
                        ..
                    } = s.programs[peer as usize].ops[j]
                    else {
                        unreachable!()
                    };
                    let b = &mut bufs[peer as usize][dst.buf as usize];
                    write(
                        &mut b[dst.offset as usize..dst.end() as usize],
                        &data,
                        combine,
                    );
                    complete(peer as usize, j, &mut ready);
                } else {
                    messages.entry(key).or_default().push_back(data);
                }
                complete(r, i, &mut ready);
            }
            Op::Recv {
                peer,
                tag,
                region,
                combine,
            } => {
                let key = (peer, r as u32, tag);
                if let Some(data) = messages.get_mut(&key).and_then(|q| q.pop_front()) {
                    let b = &mut bufs[r][region.buf as usize];
                    write(
                        &mut b[region.offset as usize..region.end() as usize],
                        &data,
                        combine,
                    );
                    complete(r, i, &mut ready);
                } else {
                    waiting.entry(key).or_default().push_back(i);
                }
            }
            Op::Copy { src, dst } | Op::Combine { src, dst } => {
                let data = read(&bufs, r, &src);
                let combine = matches!(s.programs[r].ops[i], Op::Combine { .. });
                let b = &mut bufs[r][dst.buf as usize];
                write(
                    &mut b[dst.offset as usize..dst.end() as usize],
                    &data,
                    combine,
                );
                complete(r, i, &mut ready);
            }
            Op::Compute { .. } => complete(r, i, &mut ready),
        }
    }
    assert_eq!(done, total, "{}: the interpreter deadlocked", s.algorithm);
    bufs.into_iter().map(|[_, out, _]| out).collect()
}

const POLICIES: [Policy; 4] = [
    Policy::Fifo,
    Policy::Lifo,
    Policy::Random(1),
    Policy::Random(0xdead_beef),
];

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Runs a reduction under every policy: the constrained outputs must agree
/// bit for bit across policies (and across ranks for allreduce) and be close to
/// the exact sum.
fn check_deterministic(s: &Schedule) {
    let p = s.ranks;
    let n = s.count;
    let exact: Vec<f64> = (0..n)
        .map(|i| {
            // Order-independent reference: sum sorted by magnitude.
            let mut xs: Vec<f64> = (0..p).map(|r| datum(r, i)).collect();
            xs.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
            xs.iter().sum()
        })
        .collect();
    let scale: Vec<f64> = (0..n)
        .map(|i| (0..p).map(|r| datum(r, i).abs()).sum())
        .collect();
    let holders: Vec<usize> = match s.collective {
        Collective::Reduce { root } => vec![root as usize],
        _ => (0..p).collect(),
    };
    let mut reference: Option<Vec<u64>> = None;
    for policy in POLICIES {
        let out = run_floats(s, policy);
        for &r in &holders {
            let b = bits(&out[r]);
            match &reference {
                None => {
                    for i in 0..n as usize {
                        assert!(
                            (out[r][i] - exact[i]).abs() <= 1e-12 * scale[i],
                            "{} rank {r} element {i}: {} vs {}",
                            s.algorithm,
                            out[r][i],
                            exact[i]
                        );
                    }
                    reference = Some(b)
                }
                Some(want) => assert_eq!(
                    &b, want,
                    "{} {:?}: rank {r} differs (policy {policy:?})",
                    s.algorithm, s.collective
                ),
            }
        }
    }
}

#[test]
fn the_data_makes_sums_order_dependent() {
    let p = 27;
    let differs = (0..100u64).any(|i| {
        let fwd: f64 = (0..p).map(|r| datum(r, i)).sum();
        let bwd: f64 = (0..p).rev().map(|r| datum(r, i)).sum();
        fwd.to_bits() != bwd.to_bits()
    });
    assert!(differs);
}

#[test]
fn allreduce_results_are_bit_identical_on_every_rank() {
    for (spec, count, seg) in [
        ("torus:3x3x3", 103, Some(5)),
        ("torus:4x4x4", 64, Some(4)),
        ("tofu:1x1x1", 40, Some(3)),
        ("torus:5x4", 33, Some(2)),
        ("torus:2x2x2", 9, None),
        ("torus:7", 12, Some(1)),
    ] {
        let topo = parse_spec(spec).unwrap();
        let p = topo.num_ranks();
        let s = build(
            "trinaryx3",
            collective("allreduce", 0),
            p,
            count,
            seg,
            Some(&topo),
        )
        .unwrap();
        verify_ok(&s, spec);
        check_deterministic(&s);
        for root in [0, p as u32 - 1] {
            let r = build(
                "trinaryx3",
                collective("reduce", root),
                p,
                count,
                seg,
                Some(&topo),
            )
            .unwrap();
            check_deterministic(&r);
        }
    }
    for p in [2, 3, 5, 6, 7, 8, 12, 13, 16, 24] {
        for alg in ["recursive_doubling", "rabenseifner", "reduce_bcast", "ring"] {
            let s = build(alg, collective("allreduce", 0), p, 37, Some(4), None).unwrap();
            check_deterministic(&s);
        }
        let s = build("binomial", collective("reduce", 1), p, 37, Some(4), None).unwrap();
        check_deterministic(&s);
    }
}

#[test]
fn broadcasts_copy_the_roots_bits() {
    let cases: Vec<(Option<&str>, usize, &str)> = vec![
        (Some("torus:3x4x2"), 24, "trinaryx3"),
        (Some("tofu:1x1x1"), 12, "trinaryx3"),
        (None, 13, "pipeline"),
        (None, 13, "scatter_allgather"),
        (None, 13, "binomial"),
    ];
    for (spec, p, alg) in cases {
        let topo = spec.map(|s| parse_spec(s).unwrap());
        let root = 5u32;
        let s = build(
            alg,
            collective("bcast", root),
            p,
            41,
            Some(3),
            topo.as_ref(),
        )
        .unwrap();
        for policy in POLICIES {
            let out = run_floats(&s, policy);
            let want: Vec<u64> = (0..41).map(|i| datum(root as usize, i).to_bits()).collect();
            for (r, o) in out.iter().enumerate() {
                assert_eq!(bits(o), want, "{alg} rank {r}");
            }
        }
    }
}

/// The trees really are what the schedules use: in a Trinaryx3 allreduce on a
/// torus whose rings are all longer than two, no directed link carries two
/// different (tree, phase) streams.
#[test]
fn trinaryx3_streams_never_share_a_link() {
    for spec in ["torus:4x4x4", "torus:3x5x4", "torus:6x3", "tofu:2x1x2"] {
        let topo = parse_spec(spec).unwrap();
        let p = topo.num_ranks();
        let s = build(
            "trinaryx3",
            collective("allreduce", 0),
            p,
            300,
            Some(10),
            Some(&topo),
        )
        .unwrap();
        let ntrees = topocoll::algorithms::trees::torus_trees(&topo.grid_shape().unwrap(), 0)
            .unwrap()
            .len() as u32;
        let mut owner: HashMap<u32, u32> = HashMap::new();
        let mut route = Vec::new();
        for (r, prog) in s.programs.iter().enumerate() {
            for op in &prog.ops {
                if let Op::Send {
                    peer,
                    tag,
                    route: k,
                    ..
                } = *op
                {
                    route.clear();
                    if k == 0 {
                        topo.route(r, peer as usize, &mut route);
                    } else {
                        let dst = topo
                            .route_offset(r, &s.offsets[k as usize - 1], &mut route)
                            .unwrap();
                        assert_eq!(dst, peer as usize);
                    }
                    assert_eq!(route.len(), 1, "{spec}: a tree hop is one link");
                    // Stream = (tree, phase), from the tag.
                    let stream = tag % (2 * ntrees);
                    let prev = *owner.entry(route[0]).or_insert(stream);
                    assert_eq!(prev, stream, "{spec}: link {} shared", route[0]);
                }
            }
        }
    }
}

#[test]
fn model_cli_prints_the_paper_values() {
    let bin = env!("CARGO_BIN_EXE_topocoll");
    let out = std::process::Command::new(bin)
        .args(["model", "trinaryx3", "--topology", "tofu:24x2x16"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("H = 84 (height of the 3 Trinaryx3 trees on the 48x6x32 torus)"),
        "{text}"
    );
    assert!(text.contains("94.096 ms"), "{text}");
    assert!(text.contains("192.729 ms"), "{text}");
    let bad = std::process::Command::new(bin)
        .args(["model", "trinaryx3", "--segment", "0"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
