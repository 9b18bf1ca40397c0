//! Gathering a burst of file events into one change: after the first
//! event, events are collected until the tree has been quiet for `quiet`
//! (default 50 ms, `VX_WATCH_DEBOUNCE_MS`), or `max` has passed since the
//! first (2 s), so that a save that writes several files — or an editor's
//! write-then-rename — is one change, and a stream of writes cannot hold
//! a re-run back for ever.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DebounceWindow {
    pub quiet: Duration,
    pub max: Duration,
}

impl DebounceWindow {
    pub(crate) fn from_env() -> DebounceWindow {
        let quiet = std::env::var("VX_WATCH_DEBOUNCE_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(Duration::from_millis(50), Duration::from_millis);
        DebounceWindow { quiet, max: Duration::from_secs(2).max(quiet) }
    }
}

/// Collects `first` and every path that arrives until the window closes
/// (or the channel does). Later events stay queued for the next change.
pub(crate) async fn gather(
    rx: &mut mpsc::UnboundedReceiver<Vec<PathBuf>>,
    first: Vec<PathBuf>,
    window: DebounceWindow,
) -> BTreeSet<PathBuf> {
    let mut paths: BTreeSet<PathBuf> = first.into_iter().collect();
    let hard_stop = Instant::now() + window.max;
    loop {
        let deadline = (Instant::now() + window.quiet).min(hard_stop);
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(more)) => paths.extend(more),
            Ok(None) | Err(_) => return paths,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<PathBuf> {
        vec![PathBuf::from(s)]
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_one_change_and_quiet_ends_it() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let window = DebounceWindow { quiet: Duration::from_millis(50), max: Duration::from_secs(2) };
        let sender = tokio::spawn(async move {
            for name in ["b", "c"] {
                tokio::time::sleep(Duration::from_millis(30)).await;
                tx.send(p(name)).unwrap();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            tx.send(p("late")).unwrap();
            tx
        });
        let start = Instant::now();
        let got = gather(&mut rx, p("a"), window).await;
        assert_eq!(got.len(), 3, "a, b, c arrive within the quiet window of each other: {got:?}");
        assert_eq!(start.elapsed(), Duration::from_millis(110), "closes 50 ms after the last event");
        let _tx = sender.await.unwrap();
        assert_eq!(rx.recv().await, Some(p("late")), "a later event is kept for the next change");
    }

    #[tokio::test(start_paused = true)]
    async fn a_constant_stream_is_cut_at_the_maximum() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let window = DebounceWindow { quiet: Duration::from_millis(50), max: Duration::from_millis(500) };
        tokio::spawn(async move {
            for i in 0..100 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                if tx.send(p(&format!("f{i}"))).is_err() {
                    break;
                }
            }
        });
        let start = Instant::now();
        let got = gather(&mut rx, p("first"), window).await;
        assert_eq!(start.elapsed(), Duration::from_millis(500));
        assert!(got.len() > 20 && got.len() < 30, "{}", got.len());
    }
}
