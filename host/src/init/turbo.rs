//! Turborepo: `turbo.json` at the root (`tasks`, or turbo 1's `pipeline`),
//! per-package `turbo.json` overrides, and the packages of the JavaScript
//! workspace. A task applies to every package that has a script of its
//! name, as in turbo; `pkg#task` configures one package's task.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::{InitError, Result};
use super::model::{Dep, Plan, ProjectSpec, TaskSpec};
use super::source::{Package, describe, js_packages, js_workspace_globs, read_json, strings};

const FILE: &str = "turbo.json";

pub fn read(root: &Path) -> Result<Plan> {
    let json = read_json(root, FILE)?.unwrap_or(Value::Null);
    let Some(top) = json.as_object() else {
        return Err(InitError::NotAnObject { file: FILE });
    };
    let mut plan = Plan { projects_globs: js_workspace_globs(root)?, ..Plan::default() };
    if plan.projects_globs.is_empty() {
        return Err(InitError::NoPackages);
    }
    let packages = js_packages(root, &plan.projects_globs)?;
    read_top_level(top, &mut plan);
    let tasks_key = if top.contains_key("tasks") { "tasks" } else { "pipeline" };
    let empty = Map::new();
    let tasks = top.get(tasks_key).and_then(Value::as_object).unwrap_or(&empty);
    let ctx = Ctx { tasks_key, packages: &packages };
    for key in tasks.keys() {
        match key.split_once('#') {
            Some(("", _)) | Some(("//", _)) => plan.note(
                FILE,
                format!("{tasks_key}.{key}"),
                "root tasks are not translated: a root vx.toml with [tasks] would make every root script a task; \
                 add it by hand if wanted",
            ),
            Some((pkg, _)) if !packages.iter().any(|p| p.package_name.as_deref() == Some(pkg)) => {
                plan.note(FILE, format!("{tasks_key}.{key}"), format!("no package named `{pkg}`; not translated"));
            }
            _ => {}
        }
    }
    for pkg in &packages {
        let project = translate_package(root, pkg, tasks, &ctx, &mut plan)?;
        plan.projects.push(project);
    }
    Ok(plan)
}

struct Ctx<'a> {
    tasks_key: &'a str,
    packages: &'a [Package],
}

/// The top-level keys: `globalDependencies` becomes `global-inputs`,
/// `globalEnv` / `globalPassThroughEnv` `global-env` / `global-pass-env`,
/// `envMode` `env-mode`.
fn read_top_level(top: &Map<String, Value>, plan: &mut Plan) {
    for (key, value) in top {
        match key.as_str() {
            "$schema" | "tasks" | "pipeline" => {}
            "globalDependencies" => match strings(value) {
                Some(globs) => plan.global_inputs.extend(globs),
                None => plan.note(FILE, key, format!("expected a list of globs, got {}", describe(value))),
            },
            "globalEnv" | "globalPassThroughEnv" => {
                let mut notes = Vec::new();
                let names = env_list(value, &mut |why| notes.push(why));
                notes.into_iter().for_each(|why| plan.note(FILE, key, why));
                match key.as_str() {
                    "globalEnv" => plan.global_env.extend(names),
                    _ => plan.global_pass_env.extend(names),
                }
            }
            "envMode" => match value.as_str() {
                Some(mode @ ("strict" | "loose")) => plan.env_mode = Some(mode.to_string()),
                _ => plan.note(FILE, key, format!("expected \"strict\" or \"loose\", got {}", describe(value))),
            },
            "ui" => plan.note(FILE, key, "vx chooses its output with `--log-order` and `--output-logs` per run"),
            "cacheDir" => plan.note(FILE, key, "vx keeps its cache in [cache] dir (default .vx/cache); set it by hand"),
            "remoteCache" => plan.note(FILE, key, "configure a cache-backend plugin (docs/plugins.md) instead"),
            _ => plan.note(FILE, key, "no vx equivalent"),
        }
    }
}

fn translate_package(
    root: &Path,
    pkg: &Package,
    tasks: &Map<String, Value>,
    ctx: &Ctx<'_>,
    plan: &mut Plan,
) -> Result<ProjectSpec> {
    let own_file = format!("{}/turbo.json", pkg.dir);
    let overrides = package_overrides(root, &own_file, plan)?;
    let mut project = ProjectSpec {
        dir: pkg.dir.clone(),
        name: pkg.vx_name(),
        write_name: false,
        has_package_json: pkg.has_package_json,
        scripts: pkg.scripts.clone(),
        ..ProjectSpec::default()
    };
    for script in pkg.scripts.keys() {
        let specific = pkg.package_name.as_ref().map(|n| format!("{n}#{script}"));
        let (key, def) = match specific.as_ref().and_then(|k| tasks.get_key_value(k)) {
            Some(found) => found,
            None => match tasks.get_key_value(script) {
                Some(found) => found,
                None => continue,
            },
        };
        let mut def = def.as_object().cloned().unwrap_or_default();
        let mut origin = (FILE.to_string(), format!("{}.{key}", ctx.tasks_key));
        if let Some(over) = overrides.get(script) {
            merge_override(&mut def, over);
            origin = (own_file.clone(), format!("tasks.{script}"));
        }
        let task = translate_task(&def, origin, ctx, plan);
        project.tasks.insert(script.clone(), task);
    }
    Ok(project)
}

