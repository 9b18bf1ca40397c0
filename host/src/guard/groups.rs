//! The registry of live process groups. A group is listed from the moment
//! its leader is spawned until the group is empty, so an interrupt can stop
//! every task vx started, and nothing else.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// Shared handle to the set of live task groups (by PGID).
#[derive(Debug, Clone, Default)]
pub struct Groups {
    live: Arc<Mutex<BTreeSet<i32>>>,
}

impl Groups {
    pub fn new() -> Self {
        Groups::default()
    }

    pub fn register(&self, pgid: i32) {
        self.live.lock().expect("groups lock poisoned").insert(pgid);
    }

    pub fn unregister(&self, pgid: i32) {
        self.live.lock().expect("groups lock poisoned").remove(&pgid);
    }

    /// The groups alive now.
    pub fn snapshot(&self) -> Vec<i32> {
        self.live.lock().expect("groups lock poisoned").iter().copied().collect()
    }
}
