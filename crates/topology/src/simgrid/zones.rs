//! A platform of zones read element by element as SimGrid 3.32 reads it
//! (`surfxml_sax_cb.cpp`, `sg_platf.cpp`): zones of every routing but the
//! Wifi and Vivaldi models; hosts, routers, links (`SHARED`, `SPLITDUPLEX`
//! as two links `ID_UP` and `ID_DOWN`, `FATPIPE`); routes, zone routes
//! with gateways, bypass routes; flat clusters (a star zone: each host's
//! link, its limiter and the backbone), `routing="Cluster"` zones with
//! `host_link`, `cabinet` and `backbone`. The routes themselves are
//! `routing`'s.

use super::routing::{self, Hop, Point, Router, Routing, StarEntry, Zone};
use super::{attr_bandwidth, attr_latency, Ctx};
use crate::error::Result;
use crate::{Link, LinkId, NodeKind, NodeSpec};
use std::collections::HashMap;

/// The most hosts and routers a platform of zones may have: each costs
/// some 400 bytes with its links, names and routes (a million, 400 MB),
/// checked before any is made.
pub(super) const MAX_PLATFORM_NODES: usize = 1 << 20;

/// The most points a Floyd zone may have: its tables are n^2 and its
/// solve n^3 (1024: a second).
const MAX_FLOYD_POINTS: usize = 1024;

/// A link by name: one link, or a split-duplex link's UP and DOWN.
#[derive(Clone, Copy)]
pub(super) enum Named {
    One(LinkId),
    Split(LinkId, LinkId),
}

/// What the reader has made so far.
#[derive(Default)]
pub(super) struct Builder {
    pub points: Vec<Point>,
    pub zones: Vec<Zone>,
    pub links: Vec<Link>,
    pub link_names: Vec<String>,
    pub fatpipe: Vec<bool>,
    named: HashMap<String, Named>,
    point_of: HashMap<String, u32>,
    zone_of: HashMap<String, u32>,
    /// Hosts and routers, in the order declared: the graph's nodes.
    pub nodes: Vec<NodeSpec>,
    pub point_of_node: Vec<u32>,
}

/// Sharing of a link.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Sharing {
    Shared,
    Split,
    Fatpipe,
}

impl Builder {
    pub(super) fn into_router(self) -> (Router, Vec<NodeSpec>, Vec<Link>, Vec<String>, Vec<bool>) {
        let fatpipe = if self.fatpipe.iter().any(|&f| f) {
            self.fatpipe
        } else {
            Vec::new()
        };
        (
            Router {
                points: self.points,
                zones: self.zones,
                point_of_node: self.point_of_node,
            },
            self.nodes,
            self.links,
            self.link_names,
            fatpipe,
        )
    }

    /// A new zone under `parent`, routed by `routing` (its routes are
    /// filled in when it ends).
    fn zone(&mut self, cx: &Ctx, name: &str, parent: Option<u32>, routing: Routing) -> Result<u32> {
        let z = self.zones.len() as u32;
        if self.zone_of.insert(name.to_string(), z).is_some() {
            return Err(cx.err(format!("zone '{name}' is declared twice")));
        }
        let point = self.add_point(name, parent);
        self.zones.push(Zone {
            name: name.to_string(),
            parent,
            point,
            points: Vec::new(),
            routing,
            bypass: HashMap::new(),
            recursive: false,
        });
        if let Some(p) = parent {
            self.zones[p as usize].recursive = true;
        }
        Ok(z)
    }

    fn add_point(&mut self, name: &str, zone: Option<u32>) -> u32 {
        let p = self.points.len() as u32;
        let local = match zone {
            Some(z) => {
                let zp = &mut self.zones[z as usize].points;
                zp.push(p);
                zp.len() as u32 - 1
            }
            None => 0,
        };
        self.points.push(Point {
            name: name.to_string(),
            zone: zone.unwrap_or(u32::MAX),
            local,
        });
        p
    }

