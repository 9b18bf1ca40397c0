//! The tables of `.vx/history.db`, and how a database an earlier vx wrote
//! is brought up to them. The schema's version is SQLite's `user_version`:
//! 0 is every database written before versions were kept (with whichever
//! columns its vx had), and each migration moves it one version up inside
//! the transaction that opens it. A database of a newer vx (a higher
//! version) is used as it is: its extra columns and indexes go unread.

use rusqlite::{Connection, TransactionBehavior, params};

/// The tables as the first vx with history made them; later columns come
/// from [`add_missing_columns`], so an old database and a new one end the
/// same.
pub(super) const TABLES: &str = "
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
    exit_code INTEGER
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

/// The version [`migrate`] brings a database to.
pub(super) const LATEST: i64 = 3;

/// Each migration takes the database from its index's version to the
/// next. Adding one: append it, and a test that a database of the version
/// before reads back.
const MIGRATIONS: [fn(&Connection) -> rusqlite::Result<()>; LATEST as usize] = [to_v1, to_v2, to_v3];

/// The schema's version.
pub(super) fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Brings the database up to [`LATEST`]. Opening an up-to-date database
/// reads one pragma and writes nothing, so readers (`vx last`, the
/// dashboard) take no write lock; another process migrating at the same
/// time is waited for, and its work not done twice.
pub(super) fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    if version(conn)? >= LATEST {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let from = version(&tx)?.max(0);
    for step in MIGRATIONS.iter().skip(from as usize) {
        step(&tx)?;
    }
    if from < LATEST {
        tx.pragma_update(None, "user_version", LATEST)?;
    }
    tx.commit()
}

/// 0 → 1: every database before versions, whichever vx wrote it, gets the
/// tables, the columns added since, and the dashboard's indexes.
fn to_v1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(TABLES)?;
    add_missing_columns(conn)
}

/// 1 → 2: `task_runs_by_task` goes. Every read it served is served by
/// `task_runs_executions` (p50s, flakiness) or reads every row anyway (the
/// hit rate, the flaky tasks), and every recorded task run wrote to it: in
/// a fully cached run of 500 tasks over a long history, an index page per
/// task, about a twelfth of the run's wall time (docs/bench.md).
fn to_v2(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("DROP INDEX IF EXISTS task_runs_by_task")
}

/// 2 → 3: `task_logs`, the output of failed attempts (`log_blob`: bounded,
/// zstd). One row per failed attempt of a task in a run, keyed by the
/// run first, so `[history] keep` deletes a pruned run's logs as a range
/// of the key, as it does its task runs; `task_logs_by_task` serves "the
/// last failed log of TASK". Rows are written only for failed attempts: a
/// run that passes writes none, and its cost stays what it was.
fn to_v3(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS task_logs (
             invocation INTEGER NOT NULL,
             task TEXT NOT NULL,
             attempt INTEGER NOT NULL,
             exit_code INTEGER,
             reason TEXT NOT NULL,
             bytes INTEGER NOT NULL,
             truncated INTEGER NOT NULL,
             log BLOB NOT NULL,
             PRIMARY KEY (invocation, task, attempt)
         );
         CREATE INDEX IF NOT EXISTS task_logs_by_task ON task_logs(task, invocation, attempt);",
    )
}

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
    // `write::record_plan`).
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS task_runs_by_invocation ON task_runs(invocation);
         CREATE INDEX IF NOT EXISTS task_runs_by_task_time ON task_runs(task, invocation);
         CREATE TABLE IF NOT EXISTS plans (hash TEXT PRIMARY KEY, dependencies TEXT NOT NULL);",
    )
}
