//! `--affected` by task, with the reasons: a task is affected when a
//! changed file is one of its inputs (project-relative or root-anchored)
//! or its project's `vx.toml` or `package.json`, when its project's slice
//! of the lockfile moved, or when a task it depends on is affected. A
//! changed global input, the root `vx.toml`, the root `package.json`'s
//! dependencies or `packageManager`, the root's lockfile slice, or a
//! lockfile change vx cannot narrow affects every task: those are the
//! parts of every task's key.
//!
//! The selection follows the key, so a task selected here is one whose key
//! may have moved, and one left out kept its key (for what the working
//! tree holds; a key also takes env values and runtime outputs, which
//! git does not see).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::TaskGraph;
use super::lockfile_moves::{Moves, changed_lockfiles, lockfile_moves};
use super::reason::{Cause, FileList, Reason};
use super::since::{Since, global_matcher};
use crate::config::Workspace;
use crate::error::Result;
use crate::inputs::InputMatcher;
use crate::lockfile::root_dependencies;

/// Each affected node of `graph` with why, direct causes first, then the
/// affected tasks it depends on. A node that is not affected is absent.
pub(crate) fn affected_tasks(
    ws: &Workspace,
    graph: &TaskGraph,
    since: &Since<'_>,
) -> Result<BTreeMap<usize, Vec<Reason>>> {
    let changed = Changed::new(ws, since.files);
    let (global, lockfile) = workspace_causes(ws, since, &changed)?;
    if !global.is_empty() {
        let reasons: Vec<Reason> = global.into_iter().map(Reason::from).collect();
        return Ok((0..graph.len()).map(|n| (n, reasons.clone())).collect());
    }
    let mut out: BTreeMap<usize, Vec<Reason>> = BTreeMap::new();
    for (n, node) in graph.nodes.iter().enumerate() {
        let mut causes = direct_causes(ws, &changed, node.project, &node.id.task)?;
        if let Some(Moves::Slices { file, projects, .. }) = &lockfile
            && let Some(moved) = projects.get(&node.project)
        {
            causes.push(Cause::Lockfile { file: file.clone(), root: false, changes: moved.clone() });
        }
        if !causes.is_empty() {
            out.insert(n, causes.into_iter().map(Reason::from).collect());
        }
    }
    let mut stack: Vec<usize> = out.keys().copied().collect();
    while let Some(n) = stack.pop() {
        for &d in &graph.dependents[n] {
            if let std::collections::btree_map::Entry::Vacant(entry) = out.entry(d) {
                entry.insert(Vec::new());
                stack.push(d);
            }
        }
    }
    let affected: Vec<usize> = out.keys().copied().collect();
    for n in affected {
        let deps: Vec<Reason> = graph.deps[n]
            .iter()
            .filter(|d| out.contains_key(d))
            .map(|&d| Reason::from(Cause::Dependency { task: graph.nodes[d].id.to_string() }))
            .collect();
        out.get_mut(&n).expect("listed above").extend(deps);
    }
    Ok(out)
}

/// The changed files under the root, each with its root-relative path,
/// the project that owns it and its path in that project.
struct Changed {
    files: Vec<(String, Option<usize>, Option<String>)>,
    /// Indices into `files` by owning project.
    by_project: HashMap<usize, Vec<usize>>,
}

impl Changed {
    fn new(ws: &Workspace, files: &[std::path::PathBuf]) -> Changed {
        let mut out = Changed { files: Vec::new(), by_project: HashMap::new() };
        for file in files {
            let Ok(rel) = file.strip_prefix(&ws.root) else { continue };
            let owner = ws.project_containing(file);
            let own = owner.and_then(|p| file.strip_prefix(&ws.projects[p].dir).ok()).map(slashed);
            if let Some(p) = owner {
                out.by_project.entry(p).or_default().push(out.files.len());
            }
            out.files.push((slashed(rel), owner, own));
        }
        out
    }

    fn rels(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(rel, _, _)| rel.as_str())
    }
}

