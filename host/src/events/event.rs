//! The events of a run: [`Event`], each carrying what happened, borrowed,
//! and the [`Phase`]s and [`Level`]s its variants name. The table of
//! events in `docs/architecture.md` is the reader's side of this.

use std::time::Instant;

use super::outcome::{CacheOutcome, RunSummary, TaskResult};
use crate::cache::KeyManifest;
use crate::error::ErrorKind;

/// One thing that happened in a run. Task events carry the task's id
/// (`project#task`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event<'a> {
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
    /// (bounded as [`super::output::BoundedLog`] bounds it). History keeps it. A
    /// persistent task's output is not kept, and its failures have none.
    AttemptFailed { task: &'a str, attempt: u32, exit_code: Option<i32>, reason: &'a str, log: &'a [u8] },
    /// A task is settled: ran (or restored) and ended, with its status,
    /// duration and cache outcome.
    Finished { result: &'a TaskResult },
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
pub(crate) enum Phase {
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
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) enum Level {
    /// A line from a long-running command (`vx worker`, `vx watch`).
    Info,
    Warning,
    Error,
}
