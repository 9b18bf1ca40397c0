//! Run history in SQLite (`.vx/history.db`): each invocation (its command
//! line as one paste-able line, cwd, tags, times, exit code) and each task
//! run (id, key, status, cache tier, duration, exit code, attempts), plus
//! the key manifest of each task's latest run for `vx why`. From it come
//! the ETAs of `--dry`, `vx last`, `vx history` and `vx history --flaky`.
//! A run that succeeded after more than one attempt is a flaky run.
//!
//! The database is opened in WAL mode with a busy timeout, so concurrent
//! vx processes take turns instead of failing. History is a convenience:
//! when it cannot be written, vx warns and the run's result stands.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::key::KeyManifest;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS invocations (
    id INTEGER PRIMARY KEY,
    command TEXT NOT NULL,
    cwd TEXT NOT NULL,
    tags TEXT NOT NULL,
    started_ms INTEGER NOT NULL,
    ended_ms INTEGER NOT NULL,
    exit_code INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS task_runs (
    invocation INTEGER NOT NULL REFERENCES invocations(id),
    task TEXT NOT NULL,
    key TEXT,
    status TEXT NOT NULL,
    cache TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    exit_code INTEGER,
    attempts INTEGER NOT NULL DEFAULT 1,
    cpu_ms INTEGER,
    peak_rss_bytes INTEGER
);
CREATE INDEX IF NOT EXISTS task_runs_by_task ON task_runs(task, status, cache);
-- A task's executions (hits aside) newest first, without a sort: what
-- `--dry` reads for every task to say how flaky it was lately.
CREATE INDEX IF NOT EXISTS task_runs_executions ON task_runs(task) WHERE cache IN ('miss', 'uncached');
CREATE TABLE IF NOT EXISTS manifests (
    task TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    manifest TEXT NOT NULL
);
";

/// The middle value (the upper one of an even count), as every p50 of
/// history is taken; `None` for no values.
pub fn median(mut values: Vec<i64>) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(values[values.len() / 2])
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// How many recent successful runs make a task's p50, and how many recent
/// executions `--dry` counts flaky runs in.
const P50_WINDOW: usize = 20;

/// A database made before retries existed has no `attempts` column, one
/// made before resource use was measured no `cpu_ms` or `peak_rss_bytes`,
/// one made before the dashboard none of what a timeline needs (when each
/// task began, its executor and dependencies; the run's git branch, env
/// mode and walk time): add what is missing (every earlier run was one
/// attempt, of unknown use and unknown timing).
fn add_missing_columns(conn: &Connection) -> rusqlite::Result<()> {
    const ADDED: [(&str, &str, &str); 13] = [
        ("task_runs", "attempts", "INTEGER NOT NULL DEFAULT 1"),
        ("task_runs", "cpu_ms", "INTEGER"),
        ("task_runs", "peak_rss_bytes", "INTEGER"),
        ("task_runs", "start_ms", "INTEGER"),
        ("task_runs", "executor", "TEXT"),
        ("task_runs", "dependencies", "TEXT"),
        ("task_runs", "reason", "TEXT"),
        ("invocations", "args", "TEXT"),
        ("invocations", "git_commit", "TEXT"),
        ("invocations", "branch", "TEXT"),
        ("invocations", "env_mode", "TEXT"),
        ("invocations", "wall_ms", "INTEGER"),
        ("invocations", "plan", "TEXT"),
    ];
    for (table, name, decl) in ADDED {
        let has: bool =
            conn.prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?.exists(params![table, name])?;
        if !has {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {name} {decl}"))?;
        }
    }
    // The dashboard reads a run's tasks, and one task's runs newest first.
    // A run's dependencies are one document per distinct plan (see
    // `History::record`).
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS task_runs_by_invocation ON task_runs(invocation);
         CREATE INDEX IF NOT EXISTS task_runs_by_task_time ON task_runs(task, invocation);
         CREATE TABLE IF NOT EXISTS plans (hash TEXT PRIMARY KEY, dependencies TEXT NOT NULL);",
    )
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

/// Why the history database could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Db(#[from] rusqlite::Error),
}

