//! The terminal a run is shown on: colours, `--output-logs`, `--log-order`,
//! GitHub groups and, on an interactive terminal, the status line with
//! ETAs from history. `vx run` and `vx watch` put it first on their bus.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::Duration;

use super::options::RunOptions;
use crate::cache::{History, state_dir};
use crate::config::Workspace;
use crate::graph::TaskGraph;
use crate::report::{StatusLine, Style, Terminal};

/// The terminal subscriber for a run of `graph`.
pub fn terminal(ws: &Workspace, graph: &TaskGraph, opts: &RunOptions) -> Terminal {
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
    Some(StatusLine::new(graph.len(), recorded_p50s(ws, graph), opts.concurrency))
}

/// The p50 duration in history of each task of `graph` that has one: the
/// ETAs of the status line and of the terminal UI.
pub fn recorded_p50s(ws: &Workspace, graph: &TaskGraph) -> HashMap<String, Duration> {
    let Ok(history) = History::open(&state_dir(ws).join("history.db")) else { return HashMap::new() };
    graph
        .nodes
        .iter()
        .filter_map(|n| {
            let id = n.id.to_string();
            history.p50(&id).map(|d| (id, d))
        })
        .collect()
}
