//! `vx run`: select, plan, and either print the plan (`--dry`, `--graph`)
//! or execute it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;

use super::args::parse_tag;
use super::choice::{Format, Ui, Verify, choice};
use super::exec_args::{ExecArgs, runtime};
use crate::cache::{Cache, Flakiness, History, state_dir};
use crate::config::{Workspace, load_workspace};
use crate::error::{Error, Result};
use crate::events::{Bus, Subscriber};
use crate::graph::{TaskGraph, to_dot};
use crate::report::{GithubOutput, Profile, RunFile, RunInfo, RunPath};
use crate::run::{DryPlan, HistoryRecorder, RunOptions, execute, plan, plan_keys, planned_statuses, predict};

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
pub enum ReportFormat {
    Text,
    Json,
    Turbo,
}

impl super::choice::Choice for ReportFormat {
    const WANTS: &'static str = "text, json or turbo";
}

pub fn cmd_run(args: RunArgs, cwd: &Path, argv: &[String]) -> Result<u8> {
    let started = std::time::SystemTime::now();
    let origin = Instant::now();
    let command = "run";
    let tags = args.tag.iter().map(|t| parse_tag(t, command)).collect::<Result<Vec<_>>>()?;
    if args.verbose && args.dry.is_none() {
        return Err(Error::usage("--verbose adds each task's detail to the plan of --dry")
            .with_hint("add --dry: `vx run build --dry --verbose`"));
    }
    if args.verify.is_some() && (args.dry.is_some() || args.graph.is_some()) {
        return Err(
            Error::usage("--verify runs the tasks, and --dry and --graph run nothing").with_hint("drop one of them")
        );
    }
    if (args.summarize.is_some() || args.profile.is_some()) && (args.dry.is_some() || args.graph.is_some()) {
        return Err(Error::usage("--summarize and --profile describe a run, and --dry and --graph run nothing")
            .with_hint("drop one of them"));
    }
    if args.framework_inference == Some(true) {
        return Err(Error::usage("vx infers no framework: a task's key holds the variables its `env` names")
            .with_hint("list them in the task's `env` (`NEXT_PUBLIC_*`), or drop --framework-inference"));
    }
    let turbo_dry = args.format == Some(ReportFormat::Turbo);
    if turbo_dry && args.dry != Some(Format::Json) {
        return Err(Error::usage("--format turbo is the schema of --dry=json")
            .with_hint("run `vx run TASK --dry=json --format turbo`"));
    }
    if !turbo_dry && args.format.is_some() && args.verify != Some(Verify::Inputs) {
        return Err(Error::usage("--format sets the report of --verify=inputs")
            .with_hint("add --verify=inputs, or drop --format"));
    }
    // The report format `--verify=inputs` takes.
    let verify_format = match args.format {
        Some(ReportFormat::Json) => Some(Format::Json),
        Some(ReportFormat::Text) => Some(Format::Text),
        _ => None,
    };
    let mut prepared = args.exec.prepare(cwd, command)?;
    prepared.selection.shard = args.shard.as_deref().map(crate::graph::Shard::parse).transpose()?;
    let mut ws = load_workspace(cwd)?;
    crate::cache::checkpoint_in_background(&state_dir(&ws).join("history.db"));
    ws.override_env_mode(prepared.opts.env_mode);
    crate::run::check_run_executor(&ws, prepared.opts.executor.as_deref())?;
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
    crate::run::apply_pass_through(&mut ws, &prepared.selection.tasks, &prepared.selection.pass_through);
    let configured = Instant::now();
    let graph = plan(&ws, &prepared.selection)?;
    let planned = Instant::now();
    let cache = prepared.open_cache(&ws)?;
    if let Some(path) = &args.graph {
        print_graph(&ws, &graph, cwd, path)?;
        return Ok(0);
    }
    if let Some(format) = args.dry {
        print_dry(&ws, &graph, &cache, &prepared.opts, (format, turbo_dry), args.verbose);
        return Ok(0);
    }
    if graph.is_empty()
        && let Some(shard) = prepared.selection.shard
    {
        println!("nothing to run in shard {shard}: the other shards have every selected task");
        return Ok(0);
    }
    if graph.is_empty() && !prepared.selection.filters.is_empty() {
        println!("nothing to run: the filters select no task");
        return Ok(0);
    }
    if graph.is_empty()
        && let Some(rev) = &prepared.selection.affected
    {
        println!("nothing affected since {}", crate::graph::base_label(&ws, rev.as_deref()));
        return Ok(0);
    }
    let reporter = args.report.as_deref().map(|name| crate::plugin::Reporter::open(&ws, name)).transpose()?;
    let mut terminal = crate::run::terminal(&ws, &graph, &prepared.opts);
    if verify_format == Some(Format::Json) {
        terminal = terminal.to_stderr(); // stdout is for `--verify`'s report alone
    }
    let mut subscribers: Vec<Arc<dyn Subscriber>> = vec![Arc::new(terminal.with_details(args.summary))];
    let caller = super::last::caller_dir(cwd);
    // What history, the summary document, the html report and the
    // dashboard's live view describe besides the results. HEAD is read
    // from git's files, so every run can afford it.
    let head = crate::graph::read_head(&ws.root);
    let info = RunInfo {
        args: argv.to_vec(),
        cwd: caller.clone(),
        tags: tags.clone(),
        env_mode: ws.env_mode.as_str(),
        git_commit: head.commit,
        branch: head.branch,
        started,
        origin,
        tasks: crate::run::planned_tasks(&ws, &graph, prepared.opts.executor.as_deref()).into(),
    };
    let recorder = HistoryRecorder::new(&state_dir(&ws).join("history.db"), &info);
    // A bare `--summarize` / `--profile` is an empty path: the default file.
    let run_path = |given: &std::ffi::OsString, suffix| RunPath {
        given: (!given.is_empty()).then(|| cwd.join(given)),
        runs_dir: state_dir(&ws).join("runs"),
        suffix,
        invocation: recorder.recorded_id(),
        started,
    };
    let invocation = recorder.recorded_id();
    let summary_file =
        args.summarize.as_ref().map(|given| Arc::new(RunFile::new(info.clone(), run_path(given, ".json"))));
    let profile = args.profile.as_ref().map(|given| {
        let own =
            vec![("config", origin, configured), ("graph", configured, planned), ("setup", planned, Instant::now())];
        Arc::new(Profile::new(run_path(given, ".trace.json"), origin, crate::run::command_line(argv), own))
    });
    subscribers.push(Arc::new(recorder));
    if prepared.opts.github {
        subscribers.push(Arc::new(GithubOutput { argv: argv.to_vec() }));
    }
    // One read of `.vx/dashboard.json`: a run writes its live file only
    // while a dashboard is up to show it.
    if crate::dashboard::live_dashboard(&state_dir(&ws)).is_some() {
        let live = crate::dashboard::LiveFile::start(info.clone(), &crate::dashboard::live_dir(&state_dir(&ws)));
        subscribers.push(Arc::new(live));
    }
    subscribers.extend(summary_file.clone().map(|s| s as Arc<dyn Subscriber>));
    subscribers.extend(profile.clone().map(|s| s as Arc<dyn Subscriber>));
    // Subscriber plugins watch from threads of their own (plugin::subscriber):
    // the run never waits on one, and nothing they do changes its result.
    let plugin_subscribers = (!args.no_subscribers)
        .then(|| crate::plugin::PluginSubscribers::start(&ws, argv, &tags, started, origin))
        .flatten();
    subscribers.extend(plugin_subscribers.clone().map(|s| s as Arc<dyn Subscriber>));
    let tui = start_tui(args.ui, args.verify.is_some(), &ws, &graph, &mut prepared.opts, argv)?;
    if let Some(tui) = &tui {
        subscribers[0] = tui.clone();
    }
    let outcome =
        runtime()?.block_on(execute(&ws, &graph, &prepared.opts, Some(Arc::new(cache)), Bus::new(subscribers)))?;
    if let Some(tui) = tui {
        // The screen is the user's again: the summary the stream prints.
        tui.close();
        let style = crate::report::Style { enabled: prepared.opts.color };
        print!("{}", outcome.summary.render(style));
        if args.summary {
            print!("{}", outcome.summary.render_details());
        }
    }
    if let Some(plugins) = plugin_subscribers {
        plugins.finish();
    }
    let mut code = outcome.exit_code();
    if let Some(file) = summary_file {
        code = code.max(say_written("summarize", &file.written, cwd));
    }
    if let Some(file) = profile {
        code = code.max(say_written("profile", &file.written, cwd));
    }
    if let Some(kind) = args.verify
        && code == 0
    {
        return super::verify::after_run(kind, &ws, &graph, &prepared.opts, verify_format);
    }
    if let Some(reporter) = reporter {
        let file = args.report_file.map(|p| cwd.join(p));
        let id = invocation.get().copied();
        if let Err(e) = reporter.write(&outcome.summary, &info, id, outcome.exit_code(), file.as_deref()) {
            // The run is over: its own failure decides the exit code first.
            eprintln!("vx: error: {e}");
            return Ok(if code == 0 { e.exit_code() } else { code });
        }
    }
    Ok(code)
}

