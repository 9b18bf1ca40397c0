//! Failure handling and exit codes: `--continue=never` (the default) lets
//! running tasks finish and skips the rest, naming each skipped task and
//! why; `dependents-ok` keeps unrelated work going; `always` runs
//! everything. Exit codes are 0, 1 (a task failed) and 2 (usage/config).

use crate::common::{TestEnv, log_cmd, project_toml};

/// A command that logs `word` then fails with exit code 3.
fn failing(word: &str) -> String {
    format!("{}; exit 3", log_cmd(word))
}

/// A command that waits (bounded) until `flag` exists in the project
/// directory, then logs `word`. It lets a test know for certain that a
/// task was already running when another one failed, without timing.
fn waits_for(flag: &str, word: &str) -> String {
    format!("i=0; while [ ! -e {flag} ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; {}", log_cmd(word))
}

/// p#bad fails; p#after-bad depends on it; p#other is independent.
/// bad heads the longer chain, so with one slot it runs first.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/vx.toml",
        &project_toml(
            "p",
            &[],
            &[
                ("bad", &failing("p#bad"), &[]),
                ("after-bad", &log_cmd("p#after-bad"), &["bad"]),
                ("other", &log_cmd("p#other"), &[]),
            ],
        ),
    );
    env
}

#[test]
fn success_exits_zero() {
    let env = fixture();
    let out = env.vx(&["run", "p#other"]);
    out.assert_code(0);
    assert_eq!(env.log(), ["p#other"]);
    assert!(out.stderr.is_empty(), "a clean run writes nothing to stderr\n{out}");
}

#[test]
fn a_failed_task_exits_one_and_is_named_with_its_exit_code() {
    let env = fixture();
    let out = env.vx(&["run", "p#bad"]);
    out.assert_code(1);
    let entry = out.summary_entry("failed", "p#bad");
    assert!(entry.contains("exit code 3"), "{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed, summary.skipped), (1, 0, 1, 0), "{out}");
}

#[test]
fn a_config_error_exits_two() {
    let env = fixture();
    env.write("packages/p/vx.toml", "[tasks.x]\ncommand = 1\n");
    env.vx(&["run", "x"]).assert_code(2);
}

#[test]
fn a_command_that_cannot_start_is_a_failure() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/p/vx.toml", "[tasks.build]\ncommand = [\"vx-test-no-such-program\"]\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(out.summary_entry("failed", "p#build").contains("vx-test-no-such-program"), "{out}");
}

#[test]
fn never_skips_dependents_and_pending_tasks_and_says_why() {
    let env = fixture();
    let out = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1"]);
    out.assert_code(1);
    assert_eq!(env.log(), ["p#bad"], "nothing starts after the failure\n{out}");
    let dependent = out.summary_entry("skipped", "p#after-bad");
    assert!(dependent.contains("p#bad"), "the reason names the failed dependency\n{out}");
    let pending = out.summary_entry("skipped", "p#other");
    assert!(pending.contains("p#bad") && pending.contains("--continue"), "names the failure and the way out\n{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed, summary.skipped), (1, 0, 1, 2), "{out}");
}

#[test]
fn never_is_the_default_and_can_be_named() {
    let env = fixture();
    let default = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1"]);
    env.clear_log();
    let named = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue=never"]);
    named.assert_code(1);
    assert_eq!(env.log(), ["p#bad"]);
    assert_eq!(default.summary(), named.summary());
}

#[test]
fn never_lets_running_tasks_finish() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/vx.toml",
        &project_toml(
            "p",
            &[],
            &[
                ("bad", &format!("touch failed.flag; {}", failing("p#bad")), &[]),
                ("slow", &waits_for("failed.flag", "p#slow"), &[]),
                ("after-bad", &log_cmd("p#after-bad"), &["bad"]),
            ],
        ),
    );
    let out = env.vx(&["run", "p#slow", "p#after-bad", "--concurrency", "2"]);
    out.assert_code(1);
    let log = env.log();
    assert!(log.contains(&"p#slow".to_string()), "the running task was not stopped by the failure\n{out}");
    assert!(!log.contains(&"p#after-bad".to_string()), "{out}");
    assert!(out.summary_entry("skipped", "p#after-bad").contains("p#bad"), "{out}");
    let summary = out.summary();
    assert_eq!((summary.succeeded, summary.failed, summary.skipped), (1, 1, 1), "{out}");
}

#[test]
fn dependents_ok_runs_unrelated_tasks_and_skips_dependents() {
    let env = fixture();
    let out = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue=dependents-ok"]);
    out.assert_code(1);
    assert_eq!(env.log_set(), ["p#bad", "p#other"], "{out}");
    assert!(out.summary_entry("skipped", "p#after-bad").contains("p#bad"), "{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed, summary.skipped), (2, 1, 1, 1), "{out}");
}

#[test]
fn dependents_ok_skips_transitive_dependents_naming_the_cause() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", &failing("a#build"), &["^build"])]));
    env.write("packages/b/vx.toml", &project_toml("b", &["a"], &[("build", &log_cmd("b#build"), &["^build"])]));
    env.write("packages/c/vx.toml", &project_toml("c", &["b"], &[("build", &log_cmd("c#build"), &["^build"])]));
    env.write("packages/d/vx.toml", &project_toml("d", &[], &[("build", &log_cmd("d#build"), &["^build"])]));
    let out = env.vx(&["run", "build", "--continue=dependents-ok"]);
    out.assert_code(1);
    assert_eq!(env.log_set(), ["a#build", "d#build"], "{out}");
    assert!(out.summary_entry("skipped", "b#build").contains("a#build"), "{out}");
    assert!(out.summary_entry("skipped", "c#build").contains("b#build"), "c waits on b, which was skipped\n{out}");
}

#[test]
fn always_runs_dependents_of_failures_and_still_exits_one() {
    let env = fixture();
    let out = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue=always"]);
    out.assert_code(1);
    assert_eq!(env.log_set(), ["p#after-bad", "p#bad", "p#other"], "{out}");
    let log = env.log();
    crate::common::assert_before(&log, "p#bad", "p#after-bad");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed, summary.skipped), (3, 2, 1, 0), "{out}");
}

#[test]
fn bare_continue_means_always() {
    let env = fixture();
    let out = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue"]);
    out.assert_code(1);
    assert_eq!(env.log_set(), ["p#after-bad", "p#bad", "p#other"], "{out}");
}

#[test]
fn an_unknown_continue_mode_is_a_usage_error() {
    let env = fixture();
    let out = env.vx(&["run", "p#other", "--continue=sometimes"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("sometimes") && line.contains("dependents-ok"), "{out}");
    assert!(env.log().is_empty());
}
