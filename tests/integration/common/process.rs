//! Driving `vx` as a live process and watching the processes it starts:
//! starting it in the background with extra variables (and SIGHUP ignored
//! or not), signalling it, reading its output while it runs, and asserting
//! by PID liveness that nothing it started is left.
//!
//! Every wait is a poll against a generous deadline ([`PATIENCE`]): a test
//! fails only when something does not happen at all, never because the
//! machine was slow.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{SigHandler, Signal};
use nix::unistd::Pid;

use super::{LOG_VAR, Output, TestEnv, vx_bin};

/// How long any awaited event may take before the test fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// The directory of the helper binaries (`vx-test-forker`, …), put first
/// on the `PATH` of every `vx` started through [`TestEnv::vx_command`].
/// Where the helper binaries are: `VX_TEST_HELPERS` when set (a copy a
/// normal user can read, `scripts/test-unprivileged`), else beside the
/// build's own.
fn helpers_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| match std::env::var_os("VX_TEST_HELPERS").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            Path::new(env!("CARGO_BIN_EXE_vx-test-forker")).parent().expect("the helpers live in a directory").into()
        }
    })
}

/// A `vx` invocation being prepared.
#[derive(Debug)]
pub(crate) struct VxCommand {
    cmd: Command,
    ignore_sighup: bool,
}

impl TestEnv {
    /// `vx ARGS` at the workspace root, with the helper binaries on `PATH`.
    pub(crate) fn vx_command(&self, args: &[&str]) -> VxCommand {
        let mut cmd = self.command(vx_bin().to_path_buf());
        let mut path = std::ffi::OsString::from(helpers_dir());
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
        cmd.current_dir(&self.root).args(args).env("PATH", path);
        VxCommand { cmd, ignore_sighup: false }
    }

    /// `program ARGS` in `dir` of the workspace, with the test's
    /// environment plus `vars`, as a live process: a package manager that
    /// runs vx through its npm launcher (`npm_packages.rs`).
    pub(crate) fn tool_command(
        &self,
        dir: &str,
        program: impl Into<PathBuf>,
        args: &[&str],
        vars: &[(&str, &str)],
    ) -> VxCommand {
        let mut cmd = self.command(program.into());
        cmd.current_dir(self.root.join(dir)).args(args).envs(vars.iter().copied());
        VxCommand { cmd, ignore_sighup: false }
    }

    /// Live processes (zombies aside) that carry this environment's marker:
    /// everything `vx` started here, and `vx` and its guard themselves.
    pub(crate) fn live_processes(&self) -> Vec<Proc> {
        let marker = format!("{LOG_VAR}={}", self.log.display());
        all_pids().into_iter().filter(|&p| alive(p) && has_env(p, &marker)).filter_map(Proc::read).collect()
    }

    /// A path inside the workspace.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

impl VxCommand {
    pub(crate) fn env(mut self, key: &str, value: &str) -> VxCommand {
        self.cmd.env(key, value);
        self
    }

    /// Runs vx through `program PRE_ARGS… vx ARGS…` (`setpriv`, `sh -c
    /// 'ulimit …; exec "$@"'`), with the same environment and directory.
    pub(crate) fn wrapped(self, program: &str, pre_args: &[&str]) -> VxCommand {
        #[expect(clippy::disallowed_methods, reason = "tests start vx directly, not through the guard")]
        let mut cmd = Command::new(program);
        cmd.env_clear().args(pre_args).arg(self.cmd.get_program()).args(self.cmd.get_args());
        for (key, value) in self.cmd.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = self.cmd.get_current_dir() {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::null());
        VxCommand { cmd, ignore_sighup: self.ignore_sighup }
    }

    /// Gives vx a pipe for standard input ([`Running::take_stdin`]): a
    /// protocol spoken on it (`vx mcp`).
    pub(crate) fn piped_stdin(mut self) -> VxCommand {
        self.cmd.stdin(Stdio::piped());
        self
    }

    /// Starts vx with SIGHUP ignored, as `nohup` does.
    pub(crate) fn ignore_sighup(mut self) -> VxCommand {
        self.ignore_sighup = true;
        self
    }

    /// Starts vx as the leader of a process group of its own, as a shell
    /// with job control does, so that [`Running::signal_group`] reaches it
    /// the way a terminal's Ctrl-C does.
    pub(crate) fn own_group(mut self) -> VxCommand {
        use std::os::unix::process::CommandExt;
        self.cmd.process_group(0);
        self
    }

    /// Starts vx in the background, its output collected as it comes.
    pub(crate) fn spawn(mut self) -> Running {
        use std::os::unix::process::CommandExt;
        let handler = if self.ignore_sighup { SigHandler::SigIgn } else { SigHandler::SigDfl };
        // SAFETY: sigaction is async-signal-safe; the disposition (ignored
        // or default, whatever the test runner had) survives the exec.
        unsafe {
            self.cmd.pre_exec(move || {
                nix::sys::signal::signal(Signal::SIGHUP, handler).map(drop).map_err(std::io::Error::from)
            });
        }
        self.cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = self.cmd.spawn().unwrap_or_else(|e| panic!("start vx: {e}"));
        let (done_tx, done) = mpsc::channel();
        let stdout = collect(child.stdout.take().expect("stdout is piped"), done_tx.clone());
        let stderr = collect(child.stderr.take().expect("stderr is piped"), done_tx);
        Running { child, stdout, stderr, done, exit: None }
    }

