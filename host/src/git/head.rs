//! The branch and commit a workspace is at, read from git's files (no
//! `git` process: every run records them in history, and a spawn would be
//! a measurable part of a fully cached run).
//!
//! `.git` is found from the workspace root upwards; a `.git` file (a
//! worktree or a submodule) points at the real directory, whose
//! `commondir` holds the shared refs. `HEAD` is a symbolic ref
//! (`ref: refs/heads/main`: the branch, resolved through the loose ref or
//! `packed-refs`) or a detached commit. Anything unreadable is `None`:
//! this is a label for history, never an input of a key.

use std::path::Path;

/// Where HEAD is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Head {
    /// The branch HEAD names, `None` when detached or not a repository.
    pub branch: Option<String>,
    /// The commit HEAD resolves to, `None` before the first commit.
    pub commit: Option<String>,
}

/// HEAD of the repository holding `root`.
pub(crate) fn read_head(root: &Path) -> Head {
    let Some(git_dir) = root.ancestors().find_map(crate::paths::git_dir_at) else { return Head::default() };
    let common = crate::paths::read_regular_string(&git_dir.join("commondir"), crate::paths::STATE_LIMIT)
        .ok()
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|| git_dir.clone());
    let Ok(head) = crate::paths::read_regular_string(&git_dir.join("HEAD"), crate::paths::STATE_LIMIT) else {
        return Head::default();
    };
    let head = head.trim();
    match head.strip_prefix("ref:").map(str::trim) {
        Some(reference) => Head {
            branch: Some(reference.strip_prefix("refs/heads/").unwrap_or(reference).to_string()),
            commit: resolve(&git_dir, reference).or_else(|| resolve(&common, reference)),
        },
        None => Head { branch: None, commit: is_object_id(head).then(|| head.to_string()) },
    }
}

/// A ref's commit: its loose file, else its line in `packed-refs`.
fn resolve(git_dir: &Path, reference: &str) -> Option<String> {
    if let Ok(loose) = crate::paths::read_regular_string(&git_dir.join(reference), crate::paths::STATE_LIMIT) {
        let id = loose.trim();
        return is_object_id(id).then(|| id.to_string());
    }
    let packed = crate::paths::read_regular_string(&git_dir.join("packed-refs"), crate::paths::STATE_LIMIT).ok()?;
    packed.lines().find_map(|line| {
        let (id, name) = line.split_once(' ')?;
        (name == reference && is_object_id(id)).then(|| id.to_string())
    })
}

/// A SHA-1 or SHA-256 object id in hex.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("vx-git-head-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("repo/.git/refs/heads")).unwrap();
        dir
    }

    #[test]
    fn a_branch_resolves_through_its_loose_ref_or_packed_refs() {
        let dir = scratch("branch");
        let git = dir.join("repo/.git");
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(dir.join("repo/packages/app")).unwrap();
        let head = || read_head(&dir.join("repo/packages/app"));
        assert_eq!(head(), Head { branch: Some("main".into()), commit: None }, "before the first commit");
        std::fs::write(git.join("packed-refs"), format!("# pack-refs with: peeled\n{B} refs/heads/main\n")).unwrap();
        assert_eq!(head().commit.as_deref(), Some(B));
        std::fs::write(git.join("refs/heads/main"), format!("{A}\n")).unwrap();
        assert_eq!(head().commit.as_deref(), Some(A), "a loose ref wins over the packed one");
        std::fs::write(git.join("HEAD"), format!("{B}\n")).unwrap();
        assert_eq!(head(), Head { branch: None, commit: Some(B.into()) }, "detached");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_worktree_reads_its_own_head_and_the_shared_refs() {
        let dir = scratch("worktree");
        let common = dir.join("repo/.git");
        std::fs::write(common.join("refs/heads/topic"), format!("{A}\n")).unwrap();
        let own = common.join("worktrees/wt");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("HEAD"), "ref: refs/heads/topic\n").unwrap();
        std::fs::write(own.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(dir.join("wt")).unwrap();
        std::fs::write(dir.join("wt/.git"), format!("gitdir: {}\n", own.display())).unwrap();
        assert_eq!(read_head(&dir.join("wt")), Head { branch: Some("topic".into()), commit: Some(A.into()) });
        assert_eq!(read_head(Path::new("/")), Head::default(), "no repository");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
