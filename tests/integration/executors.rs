//! Executor plugins: a task with `executor = "NAME"` runs through the
//! plugin, whose processes start only through vx's `process` import (the
//! guard, `allow-programs`, a cleared environment). With the test
//! component `testexec` (tests/plugins) and the first-party `sandbox`
//! (bubblewrap; `scripts/test` installs it).

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use crate::common::TestEnv;
use crate::common::process::{alive, poll};
use crate::plugins::component;

/// `app#build` through executor `ex` (testexec, or `plugin`), with the
/// given `[plugins.ex]` grant lines and config.
fn fixture(plugin: &str, command: &str, grants: &str, config: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\", \"lib\"]\n");
    env.write(
        "app/vx.toml",
        &format!(
            "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = {command:?}\nexecutor = \"ex\"\noutputs = [\"dist/**\"]\nenv = [\"DECLARED\"]\n"
        ),
    );
    env.write("lib/vx.toml", "[project]\nname = \"lib\"\n\n[tasks.build]\ncommand = \"true\"\n");
    let wasm = component(plugin);
    env.vx(&["plugin", "add", wasm.to_str().unwrap(), "--name", "ex"]).assert_success();
    let toml = env.read("vx.toml");
    let head = toml.split("[plugins.ex]").next().unwrap().to_string();
    env.write(
        "vx.toml",
        &format!("{head}[plugins.ex]\npath = \".vx/plugins/ex.wasm\"\n{grants}\n\n[plugins.ex.config]\n{config}\n"),
    );
    env
}

#[test]
fn a_task_runs_through_its_executor_and_is_cached_like_a_local_one() {
    let env = fixture(
        "testexec",
        "echo hello from $VX_PROJECT; mkdir -p dist; echo out > dist/o.txt",
        "allow-programs = [\"sh\"]",
        "",
    );
    let out = env.vx(&["run", "build", "--report", "markdown"]);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["hello from app"], "{out}");
    assert_eq!(env.read("app/dist/o.txt"), "out\n");
    std::fs::remove_dir_all(env.root().join("app/dist")).unwrap();
    let again = env.vx(&["run", "build", "--report", "markdown"]);
    again.assert_success();
    assert!(again.stdout.contains("| `app#build` | ok | hit (local)"), "{again}");
    assert!(again.task_lines("app#build").contains(&"hello from app"), "the log is replayed\n{again}");
    assert_eq!(env.read("app/dist/o.txt"), "out\n", "outputs restored");
    env.write("app/new.txt", "changed");
    let why = env.vx(&["why", "app#build"]);
    why.assert_success();
    assert!(why.stdout.contains("new.txt"), "history has its key's manifest\n{why}");
}

/// `app#build`'s key and cache status in `vx run app#build --dry=json ARGS`.
fn dry_key(env: &TestEnv, args: &[&str]) -> (String, String) {
    let mut all = vec!["run", "app#build", "--dry=json"];
    all.extend_from_slice(args);
    let out = env.vx(&all);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let task = &plan["tasks"][0];
    assert_eq!(task["id"], "app#build", "{out}");
    (task["key"].as_str().expect("a key").to_string(), task["cache_status"].as_str().expect("a status").to_string())
}

#[test]
fn the_executor_plugin_its_config_and_executor_flag_are_in_the_key_dry_and_run_alike() {
    let env = fixture("testexec", "mkdir -p dist; echo out > dist/o.txt", "allow-programs = [\"sh\"]", "");
    let (planned, status) = dry_key(&env, &[]);
    assert_eq!(status, "miss");
    env.vx(&["run", "app#build"]).assert_success();
    assert_eq!(dry_key(&env, &[]), (planned.clone(), "hit-local".to_string()), "--dry computes the run's key");

    let (local, status) = dry_key(&env, &["--executor", "local"]);
    assert_ne!(local, planned, "--executor is part of the key");
    assert_eq!(status, "miss");
    let out = env.vx(&["run", "app#build", "--executor", "local"]);
    out.assert_success();
    assert_eq!(out.summary().cached, 0, "another executor is another key\n{out}");
    assert_eq!(dry_key(&env, &["--executor", "local"]), (local, "hit-local".to_string()));
    let why = env.vx(&["why", "app#build", "--executor", "local"]);
    why.assert_success();
    assert!(why.stdout.contains("key unchanged since its last run"), "vx why keys it as the run did\n{why}");

    let toml = env.read("vx.toml");
    env.write("vx.toml", &toml.replace("[plugins.ex.config]\n", "[plugins.ex.config]\nmode = \"run\"\n"));
    let (configured, status) = dry_key(&env, &[]);
    assert_ne!(configured, planned, "the plugin's config is part of the key");
    assert_eq!(status, "miss");
    let out = env.vx(&["run", "app#build"]);
    out.assert_success();
    assert_eq!(out.summary().cached, 0, "{out}");
    assert_eq!(dry_key(&env, &[]), (configured, "hit-local".to_string()));
}

