//! Remote execution (`executor = "remote"`, `--executor remote`) against a
//! real BuildGrid 0.4.4 server in exec mode (common::buildgrid, with its
//! PostgreSQL) and real `vx worker` processes: a workspace built on two
//! workers gives the outputs a local build gives, byte for byte and mode
//! for mode; a remote failure, a worker killed or stopped mid-action, a
//! Ctrl-C of the client and an action's timeout; `vx worker`'s own errors;
//! and a remote task with no `[remote]` table or a cache-only server.
//!
//! Workers get nothing of the client's environment but what a task
//! declares in `env`, so tasks here declare `MARKER_DIR` and leave there
//! what they have to tell the test: the directory they ran in, their PID.
//! Each worker runs in a process group of its own and its actions in
//! sessions of their own, watched by the worker's guard; which processes
//! are left is asserted by PID liveness.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::common::buildgrid::BuildGrid;
use crate::common::fixtures::task;
use crate::common::process::{PATIENCE, Running, VxCommand, alive, poll, read_pids, send};
use crate::common::{Output, TestEnv, vx_bin};

/// The variable tasks declare to learn where to leave their markers.
const MARKER_VAR: &str = "MARKER_DIR";
/// Where markers go, relative to the workspace root (outside every project,
/// so no task reads them as an input).
const MARKERS: &str = "markers";
/// How long a worker may take to stop on SIGTERM before its group is killed.
const STOP_PATIENCE: Duration = Duration::from_secs(20);

/// A `vx worker` process joined to a test server, in a process group of its
/// own, with its work dir and its stderr in a temporary directory. Dropping
/// it stops the worker (SIGTERM, then SIGKILL to its group).
#[derive(Debug)]
struct Worker {
    child: Child,
    exit: Option<i32>,
    work_dir: PathBuf,
    log: PathBuf,
    _temp: tempfile::TempDir,
}

impl Worker {
    /// `vx worker --concurrency 1 --bot-id BOT_ID` joined to `server`.
    fn start(server: &BuildGrid, bot_id: &str) -> Worker {
        let temp = tempfile::Builder::new().prefix("vx-worker-").tempdir().expect("create a temporary directory");
        let base = temp.path().canonicalize().expect("canonicalize the temporary directory");
        let work_dir = base.join("work");
        let log = base.join("worker.log");
        let out = std::fs::File::create(&log).expect("create the worker log");
        #[expect(clippy::disallowed_methods, reason = "the tests start vx worker directly, not through the guard")]
        let mut cmd = Command::new(vx_bin());
        cmd.args(["worker", "--endpoint", &server.endpoint(), "--concurrency", "1", "--bot-id", bot_id])
            .arg("--work-dir")
            .arg(&work_dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
            .env("HOME", &base)
            .env("LANG", "C")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("share the worker log"))
            .stderr(out)
            .process_group(0);
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start vx worker: {e}"));
        Worker { child, exit: None, work_dir, log, _temp: temp }
    }

    /// Starts a worker and waits for its "joined" line.
    fn joined(server: &BuildGrid, bot_id: &str) -> Worker {
        let worker = Worker::start(server, bot_id);
        worker.wait_for_log(" joined ");
        worker
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// What the worker printed so far.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    #[track_caller]
    fn wait_for_log(&self, needle: &str) {
        assert!(poll(|| self.log().contains(needle)), "vx worker never printed `{needle}`:\n{}", self.log());
    }

    /// Whether `dir` (a task's working directory) is inside one of this
    /// worker's lease directories.
    fn ran_in(&self, dir: &str) -> bool {
        Path::new(dir).strip_prefix(&self.work_dir).is_ok_and(|rest| {
            rest.components().next().is_some_and(|c| c.as_os_str().to_string_lossy().starts_with("lease-"))
        })
    }

    /// The lease directories left in the work dir.
    fn lease_dirs(&self) -> Vec<String> {
        let entries = std::fs::read_dir(&self.work_dir).into_iter().flatten().flatten();
        entries.map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("lease-")).collect()
    }

