//! Writing an invocation to history, and the shell quoting that makes its
//! command line paste-able.

use std::path::Path;
use std::time::SystemTime;

use crate::cache::{History, Invocation, TaskRunRecord, state_dir};
use crate::config::Workspace;
use crate::events::{CacheOutcome, TaskStatus};
use crate::run::RunOutcome;

/// Quotes one word for a POSIX shell: as is when it holds only safe
/// characters, else in single quotes.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "_-./:,+=@%^#".contains(c));
    if safe { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// `vx ARGS…` as one line, from the process arguments.
pub fn command_line(args: &[String]) -> String {
    std::iter::once("vx".to_string()).chain(args.iter().map(|a| shell_quote(a))).collect::<Vec<_>>().join(" ")
}

pub fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Records a finished run. History is a convenience: failures warn.
pub fn record_run(
    ws: &Workspace,
    args: &[String],
    cwd: &Path,
    tags: &[(String, String)],
    started: SystemTime,
    exit_code: u8,
    outcome: &RunOutcome,
) {
    let invocation = Invocation {
        id: 0,
        command: command_line(args),
        cwd: cwd.to_string_lossy().into_owned(),
        tags: tags.to_vec(),
        started_ms: unix_ms(started),
        ended_ms: unix_ms(SystemTime::now()),
        exit_code: i32::from(exit_code),
        tasks: 0,
        cached: 0,
    };
    let runs: Vec<TaskRunRecord> = outcome
        .summary
        .results
        .iter()
        .map(|r| TaskRunRecord {
            task: r.id.clone(),
            key: r.key.clone(),
            status: match r.status {
                TaskStatus::Succeeded => "ok",
                TaskStatus::Failed(_) => "failed",
                TaskStatus::TimedOut(_) => "timed-out",
                TaskStatus::Cancelled => "cancelled",
                TaskStatus::Skipped(_) => "skipped",
            },
            cache: match r.cache {
                CacheOutcome::Uncached => "uncached",
                CacheOutcome::Miss => "miss",
                CacheOutcome::Local => "local",
                CacheOutcome::Remote => "remote",
            },
            duration: r.duration,
            exit_code: r.exit_code,
        })
        .collect();
    let result = History::open(&state_dir(ws).join("history.db"))
        .and_then(|mut h| h.record(&invocation, &runs, &outcome.manifests));
    if let Err(e) = result {
        eprintln!("vx: warning: could not record this run in .vx/history.db: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips_through_a_shell_reader() {
        assert_eq!(shell_quote("build"), "build");
        assert_eq!(shell_quote("web#build"), "web#build");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(command_line(&["run".into(), "--filter".into(), "./apps/*".into()]), "vx run --filter './apps/*'");
    }
}
