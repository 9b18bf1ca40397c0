//! The task picker of a bare `vx run`, driven through a real terminal
//! (tmux): typing part of a name and Enter runs that task and records it
//! for `vx last`; Esc exits 130 with nothing run. Without a terminal the
//! candidates go to stdout and the run fails with exit 2; selection errors
//! come before any picker.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::process::{PATIENCE, poll};
use crate::common::{TestEnv, vx_bin};

static SESSIONS: AtomicUsize = AtomicUsize::new(0);

fn workspace() -> TestEnv {
    let env = TestEnv::new();
    env.workspace(&["packages/*"]);
    env.write(
        "packages/app/vx.toml",
        "[tasks.build]\ncommand = \"touch ran-build\"\n[tasks.test]\ncommand = \"touch ran-test\"\n",
    );
    env.write("packages/lib/vx.toml", "[tasks.build]\ncommand = \"touch ran-build\"\n");
    env
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `vx ARGS` running in a detached tmux session of its own.
struct Terminal {
    socket: String,
    rc: PathBuf,
}

impl Terminal {
    fn start(env: &TestEnv, args: &str) -> Terminal {
        let n = SESSIONS.fetch_add(1, Ordering::SeqCst);
        let socket = format!("vx-test-{}-{n}", std::process::id());
        let base = env.root().parent().expect("the workspace has a parent").to_path_buf();
        let rc = base.join(format!("rc-{n}"));
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_string());
        let script = format!(
            "cd {} && env -i PATH={} HOME={} TERM=screen NO_COLOR=1 {} {args}; echo $? > {}; sleep 600",
            quote(&env.root().to_string_lossy()),
            quote(&path),
            quote(&base.join("home").to_string_lossy()),
            quote(&vx_bin().to_string_lossy()),
            quote(&rc.to_string_lossy()),
        );
        let term = Terminal { socket, rc };
        term.tmux(&["-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", &script]);
        term
    }

    fn tmux(&self, args: &[&str]) -> String {
        #[expect(clippy::disallowed_methods, reason = "the test drives a terminal, outside any task")]
        let out = Command::new("tmux").arg("-L").arg(&self.socket).args(args).output();
        let out = out.expect("tmux must be installed (scripts/test installs it)");
        assert!(out.status.success(), "tmux {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    #[track_caller]
    fn wait_for(&self, needle: &str) {
        assert!(poll(|| self.screen().contains(needle)), "`{needle}` never appeared on the screen:\n{}", self.screen());
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    #[track_caller]
    fn exit_code(&self) -> i32 {
        let read = || std::fs::read_to_string(&self.rc).ok().and_then(|s| s.trim().parse::<i32>().ok());
        assert!(poll(|| read().is_some()), "vx did not exit within {PATIENCE:?}:\n{}", self.screen());
        read().expect("the exit code was written")
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        #[expect(clippy::disallowed_methods, reason = "the test drives a terminal, outside any task")]
        let _ = Command::new("tmux").arg("-L").arg(&self.socket).arg("kill-server").output();
    }
}

#[test]
fn typing_part_of_a_name_and_enter_runs_it_and_vx_last_names_it() {
    let env = workspace();
    let term = Terminal::start(&env, "run");
    term.wait_for("task to run");
    term.keys(&["-l", "app#te"]);
    term.wait_for("> app#test");
    term.keys(&["Enter"]);
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    assert!(env.path("packages/app/ran-test").exists(), "the picked task ran");
    assert!(!env.path("packages/app/ran-build").exists(), "only the picked task ran");
    let last = env.vx(&["last"]);
    last.assert_success();
    assert_eq!(last.stdout, "vx run app#test\n", "vx last names the picked task\n{last}");
}

#[test]
fn escape_exits_130_and_runs_nothing() {
    let env = workspace();
    let term = Terminal::start(&env, "run");
    term.wait_for("task to run");
    term.keys(&["Escape"]);
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    for marker in ["packages/app/ran-build", "packages/app/ran-test", "packages/lib/ran-build"] {
        assert!(!env.path(marker).exists(), "{marker}: nothing may run");
    }
    env.vx(&["last"]).assert_code(2);
}

#[test]
fn without_a_terminal_the_candidates_are_listed_and_the_exit_code_is_2() {
    let env = workspace();
    let out = env.vx(&["run"]);
    out.assert_code(2);
    assert_eq!(out.stdout, "app#build\napp#test\nlib#build\n", "{out}");
    assert!(out.error_line().starts_with("vx: error: no task named"), "{out}");

    let inside = env.vx_in("packages/app", &["run"]);
    inside.assert_code(2);
    assert_eq!(inside.stdout, "app#build\napp#test\n", "scoped to the project the user stands in\n{inside}");

    let filtered = env.vx(&["run", "--filter", "lib"]);
    filtered.assert_code(2);
    assert_eq!(filtered.stdout, "lib#build\n", "{filtered}");
}

#[test]
fn selection_errors_come_before_the_picker() {
    let env = workspace();
    let out = env.vx(&["run", "--affected"]);
    assert_eq!(out.code, 2, "--affected outside a git repository is refused\n{out}");
    assert_eq!(out.stdout, "", "no candidates are listed when the selection itself fails\n{out}");
    out.error_line();
}
