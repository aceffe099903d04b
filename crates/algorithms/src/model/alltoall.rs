//! Lower bounds on any all-to-all (every rank sends a distinct `block_bytes`
//! block to every other rank), whatever the algorithm and routing.
//!
//! Bisection: cut a network in two halves A and B; |A|·|B| blocks must cross
//! from A to B over the directed links that leave A, so the time is at least
//! |A|·|B|·block / (capacity of those links). On an Nx×Ny mesh (Nx the longer
//! side) the cut across the middle of x has Ny links each way and
//! ⌊Nx/2⌋·⌈Nx/2⌉·Ny² blocks to carry each way, hence the A2AT paper's
//! T_lb = ⌊Nx/2⌋⌈Nx/2⌉·Ny (bandwidth and block normalised to 1); a torus
//! cut crosses twice as many links, T_lb/2.

use topocoll_topology::Topology;

/// ⌊n/2⌋·⌈n/2⌉.
fn half_product(n: usize) -> f64 {
    ((n / 2) * n.div_ceil(2)) as f64
}

/// The 2D mesh bound ⌊Nx/2⌋·⌈Nx/2⌉·Ny·block/bandwidth, seconds, with Nx the
/// longer of the two sides (either order may be given).
pub fn mesh_2d(a: usize, b: usize, block_bytes: f64, bandwidth: f64) -> f64 {
    let (nx, ny) = if a >= b { (a, b) } else { (b, a) };
    half_product(nx) * ny as f64 * block_bytes / bandwidth
}

/// The 2D torus bound, half the mesh's, seconds.
pub fn torus_2d(a: usize, b: usize, block_bytes: f64, bandwidth: f64) -> f64 {
    mesh_2d(a, b, block_bytes, bandwidth) / 2.0
}

/// The N-dimensional grid bound, seconds: for each dimension d of size n_d,
/// the cut across its middle separates ⌊n_d/2⌋·⌈n_d/2⌉·(P/n_d)² pairs each way
/// over P/n_d links (twice as many when d wraps), giving
/// ⌊n_d/2⌋⌈n_d/2⌉·(P/n_d)·block/bandwidth (halved when d wraps); the bound
/// is the largest over d (the longest dimension on a mesh or a torus). With
/// two dimensions it is [`mesh_2d`] or [`torus_2d`]. Uniform link bandwidth.
pub fn grid(dims: &[usize], wrap: &[bool], block_bytes: f64, bandwidth: f64) -> f64 {
    let p: usize = dims.iter().product();
    dims.iter()
        .zip(wrap)
        .filter(|(&n, _)| n > 1)
        .map(|(&n, &w)| {
            let t = half_product(n) * (p / n) as f64 * block_bytes / bandwidth;
            if w {
                t / 2.0
            } else {
                t
            }
        })
        .fold(0.0, f64::max)
}

/// [`grid`]'s bound when blocks are made of indivisible elements: a transfer
/// carries whole elements, so of the E elements that must cross a cut over L
/// directed links, the busiest link carries at least ⌈E/L⌉. Seconds, for
/// blocks of `block_elements` elements of `elem_bytes` each. It exceeds
/// [`grid`]'s only where E/L is fractional: on an Nx×Ny torus with Nx ≡ 2
/// (mod 4) and Ny and the block odd, (Nx/2)²·Ny·block/2 elements per link
/// round up by half an element.
pub fn grid_whole_elements(
    dims: &[usize],
    wrap: &[bool],
    block_elements: u64,
    elem_bytes: f64,
    bandwidth: f64,
) -> f64 {
    let p = dims.iter().product::<usize>() as u128;
    dims.iter()
        .zip(wrap)
        .filter(|(&n, _)| n > 1)
        .map(|(&n, &w)| {
            let n128 = n as u128;
            let others = p / n128;
            let half = ((n / 2) * n.div_ceil(2)) as u128;
            let elements = half * others * others * block_elements as u128;
            let links = others * if w { 2 } else { 1 };
            elements.div_ceil(links) as f64 * elem_bytes / bandwidth
        })
        .fold(0.0, f64::max)
}

/// The hypercube bound, seconds: the cut across one bit separates 2^(n−1)
/// nodes on each side, (2^(n−1))² blocks each way over 2^(n−1) links:
/// 2^(n−1)·block/bandwidth.
pub fn hypercube(dim: usize, block_bytes: f64, bandwidth: f64) -> f64 {
    if dim == 0 {
        return 0.0;
    }
    (1u64 << (dim - 1)) as f64 * block_bytes / bandwidth
}

