//! GitHub Actions (`GITHUB_ACTIONS=true`): each task's log in a
//! collapsible group (see `Terminal::with_github_groups`), an error
//! annotation per failed task, a warning per flaky one, and the markdown report appended to the
//! job's summary page (`$GITHUB_STEP_SUMMARY`).

use std::io::Write;

use super::summary::flaky_text;
use crate::events::{Event, RunSummary, Subscriber, TaskStatus};
use crate::units::format_duration;

pub(crate) fn github_actions() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Workflow commands need `%`, CR and LF escaped in their messages.
fn escape(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// One `::error` line per task that failed or timed out, one `::warning`
/// per flaky task.
pub(crate) fn github_annotations(summary: &RunSummary) -> String {
    let mut out = String::new();
    for r in &summary.results {
        if r.is_flaky() {
            out.push_str(&format!(
                "::warning title={}::{}\n",
                escape(&format!("{} is flaky", r.id)),
                escape(&flaky_text(r))
            ));
            continue;
        }
        let why = match &r.status {
            TaskStatus::Failed(why) => why.clone(),
            TaskStatus::TimedOut(limit) => format!("timed out after {}", format_duration(*limit)),
            _ => continue,
        };
        let tail = r.log_tail.as_deref().map(|t| format!("\n{t}")).unwrap_or_default();
        out.push_str(&format!(
            "::error title={}::{}\n",
            escape(&format!("{} failed", r.id)),
            escape(&format!("{why}{tail}"))
        ));
    }
    out
}

/// Appends `markdown` to `$GITHUB_STEP_SUMMARY` when it is set.
pub(crate) fn github_step_summary(markdown: &str) -> std::io::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else { return Ok(()) };
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(markdown.as_bytes())
}

/// After a run under GitHub Actions: the annotations on stdout and the
/// markdown report on the job's summary page.
#[derive(Debug)]
pub(crate) struct GithubOutput {
    /// The arguments as typed, for the report's heading.
    pub argv: Vec<String>,
}

impl Subscriber for GithubOutput {
    fn on(&self, event: &Event<'_>) {
        if let Event::RunFinished { summary, .. } = event {
            print!("{}", github_annotations(summary));
            if let Err(e) = github_step_summary(&super::markdown::render(summary, &self.argv)) {
                eprintln!("vx: warning: could not append to $GITHUB_STEP_SUMMARY: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_escaped() {
        assert_eq!(escape("50% done\nnext"), "50%25 done%0Anext");
    }

    #[test]
    fn a_flaky_task_is_a_warning_not_an_error() {
        use crate::events::TaskResult;
        let flaky = TaskResult {
            attempts: 2,
            failed_attempt: Some("exit code 1".into()),
            ..TaskResult::not_run("web#test".into(), TaskStatus::Succeeded)
        };
        let summary = RunSummary { results: vec![flaky], wall: std::time::Duration::ZERO };
        assert_eq!(
            github_annotations(&summary),
            "::warning title=web#test is flaky::passed on attempt 2; attempt 1 failed: exit code 1\n"
        );
    }
}
