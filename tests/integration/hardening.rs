//! Inputs that nobody thought of (issue 36, items 4, 5 and 7): a FIFO
//! where vx reads, a closed pipe, a byte-order mark, a `#` in a name,
//! project globs that match nothing, `--cache-dir` pointed at a directory
//! that is not a store, and a `Host` header naming another site. Each is
//! a clear line or a quiet end, never a hang, a panic or a lost file.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use crate::common::fixtures::task;
use crate::common::log_cmd as log;
use crate::common::{TestEnv, vx_bin};

/// One project `p` whose `build` copies `src/*` into `dist/`.
fn copying_project(env: &TestEnv) {
    env.workspace(&["packages/*"]);
    let build = task(
        "build",
        &format!("{} && mkdir -p dist && cp src/a.txt dist/", log("p")),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n",
    );
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "a");
}

fn mkfifo(env: &TestEnv, rel: &str) {
    let path = env.path(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).expect("mkfifo");
}

#[test]
fn a_fifo_among_the_inputs_is_never_opened_and_the_task_is_not_cached() {
    let env = TestEnv::new();
    copying_project(&env);
    mkfifo(&env, "packages/p/src/pipe");
    // Bounded by the harness's patience: on a vx that opens the FIFO,
    // this run never ends by itself.
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
    assert_eq!(notes.len(), 1, "one line says why\n{out}");
    assert!(notes[0].contains("not a regular file"), "{out}");
    assert_eq!(env.read("packages/p/dist/a.txt"), "a");
}

#[test]
fn a_fifo_named_like_an_ignore_file_or_vx_state_does_not_block_a_run() {
    let env = TestEnv::new();
    copying_project(&env);
    env.vx(&["run", "build"]).assert_success();
    mkfifo(&env, "packages/p/.gitignore");
    std::fs::remove_file(env.path(".vx/stat-index")).ok();
    mkfifo(&env, ".vx/stat-index");
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    assert_eq!(out.summary().cached, 1, "the FIFO changed no input's content, so still a hit\n{out}");
}

#[test]
fn a_fifo_among_the_outputs_is_not_archived() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let build =
        task("build", &format!("{} && mkdir -p dist && mkfifo dist/pipe", log("p")), "outputs = [\"dist/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
    assert_eq!(notes.len(), 1, "one line says why\n{out}");
    assert!(notes[0].contains("dist/pipe") && notes[0].contains("not a regular file"), "{out}");
}

/// `vx ARGS` with its standard output a pipe whose reader has gone, as
/// `vx show | head` leaves it once `head` has read enough: its exit
/// status and its standard error.
fn with_closed_stdout(env: &TestEnv, args: &[&str]) -> (std::process::ExitStatus, String) {
    let (reader, writer) = nix::unistd::pipe().expect("a pipe");
    drop(reader);
    #[expect(clippy::disallowed_methods, reason = "tests start vx directly, not through the guard")]
    let out = std::process::Command::new(vx_bin())
        .args(args)
        .current_dir(env.root())
        .env("HOME", env.root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("run vx");
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_closed_pipe_ends_vx_quietly_like_any_unix_tool() {
    let env = TestEnv::new();
    copying_project(&env);
    env.vx(&["run", "build"]).assert_success();
    for args in [&["show"][..], &["history"], &["show", "p", "--format", "json"], &["run", "build"]] {
        let (status, stderr) = with_closed_stdout(&env, args);
        // A run's report is written by its terminal consumer, which drops
        // what it cannot write: the run itself still succeeds.
        let expected: &[i32] = if args[0] == "run" { &[0, 141] } else { &[141] };
        assert!(
            status.code().is_some_and(|c| expected.contains(&c)),
            "vx {args:?}: the exit a shell gives SIGPIPE ({status:?})\n{stderr}"
        );
        assert!(status.signal().is_none());
        assert!(!stderr.contains("panicked") && stderr.trim().is_empty(), "vx {args:?}: nothing printed\n{stderr}");
    }
}

#[test]
fn a_byte_order_mark_in_package_json_and_vx_toml_is_accepted() {
    let env = TestEnv::new();
    env.write("package.json", "\u{feff}{\"name\": \"root\", \"private\": true, \"workspaces\": [\"packages/*\"]}");
    env.write(
        "packages/a/package.json",
        &format!("\u{feff}{{\"name\": \"a\", \"scripts\": {{\"build\": \"{}\"}}}}", log("a").replace('"', "\\\"")),
    );
    env.write("packages/b/vx.toml", &format!("\u{feff}[project]\nname = \"b\"\n{}", task("build", &log("b"), "")));
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(env.log_set(), ["a", "b"]);
}

#[test]
fn a_project_name_with_a_hash_is_refused_at_load() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/x/vx.toml", &format!("[project]\nname = \"web#2\"\n{}", task("build", &log("x"), "")));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.starts_with("vx: error: packages/x/vx.toml:2:"), "located at the name\n{out}");
    assert!(line.contains("`web#2`") && line.contains("`#`"), "{out}");
    let env = TestEnv::new();
    env.write("package.json", "{\"name\": \"root\", \"private\": true, \"workspaces\": [\"packages/*\"]}");
    env.write("packages/y/package.json", "{\"name\": \"@scope/y#1\"}");
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().starts_with("vx: error: packages/y/package.json:"), "{out}");
}

