//! The engine: walks the task graph, keeps up to `--concurrency` tasks
//! running, streams their output, applies timeouts and `--continue`, and
//! stops everything through the guard on SIGINT/SIGTERM/SIGHUP.
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

use super::executor::{Executors, Prepared};
use super::job::{CacheJob, Job, Persistence};
use super::local::task_command;
use super::options::RunOptions;
use super::signals::Signals;
use crate::cache::{Cache, CacheKey, History, KeyManifest, state_dir};
use crate::config::Workspace;
use crate::error::{Error, ErrorKind, Result};
use crate::events::{RunSummary, TaskResult, TaskStatus};
use crate::graph::{SkipReason, TaskGraph, Walker};
use crate::guard::{Groups, RUN_ID_VAR, TaskMark, grace_period, hurry, signal_group, stop_group};
use crate::report::{StatusLine, Style, Terminal};

/// What a cycle produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: RunSummary,
    /// Set when vx was interrupted (it decides the exit code).
    pub interrupted: Option<ErrorKind>,
    /// `(task id, key, manifest)` of every task that was keyed, for history.
    pub manifests: Vec<(String, String, KeyManifest)>,
}

/// Runs the whole graph once (`vx run`).
pub async fn execute(
    ws: &Workspace,
    graph: &TaskGraph,
    opts: &RunOptions,
    cache: Option<Arc<Cache>>,
) -> Result<RunOutcome> {
    let mut signals = Signals::install()?;
    let mut session = Session::new(ws, graph, opts.clone(), cache, false);
    let outcome = session.run_cycle(None, &mut signals).await;
    session.shutdown().await;
    outcome
}

type JobResult = (usize, TaskResult, Option<KeyManifest>);

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
pub struct Session<'w> {
    ws: &'w Workspace,
    graph: &'w TaskGraph,
    opts: RunOptions,
    cache: Option<Arc<Cache>>,
    /// `vx watch`: servers stay up between cycles.
    keep_servers: bool,
    style: Style,
    term: Arc<Terminal>,
    run_id: String,
    groups: Groups,
    cancelled: Arc<AtomicBool>,
    keys: Arc<Mutex<Vec<Option<CacheKey>>>>,
    servers: HashMap<usize, Server>,
    generation: u64,
    ready_tx: mpsc::UnboundedSender<usize>,
    ready_rx: mpsc::UnboundedReceiver<usize>,
    ended_tx: mpsc::UnboundedSender<(u64, JobResult)>,
    ended_rx: mpsc::UnboundedReceiver<(u64, JobResult)>,
    executors: Executors,
}

