//! Signalling groups and the kill ladder: SIGTERM, wait the grace period
//! (`VX_KILL_GRACE_MS`, default 2000), SIGKILL.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

const DEFAULT_GRACE: Duration = Duration::from_millis(2000);

/// Set by a second Ctrl-C: every ladder, running or to come, skips to SIGKILL.
static HURRY: AtomicBool = AtomicBool::new(false);

/// Cuts every grace period short from now on (the second Ctrl-C).
pub(crate) fn hurry() {
    HURRY.store(true, Ordering::SeqCst);
}

fn hurried() -> bool {
    HURRY.load(Ordering::SeqCst)
}

/// The grace period between SIGTERM and SIGKILL.
pub(crate) fn grace_period() -> Duration {
    if hurried() {
        return Duration::ZERO;
    }
    std::env::var("VX_KILL_GRACE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_GRACE, Duration::from_millis)
}

/// Sends `signal` to every process of the group; a group that is already
/// gone is not an error.
pub(crate) fn signal_group(pgid: i32, signal: Signal) {
    match killpg(Pid::from_raw(pgid), signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => tracing::warn!("could not send {signal} to process group {pgid}: {e}"),
    }
}

/// Whether the group still answers a signal: any process in it, zombies
/// included. One system call, for a caller that polls often.
pub(crate) fn group_signalable(pgid: i32) -> bool {
    !matches!(killpg(Pid::from_raw(pgid), None), Err(Errno::ESRCH))
}

/// Whether any process that is not a zombie is still in the group.
pub(crate) fn group_alive(pgid: i32) -> bool {
    if !group_signalable(pgid) {
        return false;
    }
    // A group of zombies still answers a signal, but runs nothing: an
    // orphan (esbuild's service, left by tsup) is reparented to PID 1,
    // and where PID 1 reaps nothing (a container without an init) it
    // stays a zombie for ever. Waiting for it to go, then the grace
    // period of a stop, cost seconds per task.
    !super::procfs::group_members(pgid).is_empty()
}

/// The ladder: SIGTERM, wait up to `grace` for the group to empty, then
/// SIGKILL. Returns once the group is gone or has been sent SIGKILL.
pub(crate) async fn stop_group(pgid: i32, grace: Duration) {
    if !group_alive(pgid) {
        return;
    }
    signal_group(pgid, Signal::SIGTERM);
    signal_group(pgid, Signal::SIGCONT);
    let deadline = Instant::now() + grace;
    let mut pause = Duration::from_millis(2);
    while Instant::now() < deadline && !hurried() {
        if !group_alive(pgid) {
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    signal_group(pgid, Signal::SIGKILL);
}

/// Sends `signal` to one process; one that is already gone is not an error.
pub(crate) fn signal_pid(pid: i32, signal: Signal) {
    #[expect(clippy::disallowed_methods, reason = "the guard is the one place that signals processes")]
    let result = kill(Pid::from_raw(pid), signal);
    match result {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => tracing::warn!("could not send {signal} to process {pid}: {e}"),
    }
}

/// Whether `pid` is a live process (it exists and is not a zombie).
pub(crate) fn pid_alive(pid: i32) -> bool {
    super::procfs::read_proc(pid).is_some_and(|p| p.state != 'Z')
}

/// The ladder for single processes (escapees outside any group).
pub(crate) async fn stop_pids(pids: &[i32], grace: Duration) {
    for &pid in pids {
        signal_pid(pid, Signal::SIGTERM);
        signal_pid(pid, Signal::SIGCONT);
    }
    let deadline = Instant::now() + grace;
    let mut pause = Duration::from_millis(2);
    while Instant::now() < deadline && !hurried() {
        if !pids.iter().any(|&p| pid_alive(p)) {
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    for &pid in pids {
        if pid_alive(pid) {
            signal_pid(pid, Signal::SIGKILL);
        }
    }
}
