//! Whether a file would be one of a task's inputs, asked of a path that
//! may not be on disk: the outputs of a dependency whose cache hit left
//! them on the remote (`--download=needed`). When one of them would be an
//! input of a later task, its key depends on their bytes, so they are
//! fetched before it is keyed; otherwise the key cannot see them and they
//! stay where they are.
//!
//! The answer mirrors the walk of `walk::list_files` step by step: the
//! same glob filters and literal prefixes, the same directories never
//! entered (`.git`, `.vx`, `node_modules`, nested projects), and the same
//! ignore files read at the same points, from the directories that exist
//! (and, as the walk, none for declared `inputs`, which name ignored files
//! too).

use std::path::Path;
use std::sync::Arc;

use ignore::gitignore::Gitignore;

use super::anchored::{InputGlobs, OutputGlobs};
use super::fingerprints::Fingerprints;
use super::glob::{GlobError, GlobFilter};
use super::ignores::{chained, dir_ignores, ignored_by};
use crate::config::Task;

impl Fingerprints {
    /// Whether the file at `rel` (workspace-relative, `/`-separated) would
    /// be an input of `task` in `project_dir`, were it there.
    pub(crate) fn would_be_input(
        &self,
        root: &Path,
        project_dir: &Path,
        task: &Task,
        rel: &str,
    ) -> Result<bool, GlobError> {
        let globs = InputGlobs::split(task.inputs.as_deref());
        let outputs = OutputGlobs::split(&task.outputs);
        if outputs.has_anchored() && self.filter(Some(&outputs.anchored), &[])?.matches(rel) {
            return Ok(false);
        }
        let abs = root.join(rel);
        if let Ok(inner) = abs.strip_prefix(project_dir) {
            let inner = inner.to_string_lossy().replace('\\', "/");
            let filter = self.filter(globs.project.as_deref(), &outputs.project)?;
            let nested = self.nested.get(project_dir).map_or(&[][..], Vec::as_slice);
            if self.walk_reaches(project_dir, &filter, &inner, nested, task.inputs.is_none()) {
                return Ok(true);
            }
        }
        if globs.has_anchored() {
            let filter = self.filter(Some(&globs.anchored), &[])?;
            if self.walk_reaches(root, &filter, rel, &[], false) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a walk of `base` through `filter` would list `rel`, with
    /// ignore files applied when `respect_ignore`.
    fn walk_reaches(
        &self,
        base: &Path,
        filter: &GlobFilter,
        rel: &str,
        skip: &[std::path::PathBuf],
        respect_ignore: bool,
    ) -> bool {
        if !filter.matches(rel) {
            return false;
        }
        for start in filter.roots() {
            if start == rel {
                // A literal file: listed as it is, without ignore files.
                return true;
            }
            let below = match start.is_empty() {
                true => rel,
                false => match rel.strip_prefix(start.as_str()).and_then(|r| r.strip_prefix('/')) {
                    Some(below) => below,
                    None => continue,
                },
            };
            let mut dir = if start.is_empty() { base.to_path_buf() } else { base.join(start) };
            let mut chain: Arc<Vec<Gitignore>> = self.ignores_for(base);
            if !start.is_empty() {
                chain = with_own(&chain, &dir);
            }
            let parts: Vec<&str> = below.split('/').collect();
            let (file, dirs) = parts.split_last().expect("split yields one part");
            let mut entered = true;
            for name in dirs {
                let next = dir.join(name);
                let skipped = matches!(*name, ".git" | ".vx" | "node_modules") || skip.contains(&next);
                if skipped || (respect_ignore && ignored_by(&chain, &next, true)) {
                    entered = false;
                    break;
                }
                chain = with_own(&chain, &next);
                dir = next;
            }
            if entered && !(respect_ignore && ignored_by(&chain, &dir.join(file), false)) {
                return true;
            }
        }
        false
    }
}

/// `chain` with `dir`'s own ignore files after it, as the walk reads them
/// on entering `dir` (none when it does not exist).
fn with_own(chain: &Arc<Vec<Gitignore>>, dir: &Path) -> Arc<Vec<Gitignore>> {
    chained(chain, dir_ignores(dir, false))
}
