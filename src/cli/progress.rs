//! The progress bar of a long run: a simulation or a replay still going
//! after a second, drawn on the terminal from the simulator's share of
//! operations done (`SimConfig::progress`), and nothing when standard
//! error is not a terminal.

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
