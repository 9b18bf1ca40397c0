//! A project's tasks: `package.json` scripts with their defaults, and
//! `[tasks.NAME]` tables checked field by field, each reference against
//! the projects and tasks the workspace declares.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::diag::{Source, did_you_mean};
use super::duration::parse_duration;
use super::error::Diagnostic;
use super::executor::ExecutorName;
use super::model::{Command, PluginSettings, Ready, Task, TaskOrigin, TaskRef};
use super::raw::{RawReady, RawTask};
use super::settings::{env_list, runtime_list};

/// The names every reference is checked against.
pub(crate) struct RefContext<'a> {
    /// Project names; indices are project ids.
    pub names: &'a [String],
    pub index: &'a HashMap<&'a str, usize>,
    /// Per project, every task name its files declare.
    pub task_names: &'a [BTreeSet<String>],
    /// The workspace root, to tell a root-anchored input from a path of
    /// this machine.
    pub root: &'a Path,
    /// The workspace's plugins, against which `executor = "…"` is checked;
    /// `None` while `vx plugin add` or `remove` edits them.
    pub plugins: Option<&'a BTreeMap<String, PluginSettings>>,
}

impl RefContext<'_> {
    pub(crate) fn unknown_project(
        &self,
        source: &Source,
        span: Option<std::ops::Range<usize>>,
        name: &str,
    ) -> Diagnostic {
        let hint = did_you_mean(name, self.names.iter().map(String::as_str));
        source.error(span, format!("unknown project `{name}`{hint}"))
    }
}

/// Project `me`'s tasks: its scripts, then its configured tasks (which
/// replace a script of the same name and may take its command).
pub(crate) fn project_tasks(
    me: usize,
    scripts: Option<&BTreeMap<String, String>>,
    configured: Option<(&Source, &BTreeMap<Spanned<String>, RawTask>)>,
    ctx: &RefContext<'_>,
) -> Result<BTreeMap<String, Task>, Diagnostic> {
    let mut tasks = BTreeMap::new();
    for (name, script) in scripts.into_iter().flatten() {
        let is_configured = configured.is_some_and(|(_, t)| t.keys().any(|k| k.get_ref() == name));
        if !is_configured {
            tasks.insert(name.clone(), script_task(name, script));
        }
    }
    if let Some((source, configured)) = configured {
        for (key, raw) in configured {
            let script = scripts.and_then(|s| s.get(key.get_ref())).map(String::as_str);
            let task = configured_task(me, key, raw, script, source, ctx)?;
            tasks.insert(task.name.clone(), task);
        }
    }
    Ok(tasks)
}

/// A `package.json` script with no `vx.toml` table: uncached, and ordered
/// after the same script in the project's dependencies, as `pnpm -r run`.
fn script_task(name: &str, script: &str) -> Task {
    Task {
        depends_on: vec![TaskRef::Upstream(name.to_string())],
        ..Task::plain(name, Command::Shell(script.to_string()), TaskOrigin::Script)
    }
}