    /// Runs vx to completion (bounded by [`PATIENCE`]).
    pub(crate) fn output(self) -> Output {
        self.spawn().finish()
    }
}

/// Reads `pipe` to its end on a thread, into a shared buffer.
fn collect(mut pipe: impl Read + Send + 'static, done: mpsc::Sender<()>) -> Arc<Mutex<Vec<u8>>> {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let sink = buf.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            sink.lock().expect("output lock").extend_from_slice(&chunk[..n]);
        }
        let _ = done.send(());
    });
    buf
}

/// A `vx` running in the background. Dropping it kills vx with SIGKILL
/// (its guard then stops the tasks), so a failing test leaves nothing.
#[derive(Debug)]
pub(crate) struct Running {
    child: Child,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
    exit: Option<i32>,
}

impl Running {
    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub(crate) fn signal(&self, signal: Signal) {
        send(self.pid(), signal);
    }

    /// Sends `signal` to vx's process group (see [`VxCommand::own_group`]):
    /// what a terminal does on Ctrl-C.
    pub(crate) fn signal_group(&self, signal: Signal) {
        send(-self.pid(), signal);
    }

    /// The write end of vx's standard input, once (see
    /// [`VxCommand::piped_stdin`]); dropping it closes vx's input.
    pub(crate) fn take_stdin(&mut self) -> std::process::ChildStdin {
        self.child.stdin.take().expect("started with piped_stdin")
    }

    /// Everything vx wrote so far.
    pub(crate) fn output_so_far(&self) -> Output {
        let text = |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&b.lock().expect("output lock")).into_owned();
        Output { code: self.exit.unwrap_or(-2), stdout: text(&self.stdout), stderr: text(&self.stderr) }
    }

    /// Whether vx is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("poll vx").is_none()
    }

    /// Waits until vx's stdout contains `needle`.
    #[track_caller]
    pub(crate) fn wait_for_stdout(&self, needle: &str) {
        let found = poll(|| self.output_so_far().stdout.contains(needle));
        assert!(found, "vx never printed `{needle}`\n{}", self.output_so_far());
    }

    /// Waits for vx to exit and for its output to close, then returns what
    /// it did. A vx that does not exit in time is killed and the test fails.
    #[track_caller]
    pub(crate) fn finish(mut self) -> Output {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for vx") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("vx did not exit within {PATIENCE:?}\n{}", self.output_so_far());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        self.exit = Some(status.code().unwrap_or(-1));
        // The pipes close once every process holding them is gone (the
        // guard writes to vx's stderr); if one never closes, what was read
        // is returned and the liveness checks say what survived.
        for _ in 0..2 {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.done.recv_timeout(left).is_err() {
                break;
            }
        }
        self.output_so_far()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exit.is_none() && matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Sends `signal` to `pid`.
pub(crate) fn send(pid: i32, signal: Signal) {
    #[expect(clippy::disallowed_methods, reason = "the tests signal vx and its guard from outside")]
    nix::sys::signal::kill(Pid::from_raw(pid), signal).unwrap_or_else(|e| panic!("send {signal} to {pid}: {e}"));
}

/// Sends `signal` to `pid` if it still exists; whether it did.
pub(crate) fn try_send(pid: i32, signal: Signal) -> bool {
    #[expect(clippy::disallowed_methods, reason = "the tests signal vx and its guard from outside")]
    nix::sys::signal::kill(Pid::from_raw(pid), signal).is_ok()
}

/// Polls `check` every few milliseconds until it holds or [`PATIENCE`] has
/// passed; whether it held.
pub(crate) fn poll(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One process, as `/proc/PID/stat` describes it.
#[derive(Debug, Clone)]
pub(crate) struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub name: String,
    pub state: char,
}

impl Proc {
    pub(crate) fn read(pid: i32) -> Option<Proc> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let open = stat.find('(')?;
        let close = stat.rfind(')')?;
        let mut fields = stat[close + 1..].split_whitespace();
        let state = fields.next()?.chars().next()?;
        let ppid = fields.next()?.parse().ok()?;
        Some(Proc { pid, ppid, name: stat[open + 1..close].to_string(), state })
    }
}

impl std::fmt::Display for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {}, parent {}, state {})", self.name, self.pid, self.ppid, self.state)
    }
}

/// What process `pid` does with `signal`, from the `SigIgn` and `SigCgt`
/// masks of `/proc/PID/status`: `(ignored, caught)`. The kernel discards
/// a signal that a process ignores as it is sent, so an ignored and
/// uncaught signal cannot reach the process's code at all.
#[track_caller]
pub(crate) fn disposition(pid: i32, signal: Signal) -> (bool, bool) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("read the status of {pid}: {e}"));
    let mask = |field: &str| {
        let hex = status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .unwrap_or_else(|| panic!("no {field} in the status of {pid}"));
        u64::from_str_radix(hex.trim(), 16).unwrap_or_else(|e| panic!("{field} of {pid} is not hex: {e}"))
    };
    let bit = 1u64 << (signal as i32 - 1);
    (mask("SigIgn:") & bit != 0, mask("SigCgt:") & bit != 0)
}

