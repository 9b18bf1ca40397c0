//! The dashboard's reads of `.vx/history.db`: the runs list with its
//! filters, one task over time, and the workspace's statistics. Every
//! query is served by an index (`task_runs_by_invocation`,
//! `task_runs_by_task_time`, the invocations' primary key) or bounded to a
//! window of recent runs, so the first page stays fast with 10,000 runs
//! (`bench/dashboard.sh`).

use std::collections::HashMap;

use rusqlite::{ToSql, params};
use serde_json::{Value, json};

use crate::cache::{History, HistoryError, Invocation, median};

/// The statistics look at this many of the most recent runs.
pub const STATS_WINDOW: i64 = 500;
/// A task's history shows at most this many of its latest runs.
pub const TASK_HISTORY: i64 = 200;

/// The filters of the runs list; each is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Part of the command line.
    pub command: Option<String>,
    /// A tag, `KEY=VALUE`.
    pub tag: Option<(String, String)>,
    pub branch: Option<String>,
    /// `Some(true)`: exit code 0 only; `Some(false)`: the others.
    pub ok: Option<bool>,
    /// Runs older than this id (the next page).
    pub before: Option<i64>,
    pub limit: usize,
}

/// The runs matching `filter`, newest first, as the list shows them.
pub fn runs(history: &History, filter: &RunFilter) -> Result<Vec<Value>, HistoryError> {
    let mut conditions = vec!["1".to_string()];
    let mut values: Vec<Box<dyn ToSql>> = Vec::new();
    let mut bind = |condition: &str, value: Box<dyn ToSql>, values: &mut Vec<Box<dyn ToSql>>| {
        values.push(value);
        conditions.push(condition.replace('?', &format!("?{}", values.len() + 1)));
    };
    if let Some(text) = &filter.command {
        bind("instr(i.command, ?) > 0", Box::new(text.clone()), &mut values);
    }
    if let Some(tag) = &filter.tag {
        // Tags are stored as a JSON list of pairs: look for the pair's text.
        let pair = serde_json::to_string(tag).expect("a tag serializes");
        bind("instr(i.tags, ?) > 0", Box::new(pair), &mut values);
    }
    if let Some(branch) = &filter.branch {
        bind("i.branch = ?", Box::new(branch.clone()), &mut values);
    }
    if let Some(before) = filter.before {
        bind("i.id < ?", Box::new(before), &mut values);
    }
    match filter.ok {
        Some(true) => conditions.push("i.exit_code = 0".into()),
        Some(false) => conditions.push("i.exit_code != 0".into()),
        None => {}
    }
    let refs: Vec<&dyn ToSql> = values.iter().map(|v| v.as_ref()).collect();
    let found = history.invocations(&conditions.join(" AND "), &refs, filter.limit)?;
    Ok(found.iter().map(run_row).collect())
}

fn run_row(i: &Invocation) -> Value {
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
    })
}

/// One task over its latest runs, oldest first: `None` when history has
/// no run of it.
pub fn task_history(history: &History, task: &str) -> Result<Option<Value>, HistoryError> {
    let mut stmt = history.connection().prepare_cached(
        "SELECT t.invocation, i.started_ms, t.status, t.cache, t.duration_ms, t.cpu_ms, t.peak_rss_bytes, t.attempts
         FROM task_runs t JOIN invocations i ON i.id = t.invocation
         WHERE t.task = ?1 ORDER BY t.invocation DESC LIMIT ?2",
    )?;
    let mut runs: Vec<Value> = stmt
        .query_map(params![task, TASK_HISTORY], |r| {
            let status: String = r.get(2)?;
            let attempts: i64 = r.get(7)?;
            Ok(json!({
                "invocation": r.get::<_, i64>(0)?,
                "started_unix_ms": r.get::<_, i64>(1)?,
                "status": status,
                "cache": cache_word(&r.get::<_, String>(3)?),
                "duration_ms": r.get::<_, i64>(4)?,
                "cpu_ms": r.get::<_, Option<i64>>(5)?,
                "peak_rss_bytes": r.get::<_, Option<i64>>(6)?,
                "attempts": attempts,
                "flaky": status == "ok" && attempts > 1,
            }))
        })?
        .collect::<Result<_, _>>()?;
    if runs.is_empty() {
        return Ok(None);
    }
    runs.reverse();
    let looked_up: Vec<&Value> = runs.iter().filter(|r| r["cache"] != "off").collect();
    let hits = looked_up.iter().filter(|r| r["cache"].as_str().is_some_and(|c| c.starts_with("hit"))).count();
    let executed: Vec<i64> = runs
        .iter()
        .filter(|r| r["status"] == "ok" && matches!(r["cache"].as_str(), Some("miss" | "off")))
        .filter_map(|r| r["duration_ms"].as_i64())
        .collect();
    Ok(Some(json!({
        "task": task,
        "runs": runs.len(),
        "hit_rate": (!looked_up.is_empty()).then(|| hits as f64 / looked_up.len() as f64),
        "p50_ms": median(executed),
        "flaky": runs.iter().filter(|r| r["flaky"] == true).count(),
        "history": runs,
    })))
}

