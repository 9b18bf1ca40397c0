//! Turborepo compatibility: workspaces written for turbo, translated by
//! `vx init` and run by vx, plan, order and cache as turbo does; where vx
//! deliberately differs, `vx init` says so. One test runs a real `turbo`
//! (`$VX_TEST_TURBO`, which `scripts/test` installs) on the same fixture
//! and compares the two plans.

use std::path::PathBuf;

use crate::common::{TestEnv, assert_before, log_cmd};

/// The root `package.json` of an npm workspace over `packages/*`, with
/// extra root scripts.
fn root_package(scripts: &str) -> String {
    format!(
        r#"{{ "name": "root", "private": true, "packageManager": "npm@10.8.2", "workspaces": ["packages/*"], "scripts": {{ {scripts} }} }}"#
    )
}

/// A package's `package.json`: name, workspace dependencies, scripts.
fn package(name: &str, deps: &[&str], scripts: &[(&str, &str)]) -> String {
    let deps: Vec<String> = deps.iter().map(|d| format!("{d:?}: \"*\"")).collect();
    let scripts: Vec<String> = scripts.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    format!(
        r#"{{ "name": {name:?}, "dependencies": {{ {} }}, "scripts": {{ {} }} }}"#,
        deps.join(", "),
        scripts.join(", ")
    )
}

/// `lib` ← `mid` ← `app`; `mid` has `codegen` but no `build`, so turbo
/// keeps `mid#build` as a no-op that still waits on `mid#codegen`.
fn noop_chain() -> TestEnv {
    let env = TestEnv::new();
    env.write("package.json", &root_package(r#""build": "turbo run build""#));
    env.write(
        "turbo.json",
        r#"{
  // JSONC, as turbo reads it: comments and trailing commas.
  "$schema": "https://turborepo.com/schema.json",
  "tasks": {
    "build": { "dependsOn": ["^build", "codegen"], "outputs": ["dist/**"], },
    /* codegen has no settings */
    "codegen": {},
  },
}
"#,
    );
    env.write("packages/lib/package.json", &package("lib", &[], &[("build", &log_cmd("lib-build"))]));
    env.write("packages/mid/package.json", &package("mid", &["lib"], &[("codegen", &log_cmd("mid-codegen"))]));
    env.write("packages/app/package.json", &package("app", &["mid"], &[("build", &log_cmd("app-build"))]));
    env
}

#[test]
fn a_package_lacking_the_script_keeps_a_noop_whose_dependencies_apply() {
    let env = noop_chain();
    env.vx(&["init"]).assert_success();
    assert!(
        env.read("packages/mid/vx.toml").contains("[tasks.build]\ndepends-on = [\"^build\", \"codegen\"]\n"),
        "mid#build is a group that waits on mid#codegen\n{}",
        env.read("packages/mid/vx.toml")
    );
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let log = env.log();
    assert_eq!(env.log_set(), ["app-build", "lib-build", "mid-codegen"], "{out}");
    assert_before(&log, "mid-codegen", "app-build");
    assert_before(&log, "lib-build", "app-build");
    assert!(!log.iter().any(|l| l.contains("turbo")), "the root's `turbo run build` script is not a task");
}

#[test]
fn jsonc_errors_name_the_line_and_column() {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    env.write("turbo.json", "{\n  // fine\n  \"tasks\": {\n    build: {}\n  }\n}\n");
    let out = env.vx(&["init"]);
    out.assert_code(2);
    assert!(out.error_line().starts_with("vx: error: turbo.json:4:5: key must be a string"), "{out}");
}

#[test]
fn turbo_jsonc_is_read_and_both_files_are_refused() {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    env.write("packages/lib/package.json", &package("lib", &[], &[("build", "true")]));
    env.write("turbo.jsonc", "{ \"tasks\": { \"build\": { \"outputs\": [\"dist/**\"] } } } // jsonc\n");
    let out = env.vx(&["init"]);
    out.assert_success();
    assert!(out.stdout.ends_with("from turbo.jsonc; 0 setting(s) not translated\n"), "{out}");
    assert!(env.read("packages/lib/vx.toml").contains("outputs = [\"dist/**\"]"), "{}", env.read("vx.toml"));

    env.write("turbo.json", "{}");
    let both = env.vx(&["init", "--force"]);
    both.assert_code(2);
    assert!(both.error_line().contains("both turbo.json and turbo.jsonc exist"), "{both}");
}

/// `web` has its own `turbo.json`: it adds `.next/**` to `build`'s outputs
/// and defines `typecheck`, a task the root file does not know.
fn package_config() -> TestEnv {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    env.write(
        "turbo.json",
        r#"{ "tasks": { "build": { "outputs": ["dist/**"], "outputLogs": "new-only" }, "lint": { "outputs": ["lint.txt"] } } }"#,
    );
    let build = format!("mkdir -p dist .next && echo d > dist/a && echo n > .next/b && {}", log_cmd("web-build"));
    env.write(
        "packages/web/package.json",
        &package("web", &[], &[("build", &build), ("typecheck", &log_cmd("web-typecheck")), ("lint", "true")]),
    );
    env.write("packages/web/src/index.ts", "export {};\n");
    env.write(
        "packages/web/turbo.json",
        r#"{
  "extends": ["//"],
  "tasks": {
    "build": { "outputs": ["$TURBO_EXTENDS$", ".next/**"] },
    "lint": { "outputs": [".lint/**"], "outputLogs": "errors-only" },
    "typecheck": { "dependsOn": ["build"], "inputs": ["src/**"] }
  }
}"#,
    );
    env
}

