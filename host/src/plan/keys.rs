//! Keys for a whole plan at once, for `--dry` (a run computes each key just
//! before its task starts, after its dependencies have written their
//! outputs). Tasks are keyed level by level in dependency order, each level
//! on a few threads.

use crate::cache::{Cache, CacheKey, KeyManifest};
use crate::config::{ExecutorName, Workspace};
use crate::graph::TaskGraph;
use crate::run::{Executors, effective_executor};

/// A task's planned key, or why it has none.
pub(crate) type PlannedKey = Result<(CacheKey, KeyManifest), String>;

/// A task's cache status as `--dry` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlannedCache {
    /// In the local store.
    HitLocal,
    /// Not local, but the remote tier has it.
    HitRemote,
    /// Would run (and be stored).
    Miss,
    /// Not cacheable, the cache is off, or the task has no key.
    Uncached,
    /// A group task: nothing runs, nothing is cached.
    Group,
}

impl PlannedCache {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PlannedCache::HitLocal => "hit-local",
            PlannedCache::HitRemote => "hit-remote",
            PlannedCache::Miss => "miss",
            PlannedCache::Uncached => "uncached",
            PlannedCache::Group => "group",
        }
    }

    pub(crate) fn is_hit(self) -> bool {
        matches!(self, PlannedCache::HitLocal | PlannedCache::HitRemote)
    }
}

impl std::fmt::Display for PlannedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Each node's executor (its own, or `run_executor` for a task that is not
/// persistent) and that executor's part of the key, as a run computes them.
fn node_executors(
    ws: &Workspace,
    graph: &TaskGraph,
    run_executor: Option<&str>,
) -> Vec<Result<(String, String), String>> {
    let executors = Executors::new(ws);
    (0..graph.len())
        .map(|n| {
            let node = &graph.nodes[n];
            let task = &ws.projects[node.project].tasks[&node.id.task];
            let name = effective_executor(task, run_executor);
            executors.identity(&name).map(|id| (name.to_string(), id)).map_err(|e| e.to_string())
        })
        .collect()
}

/// Keys every node of `graph`, in node order, with the executor each task
/// would run on (`run_executor` is `--executor`), so that the keys are the
/// ones a run computes.
pub(crate) fn plan_keys(
    ws: &Workspace,
    graph: &TaskGraph,
    cache: &Cache,
    run_executor: Option<&str>,
) -> Vec<PlannedKey> {
    let executors = node_executors(ws, graph, run_executor);
    let mut depth = vec![0usize; graph.len()];
    for n in graph.topological_order() {
        depth[n] = graph.deps[n].iter().map(|&d| depth[d] + 1).max().unwrap_or(0);
    }
    let levels = depth.iter().copied().max().map_or(0, |d| d + 1);
    let mut keys: Vec<Option<PlannedKey>> = (0..graph.len()).map(|_| None).collect();
    let threads = crate::sys::cores().clamp(1, 8);
    for level in 0..levels {
        let nodes: Vec<usize> = (0..graph.len()).filter(|&n| depth[n] == level).collect();
        let chunk = nodes.len().div_ceil(threads).max(1);
        let done: Vec<(usize, PlannedKey)> = std::thread::scope(|scope| {
            let (keys, executors) = (&keys, &executors);
            let handles: Vec<_> = nodes
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter().map(|&n| (n, key_one(ws, graph, cache, keys, &executors[n], n))).collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().expect("key thread panicked")).collect()
        });
        for (n, k) in done {
            keys[n] = Some(k);
        }
    }
    keys.into_iter().map(|k| k.expect("every level is keyed")).collect()
}

fn key_one(
    ws: &Workspace,
    graph: &TaskGraph,
    cache: &Cache,
    keys: &[Option<PlannedKey>],
    executor: &Result<(String, String), String>,
    n: usize,
) -> PlannedKey {
    let (executor, identity) = executor.as_ref().map_err(Clone::clone)?;
    let mut deps = Vec::new();
    for &d in &graph.deps[n] {
        match &keys[d] {
            Some(Ok((key, _))) => deps.push((graph.nodes[d].id.to_string(), key.clone())),
            _ => return Err(format!("dependency {} has no key", graph.nodes[d].id)),
        }
    }
    let node = &graph.nodes[n];
    let project = &ws.projects[node.project];
    let mut task = project.tasks[&node.id.task].clone();
    task.executor = ExecutorName::new(executor);
    cache.task_key(&ws.root, &project.dir, &node.id.to_string(), &task, identity, &deps).map_err(|e| e.to_string())
}

/// Each node's cache status as `--dry` shows it: `hit-local`, `hit-remote`,
/// `miss` or `uncached`. Local misses are looked up in the remote tier in
/// one batch (`exists`), when the run may read it.
pub(crate) fn planned_statuses(
    ws: &Workspace,
    graph: &TaskGraph,
    cache: &Cache,
    keys: &[PlannedKey],
) -> Vec<PlannedCache> {
    let mut statuses: Vec<PlannedCache> = (0..graph.len())
        .map(|n| {
            let task = &ws.projects[graph.nodes[n].project].tasks[&graph.nodes[n].id.task];
            if task.is_group() {
                return PlannedCache::Group;
            }
            planned_status(cache, task.cache, &keys[n])
        })
        .collect();
    let remote = cache.remote.as_ref().filter(|_| cache.mode.remote.read && !cache.force);
    if let Some(remote) = remote {
        let misses: Vec<usize> = (0..graph.len()).filter(|&n| statuses[n] == PlannedCache::Miss).collect();
        let asked: Vec<String> =
            misses.iter().filter_map(|&n| keys[n].as_ref().ok().map(|(k, _)| k.0.clone())).collect();
        if asked.len() == misses.len() {
            for (&n, found) in misses.iter().zip(remote.exists(&asked)) {
                if found {
                    statuses[n] = PlannedCache::HitRemote;
                }
            }
        }
    }
    statuses
}

/// `hit-local`, `miss` or `uncached` for one task, from the local store.
pub(crate) fn planned_status(cache: &Cache, cacheable: bool, key: &PlannedKey) -> PlannedCache {
    match key {
        Ok((key, _)) if cacheable && cache.reads() => match cache.store.contains(key) {
            true => PlannedCache::HitLocal,
            false => PlannedCache::Miss,
        },
        Ok(_) if cacheable => PlannedCache::Miss,
        _ => PlannedCache::Uncached,
    }
}
