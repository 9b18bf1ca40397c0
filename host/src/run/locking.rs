//! Which task locks a job takes ([`super::task_lock`]): its own, and,
//! while it runs, those of the tasks whose outputs it may read (every
//! task it depends on, directly or not, that declares outputs). Made
//! once per session from the graph and walked only for a task that is
//! about to run: a fully cached run never walks it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::config::Workspace;
use crate::graph::TaskGraph;

/// The graph as the locks see it, owned so that a job can keep it.
#[derive(Debug)]
pub(crate) struct LockGraph {
    deps: Vec<Vec<usize>>,
    ids: Vec<String>,
    /// Whether another vx may clear or restore the node's outputs: it
    /// declares outputs and takes a lock (not persistent, not a group).
    writes: Vec<bool>,
}

impl LockGraph {
    pub(crate) fn new(ws: &Workspace, graph: &TaskGraph) -> LockGraph {
        let writes = graph
            .nodes
            .iter()
            .map(|n| {
                let task = &ws.projects[n.project].tasks[&n.id.task];
                !task.outputs.is_empty() && !task.persistent && !task.is_group()
            })
            .collect();
        LockGraph { deps: graph.deps.clone(), ids: graph.nodes.iter().map(|n| n.id.to_string()).collect(), writes }
    }

    /// The tasks whose outputs `node` may read, sorted.
    pub(crate) fn read_by(&self, node: usize) -> Vec<String> {
        let mut seen = vec![false; self.ids.len()];
        let mut stack = self.deps[node].clone();
        let mut out = Vec::new();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            if self.writes[n] {
                out.push(self.ids[n].clone());
            }
            stack.extend(&self.deps[n]);
        }
        out.sort_unstable();
        out
    }
}

/// What a job needs to take its locks: the workspace root (locks live
/// under its `.vx/locks/`) and the graph.
#[derive(Debug, Clone)]
pub(crate) struct Locking {
    pub root: PathBuf,
    pub graph: Arc<LockGraph>,
}
