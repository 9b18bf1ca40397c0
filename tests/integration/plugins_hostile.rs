//! Hostile plugins (issue 15, item 6): the same misbehaviour (the
//! `hostile` crate of tests/plugins, reached through each test plugin's
//! `mode`) run as each plugin kind. A reporter is `testkit` (`--report
//! kit`), a cache backend `testcache` (`[cache] remote = "tc"`), an executor
//! `testexec` (`executor = "ex"`). For each: stopped by its limit with an
//! error naming the plugin, vx's memory bounded, and the run goes on (a
//! reporter or a remote cache never fails a task) or fails that task alone
//! (an executor); malformed replies are errors; and every way out of the
//! sandbox without a grant is refused.

use crate::common::{Output, TestEnv};
use crate::plugins::component;

/// The peak RSS vx may reach in these tests, with the default memory limit
/// (256 MiB) and `limits.output = "16MiB"`: the guest's memory, vx's copy of
/// what it returned, and vx itself (docs/plugins.md, "Limits").
const PEAK_RSS_BOUND_MIB: u64 = 768;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reporter,
    Cache,
    Executor,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Reporter => "kit",
            Kind::Cache => "tc",
            Kind::Executor => "ex",
        }
    }

    /// The call an error names.
    fn call(self) -> &'static str {
        match self {
            Kind::Reporter => "render",
            Kind::Cache => "get",
            Kind::Executor => "execute",
        }
    }
}

/// A workspace with `app#build` (through `ex` for an executor), a granted
/// `data/in.txt`, the symlinks `data/up -> ../app` and `data/root -> /`,
/// and the plugin of `kind` with `grants` lines and `config` lines.
fn fixture(kind: Kind, grants: &str, config: &str) -> TestEnv {
    let env = TestEnv::new();
    let remote = if kind == Kind::Cache { "\n[cache]\nremote = \"tc\"\n" } else { "" };
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"app\"]\n{remote}"));
    let executor = if kind == Kind::Executor { "executor = \"ex\"\n" } else { "" };
    env.write(
        "app/vx.toml",
        &format!(
            "[project]\nname = \"app\"\n\n[tasks.build]\ncommand = \"echo built; mkdir -p dist; echo out > dist/o.txt\"\noutputs = [\"dist/**\"]\n{executor}"
        ),
    );
    env.write("data/in.txt", "granted data\n");
    std::os::unix::fs::symlink("../app", env.root().join("data/up")).unwrap();
    std::os::unix::fs::symlink("/", env.root().join("data/root")).unwrap();
    std::fs::create_dir_all(env.root().join("store")).unwrap();
    let wasm = component(match kind {
        Kind::Reporter => "testkit",
        Kind::Cache => "testcache",
        Kind::Executor => "testexec",
    });
    env.vx(&["plugin", "add", wasm.to_str().unwrap(), "--name", kind.name()]).assert_success();
    configure(&env, kind, grants, config);
    env
}

/// Rewrites the plugin's table with `grants` lines and `config` lines (a
/// cache backend always gets its `store` dir, read-write).
fn configure(env: &TestEnv, kind: Kind, grants: &str, config: &str) {
    let name = kind.name();
    let toml = env.read("vx.toml");
    let head = toml.split(&format!("[plugins.{name}]")).next().unwrap().to_string();
    let store =
        if kind == Kind::Cache && !grants.contains("dirs") { "dirs = [{ path = \"store\", rw = true }]\n" } else { "" };
    env.write(
        "vx.toml",
        &format!(
            "{head}[plugins.{name}]\npath = \".vx/plugins/{name}.wasm\"\n{store}{grants}\n\n[plugins.{name}.config]\n{config}\n"
        ),
    );
}

/// `vx run build` as the kind needs it.
fn run(env: &TestEnv, kind: Kind) -> Output {
    match kind {
        Kind::Reporter => {
            let _ = std::fs::remove_file(env.root().join("out.txt"));
            env.vx(&["run", "build", "--report", "kit", "--report-file", "out.txt"])
        }
        Kind::Cache => {
            // Each run asks the remote: nothing is cached locally.
            let _ = std::fs::remove_dir_all(env.root().join(".vx/cache"));
            env.vx(&["run", "build"])
        }
        Kind::Executor => env.vx(&["run", "build"]),
    }
}

/// The largest peak RSS of any process this test has waited for, in MiB:
/// each test runs in a process of its own under nextest, so this is the
/// peak of the `vx` processes it ran (an upper bound on each of them).
fn peak_rss_mib() -> u64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    (usage.max_rss() as u64) >> 10
}

