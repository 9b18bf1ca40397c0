//! What `vx init` will write, independent of the format it came from: the
//! root workspace settings, each project's settings and tasks, and the notes
//! about what did not translate.

use std::collections::{BTreeMap, BTreeSet};

/// Everything `vx init` writes, plus what it could not translate.
#[derive(Debug, Default)]
pub struct Plan {
    /// The marker file of the source format (`turbo.json`, …), for headers.
    pub source: String,
    /// `[workspace] projects`.
    pub projects_globs: Vec<String>,
    /// `[workspace] global-inputs`.
    pub global_inputs: Vec<String>,
    /// `[workspace] env-mode`, when the source sets one.
    pub env_mode: Option<String>,
    /// `[workspace] global-env` and `global-pass-env`.
    pub global_env: Vec<String>,
    pub global_pass_env: Vec<String>,
    pub projects: Vec<ProjectSpec>,
    /// `[[workspace.boundaries]]`, in order.
    pub boundaries: Vec<BoundarySpec>,
    pub notes: Vec<Note>,
    /// Settings that were translated, but mean something else in vx than
    /// in the source tool (printed apart from the notes).
    pub differences: Vec<Note>,
    /// What the source tool would refuse when a run includes it (a
    /// package `turbo.json` it cannot load, a task that depends on
    /// itself): translated as far as it can be, and an error for a run
    /// that needs it, as turbo has it, rather than for the whole
    /// workspace.
    pub broken: Vec<Broken>,
    /// The source files read, from the root (for `vx watch` to re-read).
    pub read: Vec<String>,
}

/// A package, or one task of it, that the source tool refuses to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The vx project name.
    pub project: String,
    /// The task, or `None` for every task of the project.
    pub task: Option<String>,
    /// The error, one line with the hint that mends it.
    pub why: String,
}

/// One `[[workspace.boundaries]]` rule: projects matching every `from`
/// pattern may depend only on projects matching one of `allow`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundarySpec {
    pub from: Vec<String>,
    pub allow: Vec<String>,
}

/// One project: where it is and what its `vx.toml` says.
#[derive(Debug, Default)]
pub struct ProjectSpec {
    /// Directory relative to the root, `/`-separated.
    pub dir: String,
    /// The name vx will give the project (what references use).
    pub name: String,
    /// Written as `[project] name` only when vx would not infer it.
    pub write_name: bool,
    /// Whether the directory has a `package.json` (which makes it a project
    /// even without a `vx.toml`).
    pub has_package_json: bool,
    /// `package.json` scripts: tasks vx defines without a table.
    pub scripts: BTreeMap<String, String>,
    pub depends_on: Vec<String>,
    pub tags: Vec<String>,
    pub tasks: BTreeMap<String, TaskSpec>,
}

impl ProjectSpec {
    /// Every task name vx will know in this project.
    pub fn task_names(&self) -> BTreeSet<&str> {
        self.tasks.keys().chain(self.scripts.keys()).map(String::as_str).collect()
    }
}

/// One `[tasks.NAME]` table.
#[derive(Debug, Default, Clone)]
pub struct TaskSpec {
    /// `None` when the `package.json` script of the same name is the command.
    pub command: Option<String>,
    pub depends_on: Vec<Dep>,
    /// `None`: every file of the project (vx's default).
    pub inputs: Option<Vec<String>>,
    pub outputs: Vec<String>,
    pub env: Vec<String>,
    pub pass_env: Vec<String>,
    pub cache: bool,
    pub persistent: bool,
    /// On a terminal of its own, typed into from `--ui=tui` (never cached).
    pub interactive: bool,
    /// A group: no command, only `depends-on` (written without `cache`,
    /// which a group may not set).
    pub group: bool,
    /// The file and setting path the task came from, for notes about it.
    pub origin: (String, String),
    /// `description`, as the source gives it.
    pub description: Option<String>,
}

/// A task dependency, before it is checked against the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dep {
    /// A task of the same project.
    Local(String),
    /// That task in every project this one depends on (`^task`).
    Upstream(String),
    /// One task of one project, by the project's vx name.
    Exact(String, String),
}

/// A setting that was not translated, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    pub file: String,
    pub setting: String,
    pub why: String,
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.setting, self.why)
    }
}

impl Plan {
    pub fn note(&mut self, file: &str, setting: impl Into<String>, why: impl Into<String>) {
        self.notes.push(Note { file: file.to_string(), setting: setting.into(), why: why.into() });
    }

    /// Checks task references so the written files load: a reference to a
    /// task or project the plan does not define is dropped with a note.
    pub fn finish(&mut self) {
        self.projects.sort_by(|a, b| a.dir.cmp(&b.dir));
        let known: BTreeMap<String, BTreeSet<String>> = self
            .projects
            .iter()
            .map(|p| (p.name.clone(), p.task_names().into_iter().map(str::to_string).collect()))
            .collect();
        let mut notes = Vec::new();
        for project in &mut self.projects {
            let own = known.get(&project.name).cloned().unwrap_or_default();

            project.depends_on.retain(|d| {
                let ok = known.contains_key(d) && *d != project.name;
                if !ok {
                    notes.push(Note {
                        file: format!("{}/", project.dir),
                        setting: format!("project dependency `{d}`"),
                        why: "no such project in the workspace; dropped".to_string(),
                    });
                }
                ok
            });
            for (name, task) in &mut project.tasks {
                let (file, setting) = task.origin.clone();
                task.depends_on.retain(|dep| {
                    let why = match dep {
                        Dep::Upstream(_) => None,
                        Dep::Local(t) if own.contains(t) || t == name => None,
                        Dep::Local(t) => Some(format!("project `{}` has no task `{t}`; dropped", project.name)),
                        Dep::Exact(p, t) => match known.get(p) {
                            Some(tasks) if tasks.contains(t) => None,
                            Some(_) => Some(format!("project `{p}` has no task `{t}`; dropped")),
                            None => Some(format!("no project `{p}` in the workspace; dropped")),
                        },
                    };
                    if let Some(why) = &why {
                        notes.push(Note {
                            file: file.clone(),
                            setting: format!("{setting}.dependsOn"),
                            why: why.clone(),
                        });
                    }
                    why.is_none()
                });
                task.depends_on.retain(|dep| *dep != Dep::Local(name.clone()));
            }
        }
        self.notes.extend(notes);
        let mut seen = BTreeSet::new();
        self.notes.retain(|n| seen.insert(n.clone()));
    }
}