#[test]
fn a_failing_command_fails_the_task_with_its_exit_code_and_log_tail() {
    let env = fixture("testexec", "echo broken; exit 3", "allow-programs = [\"sh\"]", "");
    let out = env.vx(&["run", "build", "--report", "markdown", "--report-file", "r.md"]);
    out.assert_code(1);
    let md = env.read("r.md");
    assert!(md.contains("### `app#build`: failed (exit code 3)") && md.contains("broken"), "{md}");
}

#[test]
fn a_program_outside_allow_programs_is_denied_naming_the_key() {
    let env = fixture("testexec", "echo hi; true", "", "");
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(out.stdout.contains("`sh` is not in [plugins.ex].allow-programs"), "{out}");
    assert!(out.stdout.contains("add \"sh\" to it in vx.toml"), "{out}");

    let env =
        fixture("testexec", "echo hi; true", "allow-programs = [{ program = \"sh\", args = [\"-x\", \"**\"] }]", "");
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(out.stdout.contains("does not match [plugins.ex].allow-programs"), "{out}");
}

#[test]
fn children_get_only_declared_and_granted_variables() {
    let env = fixture(
        "testexec",
        "true",
        "allow-programs = [\"sh\"]\nenv = [\"GRANTED\"]",
        "mode = \"program\"\nprogram = \"sh\"\nargs = [\"-c\", \"echo D=$DECLARED G=$GRANTED S=$SECRET P=$VX_PROJECT\"]",
    );
    let out = env.vx_command(&["run", "build"]).env("DECLARED", "d").env("GRANTED", "g").env("SECRET", "s").output();
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["D=d G=g S= P=app"], "{out}");
}

#[test]
fn a_child_the_plugin_leaves_running_is_killed_when_the_call_ends() {
    let env = fixture(
        "testexec",
        "echo $$ > pid.txt; echo started; exec sleep 300",
        "allow-programs = [\"sh\"]",
        "mode = \"leak\"",
    );
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(out.stdout.contains("app#build: started"), "{out}");
    let pid: i32 = env.read("app/pid.txt").trim().parse().unwrap();
    assert!(poll(|| !alive(pid)), "pid {pid} outlived the call\n{out}");
}

#[test]
fn a_dropped_child_handle_kills_its_group() {
    let env = fixture(
        "testexec",
        "echo $$ > pid.txt; echo started; exec sleep 300",
        "allow-programs = [\"sh\"]",
        "mode = \"drop\"",
    );
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(out.stdout.contains("app#build: started") && out.stdout.contains("dropped the child"), "{out}");
    let pid: i32 = env.read("app/pid.txt").trim().parse().unwrap();
    assert!(poll(|| !alive(pid)), "pid {pid} outlived its handle");
}

