//! `vx run`: flags, then the workspace and its plan (`run_plan`), then
//! either the plan printed (`--dry`, `--graph`) or a run session that
//! executes it (`crate::session`), then the exit code.
//!
//! | file | owns |
//! |------|------|
//! | `run` | the flags and `cmd_run` |
//! | `run_flags` | flag combinations refused before any work |
//! | `run_plan` | loading, planning, `--dry` and `--graph`, the session's options |

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use clap::Args;

use super::choice::{Format, Ui, Verify, choice};
use super::exec_args::{ExecArgs, runtime};
use super::run_plan::Loaded;
use crate::error::Result;
use crate::run::execute;
use crate::session::RunSession;

const RUN_HELP: &str = "Examples:
  vx run build                       build every project, dependencies first
  vx run web#build                   one task (its dependencies still run first)
  vx run build test --concurrency 50%
  vx run build --filter web...       web and everything it depends on
  vx run test --filter ...ui         ui and everything that depends on it
  vx run test --affected=origin/main projects changed since origin/main, and dependents
  vx run test --shard 2/4            the second of four balanced parts (CI fan-out)
  vx run build --dry=json            the plan as JSON, nothing runs";

/// Run tasks in dependency order.
#[derive(Debug, Args)]
#[command(after_help = RUN_HELP)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub exec: ExecArgs,

    /// After the run, list the slowest tasks and the cache hit rate.
    #[arg(long)]
    pub summary: bool,

    /// Refuse to run when vx.lock does not match the configuration (for CI).
    #[arg(long)]
    pub frozen: bool,

    /// Print the plan instead of running it: `text` (default) or `json`.
    #[arg(
        long,
        value_name = "FORMAT",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "text",
        value_parser = choice::<Format>()
    )]
    pub dry: Option<Format>,

    /// With `--dry=text`: each task's detail (command, dependencies,
    /// inputs, outputs, key, history) under its line.
    #[arg(long)]
    pub verbose: bool,

    /// Print the task graph in Graphviz DOT (to FILE with `--graph=FILE`) instead of running it.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub graph: Option<PathBuf>,

    /// Label this invocation (KEY=VALUE, repeatable), kept in history.
    #[arg(long, value_name = "KEY=VALUE")]
    pub tag: Vec<String>,

    /// Render the run with a reporter: `markdown` or `html` (built in), or
    /// a reporter plugin configured in `[plugins.NAME]`.
    #[arg(long, value_name = "NAME")]
    pub report: Option<String>,

    /// Write the report to PATH instead of stdout.
    #[arg(long, value_name = "PATH", requires = "report")]
    pub report_file: Option<PathBuf>,

    /// Do not send this run's events to the workspace's subscriber plugins
    /// (an OpenTelemetry exporter, say).
    #[arg(long)]
    pub no_subscribers: bool,

    /// After the run: `determinism` runs the requested tasks twice more,
    /// uncached, and reports the outputs that differ; `inputs` runs them
    /// traced and reports what they touched outside their declarations.
    /// Exit 1 when anything is found.
    #[arg(long, value_name = "KIND", require_equals = true, value_parser = choice::<Verify>())]
    pub verify: Option<Verify>,

    /// Write the run as JSON: every task's status, cache, times, CPU and
    /// memory (to `.vx/runs/<id>.json`, or FILE); docs/schema/run-summary.v1.json.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        value_parser = clap::builder::OsStringValueParser::new()
    )]
    pub summarize: Option<std::ffi::OsString>,

    /// Write a Chrome trace of the run, one track per slot (to
    /// `.vx/runs/<id>.trace.json`, or FILE), for Perfetto or chrome://tracing.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        value_parser = clap::builder::OsStringValueParser::new()
    )]
    pub profile: Option<std::ffi::OsString>,

    /// `tui`: a task list, the selected task's log and keys (the default
    /// on a terminal when a selected task is persistent); `stream`:
    /// prefixed lines as tasks write them.
    #[arg(long, value_name = "KIND", value_parser = choice::<Ui>())]
    pub ui: Option<Ui>,

    /// Run one of N balanced parts of the selected tasks, for CI fan-out:
    /// `2/4` is the second of four. A part also runs what its tasks depend
    /// on, restored from the cache when another part stored it.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,

    /// Turborepo's flag, taken so its command lines work: vx infers no
    /// framework (`false` is what it does anyway); `true` is refused with
    /// what to write instead.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", hide = true)]
    pub framework_inference: Option<bool>,

    /// With `--verify=inputs`: `text` (default) or `json`. With
    /// `--dry=json`: `turbo` prints the plan in Turborepo's `--dry=json`
    /// schema.
    #[arg(long, value_name = "FORMAT", value_parser = choice::<ReportFormat>())]
    pub format: Option<ReportFormat>,
}

/// `--format`: a `--verify=inputs` report's, or `--dry=json`'s schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ReportFormat {
    Text,
    Json,
    Turbo,
}

impl super::choice::Choice for ReportFormat {
    const WANTS: &'static str = "text, json or turbo";
}

pub(crate) fn cmd_run(args: RunArgs, cwd: &Path, argv: &[String]) -> Result<u8> {
    let clocks = (SystemTime::now(), Instant::now());
    let checked = args.check()?;
    let mut run = Loaded::load(&args, cwd, argv)?;
    if let Some(code) = run.print_instead(&args, cwd, checked.turbo_dry)? {
        return Ok(code);
    }
    let options = run.session_options(&args, cwd, clocks, &checked)?;
    let session = RunSession::start(&run.ws, &run.graph, &mut run.prepared.opts, options)?;
    let cache = Some(Arc::new(run.cache));
    let outcome = runtime()?.block_on(execute(&run.ws, &run.graph, &run.prepared.opts, cache, session.bus()))?;
    let code = session.finish(&outcome, args.summary);
    if let Some(kind) = args.verify
        && code == 0
    {
        return super::verify::after_run(kind, &run.ws, &run.graph, &run.prepared.opts, checked.verify_format);
    }
    Ok(session.write_report(code))
}
