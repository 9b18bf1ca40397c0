//! `vx info`, the doctor: what this vx is, the workspace it sees, its
//! cache, history, remote tier and plugins, and what the kernel offers the
//! guard, the sandbox and the watcher, with every problem found and the
//! one line that mends it.
//!
//! Gathering never fails: a workspace that does not load is a problem in
//! the report (the rest still describes the machine), so the doctor works
//! exactly when something is wrong.

mod problems;
pub mod system;
mod text;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use problems::Problem;
use system::{GuardSupport, SandboxSupport, WatcherSupport};
pub use text::render;

use crate::cache::{LocalStore, state_dir};
use crate::config::{Network, Workspace, load_workspace};

/// Everything `vx info` reports; `--format json` prints it as it is.
#[derive(Debug, Serialize)]
pub struct Info {
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
pub struct Build {
    /// `release` or `debug`.
    pub profile: &'static str,
    /// `ARCH-OS`, e.g. `x86_64-linux`.
    pub target: String,
    pub kernel: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct WorkspaceInfo {
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
pub struct CacheInfo {
    pub dir: PathBuf,
    pub entries: u64,
    pub bytes: u64,
    pub max_size: u64,
    pub max_age_secs: u64,
    pub writable: bool,
}

#[derive(Debug, Serialize)]
pub struct HistoryInfo {
    pub path: PathBuf,
    pub runs: i64,
    /// Cache hits among the task runs that looked the cache up.
    pub hits: i64,
    pub lookups: i64,
}

#[derive(Debug, Serialize)]
pub struct RemoteInfo {
    /// `reapi` or the cache-backend plugin's name.
    pub backend: String,
    pub endpoint: Option<String>,
    /// `None` when not checked (`--offline`).
    pub reachable: Option<bool>,
    pub capabilities: Vec<String>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PluginInfo {
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
pub struct Options {
    /// Connect to the remote tier (off with `--offline`).
    pub check_remote: bool,
}

/// Looks at everything from `cwd`; never fails.
pub fn gather(cwd: &Path, options: Options) -> Info {
    let loaded = load_workspace(cwd);
    let ws = loaded.as_ref().ok();
    let mut info = Info {
        version: env!("CARGO_PKG_VERSION"),
        build: Build {
            profile: if cfg!(debug_assertions) { "debug" } else { "release" },
            target: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
            kernel: system::kernel(),
        },
        workspace: ws.map(workspace),
        cache: ws.map(cache),
        history: ws.and_then(history),
        remote: ws.and_then(|ws| remote(ws, options)),
        plugins: Vec::new(),
        guard: system::guard(),
        sandbox: system::sandbox(),
        watcher: system::watcher(ws.map(|ws| ws.root.as_path())),
        problems: Vec::new(),
    };
    let mut unlisted = None;
    if let Some(ws) = ws {
        match crate::plugin::installed(ws) {
            Ok(installed) => info.plugins = installed.into_iter().map(plugin).collect(),
            Err(e) => unlisted = Some(e),
        }
    }
    info.problems = problems::find(&info, loaded.as_ref().err(), unlisted.as_ref());
    info
}

fn workspace(ws: &Workspace) -> WorkspaceInfo {
    let tasks = || ws.projects.iter().flat_map(|p| p.tasks.values());
    WorkspaceInfo {
        root: ws.root.clone(),
        projects: ws.projects.len(),
        tasks: tasks().count(),
        env_mode: ws.env_mode.as_str(),
        config: ws.source.describe(),
        refused: ws.broken.iter().map(|b| b.why.clone()).collect(),
        sandboxed_tasks: tasks().filter(|t| t.sandbox.is_some()).count(),
        sandboxed_without_network: tasks()
            .filter(|t| t.sandbox.as_ref().is_some_and(|s| s.network != Network::Host))
            .count(),
    }
}

fn cache(ws: &Workspace) -> CacheInfo {
    let dir = ws.cache.dir.clone();
    let stats = LocalStore::new(dir.clone()).stats();
    CacheInfo {
        writable: writable(&dir),
        dir,
        entries: stats.entries,
        bytes: stats.bytes,
        max_size: ws.cache.max_size,
        max_age_secs: ws.cache.max_age.as_secs(),
    }
}

/// Whether vx could write a file in the directory, or, while it does not
/// exist yet, in the nearest directory above it that does (where a run
/// would create it). The doctor creates nothing: its probe file, named for
/// this process, is removed again.
fn writable(dir: &Path) -> bool {
    // A file in the way (`[cache] dir = "notes.txt/cache"`) is not writable.
    let Some(existing) = dir.ancestors().find(|d| d.exists()).filter(|d| d.is_dir()) else { return false };
    let probe = existing.join(format!(".vx-info-{}", std::process::id()));
    let made = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    made
}

fn history(ws: &Workspace) -> Option<HistoryInfo> {
    let path = state_dir(ws).join("history.db");
    if !path.is_file() {
        return None;
    }
    let db = crate::history::History::open(&path).ok()?;
    let (hits, lookups) = db.hit_rate().unwrap_or((0, 0));
    Some(HistoryInfo { runs: db.invocation_count().unwrap_or(0), hits, lookups, path })
}

fn remote(ws: &Workspace, options: Options) -> Option<RemoteInfo> {
    let backend = crate::backends::remote(ws)?;
    let endpoint =
        ws.remote.as_ref().filter(|_| backend.name() == crate::config::REAPI_REMOTE).map(|r| r.endpoint.clone());
    let mut info = RemoteInfo {
        backend: backend.name().to_string(),
        endpoint,
        reachable: None,
        capabilities: Vec::new(),
        error: None,
    };
    if options.check_remote {
        match backend.check() {
            Ok(capabilities) => (info.reachable, info.capabilities) = (Some(true), capabilities),
            Err(e) => (info.reachable, info.error) = (Some(false), Some(crate::error::one_line(&e.to_string()))),
        }
    }
    Some(info)
}

fn plugin(p: crate::plugin::Installed) -> PluginInfo {
    PluginInfo {
        ungranted: p.ungranted(),
        world: p.exports,
        version: p.version,
        file: p.file,
        hash: p.hash,
        state: p.state.to_string(),
        compiled: p.compiled,
        grants: p.grants,
        name: p.name,
    }
}