#[test]
fn a_package_turbo_json_adds_tasks_and_outputs() {
    let env = package_config();
    let out = env.vx(&["init"]);
    out.assert_success();
    let web = env.read("packages/web/vx.toml");
    assert!(web.contains("[tasks.build]\ndepends-on = []\noutputs = [\"dist/**\", \".next/**\"]\n"), "{web}");
    assert!(
        web.contains("[tasks.lint]\ndepends-on = []\noutputs = [\".lint/**\"]\n"),
        "outputs replace without $TURBO_EXTENDS$\n{web}"
    );
    assert!(web.contains("[tasks.typecheck]\ndepends-on = [\"build\"]\ninputs = [\"src/**\"]\n"), "{web}");

    env.vx(&["run", "typecheck"]).assert_success();
    assert_eq!(env.log(), ["web-build", "web-typecheck"]);
    env.clear_log();
    let again = env.vx(&["run", "typecheck"]);
    again.assert_success();
    assert!(again.stdout.contains("web#build: cache hit"), "build's own outputs do not move its key\n{again}");
    assert!(again.stdout.contains("web#typecheck: cache hit"), "{again}");
    assert!(env.log().is_empty(), "nothing ran the second time: {:?}", env.log());
}

#[test]
fn each_note_names_the_file_that_set_the_key() {
    let env = package_config();
    let out = env.vx(&["init", "--dry"]);
    out.assert_success();
    assert!(
        out.stdout.contains("not translated: turbo.json: tasks.build.outputLogs: "),
        "the root file set build's outputLogs, though web overrides build\n{out}"
    );
    assert!(out.stdout.contains("not translated: packages/web/turbo.json: tasks.lint.outputLogs: "), "{out}");
    assert!(!out.stdout.contains("packages/web/turbo.json: tasks.build.outputLogs"), "{out}");
}

