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
//! The parent is watched by the kernel (`PR_SET_PDEATHSIG`), an ancestor
//! further up through a pidfd on a thread of its own. Either may already be
//! gone when vx starts, and no signal would ever come: after asking, vx
//! checks that each is still its parent or ancestor, and one that is not
//! ends vx at once, before it has started anything. The variable is removed
//! from vx's environment, so neither `vx __guard` nor a task inherits it.

use std::os::fd::{AsFd, FromRawFd, OwnedFd};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{Signal, kill};
use nix::unistd::{getpid, getppid};

use super::procfs::is_ancestor;

/// The variable the launcher sets to the PIDs vx must not outlive.
pub const PARENT_DEATH_VAR: &str = "VX_PARENT_DEATH";

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
        if pid == getppid().as_raw() {
            if prctl::set_pdeathsig(Signal::SIGTERM).is_ok() && getppid().as_raw() != pid {
                terminate();
            }
        } else if let Some(fd) = pidfd_open(pid) {
            // The pidfd names one process for good; checked after it is open,
            // the ancestry cannot be a later process that reused the PID.
            if !is_ancestor(pid) {
                terminate();
            }
            watched.push(fd);
        } else if !is_ancestor(pid) {
            terminate();
        }
    }
    if !watched.is_empty() {
        let spawned = std::thread::Builder::new().name("vx-launcher-watch".into()).spawn(move || watch(&watched));
        if spawned.is_err() {
            tracing::warn!("cannot watch the npm launcher's processes; vx may outlive a kill -9 of them");
        }
    }
}

/// Waits until one of the processes behind `fds` ends, then ends vx.
fn watch(fds: &[OwnedFd]) {
    let mut polled: Vec<PollFd<'_>> = fds.iter().map(|fd| PollFd::new(fd.as_fd(), PollFlags::POLLIN)).collect();
    loop {
        match poll(&mut polled, PollTimeout::NONE) {
            Ok(n) if n > 0 => return terminate(),
            Err(nix::errno::Errno::EINTR) | Ok(_) => continue,
            Err(_) => return,
        }
    }
}

/// A pidfd for `pid`, or `None` when it is gone or pidfds are unsupported.
fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a PID and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the descriptor was just returned to us and is owned by no one else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// SIGTERM to the whole of vx, as `kill` from outside would send it: vx's
/// handler stops the run, and before the handler is installed the default
/// action ends vx, which has started nothing yet.
fn terminate() {
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that signals processes")]
    let _ = kill(getpid(), Signal::SIGTERM);
}
