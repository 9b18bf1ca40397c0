//! Turborepo: `turbo.json` or `turbo.jsonc` at the root (JSONC, `tasks` or
//! turbo 1's `pipeline`), each package's own `turbo.json` (`extends:
//! ["//"]`), and the packages of the JavaScript workspace, or the root
//! package alone when there are no workspaces (turbo's single-package
//! mode).
//!
//! As in turbo, a task applies to every package: a package with the script
//! runs it; one without keeps a no-op whose own `dependsOn` still applies,
//! written as a vx group, so both tools plan the same tasks. `pkg#task`
//! configures one package's task and `//#task` a root task, which makes
//! the root a project with only those tasks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value};

use super::error::{InitError, Result};
use super::model::{Dep, Note, Plan, ProjectSpec, TaskSpec};
use super::source::{Package, describe, js_packages, js_workspace_globs, package_at, read_jsonc, strings};
use super::turbo_task::{Merged, ROOT_PACKAGE, TaskCtx, env_names, translate_task};

const FILES: [&str; 2] = ["turbo.json", "turbo.jsonc"];

pub(crate) fn read(root: &Path) -> Result<Plan> {
    let Some((file, json)) = read_turbo_file(root, "")? else {
        return Err(InitError::NoMarker { marker: FILES[0], root: root.to_path_buf() });
    };
    let file: &'static str = if file == FILES[0] { FILES[0] } else { FILES[1] };
    let Some(top) = json.as_object() else {
        return Err(InitError::NotAnObject { file });
    };
    let globs = js_workspace_globs(root)?;
    let mut root_pkg = package_at(root, ".")?;
    if globs.is_empty() && !root_pkg.has_package_json {
        return Err(InitError::NoPackages);
    }
    let single = globs.is_empty();
    let packages = if single { Vec::new() } else { js_packages(root, &globs)? };
    let mut plan =
        Plan { source: file.to_string(), projects_globs: globs, read: vec![file.to_string()], ..Plan::default() };
    read_top_level(file, top, &mut plan);
    let tasks_key = if top.contains_key("tasks") { "tasks" } else { "pipeline" };
    let empty = Map::new();
    let tasks = top.get(tasks_key).and_then(Value::as_object).unwrap_or(&empty);
    // The root package is `//` in turbo's ids (`//#lint`), and so in
    // vx's; a single-package repository's one project keeps its name.
    let root_name =
        if single { root_pkg.package_name.clone().unwrap_or_else(|| dir_name(root)) } else { ROOT_PACKAGE.to_string() };
    let table = TaskTable::split(file, tasks_key, tasks, &packages, &mut plan);
    let ws = Ws { packages: &packages, root_name: &root_name, table: &table };
    for pkg in &packages {
        let project = ws.package(root, pkg, &mut plan)?;
        plan.projects.push(project);
    }
    let root_tasks: BTreeSet<&str> = if single {
        table.generic.keys().chain(table.root.keys()).map(String::as_str).collect()
    } else {
        table.root.keys().map(String::as_str).collect()
    };
    if single || !root_tasks.is_empty() {
        if !single {
            // Only `//#task` entries are root tasks; the root's other scripts
            // (often `turbo run build` itself) are not.
            root_pkg.scripts.retain(|name, _| root_tasks.contains(name.as_str()));
        }
        let written = root_pkg.package_name.replace(root_name.clone());
        let mut project = ws.root_project(&root_pkg, &root_tasks, &mut plan)?;
        // vx would name it after its package.json: say `//` in vx.toml.
        project.write_name = written.as_deref() != Some(project.name.as_str());
        plan.projects.push(project);
    }
    note_persistent_dependencies(&mut plan);
    Ok(plan)
}