#[derive(Debug)]
pub struct History {
    conn: Connection,
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
pub struct TaskRunRecord {
    pub task: String,
    pub key: Option<String>,
    /// `ok`, `failed`, `timed-out`, `cancelled`, `skipped`.
    pub status: &'static str,
    /// `miss`, `local`, `remote`, `uncached`.
    pub cache: &'static str,
    pub duration: Duration,
    pub exit_code: Option<i32>,
    /// Attempts made (1 unless the task was retried).
    pub attempts: u32,
    /// CPU time and peak resident memory of its process trees, when the
    /// executor measured them.
    pub cpu_ms: Option<i64>,
    pub peak_rss_bytes: Option<i64>,
    /// When it began, from the run's start; `None` when it never began.
    pub start_ms: Option<i64>,
    pub executor: Option<String>,
    pub dependencies: Vec<String>,
    /// Why it failed, timed out or was skipped.
    pub reason: Option<String>,
}

/// A write-ahead log bigger than this is checkpointed by the run that
/// commits to it (SQLite's own default is 1,000 pages, about 4 MiB).
const CHECKPOINT_INLINE_AFTER: u64 = 64 << 20;

/// A write-ahead log bigger than this is checkpointed in the background by
/// the next run.
const CHECKPOINT_AFTER: u64 = 4 << 20;

/// Checkpoints `path`'s write-ahead log on a thread of its own when it has
/// grown past [`CHECKPOINT_AFTER`]: a `vx run` calls it once its workspace
/// is loaded, so the copy overlaps planning and the walk instead of ending
/// the last run.
/// It waits at most 100 ms for another writer, and one cut short by the
/// process's exit leaves the database whole (SQLite finishes it later).
pub fn checkpoint_in_background(path: &Path) {
    let wal = path.with_file_name(format!("{}-wal", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()));
    if std::fs::metadata(&wal).map_or(true, |m| m.len() <= CHECKPOINT_AFTER) {
        return;
    }
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        if let Ok(conn) = Connection::open(&path) {
            let _ = conn.busy_timeout(Duration::from_millis(100));
            // TRUNCATE also empties the log: without it the log only grows,
            // since no connection checkpoints it on close any more.
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
    });
}

