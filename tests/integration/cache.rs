//! The cache, proved with real files and processes: a hit and a miss for
//! every component of a key, precise invalidation across a chain and a
//! diamond, outputs restored (modes kept, stale files removed), log replay
//! per `--output-logs`, corrupt and hostile entries refused, `kill -9`
//! during writes, two vx processes on one store, retention, `--force` and
//! `--cache`, history, `vx last`, `vx why` and `--dry=json` keys.
//!
//! Which tasks ran is read from the test log each task appends to; what
//! the store holds is read straight from `entries/KK/KEY`, each file parsed
//! and verified here (magic, header, lengths, BLAKE3 of the body).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::common::fixtures::{task, toml_str};
use crate::common::log_cmd as log;
use crate::common::process::assert_nothing_left;
use crate::common::store::{MAGIC, assert_store_verifies, encode_entry, entry_files, entry_path, parse_entry, store};
use crate::common::{Checked, Output, TestEnv};

/// Writes `packages/NAME/vx.toml`: `[project]` with `deps`, then `tasks`.
fn project(env: &TestEnv, name: &str, deps: &[&str], tasks: &[String]) {
    let deps: Vec<String> = deps.iter().map(|d| toml_str(d)).collect();
    let mut text = format!("[project]\nname = \"{name}\"\ndepends-on = [{}]\n", deps.join(", "));
    for t in tasks {
        text.push_str(t);
    }
    env.write(&format!("packages/{name}/vx.toml"), &text);
}

/// The root `vx.toml`: `packages/*` plus extra root lines.
fn root(env: &TestEnv, extra: &str) {
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{extra}"));
}

/// The one-project workspace most tests use: `app#build` with the given
/// command and extra task lines, logging `app` each time it really runs.
fn app(env: &TestEnv, command: &str, extra: &str) {
    root(env, "");
    project(env, "app", &[], &[task("build", &format!("{} && {command}", log("app")), extra)]);
}

/// Runs vx and panics unless it exits 0.
#[track_caller]
fn ok(env: &TestEnv, args: &[&str]) -> Checked {
    env.vx(args).checked_success()
}

/// Runs `vx ARGS` with one extra variable; panics unless it exits 0.
#[track_caller]
fn ok_with(env: &TestEnv, var: (&str, &str), args: &[&str]) -> Checked {
    env.vx_command(args).env(var.0, var.1).output().checked_success()
}

/// Which tasks ran since the last call (sorted), and clears the log.
fn ran(env: &TestEnv) -> Vec<String> {
    let set = env.log_set();
    env.clear_log();
    set
}

/// Asserts the run was a full hit of `n` tasks that ran nothing.
#[track_caller]
fn assert_all_hits(env: &TestEnv, out: &Output, n: usize) {
    let s = out.summary();
    assert_eq!((s.cached, s.succeeded, s.failed), (n, n, 0), "expected {n} cache hits\n{out}");
    assert_eq!(ran(env), Vec::<String>::new(), "a hit must not run the task\n{out}");
}

/// Asserts exactly the tasks logging `words` ran, and none was a hit.
#[track_caller]
fn assert_ran(env: &TestEnv, out: &Output, words: &[&str]) {
    let mut want: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
    want.sort();
    assert_eq!(ran(env), want, "which tasks ran\n{out}");
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_string()).collect()
}

/// `vx run ARGS --dry=json`, parsed.
#[track_caller]
fn dry(env: &TestEnv, args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--dry=json");
    let out = ok(env, &all);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("--dry=json is not JSON: {e}\n{out}"))
}

/// The planned entry of task `id` in a `--dry=json` document.
#[track_caller]
fn planned<'a>(plan: &'a Value, id: &str) -> &'a Value {
    plan["tasks"]
        .as_array()
        .expect("tasks is an array")
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not in the plan {plan:#}"))
}

/// The key `--dry=json` gives task `id` (planned with `vx run id`).
#[track_caller]
fn key_of(env: &TestEnv, id: &str) -> String {
    let plan = dry(env, &[id]);
    planned(&plan, id)["key"].as_str().unwrap_or_else(|| panic!("{id} has no key in {plan:#}")).to_string()
}

/// The member paths of an outputs archive (tar + zstd).
fn archive_members(archive: &[u8]) -> Vec<String> {
    let decoder = zstd::Decoder::new(archive).expect("zstd archive");
    let mut tar = tar::Archive::new(decoder);
    tar.entries()
        .expect("tar entries")
        .map(|e| e.expect("tar entry").path_bytes().into_owned())
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect()
}

/// A tar member written byte for byte, bypassing the checks the `tar`
/// crate makes on paths: a hostile archive.
fn raw_member(builder: &mut tar::Builder<Vec<u8>>, path: &str, link: Option<&str>, data: &[u8]) {
    let mut h = tar::Header::new_old();
    h.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
    match link {
        Some(target) => {
            h.as_old_mut().linkname[..target.len()].copy_from_slice(target.as_bytes());
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_size(0);
        }
        None => {
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(data.len() as u64);
        }
    }
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_cksum();
    builder.append(&h, if link.is_some() { &[][..] } else { data }).expect("append a raw member");
}

/// Members `(path, link target or None, data)` as tar + zstd.
fn hostile_archive(members: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, link, data) in members {
        raw_member(&mut builder, path, *link, data);
    }
    let tar = builder.into_inner().expect("finish the tar");
    zstd::encode_all(&tar[..], 3).expect("compress")
}

/// Every file and link under `dir` with its bytes (a link's target),
/// relative, skipping paths that start with any of `skip`.
fn contents(dir: &Path, skip: &[&str]) -> std::collections::BTreeMap<String, Vec<u8>> {
    tree(dir)
        .into_iter()
        .filter(|p| !skip.iter().any(|s| p.starts_with(s)))
        .filter_map(|p| {
            let path = dir.join(&p);
            let meta = std::fs::symlink_metadata(&path).ok()?;
            let bytes = if meta.file_type().is_symlink() {
                std::fs::read_link(&path).ok()?.into_os_string().into_encoded_bytes()
            } else if meta.is_file() {
                std::fs::read(&path).ok()?
            } else {
                return None;
            };
            Some((p, bytes))
        })
        .collect()
}

/// Every path under `dir`, relative, sorted (symbolic links not followed).
fn tree(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.insert(p.strip_prefix(dir).expect("under dir").to_string_lossy().into_owned());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            }
        }
    }
    out
}

// ---------------------------------------------------------------------
// Key components: a hit when nothing changed, a miss when one did.
// ---------------------------------------------------------------------

#[test]
fn command_change_misses_and_revert_hits() {
    let env = TestEnv::new();
    app(&env, "echo one", "inputs = [\"src/**\"]");
    env.write("packages/app/src/a.txt", "a");
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["app"]);
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    app(&env, "echo two", "inputs = [\"src/**\"]");
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "{out}");
    app(&env, "echo one", "inputs = [\"src/**\"]");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
}

#[test]
fn env_value_is_keyed_but_never_written_nor_printed() {
    let env = TestEnv::new();
    let (name, first, second) = ("DEPLOY_TOKEN", "s3cr3t-first-7f41d2", "s3cr3t-second-99c0ab");
    app(&env, "echo built", &format!("inputs = [\"src/**\"]\nenv = [\"{name}\"]\noutputs = [\"dist/**\"]"));
    env.write("packages/app/src/a.txt", "a");
    let mut outputs = Vec::new();
    let run = |value: &str| env.vx_command(&["run", "build"]).env(name, value).output();

    let out = run(first);
    out.assert_success();
    assert_ran(&env, &out, &["app"]);
    outputs.push(out);
    let out = run(first);
    out.assert_success();
    assert_all_hits(&env, &out, 1);
    outputs.push(out);
    let out = run(second);
    out.assert_success();
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "{out}");
    outputs.push(out);
    let out = run(first);
    out.assert_success();
    assert_all_hits(&env, &out, 1);
    outputs.push(out);
    // Unset is a value of its own.
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["app"]);
    outputs.push(out.into_output());

    let plan_out = env.vx_command(&["run", "build", "--dry=json"]).env(name, second).output();
    plan_out.assert_success();
    let plan: Value = serde_json::from_str(&plan_out.stdout).expect("dry json");
    let names = &planned(&plan, "app#build")["key_components"]["env"];
    assert!(names.as_array().is_some_and(|a| a.iter().any(|n| n == name)), "the env name is shown: {plan:#}");
    outputs.push(plan_out);
    outputs.push(env.vx_command(&["why", "app#build", "--format", "json"]).env(name, second).output());
    outputs.push(env.vx_command(&["why", "app#build"]).env(name, second).output());
    outputs.push(ok(&env, &["history", "--format", "json"]).into_output());
    outputs.push(ok(&env, &["last"]).into_output());
    outputs.push(ok(&env, &["cache", "stats", "--format", "json"]).into_output());

    for out in &outputs {
        for value in [first, second] {
            assert!(!out.stdout.contains(value) && !out.stderr.contains(value), "the value leaked\n{out}");
        }
    }
    let state = env.path(".vx");
    let files: Vec<PathBuf> = tree(&state).into_iter().map(|rel| state.join(rel)).filter(|p| p.is_file()).collect();
    assert!(files.iter().any(|p| p.starts_with(state.join("cache/entries"))), "entries were written");
    for path in files {
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        for value in [first, second] {
            let found = bytes.windows(value.len()).any(|w| w == value.as_bytes());
            assert!(!found, "the value of {name} is written in {}", path.display());
        }
    }
}

