//! Compiled glob lists: a task's `inputs` or `outputs` (with `!`
//! negations and extra excludes) relative to one directory, and the
//! literal prefixes a walk of them needs to enter. Keys, `--affected`,
//! `vx watch`, the sandbox's tracer and remote execution all match paths
//! through [`GlobFilter`], so they agree on what a glob names.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// Compiled `include` / `exclude` glob lists relative to one directory.
#[derive(Debug)]
pub struct GlobFilter {
    /// The include list is `**` alone (no `inputs`): every path passes it.
    include_all: bool,
    include: GlobSet,
    exclude: GlobSet,
    /// Literal prefixes to walk (relative); empty string means the base.
    roots: Vec<String>,
}

/// Glob patterns that do not compile.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GlobError {
    #[error("invalid glob `{glob}`: {kind}")]
    Pattern { glob: String, kind: globset::ErrorKind },
    /// The compiled set could not be built from valid patterns.
    #[error(transparent)]
    Set(globset::Error),
}

fn is_meta(part: &str) -> bool {
    part.contains(['*', '?', '[', '{'])
}

impl GlobFilter {
    /// `patterns` may hold `!negations`; `extra_excludes` are plain globs.
    /// `None` for `patterns` means every file.
    pub fn new(patterns: Option<&[String]>, extra_excludes: &[String]) -> Result<GlobFilter, GlobError> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let mut roots = Vec::new();
        let include_all = patterns.is_none();
        let compile = |p: &str| {
            Glob::new(p.trim_start_matches("./"))
                .map_err(|e| GlobError::Pattern { glob: p.to_string(), kind: e.kind().clone() })
        };
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
        let build = |b: GlobSetBuilder| b.build().map_err(GlobError::Set);
        Ok(GlobFilter { include_all, include: build(include)?, exclude: build(exclude)?, roots: kept })
    }

    /// The literal prefixes a walk enters ("" for the base itself).
    pub fn roots(&self) -> &[String] {
        &self.roots
    }

    /// The longest literal prefix that holds `rel` ("" for none).
    pub fn root_of(&self, rel: &str) -> &str {
        self.roots
            .iter()
            .filter(|r| r.is_empty() || rel.strip_prefix(r.as_str()).is_some_and(|rest| rest.starts_with('/')))
            .max_by_key(|r| r.len())
            .map_or("", String::as_str)
    }

    pub fn matches(&self, rel: &str) -> bool {
        let candidate = globset::Candidate::new(rel);
        (self.include_all || self.include.is_match_candidate(&candidate))
            && !self.exclude.is_match_candidate(&candidate)
    }
}

/// The declared input globs of a task that matched none of `files` (its
/// keyed inputs, workspace-relative), as written: a glob that names
/// nothing is usually a typo or a moved directory, and the key silently
/// lacks what the user meant. `project` is the project's directory
/// relative to the root ("" for the root).
pub(crate) fn unmatched_inputs(inputs: &[String], project: &str, files: &[(String, blake3::Hash)]) -> Vec<String> {
    let mut unmatched = Vec::new();
    for glob in inputs.iter().filter(|g| !g.starts_with('!')) {
        let (pattern, base) = match glob.strip_prefix('/') {
            Some(anchored) => (anchored, ""),
            None => (glob.as_str(), project),
        };
        let pattern = pattern.trim_start_matches("./").trim_end_matches('/');
        let Ok(filter) = GlobFilter::new(Some(&[pattern.to_string()]), &[]) else { continue };
        let inside = |path: &str| match base {
            "" => Some(path.to_string()),
            base => path.strip_prefix(base).and_then(|r| r.strip_prefix('/')).map(str::to_string),
        };
        if !files.iter().any(|(path, _)| inside(path).is_some_and(|rel| filter.matches(&rel))) {
            unmatched.push(glob.clone());
        }
    }
    unmatched
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
