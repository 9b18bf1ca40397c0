//! `failed_log`: a failed task's whole log, as history keeps it (bounded
//! and compressed, pruned with its run: docs/observability.md).

use std::path::Path;

use serde_json::Value;

use super::params::FailedLogParams;
use crate::history::History;

/// The kept log of the task's latest failed attempt (or of run `run`), or
/// why there is none.
pub(crate) fn failed_log(state_dir: &Path, params: &FailedLogParams) -> Result<Value, String> {
    let history =
        History::open(&state_dir.join("history.db")).map_err(|e| format!("could not open .vx/history.db: {e}"))?;
    let found =
        history.failed_log(&params.task, params.run).map_err(|e| format!("could not read .vx/history.db: {e}"))?;
    let Some(log) = found else {
        let run = params.run.map_or(String::new(), |r| format!(" in run {r}"));
        return Err(format!(
            "no kept log of `{}`{run}: it has not failed since history began, or that run was pruned ([history] keep); \
             last_runs lists the runs",
            params.task
        ));
    };
    serde_json::to_value(log).map_err(|e| format!("could not encode the log: {e}"))
}
