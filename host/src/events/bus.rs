//! [`Bus`] and [`Subscriber`]: the engine emits on a bus, synchronously
//! and in order, and every subscriber sees every event.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::event::{Event, Phase};

/// Something that watches a run.
pub(crate) trait Subscriber: Send + Sync + fmt::Debug {
    fn on(&self, event: &Event<'_>);
}

/// The subscribers of one run, cheap to clone into every task.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bus {
    subscribers: Arc<[Arc<dyn Subscriber>]>,
}

impl Bus {
    pub(crate) fn new(subscribers: Vec<Arc<dyn Subscriber>>) -> Bus {
        Bus { subscribers: subscribers.into() }
    }

    /// Delivers `event` to every subscriber, in order.
    pub(crate) fn emit(&self, event: Event<'_>) {
        for s in self.subscribers.iter() {
            s.on(&event);
        }
    }

    /// Shorthand for [`Event::TaskNote`].
    pub(crate) fn note(&self, task: &str, message: &str) {
        self.emit(Event::TaskNote { task, message });
    }

    /// [`Event::Span`] of a step of `task` that began at `start` and ends now.
    pub(crate) fn span(&self, task: &str, phase: Phase, start: Instant) {
        self.emit(Event::Span { task, phase, start, end: Instant::now() });
    }

    /// Shorthand for [`Event::Output`].
    pub(crate) fn output(&self, task: &str, line: &[u8]) {
        self.emit(Event::Output { task, line });
    }
}
