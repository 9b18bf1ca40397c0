//! The resolved workspace: validated, with defaults applied, every
//! reference checked. This is what the rest of vx consumes; nothing outside
//! `config/` sees raw TOML.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use super::env::EnvMode;

/// A whole workspace, loaded once per invocation.
#[derive(Debug)]
pub struct Workspace {
    /// Absolute, canonical root directory.
    pub root: PathBuf,
    /// Projects sorted by name; indices into this vector are project ids.
    pub projects: Vec<Project>,
    pub global_inputs: Vec<String>,
    /// `[workspace] env-mode`, or `--env-mode` once the CLI applied it.
    pub env_mode: EnvMode,
    /// `[workspace] global-env`: hashed and passed for every task.
    pub global_env: Vec<String>,
    /// `[workspace] global-pass-env`: passed to every task, not hashed.
    pub global_pass_env: Vec<String>,
    /// `[workspace] global-runtime`: commands whose output is in every key.
    pub global_runtime: Vec<String>,
    pub cache: CacheSettings,
    pub plugins: BTreeMap<String, PluginSettings>,
    /// `[remote]`: the REAPI server for the remote cache and `executor = "remote"`.
    pub remote: Option<RemoteSettings>,
    /// `[history]`: how much run history `.vx/history.db` keeps.
    pub history: super::history::HistorySettings,
    /// Every config file that was read, for `vx watch` to re-read on change.
    pub config_files: Vec<PathBuf>,
    /// Which files configure it (`vx.toml`, or a turbo file read natively).
    pub source: super::native::ConfigSource,
    /// Tasks the configuration's tool refuses when a run includes them.
    pub broken: Vec<super::native::Broken>,
    /// The root `package.json`'s `packageManager` (`pnpm@9.15.0`).
    pub package_manager: Option<String>,
    by_name: HashMap<String, usize>,
}

impl Workspace {
    pub(crate) fn new(
        root: PathBuf,
        projects: Vec<Project>,
        settings: RootSettings,
        config_files: Vec<PathBuf>,
    ) -> Self {
        debug_assert!(projects.windows(2).all(|w| w[0].name < w[1].name), "projects come sorted by name");
        let by_name = projects.iter().enumerate().map(|(i, p)| (p.name.clone(), i)).collect();
        let RootSettings { global_inputs, cache, plugins, remote, env, history } = settings;
        let EnvSettings { mode: env_mode, global_env, global_pass_env, global_runtime } = env;
        Workspace {
            root,
            projects,
            global_inputs,
            env_mode,
            global_env,
            global_pass_env,
            global_runtime,
            cache,
            plugins,
            remote,
            history,
            config_files,
            source: super::native::ConfigSource::default(),
            broken: Vec::new(),
            package_manager: None,
            by_name,
        }
    }

    /// `--env-mode`, over `[workspace] env-mode`.
    pub fn override_env_mode(&mut self, mode: Option<EnvMode>) {
        if let Some(mode) = mode {
            self.env_mode = mode;
        }
    }

    /// The runtime commands in `task`'s key: the workspace's, then its own,
    /// each once.
    pub fn runtime_of<'a>(&'a self, task: &'a Task) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for c in self.global_runtime.iter().chain(&task.runtime) {
            if !out.contains(&c.as_str()) {
                out.push(c);
            }
        }
        out
    }

    /// The project named `name`; `//` is also the root project, whatever
    /// its name, as Turborepo spells it (`//#lint`, `--filter //`).
    pub fn project_index(&self, name: &str) -> Option<usize> {
        match self.by_name.get(name) {
            Some(&i) => Some(i),
            None if name == ROOT_ALIAS => self.projects.iter().position(|p| p.dir == self.root),
            None => None,
        }
    }

    pub fn project(&self, name: &str) -> Option<&Project> {
        self.project_index(name).map(|i| &self.projects[i])
    }

    /// The project whose directory contains `path` (the deepest one).
    pub fn project_containing(&self, path: &std::path::Path) -> Option<usize> {
        self.projects
            .iter()
            .enumerate()
            .filter(|(_, p)| path.starts_with(&p.dir))
            .max_by_key(|(_, p)| p.dir.components().count())
            .map(|(i, _)| i)
    }
}

/// Turborepo's name for the root package: `//#lint`, `--filter //`.
pub(crate) const ROOT_ALIAS: &str = "//";

