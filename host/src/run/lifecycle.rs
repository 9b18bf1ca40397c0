//! One task's lifecycle, whatever executor runs it: **prepare** (choose
//! the executor, build the command), **run** (take the task's lock, key
//! it, restore a hit or hand the attempt to the executor), **settle**
//! (store a cacheable success) and **record** (emit `Finished` with the
//! result and the key's manifest, which history and reports consume).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::{Notify, mpsc};

use super::exec::{Attempt, Chosen, Executor, Executors, Persistence, Refused, task_command};
use super::options::RunOptions;
use super::task_cache::CacheJob;
use crate::cache::{Cache, CacheKey, KeyManifest};
use crate::config::{Task, Workspace};
use crate::events::{Bus, CacheOutcome, Event, TaskResult, TaskStatus};
use crate::graph::TaskGraph;
use crate::guard::{Groups, RUN_ID_VAR, TaskMark};

/// Lines of a failed task's output kept for reports (`--report`).
const LOG_TAIL_LINES: usize = 20;
const LOG_TAIL_BYTES: usize = 4096;

/// What a job hands back: its node, its result and its key's manifest.
pub type JobResult = (usize, TaskResult, Option<KeyManifest>);

/// What every job of a session shares.
#[derive(Debug)]
pub struct Shared<'w> {
    pub ws: &'w Workspace,
    pub graph: &'w TaskGraph,
    pub opts: RunOptions,
    pub cache: Option<Arc<Cache>>,
    pub run_id: String,
    pub groups: Groups,
    pub events: Bus,
    pub cancelled: Arc<AtomicBool>,
    /// Every node's key, filled in as tasks compute theirs.
    pub keys: Arc<Mutex<Vec<Option<CacheKey>>>>,
    /// Persistent tasks report readiness here (their node).
    pub ready_tx: mpsc::UnboundedSender<usize>,
    pub executors: Executors,
}

/// One task to run, with everything it needs owned.
#[derive(Debug)]
pub struct Job {
    pub attempt: Attempt,
    pub cache: Option<CacheJob>,
    pub executor: Chosen,
    /// A group task: nothing runs; it succeeds once its dependencies have.
    pub group: bool,
    /// The project directory and task whose declared outputs are removed
    /// before it executes (`cache::clear_outputs`); `None` without outputs.
    pub outputs: Option<(std::path::PathBuf, Task)>,
}

impl Shared<'_> {
    fn task(&self, node: usize) -> &Task {
        let n = &self.graph.nodes[node];
        &self.ws.projects[n.project].tasks[&n.id.task]
    }

    /// The executor a task runs on: `--executor` for every task that is not
    /// persistent (servers stay local), else its own.
    fn executor_of(&self, task: &Task) -> String {
        match &self.opts.executor {
            Some(_) if task.is_group() => "local".to_string(),
            Some(name) if !task.persistent => name.clone(),
            _ => task.executor.clone(),
        }
    }

    /// Prepares node's job; an error says why the task cannot run.
    pub fn prepare(&self, node: usize) -> Result<Job, Refused> {
        let graph = self.graph;
        let n = &graph.nodes[node];
        let project = &self.ws.projects[n.project];
        let task = self.task(node);
        let executor_name = self.executor_of(task);
        let dep_outputs = || {
            graph.deps[node]
                .iter()
                .map(|&d| {
                    let dn = &graph.nodes[d];
                    let p = &self.ws.projects[dn.project];
                    (p.dir.clone(), p.tasks[&dn.id.task].outputs.clone())
                })
                .collect()
        };
        let executor = self.executors.prepare(project, task, &executor_name, self.cache.as_ref(), dep_outputs)?;
        let mut command = task_command(self.ws, project, task);
        command.env.push((RUN_ID_VAR.into(), self.run_id.clone().into()));
        let persistent = task.persistent.then(|| Persistence {
            ready: task.ready.clone(),
            ready_timeout: task.ready_timeout,
            dir: project.dir.clone(),
            ready_tx: self.ready_tx.clone(),
            stop: Arc::new(Notify::new()),
        });
        let cache = self.cache.as_ref().filter(|c| c.enabled()).map(|c| {
            let mut task = task.clone();
            task.executor = executor_name;
            CacheJob {
                cache: c.clone(),
                root: self.ws.root.clone(),
                project_dir: project.dir.clone(),
                task,
                executor_config: executor.identity(),
                deps: graph.deps[node].iter().map(|&d| (d, graph.nodes[d].id.to_string())).collect(),
                keys: self.keys.clone(),
            }
        });
        let attempt = Attempt {
            id: n.id.to_string(),
            command,
            mark: TaskMark { run_id: self.run_id.clone(), project: project.name.clone(), task: task.name.clone() },
            timeout: task.timeout.or(self.opts.timeout),
            persistent,
            node,
            groups: self.groups.clone(),
            events: self.events.clone(),
            cancelled: self.cancelled.clone(),
            keep_log: true,
            key: None,
        };
        let outputs = (!task.outputs.is_empty()).then(|| (project.dir.clone(), task.clone()));
        Ok(Job { attempt, cache, executor, group: task.is_group(), outputs })
    }

    /// The key a node would get now (its dependencies' keys as recorded).
    pub async fn key_now(&self, node: usize) -> Option<CacheKey> {
        let cache = self.cache.clone()?;
        let graph = self.graph;
        let deps: Option<Vec<(String, CacheKey)>> = {
            let keys = self.keys.lock().expect("keys lock poisoned");
            graph.deps[node].iter().map(|&d| keys[d].clone().map(|k| (graph.nodes[d].id.to_string(), k))).collect()
        };
        let project = &self.ws.projects[graph.nodes[node].project];
        let (root, dir, task, id) =
            (self.ws.root.clone(), project.dir.clone(), self.task(node).clone(), graph.nodes[node].id.to_string());
        let deps = deps?;
        tokio::task::spawn_blocking(move || cache.task_key(&root, &dir, &id, &task, "", &deps).ok().map(|(k, _)| k))
            .await
            .ok()
            .flatten()
    }

    /// The key each node last ran with.
    pub fn key_of(&self, node: usize) -> Option<CacheKey> {
        self.keys.lock().expect("keys lock poisoned")[node].clone()
    }
}