/// The terminal UI, when the run shows one (`tui::wanted`); it takes the
/// place of the stream output on the bus, and its requests reach the
/// engine through `opts.controls`.
fn start_tui(
    ui: Option<Ui>,
    verify: bool,
    ws: &Workspace,
    graph: &TaskGraph,
    opts: &mut RunOptions,
    argv: &[String],
) -> Result<Option<Arc<crate::tui::Tui>>> {
    if verify {
        return Ok(None); // its report is read from the stream
    }
    let (wanted, why_not) = crate::tui::wanted(ui.map(|ui| ui == Ui::Tui), ws, graph);
    if let Some(why) = why_not {
        eprintln!("vx: {why}");
    }
    if !wanted {
        return Ok(None);
    }
    let title = crate::run::command_line(argv);
    let (tui, controls) = crate::tui::Tui::start(ws, graph, opts.concurrency, title)
        .map_err(|e| Error::io("take over the terminal for --ui=tui", e))?;
    opts.controls = Some(controls);
    Ok(Some(Arc::new(tui)))
}

/// Says where `--summarize` or `--profile` wrote its file; a file that
/// could not be written is an error line and exit code 1 (the run's own
/// failure, if any, still decides first).
fn say_written(what: &str, written: &crate::report::Written, cwd: &Path) -> u8 {
    match written.wait() {
        Some(Ok(path)) => {
            let shown = path.strip_prefix(cwd).unwrap_or(&path);
            eprintln!("vx: --{what} wrote {}", shown.display());
            0
        }
        Some(Err(why)) => {
            eprintln!("vx: error: --{what}: {why}; give a path vx can write: --{what}=FILE");
            1
        }
        None => 0,
    }
}