    /// A host or router of zone `z`.
    pub(super) fn node(&mut self, cx: &Ctx, name: &str, z: u32, kind: NodeKind) -> Result<u32> {
        if self.point_of.contains_key(name) {
            return Err(cx.err(format!("'{name}' is declared twice")));
        }
        if self.nodes.len() >= MAX_PLATFORM_NODES {
            return Err(cx.err(format!("more than {MAX_PLATFORM_NODES} hosts and routers")));
        }
        let p = self.add_point(name, Some(z));
        self.point_of.insert(name.to_string(), p);
        self.nodes.push(NodeSpec {
            name: name.to_string(),
            kind,
        });
        self.point_of_node.push(p);
        Ok(p)
    }

    /// A link (two for a split-duplex one) named `name`.
    pub(super) fn link(
        &mut self,
        cx: &Ctx,
        name: &str,
        bw: f64,
        lat: f64,
        sharing: Sharing,
    ) -> Result<Named> {
        if self.named.contains_key(name) {
            return Err(cx.err(format!("link '{name}' is declared twice")));
        }
        if self.links.len() + 2 > u32::MAX as usize / 2 {
            return Err(cx.err("more than 2^30 links".into()));
        }
        let one = |me: &mut Builder, n: String, fat: bool| {
            let id = me.links.len() as LinkId;
            me.links.push(Link {
                from: 0,
                to: 0,
                bandwidth: bw,
                latency: lat,
            });
            me.link_names.push(n.clone());
            me.fatpipe.push(fat);
            me.named.insert(n, Named::One(id));
            id
        };
        let named = match sharing {
            Sharing::Split => {
                let up = one(self, format!("{name}_UP"), false);
                let down = one(self, format!("{name}_DOWN"), false);
                Named::Split(up, down)
            }
            s => Named::One(one(self, name.to_string(), s == Sharing::Fatpipe)),
        };
        self.named.insert(name.to_string(), named);
        Ok(named)
    }

    fn point(&self, cx: &Ctx, name: &str) -> Result<u32> {
        self.point_of
            .get(name)
            .copied()
            .ok_or_else(|| cx.err(format!("'{name}' is not a host or router declared before")))
    }

    fn zone_point(&self, cx: &Ctx, name: &str) -> Result<u32> {
        self.zone_of
            .get(name)
            .map(|&z| self.zones[z as usize].point)
            .ok_or_else(|| cx.err(format!("'{name}' is not a zone declared before")))
    }

    /// A route's links forward and backward (for its reverse: each split
    /// link's other half, in reverse order), from its `<link_ctn>`s.
    fn route_links(&self, cx: &Ctx, r: roxmltree::Node) -> Result<(Vec<LinkId>, Vec<LinkId>)> {
        let mut fw = Vec::new();
        let mut bw = Vec::new();
        for l in r.children().filter(|n| n.is_element()) {
            let cx = cx.at(l);
            if !l.has_tag_name("link_ctn") {
                return Err(cx.err("only <link_ctn> goes in a route".into()));
            }
            let id = cx.need(l, "id")?;
            let named = self
                .named
                .get(id)
                .ok_or_else(|| cx.err(format!("link '{id}' is not declared before")))?;
            let (f, b) = match (*named, l.attribute("direction").unwrap_or("NONE")) {
                (Named::One(x), "NONE" | "UP" | "DOWN") => (x, x),
                (Named::Split(u, d), "UP") => (u, d),
                (Named::Split(u, d), "DOWN") => (d, u),
                (Named::Split(..), "NONE") => {
                    return Err(cx.err(format!(
                        "link '{id}' is SPLITDUPLEX: give direction=\"UP\" or \"DOWN\""
                    )))
                }
                (_, d) => return Err(cx.err(format!("direction '{d}' is not UP, DOWN or NONE"))),
            };
            fw.push(f);
            bw.push(b);
        }
        bw.reverse();
        Ok((fw, bw))
    }
}

/// Routes a zone declares, collected until it ends (when its points are
/// all known): (source, destination, hop, reverse hop if symmetrical).
type Declared = Vec<(u32, u32, Hop, Option<Hop>)>;