impl Job {
    /// Runs the task (or restores it from the cache). Returns its node, its
    /// result and the manifest of its key, when it has one.
    pub async fn run(mut self) -> JobResult {
        if self.group {
            return self.settle_group().await;
        }
        let a = &self.attempt;
        // Waiting for another vx process to finish this task is not part
        // of its duration (history's p50s feed the ETAs).
        let _lock = match (&self.cache, &a.persistent) {
            (Some(c), None) => super::task_lock::acquire(&c.root, &a.id).await,
            _ => None,
        };
        let start = Instant::now();
        let keyed = match &self.cache {
            Some(c) => c.compute_key(a.node, &a.id, &a.events).await,
            None => None,
        };
        let cacheable = self.cache.as_ref().is_some_and(|c| c.task.cache) && keyed.is_some();
        let key_text = keyed.as_ref().map(|(k, _)| k.0.clone());
        if let (true, Some(c), Some((key, _))) = (cacheable, &self.cache, &keyed)
            && c.cache.reads()
        {
            if let Some(tier) = c.try_hit(&a.id, key, &a.events).await {
                let result = TaskResult {
                    id: a.id.clone(),
                    status: TaskStatus::Succeeded,
                    duration: start.elapsed(),
                    cache: tier,
                    key: key_text,
                    exit_code: Some(0),
                    log_tail: None,
                };
                return self.record(result, keyed.map(|(_, m)| m));
            }
            a.events.emit(Event::CacheMiss { task: &a.id, key: &key.0 });
        }
        // The log is kept for the cache and, for a task that ends, for the
        // report's log tail; a persistent task's would grow without end.
        self.attempt.keep_log = cacheable || self.attempt.persistent.is_none();
        self.attempt.key = key_text.clone();
        let cacheable = cacheable && self.clear_outputs().await;
        let ran = self.executor.run(&self.attempt).await;
        let duration = start.elapsed();
        let log_tail = (ran.status != TaskStatus::Succeeded).then(|| log_tail(&ran.log)).flatten();
        let manifest = keyed.as_ref().map(|(_, m)| m.clone());
        if let (true, TaskStatus::Succeeded, Some(c), Some((key, manifest))) =
            (cacheable, &ran.status, &self.cache, keyed)
        {
            c.store(&self.attempt.id, key, manifest, ran.log, duration, &self.attempt.events).await;
        }
        let cache = if cacheable { CacheOutcome::Miss } else { CacheOutcome::Uncached };
        let result = TaskResult {
            id: self.attempt.id.clone(),
            status: ran.status,
            duration,
            cache,
            key: key_text,
            exit_code: ran.exit_code,
            log_tail,
        };
        self.record(result, manifest)
    }

    /// A group: its key is still computed (from its dependencies' keys) so
    /// that its dependents can be keyed, but nothing is looked up, run or
    /// stored.
    async fn settle_group(self) -> JobResult {
        let a = &self.attempt;
        let start = Instant::now();
        let keyed = match &self.cache {
            Some(c) => c.compute_key(a.node, &a.id, &a.events).await,
            None => None,
        };
        let result = TaskResult {
            id: a.id.clone(),
            status: TaskStatus::Succeeded,
            duration: start.elapsed(),
            cache: CacheOutcome::Group,
            key: keyed.as_ref().map(|(k, _)| k.0.clone()),
            exit_code: None,
            log_tail: None,
        };
        self.record(result, keyed.map(|(_, m)| m))
    }

    /// Removes the task's old outputs; `false` (with a note) when one could
    /// not be removed, so this run's outputs are not stored: they might
    /// hold a stale file.
    async fn clear_outputs(&self) -> bool {
        let Some((dir, task)) = self.outputs.clone() else { return true };
        let cleared = tokio::task::spawn_blocking(move || crate::cache::clear_outputs(&dir, &task, &[])).await;
        match cleared {
            Ok(Ok(_)) => true,
            Ok(Err(why)) => {
                self.attempt.events.note(&self.attempt.id, &format!("not cached: {why}"));
                false
            }
            Err(e) => {
                self.attempt.events.note(&self.attempt.id, &format!("not cached: clearing its outputs failed: {e}"));
                false
            }
        }
    }

    /// Tells the run the task is settled.
    fn record(self, result: TaskResult, manifest: Option<KeyManifest>) -> JobResult {
        self.attempt.events.emit(Event::Finished { result: &result, manifest: manifest.as_ref() });
        (self.attempt.node, result, manifest)
    }
}

/// The last lines of a task's output (at most `LOG_TAIL_LINES` lines and
/// `LOG_TAIL_BYTES` bytes), for reports; `None` when it printed nothing.
fn log_tail(log: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().collect();
    let mut tail = lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n");
    if tail.len() > LOG_TAIL_BYTES {
        let mut start = tail.len() - LOG_TAIL_BYTES;
        while !tail.is_char_boundary(start) {
            start += 1;
        }
        tail = tail[start..].to_string();
    }
    (!tail.trim().is_empty()).then_some(tail)
}
