//! SimGrid platform files (XML) as topologies:
//! - a `<cluster topology="TORUS" topo_parameters="A,B[,C...]">`: a torus
//!   whose routes follow SimGrid's (dimension order, an even ring's tie as
//!   SimGrid breaks it: `TorusTie::SimGrid`); `sharing_policy="SPLITDUPLEX"`,
//!   one link per direction, as topocoll's links are;
//! - a `FAT_TREE` or `DRAGONFLY` cluster: SimGrid's own network and routes
//!   (`fat_tree`, `dragonfly`), a route per pair of hosts;
//! - a flat cluster (no `topology`) without a backbone: hosts on one
//!   router, each by its own full-duplex link (a tree network);
//! - one zone of hosts, routers, links and routes under `routing="Full"`.
//!
//! Host i of the cluster is rank i (SimGrid numbers torus hosts with
//! dimension 0 fastest, as topocoll does). What else a platform may hold is
//! refused by name. Bandwidths and latencies take SimGrid's units (`Bps`,
//! `kBps`, `MBps`, `GBps`, `KiBps`, …, `bps`, `Mbps`, `Gbps`; `s`, `ms`,
//! `us`, `ns`).

use super::{
    EdgeSpec, Graph, Grid, Kind, Link, LinkId, NodeId, NodeKind, NodeSpec, Topology, TorusTie,
};
use std::collections::HashMap;

mod dragonfly;
mod fat_tree;
use crate::error::Result;
use crate::invalid;

/// A number with one of `units` (times, then divided by, per unit), longest
/// unit first; dividing by a power of ten keeps `50us` exactly 50e-6.
fn quantity(what: &str, text: &str, units: &[(&str, f64, f64)]) -> Result<f64> {
    let t = text.trim();
    for (unit, times, over) in units {
        if let Some(number) = t.strip_suffix(unit) {
            if let Ok(v) = number.trim().parse::<f64>() {
                return Ok(v * times / over);
            }
        }
    }
    Err(invalid!(
        "{what} '{text}' is not a number with a unit ({})",
        units.iter().map(|u| u.0).collect::<Vec<_>>().join(", ")
    ))
}

fn bandwidth(what: &str, text: &str) -> Result<f64> {
    const U: &[(&str, f64, f64)] = &[
        ("TiBps", 1099511627776.0, 1.0),
        ("GiBps", 1073741824.0, 1.0),
        ("MiBps", 1048576.0, 1.0),
        ("KiBps", 1024.0, 1.0),
        ("Tibps", 1099511627776.0, 8.0),
        ("Gibps", 1073741824.0, 8.0),
        ("Mibps", 1048576.0, 8.0),
        ("Kibps", 1024.0, 8.0),
        ("TBps", 1e12, 1.0),
        ("GBps", 1e9, 1.0),
        ("MBps", 1e6, 1.0),
        ("kBps", 1e3, 1.0),
        ("KBps", 1e3, 1.0),
        ("Tbps", 1e12, 8.0),
        ("Gbps", 1e9, 8.0),
        ("Mbps", 1e6, 8.0),
        ("kbps", 1e3, 8.0),
        ("Bps", 1.0, 1.0),
        ("bps", 1.0, 8.0),
    ];
    quantity(what, text, U)
}

fn latency(what: &str, text: &str) -> Result<f64> {
    const U: &[(&str, f64, f64)] = &[
        ("ms", 1.0, 1e3),
        ("us", 1.0, 1e6),
        ("ns", 1.0, 1e9),
        ("ps", 1.0, 1e12),
        ("s", 1.0, 1.0),
    ];
    quantity(what, text, U)
}

/// A cluster's links, cable by cable, named as SimGrid names them: the
/// k-th cable made, `NAME`, is `NAME_k_UP` (its a→z link) and `NAME_k_DOWN`
/// (z→a) when links are split per direction, else one link `NAME_k` both
/// directions share.
struct Cables {
    links: Vec<Link>,
    names: Vec<String>,
    made: usize,
    split: bool,
    latency: f64,
}

impl Cables {
    fn new(split: bool, latency: f64) -> Cables {
        Cables {
            links: Vec::new(),
            names: Vec::new(),
            made: 0,
            split,
            latency,
        }
    }

