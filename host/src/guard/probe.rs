//! Probes: short commands whose output belongs to a key (`runtime =
//! ["node --version"]`). Each runs like a task — its own session and
//! process group, registered here and with the guard process, so vx going
//! away stops it — but to completion, from a blocking thread, with its
//! output captured rather than streamed. Whatever it leaves behind in its
//! group is killed when its leader exits: a probe has no business running
//! on.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::groups::Groups;
use super::ladder::{group_alive, signal_group};
use super::spawn::{TaskCommand, guarded_command};

/// How often a running probe is checked for its exit or its deadline.
const POLL: Duration = Duration::from_millis(5);

/// How a probe ended.
#[derive(Debug)]
pub struct Probed {
    /// `None` when it was killed (its deadline passed, or a signal).
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `cmd` to its end or `limit`; with `clear_env`, its environment is
/// exactly `cmd.env`, else vx's plus `cmd.env`.
pub fn run_probe(cmd: &TaskCommand, clear_env: bool, groups: &Groups, limit: Duration) -> std::io::Result<Probed> {
    let mut child = guarded_command(cmd, clear_env, groups).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let pgid = child.id() as i32;
    groups.register(pgid);
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = read_all(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = read_all(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if !timed_out && started.elapsed() >= limit {
            timed_out = true;
            signal_group(pgid, Signal::SIGKILL);
        }
        std::thread::sleep(POLL);
    };
    if group_alive(pgid) {
        signal_group(pgid, Signal::SIGKILL);
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    groups.unregister(pgid);
    Ok(Probed { code: if timed_out { None } else { status.code() }, timed_out, stdout, stderr })
}
