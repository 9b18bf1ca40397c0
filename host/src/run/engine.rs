//! The engine: walks the task graph, starts ready tasks as their shares
//! of the run's budgets and their mutexes allow (`run::admission`,
//! `run::mutex`), applies `--continue`, and stops everything through the
//! guard on SIGINT/SIGTERM/SIGHUP. It prints nothing: what happens is emitted on
//! the run's event bus (`events`), and the subscribers show it.
//!
//! A [`Session`] owns what outlives one walk of the graph: the guard, the
//! registry of process groups, every task's key, and the persistent tasks
//! (servers) that are running. `vx run` is one session with one cycle; `vx
//! watch` keeps a session and runs a cycle per change, over the part of the
//! graph the change affects, while servers whose inputs did not change keep
//! running.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::sys::signal::Signal;
use tokio::sync::{Notify, mpsc};
use tokio::task::{JoinHandle, JoinSet};

use super::admission::{Admission, Wait};
use super::batch::{self, Made};
use super::exec::Executors;
use super::lifecycle::{JobResult, Shared};
use super::mutex::{Delivered, MachineMutexes};
use super::options::RunOptions;
use super::signals::Signals;
use super::task_cache::Begun;
use crate::cache::{Cache, CacheKey, KeyManifest};
use crate::config::{Resources, Workspace};
use crate::error::{Error, ErrorKind, Result};
use crate::events::{Bus, Event, RunSummary, TaskResult, TaskStatus, bridge};
use crate::graph::{SkipReason, TaskGraph, Walker};
use crate::guard::{Groups, grace_period, hurry, signal_group, stop_group};

/// What a cycle produced.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub summary: RunSummary,
    /// Set when vx was interrupted (it decides the exit code).
    pub interrupted: Option<ErrorKind>,
    /// `(task id, key, manifest)` of every task that was keyed, for history.
    pub manifests: Vec<(String, String, KeyManifest)>,
}

impl RunOutcome {
    /// The exit code of the run: the signal's, 1 when a task failed, else 0.
    pub(crate) fn exit_code(&self) -> u8 {
        self.summary.exit_code(self.interrupted)
    }
}

/// Runs the whole graph once (`vx run`).
pub(crate) async fn execute(
    ws: &Workspace,
    graph: &TaskGraph,
    opts: &RunOptions,
    cache: Option<Arc<Cache>>,
    events: Bus,
) -> Result<RunOutcome> {
    let mut signals = Signals::install()?;
    let mut session = Session::new(ws, graph, opts.clone(), cache, false, events);
    let outcome = session.run_cycle(None, &mut signals).await;
    session.shutdown().await;
    outcome
}

/// A persistent task alive in the session.
#[derive(Debug)]
struct Server {
    stop: Arc<Notify>,
    handle: JoinHandle<()>,
    /// Distinguishes a restarted server's end from its predecessor's.
    generation: u64,
    ready: bool,
}

#[derive(Debug)]
pub(crate) struct Session<'w> {
    shared: Shared<'w>,
    /// `vx watch`: servers stay up between cycles.
    keep_servers: bool,
    servers: HashMap<usize, Server>,
    generation: u64,
    ready_rx: mpsc::UnboundedReceiver<usize>,
    ended_tx: mpsc::UnboundedSender<(u64, JobResult)>,
    ended_rx: mpsc::UnboundedReceiver<(u64, JobResult)>,
    /// Restart requests from the front end (`--ui=tui`), by task id.
    restarts: Option<mpsc::UnboundedReceiver<String>>,
    /// The budgets and in-process mutexes; servers keep their mutex
    /// across the cycles of `vx watch`.
    admission: Admission,
    /// Mutex locks shared with the other vx processes of the machine.
    machine: MachineMutexes,
    /// Locks a waiting thread took: time to look at the ready queue again.
    delivered_rx: mpsc::UnboundedReceiver<Delivered>,
    /// Warnings from the cache, remote and guard code reach this run's bus.
    _routed: bridge::Routed,
}

