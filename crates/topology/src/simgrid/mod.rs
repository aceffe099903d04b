//! SimGrid platform files (XML) as topologies, read and routed as SimGrid
//! 3.32 reads and routes them:
//! - nested zones (`zones`) routed `Full`, `Floyd`, `Dijkstra`,
//!   `DijkstraCache`, `None` or `Cluster`, with hosts, routers, links
//!   (`SHARED`, `SPLITDUPLEX`, `FATPIPE`), routes, zone routes through
//!   gateways and bypass routes; flat clusters with their backbone and
//!   limiter links, hosts and clusters side by side. Routes are SimGrid's
//!   (`routing`), worked out for a pair when the simulator asks;
//! - a platform whose network is one `<cluster topology="TORUS">` (one
//!   link per direction, SimGrid's dimension order and tie:
//!   `TorusTie::SimGrid`), `FAT_TREE` or `DRAGONFLY` (SimGrid's own
//!   network and routes, `fat_tree`, `dragonfly`, with limiter links).
//!
//! Hosts are ranks in the order the file declares them (a cluster's in its
//! radical's order; SimGrid numbers torus hosts with dimension 0 fastest,
//! as topocoll does). Every bandwidth and latency, whatever the element,
//! takes SimGrid's units (`Bps`, `kBps`, `MBps`, `KiBps`, …, `bps`,
//! `Mbps`, …; `s`, `ms`, `us`, `ns`, `ps`, `m`, `h`, `d`, `w`; a number
//! without a unit is in `Bps` or `s`, as SimGrid reads it) and goes through
//! one range check (`attr_bandwidth`, `attr_latency`). Bandwidth, latency,
//! speed and state profiles are read onto the links and hosts
//! (`with_profiles`, `crate::profile`). What topocoll does not read is
//! refused in one line naming the element: the Wifi, ns-3 and Vivaldi
//! models, `<include>` (gone from SimGrid since 3.22), and
//! a TORUS, FAT_TREE or DRAGONFLY cluster beside other zones.

use super::{Grid, Kind, Topology, TorusTie};
use std::sync::Arc;

mod dragonfly;
pub(crate) mod fat_tree;
mod routing;
mod zones;
use crate::error::fail;
use crate::error::{Error, Result};

/// Where the reader is: the platform and the element's line, for errors.
#[derive(Clone)]
struct Ctx {
    what: String,
    line: u32,
    tag: String,
}

impl Ctx {
    fn at(&self, e: roxmltree::Node) -> Ctx {
        Ctx {
            what: self.what.clone(),
            line: e.document().text_pos_at(e.range().start).row,
            tag: e.tag_name().name().to_string(),
        }
    }

    /// One line: the platform, the line, the element, the problem.
    fn err(&self, msg: String) -> Error {
        // One line, of a sensible length (a message quotes the file).
        let mut msg: String = msg.chars().filter(|c| !c.is_control()).take(400).collect();
        if msg.len() >= 400 {
            msg.push_str("...");
        }
        fail!(
            Topology,
            File,
            "{}: line {}: <{}>: {}",
            self.what,
            self.line,
            self.tag,
            msg
        )
    }

    fn need<'a>(&self, e: roxmltree::Node<'a, '_>, k: &str) -> Result<&'a str> {
        e.attribute(k)
            .ok_or_else(|| self.err(format!("needs '{k}'")))
    }
}

/// A number with one of `units` (times, then divided by, per unit), longest
/// unit first; dividing by a power of ten keeps `50us` exactly 50e-6. A
/// number alone is in the first unit of `bare` (SimGrid's default unit).
fn quantity(text: &str, units: &[(&str, f64, f64)], bare: (f64, f64)) -> Option<f64> {
    let t = text.trim();
    if let Ok(v) = t.parse::<f64>() {
        return Some(v * bare.0 / bare.1);
    }
    for (unit, times, over) in units {
        if let Some(number) = t.strip_suffix(unit) {
            if let Ok(v) = number.trim().parse::<f64>() {
                return Some(v * times / over);
            }
        }
    }
    None
}

