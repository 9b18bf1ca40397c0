//! `--profile[=FILE]`: the run as a Chrome trace event file, which
//! Perfetto (ui.perfetto.dev) and `chrome://tracing` load.
//!
//! Track 0 is vx's own phases (reading the configuration, building the
//! task graph, setting up, the walk). Every other track is a concurrency
//! slot: each task that began is one slice on the lowest slot free when
//! it began, and inside it the steps it took, nested (`hash`, `cache
//! lookup`, `restore`, `run` per attempt, `archive`). Slots are assigned
//! from the tasks' own times when the run ends, so a track never holds
//! two tasks at once; a server that stays up after it is ready frees the
//! engine's slot but keeps its track, so a run with servers can show more
//! tracks than `--concurrency`.
//!
//! Times are whole microseconds from the moment vx started, each end
//! rounded down like its start, so a nested slice never pokes out of its
//! parent.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Value, json};

use super::run_file::{RunPath, Written};
use crate::events::{Event, Phase, Subscriber, TaskResult};

/// A step that took time: its name, start and end.
pub(crate) type Step = (&'static str, Instant, Instant);

/// Collects the run's spans and writes the trace when it finishes.
#[derive(Debug)]
pub(crate) struct Profile {
    path: RunPath,
    origin: Instant,
    title: String,
    state: Mutex<State>,
    /// Where the profile went, or why it could not be written.
    pub written: Written,
}

#[derive(Debug, Default)]
struct State {
    /// vx's own phases, in order.
    own: Vec<Step>,
    walk_started: Option<Instant>,
    /// Each task's steps, as they ended.
    steps: HashMap<String, Vec<(Phase, Instant, Instant)>>,
    /// Each task that began: its result and when it settled.
    settled: Vec<(TaskResult, Instant)>,
}

impl Profile {
    /// A profile written to `path`, its times counted from `origin`;
    /// `own` are the phases vx went through before the run began.
    pub(crate) fn new(path: RunPath, origin: Instant, title: String, own: Vec<Step>) -> Profile {
        let state = Mutex::new(State { own, ..State::default() });
        Profile { path, origin, title, state, written: Written::default() }
    }
}

impl Subscriber for Profile {
    fn on(&self, event: &Event<'_>) {
        let mut state = self.state.lock().expect("profile lock poisoned");
        match event {
            Event::Planned { .. } => state.walk_started = Some(Instant::now()),
            Event::Span { task, phase, start, end } => {
                state.steps.entry((*task).to_string()).or_default().push((*phase, *start, *end));
            }
            Event::Finished { result, .. } if result.started.is_some() => {
                state.settled.push(((*result).clone(), Instant::now()));
            }
            Event::RunFinished { .. } => {
                if let Some(walk) = state.walk_started {
                    state.own.push(("walk", walk, Instant::now()));
                }
                let doc = trace(self.origin, &self.title, &state);
                self.written.start(self.path.resolve(), doc, serde_json::to_vec::<Value>);
            }
            _ => {}
        }
    }
}

/// Whole microseconds from `origin` (0 for a moment before it).
fn micros(origin: Instant, at: Instant) -> u64 {
    at.saturating_duration_since(origin).as_micros() as u64
}

/// A complete (`X`) event on track `tid`.
fn slice(origin: Instant, name: &str, cat: &str, tid: usize, (start, end): (Instant, Instant), args: Value) -> Value {
    let ts = micros(origin, start);
    json!({
        "name": name, "cat": cat, "ph": "X", "pid": 1, "tid": tid,
        "ts": ts, "dur": micros(origin, end).saturating_sub(ts), "args": args,
    })
}

fn track_name(tid: usize, name: &str) -> Value {
    json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}})
}

/// The trace document of a finished run.
fn trace(origin: Instant, title: &str, state: &State) -> Value {
    let mut events =
        vec![json!({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": title}}), track_name(0, "vx")];
    for (name, start, end) in &state.own {
        events.push(slice(origin, name, "vx", 0, (*start, *end), json!({})));
    }
    let mut tasks: Vec<&(TaskResult, Instant)> = state.settled.iter().collect();
    tasks.sort_by_key(|(r, _)| (r.started, r.id.clone()));
    // The end of the last task on each slot; a task takes the lowest slot
    // free at its start.
    let mut slots: Vec<Instant> = Vec::new();
    for (result, settled) in tasks {
        let Some(started) = result.started else { continue };
        let slot = match slots.iter().position(|free| *free <= started) {
            Some(s) => s,
            None => {
                slots.push(started);
                events.push(track_name(slots.len(), &format!("slot {}", slots.len())));
                slots.len() - 1
            }
        };
        slots[slot] = *settled;
        let tid = slot + 1;
        let args = json!({
            "status": result.status.word(),
            "cache": result.cache.summary_word(),
            "key": result.key,
            "attempts": result.attempts,
        });
        events.push(slice(origin, &result.id, "task", tid, (started, *settled), args));
        for (phase, start, end) in state.steps.get(&result.id).into_iter().flatten() {
            let args = match phase {
                Phase::Attempt(n) => json!({"attempt": n}),
                _ => json!({}),
            };
            events.push(slice(origin, phase.name(), "step", tid, (*start, *end), args));
        }
    }
    json!({"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"vx_version": env!("CARGO_PKG_VERSION")}})
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::events::{CacheOutcome, TaskStatus};

    #[test]
    fn overlapping_tasks_take_two_slots_and_a_later_one_reuses_the_first() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let result = |id: &str, start| TaskResult {
            started: Some(at(start)),
            cache: CacheOutcome::Miss,
            ..TaskResult::not_run(id.into(), TaskStatus::Succeeded)
        };
        let state = State {
            own: vec![("config", t0, at(2))],
            walk_started: None,
            steps: HashMap::from([("a#build".to_string(), vec![(Phase::Attempt(1), at(3), at(9))])]),
            settled: vec![
                (result("a#build", 2), at(10)),
                (result("b#build", 4), at(8)),
                (result("c#build", 10), at(12)),
            ],
        };
        let doc = trace(t0, "vx run build", &state);
        let slices: Vec<(String, u64, u64, u64)> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                let n = |k: &str| e[k].as_u64().unwrap();
                (e["name"].as_str().unwrap().to_string(), n("tid"), n("ts"), n("dur"))
            })
            .collect();
        assert_eq!(
            slices,
            [
                ("config".to_string(), 0, 0, 2000),
                ("a#build".to_string(), 1, 2000, 8000),
                ("run".to_string(), 1, 3000, 6000),
                ("b#build".to_string(), 2, 4000, 4000),
                ("c#build".to_string(), 1, 10000, 2000),
            ]
        );
    }
}
