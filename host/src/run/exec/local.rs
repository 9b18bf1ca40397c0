//! The local executor: the task's command as a process here, in its own
//! session and process group, registered with the guard.
//!
//! A task is finished when its process group is empty, not when its leader
//! exits: a background process left behind is named in a note and stopped
//! by the kill ladder, and so is any descendant that left the group (found
//! by its environment marker, see `guard::escape`).
//!
//! In strict env mode the process gets exactly the environment the
//! executor was prepared with (the allowlist and the task's lists, see
//! `config::env`) plus the command's own variables; in loose mode it
//! inherits vx's whole environment.

use std::ffi::OsString;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::net::unix::pipe;

use super::readiness::{READY_POLL, Readiness};
use super::{Attempt, Executor, Ran};
use crate::events::output::{BoundedLog, MAX_LINE, take_piece};
use crate::events::{Event, TaskStatus};
use crate::guard::{
    ExitWatch, Usage, find_escapees, grace_period, group_alive, group_members, group_signalable, last_pid,
    spawn_isolated, spawn_task, stop_group, stop_pids,
};

/// How long output is still read once a task's group is gone and what
/// left it was stopped: a process that left the group with `setsid` (and
/// hid from `guard::escape`) can hold the pipe open, and write to it, for
/// ever. The whole drain is bounded by this, not each read.
const ORPHAN_OUTPUT_WAIT: Duration = Duration::from_millis(300);
/// A deadline that never comes.
const FAR: Duration = Duration::from_secs(u64::MAX / 4);

/// Runs tasks as local processes.
#[derive(Debug, Clone)]
pub(crate) struct Local {
    /// The task's environment in strict mode; `None` inherits vx's.
    pub env: Option<StrictEnv>,
}

/// A strict task's environment: the allowlisted variables (the same for
/// every task of the session, so shared) and those the task's lists add.
#[derive(Debug, Clone)]
pub(crate) struct StrictEnv {
    pub allowed: std::sync::Arc<Vec<(OsString, OsString)>>,
    pub listed: Vec<(OsString, OsString)>,
}

impl Executor for Local {
    async fn run(&self, attempt: &Attempt) -> Ran {
        run_process(attempt, self.env.as_ref()).await
    }

    fn identity(&self) -> String {
        String::new()
    }
}

/// Why the process ended, beyond its exit status.
#[derive(Debug, Default)]
struct Ending {
    timed_out: bool,
    not_ready: Option<Duration>,
    stopped_as_planned: bool,
}

impl Ending {
    /// vx itself is stopping the task.
    fn stopping(&self) -> bool {
        self.timed_out || self.not_ready.is_some() || self.stopped_as_planned
    }
}

/// The task's output pipe, read line by line (a long line in pieces of
/// at most `MAX_LINE`) into events and the log.
struct Output<'a> {
    attempt: &'a Attempt,
    reader: BufReader<pipe::Receiver>,
    line: Vec<u8>,
    log: BoundedLog,
    eof: bool,
    /// The output is a terminal's: a prompt waits on a line it has not
    /// ended, so what is read is passed on at once, not held for a newline.
    partial: bool,
}

impl Output<'_> {
    /// Emits the line read so far (the caller clears it).
    fn emit(&mut self) {
        self.attempt.events.output(&self.attempt.id, &self.line);
        if self.attempt.keep_log {
            self.log.push(&self.line);
        }
    }

    /// Emits the line read so far and starts the next. Lines read after
    /// the leader exited still feed the tail that explains a server which
    /// died before it was ready: its last words usually come last.
    fn emit_next(&mut self, ready: &mut Readiness<'_>) {
        self.emit();
        ready.keep_in_tail(&self.line);
        self.line.clear();
    }

    /// Reads to the end of the pipe.
    async fn drain(&mut self, ready: &mut Readiness<'_>) {
        while !self.eof {
            match read_piece(&mut self.reader, &mut self.line, self.partial).await {
                Ok(false) | Err(_) => self.eof = true,
                Ok(true) => self.emit_next(ready),
            }
        }
    }

    /// Reads what is left for at most [`ORPHAN_OUTPUT_WAIT`], giving up
    /// when a process outside the group holds the pipe open, silent or
    /// not.
    async fn drain_orphans(&mut self, ready: &mut Readiness<'_>) {
        let deadline = tokio::time::Instant::now() + ORPHAN_OUTPUT_WAIT;
        while !self.eof {
            match tokio::time::timeout_at(deadline, read_piece(&mut self.reader, &mut self.line, self.partial)).await {
                Ok(Ok(true)) => self.emit_next(ready),
                Ok(_) => self.eof = true,
                Err(_) => {
                    self.attempt.events.note(
                        &self.attempt.id,
                        "a process outside the task's group still holds its output open; no longer reading it",
                    );
                    break;
                }
            }
        }
        if !self.line.is_empty() {
            self.emit_next(ready);
        }
    }
}

