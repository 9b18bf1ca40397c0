//! One task's lifecycle, whatever executor runs it: **prepare** (choose
//! the executor, build the command), **run** (take the task's lock, key
//! it, restore a hit or hand the attempt to the executor, again after a
//! failed attempt while `retries` are left), **settle**
//! (store a cacheable success) and **record** (emit `Finished` with the
//! result and the key's manifest, which history and reports consume).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::{Notify, mpsc};

use super::exec::{Attempt, Chosen, Executor, Executors, Persistence, Refused, effective_executor, task_command};
use super::locking::{LockGraph, Locking};
use super::options::RunOptions;
use super::task_cache::{Begun, CacheJob};
use super::task_lock::{Readers, TaskLock, Waited};
use crate::cache::{Cache, CacheKey, KeyManifest};
use crate::config::{ExecutorName, Task, Workspace};
use crate::events::{Bus, CacheOutcome, Event, Phase, TaskResult, TaskStatus};
use crate::graph::TaskGraph;
use crate::guard::{Groups, RUN_ID_VAR, TaskMark};
use crate::sandbox::{Confinement, Policy, TaskPaths};

/// Lines of a failed task's output kept for reports (`--report`).
const LOG_TAIL_LINES: usize = 20;
const LOG_TAIL_BYTES: usize = 4096;

/// What a job hands back: its node, its result and its key's manifest.
pub(crate) type JobResult = (usize, TaskResult, Option<KeyManifest>);

/// What every job of a session shares.
#[derive(Debug)]
pub(crate) struct Shared<'w> {
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
    /// Remote hits whose outputs were left on the server (`--download`).
    pub pending: Arc<super::download::Pending>,
    /// Persistent tasks report readiness here (their node).
    pub ready_tx: mpsc::UnboundedSender<usize>,
    pub executors: Executors,
    /// The graph as task locks see it, made on the first prepared job.
    pub lock_graph: std::sync::OnceLock<Arc<LockGraph>>,
}

/// One task to run, with everything it needs owned.
#[derive(Debug)]
pub(crate) struct Job {
    pub attempt: Attempt,
    pub cache: Option<Arc<CacheJob>>,
    pub executor: Chosen,
    /// Attempts allowed after a failed one (0 for a persistent task).
    pub retries: u32,
    /// A group task: nothing runs; it succeeds once its dependencies have.
    pub group: bool,
    /// The project directory and task whose declared outputs are removed
    /// before it executes (`cache::clear_outputs`); `None` without outputs.
    /// The workspace root and the project directory come with it.
    pub outputs: Option<(std::path::PathBuf, std::path::PathBuf, Task)>,
    /// Its start, already made in a batch (`run::batch`): keyed, without a
    /// hit, its lock let go ([`Begun::release_lock`]).
    pub begun: Option<Box<Begun>>,
    /// The locks it takes; `None` for a persistent task or a group.
    pub locking: Option<Locking>,
}

