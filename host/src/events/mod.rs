//! The run-event stream: what happened, as typed events, between the
//! engine that produces them and everything that shows or keeps them.
//!
//! The engine ([`crate::run`]) never prints. It emits [`Event`]s on a
//! [`Bus`], and each [`Subscriber`] decides what to do with them: the
//! terminal (prefixed lines, the status line, GitHub groups), the
//! end-of-run reports (markdown, GitHub annotations, reporter plugins) and
//! history. Warnings from code that knows nothing of a run (the cache, the
//! REAPI client, the guard, plugins) are `tracing` records; [`bridge`]
//! turns them into [`Event::Warning`] on the same bus, so a front end sees
//! everything through one path.
//!
//! Delivery is synchronous and in order: `emit` returns once every
//! subscriber has seen the event. That keeps a task's lines whole and in
//! the order the task wrote them, and it is cheap (no allocation per
//! event: payloads are borrowed). A subscriber that needs to keep an event
//! copies what it needs. The list of events is documented in
//! `docs/architecture.md`; later consumers (run summaries, profiles, the
//! dashboard, subscriber plugins) build on it.

pub mod bridge;
mod outcome;
pub mod output;

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

pub use outcome::{CacheOutcome, RunSummary, Spelling, TaskResult, TaskStatus};

use crate::cache::KeyManifest;
use crate::error::ErrorKind;

/// One thing that happened in a run. Task events carry the task's id
/// (`project#task`).
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The plan is fixed: these tasks will be walked, in this order.
    Planned { tasks: &'a [String], concurrency: usize },
    /// A ready task cannot start yet: `reason` says what it waits for
    /// (cpus, memory, a mutex); `None` once it no longer waits.
    Waiting { task: &'a str, reason: Option<&'a str> },
    /// A task's command is starting (a cache miss when it has a key).
    Started { task: &'a str, key: Option<&'a str>, executor: &'a str },
    /// One line of a task's output, with its newline when it had one; a
    /// line longer than [`output::MAX_LINE`] comes in pieces of that size.
    Output { task: &'a str, line: &'a [u8] },
    /// A persistent task is ready (its readiness rule matched): its
    /// dependents may start, and it goes on running.
    Ready { task: &'a str },
    /// A task's key was looked up and not found: it will run.
    CacheMiss { task: &'a str, key: &'a str },
    /// A task's outputs were restored from the cache; `log` is the output
    /// it wrote when it ran.
    CacheHit { task: &'a str, key: &'a str, tier: CacheOutcome, log: &'a [u8] },
    /// Something vx says about one task (a timeout, a restart, why it is
    /// not cached): always shown, beside the task's output.
    TaskNote { task: &'a str, message: &'a str },
    /// A step of a task took this time (for `--profile`): emitted when the
    /// step ends.
    Span { task: &'a str, phase: Phase, start: Instant, end: Instant },
    /// An attempt at a task's command failed or timed out (whether or not
    /// a retry follows): `log` is all of its output the executor kept
    /// (bounded as [`output::BoundedLog`] bounds it). History keeps it. A
    /// persistent task's output is not kept, and its failures have none.
    AttemptFailed { task: &'a str, attempt: u32, exit_code: Option<i32>, reason: &'a str, log: &'a [u8] },
    /// A task is settled: ran (or restored) and ended, with its status,
    /// duration, cache outcome and, when it was keyed, the key's manifest.
    Finished { result: &'a TaskResult, manifest: Option<&'a KeyManifest> },
    /// A warning or message from vx not tied to a task. `source` is the
    /// `tracing` target (`vx`, `vx worker`, …).
    Warning { level: Level, source: &'a str, message: &'a str },
    /// Ctrl-C, SIGTERM or SIGHUP: vx is stopping every task.
    Interrupted { kind: ErrorKind },
    /// The walk is over: every task has a result. `interrupted` is set
    /// when a signal stopped it; `manifests` are `(id, key, manifest)` of
    /// every keyed task that settled, for history.
    RunFinished {
        summary: &'a RunSummary,
        interrupted: Option<ErrorKind>,
        manifests: &'a [(String, String, KeyManifest)],
    },
}

/// The timed steps of a task, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Computing its key (hashing its inputs).
    Hash,
    /// Looking its key up in the cache tiers.
    Lookup,
    /// Restoring a hit's outputs.
    Restore,
    /// One attempt at its command (1 for the first).
    Attempt(u32),
    /// Storing its outputs and log in the cache.
    Archive,
}

impl Phase {
    /// The step's name as profiles show it.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Hash => "hash",
            Phase::Lookup => "cache lookup",
            Phase::Restore => "restore",
            Phase::Attempt(_) => "run",
            Phase::Archive => "archive",
        }
    }
}

/// How loud a [`Event::Warning`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A line from a long-running command (`vx worker`, `vx watch`).
    Info,
    Warning,
    Error,
}

/// Something that watches a run.
pub trait Subscriber: Send + Sync + fmt::Debug {
    fn on(&self, event: &Event<'_>);
}

/// The subscribers of one run, cheap to clone into every task.
#[derive(Debug, Clone, Default)]
pub struct Bus {
    subscribers: Arc<[Arc<dyn Subscriber>]>,
}

impl Bus {
    pub fn new(subscribers: Vec<Arc<dyn Subscriber>>) -> Bus {
        Bus { subscribers: subscribers.into() }
    }

    /// Delivers `event` to every subscriber, in order.
    pub fn emit(&self, event: Event<'_>) {
        for s in self.subscribers.iter() {
            s.on(&event);
        }
    }

    /// Shorthand for [`Event::TaskNote`].
    pub fn note(&self, task: &str, message: &str) {
        self.emit(Event::TaskNote { task, message });
    }

    /// [`Event::Span`] of a step of `task` that began at `start` and ends now.
    pub fn span(&self, task: &str, phase: Phase, start: Instant) {
        self.emit(Event::Span { task, phase, start, end: Instant::now() });
    }

    /// Shorthand for [`Event::Output`].
    pub fn output(&self, task: &str, line: &[u8]) {
        self.emit(Event::Output { task, line });
    }
}