/// Reads into `line` up to and including the next newline, or until it
/// holds `MAX_LINE` bytes (`take_piece`), or, with `partial`, to the end
/// of what has arrived; the caller emits and clears it before the next
/// call. Returns whether a piece is ready (at the end of the pipe, an
/// unfinished last line is one); `false` once the pipe is done (a pty
/// whose task closed it reports EIO, which the callers take as the end).
/// Like `read_until` it is cancel-safe: what it consumed is in `line`, and
/// the next call goes on from there.
async fn read_piece<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    partial: bool,
) -> std::io::Result<bool> {
    loop {
        let room = MAX_LINE.saturating_sub(line.len());
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // An unfinished last line is a piece of its own.
            return Ok(!line.is_empty());
        }
        let (n, done) = take_piece(available, room);
        line.extend_from_slice(&available[..n]);
        reader.consume(n);
        if done || partial {
            return Ok(true);
        }
    }
}

/// Runs the process; returns its status and, when the attempt keeps it,
/// its output as written (for the cache).
async fn run_process(a: &Attempt, env: Option<&StrictEnv>) -> Ran {
    a.events.emit(Event::Started { task: &a.id, key: a.key.as_deref(), executor: crate::config::LOCAL });
    // Without the terminal UI nobody can type into the task's terminal: a
    // task that waits for input would wait for ever (in CI, always).
    if a.command.terminal && a.controls.is_none() {
        let why = "an interactive task needs a terminal to type into: run it with `--ui=tui` from a terminal, \
                   or set `interactive = false` where nobody types (CI)";
        a.events.note(&a.id, why);
        return Ran::failed(why.to_string());
    }
    let pid_before = last_pid();
    let (mut command, tracer) = match super::sandboxed::command(a) {
        Ok(prepared) => prepared,
        Err(why) => {
            a.events.note(&a.id, &why);
            return Ran::failed(why);
        }
    };
    let spawned = match env {
        None => spawn_task(&command, &a.groups),
        Some(strict) => {
            let vars = strict.allowed.iter().chain(&strict.listed).chain(&a.command.env);
            command.to_mut().env = vars.cloned().collect();
            spawn_isolated(&command, &a.groups)
        }
    };
    // The tracer's socket must be held by the child alone, so that its
    // thread sees the end when the child fails before handing it over.
    drop(command);
    let mut proc = match spawned {
        Ok(p) => p,
        Err(e) => {
            let program = a.command.program.to_string_lossy();
            let why = match crate::sandbox::spawn_failure(&e).filter(|_| a.command.confine.is_some()) {
                Some(sandbox) => format!("could not start `{program}`: {sandbox}; docs/sandbox.md"),
                None => format!("could not start `{program}`: {e}"),
            };
            a.events.note(&a.id, &why);
            return Ran::failed(why);
        }
    };
    let pgid = proc.pgid;
    let mut out = Output {
        attempt: a,
        reader: BufReader::new(proc.output),
        line: Vec::new(),
        log: BoundedLog::default(),
        eof: false,
        partial: a.command.terminal,
    };
    let controls = a.controls.as_ref().filter(|_| a.command.terminal);
    if let (Some(controls), Some(input)) = (controls, proc.input.take()) {
        controls.open_input(&a.id, input);
    }
    let mut ready = Readiness::new(a.persistent.as_ref(), a.node);
    let mut ending = Ending::default();
    let (exit, usage) = supervise(a, &mut proc.child, pgid, &mut out, &mut ready, &mut ending).await;
    let quiet = a.cancelled.load(Ordering::SeqCst) || ending.stopping();
    stop_leftovers(a, pgid, &mut out, &mut ready, quiet).await;
    stop_escapees(a, pid_before, quiet).await;
    stop_cgroup(a, proc.cgroup.as_ref(), quiet);
    out.drain_orphans(&mut ready).await;
    if let Some(controls) = controls {
        controls.close_input(&a.id);
    }
    a.groups.unregister(pgid);
    let exit_code = exit.as_ref().ok().and_then(std::process::ExitStatus::code);
    let status = super::sandboxed::settle(a, tracer, status(a, exit, &ending, &ready)).await;
    Ran { status, log: out.log.finish(), exit_code, usage }
}

