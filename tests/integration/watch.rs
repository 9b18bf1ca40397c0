//! `vx watch`, proved with real files and processes: one edit re-runs the
//! affected task once, an edit in a dependency re-runs its dependents, a
//! revert is a cache hit, outputs and `.git`, `.vx` and ignored files never
//! start a cycle, a task writing its outputs never loops, a server restarts
//! when its inputs change and only then (its dependents wait for readiness
//! again), config broken then fixed, a new project is watched and a removed
//! one's server is stopped, polling works like the OS watcher, and
//! Ctrl-C, SIGTERM and SIGHUP behave as the guard promises.
//!
//! Which tasks ran is read from the test log each task appends to; which
//! cycles happened from the `── ` headers vx prints. A negative ("this edit
//! starts no cycle") is proved by then making a real edit and checking that
//! the only cycle that happened is the real one: events are judged in the
//! order they arrive, so a cycle the ignored edit wrongly started would
//! come first, or the real cycle's header would name the ignored path.
//! Every wait is a bounded poll; nothing asserts on timing.

use std::time::{Duration, SystemTime};

use nix::sys::signal::Signal;

use crate::common::fixtures::{running, task, toml_str};
use crate::common::log_cmd as log;
use crate::common::process::{Running, alive, assert_alive, assert_nothing_left, guard_of, poll, read_pids};
use crate::common::{Summary, TestEnv};

/// A short kill ladder, so servers stop quickly.
const GRACE_MS: &str = "300";

/// The line that ends every settled cycle (with or without servers).
const SETTLED: &str = "watching for changes";

/// The text of `packages/NAME/vx.toml`: `[project]` with `deps`, then `tasks`.
fn project_text(name: &str, deps: &[&str], tasks: &[String]) -> String {
    let deps: Vec<String> = deps.iter().map(|d| toml_str(d)).collect();
    let mut text = format!("[project]\nname = \"{name}\"\ndepends-on = [{}]\n", deps.join(", "));
    for t in tasks {
        text.push_str(t);
    }
    text
}

/// Writes project `name` at `packages/NAME` (the workspace is `packages/*`).
fn project(env: &TestEnv, name: &str, deps: &[&str], tasks: &[String]) {
    env.workspace(&["packages/*"]);
    env.write(&format!("packages/{name}/vx.toml"), &project_text(name, deps, tasks));
}

/// A cacheable `build` of `name`: logs `NAME#build`, then copies `src/` to
/// `dist/` (its declared output).
fn build(name: &str) -> String {
    task(
        "build",
        &format!("{}; rm -rf dist; mkdir -p dist; cp -R src/. dist/", log(&format!("{name}#build"))),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    )
}

/// Project `name` with a cacheable `build` (depending on `^build`) and a
/// source file `src/x.txt`.
fn build_project(env: &TestEnv, name: &str, deps: &[&str]) {
    let mut t = build(name);
    t.push_str("depends-on = [\"^build\"]\n");
    project(env, name, deps, &[t]);
    env.write(&format!("packages/{name}/src/x.txt"), "1\n");
}

/// A persistent `dev` task running `vx-test-server` (PID in `server.pid`,
/// `NAME ready` logged after `delay_ms`), ready once it prints `NAME listening`.
fn server(name: &str, delay_ms: u32) -> String {
    task(
        "dev",
        &format!("vx-test-server --pid-file server.pid --delay-ms {delay_ms} --log \"$VX_TEST_LOG\" --name {name}"),
        &format!("persistent = true\ninputs = [\"src/**\"]\nready = {{ log = \"{name} listening\" }}"),
    )
}

/// How many times `word` is in the log.
fn count(env: &TestEnv, word: &str) -> usize {
    env.log().iter().filter(|l| *l == word).count()
}

