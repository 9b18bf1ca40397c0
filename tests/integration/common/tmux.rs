//! A real terminal for the tests of vx's interactive screens (the task
//! picker, `--ui=tui`): `vx ARGS` in a detached tmux session of its own,
//! keys sent with `send-keys`, the screen read with `capture-pane`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::process::{PATIENCE, poll};
use super::{TestEnv, vx_bin};

static SESSIONS: AtomicUsize = AtomicUsize::new(0);

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `vx ARGS` running in a detached tmux session of its own.
pub(crate) struct Terminal {
    socket: String,
    rc: PathBuf,
}

impl Terminal {
    pub(crate) fn start(env: &TestEnv, args: &str) -> Terminal {
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

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        #[expect(clippy::disallowed_methods, reason = "the test drives a terminal, outside any task")]
        let out = Command::new("tmux").arg("-L").arg(&self.socket).args(args).output();
        let out = out.expect("tmux must be installed (scripts/test installs it)");
        assert!(out.status.success(), "tmux {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    #[track_caller]
    pub(crate) fn wait_for(&self, needle: &str) {
        assert!(poll(|| self.screen().contains(needle)), "`{needle}` never appeared on the screen:\n{}", self.screen());
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    #[track_caller]
    pub(crate) fn exit_code(&self) -> i32 {
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
