//! `retries = N` and `--retries N`: a failed attempt runs again, up to N
//! more times; a task that failed and then passed is flaky, and says so in
//! its output, the summary, the markdown and JUnit reports, `--dry` and
//! `vx history --flaky`. Only a passing attempt is cached.
//!
//! The task under test counts its own attempts in a file of the project,
//! so "it ran three times" is read from that file, never from timing.

use serde_json::Value;

use crate::common::TestEnv;
use crate::plugins::component;

/// A command that appends to the log, counts its attempts in `tries`,
/// writes `dist/out.txt`, and fails until attempt `pass_on` (0: always).
fn counting(pass_on: u32) -> String {
    let pass = if pass_on == 0 { "false".to_string() } else { format!("[ \"$n\" -ge {pass_on} ]") };
    format!(
        "n=$(( $(cat tries 2>/dev/null || echo 0) + 1 )); echo $n > tries; echo \"attempt $n\"; \
         mkdir -p dist; echo \"attempt $n\" > dist/out.txt; {pass}"
    )
}

/// One project `app` with `build` (the counting command, `extra` lines).
fn fixture(pass_on: u32, extra: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/app/vx.toml",
        &format!(
            "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = {:?}\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n{extra}\n",
            counting(pass_on)
        ),
    );
    env.write("packages/app/src/a.txt", "a\n");
    env
}

fn tries(env: &TestEnv) -> u32 {
    env.read("packages/app/tries").trim().parse().expect("a count")
}

#[test]
fn a_failed_attempt_runs_again_and_a_pass_after_it_is_flaky() {
    let env = fixture(2, "retries = 2");
    let out = env.vx(&["run", "build", "--report", "markdown", "--report-file", "r.md"]);
    out.assert_success();
    assert_eq!(tries(&env), 2, "one retry was enough\n{out}");
    let lines = out.task_lines("app#build");
    assert!(lines.contains(&"attempt 1 of 3 failed (exit code 1); retrying"), "{out}");
    assert!(lines.contains(&"flaky: passed on attempt 2 of 3"), "{out}");
    let summary = out.summary();
    assert_eq!((summary.succeeded, summary.failed, summary.flaky), (1, 0, 1), "{out}");
    assert!(out.summary_entry("flaky", "app#build").contains("attempt 1 failed: exit code 1"), "{out}");
    let md = env.read("r.md");
    assert!(md.contains("| `app#build` | flaky (passed on attempt 2; attempt 1 failed: exit code 1) |"), "{md}");
    assert!(md.contains("## Flaky") && md.contains("attempt 1\n```"), "the failed attempt's log\n{md}");

    // Only the passing attempt is cached: its outputs and its log.
    std::fs::remove_dir_all(env.root().join("packages/app/dist")).expect("remove the outputs");
    let hit = env.vx(&["run", "build"]);
    hit.assert_success();
    assert_eq!(hit.summary().cached, 1, "{hit}");
    assert_eq!(tries(&env), 2, "a hit runs nothing\n{hit}");
    assert_eq!(env.read("packages/app/dist/out.txt"), "attempt 2\n");
    assert!(hit.task_lines("app#build").contains(&"attempt 2"), "{hit}");
    assert!(!hit.task_lines("app#build").contains(&"attempt 1"), "the failed attempt's log is not replayed\n{hit}");
}

#[test]
fn history_and_dry_show_how_often_a_task_was_flaky() {
    let env = fixture(2, "retries = 1");
    env.vx(&["run", "build"]).assert_success();
    let listed = env.vx(&["history", "--flaky"]);
    listed.assert_success();
    assert!(listed.stdout.starts_with("app#build  flaky in 1 of 1 execution(s)"), "{listed}");
    let json = env.vx(&["history", "--flaky", "--format", "json"]);
    json.assert_success();
    let rows: Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!((rows[0]["task"].as_str(), rows[0]["flaky"].as_i64()), (Some("app#build"), Some(1)), "{json}");

    env.write("packages/app/src/a.txt", "changed\n");
    let dry = env.vx(&["run", "build", "--dry"]);
    dry.assert_success();
    let line = dry.stdout.lines().next().unwrap_or_default();
    assert!(line.starts_with("app#build") && line.ends_with("flaky in 1 of its last 1 runs"), "{dry}");
    let dry = env.vx(&["run", "build", "--dry=json"]);
    let plan: Value = serde_json::from_str(&dry.stdout).expect("json");
    assert_eq!(plan["tasks"][0]["history"]["flaky"], 1, "{dry}");
    assert_eq!(plan["tasks"][0]["retries"], 1, "{dry}");

    let steady = TestEnv::new();
    steady.workspace(&["packages/*"]);
    steady.write("packages/app/vx.toml", "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = \"true\"\n");
    steady.vx(&["run", "build"]).assert_success();
    let none = steady.vx(&["history", "--flaky"]);
    none.assert_success();
    assert_eq!(none.stdout, "no flaky task recorded in this workspace\n", "{none}");
}

