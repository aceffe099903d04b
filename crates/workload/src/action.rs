//! What a workload is made of, whatever file it was read from: per rank, a
//! sequence of actions, each remembering the line it came from so that an
//! error can name it, and each after the one before it (a trace's order)
//! or after the earlier actions it names (a graph's dependencies).

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
    /// A message of `bytes` to rank `to` (world ranks).
    Send {
        to: u32,
        tag: i64,
        bytes: u64,
        mode: Mode,
    },
    /// A message from rank `from`; its size is the matching send's (`bytes`
    /// is what the trace says, `None` where it does not know).
    Recv {
        from: u32,
        tag: i64,
        bytes: Option<u64>,
        mode: Mode,
    },
    /// Completes the oldest pending request of (source, destination, tag);
    /// none pending (completed already, or by a test) returns at once.
    Wait { src: u32, dst: u32, tag: i64 },
    /// Completes every pending request of the rank.
    WaitAll,
    /// A send to `to` and a receive from `from`, both with tag 0, waited
    /// for together (MPI_Sendrecv).
    SendRecv {
        to: u32,
        send_bytes: u64,
        from: u32,
        recv_bytes: u64,
    },
    /// A collective call on every rank of the world.
    Call(Call),
}

/// A collective call as one rank makes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The collective, with its root.
    pub collective: Collective,
    /// Bytes as a request takes them: the block per peer for alltoall,
    /// allgather, scatter and gather; the whole buffer otherwise (the
    /// largest block for the v-collectives).
    pub bytes: u64,
    /// alltoallv: the bytes this rank sends to each rank; allgatherv: the
    /// bytes every rank contributes. Empty for the others.
    pub counts: Vec<u64>,
    /// Floating-point operations the rank computes after the call (SimGrid's
    /// reduction cost).
    pub flops: f64,
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
}

impl Workload {
    pub fn ranks(&self) -> usize {
        self.programs.len()
    }

    /// Where rank `r`'s step `step` was read: "FILE:LINE".
    pub fn at(&self, r: usize, step: &Step) -> String {
        format!("{}:{}", self.files[r], step.line)
    }
}
