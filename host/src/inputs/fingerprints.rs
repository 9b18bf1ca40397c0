//! [`Fingerprints`]: a task's input files as one invocation lists and
//! hashes them, with what makes that cheap shared by every task of the
//! run: the stat index, parsed ignore files, compiled glob filters, the
//! file-system monitor's kept lists and git's index. The cache keys a
//! task by what this answers; it never walks or hashes a file itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use ignore::gitignore::Gitignore;

use super::anchored::{InputGlobs, OutputGlobs};
use super::error::InputError;
use super::glob::{GlobError, GlobFilter};
use super::hasher::FileHasher;
use super::monitor::{Hashed, Monitor, MonitorMode};
use super::walk::{FileRef, Listing, join_rel, list_file_runs, list_files};
use super::{gitview, links, runs};
use crate::config::{Task, Workspace};
use crate::error::{Error, Result};

/// A run's view of its tasks' inputs.
#[derive(Debug)]
pub(crate) struct Fingerprints {
    pub(super) hasher: Arc<FileHasher>,
    /// The workspace's global inputs, hashed once when opened.
    global: Vec<(String, blake3::Hash)>,
    /// Project directories that hold other projects, with those (rare, so
    /// a task's walk looks them up instead of comparing every project).
    pub(super) nested: HashMap<PathBuf, Vec<PathBuf>>,
    root: PathBuf,
    /// Parsed ignore files, shared by every task of the run.
    ignores: Mutex<IgnoreCache>,
    /// Compiled glob filters by (patterns, excludes), shared likewise.
    filters: Mutex<FilterCache>,
    /// The file-system monitor's word on what changed, and the input
    /// lists kept from the last run (`monitor`); `None` without one.
    monitor: Option<Monitor>,
    /// Under `monitor = "git"`, in a git repository: git's index and
    /// `.vx/oid-map`, read from when the cache opens, taken at the first
    /// key.
    git_pending: Mutex<Option<gitview::Pending>>,
    git_view: OnceLock<Option<gitview::GitView>>,
}

type FilterCache = HashMap<(Option<Vec<String>>, Vec<String>), Arc<GlobFilter>>;

/// Ignore files read during a run: each directory's own, and the chain
/// above each walked directory.
#[derive(Debug, Default)]
struct IgnoreCache {
    own: HashMap<PathBuf, Vec<Gitignore>>,
    chains: HashMap<PathBuf, Arc<Vec<Gitignore>>>,
}

impl Fingerprints {
    /// The stat index under `state` (`.vx/`), loading as the workspace's
    /// monitor wants it: under `monitor = "git"` git's index vouches for
    /// most files first, so it is read only when needed; else it loads in
    /// the background while the rest of the cache opens.
    pub(crate) fn stat_index(ws: &Workspace, state: &Path) -> Arc<FileHasher> {
        let stat_index = state.join("stat-index");
        Arc::new(if ws.cache.monitor == MonitorMode::Git {
            FileHasher::load_when_needed(stat_index)
        } else {
            FileHasher::load_in_background(stat_index)
        })
    }

    /// Opens the inputs of `ws`'s tasks for one invocation, around the
    /// stat index `hasher` ([`Fingerprints::stat_index`]), and hashes the
    /// workspace's global inputs.
    pub(crate) fn open(ws: &Workspace, state: &Path, hasher: Arc<FileHasher>) -> Result<Fingerprints> {
        let mut inputs = Fingerprints {
            hasher,
            global: Vec::new(),
            nested: nested_projects(ws),
            root: ws.root.clone(),
            ignores: Mutex::default(),
            filters: Mutex::default(),
            monitor: Monitor::open(&ws.root, state, ws.cache.monitor),
            git_pending: Mutex::new(
                (ws.cache.monitor == MonitorMode::Git)
                    .then(|| gitview::Pending::start(&ws.root, state.join("oid-map")))
                    .flatten(),
            ),
            git_view: OnceLock::new(),
        };
        inputs.global = inputs.global_inputs(ws)?;
        Ok(inputs)
    }