#[test]
fn a_task_that_fails_every_attempt_fails_and_is_not_cached() {
    let env = fixture(0, "");
    let out = env.vx(&["run", "build", "--retries", "2"]);
    out.assert_code(1);
    assert_eq!(tries(&env), 3, "the first attempt and two retries\n{out}");
    assert!(out.task_lines("app#build").contains(&"attempt 2 of 3 failed (exit code 1); retrying"), "{out}");
    let summary = out.summary();
    assert_eq!((summary.failed, summary.flaky), (1, 0), "{out}");
    let again = env.vx(&["run", "build"]);
    again.assert_code(1);
    assert_eq!(tries(&env), 4, "nothing was cached, and without retries it runs once\n{again}");
    let flaky = env.vx(&["history", "--flaky"]);
    assert_eq!(flaky.stdout, "no flaky task recorded in this workspace\n", "{flaky}");
}

#[test]
fn a_failed_attempts_outputs_never_reach_the_entry() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let command = "n=$(( $(cat tries 2>/dev/null || echo 0) + 1 )); echo $n > tries; mkdir -p dist; \
                   if [ $n -lt 2 ]; then echo half > dist/stale.txt; exit 1; fi; echo whole > dist/out.txt";
    env.write(
        "packages/app/vx.toml",
        &format!(
            "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = {command:?}\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\nretries = 1\n"
        ),
    );
    env.write("packages/app/src/a.txt", "a\n");
    env.vx(&["run", "build"]).assert_success();
    assert!(!env.root().join("packages/app/dist/stale.txt").exists(), "cleared before the second attempt");
    std::fs::remove_dir_all(env.root().join("packages/app/dist")).expect("remove the outputs");
    let hit = env.vx(&["run", "build"]);
    hit.assert_success();
    assert_eq!(hit.summary().cached, 1, "{hit}");
    assert_eq!(env.read("packages/app/dist/out.txt"), "whole\n");
    assert!(
        !env.root().join("packages/app/dist/stale.txt").exists(),
        "the entry holds the passing attempt's files only"
    );
}

#[test]
fn a_timed_out_attempt_is_retried() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // The first attempt waits far past its timeout; the second passes.
    let command = "n=$(( $(cat tries 2>/dev/null || echo 0) + 1 )); echo $n > tries; [ \"$n\" -ge 2 ] || exec sleep 60";
    env.write(
        "packages/app/vx.toml",
        &format!("[project]\nname = \"app\"\n\n[tasks.build]\ncommand = {command:?}\ntimeout = \"1s\"\nretries = 1\n"),
    );
    let out = env.vx_command(&["run", "build"]).env("VX_KILL_GRACE_MS", "300").output();
    out.assert_success();
    assert_eq!(tries(&env), 2, "{out}");
    assert!(out.task_lines("app#build").contains(&"attempt 1 of 2 failed (timed out after 1.00s); retrying"), "{out}");
    assert_eq!(out.summary().flaky, 1, "{out}");
}

#[test]
fn retries_zero_on_the_command_line_turns_a_tasks_retries_off() {
    let env = fixture(2, "retries = 3");
    let out = env.vx(&["run", "build", "--retries", "0"]);
    out.assert_code(1);
    assert_eq!(tries(&env), 1, "{out}");
}

#[test]
fn a_flaky_task_is_a_flaky_test_in_junit() {
    let env = fixture(2, "retries = 1");
    env.vx(&["plugin", "add", component("junit").to_str().unwrap()]).assert_success();
    let out = env.vx(&["run", "build", "--report", "junit", "--report-file", "junit.xml"]);
    out.assert_success();
    let xml = env.read("junit.xml");
    assert!(xml.contains(r#"failures="0""#), "a flaky test passed\n{xml}");
    let case = xml.split("<testcase name=\"build\"").nth(1).expect("the case");
    assert!(case.contains("<flakyFailure type=\"failed\" message=\"flaky: passed on attempt 2"), "{xml}");
    assert!(case.contains("<system-out>attempt 1</system-out>"), "the failed attempt's log\n{xml}");
}

#[test]
fn bad_retries_are_config_errors_that_say_how_to_mend_them() {
    let env = fixture(1, "retries = -1");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/app/vx.toml") && line.contains("`retries` must be 0 or more, got -1"), "{out}");
    env.write(
        "packages/app/vx.toml",
        "[project]\nname = \"app\"\n\n[tasks.dev]\ncommand = \"true\"\npersistent = true\nretries = 1\n",
    );
    let out = env.vx(&["run", "dev"]);
    out.assert_code(2);
    assert!(out.error_line().contains("`retries` applies only to tasks that end"), "{out}");
    let out = env.vx(&["run", "dev", "--retries", "x"]);
    out.assert_code(2);
    assert!(out.error_line().contains("--retries"), "{out}");
}
