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

pub(crate) use affected_tasks::affected_tasks;
// Other rooms' tests build graphs node by node.
#[cfg(test)]
pub(crate) use build::Node;
pub(crate) use build::TaskGraph;
pub(crate) use dot::to_dot;
pub(crate) use id::TaskId;
pub(crate) use reason::Reason;
pub(crate) use select::{Filter, apply_filters, reverse_deps, with_dependents};
pub(crate) use shard::{Shard, ShardMark, ShardRole, shard_marks};
pub(crate) use since::{Since, changed_projects};
pub(crate) use walk::{ContinueMode, SkipReason, Walker};