/// The slowest tasks (by the p50 of their executions), the most often
/// missed, and the time cache hits saved per day, over the last
/// [`STATS_WINDOW`] runs.
pub fn stats(history: &History) -> Result<Value, HistoryError> {
    let conn = history.connection();
    let first: i64 = conn.query_row(
        "SELECT COALESCE(MIN(id), 0) FROM (SELECT id FROM invocations ORDER BY id DESC LIMIT ?1)",
        params![STATS_WINDOW],
        |r| r.get(0),
    )?;
    // Counting is SQLite's: only the executions' durations (for the
    // p50s) come out row by row. Each query reads the window's range of
    // `task_runs_by_invocation`: left to itself, SQLite would rather scan
    // all history through `task_runs_by_task_time` to group without a sort.
    let mut durations: HashMap<String, Vec<i64>> = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT task, duration_ms FROM task_runs INDEXED BY task_runs_by_invocation
         WHERE invocation >= ?1 AND status = 'ok' AND cache IN ('miss', 'uncached')",
    )?;
    let mut rows = stmt.query(params![first])?;
    while let Some(r) = rows.next()? {
        durations.entry(r.get(0)?).or_default().push(r.get(1)?);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT task, COUNT(*) FILTER (WHERE cache = 'miss'), COUNT(*) FROM task_runs INDEXED BY task_runs_by_invocation
         WHERE invocation >= ?1 AND cache IN ('miss', 'local', 'remote') GROUP BY task",
    )?;
    let lookups: HashMap<String, (i64, i64)> =
        stmt.query_map(params![first], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?.collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT i.started_ms / 86400000 AS day, t.task, COUNT(*) FROM task_runs t INDEXED BY task_runs_by_invocation
         JOIN invocations i ON i.id = t.invocation
         WHERE t.invocation >= ?1 AND t.cache IN ('local', 'remote') GROUP BY day, t.task",
    )?;
    let hits_by_day: Vec<(i64, String, i64)> =
        stmt.query_map(params![first], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
    let p50s: HashMap<String, i64> = durations.into_iter().filter_map(|(t, d)| Some((t, median(d)?))).collect();
    let mut slowest: Vec<(&String, &i64)> = p50s.iter().collect();
    slowest.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut missed: Vec<(&String, &(i64, i64))> = lookups.iter().filter(|(_, (m, _))| *m > 0).collect();
    missed.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let mut saved: HashMap<i64, (i64, i64)> = HashMap::new();
    for (day, task, hits) in hits_by_day {
        let entry = saved.entry(day).or_default();
        entry.0 += hits * p50s.get(&task).copied().unwrap_or(0);
        entry.1 += hits;
    }
    let mut days: Vec<(i64, (i64, i64))> = saved.into_iter().collect();
    days.sort_unstable();
    Ok(json!({
        "window_runs": STATS_WINDOW,
        "slowest": slowest.iter().take(10).map(|(t, ms)| json!({"task": t, "p50_ms": ms})).collect::<Vec<_>>(),
        "most_missed": missed.iter().take(10).map(|(t, (m, n))| json!({"task": t, "misses": m, "lookups": n})).collect::<Vec<_>>(),
        "saved_by_day": days.iter().map(|(day, (ms, hits))| json!({"day_unix_ms": day * 86_400_000, "saved_ms": ms, "hits": hits})).collect::<Vec<_>>(),
    }))
}

/// A stored cache word as the summary says it.
fn cache_word(stored: &str) -> &'static str {
    crate::report::cache_word(super::run_doc::cache_outcome(stored))
}
