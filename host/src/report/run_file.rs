//! `--summarize[=FILE]`: the run as one JSON document, written when the
//! run finishes (by default to `.vx/runs/<invocation>.json`, the id `vx
//! history` shows). Its shape is versioned and described by
//! `docs/schema/run-summary.v1.json`; a change that drops or retypes a
//! field is a new version, a new optional field is not.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime};

use serde_json::{Value, json};

use crate::events::{CacheOutcome, Event, RunSummary, Subscriber, TaskResult, TaskStatus};

/// The schema's name and version, the document's `schema` field.
pub(crate) const SCHEMA: &str = "vx-run-summary/1";

/// What the run was, known before it starts: the invocation and each
/// planned task's executor and dependencies.
#[derive(Debug, Clone)]
pub(crate) struct RunInfo {
    /// The arguments after `vx`, as typed.
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub tags: Vec<(String, String)>,
    pub env_mode: &'static str,
    /// `HEAD` of the workspace's git repository, when it is one.
    pub git_commit: Option<String>,
    /// The branch HEAD names, `None` when detached or not a repository.
    pub branch: Option<String>,
    pub started: SystemTime,
    /// The same moment on the monotonic clock: tasks' `start_ms` count from it.
    pub origin: Instant,
    /// Shared: history, the summary, the profile and the live file each
    /// hold the run's info, and the plan is the large part of it.
    pub tasks: Arc<[PlannedTask]>,
}

/// A task of the plan, as the summary and the profile describe it.
#[derive(Debug, Clone)]
pub(crate) struct PlannedTask {
    pub id: String,
    pub executor: String,
    pub dependencies: Vec<String>,
    /// Its `description`, when the workspace gives one.
    pub description: Option<String>,
}

/// Where a file about the run goes: the path given with the flag, or
/// `.vx/runs/<invocation><suffix>`, named by the invocation's id in
/// history (set by the history recorder, which sees `RunFinished` first),
/// or by its start time when history could not be written.
#[derive(Debug, Clone)]
pub(crate) struct RunPath {
    pub given: Option<PathBuf>,
    pub runs_dir: PathBuf,
    pub suffix: &'static str,
    pub invocation: Arc<OnceLock<i64>>,
    pub started: SystemTime,
}

impl RunPath {
    pub(crate) fn resolve(&self) -> PathBuf {
        match &self.given {
            Some(file) => file.clone(),
            None => {
                let id = self.invocation.get().copied().unwrap_or_else(|| crate::units::unix_ms(self.started));
                self.runs_dir.join(format!("{id}{}", self.suffix))
            }
        }
    }
}

/// Writes `bytes` to `path`, making its directory; the error is one line.
/// A reader never sees half a file (a temporary file is renamed over it),
/// but nothing is synced to disk: a report need not outlive a power cut,
/// and an fsync would sit at the end of every run that asks for one.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<PathBuf, WriteFailed> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| WriteFailed(format!("could not create {}: {e}", dir.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(WriteFailed(format!("could not write {}: {e}", path.display())));
    }
    Ok(path.to_path_buf())
}

/// Why a file about the run could not be written, as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct WriteFailed(pub String);

/// A file about the run being written on a thread of its own: the summary,
/// the profile and history's commit overlap at the end of the run instead
/// of queueing on the engine's thread. [`Written::wait`] says where it went.
#[derive(Debug, Default)]
pub(crate) struct Written(Mutex<Option<std::thread::JoinHandle<Result<PathBuf, WriteFailed>>>>);

impl Written {
    /// Serializes `doc` with `render` and writes it to `path`, off this thread.
    pub(crate) fn start(&self, path: PathBuf, doc: Value, render: fn(&Value) -> serde_json::Result<Vec<u8>>) {
        let write = move || {
            let bytes = render(&doc).map_err(|e| WriteFailed(e.to_string()))?;
            write_file(&path, &bytes)
        };
        let handle = std::thread::Builder::new().name("vx-run-file".into()).spawn(write);
        let handle = handle
            .unwrap_or_else(|e| std::thread::spawn(move || Err(WriteFailed(format!("could not start a thread: {e}")))));
        *self.0.lock().expect("written lock poisoned") = Some(handle);
    }

    /// Where the file went, or why it could not be written; `None` when
    /// nothing was started (the run never finished).
    pub(crate) fn wait(&self) -> Option<Result<PathBuf, WriteFailed>> {
        let handle = self.0.lock().expect("written lock poisoned").take()?;
        Some(handle.join().unwrap_or_else(|_| Err(WriteFailed("its writer panicked".to_string()))))
    }
}

/// Writes the summary when the run finishes.
#[derive(Debug)]
pub(crate) struct RunFile {
    info: RunInfo,
    path: RunPath,
    /// Where the summary went, or why it could not be written.
    pub written: Written,
}

impl RunFile {
    pub(crate) fn new(info: RunInfo, path: RunPath) -> RunFile {
        RunFile { info, path, written: Written::default() }
    }
}

impl Subscriber for RunFile {
    fn on(&self, event: &Event<'_>) {
        if let Event::RunFinished { summary, interrupted, .. } = event {
            let exit_code = summary.exit_code(*interrupted);
            let doc = document(&self.info, self.path.invocation.get().copied(), summary, exit_code);
            self.written.start(self.path.resolve(), doc, |doc| {
                let mut text = serde_json::to_vec_pretty(doc)?;
                text.push(b'\n');
                Ok(text)
            });
        }
    }
}

