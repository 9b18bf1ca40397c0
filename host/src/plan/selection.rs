//! From what the user typed to a task graph: which projects (filters,
//! `--affected`, the directory the user stands in), which tasks in them,
//! and everything those tasks depend on.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use crate::config::{Workspace, nearest};
use crate::error::{Error, Result};
use crate::graph::{
    Filter, Reason, Shard, ShardMark, Since, TaskGraph, TaskId, affected_tasks, apply_filters, changed_projects,
    shard_marks, with_dependents,
};

/// The selection flags of `vx run` / `vx watch`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selection {
    pub tasks: Vec<String>,
    pub filters: Vec<Filter>,
    /// `--affected` (`Some(None)`) or `--affected=REV` (`Some(Some(rev))`).
    pub affected: Option<Option<String>>,
    pub all: bool,
    pub cwd: PathBuf,
    /// `--only`: the named tasks without the tasks they depend on.
    pub only: bool,
    /// Arguments after `--`, for the named tasks (`apply_pass_through`).
    pub pass_through: Vec<String>,
    /// `--shard K/N`: this shard's part of the named tasks (`graph::Shard`).
    pub shard: Option<Shard>,
}

/// The projects a selection covers.
pub(crate) fn select_projects(ws: &Workspace, sel: &Selection) -> Result<BTreeSet<usize>> {
    let mut projects: BTreeSet<usize> = if !sel.filters.is_empty() {
        apply_filters(ws, &sel.cwd, &sel.filters, &|rev| crate::git::changed_files(ws, Some(rev)))?
    } else if !sel.all && sel.affected.is_none() {
        match ws.project_containing(&sel.cwd) {
            Some(p) if ws.projects[p].dir != ws.root => BTreeSet::from([p]),
            _ => (0..ws.projects.len()).collect(),
        }
    } else {
        (0..ws.projects.len()).collect()
    };
    if let Some(rev) = &sel.affected {
        let affected = with_dependents(ws, &changed_projects(ws, &crate::git::changed_files(ws, rev.as_deref())?)?);
        projects.retain(|p| affected.contains(p));
    }
    Ok(projects)
}

/// A planned selection: the task graph and what `--affected` and
/// `--shard` say of each of its nodes.
#[derive(Debug)]
pub(crate) struct Planned {
    pub graph: TaskGraph,
    /// With `--affected`: each node's reasons (`graph::Reason`), empty for
    /// a dependency that is not affected itself.
    pub reasons: Option<Vec<Vec<Reason>>>,
    /// With `--shard`: what each node is to this shard.
    pub shard: Option<Vec<ShardMark>>,
}

/// Builds the task graph for a selection (see [`plan_explained`]).
pub(crate) fn plan(ws: &Workspace, sel: &Selection) -> Result<TaskGraph> {
    plan_explained(ws, sel).map(|p| p.graph)
}

/// Builds the task graph for a selection. With `--affected`, the named
/// tasks are kept only where a change affects them (inputs, not merely
/// the project: `graph::affected_tasks`), each with its reasons; none left
/// is an empty graph, which the caller reports as nothing affected. With
/// `--shard`, the tasks left are split (`graph::shard`) and only this
/// shard's part is kept, with what it depends on, each node marked.
/// Arguments after `--` that no named task can take are refused here.
pub(crate) fn plan_explained(ws: &Workspace, sel: &Selection) -> Result<Planned> {
    let (graph, reasons) = plan_unsharded(ws, sel)?;
    check_broken(ws, &graph)?;
    let (graph, shard) = match sel.shard {
        None => (graph, None),
        Some(shard) => {
            let p50s = crate::history::recorded_p50s(ws, &graph);
            let (roots, owners) = graph.shard_split(shard, |n| p50s.get(&graph.nodes[n].id.to_string()).copied());
            let sharded = TaskGraph::build(ws, &roots)?;
            let sharded = if sel.only { sharded.only_roots() } else { sharded };
            let marks = shard_marks(&sharded, &owners, shard);
            (sharded, Some(marks))
        }
    };
    super::pass_through::check_pass_through(ws, &graph, &sel.tasks, &sel.pass_through)?;
    let reasons = reasons.map(|by_task| {
        graph
            .nodes
            .iter()
            .map(|node| by_task.get(&(node.project, node.id.task.clone())).cloned().unwrap_or_default())
            .collect()
    });
    Ok(Planned { graph, reasons, shard })
}

/// Each affected task's reasons, by `(project, task)`.
type ByTask = HashMap<(usize, String), Vec<Reason>>;

fn plan_unsharded(ws: &Workspace, sel: &Selection) -> Result<(TaskGraph, Option<ByTask>)> {
    let roots = named_roots(ws, sel)?;
    let graph = TaskGraph::build(ws, &roots)?;
    let only = |graph: TaskGraph| if sel.only { graph.only_roots() } else { graph };
    let Some(rev) = &sel.affected else { return Ok((only(graph), None)) };
    let changes = crate::git::changes(ws, rev.as_deref())?;
    let text_at_base = |rel: &str| crate::git::text_at(ws, &changes.base, rel);
    let since = Since { label: &changes.label, files: &changes.files, text_at_base: &text_at_base };
    let affected = affected_tasks(ws, &graph, &since)?;
    let kept: Vec<(usize, String)> = graph
        .roots
        .iter()
        .filter(|n| affected.contains_key(n))
        .map(|&n| (graph.nodes[n].project, graph.nodes[n].id.task.clone()))
        .collect();
    let by_task: ByTask = affected
        .into_iter()
        .map(|(n, reasons)| ((graph.nodes[n].project, graph.nodes[n].id.task.clone()), reasons))
        .collect();
    Ok((only(TaskGraph::build(ws, &kept)?), Some(by_task)))
}

