//! From files to a validated [`Workspace`]: reads every project's `vx.toml`
//! and `package.json` (in parallel), applies defaults, merges scripts with
//! configured tasks and checks every reference, pointing at the file, line
//! and column of anything wrong.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::boundaries::{BoundaryRule, Node, boundary_rules, describe, violations};
use super::diag::{Source, relative_display, toml_error};
use super::discover::{expand_project_globs, find_root};
use super::error::{ConfigError, Diagnostic};
use super::model::{PluginSettings, Project, Workspace};
use super::npm::{PackageJson, dependency_offset, read_package_json, read_pnpm_workspace};
use super::raw::RawFile;
use super::settings::root_settings;
use super::task::{RefContext, project_tasks};

type Result<T, E = ConfigError> = std::result::Result<T, E>;

/// Finds the workspace that contains `start` and loads it. A dependency
/// that `[[workspace.boundaries]]` refuses is an error, as any other
/// mistake in the configuration.
pub fn load_workspace(start: &Path) -> Result<Workspace> {
    let (ws, violations) = load_at_root(&find_workspace_root(start)?, true)?;
    refuse_violations(violations)?;
    Ok(ws)
}

/// [`load_workspace`] for `vx plugin add` and `remove`: a task may name an
/// executor plugin not added yet (or the one being removed).
pub(crate) fn load_workspace_for_plugin_edits(start: &Path) -> Result<Workspace> {
    let (ws, violations) = load_at_root(&find_workspace_root(start)?, false)?;
    refuse_violations(violations)?;
    Ok(ws)
}

/// [`load_workspace`] for `vx lock --check`, which reports every
/// dependency `[[workspace.boundaries]]` refuses rather than the first.
pub(crate) fn load_workspace_with_violations(start: &Path) -> Result<(Workspace, Vec<Diagnostic>)> {
    load_at_root(&find_workspace_root(start)?, true)
}

/// The first violation as the load's error, counting the others.
fn refuse_violations(violations: Vec<Diagnostic>) -> Result<()> {
    let more = violations.len().saturating_sub(1);
    let Some(mut first) = violations.into_iter().next() else { return Ok(()) };
    if more > 0 {
        first.message.push_str(&format!(" (and {more} more)"));
        first.hint = Some(format!("`vx lock --check` lists them all; {}", super::boundaries::VIOLATION_HINT));
    }
    Err(first.into())
}

/// The canonical root of the workspace that contains `start`, without
/// reading its projects (`vx watch` watches it even while its config is
/// broken).
pub(crate) fn find_workspace_root(start: &Path) -> Result<PathBuf> {
    let root = find_root(start)?;
    root.canonicalize().map_err(|source| ConfigError::Resolve { path: root, source })
}

/// One project directory's files, parsed but not yet resolved.
struct Files {
    dir: PathBuf,
    rel_dir: String,
    toml: Option<(Source, RawFile)>,
    pkg: Option<PackageJson>,
    /// Whether every `package.json` script is a task. Not at the root of a
    /// workspace with other projects: there only `[tasks]` tables are, as
    /// only `//#task` entries are in turbo, so a root script such as
    /// `"build": "vx run build"` is not run by the very command it wraps.
    scripts_are_tasks: bool,
    /// `toml` is the translation of a turbo file, not a file on disk.
    translated: bool,
}

