//! Repositories with no `vx.toml` at all: npm/yarn `package.json`
//! `workspaces` and `pnpm-workspace.yaml`. Scripts become tasks, workspace
//! dependencies become project dependencies, and a script runs after the
//! same script in the projects it depends on (as `pnpm -r run` does).

use crate::common::{TestEnv, assert_before, log_cmd, slow_log_cmd};

/// A `package.json` with `name`, workspace `dependencies` and
/// `devDependencies`, and scripts that log their id.
fn package_json(name: &str, deps: &[&str], dev_deps: &[&str], scripts: &[&str]) -> String {
    let map = |names: &[&str], value: &dyn Fn(&str) -> String| {
        names.iter().map(|n| format!("{n:?}: {}", value(n))).collect::<Vec<_>>().join(", ")
    };
    let version = |_: &str| "\"workspace:*\"".to_string();
    let script = |s: &str| {
        let id = format!("{name}#{s}");
        format!("{:?}", if deps.is_empty() && dev_deps.is_empty() { slow_log_cmd(&id) } else { log_cmd(&id) })
    };
    format!(
        "{{\n  \"name\": {name:?},\n  \"version\": \"1.0.0\",\n  \"dependencies\": {{ {}, \"left-pad\": \"^1.3.0\" }},\n  \"devDependencies\": {{ {} }},\n  \"scripts\": {{ {} }}\n}}\n",
        map(deps, &version),
        map(dev_deps, &version),
        map(scripts, &script)
    )
    .replace("{ , ", "{ ")
}

/// @acme/ui ← @acme/web ← @acme/app (dev dependency), and @acme/tools
/// (no `build`) between @acme/ui and @acme/cli.
fn write_packages(env: &TestEnv) {
    env.write("packages/ui/package.json", &package_json("@acme/ui", &[], &[], &["build", "test"]));
    env.write("packages/web/package.json", &package_json("@acme/web", &["@acme/ui"], &[], &["build", "test"]));
    env.write("apps/app/package.json", &package_json("@acme/app", &[], &["@acme/web"], &["build"]));
    env.write("packages/tools/package.json", &package_json("@acme/tools", &["@acme/ui"], &[], &["lint"]));
    env.write("apps/cli/package.json", &package_json("@acme/cli", &["@acme/tools"], &[], &["build"]));
}

fn assert_build_order(env: &TestEnv) {
    let log = env.log();
    assert_eq!(env.log_set(), ["@acme/app#build", "@acme/cli#build", "@acme/ui#build", "@acme/web#build"]);
    assert_before(&log, "@acme/ui#build", "@acme/web#build");
    assert_before(&log, "@acme/web#build", "@acme/app#build");
    assert_before(&log, "@acme/ui#build", "@acme/cli#build");
}

#[test]
fn package_json_workspaces_scripts_run_in_dependency_order() {
    let env = TestEnv::new();
    env.write(
        "package.json",
        "{ \"name\": \"root\", \"private\": true, \"workspaces\": [\"packages/*\", \"apps/*\"] }\n",
    );
    write_packages(&env);
    env.vx(&["run", "build", "--concurrency", "8"]).assert_success();
    assert_build_order(&env);
}

#[test]
fn yarn_object_form_of_workspaces() {
    let env = TestEnv::new();
    env.write(
        "package.json",
        "{ \"private\": true, \"workspaces\": { \"packages\": [\"packages/*\", \"apps/*\"] } }\n",
    );
    write_packages(&env);
    env.vx(&["run", "build", "--concurrency", "8"]).assert_success();
    assert_build_order(&env);
}

#[test]
fn pnpm_workspace_yaml() {
    let env = TestEnv::new();
    env.write("package.json", "{ \"name\": \"root\", \"private\": true }\n");
    env.write("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n  - \"apps/*\"\n");
    write_packages(&env);
    env.vx(&["run", "build", "--concurrency", "8"]).assert_success();
    assert_build_order(&env);
}

#[test]
fn one_script_pulls_in_the_same_script_of_its_dependencies() {
    let env = TestEnv::new();
    env.write("package.json", "{ \"workspaces\": [\"packages/*\", \"apps/*\"] }\n");
    write_packages(&env);
    env.vx(&["run", "@acme/app#build"]).assert_success();
    assert_eq!(env.log(), ["@acme/ui#build", "@acme/web#build", "@acme/app#build"]);
}

