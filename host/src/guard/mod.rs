//! The guard: the only module that spawns or signals processes.
//!
//! Every task runs in its own session and process group, never in vx's, so
//! a terminal's Ctrl-C reaches vx alone and vx decides how its tasks stop:
//! SIGTERM to the group, a grace period, then SIGKILL (the kill ladder).
//! [`Groups`] is the registry of live groups that every stop goes through.
//! `clippy.toml` forbids spawning anywhere else.

mod groups;
mod ladder;
mod spawn;
mod tool;

pub use groups::Groups;
pub use ladder::{grace_period, group_alive, signal_group, stop_group};
pub use spawn::{TaskCommand, TaskProcess, spawn_task};
pub use tool::{ToolOutput, run_tool};
