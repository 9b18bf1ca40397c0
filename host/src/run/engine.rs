//! The engine: walks the task graph, keeps up to `--concurrency` tasks
//! running, streams their output, applies timeouts and `--continue`, and
//! stops everything through the guard on SIGINT/SIGTERM/SIGHUP.
//!
//! A task is finished when its process group is empty, not when its leader
//! exits: a background process left behind is named in a warning and
//! stopped by the kill ladder before the task's result is recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinSet;

use super::local::task_command;
use super::options::RunOptions;
use crate::config::Workspace;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{SkipReason, TaskGraph, Walker};
use crate::guard::{
    Groups, GuardLink, RUN_ID_VAR, TaskCommand, TaskMark, find_escapees, grace_period, group_alive, group_members,
    last_pid, signal_group, spawn_task, stop_group, stop_pids,
};
use crate::report::{RunSummary, Style, TaskResult, TaskStatus, Terminal};

/// How long output may stay open after a task's group is gone (a process
/// that left the group with `setsid` can hold the pipe).
const ORPHAN_OUTPUT_WAIT: Duration = Duration::from_millis(200);

/// Runs the graph. Returns the summary and, when vx was interrupted, the
/// kind of interruption (which decides the exit code).
pub async fn execute(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions) -> Result<(RunSummary, Option<ErrorKind>)> {
    let started = Instant::now();
    let style = Style { enabled: opts.color };
    let term = Arc::new(Terminal::new(style, opts.output_logs, opts.log_order));
    let run_id = format!(
        "{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    );
    let (groups, guard) = start_guard(&run_id, graph.is_empty());
    let cancelled = Arc::new(AtomicBool::new(false));
    let mut signals = Signals::install()?;
    let mut walker = Walker::new(graph, opts.continue_mode);
    let mut results: Vec<Option<TaskResult>> = vec![None; graph.len()];
    let mut running: JoinSet<(usize, TaskResult)> = JoinSet::new();
    let mut interrupted: Option<ErrorKind> = None;

    loop {
        while running.len() < opts.concurrency.max(1) {
            let Some(node) = walker.next_ready() else { break };
            let n = &graph.nodes[node];
            let project = &ws.projects[n.project];
            let task = &project.tasks[&n.id.task];
            let id = n.id.to_string();
            if task.executor != "local" {
                let why =
                    format!("executor `{}` is a plugin, and executor plugins are not supported yet", task.executor);
                term.note(&id, &why);
                walker.finish(node, false);
                results[node] = Some(TaskResult { id, status: TaskStatus::Failed(why), duration: Duration::ZERO });
                continue;
            }
            let mut command = task_command(ws, project, task);
            command.env.push((RUN_ID_VAR.into(), run_id.clone().into()));
            let job = Job {
                node,
                id,
                command,
                mark: TaskMark { run_id: run_id.clone(), project: project.name.clone(), task: task.name.clone() },
                timeout: task.timeout.or(opts.timeout),
                groups: groups.clone(),
                term: term.clone(),
                cancelled: cancelled.clone(),
            };
            running.spawn(job.run());
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            Some(joined) = running.join_next() => {
                let (node, result) = joined.map_err(|e| Error::internal(format!("a task runner crashed: {e}")))?;
                walker.finish(node, result.status == TaskStatus::Succeeded);
                results[node] = Some(result);
            }
            kind = signals.recv() => {
                if interrupted.is_none() {
                    interrupted = Some(kind);
                    cancelled.store(true, Ordering::SeqCst);
                    walker.interrupt();
                    term.print(&style.yellow("vx: stopping tasks (press Ctrl-C again to kill them now)\n"));
                    for pgid in groups.snapshot() {
                        tokio::spawn(stop_group(pgid, grace_period()));
                    }
                } else {
                    for pgid in groups.snapshot() {
                        signal_group(pgid, Signal::SIGKILL);
                    }
                }
            }
        }
    }

    for (node, reason) in walker.skipped() {
        let why = match reason {
            SkipReason::DependencyFailed(d) => format!("dependency {} did not succeed", graph.nodes[d].id),
            SkipReason::RunStopped(d) => {
                format!("the run stopped after {} failed; --continue runs the rest", graph.nodes[d].id)
            }
            SkipReason::Interrupted => "vx was interrupted".to_string(),
        };
        let id = graph.nodes[node].id.to_string();
        results[node] = Some(TaskResult { id, status: TaskStatus::Skipped(why), duration: Duration::ZERO });
    }
    if let Some(guard) = guard {
        guard.close();
    }
    let order = graph.topological_order();
    let summary =
        RunSummary { results: order.into_iter().filter_map(|n| results[n].take()).collect(), wall: started.elapsed() };
    term.print(&summary.render(style));
    Ok((summary, interrupted))
}

/// One task to run, with everything it needs owned.
struct Job {
    node: usize,
    id: String,
    command: TaskCommand,
    mark: TaskMark,
    timeout: Option<Duration>,
    groups: Groups,
    term: Arc<Terminal>,
    cancelled: Arc<AtomicBool>,
}

impl Job {
    async fn run(self) -> (usize, TaskResult) {
        let start = Instant::now();
        let status = self.run_process().await;
        self.term.finished(&self.id, status == TaskStatus::Succeeded);
        (self.node, TaskResult { id: self.id, status, duration: start.elapsed() })
    }

    async fn run_process(&self) -> TaskStatus {
        self.term.started(&self.id);
        let pid_before = last_pid();
        let mut proc = match spawn_task(&self.command, &self.groups) {
            Ok(p) => p,
            Err(e) => {
                let program = self.command.program.to_string_lossy();
                self.term.note(&self.id, &format!("could not start `{program}`: {e}"));
                return TaskStatus::Failed(format!("could not start `{program}`: {e}"));
            }
        };
        let pgid = proc.pgid;
        let mut reader = BufReader::new(proc.output);
        let mut line = Vec::new();
        let mut eof = false;
        let mut timed_out = false;
        let mut exit = None;
        let deadline = tokio::time::sleep(self.timeout.unwrap_or(Duration::from_secs(u64::MAX / 4)));
        tokio::pin!(deadline);

        // Until the leader exits: stream output, watch the deadline.
        while exit.is_none() {
            tokio::select! {
                read = reader.read_until(b'\n', &mut line), if !eof => match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(_) => { self.term.line(&self.id, &line); line.clear(); }
                },
                status = proc.child.wait() => exit = Some(status),
                () = &mut deadline, if !timed_out && self.timeout.is_some() => {
                    timed_out = true;
                    self.term.note(&self.id, "timed out; stopping it");
                    tokio::spawn(stop_group(pgid, grace_period()));
                }
            }
        }

        // The leader is gone; anything left in its group was started in the
        // background and must not outlive the task.
        if group_alive(pgid) {
            let names = describe_group(pgid);
            if !self.cancelled.load(Ordering::SeqCst) && !timed_out {
                self.term.note(&self.id, &format!("stopping processes left running in the background: {names}"));
            }
            let stopper = tokio::spawn(stop_group(pgid, grace_period()));
            while !eof {
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => eof = true,
                    Ok(_) => {
                        self.term.line(&self.id, &line);
                        line.clear();
                    }
                }
            }
            let _ = stopper.await;
        }
        if let (Some(before), Some(after)) = (pid_before, last_pid()) {
            let escapees = find_escapees(&self.mark, before, after);
            if !escapees.is_empty() {
                let names: Vec<String> = escapees.iter().map(|p| format!("{} (pid {})", p.name, p.pid)).collect();
                if !self.cancelled.load(Ordering::SeqCst) {
                    self.term.note(
                        &self.id,
                        &format!("stopping processes that left the task's group: {}", names.join(", ")),
                    );
                }
                let pids: Vec<i32> = escapees.iter().map(|p| p.pid).collect();
                stop_pids(&pids, grace_period()).await;
            }
        }
        while !eof {
            match tokio::time::timeout(ORPHAN_OUTPUT_WAIT, reader.read_until(b'\n', &mut line)).await {
                Ok(Ok(n)) if n > 0 => {
                    self.term.line(&self.id, &line);
                    line.clear();
                }
                Ok(_) => eof = true,
                Err(_) => {
                    self.term.note(
                        &self.id,
                        "a process outside the task's group still holds its output open; no longer reading it",
                    );
                    break;
                }
            }
        }
        if !line.is_empty() {
            self.term.line(&self.id, &line);
        }
        self.groups.unregister(pgid);

        match exit.expect("the loop ends with an exit status") {
            _ if timed_out => TaskStatus::TimedOut(self.timeout.unwrap_or_default()),
            _ if self.cancelled.load(Ordering::SeqCst) => TaskStatus::Cancelled,
            Ok(status) if status.success() => TaskStatus::Succeeded,
            Ok(status) => {
                use std::os::unix::process::ExitStatusExt;
                match (status.code(), status.signal()) {
                    (Some(code), _) => TaskStatus::Failed(format!("exit code {code}")),
                    (None, Some(sig)) => TaskStatus::Failed(format!("killed by signal {sig}")),
                    _ => TaskStatus::Failed("unknown exit status".into()),
                }
            }
            Err(e) => TaskStatus::Failed(format!("could not wait for it: {e}")),
        }
    }
}