/// The `(project, task)` pairs the selection names.
fn named_roots(ws: &Workspace, sel: &Selection) -> Result<Vec<(usize, String)>> {
    if sel.tasks.is_empty() {
        let mut names: Vec<&str> = ws
            .projects
            .iter()
            .flat_map(|p| p.tasks.keys().map(String::as_str))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        names.truncate(12);
        return Err(Error::usage("no task named").with_hint(format!(
            "run one with `vx run TASK` (tasks here: {})",
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        )));
    }
    let projects =
        select_projects(ws, &Selection { affected: None, all: sel.all || sel.affected.is_some(), ..sel.clone() })?;
    let mut roots = Vec::new();
    for spec in &sel.tasks {
        if let Some(id) = TaskId::parse(spec) {
            roots.push(exact_root(ws, &id)?);
            continue;
        }
        let before = roots.len();
        roots.extend(projects.iter().filter(|&&p| ws.projects[p].tasks.contains_key(spec)).map(|&p| (p, spec.clone())));
        if roots.len() == before && !projects.is_empty() {
            return Err(no_such_task(ws, &projects, spec));
        }
    }
    Ok(roots)
}

fn exact_root(ws: &Workspace, id: &TaskId) -> Result<(usize, String)> {
    let Some(p) = ws.project_index(&id.project) else {
        let hint = nearest(&id.project, ws.projects.iter().map(|p| p.name.as_str())).map_or_else(
            || "run `vx show` to list the projects".to_string(),
            |n| format!("did you mean `{n}#{}`?", id.task),
        );
        return Err(Error::usage(format!("unknown project `{}` in `{id}`", id.project)).with_hint(hint));
    };
    if !ws.projects[p].tasks.contains_key(&id.task) {
        let hint = nearest(&id.task, ws.projects[p].tasks.keys().map(String::as_str)).map_or_else(
            || format!("run `vx show {}` to list its tasks", id.project),
            |t| format!("did you mean `{}#{t}`?", id.project),
        );
        return Err(Error::usage(format!("project `{}` has no task `{}`", id.project, id.task)).with_hint(hint));
    }
    Ok((p, id.task.clone()))
}

fn no_such_task(ws: &Workspace, projects: &BTreeSet<usize>, task: &str) -> Error {
    let all: BTreeSet<&str> = ws.projects.iter().flat_map(|p| p.tasks.keys().map(String::as_str)).collect();
    let scope = if projects.len() == ws.projects.len() {
        "no project has a task".to_string()
    } else if projects.len() == 1 {
        let p = projects.first().expect("one project");
        format!("project `{}` has no task", ws.projects[*p].name)
    } else {
        "no selected project has a task".to_string()
    };
    let hint = nearest(task, all.iter().copied())
        .map_or_else(|| "run `vx show` to list projects and tasks".to_string(), |t| format!("did you mean `{t}`?"));
    let hint = if all.contains(task) {
        format!("other projects have it: widen the selection with --all or --filter ({hint})")
    } else {
        hint
    };
    Error::usage(format!("{scope} `{task}`")).with_hint(hint)
}

/// Each task of `graph` as run summaries and profiles describe it: its id,
/// the executor it runs on (the run's `--executor` applied) and the ids it
/// depends on.
pub(crate) fn planned_tasks(
    ws: &Workspace,
    graph: &TaskGraph,
    run_executor: Option<&str>,
) -> Vec<crate::report::PlannedTask> {
    graph
        .nodes
        .iter()
        .enumerate()
        .map(|(n, node)| {
            let task = &ws.projects[node.project].tasks[&node.id.task];
            crate::report::PlannedTask {
                id: node.id.to_string(),
                executor: crate::run::effective_executor(task, run_executor).to_string(),
                dependencies: graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect(),
                description: task.description.clone(),
            }
        })
        .collect()
}

/// A task the configuration's tool refuses (`config::Broken`: a package
/// `turbo.json` without `extends`, a task depending on itself) fails the
/// run that includes it, before anything runs, with the tool's own line;
/// one the run leaves out is a warning, as Turborepo has it.
fn check_broken(ws: &Workspace, graph: &TaskGraph) -> Result<()> {
    for broken in &ws.broken {
        let needed = graph.nodes.iter().any(|n| {
            ws.projects[n.project].name == broken.project && broken.task.as_ref().is_none_or(|t| *t == n.id.task)
        });
        if needed {
            return Err(Error::config(broken.why.clone()));
        }
        tracing::warn!("{} (not needed by this run)", broken.why);
    }
    Ok(())
}
