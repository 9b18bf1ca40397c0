//! Tasks with `executor = "NAME"`: the executor plugin is loaded once per
//! session (pin checked, world checked) and each task runs through its
//! `execute` on a blocking thread. Output streams line by line into the
//! run's events and the task's log, exactly like a local task's, and the
//! result feeds the cache and history the same way.
//!
//! The plugin starts processes only through the `process` import (the
//! guard, `allow-programs`); the task's timeout and Ctrl-C stop its
//! groups and interrupt the call.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Attempt, Executor, Ran};
use crate::config::{PluginSettings, Project};
use crate::events::output::{BoundedLog, MAX_LINE, take_piece};
use crate::events::{Bus, Event, TaskStatus};
use crate::guard::{grace_period, stop_group};
use crate::plugin::{
    ExecContext, ExecControl, ExecTask, LoadedPlugin, SinkFn, World, load_configured, read_plugin_file, toml_to_json,
};

/// Carries the absolute workspace root to executors (and their children),
/// so a plugin can map `task.cwd` to a host path (bubblewrap binds need one).
pub(crate) const WORKSPACE_ROOT_VAR: &str = "VX_WORKSPACE_ROOT";

/// How often a running call checks whether vx was interrupted.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Loads the executor plugin `name` once per session; later calls get the
/// same plugin, or the same error.
pub(crate) fn load(
    loaded: &Mutex<HashMap<String, Result<Arc<LoadedPlugin>, String>>>,
    root: &Path,
    settings: &BTreeMap<String, PluginSettings>,
    name: &str,
) -> Result<Arc<LoadedPlugin>, String> {
    let mut loaded = loaded.lock().expect("executors lock poisoned");
    loaded
        .entry(name.to_string())
        .or_insert_with(|| {
            let Some(settings) = settings.get(name) else {
                return Err(format!(
                    "executor `{name}` is not a plugin of this workspace; add it with `vx plugin add PATH --name {name}`"
                ));
            };
            let plugin = load_configured(root, name, settings).map_err(|e| e.to_string())?;
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

/// An executor plugin's part of a task's key: the BLAKE3 of its file and
/// its `[plugins.NAME.config]` as JSON.
pub(crate) fn identity(hash: &blake3::Hash, config_json: &str) -> String {
    format!("{}:{config_json}", hash.to_hex())
}

/// [`identity`] of the plugin `name` from its file and settings, without
/// loading it (for keys computed before a run: `--dry`, `vx why`).
pub(crate) fn identity_unloaded(settings: &BTreeMap<String, PluginSettings>, name: &str) -> Result<String, String> {
    let Some(settings) = settings.get(name) else {
        return Err(format!(
            "executor `{name}` is not a plugin of this workspace; add it with `vx plugin add PATH --name {name}`"
        ));
    };
    let (_, hash) = read_plugin_file(name, &settings.path).map_err(|e| e.to_string())?;
    Ok(identity(&hash, &toml_to_json(&settings.config)))
}

/// A task's run through an executor plugin.
#[derive(Debug, Clone)]
pub(crate) struct PluginExecutor {
    plugin: Arc<LoadedPlugin>,
    root: PathBuf,
    /// The project directory, workspace-relative (`.` for the root).
    cwd: String,
    /// The variables the task's `env` and `pass-env` lists (and their
    /// `global-` forms) name, passed to the plugin and to every process it
    /// starts: nothing else of vx's environment, whatever the env mode.
    env: Vec<(OsString, OsString)>,
}

impl PluginExecutor {
    pub(crate) fn new(
        plugin: Arc<LoadedPlugin>,
        root: &Path,
        project: &Project,
        env: Vec<(OsString, OsString)>,
    ) -> PluginExecutor {
        PluginExecutor { plugin, root: root.to_path_buf(), cwd: project.rel_dir.clone(), env }
    }

    /// The call's arguments and context.
    fn call(&self, a: &Attempt, control: &ExecControl) -> (ExecTask, ExecContext) {
        let lossy = |s: &OsString| s.to_string_lossy().into_owned();
        let root = self.root.canonicalize().unwrap_or_else(|_| self.root.clone());
        let mut env = a.command.env.clone();
        env.extend(self.env.iter().cloned());
        env.push((WORKSPACE_ROOT_VAR.into(), root.clone().into_os_string()));
        let path = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default();
        let task = ExecTask {
            id: a.id.clone(),
            argv: std::iter::once(&a.command.program).chain(&a.command.args).map(lossy).collect(),
            env: env.iter().map(|(k, v)| (lossy(k), lossy(v))).collect(),
            cwd: self.cwd.clone(),
            timeout_ms: a.timeout.map(|t| t.as_millis() as u64),
            options: "{}".to_string(),
        };
        let ctx = ExecContext {
            root,
            task_dir: a.command.cwd.clone(),
            env,
            path,
            groups: a.groups.clone(),
            control: control.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        (task, ctx)
    }
}

impl Executor for PluginExecutor {
    /// Runs the task through the plugin; stops its processes and
    /// interrupts the call on a timeout or Ctrl-C.
    async fn run(&self, a: &Attempt) -> Ran {
        a.events.emit(Event::Started { task: &a.id, key: a.key.as_deref(), executor: &self.plugin.ctx.name });
        let control = ExecControl::default();
        let (task, ctx) = self.call(a, &control);
        let output = OutputLines::new(&a.id, a.events.clone(), a.keep_log);
        let (plugin, sink) = (self.plugin.clone(), output.sink());
        let mut call = tokio::task::spawn_blocking(move || plugin.execute(&task, ctx, sink));
        let far = Duration::from_secs(u64::MAX / 4);
        let deadline = tokio::time::sleep(a.timeout.unwrap_or(far));
        tokio::pin!(deadline);
        let mut poll = tokio::time::interval(CANCEL_POLL);
        let mut timed_out = false;
        let result = loop {
            tokio::select! {
                joined = &mut call => break joined,
                () = &mut deadline, if a.timeout.is_some() && !timed_out => {
                    timed_out = true;
                    a.events.note(&a.id, "timed out; stopping it");
                    stop(&control);
                }
                _ = poll.tick(), if !control.cancel.load(Ordering::SeqCst) => {
                    if a.cancelled.load(Ordering::SeqCst) {
                        stop(&control);
                    }
                }
            }
        };
        let log = output.finish();
        if timed_out {
            return Ran {
                status: TaskStatus::TimedOut(a.timeout.unwrap_or_default()),
                log,
                exit_code: None,
                usage: None,
            };
        }
        if a.cancelled.load(Ordering::SeqCst) {
            return Ran { status: TaskStatus::Cancelled, log, exit_code: None, usage: None };
        }
        let (status, exit_code) = match result {
            Ok(Ok(outcome)) if outcome.exit_code == 0 => (TaskStatus::Succeeded, Some(0)),
            Ok(Ok(outcome)) => {
                (TaskStatus::Failed(format!("exit code {}", outcome.exit_code)), Some(outcome.exit_code))
            }
            Ok(Err(e)) => {
                a.events.note(&a.id, &e.to_string());
                (TaskStatus::Failed(e.to_string()), None)
            }
            Err(e) => (TaskStatus::Failed(format!("the executor call crashed: {e}")), None),
        };
        Ran { status, log, exit_code, usage: None }
    }

    /// The plugin's bytes and its config, so a new plugin or setting is a
    /// miss.
    fn identity(&self) -> String {
        identity(&self.plugin.hash, &self.plugin.ctx.config_json)
    }
}

/// Interrupts the call and stops every group the plugin started.
fn stop(control: &ExecControl) {
    control.cancel.store(true, Ordering::SeqCst);
    for &pgid in control.pgids.lock().expect("pgids lock poisoned").iter() {
        tokio::spawn(stop_group(pgid, grace_period()));
    }
}

/// The task's output as the plugin writes it, cut into lines (a long one
/// in pieces of at most `MAX_LINE`) for the events and kept, bounded, for
/// the cache and the report's log tail.
#[derive(Debug)]
pub(crate) struct OutputLines {
    id: String,
    events: Bus,
    keep: bool,
    state: Mutex<(Vec<u8>, BoundedLog)>,
}

impl OutputLines {
    pub(crate) fn new(id: &str, events: Bus, keep: bool) -> Arc<OutputLines> {
        Arc::new(OutputLines { id: id.to_string(), events, keep, state: Mutex::new(Default::default()) })
    }

    /// The sink handed to the plugin.
    pub(crate) fn sink(self: &Arc<Self>) -> SinkFn {
        let me = self.clone();
        Box::new(move |_kind, data| me.write(data))
    }

    fn write(&self, mut data: &[u8]) {
        let mut state = self.state.lock().expect("output lock poisoned");
        let (partial, log) = &mut *state;
        while !data.is_empty() {
            let room = MAX_LINE - partial.len();
            let (n, done) = take_piece(data, room);
            partial.extend_from_slice(&data[..n]);
            data = &data[n..];
            if done {
                self.emit(partial, log);
            }
        }
    }

    fn emit(&self, partial: &mut Vec<u8>, log: &mut BoundedLog) {
        self.events.output(&self.id, partial);
        if self.keep {
            log.push(partial);
        }
        partial.clear();
    }

    /// Emits an unfinished last line and returns the log kept.
    pub(crate) fn finish(&self) -> Vec<u8> {
        let mut state = self.state.lock().expect("output lock poisoned");
        let (partial, log) = &mut *state;
        if !partial.is_empty() {
            self.emit(partial, log);
        }
        std::mem::take(log).finish()
    }
}
