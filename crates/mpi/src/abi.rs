//! The codes and the call record shared with `shim.c`, which is the only
//! part of the library that knows an MPI library's ABI. Every number here
//! has its twin in the enums at the top of `shim.c`.

use std::os::raw::{c_int, c_void};
use topocoll_schedule::CollectiveKind;

/// An interposed collective (`shim.c`: `TC_ALLREDUCE`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coll {
    Allreduce,
    Bcast,
    Reduce,
    Allgather,
    ReduceScatterBlock,
    Alltoall,
    Scatter,
    Gather,
    Barrier,
    Scan,
    Exscan,
    Allgatherv,
    Alltoallv,
}

impl Coll {
    pub const ALL: [Coll; 13] = [
        Coll::Allreduce,
        Coll::Bcast,
        Coll::Reduce,
        Coll::Allgather,
        Coll::ReduceScatterBlock,
        Coll::Alltoall,
        Coll::Scatter,
        Coll::Gather,
        Coll::Barrier,
        Coll::Scan,
        Coll::Exscan,
        Coll::Allgatherv,
        Coll::Alltoallv,
    ];

    pub fn from_code(code: c_int) -> Option<Coll> {
        Coll::ALL.get(usize::try_from(code).ok()?).copied()
    }

    /// The topocoll collective that serves it (`MPI_Reduce_scatter_block`
    /// is topocoll's reducescatter of the whole vector).
    pub fn kind(self) -> CollectiveKind {
        match self {
            Coll::Allreduce => CollectiveKind::Allreduce,
            Coll::Bcast => CollectiveKind::Bcast,
            Coll::Reduce => CollectiveKind::Reduce,
            Coll::Allgather => CollectiveKind::Allgather,
            Coll::ReduceScatterBlock => CollectiveKind::ReduceScatter,
            Coll::Alltoall => CollectiveKind::Alltoall,
            Coll::Scatter => CollectiveKind::Scatter,
            Coll::Gather => CollectiveKind::Gather,
            Coll::Barrier => CollectiveKind::Barrier,
            Coll::Scan => CollectiveKind::Scan,
            Coll::Exscan => CollectiveKind::Exscan,
            Coll::Allgatherv => CollectiveKind::Allgatherv,
            Coll::Alltoallv => CollectiveKind::Alltoallv,
        }
    }

    pub fn from_kind(kind: CollectiveKind) -> Coll {
        Coll::ALL
            .into_iter()
            .find(|c| c.kind() == kind)
            .expect("every collective kind is interposed")
    }

    /// Whether it combines data (and takes an operator).
    pub fn reduces(self) -> bool {
        matches!(
            self,
            Coll::Allreduce | Coll::Reduce | Coll::ReduceScatterBlock | Coll::Scan | Coll::Exscan
        )
    }
}

/// An element type, by how it is combined (`shim.c`: `TC_I8`, ...).
/// `Opaque` elements are moved and never combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Opaque,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    Bool,
}

impl Kind {
    pub fn from_code(code: c_int) -> Kind {
        use Kind::*;
        [Opaque, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, Bool]
            .get(code as usize)
            .copied()
            .unwrap_or(Opaque)
    }
}

/// A predefined operator (`shim.c`: `TC_SUM`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MpiOp {
    Sum,
    Prod,
    Min,
    Max,
    Land,
    Lor,
    Lxor,
    Band,
    Bor,
    Bxor,
}

impl MpiOp {
    pub fn from_code(code: c_int) -> Option<MpiOp> {
        use MpiOp::*;
        [Sum, Prod, Min, Max, Land, Lor, Lxor, Band, Bor, Bxor]
            .get(usize::try_from(code).ok()?.checked_sub(1)?)
            .copied()
    }
}

/// Why a call went to the MPI library's own collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fallback {
    /// Decided in `shim.c` (codes 1–4).
    DerivedDatatype,
    UserOp,
    Intercommunicator,
    OpForType,
    /// Nothing configured serves this collective (no algorithm, table or schedule).
    NotConfigured,
    /// The configuration names the library's own collective (`native`).
    Native,
    /// The table has no decision at this size.
    OutsideTable,
    /// The chosen algorithm does not apply to this shape.
    NotApplicable,
    /// A message too large for one MPI count, or tags past `MPI_TAG_UB`.
    TooLarge,
    /// A call that moves nothing.
    Empty,
}

impl Fallback {
    pub fn from_shim(code: c_int) -> Fallback {
        match code {
            1 => Fallback::DerivedDatatype,
            2 => Fallback::UserOp,
            3 => Fallback::Intercommunicator,
            4 => Fallback::OpForType,
            _ => Fallback::from_code(code).unwrap_or(Fallback::NotConfigured),
        }
    }

    const OWN: [Fallback; 6] = [
        Fallback::NotConfigured,
        Fallback::Native,
        Fallback::OutsideTable,
        Fallback::NotApplicable,
        Fallback::TooLarge,
        Fallback::Empty,
    ];

    /// The code `topocoll_mpi_run` returns for it (the shim's own reasons
    /// are 1–4; these follow).
    pub fn code(self) -> c_int {
        match self {
            Fallback::DerivedDatatype => 1,
            Fallback::UserOp => 2,
            Fallback::Intercommunicator => 3,
            Fallback::OpForType => 4,
            other => 5 + Fallback::OWN.iter().position(|&f| f == other).unwrap() as c_int,
        }
    }

    fn from_code(code: c_int) -> Option<Fallback> {
        Fallback::OWN.get(usize::try_from(code - 5).ok()?).copied()
    }

    /// What the report says.
    pub fn describe(self) -> &'static str {
        match self {
            Fallback::DerivedDatatype => "derived or non-contiguous datatype",
            Fallback::UserOp => "user-defined or MAXLOC/MINLOC operator",
            Fallback::Intercommunicator => "intercommunicator",
            Fallback::OpForType => "operator not defined for the datatype here",
            Fallback::NotConfigured => "no algorithm, table or schedule for this collective",
            Fallback::Native => "the configuration chose the library's own",
            Fallback::OutsideTable => "size outside the table",
            Fallback::NotApplicable => "the chosen algorithm does not apply",
            Fallback::TooLarge => "a message over 2^31-1 bytes or a tag past MPI_TAG_UB",
            Fallback::Empty => "moves no data",
        }
    }
}

/// One call as `shim.c` describes it (`struct tc_call`).
#[repr(C)]
pub struct Call {
    pub coll: c_int,
    pub rank: c_int,
    pub size: c_int,
    pub root: c_int,
    pub sendbuf: *const c_void,
    pub recvbuf: *mut c_void,
    pub in_place: c_int,
    pub kind: c_int,
    pub op: c_int,
    /// Elements: per block for the block collectives (`recvcount` of
    /// `MPI_Reduce_scatter_block`), the whole buffer for the others, the
    /// largest block for the v-collectives.
    pub count: u64,
    pub type_size: u64,
    pub counts: *const c_int,
    pub displs: *const c_int,
    pub rcounts: *const c_int,
    pub rdispls: *const c_int,
    /// alltoallv: every rank's send counts, row = sender.
    pub matrix: *const c_int,
    pub ctx: *mut c_void,
}
