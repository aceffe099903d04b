//! What a workload is made of, whatever file it was read from: per rank, a
//! sequence of actions, each remembering the line it came from so that an
//! error can name it, and each after the one before it (a trace's order)
//! or after the earlier actions it names (a graph's dependencies).
//!
//! Messages and collective calls are on a communicator: an index into the
//! workload's [`Workload::comms`], whose first is the world.

use topocoll_schedule::Collective;

/// Whether a call returns at once (`isend`, `irecv`: a request a later wait
/// completes) or when it is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Blocking,
    Immediate,
}

/// One action of a rank.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// The rank's CPU computes this many floating-point operations.
    Compute { flops: f64 },
    /// The rank does nothing for this long.
    Sleep { seconds: f64 },
    /// A message of `bytes` to rank `to` (world ranks) on communicator
    /// `comm`.
    Send {
        to: u32,
        tag: i64,
        comm: u32,
        bytes: u64,
        mode: Mode,
    },
    /// A message from rank `from`; its size is the matching send's (`bytes`
    /// is what the trace says, `None` where it does not know).
    Recv {
        from: u32,
        tag: i64,
        comm: u32,
        bytes: Option<u64>,
        mode: Mode,
    },
    /// Completes the oldest pending request of (source, destination, tag,
    /// communicator); none pending (completed already, or by a test)
    /// returns at once.
    Wait {
        src: u32,
        dst: u32,
        tag: i64,
        comm: u32,
    },
    /// Completes every pending request of the rank.
    WaitAll,
    /// A send to `to` and a receive from `from`, both with tag 0 on
    /// communicator `comm`, waited for together (MPI_Sendrecv).
    SendRecv {
        comm: u32,
        to: u32,
        send_bytes: u64,
        from: u32,
        recv_bytes: u64,
    },
    /// A collective call on every rank of its communicator.
    Call(Call),
}

/// A collective call as one rank makes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The collective, with its root (a rank of the communicator).
    pub collective: Collective,
    /// The communicator: an index into [`Workload::comms`].
    pub comm: u32,
    /// Bytes as a request takes them: the block per peer for alltoall,
    /// allgather, scatter and gather; the whole buffer otherwise (the
    /// largest block for the v-collectives).
    pub bytes: u64,
    /// alltoallv: the bytes this rank sends to each rank of the
    /// communicator; allgatherv: the bytes each contributes. Empty for the
    /// others.
    pub counts: Vec<u64>,
    /// Floating-point operations the rank computes after the call (SimGrid's
    /// reduction cost).
    pub flops: f64,
    /// A gatherv or scatterv, which topocoll has no collective of: the call
    /// is the alltoallv of its blocks (`counts`: this rank's row, only the
    /// root's column or, for the root of a scatterv, its whole row), as
    /// SMPI's nonblocking gatherv and scatterv post them, every message at
    /// once.
    pub rooted: Option<Rooted>,
}

/// A rooted v-collective replayed as the alltoallv of its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rooted {
    /// Every rank's block to the root.
    Gatherv { root: u32 },
    /// The root's block for each rank to it.
    Scatterv { root: u32 },
}

impl Rooted {
    pub fn name(&self) -> &'static str {
        match self {
            Rooted::Gatherv { .. } => "gatherv",
            Rooted::Scatterv { .. } => "scatterv",
        }
    }

    pub fn root(&self) -> u32 {
        match *self {
            Rooted::Gatherv { root } | Rooted::Scatterv { root } => root,
        }
    }
}

/// An action and the line of its file it was read from (from 1; in a
/// binary file, the place of its record, from 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub action: Action,
    pub line: u64,
    /// `None`: the action starts when the rank's actions before it let it,
    /// as a program runs. `Some`: it starts when these earlier steps of the
    /// rank (indices into its list) are done, and no others.
    pub after: Option<Vec<u32>>,
}

/// A workload: each rank's actions, in order.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub programs: Vec<Vec<Step>>,
    /// The file each rank's actions were read from.
    pub files: Vec<String>,
    /// The communicators its messages and calls are on, each its world
    /// ranks in the order of its own ranks; the first is the world.
    pub comms: Vec<Vec<u32>>,
    /// Communicators that are a job's world among others' (a job file's
    /// jobs together): their calls run on the network with their ranks
    /// placed, as the job's do alone.
    pub worlds: Vec<u32>,
}

impl Workload {
    /// A workload of these programs, every message and call on the world.
    pub fn on_world(programs: Vec<Vec<Step>>, files: Vec<String>) -> Workload {
        let world = (0..programs.len() as u32).collect();
        Workload {
            programs,
            files,
            comms: vec![world],
            worlds: Vec::new(),
        }
    }

    pub fn ranks(&self) -> usize {
        self.programs.len()
    }

    /// Communicator `c`'s world ranks, in its own rank order.
    pub fn comm(&self, c: u32) -> &[u32] {
        &self.comms[c as usize]
    }

    /// Where rank `r`'s step `step` was read: "FILE:LINE".
    pub fn at(&self, r: usize, step: &Step) -> String {
        format!("{}:{}", self.files[r], step.line)
    }
}
