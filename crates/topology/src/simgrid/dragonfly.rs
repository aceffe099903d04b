//! SimGrid's DRAGONFLY cluster (`DragonflyZone`): `topo_parameters="G,blue;
//! C,black;B,green;n"`: G groups of C chassis of B routers (blades) of n
//! hosts each. Every host has its own link to its router; the routers of a
//! chassis are all joined (green links), the routers of the same blade in
//! the chassis of a group too (black links), and the groups pairwise (blue
//! links: group i's router of in-group index j to group j's of index i).
//! A bundle of k cables is one link of k times the bandwidth.
//!
//! Routes are SimGrid's, including its way within a group: after a green
//! hop it counts the route as in chassis 0, so that a route from chassis
//! c ≠ 0 to another router of the group takes the black link from chassis 0
//! (or none, when the target is in chassis 0) rather than from c.

use super::super::{Graph, LinkId, NodeId, NodeKind, NodeSpec, PairRouter};
use crate::error::fail;
use crate::error::Result;
use std::sync::Arc;

/// (groups, blue, chassis, black, blades, green, hosts per blade).
type Parameters = (usize, usize, usize, usize, usize, usize, usize);

pub(super) fn parameters(what: &str, text: &str) -> Result<Parameters> {
    let parts: Vec<&str> = text.split(';').collect();
    let shape = || {
        fail!(Topology, File,
            "{what}: DRAGONFLY topo_parameters are 'groups,blue;chassis,black;routers,green;hosts', not '{}'",
            topocoll_base::units::shorten(text)
        )
    };
    if parts.len() != 4 {
        return Err(shape());
    }
    let mut v = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let items: Vec<&str> = part.split(',').collect();
        if items.len() != if k < 3 { 2 } else { 1 } {
            return Err(shape());
        }
        for x in items {
            let x: usize = x.trim().parse().map_err(|_| shape())?;
            if x == 0 {
                return Err(fail!(
                    Topology,
                    File,
                    "{what}: DRAGONFLY topo_parameters must all be greater than 0"
                ));
            }
            v.push(x);
        }
    }
    Ok((v[0], v[1], v[2], v[3], v[4], v[5], v[6]))
}

/// The dragonfly's network; `(bw, lat, split)` its links', `limiter` the
/// bandwidth of each host's and router's limiter link and the cluster's id
/// (their names).
pub(super) fn build(
    what: &str,
    params: &str,
    host_name: &dyn Fn(usize) -> String,
    hosts_given: usize,
    (bw, lat, split_duplex): (f64, f64, bool),
    limiter: Option<(f64, &str)>,
) -> Result<Graph> {
    let (g, blue, c, black, b, green_cables, per) = parameters(what, params)?;
    let (routers, n) = size(what, g, c, b, per, hosts_given)?;
    let mut wiring = Wiring {
        what: what.to_string(),
        g,
        c,
        b,
        per,
        n,
        local: vec![(0, 0); n],
        green: vec![LinkId::MAX; routers * b],
        black_of: vec![LinkId::MAX; routers * c],
        blue_of: vec![LinkId::MAX; routers],
        host_limiter: Vec::new(),
        router_limiter: Vec::new(),
    };
    // A bundle of cables is one cable of their bandwidth.
    let mut cables = super::Cables::new(split_duplex, lat);
    wiring.cable(&mut cables, bw, (blue, black, green_cables));
    // Limiters as SimGrid names them: hosts' by index, routers' counting
    // down from 2N - 1 in creation order.
    if let Some((lbw, id)) = limiter {
        wiring.host_limiter = (0..n)
            .map(|h| cables.one(h as NodeId, lbw, format!("{id}_link_{h}_limiter")))
            .collect();
        wiring.router_limiter = (0..routers)
            .map(|r| {
                let k = 2 * n - 1 - r;
                cables.one(wiring.node(r), lbw, format!("{id}_link_{k}_limiter"))
            })
            .collect();
    }
    let mut specs: Vec<NodeSpec> = (0..n)
        .map(|h| NodeSpec {
            name: host_name(h),
            kind: NodeKind::Host,
        })
        .collect();
    specs.extend((0..routers).map(|r| NodeSpec {
        name: format!("router-{r}"),
        kind: NodeKind::Switch,
    }));
    Graph::with_cabled_router(&specs, cables.links, cables.names, Arc::new(wiring))
}

