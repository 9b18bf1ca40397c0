//! Errors about what to run: unknown tasks and projects (with the nearest
//! name), selections that match nothing, cycles (printed whole), and
//! `--affected` without a base to compare with.

use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, log_cmd, project_toml};

/// `ui`, `web` (depends on ui) and `site` (in `apps/`, no `test` task).
fn workspace(env: &TestEnv) -> Transcript<'_> {
    let mut t = Transcript::new(env);
    t.write("vx.toml", "[workspace]\nprojects = [\"packages/*\", \"apps/*\"]\n");
    env.write("packages/ui/vx.toml", &project_toml("ui", &[], &[("build", &log_cmd("ui"), &[])]));
    env.write(
        "packages/web/vx.toml",
        &project_toml("web", &["ui"], &[("build", &log_cmd("web"), &["^build"]), ("test", &log_cmd("web#test"), &[])]),
    );
    env.write("apps/site/vx.toml", &project_toml("site", &[], &[("build", &log_cmd("site"), &[])]));
    t
}

#[test]
fn unknown_tasks_and_projects() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    for args in
        [&["run", "web#biuld"][..], &["run", "webb#build"], &["run", "biuld"], &["run", "wbe#test"], &["show", "webb"]]
    {
        t.vx(args).assert_code(2).error_line();
    }
    t.vx_in("apps/site", &["run", "test"]).assert_code(2).error_line();
    assert!(env.log().is_empty());
    assert_transcript!(t);
}

#[test]
fn malformed_selections() {
    let env = TestEnv::new();
    let mut t = workspace(&env);
    for args in [
        &["run", "build", "--filter", "[main"][..],
        &["run", "build", "--filter", "..."],
        &["run", "build", "--filter", "{apps/*"],
        &["-C", "no/such/dir", "run", "build"],
    ] {
        t.vx(args).assert_code(2).error_line();
    }
    assert_transcript!(t);
}

#[test]
fn cycles() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    env.workspace(&["packages/*"]);
    t.write("packages/a/vx.toml", &project_toml("a", &["b"], &[("build", &log_cmd("a#build"), &["^build"])]));
    t.write("packages/b/vx.toml", &project_toml("b", &["a"], &[("build", &log_cmd("b#build"), &["^build"])]));
    t.vx(&["run", "build"]).assert_code(2).error_line();
    t.write(
        "packages/a/vx.toml",
        &project_toml("a", &[], &[("build", &log_cmd("a#build"), &["test"]), ("test", &log_cmd("a#test"), &["build"])]),
    );
    t.write("packages/b/vx.toml", &project_toml("b", &[], &[("build", &log_cmd("b#build"), &[])]));
    t.vx(&["run", "a#build"]).assert_code(2).error_line();
    assert!(env.log().is_empty(), "nothing runs when the graph has a cycle");
    assert_transcript!(t);
}

#[test]
fn affected_without_a_base() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", &log_cmd("a"), &[])]));
    env.git_init("trunk");
    env.git_commit_all("init");
    t.note("A git repository whose only branch is `trunk`.");
    t.vx(&["run", "build", "--affected"]).assert_code(2).error_line();
    t.vx(&["run", "build", "--affected=no-such-branch"]).assert_code(2).error_line();
    assert!(env.log().is_empty());
    assert_transcript!(t);
}
