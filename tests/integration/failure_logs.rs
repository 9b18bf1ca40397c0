//! The output of failed attempts kept in history (issue 39): a failed
//! task's whole log printed back by `vx last --failed` after the run,
//! however much the terminal showed; a flaky task's failed attempt kept; a
//! huge log bounded to its first and last MiB and marked; logs pruned with
//! their runs by `[history] keep`; `vx history` marking the runs that kept
//! one; passing tasks keeping nothing. The dashboard's side is in
//! `dashboard.rs`.

use serde_json::Value;

use crate::common::{Output, TestEnv};

/// One project `app` whose `vx.toml` holds `tasks`, and a `[history]
/// keep` when given.
fn workspace(tasks: &str, keep: Option<u32>) -> TestEnv {
    let env = TestEnv::new();
    let keep = keep.map(|n| format!("\n[history]\nkeep = {n}\n")).unwrap_or_default();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{keep}"));
    env.write("packages/app/vx.toml", &format!("[project]\nname = \"app\"\n\n{tasks}"));
    env
}

/// `line 1` … `line N`, each with its newline.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[track_caller]
fn history_json(env: &TestEnv) -> Vec<Value> {
    let out = env.vx(&["history", "--format", "json", "--limit", "100"]);
    out.assert_success();
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e})\n{out}"))
}

/// The lines of stderr, for the lines that name each log.
fn stderr_lines(out: &Output) -> Vec<&str> {
    out.stderr.lines().collect()
}

#[test]
fn a_failed_tasks_whole_log_is_printed_back_after_the_run() {
    let env = workspace("[tasks.test]\ncommand = \"seq -f 'line %g' 1 5000; exit 1\"\n", None);
    let run = env.vx(&["run", "app#test"]);
    run.assert_code(1);
    assert_eq!(run.task_lines("app#test").len(), 5000, "the terminal showed it as it ran\n{}", run.stderr);
    assert!(run.stdout.contains("\nFull log: vx last --failed --task app#test\n"), "the summary says how\n{run}");

    let expected = numbered(5000);
    let last = env.vx(&["last", "--failed"]);
    last.assert_success();
    assert!(
        last.stdout == expected,
        "stdout is the whole log, as written ({} bytes)\n{}",
        last.stdout.len(),
        last.stderr
    );
    assert_eq!(stderr_lines(&last), ["vx: app#test in run #1: attempt 1 of 1 failed (exit code 1)"], "{}", last.stderr);
    for args in
        [&["last", "--failed", "--task", "app#test"][..], &["last", "--failed", "--run", "1", "--task", "app#test"]]
    {
        let again = env.vx(args);
        again.assert_success();
        assert!(again.stdout == expected, "{args:?} prints the same log\n{}", again.stderr);
    }

    let rows = history_json(&env);
    let logs = &rows[0]["logs"];
    assert_eq!((rows[0]["id"].as_i64(), logs[0]["task"].as_str()), (Some(1), Some("app#test")), "{rows:?}");
    assert_eq!((logs[0]["attempt"].as_u64(), logs[0]["exit_code"].as_i64()), (Some(1), Some(1)), "{logs}");
    assert_eq!((logs[0]["bytes"].as_u64(), logs[0]["truncated"].as_bool()), (Some(expected.len() as u64), Some(false)));
    let text = env.vx(&["history"]);
    text.assert_success();
    assert!(
        text.stdout.lines().next().is_some_and(|l| l.starts_with("#1 ") && l.ends_with("  logs: app#test")),
        "{text}"
    );
    assert!(text.stdout.contains("vx last --failed --run ID"), "how to print them\n{text}");
}

#[test]
fn a_flaky_tasks_failed_attempt_is_kept_and_its_passing_one_is_not() {
    let command = "n=$(( $(cat tries 2>/dev/null || echo 0) + 1 )); echo $n > tries; echo \"attempt $n\"; \
                   if [ $n -lt 2 ]; then echo 'error: attempt 1 broke' >&2; exit 7; fi";
    let env = workspace(&format!("[tasks.test]\ncommand = {command:?}\nretries = 1\n"), None);
    let run = env.vx(&["run", "app#test"]);
    run.assert_success();
    assert_eq!(run.summary().flaky, 1, "{run}");
    assert!(run.stdout.contains("\nFull log: vx last --failed --task app#test\n"), "{run}");

    let last = env.vx(&["last", "--failed"]);
    last.assert_success();
    let mut lines: Vec<&str> = last.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["attempt 1", "error: attempt 1 broke"], "the failed attempt's stdout and stderr only\n{last}");
    assert_eq!(
        stderr_lines(&last),
        ["vx: app#test in run #1: attempt 1 of 2 failed (exit code 7), then passed (flaky)"],
        "{last}"
    );
    let rows = history_json(&env);
    assert_eq!(rows[0]["logs"].as_array().map(Vec::len), Some(1), "one failed attempt\n{rows:?}");
    assert_eq!(rows[0]["logs"][0]["flaky"], true, "{rows:?}");
}

#[test]
fn every_failed_attempt_is_kept_in_order() {
    let command = "n=$(( $(cat tries 2>/dev/null || echo 0) + 1 )); echo $n > tries; echo \"attempt $n\"; exit $n";
    let env = workspace(&format!("[tasks.test]\ncommand = {command:?}\nretries = 2\n"), None);
    env.vx(&["run", "app#test"]).assert_code(1);
    let last = env.vx(&["last", "--failed"]);
    last.assert_success();
    assert_eq!(last.stdout, "attempt 1\nattempt 2\nattempt 3\n", "{last}");
    assert_eq!(
        stderr_lines(&last),
        [
            "vx: app#test in run #1: attempt 1 of 3 failed (exit code 1)",
            "vx: app#test in run #1: attempt 2 of 3 failed (exit code 2)",
            "vx: app#test in run #1: attempt 3 of 3 failed (exit code 3)",
        ],
        "{last}"
    );
}

