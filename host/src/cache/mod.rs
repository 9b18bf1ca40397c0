//! The content-hash cache (DESIGN §4): input hashing with a stat index,
//! keys, the local store of verified entries, outputs archives and log
//! replay. It knows nothing of scheduling: the run loop asks for a task's
//! key, looks it up, restores a hit, and stores a successful run.
//!
//! It knows nothing of plugins or REAPI either: a remote tier is any
//! [`Backend`] (a store of encoded entries by key), built by
//! `crate::backends` from the workspace's configuration and handed to
//! [`Cache::open`]. Every entry, from whichever tier, is verified here.
//!
//! | file | owns |
//! |------|------|
//! | `hasher` | BLAKE3 of files, the stat index under `.vx/` |
//! | `inputs` | which files are a task's inputs and outputs (globs, `.gitignore`) |
//! | `absent` | whether a file that is not on disk would be one of a task's inputs (`--download`) |
//! | `anchored` | root-anchored (`/…`) input and output globs, split from project-relative ones |
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

mod absent;
mod anchored;
pub(crate) mod archive;
mod backend;
mod build_state;
mod clear;
mod deps;
mod diff;
mod entry;
mod error;
mod fsutil;
mod gitview;
mod hasher;
mod inputs;
mod key;
mod mode;
mod monitor;
mod remote;
mod runs;
mod runtime;
mod store;
mod tracked;
mod watchman;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use anchored::{InputGlobs, InputMatcher, OutputGlobs, is_anchored};
pub use archive::{ArchiveError, Member, ROOT_MEMBERS, Restored, pack_members, read_members};
pub use backend::{Backend, BackendError, PROBE_KEY};
pub use build_state::BuildState;
pub use clear::{ClearError, clear_outputs};
pub use deps::{DepsTable, LockPart, ProjectDeps, kept_slice, root_dependencies};
pub use diff::{Change, diff_explained, diff_manifests};
pub use entry::{Entry, EntryError, EntryHeader, OutputFile};
pub use error::CacheError;
pub use fsutil::write_atomic;
pub use hasher::FileHasher;
pub use inputs::{FileRef, GlobError, GlobFilter, Listing, ignore_file, list_files, unmatched_inputs};
pub use key::{CacheKey, KeyInputs, KeyManifest, RuntimeEntry, SCHEMA_VERSION};
pub use mode::{Access, CacheMode};
pub use monitor::{Hashed, Monitor, MonitorMode};
pub use remote::RemoteTier;
pub use runtime::{PROBE_LIMIT, RuntimeProbes};
pub use store::{CleanError, LocalStore, Lookup, StoreStats};

use crate::config::{Task, Workspace};
use crate::error::{Error, Result};
use archive::OutputDirs;

