//! `vx run` and `vx worker` against a hostile REAPI server
//! (`vx-test-reapi`): a server that leaves blobs out, sends the wrong
//! sizes or bytes, streams too much, forever or one byte at a time, resets
//! its streams, is always UNAVAILABLE, or lies in its capabilities.
//!
//! Each cache test stores real entries through the server's honest writes,
//! forgets everything local, and runs again while the server misbehaves
//! on every read: the run succeeds with every task run, one warning names
//! the endpoint, nothing panics, and the peak RSS of vx stays under
//! [`RSS_BOUND`] (an endless stream buffered whole would pass it in
//! seconds). A short `[remote] timeout` cuts the stalls off.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::common::fixtures::task;
use crate::common::process::{alive, poll, send};
use crate::common::{Output, TestEnv, log_cmd, vx_bin};

/// The peak resident memory a run may reach, in KiB (docs/reliability.md).
const RSS_BOUND: u64 = 512 << 10;
/// Projects in each test workspace.
const PROJECTS: [&str; 4] = ["p1", "p2", "p3", "p4"];

/// A `vx-test-reapi` process, killed when dropped.
struct Hostile {
    child: Child,
    endpoint: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Hostile {
    fn start(fault: &str, lease: bool) -> Hostile {
        let dir = tempfile::Builder::new().prefix("vx-hostile-").tempdir().expect("create a temporary directory");
        let port_file = dir.path().join("port");
        let log = dir.path().join("server.log");
        let bin = Path::new(env!("CARGO_BIN_EXE_vx-test-reapi"));
        #[expect(clippy::disallowed_methods, reason = "the test server is started directly, not through the guard")]
        let mut cmd = Command::new(bin);
        cmd.args(["--fault", fault]).arg("--port-file").arg(&port_file).arg("--log").arg(&log);
        if lease {
            cmd.arg("--lease");
        }
        let child = cmd.stdin(Stdio::null()).spawn().unwrap_or_else(|e| panic!("start vx-test-reapi: {e}"));
        assert!(poll(|| port_file.exists()), "vx-test-reapi never wrote its port");
        let port = std::fs::read_to_string(&port_file).expect("read the port file");
        Hostile { child, endpoint: format!("grpc://127.0.0.1:{}", port.trim()), log, _dir: dir }
    }

    /// `[remote]` for this server, with a deadline of `timeout` per call.
    fn remote_toml(&self, timeout: &str) -> String {
        format!("\n[remote]\nendpoint = \"{}\"\ntimeout = \"{timeout}\"\n", self.endpoint)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Four independent projects, each writing a file of its own to `dist/`.
fn four(remote: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"packages/*\"]\n{remote}"));
    for name in PROJECTS {
        let command = format!("{} && mkdir -p dist && echo 'the output of {name}' > dist/out.txt", log_cmd(name));
        let text = format!("[project]\nname = \"{name}\"\n{}", task("build", &command, "outputs = [\"dist/**\"]"));
        env.write(&format!("packages/{name}/vx.toml"), &text);
    }
    env
}

fn forget_local(env: &TestEnv) {
    std::fs::remove_dir_all(env.path(".vx")).expect("remove .vx");
    for name in PROJECTS {
        let _ = std::fs::remove_dir_all(env.path(&format!("packages/{name}/dist")));
    }
    env.clear_log();
}

fn warnings(out: &Output) -> Vec<&str> {
    out.stderr.lines().filter(|l| l.starts_with("vx: warning: ")).collect()
}

/// `VmHWM` (peak resident set, KiB) of a live process.
fn peak_rss(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `vx run build`, its peak RSS polled until it exits.
fn run_measured(env: &TestEnv) -> (Output, u64) {
    let mut running = env.vx_command(&["run", "build"]).spawn();
    let pid = running.pid();
    let mut peak = 0;
    while running.is_running() {
        peak = peak.max(peak_rss(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(10));
    }
    (running.finish(), peak)
}

/// Asserts a run against a misbehaving server: it succeeded, every task
/// ran, nothing panicked, memory stayed bounded; returns its warnings.
#[track_caller]
fn assert_degraded(env: &TestEnv, out: &Output, peak: u64) -> Vec<String> {
    out.assert_success();
    assert_eq!(env.log_set(), PROJECTS.map(String::from).to_vec(), "every task ran\n{out}");
    assert!(!out.stderr.contains("panicked"), "nothing panics\n{out}");
    assert!(peak > 0 && peak < RSS_BOUND, "peak RSS {peak} KiB, bound {RSS_BOUND} KiB\n{out}");
    for name in PROJECTS {
        assert_eq!(env.read(&format!("packages/{name}/dist/out.txt")), format!("the output of {name}\n"));
    }
    warnings(out).into_iter().map(String::from).collect()
}

/// Stores the entries honestly, then runs again with the local cache
/// gone: one warning, naming the endpoint and saying the remote is off.
#[track_caller]
fn one_warning_after_an_honest_write(fault: &str, names: &str) {
    let server = Hostile::start(fault, false);
    let env = four(&server.remote_toml("2s"));
    let first = env.vx(&["run", "build"]);
    first.assert_success();
    assert_eq!(warnings(&first), Vec::<&str>::new(), "the writes are honest\n{first}");

    forget_local(&env);
    let (out, peak) = run_measured(&env);
    let lines = assert_degraded(&env, &out, peak);
    assert_eq!(lines.len(), 1, "one warning\n{out}");
    assert!(lines[0].contains(&server.endpoint), "the warning names the endpoint\n{out}");
    assert!(lines[0].ends_with("not using the remote cache for the rest of this run"), "{out}");
    assert!(lines[0].contains(names), "the warning says `{names}`\n{out}");
}

#[test]
fn blobs_left_out_of_a_batch_are_a_miss_with_one_warning() {
    one_warning_after_an_honest_write("missing", "out of its BatchReadBlobs reply");
}

#[test]
fn blobs_of_the_wrong_size_are_a_miss_with_one_warning() {
    one_warning_after_an_honest_write("wrong-size", "the CAS returned");
}

#[test]
fn a_stream_longer_than_its_digest_is_cut_off_with_one_warning() {
    one_warning_after_an_honest_write("oversized", "sent more than the");
}

#[test]
fn an_endless_stream_is_cut_off_and_memory_stays_bounded() {
    one_warning_after_an_honest_write("endless", "sent more than the");
}

#[test]
fn a_slow_loris_stream_is_cut_off_by_the_deadline() {
    one_warning_after_an_honest_write("stall", "not finished within");
}

#[test]
fn a_stream_reset_half_way_is_a_miss_with_one_warning() {
    one_warning_after_an_honest_write("reset", "reset the stream");
}

#[test]
fn an_http2_rst_stream_half_way_is_a_miss_with_one_warning() {
    // The client sees the reset as an HTTP/2 stream error, not a status.
    one_warning_after_an_honest_write("rst-stream", "h2 protocol error");
}

#[test]
fn capabilities_that_lie_are_a_miss_with_one_warning() {
    one_warning_after_an_honest_write("lying-caps", "BLAKE3 is not supported");
}

#[test]
fn blobs_whose_bytes_do_not_match_are_a_miss_of_each_entry_with_one_warning() {
    let server = Hostile::start("mismatch", false);
    let env = four(&server.remote_toml("2s"));
    env.vx(&["run", "build"]).assert_success();

    forget_local(&env);
    let (out, peak) = run_measured(&env);
    let lines = assert_degraded(&env, &out, peak);
    // Rotted bytes of the right size condemn their entry, not the server:
    // one warning at the end counts them.
    assert_eq!(lines.len(), 1, "one warning\n{out}");
    assert!(lines[0].contains(&server.endpoint), "the warning names the endpoint\n{out}");
    let counted = (1..=PROJECTS.len()).any(|n| lines[0].starts_with(&format!("vx: warning: {n} REAPI cache entr")));
    assert!(counted && lines[0].contains("the CAS returned"), "it counts the entries and says why\n{out}");
}

#[test]
fn a_server_that_is_always_unavailable_is_one_warning() {
    let server = Hostile::start("unavailable", false);
    let env = four(&server.remote_toml("2s"));
    let (out, peak) = run_measured(&env);
    let lines = assert_degraded(&env, &out, peak);
    assert_eq!(lines.len(), 1, "one warning\n{out}");
    assert!(lines[0].contains(&format!("GetCapabilities at {}", server.endpoint)), "{out}");
    assert!(lines[0].contains("(Unavailable)"), "{out}");
}

#[test]
fn sigterm_stops_a_run_stalled_on_the_server() {
    let server = Hostile::start("stall", false);
    // A deadline far past the test's patience: only the signal can end the read.
    let env = four(&server.remote_toml("10m"));
    env.vx(&["run", "build"]).assert_success();

    forget_local(&env);
    let running = env.vx_command(&["run", "build"]).spawn();
    assert!(poll(|| server.log().contains("ByteStream.Read")), "vx never read a blob\n{}", server.log());
    running.signal(Signal::SIGTERM);
    let out = running.finish();
    out.assert_code(143);
    assert!(!out.stderr.contains("panicked"), "{out}");
}

/// A `vx worker` on the hostile server, in a work dir of its own.
struct Worker {
    child: Child,
    work_dir: PathBuf,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Worker {
    fn start(server: &Hostile) -> Worker {
        let dir = tempfile::Builder::new().prefix("vx-worker-").tempdir().expect("create a temporary directory");
        let base = dir.path().canonicalize().expect("canonicalize the temporary directory");
        let (work_dir, log) = (base.join("work"), base.join("worker.log"));
        let out = std::fs::File::create(&log).expect("create the worker log");
        #[expect(clippy::disallowed_methods, reason = "the tests start vx worker directly, not through the guard")]
        let child = Command::new(vx_bin())
            .args(["worker", "--endpoint", &server.endpoint, "--concurrency", "1", "--bot-id", "hostile-bot"])
            .arg("--work-dir")
            .arg(&work_dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
            .env("HOME", &base)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("share the worker log"))
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start vx worker: {e}"));
        Worker { child, work_dir, log, _dir: dir }
    }

    fn lease_dirs(&self) -> Vec<String> {
        let entries = std::fs::read_dir(&self.work_dir).into_iter().flatten().flatten();
        entries.map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("lease-")).collect()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The worker takes the lease, fails it with a status (not a panic), has
/// removed its directory, and still stops cleanly on SIGTERM.
#[track_caller]
fn worker_survives(fault: &str) {
    let server = Hostile::start(fault, true);
    let mut worker = Worker::start(&server);
    assert!(poll(|| server.log().contains("lease lease-1 completed")), "the lease never completed\n{}", server.log());
    let line = server.log().lines().find(|l| l.starts_with("lease lease-1 completed")).unwrap_or_default().to_string();
    assert!(!line.contains("code 0:"), "the lease failed: {line}");
    assert!(poll(|| worker.lease_dirs().is_empty()), "the lease directory is removed: {:?}", worker.lease_dirs());
    let pid = worker.child.id() as i32;
    assert!(alive(pid), "the worker is still serving");
    send(pid, Signal::SIGTERM);
    assert!(poll(|| worker.child.try_wait().expect("poll vx worker").is_some()), "vx worker stops on SIGTERM");
    let log = std::fs::read_to_string(&worker.log).unwrap_or_default();
    assert!(!log.contains("panicked"), "{log}");
}

#[test]
fn vx_worker_survives_blobs_left_out_of_a_batch() {
    worker_survives("missing");
}

#[test]
fn vx_worker_survives_an_endless_stream() {
    worker_survives("endless");
}

#[test]
fn vx_worker_survives_an_http2_rst_stream() {
    worker_survives("rst-stream");
}
