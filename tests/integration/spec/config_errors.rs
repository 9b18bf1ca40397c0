//! Configuration errors: one line on stderr (exit 2) that names the file,
//! line and column, says what is wrong and suggests the nearest valid name.

use crate::common::snapshot::{Transcript, assert_transcript};
use crate::common::{TestEnv, log_cmd, project_toml};

/// `web` depends on `ui`; each case rewrites `web`'s `vx.toml`.
fn ui_and_web(env: &TestEnv) -> Transcript<'_> {
    env.workspace(&["packages/*"]);
    env.write("packages/ui/vx.toml", &project_toml("ui", &[], &[("build", &log_cmd("ui"), &[])]));
    let mut t = Transcript::new(env);
    t.show_file("vx.toml").show_file("packages/ui/vx.toml");
    t
}

/// Writes `web`'s configuration and runs `vx ARGS`, which must fail with a
/// configuration error.
fn case(t: &mut Transcript<'_>, web_toml: &str, args: &[&str]) {
    t.write("packages/web/vx.toml", web_toml);
    let out = t.vx(args);
    out.assert_code(2);
    out.error_line();
}

#[test]
fn unknown_keys() {
    let env = TestEnv::new();
    let mut t = ui_and_web(&env);
    case(&mut t, "[project]\nname = \"web\"\n\n[tasks.build]\ncomand = \"true\"\n", &["run", "build"]);
    case(&mut t, "[project]\nname = \"web\"\ndepend-on = [\"ui\"]\n", &["show"]);
    case(
        &mut t,
        "[project]\nname = \"web\"\n\n[tasks.dev]\ncommand = \"true\"\npersistent = true\nready = { log = \"up\", prot = 1 }\n",
        &["show"],
    );
    t.write("packages/web/vx.toml", &project_toml("web", &[], &[]));
    t.write("vx.toml", "[workspace]\nprojets = [\"packages/*\"]\n");
    t.vx(&["show"]).assert_code(2).error_line();
    assert!(env.log().is_empty(), "nothing runs after a config error");
    assert_transcript!(t);
}

#[test]
fn wrong_types() {
    let env = TestEnv::new();
    let mut t = ui_and_web(&env);
    let build = |extra: &str| format!("[project]\nname = \"web\"\n\n[tasks.build]\n{extra}\n");
    case(&mut t, &build("command = \"true\"\ncache = \"yes\""), &["run", "build"]);
    case(&mut t, &build("command = 42"), &["run", "build"]);
    case(&mut t, &build("command = \"true\"\ntimeout = \"10\""), &["run", "build"]);
    case(&mut t, &build("inputs = [\"src/**\"]"), &["run", "build"]);
    assert_transcript!(t);
}

#[test]
fn unknown_references() {
    let env = TestEnv::new();
    let mut t = ui_and_web(&env);
    case(&mut t, "[project]\nname = \"web\"\ndepends-on = [\"uii\"]\n", &["run", "build"]);
    case(&mut t, &project_toml("web", &[], &[("build", "true", &["uii#build"])]), &["run", "build"]);
    case(
        &mut t,
        "[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\ndepends-on = [\"ui#biuld\"]\n",
        &["run", "build"],
    );
    case(
        &mut t,
        &project_toml("web", &[], &[("codegen", "true", &[]), ("build", "true", &["codegne"])]),
        &["run", "build"],
    );
    assert_transcript!(t);
}

#[test]
fn syntax_errors() {
    let env = TestEnv::new();
    let mut t = ui_and_web(&env);
    case(&mut t, "[project]\nname = \"web\n", &["run", "build"]);
    case(&mut t, "[project\nname = \"web\"\n", &["run", "build"]);
    assert_transcript!(t);
}

#[test]
fn package_json_errors() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    t.write("package.json", "{ \"workspaces\": [\"packages/*\"] }\n");
    t.write("packages/a/package.json", "{\n  \"name\": \"a\",\n  \"scripts\": { \"build\": 1 }\n}\n");
    t.vx(&["run", "build"]).assert_code(2).error_line();
    t.write("packages/a/package.json", "{\n  \"name\": \"a\",\n");
    t.vx(&["run", "build"]).assert_code(2).error_line();
    assert_transcript!(t);
}

#[test]
fn workspace_shape() {
    let env = TestEnv::new();
    let mut t = ui_and_web(&env);
    case(&mut t, "[workspace]\nprojects = [\"x/*\"]\n\n[project]\nname = \"web\"\n", &["show"]);
    case(&mut t, &project_toml("ui", &[], &[]), &["show"]);
    case(
        &mut t,
        "[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\noutputs = [\"../ui/dist/**\"]\n",
        &["run", "build"],
    );
    assert_transcript!(t);
}

#[test]
fn no_workspace() {
    let env = TestEnv::new();
    let mut t = Transcript::new(&env);
    t.note("An empty directory: no vx.toml, no package.json.");
    t.vx(&["run", "build"]).assert_code(2).error_line();
    t.vx(&["show"]).assert_code(2).error_line();
    assert_transcript!(t);
}
