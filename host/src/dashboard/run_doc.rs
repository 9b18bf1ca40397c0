//! A recorded run as the summary document `--summarize` writes
//! (`docs/schema/run-summary.v1.json`): the rows history reads back
//! (`History::recorded_tasks`) are turned into the plan and the results
//! [`crate::report::run_document`] describes, so the dashboard and
//! `vx.renderRun` see one shape.
//!
//! Runs recorded before history kept timings have no `start_ms`,
//! executor, dependencies or reason: those fields are null or empty, and
//! the timeline has nothing to place (the table still lists every task).

use std::time::{Instant, SystemTime};

use serde_json::Value;

use crate::events::{RunSummary, TaskResult};
use crate::guard::Usage;
use crate::history::{History, HistoryError, Invocation, RecordedTask, millis};
use crate::report::{PlannedTask, RunInfo, run_document};

/// The summary document of invocation `id`, `None` when there is none.
pub(crate) fn recorded_document(history: &History, id: i64) -> Result<Option<Value>, HistoryError> {
    let Some(inv) = history.invocation(id)? else { return Ok(None) };
    let origin = Instant::now();
    let (mut results, mut reasons, mut planned) = (Vec::new(), Vec::new(), Vec::new());
    for task in history.recorded_tasks(id)? {
        let (result, reason, plan) = task_result(task, origin);
        results.push(result);
        reasons.push(reason);
        planned.extend(plan);
    }
    let wall = inv.detail.wall_ms.unwrap_or_else(|| inv.duration_ms());
    let summary = RunSummary { results, wall: millis(wall) };
    let info = run_info(&inv, origin, planned);
    let mut doc = run_document(&info, Some(inv.id), &summary, inv.exit_code.clamp(0, 255) as u8);
    // The command as recorded: runs from before `args` was kept have none.
    doc["invocation"]["command"] = Value::String(inv.command.clone());
    // The reasons as recorded (the status alone cannot say them again).
    if let Some(tasks) = doc["tasks"].as_array_mut() {
        for (task, reason) in tasks.iter_mut().zip(reasons) {
            task["reason"] = reason.map_or(Value::Null, Value::String);
        }
    }
    Ok(Some(doc))
}

/// A recorded task as a result, its reason, and its place in the plan
/// (`None` in runs recorded before the executor was kept).
fn task_result(t: RecordedTask, origin: Instant) -> (TaskResult, Option<String>, Option<PlannedTask>) {
    let result = TaskResult {
        key: t.key,
        duration: t.duration,
        cache: t.cache,
        exit_code: t.exit_code,
        attempts: t.attempts,
        started: t.start_ms.map(|ms| origin + millis(ms)),
        usage: t
            .cpu_ms
            .map(|cpu| Usage { cpu: millis(cpu), peak_rss_bytes: t.peak_rss_bytes.unwrap_or(0).max(0) as u64 }),
        ..TaskResult::not_run(t.task.clone(), t.status)
    };
    // History keeps no description: the dashboard adds the workspace's.
    let plan = t.executor.map(|executor| PlannedTask {
        id: t.task,
        executor,
        dependencies: t.dependencies,
        description: None,
    });
    (result, t.reason, plan)
}

fn run_info(inv: &Invocation, origin: Instant, tasks: Vec<PlannedTask>) -> RunInfo {
    RunInfo {
        args: inv.detail.args.clone(),
        cwd: inv.cwd.clone().into(),
        tags: inv.tags.clone(),
        // Runs from before the mode was kept ran in the default mode.
        env_mode: if inv.detail.env_mode.as_deref() == Some("loose") { "loose" } else { "strict" },
        git_commit: inv.detail.git_commit.clone(),
        branch: inv.detail.branch.clone(),
        started: SystemTime::UNIX_EPOCH + millis(inv.started_ms),
        origin,
        tasks: tasks.into(),
    }
}
