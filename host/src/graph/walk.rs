//! The ready-node walker: hands out tasks whose dependencies are done and
//! takes outcomes back. It knows nothing of processes or caches (the
//! Turborepo walker's split); the run loop asks it what may start.
//!
//! Among ready tasks it prefers those of a higher rank (the task's
//! `priority`, which the caller hands in), then those with the longest
//! chain of work waiting on them, so the critical path starts first, then
//! the lower node index, so the order is the same on every run.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use super::build::TaskGraph;

/// What `--continue` allows after a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ContinueMode {
    /// Stop starting tasks; running ones finish; the rest are skipped.
    #[default]
    Never,
    /// Keep starting tasks whose dependencies all succeeded.
    DependentsOk,
    /// Start every task, even those whose dependencies failed.
    Always,
}

/// Why a task did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SkipReason {
    /// A dependency (the node index) failed or was itself skipped.
    DependencyFailed(usize),
    /// The run stopped taking new tasks after this node failed.
    RunStopped(usize),
    /// vx was interrupted before the task started.
    Interrupted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Ready,
    Running,
    Finished,
    Skipped,
}

#[derive(Debug)]
pub(crate) struct Walker<'g> {
    graph: &'g TaskGraph,
    mode: ContinueMode,
    state: Vec<State>,
    pending: Vec<usize>,
    /// The first failed (or skipped) dependency of each node, if any.
    blocked_by: Vec<Option<usize>>,
    /// Whether a node's dependents have been released (done, or a
    /// persistent task that became ready).
    released: Vec<bool>,
    priority: Vec<u32>,
    /// Each node's rank (higher starts first); all equal unless
    /// [`Walker::with_ranks`] set them.
    rank: Vec<u8>,
    ready: BTreeSet<(Reverse<u8>, Reverse<u32>, usize)>,
    stopped_by: Option<usize>,
    skipped: Vec<(usize, SkipReason)>,
}

impl<'g> Walker<'g> {
    pub(crate) fn new(graph: &'g TaskGraph, mode: ContinueMode) -> Self {
        let n = graph.len();
        let mut priority = vec![0u32; n];
        for &node in graph.topological_order().iter().rev() {
            priority[node] = 1 + graph.dependents[node].iter().map(|&d| priority[d]).max().unwrap_or(0);
        }
        let pending: Vec<usize> = graph.deps.iter().map(Vec::len).collect();
        let mut walker = Walker {
            graph,
            mode,
            state: vec![State::Waiting; n],
            pending,
            blocked_by: vec![None; n],
            released: vec![false; n],
            priority,
            rank: vec![0; n],
            ready: BTreeSet::new(),
            stopped_by: None,
            skipped: Vec::new(),
        };
        for node in 0..n {
            if walker.pending[node] == 0 {
                walker.make_ready(node);
            }
        }
        walker
    }

    /// A walker over only the nodes marked in `subset`; the others count as
    /// already done (`vx watch` re-runs part of a graph).
    pub(crate) fn with_subset(graph: &'g TaskGraph, mode: ContinueMode, subset: &[bool]) -> Self {
        let mut walker = Walker::new(graph, mode);
        walker.ready.clear();
        for (node, &member) in subset.iter().enumerate() {
            if member {
                walker.pending[node] = graph.deps[node].iter().filter(|&&d| subset[d]).count();
            } else {
                walker.state[node] = State::Finished;
                walker.released[node] = true;
            }
        }
        for (node, &member) in subset.iter().enumerate() {
            if member && walker.pending[node] == 0 {
                walker.make_ready(node);
            } else if member {
                walker.state[node] = State::Waiting;
            }
        }
        walker
    }

    /// The same walker with each node ranked (a higher rank starts first
    /// among ready nodes, before the critical path decides).
    pub(crate) fn with_ranks(mut self, ranks: &[u8]) -> Self {
        debug_assert_eq!(ranks.len(), self.rank.len(), "one rank per node");
        let ready: Vec<usize> = self.ready.iter().map(|&(_, _, n)| n).collect();
        self.rank = ranks.to_vec();
        self.ready = ready.into_iter().map(|n| self.entry(n)).collect();
        self
    }

