//! `--shard K/N`: one of N balanced parts of a run, for CI fan-out.
//!
//! The selected tasks (the graph's roots: what was named, in the selected
//! projects) are split into N parts; shard K runs its part and whatever
//! its tasks depend on. Every selected task belongs to exactly one shard,
//! so the N shards together run the whole selection once; a dependency
//! that another shard owns is restored from the shared cache when that
//! shard stored it first, and built here otherwise (a shard is correct on
//! its own, and never waits for another).
//!
//! The split is by project: a project's selected tasks stay together (its
//! `test` then finds its own `build` in the same shard), and projects are
//! dealt heaviest first to the lightest shard (longest-processing-time
//! first). A project weighs the sum of its tasks' history p50s when every
//! selected task has one, else its number of selected tasks: a partial
//! history would weigh measured tasks against guessed ones. The split is
//! a function of the graph and those weights alone, so every shard of a
//! CI run computes the same one, given the same history (or none).
//!
//! A shard's plan marks each task ([`ShardMark`]): its own, another
//! shard's (pulled in as a dependency of its own), or a dependency that
//! was not selected, which no shard owns.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde::Serialize;

use super::build::TaskGraph;
use crate::error::{Error, Result};

/// `K/N`: the K-th (from 1) of N shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Parses `K/N` with `1 <= K <= N`.
    pub(crate) fn parse(text: &str) -> Result<Shard> {
        let bad = |why: &str| {
            Error::usage(format!("invalid --shard `{text}`: {why}"))
                .with_hint("write it as K/N with 1 <= K <= N, like `--shard 2/4`")
        };
        let (k, n) = text.split_once('/').ok_or_else(|| bad("expected K/N"))?;
        let number = |s: &str| s.trim().parse::<usize>().map_err(|_| bad("K and N are whole numbers"));
        let (index, count) = (number(k)?, number(n)?);
        if count == 0 || index == 0 || index > count {
            return Err(bad("K must be between 1 and N"));
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Which shard (0-based) each root of `graph` belongs to, in root order.
/// `p50` gives a task's recorded duration by node.
pub(crate) fn assign(graph: &TaskGraph, count: usize, p50: impl Fn(usize) -> Option<Duration>) -> Vec<usize> {
    let weights: Option<Vec<u128>> = graph.roots.iter().map(|&r| p50(r).map(|d| d.as_millis().max(1))).collect();
    // Project index → (weight, the positions in `roots` of its tasks).
    let mut units: BTreeMap<usize, (u128, Vec<usize>)> = BTreeMap::new();
    for (i, &root) in graph.roots.iter().enumerate() {
        let unit = units.entry(graph.nodes[root].project).or_default();
        unit.0 += weights.as_ref().map_or(1, |w| w[i]);
        unit.1.push(i);
    }
    let mut units: Vec<(usize, u128, Vec<usize>)> = units.into_iter().map(|(p, (w, roots))| (p, w, roots)).collect();
    // Heaviest first; equal weights in project order, so the deal is stable.
    units.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut load = vec![0u128; count.max(1)];
    let mut shard_of = vec![0; graph.roots.len()];
    for (_, weight, roots) in units {
        let lightest = (0..load.len()).min_by_key(|&s| (load[s], s)).expect("at least one shard");
        load[lightest] += weight;
        for i in roots {
            shard_of[i] = lightest;
        }
    }
    shard_of
}

/// Each selected task's shard (from 1), by `(project, task)`.
pub(crate) type Owners = HashMap<(usize, String), usize>;

impl TaskGraph {
    /// The roots `shard` owns, as `(project, task)` pairs to build its graph from.
    #[cfg(test)]
    pub(crate) fn shard_roots(&self, shard: Shard, p50: impl Fn(usize) -> Option<Duration>) -> Vec<(usize, String)> {
        self.shard_split(shard, p50).0
    }

    /// The roots `shard` owns, in root order, and the shard that owns
    /// each root of the whole selection.
    pub(crate) fn shard_split(
        &self,
        shard: Shard,
        p50: impl Fn(usize) -> Option<Duration>,
    ) -> (Vec<(usize, String)>, Owners) {
        let owner = assign(self, shard.count, p50);
        let mut mine = Vec::new();
        let mut owners = Owners::new();
        for (&r, s) in self.roots.iter().zip(owner) {
            let key = (self.nodes[r].project, self.nodes[r].id.task.clone());
            if s + 1 == shard.index {
                mine.push(key.clone());
            }
            owners.insert(key, s + 1);
        }
        (mine, owners)
    }
}

/// What a task in a shard's plan is to that shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ShardRole {
    /// A selected task this shard owns: it runs here and in no other shard.
    Own,
    /// A selected task another shard owns, here because a task of this
    /// shard depends on it: restored from the cache when that shard stored
    /// it first, built here otherwise.
    Other,
    /// Not selected (a dependency the named tasks pull in), so no shard
    /// owns it: each shard that needs it restores or builds it.
    Dependency,
}

/// A task's [`ShardRole`] and the shard (from 1) that owns it, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct ShardMark {
    pub role: ShardRole,
    pub owner: Option<usize>,
}

