//! Configuration: finding the workspace, parsing `vx.toml`, `package.json`
//! and `pnpm-workspace.yaml` strictly, and resolving them into a
//! [`Workspace`] whose every reference has been checked.
//!
//! Parsing (`raw`) holds no logic; resolution (`resolve`, with `settings`
//! for the root-only tables and `task` for each project's tasks) holds no
//! I/O beyond reading the files; errors (`diag`, [`ConfigError`]) always
//! point at file, line and column.
//! `edit` changes the root `vx.toml` in place for `vx plugin add|remove`;
//! `env` says which variables a task sees and which are hashed.
//! `ownership` refuses outputs that could remove what their task does not
//! own (configuration files, other projects, another unordered task's
//! outputs), deciding glob overlaps exactly with `overlap`. `native`
//! reads a Turborepo configuration (no root `vx.toml`) as configuration,
//! through `vx init`'s translation. `boundaries` holds the
//! `[[workspace.boundaries]]` rules on which projects may depend on which,
//! by their tags. `view` is the JSON of projects and tasks that `vx show`
//! and `vx mcp` share.

mod boundaries;
mod diag;
mod discover;
pub(crate) mod duration;
pub(crate) mod edit;
pub(crate) mod env;
mod error;
mod executor;
mod history;
mod model;
mod monitor;
mod native;
mod npm;
mod overlap;
mod ownership;
mod raw;
mod resolve;
mod sandbox;
mod schedule;
mod schema;
mod settings;
mod task;
pub(crate) mod translate;
pub(crate) mod view;

pub(crate) use boundaries::VIOLATION_HINT as BOUNDARY_HINT;
pub(crate) use diag::nearest;
pub use discover::expand_project_globs;
pub(crate) use discover::find_root;
pub(crate) use env::EnvMode;
pub use error::ConfigError;
pub(crate) use executor::{ExecutorName, LOCAL, REMOTE};
pub(crate) use history::HistoryKeep;
// Named by other rooms' tests only (a task as a test builds it).
#[cfg(test)]
pub(crate) use model::TaskOrigin;
pub(crate) use model::{
    Command, Network, PluginSettings, Priority, Project, REAPI_REMOTE, ROOT_ALIAS, Ready, RemoteSettings, Resources,
    Sandbox, Task, TaskRef, Workspace, grpc_address,
};
pub(crate) use monitor::MonitorMode;
pub use npm::read_package_json;
pub use npm::read_pnpm_workspace;
pub use resolve::load_workspace;
pub(crate) use resolve::{find_workspace_root, load_workspace_for_plugin_edits, load_workspace_with_violations};
pub(crate) use schema::schema_url;
