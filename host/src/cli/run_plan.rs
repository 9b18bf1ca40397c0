//! `vx run` up to its session: the workspace loaded, the selection
//! checked (a task picked when none was named), the graph planned and the
//! cache opened; then either the plan printed instead of run (`--graph`,
//! `--dry`, or nothing to run), or the session's options.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use super::choice::{Format, Ui};
use super::exec_args::Prepared;
use super::run::RunArgs;
use super::run_flags::Checked;
use crate::cache::{Cache, state_dir};
use crate::config::{Workspace, load_workspace};
use crate::error::{Error, Result};
use crate::graph::{Reason, ShardMark, TaskGraph, to_dot};
use crate::history::{Flakiness, History};
use crate::plan::{DryPlan, Planned, demands, plan_explained, plan_keys, planned_statuses, predict};
use crate::report::Step;
use crate::run::RunOptions;
use crate::session::{FrontKind, SessionOptions};

/// A planned run, not yet started.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub ws: Workspace,
    pub prepared: Prepared,
    pub graph: TaskGraph,
    /// With `--affected`: why each node was selected.
    reasons: Option<Vec<Vec<Reason>>>,
    /// With `--shard`: what each node is to the shard.
    shard: Option<Vec<ShardMark>>,
    pub cache: Cache,
    /// The arguments as typed, or with the picked task added.
    argv: Vec<String>,
    /// When loading and planning ended, for `--profile`.
    configured: Instant,
    planned: Instant,
}

impl Loaded {
    /// Loads the workspace and plans what `args` select.
    pub(crate) fn load(args: &RunArgs, cwd: &Path, argv: &[String]) -> Result<Loaded> {
        let mut prepared = args.exec.clone().prepare(cwd, "run")?;
        prepared.selection.shard = args.shard.as_deref().map(crate::graph::Shard::parse).transpose()?;
        let mut ws = load_workspace(cwd)?;
        crate::history::checkpoint_in_background(&state_dir(&ws).join("history.db"));
        ws.override_env_mode(prepared.opts.env_mode);
        crate::run::check_run_executor(&ws, prepared.opts.executor.as_deref())?;
        if args.frozen {
            crate::lock::check_frozen(&ws)?;
        }
        // No task named: pick one (or list them), and record the run as if it was typed.
        let mut argv = argv.to_vec();
        if prepared.selection.tasks.is_empty() {
            let task = super::pick::pick_task(&ws, &prepared.selection)?;
            argv = super::pick::with_task(&argv, &task);
            prepared.selection.tasks.push(task);
        }
        crate::plan::apply_pass_through(&mut ws, &prepared.selection.tasks, &prepared.selection.pass_through);
        let configured = Instant::now();
        let Planned { graph, reasons, shard } = plan_explained(&ws, &prepared.selection)?;
        let planned = Instant::now();
        let cache = prepared.open_cache(&ws)?;
        Ok(Loaded { ws, prepared, graph, reasons, shard, cache, argv, configured, planned })
    }

    /// `--graph`, `--dry`, or a selection with nothing to run: what is
    /// printed instead of a run, and its exit code.
    pub(crate) fn print_instead(&self, args: &RunArgs, cwd: &Path, turbo_dry: bool) -> Result<Option<u8>> {
        let (ws, graph, selection) = (&self.ws, &self.graph, &self.prepared.selection);
        if let Some(path) = &args.graph {
            print_graph(ws, graph, cwd, path)?;
        } else if let Some(format) = args.dry {
            let shard = self.shard.as_deref().zip(selection.shard.map(|s| s.count));
            let dry = Dry { reasons: self.reasons.as_deref(), shard, format, turbo: turbo_dry, verbose: args.verbose };
            print_dry(ws, graph, &self.cache, &self.prepared.opts, dry);
        } else if !graph.is_empty() {
            return Ok(None);
        } else if let Some(shard) = selection.shard {
            println!("nothing to run in shard {shard}: the other shards have every selected task");
        } else if !selection.filters.is_empty() {
            println!("nothing to run: the filters select no task");
        } else if let Some(rev) = &selection.affected {
            println!("nothing affected since {}", crate::git::base_label(ws, rev.as_deref()));
        } else {
            return Ok(None);
        }
        Ok(Some(0))
    }

    /// What the run's consumers are, from its flags; the reporter is
    /// opened here, so a bad one fails before anything runs.
    pub(crate) fn session_options(
        &self,
        args: &RunArgs,
        cwd: &Path,
        (started, origin): (SystemTime, Instant),
        checked: &Checked,
    ) -> Result<SessionOptions> {
        let report = match args.report.as_deref() {
            Some(name) => {
                Some((crate::plugin::Reporter::open(&self.ws, name)?, args.report_file.as_ref().map(|p| cwd.join(p))))
            }
            None => None,
        };
        let front = if args.verify.is_some() {
            // `--verify`'s report is read from the stream, never the UI's.
            FrontKind::Stream { details: args.summary, to_stderr: checked.verify_format == Some(Format::Json) }
        } else {
            FrontKind::Auto { asked: args.ui.map(|ui| ui == Ui::Tui), details: args.summary }
        };
        let own: Vec<Step> = vec![
            ("config", origin, self.configured),
            ("graph", self.configured, self.planned),
            ("setup", self.planned, Instant::now()),
        ];
        Ok(SessionOptions {
            argv: self.argv.clone(),
            cwd: cwd.to_path_buf(),
            tags: checked.tags.clone(),
            started,
            origin,
            front,
            history: true,
            plugins: !args.no_subscribers,
            live: true,
            summarize: args.summarize.clone(),
            profile: args.profile.clone().map(|given| (given, own)),
            report,
        })
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

/// What `--dry` prints besides the plan, and how.
struct Dry<'a> {
    reasons: Option<&'a [Vec<Reason>]>,
    shard: Option<(&'a [ShardMark], usize)>,
    format: Format,
    turbo: bool,
    verbose: bool,
}

/// `--dry[=FORMAT]`: the plan with keys, cache statuses, ETAs, how flaky
/// each task was lately and, with `--affected` and `--shard`, why each
/// task is there.
fn print_dry(ws: &Workspace, graph: &TaskGraph, cache: &Cache, opts: &RunOptions, dry: Dry<'_>) {
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
    let prediction = predict(graph, &etas, &demands(ws, graph), opts.budget());
    let plan = DryPlan {
        ws,
        graph,
        keys: &keys,
        statuses: &statuses,
        etas: &etas,
        flaky: &flaky,
        prediction,
        run_executor: opts.executor.as_deref(),
        budget: opts.budget(),
        reasons: dry.reasons,
        shard: dry.shard,
    };
    let text = match dry.format {
        Format::Text => plan.to_text(dry.verbose),
        Format::Json if dry.turbo => plan.to_turbo_json(),
        Format::Json => plan.to_json(),
    };
    print!("{text}");
}
