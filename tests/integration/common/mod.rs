//! The test environment every integration test drives `vx` through: a
//! temporary directory holding the workspace (`ws/`), a home directory
//! (`home/`) and a task log (`log.txt`), and a hermetic environment for the
//! `vx` process, so nothing from the developer's shell leaks into a test.
//!
//! Modelled on jj's `cli/tests/common/test_environment.rs`. Each test owns
//! its own `TestEnv`, so tests run in parallel without sharing anything.

pub(crate) mod browser;
pub(crate) mod buildgrid;
pub(crate) mod devtools;
pub(crate) mod fixtures;
pub(crate) mod otlp;
pub(crate) mod process;
pub(crate) mod query;
pub(crate) mod registry;
pub(crate) mod snapshot;
pub(crate) mod store;
pub(crate) mod summary;
pub(crate) mod tmux;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The name of the variable that points tasks at the shared log file.
pub(crate) const LOG_VAR: &str = "VX_TEST_LOG";

/// A temporary workspace and the environment `vx` runs in.
#[derive(Debug)]
pub(crate) struct TestEnv {
    /// Kept so the directory lives as long as the test.
    _temp: tempfile::TempDir,
    /// The temporary directory itself; git never looks above it.
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
    log: PathBuf,
}

/// What a `vx` (or `git`) invocation did. A test that runs vx says what it
/// expected of the run, so ignoring one is a warning: assert on it, or
/// write `let _ =` with the reason the outcome does not matter.
#[derive(Debug)]
#[must_use = "assert on what vx did, or say with `let _ =` why it does not matter"]
pub(crate) struct Output {
    /// The exit code; `-1` when the process was killed by a signal.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Panics with the whole output unless the exit code is `code`.
    #[track_caller]
    pub(crate) fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code\n{self}");
        self
    }

    /// Panics unless the run succeeded.
    #[track_caller]
    pub(crate) fn assert_success(&self) -> &Self {
        self.assert_code(0)
    }

    /// The one line an error is made of (`vx: error: …`), after checking that
    /// stderr holds exactly one line and stdout nothing.
    #[track_caller]
    pub(crate) fn error_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "an error must be exactly one line on stderr\n{self}");
        assert!(lines[0].starts_with("vx: error: "), "errors start with `vx: error: `\n{self}");
        lines[0]
    }

    /// The lines of stdout that a task printed, prefix removed: for `id`,
    /// every `id: TEXT` line gives `TEXT`.
    pub(crate) fn task_lines(&self, id: &str) -> Vec<&str> {
        let prefix = format!("{id}: ");
        self.stdout.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).collect()
    }

    /// The final `Tasks: …` summary line of a run.
    #[track_caller]
    pub(crate) fn summary(&self) -> Summary {
        let line = self
            .stdout
            .lines()
            .rev()
            .find(|l| l.starts_with("Tasks: "))
            .unwrap_or_else(|| panic!("no `Tasks:` summary line\n{self}"));
        Summary::parse(line).unwrap_or_else(|| panic!("malformed summary line `{line}`\n{self}"))
    }

    /// The summary line (`skipped: …`, `failed: …`) that names `id`.
    #[track_caller]
    pub(crate) fn summary_entry(&self, kind: &str, id: &str) -> &str {
        self.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{kind}:")) && l.split_whitespace().nth(1) == Some(id))
            .unwrap_or_else(|| panic!("the summary has no `{kind}: {id}` line\n{self}"))
    }
}

/// An [`Output`] whose exit code a helper has checked already, returned by
/// helpers such as "run vx, which must succeed": a step that only needs
/// the run to have succeeded can drop it, the check was the point. It
/// reads as the `Output` it holds.
#[derive(Debug)]
pub(crate) struct Checked(Output);

impl Output {
    /// Panics unless the run succeeded, and marks the output checked.
    #[track_caller]
    pub(crate) fn checked_success(self) -> Checked {
        self.assert_success();
        Checked(self)
    }
}

impl Checked {
    /// The output itself, to keep or take apart.
    pub(crate) fn into_output(self) -> Output {
        self.0
    }
}

impl std::ops::Deref for Checked {
    type Target = Output;

    fn deref(&self) -> &Output {
        &self.0
    }
}