impl<'w> Shared<'w> {
    pub(crate) fn task(&self, node: usize) -> &'w Task {
        let n = &self.graph.nodes[node];
        &self.ws.projects[n.project].tasks[&n.id.task]
    }

    fn executor_of(&self, task: &Task) -> ExecutorName {
        effective_executor(task, self.opts.executor.as_deref())
    }

    /// Prepares node's job; an error says why the task cannot run.
    pub(crate) fn prepare(&self, node: usize) -> Result<Job, Refused> {
        let graph = self.graph;
        let n = &graph.nodes[node];
        let project = &self.ws.projects[n.project];
        let task = self.task(node);
        let executor_name = self.executor_of(task);
        let dep_outputs = || dependency_outputs(self.ws, graph, node);
        let executor = self.executors.prepare(project, task, &executor_name, self.cache.as_ref(), dep_outputs)?;
        let mut command = task_command(self.ws, project, task);
        let mut confinement: Option<Arc<Confinement>> = None;
        if let (Some(observed), true) = (&self.opts.observe, executor_name.is_local()) {
            let sandbox = task.sandbox.clone().unwrap_or_default();
            // The traced run holds the requested tasks alone: their
            // dependencies' outputs come from the whole plan.
            let deps = observed.deps.get(&n.id.to_string()).cloned().unwrap_or_default();
            let policy = self.policy(project, task, &sandbox, &command, deps);
            confinement = Some(Arc::new(Confinement::observe(policy, observed.clone())));
        } else if let Some(sandbox) = &task.sandbox {
            if executor_name.is_local() {
                let policy = self.policy(project, task, sandbox, &command, dep_outputs());
                for dir in &policy.make_dirs {
                    // A failure shows as the task's own write error.
                    let _ = std::fs::create_dir_all(dir);
                }
                confinement = Some(Confinement::new(policy).map(Arc::new).map_err(|e| Refused(e.to_string()))?);
            } else {
                let note = format!(
                    "`sandbox` is enforced by the local executor only; `{executor_name}` runs this task unconfined (docs/sandbox.md)"
                );
                self.events.note(&n.id.to_string(), &note);
            }
        }
        command.confine = confinement.clone().map(|c| c as Arc<dyn crate::guard::PreExec>);
        command.env.push((RUN_ID_VAR.into(), self.run_id.clone().into()));
        let persistent = task.persistent.then(|| Persistence {
            ready: task.ready.clone(),
            ready_timeout: task.ready_timeout,
            dir: project.dir.clone(),
            ready_tx: self.ready_tx.clone(),
            stop: Arc::new(Notify::new()),
        });
        let cache = self.cache.as_ref().filter(|c| c.enabled());
        let cache = cache.map(|c| self.cache_job(c, node, task, executor_name, executor.identity()));
        let attempt = Attempt {
            confinement,
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
            controls: self.opts.controls.clone(),
        };
        let retries = if task.persistent { 0 } else { self.opts.retries.unwrap_or(task.retries) };
        let outputs = (!task.outputs.is_empty()).then(|| (self.ws.root.clone(), project.dir.clone(), task.clone()));
        let locking = (!task.persistent && !task.is_group()).then(|| Locking {
            root: self.ws.root.clone(),
            graph: self.lock_graph.get_or_init(|| Arc::new(LockGraph::new(self.ws, graph))).clone(),
        });
        Ok(Job { attempt, cache, executor, retries, group: task.is_group(), outputs, begun: None, locking })
    }

    /// What node's cache steps need, with the cache `c` in use:
    /// `executor_name` runs it, and `executor_config` is that executor's
    /// part of the key.
    pub(crate) fn cache_job(
        &self,
        c: &Arc<Cache>,
        node: usize,
        task: &Task,
        executor_name: ExecutorName,
        executor_config: String,
    ) -> Arc<CacheJob> {
        let graph = self.graph;
        let mut task = task.clone();
        task.executor = executor_name;
        Arc::new(CacheJob {
            cache: c.clone(),
            root: self.ws.root.clone(),
            project_dir: self.ws.projects[graph.nodes[node].project].dir.clone(),
            task,
            executor_config,
            deps: graph.deps[node].iter().map(|&d| (d, graph.nodes[d].id.to_string())).collect(),
            keys: self.keys.clone(),
            node,
            fetch_outputs: self.opts.download.fetches_at_once(graph.roots.contains(&node)),
            pending: self.pending.clone(),
            // Only a remote hit can leave outputs on the server: without a
            // remote tier no task is ever pending, and the walk up a dense
            // graph, for every task, cost more than the whole run.
            upstream: match self.opts.download {
                super::Download::All => Vec::new(),
                _ if c.remote.is_none() => Vec::new(),
                _ => super::download::upstream(graph, node),
            },
        })
    }

    /// What a task may touch, sandboxed: from its declarations, its
    /// toolchain and `sandbox`. The outputs' directories are to be made
    /// before a ruleset opens them for writing.
    fn policy(
        &self,
        project: &crate::config::Project,
        task: &Task,
        sandbox: &crate::config::Sandbox,
        command: &crate::guard::TaskCommand,
        dep_outputs: Vec<(std::path::PathBuf, Vec<String>)>,
    ) -> Policy {
        let path_var = command.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_os_str());
        let paths = TaskPaths {
            root: &self.ws.root,
            project: &project.dir,
            task,
            sandbox,
            global_inputs: &self.ws.global_inputs,
            dep_outputs,
            path_var,
            programs: programs_of(task, command),
            home: std::env::var_os("HOME").map(std::path::PathBuf::from),
        };
        Policy::for_task(&paths)
    }

    /// The key a node would get now (its dependencies' keys as recorded).
    pub(crate) async fn key_now(&self, node: usize) -> Option<CacheKey> {
        let cache = self.cache.clone()?;
        let graph = self.graph;
        let deps: Option<Vec<(String, CacheKey)>> = {
            let keys = self.keys.lock().expect("keys lock poisoned");
            graph.deps[node].iter().map(|&d| keys[d].clone().map(|k| (graph.nodes[d].id.to_string(), k))).collect()
        };
        let project = &self.ws.projects[graph.nodes[node].project];
        let (root, dir, mut task, id) =
            (self.ws.root.clone(), project.dir.clone(), self.task(node).clone(), graph.nodes[node].id.to_string());
        task.executor = self.executor_of(&task);
        let identity = self.executors.identity(&task.executor).ok()?;
        let deps = deps?;
        tokio::task::spawn_blocking(move || {
            cache.task_key(&root, &dir, &id, &task, &identity, &deps).ok().map(|(k, _)| k)
        })
        .await
        .ok()
        .flatten()
    }

    /// The key each node last ran with.
    pub(crate) fn key_of(&self, node: usize) -> Option<CacheKey> {
        self.keys.lock().expect("keys lock poisoned")[node].clone()
    }
}

