//! Communicators: each rank's creations (a split or a duplicate of a
//! communicator it holds) matched across the ranks of the parent, as
//! `MPI_Comm_split` and `MPI_Comm_dup` make them.
//!
//! A rank names its communicators by handles: 0 is the world, and each
//! creation names the handle of the communicator it makes (its handle on
//! this rank: ranks of one split that get different communicators may use
//! the same handle, as an MPI program's variable). The creations on one
//! communicator are collective over it: the j-th creation of each of its
//! ranks is one call, all splits or all duplicates. A split puts the ranks
//! of each non-negative color in a communicator of their own, ordered by
//! key, then by rank in the parent (SMPI's `Comm::split`); a negative color
//! (`MPI_UNDEFINED`) gives the rank no communicator (`MPI_COMM_NULL`). A
//! duplicate has the parent's ranks in the parent's order.

use crate::error::{Error, Result};
use rustc_hash::FxHashMap;

/// How a creation makes its communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Make {
    Split { color: i64, key: i64 },
    Dup,
}

impl Make {
    fn name(self) -> &'static str {
        match self {
            Make::Split { .. } => "comm_split",
            Make::Dup => "comm_dup",
        }
    }
}

/// One rank's creation of a communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Creation {
    /// The handle it gives the new communicator (not 0, new on the rank).
    pub id: u32,
    /// The handle of the communicator it splits or duplicates.
    pub parent: u32,
    pub make: Make,
    /// Its line in the rank's file.
    pub line: u64,
}

/// What a rank's handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handle {
    /// A communicator (an index into [`Comms::comms`]), made at this line
    /// (0: the world, there from the start).
    Comm { comm: u32, line: u64 },
    /// `MPI_COMM_NULL`: the split at this line gave the rank no communicator.
    Null { line: u64 },
}

/// The communicators of a workload and each rank's handles of them.
#[derive(Clone, Debug)]
pub struct Comms {
    /// Each communicator's world ranks, in its own rank order; the world first.
    pub comms: Vec<Vec<u32>>,
    /// Each rank's handles.
    pub handles: Vec<FxHashMap<u32, Handle>>,
}

impl Comms {
    /// The world alone: `ranks` ranks, no creation.
    pub fn world(ranks: usize) -> Comms {
        let mut h = FxHashMap::default();
        h.insert(0, Handle::Comm { comm: 0, line: 0 });
        Comms {
            comms: vec![(0..ranks as u32).collect()],
            handles: vec![h; ranks],
        }
    }

    /// What rank `r`'s handle `h` names at `line` of `file`: its
    /// communicator, or the refusal of a handle not made before the line
    /// or that is `MPI_COMM_NULL`.
    pub fn at(&self, r: usize, h: u32, file: &str, line: u64) -> Result<u32> {
        match self.handles[r].get(&h) {
            Some(Handle::Comm { comm, line: made }) if *made < line => Ok(*comm),
            Some(Handle::Null { line: made }) if *made < line => Err(Error::parse(
                file,
                line,
                format!(
                    "communicator {h} is MPI_COMM_NULL on rank {r} (the comm_split at line {made} gave it a negative color)"
                ),
            )),
            _ => Err(Error::parse(
                file,
                line,
                format!(
                    "communicator {h} was never created on rank {r} (by a comm_split or comm_dup before this line)"
                ),
            )),
        }
    }
}