    /// The stat index every file is hashed through.
    pub(crate) fn hasher(&self) -> &FileHasher {
        &self.hasher
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

    /// The workspace's global inputs with their digests, workspace-relative.
    pub(crate) fn global(&self) -> &[(String, blake3::Hash)] {
        &self.global
    }

    /// The workspace's global inputs, workspace-relative.
    pub(crate) fn global_files(&self) -> Vec<String> {
        self.global.iter().map(|(rel, _)| rel.clone()).collect()
    }

    /// The ignore files that apply above a walk of `dir`, from the root
    /// down, outermost first. Each directory's files are read once per run
    /// (hundreds of projects share the root and `packages/`).
    pub(super) fn ignores_for(&self, dir: &Path) -> Arc<Vec<Gitignore>> {
        let mut cache = self.ignores.lock().expect("ignores lock poisoned");
        if let Some(found) = cache.chains.get(dir) {
            return found.clone();
        }
        let mut dirs: Vec<&Path> = dir.ancestors().take_while(|d| d.starts_with(&self.root)).collect();
        dirs.reverse();
        let mut chain = Vec::new();
        for d in dirs {
            let own =
                cache.own.entry(d.to_path_buf()).or_insert_with(|| super::ignores::dir_ignores(d, d == self.root));
            chain.extend(own.iter().cloned());
        }
        let chain = Arc::new(chain);
        cache.chains.insert(dir.to_path_buf(), chain.clone());
        chain
    }

    /// Git's index, once read; `None` unless `monitor = "git"`, outside
    /// git, or when git's index cannot vouch for files here (`gitview`).
    pub(super) fn git_view(&self) -> Option<&gitview::GitView> {
        self.git_view
            .get_or_init(|| {
                self.git_pending.lock().expect("git lock poisoned").take().and_then(gitview::Pending::finish)
            })
            .as_ref()
    }

    /// The glob filter for `patterns` minus `excludes`, compiled once per
    /// run: hundreds of tasks usually share a handful of glob lists, and
    /// compiling one costs more than walking a small project.
    pub(crate) fn filter(
        &self,
        patterns: Option<&[String]>,
        excludes: &[String],
    ) -> Result<Arc<GlobFilter>, GlobError> {
        let id = (patterns.map(<[String]>::to_vec), excludes.to_vec());
        if let Some(found) = self.filters.lock().expect("filters lock poisoned").get(&id) {
            return Ok(found.clone());
        }
        let filter = Arc::new(GlobFilter::new(patterns, excludes)?);
        self.filters.lock().expect("filters lock poisoned").insert(id, filter.clone());
        Ok(filter)
    }

    /// The input files of a task in `project_dir` (workspace-relative paths).
    pub(crate) fn files(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
    ) -> Result<Vec<(String, PathBuf)>, InputError> {
        let files = runs::merge_runs(self.runs(root, project_dir, task)?);
        Ok(files.into_iter().map(|f| (f.rel, f.abs)).collect())
    }

    /// [`Fingerprints::files`] with the `lstat` the walk took of each, as
    /// sorted runs (`runs`) yet to merge.
    fn runs(&self, root: &Path, project_dir: &Path, task: &Task) -> Result<Vec<Vec<FileRef>>, InputError> {
        let globs = InputGlobs::split(task.inputs.as_deref());
        let outputs = OutputGlobs::split(&task.outputs);
        let filter = self.filter(globs.project.as_deref(), &outputs.project)?;
        let nested = self.nested.get(project_dir).map_or(&[][..], Vec::as_slice);
        let prefix = project_dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy();
        // Declared inputs name files as Turborepo's do, ignored ones too
        // (`.env.local`); without, every file git would see is one.
        let ignores = task.inputs.is_none().then(|| self.ignores_for(project_dir));
        let mut runs = list_file_runs(project_dir, &prefix, &filter, Listing::Inputs(ignores.as_ref()), nested);
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
        links::note_links_out(root, project_dir, task, &runs);
        Ok(runs)
    }

    /// A task's input files hashed as they are now, walked afresh (never
    /// a list the monitor kept): what a run checks its key's files against
    /// before storing.
    pub(crate) fn hashed_now(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
    ) -> Result<Vec<(String, blake3::Hash)>, InputError> {
        self.hash_all(self.runs(root, project_dir, task)?)
    }

    /// A task's hashed input files: kept from the last run when the
    /// file-system monitor says nothing changed where they were walked
    /// (`monitor`), else walked and hashed (and kept for the next run).
    pub(crate) fn hashes(&self, root: &Path, project_dir: &Path, task: &Task) -> Result<Hashed, InputError> {
        let Some(monitor) = &self.monitor else {
            return Ok(Arc::new(self.hash_all(self.runs(root, project_dir, task)?)?));
        };
        let nested = self.nested.get(project_dir).map_or(&[][..], Vec::as_slice);
        let id = format!("{}\0{:?}\0{:?}\0{nested:?}", project_dir.display(), task.inputs, task.outputs);
        if let Some(files) = monitor.get(&id) {
            return Ok(files);
        }
        let runs = self.runs(root, project_dir, task)?;
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
    fn covered(&self, root: &Path, project_dir: &Path, task: &Task) -> Result<Vec<String>, InputError> {
        let globs = InputGlobs::split(task.inputs.as_deref());
        let outputs = OutputGlobs::split(&task.outputs);
        let prefix = project_dir.strip_prefix(root).unwrap_or(Path::new("")).to_string_lossy().into_owned();
        let join = |r: &String| join_rel(&prefix, r);
        let mut covered: Vec<String> =
            self.filter(globs.project.as_deref(), &outputs.project)?.roots().iter().map(join).collect();
        if globs.has_anchored() {
            covered.extend(self.filter(Some(&globs.anchored), &[])?.roots().iter().cloned());
        }
        Ok(covered)
    }

    /// Saves the stat index, the monitor's lists and git's object map so
    /// the next invocation need not read unchanged files again. Failures
    /// here only cost speed next time, so they warn.
    pub(crate) fn save(&self) {
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
}

/// For each project directory, the other projects inside it. Sorted paths
/// put a directory's descendants right after it, so one pass finds them.
fn nested_projects(ws: &Workspace) -> HashMap<PathBuf, Vec<PathBuf>> {
    let mut dirs: Vec<&PathBuf> = ws.projects.iter().map(|p| &p.dir).collect();
    dirs.sort();
    let mut out = HashMap::new();
    for (i, dir) in dirs.iter().enumerate() {
        let inside: Vec<PathBuf> =
            dirs[i + 1..].iter().take_while(|d| d.starts_with(dir)).map(|d| (*d).clone()).collect();
        if !inside.is_empty() {
            out.insert((*dir).clone(), inside);
        }
    }
    out
}