/// As in Turborepo, a package `turbo.json` turbo cannot load fails the
/// runs that include the package, not the workspace: with no `vx.toml`
/// (turbo.json read natively) and through `vx init`, which translates the
/// rest and lists what turbo would refuse.
#[test]
fn an_invalid_package_turbo_json_fails_only_the_runs_that_include_it() {
    let env = package_config();
    env.write("packages/api/package.json", &package("api", &[], &[("build", &log_cmd("api-build"))]));
    let extends = "packages/web/turbo.json: a package turbo.json needs `\"extends\": [\"//\"]`";
    env.write("packages/web/turbo.json", r#"{ "tasks": { "build": {} } }"#);
    let out = env.vx(&["run", "build", "--filter", "api"]);
    out.assert_success();
    assert_eq!(env.log(), ["api-build"], "{out}");
    assert!(out.stderr.contains(extends) && out.stderr.contains("not needed by this run"), "a warning\n{out}");

    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains(extends), "{out}");
    assert!(line.contains("add `\"extends\": [\"//\"]`"), "the hint says how to mend it\n{out}");
    assert_eq!(env.log(), ["api-build"], "nothing ran\n{out}");
    let info = env.vx(&["info"]);
    assert!(info.stdout.lines().any(|l| l.starts_with("refused") && l.contains(extends)), "{info}");

    env.write("packages/web/turbo.json", r#"{ "extends": ["//"], "tasks": { "web#build": {} } }"#);
    let out = env.vx(&["run", "web#typecheck"]);
    out.assert_code(2);
    assert!(out.error_line().contains("tasks.web#build: a package turbo.json may not name a package's task"), "{out}");

    let out = env.vx(&["init"]);
    out.assert_success();
    assert!(
        out.stdout.contains("refused by turbo when a run includes web: packages/web/turbo.json: tasks.web#build"),
        "vx init lists what turbo refuses and writes the rest\n{out}"
    );
    assert!(env.root().join("vx.toml").exists() && env.root().join("packages/api/vx.toml").exists(), "{out}");
}

#[test]
fn a_self_dependency_fails_the_runs_that_include_it_as_turbo_does() {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    let scripts = [("build4", "true"), ("lint", &*log_cmd("lint"))];
    env.write("packages/lib-b/package.json", &package("lib-b", &[], &scripts));
    env.write("turbo.json", r#"{ "tasks": { "build4": { "dependsOn": ["build4"] }, "lint": {} } }"#);
    let line = "vx: error: turbo.json: tasks.build4.dependsOn: task `lib-b#build4` depends on itself; remove it from \
                dependsOn; turbo refuses it too";
    let out = env.vx(&["run", "build4"]);
    out.assert_code(2);
    assert_eq!(out.error_line(), line);
    let out = env.vx(&["run", "lint"]);
    out.assert_success();
    assert_eq!(env.log(), ["lint"], "the rest of the workspace runs\n{out}");
    let out = env.vx(&["init"]);
    out.assert_success();
    assert!(
        out.stdout.contains("refused by turbo when a run includes lib-b#build4: turbo.json: tasks.build4"),
        "{out}"
    );
}

#[test]
fn root_tasks_are_translated_and_other_root_scripts_are_not_tasks() {
    let env = TestEnv::new();
    env.write(
        "package.json",
        &root_package(&format!(r#""build": "turbo run build", "check": {:?}"#, log_cmd("root-check"))),
    );
    env.write(
        "turbo.json",
        r#"{ "tasks": { "build": { "dependsOn": ["//#check"] }, "//#check": { "inputs": ["*.json"] } } }"#,
    );
    env.write("packages/app/package.json", &package("app", &[], &[("build", &log_cmd("app-build"))]));
    let out = env.vx(&["init"]);
    out.assert_success();
    let root = env.read("vx.toml");
    assert!(root.contains("[tasks.check]\ndepends-on = []\ninputs = [\"*.json\"]\ncache = true\n"), "{root}");
    let run = env.vx(&["run", "build"]);
    run.assert_success();
    assert_eq!(env.log(), ["root-check", "app-build"], "the root's `build` script (turbo run build) is not run\n{run}");
    let show = env.vx(&["show", "//"]);
    show.assert_success();
    assert!(!show.stdout.contains("  build:"), "root scripts without a [tasks] table are not tasks\n{show}");
    // The root package is `//`, as in turbo's ids: `//#check` runs it,
    // `--filter //` selects it, and the plan spells it so.
    assert!(root.contains("name = \"//\""), "{root}");
    let run = env.vx(&["run", "//#check"]);
    run.assert_success();
    assert!(run.stdout.contains("//#check"), "{run}");
    let dry = env.vx(&["run", "check", "--filter", "//", "--dry"]);
    dry.assert_success();
    assert!(dry.stdout.contains("//#check") && !dry.stdout.contains("app#"), "{dry}");
}

/// `//` names the root project whatever it is called, wherever a project
/// is named: a task id, `--filter`, `vx show`.
#[test]
fn double_slash_is_the_root_project_in_any_workspace() {
    let env = TestEnv::new();
    let check = format!("[tasks.check]\ncommand = {:?}\n", log_cmd("top-check"));
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n\n[project]\nname = \"top\"\n\n{check}"));
    env.write("packages/app/package.json", &package("app", &[], &[("check", &log_cmd("app-check"))]));
    env.vx(&["run", "//#check"]).assert_success();
    assert_eq!(env.log(), ["top-check"]);
    env.vx(&["run", "check", "--filter", "//", "--force"]).assert_success();
    assert_eq!(env.log(), ["top-check", "top-check"], "--filter // selects the root alone");
    let show = env.vx(&["show", "//"]);
    show.assert_success();
    assert!(show.stdout.contains("top"), "{show}");
}

#[test]
fn a_single_package_repository_is_its_own_project() {
    let env = TestEnv::new();
    env.write(
        "package.json",
        &format!(
            r#"{{ "name": "solo", "scripts": {{ "build": {:?}, "test": {:?} }} }}"#,
            format!("mkdir -p dist && echo x > dist/x && {}", log_cmd("solo-build")),
            log_cmd("solo-test")
        ),
    );
    env.write("src/index.js", "1;\n");
    env.write("node_modules/dep/package.json", r#"{ "name": "dep", "scripts": { "test": "exit 1" } }"#);
    let out = env.vx(&["run", "test"]);
    out.assert_success();
    assert_eq!(env.log(), ["solo-test"], "{out}");
    let inside = env.vx_in(env.root().join("node_modules/dep"), &["show", "--format", "json"]);
    inside.assert_success();
    assert!(
        inside.stdout.contains("\"solo\"") && !inside.stdout.contains("\"dep\""),
        "an installed package is never the root\n{inside}"
    );

    env.write(
        "turbo.json",
        r#"{ "tasks": { "build": { "outputs": ["dist/**"] }, "test": { "dependsOn": ["build"] } } }"#,
    );
    env.vx(&["init"]).assert_success();
    let root = env.read("vx.toml");
    assert!(root.contains("[workspace]\nprojects = []\n"), "{root}");
    assert!(root.contains("[tasks.test]\ndepends-on = [\"build\"]\n"), "{root}");
    env.clear_log();
    env.vx(&["run", "test"]).assert_success();
    assert_eq!(env.log(), ["solo-build", "solo-test"]);
    env.clear_log();
    let again = env.vx_in(env.root().join("src"), &["run", "build"]);
    again.assert_success();
    assert!(again.stdout.contains("solo#build: cache hit"), "{again}");
}

#[test]
fn a_dependency_on_a_persistent_task_is_kept_and_the_difference_said() {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    env.write("packages/web/package.json", &package("web", &[], &[("dev", "sleep 30"), ("e2e", &log_cmd("web-e2e"))]));
    env.write(
        "turbo.json",
        r#"{ "tasks": { "dev": { "persistent": true, "cache": false }, "e2e": { "dependsOn": ["dev"] } } }"#,
    );
    let out = env.vx(&["init"]);
    out.assert_success();
    assert!(
        out.stdout.lines().any(|l| l.starts_with(
            "differs from turbo: turbo.json: tasks.e2e.dependsOn: `dev` is persistent: turbo refuses a dependency on a persistent task; vx keeps it"
        )),
        "{out}"
    );
    assert!(env.read("packages/web/vx.toml").contains("[tasks.e2e]\ndepends-on = [\"dev\"]\n"));
}

#[test]
fn continue_takes_turbos_dependencies_successful() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/vx.toml",
        &format!(
            "[tasks.bad]\ncommand = \"exit 1\"\n\n[tasks.after-bad]\ncommand = {:?}\ndepends-on = [\"bad\"]\n\n\
             [tasks.other]\ncommand = {:?}\n",
            log_cmd("after-bad"),
            log_cmd("other")
        ),
    );
    let out = env.vx(&["run", "p#after-bad", "p#other", "--concurrency", "1", "--continue=dependencies-successful"]);
    out.assert_code(1);
    assert_eq!(env.log(), ["other"], "unrelated work goes on, the failure's dependents do not run\n{out}");
    assert!(out.summary_entry("skipped", "p#after-bad").contains("dependency p#bad did not succeed"), "{out}");
}

/// The `turbo` binary: `$VX_TEST_TURBO`, else where `scripts/test`
/// installs it; `None` (the test is skipped, saying why) only when neither
/// is there and the variable is unset.
pub(super) fn turbo_bin() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("VX_TEST_TURBO").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "VX_TEST_TURBO points at {}, which is not a file", path.display());
        return Some(path);
    }
    let installed = PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
        .join(".cache/vx/turbo-2.11.11/node_modules/.bin/turbo");
    installed.is_file().then_some(installed)
}