/// The injection (and ejection) bound, seconds, on any topology: a node
/// holding k of the P ranks must send k·(P−k) blocks out over its outgoing
/// links, and receive as many over its incoming links.
pub fn injection(t: &Topology, block_bytes: f64) -> f64 {
    let p = t.num_ranks();
    let mut ranks_on = vec![0usize; t.num_nodes];
    for &n in &t.rank_node {
        ranks_on[n as usize] += 1;
    }
    let mut out_bw = vec![0.0f64; t.num_nodes];
    let mut in_bw = vec![0.0f64; t.num_nodes];
    // (A link inside a node carries none of what leaves it.)
    for l in t.links.iter().filter(|l| l.from != l.to) {
        out_bw[l.from as usize] += l.bandwidth;
        in_bw[l.to as usize] += l.bandwidth;
    }
    let mut best = 0.0f64;
    for n in 0..t.num_nodes {
        let k = ranks_on[n];
        if k == 0 || k == p {
            continue;
        }
        let bytes = (k * (p - k)) as f64 * block_bytes;
        let cap = out_bw[n].min(in_bw[n]);
        if cap > 0.0 {
            best = best.max(bytes / cap);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::link_load;
    use crate::{alltoall, build, Request};
    use topocoll_schedule::{Collective, Dtype, ReduceOp};
    use topocoll_topology::parse_spec;

    /// The link-load bound of the linear (direct, default-routed) all-to-all.
    fn linear_load(spec: &str, block: u64) -> f64 {
        let t = parse_spec(spec).unwrap();
        let req = Request::new(
            Collective::Alltoall,
            t.num_ranks(),
            block,
            Dtype::U8,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        let s = build(&alltoall::linear::ALGORITHM, &req).unwrap();
        link_load(&s, &t).unwrap().seconds
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-30)
    }

    #[test]
    fn whole_elements_round_up_only_where_a_cut_cannot_share_evenly() {
        let w = |dims: &[usize], wrap: bool, block| {
            grid_whole_elements(dims, &vec![wrap; dims.len()], block, 1.0, 1.0)
        };
        // 6×3 torus: (3·3)·3/2 = 13.5 blocks per link, so 14 with 1-element
        // blocks, 27 with 2, ⌈40.5⌉ = 41 with 3.
        assert_eq!(w(&[6, 3], true, 1), 14.0);
        assert_eq!(w(&[3, 6], true, 1), 14.0);
        assert_eq!(w(&[6, 3], true, 2), 27.0);
        assert_eq!(w(&[6, 3], true, 3), 41.0);
        // Everywhere else it is grid()'s bound times the block.
        for dims in [[4, 3], [8, 5], [6, 4], [5, 3], [7, 7], [10, 10]] {
            for wrap in [false, true] {
                for block in 1..=3 {
                    let g = grid(&dims, &[wrap; 2], block as f64, 1.0);
                    assert_eq!(w(&dims, wrap, block), g, "{dims:?} {wrap} {block}");
                }
            }
        }
        assert_eq!(
            w(&[6, 6, 3], true, 1),
            grid(&[6, 6, 3], &[true; 3], 1.0, 1.0)
        );
        assert_eq!(w(&[6, 3, 3], true, 1), 41.0);
        assert_eq!(grid(&[6, 3, 3], &[true; 3], 1.0, 1.0), 40.5);
    }

    #[test]
    fn paper_normalisation() {
        // T_lb = ⌊Nx/2⌋⌈Nx/2⌉Ny with unit block and bandwidth.
        assert_eq!(mesh_2d(5, 3, 1.0, 1.0), 2.0 * 3.0 * 3.0);
        assert_eq!(mesh_2d(3, 5, 1.0, 1.0), 18.0);
        assert_eq!(mesh_2d(4, 4, 1.0, 1.0), 16.0);
        assert_eq!(torus_2d(7, 7, 1.0, 1.0), 3.0 * 4.0 * 7.0 / 2.0);
        assert_eq!(grid(&[5, 3], &[false, false], 1.0, 1.0), 18.0);
        assert_eq!(grid(&[3, 5], &[true, true], 1.0, 1.0), 9.0);
        assert_eq!(hypercube(4, 1.0, 1.0), 8.0);
        assert_eq!(hypercube(0, 1.0, 1.0), 0.0);
    }

    /// On a mesh, dimension-order routing of a direct all-to-all loads the
    /// middle links of the longest dimension exactly to the bisection bound.
    #[test]
    fn mesh_closed_form_matches_link_load() {
        for nx in 1..=7 {
            for ny in 1..=7 {
                let spec = format!("mesh:{nx}x{ny}");
                let ll = linear_load(&spec, 100);
                let cf = mesh_2d(nx, ny, 100.0, 1e9);
                assert!(close(ll, cf), "{spec}: link load {ll} vs closed form {cf}");
                assert!(close(grid(&[nx, ny], &[false, false], 100.0, 1e9), cf));
            }
        }
        for spec in ["mesh:4x3x2", "mesh:2x2x2", "mesh:5x2x3", "mesh:6"] {
            let t = parse_spec(spec).unwrap();
            let topocoll_topology::Kind::Grid(g) = &t.kind else {
                unreachable!()
            };
            let ll = linear_load(spec, 100);
            let cf = grid(&g.dims, &g.wrap, 100.0, 1e9);
            assert!(close(ll, cf), "{spec}: link load {ll} vs closed form {cf}");
        }
    }

    /// On a torus with odd sides every shortest route is unique and balanced:
    /// the link load is T_lb/2 exactly. With an even side the default tie rule
    /// sends every half-ring block the + way, at or above the bound.
    #[test]
    fn torus_closed_form_against_link_load() {
        for nx in 1..=7 {
            for ny in 1..=7 {
                let spec = format!("torus:{nx}x{ny}");
                let ll = linear_load(&spec, 64);
                let cf = torus_2d(nx, ny, 64.0, 1e9);
                if nx % 2 == 1 && ny % 2 == 1 {
                    assert!(close(ll, cf), "{spec}: link load {ll} vs closed form {cf}");
                } else {
                    assert!(ll >= cf * (1.0 - 1e-12), "{spec}: {ll} < {cf}");
                }
            }
        }
        let ll = linear_load("torus:3x5x7", 10);
        assert!(close(ll, grid(&[3, 5, 7], &[true; 3], 10.0, 1e9)));
    }

    #[test]
    fn hypercube_closed_form_matches_link_load() {
        for n in 0..=6 {
            let ll = linear_load(&format!("hypercube:{n}"), 10);
            assert!(close(ll, hypercube(n, 10.0, 1e9)), "n={n}: {ll}");
        }
    }

    #[test]
    fn injection_bound() {
        let t = parse_spec("mesh:3x3").unwrap();
        // The corner has 2 links out: 8 blocks over 2 links.
        assert!(close(injection(&t, 10.0), 8.0 * 10.0 / 2e9));
    }
}