#[test]
fn scoped_names_work_in_filters_and_show() {
    let env = TestEnv::new();
    env.write("package.json", "{ \"workspaces\": [\"packages/*\", \"apps/*\"] }\n");
    write_packages(&env);
    env.vx(&["run", "test", "--filter", "@acme/w*"]).assert_success();
    assert_eq!(env.log(), ["@acme/ui#test", "@acme/web#test"], "an inferred script depends on ^test");

    let out = env.vx(&["show", "--format", "json"]);
    out.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("show prints JSON");
    let web = doc["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .find(|p| p["name"] == "@acme/web")
        .unwrap_or_else(|| panic!("@acme/web is a project\n{out}"));
    assert_eq!(web["dir"], "packages/web");
    assert_eq!(web["dependencies"], serde_json::json!(["@acme/ui"]), "left-pad is not a workspace package");
    assert_eq!(web["dependents"], serde_json::json!(["@acme/app"]));
    let mut tasks: Vec<&String> = web["tasks"].as_object().expect("tasks").keys().collect();
    tasks.sort();
    assert_eq!(tasks, ["build", "test"]);
    assert_eq!(web["tasks"]["build"]["cache"], false, "scripts are uncached unless configured");
}

#[test]
fn a_vx_toml_task_configures_the_script_of_the_same_name() {
    let env = TestEnv::new();
    env.write("package.json", "{ \"workspaces\": [\"packages/*\", \"apps/*\"] }\n");
    write_packages(&env);
    env.write("packages/web/vx.toml", "[tasks.build]\noutputs = [\"dist/**\"]\n");
    let out = env.vx(&["show", "@acme/web", "--format", "json"]);
    out.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("show prints JSON");
    let build = &doc["projects"][0]["tasks"]["build"];
    assert_eq!(build["cache"], true, "declared outputs make it cached\n{out}");
    assert_eq!(build["outputs"], serde_json::json!(["dist/**"]));
    env.vx(&["run", "@acme/web#build"]).assert_success();
    assert_eq!(env.log(), ["@acme/ui#build", "@acme/web#build"], "the script's command, still after ^build");
}

#[test]
fn the_same_tree_with_vx_toml_files_behaves_the_same() {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\", \"apps/*\"]\n");
    env.write("package.json", "{ \"private\": true }\n");
    write_packages(&env);
    env.vx(&["run", "build", "--concurrency", "8"]).assert_success();
    assert_build_order(&env);
}

/// Scripts get what their package manager gives them (release and
/// version scripts read these): the package's name and version, the
/// script's name and text, the manager (`npm_config_user_agent`, from the
/// root's `packageManager`), the directory vx was started in, and every
/// `node_modules/.bin` from the package up to the root on `PATH`.
#[test]
fn scripts_get_the_variables_their_package_manager_gives_them() {
    let env = TestEnv::new();
    env.write(
        "package.json",
        r#"{ "name": "root", "private": true, "packageManager": "pnpm@9.15.0", "workspaces": ["packages/*"] }"#,
    );
    let script = "printf '%s\\n%s\\n%s\\n%s\\n%s\\n%s\\n%s' \"$npm_package_name\" \"$npm_package_version\" \
                  \"$npm_lifecycle_event\" \"$npm_lifecycle_script\" \"${npm_config_user_agent%% *}\" \"$INIT_CWD\" \
                  \"$(mid-tool)\" > ../../out.txt";
    let pkg = serde_json::json!({ "name": "@org/a", "version": "1.2.3", "scripts": { "release": script } });
    env.write("packages/a/package.json", &pkg.to_string());
    env.write("packages/node_modules/.bin/mid-tool", "#!/bin/sh\necho from-packages-bin\n");
    std::fs::set_permissions(
        env.path("packages/node_modules/.bin/mid-tool"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    let out = env.vx_in("packages", &["run", "release", "--all"]);
    out.assert_success();
    let fields: Vec<String> = env.read("out.txt").lines().map(str::to_string).collect();
    let cwd = env.path("packages").canonicalize().expect("canonical").display().to_string();
    assert_eq!(
        fields,
        ["@org/a", "1.2.3", "release", script, "pnpm/9.15.0", cwd.as_str(), "from-packages-bin"],
        "{out}"
    );
}
