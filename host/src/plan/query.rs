//! `vx query`: the tasks a selection plans, as data, for CI scripts and
//! tools (the MCP server calls [`query`]). The same selection as `vx run`
//! (tasks, `--filter`, `--affected`, `--only`, `--shard`, arguments after
//! `--`), planned by the same code, so a query lists exactly what that run
//! would run, in dependency order, without keying or running anything.

use serde::Serialize;

use super::pass_through::command_with;
use super::selection::{Planned, Selection, plan_explained};
use crate::config::{Command, Workspace};
use crate::error::Result;
use crate::graph::{Reason, ShardMark};

/// A task's command: a line for `sh -c`, or an argv exec'd directly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub(crate) enum QueriedCommand {
    Shell(String),
    Argv(Vec<String>),
}

/// One planned task (docs/schema/query.v1.json).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct QueriedTask {
    /// `project#task`.
    pub id: String,
    pub project: String,
    pub task: String,
    /// The project's directory, relative to the workspace root.
    pub dir: String,
    /// With the arguments after `--` for a named task; `None` for a group.
    pub command: Option<QueriedCommand>,
    /// A group: it runs nothing, and succeeds when its dependencies do.
    pub group: bool,
    pub description: Option<String>,
    /// Ids of the planned tasks it waits for.
    pub dependencies: Vec<String>,
    /// Named by the selection (in a selected project), rather than pulled
    /// in as a dependency of one that is.
    pub selected: bool,
    /// With `--affected`: why it is affected (empty for a dependency that
    /// is not); `None` without `--affected`.
    pub reasons: Option<Vec<Reason>>,
    /// With `--shard`: whether it is the shard's own; `None` without.
    pub shard: Option<ShardMark>,
}

/// The tasks `selection` plans in `ws`, in dependency order. `ws` is as
/// loaded: the arguments after `--` in `selection` are applied to the
/// commands shown here, not to `ws`. Fails as `vx run` would plan: no
/// task named, an unknown task, `--affected` without git or a base, a
/// cycle, arguments after `--` for a group.
pub(crate) fn query(ws: &Workspace, selection: &Selection) -> Result<Vec<QueriedTask>> {
    let Planned { graph, reasons, shard } = plan_explained(ws, selection)?;
    let mut selected = vec![false; graph.len()];
    for &r in &graph.roots {
        selected[r] = true;
    }
    let tasks = graph
        .topological_order()
        .into_iter()
        .map(|n| {
            let node = &graph.nodes[n];
            let project = &ws.projects[node.project];
            let task = &project.tasks[&node.id.task];
            let command = (!task.is_group()).then(|| {
                match command_with(task, &project.name, &selection.tasks, &selection.pass_through) {
                    Command::Shell(line) => QueriedCommand::Shell(line),
                    Command::Argv(argv) => QueriedCommand::Argv(argv),
                }
            });
            QueriedTask {
                id: node.id.to_string(),
                project: project.name.clone(),
                task: task.name.clone(),
                dir: project.rel_dir.clone(),
                command,
                group: task.is_group(),
                description: task.description.clone(),
                dependencies: graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect(),
                selected: selected[n],
                reasons: reasons.as_ref().map(|r| r[n].clone()),
                shard: shard.as_ref().map(|s| s[n]),
            }
        })
        .collect();
    Ok(tasks)
}