fn slashed(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// What affects every task, and the lockfile's moves (whose slices moved)
/// when nothing does. Cheapest first: a cause found stops the search.
fn workspace_causes(ws: &Workspace, since: &Since<'_>, changed: &Changed) -> Result<(Vec<Cause>, Option<Moves>)> {
    let globals = global_matcher(ws)?;
    let mut global_files = FileList::default();
    let mut causes = Vec::new();
    for rel in changed.rels() {
        if globals.is_match(rel) {
            global_files.push(rel);
        } else if rel == "vx.toml" {
            causes.push(Cause::RootConfig { file: rel.to_string() });
        }
    }
    if !global_files.is_empty() {
        causes.insert(0, Cause::GlobalInput { files: global_files.files, more: global_files.more });
    }
    if causes.is_empty() && changed.rels().any(|rel| rel == "package.json") {
        causes.extend(root_package_cause(ws, since));
    }
    if !causes.is_empty() {
        return Ok((causes, None));
    }
    let moves = lockfile_moves(ws, since, &changed_lockfiles(changed.rels()));
    match &moves {
        Some(Moves::All { file, why }) => causes.push(Cause::LockfileAll { file: file.clone(), why: why.clone() }),
        Some(Moves::Slices { file, root: Some(moved), .. }) => {
            causes.push(Cause::Lockfile { file: file.clone(), root: true, changes: moved.clone() })
        }
        _ => {}
    }
    Ok((causes, moves))
}

/// The root `package.json`'s part of every other project's key, if it
/// moved since the base: its dependency tables, or the package manager
/// its `packageManager` names (which decides the lockfile read).
fn root_package_cause(ws: &Workspace, since: &Since<'_>) -> Option<Cause> {
    let file = "package.json".to_string();
    let now = crate::paths::read_config(&ws.root.join(&file)).ok().flatten().unwrap_or_default();
    let old = match (since.text_at_base)(&file) {
        Ok(old) => old.unwrap_or_default(),
        Err(why) => return Some(Cause::RootDependencies { file, what: why }),
    };
    if root_dependencies(&old) != root_dependencies(&now) {
        return Some(Cause::RootDependencies { file, what: "its dependencies changed".to_string() });
    }
    let (before, after) = (manager(&old), manager(&now));
    (before != after).then(|| {
        let name = |m: Option<String>| m.unwrap_or_else(|| "none".to_string());
        Cause::RootDependencies { file, what: format!("packageManager changed: {} → {}", name(before), name(after)) }
    })
}

/// The manager a `package.json`'s `packageManager` names (`pnpm`).
fn manager(text: &str) -> Option<String> {
    let manifest: serde_json::Value = serde_json::from_str(text).ok()?;
    Some(manifest.get("packageManager")?.as_str()?.split('@').next()?.to_string())
}

/// The changed files that are the inputs or the manifest of `project`'s
/// `task`. A task without root-anchored inputs looks only at its own
/// project's files.
fn direct_causes(ws: &Workspace, changed: &Changed, project: usize, task: &str) -> Result<Vec<Cause>> {
    let dir = &ws.projects[project];
    let task = &dir.tasks[task];
    let inputs = InputMatcher::new(task.inputs.as_deref(), &task.outputs)?;
    let mut manifests = Vec::new();
    let mut files = FileList::default();
    let mut check = |(rel, owner, own): &(String, Option<usize>, Option<String>)| {
        let own = own.as_deref().filter(|_| *owner == Some(project));
        if matches!(own, Some("vx.toml" | "package.json")) {
            // Its own manifest: its definition and its key may move,
            // whatever its inputs.
            manifests.push(Cause::Manifest { file: rel.clone() });
        } else if inputs.matches(own, rel) {
            files.push(rel);
        }
    };
    if inputs.project_only() {
        changed.by_project.get(&project).into_iter().flatten().for_each(|&i| check(&changed.files[i]));
    } else {
        changed.files.iter().for_each(check);
    }
    let mut causes = Vec::new();
    if !files.is_empty() {
        causes.push(Cause::Input { files: files.files, more: files.more });
    }
    causes.extend(manifests);
    Ok(causes)
}
