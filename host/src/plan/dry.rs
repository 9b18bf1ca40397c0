//! `--dry`: the plan without running it, as text for people and JSON for
//! tools. Tasks come in dependency order. The text is one line per task
//! (`id  status  ~ETA  executor`, and how often it was flaky lately); with
//! `--verbose` each task's detail follows. What a task would contend on
//! (a mutex it shares with other planned tasks, a share over a budget)
//! ends its line, and so do, with `--affected`, why it was selected and,
//! with `--shard`, whether it is the shard's own. Keys here are computed
//! from the files as they are now; a task whose inputs are written by its
//! dependencies can get a different key in the real run.

use serde_json::json;

use super::eta::Prediction;
use super::keys::{PlannedCache, PlannedKey};
use crate::config::{Command, ExecutorName, Task, Workspace};
use crate::graph::{Reason, ShardMark, ShardRole, TaskGraph};
use crate::history::Flakiness;
use crate::run::{Budget, cpus, effective_executor};
use crate::units::{format_bytes, format_duration};

fn command_json(cmd: &Command) -> serde_json::Value {
    match cmd {
        Command::Shell(s) => json!(s),
        Command::Argv(argv) => json!(argv),
    }
}

/// The plan and, when the cache is on, each task's key.
#[derive(Debug)]
pub(crate) struct DryPlan<'a> {
    pub ws: &'a Workspace,
    pub graph: &'a TaskGraph,
    pub keys: &'a [PlannedKey],
    /// Each node's cache status (`planned_statuses`).
    pub statuses: &'a [PlannedCache],
    /// Expected duration per node (`None`: no history); zero for a hit.
    pub etas: &'a [Option<std::time::Duration>],
    /// How often each node was flaky in its recent executions.
    pub flaky: &'a [Flakiness],
    pub prediction: Prediction,
    /// `--executor`, over each task's own (servers stay local).
    pub run_executor: Option<&'a str>,
    /// `--concurrency` and `--memory`, as admission shares them.
    pub budget: Budget,
    /// With `--affected`: why each node was selected.
    pub reasons: Option<&'a [Vec<Reason>]>,
    /// With `--shard`: what each node is to the shard, and the shard count.
    pub shard: Option<(&'a [ShardMark], usize)>,
}

