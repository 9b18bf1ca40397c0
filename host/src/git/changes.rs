//! What changed against a git revision: files that differ between the
//! merge base and the working tree (committed, staged, unstaged), plus
//! untracked files that are not ignored, and a file's text at the base.
//!
//! git answers here and the graph is handed its answers (`graph::Since`,
//! and the changed files of a `[REV]` filter): `[REV]` filters and
//! `vx show --affected` map them to projects (the deepest project
//! containing each), `--affected` to tasks with the reason for each
//! (`graph::affected_tasks`).

use std::path::PathBuf;

use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::guard::run_tool;

/// What `--affected` compared against, for `nothing affected since REV`.
pub(crate) fn base_label(ws: &Workspace, rev: Option<&str>) -> String {
    match rev {
        Some(rev) => rev.to_string(),
        None if merge_base(ws, "main").is_ok() => "main".to_string(),
        None => "master".to_string(),
    }
}

fn git(ws: &Workspace, args: &[&str]) -> Result<String> {
    let out = run_tool("git", args, &ws.root).map_err(|e| {
        Error::usage(format!("--affected and `[REV]` filters need git, which failed to start: {e}"))
            .with_hint("install git, or select projects with --filter NAME instead")
    })?;
    if !out.success {
        let msg = out.stderr.lines().next().unwrap_or("").trim().to_string();
        return Err(Error::usage(format!("git {} failed: {msg}", args.join(" "))));
    }
    Ok(out.stdout)
}

/// What changed since a base revision.
#[derive(Debug, Clone)]
pub(crate) struct Changes {
    /// The merge base, a commit id.
    pub base: String,
    /// The base as the user named it (`main`, `origin/main`, `HEAD~1`).
    pub label: String,
    /// Every changed file, absolute.
    pub files: Vec<PathBuf>,
}

/// Every file changed since `rev` (see the module docs), absolute.
pub(crate) fn changed_files(ws: &Workspace, rev: Option<&str>) -> Result<Vec<PathBuf>> {
    changes(ws, rev).map(|c| c.files)
}

/// What changed since `rev`: with `None`, since the merge base of HEAD
/// with `main` (else `master`).
pub(crate) fn changes(ws: &Workspace, rev: Option<&str>) -> Result<Changes> {
    let top = git(ws, &["rev-parse", "--show-toplevel"]).map_err(|e| {
        Error::usage(format!("{} is not inside a git repository", ws.root.display()))
            .with_hint(format!("--affected compares against git history ({})", e.message))
    })?;
    let top = PathBuf::from(top.trim());
    let (base, label) = match rev {
        Some(rev) => (
            merge_base(ws, rev).map_err(|e| {
                e.with_hint(format!("check that `{rev}` names a commit or branch (git rev-parse {rev})"))
            })?,
            rev.to_string(),
        ),
        None => ["main", "master"]
            .iter()
            .find_map(|b| merge_base(ws, b).ok().map(|base| (base, b.to_string())))
            .ok_or_else(|| {
                Error::usage("--affected found neither a `main` nor a `master` branch to compare against")
                    .with_hint("name the base explicitly: --affected=REV")
            })?,
    };
    let mut files = Vec::new();
    for line in git(ws, &["diff", "--name-only", "--no-renames", "-z", &base])?.split('\0') {
        if !line.is_empty() {
            files.push(top.join(line));
        }
    }
    for line in git(ws, &["ls-files", "--others", "--exclude-standard", "--full-name", "-z", ":/"])?.split('\0') {
        if !line.is_empty() {
            files.push(top.join(line));
        }
    }
    Ok(Changes { base, label, files })
}

/// The text of the file at `rel` (relative to the workspace root) in the
/// commit `base`; `Ok(None)` when the commit has no such file, `Err` with
/// git's own line when git fails otherwise.
pub(crate) fn text_at(ws: &Workspace, base: &str, rel: &str) -> std::result::Result<Option<String>, String> {
    let spec = format!("{base}:./{rel}");
    let out = run_tool("git", &["show", &spec], &ws.root).map_err(|e| format!("git failed to start: {e}"))?;
    if out.success {
        let text = out.stdout;
        return Ok(Some(text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text)));
    }
    let line = out.stderr.lines().next().unwrap_or("").trim().to_string();
    if line.contains("does not exist") || line.contains("exists on disk, but not in") {
        return Ok(None);
    }
    Err(format!("git show {spec} failed: {line}"))
}

fn merge_base(ws: &Workspace, rev: &str) -> Result<String> {
    let out = git(ws, &["merge-base", "HEAD", rev])?;
    Ok(out.trim().to_string())
}
