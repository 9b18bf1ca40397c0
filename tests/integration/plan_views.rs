//! Views of the plan and the workspace that run nothing: `--dry=json`,
//! `--dry` (text), `--graph` (DOT) and `vx show` (text and JSON).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::common::{TestEnv, log_cmd, project_toml};

/// ui ← web (web#build: ^build, codegen, shared#gen), shared#gen, and an
/// unrelated project `other`.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/ui/vx.toml", &project_toml("ui", &[], &[("build", &log_cmd("ui#build"), &[])]));
    env.write("packages/shared/vx.toml", &project_toml("shared", &[], &[("gen", &log_cmd("shared#gen"), &[])]));
    env.write("packages/other/vx.toml", &project_toml("other", &[], &[("build", &log_cmd("other#build"), &[])]));
    env.write(
        "packages/web/vx.toml",
        &format!(
            "[project]\nname = \"web\"\ndepends-on = [\"ui\"]\ntags = [\"app\"]\n\n\
             [tasks.codegen]\ncommand = [\"printf\", \"%s\", \"gen\"]\n\n\
             [tasks.build]\ncommand = {:?}\ndepends-on = [\"^build\", \"codegen\", \"shared#gen\"]\n\
             inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\nenv = [\"NODE_ENV\"]\ntimeout = \"90s\"\n",
            log_cmd("web#build")
        ),
    );
    env
}

