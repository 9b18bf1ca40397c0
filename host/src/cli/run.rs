//! `vx run`: select, plan, and either print the plan (`--dry`, `--graph`)
//! or execute it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::args::parse_tag;
use super::exec_args::{ExecArgs, runtime};
use super::record::record_run;
use crate::cache::{History, state_dir};
use crate::config::load_workspace;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::to_dot;
use crate::report::{github_annotations, github_step_summary, markdown};
use crate::run::{DryPlan, execute, plan, plan_keys, planned_statuses, predict};

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
    #[command(flatten)]
    pub exec: ExecArgs,

    /// After the run, list the slowest tasks and the cache hit rate.
    #[arg(long)]
    pub summary: bool,

    /// Refuse to run when vx.lock does not match the configuration (for CI).
    #[arg(long)]
    pub frozen: bool,

    /// Print the plan instead of running it: `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "text")]
    pub dry: Option<String>,

    /// Print the task graph in Graphviz DOT (to FILE with `--graph=FILE`) instead of running it.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub graph: Option<PathBuf>,

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
    let tags = args.tag.iter().map(|t| parse_tag(t, command)).collect::<Result<Vec<_>>>()?;
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
    let mut prepared = args.exec.prepare(cwd, command)?;
    let ws = load_workspace(cwd)?;
    if args.frozen {
        crate::lock::check_frozen(&ws)?;
    }
    // No task named: pick one (or list them), and record the run as if it was typed.
    let picked_argv;
    let argv: &[String] = if prepared.selection.tasks.is_empty() {
        let task = super::pick::pick_task(&ws, &prepared.selection)?;
        picked_argv = super::pick::with_task(argv, &task);
        prepared.selection.tasks.push(task);
        &picked_argv
    } else {
        argv
    };
    let graph = plan(&ws, &prepared.selection)?;
    let cache = prepared.open_cache(&ws)?;
    let concurrency = prepared.opts.concurrency;

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
        let statuses = planned_statuses(&ws, &graph, &cache, &keys);
        let history = History::open(&state_dir(&ws).join("history.db")).ok();
        let etas: Vec<Option<std::time::Duration>> = (0..graph.len())
            .map(|n| {
                if statuses[n].starts_with("hit-") {
                    return Some(std::time::Duration::ZERO);
                }
                history.as_ref().and_then(|h| h.p50(&graph.nodes[n].id.to_string()))
            })
            .collect();
        let prediction = predict(&graph, &etas, concurrency);
        let dry = DryPlan {
            ws: &ws,
            graph: &graph,
            cache: &cache,
            keys: &keys,
            statuses: &statuses,
            etas: &etas,
            prediction,
        };
        let text = if json { dry.to_json() } else { dry.to_text() };
        print!("{text}");
        return Ok(0);
    }

    let reporter = args.report.as_deref().map(|name| crate::plugin::Reporter::open(&ws, name)).transpose()?;
    let outcome = runtime()?.block_on(execute(&ws, &graph, &prepared.opts, Some(Arc::new(cache))))?;
    let code = match outcome.interrupted {
        Some(kind) => kind.exit_code(),
        None if outcome.summary.failed() > 0 => ErrorKind::TaskFailed.exit_code(),
        None => 0,
    };
    record_run(&ws, argv, cwd, &tags, started, code, &outcome);
    if args.summary {
        print!("{}", outcome.summary.render_details());
    }
    if prepared.opts.github {
        print!("{}", github_annotations(&outcome.summary));
        if let Err(e) = github_step_summary(&markdown::render(&outcome.summary, argv)) {
            eprintln!("vx: warning: could not append to $GITHUB_STEP_SUMMARY: {e}");
        }
    }
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
