//! What each collective means: which buffers a rank has, what they hold at the
//! start, and what the output must hold at the end.
//!
//! Contributions are tokens: `Term { rank, offset }` stands for element
//! `offset` of rank `rank`'s initial data (its input buffer, or its output
//! buffer for the in-place collectives: bcast at the root, and the reductions).
//! An output element of a reduction holds a sum (a multiset) of tokens.

use super::sizes::{Sizes, SizesShape};
use crate::error::fail;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use topocoll_base::param;

/// A collective operation; roots are ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Collective {
    Alltoall,
    Allgather,
    Bcast {
        root: u32,
    },
    Reduce {
        root: u32,
    },
    Allreduce,
    ReduceScatter,
    Scatter {
        root: u32,
    },
    Gather {
        root: u32,
    },
    Barrier,
    Scan,
    Exscan,
    /// Alltoall with a count per pair of ranks (the schedule's [`Sizes`]).
    Alltoallv,
    /// Allgather with a count per rank (the schedule's [`Sizes`]).
    Allgatherv,
}

/// Every collective: its kind, its name as the command line and the
/// schedule files write it, and a line for `topocoll list`. The one place
/// a collective's name is spelled; in the order of [`CollectiveKind`]'s
/// variants (checked as the crate compiles).
const TABLE: [(CollectiveKind, &str, &str); 13] = [
    (
        CollectiveKind::Alltoall,
        "alltoall",
        "every rank sends a distinct block to every rank (--size: the block)",
    ),
    (
        CollectiveKind::Allgather,
        "allgather",
        "every rank's block ends up on every rank (--size: the block)",
    ),
    (
        CollectiveKind::Bcast,
        "bcast",
        "the root's buffer is copied to every rank (--size: the buffer)",
    ),
    (
        CollectiveKind::Reduce,
        "reduce",
        "the element-wise reduction of all buffers lands on the root (--size: the buffer)",
    ),
    (
        CollectiveKind::Allreduce,
        "allreduce",
        "the element-wise reduction of all buffers lands on every rank (--size: the buffer)",
    ),
    (
        CollectiveKind::ReduceScatter,
        "reduce_scatter",
        "rank r gets chunk r of the reduction of all buffers (--size: the whole buffer)",
    ),
    (
        CollectiveKind::Scatter,
        "scatter",
        "the root sends block r of its buffer to rank r (--size: the block)",
    ),
    (
        CollectiveKind::Gather,
        "gather",
        "rank r's block lands in block r of the root's buffer (--size: the block)",
    ),
    (
        CollectiveKind::Barrier,
        "barrier",
        "no rank leaves before every rank has entered; moves no data (--size is ignored)",
    ),
    (
        CollectiveKind::Scan,
        "scan",
        "rank r gets in_0 ∘ in_1 ∘ … ∘ in_r, element-wise (--size: the buffer)",
    ),
    (
        CollectiveKind::Exscan,
        "exscan",
        "rank r > 0 gets in_0 ∘ … ∘ in_(r-1); rank 0's output is left untouched (--size: the buffer)",
    ),
    (
        CollectiveKind::Alltoallv,
        "alltoallv",
        "rank s sends m[s][d] elements to rank d (--counts: a CSV matrix or a generator; --size: the generators' mean block)",
    ),
    (
        CollectiveKind::Allgatherv,
        "allgatherv",
        "rank r's c[r] elements end up on every rank (--counts: a CSV row or a generator; --size: the generators' mean block)",
    ),
];

const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        assert!(
            TABLE[i].0 as usize == i,
            "TABLE follows CollectiveKind's order"
        );
        i += 1;
    }
};

/// The collective names, with a line each, for `topocoll list`.
pub const COLLECTIVES: [(&str, &str); 13] = {
    let mut out = [("", ""); 13];
    let mut i = 0;
    while i < TABLE.len() {
        out[i] = (TABLE[i].1, TABLE[i].2);
        i += 1;
    }
    out
};

/// A collective without its root: what an algorithm implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveKind {
    Alltoall,
    Allgather,
    Bcast,
    Reduce,
    Allreduce,
    ReduceScatter,
    Scatter,
    Gather,
    Barrier,
    Scan,
    Exscan,
    Alltoallv,
    Allgatherv,
}

impl CollectiveKind {
    /// Every collective, in the order of [`COLLECTIVES`].
    pub const ALL: [CollectiveKind; 13] = {
        let mut out = [CollectiveKind::Alltoall; 13];
        let mut i = 0;
        while i < TABLE.len() {
            out[i] = TABLE[i].0;
            i += 1;
        }
        out
    };

