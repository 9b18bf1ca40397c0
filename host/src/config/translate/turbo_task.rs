//! One Turborepo task definition, merged from its layers (the root
//! `turbo.json` entry, then a package's own `turbo.json`) and turned key by
//! key into a [`TaskSpec`]. Every key remembers the file it came from, so
//! a note about it names that file.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::error::{InitError, Result};
use super::model::{Dep, Plan, TaskSpec};
use super::source::{Package, describe, normalize, strings};

/// The marker of turbo's root package in task references (`//#lint`).
pub(crate) const ROOT_PACKAGE: &str = "//";

/// A task definition with the origin of each key: `(value, file, setting
/// path of the task)`.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    keys: BTreeMap<String, (Value, String, String)>,
    /// The layer the task was last defined in, for notes about the whole task.
    pub origin: (String, String),
}

impl Merged {
    /// Lays `def` over what is there: its keys replace the earlier ones,
    /// except that an array holding `$TURBO_EXTENDS$` appends to the
    /// inherited one.
    pub(crate) fn overlay(&mut self, def: &Map<String, Value>, file: &str, at: &str) {
        for (key, value) in def {
            let extends = value.as_array().is_some_and(|a| a.iter().any(|v| v == "$TURBO_EXTENDS$"));
            let value = if extends {
                let mut merged: Vec<Value> =
                    self.keys.get(key).and_then(|(v, _, _)| v.as_array()).cloned().unwrap_or_default();
                merged.extend(value.as_array().into_iter().flatten().filter(|v| *v != "$TURBO_EXTENDS$").cloned());
                Value::Array(merged)
            } else {
                value.clone()
            };
            self.keys.insert(key.clone(), (value, file.to_string(), at.to_string()));
        }
        self.origin = (file.to_string(), at.to_string());
    }
}

/// What a task translation needs to know about the workspace.
pub(crate) struct TaskCtx<'a> {
    pub packages: &'a [Package],
    /// The vx name of the root project (`//` in turbo).
    pub root_name: &'a str,
    /// The vx name of the project the task belongs to, and the task's name.
    pub project: &'a str,
    pub task: &'a str,
    /// The package's directory from the root (`packages/web`, `` for the
    /// root), against which `../` globs are resolved.
    pub dir: &'a str,
}

impl TaskCtx<'_> {
    /// The vx project name of a turbo package name.
    fn project_of(&self, package: &str) -> String {
        if package == ROOT_PACKAGE {
            return self.root_name.to_string();
        }
        self.packages
            .iter()
            .find(|k| k.package_name.as_deref() == Some(package))
            .map_or_else(|| package.to_string(), Package::vx_name)
    }
}

