//! The room's behaviour against real SQLite files: what is recorded reads
//! back through every query, a database an earlier vx wrote opens and is
//! migrated once, `[history] keep` prunes by count and by age, and the
//! logs of failed attempts read back and are pruned with their runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use super::log_blob::LogBlob;
use super::rows::{InvocationDetail, TaskRunRecord};
use super::schema::{LATEST, TABLES, version};
use super::spill::{FailedAttempt, Spill};
use super::stats::{MissedTask, SavedDay, SlowTask};
use super::*;
use crate::config::HistoryKeep;
use crate::events::{CacheOutcome, TaskStatus};

const KEEP_ALL: HistoryKeep = HistoryKeep::Runs(u32::MAX);

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let path = dir.path().join("history.db");
    (dir, path)
}

fn invocation(started_ms: i64) -> Invocation {
    Invocation {
        id: 0,
        command: "vx run build".into(),
        cwd: "/w".into(),
        tags: vec![("ci".into(), "1".into())],
        started_ms,
        ended_ms: started_ms + 1,
        exit_code: 0,
        tasks: 0,
        cached: 0,
        cpu_ms: 0,
        peak_rss_bytes: None,
        detail: InvocationDetail::default(),
    }
}

fn run(task: &str, cache: CacheOutcome, ms: u64) -> TaskRunRecord {
    TaskRunRecord {
        task: task.into(),
        key: Some("k".into()),
        status: "ok",
        cache,
        duration: Duration::from_millis(ms),
        exit_code: Some(0),
        attempts: 1,
        cpu_ms: None,
        peak_rss_bytes: None,
        start_ms: Some(0),
        executor: Some("local".into()),
        dependencies: vec![],
        reason: None,
    }
}

fn ids(h: &History) -> Vec<i64> {
    h.recent(100).unwrap().iter().map(|i| i.id).collect()
}

fn task_rows(path: &Path) -> i64 {
    Connection::open(path).unwrap().query_row("SELECT COUNT(*) FROM task_runs", [], |r| r.get(0)).unwrap()
}

#[test]
fn records_and_reads_back() {
    let (_dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    for ms in [10, 30, 20] {
        let ran =
            TaskRunRecord { cpu_ms: Some(7), peak_rss_bytes: Some(1 << 20), ..run("a#build", CacheOutcome::Miss, ms) };
        let hit = run("a#build", CacheOutcome::Local, 1);
        h.record(&invocation(1), &[ran, hit], &[], KEEP_ALL).unwrap();
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
    let flaky = TaskRunRecord { key: None, attempts: 2, ..run("a#test", CacheOutcome::Uncached, 5) };
    let failed = TaskRunRecord { status: "failed", attempts: 3, exit_code: Some(1), ..flaky.clone() };
    let id = h.record(&invocation(1), std::slice::from_ref(&flaky), &[], KEEP_ALL).unwrap();
    h.record(&invocation(1), &[failed], &[], KEEP_ALL).unwrap();
    assert_eq!(
        h.flakiness("a#test"),
        Flakiness { executions: 2, flaky: 1 },
        "a run that failed every attempt is not flaky"
    );
    let listed = h.flaky_tasks(10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].task.as_str(), listed[0].flaky, listed[0].executions), ("a#test", 1, 2));
    assert_eq!(listed[0].last_invocation, id);
}

