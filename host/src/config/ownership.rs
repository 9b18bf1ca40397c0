//! Outputs are owned safely: what the configuration alone shows is
//! refused when it loads.
//!
//! A task's outputs are removed before it runs and replaced on a restore,
//! so an output glob is a claim to own every path it matches. Refused:
//! - a claim that matches a configuration file (`vx.toml`, `package.json`,
//!   `turbo.json`, a lockfile at the root): `outputs = ["**"]` would
//!   remove the project's own;
//! - a claim that reaches into another project's directory (a
//!   root-anchored glob, or the root project's `**`);
//! - two tasks whose claims can match one path while neither runs after
//!   the other: each would clear the other's files, and the cache would
//!   store whichever won the race.
//!
//! Claims are compared only where their literal prefixes nest (`dist/` and
//! `dist/js/`, not `packages/a/` and `packages/b/`), found by sorting, so
//! a workspace of many projects pays for the pairs that could meet, not
//! for every pair; those are then decided exactly (`super::overlap`).
//! What only the disk shows (a file git tracks matched by an output glob)
//! is the cache's to refuse at run time (`cache/tracked.rs`).

use std::cell::OnceCell;
use std::collections::HashSet;

use super::error::Diagnostic;
use super::model::{Project, Task, TaskRef};
use super::overlap::{GlobLanguage, overlap};

/// Files no output may claim, relative to each project's directory.
const PROJECT_FILES: [&str; 3] = ["vx.toml", "package.json", "turbo.json"];

/// Files no output may claim at the workspace root, whether or not the
/// root is a project; every lockfile too (`lockfile::LOCKFILE_NAMES`,
/// the one list of their names).
const ROOT_FILES: [&str; 5] = ["vx.toml", "package.json", "turbo.json", "turbo.jsonc", "pnpm-workspace.yaml"];

/// One task's outputs as a claim on paths relative to the workspace root.
struct Claim<'a> {
    project: usize,
    task: &'a Task,
    /// Root-relative globs, `!` exclusions kept.
    globs: Vec<String>,
    /// The longest literal directory prefix all of its includes share.
    prefix: String,
}

/// Refuses outputs that could remove what their task does not own.
pub(crate) fn check_ownership(projects: &[Project]) -> Result<(), Diagnostic> {
    let mut claims: Vec<Claim<'_>> = Vec::new();
    for (p, project) in projects.iter().enumerate() {
        for task in project.tasks.values().filter(|t| !t.outputs.is_empty()) {
            let globs: Vec<String> = task.outputs.iter().map(|g| root_relative(&project.rel_dir, g)).collect();
            let prefix = common_prefix(&globs);
            claims.push(Claim { project: p, task, globs, prefix });
        }
    }
    if claims.is_empty() {
        return Ok(());
    }
    claims.sort_by(|a, b| a.prefix.cmp(&b.prefix));
    // Built only for a claim that meets something under its prefix: a
    // DFA costs a fraction of a millisecond, and most claims (one
    // `dist/**` per project) meet nothing.
    let cells: Vec<OnceCell<Option<GlobLanguage>>> = claims.iter().map(|_| OnceCell::new()).collect();
    let language = |i: usize| cells[i].get_or_init(|| GlobLanguage::new(&claims[i].globs)).as_ref();
    check_protected(projects, &claims, &language)?;
    for i in 0..claims.len() {
        // Sorted, the prefixes that extend claim i's follow it.
        for j in i + 1..claims.len() {
            let (x, y) = (&claims[i], &claims[j]);
            if !y.prefix.starts_with(&x.prefix) {
                break;
            }
            if !nests(&x.prefix, &y.prefix) {
                continue;
            }
            let (Some(a), Some(b)) = (language(i), language(j)) else { continue };
            let Some(path) = overlap(a, b) else { continue };
            if !ordered(projects, (x.project, &x.task.name), (y.project, &y.task.name)) {
                return Err(unordered(projects, x, y, &path));
            }
        }
    }
    Ok(())
}