/// One `[tasks.NAME]` table, checked in the order its fields are reported.
fn configured_task(
    me: usize,
    key: &Spanned<String>,
    raw: &RawTask,
    script: Option<&str>,
    source: &Source,
    ctx: &RefContext<'_>,
) -> Result<Task, Diagnostic> {
    let name = task_name(key, source)?;
    if raw.command.is_none() && script.is_none() && raw.depends_on.is_some() {
        return group_task(me, name, key, raw, source, ctx);
    }
    let command = task_command(&name, key, raw, script, source)?;
    let depends_on = match &raw.depends_on {
        Some(refs) => refs.iter().map(|r| parse_task_ref(me, r, source, ctx)).collect::<Result<_, _>>()?,
        None if script.is_some() => vec![TaskRef::Upstream(name.clone())],
        None => Vec::new(),
    };
    for out in raw.outputs.iter().flatten() {
        check_output(out, source, ctx.root)?;
    }
    for input in raw.inputs.iter().flatten() {
        check_anchored(input, source, ctx.root, "inputs")?;
    }
    let env = env_list(source, &raw.env)?;
    let pass_env = env_list(source, &raw.pass_env)?;
    let runtime = runtime_list(source, &raw.runtime)?;
    let inputs = strings(&raw.inputs);
    let outputs = strings(&raw.outputs).unwrap_or_default();
    let outputs_at = raw.outputs.iter().flatten().map(|o| source.locate(Some(o.span()))).collect();
    let persistent = raw.persistent.unwrap_or(false);
    let interactive = raw.interactive.unwrap_or(false);
    let cache = raw.cache.unwrap_or(!persistent && !interactive && (inputs.is_some() || !outputs.is_empty()));
    if persistent && cache {
        return Err(source
            .error(Some(key.span()), format!("task `{name}` is persistent and cached"))
            .with_hint("a server has no result to cache: set `cache = false` or drop `persistent`"));
    }
    if interactive && cache {
        return Err(source
            .error(Some(key.span()), format!("task `{name}` is interactive and cached"))
            .with_hint("what is typed into it is not part of its key: set `cache = false` or drop `interactive`"));
    }
    let ready = task_ready(raw, persistent, source)?;
    let retries = task_retries(raw, persistent, source)?;
    let (resources, mutex, priority) = super::schedule::task_schedule(raw, source)?;
    Ok(Task {
        name,
        command,
        depends_on,
        inputs,
        outputs,
        outputs_at,
        env,
        pass_env,
        runtime,
        timeout: duration(&raw.timeout, source)?,
        cache,
        persistent,
        interactive,
        ready,
        ready_timeout: duration(&raw.ready_timeout, source)?,
        executor: task_executor(raw, source, ctx)?,
        origin: TaskOrigin::Config,
        retries,
        sandbox: super::sandbox::task_sandbox(&raw.sandbox, source)?,
        resources,
        mutex,
        priority,
        description: raw.description.as_deref().map(crate::error::one_line),
    })
}

/// `retries`: a whole number, on a task that ends (a server that stops is
/// restarted by `vx watch`, not retried).
/// `executor = "…"`: a name the workspace has, when `ctx` checks them.
fn task_executor(raw: &RawTask, source: &Source, ctx: &RefContext<'_>) -> Result<ExecutorName, Diagnostic> {
    let Some(name) = &raw.executor else { return Ok(ExecutorName::Local) };
    let Some(plugins) = ctx.plugins else { return Ok(ExecutorName::new(name.get_ref())) };
    ExecutorName::checked(name.get_ref(), plugins).map_err(|unknown| {
        let shown = crate::error::one_line(name.get_ref());
        source.error(Some(name.span()), format!("unknown executor `{shown}`{}", unknown.suggestion)).with_hint(
            "executors are `local`, `remote` and the executor plugins of [plugins]; add one with `vx plugin add PATH --name NAME`",
        )
    })
}

fn task_retries(raw: &RawTask, persistent: bool, source: &Source) -> Result<u32, Diagnostic> {
    let Some(retries) = &raw.retries else { return Ok(0) };
    if persistent {
        return Err(source
            .error(Some(retries.span()), "`retries` applies only to tasks that end, not to persistent ones")
            .with_hint("remove `retries` or `persistent`"));
    }
    u32::try_from(*retries.get_ref()).map_err(|_| {
        source
            .error(Some(retries.span()), format!("`retries` must be 0 or more, got {}", retries.get_ref()))
            .with_hint("write `retries = 2` to run a failed attempt again up to 2 more times")
    })
}

/// A table with `depends-on` and no command of its own (nor a script to
/// take one from): a group. Keys that only mean something for a task that
/// runs are refused, so a forgotten `command` is not silently a group that
/// caches nothing.
fn group_task(
    me: usize,
    name: String,
    key: &Spanned<String>,
    raw: &RawTask,
    source: &Source,
    ctx: &RefContext<'_>,
) -> Result<Task, Diagnostic> {
    let refused = [
        ("outputs", raw.outputs.is_some()),
        ("inputs", raw.inputs.is_some()),
        ("persistent", raw.persistent == Some(true)),
        ("cache", raw.cache == Some(true)),
        ("ready", raw.ready.is_some()),
        ("executor", raw.executor.is_some()),
        ("pass-env", raw.pass_env.is_some()),
        ("runtime", raw.runtime.is_some()),
        ("retries", raw.retries.is_some()),
        ("sandbox", raw.sandbox.is_some()),
        ("resources", raw.resources.is_some()),
        ("mutex", raw.mutex.is_some()),
        ("priority", raw.priority.is_some()),
    ];
    if let Some((field, _)) = refused.iter().find(|(_, set)| *set) {
        return Err(source
            .error(
                Some(key.span()),
                format!("task `{name}` has no command, so it is a group, which cannot have `{field}`"),
            )
            .with_hint(format!("add `command = \"…\"` to make it a task that runs, or remove `{field}`")));
    }
    let env = env_list(source, &raw.env)?;
    let depends_on =
        raw.depends_on.iter().flatten().map(|r| parse_task_ref(me, r, source, ctx)).collect::<Result<_, _>>()?;
    Ok(Task {
        depends_on,
        // No files: a group's key is its dependencies' keys (and the
        // workspace-wide parts), so a dependent's key still moves with them.
        inputs: Some(Vec::new()),
        env,
        description: raw.description.as_deref().map(crate::error::one_line),
        ..Task::plain(&name, Command::Shell(String::new()), TaskOrigin::Group)
    })
}

