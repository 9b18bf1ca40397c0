//! `vx why TASK`: why a task's key differs from its last run's — which
//! input files, env names, dependency keys, command, `package.json` or
//! locked dependencies (`lodash 4.17.20 → 4.17.21`) changed.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::choice::{Format, choice};
use crate::cache::{Cache, CacheKey, CacheMode, Change, diff_explained, state_dir};
use crate::config::{EnvMode, Workspace, load_workspace};
use crate::error::{Error, Result};
use crate::graph::TaskId;
use crate::history::{History, HistoryError};
use crate::plan::{Selection, plan, plan_keys};

/// Explain why a task would run again: what changed since its last run.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx why web#build\n  vx why build          (inside the web project)\n  vx why web#build --format json\n  vx why web#build --env-mode loose   (as `vx run --env-mode loose` would key it)"
)]
pub(crate) struct WhyArgs {
    /// `project#task`, or a task of the project you are in.
    #[arg(value_name = "TASK", add = clap_complete::ArgValueCompleter::new(super::completions::complete_tasks))]
    pub task: String,

    /// `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
    pub format: Format,

    /// The local cache directory (default `[cache] dir`, else `.vx/cache`).
    #[arg(long, value_name = "PATH", env = "VX_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Key the task as `vx run --executor NAME` would (the executor is part
    /// of the key).
    #[arg(long, value_name = "NAME")]
    pub executor: Option<String>,

    /// Key the task as `vx run --env-mode MODE` would (`strict` or `loose`).
    #[arg(long, value_name = "MODE", value_parser = choice::<EnvMode>())]
    pub env_mode: Option<EnvMode>,
}

pub(crate) fn cmd_why(args: WhyArgs, cwd: &Path) -> Result<u8> {
    let mut ws = load_workspace(cwd)?;
    ws.override_env_mode(args.env_mode);
    let id = task_id(&ws, &args.task, cwd)?;
    crate::run::check_run_executor(&ws, args.executor.as_deref())?;
    let why = explain(&ws, &id, args.cache_dir.map(|d| cwd.join(d)), args.executor.as_deref(), cwd)?;
    match args.format {
        Format::Json => print_json(&id, &why),
        Format::Text => print_text(&id, &why),
    }
    Ok(0)
}

/// `project#task` as given, or a task of the project `cwd` is in.
fn task_id(ws: &Workspace, task: &str, cwd: &Path) -> Result<TaskId> {
    if let Some(id) = TaskId::parse(task) {
        return Ok(id);
    }
    match ws.project_containing(cwd).filter(|&p| ws.projects[p].dir != ws.root) {
        Some(p) => Ok(TaskId::new(&ws.projects[p].name, task)),
        None => Err(Error::usage(format!("`{task}` names no project"))
            .with_hint(format!("write it as PROJECT#{task}, or run vx why inside the project"))),
    }
}

/// The task's key now, against the one its last recorded run had.
struct Explanation {
    key: CacheKey,
    /// Whether the cache holds an entry for the key now.
    stored: bool,
    /// The last run's key, when there was one.
    last_key: Option<String>,
    changes: Vec<Change>,
}

fn explain(
    ws: &Workspace,
    id: &TaskId,
    cache_dir: Option<PathBuf>,
    executor: Option<&str>,
    cwd: &Path,
) -> Result<Explanation> {
    let selection = Selection { tasks: vec![id.to_string()], cwd: cwd.to_path_buf(), ..Selection::default() };
    let graph = plan(ws, &selection)?;
    let cache = Cache::open(ws, cache_dir, CacheMode::default(), false, crate::backends::remote(ws))?;
    let keys = plan_keys(ws, &graph, &cache, executor);
    cache.save_index();
    let root = graph.roots[0];
    let (key, manifest) =
        keys[root].clone().map_err(|why| Error::internal(format!("could not compute the key of {id}: {why}")))?;
    let unreadable = |e: HistoryError| Error::internal(format!("could not read .vx/history.db: {e}"));
    let history = History::open(&state_dir(ws).join("history.db")).map_err(unreadable)?;
    let last = history.last_manifest(&id.to_string()).map_err(unreadable)?;
    let stored = cache.store.contains(&key);
    let (last_key, changes) = match last {
        Some((last_key, last_manifest)) => (Some(last_key), diff_explained(&last_manifest, &manifest, &state_dir(ws))),
        None => (None, Vec::new()),
    };
    Ok(Explanation { key, stored, last_key, changes })
}

fn print_json(id: &TaskId, why: &Explanation) {
    let doc = json!({
        "task": id.to_string(),
        "key": why.key,
        "last_key": why.last_key,
        "changes": why.changes,
        "cached": why.stored,
    });
    println!("{}", serde_json::to_string_pretty(&doc).expect("a JSON value serializes"));
}

fn print_text(id: &TaskId, why: &Explanation) {
    let key = &why.key.0[..why.key.0.len().min(16)];
    let Some(last_key) = &why.last_key else {
        println!("{id}: no recorded run yet, so nothing to compare (key {key})");
        return;
    };
    if *last_key == why.key.0 {
        let state = if why.stored {
            "it will be a cache hit"
        } else {
            "but its entry is not in the cache (evicted, failed, or never cacheable), so it will run"
        };
        println!("{id}: key unchanged since its last run ({key}); {state}");
        return;
    }
    println!("{id}: key changed since its last run ({} → {key})", &last_key[..last_key.len().min(16)]);
    for c in &why.changes {
        println!("  {} {}: {}", c.component, c.kind, c.what);
    }
}
