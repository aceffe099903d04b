//! Tofu: a 6D mesh/torus (X, Y, Z, a, b, c) with a×b×c = 2×3×2, and the virtual
//! 3D torus (X·a, Y·b, Z·c) of the allreduce paper (Figs. 4 and 5).
//!
//! The mapping folds each physical axis with its partner axis so that the
//! virtual ring closes without the X, Y, Z wrap-around links (which is why a
//! job cut out of the machine is still a torus):
//! - X with a (size 2): virtual v < X is (x = v, a = 0); the rest come back on
//!   the other plane, (x = 2X−1−v, a = 1). Z with c likewise.
//! - Y with b (size 3, a ring): virtual w < Y is (y = w, b = 0); the remaining
//!   2Y positions zig-zag back from y = Y−1 to 0 over b ∈ {1, 2}, each row
//!   visiting both, and the last one closes the ring through the b ring to b = 0.
//!
//! Neighbours in the virtual torus are then neighbours in 6D (tested
//! exhaustively for X, Y, Z in 1..6).

use super::{Grid, GridShape, NodeId};
use crate::error::fail;
use crate::error::Result;

#[derive(Clone, Debug)]
pub struct Tofu {
    /// Physical X, Y, Z.
    pub xyz: [usize; 3],
    /// The 6D grid, dimensions in the order X, Y, Z, a, b, c.
    pub grid: Grid,
}

impl Tofu {
    pub fn new(xyz: [usize; 3], bandwidth: f64, latency: f64) -> Result<Tofu> {
        if xyz.contains(&0) {
            return Err(fail!(
                Topology,
                Shape,
                "tofu: X, Y and Z must be at least 1, got {xyz:?}"
            ));
        }
        let dims = vec![xyz[0], xyz[1], xyz[2], 2, 3, 2];
        // X, Y, Z are tori; a and c are size-2 meshes; b is a ring of 3.
        let wrap = vec![true, true, true, false, true, false];
        Ok(Tofu {
            xyz,
            grid: Grid::new(dims, wrap, bandwidth, latency)?,
        })
    }

    pub fn virtual_shape(&self) -> GridShape {
        GridShape {
            dims: vec![2 * self.xyz[0], 3 * self.xyz[1], 2 * self.xyz[2]],
            wrap: vec![true; 3],
        }
    }

    /// Folds a virtual coordinate of a size-2 partner axis: returns (physical, partner).
    fn fold2(v: usize, n: usize) -> (usize, usize) {
        if v < n {
            (v, 0)
        } else {
            (2 * n - 1 - v, 1)
        }
    }

    /// Folds a virtual coordinate of the Y·b axis: returns (y, b).
    fn fold3(w: usize, n: usize) -> (usize, usize) {
        if w < n {
            return (w, 0);
        }
        let k = w - n;
        let row = k / 2;
        let y = n - 1 - row;
        let first = if row.is_multiple_of(2) { 1 } else { 2 };
        let b = if k.is_multiple_of(2) {
            first
        } else {
            3 - first
        };
        (y, b)
    }

    /// The 6D coordinates (X, Y, Z, a, b, c) of a virtual-torus coordinate.
    pub fn physical(&self, v: [usize; 3]) -> [usize; 6] {
        let (x, a) = Self::fold2(v[0], self.xyz[0]);
        let (y, b) = Self::fold3(v[1], self.xyz[1]);
        let (z, c) = Self::fold2(v[2], self.xyz[2]);
        [x, y, z, a, b, c]
    }

    /// Node (row-major over the 6D grid) of each rank (row-major over the virtual torus).
    pub fn rank_nodes(&self) -> Vec<NodeId> {
        let shape = self.virtual_shape();
        let p6 = GridShape {
            dims: self.grid.dims.clone(),
            wrap: self.grid.wrap.clone(),
        };
        (0..shape.size())
            .map(|r| {
                let v = shape.coords(r);
                p6.rank(&self.physical([v[0], v[1], v[2]])) as NodeId
            })
            .collect()
    }

    pub fn describe(&self) -> String {
        let v = self.virtual_shape().dims;
        format!(
            "tofu 6D {}x{}x{}x2x3x2 as virtual 3D torus {}x{}x{}",
            self.xyz[0], self.xyz[1], self.xyz[2], v[0], v[1], v[2]
        )
    }
}
