//! One run of a task at a time per workspace, across vx processes. Two
//! `vx run`s in one workspace (a terminal and an editor, say) would
//! otherwise run or restore the same task at once and trip over each
//! other's outputs: one restoring `dist/` while the other's command writes
//! it. The second waits on an advisory lock under `.vx/locks/` and then,
//! usually, finds the first one's result in the cache.
//!
//! A task holds its lock while it looks up, runs and stores; with the
//! cache off too, since its outputs are written all the same. While it
//! runs it also holds the locks of every task it depends on, directly or
//! not, shared ([`share`]): another vx then cannot clear or restore the
//! outputs it reads (`vx run lib#build --force` beside a running
//! `app#build` waits for app). Persistent tasks take none (a server would
//! hold it for its lifetime).
//!
//! No cycle of waits can form: a task waits for its own lock holding no
//! other, and holds its own while it waits for shared locks only of tasks
//! below it in the graph, whose holders are running them (and wait, if at
//! all, only for tasks further below). Admission (slots, mutexes) comes
//! before all of it.
//!
//! The kernel says who holds a lock (`/proc/locks`), so taking one writes
//! nothing: a fully cached run takes one per task. A wait says once who
//! holds the lock (`waiting for web#build, held by vx pid 4711`), polls
//! rather than blocks, so that Ctrl-C and SIGTERM end it at once, and is
//! refused when the holder is an ancestor of this vx and this vx runs
//! inside that very task's command: a task whose command runs vx on the
//! task itself would otherwise wait for its own end. A nested vx that
//! finds a lock held shared by its ancestor (a task's command running
//! `vx run` of its own dependency) goes on without it, as the task it
//! runs in is the reader.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};

/// Held until dropped.
#[derive(Debug)]
pub(crate) struct TaskLock {
    _lock: Flock<File>,
}

/// Shared locks of the tasks a running task depends on; held until dropped.
#[derive(Debug, Default)]
pub(crate) struct Readers {
    _locks: Vec<Flock<File>>,
}

/// Another vx process holds the task's lock.
#[derive(Debug)]
pub(crate) struct Held;

/// The lock file of task `id`, made if missing; `None` when it cannot be
/// (a read-only `.vx`, say): the task then runs unguarded, as before
/// locks existed.
fn open(root: &Path, id: &str) -> Option<File> {
    let dir = root.join(".vx/locks");
    let path = lock_path(root, id);
    let open = || OpenOptions::new().create(true).truncate(false).write(true).open(&path);
    // The directory exists after the first task of a workspace: try first.
    open().ok().or_else(|| std::fs::create_dir_all(&dir).ok().and_then(|_| open().ok()))
}

/// Who holds a `flock` on a file.
#[derive(Debug, Clone, Copy)]
struct Holder {
    pid: u32,
    /// Held exclusively (the task runs or restores), not shared (a
    /// dependent reads its outputs).
    exclusive: bool,
}

/// A holder of a `flock` on the file at `path`, from `/proc/locks`
/// (`N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF`), matched by inode.
fn lock_holder(path: &Path) -> Option<Holder> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(path).ok()?.ino().to_string();
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let at = fields.iter().position(|f| *f == "FLOCK")?;
        let (kind, pid, file) = (fields.get(at + 2)?, fields.get(at + 3)?, fields.get(at + 4)?);
        (file.rsplit(':').next()? == ino)
            .then(|| Some(Holder { pid: pid.parse().ok()?, exclusive: *kind == "WRITE" }))?
    })
}

/// Whether this vx runs inside a task's command (`VX_TASK` is set).
fn inside_a_task() -> bool {
    std::env::var_os("VX_TASK").is_some()
}

