//! Outputs are owned: before a task executes, the files its `outputs`
//! match are removed, so what is on disk afterwards (and what the cache
//! archives) is exactly what this run produced. A stale `dist/old.js` from
//! an earlier build would otherwise be archived into the new entry and
//! restored forever after. A restore removes them likewise
//! (`archive::unpack`).
//!
//! Two exceptions keep this from destroying work: a file that the task's
//! declared `inputs` also match is the task's source, edited in place (a
//! formatter declaring `src/**` both ways), and is left alone; and a file
//! git tracks is never removed (`super::tracked`): it is left in place and
//! the clear reports it, so the task's result is not stored.
//!
//! Every removal goes through a directory handle that never follows a
//! link (`paths::Contained`): an output glob below a linked directory
//! (`dist` → `../src`) cannot remove what the link leads to. Directories
//! a removal leaves empty go too: a stale `dist/x/` would otherwise catch
//! a file `dist/x` the next build writes (the model test found it).
//!
//! Root-anchored outputs (`/gen/web/**`) are cleared where they lie, under
//! the workspace root; config refuses one without a fixed first directory,
//! so this never walks the whole workspace.

use std::path::{Path, PathBuf};

use super::tracked::Tracked;
use crate::config::Task;
use crate::inputs::{GlobError, GlobFilter, InputMatcher, Listing, OutputGlobs, list_files};
use crate::paths::Contained;

/// Why a task's old outputs could not all be removed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ClearError {
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error("could not remove the old output {path}: {source}")]
    Remove { path: String, source: std::io::Error },
    /// Output globs matched files git tracks: they were left in place.
    #[error(
        "its outputs match {first}{}, which git tracks: vx left {} in place; narrow `outputs` so that it matches only what the task writes",
        if *.more > 0 { format!(" and {} more", .more) } else { String::new() },
        if *.more > 0 { "them" } else { "it" }
    )]
    Tracked { first: String, more: usize },
}

