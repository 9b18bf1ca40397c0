//! Subscriber plugins: every plugin of the workspace whose pin in `vx.lock`
//! exports `vx:plugin/subscribe` watches every `vx run` (unless
//! `--no-subscribers`), through [`PluginSubscribers`], one more
//! [`Subscriber`] on the run's bus.
//!
//! Invariants:
//! - The run never waits on a plugin. `on` converts the event and queues
//!   it; each plugin has a thread of its own that loads it (off the run's
//!   path), instantiates it once, and hands it the queued events in
//!   batches, in order. One instance serves the whole run, so a subscriber
//!   may keep state between calls.
//! - A plugin cannot change the run: it gets copies, and nothing it returns
//!   reaches the engine. A load failure, an error value, a trap or a limit
//!   stops delivery to that plugin for the rest of the run and becomes one
//!   warning line after the run; the run's exit code is its own.
//! - The queue is bounded for chatter: past [`QUEUE`] waiting events, notes,
//!   steps, lookups, starts and warnings are dropped (and counted in a
//!   warning), while the run's frame and every task's result are always
//!   queued, so memory stays within the queue plus one result per task.
//! - After the run, [`PluginSubscribers::finish`] waits for each plugin to
//!   take its last batch, at most the plugin's `call-timeout` from the end
//!   of the run; then vx exits whether or not the plugin is done.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::bindings::subscriber::exports::vx::plugin::subscribe as wit;
use super::error::PluginError;
use super::load::{World, flush_output, load_configured};
use super::lock::read_pin;
use super::pool::Bound;
use super::subscriber_events::{WallClock, is_essential, nanos_since_epoch, run_started, to_wit, unreported_result};
use crate::config::{PluginSettings, Workspace};
use crate::events::{Event, Subscriber};

/// Events waiting for a plugin beyond which chatter is dropped.
const QUEUE: usize = 4096;
/// The most events handed over in one call.
const BATCH: usize = 512;
/// The export prefix that marks a subscriber in `vx.lock`.
const SUBSCRIBE_EXPORT: &str = "vx:plugin/subscribe@";

/// The run's subscriber plugins, fed from the bus.
#[derive(Debug)]
pub(crate) struct PluginSubscribers {
    clock: WallClock,
    feeds: Vec<Arc<Feed>>,
    /// Tasks whose `Finished` the bus carried; the rest of the summary's
    /// results are sent before `run-finished`.
    reported: Mutex<HashSet<String>>,
}

/// The queue between the bus and one plugin's delivery thread.
#[derive(Debug)]
struct Feed {
    name: String,
    call_timeout: Duration,
    state: Mutex<FeedState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct FeedState {
    queue: VecDeque<wit::Event>,
    /// Chatter dropped because the plugin fell behind.
    dropped: u64,
    /// Set once the thread has stopped taking events (done or failed).
    stopped: bool,
    /// Why delivery stopped early: shown after the run.
    failure: Option<PluginError>,
}

impl Feed {
    fn lock(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, event: wit::Event) {
        let mut state = self.lock();
        if state.stopped {
            return;
        }
        if state.queue.len() >= QUEUE && !is_essential(&event) {
            state.dropped += 1;
            return;
        }
        state.queue.push_back(event);
        self.changed.notify_all();
    }

    /// The next batch, waiting for one; whether it ends the run.
    fn next_batch(&self) -> (Vec<wit::Event>, bool) {
        let mut state = self.lock();
        while state.queue.is_empty() {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        let n = state.queue.len().min(BATCH);
        let batch: Vec<wit::Event> = state.queue.drain(..n).collect();
        let last = batch.iter().any(|e| matches!(e.kind, wit::EventKind::RunFinished(_)));
        (batch, last)
    }

    fn stop(&self, failure: Option<PluginError>) {
        let mut state = self.lock();
        state.stopped = true;
        state.queue.clear();
        state.failure = failure;
        self.changed.notify_all();
    }
}

impl PluginSubscribers {
    /// Starts a delivery thread for each subscriber plugin of `ws`, and
    /// queues the run's first event; `None` when the workspace has none.
    /// `started` and `origin` are one reading of the wall and monotonic
    /// clocks at the run's start.
    pub(crate) fn start(
        ws: &Workspace,
        argv: &[String],
        tags: &[(String, String)],
        started: SystemTime,
        origin: Instant,
    ) -> Option<Arc<PluginSubscribers>> {
        let chosen: Vec<(&String, &PluginSettings)> =
            ws.plugins.iter().filter(|(name, _)| is_subscriber(&ws.root, name)).collect();
        if chosen.is_empty() {
            return None;
        }
        let clock = WallClock::new(started, origin);
        let first = run_started(argv, tags, nanos_since_epoch(started));
        let mut feeds = Vec::new();
        for (name, settings) in chosen {
            let call_timeout = super::grants::read_settings(name, settings, &ws.root)
                .map_or(super::grants::Limits::default().call_timeout, |(_, limits)| limits.call_timeout);
            let feed = Arc::new(Feed {
                name: name.clone(),
                call_timeout,
                state: Mutex::new(FeedState::default()),
                changed: Condvar::new(),
            });
            feed.push(first.clone());
            let (thread_feed, root, settings) = (feed.clone(), ws.root.clone(), settings.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("vx subscriber {name}"))
                .spawn(move || deliver(&thread_feed, &root, &settings));
            if let Err(e) = spawned {
                feed.stop(Some(PluginError::load(name, format!("could not start its thread: {e}"))));
            }
            feeds.push(feed);
        }
        Some(Arc::new(PluginSubscribers { clock, feeds, reported: Mutex::default() }))
    }

