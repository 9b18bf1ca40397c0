//! Admission: whether a ready task may start now, given the run's budgets
//! (`--concurrency` in cpus, `--memory` in bytes), what the running tasks
//! hold, and the mutexes held in this vx. Pure bookkeeping: the engine asks,
//! takes and gives back; the machine-wide side of a mutex is `run::mutex`.
//!
//! Ready tasks are asked in the walker's order. One that does not fit
//! reserves its share from what later ones see, so a large task is next
//! in line as soon as its share frees up rather than starved by small ones
//! behind it; a task that waits for a mutex reserves nothing, since cpus
//! and memory would not let it start sooner. A share larger than a budget
//! counts as the whole budget: the task runs alone rather than never.

use std::collections::HashMap;

use crate::config::Resources;
use crate::units::format_bytes;

/// What the run may use at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub millicpus: u64,
    /// `None`: memory is not counted (`--memory unlimited`).
    pub memory: Option<u64>,
}

/// Why a ready task has not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wait {
    Cpus {
        need: u64,
        free: u64,
        budget: u64,
    },
    Memory {
        need: u64,
        free: u64,
        budget: u64,
    },
    /// It would fit, but a task ahead of it in line waits for that room.
    Behind {
        node: usize,
    },
    /// Another task of this vx holds the mutex.
    MutexHere {
        name: String,
        node: usize,
    },
    /// Another process holds the mutex (its pid, when it wrote one).
    MutexElsewhere {
        name: String,
        pid: Option<u32>,
    },
}

impl Wait {
    /// One line for the status line, the TUI and notes; `id` names a node.
    pub(crate) fn text(&self, id: impl Fn(usize) -> String) -> String {
        match self {
            Wait::Cpus { need, free, budget } => {
                format!("waiting for cpus: needs {}, {} of {} free", cpus(*need), cpus(*free), cpus(*budget))
            }
            Wait::Memory { need, free, budget } => format!(
                "waiting for memory: needs {}, {} of {} free",
                format_bytes(*need),
                format_bytes(*free),
                format_bytes(*budget)
            ),
            Wait::Behind { node } => format!("waiting behind {}, which is next in line for cpus or memory", id(*node)),
            Wait::MutexHere { name, node } => format!("waiting for mutex {name}, held by {}", id(*node)),
            Wait::MutexElsewhere { name, pid: Some(pid) } => {
                format!("waiting for mutex {name}, held by another vx (pid {pid})")
            }
            Wait::MutexElsewhere { name, pid: None } => format!("waiting for mutex {name}, held by another vx"),
        }
    }
}

/// Thousandths of a cpu as written in config: `2`, `0.5`.
pub(crate) fn cpus(millicpus: u64) -> String {
    if millicpus.is_multiple_of(1000) {
        (millicpus / 1000).to_string()
    } else {
        format!("{}", millicpus as f64 / 1000.0)
    }
}

/// What is left for the tasks after this one in one pass over the ready
/// queue: free room minus the shares of the tasks ahead that wait for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pass {
    millicpus: u64,
    memory: u64,
    /// The first task of the pass that waits for room.
    first_waiting: Option<usize>,
}

impl Pass {
    /// Nothing more can start in this pass (every task takes some cpu).
    pub(crate) fn full(&self) -> bool {
        self.millicpus == 0
    }
}

#[derive(Debug)]
pub(crate) struct Admission {
    budget: Budget,
    used: Resources,
    /// The share each node holds (servers give theirs back once ready).
    held: HashMap<usize, Resources>,
    /// Mutex name → the node holding it in this vx.
    mutexes: HashMap<String, usize>,
}

impl Admission {
    pub(crate) fn new(budget: Budget) -> Self {
        let budget = Budget { millicpus: budget.millicpus.max(1), ..budget };
        Admission { budget, used: Resources { millicpus: 0, memory: 0 }, held: HashMap::new(), mutexes: HashMap::new() }
    }

