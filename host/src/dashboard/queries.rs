//! The dashboard's reads of history as JSON: the runs list with its
//! filters, one task over time, a task's kept logs in a run, and the
//! workspace's statistics. The
//! queries and the figures are `crate::history`'s (typed rows, served by
//! its indexes, so the first page stays fast with 10,000 runs:
//! `bench/dashboard.sh`); this file only gives them the API's shape.

use serde_json::{Value, json};

use crate::history::{History, HistoryError, Invocation, RunFilter, STATS_WINDOW, TaskPoint};

/// The runs matching `filter`, newest first, as the list shows them,
/// each with how many failed attempts' logs it kept.
pub(crate) fn runs(history: &History, filter: &RunFilter) -> Result<Vec<Value>, HistoryError> {
    let runs = history.runs(filter)?;
    let ids: Vec<i64> = runs.iter().map(|i| i.id).collect();
    let logs = history.kept_logs_of(&ids)?;
    Ok(runs.iter().map(|i| run_row(i, logs.get(&i.id).map_or(0, Vec::len))).collect())
}

/// The kept logs of `task` in run `run`, each attempt with its output;
/// `None` when it kept none.
pub(crate) fn task_logs(history: &History, run: i64, task: &str) -> Result<Option<Value>, HistoryError> {
    let mut logs = Vec::new();
    for kept in history.kept_logs(run)?.into_iter().filter(|k| k.task == task) {
        logs.extend(history.attempt_log(run, task, kept.attempt)?);
    }
    Ok((!logs.is_empty()).then(|| json!({"run": run, "task": task, "logs": logs})))
}

fn run_row(i: &Invocation, logs: usize) -> Value {
    json!({
        "id": i.id,
        "command": i.command,
        "started_unix_ms": i.started_ms,
        "wall_ms": i.detail.wall_ms.unwrap_or_else(|| i.duration_ms()),
        "exit_code": i.exit_code,
        "tasks": i.tasks,
        "cached": i.cached,
        "cpu_ms": i.cpu_ms,
        "peak_rss_bytes": i.peak_rss_bytes,
        "branch": i.detail.branch,
        "git_commit": i.detail.git_commit,
        "tags": i.tags.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        "logs": logs,
    })
}

/// One task over its latest runs, oldest first: `None` when history has
/// no run of it.
pub(crate) fn task_history(history: &History, task: &str) -> Result<Option<Value>, HistoryError> {
    let Some(timeline) = history.task_timeline(task)? else { return Ok(None) };
    Ok(Some(json!({
        "task": task,
        "runs": timeline.points.len(),
        "hit_rate": timeline.hit_rate,
        "p50_ms": timeline.p50_ms,
        "flaky": timeline.flaky,
        "history": timeline.points.iter().map(point).collect::<Vec<_>>(),
    })))
}

fn point(p: &TaskPoint) -> Value {
    json!({
        "invocation": p.invocation,
        "started_unix_ms": p.started_ms,
        "status": p.status.word(),
        "cache": p.cache.summary_word(),
        "duration_ms": p.duration_ms,
        "cpu_ms": p.cpu_ms,
        "peak_rss_bytes": p.peak_rss_bytes,
        "attempts": p.attempts,
        "flaky": p.is_flaky(),
    })
}

/// The slowest tasks (by the p50 of their executions), the most often
/// missed, and the time cache hits saved per day, over the last
/// [`STATS_WINDOW`] runs.
pub(crate) fn stats(history: &History) -> Result<Value, HistoryError> {
    let stats = history.stats()?;
    Ok(json!({
        "window_runs": STATS_WINDOW,
        "slowest": stats.slowest.iter().map(|s| json!({"task": s.task, "p50_ms": s.p50_ms})).collect::<Vec<_>>(),
        "most_missed": stats.most_missed.iter().map(|m| json!({"task": m.task, "misses": m.misses, "lookups": m.lookups})).collect::<Vec<_>>(),
        "saved_by_day": stats.saved_by_day.iter().map(|d| json!({"day_unix_ms": d.day_unix_ms, "saved_ms": d.saved_ms, "hits": d.hits})).collect::<Vec<_>>(),
    }))
}
