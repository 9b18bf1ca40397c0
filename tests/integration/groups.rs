//! Group tasks: a `[tasks.NAME]` table with `depends-on` and no command
//! (and no script of that name) runs nothing, succeeds when its
//! dependencies do, is never cached, and shows as a group in `--dry`,
//! `--graph` and the run summary.

use crate::common::{TestEnv, log_cmd, slow_log_cmd};

/// `app` with `lint`, `test` (uncached) and `build` (cached, writing
/// `dist/`), and a `ci` group that waits on all three.
fn ci_group() -> TestEnv {
    ci_group_with_lint(&slow_log_cmd("lint"))
}

fn ci_group_with_lint(lint: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/app/src/main.txt", "one\n");
    env.write(
        "packages/app/vx.toml",
        &format!(
            "[tasks.lint]\ncommand = {lint:?}\ninputs = [\"src/**\"]\ncache = false\n\n\
             [tasks.test]\ncommand = {test:?}\ninputs = [\"src/**\"]\ncache = false\n\n\
             [tasks.build]\ncommand = {build:?}\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n\n\
             [tasks.ci]\ndepends-on = [\"lint\", \"test\", \"build\"]\n",
            lint = lint,
            test = slow_log_cmd("test"),
            build = format!("mkdir -p dist && cp src/main.txt dist/ && {}", log_cmd("build")),
        ),
    );
    env
}

