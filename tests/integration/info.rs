//! `vx info`, the doctor: what it reports of a real workspace after a real
//! run, of a real REAPI server (up, then killed), of a real plugin (pinned,
//! then tampered with), and the problems it finds with their fixes and its
//! exit status.

use serde_json::Value;

use crate::common::buildgrid::BuildGrid;
use crate::common::fixtures::task;
use crate::common::{Output, TestEnv, project_toml};
use crate::plugins::component;

fn two_projects() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["app", "lib"]);
    let outputs = "outputs = [\"out.txt\"]";
    env.write(
        "app/vx.toml",
        &format!("{}{}", project_toml("app", &["lib"], &[]), task("build", "echo app > out.txt", outputs)),
    );
    let lib = [task("build", "echo lib > out.txt", outputs), task("test", "true", "")].concat();
    env.write("lib/vx.toml", &format!("{}{lib}", project_toml("lib", &[], &[])));
    env
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("vx info --format json is not JSON ({e}): {out}"))
}

fn areas(info: &Value) -> Vec<&str> {
    info["problems"].as_array().unwrap().iter().map(|p| p["area"].as_str().unwrap()).collect()
}

#[test]
fn a_healthy_workspace_is_described_with_its_cache_and_history_and_exits_0() {
    let env = two_projects();
    env.vx(&["run", "build"]).assert_success();
    let out = env.vx(&["info", "--format", "json"]);
    out.assert_success();
    let info = json(&out);
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    let ws = &info["workspace"];
    assert_eq!(ws["root"].as_str().unwrap(), env.root().canonicalize().unwrap().to_str().unwrap());
    assert_eq!((ws["projects"].as_u64(), ws["tasks"].as_u64()), (Some(2), Some(3)), "{info}");
    assert_eq!(ws["env_mode"], "strict");
    // Two cached builds ran: two entries, with bytes.
    assert_eq!(info["cache"]["entries"], 2, "{info}");
    assert!(info["cache"]["bytes"].as_u64().unwrap() > 0);
    assert_eq!(info["cache"]["writable"], true);
    assert_eq!(info["history"]["runs"], 1, "{info}");
    assert_eq!(info["remote"], Value::Null);
    assert_eq!(info["plugins"], serde_json::json!([]));
    assert_eq!(info["guard"]["procfs"], true);
    assert_eq!(info["guard"]["pidfd"], true);
    assert!(info["sandbox"]["landlock_abi"].as_i64().unwrap() >= 1, "{info}");
    assert_eq!(info["watcher"]["backend"], "inotify");
    // What `vx watch` would watch: the root, app and lib; not .vx with
    // its cache and run state.
    assert_eq!(info["watcher"]["directories"].as_u64(), Some(3), "{info}");
    assert_eq!(ws["config"], "vx.toml", "{info}");
    assert!(info["watcher"]["max_user_watches"].as_u64().unwrap() > 0);
    assert_eq!(areas(&info), Vec::<&str>::new());

    let text = env.vx(&["info"]);
    text.assert_success();
    assert!(text.stdout.contains("(2 projects, 3 tasks)"), "{text}");
    assert!(text.stdout.contains(": 2 entries,"), "{text}");
    assert!(text.stdout.contains(": 1 runs"), "{text}");
    assert!(text.stdout.ends_with("\nno problems found\n"), "{text}");
}

#[test]
fn outside_a_workspace_it_still_describes_the_machine_and_says_how_to_start() {
    let env = TestEnv::new();
    let out = env.vx(&["info"]);
    out.assert_code(1);
    assert!(out.stdout.contains("workspace none"), "{out}");
    assert!(out.stdout.contains("guard     process groups yes"), "{out}");
    assert!(out.stdout.contains("1 problem:\n  workspace: no vx workspace found in"), "{out}");
    assert!(out.stdout.contains("    fix: run `vx init` at the repository's root"), "{out}");
    assert_eq!(out.stderr, "", "the report is the output, not an error");
}

