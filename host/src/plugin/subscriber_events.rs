//! The run's events as subscriber plugins get them: [`crate::events::Event`]
//! turned into the owned WIT records of `vx:plugin/subscribe`, with every
//! time on the host's wall clock in Unix nanoseconds.
//!
//! Not every event crosses: task output (`Output`) stays in vx, since it
//! can be large and is the task's own business, and `Waiting` and `Ready`
//! are scheduling detail. A subscriber that wants a task's log reads it
//! from vx's cache, not from the stream.

use std::time::{Instant, SystemTime};

use super::bindings::subscriber::exports::vx::plugin::subscribe as wit;
use crate::error::ErrorKind;
use crate::events::{CacheOutcome, Event, Level, Phase, RunSummary, TaskResult, TaskStatus};

/// Turns the monotonic instants events carry into wall-clock times, from
/// one reading of both clocks taken when the run began.
#[derive(Debug, Clone, Copy)]
pub(super) struct WallClock {
    wall: SystemTime,
    mono: Instant,
}

impl WallClock {
    pub(super) fn new(wall: SystemTime, mono: Instant) -> WallClock {
        WallClock { wall, mono }
    }

    /// `instant` on the wall clock, in nanoseconds since the Unix epoch.
    pub(super) fn unix_nanos(&self, instant: Instant) -> u64 {
        let wall = match instant.checked_duration_since(self.mono) {
            Some(after) => self.wall + after,
            None => self.wall - self.mono.duration_since(instant),
        };
        nanos_since_epoch(wall)
    }

    pub(super) fn now(&self) -> u64 {
        self.unix_nanos(Instant::now())
    }
}

pub(super) fn nanos_since_epoch(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The first event of every run.
pub(super) fn run_started(argv: &[String], tags: &[(String, String)], at: u64) -> wit::Event {
    let started =
        wit::RunStarted { argv: argv.to_vec(), vx_version: env!("CARGO_PKG_VERSION").to_string(), tags: tags.to_vec() };
    wit::Event { at_unix_nanos: at, kind: wit::EventKind::RunStarted(started) }
}

/// `event` as subscribers see it; `None` for the events they do not get.
pub(super) fn to_wit(event: &Event<'_>, clock: &WallClock) -> Option<wit::Event> {
    let mut at = clock.now();
    let kind = match *event {
        Event::Planned { tasks, concurrency } => wit::EventKind::Planned(wit::Planned {
            tasks: tasks.to_vec(),
            concurrency: u32::try_from(concurrency).unwrap_or(u32::MAX),
        }),
        // A failed attempt's log is history's; subscribers hear of the
        // attempt in the task's note and its result.
        Event::Waiting { .. } | Event::Output { .. } | Event::Ready { .. } | Event::AttemptFailed { .. } => {
            return None;
        }
        Event::Started { task, key, executor } => wit::EventKind::TaskStarted(wit::TaskStarted {
            task: task.to_string(),
            key: key.map(str::to_string),
            executor: executor.to_string(),
        }),
        Event::CacheMiss { task, key } => wit::EventKind::CacheLookup(wit::CacheLookup {
            task: task.to_string(),
            key: key.to_string(),
            cache: wit::CacheStatus::Miss,
        }),
        Event::CacheHit { task, key, tier, .. } => wit::EventKind::CacheLookup(wit::CacheLookup {
            task: task.to_string(),
            key: key.to_string(),
            cache: cache_status(tier),
        }),
        Event::TaskNote { task, message } => {
            wit::EventKind::TaskNote(wit::TaskNote { task: task.to_string(), message: message.to_string() })
        }
        Event::Span { task, phase, start, end } => {
            at = clock.unix_nanos(end);
            wit::EventKind::StepEnded(wit::StepEnded {
                task: task.to_string(),
                step: step(phase),
                started_unix_nanos: clock.unix_nanos(start),
            })
        }
        Event::Finished { result, .. } => wit::EventKind::TaskFinished(task_finished(result, clock)),
        Event::Warning { level, source, message } => wit::EventKind::Warning(wit::Warning {
            level: match level {
                Level::Info => wit::Level::Info,
                Level::Warning => wit::Level::Warning,
                Level::Error => wit::Level::Error,
            },
            source: source.to_string(),
            message: message.to_string(),
        }),
        Event::Interrupted { kind } => wit::EventKind::Interrupted(signal_word(kind).to_string()),
        Event::RunFinished { summary, interrupted, .. } => {
            wit::EventKind::RunFinished(run_finished(summary, interrupted))
        }
    };
    Some(wit::Event { at_unix_nanos: at, kind })
}

/// The `task-finished` of a task the bus never reported finished: one that
/// never started (skipped after a failure, refused before it ran) is only
/// in the run's summary, and subscribers get one result per planned task.
pub(super) fn unreported_result(result: &TaskResult, clock: &WallClock) -> wit::Event {
    wit::Event { at_unix_nanos: clock.now(), kind: wit::EventKind::TaskFinished(task_finished(result, clock)) }
}

/// Whether a subscriber must get `event` even when it has fallen behind:
/// the run's frame and one result per task, bounded by the plan's size.
pub(super) fn is_essential(event: &wit::Event) -> bool {
    matches!(
        event.kind,
        wit::EventKind::RunStarted(_)
            | wit::EventKind::Planned(_)
            | wit::EventKind::TaskFinished(_)
            | wit::EventKind::Interrupted(_)
            | wit::EventKind::RunFinished(_)
    )
}

fn cache_status(outcome: CacheOutcome) -> wit::CacheStatus {
    match outcome {
        CacheOutcome::Uncached => wit::CacheStatus::Uncached,
        CacheOutcome::Miss => wit::CacheStatus::Miss,
        CacheOutcome::Local => wit::CacheStatus::Local,
        CacheOutcome::Remote => wit::CacheStatus::Remote,
        CacheOutcome::Group => wit::CacheStatus::Group,
    }
}

fn step(phase: Phase) -> wit::Step {
    match phase {
        Phase::Hash => wit::Step::Hash,
        Phase::Lookup => wit::Step::Lookup,
        Phase::Restore => wit::Step::Restore,
        Phase::Attempt(n) => wit::Step::Attempt(n),
        Phase::Archive => wit::Step::Archive,
    }
}

fn signal_word(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Terminated => "terminated",
        ErrorKind::HungUp => "hung up",
        _ => "interrupted",
    }
}

