//! What the user sees of a run: task output with `project#task` prefixes,
//! colour when it helps, and the final summary. The run loop reports
//! events; this module decides how they look.

mod github;
pub mod markdown;
mod progress;
mod stderr;
mod style;
mod summary;
mod terminal;

pub use github::{github_actions, github_annotations, github_step_summary};
pub use progress::StatusLine;
pub use stderr::{Stderr, warning_line};
pub use style::{Style, color_enabled};
pub use summary::format_duration;
pub use terminal::{LogOrder, OutputLogs, Terminal};
