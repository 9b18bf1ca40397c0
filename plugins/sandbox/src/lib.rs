//! The `sandbox` executor: runs each task under bubblewrap (`bwrap`),
//! started through vx's `process` capability (so under vx's guard). Inside,
//! the whole filesystem is read-only except the task's project directory,
//! `/tmp` is a private scratch tmpfs, and there is no network unless
//! `allow-network = true`. `allow` adds writable paths, `deny` hides
//! directories behind an empty tmpfs.
//!
//! The workspace grants `allow-programs = ["bwrap"]` in `[plugins.NAME]`.

mod args;

use serde::Deserialize;
use vx_plugin_sdk::executor::{Command, Executor, Outcome, OutputSink, Task, forward_output, spawn};
use vx_plugin_sdk::{Describe, Error, PluginInfo, export_executor};

/// The `[plugins.NAME].config` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Config {
    /// Share the host's network (default: none at all, not even loopback).
    #[serde(default)]
    pub allow_network: bool,
    /// More writable paths: absolute, or relative to the workspace root.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Directories hidden behind an empty tmpfs: absolute, or relative to
    /// the workspace root.
    #[serde(default)]
    pub deny: Vec<String>,
    /// The bubblewrap program; `bwrap` (found on the task's PATH) by default.
    pub bwrap: Option<String>,
}

struct Sandbox;

impl Describe for Sandbox {
    fn info() -> PluginInfo {
        PluginInfo::new("sandbox", env!("CARGO_PKG_VERSION"))
            .config_schema(args::CONFIG_SCHEMA)
            .request("allow-programs=bwrap")
    }
}

impl Executor for Sandbox {
    type Config = Config;

    fn execute(config: &Config, task: Task, out: &OutputSink) -> Result<Outcome, Error> {
        let root = task
            .env
            .iter()
            .find(|(k, _)| k == "VX_WORKSPACE_ROOT")
            .map(|(_, v)| v.clone())
            .ok_or_else(|| Error::failed("vx did not pass VX_WORKSPACE_ROOT; this sandbox needs vx ≥ 0.1.0"))?;
        let argv = args::bwrap_args(config, &root, &task.cwd, &task.argv)?;
        let program = config.bwrap.clone().unwrap_or_else(|| "bwrap".to_string());
        let started = std::time::Instant::now();
        let child = spawn(&Command::new(program).args(argv))?;
        let exit_code = forward_output(&child, out)?;
        Ok(Outcome { exit_code, duration_ms: started.elapsed().as_millis() as u64 })
    }
}

export_executor!(Sandbox);
