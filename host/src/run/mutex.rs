//! The machine-wide side of `mutex`: an advisory lock file per name in a
//! directory shared by every vx of this user on the machine
//! (`$XDG_RUNTIME_DIR/vx/mutex`, else `vx-UID/mutex` in the system's
//! temporary directory). A task's lock is taken without blocking the engine:
//! when another process holds it, one thread per name waits for it and
//! hands it to the engine, which is woken on a channel.
//!
//! The lock is released when its task ends, and dies with the process
//! (`flock` belongs to the open file, which tasks never inherit: it is
//! opened close-on-exec). The holder writes its pid into the file, so a
//! waiter can say who holds it.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::PathBuf;

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use tokio::sync::mpsc;

/// A lock a waiting thread took for the engine.
pub(crate) type Delivered = (String, Flock<File>);

#[derive(Debug)]
pub(crate) struct MachineMutexes {
    /// `None` when the directory cannot be made: mutexes then hold only
    /// within this vx, as before (and a warning says so once).
    dir: Option<PathBuf>,
    /// Locks held for running tasks, by node.
    held: HashMap<usize, Flock<File>>,
    /// Locks a waiting thread took, not yet given to a task.
    pool: HashMap<String, Flock<File>>,
    /// Names a thread is waiting for.
    waiting: HashSet<String>,
    tx: mpsc::UnboundedSender<Delivered>,
}

/// The directory of the machine-wide locks.
pub(crate) fn lock_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("vx/mutex"),
        None => std::env::temp_dir().join(format!("vx-{}/mutex", nix::unistd::getuid())),
    }
}

impl MachineMutexes {
    pub(crate) fn new(tx: mpsc::UnboundedSender<Delivered>) -> Self {
        MachineMutexes { dir: None, held: HashMap::new(), pool: HashMap::new(), waiting: HashSet::new(), tx }
    }

    fn dir(&mut self) -> Option<PathBuf> {
        if self.dir.is_none() {
            let dir = lock_dir();
            match make_private_dir(&dir) {
                Ok(()) => self.dir = Some(dir),
                Err(e) => {
                    tracing::warn!(
                        "cannot make {} ({e}); `mutex` holds within this vx only, not across vx processes",
                        dir.display()
                    );
                    return None;
                }
            }
        }
        self.dir.clone()
    }

    /// Takes `name` for `node` without blocking. `Err` carries the pid of
    /// the process holding it (when known); a thread then waits for it
    /// and the engine hears on its channel when to ask again.
    pub(crate) fn try_take(&mut self, node: usize, name: &str) -> Result<(), Option<u32>> {
        if let Some(lock) = self.pool.remove(name) {
            self.held.insert(node, lock);
            return Ok(());
        }
        if self.waiting.contains(name) {
            return Err(self.dir().and_then(|d| holder_pid(&d.join(name))));
        }
        let Some(dir) = self.dir() else { return Ok(()) };
        let path = dir.join(name);
        let Ok(file) = open(&path) else { return Ok(()) };
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => {
                self.held.insert(node, mark(lock));
                Ok(())
            }
            Err((_, Errno::EWOULDBLOCK)) => {
                self.wait_for(name.to_string(), path.clone());
                Err(holder_pid(&path))
            }
            Err(_) => Ok(()),
        }
    }

    fn wait_for(&mut self, name: String, path: PathBuf) {
        self.waiting.insert(name.clone());
        let tx = self.tx.clone();
        // A plain thread, not the runtime's blocking pool: the wait may last
        // as long as the other vx runs, and the runtime waits for its pool
        // when it shuts down.
        let spawned = std::thread::Builder::new().name(format!("vx mutex {name}")).spawn(move || {
            let Ok(file) = open(&path) else { return };
            if let Ok(lock) = Flock::lock(file, FlockArg::LockExclusive) {
                let _ = tx.send((name, mark(lock)));
            }
        });
        if spawned.is_err() {
            tracing::warn!("cannot start a thread to wait for a mutex; its tasks wait for the next event");
        }
    }

    /// A waiting thread took `name`: it is kept for the task that wants it.
    pub(crate) fn deliver(&mut self, (name, lock): Delivered) {
        self.waiting.remove(&name);
        self.pool.insert(name, lock);
    }

    /// `node` ended (or did not start): its lock is released.
    pub(crate) fn release(&mut self, node: usize) {
        self.held.remove(&node);
    }

    /// Locks taken for tasks that no longer want them (the cycle ended).
    pub(crate) fn drop_unused(&mut self) {
        self.pool.clear();
    }
}

fn open(path: &std::path::Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).truncate(false).read(true).write(true).open(path)
}

/// Writes this process's pid into a lock just taken, for waiters to read.
/// Writes this process's pid into the held lock's file, so that a waiter
/// can say who holds it.
fn mark(lock: Flock<File>) -> Flock<File> {
    let mut file: &File = &lock;
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    lock
}

/// The pid the holder of the lock at `path` wrote, if any.
fn holder_pid(path: &std::path::Path) -> Option<u32> {
    let mut text = String::new();
    crate::paths::open_regular(path).ok()?.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// The lock directory, readable by this user only: other users' vx
/// processes have directories of their own.
fn make_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_name_is_refused_with_the_holder_pid_and_delivered_once_free() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut mine = MachineMutexes { dir: Some(dir.path().to_path_buf()), ..MachineMutexes::new(tx.clone()) };
        let mut theirs = MachineMutexes { dir: Some(dir.path().to_path_buf()), ..MachineMutexes::new(tx) };
        assert_eq!(theirs.try_take(1, "db"), Ok(()));
        assert_eq!(mine.try_take(2, "db"), Err(Some(std::process::id())), "held through another open file");
        theirs.release(1);
        let delivered = rx.blocking_recv().expect("the waiting thread takes it once it is free");
        assert_eq!(delivered.0, "db");
        mine.deliver(delivered);
        assert_eq!(mine.try_take(2, "db"), Ok(()));
        assert_eq!(theirs.try_take(1, "db"), Err(Some(std::process::id())));
    }
}
