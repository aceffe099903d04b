//! Meshes and tori of any number of dimensions, each dimension wrapping or not,
//! with dimension-order routing.

use super::{check_bandwidth, check_latency, Link, LinkId, NodeId};
use crate::error::fail;
use crate::error::Result;

/// Which way a route goes when the destination is exactly half way round an
/// even ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TorusTie {
    /// Always the + direction (topocoll's rule).
    #[default]
    Plus,
    /// SimGrid's rule: the + direction, except from coordinate n/2, which goes −.
    SimGrid,
}

/// A mesh/torus. Node ids are row-major, dimension 0 (x) fastest. Every node
/// has, per dimension, a + link and a − link (when the neighbour exists).
#[derive(Clone, Debug)]
pub struct Grid {
    pub dims: Vec<usize>,
    pub wrap: Vec<bool>,
    pub bandwidth: f64,
    pub latency: f64,
    pub tie: TorusTie,
    /// Link id of slot (node, dim, direction), or `NO_LINK`.
    slots: Vec<LinkId>,
    num_links: usize,
}

const NO_LINK: LinkId = LinkId::MAX;

/// The most link slots a grid may have (see `Grid::new`).
const MAX_LINK_SLOTS: usize = 1 << 26;
/// The most dimensions a grid may have.
const MAX_DIMS: usize = 64;

impl Grid {
    pub fn new(dims: Vec<usize>, wrap: Vec<bool>, bandwidth: f64, latency: f64) -> Result<Grid> {
        if dims.is_empty() {
            return Err(fail!(Topology, Shape, "grid: needs at least one dimension"));
        }
        if dims.len() != wrap.len() {
            return Err(fail!(
                Topology,
                Shape,
                "grid: {} dimensions but {} wrap flags",
                dims.len(),
                wrap.len()
            ));
        }
        // Routes walk the dimensions hop by hop: thousands of them (of size
        // 1, say) made a 16-node all-to-all run for minutes.
        if dims.len() > MAX_DIMS {
            return Err(fail!(
                Topology,
                Shape,
                "grid: {} dimensions are more than the {MAX_DIMS} supported",
                dims.len()
            ));
        }
        if let Some(d) = dims.iter().position(|&d| d == 0) {
            return Err(fail!(Topology, Shape, "grid: dimension {d} has size 0"));
        }
        // As many nodes as a schedule may have ranks (and no more, so that
        // a topology nobody can use is refused before its links are built).
        let nodes = dims
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .filter(|&n| n <= topocoll_base::limits::MAX_RANKS)
            .ok_or_else(|| {
                fail!(
                    Topology,
                    Shape,
                    "grid: {dims:?} has more nodes than the {} supported",
                    topocoll_base::limits::MAX_RANKS
                )
            })?;
        // A link slot per node, dimension and direction: the 2D torus of
        // 2^24 nodes has 2^26. More (many dimensions, even of size 1) would
        // take gigabytes before anything runs.
        if nodes.saturating_mul(dims.len()).saturating_mul(2) > MAX_LINK_SLOTS {
            return Err(fail!(Topology, Shape,
                "grid: {} dimensions of {nodes} nodes are more than the {MAX_LINK_SLOTS} link slots supported (nodes x dimensions x 2)",
                dims.len()
            ));
        }
        check_bandwidth("grid", bandwidth)?;
        check_latency("grid", latency)?;
        let nd = dims.len();
        let mut slots = vec![NO_LINK; nodes * nd * 2];
        let mut num_links = 0;
        for n in 0..nodes {
            for d in 0..nd {
                for dir in 0..2 {
                    if Self::neighbour_of(&dims, &wrap, n, d, dir == 0).is_some() {
                        slots[(n * nd + d) * 2 + dir] = num_links as LinkId;
                        num_links += 1;
                    }
                }
            }
        }
        Ok(Grid {
            dims,
            wrap,
            bandwidth,
            latency,
            tie: TorusTie::Plus,
            slots,
            num_links,
        })
    }

    pub fn num_nodes(&self) -> usize {
        self.dims.iter().product()
    }

    fn stride(dims: &[usize], d: usize) -> usize {
        dims[..d].iter().product()
    }