/// A stopping signal this soon after the first is the same request, not a
/// second one: pnpm sends its child a SIGTERM as it dies of the Ctrl-C the
/// terminal sent them both, and `bun x` may pass the SIGINT on. Only a
/// signal after this window kills the tasks at once (docs/guard.md).
const ECHO_WINDOW: std::time::Duration = std::time::Duration::from_secs(1);

/// One walk of the graph.
struct Cycle<'g> {
    started: Instant,
    /// The nodes this cycle walks (the rest count as done).
    member: Vec<bool>,
    walker: Walker<'g>,
    results: Vec<Option<TaskResult>>,
    running: JoinSet<JobResult>,
    /// Batches of cached tasks being begun (`run::batch`).
    batches: JoinSet<Vec<Made>>,
    /// The nodes a batch may begin (`Shared::batchable`), and those a
    /// batch began without a hit, waiting to be started with that start.
    batchable: Vec<bool>,
    begun: HashMap<usize, Box<Begun>>,
    manifests: Vec<(String, String, KeyManifest)>,
    interrupted: Option<ErrorKind>,
    /// When the first stopping signal came (`ECHO_WINDOW`).
    interrupted_at: Option<Instant>,
    /// Tasks holding a share of the budgets: all running ones, except
    /// persistent tasks once ready (a server must not starve its dependents).
    in_slot: BTreeSet<usize>,
    /// Ready tasks that wait, with the reason last emitted.
    waiting: HashMap<usize, String>,
}

impl Cycle<'_> {
    /// Whether a batch is to begin `node`: it may, and none has yet.
    fn for_batch(&self, node: usize) -> bool {
        self.batchable[node] && !self.begun.contains_key(&node)
    }

    /// What a batch made: hits are settled; the others wait among the
    /// ready tasks, begun ones with their start kept for [`Session::start`].
    fn take_batch(&mut self, made: Vec<Made>) {
        for m in made {
            match m {
                Made::Settled((node, result, manifest)) => self.settle(node, result, manifest),
                Made::Begun(node, begun) => {
                    self.begun.insert(node, begun);
                    self.walker.untake(node);
                }
                Made::Left(node) => self.walker.untake(node),
            }
        }
    }

    fn settle(&mut self, node: usize, result: TaskResult, manifest: Option<KeyManifest>) {
        if let (Some(m), Some(key)) = (manifest, &result.key) {
            self.manifests.push((result.id.clone(), key.clone(), m));
        }
        self.in_slot.remove(&node);
        self.walker.finish(node, result.status == TaskStatus::Succeeded);
        self.results[node] = Some(result);
    }
}