    /// Parses a name as the command line writes it (`broadcast` and
    /// `reducescatter` too).
    pub fn parse(name: &str) -> Result<CollectiveKind> {
        // Two other spellings the command line has always taken.
        let name = match name {
            "broadcast" => "bcast",
            "reducescatter" => "reduce_scatter",
            other => other,
        };
        match TABLE.iter().find(|t| t.1 == name) {
            Some(t) => Ok(t.0),
            None => {
                let names: Vec<&str> = TABLE.iter().map(|t| t.1).collect();
                Err(fail!(
                    Schedule,
                    Collective,
                    "unknown collective '{name}'{} (one of: {})",
                    topocoll_base::error::did_you_mean(name, names.iter().copied()),
                    names.join(", ")
                ))
            }
        }
    }

    /// Its name as the command line writes it.
    pub fn name(self) -> &'static str {
        TABLE[self as usize].1
    }

    /// Whether it has a root (bcast, reduce, scatter, gather).
    pub fn is_rooted(self) -> bool {
        matches!(
            self,
            CollectiveKind::Bcast
                | CollectiveKind::Reduce
                | CollectiveKind::Scatter
                | CollectiveKind::Gather
        )
    }

    /// The collective with `root` (ignored by the unrooted ones).
    pub fn with_root(self, root: u32) -> Collective {
        match self {
            CollectiveKind::Alltoall => Collective::Alltoall,
            CollectiveKind::Allgather => Collective::Allgather,
            CollectiveKind::Bcast => Collective::Bcast { root },
            CollectiveKind::Reduce => Collective::Reduce { root },
            CollectiveKind::Allreduce => Collective::Allreduce,
            CollectiveKind::ReduceScatter => Collective::ReduceScatter,
            CollectiveKind::Scatter => Collective::Scatter { root },
            CollectiveKind::Gather => Collective::Gather { root },
            CollectiveKind::Barrier => Collective::Barrier,
            CollectiveKind::Scan => Collective::Scan,
            CollectiveKind::Exscan => Collective::Exscan,
            CollectiveKind::Alltoallv => Collective::Alltoallv,
            CollectiveKind::Allgatherv => Collective::Allgatherv,
        }
    }
}

impl std::fmt::Display for CollectiveKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl Collective {
    /// Parses a name; `root` applies to bcast, reduce, scatter and gather.
    pub fn parse(name: &str, root: u32) -> Result<Collective> {
        Ok(CollectiveKind::parse(name)?.with_root(root))
    }

