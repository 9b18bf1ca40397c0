//! Asking watchman what changed under the workspace since a clock.
//!
//! vx speaks to watchman through its command line (`watchman -j`, one JSON
//! command on standard input, one JSON answer on standard output), which
//! every watchman version has. Under `monitor = "auto"` it passes
//! `--no-spawn`, and asks about a workspace only when something already
//! watches it (`watchman watch-project .`, once): a task runner that never
//! leaves a process behind does not start a daemon of its own accord.
//! `monitor = "watchman"` lets watchman start its daemon and watch the
//! workspace. `WATCHMAN_SOCK` names another daemon's socket, as for
//! watchman's own client.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// What changed since a clock, per watchman.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Since {
    /// Paths (relative to the workspace root, with `/`) created, changed or
    /// removed since the clock; directories whose entries changed too.
    Changed(Vec<String>),
    /// watchman cannot say (it restarted, recrawled, or the clock is not
    /// one of its own): every earlier observation is void.
    Everything,
}

/// One answer: the clock it is good until, and what changed before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub clock: String,
    pub since: Since,
}

/// A watchman that watches a workspace.
#[derive(Debug, Clone)]
pub(crate) struct Watchman {
    program: PathBuf,
    /// The watched root, and the workspace's path below it ("" when equal).
    watch: String,
    relative: String,
    spawn: bool,
}

impl Watchman {
    /// The watchman watching `root`, if there is one. With `spawn`, the
    /// daemon is started and the root watched when they are not; without
    /// it, only a running daemon that already watches `root` (or a parent
    /// of it) is used.
    pub(crate) fn connect(root: &Path, spawn: bool) -> Option<Watchman> {
        let program = PathBuf::from(std::env::var_os("VX_WATCHMAN").unwrap_or_else(|| "watchman".into()));
        let root = root.to_str()?;
        let mut probe = Watchman { program, watch: String::new(), relative: String::new(), spawn };
        let answer = if spawn {
            probe.call(&json!(["watch-project", root]))?
        } else {
            // `find-project` is not in every version: list the watches.
            let roots = probe.call(&json!(["watch-list"]))?;
            let roots = roots["roots"].as_array()?;
            let watched = roots
                .iter()
                .filter_map(Value::as_str)
                .filter(|w| Path::new(root).starts_with(w))
                .max_by_key(|w| w.len())?
                .to_string();
            let relative = Path::new(root).strip_prefix(&watched).ok()?.to_str()?.to_string();
            json!({ "watch": watched, "relative_path": relative })
        };
        probe.watch = answer["watch"].as_str()?.to_string();
        probe.relative = answer["relative_path"].as_str().unwrap_or("").to_string();
        Some(probe)
    }

    /// What changed under the workspace since `clock` (`None`: no clock
    /// yet, so only a clock to start from).
    pub(crate) fn since(&self, clock: Option<&str>) -> Option<Answer> {
        let Some(clock) = clock else {
            let answer = self.call(&json!(["clock", self.watch, { "sync_timeout": 2000 }]))?;
            return Some(Answer { clock: answer["clock"].as_str()?.to_string(), since: Since::Everything });
        };
        let mut query = json!({
            "since": clock,
            "fields": ["name"],
            "empty_on_fresh_instance": true,
            "sync_timeout": 2000,
        });
        if !self.relative.is_empty() {
            query["relative_root"] = json!(self.relative);
        }
        let answer = self.call(&json!(["query", self.watch, query]))?;
        let new_clock = answer["clock"].as_str()?.to_string();
        if answer["is_fresh_instance"].as_bool().unwrap_or(true) {
            return Some(Answer { clock: new_clock, since: Since::Everything });
        }
        let files = answer["files"].as_array()?;
        let changed = files.iter().map(|f| f.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()?;
        Some(Answer { clock: new_clock, since: Since::Changed(changed) })
    }

    /// One command; `None` on any failure (no watchman, no daemon, an
    /// error answer): the caller then looks at the files itself.
    fn call(&self, command: &Value) -> Option<Value> {
        let mut args: Vec<std::ffi::OsString> = vec!["-j".into(), "--no-pretty".into()];
        if !self.spawn {
            args.push("--no-spawn".into());
        }
        // Newer watchman clients read `WATCHMAN_SOCK` themselves; older
        // ones (Debian's 4.9) only take the flag.
        if let Some(sock) = std::env::var_os("WATCHMAN_SOCK").filter(|s| !s.is_empty()) {
            let mut flag = std::ffi::OsString::from("--sockname=");
            flag.push(sock);
            args.push(flag);
        }
        let (ok, stdout) =
            crate::guard::run_tool_with_input(self.program.as_os_str(), &args, command.to_string().as_bytes()).ok()?;
        if !ok {
            return None;
        }
        let answer: Value = serde_json::from_slice(&stdout).ok()?;
        if answer.get("error").is_some() {
            tracing::debug!("watchman: {}", answer["error"]);
            return None;
        }
        Some(answer)
    }
}
