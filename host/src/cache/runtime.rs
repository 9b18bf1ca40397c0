//! Runtime inputs: commands such as `node --version` whose standard output
//! is part of the keys of the tasks that list them (`runtime`, and
//! `[workspace] global-runtime` for every task).
//!
//! Each distinct command runs at most once per invocation, the first time
//! a key needs it, through the guard (`guard::run_probe`), at the
//! workspace root, under `sh -c`, with the environment a task would get
//! from the workspace's lists. Tasks keyed at the same time wait for the
//! one run. A command that fails (non-zero exit, no start, over
//! [`PROBE_LIMIT`]) leaves the tasks that list it without a key: they run,
//! uncached, with a one-line note, as any task whose key cannot be had.

use std::collections::HashMap;
use std::ffi::OsString;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::config::Workspace;
use crate::config::env::{EnvList, task_environment};
use crate::guard::{Groups, TaskCommand, run_probe};

/// How long one runtime command may take before it is killed and counts
/// as failed.
pub(crate) const PROBE_LIMIT: Duration = Duration::from_secs(60);

/// What a command printed, or why it gives no key.
type ProbeResult = Result<Arc<Vec<u8>>, String>;

/// The runtime commands of one invocation and their outputs.
#[derive(Debug)]
pub(crate) struct RuntimeProbes {
    /// `sh -c COMMAND` at the root; `args` gets the command.
    base: TaskCommand,
    /// Strict mode: the environment is exactly `base.env`, not vx's plus it.
    strict: bool,
    /// The run's process groups, so an interrupt or the guard process stops
    /// a probe too. Outside a run (`--dry`, `vx why`) a registry of its
    /// own without a guard process: the guard's watcher needs the run's
    /// async runtime, and a probe there is as short as vx itself.
    groups: OnceLock<Groups>,
    results: Mutex<HashMap<String, Arc<OnceLock<ProbeResult>>>>,
}

impl RuntimeProbes {
    pub(crate) fn new(ws: &Workspace) -> RuntimeProbes {
        let no_task_lists = EnvList::new(&ws.global_pass_env, &[]);
        let hashed = EnvList::new(&ws.global_env, &[]);
        let strict_env = task_environment(ws.env_mode, hashed, no_task_lists, std::env::vars_os());
        let mut path = OsString::from(ws.root.join("node_modules/.bin"));
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()));
        let mut env = strict_env.clone().unwrap_or_default();
        env.push(("PATH".into(), path));
        RuntimeProbes {
            base: TaskCommand {
                program: "sh".into(),
                args: vec!["-c".into()],
                cwd: ws.root.clone(),
                env,
                confine: None,
                terminal: false,
            },
            strict: strict_env.is_some(),
            groups: OnceLock::new(),
            results: Mutex::default(),
        }
    }

    /// Runs later probes in `groups` (the run's), if none has run yet.
    pub(crate) fn use_groups(&self, groups: Groups) {
        let _ = self.groups.set(groups);
    }

    /// The output of `command`, running it on first use.
    pub(crate) fn output(&self, command: &str) -> ProbeResult {
        let cell = self.results.lock().expect("probes lock poisoned").entry(command.to_string()).or_default().clone();
        cell.get_or_init(|| self.run(command)).clone()
    }

    fn run(&self, command: &str) -> ProbeResult {
        let groups = self.groups.get_or_init(Groups::new);
        let mut cmd = self.base.clone();
        cmd.args.push(command.into());
        let probed = run_probe(&cmd, self.strict, groups, PROBE_LIMIT).map_err(|e| format!("could not start: {e}"))?;
        if probed.timed_out {
            return Err(format!("took longer than {}s and was stopped", PROBE_LIMIT.as_secs()));
        }
        if probed.overflowed {
            return Err(format!(
                "printed more than {} KiB and was stopped; a runtime input prints a version, not a stream",
                crate::guard::PROBE_OUTPUT_LIMIT / 1024
            ));
        }
        match probed.code {
            Some(0) => Ok(Arc::new(probed.stdout)),
            code => {
                let how = code.map_or_else(|| "was killed".to_string(), |c| format!("exited with code {c}"));
                let said = String::from_utf8_lossy(&probed.stderr);
                match said.lines().map(str::trim).find(|l| !l.is_empty()) {
                    Some(line) => Err(format!("{how}: {}", truncate(line, 160))),
                    None => Err(how),
                }
            }
        }
    }
}

fn truncate(line: &str, max: usize) -> &str {
    match line.char_indices().nth(max) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}
