//! Which changed paths matter, and which tasks they affect.
//!
//! Never a trigger: `.git`, `.vx`, the cache directory, `node_modules`,
//! and files ignored by `.gitignore` (the root's and each project's). A
//! task's own outputs never trigger it (so a task writing its outputs
//! never loops), but they are a change like any other to a task whose
//! inputs they are: one `lint:fix` task with `outputs = ["src/**"]` must
//! not silence every edit of `src/` for `build`. A
//! `vx.toml`, `package.json`, `pnpm-workspace.yaml` or lockfile is a
//! config change: the workspace is read again.
//!
//! A change affects a task when the path lies in the task's project (the
//! deepest project containing it) and matches the task's inputs, or
//! matches one of its root-anchored (`/…`) inputs wherever it lies; a
//! changed global input affects every task. The tasks that depend on an affected
//! task are affected too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ignore::gitignore::Gitignore;

use crate::config::Workspace;
use crate::graph::TaskGraph;
use crate::inputs::{GlobFilter, InputMatcher, OutputGlobs};

/// Files whose change re-reads the workspace, and every lockfile too
/// (`lockfile::LOCKFILE_NAMES`, the one list of their names): each
/// project's slice of one is part of its tasks' keys, so a re-read plan
/// re-keys every task, and only those whose slice moved run.
const CONFIG_FILES: [&str; 5] = ["vx.toml", "turbo.json", "turbo.jsonc", "package.json", "pnpm-workspace.yaml"];

#[derive(Debug)]
pub(crate) struct ChangeFilter {
    root: PathBuf,
    cache_dir: PathBuf,
    /// `.gitignore` matchers, each rooted at its own directory.
    gitignores: Vec<(PathBuf, Gitignore)>,
}

fn gitignore_at(dir: &Path) -> Option<(PathBuf, Gitignore)> {
    let file = dir.join(".gitignore");
    if !file.is_file() {
        return None;
    }
    crate::inputs::ignore_file(dir, &file).map(|gi| (dir.to_path_buf(), gi))
}

impl ChangeFilter {
    pub(crate) fn new(ws: &Workspace, cache_dir: &Path) -> ChangeFilter {
        let mut gitignores: Vec<(PathBuf, Gitignore)> = gitignore_at(&ws.root).into_iter().collect();
        gitignores.extend(ws.projects.iter().filter(|p| p.dir != ws.root).filter_map(|p| gitignore_at(&p.dir)));
        ChangeFilter { root: ws.root.clone(), cache_dir: cache_dir.to_path_buf(), gitignores }
    }

    /// A workspace config file (outside `node_modules`).
    pub(crate) fn is_config(&self, path: &Path) -> bool {
        path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            CONFIG_FILES.contains(&n) || crate::lockfile::LOCKFILE_NAMES.iter().any(|(lockfile, _)| *lockfile == n)
        }) && !self.in_skipped_dir(path)
    }

    fn in_skipped_dir(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else { return true };
        rel.components().any(|c| super::tree::skipped(c.as_os_str())) || path.starts_with(&self.cache_dir)
    }

    /// Whether a change to `path` can never affect a task.
    pub(crate) fn ignored(&self, path: &Path) -> bool {
        if self.in_skipped_dir(path) {
            return true;
        }
        let is_dir = path.is_dir();
        self.gitignores
            .iter()
            .any(|(dir, gi)| path.starts_with(dir) && gi.matched_path_or_any_parents(path, is_dir).is_ignore())
    }
}

/// A task's own outputs, which never trigger it: `dist` itself as well as
/// `dist/**` (a task that re-creates its output directory), project
/// relative or root-anchored.
struct OwnOutputs {
    project: Option<GlobFilter>,
    anchored: Option<GlobFilter>,
}

impl OwnOutputs {
    fn new(outputs: &[String]) -> OwnOutputs {
        let split = OutputGlobs::split(outputs);
        let filter =
            |globs: Vec<String>| (!globs.is_empty()).then(|| GlobFilter::new(Some(&globs), &[]).ok()).flatten();
        OwnOutputs { project: filter(split.project), anchored: filter(split.anchored) }
    }

    fn covers(&self, in_project: Option<&str>, in_root: &str) -> bool {
        let hit = |f: &Option<GlobFilter>, rel: &str| {
            f.as_ref().is_some_and(|f| f.matches(rel) || f.matches(&format!("{rel}/x")))
        };
        in_project.is_some_and(|rel| hit(&self.project, rel)) || hit(&self.anchored, in_root)
    }
}

/// What a change does: the nodes of `graph` it affects (with their
/// dependents), and the changed paths that caused it.
#[derive(Debug, Default)]
pub(crate) struct Affected {
    pub nodes: BTreeSet<usize>,
    pub causes: BTreeSet<PathBuf>,
}

/// The nodes of `graph` that the changed `paths` affect. A directory is
/// never a change by itself: the files in it report their own events.
pub(crate) fn affected_nodes(ws: &Workspace, graph: &TaskGraph, paths: &BTreeSet<PathBuf>) -> Affected {
    let rel = |p: &Path, base: &Path| p.strip_prefix(base).ok().map(|r| r.to_string_lossy().replace('\\', "/"));
    let files: Vec<&PathBuf> = paths.iter().filter(|p| !p.is_dir()).collect();
    let mut out = Affected::default();
    if let Some(global) =
        (!ws.global_inputs.is_empty()).then(|| GlobFilter::new(Some(&ws.global_inputs), &[]).ok()).flatten()
    {
        out.causes.extend(
            files.iter().filter(|p| rel(p, &ws.root).is_some_and(|r| global.matches(&r))).map(|p| (*p).clone()),
        );
        if !out.causes.is_empty() {
            out.nodes.extend(0..graph.len());
            return out;
        }
    }
    let owners: Vec<(Option<usize>, &PathBuf, String)> =
        files.iter().filter_map(|p| Some((ws.project_containing(p), *p, rel(p, &ws.root)?))).collect();
    for (n, node) in graph.nodes.iter().enumerate() {
        let project = &ws.projects[node.project];
        let task = &project.tasks[&node.id.task];
        let Ok(inputs) = InputMatcher::new(task.inputs.as_deref(), &task.outputs) else { continue };
        let own = OwnOutputs::new(&task.outputs);
        for (owner, path, in_root) in &owners {
            let in_project = (*owner == Some(node.project)).then(|| rel(path, &project.dir)).flatten();
            if inputs.matches(in_project.as_deref(), in_root) && !own.covers(in_project.as_deref(), in_root) {
                out.nodes.insert(n);
                out.causes.insert((*path).clone());
            }
        }
    }
    let mut stack: Vec<usize> = out.nodes.iter().copied().collect();
    while let Some(n) = stack.pop() {
        for &d in &graph.dependents[n] {
            if out.nodes.insert(d) {
                stack.push(d);
            }
        }
    }
    out
}