#[test]
fn each_input_file_content_is_keyed() {
    let env = TestEnv::new();
    app(&env, "true", "inputs = [\"src/**\", \"config.json\"]");
    for (rel, text) in [("src/a.txt", "a"), ("src/deep/b.txt", "b"), ("config.json", "{}")] {
        env.write(&format!("packages/app/{rel}"), text);
    }
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app"]);
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    for (rel, original) in [("src/a.txt", "a"), ("src/deep/b.txt", "b"), ("config.json", "{}")] {
        let path = format!("packages/app/{rel}");
        env.write(&path, &format!("{original} changed"));
        let out = ok(&env, &["run", "build"]);
        assert_ran(&env, &out, &["app"]);
        assert_eq!(out.summary().cached, 0, "changing {rel} must miss\n{out}");
        env.write(&path, original);
        assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    }
}

#[test]
fn adding_or_removing_an_input_file_misses() {
    let env = TestEnv::new();
    app(&env, "true", "inputs = [\"src/**\"]");
    env.write("packages/app/src/a.txt", "a");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app"]);
    env.write("packages/app/src/new.txt", "");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app"]);
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    env.remove("packages/app/src/new.txt");
    // Back to the first set of files: the first entry is a hit.
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    env.remove("packages/app/src/a.txt");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app"]);
}

#[test]
fn files_excluded_by_negation_or_gitignore_do_not_change_the_key() {
    let env = TestEnv::new();
    root(&env, "");
    project(
        &env,
        "app",
        &[],
        &[
            task("narrow", &log("narrow"), "inputs = [\"src/**\", \"!src/**/*.tmp\"]"),
            task("wide", &log("wide"), "outputs = [\"dist/**\"]"),
        ],
    );
    env.write("packages/app/.gitignore", "ignored.txt\nscratch/\n");
    env.write("packages/app/src/a.txt", "a");
    env.write("packages/app/src/x.tmp", "1");
    env.write("packages/app/ignored.txt", "1");
    env.write("packages/app/scratch/s.txt", "1");
    env.write("packages/app/dist/out.txt", "1");
    assert_ran(&env, &ok(&env, &["run", "narrow", "wide"]), &["narrow", "wide"]);
    let before = (key_of(&env, "app#narrow"), key_of(&env, "app#wide"));

    // Ignored by .gitignore (and outputs): neither key moves.
    env.write("packages/app/ignored.txt", "2");
    env.write("packages/app/scratch/s.txt", "2");
    env.write("packages/app/scratch/new.txt", "new");
    env.write("packages/app/dist/out.txt", "2");
    assert_eq!((key_of(&env, "app#narrow"), key_of(&env, "app#wide")), before);
    assert_all_hits(&env, &ok(&env, &["run", "narrow", "wide"]), 2);

    // Excluded by `!`: the narrow key does not move; the wide task (every
    // file of the project) does see them.
    env.write("packages/app/src/x.tmp", "2");
    env.write("packages/app/src/y.tmp", "new");
    assert_eq!(key_of(&env, "app#narrow"), before.0);
    assert_ne!(key_of(&env, "app#wide"), before.1);
    let out = ok(&env, &["run", "narrow", "wide"]);
    assert_ran(&env, &out, &["wide"]);
    assert_eq!(out.summary().cached, 1, "{out}");

    // The same kind of change to a file that is an input does miss.
    env.write("packages/app/src/a.txt", "b");
    assert_ran(&env, &ok(&env, &["run", "narrow", "wide"]), &["narrow", "wide"]);
    env.write("packages/app/notes.md", "only the wide task sees this");
    assert_ran(&env, &ok(&env, &["run", "narrow", "wide"]), &["wide"]);
}

#[test]
fn global_inputs_are_keyed_for_every_task() {
    let env = TestEnv::new();
    root(&env, "global-inputs = [\"lock.txt\"]\n");
    env.write("lock.txt", "v1");
    for name in ["a", "b"] {
        project(&env, name, &[], &[task("build", &log(name), "inputs = [\"src/**\"]")]);
        env.write(&format!("packages/{name}/src/f.txt"), name);
    }
    assert_ran(&env, &ok(&env, &["run", "build"]), &["a", "b"]);
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 2);
    env.write("lock.txt", "v2");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["a", "b"]);
    env.write("lock.txt", "v1");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 2);
    // A file at the root that is not a global input changes nothing.
    env.write("README.md", "hello");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 2);
}

#[test]
fn a_dependency_key_is_part_of_the_dependent_key() {
    let env = TestEnv::new();
    root(&env, "");
    project(&env, "lib", &[], &[task("build", &log("lib"), "inputs = [\"src/**\"]")]);
    project(&env, "app", &["lib"], &[task("build", &log("app"), "inputs = [\"src/**\"]\ndepends-on = [\"^build\"]")]);
    env.write("packages/lib/src/l.txt", "1");
    env.write("packages/app/src/a.txt", "1");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app", "lib"]);
    let plan = dry(&env, &["app#build"]);
    let deps = &planned(&plan, "app#build")["key_components"]["dependencies"];
    assert_eq!(deps[0]["id"], "lib#build", "{plan:#}");
    assert_eq!(deps[0]["key"], planned(&plan, "lib#build")["key"], "{plan:#}");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 2);
    // Nothing of app changed, but its dependency's key did.
    env.write("packages/lib/src/l.txt", "2");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app", "lib"]);
    env.write("packages/lib/src/l.txt", "1");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 2);
}

#[test]
fn executor_name_is_keyed() {
    let env = TestEnv::new();
    app(&env, "true", "inputs = [\"src/**\"]");
    env.write("packages/app/src/a.txt", "a");
    let default = key_of(&env, "app#build");
    ok(&env, &["run", "build"]);
    // `local` written out is the default: the same key, a hit.
    app(&env, "true", "inputs = [\"src/**\"]\nexecutor = \"local\"");
    assert_eq!(key_of(&env, "app#build"), default);
    env.clear_log();
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    // An executor that is no plugin of the workspace is refused when the
    // config loads, so no plan is made with a key that no run would have
    // (a plugin's own key is tested in executors.rs).
    app(&env, "true", "inputs = [\"src/**\"]\nexecutor = \"remote-box\"");
    let out = env.vx(&["run", "app#build", "--dry=json"]);
    out.assert_code(2);
    assert!(out.stderr.contains("unknown executor `remote-box`; did you mean `remote`?"), "{out}");
}

// ---------------------------------------------------------------------
// Precise invalidation.
// ---------------------------------------------------------------------

/// `base` ← `left`, `right` ← `top` (a diamond), `tail` depends on `top`
/// (a chain base → left → top → tail), and `solo` stands alone.
fn diamond(env: &TestEnv) {
    root(env, "");
    let build = |name: &str| task("build", &log(name), "inputs = [\"src/**\"]\ndepends-on = [\"^build\"]");
    for (name, deps) in [
        ("base", &[][..]),
        ("left", &["base"][..]),
        ("right", &["base"][..]),
        ("top", &["left", "right"][..]),
        ("tail", &["top"][..]),
        ("solo", &[][..]),
    ] {
        project(env, name, deps, &[build(name)]);
        env.write(&format!("packages/{name}/src/main.txt"), name);
    }
}

#[test]
fn a_changed_leaf_file_runs_exactly_one_task() {
    let env = TestEnv::new();
    diamond(&env);
    assert_ran(&env, &ok(&env, &["run", "build"]), &["base", "left", "right", "solo", "tail", "top"]);
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 6);
    env.write("packages/tail/src/main.txt", "changed");
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["tail"]);
    assert_eq!(out.summary().cached, 5, "{out}");
    env.write("packages/solo/src/other.txt", "new");
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["solo"]);
    assert_eq!(out.summary().cached, 5, "{out}");
}

