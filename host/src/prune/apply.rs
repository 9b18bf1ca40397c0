//! A prune from start to end: the kept projects, the root files edited
//! for them and the lockfile cut down, all computed first, then the output
//! written in the layout asked for.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use super::{copy, lockfile, root, select};
use crate::config::Workspace;
use crate::error::{Error, Result};

/// What to prune, and where to.
#[derive(Debug, Clone)]
pub(crate) struct PruneOptions {
    /// Names of the projects to keep (with their dependencies).
    pub projects: Vec<String>,
    /// The output directory: absent or empty.
    pub out: PathBuf,
    /// Turborepo's `json/` + `full/` layout.
    pub docker: bool,
}

/// What a prune wrote.
#[derive(Debug, Clone)]
pub(crate) struct Pruned {
    /// The kept projects' names, sorted.
    pub projects: Vec<String>,
    /// The pruned lockfile's name, when the workspace has one.
    pub lockfile: Option<String>,
}

pub(crate) fn prune(ws: &Workspace, opts: &PruneOptions) -> Result<Pruned> {
    let keep = select::select(ws, &opts.projects)?;
    let kept_dirs: BTreeSet<String> =
        std::iter::once(".".to_string()).chain(keep.iter().map(|&p| ws.projects[p].rel_dir.clone())).collect();
    let lock = lockfile::prune_lockfile(&ws.root, &kept_dirs)?;
    let root_edit = |name: &str, edit: &dyn Fn(&str) -> Result<String>| -> Result<Option<String>> {
        match std::fs::read_to_string(ws.root.join(name)) {
            Ok(text) => edit(&text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(format!("read {}", ws.root.join(name).display()), e)),
        }
    };
    let package_json = root_edit("package.json", &|t| {
        root::package_json(t, &kept_dirs).map_err(|e| Error::config(format!("read the root package.json: {e}")))
    })?;
    let pnpm_workspace = root_edit("pnpm-workspace.yaml", &|t| Ok(root::pnpm_workspace(t, &kept_dirs)))?;

    let out = prepare_out(&opts.out)?;
    let (full, json) = if opts.docker { (out.join("full"), Some(out.join("json"))) } else { (out.clone(), None) };
    // Other projects nested in a kept one are copied, or pruned, on their own.
    let mut skip: HashSet<PathBuf> = ws.projects.iter().map(|p| p.dir.clone()).collect();
    skip.insert(out.clone());
    for &p in &keep {
        let project = &ws.projects[p];
        if project.rel_dir == "." {
            continue;
        }
        copy::copy_project(&project.dir, &full.join(&project.rel_dir), &skip)?;
        let manifest = project.dir.join("package.json");
        if let Some(json) = &json
            && manifest.is_file()
        {
            copy::copy_file(&manifest, &json.join(&project.rel_dir).join("package.json"))?;
        }
    }
    let install_roots: Vec<&Path> = std::iter::once(full.as_path()).chain(json.as_deref()).collect();
    for dest in &install_roots {
        if let Some(text) = &package_json {
            copy::write_file(&dest.join("package.json"), text)?;
        }
        if let Some(text) = &pnpm_workspace {
            copy::write_file(&dest.join("pnpm-workspace.yaml"), text)?;
        }
        for name in copy::INSTALL_FILES {
            let src = ws.root.join(name);
            if src.is_file() {
                copy::copy_file(&src, &dest.join(name))?;
            }
        }
        for dir in copy::INSTALL_DIRS {
            let src = ws.root.join(dir);
            if src.is_dir() {
                copy::copy_tree(&src, &dest.join(dir))?;
            }
        }
    }
    for name in copy::VX_FILES {
        let src = ws.root.join(name);
        if src.is_file() {
            copy::copy_file(&src, &full.join(name))?;
        }
    }
    if let Some(lock) = &lock {
        // As turbo: at the top and, with --docker, in json/ for the install.
        for dest in std::iter::once(&out).chain(json.as_ref()) {
            copy::write_file(&dest.join(&lock.name), &lock.text)?;
        }
    }
    let projects = keep.iter().map(|&p| ws.projects[p].name.clone()).collect();
    Ok(Pruned { projects, lockfile: lock.map(|l| l.name) })
}

/// Creates the output directory, refusing one that has anything in it.
fn prepare_out(out: &Path) -> Result<PathBuf> {
    if let Ok(mut entries) = std::fs::read_dir(out)
        && entries.next().is_some()
    {
        return Err(Error::usage(format!("--out {} is not empty", out.display()))
            .with_hint("remove it, or give --out a new or empty directory"));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(format!("create {}", out.display()), e))?;
    out.canonicalize().map_err(|e| Error::io(format!("resolve {}", out.display()), e))
}