/// Until the leader exits (for a persistent task, until its whole group is
/// gone: `server & echo up` leaves the server running after its shell):
/// streams output, watches the deadlines and readiness, and starts the
/// kill ladder when vx stops the task. One `select!` loop, so one piece:
/// every branch shares the same state. Returns the leader's exit and
/// what its tree used (`guard::ExitWatch`).
async fn supervise(
    a: &Attempt,
    child: &mut tokio::process::Child,
    pgid: i32,
    out: &mut Output<'_>,
    ready: &mut Readiness<'_>,
    ending: &mut Ending,
) -> (std::io::Result<std::process::ExitStatus>, Option<Usage>) {
    let watch = ExitWatch::new(child);
    let deadline = tokio::time::sleep(a.timeout.unwrap_or(FAR));
    tokio::pin!(deadline);
    let ready_deadline = tokio::time::sleep(ready.timeout().unwrap_or(FAR));
    tokio::pin!(ready_deadline);
    let mut poll = tokio::time::interval(READY_POLL);
    let stop = a.persistent.as_ref().map(|p| p.stop.clone()).unwrap_or_default();
    let persistent = a.persistent.is_some();
    let mut exit = None;
    let mut group_gone = false;
    let mut after_exit = 0u32;
    // Ticks of READY_POLL between two scans for a zombie-only group: 1 s.
    const SCANS_EVERY: u32 = (1000 / READY_POLL.as_millis()) as u32;
    while exit.is_none() || (persistent && !group_gone) {
        tokio::select! {
            read = read_piece(&mut out.reader, &mut out.line, out.partial), if !out.eof => match read {
                Ok(false) | Err(_) => out.eof = true,
                Ok(true) => {
                    out.emit();
                    ready.saw_line(&out.line);
                    out.line.clear();
                }
            },
            ended = watch.wait(child), if exit.is_none() => exit = Some(ended),
            () = &mut deadline, if !ending.stopping() && a.timeout.is_some() => {
                ending.timed_out = true;
                a.events.note(&a.id, "timed out; stopping it");
                tokio::spawn(stop_group(pgid, grace_period()));
            }
            () = &mut ready_deadline, if !ready.ready && !ending.stopping() => {
                ending.not_ready = Some(ready.timeout().unwrap_or_default());
                a.events.note(&a.id, "not ready in time; stopping it");
                tokio::spawn(stop_group(pgid, grace_period()));
            }
            _ = poll.tick(), if (ready.polls() && !ready.ready) || (persistent && exit.is_some()) => {
                if ready.polls() {
                    ready.poll().await;
                }
                if exit.is_some() {
                    // A server's leader is gone and its group stays: a
                    // signal says cheaply whether anything is left; whether
                    // only zombies are is a scan of /proc, asked once a
                    // second rather than every tick.
                    after_exit += 1;
                    group_gone = !group_signalable(pgid) || (after_exit.is_multiple_of(SCANS_EVERY) && !group_alive(pgid));
                }
            }
            () = stop.notified(), if persistent && !ending.stopping() => {
                ending.stopped_as_planned = true;
                tokio::spawn(stop_group(pgid, grace_period()));
            }
        }
    }
    exit.expect("the loop ends with an exit status")
}

