//! `--dry`: the plan without running it, as text for people and JSON for
//! tools. Tasks come in dependency order, each with its cache key and
//! whether it would be a hit. Keys here are computed from the files as they
//! are now; a task whose inputs are written by its dependencies can get a
//! different key in the real run.

use serde_json::json;

use super::eta::Prediction;
use super::keys::{PlannedCache, PlannedKey};
use crate::cache::Cache;
use crate::config::{Command, Workspace};
use crate::graph::TaskGraph;
use crate::report::format_duration;

fn command_json(cmd: &Command) -> serde_json::Value {
    match cmd {
        Command::Shell(s) => json!(s),
        Command::Argv(argv) => json!(argv),
    }
}

/// The plan and, when the cache is on, each task's key.
#[derive(Debug)]
pub struct DryPlan<'a> {
    pub ws: &'a Workspace,
    pub graph: &'a TaskGraph,
    pub cache: &'a Cache,
    pub keys: &'a [PlannedKey],
    /// Each node's cache status (`planned_statuses`).
    pub statuses: &'a [PlannedCache],
    /// Expected duration per node (`None`: no history); zero for a hit.
    pub etas: &'a [Option<std::time::Duration>],
    pub prediction: Prediction,
}

impl DryPlan<'_> {
    fn key_fields(&self, n: usize) -> (Option<String>, &'static str, serde_json::Value) {
        let key = &self.keys[n];
        let status = self.statuses[n].as_str();
        match key {
            Ok((key, manifest)) => (
                Some(key.0.clone()),
                status,
                json!({
                    "schema": manifest.schema,
                    "files": manifest.files.len(),
                    "global_inputs": manifest.global.len(),
                    "env_mode": manifest.env_mode,
                    "env": manifest.env.iter().map(|e| &e.name).collect::<Vec<_>>(),
                    "runtime": manifest.runtime,
                    "dependencies": manifest.deps.iter().map(|(id, key)| json!({"id": id, "key": key})).collect::<Vec<_>>(),
                    "package_json": manifest.package_json,
                    "lockfile": manifest.lockfile,
                }),
            ),
            Err(why) => (None, status, json!({ "error": why })),
        }
    }

    pub fn to_json(&self) -> String {
        let (ws, graph) = (self.ws, self.graph);
        let tasks: Vec<serde_json::Value> = graph
            .topological_order()
            .into_iter()
            .map(|n| {
                let node = &graph.nodes[n];
                let project = &ws.projects[node.project];
                let task = &project.tasks[&node.id.task];
                let (key, status, components) = self.key_fields(n);
                let mut entry = json!({
                    "id": node.id.to_string(),
                    "project": project.name,
                    "task": task.name,
                    "dir": project.rel_dir,
                    "command": command_json(&task.command),
                    "dependencies": graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect::<Vec<_>>(),
                    "inputs": task.inputs,
                    "outputs": task.outputs,
                    "env": task.env,
                    "pass_env": task.pass_env,
                    "runtime": ws.runtime_of(task),
                    "cache": task.cache,
                    "persistent": task.persistent,
                    "executor": task.executor,
                    "timeout_ms": task.timeout.map(|t| t.as_millis() as u64),
                    "key": key,
                    "cache_status": status,
                    "key_components": components,
                    "eta_ms": self.etas[n].map(|d| d.as_millis() as u64),
                });
                // Only a group carries the key (and no command), so plans
                // without groups read as before.
                if task.is_group() {
                    entry["command"] = serde_json::Value::Null;
                    entry["group"] = json!(true);
                }
                entry
            })
            .collect();
        let p = self.prediction;
        let doc = json!({
            "root": ws.root,
            "tasks": tasks,
            "prediction": {
                "wall_ms": p.wall.as_millis() as u64,
                "execution_ms": p.execution.as_millis() as u64,
                "tasks_without_history": p.unknown,
            },
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("plan serializes");
        text.push('\n');
        text
    }

    pub fn to_text(&self) -> String {
        let (ws, graph) = (self.ws, self.graph);
        let mut out = String::new();
        for n in graph.topological_order() {
            let node = &graph.nodes[n];
            let project = &ws.projects[node.project];
            let task = &project.tasks[&node.id.task];
            let (key, status, _) = self.key_fields(n);
            out.push_str(&format!("{}\n", node.id));
            out.push_str(&format!("  dir:        {}\n", project.rel_dir));
            if task.is_group() {
                out.push_str("  command:    none (a group: runs nothing, succeeds when its dependencies do)\n");
            } else {
                out.push_str(&format!("  command:    {}\n", task.command));
            }
            let deps: Vec<String> = graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect();
            out.push_str(&format!(
                "  depends on: {}\n",
                if deps.is_empty() { "-".to_string() } else { deps.join(", ") }
            ));
            if !task.is_group() {
                let inputs =
                    task.inputs.as_ref().map_or_else(|| "every file of the project".to_string(), |i| i.join(", "));
                out.push_str(&format!("  inputs:     {inputs}\n"));
            }
            if !task.outputs.is_empty() {
                out.push_str(&format!("  outputs:    {}\n", task.outputs.join(", ")));
            }
            if let Some(key) = key {
                out.push_str(&format!("  key:        {key}\n"));
            }
            out.push_str(&format!("  cache:      {status}\n"));
            let eta = self.etas[n].map_or_else(|| "unknown (no history)".to_string(), format_duration);
            out.push_str(&format!("  eta:        {eta}\n"));
        }
        let p = self.prediction;
        out.push_str(&format!(
            "{} task(s) planned; predicted wall time {}, execution time {}{}\n",
            graph.len(),
            format_duration(p.wall),
            format_duration(p.execution),
            if p.unknown > 0 {
                format!(" ({} task(s) without history counted as 0)", p.unknown)
            } else {
                String::new()
            }
        ));
        out
    }
}
