//! A process's part in running schedules: which backend runs them, the MPI
//! world when a backend needs one, buffers sized for the ranks this
//! process holds, timed iterations and the check of their results. `run`,
//! `bench` and `tune --calibrate` all execute through a [`Job`].

use crate::error::{Error, Result};
use crate::{threads, CheckReport, Elem, Options, Plan, RankBuffers};
use std::time::Instant;
use topocoll_schedule::Schedule;

/// Where a schedule's ranks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Every rank a thread of this process.
    Threads,
    /// One rank per MPI process, under mpirun (feature `mpi`).
    Mpi,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Threads => "threads",
            Backend::Mpi => "mpi",
        }
    }

    /// Whether this build has the backend (the MPI backend needs the `mpi`
    /// feature).
    pub fn available(self) -> bool {
        self == Backend::Threads || cfg!(feature = "mpi")
    }
}

/// The process's MPI world, when a backend needs it.
pub struct Job {
    #[cfg(feature = "mpi")]
    mpi: Option<crate::mpi::World>,
}

impl Job {
    /// MPI is started when a backend in `backends` is mpi or `mpi` asks for
    /// it (a benchmark of the MPI library's own collectives). A backend
    /// this build lacks is an error.
    pub fn new(backends: &[Backend], mpi: bool) -> Result<Job> {
        if let Some(b) = backends.iter().find(|b| !b.available()) {
            return Err(Error::invalid(format!(
                "backend {}: this build has no MPI",
                b.name()
            )));
        }
        #[cfg(feature = "mpi")]
        {
            let mpi = if mpi || backends.contains(&Backend::Mpi) {
                Some(crate::mpi::World::init()?)
            } else {
                None
            };
            Ok(Job { mpi })
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = mpi;
            Ok(Job {})
        }
    }