/// The cache as one invocation uses it.
#[derive(Debug)]
pub struct Cache {
    pub store: LocalStore,
    pub hasher: Arc<FileHasher>,
    pub mode: CacheMode,
    /// `--force`: never read, still write.
    pub force: bool,
    env_secret: [u8; 32],
    global: Vec<(String, blake3::Hash)>,
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
    /// Project directories that hold other projects, with those (rare, so
    /// a task's walk looks them up instead of comparing every project).
    nested: std::collections::HashMap<PathBuf, Vec<PathBuf>>,
    max_size: u64,
    max_age: Duration,
    /// The remote backend the workspace names, when `--cache` gives the
    /// remote tier any access.
    pub remote: Option<RemoteTier>,
    root: PathBuf,
    /// Parsed ignore files, shared by every task of the run.
    ignores: std::sync::Mutex<IgnoreCache>,
    /// Compiled glob filters by (patterns, excludes), shared likewise.
    filters: std::sync::Mutex<FilterCache>,
    /// Whether this run put an entry in the local store.
    wrote: std::sync::atomic::AtomicBool,
    /// Whether a run was already told that the store cannot be read.
    unreadable_told: std::sync::atomic::AtomicBool,
    /// The file-system monitor's word on what changed, and the input
    /// lists kept from the last run (`monitor`); `None` without one.
    monitor: Option<Monitor>,
    /// Under `monitor = "git"`, in a git repository: git's index and
    /// `.vx/oid-map`, read from when the cache opens, taken at the first
    /// key.
    git_pending: std::sync::Mutex<Option<gitview::Pending>>,
    git_view: std::sync::OnceLock<Option<gitview::GitView>>,
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

type FilterCache = std::collections::HashMap<(Option<Vec<String>>, Vec<String>), Arc<GlobFilter>>;

/// Ignore files read during a run: each directory's own, and the chain
/// above each walked directory.
#[derive(Debug, Default)]
struct IgnoreCache {
    own: std::collections::HashMap<PathBuf, Vec<ignore::gitignore::Gitignore>>,
    chains: std::collections::HashMap<PathBuf, Arc<Vec<ignore::gitignore::Gitignore>>>,
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
        // Under `monitor = "git"` git's index vouches for most files first.
        let stat_index = state.join("stat-index");
        let hasher = Arc::new(if ws.cache.monitor == MonitorMode::Git {
            FileHasher::load_when_needed(stat_index)
        } else {
            FileHasher::load_in_background(stat_index)
        });
        let env_secret = load_secret(&state.join("secret"))?;
        let mut cache = Cache {
            store: LocalStore::new(dir.unwrap_or_else(|| ws.cache.dir.clone())),
            hasher,
            mode,
            force,
            env_secret,
            global: Vec::new(),
            env_mode: ws.env_mode,
            global_env: ws.global_env.clone(),
            global_runtime: ws.global_runtime.clone(),
            env_vars: EnvSnapshot(
                std::env::vars_os()
                    .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
                    .collect(),
            ),
            runtime: RuntimeProbes::new(ws),
            deps: DepsTable::load(ws, &state),
            nested: nested_projects(ws),
            max_size: ws.cache.max_size,
            max_age: ws.cache.max_age,
            remote: remote.filter(|_| mode.remote.read || mode.remote.write).map(RemoteTier::new),
            root: ws.root.clone(),
            ignores: std::sync::Mutex::default(),
            filters: std::sync::Mutex::default(),
            wrote: std::sync::atomic::AtomicBool::new(false),
            unreadable_told: std::sync::atomic::AtomicBool::new(false),
            monitor: Monitor::open(&ws.root, &state, ws.cache.monitor),
            git_pending: std::sync::Mutex::new(
                (ws.cache.monitor == MonitorMode::Git)
                    .then(|| gitview::Pending::start(&ws.root, state.join("oid-map")))
                    .flatten(),
            ),
            git_view: std::sync::OnceLock::new(),
        };
        cache.global = cache.global_inputs(ws)?;
        Ok(cache)
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

    fn global_inputs(&self, ws: &Workspace) -> Result<Vec<(String, blake3::Hash)>> {
        if ws.global_inputs.is_empty() {
            return Ok(Vec::new());
        }
        let filter = GlobFilter::new(Some(&ws.global_inputs), &[])
            .map_err(|m| Error::config(format!("[workspace] global-inputs: {m}")))?;
        let mut next = 0;
        // Explicit globs: what git ignores is listed too (`.env.local`).
        list_files(&ws.root, &filter, Listing::Inputs(None), &[])
            .into_iter()
            .map(|f| {
                let hash = self.hash_ref(&f, &mut next).map_err(|e| Error::io(format_args!("hash {}", f.rel), e))?;
                Ok((f.rel, hash))
            })
            .collect()
    }

    /// The ignore files that apply above a walk of `dir`, from the root
    /// down, outermost first. Each directory's files are read once per run
    /// (hundreds of projects share the root and `packages/`).
    fn ignores_for(&self, dir: &Path) -> Arc<Vec<ignore::gitignore::Gitignore>> {
        let mut cache = self.ignores.lock().expect("ignores lock poisoned");
        if let Some(found) = cache.chains.get(dir) {
            return found.clone();
        }
        let mut dirs: Vec<&Path> = dir.ancestors().take_while(|d| d.starts_with(&self.root)).collect();
        dirs.reverse();
        let mut chain = Vec::new();
        for d in dirs {
            let own = cache.own.entry(d.to_path_buf()).or_insert_with(|| inputs::dir_ignores(d, d == self.root));
            chain.extend(own.iter().cloned());
        }
        let chain = Arc::new(chain);
        cache.chains.insert(dir.to_path_buf(), chain.clone());
        chain
    }

    /// Git's index, once read; `None` unless `monitor = "git"`, outside
    /// git, or when git's index cannot vouch for files here (`gitview`).
    fn git_view(&self) -> Option<&gitview::GitView> {
        self.git_view
            .get_or_init(|| {
                self.git_pending.lock().expect("git lock poisoned").take().and_then(gitview::Pending::finish)
            })
            .as_ref()
    }

