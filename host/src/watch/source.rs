//! File events. The recursive OS watcher by default; polling when
//! `VX_WATCH_POLL` is set (its value, in milliseconds, is the interval) or
//! when the OS watcher cannot start (for example the inotify watch limit),
//! with a one-line notice saying which is in use. Polling compares file
//! contents (the poller's modification times have one-second resolution)
//! and skips `.git`, `.vx` and `node_modules` at the root; a top-level
//! directory created while polling is watched after the next reload.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// A live watcher; events stop when it is dropped.
pub struct Source {
    _watcher: Box<dyn Watcher + Send>,
    pub description: String,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source").field("description", &self.description).finish()
    }
}

/// Polling reads every watched path each interval, so it skips the
/// directories vx never reacts to (`.git`, `.vx`, `node_modules`): the root
/// itself is watched alone, and each other entry of it recursively.
fn watch_polled(watcher: &mut notify::PollWatcher, root: &Path) -> notify::Result<()> {
    watcher.watch(root, RecursiveMode::NonRecursive)?;
    let entries = std::fs::read_dir(root).map_err(notify::Error::io)?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && !matches!(name.to_str(), Some(".git" | ".vx" | "node_modules"))
        {
            watcher.watch(&entry.path(), RecursiveMode::Recursive)?;
        }
    }
    Ok(())
}

/// Starts watching `root` recursively; paths arrive on the returned channel.
pub fn start(root: &Path) -> Result<(Source, mpsc::UnboundedReceiver<Vec<PathBuf>>), String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let handler = move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event
            && !event.kind.is_access()
            && !event.paths.is_empty()
        {
            let _ = tx.send(event.paths);
        }
    };
    let poll = std::env::var("VX_WATCH_POLL").ok();
    if poll.is_none() {
        match notify::recommended_watcher(handler.clone())
            .and_then(|mut w| w.watch(root, RecursiveMode::Recursive).map(|()| w))
        {
            Ok(w) => return Ok((Source { _watcher: Box::new(w), description: "the OS file watcher".into() }, rx)),
            Err(e) => tracing::info!(target: "vx", "the OS file watcher could not start ({e}); polling instead"),
        }
    }
    let interval = poll
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(DEFAULT_POLL, Duration::from_millis);
    // The poller compares modification times in whole seconds, so an edit
    // in the same second as the last write would be missed: compare
    // contents too.
    let config = notify::Config::default().with_poll_interval(interval).with_compare_contents(true);
    let mut watcher = notify::PollWatcher::new(handler, config).map_err(|e| format!("could not start polling: {e}"))?;
    watch_polled(&mut watcher, root).map_err(|e| format!("could not watch {}: {e}", root.display()))?;
    let description = format!("polling every {} ms", interval.as_millis());
    Ok((Source { _watcher: Box::new(watcher), description }, rx))
}
