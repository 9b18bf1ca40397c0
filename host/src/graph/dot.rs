//! The task graph in Graphviz DOT (`--graph`), edges from a task to what it
//! depends on, ids quoted so any project name is valid.

use super::build::TaskGraph;

pub fn to_dot(graph: &TaskGraph) -> String {
    let mut out = String::from("digraph vx {\n  rankdir=LR;\n  node [shape=box];\n");
    for n in graph.topological_order() {
        out.push_str(&format!("  {};\n", quote(&graph.nodes[n].id.to_string())));
        for &d in &graph.deps[n] {
            out.push_str(&format!(
                "  {} -> {};\n",
                quote(&graph.nodes[n].id.to_string()),
                quote(&graph.nodes[d].id.to_string())
            ));
        }
    }
    out.push_str("}\n");
    out
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
