//! `run_tasks` (only with `vx mcp --allow-run`): a real `vx run` in a
//! child vx, its result as data. Each task's status, cache outcome,
//! duration and exit code come from the run's summary (`--summarize`, the
//! schema of docs/schema/run-summary.v1.json); its log is cut from the
//! run's output (grouped, one `ID: ` prefix a line) into a file of its own
//! under `.vx/mcp/runs/`, and the answer carries the file and the tail.
//!
//! The output goes to disk as it comes, so a run that prints gigabytes
//! holds no more than a line in memory. The newest [`KEEP_RUNS`] runs'
//! files are kept; vx owns `.vx/mcp/` and removes nothing outside it.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use super::params::SelectionParams;
use crate::guard::VxChild;

/// How many runs' logs `.vx/mcp/runs/` keeps.
pub(super) const KEEP_RUNS: usize = 20;

/// How many of a task's last lines the answer carries.
const TAIL_LINES: usize = 40;

/// Runs the selection; the per-task result, or vx's own error when the run
/// could not start (a bad task name, a broken configuration).
pub(super) async fn run_tasks(root: &Path, state_dir: &Path, params: &SelectionParams) -> Result<Value, String> {
    let runs = state_dir.join("mcp").join("runs");
    let dir = new_run_dir(&runs).map_err(|e| format!("could not make a directory under {}: {e}", runs.display()))?;
    let summary_file = dir.join("summary.json");
    let mut args = params.run_args()?;
    args.extend([
        "--ui=stream".to_string(),
        "--log-order=grouped".into(),
        "--log-prefix=task".into(),
        format!("--summarize={}", summary_file.display()),
        "--tag=client=mcp".into(),
    ]);
    let output = dir.join("output.log");
    let (code, stderr) = run_to_file(root, &args, &output).await?;
    prune(&runs, KEEP_RUNS);
    let Ok(summary) =
        std::fs::read(&summary_file).map_err(|_| ()).and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|_| ()))
    else {
        // No summary: the run never started. vx said why on stderr.
        return Err(super::answers::error_line(&stderr, "vx run ended without a summary"));
    };
    let tasks = summary["tasks"].as_array().cloned().unwrap_or_default();
    let ids: Vec<String> = tasks.iter().filter_map(|t| t["id"].as_str().map(str::to_string)).collect();
    let logs =
        split_logs(&output, &dir.join("logs"), &ids).map_err(|e| format!("could not split the run's output: {e}"))?;
    let tasks: Vec<Value> = tasks.iter().map(|t| task_result(t, &logs)).collect();
    Ok(json!({
        "exit_code": code,
        "run": summary["invocation"]["id"],
        "totals": summary["totals"],
        "tasks": tasks,
        "output_file": output,
        "vx_messages": stderr.lines().rev().take(TAIL_LINES).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>(),
    }))
}

/// One task's result: the summary's fields and its log.
fn task_result(t: &Value, logs: &BTreeMap<String, TaskLog>) -> Value {
    let id = t["id"].as_str().unwrap_or_default();
    let log = logs.get(id);
    json!({
        "id": id,
        "status": t["status"],
        "cache": t["cache"],
        "duration_ms": t["duration_ms"],
        "exit_code": t["exit_code"],
        "reason": t["reason"],
        "attempts": t["attempts"],
        "flaky": t["flaky"],
        "log_lines": log.map_or(0, |l| l.lines),
        "log_tail": log.map(|l| l.tail.iter().collect::<Vec<_>>()).unwrap_or_default(),
        "log_file": log.map(|l| &l.file),
    })
}

/// Runs `vx ARGS`, its standard output written to `file` as it comes; the
/// exit code and standard error (vx's own messages, bounded).
async fn run_to_file(root: &Path, args: &[String], file: &Path) -> Result<(i32, String), String> {
    let mut child = VxChild::spawn(root, args).map_err(|e| format!("could not start vx: {e}"))?;
    let stdout = child.stdout().ok_or("vx's output is not a pipe")?;
    let stderr = child.stderr().ok_or("vx's error output is not a pipe")?;
    let mut sink = std::fs::File::create(file).map_err(|e| format!("could not write {}: {e}", file.display()))?;
    let copy_out = async {
        let mut reader = tokio::io::BufReader::new(stdout);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf).await?;
            if n == 0 {
                return Ok::<_, std::io::Error>(());
            }
            sink.write_all(&buf[..n])?;
        }
    };
    let read_err = async {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let mut kept = VecDeque::new();
        while let Some(line) = lines.next_line().await? {
            if kept.len() == 200 {
                kept.pop_front();
            }
            kept.push_back(line);
        }
        Ok::<_, std::io::Error>(kept.into_iter().collect::<Vec<_>>().join("\n"))
    };
    let (copied, err) = tokio::join!(copy_out, read_err);
    copied.map_err(|e| format!("could not save vx's output: {e}"))?;
    let code = child.wait().await.map_err(|e| format!("could not wait for vx: {e}"))?;
    Ok((code, err.unwrap_or_default()))
}