/// Reads `<zone>` (or `<AS>`) `e` under `parent`.
pub(super) fn zone(
    b: &mut Builder,
    cx: &Ctx,
    e: roxmltree::Node,
    parent: Option<u32>,
) -> Result<()> {
    let (name, routing) = zone_attributes(cx, e)?;
    let z = b.zone(cx, name, parent, routing)?;
    let mut declared: Declared = Vec::new();
    let mut star = StarParts::default();
    for c in e.children().filter(|n| n.is_element()) {
        let cx = cx.at(c);
        child(b, &cx, c, z, &mut declared, &mut star)?;
    }
    seal(b, cx, z, declared, star)
}

/// A `<zone>`'s (or `<AS>`'s) own attributes, its `id` and its `routing`,
/// read and checked by this one reader for every zone: those of a
/// platform of zones and those that only hold a lone TORUS, FAT_TREE or
/// DRAGONFLY cluster.
pub(super) fn zone_attributes<'a>(
    cx: &Ctx,
    e: roxmltree::Node<'a, '_>,
) -> Result<(&'a str, Routing)> {
    let name = cx.need(e, "id")?;
    let kind = cx.need(e, "routing")?;
    let routing = match kind.to_ascii_lowercase().as_str() {
        "full" => Routing::Full(HashMap::new()),
        "floyd" => Routing::Floyd {
            hops: HashMap::new(),
            pred: Vec::new(),
        },
        "dijkstra" | "dijkstracache" => Routing::Dijkstra {
            nodes: Vec::new(),
            node_of: HashMap::new(),
            edges: Vec::new(),
            cache: Default::default(),
        },
        "none" => Routing::None,
        "cluster" => Routing::Star(Vec::new()),
        "vivaldi" | "wifi" => {
            return Err(cx.err(format!(
                "zone '{name}': the {kind} model is not read (topocoll reads zones routed Full, Floyd, Dijkstra, DijkstraCache, None and Cluster)"
            )))
        }
        other => return Err(cx.err(format!("zone '{name}': routing '{other}' is not a SimGrid routing"))),
    };
    Ok((name, routing))
}

/// A `routing="Cluster"` zone's `host_link`s, `cabinet`s and backbone,
/// put together when it ends.
#[derive(Default)]
struct StarParts {
    backbone: Option<LinkId>,
    /// (host point, up links, down links)
    host_links: Vec<(u32, Vec<LinkId>, Vec<LinkId>)>,
}

/// One element inside zone `z`.
fn child(
    b: &mut Builder,
    cx: &Ctx,
    c: roxmltree::Node,
    z: u32,
    declared: &mut Declared,
    star: &mut StarParts,
) -> Result<()> {
    let tag = c.tag_name().name();
    match tag {
        "zone" | "AS" => zone(b, cx, c, Some(z)),
        "cluster" => super::cluster_in_zone(b, cx, c, z),
        "host" => host(b, cx, c, z),
        "router" => b
            .node(cx, cx.need(c, "id")?, z, NodeKind::Switch)
            .map(|_| ()),
        "link" => link(b, cx, c).map(|_| ()),
        "backbone" => {
            let id = cx.need(c, "id")?;
            let bw = attr_bandwidth(cx, c, "bandwidth")?;
            let lat = attr_latency(cx, c, "latency")?;
            match b.link(cx, id, bw, lat, Sharing::Shared)? {
                Named::One(l) => star.backbone = Some(l),
                Named::Split(..) => unreachable!("a backbone is shared"),
            }
            Ok(())
        }
        "host_link" => {
            let host = b.point(cx, cx.need(c, "id")?)?;
            let one = |k: &str| -> Result<LinkId> {
                let n = cx.need(c, k)?;
                match b.named.get(n) {
                    Some(Named::One(l)) => Ok(*l),
                    Some(Named::Split(..)) => Err(cx.err(format!(
                        "host_link {k}=\"{n}\" names a SPLITDUPLEX link: name its half ({n}_UP or {n}_DOWN)"
                    ))),
                    None => Err(cx.err(format!("link '{n}' is not declared before"))),
                }
            };
            star.host_links
                .push((host, vec![one("up")?], vec![one("down")?]));
            Ok(())
        }
        "cabinet" => cabinet(b, cx, c, z, star),
        "route" | "zoneRoute" | "ASroute" => route(b, cx, c, z, declared),
        "bypassRoute" | "bypassZoneRoute" | "bypassASroute" => bypass(b, cx, c, z),
        "prop" | "storage_type" | "storage" | "mount" => Ok(()),
        "peer" => Err(cx.err("<peer> belongs to the Vivaldi model, which is not read".into())),
        "trace" | "trace_connect" => Err(cx.err(format!(
            "<{tag}>: profiles (availability, bandwidth, latency and state traces) are not read"
        ))),
        "include" => {
            Err(cx.err("<include> was removed from SimGrid in 3.22 and is not read".into()))
        }
        other => Err(cx.err(format!("<{other}> is not a SimGrid zone element"))),
    }
}

