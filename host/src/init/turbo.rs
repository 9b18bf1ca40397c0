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
    let global_env = read_top_level(top, &mut plan);
    let tasks_key = if top.contains_key("tasks") { "tasks" } else { "pipeline" };
    let empty = Map::new();
    let tasks = top.get(tasks_key).and_then(Value::as_object).unwrap_or(&empty);
    let ctx = Ctx { tasks_key, global_env: &global_env, packages: &packages };
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
    global_env: &'a [String],
    packages: &'a [Package],
}

/// The top-level keys: `globalDependencies` becomes `global-inputs`;
/// `globalEnv` names join every task's `env`. Returns those names.
fn read_top_level(top: &Map<String, Value>, plan: &mut Plan) -> Vec<String> {
    let mut global_env = Vec::new();
    for (key, value) in top {
        match key.as_str() {
            "$schema" | "tasks" | "pipeline" => {}
            "globalDependencies" => match strings(value) {
                Some(globs) => plan.global_inputs.extend(globs),
                None => plan.note(FILE, key, format!("expected a list of globs, got {}", describe(value))),
            },
            "globalEnv" => {
                for name in strings(value).unwrap_or_default() {
                    if name.contains(['*', '!']) {
                        plan.note(FILE, format!("globalEnv `{name}`"), "vx `env` lists exact names, no wildcards");
                    } else {
                        global_env.push(name);
                    }
                }
            }
            "globalPassThroughEnv" => plan.note(
                FILE,
                key,
                "vx passes its whole environment to tasks; only `env` names are part of the key, so there is nothing \
                 to translate",
            ),
            "ui" => plan.note(FILE, key, "vx chooses its output with `--log-order` and `--output-logs` per run"),
            "cacheDir" => plan.note(FILE, key, "vx keeps its cache in [cache] dir (default .vx/cache); set it by hand"),
            "remoteCache" => plan.note(FILE, key, "configure a cache-backend plugin (docs/plugins.md) instead"),
            _ => plan.note(FILE, key, "no vx equivalent"),
        }
    }
    global_env
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

fn translate_task(def: &Map<String, Value>, origin: (String, String), ctx: &Ctx<'_>, plan: &mut Plan) -> TaskSpec {
    let (file, at) = origin.clone();
    let mut task = TaskSpec { cache: true, env: ctx.global_env.to_vec(), origin, ..TaskSpec::default() };
    for (key, value) in def {
        let setting = format!("{at}.{key}");
        let Some(items) = strings(value).or_else(|| value.is_boolean().then(Vec::new)) else {
            plan.note(&file, setting, format!("unexpected value {}", describe(value)));
            continue;
        };
        match key.as_str() {
            "dependsOn" => {
                for dep in items {
                    if let Some(var) = dep.strip_prefix('$') {
                        task.env.push(var.to_string());
                    } else if let Some(t) = dep.strip_prefix('^') {
                        task.depends_on.push(Dep::Upstream(t.to_string()));
                    } else if let Some((p, t)) = dep.split_once('#') {
                        if p.is_empty() || p == "//" {
                            plan.note(&file, &setting, format!("`{dep}` names a root task, which is not translated"));
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
            "inputs" => {
                let mut inputs = Vec::new();
                for glob in items {
                    if glob == "$TURBO_DEFAULT$" {
                        inputs.push("**".to_string());
                    } else if glob.contains("$TURBO_ROOT$") || glob.trim_start_matches('!').starts_with("..") {
                        plan.note(&file, &setting, format!("`{glob}` is outside the package; add it to global-inputs by hand if every task should see it"));
                    } else {
                        inputs.push(glob);
                    }
                }
                task.inputs = Some(inputs);
            }
            "outputs" => {
                for glob in items {
                    if glob.contains("$TURBO_ROOT$") || glob.trim_start_matches('!').starts_with("..") {
                        plan.note(
                            &file,
                            &setting,
                            format!("`{glob}` is outside the package; vx outputs stay inside the project"),
                        );
                    } else {
                        task.outputs.push(glob);
                    }
                }
            }
            "env" => {
                for name in items {
                    if name.contains(['*', '!']) {
                        plan.note(&file, &setting, format!("`{name}`: vx `env` lists exact names, no wildcards"));
                    } else {
                        task.env.push(name);
                    }
                }
            }
            "cache" => task.cache = value.as_bool().unwrap_or(true),
            "persistent" => task.persistent = value.as_bool().unwrap_or(false),
            "passThroughEnv" => plan.note(
                &file,
                &setting,
                "vx passes its whole environment to tasks; only `env` names are part of the key",
            ),
            "outputLogs" | "outputMode" => plan.note(&file, &setting, "vx sets this per run with `--output-logs`"),
            "interactive" => plan.note(&file, &setting, "vx tasks never read a terminal (stdin is closed)"),
            "description" => {}
            _ => plan.note(&file, &setting, "no vx equivalent"),
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    task.env.retain(|e| seen.insert(e.clone()));
    task
}
