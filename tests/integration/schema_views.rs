//! The JSON Schemas of the `--format json` views (`docs/schema/`):
//! `--dry=json`, `vx show`, `vx history` (and `--flaky`) and `vx info`.
//! Their documents are built field by field in the commands, so these
//! schemas are written by hand; each test validates what a real run of vx
//! prints against the committed file, so a field added, dropped or retyped
//! without its schema fails here.

use std::path::Path;

use serde_json::Value;

use crate::common::{Output, TestEnv, log_cmd};

/// Validates `doc` against `docs/schema/NAME`.
#[track_caller]
fn assert_valid(name: &str, doc: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema").join(name);
    let text = std::fs::read_to_string(&path).expect("the schema file");
    let schema: Value = serde_json::from_str(&text).expect("the schema file is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "the document breaks {name}:\n{}\n{doc:#}", errors.join("\n"));
}

/// Whether `doc` breaks `docs/schema/NAME`.
fn is_refused(name: &str, doc: &Value) -> bool {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema").join(name);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the schema file")).expect("JSON");
    !jsonschema::validator_for(&schema).expect("the schema compiles").is_valid(doc)
}

/// The value at `path` (object keys, or array indices) inside `doc`.
fn at<'a>(doc: &'a mut Value, path: &[&str]) -> &'a mut Value {
    path.iter().fold(doc, |v, key| match key.parse::<usize>() {
        Ok(i) => &mut v[i],
        Err(_) => &mut v[*key],
    })
}

/// Each view's schema refuses a field it does not describe and a field of
/// the wrong type, so the validations above cannot pass on a lax schema.
#[track_caller]
fn assert_strict(name: &str, doc: &Value, path: &[&str], field: &str) {
    let mut extra = doc.clone();
    at(&mut extra, path)["surprise"] = Value::from(1);
    assert!(is_refused(name, &extra), "{name} takes an unknown field at {path:?}");
    let mut retyped = doc.clone();
    at(&mut retyped, path)[field] = Value::from(vec![true]);
    assert!(is_refused(name, &retyped), "{name} takes `{field}` as a list of booleans at {path:?}");
}

#[track_caller]
fn json(out: &Output) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e})\n{out}"))
}

/// Two projects with every kind of task the views tell apart: an argv
/// command with every scheduling key, a described task, a group, a task
/// that depends on its dependency's build, and one that is flaky (it
/// fails once, then passes on its retry).
fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"packages/*\"]\nglobal-runtime = [\"echo v1\"]\n");
    env.write("packages/lib/src/lib.txt", "lib\n");
    env.write(
        "packages/lib/vx.toml",
        "[tasks.build]\ncommand = [\"sh\", \"-c\", \"mkdir -p dist && cp src/lib.txt dist/\"]\n\
         inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\ntimeout = \"1m\"\nretries = 1\nmutex = \"db\"\n\
         resources = { cpus = 0.5, memory = \"64MiB\" }\npriority = \"high\"\nenv = [\"MODE\"]\n\
         description = \"Copies the sources\"\n\n\
         [tasks.ci]\ndepends-on = [\"build\"]\n",
    );
    env.write(
        "packages/app/vx.toml",
        &format!(
            "[project]\ndepends-on = [\"lib\"]\ntags = [\"app\"]\n\n\
             [tasks.build]\ncommand = '''{}'''\ndepends-on = [\"^build\"]\noutputs = [\"out/**\"]\n\n\
             [tasks.flaky]\ncommand = \"if [ -f .tried ]; then exit 0; fi; touch .tried; exit 1\"\nretries = 1\ncache = false\n",
            log_cmd("app-build")
        ),
    );
    env
}

