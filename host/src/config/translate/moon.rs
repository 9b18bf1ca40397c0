//! moon: `.moon/workspace.yml` (`projects` as globs, a map of ids to
//! paths, or both), tasks every project inherits (`.moon/tasks.yml`, or
//! `.moon/tasks/all.yml`), and each project's `moon.yml`. A moon project id
//! becomes the vx project name, so `project:task` targets keep working;
//! its `layer`, `stack` and `language` become tags, and the workspace's
//! `constraints` boundaries on them (`moon_constraints`).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::{InitError, Result};
use super::model::{Plan, ProjectSpec};
use super::moon_task::{Inherited, translate_task};
use super::source::{describe, last_component, package_at, read_yaml, strings};

const WORKSPACE: &str = ".moon/workspace.yml";

pub(crate) fn read(root: &Path) -> Result<Plan> {
    let ws = read_yaml(root, WORKSPACE)?.unwrap_or(Value::Null);
    let Some(ws) = ws.as_object() else {
        return Err(InitError::NotAMapping { file: WORKSPACE });
    };
    let mut plan = Plan::default();
    for (key, _) in ws {
        match key.as_str() {
            "$schema" | "projects" | "vcs" | "telemetry" | "constraints" => {}
            _ => plan.note(WORKSPACE, key, "no vx equivalent"),
        }
    }
    if root.join(".moon/toolchain.yml").is_file() {
        plan.note(".moon/toolchain.yml", "(whole file)", "vx does not install or pin toolchains");
    }
    let inherited = read_inherited(root, &mut plan)?;
    let projects = project_dirs(root, ws.get("projects"), &mut plan)?;
    plan.projects_globs = projects.values().cloned().collect();
    plan.projects_globs.sort();
    for (id, dir) in &projects {
        let spec = translate_project(root, id, dir, &inherited, &mut plan)?;
        plan.projects.push(spec);
    }
    super::moon_constraints::translate_constraints(WORKSPACE, ws.get("constraints"), &mut plan);
    Ok(plan)
}

/// Project id → directory, relative to the root.
type ProjectDirs = BTreeMap<String, String>;

/// Globs name directories (or their `moon.yml`); an id is the directory
/// name unless `moon.yml` sets `id`.
fn project_dirs(root: &Path, projects: Option<&Value>, plan: &mut Plan) -> Result<ProjectDirs> {
    let mut out = BTreeMap::new();
    let (globs, sources) = match projects {
        None => (Vec::new(), Map::new()),
        Some(Value::Array(_)) => (projects.and_then(strings).unwrap_or_default(), Map::new()),
        Some(Value::Object(o)) if o.contains_key("globs") || o.contains_key("sources") => (
            o.get("globs").and_then(strings).unwrap_or_default(),
            o.get("sources").and_then(Value::as_object).cloned().unwrap_or_default(),
        ),
        Some(Value::Object(o)) => (Vec::new(), o.clone()),
        Some(other) => {
            plan.note(WORKSPACE, "projects", format!("unreadable value {}", describe(other)));
            (Vec::new(), Map::new())
        }
    };
    let (exclude, include): (Vec<String>, Vec<String>) = globs.into_iter().partition(|g| g.starts_with('!'));
    let exclude: Vec<glob::Pattern> =
        exclude.iter().filter_map(|g| glob::Pattern::new(g.trim_start_matches('!')).ok()).collect();
    let escaped = glob::Pattern::escape(&root.to_string_lossy());
    for pattern in include {
        let full = format!("{escaped}/{}", pattern.trim_start_matches("./").trim_end_matches('/'));
        let paths = glob::glob(&full).map_err(|e| InitError::BadGlob {
            file: WORKSPACE,
            pattern: crate::error::one_line(&pattern),
            why: crate::error::one_line(&e.to_string()),
        })?;
        for path in paths.flatten() {
            let dir = if path.file_name().is_some_and(|n| n == "moon.yml") {
                path.parent().map(Path::to_path_buf)
            } else {
                Some(path)
            };
            let Some(dir) = dir.filter(|d| d.is_dir()) else { continue };
            let Ok(rel) = dir.strip_prefix(root) else { continue };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if rel.is_empty()
                || rel.split('/').any(|c| c == "node_modules" || c.starts_with('.'))
                || exclude.iter().any(|e| e.matches(&rel))
            {
                continue;
            }
            let id = read_yaml(root, &format!("{rel}/moon.yml"))?
                .and_then(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| last_component(&rel).to_string());
            out.insert(id, rel);
        }
    }
    for (id, path) in sources {
        match path.as_str() {
            Some(".") | Some("") => {
                plan.note(WORKSPACE, format!("projects.{id}"), "a project at the workspace root is not translated")
            }
            Some(p) => {
                out.insert(id, p.trim_start_matches("./").trim_end_matches('/').to_string());
            }
            None => plan.note(WORKSPACE, format!("projects.{id}"), format!("unreadable path {}", describe(&path))),
        }
    }
    Ok(out)
}

