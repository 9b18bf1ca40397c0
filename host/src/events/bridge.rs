//! `tracing` records from vx's own code, delivered as [`Event::Warning`].
//!
//! Modules that know nothing of a run (the cache, the REAPI client, the
//! guard, plugins, `vx worker`) say what went wrong with `tracing::warn!`
//! (or `info!` / `error!`). This is the process's one `tracing` subscriber:
//! it keeps records whose target is vx's (`vx`, `vx::…`, `vx worker`, …),
//! drops every other crate's, and hands each kept record to the bus that
//! [`route`] named, or to the fallback given to [`install`] when no run is
//! listening.
//!
//! A custom target names who speaks: `info!(target: "vx worker", "…")` is
//! shown as `vx worker: …`; a module path target (`vx::cache`) as `vx: …`.
//!
//! Only events are kept, never spans: a hand-written subscriber of a
//! dozen lines instead of `tracing-subscriber`'s registry, whose span
//! storage nothing here would use.

use std::fmt::{self, Write as _};
use std::sync::{Arc, RwLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Metadata, level_filters::LevelFilter};

use super::{Bus, Event, Level, Subscriber};

/// Where kept records go now.
static ROUTE: RwLock<Option<Bus>> = RwLock::new(None);

/// Installs the bridge as the process's `tracing` subscriber; records go
/// to `fallback` until a run [`route`]s them. A second call does nothing.
pub(crate) fn install(fallback: Arc<dyn Subscriber>) {
    let _ = tracing::subscriber::set_global_default(Bridge { fallback: Bus::new(vec![fallback]) });
}

/// Sends kept records to `bus` until the returned guard is dropped.
#[must_use = "records go back to the fallback when the guard drops"]
pub(crate) fn route(bus: Bus) -> Routed {
    *ROUTE.write().unwrap_or_else(|e| e.into_inner()) = Some(bus);
    Routed(())
}

/// While alive, records go to the bus given to [`route`].
#[derive(Debug)]
pub(crate) struct Routed(());

impl Drop for Routed {
    fn drop(&mut self) {
        *ROUTE.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Who a target names: `vx worker` as itself, `vx::cache::store` as `vx`.
pub(crate) fn speaker(target: &str) -> &str {
    if target.contains("::") { "vx" } else { target }
}

fn ours(meta: &Metadata<'_>) -> bool {
    let target = meta.target();
    meta.is_event() && (target == "vx" || target.starts_with("vx::") || target.starts_with("vx "))
}

#[derive(Debug)]
struct Bridge {
    fallback: Bus,
}

impl tracing::Subscriber for Bridge {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        // Decided once per call site: other crates' records cost nothing after.
        if ours(meta) && *meta.level() <= tracing::Level::INFO { Interest::always() } else { Interest::never() }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        ours(meta) && *meta.level() <= tracing::Level::INFO
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::INFO)
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let meta = event.metadata();
        let level = match *meta.level() {
            tracing::Level::ERROR => Level::Error,
            tracing::Level::WARN => Level::Warning,
            _ => Level::Info,
        };
        let mut message = Message(String::new());
        event.record(&mut message);
        let warning = Event::Warning { level, source: speaker(meta.target()), message: &message.0 };
        let route = ROUTE.read().unwrap_or_else(|e| e.into_inner());
        route.as_ref().unwrap_or(&self.fallback).emit(warning);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// The `message` field, then any other fields as `name=value`.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Keeps every warning it sees as `level source: message`.
    #[derive(Debug, Default)]
    struct Seen(Mutex<Vec<String>>);

    impl Subscriber for Seen {
        fn on(&self, event: &Event<'_>) {
            if let Event::Warning { level, source, message } = event {
                self.0.lock().unwrap().push(format!("{level:?} {source}: {message}"));
            }
        }
    }

    impl Seen {
        fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.0.lock().unwrap())
        }
    }

    // One test, because the bridge is the process's global subscriber.
    #[test]
    fn records_reach_the_routed_bus_then_the_fallback_and_other_crates_never() {
        let (fallback, run) = (Arc::new(Seen::default()), Arc::new(Seen::default()));
        install(fallback.clone());
        tracing::warn!("before the run");
        {
            let _routed = route(Bus::new(vec![run.clone()]));
            tracing::warn!("cache entry {} was corrupt", "abc");
            tracing::info!(target: "vx worker", "lease 7: started");
            tracing::error!(target: "h2", "another crate's record");
            tracing::debug!("too quiet to keep");
        }
        tracing::error!("after the run");
        assert_eq!(run.take(), ["Warning vx: cache entry abc was corrupt", "Info vx worker: lease 7: started"]);
        assert_eq!(fallback.take(), ["Warning vx: before the run", "Error vx: after the run"]);
    }

    #[test]
    fn speakers() {
        assert_eq!(speaker("vx::cache::store"), "vx");
        assert_eq!(speaker("vx worker"), "vx worker");
        assert_eq!(speaker("vx"), "vx");
    }
}
