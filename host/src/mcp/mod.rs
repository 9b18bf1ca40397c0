//! `vx mcp`: a Model Context Protocol server over stdio, for coding agents.
//!
//! It answers what an agent asks a task runner: which projects and tasks
//! exist (`listing`, in this process), what a task runs and what its key
//! is, what a change affects and why, what `vx run` would do, what ran
//! lately and what failed (`answers`, each a child `vx` with JSON output,
//! so agent and person see one truth), a failed task's whole log
//! (`failed`, from history), and, only when started with `--allow-run`,
//! runs tasks and returns the result as data (`run_tool`). The docs an
//! agent needs are resources (`docs`). The protocol is rmcp's, the
//! official Rust SDK. Standard output is the protocol's channel: nothing
//! else may print there.

mod answers;
mod docs;
mod failed;
mod listing;
mod params;
mod run_tool;
mod server;

pub(crate) use server::serve;
