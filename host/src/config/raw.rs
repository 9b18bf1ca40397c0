//! The serde mirror of `vx.toml`: field names and types exactly as written,
//! no defaults applied and no logic. Every table denies unknown keys, so a
//! typo is an error with a span rather than a silently ignored setting.
//! Values whose later validation must point at the file keep their spans.
//!
//! The same types generate the JSON Schema of `vx.toml` (`config::schema`):
//! the doc comments on fields are its descriptions, and a
//! `#[schemars(...)]` attribute says what a later check accepts where the
//! type alone is looser (a duration kept as a string, a `toml::Value`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use super::schema;

/// One `vx.toml`, root or project.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawFile {
    /// The workspace: its projects and what every task shares. Only in the root `vx.toml`.
    pub workspace: Option<RawWorkspace>,
    /// The local cache: where it lives, how much it keeps, the remote tier. Only in the root `vx.toml`.
    pub cache: Option<RawCache>,
    /// WebAssembly plugins by name, as `vx plugin add` writes them. Only in the root `vx.toml`.
    pub plugins: Option<BTreeMap<String, RawPlugin>>,
    /// A REAPI v2 server: remote cache and `executor = "remote"`. Only in the root `vx.toml`.
    pub remote: Option<RawRemote>,
    /// How much run history `.vx/history.db` keeps. Only in the root `vx.toml`.
    pub history: Option<RawHistory>,
    /// This directory as a project: its name, dependencies and tags.
    pub project: Option<RawProject>,
    /// The project's tasks, by name (`[tasks.build]`).
    #[schemars(default, schema_with = "schema::tasks")]
    pub tasks: Option<BTreeMap<Spanned<String>, RawTask>>,
}

/// `[workspace]`: the projects and the settings every task shares.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawWorkspace {
    /// Globs of project directories (`packages/*`); `!` excludes. Absent or empty: the `package.json` or `pnpm-workspace.yaml` workspaces.
    #[schemars(with = "Option<Vec<String>>")]
    pub projects: Option<Vec<Spanned<String>>>,
    /// Files, relative to the root, that are part of every task's key.
    #[schemars(with = "Option<Vec<String>>")]
    pub global_inputs: Option<Vec<Spanned<String>>>,
    /// What a task's process sees: `strict` (the default: an allowlist and the variables named) or `loose` (vx's whole environment).
    #[schemars(default, schema_with = "schema::env_mode")]
    pub env_mode: Option<Spanned<String>>,
    /// Variables passed to and hashed for every task: names, `*` patterns, `!` exclusions.
    #[schemars(default, schema_with = "schema::env_list")]
    pub global_env: Option<Vec<Spanned<String>>>,
    /// Variables passed to every task but not hashed.
    #[schemars(default, schema_with = "schema::env_list")]
    pub global_pass_env: Option<Vec<Spanned<String>>>,
    /// Commands whose standard output is part of every task's key (`node --version`).
    #[schemars(default, schema_with = "schema::commands")]
    pub global_runtime: Option<Vec<Spanned<String>>>,
    /// Rules on which projects may depend on which, by their tags (`[[workspace.boundaries]]`), checked whenever vx loads the workspace.
    #[schemars(with = "Option<Vec<RawBoundary>>")]
    pub boundaries: Option<Vec<Spanned<RawBoundary>>>,
}

/// `[[workspace.boundaries]]`: a rule on the projects a project may depend
/// on, by their tags (docs/config.md#boundaries). A pattern is a tag glob
/// (`scope:app`, `scope:*`): a project matches it when one of its tags
/// does; `!` before it matches the projects none of whose tags do.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(extend("anyOf" = [{ "required": ["allow"] }, { "required": ["deny"] }]))]
pub(crate) struct RawBoundary {
    /// The projects the rule is about: a pattern, or an array of patterns a project must all match (`["layer:app", "stack:web"]`). Default: every project.
    // A string or an array, checked in `config::boundaries`.
    #[schemars(default, schema_with = "schema::tag_patterns_or_one")]
    pub from: Option<Spanned<toml::Value>>,
    /// They may depend only on projects that match one of these patterns (`[]`: on none).
    #[schemars(default, schema_with = "schema::tag_patterns")]
    pub allow: Option<Vec<Spanned<String>>>,
    /// They may not depend on a project that matches one of these patterns.
    #[schemars(default, schema_with = "schema::tag_patterns")]
    pub deny: Option<Vec<Spanned<String>>>,
}