/// The dragonfly's routes, worked out pair by pair as SimGrid does (no
/// table of every pair: memory grows with the cables).
impl PairRouter for Wiring {
    fn route(&self, a: NodeId, z: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        self.route_hosts(a, z, out)
    }
}

/// The routers and hosts of G groups of C chassis of B routers of `per`
/// hosts, refused past the limits of a network routed pair by pair or the
/// hosts the platform names.
fn size(
    what: &str,
    g: usize,
    c: usize,
    b: usize,
    per: usize,
    hosts_given: usize,
) -> Result<(usize, usize)> {
    let limit = super::super::graph::MAX_FABRIC_NODES;
    let routers = g
        .checked_mul(c)
        .and_then(|x| x.checked_mul(b))
        .filter(|&r| r <= limit);
    let n = routers.and_then(|r| r.checked_mul(per));
    let (Some(routers), Some(n)) = (routers, n) else {
        return Err(fail!(
            Topology,
            File,
            "{what}: the DRAGONFLY has more than {limit} nodes"
        ));
    };
    // Links: each host's, the green, black and blue cables (two links
    // each at most), a limiter per host and router.
    let cables = [
        Some(n),
        g.checked_mul(c)
            .and_then(|x| x.checked_mul(b * (b - 1) / 2)),
        g.checked_mul(b)
            .and_then(|x| x.checked_mul(c * (c - 1) / 2)),
        Some(g * (g - 1) / 2),
    ]
    .iter()
    .try_fold(0usize, |a, x| x.and_then(|x| a.checked_add(x)));
    let links = cables
        .and_then(|x| x.checked_mul(2))
        .and_then(|x| x.checked_add(n + routers))
        .unwrap_or(usize::MAX);
    super::super::graph::check_fabric_size(
        &format!("{what}: the DRAGONFLY"),
        n.saturating_add(routers),
        links,
    )?;
    if n > hosts_given {
        return Err(fail!(
            Topology,
            File,
            "{what}: the DRAGONFLY has {n} hosts, the radical names {hosts_given}"
        ));
    }
    if g > b {
        // SimGrid's routes reach group t through the router of blade t.
        return Err(fail!(
            Topology,
            File,
            "{what}: a DRAGONFLY of {g} groups needs at least as many routers per chassis ({b})"
        ));
    }
    Ok((routers, n))
}

/// The dragonfly's shape (nodes: hosts 0..n, then routers R(g, c, b) =
/// g·C·B + c·B + b) and its links by where they leave: local[host] = (up,
/// down); green[(router, blade)], black[(router, chassis)] and
/// blue[router]: the link leaving the router that way.
struct Wiring {
    /// The platform's name for the cluster, for messages.
    what: String,
    g: usize,
    c: usize,
    b: usize,
    per: usize,
    n: usize,
    local: Vec<(LinkId, LinkId)>,
    green: Vec<LinkId>,
    black_of: Vec<LinkId>,
    blue_of: Vec<LinkId>,
    /// Limiter links of each host and router (empty: none).
    host_limiter: Vec<LinkId>,
    router_limiter: Vec<LinkId>,
}

impl Wiring {
    fn router(&self, gi: usize, ci: usize, bi: usize) -> usize {
        gi * self.c * self.b + ci * self.b + bi
    }

    fn node(&self, r: usize) -> NodeId {
        (self.n + r) as NodeId
    }