#[track_caller]
fn assert_memory_bounded(out: &Output) {
    let peak = peak_rss_mib();
    assert!(peak < PEAK_RSS_BOUND_MIB, "vx peaked at {peak} MiB, over {PEAK_RSS_BOUND_MIB} MiB\n{out}");
}

/// Asserts how a run with a misbehaving plugin ended: a reporter's or a
/// remote cache's failure is printed (once) and the task still succeeds
/// (a missing report still makes vx exit 1),
/// an executor's fails its task; either way the message names the plugin
/// and the call and contains `why`.
#[track_caller]
fn assert_stopped(env: &TestEnv, kind: Kind, out: &Output, why: &str) {
    let error = format!("plugin `{}` failed in `{}`: ", kind.name(), kind.call());
    let all = format!("{}{}", out.stdout, out.stderr);
    let line = all.lines().find(|l| l.contains(&error)).unwrap_or_else(|| panic!("no `{error}`\n{out}"));
    assert!(line.contains(why), "`{why}` is not in `{line}`\n{out}");
    match kind {
        Kind::Reporter => {
            // The tasks succeeded; vx exits 1 because the report it was
            // asked for could not be written.
            out.assert_code(1);
            assert_eq!(out.summary().succeeded, 1, "{out}");
            assert!(!env.root().join("out.txt").exists(), "no report file\n{out}");
            assert_eq!(all.matches(&error).count(), 1, "{out}");
        }
        Kind::Cache => {
            out.assert_success();
            let summary = out.summary();
            assert_eq!((summary.succeeded, summary.cached), (1, 0), "the task ran\n{out}");
            assert_eq!(all.matches(&error).count(), 1, "one warning\n{out}");
            assert!(line.contains("remote cache lookup failed (treated as a miss)"), "{line}");
        }
        Kind::Executor => {
            out.assert_code(1);
            assert_eq!(out.summary().failed, 1, "{out}");
        }
    }
}

// An endless loop: the CPU budget stops it (an executor's `execute` has no
// call timeout of its own; the task's timeout and the CPU budget hold).

fn endless_loop(kind: Kind) {
    let env = fixture(kind, "limits = { cpu = \"300ms\" }", "mode = \"spin\"");
    let out = run(&env, kind);
    assert_stopped(&env, kind, &out, "stopped after using its CPU budget of 300ms");
    assert!(format!("{out}").contains(&format!("`[plugins.{}].limits.cpu`", kind.name())), "{out}");
}

#[test]
fn reporter_endless_loop_is_stopped_by_its_cpu_budget() {
    endless_loop(Kind::Reporter);
}

#[test]
fn cache_backend_endless_loop_is_stopped_by_its_cpu_budget() {
    endless_loop(Kind::Cache);
}

#[test]
fn executor_endless_loop_is_stopped_by_its_cpu_budget() {
    endless_loop(Kind::Executor);
}

// A 1 GiB allocation: the memory limit refuses the growth.

fn gib_allocation(kind: Kind) {
    let env = fixture(kind, "", "mode = \"alloc\"");
    let out = run(&env, kind);
    assert_stopped(&env, kind, &out, "memory limit 256 MiB exceeded");
    assert_memory_bounded(&out);
}

#[test]
fn reporter_gib_allocation_hits_the_memory_limit() {
    gib_allocation(Kind::Reporter);
}

#[test]
fn cache_backend_gib_allocation_hits_the_memory_limit() {
    gib_allocation(Kind::Cache);
}

#[test]
fn executor_gib_allocation_hits_the_memory_limit() {
    gib_allocation(Kind::Executor);
}

// Unbounded recursion: a trap, on vx's side a clean error.

fn deep_recursion(kind: Kind) {
    let env = fixture(kind, "", "mode = \"recurse\"");
    let out = run(&env, kind);
    assert_stopped(&env, kind, &out, "it trapped");
}

#[test]
fn reporter_deep_recursion_traps_cleanly() {
    deep_recursion(Kind::Reporter);
}

#[test]
fn cache_backend_deep_recursion_traps_cleanly() {
    deep_recursion(Kind::Cache);
}

#[test]
fn executor_deep_recursion_traps_cleanly() {
    deep_recursion(Kind::Executor);
}

// A flood of output: a report larger than `limits.output`, an endless
// cache entry or task output, and hundreds of MiB of log records and
// stdout. vx keeps at most the limit (and 200 log records, 64 KiB of
// stdout per call), and stops the call.

