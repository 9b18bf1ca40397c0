//! [`Executors`]: a session's executors, each prepared for a task from its
//! `executor` (or `--executor`), and each one's part of a key found
//! without preparing a run; and the checks of `--executor` itself.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[cfg(test)]
use super::scripted;
use super::seam::{Chosen, Executor, Refused};
use super::{REMOTE_EXECUTOR, local, plugin, remote};
use crate::cache::Cache;
use crate::config::env::{self, EnvList, listed_extra, listed_vars};
use crate::config::{EnvMode, ExecutorName, PluginSettings, Project, Task, Workspace};
use crate::plugin::LoadedPlugin;

/// Refuses a run's `--executor` that names nothing this workspace can run
/// on, before anything runs: a usage error (exit 2), not a failure of
/// every task.
pub(crate) fn check_run_executor(ws: &Workspace, name: Option<&str>) -> crate::Result<()> {
    let Some(name) = name else { return Ok(()) };
    match ExecutorName::checked(name, &ws.plugins) {
        Ok(_) => Ok(()),
        Err(unknown) => Err(crate::Error::usage(format!(
            "--executor `{}` is not an executor of this workspace{}",
            crate::error::one_line(name),
            unknown.suggestion
        ))
        .with_hint("give `local`, `remote` or an executor plugin's name (`vx plugin add PATH --name NAME`); see `vx run --help`")),
    }
}

/// The executor a task runs on: the run's `--executor` for every task that
/// is not persistent (servers stay local) or a group (which runs nothing),
/// else the task's own.
pub(crate) fn effective_executor(task: &Task, run_executor: Option<&str>) -> ExecutorName {
    match run_executor {
        Some(_) if task.is_group() => ExecutorName::Local,
        Some(name) if !task.persistent => ExecutorName::new(name),
        _ => task.executor.clone(),
    }
}

/// The executors of a session: plugins loaded on first use, and the
/// connection for remote execution, made on first use.
#[derive(Debug)]
pub(crate) struct Executors {
    root: PathBuf,
    settings: BTreeMap<String, PluginSettings>,
    loaded: Mutex<HashMap<String, Result<Arc<LoadedPlugin>, String>>>,
    /// Identities of executors computed without preparing a run.
    identities: Mutex<HashMap<String, Result<String, String>>>,
    remote: remote::RemoteConnection,
    env_mode: EnvMode,
    global_env: Vec<String>,
    global_pass_env: Vec<String>,
    /// vx's environment, read once per session (it does not change).
    vars: Vec<(OsString, OsString)>,
    /// The part of it strict mode passes to every task, shared by all.
    allowed: Arc<Vec<(OsString, OsString)>>,
    /// Tests only: every task runs on the scripted executor.
    #[cfg(test)]
    pub script: Option<Arc<scripted::Script>>,
}

impl Executors {
    pub(crate) fn new(ws: &Workspace) -> Executors {
        let vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let allowed = vars.iter().filter(|(k, _)| k.to_str().is_some_and(env::allowlisted)).cloned().collect();
        Executors {
            root: ws.root.clone(),
            settings: ws.plugins.clone(),
            loaded: Mutex::new(HashMap::new()),
            identities: Mutex::new(HashMap::new()),
            remote: remote::RemoteConnection::new(ws),
            env_mode: ws.env_mode,
            global_env: ws.global_env.clone(),
            global_pass_env: ws.global_pass_env.clone(),
            vars,
            allowed: Arc::new(allowed),
            #[cfg(test)]
            script: None,
        }
    }

    /// The part of a task's key that executor `name` adds, the same string
    /// its prepared executor's [`Executor::identity`] gives, found without
    /// loading a plugin or connecting: keys computed up front (`--dry`,
    /// `vx why`, a server's restart check) equal the run's.
    pub(crate) fn identity(&self, name: &ExecutorName) -> Result<String, Refused> {
        let mut known = self.identities.lock().expect("identities lock poisoned");
        let found = match name {
            ExecutorName::Local => return Ok(local::Local { env: None }.identity()),
            ExecutorName::Remote => known.entry(REMOTE_EXECUTOR.to_string()).or_insert_with(|| self.remote.identity()),
            ExecutorName::Plugin(plugin) => {
                known.entry(plugin.clone()).or_insert_with(|| plugin::identity_unloaded(&self.settings, plugin))
            }
        };
        found.clone().map_err(Refused)
    }

    /// The variables `task` is given and those its key hashes.
    fn env_lists<'a>(&'a self, task: &'a Task) -> (EnvList<'a>, EnvList<'a>) {
        (EnvList::new(&self.global_env, &task.env), EnvList::new(&self.global_pass_env, &task.pass_env))
    }

    /// Where `task` runs: `executor` is its own or the run's `--executor`.
    /// An error says why the task cannot run. `dep_outputs` lists what its
    /// dependencies produce (only remote execution needs it).
    pub(crate) fn prepare(
        &self,
        project: &Project,
        task: &Task,
        executor: &ExecutorName,
        cache: Option<&Arc<Cache>>,
        dep_outputs: impl FnOnce() -> Vec<(PathBuf, Vec<String>)>,
    ) -> Result<Chosen, Refused> {
        #[cfg(test)]
        if let Some(script) = &self.script {
            return Ok(Chosen::Scripted(scripted::Scripted { script: script.clone(), dir: project.dir.clone() }));
        }
        let (hashed, passed) = self.env_lists(task);
        let plugin = match executor {
            ExecutorName::Local => {
                let env = (self.env_mode == EnvMode::Strict).then(|| local::StrictEnv {
                    allowed: self.allowed.clone(),
                    listed: listed_extra(hashed, passed, self.vars.iter()),
                });
                return Ok(Chosen::Local(local::Local { env }));
            }
            ExecutorName::Remote => {
                let env = listed_vars(hashed, EnvList::new(&[], &[]), self.vars.iter());
                return self
                    .remote
                    .prepare(project, task, cache, &self.root, dep_outputs(), env)
                    .map(|job| Chosen::Remote(Box::new(job)))
                    .map_err(Refused);
            }
            ExecutorName::Plugin(plugin) => plugin,
        };
        if task.persistent {
            return Err(Refused(format!(
                "a persistent task cannot run through executor `{executor}`; vx keeps servers local"
            )));
        }
        let plugin = plugin::load(&self.loaded, &self.root, &self.settings, plugin).map_err(Refused)?;
        let env = listed_vars(hashed, passed, self.vars.iter());
        Ok(Chosen::Plugin(plugin::PluginExecutor::new(plugin, &self.root, project, env)))
    }
}
