//! `sandbox` on a task (issue 16, its first part): real tools under the
//! kernel's confinement. A sandboxed task reads its inputs and its
//! dependencies' outputs, writes its outputs, and is cached as any task;
//! a read of a sibling project, a write into its own sources, a TCP
//! connection to a server this test started on 127.0.0.1, or any of these
//! from a grandchild fail the task, with a note that says where to look.
//!
//! Tasks here write no test log (`log_cmd`): the log is outside the
//! workspace, where a sandboxed task may not write.

use std::net::TcpListener;

use crate::common::fixtures::task;
use crate::common::{Output, TestEnv};

/// Projects `a` and `b`: `b` keeps a secret and builds `dist/lib.txt`
/// (sandboxed); `a` has `tasks` (TOML).
fn workspace(tasks: &str) -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write("packages/b/secret.txt", "the secret of b\n");
    let b_build = task(
        "build",
        "mkdir -p dist && echo 'the lib of b' > dist/lib.txt",
        "outputs = [\"dist/**\"]\nsandbox = true\n",
    );
    env.write("packages/b/vx.toml", &format!("[project]\nname = \"b\"\n{b_build}"));
    env.write("packages/a/src/in.txt", "the input of a\n");
    env.write("packages/a/vx.toml", &format!("[project]\nname = \"a\"\ndepends-on = [\"b\"]\n{tasks}"));
    env
}

/// A sandboxed task of `a` running `command`, with `extra` lines.
fn sandboxed(name: &str, command: &str, extra: &str) -> String {
    task(name, command, &format!("inputs = [\"src/**\"]\noutputs = [\"dist/**\"]\n{extra}"))
}

/// A sandboxed task of `a` that writes nothing: a project's tasks whose
/// outputs could meet must be ordered (docs/cache.md), and these only read.
fn reading(name: &str, command: &str, extra: &str) -> String {
    task(name, command, &format!("inputs = [\"src/**\"]\n{extra}"))
}

/// The run failed, and vx named `path` (as `vx.toml` spells it) with the
/// line to add to the task's table.
#[track_caller]
fn assert_refused(out: &Output, id: &str, what: &str, path: &str) {
    out.assert_code(1);
    let task = id.split('#').nth(1).unwrap_or(id);
    let named = format!("sandbox: refused {what} {path}, outside its declarations; add \"{path}\"");
    let line = out.task_lines(id).into_iter().find(|l| l.starts_with(&named));
    let line = line.unwrap_or_else(|| panic!("vx names {path}\n{out}"));
    assert!(line.ends_with(&format!("of [tasks.{task}] in packages/a/vx.toml")), "and where to add it: {line}");
}

#[test]
fn a_sandboxed_build_reads_its_inputs_and_its_dependencies_outputs_and_is_cached() {
    let script = "const fs = require('fs'); \
        const text = fs.readFileSync('src/in.txt', 'utf8') + fs.readFileSync('../b/dist/lib.txt', 'utf8'); \
        fs.mkdirSync('dist', { recursive: true }); fs.writeFileSync('dist/out.txt', text);";
    let build =
        sandboxed("build", &format!("node -e {}", shell_quote(script)), "depends-on = [\"^build\"]\nsandbox = true");
    let env = workspace(&build);
    env.vx(&["run", "build"]).assert_success();
    assert_eq!(env.read("packages/a/dist/out.txt"), "the input of a\nthe lib of b\n");
    let again = env.vx(&["run", "build"]);
    again.assert_success();
    assert_eq!(again.summary().cached, 2, "sandboxed tasks are cached as any\n{again}");
}

#[test]
fn a_node_script_reading_a_sibling_projects_file_fails_and_allow_read_opens_it() {
    let read = "node -e \"process.stdout.write(require('fs').readFileSync('../b/secret.txt'))\"";
    let env = workspace(&sandboxed("peek", read, "sandbox = true"));
    assert_refused(&env.vx(&["run", "a#peek"]), "a#peek", "a read of", "/packages/b/secret.txt");

    let env = workspace(&sandboxed("peek", read, "sandbox = { allow-read = [\"/packages/b/secret.txt\"] }"));
    let out = env.vx(&["run", "a#peek"]);
    out.assert_success();
    assert!(out.stdout.contains("the secret of b"), "{out}");
}

