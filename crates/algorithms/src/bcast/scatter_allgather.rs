//! Van de Geijn's broadcast (MPICH's long-message `scatter_ring_allgather`):
//! a binomial scatter of the buffer's P chunks (the standard split, chunk v
//! for relative rank v = (r − root) mod P), then a ring allgather. In the
//! scatter, v receives chunks v .. v+lowbit(v) from v − lowbit(v) and passes
//! chunks v+m .. v+2m to v + m for m = lowbit(v)/2, …, 1 (largest first). In
//! ring step s (0..P−2) v sends chunk v−s to v+1 and receives chunk v−s−1 from
//! v−1, as MPICH does, even when the scatter already brought it. Empty chunks
//! (count < P) send nothing.

use crate::error::Result;
use crate::{Algorithm, OpCount, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{chunk, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "scatter_allgather",
    "van de Geijn: binomial scatter of P chunks then ring allgather",
    build,
)
.ompi(9, "scatter_allgather_ring", "scatter_allgather_ring")
.mpich("MPIR_Bcast_intra_scatter_ring_allgather")
.ops(OpCount::PerChunkStep);

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let n = req.count;
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let root = req.collective.root().unwrap_or(0) as usize;
    let start = |i: usize| {
        if i >= p {
            n
        } else {
            chunk(n, p as u64, i as u64).0
        }
    };
    // Relative chunks a..b (clipped to P).
    let range = |a: usize, b: usize| {
        let (a, b) = (a.min(p), b.min(p));
        Region::output(start(a), start(b) - start(a))
    };
    let real = |v: usize| ((v + root) % p) as u32;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let low = if v == 0 {
            p.next_power_of_two()
        } else {
            1 << v.trailing_zeros()
        };
        let mut scatter_ops = Vec::new();
        let mut recv = Vec::new();
        if v != 0 {
            let region = range(v, v + low);
            if region.count > 0 {
                let id = prog.push(Op::recv(real(v - low), 0, region), &[]);
                recv.push(id);
                scatter_ops.push(id);
            }
        }
        let mut m = low >> 1;
        while m > 0 {
            if v + m < p {
                let region = range(v + m, v + 2 * m);
                if region.count > 0 {
                    scatter_ops.push(prog.push(Op::send(real(v + m), 0, region), &recv));
                }
            }
            m >>= 1;
        }
        // Ring allgather; the first step waits for the whole scatter.
        let mut deps = scatter_ops;
        let next = real(v + 1);
        let prev = real(v + p - 1);
        for step in 0..p - 1 {
            let tag = 1 + step as u32;
            let mine = (v + p - step) % p;
            let theirs = (v + 2 * p - step - 1) % p;
            let mut now = Vec::new();
            let out = range(mine, mine + 1);
            if out.count > 0 {
                now.push(prog.push(Op::send(next, tag, out), &deps));
            }
            let inc = range(theirs, theirs + 1);
            if inc.count > 0 {
                now.push(prog.push(Op::recv(prev, tag, inc), &deps));
            }
            if !now.is_empty() {
                deps = now;
            }
        }
    }
    Ok(s)
}