/// The workspace at `root`, and the dependencies its boundaries refuse.
fn load_at_root(root: &Path, check_executors: bool) -> Result<(Workspace, Vec<Diagnostic>)> {
    let mut config_files = Vec::new();
    let mut root_files = read_files(root, root)?;
    let has_root_toml = root_files.toml.is_some();
    // No root vx.toml: a turbo file is the configuration.
    let turbo = match &root_files.toml {
        None => super::native::turbo(root)?,
        Some(_) => None,
    };
    if let Some(t) = &turbo {
        root_files.toml = t.file(".")?;
        root_files.translated = true;
        config_files.extend(t.read.iter().map(|f| root.join(f)));
    }
    let root_raw = root_files.toml.as_ref().map(|(_, raw)| raw);
    let (globs, globs_file): (Vec<String>, &str) =
        match root_raw.and_then(|r| r.workspace.as_ref()).and_then(|w| w.projects.as_ref()) {
            Some(globs) if !globs.is_empty() => (globs.iter().map(|g| g.get_ref().clone()).collect(), "vx.toml"),
            _ => match root_files.pkg.as_ref().and_then(|p| p.workspaces.as_ref()) {
                Some(ws) => (ws.globs().to_vec(), "package.json"),
                None => (read_pnpm_workspace(root)?.unwrap_or_default(), "pnpm-workspace.yaml"),
            },
        };
    let dirs: Vec<PathBuf> = expand_project_globs(root, &globs)?.into_iter().filter(|d| d != root).collect();
    check_some_project(&globs, globs_file, &dirs)?;
    let mut all = par_map(&dirs, |dir| read_files(root, dir))?;
    if let Some(t) = &turbo {
        for files in all.iter_mut().filter(|f| f.toml.is_none()) {
            files.toml = t.file(&files.rel_dir)?;
            files.translated = files.toml.is_some();
        }
    }

    for files in std::iter::once(&root_files).chain(all.iter()) {
        if files.toml.is_some() && !files.translated {
            config_files.push(files.dir.join("vx.toml"));
        }
        if files.pkg.is_some() {
            config_files.push(files.dir.join("package.json"));
        }
    }
    refuse_root_tables(root, &all)?;

    let settings = root_settings(root, root_files.toml.as_ref())?;
    let rules = boundary_rules(root_files.toml.as_ref())?;
    let package_manager = root_files.pkg.as_ref().and_then(|p| p.package_manager.clone());
    // No project globs and a root package.json: a single-package
    // repository, whose root is its one project (turbo and npm agree).
    let single_package = globs.is_empty() && root_files.pkg.is_some();
    let root_is_project = single_package || root_raw.is_some_and(|r| r.project.is_some() || r.tasks.is_some());
    if root_is_project {
        let mut root_files = root_files;
        root_files.scripts_are_tasks = all.is_empty();
        all.push(root_files);
    }
    // Project ids are indices into the name-sorted list: sort before any
    // index is taken.
    all.sort_by_cached_key(project_name);
    let projects = resolve_projects(root, &all, check_executors.then_some(&settings.plugins))?;
    super::ownership::check_ownership(&projects)?;
    let violations = boundary_violations(root, &rules, &projects, &all);
    let mut ws = Workspace::new(root.to_path_buf(), projects, settings, config_files);
    ws.package_manager = package_manager;
    match turbo {
        Some(t) => {
            ws.source = super::native::ConfigSource::Turbo { file: t.file };
            ws.broken = t.broken;
        }
        None => {
            if let Some(turbo) = super::native::has_turbo(root).filter(|_| has_root_toml) {
                ws.source = super::native::ConfigSource::VxOverTurbo { turbo: turbo.to_string() };
            }
        }
    }
    Ok((ws, violations))
}

/// `[workspace]`, `[cache]`, `[plugins]`, `[remote]` and `[history]`
/// belong to the root `vx.toml`; in a project's they are an error.
fn refuse_root_tables(root: &Path, projects: &[Files]) -> Result<()> {
    for (source, raw) in projects.iter().filter_map(|f| f.toml.as_ref()) {
        for (present, table) in [
            (raw.workspace.is_some(), "workspace"),
            (raw.cache.is_some(), "cache"),
            (raw.plugins.is_some(), "plugins"),
            (raw.remote.is_some(), "remote"),
            (raw.history.is_some(), "history"),
        ] {
            if present {
                return Err(source
                    .error(None, format!("[{table}] is only allowed in the root vx.toml"))
                    .with_hint(format!("move the [{table}] table to {}", root.join("vx.toml").display()))
                    .into());
            }
        }
    }
    Ok(())
}

