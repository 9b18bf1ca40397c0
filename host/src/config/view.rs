//! The JSON view of projects and tasks: what `vx show --format json`
//! prints and what `vx mcp` answers with, one shape for both so that a
//! script and an agent read the same fields.

use serde_json::{Value, json};

use super::{Project, Task, Workspace};

/// One task as JSON: its command, dependencies, declarations and settings.
pub(crate) fn task_json(t: &Task) -> Value {
    let mut value = json!({
        "command": (!t.is_group()).then(|| t.command.to_string()),
        "depends_on": t.depends_on.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "inputs": t.inputs,
        "outputs": t.outputs,
        "env": t.env,
        "pass_env": t.pass_env,
        "runtime": t.runtime,
        "cache": t.cache,
        "persistent": t.persistent,
        "executor": t.executor.as_str(),
    });
    // Only a group carries the key, so existing consumers see no change.
    if t.is_group() {
        value["group"] = json!(true);
    }
    // Likewise only a described task carries `description`.
    if let Some(description) = &t.description {
        value["description"] = json!(description);
    }
    value
}

/// One project as JSON, its tasks in full; `dependents` are the indices
/// of the projects that depend on it.
pub(crate) fn project_json(ws: &Workspace, p: &Project, dependents: &[usize]) -> Value {
    let tasks: serde_json::Map<String, Value> = p.tasks.values().map(|t| (t.name.clone(), task_json(t))).collect();
    json!({
        "name": p.name,
        "dir": p.rel_dir,
        "dependencies": project_names(ws, &p.deps),
        "dependents": project_names(ws, dependents),
        "tags": p.tags,
        "tasks": tasks,
    })
}

/// The names of the projects at `ids`.
pub(crate) fn project_names(ws: &Workspace, ids: &[usize]) -> Vec<String> {
    ids.iter().map(|&i| ws.projects[i].name.clone()).collect()
}
