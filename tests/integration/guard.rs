//! The guard, proved with real processes: whatever way vx ends — SIGKILL,
//! SIGINT, SIGTERM, SIGHUP, a timeout, a task's end, a persistent task's
//! release — nothing a task started is left, including grandchildren, a
//! process that ignores SIGTERM, and descendants that left the task's
//! group with `setsid`. The helpers (`tests/src/bin/`) write their PIDs to
//! files; every assertion is by PID liveness (`/proc/PID/stat` exists and
//! is not a zombie), polled against a generous deadline, and also checks
//! that no process carrying the test's environment survives (which covers
//! the guard process itself).

use nix::sys::signal::Signal;

use crate::common::TestEnv;
use crate::common::fixtures::{running, task};
use crate::common::log_cmd as log;
use crate::common::process::{
    PATIENCE, Running, alive, assert_alive, assert_nothing_left, disposition, guard_of, poll, read_pids, send,
};

/// A short kill ladder, so a SIGTERM-ignorer is killed quickly.
const GRACE_MS: &str = "300";

/// A stopping signal within a second of the first is the same request
/// (`run::engine::ECHO_WINDOW`); a second one comes after this.
const ECHO_WINDOW: std::time::Duration = std::time::Duration::from_millis(1100);

/// Writes project `name` at `packages/NAME` with `[project]` extras and
/// tasks; the workspace is `packages/*`.
fn project(env: &TestEnv, name: &str, head: &str, tasks: &[String]) {
    env.workspace(&["packages/*"]);
    let mut text = format!("[project]\nname = \"{name}\"\n{head}\n");
    for t in tasks {
        text.push_str(t);
    }
    env.write(&format!("packages/{name}/vx.toml"), &text);
}

/// A shell loop that waits (bounded) for `file` to exist.
fn wait_for(file: &str) -> String {
    format!("i=0; while [ ! -e {file} ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i+1)); done")
}

/// A free TCP port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind a free port");
    listener.local_addr().expect("a bound address").port()
}

// ---------------------------------------------------------------------------
// Stopping everything: SIGKILL of vx, SIGINT, SIGTERM, SIGHUP
// ---------------------------------------------------------------------------

/// Six tasks of project `p` that between them start every kind of process
/// the guard must stop: grandchildren in the task's group, a SIGTERM
/// ignorer, a `setsid` escapee whose parent stays, a double-forked daemon
/// (an orphan in its own session), a shell with background children, and
/// a persistent server.
fn zoo(env: &TestEnv) {
    project(
        env,
        "p",
        "",
        &[
            task("forker", "vx-test-forker forker.pids 3", ""),
            task("stubborn", "vx-test-stubborn stubborn.pids", ""),
            task("escaper", "vx-test-escaper escaper.pids --stay", ""),
            task("daemon", "vx-test-escaper daemon.pids --double --stay", ""),
            task(
                "shell",
                "vx-test-forker shell-forker.pids 2 & vx-test-stubborn shell-stubborn.pids & echo $$ > shell.pids; wait",
                "",
            ),
            task(
                "server",
                "vx-test-server --pid-file server.pid --name srv",
                "persistent = true\nready = { log = \"srv listening\" }",
            ),
        ],
    );
}

const ZOO_TASKS: [&str; 6] = ["p#forker", "p#stubborn", "p#escaper", "p#daemon", "p#shell", "p#server"];

/// Starts the zoo and returns vx and every PID its tasks reported, once
/// all of them are up (so vx's signal handlers are installed too).
fn start_zoo(env: &TestEnv) -> (Running, Vec<i32>) {
    zoo(env);
    let mut args = vec!["run", "--concurrency", "8"];
    args.extend(ZOO_TASKS);
    let vx = env.vx_command(&args).env("VX_KILL_GRACE_MS", GRACE_MS).spawn();
    let mut pids = Vec::new();
    for (file, n) in [
        ("forker.pids", 4),
        ("stubborn.pids", 1),
        ("escaper.pids", 2),
        ("daemon.pids", 2),
        ("shell-forker.pids", 3),
        ("shell-stubborn.pids", 1),
        ("shell.pids", 1),
        ("server.pid", 1),
    ] {
        pids.extend(read_pids(env, &format!("packages/p/{file}"), n));
    }
    // The escapers' parents: the --stay ones still run.
    assert_alive(&pids, "every process of the zoo once started");
    (vx, pids)
}

