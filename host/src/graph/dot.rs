//! The task graph in Graphviz DOT (`--graph`), edges from a task to what it
//! depends on, ids quoted so any project name is valid. A group task (no
//! command, only dependencies) is drawn dashed and labelled `(group)`, so
//! a reader does not look for a process that never runs.

use super::build::TaskGraph;
use crate::config::Workspace;

pub(crate) fn to_dot(ws: &Workspace, graph: &TaskGraph) -> String {
    let mut out = String::from("digraph vx {\n  rankdir=LR;\n  node [shape=box];\n");
    for n in graph.topological_order() {
        let node = &graph.nodes[n];
        let id = node.id.to_string();
        if ws.projects[node.project].tasks.get(&node.id.task).is_some_and(|t| t.is_group()) {
            out.push_str(&format!("  {} [style=dashed, label={}];\n", quote(&id), quote(&format!("{id} (group)"))));
        } else {
            out.push_str(&format!("  {};\n", quote(&id)));
        }
        for &d in &graph.deps[n] {
            out.push_str(&format!("  {} -> {};\n", quote(&id), quote(&graph.nodes[d].id.to_string())));
        }
    }
    out.push_str("}\n");
    out
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
