//! The serde mirror of `vx.toml`: field names and types exactly as written,
//! no defaults applied and no logic. Every table denies unknown keys, so a
//! typo is an error with a span rather than a silently ignored setting.
//! Values whose later validation must point at the file keep their spans.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// One `vx.toml`, root or project.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawFile {
    pub workspace: Option<RawWorkspace>,
    pub cache: Option<RawCache>,
    pub plugins: Option<BTreeMap<String, RawPlugin>>,
    pub remote: Option<RawRemote>,
    pub project: Option<RawProject>,
    pub tasks: Option<BTreeMap<Spanned<String>, RawTask>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawWorkspace {
    pub projects: Option<Vec<Spanned<String>>>,
    pub global_inputs: Option<Vec<Spanned<String>>>,
    pub env_mode: Option<Spanned<String>>,
    pub global_env: Option<Vec<Spanned<String>>>,
    pub global_pass_env: Option<Vec<Spanned<String>>>,
    pub global_runtime: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCache {
    pub dir: Option<Spanned<String>>,
    pub max_size: Option<Spanned<String>>,
    pub max_age: Option<Spanned<String>>,
    pub remote: Option<Spanned<String>>,
    pub monitor: Option<Spanned<String>>,
}

/// `[remote]`: a REAPI v2 server (docs/remote.md).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawRemote {
    pub endpoint: Spanned<String>,
    pub instance_name: Option<String>,
    pub token_env: Option<Spanned<String>>,
    pub tls_ca: Option<Spanned<String>>,
    pub headers: Option<BTreeMap<String, String>>,
    pub timeout: Option<Spanned<String>>,
    pub platform: Option<BTreeMap<String, String>>,
}

/// `[plugins.NAME]`: read and kept for the plugin host; the grants are
/// interpreted there (docs/PLUGINS.md §4).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPlugin {
    pub path: Spanned<String>,
    pub dirs: Option<Vec<toml::Value>>,
    pub env: Option<Vec<String>>,
    pub allow_hosts: Option<Vec<String>>,
    pub allow_programs: Option<Vec<toml::Value>>,
    pub allow_clocks: Option<bool>,
    pub limits: Option<toml::Table>,
    pub config: Option<toml::Table>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawProject {
    pub name: Option<Spanned<String>>,
    pub depends_on: Option<Vec<Spanned<String>>>,
    pub tags: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTask {
    /// A string run by `sh -c` or an array exec'd directly; kept as a value
    /// so a wrong type gets a message naming both accepted forms.
    pub command: Option<Spanned<toml::Value>>,
    pub depends_on: Option<Vec<Spanned<String>>>,
    pub inputs: Option<Vec<Spanned<String>>>,
    pub outputs: Option<Vec<Spanned<String>>>,
    pub env: Option<Vec<Spanned<String>>>,
    pub pass_env: Option<Vec<Spanned<String>>>,
    pub runtime: Option<Vec<Spanned<String>>>,
    pub timeout: Option<Spanned<String>>,
    pub cache: Option<bool>,
    pub persistent: Option<bool>,
    /// Give the task a terminal (a pty) the TUI types into.
    pub interactive: Option<bool>,
    pub ready: Option<Spanned<RawReady>>,
    pub ready_timeout: Option<Spanned<String>>,
    pub executor: Option<Spanned<String>>,
    pub retries: Option<Spanned<i64>>,
    /// `true` or a table (`config::sandbox`).
    pub sandbox: Option<Spanned<toml::Value>>,
    /// `{ memory = "2GiB", cpus = 2 }` (`config::schedule`).
    pub resources: Option<Spanned<RawResources>>,
    pub mutex: Option<Spanned<String>>,
    pub priority: Option<Spanned<String>>,
    /// One line saying what the task is for (`vx show`, `--dry`).
    pub description: Option<String>,
}

/// `resources = { memory = "2GiB", cpus = 2 }`: a task's share of the
/// run's budgets. `cpus` is kept as a value so a fraction (`0.5`) and a
/// whole number both parse, and a string gets a message of its own.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawResources {
    pub memory: Option<Spanned<String>>,
    pub cpus: Option<Spanned<toml::Value>>,
}

/// `ready = { log = "…" }`, `{ port = N }` or `{ path = "FILE" }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawReady {
    pub log: Option<String>,
    pub port: Option<u16>,
    pub path: Option<String>,
}