#[test]
fn a_changed_root_file_runs_it_and_exactly_its_dependents() {
    let env = TestEnv::new();
    diamond(&env);
    ok(&env, &["run", "build"]);
    env.clear_log();
    env.write("packages/base/src/main.txt", "changed");
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["base", "left", "right", "tail", "top"]);
    assert_eq!(out.summary().cached, 1, "only solo is a hit\n{out}");
    // One side of the diamond: it, the top and the tail.
    env.write("packages/left/src/main.txt", "changed");
    let out = ok(&env, &["run", "build"]);
    assert_ran(&env, &out, &["left", "tail", "top"]);
    assert_eq!(out.summary().cached, 3, "{out}");
    // Each task ran once per change, never twice.
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 6);
}

/// Ten independent projects `w0`…`w9` whose `build` prints `out-wN` and
/// is cached, `m` whose `build` holds a mutex, and `app#ci`, a group on
/// every `build`: one wave of ready tasks, most of them begun in batches.
fn wide(env: &TestEnv) -> Vec<String> {
    root(env, "");
    let mut names: Vec<String> = (0..10).map(|i| format!("w{i}")).collect();
    for name in &names {
        let command = format!("{} && echo out-{name}", log(name));
        project(env, name, &[], &[task("build", &command, "inputs = [\"src/**\"]")]);
        env.write(&format!("packages/{name}/src/main.txt"), name);
    }
    let command = format!("{} && echo out-m", log("m"));
    project(env, "m", &[], &[task("build", &command, "inputs = [\"src/**\"]\nmutex = \"db\"")]);
    env.write("packages/m/src/main.txt", "m");
    names.push("m".into());
    let all: Vec<String> = names.iter().map(|n| format!("{n}#build")).collect();
    let deps: Vec<&str> = all.iter().map(String::as_str).collect();
    project(
        env,
        "app",
        &[],
        &[format!(
            "\n[tasks.ci]\ndepends-on = [{}]\n",
            deps.iter().map(|d| toml_str(d)).collect::<Vec<_>>().join(", ")
        )],
    );
    names
}

#[test]
fn one_wave_of_hits_and_misses_settles_each_task_once() {
    let env = TestEnv::new();
    let names = wide(&env);
    let every: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_ran(&env, &ok(&env, &["run", "app#ci"]), &every);
    for concurrency in ["1", "2", "8"] {
        let out = ok(&env, &["run", "app#ci", "--concurrency", concurrency, "--profile=trace.json"]);
        assert_all_hits(&env, &out, 11);
        for name in &names {
            let line = format!("out-{name}");
            assert_eq!(out.stdout.matches(&line).count(), 1, "{name}'s log is replayed once\n{out}");
        }
        // Every hit was timed as one begun alone would be: keyed, looked up, restored.
        let trace: Value = serde_json::from_str(&env.read("trace.json")).expect("the trace is JSON");
        let steps = |name: &str| {
            trace["traceEvents"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| e["cat"] == "step" && e["name"] == name)
                .count()
        };
        assert_eq!((steps("hash"), steps("cache lookup"), steps("restore")), (11, 11, 11), "{out}");
    }
    // Three misses among hits in the same wave: exactly they run, each once.
    for name in ["w2", "w5", "m"] {
        env.write(&format!("packages/{name}/src/main.txt"), "changed");
    }
    let out = ok(&env, &["run", "app#ci", "--concurrency", "2"]);
    assert_ran(&env, &out, &["m", "w2", "w5"]);
    assert_eq!(out.summary().cached, 8, "{out}");
    for name in &names {
        assert_eq!(out.stdout.matches(&format!("out-{name}")).count(), 1, "{name} printed once\n{out}");
    }
    assert_all_hits(&env, &ok(&env, &["run", "app#ci"]), 11);
}

// ---------------------------------------------------------------------
// Outputs and logs.
// ---------------------------------------------------------------------

const MAKE_DIST: &str = "mkdir -p dist/bin && cp src/a.txt dist/out.txt && printf '#!/bin/sh\\necho tool\\n' > dist/bin/tool && chmod 755 dist/bin/tool && chmod 600 dist/out.txt";

