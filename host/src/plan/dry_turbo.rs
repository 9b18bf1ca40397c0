//! `--dry=json --format turbo`: the plan in the shape of Turborepo's
//! `turbo run --dry=json`, so that scripts written against it keep
//! working: `tasks[]` with `taskId`, `task`, `package`, `hash`,
//! `inputs`, `cache.status`, `command`, `outputs`, `directory`,
//! `dependencies`, `dependents` and `resolvedTaskDefinition`, and the
//! top-level `packages` and `envMode`. Values are vx's: `hash` is the
//! first 16 hex digits of vx's key (not turbo's hash of the same task),
//! a package without the script is turbo's `<NONEXISTENT>` command, and
//! the root package is `//`. Fields vx has no value for are turbo's
//! empty ones (`framework: ""`, `excludedOutputs: null`).

use serde_json::{Value, json};

use super::dry::DryPlan;
use super::keys::PlannedCache;
use crate::config::{Command, ROOT_ALIAS};

impl DryPlan<'_> {
    pub(crate) fn to_turbo_json(&self) -> String {
        let (ws, graph) = (self.ws, self.graph);
        let tasks: Vec<Value> = graph.topological_order().into_iter().map(|n| self.turbo_task(n)).collect();
        let mut packages: Vec<String> = graph.nodes.iter().map(|n| self.package_of(n.project)).collect();
        packages.sort();
        packages.dedup();
        let doc = json!({
            "id": "",
            "version": "1",
            "turboVersion": format!("vx {}", env!("CARGO_PKG_VERSION")),
            "monorepo": ws.projects.len() > 1,
            "globalCacheInputs": {
                "rootKey": "",
                "files": {},
                "hashOfExternalDependencies": "",
                "hashOfInternalDependencies": "",
                "environmentVariables": { "specified": { "env": ws.global_env, "passThroughEnv": ws.global_pass_env } },
            },
            "packages": packages,
            "envMode": ws.env_mode.as_str(),
            "frameworkInference": false,
            "tasks": tasks,
            "user": "",
            "scm": { "type": "git", "sha": "", "branch": "" },
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("plan serializes");
        text.push('\n');
        text
    }

    /// A project as turbo names its package: the root is `//`.
    fn package_of(&self, project: usize) -> String {
        let p = &self.ws.projects[project];
        if p.dir == self.ws.root && self.ws.projects.len() > 1 { ROOT_ALIAS.to_string() } else { p.name.clone() }
    }

    fn id_of(&self, n: usize) -> String {
        let node = &self.graph.nodes[n];
        format!("{}#{}", self.package_of(node.project), node.id.task)
    }

    /// Node `n`'s hash (vx's key, cut to 16 hex digits) and its input
    /// files relative to its package, as turbo lists them.
    fn turbo_hash_and_inputs(&self, n: usize) -> (String, Value) {
        let project = &self.ws.projects[self.graph.nodes[n].project];
        let Ok((key, manifest)) = &self.keys[n] else { return (String::new(), json!({})) };
        let prefix = if project.rel_dir == "." { String::new() } else { format!("{}/", project.rel_dir) };
        let inputs: serde_json::Map<String, Value> = manifest
            .files
            .pairs()
            .into_iter()
            .map(|(path, hash)| (path.strip_prefix(&prefix).unwrap_or(&path).to_string(), json!(hash)))
            .collect();
        (key.0.chars().take(16).collect::<String>(), Value::Object(inputs))
    }

    /// Node `n` as an entry of turbo's `tasks[]`.
    fn turbo_task(&self, n: usize) -> Value {
        let (ws, graph) = (self.ws, self.graph);
        let node = &graph.nodes[n];
        let project = &ws.projects[node.project];
        let task = &project.tasks[&node.id.task];
        let (hash, inputs) = self.turbo_hash_and_inputs(n);
        let status = self.statuses[n];
        let hit = matches!(status, PlannedCache::HitLocal | PlannedCache::HitRemote);
        let command = match (&task.command, task.is_group()) {
            (_, true) => "<NONEXISTENT>".to_string(),
            (Command::Shell(s), _) => s.clone(),
            (Command::Argv(argv), _) => argv.join(" "),
        };
        let deps: Vec<String> = graph.deps[n].iter().map(|&d| self.id_of(d)).collect();
        let dependents: Vec<String> = graph.dependents[n].iter().map(|&d| self.id_of(d)).collect();
        let env = json!({
            "specified": { "env": task.env, "passThroughEnv": task.pass_env },
            "configured": [],
            "inferred": [],
            "passthrough": Value::Null,
        });
        json!({
            "taskId": self.id_of(n),
            "task": node.id.task,
            "package": self.package_of(node.project),
            "hash": hash,
            "inputs": inputs,
            "hashOfExternalDependencies": "",
            "cache": {
                "local": status == PlannedCache::HitLocal,
                "remote": status == PlannedCache::HitRemote,
                "status": if hit { "HIT" } else { "MISS" },
                "timeSaved": 0,
            },
            "command": command,
            "cliArguments": [],
            "outputs": task.outputs,
            "excludedOutputs": Value::Null,
            "logFile": "",
            "directory": if project.rel_dir == "." { "" } else { project.rel_dir.as_str() },
            "dependencies": deps,
            "dependents": dependents,
            "resolvedTaskDefinition": {
                "outputs": task.outputs,
                "cache": task.cache,
                "dependsOn": deps,
                "inputs": task.inputs.clone().unwrap_or_default(),
                "outputLogs": "full",
                "persistent": task.persistent,
                "interruptible": task.persistent,
                "env": task.env,
                "passThroughEnv": task.pass_env,
                "interactive": task.interactive,
            },
            "expandedOutputs": [],
            "framework": "",
            "envMode": ws.env_mode.as_str(),
            "environmentVariables": env,
        })
    }
}
