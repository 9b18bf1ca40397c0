//! The engine: walks the task graph, keeps up to `--concurrency` tasks
//! running, streams their output, applies timeouts and `--continue`, and
//! stops everything through the guard on SIGINT/SIGTERM/SIGHUP.
//!
//! A task is finished when its process group is empty, not when its leader
//! exits: a background process left behind is named in a warning and
//! stopped by the kill ladder before the task's result is recorded.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::sys::signal::Signal;
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinSet;

use super::job::{CacheJob, Job, Persistence};
use super::local::task_command;
use super::options::RunOptions;
use super::signals::Signals;
use crate::cache::{Cache, CacheKey, KeyManifest};
use crate::config::Workspace;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{SkipReason, TaskGraph, Walker};
use crate::guard::{Groups, GuardLink, RUN_ID_VAR, TaskMark, grace_period, signal_group, stop_group};
use crate::report::{RunSummary, Style, TaskResult, TaskStatus, Terminal};

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: RunSummary,
    /// Set when vx was interrupted (it decides the exit code).
    pub interrupted: Option<ErrorKind>,
    /// `(task id, key, manifest)` of every task that was keyed, for history.
    pub manifests: Vec<(String, String, KeyManifest)>,
}

/// Runs the graph.
pub async fn execute(
    ws: &Workspace,
    graph: &TaskGraph,
    opts: &RunOptions,
    cache: Option<Arc<Cache>>,
) -> Result<RunOutcome> {
    let started = Instant::now();
    let style = Style { enabled: opts.color };
    let term = Arc::new(Terminal::new(style, opts.output_logs, opts.log_order));
    let run_id = format!(
        "{}-{:x}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    );
    let (groups, guard) = start_guard(&run_id, graph.is_empty());
    let cancelled = Arc::new(AtomicBool::new(false));
    let mut signals = Signals::install()?;
    let mut walker = Walker::new(graph, opts.continue_mode);
    let mut results: Vec<Option<TaskResult>> = vec![None; graph.len()];
    let mut running: JoinSet<(usize, TaskResult, Option<KeyManifest>)> = JoinSet::new();
    let mut manifests: Vec<(String, String, KeyManifest)> = Vec::new();
    let mut interrupted: Option<ErrorKind> = None;
    // Tasks holding a concurrency slot: all running ones, except persistent
    // tasks once they are ready (a server must not starve its dependents).
    let mut in_slot: BTreeSet<usize> = BTreeSet::new();
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<usize>();
    // Persistent tasks pulled in only as dependencies, with their stop signal.
    let mut stoppable: HashMap<usize, Arc<Notify>> = HashMap::new();
    let keys: Arc<Mutex<Vec<Option<CacheKey>>>> = Arc::new(Mutex::new(vec![None; graph.len()]));

    loop {
        while in_slot.len() < opts.concurrency.max(1) {
            let Some(node) = walker.next_ready() else { break };
            let n = &graph.nodes[node];
            let project = &ws.projects[n.project];
            let task = &project.tasks[&n.id.task];
            let id = n.id.to_string();
            if task.executor != "local" {
                let why =
                    format!("executor `{}` is a plugin, and executor plugins are not supported yet", task.executor);
                term.note(&id, &why);
                walker.finish(node, false);
                results[node] = Some(TaskResult::not_run(id, TaskStatus::Failed(why)));
                continue;
            }
            let mut command = task_command(ws, project, task);
            command.env.push((RUN_ID_VAR.into(), run_id.clone().into()));
            let persistent = task.persistent.then(|| {
                let stop = Arc::new(Notify::new());
                if !graph.roots.contains(&node) {
                    stoppable.insert(node, stop.clone());
                }
                Persistence {
                    ready: task.ready.clone(),
                    ready_timeout: task.ready_timeout,
                    dir: project.dir.clone(),
                    ready_tx: ready_tx.clone(),
                    stop,
                }
            });
            let cache_job = cache.as_ref().filter(|c| c.enabled()).map(|c| CacheJob {
                cache: c.clone(),
                root: ws.root.clone(),
                project_dir: project.dir.clone(),
                task: task.clone(),
                executor_config: String::new(),
                deps: graph.deps[node].iter().map(|&d| (d, graph.nodes[d].id.to_string())).collect(),
                keys: keys.clone(),
            });
            let job = Job {
                node,
                id,
                command,
                mark: TaskMark { run_id: run_id.clone(), project: project.name.clone(), task: task.name.clone() },
                timeout: task.timeout.or(opts.timeout),
                persistent,
                cache: cache_job,
                groups: groups.clone(),
                term: term.clone(),
                cancelled: cancelled.clone(),
            };
            in_slot.insert(node);
            running.spawn(job.run());
        }
        if running.is_empty() {
            break;
        }
        tokio::select! {
            Some(joined) = running.join_next() => {
                let (node, result, manifest) =
                    joined.map_err(|e| Error::internal(format!("a task runner crashed: {e}")))?;
                if let (Some(m), Some(key)) = (manifest, &result.key) {
                    manifests.push((result.id.clone(), key.clone(), m));
                }
                in_slot.remove(&node);
                stoppable.remove(&node);
                walker.finish(node, result.status == TaskStatus::Succeeded);
                results[node] = Some(result);
                stoppable.retain(|&p, stop| {
                    let needed = graph.dependents[p].iter().any(|&d| !walker.is_settled(d));
                    if !needed {
                        stop.notify_one();
                    }
                    needed
                });
            }
            Some(node) = ready_rx.recv() => {
                in_slot.remove(&node);
                walker.release(node);
            }
            kind = signals.recv() => {
                if interrupted.is_none() {
                    interrupted = Some(kind);
                    cancelled.store(true, Ordering::SeqCst);
                    walker.interrupt();
                    term.print(&style.yellow("vx: stopping tasks (press Ctrl-C again to kill them now)\n"));
                    for pgid in groups.snapshot() {
                        tokio::spawn(stop_group(pgid, grace_period()));
                    }
                } else {
                    for pgid in groups.snapshot() {
                        signal_group(pgid, Signal::SIGKILL);
                    }
                }
            }
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
        let id = graph.nodes[node].id.to_string();
        results[node] = Some(TaskResult::not_run(id, TaskStatus::Skipped(why)));
    }
    if let Some(guard) = guard {
        guard.close();
    }
    if let Some(cache) = &cache {
        let cache = cache.clone();
        let _ = tokio::task::spawn_blocking(move || cache.finish()).await;
    }
    let order = graph.topological_order();
    let summary =
        RunSummary { results: order.into_iter().filter_map(|n| results[n].take()).collect(), wall: started.elapsed() };
    term.print(&summary.render(style));
    Ok(RunOutcome { summary, interrupted, manifests })
}

/// Starts the guard process; without one (it failed to start, there is
/// nothing to run, or `VX_GUARD=off` asks so for a benchmark) tasks still
/// run, with a warning in the first case.
fn start_guard(run_id: &str, nothing_to_run: bool) -> (Groups, Option<Arc<GuardLink>>) {
    if nothing_to_run || std::env::var_os("VX_GUARD").is_some_and(|v| v == "off") {
        return (Groups::new(), None);
    }
    match GuardLink::start(run_id) {
        Ok((link, mut child)) => {
            let link = Arc::new(link);
            let watched = link.clone();
            tokio::spawn(async move {
                let status = child.wait().await.map_or_else(|e| e.to_string(), |s| s.to_string());
                watched.guard_died(&status);
            });
            (Groups::with_guard(link.clone()), Some(link))
        }
        Err(e) => {
            eprintln!("vx: warning: could not start the guard process ({e}); tasks are not stopped if vx is killed");
            (Groups::new(), None)
        }
    }
}