#[test]
fn a_config_error_is_a_problem_naming_the_place_not_a_failure_to_report() {
    let env = two_projects();
    env.write("lib/vx.toml", "[project]\nname = \"lib\"\n[tasks.build]\ncommand = \"true\"\ntimeout = \"ten\"\n");
    let out = env.vx(&["info", "--format", "json"]);
    out.assert_code(1);
    let info = json(&out);
    assert_eq!(info["workspace"], Value::Null);
    let problem = &info["problems"][0];
    assert_eq!(problem["area"], "workspace");
    assert!(problem["problem"].as_str().unwrap().starts_with("lib/vx.toml:5:"), "{info}");
    assert!(problem["fix"].as_str().unwrap().starts_with("mend the file"), "{info}");
}

#[test]
fn a_cache_dir_vx_cannot_create_is_a_problem_and_the_doctor_creates_nothing() {
    let env = two_projects();
    env.write("blocker", "a file where the cache directory should be\n");
    let toml = env.read("vx.toml");
    env.write("vx.toml", &format!("{toml}\n[cache]\ndir = \"blocker/cache\"\n"));
    let out = env.vx(&["info", "--format", "json"]);
    out.assert_code(1);
    let info = json(&out);
    assert_eq!(info["cache"]["writable"], false);
    assert_eq!(areas(&info), ["cache"]);
    assert!(info["problems"][0]["fix"].as_str().unwrap().contains("`[cache] dir`"), "{info}");
    // A fresh workspace's cache directory is writable but not there yet:
    // the doctor does not make it.
    let fresh = two_projects();
    fresh.vx(&["info"]).assert_success();
    assert!(!fresh.root().join(".vx").exists(), "vx info created .vx");
}

#[test]
fn a_reapi_server_is_checked_for_its_capabilities_and_a_dead_one_is_a_problem_with_its_fix() {
    let mut server = BuildGrid::start();
    let env = two_projects();
    let toml = env.read("vx.toml");
    env.write("vx.toml", &format!("{toml}{}", server.remote_toml()));
    let out = env.vx(&["info", "--format", "json"]);
    out.assert_success();
    let remote = &json(&out)["remote"];
    assert_eq!(remote["backend"], "reapi");
    assert_eq!(remote["endpoint"].as_str(), Some(server.endpoint().as_str()));
    assert_eq!(remote["reachable"], true, "{remote}");
    let caps: Vec<&str> = remote["capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert!(caps.contains(&"SHA-256 digests") && caps.contains(&"action cache writable"), "{caps:?}");
    assert!(caps.contains(&"no remote execution"), "the cache-only server offers no execution: {caps:?}");

    server.kill();
    let out = env.vx(&["info"]);
    out.assert_code(1);
    assert!(out.stdout.contains(&format!("remote    reapi at {}: UNREACHABLE: ", server.endpoint())), "{out}");
    assert!(
        out.stdout.contains(&format!("    fix: start the server at {} or mend `[remote]`", server.endpoint())),
        "{out}"
    );
    // --offline does not connect, so the dead server is no problem.
    let offline = env.vx(&["info", "--offline"]);
    offline.assert_success();
    assert!(offline.stdout.contains(": not checked (--offline)"), "{offline}");
}

#[test]
fn a_plugin_is_listed_with_its_world_and_pin_and_a_tampered_one_gets_the_repin_command() {
    let env = two_projects();
    let kit = component("testkit");
    env.vx(&["plugin", "add", kit.to_str().unwrap(), "--name", "kit"]).assert_success();
    let out = env.vx(&["info", "--format", "json"]);
    let info = json(&out);
    let plugin = &info["plugins"][0];
    assert_eq!(plugin["name"], "kit");
    assert!(plugin["world"].as_str().unwrap().starts_with("vx:plugin/"), "{plugin}");
    assert_eq!(plugin["state"], "pinned ok");
    let bytes = std::fs::read(env.root().join(".vx/plugins/kit.wasm")).unwrap();
    assert_eq!(plugin["hash"].as_str(), Some(blake3::hash(&bytes).to_hex().as_str()));

    let mut tampered = bytes;
    tampered.push(0);
    std::fs::write(env.root().join(".vx/plugins/kit.wasm"), tampered).unwrap();
    let out = env.vx(&["info"]);
    out.assert_code(1);
    assert!(
        out.stdout.contains("  plugins: plugin `kit`: .vx/plugins/kit.wasm is not the file pinned in vx.lock"),
        "{out}"
    );
    assert!(out.stdout.contains("    fix: if the new file is intended, re-pin it with `vx plugin add .vx/plugins/kit.wasm --name kit --force`"), "{out}");
}