/// Claims on configuration files, or on another project's directory.
/// Both lists are sorted once, and each claim looks only at the entries
/// under its literal prefix (a range of the sorted list), so a workspace
/// of many projects does not compare every claim with every project.
fn check_protected<'l>(
    projects: &[Project],
    claims: &[Claim<'_>],
    language: &dyn Fn(usize) -> Option<&'l GlobLanguage>,
) -> Result<(), Diagnostic> {
    let lockfiles = crate::lockfile::LOCKFILE_NAMES.iter().map(|(name, _)| *name);
    let mut files: Vec<String> = ROOT_FILES.iter().copied().chain(lockfiles).map(str::to_string).collect();
    files.extend(
        projects
            .iter()
            .filter(|p| p.rel_dir != ".")
            .flat_map(|p| PROJECT_FILES.iter().map(move |f| join(&p.rel_dir, f))),
    );
    files.sort();
    let mut dirs: Vec<(&str, usize)> =
        projects.iter().enumerate().filter(|(_, p)| p.rel_dir != ".").map(|(i, p)| (p.rel_dir.as_str(), i)).collect();
    dirs.sort();
    for (i, claim) in claims.iter().enumerate() {
        let own = &projects[claim.project];
        for path in under(&files, &claim.prefix, |f| f.as_str()) {
            let Some(language) = language(i) else { break };
            if let Some(found) = GlobLanguage::exact(path).and_then(|f| overlap(language, &f)) {
                let glob = claimed_by(claim, &found);
                return Err(Diagnostic::new(
                    location(own, claim.task, glob),
                    format!(
                        "`{}` in the outputs of {}#{} matches `{found}`, which vx will not remove or overwrite",
                        claim.task.outputs[glob], own.name, claim.task.name
                    ),
                )
                .with_hint(
                    "a task's outputs are removed before it runs: narrow the glob to what it writes, as in `dist/**`",
                ));
            }
        }
        // A claim whose prefix lies inside a project's directory (its
        // own, usually) can still reach a project nested deeper, which is
        // under the prefix too; one above it can reach only those below.
        for &(dir, q) in under(&dirs, &claim.prefix, |(d, _)| d) {
            if q == claim.project {
                continue;
            }
            let Some(language) = language(i) else { break };
            // A project nested in this one's directory is its own too:
            // clearing does not stop at it.
            if let Some(found) = GlobLanguage::path_and_below(dir).and_then(|d| overlap(language, &d)) {
                let glob = claimed_by(claim, &found);
                return Err(Diagnostic::new(
                    location(own, claim.task, glob),
                    format!(
                        "`{}` in the outputs of {}#{} reaches into project `{}` (`{found}`)",
                        claim.task.outputs[glob], own.name, claim.task.name, projects[q].name
                    ),
                )
                .with_hint(format!(
                    "outputs are removed before a task runs: narrow the glob so that it stays out of `{dir}/`"
                )));
            }
        }
        // A project whose directory holds the claim's prefix (`/packages/ui/src/**`
        // claimed by `web`).
        let ancestors = claim.prefix.match_indices('/').map(|(i, _)| &claim.prefix[..i]);
        for (dir, q) in ancestors.filter_map(|a| dirs.binary_search_by(|(d, _)| (*d).cmp(a)).ok().map(|i| dirs[i])) {
            if q != claim.project {
                let glob = claimed_by(claim, &claim.prefix);
                return Err(Diagnostic::new(
                    location(own, claim.task, glob),
                    format!(
                        "`{}` in the outputs of {}#{} reaches into project `{}` (`{}`)",
                        claim.task.outputs[glob], own.name, claim.task.name, projects[q].name, claim.prefix
                    ),
                )
                .with_hint(format!(
                    "outputs are removed before a task runs: narrow the glob so that it stays out of `{dir}/`"
                )));
            }
        }
    }
    Ok(())
}

/// The entries of sorted `list` whose key lies at or under the literal
/// directory `prefix` (all of them for the root's empty prefix).
fn under<'l, T>(list: &'l [T], prefix: &str, key: impl Fn(&T) -> &str + Copy) -> impl Iterator<Item = &'l T> {
    let start = list.partition_point(|t| key(t) < prefix);
    list[start..].iter().take_while(move |t| key(t).starts_with(prefix)).filter(move |t| nests(prefix, key(t)))
}

/// Two tasks that can own one path and are not ordered.
fn unordered(projects: &[Project], x: &Claim<'_>, y: &Claim<'_>, path: &str) -> Diagnostic {
    let (px, py) = (&projects[x.project], &projects[y.project]);
    let (a, b) = (format!("{}#{}", px.name, x.task.name), format!("{}#{}", py.name, y.task.name));
    let edge = if x.project == y.project { x.task.name.clone() } else { a.clone() };
    Diagnostic::new(location(px, x.task, claimed_by(x, path)), format!(
        "the outputs of {a} and {b} can both match `{path}`, and neither runs after the other: each would remove the other's files"
    ))
    .with_hint(format!(
        "order them (`depends-on = [\"{edge}\"]` in {b}, or the reverse), or narrow one glob so that they do not meet"
    ))
}

/// The index of the first of the claim's globs that matches `path` (the
/// one to point at), else the first.
fn claimed_by(claim: &Claim<'_>, path: &str) -> usize {
    claim
        .globs
        .iter()
        .position(|g| {
            !g.starts_with('!')
                && GlobLanguage::new(&[g])
                    .is_some_and(|l| GlobLanguage::path_and_below(path).is_some_and(|p| overlap(&l, &p).is_some()))
        })
        .unwrap_or(0)
}