#[test]
fn outputs_are_restored_with_their_modes_after_deletion() {
    let env = TestEnv::new();
    app(&env, MAKE_DIST, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]");
    env.write("packages/app/src/a.txt", "payload");
    assert_ran(&env, &ok(&env, &["run", "build"]), &["app"]);
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    assert_eq!(env.read("packages/app/dist/out.txt"), "payload");
    let mode = |rel: &str| std::fs::metadata(env.path(rel)).expect("restored").permissions().mode() & 0o777;
    assert_eq!(mode("packages/app/dist/bin/tool"), 0o755, "an executable output stays executable");
    assert_eq!(mode("packages/app/dist/out.txt"), 0o600);
    #[expect(clippy::disallowed_methods, reason = "the test runs the restored executable itself")]
    let tool = std::process::Command::new(env.path("packages/app/dist/bin/tool")).output().expect("run the tool");
    assert_eq!(String::from_utf8_lossy(&tool.stdout), "tool\n");
    // Only the mode changed on disk: a hit puts it back.
    std::fs::set_permissions(env.path("packages/app/dist/bin/tool"), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    assert_eq!(mode("packages/app/dist/bin/tool"), 0o755, "the mode is restored");
}

#[test]
fn output_symlinks_inside_the_outputs_are_restored() {
    let env = TestEnv::new();
    app(
        &env,
        "mkdir -p dist/v1 && cp src/a.txt dist/out.txt && cp src/a.txt dist/v1/b.txt && ln -sfn out.txt dist/latest && ln -sfn v1 dist/current",
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    );
    env.write("packages/app/src/a.txt", "payload");
    ok(&env, &["run", "build"]);
    env.clear_log();
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    let link = |rel: &str| std::fs::read_link(env.path(rel)).expect("a link").to_string_lossy().into_owned();
    assert_eq!(link("packages/app/dist/latest"), "out.txt");
    assert_eq!(link("packages/app/dist/current"), "v1", "a link to a directory of outputs");
    assert_eq!(env.read("packages/app/dist/latest"), "payload");
    assert_eq!(env.read("packages/app/dist/current/b.txt"), "payload");
}

#[test]
fn an_output_symlink_pointing_outside_the_outputs_is_not_cached() {
    // `dist/source` → `../src/a.txt` stays in the project but leaves the
    // outputs: restored, it would let later writes through it reach a
    // source, so the entry is not stored (issue 36) and a line says why.
    let env = TestEnv::new();
    app(
        &env,
        "mkdir -p dist && cp src/a.txt dist/out.txt && ln -sfn ../src/a.txt dist/source",
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    );
    env.write("packages/app/src/a.txt", "payload");
    for round in 0..2 {
        let out = ok(&env, &["run", "build"]);
        let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
        assert_eq!(notes.len(), 1, "round {round}: one line says why\n{out}");
        assert!(notes[0].contains("dist/source") && notes[0].contains("outside the task's outputs"), "{out}");
        assert_eq!(out.summary().cached, 0, "round {round}\n{out}");
    }
    assert_eq!(env.read("packages/app/src/a.txt"), "payload");
}

#[test]
fn a_restore_never_writes_through_a_linked_output_directory() {
    let env = TestEnv::new();
    // The task itself replaces a linked dist/ with a real directory, so
    // anything in the outside directory could only come from a restore.
    app(
        &env,
        "if [ -L dist ]; then rm dist; fi; mkdir -p dist && cp src/a.txt dist/out.txt",
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    );
    env.write("packages/app/src/a.txt", "payload");
    ok(&env, &["run", "build"]);
    env.clear_log();
    let outside = tempfile::tempdir().expect("a directory outside the project");
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    std::os::unix::fs::symlink(outside.path(), env.path("packages/app/dist")).expect("link dist outside");
    let out = ok(&env, &["run", "build"]);
    assert_eq!(tree(outside.path()), BTreeSet::new(), "nothing was written through the link\n{out}");
    assert_eq!(env.read("packages/app/dist/out.txt"), "payload", "{out}");
}

#[test]
fn same_size_rewrites_between_runs_are_never_missed() {
    let env = TestEnv::new();
    app(&env, "mkdir -p dist && cp src/v.txt dist/v.txt", "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]");
    // Each value has the same size and is written in place (same inode),
    // right after the previous run: only the content tells them apart.
    for round in 0..3 {
        for v in ["1", "2", "3"] {
            env.write("packages/app/src/v.txt", v);
            env.clear_log();
            let out = ok(&env, &["run", "build"]);
            assert_eq!(env.read("packages/app/dist/v.txt"), v, "round {round}\n{out}");
            if round > 0 {
                assert_all_hits(&env, &out, 1);
            }
        }
    }
}

#[test]
fn a_hit_removes_stale_outputs_and_leaves_other_files() {
    let env = TestEnv::new();
    app(&env, MAKE_DIST, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]");
    env.write("packages/app/src/a.txt", "payload");
    ok(&env, &["run", "build"]);
    env.clear_log();
    env.write("packages/app/dist/stale.js", "left over");
    env.write("packages/app/dist/bin/old-tool", "left over");
    env.write("packages/app/dist/out.txt", "tampered");
    env.write("packages/app/keep.txt", "not an output");
    // keep.txt is not an input (inputs = src/**), so this is a hit.
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    let dist = tree(&env.path("packages/app/dist"));
    assert_eq!(dist, ["bin", "bin/tool", "out.txt"].into_iter().map(String::from).collect(), "stale files removed");
    assert_eq!(env.read("packages/app/dist/out.txt"), "payload");
    assert_eq!(env.read("packages/app/keep.txt"), "not an output");
}

const CHATTY: &str = "echo 'line one'; echo 'line two' >&2; echo '  line three, indented'; printf 'no newline at end'";

#[test]
fn a_hit_replays_the_original_lines_in_order() {
    let env = TestEnv::new();
    app(&env, CHATTY, "inputs = [\"src/**\"]");
    env.write("packages/app/src/a.txt", "a");
    let first = ok(&env, &["run", "build"]);
    let original: Vec<&str> = first.task_lines("app#build");
    assert_eq!(
        original,
        vec!["line one", "line two", "  line three, indented", "no newline at end"],
        "what the task printed\n{first}"
    );
    env.clear_log();
    let hit = ok(&env, &["run", "build"]);
    assert_all_hits(&env, &hit, 1);
    let key = key_of(&env, "app#build");
    let lines = hit.task_lines("app#build");
    assert_eq!(lines[0], format!("cache hit, replaying logs {}", &key[..16]), "{hit}");
    assert_eq!(lines[1..], original[..], "the log comes back in order\n{hit}");
}

#[test]
fn output_logs_modes_on_a_hit() {
    let env = TestEnv::new();
    app(&env, CHATTY, "inputs = [\"src/**\"]");
    env.write("packages/app/src/a.txt", "a");
    ok(&env, &["run", "build"]);
    env.clear_log();
    let key = key_of(&env, "app#build");
    let short = &key[..16];
    for (mode, want) in [
        ("new-only", vec![format!("cache hit, suppressing logs {short}")]),
        ("hash-only", vec![format!("cache hit {short}")]),
        ("errors-only", vec![]),
        ("none", vec![]),
    ] {
        let out = ok(&env, &["run", "build", "--output-logs", mode]);
        assert_all_hits(&env, &out, 1);
        assert_eq!(out.task_lines("app#build"), want, "--output-logs {mode}\n{out}");
    }
}

// ---------------------------------------------------------------------
// Corrupt and hostile entries.
// ---------------------------------------------------------------------

/// Runs `app#build` (with outputs) once, damages its entry with `damage`,
/// then checks the next run warns once, runs the task, succeeds, and leaves
/// a good entry that the run after hits.
fn corrupt_case(damage: impl FnOnce(&TestEnv, &Path, Vec<u8>) -> Vec<u8>) {
    let env = TestEnv::new();
    app(&env, "mkdir -p dist && cp src/a.txt dist/out.txt", "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]");
    env.write("packages/app/src/a.txt", "good");
    ok(&env, &["run", "build"]);
    env.clear_log();
    let key = key_of(&env, "app#build");
    let path = entry_path(&store(&env), &key);
    let bytes = std::fs::read(&path).expect("the entry was written");
    let damaged = damage(&env, &path, bytes);
    std::fs::write(&path, damaged).expect("write the damaged entry");
    env.write("packages/app/dist/out.txt", "wrong");

    let out = ok(&env, &["run", "build"]);
    let warnings: Vec<&str> = out.stdout.lines().chain(out.stderr.lines()).filter(|l| l.contains("corrupt")).collect();
    assert_eq!(warnings.len(), 1, "one warning line naming the corruption\n{out}");
    assert!(warnings[0].starts_with("app#build: "), "the warning names the task\n{out}");
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "{out}");
    assert_eq!(env.read("packages/app/dist/out.txt"), "good");
    let bytes = std::fs::read(&path).expect("a new entry replaced the corrupt one");
    parse_entry(&bytes, &key).expect("the new entry verifies");
    assert_store_verifies(&store(&env));
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    assert_eq!(env.read("packages/app/dist/out.txt"), "good");
}

#[test]
fn corrupt_entry_flipped_body_byte() {
    corrupt_case(|_, _, mut bytes| {
        let last = bytes.len() - 1;
        bytes[last] ^= 0x01;
        bytes
    });
}

#[test]
fn corrupt_entry_truncated() {
    corrupt_case(|_, _, mut bytes| {
        bytes.truncate(bytes.len() - 7);
        bytes
    });
}

#[test]
fn corrupt_entry_truncated_inside_the_header() {
    corrupt_case(|_, _, mut bytes| {
        bytes.truncate(MAGIC.len() + 8 + 10);
        bytes
    });
}

#[test]
fn corrupt_entry_empty_file() {
    corrupt_case(|_, _, _| Vec::new());
}

#[test]
fn corrupt_entry_garbage_file() {
    corrupt_case(|_, _, _| b"this is not a cache entry at all\n".repeat(40));
}

#[test]
fn corrupt_entry_holding_another_key() {
    corrupt_case(|_, path, bytes| {
        let key = path.file_name().and_then(|n| n.to_str()).expect("key name").to_string();
        let entry = parse_entry(&bytes, &key).expect("the original verifies");
        let mut header = entry.header;
        let other: String = key.chars().rev().collect();
        assert_ne!(other, key);
        header["key"] = other.as_str().into();
        encode_entry(header, &entry.log, &entry.archive)
    });
}

/// Replaces `app#build`'s entry with one whose archive holds `members`,
/// validly hashed, and checks it is refused: a warning, nothing written
/// outside the project, the task runs and a good entry replaces it.
fn hostile_case(members: &[(&str, Option<&str>, &[u8])], planted: &[&str]) {
    hostile_case_with("outputs = [\"dist/**\"]", members, planted);
}

/// [`hostile_case`] for a task whose outputs are `outputs`.
fn hostile_case_with(outputs: &str, members: &[(&str, Option<&str>, &[u8])], planted: &[&str]) {
    let env = TestEnv::new();
    app(&env, "mkdir -p dist && cp src/a.txt dist/out.txt", &format!("inputs = [\"src/**\"]\n{outputs}"));
    env.write("packages/app/src/a.txt", "good");
    ok(&env, &["run", "build"]);
    env.clear_log();
    let key = key_of(&env, "app#build");
    let path = entry_path(&store(&env), &key);
    let entry = parse_entry(&std::fs::read(&path).expect("entry"), &key).expect("verifies");
    let mut header = entry.header;
    header["outputs"] = Value::Array(
        members
            .iter()
            .map(|(p, link, data)| {
                serde_json::json!({
                    "path": p,
                    "hash": blake3::hash(data).to_hex().as_str(),
                    "mode": 0o644,
                    "link": link,
                })
            })
            .collect(),
    );
    std::fs::write(&path, encode_entry(header, &entry.log, &hostile_archive(members))).expect("plant the entry");
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    let base = env.root().parent().expect("the workspace has a parent").to_path_buf();
    let outside_before = tree(&base).into_iter().filter(|p| !p.starts_with("ws/packages/app")).collect::<BTreeSet<_>>();
    // Every file but the task's outputs, byte for byte: a write through a
    // link that stays inside the project (or the workspace) is as wrong as
    // one that leaves it.
    let skip = ["ws/packages/app/dist", "ws/.vx", "log.txt"];
    let files_before = contents(&base, &skip);

    let out = ok(&env, &["run", "build"]);
    let warnings: Vec<&str> = out.stdout.lines().filter(|l| l.contains("refused")).collect();
    assert_eq!(warnings.len(), 1, "one warning naming the refusal\n{out}");
    assert!(warnings[0].starts_with("app#build: "), "{out}");
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "{out}");
    for p in planted {
        assert!(std::fs::symlink_metadata(p).is_err(), "{p} was written outside the project\n{out}");
    }
    let outside_after = tree(&base)
        .into_iter()
        .filter(|p| !p.starts_with("ws/packages/app") && !p.starts_with("ws/.vx") && p != "log.txt")
        .collect::<BTreeSet<_>>();
    let outside_before: BTreeSet<String> =
        outside_before.into_iter().filter(|p| !p.starts_with("ws/.vx") && p != "log.txt").collect();
    assert_eq!(outside_after, outside_before, "nothing appeared outside the project\n{out}");
    assert_eq!(contents(&base, &skip), files_before, "no file but the task's outputs changed\n{out}");
    assert_eq!(
        tree(&env.path("packages/app/dist")),
        BTreeSet::from(["out.txt".to_string()]),
        "only the real output is in dist/\n{out}"
    );
    assert_eq!(env.read("packages/app/dist/out.txt"), "good");
    let good = parse_entry(&std::fs::read(&path).expect("entry"), &key).expect("the new entry verifies");
    assert_eq!(archive_members(&good.archive), vec!["dist/out.txt".to_string()], "a good entry replaced it");
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
    assert_eq!(env.read("packages/app/dist/out.txt"), "good");
}

