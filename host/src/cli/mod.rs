//! The command line (clap): global flags, one file per subcommand, and the
//! translation of every failure into one line on stderr and an exit code.
//!
//! `app` holds the clap definition and the entry point; each subcommand
//! has its file (`run`, `watch`, `show`, …), with the shared flags in
//! `exec_args`, `run_flags` and `run_plan`.

mod app;
mod args;
mod cache_cmd;
mod choice;
mod completions;
mod dashboard;
mod exec_args;
mod history;
mod info;
mod init;
mod last;
mod lock;
mod mcp;
mod pick;
mod pipe;
mod plugin_cmd;
mod plugin_new;
mod plugin_verb;
mod prune;
mod query;
mod run;
mod run_flags;
mod run_plan;
mod show;
mod translate;
mod upgrade;
mod verify;
mod watch;
mod why;
mod worker;

pub use app::main;
use app::working_dir;