/// A task's log, cut from the run's output.
#[derive(Debug)]
struct TaskLog {
    file: PathBuf,
    lines: usize,
    tail: VecDeque<String>,
}

/// Cuts `output` into one file per task in `dir`: every line that starts
/// with `ID: ` for a task of the run (the longest such id, since one id may
/// begin another: `web#build` and `web#build:prod`).
fn split_logs(output: &Path, dir: &Path, ids: &[String]) -> std::io::Result<BTreeMap<String, TaskLog>> {
    std::fs::create_dir_all(dir)?;
    let mut by_length: Vec<&String> = ids.iter().collect();
    by_length.sort_by_key(|id| std::cmp::Reverse(id.len()));
    let mut logs: BTreeMap<String, (BufWriter<std::fs::File>, TaskLog)> = BTreeMap::new();
    let reader = std::io::BufReader::new(std::fs::File::open(output)?);
    for line in reader.split(b'\n') {
        let line = String::from_utf8_lossy(&line?).into_owned();
        let Some(id) = by_length
            .iter()
            .find(|id| line.len() > id.len() && line.starts_with(id.as_str()) && line[id.len()..].starts_with(": "))
        else {
            continue;
        };
        let text = &line[id.len() + 2..];
        let entry = match logs.entry((*id).clone()) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let file = dir.join(format!("{}.log", file_name(id)));
                let writer = BufWriter::new(std::fs::File::create(&file)?);
                e.insert((writer, TaskLog { file, lines: 0, tail: VecDeque::new() }))
            }
        };
        writeln!(entry.0, "{text}")?;
        entry.1.lines += 1;
        if entry.1.tail.len() == TAIL_LINES {
            entry.1.tail.pop_front();
        }
        entry.1.tail.push_back(text.to_string());
    }
    let mut out = BTreeMap::new();
    for (id, (mut writer, log)) in logs {
        writer.flush()?;
        out.insert(id, log);
    }
    Ok(out)
}

/// A task id as a file name: `/` (a scoped package) and `%` escaped.
fn file_name(id: &str) -> String {
    id.replace('%', "%25").replace('/', "%2F")
}

/// A new directory for one run, named by the time, unique.
fn new_run_dir(runs: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(runs)?;
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    for n in 0.. {
        let dir = runs.join(format!("{ms}-{n}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("an unbounded range ends only by returning")
}

/// Removes all but the newest `keep` run directories (their names sort by
/// time); one that cannot be removed is left for the next run.
fn prune(runs: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(runs) else { return };
    let mut dirs: Vec<(u128, u64, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (ms, n) = name.split_once('-')?;
            Some((ms.parse().ok()?, n.parse().ok()?, e.path()))
        })
        .collect();
    dirs.sort();
    let excess = dirs.len().saturating_sub(keep);
    for (_, _, dir) in dirs.into_iter().take(excess) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_is_cut_by_the_longest_matching_id_and_other_lines_are_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        let output = tmp.path().join("output.log");
        std::fs::write(
            &output,
            "web#build: one\nweb#build:prod: two\n── running 2 task(s)\n@o/ui#test: three\nweb#build: four\n",
        )
        .unwrap();
        let ids = ["web#build".to_string(), "web#build:prod".into(), "@o/ui#test".into()];
        let logs = split_logs(&output, &tmp.path().join("logs"), &ids).unwrap();
        assert_eq!(std::fs::read_to_string(&logs["web#build"].file).unwrap(), "one\nfour\n");
        assert_eq!(std::fs::read_to_string(&logs["web#build:prod"].file).unwrap(), "two\n");
        assert_eq!(logs["@o/ui#test"].file.file_name().unwrap(), "@o%2Fui#test.log");
        assert_eq!(logs["web#build"].lines, 2);
    }

    #[test]
    fn pruning_keeps_the_newest_runs_and_only_run_directories() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["100-0", "200-0", "200-1", "300-0"] {
            std::fs::create_dir(tmp.path().join(name)).unwrap();
        }
        std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
        prune(tmp.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["200-1", "300-0", "notes.txt"]);
    }
}