#[test]
fn a_root_anchored_member_is_judged_from_the_workspace_root() {
    // `.vx-root/gen/app/l` is the workspace's `gen/app/l`: from there
    // `../../../escape` is the test's own temporary directory (which the
    // test watches), outside the workspace, though judged from the project
    // the same member name would have stayed inside it.
    hostile_case_with(
        "outputs = [\"dist/**\", \"/gen/app/**\"]",
        &[(".vx-root/gen/app/l", Some("../../../escape"), b""), (".vx-root/gen/app/l/pwned.txt", None, b"pwned")],
        &[],
    );
}

#[test]
fn a_member_beneath_a_link_member_that_stays_in_the_project_is_refused() {
    // dist/x → ../src stays inside the project, so a check that a link
    // only stays inside the project passes it; the member after it would
    // then overwrite the task's own source.
    hostile_case(&[("dist/x", Some("../src"), b""), ("dist/x/a.txt", None, b"pwned")], &[]);
}

#[test]
fn a_link_member_pointing_outside_the_outputs_is_refused() {
    // Written alone it changes no file, but every later write through it
    // (the task's own tools, the next restore) lands in the sources.
    hostile_case(&[("dist/out.txt", None, b"good"), ("dist/src", Some("../src"), b"")], &[]);
}

#[test]
fn a_root_anchored_link_member_cannot_reach_the_root_config() {
    // `.vx-root/gen/app/up` is the workspace's `gen/app/up` → `../..`, the
    // workspace root itself: inside the workspace, outside the outputs.
    hostile_case_with(
        "outputs = [\"dist/**\", \"/gen/app/**\"]",
        &[(".vx-root/gen/app/up", Some("../.."), b""), (".vx-root/gen/app/up/vx.toml", None, b"pwned")],
        &[],
    );
}

#[test]
fn a_link_member_after_the_member_beneath_it_is_refused() {
    // The order reversed: the file first, then the link over its directory.
    hostile_case(&[("dist/x/a.txt", None, b"fine"), ("dist/x", Some("../src"), b"")], &[]);
}

#[test]
fn a_member_the_outputs_do_not_match_is_refused() {
    // Inside the project but not an output: restoring it would overwrite
    // the task's own source (which the rerun then copies to dist/).
    hostile_case(&[("dist/out.txt", None, b"good"), ("src/a.txt", None, b"pwned")], &[]);
}

#[test]
fn archive_path_with_dotdot_is_refused() {
    // The project is ws/packages/app: three levels up is the test's own
    // temporary directory, which the test watches.
    hostile_case(&[("dist/ok.txt", None, b"fine"), ("../../../pwned-dotdot.txt", None, b"pwned")], &[]);
}

#[test]
fn archive_with_absolute_path_is_refused() {
    let target = tempfile::tempdir().expect("a directory outside any project");
    let abs = target.path().join("pwned-absolute.txt");
    let abs_text = abs.to_string_lossy().into_owned();
    hostile_case(&[("dist/ok.txt", None, b"fine"), (&abs_text, None, b"pwned")], &[&abs_text]);
}

#[test]
fn archive_with_a_link_escaping_the_project_is_refused() {
    // dist/escape → four levels up (outside the project), then a file
    // written through it.
    hostile_case(&[("dist/escape", Some("../../../.."), b""), ("dist/escape/pwned-link.txt", None, b"pwned")], &[]);
}

#[test]
fn archive_with_an_absolute_link_is_refused() {
    let target = tempfile::tempdir().expect("a directory outside any project");
    let dir = target.path().to_string_lossy().into_owned();
    let through = target.path().join("pwned-abs-link.txt");
    hostile_case(
        &[("dist/escape", Some(&dir), b""), ("dist/escape/pwned-abs-link.txt", None, b"pwned")],
        &[&through.to_string_lossy()],
    );
}

#[test]
fn outputs_declared_outside_the_project_are_a_config_error() {
    let cases = [
        ("\"../x/**\"", "leaves the project"),
        ("\"dist/../../x\"", "leaves the project"),
        ("\"/../outside/**\"", "leaves the workspace"),
        ("\"/**/*.js\"", "has no fixed directory"),
        ("\"/.git/**\"", "which vx never owns"),
    ];
    for (outputs, why) in cases {
        let env = TestEnv::new();
        app(&env, "true", &format!("outputs = [{outputs}]"));
        let out = env.vx(&["run", "build"]);
        out.assert_code(2);
        assert!(out.stderr.contains(why), "outputs = [{outputs}]\n{out}");
        assert_eq!(ran(&env), Vec::<String>::new(), "nothing runs\n{out}");
        assert!(entry_files(&store(&env)).is_empty());
    }
}

// ---------------------------------------------------------------------
// Kills and concurrency.
// ---------------------------------------------------------------------

#[test]
fn kill_9_during_cache_writes_never_leaves_a_bad_entry() {
    let env = TestEnv::new();
    // 8 MB of random bytes: incompressible, so packing and writing take a while.
    app(
        &env,
        "mkdir -p dist && head -c 8000000 /dev/urandom > dist/big.bin && cp src/n.txt dist/which.txt && echo built",
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    );
    for i in 0..20u64 {
        env.write("packages/app/src/n.txt", &format!("{}", i % 3));
        let running = env.vx_command(&["run", "build", "--force"]).spawn();
        if i % 2 == 0 {
            // Anywhere from before the task starts to after it ends.
            std::thread::sleep(Duration::from_millis(i * 7));
        } else {
            // Right after the task's last line, while vx packs and writes.
            running.wait_for_stdout("app#build: built");
            std::thread::sleep(Duration::from_millis((i % 7) * 3));
        }
        running.signal(Signal::SIGKILL);
        let out = running.finish();
        assert!(out.code == -1 || out.code == 0, "vx either died or finished\n{out}");
    }
    assert_nothing_left(&env, &[], &"after the kills");
    env.clear_log();
    assert_store_verifies(&store(&env));
    for round in 0..2 {
        for n in 0..3 {
            env.write("packages/app/src/n.txt", &n.to_string());
            env.clear_log();
            let out = ok(&env, &["run", "build"]);
            assert_eq!(out.summary().failed, 0, "{out}");
            assert_eq!(env.read("packages/app/dist/which.txt"), n.to_string(), "round {round}\n{out}");
            let big = std::fs::metadata(env.path("packages/app/dist/big.bin")).expect("big.bin").len();
            assert_eq!(big, 8_000_000, "{out}");
            if round == 1 {
                // Every key has a good entry by now.
                assert_all_hits(&env, &out, 1);
            }
        }
    }
    let keys = assert_store_verifies(&store(&env));
    assert_eq!(keys.len(), 3, "one entry per input value: {keys:?}");
}

#[test]
fn kill_9_during_restores_never_leaves_wrong_outputs() {
    let env = TestEnv::new();
    app(
        &env,
        "mkdir -p dist && head -c 8000000 /dev/urandom > dist/big.bin && cp src/n.txt dist/which.txt",
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
    );
    env.write("packages/app/src/n.txt", "0");
    ok(&env, &["run", "build"]);
    let digest = |env: &TestEnv| blake3::hash(&std::fs::read(env.path("packages/app/dist/big.bin")).expect("big.bin"));
    let original = digest(&env);
    for i in 0..12u64 {
        if i % 3 == 0 {
            std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
        } else {
            env.write("packages/app/dist/big.bin", "damaged");
        }
        let running = env.vx_command(&["run", "build"]).spawn();
        std::thread::sleep(Duration::from_millis(i * 4));
        running.signal(Signal::SIGKILL);
        let out = running.finish();
        assert!(out.code == -1 || out.code == 0, "vx either died or finished\n{out}");
        assert_nothing_left(&env, &[], &"after the kill");
        env.clear_log();
        let out = ok(&env, &["run", "build"]);
        assert_all_hits(&env, &out, 1);
        assert_eq!(digest(&env), original, "the restored output is the stored one\n{out}");
        assert_eq!(env.read("packages/app/dist/which.txt"), "0", "{out}");
    }
    assert_store_verifies(&store(&env));
}

