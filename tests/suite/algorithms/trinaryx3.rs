//! Trinaryx3 (verified on every torus up to 6×6×6 and in any op order by
//! the corpus, tests/corpus/grids.toml and networks.toml): it needs a torus,
//! and its trees' streams never share a link.

use std::collections::HashMap;
use topocoll::algorithms::Error;
use topocoll::algorithms::Request;
use topocoll::schedule::{self, Collective, Dtype, Op, ReduceOp, Schedule};
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
    match topocoll::algorithms::build(
        topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
        &req,
    ) {
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

// ---------------------------------------------------------------------------
// Determinism: a tiny sequential interpreter on real f64 data.

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