const BANDWIDTH_UNITS: &[(&str, f64, f64)] = &[
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

const TIME_UNITS: &[(&str, f64, f64)] = &[
    ("ms", 1.0, 1e3),
    ("us", 1.0, 1e6),
    ("ns", 1.0, 1e9),
    ("ps", 1.0, 1e12),
    ("s", 1.0, 1.0),
    ("m", 60.0, 1.0),
    ("h", 3600.0, 1.0),
    ("d", 86400.0, 1.0),
    ("w", 604800.0, 1.0),
];

fn bandwidth(text: &str) -> Option<f64> {
    quantity(text, BANDWIDTH_UNITS, (1.0, 1.0))
}

fn latency(text: &str) -> Option<f64> {
    quantity(text, TIME_UNITS, (1.0, 1.0))
}

const SPEED_UNITS: &[(&str, f64, f64)] = &[
    ("Yf", 1e24, 1.0),
    ("Zf", 1e21, 1.0),
    ("Ef", 1e18, 1.0),
    ("Pf", 1e15, 1.0),
    ("Tf", 1e12, 1.0),
    ("Gf", 1e9, 1.0),
    ("Mf", 1e6, 1.0),
    ("kf", 1e3, 1.0),
    ("f", 1.0, 1.0),
];

/// A host's speed as SimGrid writes it (`1Gf`, `98.095Mf`, a plain number of
/// flops per second), in flops per second; of a list of power states
/// (`100Mf,50Mf`), the first, SimGrid's default state.
pub fn speed(text: &str) -> Option<f64> {
    let first = text.split(',').next()?.trim();
    quantity(first, SPEED_UNITS, (1.0, 1.0)).filter(|v| v.is_finite() && *v > 0.0)
}

/// The speed of every host a platform names (`<host speed>`, and each
/// host of a `<cluster speed>`), by name. A speed that does not read is
/// left out (the workload that needs it says so).
fn host_speeds(root: roxmltree::Node) -> std::collections::HashMap<String, f64> {
    let mut out = std::collections::HashMap::new();
    for e in root.descendants().filter(|e| e.is_element()) {
        let Some(v) = e.attribute("speed").and_then(speed) else {
            continue;
        };
        match e.tag_name().name() {
            "host" => {
                if let Some(id) = e.attribute("id") {
                    out.insert(id.to_string(), v);
                }
            }
            "cluster" => {
                let (Some(prefix), Some(suffix), Some(radical)) = (
                    e.attribute("prefix"),
                    e.attribute("suffix"),
                    e.attribute("radical"),
                ) else {
                    continue;
                };
                let cx = Ctx {
                    what: String::new(),
                    line: 0,
                    tag: "cluster".into(),
                };
                if let Ok(rs) = radicals(&cx, radical, zones::MAX_PLATFORM_NODES) {
                    for r in rs {
                        out.insert(format!("{prefix}{r}{suffix}"), v);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `t` with the speeds of its hosts as the platform gives them.
fn with_speeds(mut t: Topology, root: roxmltree::Node) -> Topology {
    let speeds = host_speeds(root);
    if !speeds.is_empty() {
        t.speed = (0..t.num_nodes as u32)
            .map(|n| speeds.get(&t.node_name(n)).copied().unwrap_or(f64::NAN))
            .collect();
    }
    t
}

/// Attribute `k` of `e` as a bandwidth, in range (`check_bandwidth`):
/// the one check every bandwidth of a platform goes through.
fn attr_bandwidth(cx: &Ctx, e: roxmltree::Node, k: &str) -> Result<f64> {
    let text = cx.need(e, k)?;
    let v = bandwidth(text).ok_or_else(|| {
        cx.err(format!(
            "{k}=\"{text}\" is not a bandwidth (a number with Bps, kBps, MBps, GBps, KiBps, bps, Mbps, ...)"
        ))
    })?;
    super::check_bandwidth(k, v).map_err(|e| cx.err(e.to_string()))?;
    Ok(v)
}

/// Attribute `k` of `e` as a latency, in range (`check_latency`): the one
/// check every latency of a platform goes through.
fn attr_latency(cx: &Ctx, e: roxmltree::Node, k: &str) -> Result<f64> {
    let text = cx.need(e, k)?;
    let v = latency(text).ok_or_else(|| {
        cx.err(format!(
            "{k}=\"{text}\" is not a time (a number with s, ms, us, ns, ...)"
        ))
    })?;
    super::check_latency(k, v).map_err(|e| cx.err(e.to_string()))?;
    Ok(v)
}

/// The values of `radical` (`0-63`, `0,4-7`) in order, refused past
/// `limit` values before any is made.
fn radicals(cx: &Ctx, radical: &str, limit: usize) -> Result<Vec<u64>> {
    let mut parts = Vec::new();
    let mut n: u64 = 0;
    let bad = || {
        cx.err(format!(
            "radical '{radical}' is not numbers (like 0-63 or 0,4-7)"
        ))
    };
    for part in radical.split(',') {
        let part = part.trim();
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<u64>().map_err(|_| bad())?,
                b.trim().parse::<u64>().map_err(|_| bad())?,
            ),
            None => {
                let a = part.parse::<u64>().map_err(|_| bad())?;
                (a, a)
            }
        };
        if b < a {
            return Err(cx.err(format!("radical '{part}' runs backwards")));
        }
        n = n.saturating_add(b - a).saturating_add(1);
        if n > limit as u64 {
            return Err(cx.err(format!("radical '{radical}' names more than {limit} hosts")));
        }
        parts.push((a, b));
    }
    Ok(parts.into_iter().flat_map(|(a, b)| a..=b).collect())
}

/// A `<cluster>`'s attributes, read and checked by this one reader
/// whatever its topology and wherever it stands (beside other zones, or
/// the platform's whole network).
struct ClusterShape {
    id: String,
    prefix: String,
    suffix: String,
    radicals: Vec<u64>,
    bw: f64,
    lat: f64,
    /// Links split per direction (SPLITDUPLEX, the default).
    split: bool,
    /// The backbone's bandwidth, latency and whether it is a FATPIPE.
    backbone: Option<(f64, f64, bool)>,
    limiter: Option<f64>,
    topology: String,
}

fn cluster_shape(cx: &Ctx, c: roxmltree::Node) -> Result<ClusterShape> {
    let radicals = radicals(cx, cx.need(c, "radical")?, zones::MAX_PLATFORM_NODES)?;
    let bw = attr_bandwidth(cx, c, "bw")?;
    let lat = attr_latency(cx, c, "lat")?;
    let split = match c.attribute("sharing_policy").unwrap_or("SPLITDUPLEX") {
        "SPLITDUPLEX" | "FULLDUPLEX" => true,
        "SHARED" | "FATPIPE" => false,
        other => {
            return Err(cx.err(format!(
                "sharing_policy '{other}' is not SHARED, SPLITDUPLEX or FATPIPE"
            )))
        }
    };
    let opt = |k: &str| c.attribute(k).filter(|v| !v.is_empty());
    let bb_bw = opt("bb_bw")
        .map(|_| attr_bandwidth(cx, c, "bb_bw"))
        .transpose()?;
    let bb_lat = opt("bb_lat")
        .map(|_| attr_latency(cx, c, "bb_lat"))
        .transpose()?;
    let fat = match c.attribute("bb_sharing_policy").unwrap_or("SHARED") {
        "SHARED" => false,
        "FATPIPE" => true,
        other => {
            return Err(cx.err(format!(
                "bb_sharing_policy '{other}' is not SHARED or FATPIPE"
            )))
        }
    };
    // SimGrid makes a backbone where either is above zero.
    let backbone = match (bb_bw, bb_lat.unwrap_or(0.0)) {
        (Some(b), l) => Some((b, l, fat)),
        (None, l) if l > 0.0 => {
            return Err(cx.err("bb_lat without bb_bw: a backbone needs a bandwidth".into()))
        }
        _ => None,
    };
    let limiter = opt("limiter_link")
        .map(|_| attr_bandwidth(cx, c, "limiter_link"))
        .transpose()?;
    for k in ["loopback_bw"] {
        if opt(k).is_some() {
            attr_bandwidth(cx, c, k)?;
        }
    }
    if opt("loopback_lat").is_some() {
        attr_latency(cx, c, "loopback_lat")?;
    }
    for p in c.children().filter(|n| n.is_element()) {
        if !p.has_tag_name("prop") {
            return Err(cx.at(p).err("only <prop> goes in a <cluster>".into()));
        }
    }
    Ok(ClusterShape {
        id: cx.need(c, "id")?.to_string(),
        prefix: c.attribute("prefix").unwrap_or("").to_string(),
        suffix: c.attribute("suffix").unwrap_or("").to_string(),
        radicals,
        bw,
        lat,
        split,
        backbone,
        limiter,
        topology: c.attribute("topology").unwrap_or("FLAT").to_string(),
    })
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
        fail!(Topology, File, "{what}: not a <platform> XML file: {said}")
    })?;
    let root = doc.root_element();
    let cx = Ctx {
        what: what.clone(),
        line: 1,
        tag: "platform".into(),
    }
    .at(root);
    if root.tag_name().name() != "platform" {
        return Err(cx.err(format!(
            "the root element is <{}>, not <platform>",
            root.tag_name().name()
        )));
    }
    // The network: one zone or cluster (SimGrid's root zone).
    let mut top = None;
    for e in root.children().filter(|n| n.is_element()) {
        let cx = cx.at(e);
        match e.tag_name().name() {
            "config" | "random" | "actor" | "process" => {}
            "zone" | "AS" | "cluster" | "cabinet" | "peer" => {
                if top.is_some() {
                    return Err(cx.err(
                        "a second zone or cluster at the top: SimGrid's platform has one root zone"
                            .into(),
                    ));
                }
                top = Some(e);
            }
            // Read once the network is (`with_profiles`).
            "trace" | "trace_connect" => {}
            "include" => {
                return Err(
                    cx.err("<include> was removed from SimGrid in 3.22 and is not read".into())
                )
            }
            other => return Err(cx.err(format!("<{other}> is not a SimGrid platform element"))),
        }
    }
    let top = top.ok_or_else(|| cx.err("no zone and no cluster".into()))?;
    if let Some((around, c)) = lone_hierarchical_cluster(top) {
        // The zones around it are read as every zone is.
        let mut ids = std::collections::HashSet::new();
        for z in around {
            let cx = cx.at(z);
            let (id, _) = zones::zone_attributes(&cx, z)?;
            if !ids.insert(id) {
                return Err(cx.err(format!("zone '{id}' is declared twice")));
            }
        }
        let cx = cx.at(c);
        let t = hierarchical_cluster(&cx, name, c).map(|t| with_speeds(t, root))?;
        return with_profiles(t, &cx, root, name);
    }
    let mut b = zones::Builder::default();
    let cx = cx.at(top);
    match top.tag_name().name() {
        "zone" | "AS" => zones::zone(&mut b, &cx, top, None)?,
        "cluster" => cluster_in(&mut b, &cx, top, None)?,
        other => {
            return Err(cx.err(format!(
                "<{other}> alone is not a platform (it goes in a zone)"
            )))
        }
    }
    let (router, nodes, links, link_names, fatpipe) = b.into_router();
    let g = super::Graph::with_router(&nodes, links, link_names, fatpipe, Arc::new(router))
        .map_err(|e| fail!(Topology, File, "{what}: {e}"))?;
    with_profiles(
        with_speeds(Topology::from_kind(name, Kind::Graph(g)), root),
        &cx,
        root,
        name,
    )
}

/// `t` with the profiles the platform gives its links and hosts
/// (`bandwidth_file`, `latency_file`, `speed_file`, `<trace>` and
/// `<trace_connect>`, `state_file` and the kinds `HOST_AVAIL` and
/// `LINK_AVAIL` for states, a host's `availability_file` as SimGrid 3.32
/// reads it, for its speed): each file read from the platform's folder, or
/// as named. Profiles of links or hosts the network lacks are refused.
fn with_profiles(mut t: Topology, cx: &Ctx, root: roxmltree::Node, name: &str) -> Result<Topology> {
    use crate::profile::{Profile, Profiles, Target};
    use crate::{LinkId, NodeId};
    let folder = std::path::Path::new(name).parent();
    let read = |cx: &Ctx, file: &str| -> Result<Profile> {
        let given = std::path::Path::new(file);
        let path = match folder {
            Some(dir) if given.is_relative() && dir.join(given).exists() => dir.join(given),
            _ => given.to_path_buf(),
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| cx.err(format!("cannot read profile '{}': {e}", path.display())))?;
        Profile::parse(&text, None).map_err(|e| cx.err(format!("profile '{file}': {e}")))
    };
    let mut traces = std::collections::HashMap::new();
    for e in root.children().filter(|n| n.has_tag_name("trace")) {
        let cx = cx.at(e);
        let id = cx.need(e, "id")?;
        let periodicity =
            match e.attribute("periodicity") {
                Some(p) => Some(p.trim().parse::<f64>().map_err(|_| {
                    cx.err(format!("trace '{id}': periodicity '{p}' is not a number"))
                })?),
                None => None,
            };
        let profile = match e.attribute("file").filter(|f| !f.is_empty()) {
            Some(f) => read(&cx, f)?,
            None => Profile::parse(e.text().unwrap_or(""), periodicity)
                .map_err(|m| cx.err(format!("trace '{id}': {m}")))?,
        };
        traces.insert(id.to_string(), profile);
    }
    let mut nodes = std::collections::HashMap::new();
    let mut links: std::collections::HashMap<String, LinkId> = std::collections::HashMap::new();
    let mut of = Vec::new();
    // A bandwidth or speed of 0 would hold a transfer or a computation
    // for ever (SimGrid models that as a resource turned off).
    let positive = |cx: &Ctx, what: &str, p: &Profile| -> Result<()> {
        match p.least() {
            Some(v) if v <= 0.0 => Err(cx.err(format!(
                "a {what} profile's values must be positive, got {v} (a resource that turns off is not modelled)"
            ))),
            _ => Ok(()),
        }
    };
    // A host's profile: of its speed (`state` false) or its state.
    let mut host =
        |cx: &Ctx, id: &str, p: Profile, state: bool, of: &mut Vec<(Target, Profile)>| {
            if !state {
                positive(cx, "speed", &p)?;
            }
            if nodes.is_empty() {
                nodes = (0..t.num_nodes as NodeId)
                    .map(|n| (t.node_name(n), n))
                    .collect();
            }
            match nodes.get(id) {
                Some(&n) => {
                    of.push((
                        if state {
                            Target::HostState(n)
                        } else {
                            Target::Speed(n)
                        },
                        p,
                    ));
                    Ok(())
                }
                None => Err(cx.err(format!("host '{id}' is not one of the network's"))),
            }
        };
    // A link's profile of `what` (each of its directed links' target).
    let mut link = |cx: &Ctx,
                    id: &str,
                    p: Profile,
                    what: fn(LinkId) -> Target,
                    of: &mut Vec<(Target, Profile)>| {
        if what(0) == Target::Bandwidth(0) {
            positive(cx, "bandwidth", &p)?;
        }
        if links.is_empty() {
            links = (0..t.links.len() as LinkId)
                .map(|l| (t.link_name(l), l))
                .collect();
        }
        let mut found = false;
        for n in [id.to_string(), format!("{id}_UP"), format!("{id}_DOWN")] {
            if let Some(&l) = links.get(&n) {
                found = true;
                of.push((what(l), p.clone()));
            }
        }
        if found {
            Ok(())
        } else {
            Err(cx.err(format!("link '{id}' is not one of the network's")))
        }
    };
    for e in root.descendants().filter(|n| n.is_element()) {
        let cx = cx.at(e);
        match e.tag_name().name() {
            "host" => {
                // SimGrid 3.32 reads `availability_file` as `speed_file`.
                for (k, state) in [
                    ("speed_file", false),
                    ("availability_file", false),
                    ("state_file", true),
                ] {
                    if let Some(f) = e.attribute(k).filter(|f| !f.is_empty()) {
                        host(&cx, cx.need(e, "id")?, read(&cx, f)?, state, &mut of)?;
                    }
                }
            }
            "link" => {
                let id = cx.need(e, "id")?;
                for (k, what) in [
                    ("bandwidth_file", Target::Bandwidth as fn(LinkId) -> Target),
                    ("latency_file", Target::Latency),
                    ("state_file", Target::State),
                ] {
                    if let Some(f) = e.attribute(k).filter(|f| !f.is_empty()) {
                        link(&cx, id, read(&cx, f)?, what, &mut of)?;
                    }
                }
            }
            "trace_connect" => {
                let (kind, trace, element) = (
                    cx.need(e, "kind")?,
                    cx.need(e, "trace")?,
                    cx.need(e, "element")?,
                );
                let p = traces
                    .get(trace)
                    .cloned()
                    .ok_or_else(|| cx.err(format!("trace '{trace}' is not declared")))?;
                match kind {
                    "SPEED" => host(&cx, element, p, false, &mut of)?,
                    "HOST_AVAIL" => host(&cx, element, p, true, &mut of)?,
                    "BANDWIDTH" => link(&cx, element, p, Target::Bandwidth, &mut of)?,
                    "LATENCY" => link(&cx, element, p, Target::Latency, &mut of)?,
                    "LINK_AVAIL" => link(&cx, element, p, Target::State, &mut of)?,
                    other => {
                        return Err(cx.err(format!(
                        "kind '{other}' is not SPEED, BANDWIDTH, LATENCY, HOST_AVAIL or LINK_AVAIL"
                    )))
                    }
                }
            }
            _ => {}
        }
    }
    if !of.is_empty() {
        t.profiles = Some(std::sync::Arc::new(Profiles { of }));
    }
    Ok(t)
}

/// The TORUS, FAT_TREE or DRAGONFLY cluster that is the platform's whole
/// network (alone, or alone in zones that hold nothing else), with the
/// zones around it, outermost first.
#[allow(clippy::type_complexity)]
fn lone_hierarchical_cluster<'a, 'i>(
    top: roxmltree::Node<'a, 'i>,
) -> Option<(Vec<roxmltree::Node<'a, 'i>>, roxmltree::Node<'a, 'i>)> {
    let mut e = top;
    let mut around = Vec::new();
    loop {
        if e.has_tag_name("cluster") {
            return (e.attribute("topology").unwrap_or("FLAT") != "FLAT").then_some((around, e));
        }
        around.push(e);
        let mut inner = e
            .children()
            .filter(|n| n.is_element() && !n.has_tag_name("prop"));
        let one = inner.next()?;
        if inner.next().is_some()
            || !(one.has_tag_name("zone") || one.has_tag_name("AS") || one.has_tag_name("cluster"))
        {
            return None;
        }
        e = one;
    }
}

/// A `<cluster>` in zone `z` (from `zones`): a flat one only, beside
/// other zones.
fn cluster_in_zone(b: &mut zones::Builder, cx: &Ctx, c: roxmltree::Node, z: u32) -> Result<()> {
    cluster_in(b, cx, c, Some(z))
}

fn cluster_in(b: &mut zones::Builder, cx: &Ctx, c: roxmltree::Node, z: Option<u32>) -> Result<()> {
    let shape = cluster_shape(cx, c)?;
    if shape.topology != "FLAT" {
        return Err(cx.err(format!(
            "a {} cluster beside other zones or hosts is not read (only as the platform's whole network)",
            shape.topology
        )));
    }
    zones::flat_cluster(b, cx, c, z, &shape)
}

/// A platform that is one TORUS, FAT_TREE or DRAGONFLY cluster.
fn hierarchical_cluster(cx: &Ctx, name: &str, c: roxmltree::Node) -> Result<Topology> {
    let shape = cluster_shape(cx, c)?;
    let n = shape.radicals.len();
    let what = format!("{}: line {}: <cluster>", cx.what, cx.line);
    if shape.backbone.is_some() {
        return Err(cx.err(format!(
            "a {} cluster has no backbone (bb_bw, bb_lat are for flat clusters)",
            shape.topology
        )));
    }
    let (prefix, suffix) = (&shape.prefix, &shape.suffix);
    let names = &shape.radicals;
    let host_name = |i: usize| {
        format!(
            "{prefix}{}{suffix}",
            names.get(i).copied().unwrap_or(i as u64)
        )
    };
    let kind = match shape.topology.as_str() {
        "TORUS" => {
            if !shape.split {
                return Err(cx.err(
                    "a TORUS of SHARED or FATPIPE links is not read (topocoll's torus has one link per direction: SPLITDUPLEX, the default)".into(),
                ));
            }
            if shape.limiter.is_some() {
                return Err(cx.err("limiter_link on a TORUS cluster is not read".into()));
            }
            let dims: Vec<usize> = cx
                .need(c, "topo_parameters")?
                .split(',')
                .map(|d| d.trim().parse::<usize>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| cx.err("topo_parameters are not whole numbers".into()))?;
            let size = dims
                .iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .unwrap_or(0);
            if size != n {
                return Err(cx.err(format!(
                    "topo_parameters make {size} hosts, the radical {n}"
                )));
            }
            // SimGrid's ring of 2 routes both ways over one cable (its
            // second is never on a route): a dimension of 2 is a mesh's.
            let wrap = dims.iter().map(|&d| d > 2).collect();
            let mut g =
                Grid::new(dims, wrap, shape.bw, shape.lat).map_err(|e| cx.err(e.to_string()))?;
            g.tie = TorusTie::SimGrid;
            Kind::Grid(g)
        }
        "FAT_TREE" => {
            if shape.limiter.is_some() {
                return Err(cx.err("limiter_link on a FAT_TREE cluster is not read".into()));
            }
            Kind::Graph(fat_tree::build(
                &what,
                cx.need(c, "topo_parameters")?,
                &host_name,
                n,
                shape.bw,
                shape.lat,
                shape.split,
            )?)
        }
        "DRAGONFLY" => Kind::Graph(dragonfly::build(
            &what,
            cx.need(c, "topo_parameters")?,
            &host_name,
            n,
            (shape.bw, shape.lat, shape.split),
            shape.limiter.map(|l| (l, shape.id.as_str())),
        )?),
        other => {
            return Err(cx.err(format!(
                "cluster topology '{other}' is not FLAT, TORUS, FAT_TREE or DRAGONFLY"
            )))
        }
    };
    let topo = Topology::from_kind(name, kind);
    topo.check_connected()?;
    Ok(topo)
}

/// A cluster's links, cable by cable, named as SimGrid names them: the
/// k-th cable made, `NAME`, is `NAME_k_UP` (its a→z link) and `NAME_k_DOWN`
/// (z→a) when links are split per direction, else one link `NAME_k` both
/// directions share.
struct Cables {
    links: Vec<super::Link>,
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
    fn add(
        &mut self,
        a: super::NodeId,
        z: super::NodeId,
        bandwidth: f64,
        name: &str,
    ) -> (super::LinkId, super::LinkId) {
        let name = format!("{name}_{}", self.made);
        self.made += 1;
        let ab = self.links.len() as super::LinkId;
        let link = |from, to| super::Link {
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

    /// A link of its own (a limiter): one link, both directions, no latency.
    fn one(&mut self, at: super::NodeId, bandwidth: f64, name: String) -> super::LinkId {
        let id = self.links.len() as super::LinkId;
        self.links.push(super::Link {
            from: at,
            to: at,
            bandwidth,
            latency: 0.0,
        });
        self.names.push(name);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_attributes() {
        assert_eq!(bandwidth("1e9Bps").unwrap(), 1e9);
        assert_eq!(bandwidth("10Gbps").unwrap(), 1.25e9);
        assert_eq!(bandwidth("1KiBps").unwrap(), 1024.0);
        assert_eq!(latency("50us").unwrap(), 50e-6);
        assert_eq!(latency("1e-06s").unwrap(), 1e-6);
        assert_eq!(latency("0").unwrap(), 0.0);
        assert_eq!(latency("2m").unwrap(), 120.0);
        assert!(latency("5 parsecs").is_none());
        let cx = Ctx {
            what: "p".into(),
            line: 1,
            tag: "cluster".into(),
        };
        assert_eq!(radicals(&cx, "0-63", 100).unwrap().len(), 64);
        assert_eq!(
            radicals(&cx, "0-3,7,9-10", 100).unwrap(),
            vec![0, 1, 2, 3, 7, 9, 10]
        );
        assert!(radicals(&cx, "1-18446744073709551615", 100).is_err());
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

/// Every route of small FAT_TREE and DRAGONFLY platforms, hashed: the
/// routes worked out pair by pair must stay the ones SimGrid's tests
/// were checked against, link ids, names, ends and rates included.
#[cfg(test)]
mod fingerprints {
    use super::parse_platform;

    fn cluster(topology: &str, params: &str, hosts: usize, extra: &str) -> String {
        format!(
            r#"<platform version="4.1"><cluster id="c" prefix="h" suffix="" radical="0-{}"
            speed="1Gf" bw="125MBps" lat="50us" topology="{topology}" topo_parameters="{params}" {extra}/></platform>"#,
            hosts - 1
        )
    }

    /// FNV-1a over the links (ends, rates, names) and every pair's route.
    fn fingerprint(xml: &str) -> u64 {
        let t = parse_platform("t", xml).unwrap();
        let mut h: u64 = 0xcbf29ce484222325;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x100000001b3);
            }
        };
        eat(t.links.len() as u64);
        for (l, link) in t.links.iter().enumerate() {
            eat(link.from as u64);
            eat(link.to as u64);
            eat(link.bandwidth.to_bits());
            eat(link.latency.to_bits());
            let ends = t
                .link_ends(l as u32)
                .map_or(u64::MAX, |(a, b)| (a as u64) << 32 | b as u64);
            eat(ends);
            eat(t.both_ways(l as u32) as u64);
            for b in t.link_name(l as u32).bytes() {
                eat(b as u64);
            }
        }
        let mut out = Vec::new();
        for a in 0..t.num_ranks() {
            for b in 0..t.num_ranks() {
                out.clear();
                t.route(a, b, &mut out);
                eat(out.len() as u64);
                for &l in &out {
                    eat(l as u64);
                }
            }
        }
        h
    }

    #[test]
    fn fat_tree_and_dragonfly_routes_keep_their_fingerprints() {
        let split = r#"sharing_policy="SPLITDUPLEX""#;
        let cases = [
            cluster(
                "FAT_TREE",
                "2;4,4;1,2;1,2",
                16,
                r#"sharing_policy="SHARED""#,
            ),
            cluster("FAT_TREE", "2;4,4;1,2;1,2", 16, split),
            cluster("FAT_TREE", "3;2,2,3;1,2,2;1,2,1", 12, split),
            cluster("FAT_TREE", "3;4,2,4;1,2,2;1,1,1", 32, split),
            cluster("FAT_TREE", "2;8,6;1,4;1,1", 48, split),
            cluster(
                "DRAGONFLY",
                "3,4;4,3;5,1;2",
                120,
                r#"limiter_link="150MBps""#,
            ),
            cluster("DRAGONFLY", "3,4;4,3;5,1;2", 120, split),
            cluster("DRAGONFLY", "4,1;2,1;4,1;2", 64, split),
            cluster(
                "DRAGONFLY",
                "2,2;3,1;3,2;1",
                18,
                r#"sharing_policy="SHARED""#,
            ),
        ];
        let got: Vec<u64> = cases.iter().map(|x| fingerprint(x)).collect();
        let want: [u64; 9] = [
            18267776400671692117,
            6766188544365980093,
            5381747520428077461,
            7595085047424190549,
            3214696568879736501,
            9116698124637230465,
            10001884203253365086,
            6784141295343262158,
            7707756320645742617,
        ];
        assert_eq!(got, want);
    }
}

/// FAT_TREE and DRAGONFLY clusters past the 1,024 hosts a table of every
/// pair held, and refusals of those past what memory allows.
#[cfg(test)]
mod large {
    use super::parse_platform;

    fn cluster(topology: &str, params: &str, hosts: usize) -> String {
        format!(
            r#"<platform version="4.1"><cluster id="c" prefix="h" suffix="" radical="0-{}"
            speed="1Gf" bw="125MBps" lat="50us" topology="{topology}" topo_parameters="{params}"/></platform>"#,
            hosts - 1
        )
    }

    #[test]
    fn clusters_of_thousands_of_hosts_are_routed_pair_by_pair() {
        let t =
            parse_platform("t", &cluster("FAT_TREE", "3;16,16,16;1,16,16;1,1,1", 4096)).unwrap();
        assert_eq!(t.num_ranks(), 4096);
        let mut out = Vec::new();
        t.route(0, 4095, &mut out);
        assert_eq!(out.len(), 6);
        let t = parse_platform("t", &cluster("DRAGONFLY", "16,1;4,1;16,1;4", 4096)).unwrap();
        assert_eq!(t.num_ranks(), 4096);
        out.clear();
        t.route(0, 4095, &mut out);
        assert!((2..=6).contains(&out.len()), "{out:?}");
    }

    #[test]
    fn clusters_past_the_limits_are_refused_in_one_line() {
        for xml in [
            cluster("FAT_TREE", "2;1024,1024;1,1024;1,1", 1 << 20),
            cluster("DRAGONFLY", "64,1;64,1;128,1;2", 1 << 20),
        ] {
            let e = parse_platform("t", &xml).unwrap_err().to_string();
            assert!(e.contains("a network routed pair by pair may have"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
