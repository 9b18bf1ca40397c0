//! Copying a project's files and the root's into the output.
//!
//! A project's "full source" is what git would see: its directory walked
//! with `.gitignore` (and `.ignore`) rules applied whether or not the
//! workspace is a git repository, hidden files included, and never
//! `node_modules`, `.git`, `.vx`, a nested project of its own (that one is
//! copied, or pruned, on its own account), or the output directory.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Files at the root that an install reads, copied when present.
pub(super) const INSTALL_FILES: &[&str] =
    &[".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".node-version", ".nvmrc"];

/// Directories at the root that an install reads: yarn's pinned release,
/// its plugins and its patches.
pub(super) const INSTALL_DIRS: &[&str] = &[".yarn/releases", ".yarn/plugins", ".yarn/patches"];

/// Files at the root that vx reads, for the full copy.
pub(super) const VX_FILES: &[&str] = &["vx.toml", "vx.lock"];

/// Copies the files of the project at `src` to `dest`, skipping the
/// directories in `skip` (other projects and the output).
pub(super) fn copy_project(src: &Path, dest: &Path, skip: &HashSet<PathBuf>) -> Result<()> {
    let skip = skip.clone();
    let root = src.to_path_buf();
    let walk = ignore::WalkBuilder::new(src)
        .hidden(false)
        .require_git(false)
        .git_global(false)
        .filter_entry(move |e| {
            let name = e.file_name();
            if name == "node_modules" || name == ".git" || name == ".vx" {
                return false;
            }
            e.path() == root || !skip.contains(e.path())
        })
        .build();
    for entry in walk {
        let entry = entry.map_err(|e| Error::usage(format!("walk {}: {e}", src.display())))?;
        let Some(kind) = entry.file_type() else { continue };
        let rel = entry.path().strip_prefix(src).expect("the walk stays under its root");
        if kind.is_file() {
            copy_file(entry.path(), &dest.join(rel))?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(entry.path()).map_err(|e| io("read the link", entry.path(), e))?;
            let to = dest.join(rel);
            create_parent(&to)?;
            std::os::unix::fs::symlink(&target, &to).map_err(|e| io("create the link", &to, e))?;
        }
    }
    Ok(())
}

/// Copies every file under `src` (a root directory such as `.yarn/releases`).
pub(super) fn copy_tree(src: &Path, dest: &Path) -> Result<()> {
    for entry in walkdir(src)? {
        let rel = entry.strip_prefix(src).expect("the walk stays under its root");
        copy_file(&entry, &dest.join(rel))?;
    }
    Ok(())
}

fn walkdir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| io("read", &d, e))? {
            let entry = entry.map_err(|e| io("read", &d, e))?;
            let path = entry.path();
            if entry.file_type().map_err(|e| io("read", &path, e))?.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    Ok(files)
}

pub(super) fn copy_file(from: &Path, to: &Path) -> Result<()> {
    create_parent(to)?;
    std::fs::copy(from, to).map_err(|e| io("copy", from, e))?;
    Ok(())
}

pub(super) fn write_file(to: &Path, text: &str) -> Result<()> {
    create_parent(to)?;
    std::fs::write(to, text).map_err(|e| io("write", to, e))
}

fn create_parent(path: &Path) -> Result<()> {
    let parent = path.parent().expect("an output file has a parent");
    std::fs::create_dir_all(parent).map_err(|e| io("create", parent, e))
}

fn io(action: &str, path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("{action} {}", path.display()), e)
}