/// A `<host>` (its speed, cores, disks and properties are not the
/// network's).
fn host(b: &mut Builder, cx: &Ctx, c: roxmltree::Node, z: u32) -> Result<()> {
    let id = cx.need(c, "id")?;
    b.node(cx, id, z, NodeKind::Host).map(|_| ())
}

/// A `<link>`.
fn link(b: &mut Builder, cx: &Ctx, c: roxmltree::Node) -> Result<Named> {
    let id = cx.need(c, "id")?;
    let sharing = match c.attribute("sharing_policy").unwrap_or("SHARED") {
        "SHARED" => Sharing::Shared,
        "SPLITDUPLEX" | "FULLDUPLEX" => Sharing::Split,
        "FATPIPE" => Sharing::Fatpipe,
        "WIFI" => return Err(cx.err(format!("link '{id}': the WIFI model is not read"))),
        other => {
            return Err(cx.err(format!(
                "link '{id}': sharing_policy '{other}' is not SHARED, SPLITDUPLEX or FATPIPE"
            )))
        }
    };
    let bw = attr_bandwidth(cx, c, "bandwidth")?;
    let lat = match c.attribute("latency") {
        Some(_) => attr_latency(cx, c, "latency")?,
        None => 0.0,
    };
    b.link(cx, id, bw, lat, sharing)
}

/// A `<cabinet>`: hosts `prefix RADICAL suffix`, each with links
/// `link_HOST_UP` and `link_HOST_DOWN`, in a Cluster zone.
fn cabinet(
    b: &mut Builder,
    cx: &Ctx,
    c: roxmltree::Node,
    z: u32,
    star: &mut StarParts,
) -> Result<()> {
    let radicals = super::radicals(cx, cx.need(c, "radical")?, MAX_PLATFORM_NODES)?;
    let (prefix, suffix) = (cx.need(c, "prefix")?, cx.need(c, "suffix")?);
    let bw = attr_bandwidth(cx, c, "bw")?;
    let lat = attr_latency(cx, c, "lat")?;
    for r in radicals {
        let id = format!("{prefix}{r}{suffix}");
        let h = b.node(cx, &id, z, NodeKind::Host)?;
        let up = b.link(cx, &format!("link_{id}_UP"), bw, lat, Sharing::Shared)?;
        let down = b.link(cx, &format!("link_{id}_DOWN"), bw, lat, Sharing::Shared)?;
        let (Named::One(up), Named::One(down)) = (up, down) else {
            unreachable!("shared links")
        };
        star.host_links.push((h, vec![up], vec![down]));
    }
    Ok(())
}