/// `[cache]`: the local cache and its remote tier.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawCache {
    /// The local cache's directory, relative to the root. Default `.vx/cache`.
    #[schemars(with = "Option<String>")]
    pub dir: Option<Spanned<String>>,
    /// The most the local cache keeps, as a size (`5GiB`, the default).
    #[schemars(default, schema_with = "schema::size")]
    pub max_size: Option<Spanned<String>>,
    /// How long an unused entry is kept, as a duration (`14d`, the default).
    #[schemars(default, schema_with = "schema::duration")]
    pub max_age: Option<Spanned<String>>,
    /// The remote tier: a cache-backend plugin's name, or `reapi` for the `[remote]` server.
    #[schemars(with = "Option<String>")]
    pub remote: Option<Spanned<String>>,
    /// How unchanged trees are keyed without a stat per file: `auto` (the default), `watchman`, `git` or `off`.
    #[schemars(default, schema_with = "schema::monitor")]
    pub monitor: Option<Spanned<String>>,
}

/// `[history]`: how much run history is kept (`config::history`).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawHistory {
    /// The runs kept: the last N (`1000`), or those of a period (`"90d"`). Default the last 500.
    // Kept as a value so a wrong type gets a message naming both forms.
    #[schemars(default, schema_with = "schema::history_keep")]
    pub keep: Option<Spanned<toml::Value>>,
}

/// `[remote]`: a REAPI v2 server (docs/remote.md).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawRemote {
    /// The server's gRPC address: `grpc://HOST:PORT`, or `grpcs://HOST:PORT` for TLS (`http://` and `https://` mean the same).
    #[schemars(with = "String", regex(pattern = "^(grpcs?|https?)://."))]
    pub endpoint: Spanned<String>,
    /// The REAPI instance name. Default empty.
    pub instance_name: Option<String>,
    /// The variable holding a bearer token (its name, not the token).
    #[schemars(with = "Option<String>", regex(pattern = "^[^=]+$"))]
    pub token_env: Option<Spanned<String>>,
    /// CA certificates (PEM), relative to the root, trusted for `grpcs://`.
    #[schemars(with = "Option<String>")]
    pub tls_ca: Option<Spanned<String>>,
    /// Headers sent with every call.
    pub headers: Option<BTreeMap<String, String>>,
    /// The deadline of one request/reply call, as a duration. Default `60s`.
    #[schemars(default, schema_with = "schema::duration")]
    pub timeout: Option<Spanned<String>>,
    /// Platform properties of remotely executed actions (`{ OSFamily = "linux" }`).
    pub platform: Option<BTreeMap<String, String>>,
}

/// `[plugins.NAME]`: a plugin and what it is granted (docs/plugins.md).
// Read and kept for the plugin host; the grants are interpreted there
// (docs/PLUGINS.md §4).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawPlugin {
    /// The plugin's component (`.wasm`), relative to the root.
    #[schemars(with = "String")]
    pub path: Spanned<String>,
    /// Directories it may read: `"DIR"`, or `{ path = "DIR", rw = true }` to write too.
    #[schemars(default, schema_with = "schema::plugin_dirs")]
    pub dirs: Option<Vec<toml::Value>>,
    /// Environment variables it may read.
    pub env: Option<Vec<String>>,
    /// Hosts it may reach over HTTP (`http://127.0.0.1:4318`).
    pub allow_hosts: Option<Vec<String>>,
    /// Programs it may ask vx to run: `"PROGRAM"`, or `{ program = "PROGRAM", args = [...] }`.
    #[schemars(default, schema_with = "schema::plugin_programs")]
    pub allow_programs: Option<Vec<toml::Value>>,
    /// Whether it may read the host's clocks.
    pub allow_clocks: Option<bool>,
    /// Its limits: `memory` and `output` (sizes), `cpu` and `call-timeout` (durations).
    #[schemars(default, schema_with = "schema::plugin_limits")]
    pub limits: Option<toml::Table>,
    /// The plugin's own settings, passed to it as they are.
    #[schemars(default, schema_with = "schema::any_table")]
    pub config: Option<toml::Table>,
}

/// `[project]`: this directory as a project.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawProject {
    /// The project's name (no `#`). Default: the `package.json` name, else the directory's.
    #[schemars(with = "Option<String>", regex(pattern = "^[^#]+$"))]
    pub name: Option<Spanned<String>>,
    /// Projects this one depends on, added to the workspace dependencies in `package.json`.
    #[schemars(with = "Option<Vec<String>>")]
    pub depends_on: Option<Vec<Spanned<String>>>,
    /// Tags, selected with `--filter tag:GLOB` and named by `[[workspace.boundaries]]`; a `package.json`'s `"vx": { "tags": [...] }` adds to them.
    pub tags: Option<Vec<String>>,
}