fn parse(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

#[test]
fn dry_json_has_the_documented_shape_and_runs_nothing() {
    let env = fixture();
    let out = env.vx(&["run", "web#build", "--dry=json"]);
    out.assert_success();
    assert!(env.log().is_empty(), "--dry runs nothing");
    let doc = parse(&out.stdout);
    assert_eq!(doc["root"].as_str(), env.root().to_str());
    let tasks = doc["tasks"].as_array().expect("tasks is an array");
    let ids: Vec<&str> = tasks.iter().map(|t| t["id"].as_str().expect("id")).collect();
    assert_eq!(
        ids.iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from(["shared#gen", "ui#build", "web#build", "web#codegen"])
    );
    assert_eq!(ids.last(), Some(&"web#build"), "tasks come in dependency order");

    let build = tasks.iter().find(|t| t["id"] == "web#build").expect("web#build");
    assert_eq!(build["project"], "web");
    assert_eq!(build["task"], "build");
    assert_eq!(build["dir"], "packages/web");
    assert_eq!(build["command"], json!(log_cmd("web#build")));
    let deps: BTreeSet<&str> =
        build["dependencies"].as_array().expect("dependencies").iter().map(|d| d.as_str().expect("id")).collect();
    assert_eq!(deps, BTreeSet::from(["shared#gen", "ui#build", "web#codegen"]));
    assert_eq!(build["inputs"], json!(["src/**"]));
    assert_eq!(build["outputs"], json!(["dist/**"]));
    assert_eq!(build["env"], json!(["NODE_ENV"]));
    assert_eq!(build["cache"], true);
    assert_eq!(build["persistent"], false);
    assert_eq!(build["executor"], "local");
    assert_eq!(build["timeout_ms"], 90_000);

    let codegen = tasks.iter().find(|t| t["id"] == "web#codegen").expect("web#codegen");
    assert_eq!(codegen["command"], json!(["printf", "%s", "gen"]), "an array command stays an array");
    assert_eq!(codegen["dependencies"], json!([]));
    assert_eq!(codegen["inputs"], Value::Null, "no declared inputs: every file of the project");
}

#[test]
fn dry_json_lists_every_task_after_its_dependencies() {
    let env = fixture();
    let out = env.vx(&["run", "build", "--dry=json"]);
    out.assert_success();
    let doc = parse(&out.stdout);
    let tasks = doc["tasks"].as_array().expect("tasks");
    let position = |id: &str| tasks.iter().position(|t| t["id"] == id).unwrap_or_else(|| panic!("{id} planned"));
    for task in tasks {
        for dep in task["dependencies"].as_array().expect("dependencies") {
            assert!(position(dep.as_str().expect("id")) < position(task["id"].as_str().expect("id")), "{doc:#}");
        }
    }
    assert!(position("other#build") < tasks.len());
    assert!(env.log().is_empty());
}

#[test]
fn dry_text_names_each_task_and_runs_nothing() {
    let env = fixture();
    for args in [&["run", "web#build", "--dry"][..], &["run", "web#build", "--dry=text"][..]] {
        let out = env.vx(args);
        out.assert_success();
        for id in ["shared#gen", "ui#build", "web#build", "web#codegen"] {
            let line = out.stdout.lines().find(|l| l.split_whitespace().next() == Some(id));
            let line = line.unwrap_or_else(|| panic!("{id} has a line\n{out}"));
            assert_eq!(line.split_whitespace().nth(3), Some("local"), "id, status, ETA, executor: {line}\n{out}");
        }
        assert_eq!(out.stdout.lines().count(), 5, "one line per task, then the totals\n{out}");
        assert!(!out.stdout.contains("other#build"), "{out}");
        assert!(!out.stdout.contains("0ms"), "no prediction without history\n{out}");
    }
    let verbose = env.vx(&["run", "web#build", "--dry", "--verbose"]);
    verbose.assert_success();
    assert!(verbose.stdout.contains("  command:    "), "--verbose adds each task's detail\n{verbose}");
    let refused = env.vx(&["run", "web#build", "--verbose"]);
    refused.assert_code(2);
    assert!(refused.error_line().contains("--dry"), "--verbose is for --dry\n{refused}");
    assert!(env.log().is_empty(), "--dry runs nothing");
}

/// The edges of a DOT graph, as `(from, to)` pairs of unquoted ids.
fn dot_edges(dot: &str) -> BTreeSet<(String, String)> {
    dot.lines()
        .filter_map(|l| l.trim().trim_end_matches(';').split_once(" -> "))
        .map(|(a, b)| (a.trim_matches('"').to_string(), b.trim_matches('"').to_string()))
        .collect()
}

#[test]
fn graph_prints_dot_with_every_edge_and_runs_nothing() {
    let env = fixture();
    let out = env.vx(&["run", "web#build", "--graph"]);
    out.assert_success();
    assert!(out.stdout.trim_start().starts_with("digraph"), "{out}");
    assert!(out.stdout.trim_end().ends_with('}'), "{out}");
    let edges = dot_edges(&out.stdout);
    let expected: BTreeSet<(String, String)> =
        [("web#build", "ui#build"), ("web#build", "web#codegen"), ("web#build", "shared#gen")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(edges, expected, "{out}");
    for id in ["\"shared#gen\"", "\"ui#build\"", "\"web#build\"", "\"web#codegen\""] {
        assert!(out.stdout.contains(id), "node {id} is in the graph\n{out}");
    }
    assert!(env.log().is_empty(), "--graph runs nothing");
}

#[test]
fn graph_to_a_file() {
    let env = fixture();
    let out = env.vx(&["run", "web#build", "--graph=graph.dot"]);
    out.assert_success();
    let dot = env.read("graph.dot");
    assert!(dot.starts_with("digraph"));
    assert_eq!(dot_edges(&dot).len(), 3);
    assert!(env.log().is_empty());
}

#[test]
fn show_json_lists_projects_tasks_and_dependencies() {
    let env = fixture();
    let out = env.vx(&["show", "--format", "json"]);
    out.assert_success();
    let doc = parse(&out.stdout);
    assert_eq!(doc["root"].as_str(), env.root().to_str());
    let projects = doc["projects"].as_array().expect("projects");
    let names: Vec<&str> = projects.iter().map(|p| p["name"].as_str().expect("name")).collect();
    assert_eq!(names.iter().copied().collect::<BTreeSet<_>>(), BTreeSet::from(["other", "shared", "ui", "web"]));
    let web = projects.iter().find(|p| p["name"] == "web").expect("web");
    assert_eq!(web["dir"], "packages/web");
    assert_eq!(web["dependencies"], json!(["ui"]));
    assert_eq!(web["dependents"], json!([]));
    assert_eq!(web["tags"], json!(["app"]));
    let build = &web["tasks"]["build"];
    assert_eq!(build["depends_on"], json!(["^build", "codegen", "shared#gen"]), "references as written");
    assert_eq!(build["command"], json!(log_cmd("web#build")));
    assert_eq!(build["cache"], true);
    let ui = projects.iter().find(|p| p["name"] == "ui").expect("ui");
    assert_eq!(ui["dependents"], json!(["web"]));
    assert!(env.log().is_empty());
}

#[test]
fn show_one_project_and_filters() {
    let env = fixture();
    let out = env.vx(&["show", "web", "--format", "json"]);
    out.assert_success();
    let doc = parse(&out.stdout);
    assert_eq!(doc["projects"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc["projects"][0]["name"], "web");

    let out = env.vx(&["show", "--format", "json", "--filter", "web..."]);
    out.assert_success();
    let doc = parse(&out.stdout);
    let names: BTreeSet<&str> =
        doc["projects"].as_array().expect("projects").iter().map(|p| p["name"].as_str().expect("name")).collect();
    assert_eq!(names, BTreeSet::from(["ui", "web"]));
}

#[test]
fn show_text_lists_projects_and_tasks() {
    let env = fixture();
    let out = env.vx(&["show"]);
    out.assert_success();
    assert!(out.stdout.contains("web (packages/web)"), "{out}");
    assert!(out.stdout.contains("depends on: ui"), "{out}");
    assert!(out.stdout.contains("shared#gen"), "{out}");
}

#[test]
fn show_an_unknown_project_suggests_one() {
    let env = fixture();
    let out = env.vx(&["show", "webb"]);
    out.assert_code(2);
    assert!(out.error_line().contains("did you mean `web`?"), "{out}");
}

/// A task's `description` (issue 39) is shown by `vx show` under the
/// task, and is in `vx show --format json` and `--dry=json`; Turborepo's
/// `description` is read natively and written by `vx init`.
#[test]
fn a_task_description_is_shown_and_read_from_turbo_json() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/web/vx.toml",
        "[project]\nname = \"web\"\n\n[tasks.build]\ncommand = \"true\"\ndescription = \"Bundles the app for production\"\n",
    );
    let show = env.vx(&["show", "web"]);
    show.assert_success();
    assert!(show.stdout.contains("  build: true\n    Bundles the app for production\n"), "{show}");
    let json: Value = serde_json::from_str(&env.vx(&["show", "web", "--format", "json"]).stdout).expect("JSON");
    assert_eq!(json["projects"][0]["tasks"]["build"]["description"], "Bundles the app for production", "{json}");
    let dry: Value = serde_json::from_str(&env.vx(&["run", "build", "--dry=json"]).stdout).expect("JSON");
    assert_eq!(dry["tasks"][0]["description"], "Bundles the app for production", "{dry}");

    let turbo = TestEnv::new();
    turbo.write("package.json", r#"{ "name": "root", "workspaces": ["packages/*"] }"#);
    turbo.write("packages/a/package.json", r#"{ "name": "a", "scripts": { "build": "true" } }"#);
    turbo.write("turbo.json", r#"{ "tasks": { "build": { "description": "Compiles TypeScript" } } }"#);
    let show = turbo.vx(&["show", "a"]);
    show.assert_success();
    assert!(show.stdout.contains("    Compiles TypeScript\n"), "{show}");
    let init = turbo.vx(&["init", "--dry"]);
    init.assert_success();
    assert!(init.stdout.contains("[tasks.build]\ndescription = \"Compiles TypeScript\"\n"), "{init}");
}
