//! File events. The OS watcher by default; polling when `VX_WATCH_POLL`
//! is set (its value, in milliseconds, is the interval) or when the OS
//! watcher cannot start (for example the inotify watch limit), with a
//! one-line notice saying which is in use. Either way each directory
//! `tree` lists is watched on its own (no `node_modules`, `.git`, `.vx`
//! or ignored directory, no link followed), and a directory made while
//! watching is added. Polling compares file contents (the poller's
//! modification times have one-second resolution).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// A live watcher; events stop when it is dropped.
pub(crate) struct Source {
    _watcher: Arc<Mutex<Box<dyn Watcher + Send>>>,
    pub description: String,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source").field("description", &self.description).finish()
    }
}

/// What the event handler tells the thread that keeps the watches.
enum Change {
    /// A directory appeared (made, or renamed into the tree).
    Dir(PathBuf),
    /// A path went: if it was a watched directory, it must be watched
    /// again when it comes back.
    Gone(PathBuf),
}

/// Starts watching the workspace at `root`; paths arrive on the returned
/// channel. Each directory [`super::tree::watched_dirs`] lists gets a
/// watch of its own, and a directory made later gets one (with the files
/// already written in it reported as changes) from a thread beside the
/// watcher: the watcher's own callback must not call back into it.
pub(crate) fn start(root: &Path) -> Result<(Source, mpsc::UnboundedReceiver<Vec<PathBuf>>), String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (dirs_tx, dirs_rx) = std::sync::mpsc::channel::<Change>();
    let events = tx.clone();
    let handler = move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if event.kind.is_access() || event.paths.is_empty() {
            return;
        }
        for path in &event.paths {
            if event.kind.is_remove() {
                let _ = dirs_tx.send(Change::Gone(path.clone()));
            } else if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                let _ = dirs_tx.send(Change::Dir(path.clone()));
            }
        }
        let _ = events.send(event.paths);
    };
    let dirs = super::tree::watched_dirs(root, root);
    let poll = std::env::var("VX_WATCH_POLL").ok();
    let mut chosen: Option<(Box<dyn Watcher + Send>, String)> = None;
    if poll.is_none() {
        let os =
            notify::RecommendedWatcher::new(handler.clone(), notify::Config::default().with_follow_symlinks(false))
                .and_then(|mut w| watch_all(&mut w, &dirs).map(|()| w));
        match os {
            Ok(w) => chosen = Some((Box::new(w), "the OS file watcher".into())),
            Err(e) => tracing::info!(target: "vx", "the OS file watcher could not start ({e}); polling instead"),
        }
    }
    let (watcher, description) = match chosen {
        Some(chosen) => chosen,
        None => {
            let interval = poll
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&ms| ms > 0)
                .map_or(DEFAULT_POLL, Duration::from_millis);
            // The poller compares modification times in whole seconds, so
            // an edit in the same second as the last write would be
            // missed: compare contents too.
            let config = notify::Config::default()
                .with_poll_interval(interval)
                .with_compare_contents(true)
                .with_follow_symlinks(false);
            let mut watcher =
                notify::PollWatcher::new(handler, config).map_err(|e| format!("could not start polling: {e}"))?;
            watch_all(&mut watcher, &dirs).map_err(|e| format!("could not watch {}: {e}", root.display()))?;
            (Box::new(watcher) as Box<dyn Watcher + Send>, format!("polling every {} ms", interval.as_millis()))
        }
    };
    let watcher = Arc::new(Mutex::new(watcher));
    keep_watching(root.to_path_buf(), Arc::downgrade(&watcher), dirs, dirs_rx, tx);
    Ok((Source { _watcher: watcher, description }, rx))
}

