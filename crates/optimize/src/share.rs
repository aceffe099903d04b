//! The processes a search's candidates are shared between (`mpirun -np N
//! topocoll optimize ...`): each prices its share, every one receives what
//! all of them found and goes on from the same state, so that the search
//! ends where one process alone ends. The layer knows nothing of MPI: the
//! command line hands the processes in as a [`Share`], and [`Alone`] is
//! one process.

use crate::error::{fail, Result};

/// The processes a search is shared between.
pub trait Share {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;
    /// How many processes share the search.
    fn size(&self) -> usize;
    /// Every process's `mine`, in rank order, on every process.
    fn all_gather(&self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>>;
    /// Whether work item `i` is this process's: items go round the
    /// processes in turn.
    fn mine(&self, i: usize) -> bool {
        i % self.size() == self.rank()
    }
    /// Which process works item `i`.
    fn owner(&self, i: usize) -> usize {
        i % self.size()
    }
}

/// One process, sharing with none.
pub struct Alone;

impl Share for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn all_gather(&self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        Ok(vec![mine])
    }
}

/// What a process sends of its share: little-endian words, read back in
/// the order written by [`Words`]. Times go as their bits, so every
/// process reads the very figure that was priced.
#[derive(Default)]
pub(crate) struct Packer(pub Vec<u8>);

impl Packer {
    pub fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
}

/// A process's words as [`Packer`] wrote them.
pub(crate) struct Words<'a>(pub &'a [u8]);

impl Words<'_> {
    pub fn u64(&mut self) -> Result<u64> {
        if self.0.len() < 8 {
            return Err(fail!(
                Optimize,
                Problem,
                "a process sharing the search sent a short record"
            ));
        }
        let (word, rest) = self.0.split_at(8);
        self.0 = rest;
        Ok(u64::from_le_bytes(word.try_into().expect("8 bytes")))
    }
    pub fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    pub fn done(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_back_what_was_packed_and_refuse_a_short_record() {
        let mut p = Packer::default();
        p.u64(7);
        p.f64(0.1 + 0.2);
        let mut w = Words(&p.0);
        assert_eq!(w.u64().unwrap(), 7);
        assert_eq!(w.f64().unwrap().to_bits(), (0.1f64 + 0.2).to_bits());
        assert!(w.done());
        assert!(w.u64().is_err());
    }

    #[test]
    fn alone_owns_every_item() {
        assert!((0..4).all(|i| Alone.mine(i) && Alone.owner(i) == 0));
    }
}