    /// Waits for the worker to exit (bounded by [`PATIENCE`]); its exit code.
    #[track_caller]
    fn wait(&mut self) -> i32 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("poll vx worker") {
                let code = status.code().unwrap_or(-1);
                self.exit = Some(code);
                return code;
            }
            assert!(Instant::now() < deadline, "vx worker did not exit within {PATIENCE:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL to the worker's process group (its actions and its guard
    /// are in sessions of their own), as an OOM kill or a crash would.
    fn kill_group(&mut self) {
        send(-self.pid(), Signal::SIGKILL);
        let _ = self.child.wait();
        self.exit = Some(-1);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.exit.is_some() || !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        send(self.pid(), Signal::SIGTERM);
        let deadline = Instant::now() + STOP_PATIENCE;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        #[expect(clippy::disallowed_methods, reason = "the tests stop the worker they started")]
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(-self.pid()), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A workspace of `packages/*` whose root `vx.toml` ends with `remote`,
/// and an empty marker directory.
fn workspace(remote: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{remote}"));
    std::fs::create_dir_all(env.path(MARKERS)).expect("create the marker directory");
    env
}

/// A project with its `build` task: after `deps`' builds, outputs
/// `dist/**`, `MARKER_DIR` declared, and `extra` TOML lines.
fn project(env: &TestEnv, name: &str, deps: &[&str], command: &str, extra: &str) {
    let list: Vec<String> = deps.iter().map(|d| format!("{d:?}")).collect();
    let mut text = format!("[project]\nname = \"{name}\"\ndepends-on = [{}]\n", list.join(", "));
    let lines = format!("outputs = [\"dist/**\"]\ndepends-on = [\"^build\"]\nenv = [\"{MARKER_VAR}\"]\n{extra}");
    text.push_str(&task("build", command, &lines));
    env.write(&format!("packages/{name}/vx.toml"), &text);
}

/// `vx ARGS` with `MARKER_DIR` set, to completion.
fn run(env: &TestEnv, args: &[&str]) -> Output {
    marked(env, args).output()
}

/// `vx ARGS` with `MARKER_DIR` set, to start in the background.
fn marked(env: &TestEnv, args: &[&str]) -> VxCommand {
    let markers = env.path(MARKERS);
    env.vx_command(args).env(MARKER_VAR, markers.to_str().expect("a UTF-8 temporary path"))
}

/// A marker file's text, trimmed.
#[track_caller]
fn marker(env: &TestEnv, name: &str) -> String {
    env.read(&format!("{MARKERS}/{name}")).trim().to_string()
}

/// A shell snippet that waits (at most a minute) until the marker `name`
/// exists.
fn wait_for_marker(name: &str) -> String {
    format!("i=0; until [ -e \"${MARKER_VAR}/{name}\" ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done")
}

/// The four projects of the build test: `a`; `b` and `c` after `a`, each
/// waiting until the other has started, so that they run at the same time;
/// `d` after both. Each records its working directory; outputs read the
/// project's sources and the outputs of its dependencies, and `a` makes an
/// executable that `c` runs.
fn diamond(remote: &str) -> TestEnv {
    let env = workspace(remote);
    // The umask is fixed so that the local build's modes do not depend on
    // the test runner's.
    let pwd = |n: &str| format!("umask 022; pwd > \"${MARKER_VAR}/{n}.pwd\"");
    for name in ["a", "b", "c", "d"] {
        env.write(&format!("packages/{name}/src/msg.txt"), &format!("the source of {name}\n"));
    }
    let a = format!(
        "{}; mkdir -p dist/bin && cp src/msg.txt dist/a.txt && printf '#!/bin/sh\\necho tool of a\\n' > dist/bin/tool \
         && chmod 755 dist/bin/tool",
        pwd("a")
    );
    project(&env, "a", &[], &a, "");
    let rendezvous = |me: &str, other: &str| format!("touch \"${MARKER_VAR}/{me}.here\"; {}", wait_for_marker(other));
    let b = format!(
        "{}; {}; mkdir -p dist && cat src/msg.txt ../a/dist/a.txt > dist/b.txt",
        pwd("b"),
        rendezvous("b", "c.here")
    );
    project(&env, "b", &["a"], &b, "");
    let c = format!(
        "{}; {}; mkdir -p dist/deep/er && ../a/dist/bin/tool > dist/deep/er/c.txt && cat src/msg.txt >> dist/deep/er/c.txt",
        pwd("c"),
        rendezvous("c", "b.here")
    );
    project(&env, "c", &["a"], &c, "");
    let d =
        format!("{}; mkdir -p dist && cat ../b/dist/b.txt ../c/dist/deep/er/c.txt src/msg.txt > dist/d.txt", pwd("d"));
    project(&env, "d", &["b", "c"], &d, "");
    env
}

/// Every file under `dir`, relative to it, with its bytes and permission bits.
fn files_under(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display())).flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("stat an output");
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir").to_string_lossy().into_owned();
                out.insert(rel, (std::fs::read(&path).expect("read an output"), meta.permissions().mode() & 0o7777));
            }
        }
    }
    out
}

