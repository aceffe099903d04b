//! Topologies: the Tofu mapping, routes on every kind, bad specs and files,
//! several ranks per host.

use topocoll::topology::{parse_spec, parse_toml, Topology};

mod placement;

pub(crate) fn all_kinds() -> Vec<Topology> {
    let mut t: Vec<Topology> = [
        "torus:4x4",
        "mesh:3x5",
        "torus:2x3x4",
        "mesh:7",
        "hypercube:3",
        "hypercube:0",
        "tofu:1x1x1",
        "tofu:2x1x2",
        "dragonnet:8",
    ]
    .iter()
    .map(|s| parse_spec(s).unwrap())
    .collect();
    for f in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples")).unwrap() {
        let path = f.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            t.push(parse_spec(path.to_str().unwrap()).unwrap());
        }
    }
    t
}

/// Tofu: neighbours in the virtual 3D torus are neighbours in 6D, for every X, Y, Z in 1..6.
#[test]
fn tofu_virtual_torus_keeps_neighbours_neighbours() {
    for x in 1..=6 {
        for y in 1..=6 {
            for z in 1..=6 {
                let t = parse_spec(&format!("tofu:{x}x{y}x{z}")).unwrap();
                let shape = t.grid_shape().unwrap();
                assert_eq!(shape.dims, vec![2 * x, 3 * y, 2 * z]);
                let mut nodes = t.rank_node.clone();
                nodes.sort_unstable();
                nodes.dedup();
                assert_eq!(nodes.len(), t.num_ranks(), "the mapping is one-to-one");
                let mut route = Vec::new();
                for r in 0..t.num_ranks() {
                    let c = shape.coords(r);
                    for d in 0..3 {
                        for step in [1, shape.dims[d] - 1] {
                            let mut n = c.clone();
                            n[d] = (c[d] + step) % shape.dims[d];
                            let q = shape.rank(&n);
                            route.clear();
                            t.route(r, q, &mut route);
                            assert_eq!(
                                route.len(),
                                1,
                                "tofu {x}x{y}x{z}: virtual {c:?} -> {n:?} takes {} hops",
                                route.len()
                            );
                            let l = &t.links[route[0] as usize];
                            assert_eq!((l.from, l.to), (t.rank_node[r], t.rank_node[q]));
                        }
                    }
                }
            }
        }
    }
    // The example: tofu:4x3x4 is the virtual torus 8x9x8.
    assert_eq!(
        parse_spec("tofu:4x3x4").unwrap().grid_shape().unwrap().dims,
        vec![8, 9, 8]
    );
}

#[test]
fn routes_are_connected_paths_on_every_kind() {
    for t in all_kinds() {
        let mut route = Vec::new();
        for a in 0..t.num_ranks() {
            for b in 0..t.num_ranks() {
                route.clear();
                t.route(a, b, &mut route);
                let mut at = t.rank_node[a];
                for &l in &route {
                    let link = &t.links[l as usize];
                    // A half-duplex link is crossed either way.
                    at = if link.from == at {
                        link.to
                    } else {
                        assert_eq!(link.to, at, "{}: route {a}->{b} is not a path", t.name);
                        link.from
                    };
                }
                assert_eq!(
                    at, t.rank_node[b],
                    "{}: route {a}->{b} ends elsewhere",
                    t.name
                );
            }
        }
    }
}

#[test]
fn hypercube_routes_lowest_bit_first() {
    let t = parse_spec("hypercube:3").unwrap();
    let mut route = Vec::new();
    t.route(0, 7, &mut route);
    let hops: Vec<(u32, u32)> = route
        .iter()
        .map(|&l| (t.links[l as usize].from, t.links[l as usize].to))
        .collect();
    assert_eq!(hops, vec![(0, 1), (1, 3), (3, 7)]);
}

#[test]
fn bad_topologies_are_clear_errors() {
    let cases: &[(&str, &str)] = &[
        ("torus:0x4", "dimension 0 has size 0"),
        ("torus:4xa", "size 'a' is not a whole number"),
        ("ring:4", "unknown family 'ring'"),
        ("torus", "neither a file nor a spec"),
        ("tofu:4x3", "tofu takes X, Y and Z"),
        ("hypercube:x", "not a whole number"),
        ("nonexistent.toml", "cannot read topology file"),
    ];
    for (spec, want) in cases {
        let e = parse_spec(spec).unwrap_err().to_string();
        assert!(e.contains(want), "{spec}: {e}");
    }
    let toml_cases: &[(&str, &str)] = &[
        ("kind = \"torus\"\ndims = [4, 4]\nbandwidth = 0", "bandwidth must be a positive number"),
        ("kind = \"torus\"\ndims = [4, 4]\nbandwidth = -5.0", "bandwidth must be a positive number"),
        ("kind = \"torus\"\ndims = [4, -4]", "dims"),
        ("kind = \"torus\"", "needs field 'dims'"),
        ("kind = \"donut\"", "unknown kind 'donut'"),
        ("kind = \"torus\"\ndims = [4]\ncolour = 1", "colour"),
        (
            "kind = \"tree\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[edge]]\na = \"a\"\nb = \"c\"",
            "unknown node 'c'",
        ),
        (
            "kind = \"tree\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"c\"\n[[edge]]\na = \"a\"\nb = \"b\"",
            "disconnected: node 'c'",
        ),
        (
            "kind = \"tree\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[edge]]\na = \"a\"\nb = \"b\"\n[[edge]]\na = \"b\"\nb = \"a\"",
            "closes a cycle",
        ),
        ("kind = \"tree\"\n[[node]]\nname = \"s\"\nkind = \"switch\"", "no node is a host"),
        ("kind = \"sites\"\nn0 = 0\nn1 = 2\nlan_bandwidth = 1e6\nwan_latency = 0.01\nwan_lane_bandwidth = [1e5]", "each site needs at least one host"),
        ("kind = \"sites\"\nn0 = 2\nn1 = 2\nlan_bandwidth = 1e6\nwan_latency = 0.01\nwan_lane_bandwidth = []", "at least the value for one lane"),
        ("kind = \"grid\"\ndims = [4, 4]\nwrap = [true]", "2 dimensions but 1 wrap flags"),
        ("kind = \"torus\"\ndims = [4, 4]\nlatency = -1.0", "latency must be a non-negative"),
    ];
    for (text, want) in toml_cases {
        let e = parse_toml("t.toml", text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}