    /// A cable from a to z: its a→z and z→a links (one link when shared).
    fn add(&mut self, a: NodeId, z: NodeId, bandwidth: f64, name: &str) -> (LinkId, LinkId) {
        let name = format!("{name}_{}", self.made);
        self.made += 1;
        let ab = self.links.len() as LinkId;
        let link = |from, to| Link {
            from,
            to,
            bandwidth,
            latency: self.latency,
        };
        self.links.push(link(a, z));
        if self.split {
            self.links.push(link(z, a));
            self.names.push(format!("{name}_UP"));
            self.names.push(format!("{name}_DOWN"));
            (ab, ab + 1)
        } else {
            self.names.push(name);
            (ab, ab)
        }
    }
}

/// The i-th value of `radical` (`0-63`, `0,4-7`), as SimGrid names hosts.
fn radical_value(radical: &str, mut i: usize) -> String {
    for part in radical.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<usize>(), b.trim().parse::<usize>());
                if let (Ok(a), Ok(b)) = (a, b) {
                    if i <= b - a {
                        return (a + i).to_string();
                    }
                    i -= b - a + 1;
                }
            }
            None if i == 0 => return part.to_string(),
            None => i -= 1,
        }
    }
    i.to_string()
}

/// Hosts in `radical`: `0-63`, or a list `0,1,2`, numbered from its first.
fn hosts(name: &str, radical: &str) -> Result<usize> {
    let mut n = 0usize;
    for part in radical.split(',') {
        let part = part.trim();
        let count = match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim()
                        .parse()
                        .map_err(|_| invalid!("{name}: radical '{radical}' is not numbers"))?,
                    b.trim()
                        .parse()
                        .map_err(|_| invalid!("{name}: radical '{radical}' is not numbers"))?,
                );
                if b < a {
                    return Err(invalid!("{name}: radical '{part}' runs backwards"));
                }
                b - a + 1
            }
            None => {
                part.parse::<usize>()
                    .map_err(|_| invalid!("{name}: radical '{radical}' is not numbers"))?;
                1
            }
        };
        n = n.saturating_add(count);
    }
    Ok(n)
}

/// Reads a SimGrid platform (see the module doc).
pub fn parse_platform(name: &str, text: &str) -> Result<Topology> {
    let what = format!("SimGrid platform '{name}'");
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| {
        let said: String = e.to_string().chars().filter(|c| !c.is_control()).collect();
        invalid!("{what}: not a <platform> XML file: {said}")
    })?;
    let root = doc.root_element();
    if root.tag_name().name() != "platform" {
        return Err(invalid!(
            "{what}: the root element is <{}>, not <platform>",
            root.tag_name().name()
        ));
    }
    let clusters: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("cluster"))
        .collect();
    let explicit = root
        .descendants()
        .find(|n| ["host", "link", "route", "router"].contains(&n.tag_name().name()));
    let topo = match (clusters.as_slice(), explicit) {
        ([c], None) => cluster(&what, name, *c)?,
        ([], Some(_)) => explicit_zone(&what, name, root)?,
        ([], None) => {
            return Err(invalid!(
                "{what}: neither a <cluster> nor hosts, links and routes"
            ))
        }
        _ => {
            return Err(invalid!(
                "{what}: topocoll reads one <cluster>, or one zone of hosts, links and routes; this platform has {} clusters{}",
                clusters.len(),
                if explicit.is_some() { " and hosts or links besides" } else { "" }
            ))
        }
    };
    topo.check_connected()?;
    Ok(topo)
}