    /// The workspace's global inputs, workspace-relative.
    pub fn global_files(&self) -> Vec<String> {
        self.global.iter().map(|(rel, _)| rel.clone()).collect()
    }

    /// The glob filter for `patterns` minus `excludes`, compiled once per
    /// run: hundreds of tasks usually share a handful of glob lists, and
    /// compiling one costs more than walking a small project.
    fn filter(&self, patterns: Option<&[String]>, excludes: &[String]) -> Result<Arc<GlobFilter>, GlobError> {
        let id = (patterns.map(<[String]>::to_vec), excludes.to_vec());
        if let Some(found) = self.filters.lock().expect("filters lock poisoned").get(&id) {
            return Ok(found.clone());
        }
        let filter = Arc::new(GlobFilter::new(patterns, excludes)?);
        self.filters.lock().expect("filters lock poisoned").insert(id, filter.clone());
        Ok(filter)
    }

    /// The input files of a task in `project_dir` (workspace-relative paths).
    pub fn input_files(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
    ) -> Result<Vec<(String, PathBuf)>, CacheError> {
        let files = runs::merge_runs(self.input_runs(root, project_dir, task)?);
        Ok(files.into_iter().map(|f| (f.rel, f.abs)).collect())
    }

    /// [`Cache::input_files`] with the `lstat` the walk took of each, as
    /// sorted runs (`runs`) yet to merge.
    fn input_runs(&self, root: &Path, project_dir: &Path, task: &Task) -> Result<Vec<Vec<FileRef>>, CacheError> {
        let globs = InputGlobs::split(task.inputs.as_deref());
        let outputs = OutputGlobs::split(&task.outputs);
        let filter = self.filter(globs.project.as_deref(), &outputs.project)?;
        let nested = self.nested.get(project_dir).map_or(&[][..], Vec::as_slice);
        let prefix = project_dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy();
        // Declared inputs name files as Turborepo's do, ignored ones too
        // (`.env.local`); without, every file git would see is one.
        let ignores = task.inputs.is_none().then(|| self.ignores_for(project_dir));
        let mut runs = inputs::list_file_runs(project_dir, &prefix, &filter, Listing::Inputs(ignores.as_ref()), nested);
        if globs.has_anchored() {
            // Workspace-relative already; a file that both lists hold once.
            let anchored = self.filter(Some(&globs.anchored), &[])?;
            let mut files = runs::merge_runs(runs);
            files.extend(list_files(root, &anchored, Listing::Inputs(None), &[]));
            files.sort();
            files.dedup_by(|a, b| a.rel == b.rel);
            runs = vec![files];
        }
        if outputs.has_anchored() {
            // What the task writes is never what it reads, wherever it lies.
            let written = self.filter(Some(&outputs.anchored), &[])?;
            for run in &mut runs {
                run.retain(|f| !written.matches(&f.rel));
            }
        }
        note_links_out(root, project_dir, task, &runs);
        Ok(runs)
    }

    /// A task's hashed input files: kept from the last run when the
    /// file-system monitor says nothing changed where they were walked
    /// (`monitor`), else walked and hashed (and kept for the next run).
    fn input_hashes(&self, root: &Path, project_dir: &Path, task: &Task) -> Result<Hashed, CacheError> {
        let Some(monitor) = &self.monitor else {
            return Ok(Arc::new(self.hash_all(self.input_runs(root, project_dir, task)?)?));
        };
        let nested = self.nested.get(project_dir).map_or(&[][..], Vec::as_slice);
        let id = format!("{}\0{:?}\0{:?}\0{nested:?}", project_dir.display(), task.inputs, task.outputs);
        if let Some(files) = monitor.get(&id) {
            return Ok(files);
        }
        let runs = self.input_runs(root, project_dir, task)?;
        // A file reached through a link may change where the monitor does
        // not look (the link's target): such a list is walked every time.
        let through_link = runs.iter().flatten().any(|f| f.via_link);
        let files = Arc::new(self.hash_all(runs)?);
        if !through_link {
            monitor.put(id, self.covered(root, project_dir, task)?, files.clone());
        }
        Ok(files)
    }

    /// The directories (workspace-relative) the walks of a task's inputs
    /// enter: the literal prefixes of its globs.
    fn covered(&self, root: &Path, project_dir: &Path, task: &Task) -> Result<Vec<String>, CacheError> {
        let globs = InputGlobs::split(task.inputs.as_deref());
        let outputs = OutputGlobs::split(&task.outputs);
        let prefix = project_dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().into_owned();
        let join = |r: &String| inputs::join_rel(&prefix, r);
        let mut covered: Vec<String> =
            self.filter(globs.project.as_deref(), &outputs.project)?.roots().iter().map(join).collect();
        if globs.has_anchored() {
            covered.extend(self.filter(Some(&globs.anchored), &[])?.roots().iter().cloned());
        }
        Ok(covered)
    }

