//! Which directories `vx watch` watches: every directory of the workspace
//! that a change could matter in, one watch each, never following a
//! symbolic link. Skipped, with everything beneath them: `.git`, `.vx`
//! and `node_modules` at any depth, and directories `.gitignore` excludes
//! (`dist/`, `.next/`, `coverage/`). pnpm's `node_modules` alone holds
//! thousands of directories of links into its store; watching them (as a
//! recursive watch that follows links does) spent the inotify limit on
//! files no task reads and labelled sources with `node_modules` paths.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Directory names never watched, at any depth.
pub(crate) fn skipped(name: &OsStr) -> bool {
    matches!(name.to_str(), Some(".git" | ".vx" | "node_modules"))
}

/// The directories to watch at and below `dir` (itself included), in the
/// workspace whose root is `root` (whose `.gitignore` files apply).
pub(crate) fn watched_dirs(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .follow_links(false)
        .ignore(false)
        .git_global(false)
        .git_exclude(false)
        .git_ignore(true)
        .require_git(false)
        // A directory made during the run is walked from itself: the
        // `.gitignore` files above it, up to the root, still apply.
        .parents(dir != root)
        .filter_entry(|e| !(e.file_type().is_some_and(|t| t.is_dir()) && skipped(e.file_name())))
        .build();
    walk.flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(ignore::DirEntry::into_path)
        .filter(|p| p.starts_with(root))
        .collect()
}

/// The files directly in `dirs` (the directories [`watched_dirs`] found
/// below one made while watching): what was written in them before their
/// watches were added, reported as changes.
pub(crate) fn files_in(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_modules_git_vx_ignored_and_linked_directories_are_not_watched() {
        let tmp = std::env::temp_dir().join(format!("vx-tree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        for dir in [
            "packages/a/src/deep",
            "packages/a/node_modules/.pnpm/x/node_modules/y",
            "node_modules/.bin",
            ".git/objects",
            ".vx/cache",
            "packages/a/dist/assets",
            "shared/src",
        ] {
            std::fs::create_dir_all(tmp.join(dir)).unwrap();
        }
        std::fs::write(tmp.join(".gitignore"), "dist/\n").unwrap();
        std::os::unix::fs::symlink(tmp.join("shared/src"), tmp.join("packages/a/linked")).unwrap();
        let mut got: Vec<String> = watched_dirs(&tmp, &tmp)
            .iter()
            .map(|p| p.strip_prefix(&tmp).unwrap().to_string_lossy().into_owned())
            .collect();
        got.sort();
        assert_eq!(
            got,
            ["", "packages", "packages/a", "packages/a/src", "packages/a/src/deep", "shared", "shared/src"]
        );
        // From a directory made later, the root's .gitignore still applies.
        std::fs::create_dir_all(tmp.join("packages/b/dist")).unwrap();
        std::fs::write(tmp.join("packages/b/x.ts"), "x").unwrap();
        let below = watched_dirs(&tmp, &tmp.join("packages/b"));
        assert_eq!(below, [tmp.join("packages/b")]);
        assert_eq!(files_in(&below), [tmp.join("packages/b/x.ts")]);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
