//! `vx mcp`, driven by a real MCP client: the official Python SDK (PyPI
//! `mcp`, installed by `scripts/test`) runs `tests/mcp/client.py`, which
//! starts `vx mcp` over stdio as an agent's host does and calls its tools
//! against a real git workspace. A read-only server lists projects, shows
//! a task's command and key, says what a change affects and why, plans,
//! lists runs and returns a failed task's whole log, and offers no tool
//! that runs anything; with `--allow-run` it runs tasks and returns each
//! one's status, cache outcome, exit code and log. Bad arguments are tool
//! errors with vx's own message. The promise that no process outlives vx
//! is checked with the protocol spoken by hand: a `kill -9` of the server,
//! or its client going away, in the middle of a run leaves nothing.

use std::io::Write;
use std::path::PathBuf;
use std::process::ChildStdin;

use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::process::{Running, assert_nothing_left, poll};
use crate::common::{TestEnv, vx_bin};

/// The Python with the MCP SDK: `$VX_TEST_MCP_PYTHON`, else where
/// `scripts/test` installs it; `None` (the test is skipped, saying why)
/// only when neither is there and the variable is unset.
fn python() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("VX_TEST_MCP_PYTHON").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        assert!(path.is_file(), "VX_TEST_MCP_PYTHON points at {}, which is not a file", path.display());
        return Some(path);
    }
    let installed =
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/vx/mcp-venv-2.3.0/bin/python");
    installed.is_file().then_some(installed)
}

const NO_SDK: &str = "skipped: no MCP SDK installed; scripts/test installs it and sets VX_TEST_MCP_PYTHON";

/// `lib` (a described `build`), `app` depending on it (`build`, and a
/// `test` that prints 3,000 lines and exits 3), committed on `main`.
fn workspace(env: &TestEnv) {
    env.workspace(&["packages/*"]);
    env.write(
        "packages/lib/vx.toml",
        &format!(
            "[project]\nname = \"lib\"\n{}",
            task(
                "build",
                &format!("{}; echo lib built; mkdir -p dist; cp src/x.txt dist/", log("lib#build")),
                "description = \"Compiles lib\"\ninputs = [\"src/**\"]\noutputs = [\"dist/**\"]",
            )
        ),
    );
    env.write("packages/lib/src/x.txt", "1\n");
    let app_tasks = [
        task(
            "build",
            &format!("{}; echo app built", log("app#build")),
            "depends-on = [\"^build\"]\ninputs = [\"src/**\"]",
        ),
        task("test", "seq 1 3000; exit 3", "inputs = [\"src/**\"]"),
        task("slow", &format!("{}; sleep 300", log("slow started")), "cache = false"),
    ];
    env.write(
        "packages/app/vx.toml",
        &format!("[project]\nname = \"app\"\ndepends-on = [\"lib\"]\n{}", app_tasks.concat()),
    );
    env.write("packages/app/src/x.txt", "1\n");
    env.write(".gitignore", ".vx/\ndist/\n");
    env.git_init("main");
    env.git_commit_all("first");
}

/// Runs the client with `vx mcp ARGS` and `steps`; the initialize answer
/// and one answer a step.
fn client(env: &TestEnv, python: &PathBuf, args: &[&str], steps: Value) -> (Value, Vec<Value>) {
    let mut command = vec![vx_bin().display().to_string(), "mcp".to_string()];
    command.extend(args.iter().map(|a| a.to_string()));
    let script = json!({ "command": command, "cwd": env.root(), "steps": steps });
    let file = env.root().join("../mcp-script.json");
    std::fs::write(&file, script.to_string()).expect("write the client's script");
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client.py");
    let out = env.tool_in(".", python, &[&client.display().to_string(), &file.display().to_string()], &[]);
    assert_eq!(out.code, 0, "the MCP client failed\n{out}");
    let mut lines = out.stdout.lines().map(|l| serde_json::from_str::<Value>(l).expect("the client prints JSON lines"));
    let init = lines.next().expect("the initialize answer");
    (init, lines.collect())
}