/// `dir/turbo.json` or `dir/turbo.jsonc` (never both, as turbo requires),
/// read as JSONC: the file's path from the root and its value.
fn read_turbo_file(root: &Path, dir: &str) -> Result<Option<(String, Value)>> {
    let path = |name: &str| if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
    let present: Vec<String> = FILES.iter().map(|f| path(f)).filter(|p| root.join(p).is_file()).collect();
    match present.as_slice() {
        [] => Ok(None),
        [one] => Ok(read_jsonc(root, one)?.map(|v| (one.clone(), v))),
        _ => Err(InitError::BothTurboFiles { dir: if dir.is_empty() { ".".to_string() } else { dir.to_string() } }),
    }
}

fn dir_name(root: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    root.file_name().map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned())
}

/// The root file's tasks, split by whom they configure.
#[derive(Default)]
struct TaskTable {
    /// `task`: every package's.
    generic: BTreeMap<String, Layer>,
    /// `pkg#task`: by package name, then task.
    specific: BTreeMap<(String, String), Layer>,
    /// `//#task`: the root package's.
    root: BTreeMap<String, Layer>,
}

/// One definition of a task and where it was written.
struct Layer {
    def: Map<String, Value>,
    file: String,
    at: String,
}

impl TaskTable {
    fn split(file: &str, tasks_key: &str, tasks: &Map<String, Value>, packages: &[Package], plan: &mut Plan) -> Self {
        let mut table = TaskTable::default();
        for (key, def) in tasks {
            let at = format!("{tasks_key}.{key}");
            let Some(def) = def.as_object() else {
                plan.note(file, &at, format!("expected an object, got {}", describe(def)));
                continue;
            };
            let layer = Layer { def: def.clone(), file: file.to_string(), at: at.clone() };
            match key.split_once('#') {
                Some((ROOT_PACKAGE, task)) => {
                    table.root.insert(task.to_string(), layer);
                }
                Some((pkg, task)) if packages.iter().any(|p| p.package_name.as_deref() == Some(pkg)) => {
                    table.specific.insert((pkg.to_string(), task.to_string()), layer);
                }
                Some((pkg, _)) => plan.note(file, at, format!("no package named `{pkg}`; not translated")),
                None => {
                    table.generic.insert(key.clone(), layer);
                }
            }
        }
        table
    }
}

/// What every package's translation shares.
struct Ws<'a> {
    packages: &'a [Package],
    root_name: &'a str,
    table: &'a TaskTable,
}