fn task_name(key: &Spanned<String>, source: &Source) -> Result<String, Diagnostic> {
    let name = key.get_ref();
    if name.is_empty() || name.contains('#') || name.starts_with('^') {
        return Err(source
            .error(Some(key.span()), format!("invalid task name `{name}`"))
            .with_hint("task names may not be empty, contain `#` or start with `^`"));
    }
    Ok(name.clone())
}

/// `command`, else the script of the same name.
fn task_command(
    name: &str,
    key: &Spanned<String>,
    raw: &RawTask,
    script: Option<&str>,
    source: &Source,
) -> Result<Command, Diagnostic> {
    match (&raw.command, script) {
        (Some(cmd), _) => parse_command(cmd, source),
        (None, Some(script)) => Ok(Command::Shell(script.to_string())),
        (None, None) => Err(source
            .error(Some(key.span()), format!("task `{name}` has no command"))
            .with_hint("add `command = \"…\"` to its table, or `depends-on = […]` to make it a group")),
    }
}

/// `ready`, which only a persistent task may have.
fn task_ready(raw: &RawTask, persistent: bool, source: &Source) -> Result<Option<Ready>, Diagnostic> {
    let ready = raw.ready.as_ref().map(|r| parse_ready(r, source)).transpose()?;
    if ready.is_some() && !persistent {
        return Err(source
            .error(raw.ready.as_ref().map(Spanned::span), "`ready` applies only to persistent tasks")
            .with_hint("add `persistent = true` or remove `ready`"));
    }
    Ok(ready)
}

fn strings(v: &Option<Vec<Spanned<String>>>) -> Option<Vec<String>> {
    v.as_ref().map(|v| v.iter().map(|s| s.get_ref().clone()).collect())
}

fn duration(v: &Option<Spanned<String>>, source: &Source) -> Result<Option<Duration>, Diagnostic> {
    v.as_ref().map(|d| parse_duration(d.get_ref()).map_err(|m| source.error(Some(d.span()), m))).transpose()
}

fn parse_command(cmd: &Spanned<toml::Value>, source: &Source) -> Result<Command, Diagnostic> {
    let wrong = || {
        source.error(
            Some(cmd.span()),
            "`command` must be a non-empty string (run by `sh -c`) or a non-empty array of strings (exec'd directly)",
        )
    };
    match cmd.get_ref() {
        toml::Value::String(s) if !s.trim().is_empty() => Ok(Command::Shell(s.clone())),
        toml::Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(wrong))
            .collect::<Result<Vec<_>, _>>()
            .map(Command::Argv),
        _ => Err(wrong()),
    }
}

fn parse_task_ref(
    me: usize,
    r: &Spanned<String>,
    source: &Source,
    ctx: &RefContext<'_>,
) -> Result<TaskRef, Diagnostic> {
    let text = r.get_ref();
    let span = Some(r.span());
    let unknown_task = |project: usize, task: &str| {
        let hint = did_you_mean(task, ctx.task_names[project].iter().map(String::as_str));
        source.error(span.clone(), format!("project `{}` has no task `{task}`{hint}", ctx.names[project]))
    };
    if let Some(task) = text.strip_prefix('^') {
        if task.is_empty() || task.contains('#') {
            return Err(source
                .error(span, format!("invalid dependency `{text}`"))
                .with_hint("write `^build` for the same task in every dependency project"));
        }
        return Ok(TaskRef::Upstream(task.to_string()));
    }
    if let Some((project, task)) = text.split_once('#') {
        let Some(&p) = ctx.index.get(project) else {
            return Err(ctx.unknown_project(source, span, project));
        };
        if !ctx.task_names[p].contains(task) {
            return Err(unknown_task(p, task));
        }
        return Ok(TaskRef::Exact { project: project.to_string(), task: task.to_string() });
    }
    if text.is_empty() {
        return Err(source.error(span, "empty dependency").with_hint("write `task`, `^task` or `project#task`"));
    }
    if !ctx.task_names[me].contains(text.as_str()) {
        return Err(unknown_task(me, text));
    }
    Ok(TaskRef::Local(text.clone()))
}

