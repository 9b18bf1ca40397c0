//! History as a run-event subscriber: the invocation, every task's result
//! and every keyed task's manifest are written to `.vx/history.db` when
//! the run finishes. Also the shell quoting that makes a recorded
//! command line paste-able (`vx last`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use crate::cache::{History, Invocation, InvocationDetail, KeyManifest, TaskRunRecord};
use crate::events::{CacheOutcome, Event, RunSummary, Subscriber};
use crate::report::{PlannedTask, RunInfo};

pub use crate::units::{command_line, shell_quote, unix_ms};

/// Records the run it watches. History is a convenience: failures warn.
#[derive(Debug)]
pub struct HistoryRecorder {
    db: PathBuf,
    invocation: Invocation,
    /// The run's start on the monotonic clock, and its plan: each task's
    /// executor and dependencies, so a recorded run can be drawn again.
    origin: std::time::Instant,
    planned: Arc<[PlannedTask]>,
    /// The recorded invocation's id, for the subscribers after this one
    /// (`--summarize` names its file with it).
    recorded: Arc<OnceLock<i64>>,
}

impl HistoryRecorder {
    /// The run `info` describes (its arguments as typed, the caller's
    /// directory, tags, start and plan).
    pub fn new(db: &Path, info: &RunInfo) -> Self {
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
        let planned = info.tasks.clone();
        HistoryRecorder { db: db.to_path_buf(), invocation, origin: info.origin, planned, recorded: Arc::default() }
    }

    /// Where the invocation's id appears once it is recorded.
    pub fn recorded_id(&self) -> Arc<OnceLock<i64>> {
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
        let planned: std::collections::HashMap<&str, &PlannedTask> =
            self.planned.iter().map(|t| (t.id.as_str(), t)).collect();
        let runs: Vec<TaskRunRecord> =
            summary.results.iter().map(|r| run_record(r, self.origin, planned.get(r.id.as_str()).copied())).collect();
        match History::open(&self.db).and_then(|mut h| h.record(&invocation, &runs, manifests)) {
            Ok(id) => {
                let _ = self.recorded.set(id);
            }
            Err(e) => tracing::warn!("could not record this run in .vx/history.db: {e}"),
        }
    }
}

impl Subscriber for HistoryRecorder {
    fn on(&self, event: &Event<'_>) {
        if let Event::RunFinished { summary, interrupted, manifests } = event {
            self.record(summary, summary.exit_code(*interrupted), manifests);
        }
    }
}

fn run_record(
    r: &crate::events::TaskResult,
    origin: std::time::Instant,
    planned: Option<&PlannedTask>,
) -> TaskRunRecord {
    TaskRunRecord {
        task: r.id.clone(),
        key: r.key.clone(),
        status: r.status.word(),
        cache: match r.cache {
            CacheOutcome::Uncached => "uncached",
            CacheOutcome::Miss => "miss",
            CacheOutcome::Local => "local",
            CacheOutcome::Remote => "remote",
            CacheOutcome::Group => "group",
        },
        duration: r.duration,
        exit_code: r.exit_code,
        attempts: r.attempts,
        cpu_ms: r.usage.map(|u| u.cpu.as_millis() as i64),
        peak_rss_bytes: r.usage.map(|u| u.peak_rss_bytes.min(i64::MAX as u64) as i64),
        start_ms: r.started.map(|s| s.saturating_duration_since(origin).as_millis() as i64),
        executor: planned.map(|p| p.executor.clone()),
        dependencies: planned.map(|p| p.dependencies.clone()).unwrap_or_default(),
        reason: crate::report::status_reason(&r.status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips_through_a_shell_reader() {
        assert_eq!(shell_quote("build"), "build");
        assert_eq!(shell_quote("web#build"), "web#build");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(command_line(&["run".into(), "--filter".into(), "./apps/*".into()]), "vx run --filter './apps/*'");
    }
}