#[test]
fn a_task_that_was_refused_a_read_and_still_exits_0_fails_and_is_not_cached() {
    let tolerant = "cat ../b/secret.txt 2>/dev/null; mkdir -p dist && echo built > dist/out.txt";
    let env = workspace(&sandboxed("build", tolerant, "sandbox = true"));
    for round in 0..2 {
        let out = env.vx(&["run", "a#build"]);
        assert_refused(&out, "a#build", "a read of", "/packages/b/secret.txt");
        assert!(out.stdout.contains("its sandbox refused 1 path(s)"), "round {round}: the reason\n{out}");
        assert_eq!(out.summary().cached, 0, "round {round}: never cached\n{out}");
    }
}

#[test]
fn a_tolerated_listing_of_a_directory_fails_the_task_names_it_and_the_suggested_line_mends_it() {
    // A shell glob over a directory it may not list matches nothing, and
    // the loop goes on: the task exits 0, but its output depends on names
    // its key does not count.
    let listing = "for f in ../b/* *; do echo \"$f\"; done > /dev/null; mkdir -p dist && echo built > dist/out.txt";
    let env = workspace(&sandboxed("list", listing, "sandbox = true"));
    let out = env.vx(&["run", "a#list"]);
    out.assert_code(1);
    let lines = out.task_lines("a#list");
    let named = |start: &str| {
        lines.iter().any(|l| l.starts_with(start) && l.ends_with("of [tasks.list] in packages/a/vx.toml"))
    };
    assert!(
        named(
            "sandbox: refused a listing of the directory /packages/b, outside its declarations; add \"/packages/b/*\" to `inputs`"
        ),
        "the sibling's directory, with its glob\n{out}"
    );
    assert!(
        named("sandbox: refused a listing of the project's directory, outside its declarations; add \"*\" to `inputs`"),
        "the project's own directory\n{out}"
    );
    assert_eq!(out.summary().cached, 0, "never cached\n{out}");

    let mended = task(
        "list",
        listing,
        "inputs = [\"src/**\", \"*\", \"/packages/b/*\"]\noutputs = [\"dist/**\"]\nsandbox = true\n",
    );
    let env = workspace(&mended);
    env.vx(&["run", "a#list"]).assert_success();
}

#[test]
fn a_task_writing_into_its_sources_fails_and_writes_nothing() {
    let env = workspace(&sandboxed("scribble", "echo pwned > src/evil.txt", "sandbox = true"));
    assert_refused(&env.vx(&["run", "a#scribble"]), "a#scribble", "a write to", "src/evil.txt");
    assert!(!env.path("packages/a/src/evil.txt").exists());
}

#[test]
fn a_shell_pipeline_works_and_a_grandchild_is_sandboxed_too() {
    let tasks = [
        sandboxed("pipe", "mkdir -p dist && cat src/in.txt | tr a-z A-Z > dist/up.txt", "sandbox = true"),
        reading("grand", "sh -c 'sh -c \"cat ../b/secret.txt\"'", "sandbox = true"),
    ]
    .concat();
    let env = workspace(&tasks);
    env.vx(&["run", "a#pipe"]).assert_success();
    assert_eq!(env.read("packages/a/dist/up.txt"), "THE INPUT OF A\n");
    assert_refused(&env.vx(&["run", "a#grand"]), "a#grand", "a read of", "/packages/b/secret.txt");
}

#[test]
fn a_tcp_connection_to_a_local_server_fails_unless_network_is_true() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("address").port();
    let connect = format!(
        "node -e \"require('net').connect({port}, '127.0.0.1').on('connect', () => {{ console.log('connected'); process.exit(0) }}).on('error', e => {{ console.log(e.code); process.exit(3) }})\""
    );
    let env = workspace(&sandboxed("call", &connect, "sandbox = true"));
    let out = env.vx(&["run", "a#call"]);
    out.assert_code(1);
    assert!(!out.stdout.contains("connected"), "{out}");
    assert!(listener.accept().is_err(), "nothing reached the server");

    let env = workspace(&sandboxed("call", &connect, "sandbox = { network = true }"));
    let out = env.vx(&["run", "a#call"]);
    out.assert_success();
    assert!(out.stdout.contains("connected"), "{out}");
}

