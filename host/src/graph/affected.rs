//! What changed against a git revision: files that differ between the
//! merge base and the working tree (committed, staged, unstaged), plus
//! untracked files that are not ignored.
//!
//! `[REV]` filters and `vx show --affected` map them to projects (the
//! deepest project containing each); `--affected` maps them to tasks
//! ([`affected_tasks`]): a task is affected when a changed file is one of
//! its inputs (project-relative or root-anchored), its project's
//! `vx.toml` or `package.json`, a global input, the root `vx.toml` or the
//! lockfile, or when a task it depends on is affected. A changed global
//! input affects every project and task.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::TaskGraph;
use crate::cache::InputMatcher;
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

/// The nodes of `graph` that the changed `files` affect, with every node
/// that depends on one of them (see the module docs).
pub fn affected_tasks(ws: &Workspace, graph: &TaskGraph, files: &[PathBuf]) -> Result<BTreeSet<usize>> {
    let globals = global_matcher(ws)?;
    let in_root: Vec<(&PathBuf, String)> =
        files.iter().filter_map(|f| Some((f, f.strip_prefix(&ws.root).ok()?.to_string_lossy().into_owned()))).collect();
    let everything = in_root.iter().any(|(_, rel)| {
        globals.is_match(rel) || rel == "vx.toml" || crate::lockfile::LOCKFILE_NAMES.iter().any(|(n, _)| rel == n)
    });
    if everything {
        return Ok((0..graph.len()).collect());
    }
    let owners: Vec<Option<usize>> = in_root.iter().map(|(f, _)| ws.project_containing(f)).collect();
    let mut out = BTreeSet::new();
    for (n, node) in graph.nodes.iter().enumerate() {
        let project = &ws.projects[node.project];
        let task = &project.tasks[&node.id.task];
        let inputs = InputMatcher::new(task.inputs.as_deref(), &task.outputs)?;
        let hit = in_root.iter().zip(&owners).any(|((file, rel), owner)| {
            let own = (*owner == Some(node.project)).then(|| file.strip_prefix(&project.dir).ok()).flatten();
            let own = own.map(|r| r.to_string_lossy().into_owned());
            is_manifest(own.as_deref()) || inputs.matches(own.as_deref(), rel)
        });
        if hit {
            out.insert(n);
        }
    }
    let mut stack: Vec<usize> = out.iter().copied().collect();
    while let Some(n) = stack.pop() {
        for &d in &graph.dependents[n] {
            if out.insert(d) {
                stack.push(d);
            }
        }
    }
    Ok(out)
}

/// A project's own `vx.toml` or `package.json`: a change there can change
/// any of its tasks (its definition, its key), whatever their inputs.
fn is_manifest(in_project: Option<&str>) -> bool {
    matches!(in_project, Some("vx.toml" | "package.json"))
}

/// What `--affected` compared against, for `nothing affected since REV`.
pub fn base_label(ws: &Workspace, rev: Option<&str>) -> String {
    match rev {
        Some(rev) => rev.to_string(),
        None if merge_base(ws, "main").is_ok() => "main".to_string(),
        None => "master".to_string(),
    }
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

/// Every file changed since `rev` (see the module docs), absolute.
pub fn changed_files(ws: &Workspace, rev: Option<&str>) -> Result<Vec<PathBuf>> {
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
