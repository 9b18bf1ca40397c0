//! The files git tracks, which vx never deletes or overwrites.
//!
//! An output glob can match a source: `outputs = ["src/**/*.js"]` for a
//! compiler that emits in place, beside a hand-written `src/legacy.js`.
//! Which files those are can only be seen on disk, so clearing outputs
//! before a run leaves a tracked file in place (and the task is then not
//! cached), and a restore that would remove or write one is refused.
//!
//! Read from git's index with `gix-index` when the workspace lies in a
//! repository whose `.git` is a directory and whose index is whole; else
//! (a worktree, a split index) from `git ls-files -z`. Outside a
//! repository, or where neither works, nothing is tracked. The set is read
//! once per process and again only when the index file changes (a
//! `vx watch` session outlives many commits), and only on the paths that
//! remove or write outputs, never on a fully cached run.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::inputs::FileStat;

/// Workspace-relative paths (with `/`) of the files git tracks.
#[derive(Debug, Default)]
pub(crate) struct Tracked {
    files: HashSet<String>,
    /// Directories a sparse index keeps as one entry: everything beneath
    /// them is tracked.
    sparse_dirs: Vec<String>,
}

impl Tracked {
    /// The tracked files of the workspace at `root`, read at most once per
    /// change of git's index.
    pub(crate) fn of(root: &Path) -> Arc<Tracked> {
        type Seen = Mutex<Vec<(PathBuf, Option<FileStat>, Arc<Tracked>)>>;
        static SEEN: OnceLock<Seen> = OnceLock::new();
        let index = find_repository(root).map(|(git_dir, _)| git_dir.join("index"));
        let stamp = index.as_deref().and_then(|i| std::fs::metadata(i).ok()).map(|m| FileStat::of(&m));
        let mut seen = SEEN.get_or_init(Mutex::default).lock().expect("tracked set poisoned");
        if let Some((_, _, set)) = seen.iter().find(|(r, s, _)| r == root && *s == stamp) {
            return set.clone();
        }
        let set = Arc::new(Tracked::read(root));
        seen.retain(|(r, _, _)| r != root);
        seen.push((root.to_path_buf(), stamp, set.clone()));
        set
    }

    /// Whether git tracks the file at workspace-relative `rel`.
    pub(crate) fn contains(&self, rel: &str) -> bool {
        self.files.contains(rel)
            || self.sparse_dirs.iter().any(|d| rel.strip_prefix(d.as_str()).is_some_and(|r| r.starts_with('/')))
    }

    fn read(root: &Path) -> Tracked {
        let Some((git_dir, top)) = find_repository(root) else { return Tracked::default() };
        let Ok(prefix) = root.strip_prefix(&top) else { return Tracked::default() };
        let prefix = prefix.to_string_lossy().into_owned();
        if git_dir == top.join(".git")
            && let Some(set) = from_index(&git_dir.join("index"), &prefix)
        {
            return set;
        }
        from_ls_files(root)
    }
}

/// The repository holding `root`: its git directory and its top level.
/// A `.git` file (a worktree, a submodule) names its git directory.
fn find_repository(root: &Path) -> Option<(PathBuf, PathBuf)> {
    root.ancestors().find_map(|dir| Some((crate::paths::git_dir_at(dir)?, dir.to_path_buf())))
}

/// The tracked files under `prefix` (the workspace within the
/// repository), from the index itself; `None` where it cannot say alone.
fn from_index(path: &Path, prefix: &str) -> Option<Tracked> {
    let index =
        gix_index::File::at(path, gix_index::hash::Kind::Sha1, true, gix_index::decode::Options::default()).ok()?;
    if index.link().is_some() {
        return None;
    }
    let mut set = Tracked::default();
    for entry in index.entries() {
        let name = entry.path(&index);
        let Ok(name) = std::str::from_utf8(name) else { continue };
        let rel = if prefix.is_empty() {
            name
        } else {
            match name.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) {
                Some(rel) => rel,
                None => continue,
            }
        };
        if entry.mode == gix_index::entry::Mode::DIR {
            set.sparse_dirs.push(rel.trim_end_matches('/').to_string());
        } else if entry.mode != gix_index::entry::Mode::COMMIT {
            set.files.insert(rel.to_string());
        }
    }
    Some(set)
}

/// The tracked files under `root`, as git lists them.
fn from_ls_files(root: &Path) -> Tracked {
    let listed = crate::guard::run_tool("git", &["ls-files", "-z"], root);
    let files = match listed {
        Ok(out) if out.success => out.stdout.split('\0').filter(|f| !f.is_empty()).map(str::to_string).collect(),
        _ => HashSet::new(),
    };
    Tracked { files, sparse_dirs: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::testutil::ScratchDir;

    fn git(dir: &Path, args: &[&str]) {
        let out = crate::guard::run_tool("git", args, dir).expect("git runs");
        assert!(out.success, "git {args:?}: {}", out.stderr);
    }

    #[test]
    fn lists_what_git_tracks_relative_to_the_workspace() {
        let repo = ScratchDir::new("tracked-repo");
        for f in ["ws/src/a.js", "ws/src/gen.js", "ws/dist/b.js", "other/c.js"] {
            repo.write(f, f);
        }
        git(repo.path(), &["init", "-q"]);
        git(repo.path(), &["add", "ws/src/a.js", "other/c.js"]);
        let set = Tracked::read(&repo.path().join("ws"));
        assert!(set.contains("src/a.js"));
        assert!(!set.contains("src/gen.js"), "untracked");
        assert!(!set.contains("dist/b.js"));
        assert!(!set.contains("../other/c.js") && !set.contains("other/c.js"), "outside the workspace");
    }

    #[test]
    fn a_new_commit_is_seen_by_the_same_process() {
        let repo = ScratchDir::new("tracked-fresh");
        repo.write("a.js", "a");
        repo.write("b.js", "b");
        git(repo.path(), &["init", "-q"]);
        git(repo.path(), &["add", "a.js"]);
        assert!(!Tracked::of(repo.path()).contains("b.js"));
        git(repo.path(), &["add", "b.js"]);
        assert!(Tracked::of(repo.path()).contains("b.js"), "the index changed, so it is read again");
    }

    #[test]
    fn outside_a_repository_nothing_is_tracked() {
        let dir = ScratchDir::new("tracked-none");
        dir.write("a.js", "a");
        assert!(!Tracked::read(dir.path()).contains("a.js"));
    }
}
