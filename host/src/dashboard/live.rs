//! A run in progress, for the dashboard: [`LiveFile`] is the subscriber a
//! `vx run` adds only when a dashboard is up (`marker`), and writes
//! `.vx/runs/live/<pid>.json`, a document of the summary's shape with the
//! tasks so far (a task that is running has status `running`, one not yet
//! begun `pending`). Events only update the state in memory; a thread
//! writes it at most every [`EVERY`] (and that often while a task runs,
//! whose duration grows), plus at the start, and the file is
//! removed when the run ends (history has it by then: the recorder sees
//! `RunFinished` first). [`read_live`] lists the files whose run is alive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use crate::events::{CacheOutcome, Event, Subscriber, TaskResult};
use crate::report::RunInfo;

/// How often the live file is rewritten at most.
pub(crate) const EVERY: Duration = Duration::from_millis(250);

/// What is known of one task so far.
#[derive(Debug, Clone)]
enum Progress {
    Pending,
    Running { since: Instant },
    Done(Box<TaskResult>),
}

#[derive(Debug)]
struct State {
    tasks: Vec<(String, Progress)>,
    index: HashMap<String, usize>,
    dirty: bool,
    over: bool,
}

/// Writes the live file of the run it watches.
#[derive(Debug)]
pub(crate) struct LiveFile {
    shared: Arc<(Mutex<State>, Condvar)>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl LiveFile {
    /// Starts the writer of `info`'s run into `live_dir`.
    pub(crate) fn start(info: RunInfo, live_dir: &Path) -> LiveFile {
        let tasks: Vec<(String, Progress)> = info.tasks.iter().map(|t| (t.id.clone(), Progress::Pending)).collect();
        let index = tasks.iter().enumerate().map(|(n, (id, _))| (id.clone(), n)).collect();
        let state = State { tasks, index, dirty: true, over: false };
        let shared = Arc::new((Mutex::new(state), Condvar::new()));
        let path = live_dir.join(format!("{}.json", std::process::id()));
        let writer = {
            let shared = shared.clone();
            std::thread::spawn(move || write_loop(&shared, &info, &path))
        };
        LiveFile { shared, writer: Mutex::new(Some(writer)) }
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        let mut state = self.shared.0.lock().expect("live state lock");
        f(&mut state);
        state.dirty = true;
    }
}

fn write_loop(shared: &(Mutex<State>, Condvar), info: &RunInfo, path: &Path) {
    let (lock, wake) = shared;
    loop {
        let doc = {
            let mut state = lock.lock().expect("live state lock");
            // A running task's duration grows: rewrite while one runs.
            while !state.dirty && !state.over && !state.tasks.iter().any(|(_, p)| matches!(p, Progress::Running { .. }))
            {
                state = wake.wait(state).expect("live state lock");
            }
            if state.over {
                break;
            }
            state.dirty = false;
            document(info, &state)
        };
        // A live file that cannot be written only costs the live view.
        let _ = crate::report::write_file(path, &serde_json::to_vec(&doc).expect("a document serializes"));
        // The throttle, cut short when the run ends.
        let deadline = Instant::now() + EVERY;
        let mut state = lock.lock().expect("live state lock");
        while !state.over {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = wake.wait_timeout(state, left).expect("live state lock").0;
        }
    }
    let _ = std::fs::remove_file(path);
}

impl Subscriber for LiveFile {
    fn on(&self, event: &Event<'_>) {
        match event {
            Event::Started { task, .. } => self.update(|s| {
                if let Some(&n) = s.index.get(*task) {
                    s.tasks[n].1 = Progress::Running { since: Instant::now() };
                }
            }),
            Event::Finished { result, .. } => self.update(|s| {
                let progress = Progress::Done(Box::new((*result).clone()));
                match s.index.get(&result.id) {
                    Some(&n) => s.tasks[n].1 = progress,
                    None => s.tasks.push((result.id.clone(), progress)),
                }
            }),
            Event::RunFinished { .. } => {
                self.shared.0.lock().expect("live state lock").over = true;
                self.shared.1.notify_all();
                if let Some(writer) = self.writer.lock().expect("writer lock").take() {
                    let _ = writer.join();
                }
                return;
            }
            _ => return,
        }
        self.shared.1.notify_all();
    }
}

/// The live document: the summary's shape, the invocation not yet ended.
fn document(info: &RunInfo, state: &State) -> Value {
    let now = Instant::now();
    let since = |at: Instant| at.saturating_duration_since(info.origin).as_millis() as u64;
    // One lookup per task, not a search of the plan: this runs every 250 ms.
    let planned: HashMap<&str, &crate::report::PlannedTask> = info.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let tasks: Vec<Value> = state
        .tasks
        .iter()
        .map(|(id, progress)| {
            let (status, cache, start, duration, attempts) = match progress {
                Progress::Pending => ("pending", "off", None, 0, 0),
                Progress::Running { since: at } => {
                    ("running", "miss", Some(since(*at)), now.saturating_duration_since(*at).as_millis() as u64, 1)
                }
                Progress::Done(r) => (
                    r.status.word(),
                    r.cache.summary_word(),
                    r.started.map(since),
                    r.duration.as_millis() as u64,
                    r.attempts,
                ),
            };
            let done = match progress {
                Progress::Done(r) => Some(r),
                _ => None,
            };
            let (project, name) = id.split_once('#').unwrap_or((id.as_str(), ""));
            json!({
                "id": id, "project": project, "task": name,
                "key": done.and_then(|r| r.key.clone()),
                "status": status, "reason": null, "cache": cache,
                "group": done.is_some_and(|r| r.cache == CacheOutcome::Group),
                "executor": planned.get(id.as_str()).map(|t| t.executor.as_str()),
                "attempts": attempts, "flaky": done.is_some_and(|r| r.is_flaky()),
                "start_ms": start, "duration_ms": duration,
                "exit_code": done.and_then(|r| r.exit_code),
                "cpu_ms": done.and_then(|r| r.usage).map(|u| u.cpu.as_millis() as u64),
                "peak_rss_bytes": done.and_then(|r| r.usage).map(|u| u.peak_rss_bytes),
                "dependencies": planned.get(id.as_str()).map(|t| t.dependencies.as_slice()).unwrap_or_default(),
            })
        })
        .collect();
    let count = |word: &str| tasks.iter().filter(|t| t["status"] == word).count();
    let cached = tasks.iter().filter(|t| t["cache"].as_str().is_some_and(|c| c.starts_with("hit"))).count();
    json!({
        "schema": crate::report::RUN_SUMMARY_SCHEMA,
        "vx_version": env!("CARGO_PKG_VERSION"),
        "live": {"pid": std::process::id(), "running": count("running"), "pending": count("pending")},
        "invocation": crate::report::run_invocation(
            info,
            None,
            now.saturating_duration_since(info.origin).as_millis() as u64,
            None
        ),
        "totals": {
            "tasks": tasks.len(),
            "succeeded": count("ok"),
            "failed": count("failed") + count("timed-out") + count("cancelled"),
            "skipped": count("skipped"),
            "cached": cached,
            "flaky": tasks.iter().filter(|t| t["flaky"] == true).count(),
            "cpu_ms": tasks.iter().filter_map(|t| t["cpu_ms"].as_u64()).sum::<u64>(),
            "peak_rss_bytes": tasks.iter().filter_map(|t| t["peak_rss_bytes"].as_u64()).max(),
        },
        "tasks": tasks,
    })
}

/// The live documents of runs in progress, oldest first; files whose run
/// is gone (killed before it could remove them) are skipped.
pub(crate) fn read_live(live_dir: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(live_dir) else { return Vec::new() };
    let mut found: Vec<(SystemTime, Value)> = entries
        .flatten()
        .filter_map(|e| {
            let path: PathBuf = e.path();
            let pid: i32 = path.file_stem()?.to_str()?.parse().ok()?;
            if path.extension()? != "json" || !crate::guard::pid_alive(pid) {
                return None;
            }
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            Some((e.metadata().ok()?.modified().ok()?, doc))
        })
        .collect();
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, doc)| doc).collect()
}
