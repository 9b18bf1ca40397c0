//! Strict configuration: unknown keys, wrong types and unknown references
//! are one-line errors (exit 2) that name the file, line and column and
//! suggest the nearest valid name.

use crate::common::{TestEnv, log_cmd, project_toml};

/// A two-project workspace (`web` depends on `ui`) with `web`'s `vx.toml`
/// replaced by `web_toml`.
fn env_with_web(web_toml: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/ui/vx.toml", &project_toml("ui", &[], &[("build", &log_cmd("ui"), &[])]));
    env.write("packages/web/vx.toml", web_toml);
    env
}

#[test]
fn unknown_task_key_names_file_line_column_and_suggests() {
    let env = env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ncomand = \"true\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:5:1:"), "file:line:column of the key\n{out}");
    assert!(line.contains("unknown key `comand`"), "{out}");
    assert!(line.contains("did you mean `command`?"), "{out}");
    assert!(env.log().is_empty(), "nothing runs after a config error");
}

#[test]
fn unknown_project_key_suggests_depends_on() {
    let env = env_with_web("[project]\nname = \"web\"\ndepend-on = [\"ui\"]\n");
    let out = env.vx(&["show"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:3:1:"), "{out}");
    assert!(line.contains("unknown key `depend-on`"), "{out}");
    assert!(line.contains("did you mean `depends-on`?"), "{out}");
}

#[test]
fn unknown_key_in_the_root_workspace_table() {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojets = [\"packages/*\"]\n");
    let out = env.vx(&["show"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("vx.toml:2:1:"), "{out}");
    assert!(line.contains("did you mean `projects`?"), "{out}");
}

#[test]
fn wrong_type_names_the_position_and_the_expected_type() {
    let env = env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\ncache = \"yes\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:6:9:"), "points at the value\n{out}");
    assert!(line.contains("boolean"), "says what was expected\n{out}");
}

#[test]
fn wrong_command_type_names_both_accepted_forms() {
    let env = env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ncommand = 42\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:5:11:"), "{out}");
    assert!(line.contains("string") && line.contains("array"), "{out}");
}

#[test]
fn unknown_project_in_project_depends_on_suggests() {
    let env = env_with_web("[project]\nname = \"web\"\ndepends-on = [\"uii\"]\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:3:15:"), "{out}");
    assert!(line.contains("unknown project `uii`"), "{out}");
    assert!(line.contains("did you mean `ui`?"), "{out}");
}

#[test]
fn unknown_project_in_task_depends_on_suggests() {
    let env = env_with_web(&project_toml("web", &[], &[("build", "true", &["uii#build"])]));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:"), "{out}");
    assert!(line.contains("unknown project `uii`"), "{out}");
    assert!(line.contains("did you mean `ui`?"), "{out}");
}

#[test]
fn unknown_task_of_another_project_suggests() {
    let env =
        env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\ndepends-on = [\"ui#biuld\"]\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:6:15:"), "{out}");
    assert!(line.contains("project `ui` has no task `biuld`"), "{out}");
    assert!(line.contains("did you mean `build`?"), "{out}");
}

#[test]
fn unknown_local_task_suggests() {
    let env = env_with_web(&project_toml("web", &[], &[("codegen", "true", &[]), ("build", "true", &["codegne"])]));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:"), "{out}");
    assert!(line.contains("no task `codegne`"), "{out}");
    assert!(line.contains("did you mean `codegen`?"), "{out}");
}

#[test]
fn invalid_toml_syntax_is_located() {
    let env = env_with_web("[project]\nname = \"web\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:2:"), "{out}");
}

#[test]
fn invalid_package_json_is_located() {
    let env = TestEnv::new();
    env.write("package.json", "{ \"workspaces\": [\"packages/*\"] }\n");
    env.write("packages/a/package.json", "{\n  \"name\": \"a\",\n  \"scripts\": { \"build\": 1 }\n}\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/a/package.json:3:"), "{out}");
}

#[test]
fn no_workspace_is_a_config_error_with_a_hint() {
    let env = TestEnv::new();
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("no vx workspace found"), "{out}");
    assert!(line.contains("[workspace]"), "says how to make one\n{out}");
}

#[test]
fn duplicate_project_names_are_refused() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/one/vx.toml", &project_toml("same", &[], &[]));
    env.write("packages/two/vx.toml", &project_toml("same", &[], &[]));
    let out = env.vx(&["show"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("`same`") && line.contains("packages/one") && line.contains("packages/two"), "{out}");
}

#[test]
fn workspace_table_outside_the_root_is_refused() {
    let env = env_with_web("[workspace]\nprojects = [\"x/*\"]\n\n[project]\nname = \"web\"\n");
    let out = env.vx(&["show"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml") && line.contains("[workspace]"), "{out}");
}

#[test]
fn outputs_that_leave_the_project_are_refused() {
    let env =
        env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\noutputs = [\"../ui/dist/**\"]\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:6:"), "{out}");
    assert!(line.contains("../ui/dist/**"), "{out}");
}

#[test]
fn a_bad_duration_is_located() {
    let env = env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\ntimeout = \"10\"\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:6:11:"), "{out}");
    assert!(line.contains("10s") || line.contains("unit"), "says how to write it\n{out}");
}

#[test]
fn a_task_without_a_command_is_refused() {
    // With `depends-on` it would be a group (tests/integration/groups.rs).
    let env = env_with_web("[project]\nname = \"web\"\n\n[tasks.build]\ninputs = [\"src/**\"]\n");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/web/vx.toml:4:") && line.contains("command"), "{out}");
}
