//! The built-in `markdown` reporter (`--report markdown`): a table of tasks
//! with status, cache, duration, CPU time and peak memory, then each failure with its log tail,
//! then each flaky task with its failed attempt's log tail.
//! Native, so it needs no plugin; a reporter plugin gets the same data.

use std::fmt::Write;

use super::summary::flaky_text;
use crate::events::{RunSummary, TaskStatus};
use crate::units::{format_bytes, format_duration};

/// The run as a Markdown document.
pub fn render(summary: &RunSummary, argv: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# vx run\n");
    if !argv.is_empty() {
        let _ = writeln!(out, "`vx {}`\n", argv.join(" ").replace('`', "'"));
    }
    let flaky = match summary.flaky() {
        0 => String::new(),
        n => format!(" ({n} flaky)"),
    };
    let _ = writeln!(
        out,
        "{} run, {} succeeded{flaky}, {} failed, {} skipped, {} cached in {}.\n",
        summary.ran(),
        summary.succeeded(),
        summary.failed(),
        summary.skipped(),
        summary.cached(),
        format_duration(summary.wall)
    );
    out.push_str("| Task | Status | Cache | Duration | CPU | Peak memory |\n|---|---|---|---:|---:|---:|\n");
    for r in &summary.results {
        let status = if r.is_flaky() { format!("flaky ({})", flaky_text(r)) } else { status_text(&r.status) };
        // A hit, a group or another executor measured nothing.
        let (cpu, peak) = r
            .usage
            .map_or(("-".to_string(), "-".to_string()), |u| (format_duration(u.cpu), format_bytes(u.peak_rss_bytes)));
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {cpu} | {peak} |",
            cell(&r.id),
            cell(&status),
            r.cache.spelling().table,
            format_duration(r.duration)
        );
    }
    let failures: Vec<_> = summary
        .results
        .iter()
        .filter(|r| matches!(r.status, TaskStatus::Failed(_) | TaskStatus::TimedOut(_) | TaskStatus::Cancelled))
        .collect();
    if !failures.is_empty() {
        out.push_str("\n## Failures\n");
        for r in failures {
            let _ = writeln!(out, "\n### `{}`: {}\n", cell(&r.id), status_text(&r.status));
            log_block(&mut out, r.log_tail.as_deref());
        }
    }
    let flaky: Vec<_> = summary.results.iter().filter(|r| r.is_flaky()).collect();
    if !flaky.is_empty() {
        out.push_str("\n## Flaky\n");
        for r in flaky {
            let _ = writeln!(out, "\n### `{}`: {}\n", cell(&r.id), flaky_text(r));
            log_block(&mut out, r.log_tail.as_deref());
        }
    }
    out
}

/// A log tail in a fence that its own text cannot close.
fn log_block(out: &mut String, tail: Option<&str>) {
    match tail {
        Some(tail) => {
            let fence = if tail.contains("```") { "~~~~" } else { "```" };
            let _ = writeln!(out, "{fence}text\n{}\n{fence}", tail.trim_end());
        }
        None => out.push_str("(no output)\n"),
    }
}

fn status_text(status: &TaskStatus) -> String {
    match status {
        TaskStatus::Succeeded => "ok".to_string(),
        TaskStatus::Failed(why) => format!("failed ({why})"),
        TaskStatus::TimedOut(d) => format!("timed out after {}", format_duration(*d)),
        TaskStatus::Cancelled => "cancelled".to_string(),
        TaskStatus::Skipped(why) => format!("skipped ({why})"),
    }
}

/// Text safe inside a table cell: no pipes or line breaks.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::events::{CacheOutcome, TaskResult};

    #[test]
    fn table_and_failures() {
        let mut failed = TaskResult::not_run("web#build".into(), TaskStatus::Failed("exit code 2".into()));
        failed.log_tail = Some("error: x | y".into());
        let ok =
            TaskResult { cache: CacheOutcome::Local, ..TaskResult::not_run("ui#build".into(), TaskStatus::Succeeded) };
        let summary = RunSummary { results: vec![ok, failed], wall: Duration::from_millis(1500) };
        let md = render(&summary, &["run".into(), "build".into()]);
        assert!(md.contains("| `ui#build` | ok | hit (local) | 0ms | - | - |"), "{md}");
        assert!(md.contains("| `web#build` | failed (exit code 2) | - |"), "{md}");
        assert!(md.contains("### `web#build`: failed (exit code 2)\n\n```text\nerror: x | y\n```"), "{md}");
        assert!(!md.contains("## Flaky"), "{md}");
    }

    #[test]
    fn a_flaky_task_is_marked_with_its_failed_attempt() {
        let flaky = TaskResult {
            attempts: 2,
            failed_attempt: Some("exit code 1".into()),
            log_tail: Some("first try broke".into()),
            ..TaskResult::not_run("web#test".into(), TaskStatus::Succeeded)
        };
        let summary = RunSummary { results: vec![flaky], wall: Duration::from_millis(10) };
        let md = render(&summary, &[]);
        assert!(md.contains("| `web#test` | flaky (passed on attempt 2; attempt 1 failed: exit code 1) |"), "{md}");
        assert!(md.contains("## Flaky\n\n### `web#test`: passed on attempt 2"), "{md}");
        assert!(md.contains("1 succeeded (1 flaky), 0 failed"), "{md}");
        assert!(md.contains("```text\nfirst try broke\n```"), "{md}");
        assert!(!md.contains("## Failures"), "{md}");
    }
}