impl std::fmt::Display for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit code: {}\n--- stdout ---\n{}--- stderr ---\n{}", self.code, self.stdout, self.stderr)
    }
}

/// `Tasks: N run, N succeeded, N failed, N skipped, N cached in DURATION`,
/// with ` (N flaky)` after the successes when some were, and `, N group(s)`
/// before ` in` when group tasks settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    pub run: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub skipped: usize,
    pub cached: usize,
    pub flaky: usize,
    pub groups: usize,
    /// Stopped by Ctrl-C or SIGTERM (not counted as failed).
    pub stopped: usize,
}

impl Summary {
    /// Parses the summary line, checking every word of its fixed shape.
    pub(crate) fn parse(line: &str) -> Option<Summary> {
        let rest = line.strip_prefix("Tasks: ")?;
        let (counts, wall) = rest.rsplit_once(" in ")?;
        let wall_ok = !wall.is_empty()
            && wall.starts_with(|c: char| c.is_ascii_digit())
            && wall.ends_with(|c: char| c.is_ascii_alphabetic());
        if !wall_ok {
            return None;
        }
        let mut numbers = Vec::new();
        let mut flaky = 0;
        let parts: Vec<&str> = counts.split(", ").collect();
        if !(5..=7).contains(&parts.len()) {
            return None;
        }
        // Then, each only when not zero: `N stopped`, `N group(s)`.
        let (mut stopped, mut groups) = (0, 0);
        let mut extra = parts[5..].iter();
        let mut next = extra.next();
        if let Some((n, "stopped")) = next.and_then(|p| p.split_once(' ')) {
            stopped = n.parse().ok().filter(|&n| n > 0)?;
            next = extra.next();
        }
        if let Some(part) = next {
            let (n, w) = part.split_once(' ')?;
            let n: usize = n.parse().ok()?;
            if w != if n == 1 { "group" } else { "groups" } || n == 0 {
                return None;
            }
            groups = n;
        }
        if extra.next().is_some() {
            return None;
        }
        let words = ["run", "succeeded", "failed", "skipped", "cached"];
        for (part, word) in parts.iter().zip(words) {
            let (n, mut w) = part.split_once(' ')?;
            if let Some((succeeded, extra)) = w.split_once(" (").filter(|_| word == "succeeded") {
                flaky = extra.strip_suffix(" flaky)")?.parse().ok()?;
                w = succeeded;
            }
            if w != word {
                return None;
            }
            numbers.push(n.parse().ok()?);
        }
        match numbers[..] {
            [run, succeeded, failed, skipped, cached] => {
                Some(Summary { run, succeeded, failed, skipped, cached, flaky, groups, stopped })
            }
            _ => None,
        }
    }
}

impl TestEnv {
    /// A fresh, empty workspace directory named `ws`.
    pub(crate) fn new() -> TestEnv {
        TestEnv::with_workspace_dir("ws")
    }

    /// A fresh, empty workspace in a directory of the given (relative) name,
    /// which may hold spaces, non-ASCII characters and several components.
    pub(crate) fn with_workspace_dir(name: &str) -> TestEnv {
        let temp = tempfile::Builder::new().prefix("vx-test-").tempdir().expect("create a temporary directory");
        let base = temp.path().canonicalize().expect("canonicalize the temporary directory");
        let root = base.join(name);
        let home = base.join("home");
        std::fs::create_dir_all(&root).expect("create the workspace directory");
        std::fs::create_dir_all(&home).expect("create the home directory");
        let log = base.join("log.txt");
        TestEnv { _temp: temp, base, root, home, log }
    }

    /// The workspace root (absolute, canonical).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `contents` to `rel` (relative to the workspace root), creating
    /// parent directories.
    pub(crate) fn write(&self, rel: &str, contents: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create parent directories");
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }

    /// Writes an executable file (a script with a `#!` line).
    pub(crate) fn write_executable(&self, rel: &str, contents: &str) {
        use std::os::unix::fs::PermissionsExt;
        self.write(rel, contents);
        let path = self.root.join(rel);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("make the file executable");
    }

