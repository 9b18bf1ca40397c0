//! A run's events folded into OpenTelemetry spans: one trace per run, a
//! root span for the run, a child span per task (whatever happened to it)
//! and, under a task, a span per timed step (hash, cache lookup, restore,
//! each attempt of its command, archive). Task notes become span events on
//! the task's span, warnings span events on the root.
//!
//! Plain data in, plain data out, so it unit-tests on the host; `otlp`
//! encodes the spans and `lib` sends them.

use std::collections::HashMap;

use vx_plugin_sdk::subscriber::{CacheStatus, Event, EventKind, Level, Status, Step, TaskFinished};

/// A value of an attribute, as OTLP's `AnyValue` has them.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
}

pub type Attributes = Vec<(String, Value)>;

/// A timestamped note on a span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    pub at: u64,
    pub name: String,
}

/// OTLP's status codes: unset, or error with a message.
#[derive(Debug, Clone, PartialEq)]
pub enum SpanStatus {
    Unset,
    Error(String),
}

/// One finished span, ready to encode.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub start: u64,
    pub end: u64,
    pub attributes: Attributes,
    pub events: Vec<SpanEvent>,
    pub status: SpanStatus,
}

/// Where new span ids come from: random on wasm, a counter in tests.
pub type Ids = Box<dyn FnMut() -> [u8; 8] + Send>;

/// The trace of one run, built up event by event.
pub struct RunTrace {
    pub trace_id: [u8; 16],
    pub root_id: [u8; 8],
    ids: Ids,
    started: u64,
    name: String,
    root_attributes: Attributes,
    root_events: Vec<SpanEvent>,
    /// Span id and notes of each task seen but not yet finished.
    open: HashMap<String, ([u8; 8], Vec<SpanEvent>)>,
    /// Finished spans not yet exported.
    pub done: Vec<Span>,
    /// Set once the run's last event arrived: the root span is in `done`.
    pub finished: bool,
}

impl std::fmt::Debug for RunTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunTrace").field("name", &self.name).field("done", &self.done.len()).finish()
    }
}

impl RunTrace {
    pub fn new(trace_id: [u8; 16], mut ids: Ids) -> RunTrace {
        let root_id = ids();
        RunTrace {
            trace_id,
            root_id,
            ids,
            started: 0,
            name: "vx".to_string(),
            root_attributes: Vec::new(),
            root_events: Vec::new(),
            open: HashMap::new(),
            done: Vec::new(),
            finished: false,
        }
    }

    /// The span id of `task`, made on first sight.
    fn task_span(&mut self, task: &str) -> [u8; 8] {
        if let Some((id, _)) = self.open.get(task) {
            return *id;
        }
        let id = (self.ids)();
        self.open.insert(task.to_string(), (id, Vec::new()));
        id
    }

