//! The outcome of a run: one result per task, and the summary printed at
//! the end (what failed, was skipped or was flaky, and why, then one line
//! of counts and wall time).

use std::time::Duration;

use super::style::Style;
use crate::events::{CacheOutcome, RunSummary, TaskResult, TaskStatus};
use crate::guard::Usage;
use crate::units::{format_bytes, format_duration, shell_quote};

impl RunSummary {
    /// The summary block, ending with a newline.
    pub fn render(&self, style: Style) -> String {
        let mut out = String::new();
        for r in &self.results {
            let line = match &r.status {
                TaskStatus::Failed(why) => format!("{} {} ({why})", style.red("failed: "), r.id),
                TaskStatus::TimedOut(limit) => {
                    format!("{} {} (timed out after {})", style.red("failed: "), r.id, format_duration(*limit))
                }
                TaskStatus::Cancelled => format!("{} {} (interrupted)", style.yellow("stopped:"), r.id),
                TaskStatus::Skipped(why) => format!("{} {} ({why})", style.yellow("skipped:"), r.id),
                TaskStatus::Succeeded if r.is_flaky() => {
                    format!("{} {} ({})", style.yellow("flaky:  "), r.id, flaky_text(r))
                }
                TaskStatus::Succeeded => continue,
            };
            out.push_str(&line);
            out.push('\n');
        }
        // A task Ctrl-C stopped did not fail: it is counted apart.
        let stopped = self.stopped();
        let failed = self.failed() - stopped;
        let flaky = match self.flaky() {
            0 => String::new(),
            n => format!(" ({n} flaky)"),
        };
        // A group ran nothing: it is counted apart, not as a task that ran.
        let groups = self.results.iter().filter(|r| r.cache == CacheOutcome::Group).count();
        let mut counts = format!(
            "{} run, {} succeeded{flaky}, {} failed, {} skipped, {} cached",
            self.ran() - groups,
            self.succeeded() - groups,
            failed,
            self.skipped(),
            self.cached()
        );
        if stopped > 0 {
            counts.push_str(&format!(", {stopped} stopped"));
        }
        if groups > 0 {
            counts.push_str(&format!(", {groups} group{}", if groups == 1 { "" } else { "s" }));
        }
        let counts = if failed > 0 {
            style.red(&counts)
        } else if stopped > 0 {
            style.yellow(&counts)
        } else {
            style.green(&counts)
        };
        out.push_str(&format!("{} {counts} in {}\n", style.bold("Tasks:"), format_duration(self.wall)));
        out
    }
}

impl RunSummary {
    /// The line after the summary that says how to print again the full
    /// output of the attempts that failed (of failed and flaky tasks),
    /// which history keeps; `None` when no attempt failed. A task that
    /// failed before its command ran wrote nothing to keep.
    pub fn log_hint(&self, style: Style) -> Option<String> {
        let logged: Vec<&str> = self
            .results
            .iter()
            .filter(|r| {
                r.is_flaky() || (r.attempts > 0 && matches!(r.status, TaskStatus::Failed(_) | TaskStatus::TimedOut(_)))
            })
            .map(|r| r.id.as_str())
            .collect();
        match logged.as_slice() {
            [] => None,
            [one] => Some(format!(
                "{} vx last --failed --task {}
",
                style.bold("Full log:"),
                shell_quote(one)
            )),
            many => Some(format!(
                "{} vx last --failed ({} tasks; one of them: --task ID)\n",
                style.bold("Full logs:"),
                many.len()
            )),
        }
    }