/// Every planned task of a `--dry=json`: id → (runs a command?, dependencies).
pub(super) type Planned = std::collections::BTreeMap<String, (bool, Vec<String>)>;

/// turbo's `--dry=json` plan of `task`, ids renamed by `rename`.
pub(super) fn turbo_plan(
    env: &TestEnv,
    turbo: &std::path::Path,
    task: &str,
    rename: impl Fn(&str) -> String,
) -> Planned {
    let vars = [("TURBO_TELEMETRY_DISABLED", "1"), ("TURBO_NO_UPDATE_NOTIFIER", "1"), ("DO_NOT_TRACK", "1")];
    let out = env.tool_in("", turbo, &["run", task, "--dry=json"], &vars);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("turbo --dry=json is JSON");
    planned_in_turbo_schema(&plan, rename)
}

/// The tasks of a plan in turbo's `--dry=json` schema, ids renamed.
fn planned_in_turbo_schema(plan: &serde_json::Value, rename: impl Fn(&str) -> String) -> Planned {
    plan["tasks"]
        .as_array()
        .expect("turbo lists tasks")
        .iter()
        .map(|t| {
            let deps = t["dependencies"].as_array().expect("dependencies").iter();
            let mut deps: Vec<String> = deps.map(|d| rename(d.as_str().expect("a task id"))).collect();
            deps.sort();
            (rename(t["taskId"].as_str().expect("taskId")), (t["command"] != "<NONEXISTENT>", deps))
        })
        .collect()
}

