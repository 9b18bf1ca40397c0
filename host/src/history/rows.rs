//! The typed rows history writes and reads: an invocation, a task run to
//! record, a task's point in time, a recorded run's task, how flaky a
//! task was. Words are stored as the events spell them
//! ([`CacheOutcome::word`], [`TaskStatus::word`]) and read back as the
//! same types, so no reader compares stored strings.

use std::time::Duration;

use serde::Serialize;

use crate::events::{CacheOutcome, TaskStatus};

/// The middle value (the upper one of an even count), as every p50 of
/// history is taken; `None` for no values.
pub(crate) fn median(mut values: Vec<i64>) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(values[values.len() / 2])
}

/// Milliseconds as stored, as a duration (negative ones, which vx never
/// writes, as zero).
pub(crate) fn millis(ms: i64) -> Duration {
    Duration::from_millis(ms.max(0) as u64)
}

/// One invocation as recorded.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Invocation {
    pub id: i64,
    pub command: String,
    pub cwd: String,
    pub tags: Vec<(String, String)>,
    pub started_ms: i64,
    pub ended_ms: i64,
    pub exit_code: i32,
    pub tasks: i64,
    pub cached: i64,
    /// CPU time of its tasks' process trees, summed; 0 when none was
    /// measured.
    pub cpu_ms: i64,
    /// The highest peak resident memory among its tasks, when measured.
    pub peak_rss_bytes: Option<i64>,
    /// What the dashboard needs to draw the run again; `None` (or empty)
    /// in runs recorded before it was kept.
    pub detail: InvocationDetail,
}

impl Invocation {
    /// How long the invocation took, by its stored times. Rows are read as
    /// stored, so the difference saturates instead of overflowing.
    pub fn duration_ms(&self) -> i64 {
        self.ended_ms.saturating_sub(self.started_ms)
    }
}

/// The rest of an invocation, as the run summary describes it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct InvocationDetail {
    /// The arguments after `vx`, as typed.
    pub args: Vec<String>,
    pub git_commit: Option<String>,
    /// The git branch, `None` when detached or not a repository.
    pub branch: Option<String>,
    pub env_mode: Option<String>,
    /// The walk's wall time (`ended_ms - started_ms` also counts config
    /// and planning).
    pub wall_ms: Option<i64>,
}

/// One task run to record.
#[derive(Debug, Clone)]
pub(crate) struct TaskRunRecord {
    pub(crate) task: String,
    pub(crate) key: Option<String>,
    /// As [`TaskStatus::word`] says it: `ok`, `failed`, `timed-out`,
    /// `cancelled`, `skipped`.
    pub(crate) status: &'static str,
    pub(crate) cache: CacheOutcome,
    pub(crate) duration: Duration,
    pub(crate) exit_code: Option<i32>,
    /// Attempts made (1 unless the task was retried).
    pub(crate) attempts: u32,
    /// CPU time and peak resident memory of its process trees, when the
    /// executor measured them.
    pub(crate) cpu_ms: Option<i64>,
    pub(crate) peak_rss_bytes: Option<i64>,
    /// When it began, from the run's start; `None` when it never began.
    pub(crate) start_ms: Option<i64>,
    pub(crate) executor: Option<String>,
    pub(crate) dependencies: Vec<String>,
    /// Why it failed, timed out or was skipped.
    pub(crate) reason: Option<String>,
}

/// How often a task was flaky (succeeded after a failed attempt) among
/// its recent executions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Flakiness {
    /// Executions looked at (the last few that ran, hits aside).
    pub executions: u32,
    pub flaky: u32,
}

/// A task with flaky runs in history (`vx history --flaky`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlakyTask {
    pub task: String,
    /// Runs that succeeded after a failed attempt.
    pub flaky: i64,
    /// Every run of the task that executed (not a hit, not skipped).
    pub executions: i64,
    /// The most recent flaky run: its invocation and when it started.
    pub last_invocation: i64,
    pub last_started_ms: i64,
}

/// One run of a task, as its history over time shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskPoint {
    pub(crate) invocation: i64,
    pub(crate) started_ms: i64,
    pub(crate) status: TaskStatus,
    pub(crate) cache: CacheOutcome,
    pub(crate) duration_ms: i64,
    pub(crate) cpu_ms: Option<i64>,
    pub(crate) peak_rss_bytes: Option<i64>,
    pub(crate) attempts: i64,
}

impl TaskPoint {
    /// Succeeded after a failed attempt.
    pub(crate) fn is_flaky(&self) -> bool {
        self.status == TaskStatus::Succeeded && self.attempts > 1
    }

    /// The run looked the cache up (a miss or a hit).
    pub(crate) fn looked_up(&self) -> bool {
        matches!(self.cache, CacheOutcome::Miss | CacheOutcome::Local | CacheOutcome::Remote)
    }

    /// The run did the work and succeeded: its duration is the work's.
    pub(crate) fn executed_ok(&self) -> bool {
        self.status == TaskStatus::Succeeded && !self.cache.is_hit()
    }
}

/// One task of a recorded run, as read back for its summary document.
#[derive(Debug, Clone)]
pub(crate) struct RecordedTask {
    pub(crate) task: String,
    pub(crate) key: Option<String>,
    /// The status, its reason set apart in `reason`.
    pub(crate) status: TaskStatus,
    pub(crate) cache: CacheOutcome,
    pub(crate) duration: Duration,
    pub(crate) exit_code: Option<i32>,
    pub(crate) attempts: u32,
    pub(crate) cpu_ms: Option<i64>,
    pub(crate) peak_rss_bytes: Option<i64>,
    pub(crate) start_ms: Option<i64>,
    /// `None` in runs recorded before the executor was kept.
    pub(crate) executor: Option<String>,
    /// The ids it depended on (from its row in older runs, else from the
    /// run's plan).
    pub(crate) dependencies: Vec<String>,
    pub(crate) reason: Option<String>,
}

/// A failed attempt whose output history kept, without the output:
/// what `vx history`, `vx last --failed` and the dashboard list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptLog {
    /// The run (invocation) it failed in, as `vx history` numbers runs.
    pub run: i64,
    /// `project#task`.
    pub task: String,
    /// Which attempt failed: 1 for the first.
    pub attempt: u32,
    /// How many attempts the task made in that run.
    pub attempts: u32,
    /// The task passed on a later attempt of that run.
    pub flaky: bool,
    /// The exit code of the attempt's process, when it exited.
    pub exit_code: Option<i32>,
    /// Why the attempt failed: `exit code 1`, `timed out after 5s`, ….
    pub reason: String,
    /// How many bytes of output the attempt wrote (as vx kept them:
    /// past 32 MiB an executor keeps its first 24 and last 8 MiB).
    pub bytes: u64,
    /// Its middle was left out (it wrote more than history keeps: the
    /// first and the last MiB), and a line in the text says where and how
    /// much.
    pub truncated: bool,
    /// When the run started, in milliseconds since the Unix epoch.
    pub started_ms: i64,
}

/// The output of a failed attempt, as history kept it
/// ([`History::failed_log`](super::History::failed_log)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedLog {
    /// Which attempt of which task in which run, and how it ended.
    #[serde(flatten)]
    pub about: KeptLog,
    /// The output as the task wrote it (stdout and stderr interleaved,
    /// bytes that are not UTF-8 replaced), cut as `about.truncated` says.
    pub text: String,
}