/// `.moon/tasks.yml` (moon 1) or `.moon/tasks/all.yml` (moon 2): tasks,
/// file groups, implicit deps and inputs for every project.
fn read_inherited(root: &Path, plan: &mut Plan) -> Result<Inherited> {
    let mut inherited = Inherited::default();
    if let Ok(entries) = std::fs::read_dir(root.join(".moon/tasks")) {
        let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        for name in names.into_iter().filter(|n| n != "all.yml") {
            plan.note(
                &format!(".moon/tasks/{name}"),
                "(whole file)",
                "tasks inherited by language, stack or tag are not translated",
            );
        }
    }
    for file in [".moon/tasks.yml", ".moon/tasks/all.yml"] {
        let Some(value) = read_yaml(root, file)? else { continue };
        for (key, v) in value.as_object().into_iter().flatten() {
            match key.as_str() {
                "$schema" => {}
                "tasks" => inherited.tasks.extend(
                    v.as_object().cloned().unwrap_or_default().into_iter().map(|(k, t)| (k, (file.to_string(), t))),
                ),
                "fileGroups" => inherited.file_groups.extend(v.as_object().cloned().unwrap_or_default()),
                "implicitDeps" => inherited.deps.extend(v.as_array().cloned().unwrap_or_default()),
                "implicitInputs" => inherited.inputs.extend(strings(v).unwrap_or_default()),
                _ => plan.note(file, key, "no vx equivalent"),
            }
        }
    }
    Ok(inherited)
}

fn translate_project(root: &Path, id: &str, dir: &str, inherited: &Inherited, plan: &mut Plan) -> Result<ProjectSpec> {
    let pkg = package_at(root, dir)?;
    let file = format!("{dir}/moon.yml");
    let config = read_yaml(root, &file)?.and_then(|v| v.as_object().cloned()).unwrap_or_default();
    let mut spec = ProjectSpec {
        dir: dir.to_string(),
        name: id.to_string(),
        write_name: true,
        has_package_json: pkg.has_package_json,
        scripts: pkg.scripts.clone(),
        ..ProjectSpec::default()
    };
    let mut groups = inherited.file_groups.clone();
    groups.extend(config.get("fileGroups").and_then(Value::as_object).cloned().unwrap_or_default());
    let env = config.get("env").and_then(Value::as_object).cloned().unwrap_or_default();
    let inheritance = config.get("workspace").and_then(|w| w.get("inheritedTasks"));
    for (key, value) in &config {
        match key.as_str() {
            "$schema" | "id" | "tasks" | "fileGroups" | "env" | "language" | "layer" | "type" | "stack" | "project"
            | "owners" => {}
            "tags" => spec.tags = strings(value).unwrap_or_default(),
            "dependsOn" => {
                for dep in value.as_array().into_iter().flatten() {
                    match dep.as_str().or_else(|| dep.get("id").and_then(Value::as_str)) {
                        Some(d) => spec.depends_on.push(d.to_string()),
                        None => plan.note(&file, "dependsOn", format!("unreadable entry {}", describe(dep))),
                    }
                }
            }
            "workspace" => {
                if inheritance.and_then(|i| i.get("rename")).is_some() {
                    plan.note(
                        &file,
                        "workspace.inheritedTasks.rename",
                        "no vx equivalent; inherited tasks keep their names",
                    );
                }
            }
            "platform" | "toolchain" | "toolchains" => {
                plan.note(&file, key, "vx runs commands with node_modules/.bin on PATH and selects no toolchain")
            }
            _ => plan.note(&file, key, "no vx equivalent"),
        }
    }
    for tag in super::moon_constraints::metadata_tags(&config) {
        if !spec.tags.contains(&tag) {
            spec.tags.push(tag);
        }
    }
    let mut tasks: BTreeMap<String, (String, Map<String, Value>)> = BTreeMap::new();
    for (name, (from, def)) in &inherited.tasks {
        if inherits(inheritance, name) {
            tasks.insert(name.clone(), (from.clone(), def.as_object().cloned().unwrap_or_default()));
        }
    }
    for (name, def) in config.get("tasks").and_then(Value::as_object).into_iter().flatten() {
        let entry = tasks.entry(name.clone()).or_insert_with(|| (file.clone(), Map::new()));
        entry.0 = file.clone();
        entry.1.extend(def.as_object().cloned().unwrap_or_default());
    }
    for (name, (from, def)) in tasks {
        let ctx = super::moon_task::TaskCtx { file: &from, name: &name, dir, groups: &groups, env: &env, inherited };
        let task = translate_task(&def, &ctx, plan);
        spec.tasks.insert(name, task);
    }
    Ok(spec)
}

/// `workspace.inheritedTasks` `include` / `exclude`.
fn inherits(rules: Option<&Value>, task: &str) -> bool {
    let listed = |key: &str| rules.and_then(|r| r.get(key)).and_then(strings);
    if listed("exclude").is_some_and(|l| l.iter().any(|t| t == task)) {
        return false;
    }
    listed("include").is_none_or(|l| l.iter().any(|t| t == task))
}