/// The communicators that `creations` (each rank's, in line order) make on
/// a world of `creations.len()` ranks; `files[r]` names rank r's file.
pub fn resolve(creations: &[Vec<Creation>], files: &[String]) -> Result<Comms> {
    let mut out = Comms::world(creations.len());
    check_handles(creations, files)?;
    // The handles each rank holds of each communicator, in its rank order.
    let mut held: Vec<Vec<u32>> = vec![vec![0; creations.len()]];
    let mut c = 0;
    while c < out.comms.len() {
        let members = out.comms[c].clone();
        let on: Vec<Vec<&Creation>> = members
            .iter()
            .zip(&held[c])
            .map(|(&m, &h)| {
                creations[m as usize]
                    .iter()
                    .filter(|x| x.parent == h)
                    .collect()
            })
            .collect();
        agree(&members, &on, files)?;
        for j in 0..on.first().map_or(0, Vec::len) {
            let calls: Vec<&Creation> = on.iter().map(|mine| mine[j]).collect();
            for (members, made) in made(&members, &calls, &mut out) {
                for (&m, x) in members.iter().zip(&made) {
                    let comm = out.comms.len() as u32;
                    let line = x.line;
                    out.handles[m as usize].insert(x.id, Handle::Comm { comm, line });
                }
                out.comms.push(members);
                held.push(made.iter().map(|x| x.id).collect());
            }
        }
        c += 1;
    }
    // A creation on a handle that names no communicator: one of a split that
    // gave the rank none, or made from such a one.
    for (r, mine) in creations.iter().enumerate() {
        for x in mine {
            if !matches!(out.handles[r].get(&x.parent), Some(Handle::Comm { .. })) {
                out.at(r, x.parent, &files[r], x.line)?;
                return Err(Error::parse(
                    &files[r],
                    x.line,
                    format!(
                        "{} of communicator {}, which rank {r} holds from a communicator that is MPI_COMM_NULL",
                        x.make.name(),
                        x.parent
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Refuses a creation whose handle is 0 or made before on the rank, or
/// whose parent the rank has not made before it.
fn check_handles(creations: &[Vec<Creation>], files: &[String]) -> Result<()> {
    for (r, mine) in creations.iter().enumerate() {
        let mut made = rustc_hash::FxHashSet::default();
        made.insert(0u32);
        for x in mine {
            if !made.contains(&x.parent) {
                return Err(Error::parse(
                    &files[r],
                    x.line,
                    format!(
                        "{} of communicator {}, which rank {r} has not created before this line",
                        x.make.name(),
                        x.parent
                    ),
                ));
            }
            if !made.insert(x.id) {
                return Err(Error::parse(
                    &files[r],
                    x.line,
                    format!(
                        "{} makes communicator {}, a handle rank {r} holds already (0 is the world)",
                        x.make.name(),
                        x.id
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses creations on one communicator that its ranks do not all make
/// alike: as many, each a split or each a duplicate.
fn agree(members: &[u32], on: &[Vec<&Creation>], files: &[String]) -> Result<()> {
    let Some(first) = on.first() else {
        return Ok(());
    };
    let m0 = members[0] as usize;
    for (i, mine) in on.iter().enumerate().skip(1) {
        let m = members[i] as usize;
        if mine.len() != first.len() {
            let (short, long, k) = if mine.len() < first.len() {
                (m, m0, mine.len())
            } else {
                (m0, m, first.len())
            };
            let x = on[if long == m { i } else { 0 }][k];
            return Err(Error::parse(
                &files[long],
                x.line,
                format!(
                    "rank {long}'s {} is never made by rank {short}, which makes {k} on the communicator it splits (the ranks would wait forever)",
                    x.make.name()
                ),
            ));
        }
        for (a, b) in first.iter().zip(mine) {
            if std::mem::discriminant(&a.make) != std::mem::discriminant(&b.make) {
                return Err(Error::parse(
                    &files[m],
                    b.line,
                    format!(
                        "rank {m} calls {} where rank {m0} ({}:{}) calls {} on the same communicator",
                        b.make.name(),
                        files[m0],
                        a.line,
                        a.make.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The communicators one collective creation makes: each one's world
/// ranks in order and the creation of each of them; the ranks a split
/// leaves out get `MPI_COMM_NULL`.
fn made<'a>(
    members: &[u32],
    calls: &[&'a Creation],
    out: &mut Comms,
) -> Vec<(Vec<u32>, Vec<&'a Creation>)> {
    match calls[0].make {
        Make::Dup => vec![(members.to_vec(), calls.to_vec())],
        Make::Split { .. } => {
            // Colors in the order of their lowest rank, as SMPI's split
            // makes the groups.
            let mut colors: Vec<i64> = Vec::new();
            let mut groups: FxHashMap<i64, Vec<(i64, usize)>> = FxHashMap::default();
            for (i, x) in calls.iter().enumerate() {
                let Make::Split { color, key } = x.make else {
                    unreachable!("agree checked that every call is a split")
                };
                if color < 0 {
                    out.handles[members[i] as usize].insert(x.id, Handle::Null { line: x.line });
                    continue;
                }
                groups
                    .entry(color)
                    .or_insert_with(|| {
                        colors.push(color);
                        Vec::new()
                    })
                    .push((key, i));
            }
            colors
                .iter()
                .map(|c| {
                    let mut g = groups.remove(c).expect("a group per color");
                    g.sort_unstable();
                    (
                        g.iter().map(|&(_, i)| members[i]).collect(),
                        g.iter().map(|&(_, i)| calls[i]).collect(),
                    )
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(id: u32, parent: u32, color: i64, key: i64, line: u64) -> Creation {
        Creation {
            id,
            parent,
            make: Make::Split { color, key },
            line,
        }
    }

    fn files(n: usize) -> Vec<String> {
        (0..n).map(|r| format!("rank{r}.txt")).collect()
    }

    /// Four ranks split by parity with keys that reverse them, then each
    /// half duplicated: the halves are ordered by key, the duplicates as
    /// their parents.
    #[test]
    fn a_split_orders_each_color_by_key_then_parent_rank() {
        let c: Vec<Vec<Creation>> = (0..4)
            .map(|r| {
                vec![
                    split(1, 0, r as i64 % 2, 4 - r as i64, 2),
                    Creation {
                        id: 2,
                        parent: 1,
                        make: Make::Dup,
                        line: 3,
                    },
                ]
            })
            .collect();
        let comms = resolve(&c, &files(4)).unwrap();
        assert_eq!(
            comms.comms,
            vec![
                vec![0, 1, 2, 3],
                vec![2, 0],
                vec![3, 1],
                vec![2, 0],
                vec![3, 1]
            ]
        );
        assert_eq!(comms.at(0, 1, "f", 9).unwrap(), 1);
        assert_eq!(comms.at(1, 2, "f", 9).unwrap(), 4);
        // Equal keys: the parent's order.
        let c: Vec<Vec<Creation>> = (0..3).map(|_| vec![split(1, 0, 7, 0, 1)]).collect();
        assert_eq!(resolve(&c, &files(3)).unwrap().comms[1], vec![0, 1, 2]);
    }

    /// A negative color gives the rank MPI_COMM_NULL, which a later use
    /// names; a handle used before its creation is refused.
    #[test]
    fn a_negative_color_gives_no_communicator() {
        let c = vec![vec![split(1, 0, 0, 0, 1)], vec![split(1, 0, -1, 0, 1)]];
        let comms = resolve(&c, &files(2)).unwrap();
        assert_eq!(comms.comms[1], vec![0]);
        let e = comms.at(1, 1, "f", 5).unwrap_err().to_string();
        assert!(e.contains("f:5") && e.contains("MPI_COMM_NULL"), "{e}");
        let e = comms.at(0, 1, "f", 1).unwrap_err().to_string();
        assert!(e.contains("never created on rank 0"), "{e}");
    }

    /// Creations the ranks of a communicator do not make alike are refused
    /// at the line of the one left waiting.
    #[test]
    fn creations_that_disagree_are_refused_naming_the_line() {
        let c = vec![vec![split(1, 0, 0, 0, 4)], vec![]];
        let e = resolve(&c, &files(2)).unwrap_err().to_string();
        assert!(
            e.contains("rank0.txt:4") && e.contains("never made by rank 1"),
            "{e}"
        );
        let dup = Creation {
            id: 1,
            parent: 0,
            make: Make::Dup,
            line: 6,
        };
        let c = vec![vec![split(1, 0, 0, 0, 4)], vec![dup]];
        let e = resolve(&c, &files(2)).unwrap_err().to_string();
        assert!(
            e.contains("rank1.txt:6") && e.contains("calls comm_dup"),
            "{e}"
        );
        let c = vec![vec![split(1, 2, 0, 0, 4)]];
        let e = resolve(&c, &files(1)).unwrap_err().to_string();
        assert!(e.contains("has not created"), "{e}");
        let c = vec![vec![split(0, 0, 0, 0, 4)]];
        let e = resolve(&c, &files(1)).unwrap_err().to_string();
        assert!(e.contains("holds already"), "{e}");
    }
}