#[derive(Debug)]
pub struct Project {
    pub name: String,
    /// Absolute directory.
    pub dir: PathBuf,
    /// Directory relative to the root, with `/` separators; `.` for the root.
    pub rel_dir: String,
    /// Indices of the projects this one depends on, sorted, no duplicates.
    pub deps: Vec<usize>,
    pub tags: Vec<String>,
    pub tasks: BTreeMap<String, Task>,
    /// The normalised digest of the project's `package.json`, when it has
    /// one: part of every one of its tasks' keys.
    pub package_json: Option<blake3::Hash>,
    /// Its `package.json`'s `name` and `version`, for the variables a
    /// package manager gives scripts (`npm_package_name`, …).
    pub package: Option<(Option<String>, Option<String>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Run by `sh -c`.
    Shell(String),
    /// Exec'd directly, program looked up on the task's `PATH`.
    Argv(Vec<String>),
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Command::Shell(s) => f.write_str(s),
            Command::Argv(argv) => f.write_str(&argv.join(" ")),
        }
    }
}

/// One entry of a task's `depends-on`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskRef {
    /// `build`: that task of the same project.
    Local(String),
    /// `^build`: that task in every project this one depends on.
    Upstream(String),
    /// `web#build`: one task of one project.
    Exact { project: String, task: String },
}

impl std::fmt::Display for TaskRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskRef::Local(t) => f.write_str(t),
            TaskRef::Upstream(t) => write!(f, "^{t}"),
            TaskRef::Exact { project, task } => write!(f, "{project}#{task}"),
        }
    }
}

/// When a persistent task counts as ready for its dependents.
#[derive(Debug, Clone)]
pub enum Ready {
    Log(regex::Regex),
    Port(u16),
    Path(String),
}

/// Where a task came from, which decides its defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOrigin {
    /// A `package.json` script with no `vx.toml` task of the same name.
    Script,
    /// A `[tasks.NAME]` table (possibly configuring a script of that name).
    Config,
    /// A `[tasks.NAME]` table with `depends-on` and neither a `command` nor
    /// a script of that name: it runs nothing, succeeds when its
    /// dependencies do and is never cached.
    Group,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub command: Command,
    pub depends_on: Vec<TaskRef>,
    /// Declared input globs, project-relative; `None` means every
    /// non-ignored file of the project.
    pub inputs: Option<Vec<String>>,
    pub outputs: Vec<String>,
    /// Where each of `outputs` is written (`file:line:col`), for the
    /// ownership check's errors; empty for tasks not read from a file.
    pub outputs_at: Vec<String>,
    /// Variables passed to the task and hashed: names, `*` wildcards, `!` exclusions.
    pub env: Vec<String>,
    /// Variables passed to the task but not hashed (same forms as `env`).
    pub pass_env: Vec<String>,
    /// `runtime`: commands whose output (`node --version`) is part of the key.
    pub runtime: Vec<String>,
    pub timeout: Option<Duration>,
    pub cache: bool,
    pub persistent: bool,
    /// `interactive`: the task runs on a pseudo-terminal of its own, and
    /// `--ui=tui` lets the user type into it (never cached).
    pub interactive: bool,
    pub ready: Option<Ready>,
    pub ready_timeout: Option<Duration>,
    /// `local`, `remote` or an executor plugin of the workspace.
    pub executor: super::ExecutorName,
    pub origin: TaskOrigin,
    /// Attempts after a failed one (`retries`; `--retries` overrides it).
    pub retries: u32,
    /// Run confined to its declarations (`sandbox`, docs/sandbox.md).
    pub sandbox: Option<Sandbox>,
    /// Its share of the run's cpu and memory budgets (`resources`).
    pub resources: Resources,
    /// `mutex`: no two tasks holding this name run at once, in this vx or
    /// any other on the machine.
    pub mutex: Option<String>,
    /// `priority`: breaks ties among ready tasks.
    pub priority: Priority,
    /// `description`: what the task is for, shown by `vx show` and `--dry`.
    pub description: Option<String>,
}

/// A task's share of `--concurrency` (in thousandths of a cpu, so `0.5`
/// is exact) and of `--memory` (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    pub millicpus: u64,
    pub memory: u64,
}

impl Default for Resources {
    /// One cpu and no memory: a task that declares nothing counts as one
    /// task against `--concurrency`, as before resources existed.
    fn default() -> Self {
        Resources { millicpus: 1000, memory: 0 }
    }
}

/// `priority`: which of two ready tasks starts first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Low,
    #[default]
    Normal,
    High,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
        }
    }
}

/// `sandbox = true` or its table: what a sandboxed task may touch beyond
/// its declarations. Paths as written: `/x` the workspace root's `x` (or,
/// when the workspace has none, the machine's `/x`), `~/x` the home
/// directory's, anything else the project's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sandbox {
    pub allow_read: Vec<String>,
    pub allow_write: Vec<String>,
    /// What network the task has (`network`).
    pub network: Network,
}