/// How a job ended before its command ran: a result to record (a hit, a
/// lock that could not be taken), or one already settled (cancelled).
enum Early {
    Record(TaskResult, Option<KeyManifest>),
    Done(JobResult),
}

/// A job holding its task's lock: when its duration counts from, what was
/// begun (by a batch, or by `Job::lock`), and the lock, held to the end.
struct Locked {
    start: Instant,
    begun: Option<Begun>,
    cacheable_task: bool,
    _lock: Option<TaskLock>,
}

/// A job's key, and whether its result may be stored.
struct Looked {
    keyed: Option<(CacheKey, KeyManifest)>,
    cacheable: bool,
    key_text: Option<String>,
}

impl Job {
    /// Runs the task (or restores it from the cache). Returns its node, its
    /// result and the manifest of its key, when it has one.
    pub(crate) async fn run(mut self) -> JobResult {
        if self.group {
            return self.settle_group().await;
        }
        // Held until the job ends: the task's own lock (`locked._lock`).
        let mut locked = match self.lock().await {
            Ok(locked) => locked,
            Err(early) => return self.end_early(early),
        };
        let looked = match self.look_up(&mut locked).await {
            Ok(looked) => looked,
            Err(early) => return self.end_early(early),
        };
        self.execute(locked.start, looked).await
    }

    fn end_early(self, early: Early) -> JobResult {
        match early {
            Early::Record(result, manifest) => self.record(result, manifest),
            Early::Done(done) => done,
        }
    }