    /// Waits (bounded) for every plugin to take the run's last events, then
    /// prints one warning line for each that failed, fell behind or was
    /// still busy. Call it after the run's own output.
    pub(crate) fn finish(&self) {
        let ended = Instant::now();
        for feed in &self.feeds {
            let deadline = ended + feed.call_timeout;
            let mut state = feed.lock();
            while !state.stopped {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                state = feed.changed.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
            }
            let name = &feed.name;
            if let Some(e) = &state.failure {
                eprintln!("vx: warning: subscriber {e}; the run's result is unchanged");
            } else if !state.stopped {
                eprintln!(
                    "vx: warning: subscriber plugin `{name}` was still busy {} after the run; vx did not wait for it \
                     (raise `[plugins.{name}].limits.call-timeout` to wait longer)",
                    crate::units::format_duration(feed.call_timeout)
                );
            }
            if state.dropped > 0 {
                eprintln!(
                    "vx: warning: subscriber plugin `{name}` fell behind: {} events (notes, steps, warnings) were \
                     not delivered; every task's result was",
                    state.dropped
                );
            }
        }
    }
}

impl PluginSubscribers {
    fn push(&self, event: wit::Event) {
        if let [rest @ .., last] = self.feeds.as_slice() {
            for feed in rest {
                feed.push(event.clone());
            }
            last.push(event);
        }
    }
}

impl Subscriber for PluginSubscribers {
    fn on(&self, event: &Event<'_>) {
        match event {
            Event::Finished { result, .. } => {
                self.reported.lock().unwrap_or_else(PoisonError::into_inner).insert(result.id.clone());
            }
            Event::RunFinished { summary, .. } => {
                let reported = std::mem::take(&mut *self.reported.lock().unwrap_or_else(PoisonError::into_inner));
                for result in summary.results.iter().filter(|r| !reported.contains(&r.id)) {
                    self.push(unreported_result(result, &self.clock));
                }
            }
            _ => {}
        }
        if let Some(event) = to_wit(event, &self.clock) {
            self.push(event);
        }
    }
}

/// Whether plugin `name` is pinned as a subscriber. The pin's export was
/// recorded from the bytes its hash pins, and the load checks that hash,
/// so no other plugin has to be loaded to find the subscribers.
fn is_subscriber(root: &Path, name: &str) -> bool {
    matches!(read_pin(root, name), Ok(Some(pin)) if pin.exports.starts_with(SUBSCRIBE_EXPORT))
}

/// One plugin's delivery thread: load, instantiate once, then one call per
/// batch until the run's last event or the first failure.
fn deliver(feed: &Feed, root: &Path, settings: &PluginSettings) {
    let failure = deliver_all(feed, root, settings).err();
    feed.stop(failure);
}

fn deliver_all(feed: &Feed, root: &Path, settings: &PluginSettings) -> Result<(), PluginError> {
    const CALL: &str = "on-events";
    let plugin = load_configured(root, &feed.name, settings)?;
    if plugin.world != World::Subscriber {
        return Err(PluginError::load(&feed.name, "vx.lock pins it as a subscriber, but it is not one"));
    }
    let mut store = plugin.store(CALL)?;
    let instance = match plugin.exports().instantiate(&mut store) {
        Ok(Bound::Subscriber(instance)) => instance,
        Ok(_) => return Err(PluginError::load(&feed.name, "vx.lock pins it as a subscriber, but it is not one")),
        Err(e) => {
            flush_output(plugin.name(), store.data_mut());
            return Err(plugin.trap_error(CALL, store.data(), &e));
        }
    };
    loop {
        let (batch, last) = feed.next_batch();
        store.data_mut().begin_call();
        store.set_epoch_deadline(1);
        let result = instance.vx_plugin_subscribe().call_on_events(&mut store, &batch);
        flush_output(plugin.name(), store.data_mut());
        match result {
            Ok(returned) => {
                if let Some(stopped) = plugin.stop_error(CALL, store.data()) {
                    return Err(stopped);
                }
                returned.map_err(|e| PluginError::returned(plugin.name(), CALL, e))?;
            }
            Err(e) => return Err(plugin.trap_error(CALL, store.data(), &e)),
        }
        if last {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed() -> Feed {
        Feed {
            name: "p".to_string(),
            call_timeout: Duration::from_secs(1),
            state: Mutex::new(FeedState::default()),
            changed: Condvar::new(),
        }
    }

    fn note() -> wit::Event {
        let kind = wit::EventKind::TaskNote(wit::TaskNote { task: "a#b".into(), message: "m".into() });
        wit::Event { at_unix_nanos: 1, kind }
    }

    fn end() -> wit::Event {
        let finished = wit::RunFinished {
            exit_code: 0,
            interrupted: None,
            duration_nanos: 0,
            succeeded: 0,
            failed: 0,
            skipped: 0,
            cached: 0,
        };
        wit::Event { at_unix_nanos: 2, kind: wit::EventKind::RunFinished(finished) }
    }

    #[test]
    fn a_full_queue_drops_chatter_but_never_the_runs_end() {
        let feed = feed();
        for _ in 0..QUEUE + 10 {
            feed.push(note());
        }
        feed.push(end());
        assert_eq!(feed.lock().dropped, 10);
        let mut batches = 0;
        loop {
            let (batch, last) = feed.next_batch();
            assert!(batch.len() <= BATCH);
            batches += 1;
            if last {
                break;
            }
        }
        assert_eq!(batches, (QUEUE + 1).div_ceil(BATCH));
    }

    #[test]
    fn a_stopped_feed_takes_nothing_more() {
        let feed = feed();
        feed.stop(None);
        feed.push(end());
        assert!(feed.lock().queue.is_empty());
    }
}