/// One `<cluster>`: a TORUS, a FAT_TREE, a DRAGONFLY or a flat cluster.
fn cluster(what: &str, name: &str, c: roxmltree::Node) -> Result<Topology> {
    let get = |k: &str| c.attribute(k);
    let need = |k: &str| get(k).ok_or_else(|| invalid!("{what}: <cluster> needs '{k}'"));
    let n = hosts(what, need("radical")?)?;
    let bw = bandwidth(&format!("{what}: bw"), need("bw")?)?;
    let lat = latency(&format!("{what}: lat"), need("lat")?)?;
    if get("bb_bw").is_some() || get("bb_lat").is_some() {
        return Err(invalid!(
            "{what}: a cluster backbone (bb_bw, bb_lat) is not read"
        ));
    }
    let radical = need("radical")?;
    let host_name = |i: usize| {
        format!(
            "{}{}{}",
            get("prefix").unwrap_or(""),
            radical_value(radical, i),
            get("suffix").unwrap_or("")
        )
    };
    if get("limiter_link").is_some_and(|l| l.trim() != "0" && !l.trim().is_empty()) {
        return Err(invalid!(
            "{what}: limiter_link is not read (topocoll has no per-node limiter links)"
        ));
    }
    // Fat trees and dragonflies split their links unless told to share them
    // (SimGrid makes even FATPIPE links shared there).
    let split = |what: &str| -> Result<bool> {
        match get("sharing_policy").unwrap_or("SPLITDUPLEX") {
            "SPLITDUPLEX" | "FULLDUPLEX" => Ok(true),
            "SHARED" | "FATPIPE" => Ok(false),
            other => Err(invalid!("{what}: sharing_policy '{other}' is not read")),
        }
    };
    let kind = match get("topology").unwrap_or("FLAT") {
        "TORUS" => {
            if get("sharing_policy") != Some("SPLITDUPLEX") {
                return Err(invalid!(
                    "{what}: a TORUS cluster needs sharing_policy=\"SPLITDUPLEX\" (one link per direction, as topocoll's links)"
                ));
            }
            let dims: Vec<usize> = need("topo_parameters")?
                .split(',')
                .map(|d| d.trim().parse::<usize>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| invalid!("{what}: topo_parameters are not whole numbers"))?;
            let size: usize = dims
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .unwrap_or(0);
            if size != n {
                return Err(invalid!(
                    "{what}: topo_parameters make {size} hosts, the radical {n}"
                ));
            }
            if let Some(d) = dims.iter().find(|&&d| d < 3) {
                return Err(invalid!(
                    "{what}: a torus dimension of {d}: SimGrid joins a ring of 2 by one link each way, topocoll by two; give dimensions of 3 or more"
                ));
            }
            let wrap = vec![true; dims.len()];
            let mut g = Grid::new(dims, wrap, bw, lat)?;
            g.tie = TorusTie::SimGrid;
            Kind::Grid(g)
        }
        "FLAT" => {
            let mut nodes: Vec<NodeSpec> = (0..n)
                .map(|i| NodeSpec {
                    name: host_name(i),
                    kind: NodeKind::Host,
                })
                .collect();
            nodes.push(NodeSpec {
                name: "router".into(),
                kind: NodeKind::Switch,
            });
            let edges: Vec<EdgeSpec> = (0..n)
                .map(|i| EdgeSpec {
                    a: host_name(i),
                    b: "router".into(),
                    bandwidth: Some(bw),
                    latency: Some(lat),
                    ..Default::default()
                })
                .collect();
            Kind::Tree(Graph::new(&nodes, &edges, true, bw, lat)?)
        }
        "FAT_TREE" => Kind::Graph(fat_tree::build(
            what,
            need("topo_parameters")?,
            &host_name,
            n,
            bw,
            lat,
            split(what)?,
        )?),
        "DRAGONFLY" => Kind::Graph(dragonfly::build(
            what,
            need("topo_parameters")?,
            &host_name,
            n,
            bw,
            lat,
            split(what)?,
        )?),
        other => {
            return Err(invalid!(
                "{what}: cluster topology '{other}' is not read (TORUS, FAT_TREE, DRAGONFLY, or a flat cluster)"
            ))
        }
    };
    Ok(Topology::from_kind(name, kind))
}