#[test]
fn an_executor_task_times_out_and_its_processes_are_stopped() {
    let env = fixture("testexec", "echo $$ > pid.txt; exec sleep 300", "allow-programs = [\"sh\"]", "");
    let toml = env.read("app/vx.toml").replace("executor = \"ex\"", "executor = \"ex\"\ntimeout = \"1s\"");
    env.write("app/vx.toml", &toml);
    let started = std::time::Instant::now();
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(out.stdout.contains("timed out"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(30));
    let pid: i32 = env.read("app/pid.txt").trim().parse().unwrap();
    assert!(poll(|| !alive(pid)), "pid {pid} outlived the timeout");
}

#[test]
fn an_unknown_executor_is_a_config_error_and_a_wrong_kind_fails_the_task_saying_why() {
    let env = TestEnv::new();
    env.write("vx.toml", "[workspace]\nprojects = [\"app\"]\n");
    env.write("app/vx.toml", "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = \"true\"\nexecutor = \"locl\"\n");
    // A typo is found when the config loads, located, with the nearest name.
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.stderr.lines().next().unwrap_or_default().to_string();
    assert!(
        line.contains("app/vx.toml:6:12:") && line.contains("unknown executor `locl`; did you mean `local`?"),
        "{out}"
    );
    assert!(
        env.vx(&["show"]).stderr.contains("unknown executor `locl`"),
        "every command that loads the config refuses it"
    );
    // A plugin named before it is added: `vx plugin add` still loads the
    // workspace, and the task runs once the plugin exists.
    env.write("app/vx.toml", "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = \"true\"\nexecutor = \"nope\"\n");
    env.vx(&["run", "build"]).assert_code(2);
    let kit = component("testkit");
    env.vx(&["plugin", "add", kit.to_str().unwrap(), "--name", "nope"]).assert_success();
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(out.stdout.contains("is a reporter plugin, not an executor"), "{out}");
}

#[test]
fn plugin_add_accepts_an_executor_and_new_scaffolds_one() {
    let env = TestEnv::new();
    env.workspace(&[]);
    let out = env.vx(&["plugin", "add", component("sandbox").to_str().unwrap()]);
    out.assert_success();
    assert!(out.stdout.contains("added `sandbox`: executor"), "{out}");
    assert!(out.stdout.contains("allow-programs=bwrap"), "the request is shown\n{out}");
    assert!(env.read("vx.lock").contains("exports = \"vx:plugin/exec@0.1.0\""));
    let out = env.vx(&["plugin", "new", "executor", "my-exec"]);
    out.assert_success();
    assert!(env.read("my-exec/src/lib.rs").contains("export_executor!(MyExec);"));
}

/// The sandbox executor granted bwrap, running `command` in `app`.
fn sandbox(command: &str, config: &str) -> TestEnv {
    let env = fixture("sandbox", command, "allow-programs = [\"bwrap\"]", config);
    let path = std::env::var_os("PATH").unwrap_or_default();
    assert!(
        std::env::split_paths(&path).any(|dir| dir.join("bwrap").is_file()),
        "bubblewrap is not installed; run scripts/test, which installs it (Debian package `bubblewrap`)"
    );
    env
}

#[test]
fn sandbox_a_normal_build_succeeds() {
    let env = sandbox("echo building; mkdir -p dist && echo built > dist/o.txt && cat ../lib/vx.toml >/dev/null", "");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(out.task_lines("app#build"), ["building"], "{out}");
    assert_eq!(env.read("app/dist/o.txt"), "built\n");
}

#[test]
fn sandbox_a_write_outside_the_project_fails() {
    let env = sandbox("echo x > ../lib/escaped.txt", "");
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(out.stdout.contains("Read-only file system"), "{out}");
    assert!(!env.root().join("lib/escaped.txt").exists());
    let env = sandbox("echo x > ../escaped.txt", "");
    env.vx(&["run", "build"]).assert_code(1);
    assert!(!env.root().join("escaped.txt").exists());
}

#[test]
fn sandbox_allow_makes_a_path_writable_and_deny_hides_one() {
    let env = sandbox("echo x > ../lib/allowed.txt; ls ../secret", "allow = [\"lib\"]\ndeny = [\"secret\"]");
    env.write("secret/key.txt", "k");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert_eq!(env.read("lib/allowed.txt"), "x\n");
    assert!(!out.stdout.contains("key.txt"), "{out}");
}

#[test]
fn sandbox_a_connection_to_localhost_fails_unless_allowed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let connect = format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' && echo connected");
    let env = sandbox(&connect, "");
    let out = env.vx(&["run", "build"]);
    out.assert_code(1);
    assert!(!out.stdout.contains("app#build: connected"), "{out}");
    assert!(listener.accept().is_err(), "nothing reached the listener");

    let env = sandbox(&connect, "allow-network = true");
    let out = env.vx(&["run", "build"]);
    out.assert_success();
    assert!(out.stdout.contains("app#build: connected"), "{out}");
    let mut stream = None;
    assert!(poll(|| {
        stream = listener.accept().ok();
        stream.is_some()
    }));
    let mut got = String::new();
    let mut stream = stream.unwrap().0;
    stream.set_nonblocking(false).unwrap();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hi\n");
}
