//! Predicting a run: each task's expected duration (the p50 of its recent
//! successful executions; nothing for a cache hit) and the wall time of the
//! whole run, found by replaying the schedule with those durations: the
//! same walker and priorities, and the engine's own admission
//! (`run::Admission`, one implementation for both),
//! so a task starts only when its cpus and memory fit the budgets and its
//! mutex is free. Two tasks the run would never run together (a shared
//! mutex, shares that do not fit side by side) are never predicted to.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use crate::config::{Resources, Workspace};
use crate::graph::{ContinueMode, TaskGraph, Walker};
use crate::run::{Admission, Budget};

/// The prediction for a plan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Prediction {
    /// Expected wall time of the run.
    pub wall: Duration,
    /// Sum of the expected durations of the tasks that would execute.
    pub execution: Duration,
    /// Tasks that would execute but have no recorded duration (counted as 0).
    pub unknown: usize,
    /// Each node's expected start and end, from the start of the run.
    pub schedule: Vec<(Duration, Duration)>,
}

/// What a task asks of admission, as the engine asks it: a group nothing,
/// any other task its `resources` and `mutex`; `rank` is its `priority`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Demand<'a> {
    pub share: Resources,
    pub mutex: Option<&'a str>,
    pub rank: u8,
}

/// Each node's [`Demand`].
pub(crate) fn demands<'a>(ws: &'a Workspace, graph: &TaskGraph) -> Vec<Demand<'a>> {
    graph
        .nodes
        .iter()
        .map(|node| {
            let task = &ws.projects[node.project].tasks[&node.id.task];
            if task.is_group() {
                return Demand { share: Resources { millicpus: 0, memory: 0 }, mutex: None, rank: task.priority as u8 };
            }
            Demand { share: task.resources, mutex: task.mutex.as_deref(), rank: task.priority as u8 }
        })
        .collect()
}

/// `etas[n]`: `Some(d)` for a known duration, `None` when unknown (0).
pub(crate) fn predict(
    graph: &TaskGraph,
    etas: &[Option<Duration>],
    demands: &[Demand<'_>],
    budget: Budget,
) -> Prediction {
    let ranks: Vec<u8> = demands.iter().map(|d| d.rank).collect();
    let mut walker = Walker::new(graph, ContinueMode::Never).with_ranks(&ranks);
    let mut admission = Admission::new(budget);
    let mut clock = Duration::ZERO;
    let mut running: BinaryHeap<Reverse<(Duration, usize)>> = BinaryHeap::new();
    let mut schedule = vec![(Duration::ZERO, Duration::ZERO); graph.len()];
    loop {
        let mut pass = admission.pass();
        let ready: Vec<usize> = walker.ready_in_order().collect();
        for node in ready {
            if pass.full() {
                break;
            }
            let demand = &demands[node];
            let Ok(share) = admission.check(&mut pass, node, demand.share, demand.mutex) else { continue };
            admission.take(node, share, demand.mutex);
            walker.take(node);
            let end = clock + etas[node].unwrap_or_default();
            schedule[node] = (clock, end);
            running.push(Reverse((end, node)));
        }
        let Some(Reverse((end, n))) = running.pop() else { break };
        clock = end;
        admission.release(n);
        walker.finish(n, true);
    }
    Prediction {
        wall: clock,
        execution: etas.iter().flatten().sum(),
        unknown: etas.iter().filter(|e| e.is_none()).count(),
        schedule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Node, TaskId};

    fn graph(n: usize, edges: &[(usize, usize)]) -> TaskGraph {
        let mut g = TaskGraph::default();
        for i in 0..n {
            g.nodes.push(Node { id: TaskId::new(format!("p{i}"), "t"), project: i });
            g.deps.push(Vec::new());
            g.dependents.push(Vec::new());
        }
        for &(from, to) in edges {
            g.deps[from].push(to);
            g.dependents[to].push(from);
        }
        g
    }

    const GIB: u64 = 1 << 30;

    fn cpus(n: u64) -> Budget {
        Budget { millicpus: n * 1000, memory: Some(8 * GIB) }
    }

    fn plain(n: usize) -> Vec<Demand<'static>> {
        vec![Demand { share: Resources::default(), mutex: None, rank: 1 }; n]
    }

    /// Whether the predicted runs of `a` and `b` overlap in time.
    fn overlap(p: &Prediction, a: usize, b: usize) -> bool {
        let ((s1, e1), (s2, e2)) = (p.schedule[a], p.schedule[b]);
        s1 < e2 && s2 < e1
    }

    #[test]
    fn replays_the_schedule() {
        let s = Duration::from_secs;
        // Two independent 1 s tasks and a 2 s task depending on the first.
        let g = graph(3, &[(2, 0)]);
        let etas = [Some(s(1)), Some(s(1)), Some(s(2))];
        assert_eq!(predict(&g, &etas, &plain(3), cpus(2)).wall, s(3));
        assert_eq!(predict(&g, &etas, &plain(3), cpus(1)).wall, s(4));
        let p = predict(&g, &[Some(s(1)), None, Some(s(2))], &plain(3), cpus(4));
        assert_eq!((p.execution, p.unknown), (s(3), 1));
        assert_eq!(p.schedule[2], (s(1), s(3)), "after its dependency");
    }

    #[test]
    fn tasks_sharing_a_mutex_are_never_predicted_together() {
        let s = Duration::from_secs;
        let g = graph(3, &[]);
        let mut demands = plain(3);
        demands[0].mutex = Some("db");
        demands[1].mutex = Some("db");
        let p = predict(&g, &[Some(s(2)), Some(s(2)), Some(s(2))], &demands, cpus(8));
        assert!(!overlap(&p, 0, 1), "{:?}", p.schedule);
        assert!(overlap(&p, 0, 2) || overlap(&p, 1, 2), "the third runs beside one of them: {:?}", p.schedule);
        assert_eq!(p.wall, s(4));
    }

    #[test]
    fn shares_that_do_not_fit_side_by_side_are_predicted_one_after_another() {
        let s = Duration::from_secs;
        let g = graph(3, &[]);
        let mut demands = plain(3);
        demands[0].share = Resources { millicpus: 3000, memory: 0 };
        demands[1].share = Resources { millicpus: 1000, memory: 6 * GIB };
        demands[2].share = Resources { millicpus: 1000, memory: 6 * GIB };
        // Eight cpus: only memory keeps 1 and 2 apart.
        let p = predict(&g, &[Some(s(1)); 3], &demands, cpus(8));
        assert!(!overlap(&p, 1, 2), "12 GiB do not fit in 8: {:?}", p.schedule);
        assert!(overlap(&p, 0, 1), "3 + 1 cpus and 6 GiB fit: {:?}", p.schedule);
        assert_eq!(p.wall, s(2));
        // Four cpus: 3 + 1 fill them, so 2 waits for cpus as well.
        let p = predict(&g, &[Some(s(1)); 3], &demands, cpus(4));
        assert!(!overlap(&p, 0, 2) && !overlap(&p, 1, 2), "{:?}", p.schedule);
        // A share over the budget runs alone.
        demands[0].share = Resources { millicpus: 16_000, memory: 0 };
        let p = predict(&g, &[Some(s(1)); 3], &demands, cpus(4));
        assert!(!overlap(&p, 0, 1) && !overlap(&p, 0, 2), "{:?}", p.schedule);
    }
}