#[test]
fn project_globs_that_match_no_project_are_an_error_naming_them() {
    let env = TestEnv::new();
    env.workspace(&["pakages/*"]);
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{}", task("build", &log("p"), "")));
    let out = env.vx(&["run", "build"]);
    out.assert_code(2);
    assert!(out.error_line().contains("no project matches `pakages/*`"), "{out}");
    // One of several matching nothing is a template's empty `apps/*`: fine.
    env.workspace(&["packages/*", "apps/*"]);
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(env.log(), ["p"]);
}

#[test]
fn cache_clean_refuses_a_directory_that_is_not_a_vx_store() {
    let env = TestEnv::new();
    copying_project(&env);
    env.write("elsewhere/entries/notes.txt", "precious");
    env.write("elsewhere/tmp/draft.txt", "precious too");
    let out = env.vx(&["cache", "clean", "--cache-dir", "elsewhere"]);
    out.assert_code(2);
    assert!(out.error_line().contains("does not look like a vx cache"), "{out}");
    assert_eq!(env.read("elsewhere/entries/notes.txt"), "precious");
    assert_eq!(env.read("elsewhere/tmp/draft.txt"), "precious too");
    // A real store is still emptied, and only of its entries.
    env.vx(&["run", "build"]).assert_success();
    let out = env.vx(&["cache", "clean"]);
    out.assert_success();
    assert!(out.stdout.contains("removed 1 entries"), "{out}");
    assert!(!env.path(".vx/cache/entries").exists(), "emptied");
}

#[test]
fn a_daemon_that_escapes_and_keeps_writing_to_the_output_does_not_keep_vx_waiting() {
    // It leaves the task's session and clears its environment (so the
    // guard's marker cannot find it), then writes to the task's output
    // every tenth of a second, for ever.
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let daemon = "setsid sh -c 'echo $$ > daemon.pid; exec env -i sh -c \"while :; do echo tick; sleep 0.1; done\"' &";
    let start = task("start", &format!("{} && {daemon} sleep 0.3; echo started", log("p")), "");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{start}"));
    // Bounded by the harness's patience: on a vx that reads the pipe
    // until its writer is gone, this run never ends by itself.
    let out = env.vx_command(&["run", "start"]).output();
    let pid = std::fs::read_to_string(env.path("packages/p/daemon.pid")).unwrap_or_default();
    if let Ok(pid) = pid.trim().parse::<i32>() {
        #[expect(clippy::disallowed_methods, reason = "the test stops the daemon it made vx leave behind")]
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
    out.assert_success();
    assert!(out.stdout.contains("p#start: started"), "{out}");
    if cgroups_in_force(&env) {
        assert!(out.stdout.contains("left the task's group and session"), "its cgroup ended it, saying so\n{out}");
    } else {
        assert!(out.stdout.contains("still holds its output open"), "one line says why vx stopped reading\n{out}");
    }
}

/// Whether `vx info` says each task runs in a cgroup of its own here (a
/// writable cgroup v2 hierarchy: root, or a delegated user slice).
fn cgroups_in_force(env: &TestEnv) -> bool {
    let info = env.vx(&["info"]);
    let line = info.stdout.lines().find(|l| l.starts_with("escapees")).unwrap_or_default().to_string();
    assert!(!line.is_empty(), "vx info says how escapees are ended\n{info}");
    line.contains("cgroup v2: each task")
}

#[test]
fn a_process_that_re_forks_out_of_its_session_in_a_loop_does_not_outlive_the_task() {
    // Each generation starts the next in a new session with an empty
    // environment, then exits: no group, session or marker holds it.
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/p/hop.sh",
        "echo $$ >> \"$1\"\nsleep 0.02\nsetsid env -i /bin/sh \"$0\" \"$1\" </dev/null >/dev/null 2>&1 &\n",
    );
    let hops = env.path("hops");
    let start = task("start", &format!("sh hop.sh {} & sleep 0.3; echo started", hops.display()), "");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{start}"));
    let contained = cgroups_in_force(&env);
    let out = env.vx_command(&["run", "start"]).output();
    out.assert_success();
    let count = || std::fs::read_to_string(&hops).unwrap_or_default().lines().count();
    let after_vx = count();
    assert!(after_vx > 3, "it hopped while the task ran\n{out}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let later = count();
    let last: i32 =
        std::fs::read_to_string(&hops).unwrap_or_default().lines().last().and_then(|l| l.parse().ok()).unwrap_or(0);
    if contained {
        assert_eq!(later, after_vx, "no generation after vx ended\n{out}");
    } else {
        // Without a cgroup nothing can follow it: stop it for the next test.
        #[expect(clippy::disallowed_methods, reason = "the test stops what it made vx leave behind")]
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(last), nix::sys::signal::Signal::SIGSTOP);
        // The documented limit of the sweep (docs/guard.md): it went on.
        assert!(later > after_vx, "without a cgroup the sweep cannot follow it\n{out}");
    }
}