    /// This process's rank among the MPI processes (0 without MPI).
    pub fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.mpi {
            return w.rank();
        }
        0
    }

    /// The number of MPI processes, under MPI.
    pub fn size(&self) -> Option<usize> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.mpi {
            return Some(w.size());
        }
        None
    }

    /// Rank 0 reports.
    pub fn lead(&self) -> bool {
        self.rank() == 0
    }

    /// Waits for every process, sleeping (not spinning) meanwhile.
    pub fn sleepy_barrier(&self) {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.mpi {
            w.sleepy_barrier();
        }
    }

    /// Under MPI, ends every process with `code` (the others may be
    /// waiting for this one); without MPI, returns.
    pub fn exit_all(&self, code: i32) {
        #[cfg(feature = "mpi")]
        if self.mpi.is_some() {
            crate::mpi::exit_all(code);
        }
        let _ = code;
    }

    /// The schedule, once it has as many ranks as mpirun started (under
    /// MPI).
    pub fn fits(&self, s: &Schedule) -> Result<()> {
        match self.size() {
            Some(p) if s.ranks != p => Err(Error::invalid(format!(
                "the schedule has {} ranks but mpirun started {p} processes",
                s.ranks
            ))),
            _ => Ok(()),
        }
    }

    /// Fresh buffers of the ranks this process runs on `backend`: every
    /// rank on threads, its own under MPI. Refused where they would not fit
    /// in memory.
    pub fn fresh<T: Elem>(&self, backend: Backend, s: &Schedule) -> Result<Vec<RankBuffers<T>>> {
        let ranks: Vec<usize> = match backend {
            Backend::Threads => (0..s.ranks).collect(),
            Backend::Mpi => vec![self.rank()],
        };
        let bytes = ranks
            .iter()
            .fold(0u64, |a, &r| a.saturating_add(crate::buffer_bytes(s, r)));
        topocoll_base::memory::check(bytes, "the ranks' buffers")?;
        Ok(ranks
            .into_iter()
            .map(|r| crate::initial_buffers(s, r))
            .collect())
    }

    /// Runs `iters` timed iterations after `warmup` untimed ones; returns
    /// each timed iteration's seconds (under MPI the slowest rank's). With
    /// `reset`, inputs are refilled before each iteration (outside the
    /// timing).
    #[allow(clippy::too_many_arguments)]
    pub fn time_runs<T: Elem>(
        &self,
        backend: Backend,
        plan: &Plan,
        bufs: &mut [RankBuffers<T>],
        opts: &Options,
        warmup: usize,
        iters: usize,
        reset: bool,
    ) -> Result<Vec<f64>> {
        let s = plan.schedule;
        let mut times = Vec::with_capacity(iters);
        for it in 0..warmup + iters {
            if reset && it > 0 {
                match backend {
                    Backend::Threads => {
                        for (r, b) in bufs.iter_mut().enumerate() {
                            crate::reset_buffers(s, r, b);
                        }
                    }
                    Backend::Mpi => crate::reset_buffers(s, self.rank(), &mut bufs[0]),
                }
            }
            let dt = match backend {
                Backend::Threads => {
                    let t0 = Instant::now();
                    threads::run(plan, bufs, opts)?;
                    t0.elapsed().as_secs_f64()
                }
                Backend::Mpi => self.time_rank(plan, &mut bufs[0], opts)?,
            };
            if it >= warmup {
                times.push(dt);
            }
        }
        #[cfg(feature = "mpi")]
        if backend == Backend::Mpi {
            self.world().max_in_place(&mut times);
        }
        Ok(times)
    }

    #[cfg(feature = "mpi")]
    fn world(&self) -> &crate::mpi::World {
        self.mpi
            .as_ref()
            .expect("a job with the mpi backend has started MPI")
    }

    /// One MPI iteration of this process's rank, from a barrier.
    #[cfg(feature = "mpi")]
    fn time_rank<T: Elem>(
        &self,
        plan: &Plan,
        bufs: &mut RankBuffers<T>,
        opts: &Options,
    ) -> Result<f64> {
        let w = self.world();
        w.barrier();
        let t0 = Instant::now();
        crate::mpi::run_rank(w, plan, bufs, opts)?;
        Ok(t0.elapsed().as_secs_f64())
    }

    #[cfg(not(feature = "mpi"))]
    fn time_rank<T: Elem>(&self, _: &Plan, _: &mut RankBuffers<T>, _: &Options) -> Result<f64> {
        unreachable!("Job::new refuses the mpi backend in a build without MPI")
    }

    /// [`crate::check`] of one run's buffers: under MPI every rank checks
    /// its own, all must pass, and the report counts every rank's elements.
    pub fn check<T: Elem>(
        &self,
        backend: Backend,
        s: &Schedule,
        bufs: &[RankBuffers<T>],
    ) -> Result<CheckReport> {
        match backend {
            Backend::Threads => crate::check(s, bufs),
            Backend::Mpi => self.check_rank(s, &bufs[0]),
        }
    }

    #[cfg(feature = "mpi")]
    fn check_rank<T: Elem>(&self, s: &Schedule, bufs: &RankBuffers<T>) -> Result<CheckReport> {
        let w = self.world();
        let mine = crate::check_rank(s, self.rank(), bufs);
        // Every rank's check must pass, and allreduce outputs agree.
        let all = w.all_true(mine.is_ok());
        let mut rep = mine?;
        if !all {
            return Err(Error::runtime(
                crate::error::RunKind::Check,
                "check failed on another rank",
            ));
        }
        rep.ranks_identical = w.all_same(crate::output_hash(bufs));
        rep.elements = w.sum_u64(rep.elements);
        Ok(rep)
    }

    #[cfg(not(feature = "mpi"))]
    fn check_rank<T: Elem>(&self, _: &Schedule, _: &RankBuffers<T>) -> Result<CheckReport> {
        unreachable!("Job::new refuses the mpi backend in a build without MPI")
    }

    /// Times the MPI library's own collective for `s`'s collective, type
    /// and size (`bench --baseline native`), as [`Job::time_runs`]
    /// times a schedule; and the name of the MPI call.
    #[cfg(feature = "mpi")]
    pub fn time_native<T: Elem>(
        &self,
        s: &Schedule,
        warmup: usize,
        iters: usize,
    ) -> Result<(Vec<f64>, &'static str)> {
        let times = crate::mpi::time_native::<T>(self.world(), s, warmup, iters)?;
        Ok((times, crate::mpi::native_name(s.collective)))
    }
}
