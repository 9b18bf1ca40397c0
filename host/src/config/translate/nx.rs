//! Nx: `nx.json` (`targetDefaults`, `namedInputs`), every `project.json`
//! (and a `package.json` `nx` field), and `package.json` scripts, which Nx
//! also treats as targets. A target translates when its executor is
//! `nx:run-commands`, `nx:run-script` or `nx:noop`, or when it is a
//! script; `{projectRoot}` and `{workspaceRoot}` are resolved against the
//! project directory, named inputs are expanded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value};

use super::error::{InitError, Result};
use super::model::{Dep, Plan, ProjectSpec, TaskSpec};
use super::nx_inputs::{Resolver, resolve_outputs};
use super::source::{Package, describe, js_packages, js_workspace_globs, package_at, read_json, sh_quote, strings};

const FILE: &str = "nx.json";

/// One Nx project: its package and where its targets come from.
struct NxProject {
    pkg: Package,
    name: String,
    /// `(file, value)` of `project.json`, or `package.json` with its `nx` field.
    config: Option<(String, Map<String, Value>)>,
}

pub(crate) fn read(root: &Path) -> Result<Plan> {
    let nx = read_json(root, FILE)?.unwrap_or(Value::Null);
    let Some(nx) = nx.as_object() else {
        return Err(InitError::NotAnObject { file: FILE });
    };
    let mut plan = Plan::default();
    let defaults = nx.get("targetDefaults").and_then(Value::as_object).cloned().unwrap_or_default();
    let named = nx.get("namedInputs").and_then(Value::as_object).cloned().unwrap_or_default();
    let cacheable = cacheable_operations(nx);
    read_top_level(nx, &mut plan);
    let projects = find_projects(root, &mut plan)?;
    let ctx = Ctx { defaults: &defaults, named: &named, cacheable: &cacheable };
    for p in &projects {
        let spec = translate_project(p, &ctx, &mut plan);
        plan.projects.push(spec);
    }
    Ok(plan)
}

struct Ctx<'a> {
    defaults: &'a Map<String, Value>,
    named: &'a Map<String, Value>,
    cacheable: &'a BTreeSet<String>,
}

fn cacheable_operations(nx: &Map<String, Value>) -> BTreeSet<String> {
    nx.get("tasksRunnerOptions")
        .and_then(|t| t.get("default"))
        .and_then(|d| d.get("options"))
        .and_then(|o| o.get("cacheableOperations"))
        .and_then(strings)
        .unwrap_or_default()
        .into_iter()
        .collect()
}

fn read_top_level(nx: &Map<String, Value>, plan: &mut Plan) {
    for (key, value) in nx {
        match key.as_str() {
            "$schema" | "targetDefaults" | "namedInputs" | "tasksRunnerOptions" | "npmScope" => {}
            "plugins" => {
                for plugin in value.as_array().into_iter().flatten() {
                    let name = plugin.as_str().or_else(|| plugin.get("plugin").and_then(Value::as_str));
                    plan.note(
                        FILE,
                        format!("plugins `{}`", name.unwrap_or("?")),
                        "targets inferred by Nx plugins are not translated; declare them in project.json or vx.toml",
                    );
                }
            }
            "defaultBase" | "affected" => plan.note(
                FILE,
                key,
                "vx `--affected` compares with the merge base of main (or master), or `--affected=REV`",
            ),
            "cacheDirectory" => plan.note(FILE, key, "vx keeps its cache in [cache] dir (default .vx/cache)"),
            "parallel" => plan.note(FILE, key, "vx sets this per run with `--concurrency`"),
            _ => plan.note(FILE, key, "no vx equivalent"),
        }
    }
}