impl Ws<'_> {
    /// One workspace package: every task turbo would give it.
    fn package(&self, root: &Path, pkg: &Package, plan: &mut Plan) -> Result<ProjectSpec> {
        // A package file turbo cannot load fails the runs that include
        // the package, not the workspace: its tasks are translated from
        // the root file alone and marked.
        let own = match package_config(root, &pkg.dir, plan) {
            Ok(own) => own,
            Err(e) => {
                let why = crate::error::Error::from(e).to_string();
                plan.broken.push(super::model::Broken { project: pkg.vx_name(), task: None, why });
                None
            }
        };
        let pkg_name = pkg.package_name.clone().unwrap_or_default();
        let mut names: BTreeSet<&str> = self.table.generic.keys().map(String::as_str).collect();
        names.extend(self.table.specific.keys().filter(|(p, _)| *p == pkg_name).map(|(_, t)| t.as_str()));
        if let Some((_, tasks)) = &own {
            names.extend(tasks.keys().map(String::as_str));
        }
        let mut project = self.project_spec(pkg);
        for name in names {
            let base = self.table.specific.get(&(pkg_name.clone(), name.to_string())).or(self.table.generic.get(name));
            let mut merged = Merged::default();
            if let Some(layer) = base {
                merged.overlay(&layer.def, &layer.file, &layer.at);
            }
            if let Some((file, over)) = own.as_ref().and_then(|(f, t)| t.get(name).map(|d| (f, d))) {
                merged.overlay(over, file, &format!("tasks.{name}"));
            }
            self.place(&mut project, name, &merged, pkg.scripts.contains_key(name), plan)?;
        }
        Ok(project)
    }

    /// The root package: its `//#task` tasks, or in a single-package
    /// repository every task.
    fn root_project(&self, pkg: &Package, names: &BTreeSet<&str>, plan: &mut Plan) -> Result<ProjectSpec> {
        let mut project = self.project_spec(pkg);
        for &name in names {
            let mut merged = Merged::default();
            for layer in [self.table.generic.get(name), self.table.root.get(name)].into_iter().flatten() {
                merged.overlay(&layer.def, &layer.file, &layer.at);
            }
            self.place(&mut project, name, &merged, pkg.scripts.contains_key(name), plan)?;
        }
        Ok(project)
    }

    fn project_spec(&self, pkg: &Package) -> ProjectSpec {
        ProjectSpec {
            dir: pkg.dir.clone(),
            name: pkg.vx_name(),
            write_name: false,
            has_package_json: pkg.has_package_json,
            scripts: pkg.scripts.clone(),
            ..ProjectSpec::default()
        }
    }

    /// A task with its script, else turbo's no-op, written as a group: it
    /// runs nothing, and its own `dependsOn` still applies (turbo's
    /// `--dry=json` lists it with the command `<NONEXISTENT>`).
    fn place(
        &self,
        project: &mut ProjectSpec,
        name: &str,
        def: &Merged,
        has_script: bool,
        plan: &mut Plan,
    ) -> Result<()> {
        let dir = if project.dir == "." { "" } else { project.dir.as_str() };
        let ctx =
            TaskCtx { packages: self.packages, root_name: self.root_name, project: &project.name, task: name, dir };
        let task = translate_task(def, &ctx, plan)?;
        if has_script {
            project.tasks.insert(name.to_string(), task);
        } else {
            let group = TaskSpec {
                depends_on: task.depends_on,
                group: true,
                origin: task.origin,
                description: task.description,
                ..TaskSpec::default()
            };
            project.tasks.insert(name.to_string(), group);
        }
        Ok(())
    }
}

/// A package's own `turbo.json`: its path and its task tables by name.
type PackageConfig = (String, BTreeMap<String, Map<String, Value>>);

/// A package's own `turbo.json`, refused as turbo refuses it: without
/// `extends: ["//"]`, or with `pkg#task` keys.
fn package_config(root: &Path, dir: &str, plan: &mut Plan) -> Result<Option<PackageConfig>> {
    let Some((file, json)) = read_turbo_file(root, dir)? else { return Ok(None) };
    plan.read.push(file.clone());
    let invalid =
        |why: String, hint: &str| InitError::InvalidPackageConfig { file: file.clone(), why, hint: hint.to_string() };
    let Some(top) = json.as_object() else {
        return Err(invalid(format!("expected a JSON object, got {}", describe(&json)), "fix the file first"));
    };
    match top.get("extends").and_then(strings) {
        None => {
            return Err(invalid(
                "a package turbo.json needs `\"extends\": [\"//\"]`".to_string(),
                "add `\"extends\": [\"//\"]`, as turbo requires",
            ));
        }
        Some(list) if !list.iter().any(|e| e == ROOT_PACKAGE) => {
            return Err(invalid(
                format!("`extends` must name the root (`//`), got {}", describe(&top["extends"])),
                "write `\"extends\": [\"//\"]`",
            ));
        }
        Some(_) => {}
    }
    let mut out = BTreeMap::new();
    for (key, value) in top {
        match key.as_str() {
            "$schema" | "extends" => {}
            "tasks" | "pipeline" => {
                for (name, def) in value.as_object().into_iter().flatten() {
                    if name.contains('#') {
                        return Err(invalid(
                            format!("{key}.{name}: a package turbo.json may not name a package's task (`pkg#task`)"),
                            "name the task alone (`build`); it applies to this package",
                        ));
                    }
                    match def.as_object() {
                        Some(def) => {
                            out.insert(name.clone(), def.clone());
                        }
                        None => plan.note(
                            &file,
                            format!("{key}.{name}"),
                            format!("expected an object, got {}", describe(def)),
                        ),
                    }
                }
            }
            _ => plan.note(&file, key, "no vx equivalent"),
        }
    }
    Ok(Some((file, out)))
}

