//! Dependency cycles are a config error (exit 2) that prints the whole
//! cycle, and nothing runs.

use crate::common::{TestEnv, log_cmd, project_toml};

/// The cycle as printed, whichever node it starts from: the error must name
/// one rotation of `ids` closed back on its first element.
#[track_caller]
fn assert_cycle(line: &str, ids: &[&str]) {
    let found = (0..ids.len()).any(|start| {
        let mut path: Vec<&str> = ids[start..].iter().chain(&ids[..start]).copied().collect();
        path.push(path[0]);
        line.contains(&path.join(" → "))
    });
    assert!(found, "the error must print the whole cycle {ids:?} closed on itself: {line}");
}

#[test]
fn project_cycle_through_caret_prints_the_whole_cycle() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &["b"], &[("build", &log_cmd("a#build"), &["^build"])]));
    env.write("packages/b/vx.toml", &project_toml("b", &["a"], &[("build", &log_cmd("b#build"), &["^build"])]));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("cycle"), "{out}");
    assert_cycle(line, &["a#build", "b#build"]);
    assert!(env.log().is_empty(), "nothing runs when the graph has a cycle");
}

#[test]
fn three_task_cycle_across_projects() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", &log_cmd("a"), &["b#build"])]));
    env.write("packages/b/vx.toml", &project_toml("b", &[], &[("build", &log_cmd("b"), &["c#build"])]));
    env.write("packages/c/vx.toml", &project_toml("c", &[], &[("build", &log_cmd("c"), &["a#build"])]));
    let out = env.vx(&["run", "a#build"]);
    out.assert_code(2);
    assert_cycle(out.error_line(), &["a#build", "b#build", "c#build"]);
    assert!(env.log().is_empty());
}

#[test]
fn cycle_between_tasks_of_one_project() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/vx.toml",
        &project_toml("p", &[], &[("build", &log_cmd("build"), &["test"]), ("test", &log_cmd("test"), &["build"])]),
    );
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert_cycle(out.error_line(), &["p#build", "p#test"]);
}

#[test]
fn task_depending_on_itself_is_a_cycle() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/p/vx.toml", &project_toml("p", &[], &[("build", &log_cmd("build"), &["build"])]));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("p#build → p#build"), "{out}");
}

#[test]
fn dry_run_and_graph_also_refuse_a_cycle() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &["b"], &[("build", "true", &["^build"])]));
    env.write("packages/b/vx.toml", &project_toml("b", &["a"], &[("build", "true", &["^build"])]));
    for flag in ["--dry=json", "--graph"] {
        let out = env.vx(&["run", "build", flag]);
        out.assert_code(2);
        assert_cycle(out.error_line(), &["a#build", "b#build"]);
        assert!(out.stdout.is_empty(), "no partial plan on stdout\n{out}");
    }
}
