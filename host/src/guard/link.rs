//! vx's side of the guard process: starting it, and the pipe that tells it
//! which process groups are alive.
//!
//! Protocol, one line per message on the guard's stdin: `+PGID` a group
//! started, `-PGID` it is gone, `=PID` a single process to kill too. A task
//! registers its own group from inside the child, after `setsid` and before
//! `exec`, so there is no moment at which a started task is unknown to the
//! guard. The write end is non-blocking: vx waits on a full pipe only
//! briefly (a busy guard catches up); if the guard dies or stops reading
//! for longer, vx warns once and carries on without it.

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The environment variable that marks every process of one vx invocation.
pub(crate) const RUN_ID_VAR: &str = "VX_RUN_ID";

#[derive(Debug)]
pub(crate) struct GuardLink {
    writer: Mutex<Option<std::io::PipeWriter>>,
    /// The writer's fd for registrations from forked children; -1 once the
    /// guard is gone.
    fd: AtomicI32,
    closing: AtomicBool,
}

impl GuardLink {
    /// Starts `vx __guard RUN_ID` in its own session and returns the link
    /// and the guard's child handle (to notice its death).
    pub(crate) fn start(run_id: &str) -> std::io::Result<(GuardLink, tokio::process::Child)> {
        let (reader, writer) = std::io::pipe()?;
        let exe = std::env::current_exe()?;
        #[expect(clippy::disallowed_methods, reason = "the guard is the one place that spawns processes")]
        let mut command = tokio::process::Command::new(exe);
        command.arg("__guard").arg(run_id).stdin(reader).stdout(Stdio::null()).stderr(Stdio::inherit());
        // SAFETY: setsid is async-signal-safe. Its own session keeps the
        // guard out of reach of the terminal's Ctrl-C, which is for vx.
        unsafe {
            command.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
        }
        let child = command.spawn()?;
        drop(command);
        set_nonblocking(writer.as_raw_fd())?;
        let fd = writer.as_raw_fd();
        let link =
            GuardLink { writer: Mutex::new(Some(writer)), fd: AtomicI32::new(fd), closing: AtomicBool::new(false) };
        Ok((link, child))
    }

    /// Starts the guard and watches it (a guard that dies is reported once);
    /// `None`, with a warning, when it cannot start. Needs a tokio runtime.
    pub(crate) fn start_watched(run_id: &str) -> Option<Arc<GuardLink>> {
        match GuardLink::start(run_id) {
            Ok((link, mut child)) => {
                let link = Arc::new(link);
                let watched = link.clone();
                tokio::spawn(async move {
                    let status = child.wait().await.map_or_else(|e| e.to_string(), |s| s.to_string());
                    watched.guard_died(&status);
                });
                Some(link)
            }
            Err(e) => {
                tracing::warn!("could not start the guard process ({e}); tasks are not stopped if vx is killed");
                None
            }
        }
    }

    /// The fd a forked child writes its `+PGID` to, while the guard lives.
    pub(crate) fn registration_fd(&self) -> Option<RawFd> {
        let fd = self.fd.load(Ordering::SeqCst);
        (fd >= 0).then_some(fd)
    }

    /// Sends one message; a failure retires the guard with one warning.
    /// A full pipe (the guard busy, or descheduled on a loaded machine) is
    /// waited on for up to [`SEND_PATIENCE`] first: dropping the writer
    /// closes the pipe, and a guard that sees it closed stops every task.
    pub(crate) fn send(&self, message: &str) {
        let mut writer = self.writer.lock().expect("guard link lock poisoned");
        let Some(w) = writer.as_mut() else { return };
        if let Err(e) = write_patiently(w, format!("{message}\n").as_bytes(), SEND_PATIENCE) {
            *writer = None;
            self.fd.store(-1, Ordering::SeqCst);
            tracing::warn!(
                "the guard process stopped listening ({e}); tasks started from now on are not stopped if vx is killed"
            );
        }
    }

    /// The guard exited on its own (killed, crashed).
    pub(crate) fn guard_died(&self, status: &str) {
        if self.closing.load(Ordering::SeqCst) {
            return;
        }
        let had = self.writer.lock().expect("guard link lock poisoned").take().is_some();
        self.fd.store(-1, Ordering::SeqCst);
        if had {
            tracing::warn!(
                "the guard process died ({status}); vx goes on without it, but tasks are no longer stopped if vx is killed"
            );
        }
    }

