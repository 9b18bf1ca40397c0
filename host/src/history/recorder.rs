//! History as a run-event subscriber: the invocation, every task's result,
//! the output of every failed attempt and every keyed task's manifest are
//! written to `.vx/history.db` when the run finishes, and what
//! `[history] keep` no longer keeps is pruned in the same transaction.
//! The recorded id is published for the subscribers after this one
//! (`--summarize` names its file with it).
//!
//! A failed attempt's output reaches the recorder once, borrowed, in
//! `AttemptFailed` (the executor keeps every attempt's output anyway, for
//! the cache and the report's tail). The recorder bounds and compresses it
//! there, on the task's thread, and writes it to the run's [`Spill`] file:
//! what waits for the end of the run is a few numbers per failed attempt,
//! not its output. A run in which nothing fails pays nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Instant, SystemTime};

use super::log_blob::LogBlob;
use super::rows::{Invocation, InvocationDetail, TaskRunRecord};
use super::spill::{FailedAttempt, Spill};
use super::store::History;
use crate::cache::KeyManifest;
use crate::config::HistoryKeep;
use crate::events::{Event, RunSummary, Subscriber, TaskResult};
use crate::report::{PlannedTask, RunInfo, status_reason};
use crate::units::{command_line, unix_ms};

/// Records the run it watches. History is a convenience: failures warn.
#[derive(Debug)]
pub(crate) struct HistoryRecorder {
    db: PathBuf,
    invocation: Invocation,
    /// The run's start on the monotonic clock, and its plan: each task's
    /// executor and dependencies, so a recorded run can be drawn again.
    origin: Instant,
    planned: Arc<[PlannedTask]>,
    keep: HistoryKeep,
    recorded: Arc<OnceLock<i64>>,
    /// The failed attempts so far, their logs in an unnamed file.
    failed: Mutex<Spill>,
}

impl HistoryRecorder {
    /// The run `info` describes (its arguments as typed, the caller's
    /// directory, tags, start and plan), kept as `[history] keep`'s default
    /// says until [`keeping`](Self::keeping) says otherwise.
    pub(crate) fn new(db: &Path, info: &RunInfo) -> Self {
        let invocation = Invocation {
            id: 0,
            command: command_line(&info.args),
            cwd: info.cwd.to_string_lossy().into_owned(),
            tags: info.tags.clone(),
            started_ms: unix_ms(info.started),
            ended_ms: 0,
            exit_code: 0,
            tasks: 0,
            cached: 0,
            cpu_ms: 0,
            peak_rss_bytes: None,
            detail: InvocationDetail {
                args: info.args.clone(),
                git_commit: info.git_commit.clone(),
                branch: info.branch.clone(),
                env_mode: Some(info.env_mode.to_string()),
                wall_ms: None,
            },
        };
        HistoryRecorder {
            db: db.to_path_buf(),
            invocation,
            origin: info.origin,
            planned: info.tasks.clone(),
            keep: HistoryKeep::default(),
            recorded: Arc::default(),
            failed: Mutex::new(Spill::new(db.parent().unwrap_or(Path::new(".")))),
        }
    }

    /// Prunes history to the workspace's `[history] keep` as it records.
    pub(crate) fn keeping(self, keep: HistoryKeep) -> Self {
        HistoryRecorder { keep, ..self }
    }

    /// Where the invocation's id appears once it is recorded.
    pub(crate) fn recorded_id(&self) -> Arc<OnceLock<i64>> {
        self.recorded.clone()
    }

    fn record(&self, summary: &RunSummary, exit_code: u8, manifests: &[(String, String, KeyManifest)]) {
        let invocation = Invocation {
            ended_ms: unix_ms(SystemTime::now()),
            exit_code: i32::from(exit_code),
            detail: InvocationDetail {
                wall_ms: Some(summary.wall.as_millis() as i64),
                ..self.invocation.detail.clone()
            },
            ..self.invocation.clone()
        };
        // Borrowed from the shared plan when the run is over, not copied
        // into a map of its own when it starts.
        let planned: HashMap<&str, &PlannedTask> = self.planned.iter().map(|t| (t.id.as_str(), t)).collect();
        let runs: Vec<TaskRunRecord> =
            summary.results.iter().map(|r| run_record(r, self.origin, planned.get(r.id.as_str()).copied())).collect();
        let mut failed = std::mem::replace(
            &mut *self.failed.lock().unwrap_or_else(PoisonError::into_inner),
            Spill::new(Path::new("")),
        );
        let recorded = History::open(&self.db)
            .and_then(|mut h| h.record_with_logs(&invocation, &runs, manifests, &mut failed, self.keep));
        match recorded {
            Ok(id) => {
                let _ = self.recorded.set(id);
            }
            Err(e) => tracing::warn!("could not record this run in .vx/history.db: {e}"),
        }
    }

    /// Keeps a failed attempt's output until the run is recorded.
    fn keep_log(&self, attempt: FailedAttempt, log: &[u8]) {
        let kept = LogBlob::of(log)
            .and_then(|blob| self.failed.lock().unwrap_or_else(PoisonError::into_inner).push(attempt.clone(), &blob));
        // Warned once the lock is let go: the warning comes back through
        // the bus.
        if let Err(e) = kept {
            tracing::warn!("could not keep the log of {} (attempt {}) for history: {e}", attempt.task, attempt.attempt);
        }
    }
}

impl Subscriber for HistoryRecorder {
    fn on(&self, event: &Event<'_>) {
        match *event {
            Event::AttemptFailed { task, attempt, exit_code, reason, log } => {
                let attempt = FailedAttempt {
                    task: task.to_string(),
                    attempt,
                    exit_code,
                    reason: reason.to_string(),
                    bytes: 0,
                    truncated: false,
                };
                self.keep_log(attempt, log);
            }
            Event::RunFinished { summary, interrupted, manifests } => {
                self.record(summary, summary.exit_code(interrupted), manifests);
            }
            _ => {}
        }
    }
}

fn run_record(r: &TaskResult, origin: Instant, planned: Option<&PlannedTask>) -> TaskRunRecord {
    TaskRunRecord {
        task: r.id.clone(),
        key: r.key.clone(),
        status: r.status.word(),
        cache: r.cache,
        duration: r.duration,
        exit_code: r.exit_code,
        attempts: r.attempts,
        cpu_ms: r.usage.map(|u| u.cpu.as_millis() as i64),
        peak_rss_bytes: r.usage.map(|u| u.peak_rss_bytes.min(i64::MAX as u64) as i64),
        start_ms: r.started.map(|s| s.saturating_duration_since(origin).as_millis() as i64),
        executor: planned.map(|p| p.executor.clone()),
        dependencies: planned.map(|p| p.dependencies.clone()).unwrap_or_default(),
        reason: status_reason(&r.status),
    }
}
