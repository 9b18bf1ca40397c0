//! What the user sees of a run: task output with `project#task` prefixes,
//! colour when it helps, and the final summary. The engine emits run
//! events (`crate::events`); the subscribers here decide how they look:
//! [`Terminal`] (with the status line and GitHub groups), [`GithubOutput`]
//! and [`Stderr`] for warnings outside a run.

mod github;
pub mod markdown;
mod progress;
mod stderr;
mod style;
mod summary;
mod terminal;

pub use github::{GithubOutput, github_actions, github_annotations, github_step_summary};
pub use progress::StatusLine;
pub use stderr::{Stderr, warning_line};
pub use style::{Style, color_enabled};
pub use summary::{flaky_text, format_duration};
pub use terminal::{LogOrder, OutputLogs, Terminal};