    /// Lays the cables: each host's, then the green, black and blue ones
    /// (bundles of (blue, black, green) cables each).
    fn cable(
        &mut self,
        cables: &mut super::Cables,
        bw: f64,
        (blue, black, green_cables): (usize, usize, usize),
    ) {
        let (g, c, b, per) = (self.g, self.c, self.b, self.per);
        let routers = g * c * b;
        for r in 0..routers {
            for k in 0..per {
                self.local[r * per + k] = cables.add(
                    (r * per + k) as NodeId,
                    self.node(r),
                    bw,
                    &format!("local_link_from_router_{r}_to_node_{k}"),
                );
            }
        }
        for gi in 0..g {
            for ci in 0..c {
                for j in 0..b {
                    for k in j + 1..b {
                        let (x, y) = (self.router(gi, ci, j), self.router(gi, ci, k));
                        let (up, down) = cables.add(
                            self.node(x),
                            self.node(y),
                            bw * green_cables as f64,
                            &format!("green_link_in_chassis_{ci}_between_routers_{j}_and_{k}"),
                        );
                        self.green[x * b + k] = up;
                        self.green[y * b + j] = down;
                    }
                }
            }
        }
        for gi in 0..g {
            for j in 0..c {
                for k in j + 1..c {
                    for l in 0..b {
                        let (x, y) = (self.router(gi, j, l), self.router(gi, k, l));
                        let (up, down) = cables.add(
                            self.node(x),
                            self.node(y),
                            bw * black as f64,
                            &format!(
                                "black_link_in_group_{gi}_between_chassis_{j}_and_{k}_blade_{l}"
                            ),
                        );
                        self.black_of[x * c + k] = up;
                        self.black_of[y * c + j] = down;
                    }
                }
            }
        }
        for i in 0..g {
            for j in i + 1..g {
                let (x, y) = (i * c * b + j, j * c * b + i);
                let (up, down) = cables.add(
                    self.node(x),
                    self.node(y),
                    bw * blue as f64,
                    &format!("blue_link_between_group_{i}_and_{j}_routers_{x}_and_{y}"),
                );
                self.blue_of[x] = up;
                self.blue_of[y] = down;
            }
        }
    }

    /// A host's (group, chassis, blade).
    fn place(&self, h: usize) -> (usize, usize, usize) {
        let (c, b) = (self.c, self.b);
        let r = h / self.per;
        (r / (c * b), (r % (c * b)) / b, r % b)
    }

    /// Appends SimGrid's route from host `a` to host `z`.
    fn route_hosts(&self, a: NodeId, z: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        let (c, b) = (self.c, self.b);
        let router = |gi: usize, ci: usize, bi: usize| self.router(gi, ci, bi);
        let (green, black_of, blue_of) = (&self.green, &self.black_of, &self.blue_of);
        let (a, z) = (a as usize, z as usize);
        let (sg, sc, sb) = self.place(a);
        let (tg, tc, tb) = self.place(z);
        let target = router(tg, tc, tb);
        // Limiters where SimGrid puts them: the sender's, a router's
        // before each hop it sends on (after, for the blue hop), the
        // target router's, the receiver's.
        let lim = |out: &mut Vec<LinkId>, r: usize| out.extend(self.router_limiter.get(r));
        let start = out.len();
        out.extend(self.host_limiter.get(a));
        out.push(self.local[a].0);
        // The router the route is at, as SimGrid counts it.
        let (mut cg, mut cc, mut cb) = (sg, sc, sb);
        if router(sg, sc, sb) != target {
            if tg != sg {
                if cb != tg {
                    lim(out, router(cg, cc, cb));
                    out.push(green[router(cg, cc, cb) * b + tg]);
                    cb = tg;
                }
                if cc != 0 {
                    lim(out, router(cg, cc, cb));
                    out.push(black_of[router(cg, cc, cb) * c]);
                    cc = 0;
                }
                out.push(blue_of[router(cg, cc, cb)]);
                lim(out, router(cg, cc, cb));
                (cg, cc, cb) = (tg, 0, sg);
            }
            if tb != cb {
                lim(out, router(cg, cc, cb));
                out.push(green[router(cg, cc, cb) * b + tb]);
                (cc, cb) = (0, tb);
            }
            if tc != cc {
                lim(out, router(cg, cc, cb));
                out.push(black_of[router(cg, cc, cb) * c + tc]);
            }
        }
        lim(out, target);
        out.push(self.local[z].1);
        out.extend(self.host_limiter.get(z));
        if out[start..].contains(&LinkId::MAX) {
            out.truncate(start);
            return Err(fail!(
                Topology,
                File,
                "{}: no DRAGONFLY route from host {a} to host {z} (an internal error)",
                self.what
            ));
        }
        Ok(())
    }
}
