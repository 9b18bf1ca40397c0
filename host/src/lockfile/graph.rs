//! The one dependency graph every lockfile format is read into.
//!
//! A node is one installed package instance as the lockfile records it (an
//! npm `node_modules/…` path, a pnpm snapshot, a yarn entry, a bun key);
//! its edges go to the instances its dependencies resolved to. A project is
//! a workspace directory with the nodes its own manifest's dependencies
//! resolved to. Workspace packages are never nodes: a format drops an edge
//! that resolves to one (see `Lockfile::slice`).
//!
//! Two nodes may carry the same `ResolvedDep` (pnpm's peer variants, npm's
//! nested copies) yet different edges, so nodes are kept apart and only
//! their pins are deduplicated, into a table sorted once at build time. A
//! slice is then a walk that marks table rows, read back in row order:
//! sorted and deduplicated with no per-slice sort. Each row's hash is
//! computed once, at build, and each project's slice digest at most once,
//! on first use: a run asks for one project's digest once per task.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::digest::{combine, dep_hash};
use super::{DepsDigest, ResolvedDep};

pub(crate) type NodeId = usize;

/// Collects nodes, edges and projects while a format is read.
#[derive(Debug, Default)]
pub(crate) struct GraphBuilder {
    pins: Vec<ResolvedDep>,
    edges: Vec<Vec<NodeId>>,
    projects: HashMap<String, Vec<NodeId>>,
    /// Projects with a dependency the lockfile does not resolve.
    unresolved: std::collections::HashSet<String>,
}

impl GraphBuilder {
    pub(crate) fn add_package(&mut self, pin: ResolvedDep) -> NodeId {
        self.pins.push(pin);
        self.edges.push(Vec::new());
        self.pins.len() - 1
    }

    pub(crate) fn add_edge(&mut self, from: NodeId, to: NodeId) {
        self.edges[from].push(to);
    }

    /// Adds direct dependencies to a project; `dir` is normalised by
    /// [`project_key`], so `.`, `./apps/web/` and `apps/web` are one project.
    pub(crate) fn add_project(&mut self, dir: &str, direct: impl IntoIterator<Item = NodeId>) {
        self.projects.entry(project_key(dir).to_string()).or_default().extend(direct);
    }

    /// Records that a dependency of the project at `dir` resolved to no
    /// entry (a specifier the format spells in a way vx does not follow):
    /// its slice is incomplete, and `Lockfile::slice_digest` takes the
    /// whole lockfile for it rather than miss what moved.
    pub(crate) fn mark_unresolved(&mut self, dir: &str) {
        self.unresolved.insert(project_key(dir).to_string());
    }

    pub(crate) fn build(self) -> DepGraph {
        let mut order: Vec<usize> = (0..self.pins.len()).collect();
        order.sort_unstable_by(|&a, &b| self.pins[a].cmp(&self.pins[b]));
        let mut table: Vec<ResolvedDep> = Vec::with_capacity(order.len());
        let mut node_pin = vec![0; self.pins.len()];
        for &node in &order {
            if table.last() != Some(&self.pins[node]) {
                table.push(self.pins[node].clone());
            }
            node_pin[node] = table.len() - 1;
        }
        let mut edge_start = Vec::with_capacity(self.edges.len() + 1);
        let mut edges = Vec::with_capacity(self.edges.iter().map(Vec::len).sum());
        for out in &self.edges {
            edge_start.push(edges.len());
            edges.extend_from_slice(out);
        }
        edge_start.push(edges.len());
        let row_hashes = table.iter().map(dep_hash).collect();
        let projects = self
            .projects
            .into_iter()
            .map(|(dir, direct)| {
                let complete = !self.unresolved.contains(&dir);
                let project = Project { direct, complete, digest: OnceLock::new() };
                (dir, project)
            })
            .collect();
        DepGraph { table, row_hashes, node_pin, edge_start, edges, projects }
    }
}

/// The read-only graph a `Lockfile` answers slices from.
#[derive(Debug)]
pub(crate) struct DepGraph {
    /// Every distinct pin, sorted.
    table: Vec<ResolvedDep>,
    /// `dep_hash` of each row of `table`.
    row_hashes: Vec<[u8; 32]>,
    /// Node → row of `table`.
    node_pin: Vec<usize>,
    /// Node `n`'s edges are `edges[edge_start[n]..edge_start[n + 1]]`.
    edge_start: Vec<usize>,
    edges: Vec<NodeId>,
    projects: HashMap<String, Project>,
}

