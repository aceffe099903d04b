//! What the verbs whose points spread over `mpirun`'s processes share
//! (`simulate`'s sweep, `tune`'s sizes, `optimize`'s candidates): the
//! start, a quiet end on the ranks other than 0, and each point's result
//! as it is sent to rank 0.

use super::Relayed;
use crate::runtime::spread::{self, Spread};
use anyhow::Result;
use topocoll_base::Error;

/// `e`, on rank 0 (or alone); on another rank of `mpirun`'s, a quiet end
/// with `e`'s status, rank 0 saying why.
pub fn refused_quietly(e: anyhow::Error) -> anyhow::Error {
    if spread::launched_rank().is_some_and(|r| r != 0) {
        Relayed {
            line: None,
            code: super::line_and_code(&e).1,
        }
        .into()
    } else {
        e
    }
}

/// The processes a command's points are spread over (`simulate`'s sweep,
/// `tune`'s sizes), each process on a machine taking its share of the
/// machine's cores; a refusal is rank 0's line.
pub fn start() -> Result<Spread> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let s = Spread::start(&arguments).map_err(|e| refused_quietly(e.into()))?;
    // Processes on one machine share its cores: each takes its share for
    // its points (a process alone on a machine takes them all).
    if let Some(here) = spread::launched_here().filter(|&h| s.size() > 1 && h > 1) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // The pool is this process's first use of it; if not, it stays.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads((cores / here).max(1))
            .build_global();
    }
    Ok(s)
}

/// A spread point's result as it is sent: 'O' and its bytes, or 'E', its
/// error's exit status and its error's line.
pub fn point_bytes(r: Result<Vec<u8>>) -> Vec<u8> {
    match r {
        Ok(bytes) => {
            let mut text = b"O".to_vec();
            text.extend(bytes);
            text
        }
        Err(e) => {
            let (line, code) = super::line_and_code(&e);
            let mut text = vec![b'E', code as u8];
            text.extend(line.into_bytes());
            text
        }
    }
}

/// The points' bytes as [`point_bytes`] sent them, in point order; the
/// first point that failed ends the command with its line and status, as
/// it would alone.
pub fn point_results(all: &[Vec<u8>]) -> Result<Vec<&[u8]>> {
    let mut parts = Vec::with_capacity(all.len());
    for r in all {
        match r.split_first() {
            Some((b'O', bytes)) => parts.push(bytes),
            Some((b'E', rest)) if !rest.is_empty() => {
                return Err(Relayed {
                    line: Some(String::from_utf8_lossy(&rest[1..]).into_owned()),
                    code: rest[0] as i32,
                }
                .into())
            }
            _ => return Err(Error::Invalid("a spread point sent no result".into()).into()),
        }
    }
    Ok(parts)
}

/// The processes `optimize`'s candidates are shared between, as the
/// search takes them.
pub struct Shared<'a>(pub &'a Spread);

impl crate::optimize::share::Share for Shared<'_> {
    fn rank(&self) -> usize {
        self.0.rank()
    }
    fn size(&self) -> usize {
        self.0.size()
    }
    fn all_gather(&self, mine: Vec<u8>) -> crate::optimize::Result<Vec<Vec<u8>>> {
        self.0
            .all_gather(mine)
            .map_err(|e| Error::Invalid(e.to_string()).into())
    }
}
