//! `vx query`: what `vx run` would run for the same selection, one id a
//! line or as JSON, nothing keyed or run: dependency order, `selected`
//! against pulled-in dependencies, the selection flags, arguments after
//! `--`, and the errors of a bad selection.

use serde_json::Value;

use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web, and lib alone: `build` after the dependencies' builds, and
/// `test` after its own build.
fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    for (name, deps) in [("ui", &[][..]), ("web", &["ui"][..]), ("lib", &[][..])] {
        let (build, test) = (log_cmd(&format!("{name}-build")), log_cmd(&format!("{name}-test")));
        let toml = project_toml(name, deps, &[("build", &build, &["^build"]), ("test", &test, &["build"])]);
        env.write(&format!("packages/{name}/vx.toml"), &toml);
    }
    env
}

#[track_caller]
fn lines(env: &TestEnv, args: &[&str]) -> Vec<String> {
    let out = env.vx(args);
    out.assert_success();
    out.stdout.lines().map(str::to_string).collect()
}

#[track_caller]
fn json(env: &TestEnv, args: &[&str]) -> Vec<Value> {
    let out = env.vx(args);
    out.assert_success();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e})\n{out}"));
    doc["tasks"].as_array().expect("tasks").clone()
}

#[test]
fn it_lists_what_run_would_run_in_dependency_order_and_runs_nothing() {
    let env = workspace();
    let ids = lines(&env, &["query", "web#test"]);
    assert_eq!(ids, ["ui#build", "web#build", "web#test"]);
    let tasks = json(&env, &["query", "web#test", "--format", "json"]);
    let test = &tasks[2];
    assert_eq!(test["id"], "web#test");
    assert_eq!(
        (test["project"].as_str(), test["task"].as_str(), test["dir"].as_str()),
        (Some("web"), Some("test"), Some("packages/web"))
    );
    assert_eq!(test["command"], log_cmd("web-test"));
    assert_eq!(test["dependencies"], serde_json::json!(["web#build"]));
    assert_eq!(
        (test["selected"].as_bool(), tasks[0]["selected"].as_bool()),
        (Some(true), Some(false)),
        "named, or pulled in"
    );
    assert_eq!((test["reasons"].is_null(), test["shard"].is_null()), (true, true), "without --affected or --shard");
    assert!(env.log().is_empty(), "nothing ran");
    assert!(!env.root().join(".vx").exists(), "nothing keyed: no state written");
    let dry = env.vx(&["run", "web#test", "--dry=json"]);
    let plan: Value = serde_json::from_str(&dry.stdout).expect("JSON");
    let planned: Vec<&str> = plan["tasks"].as_array().expect("tasks").iter().filter_map(|t| t["id"].as_str()).collect();
    assert_eq!(ids, planned, "the same plan as --dry");
}

#[test]
fn it_takes_runs_selection_flags() {
    let env = workspace();
    assert_eq!(lines(&env, &["query", "build", "--filter", "web"]), ["ui#build", "web#build"]);
    assert_eq!(lines(&env, &["query", "build", "--filter", "web", "--only"]), ["web#build"]);
    assert_eq!(lines(&env, &["query", "build", "--filter", "!web"]), ["lib#build", "ui#build"]);
    assert_eq!(lines(&env, &["query", "lib#build", "ui#build"]), ["lib#build", "ui#build"]);
    let tasks = json(&env, &["query", "lib#test", "--format", "json", "--", "--coverage", "a b"]);
    assert_eq!(
        tasks[1]["command"],
        format!("{} --coverage 'a b'", log_cmd("lib-test")),
        "arguments after -- for the named task"
    );
    assert_eq!(tasks[0]["command"], log_cmd("lib-build"), "not for its dependency");
}

#[test]
fn a_bad_selection_is_a_usage_error() {
    let env = workspace();
    let out = env.vx(&["query", "biuld"]);
    out.assert_code(2);
    assert!(out.error_line().contains("did you mean `build`?"), "{out}");
    let out = env.vx(&["query"]);
    out.assert_code(2);
    assert!(out.error_line().contains("no task named"), "{out}");
    let out = env.vx(&["query", "build", "--affected"]);
    out.assert_code(2);
    assert!(out.error_line().contains("git"), "{out}");
}
