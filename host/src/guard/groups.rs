//! The registry of live process groups. A group is listed from the moment
//! its leader is spawned until the group is empty, so an interrupt can stop
//! every task vx started, and nothing else. With a guard process, the same
//! list is mirrored to it (the child registers itself; vx sends removals).

use std::collections::BTreeSet;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, OnceLock};

use super::link::GuardLink;

/// Shared handle to the set of live task groups (by PGID).
#[derive(Debug, Clone, Default)]
pub struct Groups {
    live: Arc<Mutex<BTreeSet<i32>>>,
    /// The invocation's id, when a guard process is wanted.
    run_id: Option<Arc<str>>,
    /// Started on the first spawn: a run that restores every task from the
    /// cache starts no process, so it needs no guard.
    guard: Arc<OnceLock<Option<Guard>>>,
}

/// A guard process and the cgroup directory it removes when it ends.
#[derive(Debug)]
struct Guard {
    link: Arc<GuardLink>,
    cgroup: Option<super::cgroup::RunCgroup>,
}

impl Groups {
    /// A registry without a guard process.
    pub fn new() -> Self {
        Groups::default()
    }

    /// A registry mirrored to a guard process, started when the first
    /// process is about to be spawned.
    pub fn with_guard(run_id: &str) -> Self {
        Groups { run_id: Some(run_id.into()), ..Groups::default() }
    }

    fn guard(&self) -> Option<&Guard> {
        let run_id = self.run_id.as_ref()?;
        self.guard
            .get_or_init(|| {
                let link = GuardLink::start_watched(run_id)?;
                // The guard kills and removes this session's cgroup when
                // the session ends or vx goes.
                let cgroup = super::cgroup::run_cgroup();
                if let Some(run) = &cgroup {
                    link.send(&format!("c{}", run.dir().display()));
                }
                Some(Guard { link, cgroup })
            })
            .as_ref()
    }

    /// A cgroup for a task about to be spawned, where vx can make one and
    /// a guard process watches this registry (one that does not, a probe's
    /// or a test's, would leave the cgroup behind if vx were killed).
    pub(super) fn task_cgroup(&self) -> Option<super::cgroup::TaskCgroup> {
        self.guard()?.cgroup.as_ref()?.task()
    }

    /// Where a forked child announces its own group to the guard (starting
    /// the guard if this is the first spawn).
    pub fn registration_fd(&self) -> Option<RawFd> {
        self.guard().and_then(|g| g.link.registration_fd())
    }

    /// Closes the pipe to the guard, if one was started: it stops whatever
    /// is still listed and exits.
    pub fn close_guard(&self) {
        if let Some(Some(guard)) = self.guard.get() {
            guard.link.close();
        }
    }

    pub fn register(&self, pgid: i32) {
        self.live.lock().expect("groups lock poisoned").insert(pgid);
    }

    /// The group is empty: forget it here and at the guard.
    pub fn unregister(&self, pgid: i32) {
        self.live.lock().expect("groups lock poisoned").remove(&pgid);
        if let Some(Some(guard)) = self.guard.get() {
            guard.link.send(&format!("-{pgid}"));
        }
    }

    /// The groups alive now.
    pub fn snapshot(&self) -> Vec<i32> {
        self.live.lock().expect("groups lock poisoned").iter().copied().collect()
    }
}
