//! Every layer's error as one type, for the command line and for callers
//! that act on a failure's cause whichever layer it came from.
//!
//! Each layer returns its own error (`topocoll_topology::Error`, ...); an
//! upper layer's holds the lower ones, flattened ([`topocoll_base::lift!`]).
//! This type is the top of that chain: [`Error::of`] finds the library
//! error in a link of an `anyhow` chain, and the accessors below answer
//! "which check", "which kind", "which parameter" without reading text.

use crate::{algorithms, optimize, runtime, schedule, sim, topology, workload};
use thiserror::Error;
use topocoll_base::lift;

pub use topocoll_base::error::{did_you_mean, IoCause};

/// An error of any layer of the library.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A shared error: a parameter, a file, a limit.
    #[error(transparent)]
    Base(#[from] topocoll_base::Error),
    #[error(transparent)]
    Topology(topology::Error),
    #[error(transparent)]
    Schedule(schedule::Error),
    #[error(transparent)]
    Algorithm(algorithms::Error),
    #[error(transparent)]
    Sim(sim::Error),
    #[error(transparent)]
    Workload(workload::Error),
    #[error(transparent)]
    Optimize(optimize::Error),
    #[error(transparent)]
    Runtime(runtime::Error),
}

lift!(topology => Topology, [Base]);
lift!(schedule => Schedule, [Base, Topology]);
lift!(algorithms => Algorithm, [Base, Topology, Schedule]);
lift!(sim => Sim, [Base, Topology, Schedule]);
lift!(workload => Workload, [Base, Topology, Schedule, Algorithm, Sim]);
lift!(optimize => Optimize, [Base, Topology, Schedule, Algorithm, Sim]);
lift!(runtime => Runtime, [Base, Topology, Schedule]);

impl Error {
    topocoll_base::shared_constructors!();

    /// The library error `link` is (one link of an `anyhow` chain),
    /// whichever layer's type it has.
    pub fn of(link: &(dyn std::error::Error + 'static)) -> Option<Error> {
        macro_rules! try_layers {
            ($($t:ty),*) => {
                $(if let Some(e) = link.downcast_ref::<$t>() {
                    return Some(e.clone().into());
                })*
            };
        }
        try_layers!(
            topocoll_base::Error,
            topology::Error,
            schedule::Error,
            algorithms::Error,
            sim::Error,
            workload::Error,
            optimize::Error,
            runtime::Error
        );
        None
    }

    /// What a topology error is about, if it is one.
    pub fn topology_kind(&self) -> Option<topology::TopologyKind> {
        match self {
            Error::Topology(t) => t.kind(),
            _ => None,
        }
    }

    /// The schedule error this is (a format's refusal or the verifier's),
    /// if it is one.
    pub fn schedule(&self) -> Option<&schedule::Error> {
        match self {
            Error::Schedule(s) => Some(s),
            _ => None,
        }
    }

    /// What a schedule-layer error is about, if it is one.
    pub fn schedule_kind(&self) -> Option<schedule::ScheduleKind> {
        self.schedule().and_then(schedule::Error::kind)
    }

    /// The verifier's finding this is, if it is one.
    pub fn verify(&self) -> Option<&schedule::VerifyError> {
        match self.schedule() {
            Some(schedule::Error::Verify(v)) => Some(v),
            _ => None,
        }
    }

    /// The check a verification failure broke, if it is one.
    pub fn verify_kind(&self) -> Option<schedule::VerifyKind> {
        self.verify().map(|v| v.kind)
    }

    /// What an algorithm error is about, if it is one.
    pub fn algorithm_kind(&self) -> Option<algorithms::AlgorithmKind> {
        match self {
            Error::Algorithm(a) => a.kind(),
            _ => None,
        }
    }

    /// Why an algorithm does not serve the request at all, if that is the
    /// error.
    pub fn unsupported(&self) -> Option<&str> {
        match self {
            Error::Algorithm(algorithms::Error::Unsupported { reason, .. }) => Some(reason),
            _ => None,
        }
    }

    /// What a simulator error is about, if it is one.
    pub fn sim_kind(&self) -> Option<sim::SimKind> {
        match self {
            Error::Sim(s) => s.kind(),
            _ => None,
        }
    }

    /// What a workload error is about, if it is one.
    pub fn workload_kind(&self) -> Option<workload::WorkloadKind> {
        match self {
            Error::Workload(w) => w.kind(),
            _ => None,
        }
    }

    /// What an optimiser error is about, if it is one.
    pub fn optimize_kind(&self) -> Option<optimize::OptimizeKind> {
        match self {
            Error::Optimize(o) => o.kind(),
            _ => None,
        }
    }

    /// Why a run failed, if it is a run's failure.
    pub fn run_kind(&self) -> Option<runtime::RunKind> {
        match self {
            Error::Runtime(r) => r.run_kind(),
            _ => None,
        }
    }
}

/// Shorthand for results of any layer's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
