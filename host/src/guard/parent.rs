//! Dying with the npm launcher: `VX_PARENT_DEATH=PID[,PID…]`.
//!
//! The npm package's launcher (docs/install.md) execs vx where it can, but
//! processes can stay above vx that a user sees as "the command": the node
//! launcher under yarn berry, which forwards signals, and the package
//! manager (`npx`, `pnpm`, `yarn`, `bunx`) that started it. A `kill -9` of
//! one of them forwards nothing, and vx would run its tasks on. So the
//! launcher names them in `VX_PARENT_DEATH`, and vx ends, by SIGTERM to
//! itself, when any of them ends: the same SIGTERM a user could send, so vx
//! stops its tasks with the kill ladder as it always does (docs/guard.md).
//!
//! Each is watched through a pidfd, on a thread of its own. A process may
//! already be gone when vx starts, and then no end would ever be seen: after
//! opening its pidfd, vx checks that it is still an ancestor, and ends at
//! once, before it has started anything, when it is not. A package manager
//! that dies of the Ctrl-C that reached vx too (pnpm does) must not make it
//! a second signal, which would cut the kill ladder short: a vx already
//! stopping is left to finish, given a moment to take the first signal in.
//! On a kernel without pidfds (before 5.3) the parent alone is watched, with
//! `PR_SET_PDEATHSIG`. The variable is removed from vx's environment, so
//! neither `vx __guard` nor a task inherits it.

use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{Signal, kill};
use nix::unistd::{getpid, getppid};

use super::procfs::is_ancestor;

/// How long (in 10 ms ticks) a watched process's end waits for a signal
/// that reached vx at the same moment to mark the run as stopping.
const STOP_GRACE_TICKS: u32 = 20;

/// The variable the launcher sets to the PIDs vx must not outlive.
pub(crate) const PARENT_DEATH_VAR: &str = "VX_PARENT_DEATH";

/// Makes vx receive SIGTERM when any process named by `VX_PARENT_DEATH`
/// (its parent or an ancestor) ends. Does nothing when the variable is
/// unset; names that are not PIDs above 1 are ignored.
///
/// Must run first in `main`, while vx has one thread: it edits the
/// environment.
pub fn die_with_launcher() {
    let Some(value) = std::env::var_os(PARENT_DEATH_VAR) else {
        return;
    };
    // SAFETY: called at the top of `main`, before any thread exists, so no
    // other thread can be reading the environment.
    unsafe { std::env::remove_var(PARENT_DEATH_VAR) };
    let value = value.to_string_lossy();
    let pids = value.split([',', ' ']).filter_map(|p| p.trim().parse::<i32>().ok()).filter(|p| *p > 1);
    let mut watched = Vec::new();
    for pid in pids {
        match pidfd_open(pid) {
            // The pidfd names one process for good; checked after it is open,
            // the ancestry cannot be a later process that reused the PID.
            Ok(fd) if is_ancestor(pid) => watched.push(fd),
            Err(nix::errno::Errno::ENOSYS) if pid == getppid().as_raw() => {
                if prctl::set_pdeathsig(Signal::SIGTERM).is_ok() && getppid().as_raw() != pid {
                    terminate();
                }
            }
            Ok(_) | Err(nix::errno::Errno::ESRCH) => terminate(),
            Err(_) => {}
        }
    }
    if !watched.is_empty() {
        let spawned = std::thread::Builder::new().name("vx-launcher-watch".into()).spawn(move || watch(&watched));
        if spawned.is_err() {
            tracing::warn!("cannot watch the npm launcher's processes; vx may outlive a kill -9 of them");
        }
    }
}

/// Waits until one of the processes behind `fds` ends, then ends vx,
/// unless vx is stopping already.
fn watch(fds: &[OwnedFd]) {
    let mut polled: Vec<PollFd<'_>> = fds.iter().map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN)).collect();
    loop {
        match poll(&mut polled, PollTimeout::NONE) {
            Ok(n) if n > 0 => break,
            Err(nix::errno::Errno::EINTR) | Ok(_) => continue,
            Err(_) => return,
        }
    }
    // A Ctrl-C reaches vx and the package manager at once; the manager may
    // be gone before vx's handler has marked the run as stopping.
    for _ in 0..STOP_GRACE_TICKS {
        if crate::sys::stopping() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    terminate();
}

/// A pidfd for `pid`.
fn pidfd_open(pid: i32) -> Result<OwnedFd, nix::errno::Errno> {
    // SAFETY: pidfd_open takes a PID and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0).ok_or_else(nix::errno::Errno::last)?;
    // SAFETY: the descriptor was just returned to us and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// SIGTERM to the whole of vx, as `kill` from outside would send it: vx's
/// handler stops the run, and before the handler is installed the default
/// action ends vx, which has started nothing yet.
fn terminate() {
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that signals processes")]
    let _ = kill(getpid(), Signal::SIGTERM);
}
