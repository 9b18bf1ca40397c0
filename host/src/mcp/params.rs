//! The arguments of `vx mcp`'s tools, as their JSON Schemas show them to
//! the client, and how they become `vx` command-line arguments.
//!
//! Values are passed as separate arguments, never through a shell, and in
//! `--flag=VALUE` form, so a value can never be read as another flag; a
//! task name that starts with `-` is refused for the same reason.

use schemars::JsonSchema;
use serde::Deserialize;

/// `list_projects`: which projects.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(super) struct ProjectsParams {
    /// Project filters as `vx run --filter` takes them: `web`, `@org/*`,
    /// `./apps/*`, `web...` (with its dependencies), `...ui` (with its
    /// dependents), `tag:scope:*`, `!name`. Every project when empty.
    #[serde(default)]
    pub filter: Vec<String>,
    /// Each task in full (command, dependencies, inputs, outputs, env)
    /// instead of its name and description.
    #[serde(default)]
    pub detail: bool,
}

/// A tool about one task.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct TaskParams {
    /// The task, as `project#task` (for example `web#build`).
    pub task: String,
}

/// `failed_log`: a task's kept log.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct FailedLogParams {
    /// The task, as `project#task`.
    pub task: String,
    /// The run (an id from `last_runs`); the latest run where it failed when
    /// absent.
    #[serde(default)]
    pub run: Option<i64>,
}

/// `last_runs`: how many.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(super) struct RunsParams {
    /// How many runs, newest first (default 10, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `affected`: what a change selects.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct AffectedParams {
    /// The tasks to consider (`build`, `test`, `web#lint`).
    pub tasks: Vec<String>,
    /// The git revision to compare with; the merge base with main (else
    /// master) when absent. Uncommitted and untracked files count.
    #[serde(default)]
    pub base: Option<String>,
}

/// What `plan` and `run_tasks` select, as `vx run` selects it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(super) struct SelectionParams {
    /// The tasks: `build` (in every selected project) or `web#build`.
    pub tasks: Vec<String>,
    /// Project filters as `vx run --filter` takes them.
    #[serde(default)]
    pub filter: Vec<String>,
    /// Only what changed against this git revision, with its dependents
    /// (`""` for the merge base with main).
    #[serde(default)]
    pub affected: Option<String>,
    /// Only the named tasks, not the tasks they depend on.
    #[serde(default)]
    pub only: bool,
    /// Ignore cached results (`run_tasks` only; results are still stored).
    #[serde(default)]
    pub force: bool,
}

impl SelectionParams {
    /// `vx run`'s arguments for this selection (without `--dry` and the
    /// like), or why a value is refused.
    pub(super) fn run_args(&self) -> Result<Vec<String>, String> {
        if self.tasks.is_empty() {
            return Err("name at least one task, e.g. `build` or `web#build`".into());
        }
        let mut args = vec!["run".to_string()];
        args.extend(task_args(&self.tasks)?);
        args.extend(self.filter.iter().map(|f| format!("--filter={f}")));
        if let Some(rev) = &self.affected {
            args.push(if rev.is_empty() { "--affected".into() } else { format!("--affected={rev}") });
        }
        if self.only {
            args.push("--only".into());
        }
        if self.force {
            args.push("--force".into());
        }
        Ok(args)
    }
}

/// Task names as positional arguments; one that would read as a flag is
/// refused.
pub(super) fn task_args(tasks: &[String]) -> Result<Vec<String>, String> {
    match tasks.iter().find(|t| t.starts_with('-') || t.trim().is_empty()) {
        Some(bad) => Err(format!("`{bad}` is not a task name: name tasks as `build` or `web#build`")),
        None => Ok(tasks.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_flag_equals_value_and_flags_as_tasks_are_refused() {
        let sel = SelectionParams {
            tasks: vec!["build".into()],
            filter: vec!["--force".into()],
            affected: Some("origin/main".into()),
            only: true,
            ..SelectionParams::default()
        };
        assert_eq!(sel.run_args().unwrap(), ["run", "build", "--filter=--force", "--affected=origin/main", "--only"]);
        let bad = SelectionParams { tasks: vec!["--force".into()], ..SelectionParams::default() };
        assert!(bad.run_args().unwrap_err().contains("not a task name"));
        assert!(SelectionParams::default().run_args().is_err());
    }
}