    /// Takes the task's lock, beginning it (lock, key and lookup in one
    /// trip to a blocking thread) unless a batch did, or waiting for the
    /// lock when another vx holds it.
    async fn lock(&mut self) -> Result<Locked, Early> {
        let made = self.begun.take().map(|b| *b);
        let a = &self.attempt;
        // A task a batch began may have waited since for a slot: that wait
        // is not part of its duration (history's p50s feed the ETAs).
        let mut start = Instant::now();
        let cacheable_task = self.cache.as_ref().is_some_and(|c| c.task.cache);
        let mut begun = match (made, &self.cache, &a.persistent) {
            (Some(made), _, _) => Some(made),
            (None, Some(c), None) => Some(c.begin(a.node, &a.id, cacheable_task && c.cache.reads()).await),
            _ => None,
        };
        // Another vx holds the lock (contended), a batch let it go, or
        // there is no cache (`--cache off`: the outputs are written all
        // the same): wait for it here.
        let wait = match (&self.cache, &mut begun) {
            (Some(_), Some(b)) if b.contended || b.released => {
                // Contended: nothing was done, so all of it is done again
                // once locked. Released by a batch: its key stands.
                if b.contended {
                    begun = None;
                }
                true
            }
            (None, None) => self.locking.is_some(),
            _ => false,
        };
        let lock: Option<TaskLock> = if wait {
            match self.wait_for_own_lock().await {
                Ok(lock) => {
                    // Waiting for another vx process to finish this task
                    // is not part of its duration (history's p50s feed
                    // the ETAs).
                    start = Instant::now();
                    lock
                }
                Err(why) => {
                    let mut result = TaskResult::not_run(a.id.clone(), TaskStatus::Failed(why));
                    result.started = Some(start);
                    return Err(Early::Record(result, None));
                }
            }
        } else {
            begun.as_mut().and_then(|b| b.lock.take())
        };
        if a.cancelled.load(std::sync::atomic::Ordering::SeqCst) {
            // vx was stopped while this task waited for another process to
            // finish it: it must not start now, when nothing would stop it.
            return Err(Early::Done((a.node, TaskResult::not_run(a.id.clone(), TaskStatus::Cancelled), None)));
        }
        Ok(Locked { start, begun, cacheable_task, _lock: lock })
    }

    /// The task's key and, when it is cacheable, its lookup: a hit ends
    /// the job here; a miss says so and notes input globs that match no
    /// file.
    async fn look_up(&mut self, locked: &mut Locked) -> Result<Looked, Early> {
        let a = &self.attempt;
        let (start, begun) = (locked.start, &mut locked.begun);
        let keyed = match (&self.cache, &mut *begun) {
            (Some(c), Some(b)) => c.begun_key(b, &a.id, &a.events),
            (Some(c), None) => c.compute_key(a.node, &a.id, &a.events).await,
            _ => None,
        };
        if self.cache.is_some() {
            a.events.span(&a.id, Phase::Hash, start);
        }
        let cacheable = locked.cacheable_task && keyed.is_some();
        let key_text = keyed.as_ref().map(|(k, _)| k.0.clone());
        if let (true, Some(c), Some((key, _))) = (cacheable, &self.cache, &keyed)
            && c.cache.reads()
        {
            let hit = match begun.as_mut().and_then(|b| c.begun_hit(b, &a.id, key, &a.events)) {
                Some(hit) => hit,
                None => c.try_hit(&a.id, key, &a.events).await,
            };
            if let Some(tier) = hit {
                let result = hit_result(&a.id, start, tier, key_text);
                return Err(Early::Record(result, keyed.map(|(_, m)| m)));
            }
            a.events.emit(Event::CacheMiss { task: &a.id, key: &key.0 });
        }
        // Said when the task runs, not on every hit: a glob naming nothing
        // is a typo or a moved directory the key silently lacks.
        if let (Some(c), Some((_, manifest))) = (&self.cache, &keyed) {
            for glob in c.unmatched_inputs(manifest) {
                a.events.note(&a.id, &format!("input glob `{glob}` matches no file"));
            }
        }
        Ok(Looked { keyed, cacheable, key_text })
    }

