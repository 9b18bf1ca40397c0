//! Why `--affected` selects each task, on real git repositories: every
//! kind of reason (`vx query --format json`), the nearest affected
//! dependency for a transitive one, and the reasons in `vx run --dry`
//! (text) and `--dry=json`.

use serde_json::Value;

use crate::common::query::query_affected_builds;
use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web ← site, and lib alone, each `build` taking `src/**` after its
/// dependencies' builds; a global input and a root `package.json` with
/// dependencies; committed on `main`.
fn repo() -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\nglobal-inputs = [\"tsconfig.base.json\"]\n");
    env.write("tsconfig.base.json", "{}\n");
    env.write(
        "package.json",
        "{ \"name\": \"root\", \"private\": true, \"devDependencies\": { \"vitest\": \"1.0.0\" } }\n",
    );
    env.write(".gitignore", ".vx/\n");
    for (name, deps) in [("ui", &[][..]), ("web", &["ui"][..]), ("site", &["web"][..]), ("lib", &[][..])] {
        let toml = project_toml(name, deps, &[("build", &log_cmd(name), &["^build"])]);
        env.write(
            &format!("packages/{name}/vx.toml"),
            &toml.replace("depends-on = [\"^build\"]", "depends-on = [\"^build\"]\ninputs = [\"src/**\"]"),
        );
        env.write(&format!("packages/{name}/src/index.js"), &format!("// {name}\n"));
    }
    env.git_init("main");
    env.git_commit_all("initial");
    env
}

/// Back to the committed tree.
fn reset(env: &TestEnv) {
    env.git(&["checkout", "--quiet", "--", "."]);
    env.git(&["clean", "--quiet", "-fd"]);
}

/// The kinds of each task's reasons, as `id: kind, kind`.
fn kinds(tasks: &[(String, Vec<Value>)]) -> Vec<String> {
    tasks
        .iter()
        .map(|(id, reasons)| {
            let kinds: Vec<&str> = reasons.iter().map(|r| r["kind"].as_str().expect("a kind")).collect();
            format!("{id}: {}", kinds.join(", "))
        })
        .collect()
}

fn reason_of<'a>(tasks: &'a [(String, Vec<Value>)], id: &str) -> &'a [Value] {
    &tasks.iter().find(|(t, _)| t == id).unwrap_or_else(|| panic!("{id} is not planned: {tasks:?}")).1
}

#[test]
fn a_changed_input_is_named_and_dependents_name_their_nearest_affected_dependency() {
    let env = repo();
    env.write("packages/ui/src/index.js", "// ui, changed\n");
    env.write("packages/ui/README.md", "not an input\n");
    let tasks = query_affected_builds(&env);
    assert_eq!(kinds(&tasks), ["site#build: dependency", "ui#build: input", "web#build: dependency"]);
    let ui = reason_of(&tasks, "ui#build");
    assert_eq!(ui[0]["files"], serde_json::json!(["packages/ui/src/index.js"]), "{ui:?}");
    assert_eq!(ui[0]["text"], "input packages/ui/src/index.js");
    assert_eq!(reason_of(&tasks, "web#build")[0]["task"], "ui#build");
    assert_eq!(reason_of(&tasks, "site#build")[0]["task"], "web#build", "the nearest, not ui#build");
}

#[test]
fn a_projects_manifest_is_named() {
    let env = repo();
    env.write("packages/lib/vx.toml", &format!("{}# edited\n", env.read("packages/lib/vx.toml")));
    let tasks = query_affected_builds(&env);
    assert_eq!(kinds(&tasks), ["lib#build: manifest"]);
    assert_eq!(reason_of(&tasks, "lib#build")[0]["file"], "packages/lib/vx.toml");
}

#[test]
fn workspace_wide_causes_select_every_task_and_say_so() {
    let env = repo();
    let every = |kind: &str| ["lib", "site", "ui", "web"].map(|p| format!("{p}#build: {kind}")).to_vec();
    env.write("tsconfig.base.json", "{ \"strict\": true }\n");
    let tasks = query_affected_builds(&env);
    assert_eq!(kinds(&tasks), every("global-input"));
    assert_eq!(reason_of(&tasks, "lib#build")[0]["files"], serde_json::json!(["tsconfig.base.json"]));
    reset(&env);
    env.write("vx.toml", &format!("{}# edited\n", env.read("vx.toml")));
    assert_eq!(kinds(&query_affected_builds(&env)), every("root-config"));
    reset(&env);
    env.write("package.json", &env.read("package.json").replace("1.0.0", "1.1.0"));
    let tasks = query_affected_builds(&env);
    assert_eq!(kinds(&tasks), every("root-dependencies"));
    assert_eq!(reason_of(&tasks, "ui#build")[0]["text"], "the root package.json: its dependencies changed");
}

#[test]
fn a_root_manifest_change_outside_its_dependencies_affects_nothing() {
    let env = repo();
    env.write(
        "package.json",
        &env.read("package.json").replace("\"private\": true", "\"private\": true, \"scripts\": { \"x\": \"true\" }"),
    );
    let out = env.vx(&["query", "build", "--affected"]);
    out.assert_success();
    assert_eq!(out.stdout, "", "a new root script is in no task's key\n{out}");
    let out = env.vx(&["run", "build", "--affected"]);
    assert!(out.stdout.contains("nothing affected since main"), "{out}");
}

#[test]
fn dry_text_and_json_show_the_reasons() {
    let env = repo();
    env.write("packages/ui/src/index.js", "// ui, changed\n");
    let out = env.vx(&["run", "build", "--affected", "--dry"]);
    out.assert_success();
    let line = |id: &str| out.stdout.lines().find(|l| l.starts_with(id)).unwrap_or_else(|| panic!("no {id}\n{out}"));
    assert!(line("ui#build").ends_with("affected: input packages/ui/src/index.js"), "{out}");
    assert!(line("site#build").ends_with("affected: dependency web#build"), "{out}");
    let out = env.vx(&["run", "build", "--affected", "--dry=json"]);
    out.assert_success();
    let plan: Value = serde_json::from_str(&out.stdout).expect("JSON");
    let ui = plan["tasks"].as_array().expect("tasks").iter().find(|t| t["id"] == "ui#build").expect("ui#build");
    assert_eq!(ui["reasons"][0]["kind"], "input", "{plan:#}");
    let plain = env.vx(&["run", "build", "--dry=json"]);
    let plain: Value = serde_json::from_str(&plain.stdout).expect("JSON");
    assert!(plain["tasks"][0].get("reasons").is_none(), "no reasons without --affected");
    assert!(env.log().is_empty(), "--dry runs nothing");
}
