//! Reproductions of the papers' experiments: each writes CSV tables, plots
//! (SVG and PNG) and a short summary into a directory. They call the
//! algorithms, the simulator and the models like any other user would.

pub mod a2at;
pub mod dragonnet;
pub mod multilane;
pub mod plot;
pub mod swing;
pub mod treebcast;
pub mod trinaryx3;

use crate::algorithms::Request;
use crate::error::{Error, Result};
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::{SimConfig, SimResult};
use crate::topology::{parse_spec, Topology};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;

/// Runs `f` on every item with one worker per core, the items taken strictly
/// in `order` (indices into `items`; each worker takes the next one when it
/// is free), with a progress bar; results in the items' order. Put the
/// longest items first: rayon's splitting would hand a whole run of them to
/// one thread.
pub fn run_in_order<T: Sync, R: Send>(
    items: &[T],
    order: &[usize],
    what: &str,
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    assert_eq!(order.len(), items.len(), "order must list every item once");
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<R>>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let bar = progress(items.len(), what);
    std::thread::scope(|scope| {
        for _ in 0..rayon::current_num_threads().max(1) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else {
                    break;
                };
                let r = f(&items[i]);
                *slots[i].lock().expect("no panics hold it") = Some(r);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .expect("no panics hold it")
                .expect("every item ran")
        })
        .collect()
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: usize, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(what.to_string());
    bar
}

/// A topology in the papers' normalised units: every link bandwidth 1, latency 0.
pub fn normalised(spec: &str) -> Result<Topology> {
    let mut t = parse_spec(spec)?;
    t.set_uniform_links(Some(1.0), Some(0.0))?;
    Ok(t)
}

/// Builds `algorithm` for an all-to-all of one-byte blocks on `t` and simulates it.
pub fn alltoall_time(
    t: &Topology,
    algorithm: &str,
    cfg: &SimConfig,
) -> Result<(SimResult, Option<f64>)> {
    alltoall_time_block(t, algorithm, cfg, 1)
}

/// As [`alltoall_time`] with blocks of `block` one-byte elements.
pub fn alltoall_time_block(
    t: &Topology,
    algorithm: &str,
    cfg: &SimConfig,
    block: u64,
) -> Result<(SimResult, Option<f64>)> {
    let req = Request::new(
        Collective::Alltoall,
        t.num_ranks(),
        block,
        Dtype::U8,
        ReduceOp::Sum,
        Some(t),
    )?;
    let mut p = crate::price::price(
        &req,
        crate::algorithms::find(req.collective.kind(), algorithm)?,
        t,
        std::slice::from_ref(cfg),
        crate::price::Check::Trust,
        crate::price::Build::StreamIfLarge,
    )?;
    // The collective's bound, or the schedule's own where it is higher.
    let bound = match (p.lower_bound_s, p.schedule_bound_s) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    Ok((p.runs.remove(0), bound))
}

/// Writes a text file, creating its directory.
pub fn write(dir: &Path, name: &str, text: &str) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let path = dir.join(name);
    std::fs::write(&path, text)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::run_in_order;
    use topocoll_base::Error;

    /// Results come back in the items' order whatever the order they run in
    /// and the workers' timing, and an error is returned, not swallowed.
    #[test]
    fn run_in_order_keeps_the_order_and_reports_errors() {
        let items: Vec<u64> = (0..50).collect();
        let forward: Vec<usize> = (0..50).collect();
        let backward: Vec<usize> = (0..50).rev().collect();
        let out = run_in_order(&items, &forward, "test", |&x| {
            // Early items take longest, as the reproductions order them.
            std::thread::sleep(std::time::Duration::from_micros(50 * (50 - x)));
            Ok(x * 2)
        })
        .unwrap();
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let out = run_in_order(&items, &backward, "test", |&x| Ok(x + 1)).unwrap();
        assert_eq!(out, items.iter().map(|x| x + 1).collect::<Vec<_>>());
        let r = run_in_order(&items, &forward, "test", |&x| {
            if x == 17 {
                Err(Error::Invalid("seventeen".into()).into())
            } else {
                Ok(x)
            }
        });
        assert!(matches!(r, Err(crate::Error::Base(Error::Invalid(m))) if m == "seventeen"));
    }
}