/// The summary document of a finished run.
pub(crate) fn document(info: &RunInfo, invocation: Option<i64>, summary: &RunSummary, exit_code: u8) -> Value {
    let planned: std::collections::HashMap<&str, &PlannedTask> =
        info.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let tasks: Vec<Value> =
        summary.results.iter().map(|r| task(info, planned.get(r.id.as_str()).copied(), r)).collect();
    let measured: Vec<_> = summary.results.iter().filter_map(|r| r.usage).collect();
    json!({
        "schema": SCHEMA,
        "vx_version": env!("CARGO_PKG_VERSION"),
        "invocation": invocation_of(info, invocation, summary.wall.as_millis() as u64, Some(exit_code)),
        "totals": {
            "tasks": summary.results.len(),
            "succeeded": summary.succeeded(),
            "failed": summary.failed(),
            "skipped": summary.skipped(),
            "cached": summary.cached(),
            "flaky": summary.flaky(),
            "cpu_ms": measured.iter().map(|u| u.cpu.as_millis() as u64).sum::<u64>(),
            "peak_rss_bytes": measured.iter().map(|u| u.peak_rss_bytes).max(),
        },
        "tasks": tasks,
    })
}

/// The `invocation` object of a summary document: its id in history, the
/// wall time so far and, once the run is over, its exit code. The live
/// document of a run in progress (`dashboard::live`) has the same one.
pub(crate) fn invocation_of(info: &RunInfo, id: Option<i64>, wall_ms: u64, exit_code: Option<u8>) -> Value {
    json!({
        "id": id,
        "args": info.args,
        "command": crate::units::command_line(&info.args),
        "cwd": info.cwd.to_string_lossy(),
        "tags": info.tags.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        "env_mode": info.env_mode,
        "git_commit": info.git_commit,
        "branch": info.branch,
        "started_unix_ms": crate::units::unix_ms(info.started),
        "wall_ms": wall_ms,
        "exit_code": exit_code,
    })
}

fn task(info: &RunInfo, planned: Option<&PlannedTask>, r: &TaskResult) -> Value {
    let (project, name) = r.id.split_once('#').unwrap_or((r.id.as_str(), ""));
    let mut task = json!({
        "id": r.id,
        "project": project,
        "task": name,
        "key": r.key,
        "status": r.status.word(),
        "reason": status_reason(&r.status),
        "cache": r.cache.summary_word(),
        "group": r.cache == CacheOutcome::Group,
        "executor": planned.map(|p| p.executor.as_str()),
        "attempts": r.attempts,
        "flaky": r.is_flaky(),
        "start_ms": r.started.map(|s| s.saturating_duration_since(info.origin).as_millis() as u64),
        "duration_ms": r.duration.as_millis() as u64,
        "exit_code": r.exit_code,
        "cpu_ms": r.usage.map(|u| u.cpu.as_millis() as u64),
        "peak_rss_bytes": r.usage.map(|u| u.peak_rss_bytes),
        "dependencies": planned.map(|p| p.dependencies.clone()).unwrap_or_default(),
    });
    // Only a described task carries `description`, as in `vx show`.
    if let Some(description) = planned.and_then(|p| p.description.as_deref()) {
        task["description"] = json!(description);
    }
    task
}

/// Why a task failed, timed out or was skipped, as summaries and history
/// keep it; `None` for a task that succeeded or was stopped.
pub(crate) fn status_reason(status: &TaskStatus) -> Option<String> {
    match status {
        TaskStatus::Failed(why) | TaskStatus::Skipped(why) => Some(why.clone()),
        TaskStatus::TimedOut(limit) => Some(format!("timed out after {}", crate::units::format_duration(*limit))),
        TaskStatus::Succeeded | TaskStatus::Cancelled => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::guard::Usage;

    #[test]
    fn a_task_is_described_with_its_plan_and_its_result() {
        let origin = Instant::now();
        let info = RunInfo {
            args: vec!["run".into(), "build".into()],
            cwd: "/w".into(),
            tags: vec![("ci".into(), "1".into())],
            env_mode: "strict",
            git_commit: None,
            branch: None,
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(10),
            origin,
            tasks: vec![PlannedTask {
                id: "web#build".into(),
                executor: "local".into(),
                dependencies: vec!["ui#build".into()],
                description: None,
            }]
            .into(),
        };
        let ran = TaskResult {
            cache: CacheOutcome::Miss,
            duration: Duration::from_millis(250),
            attempts: 1,
            started: Some(origin + Duration::from_millis(40)),
            usage: Some(Usage { cpu: Duration::from_millis(120), peak_rss_bytes: 4096 }),
            ..TaskResult::not_run("web#build".into(), TaskStatus::Failed("exit code 2".into()))
        };
        let summary = RunSummary { results: vec![ran], wall: Duration::from_millis(300) };
        let doc = document(&info, Some(7), &summary, 1);
        assert_eq!(doc["invocation"]["id"], 7);
        assert_eq!(doc["invocation"]["command"], "vx run build");
        assert_eq!(doc["invocation"]["started_unix_ms"], 10_000);
        let t = &doc["tasks"][0];
        assert_eq!(t["project"], "web");
        assert_eq!(t["status"], "failed");
        assert_eq!(t["reason"], "exit code 2");
        assert_eq!(t["cache"], "miss");
        assert_eq!(t["start_ms"], 40);
        assert_eq!(t["cpu_ms"], 120);
        assert_eq!(t["dependencies"], json!(["ui#build"]));
        assert_eq!(doc["totals"]["peak_rss_bytes"], 4096);
    }
}
