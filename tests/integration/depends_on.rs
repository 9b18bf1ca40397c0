//! Every `depends-on` form orders real processes: each task appends its id
//! to a shared log, and the log's order is checked against the edges.
//! Tasks that others wait for pause briefly before logging, so a dependent
//! started too early would show up first.

use crate::common::{TestEnv, assert_before, log_cmd, project_toml, slow_log_cmd};

#[test]
fn local_task_runs_before_its_dependent() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/web/vx.toml",
        &project_toml(
            "web",
            &[],
            &[
                ("codegen", &slow_log_cmd("web#codegen"), &[]),
                ("build", &log_cmd("web#build"), &["codegen"]),
                ("lint", &log_cmd("web#lint"), &[]),
            ],
        ),
    );
    env.vx(&["run", "web#build", "--concurrency", "4"]).assert_success();
    assert_eq!(env.log(), ["web#codegen", "web#build"], "lint is not a dependency and must not run");
}

#[test]
fn caret_runs_the_task_in_every_dependency_project_first() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/ui/vx.toml", &project_toml("ui", &[], &[("build", &slow_log_cmd("ui#build"), &[])]));
    env.write("packages/util/vx.toml", &project_toml("util", &[], &[("build", &slow_log_cmd("util#build"), &[])]));
    env.write(
        "packages/web/vx.toml",
        &project_toml("web", &["ui", "util"], &[("build", &log_cmd("web#build"), &["^build"])]),
    );
    env.write("packages/other/vx.toml", &project_toml("other", &[], &[("build", &log_cmd("other#build"), &[])]));

    env.vx(&["run", "web#build", "--concurrency", "4"]).assert_success();
    let log = env.log();
    assert_eq!(env.log_set(), ["ui#build", "util#build", "web#build"], "other is not a dependency");
    assert_before(&log, "ui#build", "web#build");
    assert_before(&log, "util#build", "web#build");
}

#[test]
fn caret_orders_a_whole_chain_when_every_project_is_selected() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", &slow_log_cmd("a#build"), &["^build"])]));
    env.write("packages/b/vx.toml", &project_toml("b", &["a"], &[("build", &slow_log_cmd("b#build"), &["^build"])]));
    env.write("packages/c/vx.toml", &project_toml("c", &["b"], &[("build", &log_cmd("c#build"), &["^build"])]));
    env.write("packages/d/vx.toml", &project_toml("d", &["a"], &[("build", &log_cmd("d#build"), &["^build"])]));

    env.vx(&["run", "build", "--concurrency", "4"]).assert_success();
    let log = env.log();
    assert_eq!(env.log_set(), ["a#build", "b#build", "c#build", "d#build"]);
    assert_before(&log, "a#build", "b#build");
    assert_before(&log, "b#build", "c#build");
    assert_before(&log, "a#build", "d#build");
}

#[test]
fn exact_project_task_reference_runs_first() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/shared/vx.toml", &project_toml("shared", &[], &[("gen", &slow_log_cmd("shared#gen"), &[])]));
    env.write("packages/web/vx.toml", &project_toml("web", &[], &[("build", &log_cmd("web#build"), &["shared#gen"])]));
    env.vx(&["run", "web#build"]).assert_success();
    assert_eq!(env.log(), ["shared#gen", "web#build"]);
}

#[test]
fn caret_looks_through_a_project_that_lacks_the_task() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/base/vx.toml", &project_toml("base", &[], &[("build", &slow_log_cmd("base#build"), &[])]));
    env.write("packages/mid/vx.toml", &project_toml("mid", &["base"], &[("test", &log_cmd("mid#test"), &[])]));
    env.write("packages/app/vx.toml", &project_toml("app", &["mid"], &[("build", &log_cmd("app#build"), &["^build"])]));
    env.vx(&["run", "app#build"]).assert_success();
    assert_eq!(env.log(), ["base#build", "app#build"], "mid has no build; base#build is reached through it");
}