/// JavaScript workspace packages, plus every directory with a
/// `project.json` (found through `.gitignore`, outside `node_modules`).
fn find_projects(root: &Path, plan: &mut Plan) -> Result<Vec<NxProject>> {
    let globs = js_workspace_globs(root)?;
    let mut dirs: BTreeMap<String, Package> =
        js_packages(root, &globs)?.into_iter().map(|p| (p.dir.clone(), p)).collect();
    let mut extra = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .max_depth(Some(8))
        .filter_entry(|e| e.file_name() != "node_modules" && e.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        if entry.file_name() != "project.json" {
            continue;
        }
        let Some(dir) = entry.path().parent().and_then(|d| d.strip_prefix(root).ok()) else { continue };
        let dir = dir.to_string_lossy().replace('\\', "/");
        if dir.is_empty() {
            plan.note("project.json", "(root project)", "a project at the workspace root is not translated");
            continue;
        }
        if !dirs.contains_key(&dir) {
            dirs.insert(dir.clone(), package_at(root, &dir)?);
            extra.push(dir);
        }
    }
    extra.sort();
    plan.projects_globs = globs;
    plan.projects_globs.extend(extra);
    let mut out = Vec::new();
    for (dir, pkg) in dirs {
        let project_json = format!("{dir}/project.json");
        let config = match read_json(root, &project_json)? {
            Some(Value::Object(map)) => Some((project_json, map)),
            Some(other) => {
                return Err(InitError::ProjectNotAnObject { file: project_json, got: describe(&other) });
            }
            None => read_json(root, &format!("{dir}/package.json"))?
                .and_then(|p| p.get("nx").and_then(Value::as_object).cloned())
                .map(|nx| (format!("{dir}/package.json"), nx)),
        };
        let name = config
            .as_ref()
            .and_then(|(_, c)| c.get("name").and_then(Value::as_str))
            .map_or_else(|| pkg.vx_name(), str::to_string);
        out.push(NxProject { pkg, name, config });
    }
    Ok(out)
}

fn translate_project(p: &NxProject, ctx: &Ctx<'_>, plan: &mut Plan) -> ProjectSpec {
    let mut spec = ProjectSpec {
        dir: p.pkg.dir.clone(),
        name: p.name.clone(),
        write_name: p.name != p.pkg.vx_name(),
        has_package_json: p.pkg.has_package_json,
        scripts: p.pkg.scripts.clone(),
        ..ProjectSpec::default()
    };
    let empty = Map::new();
    let (file, config) = p.config.as_ref().map_or(("", &empty), |(f, c)| (f.as_str(), c));
    for (key, value) in config {
        match key.as_str() {
            "$schema" | "name" | "root" | "sourceRoot" | "projectType" | "targets" | "namedInputs" | "metadata" => {}
            "tags" => spec.tags = strings(value).unwrap_or_default(),
            "implicitDependencies" => {
                for dep in strings(value).unwrap_or_default() {
                    if dep.starts_with('!') || dep.contains('*') {
                        plan.note(file, format!("implicitDependencies `{dep}`"), "vx depends-on lists project names");
                    } else {
                        spec.depends_on.push(dep);
                    }
                }
            }
            _ => plan.note(file, key, "no vx equivalent"),
        }
    }
    let targets = config.get("targets").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut named = ctx.named.clone();
    named.extend(config.get("namedInputs").and_then(Value::as_object).cloned().unwrap_or_default());
    let names: BTreeSet<&String> = targets.keys().chain(p.pkg.scripts.keys()).collect();
    for name in names {
        let own = targets.get(name).and_then(Value::as_object);
        let executor = own
            .and_then(executor_of)
            .or_else(|| ctx.defaults.get(name).and_then(Value::as_object).and_then(executor_of));
        let by_name = ctx.defaults.get_key_value(name.as_str());
        let by_executor = executor.as_deref().and_then(|e| ctx.defaults.get_key_value(e));
        let default = by_name.or(by_executor).and_then(|(k, v)| v.as_object().map(|o| (k.as_str(), o)));
        if own.is_none() && default.is_none() && !ctx.cacheable.contains(name) {
            continue;
        }
        let target = Target { name, own: own.map(|o| (file, o)), default, executor, named: &named };
        if let Some(task) = translate_target(&target, &spec, ctx, plan) {
            spec.tasks.insert(name.clone(), task);
        }
    }
    spec
}

fn executor_of(t: &Map<String, Value>) -> Option<String> {
    match t.get("executor").and_then(Value::as_str) {
        Some(e) => Some(e.to_string()),
        None => t.contains_key("command").then(|| "nx:run-commands".to_string()),
    }
}

