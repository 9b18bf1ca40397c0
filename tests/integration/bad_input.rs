//! Bad input beyond config files and flags (issue 15, item 8): file
//! names with newlines, bytes that are not UTF-8 and backslashes; a
//! workspace of 20,000 projects; a task graph 10,000 deep. Each gives
//! the right behaviour or a clear note, never a panic or a wrong restore.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::common::TestEnv;
use crate::common::fixtures::task;
use crate::common::log_cmd as log;

/// One project `p` whose `build` copies `src/*` into `dist/`.
fn copying_project(env: &TestEnv) {
    env.workspace(&["packages/*"]);
    let build = task(
        "build",
        &format!("{} && mkdir -p dist && cp src/* dist/", log("p")),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n",
    );
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
}

#[test]
fn file_names_with_newlines_are_keyed_cached_and_restored_under_their_names() {
    let env = TestEnv::new();
    copying_project(&env);
    env.write("packages/p/src/two\nlines.txt", "one");
    env.vx(&["run", "build"]).assert_success();
    std::fs::remove_dir_all(env.path("packages/p/dist")).expect("remove dist");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.summary().cached, 1, "a hit\n{out}");
    assert_eq!(env.read("packages/p/dist/two\nlines.txt"), "one", "restored under its own name");
    env.write("packages/p/src/two\nlines.txt", "two");
    let out = env.vx(&["run", "build"]);
    assert_eq!(out.summary().cached, 0, "a changed input with a newline in its name re-keys the task\n{out}");
}

#[test]
fn an_output_whose_name_is_not_utf8_is_not_cached_and_never_restored_renamed() {
    let env = TestEnv::new();
    copying_project(&env);
    let src = env.path("packages/p/src").join(OsStr::from_bytes(b"h\xff.txt"));
    std::fs::create_dir_all(src.parent().expect("a parent")).expect("mkdir src");
    std::fs::write(&src, "one").expect("write the source");
    for round in 0..2 {
        let out = env.vx(&["run", "build"]);
        out.assert_success();
        let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
        assert_eq!(notes.len(), 1, "round {round}: one note says why\n{out}");
        assert!(notes[0].contains("not UTF-8"), "round {round}: it names the reason\n{out}");
        assert_eq!(out.summary().cached, 0, "round {round}: never a hit\n{out}");
    }
    let names: Vec<Vec<u8>> = std::fs::read_dir(env.path("packages/p/dist"))
        .expect("dist/")
        .flatten()
        .map(|e| e.file_name().as_bytes().to_vec())
        .collect();
    assert_eq!(names, [b"h\xff.txt".to_vec()], "dist/ holds the file under its real name, and nothing renamed");
    assert_eq!(env.log(), ["p", "p"], "the task ran both times");
}

#[test]
fn input_names_that_differ_only_in_bytes_that_are_not_utf8_both_key_the_task() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let build = task("build", &log("p"), "inputs = [\"src/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    let src = env.path("packages/p/src");
    std::fs::create_dir_all(&src).expect("mkdir src");
    // Both are `a\u{FFFD}.txt` when read lossily.
    let (ff, fe) = (src.join(OsStr::from_bytes(b"a\xff.txt")), src.join(OsStr::from_bytes(b"a\xfe.txt")));
    std::fs::write(&ff, "1").expect("write");
    std::fs::write(&fe, "1").expect("write");
    let runs = |what: &str, cached: usize| {
        let out = env.vx(&["run", "build"]);
        out.assert_success();
        assert_eq!(out.summary().cached, cached, "{what}\n{out}");
    };
    runs("the first run", 0);
    runs("nothing changed", 1);
    std::fs::write(&fe, "2").expect("write");
    runs("one of them changed", 0);
    std::fs::write(&ff, "2").expect("write");
    runs("the other changed: a hit here would be a wrong one", 0);
}

#[test]
fn an_output_with_a_backslash_in_its_name_is_not_cached() {
    let env = TestEnv::new();
    copying_project(&env);
    env.write("packages/p/src/a\\b", "x");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(out.stdout.contains("with a backslash"), "the note names the reason\n{out}");
    let out = env.vx(&["run", "build"]);
    assert_eq!(out.summary().cached, 0, "never a hit, so never restored as `dist/a/b`\n{out}");
    assert!(!env.path("packages/p/dist/a").exists(), "no directory `a` is made");
}

#[test]
fn a_workspace_of_20000_projects_plans_and_runs_one_of_them() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    const N: usize = 20_000;
    for i in 0..N {
        env.write(
            &format!("packages/p{i}/vx.toml"),
            &format!("[project]\nname = \"p{i}\"\n{}", task("build", &log(&format!("p{i}")), "")),
        );
    }
    let out = env.vx(&["run", "build", "--dry"]);
    out.assert_success();
    assert!(
        out.stdout.contains(&format!("{N} task(s) planned")),
        "every project's task is planned\n{}",
        &out.stdout[out.stdout.len().saturating_sub(300)..]
    );
    env.vx(&["run", &format!("p{}#build", N - 1)]).assert_success();
    assert_eq!(env.log(), [format!("p{}", N - 1)], "the one task named ran");
}

#[test]
fn a_task_graph_10000_deep_plans_and_prints_its_graph() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    const DEPTH: usize = 10_000;
    let mut toml = String::from("[project]\nname = \"p\"\n");
    for i in 0..DEPTH {
        let deps = if i == 0 { String::new() } else { format!("depends-on = [\"t{}\"]\n", i - 1) };
        toml.push_str(&task(&format!("t{i}"), "true", &deps));
    }
    env.write("packages/p/vx.toml", &toml);
    let last = format!("p#t{}", DEPTH - 1);
    let out = env.vx(&["run", &last, "--dry"]);
    out.assert_success();
    assert!(out.stdout.contains(&format!("{DEPTH} task(s) planned")), "the whole chain is planned");
    let out = env.vx(&["run", &last, "--graph"]);
    out.assert_success();
    let edges = out.stdout.lines().filter(|l| l.contains("->")).count();
    assert_eq!(edges, DEPTH - 1, "one edge per link of the chain");
}
