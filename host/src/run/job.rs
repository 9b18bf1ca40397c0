//! One task's process from start to finish: streaming its output, its
//! timeout, readiness for persistent tasks, and making sure nothing it
//! started is left when it is recorded as done.
//!
//! A task is finished when its process group is empty, not when its leader
//! exits: a background process left behind is named in a warning and
//! stopped by the kill ladder, and so is any descendant that left the group
//! (found by its environment marker, see `guard::escape`).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{Notify, mpsc};

use super::executor::Prepared;
use crate::cache::{Cache, CacheKey, KeyManifest, Lookup};
use crate::config::{Ready, Task};
use crate::events::{CacheOutcome, TaskResult, TaskStatus};
use crate::guard::{
    Groups, TaskCommand, TaskMark, find_escapees, grace_period, group_alive, group_members, last_pid, spawn_task,
    stop_group, stop_pids,
};
use crate::report::Terminal;

/// How long output may stay open after a task's group is gone (a process
/// that left the group with `setsid` can hold the pipe).
const ORPHAN_OUTPUT_WAIT: Duration = Duration::from_millis(200);
/// How often a `port` or `path` readiness check is made.
const READY_POLL: Duration = Duration::from_millis(50);
/// Lines kept to explain a persistent task that died before it was ready.
const TAIL_LINES: usize = 10;
/// Lines of a failed task's output kept for reports (`--report`).
const LOG_TAIL_LINES: usize = 20;
const LOG_TAIL_BYTES: usize = 4096;

/// What makes a task persistent: its readiness rule and how vx stops it.
#[derive(Debug)]
pub struct Persistence {
    pub ready: Option<Ready>,
    pub ready_timeout: Option<Duration>,
    /// The project directory, for `ready = { path = … }`.
    pub dir: PathBuf,
    /// Tells the engine the task is ready (its node index).
    pub ready_tx: mpsc::UnboundedSender<usize>,
    /// Set by the engine when nothing needs the task any more.
    pub stop: Arc<Notify>,
}

/// The cache's part in one task: enough to compute its key, look it up and
/// store its result.
#[derive(Debug)]
pub struct CacheJob {
    pub cache: Arc<Cache>,
    pub root: PathBuf,
    pub project_dir: PathBuf,
    pub task: Task,
    pub executor_config: String,
    /// Node index and id of each task this one depends on.
    pub deps: Vec<(usize, String)>,
    /// Every node's key, filled in as tasks compute theirs.
    pub keys: Arc<Mutex<Vec<Option<CacheKey>>>>,
}

/// One task to run, with everything it needs owned.
#[derive(Debug)]
pub struct Job {
    pub node: usize,
    pub id: String,
    pub command: TaskCommand,
    pub mark: TaskMark,
    pub timeout: Option<Duration>,
    pub persistent: Option<Persistence>,
    pub cache: Option<CacheJob>,
    pub groups: Groups,
    pub term: Arc<Terminal>,
    pub cancelled: Arc<AtomicBool>,
    /// Where the task runs: here, through an executor plugin, or remotely.
    pub executor: super::executor::Prepared,
}

/// Why the process ended, beyond its exit status.
#[derive(Debug, Default)]
struct Ending {
    timed_out: bool,
    not_ready: Option<Duration>,
    stopped_as_planned: bool,
}

