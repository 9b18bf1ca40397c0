//! Project selection: `--filter` in the pnpm/turbo syntax, `--affected`,
//! and scoping to the project the user stands in.
//!
//! A filter is `[!][...[^]]CORE[[^]...]` where CORE is a name glob
//! (`web`, `@org/*`), a path glob (`./apps/*`, `{apps/*}`), or `[REV]`
//! (projects with files changed since REV). `...` before CORE adds
//! dependents, after it dependencies; `^` leaves the matched projects out.
//! Filters are unioned; `!` filters are subtracted from the union (or from
//! every project when only exclusions are given).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::since::changed_projects;
use crate::config::{Workspace, nearest};
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Core {
    Name(String),
    Path(String),
    Changed(String),
    /// `tag:GLOB`: the projects with a tag the glob matches.
    Tag(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    text: String,
    exclude: bool,
    core: Core,
    dependents: bool,
    dependencies: bool,
    skip_self: bool,
}

/// The longest `--filter` value taken.
const MAX_FILTER: usize = 1024;

impl Filter {
    /// Parses one `--filter` value.
    pub(crate) fn parse(text: &str) -> Result<Filter> {
        let bad = |why: &str| {
            Error::usage(format!("invalid --filter `{text}`: {why}"))
                .with_hint("write it like `web`, `@org/*`, `./apps/*`, `web...`, `...web`, `[main]` or `!web`; see `vx run --help`")
        };
        // A name or path glob this long names no project: refused, so a
        // pasted blob is a usage error rather than an empty run.
        if text.len() > MAX_FILTER {
            return Err(bad(&format!("longer than {MAX_FILTER} bytes")));
        }
        let mut rest = text.trim();
        let exclude = rest.starts_with('!');
        rest = rest.trim_start_matches('!');
        let mut skip_self = false;
        let dependents = rest.starts_with("...");
        if dependents {
            rest = &rest[3..];
            if let Some(r) = rest.strip_prefix('^') {
                rest = r;
                skip_self = true;
            }
        }
        let dependencies = rest.ends_with("...");
        if dependencies {
            rest = &rest[..rest.len() - 3];
            if let Some(r) = rest.strip_suffix('^') {
                rest = r;
                skip_self = true;
            }
        }
        if rest.is_empty() {
            return Err(bad("nothing to match"));
        }
        let core = if let Some(rev) = rest.strip_prefix('[') {
            let rev = rev.strip_suffix(']').ok_or_else(|| bad("`[` without `]`"))?;
            if rev.is_empty() {
                return Err(bad("empty revision in `[]`"));
            }
            Core::Changed(rev.to_string())
        } else if let Some(path) = rest.strip_prefix('{') {
            Core::Path(path.strip_suffix('}').ok_or_else(|| bad("`{` without `}`"))?.to_string())
        } else if rest == "." || rest == ".." || rest.starts_with("./") || rest.starts_with("../") {
            Core::Path(rest.to_string())
        } else if let Some(tag) = rest.strip_prefix("tag:") {
            if tag.is_empty() {
                return Err(bad("empty tag in `tag:`"));
            }
            Core::Tag(tag.to_string())
        } else {
            Core::Name(rest.to_string())
        };
        if let Core::Name(n) | Core::Path(n) | Core::Tag(n) = &core {
            globset::Glob::new(n).map_err(|e| bad(&e.kind().to_string()))?;
        }
        Ok(Filter { text: text.to_string(), exclude, core, dependents, dependencies, skip_self })
    }

    fn matches(&self, ws: &Workspace, cwd: &Path, changed_since: &ChangedSince<'_>) -> Result<BTreeSet<usize>> {
        let base: BTreeSet<usize> = match &self.core {
            Core::Name(pattern) => {
                let glob = globset::Glob::new(pattern).expect("checked in parse").compile_matcher();
                let mut set: BTreeSet<usize> =
                    ws.projects.iter().enumerate().filter(|(_, p)| glob.is_match(&p.name)).map(|(i, _)| i).collect();
                // `--filter //`: the root project, as Turborepo spells it.
                if pattern == crate::config::ROOT_ALIAS {
                    set.extend(ws.project_index(pattern));
                }
                if set.is_empty() {
                    // As in Turborepo, a filter that selects nothing is an
                    // empty selection, not an error (a CI job filtering a
                    // package that a branch removed still passes); it is
                    // said once, with the nearest name.
                    let hint = nearest(pattern, ws.projects.iter().map(|p| p.name.as_str())).map_or_else(
                        || "run `vx show` to list the projects".to_string(),
                        |n| format!("did you mean `{n}`?"),
                    );
                    tracing::warn!("--filter `{}` matches no project; {hint}", crate::error::one_line(&self.text));
                }
                set
            }
            Core::Path(pattern) => {
                let rel = relative_to_root(ws, cwd, pattern)?;
                let glob = globset::GlobBuilder::new(&rel)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| Error::usage(format!("invalid --filter `{}`: {e}", self.text)))?
                    .compile_matcher();
                ws.projects.iter().enumerate().filter(|(_, p)| glob.is_match(&p.rel_dir)).map(|(i, _)| i).collect()
            }
            Core::Changed(rev) => changed_projects(ws, &changed_since(rev)?)?,
            Core::Tag(pattern) => {
                let glob = globset::Glob::new(pattern).expect("checked in parse").compile_matcher();
                let set: BTreeSet<usize> = ws
                    .projects
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.tags.iter().any(|t| glob.is_match(t)))
                    .map(|(i, _)| i)
                    .collect();
                if set.is_empty() {
                    tracing::warn!("--filter `{}` matches no project's tags", crate::error::one_line(&self.text));
                }
                set
            }
        };
        let mut out = if self.skip_self { BTreeSet::new() } else { base.clone() };
        if self.dependencies {
            out.extend(closure(&base, |p| ws.projects[p].deps.clone()));
        }
        if self.dependents {
            let reverse = reverse_deps(ws);
            out.extend(closure(&base, |p| reverse[p].clone()));
        }
        Ok(out)
    }
}

