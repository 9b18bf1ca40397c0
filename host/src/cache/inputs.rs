//! Which files are a task's inputs, and which are its outputs on disk.
//!
//! Inputs: the files of the project matching the task's `inputs` globs
//! (every file when none are declared), minus `!` patterns, minus files
//! matching its `outputs`, minus what `.gitignore` (and `.ignore`) exclude,
//! minus `.git`, `.vx`, `node_modules` and nested projects. Only the literal
//! directory prefix of each glob is walked (`src/**` walks `src/`), so a
//! task with narrow inputs never lists the whole project.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// A file under a base directory: its path relative to that directory
/// (with `/`) and its absolute path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileRef {
    pub rel: String,
    pub abs: PathBuf,
}

/// Compiled `include` / `exclude` glob lists relative to one directory.
#[derive(Debug)]
pub struct GlobFilter {
    include: GlobSet,
    exclude: GlobSet,
    /// Literal prefixes to walk (relative); empty string means the base.
    roots: Vec<String>,
}

fn is_meta(part: &str) -> bool {
    part.contains(['*', '?', '[', '{'])
}

impl GlobFilter {
    /// `patterns` may hold `!negations`; `extra_excludes` are plain globs.
    /// `None` for `patterns` means every file.
    pub fn new(patterns: Option<&[String]>, extra_excludes: &[String]) -> Result<GlobFilter, String> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let mut roots = Vec::new();
        let compile =
            |p: &str| Glob::new(p.trim_start_matches("./")).map_err(|e| format!("invalid glob `{p}`: {}", e.kind()));
        match patterns {
            None => {
                include.add(compile("**")?);
                roots.push(String::new());
            }
            Some(patterns) => {
                for p in patterns {
                    if let Some(neg) = p.strip_prefix('!') {
                        exclude.add(compile(neg)?);
                        continue;
                    }
                    let p = p.trim_start_matches("./").trim_end_matches('/');
                    include.add(compile(p)?);
                    // A literal path may name a directory: take everything in it.
                    if !is_meta(p) {
                        include.add(compile(&format!("{p}/**"))?);
                    }
                    let prefix: Vec<&str> = p.split('/').take_while(|c| !is_meta(c)).collect();
                    roots.push(prefix.join("/"));
                }
            }
        }
        for p in extra_excludes {
            exclude.add(compile(p.trim_start_matches('!'))?);
        }
        roots.sort();
        roots.dedup();
        let mut kept: Vec<String> = Vec::new();
        for r in roots {
            if !kept.iter().any(|k| k.is_empty() || r == *k || r.starts_with(&format!("{k}/"))) {
                kept.push(r);
            }
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| e.to_string());
        Ok(GlobFilter { include: build(include)?, exclude: build(exclude)?, roots: kept })
    }

    pub fn matches(&self, rel: &str) -> bool {
        self.include.is_match(rel) && !self.exclude.is_match(rel)
    }
}

/// Lists the files under `base` that pass `filter`, sorted.
///
/// `respect_ignore` applies `.gitignore`/`.ignore` (inputs); outputs are
/// usually ignored by git, so they are listed without it. `skip_dirs` are
/// absolute directories never entered (nested projects).
pub fn list_files(
    base: &Path,
    filter: &GlobFilter,
    ignores: Option<&Arc<Vec<Gitignore>>>,
    skip_dirs: &[PathBuf],
) -> Vec<FileRef> {
    let respect_ignore = ignores.is_some();
    let mut out = Vec::new();
    for root in &filter.roots {
        let start = if root.is_empty() { base.to_path_buf() } else { base.join(root) };
        let Ok(meta) = std::fs::symlink_metadata(&start) else { continue };
        if !meta.is_dir() {
            if filter.matches(root) {
                out.push(FileRef { rel: root.clone(), abs: start });
            }
            continue;
        }
        let skip = skip_dirs.to_vec();
        let ancestors = ignores.cloned();
        // Ignore files inside the walked tree are read by the walker; those
        // above it come pre-parsed (`ancestors`), so a run with hundreds of
        // tasks parses the root `.gitignore` once, not once per task.
        let walker = ignore::WalkBuilder::new(&start)
            .standard_filters(false)
            .hidden(false)
            .git_ignore(respect_ignore)
            .ignore(respect_ignore)
            .parents(false)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                let name = e.file_name();
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if is_dir
                    && (name == ".git" || name == ".vx" || name == "node_modules" || skip.iter().any(|s| s == e.path()))
                {
                    return false;
                }
                !ancestors.as_ref().is_some_and(|a| ignored_by(a, e.path(), is_dir))
            })
            .build();
        for entry in walker.flatten() {
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(base) else { continue };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if filter.matches(&rel) {
                out.push(FileRef { rel, abs: entry.path().to_path_buf() });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether the deepest ignore file that has an opinion on `path` ignores it.
fn ignored_by(ancestors: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    for gi in ancestors.iter().rev() {
        if !path.starts_with(gi.path()) {
            continue;
        }
        match gi.matched_path_or_any_parents(path, is_dir) {
            ignore::Match::Ignore(_) => return true,
            ignore::Match::Whitelist(_) => return false,
            ignore::Match::None => {}
        }
    }
    false
}

/// The ignore files of one directory (`.gitignore`, `.ignore`), and
/// `.git/info/exclude` when `with_exclude` (the workspace root).
pub fn dir_ignores(dir: &Path, with_exclude: bool) -> Vec<Gitignore> {
    let mut files = Vec::new();
    if with_exclude {
        files.push(dir.join(".git/info/exclude"));
    }
    files.push(dir.join(".gitignore"));
    files.push(dir.join(".ignore"));
    files
        .into_iter()
        .filter(|f| f.is_file())
        .filter_map(|f| {
            let mut b = GitignoreBuilder::new(dir);
            b.add(&f);
            b.build().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_only_literal_prefixes() {
        let f = GlobFilter::new(Some(&["src/**".into(), "src/lib/*.ts".into(), "tsconfig.json".into()]), &[]).unwrap();
        assert_eq!(f.roots, vec!["src".to_string(), "tsconfig.json".to_string()]);
        let all = GlobFilter::new(None, &["dist/**".into()]).unwrap();
        assert_eq!(all.roots, vec![String::new()]);
        assert!(all.matches("src/a.ts"));
        assert!(!all.matches("dist/a.js"));
    }

    #[test]
    fn negations_and_directories() {
        let f = GlobFilter::new(Some(&["src".into(), "!**/*.test.ts".into()]), &[]).unwrap();
        assert!(f.matches("src/a.ts"));
        assert!(!f.matches("src/a.test.ts"));
        assert!(!f.matches("lib/a.ts"));
    }
}
