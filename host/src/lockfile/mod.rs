//! The workspace lockfile, read so a task's key can include exactly the
//! external dependencies of its project (docs/lockfiles.md).
//!
//! [`Lockfile::find_and_parse`] picks the root's lockfile (`find.rs` has the
//! precedence) and reads it into one dependency graph (`graph.rs`), whatever
//! the format: `package-lock.json` v2/v3 (`npm.rs`), `pnpm-lock.yaml` v6/v9
//! (`pnpm.rs`), `yarn.lock` classic and berry (`yarn_classic.rs`,
//! `yarn.rs`) and the text `bun.lock` (`bun.rs`). Parse it once per invocation and share it: a
//! `Lockfile` is immutable, `Send + Sync`, and cheap to put in an `Arc`.
//!
//! A project's **slice** ([`Lockfile::slice`]) is every external package its
//! own manifest's dependencies, devDependencies, optionalDependencies and
//! (where the manager installs them) peer dependencies resolved to, and
//! everything those resolved to, transitively, each as name, version and
//! integrity; sorted and deduplicated. Upgrading a dependency of `web`
//! changes `web`'s slice and no other project's.
//!
//! **Workspace packages are not external.** When `web` depends on the
//! workspace package `ui`, the walk stops at `ui`: neither `ui` nor `ui`'s
//! own external dependencies enter `web`'s slice. They are `ui`'s slice,
//! and `web`'s tasks already depend on `ui`'s through task dependencies,
//! whose keys enter `web`'s. Counting them twice would only make an
//! upgrade in `ui` invalidate `web` by two routes, and a `web` task with no
//! dependency on `ui`'s tasks has declared that it does not care.
//!
//! A lockfile vx cannot read is a [`LockfileError`] in one line; the caller
//! then keys on [`whole_file_digest`] of [`LockfileError::files`] instead,
//! with a one-line notice. [`PackageJson`] is the project's manifest in
//! normal form, for the same key; [`diff_slices`] says what moved between
//! two slices, for `vx why`.

pub(crate) mod bun;
mod dep;
mod diff;
mod digest;
mod error;
mod find;
mod graph;
pub(crate) mod jsonc;
mod npm;
mod package_json;
mod parsed;
pub(crate) mod pnpm;
mod read;
mod root_deps;
mod workspaces;
pub(crate) mod yaml;
pub(crate) mod yarn;
mod yarn_classic;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod perf_tests;
#[cfg(test)]
pub(crate) mod testutil;

pub(crate) use dep::{Integrity, ResolvedDep};
pub(crate) use diff::{DepChange, diff_slices};
pub(crate) use digest::{DepsDigest, whole_file_digest};
pub(crate) use error::LockfileError;
pub use find::LockfileKind;
pub(crate) use find::{LOCKFILE_NAMES, find_lockfile};
pub use package_json::PackageJson;
pub use parsed::Lockfile;
pub(crate) use parsed::LockfileFormat;
pub(crate) use read::MAX_LOCKFILE_BYTES;
pub(crate) use root_deps::root_dependencies;
