//! Topologies from short spec strings (`torus:32x32`, `mesh:8x8`,
//! `hypercube:4`, `tofu:4x3x4`, the fabrics `fattree:16`,
//! `dragonfly:8,4,4,33`, `railfat:64,8`, `hyperx:8x8`) or from TOML
//! files (see `examples/`).

use super::{
    DragonNet, EdgeSpec, Graph, Grid, Hypercube, Kind, NodeSpec, Sites, Tofu, Topology, TorusTie,
    Wan, DEFAULT_BANDWIDTH, DEFAULT_LATENCY,
};
use crate::error::fail;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

/// The families a spec string names (`torus:8x8`), in the order refusals
/// list them. A new one is an entry here and an arm in [`parse_spec`].
pub const SPEC_FAMILIES: &[&str] = &[
    "torus",
    "mesh",
    "hypercube",
    "tofu",
    "dragonnet",
    "fattree",
    "dragonfly",
    "railfat",
    "hyperx",
];

/// The kinds a topology file declares (`kind = "tree"`), in the order
/// refusals list them. A new one is an entry here, its fields in
/// `check_fields` and an arm in `network`.
pub const FILE_KINDS: &[&str] = &[
    "torus",
    "mesh",
    "grid",
    "hypercube",
    "tofu",
    "tree",
    "graph",
    "sites",
    "cluster",
];

/// Parses a spec string, or reads a TOML file when the spec names one.
pub fn parse_spec(spec: &str) -> Result<Topology> {
    let spec = spec.trim();
    if spec.ends_with(".xml") {
        let text = read_limited(spec)?;
        if super::nccl::is_nccl_xml(&text) {
            return super::nccl::parse_server_topology(spec, &text);
        }
        return super::parse_platform(spec, &text);
    }
    if spec.ends_with(".toml") || Path::new(spec).is_file() {
        return parse_toml(spec, &read_limited(spec)?);
    }
    let (family, shape) = spec.split_once(':').ok_or_else(|| {
        fail!(Topology, Spec, "topology '{spec}' is neither a file nor a spec like torus:8x8, mesh:4x4, hypercube:4, tofu:2x3x2")
    })?;
    let dims = || parse_dims(spec, shape);
    let kind = match family {
        "torus" => {
            let d = dims()?;
            let n = d.len();
            Kind::Grid(Grid::new(
                d,
                vec![true; n],
                DEFAULT_BANDWIDTH,
                DEFAULT_LATENCY,
            )?)
        }
        "mesh" => {
            let d = dims()?;
            let n = d.len();
            Kind::Grid(Grid::new(
                d,
                vec![false; n],
                DEFAULT_BANDWIDTH,
                DEFAULT_LATENCY,
            )?)
        }
        "hypercube" => {
            let n: usize = shape.trim().parse().map_err(|_| {
                fail!(
                    Topology,
                    Spec,
                    "topology '{spec}': hypercube dimension '{shape}' is not a whole number"
                )
            })?;
            Kind::Hypercube(Hypercube::new(n, DEFAULT_BANDWIDTH, DEFAULT_LATENCY)?)
        }
        "tofu" => {
            let d = dims()?;
            if d.len() != 3 {
                return Err(fail!(
                    Topology,
                    Spec,
                    "topology '{spec}': tofu takes X, Y and Z, like tofu:4x3x4"
                ));
            }
            Kind::Tofu(Tofu::new(
                [d[0], d[1], d[2]],
                DEFAULT_BANDWIDTH,
                DEFAULT_LATENCY,
            )?)
        }
        "dragonnet" => {
            let n: usize = shape.trim().parse().map_err(|_| {
                fail!(
                    Topology,
                    Spec,
                    "topology '{spec}': dragonnet node count '{shape}' is not a whole number"
                )
            })?;
            Kind::DragonNet(DragonNet::new(n, DEFAULT_BANDWIDTH, DEFAULT_LATENCY)?)
        }
        "fattree" => Kind::Graph(super::fabric::fattree(spec, shape)?),
        "dragonfly" => Kind::Graph(super::fabric::dragonfly(spec, shape)?),
        "railfat" => Kind::Graph(super::fabric::railfat(spec, shape)?),
        "hyperx" => Kind::Graph(super::fabric::hyperx(spec, shape)?),
        other => {
            return Err(fail!(
                Topology,
                Spec,
                "topology '{spec}': unknown family '{other}'{} ({}, or a .toml file)",
                topocoll_base::error::did_you_mean(other, SPEC_FAMILIES.iter().copied()),
                SPEC_FAMILIES.join(", ")
            ))
        }
    };
    Ok(Topology::from_kind(spec, kind))
}