#[test]
fn two_concurrent_vx_processes_share_one_cache() {
    let (a, b) = (TestEnv::new(), TestEnv::new());
    let shared = a.root().parent().expect("parent").join("shared-cache");
    let shared_text = shared.to_string_lossy().into_owned();
    for env in [&a, &b] {
        root(env, "");
        for i in 0..8 {
            let name = format!("p{i}");
            let cmd = format!(
                "{} && mkdir -p dist && head -c 300000 /dev/urandom > dist/r.bin && cp src/f.txt dist/f.txt",
                log(&name)
            );
            project(env, &name, &[], &[task("build", &cmd, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]")]);
            env.write(&format!("packages/{name}/src/f.txt"), &name);
        }
    }
    let args = ["run", "build", "--cache-dir", &shared_text, "--concurrency", "4"];
    let (ra, rb) = (a.vx_command(&args).spawn(), b.vx_command(&args).spawn());
    let (oa, ob) = (ra.finish(), rb.finish());
    oa.assert_success();
    ob.assert_success();
    assert_eq!(oa.summary().failed + ob.summary().failed, 0);
    let keys = assert_store_verifies(&shared);
    assert_eq!(keys.len(), 8, "one entry per task: {keys:?}");
    for env in [&a, &b] {
        env.clear_log();
        let out = ok(env, &args);
        assert_all_hits(env, &out, 8);
        for i in 0..8 {
            assert_eq!(env.read(&format!("packages/p{i}/dist/f.txt")), format!("p{i}"));
        }
    }
    assert_store_verifies(&shared);
}

#[test]
fn two_concurrent_vx_processes_in_one_workspace() {
    let env = TestEnv::new();
    root(&env, "");
    for i in 0..8 {
        let name = format!("p{i}");
        let cmd = format!("{} && mkdir -p dist && cp src/f.txt dist/f.txt", log(&name));
        project(&env, &name, &[], &[task("build", &cmd, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]")]);
        env.write(&format!("packages/{name}/src/f.txt"), &name);
    }
    let args = ["run", "build", "--concurrency", "4"];
    let (r1, r2) = (env.vx_command(&args).spawn(), env.vx_command(&args).spawn());
    let (o1, o2) = (r1.finish(), r2.finish());
    o1.assert_success();
    o2.assert_success();
    for out in [&o1, &o2] {
        assert!(!out.stderr.contains("warning"), "no warning from either process\n{out}");
    }
    let keys = assert_store_verifies(&store(&env));
    assert_eq!(keys.len(), 8, "one entry per task: {keys:?}");
    env.clear_log();
    for i in 0..8 {
        std::fs::remove_dir_all(env.path(&format!("packages/p{i}/dist"))).expect("remove dist");
    }
    assert_all_hits(&env, &ok(&env, &args), 8);
    for i in 0..8 {
        assert_eq!(env.read(&format!("packages/p{i}/dist/f.txt")), format!("p{i}"));
    }
}

// ---------------------------------------------------------------------
// Retention.
// ---------------------------------------------------------------------

/// Projects p0..pN-1, each `build` writing `size` random bytes to dist/.
fn sized_projects(env: &TestEnv, n: usize, size: usize, root_extra: &str) {
    root(env, root_extra);
    for i in 0..n {
        let name = format!("p{i}");
        let cmd = format!("{} && mkdir -p dist && head -c {size} /dev/urandom > dist/r.bin", log(&name));
        project(env, &name, &[], &[task("build", &cmd, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]")]);
        env.write(&format!("packages/{name}/src/f.txt"), &name);
    }
}

fn store_bytes(store: &Path) -> u64 {
    entry_files(store).iter().map(|p| std::fs::metadata(p).map_or(0, |m| m.len())).sum()
}

fn status_of(env: &TestEnv, id: &str) -> String {
    let plan = dry(env, &[id]);
    planned(&plan, id)["cache_status"].as_str().unwrap_or_default().to_string()
}

#[test]
fn max_size_keeps_the_most_recently_used_entries() {
    let env = TestEnv::new();
    // Entries are a little over 100 KiB: three fit in 350 kB, four do not.
    sized_projects(&env, 4, 102_400, "[cache]\nmax-size = \"350KB\"\n");
    for p in ["p0", "p1", "p2"] {
        ok(&env, &["run", &format!("{p}#build")]);
    }
    assert_eq!(entry_files(&store(&env)).len(), 3, "three entries fit the budget");
    // Last used hours ago, p0 first: a hit refreshes an entry idle for more
    // than an hour (a recent one keeps its time, so cached runs write nothing).
    for (i, p) in ["p0", "p1", "p2"].iter().enumerate() {
        let used = SystemTime::now() - Duration::from_secs(3 * 3600 - 60 * i as u64);
        std::fs::File::options()
            .write(true)
            .open(entry_path(&store(&env), &key_of(&env, &format!("{p}#build"))))
            .and_then(|f| f.set_modified(used))
            .expect("age the entry");
    }
    env.clear_log();
    // A hit makes p0 the most recently used; p1 is now the oldest.
    assert_all_hits(&env, &ok(&env, &["run", "p0#build"]), 1);
    ok(&env, &["run", "p3#build"]);
    let bytes = store_bytes(&store(&env));
    assert!(bytes <= 350_000, "the store is within budget after the run: {bytes} bytes");
    assert_store_verifies(&store(&env));
    let statuses: Vec<(String, String)> =
        ["p0", "p1", "p2", "p3"].iter().map(|p| (p.to_string(), status_of(&env, &format!("{p}#build")))).collect();
    let want: Vec<(String, String)> = [("p0", "hit-local"), ("p1", "miss"), ("p2", "hit-local"), ("p3", "hit-local")]
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect();
    assert_eq!(statuses, want, "the least recently used entry went first");
}

#[test]
fn cache_gc_removes_entries_past_max_age() {
    let env = TestEnv::new();
    sized_projects(&env, 2, 1000, "[cache]\nmax-age = \"1d\"\n");
    ok(&env, &["run", "build"]);
    let old = store(&env);
    let key0 = key_of(&env, "p0#build");
    let two_days_ago = SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    std::fs::File::options()
        .write(true)
        .open(entry_path(&old, &key0))
        .and_then(|f| f.set_modified(two_days_ago))
        .expect("age the entry");
    let out = ok(&env, &["cache", "gc"]);
    assert!(out.stdout.starts_with("removed 1 entries"), "{out}");
    assert_eq!(status_of(&env, "p0#build"), "miss");
    assert_eq!(status_of(&env, "p1#build"), "hit-local");
    assert_eq!(entry_files(&old).len(), 1);
}

#[test]
fn cache_stats_counts_and_clean_empties() {
    let env = TestEnv::new();
    sized_projects(&env, 3, 1000, "");
    ok(&env, &["run", "build"]);
    ok(&env, &["run", "p0#build"]);
    let stats = |env: &TestEnv| -> Value {
        let out = ok(env, &["cache", "stats", "--format", "json"]);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("stats json: {e}\n{out}"))
    };
    let s = stats(&env);
    assert_eq!(s["entries"], 3, "{s:#}");
    assert_eq!(s["bytes"].as_u64(), Some(store_bytes(&store(&env))), "{s:#}");
    assert_eq!((s["hits"].as_u64(), s["lookups"].as_u64()), (Some(1), Some(4)), "{s:#}");
    let out = ok(&env, &["cache", "clean"]);
    assert!(out.stdout.starts_with("removed 3 entries"), "{out}");
    assert!(entry_files(&store(&env)).is_empty(), "clean empties the store");
    let s = stats(&env);
    assert_eq!((s["entries"].as_u64(), s["bytes"].as_u64()), (Some(0), Some(0)), "{s:#}");
    env.clear_log();
    assert_ran(&env, &ok(&env, &["run", "build"]), &["p0", "p1", "p2"]);
}

#[test]
fn cache_dir_can_be_moved_by_flag_variable_and_config() {
    let env = TestEnv::new();
    sized_projects(&env, 1, 10, "");
    ok(&env, &["run", "build", "--cache-dir", "flag-cache"]);
    assert_eq!(entry_files(&env.path("flag-cache")).len(), 1);
    ok_with(&env, ("VX_CACHE_DIR", "var-cache"), &["run", "build"]);
    assert_eq!(entry_files(&env.path("var-cache")).len(), 1);
    sized_projects(&env, 1, 10, "[cache]\ndir = \"conf-cache\"\n");
    env.clear_log();
    assert_ran(&env, &ok(&env, &["run", "build"]), &["p0"]);
    assert_eq!(entry_files(&env.path("conf-cache")).len(), 1);
    assert!(entry_files(&store(&env)).is_empty(), "the default store was never used");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
}

#[test]
fn why_dry_and_stats_use_the_cache_dir_from_the_environment() {
    let env = TestEnv::new();
    sized_projects(&env, 1, 10, "");
    let var = ("VX_CACHE_DIR", "elsewhere");
    ok_with(&env, var, &["run", "build"]);
    assert_eq!(entry_files(&env.path("elsewhere")).len(), 1);
    let plan = env.vx_command(&["run", "build", "--dry=json"]).env(var.0, var.1).output();
    plan.assert_success();
    let plan: Value = serde_json::from_str(&plan.stdout).expect("dry json");
    assert_eq!(planned(&plan, "p0#build")["cache_status"], "hit-local", "{plan:#}");
    let stats = ok_with(&env, var, &["cache", "stats", "--format", "json"]);
    let stats: Value = serde_json::from_str(&stats.stdout).expect("stats json");
    assert_eq!(stats["entries"], 1, "{stats:#}");
    let (doc, changes) = why(&env, "p0#build", var);
    assert_eq!(changes, vec![], "{doc:#}");
    assert_eq!(doc["cached"], true, "vx why looks in the same store the run used: {doc:#}");
    env.clear_log();
    assert_all_hits(&env, &ok_with(&env, var, &["run", "build"]), 1);
}

// ---------------------------------------------------------------------
// --force and --cache.
// ---------------------------------------------------------------------

fn one_cached_task(env: &TestEnv) -> String {
    app(env, "mkdir -p dist && cp src/a.txt dist/out.txt", "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]");
    env.write("packages/app/src/a.txt", "a");
    key_of(env, "app#build")
}

#[test]
fn force_runs_but_still_writes() {
    let env = TestEnv::new();
    let key = one_cached_task(&env);
    ok(&env, &["run", "build"]);
    ok(&env, &["cache", "clean"]);
    env.clear_log();
    let out = ok(&env, &["run", "build", "--force"]);
    assert_ran(&env, &out, &["app"]);
    assert!(entry_path(&store(&env), &key).is_file(), "--force still writes\n{out}");
    let out = ok(&env, &["run", "build", "--force"]);
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "--force never reads\n{out}");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
}

#[test]
fn cache_off_neither_reads_nor_writes() {
    let env = TestEnv::new();
    let key = one_cached_task(&env);
    let out = ok(&env, &["run", "build", "--cache", "off"]);
    assert_ran(&env, &out, &["app"]);
    assert!(entry_files(&store(&env)).is_empty(), "off writes nothing\n{out}");
    ok(&env, &["run", "build"]);
    env.clear_log();
    assert!(entry_path(&store(&env), &key).is_file());
    let out = ok(&env, &["run", "build", "--cache", "off"]);
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "{out}");
}

#[test]
fn cache_local_r_reads_but_never_writes() {
    let env = TestEnv::new();
    let key = one_cached_task(&env);
    let out = ok(&env, &["run", "build", "--cache", "local:r"]);
    assert_ran(&env, &out, &["app"]);
    assert!(entry_files(&store(&env)).is_empty(), "local:r writes nothing\n{out}");
    ok(&env, &["run", "build"]);
    env.clear_log();
    assert!(entry_path(&store(&env), &key).is_file());
    std::fs::remove_dir_all(env.path("packages/app/dist")).expect("remove dist");
    assert_all_hits(&env, &ok(&env, &["run", "build", "--cache", "local:r"]), 1);
    assert_eq!(env.read("packages/app/dist/out.txt"), "a");
}

#[test]
fn cache_local_w_writes_but_never_reads() {
    let env = TestEnv::new();
    let key = one_cached_task(&env);
    let out = ok(&env, &["run", "build", "--cache", "local:w"]);
    assert_ran(&env, &out, &["app"]);
    let path = entry_path(&store(&env), &key);
    assert!(path.is_file(), "local:w writes\n{out}");
    let first = std::fs::read(&path).expect("entry");
    let out = ok(&env, &["run", "build", "--cache", "local:w"]);
    assert_ran(&env, &out, &["app"]);
    assert_eq!(out.summary().cached, 0, "local:w never reads\n{out}");
    let second = std::fs::read(&path).expect("entry");
    let created = |b: &[u8]| parse_entry(b, &key).expect("verifies").header["created_unix_ms"].clone();
    assert!(created(&second).as_u64() >= created(&first).as_u64(), "rewritten");
    assert_all_hits(&env, &ok(&env, &["run", "build"]), 1);
}

// ---------------------------------------------------------------------
// History, vx last, vx why, --dry=json.
// ---------------------------------------------------------------------

/// Pastes `line` into `sh -c` at the workspace root, with the `vx` under
/// test first on `PATH` and tasks logging to `log_file`; panics unless it
/// succeeds.
fn paste(env: &TestEnv, line: &str, log_file: &Path) {
    let vx_dir = crate::common::vx_bin().parent().expect("vx has a directory").to_path_buf();
    let path = format!("{}:{}", vx_dir.display(), std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()));
    #[expect(clippy::disallowed_methods, reason = "the test pastes `vx last` into a shell, as a person would")]
    let replay = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(env.root())
        .env_clear()
        .env("PATH", path)
        .env("HOME", env.path(".replay-home"))
        .env("NO_COLOR", "1")
        .env("VX_TEST_LOG", log_file)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run sh");
    assert!(
        replay.status.success(),
        "the pasted line `{line}` failed\n{}{}",
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&replay.stderr)
    );
}

#[test]
fn vx_last_prints_a_line_that_runs_the_same_again() {
    // A workspace path a shell would split or choke on unquoted.
    let env = TestEnv::with_workspace_dir("it's a $ws");
    root(&env, "");
    // Uncached, so that running it again runs it again.
    project(&env, "app", &[], &[task("build", &log("app"), "")]);
    project(&env, "other", &[], &[task("build", &log("other"), "")]);
    ok(&env, &["run", "build", "--filter", "app", "--tag", "why=two words 'quoted'"]);
    assert_eq!(ran(&env), words(&["app"]));
    let line = ok(&env, &["last"]).into_output().stdout;
    assert_eq!(line.lines().count(), 1, "one line: {line:?}");
    assert!(line.starts_with("vx run build"), "{line:?}");
    let log_file = env.path("replay-log.txt");
    paste(&env, line.trim_end(), &log_file);
    assert_eq!(std::fs::read_to_string(&log_file).unwrap_or_default(), "app\n", "the same task ran again");
    let history = ok(&env, &["history", "--format", "json"]);
    let rows: Value = serde_json::from_str(&history.stdout).expect("history json");
    assert_eq!(rows[0]["command"], rows[1]["command"], "the same command line was recorded\n{history}");
    assert_eq!(rows[0]["tags"], rows[1]["tags"], "with the same tags\n{history}");
    assert_eq!(rows[0]["tags"][0]["value"], "two words 'quoted'", "{history}");

    // Run inside a project: pasted at the root, it runs that project's task.
    env.vx_in("packages/other", &["run", "build"]).assert_success();
    assert_eq!(ran(&env), words(&["other"]));
    let line = ok(&env, &["last"]).into_output().stdout;
    assert_eq!(line.lines().count(), 1, "one line: {line:?}");
    std::fs::remove_file(&log_file).expect("clear the replay log");
    paste(&env, line.trim_end(), &log_file);
    assert_eq!(std::fs::read_to_string(&log_file).unwrap_or_default(), "other\n", "`{}`", line.trim_end());
}

#[test]
fn vx_last_after_dash_c_prints_a_line_that_works_from_the_callers_directory() {
    let env = TestEnv::new();
    root(&env, "");
    project(&env, "app", &[], &[task("build", &log("app"), "")]);
    project(&env, "other", &[], &[task("build", &log("other"), "")]);
    ok(&env, &["-C", "packages/other", "run", "build"]);
    assert_eq!(ran(&env), words(&["other"]));
    let log_file = env.path("replay-log.txt");
    for from in [".", "packages/app"] {
        let line = env.vx_in(from, &["last"]);
        line.assert_success();
        let line = line.stdout.trim_end().to_string();
        assert!(line.contains("vx -C packages/other run build"), "the line as typed: {line:?}");
        assert!(!line.contains("packages/other &&"), "no cd into the -C directory: {line:?}");
        let _ = std::fs::remove_file(&log_file);
        paste(&env, &line, &log_file);
        assert_eq!(std::fs::read_to_string(&log_file).unwrap_or_default(), "other\n", "`{line}` from {from}");
    }
}

#[test]
fn history_records_tags_split_on_the_first_equals_and_hit_counts() {
    let env = TestEnv::new();
    sized_projects(&env, 2, 10, "");
    ok(&env, &["run", "build", "--tag", "k=v=w", "--tag", "ci=1"]);
    ok(&env, &["run", "build"]);
    ok(&env, &["run", "p0#build", "--force"]);
    let out = ok(&env, &["history", "--format", "json"]);
    let rows: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("history json: {e}\n{out}"));
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 3, "{out}");
    // Newest first.
    assert_eq!((rows[0]["tasks"].as_u64(), rows[0]["cached"].as_u64()), (Some(1), Some(0)), "{out}");
    assert_eq!((rows[1]["tasks"].as_u64(), rows[1]["cached"].as_u64()), (Some(2), Some(2)), "{out}");
    assert_eq!((rows[2]["tasks"].as_u64(), rows[2]["cached"].as_u64()), (Some(2), Some(0)), "{out}");
    assert_eq!(
        rows[2]["tags"],
        serde_json::json!([{"key": "k", "value": "v=w"}, {"key": "ci", "value": "1"}]),
        "{out}"
    );
    assert_eq!(rows[1]["tags"], serde_json::json!([]), "{out}");
    for r in rows {
        assert_eq!(r["exit_code"], 0, "{out}");
        assert!(r["command"].as_str().is_some_and(|c| c.starts_with("vx run ")), "{out}");
    }
    let text = ok(&env, &["history"]);
    assert!(text.stdout.contains("k=v=w"), "{text}");
}

