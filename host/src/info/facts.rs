//! Everything `vx info` reports, as data: `--format json` prints it as it
//! is, `text` renders it for people, and `problems` reads it for what to
//! mend.

use std::path::PathBuf;

use serde::Serialize;

use super::problems::Problem;
use super::system::{GuardSupport, SandboxSupport, WatcherSupport};

/// Everything `vx info` reports; `--format json` prints it as it is.
#[derive(Debug, Serialize)]
pub(crate) struct Info {
    pub version: &'static str,
    pub build: Build,
    pub workspace: Option<WorkspaceInfo>,
    pub cache: Option<CacheInfo>,
    pub history: Option<HistoryInfo>,
    /// `None` when the workspace names no remote tier.
    pub remote: Option<RemoteInfo>,
    pub plugins: Vec<PluginInfo>,
    pub guard: GuardSupport,
    pub sandbox: SandboxSupport,
    pub watcher: WatcherSupport,
    pub problems: Vec<Problem>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Build {
    /// `release` or `debug`.
    pub profile: &'static str,
    /// `ARCH-OS`, e.g. `x86_64-linux`.
    pub target: String,
    pub kernel: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct WorkspaceInfo {
    pub root: PathBuf,
    pub projects: usize,
    pub tasks: usize,
    pub env_mode: &'static str,
    /// Which files configure it (`vx.toml`, or a turbo file read natively).
    pub config: String,
    /// What the configuration's tool refuses when a run includes it.
    pub refused: Vec<String>,
    /// Tasks with `sandbox`, and of them those without the host's network.
    pub sandboxed_tasks: usize,
    pub sandboxed_without_network: usize,
}

#[derive(Debug, Serialize)]
pub(crate) struct CacheInfo {
    pub dir: PathBuf,
    pub entries: u64,
    pub bytes: u64,
    pub max_size: u64,
    pub max_age_secs: u64,
    pub writable: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct HistoryInfo {
    pub path: PathBuf,
    pub runs: i64,
    /// Cache hits among the task runs that looked the cache up.
    pub hits: i64,
    pub lookups: i64,
}

#[derive(Debug, Serialize)]
pub(crate) struct RemoteInfo {
    /// `reapi` or the cache-backend plugin's name.
    pub backend: String,
    pub endpoint: Option<String>,
    /// `None` when not checked (`--offline`).
    pub reachable: Option<bool>,
    pub capabilities: Vec<String>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct PluginInfo {
    pub name: String,
    /// The interface it exports (its world), from its pin.
    pub world: String,
    pub version: String,
    pub file: PathBuf,
    /// The BLAKE3 hash it is pinned to in `vx.lock`, if pinned.
    pub hash: Option<String>,
    /// `pinned ok`, `not pinned`, `DOES NOT MATCH its pin`, `unreadable (…)`.
    pub state: String,
    pub compiled: bool,
    pub grants: Vec<String>,
    pub ungranted: Vec<String>,
}

/// What to look at beyond the local machine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// Connect to the remote tier (off with `--offline`).
    pub check_remote: bool,
}