fn task_finished(r: &TaskResult, clock: &WallClock) -> wit::TaskFinished {
    let (status, message) = match &r.status {
        TaskStatus::Succeeded if r.is_flaky() => {
            (wit::Status::Ok, Some(format!("flaky: {}", crate::report::flaky_text(r))))
        }
        TaskStatus::Succeeded => (wit::Status::Ok, None),
        TaskStatus::Failed(why) => (wit::Status::Failed, Some(why.clone())),
        TaskStatus::TimedOut(d) => {
            (wit::Status::TimedOut, Some(format!("timed out after {}", crate::units::format_duration(*d))))
        }
        TaskStatus::Cancelled => (wit::Status::Cancelled, Some("interrupted".to_string())),
        TaskStatus::Skipped(why) => (wit::Status::Skipped, Some(why.clone())),
    };
    wit::TaskFinished {
        task: r.id.clone(),
        status,
        message,
        cache: cache_status(r.cache),
        key: r.key.clone(),
        started_unix_nanos: r.started.map(|s| clock.unix_nanos(s)),
        duration_nanos: u64::try_from(r.duration.as_nanos()).unwrap_or(u64::MAX),
        exit_code: r.exit_code,
        attempts: r.attempts,
        resource_use: r.usage.map(|u| wit::ResourceUse {
            cpu_ms: u64::try_from(u.cpu.as_millis()).unwrap_or(u64::MAX),
            peak_rss_bytes: u.peak_rss_bytes,
        }),
    }
}

fn run_finished(summary: &RunSummary, interrupted: Option<ErrorKind>) -> wit::RunFinished {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    wit::RunFinished {
        exit_code: summary.exit_code(interrupted),
        interrupted: interrupted.map(|k| signal_word(k).to_string()),
        duration_nanos: u64::try_from(summary.wall.as_nanos()).unwrap_or(u64::MAX),
        succeeded: count(summary.succeeded()),
        failed: count(summary.failed()),
        skipped: count(summary.skipped()),
        cached: count(summary.cached()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn instants_before_and_after_the_reading_map_onto_the_wall_clock() {
        let mono = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let clock = WallClock::new(wall, mono);
        assert_eq!(clock.unix_nanos(mono), 1_000_000_000_000);
        assert_eq!(clock.unix_nanos(mono + Duration::from_millis(5)), 1_000_005_000_000);
        if let Some(before) = mono.checked_sub(Duration::from_millis(5)) {
            assert_eq!(clock.unix_nanos(before), 999_995_000_000);
        }
    }

    #[test]
    fn output_stays_in_vx_and_results_are_essential() {
        let clock = WallClock::new(SystemTime::now(), Instant::now());
        assert!(to_wit(&Event::Output { task: "a#b", line: b"secret\n" }, &clock).is_none());
        let result = TaskResult::not_run("a#b".to_string(), TaskStatus::Skipped("dependency failed".to_string()));
        let event = to_wit(&Event::Finished { result: &result }, &clock).expect("a result crosses");
        assert!(is_essential(&event));
        let wit::EventKind::TaskFinished(finished) = event.kind else { panic!("a task-finished event") };
        assert_eq!((finished.status, finished.message.as_deref()), (wit::Status::Skipped, Some("dependency failed")));
        assert_eq!(finished.started_unix_nanos, None);
        let note = to_wit(&Event::TaskNote { task: "a#b", message: "m" }, &clock).expect("a note crosses");
        assert!(!is_essential(&note));
    }
}