fn read_files(root: &Path, dir: &Path) -> Result<Files> {
    let path = dir.join("vx.toml");
    let toml = match crate::paths::read_config(&path).transpose() {
        None => None,
        Some(Ok(text)) => {
            let source = Source::new(relative_display(root, &path), text);
            let raw: RawFile = toml::from_str(&source.text).map_err(|e| toml_error(&source, &e))?;
            Some((source, raw))
        }
        Some(Err(source)) => return Err(ConfigError::Read { path, source }),
    };
    let pkg = read_package_json(root, dir)?;
    let rel_dir = match dir.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => dir.to_string_lossy().into_owned(),
    };
    Ok(Files { dir: dir.to_path_buf(), rel_dir, toml, pkg, scripts_are_tasks: true, translated: false })
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

/// Names, project dependencies and tasks, with every reference checked.
fn resolve_projects(
    root: &Path,
    all: &[Files],
    plugins: Option<&BTreeMap<String, PluginSettings>>,
) -> Result<Vec<Project>> {
    let names: Vec<String> = all.iter().map(project_name).collect();
    for (files, name) in all.iter().zip(&names) {
        check_project_name(root, files, name)?;
    }
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        if let Some(prev) = index.insert(name.as_str(), i) {
            return Err(ConfigError::DuplicateName {
                name: crate::error::one_line(name),
                first: all[prev].rel_dir.clone(),
                second: all[i].rel_dir.clone(),
            });
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
    let ctx = RefContext { names: &names, index: &index, task_names: &task_names, root, plugins };

    all.iter()
        .enumerate()
        .map(|(i, files)| {
            let deps = project_deps(i, files, &ctx, &by_package)?;
            let scripts = task_scripts(files);
            let scripts = scripts.as_deref();
            let configured = files.toml.as_ref().and_then(|(source, raw)| raw.tasks.as_ref().map(|t| (source, t)));
            let tasks = project_tasks(i, scripts, configured, &ctx)?;
            let tags = project_tags(files);
            Ok(Project {
                name: names[i].clone(),
                dir: files.dir.clone(),
                rel_dir: files.rel_dir.clone(),
                deps,
                tags,
                tasks,
                package_json: files.pkg.as_ref().and_then(|p| p.digest),
                package: files.pkg.as_ref().map(|p| (p.name.clone(), p.version.clone())),
            })
        })
        .collect()
}

/// Project globs that match no project at all are a mistake (a moved
/// directory, a typo), not an empty workspace: `vx run build` would run
/// nothing and exit 0. One glob of several matching nothing is not: a
/// template's `apps/*` before its first app, which pnpm and Turborepo take.
fn check_some_project(globs: &[String], file: &str, dirs: &[PathBuf]) -> Result<()> {
    let includes: Vec<String> = globs.iter().filter(|g| !g.starts_with('!')).map(|g| format!("`{g}`")).collect();
    if includes.is_empty() || !dirs.is_empty() {
        return Ok(());
    }
    Err(Diagnostic::new(
        file.to_string(),
        format!("no project matches {}", crate::error::one_line(&includes.join(", "))),
    )
    .with_hint("a project is a directory holding a vx.toml or a package.json: fix the workspace's project globs")
    .into())
}

/// A project's name is how the command line names it (`web#build`,
/// `--filter web`): one with a `#` could never be named there.
fn check_project_name(root: &Path, files: &Files, name: &str) -> Result<()> {
    if !name.contains('#') {
        return Ok(());
    }
    let from_toml = files.toml.as_ref().and_then(|(source, raw)| {
        raw.project.as_ref().and_then(|p| p.name.as_ref()).map(|n| source.locate(Some(n.span())))
    });
    let location = from_toml.unwrap_or_else(|| {
        let file = if files.pkg.is_some() { files.dir.join("package.json") } else { files.dir.clone() };
        relative_display(root, &file).display().to_string()
    });
    Err(Diagnostic::new(location, format!("project name `{}` contains `#`", crate::error::one_line(name)))
        .with_hint("`#` separates a project from a task (`web#build`): set a name without it with `[project] name = \"…\"` in the project's vx.toml")
        .into())
}

/// `[project] tags`, then the `package.json`'s `"vx": { "tags" }` that
/// `vx.toml` does not already list: a union, each tag once, as Nx merges
/// a `project.json`'s tags with a `package.json`'s.
fn project_tags(files: &Files) -> Vec<String> {
    let from_toml = files.toml.as_ref().and_then(|(_, raw)| raw.project.as_ref()).and_then(|p| p.tags.as_ref());
    let from_pkg = files.pkg.as_ref().map(|p| &p.vx.tags);
    let mut tags: Vec<String> = Vec::new();
    for tag in from_toml.into_iter().flatten().chain(from_pkg.into_iter().flatten()) {
        if !tags.contains(tag) {
            tags.push(tag.clone());
        }
    }
    tags
}

/// Every dependency `rules` refuse, located where it is declared.
fn boundary_violations(root: &Path, rules: &[BoundaryRule], projects: &[Project], all: &[Files]) -> Vec<Diagnostic> {
    if rules.is_empty() {
        return Vec::new();
    }
    let nodes: Vec<Node<'_>> = projects.iter().map(|p| Node { tags: &p.tags, deps: &p.deps }).collect();
    let names: Vec<&str> = projects.iter().map(|p| p.name.as_str()).collect();
    violations(rules, &nodes)
        .iter()
        .map(|v| {
            let at = dependency_site(root, &all[v.project], &all[v.dep], names[v.dep]);
            Diagnostic::new(at, describe(v, rules, &names, &nodes)).with_hint(super::boundaries::VIOLATION_HINT)
        })
        .collect()
}

/// Where `files`' project declares its dependency on `dep` (named `name`):
/// its `depends-on` entry, else its `package.json`'s dependency entry, else
/// the file that declares it.
fn dependency_site(root: &Path, files: &Files, dep: &Files, name: &str) -> String {
    let declared = files.toml.as_ref().and_then(|(source, raw)| {
        let entry = raw.project.as_ref()?.depends_on.as_ref()?.iter().find(|d| d.get_ref() == name)?;
        Some(source.locate(Some(entry.span())))
    });
    if let Some(at) = declared {
        return at;
    }
    let pkg = files.dir.join("package.json");
    let names = dep.pkg.as_ref().and_then(|p| p.name.as_deref()).into_iter().chain([name]);
    let text = crate::paths::read_config(&pkg).ok().flatten().unwrap_or_default();
    let display = relative_display(root, &pkg).display().to_string();
    match names.into_iter().find_map(|n| dependency_offset(&text, n)) {
        Some(offset) => Source::new(display, text).locate(Some(offset..offset)),
        None => display,
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

/// The scripts that are tasks (or give a configured task its command).
fn task_scripts(files: &Files) -> Option<Cow<'_, BTreeMap<String, String>>> {
    let scripts = &files.pkg.as_ref()?.scripts;
    if files.scripts_are_tasks {
        return Some(Cow::Borrowed(scripts));
    }
    let configured = files.toml.as_ref().and_then(|(_, raw)| raw.tasks.as_ref());
    Some(Cow::Owned(
        scripts
            .iter()
            .filter(|(name, _)| configured.is_some_and(|t| t.keys().any(|k| k.get_ref() == *name)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

fn declared_task_names(files: &Files) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = task_scripts(files).iter().flat_map(|s| s.keys().cloned()).collect();
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
                return Err(ctx.unknown_project(source, Some(dep.span()), name).into());
            };
            if i == me {
                return Err(source
                    .error(Some(dep.span()), format!("project `{name}` depends on itself"))
                    .with_hint("remove it from depends-on")
                    .into());
            }
            deps.insert(i);
        }
    }
    if let Some(pkg) = &files.pkg {
        deps.extend(pkg.dependency_names().filter_map(|n| by_package.get(n).copied()).filter(|&i| i != me));
    }
    Ok(deps.into_iter().collect())
}
