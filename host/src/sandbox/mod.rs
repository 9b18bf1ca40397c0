//! Hermetic tasks: a task with `sandbox` runs confined by the kernel to
//! what it declares (docs/sandbox.md).
//!
//! | file | what |
//! |------|------|
//! | `policy` | the paths a task may read and write, from its declarations |
//! | `confine` | the Landlock ruleset and the network namespace, applied between fork and exec |
//! | `trace` | seccomp user notification: the paths a task touched outside its policy, named |
//! | `patch` | `--verify=inputs`: those paths as the lines to add to `vx.toml` |
//!
//! Landlock confines files (reads, writes, execution) for the task and
//! every process it starts, unprivileged and without mounts; a user and
//! network namespace of its own takes the network away (TCP, UDP and DNS
//! alike). The local executor applies both; other executors say that they
//! do not.

mod confine;
mod patch;
mod policy;
mod trace;

pub(crate) use confine::{Confinement, Observed, landlock_abi, spawn_failure};
pub(crate) use patch::{Patch, entries, patch, spell};
pub(crate) use policy::{Policy, TaskPaths};
pub(crate) use trace::{Touch, Tracer, Violation};
