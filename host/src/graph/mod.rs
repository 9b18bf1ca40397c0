//! The graph: task ids, the task graph with cycle detection, project
//! selection (`--filter`, `--affected`, `--shard`), the ready-node walker,
//! and DOT.
//! Nothing here spawns a task or touches a cache.

mod affected;
mod build;
mod dot;
mod git_head;
mod id;
mod only;
mod select;
mod shard;
mod walk;

pub use affected::{affected_tasks, base_label, changed_files, changed_projects};
pub use build::{Node, TaskGraph};
pub use dot::to_dot;
pub use git_head::{Head, read_head};
pub use id::TaskId;
pub use select::{Filter, apply_filters, reverse_deps, with_dependents};
pub use shard::Shard;
pub use walk::{ContinueMode, SkipReason, Walker};
