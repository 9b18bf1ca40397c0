//! `--dry`: the plan without running it, as text for people and JSON for
//! tools. Tasks come in dependency order.

use serde_json::json;

use crate::config::{Command, Workspace};
use crate::graph::TaskGraph;

fn command_json(cmd: &Command) -> serde_json::Value {
    match cmd {
        Command::Shell(s) => json!(s),
        Command::Argv(argv) => json!(argv),
    }
}

pub fn render_dry_json(ws: &Workspace, graph: &TaskGraph) -> String {
    let tasks: Vec<serde_json::Value> = graph
        .topological_order()
        .into_iter()
        .map(|n| {
            let node = &graph.nodes[n];
            let project = &ws.projects[node.project];
            let task = &project.tasks[&node.id.task];
            json!({
                "id": node.id.to_string(),
                "project": project.name,
                "task": task.name,
                "dir": project.rel_dir,
                "command": command_json(&task.command),
                "dependencies": graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect::<Vec<_>>(),
                "inputs": task.inputs,
                "outputs": task.outputs,
                "env": task.env,
                "cache": task.cache,
                "persistent": task.persistent,
                "executor": task.executor,
                "timeout_ms": task.timeout.map(|t| t.as_millis() as u64),
            })
        })
        .collect();
    let doc = json!({ "root": ws.root, "tasks": tasks });
    let mut text = serde_json::to_string_pretty(&doc).expect("plan serializes");
    text.push('\n');
    text
}

pub fn render_dry_text(ws: &Workspace, graph: &TaskGraph) -> String {
    let mut out = String::new();
    for n in graph.topological_order() {
        let node = &graph.nodes[n];
        let project = &ws.projects[node.project];
        let task = &project.tasks[&node.id.task];
        out.push_str(&format!("{}\n", node.id));
        out.push_str(&format!("  dir:        {}\n", project.rel_dir));
        out.push_str(&format!("  command:    {}\n", task.command));
        let deps: Vec<String> = graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect();
        out.push_str(&format!("  depends on: {}\n", if deps.is_empty() { "-".to_string() } else { deps.join(", ") }));
        let inputs = task.inputs.as_ref().map_or_else(|| "every file of the project".to_string(), |i| i.join(", "));
        out.push_str(&format!("  inputs:     {inputs}\n"));
        if !task.outputs.is_empty() {
            out.push_str(&format!("  outputs:    {}\n", task.outputs.join(", ")));
        }
        out.push_str(&format!("  cache:      {}\n", if task.cache { "yes" } else { "no" }));
    }
    out.push_str(&format!("{} task(s) planned\n", graph.len()));
    out
}