/// `--graph[=FILE]`: the task graph in Graphviz DOT.
fn print_graph(ws: &Workspace, graph: &TaskGraph, cwd: &Path, path: &Path) -> Result<()> {
    let dot = to_dot(ws, graph);
    if path.as_os_str() == "-" {
        print!("{dot}");
        return Ok(());
    }
    std::fs::write(cwd.join(path), dot).map_err(|e| Error::io(format_args!("write {}", path.display()), e))
}

/// `--dry[=FORMAT]`: the plan with keys, cache statuses, ETAs and how
/// flaky each task was lately.
fn print_dry(
    ws: &Workspace,
    graph: &TaskGraph,
    cache: &Cache,
    opts: &RunOptions,
    (format, turbo): (Format, bool),
    verbose: bool,
) {
    // The history is opened while the keys are computed: neither waits
    // for the other.
    let history_path = state_dir(ws).join("history.db");
    let history = std::thread::spawn(move || History::open(&history_path).ok());
    let keys = plan_keys(ws, graph, cache, opts.executor.as_deref());
    cache.save_index();
    let statuses = planned_statuses(ws, graph, cache, &keys);
    let history = history.join().ok().flatten();
    let etas: Vec<Option<Duration>> = (0..graph.len())
        .map(|n| {
            if statuses[n].is_hit() {
                return Some(Duration::ZERO);
            }
            history.as_ref().and_then(|h| h.p50(&graph.nodes[n].id.to_string()))
        })
        .collect();
    let flaky: Vec<Flakiness> = (0..graph.len())
        .map(|n| history.as_ref().map(|h| h.flakiness(&graph.nodes[n].id.to_string())).unwrap_or_default())
        .collect();
    let prediction = predict(graph, &etas, opts.concurrency);
    let dry = DryPlan {
        ws,
        graph,
        cache,
        keys: &keys,
        statuses: &statuses,
        etas: &etas,
        flaky: &flaky,
        prediction,
        run_executor: opts.executor.as_deref(),
        budget: opts.budget(),
    };
    let text = match format {
        Format::Text => dry.to_text(verbose),
        Format::Json if turbo => dry.to_turbo_json(),
        Format::Json => dry.to_json(),
    };
    print!("{text}");
}
