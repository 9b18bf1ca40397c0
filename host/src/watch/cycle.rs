//! The watch loop: load the workspace, run the selection once, then wait
//! for changes and re-run what each affects in the same session (servers
//! whose inputs did not change keep running). A config change stops the
//! session and starts over from loading; a config that fails to load
//! after such a change is reported and the loop waits for the next edit
//! (the first load fails like `vx run`, exit 2). Ctrl-C, SIGTERM and
//! SIGHUP stop everything through the guard.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::debounce::{DebounceWindow, gather};
use super::filter::{ChangeFilter, affected_nodes};
use super::source::start;
use crate::cache::{Cache, CacheMode};
use crate::config::{Workspace, find_workspace_root, load_workspace};
use crate::error::{Error, ErrorKind, Result};
use crate::events::TaskResult;
use crate::graph::TaskGraph;
use crate::plan::{Selection, plan};
use crate::report::Style;
use crate::run::{RunOptions, RunOutcome, Session, Signals};
use crate::session::{CycleRelay, Front, FrontKind, RunSession, SessionOptions};

/// What woke the loop.
enum Wake {
    Change(Vec<PathBuf>),
    ServerEnded(Option<(String, TaskResult)>),
    Signal(ErrorKind),
    WatcherGone,
}

/// Everything `vx watch` was asked for.
#[derive(Debug)]
pub(crate) struct WatchRequest {
    pub cwd: PathBuf,
    pub selection: Selection,
    pub opts: RunOptions,
    pub cache_dir: Option<PathBuf>,
    pub cache_mode: CacheMode,
    pub force: bool,
    /// The arguments after `vx`, as typed: each cycle is recorded in
    /// history as a run of them.
    pub argv: Vec<String>,
}

fn say(style: Style, text: &str) {
    println!("{}", style.bold(&format!("── {text}")));
}

/// A short list of changed paths for a cycle header.
fn describe(root: &Path, paths: &BTreeSet<PathBuf>) -> String {
    let mut names: Vec<String> =
        paths.iter().take(3).map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string()).collect();
    if paths.len() > 3 {
        names.push(format!("and {} more", paths.len() - 3));
    }
    names.join(", ")
}

/// Runs `vx watch` until interrupted; returns the exit code.
pub(crate) async fn watch(req: WatchRequest) -> Result<u8> {
    let style = Style { enabled: req.opts.color };
    let mut signals = Signals::install()?;
    let window = DebounceWindow::from_env();
    let root = find_workspace_root(&req.cwd)?;
    let (source, mut rx) = start(&root).map_err(|e| Error::internal(format!("vx watch: {e}")))?;
    let mut first = true;
    loop {
        let loaded = load_workspace(&req.cwd).map_err(Error::from).and_then(|mut ws| {
            ws.override_env_mode(req.opts.env_mode);
            crate::run::check_run_executor(&ws, req.opts.executor.as_deref())?;
            let sel = &req.selection;
            crate::plan::apply_pass_through(&mut ws, &sel.tasks, &sel.pass_through);
            let graph = plan(&ws, sel)?;
            let cache =
                Cache::open(&ws, req.cache_dir.clone(), req.cache_mode, req.force, crate::backends::remote(&ws))?;
            Ok((ws, graph, cache))
        });
        if std::mem::replace(&mut first, false) {
            // What was typed is checked once, as `vx run` checks it: a
            // misspelt task or an unknown `--filter` project is an error
            // to mend on the command line, not a file edit to wait for.
            if let Err(e) = &loaded {
                return Err(e.clone());
            }
            tracing::info!(
                target: "vx watch",
                "watching {} ({}); press Ctrl-C to stop",
                root.display(),
                source.description
            );
        }
        let (ws, graph, cache) = match loaded {
            Ok(loaded) => loaded,
            Err(e) => {
                tracing::error!("{e}");
                say(style, "waiting for a change to the configuration");
                match wait_for_config(&mut rx, &mut signals, window).await {
                    Some(code) => return Ok(code),
                    None => continue,
                }
            }
        };
        match watch_workspace(&req, &ws, &graph, cache, &mut rx, &mut signals, window).await? {
            Some(code) => return Ok(code),
            None => say(style, "configuration changed; reloading the workspace"),
        }
    }
}