/// Every `dist/` of the workspace, by project.
fn all_outputs(env: &TestEnv) -> BTreeMap<String, BTreeMap<String, (Vec<u8>, u32)>> {
    ["a", "b", "c", "d"]
        .iter()
        .map(|p| (p.to_string(), files_under(&env.path(&format!("packages/{p}/dist")))))
        .collect()
}

#[test]
fn a_workspace_built_on_two_workers_matches_a_local_build() {
    let server = BuildGrid::start_exec();
    let one = Worker::start(&server, "one");
    let two = Worker::start(&server, "two");
    let remote = diamond(&server.remote_toml());
    let out = run(&remote, &["run", "build", "--executor", "remote", "--concurrency", "2"]);
    out.assert_success();
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.cached), (4, 4, 0), "{out}");

    // Every task ran in a lease directory of a worker, in its project's
    // directory there; `b` and `c` ran at once, so on both workers.
    let worker_of = |name: &str| {
        let dir = marker(&remote, &format!("{name}.pwd"));
        assert!(dir.ends_with(&format!("/packages/{name}")), "{name} ran in {dir}\n{out}");
        match (one.ran_in(&dir), two.ran_in(&dir)) {
            (true, false) => "one",
            (false, true) => "two",
            _ => panic!("{name} ran in {dir}, in no worker's work dir\n{out}"),
        }
    };
    for name in ["a", "d"] {
        worker_of(name);
    }
    assert_ne!(worker_of("b"), worker_of("c"), "b and c ran at the same time on one worker of capacity 1\n{out}");
    let left: Vec<String> = one.lease_dirs().into_iter().chain(two.lease_dirs()).collect();
    assert!(left.is_empty(), "finished leases left their directories: {left:?}");

    let local = diamond("");
    let out_local = run(&local, &["run", "build", "--concurrency", "2"]);
    out_local.assert_success();
    assert_eq!(marker(&local, "a.pwd"), local.path("packages/a").display().to_string(), "{out_local}");

    let (built_remotely, built_locally) = (all_outputs(&remote), all_outputs(&local));
    assert_eq!(built_remotely, built_locally, "remote and local outputs differ\n{out}\n{out_local}");
    let tool = &built_remotely["a"]["bin/tool"];
    assert_eq!(tool.1, 0o755, "the executable output lost its mode");
    assert_eq!(built_remotely["a"]["a.txt"].1, 0o644);
    assert_eq!(
        String::from_utf8_lossy(&built_remotely["d"]["d.txt"].0),
        "the source of b\nthe source of a\ntool of a\nthe source of c\nthe source of d\n"
    );
}

#[test]
fn a_remote_failure_fails_the_task_with_its_log_and_skips_its_dependents() {
    let server = BuildGrid::start_exec();
    let _worker = Worker::start(&server, "one");
    let env = workspace(&server.remote_toml());
    let failing = "echo 'text on stdout'; echo 'text on stderr' >&2; exit 3";
    project(&env, "p", &[], failing, "executor = \"remote\"");
    project(&env, "q", &["p"], &format!("touch \"${MARKER_VAR}/q-ran\""), "executor = \"remote\"");
    let out = run(&env, &["run", "build"]);
    out.assert_code(1);
    let lines = out.task_lines("p#build");
    assert!(lines.contains(&"text on stdout") && lines.contains(&"text on stderr"), "the remote log is missing\n{out}");
    assert!(out.summary_entry("failed", "p#build").contains("exit code 3"), "{out}");
    assert!(out.summary_entry("skipped", "q#build").contains("dependency p#build did not succeed"), "{out}");
    assert!(!env.path(&format!("{MARKERS}/q-ran")).exists(), "the dependent ran\n{out}");
    let summary = out.summary();
    assert_eq!((summary.run, summary.succeeded, summary.failed, summary.skipped), (1, 0, 1, 1), "{out}");
}