    /// Neighbour of node `n` one step along dimension `d` (+ or −), if a link exists.
    fn neighbour_of(
        dims: &[usize],
        wrap: &[bool],
        n: usize,
        d: usize,
        plus: bool,
    ) -> Option<usize> {
        let k = dims[d];
        if k == 1 {
            return None;
        }
        let s = Self::stride(dims, d);
        let c = (n / s) % k;
        let next = if plus {
            if c + 1 < k {
                c + 1
            } else if wrap[d] {
                0
            } else {
                return None;
            }
        } else if c > 0 {
            c - 1
        } else if wrap[d] {
            k - 1
        } else {
            return None;
        };
        Some(n - c * s + next * s)
    }

    /// The directed link leaving `n` along dimension `d` in direction `plus`.
    pub fn link(&self, n: NodeId, d: usize, plus: bool) -> Option<LinkId> {
        let id = self.slots[(n as usize * self.dims.len() + d) * 2 + usize::from(!plus)];
        (id != NO_LINK).then_some(id)
    }

    /// The translation one step along the last dimension, when that
    /// dimension wraps: node n goes to n + stride (mod nodes), an automorphism
    /// of the grid. Returns the stride and the image of every link (same
    /// dimension and direction, from the translated node).
    pub fn shift_last(&self) -> Option<(usize, Vec<LinkId>)> {
        let last = self.dims.len() - 1;
        if !self.wrap[last] || self.dims[last] < 2 {
            return None;
        }
        let nodes = self.num_nodes();
        let stride = Self::stride(&self.dims, last);
        let nd = self.dims.len();
        let mut image = vec![NO_LINK; self.num_links];
        for n in 0..nodes {
            let m = (n + stride) % nodes;
            for slot in 0..nd * 2 {
                let id = self.slots[n * nd * 2 + slot];
                if id != NO_LINK {
                    image[id as usize] = self.slots[m * nd * 2 + slot];
                }
            }
        }
        Some((stride, image))
    }

    pub fn links(&self) -> Vec<Link> {
        let mut links = Vec::with_capacity(self.num_links);
        for n in 0..self.num_nodes() {
            for d in 0..self.dims.len() {
                for plus in [true, false] {
                    if let Some(m) = Self::neighbour_of(&self.dims, &self.wrap, n, d, plus) {
                        links.push(Link {
                            from: n as NodeId,
                            to: m as NodeId,
                            bandwidth: self.bandwidth,
                            latency: self.latency,
                        });
                    }
                }
            }
        }
        links
    }

    /// Walks `hops` steps from `n` along `d`, appending the links; returns the end node.
    fn walk(
        &self,
        mut n: NodeId,
        d: usize,
        plus: bool,
        hops: usize,
        out: &mut Vec<LinkId>,
    ) -> NodeId {
        let s = Self::stride(&self.dims, d);
        let k = self.dims[d];
        for _ in 0..hops {
            out.push(self.link(n, d, plus).expect("walk stays on existing links"));
            let c = (n as usize / s) % k;
            let next = if plus { (c + 1) % k } else { (c + k - 1) % k };
            n = (n as usize - c * s + next * s) as NodeId;
        }
        n
    }

    /// Dimension-order route between two nodes: shortest way round each ring,
    /// ties at exactly half an even ring broken by `self.tie`.
    pub fn route_nodes(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) {
        let mut cur = a;
        for d in 0..self.dims.len() {
            let s = Self::stride(&self.dims, d);
            let k = self.dims[d];
            let ca = (cur as usize / s) % k;
            let cb = (b as usize / s) % k;
            if ca == cb {
                continue;
            }
            let (plus, hops) = if self.wrap[d] {
                let fwd = (cb + k - ca) % k;
                let bwd = k - fwd;
                if fwd < bwd {
                    (true, fwd)
                } else if bwd < fwd {
                    (false, bwd)
                } else {
                    let plus = match self.tie {
                        TorusTie::Plus => true,
                        TorusTie::SimGrid => ca != k / 2,
                    };
                    (plus, fwd)
                }
            } else if cb > ca {
                (true, cb - ca)
            } else {
                (false, ca - cb)
            };
            cur = self.walk(cur, d, plus, hops, out);
        }
        debug_assert_eq!(cur, b);
    }

