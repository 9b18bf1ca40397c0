//! Whose lockfile slice moved since the base revision, for `--affected`.
//!
//! A task's key takes its project's slice of the lockfile and the
//! workspace root's (`cache::deps`), not the whole file, so a lockfile
//! change affects only the tasks whose slices moved. The lockfile in use
//! is read twice, at the base (`git show`, asked by the caller) and in the working tree, and
//! each project's slice digest compared; the moved packages are named
//! with `lockfile::diff_slices`, as `vx why` names them.
//!
//! When vx cannot compare slices it answers [`Moves::All`] with why:
//! the lockfile is new, either version does not parse, the choice of
//! lockfile is ambiguous, or a lockfile other than the one in use changed
//! (the package manager changed). Keys then move for every task too, or
//! vx cannot prove they do not.

use std::collections::BTreeMap;

use super::since::Since;
use crate::config::Workspace;
use crate::lockfile::{DepsDigest, LOCKFILE_NAMES, Lockfile, LockfileError, LockfileKind, diff_slices, find_lockfile};

/// What the lockfile changes of a diff move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Moves {
    /// The slices that moved: by project index, the packages that moved
    /// in each; `root`, when the workspace root's own slice moved.
    Slices { file: String, projects: BTreeMap<usize, Vec<String>>, root: Option<Vec<String>> },
    /// Every task, for `why`.
    All { file: String, why: String },
}

/// The lockfile names among `changed` (root-relative paths), in
/// `LOCKFILE_NAMES` order.
pub(super) fn changed_lockfiles<'a>(changed: impl Iterator<Item = &'a str>) -> Vec<&'static str> {
    let changed: Vec<&str> = changed.collect();
    LOCKFILE_NAMES.iter().map(|(name, _)| *name).filter(|name| changed.contains(name)).collect()
}

/// What moved, given the lockfile names that changed (none: `None`).
pub(super) fn lockfile_moves(ws: &Workspace, since: &Since<'_>, names: &[&'static str]) -> Option<Moves> {
    let first = *names.first()?;
    let all = |file: &str, why: String| Some(Moves::All { file: file.to_string(), why });
    let (kind, path) = match find_lockfile(&ws.root) {
        Ok(Some(found)) => found,
        Ok(None) => return all(first, "no lockfile is in use now, so no task's key takes one".to_string()),
        Err(e) => return all(first, relative(ws, &e)),
    };
    let file = path.file_name().map_or_else(|| first.to_string(), |n| n.to_string_lossy().into_owned());
    if let Some(other) = names.iter().find(|n| **n != file && !ws.root.join(n).exists()) {
        return all(other, format!("it was removed and {file} is the lockfile in use: the package manager changed"));
    }
    if !names.contains(&file.as_str()) {
        // Only leftovers changed, which the `packageManager` field tells
        // vx to ignore (the keys do).
        return None;
    }
    let old = match (since.text_at_base)(&file) {
        Ok(Some(text)) => text,
        Ok(None) => return all(&file, format!("it is new since {}", since.label)),
        Err(why) => return all(&file, why),
    };
    let dirs: Vec<&str> = ws.projects.iter().map(|p| p.rel_dir.as_str()).chain(["."]).collect();
    let manifests = match manifests_at_base(ws, since, kind, &old) {
        Ok(manifests) => manifests,
        Err(why) => return all(&file, why),
    };
    let old_root = manifests.as_ref().map_or(ws.root.as_path(), tempfile::TempDir::path);
    // Both versions are parsed and sliced at once, one on another thread:
    // they are the whole cost of a lockfile change.
    let (old, new) = std::thread::scope(|scope| {
        let new = scope.spawn(|| Lockfile::parse_file(&ws.root, kind, &path).map(|l| Sliced::new(l, &dirs)));
        let old = Lockfile::parse_text(old_root, kind, &path, &old).map(|l| Sliced::new(l, &dirs));
        (old, new.join().expect("the lockfile parse does not panic"))
    });
    let old = match old {
        Ok(old) => old,
        Err(e) => return all(&file, format!("vx cannot read it as it was at {}: {}", since.label, relative(ws, &e))),
    };
    let new = match new {
        Ok(new) => new,
        Err(e) => return all(&file, format!("{}; every key takes the whole file", relative(ws, &e))),
    };
    Some(compare(ws, file, &old, &new))
}

/// yarn classic's lockfile lists no workspace and none of their ranges:
/// those are in the `package.json` files, which the parser reads. When one
/// of them changed too (an upgrade edits both), the base's lockfile is
/// read against the base's manifests, copied into a scratch directory, or
/// a project would resolve its new ranges in the old lockfile and its
/// moves be misnamed. `None`: read against the working tree.
fn manifests_at_base(
    ws: &Workspace,
    since: &Since<'_>,
    kind: LockfileKind,
    old: &str,
) -> std::result::Result<Option<tempfile::TempDir>, String> {
    // Cheapest first: the header check reads the whole lockfile.
    let manifest_changed = since.files.iter().any(|f| f.file_name().is_some_and(|n| n == "package.json"));
    if kind != LockfileKind::Yarn || !manifest_changed || !crate::lockfile::yarn::is_classic(old) {
        return Ok(None);
    }
    let scratch = tempfile::tempdir().map_err(|e| format!("could not make a scratch directory: {e}"))?;
    let dirs = ws.projects.iter().map(|p| p.rel_dir.as_str()).chain([""]);
    for dir in dirs {
        let rel = if dir.is_empty() || dir == "." { "package.json".to_string() } else { format!("{dir}/package.json") };
        let Some(text) = (since.text_at_base)(&rel)? else { continue };
        let to = scratch.path().join(&rel);
        let written = to.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&to, text));
        written.map_err(|e| format!("could not copy {rel} as it was at {}: {e}", since.label))?;
    }
    Ok(Some(scratch))
}

/// A parsed lockfile and the slice digest of each directory asked for,
/// in the order asked (every project's, then the root's).
struct Sliced {
    lockfile: Lockfile,
    digests: Vec<DepsDigest>,
}

impl Sliced {
    fn new(lockfile: Lockfile, dirs: &[&str]) -> Sliced {
        let digests = dirs.iter().map(|d| lockfile.slice_digest(d)).collect();
        Sliced { lockfile, digests }
    }
}

/// The slices of `old` and `new` compared project by project, then the
/// root's (the last digest). The root's slice is in every other
/// project's key, whether or not the root is a project itself.
fn compare(ws: &Workspace, file: String, old: &Sliced, new: &Sliced) -> Moves {
    let moved = |i: usize, rel_dir: &str| {
        (old.digests[i] != new.digests[i]).then(|| {
            diff_slices(&old.lockfile.slice(rel_dir), &new.lockfile.slice(rel_dir))
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        })
    };
    let projects: BTreeMap<usize, Vec<String>> =
        ws.projects.iter().enumerate().filter_map(|(p, project)| Some((p, moved(p, &project.rel_dir)?))).collect();
    let root = moved(ws.projects.len(), ".");
    Moves::Slices { file, projects, root }
}

/// The error's text with the workspace root taken off its paths.
fn relative(ws: &Workspace, e: &LockfileError) -> String {
    let root = format!("{}/", ws.root.display());
    crate::error::one_line(&e.to_string().replace(&root, ""))
}