    fn entry(&self, node: usize) -> (Reverse<u8>, Reverse<u32>, usize) {
        (Reverse(self.rank[node]), Reverse(self.priority[node]), node)
    }

    fn make_ready(&mut self, node: usize) {
        self.state[node] = State::Ready;
        self.ready.insert(self.entry(node));
    }

    /// The next task that may start, marked running; `None` when nothing is
    /// ready now or the run has stopped taking tasks.
    #[cfg(test)]
    pub(crate) fn next_ready(&mut self) -> Option<usize> {
        let node = self.ready_in_order().next()?;
        self.take(node);
        Some(node)
    }

    /// The ready tasks, the one to start first first; none once the run
    /// has stopped taking tasks. The caller starts some with [`Walker::take`].
    pub(crate) fn ready_in_order(&self) -> impl Iterator<Item = usize> + '_ {
        let stopped = self.stopped_by.is_some();
        self.ready.iter().filter(move |_| !stopped).map(|&(_, _, n)| n)
    }

    /// Marks a ready task running (the caller is starting it).
    pub(crate) fn take(&mut self, node: usize) {
        if self.ready.remove(&self.entry(node)) {
            self.state[node] = State::Running;
        }
    }

    /// Hands a task marked running back to the ready ones (a batch began
    /// it without starting it: `run::batch`).
    pub(crate) fn untake(&mut self, node: usize) {
        if self.state[node] == State::Running {
            self.make_ready(node);
        }
    }

    /// A persistent task became ready: its dependents may start while it
    /// keeps running.
    pub(crate) fn release(&mut self, node: usize) {
        self.release_dependents(node, true);
    }

    /// A task ended. Dependents are released (or skipped, by the mode).
    pub(crate) fn finish(&mut self, node: usize, success: bool) {
        self.state[node] = State::Finished;
        if !success && self.mode == ContinueMode::Never && self.stopped_by.is_none() {
            self.stopped_by = Some(node);
        }
        self.release_dependents(node, success);
    }

    fn release_dependents(&mut self, node: usize, success: bool) {
        if std::mem::replace(&mut self.released[node], true) {
            return;
        }
        let graph = self.graph;
        for &d in &graph.dependents[node] {
            if !success && self.blocked_by[d].is_none() {
                self.blocked_by[d] = Some(node);
            }
            self.pending[d] -= 1;
            if self.pending[d] == 0 && self.state[d] == State::Waiting {
                match self.blocked_by[d] {
                    Some(cause) if self.mode != ContinueMode::Always => {
                        self.state[d] = State::Skipped;
                        self.skipped.push((d, SkipReason::DependencyFailed(cause)));
                        self.release_dependents(d, false);
                    }
                    _ => self.make_ready(d),
                }
            }
        }
    }

    /// Stops handing out tasks (an interrupt); what never started is skipped.
    pub(crate) fn interrupt(&mut self) {
        if self.stopped_by.is_none() {
            self.stopped_by = Some(usize::MAX);
        }
    }

    /// Whether every task has finished or been skipped, or can no longer
    /// start because the run stopped.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped_by.is_some()
    }

    /// Whether a node will not run (any more): it finished, was skipped, or
    /// never started and the run stopped taking tasks.
    pub(crate) fn is_settled(&self, node: usize) -> bool {
        match self.state[node] {
            State::Finished | State::Skipped => true,
            State::Running => false,
            State::Waiting | State::Ready => self.stopped_by.is_some(),
        }
    }

    /// Every task that did not run, with the reason. Call at the end.
    pub(crate) fn skipped(&self) -> Vec<(usize, SkipReason)> {
        let mut out = self.skipped.clone();
        for node in 0..self.state.len() {
            if matches!(self.state[node], State::Waiting | State::Ready) {
                let reason = match (self.blocked_by[node], self.stopped_by) {
                    (Some(cause), _) => SkipReason::DependencyFailed(cause),
                    (None, Some(usize::MAX)) | (None, None) => SkipReason::Interrupted,
                    (None, Some(stopper)) => SkipReason::RunStopped(stopper),
                };
                out.push((node, reason));
            }
        }
        out.sort_by_key(|(n, _)| *n);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a ← b ← c, and d alone (b depends on a, c on b).
    fn chain() -> TaskGraph {
        let mut g = TaskGraph::default();
        for name in ["a", "b", "c", "d"] {
            g.nodes.push(super::super::build::Node { id: super::super::TaskId::new(name, "t"), project: 0 });
            g.deps.push(Vec::new());
            g.dependents.push(Vec::new());
        }
        for (from, to) in [(1, 0), (2, 1)] {
            g.deps[from].push(to);
            g.dependents[to].push(from);
        }
        g
    }

    #[test]
    fn critical_path_first_and_order_respected() {
        let g = chain();
        let mut w = Walker::new(&g, ContinueMode::Never);
        assert_eq!(w.next_ready(), Some(0), "a heads the longest chain");
        assert_eq!(w.next_ready(), Some(3));
        assert_eq!(w.next_ready(), None, "b waits for a");
        w.finish(0, true);
        assert_eq!(w.next_ready(), Some(1));
    }

    #[test]
    fn never_stops_and_names_the_failure() {
        let g = chain();
        let mut w = Walker::new(&g, ContinueMode::Never);
        assert_eq!(w.next_ready(), Some(0));
        w.finish(0, false);
        assert_eq!(w.next_ready(), None);
        let skipped = w.skipped();
        assert_eq!(
            skipped,
            vec![
                (1, SkipReason::DependencyFailed(0)),
                (2, SkipReason::DependencyFailed(1)),
                (3, SkipReason::RunStopped(0)),
            ]
        );
    }

    #[test]
    fn dependents_ok_runs_unrelated_work() {
        let g = chain();
        let mut w = Walker::new(&g, ContinueMode::DependentsOk);
        assert_eq!(w.next_ready(), Some(0));
        w.finish(0, false);
        assert_eq!(w.next_ready(), Some(3));
        assert_eq!(w.next_ready(), None);
        assert_eq!(w.skipped().len(), 2);
    }

    #[test]
    fn always_runs_dependents_of_failures() {
        let g = chain();
        let mut w = Walker::new(&g, ContinueMode::Always);
        assert_eq!(w.next_ready(), Some(0));
        w.finish(0, false);
        assert_eq!(w.next_ready(), Some(1));
    }

    #[test]
    fn a_subset_treats_the_rest_as_done() {
        let g = chain();
        let mut w = Walker::with_subset(&g, ContinueMode::Never, &[false, true, true, false]);
        assert_eq!(w.next_ready(), Some(1), "b's dependency a is outside the subset");
        assert_eq!(w.next_ready(), None);
        w.finish(1, true);
        assert_eq!(w.next_ready(), Some(2));
        w.finish(2, true);
        assert!(w.skipped().is_empty());
    }

    #[test]
    fn a_higher_rank_starts_before_the_critical_path() {
        let g = chain();
        let mut w = Walker::new(&g, ContinueMode::Never).with_ranks(&[0, 0, 0, 1]);
        assert_eq!(w.ready_in_order().collect::<Vec<_>>(), vec![3, 0], "d is ranked higher than a's chain");
        w.take(0);
        assert_eq!(w.ready_in_order().collect::<Vec<_>>(), vec![3], "a taken out of order");
        w.finish(0, true);
        assert_eq!(w.next_ready(), Some(3));
        assert_eq!(w.next_ready(), Some(1));
    }

    #[test]
    fn release_lets_dependents_start_once() {
        let g = chain();
        let mut w = Walker::new(&g, ContinueMode::Never);
        assert_eq!(w.next_ready(), Some(0));
        w.release(0);
        assert_eq!(w.next_ready(), Some(1));
        w.finish(0, true);
        assert_eq!(w.next_ready(), Some(3), "finishing a released node releases nothing twice");
        assert_eq!(w.next_ready(), None);
    }
}