/// A `<route>` or `<zoneRoute>` of zone `z`.
fn route(
    b: &mut Builder,
    cx: &Ctx,
    c: roxmltree::Node,
    z: u32,
    declared: &mut Declared,
) -> Result<()> {
    let zone_route = c.tag_name().name() != "route";
    let (src, dst) = (cx.need(c, "src")?, cx.need(c, "dst")?);
    let (a, d, gs, gd) = if zone_route {
        (
            b.zone_point(cx, src)?,
            b.zone_point(cx, dst)?,
            Some(b.point(cx, cx.need(c, "gw_src")?)?),
            Some(b.point(cx, cx.need(c, "gw_dst")?)?),
        )
    } else {
        (b.point(cx, src)?, b.point(cx, dst)?, None, None)
    };
    for (end, p) in [(src, a), (dst, d)] {
        if b.points[p as usize].zone != z {
            return Err(cx.err(format!(
                "'{end}' is not in zone '{}', whose route this is",
                b.zones[z as usize].name
            )));
        }
    }
    let (fw, bw) = b.route_links(cx, c)?;
    if fw.is_empty() {
        return Err(cx.err(format!("an empty route from '{src}' to '{dst}'")));
    }
    let symmetrical = match c.attribute("symmetrical").unwrap_or("YES") {
        "YES" | "yes" => true,
        "NO" | "no" => false,
        other => return Err(cx.err(format!("symmetrical '{other}' is not YES or NO"))),
    };
    let hop = Hop {
        gw_src: gs,
        gw_dst: gd,
        links: fw,
    };
    let back = (symmetrical && a != d).then_some(Hop {
        gw_src: gd,
        gw_dst: gs,
        links: bw,
    });
    if let Routing::Star(_) = b.zones[z as usize].routing {
        return Err(
            cx.err("a <route> in a routing=\"Cluster\" zone is not read (give host_link)".into())
        );
    }
    declared.push((a, d, hop, back));
    Ok(())
}

/// A bypass route of zone `z` (between points anywhere below it).
fn bypass(b: &mut Builder, cx: &Ctx, c: roxmltree::Node, z: u32) -> Result<()> {
    let zone_route = c.tag_name().name() != "bypassRoute";
    let (src, dst) = (cx.need(c, "src")?, cx.need(c, "dst")?);
    let (a, d, gs, gd) = if zone_route {
        (
            b.zone_point(cx, src)?,
            b.zone_point(cx, dst)?,
            Some(b.point(cx, cx.need(c, "gw_src")?)?),
            Some(b.point(cx, cx.need(c, "gw_dst")?)?),
        )
    } else {
        (b.point(cx, src)?, b.point(cx, dst)?, None, None)
    };
    let (fw, _) = b.route_links(cx, c)?;
    let hop = Hop {
        gw_src: gs,
        gw_dst: gd,
        links: fw,
    };
    if b.zones[z as usize].bypass.insert((a, d), hop).is_some() {
        return Err(cx.err(format!("a second bypass route from '{src}' to '{dst}'")));
    }
    Ok(())
}

/// Zone `z` ends: its declared routes go into its routing (Floyd's and
/// Dijkstra's worked out), a Cluster zone's host links into its star.
fn seal(b: &mut Builder, cx: &Ctx, z: u32, declared: Declared, star: StarParts) -> Result<()> {
    let local = |b: &Builder, p: u32| b.points[p as usize].local;
    let n = b.zones[z as usize].points.len();
    let recursive = b.zones[z as usize].recursive;
    let mut entries: Vec<(u32, u32, Hop)> = Vec::new();
    for (a, d, mut hop, back) in declared {
        if !recursive {
            hop.gw_src = None;
            hop.gw_dst = None;
        }
        entries.push((local(b, a), local(b, d), hop));
        if let Some(mut back) = back {
            if !recursive {
                back.gw_src = None;
                back.gw_dst = None;
            }
            entries.push((local(b, d), local(b, a), back));
        }
    }
    let name = b.zones[z as usize].name.clone();
    let twice = |s: u32, d: u32, b: &Builder| {
        let zp = &b.zones[z as usize].points;
        cx.err(format!(
            "zone '{name}': a second route from '{}' to '{}' (routes are symmetrical unless symmetrical=\"NO\")",
            b.points[zp[s as usize] as usize].name,
            b.points[zp[d as usize] as usize].name
        ))
    };
    let mut routing = std::mem::replace(&mut b.zones[z as usize].routing, Routing::None);
    match &mut routing {
        Routing::Full(table) | Routing::Floyd { hops: table, .. } => {
            for (s, d, hop) in entries {
                if table.insert((s, d), hop).is_some() {
                    return Err(twice(s, d, b));
                }
            }
        }
        Routing::Dijkstra {
            nodes,
            node_of,
            edges,
            ..
        } => {
            for (s, d, hop) in entries {
                for p in [s, d] {
                    node_of.entry(p).or_insert_with(|| {
                        nodes.push(p);
                        edges.push(Vec::new());
                        nodes.len() as u32 - 1
                    });
                }
                let (gs, gd) = (node_of[&s], node_of[&d]);
                if edges[gs as usize].iter().any(|(t, _)| *t == gd) {
                    return Err(twice(s, d, b));
                }
                edges[gs as usize].push((gd, hop));
            }
        }
        Routing::None => {}
        Routing::Star(list) => {
            *list = vec![StarEntry::default(); n];
            for (h, mut up, mut down) in star.host_links {
                if let Some(bb) = star.backbone {
                    up.push(bb);
                    down.insert(0, bb);
                }
                let e = &mut list[local(b, h) as usize];
                e.up = up;
                e.down = down;
            }
        }
    }
    if let Routing::Floyd { hops, pred } = &mut routing {
        if n > MAX_FLOYD_POINTS {
            return Err(cx.err(format!(
                "zone '{name}': a Floyd zone of {n} points (at most {MAX_FLOYD_POINTS}: its solve takes n^3 steps)"
            )));
        }
        *pred = routing::floyd(n, hops);
    }
    b.zones[z as usize].routing = routing;
    Ok(())
}

