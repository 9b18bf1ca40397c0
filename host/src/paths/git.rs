//! Where a directory's git repository keeps its files: `DIR/.git` when it
//! is a directory, else the directory a `.git` file names (a worktree, a
//! submodule). Shared by the commit a run records (`git::head`) and
//! the files outputs never touch (`cache::tracked`).

use std::path::{Path, PathBuf};

/// The git directory of a repository whose top level is `dir`, if it is.
pub(crate) fn git_dir_at(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let pointer = super::read_regular_string(&dot_git, super::STATE_LIMIT).ok()?;
    let target = pointer.trim().strip_prefix("gitdir:")?.trim();
    Some(dir.join(target))
}
