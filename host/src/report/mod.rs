//! What the user sees of a run: task output with `project#task` prefixes,
//! colour when it helps, and the final summary. The engine emits run
//! events (`crate::events`); the subscribers here decide how they look:
//! [`Terminal`] (with the status line and GitHub groups), [`GithubOutput`],
//! [`RunFile`] (`--summarize`), [`Profile`] (`--profile`) and [`Stderr`]
//! for warnings outside a run.

mod github;
pub(crate) mod html;
pub(crate) mod markdown;
mod profile;
mod progress;
mod run_file;
mod stderr;
mod style;
mod summary;
mod terminal;

pub(crate) use github::{GithubOutput, github_actions};
pub(crate) use profile::{Profile, Step};
pub(crate) use progress::StatusLine;
pub(crate) use run_file::{
    PlannedTask, RunFile, RunInfo, RunPath, SCHEMA as RUN_SUMMARY_SCHEMA, Written, document as run_document,
    invocation_of as run_invocation, status_reason, write_file,
};
pub(crate) use stderr::Stderr;
pub(crate) use style::{Style, color_enabled};
pub(crate) use summary::flaky_text;
pub(crate) use terminal::{LogOrder, LogPrefix, OutputLogs, Terminal};
