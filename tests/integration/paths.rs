//! A workspace whose path holds spaces and non-ASCII characters, with a
//! project directory that does too: discovery, running, cwd, `-C`, path
//! filters and error positions all keep working.

use crate::common::{TestEnv, assert_before, project_toml};

const WS: &str = "dir with spaces/ünïcødé ☃ wörk";

/// A task command that logs its id and its working directory.
fn log_id_and_cwd(id: &str) -> String {
    format!("echo \"{id} $(pwd)\" >> \"$VX_TEST_LOG\"")
}

fn fixture() -> TestEnv {
    let env = TestEnv::with_workspace_dir(WS);
    env.workspace(&["packages/*"]);
    env.write(
        "packages/café app/vx.toml",
        &project_toml("café", &[], &[("build", &log_id_and_cwd("café#build"), &[])]),
    );
    env.write(
        "packages/web site/vx.toml",
        &project_toml("web", &["café"], &[("build", &log_id_and_cwd("web#build"), &["^build"])]),
    );
    env
}

#[test]
fn tasks_run_in_order_in_their_project_directories() {
    let env = fixture();
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    let log = env.log();
    let cafe = format!("café#build {}", env.root().join("packages/café app").display());
    let web = format!("web#build {}", env.root().join("packages/web site").display());
    assert_before(&log, &cafe, &web);
    assert_eq!(log.len(), 2, "{log:?}");
}

#[test]
fn run_from_inside_a_project_directory() {
    let env = fixture();
    env.vx_in("packages/web site", &["run", "build"]).assert_success();
    let log = env.log();
    assert_eq!(log.len(), 2, "web#build and its dependency café#build: {log:?}");
    assert!(log[1].starts_with("web#build "), "{log:?}");
}

#[test]
fn dash_c_with_such_a_path() {
    let env = fixture();
    let project = env.root().join("packages/café app");
    let project = project.to_str().expect("utf-8 path");
    env.vx_in("/", &["-C", project, "run", "build"]).assert_success();
    assert_eq!(env.log().len(), 1, "only café#build: {:?}", env.log());
}

#[test]
fn path_filter_with_spaces_and_non_ascii() {
    let env = fixture();
    env.vx(&["run", "build", "--filter", "./packages/café app"]).assert_success();
    assert_eq!(env.log().len(), 1);
    assert!(env.log()[0].starts_with("café#build "), "{:?}", env.log());
}

#[test]
fn show_reports_the_root_and_relative_dirs() {
    let env = fixture();
    let out = env.vx_in("packages/web site", &["show", "--format", "json"]);
    out.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("show prints JSON");
    assert_eq!(doc["root"].as_str(), env.root().to_str());
    let dirs: Vec<&str> =
        doc["projects"].as_array().expect("projects").iter().map(|p| p["dir"].as_str().expect("dir")).collect();
    assert_eq!(dirs, ["packages/café app", "packages/web site"]);
}

#[test]
fn config_error_positions_count_characters() {
    let env = fixture();
    env.write(
        "packages/café app/vx.toml",
        "[project]\nname = \"café\"\n\n[tasks.dev]\ncommand = \"true\"\npersistent = true\nready = { log = \"ééé\", prot = 1 }\n",
    );
    let out = env.vx(&["show"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("packages/café app/vx.toml:7:24:"), "column in characters, not bytes\n{out}");
    assert!(line.contains("did you mean `port`?"), "{out}");
}