    pub fn on(&mut self, event: Event) {
        let at = event.at_unix_nanos;
        match event.kind {
            EventKind::RunStarted(run) => {
                self.started = at;
                let command = format!("vx {}", run.argv.join(" ")).trim_end().to_string();
                self.name = command.clone();
                self.root_attributes.push(("vx.argv".into(), Value::Str(command)));
                self.root_attributes.push(("vx.version".into(), Value::Str(run.vx_version)));
                for (key, value) in run.tags {
                    self.root_attributes.push((format!("vx.tag.{key}"), Value::Str(value)));
                }
            }
            EventKind::Planned(plan) => {
                self.root_attributes.push(("vx.tasks.planned".into(), Value::Int(plan.tasks.len() as i64)));
                self.root_attributes.push(("vx.concurrency".into(), Value::Int(i64::from(plan.concurrency))));
            }
            EventKind::TaskStarted(started) => {
                self.task_span(&started.task);
            }
            EventKind::CacheLookup(lookup) => {
                self.task_span(&lookup.task);
            }
            EventKind::TaskNote(note) => {
                self.task_span(&note.task);
                if let Some((_, events)) = self.open.get_mut(&note.task) {
                    events.push(SpanEvent { at, name: note.message });
                }
            }
            EventKind::StepEnded(step) => {
                let parent = self.task_span(&step.task);
                let span_id = (self.ids)();
                self.done.push(Span {
                    span_id,
                    parent: Some(parent),
                    name: step_name(step.step),
                    start: step.started_unix_nanos.min(at),
                    end: at,
                    attributes: vec![("vx.task.id".into(), Value::Str(step.task))],
                    events: Vec::new(),
                    status: SpanStatus::Unset,
                });
            }
            EventKind::TaskFinished(finished) => {
                let span_id = self.task_span(&finished.task);
                let events = self.open.remove(&finished.task).map(|(_, e)| e).unwrap_or_default();
                self.done.push(task_span(span_id, self.root_id, at, finished, events));
            }
            EventKind::Warning(warning) => {
                let level = match warning.level {
                    Level::Info => "info",
                    Level::Warning => "warning",
                    Level::Error => "error",
                };
                let name = format!("{level} ({}): {}", warning.source, warning.message);
                self.root_events.push(SpanEvent { at, name });
            }
            EventKind::Interrupted(signal) => {
                self.root_events.push(SpanEvent { at, name: format!("vx was stopped: {signal}") });
            }
            EventKind::RunFinished(run) => {
                let mut attributes = std::mem::take(&mut self.root_attributes);
                attributes.push(("vx.exit_code".into(), Value::Int(i64::from(run.exit_code))));
                attributes.push(("vx.tasks.succeeded".into(), Value::Int(i64::from(run.succeeded))));
                attributes.push(("vx.tasks.failed".into(), Value::Int(i64::from(run.failed))));
                attributes.push(("vx.tasks.skipped".into(), Value::Int(i64::from(run.skipped))));
                attributes.push(("vx.tasks.cached".into(), Value::Int(i64::from(run.cached))));
                if let Some(signal) = &run.interrupted {
                    attributes.push(("vx.interrupted".into(), Value::Str(signal.clone())));
                }
                let status = match (run.exit_code, run.interrupted) {
                    (0, _) => SpanStatus::Unset,
                    (code, Some(signal)) => SpanStatus::Error(format!("{signal} (exit code {code})")),
                    (code, None) => SpanStatus::Error(format!("{} tasks failed (exit code {code})", run.failed)),
                };
                let start = if self.started == 0 { at.saturating_sub(run.duration_nanos) } else { self.started };
                self.done.push(Span {
                    span_id: self.root_id,
                    parent: None,
                    name: self.name.clone(),
                    start,
                    end: at.max(start),
                    attributes,
                    events: std::mem::take(&mut self.root_events),
                    status,
                });
                self.finished = true;
            }
        }
    }
}

fn step_name(step: Step) -> String {
    match step {
        Step::Hash => "hash".to_string(),
        Step::Lookup => "cache lookup".to_string(),
        Step::Restore => "restore".to_string(),
        Step::Attempt(n) => format!("attempt {n}"),
        Step::Archive => "archive".to_string(),
    }
}

/// `hit-local`, `hit-remote`, `miss`, `uncached` or `group`.
pub fn cache_word(cache: CacheStatus) -> &'static str {
    match cache {
        CacheStatus::Uncached => "uncached",
        CacheStatus::Miss => "miss",
        CacheStatus::Local => "hit-local",
        CacheStatus::Remote => "hit-remote",
        CacheStatus::Group => "group",
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Skipped => "skipped",
        Status::TimedOut => "timed-out",
        Status::Cancelled => "cancelled",
    }
}

fn task_span(span_id: [u8; 8], root: [u8; 8], at: u64, t: TaskFinished, events: Vec<SpanEvent>) -> Span {
    let (project, name) = t.task.rsplit_once('#').unwrap_or(("", &t.task));
    let mut attributes: Attributes = vec![
        ("vx.task.id".into(), Value::Str(t.task.clone())),
        ("vx.task.project".into(), Value::Str(project.to_string())),
        ("vx.task.name".into(), Value::Str(name.to_string())),
        ("vx.task.status".into(), Value::Str(status_word(t.status).to_string())),
        ("vx.cache.status".into(), Value::Str(cache_word(t.cache).to_string())),
        ("vx.cache.hit".into(), Value::Bool(matches!(t.cache, CacheStatus::Local | CacheStatus::Remote))),
        ("vx.task.attempts".into(), Value::Int(i64::from(t.attempts))),
        ("vx.task.duration_ms".into(), Value::Int((t.duration_nanos / 1_000_000) as i64)),
    ];
    if let Some(key) = &t.key {
        attributes.push(("vx.cache.key".into(), Value::Str(key.clone())));
    }
    if let Some(code) = t.exit_code {
        attributes.push(("vx.task.exit_code".into(), Value::Int(i64::from(code))));
    }
    if let Some(usage) = t.resource_use {
        attributes.push(("vx.task.cpu_ms".into(), Value::Int(usage.cpu_ms as i64)));
        attributes.push(("vx.task.peak_rss_bytes".into(), Value::Int(usage.peak_rss_bytes as i64)));
    }
    if let Some(message) = &t.message {
        attributes.push(("vx.task.message".into(), Value::Str(message.clone())));
    }
    let start = t.started_unix_nanos.unwrap_or(at);
    let end = t.started_unix_nanos.map_or(at, |s| s.saturating_add(t.duration_nanos));
    let status = match t.status {
        Status::Failed | Status::TimedOut | Status::Cancelled => {
            SpanStatus::Error(t.message.unwrap_or_else(|| status_word(t.status).to_string()))
        }
        Status::Ok | Status::Skipped => SpanStatus::Unset,
    };
    Span { span_id, parent: Some(root), name: t.task, start, end, attributes, events, status }
}