impl<'w> Session<'w> {
    pub fn new(
        ws: &'w Workspace,
        graph: &'w TaskGraph,
        opts: RunOptions,
        cache: Option<Arc<Cache>>,
        keep_servers: bool,
    ) -> Self {
        let style = Style { enabled: opts.color };
        let term = Arc::new(
            Terminal::new(style, opts.output_logs, opts.log_order)
                .with_github_groups(opts.github)
                .with_status(status_line(ws, graph, &opts)),
        );
        let run_id = format!(
            "{}-{:x}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        );
        let groups = groups_for(&run_id, graph.is_empty());
        let (ready_tx, ready_rx) = mpsc::unbounded_channel();
        let (ended_tx, ended_rx) = mpsc::unbounded_channel();
        Session {
            ws,
            graph,
            keys: Arc::new(Mutex::new(vec![None; graph.len()])),
            opts,
            cache,
            keep_servers,
            style,
            term,
            run_id,
            groups,
            cancelled: Arc::new(AtomicBool::new(false)),
            servers: HashMap::new(),
            generation: 0,
            ready_tx,
            ready_rx,
            ended_tx,
            ended_rx,
            executors: Executors::new(ws),
        }
    }

    pub fn terminal(&self) -> &Terminal {
        &self.term
    }

    /// Ids of the persistent tasks running now.
    pub fn running_servers(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.servers.keys().map(|&n| self.graph.nodes[n].id.to_string()).collect();
        ids.sort();
        ids
    }

    /// The key each node last ran with.
    pub fn key_of(&self, node: usize) -> Option<CacheKey> {
        self.keys.lock().expect("keys lock poisoned")[node].clone()
    }

    /// Waits for a server to end on its own (a crash while idle); returns
    /// its id and result.
    pub async fn server_ended(&mut self) -> Option<(String, TaskResult)> {
        loop {
            let (generation, (node, result, _)) = self.ended_rx.recv().await?;
            if self.servers.get(&node).is_some_and(|s| s.generation == generation) {
                self.servers.remove(&node);
                return Some((self.graph.nodes[node].id.to_string(), result));
            }
        }
    }

    /// Stops one server with the kill ladder and waits until it is gone.
    pub async fn stop_server(&mut self, node: usize) {
        if let Some(server) = self.servers.remove(&node) {
            server.stop.notify_one();
            let _ = server.handle.await;
        }
    }

    /// Stops every server, closes the guard and saves the cache's index.
    pub async fn shutdown(mut self) {
        let nodes: Vec<usize> = self.servers.keys().copied().collect();
        for node in nodes {
            self.stop_server(node).await;
        }
        self.groups.close_guard();
        if let Some(cache) = &self.cache {
            let cache = cache.clone();
            let _ = tokio::task::spawn_blocking(move || cache.finish()).await;
        }
    }

    fn job(&self, node: usize) -> Job {
        let graph = self.graph;
        let n = &graph.nodes[node];
        let project = &self.ws.projects[n.project];
        let task = &project.tasks[&n.id.task];
        let mut command = task_command(self.ws, project, task);
        command.env.push((RUN_ID_VAR.into(), self.run_id.clone().into()));
        let persistent = task.persistent.then(|| Persistence {
            ready: task.ready.clone(),
            ready_timeout: task.ready_timeout,
            dir: project.dir.clone(),
            ready_tx: self.ready_tx.clone(),
            stop: Arc::new(Notify::new()),
        });
        let cache = self.cache.as_ref().filter(|c| c.enabled()).map(|c| CacheJob {
            cache: c.clone(),
            root: self.ws.root.clone(),
            project_dir: project.dir.clone(),
            task: task.clone(),
            executor_config: String::new(),
            deps: graph.deps[node].iter().map(|&d| (d, graph.nodes[d].id.to_string())).collect(),
            keys: self.keys.clone(),
        });
        Job {
            node,
            id: n.id.to_string(),
            command,
            mark: TaskMark { run_id: self.run_id.clone(), project: project.name.clone(), task: task.name.clone() },
            timeout: task.timeout.or(self.opts.timeout),
            persistent,
            cache,
            groups: self.groups.clone(),
            term: self.term.clone(),
            cancelled: self.cancelled.clone(),
            executor: Prepared::Local,
        }
    }

    /// The executor a task runs on: `--executor` for every task that is not
    /// persistent (servers stay local), else its own.
    fn executor_of(&self, task: &crate::config::Task) -> String {
        match &self.opts.executor {
            Some(name) if !task.persistent => name.clone(),
            _ => task.executor.clone(),
        }
    }

    /// The key a node would get now (its dependencies' keys as recorded).
    async fn key_now(&self, node: usize) -> Option<CacheKey> {
        let cache = self.cache.clone()?;
        let graph = self.graph;
        let deps: Option<Vec<(String, CacheKey)>> = {
            let keys = self.keys.lock().expect("keys lock poisoned");
            graph.deps[node].iter().map(|&d| keys[d].clone().map(|k| (graph.nodes[d].id.to_string(), k))).collect()
        };
        let n = &graph.nodes[node];
        let project = &self.ws.projects[n.project];
        let (root, dir, task, id) =
            (self.ws.root.clone(), project.dir.clone(), project.tasks[&n.id.task].clone(), n.id.to_string());
        let deps = deps?;
        tokio::task::spawn_blocking(move || cache.task_key(&root, &dir, &id, &task, "", &deps).ok().map(|(k, _)| k))
            .await
            .ok()
            .flatten()
    }

    /// Walks the graph once: every node when `subset` is `None`, else only
    /// the marked ones (the rest count as done, with their recorded keys).
    pub async fn run_cycle(&mut self, subset: Option<&BTreeSet<usize>>, signals: &mut Signals) -> Result<RunOutcome> {
        let started = Instant::now();
        let graph = self.graph;
        let member: Vec<bool> = (0..graph.len()).map(|n| subset.is_none_or(|s| s.contains(&n))).collect();
        let mut walker = Walker::with_subset(graph, self.opts.continue_mode, &member);
        let mut results: Vec<Option<TaskResult>> = vec![None; graph.len()];
        let mut running: JoinSet<JobResult> = JoinSet::new();
        let mut manifests = Vec::new();
        let mut interrupted: Option<ErrorKind> = None;
        // Tasks holding a concurrency slot: all running ones, except
        // persistent tasks once ready (a server must not starve its dependents).
        let mut in_slot: BTreeSet<usize> = BTreeSet::new();

        loop {
            while in_slot.len() < self.opts.concurrency.max(1) {
                let Some(node) = walker.next_ready() else { break };
                let n = &graph.nodes[node];
                let task = &self.ws.projects[n.project].tasks[&n.id.task];
                let executor = self.executor_of(task);
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
                let prepared = self.executors.prepare(
                    &self.ws.projects[n.project],
                    task,
                    &executor,
                    self.cache.as_ref(),
                    dep_outputs,
                );
                let prepared = match prepared {
                    Ok(prepared) => prepared,
                    Err(why) => {
                        self.term.note(&n.id.to_string(), &why);
                        walker.finish(node, false);
                        results[node] = Some(TaskResult::not_run(n.id.to_string(), TaskStatus::Failed(why)));
                        continue;
                    }
                };
                if task.persistent && self.servers.contains_key(&node) {
                    // Still up from an earlier cycle: restart only if its key moved.
                    let now = self.key_now(node).await;
                    if now.is_some() && now == self.key_of(node) {
                        walker.finish(node, true);
                        continue;
                    }
                    self.term.note(&n.id.to_string(), "inputs changed; restarting");
                    self.stop_server(node).await;
                }
                let mut job = self.job(node);
                if let Some(c) = &mut job.cache {
                    c.executor_config = prepared.cache_identity();
                    c.task.executor = executor;
                }
                job.executor = prepared;
                in_slot.insert(node);
                if let Some(p) = &job.persistent {
                    self.generation += 1;
                    let (generation, ended, stop) = (self.generation, self.ended_tx.clone(), p.stop.clone());
                    let handle = tokio::spawn(async move {
                        let _ = ended.send((generation, job.run().await));
                    });
                    self.servers.insert(node, Server { stop, handle, generation, ready: false });
                } else {
                    running.spawn(job.run());
                }
            }
            let servers_settled = if self.keep_servers {
                self.servers.iter().all(|(n, s)| s.ready || !member[*n])
            } else {
                self.servers.is_empty()
            };
            if running.is_empty() && servers_settled && (walker.is_stopped() || in_slot.is_empty()) {
                break;
            }
            tokio::select! {
                Some(joined) = running.join_next(), if !running.is_empty() => {
                    let (node, result, manifest) =
                        joined.map_err(|e| Error::internal(format!("a task runner crashed: {e}")))?;
                    self.settle(node, result, manifest, &mut walker, &mut results, &mut manifests, &mut in_slot);
                }
                Some((generation, (node, result, manifest))) = self.ended_rx.recv() => {
                    if self.servers.get(&node).is_some_and(|s| s.generation == generation) {
                        self.servers.remove(&node);
                        if member[node] {
                            self.settle(node, result, manifest, &mut walker, &mut results, &mut manifests, &mut in_slot);
                        } else {
                            self.term.note(&result.id, "server stopped");
                        }
                    }
                }
                Some(node) = self.ready_rx.recv() => {
                    in_slot.remove(&node);
                    if let Some(server) = self.servers.get_mut(&node) {
                        server.ready = true;
                    }
                    walker.release(node);
                }
                kind = signals.recv() => {
                    if interrupted.is_none() {
                        interrupted = Some(kind);
                        self.cancelled.store(true, Ordering::SeqCst);
                        walker.interrupt();
                        self.term.print(&self.style.yellow("vx: stopping tasks (press Ctrl-C again to kill them now)\n"));
                        for pgid in self.groups.snapshot() {
                            tokio::spawn(stop_group(pgid, grace_period()));
                        }
                        for server in self.servers.values() {
                            server.stop.notify_one();
                        }
                    } else {
                        hurry();
                        for pgid in self.groups.snapshot() {
                            signal_group(pgid, Signal::SIGKILL);
                        }
                    }
                }
            }
            if !self.keep_servers {
                self.stop_unneeded_servers(&walker);
            }
        }

        for (node, reason) in walker.skipped() {
            let why = match reason {
                SkipReason::DependencyFailed(d) => format!("dependency {} did not succeed", graph.nodes[d].id),
                SkipReason::RunStopped(d) => {
                    format!("the run stopped after {} failed; --continue runs the rest", graph.nodes[d].id)
                }
                SkipReason::Interrupted => "vx was interrupted".to_string(),
            };
            results[node] = Some(TaskResult::not_run(graph.nodes[node].id.to_string(), TaskStatus::Skipped(why)));
        }
        if let Some(cache) = &self.cache {
            let cache = cache.clone();
            let _ = tokio::task::spawn_blocking(move || cache.save_index()).await;
        }
        let order = graph.topological_order();
        let summary = RunSummary {
            results: order.into_iter().filter_map(|n| results[n].take()).collect(),
            wall: started.elapsed(),
        };
        self.term.clear_status();
        self.term.print(&summary.render(self.style));
        Ok(RunOutcome { summary, interrupted, manifests })
    }

    #[expect(clippy::too_many_arguments, reason = "the cycle's state, threaded through one bookkeeping step")]
    fn settle(
        &self,
        node: usize,
        result: TaskResult,
        manifest: Option<KeyManifest>,
        walker: &mut Walker<'_>,
        results: &mut [Option<TaskResult>],
        manifests: &mut Vec<(String, String, KeyManifest)>,
        in_slot: &mut BTreeSet<usize>,
    ) {
        if let (Some(m), Some(key)) = (manifest, &result.key) {
            manifests.push((result.id.clone(), key.clone(), m));
        }
        in_slot.remove(&node);
        walker.finish(node, result.status == TaskStatus::Succeeded);
        results[node] = Some(result);
    }

    /// `vx run`: a server pulled in only as a dependency stops once every
    /// task that needs it has settled; one the user named runs on.
    fn stop_unneeded_servers(&self, walker: &Walker<'_>) {
        for (&node, server) in &self.servers {
            let root = self.graph.roots.contains(&node);
            let needed = self.graph.dependents[node].iter().any(|&d| !walker.is_settled(d));
            if !root && !needed {
                server.stop.notify_one();
            }
        }
    }
}

/// A status line for a terminal (not when piped, not under CI), with ETAs
/// from the p50 durations in history.
fn status_line(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions) -> Option<StatusLine> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || std::env::var_os("CI").is_some() || graph.is_empty() {
        return None;
    }
    let history = History::open(&state_dir(ws).join("history.db")).ok();
    let p50 = graph
        .nodes
        .iter()
        .filter_map(|n| {
            let id = n.id.to_string();
            history.as_ref().and_then(|h| h.p50(&id)).map(|d| (id, d))
        })
        .collect();
    Some(StatusLine::new(graph.len(), p50, opts.concurrency))
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
