//! Task runs as the dashboard reads them: one task over its latest runs
//! (its timeline, hit rate, p50 and flaky count), and the tasks of one
//! recorded run with the dependencies of its plan. Both are served by an
//! index (`task_runs_by_task_time`, `task_runs_by_invocation`).

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::rows::{RecordedTask, TaskPoint, median, millis};
use super::store::{History, HistoryError};
use crate::events::{CacheOutcome, TaskStatus};

/// A task's history shows at most this many of its latest runs.
pub(crate) const TASK_HISTORY: i64 = 200;

/// One task over its latest runs, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskTimeline {
    pub(crate) points: Vec<TaskPoint>,
    /// Hits among the runs that looked the cache up; `None` when none did.
    pub(crate) hit_rate: Option<f64>,
    /// The p50 of its successful executions (hits aside).
    pub(crate) p50_ms: Option<i64>,
    /// Runs that succeeded after a failed attempt.
    pub(crate) flaky: usize,
}

impl TaskTimeline {
    fn of(points: Vec<TaskPoint>) -> TaskTimeline {
        let looked_up = points.iter().filter(|p| p.looked_up()).count();
        let hits = points.iter().filter(|p| p.cache.is_hit()).count();
        let executed = points.iter().filter(|p| p.executed_ok()).map(|p| p.duration_ms).collect();
        TaskTimeline {
            hit_rate: (looked_up > 0).then(|| hits as f64 / looked_up as f64),
            p50_ms: median(executed),
            flaky: points.iter().filter(|p| p.is_flaky()).count(),
            points,
        }
    }
}

/// A stored cache word as its outcome; a word no vx wrote reads as
/// uncached.
fn outcome(word: &str) -> CacheOutcome {
    CacheOutcome::from_word(word).unwrap_or_default()
}

impl History {
    /// `task` over its latest [`TASK_HISTORY`] runs; `None` when history
    /// has no run of it.
    pub(crate) fn task_timeline(&self, task: &str) -> Result<Option<TaskTimeline>, HistoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t.invocation, i.started_ms, t.status, t.cache, t.duration_ms, t.cpu_ms, t.peak_rss_bytes, t.attempts
             FROM task_runs t JOIN invocations i ON i.id = t.invocation
             WHERE t.task = ?1 ORDER BY t.invocation DESC LIMIT ?2",
        )?;
        let mut points: Vec<TaskPoint> = stmt
            .query_map(params![task, TASK_HISTORY], |r| {
                Ok(TaskPoint {
                    invocation: r.get(0)?,
                    started_ms: r.get(1)?,
                    status: TaskStatus::from_word(&r.get::<_, String>(2)?),
                    cache: outcome(&r.get::<_, String>(3)?),
                    duration_ms: r.get(4)?,
                    cpu_ms: r.get(5)?,
                    peak_rss_bytes: r.get(6)?,
                    attempts: r.get(7)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        if points.is_empty() {
            return Ok(None);
        }
        points.reverse();
        Ok(Some(TaskTimeline::of(points)))
    }

    /// The tasks of invocation `id` in the order they were recorded.
    pub(crate) fn recorded_tasks(&self, id: i64) -> Result<Vec<RecordedTask>, HistoryError> {
        let plan = self.recorded_plan(id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT task, key, status, cache, duration_ms, exit_code, attempts, cpu_ms, peak_rss_bytes,
                    start_ms, executor, dependencies, reason
             FROM task_runs WHERE invocation = ?1 ORDER BY rowid",
        )?;
        let rows = stmt.query_map(params![id], |row| {
            let task: String = row.get(0)?;
            let dependencies: Option<String> = row.get(11)?;
            // Older runs kept each task's list in its row; newer ones in the plan.
            let dependencies = dependencies
                .and_then(|d| serde_json::from_str(&d).ok())
                .or_else(|| plan.get(&task).cloned())
                .unwrap_or_default();
            Ok(RecordedTask {
                key: row.get(1)?,
                status: TaskStatus::from_word(&row.get::<_, String>(2)?),
                cache: outcome(&row.get::<_, String>(3)?),
                duration: millis(row.get(4)?),
                exit_code: row.get(5)?,
                attempts: row.get::<_, i64>(6)?.clamp(0, i64::from(u32::MAX)) as u32,
                cpu_ms: row.get(7)?,
                peak_rss_bytes: row.get(8)?,
                start_ms: row.get(9)?,
                executor: row.get(10)?,
                dependencies,
                reason: row.get(12)?,
                task,
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(HistoryError::from)
    }

    /// The dependencies of invocation `id`'s tasks, as `write::record_plan`
    /// stored them; empty for runs recorded without a plan.
    fn recorded_plan(&self, id: i64) -> Result<HashMap<String, Vec<String>>, HistoryError> {
        let doc: Option<String> = self
            .conn
            .prepare_cached("SELECT p.dependencies FROM invocations i JOIN plans p ON p.hash = i.plan WHERE i.id = ?1")?
            .query_row(params![id], |r| r.get(0))
            .optional()?;
        Ok(doc.and_then(|d| serde_json::from_str(&d).ok()).unwrap_or_default())
    }
}
