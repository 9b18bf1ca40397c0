//! Tasks with `executor = "NAME"`: the executor plugin is loaded once per
//! session (pin checked, world checked) and each task runs through its
//! `execute` on a blocking thread. Output streams line by line into the
//! terminal and the task's log, exactly like a local task's, and the
//! result feeds the cache and history the same way (see `job`).
//!
//! The plugin starts processes only through the `process` import (the
//! guard, `allow-programs`); the task's timeout and Ctrl-C stop its
//! groups and interrupt the call.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::job::Job;
use super::remote::{REMOTE_EXECUTOR, RemoteExecutor, RemoteJob};
use crate::cache::Cache;
use crate::config::{PluginSettings, Project, Task, Workspace};
use crate::events::TaskStatus;
use crate::guard::{grace_period, stop_group};
use crate::plugin::{ExecContext, ExecControl, ExecTask, LoadedPlugin, SinkFn, World, load_configured};
use crate::report::Terminal;

/// Carries the absolute workspace root to executors (and their children),
/// so a plugin can map `task.cwd` to a host path (bubblewrap binds need one).
pub const WORKSPACE_ROOT_VAR: &str = "VX_WORKSPACE_ROOT";

/// How often a running call checks whether vx was interrupted.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// The executor plugins of a session, each loaded on first use, and the
/// built-in `remote` executor.
#[derive(Debug)]
pub struct Executors {
    root: PathBuf,
    settings: std::collections::BTreeMap<String, PluginSettings>,
    loaded: Mutex<HashMap<String, Result<Arc<LoadedPlugin>, String>>>,
    remote: RemoteExecutor,
}

/// Where one task runs.
#[derive(Debug)]
pub enum Prepared {
    Local,
    Plugin(PluginJob),
    Remote(Box<RemoteJob>),
}

impl Prepared {
    /// What goes into the task's key for its executor.
    pub fn cache_identity(&self) -> String {
        match self {
            Prepared::Local => String::new(),
            Prepared::Plugin(p) => p.cache_identity(),
            Prepared::Remote(r) => r.cache_identity(),
        }
    }
}

/// What a task needs to run through a plugin.
#[derive(Debug, Clone)]
pub struct PluginJob {
    pub plugin: Arc<LoadedPlugin>,
    pub root: PathBuf,
    /// The project directory, workspace-relative (`.` for the root).
    pub cwd: String,
    /// The task's declared variables that are set, passed to the plugin
    /// and to every process it starts.
    pub env: Vec<(OsString, OsString)>,
}

impl PluginJob {
    /// What goes into the task's key for the executor: the plugin's bytes
    /// and its config, so a new plugin or setting is a miss.
    pub fn cache_identity(&self) -> String {
        format!("{}:{}", self.plugin.hash.to_hex(), self.plugin.ctx.config_json)
    }
}

impl Executors {
    pub fn new(ws: &Workspace) -> Executors {
        Executors {
            root: ws.root.clone(),
            settings: ws.plugins.clone(),
            loaded: Mutex::new(HashMap::new()),
            remote: RemoteExecutor::new(ws),
        }
    }

    fn load(&self, name: &str) -> Result<Arc<LoadedPlugin>, String> {
        let mut loaded = self.loaded.lock().expect("executors lock poisoned");
        loaded
            .entry(name.to_string())
            .or_insert_with(|| {
                let Some(settings) = self.settings.get(name) else {
                    return Err(format!(
                        "executor `{name}` is not a plugin of this workspace; add it with `vx plugin add PATH --name {name}`"
                    ));
                };
                let plugin = load_configured(&self.root, name, settings).map_err(|e| e.to_string())?;
                if plugin.world != World::Executor {
                    return Err(format!(
                        "executor `{name}` is a {} plugin, not an executor (it exports {})",
                        plugin.world.name(),
                        plugin.export
                    ));
                }
                Ok(Arc::new(plugin))
            })
            .clone()
    }

    /// Where `task` runs: `executor` is its own or the run's `--executor`.
    /// An error says why the task cannot run. `dep_outputs` lists what its
    /// dependencies produce (only remote execution needs it).
    pub fn prepare(
        &self,
        project: &Project,
        task: &Task,
        executor: &str,
        cache: Option<&Arc<Cache>>,
        dep_outputs: impl FnOnce() -> Vec<(PathBuf, Vec<String>)>,
    ) -> Result<Prepared, String> {
        if executor == "local" {
            return Ok(Prepared::Local);
        }
        if executor == REMOTE_EXECUTOR {
            return self
                .remote
                .prepare(project, task, cache, &self.root, dep_outputs())
                .map(|job| Prepared::Remote(Box::new(job)));
        }
        if task.persistent {
            return Err(format!("a persistent task cannot run through executor `{executor}`; vx keeps servers local"));
        }
        let plugin = self.load(executor)?;
        let env = task.env.iter().filter_map(|name| std::env::var_os(name).map(|v| (name.into(), v))).collect();
        Ok(Prepared::Plugin(PluginJob { plugin, root: self.root.clone(), cwd: project.rel_dir.clone(), env }))
    }
}

