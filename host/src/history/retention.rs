//! `[history] keep`: invocations past the workspace's bound (an age or a
//! number of runs) are deleted as runs are recorded, inside the recording
//! transaction, with their task runs and the logs of their failed
//! attempts, so history, and a run's cost of writing to it, stop growing.
//!
//! Finding what to delete reads the invocations newest first by their
//! primary key and stops at the bound, and the deletes are ranges of
//! `task_runs_by_invocation` and of the primary key: the cost follows what
//! is kept and deleted, never the whole history. Ids grow with time, so
//! "older than" is "recorded before": everything up to the newest
//! invocation past the bound goes. A database whose bound is far behind
//! (a first run after upgrading) is cut down in one go.

use rusqlite::{OptionalExtension, Transaction, params};

use crate::config::HistoryKeep;

/// How far past its bound history may go before it is pruned: a
/// sixteenth of the bound. Deleting a batch of old runs at once touches
/// each task's index pages once for the batch, where pruning one run per
/// recording would touch them for every run (the rows of one task's old
/// runs sit side by side in `task_runs_by_task_time`).
const SLACK_DIVISOR: u32 = 16;

/// The newest invocation past `keep`, when history has gone past it by
/// its slack: everything up to it goes.
fn last_dropped(tx: &Transaction<'_>, keep: HistoryKeep, now_ms: i64) -> rusqlite::Result<Option<i64>> {
    match keep {
        HistoryKeep::Runs(runs) => {
            let runs = i64::from(runs);
            let mut nth = tx.prepare_cached("SELECT id FROM invocations ORDER BY id DESC LIMIT 1 OFFSET ?1")?;
            if nth
                .query_row(params![runs + runs / i64::from(SLACK_DIVISOR)], |r| r.get::<_, i64>(0))
                .optional()?
                .is_none()
            {
                return Ok(None);
            }
            nth.query_row(params![runs], |r| r.get(0)).optional()
        }
        HistoryKeep::Age(age) => {
            let age_ms = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
            let cutoff = now_ms.saturating_sub(age_ms);
            // The oldest run says whether anything is due, without reading
            // the kept ones.
            let oldest: Option<i64> = tx
                .prepare_cached("SELECT started_ms FROM invocations ORDER BY id LIMIT 1")?
                .query_row([], |r| r.get(0))
                .optional()?;
            if oldest.is_none_or(|o| o >= cutoff.saturating_sub(age_ms / i64::from(SLACK_DIVISOR))) {
                return Ok(None);
            }
            tx.prepare_cached("SELECT id FROM invocations WHERE started_ms < ?1 ORDER BY id DESC LIMIT 1")?
                .query_row(params![cutoff], |r| r.get(0))
                .optional()
        }
    }
}

/// Deletes the invocations `keep` no longer keeps, their task runs and
/// kept logs, and the plans no kept invocation names; returns how many
/// invocations went.
pub(super) fn prune(tx: &Transaction<'_>, keep: HistoryKeep, now_ms: i64) -> rusqlite::Result<usize> {
    let Some(last) = last_dropped(tx, keep, now_ms)? else { return Ok(0) };
    tx.prepare_cached("DELETE FROM task_runs WHERE invocation <= ?1")?.execute(params![last])?;
    tx.prepare_cached("DELETE FROM task_logs WHERE invocation <= ?1")?.execute(params![last])?;
    let dropped = tx.prepare_cached("DELETE FROM invocations WHERE id <= ?1")?.execute(params![last])?;
    tx.prepare_cached("DELETE FROM plans WHERE hash NOT IN (SELECT plan FROM invocations WHERE plan IS NOT NULL)")?
        .execute([])?;
    Ok(dropped)
}