/// Starts the guard process; without one (it failed to start, or there is
/// nothing to run) tasks still run, with a warning in the first case.
fn start_guard(run_id: &str, nothing_to_run: bool) -> (Groups, Option<Arc<GuardLink>>) {
    if nothing_to_run {
        return (Groups::new(), None);
    }
    match GuardLink::start(run_id) {
        Ok((link, mut child)) => {
            let link = Arc::new(link);
            let watched = link.clone();
            tokio::spawn(async move {
                let status = child.wait().await.map_or_else(|e| e.to_string(), |s| s.to_string());
                watched.guard_died(&status);
            });
            (Groups::with_guard(link.clone()), Some(link))
        }
        Err(e) => {
            eprintln!("vx: warning: could not start the guard process ({e}); tasks are not stopped if vx is killed");
            (Groups::new(), None)
        }
    }
}

/// `name (pid N)` for each live process of the group.
fn describe_group(pgid: i32) -> String {
    let found: Vec<String> = group_members(pgid).iter().map(|p| format!("{} (pid {})", p.name, p.pid)).collect();
    if found.is_empty() { format!("process group {pgid}") } else { found.join(", ") }
}

/// The signals that stop a run. SIGHUP is left alone when vx was started
/// with it ignored (`nohup`), so vx keeps that promise to its caller.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn install() -> Result<Signals> {
        let make = |kind| signal(kind).map_err(|e| Error::io("install signal handlers", e));
        let hup = if sighup_ignored() { None } else { Some(make(SignalKind::hangup())?) };
        Ok(Signals { int: make(SignalKind::interrupt())?, term: make(SignalKind::terminate())?, hup })
    }

    async fn recv(&mut self) -> ErrorKind {
        tokio::select! {
            _ = self.int.recv() => ErrorKind::Interrupted,
            _ = self.term.recv() => ErrorKind::Terminated,
            _ = async { match &mut self.hup { Some(h) => h.recv().await, None => std::future::pending().await } } => ErrorKind::HungUp,
        }
    }
}

fn sighup_ignored() -> bool {
    // SAFETY: a null new action only reads the current disposition.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}