/// A project `p` whose build records its directory and PID, then waits for
/// the marker `go` before writing its output.
fn waiting_build(remote: &str) -> TestEnv {
    let env = workspace(remote);
    let command = format!(
        "pwd >> \"${MARKER_VAR}/dirs\"; echo $$ >> \"${MARKER_VAR}/pids\"; {}; mkdir -p dist && echo done > dist/out.txt",
        wait_for_marker("go")
    );
    project(&env, "p", &[], &command, "executor = \"remote\"");
    env
}

/// The `n`th directory the waiting build recorded.
#[track_caller]
fn dir_of_run(env: &TestEnv, n: usize) -> String {
    let dirs = env.read(&format!("{MARKERS}/dirs"));
    dirs.lines().nth(n).unwrap_or_else(|| panic!("no run {n} in {dirs:?}")).to_string()
}

#[test]
fn a_killed_workers_action_is_stopped_and_rerun_on_another_worker() {
    let server = BuildGrid::start_exec();
    let mut first = Worker::start(&server, "first");
    let env = waiting_build(&server.remote_toml());
    let vx = marked(&env, &["run", "build"]).spawn();
    let on_first = read_pids(&env, "markers/pids", 1)[0];
    assert!(first.ran_in(&dir_of_run(&env, 0)), "the action did not run on the first worker\n{}", first.log());
    let second = Worker::joined(&server, "second");

    first.kill_group();
    // The first worker's guard outlives it and stops its action.
    assert!(poll(|| !alive(on_first)), "the killed worker's action (pid {on_first}) is still running");
    // BuildGrid gives the lease to the second worker once the first one's
    // session expires.
    let on_second = read_pids(&env, "markers/pids", 2)[1];
    assert_ne!(on_first, on_second);
    assert!(second.ran_in(&dir_of_run(&env, 1)), "the action was not rerun on the second worker\n{}", second.log());
    release_and_finish(&env, vx, on_second);
}

/// Lets the waiting action finish (it waits for `MARKERS/go`), then checks
/// the run succeeded with its output and left no process behind.
#[track_caller]
fn release_and_finish(env: &TestEnv, vx: Running, on_second: i32) {
    env.write(&format!("{MARKERS}/go"), "");
    let out = vx.finish();
    out.assert_success();
    assert_eq!(env.read("packages/p/dist/out.txt"), "done\n", "{out}");
    assert!(poll(|| !alive(on_second)), "the action (pid {on_second}) outlived its lease");
}

#[test]
fn a_stopped_worker_exits_143_and_hands_its_lease_to_another() {
    let server = BuildGrid::start_exec();
    let mut first = Worker::start(&server, "first");
    let env = waiting_build(&server.remote_toml());
    let vx = marked(&env, &["run", "build"]).spawn();
    let on_first = read_pids(&env, "markers/pids", 1)[0];
    assert!(first.ran_in(&dir_of_run(&env, 0)), "the action did not run on the first worker\n{}", first.log());
    let second = Worker::joined(&server, "second");

    send(first.pid(), Signal::SIGTERM);
    assert_eq!(first.wait(), 143, "vx worker did not exit 143 on SIGTERM:\n{}", first.log());
    assert!(first.log().contains("vx worker: stopped (1 leases handed back)"), "{}", first.log());
    assert!(!alive(on_first), "the stopped worker's action (pid {on_first}) is still running");
    let on_second = read_pids(&env, "markers/pids", 2)[1];
    assert!(second.ran_in(&dir_of_run(&env, 1)), "the action was not rerun on the second worker\n{}", second.log());
    release_and_finish(&env, vx, on_second);
}

#[test]
fn ctrl_c_exits_130_and_cancels_the_remote_action() {
    let server = BuildGrid::start_exec();
    let worker = Worker::start(&server, "one");
    let env = waiting_build(&server.remote_toml());
    let vx = marked(&env, &["run", "build"]).own_group().spawn();
    let action = read_pids(&env, "markers/pids", 1)[0];
    vx.signal_group(Signal::SIGINT);
    let out = vx.finish();
    out.assert_code(130);
    out.summary_entry("stopped", "p#build");
    assert!(!out.stderr.contains("could not cancel"), "{out}");
    assert!(poll(|| !alive(action)), "the cancelled action (pid {action}) is still running\n{}", worker.log());
    worker.wait_for_log("was cancelled; stopping it");
    let mut left = Vec::new();
    let cleared = poll(|| {
        left = worker.lease_dirs();
        left.is_empty()
    });
    assert!(cleared, "the cancelled lease's directory is left: {left:?}\n{}", worker.log());
    assert!(!env.path("packages/p/dist").exists(), "the cancelled task wrote outputs\n{out}");
}

