//! From files to a validated [`Workspace`]: reads every project's `vx.toml`
//! and `package.json` (in parallel), applies defaults, merges scripts with
//! configured tasks and checks every reference, pointing at the file, line
//! and column of anything wrong.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::diag::{Source, did_you_mean, relative_display, toml_error};
use super::discover::{expand_project_globs, find_root};
use super::duration::{parse_duration, parse_size};
use super::model::{
    CacheSettings, Command, PluginSettings, Project, REAPI_REMOTE, Ready, RemoteSettings, RootSettings, Task,
    TaskOrigin, TaskRef, Workspace, grpc_address,
};
use super::npm::{PackageJson, read_package_json, read_pnpm_workspace};
use super::raw::{RawFile, RawRemote, RawTask};
use crate::error::{Error, Result};

const DEFAULT_MAX_SIZE: u64 = 5 << 30;
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(14 * 86_400);

/// Finds the workspace that contains `start` and loads it.
pub fn load_workspace(start: &Path) -> Result<Workspace> {
    load_at_root(&find_workspace_root(start)?)
}

/// The canonical root of the workspace that contains `start`, without
/// reading its projects (`vx watch` watches it even while its config is
/// broken).
pub fn find_workspace_root(start: &Path) -> Result<PathBuf> {
    let root = find_root(start)?;
    root.canonicalize().map_err(|e| Error::io(format_args!("resolve {}", root.display()), e))
}

/// One project directory's files, parsed but not yet resolved.
struct Files {
    dir: PathBuf,
    rel_dir: String,
    toml: Option<(Source, RawFile)>,
    pkg: Option<PackageJson>,
}

fn load_at_root(root: &Path) -> Result<Workspace> {
    let mut config_files = Vec::new();
    let root_files = read_files(root, root)?;
    let root_raw = root_files.toml.as_ref().map(|(_, raw)| raw);
    let globs: Vec<String> = match root_raw.and_then(|r| r.workspace.as_ref()).and_then(|w| w.projects.as_ref()) {
        Some(globs) if !globs.is_empty() => globs.iter().map(|g| g.get_ref().clone()).collect(),
        _ => match root_files.pkg.as_ref().and_then(|p| p.workspaces.as_ref()) {
            Some(ws) => ws.globs().to_vec(),
            None => read_pnpm_workspace(root)?.unwrap_or_default(),
        },
    };
    let dirs: Vec<PathBuf> = expand_project_globs(root, &globs)?.into_iter().filter(|d| d != root).collect();
    let mut all = par_map(&dirs, |dir| read_files(root, dir))?;

    for files in std::iter::once(&root_files).chain(all.iter()) {
        if files.toml.is_some() {
            config_files.push(files.dir.join("vx.toml"));
        }
        if files.pkg.is_some() {
            config_files.push(files.dir.join("package.json"));
        }
    }
    for files in &all {
        if let Some((source, raw)) = &files.toml {
            for (present, table) in [
                (raw.workspace.is_some(), "workspace"),
                (raw.cache.is_some(), "cache"),
                (raw.plugins.is_some(), "plugins"),
                (raw.remote.is_some(), "remote"),
            ] {
                if present {
                    return Err(source
                        .error(None, format!("[{table}] is only allowed in the root vx.toml"))
                        .with_hint(format!("move the [{table}] table to {}", root.join("vx.toml").display())));
                }
            }
        }
    }

    let settings = root_settings(root, root_files.toml.as_ref())?;
    let root_is_project = root_raw.is_some_and(|r| r.project.is_some() || r.tasks.is_some());
    if root_is_project {
        all.push(root_files);
    }
    // Project ids are indices into the name-sorted list: sort before any
    // index is taken.
    all.sort_by_cached_key(project_name);
    let projects = resolve_projects(&all)?;
    Ok(Workspace::new(root.to_path_buf(), projects, settings, config_files))
}

fn read_files(root: &Path, dir: &Path) -> Result<Files> {
    let path = dir.join("vx.toml");
    let toml = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let source = Source::new(relative_display(root, &path), text);
            let raw: RawFile = toml::from_str(&source.text).map_err(|e| toml_error(&source, &e))?;
            Some((source, raw))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(format_args!("read {}", path.display()), e)),
    };
    let pkg = read_package_json(root, dir)?;
    let rel_dir = match dir.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => dir.to_string_lossy().into_owned(),
    };
    Ok(Files { dir: dir.to_path_buf(), rel_dir, toml, pkg })
}

