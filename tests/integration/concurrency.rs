//! Many vx processes at once on one workspace and one store, as an editor,
//! a terminal and a git hook produce: every run exits 0, each task's
//! command runs at most once per key (the per-task lock, then a hit), the
//! history records every invocation, and `vx cache gc` running beside them
//! never breaks a run or leaves a bad entry.

use std::collections::BTreeMap;

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::process::assert_nothing_left;
use crate::common::store::{assert_store_verifies, store};
use crate::common::{Output, TestEnv};

const PROCESSES: usize = 8;

/// Ten projects in chains (p0 ← p1 ← p2, p3 ← p4 ← p5, p6 ← p7 ← p8, p9),
/// each `build` logging `pN` and copying its source into `dist/` beside
/// 100 kB of random bytes.
fn chains(env: &TestEnv, root_extra: &str) {
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{root_extra}"));
    for i in 0..10 {
        let deps = if i % 3 == 0 { String::new() } else { format!("\"p{}\"", i - 1) };
        let cmd = format!(
            "{} && mkdir -p dist && cp src/f.txt dist/f.txt && head -c 100000 /dev/urandom > dist/r.bin",
            log(&format!("p{i}"))
        );
        let build = task("build", &cmd, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\ndepends-on = [\"^build\"]\n");
        env.write(
            &format!("packages/p{i}/vx.toml"),
            &format!("[project]\nname = \"p{i}\"\ndepends-on = [{deps}]\n{build}"),
        );
        env.write(&format!("packages/p{i}/src/f.txt"), "start");
    }
}

/// Starts `n` `vx ARGS` at once and waits for them all.
fn at_once(env: &TestEnv, n: usize, args: &[&str]) -> Vec<Output> {
    let running: Vec<_> = (0..n).map(|_| env.vx_command(args).spawn()).collect();
    running.into_iter().map(|r| r.finish()).collect()
}

/// How many times each task logged.
fn counts(env: &TestEnv) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in env.log() {
        *out.entry(line).or_default() += 1;
    }
    out
}

#[track_caller]
fn assert_outputs_match_sources(env: &TestEnv) {
    for i in 0..10 {
        let src = env.read(&format!("packages/p{i}/src/f.txt"));
        assert_eq!(env.read(&format!("packages/p{i}/dist/f.txt")), src, "p{i}'s output is its source");
    }
}

#[test]
fn eight_runs_at_once_run_each_key_once_and_are_all_recorded() {
    let env = TestEnv::new();
    chains(&env, "");
    // Round 0 is cold; round 1 changes p1, p4 and p7 (so p2, p5 and p8,
    // which depend on them, re-key too); round 2 changes p2, p5 and p8.
    let changed: [&[usize]; 3] = [&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], &[1, 4, 7], &[2, 5, 8]];
    let expected: [&[usize]; 3] = [&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], &[1, 2, 4, 5, 7, 8], &[2, 5, 8]];
    for (round, (changed, expected)) in changed.iter().zip(expected).enumerate() {
        for &i in *changed {
            env.write(&format!("packages/p{i}/src/f.txt"), &format!("round {round}"));
        }
        env.clear_log();
        for out in at_once(&env, PROCESSES, &["run", "build", "--concurrency", "2"]) {
            out.assert_success();
            assert!(!out.stdout.contains("warning"), "round {round}: no warning\n{out}");
        }
        let want: BTreeMap<String, usize> = expected.iter().map(|i| (format!("p{i}"), 1)).collect();
        assert_eq!(counts(&env), want, "round {round}: each changed key ran exactly once across {PROCESSES} runs");
        assert_outputs_match_sources(&env);
        assert_store_verifies(&store(&env));
    }
    assert_nothing_left(&env, &[], &"after the rounds");
    let history = env.vx(&["history", "--format", "json", "--limit", "100"]);
    history.assert_success();
    let rows: serde_json::Value = serde_json::from_str(&history.stdout).expect("history JSON");
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 3 * PROCESSES, "every invocation is recorded\n{history}");
    assert!(rows.iter().all(|r| r["exit_code"] == 0 && r["tasks"] == 10), "{history}");
    let cached: u64 = rows.iter().map(|r| r["cached"].as_u64().expect("cached")).sum();
    let executed = 10 + 6 + 3;
    assert_eq!(cached, (3 * PROCESSES * 10 - executed) as u64, "every other task of every run was a hit\n{history}");
}

#[test]
fn cache_gc_beside_running_builds_breaks_none_of_them() {
    let env = TestEnv::new();
    // A budget far below one entry: every gc (and the retention each run
    // applies after writing) evicts whatever it can.
    chains(&env, "[cache]\nmax-size = \"1KiB\"\n");
    for round in 0..3 {
        for i in 0..10 {
            env.write(&format!("packages/p{i}/src/f.txt"), &format!("round {round}"));
        }
        let running: Vec<_> = (0..4).map(|_| env.vx_command(&["run", "build", "--concurrency", "2"]).spawn()).collect();
        // One gc after another while the builds store and restore.
        for _ in 0..10 {
            env.vx(&["cache", "gc"]).assert_success();
        }
        for out in running.into_iter().map(|r| r.finish()) {
            out.assert_success();
            assert!(!out.stdout.contains("corrupt"), "round {round}\n{out}");
        }
        assert_outputs_match_sources(&env);
        assert_store_verifies(&store(&env));
    }
    // The store is still usable: a normal run rebuilds what gc evicted and
    // a healthy budget keeps it.
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\n");
    env.vx(&["run", "build"]).assert_success();
    env.clear_log();
    let again = env.vx(&["run", "build"]);
    again.assert_success();
    assert_eq!(again.summary().cached, 10, "{again}");
    assert!(env.log().is_empty());
    assert_nothing_left(&env, &[], &"after gc and runs");
}