    /// Which collective, without its root.
    pub fn kind(&self) -> CollectiveKind {
        match self {
            Collective::Alltoall => CollectiveKind::Alltoall,
            Collective::Allgather => CollectiveKind::Allgather,
            Collective::Bcast { .. } => CollectiveKind::Bcast,
            Collective::Reduce { .. } => CollectiveKind::Reduce,
            Collective::Allreduce => CollectiveKind::Allreduce,
            Collective::ReduceScatter => CollectiveKind::ReduceScatter,
            Collective::Scatter { .. } => CollectiveKind::Scatter,
            Collective::Gather { .. } => CollectiveKind::Gather,
            Collective::Barrier => CollectiveKind::Barrier,
            Collective::Scan => CollectiveKind::Scan,
            Collective::Exscan => CollectiveKind::Exscan,
            Collective::Alltoallv => CollectiveKind::Alltoallv,
            Collective::Allgatherv => CollectiveKind::Allgatherv,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    pub fn root(&self) -> Option<u32> {
        match *self {
            Collective::Bcast { root }
            | Collective::Reduce { root }
            | Collective::Scatter { root }
            | Collective::Gather { root } => Some(root),
            _ => None,
        }
    }

    /// Whether the collective combines contributions with an operator.
    pub fn is_reduction(&self) -> bool {
        matches!(
            self,
            Collective::Reduce { .. }
                | Collective::Allreduce
                | Collective::ReduceScatter
                | Collective::Scan
                | Collective::Exscan
        )
    }

    /// Whether it is a prefix reduction (scan, exscan): every partial
    /// result its schedule makes must be the reduction of a run of
    /// consecutive ranks, combined with the run beside it, so the result is
    /// `in_0 ∘ … ∘ in_r` in rank order under one fixed bracketing (the
    /// verifier holds every combine to this).
    pub fn is_prefix(&self) -> bool {
        matches!(self, Collective::Scan | Collective::Exscan)
    }

    /// Whether it moves no data (barrier): `--size` is ignored and its
    /// buffers are empty; the verifier proves its synchronisation instead.
    pub fn is_sync(&self) -> bool {
        matches!(self, Collective::Barrier)
    }

    /// The sizes a v-collective takes (alltoallv: a count per pair,
    /// allgatherv: a count per rank); `None` for the others, whose blocks
    /// are all `count` elements.
    pub fn sizes_shape(&self) -> Option<SizesShape> {
        match self {
            Collective::Alltoallv => Some(SizesShape::PerPair),
            Collective::Allgatherv => Some(SizesShape::PerRank),
            _ => None,
        }
    }

    /// Whether `--size` names the per-peer block (true) or the whole buffer.
    pub fn size_is_block(&self) -> bool {
        matches!(
            self,
            Collective::Alltoall
                | Collective::Allgather
                | Collective::Scatter { .. }
                | Collective::Gather { .. }
                | Collective::Alltoallv
                | Collective::Allgatherv
        )
    }

    /// Elements of a rank's input buffer (a v-collective's from its
    /// `sizes`, which the others ignore; none gives empty buffers).
    pub fn input_len(&self, p: usize, count: u64, rank: usize, sizes: Option<&Sizes>) -> u64 {
        if self.sizes_shape().is_some() {
            return sizes.map_or(0, |v| v.input_len(rank));
        }
        let p = p as u64;
        match *self {
            Collective::Alltoall => p * count,
            Collective::Allgather | Collective::Gather { .. } => count,
            Collective::Scatter { root } if rank as u32 == root => p * count,
            Collective::Scan | Collective::Exscan => count,
            _ => 0,
        }
    }

    /// Elements of a rank's output buffer (see [`Collective::input_len`]).
    pub fn output_len(&self, p: usize, count: u64, rank: usize, sizes: Option<&Sizes>) -> u64 {
        if self.sizes_shape().is_some() {
            return sizes.map_or(0, |v| v.output_len(rank));
        }
        let p = p as u64;
        match *self {
            Collective::Alltoall | Collective::Allgather => p * count,
            Collective::Scatter { .. } => count,
            Collective::Gather { root } => {
                if rank as u32 == root {
                    p * count
                } else {
                    0
                }
            }
            Collective::Barrier => 0,
            _ => count,
        }
    }

    /// The buffer holding rank's own data at the start, and its length.
    pub fn initial(
        &self,
        p: usize,
        count: u64,
        rank: usize,
        sizes: Option<&Sizes>,
    ) -> Option<(super::Buf, u64)> {
        use super::Buf;
        match *self {
            Collective::Alltoallv | Collective::Allgatherv => {
                Some((Buf::Input, self.input_len(p, count, rank, sizes)))
            }
            Collective::Alltoall
            | Collective::Allgather
            | Collective::Gather { .. }
            | Collective::Scan
            | Collective::Exscan => Some((Buf::Input, self.input_len(p, count, rank, None))),
            Collective::Barrier => None,
            Collective::Scatter { root } => {
                (rank as u32 == root).then_some((Buf::Input, p as u64 * count))
            }
            Collective::Bcast { root } => (rank as u32 == root).then_some((Buf::Output, count)),
            Collective::Reduce { .. } | Collective::Allreduce | Collective::ReduceScatter => {
                Some((Buf::Output, count))
            }
        }
    }

    /// What rank's output must hold at the end (regions not listed are
    /// free). A v-collective's blocks are exactly its `sizes`: each sender's
    /// block, from where it lies in the sender's input, at its place in the
    /// receiver's output.
    pub fn expected(
        &self,
        p: usize,
        count: u64,
        rank: usize,
        sizes: Option<&Sizes>,
    ) -> Vec<Expect> {
        let pu = p as u64;
        let r = rank as u32;
        let all = |offset: u64| -> Vec<Term> {
            (0..p as u32).map(|q| Term { rank: q, offset }).collect()
        };
        let one = |q: u32, offset: u64| vec![Term { rank: q, offset }];
        match *self {
            Collective::Alltoall => (0..pu)
                .map(|j| Expect {
                    offset: j * count,
                    count,
                    terms: one(j as u32, rank as u64 * count),
                })
                .collect(),
            Collective::Allgather => (0..pu)
                .map(|j| Expect {
                    offset: j * count,
                    count,
                    terms: one(j as u32, 0),
                })
                .collect(),
            Collective::Gather { root } if r == root => (0..pu)
                .map(|j| Expect {
                    offset: j * count,
                    count,
                    terms: one(j as u32, 0),
                })
                .collect(),
            Collective::Gather { .. } => Vec::new(),
            Collective::Scatter { root } => vec![Expect {
                offset: 0,
                count,
                terms: one(root, rank as u64 * count),
            }],
            Collective::Bcast { root } => vec![Expect {
                offset: 0,
                count,
                terms: one(root, 0),
            }],
            Collective::Reduce { root } if r == root => vec![Expect {
                offset: 0,
                count,
                terms: all(0),
            }],
            Collective::Reduce { .. } => Vec::new(),
            Collective::Allreduce => vec![Expect {
                offset: 0,
                count,
                terms: all(0),
            }],
            Collective::ReduceScatter => {
                let (start, len) = chunk(count, p as u64, rank as u64);
                vec![Expect {
                    offset: start,
                    count: len,
                    terms: all(start),
                }]
            }
            Collective::Barrier => Vec::new(),
            Collective::Scan => vec![Expect {
                offset: 0,
                count,
                terms: (0..=r).map(|q| Term { rank: q, offset: 0 }).collect(),
            }],
            // MPI leaves rank 0's exscan output undefined; topocoll never
            // writes it (its expectation is empty, and no algorithm touches it).
            Collective::Exscan if r == 0 => Vec::new(),
            Collective::Exscan => vec![Expect {
                offset: 0,
                count,
                terms: (0..r).map(|q| Term { rank: q, offset: 0 }).collect(),
            }],
            Collective::Alltoallv | Collective::Allgatherv => {
                let Some(v) = sizes else {
                    return Vec::new();
                };
                (0..p)
                    .filter(|&from| v.block(from, rank) > 0)
                    .map(|from| Expect {
                        offset: v.recv_at(rank, from),
                        count: v.block(from, rank),
                        terms: one(from as u32, v.send_at(from, rank)),
                    })
                    .collect()
            }
        }
    }

    /// Checks the root against the rank count.
    pub fn check(&self, p: usize) -> Result<()> {
        if let Some(root) = self.root() {
            if root as usize >= p {
                return Err(fail!(
                    Schedule,
                    Collective,
                    "root {root} is not a rank (there are {p} ranks)"
                ));
            }
        }
        Ok(())
    }
}

/// One token: element `offset` of rank `rank`'s initial data (shifted by the
/// position within a run of elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Term {
    pub rank: u32,
    pub offset: u64,
}

/// Output elements `offset..offset+count` of a rank must each hold exactly the
/// sum of `terms`, element i of the run the terms shifted by i.
#[derive(Clone, Debug, PartialEq)]
pub struct Expect {
    pub offset: u64,
    pub count: u64,
    pub terms: Vec<Term>,
}

/// The standard split of `n` elements into `parts` chunks: the first `n % parts`
/// chunks get one element more. Returns (start, len) of chunk `i`.
pub fn chunk(n: u64, parts: u64, i: u64) -> (u64, u64) {
    let base = n / parts;
    let extra = n % parts;
    let start = i * base + i.min(extra);
    let len = base + u64::from(i < extra);
    (start, len)
}

/// Element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    U8,
    I32,
    I64,
    F32,
    F64,
}