/// Runs `f` over `items` on a few threads, keeping order; the first error wins.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let threads = crate::sys::cores().clamp(1, 8);
    if items.len() < 32 || threads == 1 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            items.chunks(chunk).map(|part| scope.spawn(|| part.iter().map(&f).collect::<Result<Vec<R>>>())).collect();
        let mut out = Vec::with_capacity(items.len());
        for handle in handles {
            out.extend(handle.join().expect("config reader thread panicked")?);
        }
        Ok(out)
    })
}

fn root_settings(root: &Path, file: Option<&(Source, RawFile)>) -> Result<RootSettings> {
    let mut cache = CacheSettings {
        dir: root.join(".vx/cache"),
        max_size: DEFAULT_MAX_SIZE,
        max_age: DEFAULT_MAX_AGE,
        remote: None,
    };
    let Some((source, raw)) = file else { return Ok(RootSettings { cache, ..RootSettings::default() }) };
    let global_inputs = raw
        .workspace
        .as_ref()
        .and_then(|w| w.global_inputs.as_ref())
        .map(|v| v.iter().map(|s| s.get_ref().clone()).collect())
        .unwrap_or_default();
    if let Some(c) = &raw.cache {
        if let Some(dir) = &c.dir {
            cache.dir = root.join(dir.get_ref());
        }
        if let Some(size) = &c.max_size {
            cache.max_size = parse_size(size.get_ref()).map_err(|m| source.error(Some(size.span()), m))?;
        }
        if let Some(age) = &c.max_age {
            cache.max_age = parse_duration(age.get_ref()).map_err(|m| source.error(Some(age.span()), m))?;
        }
        cache.remote = c.remote.as_ref().map(|r| r.get_ref().clone());
    }
    let plugins = raw
        .plugins
        .iter()
        .flatten()
        .map(|(name, p)| {
            let settings = PluginSettings {
                path: root.join(p.path.get_ref()),
                dirs: p.dirs.clone().unwrap_or_default(),
                env: p.env.clone().unwrap_or_default(),
                allow_hosts: p.allow_hosts.clone().unwrap_or_default(),
                allow_programs: p.allow_programs.clone().unwrap_or_default(),
                limits: p.limits.clone().unwrap_or_default(),
                config: p.config.clone().unwrap_or_default(),
            };
            (name.clone(), settings)
        })
        .collect::<BTreeMap<_, _>>();
    let remote = raw.remote.as_ref().map(|r| remote_settings(root, source, r)).transpose()?;
    if let Some(name) = raw.cache.as_ref().and_then(|c| c.remote.as_ref()) {
        check_cache_remote(source, name, &plugins, remote.is_some())?;
    }
    Ok(RootSettings { global_inputs, cache, plugins, remote })
}

/// `[remote]`, checked: a gRPC endpoint, a duration, a variable name.
fn remote_settings(root: &Path, source: &Source, raw: &RawRemote) -> Result<RemoteSettings> {
    let endpoint = raw.endpoint.get_ref();
    if grpc_address(endpoint).is_none() {
        return Err(source
            .error(Some(raw.endpoint.span()), format!("[remote] endpoint `{endpoint}` is not a gRPC address"))
            .with_hint("write it like `grpc://127.0.0.1:50051` (plain) or `grpcs://cache.example.com:443` (TLS)"));
    }
    let timeout = match &raw.timeout {
        Some(t) => parse_duration(t.get_ref()).map_err(|m| source.error(Some(t.span()), m))?,
        None => Duration::from_secs(60),
    };
    if let Some(var) = &raw.token_env
        && (var.get_ref().is_empty() || var.get_ref().contains('='))
    {
        return Err(source
            .error(Some(var.span()), "[remote] token-env names the variable holding the token, not the token")
            .with_hint("write it like `token-env = \"VX_REMOTE_TOKEN\"` and export the token in that variable"));
    }
    Ok(RemoteSettings {
        endpoint: endpoint.clone(),
        instance_name: raw.instance_name.clone().unwrap_or_default(),
        token_env: raw.token_env.as_ref().map(|v| v.get_ref().clone()),
        tls_ca: raw.tls_ca.as_ref().map(|p| root.join(p.get_ref())),
        headers: raw.headers.clone().unwrap_or_default(),
        timeout,
        platform: raw.platform.clone().unwrap_or_default(),
    })
}

/// `[cache] remote` names a plugin of this workspace or `reapi` with a
/// `[remote]` table.
fn check_cache_remote(
    source: &Source,
    name: &Spanned<String>,
    plugins: &BTreeMap<String, PluginSettings>,
    has_remote: bool,
) -> Result<()> {
    if name.get_ref() == REAPI_REMOTE {
        if plugins.contains_key(REAPI_REMOTE) {
            return Err(source
                .error(Some(name.span()), "`reapi` is both a plugin and the REAPI tier")
                .with_hint("rename [plugins.reapi]: `reapi` is reserved for the [remote] server"));
        }
        if !has_remote {
            return Err(source
                .error(Some(name.span()), "[cache] remote = \"reapi\" needs a [remote] table")
                .with_hint("add [remote] with endpoint = \"grpc://HOST:PORT\" (docs/remote.md)"));
        }
    }
    Ok(())
}

