//! The registry of live process groups. A group is listed from the moment
//! its leader is spawned until the group is empty, so an interrupt can stop
//! every task vx started, and nothing else. With a guard process, the same
//! list is mirrored to it (the child registers itself; vx sends removals).

use std::collections::BTreeSet;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};

use super::link::GuardLink;

/// Shared handle to the set of live task groups (by PGID).
#[derive(Debug, Clone, Default)]
pub struct Groups {
    live: Arc<Mutex<BTreeSet<i32>>>,
    guard: Option<Arc<GuardLink>>,
}

impl Groups {
    pub fn new() -> Self {
        Groups::default()
    }

    /// A registry mirrored to a guard process.
    pub fn with_guard(guard: Arc<GuardLink>) -> Self {
        Groups { live: Arc::default(), guard: Some(guard) }
    }

    /// Where a forked child announces its own group to the guard.
    pub fn registration_fd(&self) -> Option<RawFd> {
        self.guard.as_ref().and_then(|g| g.registration_fd())
    }

    pub fn register(&self, pgid: i32) {
        self.live.lock().expect("groups lock poisoned").insert(pgid);
    }

    /// The group is empty: forget it here and at the guard.
    pub fn unregister(&self, pgid: i32) {
        self.live.lock().expect("groups lock poisoned").remove(&pgid);
        if let Some(guard) = &self.guard {
            guard.send(&format!("-{pgid}"));
        }
    }

    /// The groups alive now.
    pub fn snapshot(&self) -> Vec<i32> {
        self.live.lock().expect("groups lock poisoned").iter().copied().collect()
    }
}
