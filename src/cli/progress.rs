//! The progress shown during a long run, on the terminal only (nothing
//! when standard error is not one): a simulation or a replay still going
//! after a second, drawn from the simulator's share of operations done
//! (`SimConfig::progress`); `--algorithm auto`'s search, candidate by
//! candidate.

use crate::optimize::tune::Progress;
use crate::units::{format_bytes, format_seconds};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError::Timeout};
use std::sync::Arc;
use std::time::Duration;

/// Runs `run` with the counter it should give the simulator
/// (`SimConfig::progress`), `None` off a terminal, and a bar named `what`
/// showing it meanwhile.
pub fn with_bar<T>(what: &str, run: impl FnOnce(Option<Arc<AtomicU64>>) -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return run(None);
    }
    let progress = Arc::new(AtomicU64::new(0));
    // The run's end drops `finished`, which wakes the display at once.
    let (finished, wake) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(|| show(&progress, wake, what));
        let out = run(Some(progress.clone()));
        drop(finished);
        out
    })
}

/// Draws the bar from a second into the run until `wake` says it ended.
fn show(progress: &AtomicU64, wake: mpsc::Receiver<()>, what: &str) {
    if wake.recv_timeout(Duration::from_secs(1)) != Err(Timeout) {
        return;
    }
    let bar = ProgressBar::new(1_000_000);
    let template = format!(
        "{{spinner}} {what} [{{bar:30}}] {{percent}}% of the ops, {{elapsed_precise}} (eta {{eta}})"
    );
    bar.set_style(
        ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    while wake.recv_timeout(Duration::from_millis(200)) == Err(Timeout) {
        bar.set_position(progress.load(Ordering::Relaxed));
    }
    bar.finish_and_clear();
}

/// Runs `run` with the callback `Problem::tune` tells its progress to,
/// showing meanwhile which of how many candidates of `collective` is being
/// priced and the best so far (a decision in the cache tells nothing and
/// shows nothing).
pub fn with_candidates<T>(collective: &str, run: impl FnOnce(&mut dyn FnMut(&Progress)) -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return run(&mut |_| {});
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut started = false;
    let out = run(&mut |p: &Progress| {
        if !started {
            bar.enable_steady_tick(Duration::from_millis(200));
            started = true;
        }
        let best = p.best.as_ref().map_or(String::new(), |(label, t)| {
            format!(", best so far {label} at {}", format_seconds(*t))
        });
        bar.set_message(format!(
            "--algorithm auto: {collective} at {}, candidate {} of {}{best}",
            format_bytes(p.size_bytes),
            p.priced + 1,
            p.candidates
        ));
    });
    bar.finish_and_clear();
    out
}
