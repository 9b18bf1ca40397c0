//! A task's input list made from git's view instead of the directories:
//! the same files [`super::inputs::list_files`] finds, by the same rules,
//! with no `read_dir` and no `lstat` of a clean file.
//!
//! Each rule of the walk is applied to git's paths as the walk applies it
//! to the entries it reads: `.git`, `.vx` and `node_modules` directories
//! and nested projects are not entered; a directory ignored by the ignore
//! files above it is not entered; each entered directory's own `.gitignore`
//! and `.ignore` apply below it; a file must pass the globs and the ignore
//! files. A path git does not look into ([`Seen::Opaque`]) that the walk
//! would take or enter makes the list `None`: walk it instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::Gitignore;

use super::gitview::{GitView, Seen};
use super::hasher::FileStat;
use super::inputs::{FileRef, GlobFilter, chained, ignored_by, join_rel};

type Chain = Arc<Vec<Gitignore>>;

/// What a git listing needs of the walk's world.
pub struct GitWalk<'a> {
    pub view: &'a GitView,
    /// The workspace root (git's paths are relative to it).
    pub root: &'a Path,
    /// Each directory's own ignore files, read once per run.
    pub own_ignores: &'a (dyn Fn(&Path) -> Vec<Gitignore> + Sync),
}

impl GitWalk<'_> {
    /// [`super::inputs::list_files`] from git's paths; `None` when git
    /// cannot say (walk instead).
    pub fn list(
        &self,
        base: &Path,
        filter: &GlobFilter,
        ignores: Option<&Chain>,
        skip_dirs: &[PathBuf],
    ) -> Option<Vec<FileRef>> {
        let base_rel = base.strip_prefix(self.root).ok()?.to_str()?;
        let mut out = Vec::new();
        for root in filter.roots() {
            let start_rel = join_rel(base_rel, root);
            let paths = self.view.under(&start_rel);
            if let [(path, seen)] = paths
                && *path == start_rel
            {
                // The root names a file (or git cannot see past it).
                if filter.matches(root) {
                    take(root, self.root.join(path), *seen, &mut out)?;
                }
                continue;
            }
            let start = base.join(root);
            let respect = ignores.is_some();
            let mut chain = ignores.cloned().unwrap_or_default();
            if respect && !root.is_empty() {
                chain = chained(&chain, (self.own_ignores)(&start));
            }
            let part = Part {
                own_ignores: self.own_ignores,
                base_rel,
                start_rel: &start_rel,
                start: &start,
                chain,
                filter,
                respect,
                skip_dirs,
            };
            out.extend(part.list_parallel(paths)?);
        }
        out.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        out.dedup_by(|a, b| a.abs == b.abs);
        Some(out)
    }
}

/// Git's paths under one literal root of a walk, listed as the walk
/// would list that root.
struct Part<'a> {
    own_ignores: &'a (dyn Fn(&Path) -> Vec<Gitignore> + Sync),
    base_rel: &'a str,
    start_rel: &'a str,
    start: &'a Path,
    chain: Chain,
    filter: &'a GlobFilter,
    /// Whether ignore files count (inputs; outputs are listed without).
    respect: bool,
    skip_dirs: &'a [PathBuf],
}

/// Paths one thread takes; a big tree is split over the cores, as a walk
/// of it would be.
const PER_THREAD: usize = 8192;

impl Part<'_> {
    fn list_parallel(&self, paths: &[(String, Seen)]) -> Option<Vec<FileRef>> {
        let threads = crate::sys::cores().min(paths.len() / PER_THREAD);
        if threads <= 1 {
            return self.list(paths);
        }
        let chunk = paths.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = paths.chunks(chunk).map(|part| scope.spawn(move || self.list(part))).collect();
            let mut out = Vec::with_capacity(paths.len());
            for part in parts {
                out.extend(part.join().expect("git listing thread panicked")?);
            }
            Some(out)
        })
    }

    fn list(&self, paths: &[(String, Seen)]) -> Option<Vec<FileRef>> {
        let mut dirs = Dirs {
            own_ignores: self.own_ignores,
            respect: self.respect,
            skip_dirs: self.skip_dirs,
            known: HashMap::new(),
        };
        let mut out = Vec::with_capacity(paths.len());
        for (path, seen) in paths {
            let sub = path[self.start_rel.len()..].trim_start_matches('/');
            let (parent, name) = sub.rsplit_once('/').unwrap_or(("", sub));
            let Some(chain) = dirs.chain(self.start, &self.chain, parent) else { continue };
            let abs = self.start.join(sub);
            let is_dir = matches!(seen, Seen::Opaque { dir: true });
            if is_dir && (name == ".git" || name == ".vx" || name == "node_modules" || self.skip_dirs.contains(&abs)) {
                continue;
            }
            if self.respect && ignored_by(&chain, &abs, is_dir) {
                continue;
            }
            if is_dir {
                // The walk would enter a directory git did not.
                return None;
            }
            let rel = path[self.base_rel.len()..].trim_start_matches('/');
            if self.filter.matches(rel) {
                take(rel, abs, *seen, &mut out)?;
            }
        }
        Some(out)
    }
}

/// Directories of one walk root: the ignore chain that applies inside
/// each, or `None` when the walk would not enter it.
struct Dirs<'a> {
    own_ignores: &'a (dyn Fn(&Path) -> Vec<Gitignore> + Sync),
    respect: bool,
    skip_dirs: &'a [PathBuf],
    known: HashMap<String, Option<Chain>>,
}

impl Dirs<'_> {
    fn chain(&mut self, start: &Path, top: &Chain, dir: &str) -> Option<Chain> {
        if dir.is_empty() {
            return Some(top.clone());
        }
        if let Some(known) = self.known.get(dir) {
            return known.clone();
        }
        let (parent, name) = dir.rsplit_once('/').unwrap_or(("", dir));
        let found = self.chain(start, top, parent).and_then(|above| {
            let abs = start.join(dir);
            let skipped = name == ".git" || name == ".vx" || name == "node_modules" || self.skip_dirs.contains(&abs);
            if skipped || (self.respect && ignored_by(&above, &abs, true)) {
                return None;
            }
            Some(if self.respect { chained(&above, (self.own_ignores)(&abs)) } else { above })
        });
        self.known.insert(dir.to_string(), found.clone());
        found
    }
}

/// Adds one file git knows: a clean one as its blob, a dirty one with its
/// `lstat` (gone since git looked: not there, as on a walk).
fn take(rel: &str, abs: PathBuf, seen: Seen, out: &mut Vec<FileRef>) -> Option<()> {
    let rel = rel.to_string();
    match seen {
        Seen::Opaque { .. } => return None,
        Seen::Clean { blob, stat } => out.push(FileRef { rel, abs, stat: None, git: Some((blob, stat)) }),
        Seen::Dirty => {
            let Ok(meta) = std::fs::symlink_metadata(&abs) else { return Some(()) };
            if !meta.is_dir() {
                out.push(FileRef { rel, abs, stat: Some(FileStat::of(&meta)), git: None });
            }
        }
    }
    Some(())
}