    /// Closes the pipe: the guard stops whatever is still listed and exits.
    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.fd.store(-1, Ordering::SeqCst);
        self.writer.lock().expect("guard link lock poisoned").take();
    }
}

/// How long one message may wait for room in the guard's pipe before the
/// guard counts as gone.
const SEND_PATIENCE: Duration = Duration::from_secs(2);

/// Writes all of `bytes` to the non-blocking `w`, waiting for the pipe to
/// have room (`poll`) while it is full, for at most `patience` in all.
fn write_patiently(w: &mut std::io::PipeWriter, mut bytes: &[u8], patience: Duration) -> std::io::Result<()> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let deadline = Instant::now() + patience;
    while !bytes.is_empty() {
        match w.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(e);
                }
                let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
                let mut fds = [PollFd::new(w.as_fd(), PollFlags::POLLOUT)];
                match poll(&mut fds, PollTimeout::from(ms)) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    // SAFETY: the fd is owned by the writer, which outlives this call.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let flags = OFlag::from_bits_truncate(fcntl(borrowed, FcntlArg::F_GETFL)?);
    fcntl(borrowed, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// The hook every guarded child runs between fork and exec: a session (and
/// so a process group) of its own, then `+PID` to the guard at `guard_fd`
/// when there is one. It allocates nothing and makes only
/// async-signal-safe calls, as code between fork and exec must.
pub(crate) fn own_group_and_register(
    guard_fd: Option<RawFd>,
) -> impl FnMut() -> std::io::Result<()> + Send + Sync + 'static {
    move || {
        nix::unistd::setsid().map_err(std::io::Error::from)?;
        if let Some(fd) = guard_fd {
            register_self(fd);
        }
        Ok(())
    }
}

/// Writes `+PID\n` for the calling process: used in a forked child between
/// `setsid` and `exec`, so it allocates nothing and only makes
/// async-signal-safe calls. SIGPIPE is ignored around the write (std resets
/// it to the default before pre-exec hooks), so a dead guard costs the task
/// nothing.
pub(crate) fn register_self(fd: RawFd) {
    let mut buf = [0u8; 16];
    let mut n = std::process::id();
    let mut digits = [0u8; 10];
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[0] = b'+';
    for i in 0..len {
        buf[1 + i] = digits[len - 1 - i];
    }
    buf[1 + len] = b'\n';
    // SAFETY: signal and write are async-signal-safe; buf outlives the call.
    unsafe {
        let old = libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::write(fd, buf.as_ptr().cast(), len + 2);
        libc::signal(libc::SIGPIPE, old);
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// A pipe whose non-blocking write end is full.
    fn full_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
        let (reader, mut writer) = std::io::pipe().unwrap();
        set_nonblocking(writer.as_raw_fd()).unwrap();
        let block = [b'x'; 4096];
        loop {
            match writer.write(&block) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => panic!("fill the pipe: {e}"),
            }
        }
        (reader, writer)
    }

    #[test]
    fn a_full_pipe_is_waited_on_until_the_reader_catches_up() {
        let (mut reader, writer) = full_pipe();
        let link =
            GuardLink { writer: Mutex::new(Some(writer)), fd: AtomicI32::new(0), closing: AtomicBool::new(false) };
        let drained = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            let mut all = Vec::new();
            reader.read_to_end(&mut all).unwrap();
            all
        });
        link.send("+4242");
        assert!(link.registration_fd().is_some(), "one full pipe must not retire the guard");
        assert!(link.writer.lock().unwrap().is_some(), "the writer is kept, so the guard's pipe stays open");
        link.close();
        let all = drained.join().unwrap();
        assert!(all.ends_with(b"x+4242\n"), "the message arrived whole after the backlog");
    }

    #[test]
    fn a_pipe_that_stays_full_gives_up_after_the_patience() {
        let (_reader, mut writer) = full_pipe();
        let e = write_patiently(&mut writer, b"+1\n", Duration::from_millis(50)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    }
}