    /// One listed file's BLAKE3: from git's index and `.vx/oid-map` when
    /// git vouches for it (`monitor = "git"`), else through the stat index.
    /// `next` carries where git's index is read from one file of a sorted
    /// list to the next.
    fn hash_ref(&self, f: &FileRef, next: &mut usize) -> std::io::Result<blake3::Hash> {
        let Some(stat) = &f.stat else { return self.hasher.hash(&f.abs) };
        let content = match self.git_view().filter(|_| !f.via_link) {
            Some(view) => view.hash(&f.abs, stat, next, || self.hasher.hash_stat(&f.abs, stat))?,
            None => self.hasher.hash_stat(&f.abs, stat)?,
        };
        Ok(key_digest(stat, content))
    }

    /// Hashes the files of sorted runs (`runs`), on several threads when
    /// there are many (a task of a large project; tasks themselves already
    /// run side by side), into one list in listing order.
    fn hash_all(&self, runs: Vec<Vec<FileRef>>) -> Result<Vec<(String, blake3::Hash)>, CacheError> {
        const PER_THREAD: usize = 512;
        let mut runs = if runs.len() > runs::MAX_HASHED_RUNS { vec![runs::merge_runs(runs)] } else { runs };
        let total: usize = runs.iter().map(Vec::len).sum();
        // Each part fills its own stretch of its run's digests: no list
        // per thread copied after.
        let mut hashes: Vec<Vec<blake3::Hash>> =
            runs.iter().map(|run| vec![blake3::Hash::from_bytes([0; 32]); run.len()]).collect();
        let hash_part = |part: &[FileRef], into: &mut [blake3::Hash]| {
            let mut next = 0;
            for (f, slot) in part.iter().zip(into) {
                *slot =
                    self.hash_ref(f, &mut next).map_err(|source| CacheError::Hash { path: f.rel.clone(), source })?;
            }
            Ok::<_, CacheError>(())
        };
        let threads = crate::sys::cores().min(total / PER_THREAD);
        // Parts of about a quarter of a thread's share, taken in turn: the
        // runs of a walk need not be of a size.
        let chunk = total.div_ceil(threads.max(1) * 4).max(PER_THREAD);
        let mut parts: Vec<_> = runs
            .iter()
            .zip(&mut hashes)
            .flat_map(|(run, into)| run.chunks(chunk).zip(into.chunks_mut(chunk)))
            .collect();
        if threads <= 1 {
            parts.into_iter().try_for_each(|(part, into)| hash_part(part, into))?;
        } else {
            parts.reverse();
            let queue = std::sync::Mutex::new(parts);
            let worker = || loop {
                let Some((part, into)) = queue.lock().expect("hash queue poisoned").pop() else { return Ok(()) };
                hash_part(part, into)?;
            };
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
                let mine = worker();
                helpers
                    .into_iter()
                    .map(|h| h.join().expect("hash thread panicked"))
                    .chain([mine])
                    .collect::<Result<(), CacheError>>()
            })?;
        }
        // The names move into the list: no copy of 100,000 paths.
        Ok(runs::merge_hashed(&mut runs, &hashes))
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
        let files = self.input_hashes(root, project_dir, task)?;
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
            global: &self.global,
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
        Ok(archive::unpack(dirs, &entry.archive, &entry.header.outputs, &self.hasher)?)
    }

    /// A task's output filters: project-relative, and root-anchored if any.
    fn output_filters(&self, task: &Task) -> Result<(Arc<GlobFilter>, Option<Arc<GlobFilter>>), GlobError> {
        let outputs = OutputGlobs::split(&task.outputs);
        let anchored = outputs.has_anchored().then(|| self.filter(Some(&outputs.anchored), &[])).transpose()?;
        Ok((self.filter(Some(&outputs.project), &[])?, anchored))
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
        let now = self.hash_all(self.input_runs(root, project_dir, task)?)?;
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
            let same = self.digest_now(&root.join(rel)).is_ok_and(|h| h.to_hex().as_str() == hex);
            if !same {
                return Ok(Some(rel.clone()));
            }
        }
        Ok(None)
    }

    /// A file's key digest as a walk would give it now (through links,
    /// its execute bit marked).
    fn digest_now(&self, abs: &Path) -> std::io::Result<blake3::Hash> {
        let stat = hasher::FileStat::of(&std::fs::metadata(abs)?);
        let content = self.hasher.hash_stat(abs, &stat)?;
        Ok(key_digest(&stat, content))
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
            archive::pack(dirs, &self.hasher)?
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
        if let Err(e) = self.hasher.save() {
            tracing::warn!("could not save the stat index: {e}");
        }
        if let Some(Err(e)) = self.monitor.as_ref().map(Monitor::save) {
            tracing::warn!("could not save .vx/tree-snapshot: {e}");
        }
        if let Some(Err(e)) = self.git_view.get().and_then(Option::as_ref).map(gitview::GitView::save) {
            tracing::warn!("could not save .vx/oid-map: {e}");
        }
    }

    pub fn retention(&self) -> (u64, Duration) {
        (self.max_size, self.max_age)
    }
}