/// The ids of the `tasks` array of `value`, sorted.
fn ids(value: &Value) -> Vec<String> {
    let mut ids: Vec<String> = value["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["id"].as_str().expect("an id").to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_read_only_server_lists_shows_plans_and_says_what_a_change_affects() {
    let Some(python) = python() else { return eprintln!("{NO_SDK}") };
    let env = TestEnv::new();
    workspace(&env);
    env.write("packages/lib/src/x.txt", "2\n");
    let steps = json!([
        {"tools": true},
        {"resources": true},
        {"read": "vx://docs/config"},
        {"call": "list_projects"},
        {"call": "list_projects", "args": {"filter": ["lib"], "detail": true}},
        {"call": "show_task", "args": {"task": "app#build"}},
        {"call": "affected", "args": {"tasks": ["build"], "base": "HEAD"}},
        {"call": "plan", "args": {"tasks": ["build"], "filter": ["app"]}},
        {"call": "run_tasks", "args": {"tasks": ["build"]}},
        {"call": "show_task", "args": {"task": "--force"}},
        {"call": "show_task", "args": {"task": "nope#build"}},
        {"read": "vx://docs/nope"},
    ]);
    let (init, answers) = client(&env, &python, &[], steps);
    assert_eq!(init["server"], "vx");
    assert!(init["instructions"].as_str().unwrap_or_default().contains("list_projects"), "{init}");
    assert_eq!(
        answers[0]["tools"],
        json!(["affected", "failed_log", "last_runs", "list_projects", "plan", "show_task", "why"]),
        "read-only: no tool runs anything"
    );
    let uris = answers[1]["resources"].as_array().expect("resources");
    for uri in ["vx://docs/agents", "vx://docs/config", "vx://docs/cli"] {
        assert!(uris.contains(&json!(uri)), "{uri} missing from {uris:?}");
    }
    assert!(
        answers[2]["text"].as_str().unwrap_or_default().contains("[tasks."),
        "the config reference: {}",
        answers[2]
    );

    let listed = &answers[3]["structured"];
    let names: Vec<&str> = listed["projects"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["app", "lib"], "{listed}");
    assert_eq!(listed["projects"][1]["tasks"]["build"], "Compiles lib", "{listed}");
    assert_eq!(listed["projects"][0]["dependencies"], json!(["lib"]), "{listed}");
    let detailed = &answers[4]["structured"]["projects"];
    assert_eq!(detailed.as_array().map(Vec::len), Some(1), "{detailed}");
    assert_eq!(detailed[0]["tasks"]["build"]["outputs"], json!(["dist/**"]), "{detailed}");

    let shown = &answers[5]["structured"];
    assert_eq!(shown["id"], "app#build", "{shown}");
    assert!(shown["command"].as_str().unwrap().ends_with("echo app built"), "{shown}");
    assert_eq!(shown["dependencies"], json!(["lib#build"]), "{shown}");
    assert_eq!(shown["key"].as_str().map(str::len), Some(64), "{shown}");
    assert_eq!(shown["cache_status"], "miss", "{shown}");

    let affected = &answers[6]["structured"];
    assert_eq!(ids(affected), ["app#build", "lib#build"], "{affected}");
    let reasons = |id: &str| {
        let task = affected["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).expect("an affected task");
        task["reasons"].as_array().expect("reasons").clone()
    };
    assert_eq!(reasons("lib#build")[0]["kind"], "input", "{affected}");
    assert_eq!(reasons("lib#build")[0]["files"], json!(["packages/lib/src/x.txt"]), "{affected}");
    assert_eq!(
        (&reasons("app#build")[0]["kind"], &reasons("app#build")[0]["task"]),
        (&json!("dependency"), &json!("lib#build")),
        "{affected}"
    );
    assert_eq!(ids(&answers[7]["structured"]), ["app#build", "lib#build"], "the plan: {}", answers[7]);

    let refused = &answers[8];
    assert!(
        refused.get("protocol_error").is_some() || refused["is_error"] == true,
        "run_tasks is not offered: {refused}"
    );
    assert_eq!(answers[9]["is_error"], true);
    assert!(answers[9]["text"].as_str().unwrap().contains("not a task name"), "{}", answers[9]);
    assert_eq!(answers[10]["is_error"], true);
    assert!(answers[10]["text"].as_str().unwrap().contains("nope"), "vx's own message: {}", answers[10]);
    assert!(answers[11].get("protocol_error").is_some(), "{}", answers[11]);
    assert!(env.log().is_empty(), "a read-only server ran tasks: {:?}", env.log());
}

#[test]
fn a_failed_tasks_whole_log_is_read_back_after_the_run() {
    let Some(python) = python() else { return eprintln!("{NO_SDK}") };
    let env = TestEnv::new();
    workspace(&env);
    env.vx(&["run", "app#test"]).assert_code(1);
    let steps = json!([
        {"call": "last_runs", "args": {"limit": 5}},
        {"call": "failed_log", "args": {"task": "app#test"}},
        {"call": "failed_log", "args": {"task": "lib#build"}},
        {"call": "why", "args": {"task": "lib#build"}},
    ]);
    let (_, answers) = client(&env, &python, &[], steps);
    let runs = &answers[0]["structured"]["runs"];
    assert_eq!(runs[0]["exit_code"], 1, "the failed run, newest first: {runs}");
    assert_eq!(
        (&runs[0]["logs"][0]["task"], &runs[0]["logs"][0]["exit_code"]),
        (&json!("app#test"), &json!(3)),
        "{runs}"
    );

    let log = &answers[1]["structured"];
    let text = log["text"].as_str().expect("the log's text");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3000, "the whole log, not a tail");
    assert_eq!((lines[0], lines[2999]), ("1", "3000"));
    assert_eq!(log["exit_code"], 3, "{log}");
    assert_eq!(log["truncated"], false, "{log}");

    assert_eq!(answers[2]["is_error"], true, "lib#build never failed: {}", answers[2]);
    assert!(answers[2]["text"].as_str().unwrap().contains("no kept log"), "{}", answers[2]);
    assert_eq!(answers[3]["structured"]["task"], "lib#build", "{}", answers[3]);
}

#[test]
fn with_allow_run_tasks_run_and_each_result_is_data() {
    let Some(python) = python() else { return eprintln!("{NO_SDK}") };
    let env = TestEnv::new();
    workspace(&env);
    let steps = json!([
        {"tools": true},
        {"call": "run_tasks", "args": {"tasks": ["build"]}},
        {"call": "run_tasks", "args": {"tasks": ["build"]}},
        {"call": "run_tasks", "args": {"tasks": ["app#test"], "only": true}},
        {"call": "run_tasks", "args": {"tasks": ["nope"]}},
    ]);
    let (_, answers) = client(&env, &python, &["--allow-run"], steps);
    assert!(answers[0]["tools"].as_array().unwrap().contains(&json!("run_tasks")), "{}", answers[0]);

    let first = &answers[1]["structured"];
    assert_eq!(first["exit_code"], 0, "{first}");
    assert_eq!(ids(first), ["app#build", "lib#build"], "{first}");
    let lib = first["tasks"].as_array().unwrap().iter().find(|t| t["id"] == "lib#build").unwrap();
    assert_eq!((&lib["status"], &lib["cache"], &lib["exit_code"]), (&json!("ok"), &json!("miss"), &json!(0)), "{lib}");
    assert!(lib["log_tail"].as_array().unwrap().contains(&json!("lib built")), "{lib}");
    let file = lib["log_file"].as_str().expect("the log's file");
    assert!(std::fs::read_to_string(file).expect("the log file").contains("lib built\n"), "{lib}");
    assert_eq!(env.log_set(), ["app#build", "lib#build"]);

    let second = &answers[2]["structured"];
    assert!(second["tasks"].as_array().unwrap().iter().all(|t| t["cache"] == "hit-local"), "cached: {second}");
    assert_eq!(env.log_set(), ["app#build", "lib#build"], "a hit runs nothing");

    let failed = &answers[3]["structured"];
    assert_eq!(failed["exit_code"], 1, "{failed}");
    let test = &failed["tasks"][0];
    assert_eq!(
        (&test["id"], &test["status"], &test["exit_code"]),
        (&json!("app#test"), &json!("failed"), &json!(3)),
        "{test}"
    );
    assert_eq!(test["log_lines"], 3000, "{test}");
    assert_eq!(test["log_tail"].as_array().unwrap().last(), Some(&json!("3000")), "{test}");
    let whole = std::fs::read_to_string(test["log_file"].as_str().unwrap()).expect("the log file");
    assert_eq!(whole.lines().count(), 3000);

    assert_eq!(answers[4]["is_error"], true, "{}", answers[4]);
    assert!(answers[4]["text"].as_str().unwrap().contains("nope"), "vx's own message: {}", answers[4]);
    assert_nothing_left(&env, &[], &"after the client ended");
}

/// Speaks the protocol by hand: `initialize`, then `run_tasks` of a task
/// that sleeps; returns once the task has started, with the server's input
/// (closing it ends the session).
fn start_a_slow_run(env: &TestEnv) -> (Running, ChildStdin) {
    let mut vx = env.vx_command(&["mcp", "--allow-run"]).piped_stdin().spawn();
    let mut stdin = vx.take_stdin();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_tasks", "arguments": {"tasks": ["app#slow"]}}}),
    ];
    for m in messages {
        writeln!(stdin, "{m}").expect("write to vx mcp");
    }
    stdin.flush().expect("flush");
    assert!(poll(|| env.log().contains(&"slow started".to_string())), "the task never started\n{}", vx.output_so_far());
    let first = vx.output_so_far().stdout;
    let answer: Value = serde_json::from_str(first.lines().next().expect("the initialize answer")).expect("JSON-RPC");
    assert_eq!(answer["id"], 1, "{first}");
    let running = env.live_processes();
    assert!(running.len() >= 4, "the server, its child vx, that vx's guard and the task: {running:?}");
    (vx, stdin)
}