/// `sandbox.network`: none (`false`, the default), a loopback of the
/// task's own (`"loopback"`: servers it starts itself, not the host's),
/// or the host's (`true`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Network {
    #[default]
    None,
    Loopback,
    Host,
}

impl Task {
    /// A task that only runs `command`: no inputs declared (every file),
    /// no outputs, env lists, timeout, retries or readiness, uncached, on
    /// the local executor. The defaults a script and a group start from.
    pub fn plain(name: &str, command: Command, origin: TaskOrigin) -> Task {
        Task {
            name: name.to_string(),
            command,
            depends_on: Vec::new(),
            inputs: None,
            outputs: Vec::new(),
            outputs_at: Vec::new(),
            env: Vec::new(),
            pass_env: Vec::new(),
            runtime: Vec::new(),
            timeout: None,
            cache: false,
            persistent: false,
            interactive: false,
            ready: None,
            ready_timeout: None,
            executor: super::ExecutorName::Local,
            origin,
            retries: 0,
            sandbox: None,
            resources: Resources::default(),
            mutex: None,
            priority: Priority::Normal,
            description: None,
        }
    }

    /// A group task: nothing to run, only dependencies to wait for.
    pub fn is_group(&self) -> bool {
        self.origin == TaskOrigin::Group
    }
}

/// What only the root `vx.toml` may set.
#[derive(Debug, Default)]
pub(crate) struct RootSettings {
    pub global_inputs: Vec<String>,
    pub cache: CacheSettings,
    pub plugins: BTreeMap<String, PluginSettings>,
    pub remote: Option<RemoteSettings>,
    pub env: EnvSettings,
    pub history: super::history::HistorySettings,
}

/// `[workspace] env-mode`, `global-env`, `global-pass-env`, `global-runtime`.
#[derive(Debug, Default)]
pub(crate) struct EnvSettings {
    pub mode: EnvMode,
    pub global_env: Vec<String>,
    pub global_pass_env: Vec<String>,
    pub global_runtime: Vec<String>,
}

/// The name `[cache] remote` gives the REAPI tier (the `[remote]` server)
/// instead of a cache-backend plugin.
pub(crate) const REAPI_REMOTE: &str = "reapi";

/// The HTTP/2 address of a gRPC endpoint and whether it uses TLS:
/// `grpc://` and `http://` plain, `grpcs://` and `https://` TLS, with a host.
pub(crate) fn grpc_address(endpoint: &str) -> Option<(String, bool)> {
    let (scheme, rest) = endpoint.split_once("://").filter(|(_, host)| !host.is_empty())?;
    match scheme {
        "grpc" | "http" => Some((format!("http://{rest}"), false)),
        "grpcs" | "https" => Some((format!("https://{rest}"), true)),
        _ => None,
    }
}

/// `[remote]`: a REAPI v2 server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSettings {
    /// `grpc://host:port` (plain) or `grpcs://host:port` (TLS).
    pub endpoint: String,
    pub instance_name: String,
    /// The variable holding a bearer token, sent as `authorization`.
    pub token_env: Option<String>,
    /// A PEM file of CA certificates trusted for `grpcs://`, beside the
    /// system's roots (a private CA or a self-signed server).
    pub tls_ca: Option<PathBuf>,
    pub headers: BTreeMap<String, String>,
    /// Deadline of one call to the server.
    pub timeout: Duration,
    /// Platform properties of remotely executed actions.
    pub platform: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default)]
pub struct CacheSettings {
    /// Absolute cache directory.
    pub dir: PathBuf,
    pub max_size: u64,
    pub max_age: Duration,
    pub remote: Option<String>,
    /// `monitor`: whether a file-system monitor may spare walks of unchanged trees.
    pub monitor: super::MonitorMode,
}

#[derive(Debug, Clone)]
pub struct PluginSettings {
    pub path: PathBuf,
    /// Grants, interpreted by the plugin host (docs/PLUGINS.md §4).
    pub dirs: Vec<toml::Value>,
    pub env: Vec<String>,
    pub allow_hosts: Vec<String>,
    pub allow_programs: Vec<toml::Value>,
    /// The host's real clocks (`allow-clocks = true`); without it a plugin
    /// reads clocks that tell it nothing (docs/plugins.md, "Clocks").
    pub allow_clocks: bool,
    pub limits: toml::Table,
    pub config: toml::Table,
}