#[test]
fn a_sandboxed_task_cannot_read_the_environment_of_vx_through_proc() {
    let env = workspace(&sandboxed("environ", "cat /proc/$PPID/environ", "sandbox = true"));
    let out = env.vx_command(&["run", "a#environ"]).env("VX_TEST_SECRET", "hunter2").output();
    out.assert_code(1);
    assert!(out.stdout.contains("Permission denied"), "{out}");
    assert!(!out.stdout.contains("hunter2"), "{out}");
}

#[test]
fn a_loopback_network_reaches_the_tasks_own_server_and_not_the_hosts() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let host_port = listener.local_addr().expect("address").port();
    // A server the task starts itself, then a client of it; then a client
    // of the server this test listens with.
    let own = "node -e \"const net = require('net'); const s = net.createServer(c => c.end('pong')).listen(0, '127.0.0.1', () => { net.connect(s.address().port, '127.0.0.1').on('data', d => { console.log('own: ' + d); process.exit(0) }).on('error', e => { console.log('own: ' + e.code); process.exit(3) }) }).on('error', e => { console.log('listen: ' + e.code); process.exit(4) })\"";
    let host = format!(
        "node -e \"require('net').connect({host_port}, '127.0.0.1').on('connect', () => {{ console.log('host: connected'); process.exit(0) }}).on('error', e => {{ console.log('host: ' + e.code); process.exit(3) }})\""
    );
    let tasks = [
        sandboxed("own", own, "sandbox = { network = \"loopback\" }"),
        reading("host", &host, "sandbox = { network = \"loopback\" }"),
        task("none", own, "sandbox = true"),
    ]
    .concat();
    let env = workspace(&tasks);
    let out = env.vx(&["run", "a#own"]);
    out.assert_success();
    assert!(out.stdout.contains("own: pong"), "its own server answers on its loopback\n{out}");
    let out = env.vx(&["run", "a#host"]);
    out.assert_code(1);
    assert!(!out.stdout.contains("host: connected"), "{out}");
    assert!(listener.accept().is_err(), "the host's server is not reached from the task's loopback");
    let out = env.vx(&["run", "a#none"]);
    out.assert_code(1);
    assert!(!out.stdout.contains("own: pong"), "without it, not even a loopback\n{out}");
}

#[test]
fn a_sandboxed_task_that_times_out_is_stopped_and_leaves_nothing() {
    let env = workspace(&sandboxed("hang", "sleep 30 & sleep 30", "sandbox = true\ntimeout = \"1s\""));
    let out = env.vx(&["run", "a#hang"]);
    out.assert_code(1);
    assert!(out.stdout.contains("timed out"), "{out}");
    assert!(env.live_processes().is_empty(), "the guard stopped all of it: {:?}", env.live_processes());
}

#[test]
fn sigkill_or_sigint_of_vx_leaves_nothing_of_a_sandboxed_task_running() {
    use nix::sys::signal::Signal;
    for signal in [Signal::SIGKILL, Signal::SIGINT] {
        let env = workspace(&sandboxed("hang", "sleep 30 & sleep 30 & echo started; wait", "sandbox = true"));
        let vx = env.vx_command(&["run", "a#hang"]).spawn();
        vx.wait_for_stdout("started");
        // The task's processes are seen (in their own user and network
        // namespace, still in this machine's process table), so the check
        // below can fail.
        let seen =
            crate::common::process::poll(|| env.live_processes().iter().filter(|p| p.name == "sleep").count() == 2);
        assert!(seen, "{signal:?}: both sleeps run: {:?}", env.live_processes());
        vx.signal(signal);
        let out = vx.finish();
        let gone = crate::common::process::poll(|| env.live_processes().is_empty());
        assert!(gone, "{signal:?}: the guard stopped all of it: {:?}\n{out}", env.live_processes());
    }
}

