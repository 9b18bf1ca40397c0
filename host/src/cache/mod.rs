//! The content-hash cache (DESIGN §4): keys, the local store of verified
//! entries, outputs archives and log replay. It knows nothing of
//! scheduling: the run loop asks for a task's key, looks it up, restores a
//! hit, and stores a successful run. What a task's input files are and
//! what they hash to is `crate::inputs`'s ([`Cache::inputs`]); a key is
//! made from those digests here.
//!
//! It knows nothing of plugins or REAPI either: a remote tier is any
//! [`Backend`] (a store of encoded entries by key), built by
//! `crate::backends` from the workspace's configuration and handed to
//! [`Cache::open`]. Every entry, from whichever tier, is verified here.
//!
//! | file | owns |
//! |------|------|
//! | `key` | the key recipe and its manifest |
//! | `entry` | the on-disk entry format and its verification |
//! | `store` | the local store: atomic writes, verified reads, retention |
//! | `backend` | [`Backend`], the interface of every tier, and the local store as one |
//! | `remote` | the remote tier: a backend, its failures counted, its warnings |
//! | `archive` | outputs as tar + zstd, and their defensive restore |
//! | `clear` | old outputs removed before a task executes |
//! | `build_state` | a tool's incremental state written outside the outputs (`.tsbuildinfo`) |
//! | `tracked` | the files git tracks, which outputs never remove or overwrite |
//! | `deps` | what keys take from `package.json` and the lockfile, memoised |
//! | `mode` | `--cache` access per tier |
//! | `runtime` | runtime inputs: each command run once, its output for keys |
//! | `diff` | which key components changed between two runs (`vx why`) |
//! | `error` | [`CacheError`] and the conversions into [`crate::Error`] |

pub(crate) mod archive;
mod backend;
mod build_state;
mod clear;
mod deps;
mod diff;
mod entry;
mod error;
mod key;
mod mode;
mod remote;
mod runtime;
mod store;
mod tracked;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use archive::{ArchiveError, Member, ROOT_MEMBERS, Restored, pack_members, read_members};
pub use backend::{Backend, BackendError, PROBE_KEY};
pub use build_state::BuildState;
pub use clear::{ClearError, clear_outputs};
pub use deps::{DepsTable, LockPart, ProjectDeps, kept_slice};
pub use diff::{Change, diff_explained, diff_manifests};
pub use entry::{Entry, EntryError, EntryHeader, OutputFile};
pub use error::CacheError;
pub use key::{CacheKey, KeyInputs, KeyManifest, RuntimeEntry, SCHEMA_VERSION};
pub use mode::{Access, CacheMode};
pub use remote::RemoteTier;
pub use runtime::{PROBE_LIMIT, RuntimeProbes};
pub use store::{CleanError, LocalStore, Lookup, StoreStats};

use crate::config::{Task, Workspace};
use crate::error::{Error, Result};
use crate::inputs::{Fingerprints, GlobError, GlobFilter, OutputGlobs};
use archive::OutputDirs;

/// The cache as one invocation uses it.
#[derive(Debug)]
pub struct Cache {
    pub store: LocalStore,
    /// The run's tasks' input files, listed and hashed.
    pub inputs: Fingerprints,
    pub mode: CacheMode,
    /// `--force`: never read, still write.
    pub force: bool,
    env_secret: [u8; 32],
    env_mode: crate::config::EnvMode,
    /// `[workspace] global-env`, hashed for every task beside its `env`.
    global_env: Vec<String>,
    global_runtime: Vec<String>,
    /// vx's environment as it was when the cache was opened (it does not
    /// change during a run), read once rather than per task.
    env_vars: EnvSnapshot,
    /// Runtime commands' outputs, each run once per invocation.
    pub runtime: RuntimeProbes,
    /// Each project's `package.json` and lockfile slice digests.
    deps: DepsTable,
    max_size: u64,
    max_age: Duration,
    /// The remote backend the workspace names, when `--cache` gives the
    /// remote tier any access.
    pub remote: Option<RemoteTier>,
    /// Whether this run put an entry in the local store.
    wrote: std::sync::atomic::AtomicBool,
    /// Whether a run was already told that the store cannot be read.
    unreadable_told: std::sync::atomic::AtomicBool,
}

/// Which tier a lookup's answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The local store (or nowhere: a miss).
    Local,
    /// The remote, whole: the entry is now in the local store too.
    Remote,
    /// The remote, without the outputs' bytes: the entry's archive is
    /// empty, so it must not be restored (`--download`).
    RemoteWithoutOutputs,
}

/// Variable names and values; `Debug` shows only the names, so a debug
/// print of the cache cannot leak a value.
struct EnvSnapshot(Vec<(String, String)>);

impl std::fmt::Debug for EnvSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(k, _)| k)).finish()
    }
}

/// Where vx keeps its state for a workspace.
pub fn state_dir(ws: &Workspace) -> PathBuf {
    ws.root.join(".vx")
}