/// One loaded workspace: the first run and every re-run until a config
/// change (`None`) or a signal (the exit code).
async fn watch_workspace(
    req: &WatchRequest,
    ws: &Workspace,
    graph: &TaskGraph,
    cache: Cache,
    rx: &mut mpsc::UnboundedReceiver<Vec<PathBuf>>,
    signals: &mut Signals,
    window: DebounceWindow,
) -> Result<Option<u8>> {
    let style = Style { enabled: req.opts.color };
    let filter = ChangeFilter::new(ws, cache.store.dir());
    // One front for every cycle; each cycle's history, live file and
    // plugins behind the relay (`session::relay`).
    let mut opts = req.opts.clone();
    let stream = FrontKind::Stream { details: false, to_stderr: false };
    // Every cycle is recorded (`run_cycle`): its failed logs are kept.
    let front = Front::start(stream, ws, graph, &mut opts, &req.argv, true)?;
    let relay = Arc::new(CycleRelay::default());
    let bus = crate::events::Bus::new(vec![front.subscriber(), relay.clone()]);
    let mut session = Session::new(ws, graph, opts.clone(), Some(Arc::new(cache)), true, bus);
    say(style, &format!("running {} task(s)", graph.len()));
    let outcome = run_cycle(&mut session, None, signals, (req, ws, graph, &opts, &*relay)).await?;
    if let Some(kind) = outcome.interrupted {
        session.shutdown().await;
        return Ok(Some(kind.exit_code()));
    }
    announce_servers(&session, style);
    loop {
        let wake = tokio::select! {
            first = rx.recv() => first.map_or(Wake::WatcherGone, Wake::Change),
            ended = session.server_ended() => Wake::ServerEnded(ended),
            kind = signals.recv() => Wake::Signal(kind),
        };
        match wake {
            Wake::Change(first) => {
                let paths = gather(rx, first, window).await;
                if paths.iter().any(|p| filter.is_config(p)) {
                    session.shutdown().await;
                    return Ok(None);
                }
                let relevant: BTreeSet<PathBuf> = paths.into_iter().filter(|p| !filter.ignored(p)).collect();
                let affected = affected_nodes(ws, graph, &relevant);
                if affected.nodes.is_empty() {
                    continue;
                }
                say(
                    style,
                    &format!("changed: {} → {} task(s)", describe(&ws.root, &affected.causes), affected.nodes.len()),
                );
                let cycle = (req, ws, graph, &opts, &*relay);
                let outcome = run_cycle(&mut session, Some(&affected.nodes), signals, cycle).await?;
                if let Some(kind) = outcome.interrupted {
                    session.shutdown().await;
                    return Ok(Some(kind.exit_code()));
                }
                announce_servers(&session, style);
            }
            Wake::ServerEnded(Some((id, result))) => {
                session.events().note(&id, &format!("server exited ({})", status_text(&result)));
            }
            Wake::ServerEnded(None) => {}
            Wake::Signal(kind) => {
                session.shutdown().await;
                return Ok(Some(kind.exit_code()));
            }
            Wake::WatcherGone => {
                session.shutdown().await;
                return Err(Error::internal("the file watcher stopped"));
            }
        }
    }
}

/// One cycle of the session, with consumers of its own: it is recorded in
/// history and shown on the dashboard as a run of `vx watch …`.
async fn run_cycle(
    session: &mut Session<'_>,
    subset: Option<&BTreeSet<usize>>,
    signals: &mut Signals,
    (req, ws, graph, opts, relay): (&WatchRequest, &Workspace, &TaskGraph, &RunOptions, &CycleRelay),
) -> Result<RunOutcome> {
    let options = SessionOptions {
        history: true,
        live: true,
        plugins: true,
        ..SessionOptions::shown_only(&req.argv, req.cwd.clone(), FrontKind::Stream { details: false, to_stderr: false })
    };
    let consumers = relay.begin(RunSession::consumers(ws, graph, opts, options));
    let outcome = session.run_cycle(subset, signals).await?;
    consumers.finish(&outcome, false);
    Ok(outcome)
}

fn status_text(result: &TaskResult) -> String {
    match &result.status {
        crate::events::TaskStatus::Failed(why) => why.clone(),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn announce_servers(session: &Session<'_>, style: Style) {
    let servers = session.running_servers();
    if !servers.is_empty() {
        say(style, &format!("servers running: {}; watching for changes", servers.join(", ")));
    } else {
        say(style, "watching for changes");
    }
}

/// While the config is broken: wait for an edit to a config file (`None`)
/// or a signal (its exit code).
async fn wait_for_config(
    rx: &mut mpsc::UnboundedReceiver<Vec<PathBuf>>,
    signals: &mut Signals,
    window: DebounceWindow,
) -> Option<u8> {
    loop {
        let first = tokio::select! {
            first = rx.recv() => first?,
            kind = signals.recv() => return Some(kind.exit_code()),
        };
        let paths = gather(rx, first, window).await;
        let is_config = paths.iter().any(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                ["vx.toml", "package.json", "pnpm-workspace.yaml", "turbo.json", "turbo.jsonc"].contains(&n)
            }) && !p.components().any(|c| c.as_os_str() == "node_modules")
        });
        if is_config {
            return None;
        }
    }
}
