//! SimGrid platform files (XML) as topologies: a platform made of one
//! `<cluster>`, with
//! - `topology="TORUS"` and `topo_parameters="A,B[,C...]"`: a torus whose
//!   routes follow SimGrid's (dimension order, an even ring's tie as
//!   SimGrid breaks it: `TorusTie::SimGrid`); `sharing_policy="SPLITDUPLEX"`,
//!   one link per direction, as topocoll's links are;
//! - no `topology` (SimGrid's flat cluster) and no backbone: hosts on one
//!   router, each by its own full-duplex link (a tree network).
//!
//! Host i of the cluster is rank i (SimGrid numbers torus hosts with
//! dimension 0 fastest, as topocoll does). Other platform elements (fat
//! trees, dragonflies, explicit routes) are refused by name. Bandwidths and
//! latencies take SimGrid's units (`Bps`, `kBps`, `MBps`, `GBps`, `KiBps`,
//! …, `bps`, `Mbps`, `Gbps`; `s`, `ms`, `us`, `ns`).

use super::{EdgeSpec, Graph, Grid, Kind, NodeKind, NodeSpec, Topology, TorusTie};
use crate::error::Result;
use crate::invalid;

/// The attributes of the first `<tag ...>` element in `text`, if any.
fn element<'a>(text: &'a str, tag: &str) -> Option<Vec<(&'a str, &'a str)>> {
    let open = format!("<{tag}");
    let mut from = 0;
    while let Some(i) = text[from..].find(&open) {
        let start = from + i + open.len();
        // `<cluster` but not `<clusters`.
        if text[start..]
            .chars()
            .next()
            .is_some_and(|c| c.is_whitespace() || c == '/' || c == '>')
        {
            let end = start + text[start..].find('>')?;
            return Some(attributes(&text[start..end]));
        }
        from = start;
    }
    None
}

/// `name="value"` pairs (single or double quotes).
fn attributes(mut s: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        let Some(eq) = s.find('=') else {
            return out;
        };
        let name = s[..eq].trim();
        let rest = s[eq + 1..].trim_start();
        let Some(q) = rest.chars().next().filter(|&c| c == '"' || c == '\'') else {
            return out;
        };
        let Some(close) = rest[1..].find(q) else {
            return out;
        };
        out.push((name, &rest[1..1 + close]));
        s = &rest[close + 2..];
    }
}

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
    if element(text, "platform").is_none() {
        return Err(invalid!("{what}: no <platform> element"));
    }
    for other in ["host", "route", "link", "cabinet"] {
        if element(text, other).is_some() {
            return Err(invalid!(
                "{what}: <{other}> elements are not read; topocoll reads a platform of one <cluster> (TORUS, or flat without a backbone)"
            ));
        }
    }
    let attrs = element(text, "cluster").ok_or_else(|| invalid!("{what}: no <cluster> element"))?;
    let get = |k: &str| attrs.iter().find(|a| a.0 == k).map(|a| a.1);
    let need = |k: &str| get(k).ok_or_else(|| invalid!("{what}: <cluster> needs '{k}'"));
    let n = hosts(&what, need("radical")?)?;
    let bw = bandwidth(&format!("{what}: bw"), need("bw")?)?;
    let lat = latency(&format!("{what}: lat"), need("lat")?)?;
    if get("bb_bw").is_some() || get("bb_lat").is_some() {
        return Err(invalid!(
            "{what}: a cluster backbone (bb_bw, bb_lat) is not read"
        ));
    }
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
                    name: format!("host{i}"),
                    kind: NodeKind::Host,
                })
                .collect();
            nodes.push(NodeSpec {
                name: "router".into(),
                kind: NodeKind::Switch,
            });
            let edges: Vec<EdgeSpec> = (0..n)
                .map(|i| EdgeSpec {
                    a: format!("host{i}"),
                    b: "router".into(),
                    bandwidth: Some(bw),
                    latency: Some(lat),
                    ..Default::default()
                })
                .collect();
            Kind::Tree(Graph::new(&nodes, &edges, true, bw, lat)?)
        }
        other => {
            return Err(invalid!(
                "{what}: cluster topology '{other}' is not read (TORUS, or a flat cluster)"
            ))
        }
    };
    let topo = Topology::from_kind(name, kind);
    topo.check_connected()?;
    Ok(topo)
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
        let a = attributes(r#" id="c" bw='1Bps' />"#);
        assert_eq!(a, vec![("id", "c"), ("bw", "1Bps")]);
    }
}