/// Whether `pid` is a live process: it exists and is not a zombie.
pub(crate) fn alive(pid: i32) -> bool {
    Proc::read(pid).is_some_and(|p| !matches!(p.state, 'Z' | 'X'))
}

fn all_pids() -> Vec<i32> {
    let entries = std::fs::read_dir("/proc").expect("read /proc");
    entries.flatten().filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok())).collect()
}

fn has_env(pid: i32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
}

fn cmdline(pid: i32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| b.split(|&c| c == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
        .unwrap_or_default()
}

/// The guard processes of the vx with PID `vx`: its children started as
/// `vx __guard …`.
pub(crate) fn guards_of(vx: i32) -> Vec<i32> {
    all_pids()
        .into_iter()
        .filter(|&p| Proc::read(p).is_some_and(|info| info.ppid == vx && alive(p)))
        .filter(|&p| cmdline(p).iter().any(|a| a == "__guard"))
        .collect()
}

/// The guard of the vx with PID `vx`, once it is up; panics unless there is
/// exactly one.
#[track_caller]
pub(crate) fn guard_of(vx: i32) -> i32 {
    let mut found = Vec::new();
    poll(|| {
        found = guards_of(vx);
        !found.is_empty()
    });
    assert_eq!(found.len(), 1, "vx (pid {vx}) must have exactly one guard process, found {found:?}");
    found[0]
}

/// Waits until `rel` (in the workspace) holds at least `n` whole lines of
/// PIDs, written by a helper or a task, and returns them.
#[track_caller]
pub(crate) fn read_pids(env: &TestEnv, rel: &str, n: usize) -> Vec<i32> {
    let path = env.path(rel);
    let mut pids = Vec::new();
    let complete = poll(|| {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        pids = text.split_inclusive('\n').filter(|l| l.ends_with('\n')).filter_map(|l| l.trim().parse().ok()).collect();
        pids.len() >= n
    });
    assert!(complete, "{} never held {n} PIDs (it holds {pids:?})", path.display());
    pids
}

/// Panics unless every one of `pids` is alive now.
#[track_caller]
pub(crate) fn assert_alive(pids: &[i32], what: &str) {
    let dead: Vec<i32> = pids.iter().copied().filter(|&p| !alive(p)).collect();
    assert!(dead.is_empty(), "{what}: these should still run but are gone: {dead:?}");
}

/// Waits until every one of `pids` is dead, and no process of `env` (one
/// that carries its marker: a task, its descendants, vx or its guard) is
/// left; panics naming the survivors.
#[track_caller]
pub(crate) fn assert_nothing_left(env: &TestEnv, pids: &[i32], context: &dyn std::fmt::Display) {
    let mut survivors = Vec::new();
    let clean = poll(|| {
        survivors = pids.iter().copied().filter(|&p| alive(p)).filter_map(Proc::read).collect();
        for p in env.live_processes() {
            if !survivors.iter().any(|s: &Proc| s.pid == p.pid) {
                survivors.push(p);
            }
        }
        survivors.is_empty()
    });
    let list: Vec<String> = survivors.iter().map(ToString::to_string).collect();
    assert!(clean, "processes left running after {PATIENCE:?}:\n  {}\n{context}", list.join("\n  "));
}

impl TestEnv {
    /// Runs `vx ARGS` at the workspace root with its stdout written to the
    /// file `stdout`, and returns its exit code, its stderr and its peak
    /// resident memory in MiB: `wait4`'s accounting of that one process
    /// and of the processes it waited for (its tasks).
    ///
    /// The kernel counts the peak of the process vx was forked from (this
    /// test) into vx's own, so a test that measures vx must never hold much
    /// itself: hence stdout goes to a file, to be read a line at a time.
    #[expect(clippy::zombie_processes, reason = "reaped by wait4 below, which also gives its rusage")]
    pub(crate) fn vx_peak_rss(&self, args: &[&str], stdout: &Path) -> (i32, String, u64) {
        let file = std::fs::File::create(stdout).expect("create the stdout file");
        let mut cmd = self.command(vx_bin().to_path_buf());
        cmd.current_dir(&self.root).args(args).stdin(Stdio::null()).stdout(file).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start vx");
        let mut pipe = child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        });
        let pid = nix::libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
        let mut status = 0;
        // SAFETY: `rusage` is plain integers, for which zero is a value.
        let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: the pointers are to live locals; `pid` is this test's own
        // child, reaped here once (`child` is never waited for).
        let reaped = unsafe { nix::libc::wait4(pid, &mut status, 0, &mut usage) };
        assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
        let code = if nix::libc::WIFEXITED(status) { nix::libc::WEXITSTATUS(status) } else { -1 };
        let stderr = stderr.join().expect("stderr reader");
        (code, stderr, u64::try_from(usage.ru_maxrss).unwrap_or(0) >> 10)
    }
}