/// Whether this vx was started by the command of task `id` (`VX_PROJECT`
/// and `VX_TASK`, which every task gets): a nested `vx run` of another
/// task its parent is running may wait; one of its own task never ends.
fn inside_the_task(id: &str) -> bool {
    match (std::env::var("VX_PROJECT"), std::env::var("VX_TASK")) {
        (Ok(project), Ok(task)) => id.strip_prefix(project.as_str()).and_then(|r| r.strip_prefix('#')) == Some(&task),
        _ => false,
    }
}

/// The lock file of task `id`.
fn lock_path(root: &Path, id: &str) -> PathBuf {
    root.join(".vx/locks").join(&blake3::hash(id.as_bytes()).to_hex()[..16])
}

/// Takes the lock of task `id` if it is free, on the calling thread.
/// `Ok(None)` when the lock file cannot be made (see [`open`]).
pub(crate) fn try_acquire(root: &Path, id: &str) -> Result<Option<TaskLock>, Held> {
    let Some(file) = open(root, id) else { return Ok(None) };
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(Some(TaskLock { _lock: lock })),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(Held),
        Err(_) => Ok(None),
    }
}

/// How often a wait for another process's lock looks again: also how
/// soon it sees that vx is stopping.
const POLL: Duration = Duration::from_millis(50);

/// How a wait for a task's lock ended.
#[derive(Debug)]
pub(crate) enum Waited {
    /// Taken (`None`: the lock file cannot be made, see [`open`]).
    Locked(Option<TaskLock>),
    /// vx is stopping.
    Cancelled,
    /// The holder is the vx that started this one (its pid).
    Nested(u32),
}

/// Waits for the lock of task `id` in the workspace at `root`, calling
/// `waiting` once with the holder's pid (when it wrote one) if it has to
/// wait; gives up when `cancelled` is set.
pub(crate) async fn acquire(
    root: &Path,
    id: &str,
    cancelled: &AtomicBool,
    waiting: impl FnOnce(Option<u32>),
) -> Waited {
    let mut waiting = Some(waiting);
    let path = lock_path(root, id);
    loop {
        if let Ok(lock) = try_acquire(root, id) {
            return Waited::Locked(lock);
        }
        let holder = lock_holder(&path);
        if let Some(h) = holder.filter(|h| inside_a_task() && crate::guard::is_ancestor(h.pid as i32)) {
            if !h.exclusive {
                // The ancestor's task this vx runs in reads this task's
                // outputs: waiting would be for its own end.
                return Waited::Locked(None);
            }
            if inside_the_task(id) {
                return Waited::Nested(h.pid);
            }
        }
        if let Some(say) = waiting.take() {
            say(holder.map(|h| h.pid));
        }
        if cancelled.load(Ordering::SeqCst) {
            return Waited::Cancelled;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Takes the locks of `ids` (the tasks a task about to run depends on)
/// shared, waiting while another vx runs or restores one of them, and
/// calling `waiting` once with the first such task and its holder's pid.
/// `None` when vx is stopping. A lock file that cannot be made, or one
/// held by the ancestor this vx runs inside, is passed over.
pub(crate) async fn share(
    root: &Path,
    ids: &[String],
    cancelled: &AtomicBool,
    waiting: impl FnOnce(&str, Option<u32>),
) -> Option<Readers> {
    let mut waiting = Some(waiting);
    let mut locks = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(mut file) = open(root, id) else { continue };
        loop {
            match Flock::lock(file, FlockArg::LockSharedNonblock) {
                Ok(lock) => {
                    locks.push(lock);
                    break;
                }
                Err((again, nix::errno::Errno::EWOULDBLOCK)) => file = again,
                Err(_) => break,
            }
            let holder = lock_holder(&lock_path(root, id));
            if holder.is_some_and(|h| inside_a_task() && crate::guard::is_ancestor(h.pid as i32)) {
                break;
            }
            if let Some(say) = waiting.take() {
                say(id, holder.map(|h| h.pid));
            }
            if cancelled.load(Ordering::SeqCst) {
                return None;
            }
            tokio::time::sleep(POLL).await;
        }
    }
    Some(Readers { _locks: locks })
}
