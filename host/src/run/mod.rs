//! Running a planned graph: the engine that walks it and drives executors
//! under the guard. This is where `graph`, `guard`, `cache` and `events`
//! meet. What to run, and `--dry`'s view of it, is `crate::plan`'s; its
//! prediction replays this room's admission ([`Admission`]) and keys by
//! its executors ([`Executors`]), so the two cannot disagree.
//!
//! | file | owns |
//! |------|------|
//! | `engine` | the walk: slots, `--continue`, signals, persistent servers |
//! | `admission` | whether a ready task may start: cpus, memory, mutexes (`--dry`'s prediction replays it) |
//! | `controls` | a front end's requests: input to interactive tasks, restarts |
//! | `lifecycle` | one task: prepare, run, settle, record |
//! | `batch` | cached tasks begun a batch at a time, hits settled there |
//! | `task_cache` | a task's key, lookup, restore and store |
//! | `exec/` | the executor seam: local processes, plugins, REAPI |
//! | `task_lock` | one run of a task at a time across vx processes |
//! | `locking` | which locks a job takes: its own, its dependencies' shared |
//! | `spec` | tests: the engine and lifecycle, step by step, on the scripted executor |
//! | `verify` | `--verify=determinism`: the requested tasks twice, their outputs compared |

mod admission;
mod batch;
mod controls;
mod download;
mod engine;
mod exec;
mod lifecycle;
mod locking;
mod mutex;
mod options;
mod signals;
#[cfg(test)]
mod spec;
mod task_cache;
mod task_lock;
mod verify;

pub(crate) use admission::{Admission, Budget, cpus};
pub(crate) use controls::Controls;
pub(crate) use download::Download;
pub(crate) use engine::{RunOutcome, Session, execute};
pub(crate) use exec::{Executors, check_run_executor, effective_executor};
pub(crate) use lifecycle::dependency_outputs;
pub(crate) use options::RunOptions;
pub(crate) use signals::Signals;
pub(crate) use verify::{Difference, Snapshot};