/// One zone of `<host>`s, `<router>`s, `<link>`s and `<route>`s under
/// `routing="Full"` (a route for every pair of hosts).
fn explicit_zone(what: &str, name: &str, root: roxmltree::Node) -> Result<Topology> {
    let zone = the_zone(what, root)?;
    let Declared {
        nodes,
        node_of,
        mut links,
        link_names,
        link_of,
        routes,
    } = declarations(what, zone)?;
    let table = route_table(what, &routes, &nodes, &node_of, &link_of)?;
    // A link's ends, for reports and connectivity: those of the first route
    // that crosses it.
    let mut placed = vec![false; links.len()];
    let mut pairs: Vec<_> = table.iter().collect();
    pairs.sort_by_key(|(k, _)| **k);
    for ((a, b), list) in pairs {
        for &l in list {
            if !placed[l as usize] {
                placed[l as usize] = true;
                links[l as usize].from = *a;
                links[l as usize].to = *b;
            }
        }
    }
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let g = Graph::with_routes(&nodes, links, link_names, |a, b| {
        table.get(&(a, b)).cloned().ok_or_else(|| {
            invalid!(
                "{what}: no route from '{}' to '{}' (a Full zone needs one for every pair of hosts)",
                names[a as usize],
                names[b as usize]
            )
        })
    })
    .map_err(|e| invalid!("{what}: {e}"))?;
    Ok(Topology::from_kind(name, Kind::Graph(g)))
}

/// The platform's one zone (or its root, with none), routed `Full`.
fn the_zone<'a, 'input>(
    what: &str,
    root: roxmltree::Node<'a, 'input>,
) -> Result<roxmltree::Node<'a, 'input>> {
    let zones: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("zone") || n.has_tag_name("AS"))
        .collect();
    let zone = match zones.as_slice() {
        [z] => *z,
        [] => root,
        _ => {
            return Err(invalid!(
                "{what}: {} zones: topocoll reads a platform of one zone",
                zones.len()
            ))
        }
    };
    let routing = zone.attribute("routing").unwrap_or("Full");
    if routing != "Full" {
        return Err(invalid!(
            "{what}: zone routing '{routing}' is not read (Full: a <route> for every pair of hosts)"
        ));
    }
    Ok(zone)
}

/// What a zone declares: its hosts and routers, its links (a SPLITDUPLEX
/// one as two), each by name, and its routes, read once all are declared.
struct Declared<'a, 'input> {
    nodes: Vec<NodeSpec>,
    node_of: HashMap<String, NodeId>,
    links: Vec<Link>,
    link_names: Vec<String>,
    /// A link's id: its one link (shared), or its UP and DOWN links.
    link_of: HashMap<String, (LinkId, Option<LinkId>)>,
    routes: Vec<roxmltree::Node<'a, 'input>>,
}

/// Reads a zone's `<host>`s, `<router>`s and `<link>`s, and gathers its
/// `<route>`s.
fn declarations<'a, 'input>(
    what: &str,
    zone: roxmltree::Node<'a, 'input>,
) -> Result<Declared<'a, 'input>> {
    let mut nodes: Vec<NodeSpec> = Vec::new();
    let mut node_of: HashMap<String, NodeId> = HashMap::new();
    let mut links: Vec<Link> = Vec::new();
    let mut link_names: Vec<String> = Vec::new();
    let mut link_of: HashMap<String, (LinkId, Option<LinkId>)> = HashMap::new();
    let mut routes: Vec<roxmltree::Node> = Vec::new();
    for e in zone.children().filter(|n| n.is_element()) {
        let line = e.document().text_pos_at(e.range().start).row;
        let at = || format!("{what}: line {line}");
        let id = || {
            e.attribute("id")
                .ok_or_else(|| invalid!("{}: <{}> needs 'id'", at(), e.tag_name().name()))
        };
        match e.tag_name().name() {
            tag @ ("host" | "router") => {
                let id = id()?;
                let kind = if tag == "host" {
                    NodeKind::Host
                } else {
                    NodeKind::Switch
                };
                if node_of
                    .insert(id.to_string(), nodes.len() as NodeId)
                    .is_some()
                {
                    return Err(invalid!("{}: '{id}' is declared twice", at()));
                }
                nodes.push(NodeSpec {
                    name: id.to_string(),
                    kind,
                });
            }
            "link" => {
                let id = id()?;
                let bw = bandwidth(
                    &format!("{}: link '{id}' bandwidth", at()),
                    e.attribute("bandwidth")
                        .ok_or_else(|| invalid!("{}: link '{id}' needs 'bandwidth'", at()))?,
                )?;
                let lat = match e.attribute("latency") {
                    Some(t) => latency(&format!("{}: link '{id}' latency", at()), t)?,
                    None => 0.0,
                };
                crate::topology::check_bandwidth(&format!("link '{id}'"), bw)?;
                let link = Link {
                    from: 0,
                    to: 0,
                    bandwidth: bw,
                    latency: lat,
                };
                let first = links.len() as LinkId;
                let entry = match e.attribute("sharing_policy").unwrap_or("SHARED") {
                    "SHARED" => {
                        links.push(link);
                        link_names.push(id.to_string());
                        (first, None)
                    }
                    "SPLITDUPLEX" => {
                        links.extend([link.clone(), link]);
                        link_names.extend([format!("{id}_UP"), format!("{id}_DOWN")]);
                        (first, Some(first + 1))
                    }
                    other => {
                        return Err(invalid!(
                            "{}: link '{id}' sharing_policy '{other}' is not read (SHARED or SPLITDUPLEX)",
                            at()
                        ))
                    }
                };
                if link_of.insert(id.to_string(), entry).is_some() {
                    return Err(invalid!("{}: link '{id}' is declared twice", at()));
                }
            }
            "route" => routes.push(e),
            "prop" => {}
            other => {
                return Err(invalid!(
                    "{}: <{other}> is not read (a zone of host, router, link and route)",
                    at()
                ))
            }
        }
    }
    Ok(Declared {
        nodes,
        node_of,
        links,
        link_names,
        link_of,
        routes,
    })
}

