//! The graph: task ids, the task graph with cycle detection, project
//! selection (`--filter`, `--affected`, `--shard`), the ready-node walker,
//! and DOT.
//! Nothing here spawns a process or touches a cache: what git says
//! changed is handed in ([`Since`], [`ChangedSince`]), asked by the caller
//! of `crate::git`.

mod affected_tasks;
mod build;
mod dot;
mod id;
mod lockfile_moves;
mod only;
mod reason;
mod select;
mod shard;
mod since;
mod walk;

pub use affected_tasks::affected_tasks;
pub use build::{Node, TaskGraph};
pub use dot::to_dot;
pub use id::TaskId;
pub use reason::{Cause, Reason};
pub use select::{ChangedSince, Filter, apply_filters, reverse_deps, with_dependents};
pub use shard::{Owners, Shard, ShardMark, ShardRole, shard_marks};
pub use since::{Since, changed_projects};
pub use walk::{ContinueMode, SkipReason, Walker};
