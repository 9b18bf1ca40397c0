//! `--download=all|needed|none`: which remote cache hits have their
//! outputs fetched ("build without the bytes", Bazel's
//! `--remote_download_outputs`).
//!
//! A remote hit whose outputs are not wanted now is looked up without
//! them: its header (the key manifest, each output's path and BLAKE3) and
//! its log come down and are verified, its outputs stay on the server,
//! and the task is recorded here as *pending*. Its outputs are fetched,
//! verified and restored (the whole entry, as a hit under `all` would be)
//! when they are needed:
//!
//! - before a task executes, for every pending task it depends on,
//!   directly or not (a build reads what its dependencies' dependencies
//!   made, too); this holds under `none` as well: correctness wins;
//! - before a task is keyed, for every pending task it depends on one of
//!   whose outputs (listed in its entry, or on disk from an older run)
//!   would be among its inputs (`inputs::Fingerprints::would_be_input`): its key then
//!   depends on those bytes, so it is computed from them, never from a
//!   tree that lacks them. Any other key cannot see them.
//!
//! Local hits are restored whatever the mode: a restore from the local
//! store moves no bytes over the network, and skips the files that are
//! already there. An entry fetched without its outputs is never written to
//! the local store, so a later run looks it up remotely again and fetches
//! what that run needs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::cache::{Cache, CacheKey, Entry, Lookup, ROOT_MEMBERS, Tier};
use crate::config::Task;
use crate::graph::TaskGraph;
use crate::inputs::OutputGlobs;

/// `--download`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Download {
    /// Every hit's outputs (vx before `--download`).
    All,
    /// The outputs of the tasks named on the command line, and of those
    /// that a task which executes, or the key of a later task, needs.
    #[default]
    Needed,
    /// Only what a task which executes, or a later task's key, needs.
    None,
}

impl Download {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Download::All => "all",
            Download::Needed => "needed",
            Download::None => "none",
        }
    }

    /// Whether a remote hit of a task fetches its outputs at once; `target`
    /// is whether the task was named on the command line.
    pub(crate) fn fetches_at_once(self, target: bool) -> bool {
        match self {
            Download::All => true,
            Download::Needed => target,
            Download::None => false,
        }
    }
}

/// The run's remote hits whose outputs are still on the server, by node.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    tasks: Mutex<HashMap<usize, Arc<Left>>>,
}

/// One hit whose outputs were left on the server.
#[derive(Debug)]
struct Left {
    id: String,
    key: CacheKey,
    root: PathBuf,
    project_dir: PathBuf,
    task: Task,
    /// Workspace-relative paths of its outputs: those its entry holds, and
    /// those on disk now (an older run's, which a restore would remove).
    paths: Vec<String>,
    /// Whether they have been fetched, or why they could not be; the lock
    /// is held while one task fetches them, so no two fetch them twice.
    fetched: Mutex<Option<Result<(), String>>>,
}

impl Pending {
    /// Records a hit restored without its outputs (`entry` has an empty
    /// archive and lists them).
    pub(crate) fn leave(
        &self,
        node: usize,
        id: &str,
        key: &CacheKey,
        dirs: (PathBuf, PathBuf),
        task: &Task,
        entry: &Entry,
    ) {
        let (root, project_dir) = dirs;
        let anchored = OutputGlobs::split(&task.outputs).has_anchored();
        let prefix = project_dir.strip_prefix(&root).unwrap_or(std::path::Path::new("")).to_path_buf();
        let mut paths: Vec<String> = entry
            .header
            .outputs
            .iter()
            .map(|o| match o.path.strip_prefix(ROOT_MEMBERS).and_then(|p| p.strip_prefix('/')) {
                Some(inner) if anchored => inner.to_string(),
                _ => prefix.join(&o.path).to_string_lossy().into_owned(),
            })
            .collect();
        if let Ok(on_disk) = crate::cache::output_files(&root, &project_dir, task) {
            paths.extend(on_disk.into_iter().map(|(rel, _)| rel));
        }
        paths.sort();
        paths.dedup();
        let left = Left {
            id: id.to_string(),
            key: key.clone(),
            root,
            project_dir,
            task: task.clone(),
            paths,
            fetched: Mutex::new(None),
        };
        self.tasks.lock().expect("pending lock poisoned").insert(node, Arc::new(left));
    }

    /// The task of `node` is being keyed again (a later cycle of `vx
    /// watch`): whatever it left on the server before is not its output
    /// any more, and must never be restored over what it makes now.
    pub(crate) fn forget(&self, node: usize) {
        let mut tasks = self.tasks.lock().expect("pending lock poisoned");
        if !tasks.is_empty() {
            tasks.remove(&node);
        }
    }

    /// The pending tasks among `nodes`.
    fn among(&self, nodes: &[usize]) -> Vec<Arc<Left>> {
        let tasks = self.tasks.lock().expect("pending lock poisoned");
        if tasks.is_empty() {
            return Vec::new();
        }
        nodes.iter().filter_map(|n| tasks.get(n).cloned()).collect()
    }

    /// Fetches and restores the outputs of every pending task among
    /// `upstream`, on the calling (blocking) thread. `Err` names the first
    /// task whose outputs could not be had, and why.
    pub(crate) fn fetch_all(&self, cache: &Cache, upstream: &[usize]) -> Result<(), String> {
        self.among(upstream).iter().try_for_each(|left| left.fetch(cache))
    }

    /// Fetches the outputs of each pending task among `upstream` one of
    /// whose outputs would be an input of `task` in `project_dir`, so that
    /// its key is computed from their bytes.
    pub(crate) fn fetch_inputs(
        &self,
        cache: &Cache,
        upstream: &[usize],
        project_dir: &std::path::Path,
        task: &Task,
    ) -> Result<(), String> {
        for left in self.among(upstream) {
            let feeds = left
                .paths
                .iter()
                .any(|p| cache.inputs.would_be_input(&left.root, project_dir, task, p).unwrap_or(true));
            if feeds {
                left.fetch(cache)?;
            }
        }
        Ok(())
    }
}

impl Left {
    /// Fetches the whole entry (verified, and kept in the local store like
    /// any remote hit) and restores its outputs; once per run.
    fn fetch(&self, cache: &Cache) -> Result<(), String> {
        let mut fetched = self.fetched.lock().expect("fetch lock poisoned");
        if let Some(done) = &*fetched {
            return done.clone();
        }
        let done = match cache.lookup_tiers(&self.key, true) {
            (Lookup::Hit(entry), Tier::Local | Tier::Remote) => cache
                .restore(&self.root, &self.project_dir, &self.task, &entry)
                .map(|_| ())
                .map_err(|why| format!("the outputs of {} could not be restored: {why}", self.id)),
            _ => Err(format!("the outputs of {} (a remote cache hit) could not be fetched", self.id)),
        };
        *fetched = Some(done.clone());
        done
    }
}

/// Every task `node` depends on, directly or not.
pub(crate) fn upstream(graph: &TaskGraph, node: usize) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<usize> = graph.deps[node].clone();
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            stack.extend(&graph.deps[n]);
        }
    }
    let mut out: Vec<usize> = seen.into_iter().collect();
    out.sort_unstable();
    out
}
