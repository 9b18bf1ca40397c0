//! `vx watch`: one bus for the whole session, a fresh set of consumers
//! for each cycle. History, the live file and subscriber plugins each
//! describe one run (a cycle ends them with `RunFinished`), while the
//! front and the servers outlive cycles; so the session's bus holds the
//! front and this relay, and each cycle puts its own consumers behind the
//! relay before it starts. Events between cycles (a server's output)
//! reach the front alone.

use std::sync::{Arc, Mutex};

use super::consumers::RunSession;
use crate::events::{Event, Subscriber};

/// The consumers of the cycle under way, if any.
#[derive(Debug, Default)]
pub(crate) struct CycleRelay {
    current: Mutex<Option<Arc<RunSession>>>,
}

impl CycleRelay {
    /// The consumers of the cycle about to start.
    pub(crate) fn begin(&self, cycle: RunSession) -> Arc<RunSession> {
        let cycle = Arc::new(cycle);
        *self.current.lock().expect("relay lock") = Some(cycle.clone());
        cycle
    }
}

impl Subscriber for CycleRelay {
    fn on(&self, event: &Event<'_>) {
        // Cloned out of the lock: a consumer may take its time (history
        // writes its database on `RunFinished`).
        let current = self.current.lock().expect("relay lock").clone();
        let Some(cycle) = current else { return };
        for consumer in &cycle.subscribers {
            consumer.on(event);
        }
        if matches!(event, Event::RunFinished { .. }) {
            self.current.lock().expect("relay lock").take();
        }
    }
}
