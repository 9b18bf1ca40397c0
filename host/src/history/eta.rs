//! What history says of a task's next run: the p50 of its recent
//! successful executions (ETAs of the status line, the terminal UI,
//! `--dry` and plugins) and how flaky it was lately (`--dry`,
//! `vx history --flaky`). A run that succeeded after more than one attempt
//! is a flaky run. Every query here reads `task_runs_executions`, the
//! partial index of the runs that executed (hits are not durations of the
//! work).

use std::collections::HashMap;
use std::time::Duration;

use rusqlite::params;

use super::rows::{Flakiness, FlakyTask, median, millis};
use super::store::{History, HistoryError};

/// The p50 duration in history of each task of `graph` that has one: the
/// ETAs of the status line, the terminal UI and `--shard`'s balance.
pub(crate) fn recorded_p50s(
    ws: &crate::config::Workspace,
    graph: &crate::graph::TaskGraph,
) -> HashMap<String, Duration> {
    let Ok(history) = History::open(&crate::cache::state_dir(ws).join("history.db")) else { return HashMap::new() };
    graph
        .nodes
        .iter()
        .filter_map(|n| {
            let id = n.id.to_string();
            history.p50(&id).map(|d| (id, d))
        })
        .collect()
}

/// How many recent successful runs make a task's p50, and how many recent
/// executions `--dry` counts flaky runs in.
const P50_WINDOW: usize = 20;

impl History {
    /// The p50 of a task's recent successful executions (cache hits do not
    /// say how long the work takes).
    pub fn p50(&self, task: &str) -> Option<Duration> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT duration_ms FROM task_runs WHERE task = ?1 AND status = 'ok' AND cache IN ('miss', 'uncached') ORDER BY rowid DESC LIMIT ?2",
            )
            .ok()?;
        let durations: Vec<i64> =
            stmt.query_map(params![task, P50_WINDOW as i64], |row| row.get(0)).ok()?.flatten().collect();
        median(durations).map(millis)
    }

    /// How often `task` was flaky in its last executions (hits and skips
    /// are not executions).
    pub fn flakiness(&self, task: &str) -> Flakiness {
        // The rows, counted here (counting in SQL made SQLite materialise a
        // subquery per task); `task_runs_executions` serves them in order.
        let counted = self
            .conn
            .prepare_cached(
                "SELECT status = 'ok' AND attempts > 1 FROM task_runs
                 WHERE task = ?1 AND cache IN ('miss', 'uncached') AND status IN ('ok', 'failed', 'timed-out')
                 ORDER BY rowid DESC LIMIT ?2",
            )
            .and_then(|mut stmt| {
                let mut rows = stmt.query_map(params![task, P50_WINDOW as i64], |r| r.get::<_, bool>(0))?;
                rows.try_fold(Flakiness::default(), |mut f, flaky| {
                    f.executions += 1;
                    f.flaky += u32::from(flaky?);
                    Ok(f)
                })
            });
        counted.unwrap_or_default()
    }

    /// Every task with a flaky run, most recently flaky first.
    pub fn flaky_tasks(&self, limit: usize) -> Result<Vec<FlakyTask>, HistoryError> {
        let mut stmt = self.conn.prepare(
            "SELECT f.task, f.flaky, f.last,
                    (SELECT COUNT(*) FROM task_runs u WHERE u.task = f.task
                        AND u.cache IN ('miss', 'uncached') AND u.status IN ('ok', 'failed', 'timed-out')),
                    (SELECT i.started_ms FROM invocations i WHERE i.id = f.last)
             FROM (SELECT task, COUNT(*) AS flaky, MAX(invocation) AS last FROM task_runs
                   WHERE status = 'ok' AND attempts > 1 GROUP BY task) f
             ORDER BY f.last DESC, f.task LIMIT ?1",
        )?;
        let rows = stmt.query_map(params![limit as i64], |row| {
            Ok(FlakyTask {
                task: row.get(0)?,
                flaky: row.get(1)?,
                last_invocation: row.get(2)?,
                executions: row.get(3)?,
                last_started_ms: row.get(4)?,
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(HistoryError::from)
    }
}