impl DryPlan<'_> {
    fn task(&self, n: usize) -> &Task {
        let node = &self.graph.nodes[n];
        &self.ws.projects[node.project].tasks[&node.id.task]
    }

    fn executor(&self, n: usize) -> ExecutorName {
        effective_executor(self.task(n), self.run_executor)
    }

    /// What the task would wait for besides its dependencies: a mutex it
    /// shares with other planned tasks, a share larger than a budget.
    fn contention(&self, n: usize) -> Vec<String> {
        let task = self.task(n);
        let mut out = Vec::new();
        if task.is_group() {
            return out;
        }
        if let Some(name) = &task.mutex {
            let others: Vec<String> = (0..self.graph.len())
                .filter(|&o| o != n && self.task(o).mutex.as_ref() == Some(name) && !self.task(o).is_group())
                .map(|o| self.graph.nodes[o].id.to_string())
                .collect();
            if !others.is_empty() {
                out.push(format!("shares mutex {name} with {}", others.join(", ")));
            }
        }
        let r = task.resources;
        if r.millicpus > self.budget.millicpus {
            out.push(format!(
                "needs {} cpus of --concurrency {}: runs alone",
                cpus(r.millicpus),
                cpus(self.budget.millicpus)
            ));
        }
        if let Some(budget) = self.budget.memory.filter(|&b| r.memory > b) {
            out.push(format!("needs {} of --memory {}: runs alone", format_bytes(r.memory), format_bytes(budget)));
        }
        out
    }

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

    pub(crate) fn to_json(&self) -> String {
        let (ws, graph) = (self.ws, self.graph);
        let tasks: Vec<serde_json::Value> = graph
            .topological_order()
            .into_iter()
            .map(|n| {
                let node = &graph.nodes[n];
                let project = &ws.projects[node.project];
                let task = self.task(n);
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
                    "executor": self.executor(n).as_str(),
                    "timeout_ms": task.timeout.map(|t| t.as_millis() as u64),
                    "retries": task.retries,
                    "resources": { "cpus": task.resources.millicpus as f64 / 1000.0, "memory": task.resources.memory },
                    "mutex": task.mutex,
                    "priority": task.priority.as_str(),
                    "contends": self.contention(n),
                    "key": key,
                    "cache_status": status,
                    "key_components": components,
                    "eta_ms": self.etas[n].map(|d| d.as_millis() as u64),
                    "history": { "executions": self.flaky[n].executions, "flaky": self.flaky[n].flaky },
                });
                // Only a group carries the key (and no command), so plans
                // without groups read as before.
                if task.is_group() {
                    entry["command"] = serde_json::Value::Null;
                    entry["group"] = json!(true);
                }
                // Only a described task carries `description`, likewise.
                if let Some(description) = &task.description {
                    entry["description"] = json!(description);
                }
                self.add_selection(&mut entry, n);
                entry
            })
            .collect();
        let p = &self.prediction;
        let doc = json!({
            "root": ws.root,
            "tasks": tasks,
            "prediction": {
                "wall_ms": self.predicted().then_some(p.wall.as_millis() as u64),
                "execution_ms": self.predicted().then_some(p.execution.as_millis() as u64),
                "tasks_without_history": p.unknown,
            },
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("plan serializes");
        text.push('\n');
        text
    }

    /// What only some plans carry: `reasons` with `--affected`, `shard`
    /// with `--shard`, and `predicted` (start and end) with a prediction.
    fn add_selection(&self, entry: &mut serde_json::Value, n: usize) {
        if let Some(reasons) = self.reasons {
            entry["reasons"] = json!(reasons[n]);
        }
        if let Some((marks, _)) = self.shard {
            entry["shard"] = json!(marks[n]);
        }
        if self.predicted() {
            let (start, end) = self.prediction.schedule[n];
            entry["predicted"] = json!({ "start_ms": start.as_millis() as u64, "end_ms": end.as_millis() as u64 });
        }
    }

    /// Whether any task has a prediction: with none, a wall time of zero
    /// would be a guess dressed as a figure.
    fn predicted(&self) -> bool {
        self.etas.iter().any(Option::is_some)
    }

    /// One line per task, aligned; with `verbose`, each task's detail.
    pub(crate) fn to_text(&self, verbose: bool) -> String {
        let order = self.graph.topological_order();
        let rows: Vec<[String; 5]> = order.iter().map(|&n| self.row(n)).collect();
        let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
        let widths = [width(0), width(1), width(2), width(3)];
        let mut out = String::new();
        for (row, &n) in rows.iter().zip(&order) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i < 4 && !row[i + 1..].iter().all(String::is_empty) {
                    line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
                } else {
                    line.push_str(cell);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if verbose {
                out.push_str(&self.detail(n));
            }
        }
        out.push_str(&self.totals());
        out
    }

    /// `id`, cache status, `~ETA` (`-` without history), executor, how
    /// often it was flaky lately and what it contends on (empty when
    /// neither).
    fn row(&self, n: usize) -> [String; 5] {
        let eta = self.etas[n].map_or_else(|| "-".to_string(), |d| format!("~{}", format_duration(d)));
        let f = self.flaky[n];
        let mut notes = Vec::new();
        if f.flaky > 0 {
            notes.push(format!("flaky in {} of its last {} runs", f.flaky, f.executions));
        }
        let contends = self.contention(n);
        if !contends.is_empty() {
            notes.push(contends.join("; "));
        }
        notes.extend(self.shard_note(n));
        if let Some(reasons) = self.reasons.map(|r| &r[n]).filter(|r| !r.is_empty()) {
            notes.push(format!("affected: {}", reasons.iter().map(|r| r.text.as_str()).collect::<Vec<_>>().join("; ")));
        }
        let flaky = notes.join(" · ");
        [
            self.graph.nodes[n].id.to_string(),
            self.statuses[n].as_str().to_string(),
            eta,
            if self.task(n).is_group() { "-".to_string() } else { self.executor(n).to_string() },
            flaky,
        ]
    }

    /// With `--shard`, what a task that is not the shard's own is doing
    /// in its plan.
    fn shard_note(&self, n: usize) -> Option<String> {
        let (marks, count) = self.shard?;
        match marks[n] {
            ShardMark { role: ShardRole::Own, .. } => None,
            ShardMark { owner: Some(k), .. } => Some(format!("shard {k}/{count}'s, here as a dependency")),
            ShardMark { owner: None, .. } => Some("a dependency no shard selected".to_string()),
        }
    }

    fn detail(&self, n: usize) -> String {
        let graph = self.graph;
        let project = &self.ws.projects[graph.nodes[n].project];
        let task = self.task(n);
        let (key, _, _) = self.key_fields(n);
        let mut out = String::new();
        out.push_str(&format!("  dir:        {}\n", project.rel_dir));
        if task.is_group() {
            out.push_str("  command:    none (a group: runs nothing, succeeds when its dependencies do)\n");
        } else {
            out.push_str(&format!("  command:    {}\n", task.command));
        }
        let deps: Vec<String> = graph.deps[n].iter().map(|&d| graph.nodes[d].id.to_string()).collect();
        out.push_str(&format!("  depends on: {}\n", if deps.is_empty() { "-".to_string() } else { deps.join(", ") }));
        if !task.is_group() {
            let inputs = task.inputs.as_ref().map_or_else(|| "every file of the project".to_string(), |i| i.join(", "));
            out.push_str(&format!("  inputs:     {inputs}\n"));
        }
        if !task.outputs.is_empty() {
            out.push_str(&format!("  outputs:    {}\n", task.outputs.join(", ")));
        }
        if let Some(key) = key {
            out.push_str(&format!("  key:        {key}\n"));
        }
        if task.retries > 0 {
            out.push_str(&format!("  retries:    {}\n", task.retries));
        }
        if !task.is_group() && task.resources != crate::config::Resources::default() {
            let r = task.resources;
            let memory = if r.memory > 0 { format!(", {}", format_bytes(r.memory)) } else { String::new() };
            out.push_str(&format!("  resources:  {} cpu(s){memory}\n", cpus(r.millicpus)));
        }
        if let Some(name) = &task.mutex {
            out.push_str(&format!("  mutex:      {name}\n"));
        }
        if task.priority != crate::config::Priority::Normal {
            out.push_str(&format!("  priority:   {}\n", task.priority.as_str()));
        }
        let f = self.flaky[n];
        let history = match f.executions {
            0 => "no recorded execution".to_string(),
            runs => format!("{} flaky of its last {runs} execution(s)", f.flaky),
        };
        out.push_str(&format!("  history:    {history}\n"));
        if self.predicted() {
            let (start, end) = self.prediction.schedule[n];
            out.push_str(&format!("  predicted:  ~{} to ~{}\n", format_duration(start), format_duration(end)));
        }
        out
    }

    fn totals(&self) -> String {
        let (p, count) = (&self.prediction, self.graph.len());
        if !self.predicted() {
            return format!("{count} task(s) planned; no prediction: no task has a recorded execution yet\n");
        }
        let unknown = match p.unknown {
            0 => String::new(),
            n => format!(" ({n} task(s) without history not counted)"),
        };
        format!(
            "{count} task(s) planned; predicted wall time ~{}, execution time ~{}{unknown}\n",
            format_duration(p.wall),
            format_duration(p.execution),
        )
    }
}