/// The task's output as the plugin writes it, cut into lines for the
/// terminal and kept whole for the cache and the report's log tail.
#[derive(Debug)]
pub struct OutputLines {
    id: String,
    term: Arc<Terminal>,
    keep: bool,
    state: Mutex<(Vec<u8>, Vec<u8>)>,
}

impl OutputLines {
    pub fn new(id: &str, term: Arc<Terminal>, keep: bool) -> Arc<OutputLines> {
        Arc::new(OutputLines { id: id.to_string(), term, keep, state: Mutex::new((Vec::new(), Vec::new())) })
    }

    /// The sink handed to the plugin.
    pub fn sink(self: &Arc<Self>) -> SinkFn {
        let me = self.clone();
        Box::new(move |_kind, data| me.write(data))
    }

    fn write(&self, data: &[u8]) {
        let mut state = self.state.lock().expect("output lock poisoned");
        let (partial, log) = &mut *state;
        partial.extend_from_slice(data);
        while let Some(end) = partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = partial.drain(..=end).collect();
            self.term.line(&self.id, &line);
            if self.keep {
                log.extend_from_slice(&line);
            }
        }
    }

    /// Emits an unfinished last line and returns the whole log.
    pub fn finish(&self) -> Vec<u8> {
        let mut state = self.state.lock().expect("output lock poisoned");
        let (partial, log) = &mut *state;
        if !partial.is_empty() {
            self.term.line(&self.id, partial);
            if self.keep {
                log.extend_from_slice(partial);
            }
            partial.clear();
        }
        std::mem::take(log)
    }
}

impl Job {
    /// Runs the task through its executor plugin; returns its status, its
    /// output as written (when `keep_log`) and its exit code.
    pub(super) async fn run_plugin(
        &self,
        job: &PluginJob,
        key: Option<&str>,
        keep_log: bool,
    ) -> (TaskStatus, Vec<u8>, Option<i32>) {
        self.term.started(&self.id, key);
        let lossy = |s: &OsString| s.to_string_lossy().into_owned();
        let root = job.root.canonicalize().unwrap_or_else(|_| job.root.clone());
        let mut env = self.command.env.clone();
        env.extend(job.env.iter().cloned());
        env.push((WORKSPACE_ROOT_VAR.into(), root.clone().into_os_string()));
        let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
        let task = ExecTask {
            id: self.id.clone(),
            argv: std::iter::once(&self.command.program).chain(&self.command.args).map(lossy).collect(),
            env: env.iter().map(|(k, v)| (lossy(k), lossy(v))).collect(),
            cwd: job.cwd.clone(),
            timeout_ms: self.timeout.map(|t| t.as_millis() as u64),
            options: "{}".to_string(),
        };
        let control = ExecControl::default();
        let ctx = ExecContext {
            root,
            task_dir: self.command.cwd.clone(),
            env,
            path,
            groups: self.groups.clone(),
            control: control.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        let output = OutputLines::new(&self.id, self.term.clone(), keep_log);
        let (plugin, sink) = (job.plugin.clone(), output.sink());
        let mut call = tokio::task::spawn_blocking(move || plugin.execute(&task, ctx, sink));
        let far = Duration::from_secs(u64::MAX / 4);
        let deadline = tokio::time::sleep(self.timeout.unwrap_or(far));
        tokio::pin!(deadline);
        let mut poll = tokio::time::interval(CANCEL_POLL);
        let mut timed_out = false;
        let stop = |control: &ExecControl| {
            control.cancel.store(true, Ordering::SeqCst);
            for &pgid in control.pgids.lock().expect("pgids lock poisoned").iter() {
                tokio::spawn(stop_group(pgid, grace_period()));
            }
        };
        let result = loop {
            tokio::select! {
                joined = &mut call => break joined,
                () = &mut deadline, if self.timeout.is_some() && !timed_out => {
                    timed_out = true;
                    self.term.note(&self.id, "timed out; stopping it");
                    stop(&control);
                }
                _ = poll.tick(), if !control.cancel.load(Ordering::SeqCst) => {
                    if self.cancelled.load(Ordering::SeqCst) {
                        stop(&control);
                    }
                }
            }
        };
        let log = output.finish();
        if timed_out {
            return (TaskStatus::TimedOut(self.timeout.unwrap_or_default()), log, None);
        }
        if self.cancelled.load(Ordering::SeqCst) {
            return (TaskStatus::Cancelled, log, None);
        }
        match result {
            Ok(Ok(outcome)) if outcome.exit_code == 0 => (TaskStatus::Succeeded, log, Some(0)),
            Ok(Ok(outcome)) => {
                (TaskStatus::Failed(format!("exit code {}", outcome.exit_code)), log, Some(outcome.exit_code))
            }
            Ok(Err(e)) => {
                self.term.note(&self.id, &e.to_string());
                (TaskStatus::Failed(e.to_string()), log, None)
            }
            Err(e) => (TaskStatus::Failed(format!("the executor call crashed: {e}")), log, None),
        }
    }
}
