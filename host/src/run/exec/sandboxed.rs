//! A sandboxed attempt on the local executor: its own tracer around the
//! task's shared ruleset, and afterwards the paths it was refused, each
//! named with the line to add to `vx.toml` (docs/sandbox.md).

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::Attempt;
use crate::events::TaskStatus;
use crate::guard::TaskCommand;
use crate::sandbox::{Touch, Tracer, Violation, entries, spell};

/// How long the tracer may take to hand over its report once the task's
/// processes are gone (its thread ends when the last one has).
const REPORT_WAIT: Duration = Duration::from_secs(5);
/// Paths named per attempt; the rest are counted.
const MAX_NAMED: usize = 20;

/// The command of this attempt with a tracer of its own, when the task is
/// sandboxed; the attempt's own command (not a copy) when it is not.
pub(super) fn command(a: &Attempt) -> Result<(Cow<'_, TaskCommand>, Option<Tracer>), String> {
    let Some(confine) = &a.confinement else { return Ok((Cow::Borrowed(&a.command), None)) };
    let (attempt, tracer) = confine.for_attempt().map_err(|e| format!("could not start its sandbox's tracer: {e}"))?;
    let mut command = a.command.clone();
    command.confine = Some(Arc::new(attempt) as Arc<dyn crate::guard::PreExec>);
    Ok((Cow::Owned(command), Some(tracer)))
}

/// The status after the tracer's report: each refused path a note, and a
/// task that succeeded anyway failed (it was refused something, so its
/// result is not what its declarations promise, and it is not cached).
pub(super) async fn settle(a: &Attempt, tracer: Option<Tracer>, status: TaskStatus) -> TaskStatus {
    let Some(tracer) = tracer else { return status };
    let report = tokio::time::timeout(REPORT_WAIT, tokio::task::spawn_blocking(move || tracer.finish())).await;
    let violations = match report {
        Ok(Ok(v)) => v,
        _ => {
            a.events.note(&a.id, "its sandbox's report did not arrive; refused paths are not named");
            return status;
        }
    };
    if let Some(observed) = a.confinement.as_ref().and_then(|c| c.observed.clone()) {
        // `--verify=inputs`: reported after the run, as a patch.
        observed.seen.lock().expect("observed lock poisoned").push((a.id.clone(), violations));
        return status;
    }
    let root = a.confinement.as_ref().map(|c| c.policy.root.clone()).unwrap_or_default();
    if violations.is_empty() {
        if status != TaskStatus::Succeeded && !matches!(status, TaskStatus::Cancelled) {
            a.events.note(
                &a.id,
                "it ran sandboxed, and its sandbox named no path outside its declarations (reads under /proc are refused unreported)",
            );
        }
        return status;
    }
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let where_ = task_table(a, &root);
    let project = std::fs::canonicalize(&a.command.cwd).unwrap_or_else(|_| a.command.cwd.clone());
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    for v in violations.iter().take(MAX_NAMED) {
        a.events.note(&a.id, &describe(v, &project, &root, home.as_deref(), &where_));
    }
    if violations.len() > MAX_NAMED {
        a.events.note(&a.id, &format!("and {} more paths outside its declarations", violations.len() - MAX_NAMED));
    }
    match status {
        TaskStatus::Succeeded => TaskStatus::Failed(format!(
            "its sandbox refused {} path(s) its declarations do not cover",
            violations.len()
        )),
        other => other,
    }
}

/// `[tasks.build] in packages/web/vx.toml`.
fn task_table(a: &Attempt, root: &Path) -> String {
    let dir = a.command.cwd.strip_prefix(root).unwrap_or(&a.command.cwd);
    let file = if dir.as_os_str().is_empty() { "vx.toml".to_string() } else { format!("{}/vx.toml", dir.display()) };
    format!("[tasks.{}] in {file}", a.mark.task)
}

/// One refused path, and the line that would allow it.
fn describe(v: &Violation, project: &Path, root: &Path, home: Option<&Path>, table: &str) -> String {
    let (shown, inside) = spell(&v.path, project, root, home);
    match v.touch {
        Touch::Write => format!(
            "sandbox: refused a write to {shown}, outside its declarations; add \"{shown}\" to `outputs` or to `sandbox.allow-write` of {table}"
        ),
        Touch::Read => format!(
            "sandbox: refused a read of {shown}, outside its declarations; add \"{shown}\" to `inputs` or to `sandbox.allow-read` of {table}"
        ),
        Touch::List if inside => {
            let glob = entries(&shown);
            let dir =
                if shown.is_empty() { "the project's directory".to_string() } else { format!("the directory {shown}") };
            format!(
                "sandbox: refused a listing of {dir}, outside its declarations; add \"{glob}\" to `inputs` of {table}"
            )
        }
        Touch::List => format!(
            "sandbox: refused a listing of the directory {shown}, outside its declarations; add \"{shown}\" to `sandbox.allow-read` of {table}"
        ),
    }
}