#[test]
fn sigkill_of_vx_leaves_nothing_running_and_the_guard_exits() {
    let env = TestEnv::new();
    let (vx, pids) = start_zoo(&env);
    let guard = guard_of(vx.pid());
    vx.signal(Signal::SIGKILL);
    let out = vx.finish();
    assert_eq!(out.code, -1, "vx was killed by a signal\n{out}");
    let mut all = pids;
    all.push(guard);
    assert_nothing_left(&env, &all, &out);
}

#[test]
fn sigkill_of_vx_stops_an_escapee_that_cleared_its_environment_while_its_parent_lives() {
    // `setsid env -i` leaves the group and drops the VX_RUN_ID marker; the
    // guard still finds it as a descendant of the task's shell.
    let env = TestEnv::new();
    let command = "setsid env -i \"$(command -v vx-test-stubborn)\" \"$PWD/hidden.pids\" & echo $$ > shell.pids; wait";
    project(&env, "p", "", &[task("hide", command, "")]);
    let vx = env.vx_command(&["run", "p#hide"]).env("VX_KILL_GRACE_MS", GRACE_MS).spawn();
    let mut pids = read_pids(&env, "packages/p/hidden.pids", 1);
    pids.extend(read_pids(&env, "packages/p/shell.pids", 1));
    assert_alive(&pids, "the shell and its hidden escapee");
    let guard = guard_of(vx.pid());
    vx.signal(Signal::SIGKILL);
    let out = vx.finish();
    pids.push(guard);
    assert_nothing_left(&env, &pids, &out);
}

/// Sends `signal` to the running zoo and checks vx's exit code, that every
/// task is reported as interrupted, and that nothing is left.
fn stop_zoo_with(signal: Signal, code: i32) {
    let env = TestEnv::new();
    let (vx, pids) = start_zoo(&env);
    let guard = guard_of(vx.pid());
    vx.signal(signal);
    let out = vx.finish();
    out.assert_code(code);
    for id in ZOO_TASKS {
        out.summary_entry("stopped", id);
    }
    let mut all = pids;
    all.push(guard);
    assert_nothing_left(&env, &all, &out);
}

#[test]
fn sigint_stops_every_task_and_exits_130() {
    stop_zoo_with(Signal::SIGINT, 130);
}

#[test]
fn sigterm_stops_every_task_and_exits_143() {
    stop_zoo_with(Signal::SIGTERM, 143);
}

#[test]
fn sighup_stops_every_task_and_exits_129() {
    stop_zoo_with(Signal::SIGHUP, 129);
}