#[test]
fn a_kill_9_of_the_server_in_the_middle_of_a_run_leaves_nothing() {
    let env = TestEnv::new();
    workspace(&env);
    let (vx, stdin) = start_a_slow_run(&env);
    let server = vx.pid();
    vx.signal(Signal::SIGKILL);
    let out = vx.finish();
    drop(stdin);
    assert_nothing_left(&env, &[server], &out);
}

#[test]
fn the_client_going_away_ends_the_server_and_its_run() {
    let env = TestEnv::new();
    workspace(&env);
    let (vx, stdin) = start_a_slow_run(&env);
    drop(stdin);
    let out = vx.finish();
    assert_eq!(out.code, 0, "a closed input is the end of the session\n{out}");
    assert_nothing_left(&env, &[], &out);
}

#[test]
fn outside_a_workspace_it_is_one_line_and_exit_2_before_any_protocol() {
    let env = TestEnv::new();
    let out = env.vx(&["mcp"]);
    out.assert_code(2);
    assert!(out.stdout.is_empty(), "stdout is the protocol's: {out}");
    assert_eq!(out.stderr.lines().filter(|l| l.starts_with("vx: error:")).count(), 1, "{out}");
}

#[test]
fn sigterm_of_the_server_in_the_middle_of_a_run_leaves_nothing() {
    let env = TestEnv::new();
    workspace(&env);
    let (vx, stdin) = start_a_slow_run(&env);
    let server = vx.pid();
    vx.signal(Signal::SIGTERM);
    let out = vx.finish();
    drop(stdin);
    assert_nothing_left(&env, &[server], &out);
}

#[test]
fn a_cancelled_run_is_stopped_and_the_server_serves_on() {
    let env = TestEnv::new();
    workspace(&env);
    let (mut vx, mut stdin) = start_a_slow_run(&env);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}});
    writeln!(stdin, "{cancel}").expect("write to vx mcp");
    stdin.flush().expect("flush");
    let server = vx.pid();
    let gone = poll(|| env.live_processes().iter().all(|p| p.pid == server));
    assert!(gone, "the run outlived its cancelled request: {:?}\n{}", env.live_processes(), vx.output_so_far());
    assert!(vx.is_running(), "the server serves on after a cancelled request");
    drop(stdin);
    let out = vx.finish();
    assert_eq!(out.code, 0, "{out}");
}
