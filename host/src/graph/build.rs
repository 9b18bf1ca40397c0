//! Building the task graph for a set of requested tasks: every task the
//! requested ones need, by `depends-on`, and nothing else.
//!
//! `^task` means that task in each dependency project; a dependency project
//! without it is looked through to its own dependencies, so ordering holds
//! across projects that lack the task (the order `pnpm -r run` gives).
//! Cycles are reported whole: `a#build → b#build → a#build`.

use std::collections::{HashMap, HashSet};

use super::id::TaskId;
use crate::config::{TaskRef, Workspace};
use crate::error::{Error, Result};

/// A node of the task graph.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub id: TaskId,
    /// Index of the project in [`Workspace::projects`].
    pub project: usize,
}

/// The tasks of one invocation and their dependency edges.
#[derive(Debug, Default)]
pub(crate) struct TaskGraph {
    pub nodes: Vec<Node>,
    /// `deps[n]`: the nodes `n` waits for, sorted.
    pub deps: Vec<Vec<usize>>,
    /// `dependents[n]`: the nodes that wait for `n`, sorted.
    pub dependents: Vec<Vec<usize>>,
    /// The nodes the user asked for (the rest are pulled in as dependencies).
    pub roots: Vec<usize>,
    pub(super) index: HashMap<(usize, String), usize>,
}

impl TaskGraph {
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub(crate) fn find(&self, project: usize, task: &str) -> Option<usize> {
        self.index.get(&(project, task.to_string())).copied()
    }

    /// Builds the graph of `roots` (project index, task name) and everything
    /// they depend on. Every root must exist; references were checked when
    /// the config was loaded.
    pub(crate) fn build(ws: &Workspace, roots: &[(usize, String)]) -> Result<TaskGraph> {
        let mut graph = TaskGraph::default();
        let mut queue = Vec::new();
        for (project, task) in roots {
            let (n, new) = graph.add(ws, *project, task);
            if new {
                queue.push(n);
            }
            if !graph.roots.contains(&n) {
                graph.roots.push(n);
            }
        }
        while let Some(n) = queue.pop() {
            let node = graph.nodes[n].clone();
            let task = &ws.projects[node.project].tasks[&node.id.task];
            let mut targets = Vec::new();
            for r in &task.depends_on {
                match r {
                    TaskRef::Local(t) => targets.push((node.project, t.clone())),
                    TaskRef::Exact { project, task } => {
                        let p = ws.project_index(project).expect("references are checked at load");
                        targets.push((p, task.clone()));
                    }
                    TaskRef::Upstream(t) => upstream(ws, node.project, t, &mut targets),
                }
            }
            for (p, t) in targets {
                let (d, new) = graph.add(ws, p, &t);
                if new {
                    queue.push(d);
                }
                if d != n && !graph.deps[n].contains(&d) {
                    graph.deps[n].push(d);
                    graph.dependents[d].push(n);
                } else if d == n {
                    return Err(cycle_error(&[graph.nodes[n].id.clone(), graph.nodes[n].id.clone()]));
                }
            }
        }
        for list in graph.deps.iter_mut().chain(graph.dependents.iter_mut()) {
            list.sort_unstable();
        }
        graph.check_acyclic()?;
        Ok(graph)
    }

    fn add(&mut self, ws: &Workspace, project: usize, task: &str) -> (usize, bool) {
        if let Some(n) = self.find(project, task) {
            return (n, false);
        }
        let n = self.nodes.len();
        self.nodes.push(Node { id: TaskId::new(&ws.projects[project].name, task), project });
        self.deps.push(Vec::new());
        self.dependents.push(Vec::new());
        self.index.insert((project, task.to_string()), n);
        (n, true)
    }

    /// Depth-first search with an explicit stack; on a back edge the stack
    /// from the target onwards is the cycle.
    fn check_acyclic(&self) -> Result<()> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut mark = vec![Mark::New; self.len()];
        for start in 0..self.len() {
            if mark[start] != Mark::New {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            mark[start] = Mark::Open;
            while let Some(&mut (n, ref mut next)) = stack.last_mut() {
                if let Some(&d) = self.deps[n].get(*next) {
                    *next += 1;
                    match mark[d] {
                        Mark::New => {
                            mark[d] = Mark::Open;
                            stack.push((d, 0));
                        }
                        Mark::Open => {
                            let from = stack.iter().position(|&(m, _)| m == d).expect("open nodes are on the stack");
                            let mut ids: Vec<TaskId> =
                                stack[from..].iter().map(|&(m, _)| self.nodes[m].id.clone()).collect();
                            ids.push(self.nodes[d].id.clone());
                            return Err(cycle_error(&ids));
                        }
                        Mark::Done => {}
                    }
                } else {
                    mark[n] = Mark::Done;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    /// Nodes in an order where every node comes after its dependencies;
    /// ties broken by id so output is stable.
    pub(crate) fn topological_order(&self) -> Vec<usize> {
        let mut pending: Vec<usize> = self.deps.iter().map(Vec::len).collect();
        let mut ready: std::collections::BTreeSet<(&TaskId, usize)> =
            (0..self.len()).filter(|&n| pending[n] == 0).map(|n| (&self.nodes[n].id, n)).collect();
        let mut order = Vec::with_capacity(self.len());
        while let Some(first) = ready.pop_first() {
            let n = first.1;
            order.push(n);
            for &d in &self.dependents[n] {
                pending[d] -= 1;
                if pending[d] == 0 {
                    ready.insert((&self.nodes[d].id, d));
                }
            }
        }
        order
    }
}

/// The tasks named `task` reachable through `project`'s dependencies,
/// looking through projects that do not have it.
fn upstream(ws: &Workspace, project: usize, task: &str, out: &mut Vec<(usize, String)>) {
    let mut seen = HashSet::new();
    let mut stack: Vec<usize> = ws.projects[project].deps.clone();
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        if ws.projects[p].tasks.contains_key(task) {
            out.push((p, task.to_string()));
        } else {
            stack.extend(ws.projects[p].deps.iter().copied());
        }
    }
}

fn cycle_error(ids: &[TaskId]) -> Error {
    let path: Vec<String> = ids.iter().map(ToString::to_string).collect();
    Error::config(format!("task dependency cycle: {}", path.join(" → ")))
        .with_hint("remove one of these `depends-on` entries (or a project dependency) to break it")
}