#[test]
fn a_terminals_ctrl_c_reaches_vx_alone_and_vx_stops_the_task() {
    // A terminal sends SIGINT to its whole foreground process group. Tasks
    // run in sessions of their own, so only vx gets it, and the task is
    // stopped by vx's ladder (SIGTERM), never by the terminal's SIGINT.
    let env = TestEnv::new();
    let command = format!("trap '{}' INT; vx-test-forker forker.pids 2 & echo $$ > shell.pids; wait", log("INT"));
    project(&env, "p", "", &[task("t", &command, "")]);
    let vx = env.vx_command(&["run", "p#t"]).env("VX_KILL_GRACE_MS", GRACE_MS).own_group().spawn();
    let mut pids = read_pids(&env, "packages/p/forker.pids", 3);
    pids.extend(read_pids(&env, "packages/p/shell.pids", 1));
    let guard = guard_of(vx.pid());
    vx.signal_group(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    out.summary_entry("stopped", "p#t");
    assert!(env.log().is_empty(), "the task itself got the terminal's SIGINT\n{out}");
    pids.push(guard);
    assert_nothing_left(&env, &pids, &out);
}

#[test]
fn a_second_sigint_kills_at_once() {
    let env = TestEnv::new();
    project(&env, "p", "", &[task("stubborn", "vx-test-stubborn stubborn.pids", "")]);
    // A grace period far beyond the test's patience: only the second
    // SIGINT can end the stubborn task in time.
    let grace = (PATIENCE * 2).as_millis().to_string();
    let vx = env.vx_command(&["run", "p#stubborn"]).env("VX_KILL_GRACE_MS", &grace).spawn();
    let stubborn = read_pids(&env, "packages/p/stubborn.pids", 1);
    vx.signal(Signal::SIGINT);
    vx.wait_for_stdout("stopping tasks");
    assert_alive(&stubborn, "a SIGTERM-ignorer during the grace period");
    // A second later: sooner, it is the same Ctrl-C passed on again.
    std::thread::sleep(ECHO_WINDOW);
    vx.signal(Signal::SIGINT);
    let died = poll(|| !alive(stubborn[0]));
    assert!(died, "the stubborn task survived a second SIGINT\n{}", vx.output_so_far());
    let out = vx.finish();
    out.assert_code(130);
    assert_nothing_left(&env, &stubborn, &out);
}

/// pnpm sends vx a SIGTERM as it dies of the Ctrl-C the terminal sent them
/// both; `bun x` may pass the SIGINT on. A signal that soon after the first
/// is the same stop: the task still gets its grace period, and vx exits
/// as the first signal says.
#[test]
fn a_signal_passed_on_right_after_the_first_is_the_same_stop() {
    let env = TestEnv::new();
    let graceful =
        format!("trap 'sleep 0.3; {}; exit 0' TERM; echo $$ > t.pids; while :; do sleep 0.05; done", log("graceful"));
    project(&env, "p", "", &[task("t", &graceful, "")]);
    for second in [Signal::SIGTERM, Signal::SIGINT] {
        env.clear_log();
        let vx = env.vx_command(&["run", "p#t"]).env("VX_KILL_GRACE_MS", "10000").spawn();
        let pids = read_pids(&env, "packages/p/t.pids", 1);
        let _ = std::fs::remove_file(env.path("packages/p/t.pids"));
        vx.signal(Signal::SIGINT);
        vx.wait_for_stdout("stopping tasks");
        vx.signal(second);
        let out = vx.finish();
        out.assert_code(130);
        assert_eq!(
            env.log(),
            ["graceful"],
            "SIGINT then {second:?}: the task was stopped with SIGTERM and its grace\n{out}"
        );
        assert_nothing_left(&env, &pids, &out);
    }
}

#[test]
fn a_second_sigint_also_kills_an_escapee_at_once() {
    let env = TestEnv::new();
    // The escapee left the group (`setsid`) and survives SIGTERM; it is
    // stopped by the ladder for single processes, not by a group kill.
    let command = "setsid vx-test-stubborn esc.pids esc.term & echo $$ > shell.pids; wait";
    project(&env, "p", "", &[task("esc", command, "")]);
    let grace = (PATIENCE * 2).as_millis().to_string();
    let vx = env.vx_command(&["run", "p#esc"]).env("VX_KILL_GRACE_MS", &grace).spawn();
    let escapee = read_pids(&env, "packages/p/esc.pids", 1);
    let shell = read_pids(&env, "packages/p/shell.pids", 1);
    vx.signal(Signal::SIGINT);
    vx.wait_for_stdout("stopping tasks");
    assert!(poll(|| !alive(shell[0])), "the task's shell survived SIGTERM\n{}", vx.output_so_far());
    let termed = poll(|| env.path("packages/p/esc.term").exists());
    assert!(termed, "the escapee was never sent SIGTERM\n{}", vx.output_so_far());
    assert_alive(&escapee, "a SIGTERM-proof escapee during the grace period");
    std::thread::sleep(ECHO_WINDOW);
    vx.signal(Signal::SIGINT);
    let died = poll(|| !alive(escapee[0]));
    assert!(died, "the escapee survived a second SIGINT\n{}", vx.output_so_far());
    let out = vx.finish();
    out.assert_code(130);
    assert_nothing_left(&env, &escapee, &out);
}

#[test]
fn under_nohup_vx_ignores_sighup_and_its_task_keeps_running() {
    let env = TestEnv::new();
    let command = format!("echo $$ > task.pids; {}; {}", wait_for("go"), log("done"));
    project(&env, "p", "", &[task("wait", &command, "")]);
    let mut vx = env.vx_command(&["run", "p#wait"]).env("VX_KILL_GRACE_MS", GRACE_MS).ignore_sighup().spawn();
    let task_pid = read_pids(&env, "packages/p/task.pids", 1);
    // The task runs, so vx has set up its signal handling. A SIGHUP that
    // vx still ignores, and does not catch, is discarded by the kernel as
    // it is sent: nothing can come of it, now or later.
    let (ignored, caught) = disposition(vx.pid(), Signal::SIGHUP);
    assert!(ignored && !caught, "vx must leave SIGHUP ignored under nohup (ignored {ignored}, caught {caught})");
    vx.signal(Signal::SIGHUP);
    assert!(vx.is_running(), "vx stopped on SIGHUP although started with it ignored\n{}", vx.output_so_far());
    assert_alive(&task_pid, "the task after a SIGHUP to vx under nohup");
    env.write("packages/p/go", "");
    let out = vx.finish();
    out.assert_success();
    assert_eq!(env.log(), ["done"], "the task ran to its end\n{out}");
    assert_nothing_left(&env, &task_pid, &out);
}

// ---------------------------------------------------------------------------
// Timeouts
// ---------------------------------------------------------------------------

#[test]
fn a_task_that_traps_sigterm_and_exits_zero_is_still_timed_out() {
    let env = TestEnv::new();
    let command = "trap 'exit 0' TERM; vx-test-forker forker.pids 2 & vx-test-stubborn stubborn.pids & \
                   echo $$ > shell.pids; wait";
    project(&env, "p", "", &[task("slow", command, "timeout = \"2s\"")]);
    let out = env.vx_command(&["run", "p#slow"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_code(1);
    let entry = out.summary_entry("failed", "p#slow");
    assert!(entry.contains("timed out after 2.00s"), "{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed), (1, 0, 1), "{out}");
    let mut pids = read_pids(&env, "packages/p/forker.pids", 3);
    pids.extend(read_pids(&env, "packages/p/stubborn.pids", 1));
    pids.extend(read_pids(&env, "packages/p/shell.pids", 1));
    assert_nothing_left(&env, &pids, &out);
}

#[test]
fn the_timeout_flag_stops_a_sigterm_ignorer() {
    let env = TestEnv::new();
    project(&env, "p", "", &[task("stuck", "vx-test-stubborn stubborn.pids", "")]);
    let out = env.vx_command(&["run", "p#stuck", "--timeout", "1s"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_code(1);
    assert!(out.summary_entry("failed", "p#stuck").contains("timed out after 1.00s"), "{out}");
    let pids = read_pids(&env, "packages/p/stubborn.pids", 1);
    assert_nothing_left(&env, &pids, &out);
}

// ---------------------------------------------------------------------------
// A task is finished when its group is empty, and escapees are found
// ---------------------------------------------------------------------------

#[test]
fn a_background_process_left_by_the_shell_is_stopped_with_a_warning_naming_it() {
    let env = TestEnv::new();
    let command = format!("vx-test-forker bg.pids 1 & {}; echo spawned", wait_for("bg.pids"));
    project(&env, "p", "", &[task("bg", &command, "")]);
    let out = env.vx_command(&["run", "p#bg"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_success();
    let pids = read_pids(&env, "packages/p/bg.pids", 2);
    let warning = out
        .task_lines("p#bg")
        .into_iter()
        .find(|l| l.starts_with("stopping processes left running in the background:"))
        .unwrap_or_else(|| panic!("no warning about the background process\n{out}"));
    assert!(warning.contains(&format!("vx-test-forker (pid {})", pids[0])), "the warning names it\n{out}");
    assert_nothing_left(&env, &pids, &out);
}

/// Runs `vx-test-escaper ARGS`, whose escapee is left behind when the task
/// ends, and checks that it is named in the warning and stopped.
fn escapee_is_stopped(args: &str) {
    let env = TestEnv::new();
    project(&env, "p", "", &[task("esc", &format!("vx-test-escaper esc.pids {args}"), "")]);
    let out = env.vx_command(&["run", "p#esc"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_success();
    let pids = read_pids(&env, "packages/p/esc.pids", 2);
    let warning = out
        .task_lines("p#esc")
        .into_iter()
        .find(|l| l.starts_with("stopping processes that left the task's group:"))
        .unwrap_or_else(|| panic!("no warning about the escapee\n{out}"));
    assert!(warning.contains(&format!("vx-test-escaper (pid {})", pids[1])), "the warning names it\n{out}");
    assert_nothing_left(&env, &pids, &out);
}

#[test]
fn a_setsid_escapee_is_stopped_with_a_warning() {
    escapee_is_stopped("");
}

#[test]
fn a_double_forked_daemon_is_stopped_with_a_warning() {
    escapee_is_stopped("--double");
}

// ---------------------------------------------------------------------------
// Persistent tasks
// ---------------------------------------------------------------------------

/// `api#dev`, a persistent server (`vx-test-server` with `server_args`,
/// logging `api ready` half a second after it starts) with `ready`, and
/// `e2e#test`, which needs it and checks that it is still running.
fn api_and_e2e(env: &TestEnv, server: &str, ready: &str) {
    env.workspace(&["packages/*"]);
    let dev = task("dev", server, &format!("persistent = true\n{ready}"));
    env.write("packages/api/vx.toml", &format!("[project]\nname = \"api\"\n{dev}"));
    let check = format!("{} && {}", running("../api/server.pid"), log("e2e#test"));
    let test = task("test", &check, "depends-on = [\"api#dev\"]");
    env.write("packages/e2e/vx.toml", &format!("[project]\nname = \"e2e\"\ndepends-on = [\"api\"]\n{test}"));
}

const SERVER: &str = "vx-test-server --pid-file server.pid --delay-ms 500 --log \"$VX_TEST_LOG\" --name api";

/// `vx run e2e#test` with the api server as a dependency: the dependent
/// starts only once the server is ready, finds it running, and the server
/// is stopped when the dependent is done, so vx exits 0.
fn dependency_server_is_awaited_then_released(server: &str, ready: &str) {
    let env = TestEnv::new();
    api_and_e2e(&env, server, ready);
    let out = env.vx_command(&["run", "e2e#test"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_success();
    assert_eq!(env.log(), ["api ready", "e2e#test"], "e2e#test starts after api#dev is ready\n{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed, summary.skipped), (2, 2, 0, 0), "{out}");
    let server = read_pids(&env, "packages/api/server.pid", 1);
    assert_nothing_left(&env, &server, &out);
}

#[test]
fn persistent_ready_by_log_then_released() {
    dependency_server_is_awaited_then_released(SERVER, "ready = { log = \"api listening\" }");
}

#[test]
fn persistent_ready_by_port_then_released() {
    let port = free_port();
    dependency_server_is_awaited_then_released(
        &format!("{SERVER} --port {port}"),
        &format!("ready = {{ port = {port} }}"),
    );
}

#[test]
fn persistent_ready_by_path_then_released() {
    dependency_server_is_awaited_then_released(
        &format!("{SERVER} --touch ready.txt"),
        "ready = { path = \"ready.txt\" }",
    );
}

#[test]
fn persistent_server_started_in_the_background_by_its_shell_is_kept_then_stopped() {
    let port = free_port();
    dependency_server_is_awaited_then_released(
        &format!("{SERVER} --port {port} & echo up"),
        &format!("ready = {{ port = {port} }}"),
    );
}

#[test]
fn a_ready_server_does_not_hold_the_only_concurrency_slot() {
    let env = TestEnv::new();
    api_and_e2e(&env, SERVER, "ready = { log = \"api listening\" }");
    let out = env.vx_command(&["run", "e2e#test", "--concurrency", "1"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_success();
    assert_eq!(env.log(), ["api ready", "e2e#test"], "{out}");
    let server = read_pids(&env, "packages/api/server.pid", 1);
    assert_nothing_left(&env, &server, &out);
}

#[test]
fn a_server_needed_by_two_tasks_is_kept_until_both_are_done() {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    let dev = task("dev", SERVER, "persistent = true\nready = { log = \"api listening\" }");
    env.write("packages/api/vx.toml", &format!("[project]\nname = \"api\"\n{dev}"));
    let needs = "depends-on = [\"api#dev\"]";
    let first = task("first", &log("first"), needs);
    // vx starts `after-first` (which does not need the server) only once
    // it has settled `first`, and it decides which servers to release as
    // it settles a task. So when `first.settled` exists, a vx that wrongly
    // releases the server after its first dependent has already done so,
    // and `second` finds it gone.
    let after_first = task("after-first", "touch first.settled", "depends-on = [\"first\"]");
    let second =
        format!("{}; {} && {}", wait_for("first.settled"), running("../api/server.pid"), log("second-saw-server"));
    let second = task("second", &second, needs);
    env.write(
        "packages/e2e/vx.toml",
        &format!("[project]\nname = \"e2e\"\ndepends-on = [\"api\"]\n{first}{after_first}{second}"),
    );
    let out = env
        .vx_command(&["run", "e2e#first", "e2e#second", "e2e#after-first", "--concurrency", "4"])
        .env("VX_KILL_GRACE_MS", GRACE_MS)
        .output();
    out.assert_success();
    assert_eq!(env.log_set(), ["api ready", "first", "second-saw-server"], "{out}");
    let server = read_pids(&env, "packages/api/server.pid", 1);
    assert_nothing_left(&env, &server, &out);
}

#[test]
fn persistent_task_that_exits_before_ready_fails_its_dependent_with_its_log_tail() {
    let env = TestEnv::new();
    api_and_e2e(&env, "echo booting; echo 'fatal: port taken'; exit 3", "ready = { log = \"listening\" }");
    let out = env.vx_command(&["run", "e2e#test"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_code(1);
    let failed = out.summary_entry("failed", "api#dev");
    assert!(failed.contains("fatal: port taken"), "the summary shows the log tail\n{out}");
    assert!(failed.contains("exit code 3"), "{out}");
    assert!(out.summary_entry("skipped", "e2e#test").contains("api#dev"), "{out}");
    assert!(env.log().is_empty(), "e2e#test must not run\n{out}");
    assert_nothing_left(&env, &[], &out);
}

#[test]
fn persistent_task_not_ready_in_time_is_stopped_and_fails() {
    let env = TestEnv::new();
    api_and_e2e(
        &env,
        "vx-test-server --pid-file server.pid --delay-ms 120000 --name api",
        "ready = { log = \"api listening\" }\nready-timeout = \"1s\"",
    );
    let out = env.vx_command(&["run", "e2e#test"]).env("VX_KILL_GRACE_MS", GRACE_MS).output();
    out.assert_code(1);
    assert!(out.summary_entry("failed", "api#dev").contains("not ready within 1.00s"), "{out}");
    assert!(out.summary_entry("skipped", "e2e#test").contains("api#dev"), "{out}");
    let server = read_pids(&env, "packages/api/server.pid", 1);
    assert_nothing_left(&env, &server, &out);
}

/// `probe`, a persistent task the user names too, which needs `after`.
/// vx starts it only once it has settled `after`, and vx decides which
/// servers to release (or that the run is over) as it settles a task. So
/// once `probe.pid` is written, a vx that wrongly lets a server the user
/// named go when the other work is done has already done so.
fn probe(after: &str) -> String {
    task(
        "probe",
        "vx-test-server --pid-file probe.pid --name probe",
        &format!("persistent = true\nready = {{ log = \"probe listening\" }}\ndepends-on = [\"{after}\"]"),
    )
}

#[test]
fn a_persistent_task_the_user_named_runs_until_sigint() {
    let env = TestEnv::new();
    let dev = task("dev", SERVER, "persistent = true\nready = { log = \"api listening\" }");
    let quick = task("quick", &log("quick"), "");
    project(&env, "api", "", &[dev, quick, probe("quick")]);
    let mut vx =
        env.vx_command(&["run", "api#dev", "api#quick", "api#probe"]).env("VX_KILL_GRACE_MS", GRACE_MS).spawn();
    let server = read_pids(&env, "packages/api/server.pid", 1);
    vx.wait_for_stdout("api#dev: api listening");
    let probe = read_pids(&env, "packages/api/probe.pid", 1);
    assert_eq!(env.log_set(), ["api ready", "quick"], "{}", vx.output_so_far());
    assert!(vx.is_running(), "vx ended while a persistent task the user named runs\n{}", vx.output_so_far());
    assert_alive(&server, "a persistent task the user named, once the other task is done");
    vx.signal(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    out.summary_entry("stopped", "api#dev");
    out.summary_entry("stopped", "api#probe");
    assert_nothing_left(&env, &[server, probe].concat(), &out);
}

#[test]
fn a_persistent_task_the_user_named_runs_until_sigint_even_when_also_a_dependency() {
    let env = TestEnv::new();
    api_and_e2e(&env, SERVER, "ready = { log = \"api listening\" }");
    let e2e = env.read("packages/e2e/vx.toml");
    env.write("packages/e2e/vx.toml", &format!("{e2e}{}", probe("test")));
    let mut vx = env.vx_command(&["run", "api#dev", "e2e#test", "e2e#probe"]).env("VX_KILL_GRACE_MS", GRACE_MS).spawn();
    let server = read_pids(&env, "packages/api/server.pid", 1);
    let probe = read_pids(&env, "packages/e2e/probe.pid", 1);
    assert_eq!(env.log(), ["api ready", "e2e#test"], "e2e#test ran\n{}", vx.output_so_far());
    assert!(vx.is_running(), "vx ended while a persistent task the user named runs\n{}", vx.output_so_far());
    assert_alive(&server, "a persistent task the user named, after its dependent finished");
    vx.signal(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    out.summary_entry("stopped", "api#dev");
    out.summary_entry("stopped", "e2e#probe");
    assert_nothing_left(&env, &[server, probe].concat(), &out);
}

// ---------------------------------------------------------------------------
// The guard itself
// ---------------------------------------------------------------------------

#[test]
fn a_guard_killed_first_is_reported_and_the_run_completes() {
    let env = TestEnv::new();
    let first = format!("echo $$ > first.pids; {}; {}", wait_for("go"), log("first"));
    let then = task("then", &log("then"), "depends-on = [\"first\"]");
    project(&env, "p", "", &[task("first", &first, ""), then]);
    let vx = env.vx_command(&["run", "p#then"]).env("VX_KILL_GRACE_MS", GRACE_MS).spawn();
    let first_pid = read_pids(&env, "packages/p/first.pids", 1);
    let guard = guard_of(vx.pid());
    send(guard, Signal::SIGKILL);
    // vx waits on its guard: once the guard is reaped, vx knows.
    let reaped = poll(|| !std::path::Path::new(&format!("/proc/{guard}")).exists());
    assert!(reaped, "vx never reaped its killed guard (pid {guard})\n{}", vx.output_so_far());
    env.write("packages/p/go", "");
    let out = vx.finish();
    out.assert_success();
    assert_eq!(env.log(), ["first", "then"], "{out}");
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("guard")).collect();
    assert_eq!(warnings.len(), 1, "one warning about the guard\n{out}");
    assert!(warnings[0].starts_with("vx: warning: "), "{out}");
    assert_nothing_left(&env, &first_pid, &out);
}

#[test]
fn a_task_waiting_for_another_vx_to_finish_it_does_not_start_after_vx_was_stopped() {
    // B waits on the task's lock while A runs it; B is stopped meanwhile.
    // When A lets go, B must not start the task: nothing would stop it.
    let env = TestEnv::new();
    let command = format!("{}; {}", log("ran"), wait_for("go"));
    project(&env, "p", "", &[task("t", &command, "outputs = [\"out\"]")]);
    let a = env.vx_command(&["run", "p#t"]).spawn();
    assert!(poll(|| env.log() == ["ran"]), "A never started the task");
    let b = env.vx_command(&["run", "p#t"]).spawn();
    // B is blocked on the lock: give it time to get there, then stop it.
    std::thread::sleep(std::time::Duration::from_millis(300));
    b.signal(Signal::SIGINT);
    env.write("packages/p/go", "");
    a.finish().assert_success();
    let out = b.finish();
    out.assert_code(130);
    assert_eq!(env.log(), ["ran"], "B ran the task after it was stopped\n{out}");
}