impl Cache {
    /// Opens the cache of `ws`; `dir` overrides `[cache] dir`. `remote` is
    /// the workspace's remote backend (`crate::backends::remote`), used
    /// when `mode` gives the remote tier any access.
    pub fn open(
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
    pub fn enabled(&self) -> bool {
        let m = self.mode;
        m.local.read || m.local.write || (self.remote.is_some() && (m.remote.read || m.remote.write))
    }

    pub fn reads(&self) -> bool {
        (self.mode.local.read || self.remote_reads()) && !self.force
    }

    pub fn writes(&self) -> bool {
        self.mode.local.write || (self.remote.is_some() && self.mode.remote.write)
    }

    /// Whether a remote tier is read (lookups may go over the network).
    pub fn remote_reads(&self) -> bool {
        self.remote.is_some() && self.mode.remote.read
    }

    /// Computes a task's key from its inputs as they are on disk now.
    pub fn task_key(
        &self,
        root: &Path,
        project_dir: &Path,
        id: &str,
        task: &Task,
        executor_config: &str,
        deps: &[(String, CacheKey)],
    ) -> Result<(CacheKey, KeyManifest), CacheError> {
        let runtime = self.runtime_outputs(task)?;
        let files = self.inputs.hashes(root, project_dir, task)?;
        let env = self.hashed_env(task);
        let mut deps = deps.to_vec();
        deps.sort();
        let project = self.deps.of(project_dir);
        if let LockPart::Unreadable(why) = &project.lockfile {
            return Err(CacheError::Lockfile(why.clone()));
        }
        let inputs = KeyInputs {
            task: id,
            command: &task.command,
            executor: task.executor.as_str(),
            executor_config,
            env_mode: self.env_mode.as_str(),
            env: &env,
            runtime: &runtime,
            files: &files,
            global: self.inputs.global(),
            deps: &deps,
            package: project,
            outputs: &task.outputs,
        };
        Ok(inputs.compute(&self.env_secret))
    }

    /// The hashed variables of `task` (its `env` and `global-env`) with
    /// their values now.
    fn hashed_env(&self, task: &Task) -> Vec<(String, Option<String>)> {
        if self.global_env.is_empty() && task.env.is_empty() {
            return Vec::new();
        }
        let list = crate::config::env::EnvList::new(&self.global_env, &task.env);
        list.hashed_names(self.env_vars.0.iter().map(|(k, _)| k.as_str()))
            .into_iter()
            .map(|name| {
                let value = self.env_vars.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
                (name, value)
            })
            .collect()
    }

    /// `(command, output)` of each runtime command of `task`, in order.
    fn runtime_outputs(&self, task: &Task) -> Result<Vec<(String, Vec<u8>)>, CacheError> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for command in self.global_runtime.iter().chain(&task.runtime) {
            if seen.contains(&command.as_str()) {
                continue;
            }
            seen.push(command);
            let output =
                self.runtime.output(command).map_err(|why| CacheError::Runtime { command: command.clone(), why })?;
            out.push((command.clone(), output.to_vec()));
        }
        Ok(out)
    }

    /// Looks a key up in the local store, unless reads are off (`--force`,
    /// `--cache local:w`).
    pub fn lookup(&self, key: &CacheKey) -> Lookup {
        if self.reads() && self.mode.local.read { self.store.get(key) } else { Lookup::Miss }
    }

    /// Looks a key up locally, then in the remote tier, and says which
    /// tier answered. A remote hit is verified like a local one and
    /// written to the local store (when it is writable); a remote entry
    /// that does not verify is a warning and a miss. Without `outputs`, a
    /// remote that can leave them behind ([`Backend::partial`]) sends the
    /// entry without its outputs' bytes ([`Tier::RemoteWithoutOutputs`]),
    /// which is neither stored nor restored (`--download`).
    pub fn lookup_tiers(&self, key: &CacheKey, outputs: bool) -> (Lookup, Tier) {
        let local = self.lookup(key);
        // An unreadable local store is no reason not to ask the remote one.
        if !matches!(local, Lookup::Miss | Lookup::Unreadable(_)) || !self.remote_reads() || self.force {
            return (local, Tier::Local);
        }
        let Some(remote) = &self.remote else { return (local, Tier::Local) };
        let partial = !outputs && remote.partial();
        let fetched = if partial { remote.get_without_outputs(&key.0) } else { remote.get(&key.0) };
        let Some(bytes) = fetched else { return (local, Tier::Local) };
        match Entry::decode(&bytes, key) {
            Ok(entry) if partial => (Lookup::Hit(Box::new(entry)), Tier::RemoteWithoutOutputs),
            Ok(entry) => {
                if self.mode.local.write {
                    match self.store.put(key, &bytes) {
                        Ok(()) => self.wrote.store(true, std::sync::atomic::Ordering::Relaxed),
                        Err(e) => tracing::warn!("could not keep a remote cache hit locally: {e}"),
                    }
                }
                (Lookup::Hit(Box::new(entry)), Tier::Remote)
            }
            Err(why) => {
                tracing::warn!("the remote cache returned an invalid entry for {} ({why}); running the task", key.0);
                (Lookup::Miss, Tier::Local)
            }
        }
    }