/// `vx why ID --format json`, parsed, with the `(component, kind, what)` of
/// each change.
fn why(env: &TestEnv, id: &str, var: (&str, &str)) -> (Value, Vec<(String, String, String)>) {
    let out = ok_with(env, var, &["why", id, "--format", "json"]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("why json: {e}\n{out}"));
    let changes = doc["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("component"), s("kind"), s("what"))
        })
        .collect();
    (doc, changes)
}

fn change(component: &str, kind: &str, what: &str) -> (String, String, String) {
    (component.to_string(), kind.to_string(), what.to_string())
}

#[test]
fn why_names_each_changed_component_and_unchanged_after_revert() {
    let env = TestEnv::new();
    root(&env, "");
    let app_task = |cmd: &str| {
        task(
            "build",
            &format!("{} && {cmd}", log("app")),
            "inputs = [\"src/**\"]\nenv = [\"MODE\"]\ndepends-on = [\"^build\"]",
        )
    };
    project(&env, "lib", &[], &[task("build", &log("lib"), "inputs = [\"src/**\"]")]);
    project(&env, "app", &["lib"], &[app_task("echo one")]);
    env.write("packages/lib/src/l.txt", "1");
    env.write("packages/app/src/a.txt", "1");
    let mode = ("MODE", "dev");
    ok_with(&env, mode, &["run", "build"]);

    let (doc, changes) = why(&env, "app#build", mode);
    assert_eq!(changes, vec![], "{doc:#}");
    assert_eq!(doc["key"], doc["last_key"], "{doc:#}");
    let text = ok_with(&env, mode, &["why", "app#build"]);
    assert!(text.stdout.contains("unchanged"), "{text}");

    env.write("packages/app/src/a.txt", "2");
    assert_eq!(why(&env, "app#build", mode).1, vec![change("input", "changed", "packages/app/src/a.txt")]);
    let text = ok_with(&env, mode, &["why", "app#build"]);
    assert!(text.stdout.contains("packages/app/src/a.txt"), "{text}");
    env.write("packages/app/src/a.txt", "1");

    assert_eq!(why(&env, "app#build", ("MODE", "prod")).1, vec![change("env", "changed", "MODE")]);
    let text = ok_with(&env, ("MODE", "prod"), &["why", "app#build"]);
    assert!(text.stdout.contains("MODE") && !text.stdout.contains("prod"), "{text}");

    env.write("packages/lib/src/l.txt", "2");
    assert_eq!(why(&env, "app#build", mode).1, vec![change("dependency", "changed", "lib#build")]);
    assert_eq!(why(&env, "lib#build", mode).1, vec![change("input", "changed", "packages/lib/src/l.txt")]);
    env.write("packages/lib/src/l.txt", "1");

    project(&env, "app", &["lib"], &[app_task("echo two")]);
    let (doc, changes) = why(&env, "app#build", mode);
    assert_eq!(changes.len(), 1, "{doc:#}");
    assert_eq!(changes[0].0, "command", "{doc:#}");
    assert!(changes[0].2.contains("echo two"), "{doc:#}");
    project(&env, "app", &["lib"], &[app_task("echo one")]);

    // Everything reverted: unchanged, and a hit.
    let (doc, changes) = why(&env, "app#build", mode);
    assert_eq!(changes, vec![], "{doc:#}");
    assert_eq!(doc["cached"], true, "{doc:#}");
    let text = ok_with(&env, mode, &["why", "app#build"]);
    assert!(text.stdout.contains("unchanged") && text.stdout.contains("cache hit"), "{text}");
    env.clear_log();
    let out = ok_with(&env, mode, &["run", "build"]);
    assert_all_hits(&env, &out, 2);
}