/// An output is project-relative, or root-anchored (`/…`) with a fixed
/// first part: outputs are removed before a task runs, so `/**/*.js`
/// (every such file of every project) or `/.git/**` is refused.
fn check_output(glob: &Spanned<String>, source: &Source, root: &Path) -> Result<(), Diagnostic> {
    let g = glob.get_ref().trim_start_matches('!');
    let Some(rel) = g.strip_prefix('/') else { return check_inside_project(glob, source) };
    check_anchored(glob, source, root, "outputs")?;
    let first = rel.split('/').next().unwrap_or_default();
    if first.is_empty() || first.contains(['*', '?', '[', '{']) {
        return Err(source
            .error(Some(glob.span()), format!("`{g}` in `outputs` has no fixed directory"))
            .with_hint("a task's outputs are removed before it runs: name the directory, as in `/dist/shared/**`"));
    }
    if matches!(first, ".git" | ".vx" | "node_modules") {
        return Err(source
            .error(Some(glob.span()), format!("`{g}` in `outputs` is inside `{first}`, which vx never owns"))
            .with_hint("write outputs to a directory of the workspace's own"));
    }
    Ok(())
}

fn check_inside_project(glob: &Spanned<String>, source: &Source) -> Result<(), Diagnostic> {
    let g = glob.get_ref().trim_start_matches('!');
    let escapes = Path::new(g).is_absolute() || g.split('/').any(|part| part == "..");
    if escapes {
        return Err(source.error(Some(glob.span()), format!("`{g}` in `outputs` leaves the project")).with_hint(
            "outputs are relative to the project, or to the workspace root when they start with `/`; \
             neither may use `..`",
        ));
    }
    Ok(())
}

/// A root-anchored input or output (`/tsconfig.base.json`) is relative to
/// the workspace root: it may not leave it with `..`, and one that spells
/// the root's own absolute path is a path of this machine, which a key
/// shared with other machines cannot use.
fn check_anchored(glob: &Spanned<String>, source: &Source, root: &Path, key: &str) -> Result<(), Diagnostic> {
    let g = glob.get_ref().trim_start_matches('!');
    let Some(rel) = g.strip_prefix('/') else { return Ok(()) };
    if rel.split('/').any(|part| part == "..") {
        return Err(source.error(Some(glob.span()), format!("`{g}` in `{key}` leaves the workspace")).with_hint(
            format!("a path in `{key}` starting with `/` is relative to the workspace root and may not use `..`"),
        ));
    }
    if let Ok(inside) = Path::new(g).strip_prefix(root) {
        return Err(source.error(Some(glob.span()), format!("`{g}` in `{key}` is a path of this machine")).with_hint(
            format!(
                "a path in `{key}` starting with `/` is relative to the workspace root: write `/{}`",
                inside.display()
            ),
        ));
    }
    Ok(())
}

fn parse_ready(ready: &Spanned<RawReady>, source: &Source) -> Result<Ready, Diagnostic> {
    let r = ready.get_ref();
    let span = Some(ready.span());
    match (&r.log, r.port, &r.path) {
        (Some(log), None, None) => regex::Regex::new(log)
            .map(Ready::Log)
            .map_err(|e| source.error(span, format!("invalid `ready.log` pattern: {e}"))),
        (None, Some(port), None) => Ok(Ready::Port(port)),
        (None, None, Some(path)) => Ok(Ready::Path(path.clone())),
        _ => Err(source
            .error(span, "`ready` takes exactly one of `log`, `port` or `path`")
            .with_hint("write `ready = { log = \"listening\" }`, `{ port = 3000 }` or `{ path = \"ready.txt\" }`")),
    }
}