/// Every route, and the reverse of each symmetrical one, by (source,
/// destination).
fn route_table(
    what: &str,
    routes: &[roxmltree::Node],
    nodes: &[NodeSpec],
    node_of: &HashMap<String, NodeId>,
    link_of: &HashMap<String, (LinkId, Option<LinkId>)>,
) -> Result<HashMap<(NodeId, NodeId), Vec<LinkId>>> {
    let mut table: HashMap<(NodeId, NodeId), Vec<LinkId>> = HashMap::new();
    for &r in routes {
        let line = r.document().text_pos_at(r.range().start).row;
        let at = format!("{what}: line {line}");
        let end = |k: &str| -> Result<NodeId> {
            let id = r
                .attribute(k)
                .ok_or_else(|| invalid!("{at}: <route> needs '{k}'"))?;
            node_of
                .get(id)
                .copied()
                .ok_or_else(|| invalid!("{at}: route {k} '{id}' is not a host or router"))
        };
        let (a, b) = (end("src")?, end("dst")?);
        let (forward, backward) = route_links(&at, r, link_of)?;
        let symmetrical = match r.attribute("symmetrical").unwrap_or("YES") {
            "YES" | "yes" => true,
            "NO" | "no" => false,
            other => return Err(invalid!("{at}: symmetrical '{other}' is not YES or NO")),
        };
        let mut add = |x: NodeId, y: NodeId, list: Vec<LinkId>| -> Result<()> {
            if table.insert((x, y), list).is_some() {
                return Err(invalid!(
                    "{at}: a second route from '{}' to '{}'",
                    nodes[x as usize].name,
                    nodes[y as usize].name
                ));
            }
            Ok(())
        };
        add(a, b, forward)?;
        if symmetrical && a != b {
            add(b, a, backward)?;
        }
    }
    Ok(table)
}

/// A route's links forward, and backward (for its reverse), from its
/// `<link_ctn>`s.
fn route_links(
    at: &str,
    r: roxmltree::Node,
    link_of: &HashMap<String, (LinkId, Option<LinkId>)>,
) -> Result<(Vec<LinkId>, Vec<LinkId>)> {
    let mut forward = Vec::new();
    let mut backward = Vec::new();
    for l in r.children().filter(|n| n.is_element()) {
        if !l.has_tag_name("link_ctn") {
            return Err(invalid!(
                "{at}: <{}> in a route, where only <link_ctn> goes",
                l.tag_name().name()
            ));
        }
        let id = l
            .attribute("id")
            .ok_or_else(|| invalid!("{at}: <link_ctn> needs 'id'"))?;
        let &(one, down) = link_of
            .get(id)
            .ok_or_else(|| invalid!("{at}: route names link '{id}', which is not declared"))?;
        let (fw, bw) = match (down, l.attribute("direction").unwrap_or("NONE")) {
            (None, "NONE") => (one, one),
            (Some(down), "UP") => (one, down),
            (Some(down), "DOWN") => (down, one),
            (None, d) => {
                return Err(invalid!(
                    "{at}: link '{id}' is shared: direction '{d}' names no half of it"
                ))
            }
            (Some(_), d) => {
                return Err(invalid!(
                    "{at}: link '{id}' is SPLITDUPLEX: give direction=\"UP\" or \"DOWN\", not '{d}'"
                ))
            }
        };
        forward.push(fw);
        backward.push(bw);
    }
    backward.reverse();
    Ok((forward, backward))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_attributes() {
        assert_eq!(bandwidth("bw", "1e9Bps").unwrap(), 1e9);
        assert_eq!(bandwidth("bw", "10Gbps").unwrap(), 1.25e9);
        assert_eq!(bandwidth("bw", "1KiBps").unwrap(), 1024.0);
        assert_eq!(latency("lat", "50us").unwrap(), 50e-6);
        assert_eq!(latency("lat", "1e-06s").unwrap(), 1e-6);
        assert!(latency("lat", "5 parsecs").is_err());
        assert_eq!(hosts("h", "0-63").unwrap(), 64);
        assert_eq!(hosts("h", "0-3,7,9-10").unwrap(), 7);
    }
}