    /// Runs the attempts of a task that missed (or has no key), stores a
    /// success that may be cached, and records the result.
    async fn execute(mut self, start: Instant, looked: Looked) -> JobResult {
        let Looked { keyed, cacheable, key_text } = looked;
        // The log is kept for the cache and, for a task that ends, for the
        // report's log tail; a persistent task's would grow without end.
        self.attempt.keep_log = cacheable || self.attempt.persistent.is_none();
        self.attempt.key = key_text.clone();
        if let Some(Err(why)) = match &self.cache {
            Some(c) => Some(c.fetch_upstream().await),
            None => None,
        } {
            self.attempt.events.note(&self.attempt.id, &format!("not run: {why}"));
            let mut result = TaskResult::not_run(self.attempt.id.clone(), TaskStatus::Failed(why));
            result.key = key_text;
            result.started = Some(start);
            result.duration = start.elapsed();
            return self.record(result, keyed.map(|(_, m)| m));
        }
        // Held while it runs and stores: another vx may not clear or
        // restore the outputs it reads.
        let Some(_readers) = self.read_locks().await else {
            return (self.attempt.node, TaskResult::not_run(self.attempt.id.clone(), TaskStatus::Cancelled), None);
        };
        let state_before = self.build_state();
        let (ran, tries, cleared) = self.run_attempts().await;
        self.note_build_state_outside(&state_before);
        let cacheable = cacheable && cleared;
        let duration = start.elapsed();
        let log_tail = match (&ran.status, &tries.failed_tail) {
            (TaskStatus::Succeeded, tail) => tail.clone(),
            _ => log_tail(&ran.log),
        };
        let manifest = keyed.as_ref().map(|(_, m)| m.clone());
        if let (true, TaskStatus::Succeeded, Some(c), Some((key, manifest))) =
            (cacheable, &ran.status, &self.cache, keyed)
        {
            let archiving = Instant::now();
            c.store(&self.attempt.id, key, manifest, ran.log, duration, &self.attempt.events).await;
            self.attempt.events.span(&self.attempt.id, Phase::Archive, archiving);
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
            attempts: tries.attempts,
            failed_attempt: tries.failed_why,
            started: Some(start),
            usage: tries.usage,
        };
        self.record(result, manifest)
    }

    /// Waits for the task's own lock (see [`super::task_lock::acquire`]),
    /// saying once who holds it. `Err` when this vx runs inside the very
    /// task (its command runs vx on itself): the reason to fail with.
    async fn wait_for_own_lock(&self) -> Result<Option<TaskLock>, String> {
        let a = &self.attempt;
        let Some(root) = self.locking.as_ref().map(|l| &l.root).or(self.cache.as_ref().map(|c| &c.root)) else {
            return Ok(None);
        };
        let say = |pid: Option<u32>| {
            let by = pid.map_or_else(|| "another vx".to_string(), |pid| format!("vx pid {pid}"));
            a.events.note(&a.id, &format!("waiting for {}, held by {by}", a.id));
        };
        match super::task_lock::acquire(root, &a.id, &a.cancelled, say).await {
            Waited::Locked(lock) => Ok(lock),
            Waited::Cancelled => Ok(None),
            Waited::Nested(pid) => {
                let why = format!(
                    "{} is being run by the vx that started this one (pid {pid}): a task's command cannot run the task itself",
                    a.id
                );
                a.events.note(&a.id, &why);
                Err(why)
            }
        }
    }

    /// The shared locks of the tasks whose outputs this one may read,
    /// waiting (and saying so once) while another vx runs or restores
    /// one; `None` when vx stopped meanwhile.
    async fn read_locks(&self) -> Option<Readers> {
        let Some(locking) = &self.locking else { return Some(Readers::default()) };
        let a = &self.attempt;
        let ids = locking.graph.read_by(a.node);
        if ids.is_empty() {
            return Some(Readers::default());
        }
        let say = |dep: &str, pid: Option<u32>| {
            let by = pid.map_or_else(|| "another vx".to_string(), |pid| format!("vx pid {pid}"));
            a.events.note(&a.id, &format!("waiting for {dep}, held by {by}, whose outputs {} reads", a.id));
        };
        super::task_lock::share(&locking.root, &ids, &a.cancelled, say).await
    }

