//! Resource-aware scheduling with real processes: a `mutex` never lets two
//! tasks overlap, in one vx or across two; `--memory` runs large tasks one
//! at a time beside small ones; an oversize task runs alone; `priority`
//! decides who starts first; bad values are one-line config errors. Order
//! and overlap are read from marks the tasks append to a file, never from
//! timings; where two tasks must overlap, each waits for the other's mark.

use crate::common::TestEnv;
use crate::common::fixtures::task;
use crate::common::log_cmd as log;

/// `echo start-NAME`, a short pause, `echo end-NAME` into the log: two
/// tasks that overlap interleave their marks.
fn marked(name: &str) -> String {
    format!("{}; sleep 0.2; {}", log(&format!("start-{name}")), log(&format!("end-{name}")))
}

/// A mutex name no other test (or other run of this one) uses, since the
/// locks are shared by every vx of the user on the machine.
fn unique(name: &str) -> String {
    format!("{name}-{}-{:x}", std::process::id(), rand_suffix())
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// One project per `(name, extra config)`, each with a task `t` running `command(name)`.
fn projects(env: &TestEnv, tasks: &[(&str, String, String)]) {
    env.workspace(&["p/*"]);
    for (name, command, extra) in tasks {
        env.write(
            &format!("p/{name}/vx.toml"),
            &format!("[project]\nname = \"{name}\"\n{}", task("t", command, extra)),
        );
    }
}

/// Asserts that every `start-X` in `log` is followed by `end-X` before any
/// other start: the tasks never overlapped.
#[track_caller]
fn assert_one_at_a_time(log: &[String], names: &[&str]) {
    let relevant: Vec<&String> =
        log.iter().filter(|l| names.iter().any(|n| **l == format!("start-{n}") || **l == format!("end-{n}"))).collect();
    assert_eq!(relevant.len(), names.len() * 2, "each ran once: {log:?}");
    for pair in relevant.chunks(2) {
        let name = pair[0].strip_prefix("start-").unwrap_or_else(|| panic!("a start comes first: {log:?}"));
        assert_eq!(*pair[1], format!("end-{name}"), "{name} ended before anything else started: {log:?}");
    }
}

#[test]
fn tasks_sharing_a_mutex_never_overlap() {
    let env = TestEnv::new();
    let m = unique("db");
    let extra = format!("mutex = \"{m}\"");
    let tasks: Vec<_> = ["a", "b", "c"].iter().map(|n| (*n, marked(n), extra.clone())).collect();
    let mut tasks = tasks;
    tasks.push(("free", marked("free"), String::new()));
    projects(&env, &tasks);
    env.vx(&["run", "t", "--concurrency", "4"]).assert_success();
    assert_one_at_a_time(&env.log(), &["a", "b", "c"]);
}

#[test]
fn a_mutex_holds_across_two_vx_processes_and_the_waiter_says_who_holds_it() {
    let env = TestEnv::new();
    let m = unique("shared");
    let extra = format!("mutex = \"{m}\"");
    let hold = format!(
        "{}; echo holding; i=0; while [ ! -e \"$VX_TEST_RELEASE\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; {}",
        log("start-a"),
        log("end-a")
    );
    projects(&env, &[("a", hold, extra.clone()), ("b", marked("b"), extra)]);
    let release = env.path("release");
    let release = release.to_str().expect("a UTF-8 path");
    let first = env.vx_command(&["run", "a#t"]).env("VX_TEST_RELEASE", release).spawn();
    first.wait_for_stdout("a#t: holding");
    let second = env.vx_command(&["run", "b#t"]).env("VX_TEST_RELEASE", release).spawn();
    second.wait_for_stdout(&format!("waiting for mutex {m}, held by another vx (pid {})", first.pid()));
    std::fs::write(release, "").expect("release the first task");
    first.finish().assert_success();
    second.finish().assert_success();
    assert_eq!(env.log(), ["start-a", "end-a", "start-b", "end-b"], "b started once a had ended");
}

#[test]
fn a_memory_budget_runs_large_tasks_one_at_a_time_and_small_ones_together() {
    let env = TestEnv::new();
    let big = "resources = { memory = \"1GiB\" }".to_string();
    // Each small task waits (bounded) for the other's start: both succeed
    // only if they ran at the same time.
    let together = |me: &str, other: &str| {
        format!(
            "{}; touch \"../../{me}.on\"; i=0; while [ ! -e \"../../{other}.on\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; [ -e \"../../{other}.on\" ]",
            log(&format!("start-{me}"))
        )
    };
    projects(
        &env,
        &[
            ("big1", marked("big1"), big.clone()),
            ("big2", marked("big2"), big),
            ("small1", together("small1", "small2"), String::new()),
            ("small2", together("small2", "small1"), String::new()),
        ],
    );
    env.vx(&["run", "t", "--memory", "1GiB", "--concurrency", "4"]).assert_success();
    assert_one_at_a_time(&env.log(), &["big1", "big2"]);
}

#[test]
fn a_task_over_the_budget_runs_alone_rather_than_never() {
    let env = TestEnv::new();
    projects(
        &env,
        &[
            ("huge", marked("huge"), "resources = { cpus = 8 }".to_string()),
            ("x", marked("x"), String::new()),
            ("y", marked("y"), String::new()),
        ],
    );
    let out = env.vx(&["run", "t", "--concurrency", "2", "--dry"]);
    out.assert_success();
    assert!(out.stdout.contains("needs 8 cpus of --concurrency 2: runs alone"), "{out}");
    env.vx(&["run", "t", "--concurrency", "2"]).assert_success();
    let log = env.log();
    let at = log.iter().position(|l| l == "start-huge").expect("huge ran");
    assert_eq!(log[at + 1], "end-huge", "nothing ran beside huge: {log:?}");
}

#[test]
fn high_priority_starts_first_and_low_last() {
    let env = TestEnv::new();
    projects(
        &env,
        &[
            ("a", log("a"), "priority = \"low\"".to_string()),
            ("b", log("b"), String::new()),
            ("c", log("c"), String::new()),
            ("z", log("z"), "priority = \"high\"".to_string()),
        ],
    );
    env.vx(&["run", "t", "--concurrency", "1"]).assert_success();
    assert_eq!(env.log(), ["z", "b", "c", "a"]);
}

#[test]
fn dry_shows_resources_mutex_priority_and_what_a_task_contends_on() {
    let env = TestEnv::new();
    let extra = "mutex = \"db\"\nresources = { cpus = 0.5, memory = \"512MiB\" }\npriority = \"high\"".to_string();
    projects(&env, &[("a", log("a"), extra), ("b", log("b"), "mutex = \"db\"".to_string())]);
    let out = env.vx(&["run", "t", "--dry"]);
    out.assert_success();
    assert!(out.stdout.lines().any(|l| l.starts_with("a#t") && l.ends_with("shares mutex db with b#t")), "{out}");
    let out = env.vx(&["run", "t", "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("the plan is JSON");
    let a = &plan["tasks"][0];
    assert_eq!(a["id"], "a#t");
    assert_eq!(a["resources"]["cpus"], 0.5);
    assert_eq!(a["resources"]["memory"], 512 << 20);
    assert_eq!(a["mutex"], "db");
    assert_eq!(a["priority"], "high");
    assert_eq!(a["contends"][0], "shares mutex db with b#t");
    assert_eq!(plan["tasks"][1]["priority"], "normal");
    assert!(env.log().is_empty(), "--dry runs nothing");
}

#[test]
fn bad_scheduling_values_are_one_line_config_errors_with_the_fix() {
    let cases = [
        (r#"resources = { memory = "2 potatoes" }"#, "unknown unit `potatoes`", r#"memory = "2GiB""#),
        (r#"resources = { cpus = "two" }"#, "`resources.cpus` must be a number of cpus above 0", "cpus = 2"),
        ("resources = { cpus = 0 }", "`resources.cpus` must be a number of cpus above 0", "cpus = 0.5"),
        ("resources = { gpus = 1 }", "unknown key `gpus`", "cpus"),
        (r#"priority = "urgent""#, "unknown priority `urgent`", r#""high""#),
        (r#"mutex = "a b""#, "invalid mutex name `a b`", r#"mutex = "db""#),
    ];
    for (extra, message, fix) in cases {
        let env = TestEnv::new();
        projects(&env, &[("a", log("a"), extra.to_string())]);
        let out = env.vx(&["run", "t"]);
        out.assert_code(2);
        let line = out.error_line();
        assert!(line.contains("p/a/vx.toml:"), "{extra}: the file is named\n{out}");
        assert!(line.contains(message), "{extra}: {line}");
        assert!(line.contains(fix), "{extra}: the fix is given: {line}");
        assert!(env.log().is_empty(), "nothing runs after a config error");
    }
}

#[test]
fn a_group_cannot_have_a_mutex() {
    let env = TestEnv::new();
    env.workspace(&["p/*"]);
    env.write(
        "p/a/vx.toml",
        &format!("{}\n[tasks.all]\ndepends-on = [\"t\"]\nmutex = \"db\"\n", task("t", "true", "")),
    );
    let out = env.vx(&["run", "all"]);
    out.assert_code(2);
    assert!(out.error_line().contains("which cannot have `mutex`"), "{out}");
}

#[test]
fn a_bad_memory_flag_is_a_usage_error() {
    let env = TestEnv::new();
    projects(&env, &[("a", log("a"), String::new())]);
    let out = env.vx(&["run", "t", "--memory", "lots"]);
    out.assert_code(2);
    assert!(out.error_line().contains("--memory expects a size like `8GiB`"), "{out}");
}

/// Each task's predicted `(start, end)` in a `--dry=json` plan, by id,
/// and the predicted wall time.
fn predicted(env: &TestEnv, args: &[&str]) -> (Vec<(String, u64, u64, u64)>, u64) {
    let out = env.vx(args);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("the plan is JSON");
    let tasks = plan["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            let p = &t["predicted"];
            let field = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("a number: {t}"));
            (t["id"].as_str().expect("id").to_string(), field(&p["start_ms"]), field(&p["end_ms"]), field(&t["eta_ms"]))
        })
        .collect();
    (tasks, plan["prediction"]["wall_ms"].as_u64().expect("a wall time once every task has history"))
}

#[test]
fn dry_never_predicts_two_tasks_together_that_a_mutex_or_a_budget_keeps_apart() {
    let env = TestEnv::new();
    let m = unique("db");
    let uncached = "cache = false".to_string();
    let mutex = format!("mutex = \"{m}\"\n{uncached}");
    let two_cpus = format!("resources = {{ cpus = 2 }}\n{uncached}");
    let pause = |name: &str| format!("sleep 0.1; {}", log(name));
    projects(
        &env,
        &[
            ("a", pause("a"), mutex.clone()),
            ("b", pause("b"), mutex),
            ("c", pause("c"), two_cpus.clone()),
            ("d", pause("d"), two_cpus),
            ("free", pause("free"), uncached),
        ],
    );
    // One run records every task's duration, which the prediction replays.
    env.vx(&["run", "t", "--concurrency", "3"]).assert_success();
    let (tasks, wall) = predicted(&env, &["run", "t", "--concurrency", "3", "--dry=json"]);
    let at = |id: &str| tasks.iter().find(|t| t.0 == id).unwrap_or_else(|| panic!("{id}: {tasks:?}"));
    let together = |x: &str, y: &str| {
        let (a, b) = (at(x), at(y));
        a.1 < b.2 && b.1 < a.2
    };
    for (id, start, end, eta) in &tasks {
        assert_eq!(end - start, *eta, "{id} is predicted to take its ETA: {tasks:?}");
        assert!(*eta > 0, "{id} has a recorded duration: {tasks:?}");
    }
    assert!(!together("a#t", "b#t"), "a and b share a mutex: {tasks:?}");
    assert!(!together("c#t", "d#t"), "2 + 2 cpus do not fit in 3: {tasks:?}");
    assert!(
        wall >= at("a#t").3 + at("b#t").3,
        "the mutex's tasks one after another fit in the wall time: {wall} {tasks:?}"
    );
    assert_eq!(wall, tasks.iter().map(|t| t.2).max().unwrap_or(0), "the wall time is when the last task ends");
    let text = env.vx(&["run", "t", "--concurrency", "3", "--dry", "--verbose"]);
    text.assert_success();
    assert!(text.stdout.contains("  predicted:  ~"), "each task's predicted span in --verbose\n{text}");
}