/// Each node of `graph` (a shard's plan) marked for `shard`, given the
/// owners of the whole selection.
pub(crate) fn shard_marks(graph: &TaskGraph, owners: &Owners, shard: Shard) -> Vec<ShardMark> {
    graph
        .nodes
        .iter()
        .map(|node| match owners.get(&(node.project, node.id.task.clone())) {
            Some(&k) if k == shard.index => ShardMark { role: ShardRole::Own, owner: Some(k) },
            Some(&k) => ShardMark { role: ShardRole::Other, owner: Some(k) },
            None => ShardMark { role: ShardRole::Dependency, owner: None },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::TaskId;

    fn graph(projects: &[(&str, &[&str])]) -> TaskGraph {
        let mut g = TaskGraph::default();
        for (p, (project, tasks)) in projects.iter().enumerate() {
            for task in *tasks {
                let n = g.nodes.len();
                g.nodes.push(crate::graph::build::Node {
                    id: TaskId { project: project.to_string(), task: task.to_string() },
                    project: p,
                });
                g.deps.push(Vec::new());
                g.dependents.push(Vec::new());
                g.roots.push(n);
            }
        }
        g
    }

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        assert_eq!(Shard::parse("1/1").unwrap().to_string(), "1/1");
        for bad in ["0/4", "5/4", "1/0", "a/b", "3", "", "-1/2"] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.to_string().contains("--shard"), "{bad}: {e}");
        }
    }

    #[test]
    fn every_root_in_exactly_one_shard_and_projects_stay_whole() {
        let g = graph(&[("a", &["build", "test"]), ("b", &["build"]), ("c", &["build", "test"]), ("d", &["build"])]);
        let owner = assign(&g, 3, |_| None);
        assert_eq!(owner.len(), g.roots.len());
        assert!(owner.iter().all(|&s| s < 3));
        // a's and c's two tasks stay together.
        assert_eq!(owner[0], owner[1]);
        assert_eq!(owner[3], owner[4]);
        let union: usize = (1..=3).map(|k| g.shard_roots(Shard { index: k, count: 3 }, |_| None).len()).sum();
        assert_eq!(union, g.roots.len(), "the shards together hold every root once");
    }

    #[test]
    fn balances_by_p50_when_every_task_has_one_else_by_count() {
        // One slow project and three fast ones: the slow one alone in a shard.
        let g = graph(&[("slow", &["t"]), ("f1", &["t"]), ("f2", &["t"]), ("f3", &["t"])]);
        let p50 = |n: usize| Some(Duration::from_secs(if n == 0 { 30 } else { 10 }));
        let owner = assign(&g, 2, p50);
        assert!(owner[1..].iter().all(|&s| s != owner[0]), "{owner:?}");
        // Without a p50 for one task, counts: two and two.
        let partial = |n: usize| (n != 3).then(|| Duration::from_secs(if n == 0 { 30 } else { 10 }));
        let owner = assign(&g, 2, partial);
        assert_eq!(owner.iter().filter(|&&s| s == 0).count(), 2, "{owner:?}");
    }

    #[test]
    fn a_shards_plan_marks_its_own_other_shards_and_unselected_tasks() {
        let g = graph(&[("a", &["build"]), ("b", &["build"])]);
        let shard = Shard { index: 1, count: 2 };
        let (mine, owners) = g.shard_split(shard, |_| None);
        assert_eq!(mine, [(0, "build".to_string())]);
        // This shard's plan: its own a#build, b#build (shard 2's) and an
        // unselected c#lint that both need.
        let mut plan = graph(&[("a", &["build"]), ("b", &["build"]), ("c", &["lint"])]);
        plan.roots.truncate(1);
        let marks = shard_marks(&plan, &owners, shard);
        assert_eq!(
            marks,
            [
                ShardMark { role: ShardRole::Own, owner: Some(1) },
                ShardMark { role: ShardRole::Other, owner: Some(2) },
                ShardMark { role: ShardRole::Dependency, owner: None },
            ]
        );
    }

    #[test]
    fn more_shards_than_projects_leaves_some_empty() {
        let g = graph(&[("a", &["build"])]);
        assert_eq!(g.shard_roots(Shard { index: 1, count: 2 }, |_| None).len(), 1);
        assert!(g.shard_roots(Shard { index: 2, count: 2 }, |_| None).is_empty());
    }
}