impl Dtype {
    pub fn size(&self) -> u64 {
        match self {
            Dtype::U8 => 1,
            Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::F64 => 8,
        }
    }

    pub fn parse(s: &str) -> Result<Dtype> {
        Ok(match s {
            "u8" | "byte" => Dtype::U8,
            "i32" => Dtype::I32,
            "i64" => Dtype::I64,
            "f32" => Dtype::F32,
            "f64" => Dtype::F64,
            other => {
                return Err(fail!(
                    Schedule,
                    Collective,
                    "unknown --dtype '{other}' (u8, i32, i64, f32, f64)"
                ))
            }
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    pub fn is_float(&self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F64)
    }
}

/// Reduction operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReduceOp {
    Sum,
    Prod,
    Min,
    Max,
    Band,
    Bor,
    Bxor,
}

impl ReduceOp {
    pub fn parse(s: &str, dtype: Dtype) -> Result<ReduceOp> {
        let op = match s {
            "sum" => ReduceOp::Sum,
            "prod" => ReduceOp::Prod,
            "min" => ReduceOp::Min,
            "max" => ReduceOp::Max,
            "band" | "and" => ReduceOp::Band,
            "bor" | "or" => ReduceOp::Bor,
            "bxor" | "xor" => ReduceOp::Bxor,
            other => {
                return Err(fail!(
                    Schedule,
                    Collective,
                    "unknown --op '{other}' (sum, prod, min, max, band, bor, bxor)"
                ))
            }
        };
        if dtype.is_float() && op.is_bitwise() {
            return Err(param!(
                "op",
                " {s} needs an integer --dtype, not {}",
                dtype.name()
            ));
        }
        Ok(op)
    }

    /// Whether it works on bits (and so needs an integer type).
    pub fn is_bitwise(&self) -> bool {
        matches!(self, ReduceOp::Band | ReduceOp::Bor | ReduceOp::Bxor)
    }

    pub fn name(&self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Band => "band",
            ReduceOp::Bor => "bor",
            ReduceOp::Bxor => "bxor",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_exactly() {
        for n in 0..40u64 {
            for parts in 1..9u64 {
                let mut next = 0;
                for i in 0..parts {
                    let (s, l) = chunk(n, parts, i);
                    assert_eq!(s, next);
                    next = s + l;
                }
                assert_eq!(next, n);
            }
        }
    }
}