impl Job {
    /// Runs the task (or restores it from the cache). Returns its node, its
    /// result and the manifest of its key, when it has one.
    pub async fn run(self) -> (usize, TaskResult, Option<KeyManifest>) {
        // Waiting for another vx process to finish this task is not part
        // of its duration (history's p50s feed the ETAs).
        let _lock = match (&self.cache, &self.persistent) {
            (Some(c), None) => super::task_lock::acquire(&c.root, &self.id).await,
            _ => None,
        };
        let start = Instant::now();
        let keyed = match &self.cache {
            Some(c) => self.compute_key(c).await,
            None => None,
        };
        let cacheable = self.cache.as_ref().is_some_and(|c| c.task.cache) && keyed.is_some();
        let key_text = keyed.as_ref().map(|(k, _)| k.0.clone());
        if let (true, Some(c), Some((key, _))) = (cacheable, &self.cache, &keyed)
            && c.cache.reads()
            && let Some(tier) = self.try_hit(c, key).await
        {
            let result = TaskResult {
                id: self.id,
                status: TaskStatus::Succeeded,
                duration: start.elapsed(),
                cache: tier,
                key: key_text,
                exit_code: Some(0),
                log_tail: None,
            };
            return (self.node, result, keyed.map(|(_, m)| m));
        }
        // The log is kept for the cache and, for a task that ends, for the
        // report's log tail; a persistent task's would grow without end.
        let keep_log = cacheable || self.persistent.is_none();
        let (status, log, exit_code) = match &self.executor {
            Prepared::Plugin(plugin) => self.run_plugin(plugin, key_text.as_deref(), keep_log).await,
            Prepared::Remote(remote) => self.run_remote(remote, key_text.as_deref()).await,
            Prepared::Local => self.run_process(key_text.as_deref(), keep_log).await,
        };
        let duration = start.elapsed();
        let log_tail = (status != TaskStatus::Succeeded).then(|| log_tail(&log)).flatten();
        let manifest = keyed.as_ref().map(|(_, m)| m.clone());
        if let (true, TaskStatus::Succeeded, Some(c), Some((key, manifest))) = (cacheable, &status, &self.cache, keyed)
            && c.cache.writes()
        {
            let (cache, dir, task) = (c.cache.clone(), c.project_dir.clone(), c.task.clone());
            let saved =
                tokio::task::spawn_blocking(move || cache.save(&key, manifest, &dir, &task, &log, duration)).await;
            if let Ok(Err(why)) = saved {
                self.term.note(&self.id, &format!("not cached: {why}"));
            }
        }
        self.term.finished(&self.id, status == TaskStatus::Succeeded);
        let outcome = if cacheable { CacheOutcome::Miss } else { CacheOutcome::Uncached };
        let result = TaskResult { id: self.id, status, duration, cache: outcome, key: key_text, exit_code, log_tail };
        (self.node, result, manifest)
    }

    /// Computes the key once the dependencies' keys are known; records it
    /// for the dependents. `None` when it cannot be had (a dependency has
    /// none, or an input could not be read), with a warning in the latter.
    async fn compute_key(&self, c: &CacheJob) -> Option<(CacheKey, KeyManifest)> {
        let deps: Option<Vec<(String, CacheKey)>> = {
            let keys = c.keys.lock().expect("keys lock poisoned");
            c.deps.iter().map(|(n, id)| keys[*n].clone().map(|k| (id.clone(), k))).collect()
        };
        let deps = deps?;
        let (cache, root, dir, task, config, id) = (
            c.cache.clone(),
            c.root.clone(),
            c.project_dir.clone(),
            c.task.clone(),
            c.executor_config.clone(),
            self.id.clone(),
        );
        let computed =
            tokio::task::spawn_blocking(move || cache.task_key(&root, &dir, &id, &task, &config, &deps)).await;
        match computed {
            Ok(Ok((key, manifest))) => {
                c.keys.lock().expect("keys lock poisoned")[self.node] = Some(key.clone());
                Some((key, manifest))
            }
            Ok(Err(why)) => {
                self.term.note(&self.id, &format!("not cached: {why}"));
                None
            }
            Err(e) => {
                self.term.note(&self.id, &format!("not cached: key computation failed: {e}"));
                None
            }
        }
    }

