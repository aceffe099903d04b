//! Where an MPI call's buffers sit in a schedule's three: which user buffer
//! is the schedule's input or output, and what must be copied in before
//! and out after (in-place calls, roots that do not receive, displacements
//! that are not the packed ones).
//!
//! A schedule's reductions start in its output (topocoll's in-place form);
//! its data-movement collectives read their input and write their output
//! ([`topocoll_schedule::Collective::initial`]).

use crate::abi::{Call, Coll};
use crate::exec::{give_buffer, take_buffer, Buffers};
use topocoll_schedule::{Buf, Schedule, Sizes};

/// One call's buffers, with what goes back to the caller afterwards.
pub struct Layout {
    pub bufs: Buffers,
    /// Memory this call owns (temporary inputs and outputs).
    owned: Vec<Vec<u8>>,
    /// (from the schedule's output at byte offset, to the caller's pointer, bytes).
    copy_out: Vec<(usize, *mut u8, usize)>,
}

impl Drop for Layout {
    fn drop(&mut self) {
        for v in self.owned.drain(..) {
            give_buffer(v);
        }
        give_buffer(std::mem::take(&mut self.bufs.scratch));
    }
}

impl Layout {
    /// Copies the results that do not land in place back to the caller.
    pub fn finish(self) {
        for (from, to, n) in &self.copy_out {
            // SAFETY: `from..from+n` lies in the output (checked when the
            // copy was planned), `to` is the caller's buffer of that size.
            unsafe { std::ptr::copy_nonoverlapping(self.bufs.output.add(*from), *to, *n) };
        }
    }
}

