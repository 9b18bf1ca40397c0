//! A test executor behind the seam: each attempt of a task answers from a
//! script instead of a process, so the engine and the task lifecycle are
//! tested without spawning anything (`run::spec`). It honours what the
//! seam asks of every executor: output goes on the bus, a persistent task
//! reports readiness and runs until it is stopped, and an attempt under
//! way ends when vx is interrupted.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{Attempt, Executor, Ran};
use crate::events::{Event, TaskStatus};

/// What one attempt does.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Writes `ok` and exits 0.
    Succeed,
    /// Writes these files (relative to the project's directory), then
    /// exits 0.
    Write(Vec<(&'static str, &'static str)>),
    /// Writes `oops` and exits with this code.
    Fail(i32),
    /// Runs until vx is interrupted.
    Hang,
    /// A server: ready at once, then runs until it is stopped.
    Serve,
}

/// The steps of every task, and what happened.
#[derive(Debug, Default)]
pub(crate) struct Script {
    steps: Mutex<HashMap<String, VecDeque<Step>>>,
    calls: Mutex<Vec<String>>,
    running: AtomicUsize,
    most_running: AtomicUsize,
}

impl Script {
    /// `id`'s attempts take `steps` in turn; an attempt with none left
    /// succeeds.
    pub(crate) fn on(&self, id: &str, steps: impl IntoIterator<Item = Step>) -> &Self {
        self.steps.lock().expect("script lock").entry(id.to_string()).or_default().extend(steps);
        self
    }

    /// The ids of the attempts made, in the order they started.
    pub(crate) fn calls(&self) -> Vec<String> {
        self.calls.lock().expect("script lock").clone()
    }

    /// How many attempts of `id` were made.
    pub(crate) fn attempts(&self, id: &str) -> usize {
        self.calls().iter().filter(|c| *c == id).count()
    }

    /// The most attempts that ran at once.
    pub(crate) fn most_at_once(&self) -> usize {
        self.most_running.load(Ordering::SeqCst)
    }

    fn next(&self, id: &str) -> Step {
        self.calls.lock().expect("script lock").push(id.to_string());
        self.steps.lock().expect("script lock").get_mut(id).and_then(VecDeque::pop_front).unwrap_or(Step::Succeed)
    }
}

/// The executor every task of a scripted session runs on.
#[derive(Debug)]
pub(crate) struct Scripted {
    pub script: std::sync::Arc<Script>,
    /// The task's project directory, where `Step::Write` writes.
    pub dir: PathBuf,
}

impl Executor for Scripted {
    async fn run(&self, a: &Attempt) -> Ran {
        let step = self.script.next(&a.id);
        a.events.emit(Event::Started { task: &a.id, key: a.key.as_deref(), executor: "scripted" });
        let now = self.script.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.script.most_running.fetch_max(now, Ordering::SeqCst);
        // A real process takes a moment: long enough for tasks that may
        // run side by side to overlap.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let ran = match step {
            Step::Succeed => said(a, b"ok\n", TaskStatus::Succeeded, Some(0)),
            Step::Write(files) => {
                for (path, text) in files {
                    let path = self.dir.join(path);
                    std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("make the dir");
                    std::fs::write(path, text).expect("write the file");
                }
                said(a, b"wrote\n", TaskStatus::Succeeded, Some(0))
            }
            Step::Fail(code) => said(a, b"oops\n", TaskStatus::Failed(format!("exit code {code}")), Some(code)),
            Step::Hang => {
                until(|| a.cancelled.load(Ordering::SeqCst)).await;
                said(a, b"", TaskStatus::Cancelled, None)
            }
            Step::Serve => serve(a).await,
        };
        self.script.running.fetch_sub(1, Ordering::SeqCst);
        ran
    }

    fn identity(&self) -> String {
        String::new() // as the local executor's
    }
}

/// A server: ready at once, then up until it is stopped or vx is.
async fn serve(a: &Attempt) -> Ran {
    let persistence = a.persistent.as_ref().expect("Serve is a persistent task's step");
    let _ = persistence.ready_tx.send(a.node);
    let stop = persistence.stop.clone();
    tokio::select! {
        () = stop.notified() => said(a, b"", TaskStatus::Succeeded, None),
        () = until(|| a.cancelled.load(Ordering::SeqCst)) => said(a, b"", TaskStatus::Cancelled, None),
    }
}

async fn until(done: impl Fn() -> bool) {
    while !done() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Emits `line` as the task's output and reports `status`.
fn said(a: &Attempt, line: &[u8], status: TaskStatus, exit_code: Option<i32>) -> Ran {
    if !line.is_empty() {
        a.events.output(&a.id, line);
    }
    let log = if a.keep_log { line.to_vec() } else { Vec::new() };
    Ran { status, log, exit_code, usage: None }
}