/// The files changed since a revision (absolute), for `[REV]` filters:
/// the caller asks git (`crate::git::changed_files`).
pub(crate) type ChangedSince<'a> = dyn Fn(&str) -> Result<Vec<PathBuf>> + 'a;

/// Applies the filters: the union of the inclusions minus the exclusions.
/// `changed_since` is asked for each `[REV]` filter's revision.
pub(crate) fn apply_filters(
    ws: &Workspace,
    cwd: &Path,
    filters: &[Filter],
    changed_since: &ChangedSince<'_>,
) -> Result<BTreeSet<usize>> {
    let mut included: Option<BTreeSet<usize>> = None;
    let mut excluded = BTreeSet::new();
    for filter in filters {
        let set = filter.matches(ws, cwd, changed_since)?;
        if filter.exclude {
            excluded.extend(set);
        } else {
            included.get_or_insert_with(BTreeSet::new).extend(set);
        }
    }
    let mut selected = included.unwrap_or_else(|| (0..ws.projects.len()).collect());
    selected.retain(|p| !excluded.contains(p));
    Ok(selected)
}

/// Every project reachable from `start` by `next`, `start` excluded.
fn closure(start: &BTreeSet<usize>, next: impl Fn(usize) -> Vec<usize>) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<usize> = start.iter().flat_map(|&p| next(p)).collect();
    while let Some(p) = stack.pop() {
        if seen.insert(p) {
            stack.extend(next(p));
        }
    }
    seen
}

pub(crate) fn reverse_deps(ws: &Workspace) -> Vec<Vec<usize>> {
    let mut reverse = vec![Vec::new(); ws.projects.len()];
    for (i, p) in ws.projects.iter().enumerate() {
        for &d in &p.deps {
            reverse[d].push(i);
        }
    }
    reverse
}

/// `projects` plus every project that depends on one of them, transitively.
pub(crate) fn with_dependents(ws: &Workspace, projects: &BTreeSet<usize>) -> BTreeSet<usize> {
    let reverse = reverse_deps(ws);
    let mut out = projects.clone();
    out.extend(closure(projects, |p| reverse[p].clone()));
    out
}

/// A path glob typed relative to `cwd`, as a glob relative to the root.
fn relative_to_root(ws: &Workspace, cwd: &Path, pattern: &str) -> Result<String> {
    let joined = crate::paths::normalize_lexically(&cwd.join(pattern));
    let rel = joined.strip_prefix(&ws.root).map_err(|_| {
        Error::usage(format!("--filter path `{pattern}` is outside the workspace {}", ws.root.display()))
            .with_hint("path filters are relative to the current directory and must stay inside the workspace")
    })?;
    let rel = rel.to_string_lossy().replace('\\', "/");
    Ok(if rel.is_empty() { ".".to_string() } else { rel })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_pnpm_forms() {
        let f = Filter::parse("...^web...").unwrap();
        assert!(f.dependents && f.dependencies && f.skip_self && !f.exclude);
        assert_eq!(f.core, Core::Name("web".into()));
        let f = Filter::parse("!./apps/*").unwrap();
        assert!(f.exclude);
        assert_eq!(f.core, Core::Path("./apps/*".into()));
        assert_eq!(Filter::parse("[main]").unwrap().core, Core::Changed("main".into()));
        assert_eq!(Filter::parse("{apps/*}").unwrap().core, Core::Path("apps/*".into()));
        assert!(Filter::parse("[main").is_err());
        assert!(Filter::parse("...").is_err());
        assert!(Filter::parse("").is_err());
    }
}