/// `limits.output` in the flood tests, so the bound is quick to reach.
const OUTPUT_LIMIT: &str = "limits = { output = \"16MiB\" }";

#[test]
fn reporter_flood_is_cut_at_its_limits() {
    let env = fixture(Kind::Reporter, OUTPUT_LIMIT, "mode = \"big\"\nmib = 40");
    let out = run(&env, Kind::Reporter);
    assert_stopped(&env, Kind::Reporter, &out, "its report is 40 MiB, more than its output limit of 16 MiB");
    assert!(out.stderr.contains("`[plugins.kit].limits.output`"), "{out}");
    assert_memory_bounded(&out);

    // Past what wasmtime copies out of a guest in one call, the return
    // value is refused before vx sees it.
    configure(&env, Kind::Reporter, OUTPUT_LIMIT, "mode = \"big\"\nmib = 200");
    let out = run(&env, Kind::Reporter);
    assert_stopped(&env, Kind::Reporter, &out, "too much data is being copied between the host and the guest");
    assert_memory_bounded(&out);

    configure(&env, Kind::Reporter, OUTPUT_LIMIT, "mode = \"flood-log\"");
    let out = run(&env, Kind::Reporter);
    out.assert_success();
    assert_eq!(env.read("out.txt"), "flooded\n", "300 MiB of log records do not stop a report");
    assert_eq!(
        out.stderr.matches("vx: plugin `kit` warn: xxx").count(),
        200,
        "at most 200 records\n{}",
        out.stderr.len()
    );
    assert!(
        out.stderr.contains("vx: plugin `kit`: 100 more log records dropped"),
        "{}",
        &out.stderr[out.stderr.len() - 300..]
    );
    assert!(out.stderr.len() < 2 << 20, "each record is cut short: {} bytes", out.stderr.len());

    configure(&env, Kind::Reporter, OUTPUT_LIMIT, "mode = \"flood-stdout\"");
    let out = run(&env, Kind::Reporter);
    // Past 64 KiB of stdout in one call the stream is closed: the guest's
    // `println!` panics, and what it printed (64 KiB) is shown.
    assert_stopped(&env, Kind::Reporter, &out, "failed printing to stdout");
    assert!(out.stderr.len() < 1 << 20, "{} bytes of stderr", out.stderr.len());
    assert_memory_bounded(&out);
}

#[test]
fn cache_backend_flood_is_cut_at_its_output_limit() {
    let env = fixture(Kind::Cache, OUTPUT_LIMIT, "mode = \"flood\"");
    let out = run(&env, Kind::Cache);
    assert_stopped(&env, Kind::Cache, &out, "more than its output limit of 16 MiB (cache entry)");
    assert_memory_bounded(&out);
    assert_eq!(env.read("app/dist/o.txt"), "out\n", "the task ran");
}

#[test]
fn executor_flood_is_cut_at_its_output_limit() {
    let env = fixture(Kind::Executor, OUTPUT_LIMIT, "mode = \"flood\"");
    let out = run(&env, Kind::Executor);
    assert_stopped(&env, Kind::Executor, &out, "more than its output limit of 16 MiB (task output)");
    assert!(out.stdout.len() < 24 << 20, "at most the limit reaches the terminal: {} bytes", out.stdout.len());
    assert_memory_bounded(&out);
    let again = env.vx(&["run", "build"]);
    assert_eq!(again.summary().cached, 0, "a cut-short run is not cached\n{again}");

    configure(&env, Kind::Executor, OUTPUT_LIMIT, "mode = \"flood-log\"");
    let out = run(&env, Kind::Executor);
    out.assert_success();
    assert_eq!(out.stderr.matches("vx: plugin `ex` warn: xxx").count(), 200);
    assert!(out.stderr.len() < 2 << 20, "each record is cut short: {} bytes", out.stderr.len());
}

// Malformed replies: text that is not UTF-8 (refused by the canonical ABI
// when vx lifts it), error values of many lines with escape sequences
// (shown as one escaped line), `exit` (a trap, not vx's exit), and for each
// kind what its WIT lets it return that makes no sense.

fn not_utf8_and_exit(kind: Kind) -> TestEnv {
    let env = fixture(kind, "", "mode = \"not-utf8\"");
    let out = run(&env, kind);
    assert_stopped(&env, kind, &out, "invalid utf-8");
    configure(&env, kind, "", "mode = \"exit\"");
    let out = run(&env, kind);
    // wasi:cli/exit carries ok or error only: `exit(3)` arrives as exit(1).
    assert_stopped(&env, kind, &out, "it called exit(1); a plugin returns from its call instead");
    env
}

