//! `[cache] monitor`: with a real watchman daemon (started by the test on
//! a socket of its own) watching the workspace, a run keys an unchanged
//! tree from the last run's lists without a stat of its files, and every
//! change watchman reports (an edit, a new file, a removal, an ignore
//! file) gives the key a walk without the monitor gives.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::{Output, TestEnv, vx_bin};

/// A watchman daemon of the test's own, stopped when dropped.
struct Daemon {
    child: Child,
    sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl Daemon {
    fn start() -> Daemon {
        let dir = tempfile::tempdir().expect("a temp dir");
        let sock = dir.path().join("sock");
        let flag = |name: &str, file: &str| format!("--{name}={}", dir.path().join(file).display());
        #[expect(clippy::disallowed_methods, reason = "the test's own watchman daemon")]
        let child = Command::new("watchman")
            .args(["--foreground", &flag("sockname", "sock"), &flag("logfile", "log"), &flag("statefile", "state")])
            .arg(flag("pidfile", "pid"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("watchman is needed for these tests (Debian's `watchman`; scripts/test installs it)");
        let daemon = Daemon { child, sock, _dir: dir };
        for _ in 0..200 {
            if daemon.call(r#"["watch-list"]"#).contains("roots") {
                return daemon;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("watchman did not answer on {}", daemon.sock.display());
    }

    fn call(&self, command: &str) -> String {
        use std::io::Write;
        #[expect(clippy::disallowed_methods, reason = "the test's own watchman daemon")]
        let mut child = Command::new("watchman")
            .arg(format!("--sockname={}", self.sock.display()))
            .args(["--no-spawn", "-j", "--no-pretty"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start watchman");
        child.stdin.take().expect("stdin").write_all(command.as_bytes()).expect("write");
        String::from_utf8_lossy(&child.wait_with_output().expect("watchman").stdout).into_owned()
    }

    fn watch(&self, root: &Path) {
        let answer = self.call(&format!(r#"["watch-project", "{}"]"#, root.display()));
        assert!(answer.contains("\"watch\""), "{answer}");
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A project whose `hash` task takes `src/**`, 200 files.
fn workspace(monitor: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("vx.toml", &format!("[workspace]\nprojects = [\"big\"]\n\n[cache]\nmonitor = \"{monitor}\"\n"));
    env.write("big/vx.toml", "[tasks.hash]\ncommand = \"true\"\ninputs = [\"src/**\"]\n");
    for i in 0..200 {
        env.write(&format!("big/src/d{}/f{i}.txt", i % 10), &format!("file {i}\n"));
    }
    env
}

fn vx(env: &TestEnv, daemon: &Daemon, args: &[&str]) -> Output {
    let sock = daemon.sock.to_string_lossy().into_owned();
    env.tool_in(".", vx_bin(), args, &[("WATCHMAN_SOCK", &sock)])
}

/// The task's key, as `--dry=json` plans it.
fn key(env: &TestEnv, daemon: &Daemon) -> String {
    let out = vx(env, daemon, &["run", "big#hash", "--dry=json"]);
    out.assert_success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    plan["tasks"][0]["key"].as_str().expect("a key").to_string()
}

/// The key a walk without any monitor gives, in a copy of the workspace.
fn walked_key(env: &TestEnv, daemon: &Daemon) -> String {
    let config = env.read("vx.toml");
    env.write("vx.toml", &config.replace("monitor = \"auto\"", "monitor = \"off\""));
    let key = key(env, daemon);
    env.write("vx.toml", &config);
    key
}

#[test]
fn every_reported_change_gives_the_walked_key() {
    let daemon = Daemon::start();
    let env = workspace("auto");
    daemon.watch(env.root());
    let first = key(&env, &daemon);
    assert_eq!(first, walked_key(&env, &daemon), "the first run walks");
    assert!(env.root().join(".vx/tree-snapshot").is_file(), "and keeps its lists");
    assert_eq!(key(&env, &daemon), first, "unchanged");

    env.write("big/src/d3/f3.txt", "edited\n");
    let edited = key(&env, &daemon);
    assert_ne!(edited, first, "an edit");
    assert_eq!(edited, walked_key(&env, &daemon));

    env.write("big/src/d9/new/deeper.txt", "new\n");
    let added = key(&env, &daemon);
    assert_ne!(added, edited, "a new file in a new directory");
    assert_eq!(added, walked_key(&env, &daemon));

    env.remove("big/src/d1/f1.txt");
    let removed = key(&env, &daemon);
    assert_ne!(removed, added, "a removal");
    assert_eq!(removed, walked_key(&env, &daemon));

    // Declared inputs take what git ignores too (docs/cache.md), so an
    // ignore file changes no key of theirs, with or without the monitor.
    env.write("big/.gitignore", "*.txt\n!f2*.txt\n");
    let ignored = key(&env, &daemon);
    assert_eq!(ignored, removed, "an ignore file above declared inputs");
    assert_eq!(ignored, walked_key(&env, &daemon));

    env.write("big/dist/out.js", "built\n");
    assert_eq!(key(&env, &daemon), ignored, "a file outside the inputs");
}

#[test]
fn an_unchanged_tree_is_not_stated() {
    let daemon = Daemon::start();
    let env = workspace("auto");
    daemon.watch(env.root());
    key(&env, &daemon);
    let unchanged = key(&env, &daemon);
    let trace = env.root().join("trace");
    let sock = daemon.sock.to_string_lossy().into_owned();
    let args = ["-f", "-e", "trace=%stat,getdents64,open,openat", "-o", trace.to_str().expect("utf-8")];
    let mut all: Vec<&str> = args.to_vec();
    let bin = vx_bin().to_string_lossy().into_owned();
    all.extend([bin.as_str(), "run", "big#hash", "--dry=json"]);
    env.tool_in(".", "strace", &all, &[("WATCHMAN_SOCK", &sock)]).assert_success();
    let calls = std::fs::read_to_string(&trace).expect("the trace");
    // The trace must show the run at all: it opened the kept lists.
    assert!(calls.contains("tree-snapshot"), "the trace holds vx's calls:\n{calls}");
    let touched: Vec<&str> = calls.lines().filter(|l| l.contains("/src")).collect();
    assert!(touched.is_empty(), "no stat, listing or open under src/: {touched:?}");

    // Without the daemon the same run walks, to the same key.
    drop(daemon);
    let out = env.vx(&["run", "big#hash", "--dry=json"]);
    out.assert_success();
    assert!(out.stdout.contains(&unchanged), "{out}");
}

#[test]
fn auto_without_a_watch_walks_and_a_bad_mode_is_a_config_error() {
    let daemon = Daemon::start();
    let env = workspace("auto");
    // The daemon runs but does not watch this workspace: auto walks.
    key(&env, &daemon);
    assert!(!env.root().join(".vx/tree-snapshot").exists(), "no monitor, no lists");
    assert!(!daemon.call(r#"["watch-list"]"#).contains(&*env.root().to_string_lossy()), "auto never starts a watch");

    env.write("vx.toml", "[workspace]\nprojects = [\"big\"]\n\n[cache]\nmonitor = \"sometimes\"\n");
    let out = env.vx(&["run", "big#hash"]);
    out.assert_code(2);
    assert!(out.error_line().contains("monitor is `auto`, `watchman`, `git` or `off`"), "{out}");
}

#[test]
fn watchman_mode_starts_the_watch_itself() {
    let daemon = Daemon::start();
    let env = workspace("watchman");
    let first = key(&env, &daemon);
    assert!(daemon.call(r#"["watch-list"]"#).contains(&*env.root().to_string_lossy()), "the workspace is watched");
    env.write("big/src/d0/f0.txt", "edited\n");
    assert_ne!(key(&env, &daemon), first);
}