    /// Looks the key up and restores a hit. A corrupt entry or a refused
    /// restore is a warning and a miss, never a failure.
    async fn try_hit(&self, c: &CacheJob, key: &CacheKey) -> Option<CacheOutcome> {
        let (cache, dir, task, key_owned) = (c.cache.clone(), c.project_dir.clone(), c.task.clone(), key.clone());
        let found = tokio::task::spawn_blocking(move || match cache.lookup_tiers(&key_owned) {
            (Lookup::Hit(entry), remote) => match cache.restore(&dir, &task, &entry) {
                Ok(_) => Ok(Some((entry, if remote { CacheOutcome::Remote } else { CacheOutcome::Local }))),
                Err(why) => Err(format!("could not restore its outputs ({why}); running it")),
            },
            (Lookup::Miss, _) => Ok(None),
            (Lookup::Corrupt(why), _) => Err(format!("its cache entry was corrupt ({why}) and is removed; running it")),
        })
        .await;
        match found {
            Ok(Ok(Some((entry, tier)))) => {
                self.term.cached(&self.id, &key.0, &entry.log);
                Some(tier)
            }
            Ok(Ok(None)) => None,
            Ok(Err(why)) => {
                self.term.note(&self.id, &format!("warning: {why}"));
                None
            }
            Err(e) => {
                self.term.note(&self.id, &format!("warning: cache lookup failed ({e}); running it"));
                None
            }
        }
    }

    fn mark_ready(&self, ready: &mut bool) {
        if !*ready {
            *ready = true;
            if let Some(p) = &self.persistent {
                let _ = p.ready_tx.send(self.node);
            }
        }
    }

    /// Runs the process; returns its status and, when `keep_log`, its
    /// output as written (for the cache).
    async fn run_process(&self, key: Option<&str>, keep_log: bool) -> (TaskStatus, Vec<u8>, Option<i32>) {
        self.term.started(&self.id, key);
        let mut log = Vec::new();
        let pid_before = last_pid();
        let mut proc = match spawn_task(&self.command, &self.groups) {
            Ok(p) => p,
            Err(e) => {
                let program = self.command.program.to_string_lossy();
                self.term.note(&self.id, &format!("could not start `{program}`: {e}"));
                return (TaskStatus::Failed(format!("could not start `{program}`: {e}")), log, None);
            }
        };
        let pgid = proc.pgid;
        let mut reader = BufReader::new(proc.output);
        let mut line = Vec::new();
        let mut tail: VecDeque<String> = VecDeque::new();
        let mut eof = false;
        let mut ending = Ending::default();
        let mut exit = None;
        let far = Duration::from_secs(u64::MAX / 4);
        let deadline = tokio::time::sleep(self.timeout.unwrap_or(far));
        tokio::pin!(deadline);
        let rule = self.persistent.as_ref().and_then(|p| p.ready.clone());
        let mut ready = self.persistent.is_none();
        if self.persistent.is_some() && rule.is_none() {
            self.mark_ready(&mut ready);
        }
        let ready_deadline = tokio::time::sleep(self.persistent.as_ref().and_then(|p| p.ready_timeout).unwrap_or(far));
        tokio::pin!(ready_deadline);
        let mut poll = tokio::time::interval(READY_POLL);
        let polls = matches!(rule, Some(Ready::Port(_) | Ready::Path(_)));
        let stop = self.persistent.as_ref().map(|p| p.stop.clone()).unwrap_or_default();
        let stopping = |ending: &Ending| ending.timed_out || ending.not_ready.is_some() || ending.stopped_as_planned;

        // Until the leader exits (for a persistent task, until its whole
        // group is gone: `server & echo up` leaves the server running after
        // its shell): stream output, watch deadlines and readiness.
        let persistent = self.persistent.is_some();
        let mut group_gone = false;
        while exit.is_none() || (persistent && !group_gone) {
            tokio::select! {
                read = reader.read_until(b'\n', &mut line), if !eof => match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(_) => {
                        self.emit(&mut log, keep_log, &line);
                        if !ready {
                            let text = String::from_utf8_lossy(&line);
                            if let Some(Ready::Log(re)) = &rule && re.is_match(&text) {
                                self.mark_ready(&mut ready);
                            }
                            if tail.len() == TAIL_LINES {
                                tail.pop_front();
                            }
                            tail.push_back(text.trim_end().to_string());
                        }
                        line.clear();
                    }
                },
                status = proc.child.wait(), if exit.is_none() => exit = Some(status),
                () = &mut deadline, if !stopping(&ending) && self.timeout.is_some() => {
                    ending.timed_out = true;
                    self.term.note(&self.id, "timed out; stopping it");
                    tokio::spawn(stop_group(pgid, grace_period()));
                }
                () = &mut ready_deadline, if !ready && !stopping(&ending) => {
                    let limit = self.persistent.as_ref().and_then(|p| p.ready_timeout).unwrap_or_default();
                    ending.not_ready = Some(limit);
                    self.term.note(&self.id, "not ready in time; stopping it");
                    tokio::spawn(stop_group(pgid, grace_period()));
                }
                _ = poll.tick(), if (polls && !ready) || (persistent && exit.is_some()) => {
                    if polls && !ready && check_ready(rule.as_ref(), self.persistent.as_ref().map(|p| &p.dir)).await {
                        self.mark_ready(&mut ready);
                    }
                    if exit.is_some() {
                        group_gone = !group_alive(pgid);
                    }
                }
                () = stop.notified(), if self.persistent.is_some() && !stopping(&ending) => {
                    ending.stopped_as_planned = true;
                    tokio::spawn(stop_group(pgid, grace_period()));
                }
            }
        }