#[test]
fn every_session_of_one_vx_runs_its_tasks_in_a_cgroup_of_its_own() {
    // `--verify=determinism` runs three sessions in one vx. Each guard
    // removes its session's cgroup when the session ends; a directory
    // shared by the process's sessions went under the next session's
    // tasks (`ENODEV` at spawn, or a task run outside any cgroup).
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let record = format!("cat /proc/self/cgroup >> {}; mkdir -p dist; echo x > dist/x", env.path("cg.txt").display());
    let build = task("build", &record, "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "a");
    let contained = cgroups_in_force(&env);
    let out = env.vx(&["run", "build", "--verify=determinism"]);
    out.assert_success();
    let lines: Vec<String> = env.read("cg.txt").lines().filter(|l| l.starts_with("0::")).map(str::to_string).collect();
    assert_eq!(lines.len(), 3, "the run and its two comparison runs\n{out}");
    if contained {
        for line in &lines {
            let parent = line.rsplit_once('/').map(|(p, _)| p).unwrap_or_default();
            assert!(parent.rsplit('/').next().is_some_and(|d| d.starts_with("vx-")), "in a task cgroup: {lines:?}");
        }
        let sessions: std::collections::BTreeSet<&str> =
            lines.iter().filter_map(|l| l.rsplit_once('/').map(|(p, _)| p)).collect();
        assert_eq!(sessions.len(), 3, "a directory per session: {lines:?}");
    }
}

#[test]
fn a_background_process_that_became_a_zombie_is_not_waited_for() {
    // This test process adopts orphans (a child subreaper) and never
    // reaps them, as PID 1 of a container without an init does not: the
    // task's background `sleep`, stopped by vx, stays a zombie in the
    // task's group. A zombie runs nothing; a vx that waited for the group
    // to empty would wait out the whole grace period (ten minutes here),
    // so the run is bounded by the harness's patience.
    nix::sys::prctl::set_child_subreaper(true).expect("become a child subreaper");
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let build = task("build", &format!("{}; sleep 5 & exit 0", log("p")), "cache = false\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    let out = env.vx_command(&["run", "build"]).env("VX_KILL_GRACE_MS", "600000").output();
    out.assert_success();
    assert!(out.stdout.contains("stopping processes left running in the background"), "{out}");
    assert_eq!(env.log(), ["p"]);
}

#[test]
fn an_interactive_task_without_a_terminal_fails_at_once_saying_so() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let ask = "[tasks.ask]\ncommand = \"printf 'Name? '; read name; echo hello $name\"\ninteractive = true\n";
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{ask}"));
    // Bounded by the harness's patience: on a vx that gives the task a
    // terminal nobody types into, this run never ends.
    let out = env.vx_command(&["run", "ask"]).output();
    out.assert_code(1);
    assert!(out.stdout.contains("needs a terminal to type into") && out.stdout.contains("--ui=tui"), "{out}");
}

#[test]
fn a_task_whose_command_runs_vx_on_itself_is_refused_not_deadlocked() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let inner = format!("{} run build", vx_bin().display());
    let build = task("build", &format!("{} && {inner}", log("p")), "inputs = [\"src/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "a");
    // Bounded by the harness's patience: on a vx that waits for the
    // lock its own parent holds, this run never ends.
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_code(1);
    assert!(out.stdout.contains("cannot run the task itself"), "the inner vx says why\n{out}");
}

#[test]
fn a_task_whose_command_runs_vx_on_its_own_dependency_is_not_deadlocked() {
    // app#build holds lib#build's lock shared while it runs (another vx
    // may not clear lib's outputs under it); its command runs `vx run
    // lib#build`, which needs that lock exclusively to restore lib. The
    // nested vx passes over a lock its ancestor holds shared: on a vx
    // that waits for it, this run never ends (bounded by the harness's
    // patience).
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let lib = task(
        "build",
        &format!("{} && mkdir -p dist && echo lib > dist/lib.txt", log("lib")),
        "inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n",
    );
    env.write("packages/lib/vx.toml", &format!("[project]\nname = \"lib\"\n{lib}"));
    env.write("packages/lib/src/a.txt", "a");
    let nested = format!("{} run lib#build", vx_bin().display());
    let app =
        task("build", &format!("{nested} && {}", log("app")), "depends-on = [\"^build\"]\ninputs = [\"src/**\"]\n");
    env.write("packages/app/vx.toml", &format!("[project]\nname = \"app\"\ndepends-on = [\"lib\"]\n{app}"));
    env.write("packages/app/src/a.txt", "a");
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    assert_eq!(env.log(), ["lib", "app"], "the nested run of lib is a hit\n{out}");
}

#[test]
fn a_wait_for_another_vx_says_who_holds_the_task_and_ctrl_c_ends_it() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let build = task("build", "echo started; sleep 30", "inputs = [\"src/**\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "a");
    let first = env.vx_command(&["run", "build"]).spawn();
    first.wait_for_stdout("p#build: started");
    let second = env.vx_command(&["run", "build"]).spawn();
    second.wait_for_stdout(&format!("waiting for p#build, held by vx pid {}", first.pid()));
    second.signal(nix::sys::signal::Signal::SIGINT);
    let out = second.finish();
    assert_eq!(out.code, 130, "Ctrl-C ends the wait\n{out}");
    first.signal(nix::sys::signal::Signal::SIGINT);
    assert_eq!(first.finish().code, 130, "the first one stops too");
}

#[test]
fn a_worker_whose_server_never_answers_stops_on_sigterm_at_once_with_143() {
    // A server that accepts the connection and never says a word: every
    // call the worker makes would wait for its deadline.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (accepted_tx, accepted) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
            let _ = accepted_tx.send(());
        }
    });
    let env = TestEnv::new();
    let endpoint = format!("grpc://127.0.0.1:{port}");
    let worker = env.vx_command(&["worker", "--endpoint", &endpoint]).spawn();
    // Its signal handlers are in place before it connects.
    accepted.recv_timeout(std::time::Duration::from_secs(30)).expect("the worker connects");
    worker.signal(nix::sys::signal::Signal::SIGTERM);
    let out = worker.finish();
    assert_eq!(out.code, 143, "the exit a shell gives SIGTERM, not a failed call's\n{out}");
}