    /// `share`, cut to the budgets: what an oversize task takes (all of it).
    pub(crate) fn clamp(&self, share: Resources) -> Resources {
        Resources {
            millicpus: share.millicpus.min(self.budget.millicpus),
            memory: self.budget.memory.map_or(0, |m| share.memory.min(m)),
        }
    }

    fn free(&self) -> Resources {
        Resources {
            millicpus: self.budget.millicpus.saturating_sub(self.used.millicpus),
            memory: self.budget.memory.map_or(u64::MAX, |m| m.saturating_sub(self.used.memory)),
        }
    }

    /// Starts a pass over the ready queue.
    pub(crate) fn pass(&self) -> Pass {
        let free = self.free();
        Pass { millicpus: free.millicpus, memory: free.memory, first_waiting: None }
    }

    /// Whether `node` may start in this pass; on success its (clamped)
    /// share is taken from the pass. A task that waits for room reserves
    /// its share from the rest of the pass.
    pub(crate) fn check(
        &self,
        pass: &mut Pass,
        node: usize,
        share: Resources,
        mutex: Option<&str>,
    ) -> Result<Resources, Wait> {
        if let Some(name) = mutex
            && let Some(&holder) = self.mutexes.get(name)
            && holder != node
        {
            return Err(Wait::MutexHere { name: name.to_string(), node: holder });
        }
        let share = self.clamp(share);
        let fits = share.millicpus <= pass.millicpus && share.memory <= pass.memory;
        let wait = if fits {
            None
        } else {
            let free = self.free();
            Some(if share.millicpus > free.millicpus {
                Wait::Cpus { need: share.millicpus, free: free.millicpus, budget: self.budget.millicpus }
            } else if share.memory > free.memory {
                let budget = self.budget.memory.unwrap_or(u64::MAX);
                Wait::Memory { need: share.memory, free: free.memory, budget }
            } else {
                Wait::Behind { node: pass.first_waiting.unwrap_or(node) }
            })
        };
        pass.millicpus = pass.millicpus.saturating_sub(share.millicpus);
        pass.memory = pass.memory.saturating_sub(share.memory);
        match wait {
            None => Ok(share),
            Some(wait) => {
                pass.first_waiting.get_or_insert(node);
                Err(wait)
            }
        }
    }

    /// Gives back a share taken by [`Admission::check`] whose task did not
    /// start after all (its machine-wide mutex was held elsewhere).
    pub(crate) fn untake(&self, pass: &mut Pass, share: Resources) {
        pass.millicpus += share.millicpus;
        pass.memory = pass.memory.saturating_add(share.memory);
    }

    /// `node` starts with `share` (as [`Admission::check`] returned it)
    /// and holds `mutex`.
    pub(crate) fn take(&mut self, node: usize, share: Resources, mutex: Option<&str>) {
        self.used.millicpus += share.millicpus;
        self.used.memory += share.memory;
        self.held.insert(node, share);
        if let Some(name) = mutex {
            self.mutexes.insert(name.to_string(), node);
        }
    }

    /// A server became ready: it gives back its cpus and memory (its
    /// dependents must not starve) and keeps its mutex.
    pub(crate) fn give_back(&mut self, node: usize) {
        if let Some(share) = self.held.remove(&node) {
            self.used.millicpus -= share.millicpus;
            self.used.memory -= share.memory;
        }
    }

    /// `node` ended: everything it held is free again.
    pub(crate) fn release(&mut self, node: usize) {
        self.give_back(node);
        self.mutexes.retain(|_, holder| *holder != node);
    }

