//! `vx run`: select, plan, and either print the plan (`--dry`, `--graph`)
//! or execute it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::args::{parse_concurrency, parse_continue, parse_log_order, parse_output_logs, parse_tag};
use super::record::record_run;
use crate::cache::{Cache, CacheMode, History, state_dir};
use crate::config::load_workspace;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Filter, to_dot};
use crate::report::color_enabled;
use crate::run::{DryPlan, RunOptions, Selection, execute, plan, plan_keys, planned_status, predict};

const RUN_HELP: &str = "Examples:
  vx run build                       build every project, dependencies first
  vx run web#build                   one task (its dependencies still run first)
  vx run build test --concurrency 50%
  vx run build --filter web...       web and everything it depends on
  vx run test --filter ...ui         ui and everything that depends on it
  vx run test --affected=origin/main projects changed since origin/main, and dependents
  vx run build --dry=json            the plan as JSON, nothing runs";

/// Run tasks in dependency order.
#[derive(Debug, Args)]
#[command(after_help = RUN_HELP)]
pub struct RunArgs {
    /// Tasks to run: `build` (in every selected project) or `web#build`.
    #[arg(value_name = "TASK")]
    pub tasks: Vec<String>,

    /// Select projects: `name`, `@org/*`, `./apps/*`, `name...` (with its
    /// dependencies), `...name` (with its dependents), `[REV]` (changed since
    /// REV), `!name` (exclude). Repeatable; the union is taken.
    #[arg(long, short = 'F', value_name = "FILTER")]
    pub filter: Vec<String>,

    /// Only projects changed against REV (default: the merge base with main,
    /// else master), including uncommitted and untracked files, plus their dependents.
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub affected: Option<String>,

    /// Every project, even when run inside a project directory.
    #[arg(long)]
    pub all: bool,

    /// Tasks at once: a positive integer or a share of the cores (`50%`).
    /// Default: the number of cores.
    #[arg(long, value_name = "N|P%")]
    pub concurrency: Option<String>,

    /// After a failure: `never` (default: stop starting tasks), `dependents-ok`
    /// (keep running what does not depend on the failure), `always` (run everything;
    /// the bare flag means this).
    #[arg(long = "continue", value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "always")]
    pub continue_mode: Option<String>,

    /// Ignore cached results (results are still written).
    #[arg(long)]
    pub force: bool,

    /// Cache access per tier: `local:rw,remote:r`, `local:r`, or `off`.
    #[arg(long, value_name = "SPEC")]
    pub cache: Option<String>,

    /// The local cache directory (default `[cache] dir`, else `.vx/cache`).
    #[arg(long, value_name = "PATH", env = "VX_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Stop any task running longer than DUR (`90s`, `10m`), unless it sets its own `timeout`.
    #[arg(long, value_name = "DUR")]
    pub timeout: Option<String>,

    /// Print the plan instead of running it: `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "text")]
    pub dry: Option<String>,

    /// Print the task graph in Graphviz DOT (to FILE with `--graph=FILE`) instead of running it.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub graph: Option<PathBuf>,

    /// Which logs to show: full, new-only, errors-only, hash-only, none.
    #[arg(long, value_name = "MODE", default_value = "full")]
    pub output_logs: String,

    /// `stream` lines as they come (default) or `grouped` per task when it ends.
    #[arg(long, value_name = "ORDER", default_value = "stream")]
    pub log_order: String,

    /// Label this invocation (KEY=VALUE, repeatable), kept in history.
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,

    /// Render the run with a reporter: `markdown` (built in) or a reporter
    /// plugin configured in `[plugins.NAME]`.
    #[arg(long, value_name = "NAME")]
    pub report: Option<String>,

    /// Write the report to PATH instead of stdout.
    #[arg(long, value_name = "PATH", requires = "report")]
    pub report_file: Option<PathBuf>,
}