/// A topology file's text, read no further than 64 MiB (a path to
/// /dev/zero, say).
fn read_limited(spec: &str) -> Result<String> {
    // A topology file of the largest supported graph is a few MB; read
    // no more than 64 MiB of anything (a path to /dev/zero, say).
    const MAX_TOML_BYTES: u64 = 64 << 20;
    let cannot = |e: std::io::Error| Error::io(format!("cannot read topology file '{spec}'"), e);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(
            std::fs::File::open(spec).map_err(cannot)?,
            MAX_TOML_BYTES + 1,
        ),
        &mut text,
    )
    .map_err(cannot)?;
    if text.len() as u64 > MAX_TOML_BYTES {
        return Err(fail!(
            Topology,
            File,
            "topology file '{spec}' is larger than {} MiB",
            MAX_TOML_BYTES >> 20
        ));
    }
    Ok(text)
}

fn parse_dims(spec: &str, shape: &str) -> Result<Vec<usize>> {
    let dims: Vec<usize> = shape
        .split('x')
        .map(|d| {
            let d = d.trim();
            d.parse::<usize>().map_err(|_| {
                if !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit()) {
                    fail!(Topology, Spec, "topology '{spec}': size '{d}' is too large")
                } else {
                    fail!(
                        Topology,
                        Spec,
                        "topology '{spec}': size '{d}' is not a whole number"
                    )
                }
            })
        })
        .collect::<Result<_>>()?;
    if let Some(i) = dims.iter().position(|&d| d == 0) {
        return Err(fail!(
            Topology,
            Spec,
            "topology '{spec}': dimension {i} has size 0"
        ));
    }
    Ok(dims)
}

/// The TOML topology file. `kind` picks which of the other fields apply.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    pub kind: String,
    /// mesh / torus / grid / tofu: sizes per dimension.
    pub dims: Option<Vec<usize>>,
    /// grid: which dimensions wrap.
    pub wrap: Option<Vec<bool>>,
    /// hypercube: dimension n.
    pub dim: Option<usize>,
    /// Link bandwidth in bytes/s (every link; trees/graphs: the default for edges).
    pub bandwidth: Option<f64>,
    /// Link latency in seconds.
    pub latency: Option<f64>,
    /// "plus" (default) or "simgrid".
    pub torus_tie: Option<String>,
    #[serde(default)]
    pub node: Vec<NodeSpec>,
    #[serde(default)]
    pub edge: Vec<EdgeSpec>,
    pub n0: Option<usize>,
    pub n1: Option<usize>,
    pub lan_bandwidth: Option<f64>,
    pub lan_latency: Option<f64>,
    pub wan_latency: Option<f64>,
    /// b(P) for P = 1, 2, ... lanes, bytes/s per lane.
    pub wan_lane_bandwidth: Option<Vec<f64>>,
    /// Hosts per site, for two or more sites (instead of n0 and n1).
    pub sites: Option<Vec<usize>>,
    /// WAN capacity, bytes/s (all streams of a WAN link together).
    pub wan_bandwidth: Option<f64>,
    /// TCP window of a WAN stream, bytes (with wan_bandwidth, instead of
    /// wan_lane_bandwidth).
    pub wan_window: Option<f64>,
}

