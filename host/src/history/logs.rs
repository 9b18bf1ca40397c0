//! The logs of failed attempts in `task_logs`: written with their run
//! (inside its recording transaction, from the recorder's [`Spill`]), and
//! read back for `vx last --failed`, `vx history`, the dashboard and the
//! MCP server. A log row whose run is gone (written by this vx, pruned by
//! an older one that knew no `task_logs`) is never read: every read joins
//! its run, and the next prune of a newer vx deletes it.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, Transaction, params};

use super::log_blob::inflate;
use super::rows::{FailedLog, KeptLog};
use super::spill::Spill;
use super::store::{History, HistoryError};

/// What every read of a kept log selects, in [`kept_row`]'s order, and
/// where from. The output itself is selected only by the reads that
/// return it (`, l.log` after these), so a list of logs reads none of
/// their pages.
const KEPT: &str = "l.invocation, l.task, l.attempt, COALESCE(t.attempts, l.attempt), COALESCE(t.status, 'failed'),
                    l.exit_code, l.reason, l.bytes, l.truncated, i.started_ms";
const FROM: &str = "FROM task_logs l JOIN invocations i ON i.id = l.invocation
                    LEFT JOIN task_runs t ON t.invocation = l.invocation AND t.task = l.task";

fn kept_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeptLog> {
    let count = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32;
    Ok(KeptLog {
        run: r.get(0)?,
        task: r.get(1)?,
        attempt: count(r.get(2)?),
        attempts: count(r.get(3)?),
        flaky: r.get::<_, String>(4)? == "ok",
        exit_code: r.get(5)?,
        reason: r.get(6)?,
        bytes: r.get::<_, i64>(7)?.max(0) as u64,
        truncated: r.get(8)?,
        started_ms: r.get(9)?,
    })
}

/// Writes the logs `spill` holds as run `id`'s.
pub(super) fn insert_logs(tx: &Transaction<'_>, id: i64, spill: &mut Spill) -> Result<(), HistoryError> {
    let mut insert = tx.prepare_cached(
        "INSERT OR REPLACE INTO task_logs (invocation, task, attempt, exit_code, reason, bytes, truncated, log)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    spill.each(|a, zstd| {
        let bytes = i64::try_from(a.bytes).unwrap_or(i64::MAX);
        insert.execute(params![id, a.task, a.attempt, a.exit_code, a.reason, bytes, a.truncated, zstd]).map(|_| ())
    })
}

impl History {
    /// The output of `task`'s last failed attempt: in run `run` when given,
    /// else in the most recent run that kept one. A flaky run's failed
    /// attempt counts (`about.flaky` says the task then passed). `None`
    /// when history holds no failed attempt of `task` there: it passed, it
    /// failed before its command ran, its run was pruned by
    /// `[history] keep`, or `task` (`project#task`) never ran.
    ///
    /// The text is the attempt's stdout and stderr as written, bounded:
    /// an output past 2 MiB keeps its first and last MiB with one line
    /// between them saying how much was left out (`about.truncated`).
    pub fn failed_log(&self, task: &str, run: Option<i64>) -> Result<Option<FailedLog>, HistoryError> {
        let found = match run {
            Some(run) => self
                .conn
                .prepare_cached(&format!("SELECT {KEPT}, l.log {FROM} WHERE l.task = ?1 AND l.invocation = ?2 ORDER BY l.attempt DESC LIMIT 1"))?
                .query_row(params![task, run], with_text)
                .optional()?,
            None => self
                .conn
                .prepare_cached(&format!("SELECT {KEPT}, l.log {FROM} WHERE l.task = ?1 ORDER BY l.invocation DESC, l.attempt DESC LIMIT 1"))?
                .query_row(params![task], with_text)
                .optional()?,
        };
        found.map(text_of).transpose()
    }

    /// The output of attempt `attempt` of `task` in run `run`, when kept.
    pub fn attempt_log(&self, run: i64, task: &str, attempt: u32) -> Result<Option<FailedLog>, HistoryError> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {KEPT}, l.log {FROM} WHERE l.invocation = ?1 AND l.task = ?2 AND l.attempt = ?3"
            ))?
            .query_row(params![run, task, attempt], with_text)
            .optional()?
            .map(text_of)
            .transpose()
    }

    /// The failed attempts run `run` kept the output of, in the order they
    /// failed, without their output.
    pub fn kept_logs(&self, run: i64) -> Result<Vec<KeptLog>, HistoryError> {
        let mut stmt =
            self.conn.prepare_cached(&format!("SELECT {KEPT} {FROM} WHERE l.invocation = ?1 ORDER BY l.rowid"))?;
        let rows = stmt.query_map(params![run], kept_row)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(HistoryError::from)
    }

    /// The kept logs of the runs `runs`, by run (for lists of runs).
    pub(crate) fn kept_logs_of(&self, runs: &[i64]) -> Result<HashMap<i64, Vec<KeptLog>>, HistoryError> {
        let (Some(&first), Some(&last)) = (runs.iter().min(), runs.iter().max()) else { return Ok(HashMap::new()) };
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {KEPT} {FROM} WHERE l.invocation BETWEEN ?1 AND ?2 ORDER BY l.invocation DESC, l.rowid"
        ))?;
        let mut by_run: HashMap<i64, Vec<KeptLog>> = HashMap::new();
        for kept in stmt.query_map(params![first, last], kept_row)? {
            let kept = kept?;
            if runs.contains(&kept.run) {
                by_run.entry(kept.run).or_default().push(kept);
            }
        }
        Ok(by_run)
    }

    /// The most recent run that kept a log.
    pub fn last_run_with_logs(&self) -> Result<Option<i64>, HistoryError> {
        self.conn
            .prepare_cached(
                "SELECT l.invocation FROM task_logs l JOIN invocations i ON i.id = l.invocation
                 ORDER BY l.invocation DESC LIMIT 1",
            )?
            .query_row([], |r| r.get(0))
            .optional()
            .map_err(HistoryError::from)
    }
}

fn with_text(r: &rusqlite::Row<'_>) -> rusqlite::Result<(KeptLog, Vec<u8>)> {
    Ok((kept_row(r)?, r.get(10)?))
}

fn text_of((about, zstd): (KeptLog, Vec<u8>)) -> Result<FailedLog, HistoryError> {
    let text = String::from_utf8_lossy(&inflate(&zstd)?).into_owned();
    Ok(FailedLog { about, text })
}
