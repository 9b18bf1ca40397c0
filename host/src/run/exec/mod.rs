//! The executor seam: where a task's command runs.
//!
//! Every executor implements [`Executor`]: one `run` that takes an
//! [`Attempt`] (the command, its timeout, readiness, the guard's groups and
//! the run's event bus) and returns what happened ([`Ran`]: status, log,
//! exit code). The task's lifecycle around it — the lock, the key, the
//! cache lookup, storing the result, the events — lives in one place,
//! `run::lifecycle`, and is the same whatever runs the command.
//!
//! | file | executor |
//! |------|----------|
//! | `local` | a process here, in its own group under the guard (the default) |
//! | `plugin` | an executor plugin (`executor = "NAME"`), through its `execute` |
//! | `remote` | REAPI remote execution (`executor = "remote"`) |
//! | `seam` | [`Attempt`], [`Ran`], the [`Executor`] trait and [`Chosen`] |
//! | `executors` | [`Executors`]: preparing a task's executor, its part of a key; `--executor`'s checks |
//! | `command` | how a task's `command` becomes argv, cwd and environment |
//! | `readiness` | persistent tasks: readiness rules and the stop signal |
//! | `sandboxed` | a sandboxed attempt: its tracer, and the refused paths named |
//! | `scripted` | tests only: attempts answered from a script, no process spawned |
//!
//! The set is closed: [`Chosen`] is the one enum that names them, built by
//! [`Executors::prepare`] from the task's `executor` (or `--executor`). A
//! trait rather than match arms inside the lifecycle keeps each executor's
//! code in its file and gives later executors (a sandbox, say) one shape to
//! fill; an enum rather than `dyn` keeps `run` an `async fn` with no boxing.

mod command;
mod executors;
mod local;
mod plugin;
mod readiness;
mod remote;
mod sandboxed;
#[cfg(test)]
pub(crate) mod scripted;
mod seam;

pub(crate) use command::task_command;
pub(crate) use executors::{Executors, check_run_executor, effective_executor};
pub(crate) use readiness::Persistence;
pub(crate) use remote::REMOTE_EXECUTOR;
pub(crate) use seam::{Attempt, Chosen, Executor, Ran, Refused};
