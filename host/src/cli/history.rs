//! `vx history`: recent invocations with their id, duration, hit rate,
//! exit code, the CPU time and peak memory of their tasks, tags, and the
//! tasks whose failed attempts' logs history kept (printed by
//! `vx last --failed --run ID`); `--flaky`: the tasks that passed only on
//! a retry.

use std::path::Path;

use clap::Args;

use super::choice::{Format, choice};
use crate::cache::state_dir;
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::history::{FlakyTask, History, HistoryError, Invocation, KeptLog};
use crate::units::{format_bytes, format_duration};

/// Show recent invocations, their durations and cache hit rates.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  vx history\n  vx history --limit 50 --format json\n  vx history --flaky")]
pub(crate) struct HistoryArgs {
    /// `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = choice::<Format>())]
    pub format: Format,

    /// How many invocations (or flaky tasks), newest first.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,

    /// The tasks that failed and then passed on a retry, most recently
    /// flaky first, with how often.
    #[arg(long)]
    pub flaky: bool,
}

pub(crate) fn cmd_history(args: HistoryArgs, cwd: &Path) -> Result<u8> {
    let json = args.format == Format::Json;
    let ws = load_workspace(cwd)?;
    let unreadable = |e: HistoryError| Error::internal(format!("could not read .vx/history.db: {e}"));
    let history = History::open(&state_dir(&ws).join("history.db")).map_err(unreadable)?;
    if args.flaky {
        let flaky = history.flaky_tasks(args.limit).map_err(unreadable)?;
        print_flaky(&flaky, json);
        return Ok(0);
    }
    let recent = history.recent(args.limit).map_err(unreadable)?;
    let ids: Vec<i64> = recent.iter().map(|i| i.id).collect();
    let logs = history.kept_logs_of(&ids).map_err(unreadable)?;
    let logs_of = |id: i64| logs.get(&id).map_or(&[][..], Vec::as_slice);
    if json {
        let rows: Vec<serde_json::Value> = recent.iter().map(|i| json_row(i, logs_of(i.id))).collect();
        println!("{}", serde_json::to_string_pretty(&rows).expect("history serializes"));
        return Ok(0);
    }
    for i in &recent {
        println!("{}", text_row(i, logs_of(i.id)));
    }
    if recent.is_empty() {
        println!("no invocation recorded in this workspace yet");
    } else if !logs.is_empty() {
        println!(
            "Runs with `logs:` kept the output of those tasks' failed attempts: vx last --failed --run ID [--task TASK]"
        );
    }
    Ok(0)
}

/// One invocation as `--format json` lists it (`docs/schema/history.v1.json`).
fn json_row(i: &Invocation, logs: &[KeptLog]) -> serde_json::Value {
    serde_json::json!({
        "id": i.id,
        "command": i.command,
        "cwd": i.cwd,
        "tags": i.tags.iter().map(|(k, v)| serde_json::json!({"key": k, "value": v})).collect::<Vec<_>>(),
        "started_unix_ms": i.started_ms,
        "duration_ms": i.duration_ms(),
        "exit_code": i.exit_code,
        "tasks": i.tasks,
        "cached": i.cached,
        "cpu_ms": i.cpu_ms,
        "peak_rss_bytes": i.peak_rss_bytes,
        "logs": logs.iter().map(|k| serde_json::json!({
            "task": k.task,
            "attempt": k.attempt,
            "exit_code": k.exit_code,
            "reason": k.reason,
            "flaky": k.flaky,
            "bytes": k.bytes,
            "truncated": k.truncated,
        })).collect::<Vec<_>>(),
    })
}

/// One invocation as a line of text: `logs:` names the tasks whose
/// failed attempts' output was kept.
fn text_row(i: &Invocation, logs: &[KeptLog]) -> String {
    let rate = if i.tasks > 0 { format!("{}%", i.cached * 100 / i.tasks) } else { "-".into() };
    let tags: Vec<String> = i.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let duration = format_duration(std::time::Duration::from_millis(i.duration_ms().max(0) as u64));
    // CPU and peak memory of the tasks that ran here (a hit used none).
    let used = match i.peak_rss_bytes {
        Some(peak) => format!(
            "cpu {:>7}, peak {:>9}",
            format_duration(std::time::Duration::from_millis(i.cpu_ms.max(0) as u64)),
            format_bytes(peak.max(0) as u64)
        ),
        None => format!("{:24}", ""),
    };
    let mut tasks: Vec<&str> = Vec::new();
    for k in logs {
        if !tasks.contains(&k.task.as_str()) {
            tasks.push(&k.task);
        }
    }
    format!(
        "#{:<5} exit {:<3} {:>8}  {:>3} tasks, {:>4} cached  {used}  {}{}{}",
        i.id,
        i.exit_code,
        duration,
        i.tasks,
        rate,
        i.command,
        if tags.is_empty() { String::new() } else { format!("  [{}]", tags.join(", ")) },
        if tasks.is_empty() { String::new() } else { format!("  logs: {}", tasks.join(", ")) }
    )
}

/// `vx history --flaky`: one line per task, or JSON.
fn print_flaky(flaky: &[FlakyTask], json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(flaky).expect("flaky tasks serialize"));
        return;
    }
    let width = flaky.iter().map(|f| f.task.len()).max().unwrap_or(0);
    for f in flaky {
        println!(
            "{:<width$}  flaky in {} of {} execution(s), last in invocation #{}",
            f.task, f.flaky, f.executions, f.last_invocation
        );
    }
    if flaky.is_empty() {
        println!("no flaky task recorded in this workspace");
    }
}