#[test]
fn dry_json_key_is_the_key_a_run_stores() {
    let env = TestEnv::new();
    root(&env, "");
    project(&env, "lib", &[], &[task("build", &log("lib"), "inputs = [\"src/**\"]")]);
    project(&env, "app", &["lib"], &[task("build", &log("app"), "inputs = [\"src/**\"]\ndepends-on = [\"^build\"]")]);
    project(&env, "plain", &[], &[task("build", &log("plain"), "")]);
    env.write("packages/lib/src/l.txt", "1");
    env.write("packages/app/src/a.txt", "1");
    let plan = dry(&env, &["build"]);
    let mut keys = Vec::new();
    for id in ["lib#build", "app#build"] {
        let t = planned(&plan, id);
        assert_eq!(t["cache_status"], "miss", "{plan:#}");
        let key = t["key"].as_str().unwrap_or_else(|| panic!("{id} has a key: {plan:#}")).to_string();
        assert_eq!(key.len(), 64, "{plan:#}");
        assert!(!entry_path(&store(&env), &key).exists());
        keys.push(key);
    }
    assert_eq!(planned(&plan, "plain#build")["cache_status"], "uncached", "{plan:#}");
    assert!(plan["prediction"].is_object(), "{plan:#}");
    ok(&env, &["run", "build"]);
    for key in &keys {
        let path = entry_path(&store(&env), key);
        let bytes =
            std::fs::read(&path).unwrap_or_else(|e| panic!("the planned key was stored at {}: {e}", path.display()));
        parse_entry(&bytes, key).expect("the stored entry verifies");
    }
    let mut stored = assert_store_verifies(&store(&env));
    stored.sort();
    let mut want = keys.clone();
    want.sort();
    assert_eq!(stored, want, "the store holds exactly the planned keys");
    let plan = dry(&env, &["build"]);
    for (id, key) in ["lib#build", "app#build"].iter().zip(&keys) {
        let t = planned(&plan, id);
        assert_eq!(t["cache_status"], "hit-local", "{plan:#}");
        assert_eq!(t["key"].as_str(), Some(key.as_str()), "{plan:#}");
        assert!(t["eta_ms"].is_u64(), "a hit has an ETA: {plan:#}");
    }
}

#[test]
fn only_successful_runs_are_stored() {
    let env = TestEnv::new();
    app(&env, "test -f src/pass", "inputs = [\"src/**\"]");
    env.write("packages/app/src/a.txt", "a");
    let out = env.vx(&["run", "build"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(entry_files(&store(&env)).is_empty(), "a failure is not stored\n{out}");
    env.clear_log();
    let out = env.vx(&["run", "build"]);
    assert_eq!(out.code, 1, "a failure is never a hit\n{out}");
    assert_ran(&env, &out, &["app"]);
}
