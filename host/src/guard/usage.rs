//! What a task's process tree used: CPU time and peak resident memory,
//! read from the kernel when its leader exits.
//!
//! The leader is waited for through a pidfd; once it is a zombie, a raw
//! `waitid(…, WEXITED | WNOWAIT, …)` reads its rusage without reaping it
//! (the kernel fills it with the zombie's own use plus that of every
//! descendant it waited for, which is what a shell does), and only then
//! does tokio reap it as before. Peeking rather than reaping ourselves
//! keeps tokio the one owner of the child: no pid is waited for twice.
//!
//! Not counted: descendants nobody waited for (a daemon left running that
//! the kill ladder stops) and processes that left the task's group. Where
//! `pidfd_open` is missing (Linux before 5.3) the task simply has no
//! figures.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::process::Child;

/// CPU time (user + system) and peak resident set size of a process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub cpu: Duration,
    pub peak_rss_bytes: u64,
}

impl Usage {
    /// The use of two attempts of one task: CPU adds up, the peak is the
    /// higher one.
    pub fn combine(self, other: Usage) -> Usage {
        Usage { cpu: self.cpu + other.cpu, peak_rss_bytes: self.peak_rss_bytes.max(other.peak_rss_bytes) }
    }
}

/// A child's exit, watched through its pidfd.
#[derive(Debug)]
pub(crate) struct ExitWatch {
    pid: i32,
    pidfd: Option<AsyncFd<OwnedFd>>,
}

impl ExitWatch {
    /// Watches `child`; without a pidfd, [`ExitWatch::wait`] still waits,
    /// with no usage.
    pub(crate) fn new(child: &Child) -> ExitWatch {
        let pid = child.id().map_or(0, |p| p as i32);
        ExitWatch { pid, pidfd: (pid > 0).then(|| pidfd_open(pid)).flatten() }
    }

    /// Waits for the child to exit and reaps it; returns its status and,
    /// when it could be read, what its tree used. Cancel-safe: dropped
    /// before the end, nothing has been reaped.
    pub(crate) async fn wait(&self, child: &mut Child) -> (std::io::Result<ExitStatus>, Option<Usage>) {
        let Some(fd) = &self.pidfd else { return (child.wait().await, None) };
        // A pidfd is readable once its process has exited.
        if let Ok(mut guard) = fd.readable().await {
            guard.retain_ready();
        }
        let usage = peek_usage(self.pid);
        (child.wait().await, usage)
    }
}

fn pidfd_open(pid: i32) -> Option<AsyncFd<OwnedFd>> {
    // SAFETY: a plain syscall; the fd it returns, if any, is ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` is a new descriptor nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: an OwnedFd stays open, and is the same descriptor, for as
    // long as the AsyncFd that owns it lives.
    unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }.ok()
}

/// The rusage of exited child `pid`, leaving it waitable. The libc
/// `waitid` has no rusage argument; the system call does.
fn peek_usage(pid: i32) -> Option<Usage> {
    // SAFETY: zeroed siginfo and rusage are valid values of these C structs.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pointers are to live, writable structs of the right type.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_waitid,
            libc::P_PID,
            pid,
            &mut info as *mut libc::siginfo_t,
            libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            &mut ru as *mut libc::rusage,
        )
    };
    // With WNOHANG a child not yet exited leaves si_pid 0.
    // SAFETY: si_pid reads the union member waitid fills in.
    if rc != 0 || unsafe { info.si_pid() } == 0 {
        return None;
    }
    Some(from_rusage(&ru))
}

fn from_rusage(ru: &libc::rusage) -> Usage {
    let time = |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.clamp(0, 999_999) as u32) * 1000);
    Usage {
        cpu: time(ru.ru_utime) + time(ru.ru_stime),
        // Linux reports ru_maxrss in KiB.
        peak_rss_bytes: (ru.ru_maxrss.max(0) as u64).saturating_mul(1024),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_add_cpu_and_keep_the_higher_peak() {
        let a = Usage { cpu: Duration::from_millis(300), peak_rss_bytes: 10 };
        let b = Usage { cpu: Duration::from_millis(200), peak_rss_bytes: 40 };
        assert_eq!(a.combine(b), Usage { cpu: Duration::from_millis(500), peak_rss_bytes: 40 });
    }

    #[tokio::test]
    async fn a_busy_child_reports_its_cpu_and_memory() {
        // A shell that waits for a child which touches ~64 MiB and spins:
        // the leader's rusage includes the child it waited for.
        #[expect(clippy::disallowed_methods, reason = "a test of the guard's own wait")]
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args([
            "-c",
            "head -c 67108864 /dev/zero | tail -n 1 >/dev/null; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
        ]);
        let mut child = cmd.spawn().unwrap();
        let watch = ExitWatch::new(&child);
        let (status, usage) = watch.wait(&mut child).await;
        assert!(status.unwrap().success());
        let usage = usage.expect("pidfd_open works on the kernels vx is tested on");
        assert!(usage.cpu > Duration::from_millis(20), "{usage:?}");
        // tail keeps the whole stream's last line, a 64 MiB line of zeros.
        assert!(usage.peak_rss_bytes > 32 << 20, "{usage:?}");
        // The child was reaped by tokio, once.
        assert!(child.try_wait().unwrap().is_some());
    }
}
