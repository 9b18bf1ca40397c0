//! Recording an invocation: its row, its task runs, its plan (once per
//! distinct plan), the logs of its failed attempts and the manifests whose
//! key moved, in one transaction with the pruning `[history] keep` asks
//! for.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{TransactionBehavior, params};

use super::logs::insert_logs;
use super::retention;
use super::rows::{Invocation, TaskRunRecord};
use super::spill::Spill;
use super::store::{History, HistoryError};
use crate::cache::KeyManifest;
use crate::config::HistoryKeep;

/// Stores the run's dependencies (task id to the ids it depends on) as one
/// document, once per distinct plan, and returns its hash for the
/// invocation's `plan`. A run's plan is usually the last run's: keeping a
/// copy per task run made a fully cached run of 3,270 dense tasks write
/// 4 MB of history, and the write cost more than the rest of the run's
/// bookkeeping. Runs recorded before kept the list in each task run's
/// `dependencies`, which readers still take first.
fn record_plan(tx: &rusqlite::Transaction<'_>, runs: &[TaskRunRecord]) -> rusqlite::Result<Option<String>> {
    let plan: BTreeMap<&str, &[String]> =
        runs.iter().filter(|r| !r.dependencies.is_empty()).map(|r| (r.task.as_str(), &r.dependencies[..])).collect();
    if plan.is_empty() {
        return Ok(None);
    }
    let doc = serde_json::to_string(&plan).expect("ids serialize");
    let hash = blake3::hash(doc.as_bytes()).to_hex()[..32].to_string();
    tx.prepare_cached("INSERT OR IGNORE INTO plans (hash, dependencies) VALUES (?1, ?2)")?
        .execute(params![hash, doc])?;
    Ok(Some(hash))
}

fn insert_invocation(
    tx: &rusqlite::Transaction<'_>,
    invocation: &Invocation,
    plan: Option<String>,
) -> rusqlite::Result<i64> {
    let tags = serde_json::to_string(&invocation.tags).expect("tags serialize");
    let d = &invocation.detail;
    let args = serde_json::to_string(&d.args).expect("args serialize");
    tx.prepare_cached(
        "INSERT INTO invocations (command, cwd, tags, started_ms, ended_ms, exit_code, args, git_commit, branch, env_mode, wall_ms, plan)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        invocation.command,
        invocation.cwd,
        tags,
        invocation.started_ms,
        invocation.ended_ms,
        invocation.exit_code,
        args,
        d.git_commit,
        d.branch,
        d.env_mode,
        d.wall_ms,
        plan
    ])?;
    Ok(tx.last_insert_rowid())
}

fn insert_task_runs(tx: &rusqlite::Transaction<'_>, id: i64, runs: &[TaskRunRecord]) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO task_runs (invocation, task, key, status, cache, duration_ms, exit_code, attempts, cpu_ms,
                                peak_rss_bytes, start_ms, executor, reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    for r in runs {
        insert.execute(params![
            id,
            r.task,
            r.key,
            r.status,
            r.cache.word(),
            r.duration.as_millis() as i64,
            r.exit_code,
            r.attempts,
            r.cpu_ms,
            r.peak_rss_bytes,
            r.start_ms,
            r.executor,
            r.reason
        ])?;
    }
    Ok(())
}

/// Writes only the manifests whose key moved: a fully cached run keys
/// every task as before. One scan of the stored keys, not a look-up per
/// task.
fn update_manifests(
    tx: &rusqlite::Transaction<'_>,
    manifests: &[(String, String, KeyManifest)],
) -> rusqlite::Result<()> {
    let stored: HashMap<String, String> = tx
        .prepare_cached("SELECT task, key FROM manifests")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut manifest =
        tx.prepare_cached("INSERT OR REPLACE INTO manifests (task, key, manifest) VALUES (?1, ?2, ?3)")?;
    for (task, key, m) in manifests {
        if stored.get(task) == Some(key) {
            continue;
        }
        let json = serde_json::to_string(m).expect("manifest serializes");
        manifest.execute(params![task, key, json])?;
    }
    Ok(())
}

impl History {
    /// Records an invocation and its task runs in one transaction, and
    /// prunes what `keep` no longer keeps (the invocation just recorded
    /// always stays). Returns the invocation's id.
    #[cfg(test)]
    pub(crate) fn record(
        &mut self,
        invocation: &Invocation,
        runs: &[TaskRunRecord],
        manifests: &[(String, String, KeyManifest)],
        keep: HistoryKeep,
    ) -> Result<i64, HistoryError> {
        let mut none = Spill::new(std::path::Path::new(""));
        self.record_with_logs(invocation, runs, manifests, &mut none, keep)
    }

    /// Records an invocation, its task runs and the logs of its failed
    /// attempts (`logs`) in one transaction, and prunes what `keep` no
    /// longer keeps (the invocation just recorded always stays). Returns
    /// the invocation's id.
    pub(crate) fn record_with_logs(
        &mut self,
        invocation: &Invocation,
        runs: &[TaskRunRecord],
        manifests: &[(String, String, KeyManifest)],
        logs: &mut Spill,
        keep: HistoryKeep,
    ) -> Result<i64, HistoryError> {
        self.defer_checkpoint()?;
        // IMMEDIATE takes the write lock up front, through the busy handler;
        // a deferred transaction upgrading later gets BUSY at once when
        // another vx is writing.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let plan = record_plan(&tx, runs)?;
        let id = insert_invocation(&tx, invocation, plan)?;
        insert_task_runs(&tx, id, runs)?;
        insert_logs(&tx, id, logs)?;
        update_manifests(&tx, manifests)?;
        retention::prune(&tx, keep, invocation.ended_ms)?;
        tx.commit()?;
        Ok(id)
    }
}