/// One non-recursive watch per directory.
fn watch_all(watcher: &mut dyn Watcher, dirs: &[PathBuf]) -> notify::Result<()> {
    for dir in dirs {
        match watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {}
            // Gone since it was listed: nothing to watch.
            Err(notify::Error { kind: notify::ErrorKind::PathNotFound, .. }) => {}
            Err(e) if matches!(&e.kind, notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The thread that adds a watch for each directory made while watching
/// (and reports the files already in it), until the watcher is dropped.
fn keep_watching(
    root: PathBuf,
    watcher: Weak<Mutex<Box<dyn Watcher + Send>>>,
    dirs: Vec<PathBuf>,
    changes: std::sync::mpsc::Receiver<Change>,
    events: mpsc::UnboundedSender<Vec<PathBuf>>,
) {
    let mut watched: HashSet<PathBuf> = dirs.into_iter().collect();
    let spawned = std::thread::Builder::new().name("vx-watch-dirs".into()).spawn(move || {
        // Ends when the handler (owned by the watcher) is dropped.
        while let Ok(change) = changes.recv() {
            let dir = match change {
                Change::Gone(path) => {
                    watched.retain(|d| !d.starts_with(&path));
                    continue;
                }
                Change::Dir(dir) if !watched.contains(&dir) => dir,
                Change::Dir(_) => continue,
            };
            let listed = watch_new_tree(
                &dir,
                &mut watched,
                |d| super::tree::watched_dirs(&root, d),
                |new| {
                    let Some(watcher) = watcher.upgrade() else { return false };
                    let mut watcher = watcher.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    let _ = watch_all(watcher.as_mut(), new);
                    true
                },
                |files| drop(events.send(files)),
            );
            if !listed {
                return;
            }
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("directories made while watching are not watched: {e}");
    }
}

/// Watches `dir` and the directories below it that `watched` lacks, and
/// reports the files already in them. `list` names a directory and the
/// ones below it; `watch` adds watches (`false`: the watcher is gone, and
/// so is the answer). Listed again after each round of watches: a
/// subdirectory made between a listing and the watch on its parent sent no
/// event (`src/` of a project scaffolded while vx was watching), and only
/// the next listing finds it. Each round watches at least one directory
/// more, so the loop ends.
fn watch_new_tree(
    dir: &Path,
    watched: &mut HashSet<PathBuf>,
    mut list: impl FnMut(&Path) -> Vec<PathBuf>,
    mut watch: impl FnMut(&[PathBuf]) -> bool,
    mut report: impl FnMut(Vec<PathBuf>),
) -> bool {
    loop {
        let new: Vec<PathBuf> = list(dir).into_iter().filter(|d| !watched.contains(d)).collect();
        if new.is_empty() {
            return true;
        }
        if !watch(&new) {
            return false;
        }
        let files = super::tree::files_in(&new);
        watched.extend(new);
        if !files.is_empty() {
            report(files);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The race, made to happen every time: each listing is followed, before
    /// its watches, by a subdirectory (with a file) made below the deepest
    /// directory it found, as `mkdir -p` and an editor scaffolding a project
    /// would. What a listing missed is watched by the next round, and the
    /// files written before their directory's watch are reported.
    #[test]
    fn a_directory_made_between_a_listing_and_its_watch_is_watched() {
        let scratch = tempfile::tempdir().expect("a temp dir");
        let root = scratch.path();
        let new = root.join("packages/b");
        std::fs::create_dir_all(&new).expect("mkdir");
        let mut watched: HashSet<PathBuf> = [root.to_path_buf(), root.join("packages")].into_iter().collect();
        let mut made = Vec::new();
        let (mut watches, mut reported) = (Vec::new(), Vec::new());
        let list = |d: &Path| {
            let listed = crate::watch::tree::watched_dirs(root, d);
            if made.len() < 5 {
                let deepest = listed.iter().max_by_key(|p| p.components().count()).expect("the dir itself");
                let sub = deepest.join(format!("d{}", made.len()));
                std::fs::create_dir(&sub).expect("mkdir");
                std::fs::write(sub.join("x.txt"), "x\n").expect("write");
                made.push(sub);
            }
            listed
        };
        let listed = watch_new_tree(
            &new,
            &mut watched,
            list,
            |dirs| {
                watches.extend_from_slice(dirs);
                true
            },
            |files| reported.extend(files),
        );
        assert!(listed);
        let expected: Vec<PathBuf> = std::iter::once(new.clone())
            .chain((0..5).map(|i| (0..=i).fold(new.clone(), |p, j| p.join(format!("d{j}")))))
            .collect();
        assert_eq!(watches, expected, "every directory watched once, in the order it was found");
        let files: Vec<PathBuf> = expected[1..].iter().map(|d| d.join("x.txt")).collect();
        assert_eq!(reported, files, "the files written before their watches are reported");
        assert!(expected.iter().all(|d| watched.contains(d)));
    }

    /// Without the watcher, the work stops at once.
    #[test]
    fn a_dropped_watcher_ends_the_listing() {
        let scratch = tempfile::tempdir().expect("a temp dir");
        let dir = scratch.path().join("b");
        std::fs::create_dir_all(dir.join("src")).expect("mkdir");
        let mut watched = HashSet::new();
        let mut lists = 0;
        let listed = watch_new_tree(
            &dir,
            &mut watched,
            |d| {
                lists += 1;
                crate::watch::tree::watched_dirs(scratch.path(), d)
            },
            |_| false,
            |_| panic!("nothing is reported"),
        );
        assert!(!listed);
        assert_eq!(lists, 1);
        assert!(watched.is_empty());
    }
}