#[test]
fn a_remote_timeout_times_the_task_out_and_stops_the_action() {
    let server = BuildGrid::start_exec();
    let worker = Worker::start(&server, "one");
    let env = workspace(&server.remote_toml());
    let command = format!("echo $$ > \"${MARKER_VAR}/pid\"; sleep 30; touch \"${MARKER_VAR}/slept\"");
    project(&env, "p", &[], &command, "executor = \"remote\"\ntimeout = \"1s\"");
    let out = run(&env, &["run", "build"]);
    out.assert_code(1);
    assert!(out.summary_entry("failed", "p#build").contains("timed out after 1.00s"), "{out}");
    assert!(out.stdout.contains("the remote worker stopped it at its timeout"), "{out}");
    let action: i32 = marker(&env, "pid").parse().expect("a PID");
    assert!(poll(|| !alive(action)), "the timed-out action (pid {action}) is still running\n{}", worker.log());
    assert!(worker.log().contains("ran past its timeout"), "{}", worker.log());
    assert_eq!(worker.lease_dirs(), Vec::<String>::new(), "the timed-out lease left its directory");
    assert!(!env.path(&format!("{MARKERS}/slept")).exists(), "the action ran to its end");
}

/// `vx worker ARGS` to completion, with nothing of the caller's
/// environment but `PATH`.
fn worker_cmd(args: &[&str]) -> Output {
    #[expect(clippy::disallowed_methods, reason = "the tests start vx worker directly, not through the guard")]
    let mut cmd = Command::new(vx_bin());
    cmd.arg("worker").args(args).env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default());
    let out = cmd.stdin(Stdio::null()).output().expect("run vx worker");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn an_idle_worker_stops_on_sigterm_and_exits_143() {
    let server = BuildGrid::start_exec();
    let mut worker = Worker::joined(&server, "one");
    send(worker.pid(), Signal::SIGTERM);
    assert_eq!(worker.wait(), 143, "the exit a shell gives SIGTERM\n{}", worker.log());
    assert!(worker.log().contains("vx worker: stopped (0 leases handed back)"), "{}", worker.log());
}

#[test]
fn a_worker_endpoint_that_is_not_a_url_is_a_usage_error() {
    let out = worker_cmd(&["--endpoint", "foo"]);
    out.assert_code(2);
    let line = out.error_line();
    assert!(line.contains("`foo` is not a gRPC address") && line.contains("grpc://127.0.0.1:50051"), "{out}");
    assert!(line.contains("see `vx worker --help`"), "{out}");
}

#[test]
fn a_worker_whose_server_is_unreachable_fails_in_one_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let endpoint = format!("grpc://127.0.0.1:{port}");
    let out = worker_cmd(&["--endpoint", &endpoint]);
    assert!(out.code != 0 && out.code != 2, "expected a failure other than a usage error\n{out}");
    let line = out.error_line();
    assert!(line.contains(&endpoint) && line.contains("is the server up"), "{out}");
}

#[test]
fn a_remote_task_without_a_remote_table_fails_naming_it() {
    let env = workspace("");
    project(&env, "p", &[], &format!("touch \"${MARKER_VAR}/ran\""), "executor = \"remote\"");
    let out = run(&env, &["run", "build"]);
    out.assert_code(1);
    let entry = out.summary_entry("failed", "p#build");
    assert!(entry.contains("executor `remote` needs a [remote] table in the root vx.toml"), "{out}");
    assert!(!env.path(&format!("{MARKERS}/ran")).exists(), "the task ran locally\n{out}");
}

#[test]
fn a_remote_task_on_a_cache_only_server_fails_saying_so() {
    let server = BuildGrid::start();
    let env = workspace(&server.remote_toml());
    project(&env, "p", &[], &format!("touch \"${MARKER_VAR}/ran\""), "");
    let out = run(&env, &["run", "build", "--executor", "remote"]);
    out.assert_code(1);
    let entry = out.summary_entry("failed", "p#build");
    assert!(entry.contains(&format!("{} does not offer remote execution", server.endpoint())), "{out}");
    assert!(!env.path(&format!("{MARKERS}/ran")).exists(), "the task ran locally\n{out}");
}
