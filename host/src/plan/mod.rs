//! Planning a run: from what the user typed to a task graph (filters,
//! `--affected` with git's answers, `--shard`, arguments after `--`), and
//! what can be said of that graph without running it: `--dry` (keys for
//! the whole plan, statuses, the predicted schedule) and `vx query`.
//!
//! The engine (`crate::run`) walks what is planned here and knows nothing
//! of selection. The prediction replays the engine's own admission and the
//! keys go through its executors' identities, so `--dry` says what a run
//! would do.
//!
//! | file | owns |
//! |------|------|
//! | `selection` | selection → task graph, with `--affected`'s reasons and `--shard`'s marks |
//! | `pass_through` | arguments after `--`: which named tasks take them, and their command lines |
//! | `keys` | `--dry`: keys for the whole plan, level by level, and each task's cache status |
//! | `eta` | the prediction: each task's expected start and end, replaying admission |
//! | `dry` | `--dry` as text and JSON |
//! | `dry_turbo` | `--dry=json --format turbo`: the plan in Turborepo's schema |
//! | `query` | `vx query`: a selection's planned tasks as data, with reasons and shard marks |

mod dry;
mod dry_turbo;
mod eta;
mod keys;
mod pass_through;
mod query;
mod selection;

pub(crate) use dry::DryPlan;
pub(crate) use eta::{demands, predict};
pub(crate) use keys::{plan_keys, planned_statuses};
pub(crate) use pass_through::apply_pass_through;
pub(crate) use query::{QueriedTask, query};
pub(crate) use selection::{Planned, Selection, plan, plan_explained, planned_tasks, select_projects};