pub fn cmd_run(args: RunArgs, cwd: &Path, argv: &[String]) -> Result<u8> {
    let started = std::time::SystemTime::now();
    let command = "run";
    let concurrency = match &args.concurrency {
        Some(c) => parse_concurrency(c, command)?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let continue_mode = parse_continue(args.continue_mode.as_deref(), command)?;
    let output_logs = parse_output_logs(&args.output_logs, command)?;
    let log_order = parse_log_order(&args.log_order, command)?;
    let tags = args.tag.iter().map(|t| parse_tag(t, command)).collect::<Result<Vec<_>>>()?;
    let timeout = args
        .timeout
        .as_deref()
        .map(|t| {
            crate::config::duration::parse_duration(t)
                .map_err(|m| Error::usage(format!("--timeout: {m}")).with_hint("see `vx run --help`"))
        })
        .transpose()?;
    let dry = match args.dry.as_deref() {
        None => None,
        Some("text") => Some(false),
        Some("json") => Some(true),
        Some(other) => {
            return Err(
                Error::usage(format!("--dry expects text or json, got `{other}`")).with_hint("see `vx run --help`")
            );
        }
    };
    let filters = args.filter.iter().map(|f| Filter::parse(f)).collect::<Result<Vec<_>>>()?;
    let cache_mode = args.cache.as_deref().map(CacheMode::parse).transpose()?.unwrap_or_default();

    let ws = load_workspace(cwd)?;
    let selection = Selection {
        tasks: args.tasks,
        filters,
        affected: args.affected.map(|a| if a.is_empty() { None } else { Some(a) }),
        all: args.all,
        cwd: cwd.to_path_buf(),
    };
    let graph = plan(&ws, &selection)?;
    let cache = Cache::open(&ws, args.cache_dir.map(|d| cwd.join(d)), cache_mode, args.force)?;

    if let Some(path) = &args.graph {
        let dot = to_dot(&graph);
        if path.as_os_str() == "-" {
            print!("{dot}");
        } else {
            std::fs::write(cwd.join(path), dot).map_err(|e| Error::io(format_args!("write {}", path.display()), e))?;
        }
        return Ok(0);
    }
    if let Some(json) = dry {
        let keys = plan_keys(&ws, &graph, &cache);
        cache.save_index();
        let history = History::open(&state_dir(&ws).join("history.db")).ok();
        let etas: Vec<Option<std::time::Duration>> = (0..graph.len())
            .map(|n| {
                let task = &ws.projects[graph.nodes[n].project].tasks[&graph.nodes[n].id.task];
                if planned_status(&cache, task.cache, &keys[n]) == "hit-local" {
                    return Some(std::time::Duration::ZERO);
                }
                history.as_ref().and_then(|h| h.p50(&graph.nodes[n].id.to_string()))
            })
            .collect();
        let prediction = predict(&graph, &etas, concurrency);
        let dry = DryPlan { ws: &ws, graph: &graph, cache: &cache, keys: &keys, etas: &etas, prediction };
        let text = if json { dry.to_json() } else { dry.to_text() };
        print!("{text}");
        return Ok(0);
    }

    let reporter = args.report.as_deref().map(|name| super::report::Reporter::open(&ws, name)).transpose()?;
    let opts = RunOptions { concurrency, continue_mode, output_logs, log_order, timeout, color: color_enabled() };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(cores * 2)
        .build()
        .map_err(|e| Error::io("start the async runtime", e))?;
    let outcome = runtime.block_on(execute(&ws, &graph, &opts, Some(Arc::new(cache))))?;
    let code = match outcome.interrupted {
        Some(kind) => kind.exit_code(),
        None if outcome.summary.failed() > 0 => ErrorKind::TaskFailed.exit_code(),
        None => 0,
    };
    record_run(&ws, argv, cwd, &tags, started, code, &outcome);
    if let Some(reporter) = reporter {
        let file = args.report_file.map(|p| cwd.join(p));
        if let Err(e) = reporter.write(&outcome.summary, argv, started, &tags, file.as_deref()) {
            // The run is over: its own failure decides the exit code first.
            eprintln!("vx: error: {e}");
            return Ok(if code == 0 { e.exit_code() } else { code });
        }
    }
    Ok(code)
}
