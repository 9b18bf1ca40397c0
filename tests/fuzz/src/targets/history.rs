//! History rows as another process (another vx version, a damaged file, a
//! hand edit) may have left them in `.vx/history.db`: any value of any
//! SQLite type in any column. Read back through every query vx makes of
//! them, and the stored manifests through `vx why`'s diff.

use std::cell::RefCell;
use std::path::PathBuf;

use arbitrary::{Arbitrary, Unstructured};
use rusqlite::types::Value;
use vx::fuzzing::{History, diff_manifests};

/// One SQLite value.
#[derive(Debug, Arbitrary)]
enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Cell {
    fn value(&self) -> Value {
        match self {
            Cell::Null => Value::Null,
            Cell::Int(i) => Value::Integer(*i),
            Cell::Real(r) => Value::Real(*r),
            Cell::Text(t) => Value::Text(t.clone()),
            Cell::Blob(b) => Value::Blob(b.clone()),
        }
    }
}

#[derive(Debug, Arbitrary)]
struct Rows {
    invocations: Vec<[Cell; 7]>,
    task_runs: Vec<[Cell; 8]>,
    manifests: Vec<[Cell; 3]>,
    asked: String,
}

thread_local! {
    static DB: RefCell<Option<(tempfile::TempDir, PathBuf)>> = const { RefCell::new(None) };
}

fn db_path() -> PathBuf {
    DB.with(|db| {
        let mut db = db.borrow_mut();
        let (_, path) = db.get_or_insert_with(|| {
            let dir = tempfile::tempdir().expect("a scratch directory");
            let path = dir.path().join("history.db");
            History::open(&path).expect("a fresh history opens");
            (dir, path)
        });
        path.clone()
    })
}

const INSERTS: [&str; 3] = [
    "INSERT INTO invocations (id, command, cwd, tags, started_ms, ended_ms, exit_code) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    "INSERT INTO task_runs (invocation, task, key, status, cache, duration_ms, exit_code, attempts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    "INSERT INTO manifests (task, key, manifest) VALUES (?1, ?2, ?3)",
];

pub fn history(data: &[u8]) {
    let Ok(rows) = Rows::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let path = db_path();
    {
        let conn = rusqlite::Connection::open(&path).expect("the scratch database opens");
        conn.execute_batch("DELETE FROM task_runs; DELETE FROM invocations; DELETE FROM manifests;")
            .expect("the scratch database empties");
        let insert = |sql: &str, cells: &[Cell]| {
            // A row the schema refuses (NOT NULL, a duplicate id) is simply not there.
            let _ = conn.execute(sql, rusqlite::params_from_iter(cells.iter().map(Cell::value)));
        };
        rows.invocations.iter().for_each(|r| insert(INSERTS[0], r));
        rows.task_runs.iter().for_each(|r| insert(INSERTS[1], r));
        rows.manifests.iter().for_each(|r| insert(INSERTS[2], r));
    }
    let history = History::open(&path).expect("a history with any rows opens");
    let _ = history.hit_rate();
    let _ = history.flaky_tasks(20);
    if let Ok(recent) = history.recent(20) {
        for i in &recent {
            let _ = i.duration_ms();
        }
    }
    let mut asked: Vec<String> = vec![rows.asked.clone()];
    for r in &rows.task_runs {
        if let Cell::Text(t) = &r[1] {
            asked.push(t.clone());
        }
    }
    for r in &rows.manifests {
        if let Cell::Text(t) = &r[0] {
            asked.push(t.clone());
        }
    }
    for task in &asked {
        let _ = history.p50(task);
        let _ = history.flakiness(task);
        if let Ok(Some((_, manifest))) = history.last_manifest(task) {
            let _ = diff_manifests(&manifest, &manifest);
            let mut other = manifest.clone();
            other.files = Default::default();
            other.deps.reverse();
            let _ = diff_manifests(&manifest, &other);
        }
    }
}