#[test]
fn a_group_runs_nothing_and_succeeds_when_its_dependencies_do() {
    let env = ci_group();
    let out = env.vx(&["run", "app#ci"]);
    out.assert_success();
    assert_eq!(env.log_set(), ["build", "lint", "test"], "the group's dependencies ran, and nothing else\n{out}");
    assert_eq!(out.task_lines("app#ci"), ["group: its dependencies succeeded"], "{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.groups), (3, 3, 1), "{out}");
}

#[test]
fn a_group_is_skipped_when_a_dependency_fails() {
    let env = ci_group_with_lint("exit 3");
    for continue_mode in [&[][..], &["--continue"][..]] {
        let out = env.vx(&[&["run", "app#ci"][..], continue_mode].concat());
        out.assert_code(1);
        assert!(out.summary_entry("skipped", "app#ci").contains("dependency app#lint did not succeed"), "{out}");
        assert_eq!(out.summary().groups, 0, "a skipped group did not settle\n{out}");
        assert!(out.task_lines("app#ci").is_empty(), "{out}");
    }
}

#[test]
fn a_group_is_never_cached_but_its_dependencies_are() {
    let env = ci_group();
    env.vx(&["run", "app#ci"]).assert_success();
    env.clear_log();
    let again = env.vx(&["run", "app#ci"]);
    again.assert_success();
    assert!(again.stdout.contains("app#build: cache hit"), "{again}");
    assert!(!again.stdout.contains("app#ci: cache"), "a group is not looked up\n{again}");
    assert_eq!(again.summary().cached, 1, "{again}");
    assert_eq!(again.summary().groups, 1, "{again}");
    assert_eq!(env.log_set(), ["lint", "test"], "the uncached tasks ran again; build came from the cache");
}

#[test]
fn dry_json_and_graph_show_the_group() {
    let env = ci_group();
    let out = env.vx(&["run", "app#ci", "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("--dry=json prints JSON");
    let tasks = plan["tasks"].as_array().expect("tasks");
    let ci = tasks.iter().find(|t| t["id"] == "app#ci").expect("app#ci is planned");
    assert_eq!(ci["group"], true, "{ci}");
    assert_eq!(ci["command"], serde_json::Value::Null, "{ci}");
    assert_eq!(ci["cache_status"], "group", "{ci}");
    let mut deps: Vec<&str> = ci["dependencies"].as_array().expect("deps").iter().filter_map(|d| d.as_str()).collect();
    deps.sort_unstable();
    assert_eq!(deps, ["app#build", "app#lint", "app#test"], "{ci}");
    let build = tasks.iter().find(|t| t["id"] == "app#build").expect("app#build is planned");
    assert!(build.get("group").is_none(), "only a group carries `group`: {build}");

    let graph = env.vx(&["run", "app#ci", "--graph"]);
    graph.assert_success();
    assert!(graph.stdout.contains("\"app#ci\" [style=dashed, label=\"app#ci (group)\"];"), "{graph}");
    assert!(graph.stdout.contains("\"app#build\";"), "{graph}");

    let text = env.vx(&["run", "app#ci", "--dry"]);
    text.assert_success();
    let line = text.stdout.lines().find(|l| l.starts_with("app#ci ")).unwrap_or_default();
    assert_eq!(line.split_whitespace().nth(1), Some("group"), "its status says it is a group\n{text}");
    let verbose = env.vx(&["run", "app#ci", "--dry", "--verbose"]);
    verbose.assert_success();
    assert!(verbose.stdout.contains("a group"), "{verbose}");
}

#[test]
fn a_dependent_of_a_group_is_cached_and_keyed_on_what_the_group_waits_for() {
    let env = ci_group();
    let toml = env.read("packages/app/vx.toml");
    env.write(
        "packages/app/vx.toml",
        &format!(
            "{toml}\n[tasks.release]\ncommand = {:?}\ndepends-on = [\"ci\"]\ninputs = [\"src/**\"]\n",
            log_cmd("release")
        ),
    );
    env.vx(&["run", "app#release"]).assert_success();
    let again = env.vx(&["run", "app#release"]);
    assert!(again.stdout.contains("app#release: cache hit"), "a group does not stop its dependents' caching\n{again}");
    env.write("packages/app/src/main.txt", "two\n");
    env.clear_log();
    let changed = env.vx(&["run", "app#release"]);
    changed.assert_success();
    assert!(env.log().contains(&"release".to_string()), "a change under the group reruns its dependent\n{changed}");
}

#[test]
fn a_group_cannot_declare_outputs() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/app/vx.toml", "[tasks.ci]\ndepends-on = []\noutputs = [\"dist/**\"]\n");
    let out = env.vx(&["run", "ci"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(
        line.contains("packages/app/vx.toml:1:") && line.contains("is a group, which cannot have `outputs`"),
        "{out}"
    );
}

#[test]
fn a_table_without_command_or_depends_on_is_still_an_error() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/app/vx.toml", "[tasks.ci]\ninputs = [\"src/**\"]\n");
    let out = env.vx(&["run", "ci"]);
    out.assert_code(2);
    assert!(out.error_line().contains("task `ci` has no command"), "{out}");
}

#[test]
fn arguments_after_dashes_for_a_group_are_refused_not_dropped() {
    let env = ci_group();
    for args in [&["run", "app#ci", "--", "--fix"][..], &["run", "ci", "--", "--fix"], &["query", "ci", "--", "--fix"]]
    {
        let out = env.vx(args);
        out.assert_code(2);
        let line = out.error_line();
        assert!(line.contains("names only groups (app#ci)") && line.contains("after `--`"), "{args:?}\n{out}");
        assert!(out.stderr.contains("name the tasks that take them"), "{out}");
    }
    assert!(env.log().is_empty(), "nothing ran");
    let out = env.vx(&["run", "app#ci"]);
    out.assert_success();
    assert_eq!(env.log_set(), ["build", "lint", "test"], "without arguments it runs as before\n{out}");
}

#[test]
fn arguments_after_dashes_reach_the_named_tasks_with_a_command_and_the_groups_beside_them_are_named() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // `check` runs a command in `web` and is a group in `ui`, as a package
    // without the script is in a workspace translated from turbo.
    env.write("packages/web/vx.toml", &format!("[tasks.check]\ncommand = {:?}\n", log_cmd("web-check")));
    env.write(
        "packages/ui/vx.toml",
        &format!("[tasks.lint]\ncommand = {:?}\n\n[tasks.check]\ndepends-on = [\"lint\"]\n", log_cmd("ui-lint")),
    );
    let out = env.vx(&["run", "check", "--", "--strict"]);
    out.assert_success();
    assert_eq!(
        env.log_set(),
        ["ui-lint", "web-check --strict"],
        "the task with a command takes them, the group's member does not\n{out}"
    );
    let warning = out.stderr.lines().find(|l| l.contains("after `--`")).unwrap_or_else(|| panic!("no note\n{out}"));
    assert!(warning.contains("ui#check"), "names the group that takes none: {warning}");
    let query = env.vx(&["query", "check", "--format", "json", "--", "--strict"]);
    query.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&query.stdout).expect("JSON");
    let command =
        |id: &str| doc["tasks"].as_array().expect("tasks").iter().find(|t| t["id"] == id).expect(id)["command"].clone();
    assert!(command("web#check").as_str().expect("a shell command").ends_with(" --strict"), "{doc:#}");
    assert!(
        command("ui#lint").as_str().expect("a shell command").ends_with("\""),
        "a dependency runs as configured: {doc:#}"
    );
    assert_eq!(command("ui#check"), serde_json::Value::Null);
}
