//! Running a selection: planning (selection → task graph), the dry-run
//! views, and the engine that walks the graph and drives executors under
//! the guard. This is where `graph`, `guard` and `report` meet.

mod dry;
mod engine;
mod eta;
mod executor;
mod job;
mod keys;
mod local;
mod options;
mod plan;
mod remote;
mod signals;
mod task_lock;

pub use dry::DryPlan;
pub use engine::{RunOutcome, Session, execute};
pub use eta::{Prediction, predict};
pub use keys::{PlannedKey, plan_keys, planned_status, planned_statuses};
pub use options::RunOptions;
pub use plan::{Selection, plan, select_projects};
pub use remote::REMOTE_EXECUTOR;
pub use signals::Signals;
