//! The run → JUnit XML rendering, a plain function of its input.

use std::fmt::Write;

use vx_plugin_sdk::reporter::{Run, Status, TaskResult, Tier};

use crate::Config;
use crate::time::{iso8601, seconds};
use crate::xml::{attr, text};

/// Counts that every `testsuite(s)` element carries.
#[derive(Debug, Default)]
struct Totals {
    tests: usize,
    failures: usize,
    skipped: usize,
    ms: u64,
}

impl Totals {
    fn of<'a>(tasks: impl IntoIterator<Item = &'a TaskResult>) -> Totals {
        let mut totals = Totals::default();
        for task in tasks {
            totals.tests += 1;
            totals.ms += task.duration_ms;
            match task.status {
                Status::Failed | Status::TimedOut => totals.failures += 1,
                Status::Skipped | Status::Cancelled => totals.skipped += 1,
                Status::Ok => {}
            }
        }
        totals
    }

    /// `errors="0"`: JUnit's errors are crashes of the test harness itself,
    /// and a task that could not start is still a task failure in vx.
    fn attrs(&self) -> String {
        format!(r#"tests="{}" failures="{}" errors="0" skipped="{}""#, self.tests, self.failures, self.skipped)
    }
}

/// Renders `run` as a JUnit XML document.
pub fn render(config: &Config, run: &Run) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let name = config.suite_name.as_deref().unwrap_or("vx");
    let _ = writeln!(
        out,
        r#"<testsuites name="{}" {} time="{}" timestamp="{}">"#,
        attr(name),
        Totals::of(&run.tasks).attrs(),
        seconds(run.duration_ms),
        iso8601(run.started_unix_ms),
    );
    for (project, tasks) in by_project(&run.tasks) {
        suite(&mut out, run, project, &tasks);
    }
    out.push_str("</testsuites>\n");
    out
}

/// Groups tasks by project, in the order projects first appear.
fn by_project(tasks: &[TaskResult]) -> Vec<(&str, Vec<&TaskResult>)> {
    let mut groups: Vec<(&str, Vec<&TaskResult>)> = Vec::new();
    for task in tasks {
        match groups.iter_mut().find(|(project, _)| *project == task.project) {
            Some((_, members)) => members.push(task),
            None => groups.push((&task.project, vec![task])),
        }
    }
    groups
}

fn suite(out: &mut String, run: &Run, project: &str, tasks: &[&TaskResult]) {
    let totals = Totals::of(tasks.iter().copied());
    let _ = writeln!(
        out,
        r#"  <testsuite name="{}" {} time="{}" timestamp="{}">"#,
        attr(project),
        totals.attrs(),
        seconds(totals.ms),
        iso8601(run.started_unix_ms),
    );
    out.push_str("    <properties>\n");
    property(out, "    ", "vx.version", &run.vx_version);
    property(out, "    ", "vx.argv", &run.argv.join(" "));
    for (key, value) in &run.tags {
        property(out, "    ", &format!("vx.tag.{key}"), value);
    }
    out.push_str("    </properties>\n");
    for task in tasks {
        case(out, task);
    }
    out.push_str("  </testsuite>\n");
}

fn case(out: &mut String, task: &TaskResult) {
    let _ = write!(
        out,
        r#"    <testcase name="{}" classname="{}" time="{}""#,
        attr(&task.task),
        attr(&task.project),
        seconds(task.duration_ms),
    );
    let cached = cache_tier(task.cache);
    let flaky = task.status == Status::Ok && task.message.is_some();
    if task.status == Status::Ok && cached.is_none() && !flaky {
        out.push_str("/>\n");
        return;
    }
    out.push_str(">\n");
    match task.status {
        // A passing task with a message passed after failed attempts: a
        // flaky test, which JUnit consumers (Maven Surefire's schema, nextest,
        // GitLab, Jenkins) read as a `flakyFailure` inside a passing case.
        Status::Ok if flaky => {
            let message = task.message.as_deref().unwrap_or_default();
            let _ = writeln!(out, r#"      <flakyFailure type="failed" message="{}">"#, attr(message));
            if let Some(tail) = &task.log_tail {
                let _ = writeln!(out, "        <system-out>{}</system-out>", text(tail));
            }
            out.push_str("      </flakyFailure>\n");
        }
        Status::Ok => {}
        Status::Failed | Status::TimedOut => {
            let kind = if task.status == Status::Failed { "failed" } else { "timed-out" };
            let _ = write!(out, r#"      <failure type="{kind}" message="{}">"#, attr(&outcome(task)));
            out.push_str(&text(task.log_tail.as_deref().unwrap_or("")));
            out.push_str("</failure>\n");
        }
        Status::Skipped | Status::Cancelled => {
            let _ = writeln!(out, r#"      <skipped message="{}"/>"#, attr(&outcome(task)));
        }
    }
    if let Some(tier) = cached {
        out.push_str("      <properties>\n");
        property(out, "      ", "vx.cache", tier);
        out.push_str("      </properties>\n");
        let _ =
            writeln!(out, "      <system-out>{}</system-out>", text(&format!("vx: replayed from the {tier} cache")));
    }
    out.push_str("    </testcase>\n");
}

fn property(out: &mut String, indent: &str, name: &str, value: &str) {
    let _ = writeln!(out, r#"{indent}  <property name="{}" value="{}"/>"#, attr(name), attr(value));
}

fn cache_tier(tier: Tier) -> Option<&'static str> {
    match tier {
        Tier::None => None,
        Tier::Local => Some("local"),
        Tier::Remote => Some("remote"),
    }
}

/// The one-line reason vx gave, or one made from the status.
fn outcome(task: &TaskResult) -> String {
    if let Some(message) = &task.message {
        return message.clone();
    }
    match (task.status, task.exit_code) {
        (Status::Failed, Some(code)) => format!("exit code {code}"),
        (Status::Failed, None) => "failed".into(),
        (Status::TimedOut, _) => "timed out".into(),
        (Status::Cancelled, _) => "cancelled".into(),
        (Status::Skipped, _) => "skipped".into(),
        (Status::Ok, _) => "ok".into(),
    }
}

#[cfg(test)]
mod tests;