    /// `--summary`: the slowest tasks that ran, and the cache hit rate.
    pub fn render_details(&self) -> String {
        let mut ran: Vec<&TaskResult> = self
            .results
            .iter()
            .filter(|r| {
                !r.cache.is_hit() && r.cache != CacheOutcome::Group && !matches!(r.status, TaskStatus::Skipped(_))
            })
            .collect();
        ran.sort_by(|a, b| b.duration.cmp(&a.duration).then(a.id.cmp(&b.id)));
        let mut out = String::from("Slowest:");
        if ran.is_empty() {
            out.push_str(" none ran (every task came from the cache)");
        }
        for r in ran.iter().take(5) {
            let used =
                r.usage.map(|u| format!("  (cpu {}, {})", format_duration(u.cpu), format_bytes(u.peak_rss_bytes)));
            out.push_str(&format!("\n  {:>8}  {}{}", format_duration(r.duration), r.id, used.unwrap_or_default()));
        }
        let measured: Vec<(&TaskResult, Usage)> = self.results.iter().filter_map(|r| Some((r, r.usage?))).collect();
        if let Some((peak, used)) = measured.iter().max_by_key(|(r, u)| (u.peak_rss_bytes, std::cmp::Reverse(&r.id))) {
            let cpu: Duration = measured.iter().map(|(_, u)| u.cpu).sum();
            out.push_str(&format!(
                "\nResources: {} of CPU in {} task(s); peak memory {} ({})",
                format_duration(cpu),
                measured.len(),
                format_bytes(used.peak_rss_bytes),
                peak.id
            ));
        }
        let looked_up =
            self.results.iter().filter(|r| !matches!(r.cache, CacheOutcome::Uncached | CacheOutcome::Group)).count();
        let rate = (self.cached() * 100).checked_div(looked_up).map_or_else(|| "-".to_string(), |r| format!("{r}%"));
        out.push_str(&format!("\nCache: {} of {looked_up} cacheable tasks were hits ({rate})\n", self.cached()));
        out
    }
}

/// `passed on attempt 2 of its tries; attempt 1: exit code 1`, for a flaky
/// task's line in summaries and reports.
pub(crate) fn flaky_text(r: &TaskResult) -> String {
    let why = r.failed_attempt.as_deref().unwrap_or("failed");
    format!("passed on attempt {}; attempt {} failed: {why}", r.attempts, r.attempts - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 * 1024 + 400), "3.4 KiB");
        assert_eq!(format_bytes(84 << 20), "84.0 MiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn the_log_hint_names_the_tasks_that_wrote_a_failed_attempt() {
        let ran = |id: &str, status, attempts| TaskResult { attempts, ..TaskResult::not_run(id.into(), status) };
        let summary = |results| RunSummary { results, wall: Duration::ZERO };
        let failed = || TaskStatus::Failed("exit code 1".into());
        let plain = Style { enabled: false };
        assert_eq!(summary(vec![ran("a#build", TaskStatus::Succeeded, 1)]).log_hint(plain), None);
        assert_eq!(summary(vec![ran("a#build", failed(), 0)]).log_hint(plain), None, "it never ran");
        assert_eq!(
            summary(vec![ran("a#test", failed(), 1), ran("b#lint", TaskStatus::Succeeded, 1)]).log_hint(plain),
            Some("Full log: vx last --failed --task a#test\n".into())
        );
        let two = summary(vec![
            ran("a#test", TaskStatus::TimedOut(Duration::ZERO), 1),
            ran("b#test", TaskStatus::Succeeded, 2),
        ]);
        assert_eq!(two.log_hint(plain), Some("Full logs: vx last --failed (2 tasks; one of them: --task ID)\n".into()));
    }

    #[test]
    fn details_name_the_task_with_the_highest_peak() {
        let used = |id: &str, ms, mib: u64| TaskResult {
            cache: CacheOutcome::Miss,
            duration: Duration::from_millis(ms),
            usage: Some(Usage { cpu: Duration::from_millis(ms / 2), peak_rss_bytes: mib << 20 }),
            ..TaskResult::not_run(id.into(), TaskStatus::Succeeded)
        };
        let summary =
            RunSummary { results: vec![used("a#build", 400, 10), used("b#build", 200, 90)], wall: Duration::ZERO };
        let text = summary.render_details();
        assert!(text.contains("400ms  a#build  (cpu 200ms, 10.0 MiB)"), "{text}");
        assert!(text.contains("Resources: 300ms of CPU in 2 task(s); peak memory 90.0 MiB (b#build)"), "{text}");
    }
}