    /// Runs the command, and again after a failed or timed-out attempt
    /// while retries are left and vx is not stopping. Each failed attempt
    /// is a note, and its output goes to history (`AttemptFailed`); a
    /// pass after one marks the task flaky. Only the last
    /// attempt's log is kept, so a passing attempt's is what gets cached.
    /// The task's declared outputs are removed before every attempt (cached
    /// or not: outputs hold only what the run produced), so a failed
    /// attempt's files never reach the passing one's entry; the `bool` is
    /// `false` when a removal failed (the result is then not stored).
    async fn run_attempts(&self) -> (super::exec::Ran, Tries, bool) {
        let a = &self.attempt;
        let total = self.retries.saturating_add(1);
        let mut tries = Tries { attempts: 1, failed_why: None, failed_tail: None, usage: None };
        let mut cleared = self.clear_outputs().await;
        let mut ran = self.attempt(&mut tries).await;
        while let Some(why) = failure(&ran.status) {
            // A persistent task's output is not kept (`execute`): it has
            // no log to hand on.
            if a.keep_log {
                a.events.emit(Event::AttemptFailed {
                    task: &a.id,
                    attempt: tries.attempts,
                    exit_code: ran.exit_code,
                    reason: &why,
                    log: &ran.log,
                });
            }
            if tries.attempts >= total || a.cancelled.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            a.events.note(&a.id, &format!("attempt {} of {total} failed ({why}); retrying", tries.attempts));
            tries.failed_tail = log_tail(&ran.log);
            tries.failed_why = Some(why);
            tries.attempts += 1;
            cleared &= self.clear_outputs().await;
            ran = self.attempt(&mut tries).await;
        }
        if ran.status == TaskStatus::Succeeded && tries.attempts > 1 {
            a.events.note(&a.id, &format!("flaky: passed on attempt {} of {total}", tries.attempts));
        }
        (ran, tries, cleared)
    }

    /// One attempt, timed (`Phase::Attempt`), its usage added to the tries'.
    async fn attempt(&self, tries: &mut Tries) -> super::exec::Ran {
        let a = &self.attempt;
        let start = Instant::now();
        let ran = self.executor.run(a).await;
        a.events.span(&a.id, Phase::Attempt(tries.attempts), start);
        if let Some(used) = ran.usage {
            tries.usage = Some(tries.usage.map_or(used, |u| u.combine(used)));
        }
        ran
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
            attempts: 0,
            failed_attempt: None,
            started: Some(start),
            usage: None,
        };
        self.record(result, keyed.map(|(_, m)| m))
    }

    /// Removes the task's old outputs; `false` (with a note) when one could
    /// not be removed, so this run's outputs are not stored: they might
    /// hold a stale file.
    async fn clear_outputs(&self) -> bool {
        let Some((root, dir, task)) = self.outputs.clone() else { return true };
        let cleared = tokio::task::spawn_blocking(move || crate::cache::clear_outputs(&root, &dir, &task, &[])).await;
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

    /// The incremental build state in the task's directory now
    /// (`cache::BuildState`); none for a task without outputs.
    fn build_state(&self) -> crate::cache::BuildState {
        match &self.outputs {
            Some((_, dir, task)) => crate::cache::BuildState::of(dir, task),
            None => crate::cache::BuildState::default(),
        }
    }

    /// Says which incremental state the task wrote outside the
    /// outputs vx removes before each run (`tsc -b`'s `.tsbuildinfo`).
    fn note_build_state_outside(&self, before: &crate::cache::BuildState) {
        let Some((_, _, task)) = &self.outputs else { return };
        let written = before.written_outside(&self.build_state(), task);
        if let Some(file) = written.first() {
            let message = format!(
                "wrote {file} outside its outputs, which vx removes before each run: an incremental build (tsc -b)                  then skips files it believes are built; put it with the outputs (\"tsBuildInfoFile\": \"dist/{file}\")                  or add `{file}` to outputs (docs/init.md)"
            );
            self.attempt.events.note(&self.attempt.id, &message);
        }
    }

    /// Tells the run the task is settled.
    fn record(self, result: TaskResult, manifest: Option<KeyManifest>) -> JobResult {
        self.attempt.events.emit(Event::Finished { result: &result });
        (self.attempt.node, result, manifest)
    }
}