#[test]
fn a_sandboxed_server_is_ready_by_its_log_and_released_after_its_dependent() {
    let tasks = [
        task("serve", "echo up; exec sleep 30", "persistent = true\nready = { log = \"up\" }\nsandbox = true"),
        sandboxed("build", "mkdir -p dist && echo built > dist/out.txt", "depends-on = [\"serve\"]\nsandbox = true"),
    ]
    .concat();
    let env = workspace(&tasks);
    let out = env.vx(&["run", "a#build"]);
    out.assert_success();
    assert_eq!(env.read("packages/a/dist/out.txt"), "built\n");
    assert!(env.live_processes().is_empty(), "the server was stopped: {:?}", env.live_processes());
}

/// `vx ARGS` run as on a kernel without `what` (`vx-test-without`).
fn vx_without(env: &TestEnv, what: &str, args: &[&str]) -> Output {
    env.vx_command(args).wrapped("vx-test-without", &[what]).output()
}

#[test]
fn on_a_kernel_without_landlock_a_sandboxed_task_fails_saying_so_and_never_runs() {
    let tasks = [
        sandboxed("build", "mkdir -p dist && echo ran > dist/out.txt", "sandbox = true"),
        task("plain", "echo plain ran", ""),
    ]
    .concat();
    let env = workspace(&tasks);
    let out = vx_without(&env, "landlock", &["run", "a#build", "a#plain", "--continue=always"]);
    out.assert_code(1);
    assert!(
        out.task_lines("a#build").iter().any(|l| l.contains("`sandbox` needs Landlock (Linux 5.13 or later")),
        "says what is missing\n{out}"
    );
    assert!(!env.path("packages/a/dist/out.txt").exists(), "never runs unconfined\n{out}");
    assert!(out.stdout.contains("plain ran"), "an unsandboxed task runs as ever\n{out}");
}

#[test]
fn without_unprivileged_user_namespaces_a_task_without_network_fails_saying_so_and_network_true_runs() {
    let env = workspace(&sandboxed("build", "mkdir -p dist && echo ran > dist/out.txt", "sandbox = true"));
    let out = vx_without(&env, "userns", &["run", "a#build"]);
    out.assert_code(1);
    let said =
        out.task_lines("a#build").into_iter().find(|l| l.contains("could not make a user and network namespace"));
    let said = said.unwrap_or_else(|| panic!("says what is missing\n{out}"));
    assert!(said.contains("or set `network = true` on the task"), "and how to mend it: {said}");
    assert!(!env.path("packages/a/dist/out.txt").exists(), "never runs unconfined\n{out}");

    // Files are still confined by Landlock, which needs no namespace.
    let with_network = "sandbox = { network = true }";
    let env = workspace(
        &[
            sandboxed("build", "mkdir -p dist && echo ran > dist/out.txt", with_network),
            reading("peek", "cat ../b/secret.txt", with_network),
        ]
        .concat(),
    );
    vx_without(&env, "userns", &["run", "a#build"]).assert_success();
    assert_eq!(env.read("packages/a/dist/out.txt"), "ran\n");
    assert_refused(&vx_without(&env, "userns", &["run", "a#peek"]), "a#peek", "a read of", "/packages/b/secret.txt");
}

#[test]
fn a_bad_sandbox_value_is_a_config_error_with_a_hint() {
    for (value, says) in [("\"yes\"", "must be true, false or a table"), ("{ allow = [] }", "unknown key `allow`")] {
        let env = workspace(&task("build", "true", &format!("sandbox = {value}")));
        let out = env.vx(&["run", "a#build"]);
        out.assert_code(2);
        assert!(out.stderr.contains(says) && out.stderr.contains("write `sandbox = true`"), "{value}: {out}");
        assert_eq!(out.stderr.lines().count(), 1, "one line\n{out}");
    }
    let env = workspace(&task("build", "true", "sandbox = { allow-read = \"/x\" }"));
    let out = env.vx(&["run", "a#build"]);
    out.assert_code(2);
    assert!(out.stderr.contains("must be a list of paths"), "{out}");
    let env = workspace(&task("build", "true", "sandbox = { network = \"lan\" }"));
    let out = env.vx(&["run", "a#build"]);
    out.assert_code(2);
    assert!(out.stderr.contains("must be true, false or \"loopback\""), "{out}");
}

/// `s` as one single-quoted shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
