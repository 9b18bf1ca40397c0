//! `--affected[=REV]` and `[REV]` filters on a real git repository:
//! committed changes on a branch, uncommitted and untracked files, global
//! inputs, dependents, and the error when there is nothing to compare to.
//! `--affected` selects tasks: a change affects the tasks whose inputs it
//! touches and the tasks that depend on those (a dependent project's
//! `build` through its `^build`), not every project that depends on the
//! changed one; `[REV]` filters select projects, with dependents on request.

use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web ← site, and lib alone; committed on `main` (or `branch`).
/// Each `build` stands alone (no `^build`), so a change affects only the
/// tasks whose inputs it touches.
fn repo(branch: &str) -> TestEnv {
    repo_with(branch, &[])
}

/// [`repo`] with each `build` depending on `depends_on`.
fn repo_with(branch: &str, depends_on: &[&str]) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\nglobal-inputs = [\"package-lock.json\"]\n");
    env.write("package-lock.json", "{}\n");
    env.write(".gitignore", "dist/\n");
    for (name, deps) in [("ui", &[][..]), ("web", &["ui"][..]), ("site", &["web"][..]), ("lib", &[][..])] {
        env.write(
            &format!("packages/{name}/vx.toml"),
            &project_toml(name, deps, &[("build", &log_cmd(&format!("{name}#build")), depends_on)]),
        );
        env.write(&format!("packages/{name}/src/index.js"), &format!("// {name}\n"));
    }
    env.git_init(branch);
    env.git_commit_all("initial");
    env
}

fn ran(env: &TestEnv, args: &[&str]) -> Vec<String> {
    env.clear_log();
    env.vx(args).assert_success();
    env.log_set()
}

#[test]
fn committed_change_on_a_branch_selects_the_project_and_its_dependents() {
    let env = repo("main");
    env.git_branch("feature");
    env.write("packages/ui/src/index.js", "// ui, changed\n");
    env.git_commit_all("change ui");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["ui#build"], "no task of web depends on ui's");
}

#[test]
fn a_task_that_depends_on_an_affected_task_is_affected() {
    let env = repo_with("main", &["^build"]);
    env.git_branch("feature");
    env.write("packages/ui/src/index.js", "// ui, changed\n");
    env.git_commit_all("change ui");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["site#build", "ui#build", "web#build"]);
    let env = repo_with("main", &["^build"]);
    env.write("packages/site/src/index.js", "// site, changed\n");
    assert_eq!(
        ran(&env, &["run", "build", "--affected"]),
        ["site#build", "ui#build", "web#build"],
        "with its dependencies"
    );
}

#[test]
fn master_is_the_fallback_base() {
    let env = repo("master");
    env.git_branch("feature");
    env.write("packages/web/src/index.js", "// web, changed\n");
    env.git_commit_all("change web");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["web#build"]);
}

#[test]
fn uncommitted_changes_count() {
    let env = repo("main");
    env.write("packages/lib/src/index.js", "// lib, edited\n");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["lib#build"], "an unstaged edit");
    env.git(&["add", "--all"]);
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["lib#build"], "a staged edit");
}

#[test]
fn untracked_files_count_but_ignored_ones_do_not() {
    let env = repo("main");
    env.write("packages/web/dist/out.js", "ignored\n");
    assert!(ran(&env, &["run", "build", "--affected"]).is_empty(), "a git-ignored file changes nothing");
    env.write("packages/web/src/new.js", "// new\n");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["web#build"]);
}

#[test]
fn deleted_files_count() {
    let env = repo("main");
    env.git_branch("feature");
    env.remove("packages/lib/src/index.js");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["lib#build"]);
}

#[test]
fn nothing_changed_runs_nothing_and_succeeds() {
    let env = repo("main");
    let out = env.vx(&["run", "build", "--affected"]);
    out.assert_success();
    assert!(env.log().is_empty(), "{out}");
}

#[test]
fn a_changed_global_input_affects_every_project() {
    let env = repo("main");
    env.write("package-lock.json", "{ \"changed\": true }\n");
    assert_eq!(ran(&env, &["run", "build", "--affected"]), ["lib#build", "site#build", "ui#build", "web#build"]);
}

#[test]
fn explicit_revision() {
    let env = repo("main");
    env.write("packages/lib/src/index.js", "// lib 2\n");
    env.git_commit_all("change lib");
    env.write("packages/site/src/index.js", "// site 2\n");
    env.git_commit_all("change site");
    assert_eq!(ran(&env, &["run", "build", "--affected=HEAD~1"]), ["site#build"]);
    assert_eq!(ran(&env, &["run", "build", "--affected=HEAD~2"]), ["lib#build", "site#build"]);
}

#[test]
fn affected_narrows_a_filter() {
    let env = repo("main");
    env.git_branch("feature");
    env.write("packages/ui/src/index.js", "// ui, changed\n");
    env.git_commit_all("change ui");
    assert_eq!(ran(&env, &["run", "build", "--affected", "--filter", "!site"]), ["ui#build"]);
    env.write("packages/site/src/index.js", "// site, changed\n");
    assert_eq!(ran(&env, &["run", "build", "--affected", "--filter", "!site"]), ["ui#build"], "site stays out");
}

#[test]
fn changed_since_filter_selects_without_dependents_unless_asked() {
    let env = repo("main");
    env.git_branch("feature");
    env.write("packages/ui/src/index.js", "// ui, changed\n");
    env.git_commit_all("change ui");
    assert_eq!(ran(&env, &["run", "build", "--filter", "[main]"]), ["ui#build"]);
    assert_eq!(ran(&env, &["run", "build", "--filter", "...[main]"]), ["site#build", "ui#build", "web#build"]);
}

#[test]
fn show_affected_lists_the_projects() {
    let env = repo("main");
    env.write("packages/web/src/index.js", "// web, edited\n");
    let out = env.vx(&["show", "--format", "json", "--affected"]);
    out.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("show prints JSON");
    let mut names: Vec<&str> = doc["projects"]
        .as_array()
        .expect("projects is an array")
        .iter()
        .map(|p| p["name"].as_str().expect("a name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["site", "web"]);
}

#[test]
fn no_main_or_master_is_a_clear_error() {
    let env = repo("trunk");
    let out = env.vx(&["run", "build", "--affected"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("main") && line.contains("master"), "names the branches it looked for\n{out}");
    assert!(line.contains("--affected="), "says how to name a base\n{out}");
    assert!(env.log().is_empty());
}

#[test]
fn unknown_revision_is_a_usage_error() {
    let env = repo("main");
    let out = env.vx(&["run", "build", "--affected=no-such-branch"]);
    out.assert_code(2);
    assert!(out.error_line().contains("no-such-branch"), "{out}");
}

#[test]
fn outside_a_git_repository_is_a_clear_error() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/a/vx.toml", &project_toml("a", &[], &[("build", &log_cmd("a"), &[])]));
    let out = env.vx(&["run", "build", "--affected"]);
    out.assert_code(2);
    assert!(out.error_line().contains("git"), "{out}");
    assert!(env.log().is_empty());
}
