//! One moon task to a vx task: `command` + `args` (or `script`), `env`
//! values prefixed with `env`, `deps` targets (`^:t`, `~:t`, `p:t`),
//! inputs and outputs with file groups and root-relative (`/`) paths
//! resolved, and `options` (`cache`, `persistent`) and `local`/`preset`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::model::{Dep, Plan, TaskSpec};
use super::source::{describe, project_relative, sh_quote, strings};

/// What every project inherits from `.moon/tasks.yml`.
#[derive(Debug, Default)]
pub(crate) struct Inherited {
    /// Task name → (file it came from, definition).
    pub tasks: BTreeMap<String, (String, Value)>,
    pub file_groups: Map<String, Value>,
    pub deps: Vec<Value>,
    pub inputs: Vec<String>,
}

/// Where a task is being translated.
pub(crate) struct TaskCtx<'a> {
    pub file: &'a str,
    pub name: &'a str,
    pub dir: &'a str,
    pub groups: &'a Map<String, Value>,
    /// The project's `env`, under the task's own.
    pub env: &'a Map<String, Value>,
    pub inherited: &'a Inherited,
}

impl TaskCtx<'_> {
    fn setting(&self, key: &str) -> String {
        format!("tasks.{}.{key}", self.name)
    }
}

pub(crate) fn translate_task(def: &Map<String, Value>, ctx: &TaskCtx<'_>, plan: &mut Plan) -> TaskSpec {
    let mut task =
        TaskSpec { cache: true, origin: (ctx.file.to_string(), format!("tasks.{}", ctx.name)), ..TaskSpec::default() };
    let mut env_values = ctx.env.clone();
    for (key, value) in def {
        let setting = ctx.setting(key);
        match key.as_str() {
            "description" => task.description = value.as_str().map(str::to_string),
            "command" | "args" | "script" | "type" => {}
            "env" => env_values.extend(value.as_object().cloned().unwrap_or_default()),
            "deps" => {
                for dep in value.as_array().into_iter().flatten().chain(&ctx.inherited.deps) {
                    if let Some(d) = target_dep(dep, ctx, &setting, plan) {
                        task.depends_on.push(d);
                    }
                }
            }
            "inputs" => {
                let mut inputs = Vec::new();
                let items = strings(value).unwrap_or_default();
                for input in items.iter().chain(&ctx.inherited.inputs) {
                    if let Some(var) = input.strip_prefix('$') {
                        if var.contains('*') {
                            plan.note(ctx.file, &setting, format!("`{input}`: vx `env` lists exact names"));
                        } else {
                            task.env.push(var.to_string());
                        }
                    } else {
                        inputs.extend(paths(input, ctx, &setting, plan));
                    }
                }
                task.inputs = Some(inputs);
            }
            "outputs" => {
                for output in strings(value).unwrap_or_default() {
                    task.outputs.extend(paths(&output, ctx, &setting, plan));
                }
            }
            "options" => options(value, &mut task, ctx, plan),
            "local" => {
                if value.as_bool() == Some(true) {
                    task.persistent = true;
                }
            }
            "preset" => match value.as_str() {
                Some("server") | Some("watcher") => task.persistent = true,
                _ => plan.note(ctx.file, setting, format!("unknown preset {}", describe(value))),
            },
            "platform" | "toolchain" | "toolchains" => {
                plan.note(ctx.file, setting, "vx runs commands with node_modules/.bin on PATH and selects no toolchain")
            }
            _ => plan.note(ctx.file, setting, "no vx equivalent"),
        }
    }
    task.command = command(def, &env_values, ctx, plan);
    task
}