/// Removes the files that `task`'s outputs match: under `project_dir`
/// (never entering `nested` project directories) and, for root-anchored
/// outputs, under `root`. Returns how many; files git tracks are left in
/// place and make it [`ClearError::Tracked`] once the rest are removed.
pub(crate) fn clear_outputs(
    root: &Path,
    project_dir: &Path,
    task: &Task,
    nested: &[PathBuf],
) -> Result<usize, ClearError> {
    if task.outputs.is_empty() {
        return Ok(0);
    }
    let outputs = OutputGlobs::split(&task.outputs);
    let sources = task.inputs.as_deref().map(|i| InputMatcher::new(Some(i), &[])).transpose()?;
    let prefix = project_dir.strip_prefix(root).ok().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let in_root = |rel: &str| if prefix.is_empty() { rel.to_string() } else { format!("{prefix}/{rel}") };
    let in_project = |rel: &str| -> Option<String> {
        if prefix.is_empty() {
            Some(rel.to_string())
        } else {
            rel.strip_prefix(&format!("{prefix}/")).map(str::to_string)
        }
    };
    let mut doomed = Vec::new();
    let project_filter = GlobFilter::new(Some(&outputs.project), &[])?;
    let anchored_filter =
        if outputs.has_anchored() { Some(GlobFilter::new(Some(&outputs.anchored), &[])?) } else { None };
    for f in list_files(project_dir, &project_filter, Listing::Outputs, nested) {
        let kept = sources.as_ref().is_some_and(|s| s.matches(Some(&f.rel), &in_root(&f.rel)));
        if !kept {
            doomed.push((false, in_root(&f.rel), f.rel));
        }
    }
    if let Some(anchored) = &anchored_filter {
        for f in list_files(root, anchored, Listing::Outputs, &[]) {
            let kept = sources.as_ref().is_some_and(|s| s.matches(in_project(&f.rel).as_deref(), &f.rel));
            if !kept {
                doomed.push((true, f.rel.clone(), f.rel));
            }
        }
    }
    if doomed.is_empty() {
        return Ok(0);
    }
    let tracked = Tracked::of(root);
    let (kept, doomed): (Vec<_>, Vec<_>) = doomed.into_iter().partition(|(_, in_ws, _)| tracked.contains(in_ws));
    let open = |dir: &Path| {
        Contained::open(dir).map_err(|source| ClearError::Remove { path: dir.display().to_string(), source })
    };
    let (project, root) = (open(project_dir)?, open(root)?);
    let mut removed = 0;
    for (anchored, _, rel) in doomed {
        let dir = if anchored { &root } else { &project };
        match dir.remove_file(&rel) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(ClearError::Remove { path: rel, source }),
        }
        let keep = match (anchored, &anchored_filter) {
            (true, Some(filter)) => filter.root_of(&rel),
            _ => project_filter.root_of(&rel),
        };
        dir.remove_empty_parents(&rel, keep);
    }
    if let Some((_, first, _)) = kept.first() {
        return Err(ClearError::Tracked { first: first.clone(), more: kept.len() - 1 });
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Command, TaskOrigin};
    use crate::lockfile::testutil::ScratchDir;

    fn task(inputs: Option<&[&str]>, outputs: &[&str]) -> Task {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Task {
            inputs: inputs.map(strings),
            outputs: strings(outputs),
            cache: true,
            ..Task::plain("build", Command::Shell("true".into()), TaskOrigin::Config)
        }
    }

    fn tree(name: &str, files: &[&str]) -> ScratchDir {
        let dir = ScratchDir::new(name);
        for f in files {
            dir.write(f, f);
        }
        dir
    }

    #[test]
    fn removes_what_outputs_match_and_nothing_else() {
        let dir = tree("clear-outputs", &["dist/a.js", "dist/old/b.js", "src/a.ts", "README.md"]);
        let removed = clear_outputs(dir.path(), dir.path(), &task(None, &["dist/**"]), &[]).unwrap();
        assert_eq!(removed, 2);
        assert!(!dir.path().join("dist/a.js").exists());
        assert!(!dir.path().join("dist/old/b.js").exists());
        assert!(dir.path().join("src/a.ts").exists());
        assert!(dir.path().join("README.md").exists());
    }

    #[test]
    fn a_file_that_is_also_a_declared_input_is_kept() {
        let dir = tree("clear-keeps-inputs", &["src/a.ts", "src/gen/b.ts"]);
        let removed = clear_outputs(dir.path(), dir.path(), &task(Some(&["src/a.ts"]), &["src/**"]), &[]).unwrap();
        assert_eq!(removed, 1, "src/gen/b.ts is an output only");
        assert!(dir.path().join("src/a.ts").exists());
        assert!(!dir.path().join("src/gen/b.ts").exists());
    }

    #[test]
    fn root_anchored_outputs_are_cleared_under_the_root() {
        let dir = tree(
            "clear-anchored",
            &[
                "gen/web/api.ts",
                "gen/web/keep.ts",
                "gen/shared/types.ts",
                "packages/web/dist/a.js",
                "packages/web/src/a.ts",
            ],
        );
        let project = dir.path().join("packages/web");
        let t = task(Some(&["src/**", "/gen/web/keep.ts"]), &["dist/**", "/gen/web/**"]);
        let removed = clear_outputs(dir.path(), &project, &t, &[]).unwrap();
        assert_eq!(removed, 2, "dist/a.js and gen/web/api.ts");
        assert!(!dir.path().join("gen/web/api.ts").exists());
        assert!(!project.join("dist/a.js").exists());
        assert!(dir.path().join("gen/web/keep.ts").exists(), "a declared input");
        assert!(dir.path().join("gen/shared/types.ts").exists(), "not an output");
        assert!(project.join("src/a.ts").exists());
    }
}