impl<'w> Session<'w> {
    pub(crate) fn new(
        ws: &'w Workspace,
        graph: &'w TaskGraph,
        opts: RunOptions,
        cache: Option<Arc<Cache>>,
        keep_servers: bool,
        events: Bus,
    ) -> Self {
        let run_id = format!(
            "{}-{:x}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        );
        let groups = groups_for(&run_id, graph.is_empty());
        let executors = Executors::new(ws);
        Session::with_parts(ws, graph, opts, cache, keep_servers, events, (run_id, groups, executors))
    }

    /// A session whose every task runs on the scripted executor, with no
    /// guard process (nothing is spawned): the engine's own tests.
    #[cfg(test)]
    pub(crate) fn scripted(
        ws: &'w Workspace,
        graph: &'w TaskGraph,
        opts: RunOptions,
        cache: Option<Arc<Cache>>,
        events: Bus,
        script: Arc<super::exec::scripted::Script>,
    ) -> Self {
        let mut executors = Executors::new(ws);
        executors.script = Some(script);
        Session::with_parts(ws, graph, opts, cache, false, events, ("test".to_string(), Groups::new(), executors))
    }

    fn with_parts(
        ws: &'w Workspace,
        graph: &'w TaskGraph,
        opts: RunOptions,
        cache: Option<Arc<Cache>>,
        keep_servers: bool,
        events: Bus,
        (run_id, groups, executors): (String, Groups, Executors),
    ) -> Self {
        if let Some(cache) = &cache {
            cache.runtime.use_groups(groups.clone());
        }
        let (ready_tx, ready_rx) = mpsc::unbounded_channel();
        let (ended_tx, ended_rx) = mpsc::unbounded_channel();
        let routed = bridge::route(events.clone());
        let restarts = opts.controls.as_ref().and_then(|c| c.take_restarts());
        let admission = Admission::new(opts.budget());
        let (delivered_tx, delivered_rx) = mpsc::unbounded_channel();
        let shared = Shared {
            ws,
            graph,
            keys: Arc::new(Mutex::new(vec![None; graph.len()])),
            opts,
            cache,
            run_id,
            groups,
            events,
            cancelled: Arc::new(AtomicBool::new(false)),
            ready_tx,
            executors,
            pending: Arc::default(),
            lock_graph: std::sync::OnceLock::new(),
        };
        Session {
            shared,
            keep_servers,
            servers: HashMap::new(),
            generation: 0,
            ready_rx,
            ended_tx,
            ended_rx,
            restarts,
            admission,
            machine: MachineMutexes::new(delivered_tx),
            delivered_rx,
            _routed: routed,
        }
    }

    /// The run's event bus (for notes from `vx watch`).
    pub(crate) fn events(&self) -> &Bus {
        &self.shared.events
    }

    /// Ids of the persistent tasks running now.
    pub(crate) fn running_servers(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.servers.keys().map(|&n| self.shared.graph.nodes[n].id.to_string()).collect();
        ids.sort();
        ids
    }

    /// The key each node last ran with.
    pub(crate) fn key_of(&self, node: usize) -> Option<CacheKey> {
        self.shared.key_of(node)
    }

    /// Waits for a server to end on its own (a crash while idle); returns
    /// its id and result.
    pub(crate) async fn server_ended(&mut self) -> Option<(String, TaskResult)> {
        loop {
            let (generation, (node, result, _)) = self.ended_rx.recv().await?;
            if self.servers.get(&node).is_some_and(|s| s.generation == generation) {
                self.servers.remove(&node);
                self.free(node);
                return Some((self.shared.graph.nodes[node].id.to_string(), result));
            }
        }
    }

    /// Stops one server with the kill ladder and waits until it is gone.
    pub(crate) async fn stop_server(&mut self, node: usize) {
        if let Some(server) = self.servers.remove(&node) {
            server.stop.notify_one();
            let _ = server.handle.await;
            self.free(node);
        }
    }

    /// `node` ended: its share, its mutex and its mutex's lock file are free.
    fn free(&mut self, node: usize) {
        self.admission.release(node);
        self.machine.release(node);
    }

    /// Stops every server, closes the guard and saves the cache's index.
    pub(crate) async fn shutdown(mut self) {
        let nodes: Vec<usize> = self.servers.keys().copied().collect();
        for node in nodes {
            self.stop_server(node).await;
        }
        self.shared.groups.close_guard();
        if let Some(cache) = &self.shared.cache {
            let cache = cache.clone();
            let _ = tokio::task::spawn_blocking(move || cache.finish()).await;
        }
    }

    /// Walks the graph once: every node when `subset` is `None`, else only
    /// the marked ones (the rest count as done, with their recorded keys).
    pub(crate) async fn run_cycle(
        &mut self,
        subset: Option<&BTreeSet<usize>>,
        signals: &mut Signals,
    ) -> Result<RunOutcome> {
        let graph = self.shared.graph;
        let member: Vec<bool> = (0..graph.len()).map(|n| subset.is_none_or(|s| s.contains(&n))).collect();
        let planned: Vec<String> = graph
            .topological_order()
            .into_iter()
            .filter(|&n| member[n])
            .map(|n| graph.nodes[n].id.to_string())
            .collect();
        self.shared.events.emit(Event::Planned { tasks: &planned, concurrency: self.shared.opts.concurrency });
        let mut cycle = Cycle {
            started: Instant::now(),
            walker: Walker::with_subset(graph, self.shared.opts.continue_mode, &member).with_ranks(&self.ranks()),
            member,
            results: vec![None; graph.len()],
            running: JoinSet::new(),
            batches: JoinSet::new(),
            batchable: (0..graph.len()).map(|n| self.shared.batchable(n)).collect(),
            begun: HashMap::new(),
            manifests: Vec::new(),
            interrupted: None,
            interrupted_at: None,
            in_slot: BTreeSet::new(),
            waiting: HashMap::new(),
        };
        loop {
            self.dispatch_batches(&mut cycle);
            self.fill_slots(&mut cycle).await;
            if self.cycle_done(&cycle) {
                break;
            }
            tokio::select! {
                Some(joined) = cycle.running.join_next(), if !cycle.running.is_empty() => {
                    let (node, result, manifest) =
                        joined.map_err(|e| Error::internal(format!("a task runner crashed: {e}")))?;
                    self.free(node);
                    cycle.settle(node, result, manifest);
                }
                Some(joined) = cycle.batches.join_next(), if !cycle.batches.is_empty() => {
                    let made = joined.map_err(|e| Error::internal(format!("a batch of cached tasks crashed: {e}")))?;
                    cycle.take_batch(made);
                }
                Some((generation, (node, result, manifest))) = self.ended_rx.recv() => {
                    self.server_end(&mut cycle, generation, node, result, manifest);
                }
                Some(node) = self.ready_rx.recv() => {
                    self.shared.events.emit(Event::Ready { task: &self.shared.graph.nodes[node].id.to_string() });
                    cycle.in_slot.remove(&node);
                    self.admission.give_back(node);
                    if let Some(server) = self.servers.get_mut(&node) {
                        server.ready = true;
                    }
                    cycle.walker.release(node);
                }
                kind = signals.recv() => self.interrupt(&mut cycle, kind),
                Some(id) = next_request(&mut self.restarts) => self.restart(&mut cycle, &id).await,
                Some(lock) = self.delivered_rx.recv() => self.machine.deliver(lock),
            }
            if !self.keep_servers {
                self.stop_unneeded_servers(&cycle.walker);
            }
        }
        self.machine.drop_unused();
        Ok(self.finish(cycle).await)
    }

    /// Each node's rank in the ready queue: its task's `priority`.
    fn ranks(&self) -> Vec<u8> {
        let graph = self.shared.graph;
        (0..graph.len()).map(|n| self.shared.task(n).priority as u8).collect()
    }

    /// Starts the ready tasks that admission lets in, in the walker's
    /// order; the others get (or keep) a reason to wait.
    async fn fill_slots(&mut self, cycle: &mut Cycle<'w>) {
        let mut pass = self.admission.pass();
        let ready: Vec<usize> = cycle.walker.ready_in_order().collect();
        for node in ready {
            if pass.full() {
                break;
            }
            if cycle.for_batch(node) {
                // A batch begins it (`dispatch_batches`).
                continue;
            }
            if self.shared.task(node).persistent && self.servers.contains_key(&node) {
                // Still up from an earlier cycle: restart only if its key moved.
                let now = self.shared.key_now(node).await;
                if now.is_some() && now == self.key_of(node) {
                    cycle.walker.take(node);
                    cycle.walker.finish(node, true);
                    continue;
                }
                let id = self.shared.graph.nodes[node].id.to_string();
                self.shared.events.note(&id, "inputs changed; restarting");
                self.stop_server(node).await;
                pass = self.admission.pass();
            }
            let (share, mutex) = self.share_of(node);
            let share = match self.admission.check(&mut pass, node, share, mutex) {
                Ok(share) => share,
                Err(wait) => {
                    self.wait(cycle, node, &wait);
                    continue;
                }
            };
            if let Some(name) = mutex
                && let Err(pid) = self.machine.try_take(node, name)
            {
                self.admission.untake(&mut pass, share);
                self.wait(cycle, node, &Wait::MutexElsewhere { name: name.to_string(), pid });
                continue;
            }
            cycle.walker.take(node);
            if cycle.waiting.remove(&node).is_some() {
                let id = self.shared.graph.nodes[node].id.to_string();
                self.shared.events.emit(Event::Waiting { task: &id, reason: None });
            }
            if self.start(cycle, node, share, mutex).await.is_none() {
                self.machine.release(node);
            }
        }
        self.fail_stuck(cycle);
    }

    /// Hands the ready tasks a batch may begin (`run::batch`) to blocking
    /// threads: as many batches at once as tasks may run, at most one per
    /// core. Each takes its share of the ready ones as if every lane were
    /// free, and the rest wait for the next free lane: one lane taking all
    /// of them left the others idle.
    fn dispatch_batches(&self, cycle: &mut Cycle<'w>) {
        let lanes = self.shared.opts.concurrency.clamp(1, crate::sys::cores());
        let free = lanes.saturating_sub(cycle.batches.len());
        let Some(cache) = self.shared.cache.as_ref().filter(|_| free > 0) else { return };
        let ready: Vec<usize> = cycle.walker.ready_in_order().filter(|&n| cycle.for_batch(n)).collect();
        if ready.is_empty() {
            return;
        }
        for share in ready.chunks(ready.len().div_ceil(lanes)).take(free) {
            let items: Vec<batch::Item> = share.iter().map(|&node| self.shared.batch_item(cache, node)).collect();
            for &node in share {
                cycle.walker.take(node);
            }
            let (events, cancelled) = (self.shared.events.clone(), self.shared.cancelled.clone());
            cycle.batches.spawn_blocking(move || batch::run(items, &events, &cancelled));
        }
    }

    /// What `node` asks of admission: a group takes nothing (it runs
    /// nothing), any other task its `resources` and `mutex`.
    fn share_of(&self, node: usize) -> (Resources, Option<&'w str>) {
        let task = self.shared.task(node);
        if task.is_group() {
            return (Resources { millicpus: 0, memory: 0 }, None);
        }
        (task.resources, task.mutex.as_deref())
    }

    /// Records why `node` waits, emitting the reason when it changed; the
    /// first wait for another vx is also a note, since it may be long.
    fn wait(&self, cycle: &mut Cycle<'_>, node: usize, wait: &Wait) {
        let graph = self.shared.graph;
        let text = wait.text(|n| graph.nodes[n].id.to_string());
        if cycle.waiting.get(&node) == Some(&text) {
            return;
        }
        let id = graph.nodes[node].id.to_string();
        self.shared.events.emit(Event::Waiting { task: &id, reason: Some(&text) });
        let elsewhere = matches!(wait, Wait::MutexElsewhere { .. });
        let noted = cycle.waiting.get(&node).is_some_and(|t| t.contains("held by another vx"));
        if elsewhere && !noted {
            self.shared.events.note(&id, &text);
        }
        cycle.waiting.insert(node, text);
    }

    /// Starts an admitted node; `None` when it settled without starting
    /// (refused, or a group after a failure).
    async fn start(&mut self, cycle: &mut Cycle<'w>, node: usize, share: Resources, mutex: Option<&str>) -> Option<()> {
        let id = self.shared.graph.nodes[node].id.to_string();
        let begun = cycle.begun.remove(&node);
        let job = match self.shared.prepare(node) {
            Ok(job) => super::lifecycle::Job { begun, ..job },
            Err(refused) => {
                let why = refused.to_string();
                self.shared.events.note(&id, &why);
                cycle.walker.finish(node, false);
                cycle.results[node] = Some(TaskResult::not_run(id, TaskStatus::Failed(why)));
                return None;
            }
        };
        if let Some(why) = job.group.then(|| failed_dependency(self.shared.graph, &cycle.results, node)).flatten() {
            // `--continue=always` starts tasks whose dependencies failed;
            // a group has nothing of its own to try, and succeeding would
            // say its dependencies did.
            cycle.walker.finish(node, false);
            cycle.results[node] = Some(TaskResult::not_run(id, TaskStatus::Skipped(why)));
            return None;
        }
        self.admission.take(node, share, mutex);
        cycle.in_slot.insert(node);
        if job.attempt.persistent.is_some() {
            self.start_server(node, job);
        } else {
            cycle.running.spawn(job.run());
        }
        Some(())
    }

    /// Tasks that wait for a mutex held by a ready server of this vx, when
    /// nothing else runs, would wait for ever: the server stops only once
    /// they have settled (or when vx does). They fail, saying so.
    fn fail_stuck(&self, cycle: &mut Cycle<'_>) {
        let idle = cycle.running.is_empty() && cycle.batches.is_empty() && self.servers.values().all(|s| s.ready);
        if !idle || cycle.walker.is_stopped() {
            return;
        }
        let graph = self.shared.graph;
        let stuck: Vec<(usize, usize, String)> = cycle
            .walker
            .ready_in_order()
            .filter_map(|n| {
                let name = self.share_of(n).1?;
                let holder = self.admission.holder(name).filter(|h| self.servers.contains_key(h))?;
                Some((n, holder, name.to_string()))
            })
            .collect();
        for (node, holder, name) in stuck {
            let id = graph.nodes[node].id.to_string();
            let why = format!(
                "mutex {name} is held by the persistent task {}, which runs until it is no longer needed; give them different mutexes",
                graph.nodes[holder].id
            );
            self.shared.events.note(&id, &why);
            if cycle.waiting.remove(&node).is_some() {
                self.shared.events.emit(Event::Waiting { task: &id, reason: None });
            }
            cycle.walker.take(node);
            cycle.walker.finish(node, false);
            cycle.results[node] = Some(TaskResult::not_run(id, TaskStatus::Failed(why)));
        }
    }

    /// Starts a persistent task; its end comes back on `ended_rx`, tagged
    /// with a generation of its own.
    fn start_server(&mut self, node: usize, job: super::lifecycle::Job) {
        let Some(p) = &job.attempt.persistent else { return };
        self.generation += 1;
        let (generation, ended, stop) = (self.generation, self.ended_tx.clone(), p.stop.clone());
        let handle = tokio::spawn(async move {
            let _ = ended.send((generation, job.run().await));
        });
        self.servers.insert(node, Server { stop, handle, generation, ready: false });
    }

    /// The front end asked to restart `id`: a running server is stopped
    /// with the kill ladder and started again (its dependents, already
    /// released, stay so); anything else gets a note saying why not.
    async fn restart(&mut self, cycle: &mut Cycle<'w>, id: &str) {
        let graph = self.shared.graph;
        let found = (0..graph.len()).find(|&n| graph.nodes[n].id.to_string() == id);
        let Some(node) = found.filter(|n| self.servers.contains_key(n)) else {
            self.shared.events.note(id, "not restarted: only a running persistent task can be");
            return;
        };
        if cycle.interrupted.is_some() {
            return;
        }
        self.shared.events.note(id, "restarting");
        self.stop_server(node).await;
        if let Some(name) = self.share_of(node).1 {
            // It held its mutex; it takes it again to go on running.
            self.admission.take(node, Resources { millicpus: 0, memory: 0 }, Some(name));
            if let Err(pid) = self.machine.try_take(node, name) {
                let graph = self.shared.graph;
                let wait = Wait::MutexElsewhere { name: name.to_string(), pid };
                self.shared.events.note(
                    id,
                    &format!("restarted without its mutex: {}", wait.text(|n| graph.nodes[n].id.to_string())),
                );
            }
        }
        match self.shared.prepare(node) {
            Ok(job) => self.start_server(node, job),
            Err(refused) => {
                let why = refused.to_string();
                self.shared.events.note(id, &why);
                self.free(node);
                cycle.settle(node, TaskResult::not_run(id.to_string(), TaskStatus::Failed(why)), None);
            }
        }
    }

    /// Whether the walk is over: nothing runs, servers are settled, and
    /// nothing more can start.
    fn cycle_done(&self, cycle: &Cycle<'_>) -> bool {
        let servers_settled = if self.keep_servers {
            self.servers.iter().all(|(n, s)| s.ready || !cycle.member[*n])
        } else {
            self.servers.is_empty()
        };
        let nothing_ready = cycle.walker.ready_in_order().next().is_none();
        cycle.running.is_empty()
            && cycle.batches.is_empty()
            && servers_settled
            && (cycle.walker.is_stopped() || (cycle.in_slot.is_empty() && nothing_ready))
    }

    /// A server ended: settle it when this cycle walks it.
    fn server_end(
        &mut self,
        cycle: &mut Cycle<'_>,
        generation: u64,
        node: usize,
        result: TaskResult,
        manifest: Option<KeyManifest>,
    ) {
        if self.servers.get(&node).is_none_or(|s| s.generation != generation) {
            return;
        }
        self.servers.remove(&node);
        self.free(node);
        if cycle.member[node] {
            cycle.settle(node, result, manifest);
        } else {
            self.shared.events.note(&result.id, "server stopped");
        }
    }

    /// The first signal stops every task with the kill ladder; a second
    /// kills them now.
    fn interrupt(&self, cycle: &mut Cycle<'_>, kind: ErrorKind) {
        if let Some(first) = cycle.interrupted_at {
            if first.elapsed() < ECHO_WINDOW {
                // The same stop, passed on by a package manager that got
                // the Ctrl-C too (`pnpm`, `bun x`): not a second Ctrl-C.
                return;
            }
            hurry();
            for pgid in self.shared.groups.snapshot() {
                signal_group(pgid, Signal::SIGKILL);
            }
            return;
        }
        cycle.interrupted = Some(kind);
        cycle.interrupted_at = Some(Instant::now());
        self.shared.cancelled.store(true, Ordering::SeqCst);
        crate::remote::stop_calls();
        cycle.walker.interrupt();
        self.shared.events.emit(Event::Interrupted { kind });
        for pgid in self.shared.groups.snapshot() {
            tokio::spawn(stop_group(pgid, grace_period()));
        }
        for server in self.servers.values() {
            server.stop.notify_one();
        }
    }

    /// Every task gets a result (the skipped ones, with why); the index is
    /// saved and `RunFinished` emitted.
    async fn finish(&self, mut cycle: Cycle<'_>) -> RunOutcome {
        let graph = self.shared.graph;
        for (node, reason) in cycle.walker.skipped() {
            let why = match reason {
                SkipReason::DependencyFailed(d) => format!("dependency {} did not succeed", graph.nodes[d].id),
                SkipReason::RunStopped(d) => {
                    format!("the run stopped after {} failed; --continue runs the rest", graph.nodes[d].id)
                }
                SkipReason::Interrupted => "vx was interrupted".to_string(),
            };
            cycle.results[node] = Some(TaskResult::not_run(graph.nodes[node].id.to_string(), TaskStatus::Skipped(why)));
        }
        if let Some(cache) = &self.shared.cache {
            let cache = cache.clone();
            let _ = tokio::task::spawn_blocking(move || cache.save_index()).await;
        }
        let order = graph.topological_order();
        let summary = RunSummary {
            results: order.into_iter().filter_map(|n| cycle.results[n].take()).collect(),
            wall: cycle.started.elapsed(),
        };
        let outcome = RunOutcome { summary, interrupted: cycle.interrupted, manifests: cycle.manifests };
        self.shared.events.emit(Event::RunFinished {
            summary: &outcome.summary,
            interrupted: outcome.interrupted,
            manifests: &outcome.manifests,
        });
        outcome
    }

    /// `vx run`: a server pulled in only as a dependency stops once every
    /// task that needs it has settled; one the user named runs on.
    fn stop_unneeded_servers(&self, walker: &Walker<'_>) {
        let graph = self.shared.graph;
        for (&node, server) in &self.servers {
            let root = graph.roots.contains(&node);
            let needed = graph.dependents[node].iter().any(|&d| !walker.is_settled(d));
            if !root && !needed {
                server.stop.notify_one();
            }
        }
    }
}

/// The next request on `requests`, or never when there is no front end
/// to ask.
async fn next_request(requests: &mut Option<mpsc::UnboundedReceiver<String>>) -> Option<String> {
    match requests {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Why a group cannot succeed: the first of its dependencies that settled
/// in this cycle without succeeding.
fn failed_dependency(graph: &TaskGraph, results: &[Option<TaskResult>], node: usize) -> Option<String> {
    graph.deps[node]
        .iter()
        .find(|&&d| results[d].as_ref().is_some_and(|r| r.status != TaskStatus::Succeeded))
        .map(|&d| format!("dependency {} did not succeed", graph.nodes[d].id))
}

/// The process-group registry, with a guard process started on the first
/// spawn; without one when there is nothing to run or `VX_GUARD=off` asks
/// so (for measuring the guard).
fn groups_for(run_id: &str, nothing_to_run: bool) -> Groups {
    if nothing_to_run || std::env::var_os("VX_GUARD").is_some_and(|v| v == "off") {
        Groups::new()
    } else {
        Groups::with_guard(run_id)
    }
}
