//! A command's independent points spread over the processes `mpirun`
//! started (`mpirun -np N topocoll simulate --size 1KiB,1MiB,...`): process
//! k computes the points i with i mod N = k, and rank 0 receives every
//! point's result and writes them in point order, so the output is what
//! one process writes. A search whose processes go on from what all of
//! them found (`optimize`'s) gathers on every process instead
//! ([`Spread::all_gather`]).
//!
//! Every process must be given the same arguments: each hashes its own,
//! and a start whose processes disagree is refused before any point runs.

use crate::error::{Error, Result};

/// The processes a command's points are spread over: one (no `mpirun`),
/// or `mpirun`'s in a build with MPI.
pub struct Spread {
    /// MPI's world, when the points are spread; `None` alone.
    #[cfg(feature = "mpi")]
    world: Option<crate::mpi::World>,
}

/// How many processes `mpirun` started this one among (Open MPI's and
/// MPICH's launchers say so in the environment); `None` outside `mpirun`.
pub fn launched() -> Option<usize> {
    launcher_says(&["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"])
}

/// The first of the launchers' variables `names` that holds a number.
fn launcher_says(names: &[&str]) -> Option<usize> {
    names
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// How many of `mpirun`'s processes share this one's machine (they share
/// its cores); `None` outside `mpirun`.
pub fn launched_here() -> Option<usize> {
    launcher_says(&["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"])
}

/// This process's rank among those `mpirun` started; `None` outside it.
pub fn launched_rank() -> Option<usize> {
    launcher_says(&["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"])
}

impl Spread {
    /// One process, or, started by `mpirun` on more than one, MPI's world
    /// once every process is found to hold the same `arguments`.
    pub fn start(arguments: &[String]) -> Result<Spread> {
        let Some(n) = launched().filter(|&n| n > 1) else {
            return Ok(Spread::alone());
        };
        #[cfg(feature = "mpi")]
        {
            let world = crate::mpi::World::init()?;
            if !world.all_same(fingerprint(arguments)) {
                return Err(Error::invalid(format!(
                    "the {n} processes mpirun started were given different arguments: a spread command needs the same on every one"
                )));
            }
            Ok(Spread { world: Some(world) })
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = arguments;
            Err(Error::invalid(format!(
                "mpirun started {n} processes, but this build has no MPI to spread the points over (build with --features mpi)"
            )))
        }
    }

    /// This process alone.
    pub fn alone() -> Spread {
        Spread {
            #[cfg(feature = "mpi")]
            world: None,
        }
    }

    /// This process's rank (0 alone).
    pub fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.rank();
        }
        0
    }

    /// How many processes share the points.
    pub fn size(&self) -> usize {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.world {
            return w.size();
        }
        1
    }

    /// Whether point `i` is this process's to compute.
    pub fn mine(&self, i: usize) -> bool {
        i % self.size() == self.rank()
    }

    /// On rank 0, every one of the `points` results, in point order, from
    /// the processes that computed them; `None` on the others. `mine` is
    /// this process's results, point by point as [`Spread::mine`] gives
    /// them, in increasing point order.
    pub fn gather(&self, points: usize, mine: Vec<Vec<u8>>) -> Result<Option<Vec<Vec<u8>>>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = self.world.as_ref().filter(|w| w.size() > 1) {
            // Each result as its length (8 bytes) and its bytes.
            let mut packed = Vec::new();
            for r in &mine {
                packed.extend_from_slice(&(r.len() as u64).to_le_bytes());
                packed.extend_from_slice(r);
            }
            let all = w.gather_bytes(&packed)?;
            if w.rank() != 0 {
                return Ok(None);
            }
            let mut per_rank: Vec<std::vec::IntoIter<Vec<u8>>> =
                all.iter().map(|bytes| unpack(bytes).into_iter()).collect();
            let mut out = Vec::with_capacity(points);
            for i in 0..points {
                let from = i % w.size();
                out.push(per_rank[from].next().ok_or_else(|| {
                    Error::invalid(format!("rank {from} sent no result for point {i}"))
                })?);
            }
            return Ok(Some(out));
        }
        // Alone: every point is this process's, in order.
        let _ = points;
        Ok(Some(mine))
    }

    /// Every process's `mine`, in rank order, on every process (alone,
    /// `mine` itself): what each found of a search whose processes go on
    /// from what all found (`optimize`'s candidates).
    pub fn all_gather(&self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        #[cfg(feature = "mpi")]
        if let Some(w) = self.world.as_ref().filter(|w| w.size() > 1) {
            return w.all_gather_bytes(&mine);
        }
        Ok(vec![mine])
    }
}

/// The results [`Spread::gather`] packed: each its length, then its bytes.
#[cfg(feature = "mpi")]
fn unpack(mut bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while bytes.len() >= 8 {
        let (len, rest) = bytes.split_at(8);
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
        let (r, rest) = rest.split_at(len.min(rest.len()));
        out.push(r.to_vec());
        bytes = rest;
    }
    out
}

/// A hash of the arguments (FNV-1a), the same on every process that holds
/// the same ones.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn fingerprint(arguments: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for a in arguments {
        for b in a.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_every_point_is_mine_and_gathered_as_given() {
        let s = Spread::alone();
        assert!((0..5).all(|i| s.mine(i)));
        let got = s.gather(2, vec![b"a".to_vec(), b"bc".to_vec()]).unwrap();
        assert_eq!(got, Some(vec![b"a".to_vec(), b"bc".to_vec()]));
    }

    #[test]
    fn arguments_that_differ_hash_apart() {
        let a = |xs: &[&str]| fingerprint(&xs.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(
            a(&["simulate", "-s", "1KiB"]),
            a(&["simulate", "-s", "1KiB"])
        );
        assert_ne!(
            a(&["simulate", "-s", "1KiB"]),
            a(&["simulate", "-s", "2KiB"])
        );
        // Word boundaries count: "ab" "c" is not "a" "bc".
        assert_ne!(a(&["ab", "c"]), a(&["a", "bc"]));
    }
}