/// A target: its own table (file, value) and the `targetDefaults` entry
/// (its key, the target name or the executor, and value).
struct Target<'a> {
    name: &'a str,
    own: Option<(&'a str, &'a Map<String, Value>)>,
    default: Option<(&'a str, &'a Map<String, Value>)>,
    executor: Option<String>,
    named: &'a Map<String, Value>,
}

impl Target<'_> {
    /// A key of the target, its own table first: (value, file, setting).
    fn get(&self, key: &str) -> Option<(&Value, String, String)> {
        if let Some((file, own)) = self.own
            && let Some(v) = own.get(key)
        {
            return Some((v, file.to_string(), format!("targets.{}.{key}", self.name)));
        }
        let (at, d) = self.default?;
        let v = d.get(key)?;
        Some((v, FILE.to_string(), format!("targetDefaults.{at}.{key}")))
    }

    /// `options`, the target's own over the defaults', key by key.
    fn options(&self) -> Map<String, Value> {
        let mut out =
            self.default.and_then(|(_, d)| d.get("options")).and_then(Value::as_object).cloned().unwrap_or_default();
        if let Some(own) = self.own.and_then(|(_, o)| o.get("options")).and_then(Value::as_object) {
            out.extend(own.clone());
        }
        if let Some(cmd) = self.own.and_then(|(_, o)| o.get("command")) {
            out.insert("command".to_string(), cmd.clone());
        }
        out
    }

    fn keys(&self) -> BTreeSet<String> {
        [self.own.map(|(_, o)| o), self.default.map(|(_, d)| d)]
            .into_iter()
            .flatten()
            .flat_map(|m| m.keys().cloned())
            .collect()
    }
}

fn translate_target(t: &Target<'_>, spec: &ProjectSpec, ctx: &Ctx<'_>, plan: &mut Plan) -> Option<TaskSpec> {
    let (file, at) = t.own.map_or((FILE.to_string(), format!("targetDefaults.{}", t.name)), |(f, _)| {
        (f.to_string(), format!("targets.{}", t.name))
    });
    let options = t.options();
    let command = match t.executor.as_deref() {
        None if spec.scripts.contains_key(t.name) => None,
        None => {
            plan.note(&file, &at, "no executor, command or package.json script; not written");
            return None;
        }
        Some("nx:run-script") => run_script(t.name, &options, spec),
        Some("nx:run-commands") => Some(run_commands(&options, spec, &file, &at, plan)?),
        Some("nx:noop") => Some("true".to_string()),
        Some(other) => {
            plan.note(
                &file,
                format!("{at}.executor"),
                format!("executor `{other}` has no vx equivalent (nx:run-commands, nx:run-script and nx:noop translate); target not written"),
            );
            return None;
        }
    };
    let mut task = TaskSpec { command, origin: (file.clone(), at.clone()), ..TaskSpec::default() };
    task.cache = ctx.cacheable.contains(t.name);
    for key in t.keys() {
        let Some((value, vfile, setting)) = t.get(&key) else { continue };
        match key.as_str() {
            "metadata" => {
                task.description = value.get("description").and_then(Value::as_str).map(str::to_string);
            }
            "executor" | "options" | "command" => {}
            "dependsOn" => task.depends_on = depends_on(value, &vfile, &setting, plan),
            "inputs" => {
                let mut resolver = Resolver { dir: &spec.dir, named: t.named, file: &vfile, setting: &setting, plan };
                let (inputs, env) = resolver.inputs(value);
                task.inputs = Some(inputs);
                task.env.extend(env);
            }
            "outputs" => task.outputs = resolve_outputs(value, &spec.dir, &options, &vfile, &setting, plan),
            "cache" => task.cache = value.as_bool().unwrap_or(false),
            "continuous" => task.persistent = value.as_bool().unwrap_or(false),
            "configurations" | "defaultConfiguration" => {
                plan.note(&vfile, setting, "vx tasks have one command; write a task per configuration")
            }
            _ => plan.note(&vfile, setting, "no vx equivalent"),
        }
    }
    Some(task)
}