/// vx's `--dry=json` plan of `task`, after `vx init`.
fn vx_plan(env: &TestEnv, task: &str) -> Planned {
    env.vx(&["init"]).assert_success();
    vx_plan_native(env, task)
}

/// vx's `--dry=json` plan of `task` as the workspace is: with no
/// `vx.toml`, turbo.json read natively.
pub(super) fn vx_plan_native(env: &TestEnv, task: &str) -> Planned {
    let out = env.vx(&["run", task, "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("vx --dry=json is JSON");
    plan["tasks"]
        .as_array()
        .expect("vx lists tasks")
        .iter()
        .map(|t| {
            let deps = t["dependencies"].as_array().expect("dependencies").iter();
            let mut deps: Vec<String> = deps.map(|d| d.as_str().expect("a task id").to_string()).collect();
            deps.sort();
            (t["id"].as_str().expect("id").to_string(), (t.get("group").is_none(), deps))
        })
        .collect()
}

#[test]
fn turbo_and_vx_plan_the_same_tasks() {
    let Some(turbo) = turbo_bin() else {
        eprintln!("skipped: no turbo installed; scripts/test installs it and sets VX_TEST_TURBO");
        return;
    };
    let env = noop_chain();
    env.write(
        "turbo.json",
        r#"{
  // The same plan in both tools: no-ops, a package file, a root task.
  "tasks": {
    "build": { "dependsOn": ["^build", "codegen"], "outputs": ["dist/**"], },
    "codegen": {},
    "//#lint": {},
  },
}
"#,
    );
    env.write(
        "packages/app/turbo.json",
        r#"{ "extends": ["//"], "tasks": { "build": { "dependsOn": ["$TURBO_EXTENDS$", "//#lint"] } } }"#,
    );
    // Root tasks are `//#task` in both tools.
    let by_turbo = turbo_plan(&env, &turbo, "build", str::to_string);
    assert!(by_turbo.contains_key("mid#build") && by_turbo.contains_key("//#lint"), "{by_turbo:?}");
    assert_eq!(
        vx_plan_native(&env, "build"),
        by_turbo,
        "with no vx.toml, vx reads turbo.json and plans what turbo plans"
    );
    // `--dry=json --format turbo` is read by the same parser as turbo's.
    let out = env.vx(&["run", "build", "--dry=json", "--format", "turbo"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(planned_in_turbo_schema(&plan, str::to_string), by_turbo, "turbo's schema, the same plan");
    let tasks = plan["tasks"].as_array().expect("tasks");
    let lib = tasks.iter().find(|t| t["taskId"] == "lib#build").expect("lib#build");
    assert_eq!((&lib["package"], &lib["task"]), (&"lib".into(), &"build".into()), "{lib}");
    assert_eq!(lib["directory"], "packages/lib", "{lib}");
    assert_eq!(lib["cache"]["status"], "MISS", "{lib}");
    assert_eq!(lib["hash"].as_str().map(str::len), Some(16), "{lib}");
    assert!(lib["dependents"].as_array().is_some_and(|d| d.iter().any(|x| x == "mid#build")), "{lib}");
    assert_eq!(
        env.vx(&["run", "build", "--format", "turbo"]).error_line(),
        "vx: error: --format turbo is the schema of --dry=json; run `vx run TASK --dry=json --format turbo`"
    );
    assert_eq!(
        vx_plan(&env, "build"),
        by_turbo,
        "vx plans what turbo plans: the same tasks, no-ops as groups, the same edges"
    );
}

#[test]
fn turbo_and_vx_plan_the_same_tasks_in_a_single_package_repository() {
    let Some(turbo) = turbo_bin() else {
        eprintln!("skipped: no turbo installed; scripts/test installs it and sets VX_TEST_TURBO");
        return;
    };
    let env = TestEnv::new();
    env.write(
        "package.json",
        r#"{ "name": "solo", "packageManager": "npm@10.8.2", "scripts": { "build": "echo b", "test": "echo t" } }"#,
    );
    env.write(
        "turbo.json",
        r#"{ "tasks": { "build": { "outputs": ["dist/**"] }, "test": { "dependsOn": ["build", "lint"] }, "lint": {} } }"#,
    );
    let by_turbo = turbo_plan(&env, &turbo, "test", |id| format!("solo#{id}"));
    assert_eq!(by_turbo.len(), 3, "{by_turbo:?}");
    assert_eq!(vx_plan_native(&env, "test"), by_turbo, "read natively");
    assert_eq!(vx_plan(&env, "test"), by_turbo, "the root package is the one project in both tools");
}

/// With no `vx.toml`, `turbo.json` is the configuration: `vx run build`
/// orders, caches and restores as turbo does, `vx info` says what it read,
/// and a root `vx.toml` (written by `vx init`) then wins over it.
#[test]
fn turbo_json_is_configuration_without_vx_init() {
    let env = noop_chain();
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_before(&env.log(), "mid-codegen", "app-build");
    assert_before(&env.log(), "lib-build", "app-build");
    let again = env.vx(&["run", "build"]);
    again.assert_success();
    assert_eq!(env.log().len(), 3, "the second run is all hits\n{again}");
    assert_eq!(again.summary().cached, 3, "{again}");
    let info = env.vx(&["info"]);
    let config = info.stdout.lines().find(|l| l.starts_with("config")).unwrap_or_default().to_string();
    assert!(config.contains("turbo.json, read as Turborepo reads it"), "{info}");

    // A change to turbo.json is a change of configuration: codegen gains
    // an output, so mid#codegen's key moves and it runs again.
    env.write("turbo.json", r#"{ "tasks": { "build": { "dependsOn": ["^build", "codegen"], "outputs": ["dist/**"] }, "codegen": { "outputs": ["gen/**"] } } }"#);
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(env.log().iter().filter(|l| *l == "mid-codegen").count() == 2, "{out}");

    env.write(".gitignore", "node_modules/\n");
    let init = env.vx(&["init"]);
    init.assert_success();
    assert!(init.stdout.contains("added .vx/ to .gitignore"), "{init}");
    assert_eq!(env.read(".gitignore"), "node_modules/\n.vx/\n", "appended, nothing else touched");
    let info = env.vx(&["info"]);
    assert!(info.stdout.contains("vx.toml (the turbo.json beside it is not read"), "{info}");
    let again = env.vx(&["init", "--force"]);
    again.assert_success();
    assert_eq!(env.read(".gitignore"), "node_modules/\n.vx/\n", "named once\n{again}");
}

/// `$TURBO_ROOT$/x` and `../x` globs are root-anchored in vx (`/x`,
/// `/packages/x`): a change to the root file re-runs exactly the tasks
/// that name it. `with` and `interruptible` have no vx setting, and
/// `vx init` says what to write instead.
#[test]
fn turbo_root_and_parent_globs_are_root_anchored_inputs() {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    env.write("tsconfig.base.json", "{}\n");
    env.write("packages/shared/src/s.ts", "export {};\n");
    env.write(
        "turbo.json",
        r#"{ "tasks": { "build": { "inputs": ["$TURBO_DEFAULT$"] }, "dev": { "persistent": true, "with": ["api#dev"], "interruptible": true } } }"#,
    );
    env.write("packages/web/package.json", &package("web", &[], &[("build", &log_cmd("web-build"))]));
    env.write("packages/web/src/a.ts", "export {};\n");
    env.write(
        "packages/web/turbo.json",
        r#"{ "extends": ["//"], "tasks": { "build": { "inputs": ["$TURBO_DEFAULT$", "$TURBO_ROOT$/tsconfig.base.json", "../shared/src/**"] } } }"#,
    );
    env.write("packages/api/package.json", &package("api", &[], &[("build", &log_cmd("api-build"))]));
    env.vx(&["run", "build"]).assert_success();
    env.write("tsconfig.base.json", "{ \"strict\": true }\n");
    env.vx(&["run", "build"]).assert_success();
    let runs = |id: &str| env.log().iter().filter(|l| *l == id).count();
    assert_eq!((runs("api-build"), runs("web-build")), (1, 2), "web ran again, api hit: {:?}", env.log());
    env.write("packages/shared/src/s.ts", "export const x = 1;\n");
    env.vx(&["run", "build"]).assert_success();
    assert_eq!((runs("api-build"), runs("web-build")), (1, 3), "{:?}", env.log());

    let out = env.vx(&["init", "--dry"]);
    out.assert_success();
    assert!(out.stdout.contains(r#"inputs = ["**", "/tsconfig.base.json", "/packages/shared/src/**"]"#), "{out}");
    assert!(
        out.stdout.contains(
            "tasks.dev.with: vx has no `with`: name the sibling tasks on the command line (`vx run dev api#dev`)"
        ),
        "{out}"
    );
    assert!(out.stdout.contains("tasks.dev.interruptible: `vx watch` restarts"), "{out}");
}

/// Turborepo's `--framework-inference`: `false` is what vx does (it infers
/// no framework) and runs; `true` is refused with what to write instead.
#[test]
fn framework_inference_false_runs_and_true_says_what_to_write() {
    let env = noop_chain();
    env.vx(&["run", "build", "--framework-inference=false"]).assert_success();
    let out = env.vx(&["run", "build", "--framework-inference"]);
    out.assert_code(2);
    assert_eq!(
        out.error_line(),
        "vx: error: vx infers no framework: a task's key holds the variables its `env` names; list them in the \
         task's `env` (`NEXT_PUBLIC_*`), or drop --framework-inference"
    );
    let bad = env.vx(&["run", "build", "--framework-inference=maybe"]);
    bad.assert_code(2);
    assert_eq!(bad.stderr.lines().count(), 1, "{bad}");
}

/// A task that writes tsc's `.tsbuildinfo` outside the outputs vx removes
/// before each run is told so, with the mend; one whose outputs hold it,
/// or that writes none, is not.
#[test]
fn a_tsbuildinfo_written_outside_the_outputs_is_said_with_the_mend() {
    let env = TestEnv::new();
    env.write("package.json", &root_package(""));
    let build = "mkdir -p dist && echo x > dist/index.js && echo '{}' > tsconfig.tsbuildinfo";
    env.write("packages/a/package.json", &package("a", &[], &[("build", build)]));
    env.write("packages/b/package.json", &package("b", &[], &[("build", build)]));
    env.write("packages/c/package.json", &package("c", &[], &[("build", "mkdir -p dist && echo x > dist/index.js")]));
    env.write("turbo.json", r#"{ "tasks": { "build": { "outputs": ["dist/**"] } } }"#);
    env.write(
        "packages/b/turbo.json",
        r#"{ "extends": ["//"], "tasks": { "build": { "outputs": ["dist/**", "tsconfig.tsbuildinfo"] } } }"#,
    );
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("outside its outputs")).collect();
    assert_eq!(notes.len(), 1, "{out}");
    assert!(
        notes[0].starts_with("a#build: wrote tsconfig.tsbuildinfo outside its outputs")
            && notes[0].contains("\"tsBuildInfoFile\": \"dist/tsconfig.tsbuildinfo\""),
        "{out}"
    );
}
