//! Opening `.vx/history.db`: WAL mode with a busy timeout, so concurrent
//! vx processes take turns instead of failing, the schema brought up to
//! date, and the write-ahead log checkpointed off the run's path. History
//! is a convenience: when it cannot be written, vx warns and the run's
//! result stands.

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::schema;

/// Why the history database could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Db(#[from] rusqlite::Error),
}

impl From<HistoryError> for crate::Error {
    fn from(e: HistoryError) -> crate::Error {
        crate::Error::internal(format!(".vx/history.db: {e}"))
            .with_hint("the history is a convenience: remove .vx/history.db if it stays unreadable")
    }
}

/// An open history database. Every read and write of it is a method of
/// this type, in the files of this room; no SQL is written elsewhere.
#[derive(Debug)]
pub struct History {
    pub(super) conn: Connection,
}

/// A write-ahead log bigger than this is checkpointed by the run that
/// commits to it (SQLite's own default is 1,000 pages, about 4 MiB).
const CHECKPOINT_INLINE_AFTER: u64 = 64 << 20;

/// A write-ahead log bigger than this is checkpointed in the background by
/// the next run.
const CHECKPOINT_AFTER: u64 = 4 << 20;

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// Checkpoints `path`'s write-ahead log on a thread of its own when it has
/// grown past [`CHECKPOINT_AFTER`]: a `vx run` calls it once its workspace
/// is loaded, so the copy overlaps planning and the walk instead of ending
/// the last run.
/// It waits at most 100 ms for another writer, and one cut short by the
/// process's exit leaves the database whole (SQLite finishes it later).
pub(crate) fn checkpoint_in_background(path: &Path) {
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

impl History {
    /// Opens (or creates) the database at `path`, migrated to the current
    /// schema.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        // Switching to WAL needs the database to itself, and SQLite answers
        // BUSY at once (no busy handler) when another process is opening it
        // too: retry for a while.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(e) if Instant::now() < deadline && is_busy(&e) => {
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
        schema::migrate(&mut conn)?;
        Ok(History { conn })
    }

    /// Keeps SQLite from checkpointing the write-ahead log inside this
    /// connection's commits: a checkpoint of one run's rows (copying the
    /// log into the database, with an fsync) cost more than writing them,
    /// at the end of every run. [`checkpoint_in_background`] does it while
    /// the next run loads its configuration. A log past
    /// [`CHECKPOINT_INLINE_AFTER`] (runs too short for the background one
    /// to finish) is checkpointed here as before, so it cannot grow without
    /// bound.
    pub(super) fn defer_checkpoint(&self) -> rusqlite::Result<()> {
        let wal = self.conn.path().map(|p| format!("{p}-wal"));
        let size = wal.and_then(|w| std::fs::metadata(w).ok()).map_or(0, |m| m.len());
        let pages = if size > CHECKPOINT_INLINE_AFTER { 1000 } else { 0 };
        self.conn.pragma_update(None, "wal_autocheckpoint", pages)
    }
}