/// The top-level keys: `globalDependencies` becomes `global-inputs`,
/// `globalEnv` / `globalPassThroughEnv` `global-env` / `global-pass-env`,
/// `envMode` `env-mode`.
fn read_top_level(file: &str, top: &Map<String, Value>, plan: &mut Plan) {
    for (key, value) in top {
        match key.as_str() {
            "$schema" | "tasks" | "pipeline" => {}
            "globalDependencies" => match strings(value) {
                Some(globs) => plan.global_inputs.extend(globs),
                None => plan.note(file, key, format!("expected a list of globs, got {}", describe(value))),
            },
            "globalEnv" | "globalPassThroughEnv" => {
                let mut notes = Vec::new();
                let names = match strings(value) {
                    Some(items) => env_names(items, &mut |why| notes.push(why)),
                    None => {
                        notes.push(format!("expected a list of variable names, got {}", describe(value)));
                        Vec::new()
                    }
                };
                notes.into_iter().for_each(|why| plan.note(file, key, why));
                match key.as_str() {
                    "globalEnv" => plan.global_env.extend(names),
                    _ => plan.global_pass_env.extend(names),
                }
            }
            "envMode" => match value.as_str() {
                Some(mode @ ("strict" | "loose")) => plan.env_mode = Some(mode.to_string()),
                _ => plan.note(file, key, format!("expected \"strict\" or \"loose\", got {}", describe(value))),
            },
            "ui" => plan.note(file, key, "vx chooses its output with `--log-order` and `--output-logs` per run"),
            "cacheDir" => plan.note(file, key, "vx keeps its cache in [cache] dir (default .vx/cache); set it by hand"),
            "remoteCache" => plan.note(file, key, "configure a cache-backend plugin (docs/plugins.md) instead"),
            _ => plan.note(file, key, "no vx equivalent"),
        }
    }
}

/// turbo refuses a task that depends on a persistent one; vx runs it once
/// the server is ready. The translation keeps the dependency and says so.
fn note_persistent_dependencies(plan: &mut Plan) {
    let persistent: BTreeSet<(&str, &str)> = plan
        .projects
        .iter()
        .flat_map(|p| p.tasks.iter().filter(|(_, t)| t.persistent).map(|(n, _)| (p.name.as_str(), n.as_str())))
        .collect();
    let mut differences = Vec::new();
    for project in &plan.projects {
        for task in project.tasks.values() {
            for dep in &task.depends_on {
                let hit = match dep {
                    Dep::Local(t) => persistent.contains(&(project.name.as_str(), t.as_str())),
                    Dep::Exact(p, t) => persistent.contains(&(p.as_str(), t.as_str())),
                    Dep::Upstream(t) => {
                        persistent.iter().any(|&(p, pt)| pt == t.as_str() && p != project.name.as_str())
                    }
                };
                if hit {
                    let target = match dep {
                        Dep::Upstream(t) => format!("^{t}"),
                        Dep::Local(t) => t.clone(),
                        Dep::Exact(p, t) => format!("{p}#{t}"),
                    };
                    differences.push(Note {
                        file: task.origin.0.clone(),
                        setting: format!("{}.dependsOn", task.origin.1),
                        why: format!(
                            "`{target}` is persistent: turbo refuses a dependency on a persistent task; vx keeps it and \
                             starts this task once the server is ready (set `ready` on it, docs/config.md)"
                        ),
                    });
                }
            }
        }
    }
    differences.sort();
    differences.dedup();
    plan.differences.extend(differences);
}