/// Whatever is still in the task's cgroup left its group and hid from the
/// marker (a re-forking escapee): killed at once, whole (`guard::cgroup`).
fn stop_cgroup(a: &Attempt, cgroup: Option<&crate::guard::TaskCgroup>, quiet: bool) {
    let Some(cgroup) = cgroup.filter(|c| c.populated()) else { return };
    if !quiet {
        let pids: Vec<String> = cgroup.members().iter().map(i32::to_string).collect();
        a.events.note(
            &a.id,
            &format!("stopping processes that left the task's group and session (pids {})", pids.join(", ")),
        );
    }
    cgroup.kill();
}

/// The leader is gone; anything left in its group was started in the
/// background and must not outlive the task.
async fn stop_leftovers(a: &Attempt, pgid: i32, out: &mut Output<'_>, ready: &mut Readiness<'_>, quiet: bool) {
    if !group_alive(pgid) {
        return;
    }
    if !quiet {
        a.events.note(&a.id, &format!("stopping processes left running in the background: {}", describe_group(pgid)));
    }
    let mut stopper = tokio::spawn(stop_group(pgid, grace_period()));
    // Read while the group is stopped, but no longer: a process that left
    // the group may hold the pipe open after it is gone
    // (`drain_orphans` reads what is left, bounded).
    tokio::select! {
        () = out.drain(ready) => {
            let _ = stopper.await;
        }
        _ = &mut stopper => {}
    }
}

/// Stops descendants that left the task's group (`setsid`, double forks),
/// found by the run's marker in their environment.
async fn stop_escapees(a: &Attempt, pid_before: Option<i32>, quiet: bool) {
    let (Some(before), Some(after)) = (pid_before, last_pid()) else { return };
    let escapees = find_escapees(&a.mark, before, after);
    if escapees.is_empty() {
        return;
    }
    if !quiet {
        let names: Vec<String> = escapees.iter().map(|p| format!("{} (pid {})", p.name, p.pid)).collect();
        a.events.note(&a.id, &format!("stopping processes that left the task's group: {}", names.join(", ")));
    }
    let pids: Vec<i32> = escapees.iter().map(|p| p.pid).collect();
    stop_pids(&pids, grace_period()).await;
}

/// The task's status from how its process ended.
fn status(
    a: &Attempt,
    exit: std::io::Result<std::process::ExitStatus>,
    ending: &Ending,
    ready: &Readiness<'_>,
) -> TaskStatus {
    use std::os::unix::process::ExitStatusExt;
    if ending.timed_out {
        return TaskStatus::TimedOut(a.timeout.unwrap_or_default());
    }
    if a.cancelled.load(Ordering::SeqCst) {
        return TaskStatus::Cancelled;
    }
    if let Some(limit) = ending.not_ready {
        return TaskStatus::Failed(format!("not ready within {}", crate::units::format_duration(limit)));
    }
    if ending.stopped_as_planned {
        return TaskStatus::Succeeded;
    }
    let how = match &exit {
        Ok(status) if status.success() => None,
        Ok(status) => Some(match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "unknown exit status".to_string(),
        }),
        Err(e) => Some(format!("could not wait for it: {e}")),
    };
    if a.persistent.is_some() && !ready.ready {
        let tail: Vec<&str> = ready.tail.iter().map(String::as_str).collect();
        return TaskStatus::Failed(format!(
            "exited before it was ready ({}); last output: {}",
            how.as_deref().unwrap_or("exit code 0"),
            if tail.is_empty() { "none".to_string() } else { tail.join(" | ") }
        ));
    }
    match how {
        None => TaskStatus::Succeeded,
        Some(how) => TaskStatus::Failed(how),
    }
}

/// `name (pid N)` for each live process of the group.
fn describe_group(pgid: i32) -> String {
    let found: Vec<String> = group_members(pgid).iter().map(|p| format!("{} (pid {})", p.name, p.pid)).collect();
    if found.is_empty() { format!("process group {pgid}") } else { found.join(", ") }
}