/// Where the task's `glob`-th output is written, else its project's file.
fn location(project: &Project, task: &Task, glob: usize) -> String {
    task.outputs_at.get(glob).or(task.outputs_at.first()).cloned().unwrap_or_else(|| join(&project.rel_dir, "vx.toml"))
}

/// Whether `b` depends on `a` or `a` on `b`, through `depends-on` (a
/// project without the task is looked through for `^task`, as the graph
/// does).
fn ordered(projects: &[Project], a: (usize, &str), b: (usize, &str)) -> bool {
    reaches(projects, a, b) || reaches(projects, b, a)
}

fn reaches(projects: &[Project], from: (usize, &str), to: (usize, &str)) -> bool {
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut stack = vec![(from.0, from.1.to_string())];
    while let Some((p, t)) = stack.pop() {
        if !seen.insert((p, t.clone())) {
            continue;
        }
        let Some(task) = projects[p].tasks.get(&t) else { continue };
        for r in &task.depends_on {
            match r {
                TaskRef::Local(t) => stack.push((p, t.clone())),
                TaskRef::Exact { project, task } => {
                    if let Some(q) = projects.iter().position(|x| &x.name == project) {
                        stack.push((q, task.clone()));
                    }
                }
                TaskRef::Upstream(t) => {
                    let mut looked = HashSet::new();
                    let mut deps = projects[p].deps.clone();
                    while let Some(d) = deps.pop() {
                        if !looked.insert(d) {
                            continue;
                        }
                        if projects[d].tasks.contains_key(t) {
                            stack.push((d, t.clone()));
                        } else {
                            deps.extend(projects[d].deps.iter().copied());
                        }
                    }
                }
            }
        }
        if (p, t.as_str()) == (to.0, to.1) && (p, t.as_str()) != (from.0, from.1) {
            return true;
        }
    }
    false
}

/// `glob` of a project at `rel_dir`, relative to the workspace root.
fn root_relative(rel_dir: &str, glob: &str) -> String {
    let (bang, g) = match glob.strip_prefix('!') {
        Some(g) => ("!", g),
        None => ("", glob),
    };
    let g = g.trim_start_matches("./");
    match g.strip_prefix('/') {
        Some(anchored) => format!("{bang}{anchored}"),
        None if rel_dir == "." => format!("{bang}{g}"),
        None => format!("{bang}{}/{g}", globset::escape(rel_dir)),
    }
}

/// `rel` under the directory `dir` (`.` for the root).
fn join(dir: &str, rel: &str) -> String {
    if dir == "." { rel.to_string() } else { format!("{dir}/{rel}") }
}

/// The longest run of literal leading directories all includes share.
fn common_prefix(globs: &[String]) -> String {
    let mut common: Option<Vec<&str>> = None;
    for g in globs.iter().filter(|g| !g.starts_with('!')) {
        let parts: Vec<&str> = g.split('/').collect();
        // The last part is a name, not a directory; a literal one still
        // means everything beneath it, so it stays in the prefix.
        let literal: Vec<&str> =
            parts.iter().take_while(|p| !p.contains(['*', '?', '[', '{', '\\'])).copied().collect();
        common = Some(match common {
            None => literal,
            Some(c) => c.iter().zip(&literal).take_while(|(a, b)| a == b).map(|(a, _)| *a).collect(),
        });
    }
    common.unwrap_or_default().join("/")
}

/// Whether one of two literal prefixes lies within the other (by whole
/// parts: `dist` nests with `dist/js`, not with `distant`).
fn nests(a: &str, b: &str) -> bool {
    let within = |short: &str, long: &str| {
        short.is_empty() || long == short || long.strip_prefix(short).is_some_and(|r| r.starts_with('/'))
    };
    within(a, b) || within(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_literal_leading_directories() {
        assert_eq!(common_prefix(&["packages/web/dist/**".into()]), "packages/web/dist");
        assert_eq!(common_prefix(&["a/b/**".into(), "a/c/**".into()]), "a");
        assert_eq!(common_prefix(&["**".into()]), "");
        assert_eq!(common_prefix(&["dist/**".into(), "!dist/x".into()]), "dist");
        assert!(nests("dist", "dist/js") && nests("", "x") && !nests("dist", "distant"));
    }

    #[test]
    fn globs_are_made_root_relative() {
        assert_eq!(root_relative("packages/web", "dist/**"), "packages/web/dist/**");
        assert_eq!(root_relative("packages/web", "!dist/x"), "!packages/web/dist/x");
        assert_eq!(root_relative("packages/web", "/gen/**"), "gen/**");
        assert_eq!(root_relative(".", "./out/**"), "out/**");
        assert_eq!(root_relative("apps/[x]", "dist/**"), "apps/[[]x[]]/dist/**", "the directory's name is literal");
    }
}