#[test]
fn a_huge_log_is_bounded_to_its_first_and_last_mib_and_marked_truncated() {
    // About 6.9 MB: far past the 2 MiB history keeps of one attempt.
    let env = workspace("[tasks.test]\ncommand = \"seq -f 'line %.0f' 1 600000; exit 1\"\n", None);
    env.vx(&["run", "app#test", "--output-logs", "none"]).assert_code(1);
    let whole = (1..=600_000).map(|i| format!("line {i}\n").len()).sum::<usize>();

    let last = env.vx(&["last", "--failed"]);
    last.assert_success();
    let kept = &last.stdout;
    assert!(kept.len() <= (2 << 20) + 200 && kept.len() > (2 << 20) - 10_000, "bounded: {} bytes", kept.len());
    assert!(kept.starts_with("line 1\nline 2\n"), "its head");
    assert!(kept.ends_with("line 599999\nline 600000\n"), "its tail");
    let marker = kept.lines().find(|l| l.starts_with("[vx: ")).expect("a line where the middle was left out");
    let left_out: usize = marker[5..].split(' ').next().and_then(|n| n.parse().ok()).expect("a count");
    let kept_lines = kept.lines().filter(|l| l.starts_with("line ")).map(|l| l.len() + 1).sum::<usize>();
    assert_eq!(left_out + kept_lines, whole, "the marker counts what is not there: {marker}");
    assert!(kept.lines().all(|l| l.starts_with("line ") || l == marker), "whole lines only");
    assert!(last.stderr.contains("of which history kept the first and the last MiB"), "{}", last.stderr);

    let rows = history_json(&env);
    assert_eq!(rows[0]["logs"][0]["truncated"], true, "{rows:?}");
    assert_eq!(rows[0]["logs"][0]["bytes"].as_u64(), Some(whole as u64), "{rows:?}");
}

#[test]
fn a_pruned_runs_logs_go_with_it() {
    let command = "n=$(( $(cat runs 2>/dev/null || echo 0) + 1 )); echo $n > runs; echo \"run $n\"; exit 1";
    let env = workspace(&format!("[tasks.test]\ncommand = {command:?}\n"), Some(2));
    for _ in 0..4 {
        env.vx(&["run", "app#test"]).assert_code(1);
    }
    let rows = history_json(&env);
    let ids: Vec<i64> = rows.iter().filter_map(|r| r["id"].as_i64()).collect();
    assert_eq!(ids, [4, 3], "the last two runs are kept\n{rows:?}");
    let db = rusqlite::Connection::open(env.path(".vx/history.db")).expect("history opens");
    let mut stmt = db.prepare("SELECT invocation FROM task_logs ORDER BY invocation").expect("task_logs");
    let logged: Vec<i64> = stmt.query_map([], |r| r.get(0)).expect("rows").map(Result::unwrap).collect();
    assert_eq!(logged, [3, 4], "the pruned runs' logs are gone with them");

    let gone = env.vx(&["last", "--failed", "--run", "1"]);
    gone.assert_code(2);
    assert!(gone.error_line().contains("no run 1 in .vx/history.db"), "{gone}");
    let latest = env.vx(&["last", "--failed", "--task", "app#test"]);
    latest.assert_success();
    assert_eq!(latest.stdout, "run 4\n", "{latest}");
}

#[test]
fn passing_and_cached_tasks_keep_no_log() {
    let env = workspace(
        "[tasks.build]\ncommand = \"mkdir -p dist; echo built > dist/out.txt\"\noutputs = [\"dist/**\"]\n\
         [tasks.lint]\ncommand = \"echo clean\"\n",
        None,
    );
    for again in [false, true] {
        let run = env.vx(&["run", "build", "lint"]);
        run.assert_success();
        assert_eq!(run.summary().cached > 0, again, "the second run restores from the cache\n{run}");
        assert!(!run.stdout.contains("Full log"), "nothing failed, nothing to print\n{run}");
    }
    let rows = history_json(&env);
    assert!(rows.iter().all(|r| r["logs"] == serde_json::json!([])), "{rows:?}");
    let last = env.vx(&["last", "--failed"]);
    last.assert_success();
    assert_eq!((last.stdout.as_str(), last.stderr.as_str()), ("", "vx: no task failed in run #2\n"), "{last}");
}

#[test]
fn a_run_without_failures_points_at_the_last_run_that_had_one() {
    let env =
        workspace("[tasks.test]\ncommand = \"if [ -f fixed ]; then echo ok; else echo 'broken'; exit 1; fi\"\n", None);
    env.vx(&["run", "app#test"]).assert_code(1);
    env.write("packages/app/fixed", "");
    env.vx(&["run", "app#test"]).assert_success();
    let last = env.vx(&["last", "--failed"]);
    last.assert_success();
    assert_eq!(last.stdout, "", "{last}");
    assert_eq!(
        last.stderr,
        "vx: no task failed in run #2; the last run with a failed task's log is #1: vx last --failed --run 1\n"
    );
    let named = env.vx(&["last", "--failed", "--task", "app#test"]);
    named.assert_success();
    assert_eq!(named.stdout, "broken\n", "the task's last failure, from an earlier run\n{named}");
    let bad = env.vx(&["last", "--task", "app#test"]);
    bad.assert_code(2);
    let bare = env.vx(&["last", "--failed", "--task", "app"]);
    bare.assert_code(2);
    assert!(bare.error_line().contains("`app` is not a task id"), "{bare}");
}
