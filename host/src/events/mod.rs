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

pub(crate) mod bridge;
mod bus;
mod event;
mod outcome;
pub(crate) mod output;

pub(crate) use bus::{Bus, Subscriber};
pub(crate) use event::{Event, Level, Phase};
pub use outcome::CacheOutcome;
pub use outcome::RunSummary;
pub use outcome::TaskResult;
pub use outcome::TaskStatus;