/// `[tasks.NAME]`: a task, or a group (`depends-on` and no command).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawTask {
    /// A string runs under `sh -c`; an array is exec'd directly. Default: the `package.json` script of the same name.
    // Kept as a value so a wrong type gets a message naming both accepted forms.
    #[schemars(default, schema_with = "schema::command")]
    pub command: Option<Spanned<toml::Value>>,
    /// Tasks to run first: `task` (this project), `^task` (in every dependency project), `project#task`.
    #[schemars(with = "Option<Vec<String>>")]
    pub depends_on: Option<Vec<Spanned<String>>>,
    /// Globs of the files in the task's key, relative to the project (`/x` relative to the root); `!` excludes. Default: every file of the project git would see.
    #[schemars(with = "Option<Vec<String>>")]
    pub inputs: Option<Vec<Spanned<String>>>,
    /// Globs of what the task writes, relative to the project (`/x` relative to the root): removed before it runs, cached after.
    #[schemars(with = "Option<Vec<String>>")]
    pub outputs: Option<Vec<Spanned<String>>>,
    /// Variables passed to the task and hashed into its key: names, `*` patterns, `!` exclusions.
    #[schemars(default, schema_with = "schema::env_list")]
    pub env: Option<Vec<Spanned<String>>>,
    /// Variables passed to the task (in strict mode) but not hashed.
    #[schemars(default, schema_with = "schema::env_list")]
    pub pass_env: Option<Vec<Spanned<String>>>,
    /// Commands whose standard output is part of the key (`node --version`).
    #[schemars(default, schema_with = "schema::commands")]
    pub runtime: Option<Vec<Spanned<String>>>,
    /// How long an attempt may run, as a duration (`10m`). Default: `--timeout`, else none.
    #[schemars(default, schema_with = "schema::duration")]
    pub timeout: Option<Spanned<String>>,
    /// Whether results are cached. Default: `true` when `inputs` or `outputs` are declared.
    pub cache: Option<bool>,
    /// A server: runs until vx stops. Never cached.
    pub persistent: Option<bool>,
    /// Give the task a terminal (a pty) the TUI types into. Never cached.
    pub interactive: Option<bool>,
    /// When dependents of a persistent task may start: exactly one of `log`, `port` or `path`.
    #[schemars(with = "Option<RawReady>")]
    pub ready: Option<Spanned<RawReady>>,
    /// How long to wait for `ready`, as a duration.
    #[schemars(default, schema_with = "schema::duration")]
    pub ready_timeout: Option<Spanned<String>>,
    /// `local` (the default), `remote`, or an executor plugin's name.
    #[schemars(with = "Option<String>")]
    pub executor: Option<Spanned<String>>,
    /// Run a failed attempt again, up to this many more times. Default 0.
    #[schemars(with = "Option<u32>")]
    pub retries: Option<Spanned<i64>>,
    /// `true`: confined by the kernel to what the task declares; a table adds `allow-read`, `allow-write` and `network`.
    // `true` or a table, checked in `config::sandbox`.
    #[schemars(default, schema_with = "schema::sandbox")]
    pub sandbox: Option<Spanned<toml::Value>>,
    /// The task's share of `--concurrency` (`cpus`) and `--memory` (`memory`). Default `{ cpus = 1 }`.
    // Checked in `config::schedule`.
    #[schemars(with = "Option<RawResources>")]
    pub resources: Option<Spanned<RawResources>>,
    /// A name no two running tasks of the user's vx processes hold at once (letters, digits, `.`, `_`, `-`).
    #[schemars(default, schema_with = "schema::mutex")]
    pub mutex: Option<Spanned<String>>,
    /// Among ready tasks, a higher priority starts first: `low`, `normal` (the default) or `high`.
    #[schemars(default, schema_with = "schema::priority")]
    pub priority: Option<Spanned<String>>,
    /// One line saying what the task is for (`vx show`, `--dry`).
    pub description: Option<String>,
}

/// `resources = { memory = "2GiB", cpus = 2 }`: a task's share of the
/// run's budgets.
// `cpus` is kept as a value so a fraction (`0.5`) and a whole number both
// parse, and a string gets a message of its own.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawResources {
    /// The memory the task needs at its peak, as a size (`2GiB`).
    #[schemars(default, schema_with = "schema::size")]
    pub memory: Option<Spanned<String>>,
    /// The cpus the task keeps busy, above 0 (`2`, `0.5`). Default 1.
    #[schemars(default, schema_with = "schema::cpus")]
    pub cpus: Option<Spanned<toml::Value>>,
}

/// `ready = { log = "…" }`, `{ port = N }` or `{ path = "FILE" }`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub(crate) struct RawReady {
    /// Ready when a line of the task's output matches this regular expression.
    pub log: Option<String>,
    /// Ready when this port on 127.0.0.1 accepts a connection.
    pub port: Option<u16>,
    /// Ready when this file, relative to the project, exists.
    pub path: Option<String>,
}
