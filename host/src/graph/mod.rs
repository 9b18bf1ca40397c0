//! The graph: task ids, the task graph with cycle detection, project
//! selection (`--filter`, `--affected`, `--shard`), the ready-node walker,
//! and DOT.
//! Nothing here spawns a task or touches a cache.

mod affected;
mod affected_tasks;
mod build;
mod dot;
mod git_head;
mod id;
mod lockfile_moves;
mod only;
mod reason;
mod select;
mod shard;
mod walk;

pub use affected::{Changes, base_label, changed_files, changed_projects, changes};
pub use affected_tasks::affected_tasks;
pub use build::{Node, TaskGraph};
pub use dot::to_dot;
pub use git_head::{Head, read_head};
pub use id::TaskId;
pub use reason::{Cause, Reason};
pub use select::{Filter, apply_filters, reverse_deps, with_dependents};
pub use shard::{Owners, Shard, ShardMark, ShardRole, shard_marks};
pub use walk::{ContinueMode, SkipReason, Walker};
