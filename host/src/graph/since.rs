//! What changed since a base revision, as the graph takes it: the caller
//! asks git (`crate::git`) and hands the answers in, and the graph maps
//! them to projects and tasks without running anything. A changed global
//! input affects every project.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::config::Workspace;
use crate::error::{Error, Result};

/// What changed since the base `--affected` compares against.
pub(crate) struct Since<'a> {
    /// The base as the user named it (`main`, `origin/main`, `HEAD~1`),
    /// for the reasons.
    pub label: &'a str,
    /// Every changed file, absolute.
    pub files: &'a [PathBuf],
    /// The text of the file at a path relative to the workspace root, as
    /// the base has it: `Ok(None)` when the base has no such file, `Err`
    /// with git's own line when git fails otherwise. Asked only for the
    /// root `package.json`, the lockfile and, under a yarn classic lockfile,
    /// the projects' `package.json` files (when one of them changed).
    pub text_at_base: &'a dyn Fn(&str) -> std::result::Result<Option<String>, String>,
}

impl std::fmt::Debug for Since<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Since").field("label", &self.label).field("files", &self.files).finish_non_exhaustive()
    }
}

/// The projects that own `files` (changed files, absolute): the deepest
/// project containing each, or every project when one is a global input.
pub(crate) fn changed_projects(ws: &Workspace, files: &[PathBuf]) -> Result<BTreeSet<usize>> {
    let globals = global_matcher(ws)?;
    let mut out = BTreeSet::new();
    for file in files {
        if let Ok(rel) = file.strip_prefix(&ws.root)
            && globals.is_match(rel)
        {
            return Ok((0..ws.projects.len()).collect());
        }
        if let Some(p) = ws.project_containing(file) {
            out.insert(p);
        }
    }
    Ok(out)
}

pub(super) fn global_matcher(ws: &Workspace) -> Result<globset::GlobSet> {
    let mut builder = globset::GlobSetBuilder::new();
    for g in &ws.global_inputs {
        let glob = globset::Glob::new(g)
            .map_err(|e| Error::config(format!("invalid glob `{g}` in [workspace] global-inputs: {}", e.kind())))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| Error::config(format!("invalid [workspace] global-inputs: {e}")))
}
