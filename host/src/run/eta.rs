//! Predicting a run: each task's expected duration (the p50 of its recent
//! successful executions; nothing for a cache hit) and the wall time of the
//! whole run, found by replaying the schedule — the same walker, the same
//! priorities, the chosen concurrency — with those durations.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use crate::graph::{ContinueMode, TaskGraph, Walker};

/// The prediction for a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prediction {
    /// Expected wall time of the run.
    pub wall: Duration,
    /// Sum of the expected durations of the tasks that would execute.
    pub execution: Duration,
    /// Tasks that would execute but have no recorded duration (counted as 0).
    pub unknown: usize,
}

/// `etas[n]`: `Some(d)` for a known duration, `None` when unknown.
pub fn predict(graph: &TaskGraph, etas: &[Option<Duration>], concurrency: usize) -> Prediction {
    let mut walker = Walker::new(graph, ContinueMode::Never);
    let mut clock = Duration::ZERO;
    let mut running: BinaryHeap<Reverse<(Duration, usize)>> = BinaryHeap::new();
    loop {
        while running.len() < concurrency.max(1) {
            let Some(n) = walker.next_ready() else { break };
            running.push(Reverse((clock + etas[n].unwrap_or_default(), n)));
        }
        let Some(Reverse((end, n))) = running.pop() else { break };
        clock = end;
        walker.finish(n, true);
    }
    Prediction {
        wall: clock,
        execution: etas.iter().flatten().sum(),
        unknown: etas.iter().filter(|e| e.is_none()).count(),
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

    #[test]
    fn replays_the_schedule() {
        let s = Duration::from_secs;
        // Two independent 1 s tasks and a 2 s task depending on the first.
        let g = graph(3, &[(2, 0)]);
        let etas = [Some(s(1)), Some(s(1)), Some(s(2))];
        assert_eq!(predict(&g, &etas, 2).wall, s(3));
        assert_eq!(predict(&g, &etas, 1).wall, s(4));
        let p = predict(&g, &[Some(s(1)), None, Some(s(2))], 4);
        assert_eq!((p.execution, p.unknown), (s(3), 1));
    }
}
