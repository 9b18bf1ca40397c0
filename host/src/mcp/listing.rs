//! `list_projects`, answered in the server's own process (no child vx):
//! the workspace is loaded afresh for each call, so an edit made a moment
//! ago is seen, and a listing of 500 projects stays well under 50 ms.

use std::path::Path;

use serde_json::{Value, json};

use super::params::ProjectsParams;
use crate::config::view::{project_json, project_names};
use crate::config::{Project, load_workspace};
use crate::error::Result;
use crate::graph::{Filter, reverse_deps};
use crate::plan::{Selection, select_projects};

/// The selected projects: with `detail`, each task in full (as `vx show
/// --format json`); without, each task's name and description.
pub(super) fn list_projects(root: &Path, params: &ProjectsParams) -> Result<Value> {
    let ws = load_workspace(root)?;
    let filters = params.filter.iter().map(|f| Filter::parse(f)).collect::<Result<Vec<_>>>()?;
    let sel = Selection { filters, all: true, cwd: ws.root.clone(), ..Selection::default() };
    let selected = select_projects(&ws, &sel)?;
    let reverse = reverse_deps(&ws);
    let projects: Vec<Value> = selected
        .iter()
        .map(|&p| {
            let project = &ws.projects[p];
            if params.detail {
                project_json(&ws, project, &reverse[p])
            } else {
                brief(&project_names(&ws, &project.deps), project)
            }
        })
        .collect();
    Ok(json!({ "root": ws.root, "projects": projects }))
}

/// A project in brief: enough to choose what to ask next.
fn brief(dependencies: &[String], p: &Project) -> Value {
    let tasks: serde_json::Map<String, Value> = p
        .tasks
        .values()
        .map(|t| (t.name.clone(), t.description.as_deref().map_or(Value::Null, |d| json!(d))))
        .collect();
    json!({
        "name": p.name,
        "dir": p.rel_dir,
        "tags": p.tags,
        "dependencies": dependencies,
        "tasks": tasks,
    })
}
