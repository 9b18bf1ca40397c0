//! A recorded run as the summary document `--summarize` writes
//! (`docs/schema/run-summary.v1.json`): the rows of `.vx/history.db` are
//! turned back into the plan and the results [`crate::report::run_document`]
//! describes, so the dashboard and `vx.renderRun` see one shape.
//!
//! Runs recorded before history kept timings have no `start_ms`,
//! executor, dependencies or reason: those fields are null or empty, and
//! the timeline has nothing to place (the table still lists every task).

use std::time::{Duration, Instant, SystemTime};

use rusqlite::params;
use serde_json::Value;

use crate::cache::{History, HistoryError, Invocation};
use crate::events::{CacheOutcome, RunSummary, TaskResult, TaskStatus};
use crate::guard::Usage;
use crate::report::{PlannedTask, RunInfo, run_document};

/// The summary document of invocation `id`, `None` when there is none.
pub fn recorded_document(history: &History, id: i64) -> Result<Option<Value>, HistoryError> {
    let Some(inv) = history.invocations("i.id = ?2", &[&id], 1)?.pop() else { return Ok(None) };
    let conn = history.connection();
    let mut stmt = conn.prepare_cached(
        "SELECT task, key, status, cache, duration_ms, exit_code, attempts, cpu_ms, peak_rss_bytes,
                start_ms, executor, dependencies, reason
         FROM task_runs WHERE invocation = ?1 ORDER BY rowid",
    )?;
    let plan = crate::cache::recorded_plan(conn, id)?;
    let origin = Instant::now();
    let mut planned = Vec::new();
    let rows = stmt.query_map(params![id], |row| {
        let id: String = row.get(0)?;
        let status: String = row.get(2)?;
        let cache: String = row.get(3)?;
        let reason: Option<String> = row.get(12)?;
        let cpu_ms: Option<i64> = row.get(7)?;
        let peak: Option<i64> = row.get(8)?;
        let start_ms: Option<i64> = row.get(9)?;
        let executor: Option<String> = row.get(10)?;
        let dependencies: Option<String> = row.get(11)?;
        let result = TaskResult {
            key: row.get(1)?,
            duration: millis(row.get(4)?),
            cache: cache_outcome(&cache),
            exit_code: row.get(5)?,
            attempts: row.get::<_, i64>(6)?.clamp(0, i64::from(u32::MAX)) as u32,
            started: start_ms.map(|ms| origin + millis(ms)),
            usage: cpu_ms.map(|cpu| Usage { cpu: millis(cpu), peak_rss_bytes: peak.unwrap_or(0).max(0) as u64 }),
            ..TaskResult::not_run(id.clone(), status_of(&status))
        };
        // Older runs kept each task's list in its row; newer ones in the plan.
        let dependencies = dependencies
            .and_then(|d| serde_json::from_str(&d).ok())
            .or_else(|| plan.get(&id).cloned())
            .unwrap_or_default();
        Ok((result, reason, executor.map(|executor| PlannedTask { id, executor, dependencies })))
    })?;
    let (mut results, mut reasons) = (Vec::new(), Vec::new());
    for row in rows {
        let (result, reason, plan) = row?;
        results.push(result);
        reasons.push(reason);
        planned.extend(plan);
    }
    let wall = inv.detail.wall_ms.unwrap_or_else(|| inv.duration_ms());
    let summary = RunSummary { results, wall: millis(wall) };
    let info = run_info(&inv, origin, planned);
    let mut doc = run_document(&info, Some(inv.id), &summary, inv.exit_code.clamp(0, 255) as u8);
    // The command as recorded: runs from before `args` was kept have none.
    doc["invocation"]["command"] = Value::String(inv.command.clone());
    // The reasons as recorded (the status alone cannot say them again).
    if let Some(tasks) = doc["tasks"].as_array_mut() {
        for (task, reason) in tasks.iter_mut().zip(reasons) {
            task["reason"] = reason.map_or(Value::Null, Value::String);
        }
    }
    Ok(Some(doc))
}

fn run_info(inv: &Invocation, origin: Instant, tasks: Vec<PlannedTask>) -> RunInfo {
    RunInfo {
        args: inv.detail.args.clone(),
        cwd: inv.cwd.clone().into(),
        tags: inv.tags.clone(),
        // Runs from before the mode was kept ran in the default mode.
        env_mode: if inv.detail.env_mode.as_deref() == Some("loose") { "loose" } else { "strict" },
        git_commit: inv.detail.git_commit.clone(),
        branch: inv.detail.branch.clone(),
        started: SystemTime::UNIX_EPOCH + millis(inv.started_ms),
        origin,
        tasks: tasks.into(),
    }
}

fn millis(ms: i64) -> Duration {
    Duration::from_millis(ms.max(0) as u64)
}

/// The stored status word back as a status (its reason is set apart).
fn status_of(word: &str) -> TaskStatus {
    match word {
        "ok" => TaskStatus::Succeeded,
        "skipped" => TaskStatus::Skipped(String::new()),
        "cancelled" => TaskStatus::Cancelled,
        "timed-out" => TaskStatus::TimedOut(Duration::ZERO),
        _ => TaskStatus::Failed(String::new()),
    }
}

/// A cache word as history stores it, back as the outcome.
pub(super) fn cache_outcome(word: &str) -> CacheOutcome {
    match word {
        "miss" => CacheOutcome::Miss,
        "local" => CacheOutcome::Local,
        "remote" => CacheOutcome::Remote,
        "group" => CacheOutcome::Group,
        _ => CacheOutcome::Uncached,
    }
}