/// Parses the text of a TOML topology file; `name` is used in messages.
pub fn parse_toml(name: &str, text: &str) -> Result<Topology> {
    if super::nccl::is_cluster(text) {
        return super::nccl::parse_cluster(name, text);
    }
    let f = read_file(name, text)?;
    check_fields(name, &f)?;
    let kind = network(name, &f)?;
    let mut topo = Topology::from_kind(name, kind);
    if let Some(tie) = &f.torus_tie {
        let tie = match tie.as_str() {
            "plus" => TorusTie::Plus,
            "simgrid" => TorusTie::SimGrid,
            other => {
                return Err(fail!(
                    Topology,
                    File,
                    "topology file '{name}': torus_tie '{other}' is not plus or simgrid"
                ))
            }
        };
        if !topo.has_torus_ties() {
            return Err(fail!(
                Topology,
                File,
                "topology file '{name}': torus_tie applies to a grid with a wrapping dimension"
            ));
        }
        topo.set_torus_tie(tie);
    }
    topo.check_connected()?;
    Ok(topo)
}

/// The file's fields, refused as one line where it is not TOML or a field
/// is unknown.
fn read_file(name: &str, text: &str) -> Result<TopologyFile> {
    toml::from_str(text).map_err(|e| {
        // "line L, column C: what", in one line (toml's own message draws
        // the line over several).
        let at = e.span().map(|span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before.len() - start + 1;
            let source: String = text[start..]
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .chars()
                .take(60)
                .collect();
            format!("line {line}, column {column} (`{source}`): ")
        });
        fail!(
            Topology,
            File,
            "topology file '{name}': {}{}",
            at.unwrap_or_default(),
            e.message().trim().replace('\n', " ")
        )
    })
}

/// Refuses a field of another kind than the file's.
fn check_fields(name: &str, f: &TopologyFile) -> Result<()> {
    // A field of another kind is a mistake (a torus given `n0`, a hypercube
    // given `dims`), not something to ignore.
    let set = [
        ("dims", f.dims.is_some()),
        ("wrap", f.wrap.is_some()),
        ("dim", f.dim.is_some()),
        ("bandwidth", f.bandwidth.is_some()),
        ("latency", f.latency.is_some()),
        ("torus_tie", f.torus_tie.is_some()),
        ("node", !f.node.is_empty()),
        ("edge", !f.edge.is_empty()),
        ("n0", f.n0.is_some()),
        ("n1", f.n1.is_some()),
        ("lan_bandwidth", f.lan_bandwidth.is_some()),
        ("lan_latency", f.lan_latency.is_some()),
        ("wan_latency", f.wan_latency.is_some()),
        ("wan_lane_bandwidth", f.wan_lane_bandwidth.is_some()),
        ("sites", f.sites.is_some()),
        ("wan_bandwidth", f.wan_bandwidth.is_some()),
        ("wan_window", f.wan_window.is_some()),
    ];
    let links = ["bandwidth", "latency"];
    let applies: Vec<&str> = match f.kind.as_str() {
        "torus" => [&["dims", "torus_tie"][..], &links].concat(),
        "grid" => [&["dims", "wrap", "torus_tie"][..], &links].concat(),
        "mesh" => [&["dims"][..], &links].concat(),
        "tofu" => [&["dims", "torus_tie"][..], &links].concat(),
        "hypercube" => [&["dim"][..], &links].concat(),
        "tree" | "graph" => [&["node", "edge"][..], &links].concat(),
        "sites" => vec![
            "n0",
            "n1",
            "lan_bandwidth",
            "lan_latency",
            "wan_latency",
            "wan_lane_bandwidth",
            "sites",
            "wan_bandwidth",
            "wan_window",
        ],
        _ => set.iter().map(|(n, _)| *n).collect(), // the unknown kind is reported below
    };
    if let Some((field, _)) = set.iter().find(|(n, on)| *on && !applies.contains(n)) {
        return Err(fail!(
            Topology,
            File,
            "topology file '{name}': field '{field}' does not apply to kind '{}' (it takes {})",
            f.kind,
            applies.join(", ")
        ));
    }
    Ok(())
}