    /// Reads a file of the workspace.
    pub(crate) fn read(&self, rel: &str) -> String {
        let path = self.root.join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    /// Removes a file of the workspace.
    pub(crate) fn remove(&self, rel: &str) {
        let path = self.root.join(rel);
        std::fs::remove_file(&path).unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
    }

    /// The root `vx.toml` with the given project globs.
    pub(crate) fn workspace(&self, globs: &[&str]) {
        let list: Vec<String> = globs.iter().map(|g| format!("{g:?}")).collect();
        self.write("vx.toml", &format!("[workspace]\nprojects = [{}]\n", list.join(", ")));
    }

    /// The lines tasks appended to the log, in order.
    pub(crate) fn log(&self) -> Vec<String> {
        match std::fs::read_to_string(&self.log) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => panic!("read the task log: {e}"),
        }
    }

    /// The log's lines, sorted: which tasks ran, whatever the order.
    pub(crate) fn log_set(&self) -> Vec<String> {
        let mut lines = self.log();
        lines.sort();
        lines
    }

    /// Clears the log between two runs of one test.
    pub(crate) fn clear_log(&self) {
        match std::fs::remove_file(&self.log) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("clear the task log: {e}"),
        }
    }

    /// Runs `vx ARGS` at the workspace root.
    pub(crate) fn vx(&self, args: &[&str]) -> Output {
        self.vx_in(".", args)
    }

    /// Runs `vx ARGS` at the workspace root, with arguments that need not
    /// be UTF-8.
    pub(crate) fn vx_os(&self, args: &[OsString]) -> Output {
        let mut cmd = self.command(vx_bin().to_path_buf());
        cmd.current_dir(&self.root).args(args);
        run(cmd)
    }

    /// Runs `vx ARGS` with `dir` (relative to the workspace root, or
    /// absolute) as the working directory.
    pub(crate) fn vx_in(&self, dir: impl AsRef<Path>, args: &[&str]) -> Output {
        let mut cmd = self.command(vx_bin().to_path_buf());
        cmd.current_dir(self.root.join(dir)).args(args);
        run(cmd)
    }

    /// Runs `git ARGS` at the workspace root with a fixed identity; panics
    /// when git fails.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let mut cmd = self.command(PathBuf::from("git"));
        cmd.current_dir(&self.root).args(args);
        let out = run(cmd);
        assert_eq!(out.code, 0, "git {} failed\n{out}", args.join(" "));
        out.stdout
    }

    /// Runs `program ARGS` in `dir` (relative to the workspace root) with
    /// the test's environment plus `vars`: a package manager, a packer.
    pub(crate) fn tool_in(
        &self,
        dir: &str,
        program: impl Into<PathBuf>,
        args: &[&str],
        vars: &[(&str, &str)],
    ) -> Output {
        let mut cmd = self.command(program.into());
        cmd.current_dir(self.root.join(dir)).args(args).envs(vars.iter().copied());
        run(cmd)
    }

    /// `git init` with `branch` as the first branch.
    pub(crate) fn git_init(&self, branch: &str) {
        self.git(&["init", "--quiet", "--initial-branch", branch]);
    }

    /// Stages everything and commits it.
    pub(crate) fn git_commit_all(&self, message: &str) {
        self.git(&["add", "--all"]);
        self.git(&["commit", "--quiet", "--allow-empty", "-m", message]);
    }

    /// Creates `name` at HEAD and switches to it.
    pub(crate) fn git_branch(&self, name: &str) {
        self.git(&["switch", "--quiet", "--create", name]);
    }

    /// The hermetic environment: nothing of the caller's but `PATH` (to find
    /// `sh` and `git`); home, locale, colour and git identity fixed.
    fn command(&self, program: PathBuf) -> Command {
        #[expect(clippy::disallowed_methods, reason = "tests start vx and git directly, not through the guard")]
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin")))
            .env("HOME", &self.home)
            .env("NO_COLOR", "1")
            .env("LANG", "C")
            .env("LC_ALL", "C")
            .env(LOG_VAR, &self.log)
            .env("GIT_CEILING_DIRECTORIES", &self.base)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "vx tests")
            .env("GIT_AUTHOR_EMAIL", "tests@vx.invalid")
            .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
            .env("GIT_COMMITTER_NAME", "vx tests")
            .env("GIT_COMMITTER_EMAIL", "tests@vx.invalid")
            .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
            .stdin(std::process::Stdio::null());
        cmd
    }
}