/// A package's own `turbo.json` (`extends: ["//"]`): its task tables.
fn package_overrides(root: &Path, file: &str, plan: &mut Plan) -> Result<BTreeMap<String, Map<String, Value>>> {
    let Some(json) = read_json(root, file)? else { return Ok(BTreeMap::new()) };
    let mut out = BTreeMap::new();
    for (key, value) in json.as_object().into_iter().flatten() {
        match key.as_str() {
            "$schema" | "extends" => {}
            "tasks" | "pipeline" => {
                for (name, def) in value.as_object().into_iter().flatten() {
                    let name = name.rsplit('#').next().unwrap_or(name);
                    out.insert(name.to_string(), def.as_object().cloned().unwrap_or_default());
                }
            }
            _ => plan.note(file, key, "no vx equivalent"),
        }
    }
    Ok(out)
}

/// Applies a package override: its keys replace the root's, except that an
/// array holding `$TURBO_EXTENDS$` appends to the inherited one.
fn merge_override(def: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (key, value) in over {
        let extends = value.as_array().is_some_and(|a| a.iter().any(|v| v == "$TURBO_EXTENDS$"));
        if extends {
            let mut merged: Vec<Value> = def.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
            merged.extend(value.as_array().into_iter().flatten().filter(|v| *v != "$TURBO_EXTENDS$").cloned());
            def.insert(key.clone(), Value::Array(merged));
        } else {
            def.insert(key.clone(), value.clone());
        }
    }
}

/// One task definition, turned key by key into a task spec; what has no
/// vx equivalent is noted.
fn translate_task(def: &Map<String, Value>, origin: (String, String), ctx: &Ctx<'_>, plan: &mut Plan) -> TaskSpec {
    let (file, at) = origin.clone();
    let mut task = TaskSpec { cache: true, origin, ..TaskSpec::default() };
    for (key, value) in def {
        let setting = format!("{at}.{key}");
        let Some(items) = strings(value).or_else(|| value.is_boolean().then(Vec::new)) else {
            plan.note(&file, setting, format!("unexpected value {}", describe(value)));
            continue;
        };
        let mut note = |why: String| plan.note(&file, &setting, why);
        match key.as_str() {
            "dependsOn" => depends_on(items, ctx, &mut task, &mut note),
            "inputs" => task.inputs = Some(inputs(items, &mut note)),
            "outputs" => task.outputs.extend(outputs(items, &mut note)),
            "env" => task.env.extend(env_names(items, &mut note)),
            "passThroughEnv" => task.pass_env.extend(env_names(items, &mut note)),
            "cache" => task.cache = value.as_bool().unwrap_or(true),
            "persistent" => task.persistent = value.as_bool().unwrap_or(false),
            "outputLogs" | "outputMode" => note("vx sets this per run with `--output-logs`".into()),
            "interactive" => note("vx tasks never read a terminal (stdin is closed)".into()),
            "description" => {}
            _ => note("no vx equivalent".into()),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    task.env.retain(|e| seen.insert(e.clone()));
    let mut seen = std::collections::BTreeSet::new();
    task.pass_env.retain(|e| seen.insert(e.clone()));
    task
}

/// `dependsOn`: `$VAR` (turbo 1's env dependency), `^task`, `pkg#task`
/// (by package name, renamed to the vx project name) and `task`.
fn depends_on(items: Vec<String>, ctx: &Ctx<'_>, task: &mut TaskSpec, note: &mut impl FnMut(String)) {
    for dep in items {
        if let Some(var) = dep.strip_prefix('$') {
            task.env.push(var.to_string());
        } else if let Some(t) = dep.strip_prefix('^') {
            task.depends_on.push(Dep::Upstream(t.to_string()));
        } else if let Some((p, t)) = dep.split_once('#') {
            if p.is_empty() || p == "//" {
                note(format!("`{dep}` names a root task, which is not translated"));
            } else {
                let name = ctx
                    .packages
                    .iter()
                    .find(|k| k.package_name.as_deref() == Some(p))
                    .map_or_else(|| p.to_string(), Package::vx_name);
                task.depends_on.push(Dep::Exact(name, t.to_string()));
            }
        } else {
            task.depends_on.push(Dep::Local(dep));
        }
    }
}

/// A glob that reaches outside the package, which a vx project cannot.
fn outside_package(glob: &str) -> bool {
    glob.contains("$TURBO_ROOT$") || glob.trim_start_matches('!').starts_with("..")
}

fn inputs(items: Vec<String>, note: &mut impl FnMut(String)) -> Vec<String> {
    let mut inputs = Vec::new();
    for glob in items {
        if glob == "$TURBO_DEFAULT$" {
            inputs.push("**".to_string());
        } else if outside_package(&glob) {
            note(format!(
                "`{glob}` is outside the package; add it to global-inputs by hand if every task should see it"
            ));
        } else {
            inputs.push(glob);
        }
    }
    inputs
}

fn outputs(items: Vec<String>, note: &mut impl FnMut(String)) -> Vec<String> {
    let (outside, inside): (Vec<String>, Vec<String>) = items.into_iter().partition(|g| outside_package(g));
    for glob in outside {
        note(format!("`{glob}` is outside the package; vx outputs stay inside the project"));
    }
    inside
}

/// `env` / `passThroughEnv` names, wildcards and `!` exclusions, which vx
/// reads the same way; an entry vx would refuse is noted.
fn env_names(items: Vec<String>, note: &mut impl FnMut(String)) -> Vec<String> {
    let (names, bad): (Vec<String>, Vec<String>) =
        items.into_iter().partition(|n| crate::config::env::check_entry(n).is_ok());
    for name in bad {
        note(format!("`{name}` is not a variable name, wildcard or `!` exclusion"));
    }
    names
}

/// `globalEnv` / `globalPassThroughEnv`: a list of names, as `env`.
fn env_list(value: &Value, note: &mut impl FnMut(String)) -> Vec<String> {
    match strings(value) {
        Some(items) => env_names(items, note),
        None => {
            note(format!("expected a list of variable names, got {}", describe(value)));
            Vec::new()
        }
    }
}
