//! Which projects changed against a git revision: files that differ between
//! the merge base and the working tree (committed, staged, unstaged), plus
//! untracked files that are not ignored, mapped to the deepest project that
//! contains them. A changed global input affects every project.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::guard::run_tool;

/// Projects with files changed since `rev`; with `None`, since the merge
/// base of HEAD with `main` (else `master`).
pub fn changed_projects(ws: &Workspace, rev: Option<&str>) -> Result<BTreeSet<usize>> {
    let files = changed_files(ws, rev)?;
    let globals = global_matcher(ws)?;
    let mut out = BTreeSet::new();
    for file in &files {
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

fn global_matcher(ws: &Workspace) -> Result<globset::GlobSet> {
    let mut builder = globset::GlobSetBuilder::new();
    for g in &ws.global_inputs {
        let glob = globset::Glob::new(g)
            .map_err(|e| Error::config(format!("invalid glob `{g}` in [workspace] global-inputs: {}", e.kind())))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| Error::config(format!("invalid [workspace] global-inputs: {e}")))
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

fn changed_files(ws: &Workspace, rev: Option<&str>) -> Result<Vec<PathBuf>> {
    let top = git(ws, &["rev-parse", "--show-toplevel"]).map_err(|e| {
        Error::usage(format!("{} is not inside a git repository", ws.root.display()))
            .with_hint(format!("--affected compares against git history ({})", e.message))
    })?;
    let top = PathBuf::from(top.trim());
    let base = match rev {
        Some(rev) => merge_base(ws, rev)
            .map_err(|e| e.with_hint(format!("check that `{rev}` names a commit or branch (git rev-parse {rev})")))?,
        None => ["main", "master"].iter().find_map(|b| merge_base(ws, b).ok()).ok_or_else(|| {
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
    Ok(files)
}

fn merge_base(ws: &Workspace, rev: &str) -> Result<String> {
    let out = git(ws, &["merge-base", "HEAD", rev])?;
    Ok(out.trim().to_string())
}
