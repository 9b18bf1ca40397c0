//! One run of a task at a time per workspace, across vx processes. Two
//! `vx run`s in one workspace (a terminal and an editor, say) would
//! otherwise run or restore the same task at once and trip over each
//! other's outputs: one restoring `dist/` while the other's command writes
//! it. The second waits on an advisory lock under `.vx/locks/` and then,
//! usually, finds the first one's result in the cache.
//!
//! A task holds its lock while it looks up, runs and stores; it never waits
//! for another task while holding it, so two processes cannot deadlock.
//! Persistent tasks take none (a server would hold it for its lifetime).

use std::fs::{File, OpenOptions};
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

/// Held until dropped.
#[derive(Debug)]
pub struct TaskLock {
    _lock: Flock<File>,
}

/// Waits for the lock of task `id` in the workspace at `root`. `None` when
/// the lock file cannot be made (a read-only `.vx`, say): the task then
/// runs unguarded, as before locks existed.
pub async fn acquire(root: &Path, id: &str) -> Option<TaskLock> {
    let dir = root.join(".vx/locks");
    let name = blake3::hash(id.as_bytes()).to_hex()[..16].to_string();
    tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dir).ok()?;
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(name)).ok()?;
        Flock::lock(file, FlockArg::LockExclusive).ok().map(|lock| TaskLock { _lock: lock })
    })
    .await
    .ok()
    .flatten()
}
