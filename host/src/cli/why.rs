//! `vx why TASK`: why a task's key differs from its last run's — which
//! input files, env names, dependency keys or command changed.

use std::path::Path;

use clap::Args;
use serde_json::json;

use super::choice::{Format, choice};
use crate::cache::{Cache, CacheMode, History, diff_manifests, state_dir};
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::graph::TaskId;
use crate::run::{Selection, plan, plan_keys};

/// Explain why a task would run again: what changed since its last run.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  vx why web#build\n  vx why build          (inside the web project)\n  vx why web#build --format json"
)]
pub struct WhyArgs {
    /// `project#task`, or a task of the project you are in.
    #[arg(value_name = "TASK", add = clap_complete::ArgValueCompleter::new(super::completions::complete_tasks))]
    pub task: String,

    /// `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
    pub format: Format,

    /// The local cache directory (default `[cache] dir`, else `.vx/cache`).
    #[arg(long, value_name = "PATH", env = "VX_CACHE_DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
}

pub fn cmd_why(args: WhyArgs, cwd: &Path) -> Result<u8> {
    let json = args.format == Format::Json;
    let ws = load_workspace(cwd)?;
    let id = match TaskId::parse(&args.task) {
        Some(id) => id,
        None => match ws.project_containing(cwd).filter(|&p| ws.projects[p].dir != ws.root) {
            Some(p) => TaskId::new(&ws.projects[p].name, &args.task),
            None => {
                return Err(Error::usage(format!("`{}` names no project", args.task))
                    .with_hint(format!("write it as PROJECT#{}, or run vx why inside the project", args.task)));
            }
        },
    };
    let selection = Selection { tasks: vec![id.to_string()], cwd: cwd.to_path_buf(), ..Selection::default() };
    let graph = plan(&ws, &selection)?;
    let cache = Cache::open(&ws, args.cache_dir.map(|d| cwd.join(d)), CacheMode::default(), false)?;
    let keys = plan_keys(&ws, &graph, &cache);
    cache.save_index();
    let root = graph.roots[0];
    let (key, manifest) =
        keys[root].clone().map_err(|why| Error::internal(format!("could not compute the key of {id}: {why}")))?;
    let history = History::open(&state_dir(&ws).join("history.db"))
        .map_err(|e| Error::internal(format!("could not read .vx/history.db: {e}")))?;
    let last = history
        .last_manifest(&id.to_string())
        .map_err(|e| Error::internal(format!("could not read .vx/history.db: {e}")))?;
    let stored = cache.store.contains(&key);

    let Some((last_key, last_manifest)) = last else {
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"task": id.to_string(), "key": key, "last_key": null, "changes": [], "cached": stored})
                )
                .expect("json")
            );
        } else {
            println!("{id}: no recorded run yet, so nothing to compare (key {})", &key.0[..16]);
        }
        return Ok(0);
    };
    let changes = diff_manifests(&last_manifest, &manifest);
    if json {
        let doc =
            json!({"task": id.to_string(), "key": key, "last_key": last_key, "changes": changes, "cached": stored});
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(0);
    }
    if last_key == key.0 {
        let state = if stored {
            "it will be a cache hit"
        } else {
            "but its entry is not in the cache (evicted, failed, or never cacheable), so it will run"
        };
        println!("{id}: key unchanged since its last run ({}); {state}", &key.0[..16]);
        return Ok(0);
    }
    println!("{id}: key changed since its last run ({} → {})", &last_key[..last_key.len().min(16)], &key.0[..16]);
    for c in &changes {
        println!("  {} {}: {}", c.component, c.kind, c.what);
    }
    Ok(0)
}
