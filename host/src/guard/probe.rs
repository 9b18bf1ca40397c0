//! Probes: short commands whose output belongs to a key (`runtime =
//! ["node --version"]`). Each runs like a task — its own session and
//! process group, registered here and with the guard process, so vx going
//! away stops it — but to completion, from a blocking thread, with its
//! output captured rather than streamed. Whatever it leaves behind in its
//! group is killed when its leader exits: a probe has no business running
//! on. What it prints is bounded ([`PROBE_OUTPUT_LIMIT`] per stream): a
//! probe that prints without end is stopped, not read until vx's memory
//! runs out.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::groups::Groups;
use super::ladder::{group_alive, signal_group};
use super::spawn::{TaskCommand, guarded_command};

/// How often a running probe is checked for its exit or its deadline.
const POLL: Duration = Duration::from_millis(5);

/// Bytes of a probe's stdout (and of its stderr) that are read; past
/// them the probe is stopped. `node --version` prints a line.
pub(crate) const PROBE_OUTPUT_LIMIT: u64 = 1 << 20;

/// How a probe ended.
#[derive(Debug)]
pub(crate) struct Probed {
    /// `None` when it was killed (its deadline passed, or a signal).
    pub code: Option<i32>,
    pub timed_out: bool,
    /// It printed more than [`PROBE_OUTPUT_LIMIT`] on a stream and was
    /// stopped.
    pub overflowed: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `cmd` to its end or `limit`; with `clear_env`, its environment is
/// exactly `cmd.env`, else vx's plus `cmd.env`.
pub(crate) fn run_probe(
    cmd: &TaskCommand,
    clear_env: bool,
    groups: &Groups,
    limit: Duration,
) -> std::io::Result<Probed> {
    let mut child = guarded_command(cmd, clear_env, groups).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let pgid = child.id() as i32;
    groups.register(pgid);
    let overflow = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        let overflow = overflow.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(PROBE_OUTPUT_LIMIT + 1).read_to_end(&mut buf);
            }
            if buf.len() as u64 > PROBE_OUTPUT_LIMIT {
                buf.truncate(PROBE_OUTPUT_LIMIT as usize);
                overflow.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            buf
        })
    };
    let stdout = read_all(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = read_all(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let mut timed_out = false;
    let mut overflowed = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if !timed_out && started.elapsed() >= limit {
            timed_out = true;
            signal_group(pgid, Signal::SIGKILL);
        }
        if !overflowed && overflow.load(std::sync::atomic::Ordering::SeqCst) {
            overflowed = true;
            signal_group(pgid, Signal::SIGKILL);
        }
        std::thread::sleep(POLL);
    };
    if group_alive(pgid) {
        signal_group(pgid, Signal::SIGKILL);
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    // A reader that stopped at the limit closed its pipe, which may have
    // ended the probe (SIGPIPE) before the loop above saw the flag.
    let overflowed = overflowed || overflow.load(std::sync::atomic::Ordering::SeqCst);
    groups.unregister(pgid);
    let code = if timed_out || overflowed { None } else { status.code() };
    Ok(Probed { code, timed_out, overflowed, stdout, stderr })
}