/// Names, project dependencies and tasks, with every reference checked.
fn resolve_projects(all: &[Files]) -> Result<Vec<Project>> {
    let names: Vec<String> = all.iter().map(project_name).collect();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        if let Some(prev) = index.insert(name.as_str(), i) {
            return Err(Error::config(format!(
                "two projects are named `{name}`: {} and {}",
                all[prev].rel_dir, all[i].rel_dir
            ))
            .with_hint("give one of them another `name` in [project] of its vx.toml"));
        }
    }
    // package.json names can differ from project names set in vx.toml.
    let mut by_package: HashMap<&str, usize> = index.clone();
    for (i, files) in all.iter().enumerate() {
        if let Some(pkg_name) = files.pkg.as_ref().and_then(|p| p.name.as_deref()) {
            by_package.insert(pkg_name, i);
        }
    }
    let task_names: Vec<BTreeSet<String>> = all.iter().map(declared_task_names).collect();
    let ctx = RefContext { names: &names, index: &index, task_names: &task_names };

    all.iter()
        .enumerate()
        .map(|(i, files)| {
            let deps = project_deps(i, files, &ctx, &by_package)?;
            let tasks = project_tasks(i, files, &ctx)?;
            let tags = files
                .toml
                .as_ref()
                .and_then(|(_, raw)| raw.project.as_ref())
                .and_then(|p| p.tags.clone())
                .unwrap_or_default();
            Ok(Project {
                name: names[i].clone(),
                dir: files.dir.clone(),
                rel_dir: files.rel_dir.clone(),
                deps,
                tags,
                tasks,
            })
        })
        .collect()
}

struct RefContext<'a> {
    names: &'a [String],
    index: &'a HashMap<&'a str, usize>,
    task_names: &'a [BTreeSet<String>],
}

impl RefContext<'_> {
    fn unknown_project(&self, source: Option<&Source>, span: Option<Range<usize>>, name: &str) -> Error {
        let hint = did_you_mean(name, self.names.iter().map(String::as_str));
        let message = format!("unknown project `{name}`{hint}");
        match source {
            Some(source) => source.error(span, message),
            None => Error::config(message),
        }
    }
}

fn project_name(files: &Files) -> String {
    let from_toml = files.toml.as_ref().and_then(|(_, raw)| raw.project.as_ref()).and_then(|p| p.name.as_ref());
    if let Some(name) = from_toml {
        return name.get_ref().clone();
    }
    if let Some(name) = files.pkg.as_ref().and_then(|p| p.name.clone()) {
        return name;
    }
    files.dir.file_name().map_or_else(|| "root".to_string(), |n| n.to_string_lossy().into_owned())
}

fn declared_task_names(files: &Files) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = files.pkg.iter().flat_map(|p| p.scripts.keys().cloned()).collect();
    if let Some(tasks) = files.toml.as_ref().and_then(|(_, raw)| raw.tasks.as_ref()) {
        names.extend(tasks.keys().map(|k| k.get_ref().clone()));
    }
    names
}

fn project_deps(
    me: usize,
    files: &Files,
    ctx: &RefContext<'_>,
    by_package: &HashMap<&str, usize>,
) -> Result<Vec<usize>> {
    let mut deps = BTreeSet::new();
    if let Some((source, raw)) = &files.toml {
        for dep in raw.project.iter().flat_map(|p| p.depends_on.iter().flatten()) {
            let name = dep.get_ref();
            let Some(&i) = ctx.index.get(name.as_str()) else {
                return Err(ctx.unknown_project(Some(source), Some(dep.span()), name));
            };
            if i == me {
                return Err(source
                    .error(Some(dep.span()), format!("project `{name}` depends on itself"))
                    .with_hint("remove it from depends-on"));
            }
            deps.insert(i);
        }
    }
    if let Some(pkg) = &files.pkg {
        deps.extend(pkg.dependency_names().filter_map(|n| by_package.get(n).copied()).filter(|&i| i != me));
    }
    Ok(deps.into_iter().collect())
}

fn project_tasks(me: usize, files: &Files, ctx: &RefContext<'_>) -> Result<BTreeMap<String, Task>> {
    let scripts = files.pkg.as_ref().map(|p| &p.scripts);
    let configured = files.toml.as_ref().and_then(|(source, raw)| raw.tasks.as_ref().map(|t| (source, t)));
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
        name: name.to_string(),
        command: Command::Shell(script.to_string()),
        depends_on: vec![TaskRef::Upstream(name.to_string())],
        inputs: None,
        outputs: Vec::new(),
        env: Vec::new(),
        timeout: None,
        cache: false,
        persistent: false,
        ready: None,
        ready_timeout: None,
        executor: "local".to_string(),
        origin: TaskOrigin::Script,
    }
}

