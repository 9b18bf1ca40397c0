//! Running a selection: planning (selection → task graph), the dry-run
//! views, and the engine that walks the graph and drives executors under
//! the guard. This is where `graph`, `guard`, `cache` and `events` meet.
//!
//! | file | owns |
//! |------|------|
//! | `plan` | selection → task graph |
//! | `engine` | the walk: slots, `--continue`, signals, persistent servers |
//! | `controls` | a front end's requests: input to interactive tasks, restarts |
//! | `lifecycle` | one task: prepare, run, settle, record |
//! | `batch` | cached tasks begun a batch at a time, hits settled there |
//! | `task_cache` | a task's key, lookup, restore and store |
//! | `exec/` | the executor seam: local processes, plugins, REAPI |
//! | `keys`, `dry`, `eta` | `--dry`: keys for the whole plan, statuses, ETAs |
//! | `dry_turbo` | `--dry=json --format turbo`: the plan in Turborepo's schema |
//! | `task_lock` | one run of a task at a time across vx processes |
//! | `locking` | which locks a job takes: its own, its dependencies' shared |
//! | `spec` | tests: the engine and lifecycle, step by step, on the scripted executor |
//! | `query` | `vx query`: a selection's planned tasks as data, with reasons and shard marks |
//! | `verify` | `--verify=determinism`: the requested tasks twice, their outputs compared |

mod admission;
mod batch;
mod controls;
mod download;
mod dry;
mod dry_turbo;
mod engine;
mod eta;
mod exec;
mod keys;
mod lifecycle;
mod locking;
mod mutex;
mod options;
mod pass_through;
mod plan;
mod query;
mod signals;
#[cfg(test)]
mod spec;
mod task_cache;
mod task_lock;
mod verify;

pub use admission::{Budget, Wait};
pub use controls::Controls;
pub use download::Download;
pub use dry::DryPlan;
pub use engine::{RunOutcome, Session, execute};
pub use eta::{Demand, Prediction, demands, predict};
pub use exec::{REMOTE_EXECUTOR, WORKSPACE_ROOT_VAR, check_run_executor};
pub use keys::{PlannedCache, PlannedKey, plan_keys, planned_status, planned_statuses};
pub use lifecycle::dependency_outputs;
pub use options::RunOptions;
pub use pass_through::{apply_pass_through, command_with};
pub use plan::{Planned, Selection, plan, plan_explained, planned_tasks, select_projects};
pub use query::{QueriedCommand, QueriedTask, query};
pub use signals::Signals;
pub use verify::{Difference, Snapshot};