/// A flat `<cluster>` in zone `parent` (or as the platform): a star zone
/// of its hosts, each joined by its link (`ID_link_R`, split unless
/// SHARED), after its limiter (`ID_link_R_limiter`) and before the
/// backbone (`ID_backbone`), and its router (`PREFIX ID_router SUFFIX` or
/// `router_id`).
pub(super) fn flat_cluster(
    b: &mut Builder,
    cx: &Ctx,
    c: roxmltree::Node,
    parent: Option<u32>,
    shape: &super::ClusterShape,
) -> Result<()> {
    let id = shape.id.as_str();
    let z = b.zone(cx, id, parent, Routing::Star(Vec::new()))?;
    let backbone = match shape.backbone {
        Some((bw, lat, fat)) => {
            let s = if fat {
                Sharing::Fatpipe
            } else {
                Sharing::Shared
            };
            match b.link(cx, &format!("{id}_backbone"), bw, lat, s)? {
                Named::One(l) => Some(l),
                Named::Split(..) => unreachable!("a backbone is one link"),
            }
        }
        None => None,
    };
    let (prefix, suffix) = (&shape.prefix, &shape.suffix);
    let mut entries: Vec<StarEntry> = Vec::new();
    for &r in &shape.radicals {
        let h = b.node(cx, &format!("{prefix}{r}{suffix}"), z, NodeKind::Host)?;
        let link_id = format!("{id}_link_{r}");
        let limiter = match shape.limiter {
            Some(bw) => {
                match b.link(cx, &format!("{link_id}_limiter"), bw, 0.0, Sharing::Shared)? {
                    Named::One(l) => Some(l),
                    Named::Split(..) => unreachable!("a limiter is one link"),
                }
            }
            None => None,
        };
        // SimGrid 3.32 makes a flat cluster's FATPIPE links shared ones.
        let s = if shape.split {
            Sharing::Split
        } else {
            Sharing::Shared
        };
        let (up, down) = match b.link(cx, &link_id, shape.bw, shape.lat, s)? {
            Named::One(l) => (l, l),
            Named::Split(u, d) => (u, d),
        };
        let mut e = StarEntry::default();
        e.up.extend(limiter);
        e.up.push(up);
        e.up.extend(backbone);
        e.down.extend(backbone);
        e.down.push(down);
        e.down.extend(limiter);
        debug_assert_eq!(b.points[h as usize].local as usize, entries.len());
        entries.push(e);
    }
    let router = match c.attribute("router_id").filter(|r| !r.is_empty()) {
        Some(r) => r.to_string(),
        None => format!("{prefix}{id}_router{suffix}"),
    };
    b.node(cx, &router, z, NodeKind::Switch)?;
    entries.push(StarEntry::default());
    b.zones[z as usize].routing = Routing::Star(entries);
    Ok(())
}
