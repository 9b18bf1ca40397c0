//! `vx last`: the last invocation in this workspace as one line that can be
//! pasted to run it again (with a `cd` in front when it ran elsewhere);
//! `vx last --failed`: the full output of the failed attempts of the last
//! run (or of `--run ID`, or of `--task TASK`'s last failure), as history
//! kept it.
//!
//! History keeps the directory the command was typed in, not the one `-C`
//! pointed at: the line holds `-C DIR` as typed, so it resolves from the
//! caller's directory, and a `cd` to DIR in front would make it DIR/DIR.
//!
//! `--failed` writes each log to stdout as the task wrote it, and the line
//! that names it (task, run, attempt, why it failed) to stderr, so
//! `vx last --failed --task web#test > test.log` is the log alone.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::cache::state_dir;
use crate::config::load_workspace;
use crate::error::{Error, Result};
use crate::events::TaskStatus;
use crate::history::{History, HistoryError, KeptLog};
use crate::session::caller_dir;
use crate::units::{format_bytes, shell_quote};

/// Print the last invocation as one paste-able line, or its failed logs (--failed).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  $(vx last)                          run the last command again
  vx last --failed                    the full output of the last run's failed attempts
  vx last --failed --task web#test    web#test's last failed attempt, whichever run it was
  vx last --failed --run 42           the failed attempts of run #42 (ids as `vx history` shows)
Logs go to stdout, the line naming each to stderr.")]
pub(crate) struct LastArgs {
    /// Print the full output of the failed attempts (flaky ones too) of the last run instead.
    #[arg(long)]
    pub failed: bool,

    /// With --failed: only this task (`project#task`); without --run, from its last run that failed.
    #[arg(long, value_name = "TASK", requires = "failed")]
    pub task: Option<String>,

    /// With --failed: that run, its id as `vx history` shows it, instead of the last.
    #[arg(long, value_name = "ID", requires = "failed")]
    pub run: Option<i64>,
}

fn unreadable(e: HistoryError) -> Error {
    Error::internal(format!("could not read .vx/history.db: {e}"))
}

fn nothing_recorded() -> Error {
    Error::usage("no invocation recorded in this workspace yet").with_hint("run one, e.g. `vx run build`")
}

pub(crate) fn cmd_last(args: LastArgs, cwd: &Path) -> Result<u8> {
    let ws = load_workspace(cwd)?;
    let history = History::open(&state_dir(&ws).join("history.db")).map_err(unreadable)?;
    if args.failed {
        return print_failed(&history, &args);
    }
    let last = history.recent(1).map_err(unreadable)?;
    let Some(last) = last.into_iter().next() else { return Err(nothing_recorded()) };
    if Path::new(&last.cwd) == caller_dir(cwd) {
        println!("{}", last.command);
    } else {
        println!("cd {} && {}", shell_quote(&last.cwd), last.command);
    }
    Ok(0)
}

/// The run `--failed` reads: `--run`, else `--task`'s last run with a
/// kept log, else the last run. `None` when `--task` never failed.
fn chosen_run(history: &History, args: &LastArgs) -> Result<Option<i64>> {
    if let Some(run) = args.run {
        if history.invocation(run).map_err(unreadable)?.is_none() {
            return Err(Error::usage(format!("no run {run} in .vx/history.db"))
                .with_hint("`vx history` lists the runs history keeps, with their ids"));
        }
        return Ok(Some(run));
    }
    if let Some(task) = &args.task {
        return Ok(history.failed_log(task, None).map_err(unreadable)?.map(|log| log.about.run));
    }
    match history.recent(1).map_err(unreadable)?.first() {
        Some(last) => Ok(Some(last.id)),
        None => Err(nothing_recorded()),
    }
}

/// `vx last --failed`: each kept log of the chosen run on stdout, named
/// on stderr; the failed tasks that have none are named too.
fn print_failed(history: &History, args: &LastArgs) -> Result<u8> {
    if let Some(task) = args.task.as_deref().filter(|t| !t.contains('#')) {
        return Err(Error::usage(format!("`{task}` is not a task id"))
            .with_hint(format!("name it as history does, PROJECT#TASK: --task {task}#test")));
    }
    let Some(run) = chosen_run(history, args)? else {
        let task = args.task.as_deref().unwrap_or_default();
        eprintln!("vx: history keeps no failed attempt of {task}: it passed in every run kept, or never ran");
        return Ok(0);
    };
    let wanted = |task: &str| args.task.as_deref().is_none_or(|t| t == task);
    let kept: Vec<KeptLog> =
        history.kept_logs(run).map_err(unreadable)?.into_iter().filter(|k| wanted(&k.task)).collect();
    let mut out = std::io::stdout().lock();
    for k in &kept {
        let Some(log) = history.attempt_log(k.run, &k.task, k.attempt).map_err(unreadable)? else { continue };
        let _ = out.flush();
        eprintln!("{}", heading(k));
        let _ = out.write_all(log.text.as_bytes());
        if !log.text.is_empty() && !log.text.ends_with('\n') {
            let _ = out.write_all(b"\n");
        }
    }
    let _ = out.flush();
    let unlogged: Vec<String> = history
        .recorded_tasks(run)
        .map_err(unreadable)?
        .into_iter()
        .filter(|t| matches!(t.status, TaskStatus::Failed(_) | TaskStatus::TimedOut(_)))
        .filter(|t| wanted(&t.task) && !kept.iter().any(|k| k.task == t.task))
        .map(|t| format!("{} ({})", t.task, t.reason.unwrap_or_else(|| t.status.word().to_string())))
        .collect();
    for task in &unlogged {
        eprintln!(
            "vx: {task} failed in run #{run}, and history kept no log of it: it failed before its command ran, or it is persistent (a server's output is not kept)"
        );
    }
    if kept.is_empty() && unlogged.is_empty() {
        say_none_failed(history, run, args.task.as_deref())?;
    }
    Ok(0)
}

/// The line that names a log on stderr.
fn heading(k: &KeptLog) -> String {
    let then = if k.flaky { ", then passed (flaky)" } else { "" };
    let cut = if k.truncated {
        format!("; it wrote {}, of which history kept the first and the last MiB", format_bytes(k.bytes))
    } else {
        String::new()
    };
    let nothing = if k.bytes == 0 { "; it wrote nothing" } else { "" };
    format!(
        "vx: {} in run #{}: attempt {} of {} failed ({}){then}{cut}{nothing}",
        k.task, k.run, k.attempt, k.attempts, k.reason
    )
}

/// Says that nothing (or `task`) failed in run `run`, and where the last
/// kept log is.
fn say_none_failed(history: &History, run: i64, task: Option<&str>) -> Result<()> {
    if let Some(task) = task {
        eprintln!("vx: {task} did not fail in run #{run}");
        return Ok(());
    }
    match history.last_run_with_logs().map_err(unreadable)? {
        Some(other) if other != run => eprintln!(
            "vx: no task failed in run #{run}; the last run with a failed task's log is #{other}: vx last --failed --run {other}"
        ),
        _ => eprintln!("vx: no task failed in run #{run}"),
    }
    Ok(())
}
