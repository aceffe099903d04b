//! The MPI world of this process: initialisation, the collectives the
//! backend itself uses (barriers, maxima), the receive failure notices land
//! in, and the process's exit.

use crate::error::{Error, Result, RunKind};
use mpi::ffi;
use std::os::raw::{c_int, c_void};
use std::time::{Duration, Instant};

/// The tag failure notices travel with; schedule tags are kept below it.
pub(super) const ABORT_TAG: c_int = 32767;
pub(super) const NOTICE_BYTES: usize = 1024;

/// The MPI world of this process.
pub struct World {
    pub(super) rank: usize,
    pub(super) size: usize,
    /// The receive failure notices land in, posted once for the process
    /// (not per run: cancelling a posted receive costs more than a small
    /// collective), and posted again only after a notice arrived.
    pub(super) notice: std::cell::UnsafeCell<Box<[u8; NOTICE_BYTES]>>,
    pub(super) notice_req: std::cell::Cell<ffi::MPI_Request>,
    // Dropped last: finalizes MPI.
    _universe: mpi::environment::Universe,
}

impl Drop for World {
    fn drop(&mut self) {
        let mut r = self.notice_req.get();
        // SAFETY: an unmatched notice receive is cancelled before MPI
        // finalizes (a completed one is already null).
        unsafe {
            if r != ffi::RSMPI_REQUEST_NULL {
                ffi::MPI_Cancel(&mut r);
                ffi::MPI_Wait(&mut r, std::ptr::null_mut());
            }
        }
    }
}

pub(super) fn world() -> ffi::MPI_Comm {
    // SAFETY: a constant the MPI library initialises.
    unsafe { ffi::RSMPI_COMM_WORLD }
}

/// Where each rank's bytes start among those gathered, and their total;
/// `None` past what MPI's int offsets reach.
fn offsets(lens: &[c_int]) -> Option<(Vec<c_int>, usize)> {
    let mut offsets = Vec::with_capacity(lens.len());
    let mut total: usize = 0;
    for &l in lens {
        offsets.push(c_int::try_from(total).ok()?);
        total += l as usize;
    }
    Some((offsets, total))
}

// An empty vector's pointer is 1, which Open MPI reads as MPI_IN_PLACE:
// the buffers handed to a gather are never empty.

/// A buffer for `total` gathered bytes, one byte more.
fn receive_buffer(total: usize) -> Vec<u8> {
    vec![0u8; total + 1]
}

/// `mine` to send, or one spare byte in place of nothing (none is sent).
fn send_buffer(mine: &[u8]) -> &[u8] {
    const SPARE: &[u8] = &[0];
    if mine.is_empty() {
        SPARE
    } else {
        mine
    }
}

/// The gathered bytes `all`, rank by rank.
fn split(all: &[u8], lens: &[c_int], offsets: &[c_int]) -> Vec<Vec<u8>> {
    lens.iter()
        .zip(offsets)
        .map(|(&l, &o)| all[o as usize..(o + l) as usize].to_vec())
        .collect()
}

pub(super) fn check_rc(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::runtime(
            RunKind::Transport,
            format!("{what} returned MPI error {rc}"),
        ))
    }
}

impl World {
    /// Initialises MPI (once per process).
    pub fn init() -> Result<World> {
        let universe = mpi::initialize()
            .ok_or_else(|| Error::runtime(RunKind::Transport, "MPI was already initialised"))?;
        let (mut rank, mut size) = (0, 0);
        // SAFETY: plain queries on the world communicator. Errors come back
        // as return codes (reported naming the rank and operation) instead
        // of aborting the job.
        unsafe {
            ffi::MPI_Comm_set_errhandler(world(), ffi::RSMPI_ERRORS_RETURN);
            ffi::MPI_Comm_rank(world(), &mut rank);
            ffi::MPI_Comm_size(world(), &mut size);
        }
        let w = World {
            rank: rank as usize,
            size: size as usize,
            notice: std::cell::UnsafeCell::new(Box::new([0u8; NOTICE_BYTES])),
            notice_req: std::cell::Cell::new(unsafe { ffi::RSMPI_REQUEST_NULL }),
            _universe: universe,
        };
        w.post_notice();
        Ok(w)
    }

