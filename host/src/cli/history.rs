//! `vx history`: recent invocations with their duration, hit rate, exit
//! code, the CPU time and peak memory of their tasks, and tags;
//! `--flaky`: the tasks that passed only on a retry.

use std::path::Path;

use clap::Args;

use super::choice::{Format, choice};
use crate::cache::state_dir;
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::history::{FlakyTask, History, HistoryError};
use crate::units::{format_bytes, format_duration};

/// Show recent invocations, their durations and cache hit rates.
#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  vx history\n  vx history --limit 50 --format json\n  vx history --flaky")]
pub struct HistoryArgs {
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

pub fn cmd_history(args: HistoryArgs, cwd: &Path) -> Result<u8> {
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
    if json {
        let rows: Vec<serde_json::Value> = recent
            .iter()
            .map(|i| {
                serde_json::json!({
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
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows).expect("history serializes"));
        return Ok(0);
    }
    for i in &recent {
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
        println!(
            "#{:<5} exit {:<3} {:>8}  {:>3} tasks, {:>4} cached  {used}  {}{}",
            i.id,
            i.exit_code,
            duration,
            i.tasks,
            rate,
            i.command,
            if tags.is_empty() { String::new() } else { format!("  [{}]", tags.join(", ")) }
        );
    }
    if recent.is_empty() {
        println!("no invocation recorded in this workspace yet");
    }
    Ok(0)
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
