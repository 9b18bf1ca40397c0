//! The guard: the only module that spawns or signals processes.
//!
//! Every task runs in its own session and process group, never in vx's, so
//! a terminal's Ctrl-C reaches vx alone and vx decides how its tasks stop:
//! SIGTERM to the group, a grace period, then SIGKILL (the kill ladder).
//! [`Groups`] is the registry of live groups that every stop goes through;
//! it is mirrored to the guard process (`vx __guard`), which stops whatever
//! is left when vx goes away, even by SIGKILL. Descendants that leave their
//! group are found by the environment marker every task carries
//! ([`escape`]). Where vx can make a cgroup v2, each task also runs in one
//! of its own and what is left of it is ended with `cgroup.kill`
//! ([`cgroup`]): a process that re-forks and leaves its session in a loop
//! outruns any sweep, not a cgroup. Runtime-input commands (`runtime = ["node --version"]`)
//! run here too, as probes in groups of their own ([`run_probe`]).
//! `clippy.toml` forbids spawning or signalling anywhere else.

mod cgroup;
mod child;
mod escape;
mod groups;
mod ladder;
mod link;
mod parent;
mod probe;
mod procfs;
mod spawn;
mod tool;
mod usage;
mod watchdog;

pub(crate) use cgroup::{TaskCgroup, describe as containment};
pub(crate) use child::VxChild;
pub(crate) use escape::{TaskMark, find_escapees};
pub use groups::Groups;
pub(crate) use ladder::{
    grace_period, group_alive, group_signalable, hurry, pid_alive, signal_group, stop_group, stop_pids,
};
pub(crate) use link::RUN_ID_VAR;
pub use parent::die_with_launcher;
pub(crate) use probe::{PROBE_OUTPUT_LIMIT, run_probe};
pub(crate) use procfs::{group_members, is_ancestor, last_pid};
pub(crate) use spawn::{PreExec, TaskCommand, spawn_isolated, spawn_task};
pub(crate) use tool::{run_tool, run_tool_with_input};
pub(crate) use usage::{ExitWatch, Usage};
pub(crate) use watchdog::guard_main;