fn run_script(name: &str, options: &Map<String, Value>, spec: &ProjectSpec) -> Option<String> {
    let script = options.get("script").and_then(Value::as_str).unwrap_or(name);
    match spec.scripts.get(script) {
        _ if script == name && spec.scripts.contains_key(name) => None,
        Some(text) => Some(text.clone()),
        None => Some(format!("npm run {}", sh_quote(script))),
    }
}

/// `nx:run-commands`: `command` or `commands`, `args`, and `cwd` (relative
/// to the workspace root). Several commands run one after another.
fn run_commands(
    options: &Map<String, Value>,
    spec: &ProjectSpec,
    file: &str,
    at: &str,
    plan: &mut Plan,
) -> Option<String> {
    let mut commands: Vec<String> = Vec::new();
    for c in options.get("commands").and_then(Value::as_array).into_iter().flatten() {
        match c.as_str().or_else(|| c.get("command").and_then(Value::as_str)) {
            Some(s) => commands.push(s.to_string()),
            None => plan.note(file, format!("{at}.options.commands"), format!("unreadable entry {}", describe(c))),
        }
    }
    if let Some(c) = options.get("command").and_then(Value::as_str) {
        commands.push(c.to_string());
    }
    if commands.is_empty() {
        plan.note(file, format!("{at}.options"), "nx:run-commands without a command; target not written");
        return None;
    }
    let parallel = options.get("parallel").and_then(Value::as_bool).unwrap_or(true);
    if commands.len() > 1 && parallel {
        plan.note(file, format!("{at}.options.parallel"), "vx runs the commands one after another (`&&`)");
    }
    let mut line = commands.join(" && ");
    if let Some(args) = options.get("args").and_then(strings) {
        line = format!("{line} {}", args.join(" "));
    }
    if let Some(cwd) = options.get("cwd").and_then(Value::as_str) {
        let up = spec.dir.split('/').map(|_| "..").collect::<Vec<_>>().join("/");
        let to = if cwd.is_empty() || cwd == "." { up } else { format!("{up}/{cwd}") };
        line = format!("cd {} && {line}", sh_quote(&to));
    }
    for key in options.keys() {
        if !matches!(key.as_str(), "command" | "commands" | "args" | "cwd" | "parallel") {
            plan.note(file, format!("{at}.options.{key}"), "no vx equivalent for this run-commands option");
        }
    }
    Some(line)
}

fn depends_on(value: &Value, file: &str, setting: &str, plan: &mut Plan) -> Vec<Dep> {
    let mut out = Vec::new();
    for dep in value.as_array().into_iter().flatten() {
        if let Some(s) = dep.as_str() {
            match s.strip_prefix('^') {
                Some(t) => out.push(Dep::Upstream(t.to_string())),
                None => match s.split_once(':') {
                    Some((p, t)) if !p.is_empty() => out.push(Dep::Exact(p.to_string(), t.to_string())),
                    _ => out.push(Dep::Local(s.to_string())),
                },
            }
            continue;
        }
        let Some(target) = dep.get("target").and_then(Value::as_str) else {
            plan.note(file, setting, format!("unreadable entry {}", describe(dep)));
            continue;
        };
        if dep.get("params").is_some() {
            plan.note(file, setting, format!("`params` of `{target}`: vx passes no arguments to dependencies"));
        }
        let projects = dep.get("projects");
        if dep.get("dependencies").and_then(Value::as_bool) == Some(true)
            || projects == Some(&Value::from("dependencies"))
        {
            out.push(Dep::Upstream(target.to_string()));
        } else if projects.is_none() || projects == Some(&Value::from("self")) {
            out.push(Dep::Local(target.to_string()));
        } else {
            for p in projects.and_then(strings).unwrap_or_default() {
                if p.contains(['*', '!']) || p.starts_with("tag:") {
                    plan.note(file, setting, format!("project pattern `{p}`: vx names projects one by one"));
                } else {
                    out.push(Dep::Exact(p, target.to_string()));
                }
            }
        }
    }
    out
}
