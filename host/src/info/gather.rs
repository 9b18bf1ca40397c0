//! Gathering what `vx info` reports from `cwd`: the workspace if it
//! loads, its cache, history, remote tier and plugins, and the kernel.
//! Gathering never fails; what goes wrong is a problem in the report.

use std::path::Path;

use super::facts::{Build, CacheInfo, HistoryInfo, Info, Options, PluginInfo, RemoteInfo, WorkspaceInfo};
use super::{problems, system};
use crate::cache::{LocalStore, state_dir};
use crate::config::{Network, Workspace, load_workspace};

/// Looks at everything from `cwd`; never fails.
pub(crate) fn gather(cwd: &Path, options: Options) -> Info {
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