    /// The node holding `name` in this vx.
    pub(crate) fn holder(&self, name: &str) -> Option<usize> {
        self.mutexes.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn share(cpus: u64, memory: u64) -> Resources {
        Resources { millicpus: cpus * 1000, memory }
    }

    /// One pass over `queue` (node, share, mutex): the nodes that start.
    fn admit(a: &mut Admission, queue: &[(usize, Resources, Option<&str>)]) -> (Vec<usize>, Vec<(usize, Wait)>) {
        let mut pass = a.pass();
        let (mut started, mut waiting) = (Vec::new(), Vec::new());
        for &(node, s, mutex) in queue {
            match a.check(&mut pass, node, s, mutex) {
                Ok(s) => {
                    a.take(node, s, mutex);
                    started.push(node);
                }
                Err(w) => waiting.push((node, w)),
            }
        }
        (started, waiting)
    }

    #[test]
    fn tasks_without_resources_count_one_cpu_each() {
        let mut a = Admission::new(Budget { millicpus: 2000, memory: None });
        let q: Vec<_> = (0..3).map(|n| (n, Resources::default(), None)).collect();
        let (started, waiting) = admit(&mut a, &q);
        assert_eq!(started, vec![0, 1]);
        assert_eq!(waiting, vec![(2, Wait::Cpus { need: 1000, free: 0, budget: 2000 })]);
        a.release(0);
        assert_eq!(admit(&mut a, &q[2..]).0, vec![2]);
    }

    #[test]
    fn memory_is_a_second_dimension() {
        let mut a = Admission::new(Budget { millicpus: 4000, memory: Some(GIB) });
        let q = [(0, share(1, GIB), None), (1, share(1, GIB), None), (2, share(1, 0), None), (3, share(1, 0), None)];
        let (started, waiting) = admit(&mut a, &q);
        assert_eq!(started, vec![0, 2, 3], "the small tasks start beside the first large one");
        assert_eq!(waiting, vec![(1, Wait::Memory { need: GIB, free: 0, budget: GIB })]);
        a.release(0);
        assert_eq!(admit(&mut a, &q[1..2]).0, vec![1]);
    }

    #[test]
    fn an_oversize_task_runs_alone_when_its_turn_comes() {
        let mut a = Admission::new(Budget { millicpus: 2000, memory: Some(GIB) });
        a.take(9, share(1, 0), None);
        let q = [(0, share(8, 4 * GIB), None), (1, share(1, 0), None)];
        let (started, waiting) = admit(&mut a, &q);
        assert!(started.is_empty(), "the oversize task waits for all of it; the small one waits behind it");
        assert_eq!(waiting[0].1, Wait::Cpus { need: 2000, free: 1000, budget: 2000 });
        assert_eq!(waiting[1].1, Wait::Behind { node: 0 });
        a.release(9);
        let (started, _) = admit(&mut a, &q);
        assert_eq!(started, vec![0], "alone: it holds the whole budget");
    }

    #[test]
    fn a_mutex_is_held_by_one_task_and_reserves_nothing() {
        let mut a = Admission::new(Budget { millicpus: 4000, memory: None });
        let q = [(0, share(1, 0), Some("db")), (1, share(1, 0), Some("db")), (2, share(1, 0), None)];
        let (started, waiting) = admit(&mut a, &q);
        assert_eq!(started, vec![0, 2]);
        assert_eq!(waiting, vec![(1, Wait::MutexHere { name: "db".into(), node: 0 })]);
        a.give_back(0);
        assert_eq!(a.holder("db"), Some(0), "a ready server keeps its mutex");
        a.release(0);
        assert_eq!(admit(&mut a, &q[1..2]).0, vec![1]);
    }

    #[test]
    fn wait_texts() {
        let id = |n: usize| format!("p{n}#t");
        assert_eq!(
            Wait::Cpus { need: 2000, free: 500, budget: 4000 }.text(id),
            "waiting for cpus: needs 2, 0.5 of 4 free"
        );
        assert_eq!(
            Wait::MutexElsewhere { name: "db".into(), pid: Some(7) }.text(id),
            "waiting for mutex db, held by another vx (pid 7)"
        );
        assert_eq!(Wait::MutexHere { name: "db".into(), node: 3 }.text(id), "waiting for mutex db, held by p3#t");
    }
}