/// A shell command that appends `word` to the shared log.
pub(crate) fn log_cmd(word: &str) -> String {
    format!("echo {word} >> \"${LOG_VAR}\"")
}

/// Like [`log_cmd`], after a short pause. Dependencies use it so that an
/// ordering bug shows: a dependent started too early would log first. The
/// pause is never what a test asserts on.
pub(crate) fn slow_log_cmd(word: &str) -> String {
    format!("sleep 0.2; {}", log_cmd(word))
}

/// A project `vx.toml`: `[project]` with `deps`, then `tasks` as
/// `(name, command, depends-on)`.
pub(crate) fn project_toml(name: &str, deps: &[&str], tasks: &[(&str, &str, &[&str])]) -> String {
    let quote = |items: &[&str]| items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ");
    let mut out = format!("[project]\nname = {name:?}\ndepends-on = [{}]\n", quote(deps));
    for (task, command, depends_on) in tasks {
        out.push_str(&format!("\n[tasks.{task}]\ncommand = {command:?}\ndepends-on = [{}]\n", quote(depends_on)));
    }
    out
}

fn run(mut cmd: Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("start {:?}: {e}", cmd.get_program()));
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The `vx` binary: `$VX_BIN`, else `target/<profile>/vx` beside the
/// directory of this test executable (`target/<profile>/deps/`).
///
/// `cargo test` and `cargo nextest run` build the test harness of the `vx`
/// bin but not the binary itself, so without care a test could run a
/// missing or stale `vx`. When the binary is missing or older than the
/// host's sources and the tests run under cargo (`$CARGO` is set), it is
/// built once per test process with `cargo build -p vx` for the same
/// profile; otherwise a missing binary is a panic that says how to build it.
pub(crate) fn vx_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("VX_BIN").filter(|b| !b.is_empty()) {
            return PathBuf::from(bin);
        }
        let exe = std::env::current_exe().expect("the test executable has a path");
        let profile_dir =
            exe.parent().and_then(Path::parent).expect("the test executable lives in target/<profile>/deps");
        let bin = profile_dir.join("vx");
        if is_stale(&bin) {
            build_vx(profile_dir);
        }
        assert!(
            bin.is_file(),
            "the vx binary is missing at {}: build it with `cargo build -p vx` \
             (`scripts/test` builds it), or point VX_BIN at it",
            bin.display()
        );
        bin
    })
}

/// Whether `bin` is missing or older than a source file of the host.
fn is_stale(bin: &Path) -> bool {
    let Ok(built) = std::fs::metadata(bin).and_then(|m| m.modified()) else { return true };
    let host = Path::new(env!("CARGO_MANIFEST_DIR")).join("../host");
    let mut stack = vec![host.join("src"), host.join("Cargo.toml"), host.join("../Cargo.lock")];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&path).into_iter().flatten().flatten().map(|e| e.path()));
        } else if meta.modified().is_ok_and(|m| m > built) {
            return true;
        }
    }
    false
}

/// `cargo build -p vx` into the target directory this test was built in.
fn build_vx(profile_dir: &Path) {
    let Some(cargo) = std::env::var_os("CARGO") else { return };
    let (Some(profile), Some(target_dir)) = (profile_dir.file_name(), profile_dir.parent()) else { return };
    let profile = if profile == "debug" { OsString::from("dev") } else { profile.to_os_string() };
    #[expect(clippy::disallowed_methods, reason = "the tests build vx with cargo, outside any task")]
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet", "-p", "vx", "--profile"])
        .arg(profile)
        .env("CARGO_TARGET_DIR", target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null());
    let out = run(cmd);
    assert_eq!(out.code, 0, "`cargo build -p vx` failed; fix the build or point VX_BIN at a vx binary\n{out}");
}

/// Position of `line` in `log`; panics when it is missing.
#[track_caller]
pub(crate) fn position(log: &[String], line: &str) -> usize {
    log.iter().position(|l| l == line).unwrap_or_else(|| panic!("`{line}` is not in the log {log:?}"))
}

/// Panics unless `before` comes before `after` in `log`.
#[track_caller]
pub(crate) fn assert_before(log: &[String], before: &str, after: &str) {
    assert!(position(log, before) < position(log, after), "`{before}` must come before `{after}` in {log:?}");
}
