//! The tools answered by a child `vx` with JSON output: the same command a
//! user would type, so an agent and a person always see one truth (the
//! key, the plan, the history), and none of it is computed twice.

use std::path::Path;

use serde_json::{Value, json};

use super::params::{AffectedParams, RunsParams, SelectionParams, TaskParams, task_args};
use crate::guard::VxChild;

/// The most runs `last_runs` returns.
const MAX_RUNS: u32 = 200;

/// Runs `vx ARGS` under `root` and parses its standard output as JSON; an
/// error is vx's own one-line message.
pub(super) async fn vx_json(root: &Path, args: &[String]) -> Result<Value, String> {
    let out = VxChild::output(root, args).await.map_err(|e| format!("could not start vx: {e}"))?;
    if !out.success {
        return Err(error_line(&out.stderr, "vx failed without a message"));
    }
    serde_json::from_str(&out.stdout).map_err(|e| format!("vx printed no JSON ({e})"))
}

/// vx's own one-line error from a child's standard error (without its
/// `vx: error: ` prefix), else its last line, else `fallback`.
pub(super) fn error_line(stderr: &str, fallback: &str) -> String {
    let line = stderr.lines().find(|l| l.starts_with("vx: error:")).or_else(|| stderr.lines().last());
    line.unwrap_or(fallback).trim_start_matches("vx: error: ").to_string()
}

/// `show_task`: one task as the plan resolves it: its command (with the
/// workspace's settings applied), dependencies, declarations, cache key and
/// whether that key is cached.
pub(super) async fn show_task(root: &Path, params: &TaskParams) -> Result<Value, String> {
    let mut args = vec!["run".to_string()];
    args.extend(task_args(std::slice::from_ref(&params.task))?);
    // Not `--only`: the plan's `dependencies` are the tasks it waits for
    // in the plan, and those are planned only with it.
    args.push("--dry=json".into());
    let plan = vx_json(root, &args).await?;
    let tasks = plan["tasks"].as_array().cloned().unwrap_or_default();
    let mut named = tasks.iter().filter(|t| t["id"] == params.task.as_str() || t["task"] == params.task.as_str());
    match (named.next(), named.next()) {
        (Some(task), None) => Ok(task.clone()),
        (Some(_), Some(_)) => {
            Err(format!("`{}` names a task in several projects: name one as `project#task`", params.task))
        }
        (None, _) => Err(format!("`{}` selects no task", params.task)),
    }
}

/// `why`: why the task would run or be a hit (`vx why --format json`).
pub(super) async fn why(root: &Path, params: &TaskParams) -> Result<Value, String> {
    let mut args = vec!["why".to_string()];
    args.extend(task_args(std::slice::from_ref(&params.task))?);
    args.push("--format=json".into());
    vx_json(root, &args).await
}

/// `last_runs`: the newest runs with their outcomes (`vx history`), and
/// for each the tasks whose failed logs history kept (`logs`).
pub(super) async fn last_runs(root: &Path, params: &RunsParams) -> Result<Value, String> {
    let limit = params.limit.unwrap_or(10).clamp(1, MAX_RUNS);
    let runs = vx_json(root, &["history".into(), "--format=json".into(), format!("--limit={limit}")]).await?;
    // Structured content is an object in MCP; `vx history` prints a list.
    Ok(json!({ "runs": runs }))
}

/// `plan`: what `vx run` would do (`--dry=json`).
pub(super) async fn plan(root: &Path, params: &SelectionParams) -> Result<Value, String> {
    let mut args = params.run_args()?;
    args.push("--dry=json".into());
    vx_json(root, &args).await
}

/// `affected`: the tasks a change selects, each with its reasons (`vx
/// query --affected --format json`); the tasks the plan pulls in only as
/// their dependencies are listed apart.
pub(super) async fn affected(root: &Path, params: &AffectedParams) -> Result<Value, String> {
    let mut args = vec!["query".to_string()];
    args.extend(task_args(&params.tasks)?);
    args.push(match params.base.as_deref() {
        None | Some("") => "--affected".into(),
        Some(rev) => format!("--affected={rev}"),
    });
    args.push("--format=json".into());
    let query = vx_json(root, &args).await?;
    let (mut affected, mut pulled_in) = (Vec::new(), Vec::new());
    for task in query["tasks"].as_array().into_iter().flatten() {
        match task["reasons"].as_array().filter(|r| !r.is_empty()) {
            Some(reasons) => affected.push(json!({ "id": task["id"], "reasons": reasons })),
            None => pulled_in.push(task["id"].clone()),
        }
    }
    Ok(json!({ "base": params.base, "tasks": affected, "dependencies_also_planned": pulled_in }))
}