/// The network the file's kind and fields describe.
fn network(name: &str, f: &TopologyFile) -> Result<Kind> {
    let bw = f.bandwidth.unwrap_or(DEFAULT_BANDWIDTH);
    let lat = f.latency.unwrap_or(DEFAULT_LATENCY);
    let need = |field: &str| {
        fail!(
            Topology,
            File,
            "topology file '{name}': kind '{}' needs field '{field}'",
            f.kind
        )
    };
    let dims = || f.dims.clone().ok_or_else(|| need("dims"));
    let err = |e: Error| e.within(format_args!("topology file '{name}'"));
    Ok(match f.kind.as_str() {
        "torus" | "mesh" => {
            let d = dims()?;
            let n = d.len();
            Kind::Grid(Grid::new(d, vec![f.kind == "torus"; n], bw, lat).map_err(err)?)
        }
        "grid" => Kind::Grid(
            Grid::new(
                dims()?,
                f.wrap.clone().ok_or_else(|| need("wrap"))?,
                bw,
                lat,
            )
            .map_err(err)?,
        ),
        "hypercube" => Kind::Hypercube(
            Hypercube::new(f.dim.ok_or_else(|| need("dim"))?, bw, lat).map_err(err)?,
        ),
        "tofu" => {
            let d = dims()?;
            if d.len() != 3 {
                return Err(fail!(
                    Topology,
                    File,
                    "topology file '{name}': tofu dims are [X, Y, Z]"
                ));
            }
            Kind::Tofu(Tofu::new([d[0], d[1], d[2]], bw, lat).map_err(err)?)
        }
        "tree" => Kind::Tree(Graph::tree(&f.node, &f.edge, bw, lat).map_err(err)?),
        "graph" => Kind::Graph(Graph::network(&f.node, &f.edge, bw, lat).map_err(err)?),
        "sites" => {
            let sizes = match (&f.sites, f.n0, f.n1) {
                (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                    return Err(fail!(Topology, File,
                        "topology file '{name}': give the sites' sizes either as sites = [..] or as n0 and n1, not both"
                    ))
                }
                (Some(s), None, None) => s.clone(),
                (None, n0, n1) => vec![n0.ok_or_else(|| need("n0"))?, n1.ok_or_else(|| need("n1"))?],
            };
            let wan = match (&f.wan_lane_bandwidth, f.wan_window, f.wan_bandwidth) {
                (Some(_), Some(_), _) => {
                    return Err(fail!(Topology, File,
                        "topology file '{name}': give the WAN either as wan_lane_bandwidth or as wan_window with wan_bandwidth, not both"
                    ))
                }
                (Some(table), None, capacity) => Wan::Lanes {
                    lane_bandwidth: table.clone(),
                    capacity,
                },
                (None, Some(window), Some(capacity)) => Wan::Window { capacity, window },
                (None, Some(_), None) => return Err(need("wan_bandwidth")),
                (None, None, _) => return Err(need("wan_lane_bandwidth")),
            };
            Kind::Sites(
                Sites::new(
                    sizes,
                    f.lan_bandwidth.ok_or_else(|| need("lan_bandwidth"))?,
                    f.lan_latency.unwrap_or(0.0),
                    f.wan_latency.ok_or_else(|| need("wan_latency"))?,
                    wan,
                )
                .map_err(err)?,
            )
        }
        other => {
            return Err(fail!(
                Topology,
                File,
                "topology file '{name}': unknown kind '{other}'{} ({})",
                topocoll_base::error::did_you_mean(other, FILE_KINDS.iter().copied()),
                FILE_KINDS.join(", ")
            ))
        }
    })
}