#[derive(Debug)]
struct Project {
    direct: Vec<NodeId>,
    /// Every dependency of its manifest resolved to an entry.
    complete: bool,
    digest: OnceLock<DepsDigest>,
}

impl DepGraph {
    pub(crate) fn has_project(&self, dir: &str) -> bool {
        self.projects.contains_key(project_key(dir))
    }

    /// Whether every dependency of the project resolved (an unknown
    /// project has none, so it is complete).
    pub(crate) fn is_complete(&self, dir: &str) -> bool {
        self.projects.get(project_key(dir)).is_none_or(|p| p.complete)
    }

    pub(crate) fn projects(&self) -> impl Iterator<Item = &str> {
        self.projects.keys().map(String::as_str)
    }

    /// The pins reachable from the project, in table order.
    pub(crate) fn slice_pins(&self, dir: &str) -> impl Iterator<Item = &ResolvedDep> {
        self.slice_rows(dir).into_iter().map(|row| &self.table[row])
    }

    /// `slice_digest` of the project's slice, computed once per project.
    pub(crate) fn slice_digest(&self, dir: &str) -> DepsDigest {
        let compute = || combine(self.slice_rows(dir).into_iter().map(|row| &self.row_hashes[row]));
        match self.projects.get(project_key(dir)) {
            Some(project) => *project.digest.get_or_init(compute),
            None => compute(),
        }
    }

    /// The rows of `table` reachable from the project, in table order.
    /// Rows and visited nodes are bitsets: reading back 64 rows per word
    /// instead of one bool per row was most of a slice's cost.
    fn slice_rows(&self, dir: &str) -> Vec<usize> {
        let Some(project) = self.projects.get(project_key(dir)) else {
            return Vec::new();
        };
        let mut rows = vec![0u64; self.table.len().div_ceil(64)];
        let mut seen = vec![0u64; self.node_pin.len().div_ceil(64)];
        let mut stack: Vec<NodeId> = project.direct.clone();
        while let Some(node) = stack.pop() {
            let (word, bit) = (node / 64, 1u64 << (node % 64));
            if seen[word] & bit != 0 {
                continue;
            }
            seen[word] |= bit;
            let row = self.node_pin[node];
            rows[row / 64] |= 1 << (row % 64);
            stack.extend_from_slice(&self.edges[self.edge_start[node]..self.edge_start[node + 1]]);
        }
        let mut out = Vec::new();
        for (w, &word) in rows.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                out.push(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        out
    }
}

/// A project directory as the graph keys it: relative to the workspace
/// root, `/`-separated, no leading `./` or trailing `/`, and `""` for the
/// root itself (pnpm writes `.`).
pub(crate) fn project_key(dir: &str) -> &str {
    let mut dir = dir.trim_end_matches('/');
    while let Some(rest) = dir.strip_prefix("./") {
        dir = rest.trim_start_matches('/');
    }
    if dir == "." { "" } else { dir }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lockfile::Integrity;

    fn pin(name: &str, version: &str) -> ResolvedDep {
        ResolvedDep { name: name.into(), version: version.into(), integrity: Integrity::Absent }
    }

    fn names(graph: &DepGraph, dir: &str) -> Vec<String> {
        graph.slice_pins(dir).map(ToString::to_string).collect()
    }

    #[test]
    fn a_slice_is_transitive_sorted_and_deduplicated_and_survives_cycles() {
        let mut b = GraphBuilder::default();
        let z = b.add_package(pin("z", "1"));
        let a = b.add_package(pin("a", "1"));
        let a_again = b.add_package(pin("a", "1"));
        let unrelated = b.add_package(pin("u", "1"));
        b.add_edge(z, a);
        b.add_edge(a, a_again);
        b.add_edge(a_again, z);
        b.add_project("./apps/web/", [z]);
        b.add_project("other", [unrelated]);
        let g = b.build();
        assert_eq!(names(&g, "apps/web"), ["a 1", "z 1"]);
        assert_eq!(names(&g, "other"), ["u 1"]);
        assert!(names(&g, "missing").is_empty());
    }

    #[test]
    fn project_keys_normalise_the_root_and_decorations() {
        assert_eq!(project_key("."), "");
        assert_eq!(project_key("./"), "");
        assert_eq!(project_key(""), "");
        assert_eq!(project_key("./apps/web/"), "apps/web");
        assert_eq!(project_key("apps/web"), "apps/web");
    }
}