/// Routes against SimGrid's own (its `flatifier` test's routes for these
/// platforms, limiters aside).
#[cfg(test)]
mod routes {
    use super::parse_platform;

    fn names(xml: &str, a: usize, b: usize) -> Vec<String> {
        let t = parse_platform("t", xml).unwrap();
        let mut out = Vec::new();
        t.route(a, b, &mut out);
        out.iter().map(|&l| t.link_name(l)).collect()
    }

    #[test]
    fn a_fat_tree_routes_as_simgrid() {
        let xml = r#"<platform version="4.1"><cluster id="bob" prefix="bob" suffix=".x" radical="100-101,119-120"
            speed="1Gf" bw="125MBps" lat="50us" topology="FAT_TREE" topo_parameters="2;2,2;1,2;1,2"/></platform>"#;
        let t = parse_platform("t", xml).unwrap();
        assert_eq!(t.node_name(t.rank_node[2]), "bob119.x");
        let want = [
            (
                0,
                2,
                "link_from_0_7_0_UP link_from_7_5_5_UP link_from_6_5_8_DOWN link_from_2_6_2_DOWN",
            ),
            (
                1,
                2,
                "link_from_1_7_1_UP link_from_7_5_5_UP link_from_6_5_9_DOWN link_from_2_6_2_DOWN",
            ),
            (
                3,
                0,
                "link_from_3_6_3_UP link_from_6_5_8_UP link_from_7_5_5_DOWN link_from_0_7_0_DOWN",
            ),
            (0, 1, "link_from_0_7_0_UP link_from_1_7_1_DOWN"),
        ];
        for (a, b, route) in want {
            assert_eq!(names(xml, a, b).join(" "), route, "{a} -> {b}");
        }
    }

    #[test]
    fn a_dragonfly_routes_as_simgrid() {
        let xml = r#"<platform version="4.1"><cluster id="bob" prefix="bob" suffix=".x" radical="0,1002-1004"
            speed="1Gf" bw="125MBps" lat="50us" topology="DRAGONFLY" topo_parameters="1,4;2,3;2,1;1"/></platform>"#;
        let t = parse_platform("t", xml).unwrap();
        let got = names(xml, 3, 2);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(
            got[0].starts_with("local_link_from_router_3_to_node_0_") && got[0].ends_with("_UP")
        );
        assert!(
            got[1].starts_with("green_link_in_chassis_1_between_routers_0_and_1_")
                && got[1].ends_with("_DOWN")
        );
        assert!(
            got[2].starts_with("black_link_in_group_0_between_chassis_0_and_1_blade_0_")
                && got[2].ends_with("_UP")
        );
        assert!(
            got[3].starts_with("local_link_from_router_2_to_node_0_") && got[3].ends_with("_DOWN")
        );
        // SimGrid's route from chassis 1 to chassis 0 takes no black link.
        let got = names(xml, 3, 0);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[2].starts_with("local_link_from_router_0_to_node_0_"));
        // Black links carry three cables' bandwidth.
        let mut out = Vec::new();
        t.route(3, 2, &mut out);
        assert_eq!(t.links[out[2] as usize].bandwidth, 375e6);
    }
}