#[test]
fn reporter_malformed_replies_are_errors() {
    let env = not_utf8_and_exit(Kind::Reporter);
    configure(&env, Kind::Reporter, "", "mode = \"lines\"");
    let out = run(&env, Kind::Reporter);
    assert_stopped(&env, Kind::Reporter, &out, "first\\nvx: error: forged\\u{1b}[2J");
    assert!(!out.stderr.contains('\u{1b}') && !out.stderr.contains("\nvx: error: forged"), "{out}");
    configure(&env, Kind::Reporter, "", "mode = \"not-utf8-log\"");
    let out = run(&env, Kind::Reporter);
    assert_stopped(&env, Kind::Reporter, &out, "invalid utf-8");
}

#[test]
fn cache_backend_malformed_replies_are_misses_and_never_restored() {
    not_utf8_and_exit(Kind::Cache);
    let env = fixture(Kind::Cache, "", "");
    run(&env, Kind::Cache).assert_success();
    let first: Vec<_> = std::fs::read_dir(env.root().join("store")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(first.len(), 1, "uploaded");
    for (mode, why) in [("garbage", "not a vx cache entry"), ("truncated", "body is"), ("other-key", "holds key")] {
        std::fs::remove_dir_all(env.root().join("app/dist")).unwrap();
        // `other-key` answers with the entry stored for the first key, so
        // the task's key must have changed since.
        let word = if mode == "other-key" { "changed" } else { "built" };
        let toml = env.read("app/vx.toml").replace("echo built", &format!("echo {word}"));
        env.write("app/vx.toml", &toml);
        configure(&env, Kind::Cache, "", &format!("mode = \"{mode}\""));
        let out = run(&env, Kind::Cache);
        out.assert_success();
        assert_eq!(out.summary().cached, 0, "{mode}: a miss\n{out}");
        assert!(
            out.stderr.contains("the remote cache returned an invalid entry") && out.stderr.contains(why),
            "{mode}\n{out}"
        );
        assert_eq!(out.stderr.matches("invalid entry").count(), 1, "one warning\n{out}");
        assert_eq!(out.task_lines("app#build"), [word], "{mode}: the task ran\n{out}");
        assert_eq!(env.read("app/dist/o.txt"), "out\n");
    }
}

#[test]
fn executor_malformed_replies_fail_the_task() {
    let env = not_utf8_and_exit(Kind::Executor);
    for code in [-1, 256, i32::MIN] {
        configure(&env, Kind::Executor, "", &format!("mode = \"exit-code\"\ncode = {code}"));
        let out = run(&env, Kind::Executor);
        assert_stopped(
            &env,
            Kind::Executor,
            &out,
            &format!("it returned exit code {code}, which no process exits with"),
        );
    }
    configure(&env, Kind::Executor, "", "mode = \"exit-code\"\ncode = 7");
    let out = run(&env, Kind::Executor);
    out.assert_code(1);
    assert!(out.stdout.contains("exit code 7"), "a real exit code fails the task as a process's would\n{out}");
}

// Escape attempts without a grant. Each kind runs the same probe (the
// `hostile` crate) with `dirs = ["data"]` (read-only) and `env =
// ["GRANTED"]` granted, and logs one line per attempt.

/// The probe's lines, `NAME` to `ok: …` or `refused: …`.
fn probe_lines(kind: Kind, out: &Output) -> std::collections::BTreeMap<String, String> {
    let prefix = format!("vx: plugin `{}` warn: probe ", kind.name());
    out.stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter_map(|l| l.split_once(": "))
        .map(|(name, result)| (name.to_string(), result.to_string()))
        .collect()
}

fn escapes(kind: Kind) -> (TestEnv, std::collections::BTreeMap<String, String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let dirs =
        if kind == Kind::Cache { "dirs = [\"data\", { path = \"store\", rw = true }]" } else { "dirs = [\"data\"]" };
    let programs =
        if kind == Kind::Executor { "allow-programs = [{ program = \"sh\", args = [\"-c\", \"pwd\"] }]\n" } else { "" };
    let mode = if kind == Kind::Reporter { "probe" } else { "escape" };
    let env = fixture(
        kind,
        &format!("{dirs}\nenv = [\"GRANTED\"]\n{programs}"),
        &format!("mode = \"{mode}\"\nport = {port}"),
    );
    let out = env
        .vx_command(&match kind {
            Kind::Reporter => vec!["run", "build", "--report", "kit", "--report-file", "out.txt"],
            _ => vec!["run", "build"],
        })
        .env("GRANTED", "g")
        .env("SECRET", "s")
        .output();
    out.assert_success();
    let lines = probe_lines(kind, &out);
    assert_eq!(lines.get("read-granted").map(String::as_str), Some("ok: granted data"), "the control\n{out}");
    for name in
        ["read-absolute", "read-outside", "read-dotdot", "read-symlink-up", "read-symlink-root", "write-read-only"]
    {
        assert!(lines[name].starts_with("refused: "), "{name}: {}\n{out}", lines[name]);
    }
    assert!(!env.root().join("data/new.txt").exists());
    assert_eq!(lines["env"], "ok: [GRANTED]", "only the granted variable\n{out}");
    assert_eq!(lines["args"], "ok: 0");
    assert_eq!(lines["stdin"], "ok: 0 bytes", "stdin is closed");
    for name in ["tcp-connect", "tcp-listen", "udp-bind", "dns"] {
        assert!(lines[name].starts_with("refused: "), "{name}: {}\n{out}", lines[name]);
    }
    assert!(listener.accept().is_err(), "nothing reached the listener");
    assert!(lines["spawn"].starts_with("refused: "), "WASI has no processes: {}", lines["spawn"]);
    // Without `allow-clocks` the wall clock reads the Unix epoch.
    assert_eq!(lines["wall-clock"], "ok: 0", "a stopped wall clock\n{out}");
    assert_eq!(lines["monotonic-clock"], "ok: true");
    (env, lines)
}

#[test]
fn reporter_escape_attempts_are_refused() {
    escapes(Kind::Reporter);
}

#[test]
fn a_plugin_granted_the_clocks_reads_the_hosts_time() {
    let env = fixture(Kind::Reporter, "allow-clocks = true", "mode = \"probe\"\nport = 1");
    let out = env.vx(&["run", "build", "--report", "kit", "--report-file", "out.txt"]);
    out.assert_success();
    let lines = probe_lines(Kind::Reporter, &out);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let seen: u64 = lines["wall-clock"].trim_start_matches("ok: ").parse().unwrap();
    assert!(seen.abs_diff(now) < 3600, "the plugin's wall clock {seen} is the host's {now}\n{out}");
    let list = env.vx(&["plugin", "list"]);
    assert!(list.stdout.contains("allow-clocks=true"), "the grant is listed\n{list}");
}

#[test]
fn cache_backend_escape_attempts_are_refused() {
    escapes(Kind::Cache);
}

#[test]
fn executor_escape_attempts_are_refused() {
    let (_env, lines) = escapes(Kind::Executor);
    assert!(
        lines["vx-spawn-granted"].starts_with("ok: exit 0 ") && lines["vx-spawn-granted"].ends_with("/app"),
        "{lines:?}"
    );
    let refused = [
        ("vx-spawn-other", "`env` is not in [plugins.ex].allow-programs"),
        ("vx-spawn-args", "does not match [plugins.ex].allow-programs"),
        ("vx-spawn-path", "`/bin/sh` is not in [plugins.ex].allow-programs"),
        ("vx-spawn-cwd-dotdot", "cwd `..` must be a workspace-relative path without `..`"),
        ("vx-spawn-cwd-absolute", "cwd `/` must be a workspace-relative path"),
        ("vx-spawn-cwd-symlink", "cwd `data/root` is not a directory inside the workspace"),
    ];
    for (name, why) in refused {
        assert!(
            lines[name].starts_with("refused: Error::Denied(") && lines[name].contains(why),
            "{name}: {}",
            lines[name]
        );
    }
}

/// CPU time `pid` has used, in clock ticks (`utime + stime`).
fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

#[test]
fn a_cache_backend_call_in_flight_yields_to_sigterm() {
    // A lookup that spins with two minutes of budget, past the harness's
    // patience: SIGTERM must not wait for the budget to run out.
    let env = fixture(Kind::Cache, "limits = { cpu = \"120s\", call-timeout = \"120s\" }", "mode = \"spin\"");
    let _ = std::fs::remove_dir_all(env.root().join(".vx/cache"));
    let vx = env.vx_command(&["run", "build"]).spawn();
    let spinning = (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        cpu_ticks(vx.pid()) > 50
    });
    assert!(spinning, "the lookup spins (half a second of CPU)");
    vx.signal(nix::sys::signal::Signal::SIGTERM);
    let out = vx.finish();
    assert_eq!(out.code, 143, "the run stops for the signal\n{out}");
}