#[test]
fn plugin_add_of_a_fifo_is_refused_at_once() {
    let env = TestEnv::new();
    copying_project(&env);
    mkfifo(&env, "plugin.wasm");
    // Bounded by the harness's patience: on a vx that reads it, this
    // never ends.
    let out = env.vx_command(&["plugin", "add", "plugin.wasm", "--name", "p"]).output();
    assert!(out.code != 0, "{out}");
    assert!(out.error_line().contains("not a regular file"), "{out}");
}

#[test]
fn a_runtime_input_that_prints_without_end_is_stopped_and_the_task_not_cached() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    // 300 MB, where a version is one line: read whole, it would cost vx
    // that much memory (and `yes` alone, without `head`, without end).
    let build = task("build", &log("p"), "inputs = [\"src/**\"]\nruntime = [\"yes | head -c 300000000\"]\n");
    env.write("packages/p/vx.toml", &format!("[project]\nname = \"p\"\n{build}"));
    env.write("packages/p/src/a.txt", "a");
    let out = env.vx_command(&["run", "build"]).output();
    out.assert_success();
    let notes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("not cached")).collect();
    assert_eq!(notes.len(), 1, "one line says why\n{out}");
    assert!(notes[0].contains("printed more than 1024 KiB"), "{out}");
}