#[cfg(test)]
mod tests {
    use vx_plugin_sdk::subscriber::{ResourceUse, RunFinished, RunStarted, StepEnded, TaskNote};

    use super::*;

    fn counter() -> Ids {
        let mut n = 0u64;
        Box::new(move || {
            n += 1;
            n.to_be_bytes()
        })
    }

    fn event(at: u64, kind: EventKind) -> Event {
        Event { at_unix_nanos: at, kind }
    }

    fn finished(task: &str, cache: CacheStatus, started: Option<u64>) -> EventKind {
        EventKind::TaskFinished(TaskFinished {
            task: task.to_string(),
            status: Status::Ok,
            message: None,
            cache,
            key: Some("k".to_string()),
            started_unix_nanos: started,
            duration_nanos: 2_000_000,
            exit_code: Some(0),
            attempts: 1,
            resource_use: Some(ResourceUse { cpu_ms: 7, peak_rss_bytes: 4096 }),
        })
    }

    #[test]
    fn a_run_is_a_root_span_with_a_child_per_task_and_steps_under_tasks() {
        let mut trace = RunTrace::new([9; 16], counter());
        let argv = vec!["run".to_string(), "build".to_string()];
        trace.on(event(
            100,
            EventKind::RunStarted(RunStarted {
                argv,
                vx_version: "0.1.0".into(),
                tags: vec![("ci".into(), "1".into())],
            }),
        ));
        trace.on(event(
            300,
            EventKind::StepEnded(StepEnded {
                task: "app#build".into(),
                step: Step::Attempt(1),
                started_unix_nanos: 200,
            }),
        ));
        trace.on(event(310, EventKind::TaskNote(TaskNote { task: "app#build".into(), message: "slow".into() })));
        trace.on(event(2_000_400, finished("app#build", CacheStatus::Miss, Some(150))));
        trace.on(event(500, finished("lib#build", CacheStatus::Local, None)));
        assert!(!trace.finished);
        trace.on(event(
            900,
            EventKind::RunFinished(RunFinished {
                exit_code: 0,
                interrupted: None,
                duration_nanos: 800,
                succeeded: 2,
                failed: 0,
                skipped: 0,
                cached: 1,
            }),
        ));
        assert!(trace.finished);
        let root = trace.done.iter().find(|s| s.parent.is_none()).expect("a root span");
        assert_eq!((root.name.as_str(), root.start, root.end), ("vx run build", 100, 900));
        assert!(root.attributes.contains(&("vx.exit_code".into(), Value::Int(0))));
        assert!(root.attributes.contains(&("vx.tag.ci".into(), Value::Str("1".into()))));
        let tasks: Vec<&Span> = trace.done.iter().filter(|s| s.parent == Some(trace.root_id)).collect();
        assert_eq!(tasks.len(), 2);
        let app = tasks.iter().find(|s| s.name == "app#build").unwrap();
        assert_eq!((app.start, app.end), (150, 2_000_150));
        assert!(app.attributes.contains(&("vx.cache.status".into(), Value::Str("miss".into()))));
        assert!(app.attributes.contains(&("vx.task.cpu_ms".into(), Value::Int(7))));
        assert_eq!(app.events, vec![SpanEvent { at: 310, name: "slow".into() }]);
        let lib = tasks.iter().find(|s| s.name == "lib#build").unwrap();
        assert!(lib.attributes.contains(&("vx.cache.status".into(), Value::Str("hit-local".into()))));
        assert_eq!((lib.start, lib.end), (500, 500), "a task that never began is an instant at its result");
        let attempt = trace.done.iter().find(|s| s.name == "attempt 1").unwrap();
        assert_eq!((attempt.parent, attempt.start, attempt.end), (Some(app.span_id), 200, 300));
    }
}