/// A caller's pointer and length as a slice.
///
/// # Safety
/// The MPI standard makes the caller's buffer hold `n` bytes there.
unsafe fn user<'a>(p: *const u8, n: usize) -> &'a [u8] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// Lays out `c` for schedule `s`, whose elements are `unit` bytes.
///
/// # Safety
/// The call's pointers are those of a correct MPI call of its shape.
pub unsafe fn lay_out(c: &Call, s: &Schedule, unit: usize) -> Result<Layout, String> {
    let coll = Coll::from_code(c.coll).ok_or("unknown collective")?;
    let rank = c.rank as usize;
    let p = c.size as usize;
    let ts = c.type_size as usize;
    let n = c.count as usize * ts;
    let len = |b: Buf| s.buffer_len(rank, b) as usize * unit;
    let (in_len, out_len) = (len(Buf::Input), len(Buf::Output));
    let send = c.sendbuf as *const u8;
    let recv = c.recvbuf as *mut u8;
    let root = rank == c.root as usize;
    let mut owned: Vec<Vec<u8>> = Vec::new();
    let mut copy_out = Vec::new();
    // A buffer of the call's own, holding `init` (zeros past it).
    let mut temp = |init: &[u8], size: usize| -> *mut u8 {
        let mut v = take_buffer(size.max(init.len()));
        v[..init.len()].copy_from_slice(init);
        let ptr = v.as_mut_ptr();
        owned.push(v);
        ptr
    };
    let (input, output): (*mut u8, *mut u8) = match coll {
        Coll::Allreduce | Coll::Bcast => {
            if coll == Coll::Allreduce && c.in_place == 0 {
                std::ptr::copy_nonoverlapping(send, recv, n);
            }
            (std::ptr::null_mut(), recv)
        }
        Coll::Reduce => {
            if root {
                if c.in_place == 0 {
                    std::ptr::copy_nonoverlapping(send, recv, n);
                }
                (std::ptr::null_mut(), recv)
            } else {
                (std::ptr::null_mut(), temp(user(send, n), out_len))
            }
        }
        Coll::ReduceScatterBlock => {
            // The whole vector is reduced in a buffer of the call's; this
            // rank's block goes back (topocoll's reducescatter leaves block r
            // at r·count).
            let whole = if c.in_place != 0 {
                recv as *const u8
            } else {
                send
            };
            let out = temp(user(whole, p * n), out_len);
            copy_out.push((rank * n, recv, n));
            (std::ptr::null_mut(), out)
        }
        Coll::Allgather => {
            let input = if c.in_place != 0 {
                temp(user(recv.add(rank * n), n), in_len)
            } else {
                send as *mut u8
            };
            (input, recv)
        }
        Coll::Alltoall => {
            let input = if c.in_place != 0 {
                temp(user(recv, p * n), in_len)
            } else {
                send as *mut u8
            };
            (input, recv)
        }
        Coll::Scatter => {
            let input = if root {
                send as *mut u8
            } else {
                std::ptr::null_mut()
            };
            let output = if root && c.in_place != 0 {
                temp(&[], out_len)
            } else {
                recv
            };
            (input, output)
        }
        Coll::Gather => {
            let input = if root && c.in_place != 0 {
                temp(user(recv.add(rank * n), n), in_len)
            } else {
                send as *mut u8
            };
            let output = if root { recv } else { temp(&[], out_len) };
            (input, output)
        }
        Coll::Barrier => (std::ptr::null_mut(), std::ptr::null_mut()),
        Coll::Scan | Coll::Exscan => {
            let input = if c.in_place != 0 {
                temp(user(recv, n), in_len)
            } else {
                send as *mut u8
            };
            (input, recv)
        }
        Coll::Allgatherv => {
            let sizes = s.sizes().ok_or("the schedule has no counts")?;
            let counts = std::slice::from_raw_parts(c.counts, p);
            let displs = std::slice::from_raw_parts(c.displs, p);
            let mine = counts[rank] as usize * ts;
            let input = if c.in_place != 0 {
                temp(user(recv.add(displs[rank] as usize * ts), mine), in_len)
            } else {
                send as *mut u8
            };
            let packed = (0..p).all(|q| sizes.recv_at(rank, q) as i64 == displs[q] as i64);
            let output = if packed {
                recv
            } else {
                for q in 0..p {
                    let at = sizes.recv_at(rank, q) as usize * ts;
                    copy_out.push((
                        at,
                        recv.add(displs[q] as usize * ts),
                        counts[q] as usize * ts,
                    ));
                }
                temp(&[], out_len)
            };
            (input, output)
        }
        Coll::Alltoallv => {
            let sizes = s.sizes().ok_or("the schedule has no counts")?;
            let rcounts = std::slice::from_raw_parts(c.rcounts, p);
            let rdispls = std::slice::from_raw_parts(c.rdispls, p);
            // In place, the data sent is what the receive buffer holds, laid
            // out by the receive counts and displacements.
            let (from, sdispls) = if c.in_place != 0 {
                (recv as *const u8, rdispls)
            } else {
                (send, std::slice::from_raw_parts(c.displs, p))
            };
            let input = if c.in_place == 0 && packed_send(sizes, rank, sdispls) {
                send as *mut u8
            } else {
                let buf = temp(&[], in_len);
                for (d, &sd) in sdispls.iter().enumerate() {
                    let k = sizes.block(rank, d) as usize * ts;
                    let at = sizes.send_at(rank, d) as usize * ts;
                    std::ptr::copy_nonoverlapping(from.add(sd as usize * ts), buf.add(at), k);
                }
                buf
            };
            let packed = (0..p).all(|q| sizes.recv_at(rank, q) as i64 == rdispls[q] as i64);
            let output = if packed && c.in_place == 0 {
                recv
            } else {
                for q in 0..p {
                    let at = sizes.recv_at(rank, q) as usize * ts;
                    copy_out.push((
                        at,
                        recv.add(rdispls[q] as usize * ts),
                        rcounts[q] as usize * ts,
                    ));
                }
                temp(&[], out_len)
            };
            (input, output)
        }
    };
    let scratch = take_buffer(len(Buf::Scratch));
    Ok(Layout {
        bufs: Buffers {
            input,
            input_len: if input.is_null() { 0 } else { in_len },
            output,
            output_len: if output.is_null() { 0 } else { out_len },
            scratch,
        },
        owned,
        copy_out,
    })
}

/// Whether the send displacements are the schedule's packed ones.
fn packed_send(sizes: &Sizes, rank: usize, sdispls: &[i32]) -> bool {
    sdispls
        .iter()
        .enumerate()
        .all(|(d, &x)| sizes.send_at(rank, d) as i64 == x as i64)
}
