//! The front a run is shown on: the stream of prefixed lines (colours,
//! `--output-logs`, `--log-order`, GitHub groups and, on an interactive
//! terminal, the status line with ETAs from history), or the terminal UI,
//! which takes the stream's place and asks the engine for restarts and
//! input through `RunOptions::controls`.

use std::io::IsTerminal;
use std::sync::Arc;

use super::options::FrontKind;
use crate::config::Workspace;
use crate::error::{Error, Result};
use crate::events::Subscriber;
use crate::graph::TaskGraph;
use crate::report::{StatusLine, Style, Terminal};
use crate::run::RunOptions;
use crate::tui::Tui;

/// The front of one run.
#[derive(Debug, Clone)]
pub(crate) enum Front {
    Stream(Arc<Terminal>),
    Tui(Arc<Tui>),
}

impl Front {
    /// The front `kind` asks for. Starting the terminal UI hands its
    /// controls to `opts`, so the engine hears its requests. `log_hint`:
    /// history records the run, so the summary says how to print a failed
    /// attempt's log again.
    pub(crate) fn start(
        kind: FrontKind,
        ws: &Workspace,
        graph: &TaskGraph,
        opts: &mut RunOptions,
        argv: &[String],
        log_hint: bool,
    ) -> Result<Front> {
        let (details, to_stderr) = match kind {
            FrontKind::Stream { details, to_stderr } => (details, to_stderr),
            FrontKind::Auto { asked, details } => {
                if let Some(tui) = start_tui(asked, ws, graph, opts, argv)? {
                    return Ok(Front::Tui(tui));
                }
                (details, false)
            }
        };
        let mut stream = terminal(ws, graph, opts).with_details(details).with_log_hint(log_hint);
        if to_stderr {
            stream = stream.on_stderr();
        }
        Ok(Front::Stream(Arc::new(stream)))
    }

    /// The front as a consumer of the run's events.
    pub(crate) fn subscriber(&self) -> Arc<dyn Subscriber> {
        match self {
            Front::Stream(terminal) => terminal.clone(),
            Front::Tui(tui) => tui.clone(),
        }
    }
}

/// The stream subscriber for a run of `graph`.
fn terminal(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions) -> Terminal {
    let style = Style { enabled: opts.color };
    Terminal::new(style, opts.output_logs, opts.log_order)
        .with_prefix(opts.log_prefix)
        .with_github_groups(opts.github)
        .with_status(status_line(ws, graph, opts))
}

/// A status line for a terminal (not when piped, not under CI), with ETAs
/// from the p50 durations in history.
fn status_line(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions) -> Option<StatusLine> {
    if !std::io::stdout().is_terminal() || std::env::var_os("CI").is_some() || graph.is_empty() {
        return None;
    }
    Some(StatusLine::new(graph.len(), crate::history::recorded_p50s(ws, graph), opts.concurrency))
}

/// The terminal UI, when the run shows one (`tui::wanted`).
fn start_tui(
    asked: Option<bool>,
    ws: &Workspace,
    graph: &TaskGraph,
    opts: &mut RunOptions,
    argv: &[String],
) -> Result<Option<Arc<Tui>>> {
    let (wanted, why_not) = crate::tui::wanted(asked, ws, graph);
    if let Some(why) = why_not {
        eprintln!("vx: {why}");
    }
    if !wanted {
        return Ok(None);
    }
    let title = crate::units::command_line(argv);
    let (tui, controls) = Tui::start(ws, graph, opts.concurrency, title)
        .map_err(|e| Error::io("take over the terminal for --ui=tui", e))?;
    opts.controls = Some(controls);
    Ok(Some(Arc::new(tui)))
}