#[test]
fn dry_json_matches_its_schema_before_and_after_a_run() {
    let env = workspace();
    let before = json(env.vx(&["run", "build", "ci", "--dry=json"]).assert_success());
    assert_valid("dry-run.v1.json", &before);
    assert_strict("dry-run.v1.json", &before, &["tasks", "0"], "cache");
    assert_strict("dry-run.v1.json", &before, &[], "root");
    let tasks = before["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 3, "lib#build, lib#ci, app#build\n{before:#}");
    assert!(tasks.iter().any(|t| t["group"] == true), "a group is planned\n{before:#}");
    assert!(tasks.iter().any(|t| t["command"].is_array()), "an argv command is planned\n{before:#}");
    assert!(before["prediction"]["wall_ms"].is_null(), "no history yet\n{before:#}");

    env.vx(&["run", "build", "ci"]).assert_success();
    let after = json(env.vx(&["run", "build", "ci", "--dry=json"]).assert_success());
    assert_valid("dry-run.v1.json", &after);
    assert!(after["tasks"][0]["predicted"].is_object(), "with history, each task's predicted span\n{after:#}");
    assert_strict("dry-run.v1.json", &after, &["tasks", "0", "predicted"], "end_ms");
    let lib = after["tasks"].as_array().and_then(|t| t.iter().find(|t| t["id"] == "lib#build")).expect("lib#build");
    assert_eq!(lib["cache_status"], "hit-local", "{after:#}");

    let off = json(env.vx(&["run", "build", "--dry=json", "--cache", "off"]).assert_success());
    assert_valid("dry-run.v1.json", &off);
}

#[test]
fn show_json_matches_its_schema() {
    let env = workspace();
    let all = json(env.vx(&["show", "--format", "json"]).assert_success());
    assert_valid("show.v1.json", &all);
    assert_strict("show.v1.json", &all, &["projects", "0", "tasks", "build"], "persistent");
    assert_eq!(all["projects"].as_array().map(Vec::len), Some(2), "{all:#}");
    let lib = json(env.vx(&["show", "lib", "--format", "json"]).assert_success());
    assert_valid("show.v1.json", &lib);
    assert_eq!(lib["projects"][0]["tasks"]["ci"]["group"], true, "{lib:#}");
    assert_eq!(lib["projects"][0]["tasks"]["build"]["description"], "Copies the sources", "{lib:#}");
}

#[test]
fn history_json_and_flaky_json_match_their_schema() {
    let env = workspace();
    let empty = json(env.vx(&["history", "--format", "json"]).assert_success());
    assert_valid("history.v1.json", &empty);
    env.vx(&["run", "build", "flaky"]).assert_success();
    env.vx(&["run", "build", "--tag", "ci=1"]).assert_success();
    let history = json(env.vx(&["history", "--format", "json"]).assert_success());
    assert_valid("history.v1.json", &history);
    assert_strict("history.v1.json", &history, &["0"], "exit_code");
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history:#}");
    assert_eq!(history[1]["logs"][0]["task"], "app#flaky", "its failed attempt's log is kept\n{history:#}");
    assert_strict("history.v1.json", &history, &["1", "logs", "0"], "attempt");
    let flaky = json(env.vx(&["history", "--flaky", "--format", "json"]).assert_success());
    assert_valid("history.v1.json", &flaky);
    assert_eq!(flaky[0]["task"], "app#flaky", "{flaky:#}");
}

#[test]
fn info_json_matches_its_schema_in_and_out_of_a_workspace() {
    let env = workspace();
    env.vx(&["run", "build"]).assert_success();
    let out = env.vx(&["info", "--format", "json", "--offline"]);
    assert!(matches!(out.code, 0 | 1), "{out}");
    let info = json(&out);
    assert_valid("info.v1.json", &info);
    assert_strict("info.v1.json", &info, &["workspace"], "projects");
    assert_eq!(info["workspace"]["projects"], 2, "{info:#}");

    let outside = TestEnv::new();
    let out = outside.vx(&["info", "--format", "json", "--offline"]);
    let info = json(&out);
    assert_valid("info.v1.json", &info);
    assert!(info["workspace"].is_null(), "{info:#}");
    assert!(!info["problems"].as_array().expect("problems").is_empty(), "no workspace is a problem\n{info:#}");
}

#[test]
fn query_json_and_the_dry_json_of_affected_and_shard_match_their_schemas() {
    let env = workspace();
    env.write(".gitignore", ".vx/\n");
    env.git_init("main");
    env.git_commit_all("initial");
    env.write("packages/lib/src/lib.txt", "changed\n");
    let plain = json(env.vx(&["query", "build", "ci", "--format", "json"]).assert_success());
    assert_valid("query.v1.json", &plain);
    assert_strict("query.v1.json", &plain, &["tasks", "0"], "selected");
    assert_strict("query.v1.json", &plain, &[], "tasks");
    let affected =
        json(env.vx(&["query", "build", "ci", "--affected", "--shard", "1/2", "--format", "json"]).assert_success());
    assert_valid("query.v1.json", &affected);
    let tasks = affected["tasks"].as_array().expect("tasks");
    let lib = tasks.iter().find(|t| t["id"] == "lib#build").unwrap_or_else(|| panic!("lib#build\n{affected:#}"));
    assert_eq!(lib["reasons"][0]["kind"], "input", "{affected:#}");
    assert!(tasks.iter().any(|t| t["reasons"].as_array().is_some_and(|r| r.iter().any(|r| r["kind"] == "dependency"))));
    assert_strict("query.v1.json", &affected, &["tasks", "0", "reasons", "0"], "text");
    assert_strict("query.v1.json", &affected, &["tasks", "0", "shard"], "role");
    let dry = json(env.vx(&["run", "build", "ci", "--affected", "--shard", "1/2", "--dry=json"]).assert_success());
    assert_valid("dry-run.v1.json", &dry);
    assert!(dry["tasks"][0]["reasons"].is_array() && dry["tasks"][0]["shard"].is_object(), "{dry:#}");
    assert_strict("dry-run.v1.json", &dry, &["tasks", "0", "reasons", "0"], "kind");
    assert_strict("dry-run.v1.json", &dry, &["tasks", "0", "shard"], "owner");
}
