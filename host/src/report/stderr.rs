//! Warnings on stderr: `vx: warning: …`, `vx worker: lease … started`.
//! The fallback for `tracing` records while no run is listening (every
//! command but `vx run` / `vx watch`, and before a run starts), and how the
//! terminal shows them during a run.

use crate::events::{Event, Level, Subscriber};

/// The one line a warning is shown as (without its newline).
pub(crate) fn warning_line(level: Level, source: &str, message: &str) -> String {
    match level {
        Level::Error => format!("{source}: error: {message}"),
        Level::Warning => format!("{source}: warning: {message}"),
        Level::Info => format!("{source}: {message}"),
    }
}

/// Prints [`Event::Warning`]s to stderr and ignores everything else.
#[derive(Debug, Default)]
pub(crate) struct Stderr;

impl Subscriber for Stderr {
    fn on(&self, event: &Event<'_>) {
        if let Event::Warning { level, source, message } = event {
            eprintln!("{}", warning_line(*level, source, message));
        }
    }
}
