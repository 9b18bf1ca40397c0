//! The dashboard's statistics over the last [`STATS_WINDOW`] runs: the
//! slowest tasks (by the p50 of their executions), the most often missed,
//! and the time cache hits saved per day. Counting is SQLite's: only the
//! executions' durations (for the p50s) come out row by row.

use std::collections::HashMap;

use rusqlite::params;

use super::rows::median;
use super::store::{History, HistoryError};

/// The statistics look at this many of the most recent runs.
pub(crate) const STATS_WINDOW: i64 = 500;

const DAY_MS: i64 = 86_400_000;

/// A task by the p50 of its successful executions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlowTask {
    pub(crate) task: String,
    pub(crate) p50_ms: i64,
}

/// A task by how often its lookups missed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissedTask {
    pub(crate) task: String,
    pub(crate) misses: i64,
    pub(crate) lookups: i64,
}

/// What one day's cache hits saved: each hit counted at its task's p50.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedDay {
    pub(crate) day_unix_ms: i64,
    pub(crate) saved_ms: i64,
    pub(crate) hits: i64,
}

/// The statistics, each list in the order the dashboard shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// The ten slowest, slowest first.
    pub(crate) slowest: Vec<SlowTask>,
    /// The ten most missed (at least one miss), most missed first.
    pub(crate) most_missed: Vec<MissedTask>,
    /// Oldest day first.
    pub(crate) saved_by_day: Vec<SavedDay>,
}

impl History {
    /// The statistics of the last [`STATS_WINDOW`] runs.
    pub(crate) fn stats(&self) -> Result<Stats, HistoryError> {
        let first: i64 = self.conn.query_row(
            "SELECT COALESCE(MIN(id), 0) FROM (SELECT id FROM invocations ORDER BY id DESC LIMIT ?1)",
            params![STATS_WINDOW],
            |r| r.get(0),
        )?;
        let p50s: HashMap<String, i64> =
            self.durations_since(first)?.into_iter().filter_map(|(t, d)| Some((t, median(d)?))).collect();
        let mut slowest: Vec<SlowTask> = p50s.iter().map(|(t, ms)| SlowTask { task: t.clone(), p50_ms: *ms }).collect();
        slowest.sort_by(|a, b| b.p50_ms.cmp(&a.p50_ms).then(a.task.cmp(&b.task)));
        slowest.truncate(10);
        let mut most_missed: Vec<MissedTask> =
            self.lookups_since(first)?.into_iter().filter(|m| m.misses > 0).collect();
        most_missed.sort_by(|a, b| b.misses.cmp(&a.misses).then(a.task.cmp(&b.task)));
        most_missed.truncate(10);
        let mut saved: HashMap<i64, (i64, i64)> = HashMap::new();
        for (day, task, hits) in self.hits_by_day_since(first)? {
            let entry = saved.entry(day).or_default();
            entry.0 += hits * p50s.get(&task).copied().unwrap_or(0);
            entry.1 += hits;
        }
        let mut saved_by_day: Vec<SavedDay> = saved
            .into_iter()
            .map(|(day, (saved_ms, hits))| SavedDay { day_unix_ms: day * DAY_MS, saved_ms, hits })
            .collect();
        saved_by_day.sort_unstable_by_key(|d| d.day_unix_ms);
        Ok(Stats { slowest, most_missed, saved_by_day })
    }

    /// Each task's successful executions' durations since invocation
    /// `first`. Each of these queries reads the window's range of
    /// `task_runs_by_invocation`: left to itself, SQLite would rather scan
    /// all history through `task_runs_by_task_time` to group without a sort.
    fn durations_since(&self, first: i64) -> Result<HashMap<String, Vec<i64>>, HistoryError> {
        let mut durations: HashMap<String, Vec<i64>> = HashMap::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT task, duration_ms FROM task_runs INDEXED BY task_runs_by_invocation
             WHERE invocation >= ?1 AND status = 'ok' AND cache IN ('miss', 'uncached')",
        )?;
        let mut rows = stmt.query(params![first])?;
        while let Some(r) = rows.next()? {
            durations.entry(r.get(0)?).or_default().push(r.get(1)?);
        }
        Ok(durations)
    }

    /// Each task's misses and lookups since invocation `first`.
    fn lookups_since(&self, first: i64) -> Result<Vec<MissedTask>, HistoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT task, COUNT(*) FILTER (WHERE cache = 'miss'), COUNT(*) FROM task_runs INDEXED BY task_runs_by_invocation
             WHERE invocation >= ?1 AND cache IN ('miss', 'local', 'remote') GROUP BY task",
        )?;
        let rows = stmt
            .query_map(params![first], |r| Ok(MissedTask { task: r.get(0)?, misses: r.get(1)?, lookups: r.get(2)? }))?;
        rows.collect::<Result<_, _>>().map_err(HistoryError::from)
    }

    /// Hits per day (days since the epoch) and task since invocation `first`.
    fn hits_by_day_since(&self, first: i64) -> Result<Vec<(i64, String, i64)>, HistoryError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT i.started_ms / 86400000 AS day, t.task, COUNT(*) FROM task_runs t INDEXED BY task_runs_by_invocation
             JOIN invocations i ON i.id = t.invocation
             WHERE t.invocation >= ?1 AND t.cache IN ('local', 'remote') GROUP BY day, t.task",
        )?;
        let rows = stmt.query_map(params![first], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>().map_err(HistoryError::from)
    }
}