/// Starts `vx watch ARGS` (a short kill ladder, extra variables) and waits
/// for the first cycle to settle.
fn watch(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Running {
    let mut all = vec!["watch"];
    all.extend_from_slice(args);
    let mut cmd = env.vx_command(&all).env("VX_KILL_GRACE_MS", GRACE_MS);
    for (k, v) in vars {
        cmd = cmd.env(k, v);
    }
    let vx = cmd.own_group().spawn();
    wait_settled(&vx, 1);
    vx
}

/// The `── ` header lines vx printed so far.
fn headers(vx: &Running) -> Vec<String> {
    vx.output_so_far().stdout.lines().filter(|l| l.starts_with("── ")).map(str::to_string).collect()
}

/// The `── changed: …` headers so far.
fn changes(vx: &Running) -> Vec<String> {
    headers(vx).into_iter().filter(|h| h.starts_with("── changed: ")).collect()
}

/// Panics unless the `changed:` headers so far are one per `(path, n)`, in
/// order: each naming `path` (or eliding some names with `and N more`) and
/// re-running `n` tasks. Names of paths that affect no task may join a
/// header when they arrive in the same burst; they do not make a cycle.
#[track_caller]
fn assert_changes(vx: &Running, expected: &[(&str, usize)]) {
    let got = changes(vx);
    assert_eq!(got.len(), expected.len(), "cycles: {got:?}, expected {expected:?}\n{}", vx.output_so_far());
    for (header, (path, n)) in got.iter().zip(expected) {
        let (names, tasks) = header
            .strip_prefix("── changed: ")
            .and_then(|h| h.rsplit_once(" → "))
            .unwrap_or_else(|| panic!("malformed header `{header}`"));
        assert_eq!(tasks, format!("{n} task(s)"), "`{header}`\n{}", vx.output_so_far());
        let named = names.split(", ").any(|p| p == *path) || names.contains(" more");
        assert!(named, "`{header}` must name {path}\n{}", vx.output_so_far());
    }
}

/// The summaries of the cycles so far, in order.
fn summaries(vx: &Running) -> Vec<Summary> {
    let out = vx.output_so_far();
    out.stdout
        .lines()
        .filter(|l| l.starts_with("Tasks: "))
        .map(|l| Summary::parse(l).unwrap_or_else(|| panic!("malformed summary `{l}`\n{out}")))
        .collect()
}

/// Waits until `n` cycles have settled (the first run included).
#[track_caller]
fn wait_settled(vx: &Running, n: usize) {
    let done = poll(|| settled_cycles(vx) >= n);
    assert!(done, "vx never settled {n} cycle(s)\n{}", vx.output_so_far());
}

/// How many cycles have settled so far.
fn settled_cycles(vx: &Running) -> usize {
    headers(vx).iter().filter(|h| h.ends_with(SETTLED)).count()
}

/// Stops vx with Ctrl-C and checks that it exits 130 leaving nothing.
#[track_caller]
fn stop(env: &TestEnv, vx: Running, pids: &[i32]) {
    let guard = guard_of(vx.pid());
    vx.signal_group(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    let mut all = pids.to_vec();
    all.push(guard);
    assert_nothing_left(env, &all, &out);
}

// ---------------------------------------------------------------------------
// What re-runs
// ---------------------------------------------------------------------------

#[test]
fn one_edit_reruns_the_affected_task_exactly_once() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    build_project(&env, "b", &[]);
    let vx = watch(&env, &["build"], &[]);
    assert_eq!(env.log_set(), ["a#build", "b#build"], "{}", vx.output_so_far());

    env.write("packages/a/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_changes(&vx, &[("packages/a/src/x.txt", 1)]);
    assert_eq!((count(&env, "a#build"), count(&env, "b#build")), (2, 1), "{}", vx.output_so_far());
    assert_eq!(env.read("packages/a/dist/x.txt"), "2\n", "the re-run saw the edit");

    // The re-run wrote its outputs; were that a trigger, a cycle for `a`
    // would come before this one (or this header would name dist/).
    env.write("packages/b/src/x.txt", "2\n");
    wait_settled(&vx, 3);
    assert_changes(&vx, &[("packages/a/src/x.txt", 1), ("packages/b/src/x.txt", 1)]);
    assert_eq!((count(&env, "a#build"), count(&env, "b#build")), (2, 2), "{}", vx.output_so_far());
    let s = summaries(&vx);
    assert_eq!((s.len(), s[1].run, s[1].cached, s[2].run, s[2].cached), (3, 1, 0, 1, 0), "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

#[test]
fn every_cycle_is_recorded_in_history_as_a_run_of_the_watch_command() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    build_project(&env, "b", &[]);
    let vx = watch(&env, &["build"], &[]);
    env.write("packages/a/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    stop(&env, vx, &[]);

    let out = env.vx(&["history", "--format", "json"]);
    out.assert_success();
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let rows = rows.as_array().unwrap_or_else(|| panic!("{out}"));
    // Newest first: the re-run of `a` alone, then the first cycle's two tasks.
    let seen: Vec<(&str, i64, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["command"].as_str().unwrap_or(""),
                r["tasks"].as_i64().unwrap_or(-1),
                r["exit_code"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    assert_eq!(seen, [("vx watch build", 1, 0), ("vx watch build", 2, 0)], "{out}");
}

#[test]
fn an_edit_in_a_dependency_reruns_its_dependents_and_not_the_other_way() {
    let env = TestEnv::new();
    build_project(&env, "lib", &[]);
    build_project(&env, "app", &["lib"]);
    build_project(&env, "other", &[]);
    let vx = watch(&env, &["build"], &[]);
    env.clear_log();

    env.write("packages/lib/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_eq!(env.log(), ["lib#build", "app#build"], "lib, then its dependent\n{}", vx.output_so_far());
    assert_changes(&vx, &[("packages/lib/src/x.txt", 2)]);

    env.clear_log();
    env.write("packages/app/src/x.txt", "2\n");
    wait_settled(&vx, 3);
    assert_eq!(env.log(), ["app#build"], "a dependent's edit re-runs only it\n{}", vx.output_so_far());
    assert_changes(&vx, &[("packages/lib/src/x.txt", 2), ("packages/app/src/x.txt", 1)]);
    stop(&env, vx, &[]);
}

#[test]
fn a_revert_is_a_cache_hit_not_an_execution() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    build_project(&env, "b", &[]);
    let vx = watch(&env, &["build"], &[]);
    assert_eq!(count(&env, "a#build"), 1);

    env.write("packages/a/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_eq!(count(&env, "a#build"), 2, "{}", vx.output_so_far());
    assert_eq!(env.read("packages/a/dist/x.txt"), "2\n");

    env.write("packages/a/src/x.txt", "1\n");
    wait_settled(&vx, 3);
    assert_eq!(count(&env, "a#build"), 2, "the revert must not execute the task\n{}", vx.output_so_far());
    let last = summaries(&vx).pop().expect("a summary");
    assert_eq!((last.run, last.succeeded, last.cached), (1, 1, 1), "{}", vx.output_so_far());
    assert_eq!(env.read("packages/a/dist/x.txt"), "1\n", "the hit restored the earlier output");

    // The restore wrote a's outputs; were that a trigger, a cycle for `a`
    // would come before b's.
    env.write("packages/b/src/x.txt", "2\n");
    wait_settled(&vx, 4);
    assert_changes(&vx, &[("packages/a/src/x.txt", 1), ("packages/a/src/x.txt", 1), ("packages/b/src/x.txt", 1)]);
    assert_eq!(count(&env, "a#build"), 2, "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

#[test]
fn outputs_git_ignored_files_and_vx_writes_never_start_a_cycle() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    build_project(&env, "b", &[]);
    env.write(".gitignore", "*.log\n");
    env.write("packages/a/.gitignore", "scratch/\n");
    env.git_init("main");
    env.git_commit_all("init");
    let vx = watch(&env, &["build"], &[]);
    assert_eq!(env.log_set(), ["a#build", "b#build"]);

    // Each of these lies in `a` and matches its inputs or outputs.
    env.write("packages/a/dist/extra.txt", "an output\n");
    env.write("packages/a/dist/x.txt", "tampered\n");
    env.write("packages/a/src/debug.log", "ignored by the root .gitignore\n");
    env.write("packages/a/src/scratch/y.txt", "ignored by the project's .gitignore\n");
    env.write(".vx/stray", "vx's own directory\n");
    env.write("packages/a/.git/info", "a .git anywhere\n");
    env.write("packages/a/src/more.log", "ignored\n");
    env.git(&["tag", "a-tag"]);
    env.write(".git/description", "edited\n");

    env.write("packages/b/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_changes(&vx, &[("packages/b/src/x.txt", 1)]);
    let header = &changes(&vx)[0];
    for ignored in ["extra.txt", "dist/x.txt", "debug.log", "scratch", ".vx", ".git", "more.log"] {
        assert!(!header.contains(ignored), "`{header}` names an ignored path ({ignored})");
    }
    assert_eq!((count(&env, "a#build"), count(&env, "b#build")), (1, 2), "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

#[test]
fn a_task_writing_its_own_outputs_never_loops() {
    let env = TestEnv::new();
    // Default inputs (every file of the project) and an output directory
    // beside the sources that each run removes and writes again with new
    // content, as many build tools do. Uncached, so a cycle its own writes
    // wrongly started would execute it again, and so on for ever.
    let stamping = task(
        "build",
        &format!(
            "{}; rm -rf gen; mkdir gen; date +%s%N > gen/stamp.txt; cat src/x.txt >> gen/stamp.txt",
            log("a#build")
        ),
        "outputs = [\"gen/**\"]\ncache = false",
    );
    project(&env, "a", &[], &[stamping]);
    env.write("packages/a/src/x.txt", "1\n");
    build_project(&env, "b", &[]);
    let vx = watch(&env, &["build"], &[]);

    env.write("packages/a/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    env.write("packages/b/src/x.txt", "2\n");
    wait_settled(&vx, 3);
    assert_changes(&vx, &[("packages/a/src/x.txt", 1), ("packages/b/src/x.txt", 1)]);
    assert_eq!(count(&env, "a#build"), 2, "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

#[test]
fn another_tasks_root_anchored_output_triggers_its_reader_once_and_never_loops() {
    let env = TestEnv::new();
    // `a` writes the workspace's `gen/a/` (a root-anchored output); `b`
    // reads all of `gen/`. a's write never triggers a itself, but it is
    // a change to b's inputs: b runs once more, and nothing loops.
    let stamping = task(
        "build",
        &format!("{}; mkdir -p ../../gen/a; date +%s%N > ../../gen/a/stamp.txt", log("a#build")),
        "outputs = [\"/gen/a/**\"]\ncache = false",
    );
    project(&env, "a", &[], &[stamping]);
    env.write("packages/a/src/x.txt", "1\n");
    let reading = task("build", &log("b#build"), "inputs = [\"src/**\", \"/gen/**\"]\ncache = false");
    project(&env, "b", &[], &[reading]);
    env.write("packages/b/src/x.txt", "1\n");
    let vx = watch(&env, &["build"], &[]);

    let counts = || (count(&env, "a#build"), count(&env, "b#build"));
    // Settled: the counts stay the same for 1.5 s.
    let settled = || {
        let mut last = counts();
        loop {
            std::thread::sleep(Duration::from_millis(1500));
            let now = counts();
            if now == last {
                return now;
            }
            last = now;
        }
    };
    env.write("packages/a/src/x.txt", "2\n");
    assert!(poll(|| count(&env, "a#build") == 2), "{}", vx.output_so_far());
    let (a, b) = settled();
    // b ran beside a in the first cycle (it does not depend on a), so the
    // stamps a wrote, then and now, are news to it: once or twice more,
    // then never again.
    assert_eq!(a, 2, "a's own output never triggers it\n{}", vx.output_so_far());
    assert!((2..=3).contains(&b), "b reads what a wrote, and nothing loops: {b}\n{}", vx.output_so_far());
    env.write("packages/b/src/x.txt", "2\n");
    assert!(poll(|| count(&env, "b#build") == b + 1), "{}", vx.output_so_far());
    assert_eq!(settled(), (2, b + 1), "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

/// A task whose outputs are sources (`lint:fix`, `outputs = ["src/**"]`)
/// silences edits of `src/` for itself only: `build` still re-runs.
#[test]
fn an_in_place_output_of_one_task_does_not_silence_edits_for_another() {
    let env = TestEnv::new();
    let mut tasks = vec![build("a")];
    tasks.push(task("lint-fix", &log("a#lint-fix"), "outputs = [\"src/**\"]\ncache = false"));
    project(&env, "a", &[], &tasks);
    env.write("packages/a/src/x.txt", "1\n");
    let vx = watch(&env, &["build"], &[]);
    env.write("packages/a/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_changes(&vx, &[("packages/a/src/x.txt", 1)]);
    assert_eq!(count(&env, "a#build"), 2, "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

/// pnpm links workspace packages into `node_modules` (and keeps its store
/// there): the watcher follows no link and watches no `node_modules`, so
/// an edit is seen at its own path and re-runs its package and its
/// dependents, however the links are laid out.
#[test]
fn links_in_node_modules_neither_hide_edits_nor_are_watched() {
    let env = TestEnv::new();
    build_project(&env, "lib", &[]);
    build_project(&env, "app", &["lib"]);
    for (link, target) in [
        ("node_modules/lib", "../packages/lib"),
        ("node_modules/.pnpm/node_modules/lib", "../../../packages/lib"),
        ("packages/app/node_modules/lib", "../../lib"),
    ] {
        let path = env.path(link);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, &path).expect("symlink");
    }
    env.write("node_modules/.pnpm/dep@1.0.0/node_modules/dep/index.js", "module.exports = 1\n");
    let vx = watch(&env, &["build"], &[]);
    env.write("packages/lib/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_changes(&vx, &[("packages/lib/src/x.txt", 2)]);
    assert_eq!((count(&env, "lib#build"), count(&env, "app#build")), (2, 2), "{}", vx.output_so_far());
    // A change inside node_modules (an install) is not a source edit.
    env.write("node_modules/.pnpm/dep@1.0.0/node_modules/dep/index.js", "module.exports = 2\n");
    env.write("packages/app/src/x.txt", "2\n");
    wait_settled(&vx, 3);
    assert_changes(&vx, &[("packages/lib/src/x.txt", 2), ("packages/app/src/x.txt", 1)]);
    stop(&env, vx, &[]);
}

/// A directory made while watching is watched: a file written into a new
/// `src/` subdirectory right after it was made re-runs the task.
#[test]
fn a_directory_made_while_watching_is_watched() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    let vx = watch(&env, &["build"], &[]);
    env.write("packages/a/src/new/deeper/y.txt", "new\n");
    wait_settled(&vx, 2);
    assert_eq!(count(&env, "a#build"), 2, "{}", vx.output_so_far());
    env.write("packages/a/src/new/deeper/y.txt", "edited\n");
    wait_settled(&vx, 3);
    assert_eq!(count(&env, "a#build"), 3, "an edit in it is seen too\n{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

/// A tree scaffolded in one go while vx watches (a generator, `git
/// checkout` of a branch with a new package): directories made faster than
/// their watches are added. Every leaf is watched: an edit in each, one at
/// a time, starts a cycle. The race itself is made to happen every time by
/// the unit test `watch::source::tests`; this is the real watcher under it.
#[test]
fn a_tree_scaffolded_at_once_is_watched_to_its_leaves() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    let vx = watch(&env, &["build"], &[]);
    let leaves: Vec<String> = (0..6)
        .map(|branch| {
            let deep: String = (0..8).map(|level| format!("/b{branch}l{level}")).collect();
            format!("packages/a/src/gen{deep}/leaf.txt")
        })
        .collect();
    for leaf in &leaves {
        env.write(leaf, "new\n");
    }
    wait_settled(&vx, 2);
    // The scaffold may take more than one cycle (the files under
    // directories found by a later listing come later): wait until no
    // cycle has started for a second, and count from there.
    let settled_so_far = || (settled_cycles(&vx), headers(&vx).last().is_some_and(|h| h.ends_with(SETTLED)));
    let mut settled = (0, false);
    for _ in 0..30 {
        if settled == settled_so_far() && settled.1 {
            break;
        }
        settled = settled_so_far();
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(settled.1, "the scaffold's cycles never ended\n{}", vx.output_so_far());
    let settled = settled.0;
    let before = count(&env, "a#build");
    for (i, leaf) in leaves.iter().enumerate() {
        env.write(leaf, "edited\n");
        wait_settled(&vx, settled + i + 1);
        assert_eq!(count(&env, "a#build"), before + i + 1, "an edit of {leaf} started no run\n{}", vx.output_so_far());
    }
    stop(&env, vx, &[]);
}

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------

#[test]
fn a_server_restarts_when_its_inputs_change_and_only_then() {
    let env = TestEnv::new();
    project(&env, "api", &[], &[server("api", 0)]);
    env.write("packages/api/src/x.txt", "1\n");
    build_project(&env, "other", &[]);
    let vx = watch(&env, &["dev", "build"], &[]);
    assert!(headers(&vx).iter().any(|h| h.starts_with("── servers running: api#dev;")), "{}", vx.output_so_far());
    let first = read_pids(&env, "packages/api/server.pid", 1)[0];

    // Another project's edit: the server keeps running.
    env.write("packages/other/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_eq!(count(&env, "other#build"), 2, "{}", vx.output_so_far());
    assert_alive(&[first], "the server, after an edit elsewhere");
    assert_eq!(read_pids(&env, "packages/api/server.pid", 1), [first], "{}", vx.output_so_far());

    // A save that leaves the content as it was: the key is the same.
    env.write("packages/api/src/x.txt", "1\n");
    wait_settled(&vx, 3);
    assert_alive(&[first], "the server, after a save that changed nothing");
    assert_eq!(count(&env, "api ready"), 1, "{}", vx.output_so_far());

    // Its own input changes: stopped, started again.
    env.write("packages/api/src/x.txt", "2\n");
    wait_settled(&vx, 4);
    let mut second = first;
    poll(|| {
        second = read_pids(&env, "packages/api/server.pid", 1)[0];
        second != first
    });
    assert_ne!(second, first, "the server was not restarted\n{}", vx.output_so_far());
    assert!(!alive(first), "the old server still runs\n{}", vx.output_so_far());
    assert_alive(&[second], "the restarted server");
    assert!(vx.output_so_far().stdout.contains("inputs changed; restarting"), "{}", vx.output_so_far());
    stop(&env, vx, &[first, second]);
}

#[test]
fn dependents_of_a_restarted_server_wait_for_readiness_again() {
    let env = TestEnv::new();
    project(&env, "api", &[], &[server("api", 500)]);
    env.write("packages/api/src/x.txt", "1\n");
    let check = format!("{} && {}", running("../api/server.pid"), log("e2e#test"));
    let mut test = task("test", &check, "");
    test.push_str("depends-on = [\"api#dev\"]\n");
    project(&env, "e2e", &[], &[test]);
    let vx = watch(&env, &["e2e#test"], &[]);
    assert_eq!(env.log(), ["api ready", "e2e#test"], "{}", vx.output_so_far());
    let first = read_pids(&env, "packages/api/server.pid", 1)[0];

    env.write("packages/api/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_eq!(
        env.log(),
        ["api ready", "e2e#test", "api ready", "e2e#test"],
        "the dependent starts after the new server is ready\n{}",
        vx.output_so_far()
    );
    assert_changes(&vx, &[("packages/api/src/x.txt", 2)]);
    let second = read_pids(&env, "packages/api/server.pid", 1)[0];
    assert_ne!(second, first, "{}", vx.output_so_far());
    assert_eq!(summaries(&vx).last().map(|s| s.failed), Some(0), "{}", vx.output_so_far());
    stop(&env, vx, &[first, second]);
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

#[test]
fn a_broken_config_prints_its_error_and_the_fix_reloads_and_runs() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    let vx = watch(&env, &["build"], &[]);

    env.write("packages/a/vx.toml", "[project\nname = \"a\"\n");
    let waiting = poll(|| vx.output_so_far().stdout.contains("── waiting for a change to the configuration"));
    assert!(waiting, "a broken config must make vx wait\n{}", vx.output_so_far());
    let out = vx.output_so_far();
    assert!(out.stderr.lines().any(|l| l.starts_with("vx: error: ")), "the error is printed\n{out}");
    assert!(out.stderr.contains("packages/a/vx.toml"), "the error names the file\n{out}");
    assert!(vx_running(&vx), "{out}");

    let fixed = task("build", &log("a#build-fixed"), "");
    env.write("packages/a/vx.toml", &project_text("a", &[], &[fixed]));
    wait_settled(&vx, 2);
    assert_eq!(env.log(), ["a#build", "a#build-fixed"], "{}", vx.output_so_far());
    let h = headers(&vx);
    let reload = h.iter().position(|l| l == "── configuration changed; reloading the workspace");
    let wait = h.iter().position(|l| l == "── waiting for a change to the configuration");
    let rerun = h.iter().rposition(|l| l == "── running 1 task(s)");
    assert!(reload < wait && wait < rerun && reload.is_some(), "{h:?}");
    stop(&env, vx, &[]);
}

#[test]
fn a_misspelt_task_exits_2_and_an_unknown_filter_project_0_like_vx_run() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    let run = env.vx(&["run", "biuld"]);
    run.assert_code(2);
    let out = env.vx_command(&["watch", "biuld"]).env("VX_KILL_GRACE_MS", GRACE_MS).spawn().finish();
    out.assert_code(2);
    assert_eq!(out.error_line(), run.error_line(), "the same one-line error as vx run\n{out}");
    assert!(!out.stdout.contains("waiting for a change"), "vx watch must not wait\n{out}");
    // A filter that selects nothing is an empty run (exit 0, as in
    // Turborepo) with a warning; watch says the same and keeps watching,
    // since a package added later may match it.
    let run = env.vx(&["run", "build", "--filter", "nope"]);
    run.assert_success();
    assert!(run.stderr.contains("--filter `nope` matches no project"), "{run}");
    let vx = watch(&env, &["build", "--filter", "nope"], &[]);
    assert!(vx.output_so_far().stderr.contains("--filter `nope` matches no project"), "{}", vx.output_so_far());
    // Nothing was spawned, so there is no guard to check: Ctrl-C ends it.
    vx.signal_group(Signal::SIGINT);
    vx.finish().assert_code(130);
    assert!(env.log().is_empty(), "nothing ran");
}

/// Whether vx is still running (without `&mut`).
fn vx_running(vx: &Running) -> bool {
    alive(vx.pid())
}

#[test]
fn a_new_project_is_picked_up_and_watched() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    let vx = watch(&env, &["build"], &[]);
    env.clear_log();

    // Written as a scaffolding tool would: directory, sources, config.
    build_project(&env, "b", &[]);
    wait_settled(&vx, 2);
    assert!(env.log().contains(&"b#build".to_string()), "{}", vx.output_so_far());
    assert!(headers(&vx).contains(&"── running 2 task(s)".to_string()), "{}", vx.output_so_far());

    env.clear_log();
    env.write("packages/b/src/x.txt", "2\n");
    wait_settled(&vx, 3);
    assert_eq!(env.log(), ["b#build"], "the new project's files are watched\n{}", vx.output_so_far());
    assert_changes(&vx, &[("packages/b/src/x.txt", 1)]);
    stop(&env, vx, &[]);
}

#[test]
fn a_removed_projects_server_is_stopped() {
    let env = TestEnv::new();
    project(&env, "api", &[], &[server("api", 0)]);
    env.write("packages/api/src/x.txt", "1\n");
    project(&env, "web", &[], &[server("web", 0)]);
    env.write("packages/web/src/x.txt", "1\n");
    let vx = watch(&env, &["dev"], &[]);
    let api = read_pids(&env, "packages/api/server.pid", 1)[0];
    assert!(
        headers(&vx).iter().any(|h| h == "── servers running: api#dev, web#dev; watching for changes"),
        "{}",
        vx.output_so_far()
    );

    std::fs::remove_dir_all(env.path("packages/api")).expect("remove the project");
    wait_settled(&vx, 2);
    assert_nothing_left_of(&[api], &vx);
    assert_eq!(
        headers(&vx).last().map(String::as_str),
        Some("── servers running: web#dev; watching for changes"),
        "{}",
        vx.output_so_far()
    );
    let web = read_pids(&env, "packages/web/server.pid", 1)[0];
    assert_alive(&[web], "the remaining project's server");
    stop(&env, vx, &[api, web]);
}

/// Waits until every one of `pids` is dead.
#[track_caller]
fn assert_nothing_left_of(pids: &[i32], vx: &Running) {
    let gone = poll(|| pids.iter().all(|&p| !alive(p)));
    assert!(
        gone,
        "still running: {:?}\n{}",
        pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>(),
        vx.output_so_far()
    );
}

// ---------------------------------------------------------------------------
// Polling
// ---------------------------------------------------------------------------

/// Sets the modification time of a workspace file.
fn set_mtime(env: &TestEnv, rel: &str, at: SystemTime) {
    let file = std::fs::File::options().write(true).open(env.path(rel)).expect("open the file");
    file.set_modified(at).expect("set the modification time");
}

#[test]
fn poll_mode_reruns_an_edit_once() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    build_project(&env, "b", &[]);
    // Sources from a while ago, so each edit below is in a later second.
    let earlier = SystemTime::now() - Duration::from_secs(60);
    set_mtime(&env, "packages/a/src/x.txt", earlier);
    set_mtime(&env, "packages/b/src/x.txt", earlier);
    let vx = watch(&env, &["build"], &[("VX_WATCH_POLL", "100")]);
    assert!(vx.output_so_far().stderr.contains("(polling every 100 ms)"), "{}", vx.output_so_far());

    env.write("packages/a/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    env.write("packages/b/src/x.txt", "2\n");
    wait_settled(&vx, 3);
    assert_changes(&vx, &[("packages/a/src/x.txt", 1), ("packages/b/src/x.txt", 1)]);
    assert_eq!((count(&env, "a#build"), count(&env, "b#build")), (2, 2), "{}", vx.output_so_far());
    stop(&env, vx, &[]);
}

#[test]
fn poll_mode_sees_an_edit_within_the_same_second_as_the_last() {
    let env = TestEnv::new();
    build_project(&env, "a", &[]);
    // Two saves in one second (an editor's save, then a formatter's): the
    // times are pinned to one whole second so the test does not depend on
    // when it runs. The second save is later, by half a second.
    let second = SystemTime::UNIX_EPOCH
        + Duration::from_secs(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).expect("after 1970").as_secs());
    set_mtime(&env, "packages/a/src/x.txt", second);
    let vx = watch(&env, &["build"], &[("VX_WATCH_POLL", "100")]);

    // Saved as an editor does: written beside, then renamed over.
    let beside = env.path("../x.txt.new");
    std::fs::write(&beside, "2\n").expect("write the new content");
    let file = std::fs::File::options().write(true).open(&beside).expect("open the new content");
    file.set_modified(second + Duration::from_millis(500)).expect("set the modification time");
    std::fs::rename(&beside, env.path("packages/a/src/x.txt")).expect("rename over the source");
    let seen = poll(|| count(&env, "a#build") == 2);
    let out = vx.output_so_far();
    assert!(seen, "the edit of a was never seen\n{out}");
    assert_changes(&vx, &[("packages/a/src/x.txt", 1)]);
    stop(&env, vx, &[]);
}

// ---------------------------------------------------------------------------
// Signals
// ---------------------------------------------------------------------------

/// A workspace with a server and a build; `vx watch dev build` settled.
fn server_and_build(env: &TestEnv, vx_start: impl FnOnce(&TestEnv) -> Running) -> (Running, i32) {
    project(env, "api", &[], &[server("api", 0)]);
    env.write("packages/api/src/x.txt", "1\n");
    build_project(env, "other", &[]);
    let vx = vx_start(env);
    wait_settled(&vx, 1);
    let pid = read_pids(env, "packages/api/server.pid", 1)[0];
    (vx, pid)
}

#[test]
fn ctrl_c_exits_130_and_leaves_nothing() {
    let env = TestEnv::new();
    let (vx, server) = server_and_build(&env, |env| watch(env, &["dev", "build"], &[]));
    let guard = guard_of(vx.pid());
    vx.signal_group(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    assert_nothing_left(&env, &[server, guard], &out);
}

#[test]
fn sigterm_exits_143_and_leaves_nothing() {
    let env = TestEnv::new();
    let (vx, server) = server_and_build(&env, |env| watch(env, &["dev", "build"], &[]));
    let guard = guard_of(vx.pid());
    vx.signal(Signal::SIGTERM);
    let out = vx.finish();
    out.assert_code(143);
    assert_nothing_left(&env, &[server, guard], &out);
}

#[test]
fn sighup_is_ignored_when_started_under_nohup() {
    let env = TestEnv::new();
    let (vx, server) = server_and_build(&env, |env| {
        env.vx_command(&["watch", "dev", "build"]).env("VX_KILL_GRACE_MS", GRACE_MS).ignore_sighup().own_group().spawn()
    });
    vx.signal(Signal::SIGHUP);
    // Still watching: a real edit after the SIGHUP is handled.
    env.write("packages/other/src/x.txt", "2\n");
    wait_settled(&vx, 2);
    assert_eq!(count(&env, "other#build"), 2, "{}", vx.output_so_far());
    assert!(vx_running(&vx), "{}", vx.output_so_far());
    assert_alive(&[server], "the server, after SIGHUP under nohup");
    stop(&env, vx, &[server]);
}