/// Stores the run's dependencies (task id to the ids it depends on) as one
/// document, once per distinct plan, and returns its hash for the
/// invocation's `plan`. A run's plan is usually the last run's: keeping a
/// copy per task run made a fully cached run of 3,270 dense tasks write
/// 4 MB of history, and the write cost more than the rest of the run's
/// bookkeeping. Runs recorded before kept the list in each task run's
/// `dependencies`, which readers still take first.
fn record_plan(tx: &rusqlite::Transaction<'_>, runs: &[TaskRunRecord]) -> rusqlite::Result<Option<String>> {
    let plan: std::collections::BTreeMap<&str, &[String]> =
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

/// The dependencies of invocation `id`'s tasks, as [`record_plan`] stored
/// them; empty for runs recorded without a plan.
pub fn recorded_plan(conn: &Connection, id: i64) -> rusqlite::Result<std::collections::HashMap<String, Vec<String>>> {
    let doc: Option<String> = conn
        .prepare_cached("SELECT p.dependencies FROM invocations i JOIN plans p ON p.hash = i.plan WHERE i.id = ?1")?
        .query_row(params![id], |r| r.get(0))
        .optional()?;
    Ok(doc.and_then(|d| serde_json::from_str(&d).ok()).unwrap_or_default())
}

impl Invocation {
    /// How long the invocation took, by its stored times. Rows are read as
    /// stored, so the difference saturates instead of overflowing.
    pub fn duration_ms(&self) -> i64 {
        self.ended_ms.saturating_sub(self.started_ms)
    }
}

impl History {
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        // Switching to WAL needs the database to itself, and SQLite answers
        // BUSY at once (no busy handler) when another process is opening it
        // too: retry for a while.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(e) if std::time::Instant::now() < deadline && is_busy(&e) => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(e.into()),
            }
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Closing the last connection would checkpoint the log (and remove
        // it): as costly at the end of a run as one inside its commit, so
        // left to `checkpoint_in_background` as well.
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(SCHEMA)?;
        add_missing_columns(&tx)?;
        tx.commit()?;
        Ok(History { conn })
    }

    /// Records an invocation and its task runs in one transaction.
    pub fn record(
        &mut self,
        invocation: &Invocation,
        runs: &[TaskRunRecord],
        manifests: &[(String, String, KeyManifest)],
    ) -> Result<i64, HistoryError> {
        self.defer_checkpoint()?;
        // IMMEDIATE takes the write lock up front, through the busy handler;
        // a deferred transaction upgrading later gets BUSY at once when
        // another vx is writing.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let plan = record_plan(&tx, runs)?;
        let tags = serde_json::to_string(&invocation.tags).expect("tags serialize");
        let d = &invocation.detail;
        let args = serde_json::to_string(&d.args).expect("args serialize");
        tx.execute(
            "INSERT INTO invocations (command, cwd, tags, started_ms, ended_ms, exit_code, args, git_commit, branch, env_mode, wall_ms, plan)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
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
            ],
        )?;
        let id = tx.last_insert_rowid();
        {
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
                    r.cache,
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
            // A fully cached run keys every task as before: write only the
            // manifests whose key moved.
            // One scan of the stored keys, not a look-up per task.
            let stored: std::collections::HashMap<String, String> = tx
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
        }
        tx.commit()?;
        Ok(id)
    }

    /// Keeps SQLite from checkpointing the write-ahead log inside this
    /// connection's commits: a checkpoint of one run's rows (copying the
    /// log into the database, with an fsync) cost more than writing them,
    /// at the end of every run. [`checkpoint_in_background`] does it while
    /// the next run loads its configuration. A log past
    /// [`CHECKPOINT_INLINE_AFTER`] (runs too short for the background one
    /// to finish) is checkpointed here as before, so it cannot grow without
    /// bound.
    fn defer_checkpoint(&self) -> rusqlite::Result<()> {
        let wal = self.conn.path().map(|p| format!("{p}-wal"));
        let size = wal.and_then(|w| std::fs::metadata(w).ok()).map_or(0, |m| m.len());
        let pages = if size > CHECKPOINT_INLINE_AFTER { 1000 } else { 0 };
        self.conn.pragma_update(None, "wal_autocheckpoint", pages)
    }

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
        median(durations).map(|ms| Duration::from_millis(ms.max(0) as u64))
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

    /// The most recent invocations, newest first.
    pub fn recent(&self, limit: usize) -> Result<Vec<Invocation>, HistoryError> {
        self.invocations("1", &[], limit)
    }

    /// Invocations matching `filter` (an SQL condition on `i`, the
    /// invocation, with `?2`… bound to `values`), newest first.
    pub fn invocations(
        &self,
        filter: &str,
        values: &[&dyn rusqlite::ToSql],
        limit: usize,
    ) -> Result<Vec<Invocation>, HistoryError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT i.id, i.command, i.cwd, i.tags, i.started_ms, i.ended_ms, i.exit_code,
                        (SELECT COUNT(*) FROM task_runs t WHERE t.invocation = i.id AND t.status != 'skipped'),
                        (SELECT COUNT(*) FROM task_runs t WHERE t.invocation = i.id AND t.cache IN ('local', 'remote')),
                        (SELECT COALESCE(SUM(cpu_ms), 0) FROM task_runs t WHERE t.invocation = i.id),
                        (SELECT MAX(peak_rss_bytes) FROM task_runs t WHERE t.invocation = i.id),
                        i.args, i.git_commit, i.branch, i.env_mode, i.wall_ms
                 FROM invocations i WHERE {filter} ORDER BY i.id DESC LIMIT ?1"
        ))?;
        let limit = limit as i64;
        let mut bound: Vec<&dyn rusqlite::ToSql> = vec![&limit];
        bound.extend_from_slice(values);
        let rows = stmt.query_map(bound.as_slice(), |row| {
            let tags: String = row.get(3)?;
            let args: Option<String> = row.get(11)?;
            Ok(Invocation {
                id: row.get(0)?,
                command: row.get(1)?,
                cwd: row.get(2)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                started_ms: row.get(4)?,
                ended_ms: row.get(5)?,
                exit_code: row.get(6)?,
                tasks: row.get(7)?,
                cached: row.get(8)?,
                cpu_ms: row.get(9)?,
                peak_rss_bytes: row.get(10)?,
                detail: InvocationDetail {
                    args: args.and_then(|a| serde_json::from_str(&a).ok()).unwrap_or_default(),
                    git_commit: row.get(12)?,
                    branch: row.get(13)?,
                    env_mode: row.get(14)?,
                    wall_ms: row.get(15)?,
                },
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(HistoryError::from)
    }

    /// The database, for the dashboard's reads (`crate::dashboard`).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The key and manifest of a task's latest recorded run.
    pub fn last_manifest(&self, task: &str) -> Result<Option<(String, KeyManifest)>, HistoryError> {
        let row: Option<(String, String)> = self
            .conn
            .query_row("SELECT key, manifest FROM manifests WHERE task = ?1", params![task], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        Ok(row.and_then(|(key, json)| serde_json::from_str(&json).ok().map(|m| (key, m))))
    }

    /// How many invocations history holds.
    pub fn invocation_count(&self) -> Result<i64, HistoryError> {
        self.conn.query_row("SELECT COUNT(*) FROM invocations", [], |r| r.get(0)).map_err(HistoryError::from)
    }

    /// Hits among task runs that looked the cache up, over all history.
    pub fn hit_rate(&self) -> Result<(i64, i64), HistoryError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FILTER (WHERE cache IN ('local', 'remote')), COUNT(*) FILTER (WHERE cache != 'uncached')
                 FROM task_runs WHERE status != 'skipped'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(HistoryError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("vx-history-{}", std::process::id()));
        let mut h = History::open(&dir.join("history.db")).unwrap();
        let inv = Invocation {
            id: 0,
            command: "vx run build".into(),
            cwd: "/w".into(),
            tags: vec![("ci".into(), "1".into())],
            started_ms: 1,
            ended_ms: 2,
            exit_code: 0,
            tasks: 0,
            cached: 0,
            cpu_ms: 0,
            peak_rss_bytes: None,
            detail: InvocationDetail::default(),
        };
        for ms in [10, 30, 20] {
            let run = TaskRunRecord {
                task: "a#build".into(),
                key: Some("k".into()),
                status: "ok",
                cache: "miss",
                duration: Duration::from_millis(ms),
                exit_code: Some(0),
                attempts: 1,
                cpu_ms: Some(7),
                peak_rss_bytes: Some(1 << 20),
                start_ms: Some(0),
                executor: Some("local".into()),
                dependencies: vec![],
                reason: None,
            };
            let hit = TaskRunRecord {
                cache: "local",
                duration: Duration::from_millis(1),
                cpu_ms: None,
                peak_rss_bytes: None,
                ..run.clone()
            };
            h.record(&inv, &[run, hit], &[]).unwrap();
        }
        assert_eq!(h.p50("a#build"), Some(Duration::from_millis(20)), "hits are not durations of the work");
        assert_eq!(h.p50("b#build"), None);
        let recent = h.recent(2).unwrap();
        assert_eq!(recent.len(), 2);
        assert_eq!(recent[0].tags, vec![("ci".to_string(), "1".to_string())]);
        assert_eq!((recent[0].tasks, recent[0].cached), (2, 1));
        assert_eq!((recent[0].cpu_ms, recent[0].peak_rss_bytes), (7, Some(1 << 20)), "a hit used nothing");
        assert_eq!(h.hit_rate().unwrap(), (3, 6));
        assert_eq!(h.flakiness("a#build"), Flakiness { executions: 3, flaky: 0 });
        assert!(h.flaky_tasks(10).unwrap().is_empty());
        let flaky = TaskRunRecord {
            task: "a#test".into(),
            key: None,
            status: "ok",
            cache: "uncached",
            duration: Duration::from_millis(5),
            exit_code: Some(0),
            attempts: 2,
            cpu_ms: None,
            peak_rss_bytes: None,
            start_ms: None,
            executor: None,
            dependencies: vec![],
            reason: None,
        };
        let failed = TaskRunRecord { status: "failed", attempts: 3, exit_code: Some(1), ..flaky.clone() };
        let id = h.record(&inv, std::slice::from_ref(&flaky), &[]).unwrap();
        h.record(&inv, &[failed], &[]).unwrap();
        assert_eq!(
            h.flakiness("a#test"),
            Flakiness { executions: 2, flaky: 1 },
            "a run that failed every attempt is not flaky"
        );
        let listed = h.flaky_tasks(10).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].task.as_str(), listed[0].flaky, listed[0].executions), ("a#test", 1, 2));
        assert_eq!(listed[0].last_invocation, id);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_database_from_before_retries_and_resource_use_gains_their_columns() {
        let dir = std::env::temp_dir().join(format!("vx-history-old-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.db");
        let old = SCHEMA.replace(
            ",\n    attempts INTEGER NOT NULL DEFAULT 1,\n    cpu_ms INTEGER,\n    peak_rss_bytes INTEGER",
            "",
        );
        Connection::open(&path).unwrap().execute_batch(&old).unwrap();
        Connection::open(&path)
            .unwrap()
            .execute(
                "INSERT INTO invocations (command, cwd, tags, started_ms, ended_ms, exit_code) VALUES ('vx run a', '/w', '[]', 1, 5, 0)",
                [],
            )
            .unwrap();
        assert_ne!(old, SCHEMA);
        let mut h = History::open(&path).unwrap();
        let before = h.recent(1).unwrap().remove(0);
        assert_eq!((before.command.as_str(), &before.detail), ("vx run a", &InvocationDetail::default()));
        let inv = Invocation {
            id: 0,
            command: "vx run test".into(),
            cwd: "/w".into(),
            tags: vec![],
            started_ms: 1,
            ended_ms: 2,
            exit_code: 0,
            tasks: 0,
            cached: 0,
            cpu_ms: 0,
            peak_rss_bytes: None,
            detail: InvocationDetail::default(),
        };
        let run = TaskRunRecord {
            task: "a#test".into(),
            key: None,
            status: "ok",
            cache: "uncached",
            duration: Duration::from_millis(5),
            exit_code: Some(0),
            attempts: 2,
            cpu_ms: None,
            peak_rss_bytes: None,
            start_ms: None,
            executor: None,
            dependencies: vec![],
            reason: None,
        };
        h.record(&inv, &[run], &[]).unwrap();
        assert_eq!(h.flakiness("a#test"), Flakiness { executions: 1, flaky: 1 });
        drop(h);
        History::open(&path).expect("opening it again adds nothing twice");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