/// The result of a task restored from the cache (`tier`), begun at `start`.
pub(crate) fn hit_result(id: &str, start: Instant, tier: CacheOutcome, key: Option<String>) -> TaskResult {
    TaskResult {
        id: id.to_string(),
        status: TaskStatus::Succeeded,
        duration: start.elapsed(),
        cache: tier,
        key,
        exit_code: Some(0),
        log_tail: None,
        attempts: 0,
        failed_attempt: None,
        started: Some(start),
        usage: None,
    }
}

/// What the attempts of one task came to, besides the last attempt's run.
#[derive(Debug)]
struct Tries {
    attempts: u32,
    /// The last failed attempt's reason and log tail, once one was retried.
    failed_why: Option<String>,
    failed_tail: Option<String>,
    /// What the attempts' process trees used, combined (`Usage::combine`).
    usage: Option<crate::guard::Usage>,
}

/// Why an attempt failed, when it is one a retry may mend: it failed or
/// timed out (an interrupted one is not retried).
fn failure(status: &TaskStatus) -> Option<String> {
    match status {
        TaskStatus::Failed(why) => Some(why.clone()),
        TaskStatus::TimedOut(limit) => Some(format!("timed out after {}", crate::units::format_duration(*limit))),
        TaskStatus::Succeeded | TaskStatus::Cancelled | TaskStatus::Skipped(_) => None,
    }
}

/// Each dependency's outputs of `node` as (directory, globs over it): its
/// project's, and its root-anchored ones over the workspace root.
pub(crate) fn dependency_outputs(
    ws: &Workspace,
    graph: &TaskGraph,
    node: usize,
) -> Vec<(std::path::PathBuf, Vec<String>)> {
    graph.deps[node]
        .iter()
        .flat_map(|&d| {
            let dn = &graph.nodes[d];
            let p = &ws.projects[dn.project];
            let outputs = crate::inputs::OutputGlobs::split(&p.tasks[&dn.id.task].outputs);
            let anchored = outputs.has_anchored().then(|| (ws.root.clone(), outputs.anchored));
            std::iter::once((p.dir.clone(), outputs.project)).chain(anchored)
        })
        .collect()
}

/// The programs a task starts by name: its command's, and for a shell
/// command the first word of its script (`node` of `node build.js | tee`).
fn programs_of(task: &Task, command: &crate::guard::TaskCommand) -> Vec<std::ffi::OsString> {
    let mut out = vec![command.program.clone()];
    if let crate::config::Command::Shell(script) = &task.command
        && let Some(first) = script.split_whitespace().next().filter(|w| !w.contains('='))
    {
        out.push(first.into());
    }
    out
}

/// The last lines of a task's output (at most `LOG_TAIL_LINES` lines and
/// `LOG_TAIL_BYTES` bytes), for reports; `None` when it printed nothing.
fn log_tail(log: &[u8]) -> Option<String> {
    // Only the end is shown: read no more of a long log than can be.
    let text = String::from_utf8_lossy(&log[log.len().saturating_sub(4 * LOG_TAIL_BYTES)..]);
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
