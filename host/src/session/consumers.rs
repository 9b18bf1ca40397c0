//! The consumers of one run, built from [`SessionOptions`] in the order
//! their dependencies need, and the bus that delivers to them.
//!
//! The order is this file's code, not a convention callers keep: the
//! front comes first (a task's lines are shown before anything else sees
//! them); history next, because the summary file, the profile, the report
//! and the live file read the invocation id it publishes when it records
//! `RunFinished` (the live file is removed once history has the run); the
//! subscriber plugins last, since they only queue events for threads of
//! their own.

use std::ffi::OsString;
use std::sync::{Arc, OnceLock};

use super::front::Front;
use super::options::SessionOptions;
use super::report_sink::ReportSink;
use crate::cache::state_dir;
use crate::config::Workspace;
use crate::error::Result;
use crate::events::{Bus, Subscriber};
use crate::graph::TaskGraph;
use crate::history::HistoryRecorder;
use crate::plugin::PluginSubscribers;
use crate::report::{GithubOutput, Profile, RunFile, RunInfo, RunPath};
use crate::run::RunOptions;

/// A run's consumers, and what is left to do with them once it is over
/// (`finish`).
#[derive(Debug)]
pub(crate) struct RunSession {
    pub(super) front: Option<Front>,
    pub(super) subscribers: Vec<Arc<dyn Subscriber>>,
    pub(super) summary_file: Option<Arc<RunFile>>,
    pub(super) profile: Option<Arc<Profile>>,
    pub(super) report: Option<Arc<ReportSink>>,
    pub(super) plugins: Option<Arc<PluginSubscribers>>,
    pub(super) cwd: std::path::PathBuf,
    pub(super) color: bool,
    /// History records the run: a summary printed after it says how to
    /// print a failed attempt's log.
    pub(super) log_hint: bool,
}

impl RunSession {
    /// The front and every consumer `o` asks for, for a run of `graph`.
    pub(crate) fn start(
        ws: &Workspace,
        graph: &TaskGraph,
        opts: &mut RunOptions,
        o: SessionOptions,
    ) -> Result<RunSession> {
        let front = Front::start(o.front, ws, graph, opts, &o.argv, o.history)?;
        let mut session = RunSession::consumers(ws, graph, opts, o);
        session.subscribers.insert(0, front.subscriber());
        session.front = Some(front);
        Ok(session)
    }

    /// The consumers `o` asks for, without a front (`vx watch` keeps one
    /// front for all its cycles).
    pub(crate) fn consumers(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions, o: SessionOptions) -> RunSession {
        let state = state_dir(ws);
        let info = run_info(ws, graph, opts, &o);
        let mut subscribers: Vec<Arc<dyn Subscriber>> = Vec::new();
        // History first: the consumers after it read the id it records.
        let invocation: Arc<OnceLock<i64>> = if o.history {
            let recorder = HistoryRecorder::new(&state.join("history.db"), &info).keeping(ws.history.keep);
            let id = recorder.recorded_id();
            subscribers.push(Arc::new(recorder));
            id
        } else {
            Arc::default()
        };
        if opts.github {
            subscribers.push(Arc::new(GithubOutput { argv: o.argv.clone() }));
        }
        // One read of `.vx/dashboard.json`: a run writes its live file only
        // while a dashboard is up to show it.
        if o.live && crate::dashboard::live_dashboard(&state).is_some() {
            let live = crate::dashboard::LiveFile::start(info.clone(), &crate::dashboard::live_dir(&state));
            subscribers.push(Arc::new(live));
        }
        // A bare `--summarize` / `--profile` is an empty path: the default file.
        let run_path = |given: &OsString, suffix| RunPath {
            given: (!given.is_empty()).then(|| o.cwd.join(given)),
            runs_dir: state.join("runs"),
            suffix,
            invocation: invocation.clone(),
            started: o.started,
        };
        let summary_file =
            o.summarize.as_ref().map(|given| Arc::new(RunFile::new(info.clone(), run_path(given, ".json"))));
        subscribers.extend(summary_file.clone().map(|s| s as Arc<dyn Subscriber>));
        let profile = o.profile.as_ref().map(|(given, own)| {
            let title = crate::units::command_line(&o.argv);
            Arc::new(Profile::new(run_path(given, ".trace.json"), o.origin, title, own.clone()))
        });
        subscribers.extend(profile.clone().map(|s| s as Arc<dyn Subscriber>));
        let report = o
            .report
            .map(|(reporter, file)| Arc::new(ReportSink::new(reporter, file, info.clone(), invocation.clone())));
        subscribers.extend(report.clone().map(|s| s as Arc<dyn Subscriber>));
        // Subscriber plugins watch from threads of their own
        // (plugin::subscriber): the run never waits on one, and nothing they
        // do changes its result.
        let plugins = o.plugins.then(|| PluginSubscribers::start(ws, &o.argv, &o.tags, o.started, o.origin)).flatten();
        subscribers.extend(plugins.clone().map(|s| s as Arc<dyn Subscriber>));
        let log_hint = o.history;
        RunSession {
            front: None,
            subscribers,
            summary_file,
            profile,
            report,
            plugins,
            cwd: o.cwd,
            color: opts.color,
            log_hint,
        }
    }

    /// The bus that delivers the run's events to its consumers, in order.
    pub(crate) fn bus(&self) -> Bus {
        Bus::new(self.subscribers.clone())
    }
}

/// What history, the summary document, the html report and the
/// dashboard's live view describe besides the results. HEAD is read from
/// git's files, so every run can afford it.
fn run_info(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions, o: &SessionOptions) -> RunInfo {
    let head = crate::git::read_head(&ws.root);
    RunInfo {
        args: o.argv.clone(),
        cwd: super::options::caller_dir(&o.cwd),
        tags: o.tags.clone(),
        env_mode: ws.env_mode.as_str(),
        git_commit: head.commit,
        branch: head.branch,
        started: o.started,
        origin: o.origin,
        tasks: crate::plan::planned_tasks(ws, graph, opts.executor.as_deref()).into(),
    }
}
