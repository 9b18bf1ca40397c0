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

/// Another vx process holds the task's lock.
#[derive(Debug)]
pub struct Held;

/// The lock file of task `id`, made if missing; `None` when it cannot be
/// (a read-only `.vx`, say): the task then runs unguarded, as before
/// locks existed.
fn open(root: &Path, id: &str) -> Option<File> {
    let dir = root.join(".vx/locks");
    let name = &blake3::hash(id.as_bytes()).to_hex()[..16];
    let open = || OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(name));
    // The directory exists after the first task of a workspace: try first.
    open().ok().or_else(|| std::fs::create_dir_all(&dir).ok().and_then(|_| open().ok()))
}

/// Takes the lock of task `id` if it is free, on the calling thread.
/// `Ok(None)` when the lock file cannot be made (see [`open`]).
pub fn try_acquire(root: &Path, id: &str) -> Result<Option<TaskLock>, Held> {
    let Some(file) = open(root, id) else { return Ok(None) };
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(TaskLock { _lock: lock })),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(Held),
        Err(_) => Ok(None),
    }
}

/// Waits for the lock of task `id` in the workspace at `root`. `None` when
/// the lock file cannot be made (see [`open`]).
pub async fn acquire(root: &Path, id: &str) -> Option<TaskLock> {
    let (root, id) = (root.to_path_buf(), id.to_string());
    tokio::task::spawn_blocking(move || {
        let file = open(&root, &id)?;
        Flock::lock(file, FlockArg::LockExclusive).ok().map(|lock| TaskLock { _lock: lock })
    })
    .await
    .ok()
    .flatten()
}