/// Turns a merged definition into a task spec; what has no vx equivalent
/// is noted against the file that set it. A task that depends on itself
/// is refused, as turbo refuses it.
pub(crate) fn translate_task(def: &Merged, ctx: &TaskCtx<'_>, plan: &mut Plan) -> Result<TaskSpec> {
    let mut task = TaskSpec { cache: true, origin: def.origin.clone(), ..TaskSpec::default() };
    for (key, (value, file, at)) in &def.keys {
        if key == "description" {
            task.description = value.as_str().map(str::to_string);
            continue;
        }
        let setting = format!("{at}.{key}");
        let Some(items) = strings(value).or_else(|| value.is_boolean().then(Vec::new)) else {
            plan.note(file, setting, format!("unexpected value {}", describe(value)));
            continue;
        };
        let mut note = |why: String| plan.note(file, &setting, why);
        match key.as_str() {
            "dependsOn" => {
                depends_on(items, ctx, &mut task, &mut note);
                let own = |d: &Dep| match d {
                    Dep::Local(t) => t == ctx.task,
                    Dep::Exact(p, t) => p == ctx.project && t == ctx.task,
                    Dep::Upstream(_) => false,
                };
                if task.depends_on.iter().any(own) {
                    // turbo refuses the task when a run includes it; the
                    // rest of the workspace runs.
                    task.depends_on.retain(|d| !own(d));
                    let error = InitError::SelfDependency {
                        file: file.clone(),
                        setting,
                        task: format!("{}#{}", ctx.project, ctx.task),
                    };
                    plan.broken.push(super::model::Broken {
                        project: ctx.project.to_string(),
                        task: Some(ctx.task.to_string()),
                        why: crate::error::Error::from(error).to_string(),
                    });
                }
            }
            "inputs" => task.inputs = Some(inputs(items, ctx.dir, &mut note)),
            "outputs" => task.outputs = outputs(items, ctx.dir, &mut note),
            "env" => task.env.extend(env_names(items, &mut note)),
            "passThroughEnv" => task.pass_env.extend(env_names(items, &mut note)),
            "cache" => task.cache = value.as_bool().unwrap_or(true),
            "persistent" => task.persistent = value.as_bool().unwrap_or(false),
            "outputLogs" | "outputMode" => note("vx sets this per run with `--output-logs`".into()),
            "interactive" => task.interactive = value.as_bool().unwrap_or(false),
            "with" => note(format!(
                "vx has no `with`: name the sibling tasks on the command line (`vx run {} {}`) or give the task a `depends-on`",
                ctx.task,
                strings(value).unwrap_or_default().join(" ")
            )),
            "interruptible" => {
                note("`vx watch` restarts any persistent task whose inputs change; nothing to set".into())
            }
            _ => note("no vx equivalent".into()),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    task.env.retain(|e| seen.insert(e.clone()));
    let mut seen = std::collections::BTreeSet::new();
    task.pass_env.retain(|e| seen.insert(e.clone()));
    Ok(task)
}

/// `dependsOn`: `$VAR` (turbo 1's env dependency), `^task`, `pkg#task`
/// (by package name, renamed to the vx project name; `//#task` is the
/// root's) and `task`.
fn depends_on(items: Vec<String>, ctx: &TaskCtx<'_>, task: &mut TaskSpec, note: &mut impl FnMut(String)) {
    for dep in items {
        if let Some(var) = dep.strip_prefix('$') {
            task.env.push(var.to_string());
        } else if let Some(t) = dep.strip_prefix('^') {
            task.depends_on.push(Dep::Upstream(t.to_string()));
        } else if let Some((p, t)) = dep.split_once('#') {
            if p.is_empty() {
                note(format!("`{dep}` names no package; write `//#{t}` for a root task"));
            } else {
                task.depends_on.push(Dep::Exact(ctx.project_of(p), t.to_string()));
            }
        } else {
            task.depends_on.push(Dep::Local(dep));
        }
    }
}

/// A turbo glob as vx writes it: `$TURBO_ROOT$/x` and `../x` (outside
/// the package) become root-anchored (`/x`, `/packages/x`), which vx
/// takes for inputs and outputs alike; `!` keeps its place. `None` for a
/// glob that climbs above the root.
fn anchored(glob: &str, dir: &str) -> Option<String> {
    let (bang, rest) = match glob.strip_prefix('!') {
        Some(rest) => ("!", rest),
        None => ("", glob),
    };
    if let Some(from_root) = rest.strip_prefix("$TURBO_ROOT$") {
        let path = normalize(from_root.trim_start_matches('/'))?;
        return Some(format!("{bang}/{path}"));
    }
    if rest.starts_with("../") || rest == ".." {
        let path = normalize(&format!("{dir}/{rest}"))?;
        return Some(format!("{bang}/{path}"));
    }
    Some(glob.to_string())
}

fn inputs(items: Vec<String>, dir: &str, note: &mut impl FnMut(String)) -> Vec<String> {
    let mut inputs = Vec::new();
    for glob in items {
        if glob == "$TURBO_DEFAULT$" {
            inputs.push("**".to_string());
        } else {
            match anchored(&glob, dir) {
                Some(glob) => inputs.push(glob),
                None => note(format!("`{glob}` climbs above the workspace root; not translated")),
            }
        }
    }
    inputs
}

fn outputs(items: Vec<String>, dir: &str, note: &mut impl FnMut(String)) -> Vec<String> {
    let mut outputs = Vec::new();
    for glob in items {
        match anchored(&glob, dir) {
            Some(glob) => outputs.push(glob),
            None => note(format!("`{glob}` climbs above the workspace root; not translated")),
        }
    }
    outputs
}

/// `env` / `passThroughEnv` (and the global forms): names, wildcards and
/// `!` exclusions, which vx reads the same way; an entry vx would refuse
/// is noted.
pub(crate) fn env_names(items: Vec<String>, note: &mut impl FnMut(String)) -> Vec<String> {
    let (names, bad): (Vec<String>, Vec<String>) =
        items.into_iter().partition(|n| crate::config::env::check_entry(n).is_ok());
    for name in bad {
        note(format!("`{name}` is not a variable name, wildcard or `!` exclusion"));
    }
    names
}
