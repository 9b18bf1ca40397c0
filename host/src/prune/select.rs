//! Which projects a prune keeps: the named ones and, transitively, every
//! project they depend on in vx's graph (workspace dependencies in
//! `package.json`, `depends-on` in `vx.toml`, and the projects named by a
//! task's `project#task` dependency, without which `vx run` in the output
//! could not plan).

use std::collections::BTreeSet;

use crate::config::{TaskRef, Workspace, nearest};
use crate::error::{Error, Result};

/// The indices of the projects to keep, sorted.
pub(super) fn select(ws: &Workspace, names: &[String]) -> Result<BTreeSet<usize>> {
    let mut keep = BTreeSet::new();
    let mut queue = Vec::new();
    for name in names {
        let Some(p) = ws.project_index(name) else {
            let hint = nearest(name, ws.projects.iter().map(|p| p.name.as_str()))
                .map_or_else(|| "run `vx show` to list the projects".into(), |n| format!("did you mean `{n}`?"));
            return Err(Error::usage(format!("unknown project `{name}`")).with_hint(hint));
        };
        queue.push(p);
    }
    while let Some(p) = queue.pop() {
        if !keep.insert(p) {
            continue;
        }
        let project = &ws.projects[p];
        queue.extend(project.deps.iter().copied());
        let named = project.tasks.values().flat_map(|t| &t.depends_on).filter_map(|r| match r {
            TaskRef::Exact { project, .. } => ws.project_index(project),
            _ => None,
        });
        queue.extend(named);
    }
    Ok(keep)
}
