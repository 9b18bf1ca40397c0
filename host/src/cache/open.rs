//! [`Cache`]: the cache as one invocation uses it, opened from the
//! workspace's settings and `--cache`, and closed by saving what the next
//! invocation reuses and applying retention. Its work is in the files
//! beside: keying (`keying`), lookups (`lookup`), outputs restored and
//! stored (`outputs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Backend, CacheMode, DepsTable, LocalStore, RemoteTier, RuntimeProbes};
use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::inputs::Fingerprints;

/// The cache as one invocation uses it.
#[derive(Debug)]
pub(crate) struct Cache {
    pub store: LocalStore,
    /// The run's tasks' input files, listed and hashed.
    pub inputs: Fingerprints,
    pub mode: CacheMode,
    /// `--force`: never read, still write.
    pub force: bool,
    pub(super) env_secret: [u8; 32],
    pub(super) env_mode: crate::config::EnvMode,
    /// `[workspace] global-env`, hashed for every task beside its `env`.
    pub(super) global_env: Vec<String>,
    pub(super) global_runtime: Vec<String>,
    /// vx's environment as it was when the cache was opened (it does not
    /// change during a run), read once rather than per task.
    pub(super) env_vars: EnvSnapshot,
    /// Runtime commands' outputs, each run once per invocation.
    pub runtime: RuntimeProbes,
    /// Each project's `package.json` and lockfile slice digests.
    pub(super) deps: DepsTable,
    pub(super) max_size: u64,
    pub(super) max_age: Duration,
    /// The remote backend the workspace names, when `--cache` gives the
    /// remote tier any access.
    pub remote: Option<RemoteTier>,
    /// Whether this run put an entry in the local store.
    pub(super) wrote: std::sync::atomic::AtomicBool,
    /// Whether a run was already told that the store cannot be read.
    pub(super) unreadable_told: std::sync::atomic::AtomicBool,
}

/// Variable names and values; `Debug` shows only the names, so a debug
/// print of the cache cannot leak a value.
pub(super) struct EnvSnapshot(pub(super) Vec<(String, String)>);

impl std::fmt::Debug for EnvSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(k, _)| k)).finish()
    }
}

/// Where vx keeps its state for a workspace.
pub(crate) fn state_dir(ws: &Workspace) -> PathBuf {
    ws.root.join(".vx")
}

impl Cache {
    /// Opens the cache of `ws`; `dir` overrides `[cache] dir`. `remote` is
    /// the workspace's remote backend (`crate::backends::remote`), used
    /// when `mode` gives the remote tier any access.
    pub(crate) fn open(
        ws: &Workspace,
        dir: Option<PathBuf>,
        mode: CacheMode,
        force: bool,
        remote: Option<Box<dyn Backend>>,
    ) -> Result<Cache> {
        let state = state_dir(ws);
        let hasher = Fingerprints::stat_index(ws, &state);
        let env_secret = load_secret(&state.join("secret"))?;
        let store = LocalStore::new(dir.unwrap_or_else(|| ws.cache.dir.clone()));
        let runtime = RuntimeProbes::new(ws);
        let deps = DepsTable::load(ws, &state);
        let remote = remote.filter(|_| mode.remote.read || mode.remote.write).map(RemoteTier::new);
        Ok(Cache {
            store,
            inputs: Fingerprints::open(ws, &state, hasher)?,
            mode,
            force,
            env_secret,
            env_mode: ws.env_mode,
            global_env: ws.global_env.clone(),
            global_runtime: ws.global_runtime.clone(),
            env_vars: EnvSnapshot(
                std::env::vars_os()
                    .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
                    .collect(),
            ),
            runtime,
            deps,
            max_size: ws.cache.max_size,
            max_age: ws.cache.max_age,
            remote,
            wrote: std::sync::atomic::AtomicBool::new(false),
            unreadable_told: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Whether keys are needed at all (any tier read or written).
    pub(crate) fn enabled(&self) -> bool {
        let m = self.mode;
        m.local.read || m.local.write || (self.remote.is_some() && (m.remote.read || m.remote.write))
    }

    pub(crate) fn reads(&self) -> bool {
        (self.mode.local.read || self.remote_reads()) && !self.force
    }

    pub(crate) fn writes(&self) -> bool {
        self.mode.local.write || (self.remote.is_some() && self.mode.remote.write)
    }

    /// Whether a remote tier is read (lookups may go over the network).
    pub(crate) fn remote_reads(&self) -> bool {
        self.remote.is_some() && self.mode.remote.read
    }

    /// Saves the stat index and, after a run that wrote entries, applies
    /// retention if the store is over budget (a run that only hit adds
    /// nothing, so it does not list the store). Failures here only cost
    /// speed next time, so they warn.
    pub(crate) fn finish(&self) {
        self.save_index();
        if let Some(remote) = &self.remote {
            remote.finish();
        }
        if self.wrote.load(std::sync::atomic::Ordering::Relaxed) && self.store.stats().bytes > self.max_size {
            self.store.gc(self.max_size, self.max_age);
        }
    }

    /// Saves the stat index so the next invocation need not read unchanged
    /// files again (`--dry` and `vx why` hash too).
    pub(crate) fn save_index(&self) {
        self.inputs.save();
    }

    pub(crate) fn retention(&self) -> (u64, Duration) {
        (self.max_size, self.max_age)
    }
}

/// A random per-workspace secret for env digests in manifests (0600).
fn load_secret(path: &Path) -> Result<[u8; 32]> {
    if let Ok(bytes) = crate::paths::read_regular(path, 32)
        && let Ok(secret) = <[u8; 32]>::try_from(bytes.as_slice())
    {
        return Ok(secret);
    }
    let mut seed = blake3::Hasher::new();
    seed.update(&std::process::id().to_le_bytes());
    seed.update(format!("{:?}", std::time::SystemTime::now()).as_bytes());
    seed.update(&std::fs::read("/proc/sys/kernel/random/uuid").unwrap_or_default());
    let secret = *seed.finalize().as_bytes();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(format_args!("create {}", parent.display()), e))?;
    }
    crate::paths::write_atomic(path, &secret).map_err(|e| Error::io(format_args!("write {}", path.display()), e))?;
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    Ok(secret)
}
