//! Command plugins (world `command`, exporting `vx:plugin/verb`): a verb
//! of their own, `vx NAME ARGS`.
//! vx asks one for its `usage` when it is added (the pin keeps the
//! one-line `about` for `vx --help`), and runs it with the arguments, its
//! grants and the workspace model, which the `workspace` import serves
//! read only: the projects and tasks `vx show --format json` prints and
//! the history summary `vx history` reads.
//!
//! A command is one call in a fresh store: its stdout and stderr are vx's
//! (a verb prints for the user, unprefixed), stdin stays closed, and its
//! limits are the plugin's (`call-timeout` and `cpu` bound the whole verb).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use super::bindings::WitError;
use super::bindings::command::vx::plugin::workspace as wit;
use super::error::PluginError;
use super::load::LoadedPlugin;
use super::state::State;
use super::text::{MAX_MESSAGE, one_line};
use crate::cache::state_dir;
use crate::config::Workspace;
use crate::graph::reverse_deps;
use crate::history::{History, HistoryError};

/// The names a command plugin cannot take: vx's own commands and their
/// aliases, `help`, and the Turborepo and Nx verbs vx translates. A unit
/// test in `cli` checks this list against the command line's.
pub(crate) const RESERVED_VERBS: &[&str] = &[
    "run",
    "watch",
    "show",
    "query",
    "last",
    "lock",
    "history",
    "dashboard",
    "mcp",
    "why",
    "cache",
    "info",
    "init",
    "upgrade",
    "completions",
    "plugin",
    "worker",
    "prune",
    "help",
    "__guard",
    "turbo",
    "nx",
    "run-many",
    "affected",
];

/// Whether `name` is one of vx's own verbs.
pub(crate) fn is_reserved(name: &str) -> bool {
    RESERVED_VERBS.contains(&name)
}

/// What a command plugin says about itself for `vx --help`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Usage {
    /// One printable line.
    pub about: String,
    pub help: String,
}

/// The workspace as a command plugin sees it: built once per invocation.
#[derive(Debug)]
pub struct WorkspaceModel {
    projects: Vec<wit::Project>,
    history_path: PathBuf,
    /// Opened on the first history call and kept for the rest of the
    /// command: a plugin asking for every task's figures opens it once.
    history: Mutex<Option<History>>,
}

impl WorkspaceModel {
    pub fn new(ws: &Workspace) -> WorkspaceModel {
        let reverse = reverse_deps(ws);
        let names = |ids: &[usize]| ids.iter().map(|&i| ws.projects[i].name.clone()).collect::<Vec<_>>();
        let projects = ws
            .projects
            .iter()
            .zip(&reverse)
            .map(|(p, dependents)| wit::Project {
                name: p.name.clone(),
                dir: if p.rel_dir.is_empty() { ".".to_string() } else { p.rel_dir.clone() },
                dependencies: names(&p.deps),
                dependents: names(dependents),
                tags: p.tags.clone(),
                tasks: p
                    .tasks
                    .values()
                    .map(|t| wit::Task {
                        name: t.name.clone(),
                        command: (!t.is_group()).then(|| t.command.to_string()),
                        depends_on: t.depends_on.iter().map(ToString::to_string).collect(),
                        inputs: t.inputs.clone(),
                        outputs: t.outputs.clone(),
                        cache: t.cache,
                        persistent: t.persistent,
                        executor: t.executor.to_string(),
                    })
                    .collect(),
            })
            .collect();
        WorkspaceModel { projects, history_path: state_dir(ws).join("history.db"), history: Mutex::new(None) }
    }

    /// `read` over history, or `empty` when nothing was ever recorded
    /// (opening would create the database, and a read-only view creates
    /// nothing).
    fn with_history<R>(&self, empty: R, read: impl FnOnce(&History) -> Result<R, WitError>) -> Result<R, WitError> {
        let mut slot = self.history.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            if !self.history_path.is_file() {
                return Ok(empty);
            }
            *slot = Some(History::open(&self.history_path).map_err(unreadable)?);
        }
        match slot.as_ref() {
            Some(history) => read(history),
            None => Ok(empty),
        }
    }
}

fn unreadable(e: HistoryError) -> WitError {
    WitError::Unavailable(format!("could not read .vx/history.db: {e}"))
}

impl wit::Host for State {
    fn projects(&mut self) -> Vec<wit::Project> {
        self.workspace.as_ref().map(|w| w.projects.clone()).unwrap_or_default()
    }

    fn recent_invocations(&mut self, limit: u32) -> Result<Vec<wit::Invocation>, WitError> {
        let Some(model) = self.workspace.as_ref() else { return Ok(Vec::new()) };
        model.with_history(Vec::new(), |history| {
            let recent = history.recent(limit as usize).map_err(unreadable)?;
            Ok(recent
                .iter()
                .map(|i| wit::Invocation {
                    command: i.command.clone(),
                    started_unix_ms: i.started_ms,
                    duration_ms: i.duration_ms(),
                    exit_code: i.exit_code,
                    tasks: u32::try_from(i.tasks).unwrap_or(u32::MAX),
                    cached: u32::try_from(i.cached).unwrap_or(u32::MAX),
                })
                .collect())
        })
    }

    fn task_history(&mut self, task: String) -> Result<wit::TaskStats, WitError> {
        let none = wit::TaskStats { p50_ms: None, executions: 0, flaky: 0 };
        let Some(model) = self.workspace.as_ref() else { return Ok(none) };
        model.with_history(none, |history| {
            let flakiness = history.flakiness(&task);
            Ok(wit::TaskStats {
                p50_ms: history.p50(&task).map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                executions: flakiness.executions,
                flaky: flakiness.flaky,
            })
        })
    }
}

impl LoadedPlugin {
    /// The command's `usage`, its `about` made one printable line.
    pub fn command_usage(&self) -> Result<Usage, PluginError> {
        let usage = self.pooled_call("usage", |bound, store| bound.command()?.vx_plugin_verb().call_usage(store))?;
        Ok(Usage { about: one_line(&usage.about, 200), help: usage.help })
    }

    /// Runs the command with `args` over `model`; its exit code, or the
    /// error it returned or stopped with.
    pub fn run_command(&self, model: Arc<WorkspaceModel>, args: &[String]) -> Result<u8, PluginError> {
        let returned = self.call("run", |exports, store| {
            store.data_mut().workspace = Some(model);
            let bound = exports.instantiate(store)?;
            bound.command()?.vx_plugin_verb().call_run(store, args)
        })?;
        returned.map_err(|e| PluginError::returned(self.name(), "run", e))
    }
}

/// The help text of a command plugin, cut to what a terminal can show.
pub(crate) fn help_text(usage: &Usage) -> String {
    let help = if usage.help.trim().is_empty() { &usage.about } else { &usage.help };
    help.lines().map(|l| one_line(l, MAX_MESSAGE)).collect::<Vec<_>>().join("\n")
}
