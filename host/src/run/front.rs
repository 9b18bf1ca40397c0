//! The recorded durations a front shows ETAs from (the status line and
//! the terminal UI).

use std::collections::HashMap;
use std::time::Duration;

use crate::cache::state_dir;
use crate::config::Workspace;
use crate::graph::TaskGraph;
use crate::history::History;

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