/// For each project directory, the other projects inside it. Sorted paths
/// put a directory's descendants right after it, so one pass finds them.
fn nested_projects(ws: &Workspace) -> std::collections::HashMap<PathBuf, Vec<PathBuf>> {
    let mut dirs: Vec<&PathBuf> = ws.projects.iter().map(|p| &p.dir).collect();
    dirs.sort();
    let mut out = std::collections::HashMap::new();
    for (i, dir) in dirs.iter().enumerate() {
        let inside: Vec<PathBuf> =
            dirs[i + 1..].iter().take_while(|d| d.starts_with(dir)).map(|d| (*d).clone()).collect();
        if !inside.is_empty() {
            out.insert((*dir).clone(), inside);
        }
    }
    out
}

/// Says once per task and vx process that some of its inputs are reached
/// through links out of the workspace: they are keyed by what they hold,
/// like any input, but `vx watch` and `--affected` look inside the
/// workspace only, so an edit there re-runs nothing until the next key.
/// Only files reached through a link are looked at, a directory each.
fn note_links_out(root: &Path, project_dir: &Path, task: &Task, runs: &[Vec<FileRef>]) {
    static NOTED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<PathBuf>>> =
        std::sync::OnceLock::new();
    let noted = NOTED.get_or_init(std::sync::Mutex::default);
    let id = project_dir.join(&task.name);
    // Keying runs this for every task, and again before storing: once the
    // task was noted, or when nothing came through a link, nothing is
    // resolved.
    if !runs.iter().flatten().any(|f| f.via_link) || noted.lock().expect("noted lock poisoned").contains(&id) {
        return;
    }
    let mut outside: Vec<PathBuf> = Vec::new();
    let mut seen: std::collections::HashSet<&Path> = std::collections::HashSet::new();
    for f in runs.iter().flatten().filter(|f| f.via_link) {
        let Some(dir) = f.abs.parent().filter(|d| seen.insert(d)) else { continue };
        if let Ok(real) = dir.canonicalize()
            && !real.starts_with(root)
            && !outside.iter().any(|o| real.starts_with(o))
        {
            outside.push(real);
        }
    }
    if outside.is_empty() {
        return;
    }
    if !noted.lock().expect("noted lock poisoned").insert(id) {
        return;
    }
    outside.sort();
    let shown: Vec<String> = outside.iter().take(3).map(|p| p.display().to_string()).collect();
    let more = outside.len().saturating_sub(3);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    tracing::info!(
        target: "vx",
        "task `{}` of {}: inputs reached through links out of the workspace ({}{more}) are keyed by their content; vx watch and --affected do not see edits there",
        task.name,
        project_dir.strip_prefix(root).unwrap_or(project_dir).display(),
        shown.join(", ")
    );
}

/// The digest a file's key entry has when its owner may execute it: its
/// content's digest, marked. A task that copies or runs a file sees its
/// mode as well as its bytes (`cp -p`, a script run directly), so a
/// `chmod +x` is a miss, as git's index records the same bit; other mode
/// bits are not kept by git and would differ between checkouts.
fn key_digest(stat: &hasher::FileStat, content: blake3::Hash) -> blake3::Hash {
    if !(stat.is_file() && stat.perm() & 0o100 != 0) {
        return content;
    }
    let mut h = blake3::Hasher::new();
    h.update(b"vx-executable\0");
    h.update(content.as_bytes());
    h.finalize()
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
    fsutil::write_atomic(path, &secret).map_err(|e| Error::io(format_args!("write {}", path.display()), e))?;
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