        let quiet = self.cancelled.load(Ordering::SeqCst) || stopping(&ending);
        // The leader is gone; anything left in its group was started in the
        // background and must not outlive the task.
        if group_alive(pgid) {
            if !quiet {
                self.term.note(
                    &self.id,
                    &format!("stopping processes left running in the background: {}", describe_group(pgid)),
                );
            }
            let stopper = tokio::spawn(stop_group(pgid, grace_period()));
            while !eof {
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => eof = true,
                    Ok(_) => {
                        self.emit(&mut log, keep_log, &line);
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
                if !quiet {
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
                    self.emit(&mut log, keep_log, &line);
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
            self.emit(&mut log, keep_log, &line);
        }
        self.groups.unregister(pgid);
        let exit = exit.expect("the loop ends with an exit status");
        let code = exit.as_ref().ok().and_then(std::process::ExitStatus::code);
        (self.status(exit, &ending, ready, &tail), log, code)
    }

    fn emit(&self, log: &mut Vec<u8>, keep: bool, line: &[u8]) {
        self.term.line(&self.id, line);
        if keep {
            log.extend_from_slice(line);
        }
    }

    fn status(
        &self,
        exit: std::io::Result<std::process::ExitStatus>,
        ending: &Ending,
        ready: bool,
        tail: &VecDeque<String>,
    ) -> TaskStatus {
        use std::os::unix::process::ExitStatusExt;
        if ending.timed_out {
            return TaskStatus::TimedOut(self.timeout.unwrap_or_default());
        }
        if self.cancelled.load(Ordering::SeqCst) {
            return TaskStatus::Cancelled;
        }
        if let Some(limit) = ending.not_ready {
            return TaskStatus::Failed(format!("not ready within {}", crate::report::format_duration(limit)));
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
        if self.persistent.is_some() && !ready {
            let tail: Vec<&str> = tail.iter().map(String::as_str).collect();
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
}

/// The last lines of a task's output (at most `LOG_TAIL_LINES` lines and
/// `LOG_TAIL_BYTES` bytes), for reports; `None` when it printed nothing.
fn log_tail(log: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().collect();
    let mut tail = lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n");
    if tail.len() > LOG_TAIL_BYTES {
        let mut start = tail.len() - LOG_TAIL_BYTES;
        while !tail.is_char_boundary(start) {
            start += 1;
        }
        tail = tail[start..].to_string();
    }
    (!tail.trim().is_empty()).then_some(tail)
}

/// Whether a `port` or `path` readiness rule holds now.
async fn check_ready(rule: Option<&Ready>, dir: Option<&PathBuf>) -> bool {
    match (rule, dir) {
        (Some(Ready::Port(port)), _) => tokio::net::TcpStream::connect(("127.0.0.1", *port)).await.is_ok(),
        (Some(Ready::Path(path)), Some(dir)) => dir.join(path).exists(),
        _ => false,
    }
}

/// `name (pid N)` for each live process of the group.
fn describe_group(pgid: i32) -> String {
    let found: Vec<String> = group_members(pgid).iter().map(|p| format!("{} (pid {})", p.name, p.pid)).collect();
    if found.is_empty() { format!("process group {pgid}") } else { found.join(", ") }
}
