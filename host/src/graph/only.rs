//! `--only`: the graph of the requested tasks alone, without the tasks
//! they depend on (Turborepo's `--only`, the first vx's
//! `--exclude-dependencies`).
//!
//! Order among the requested tasks still holds: when one requested task
//! depends on another, directly or through tasks that are left out, it
//! still waits for it. Without that, `vx run build --only` would start
//! every project's build at once, each before the builds it needs.

use super::build::TaskGraph;

impl TaskGraph {
    /// The graph of `self.roots` only, with an edge from a root to each
    /// root it reaches through left-out nodes.
    pub(crate) fn only_roots(&self) -> TaskGraph {
        let mut keep: Vec<Option<usize>> = vec![None; self.len()];
        let mut graph = TaskGraph::default();
        for &r in &self.roots {
            if keep[r].is_some() {
                continue;
            }
            let n = graph.nodes.len();
            keep[r] = Some(n);
            graph.nodes.push(self.nodes[r].clone());
            graph.deps.push(Vec::new());
            graph.dependents.push(Vec::new());
            graph.index.insert((self.nodes[r].project, self.nodes[r].id.task.clone()), n);
            graph.roots.push(n);
        }
        for &r in &self.roots {
            let from = keep[r].expect("every root is kept");
            let mut seen = vec![false; self.len()];
            let mut stack: Vec<usize> = self.deps[r].clone();
            while let Some(d) = stack.pop() {
                if std::mem::replace(&mut seen[d], true) {
                    continue;
                }
                match keep[d] {
                    Some(to) if !graph.deps[from].contains(&to) => {
                        graph.deps[from].push(to);
                        graph.dependents[to].push(from);
                    }
                    Some(_) => {}
                    None => stack.extend(self.deps[d].iter().copied()),
                }
            }
        }
        for list in graph.deps.iter_mut().chain(graph.dependents.iter_mut()) {
            list.sort_unstable();
        }
        graph
    }
}
