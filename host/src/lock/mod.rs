//! `vx.lock`: the resolved plan of the workspace, for review and for CI.
//!
//! `vx lock` writes, for every project (sorted by name, so diffs are
//! stable), its directory, dependencies and resolved tasks (command,
//! dependencies, inputs, outputs, env names, executor, cache, persistent).
//! Plugin pins live in the same file (`[plugins.NAME]`, written by
//! `vx plugin add`); `vx lock` keeps them as they are. `vx lock --check`
//! and `vx run --frozen` compare the file with the configuration.
//!
//! Nothing secret is written: values that look like credentials are
//! refused before the file is touched (`secrets`).
//!
//! | file      | owns |
//! |-----------|------|
//! | `file`    | [`Lock`]: the projects' part of the file, resolved, written and read |
//! | `diff`    | the readable changes between two locks |
//! | `check`   | `vx lock --check` and `vx run --frozen` against the configuration |
//! | `secrets` | refusing credentials |
//! | `error`   | [`LockError`] |

mod check;
mod diff;
mod error;
mod file;
mod secrets;

pub(crate) use check::{check, check_frozen};
pub(crate) use diff::diff_locks;
pub(crate) use error::LockError;
pub(crate) use file::{LOCK_FILE, Lock, LockedProject, LockedTask, update};
