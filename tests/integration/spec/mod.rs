//! The user-visible text of vx, as reviewed snapshots: the plan views
//! (`--dry`, `--graph`, `vx show`), the output and summary of a run, and
//! every class of error message. Each test writes a workspace, runs the
//! real `vx` and compares the transcript ([`crate::common::snapshot`])
//! with its `.snap` file in `snapshots/`; a change of wording is a diff
//! to review, not a surprise.
//!
//! The behaviour behind the text (what runs, exit codes, which line names
//! what) is asserted in the other modules; these tests pin the words.

mod config_errors;
mod graph_errors;
mod lock_errors;
mod plan;
mod plugin_errors;
mod run_output;
mod show;
mod usage_errors;
