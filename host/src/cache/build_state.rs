//! Incremental build state kept beside the outputs rather than in them.
//! vx removes a task's declared outputs before it runs (`clear`); a tool
//! that keeps a record of what it built elsewhere then skips files it
//! believes are still there. `tsc -b` is the common case: with `rootDir`
//! `src` and `outDir` `dist`, its `.tsbuildinfo` lands beside
//! `tsconfig.json`, and after an edit it writes only the changed files
//! into the emptied `dist/`. vx cannot know what such a file means, so it
//! removes nothing: it notices a task that wrote one outside its outputs
//! and says how to keep the two together (docs/init.md).

use std::path::Path;
use std::time::SystemTime;

use crate::config::Task;
use crate::inputs::{GlobFilter, OutputGlobs};

/// `*.tsbuildinfo` files directly in the project directory (tsc's default
/// place) and when each was last written.
#[derive(Debug, Default)]
pub(crate) struct BuildState(Vec<(String, Option<SystemTime>)>);

impl BuildState {
    /// What is there now; nothing for a task without outputs (it loses
    /// nothing to a clear).
    pub(crate) fn of(project_dir: &Path, task: &Task) -> BuildState {
        if task.outputs.is_empty() {
            return BuildState::default();
        }
        let Ok(entries) = std::fs::read_dir(project_dir) else { return BuildState::default() };
        let mut found: Vec<(String, Option<SystemTime>)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                name.ends_with(".tsbuildinfo").then(|| (name, e.metadata().ok().and_then(|m| m.modified().ok())))
            })
            .collect();
        found.sort();
        BuildState(found)
    }

    /// The files `after` holds that are new or rewritten since `self`
    /// and that the task's outputs do not match: state the task wrote
    /// that the next clear will not remove with the outputs it describes.
    pub(crate) fn written_outside(&self, after: &BuildState, task: &Task) -> Vec<String> {
        let outputs = OutputGlobs::split(&task.outputs);
        let filter = GlobFilter::new(Some(&outputs.project), &[]).ok();
        after
            .0
            .iter()
            .filter(|(name, when)| !self.0.iter().any(|(n, w)| n == name && w == when))
            .filter(|(name, _)| !filter.as_ref().is_some_and(|f| f.matches(name)))
            .map(|(name, _)| name.clone())
            .collect()
    }
}