fn configured_task(
    me: usize,
    key: &Spanned<String>,
    raw: &RawTask,
    script: Option<&str>,
    source: &Source,
    ctx: &RefContext<'_>,
) -> Result<Task> {
    let name = key.get_ref().clone();
    if name.is_empty() || name.contains('#') || name.starts_with('^') {
        return Err(source
            .error(Some(key.span()), format!("invalid task name `{name}`"))
            .with_hint("task names may not be empty, contain `#` or start with `^`"));
    }
    let command = match (&raw.command, script) {
        (Some(cmd), _) => parse_command(cmd, source)?,
        (None, Some(script)) => Command::Shell(script.to_string()),
        (None, None) => {
            return Err(source
                .error(Some(key.span()), format!("task `{name}` has no command"))
                .with_hint("add `command = \"…\"` to its table"));
        }
    };
    let depends_on = match &raw.depends_on {
        Some(refs) => refs.iter().map(|r| parse_task_ref(me, r, source, ctx)).collect::<Result<_>>()?,
        None if script.is_some() => vec![TaskRef::Upstream(name.clone())],
        None => Vec::new(),
    };
    let strings = |v: &Option<Vec<Spanned<String>>>| -> Option<Vec<String>> {
        v.as_ref().map(|v| v.iter().map(|s| s.get_ref().clone()).collect())
    };
    if let Some(outputs) = &raw.outputs {
        for out in outputs {
            check_inside_project(out, source, "outputs")?;
        }
    }
    for env in raw.env.iter().flatten() {
        let e = env.get_ref();
        if e.is_empty() || e.contains('=') || e.contains('\0') {
            return Err(source
                .error(Some(env.span()), format!("invalid environment variable name `{e}`"))
                .with_hint("list names only, like `NODE_ENV`; values are read from the environment"));
        }
    }
    let inputs = strings(&raw.inputs);
    let outputs = strings(&raw.outputs).unwrap_or_default();
    let persistent = raw.persistent.unwrap_or(false);
    let cache = raw.cache.unwrap_or(!persistent && (inputs.is_some() || !outputs.is_empty()));
    if persistent && cache {
        return Err(source
            .error(Some(key.span()), format!("task `{name}` is persistent and cached"))
            .with_hint("a server has no result to cache: set `cache = false` or drop `persistent`"));
    }
    let ready = raw.ready.as_ref().map(|r| parse_ready(r, source)).transpose()?;
    if ready.is_some() && !persistent {
        return Err(source
            .error(raw.ready.as_ref().map(Spanned::span), "`ready` applies only to persistent tasks")
            .with_hint("add `persistent = true` or remove `ready`"));
    }
    let duration = |v: &Option<Spanned<String>>| -> Result<Option<Duration>> {
        v.as_ref().map(|d| parse_duration(d.get_ref()).map_err(|m| source.error(Some(d.span()), m))).transpose()
    };
    Ok(Task {
        name,
        command,
        depends_on,
        inputs,
        outputs,
        env: strings(&raw.env).unwrap_or_default(),
        timeout: duration(&raw.timeout)?,
        cache,
        persistent,
        ready,
        ready_timeout: duration(&raw.ready_timeout)?,
        executor: raw.executor.as_ref().map_or_else(|| "local".to_string(), |e| e.get_ref().clone()),
        origin: TaskOrigin::Config,
    })
}

fn parse_command(cmd: &Spanned<toml::Value>, source: &Source) -> Result<Command> {
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
            .collect::<Result<Vec<_>>>()
            .map(Command::Argv),
        _ => Err(wrong()),
    }
}

fn parse_task_ref(me: usize, r: &Spanned<String>, source: &Source, ctx: &RefContext<'_>) -> Result<TaskRef> {
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
            return Err(ctx.unknown_project(Some(source), span, project));
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

fn check_inside_project(glob: &Spanned<String>, source: &Source, key: &str) -> Result<()> {
    let g = glob.get_ref().trim_start_matches('!');
    let escapes = Path::new(g).is_absolute() || g.split('/').any(|part| part == "..");
    if escapes {
        return Err(source
            .error(Some(glob.span()), format!("`{g}` in `{key}` leaves the project"))
            .with_hint(format!("{key} are relative to the project directory and may not use `..` or absolute paths")));
    }
    Ok(())
}

fn parse_ready(ready: &Spanned<super::raw::RawReady>, source: &Source) -> Result<Ready> {
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