    /// `true` the first time in this invocation that the store could not
    /// be read: one warning says so, and later misses for the same reason
    /// stay quiet.
    pub fn first_unreadable(&self) -> bool {
        !self.unreadable_told.swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    /// Restores a hit's outputs into the project (and, for root-anchored
    /// outputs, the workspace).
    pub fn restore(&self, root: &Path, project_dir: &Path, task: &Task, entry: &Entry) -> Result<Restored, CacheError> {
        if task.outputs.is_empty() && entry.header.outputs.is_empty() {
            return Ok(Restored::AlreadyThere);
        }
        let (globs, anchored) = self.output_filters(task)?;
        let dirs = OutputDirs {
            workspace: root,
            project: project_dir,
            globs: &globs,
            root: anchored.as_deref().map(|a| (root, a)),
        };
        Ok(archive::unpack(dirs, &entry.archive, &entry.header.outputs, self.inputs.hasher())?)
    }

    /// A task's output filters: project-relative, and root-anchored if any.
    fn output_filters(&self, task: &Task) -> Result<(Arc<GlobFilter>, Option<Arc<GlobFilter>>), GlobError> {
        let outputs = OutputGlobs::split(&task.outputs);
        let anchored = outputs.has_anchored().then(|| self.inputs.filter(Some(&outputs.anchored), &[])).transpose()?;
        Ok((self.inputs.filter(Some(&outputs.project), &[])?, anchored))
    }

    /// The first of the files a key read (`manifest`) that no longer holds
    /// what was read, or is gone: the task's result is then not stored.
    /// An entry stored under the key of the old content with outputs built
    /// from the new would be a wrong hit once the edit is reverted (Bazel
    /// checks the same). Files unchanged since keying cost a `stat` (the
    /// stat index); a new file matters not, as the next key sees it.
    pub fn changed_input(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
        manifest: &KeyManifest,
    ) -> Result<Option<String>, CacheError> {
        let now = self.inputs.hashed_now(root, project_dir, task)?;
        let mut now = now.iter().peekable();
        for (path, hash) in manifest.files.0.iter() {
            while now.next_if(|(p, _)| p < path).is_some() {}
            match now.peek() {
                Some((p, h)) if p == path && h == hash => {}
                _ => return Ok(Some(path.clone())),
            }
        }
        // The global inputs the key read, by path: a stat each while they
        // are unchanged (the stat index), as for the task's own.
        for (rel, hex) in &manifest.global {
            let same = self.inputs.digest_now(&root.join(rel)).is_ok_and(|h| h.to_hex().as_str() == hex);
            if !same {
                return Ok(Some(rel.clone()));
            }
        }
        Ok(None)
    }

    /// Stores a successful run: its outputs, log, exit code and duration.
    pub fn save(
        &self,
        key: &CacheKey,
        manifest: KeyManifest,
        dirs: (&Path, &Path),
        task: &Task,
        log: &[u8],
        duration: Duration,
    ) -> Result<(), CacheError> {
        let (root, project_dir) = dirs;
        let (archive, outputs) = if task.outputs.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let (globs, anchored) = self.output_filters(task)?;
            let dirs = OutputDirs {
                workspace: root,
                project: project_dir,
                globs: &globs,
                root: anchored.as_deref().map(|a| (root, a)),
            };
            archive::pack(dirs, self.inputs.hasher())?
        };
        let header = EntryHeader {
            key: key.clone(),
            task: manifest.task.clone(),
            exit_code: 0,
            duration_ms: duration.as_millis() as u64,
            created_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            log_len: 0,
            archive_len: 0,
            body_hash: String::new(),
            outputs,
            manifest,
        };
        let bytes = Entry::encode(header, log, &archive);
        if let (Some(remote), true) = (&self.remote, self.mode.remote.write) {
            remote.put(&key.0, Arc::new(bytes.clone()));
        }
        if !self.mode.local.write {
            return Ok(());
        }
        self.store.put(key, &bytes).map_err(CacheError::Write)?;
        self.wrote.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Saves the stat index and, after a run that wrote entries, applies
    /// retention if the store is over budget (a run that only hit adds
    /// nothing, so it does not list the store). Failures here only cost
    /// speed next time, so they warn.
    pub fn finish(&self) {
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
    pub fn save_index(&self) {
        self.inputs.save();
    }

    pub fn retention(&self) -> (u64, Duration) {
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

/// The files `task`'s outputs match now, as `(workspace-relative path,
/// absolute path)`: what its entry would hold if it were stored now.
pub fn output_files(root: &Path, project_dir: &Path, task: &Task) -> Result<Vec<(String, PathBuf)>, CacheError> {
    let outputs = OutputGlobs::split(&task.outputs);
    let globs = GlobFilter::new(Some(&outputs.project), &[])?;
    let anchored = outputs.has_anchored().then(|| GlobFilter::new(Some(&outputs.anchored), &[])).transpose()?;
    let dirs =
        OutputDirs { workspace: root, project: project_dir, globs: &globs, root: anchored.as_ref().map(|a| (root, a)) };
    Ok(dirs.in_workspace()?)
}