/// The shell command: `script`, or `command` and `args`, after `env K=V`.
fn command(def: &Map<String, Value>, env: &Map<String, Value>, ctx: &TaskCtx<'_>, plan: &mut Plan) -> Option<String> {
    let words = |v: Option<&Value>| -> String {
        match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => items.iter().map(|i| sh_quote(&scalar(i))).collect::<Vec<_>>().join(" "),
            _ => String::new(),
        }
    };
    let mut line = match def.get("script").and_then(Value::as_str) {
        Some(script) => script.to_string(),
        None => [words(def.get("command")), words(def.get("args"))]
            .into_iter()
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    };
    if line == "noop" {
        line = "true".to_string();
    }
    if line.is_empty() {
        plan.note(ctx.file, ctx.setting("command"), "no command; written as `true`");
        line = "true".to_string();
    }
    if !env.is_empty() {
        let vars: Vec<String> = env.iter().map(|(k, v)| sh_quote(&format!("{k}={}", scalar(v)))).collect();
        line = format!("env {} {line}", vars.join(" "));
    }
    Some(line)
}

fn scalar(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

fn target_dep(dep: &Value, ctx: &TaskCtx<'_>, setting: &str, plan: &mut Plan) -> Option<Dep> {
    let Some(target) = dep.as_str().or_else(|| dep.get("target").and_then(Value::as_str)) else {
        plan.note(ctx.file, setting, format!("unreadable entry {}", describe(dep)));
        return None;
    };
    if dep.get("args").is_some() || dep.get("env").is_some() {
        plan.note(ctx.file, setting, format!("`args`/`env` of `{target}`: vx passes nothing to dependencies"));
    }
    match target.split_once(':') {
        None => Some(Dep::Local(target.to_string())),
        Some(("^", t)) => Some(Dep::Upstream(t.to_string())),
        Some(("~", t)) | Some(("", t)) => Some(Dep::Local(t.to_string())),
        Some((p, _)) if p.starts_with('#') => {
            plan.note(ctx.file, setting, format!("`{target}` selects projects by tag; vx names projects one by one"));
            None
        }
        Some((p, t)) => Some(Dep::Exact(p.to_string(), t.to_string())),
    }
}

/// An input or output: file groups expanded, `/root` paths made
/// project-relative when they are inside the project.
fn paths(entry: &str, ctx: &TaskCtx<'_>, setting: &str, plan: &mut Plan) -> Vec<String> {
    for token in ["@group(", "@globs(", "@files(", "@dirs("] {
        if let Some(name) = entry.strip_prefix(token).and_then(|r| r.strip_suffix(')')) {
            let Some(group) = ctx.groups.get(name).and_then(strings) else {
                plan.note(ctx.file, setting, format!("file group `{name}` is not defined"));
                return Vec::new();
            };
            return group.iter().flat_map(|g| paths(g, ctx, setting, plan)).collect();
        }
    }
    if entry.starts_with('@') {
        plan.note(ctx.file, setting, format!("`{entry}`: no vx equivalent"));
        return Vec::new();
    }
    let (neg, body) = match entry.strip_prefix('!') {
        Some(rest) => ("!", rest),
        None => ("", entry),
    };
    let Some(abs) = body.strip_prefix('/') else { return vec![entry.to_string()] };
    match project_relative(ctx.dir, abs) {
        Some(rel) if rel != "." => vec![format!("{neg}{rel}")],
        _ => {
            plan.note(
                ctx.file,
                setting,
                format!(
                    "`{entry}` is outside the project; add it to global-inputs by hand if every task should see it"
                ),
            );
            Vec::new()
        }
    }
}

fn options(value: &Value, task: &mut TaskSpec, ctx: &TaskCtx<'_>, plan: &mut Plan) {
    for (key, v) in value.as_object().into_iter().flatten() {
        let setting = ctx.setting(&format!("options.{key}"));
        match key.as_str() {
            "cache" => task.cache = v.as_bool().unwrap_or(!matches!(v.as_str(), Some("false" | "off"))),
            "persistent" => task.persistent = v.as_bool().unwrap_or(false),
            "runInCI" => plan.note(ctx.file, setting, "vx runs the same tasks everywhere; select with --filter in CI"),
            "outputStyle" => plan.note(ctx.file, setting, "vx sets this per run with `--output-logs`"),
            "timeout" => plan.note(ctx.file, setting, "set `timeout` (a duration like \"90s\") in vx.toml by hand"),
            _ => plan.note(ctx.file, setting, "no vx equivalent"),
        }
    }
}
