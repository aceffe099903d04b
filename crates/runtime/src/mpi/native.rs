//! The MPI library's own collectives, run on a schedule's buffers: the
//! baseline a schedule's run is held against.

use super::world::{check_rc, w_rank, world, World};
use crate::error::{Error, Result, RunKind};
use crate::{Elem, RankBuffers};
use mpi::ffi;
use std::os::raw::{c_int, c_void};
use std::time::Instant;
use topocoll_schedule::{Collective, Dtype, ReduceOp, Schedule};

fn datatype(d: Dtype) -> ffi::MPI_Datatype {
    // SAFETY: constants the MPI library initialises.
    unsafe {
        match d {
            Dtype::U8 => ffi::RSMPI_UINT8_T,
            Dtype::I32 => ffi::RSMPI_INT32_T,
            Dtype::I64 => ffi::RSMPI_INT64_T,
            Dtype::F32 => ffi::RSMPI_FLOAT,
            Dtype::F64 => ffi::RSMPI_DOUBLE,
        }
    }
}

fn mpi_op(o: ReduceOp) -> ffi::MPI_Op {
    // SAFETY: constants the MPI library initialises.
    unsafe {
        match o {
            ReduceOp::Sum => ffi::RSMPI_SUM,
            ReduceOp::Prod => ffi::RSMPI_PROD,
            ReduceOp::Min => ffi::RSMPI_MIN,
            ReduceOp::Max => ffi::RSMPI_MAX,
            ReduceOp::Band => ffi::RSMPI_BAND,
            ReduceOp::Bor => ffi::RSMPI_BOR,
            ReduceOp::Bxor => ffi::RSMPI_BXOR,
        }
    }
}

/// The MPI function the native baseline calls for a collective.
pub fn native_name(c: Collective) -> &'static str {
    match c {
        Collective::Alltoall => "MPI_Alltoall",
        Collective::Allgather => "MPI_Allgather",
        Collective::Bcast { .. } => "MPI_Bcast",
        Collective::Reduce { .. } => "MPI_Reduce",
        Collective::Allreduce => "MPI_Allreduce",
        Collective::ReduceScatter => "MPI_Reduce_scatter",
        Collective::Scatter { .. } => "MPI_Scatter",
        Collective::Gather { .. } => "MPI_Gather",
        Collective::Barrier => "MPI_Barrier",
        Collective::Scan => "MPI_Scan",
        Collective::Exscan => "MPI_Exscan",
        Collective::Alltoallv => "MPI_Alltoallv",
        Collective::Allgatherv => "MPI_Allgatherv",
    }
}

/// Runs the MPI library's own collective for `s`'s shape on this rank's
/// buffers (reductions read a separate send buffer, as MPI requires without
/// MPI_IN_PLACE).
pub fn native<T: Elem>(s: &Schedule, b: &mut RankBuffers<T>, send: &[T]) -> Result<()> {
    let dt = datatype(s.dtype);
    let op = mpi_op(s.op);
    let c = world();
    let n = c_int::try_from(s.count)
        .map_err(|_| Error::runtime(RunKind::Transport, "count over 2^31 elements"))?;
    let inp = b.input.as_ptr() as *const c_void;
    let out = b.output.as_mut_ptr() as *mut c_void;
    let sp = send.as_ptr() as *const c_void;
    let me = w_rank();
    // A v-collective's counts and displacements as MPI takes them: this
    // rank's sends (row) and receives (column).
    let ints = |f: &dyn Fn(usize) -> u64| -> Result<Vec<c_int>> {
        (0..s.ranks)
            .map(|q| {
                c_int::try_from(f(q)).map_err(|_| {
                    Error::runtime(RunKind::Transport, "a count or offset over 2^31 elements")
                })
            })
            .collect()
    };
    let v = s.sizes();
    let (scounts, sdispls, rcounts, rdispls) = match v {
        Some(v) => (
            ints(&|q| v.block(me, q))?,
            ints(&|q| v.send_at(me, q))?,
            ints(&|q| v.block(q, me))?,
            ints(&|q| v.recv_at(me, q))?,
        ),
        None => Default::default(),
    };
    // SAFETY: buffer sizes follow the collective's definition (input_len,
    // output_len), which is what MPI expects for these calls.
    let rc = unsafe {
        match s.collective {
            Collective::Alltoall => ffi::MPI_Alltoall(inp, n, dt, out, n, dt, c),
            Collective::Allgather => ffi::MPI_Allgather(inp, n, dt, out, n, dt, c),
            Collective::Bcast { root } => ffi::MPI_Bcast(out, n, dt, root as c_int, c),
            Collective::Reduce { root } => ffi::MPI_Reduce(sp, out, n, dt, op, root as c_int, c),
            Collective::Allreduce => ffi::MPI_Allreduce(sp, out, n, dt, op, c),
            Collective::ReduceScatter => {
                let counts: Vec<c_int> = (0..s.ranks)
                    .map(|r| topocoll_schedule::chunk(s.count, s.ranks as u64, r as u64).1 as c_int)
                    .collect();
                let (start, _) = topocoll_schedule::chunk(s.count, s.ranks as u64, w_rank() as u64);
                ffi::MPI_Reduce_scatter(
                    sp,
                    out.cast::<T>().add(start as usize) as *mut c_void,
                    counts.as_ptr(),
                    dt,
                    op,
                    c,
                )
            }
            Collective::Scatter { root } => {
                ffi::MPI_Scatter(inp, n, dt, out, n, dt, root as c_int, c)
            }
            Collective::Gather { root } => {
                ffi::MPI_Gather(inp, n, dt, out, n, dt, root as c_int, c)
            }
            Collective::Barrier => ffi::MPI_Barrier(c),
            // Their own data is the input buffer, apart from the output.
            Collective::Scan => ffi::MPI_Scan(inp, out, n, dt, op, c),
            Collective::Exscan => ffi::MPI_Exscan(inp, out, n, dt, op, c),
            Collective::Alltoallv => ffi::MPI_Alltoallv(
                inp,
                scounts.as_ptr(),
                sdispls.as_ptr(),
                dt,
                out,
                rcounts.as_ptr(),
                rdispls.as_ptr(),
                dt,
                c,
            ),
            Collective::Allgatherv => ffi::MPI_Allgatherv(
                inp,
                scounts.first().copied().unwrap_or(0),
                dt,
                out,
                rcounts.as_ptr(),
                rdispls.as_ptr(),
                dt,
                c,
            ),
        }
    };
    check_rc(rc, native_name(s.collective))
}

/// Times the native collective like `bench` times a schedule: barrier, run,
/// per-iteration seconds of the slowest rank.
pub fn time_native<T: Elem>(
    w: &World,
    s: &Schedule,
    warmup: usize,
    iters: usize,
) -> Result<Vec<f64>> {
    let mut b = crate::initial_buffers::<T>(s, w.rank);
    let send = b.output.clone();
    let mut times = Vec::with_capacity(iters);
    for it in 0..warmup + iters {
        w.barrier();
        let t0 = Instant::now();
        native(s, &mut b, &send)?;
        if it >= warmup {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    w.max_in_place(&mut times);
    Ok(times)
}