    /// Route by signed offsets (see [`super::Topology::route_offset`]).
    pub fn route_offset(&self, a: NodeId, offset: &[i64], out: &mut Vec<LinkId>) -> Result<NodeId> {
        if offset.len() != self.dims.len() {
            return Err(fail!(
                Topology,
                Shape,
                "offset {offset:?} has {} components but the grid has {} dimensions",
                offset.len(),
                self.dims.len()
            ));
        }
        let mut cur = a;
        for (d, &o) in offset.iter().enumerate() {
            let k = self.dims[d] as i64;
            // unsigned_abs: i64::MIN's abs() wraps to itself in release builds.
            if o.unsigned_abs() >= k.max(1) as u64 && o != 0 {
                return Err(fail!(
                    Topology,
                    Shape,
                    "offset {o} in dimension {d} is not smaller than its size {k}"
                ));
            }
            if o == 0 {
                continue;
            }
            let s = Self::stride(&self.dims, d);
            let c = ((cur as usize / s) % k as usize) as i64;
            if self.wrap[d] {
                cur = self.walk(cur, d, o > 0, o.unsigned_abs() as usize, out);
            } else {
                let target = (c + o).rem_euclid(k);
                let plus = target > c;
                cur = self.walk(cur, d, plus, (target - c).unsigned_abs() as usize, out);
            }
        }
        Ok(cur)
    }

    pub fn describe(&self) -> String {
        let all_wrap = self.wrap.iter().all(|&w| w);
        let none_wrap = self.wrap.iter().all(|&w| !w);
        let kind = if all_wrap {
            "torus"
        } else if none_wrap {
            "mesh"
        } else {
            "mixed mesh/torus"
        };
        let dims: Vec<String> = self.dims.iter().map(|d| d.to_string()).collect();
        format!("{kind} {}", dims.join("x"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(g: &Grid, route: &[LinkId]) -> Vec<(NodeId, NodeId)> {
        let links = g.links();
        route
            .iter()
            .map(|&l| (links[l as usize].from, links[l as usize].to))
            .collect()
    }

    #[test]
    fn torus_half_ring_goes_plus() {
        let g = Grid::new(vec![4], vec![true], 1.0, 0.0).unwrap();
        let mut r = Vec::new();
        g.route_nodes(0, 2, &mut r);
        assert_eq!(endpoints(&g, &r), vec![(0, 1), (1, 2)]);
        r.clear();
        g.route_nodes(2, 0, &mut r);
        assert_eq!(endpoints(&g, &r), vec![(2, 3), (3, 0)]);
        r.clear();
        g.route_nodes(0, 3, &mut r);
        assert_eq!(endpoints(&g, &r), vec![(0, 3)]);
    }

    #[test]
    fn simgrid_tie_goes_minus_from_half() {
        let mut g = Grid::new(vec![4], vec![true], 1.0, 0.0).unwrap();
        g.tie = TorusTie::SimGrid;
        let mut r = Vec::new();
        g.route_nodes(2, 0, &mut r);
        assert_eq!(endpoints(&g, &r), vec![(2, 1), (1, 0)]);
        r.clear();
        g.route_nodes(0, 2, &mut r);
        assert_eq!(endpoints(&g, &r), vec![(0, 1), (1, 2)]);
    }

    #[test]
    fn dimension_order_x_then_y() {
        let g = Grid::new(vec![3, 3], vec![false, false], 1.0, 0.0).unwrap();
        let mut r = Vec::new();
        g.route_nodes(0, 8, &mut r);
        assert_eq!(endpoints(&g, &r), vec![(0, 1), (1, 2), (2, 5), (5, 8)]);
    }

    #[test]
    fn signed_offsets() {
        let t = Grid::new(vec![4, 4], vec![true, true], 1.0, 0.0).unwrap();
        let mut r = Vec::new();
        // −2 on a ring of 4 goes the − way, two hops, through the wrap.
        assert_eq!(t.route_offset(0, &[-2, 0], &mut r).unwrap(), 2);
        assert_eq!(endpoints(&t, &r), vec![(0, 3), (3, 2)]);
        let m = Grid::new(vec![4, 4], vec![false, false], 1.0, 0.0).unwrap();
        r.clear();
        // +3 from x=2 on a mesh of 4 wraps to x=1: reached going −.
        assert_eq!(m.route_offset(2, &[3, 0], &mut r).unwrap(), 1);
        assert_eq!(endpoints(&m, &r), vec![(2, 1)]);
        assert!(m.route_offset(0, &[4, 0], &mut r).is_err());
        assert!(m.route_offset(0, &[1], &mut r).is_err());
    }

    #[test]
    fn mesh_has_no_boundary_links() {
        let m = Grid::new(vec![3, 2], vec![false, false], 1.0, 0.0).unwrap();
        // 2 rows of 2 x-edges and 3 y-edges, each both ways.
        assert_eq!(m.links().len(), (2 * 2 + 3) * 2);
        let t = Grid::new(vec![3, 2], vec![true, true], 1.0, 0.0).unwrap();
        assert_eq!(t.links().len(), 6 * 4);
    }
}