    /// Posts the receive for failure notices.
    pub(super) fn post_notice(&self) {
        let mut r: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: the notice buffer lives in the World, which cancels the
        // receive before it is freed; nothing else touches the buffer
        // while the receive is posted.
        unsafe {
            ffi::MPI_Irecv(
                (*self.notice.get()).as_mut_ptr() as *mut c_void,
                NOTICE_BYTES as c_int,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                ABORT_TAG,
                world(),
                &mut r,
            );
        }
        self.notice_req.set(r);
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn barrier(&self) {
        // SAFETY: collective on the world communicator.
        unsafe { ffi::MPI_Barrier(world()) };
    }

    /// A barrier that sleeps while it waits (1 ms polls), leaving the CPU to
    /// whatever runs meanwhile (bench: the threads backend inside rank 0).
    pub fn sleepy_barrier(&self) {
        let mut req: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: a non-blocking barrier polled to completion.
        unsafe {
            ffi::MPI_Ibarrier(world(), &mut req);
            let mut flag = 0;
            loop {
                ffi::MPI_Test(&mut req, &mut flag, std::ptr::null_mut());
                if flag != 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Element-wise maximum over ranks, in place.
    pub fn max_in_place(&self, v: &mut [f64]) {
        let send = v.to_vec();
        // SAFETY: buffers of v.len() doubles on every rank.
        unsafe {
            ffi::MPI_Allreduce(
                send.as_ptr() as *const c_void,
                v.as_mut_ptr() as *mut c_void,
                v.len() as c_int,
                ffi::RSMPI_DOUBLE,
                ffi::RSMPI_MAX,
                world(),
            );
        }
    }

    pub fn sum_u64(&self, x: u64) -> u64 {
        let mut out = 0u64;
        // SAFETY: one u64 on every rank.
        unsafe {
            ffi::MPI_Allreduce(
                &x as *const u64 as *const c_void,
                &mut out as *mut u64 as *mut c_void,
                1,
                ffi::RSMPI_UINT64_T,
                ffi::RSMPI_SUM,
                world(),
            );
        }
        out
    }

    /// Whether every rank passes `ok`.
    pub fn all_true(&self, ok: bool) -> bool {
        let x = u64::from(!ok);
        self.sum_u64(x) == 0
    }

    /// Every rank's `mine`, in rank order, on rank 0 (an empty list on the
    /// others): the bytes each process of a spread command computed.
    pub fn gather_bytes(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let len = self.send_count(mine)?;
        let root = self.rank == 0;
        let mut lens = vec![0 as c_int; if root { self.size } else { 0 }];
        // SAFETY: one int from every rank into `size` ints on the root.
        let rc = unsafe {
            ffi::MPI_Gather(
                &len as *const c_int as *const c_void,
                1,
                ffi::RSMPI_INT32_T,
                lens.as_mut_ptr() as *mut c_void,
                1,
                ffi::RSMPI_INT32_T,
                0,
                world(),
            )
        };
        check_rc(rc, "MPI_Gather")?;
        let (offsets, total) = offsets(&lens).ok_or_else(|| {
            Error::runtime(RunKind::Transport, "over 2^31 bytes gathered on rank 0")
        })?;
        let mut all = receive_buffer(total);
        let send = send_buffer(mine);
        // SAFETY: each rank's `len` bytes into its slot of `all` on the root
        // (the counts and offsets just gathered).
        let rc = unsafe {
            ffi::MPI_Gatherv(
                send.as_ptr() as *const c_void,
                len,
                ffi::RSMPI_UINT8_T,
                all.as_mut_ptr() as *mut c_void,
                lens.as_ptr(),
                offsets.as_ptr(),
                ffi::RSMPI_UINT8_T,
                0,
                world(),
            )
        };
        check_rc(rc, "MPI_Gatherv")?;
        Ok(split(&all, &lens, &offsets))
    }

    /// Every rank's `mine`, in rank order, on every rank: what each process
    /// of a spread search found, which every process needs to go on with
    /// the same state.
    pub fn all_gather_bytes(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let len = self.send_count(mine)?;
        let mut lens = vec![0 as c_int; self.size];
        // SAFETY: one int from every rank into `size` ints on every rank.
        let rc = unsafe {
            ffi::MPI_Allgather(
                &len as *const c_int as *const c_void,
                1,
                ffi::RSMPI_INT32_T,
                lens.as_mut_ptr() as *mut c_void,
                1,
                ffi::RSMPI_INT32_T,
                world(),
            )
        };
        check_rc(rc, "MPI_Allgather")?;
        let (offsets, total) = offsets(&lens)
            .ok_or_else(|| Error::runtime(RunKind::Transport, "over 2^31 bytes gathered"))?;
        let mut all = receive_buffer(total);
        let send = send_buffer(mine);
        // SAFETY: each rank's `len` bytes into its slot of `all` on every
        // rank (the counts and offsets just gathered).
        let rc = unsafe {
            ffi::MPI_Allgatherv(
                send.as_ptr() as *const c_void,
                len,
                ffi::RSMPI_UINT8_T,
                all.as_mut_ptr() as *mut c_void,
                lens.as_ptr(),
                offsets.as_ptr(),
                ffi::RSMPI_UINT8_T,
                world(),
            )
        };
        check_rc(rc, "MPI_Allgatherv")?;
        Ok(split(&all, &lens, &offsets))
    }

    /// `mine`'s length as MPI counts it.
    fn send_count(&self, mine: &[u8]) -> Result<c_int> {
        c_int::try_from(mine.len()).map_err(|_| {
            Error::runtime(
                RunKind::Transport,
                format!(
                    "rank {}: {} bytes to gather, over 2^31",
                    self.rank,
                    mine.len()
                ),
            )
        })
    }

    /// Whether every rank has the same `h`.
    pub fn all_same(&self, h: u64) -> bool {
        let mut all = vec![0u64; self.size];
        // SAFETY: one u64 per rank.
        unsafe {
            ffi::MPI_Allgather(
                &h as *const u64 as *const c_void,
                1,
                ffi::RSMPI_UINT64_T,
                all.as_mut_ptr() as *mut c_void,
                1,
                ffi::RSMPI_UINT64_T,
                world(),
            );
        }
        all.iter().all(|&x| x == h)
    }
}

/// Ends the process, also after a failed run: waits (at most 10 s) until
/// every rank gets here, finalises MPI if they all did, and exits with
/// `code`. (After a timeout some rank may never arrive; exiting without
/// `MPI_Finalize` then lets mpirun end the job instead of hanging.)
pub fn exit_all(code: i32) -> ! {
    let mut req: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
    // SAFETY: non-blocking barrier polled to completion or a deadline.
    unsafe {
        ffi::MPI_Ibarrier(world(), &mut req);
        let t0 = Instant::now();
        let mut flag = 0;
        while flag == 0 && t0.elapsed() < Duration::from_secs(10) {
            ffi::MPI_Test(&mut req, &mut flag, std::ptr::null_mut());
            std::thread::sleep(Duration::from_millis(1));
        }
        if flag != 0 {
            ffi::MPI_Finalize();
        }
    }
    std::process::exit(code)
}

pub(super) fn w_rank() -> usize {
    let mut r = 0;
    unsafe { ffi::MPI_Comm_rank(world(), &mut r) };
    r as usize
}