#[test]
fn a_task_over_time_and_a_recorded_run_read_back_typed() {
    let (_dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    let deps = TaskRunRecord { dependencies: vec!["a#build".into()], ..run("b#build", CacheOutcome::Miss, 40) };
    let first = h.record(&invocation(1), &[run("a#build", CacheOutcome::Miss, 10), deps], &[], KEEP_ALL).unwrap();
    let flaky = TaskRunRecord { attempts: 2, ..run("a#build", CacheOutcome::Miss, 30) };
    h.record(&invocation(2), &[flaky], &[], KEEP_ALL).unwrap();
    h.record(&invocation(3), &[run("a#build", CacheOutcome::Remote, 1)], &[], KEEP_ALL).unwrap();
    let skipped = TaskRunRecord {
        status: "skipped",
        reason: Some("a dependency failed".into()),
        ..run("a#build", CacheOutcome::Uncached, 0)
    };
    h.record(&invocation(4), &[skipped], &[], KEEP_ALL).unwrap();

    let timeline = h.task_timeline("a#build").unwrap().expect("a#build ran");
    let caches: Vec<CacheOutcome> = timeline.points.iter().map(|p| p.cache).collect();
    assert_eq!(
        caches,
        [CacheOutcome::Miss, CacheOutcome::Miss, CacheOutcome::Remote, CacheOutcome::Uncached],
        "oldest first"
    );
    assert_eq!(timeline.points[3].status, TaskStatus::Skipped(String::new()));
    assert_eq!(timeline.hit_rate, Some(1.0 / 3.0), "three lookups, one hit; the skipped run looked nothing up");
    assert_eq!((timeline.p50_ms, timeline.flaky), (Some(30), 1));
    assert_eq!(h.task_timeline("nobody#build").unwrap(), None);

    let tasks = h.recorded_tasks(first).unwrap();
    let names: Vec<&str> = tasks.iter().map(|t| t.task.as_str()).collect();
    assert_eq!(names, ["a#build", "b#build"], "in the order recorded");
    assert_eq!(tasks[1].dependencies, ["a#build"], "from the run's plan");
    assert_eq!((tasks[1].cache, tasks[1].duration), (CacheOutcome::Miss, Duration::from_millis(40)));

    let stats = h.stats().unwrap();
    assert_eq!(stats.slowest[0], SlowTask { task: "b#build".into(), p50_ms: 40 });
    assert_eq!(stats.most_missed[0], MissedTask { task: "a#build".into(), misses: 2, lookups: 3 });
    assert_eq!(stats.saved_by_day, [SavedDay { day_unix_ms: 0, saved_ms: 30, hits: 1 }], "a hit saves its task's p50");
}

#[test]
fn filters_pick_runs_by_command_tag_branch_outcome_and_page() {
    let (_dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    for (n, branch) in [(0, "main"), (1, "topic"), (2, "main")] {
        let inv = Invocation {
            command: format!("vx run t{n}"),
            exit_code: n,
            detail: InvocationDetail { branch: Some(branch.into()), ..InvocationDetail::default() },
            ..invocation(n.into())
        };
        h.record(&inv, &[], &[], KEEP_ALL).unwrap();
    }
    let pick = |filter: RunFilter| -> Vec<String> {
        h.runs(&RunFilter { limit: 10, ..filter }).unwrap().into_iter().map(|i| i.command).collect()
    };
    assert_eq!(pick(RunFilter::default()), ["vx run t2", "vx run t1", "vx run t0"]);
    assert_eq!(pick(RunFilter { command: Some("t1".into()), ..RunFilter::default() }), ["vx run t1"]);
    assert_eq!(pick(RunFilter { branch: Some("main".into()), ..RunFilter::default() }), ["vx run t2", "vx run t0"]);
    assert_eq!(pick(RunFilter { ok: Some(true), ..RunFilter::default() }), ["vx run t0"]);
    assert_eq!(
        pick(RunFilter { tag: Some(("ci".into(), "1".into())), before: Some(3), ..RunFilter::default() }),
        ["vx run t1", "vx run t0"]
    );
    assert_eq!(pick(RunFilter { tag: Some(("ci".into(), "0".into())), ..RunFilter::default() }), Vec::<String>::new());
    assert_eq!(h.invocation(2).unwrap().map(|i| i.command), Some("vx run t1".into()));
    assert_eq!(h.invocation(9).unwrap(), None);
}

#[test]
fn a_database_an_earlier_vx_wrote_is_migrated_once_and_keeps_its_rows() {
    let (_dir, path) = scratch();
    // The first schema: no attempts, resource use, timings, plans or
    // dashboard indexes, and no version.
    Connection::open(&path).unwrap().execute_batch(TABLES).unwrap();
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "INSERT INTO invocations (command, cwd, tags, started_ms, ended_ms, exit_code) VALUES ('vx run a', '/w', '[]', 1, 5, 0);
             INSERT INTO task_runs (invocation, task, key, status, cache, duration_ms, exit_code) VALUES (1, 'a#test', 'k', 'ok', 'miss', 12, 0);",
        )
        .unwrap();
    let mut h = History::open(&path).unwrap();
    assert_eq!(version(&h.conn).unwrap(), LATEST);
    let before = h.recent(1).unwrap().remove(0);
    assert_eq!((before.command.as_str(), &before.detail), ("vx run a", &InvocationDetail::default()));
    assert_eq!(h.p50("a#test"), Some(Duration::from_millis(12)), "an old row reads as one attempt");
    assert_eq!(h.flakiness("a#test"), Flakiness { executions: 1, flaky: 0 });
    let retried = TaskRunRecord { attempts: 2, ..run("a#test", CacheOutcome::Uncached, 5) };
    h.record(&invocation(2), &[retried], &[], KEEP_ALL).unwrap();
    assert_eq!(h.flakiness("a#test"), Flakiness { executions: 2, flaky: 1 });
    assert_eq!(h.recorded_tasks(1).unwrap()[0].executor, None, "old rows have no executor");
    drop(h);
    let again = History::open(&path).expect("opening it again migrates nothing twice");
    assert_eq!(again.recent(10).unwrap().len(), 2);
}

#[test]
fn keeping_a_count_prunes_the_oldest_runs_their_task_rows_and_plans() {
    let (_dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    for n in 0..5 {
        let deps =
            TaskRunRecord { dependencies: vec![format!("dep{n}#build")], ..run("a#build", CacheOutcome::Local, 1) };
        h.record(&invocation(n), &[deps], &[], HistoryKeep::Runs(3)).unwrap();
    }
    assert_eq!(ids(&h), [5, 4, 3], "the last three runs");
    assert_eq!(task_rows(&path), 3, "their task runs only");
    let plans: i64 = h.conn.query_row("SELECT COUNT(*) FROM plans", [], |r| r.get(0)).unwrap();
    assert_eq!(plans, 3, "the plans no kept run names are gone");
    assert_eq!(h.recorded_tasks(3).unwrap()[0].dependencies, ["dep2#build"]);
}

#[test]
fn a_large_count_is_pruned_in_batches_past_a_sixteenth_of_it() {
    let (_dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    for n in 0..34 {
        h.record(&invocation(n), &[run("a#build", CacheOutcome::Local, 1)], &[], HistoryKeep::Runs(32)).unwrap();
    }
    assert_eq!(ids(&h).len(), 34, "32 kept, and up to two more (a sixteenth) before a prune");
    h.record(&invocation(34), &[], &[], HistoryKeep::Runs(32)).unwrap();
    assert_eq!(ids(&h).len(), 32, "the 35th run prunes the three oldest at once");
    assert_eq!(ids(&h).last(), Some(&4));
}

#[test]
fn keeping_an_age_prunes_the_runs_started_before_it() {
    let (_dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    const DAY: i64 = 86_400_000;
    let keep = HistoryKeep::Age(Duration::from_millis(10 * DAY as u64));
    for day in [0, 6, 15] {
        h.record(&invocation(day * DAY), &[run("a#build", CacheOutcome::Local, 1)], &[], keep).unwrap();
    }
    assert_eq!(ids(&h), [3, 2], "the run of day 0 is 15 days old");
    h.record(&invocation(16 * DAY + DAY / 2), &[], &[], keep).unwrap();
    assert_eq!(ids(&h), [4, 3, 2], "day 6 is 10.5 days old, within the slack of a sixteenth of 10 days");
    h.record(&invocation(17 * DAY), &[], &[], keep).unwrap();
    assert_eq!(ids(&h), [5, 4, 3], "past the slack: everything older than 10 days goes, nothing younger");
    assert_eq!(task_rows(&path), 1);
}

#[test]
fn the_reads_of_every_task_use_an_index_without_task_runs_by_task() {
    let (_dir, path) = scratch();
    let h = History::open(&path).unwrap();
    let plan = |sql: &str| -> String {
        let mut stmt = h.conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map(["a#build"], |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
    };
    let gone: Option<String> =
        h.conn.query_row("SELECT name FROM sqlite_master WHERE name = 'task_runs_by_task'", [], |r| r.get(0)).ok();
    assert_eq!(gone, None);
    for sql in [
        "SELECT duration_ms FROM task_runs WHERE task = ?1 AND status = 'ok' AND cache IN ('miss', 'uncached') ORDER BY rowid DESC LIMIT 20",
        "SELECT status = 'ok' AND attempts > 1 FROM task_runs WHERE task = ?1 AND cache IN ('miss', 'uncached') AND status IN ('ok', 'failed', 'timed-out') ORDER BY rowid DESC LIMIT 20",
    ] {
        let plan = plan(sql);
        assert!(plan.contains("USING INDEX task_runs_executions") && !plan.contains("TEMP B-TREE"), "{plan}");
    }
}

/// A spill holding the failed attempts `(task, attempt, output)`.
fn failing(dir: &Path, attempts: &[(&str, u32, &[u8])]) -> Spill {
    let mut spill = Spill::new(dir);
    for &(task, attempt, log) in attempts {
        let failed = FailedAttempt {
            task: task.into(),
            attempt,
            exit_code: Some(attempt as i32),
            reason: format!("exit code {attempt}"),
            bytes: 0,
            truncated: false,
        };
        spill.push(failed, &LogBlob::of(log).unwrap()).unwrap();
    }
    spill
}

#[test]
fn failed_attempts_logs_read_back_by_task_and_by_run() {
    let (dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    let failed =
        TaskRunRecord { status: "failed", attempts: 2, exit_code: Some(2), ..run("a#test", CacheOutcome::Miss, 5) };
    let flaky = TaskRunRecord { attempts: 2, ..run("b#test", CacheOutcome::Miss, 5) };
    let mut logs =
        failing(dir.path(), &[("a#test", 1, b"a one\n"), ("b#test", 1, b"b one\n"), ("a#test", 2, b"a two\n")]);
    let first = h.record_with_logs(&invocation(1), &[failed, flaky], &[], &mut logs, KEEP_ALL).unwrap();
    let passed = h.record(&invocation(2), &[run("a#test", CacheOutcome::Miss, 5)], &[], KEEP_ALL).unwrap();

    let last = h.failed_log("a#test", None).unwrap().expect("a#test failed in the first run");
    assert_eq!((last.about.run, last.about.attempt, last.about.attempts), (first, 2, 2), "its last failed attempt");
    assert_eq!(
        (last.about.exit_code, last.about.reason.as_str(), last.text.as_str()),
        (Some(2), "exit code 2", "a two\n")
    );
    assert!(!last.about.flaky && !last.about.truncated);
    assert_eq!(last.about.started_ms, 1);
    let flaky = h.failed_log("b#test", Some(first)).unwrap().expect("b#test's failed attempt");
    assert!(flaky.about.flaky, "b#test passed on its second attempt");
    assert_eq!(flaky.text, "b one\n");
    assert_eq!(h.failed_log("a#test", Some(passed)).unwrap(), None, "it passed in the second run");
    assert_eq!(h.failed_log("c#test", None).unwrap(), None);
    assert_eq!(h.attempt_log(first, "a#test", 1).unwrap().map(|l| l.text), Some("a one\n".into()));

    let kept: Vec<(String, u32)> = h.kept_logs(first).unwrap().into_iter().map(|k| (k.task, k.attempt)).collect();
    assert_eq!(kept, [("a#test".into(), 1), ("b#test".into(), 1), ("a#test".into(), 2)], "in the order they failed");
    assert!(h.kept_logs(passed).unwrap().is_empty(), "a run that passed keeps no log");
    let by_run = h.kept_logs_of(&[first, passed]).unwrap();
    assert_eq!((by_run[&first].len(), by_run.get(&passed)), (3, None));
    assert_eq!(h.last_run_with_logs().unwrap(), Some(first));
}

#[test]
fn a_pruned_runs_logs_go_with_it() {
    let (dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    for n in 0..4 {
        let failed = TaskRunRecord { status: "failed", ..run("a#test", CacheOutcome::Miss, 5) };
        let mut logs = failing(dir.path(), &[("a#test", 1, format!("run {n}\n").as_bytes())]);
        h.record_with_logs(&invocation(n), &[failed], &[], &mut logs, HistoryKeep::Runs(2)).unwrap();
    }
    assert_eq!(ids(&h), [4, 3]);
    let rows: i64 = h.conn.query_row("SELECT COUNT(*) FROM task_logs", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 2, "the logs of the two runs kept, no more");
    assert_eq!(h.failed_log("a#test", Some(2)).unwrap(), None);
    assert_eq!(h.failed_log("a#test", None).unwrap().map(|l| l.text), Some("run 3\n".into()));
}

#[test]
fn a_database_of_version_2_gains_task_logs_and_keeps_its_runs() {
    let (dir, path) = scratch();
    {
        let mut h = History::open(&path).unwrap();
        h.record(&invocation(1), &[run("a#test", CacheOutcome::Miss, 5)], &[], KEEP_ALL).unwrap();
        h.conn.execute_batch("DROP TABLE task_logs; PRAGMA user_version = 2;").unwrap();
    }
    let mut h = History::open(&path).unwrap();
    assert_eq!(version(&h.conn).unwrap(), LATEST);
    assert_eq!(ids(&h), [1]);
    let failed = TaskRunRecord { status: "failed", ..run("a#test", CacheOutcome::Miss, 5) };
    let mut logs = failing(dir.path(), &[("a#test", 1, b"kept\n")]);
    let id = h.record_with_logs(&invocation(2), &[failed], &[], &mut logs, KEEP_ALL).unwrap();
    assert_eq!(h.failed_log("a#test", None).unwrap().map(|l| (l.about.run, l.text)), Some((id, "kept\n".into())));
}

#[test]
fn a_log_whose_run_is_gone_is_never_read() {
    let (dir, path) = scratch();
    let mut h = History::open(&path).unwrap();
    let failed = TaskRunRecord { status: "failed", ..run("a#test", CacheOutcome::Miss, 5) };
    let mut logs = failing(dir.path(), &[("a#test", 1, b"orphan\n")]);
    h.record_with_logs(&invocation(1), &[failed], &[], &mut logs, KEEP_ALL).unwrap();
    // What an older vx's prune, which knows no task_logs, leaves behind.
    h.conn.execute_batch("DELETE FROM task_runs; DELETE FROM invocations;").unwrap();
    assert_eq!(h.failed_log("a#test", None).unwrap(), None);
    assert_eq!(h.last_run_with_logs().unwrap(), None);
}