#[test]
fn all_forms_together_with_a_diamond() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/ui/vx.toml",
        &project_toml("ui", &["core"], &[("build", &slow_log_cmd("ui#build"), &["^build"])]),
    );
    env.write(
        "packages/api/vx.toml",
        &project_toml("api", &["core"], &[("build", &log_cmd("api#build"), &["^build"])]),
    );
    env.write("packages/core/vx.toml", &project_toml("core", &[], &[("build", &slow_log_cmd("core#build"), &[])]));
    env.write("packages/shared/vx.toml", &project_toml("shared", &[], &[("gen", &slow_log_cmd("shared#gen"), &[])]));
    env.write(
        "packages/web/vx.toml",
        &project_toml(
            "web",
            &["ui", "api"],
            &[
                ("codegen", &slow_log_cmd("web#codegen"), &[]),
                ("build", &log_cmd("web#build"), &["^build", "codegen", "shared#gen"]),
            ],
        ),
    );
    env.vx(&["run", "web#build", "--concurrency", "8"]).assert_success();
    let log = env.log();
    assert_eq!(
        env.log_set(),
        ["api#build", "core#build", "shared#gen", "ui#build", "web#build", "web#codegen"],
        "each task runs exactly once"
    );
    assert_before(&log, "core#build", "ui#build");
    assert_before(&log, "core#build", "api#build");
    for dep in ["ui#build", "api#build", "web#codegen", "shared#gen"] {
        assert_before(&log, dep, "web#build");
    }
}

#[test]
fn a_dependency_runs_once_when_two_tasks_need_it() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/vx.toml",
        &project_toml(
            "p",
            &[],
            &[
                ("gen", &slow_log_cmd("p#gen"), &[]),
                ("build", &log_cmd("p#build"), &["gen"]),
                ("test", &log_cmd("p#test"), &["gen"]),
            ],
        ),
    );
    env.vx(&["run", "build", "test", "--concurrency", "4"]).assert_success();
    let log = env.log();
    assert_eq!(env.log_set(), ["p#build", "p#gen", "p#test"]);
    assert_before(&log, "p#gen", "p#build");
    assert_before(&log, "p#gen", "p#test");
}

/// a ← b ← c by project; every build depends on `^build` and on its own
/// `codegen`.
fn only_fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    for (name, deps) in [("a", &[][..]), ("b", &["a"][..]), ("c", &["b"][..])] {
        env.write(
            &format!("packages/{name}/vx.toml"),
            &project_toml(
                name,
                deps,
                &[
                    ("codegen", &log_cmd(&format!("{name}#codegen")), &[]),
                    ("build", &slow_log_cmd(&format!("{name}#build")), &["^build", "codegen"]),
                    ("test", &log_cmd(&format!("{name}#test")), &["build"]),
                ],
            ),
        );
    }
    env
}

#[test]
fn only_runs_the_named_tasks_without_their_dependencies() {
    let env = only_fixture();
    env.vx(&["run", "c#test", "--only"]).assert_success();
    assert_eq!(env.log(), ["c#test"], "neither c#build nor anything upstream runs");
    env.clear_log();
    env.vx(&["run", "test", "--only", "--concurrency", "4"]).assert_success();
    assert_eq!(env.log_set(), ["a#test", "b#test", "c#test"]);
    env.clear_log();
    env.vx(&["run", "c#build", "--exclude-dependencies"]).assert_success();
    assert_eq!(env.log(), ["c#build"], "the first vx's spelling is accepted");
}

#[test]
fn only_keeps_the_order_among_the_named_tasks() {
    let env = only_fixture();
    env.vx(&["run", "build", "--only", "--concurrency", "4"]).assert_success();
    let log = env.log();
    assert_eq!(env.log_set(), ["a#build", "b#build", "c#build"], "no codegen runs");
    assert_before(&log, "a#build", "b#build");
    assert_before(&log, "b#build", "c#build");
    env.clear_log();
    // c#test reaches a#codegen only through tasks left out: it still waits.
    env.vx(&["run", "a#codegen", "c#test", "--only", "--concurrency", "4"]).assert_success();
    assert_eq!(env.log(), ["a#codegen", "c#test"]);
}

#[test]
fn only_from_turbo_habit_is_accepted() {
    let env = only_fixture();
    let out = env.vx(&["turbo", "run", "b#test", "--only"]);
    out.assert_success();
    assert_eq!(env.log(), ["b#test"], "{out}");
}
